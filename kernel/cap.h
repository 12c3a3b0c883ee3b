/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capability graph (cap.c): revocation cells, grants, holdings.
 */
#ifndef _CAPFENCE_CAP_H
#define _CAPFENCE_CAP_H

#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include "epoch.h"
#include "fence.h"
#include "fleet.h"
#include "key.h"
#include "token.h"

/* Revocation state of one cap_id; shared by every grant of that id. */
struct cf_capid {
	struct hlist_node node;		/* cf_capids, RCU */
	u64 cap_id;
	u64 revoked_at;			/* fence lock; 0 = live */
	refcount_t ref;
	struct rcu_head rcu;
};

/* An accepted token: immutable once created. */
struct cf_grant {
	refcount_t ref;
	struct cf_capid *capid;
	struct cf_keycell *key;		/* the key that authenticated it */
	struct cf_epoch *epoch;		/* the token's (= holder's) epoch */
	u8 class_id;
	u8 n;
	u32 key_id;
	pid_t from_pid;			/* delegator, 0 for the orchestrator */
	u64 fleet_rev;			/* fleet revision when accepted */
	struct rcu_head rcu;
	struct cf_constraint c[];
};

/*
 * The most capabilities one credential holds: a delegation past it is
 * refused with E2BIG (docs/errors.md). It bounds the copy every fork and
 * exec makes, the walk of every exercise and the TASK_GET reply (sized
 * from the holdings: about 100 bytes a capability, plus 28 bytes a
 * network and up to 260 a path constraint).
 */
#define CF_HELD_MAX	512

/* An immutable set of grants held by a credential (copy on write). */
struct cf_holdings {
	refcount_t ref;
	u32 n;
	struct rcu_head rcu;
	struct cf_grant *g[];
};

void cf_cap_exit(void);
void cf_cap_drain(void);
struct cf_grant *cf_grant_from_token(const struct cf_token *t,
				     struct cf_epoch *e, pid_t from,
				     gfp_t gfp);
void cf_grant_put(struct cf_grant *g);
struct cf_holdings *cf_holdings_add(const struct cf_holdings *old,
				    struct cf_grant *g, gfp_t gfp);
void cf_holdings_put(struct cf_holdings *h);
struct cf_holdings *cf_holdings_get(struct cf_holdings *h);

/**
 * cf_grant_state() - is a grant valid under the current fence?
 * @g: grant
 *
 * Call inside a fence read section (or under the fence lock) to get a
 * consistent answer together with other fence-protected state. Inline:
 * every allowed exercise asks it.
 *
 * Return: CAPFENCE_R_OK, CAPFENCE_R_REVOKED, CAPFENCE_R_FENCED or, on a
 * host out of touch with its fleet past the deny bound,
 * CAPFENCE_R_FLEET_STALE.
 */
static inline enum capfence_reason cf_grant_state(const struct cf_grant *g)
{
	if (READ_ONCE(g->capid->revoked_at))
		return CAPFENCE_R_REVOKED;
	if (READ_ONCE(g->epoch->fenced_at[g->class_id]) ||
	    READ_ONCE(g->key->removed_at))
		return CAPFENCE_R_FENCED;
	if (cf_fleet_denies())
		return CAPFENCE_R_FLEET_STALE;
	return CAPFENCE_R_OK;
}

/**
 * cf_grants_state() - the state of a set of grants, in one fence section
 * @g: the grants
 * @n: how many
 * @bad: set to the first grant that is not valid, or NULL
 * @fence: set to the fence value the answer holds at
 *
 * The one place that reads the fence and grant state together for a set
 * of grants (a tracked file or socket, an exec binding, a task's
 * holdings listed). Never sleeps: BPF program context, too. Inline: every
 * use of a tracked file or socket asks, and its answer stays in registers.
 *
 * Return: CAPFENCE_R_OK, or the state of *@bad (see cf_grant_state()).
 */
static __always_inline enum capfence_reason
cf_grants_state(struct cf_grant *const *g, u32 n, struct cf_grant **bad,
		u64 *fence)
{
	enum capfence_reason r;
	unsigned int seq;
	u32 i;

	do {
		seq = read_seqbegin(&cf_fence);
		*fence = cf_fence_value_locked();
		*bad = NULL;
		r = CAPFENCE_R_OK;
		for (i = 0; i < n && r == CAPFENCE_R_OK; i++) {
			r = cf_grant_state(g[i]);
			*bad = g[i];
		}
	} while (read_seqretry(&cf_fence, seq));
	if (r == CAPFENCE_R_OK)
		*bad = NULL;
	return r;
}

int cf_revoke(u64 cap_id, u64 *fence);
u64 cf_nr_held(void);

#endif /* _CAPFENCE_CAP_H */
