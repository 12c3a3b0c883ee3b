/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet revision, the chain position and the freshness bounds (fleet.c).
 */
#ifndef _CAPFENCE_FLEET_H
#define _CAPFENCE_FLEET_H

#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/types.h>
#include <uapi/linux/capfence.h>

struct netlink_ext_ack;

/* a position in the fleet's chain (CAPFENCE_FLEET_A_SEQ and its links) */
struct cf_fleet_link {
	u64 seq;			/* 0: none given */
	u8 prev[CAPFENCE_FLEET_LINK_LEN];	/* change commands only */
	u8 link[CAPFENCE_FLEET_LINK_LEN];
};

/* a parsed FLEET_SET request */
struct cf_fleet_req {
	u64 rev;			/* 0: leave the revision */
	bool bounds;			/* set stale_ms and deny_ms */
	u32 stale_ms;
	u32 deny_ms;
	bool fresh;			/* a confirmation, age_ms old */
	u32 age_ms;
	u64 asked_ns;			/* or from this boot ns, 0 = none */
	struct cf_fleet_link chain;	/* a snapshot's position, seq 0: none */
};

DECLARE_STATIC_KEY_FALSE(cf_fleet_mode);
extern u64 cf_fleet_rev_val;
extern u64 cf_fleet_deny_at;

/**
 * cf_fleet_rev() - the fleet revision the module has applied
 *
 * Written under cf_mutex; read anywhere.
 *
 * Return: the revision, 0 before the first.
 */
static inline u64 cf_fleet_rev(void)
{
	return READ_ONCE(cf_fleet_rev_val);
}

/**
 * cf_fleet_denies() - does a host out of touch with its fleet deny grants?
 *
 * Past the deny bound every grant the host holds was accepted at or below
 * its last applied revision, and any of them may have been revoked at a
 * revision the host has not seen: none admits anything until the agent
 * confirms again. Inline and lockless: every exercise asks it; outside
 * fleet mode it is one patched-out branch. Never sleeps.
 *
 * Return: true to deny.
 */
static inline bool cf_fleet_denies(void)
{
	return static_branch_unlikely(&cf_fleet_mode) &&
	       ktime_get_boot_fast_ns() >= READ_ONCE(cf_fleet_deny_at);
}

bool cf_fleet_stale(void);
int cf_fleet_begin(u64 rev, const struct cf_fleet_link *chain,
		   struct netlink_ext_ack *extack);
void cf_fleet_commit(u64 rev, const struct cf_fleet_link *chain);
int cf_fleet_set(const struct cf_fleet_req *req, struct netlink_ext_ack *extack);
/* what STATUS_GET and a fleet event say of the fleet (cf_fleet_view()) */
struct cf_fleet_view {
	u64 rev;
	u32 stale_ms;
	u32 deny_ms;
	enum capfence_fleet_state state;
	u64 applied;
	bool confirmed;			/* ever: age_ms is meaningful */
	u32 age_ms;
	u64 seq;			/* the chain's position the module holds */
	u8 link[CAPFENCE_FLEET_LINK_LEN];	/* its link (zeros: genesis) */
};

void cf_fleet_view(struct cf_fleet_view *v);
void cf_fleet_exit(void);

#endif /* _CAPFENCE_FLEET_H */
