// SPDX-License-Identifier: GPL-2.0
/*
 * Constraints: CIDR + port ranges for net classes (a CID for vsock ones),
 * path prefixes for fs classes. Containment between constraint sets, admission of a target, and
 * the narrowing order of epoch rules.
 *
 * Locking: none. Every function here is pure over immutable data and safe
 * in any context, including BPF programs.
 */
#include <linux/string.h>
#include <linux/errno.h>
#include "class.h"
#include "constraint.h"
#include "compat.h"

static bool cf_prefix_match(const u8 *net, const u8 *addr, u8 plen)
{
	u8 bytes = plen / 8, bits = plen % 8;

	if (memcmp(net, addr, bytes))
		return false;
	if (!bits)
		return true;
	return !((net[bytes] ^ addr[bytes]) & (u8)(0xff << (8 - bits)));
}

static bool cf_path_under(const char *outer, size_t olen,
			  const char *inner, size_t ilen)
{
	if (olen == 1 && outer[0] == '/')
		return true;
	if (ilen < olen || memcmp(outer, inner, olen))
		return false;
	return ilen == olen || inner[olen] == '/';
}

/**
 * cf_constraint_contains() - does @outer admit everything @inner admits?
 * @outer: the wider constraint (usually a rule's)
 * @inner: the narrower constraint (usually a token's)
 *
 * Return: true when every target @inner admits is admitted by @outer.
 */
static bool cf_constraint_contains(const struct cf_constraint *outer,
				   const struct cf_constraint *inner)
{
	if (outer->kind != inner->kind)
		return false;
	if (outer->kind == CAPFENCE_CONSTRAINT_PATH)
		return cf_path_under(outer->path, outer->path_len,
				     inner->path, inner->path_len);
	if (outer->net.family != inner->net.family ||
	    outer->net.prefix_len > inner->net.prefix_len)
		return false;
	if (!cf_prefix_match(outer->net.addr, inner->net.addr,
			     outer->net.prefix_len))
		return false;
	return outer->net.port_min <= inner->net.port_min &&
	       inner->net.port_max <= outer->net.port_max;
}

/**
 * cf_constraints_contain() - set containment, empty set = unconstrained
 * @outer: constraints of the wider side
 * @nouter: number of @outer; 0 admits everything
 * @inner: constraints of the narrower side
 * @ninner: number of @inner; 0 admits everything
 *
 * Return: true when each inner constraint fits inside some outer one.
 */
bool cf_constraints_contain(const struct cf_constraint *outer, u8 nouter,
			    const struct cf_constraint *inner, u8 ninner)
{
	u8 i, j;

	if (!nouter)
		return true;
	if (!ninner)
		return false;
	for (i = 0; i < ninner; i++) {
		for (j = 0; j < nouter; j++)
			if (cf_constraint_contains(&outer[j], &inner[i]))
				break;
		if (j == nouter)
			return false;
	}
	return true;
}

static bool cf_constraint_admits(const struct cf_constraint *c,
				 const struct cf_target *t)
{
	if (c->kind == CAPFENCE_CONSTRAINT_PATH)
		return t->path &&
		       cf_path_under(c->path, c->path_len, t->path,
				     t->path_len);
	if (c->kind != CAPFENCE_CONSTRAINT_NET || c->net.family != t->family)
		return false;
	return cf_prefix_match(c->net.addr, t->addr, c->net.prefix_len) &&
	       c->net.port_min <= t->port && t->port <= c->net.port_max;
}

/**
 * cf_constraints_admit() - does a constraint set admit @t?
 * @c: constraints
 * @n: number of @c; 0 admits everything
 * @t: the target of an exercise
 *
 * Return: true when some constraint admits @t.
 */
bool cf_constraints_admit(const struct cf_constraint *c, u8 n,
			  const struct cf_target *t)
{
	u8 i;

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (cf_constraint_admits(&c[i], t))
			return true;
	return false;
}

/**
 * cf_rule_narrows() - is @new strictly less permissive than @old?
 * @old: the rule of an older epoch
 * @new: the rule of the newer epoch for the same class
 *
 * The order is open > token (wider) > token (narrower) > deny. Token rules
 * whose constraint sets are incomparable count as narrowing: something
 * @old admitted is no longer admitted, and failing safe means fencing.
 *
 * Return: true when @new does not admit everything @old admitted.
 */
