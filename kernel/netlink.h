/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family (netlink.c).
 */
#ifndef _CAPFENCE_NETLINK_H
#define _CAPFENCE_NETLINK_H

#include <linux/types.h>
#include <uapi/linux/capfence.h>

int cf_netlink_init(void);
void cf_netlink_exit(void);
void cf_event(enum capfence_event ev, u64 epoch, u64 cap_id,
	      enum capfence_reason r, pid_t pid);

#endif /* _CAPFENCE_NETLINK_H */
