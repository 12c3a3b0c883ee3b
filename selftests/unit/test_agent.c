// SPDX-License-Identifier: GPL-2.0
/*
 * capfenced's state machine (tools/capfenced/agent_core.c), driven without
 * a kernel or an etcd: the module is selftests/fleet/module_model.c, the
 * store a fake that holds a chain of changes, answers the head and the
 * snapshot, and keeps the last host report. The watch is driven by hand
 * (cfa_chain_sync() as the watch thread runs it on every start, then the
 * store's events through cfa_on_event(), each passing a "proxy" that may
 * rewrite its revision), the heartbeat by cfa_beat().
 *
 * The three histories of an unsigned revision deciding "applied": a
 * revoke's revision rewritten to 1; a harmless change's rewritten to
 * 10^15 once; etcd restored from a backup taken before a revoke. After
 * every step the property is checked: a revoke is never acknowledged
 * (the host's report counted as `capfence fleet revoke --wait` counts it,
 * tools/capfence/fleet.c host_lags()) nor confirmed current by a beat
 * after it was committed, unless the module enforces it; at the end each
 * revoke is enforced or the host's report says why not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "agent_core.h"
#include "module_model.h"

#define MAXLOG	32
#define PREFIX	"/capfence/"

struct revoke {
	uint64_t id, seq;
	unsigned char link[CF_FLEET_HASH_LEN];
	uint64_t committed_ns;
};

struct fake {
	struct cfa a;
	struct mm m;
	/* the store: the chain (log[i] is seq i + 1), its keys and values */
	struct cf_fleet_change log[MAXLOG];
	char key[MAXLOG][64], value[MAXLOG][200];
	size_t n;
	uint64_t rev;			/* the store's revision */
	/* a backup of it */
	struct cf_fleet_change blog[MAXLOG];
	char bkey[MAXLOG][64], bvalue[MAXLOG][200];
	size_t bn;
	uint64_t brev;
	/* the proxy between the store and the host's watch: the revision it shows */
	uint64_t (*proxy)(struct fake *f, size_t i, uint64_t rev);
	uint64_t cursor;		/* the watch stream's next revision */
	bool stream_up;
	/* the host's last report as the store has it */
	struct cf_fleet_host report;
	unsigned reports, snapshots;
	const char *snapshot_err;	/* the full read fails with this */
	/* every revoke committed, lost ones too */
	struct revoke rv[MAXLOG];
	size_t nrv;
	char why[400];
};

static struct fake *F(struct cfa *a)
{
	return a->ctx;
}

/* ---- the module ---- */

static int m_status(struct cfa *a, struct capfence_fleet_status *st, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return mm_status(&F(a)->m, st);
}

static int m_set(struct cfa *a, const struct capfence_fleet_set *fs, char *err, size_t errlen)
{
	return mm_set(&F(a)->m, fs, err, errlen);
}

static int m_chain(struct cfa *a, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN],
		   char *err, size_t errlen)
{
	(void)err, (void)errlen;
	mm_chain(&F(a)->m, seq, link);
	return 0;
}

static int m_chain_set(struct cfa *a, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
		       char *err, size_t errlen)
{
	return mm_chain_set(&F(a)->m, seq, link, err, errlen);
}

static int m_apply(struct cfa *a, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	return mm_apply(&F(a)->m, ch, err, errlen);
}

static int m_epoch_get(struct cfa *a, uint64_t id, struct capfence_epoch_info *ei,
		       char *err, size_t errlen)
{
	return mm_epoch_get(&F(a)->m, id, ei, err, errlen);
}

static int m_epoch_install(struct cfa *a, const struct capfence_epoch *e, char *err, size_t errlen)
{
	return mm_epoch_install(&F(a)->m, e, err, errlen);
}

static int m_epoch_activate(struct cfa *a, uint64_t id, char *err, size_t errlen)
{
	return mm_epoch_activate(&F(a)->m, id, err, errlen);
}

