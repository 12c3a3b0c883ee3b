/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An epoch's syscall policy: its seccomp program (seccomp.c).
 */
#ifndef _CAPFENCE_SECCOMP_H
#define _CAPFENCE_SECCOMP_H

#include <linux/filter.h>
#include <linux/types.h>
#include <net/netlink.h>
#include <uapi/linux/capfence.h>

/* An epoch's program: fixed before the epoch is published, never changed. */
struct cf_seccomp {
	u32 len;				/* instructions */
	u8 digest[CAPFENCE_SECCOMP_DIGEST_LEN];	/* SHA-256 of insns */
	struct sock_filter insns[];
};

int cf_seccomp_parse(struct cf_seccomp **out, const struct nlattr *nla,
		     struct netlink_ext_ack *extack);
void cf_seccomp_free(struct cf_seccomp *sc);
size_t cf_seccomp_msg_max(bool prog);
int cf_seccomp_match_current(const struct cf_seccomp *sc);
struct seccomp_data;
u32 cf_seccomp_epoch_answer(const struct cf_seccomp *sc,
			    struct seccomp_data *sd);

#endif /* _CAPFENCE_SECCOMP_H */
