# SPDX-License-Identifier: LGPL-2.1-or-later
"""ctypes bindings of libcapfence.so.2 (include/capfence/capfence.h with
CAPFENCE_API 2).

Private to the package: the prototypes of every function the package calls
are declared here. Epochs and installed epochs are the library's handles,
read through its accessors, so nothing here is sized by a class count or a
slot count. The structures left mirror the header field by field: the
token's (its wire format's limits), the results and counters the library
fills, and the size-prefixed options structs; each one's size is checked
against the library's at import, so a mismatch fails loudly instead of
corrupting memory.
"""
from __future__ import annotations

import ctypes
import os
from ctypes import (POINTER, Structure, Union, c_bool, c_char, c_char_p,
                    c_int, c_size_t, c_uint, c_uint8, c_uint16, c_uint32,
                    c_uint64, c_void_p)

# uapi constants (include/uapi/linux/capfence.h)
PATH_MAX = 255
MAX_CONSTRAINTS = 8
MAX_TOKENS = 16
MAC_LEN = 32
KEY_LEN = 32
TOKEN_MAX_LEN = 24 + 1 + MAX_CONSTRAINTS * (1 + 1 + PATH_MAX) + MAC_LEN
TOKEN_TEXT_MAX = 4 + (TOKEN_MAX_LEN * 4 + 2) // 3
ERR_MAX = 256
STATUS_REASONS = 32
DELEGATE_DRY_RUN = 0x1
SONAME = "libcapfence.so.2"


def _load() -> ctypes.CDLL:
    """Load libcapfence.so.2: $CAPFENCE_LIBRARY, else the dynamic loader's
    search path (ldconfig's cache, LD_LIBRARY_PATH)."""
    path = os.environ.get("CAPFENCE_LIBRARY")
    names = [path] if path else [SONAME]
    last: OSError | None = None
    for name in names:
        try:
            return ctypes.CDLL(name, use_errno=True)
        except OSError as exc:
            last = exc
    raise ImportError(f"capfence: cannot load {names[0]} ({last}); install "
                      "libcapfence or set CAPFENCE_LIBRARY to its path")


lib = _load()
try:
    # the 2 interface: epochs are handles (capfence_epoch_new)
    lib.capfence_epoch_new.restype = c_int
except AttributeError as _exc:  # pragma: no cover - libcapfence.so.1
    raise ImportError("capfence: the libcapfence loaded is not the 2 "
                      "interface (no capfence_epoch_new()); install "
                      "libcapfence.so.2") from _exc
lib.capfence_class_count.restype = c_uint
lib.capfence_struct_size.restype = c_size_t
lib.capfence_struct_size.argtypes = [c_char_p]
CLASS_MAX = lib.capfence_class_count()      # class ids 1..CLASS_MAX


class NetRange(Structure):
    _fields_ = [("family", c_uint8), ("prefix_len", c_uint8),
                ("port_min", c_uint16), ("port_max", c_uint16),
                ("reserved", c_uint16), ("addr", c_uint8 * 16)]


class _Path(Structure):
    _fields_ = [("len", c_uint8), ("s", c_char * (PATH_MAX + 1))]


class _CU(Union):
    _fields_ = [("net", NetRange), ("path", _Path)]


class Constraint(Structure):
    _anonymous_ = ("u",)
    _fields_ = [("kind", c_uint8), ("u", _CU)]


class TokenS(Structure):
    _fields_ = [("version", c_uint8), ("class_id", c_uint8),
                ("flags", c_uint16), ("key_id", c_uint32),
                ("cap_id", c_uint64), ("epoch_id", c_uint64),
                ("n", c_uint8), ("constraints", Constraint * MAX_CONSTRAINTS),
                ("mac", c_uint8 * MAC_LEN)]


class Result(Structure):
    _fields_ = [("err", c_int), ("reason", c_int), ("cap_id", c_uint64),
                ("epoch_id", c_uint64), ("fence", c_uint64),
                ("message", c_char * ERR_MAX)]


class EventInfo(Structure):
    _fields_ = [("type", c_int), ("reason", c_int), ("pid", c_uint32),
                ("epoch_id", c_uint64), ("cap_id", c_uint64),
                ("fence", c_uint64)]


