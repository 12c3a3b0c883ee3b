# SPDX-License-Identifier: LGPL-2.1-or-later
"""The capfence package against the real module (run in the test VM by
`make vmtest`; as root, with capfence.ko loaded and its hooks attached).
Every test uses epochs above the installed ones, so the tests do not
depend on each other's order."""
import errno
import os
import signal
import sys

import pytest

import capfence as cf

KEY_ID = 91
SLEEP = ["/bin/busybox", "sleep", "600"]

pytestmark = pytest.mark.skipif(
    os.environ.get("CAPFENCE_VM") != "1",
    reason="needs the test VM (CAPFENCE_VM=1): capfence.ko and root")


@pytest.fixture(scope="module")
def client():
    with cf.Client() as c:
        yield c


@pytest.fixture(scope="module")
def key(client):
    k = cf.Key.generate(KEY_ID)
    client.install_key(k)
    yield k
    k.close()


@pytest.fixture
def children():
    pids = []
    yield pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def next_epoch(client):
    return client.status().max_epoch + 1


def spawn(client, children, epoch_id, tokens=()):
    pid = client.spawn_bound(epoch_id, SLEEP, tokens)
    children.append(pid)
    return pid


def test_status(client):
    st = client.status()
    assert st.abi == 2 and st.version and st.attached


def test_fleet_status(client):
    """Outside fleet mode (no agent in this boot): off, never confirmed."""
    fs = client.fleet_status()
    assert fs.state in ("off", "current", "stale", "deny")
    assert fs.rev >= 0 and fs.applied >= 0
    if fs.stale_ms == 0:
        assert fs.state == "off"
    assert fs.age_ms is None or fs.age_ms >= 0


def test_sandbox_status(client, children):
    """The audit budgets and the credential limit, the host's and a bound
    task's own: a fresh sandbox has written and missed nothing."""
    sb = client.sandbox_status()
    assert sb.budget > 0 and sb.ceiling >= sb.budget and sb.window_ms > 0
    assert sb.floor <= sb.budget and sb.id == 0
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=open", "fs:write=open"])
    pid = spawn(client, children, e)
    mine = client.task_sandbox(pid)
    assert mine.id > 0 and mine.epoch_id == e and mine.creds >= 1
    assert (mine.records, mine.over_budget, mine.over_ceiling,
            mine.lost) == (0, 0, 0, 0)
    assert client.task_sandbox(os.getpid()).id == 0


def test_design_note_scenario(client, key, children):
    """E41 allows net:connect and fs:write; E42 narrows net:connect away.
    A parent under E41 delegates its net:connect token to a child spawned
    under E42: rejected at the boundary, re-minted, and the narrowing of
    E42 applies to the child."""
    e41 = next_epoch(client)
    e42 = e41 + 1
    client.install_epoch(e41, ["net:connect=token:127.0.0.0/8",
                               "fs:write=token:/tmp"])
    client.install_epoch(cf.Epoch(e42, ["fs:write=token:/tmp"]))
    net = cf.mint(key, "net:connect", e41, "127.0.0.1:8080")
    wr = cf.mint(key, "fs:write", e41, "/tmp/x")
    parent = spawn(client, children, e41, [net, wr])
    assert client.task(parent).epoch_id == e41
    child = spawn(client, children, e42)
    info = client.task(child)
    assert (info.epoch_id, info.caps) == (e42, [])

    with pytest.raises(cf.PolicyEpochMismatch) as ei:
        client.delegate(net, child, from_pid=parent)
    exc = ei.value
    assert type(exc) is cf.EpochMismatch
    assert (exc.reason, exc.errno) == ("epoch_mismatch", errno.ESTALE)
    assert (exc.cap_id, exc.token_epoch, exc.receiver_epoch) == \
        (net.cap_id, e41, e42)
    assert exc.message          # the kernel's extack text

    # re-minted under E42, net:connect is denied there: the narrowing holds
    with pytest.raises(cf.ClassDenied) as ei:
        client.delegate_remint(key, net, child)
    assert ei.value.errno == errno.EACCES
    assert ei.value.token_epoch == e42
    assert client.task(child).caps == []

    # fs:write survives the roll: re-minted, it is delegated
    d = client.delegate_remint(key, wr, child)
    assert d.token is not None and d.token.epoch_id == e42
    assert d.token.cap_id != wr.cap_id and d.epoch_id == e42
    caps = client.task(child).caps
    assert [(c.cls, c.epoch_id, c.cap_id, c.state, c.constraints)
            for c in caps] == [("fs:write", e42, d.token.cap_id, "valid",
                                ["/tmp/x"])]
    # accept_delegation() decides the same without the kernel
    with pytest.raises(cf.EpochMismatch):
        cf.accept_delegation(key, net, client.epoch(e42))
    assert cf.accept_delegation(key, d.token, client.epoch(e42)) is d.token


