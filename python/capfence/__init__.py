# SPDX-License-Identifier: LGPL-2.1-or-later
"""capfence: capability delegation fenced by syscall-policy epochs.

A pure-Python package over libcapfence.so.2 (ctypes, no compiler needed):

* :class:`Key`, :func:`mint`, :class:`Token` -- keys and tokens, minted and
  checked by the same C code the kernel module's tokens are made with;
* :class:`Epoch` and :func:`accept_delegation` -- the delegation-time check
  of the design note (rows 2-4 of the delegation table, docs/errors.md) without a kernel;
* :class:`Client` -- the kernel's decision: ``delegate()``, ``revoke()``,
  ``install_epoch()``, ``activate_epoch()``, ``spawn_bound()``,
  ``events()`` and the rest of the control plane of capfence.ko.

A rejected delegation raises the :class:`PolicyEpochMismatch` subclass of
its reason (:class:`EpochMismatch`, :class:`ClassDenied`, :class:`Forged`,
:class:`Revoked`, :class:`Fenced`, :class:`NotHeld`, :class:`NotBound`,
:class:`NoTask`), which carries the reason, errno, cap_id and epochs.
Other failures raise :class:`CapfenceError` (an :class:`OSError`).
"""
from __future__ import annotations

import ctypes
import errno as _errno
import os
import threading
from dataclasses import dataclass, field
from typing import (Dict, Iterable, Iterator, List, Optional, Sequence,
                    Tuple, TypeVar, Union)

from . import _lib
from ._lib import lib as _c

__all__ = [
    "__version__", "library_version", "CLASSES", "Key", "Token", "Epoch",
    "mint", "accept_delegation", "Client", "Events", "Event", "Decision",
    "Status", "FleetStatus", "Sandbox", "Capability", "TaskInfo", "Learned",
    "CapfenceError",
    "PolicyEpochMismatch", "EpochMismatch", "ClassDenied", "Forged",
    "Revoked", "Fenced", "NotHeld", "NotBound", "NoTask", "FleetStale",
]

__version__ = "2.0.0"

#: The capability classes, by name, in class id order.
CLASSES: Tuple[str, ...] = tuple(
    _c.capfence_class_name(i).decode() for i in range(1, _lib.CLASS_MAX + 1))


def library_version() -> str:
    """The version of the libcapfence.so.2 actually loaded ("2.0.0")."""
    return _c.capfence_version().decode()


def _err() -> ctypes.Array:
    return _lib.ERRBUF()


def _text(buf: ctypes.Array) -> str:
    return buf.value.decode(errors="replace")


# ---- errors ------------------------------------------------------------------


class CapfenceError(OSError):
    """A request failed before any decision (no module, no privilege, bad
    input): ``errno`` and a one-line ``strerror`` as for :class:`OSError`."""

    def __init__(self, err: int, message: str) -> None:
        super().__init__(err, message)


