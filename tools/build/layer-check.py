#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Check that the files of capfence.ko only point down their layers.

    layer-check.py [--graph] [DIR]     (DIR: the module's sources, kernel/)

Each file of DIR belongs to one layer (LAYERS below, the diagram of
docs/design.md). A file may use what a file of a lower layer defines, never
what a higher one does; inside a layer, only the uses listed in PEERS are
allowed, so that no cycle can form there. "Uses" are read from the text:
an #include "X.h" is a use of X.c, and so is any identifier that X.h or
X.c defines for other files (a function, an inline, a variable, a macro)
appearing in the file. A header belongs to the layer of its .c file and is
held to the same rule. Only netlink.c builds or sends a netlink message
(nla_put*, nla_nest_start*, genlmsg_*, nlmsg_new): the core publishes
through the notification callback of fence.c. Prints one "not ok" line
per violation and exits 1 when there is any; --graph prints every use
instead.
"""
import os
import re
import sys

# top to bottom; a file not listed here is an error (place it)
LAYERS = [
    ("control", ["main", "netlink", "hooks"]),
    ("edges", ["kfunc", "net", "vsock", "fspath", "fsmemo", "file", "sock", "borrow"]),
    ("decisions", ["decide"]),
    ("state", ["cred", "audit", "sandbox", "cap", "epoch", "seccomp", "key",
               "fleet", "fence"]),
    ("leaves", ["stats", "token", "constraint", "class", "memo"]),
]

# allowed uses inside a layer: (user, used)
PEERS = {
    ("main", "netlink"), ("main", "hooks"), ("netlink", "hooks"),
    ("kfunc", "net"), ("kfunc", "fspath"), ("kfunc", "fsmemo"),
    ("kfunc", "file"), ("kfunc", "sock"), ("kfunc", "borrow"),
    ("net", "vsock"), ("net", "sock"), ("vsock", "sock"), ("fspath", "fsmemo"), ("fspath", "file"),
    ("cred", "sandbox"), ("cred", "cap"), ("cred", "epoch"),
    ("cred", "seccomp"), ("cred", "fence"), ("cred", "fleet"),
    ("cred", "audit"),
    ("audit", "sandbox"), ("audit", "epoch"), ("audit", "fleet"),
    ("audit", "seccomp"),
    ("sandbox", "fence"), ("sandbox", "fleet"),
    ("cap", "epoch"), ("cap", "key"), ("cap", "fleet"), ("cap", "fence"),
    ("epoch", "seccomp"), ("epoch", "fence"), ("epoch", "cap"),
    ("key", "fence"), ("fleet", "fence"),
    ("token", "constraint"), ("token", "class"),
    ("constraint", "class"), ("stats", "class"),
}

# a file that is part of another's unit: the front end's stores of cred.c's,
# file.c's and sock.c's entries (the built-in LSM brings its own headers,
# over its blobs); the policies and
# op table generated from the netlink spec for netlink.c's handlers
PART_OF = {"cred_store": "cred", "file_store": "file", "sock_store": "sock",
           "netlink_gen": "netlink"}

# headers that belong to no file: shared definitions, no code of a layer
NEUTRAL = {"compat", "hook_defs", "hooklist", "ptrtable", "version"}

IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")
# building or sending a netlink message: netlink.c's alone
NLMSG = re.compile(r"\b(nla_put\w*|nla_nest_start\w*|genlmsg_\w+|nlmsg_new)\s*\(")
NLMSG_OWNER = "netlink"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)


def strip(text):
    """Drop comments and string literals (not #include names): code only."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'(?<!include )"(\\.|[^"\\\n])*"', '""', text)


def exported(stem, csrc, hsrc):
    """The names @stem defines for other files."""
    names = set()
    # a forward declaration (struct sock;) defines nothing
    hsrc = re.sub(r"^(?:struct|union|enum)\s+\w+\s*;", "", hsrc, flags=re.M)
    # everything its header declares or defines at file scope
    for m in re.finditer(r"^(?:static\s+inline\s+|extern\s+)?[A-Za-z_][\w \t\*]*?"
                         r"\b(\w+)\s*(?:\(|\[|;|=)", hsrc, re.M):
        names.add(m.group(1))
    for m in re.finditer(r"^#\s*define\s+(\w+)", hsrc, re.M):
        names.add(m.group(1))
    for m in re.finditer(r"^(?:struct|enum|union)\s+(\w+)\s*\{", hsrc, re.M):
        names.add(m.group(1))
    # non-static functions and variables of its .c file
    for m in re.finditer(r"^(?!static\b)(?!typedef\b)[A-Za-z_][\w \t\*]*?"
                         r"\b(cf_\w+)\s*(?:\(|\[|=|;)", csrc, re.M):
        names.add(m.group(1))
    keywords = {"if", "for", "while", "return", "sizeof", "struct", "enum",
                "union", "void", "int", "bool", "u8", "u16", "u32", "u64",
                "long", "char", "unsigned", "const", "static", "inline"}
    return {n for n in names if n not in keywords and not n.startswith("_CAPFENCE")}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    graph = "--graph" in sys.argv
    d = args[0] if args else os.path.join(os.path.dirname(__file__), "..",
                                          "..", "kernel")
    layer_of, rank = {}, {}
    for i, (name, stems) in enumerate(LAYERS):
        for s in stems:
            layer_of[s], rank[s] = name, i
    files = sorted(f for f in os.listdir(d) if f.endswith((".c", ".h")))
    def unit(f):
        return PART_OF.get(f[:-2], f[:-2])

    stems = sorted({unit(f) for f in files} - NEUTRAL - {"capfence"})
    bad = 0
    for s in stems:
        if s not in rank:
            print(f"not ok - {s}: in no layer (add it to LAYERS)")
            bad += 1
    if bad:
        return 1

    def read(name):
        p = os.path.join(d, name)
        return strip(open(p).read()) if os.path.exists(p) else ""

    owner = {}
    for s in stems:
        parts = [s] + [p for p, u in PART_OF.items() if u == s]
        for p in parts:
            for n in exported(p, read(p + ".c"), read(p + ".h")):
                owner.setdefault(n, s)
    for f in files:
        s = unit(f)
        if s in NEUTRAL:
            continue
        src = read(f)
        uses = {}
        if s == "capfence":
            print(f"not ok - {f}: the umbrella header is gone: each file "
                  "includes what it uses")
            bad += 1
            continue
        for m in INCLUDE.finditer(src):
            t = os.path.basename(m.group(1))
            t = PART_OF.get(t, t)
            if t == "capfence":
                uses.setdefault(t, "#include \"capfence.h\"")
            elif t in rank and t != s:
                uses.setdefault(t, f'#include "{t}.h"')
        m = NLMSG.search(src)
        if m and s != NLMSG_OWNER and not graph:
            print(f"not ok - {f}: builds a netlink message ({m.group(1)}); "
                  f"only {NLMSG_OWNER}.c does")
            bad += 1
        for m in IDENT.finditer(src):
            t = owner.get(m.group(1))
            if t and t != s:
                uses.setdefault(t, m.group(1))
        for t, why in sorted(uses.items()):
            if graph:
                print(f"{f} -> {t} ({why})")
                continue
            if t == "capfence":
                print(f"not ok - {f}: includes the umbrella capfence.h")
                bad += 1
            elif rank[t] < rank[s] or (rank[t] == rank[s] and
                                       (s, t) not in PEERS):
                print(f"not ok - {f} ({layer_of[s]}) uses {t} "
                      f"({layer_of[t]}): {why}")
                bad += 1
    if not graph:
        print(f"{'not ok' if bad else 'ok'} - layers: {len(stems)} files, "
              f"{bad} upward or unlisted uses")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
