#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold docs/netlink/capfence.yaml against the code.

  check-spec.py [--top DIR]                  kselftest-style comparison
  check-spec.py [--top DIR] --genl-expect F  write what `genl ctrl get`
                                             must show, for the VM test

Compares the YAML spec with include/uapi/linux/capfence.h (every enum and
attribute set by order, constants, struct capfence_net_range), with
kernel/netlink.c where it is written by hand (family name and version,
multicast groups) and with the attribute types the kernel puts
(nla_put_*() in kernel/*.c). The policies and the op table are not
compared: they are generated from the spec (kernel/netlink_gen.[ch], make
netlink-gen; selftests/netlink/gen-check.sh holds them current). What the
schema has no field for is held here: an operation whose doc ends
"(admin)" is one whose do has "pre: cf-nl-pre-admin", and an attribute
whose doc says "(output)" is in no request. The YAML is read with PyYAML,
as the kernel's ynl reads it, and with --schema validated (jsonschema)
against the kernel's genetlink-legacy schema first.
"""
import argparse
import glob
import os
import re
import sys

import yaml
try:
    import jsonschema
except ImportError:		# only --schema needs it
    jsonschema = None


class SpecError(Exception):
    pass


# ---------------------------------------------------------------- the spec
def load_spec(path, schema_path=None):
    """The spec as any YAML 1.1 reader (PyYAML, the kernel's ynl) sees it,
    validated against the kernel's schema when one is given."""
    with open(path) as f:
        spec = yaml.safe_load(f)
    if not isinstance(spec, dict):
        raise SpecError('%s: not a YAML mapping' % path)
    if schema_path:
        with open(schema_path) as f:
            schema = yaml.safe_load(f)
        errs = sorted(jsonschema.Draft7Validator(schema).iter_errors(spec),
                      key=lambda e: list(e.absolute_path))
        if errs:
            raise SpecError('%s fails %s in %d place(s): %s' % (
                os.path.basename(path), os.path.basename(schema_path), len(errs),
                '; '.join('%s: %s' % ('/'.join(str(x) for x in e.absolute_path),
                                      e.message[:160]) for e in errs[:8])))
    return spec


def is_output(a):
    """An attribute only the kernel sends: its doc says "(output)"."""
    return '(output' in (a.get('doc') or '')


def is_admin(op):
    """A control operation: its doc ends "(admin)"."""
    return (op.get('doc') or '').rstrip().endswith('(admin)')


ADMIN_PRE = 'cf-nl-pre-admin'


# ---------------------------------------------------------------- C sources
def strip_c_comments(src):
    src = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), src, flags=re.S)
    return re.sub(r'//[^\n]*', '', src)


def split_top(s, sep=','):
    out, depth, cur = [], 0, ''
    for ch in s:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


CTYPE_SIZE = {'__u8': 1, '__u16': 2, '__u32': 4, '__u64': 8,
              '__s8': 1, '__s16': 2, '__s32': 4, '__s64': 8}


class Header:
    def __init__(self, path):
        src = strip_c_comments(open(path).read())
        src = src.replace('\\\n', ' ')
        self.defines = {}
        for m in re.finditer(r'^\s*#\s*define\s+(\w+)(?:[ \t]+(.*))?$', src, re.M):
            self.defines[m.group(1)] = (m.group(2) or '').strip()
        self.enums = {}
        self.consts = {}
        for m in re.finditer(r'enum\s+(\w+)\s*\{(.*?)\}\s*;', src, re.S):
            items, v = [], -1
            for e in split_top(m.group(2)):
                if '=' in e:
                    name, expr = [x.strip() for x in e.split('=', 1)]
                    v = self.eval(expr)
                else:
                    name, v = e, v + 1
                items.append((name, v))
                self.consts[name] = v
            self.enums[m.group(1)] = items
        self.structs = {}
        for m in re.finditer(r'struct\s+(\w+)\s*\{(.*?)\}\s*;', src, re.S):
            members = []
            for decl in m.group(2).split(';'):
                d = decl.strip()
                if not d:
                    continue
                mm = re.fullmatch(r'(\w+)\s+(\w+)(?:\[(.+)\])?', d)
                if not mm:
                    raise SpecError('cannot read member %r of struct %s' % (d, m.group(1)))
                members.append((mm.group(2), mm.group(1),
                                self.eval(mm.group(3)) if mm.group(3) else None))
            self.structs[m.group(1)] = members

    def sizeof(self, struct):
        size = 0
        for _, ctype, n in self.structs[struct]:
            size += CTYPE_SIZE[ctype] * (n or 1)
        return size

    def eval(self, expr, depth=0):
        if isinstance(expr, int):
            return expr
        e = re.sub(r'sizeof\s*\(\s*struct\s+(\w+)\s*\)',
                   lambda m: str(self.sizeof(m.group(1))), str(expr))

        def ident(m):
            n = m.group(0)
            if n in self.consts:
                return str(self.consts[n])
            if n in self.defines and depth < 20:
                return '(%d)' % self.eval(self.defines[n], depth + 1)
            raise SpecError('cannot evaluate %r in %r' % (n, expr))
        e = re.sub(r'\b[A-Za-z_]\w*\b', ident, e)
        e = re.sub(r'\b(0x[0-9a-fA-F]+|[0-9]+)[uUlL]+\b', r'\1', e)
        if not re.fullmatch(r'[0-9a-fA-Fx()+\-*/<> |&~\s]*', e):
            raise SpecError('cannot evaluate %r' % expr)
        return int(eval(e.replace('/', '//')))  # noqa: S307 - digits and operators only

    def string(self, name):
        v = self.defines.get(name, '')
        m = re.fullmatch(r'"(.*)"', v)
        return m.group(1) if m else None