class StatusS(Structure):
    _fields_ = [("version", c_char * 32), ("abi", c_uint32),
                ("attached", c_bool), ("fence", c_uint64),
                ("max_epoch", c_uint64), ("active_epoch", c_uint64),
                ("bound", c_uint64), ("held", c_uint64),
                ("delegate_ok", c_uint64), ("exercise_allow", c_uint64),
                ("delegate_reject", c_uint64 * STATUS_REASONS),
                ("exercise_deny", c_uint64 * STATUS_REASONS),
                ("cred_bytes", c_uint64), ("cap_bytes", c_uint64)]


class FleetStatusS(Structure):
    _fields_ = [("supported", c_bool), ("rev", c_uint64),
                ("stale_ms", c_uint32), ("deny_ms", c_uint32),
                ("confirmed", c_bool), ("age_ms", c_uint32),
                ("state", c_int), ("applied", c_uint64)]


class SandboxInfoS(Structure):
    _fields_ = [("supported", c_bool), ("id", c_uint64), ("pid", c_uint32),
                ("epoch_id", c_uint64), ("creds", c_uint64),
                ("cred_limit", c_uint32), ("cred_refused", c_uint64),
                ("records", c_uint64), ("over_budget", c_uint64),
                ("over_ceiling", c_uint64), ("lost", c_uint64),
                ("reports", c_uint64), ("window_ms", c_uint32),
                ("budget", c_uint32), ("floor", c_uint32),
                ("ceiling", c_uint32)]


class CapInfo(Structure):
    _fields_ = [("cap_id", c_uint64), ("epoch_id", c_uint64),
                ("key_id", c_uint32), ("from_pid", c_uint32),
                ("state", c_uint32), ("class_id", c_int), ("n", c_size_t),
                ("constraints", Constraint * MAX_CONSTRAINTS)]


class TaskInfo(Structure):
    _fields_ = [("pid", c_uint32), ("epoch_id", c_uint64),
                ("pending_epoch_id", c_uint64), ("fence", c_uint64),
                ("n", c_size_t), ("caps", POINTER(CapInfo))]


class ChangeOpts(Structure):
    """struct capfence_change_opts"""
    _fields_ = [("sz", c_size_t), ("fleet_rev", c_uint64),
                ("seccomp", c_void_p)]


class DelegateOpts(Structure):
    """struct capfence_delegate_opts"""
    _fields_ = [("sz", c_size_t), ("from_pid", c_uint32), ("flags", c_uint),
                ("remint", c_void_p), ("first", POINTER(Result)),
                ("reminted", POINTER(TokenS))]


class BindOpts(Structure):
    """struct capfence_bind_opts"""
    _fields_ = [("sz", c_size_t), ("tokens", POINTER(TokenS)),
                ("n", c_size_t), ("envp", POINTER(c_char_p)),
                ("wait_ms", c_uint)]


def opts(t: type, **fields) -> Structure:
    """Options of structure t, sz set (CAPFENCE_OPTS)."""
    return t(sz=ctypes.sizeof(t), **fields)


def token_ptr(arr: ctypes.Array) -> "ctypes._Pointer":
    """An array of TokenS as the pointer an options field holds."""
    return ctypes.cast(arr, POINTER(TokenS))


class SeccompOpts(Structure):
    """struct capfence_seccomp_opts"""
    _fields_ = [("sz", c_size_t), ("caps", c_char_p), ("kernel", c_char_p),
                ("no_new_filters", c_bool)]


ERRBUF = c_char * ERR_MAX
_pp = POINTER(c_void_p)


def _proto(name: str, restype, *argtypes) -> None:
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_K = c_void_p          # struct capfence_key *
_C = c_void_p          # struct capfence_client *
_E = c_void_p          # struct capfence_events *
_T = POINTER(TokenS)
_R = POINTER(Result)
_EP = c_void_p         # struct capfence_epoch *
_EI = c_void_p         # struct capfence_epoch_info *

_proto("capfence_version", c_char_p)
_proto("capfence_version_number", c_uint)
_proto("capfence_class_from_name", c_int, c_char_p)
_proto("capfence_class_name", c_char_p, c_int)
_proto("capfence_reason_name", c_char_p, c_int)
_proto("capfence_reason_errno", c_int, c_int)
_proto("capfence_event_name", c_char_p, c_int)
_proto("capfence_constraint_parse", c_int, c_char_p, POINTER(Constraint),
       c_char_p, c_size_t)
_proto("capfence_constraint_format", c_int, POINTER(Constraint), c_char_p,
       c_size_t)
