/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Epoch tables (epoch.c): installed once, retired when nothing refers to
 * them (RCU-freed), or freed at module exit.
 */
#ifndef _CAPFENCE_EPOCH_H
#define _CAPFENCE_EPOCH_H

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include <linux/rcupdate.h>
#include "constraint.h"

/* An older epoch an epoch narrows, and the classes it narrows there. */
struct cf_narrow {
	u64 id;
	u32 classes;			/* bit c: class c */
};

/*
 * An installed epoch. Freed after a grace period once retired, which
 * needs @creds and @grants at zero: a pointer to an epoch is held only by
 * credential entries (their epoch and pending epoch) and by grants.
 */
struct cf_epoch {
	struct list_head node;		/* cf_epochs, ascending ids, RCU */
	struct llist_node activated;	/* queued for its activation event */
	struct list_head gone;		/* cf_mutex: being retired */
	u64 id;
	bool active;			/* written under the fence lock */
	bool complain;			/* has a log rule; set at install */
	atomic_t creds;			/* credential entries naming it */
	atomic_t grants;		/* grants minted under it */
	u64 fenced_at[__CAPFENCE_CLASS_MAX];	/* fence lock; 0 = not fenced */
	struct cf_rule rules[__CAPFENCE_CLASS_MAX];
	struct cf_seccomp *sc;		/* its syscall policy, or NULL */
	/* older epochs it narrows, found at install: activation's walk */
	struct cf_narrow *narrows;
	u32 nr_narrows;
};

/**
 * cf_epoch_cred_get() - a credential entry starts naming @e
 * @e: epoch, may be NULL
 *
 * The reference is taken from an existing one (a copy) or under cf_mutex
 * (exec-set), so a count read as zero under cf_mutex stays zero
 * (cf_epoch_retire()). Never sleeps.
 */
static inline void cf_epoch_cred_get(struct cf_epoch *e)
{
	if (e)
		atomic_inc(&e->creds);
}

/**
 * cf_epoch_cred_put() - a credential entry stops naming @e
 * @e: epoch, may be NULL
 *
 * Never sleeps. A reader that found the entry holds RCU, which the retire
 * waits out before freeing @e.
 */
static inline void cf_epoch_cred_put(struct cf_epoch *e)
{
	if (e)
		atomic_dec(&e->creds);
}

void cf_epoch_exit(void);
void cf_epoch_events_stop(void);
struct cf_epoch *cf_epoch_find(u64 id);
struct list_head *cf_epoch_list(void);
int cf_epoch_install(struct cf_epoch *e, struct netlink_ext_ack *extack);
int cf_epoch_activate(u64 id, struct netlink_ext_ack *extack);
void cf_epoch_bind_activate(struct cf_epoch *e);
struct cf_epoch *cf_epoch_alloc(u64 id);
void cf_epoch_free(struct cf_epoch *e);
u64 cf_epoch_max_id(void);
u64 cf_epoch_active_id(void);
u32 cf_epoch_count(void);
void cf_epoch_settle(u64 id);
int cf_epoch_retire(u64 id, struct netlink_ext_ack *extack);

#endif /* _CAPFENCE_EPOCH_H */
