// SPDX-License-Identifier: GPL-2.0
/*
 * An in-memory capfence module (module_model.h): kernel/fleet.c's
 * cf_fleet_begin(), cf_fleet_commit() and cf_fleet_set(), and the change
 * commands' own refusals, on plain memory. Not locked (the caller's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "module_model.h"

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mm_free(struct mm *m)
{
	size_t i;

	for (i = 0; i < m->nepochs; i++)
		free(m->epochs[i].e);
	free(m->epochs);
	free(m->revoked);
	free(m->keys);
	memset(m, 0, sizeof(*m));
}

int mm_state(const struct mm *m, uint64_t now)
{
	if (!m->stale_ms)
		return CAPFENCE_FLEET_OFF;
	if (!m->confirmed_ns || now >= m->confirmed_ns + (uint64_t)m->deny_ms * 1000000ull)
		return CAPFENCE_FLEET_DENY;
	if (now >= m->confirmed_ns + (uint64_t)m->stale_ms * 1000000ull)
		return CAPFENCE_FLEET_STALE;
	return CAPFENCE_FLEET_CURRENT;
}

int mm_status(struct mm *m, struct capfence_fleet_status *st)
{
	uint64_t now = boot_ns();

	memset(st, 0, sizeof(*st));
	st->supported = true;
	st->rev = m->rev;
	st->stale_ms = m->stale_ms;
	st->deny_ms = m->deny_ms;
	st->confirmed = m->confirmed_ns != 0;
	st->age_ms = m->confirmed_ns ? (uint32_t)((now - m->confirmed_ns) / 1000000ull) : 0;
	st->state = mm_state(m, now);
	st->applied = m->applied;
	return 0;
}

int mm_set(struct mm *m, const struct capfence_fleet_set *fs, char *err, size_t errlen)
{
	uint32_t stale = m->stale_ms, deny = m->deny_ms;
	uint64_t rev = fs->flags & CAPFENCE_FLEET_SET_REV ? fs->rev : 0;
	bool fresh = fs->flags & CAPFENCE_FLEET_SET_FRESH;
	uint64_t asked = fresh && (fs->flags & CAPFENCE_FLEET_SET_ASKED) ? fs->asked_ns : 0;

	if (rev && rev < m->rev) {
		snprintf(err, errlen, "the fleet revision is below the module's");
		return -EALREADY;
	}
	if (fs->flags & CAPFENCE_FLEET_SET_BOUNDS) {
		stale = fs->stale_ms;
		deny = fs->deny_ms;
		if (deny < stale || (!stale && deny)) {
			snprintf(err, errlen, "fleet bounds: DENY_MS must be at least STALE_MS");
			return -EINVAL;
		}
	}
	if (fresh && !stale) {
		snprintf(err, errlen, "a fleet confirmation needs fleet mode (STALE_MS)");
		return -EINVAL;
	}
	if (asked > boot_ns()) {
		snprintf(err, errlen, "ASKED_NS is ahead of the module's CLOCK_BOOTTIME");
		return -EINVAL;
	}
	if (rev > m->rev)
		m->rev = rev;
	m->stale_ms = stale;
	m->deny_ms = deny;
	if (fresh) {
		uint64_t now = boot_ns(), age = (uint64_t)fs->age_ms * 1000000ull;

		m->confirmed_ns = asked ? asked : age < now ? now - age : 1;
	}
	return 0;
}

void mm_chain(const struct mm *m, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN])
{
	*seq = m->seq;
	memcpy(link, m->link, CF_FLEET_HASH_LEN);
}

int mm_chain_set(struct mm *m, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
		 char *err, size_t errlen)
{
	if (!seq)
		return 0;
	if (seq < m->seq || (seq == m->seq && memcmp(link, m->link, CF_FLEET_HASH_LEN))) {
		snprintf(err, errlen, "the fleet chain position is below the module's, or another link at it");
		return -EXDEV;
	}
	m->seq = seq;
	memcpy(m->link, link, CF_FLEET_HASH_LEN);
	return 0;
}

static struct mm_epoch *epoch_find(struct mm *m, uint64_t id)
{
	size_t i;

	for (i = 0; i < m->nepochs; i++)
		if (m->epochs[i].id == id)
			return &m->epochs[i];
	return NULL;
}

int mm_epoch_get(struct mm *m, uint64_t id, struct capfence_epoch_info *ei, char *err, size_t errlen)
{
	struct mm_epoch *e = epoch_find(m, id);

	if (!e) {
		snprintf(err, errlen, "no such epoch");
		return -ENOENT;
	}
	memset(ei, 0, sizeof(*ei));
	ei->e = *e->e;
	ei->active = e->active;
	return 0;
}

int mm_epoch_install(struct mm *m, const struct capfence_epoch *e, char *err, size_t errlen)
{
	struct mm_epoch *p;

	if (!e) {
		snprintf(err, errlen, "no rules");
		return -EINVAL;
	}
	if (epoch_find(m, e->epoch_id)) {
		snprintf(err, errlen, "the epoch is installed already");
		return -EEXIST;
	}
	p = realloc(m->epochs, (m->nepochs + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->epochs = p;
	p = &m->epochs[m->nepochs];
	p->e = malloc(sizeof(*p->e));
	if (!p->e)
		return -ENOMEM;
	*p->e = *e;
	p->id = e->epoch_id;
	p->active = false;
	m->nepochs++;
	return 0;
}

int mm_epoch_activate(struct mm *m, uint64_t id, char *err, size_t errlen)
{
	struct mm_epoch *e = epoch_find(m, id);
	size_t i;

	if (!e) {
		snprintf(err, errlen, "no such epoch");
		return -ENOENT;
	}
	for (i = 0; i < m->nepochs; i++)
		m->epochs[i].active = false;
	e->active = true;
	return 0;
}

bool mm_revoked(const struct mm *m, uint64_t cap_id)
{
	size_t i;

	for (i = 0; i < m->nrevoked; i++)
		if (m->revoked[i] == cap_id)
			return true;
	return false;
}

int mm_revoke(struct mm *m, uint64_t cap_id, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	if (mm_revoked(m, cap_id))
		return 0;	/* idempotent */
	if (m->nrevoked == m->caprevoked) {
		size_t cap = m->caprevoked ? m->caprevoked * 2 : 8;
		uint64_t *p = realloc(m->revoked, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->revoked = p;
		m->caprevoked = cap;
	}
	m->revoked[m->nrevoked++] = cap_id;
	return 0;
}