_proto("capfence_epoch_new", c_int, c_uint64, _pp)
_proto("capfence_epoch_free", None, _EP)
_proto("capfence_epoch_dup", c_int, _EP, _pp)
_proto("capfence_epoch_id", c_uint64, _EP)
_proto("capfence_epoch_parse_rules", c_int, _EP, c_uint64,
       POINTER(c_char_p), c_size_t, c_char_p, c_size_t)
_proto("capfence_epoch_parse_text", c_int, _EP, c_uint64,
       c_char_p, c_char_p, c_size_t)
_proto("capfence_epoch_format", c_int, _EP, c_char_p, c_size_t)
_proto("capfence_key_generate", c_int, c_uint32, _pp)
_proto("capfence_key_from_bytes", c_int, c_uint32, c_char_p, _pp)
_proto("capfence_key_id", c_uint32, _K)
_proto("capfence_key_bytes", None, _K, c_char_p)
_proto("capfence_key_format", c_int, _K, c_char_p, c_size_t)
_proto("capfence_key_save", c_int, _K, c_char_p, c_char_p, c_size_t)
_proto("capfence_key_load", c_int, c_char_p, _pp, c_char_p, c_size_t)
_proto("capfence_key_parse", c_int, c_char_p, _pp, c_char_p, c_size_t)
_proto("capfence_key_free", None, _K)
_proto("capfence_token_to_text", c_int, _T, c_char_p, c_size_t)
_proto("capfence_token_from_text", c_int, c_char_p, _T, c_char_p, c_size_t)
_proto("capfence_token_encode_bin", c_int, _T, c_char_p, c_size_t)
_proto("capfence_token_decode_bin", c_int, c_char_p, c_size_t, _T, c_char_p,
       c_size_t)
_proto("capfence_token_mint", c_int, _K, c_int, c_uint64,
       POINTER(Constraint), c_size_t, c_uint64, _T, c_char_p, c_size_t)
_proto("capfence_token_verify", c_int, _K, _T)
_proto("capfence_decide_delegation", c_int, POINTER(c_void_p), c_size_t, _T,
       _EP)
_proto("capfence_client_open", c_int, _pp, c_char_p, c_size_t)
_proto("capfence_client_close", None, _C)
_proto("capfence_client_status", c_int, _C, POINTER(StatusS), c_char_p,
       c_size_t)
_proto("capfence_client_fleet_status", c_int, _C, POINTER(FleetStatusS),
       c_char_p, c_size_t)
_proto("capfence_fleet_state_name", c_char_p, c_int)
_proto("capfence_client_sandbox_status", c_int, _C, POINTER(SandboxInfoS),
       c_char_p, c_size_t)
_proto("capfence_client_task_sandbox", c_int, _C, c_uint32,
       POINTER(SandboxInfoS), c_char_p, c_size_t)
_CO = POINTER(ChangeOpts)
_proto("capfence_client_key_install_opts", c_int, _C, _K, _CO, c_char_p,
       c_size_t)
_proto("capfence_client_key_remove_opts", c_int, _C, c_uint32, _CO, c_char_p,
       c_size_t)
_proto("capfence_client_epoch_install_opts", c_int, _C, _EP, _CO, c_char_p,
       c_size_t)
_proto("capfence_client_epoch_activate_opts", c_int, _C, c_uint64, _CO,
       c_char_p, c_size_t)
_proto("capfence_client_epoch_retire_opts", c_int, _C, c_uint64, _CO,
       c_char_p, c_size_t)
_proto("capfence_client_revoke_opts", c_int, _C, c_uint64, _CO, _R)
_proto("capfence_client_epoch_info", c_int, _C, c_uint64, _pp, c_char_p,
       c_size_t)
_proto("capfence_epoch_info_epoch", _EP, _EI)
_proto("capfence_epoch_info_free", None, _EI)


class SeccompInfo(Structure):
    """struct capfence_seccomp_info"""
    _fields_ = [("insns", c_uint32), ("digest", c_uint8 * 32),
                ("prog", c_void_p), ("len", c_size_t)]


_proto("capfence_seccomp_compile_opts", c_int, c_char_p, c_size_t,
       _EP, POINTER(SeccompOpts), _pp, c_char_p, c_size_t)
_proto("capfence_seccomp_notes", c_size_t, c_void_p)
_proto("capfence_seccomp_note", c_char_p, c_void_p, c_size_t)
_proto("capfence_seccomp_digest", None, c_void_p, c_uint8 * 32)
_proto("capfence_seccomp_free", None, c_void_p)
_proto("capfence_free", None, c_void_p)
_proto("capfence_seccomp_apply", c_int, c_void_p, c_size_t)
_proto("capfence_client_epoch_seccomp", c_int, _C, c_uint64,
       POINTER(SeccompInfo), c_char_p, c_size_t)
