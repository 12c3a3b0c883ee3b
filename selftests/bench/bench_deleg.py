# SPDX-License-Identifier: GPL-2.0
"""Delegations per second through the capfence Python package: one Client,
one thread, Client.delegate() of the same token to the same bound task
(bench-deleg.c's "lib" mode, in Python).

    python3 bench_deleg.py TOKEN PID SECONDS
"""
import sys
import time

import capfence


def main() -> int:
    token = capfence.Token.parse(sys.argv[1])
    pid, secs = int(sys.argv[2]), float(sys.argv[3])
    n = 0
    with capfence.Client() as c:
        delegate = c.delegate
        t0 = time.monotonic()
        while True:
            for _ in range(100):
                delegate(token, pid)
            n += 100
            t1 = time.monotonic()
            if t1 - t0 >= secs:
                break
    print(f"rate python {n / (t1 - t0):.0f}")
    print(f"# python: {n} delegations in {t1 - t0:.2f} s, one Client, "
          f"one thread")
    return 0


if __name__ == "__main__":
    sys.exit(main())