static int m_revoke(struct cfa *a, uint64_t id, char *err, size_t errlen)
{
	return mm_revoke(&F(a)->m, id, err, errlen);
}

static int m_key_remove(struct cfa *a, uint32_t id, char *err, size_t errlen)
{
	return mm_key_remove(&F(a)->m, id, err, errlen);
}

/* ---- the store ---- */

static int s_snapshot(struct cfa *a, struct cf_fleet_change **chs, size_t *n, uint64_t *rev,
		      struct cf_fleet_base *b, char *err, size_t errlen)
{
	struct fake *f = F(a);

	f->snapshots++;
	if (f->snapshot_err) {
		snprintf(err, errlen, "%s", f->snapshot_err);
		return -EBADMSG;
	}
	memset(b, 0, sizeof(*b));	/* never compacted: the chain from genesis */
	*chs = calloc(f->n + 1, sizeof(**chs));
	if (!*chs)
		return -ENOMEM;
	memcpy(*chs, f->log, f->n * sizeof(**chs));
	*n = f->n;
	*rev = f->rev;
	return 0;
}

/* the head as a timestamp role renewing it keeps it: fresh, at the chain's end */
static int s_head(struct cfa *a, struct cf_fleet_head *hd, char *err, size_t errlen)
{
	struct fake *f = F(a);

	(void)err, (void)errlen;
	memset(hd, 0, sizeof(*hd));
	hd->seq = f->n;
	if (f->n)
		memcpy(hd->hash, f->log[f->n - 1].link, CF_FLEET_HASH_LEN);
	hd->time_ms = cf_fleet_wall_ms();
	hd->mod_rev = (int64_t)f->rev;
	return 0;
}

static int s_latest(struct cfa *a, uint64_t *rev, uint64_t *store_rev, char *err, size_t errlen)
{
	struct fake *f = F(a);

	(void)err, (void)errlen;
	*rev = f->n ? f->log[f->n - 1].rev : 0;
	*store_rev = f->rev;
	return 0;
}

/* only what the store holds decodes ("signed"): the key and value as committed */
static int s_decode(struct cfa *a, const char *key, const char *value, struct cf_fleet_change *ch,
		    char *err, size_t errlen)
{
	struct fake *f = F(a);
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (!strcmp(key, f->key[i]) && !strcmp(value, f->value[i])) {
			*ch = f->log[i];
			return 0;
		}
	}
	snprintf(err, errlen, "no valid signature");
	return -EPERM;
}

static int s_watch(struct cfa *a, uint64_t from, cf_etcd_event_cb cb, cf_etcd_stop_cb stop,
		   int64_t *compact, char *err, size_t errlen)
{
	(void)a, (void)from, (void)cb, (void)stop, (void)compact, (void)err, (void)errlen;
	return -ENOSYS;	/* driven by hand: stream() */
}

static int s_lease_grant(struct cfa *a, int64_t ttl, int64_t *lease, char *err, size_t errlen)
{
	(void)a, (void)ttl, (void)err, (void)errlen;
	*lease = 1;
	return 0;
}

static int s_lease_keepalive(struct cfa *a, int64_t lease, int64_t *ttl, char *err, size_t errlen)
{
	(void)a, (void)lease, (void)err, (void)errlen;
	*ttl = 10;
	return 0;
}

static int s_report(struct cfa *a, const struct cf_fleet_host *h, int64_t lease,
		    char *err, size_t errlen)
{
	struct fake *f = F(a);

	(void)lease, (void)err, (void)errlen;
	f->report = *h;
	f->report.have_link = h->seq != 0;
	f->reports++;
	return 0;
}

static void o_say(struct cfa *a, const char *line)
{
	(void)a;
	if (getenv("TEST_AGENT_VERBOSE"))
		fprintf(stderr, "#   agent: %s\n", line);
}