_proto("capfence_client_delegate_opts", c_int, _C, _T, c_uint32,
       POINTER(DelegateOpts), _R)
_BO = POINTER(BindOpts)
_proto("capfence_client_exec_set_opts", c_int, _C, c_uint64, _BO, _R)
_proto("capfence_client_spawn_bound_opts", c_int, _C, c_uint64, c_char_p,
       POINTER(c_char_p), _BO, POINTER(c_int), _R)
_proto("capfence_client_task_get", c_int, _C, c_uint32, POINTER(TaskInfo),
       c_char_p, c_size_t)
_proto("capfence_task_release", None, POINTER(TaskInfo))
_proto("capfence_events_open", c_int, _pp, c_char_p, c_size_t)
_proto("capfence_events_close", None, _E)
_proto("capfence_events_fd", c_int, _E)
_proto("capfence_events_next", c_int, _E, POINTER(EventInfo), c_int)


class LearnStats(Structure):
    """struct capfence_learn_stats"""
    _fields_ = [("epoch_id", c_uint64), ("sandbox_id", c_uint64),
                ("status", c_int), ("records", c_uint64),
                ("received", c_uint64), ("missing", c_uint64),
                ("overflows", c_uint64), ("over_budget", c_uint64),
                ("over_ceiling", c_uint64), ("lost", c_uint64),
                ("learned", c_uint64), ("denied", c_uint64),
                ("counts_unknown", c_bool)]


class LearnOpts(Structure):
    """struct capfence_learn_opts"""
    _fields_ = [("sz", c_size_t), ("open_classes", c_uint32),
                ("epoch_id", c_uint64), ("wait_ms", c_uint),
                ("reserved", c_uint32), ("flags", c_uint32), ("prefix4", c_uint8),
                ("prefix6", c_uint8), ("path_depth", c_uint8)]


LEARN_SYSCALLS = 0x1
LEARN_ANY_PORT = 0x2
_L = c_void_p          # struct capfence_learn *
_proto("capfence_client_learn_run", c_int, _C, POINTER(LearnOpts), c_char_p,
       POINTER(c_char_p), _pp, c_char_p, c_size_t)
_proto("capfence_client_learn_verify_opts", c_int, _C, c_uint64, c_char_p,
       POINTER(c_char_p), _BO, _pp, c_char_p, c_size_t)
_proto("capfence_client_learn_epoch", c_int, _L, c_uint64, _EP,
       c_char_p, c_size_t)
_proto("capfence_client_learn_stats", None, _L, POINTER(LearnStats))
_proto("capfence_client_learn_records", c_size_t, _L)
_proto("capfence_client_learn_record", c_char_p, _L, c_size_t)
_proto("capfence_client_learn_notes", c_size_t, _L)
_proto("capfence_client_learn_note", c_char_p, _L, c_size_t)
_proto("capfence_client_learn_profile", c_int, _L, c_char_p, c_size_t)
_proto("capfence_client_learn_syscalls", c_size_t, _L)
_proto("capfence_client_learn_free", None, _L)


# each structure mirrors the C struct of this name; its size is the
# library's (capfence_struct_size()), checked at import
_STRUCTS = {NetRange: "capfence_net_range", Constraint: "capfence_constraint",
            TokenS: "capfence_token", Result: "capfence_result",
            EventInfo: "capfence_event_info", StatusS: "capfence_status",
            TaskInfo: "capfence_task_info", CapInfo: "capfence_cap_info",
            FleetStatusS: "capfence_fleet_status",
            SandboxInfoS: "capfence_sandbox_info",
            SeccompOpts: "capfence_seccomp_opts",
            ChangeOpts: "capfence_change_opts",
            DelegateOpts: "capfence_delegate_opts",
            BindOpts: "capfence_bind_opts", SeccompInfo: "capfence_seccomp_info",
            LearnStats: "capfence_learn_stats", LearnOpts: "capfence_learn_opts"}
for _t, _name in _STRUCTS.items():
    _n = lib.capfence_struct_size(_name.encode())
    if ctypes.sizeof(_t) != _n:  # pragma: no cover - a port to a new ABI
        raise ImportError(f"capfence: struct {_name} is "
                          f"{ctypes.sizeof(_t)} bytes here, {_n} in the "
                          "library")
