// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The capfence family's attributes as the client reads them (cf_attrs.h):
 * the tables, one per attribute set of docs/netlink/capfence.yaml, are
 * generated from it (cf_attrs_gen.c, make netlink-gen); this file reads
 * messages with them. Read-only data; no locks.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/capfence.h>
#include "cf_attrs.h"

bool capfence__attr_valid(const struct cf_attr_set *set, const struct nlattr *a)
{
	unsigned int type = mnl_attr_get_type(a);
	const struct cf_attr_type *t;

	if (type > set->max || !set->types[type].type)
		return true;	/* newer than this library: not read */
	t = &set->types[type];
	if (t->len)
		return !mnl_attr_validate2(a, t->type, t->len) &&
		       mnl_attr_get_payload_len(a) == t->len;
	return !mnl_attr_validate(a, t->type);
}

struct attrs_walk {
	const struct cf_attr_set *set;
	const struct nlattr **tb;
};

static int walk_attr(const struct nlattr *a, void *data)
{
	struct attrs_walk *w = data;
	unsigned int type = mnl_attr_get_type(a);

	if (!capfence__attr_valid(w->set, a))
		return MNL_CB_ERROR;
	/* repeated attributes are walked by their users; keep the first */
	if (type <= w->set->max && !w->tb[type])
		w->tb[type] = a;
	return MNL_CB_OK;
}

int capfence__attrs_parse_msg(const struct cf_attr_set *set, const struct nlmsghdr *nlh,
			      const struct nlattr **tb)
{
	struct attrs_walk w = { set, tb };

	memset(tb, 0, sizeof(*tb) * (set->max + 1));
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), walk_attr, &w) == MNL_CB_ERROR ?
	       -EBADMSG : 0;
}

int capfence__attrs_parse_nest(const struct cf_attr_set *set, const struct nlattr *nest,
			       const struct nlattr **tb)
{
	struct attrs_walk w = { set, tb };

	memset(tb, 0, sizeof(*tb) * (set->max + 1));
	if (mnl_attr_validate(nest, MNL_TYPE_NESTED))
		return -EBADMSG;
	return mnl_attr_parse_nested(nest, walk_attr, &w) == MNL_CB_ERROR ? -EBADMSG : 0;
}
