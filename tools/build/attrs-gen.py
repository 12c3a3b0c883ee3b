#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The library's attribute tables, generated from the netlink spec.

  attrs-gen.py SPEC OUT.c

One table per attribute set of SPEC (docs/netlink/capfence.yaml): the
libmnl type libcapfence reads each attribute as (a fixed-size binary with
its length), and a struct cf_attr_set for it (tools/lib/cf_attrs.h). The
kernel's ynl-gen-c.py --mode user makes a client for the kernel's own ynl
library, which libcapfence (libmnl) does not use: this is the part of it
the library needs. make netlink-gen writes tools/lib/cf_attrs_gen.c.
"""
import sys

import yaml

MNL = {'u8': 'U8', 'u16': 'U16', 'u32': 'U32', 'u64': 'U64', 'string': 'NUL_STRING',
       'flag': 'FLAG', 'binary': 'BINARY', 'nest': 'NESTED', 'indexed-array': 'NESTED'}


def c(*parts):
    return ''.join(parts).upper().replace('-', '_')


def main():
    spec_path, out = sys.argv[1:3]
    spec = yaml.safe_load(open(spec_path))
    fam = spec['name']
    consts = {d['name'] for d in spec.get('definitions') or [] if d.get('type') == 'const'}
    lines = ['// SPDX-License-Identifier: LGPL-2.1-or-later',
             '/* Do not edit: generated from docs/netlink/capfence.yaml by',
             ' * tools/build/attrs-gen.py (make netlink-gen). */',
             '#include <linux/capfence.h>',
             '#include "cf_attrs.h"', '']
    sets = []
    for st in spec['attribute-sets']:
        if st.get('subset-of'):
            continue
        name = st['name']
        var = name.replace('-', '_')
        attrs = [a for a in st['attributes'] if a['type'] not in ('pad', 'unused')]
        size = c(st['attr-max-name']) if 'attr-max-name' in st else \
            c(st['name-prefix'], st['attributes'][-1]['name'])
        lines.append('static const struct cf_attr_type %s_types[%s + 1] = {' % (var, size))
        for a in attrs:
            exact = (a.get('checks') or {}).get('exact-len')
            if a.get('struct'):
                val = '{ .type = MNL_TYPE_BINARY, .len = sizeof(struct %s) }' % \
                    a['struct'].replace('-', '_')
            elif exact is not None:
                n = c(fam, '-', exact) if exact in consts else str(exact)
                val = '{ .type = MNL_TYPE_BINARY, .len = %s }' % n
            else:
                val = '{ .type = MNL_TYPE_%s }' % MNL[a['type']]
            lines.append('\t[%s] = %s,' % (c(st['name-prefix'], a['name']), val))
        lines.append('};')
        lines.append('')
        sets.append((name, var))
    for name, var in sets:
        lines.append('const struct cf_attr_set cf_attrs_%s = {' % var)
        lines.append('\t"%s", sizeof(%s_types) / sizeof(%s_types[0]) - 1, %s_types' %
                     (name, var, var, var))
        lines.append('};')
    open(out, 'w').write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