bool cf_rule_narrows(const struct cf_rule *old, const struct cf_rule *new)
{
	if (old->kind == CAPFENCE_RULE_DENY || new->kind == CAPFENCE_RULE_OPEN)
		return false;
	if (new->kind == CAPFENCE_RULE_DENY || old->kind == CAPFENCE_RULE_OPEN)
		return true;
	return !cf_constraints_contain(new->c, new->n, old->c, old->n);
}

/**
 * cf_net_range_from_wire() - validate and convert a net constraint
 * @r: output, ports in host order
 * @wire: input as found in a token (@le) or a netlink attribute
 * @le: ports are little-endian (token) rather than host order (netlink)
 * @class_id: the class of the token or rule: its family (class.c) is the
 *	      only one admitted
 *
 * Return: 0, or -EINVAL for a family the class does not take, a bad
 * prefix (a vsock CID: 0 or 32), port range (port 0 only within 0-65535),
 * non-zero reserved field or host bits beyond the prefix.
 */
int cf_net_range_from_wire(struct capfence_net_range *r,
			   const struct capfence_net_range *wire, bool le,
			   u8 class_id)
{
	u8 alen, i;

	*r = *wire;
	if (le) {
		r->port_min = le16_to_cpu((__force __le16)wire->port_min);
		r->port_max = le16_to_cpu((__force __le16)wire->port_max);
	}
	if (cf_class(class_id)->family == CAPFENCE_FAMILY_VSOCK) {
		/*
		 * A CID names one peer: no prefixes between one and all, and
		 * not VMADDR_CID_ANY, which only "any CID" admits (vsock.c).
		 */
		if (r->family != CAPFENCE_FAMILY_VSOCK ||
		    (r->prefix_len && r->prefix_len != 32) ||
		    (r->prefix_len && !~get_unaligned_be32(r->addr)))
			return -EINVAL;
	} else if (r->family != 4 && r->family != 6) {
		return -EINVAL;
	}
	alen = r->family == 6 ? 16 : 4;
	if (r->prefix_len > alen * 8 || r->reserved ||
	    r->port_min > r->port_max)
		return -EINVAL;
	/* port 0 only as part of "any port" (0-65535) */
	if (!r->port_min && r->port_max != 0xffff)
		return -EINVAL;
	for (i = 0; i < 16; i++) {
		u8 keep;

		if (i >= alen || i * 8 >= r->prefix_len)
			keep = 0;
		else if (i * 8 + 8 <= r->prefix_len)
			keep = 0xff;
		else
			keep = (u8)(0xff << (8 - (r->prefix_len - i * 8)));
		if (r->addr[i] & ~keep)
			return -EINVAL;
	}
	return 0;
}

/**
 * cf_path_check() - validate an absolute, normalized path prefix
 * @path: bytes, not necessarily NUL-terminated
 * @len: length of @path
 *
 * Return: 0, or -EINVAL for empty, relative, over-long or non-normalized
 * paths ("//", "/./", "/../", trailing '/'), control bytes and ','.
 */
int cf_path_check(const char *path, size_t len)
{
	size_t i;

	if (!len || len > CAPFENCE_PATH_MAX || path[0] != '/')
		return -EINVAL;
	if (len > 1 && path[len - 1] == '/')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		/* no control bytes, and no ',' which separates constraints */
		if ((u8)path[i] < 0x20 || path[i] == 0x7f || path[i] == ',')
			return -EINVAL;
		if (path[i] != '/')
			continue;
		if (i + 1 < len && path[i + 1] == '/')
			return -EINVAL;
		if (i + 2 <= len && path[i + 1] == '.' &&
		    (i + 2 == len || path[i + 2] == '/'))
			return -EINVAL;
		if (i + 3 <= len && path[i + 1] == '.' && path[i + 2] == '.' &&
		    (i + 3 == len || path[i + 3] == '/'))
			return -EINVAL;
	}
	return 0;
}
