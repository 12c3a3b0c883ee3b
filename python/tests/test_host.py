# SPDX-License-Identifier: LGPL-2.1-or-later
"""The capfence package without a kernel: keys, tokens, epochs and
accept_delegation() (rows 2-4 of the delegation table, docs/errors.md), over libcapfence.so.2."""
import errno
import os
import pickle
import stat

import pytest

import capfence as cf

VECTORS = os.environ.get("CAPFENCE_VECTORS", os.path.join(
    os.path.dirname(__file__), "..", "..", "selftests", "vectors",
    "tokens.txt"))


@pytest.fixture
def key():
    with cf.Key.generate(7) as k:
        yield k


def test_versions():
    assert cf.library_version() == "2.0.0"
    assert cf.__version__ == cf.library_version()
    assert cf.CLASSES == ("net:connect", "net:bind", "fs:read", "fs:write",
                          "vsock:connect")


def test_class_count_and_sizes_from_the_library():
    from capfence import _lib
    # the library's registry, not a count of the package's own
    assert _lib.CLASS_MAX == _lib.lib.capfence_class_count() == len(cf.CLASSES)
    for t, name in _lib._STRUCTS.items():
        assert _lib.ctypes.sizeof(t) == _lib.lib.capfence_struct_size(
            name.encode()), name
    assert _lib.lib.capfence_struct_size(b"no_such_struct") == 0
    # the 2 interface: an epoch has no size a binding could mirror, and
    # none of 1's positional calls is there
    for name in (b"capfence_epoch", b"capfence_epoch_info",
                 b"capfence_fleet_set"):
        assert _lib.lib.capfence_struct_size(name) == 0, name
    for fn in ("capfence_epoch_init", "capfence_client_delegate",
               "capfence_client_epoch_get", "capfence_class_slots",
               "capfence_client_revoke_at"):
        assert not hasattr(_lib.lib, fn), fn
    e = cf.Epoch.from_classes(5, {"fs:write"})
    assert e.rules == ["net:connect=deny", "net:bind=deny", "fs:read=deny",
                       "fs:write=token", "vsock:connect=deny"]
    e.close()
    with pytest.raises(ValueError, match="the epoch is closed"):
        e.rules


def test_mint_and_text_round_trip(key):
    t = cf.mint(key, "net:connect", 41, "10.0.0.0/8:443,127.0.0.1",
                cap_id=0x1234)
    assert (t.cls, t.epoch_id, t.cap_id, t.key_id) == ("net:connect", 41,
                                                        0x1234, 7)
    assert t.constraints == ["10.0.0.0/8:443", "127.0.0.1/32"]
    text = str(t)
    assert text.startswith("cf1_")
    assert cf.Token.parse(text) == t
    assert cf.Token.from_bytes(bytes(t)) == t
    assert t.verify(key)
    assert hash(cf.Token.parse(text)) == hash(t)


def test_mint_random_cap_ids_differ(key):
    a = cf.mint(key, "fs:write", 1, ["/srv"])
    b = cf.mint(key, "fs:write", 1, ["/srv"])
    assert a.cap_id != 0 and b.cap_id != 0 and a.cap_id != b.cap_id
    assert a.constraints == ["/srv"]


def test_mint_rejects_bad_input(key):
    with pytest.raises(ValueError, match="unknown class"):
        cf.mint(key, "net:listen", 1)
    with pytest.raises(ValueError, match="host bits"):
        cf.mint(key, "net:connect", 1, "10.0.0.1/8")
    with pytest.raises(ValueError):
        cf.mint(key, "fs:read", 1, "10.0.0.0/8")      # a CIDR for fs:*
    with pytest.raises(ValueError, match="more than 8"):
        cf.mint(key, "fs:read", 1, [f"/d{i}" for i in range(9)])


def test_parse_is_strict(key):
    text = str(cf.mint(key, "net:bind", 3))
    for bad in ("cf2_" + text[4:], text + "=", text[:-1], " " + text, ""):
        with pytest.raises(ValueError):
            cf.Token.parse(bad)


def test_verify_under_another_key(key):
    t = cf.mint(key, "fs:read", 5)
    with cf.Key.generate(7) as other:
        assert not t.verify(other)


def test_key_file_round_trip(key, tmp_path):
    p = tmp_path / "k"
    key.save(p)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    with cf.Key.load(p) as k2:
        assert k2.id == 7
        assert cf.mint(k2, "fs:read", 1, cap_id=9) == \
            cf.mint(key, "fs:read", 1, cap_id=9)
    with pytest.raises(cf.CapfenceError) as ei:
        cf.Key.load(tmp_path / "absent")
    assert ei.value.errno == errno.ENOENT
    with pytest.raises(cf.CapfenceError) as ei:
        cf.Key.parse("capfence-key v1\nid 0\n")
    assert ei.value.errno == errno.EBADMSG


def test_closed_key_is_refused():
    k = cf.Key.generate(3)
    k.close()
    with pytest.raises(ValueError, match="closed"):
        cf.mint(k, "fs:read", 1)
    with pytest.raises(ValueError):
        cf.Key.from_bytes(3, b"short")


def test_epoch_rules():
    e = cf.Epoch(42, ["net:connect=token:127.0.0.0/8", "fs:write=open"])
    assert e.epoch_id == 42
    assert e.rules == ["net:connect=token:127.0.0.0/8", "net:bind=deny",
                       "fs:read=deny", "fs:write=open", "vsock:connect=deny"]
    assert cf.Epoch.from_classes(7, {"fs:read"}).rules[2] == "fs:read=token"
    assert cf.Epoch.parse("epoch 9\nfs:read=open\n").epoch_id == 9
    with pytest.raises(ValueError, match="rule 2"):
        cf.Epoch(1, ["fs:read=open", "fs:read=deny"])


