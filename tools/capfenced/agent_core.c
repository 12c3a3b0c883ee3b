// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet agent's state machine (agent_core.h; docs/design.md, "Fleet").
 *
 * A change is never skipped: one that fails to apply (or to decode) is
 * retried with backoff, and until it applies the module stays below it,
 * no confirmation is sent (so the module goes stale, then denies, on its
 * own clock) and the host report says why ("failing"). On start, on a
 * module reload and every reconcile_s seconds the agent compares the
 * module's state with the fleet's and repairs it, or fails closed the same
 * way.
 *
 * Locking: as agent_core.h says (cf_lock, then state_lock).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent_core.h"

/* ---- clocks, log, state --------------------------------------------------------------- */

int64_t cfa_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t cfa_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cfa_say(struct cfa *a, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!a->ops->say)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	a->ops->say(a, line);
}

void cfa_nap(struct cfa *a, uint32_t ms)
{
	while (ms && !atomic_load(&a->stop)) {
		uint32_t step = ms < 100 ? ms : 100;
		struct timespec ts = { 0, (long)step * 1000000L };

		nanosleep(&ts, NULL);
		ms -= step;
	}
}

static void tick(struct cfa *a)
{
	if (a->ops->tick)
		a->ops->tick(a);
}

void cfa_init(struct cfa *a)
{
	pthread_mutex_init(&a->cf_lock, NULL);
	pthread_mutex_init(&a->state_lock, NULL);
	pthread_mutex_init(&a->report_lock, NULL);
	pthread_mutex_init(&a->metrics_lock, NULL);
}

void cfa_destroy(struct cfa *a)
{
	free(a->links);
	a->links = NULL;
	a->links_cap = 0;
	pthread_mutex_destroy(&a->cf_lock);
	pthread_mutex_destroy(&a->state_lock);
	pthread_mutex_destroy(&a->report_lock);
	pthread_mutex_destroy(&a->metrics_lock);
}

static void count_error(struct cfa *a, enum cf_agent_error e)
{
	pthread_mutex_lock(&a->metrics_lock);
	a->m.errors[e]++;
	pthread_mutex_unlock(&a->metrics_lock);
}

static void set_failing(struct cfa *a, uint64_t rev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_failing(struct cfa *a, uint64_t rev, const char *fmt, ...)
{
	char why[sizeof(a->failing)];
	bool news;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&a->state_lock);
	news = strcmp(why, a->failing) != 0;
	snprintf(a->failing, sizeof(a->failing), "%s", why);
	a->failing_rev = rev;
	pthread_mutex_unlock(&a->state_lock);
	if (news)	/* once per distinct failure, not on every retry */
		cfa_say(a, "FAILING: %s; retrying, no freshness confirmed until it applies", why);
}

/* The failure of the change at rev (0: of a reconcile) is over. */
static void clear_failing(struct cfa *a, uint64_t rev)
{
	bool was;

	pthread_mutex_lock(&a->state_lock);
	/* 0: a reconcile's failure; rev: a change's, at rev or below */
	was = a->failing[0] && (rev ? a->failing_rev && a->failing_rev <= rev : !a->failing_rev);
	if (was) {
		a->failing[0] = '\0';
		a->failing_rev = 0;
	}
	pthread_mutex_unlock(&a->state_lock);
	if (was)
		cfa_say(a, "recovered: the module has the fleet's changes again");
}

bool cfa_is_failing(struct cfa *a)
{
	bool f;

	pthread_mutex_lock(&a->state_lock);
	f = a->failing[0] != '\0';
	pthread_mutex_unlock(&a->state_lock);
	return f;
}

/* ---- the chain --------------------------------------------------------------------- */

/* The link of change seq (zeros: genesis); NULL below the snapshot. state_lock held. */
static const unsigned char *link_of(struct cfa *a, uint64_t seq)
{
	static const unsigned char genesis[CF_FLEET_HASH_LEN];

	if (!seq)
		return genesis;
	if (seq < a->chain_base || seq > a->chain_seq)
		return NULL;
	return seq == a->chain_base ? a->base_hash : a->links[seq - a->chain_base - 1];
}

/* Does ch follow the chain as the module has it? Else the host fails. */
static bool chain_follows(struct cfa *a, const struct cf_fleet_change *ch)
{
	uint64_t seq;
	bool ok;

	if (!a->chained)
		return true;
	pthread_mutex_lock(&a->state_lock);
	seq = a->chain_seq;
	ok = ch->seq == seq + 1 && !memcmp(ch->prev, link_of(a, seq), CF_FLEET_HASH_LEN);
	pthread_mutex_unlock(&a->state_lock);
	if (ok)
		return true;
	if (!ch->seq)
		set_failing(a, ch->rev, "rev=%" PRIu64 " refused: not chained (no \"seq\"; signed by an older capfence?)",
			    ch->rev);
	else if (ch->seq != seq + 1)
		set_failing(a, ch->rev, "rev=%" PRIu64 " out of chain: seq=%" PRIu64 " after seq=%" PRIu64
			    " (the store withheld or reordered a change)", ch->rev, ch->seq, seq);
	else
		set_failing(a, ch->rev, "rev=%" PRIu64 " out of chain: seq=%" PRIu64
			    " does not follow this host's seq=%" PRIu64 " (a forked store)",
			    ch->rev, ch->seq, seq);
	return false;
}

/* ch is in the module: the chain grows by it. */
static int chain_add(struct cfa *a, const struct cf_fleet_change *ch)
{
	int ret = 0;

	if (!a->chained)
		return 0;
	pthread_mutex_lock(&a->state_lock);
	if (a->chain_seq - a->chain_base == a->links_cap) {
		size_t cap = a->links_cap ? a->links_cap * 2 : 64;
		void *p = realloc(a->links, cap * CF_FLEET_HASH_LEN);

		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		a->links = p;
		a->links_cap = cap;
	}
	memcpy(a->links[a->chain_seq - a->chain_base], ch->link, CF_FLEET_HASH_LEN);
	a->chain_seq++;
	a->chain_rev = ch->rev;
out:
	pthread_mutex_unlock(&a->state_lock);
	if (ret)
		set_failing(a, ch->rev, "rev=%" PRIu64 ": out of memory for the chain", ch->rev);
	return ret;
}

