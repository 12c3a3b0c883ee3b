// SPDX-License-Identifier: GPL-2.0
/*
 * Strict decoder of the canonical token encoding defined in
 * include/uapi/linux/capfence.h. Every byte is accounted for: anything
 * non-canonical is refused, so one token has exactly one encoding and the
 * MAC covers all of it.
 *
 * Locking: none; pure function over caller memory.
 */
#include <linux/string.h>
#include <linux/errno.h>
#include <net/netlink.h>
#include "class.h"
#include "constraint.h"
#include "token.h"
#include "compat.h"

#define CF_HDR_LEN 24

/**
 * cf_token_decode() - decode and validate a binary token
 * @t: output
 * @buf: canonical bytes, MAC included
 * @len: length of @buf
 *
 * The MAC is not checked here; see cf_key_verify(). Whatever was decoded
 * before a fault stays in @t (the cap_id, for the reply).
 *
 * Return: CF_TOKEN_OK, or what is wrong with the token.
 */
enum cf_token_fault cf_token_decode(struct cf_token *t, const u8 *buf,
				    size_t len)
{
	size_t off = CF_HDR_LEN + 1;
	u8 i, want;

	memset(t, 0, sizeof(*t));
	if (len < CF_HDR_LEN + 1 + CAPFENCE_MAC_LEN)
		return CF_TOKEN_TRUNCATED;
	if (buf[0] != CAPFENCE_TOKEN_VERSION)
		return CF_TOKEN_VERSION;
	t->class_id = buf[1];
	t->flags = get_unaligned_le16(buf + 2);
	t->key_id = get_unaligned_le32(buf + 4);
	t->cap_id = get_unaligned_le64(buf + 8);
	t->epoch_id = get_unaligned_le64(buf + 16);
	t->n = buf[CF_HDR_LEN];
	if (!t->class_id || t->class_id > CAPFENCE_CLASS_MAX)
		return CF_TOKEN_CLASS;
	if (t->flags & ~CAPFENCE_TOKEN_F_MASK)
		return CF_TOKEN_FLAGS;
	if (!t->key_id || !t->cap_id || !t->epoch_id)
		return CF_TOKEN_ZERO_ID;
	if (t->n > CAPFENCE_MAX_CONSTRAINTS)
		return CF_TOKEN_TOO_MANY;
	want = cf_class(t->class_id)->constraint;
	for (i = 0; i < t->n; i++) {
		struct cf_constraint *c = &t->c[i];

		if (off + 1 > len)
			return CF_TOKEN_TRUNCATED;
		if (buf[off] != want)
			return CF_TOKEN_KIND;
		c->kind = buf[off++];
		if (want == CAPFENCE_CONSTRAINT_NET) {
			struct capfence_net_range wire;

			if (off + sizeof(wire) > len)
				return CF_TOKEN_TRUNCATED;
			memcpy(&wire, buf + off, sizeof(wire));
			off += sizeof(wire);
			if (cf_net_range_from_wire(&c->net, &wire, true,
						   t->class_id))
				return CF_TOKEN_NET;
		} else {
			if (off + 1 > len || off + 1 + buf[off] > len)
				return CF_TOKEN_TRUNCATED;
			c->path_len = buf[off++];
			if (cf_path_check((const char *)buf + off, c->path_len))
				return CF_TOKEN_PATH;
			memcpy(c->path, buf + off, c->path_len);
			c->path[c->path_len] = '\0';
			off += c->path_len;
		}
	}
	if (off + CAPFENCE_MAC_LEN != len)
		return CF_TOKEN_LENGTH;
	memcpy(t->mac, buf + off, CAPFENCE_MAC_LEN);
	t->signed_len = off;
	return CF_TOKEN_OK;
}

/**
 * cf_token_fault_msg() - say in @extack what is wrong with a token
 * @extack: netlink extended ack, may be NULL
 * @f: what cf_token_decode() found
 */
void cf_token_fault_msg(struct netlink_ext_ack *extack, enum cf_token_fault f)
{
	switch (f) {
	case CF_TOKEN_OK:
		break;
	case CF_TOKEN_TRUNCATED:
		NL_SET_ERR_MSG(extack, "forged: token is truncated");
		break;
	case CF_TOKEN_VERSION:
		NL_SET_ERR_MSG(extack, "forged: unknown token version");
		break;
	case CF_TOKEN_CLASS:
		NL_SET_ERR_MSG(extack, "forged: unknown class in token");
		break;
	case CF_TOKEN_FLAGS:
		NL_SET_ERR_MSG(extack, "forged: unknown token flags");
		break;
	case CF_TOKEN_ZERO_ID:
		NL_SET_ERR_MSG(extack,
			       "forged: token has a zero key id, cap id or epoch id");
		break;
	case CF_TOKEN_TOO_MANY:
		NL_SET_ERR_MSG(extack, "forged: too many constraints in token");
		break;
	case CF_TOKEN_KIND:
		NL_SET_ERR_MSG(extack,
			       "forged: constraint kind does not fit the token's class");
		break;
	case CF_TOKEN_NET:
		NL_SET_ERR_MSG(extack,
			       "forged: malformed or non-canonical network constraint");
		break;
	case CF_TOKEN_PATH:
		NL_SET_ERR_MSG(extack, "forged: malformed path constraint");
		break;
	case CF_TOKEN_LENGTH:
		NL_SET_ERR_MSG(extack,
			       "forged: token length does not match its contents");
		break;
	}
}
