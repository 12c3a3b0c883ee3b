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
#include "capfence.h"
#include "compat.h"

#define CF_HDR_LEN 24

/**
 * cf_token_decode() - decode and validate a binary token
 * @t: output
 * @buf: canonical bytes, MAC included
 * @len: length of @buf
 * @why: set to a static reason on failure, to NULL on success
 *
 * The MAC is not checked here; see cf_key_verify().
 *
 * Return: 0 or -EINVAL.
 */
int cf_token_decode(struct cf_token *t, const u8 *buf, size_t len,
		    const char **why)
{
	size_t off = CF_HDR_LEN + 1;
	u8 i, want;

	memset(t, 0, sizeof(*t));
	*why = "token is truncated";
	if (len < CF_HDR_LEN + 1 + CAPFENCE_MAC_LEN)
		return -EINVAL;
	if (buf[0] != CAPFENCE_TOKEN_VERSION) {
		*why = "unknown token version";
		return -EINVAL;
	}
	t->class_id = buf[1];
	t->flags = get_unaligned_le16(buf + 2);
	t->key_id = get_unaligned_le32(buf + 4);
	t->cap_id = get_unaligned_le64(buf + 8);
	t->epoch_id = get_unaligned_le64(buf + 16);
	t->n = buf[CF_HDR_LEN];
	*why = "unknown class in token";
	if (!t->class_id || t->class_id > CAPFENCE_CLASS_MAX)
		return -EINVAL;
	*why = "unknown token flags";
	if (t->flags & ~CAPFENCE_TOKEN_F_MASK)
		return -EINVAL;
	*why = "token has a zero key id, cap id or epoch id";
	if (!t->key_id || !t->cap_id || !t->epoch_id)
		return -EINVAL;
	*why = "too many constraints in token";
	if (t->n > CAPFENCE_MAX_CONSTRAINTS)
		return -EINVAL;
	want = (t->class_id == CAPFENCE_CLASS_NET_CONNECT ||
		t->class_id == CAPFENCE_CLASS_NET_BIND) ?
		CAPFENCE_CONSTRAINT_NET : CAPFENCE_CONSTRAINT_PATH;
	for (i = 0; i < t->n; i++) {
		struct cf_constraint *c = &t->c[i];

		*why = "token is truncated";
		if (off + 1 > len)
			return -EINVAL;
		*why = "constraint kind does not fit the token's class";
		if (buf[off] != want)
			return -EINVAL;
		c->kind = buf[off++];
		if (want == CAPFENCE_CONSTRAINT_NET) {
			struct capfence_net_range wire;

			*why = "token is truncated";
			if (off + sizeof(wire) > len)
				return -EINVAL;
			memcpy(&wire, buf + off, sizeof(wire));
			off += sizeof(wire);
			*why = "malformed or non-canonical network constraint";
			if (cf_net_range_from_wire(&c->net, &wire, true))
				return -EINVAL;
		} else {
			*why = "token is truncated";
			if (off + 1 > len || off + 1 + buf[off] > len)
				return -EINVAL;
			c->path_len = buf[off++];
			*why = "malformed path constraint";
			if (cf_path_check((const char *)buf + off, c->path_len))
				return -EINVAL;
			memcpy(c->path, buf + off, c->path_len);
			c->path[c->path_len] = '\0';
			off += c->path_len;
		}
	}
	*why = "token length does not match its contents";
	if (off + CAPFENCE_MAC_LEN != len)
		return -EINVAL;
	memcpy(t->mac, buf + off, CAPFENCE_MAC_LEN);
	t->signed_len = off;
	*why = NULL;
	return 0;
}