/* The chain starts again at the snapshot b (seq 0: at genesis). */
static void chain_reset(struct cfa *a, const struct cf_fleet_base *b)
{
	pthread_mutex_lock(&a->state_lock);
	a->chain_seq = a->chain_base = b->seq;
	a->chain_rev = b->rev;
	memcpy(a->base_hash, b->hash, CF_FLEET_HASH_LEN);
	pthread_mutex_unlock(&a->state_lock);
}

/*
 * The chain as far as the module's revision: from the fleet's snapshot
 * (its seq and link) on, the store's changes up to upto (no fleet key is
 * written twice), each checked against the one before. Before a watch
 * starts from upto + 1. 0, or -1 with the host failing, or with a rebuild
 * asked when the module is below the snapshot (compaction deleted
 * changes it has not applied).
 */
static int chain_load(struct cfa *a, uint64_t upto)
{
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	size_t i, n;
	uint64_t s;
	int ret = 0;

	if (!a->chained)
		return 0;
	if (a->ops->snapshot(a, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(a, upto + 1, "the chain: %s", err);
		return -1;
	}
	if (b.seq && b.rev > upto) {
		cf_fleet_changes_free(chs, n);
		cfa_say(a, "the module (rev=%" PRIu64 ") is below the fleet's snapshot (rev=%" PRIu64
			" seq=%" PRIu64 "): rebuilding from it", upto, b.rev, b.seq);
		atomic_store(&a->rebuild_asked, true);
		return -1;
	}
	chain_reset(a, &b);
	for (i = 0; i < n && chs[i].rev <= upto && !ret; i++)
		if (!chs[i].base && (!chain_follows(a, &chs[i]) || chain_add(a, &chs[i])))
			ret = -1;
	cf_fleet_changes_free(chs, n);
	return ret;
}

uint64_t cfa_module_rev(struct cfa *a)
{
	struct capfence_fleet_status fs;
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->status(a, &fs, err, sizeof(err));
	pthread_mutex_unlock(&a->cf_lock);
	if (ret) {
		cfa_say(a, "cannot read the module's fleet state: %s", err);
		return 0;
	}
	return fs.rev;
}

/* The chain position the module holds: 0, or -1 when it cannot be read. */
static int module_chain(struct cfa *a, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN])
{
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->chain(a, seq, link, err, sizeof(err));
	pthread_mutex_unlock(&a->cf_lock);
	if (ret) {
		cfa_say(a, "cannot read the module's fleet chain: %s", err);
		return -1;
	}
	return 0;
}

/*
 * Chained: does the module hold exactly ch's link at ch's seq? What the
 * module holds is the only record of what this host applied. cf_lock held.
 */
static bool module_holds(struct cfa *a, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	unsigned char link[CF_FLEET_HASH_LEN];
	uint64_t seq;

	if (a->ops->chain(a, &seq, link, err, errlen))
		return false;
	if (seq == ch->seq && !memcmp(link, ch->link, CF_FLEET_HASH_LEN))
		return true;
	snprintf(err, errlen, "the module holds seq=%" PRIu64 ", not this change's link at seq=%" PRIu64,
		 seq, ch->seq);
	return false;
}

/* Advance the module to rev without a change (a delete, a snapshot's S). */
static int skip_to(struct cfa *a, uint64_t rev)
{
	struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_REV, .rev = rev };
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->set(a, &fs, err, sizeof(err));
	pthread_mutex_unlock(&a->cf_lock);
	if (ret && ret != -EALREADY) {
		cfa_say(a, "cannot advance the module to rev=%" PRIu64 ": %s", rev, err);
		return ret;
	}
	return 0;
}

/* Do two epochs have the same rules (by their canonical text)? */
static bool same_rules(const struct capfence_epoch *x, const struct capfence_epoch *y)
{
	char rx[CAPFENCE_RULE_TEXT_MAX], ry[CAPFENCE_RULE_TEXT_MAX];
	int cls;

	for (cls = 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		if (capfence_rule_format(&x->rules[cls], rx, sizeof(rx)) < 0 ||
		    capfence_rule_format(&y->rules[cls], ry, sizeof(ry)) < 0 ||
		    strcmp(rx, ry))
			return false;
	}
	return true;
}

static void change_id(const struct cf_fleet_change *ch, char *id, size_t len)
{
	/* cap ids as the CLI prints them (16 hex digits), other ids decimal */
	snprintf(id, len, ch->kind == CF_FLEET_REVOKE ? "%016" PRIx64 : "%" PRIu64, ch->id);
}

/*
 * Does the module hold what ch asks for, though applying it failed? A key
 * id this host never had is removed already; an epoch installed with the
 * same rules, or active already, is what the change asks. Then the
 * revision may advance: the change's effect holds. cf_lock held.
 */
static bool effect_holds(struct cfa *a, const struct cf_fleet_change *ch, int ret)
{
	struct capfence_epoch_info ei;
	char err[CAPFENCE_ERR_MAX];

	switch (ch->kind) {
	case CF_FLEET_KEY_REMOVE:
		return ret == -ENOENT;
	case CF_FLEET_EPOCH_INSTALL:
		if (a->ops->epoch_get(a, ch->id, &ei, err, sizeof(err)))
			return false;
		return ch->epoch && same_rules(&ei.e, ch->epoch);
	case CF_FLEET_EPOCH_ACTIVATE:
		return !a->ops->epoch_get(a, ch->id, &ei, err, sizeof(err)) && ei.active;
	default:
		return false;
	}
}

/* one apply, its outcome and how long it took (the lock's wait included) */
static void count_apply(struct cfa *a, const struct cf_fleet_change *ch, bool ok, int64_t t0)
{
	double s = (double)(mono_ms() - t0) / 1000.0;

	pthread_mutex_lock(&a->metrics_lock);
	cf_agent_metrics_apply(&a->m, ch->kind, ok, s);
	if (!ok)
		a->m.errors[CF_AGENT_ERR_APPLY]++;
	pthread_mutex_unlock(&a->metrics_lock);
}

/*
 * Apply one change: 0 when the module has it (applied now, or before),
 * else the error, with the host marked failing. Never skips. Chained, the
 * module applies it only as the next link of its chain, and "has it" only
 * when the position read back from the module is this change's own.
 */