static const struct cfa_ops fake_ops = {
	.status = m_status, .set = m_set, .chain = m_chain, .chain_set = m_chain_set,
	.apply = m_apply, .epoch_get = m_epoch_get, .epoch_install = m_epoch_install,
	.epoch_activate = m_epoch_activate, .revoke = m_revoke, .key_remove = m_key_remove,
	.snapshot = s_snapshot, .head = s_head, .latest = s_latest, .decode = s_decode,
	.watch = s_watch, .lease_grant = s_lease_grant, .lease_keepalive = s_lease_keepalive,
	.report = s_report, .say = o_say,
};

/* ---- the fleet, the host ---- */

/* A signed change at the chain's end (the signer's next seq and link). */
static void commit(struct fake *f, enum cf_fleet_kind kind, uint64_t id)
{
	struct cf_fleet_change *ch = &f->log[f->n];
	char prev[2 * CF_FLEET_HASH_LEN + 1] = "";
	size_t i;

	memset(ch, 0, sizeof(*ch));
	ch->kind = kind;
	ch->id = id;
	ch->seq = f->n + 1;
	if (f->n)
		memcpy(ch->prev, f->log[f->n - 1].link, CF_FLEET_HASH_LEN);
	for (i = 0; i < CF_FLEET_HASH_LEN; i++)
		snprintf(prev + 2 * i, 3, "%02x", ch->prev[i]);
	ch->rev = ++f->rev;
	snprintf(f->key[f->n], sizeof(f->key[f->n]), PREFIX "fleet/%020" PRIu64, ch->rev);
	snprintf(f->value[f->n], sizeof(f->value[f->n]), "{\"kind\":%d,\"id\":%" PRIu64 ",\"seq\":%" PRIu64
		 ",\"prev\":\"%s\"}", kind, id, ch->seq, prev);
	cf_fleet_link(f->key[f->n], f->value[f->n], ch->link);
	if (kind == CF_FLEET_REVOKE) {
		struct revoke *r = &f->rv[f->nrv++];

		r->id = id;
		r->seq = ch->seq;
		memcpy(r->link, ch->link, CF_FLEET_HASH_LEN);
		r->committed_ns = cfa_boot_ns();
	}
	f->n++;
}

static void backup(struct fake *f)
{
	memcpy(f->blog, f->log, sizeof(f->log));
	memcpy(f->bkey, f->key, sizeof(f->key));
	memcpy(f->bvalue, f->value, sizeof(f->value));
	f->bn = f->n;
	f->brev = f->rev;
}

/* etcd restored from the backup: its changes and revisions since are gone */
static void restore(struct fake *f)
{
	memcpy(f->log, f->blog, sizeof(f->log));
	memcpy(f->key, f->bkey, sizeof(f->key));
	memcpy(f->value, f->bvalue, sizeof(f->value));
	f->n = f->bn;
	f->rev = f->brev;
	f->stream_up = false;	/* the watch stream broke with it */
}

/* `capfence fleet recover`: a lost change put back as it was signed, at a new revision */
static void recommit(struct fake *f, const char *key, const char *value,
		     const struct cf_fleet_change *was)
{
	f->log[f->n] = *was;
	f->log[f->n].rev = ++f->rev;
	snprintf(f->key[f->n], sizeof(f->key[f->n]), "%s", key);
	snprintf(f->value[f->n], sizeof(f->value[f->n]), "%s", value);
	f->n++;
}

static void host_start(struct fake *f)
{
	struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_BOUNDS,
					 .stale_ms = 10000, .deny_ms = 20000 };
	char err[CAPFENCE_ERR_MAX];

	memset(&f->a, 0, sizeof(f->a));
	cfa_init(&f->a);
	f->a.ops = &fake_ops;
	f->a.ctx = f;
	f->a.host = "h1";
	f->a.stale_ms = 10000;
	f->a.deny_ms = 20000;
	f->a.heartbeat_ms = 1000;
	f->a.reconcile_s = 60;
	f->a.lease_ttl = 22;
	f->a.chained = true;
	f->a.require_head = true;
	f->a.pacer.every_ms = 10000;
	/* capfenced's start: the bounds, the module's revision known */
	mm_set(&f->m, &fs, err, sizeof(err));
	f->a.known_rev = f->m.rev;
	f->stream_up = false;
}

