/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's one table of the capfence family's attributes: per attribute
 * set of docs/netlink/capfence.yaml, the libmnl type (and, for a fixed-size
 * binary, the exact length) of each attribute. Every reply and event is
 * parsed through it, so an attribute of the wrong type or size fails the
 * whole message (-EBADMSG) instead of reading as 0. `make spec-check`
 * holds the table against the YAML (selftests/netlink/check-spec.py).
 * Internal to libcapfence and its test programs; read-only data, no locks.
 */
#ifndef CF_ATTRS_H
#define CF_ATTRS_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>

struct cf_attr_type {
	uint8_t type;		/* enum mnl_attr_data_type; 0: not in this set */
	uint16_t len;		/* exact payload length of a binary, 0: any */
};

struct cf_attr_set {
	const char *name;	/* the YAML attribute set's name */
	unsigned int max;	/* highest attribute type */
	const struct cf_attr_type *types;	/* [0, max] */
};

extern const struct cf_attr_set cf_attrs_capfence, cf_attrs_rule, cf_attrs_cap,
	cf_attrs_fleet, cf_attrs_stats, cf_attrs_reason_counts, cf_attrs_sandbox;

/* Does @a have the type and size @set gives it? (An attribute @set does not know is valid.) */
bool capfence__attr_valid(const struct cf_attr_set *set, const struct nlattr *a);

/*
 * The attributes of a generic netlink message (after its genlmsghdr) or of
 * a nest, into tb[0..set->max]: the first of each type (a repeated one is
 * walked by its user, each member checked with capfence__attr_valid()).
 * -EBADMSG when one of them is not what @set says or the stream is cut.
 */
int capfence__attrs_parse_msg(const struct cf_attr_set *set, const struct nlmsghdr *nlh,
			      const struct nlattr **tb);
int capfence__attrs_parse_nest(const struct cf_attr_set *set, const struct nlattr *nest,
			       const struct nlattr **tb);

#endif /* CF_ATTRS_H */
