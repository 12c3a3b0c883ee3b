#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checker of the fleet's promise, for recorded histories.

    lincheck.py HISTORY.json      check one recorded history; exit 1 if it
                                  breaks the promise (the reason printed)
    lincheck.py --self-test       TAP unit tests, including histories it must
                                  reject and legal ones it must accept, and
                                  the recorded histories under fixtures/
                                  (NAME.json: must be rejected, for the rule
                                  in its "_expect" entry)

The model is the fleet's contract (docs/threat-model.md, "Fleet"), per
host, not one register for the whole fleet: hosts apply a revoke at
different times, and only `fleet revoke --wait` returning says when it is
in force on every host it counted. Each host holds, per capability, a
monotone revocation register: once revoked there, revoked forever.
Operations, each with an interval in host time (t0 invoke, t1 return):

  {"op": "fleet", "hosts": [H...], "deny_ms": D}
      the fleet's hosts and their deny bound (first, optional)
  {"op": "revoke", "cap": C, "t0": T, "t1": T|null, "hosts": [H...],
   "ret": T, "committed": bool}
      fleet revoke C --wait: t1 the return of a --wait that succeeded,
      hosts the hosts it counted; t1 null when it did not succeed (it may
      take effect on any host at any time after t0, or never); ret its
      return, committed whether the change went into the store (a --wait
      that failed after the commit too)
  {"op": "exercise", "cap": C, "host": H, "t0": T, "t1": T,
   "result": "allowed" | "revoked" | "fleet_stale" | ...}
      an exercise of a grant of C on host H
  {"op": "cut", "host": H, "t0": T, "deny_ms": D}
  {"op": "restore", "host": H, "t0": T}
      H cut off from its fleet (link down, agent stopped, a change that
      fails to apply) from T: its last confirmation is no later than T
      (one asked before the cut is dated when asked); until the restore

The rules, each a way the promise can break:

  1. after-wait: an exercise of C invoked after a revoke of C --wait
     returned must not be allowed on a host that --wait counted;
  2. undone: on one host, an exercise of C invoked after an exercise of C
     there returned revoked must not be allowed;
  3. deny-bound: a host cut off allows nothing invoked more than deny_ms
     after the cut, until it is restored;
  4. revoked-from-nowhere: an exercise returns revoked only when a revoke
     of C was invoked before it returned;
  5. uncounted: a host that a --wait success did not count denies C from
     its deny bound after --wait returned (it was not live: its module
     denies; or it came back, and then it applied the revoke);
  6. counted: a --wait success counted at least one host, and every host
     of the fleet that was not cut off at any time over its interval;
  7. missed: a host restored (caught up with the fleet) never allows
     again a C whose revoke was committed before the restore (it applied
     every change it missed, or the fleet lost one).

