/* SPDX-License-Identifier: GPL-2.0 */
/*
 * capfence internal interfaces: one header per concern, all included here
 * for the files of capfence.ko.
 *
 * Locking, in one place:
 * - cf_fence (fence.c) is a seqlock. Its spinlock is THE fence lock: every
 *   epoch activation, revocation and key change publishes under it and
 *   advances the fence. Decisions read a consistent snapshot with
 *   read_seqbegin()/read_seqretry(); nothing under it sleeps.
 * - cf_mutex (fence.c) serializes control-plane mutations that allocate
 *   (netlink handlers). It is taken before the fence lock, never inside it,
 *   and never from BPF program context.
 * - Credential state (cred.c) lives in an rhashtable keyed by the cred
 *   pointer; lookups run under RCU, which BPF programs already hold. A
 *   counting filter (atomic counters) in front of it lets a credential
 *   without state skip the lookup.
 * - A bound credential's net decision memo (decide.c) is a seqcount
 *   taken by writers with one cmpxchg() or skipped; readers retry nothing,
 *   they miss. It is valid only at the fence value it remembers.
 * - A sandbox (sandbox.c) is reference counted by the credential entries
 *   that carry it and freed after a grace period; its counters and budget
 *   windows are atomics advanced by cmpxchg, never a lock, so a denial's
 *   record is never dropped uncounted.
 * - The fleet revision and its deadlines (fleet.c) are written under
 *   cf_mutex and read locklessly, one u64 at a time.
 * - Objects reachable from RCU readers (epochs, keys, grants, holdings) are
 *   freed only after a grace period.
 */
#ifndef _CAPFENCE_INTERNAL_H
#define _CAPFENCE_INTERNAL_H

#define CAPFENCE_VERSION "0.1.0"

#include "fence.h"
#include "fleet.h"
#include "constraint.h"
#include "class.h"
#include "epoch.h"
#include "seccomp.h"
#include "key.h"
#include "token.h"
#include "cap.h"
#include "ptrtable.h"
#include "sandbox.h"
#include "cred.h"
#include "decide.h"
#include "file.h"
#include "fsmemo.h"
#include "fspath.h"
#include "net.h"
#include "sock.h"
#include "borrow.h"
#include "audit.h"
#include "stats.h"
#include "hooks.h"
#include "kfunc.h"
#include "netlink.h"

#endif /* _CAPFENCE_INTERNAL_H */
