/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	docs/netlink/capfence.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_CAPFENCE_GEN_H
#define _LINUX_CAPFENCE_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/capfence.h>
#include <compat.h>

/* Common nested types */
extern const struct nla_policy capfence_fleet_nl_policy[CAPFENCE_FLEET_A_LINK + 1];
extern const struct nla_policy capfence_rule_nl_policy[CAPFENCE_RULE_A_PAD + 1];

/* Ops table for capfence */
extern const struct genl_split_ops capfence_nl_ops[15];

int cf_nl_pre_bare(const struct genl_split_ops *ops, struct sk_buff *skb,
		   struct genl_info *info);
int cf_nl_pre_admin(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info);
int cf_nl_epoch_dump_start(struct netlink_callback *cb);

int capfence_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_hooks_attach_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_hooks_detach_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_key_install_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_key_remove_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_epoch_install_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_epoch_activate_doit(struct sk_buff *skb,
				    struct genl_info *info);
int capfence_nl_epoch_get_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_epoch_get_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb);
int capfence_nl_exec_set_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_delegate_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_revoke_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_task_get_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_fleet_set_doit(struct sk_buff *skb, struct genl_info *info);
int capfence_nl_epoch_retire_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	CAPFENCE_NLGRP_EVENTS,
};

#endif /* _LINUX_CAPFENCE_GEN_H */