static int apply(struct cfa *a, const struct cf_fleet_change *ch)
{
	char err[CAPFENCE_ERR_MAX] = "", id[24];
	int64_t t0 = mono_ms();
	bool chained = a->chained && ch->seq;
	int ret;

	change_id(ch, id, sizeof(id));
	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->apply(a, ch, err, sizeof(err));
	if (ret && ret != -EALREADY && ret != -EXDEV && effect_holds(a, ch, ret)) {
		struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_REV, .rev = ch->rev };
		char why[CAPFENCE_ERR_MAX];
		unsigned char link[CF_FLEET_HASH_LEN];
		uint64_t seq;
		int r2;

		if (!chained) {
			r2 = a->ops->set(a, &fs, why, sizeof(why));
		} else if (a->ops->chain(a, &seq, link, why, sizeof(why))) {
			r2 = -EIO;
		} else if (seq + 1 != ch->seq || memcmp(link, ch->prev, CF_FLEET_HASH_LEN)) {
			snprintf(why, sizeof(why), "the module holds seq=%" PRIu64 ", not the link before it",
				 seq);
			r2 = -EXDEV;
		} else {
			/* the module holds its effect: the position moves to it */
			r2 = a->ops->chain_set(a, ch->seq, ch->link, why, sizeof(why));
		}
		if ((!r2 || r2 == -EALREADY) && (!chained || module_holds(a, ch, why, sizeof(why)))) {
			pthread_mutex_unlock(&a->cf_lock);
			count_apply(a, ch, true, t0);
			cfa_say(a, "applied rev=%" PRIu64 " %s %s (the module had it: %s)", ch->rev,
				cf_fleet_kind_name(ch->kind), id, err);
			clear_failing(a, ch->rev);
			return 0;
		}
		snprintf(err, sizeof(err), "%s", why);
		ret = r2 ? r2 : -EXDEV;
	}
	/* chained, EALREADY is success only when the module holds this very link */
	if (chained && (!ret || ret == -EALREADY) && !module_holds(a, ch, err, sizeof(err)))
		ret = -EXDEV;
	pthread_mutex_unlock(&a->cf_lock);
	count_apply(a, ch, !ret || ret == -EALREADY, t0);
	if (!ret) {
		cfa_say(a, "applied rev=%" PRIu64 " %s %s", ch->rev, cf_fleet_kind_name(ch->kind), id);
		clear_failing(a, ch->rev);
		return 0;
	}
	if (ret == -EALREADY) {
		if (chained)
			clear_failing(a, ch->rev);
		return 0;	/* the module has it already */
	}
	set_failing(a, ch->rev, "rev=%" PRIu64 " %s %s: %s", ch->rev, cf_fleet_kind_name(ch->kind),
		    id, err);
	return ret;
}

/* ---- host report ------------------------------------------------------------------ */

static void report_locked(struct cfa *a)
{
	struct capfence_fleet_status st;
	struct cf_fleet_host h;
	char err[CAPFENCE_ERR_MAX];
	int64_t ttl = 0, now;
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->status(a, &st, err, sizeof(err));
	pthread_mutex_unlock(&a->cf_lock);
	if (ret) {
		cfa_say(a, "cannot read the module's fleet state: %s", err);
		return;
	}
	/* the lease: renewed once a heartbeat (a report on apply needs none) */
	now = cfa_now_ms();
	if (a->lease && now - a->lease_renewed >= (int64_t)a->heartbeat_ms / 2) {
		ret = a->ops->lease_keepalive(a, a->lease, &ttl, err, sizeof(err));
		if (ret) {
			cfa_say(a, "lease keepalive: %s", err);
			return;
		}
		a->lease_renewed = now;
		if (!ttl) {
			a->lease = 0;	/* expired, the report with it: a new one */
			cf_fleet_report_lost(&a->pacer);
		}
	}
	if (!a->lease) {
		if (a->ops->lease_grant(a, a->lease_ttl, &a->lease, err, sizeof(err))) {
			cfa_say(a, "lease grant: %s", err);
			a->lease = 0;
			return;
		}
		a->lease_renewed = now;
		cf_fleet_report_lost(&a->pacer);
	}
	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", a->host);
	h.applied = st.rev;
	snprintf(h.state, sizeof(h.state), "%s", capfence_fleet_state_name(st.state));
	h.stale_ms = st.stale_ms;
	h.deny_ms = st.deny_ms;
	pthread_mutex_lock(&a->state_lock);
	snprintf(h.failing, sizeof(h.failing), "%s", a->failing[0] ? a->failing : a->head_why);
	pthread_mutex_unlock(&a->state_lock);
	if (a->chained) {
		/* the position the module holds, never the agent's own count */
		pthread_mutex_lock(&a->cf_lock);
		ret = a->ops->chain(a, &h.seq, h.link, err, sizeof(err));
		pthread_mutex_unlock(&a->cf_lock);
		if (ret) {
			cfa_say(a, "cannot read the module's fleet chain: %s", err);
			return;
		}
		/* the store revision of that change, an index for people */
		pthread_mutex_lock(&a->state_lock);
		h.applied = h.seq == a->chain_seq ? a->chain_rev : 0;
		pthread_mutex_unlock(&a->state_lock);
	}
	/*
	 * What the report says changed: now (`--wait` counts the host at
	 * once, and never by a report that no longer holds); else only
	 * every --report-every.
	 */
	if (!cf_fleet_report_due(&a->pacer, &h, now))
		return;
	h.time_ms = cf_fleet_wall_ms();
	if (a->ops->report(a, &h, a->lease, err, sizeof(err)))
		cfa_say(a, "host report: %s", err);
	else
		cf_fleet_report_done(&a->pacer, &h, now);
}

void cfa_report(struct cfa *a)
{
	pthread_mutex_lock(&a->report_lock);
	report_locked(a);
	pthread_mutex_unlock(&a->report_lock);
}

/* ---- the watch ------------------------------------------------------------------- */

