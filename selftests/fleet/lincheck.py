#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Linearizability checker for fleet histories.

    lincheck.py HISTORY.json      check one recorded history; exit 1 if it
                                  is not linearizable (the reason printed)
    lincheck.py --self-test       TAP unit tests, including histories it must
                                  reject

The model is the fleet's revocation state, one register per capability
(linearizability is local, so each capability is checked on its own):
a capability is live until a revoke takes effect, then revoked forever.
Operations, each with an interval in host time (t0 invoke, t1 return):

  {"op": "revoke", "cap": C, "t0": T, "t1": T|null}
      fleet revoke C --wait: invoke to return; t1 null when it never
      returned (it may take effect at any time after t0, or never)
  {"op": "exercise", "cap": C, "host": H, "t0": T, "t1": T,
   "result": "allowed" | "revoked" | "fleet_stale" | ...}
      an exercise of a grant of C on host H: allowed must see C live,
      revoked must see it revoked; any other denial (fleet_stale: the host
      does not know whether it is current) constrains nothing

The search is Wing & Gong's with Lowe's memoisation (as in Porcupine): an
operation may be linearized next when it was invoked before every pending
operation returned; a state and set of linearized operations seen before is
not searched again.
"""

import json
import sys

INF = float("inf")


def _legal(op, revoked):
    """(legal, new state) for op applied in state `revoked`."""
    if op["op"] == "revoke":
        return True, True
    if op["op"] == "exercise":
        r = op["result"]
        if r == "allowed":
            return not revoked, revoked
        if r == "revoked":
            return revoked, revoked
        return True, revoked
    raise ValueError("unknown operation %r" % op["op"])


def check_cap(ops):
    """(True, order) or (False, explanation) for the operations of one
    capability."""
    n = len(ops)
    t0 = [o["t0"] for o in ops]
    t1 = [INF if o.get("t1") is None else o["t1"] for o in ops]
    if n > 62:
        # the bitmask memo stays exact; only the recursion depth grows
        sys.setrecursionlimit(max(1000, 4 * n))
    seen = set()
    best = [0, []]

    def search(done, revoked, order):
        if done == (1 << n) - 1:
            return order
        if (done, revoked) in seen:
            return None
        seen.add((done, revoked))
        if len(order) > best[0]:
            best[0], best[1] = len(order), list(order)
        horizon = min(t1[i] for i in range(n) if not done >> i & 1)
        for i in range(n):
            if done >> i & 1 or t0[i] > horizon:
                continue
            ok, nxt = _legal(ops[i], revoked)
            if not ok:
                continue
            order.append(i)
            r = search(done | 1 << i, nxt, order)
            if r is not None:
                return r
            order.pop()
        return None

    order = search(0, False, [])
    if order is not None:
        return True, [ops[i] for i in order]
    placed = set(best[1])
    stuck = [ops[i] for i in range(n) if i not in placed]
    return False, {"linearized": [ops[i] for i in best[1]], "stuck": stuck}


def check(history):
    """(True, None) or (False, message) for a whole history."""
    caps = {}
    for o in history:
        if o["op"] not in ("revoke", "exercise"):
            continue
        caps.setdefault(str(o["cap"]), []).append(o)
    for cap, ops in sorted(caps.items()):
        ops.sort(key=lambda o: o["t0"])
        ok, why = check_cap(ops)
        if not ok:
            def fmt(o):
                return "%s%s [%.6f, %s]%s" % (
                    o["op"], " on " + str(o["host"]) if "host" in o else "",
                    o["t0"], "inf" if o.get("t1") is None else "%.6f" % o["t1"],
                    " -> " + o["result"] if "result" in o else "")
            lines = ["capability %s: no linearization" % cap,
                     "  longest legal prefix: " + ("; ".join(fmt(o) for o in why["linearized"]) or "-"),
                     "  cannot be placed: " + "; ".join(fmt(o) for o in why["stuck"])]
            return False, "\n".join(lines)
    return True, None


def _rv(c, t0, t1):
    return {"op": "revoke", "cap": c, "t0": t0, "t1": t1}


def _ex(c, h, t0, t1, r):
    return {"op": "exercise", "cap": c, "host": h, "t0": t0, "t1": t1, "result": r}


SELF_TESTS = [
    ("allowed before, revoked after the revoke", True,
     [_ex(1, "a", 0, 1, "allowed"), _rv(1, 2, 5), _ex(1, "a", 6, 7, "revoked"),
      _ex(1, "b", 6, 7, "revoked")]),
    ("exercises overlapping the revoke may go either way", True,
     [_rv(1, 2, 8), _ex(1, "a", 3, 4, "revoked"), _ex(1, "b", 1, 3.5, "allowed")]),
    ("an allowed exercise after --wait returned is rejected", False,
     [_rv(1, 2, 5), _ex(1, "a", 6, 7, "revoked"), _ex(1, "b", 5.5, 7, "allowed")]),
    ("revoked on one host, then allowed on another (stale read) is rejected", False,
     [_rv(1, 0, 10), _ex(1, "a", 2, 3, "revoked"), _ex(1, "b", 4, 5, "allowed")]),
    ("revoked before any revoke was invoked is rejected", False,
     [_ex(1, "a", 0, 1, "revoked"), _rv(1, 2, 3)]),
    ("revoked with no revoke at all is rejected", False,
     [_ex(1, "a", 0, 1, "revoked")]),
    ("fleet_stale denials constrain nothing", True,
     [_ex(1, "a", 0, 1, "fleet_stale"), _rv(1, 2, 3), _ex(1, "a", 4, 5, "fleet_stale"),
      _ex(1, "b", 4, 5, "revoked")]),
    ("a revoke that never returned may take effect late", True,
     [_rv(1, 0, None), _ex(1, "a", 1, 2, "allowed"), _ex(1, "b", 3, 4, "revoked"),
      _ex(1, "a", 5, 6, "revoked")]),
    ("... but not be undone", False,
     [_rv(1, 0, None), _ex(1, "a", 3, 4, "revoked"), _ex(1, "a", 5, 6, "allowed")]),
    ("capabilities are independent", True,
     [_rv(1, 0, 1), _ex(1, "a", 2, 3, "revoked"), _ex(2, "a", 2, 3, "allowed"),
      _rv(2, 4, 5), _ex(2, "b", 6, 7, "revoked")]),
    ("a second revoke of the same capability is a no-op", True,
     [_rv(1, 0, 1), _rv(1, 2, 3), _ex(1, "a", 1.5, 1.7, "revoked")]),
]


def self_test():
    print("TAP version 13")
    print("1..%d" % (len(SELF_TESTS) + 1))
    fails = 0
    for i, (name, want, hist) in enumerate(SELF_TESTS, 1):
        got, why = check(hist)
        ok = got == want
        fails += not ok
        print("%s %d lincheck: %s" % ("ok" if ok else "not ok", i, name))
        if why and not want:
            print("# " + why.replace("\n", "\n# "))
    # a larger random history built to be linearizable must pass quickly
    import random
    rnd = random.Random(1)
    hist = []
    for c in range(20):
        p = rnd.uniform(10, 20)
        hist.append(_rv(c, p - rnd.uniform(0, 2), p + rnd.uniform(0, 2)))
        for h in range(3):
            for _ in range(8):
                a = rnd.uniform(0, 30)
                x = a + rnd.uniform(0, 1)
                b = x + rnd.uniform(0, 1)
                hist.append(_ex(c, h, a, b, "allowed" if x < p else "revoked"))
    got, _ = check(hist)
    fails += not got
    print("%s %d lincheck: a random linearizable history of %d operations passes" %
          ("ok" if got else "not ok", len(SELF_TESTS) + 1, len(hist)))
    n = len(SELF_TESTS) + 1
    print("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0" % (n - fails, fails))
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print("usage: lincheck.py HISTORY.json | --self-test", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        hist = json.load(f)
    ok, why = check(hist)
    if ok:
        n = sum(1 for o in hist if o["op"] in ("revoke", "exercise"))
        print("lincheck: %d operations, linearizable" % n)
        return 0
    print("lincheck: " + why)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
