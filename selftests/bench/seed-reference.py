#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The design note's reference delegation check, timed per call.

The baseline `make bench` compares libcapfence's delegation-time check
with: the note's own Python `mint` and `accept_delegation` (HMAC-SHA256
over "cap_id|class|epoch", compare_digest, epoch and class checks),
reproduced here with the same logic, run on this machine in the same
`make bench`. Prints one line: "seedref: accept_p50_ns=.. accept_p99_ns=..
mint_p50_ns=..".
"""
import hashlib
import hmac
import sys
import time
from dataclasses import dataclass


class PolicyEpochMismatch(RuntimeError):
    pass


@dataclass(frozen=True)
class Capability:
    cap_id: str
    cap_class: str
    epoch_id: int
    mac: bytes


@dataclass(frozen=True)
class PolicyEpoch:
    epoch_id: int
    allowed_classes: frozenset


def _mac(secret, cap_id, cap_class, epoch_id):
    msg = f"{cap_id}|{cap_class}|{epoch_id}".encode()
    return hmac.new(secret, msg, hashlib.sha256).digest()


def mint(secret, cap_id, cap_class, epoch_id):
    return Capability(cap_id, cap_class, epoch_id,
                      _mac(secret, cap_id, cap_class, epoch_id))


def accept_delegation(secret, token, receiver_epoch):
    expected = _mac(secret, token.cap_id, token.cap_class, token.epoch_id)
    if not hmac.compare_digest(expected, token.mac):
        raise PolicyEpochMismatch(f"capability {token.cap_id} failed MAC verification")
    if token.epoch_id != receiver_epoch.epoch_id:
        raise PolicyEpochMismatch(f"capability {token.cap_id} minted under epoch "
                                  f"{token.epoch_id}, receiver bound to epoch "
                                  f"{receiver_epoch.epoch_id}; re-mint required "
                                  "before delegation")
    if token.cap_class not in receiver_epoch.allowed_classes:
        raise PolicyEpochMismatch(f"capability class {token.cap_class} not "
                                  f"permitted under epoch {receiver_epoch.epoch_id}")
    return token


def pct(v, q):
    v = sorted(v)
    return v[int(q * (len(v) - 1) + 0.5)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    secret = b"orchestrator-shared-secret"
    e41 = PolicyEpoch(41, frozenset({"net:connect", "fs:write"}))
    tok = mint(secret, "cap-7", "net:connect", 41)
    clock = time.perf_counter_ns
    for _ in range(n // 10):        # warm up
        accept_delegation(secret, tok, e41)
    acc = []
    for _ in range(n):
        a = clock()
        accept_delegation(secret, tok, e41)
        acc.append(clock() - a)
    mnt = []
    for i in range(n // 10):
        a = clock()
        mint(secret, "cap-7", "net:connect", 41)
        mnt.append(clock() - a)
    print(f"seedref: accept_p50_ns={pct(acc, 0.5)} accept_p99_ns={pct(acc, 0.99)} "
          f"mint_p50_ns={pct(mnt, 0.5)}")


if __name__ == "__main__":
    main()