/* A failed change ends the stream: the watch restarts from it after a backoff. */
int cfa_on_event(const struct cf_etcd_event *ev, void *arg)
{
	struct cfa *a = arg;
	struct cf_fleet_change ch;
	char err[CAPFENCE_ERR_MAX];
	uint64_t rev = (uint64_t)ev->kv->mod_rev;
	int ret;

	if (a->chained) {
		/*
		 * A revision is an index to watch from, never evidence: one not
		 * above the last on this stream is dropped (the chain, read
		 * again on a resync, decides what the module lacks).
		 */
		if (rev <= a->stream_rev) {
			cfa_say(a, "rev=%" PRIu64 ": %s is not above the stream's rev=%" PRIu64
				": dropped", rev, ev->kv->key, a->stream_rev);
			return 0;
		}
		a->stream_rev = rev;
	}
	if (ev->deleted) {
		/* the fleet's keys are never deleted: a delete carries no change */
		cfa_say(a, "rev=%" PRIu64 ": delete of %s, nothing to apply", rev, ev->kv->key);
		/*
		 * Chained, the module's revision is only ever a change it
		 * applied: a store could send a delete past a change it
		 * withholds, and the watch would start past that change.
		 */
		return a->chained || !skip_to(a, rev) ? 0 : -EAGAIN;
	}
	ret = a->ops->decode(a, ev->kv->key, ev->kv->value, &ch, err, sizeof(err));
	if (ret) {
		count_error(a, CF_AGENT_ERR_DECODE);
		set_failing(a, rev, "rev=%" PRIu64 " %s: %s", rev,
			    ret == -EPERM ? "refused" : "cannot be decoded", err);
		return -EAGAIN;
	}
	ch.rev = rev;
	if (a->chained && ch.seq && ch.seq <= a->chain_seq) {
		const unsigned char *have;
		bool held;

		pthread_mutex_lock(&a->state_lock);
		have = link_of(a, ch.seq);
		held = have && !memcmp(have, ch.link, CF_FLEET_HASH_LEN);
		pthread_mutex_unlock(&a->state_lock);
		if (held) {	/* the module holds it already */
			cf_fleet_change_release(&ch);
			return 0;
		}
	}
	if (!chain_follows(a, &ch)) {
		cf_fleet_change_release(&ch);
		return -EAGAIN;
	}
	ret = apply(a, &ch);
	if (!ret)
		ret = chain_add(a, &ch);
	cf_fleet_change_release(&ch);
	cfa_report(a);
	return ret ? -EAGAIN : 0;
}

static bool watch_stop(void *arg)
{
	struct cfa *a = arg;

	return atomic_load(&a->stop) || atomic_exchange(&a->restart, false);
}

static int ensure_state(struct cfa *a, const struct cf_fleet_change *chs, size_t n, uint64_t upto,
			const char *what, uint64_t fail_rev, size_t *repaired);

/*
 * After a compaction (etcd's, or the fleet's into its snapshot): every
 * change at one revision S. A module below the snapshot is made to hold
 * the snapshot's state (ensure_state()) and advanced to its revision, the
 * chain starting at its seq and link; then each change past it is applied
 * in order, never past one that did not apply.
 */