class NetlinkC:
    """What kernel/netlink.c writes by hand: the family and its groups."""
    def __init__(self, path):
        src = strip_c_comments(open(path).read())
        m = re.search(r'struct\s+genl_multicast_group\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\n\}\s*;', src, re.S)
        self.mcgrps = []
        for e in split_top(m.group(1)) if m else []:
            fields = {}
            for f in split_top(e.strip()[1:-1]):
                k, val = [x.strip() for x in f.split('=', 1)]
                fields[k.lstrip('.')] = val
            self.mcgrps.append(fields)
        m = re.search(r'struct\s+genl_family\s+\w+[^=;]*=\s*\{(.*?)\n\}\s*;', src, re.S)
        self.family = {}
        for f in split_top(m.group(1)) if m else []:
            if '=' in f:
                k, val = [x.strip() for x in f.split('=', 1)]
                self.family[k.lstrip('.')] = val


PUT_TYPE = {'nla_put_u8': 'u8', 'nla_put_u16': 'u16', 'nla_put_u32': 'u32',
            'nla_put_s32': 's32', 'nla_put_u64_64bit': 'u64', 'cf_put_u64': 'u64',
            'nla_put_string': 'string', 'nla_put_flag': 'flag',
            'nla_nest_start': 'nest', 'nla_nest_start_noflag': 'nest'}


