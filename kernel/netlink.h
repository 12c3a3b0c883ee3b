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

#endif /* _CAPFENCE_NETLINK_H */
