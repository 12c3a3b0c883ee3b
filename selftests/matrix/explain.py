#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Explain the audit records of one bound run of the compatibility matrix.

    explain.py --profile FILE [--caps CAP,...] --epoch ID RULE... [--epoch ID RULE...]
               [--expect-logged NAME,...] < RECORDS

RECORDS are auditd's raw lines (type 1460, capfence's, and type 1326,
the kernel's AUDIT_SECCOMP) logged while the run was bound. Each is
printed with its verdict, and the exit status is 1 when any is not
explained:

- op=bind must be reason=ok;
- a capfence denial (op=exercise) is explained when its epoch's rule for
  its class refuses the target: the class is denied (or omitted), or it
  is token-mediated and no constraint of the rule admits the target;
- a refusal by the epoch's program (op=syscall reason=seccomp, capfence's
  record: the kernel writes no AUDIT_SECCOMP record for it) is explained
  when the profile, resolved as the engines resolve it for x86_64, the
  capability set and the running kernel, does not allow that system call
  for every argument (a call it allows outright was refused by something
  else); its errno must be EACCES or ENOSYS, the answers the program
  gives (no signal ended or interrupted the task);
- any other record of those types (an AUDIT_SECCOMP record: the epoch's
  program never logs, and the jobs' own filters do not ask to;
  op=suppressed: records were dropped, op=cred_limit, op=delegate) and
  an ANOM_ABEND are not.
--expect-logged NAMES: each named call must have an op=syscall record
(the profile answered it, e.g. ENOSYS, and the program went on).
"""
import argparse
import ctypes
import ctypes.util
import ipaddress
import json
import os
import re
import sys

ENGINE_CAPS = ("CAP_AUDIT_WRITE,CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_FOWNER,CAP_FSETID,"
               "CAP_KILL,CAP_MKNOD,CAP_NET_BIND_SERVICE,CAP_NET_RAW,CAP_SETFCAP,"
               "CAP_SETGID,CAP_SETPCAP,CAP_SETUID,CAP_SYS_CHROOT")
ARCH = ("amd64", "x86_64", "SCMP_ARCH_X86_64")
AUDIT_ARCH_X86_64 = 0xC000003E


def syscall_name(nr):
    """libseccomp's name of x86_64 system call nr."""
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or "libseccomp.so.2")
    lib.seccomp_syscall_resolve_num_arch.restype = ctypes.c_void_p
    lib.seccomp_syscall_resolve_num_arch.argtypes = [ctypes.c_uint32, ctypes.c_int]
    p = lib.seccomp_syscall_resolve_num_arch(AUDIT_ARCH_X86_64, nr)
    if not p:
        return str(nr)
    name = ctypes.string_at(p).decode()
    ctypes.CDLL(None).free(ctypes.c_void_p(p))
    return name


def kernel_version():
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2)))


def applies(rule, caps):
    inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
    if inc.get("arches") and not any(a in ARCH for a in inc["arches"]):
        return False
    if exc.get("arches") and any(a in ARCH for a in exc["arches"]):
        return False
    if inc.get("caps") and not all(c in caps for c in inc["caps"]):
        return False
    if exc.get("caps") and any(c in caps for c in exc["caps"]):
        return False
    if inc.get("minKernel"):
        want = tuple(int(x) for x in inc["minKernel"].split(".")[:2])
        if kernel_version() < want:
            return False
    return True


def answer(profile, caps, name):
    """(allowed outright, what the profile answers name with)."""
    default = profile.get("defaultAction", "")
    rules = [r for r in profile.get("syscalls") or [] if applies(r, caps)
             and name in (r.get("names") or ([r["name"]] if r.get("name") else []))]
    if any(r.get("action") == "SCMP_ACT_ALLOW" and not r.get("args") for r in rules):
        return True, "allowed"
    if not rules:
        if default == "SCMP_ACT_ALLOW":
            return True, "allowed (default)"
        errno = profile.get("defaultErrnoRet", profile.get("defaultErrno", ""))
        return False, "unlisted: default %s(%s)" % (default, errno)
    what = []
    for r in rules:
        a = r.get("action", "")
        if r.get("args"):
            a += " for some arguments"
        if r.get("errnoRet") or r.get("errno"):
            a += "(%s)" % (r.get("errno") or r.get("errnoRet"))
        what.append(a)
    allows = all(r.get("action") == "SCMP_ACT_ALLOW" for r in rules)
    if allows and default == "SCMP_ACT_ALLOW":
        return True, "allowed"
    return False, "; ".join(what) + ("; otherwise default %s" % default if allows else "")