def kernel_puts(kdir):
    """{attr const: set of yaml types} from nla_put_*(skb, CONST, ...)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(kdir, '*.c'))):
        src = strip_c_comments(open(f).read())
        for m in re.finditer(r'\b(\w+)\s*\(\s*\w+\s*,\s*([A-Z][A-Z0-9_]+)\b', src):
            if m.group(1) in PUT_TYPE:
                out.setdefault(m.group(2), set()).add(PUT_TYPE[m.group(1)])
    return out


# ---------------------------------------------------------------- comparison
def cname(*parts):
    return ''.join(parts).upper().replace('-', '_')


class Tap:
    def __init__(self):
        self.results = []

    def check(self, desc, problems):
        self.results.append((desc, problems))

    def emit(self):
        print('TAP version 13')
        print('1..%d' % len(self.results))
        npass = nfail = 0
        for i, (desc, problems) in enumerate(self.results, 1):
            if problems:
                nfail += 1
                for p in problems:
                    print('# %s' % p)
                print('not ok %d - %s' % (i, desc))
            else:
                npass += 1
                print('ok %d - %s' % (i, desc))
        print('# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0' % (npass, nfail))
        return 1 if nfail else 0


def compare(spec, hdr, nl, puts, tap):
    defs = {d['name']: d for d in spec.get('definitions') or []}
    sets = {s['name']: s for s in spec.get('attribute-sets') or []}
    ops = spec['operations']['list']
    consts = {n: d['value'] for n, d in defs.items() if d.get('type') == 'const'}

    def val(x):
        if isinstance(x, int):
            return x
        if x in consts:
            return consts[x]
        raise SpecError('unknown constant %r' % x)

    # family identity
    p = []
    if spec.get('protocol') not in ('genetlink', 'genetlink-legacy'):
        p.append('protocol is %r' % spec.get('protocol'))
    if hdr.string('CAPFENCE_GENL_NAME') != spec['name']:
        p.append('CAPFENCE_GENL_NAME is %r, spec name %r' % (hdr.string('CAPFENCE_GENL_NAME'), spec['name']))
    if hdr.eval('CAPFENCE_GENL_VERSION') != spec.get('version', 1):
        p.append('CAPFENCE_GENL_VERSION %d, spec version %r' % (hdr.eval('CAPFENCE_GENL_VERSION'), spec.get('version', 1)))
    if nl.family.get('name') != 'CAPFENCE_GENL_NAME' or nl.family.get('version') != 'CAPFENCE_GENL_VERSION':
        p.append('genl_family name/version do not use CAPFENCE_GENL_NAME/VERSION')
    if not spec.get('doc'):
        p.append('family has no doc')
    tap.check('family: name %s, version %d' % (spec['name'], spec.get('version', 1)), p)

    # constants
    for n, d in defs.items():
        if d.get('type') != 'const':
            continue
        c = cname('capfence-', n)
        p = []
        if c not in hdr.defines:
            p.append('%s is not defined in the uapi header' % c)
        elif hdr.eval(c) != d['value']:
            p.append('%s = %d, spec %d' % (c, hdr.eval(c), d['value']))
        if not d.get('doc'):
            p.append('no doc')
        tap.check('const %s = %d' % (n, d['value']), p)

    # enums
    for n, d in defs.items():
        if d.get('type') not in ('enum', 'flags'):
            continue
        p = []
        ename = d.get('enum-name') or cname('capfence-', n).lower()
        prefix = d.get('name-prefix', 'capfence-%s-' % n)
        items = hdr.enums.get(ename)
        if items is None:
            tap.check('enum %s (%s)' % (n, ename), ['enum %s is not in the uapi header' % ename])
            continue
        want, v = [], d.get('value-start', 0) - 1
        for e in d['entries']:
            name = e['name'] if isinstance(e, dict) else e
            v = e.get('value', v + 1) if isinstance(e, dict) else v + 1
            want.append((cname(prefix, name), v))
            if isinstance(e, dict) and not e.get('doc'):
                p.append('entry %s has no doc' % name)
        have = [(c, x) for c, x in items if not c.startswith('__')]
        sentinel = [c for c, x in items if c.startswith('__')]
        if have != want:
            p.append('header %s' % ', '.join('%s=%d' % i for i in have))
            p.append('spec   %s' % ', '.join('%s=%d' % i for i in want))
        if d.get('render-max'):
            mx = cname('__', prefix, 'max')
            if sentinel != [mx] or items[-1] != (mx, len(want)):
                p.append('render-max: expected %s = %d last' % (mx, len(want)))
            if cname(prefix, 'max') not in hdr.defines or \
                    hdr.eval(cname(prefix, 'max')) != len(want) - 1:
                p.append('render-max: expected #define %s %d' % (cname(prefix, 'max'), len(want) - 1))
        if not d.get('doc'):
            p.append('no doc')
        tap.check('enum %s (%s): %d entries in order' % (n, ename, len(want)), p)

    # struct
    for n, d in defs.items():
        if d.get('type') != 'struct':
            continue
        cn = n.replace('-', '_')
        p = []
        members = hdr.structs.get(cn)
        if members is None:
            tap.check('struct %s' % cn, ['struct %s is not in the uapi header' % cn])
            continue
        want = []
        for m in d['members']:
            if m['type'] == 'binary':
                want.append((m['name'].replace('-', '_'), '__u8', m['len']))
            else:
                want.append((m['name'].replace('-', '_'), '__' + m['type'], None))
        if members != want:
            p.append('header %s' % members)
            p.append('spec   %s' % want)
        tap.check('struct %s: %d members, %d bytes' % (cn, len(want), hdr.sizeof(cn)), p)

    # attribute sets: uapi enums
    def_enums = {d.get('enum-name'): d for d in defs.values() if d.get('type') == 'enum'}
    for s in sets.values():
        p = []
        ename = s['enum-name']
        items = hdr.enums.get(ename)
        if ename in def_enums:
            # a set keyed by a definition's enum (reason-counts): one u64
            # attribute per entry but the zero one, with the entry's value
            d = def_enums[ename]
            want = [(e['name'], i) for i, e in enumerate(d['entries']) if i]
            have = [(a['name'], a.get('value', i)) for i, a in enumerate(s['attributes'], 1)]
            if have != want:
                p.append('attributes %s, the %s enum gives %s' % (have, d['name'], want))
            p += ['%s: type %s, not u64' % (a['name'], a['type'])
                  for a in s['attributes'] if a['type'] != 'u64']
            tap.check('attribute-set %s: keyed by the %s enum (%d attributes)' %
                      (s['name'], d['name'], len(want)), p)
            continue
        if items is None:
            tap.check('attribute-set %s (%s)' % (s['name'], ename), ['enum %s is not in the uapi header' % ename])
            continue
        want = [(cname(s['name-prefix'], 'unspec'), 0)]
        for i, a in enumerate(s['attributes'], 1):
            want.append((cname(s['name-prefix'], a['name']), a.get('value', i)))
            if a['type'] not in ('pad',) and not a.get('doc') and s['name'] in ('capfence', 'rule'):
                p.append('attribute %s has no doc' % a['name'])
            if a.get('enum') and a['enum'] not in defs:
                p.append('attribute %s: enum %s is not defined' % (a['name'], a['enum']))
            if a.get('nested-attributes') and a['nested-attributes'] not in sets:
                p.append('attribute %s: set %s is not defined' % (a['name'], a['nested-attributes']))
        have = [(c, x) for c, x in items if not c.startswith('__')]
        if have != want:
            p.append('header %s' % ', '.join('%s=%d' % i for i in have))
            p.append('spec   %s' % ', '.join('%s=%d' % i for i in want))
        cnt = cname(s['attr-cnt-name'])
        if items[-1] != (cnt, len(want)):
            p.append('expected %s = %d last' % (cnt, len(want)))
        mx = cname(s['attr-max-name'])
        if mx not in hdr.defines or hdr.eval(mx) != len(want) - 1:
            p.append('expected #define %s %d' % (mx, len(want) - 1))
        tap.check('attribute-set %s (%s): %d attributes in order' % (s['name'], ename, len(want) - 1), p)

    # attribute types the kernel puts
    for s in sets.values():
        p = []
        for a in s['attributes']:
            c = cname(s['name-prefix'], a['name'])
            t = a['type']
            if t in ('nest-type-value', 'indexed-array'):
                t = 'nest'
            for have in sorted(puts.get(c, ())):
                if have != t:
                    p.append('%s: spec type %s, the kernel puts %s' % (a['name'], a['type'], have))
        tap.check('attribute-set %s: types match the kernel\'s nla_put calls' % s['name'], p)

    # requests: the policies are generated from them; an attribute only
    # the kernel sends is in none
    top = sets[spec['name']] if spec['name'] in sets else list(sets.values())[0]
    p = []
    if spec.get('kernel-policy') != 'split':
        p.append('kernel-policy is %r: kernel/netlink_gen.c is generated as split ops' %
                 spec.get('kernel-policy'))
    for op in ops:
        for mode in ('do', 'dump'):
            r = (op.get(mode) or {}).get('request') or {}
            for x in r.get('attributes') or []:
                a = next((a for a in top['attributes'] if a['name'] == x), None)
                if a is not None and is_output(a):
                    p.append('op %s: %s request lists %s, marked output-only' % (op['name'], mode, x))
    tap.check('requests: per-operation policies (split), no output-only attribute', p)

    # operations
    cmd_items = hdr.enums.get(spec['operations'].get('enum-name', 'capfence_cmd'), [])
    prefix = spec['operations'].get('name-prefix', 'capfence-cmd-')
    want = [(cname(prefix, 'unspec'), 0)]
    for i, op in enumerate(ops, 1):
        want.append((cname(prefix, op['name']), op.get('value', i)))
    have = [(c, x) for c, x in cmd_items if not c.startswith('__')]
    p = []
    if have != want:
        p.append('header %s' % ', '.join('%s=%d' % i for i in have))
        p.append('spec   %s' % ', '.join('%s=%d' % i for i in want))
    if spec['operations'].get('enum-model', 'unified') != 'unified':
        p.append('only enum-model: unified is checked')
    tap.check('operations enum %s: %d commands in order' %
              (spec['operations'].get('enum-name', 'capfence_cmd'), len(ops)), p)

    for op in ops:
        p = []
        if not op.get('doc'):
            p.append('no doc')
        if op.get('attribute-set') not in sets:
            p.append('attribute-set %r is not defined' % op.get('attribute-set'))
        s = sets.get(op.get('attribute-set'), top)
        names = {a['name'] for a in s['attributes']}
        for mode in ('do', 'dump', 'event'):
            blk = op.get(mode) or {}
            lists = [blk.get('attributes')] if mode == 'event' else \
                [(blk.get('request') or {}).get('attributes'), (blk.get('reply') or {}).get('attributes')]
            for lst in lists:
                for x in lst or []:
                    if x not in names:
                        p.append('%s lists %s, not in attribute-set %s' % (mode, x, s['name']))
        pre = (op.get('do') or {}).get('pre')
        if is_admin(op) != (pre == ADMIN_PRE):
            p.append('admin: spec %s ("(admin)" ending its doc), do pre %s' % (is_admin(op), pre))
        if op.get('do') is not None and not op['do'].get('request') and not pre:
            p.append('do has no request and no pre: its attributes would be ignored, not refused')
        if op.get('dump') is not None and not op['dump'].get('request') and not op['dump'].get('pre'):
            p.append('dump has no request and no pre (start): its attributes would be ignored')
        if not (op.get('do') or op.get('dump')) and (not op.get('event') or not op.get('mcgrp')):
            p.append('an operation without do/dump must be an event with mcgrp')
        modes = '+'.join(m for m in ('do', 'dump', 'event') if op.get(m))
        fl = 'admin' if is_admin(op) else '-'
        tap.check('op %s = %d (%s, %s)' % (op['name'], op.get('value', ops.index(op) + 1), modes, fl), p)

    # multicast groups
    groups = (spec.get('mcast-groups') or {}).get('list') or []
    p = []
    kg = []
    for g in nl.mcgrps:
        nm = g.get('name', '')
        s = hdr.string(nm) if not nm.startswith('"') else nm.strip('"')
        fl = sorted(f.strip().replace('GENL_', '').replace('_', '-').lower()
                    for f in g.get('flags', '').split('|') if f.strip())
        kg.append((s, fl))
    sg = [(g['name'], sorted(g.get('flags') or [])) for g in groups]
    if [g[0] for g in kg] != [g[0] for g in sg]:
        p.append('kernel %s, spec %s' % (kg, sg))
    # the schema's group flags are admin-perm/uns-admin-perm only: a
    # CAP_NET_ADMIN group is said in the family's doc
    for name, fl in kg:
        if 'mcast-cap-net-admin' in fl and 'CAP_NET_ADMIN' not in spec.get('doc', ''):
            p.append('group %s is GENL_MCAST_CAP_NET_ADMIN; the family doc does not say CAP_NET_ADMIN' % name)
    for op in ops:
        if op.get('mcgrp') and op['mcgrp'] not in [g[0] for g in sg]:
            p.append('op %s: mcgrp %s not listed' % (op['name'], op['mcgrp']))
    tap.check('mcast-groups: %s' % ', '.join(g[0] for g in sg), p)


def class_lists(spec, top, tap):
    """The hand-kept lists of class names match the spec's class enum."""
    ent = [e['name'] for e in next(d for d in spec['definitions']
                                   if d['name'] == 'class')['entries']]
    want = [n.replace('-', ':', 1) for n in ent if n != 'none']
    found = {
        'kernel/class.c': re.findall(r'\.name = "([a-z]+:[a-z]+)"',
                                     open(os.path.join(top, 'kernel/class.c')).read()),
        'tools/lib/cf_core.c': re.findall(r'\{ "([a-z]+:[a-z]+)",',
                                          open(os.path.join(top, 'tools/lib/cf_core.c')).read()),
    }
    m = re.search(r'^_capfence_classes="([^"]*)"', open(os.path.join(
        top, 'tools/capfence/capfence.bash-completion')).read(), re.M)
    found['bash completion'] = m.group(1).split() if m else []
    # the man page's CONCEPTS "Classes" paragraph (up to the next .TP)
    man = open(os.path.join(top, 'docs/capfence.8')).read()
    m = re.search(r'^\.B Classes\n(.*?)^\.TP', man, re.M | re.S)
    found['docs/capfence.8 (Classes)'] = re.findall(
        r'\b([a-z]+:[a-z]+)\b', m.group(1)) if m else []
    for where, names in found.items():
        p = [] if names == want else ['%s lists %s, spec %s' % (where, names, want)]
        tap.check('class names in %s' % where, p)
    tap.check('python/capfence/_lib.py binds the 2 interface and mirrors no epoch',
              python_classes(top))
    tap.check('selftests/bench/noop-lsm.bpf.c has a no-op twin of every hook',
              noop_hooks(top))