int cfa_rebuild(struct cfa *a)
{
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	uint64_t s, r0 = cfa_module_rev(a);
	size_t i, n, applied = 0;

	if (a->ops->snapshot(a, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(a, r0 + 1, "snapshot: %s", err);
		return -1;
	}
	/*
	 * The chain moves to the snapshot only once the module holds its
	 * state: a host that reports the snapshot's seq, or that the head
	 * confirms, has every revocation folded into it.
	 */
	if (b.seq && b.rev > r0) {
		if (ensure_state(a, chs, n, b.rev, "snapshot", b.rev, &applied) || skip_to(a, b.rev)) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
		cfa_say(a, "applied the fleet's snapshot: seq=%" PRIu64 " rev=%" PRIu64 " (%zu entries the module lacked)",
			b.seq, b.rev, applied);
		r0 = b.rev;
	}
	chain_reset(a, &b);
	for (i = 0; i < n; i++) {
		if (chs[i].base)
			continue;
		if (!chain_follows(a, &chs[i])) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
		if (chs[i].rev > r0) {	/* else applied before */
			if (apply(a, &chs[i])) {
				cf_fleet_changes_free(chs, n);
				return -1;	/* never past a change that did not apply */
			}
			applied++;
		}
		if (chain_add(a, &chs[i])) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
	}
	cf_fleet_changes_free(chs, n);
	if (a->chained)
		a->watch_from = s + 1;	/* the module stays at the last change */
	else if (skip_to(a, s))
		return -1;
	cfa_say(a, "rebuilt from a snapshot at rev=%" PRIu64 " (%zu changes past rev=%" PRIu64 ")",
		s, applied, r0);
	clear_failing(a, s);	/* every change up to s holds */
	cfa_report(a);
	return 0;
}

/* A resync's failure: cleared only by a resync that succeeds. */
#define SYNC_FAIL	UINT64_MAX

/*
 * Chained: bring the module to the store's chain, by the position the
 * module holds (its seq and link), never by a revision. A module below
 * the fleet's snapshot is made to hold the snapshot's state and moved to
 * its position; then each change past the module's position is applied
 * in chain order. The module's own link must be in the store's chain:
 * a store that forked, or was restored from a backup taken before
 * changes the module holds, fails the host closed (it confirms nothing,
 * and its report says why) until the fleet's chain reaches it again.
 * The watch then starts past the revision read (an index).
 */
int cfa_chain_sync(struct cfa *a)
{
	static const unsigned char genesis[CF_FLEET_HASH_LEN];
	unsigned char mlink[CF_FLEET_HASH_LEN];
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	size_t i, n, applied = 0, repaired = 0;
	uint64_t s, mseq;
	int ret;

	if (module_chain(a, &mseq, mlink))
		return -1;
	if (a->ops->snapshot(a, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(a, SYNC_FAIL, "the chain: %s", err);
		return -1;
	}
	if (b.seq && mseq < b.seq) {
		if (ensure_state(a, chs, n, b.rev, "snapshot", SYNC_FAIL, &repaired))
			goto fail;
		pthread_mutex_lock(&a->cf_lock);
		ret = a->ops->chain_set(a, b.seq, b.hash, err, sizeof(err));
		pthread_mutex_unlock(&a->cf_lock);
		if (ret) {
			set_failing(a, SYNC_FAIL, "snapshot seq=%" PRIu64 ": %s", b.seq, err);
			goto fail;
		}
		cfa_say(a, "applied the fleet's snapshot: seq=%" PRIu64 " rev=%" PRIu64 " (%zu entries the module lacked)",
			b.seq, b.rev, repaired);
		mseq = b.seq;
		memcpy(mlink, b.hash, CF_FLEET_HASH_LEN);
	}
	if (mseq == b.seq && memcmp(mlink, b.seq ? b.hash : genesis, CF_FLEET_HASH_LEN)) {
		set_failing(a, SYNC_FAIL, "the module's seq=%" PRIu64 " is not the store's there (a forked or restored store)",
			    mseq);
		goto fail;
	}
	chain_reset(a, &b);
	for (i = 0; i < n; i++) {
		const struct cf_fleet_change *ch = &chs[i];

		if (ch->base)
			continue;
		if (!chain_follows(a, ch))
			goto fail;
		if (ch->seq <= mseq) {
			if (ch->seq == mseq && memcmp(ch->link, mlink, CF_FLEET_HASH_LEN)) {
				set_failing(a, SYNC_FAIL, "the store's change at seq=%" PRIu64
					    " is not the one the module holds (a forked or restored store)",
					    mseq);
				goto fail;
			}
		} else {
			if (apply(a, ch))
				goto fail;	/* never past a change that did not apply */
			applied++;
		}
		if (chain_add(a, ch))
			goto fail;
	}
	if (a->chain_seq < mseq) {
		set_failing(a, SYNC_FAIL, "the module holds seq=%" PRIu64 ", the store's chain ends at seq=%" PRIu64
			    " (a store restored from a backup, or rolled back)", mseq, a->chain_seq);
		goto fail;
	}
	cf_fleet_changes_free(chs, n);
	a->watch_from = s + 1;
	if (applied)
		cfa_say(a, "caught up with the fleet's chain at seq=%" PRIu64 " (%zu changes applied)",
			a->chain_seq, applied);
	clear_failing(a, SYNC_FAIL);
	cfa_report(a);
	return 0;
fail:
	cf_fleet_changes_free(chs, n);
	return -1;
}

void *cfa_watch_main(void *arg)
{
	struct cfa *a = arg;
	char err[CAPFENCE_ERR_MAX];
	uint32_t backoff = 200, retry = CFA_RETRY_MIN_MS;
	bool failing = false;

	while (!atomic_load(&a->stop)) {
		uint64_t from = cfa_module_rev(a) + 1;

		if (a->chained) {
			atomic_store(&a->restart, false);
			atomic_store(&a->rebuild_asked, false);
			if (cfa_chain_sync(a)) {
				cfa_nap(a, retry);
				retry = retry < CFA_RETRY_MAX_MS ? retry * 2 : CFA_RETRY_MAX_MS;
				continue;
			}
			from = a->watch_from;
			a->stream_rev = from - 1;
			goto watch;
		}
		if (atomic_exchange(&a->rebuild_asked, false) && cfa_rebuild(a)) {
			cfa_nap(a, retry);
			retry = retry < CFA_RETRY_MAX_MS ? retry * 2 : CFA_RETRY_MAX_MS;
			continue;
		}
		from = cfa_module_rev(a) + 1;
		if (a->watch_from > from)
			from = a->watch_from;
		atomic_store(&a->restart, false);
		if (chain_load(a, from - 1)) {
			cfa_nap(a, retry);
			retry = retry < CFA_RETRY_MAX_MS ? retry * 2 : CFA_RETRY_MAX_MS;
			continue;
		}
watch:;
		int64_t compact = 0, t0 = cfa_now_ms();
		int ret;

		ret = a->ops->watch(a, from, cfa_on_event, watch_stop, &compact, err, sizeof(err));
		if (atomic_load(&a->stop))
			break;
		if (cfa_now_ms() - t0 > 10000) {	/* it was up: a new failure */
			backoff = 200;
			failing = false;
		}
		if (ret == -ECANCELED && compact) {
			cfa_say(a, "watch from rev=%" PRIu64 ": compacted at rev=%" PRId64 ", rebuilding",
				from, compact);
			if (a->chained) {
				retry = CFA_RETRY_MIN_MS;	/* cfa_chain_sync() on the way round */
			} else if (cfa_rebuild(a)) {
				cfa_nap(a, retry);
				retry = retry < CFA_RETRY_MAX_MS ? retry * 2 : CFA_RETRY_MAX_MS;
			} else {
				retry = CFA_RETRY_MIN_MS;
			}
			continue;
		}
		if (ret == -EAGAIN) {
			/* a change did not apply: from it again, after a backoff */
			cfa_nap(a, retry);
			retry = retry < CFA_RETRY_MAX_MS ? retry * 2 : CFA_RETRY_MAX_MS;
			continue;
		}
		retry = CFA_RETRY_MIN_MS;
		if (!ret) {
			if (a->chained)
				cfa_say(a, "restarting the watch: resyncing with the fleet's chain");
			else
				cfa_say(a, "restarting the watch from rev=%" PRIu64, cfa_module_rev(a) + 1);
			backoff = 200;
			failing = false;
			continue;
		}
		if (!failing || backoff >= 5000)	/* not every retry */
			cfa_say(a, "watch from rev=%" PRIu64 ": %s", from, err);
		failing = true;
		cfa_nap(a, backoff);
		backoff = backoff < 5000 ? backoff * 2 : 5000;
	}
	return NULL;
}

/* ---- module reload and reconciliation ------------------------------------------- */

static int set_bounds(struct cfa *a, char *err, size_t errlen)
{
	struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_BOUNDS,
					 .stale_ms = a->stale_ms, .deny_ms = a->deny_ms };

	return a->ops->set(a, &fs, err, errlen);
}

/*
 * The module as the agent left it? A reloaded module (the handle fails,
 * or fleet mode is off, or its revision went back) is re-armed: bounds set
 * again (it denies until the first confirmation) and the watch replays
 * the fleet from its revision + 1. Returns the module's revision (chained:
 * its seq), or -1 when it cannot be read (no confirmation then).
 */
static int64_t check_module(struct cfa *a)
{
	struct capfence_fleet_status st;
	char err[CAPFENCE_ERR_MAX];
	uint64_t mseq = 0;
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->status(a, &st, err, sizeof(err));
	if (ret) {
		/* a reloaded module is a new generic netlink family: reopen */
		if (!a->ops->reopen || a->ops->reopen(a, err, sizeof(err))) {
			pthread_mutex_unlock(&a->cf_lock);
			if (!a->module_gone)
				cfa_say(a, "the module cannot be reached: %s; waiting for it", err);
			a->module_gone = true;
			return -1;
		}
		ret = a->ops->status(a, &st, err, sizeof(err));
		if (ret) {
			pthread_mutex_unlock(&a->cf_lock);
			cfa_say(a, "cannot read the module's fleet state: %s", err);
			return -1;
		}
	}
	a->module_gone = false;
	if (a->chained) {
		unsigned char link[CF_FLEET_HASH_LEN];

		if (a->ops->chain(a, &mseq, link, err, sizeof(err))) {
			pthread_mutex_unlock(&a->cf_lock);
			cfa_say(a, "cannot read the module's fleet chain: %s", err);
			return -1;
		}
	}
	if (!st.stale_ms || st.rev < a->known_rev || mseq < a->known_seq) {
		cfa_say(a, "the module was reloaded or reset (rev=%" PRIu64 ", fleet mode %s): re-arming fleet mode and replaying the fleet",
			st.rev, st.stale_ms ? "on" : "off");
		if (set_bounds(a, err, sizeof(err))) {
			pthread_mutex_unlock(&a->cf_lock);
			cfa_say(a, "cannot set the fleet bounds: %s", err);
			return -1;
		}
		a->known_rev = st.rev;
		a->known_seq = mseq;
		/*
		 * The module has none of the chain: until the watch has
		 * replayed it, the head finds this host behind and confirms
		 * nothing, and a change still in flight on the old stream
		 * does not follow.
		 */
		chain_reset(a, &(struct cf_fleet_base){ 0 });
		a->watch_from = 0;
		atomic_store(&a->rearm, true);
		atomic_store(&a->restart, true);
	}
	if (st.rev > a->known_rev)
		a->known_rev = st.rev;
	if (mseq > a->known_seq)
		a->known_seq = mseq;
	pthread_mutex_unlock(&a->cf_lock);
	/* chained, the position is what the module has applied */
	return (int64_t)(a->chained ? mseq : st.rev);
}

/*
 * Make the module hold the fleet's state in chs up to revision upto:
 * every epoch installed with the fleet's rules, the newest activation
 * active, every revocation recorded (REVOKE is idempotent), every removed
 * key absent. What cannot be made to hold (an epoch whose rules differ)
 * fails the host closed (set_failing() at fail_rev: 0 for a reconcile,
 * which the next one clears; the snapshot's revision for a rebuild, which
 * only a change applied at or past it clears), the message starting with
 * what. *repaired: the entries the module lacked. 0 when the module holds
 * it all.
 */
static int ensure_state(struct cfa *a, const struct cf_fleet_change *chs, size_t n, uint64_t upto,
			const char *what, uint64_t fail_rev, size_t *repaired)
{
	const struct cf_fleet_change *act = NULL;
	char err[CAPFENCE_ERR_MAX];
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&a->cf_lock);
	for (i = 0; i < n && !ret; i++) {
		const struct cf_fleet_change *ch = &chs[i];
		struct capfence_epoch_info ei;
		char id[24];

		if (ch->rev > upto)
			break;
		err[0] = '\0';
		change_id(ch, id, sizeof(id));
		switch (ch->kind) {
		case CF_FLEET_EPOCH_INSTALL:
			ret = a->ops->epoch_get(a, ch->id, &ei, err, sizeof(err));
			if (ret == -ENOENT) {
				ret = a->ops->epoch_install(a, ch->epoch, err, sizeof(err));
				*repaired += !ret;
			} else if (!ret && !same_rules(&ei.e, ch->epoch)) {
				snprintf(err, sizeof(err), "the module's rules differ from the fleet's");
				ret = -EEXIST;
			}
			break;
		case CF_FLEET_EPOCH_ACTIVATE:
			act = ch;
			break;
		case CF_FLEET_REVOKE:
			ret = a->ops->revoke(a, ch->id, err, sizeof(err));
			break;
		case CF_FLEET_KEY_REMOVE:
			ret = a->ops->key_remove(a, (uint32_t)ch->id, err, sizeof(err));
			if (!ret) {
				cfa_say(a, "%s: key %s was back in the module: removed", what, id);
				(*repaired)++;
			} else if (ret == -ENOENT) {
				ret = 0;
			}
			break;
		default:
			break;
		}
		if (ret)
			set_failing(a, fail_rev, "%s: rev=%" PRIu64 " %s %s: %s", what, ch->rev,
				    cf_fleet_kind_name(ch->kind), id, err);
	}
	if (!ret && act) {
		struct capfence_epoch_info ei;

		ret = a->ops->epoch_get(a, act->id, &ei, err, sizeof(err));
		if (!ret && !ei.active) {
			ret = a->ops->epoch_activate(a, act->id, err, sizeof(err));
			*repaired += !ret;
		}
		if (ret)
			set_failing(a, fail_rev, "%s: rev=%" PRIu64 " epoch_activate %" PRIu64 ": %s",
				    what, act->rev, act->id, err);
	}
	pthread_mutex_unlock(&a->cf_lock);
	return ret ? -1 : 0;
}

