#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The threat model's generated tables: one per VM test variant table.

  path-table.py [--check | --write] [--top DIR]

docs/threat-model.md holds blocks

  <!-- generated: FIXTURE in selftests/kernel/FILE.c; hooks: PREFIX... -->
  ...
  <!-- end generated -->

Each is made from FILE's FIXTURE_VARIANT_ADD(FIXTURE, NAME) rows (their
.path, .hook, .grant, .reason, .cls and .target): one line per row, the
path, the hook that refuses it and the record its test asserts, with the
test's name. Under the table, the hooks of kernel/hook_defs.h whose kfunc
starts with one of the block's PREFIXes that no row names: each is a path
that this table does not test (the hand-written rows above it name their tests). --write
rewrites the blocks (make threat-table); --check prints kselftest lines
and fails when a block is not what the rows make (make spec-check).
"""
import argparse
import os
import re
import sys

DOC = 'docs/threat-model.md'
BLOCK = re.compile(r'(<!-- generated: (\w+) in (\S+); hooks: ([\w, ]+) -->\n)(.*?)(<!-- end generated -->)', re.S)
ROW = re.compile(r'FIXTURE_VARIANT_ADD\((\w+),\s*(\w+)\)\s*\{(.*?)\n\};', re.S)
FIELD = re.compile(r'\.(\w+)\s*=\s*((?:"(?:[^"\\]|\\.)*"\s*)+|\w+)')


def c_string(v, defines):
    v = v.strip()
    if v in defines:
        return defines[v]
    if v == 'NULL':
        return None
    return ''.join(m.encode().decode('unicode_escape') for m in re.findall(r'"((?:[^"\\]|\\.)*)"', v))


def rows(path, fixture):
    src = open(path).read()
    defines = {m.group(1): m.group(2) for m in re.finditer(r'^#define (\w+) "([^"]*)"$', src, re.M)}
    out = []
    for m in ROW.finditer(src):
        if m.group(1) != fixture:
            continue
        f = {k: c_string(v, defines) for k, v in FIELD.findall(m.group(3))}
        out.append((m.group(2), f))
    return out


def cell(s):
    return s.replace('|', '\\|')


def hooks(top, prefixes):
    text = open(os.path.join(top, 'kernel/hook_defs.h')).read()
    # the hooks whose kfunc starts with a prefix (the ACL hooks' kfuncs are
    # the xattr ones)
    return sorted({h for h, fn in re.findall(r'^CF_HOOK\((\w+), (\w+)\)', text, re.M)
                   if fn.startswith(prefixes)})


def table(top, fixture, src, prefixes):
    rs = rows(os.path.join(top, src), fixture)
    if not rs:
        raise SystemExit(f'{src}: no FIXTURE_VARIANT_ADD({fixture}, ...) rows')
    test = os.path.basename(src)[:-2]
    lines = [f'Generated from the `{fixture}` rows of `{src}` by `selftests/kernel/path-table.py`'
             ' (`make threat-table`); `make spec-check` fails when it is stale. Each row is refused'
             ' with `EACCES` and the record shown, counted once as that denial and never as an allow.',
             '', '| path | refused at | record | test |', '|---|---|---|---|']
    named = set()
    for name, f in rs:
        named.add(f.get('hook'))
        path = f['path'] + (f' (under a token for `{f["grant"]}`)' if f.get('grant') else '')
        rec = f'`reason={f["reason"]} class={f["cls"]} target="{f["target"]}"`' \
            if not f['reason'] == 'bypass' else f'`reason=bypass class={f["cls"]} target={f["target"]}`'
        lines.append(f'| {cell(path)} | `{f["hook"]}` | {rec} | `{test}: {fixture}.{name}` |')
    missing = [h for h in hooks(top, prefixes) if h not in named]
    lines += ['', 'Hooks of these classes that no row of this table names (a path the table does'
              ' not test; the hand-written rows above name their tests): '
              + (', '.join(f'`{h}`' for h in missing) if missing else 'none') + '.', '']
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--write', action='store_true')
    ap.add_argument('--top', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
    a = ap.parse_args()
    doc_path = os.path.join(a.top, DOC)
    doc = open(doc_path).read()
    blocks = list(BLOCK.finditer(doc))
    if not blocks:
        raise SystemExit(f'{DOC}: no generated block')
    fail = 0
    new = doc
    for n, m in enumerate(blocks, 1):
        want = table(a.top, m.group(2), m.group(3),
                     tuple(x.strip() for x in m.group(4).split(',')))
        new = new.replace(m.group(0), m.group(1) + want + m.group(6), 1)
        if a.check:
            ok = m.group(5) == want
            fail += not ok
            print(f'{"ok" if ok else "not ok"} {n} - {DOC}: the {m.group(2)} table is what its rows make'
                  + ('' if ok else ' (run make threat-table)'))
    if a.write and new != doc:
        open(doc_path, 'w').write(new)
    if a.check:
        print(f'# Totals: pass:{len(blocks) - fail} fail:{fail} xfail:0 xpass:0 skip:0 error:0')
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())