def python_classes(top):
    """The Python binding binds the 2 interface (libcapfence.so.2), takes
    the class count from the library (capfence_class_count()), mirrors no
    epoch (the 2 interface's epochs are handles: no struct, no slot count)
    and checks every structure it does mirror against
    capfence_struct_size(): no number of classes of its own."""
    src = open(os.path.join(top, 'python/capfence/_lib.py')).read()
    p = []
    m = re.search(r'^CLASS_MAX = (.*?)\s*(#.*)?$', src, re.M)
    if not m or m.group(1) != 'lib.capfence_class_count()':
        p.append('_lib.py: CLASS_MAX = %s, not lib.capfence_class_count()' % (
            m.group(1) if m else '(missing)'))
    m = re.search(r'^SONAME = "([^"]*)"', src, re.M)
    if not m or m.group(1) != 'libcapfence.so.2':
        p.append('_lib.py binds %s, not libcapfence.so.2' % (
            m.group(1) if m else '(no SONAME)'))
    for cls in re.findall(r'^class (\w+)\(Structure\):', src, re.M):
        if cls in ('EpochS', 'EpochInfo', 'Rule') or 'CLASS_SLOTS' in src:
            p.append('_lib.py mirrors an epoch (class %s): the 2 interface\'s '
                     'epochs are handles' % cls)
            break
    if 'capfence_struct_size' not in src:
        p.append('_lib.py does not check its sizes with capfence_struct_size()')
    return p