def test_not_bound_and_no_task(client, key):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    t = cf.mint(key, "fs:read", e)
    with pytest.raises(cf.NotBound) as ei:
        client.delegate(t, os.getpid())
    assert ei.value.errno == errno.EINVAL
    with pytest.raises(cf.NoTask) as ei:
        client.delegate(t, 0x3ffffff0)
    assert ei.value.errno == errno.ESRCH


def test_forged(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    pid = spawn(client, children, e)
    with cf.Key.generate(KEY_ID + 1) as stranger:
        with pytest.raises(cf.Forged) as ei:
            client.delegate(cf.mint(stranger, "fs:read", e), pid)
    assert ei.value.errno == errno.EBADMSG


def test_revoked_and_fence(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    pid = spawn(client, children, e)
    t = cf.mint(key, "fs:read", e)
    d = client.delegate(t, pid)
    assert d.cap_id == t.cap_id
    fence = client.revoke(t.cap_id)
    assert fence > d.fence
    assert client.task(pid).caps[0].state == "revoked"
    with pytest.raises(cf.Revoked) as ei:
        client.delegate(t, pid)
    assert ei.value.errno == errno.EKEYREVOKED
    assert ei.value.fence >= fence


def test_fenced(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["net:connect=token:127.0.0.0/8"])
    pid = spawn(client, children, e)
    t = cf.mint(key, "net:connect", e, "127.0.0.2")
    client.install_epoch(e + 1, ["net:connect=token:127.0.0.1/32"])
    # binding the first task to e + 1 activates it: e's net:connect fenced
    spawn(client, children, e + 1)
    with pytest.raises(cf.Fenced) as ei:
        client.delegate(t, pid)
    assert ei.value.errno == errno.EKEYEXPIRED


def test_not_held(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    a = spawn(client, children, e)
    b = spawn(client, children, e)
    t = cf.mint(key, "fs:read", e)
    with pytest.raises(cf.NotHeld) as ei:
        client.delegate(t, b, from_pid=a)
    assert ei.value.errno == errno.ENOKEY
    client.delegate(t, a)
    assert client.delegate(t, b, from_pid=a).cap_id == t.cap_id


def test_dry_run_grants_nothing(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    pid = spawn(client, children, e)
    client.delegate(cf.mint(key, "fs:read", e), pid, dry_run=True)
    assert client.task(pid).caps == []


def test_spawn_bound_refusals_run_nothing(client, key):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    with cf.Key.generate(KEY_ID + 2) as stranger:
        with pytest.raises(cf.Forged):
            client.spawn_bound(e, SLEEP, [cf.mint(stranger, "fs:read", e)])
    with pytest.raises(cf.CapfenceError) as ei:
        client.spawn_bound(e, ["/nonexistent/prog"])
    assert ei.value.errno == errno.ENOENT
    with pytest.raises(cf.CapfenceError) as ei:
        client.spawn_bound(e + 1000, SLEEP)     # not installed
    assert ei.value.errno == errno.ENOENT
    with pytest.raises(ValueError):
        client.spawn_bound(e, [])


def test_spawned_child_holds_its_tokens(client, key, children):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token:/etc", "fs:write=open"])
    t = cf.mint(key, "fs:read", e, "/etc/passwd")
    pid = spawn(client, children, e, [t])
    info = client.task(pid)
    assert info.epoch_id == e
    assert [(c.cap_id, c.cls, c.from_pid) for c in info.caps] == \
        [(t.cap_id, "fs:read", 0)]


KILL_ACCT = ('{"defaultAction":"SCMP_ACT_ALLOW","syscalls":['
             '{"names":["acct"],"action":"SCMP_ACT_KILL_PROCESS"}]}')


def test_syscall_policy(client, children):
    """install_epoch(seccomp=...) and spawn_bound(): the child runs the
    epoch's filter (the kernel would refuse the bind otherwise); a
    contradicting or malformed profile installs nothing."""
    e = next_epoch(client)
    epoch = client.install_epoch(e, ["fs:read=open"], seccomp=KILL_ACCT)
    assert epoch.seccomp_notes == [
        "syscalls[0] (acct): SCMP_ACT_KILL_PROCESS -> SCMP_ACT_ERRNO(EACCES)"]
    digest, insns = client.epoch_seccomp(e)
    assert len(digest) == 64 and insns > 0
    pid = spawn(client, children, e)
    with open(f"/proc/{pid}/status") as f:
        assert "Seccomp:\t2" in f.read()
    assert client.task(pid).epoch_id == e
    with pytest.raises(cf.CapfenceError) as ei:
        client.install_epoch(e + 1, ["net:connect=open"], seccomp=(
            '{"defaultAction":"SCMP_ACT_ALLOW","syscalls":['
            '{"names":["connect"],"action":"SCMP_ACT_TRAP"}]}'))
    assert ei.value.errno == errno.EINVAL
    assert "denies connect, which class net:connect needs" in str(ei.value)
    with pytest.raises(cf.CapfenceError) as ei:
        client.install_epoch(e + 1, ["fs:read=open"], seccomp="{")
    assert ei.value.errno == errno.EINVAL
    assert client.status().max_epoch == e
    assert client.epoch_seccomp(next_epoch(client) - 1) is not None
    e2 = next_epoch(client)
    client.install_epoch(e2, ["fs:read=open"])
    assert client.epoch_seccomp(e2) is None


# a bound child that stacks a filter of its own (allow everything): exit 0,
# or the errno its prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) got
STACK_OWN_FILTER = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
class Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]
allow = (Insn * 1)(Insn(0x06, 0, 0, 0x7fff0000))
prog = Prog(1, allow)
libc.prctl(38, 1, 0, 0, 0)
r = libc.prctl(22, 2, ctypes.byref(prog), 0, 0)
sys.exit(ctypes.get_errno() if r else 0)
"""


@pytest.mark.parametrize("no_new_filters, status", [(False, 0),
                                                    (True, errno.EACCES)])
def test_syscall_policy_own_filters(client, no_new_filters, status):
    """install_epoch(no_new_filters=...): by default a bound task stacks a
    filter of its own; with no_new_filters its prctl answers EACCES."""
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=open", "fs:write=open"],
                         seccomp=KILL_ACCT, no_new_filters=no_new_filters)
    pid = client.spawn_bound(e, [sys.executable, "-c", STACK_OWN_FILTER])
    _, st = os.waitpid(pid, 0)
    assert os.WIFEXITED(st), f"ended by signal {os.WTERMSIG(st)}"
    assert os.WEXITSTATUS(st) == status


def test_syscall_policy_options_need_a_profile(client):
    with pytest.raises(TypeError):
        client.install_epoch(next_epoch(client), ["fs:read=open"],
                             no_new_filters=True)
    with pytest.raises(cf.CapfenceError) as ei:
        client.install_epoch(next_epoch(client), ["fs:read=open"],
                             seccomp=KILL_ACCT, seccomp_caps="CAP_NOPE")
    assert ei.value.errno == errno.EINVAL


def test_install_epoch_is_monotonic(client):
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=open"])
    with pytest.raises(cf.CapfenceError) as ei:
        client.install_epoch(e, ["fs:read=open"])
    assert ei.value.errno == errno.ERANGE
    assert client.epoch(e).rules[2] == "fs:read=open"
    with pytest.raises(cf.CapfenceError) as ei:
        client.epoch(e + 1000)
    assert ei.value.errno == errno.ENOENT


def test_events(client, key):
    e = next_epoch(client)
    with client.events() as ev:
        assert ev.next(timeout=0) is None
        client.install_epoch(e, ["fs:read=token"])
        t = cf.mint(key, "fs:read", e)
        with pytest.raises(cf.NotBound):
            client.delegate(t, os.getpid())
        got = [ev.next(timeout=5), ev.next(timeout=5)]
    assert [(g.type, g.reason) for g in got] == \
        [("epoch_install", "ok"), ("delegate_reject", "not_bound")]
    assert got[0].epoch_id == e
    assert (got[1].cap_id, got[1].pid) == (t.cap_id, os.getpid())


def test_threads_share_a_client(client, key, children):
    import threading
    e = next_epoch(client)
    client.install_epoch(e, ["fs:read=token"])
    pid = spawn(client, children, e)
    toks = [cf.mint(key, "fs:read", e) for _ in range(64)]
    errs = []

    def work(part):
        try:
            for t in part:
                assert client.delegate(t, pid).cap_id == t.cap_id
        except Exception as exc:  # pragma: no cover - reported below
            errs.append(exc)

    ths = [threading.Thread(target=work, args=(toks[i::4],))
           for i in range(4)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert errs == []
    assert sorted(c.cap_id for c in client.task(pid).caps) == \
        sorted(t.cap_id for t in toks)


def test_learn_then_verify(client, key, tmp_path):
    """learn(): a job run bound to a complain epoch gives the narrowest
    epoch and, with syscalls=True, the seccomp profile of the calls it
    made; installed under a new id, learn_verify() reruns the job with no
    denial, and a step it did not take while learning is refused with its
    record."""
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    job = ["/bin/sh", "-c", f"echo result > {job_dir}/out.txt"]
    learned = client.learn(job, open_classes=["fs:read"], syscalls=True)
    assert learned.exit == 0 and learned.complete and learned.denied == 0
    assert learned.learned >= 1
    assert f"fs:write=token:{job_dir}" in learned.epoch.rules
    assert "fs:read=open" in learned.epoch.rules
    assert '"defaultErrnoRet": 38' in learned.profile
    assert '"execve"' in learned.profile and '"reboot"' not in learned.profile
    assert learned.syscalls >= 10
    with pytest.raises(cf.CapfenceError) as exc:     # the complain epoch went
        client.epoch(learned.epoch_id)
    assert exc.value.errno == errno.ENOENT

    e = next_epoch(client)
    client.install_epoch(e, learned.epoch.rules, seccomp=learned.profile)
    tok = cf.mint(key, "fs:write", e, [str(job_dir)])
    rerun = client.learn_verify(e, job, [tok])
    assert (rerun.exit, rerun.denied, rerun.records) == (0, 0, [])
    assert rerun.complete

    other = client.learn_verify(
        e, ["/bin/sh", "-c", f"echo x > {tmp_path}/elsewhere"], [tok])
    assert other.exit != 0 and other.denied == 1
    assert "op=exercise reason=constraint errno=13 " in other.records[0]
    assert f'target="{tmp_path}/elsewhere"' in other.records[0]
    assert not (tmp_path / "elsewhere").exists()
    with pytest.raises(ValueError):
        client.learn(job, open_classes=["fs:exec"])
    with pytest.raises(ValueError):
        client.learn(job, prefix4=33)
    coarse = client.learn(job, open_classes=["fs:read"], path_depth=1)
    top = "/" + str(job_dir).split("/")[1]
    assert f"fs:write=token:{top}" in coarse.epoch.rules
    assert coarse.profile is None
