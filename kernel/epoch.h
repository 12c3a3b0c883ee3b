/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Epoch tables (epoch.c): installed once, never freed before module exit.
 */
#ifndef _CAPFENCE_EPOCH_H
#define _CAPFENCE_EPOCH_H

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/netlink.h>
#include "constraint.h"

/* An installed epoch. Never freed before module exit. */
struct cf_epoch {
	struct list_head node;		/* cf_epochs, ascending ids, RCU */
	struct llist_node activated;	/* queued for its activation event */
	u64 id;
	bool active;			/* written under the fence lock */
	u64 fenced_at[__CAPFENCE_CLASS_MAX];	/* fence lock; 0 = not fenced */
	struct cf_rule rules[__CAPFENCE_CLASS_MAX];
	struct cf_seccomp *sc;		/* its syscall policy, or NULL */
};

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

#endif /* _CAPFENCE_EPOCH_H */
