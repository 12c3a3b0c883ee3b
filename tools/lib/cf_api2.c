// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the handles of the 2 interface (libcapfence.so.2).
 *
 * An epoch and an installed epoch are the library's memory behind an
 * opaque pointer, so their layout (one rule per class slot today) can
 * follow the classes without a new symbol version: the caller never
 * learns a size. Everything else the 2 interface exports is shared with
 * the 1 interface and lives with its subject (cf_client.c, cf_learn.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cf_internal.h"

int capfence_epoch_new(uint64_t epoch_id, struct capfence_epoch **out)
{
	*out = malloc(sizeof(**out));
	if (!*out)
		return -ENOMEM;
	capfence__epoch_init(*out, epoch_id);
	return 0;
}

int capfence_epoch_dup(const struct capfence_epoch *e,
		       struct capfence_epoch **out)
{
	*out = malloc(sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, e, sizeof(**out));
	return 0;
}

void capfence_epoch_free(struct capfence_epoch *e)
{
	free(e);
}

uint64_t capfence_epoch_id(const struct capfence_epoch *e)
{
	return e->epoch_id;
}

int capfence_epoch_rule(const struct capfence_epoch *e, int class_id,
			struct capfence_rule *out)
{
	if (!capfence_class_valid(class_id))
		return -EINVAL;
	*out = e->rules[class_id];
	return 0;
}

/*
 * A rule is set as its text would parse: formatting it and parsing the
 * text back refuses what capfence_rule_parse() refuses (a constraint of
 * the wrong kind, a non-canonical one, a count past the limit) with its
 * message, and stores the canonical form.
 */
int capfence_epoch_set_rule(struct capfence_epoch *e,
			    const struct capfence_rule *r, char *err,
			    size_t errlen)
{
	char text[CAPFENCE_RULE_TEXT_MAX];
	struct capfence_rule parsed;
	size_t i;

	if (!capfence_class_valid(r->class_id)) {
		capfence__seterr(err, errlen, "rule: class %u is not a class", r->class_id);
		return -EINVAL;
	}
	if (r->n > CAPFENCE_MAX_CONSTRAINTS) {
		capfence__seterr(err, errlen, "rule: %u constraints, more than %d",
				 r->n, CAPFENCE_MAX_CONSTRAINTS);
		return -EINVAL;
	}
	for (i = 0; i < r->n; i++)
		if (capfence_constraint_check(&r->constraints[i], err, errlen))
			return -EINVAL;
	if (capfence_rule_format(r, text, sizeof(text)) < 0) {
		capfence__seterr(err, errlen, "rule: class %s does not format",
				 capfence_class_name(r->class_id));
		return -EINVAL;
	}
	if (capfence_rule_parse(text, &parsed, err, errlen))
		return -EINVAL;
	e->rules[r->class_id] = parsed;
	return 0;
}

int capfence_client_epoch_info(struct capfence_client *c, uint64_t epoch_id,
			       struct capfence_epoch_info **out, char *err,
			       size_t errlen)
{
	int ret;

	/* zeroed: a reply without the epoch leaves an empty one, not garbage */
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	ret = capfence__epoch_get(c, epoch_id, *out, err, errlen);
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

const struct capfence_epoch *
capfence_epoch_info_epoch(const struct capfence_epoch_info *info)
{
	return &info->e;
}

bool capfence_epoch_info_active(const struct capfence_epoch_info *info)
{
	return info->active;
}

uint64_t capfence_epoch_info_fenced_at(const struct capfence_epoch_info *info,
				       int class_id)
{
	return capfence_class_valid(class_id) ? info->fenced_at[class_id] : 0;
}

void capfence_epoch_info_free(struct capfence_epoch_info *info)
{
	free(info);
}

struct capfence_epoch_list {
	struct capfence_epoch_info *v;
	size_t n;
};

int capfence_client_epoch_infos(struct capfence_client *c,
				struct capfence_epoch_list **out, char *err,
				size_t errlen)
{
	struct capfence_epoch_list *l = calloc(1, sizeof(*l));
	int ret;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	ret = capfence__epoch_list(c, &l->v, &l->n, err, errlen);
	if (ret) {
		free(l);
		return ret;
	}
	*out = l;
	return 0;
}

size_t capfence_epoch_list_count(const struct capfence_epoch_list *l)
{
	return l->n;
}

const struct capfence_epoch_info *
capfence_epoch_list_at(const struct capfence_epoch_list *l, size_t i)
{
	return i < l->n ? &l->v[i] : NULL;
}

void capfence_epoch_list_free(struct capfence_epoch_list *l)
{
	if (l)
		free(l->v);
	free(l);
}