int mm_key_add(struct mm *m, uint32_t key_id)
{
	uint32_t *p = realloc(m->keys, (m->nkeys + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	m->keys = p;
	m->keys[m->nkeys++] = key_id;
	return 0;
}

int mm_key_remove(struct mm *m, uint32_t key_id, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < m->nkeys; i++) {
		if (m->keys[i] == key_id) {
			m->keys[i] = m->keys[--m->nkeys];
			return 0;
		}
	}
	snprintf(err, errlen, "no such key");
	return -ENOENT;
}

/* cf_fleet_begin(): may a change carrying rev or a chain position apply? */
static int begin(struct mm *m, uint64_t rev, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	if (ch->seq) {
		if (ch->seq == m->seq && !memcmp(ch->link, m->link, CF_FLEET_HASH_LEN)) {
			snprintf(err, errlen, "the module holds this fleet chain link already");
			return -EALREADY;
		}
		if (ch->seq != m->seq + 1 || memcmp(ch->prev, m->link, CF_FLEET_HASH_LEN)) {
			snprintf(err, errlen, "not the next link of the module's fleet chain");
			return -EXDEV;
		}
	}
	if (rev && rev <= m->rev) {
		snprintf(err, errlen, "the module has applied this fleet revision already");
		return -EALREADY;
	}
	return 0;
}

/* cf_fleet_commit() */
static void commit(struct mm *m, uint64_t rev, const struct cf_fleet_change *ch)
{
	if (ch->seq) {
		m->seq = ch->seq;
		memcpy(m->link, ch->link, CF_FLEET_HASH_LEN);
	}
	if (rev)
		m->rev = rev;
	if (rev || ch->seq)
		m->applied++;
}

int mm_apply(struct mm *m, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	/* chained: the position is the record, the store's revision is not sent */
	uint64_t rev = ch->seq ? 0 : ch->rev;
	int ret;

	if (ch->kind == CF_FLEET_KEY_ADD) {
		struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_REV, .rev = rev };

		/* the key itself is installed by hand: the position only */
		return ch->seq ? mm_chain_set(m, ch->seq, ch->link, err, errlen) :
			mm_set(m, &fs, err, errlen);
	}
	ret = begin(m, rev, ch, err, errlen);
	if (ret)
		return ret;
	switch (ch->kind) {
	case CF_FLEET_EPOCH_INSTALL:
		ret = mm_epoch_install(m, ch->epoch, err, errlen);
		break;
	case CF_FLEET_EPOCH_ACTIVATE:
		ret = mm_epoch_activate(m, ch->id, err, errlen);
		break;
	case CF_FLEET_KEY_REMOVE:
		ret = mm_key_remove(m, (uint32_t)ch->id, err, errlen);
		break;
	case CF_FLEET_REVOKE:
		ret = mm_revoke(m, ch->id, err, errlen);
		break;
	default:
		snprintf(err, errlen, "not a fleet change");
		return -EINVAL;
	}
	if (!ret)
		commit(m, rev, ch);
	return ret;
}