def noop_hooks(top):
    """The benchmark floor has one no-op program per hook of the one hook
    list (kernel/hook_defs.h), as lsm/capfence.bpf.c has one real one."""
    def secs(path):
        return sorted(re.findall(r'SEC\("lsm[.a-z]*/([a-z_0-9]+)"\)',
                                 open(os.path.join(top, path)).read()))
    hooks = sorted(set(re.findall(r'^CF_HOOK\(([a-z_0-9]+)',
                                  open(os.path.join(top, 'kernel/hook_defs.h')).read(),
                                  re.M)))
    p = []
    for path in ('selftests/bench/noop-lsm.bpf.c', 'lsm/capfence.bpf.c'):
        got = secs(path)
        if got != hooks:
            p.append('%s: missing %s, extra %s (kernel/hook_defs.h)' % (
                path, sorted(set(hooks) - set(got)) or '-',
                sorted(set(got) - set(hooks)) or '-'))
    return p


def genl_expect(spec, out):
    """Lines: family NAME VERSION / op ID NAME CAPS / mcgrp NAME."""
    ops = spec['operations']['list']
    with open(out, 'w') as f:
        f.write('# generated from docs/netlink/capfence.yaml by check-spec.py\n')
        f.write('family %s %d\n' % (spec['name'], spec.get('version', 1)))
        for i, op in enumerate(ops, 1):
            if not (op.get('do') or op.get('dump')):
                continue
            caps = [c for c, m in (('doit', 'do'), ('dumpit', 'dump')) if op.get(m)]
            f.write('op %d %s %s\n' % (op.get('value', i), op['name'], ','.join(caps)))
        for g in (spec.get('mcast-groups') or {}).get('list') or []:
            f.write('mcgrp %s\n' % g['name'])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--top', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
    ap.add_argument('--spec')
    ap.add_argument('--genl-expect', metavar='FILE')
    ap.add_argument('--schema', metavar='FILE',
                    help="the kernel's Documentation/netlink/genetlink-legacy.yaml")
    args = ap.parse_args()
    top = args.top
    spec_path = args.spec or os.path.join(top, 'docs/netlink/capfence.yaml')
    try:
        if args.schema and jsonschema is None:
            raise SpecError('--schema needs python3-jsonschema')
        spec = load_spec(spec_path, args.schema)
        if args.genl_expect:
            genl_expect(spec, args.genl_expect)
            return 0
        hdr = Header(os.path.join(top, 'include/uapi/linux/capfence.h'))
        nl = NetlinkC(os.path.join(top, 'kernel/netlink.c'))
        puts = kernel_puts(os.path.join(top, 'kernel'))
        tap = Tap()
        compare(spec, hdr, nl, puts, tap)
        class_lists(spec, top, tap)
    except (SpecError, KeyError, OSError, yaml.YAMLError) as e:
        print('TAP version 13\n1..1\n# %s: %s\nnot ok 1 - read the spec and the sources' %
              (type(e).__name__, e))
        print('# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:1')
        return 1
    return tap.emit()


if __name__ == '__main__':
    sys.exit(main())
