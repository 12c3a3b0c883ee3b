#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The README's tutorial: the design note's example against the module
(as root, capfence.ko loaded and attached). AGENT is what the sandboxes
run; the test VM has busybox."""
import os
import signal

import capfence

AGENT = (["/bin/busybox", "sleep", "60"] if os.access("/bin/busybox", os.X_OK)
         else ["sleep", "60"])

key = capfence.Key.generate(1)
with capfence.Client() as c:
    c.install_key(key)
    e41 = c.status().max_epoch + 1          # epoch ids only grow
    e42 = e41 + 1
    c.install_epoch(e41, ["net:connect=token:127.0.0.0/8", "fs:write=token:/tmp"])
    c.install_epoch(e42, ["fs:write=token:/tmp"])       # net:connect narrowed away

    parent_token = capfence.mint(key, "net:connect", e41, "127.0.0.1:8080")
    parent = c.spawn_bound(e41, AGENT, [parent_token])
    child = c.spawn_bound(e42, AGENT)

    try:
        c.delegate(parent_token, child, from_pid=parent)
    except capfence.PolicyEpochMismatch as exc:   # here: capfence.EpochMismatch
        print(f"delegation rejected at boundary: {exc.reason} ({exc.errno}), "
              f"token epoch {exc.token_epoch}, receiver epoch {exc.receiver_epoch}")
        try:
            c.delegate_remint(key, parent_token, child)  # re-mint under e42
        except capfence.ClassDenied as exc2:
            print(f"re-mint also denied (class narrowed out): {exc2}")

    for pid in (parent, child):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
