/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An in-memory capfence module, for the agent's state machine
 * (tools/capfenced/agent_core.h) without a kernel: fleet-sim's hosts and
 * selftests/unit/test_agent.c. It decides as kernel/fleet.c and the change
 * commands do: a chained change is admitted only as the next link of the
 * position it holds (EALREADY for the link it holds, EXDEV for anything
 * else), an unchained one only above its revision; FLEET_SET moves the
 * revision, the bounds and the confirmation as cf_fleet_set() does; the
 * state is current, stale or deny by CLOCK_BOOTTIME from the confirmation.
 *
 * Not locked: the agent calls it under its cf_lock.
 */
#ifndef MODULE_MODEL_H
#define MODULE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <capfence/capfence.h>
#include "cf_fleet.h"

struct mm_epoch {
	uint64_t id;
	struct capfence_epoch *e;	/* its rules (malloc'd) */
	bool active;
};

struct mm {
	uint64_t rev;			/* the fleet revision */
	uint64_t seq;			/* the chain position held */
	unsigned char link[CF_FLEET_HASH_LEN];
	uint32_t stale_ms, deny_ms;	/* 0: fleet mode off */
	uint64_t confirmed_ns;		/* CLOCK_BOOTTIME, 0: never */
	uint64_t applied;		/* changes applied */
	uint64_t *revoked;
	size_t nrevoked, caprevoked;
	struct mm_epoch *epochs;
	size_t nepochs;
	uint32_t *keys;			/* key ids installed */
	size_t nkeys;
};

void mm_free(struct mm *m);
int mm_status(struct mm *m, struct capfence_fleet_status *st);
int mm_set(struct mm *m, const struct capfence_fleet_set *fs, char *err, size_t errlen);
void mm_chain(const struct mm *m, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN]);
int mm_chain_set(struct mm *m, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
		 char *err, size_t errlen);
/* cf_fleet_apply() */
int mm_apply(struct mm *m, const struct cf_fleet_change *ch, char *err, size_t errlen);
int mm_epoch_get(struct mm *m, uint64_t id, struct capfence_epoch_info *ei, char *err, size_t errlen);
int mm_epoch_install(struct mm *m, const struct capfence_epoch *e, char *err, size_t errlen);
int mm_epoch_activate(struct mm *m, uint64_t id, char *err, size_t errlen);
int mm_revoke(struct mm *m, uint64_t cap_id, char *err, size_t errlen);
int mm_key_add(struct mm *m, uint32_t key_id);
int mm_key_remove(struct mm *m, uint32_t key_id, char *err, size_t errlen);
/* is cap_id revoked? */
bool mm_revoked(const struct mm *m, uint64_t cap_id);
/* enum capfence_fleet_state at now_ns (CLOCK_BOOTTIME) */
int mm_state(const struct mm *m, uint64_t now_ns);

#endif /* MODULE_MODEL_H */