static void host_stop(struct fake *f)
{
	cfa_destroy(&f->a);
}

static uint64_t honest(struct fake *f, size_t i, uint64_t rev)
{
	(void)f, (void)i;
	return rev;
}

/*
 * The watch thread: on a (re)start, cfa_chain_sync() and a stream from
 * its revision; then every event the store has past the cursor, through
 * the proxy. false when the resync failed (the thread retries later).
 */
static bool stream(struct fake *f)
{
	size_t i;

	if (!f->stream_up || atomic_exchange(&f->a.restart, false)) {
		atomic_store(&f->a.rebuild_asked, false);
		if (cfa_chain_sync(&f->a))
			return false;
		f->cursor = f->a.watch_from;
		f->a.stream_rev = f->cursor - 1;
		f->stream_up = true;
	}
	for (i = 0; i < f->n; i++) {
		struct cf_etcd_kv kv = { .key = f->key[i], .value = f->value[i] };
		struct cf_etcd_event ev = { .kv = &kv };

		if (f->log[i].rev < f->cursor)
			continue;
		f->cursor = f->log[i].rev + 1;
		kv.value_len = strlen(kv.value);
		kv.mod_rev = (int64_t)(f->proxy ? f->proxy : honest)(f, i, f->log[i].rev);
		if (cfa_on_event(&ev, &f->a)) {
			f->stream_up = false;	/* the stream ends; from the change again */
			return false;
		}
	}
	return true;
}

/* Does `--wait` count the host for r (host_lags(), tools/capfence/fleet.c)? */
static bool counted(const struct fake *f, const struct revoke *r)
{
	const struct cf_fleet_host *h = &f->report;

	if (!f->reports || h->failing[0] || !h->have_link || h->seq < r->seq)
		return false;
	if (h->seq == r->seq)
		return !memcmp(h->link, r->link, CF_FLEET_HASH_LEN);
	/* past it: the store's chain reaches the host's link from r's */
	return h->seq <= f->n && !memcmp(f->log[r->seq - 1].link, r->link, CF_FLEET_HASH_LEN) &&
	       !memcmp(f->log[h->seq - 1].link, h->link, CF_FLEET_HASH_LEN);
}

/* is r in the store's chain now? */
static bool in_chain(const struct fake *f, const struct revoke *r)
{
	return r->seq <= f->n && !memcmp(f->log[r->seq - 1].link, r->link, CF_FLEET_HASH_LEN);
}

/* The property now: NULL, or what broke it. */
static const char *violation(struct fake *f)
{
	size_t i;

	for (i = 0; i < f->nrv; i++) {
		const struct revoke *r = &f->rv[i];

		if (mm_revoked(&f->m, r->id))
			continue;
		if (counted(f, r)) {
			snprintf(f->why, sizeof(f->why), "revoke %" PRIx64 " (seq=%" PRIu64 ") is acknowledged by the host's report (seq=%" PRIu64 ", failing \"%s\") and not enforced",
				 r->id, r->seq, f->report.seq, f->report.failing);
			return f->why;
		}
		if (in_chain(f, r) && f->m.confirmed_ns > r->committed_ns) {
			snprintf(f->why, sizeof(f->why), "revoke %" PRIx64 " (seq=%" PRIu64 ") in the chain, the module confirmed current after it, not enforced",
				 r->id, r->seq);
			return f->why;
		}
	}
	return NULL;
}

/* At the end: every revoke enforced, or the host says why not. */
static const char *unresolved(struct fake *f)
{
	size_t i;

	for (i = 0; i < f->nrv; i++) {
		const struct revoke *r = &f->rv[i];

		if (!mm_revoked(&f->m, r->id) && !f->report.failing[0]) {
			snprintf(f->why, sizeof(f->why), "revoke %" PRIx64 " neither enforced nor reported failing", r->id);
			return f->why;
		}
	}
	return violation(f);
}

