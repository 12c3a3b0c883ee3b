#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The design note's scenario with the capfence Python package.

    python3 orchestrator.py           against capfence.ko (root)
    python3 orchestrator.py --local   accept_delegation() alone

Exit status 0 iff every step decided as the note says.
"""
import errno
import os
import signal
import sys

import capfence

# the agents: a sleep (busybox's in the test VM)
SLEEP = (["/bin/busybox", "sleep", "60"] if os.access("/bin/busybox", os.X_OK)
         else ["sleep", "60"])


def local(key: capfence.Key) -> int:
    e41 = capfence.Epoch.from_classes(41, {"net:connect", "fs:write"})
    e42 = capfence.Epoch.from_classes(42, {"fs:write"})
    parent_token = capfence.mint(key, "net:connect", e41.epoch_id)
    try:
        capfence.accept_delegation(key, parent_token, e42)
        print("accepted: WRONG")
        return 1
    except capfence.EpochMismatch as exc:
        print(f"delegation rejected at boundary: {exc}")
        try:
            capfence.accept_delegation(
                key, capfence.mint(key, "net:connect", exc.receiver_epoch),
                e42)
            print("re-mint accepted: WRONG")
            return 1
        except capfence.ClassDenied as exc2:
            print(f"re-mint also denied (class narrowed out): {exc2}")
    return 0


def kernel(key: capfence.Key) -> int:
    pids = []
    with capfence.Client() as c:
        c.install_key(key)
        e41 = c.status().max_epoch + 1
        e42 = e41 + 1
        c.install_epoch(e41, ["net:connect=token:127.0.0.0/8",
                              "fs:write=token:/tmp"])
        c.install_epoch(e42, ["fs:write=token:/tmp"])
        net = capfence.mint(key, "net:connect", e41, "127.0.0.1:8080")
        wr = capfence.mint(key, "fs:write", e41, "/tmp/out")
        try:
            parent = c.spawn_bound(e41, SLEEP, [net, wr])
            pids.append(parent)
            child = c.spawn_bound(e42, SLEEP)
            pids.append(child)
            print(f"parent {parent} bound to E41={e41}, "
                  f"child {child} bound to E42={e42}")
            try:
                c.delegate(net, child, from_pid=parent)
                print("accepted: WRONG")
                return 1
            except capfence.EpochMismatch as exc:
                assert exc.errno == errno.ESTALE
                assert exc.receiver_epoch == e42
                print(f"delegation rejected at boundary: {exc.reason} "
                      f"({errno.errorcode[exc.errno]}): {exc}")
            try:
                c.delegate_remint(key, net, child)
                print("re-mint accepted: WRONG")
                return 1
            except capfence.ClassDenied as exc:
                print(f"re-mint also denied (class narrowed out): "
                      f"{exc.reason} ({errno.errorcode[exc.errno]})")
            d = c.delegate_remint(key, wr, child)
            print(f"fs:write re-minted under E42 as {d.token.cap_id:016x}: "
                  f"delegated (fence {d.fence})")
            held = [(cap.cls, cap.epoch_id) for cap in c.task(child).caps]
            assert held == [("fs:write", e42)], held
        finally:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    return 0


def main() -> int:
    print(f"capfence {capfence.__version__} "
          f"(libcapfence {capfence.library_version()})")
    with capfence.Key.generate(78) as key:
        ret = local(key) if "--local" in sys.argv[1:] else kernel(key)
    print("FAIL" if ret else "ok")
    return ret


if __name__ == "__main__":
    sys.exit(main())
