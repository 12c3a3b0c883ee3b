/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's hold on its BPF links (hooks.c).
 */
#ifndef _CAPFENCE_HOOKS_H
#define _CAPFENCE_HOOKS_H

#include <linux/netlink.h>
#include <linux/types.h>

int cf_hooks_attach(const u32 *fds, int n, struct netlink_ext_ack *extack);
int cf_hooks_detach(struct netlink_ext_ack *extack);
void cf_hooks_exit(void);

#endif /* _CAPFENCE_HOOKS_H */