# ---- the design note's example, decided by the library -----------------------

def test_design_note_example(key):
    e41 = cf.Epoch.from_classes(41, {"net:connect", "fs:write"})
    e42 = cf.Epoch.from_classes(42, {"fs:write"})   # net:connect narrowed
    parent = cf.mint(key, "net:connect", e41.epoch_id)
    assert cf.accept_delegation(key, parent, e41) is parent
    with pytest.raises(cf.PolicyEpochMismatch) as ei:
        cf.accept_delegation(key, parent, e42)
    exc = ei.value
    assert type(exc) is cf.EpochMismatch
    assert (exc.reason, exc.errno) == ("epoch_mismatch", errno.ESTALE)
    assert (exc.cap_id, exc.token_epoch, exc.receiver_epoch) == \
        (parent.cap_id, 41, 42)
    assert "re-mint required" in str(exc)
    # the orchestrator re-mints under the receiver's epoch: now the
    # narrowing applies
    remint = cf.mint(key, parent.cls, exc.receiver_epoch, parent.constraints)
    with pytest.raises(cf.ClassDenied) as ei:
        cf.accept_delegation(key, remint, e42)
    assert (ei.value.reason, ei.value.errno) == ("class_denied",
                                                  errno.EACCES)
    # a class e42 keeps goes through after the re-mint
    w = cf.mint(key, "fs:write", 42)
    assert cf.accept_delegation(key, w, e42) is w


def test_forged_is_not_epoch_skew(key):
    e = cf.Epoch.from_classes(1, {"fs:read"})
    t = cf.mint(key, "fs:read", 1)
    with cf.Key.generate(7) as other, cf.Key.generate(8) as eight:
        for secret in (other, eight, [eight]):
            with pytest.raises(cf.Forged) as ei:
                cf.accept_delegation(secret, t, e)
            assert ei.value.errno == errno.EBADMSG
            assert ei.value.reason == "forged"
        # the right key among several
        assert cf.accept_delegation([eight, key], t, e) is t
    # forgery is decided before the epoch: a wrong MAC on a stale token
    with cf.Key.generate(7) as other:
        with pytest.raises(cf.Forged):
            cf.accept_delegation(other, cf.mint(key, "fs:read", 2), e)


def test_constraints_must_fit_the_rule(key):
    e = cf.Epoch(5, ["net:connect=token:127.0.0.0/8"])
    assert cf.accept_delegation(key, cf.mint(key, "net:connect", 5,
                                             "127.0.0.1:8080"), e)
    with pytest.raises(cf.ClassDenied):
        cf.accept_delegation(key, cf.mint(key, "net:connect", 5,
                                          "10.0.0.0/8"), e)
    with pytest.raises(cf.ClassDenied):      # unconstrained > the rule's set
        cf.accept_delegation(key, cf.mint(key, "net:connect", 5), e)


def test_accepts_token_text(key):
    e = cf.Epoch.from_classes(3, {"fs:read"})
    t = cf.mint(key, "fs:read", 3)
    assert cf.accept_delegation(key, str(t), e) == t


def test_every_reason_has_its_class():
    classes = {cf.NoTask: ("no_task", errno.ESRCH),
               cf.NotBound: ("not_bound", errno.EINVAL),
               cf.Forged: ("forged", errno.EBADMSG),
               cf.EpochMismatch: ("epoch_mismatch", errno.ESTALE),
               cf.ClassDenied: ("class_denied", errno.EACCES),
               cf.Revoked: ("revoked", errno.EKEYREVOKED),
               cf.Fenced: ("fenced", errno.EKEYEXPIRED),
               cf.NotHeld: ("not_held", errno.ENOKEY),
               cf.FleetStale: ("fleet_stale", errno.ENOLINK)}
    for cls, (reason, err) in classes.items():
        assert issubclass(cls, cf.PolicyEpochMismatch)
        exc = cls("x", cap_id=5, token_epoch=1, receiver_epoch=2, fence=3)
        assert (exc.reason, exc.errno) == (reason, err)
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is cls
        assert (back.cap_id, back.token_epoch, back.receiver_epoch,
                back.fence) == (5, 1, 2, 3)


# ---- the shared vectors ----------------------------------------------------------

def _vectors():
    keys, epochs, texts, decides = [], {}, [], []
    with open(VECTORS) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[0] == "key":
                keys.append(cf.Key.from_bytes(int(w[1]), bytes.fromhex(w[2])))
            elif w[0] == "epoch":
                epochs[int(w[1])] = cf.Epoch(int(w[1]), w[2:])
            elif w[0] == "text":
                texts.append(w[2])
            elif w[0] == "decide":
                decides.append((w[1], int(w[2]), w[3]))
    return keys, epochs, texts, decides


def test_vectors_decide_as_the_c_library():
    keys, epochs, texts, decides = _vectors()
    assert keys and epochs and texts and len(decides) >= 10
    for text in texts:
        assert str(cf.Token.parse(text)) == text
    seen = set()
    for text, epoch_id, want in decides:
        try:
            cf.accept_delegation(keys, text, epochs[epoch_id])
            got = "ok"
        except cf.PolicyEpochMismatch as exc:
            got = exc.reason
        assert got == want, (text, epoch_id)
        seen.add(got)
    assert seen == {"ok", "forged", "epoch_mismatch", "class_denied"}


@pytest.mark.skipif(os.path.exists("/sys/module/capfence"),
                    reason="the module is loaded here")
def test_client_without_the_module():
    with pytest.raises(cf.CapfenceError) as ei:
        cf.Client()
    assert ei.value.errno == errno.ENOENT
    assert "not loaded" in str(ei.value)