#define HOLDS(f) do {						\
	const char *_v = violation(f);				\
	if (_v)							\
		TH_LOG("%s", _v);				\
	ASSERT_EQ(NULL, _v);					\
} while (0)

#define SETTLED(f) do {						\
	const char *_v = unresolved(f);				\
	if (_v)							\
		TH_LOG("%s", _v);				\
	ASSERT_EQ(NULL, _v);					\
} while (0)

static void beat(struct fake *f, int n)
{
	while (n--)
		cfa_beat(&f->a);
}

/* beats until the agent restarts its watch (a resync): how many, at most max */
static int beat_until_restart(struct fake *f, int max)
{
	int n;

	for (n = 1; n <= max; n++) {
		cfa_beat(&f->a);
		if (atomic_load(&f->a.restart))
			return n;
		if (violation(f))
			return -1;
	}
	return max + 1;
}

static struct fake *fake_new(void)
{
	return calloc(1, sizeof(struct fake));
}

static void fake_free(struct fake *f)
{
	host_stop(f);
	mm_free(&f->m);
	free(f);
}

#define CAP_A	0x5100000000000001ull
#define CAP_B	0x5100000000000002ull
#define CAP_C	0x5100000000000003ull

/* ---- 1: one rewritten revision ---------------------------------------------- */

static uint64_t rewrite_b(struct fake *f, size_t i, uint64_t rev)
{
	return f->log[i].id == CAP_B ? 1 : rev;
}

TEST(rewritten_revision)
{
	struct fake *f = fake_new();

	ASSERT_NE(NULL, f);
	host_start(f);
	commit(f, CF_FLEET_REVOKE, CAP_A);
	ASSERT_TRUE(stream(f));
	beat(f, 1);
	HOLDS(f);
	ASSERT_EQ(CAPFENCE_FLEET_CURRENT, mm_state(&f->m, cfa_boot_ns()));
	ASSERT_TRUE(mm_revoked(&f->m, CAP_A));

	/* the proxy shows the revoke's event at rev=1: dropped, nothing counted */
	f->proxy = rewrite_b;
	commit(f, CF_FLEET_REVOKE, CAP_B);
	ASSERT_TRUE(stream(f));
	HOLDS(f);
	ASSERT_FALSE(mm_revoked(&f->m, CAP_B));
	ASSERT_EQ(1, f->m.seq);
	/* the head is past the module: no confirmation, the report says so */
	beat(f, 1);
	HOLDS(f);
	ASSERT_NE(NULL, strstr(f->report.failing, "behind the fleet head"));
	/* three beats without progress: a resync, which applies it */
	ASSERT_EQ(CFA_WATCH_LAG_BEATS - 1, beat_until_restart(f, CFA_WATCH_LAG_BEATS + 1));
	HOLDS(f);
	ASSERT_TRUE(stream(f));
	HOLDS(f);
	ASSERT_TRUE(mm_revoked(&f->m, CAP_B));
	beat(f, 1);
	HOLDS(f);
	ASSERT_EQ(2, f->report.seq);
	ASSERT_STREQ("", f->report.failing);
	ASSERT_EQ(CAPFENCE_FLEET_CURRENT, mm_state(&f->m, cfa_boot_ns()));
	SETTLED(f);
	fake_free(f);
	CF_NO_LEAKS();
}

/* ---- 2: one poisoned revision ------------------------------------------------ */

static uint64_t poison_once(struct fake *f, size_t i, uint64_t rev)
{
	return f->log[i].kind == CF_FLEET_KEY_ADD ? 1000000000000000ull : rev;
}