Everything else is legal: a host may allow C until --wait returns (it has
not applied the revoke yet), and other denials (fleet_stale: the host
does not know whether it is current) constrain nothing.
"""

import json
import os
import sys


def _fmt(o):
    return "%s%s%s [%.3f, %s]%s" % (
        o["op"], " " + str(o["cap"]) if "cap" in o else "",
        " on " + str(o["host"]) if "host" in o else "",
        o["t0"], "-" if o.get("t1") is None else "%.3f" % o["t1"],
        " -> " + o["result"] if "result" in o else "")


def check(history):
    """(True, None) or (False, message) for a whole history."""
    ex = [o for o in history if o["op"] == "exercise"]
    revokes = [o for o in history if o["op"] == "revoke"]
    for o in history:
        if o["op"] not in ("revoke", "exercise", "cut", "restore", "fleet"):
            return False, "unknown operation %r" % o["op"]
    # 4. revoked only after a revoke was invoked
    for e in ex:
        if e["result"] == "revoked" and not any(
                str(r["cap"]) == str(e["cap"]) and r["t0"] < e["t1"] for r in revokes):
            return False, "revoked-from-nowhere: %s, no revoke of it invoked before" % _fmt(e)
    # 1. after --wait returned, no counted host allows
    for r in revokes:
        if r.get("t1") is None:
            continue
        hosts = r.get("hosts")
        for e in ex:
            if (str(e["cap"]) == str(r["cap"]) and e["result"] == "allowed" and e["t0"] > r["t1"]
                    and (hosts is None or e["host"] in hosts)):
                return False, "after-wait: %s after %s (counted %s)" % (
                    _fmt(e), _fmt(r), ",".join(map(str, hosts or [])) or "all")
    # 2. per host, a revocation is never undone
    for e in ex:
        if e["result"] != "revoked":
            continue
        for a in ex:
            if (a["host"] == e["host"] and str(a["cap"]) == str(e["cap"])
                    and a["result"] == "allowed" and a["t0"] > e["t1"]):
                return False, "undone: %s after %s" % (_fmt(a), _fmt(e))
    # 3. a cut-off host denies everything past its deny bound
    cuts = {}
    for o in sorted((o for o in history if o["op"] in ("cut", "restore")), key=lambda o: o["t0"]):
        if o["op"] == "cut":
            cuts.setdefault(o["host"], []).append([o["t0"], o["deny_ms"] / 1000.0, None])
        elif cuts.get(o["host"]) and cuts[o["host"]][-1][2] is None:
            cuts[o["host"]][-1][2] = o["t0"]
    fleet = [o for o in history if o["op"] == "fleet"]
    deny = fleet[0]["deny_ms"] / 1000.0 if fleet and "deny_ms" in fleet[0] else None
    hosts = list(fleet[0]["hosts"]) if fleet and "hosts" in fleet[0] else \
        sorted({str(o["host"]) for o in history if "host" in o})

    def up(h, t0, t1):
        """h not cut off at any time in [t0, t1]"""
        return not any(tc <= t1 and (tb is None or tb >= t0) for tc, _, tb in cuts.get(h, []))

    def committed(r):
        if "committed" in r:
            return bool(r["committed"])
        return r.get("rc") in (0, 12) if "rc" in r else r.get("t1") is not None
    for r in revokes:
        if r.get("t1") is None or r.get("hosts") is None:
            continue
        counted = [str(h) for h in r["hosts"]]
        # 6. a --wait success counted a host, and every host up all along
        if not counted:
            return False, "counted: %s succeeded counting no host" % _fmt(r)
        missing = [h for h in hosts if str(h) not in counted and up(h, r["t0"], r["t1"])]
        if missing:
            return False, "counted: %s succeeded without counting %s, up all along" % (
                _fmt(r), ",".join(map(str, missing)))
        # 5. an uncounted host denies from its deny bound on
        if deny is None:
            continue
        for e in ex:
            if (str(e["cap"]) == str(r["cap"]) and e["result"] == "allowed"
                    and str(e["host"]) not in counted and e["t0"] > r["t1"] + deny):
                return False, ("uncounted: %s, %.3f s after %s returned without counting %s "
                               "(deny bound %.3f s)" % (_fmt(e), e["t0"] - r["t1"], _fmt(r), e["host"], deny))
    # 7. a restored host applied every revoke committed before
    for b in (o for o in history if o["op"] == "restore"):
        for r in revokes:
            if not committed(r) or r.get("ret", r.get("t1")) is None or r.get("ret", r.get("t1")) > b["t0"]:
                continue
            for e in ex:
                if (e["host"] == b["host"] and str(e["cap"]) == str(r["cap"])
                        and e["result"] == "allowed" and e["t0"] > b["t0"]):
                    return False, "missed: %s after %s was restored at %.3f, %s committed before" % (
                        _fmt(e), b["host"], b["t0"], _fmt(r))
    for e in ex:
        if e["result"] != "allowed":
            continue
        for t_cut, deny, t_back in cuts.get(e["host"], []):
            if e["t0"] > t_cut + deny and (t_back is None or e["t1"] < t_back):
                return False, "deny-bound: %s, %.3f s after the host was cut off at %.3f (deny bound %.3f s)" % (
                    _fmt(e), e["t0"] - t_cut, t_cut, deny)
    return True, None


def _rv(c, t0, t1, hosts=None, committed=None, ret=None):
    o = {"op": "revoke", "cap": c, "t0": t0, "t1": t1}
    if hosts is not None:
        o["hosts"] = hosts
    if committed is not None:
        o["committed"] = committed
        o["ret"] = ret
    return o


def _fleet(hosts, deny_ms):
    return {"op": "fleet", "hosts": hosts, "deny_ms": deny_ms}


def _ex(c, h, t0, t1, r):
    return {"op": "exercise", "cap": c, "host": h, "t0": t0, "t1": t1, "result": r}


def _cut(h, t, deny_ms):
    return {"op": "cut", "host": h, "t0": t, "deny_ms": deny_ms}


def _back(h, t):
    return {"op": "restore", "host": h, "t0": t}


SELF_TESTS = [
    # legal
    ("allowed before, revoked after the revoke", True,
     [_ex(1, "a", 0, 1, "allowed"), _rv(1, 2, 5, ["a", "b"]), _ex(1, "a", 6, 7, "revoked"),
      _ex(1, "b", 6, 7, "revoked")]),
    ("propagation skew: a revoked, b still allowing, --wait not returned", True,
     [_rv(1, 0, 10, ["a", "b"]), _ex(1, "a", 2, 3, "revoked"), _ex(1, "b", 4, 5, "allowed"),
      _ex(1, "b", 11, 12, "revoked")]),
    ("a revoke whose --wait failed may take effect late on a host", True,
     [_rv(1, 0, None), _ex(1, "a", 1, 2, "allowed"), _ex(1, "b", 3, 4, "revoked"),
      _ex(1, "a", 5, 6, "allowed"), _ex(1, "a", 7, 8, "revoked")]),
    ("fleet_stale denials constrain nothing", True,
     [_ex(1, "a", 0, 1, "fleet_stale"), _rv(1, 2, 3, ["a", "b"]), _ex(1, "a", 4, 5, "fleet_stale"),
      _ex(1, "b", 4, 5, "revoked")]),
    ("a host --wait did not count may allow within its deny bound", True,
     [_cut("b", 0, 6000), _rv(1, 1, 2, ["a"]), _ex(1, "b", 3, 4, "allowed"),
      _ex(1, "b", 7, 8, "fleet_stale")]),
    ("a cut-off host restored may allow again what was never revoked", True,
     [_cut("a", 0, 2000), _ex(1, "a", 3, 4, "fleet_stale"), _back("a", 5),
      _ex(1, "a", 6, 7, "allowed")]),
    ("capabilities are independent", True,
     [_rv(1, 0, 1, ["a", "b"]), _ex(1, "a", 2, 3, "revoked"), _ex(2, "a", 2, 3, "allowed"),
      _rv(2, 4, 5, ["a", "b"]), _ex(2, "b", 6, 7, "revoked")]),
    ("an exercise overlapping the --wait return may go either way", True,
     [_rv(1, 0, 5, ["a"]), _ex(1, "a", 4, 6, "allowed")]),
    # violations
    ("an allowed exercise after --wait returned is rejected", False,
     [_rv(1, 2, 5, ["a", "b"]), _ex(1, "a", 6, 7, "revoked"), _ex(1, "b", 5.5, 7, "allowed")]),
    ("a skipped change acknowledged (counted host allows after --wait) is rejected", False,
     [_ex(1, "b", 0, 1, "allowed"), _rv(1, 2, 3, ["a", "b"]), _ex(1, "a", 4, 5, "revoked"),
      _ex(1, "b", 100, 101, "allowed")]),
    ("a revoke undone on a host is rejected", False,
     [_rv(1, 0, None), _ex(1, "a", 3, 4, "revoked"), _ex(1, "a", 5, 6, "allowed")]),
    ("a cut-off host allowing past the deny bound is rejected", False,
     [_cut("b", 0, 6000), _rv(1, 1, None), _ex(1, "b", 100, 101, "allowed")]),
    ("... even a capability never revoked", False,
     [_cut("b", 0, 6000), _ex(2, "b", 6.5, 7, "allowed")]),
    ("revoked before any revoke was invoked is rejected", False,
     [_ex(1, "a", 0, 1, "revoked"), _rv(1, 2, 3, ["a"])]),
    ("revoked with no revoke at all is rejected", False,
     [_ex(1, "a", 0, 1, "revoked")]),
    # the spec's bounds around --wait and a restore
    ("an uncounted host denying within its deny bound after --wait is legal", True,
     [_fleet(["a", "b"], 6000), _cut("b", 0, 6000), _rv(1, 1, 2, ["a"]), _ex(1, "b", 3, 4, "allowed"),
      _ex(1, "b", 9, 10, "fleet_stale")]),
    ("an uncounted host still allowing 100 s after --wait is rejected", False,
     [_fleet(["a", "b"], 6000), _cut("b", 0, 6000), _rv(1, 1, 2, ["a"]), _back("b", 50),
      _ex(1, "b", 102, 103, "allowed")]),
    ("a --wait success that counted no host is rejected", False,
     [_fleet(["a"], 6000), _rv(1, 0, 1, []), _ex(1, "a", 0.5, 0.6, "allowed")]),
    ("a --wait success that left out a host up all along is rejected", False,
     [_fleet(["a", "b"], 6000), _rv(1, 0, 1, ["a"]), _ex(1, "a", 2, 3, "revoked")]),
    ("a --wait success may leave out a host cut off meanwhile", True,
     [_fleet(["a", "b"], 6000), _cut("b", 0.5, 6000), _rv(1, 0, 10, ["a"]),
      _ex(1, "b", 11, 12, "fleet_stale")]),
    ("a host restored after a revoke it missed, enforcing it, is legal", True,
     [_fleet(["a", "b"], 6000), _cut("b", 0, 6000), _rv(1, 1, None, committed=True, ret=4),
      _ex(1, "b", 2, 3, "allowed"), _back("b", 20), _ex(1, "b", 21, 22, "revoked")]),
    ("a host cut off across a revoke, restored, that never applies it is rejected", False,
     [_fleet(["a", "b"], 6000), _cut("b", 0, 6000), _rv(1, 1, None, committed=True, ret=4),
      _back("b", 20), _ex(1, "b", 21, 22, "allowed")]),
    ("a revoke that never went in constrains no restored host", True,
     [_fleet(["a", "b"], 6000), _cut("b", 0, 6000), _rv(1, 1, None, committed=False, ret=4),
      _back("b", 20), _ex(1, "b", 21, 22, "allowed")]),
]


def self_test():
    print("TAP version 13")
    fails = 0
    for i, (name, want, hist) in enumerate(SELF_TESTS, 1):
        got, why = check(hist)
        ok = got == want
        fails += not ok
        print("%s %d lincheck: %s" % ("ok" if ok else "not ok", i, name))
        if why:
            print("# " + why.replace("\n", "\n# "))
    # a larger random history that keeps the promise must pass quickly
    import random
    rnd = random.Random(1)
    hist = []
    for c in range(20):
        w = rnd.uniform(10, 20)     # --wait returns
        applied = {h: w - rnd.uniform(0, 2) for h in range(3)}
        hist.append(_rv(c, w - 2.5, w, [0, 1, 2]))
        for h in range(3):
            for _ in range(8):
                a = rnd.uniform(0, 30)
                b = a + rnd.uniform(0, 1)
                hist.append(_ex(c, h, a, b, "allowed" if b < applied[h] else
                                "revoked" if a > applied[h] else "fleet_stale"))
    got, why = check(hist)
    fails += not got
    print("%s %d lincheck: a random history of %d operations that keeps the promise passes" %
          ("ok" if got else "not ok", len(SELF_TESTS) + 1, len(hist)))
    if why:
        print("# " + why)
    # recorded histories of the behaviour before the fleet's chain and
    # recovery: each must be rejected, by the rule it names
    n = len(SELF_TESTS) + 1
    fx = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    for name in sorted(os.listdir(fx)) if os.path.isdir(fx) else []:
        if not name.endswith(".json"):
            continue
        with open(os.path.join(fx, name)) as fh:
            hist = json.load(fh)
        want = [o for o in hist if o.get("op") == "_expect"]
        got, why = check([o for o in hist if o.get("op") != "_expect"])
        rule = want[0]["rule"] if want else ""
        ok = not got and (why or "").startswith(rule + ":")
        fails += not ok
        n += 1
        print("%s %d lincheck: the history fixtures/%s is rejected (%s)" %
              ("ok" if ok else "not ok", n, name, rule or "?"))
        print("# " + (why or "accepted"))
    print("1..%d" % n)
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
        print("lincheck: %d operations keep the fleet's promise" % len(hist))
        return 0
    print("lincheck: " + why)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