/*
 * Compare the module with the fleet (its snapshot and the changes past
 * it) up to the module's revision (chained: its seq), and repair
 * (ensure_state()). 0 when the module agrees (after repairs).
 */
int cfa_reconcile(struct cfa *a, uint64_t upto)
{
	struct cf_fleet_base b;
	struct cf_fleet_change *chs;
	char err[CAPFENCE_ERR_MAX];
	size_t n, repaired = 0;
	uint64_t s;
	int ret;

	if (a->ops->snapshot(a, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(a, 0, "reconcile: %s", err);
		count_error(a, CF_AGENT_ERR_RECONCILE);
		return -1;
	}
	if (a->chained) {
		/* upto is the module's seq: as far as the change at it (a resync judges the rest) */
		size_t i;
		uint64_t seq = upto;

		upto = seq && seq == b.seq ? b.rev : 0;
		for (i = 0; i < n && !upto; i++)
			if (!chs[i].base && chs[i].seq == seq)
				upto = chs[i].rev;
	}
	ret = ensure_state(a, chs, n, upto, "reconcile", 0, &repaired);
	cf_fleet_changes_free(chs, n);
	pthread_mutex_lock(&a->metrics_lock);
	a->m.reconciles++;
	a->m.repaired += repaired;
	if (ret)
		a->m.errors[CF_AGENT_ERR_RECONCILE]++;
	pthread_mutex_unlock(&a->metrics_lock);
	if (repaired)
		cfa_say(a, "reconcile: %zu change%s repaired in the module", repaired, repaired == 1 ? "" : "s");
	if (!ret)
		clear_failing(a, 0);
	return ret;
}

/* ---- the heartbeat ------------------------------------------------------------------ */

/* Why the head stops confirmations ("" clears); said once per kind. */
static void head_note(struct cfa *a, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void head_note(struct cfa *a, int kind, const char *fmt, ...)
{
	char why[sizeof(a->head_why)] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&a->state_lock);
	snprintf(a->head_why, sizeof(a->head_why), "%s", why);
	pthread_mutex_unlock(&a->state_lock);
	if (kind != a->head_kind)
		cfa_say(a, kind ? "HEAD: %s; no freshness confirmed until it clears" : "head: %s",
			kind ? why : "the module has the fleet's head again");
	a->head_kind = kind;
}

enum { HEAD_OK, HEAD_UNREAD, HEAD_ROLLBACK, HEAD_BEHIND, HEAD_FORK, HEAD_OLD };

/*
 * Chained: may the module be confirmed current, and as of which instant?
 * The head verifies, is not below one seen before, and the module holds
 * the chain up to it: its position (read back from the module) is at or
 * past the head's, with the head's link there. With --require-head the
 * confirmation is also dated from when the head was signed, on the
 * module's clock: a head is anchored at first sight (CLOCK_BOOTTIME then,
 * less its age on the wall clock then) and never dated later than that,
 * so a frozen head goes stale on its own however the wall clock is set
 * afterwards; a head whose signed time goes backwards is refused.
 * *behind: the module lacks changes the head has.
 */
static bool head_allows(struct cfa *a, uint64_t *asked, bool *behind)
{
	unsigned char mlink[CF_FLEET_HASH_LEN];
	struct cf_fleet_head hd;
	char err[CAPFENCE_ERR_MAX];
	int64_t wall = cf_fleet_wall_ms(), age;
	const unsigned char *link;
	uint64_t seq, mseq;
	bool fork;
	int ret;

	*behind = false;
	ret = a->ops->head(a, &hd, err, sizeof(err));
	if (ret == -ENOENT && !a->require_head) {
		memset(&hd, 0, sizeof(hd));	/* no change signed yet: genesis */
	} else if (ret) {
		head_note(a, HEAD_UNREAD, "the fleet head: %s", err);
		return false;
	}
	if (hd.seq < a->head_seen) {
		head_note(a, HEAD_ROLLBACK, "the store's head went back from seq=%" PRIu64 " to seq=%" PRIu64
			  " (a rollback)", a->head_seen, hd.seq);
		return false;
	}
	a->head_seen = hd.seq;
	if (module_chain(a, &mseq, mlink)) {
		head_note(a, HEAD_UNREAD, "the module's fleet chain cannot be read");
		return false;
	}
	pthread_mutex_lock(&a->state_lock);
	seq = a->chain_seq;
	link = hd.seq <= seq ? link_of(a, hd.seq) : NULL;
	fork = hd.seq && hd.seq <= seq && (!link || memcmp(link, hd.hash, CF_FLEET_HASH_LEN));
	pthread_mutex_unlock(&a->state_lock);
	if (hd.seq == mseq && memcmp(mlink, hd.hash, CF_FLEET_HASH_LEN))
		fork = true;
	if (mseq < hd.seq || seq != mseq) {
		*behind = true;
		head_note(a, HEAD_BEHIND, "behind the fleet head: seq=%" PRIu64 " of seq=%" PRIu64, mseq, hd.seq);
		return false;
	}
	if (fork) {
		head_note(a, HEAD_FORK, "the fleet head's seq=%" PRIu64 " is not the change this host has there (a forked store)",
			  hd.seq);
		return false;
	}
	if (!a->require_head) {
		head_note(a, HEAD_OK, NULL);
		return true;
	}
	if (a->anchor.have && hd.time_ms < a->anchor.time_ms) {
		head_note(a, HEAD_ROLLBACK, "the fleet head's signed time went back from %" PRId64 " to %" PRId64
			  " (a replayed head)", a->anchor.time_ms, hd.time_ms);
		return false;
	}
	if (!a->anchor.have || hd.seq != a->anchor.seq || hd.time_ms != a->anchor.time_ms) {
		/* first sight: its age on the wall clock now, once */
		uint64_t nb = cfa_boot_ns();

		age = wall - hd.time_ms;
		if (age < 0)
			age = 0;	/* the signer's clock is ahead: dated now */
		a->anchor.have = true;
		a->anchor.seq = hd.seq;
		a->anchor.time_ms = hd.time_ms;
		a->anchor.signed_ns = nb > (uint64_t)age * 1000000ull ? nb - (uint64_t)age * 1000000ull : 1;
	}
	age = (int64_t)((cfa_boot_ns() - a->anchor.signed_ns) / 1000000ull);
	if (age >= (int64_t)a->stale_ms) {
		head_note(a, HEAD_OLD, "the fleet head is %" PRId64 " ms old, signed at %" PRId64
			  " (frozen, or no `capfence fleet head --every` runs)", age, hd.time_ms);
		return false;
	}
	if (*asked > a->anchor.signed_ns)
		*asked = a->anchor.signed_ns;
	head_note(a, HEAD_OK, NULL);
	return true;
}

/*
 * After a beat's verdict: ready the first time the module says it is in
 * fleet mode and current; a status line from then on.
 */
static void notify_state(struct cfa *a)
{
	struct capfence_fleet_status st;
	char err[CAPFENCE_ERR_MAX], line[80];
	bool failing = cfa_is_failing(a), ready, now_ready;
	int ret;

	pthread_mutex_lock(&a->cf_lock);
	ret = a->ops->status(a, &st, err, sizeof(err));
	pthread_mutex_unlock(&a->cf_lock);
	if (ret)
		return;
	now_ready = st.stale_ms && st.state == CAPFENCE_FLEET_CURRENT && !failing;
	pthread_mutex_lock(&a->metrics_lock);
	ready = a->m.ready;
	if (!ready && now_ready)
		a->m.ready = true;
	pthread_mutex_unlock(&a->metrics_lock);
	if (!ready && now_ready)
		cfa_say(a, "ready: the module is in fleet mode and current at rev=%" PRIu64, st.rev);
	if (failing)
		snprintf(line, sizeof(line), "failing: a change does not apply (capfence fleet status says which)");
	else
		snprintf(line, sizeof(line), "fleet %s", capfence_fleet_state_name(st.state));
	if (a->ops->notify)
		a->ops->notify(a, !ready && now_ready, line);
}

static void notify_line(struct cfa *a, const char *line)
{
	if (a->ops->notify)
		a->ops->notify(a, false, line);
}

/*
 * A reconcile failed (a store that holds an unsigned change, say): only a
 * reconcile that passes clears it, so the next one comes after a backoff
 * (CFA_RETRY_MIN_MS doubling, at most the period, or a minute with none),
 * at the first heartbeat past it, not a period later: a store repaired
 * soon is a host current again soon. The cap keeps a fleet of hosts from
 * reading a bad store's whole log more often than that.
 */
static void reconcile_backoff(struct cfa *a)
{
	uint32_t cap = a->reconcile_s ? a->reconcile_s * 1000 : CFA_RECONCILE_RETRY_MAX_MS;

	if (!a->reconcile_retry_ms)
		a->reconcile_retry_ms = CFA_RETRY_MIN_MS;
	else if (a->reconcile_retry_ms < cap / 2)
		a->reconcile_retry_ms *= 2;
	else
		a->reconcile_retry_ms = cap;
	a->next_reconcile_retry = cfa_now_ms() + a->reconcile_retry_ms;
}

void cfa_beat(struct cfa *a)
{
	uint64_t f = 0, store = 0, applied, asked;
	char err[CAPFENCE_ERR_MAX];
	int64_t mrev;
	int ret;

	tick(a);
	mrev = check_module(a);
	if (mrev < 0) {
		count_error(a, CF_AGENT_ERR_MODULE);
		notify_line(a, "the module cannot be reached");
		return;
	}
	/*
	 * Read before the store is asked: the module dates the
	 * confirmation from this instant, so no stall or suspend
	 * between here and FLEET_SET extends its bounds.
	 */
	asked = cfa_boot_ns();
	if (a->chained) {
		/*
		 * The signed head says what the module must have
		 * (head_allows): one key read per beat, however long the
		 * fleet's history.
		 */
		f = 0;
	} else if (a->ops->latest(a, &f, &store, err, sizeof(err))) {
		if (!a->store_down)	/* once per outage */
			cfa_say(a, "heartbeat: %s; no confirmations until it answers", err);
		a->store_down = true;
		count_error(a, CF_AGENT_ERR_ETCD);
		notify_line(a, "etcd does not answer: no confirmations");
		return;
	}
	tick(a);	/* each etcd request is bounded by its timeout */
	if (a->store_down)
		cfa_say(a, "heartbeat: etcd answers again");
	a->store_down = false;
	applied = a->chained ? (uint64_t)mrev : cfa_module_rev(a);
	if (applied >= f && (atomic_load(&a->rearm) ||
			     (a->reconcile_s && cfa_now_ms() >= a->next_reconcile) ||
			     (a->reconcile_retry_ms && cfa_now_ms() >= a->next_reconcile_retry))) {
		/* caught up (after a reload: replayed): compare and repair */
		atomic_store(&a->rearm, false);
		a->next_reconcile = cfa_now_ms() + (int64_t)a->reconcile_s * 1000;
		if (cfa_reconcile(a, applied))
			reconcile_backoff(a);
		else
			a->reconcile_retry_ms = 0;
		tick(a);
	}
	if (a->chained && !cfa_is_failing(a)) {
		bool behind;

		if (!head_allows(a, &asked, &behind)) {
			if (behind && applied == a->last_applied && ++a->lag_beats >= CFA_WATCH_LAG_BEATS) {
				/* a snapshot: the store may withhold the change from a watch */
				cfa_say(a, "the module is behind the fleet head: rebuilding from a snapshot");
				atomic_store(&a->rebuild_asked, true);
				atomic_store(&a->restart, true);
				a->lag_beats = 0;
			}
			a->last_applied = applied;
			cfa_report(a);
			notify_state(a);
			return;
		}
	}
	if (applied >= f && !cfa_is_failing(a)) {
		/*
		 * No fleet change lies in (f, store]: the module is
		 * current as of the store's revision, which becomes its
		 * revision (as after a snapshot) with the confirmation.
		 */
		struct capfence_fleet_set fs = {
			.flags = CAPFENCE_FLEET_SET_FRESH | CAPFENCE_FLEET_SET_ASKED |
				 (store > applied && !a->chained ? CAPFENCE_FLEET_SET_REV : 0),
			.rev = store,
			.asked_ns = asked,
		};

		pthread_mutex_lock(&a->cf_lock);
		ret = a->ops->set(a, &fs, err, sizeof(err));
		if (ret == -EALREADY && (fs.flags & CAPFENCE_FLEET_SET_REV)) {
			/* the watch applied a newer change meanwhile */
			fs.flags = CAPFENCE_FLEET_SET_FRESH | CAPFENCE_FLEET_SET_ASKED;
			ret = a->ops->set(a, &fs, err, sizeof(err));
		}
		pthread_mutex_unlock(&a->cf_lock);
		if (ret) {
			cfa_say(a, "cannot confirm freshness: %s", err);
			count_error(a, CF_AGENT_ERR_CONFIRM);
		} else {
			pthread_mutex_lock(&a->metrics_lock);
			a->m.confirmations++;
			pthread_mutex_unlock(&a->metrics_lock);
		}
		notify_state(a);
		a->lag_beats = 0;
	} else if (cfa_is_failing(a)) {
		a->lag_beats = 0;	/* the watch retries the change itself */
		notify_state(a);
	} else if (applied == a->last_applied && ++a->lag_beats >= CFA_WATCH_LAG_BEATS) {
		/* the store has rev=f, the watch delivers nothing: a dead stream */
		cfa_say(a, "the module is at rev=%" PRIu64 ", the fleet at rev=%" PRIu64
			": restarting the watch", applied, f);
		atomic_store(&a->restart, true);
		a->lag_beats = 0;
	} else if (applied != a->last_applied) {
		a->lag_beats = 0;
	}
	a->last_applied = applied;
	cfa_report(a);
}

void cfa_heartbeat_loop(struct cfa *a)
{
	while (!atomic_load(&a->stop)) {
		int64_t t0 = cfa_now_ms(), spent;
		uint32_t ms;

		cfa_beat(a);
		tick(a);
		spent = cfa_now_ms() - t0;
		/* the sleep, feeding the watchdog */
		ms = spent < a->heartbeat_ms ? (uint32_t)(a->heartbeat_ms - spent) : 0;
		while (ms && !atomic_load(&a->stop)) {
			uint32_t step = ms < 100 ? ms : 100;

			tick(a);
			cfa_nap(a, step);
			ms -= step;
		}
	}
}