TEST(poisoned_revision)
{
	struct fake *f = fake_new();
	int restarted;

	ASSERT_NE(NULL, f);
	for (restarted = 0; restarted < 2; restarted++) {
		memset(f, 0, sizeof(*f));
		host_start(f);
		commit(f, CF_FLEET_REVOKE, CAP_A);
		ASSERT_TRUE(stream(f));
		beat(f, 1);
		HOLDS(f);
		/* a harmless change shown at rev=10^15 once */
		f->proxy = poison_once;
		commit(f, CF_FLEET_KEY_ADD, 7);
		ASSERT_TRUE(stream(f));
		f->proxy = NULL;
		HOLDS(f);
		ASSERT_EQ(2, f->m.seq);
		/* chained, the store's revision never reaches the module */
		ASSERT_GT(1000000000000000ull, f->m.rev);
		if (restarted) {
			/* the path honest again, the agent restarted */
			host_stop(f);
			host_start(f);
		}
		commit(f, CF_FLEET_REVOKE, CAP_B);
		ASSERT_TRUE(stream(f));
		HOLDS(f);
		beat(f, 1);
		HOLDS(f);
		if (!restarted) {
			/* the same stream drops it (not above 10^15): behind, then a resync */
			ASSERT_FALSE(mm_revoked(&f->m, CAP_B));
			ASSERT_NE(NULL, strstr(f->report.failing, "behind the fleet head"));
			ASSERT_GE(CFA_WATCH_LAG_BEATS + 1, beat_until_restart(f, CFA_WATCH_LAG_BEATS + 1));
			HOLDS(f);
			ASSERT_TRUE(stream(f));
			beat(f, 1);
			HOLDS(f);
		}
		ASSERT_TRUE(mm_revoked(&f->m, CAP_B));
		ASSERT_EQ(3, f->report.seq);
		ASSERT_STREQ("", f->report.failing);
		ASSERT_EQ(CAPFENCE_FLEET_CURRENT, mm_state(&f->m, cfa_boot_ns()));
		SETTLED(f);
		host_stop(f);
		mm_free(&f->m);
	}
	free(f);
	CF_NO_LEAKS();
}

/* ---- 3: etcd restored from a backup taken before a revoke ---------------------- */

TEST(restored_store_reuses_seq)
{
	struct fake *f = fake_new();

	ASSERT_NE(NULL, f);
	host_start(f);
	commit(f, CF_FLEET_REVOKE, CAP_A);
	backup(f);
	commit(f, CF_FLEET_REVOKE, CAP_B);
	ASSERT_TRUE(stream(f));
	beat(f, 1);
	HOLDS(f);
	ASSERT_TRUE(mm_revoked(&f->m, CAP_B));
	ASSERT_EQ(2, f->report.seq);

	/* restored; the head role and the agent restarted; the next revoke takes seq 2 */
	restore(f);
	host_stop(f);
	host_start(f);
	commit(f, CF_FLEET_REVOKE, CAP_C);
	ASSERT_EQ(2, f->rv[2].seq);
	ASSERT_FALSE(stream(f));	/* the store's seq 2 is not the module's */
	HOLDS(f);
	beat(f, 3);
	HOLDS(f);
	ASSERT_NE(NULL, strstr(f->report.failing, "forked or restored store"));
	/* never counted; the reconcile revoked it from the store's changes all the same */
	ASSERT_FALSE(counted(f, &f->rv[2]));
	ASSERT_EQ(2, f->report.seq);
	/* the retries change nothing: never counted, never confirmed */
	ASSERT_FALSE(stream(f));
	beat(f, 2);
	HOLDS(f);
	SETTLED(f);
	fake_free(f);
	CF_NO_LEAKS();
}

