/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The strict token decoder (token.c).
 */
#ifndef _CAPFENCE_TOKEN_H
#define _CAPFENCE_TOKEN_H

#include <linux/netlink.h>
#include <linux/types.h>
#include "constraint.h"

/* One decoded token, MAC not yet checked. */
struct cf_token {
	u8 class_id;
	u16 flags;
	u32 key_id;
	u64 cap_id;
	u64 epoch_id;
	u8 n;
	struct cf_constraint c[CAPFENCE_MAX_CONSTRAINTS];
	u8 mac[CAPFENCE_MAC_LEN];
	size_t signed_len;		/* bytes covered by the MAC */
};

enum cf_token_fault {
	CF_TOKEN_OK,
	CF_TOKEN_TRUNCATED,
	CF_TOKEN_VERSION,
	CF_TOKEN_CLASS,
	CF_TOKEN_FLAGS,
	CF_TOKEN_ZERO_ID,
	CF_TOKEN_TOO_MANY,
	CF_TOKEN_KIND,
	CF_TOKEN_NET,
	CF_TOKEN_PATH,
	CF_TOKEN_LENGTH,
};

enum cf_token_fault cf_token_decode(struct cf_token *t, const u8 *buf,
				    size_t len);
void cf_token_fault_msg(struct netlink_ext_ack *extack, enum cf_token_fault f);

#endif /* _CAPFENCE_TOKEN_H */
