/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Constraints, rules and exercise targets (constraint.c): pure functions
 * over immutable data, safe in any context.
 */
#ifndef _CAPFENCE_CONSTRAINT_H
#define _CAPFENCE_CONSTRAINT_H

#include <linux/types.h>
#include <uapi/linux/capfence.h>

/* A constraint in host order; see struct capfence_net_range. */
struct cf_constraint {
	u8 kind;			/* enum capfence_constraint_kind */
	u8 path_len;
	struct capfence_net_range net;	/* ports in host order */
	char path[CAPFENCE_PATH_MAX + 1];
};

/* A rule of one class in an epoch; an immutable part of struct cf_epoch. */
struct cf_rule {
	u8 kind;			/* enum capfence_rule_kind */
	u8 n;
	struct cf_constraint *c;	/* n entries, NULL when unconstrained */
};

/* A target of an exercise decision. */
struct cf_target {
	u8 class_id;
	u8 family;			/* 4, 6 or CAPFENCE_FAMILY_VSOCK */
	u16 port;			/* vsock: 0 for a port above 65535 */
	u8 addr[16];			/* vsock: CID, then the port (be32) */
	const char *path;		/* fs classes */
	size_t path_len;
	const char *what;		/* refusals: the operation, e.g. "mount" */
	int seen;			/* errno the task sees, 0: EACCES */
	bool tracks;			/* the caller tracks what a grant admits,
					 * and counts the allow once it did
					 * (cf_exercise_admitted())
					 */
};

bool cf_constraints_contain(const struct cf_constraint *outer, u8 nouter,
			    const struct cf_constraint *inner, u8 ninner);
bool cf_constraints_admit(const struct cf_constraint *c, u8 n,
			  const struct cf_target *t);
bool cf_rule_narrows(const struct cf_rule *old, const struct cf_rule *new);
int cf_net_range_from_wire(struct capfence_net_range *r,
			   const struct capfence_net_range *wire, bool le,
			   u8 class_id);
int cf_path_check(const char *path, size_t len);

#endif /* _CAPFENCE_CONSTRAINT_H */