TEST(restored_store_recovered)
{
	struct fake *f = fake_new();
	struct cf_fleet_change lost;
	char key[64], value[200];

	ASSERT_NE(NULL, f);
	host_start(f);
	commit(f, CF_FLEET_REVOKE, CAP_A);
	backup(f);
	commit(f, CF_FLEET_REVOKE, CAP_B);
	ASSERT_TRUE(stream(f));
	beat(f, 1);
	HOLDS(f);
	lost = f->log[1];
	snprintf(key, sizeof(key), "%s", f->key[1]);
	snprintf(value, sizeof(value), "%s", f->value[1]);

	/* restored: the store's chain ends below the module's position */
	restore(f);
	ASSERT_FALSE(stream(f));
	beat(f, 1);
	HOLDS(f);
	ASSERT_NE(NULL, strstr(f->report.failing, "restored from a backup"));
	/* `fleet recover` puts the lost change back, then the next revoke follows it */
	recommit(f, key, value, &lost);
	commit(f, CF_FLEET_REVOKE, CAP_C);
	ASSERT_EQ(3, f->rv[2].seq);
	ASSERT_TRUE(stream(f));
	HOLDS(f);
	beat(f, 1);
	HOLDS(f);
	ASSERT_TRUE(mm_revoked(&f->m, CAP_B));
	ASSERT_TRUE(mm_revoked(&f->m, CAP_C));
	ASSERT_EQ(3, f->report.seq);
	ASSERT_STREQ("", f->report.failing);
	ASSERT_EQ(CAPFENCE_FLEET_CURRENT, mm_state(&f->m, cfa_boot_ns()));
	SETTLED(f);
	fake_free(f);
	CF_NO_LEAKS();
}

/*
 * A reconcile that fails (the store holds an unsigned change) holds the
 * host's confirmations until one passes: once the store is repaired the
 * next comes after a backoff, not a whole period later.
 */
TEST(failed_reconcile_retried_before_its_period)
{
	struct fake *f = fake_new();
	int64_t t0;
	unsigned n;

	ASSERT_NE(NULL, f);
	host_start(f);
	commit(f, CF_FLEET_REVOKE, CAP_A);
	ASSERT_TRUE(stream(f));
	beat(f, 1);		/* the first beat's reconcile passes */
	HOLDS(f);
	ASSERT_STREQ("", f->report.failing);
	ASSERT_EQ(0, f->a.reconcile_retry_ms);

	/* the period's reconcile meets a forged key */
	f->snapshot_err = "/capfence/fleet/epoch/77: unsigned change refused";
	f->a.next_reconcile = 0;
	n = f->snapshots;
	t0 = cfa_now_ms();
	beat(f, 1);
	ASSERT_EQ(n + 1, f->snapshots);
	ASSERT_NE(NULL, strstr(f->report.failing, "reconcile: /capfence/fleet/epoch/77"));
	/* the next try is due CFA_RETRY_MIN_MS later; its period is a minute away */
	ASSERT_EQ(CFA_RETRY_MIN_MS, f->a.reconcile_retry_ms);
	ASSERT_LE(t0 + CFA_RETRY_MIN_MS, f->a.next_reconcile_retry);
	ASSERT_GE(cfa_now_ms() + CFA_RETRY_MIN_MS, f->a.next_reconcile_retry);
	ASSERT_LT(cfa_now_ms() + 50000, f->a.next_reconcile);
	/* (the clock moved by hand from here) not before its time */
	f->a.next_reconcile_retry = cfa_now_ms() + 60000;
	beat(f, 1);
	ASSERT_EQ(n + 1, f->snapshots);
	/* at its time: tried again, still failing, and the wait doubles */
	f->a.next_reconcile_retry = cfa_now_ms();
	beat(f, 1);
	ASSERT_EQ(n + 2, f->snapshots);
	ASSERT_EQ(2 * CFA_RETRY_MIN_MS, f->a.reconcile_retry_ms);
	ASSERT_NE(NULL, strstr(f->report.failing, "unsigned change refused"));
	HOLDS(f);

	/* the key deleted: the next try passes, and the host is current */
	f->snapshot_err = NULL;
	f->a.next_reconcile_retry = cfa_now_ms();
	beat(f, 2);
	ASSERT_EQ(n + 3, f->snapshots);
	ASSERT_STREQ("", f->report.failing);
	ASSERT_EQ(0, f->a.reconcile_retry_ms);
	ASSERT_EQ(CAPFENCE_FLEET_CURRENT, mm_state(&f->m, cfa_boot_ns()));
	SETTLED(f);
	fake_free(f);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
