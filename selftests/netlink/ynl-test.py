#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kernel's own generic netlink client drives capfence.ko.

Run in the test VM (make ecotest, with the Python overlay): ynl from
tools/net/ynl of linux-source-6.12 (its cli.py once, then its library,
so that the spec is read once) reads docs/netlink/capfence.yaml and
drives the module: status, epoch install/get/dump/activate, key install,
delegate with a token, revoke, task get and the events group. Each answer
is compared with the capfence CLI's. kselftest-style lines and a Totals
line.
"""
import base64
import errno
import json
import os
import subprocess
import sys
import time

YNL = os.environ.get('CF_YNL', '/usr/share/capfence/ynl')
SPEC = os.environ.get('CF_SPEC', '/usr/share/capfence/capfence.yaml')
sys.path.insert(0, YNL)
from lib import YnlFamily, NlError  # noqa: E402

n = fails = 0


def t(ok, name, why=''):
    global n, fails
    n += 1
    if not ok:
        fails += 1
    print('%s %d - %s' % ('ok' if ok else 'not ok', n, name))
    if not ok and why:
        for line in str(why).splitlines()[:6]:
            print('#   ' + line)
    sys.stdout.flush()


def cli(*args):
    r = subprocess.run(['capfence'] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr.strip()


def cli_json(*args):
    rc, out, err = cli(*args, '--json')
    if rc:
        raise RuntimeError('capfence %s: exit %d: %s' % (' '.join(map(str, args)), rc, err))
    return json.loads(out)


def unb64(s):
    return base64.urlsafe_b64decode(s + '=' * (-len(s) % 4))


def members(arr):
    """An indexed-array as ynl decodes it ([{index: member}, ...])."""
    return [v for m in arr or [] for v in m.values()]


def nl_errno(fn, *a):
    try:
        fn(*a)
    except NlError as e:
        return e.error
    return 0


def main():
    print('TAP version 13')
    # cli.py itself, as an operator would run it
    r = subprocess.run([sys.executable, os.path.join(YNL, 'cli.py'), '--spec', SPEC,
                        '--no-schema', '--output-json', '--do', 'status-get'],
                       capture_output=True, text=True)
    st = cli_json('status')
    try:
        y = json.loads(r.stdout)
        ok = (r.returncode == 0 and y['version'] == st['module_version'] and
              y['abi'] == st['abi'] and y['fence'] == st['fence'])
    except (ValueError, KeyError) as e:
        ok, y = False, e
    t(ok, "cli.py --do status-get: version, abi and fence as capfence status says",
      '%s\n%s' % (r.stderr[-400:], y))

    y = YnlFamily(SPEC, '')	# validated on the host (make spec-check)
    ev = YnlFamily(SPEC, '')
    ev.ntf_subscribe('events')

    s = y.do('status-get', {})
    st = cli_json('status')
    want = {k.replace('_', '-'): v for k, v in st['delegate_reject'].items()}
    t(s['stats']['delegate-reject'] == want and
      s['stats']['bound-creds'] == st['bound_creds'] and
      bool(s['hooks-attached']) == st['hooks_attached'] and
      s.get('max-epoch-id', 0) == st['max_epoch_id'],
      'status-get: the counters per reason (reason-counts), bound tasks, hooks, highest epoch as the CLI',
      '%s\n%s' % (s['stats'].get('delegate-reject'), want))

    # epochs: one installed by the CLI with rules, read back by ynl
    e = st['max_epoch_id'] + 1
    rc, _, err = cli('epoch', 'install', e, 'net:connect=token', 'fs:read=open')
    t(rc == 0, 'capfence epoch install %d' % e, err)
    g = y.do('epoch-get', {'epoch-id': e})
    show = cli_json('epoch', 'show', e)
    rules = {r['class'].replace('-', ':', 1): (r['kind'], r['fenced-at'])
             for r in members(g.get('rules'))}
    want = {r['class']: (r['kind'], r['fenced_at']) for r in show.get('rules', [])}
    t(g['epoch-id'] == e and rules == want,
      'epoch-get %d: the rules capfence epoch show lists' % e, '%s\n%s' % (rules, want))
    dump = y.dump('epoch-get', {})
    ids = sorted(x['epoch-id'] for x in dump)
    want = sorted(x['epoch_id'] for x in cli_json('epoch', 'list')['epochs'])
    t(ids == want and e in ids, 'epoch-get dump: the epochs capfence epoch list lists',
      '%s %s' % (ids, want))

    # an epoch installed by ynl (no rules: every class denied), seen by the CLI
    y.do('epoch-install', {'epoch-id': e + 1})
    show = cli_json('epoch', 'show', e + 1)
    t(show['epoch_id'] == e + 1 and all(r['kind'] == 'deny' for r in show.get('rules', [])),
      'epoch-install %d by ynl (no rules): capfence epoch show lists it, every class deny' % (e + 1),
      show)
    rc, _, err = cli('epoch', 'install', e, 'fs:read=open')
    code = nl_errno(y.do, 'epoch-install', {'epoch-id': e})
    t(code == errno.ERANGE and rc != 0 and os.strerror(errno.ERANGE) in err,
      'epoch-install of an id not above the highest: ERANGE through ynl, as through the CLI',
      'ynl errno %d, cli: %s' % (code, err))
    y.do('epoch-activate', {'epoch-id': e})
    st = cli_json('status')
    t(st['active_epoch_id'] == e, 'epoch-activate %d by ynl: capfence status shows it active' % e, st['active_epoch_id'])

    # a key installed by ynl, a token minted with it by the CLI
    kid = 700 + e % 100
    kf = '/tmp/ynl-key'
    if os.path.exists(kf):
        os.unlink(kf)
    rc, _, err = cli('key', 'generate', '--id', kid, '-o', kf)
    key = unb64(open(kf).read().split()[-1])
    y.do('key-install', {'key-id': kid, 'key': key})
    tok = cli_json('mint', '--key', kf, '--class', 'net:connect', '--epoch', e,
                   '--constraint', '127.0.0.1:80')
    task = subprocess.Popen(['capfence', 'exec', '--epoch', str(e), '--', 'sleep', '600'])
    try:
        for _ in range(200):
            rc, out, _ = cli('task', task.pid, '--json')
            if rc == 0 and json.loads(out).get('epoch_id') == e:
                break
            time.sleep(0.05)
        chk = cli_json('check', tok['token'], '--pid', task.pid)
        d = y.do('delegate', {'token': unb64(tok['token'][4:]), 'pid': task.pid})
        t(d.get('reason') == 'ok' and chk.get('reason') == 'ok',
          'delegate by ynl with a token of the key ynl installed: ok, as capfence check says',
          '%s %s' % (d, chk))
        g = y.do('task-get', {'pid': task.pid})
        tj = cli_json('task', task.pid)
        caps = ['%016x' % c['cap-id'] for c in members(g.get('caps'))]
        want = [c['cap_id'] for c in tj.get('caps', [])]
        t(g['epoch-id'] == e and caps == want and tok['cap_id'] in caps,
          'task-get: the epoch and the held capability capfence task shows', '%s %s' % (caps, want))
        # a token of another epoch: the typed rejection
        bad = cli_json('mint', '--key', kf, '--class', 'net:connect', '--epoch', e + 1,
                       '--constraint', '127.0.0.1:80')
        code = 0
        try:
            d = y.do('delegate', {'token': unb64(bad['token'][4:]), 'pid': task.pid})
        except NlError as x:
            code, d = x.error, x.nl_msg
        rc, out, err = cli('delegate', bad['token'], '--pid', task.pid, '--json')
        t(code == errno.ESTALE and 'epoch_mismatch' in out + err,
          'delegate of a token of another epoch: ESTALE through ynl, epoch_mismatch from the CLI',
          'ynl: %d %s\ncli: %s %s' % (code, d, out, err))
        y.do('revoke', {'cap-id': int(tok['cap_id'], 16)})
        tj = cli_json('task', task.pid)
        left = [c for c in tj.get('caps', []) if c['cap_id'] == tok['cap_id'] and c.get('state') != 'revoked']
        t(not left, 'revoke by ynl: capfence task shows the capability revoked', tj.get('caps'))
        # the events ynl heard, for what it did
        time.sleep(0.5)
        ev.check_ntf()
        kinds = [(m['msg'].get('event'), m['msg'].get('cap-id'), m['msg'].get('pid'))
                 for m in ev.async_msg_queue if m['name'] == 'event']
        cap = int(tok['cap_id'], 16)
        t(('delegate-ok', cap, task.pid) in kinds and any(k[0] == 'revoke' and k[1] == cap for k in kinds),
          'the events group, subscribed through ynl: the delegation and the revocation', kinds[-8:])
    finally:
        task.kill()
        task.wait()
    print('# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0' % (n - fails, fails))
    return 1 if fails else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Exception as x:		# one line, and the run still ends in a Totals line
        print('not ok %d - %s: %s' % (n + 1, type(x).__name__, str(x).splitlines()[0] if str(x) else ''))
        print('# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:1' % (n - fails, fails))
        sys.exit(1)