def fields(line):
    return dict(m.groups() for m in re.finditer(r'(\w+)=("[^"]*"|\S+)', line))


def admitted(constraint, cls, target):
    """Does one rule constraint admit the record's target?"""
    if cls.startswith("fs:"):
        c = constraint.rstrip("/") or "/"
        return target == c or target.startswith(c + "/") or c == "/"
    if cls.startswith("net:"):
        m = re.match(r"^\[?([0-9a-fA-F.:]+)\]?:(\d+)$", target)
        if not m:
            return False
        addr, port = ipaddress.ip_address(m.group(1)), int(m.group(2))
        cm = re.match(r"^\[?([^\]]+?)\]?(?::(\d+)(?:-(\d+))?)?$", constraint)
        if not cm:
            return False
        net = ipaddress.ip_network(cm.group(1), strict=False)
        lo = int(cm.group(2)) if cm.group(2) else 0
        hi = int(cm.group(3)) if cm.group(3) else (lo if lo else 65535)
        return addr in net and lo <= port <= hi
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", required=True)
    ap.add_argument("--caps", default=ENGINE_CAPS)
    ap.add_argument("--epoch", nargs="+", action="append", default=[],
                    metavar=("ID", "RULE"))
    ap.add_argument("--expect-logged", default="")
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    caps = set(a.caps.split(",")) if a.caps else set()
    epochs = {}
    for e in a.epoch:
        rules = {}
        for r in e[1:]:
            cls, _, rule = r.partition("=")
            rules[cls] = rule
        epochs[e[0]] = rules
    bad = 0
    logged = set()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        f = fields(line)
        verdict = None
        if "lsm=capfence" in line:
            op = f.get("op")
            if op == "syscall":
                nr = int(f.get("syscall", "-1"))
                name = syscall_name(nr)
                logged.add(name)
                if f.get("reason") != "seccomp" or f.get("errno") not in ("13", "38"):
                    verdict = None
                elif f.get("arch") != "c000003e":
                    verdict = None
                else:
                    allowed, what = answer(profile, caps, name)
                    verdict = None if allowed else "explained: %s: %s" % (name, what)
            elif op == "bind":
                verdict = "ok" if f.get("reason") == "ok" else None
            elif op == "exercise":
                rule = epochs.get(f.get("epoch"), {}).get(f.get("class"), "deny")
                cls, target = f.get("class", ""), f.get("target", "")
                if f.get("epoch") not in epochs:
                    verdict = None
                elif rule in ("deny", ""):
                    verdict = "explained: %s is denied in epoch %s" % (cls, f["epoch"])
                elif rule.startswith("token"):
                    cons = rule.partition(":")[2]
                    cons = cons.split(",") if cons else []
                    if cons and not any(admitted(c, cls, target) for c in cons):
                        verdict = "explained: %s outside %s=%s" % (target, cls, rule)
                    elif f.get("reason") == "bypass":
                        verdict = "explained: %s mediated, %s refused" % (cls, target)
        elif line.startswith("type=ANOM_") or line.startswith("type=SECCOMP") \
                or "type=1326" in line:
            verdict = None
        else:
            continue
        if verdict is None:
            bad += 1
            print("UNEXPLAINED: " + line)
        else:
            print("%s: %s" % (verdict, line))
    for name in filter(None, a.expect_logged.split(",")):
        if name not in logged:
            bad += 1
            print("MISSING: no op=syscall record of %s" % name)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