class PolicyEpochMismatch(RuntimeError):
    """A delegation was rejected at the boundary (never deferred to the
    syscall). The subclass names the reason; the attributes say why:

    ``reason``          the reason's name ("epoch_mismatch", ...)
    ``errno``           the errno the kernel reports it with (ESTALE, ...)
    ``cap_id``          the token's cap_id
    ``token_epoch``     the epoch the token was minted under (or None)
    ``receiver_epoch``  the receiver's epoch: re-mint under it (or None)
    ``fence``           the module's fence at the decision (kernel only)
    ``message``         the kernel's (or library's) explanation
    """

    reason: str = "?"
    reason_id: int = -1

    def __init__(self, message: str, *, cap_id: int = 0,
                 token_epoch: Optional[int] = None,
                 receiver_epoch: Optional[int] = None,
                 fence: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.cap_id = cap_id
        self.token_epoch = token_epoch
        self.receiver_epoch = receiver_epoch
        self.fence = fence
        self.errno = (_c.capfence_reason_errno(self.reason_id)
                      if self.reason_id >= 0 else 0)

    def __reduce__(self):  # picklable across processes
        return (_rebuild, (type(self), self.message, self.cap_id,
                           self.token_epoch, self.receiver_epoch, self.fence))


def _rebuild(cls, message, cap_id, token_epoch, receiver_epoch, fence):
    return cls(message, cap_id=cap_id, token_epoch=token_epoch,
               receiver_epoch=receiver_epoch, fence=fence)


def _reason_class(name: str, rid: int, doc: str) -> type:
    return type(name, (PolicyEpochMismatch,),
                {"reason": _c.capfence_reason_name(rid).decode(),
                 "reason_id": rid, "__doc__": doc,
                 "__module__": __name__})


# enum capfence_reason
_R_OK, _R_NO_TASK, _R_NOT_BOUND, _R_FORGED, _R_EPOCH_MISMATCH = 0, 1, 2, 3, 4
_R_CLASS_DENIED, _R_REVOKED, _R_FENCED, _R_NOT_HELD = 5, 6, 7, 8
_R_FLEET_STALE = 13

NoTask = _reason_class("NoTask", _R_NO_TASK, "No such receiving task (ESRCH).")
NotBound = _reason_class("NotBound", _R_NOT_BOUND,
                         "The receiver is not bound to an epoch (EINVAL).")
Forged = _reason_class("Forged", _R_FORGED,
                       "Unknown key or wrong MAC (EBADMSG): not epoch skew.")
EpochMismatch = _reason_class(
    "EpochMismatch", _R_EPOCH_MISMATCH,
    "Minted under another epoch than the receiver's (ESTALE): re-mint "
    "under ``receiver_epoch``.")
ClassDenied = _reason_class(
    "ClassDenied", _R_CLASS_DENIED,
    "The class (or its constraints) is not permitted under the receiver's "
    "epoch (EACCES).")
Revoked = _reason_class("Revoked", _R_REVOKED,
                        "The capability was revoked (EKEYREVOKED).")
Fenced = _reason_class(
    "Fenced", _R_FENCED,
    "The token's epoch was fenced by a narrowing activation (EKEYEXPIRED).")
NotHeld = _reason_class(
    "NotHeld", _R_NOT_HELD,
    "The delegating task does not hold the capability (ENOKEY).")
FleetStale = _reason_class(
    "FleetStale", _R_FLEET_STALE,
    "The host has not confirmed it is current with its fleet within the "
    "stale bound (ENOLINK): retry once its agent confirms again.")

_BY_REASON: Dict[int, type] = {c.reason_id: c for c in (
    NoTask, NotBound, Forged, EpochMismatch, ClassDenied, Revoked, Fenced,
    NotHeld, FleetStale)}


def _rejection(rid: int, message: str, **kw) -> PolicyEpochMismatch:
    cls = _BY_REASON.get(rid)
    if cls is None:
        cls = _reason_class(f"Reason{rid}", rid, "A reason this package "
                            "does not know yet.")
    return cls(message, **kw)


# ---- handles -------------------------------------------------------------------

_H = TypeVar("_H", bound="_Handle")


class _Handle:
    """An object of the library, freed by ``_free``: by :meth:`close`, at
    the end of a ``with`` block, or when it is collected."""

    __slots__ = ("_p",)
    _what = "handle"

    def _free(self, p: ctypes.c_void_p) -> None:
        raise NotImplementedError

    @property
    def _ptr(self) -> ctypes.c_void_p:
        if not self._p:
            raise ValueError(f"the {self._what} is closed")
        return self._p

    def close(self) -> None:
        """Free it (a key is wiped first); using it afterwards raises
        ValueError."""
        if self._p:
            self._free(self._p)
            self._p = None

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


# ---- keys ----------------------------------------------------------------------


class Key(_Handle):
    """A MAC key (id + 32 secret bytes) in libsodium's guarded memory.

    ``Key.generate(id)``, ``Key.from_bytes(id, raw)``, ``Key.load(path)``
    or ``Key.parse(text)``; ``save(path)`` writes the key file (mode 0600).
    Close it (or use ``with``) to wipe it; it is also wiped when collected.
    """

    __slots__ = ()
    _what = "key"

    def __init__(self, _ptr: ctypes.c_void_p) -> None:
        self._p = _ptr

    def _free(self, p: ctypes.c_void_p) -> None:
        _c.capfence_key_free(p)

    @classmethod
    def generate(cls, key_id: int) -> "Key":
        """A new random key with id ``key_id`` (1..2**32-1)."""
        p = ctypes.c_void_p()
        _check(_c.capfence_key_generate(key_id, ctypes.byref(p)),
               f"cannot generate key {key_id}")
        return cls(p)

    @classmethod
    def from_bytes(cls, key_id: int, raw: bytes) -> "Key":
        """A key from its 32 raw bytes (tests, vectors)."""
        if len(raw) != _lib.KEY_LEN:
            raise ValueError(f"a key is {_lib.KEY_LEN} bytes, not {len(raw)}")
        p = ctypes.c_void_p()
        _check(_c.capfence_key_from_bytes(key_id, raw, ctypes.byref(p)),
               f"bad key {key_id}")
        return cls(p)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Key":
        """Read a key file ("capfence-key v1")."""
        p, err = ctypes.c_void_p(), _err()
        _check(_c.capfence_key_load(os.fsencode(path), ctypes.byref(p), err,
                                    len(err)), err)
        return cls(p)

    @classmethod
    def parse(cls, text: str) -> "Key":
        """A key from the text of a key file."""
        p, err = ctypes.c_void_p(), _err()
        _check(_c.capfence_key_parse(text.encode(), ctypes.byref(p), err,
                                     len(err)), err)
        return cls(p)

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the key file (mode 0600, replaced atomically)."""
        err = _err()
        _check(_c.capfence_key_save(self._ptr, os.fsencode(path), err,
                                    len(err)), err)

    @property
    def id(self) -> int:
        """The key id tokens name."""
        return int(_c.capfence_key_id(self._ptr))

    def __repr__(self) -> str:
        return f"Key(id={self.id})" if self._p else "Key(closed)"


# ---- tokens -------------------------------------------------------------------


def _constraints(cs: Union[None, str, Iterable[str]]) -> Tuple[ctypes.Array,
                                                               int]:
    arr = (_lib.Constraint * _lib.MAX_CONSTRAINTS)()
    if cs is None:
        return arr, 0
    if isinstance(cs, str):
        cs = [c for c in cs.split(",") if c]
    cs = list(cs)
    if len(cs) > _lib.MAX_CONSTRAINTS:
        raise ValueError(f"more than {_lib.MAX_CONSTRAINTS} constraints")
    for i, text in enumerate(cs):
        err = _err()
        if _c.capfence_constraint_parse(text.encode(), ctypes.byref(arr[i]),
                                        err, len(err)):
            raise ValueError(_text(err))
    return arr, len(cs)


def _constraint_text(c: _lib.Constraint) -> str:
    buf = ctypes.create_string_buffer(_lib.PATH_MAX + 2)
    if _c.capfence_constraint_format(ctypes.byref(c), buf, len(buf)) < 0:
        return "?"
    return buf.value.decode()


class Token:
    """A capability token: class, epoch, key id, cap_id, constraints, MAC.

    ``Token.parse("cf1_...")`` decodes the text form strictly;
    ``str(token)`` gives it back; ``Token.from_bytes()`` / ``bytes(token)``
    are the canonical binary encoding. Tokens are immutable.
    """

    __slots__ = ("_s",)

    def __init__(self, _s: _lib.TokenS) -> None:
        self._s = _s

    @classmethod
    def parse(cls, text: str) -> "Token":
        """Decode the text form; ValueError with the decoder's reason."""
        s, err = _lib.TokenS(), _err()
        if _c.capfence_token_from_text(text.encode(), ctypes.byref(s), err,
                                       len(err)):
            raise ValueError(_text(err))
        return cls(s)

    @classmethod
    def from_bytes(cls, raw: bytes) -> "Token":
        """Decode the canonical binary form (MAC included)."""
        s, err = _lib.TokenS(), _err()
        if _c.capfence_token_decode_bin(raw, len(raw), ctypes.byref(s), err,
                                        len(err)):
            raise ValueError(_text(err))
        return cls(s)

    def __str__(self) -> str:
        buf = ctypes.create_string_buffer(_lib.TOKEN_TEXT_MAX + 1)
        n = _c.capfence_token_to_text(ctypes.byref(self._s), buf, len(buf))
        if n < 0:
            raise ValueError("the token is not well formed")
        return buf.value.decode()

    def __bytes__(self) -> bytes:
        buf = ctypes.create_string_buffer(_lib.TOKEN_MAX_LEN)
        n = _c.capfence_token_encode_bin(ctypes.byref(self._s), buf, len(buf))
        if n < 0:
            raise ValueError("the token is not well formed")
        return buf.raw[:n]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and bytes(self) == bytes(other)

    def __hash__(self) -> int:
        return hash(bytes(self))

    def __repr__(self) -> str:
        return (f"Token(class={self.cls!r}, epoch_id={self.epoch_id}, "
                f"cap_id={self.cap_id:#018x}, key_id={self.key_id}, "
                f"constraints={self.constraints!r})")

    @property
    def cls(self) -> str:
        """The capability class ("net:connect", ...)."""
        name = _c.capfence_class_name(self._s.class_id)
        return name.decode() if name else "?"

    @property
    def class_id(self) -> int:
        return int(self._s.class_id)

    @property
    def epoch_id(self) -> int:
        """The policy epoch the token was minted under."""
        return int(self._s.epoch_id)

    @property
    def cap_id(self) -> int:
        return int(self._s.cap_id)

    @property
    def key_id(self) -> int:
        return int(self._s.key_id)

    @property
    def constraints(self) -> List[str]:
        return [_constraint_text(self._s.constraints[i])
                for i in range(self._s.n)]

    def verify(self, key: Key) -> bool:
        """True iff the token names ``key`` and its MAC verifies under it."""
        return _c.capfence_token_verify(key._ptr, ctypes.byref(self._s)) == 0


def mint(key: Key, cls: str, epoch_id: int,
         constraints: Union[None, str, Iterable[str]] = None,
         cap_id: int = 0) -> Token:
    """Mint a token of class ``cls`` under ``epoch_id`` with ``key``.

    ``constraints``: CIDRs with ports for net:* classes ("10.0.0.0/8:443",
    "127.0.0.1"), absolute paths for fs:* ("/srv/data"); a comma-separated
    string or a list; none = unconstrained. ``cap_id`` 0 draws a random one.
    """
    class_id = _c.capfence_class_from_name(cls.encode())
    if class_id < 0:
        raise ValueError(f"unknown class {cls!r} ({', '.join(CLASSES)})")
    arr, n = _constraints(constraints)
    s, err = _lib.TokenS(), _err()
    if _c.capfence_token_mint(key._ptr, class_id, epoch_id, arr, n, cap_id,
                              ctypes.byref(s), err, len(err)):
        raise ValueError(_text(err))
    return Token(s)


# ---- epochs -------------------------------------------------------------------


class Epoch(_Handle):
    """A policy epoch: an id and one rule per class (absent = deny).

    Rules are the CLI's: "net:connect=token:127.0.0.0/8:8080",
    "fs:write=open", "net:bind=deny". ``Epoch.from_classes(42,
    {"fs:write"})`` is the design note's ``PolicyEpoch``: the classes given
    need an (unconstrained) token, the others are denied. The epoch is the
    library's (an opaque handle): nothing here knows how many classes it
    holds.
    """

    __slots__ = ("seccomp_notes",)
    _what = "epoch"

    def _free(self, p: ctypes.c_void_p) -> None:
        _c.capfence_epoch_free(p)

    def __init__(self, epoch_id: int, rules: Iterable[str] = ()) -> None:
        #: after an install with a syscall policy: one line per profile rule
        #: whose refusing action was rewritten to ERRNO(EACCES)
        self.seccomp_notes: List[str] = []
        self._p = None
        self._p = _new_epoch(epoch_id)
        rules = [r.encode() for r in rules]
        arr = (ctypes.c_char_p * max(len(rules), 1))(*rules)
        err = _err()
        if _c.capfence_epoch_parse_rules(self._p, epoch_id, arr, len(rules),
                                         err, len(err)):
            raise ValueError(_text(err))

    @classmethod
    def _own(cls, p: ctypes.c_void_p) -> "Epoch":
        e = cls.__new__(cls)
        e._p = p
        e.seccomp_notes = []
        return e

    @classmethod
    def from_classes(cls, epoch_id: int, allowed: Iterable[str]) -> "Epoch":
        """Each allowed class needs a token, unconstrained; others deny."""
        return cls(epoch_id, [f"{c}=token" for c in sorted(set(allowed))])

    @classmethod
    def parse(cls, text: str, epoch_id: int = 0) -> "Epoch":
        """A rules file's text (one rule a line, '#' comments, optional
        "epoch ID" line; epoch_id 0 means the text must name it)."""
        e, err = cls._own(_new_epoch(0)), _err()
        if _c.capfence_epoch_parse_text(e._ptr, epoch_id, text.encode(), err,
                                        len(err)):
            raise ValueError(_text(err))
        return e

    @property
    def epoch_id(self) -> int:
        return int(_c.capfence_epoch_id(self._ptr))

    @property
    def rules(self) -> List[str]:
        """The canonical rule of every class ("fs:read=deny", ...)."""
        buf = ctypes.create_string_buffer(64 * 1024)
        if _c.capfence_epoch_format(self._ptr, buf, len(buf)) < 0:
            raise ValueError("the epoch does not format")
        return buf.value.decode().splitlines()[1:]

    def __repr__(self) -> str:
        return f"Epoch({self.epoch_id}, {self.rules!r})"


def _new_epoch(epoch_id: int) -> ctypes.c_void_p:
    p = ctypes.c_void_p()
    if _c.capfence_epoch_new(epoch_id, ctypes.byref(p)):
        raise MemoryError("capfence: no memory for an epoch")
    return p


def _keys_array(keys: Union[Key, Sequence[Key]]) -> Tuple[ctypes.Array, int]:
    if isinstance(keys, Key):
        keys = [keys]
    keys = list(keys)
    return (ctypes.c_void_p * max(len(keys), 1))(*[k._ptr for k in keys]), \
        len(keys)


def accept_delegation(secret: Union[Key, Sequence[Key]], token: Token,
                      receiver_epoch: Epoch) -> Token:
    """Validate a delegated capability against the receiver's bound epoch.

    The design note's interface, decided by libcapfence (rows 2-4 of the
    delegation table in docs/errors.md, without a kernel): returns ``token`` unchanged iff it is
    authentic under ``secret`` (a :class:`Key` or several) AND minted under
    ``receiver_epoch`` AND its class and constraints fit that epoch's rule.
    Otherwise raises :class:`Forged`, :class:`EpochMismatch` or
    :class:`ClassDenied` -- all :class:`PolicyEpochMismatch` -- so the
    orchestrator re-mints under ``exc.receiver_epoch``.
    """
    if isinstance(token, str):
        token = Token.parse(token)
    keys, n = _keys_array(secret)
    rid = _c.capfence_decide_delegation(keys, n, ctypes.byref(token._s),
                                        receiver_epoch._ptr)
    if rid == _R_OK:
        return token
    recv = receiver_epoch.epoch_id
    if rid == _R_FORGED:
        msg = (f"capability {token.cap_id:016x} failed MAC verification "
               f"(key {token.key_id})")
    elif rid == _R_EPOCH_MISMATCH:
        msg = (f"capability {token.cap_id:016x} minted under epoch "
               f"{token.epoch_id}, receiver bound to epoch {recv}; re-mint "
               f"required before delegation")
    else:
        msg = (f"capability class {token.cls} not permitted under epoch "
               f"{recv}")
    raise _rejection(rid, msg, cap_id=token.cap_id,
                     token_epoch=token.epoch_id, receiver_epoch=recv)


# ---- the kernel client -----------------------------------------------------------


def _check(ret: int, what: Union[str, ctypes.Array]) -> int:
    if ret < 0:
        msg = what if isinstance(what, str) else _text(what)
        raise CapfenceError(-ret, msg or os.strerror(-ret))
    return ret


@dataclass(frozen=True)
class Decision:
    """The kernel's answer to an accepted request (delegate, revoke, exec):
    ``cap_id``, the receiver's ``epoch_id`` and the module's ``fence``."""
    cap_id: int
    epoch_id: int
    fence: int
    token: Optional[Token] = None   # the token delegated (after a re-mint)


@dataclass(frozen=True)
class Status:
    """The module's state and counters (``capfence status``)."""
    version: str
    abi: int
    attached: bool
    fence: int
    max_epoch: int
    active_epoch: int
    bound: int
    held: int
    delegate_ok: int
    delegate_reject: Dict[str, int]
    exercise_allow: int
    exercise_deny: Dict[str, int]


@dataclass(frozen=True)
class FleetStatus:
    """The module's fleet state (``capfence status``, fleet lines):
    ``rev`` the fleet revision applied, ``state`` "off", "current",
    "stale" or "deny", ``age_ms`` the time since the last confirmation
    (None before the first)."""
    rev: int
    state: str
    stale_ms: int
    deny_ms: int
    age_ms: Optional[int]
    applied: int


@dataclass(frozen=True)
class Sandbox:
    """Audit budgets and the credential limit (``capfence status``), with
    the host's totals (``Client.sandbox_status()``) or one task's sandbox
    (``Client.task_sandbox()``: ``id`` 0 when it has none). Denials without
    an audit record: ``over_budget`` (the sandbox's own), ``over_ceiling``
    (the host's), ``lost`` (the audit subsystem took none)."""
    id: int
    pid: int
    epoch_id: int
    creds: int
    cred_limit: int
    cred_refused: int
    records: int
    over_budget: int
    over_ceiling: int
    lost: int
    reports: int
    window_ms: int
    budget: int
    floor: int
    ceiling: int


def _sandbox(s) -> "Sandbox":
    return Sandbox(s.id, s.pid, s.epoch_id, s.creds, s.cred_limit,
                   s.cred_refused, s.records, s.over_budget, s.over_ceiling,
                   s.lost, s.reports, s.window_ms, s.budget, s.floor,
                   s.ceiling)


@dataclass(frozen=True)
class Capability:
    """A capability a task holds (``Client.task()``)."""
    cap_id: int
    cls: str
    epoch_id: int
    key_id: int
    from_pid: int
    state: str                      # "valid" or a reason name
    constraints: List[str]


@dataclass(frozen=True)
class TaskInfo:
    """A task's binding: ``epoch_id`` 0 = not bound."""
    pid: int
    epoch_id: int
    pending_epoch_id: int
    fence: int
    caps: List[Capability] = field(default_factory=list)


@dataclass(frozen=True)
class Event:
    """One event of the module's "events" group."""
    type: str                       # "delegate_ok", "epoch_activate", ...
    reason: str                     # "ok" or the rejection's reason
    pid: int
    epoch_id: int
    cap_id: int
    fence: int


def _reasons(arr) -> Dict[str, int]:
    out = {}
    for i, v in enumerate(arr):
        if v:
            out[_c.capfence_reason_name(i).decode()] = int(v)
    return out


@dataclass
class Learned:
    """What :meth:`Client.learn` or :meth:`Client.learn_verify` saw of its
    command's sandbox. ``exit`` is the command's exit code (negative: the
    signal that ended it); ``records`` its sandbox's audit records (op=learn
    while learning, its denials when verifying); ``complete`` is False
    when records were lost (``counts`` says where: over the sandbox's
    budget, the host's ceiling, the audit subsystem, the stream)."""
    epoch_id: int
    sandbox_id: int
    exit: int
    records: List[str]
    notes: List[str]
    learned: int
    denied: int
    counts: Dict[str, int]
    complete: bool
    epoch: Optional[Epoch] = None
    profile: Optional[str] = None
    syscalls: int = 0


class Events(_Handle):
    """A subscription to the module's events (``Client.events()``):
    iterate it, or call :meth:`next` with a timeout. ``fileno()`` is
    readable when an event waits (``select``/``poll``)."""

    __slots__ = ("_ev",)
    _what = "subscription"

    def _free(self, p: ctypes.c_void_p) -> None:
        _c.capfence_events_close(p)

    def __init__(self) -> None:
        p, err = ctypes.c_void_p(), _err()
        _check(_c.capfence_events_open(ctypes.byref(p), err, len(err)), err)
        self._p = p
        self._ev = _lib.EventInfo()

    def next(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event; None after ``timeout`` seconds (None: wait)."""
        ptr = self._ptr
        ms = -1 if timeout is None else int(timeout * 1000)
        while True:
            r = _c.capfence_events_next(ptr, ctypes.byref(self._ev), ms)
            if r == -_errno.ETIMEDOUT:
                return None
            if r == -_errno.EINTR:
                continue
            _check(r, "events")
            e = self._ev
            return Event(_c.capfence_event_name(e.type).decode(),
                         _c.capfence_reason_name(e.reason).decode(),
                         int(e.pid), int(e.epoch_id), int(e.cap_id),
                         int(e.fence))

    def __iter__(self) -> Iterator[Event]:
        while True:
            ev = self.next()
            if ev is not None:
                yield ev

    def fileno(self) -> int:
        return _c.capfence_events_fd(self._ptr)


def _tokens(tokens: Iterable[Union[Token, str]]) -> Tuple[ctypes.Array, int]:
    toks = [Token.parse(t) if isinstance(t, str) else t for t in tokens]
    if len(toks) > _lib.MAX_TOKENS:
        raise ValueError(f"more than {_lib.MAX_TOKENS} tokens")
    arr = (_lib.TokenS * max(len(toks), 1))()
    for i, t in enumerate(toks):
        arr[i] = t._s
    return arr, len(toks)


class Client(_Handle):
    """A handle on capfence.ko (generic netlink). Needs CAP_MAC_ADMIN for
    the changing requests. Safe to share between threads; use ``with`` or
    :meth:`close`. Raises :class:`CapfenceError` (errno ENOENT) when the
    module is not loaded."""

    __slots__ = ("_tls",)
    _what = "client"

    def _free(self, p: ctypes.c_void_p) -> None:
        _c.capfence_client_close(p)

    def __init__(self) -> None:
        p, err = ctypes.c_void_p(), _err()
        _check(_c.capfence_client_open(ctypes.byref(p), err, len(err)), err)
        self._p = p
        # one result buffer per thread: the handle is shared, this is not
        self._tls = threading.local()

    @property
    def _r(self) -> _lib.Result:
        r = getattr(self._tls, "r", None)
        if r is None:
            r = self._tls.r = _lib.Result()
        return r

    # -- state

    def status(self) -> Status:
        """The module's version, fence, epochs and counters."""
        s, err = _lib.StatusS(), _err()
        _check(_c.capfence_client_status(self._ptr, ctypes.byref(s), err,
                                         len(err)), err)
        return Status(s.version.decode(), s.abi, bool(s.attached), s.fence,
                      s.max_epoch, s.active_epoch, s.bound, s.held,
                      s.delegate_ok, _reasons(s.delegate_reject),
                      s.exercise_allow, _reasons(s.exercise_deny))

    def fleet_status(self) -> FleetStatus:
        """The module's fleet revision, state, bounds and confirmation age."""
        s, err = _lib.FleetStatusS(), _err()
        _check(_c.capfence_client_fleet_status(self._ptr, ctypes.byref(s),
                                               err, len(err)), err)
        return FleetStatus(s.rev, _c.capfence_fleet_state_name(s.state).decode(),
                           s.stale_ms, s.deny_ms,
                           s.age_ms if s.confirmed else None, s.applied)

    def sandbox_status(self) -> Sandbox:
        """The audit budgets, the credential limit and the host's totals."""
        s, err = _lib.SandboxInfoS(), _err()
        _check(_c.capfence_client_sandbox_status(self._ptr, ctypes.byref(s),
                                                 err, len(err)), err)
        return _sandbox(s)

    def task_sandbox(self, pid: int) -> Sandbox:
        """Task ``pid``'s sandbox: its id (0: none), credentials and audit
        counts."""
        s, err = _lib.SandboxInfoS(), _err()
        _check(_c.capfence_client_task_sandbox(self._ptr, pid, ctypes.byref(s),
                                               err, len(err)), err)
        return _sandbox(s)

    def install_key(self, key: Key) -> None:
        """Install ``key`` in the module (tokens naming its id verify)."""
        err = _err()
        _check(_c.capfence_client_key_install_opts(self._ptr, key._ptr, None,
                                                   err, len(err)), err)

    def remove_key(self, key_id: int) -> None:
        err = _err()
        _check(_c.capfence_client_key_remove_opts(self._ptr, key_id, None,
                                                  err, len(err)), err)

    def install_epoch(self, epoch: Union[Epoch, int],
                      rules: Optional[Iterable[str]] = None,
                      seccomp: Optional[Union[str, bytes]] = None, *,
                      seccomp_caps: Optional[str] = None,
                      seccomp_kernel: Optional[str] = None,
                      no_new_filters: bool = False) -> Epoch:
        """Install an epoch: an :class:`Epoch`, or an id and its rules.
        Ids only grow (ERANGE otherwise). Returns the epoch installed.

        ``seccomp``: the epoch's syscall policy (JSON text): an OCI
        ``linux.seccomp`` profile, or a container engine's profile as
        shipped (Docker's, Podman's), compiled with libseccomp. Refusals
        become ERRNO(EACCES), logged; ERRNO(ENOSYS) is kept. An engine's
        ``includes``/``excludes`` are resolved for ``seccomp_caps`` (comma-
        separated ``CAP_`` names; None: the engines' default set) and
        ``seccomp_kernel`` ("MAJOR.MINOR"; None: the running kernel).
        ``no_new_filters``: bound tasks may not stack filters of their own
        (by default they may; the module checks at every exec that the
        epoch's program is still in the chain). A malformed profile, or one
        that denies a system call a granted class needs, raises
        :class:`CapfenceError` (EINVAL, one line) and installs nothing.
        The rewritten and kept rules are in :attr:`Epoch.seccomp_notes`
        afterwards."""
        if not isinstance(epoch, Epoch):
            epoch = Epoch(epoch, rules or ())
        elif rules is not None:
            raise TypeError("rules are given with an epoch id, not an Epoch")
        err = _err()
        if seccomp is None:
            if seccomp_caps is not None or seccomp_kernel is not None \
                    or no_new_filters:
                raise TypeError("seccomp_caps, seccomp_kernel and "
                                "no_new_filters need a seccomp profile")
            _check(_c.capfence_client_epoch_install_opts(self._ptr, epoch._ptr,
                                                         None, err, len(err)),
                   err)
            return epoch
        text = seccomp.encode() if isinstance(seccomp, str) else bytes(seccomp)
        opts = _lib.SeccompOpts(ctypes.sizeof(_lib.SeccompOpts),
                              seccomp_caps.encode() if seccomp_caps else None,
                              seccomp_kernel.encode() if seccomp_kernel
                              else None, bool(no_new_filters))
        sc = ctypes.c_void_p()
        _check(_c.capfence_seccomp_compile_opts(text, len(text), epoch._ptr,
                                                ctypes.byref(opts),
                                                ctypes.byref(sc), err,
                                                len(err)), err)
        try:
            notes = [_c.capfence_seccomp_note(sc, i).decode()
                     for i in range(_c.capfence_seccomp_notes(sc))]
            co = _lib.opts(_lib.ChangeOpts, seccomp=sc)
            _check(_c.capfence_client_epoch_install_opts(
                self._ptr, epoch._ptr, ctypes.byref(co), err, len(err)), err)
        finally:
            _c.capfence_seccomp_free(sc)
        epoch.seccomp_notes = notes
        return epoch

    def epoch_seccomp(self, epoch_id: int) -> Optional[Tuple[str, int]]:
        """The syscall policy the module keeps with an epoch: (SHA-256 of
        its seccomp program in hex, instructions), or None when it has
        none. ENOENT when the epoch is not installed."""
        info, err = _lib.SeccompInfo(), _err()
        _check(_c.capfence_client_epoch_seccomp(self._ptr, epoch_id,
                                                ctypes.byref(info), err,
                                                len(err)), err)
        try:
            if not info.insns:
                return None
            return bytes(info.digest).hex(), int(info.insns)
        finally:
            _c.capfence_free(info.prog)

    def activate_epoch(self, epoch_id: int) -> None:
        """Activate an installed epoch: classes it narrows are fenced."""
        err = _err()
        _check(_c.capfence_client_epoch_activate_opts(self._ptr, epoch_id,
                                                      None, err, len(err)),
               err)

    def retire_epoch(self, epoch_id: int) -> None:
        """Retire an installed epoch nothing refers to (EBUSY otherwise)."""
        err = _err()
        _check(_c.capfence_client_epoch_retire_opts(self._ptr, epoch_id,
                                                    None, err, len(err)), err)

    def epoch(self, epoch_id: int) -> Epoch:
        """An installed epoch as the module holds it (ENOENT if absent)."""
        info, err = ctypes.c_void_p(), _err()
        _check(_c.capfence_client_epoch_info(self._ptr, epoch_id,
                                             ctypes.byref(info), err,
                                             len(err)), err)
        try:
            p = ctypes.c_void_p()
            if _c.capfence_epoch_dup(_c.capfence_epoch_info_epoch(info),
                                     ctypes.byref(p)):
                raise MemoryError("capfence: no memory for an epoch")
            return Epoch._own(p)
        finally:
            _c.capfence_epoch_info_free(info)

    def task(self, pid: int) -> TaskInfo:
        """A task's binding and held capabilities (ESRCH if no task)."""
        ti, err = _lib.TaskInfo(), _err()
        _check(_c.capfence_client_task_get(self._ptr, pid, ctypes.byref(ti),
                                           err, len(err)), err)
        try:
            caps = []
            for i in range(ti.n):
                c = ti.caps[i]
                name = _c.capfence_class_name(c.class_id)
                caps.append(Capability(
                    int(c.cap_id), name.decode() if name else "?",
                    int(c.epoch_id), int(c.key_id), int(c.from_pid),
                    "valid" if not c.state
                    else _c.capfence_reason_name(c.state).decode(),
                    [_constraint_text(c.constraints[j])
                     for j in range(c.n)]))
            return TaskInfo(int(ti.pid), int(ti.epoch_id),
                            int(ti.pending_epoch_id), int(ti.fence), caps)
        finally:
            _c.capfence_task_release(ctypes.byref(ti))

    # -- decisions

    def _decided(self, ret: int, r: _lib.Result, token_epoch: Optional[int],
                 token: Optional[Token] = None) -> Decision:
        if ret == 0:
            return Decision(int(r.cap_id), int(r.epoch_id), int(r.fence),
                            token)
        msg = r.message.decode(errors="replace")
        if r.reason > 0:
            raise _rejection(
                r.reason,
                msg or _c.capfence_reason_name(r.reason).decode(),
                cap_id=int(r.cap_id), token_epoch=token_epoch,
                receiver_epoch=int(r.epoch_id) or None, fence=int(r.fence))
        raise CapfenceError(-ret, msg or os.strerror(-ret))

    def delegate(self, token: Union[Token, str], pid: int, from_pid: int = 0,
                 dry_run: bool = False) -> Decision:
        """Delegate ``token`` to task ``pid`` (``from_pid``: the delegating
        task, 0 = the orchestrator). The kernel decides now: a rejection
        raises the :class:`PolicyEpochMismatch` subclass of its reason;
        ``dry_run`` only checks."""
        if isinstance(token, str):
            token = Token.parse(token)
        r = self._r
        o = _lib.opts(_lib.DelegateOpts, from_pid=from_pid,
                      flags=_lib.DELEGATE_DRY_RUN if dry_run else 0)
        ret = _c.capfence_client_delegate_opts(
            self._ptr, ctypes.byref(token._s), pid, ctypes.byref(o),
            ctypes.byref(r))
        return self._decided(ret, r, token.epoch_id, token)

    def delegate_remint(self, key: Key, token: Union[Token, str], pid: int,
                        from_pid: int = 0) -> Decision:
        """:meth:`delegate`, and on :class:`EpochMismatch` re-mint under
        the receiver's epoch with ``key`` (same class and constraints, new
        cap_id) and delegate that: the design note's recovery in one call.
        ``Decision.token`` is the token the receiver holds."""
        if isinstance(token, str):
            token = Token.parse(token)
        first, r, nt = _lib.Result(), self._r, _lib.TokenS()
        o = _lib.opts(_lib.DelegateOpts, from_pid=from_pid, remint=key._ptr,
                      first=ctypes.pointer(first), reminted=ctypes.pointer(nt))
        ret = _c.capfence_client_delegate_opts(
            self._ptr, ctypes.byref(token._s), pid, ctypes.byref(o),
            ctypes.byref(r))
        used = Token(nt) if nt.cap_id else token
        return self._decided(ret, r, used.epoch_id, used)

    def revoke(self, cap_id: int) -> int:
        """Revoke ``cap_id`` everywhere; returns the new fence."""
        r = self._r
        ret = _c.capfence_client_revoke_opts(self._ptr, cap_id, None,
                                             ctypes.byref(r))
        return self._decided(ret, r, None).fence

    def exec_set(self, epoch_id: int,
                 tokens: Iterable[Union[Token, str]] = ()) -> None:
        """Bind *this* process's next execve() to ``epoch_id`` holding
        ``tokens`` (the caller must be unbound). When the epoch has a
        syscall policy, its seccomp program is loaded now (no_new_privs,
        without SECCOMP_FILTER_FLAG_LOG), as ``capfence exec`` does: the kernel
        binds the execve only under it, and this process runs under it
        until then."""
        arr, n = _tokens(tokens)
        r = self._r
        o = _lib.opts(_lib.BindOpts, tokens=_lib.token_ptr(arr), n=n)
        ret = _c.capfence_client_exec_set_opts(self._ptr, epoch_id,
                                               ctypes.byref(o), ctypes.byref(r))
        self._decided(ret, r, None)
        info, err = _lib.SeccompInfo(), _err()
        _check(_c.capfence_client_epoch_seccomp(self._ptr, epoch_id,
                                                ctypes.byref(info), err,
                                                len(err)), err)
        try:
            if info.insns:
                _check(_c.capfence_seccomp_apply(info.prog, info.len),
                       "cannot load the epoch's seccomp filter")
        finally:
            _c.capfence_free(info.prog)

    def spawn_bound(self, epoch_id: int, argv: Sequence[str],
                    tokens: Iterable[Union[Token, str]] = (),
                    env: Optional[Dict[str, str]] = None) -> int:
        """Run ``argv`` as a child bound to ``epoch_id`` holding ``tokens``;
        returns its pid once it has exec'd (reap it with ``os.waitpid``).
        A refused binding raises before anything runs."""
        if not argv:
            raise ValueError("argv is empty")
        arr, n = _tokens(tokens)
        args = [os.fsencode(a) for a in argv]
        cargv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
        cenv = None
        if env is not None:
            envs = [os.fsencode(f"{k}={v}") for k, v in env.items()]
            cenv = (ctypes.c_char_p * (len(envs) + 1))(*envs, None)
        pid, r = ctypes.c_int(-1), _lib.Result()
        o = _lib.opts(_lib.BindOpts, tokens=_lib.token_ptr(arr), n=n,
                      envp=ctypes.cast(cenv, ctypes.POINTER(ctypes.c_char_p)))
        ret = _c.capfence_client_spawn_bound_opts(self._ptr, epoch_id,
                                                  args[0], cargv,
                                                  ctypes.byref(o),
                                                  ctypes.byref(pid),
                                                  ctypes.byref(r))
        self._decided(ret, r, None)
        return pid.value

    def _learned(self, ret: int, p: ctypes.c_void_p, err: ctypes.Array,
                 suggest: bool) -> "Learned":
        _check(ret, err)
        try:
            st = _lib.LearnStats()
            _c.capfence_client_learn_stats(p, ctypes.byref(st))
            epoch = profile = None
            if suggest:
                epoch = Epoch._own(_new_epoch(1))
                e2 = _err()
                _check(_c.capfence_client_learn_epoch(p, 1, epoch._ptr,
                                                      e2, len(e2)), e2)
                n = _c.capfence_client_learn_profile(p, None, 0)
                if n >= 0:
                    buf = ctypes.create_string_buffer(n + 1)
                    _c.capfence_client_learn_profile(p, buf, n + 1)
                    profile = buf.value.decode()
            status = int(st.status)
            return Learned(
                int(st.epoch_id), int(st.sandbox_id),
                os.waitstatus_to_exitcode(status) if status >= 0 else status,
                [_c.capfence_client_learn_record(p, i).decode(errors="replace")
                 for i in range(_c.capfence_client_learn_records(p))],
                [_c.capfence_client_learn_note(p, i).decode(errors="replace")
                 for i in range(_c.capfence_client_learn_notes(p))],
                int(st.learned), int(st.denied),
                {k: int(getattr(st, k)) for k in (
                    "records", "received", "missing", "overflows",
                    "over_budget", "over_ceiling", "lost")},
                not (st.missing or st.over_budget or st.over_ceiling
                     or st.lost or st.overflows or st.counts_unknown),
                epoch, profile, int(_c.capfence_client_learn_syscalls(p)))
        finally:
            _c.capfence_client_learn_free(p)

    def learn(self, argv: Sequence[str], *, open_classes: Iterable[str] = (),
              syscalls: bool = False, epoch_id: int = 0, wait_ms: int = 0,
              prefix4: int = 0, prefix6: int = 0, any_port: bool = False,
              path_depth: int = 0) -> "Learned":
        """Run ``argv`` bound to a fresh complain epoch (every class ``log``
        but ``open_classes``) and learn from its sandbox's records (needs
        CAP_MAC_ADMIN and CAP_AUDIT_READ). :attr:`Learned.epoch` is the
        narrowest epoch that admits what it did (id 1: give it its own
        with ``Epoch.parse(str, id)`` or install it under a new id);
        with ``syscalls`` (needs CAP_SYS_ADMIN), :attr:`Learned.profile` is
        the OCI seccomp profile of the system calls it made, every other
        call ENOSYS. Coarser suggestions: peers as their ``prefix4`` /
        ``prefix6`` network, ``any_port``, paths cut to their first
        ``path_depth`` names (0: the narrowest). The complain epoch is
        retired afterwards."""
        if not argv:
            raise ValueError("argv is empty")
        mask = 0
        for name in open_classes:
            if name not in CLASSES:
                raise ValueError(f"unknown class {name!r} "
                                 f"({', '.join(CLASSES)})")
            mask |= 1 << (CLASSES.index(name) + 1)
        if not (0 <= prefix4 <= 32 and 0 <= prefix6 <= 128
                and 0 <= path_depth <= 255):
            raise ValueError("prefix4 0-32, prefix6 0-128, path_depth 0-255")
        flags = (_lib.LEARN_SYSCALLS if syscalls else 0) | \
            (_lib.LEARN_ANY_PORT if any_port else 0)
        opts = _lib.LearnOpts(ctypes.sizeof(_lib.LearnOpts), mask, epoch_id,
                              wait_ms, 0, flags, prefix4, prefix6, path_depth)
        args = [os.fsencode(a) for a in argv]
        cargv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
        p, err = ctypes.c_void_p(), _err()
        ret = _c.capfence_client_learn_run(self._ptr, ctypes.byref(opts),
                                           args[0], cargv, ctypes.byref(p),
                                           err, len(err))
        return self._learned(ret, p, err, True)

    def learn_verify(self, epoch_id: int, argv: Sequence[str],
                     tokens: Iterable[Union[Token, str]] = (), *,
                     wait_ms: int = 0) -> "Learned":
        """Run ``argv`` bound to the installed ``epoch_id`` holding
        ``tokens``; :attr:`Learned.records` are its denials, each with its
        audit text (the proof by rerun of a learned epoch)."""
        if not argv:
            raise ValueError("argv is empty")
        arr, n = _tokens(tokens)
        args = [os.fsencode(a) for a in argv]
        cargv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
        p, err = ctypes.c_void_p(), _err()
        o = _lib.opts(_lib.BindOpts, tokens=_lib.token_ptr(arr), n=n,
                      wait_ms=wait_ms)
        ret = _c.capfence_client_learn_verify_opts(self._ptr, epoch_id,
                                                   args[0], cargv,
                                                   ctypes.byref(o),
                                                   ctypes.byref(p), err,
                                                   len(err))
        return self._learned(ret, p, err, False)

    def events(self) -> Events:
        """Subscribe to the module's events (a new socket)."""
        return Events()
