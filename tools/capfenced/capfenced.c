// SPDX-License-Identifier: GPL-2.0
/*
 * capfenced: the fleet agent of one host (docs/design.md, "Fleet").
 *
 *   capfenced --endpoints URL[,URL...] --host NAME [--prefix P]
 *             [--max-staleness MS] [--deny-after MS] [--heartbeat MS]
 *             [--lease-ttl S] [--reconcile S] [--report-every MS] [--foreground]
 *             [--log FILE] [--cacert FILE] [--cert FILE --key FILE] [--user U --password-file F]
 *             [--insecure-plaintext]
 *             [--fleet-pubkey KEY]... [--host-key FILE] [--require-head]
 *             [--metrics-listen ADDR:PORT]
 *
 * With --fleet-pubkey (a fleet public key, base64 or a file; up to four,
 * for a rotation) every change must carry a signature one of them made:
 * an unsigned or mis-signed one is refused as a change that cannot be
 * decoded (never skipped: the host stops confirming and says why), and the
 * changes must form the fleet's chain (cf_fleet.h): each one's "seq" and
 * "prev" follow the one before, so the store can neither leave one out
 * nor reorder them unseen. With --require-head the host also confirms
 * only once it has the chain up to the fleet's signed head, and dates the
 * confirmation from the instant the head was signed: a store that
 * withholds a change, or freezes the head, makes the module stale on its
 * own clock within its bounds. With --host-key the host report is signed,
 * for `capfence fleet --host-keys`.
 *
 * It applies the fleet's changes (etcd, under <prefix>fleet/) to the local
 * capfence module in revision order, each with its revision; confirms
 * freshness to the module on every heartbeat; and reports the module's
 * revision under <prefix>hosts/NAME, under a lease it keeps alive. The
 * report is a store write: it is written at once when what it says
 * changes (a change applied, the state, why the host fails) and otherwise
 * every --report-every ms (default 10000), so a fleet's reports cost a
 * fixed low rate in steady state, not one write per host per heartbeat
 * (cf_fleet_report_due); the lease is renewed every heartbeat (no write).
 *
 * A change is never skipped: one that fails to apply (or to decode) is
 * retried with backoff, and until it applies the module stays below its
 * revision, no confirmation is sent (so the module goes stale, then denies,
 * on its own clock) and the host report says why ("failing"). On start,
 * on a module reload and every --reconcile seconds the agent compares the
 * module's state with the fleet's and repairs it, or fails closed the same
 * way.
 *
 * Under systemd (Type=notify) it says READY=1 once the module is in
 * fleet mode and current, and WATCHDOG=1 from the heartbeat only, so a
 * heartbeat that hangs stops the pings and systemd restarts the agent
 * before the host goes stale. --metrics-listen serves /metrics and
 * /healthz (http.c).
 *
 * Two threads, three with --metrics-listen: the watch applies; the
 * heartbeat confirms, reports, reconciles, re-arms a reloaded module and
 * restarts a watch that stopped delivering; the listener answers scrapes
 * on a module handle of its own. cf_lock serializes every use of the
 * module handle (the heartbeat reopens it after a reload); state_lock
 * guards failing and the chain; metrics_lock the agent's counters. When
 * two are held, cf_lock is taken first.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <capfence/capfence.h>
#include "cf_fleet.h"
#include "cf_metrics.h"
#include "http.h"

#define DEF_STALE_MS	10000
#define DEF_DENY_MS	30000
#define DEF_HEARTBEAT_MS 1000
#define DEF_LEASE_TTL	10
#define DEF_RECONCILE_S	60
#define DEF_REPORT_MS	10000
/* the retry backoff of a change that fails to apply */
#define RETRY_MIN_MS	200
#define RETRY_MAX_MS	5000
/* heartbeats that see the watch behind the store without progress */
#define WATCH_LAG_BEATS	3

struct agent {
	struct cf_fleet *fleet;
	struct capfence_client *cf;
	const char *host;
	uint32_t stale_ms, deny_ms, heartbeat_ms, reconcile_s;
	int64_t lease_ttl, lease;
	atomic_bool stop, restart, rearm;
	pthread_mutex_t cf_lock;	/* the module handle */
	pthread_mutex_t state_lock;	/* failing, failing_rev */
	char failing[160];		/* why the host is below the fleet, "" */
	uint64_t failing_rev;		/* the change that fails, 0 = reconcile */
	uint64_t known_rev;		/* the highest revision seen in the module */
	bool chained;			/* changes must form the chain (--fleet-pubkey) */
	bool require_head;		/* confirm only at the signed head */
	uint64_t chain_seq;		/* the chain's changes the module has (read back from it) */
	uint64_t chain_rev;		/* the store revision of change chain_seq: an index, no evidence */
	uint64_t known_seq;		/* chained: the highest position seen in the module */
	uint64_t stream_rev;		/* chained: the last event's revision on this watch stream */
	uint64_t chain_base;		/* the snapshot's seq the chain starts at, 0: genesis */
	unsigned char base_hash[CF_FLEET_HASH_LEN];	/* its link */
	unsigned char (*links)[CF_FLEET_HASH_LEN];	/* links[s - base - 1]: change s's */
	size_t links_cap;
	uint64_t head_seen;		/* the highest head seq seen */
	struct {			/* the head last seen, anchored at first sight */
		bool have;
		uint64_t seq;
		int64_t time_ms;	/* its signed time */
		uint64_t signed_ns;	/* CLOCK_BOOTTIME: first sight less its age then */
	} anchor;
	_Atomic uint64_t watch_from;	/* chained: after a rebuild, its revision + 1 */
	atomic_bool rebuild_asked;	/* chained: behind the head, rebuild */
	char head_why[160];		/* why the head stops confirmations, "" */
	const char *fault_file;		/* test only: CAPFENCED_FAULT_FILE */
	FILE *log;
	bool use_syslog;
	pthread_mutex_t log_lock;
	pthread_mutex_t report_lock;	/* the lease, one report at a time */
	struct cf_fleet_pacer pacer;	/* when the report is written (report_lock) */
	int64_t lease_renewed;		/* the lease's last renewal (report_lock) */
	pthread_mutex_t metrics_lock;	/* m */
	struct cf_agent_metrics m;	/* for /metrics */
	uint64_t wd_usec;		/* systemd's WatchdogSec, 0 = none */
	int64_t wd_last;		/* the last WATCHDOG=1, ms */
	char sd_status[200];		/* the last STATUS= sent */
};

static struct agent A;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (A.use_syslog) {
		vsyslog(LOG_INFO, fmt, ap);
	} else {
		pthread_mutex_lock(&A.log_lock);
		fputs("capfenced: ", A.log);
		vfprintf(A.log, fmt, ap);
		fputc('\n', A.log);
		fflush(A.log);
		pthread_mutex_unlock(&A.log_lock);
	}
	va_end(ap);
}

/* The module's clock: CLOCK_BOOTTIME runs through a suspend. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The instant a confirmation is dated from, on the module's clock. */
static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


/* Sleep ms, waking early when asked to stop. */
static void nap(uint32_t ms)
{
	while (ms && !atomic_load(&A.stop)) {
		uint32_t step = ms < 100 ? ms : 100;
		struct timespec ts = { 0, (long)step * 1000000L };

		nanosleep(&ts, NULL);
		ms -= step;
	}
}

/* ---- metrics and systemd ------------------------------------------------------------ */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void count_error(enum cf_agent_error e)
{
	pthread_mutex_lock(&A.metrics_lock);
	A.m.errors[e]++;
	pthread_mutex_unlock(&A.metrics_lock);
}

static bool is_failing(void);

/* for the listener: a copy of the counters */
static void agent_metrics(struct cf_agent_metrics *out)
{
	bool failing = is_failing();

	pthread_mutex_lock(&A.metrics_lock);
	*out = A.m;
	pthread_mutex_unlock(&A.metrics_lock);
	out->failing = failing;
}

/*
 * WATCHDOG=1, from the heartbeat's thread only, at most four times per
 * WatchdogSec: the pings stop when the loop that confirms freshness hangs.
 */
static void watchdog_ping(void)
{
	int64_t now;

	if (!A.wd_usec)
		return;
	now = mono_ms();
	if (A.wd_last && now - A.wd_last < (int64_t)(A.wd_usec / 4000))
		return;
	A.wd_last = now;
	sd_notify(0, "WATCHDOG=1");
}

/* STATUS= for systemctl status, when it changes */
static void sd_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sd_status(const char *fmt, ...)
{
	char st[sizeof(A.sd_status)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st, sizeof(st), fmt, ap);
	va_end(ap);
	if (!strcmp(st, A.sd_status))
		return;
	snprintf(A.sd_status, sizeof(A.sd_status), "%s", st);
	sd_notifyf(0, "STATUS=%s", st);
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&A.stop, true);
}

static void set_failing(uint64_t rev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_failing(uint64_t rev, const char *fmt, ...)
{
	char why[sizeof(A.failing)];
	bool news;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&A.state_lock);
	news = strcmp(why, A.failing) != 0;
	snprintf(A.failing, sizeof(A.failing), "%s", why);
	A.failing_rev = rev;
	pthread_mutex_unlock(&A.state_lock);
	if (news)	/* once per distinct failure, not on every retry */
		say("FAILING: %s; retrying, no freshness confirmed until it applies", why);
}

/* The failure of the change at rev (0: of a reconcile) is over. */
static void clear_failing(uint64_t rev)
{
	bool was;

	pthread_mutex_lock(&A.state_lock);
	/* 0: a reconcile's failure; rev: a change's, at rev or below */
	was = A.failing[0] && (rev ? A.failing_rev && A.failing_rev <= rev : !A.failing_rev);
	if (was) {
		A.failing[0] = '\0';
		A.failing_rev = 0;
	}
	pthread_mutex_unlock(&A.state_lock);
	if (was)
		say("recovered: the module has the fleet's changes again");
}

static bool is_failing(void)
{
	bool f;

	pthread_mutex_lock(&A.state_lock);
	f = A.failing[0] != '\0';
	pthread_mutex_unlock(&A.state_lock);
	return f;
}

/* ---- the chain --------------------------------------------------------------------- */

/* The link of change seq (zeros: genesis); NULL below the snapshot. state_lock held. */
static const unsigned char *link_of(uint64_t seq)
{
	static const unsigned char genesis[CF_FLEET_HASH_LEN];

	if (!seq)
		return genesis;
	if (seq < A.chain_base || seq > A.chain_seq)
		return NULL;
	return seq == A.chain_base ? A.base_hash : A.links[seq - A.chain_base - 1];
}

/* Does ch follow the chain as the module has it? Else the host fails. */
static bool chain_follows(const struct cf_fleet_change *ch)
{
	uint64_t seq;
	bool ok;

	if (!A.chained)
		return true;
	pthread_mutex_lock(&A.state_lock);
	seq = A.chain_seq;
	ok = ch->seq == seq + 1 && !memcmp(ch->prev, link_of(seq), CF_FLEET_HASH_LEN);
	pthread_mutex_unlock(&A.state_lock);
	if (ok)
		return true;
	if (!ch->seq)
		set_failing(ch->rev, "rev=%" PRIu64 " refused: not chained (no \"seq\"; signed by an older capfence?)",
			    ch->rev);
	else if (ch->seq != seq + 1)
		set_failing(ch->rev, "rev=%" PRIu64 " out of chain: seq=%" PRIu64 " after seq=%" PRIu64
			    " (the store withheld or reordered a change)", ch->rev, ch->seq, seq);
	else
		set_failing(ch->rev, "rev=%" PRIu64 " out of chain: seq=%" PRIu64
			    " does not follow this host's seq=%" PRIu64 " (a forked store)",
			    ch->rev, ch->seq, seq);
	return false;
}

/* ch is in the module: the chain grows by it. */
static int chain_add(const struct cf_fleet_change *ch)
{
	int ret = 0;

	if (!A.chained)
		return 0;
	pthread_mutex_lock(&A.state_lock);
	if (A.chain_seq - A.chain_base == A.links_cap) {
		size_t cap = A.links_cap ? A.links_cap * 2 : 64;
		void *p = realloc(A.links, cap * CF_FLEET_HASH_LEN);

		if (!p) {
			ret = -ENOMEM;
			goto out;
		}
		A.links = p;
		A.links_cap = cap;
	}
	memcpy(A.links[A.chain_seq - A.chain_base], ch->link, CF_FLEET_HASH_LEN);
	A.chain_seq++;
	A.chain_rev = ch->rev;
out:
	pthread_mutex_unlock(&A.state_lock);
	if (ret)
		set_failing(ch->rev, "rev=%" PRIu64 ": out of memory for the chain", ch->rev);
	return ret;
}

/* The chain starts again at the snapshot b (seq 0: at genesis). */
static void chain_reset(const struct cf_fleet_base *b)
{
	pthread_mutex_lock(&A.state_lock);
	A.chain_seq = A.chain_base = b->seq;
	A.chain_rev = b->rev;
	memcpy(A.base_hash, b->hash, CF_FLEET_HASH_LEN);
	pthread_mutex_unlock(&A.state_lock);
}

static uint64_t module_rev(void);

/*
 * The chain as far as the module's revision: from the fleet's snapshot
 * (its seq and link) on, the store's changes up to upto (no fleet key is
 * written twice), each checked against the one before. Before a watch
 * starts from upto + 1. 0, or -1 with the host failing, or with a rebuild
 * asked when the module is below the snapshot (compaction deleted
 * changes it has not applied).
 */
static int chain_load(uint64_t upto)
{
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	size_t i, n;
	uint64_t s;
	int ret = 0;

	if (!A.chained)
		return 0;
	if (cf_fleet_snapshot(A.fleet, 0, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(upto + 1, "the chain: %s", err);
		return -1;
	}
	if (b.seq && b.rev > upto) {
		cf_fleet_changes_free(chs, n);
		say("the module (rev=%" PRIu64 ") is below the fleet's snapshot (rev=%" PRIu64
		    " seq=%" PRIu64 "): rebuilding from it", upto, b.rev, b.seq);
		atomic_store(&A.rebuild_asked, true);
		return -1;
	}
	chain_reset(&b);
	for (i = 0; i < n && chs[i].rev <= upto && !ret; i++)
		if (!chs[i].base && (!chain_follows(&chs[i]) || chain_add(&chs[i])))
			ret = -1;
	cf_fleet_changes_free(chs, n);
	return ret;
}

static uint64_t module_rev(void)
{
	struct capfence_fleet_status fs;
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&A.cf_lock);
	ret = capfence_client_fleet_status(A.cf, &fs, err, sizeof(err));
	pthread_mutex_unlock(&A.cf_lock);
	if (ret) {
		say("cannot read the module's fleet state: %s", err);
		return 0;
	}
	return fs.rev;
}

/* The chain position the module holds: 0, or -1 when it cannot be read. */
static int module_chain(uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN])
{
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&A.cf_lock);
	ret = cf_fleet_module_chain(A.cf, seq, link, err, sizeof(err));
	pthread_mutex_unlock(&A.cf_lock);
	if (ret) {
		say("cannot read the module's fleet chain: %s", err);
		return -1;
	}
	return 0;
}

/*
 * Chained: does the module hold exactly ch's link at ch's seq? What the
 * module holds is the only record of what this host applied. cf_lock held.
 */
static bool module_holds(const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	unsigned char link[CF_FLEET_HASH_LEN];
	uint64_t seq;

	if (cf_fleet_module_chain(A.cf, &seq, link, err, errlen))
		return false;
	if (seq == ch->seq && !memcmp(link, ch->link, CF_FLEET_HASH_LEN))
		return true;
	snprintf(err, errlen, "the module holds seq=%" PRIu64 ", not this change's link at seq=%" PRIu64,
		 seq, ch->seq);
	return false;
}

/* Advance the module to rev without a change (a delete, a snapshot's S). */
static int skip_to(uint64_t rev)
{
	struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_REV, .rev = rev };
	char err[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&A.cf_lock);
	ret = capfence_client_fleet_set(A.cf, &fs, err, sizeof(err));
	pthread_mutex_unlock(&A.cf_lock);
	if (ret && ret != -EALREADY) {
		say("cannot advance the module to rev=%" PRIu64 ": %s", rev, err);
		return ret;
	}
	return 0;
}

/*
 * Test only: CAPFENCED_FAULT_FILE names a file holding a count; while it
 * is above 0 each apply fails as the kernel's ENOMEM would, and the count
 * goes down by one ("always": every apply fails). No file: no effect.
 */
static int injected_fault(char *err, size_t errlen)
{
	char buf[32] = "";
	FILE *f;
	long left;

	if (!A.fault_file)
		return 0;
	f = fopen(A.fault_file, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!strncmp(buf, "hang", 4)) {
		/* a module call that does not return, with cf_lock held */
		say("test: apply hangs while %s says hang", A.fault_file);
		while (!atomic_load(&A.stop) && (f = fopen(A.fault_file, "re"))) {
			bool hang = fgets(buf, sizeof(buf), f) && !strncmp(buf, "hang", 4);

			fclose(f);
			if (!hang)
				break;
			nap(100);
		}
		return 0;
	}
	if (!strncmp(buf, "always", 6)) {
		snprintf(err, errlen, "Cannot allocate memory (injected)");
		return -ENOMEM;
	}
	left = strtol(buf, NULL, 10);
	if (left <= 0)
		return 0;
	f = fopen(A.fault_file, "we");
	if (f) {
		fprintf(f, "%ld\n", left - 1);
		fclose(f);
	}
	snprintf(err, errlen, "Cannot allocate memory (injected)");
	return -ENOMEM;
}

/* Do two epochs have the same rules (by their canonical text)? */
static bool same_rules(const struct capfence_epoch *a, const struct capfence_epoch *b)
{
	char ra[CAPFENCE_RULE_TEXT_MAX], rb[CAPFENCE_RULE_TEXT_MAX];
	int cls;

	for (cls = 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		if (capfence_rule_format(&a->rules[cls], ra, sizeof(ra)) < 0 ||
		    capfence_rule_format(&b->rules[cls], rb, sizeof(rb)) < 0 ||
		    strcmp(ra, rb))
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
 * revision may advance: the change's effect holds.
 */
static bool effect_holds(const struct cf_fleet_change *ch, int ret)
{
	struct capfence_epoch_info ei;
	char err[CAPFENCE_ERR_MAX];

	switch (ch->kind) {
	case CF_FLEET_KEY_REMOVE:
		return ret == -ENOENT;
	case CF_FLEET_EPOCH_INSTALL:
		if (capfence_client_epoch_get(A.cf, ch->id, &ei, err, sizeof(err)))
			return false;
		return ch->epoch && same_rules(&ei.e, ch->epoch);
	case CF_FLEET_EPOCH_ACTIVATE:
		return !capfence_client_epoch_get(A.cf, ch->id, &ei, err, sizeof(err)) && ei.active;
	default:
		return false;
	}
}

/* one apply, its outcome and how long it took (the lock's wait included) */
static void count_apply(const struct cf_fleet_change *ch, bool ok, int64_t t0)
{
	double s = (double)(mono_ms() - t0) / 1000.0;

	pthread_mutex_lock(&A.metrics_lock);
	cf_agent_metrics_apply(&A.m, ch->kind, ok, s);
	if (!ok)
		A.m.errors[CF_AGENT_ERR_APPLY]++;
	pthread_mutex_unlock(&A.metrics_lock);
}

/*
 * Apply one change: 0 when the module has it (applied now, or before),
 * else the error, with the host marked failing. Never skips. Chained, the
 * module applies it only as the next link of its chain, and "has it" only
 * when the position read back from the module is this change's own.
 */
static int apply(const struct cf_fleet_change *ch)
{
	char err[CAPFENCE_ERR_MAX] = "", id[24];
	int64_t t0 = mono_ms();
	bool chained = A.chained && ch->seq;
	int ret;

	change_id(ch, id, sizeof(id));
	pthread_mutex_lock(&A.cf_lock);
	ret = injected_fault(err, sizeof(err));
	if (!ret)
		ret = cf_fleet_apply(A.cf, ch, err, sizeof(err));
	if (ret && ret != -EALREADY && ret != -EXDEV && effect_holds(ch, ret)) {
		struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_REV, .rev = ch->rev };
		char why[CAPFENCE_ERR_MAX];
		unsigned char link[CF_FLEET_HASH_LEN];
		uint64_t seq;
		int r2;

		if (!chained) {
			r2 = capfence_client_fleet_set(A.cf, &fs, why, sizeof(why));
		} else if (cf_fleet_module_chain(A.cf, &seq, link, why, sizeof(why))) {
			r2 = -EIO;
		} else if (seq + 1 != ch->seq || memcmp(link, ch->prev, CF_FLEET_HASH_LEN)) {
			snprintf(why, sizeof(why), "the module holds seq=%" PRIu64 ", not the link before it",
				 seq);
			r2 = -EXDEV;
		} else {
			/* the module holds its effect: the position moves to it */
			r2 = cf_fleet_module_chain_set(A.cf, ch->seq, ch->link, why, sizeof(why));
		}
		if ((!r2 || r2 == -EALREADY) && (!chained || module_holds(ch, why, sizeof(why)))) {
			pthread_mutex_unlock(&A.cf_lock);
			count_apply(ch, true, t0);
			say("applied rev=%" PRIu64 " %s %s (the module had it: %s)", ch->rev,
			    cf_fleet_kind_name(ch->kind), id, err);
			clear_failing(ch->rev);
			return 0;
		}
		snprintf(err, sizeof(err), "%s", why);
		ret = r2 ? r2 : -EXDEV;
	}
	/* chained, EALREADY is success only when the module holds this very link */
	if (chained && (!ret || ret == -EALREADY) && !module_holds(ch, err, sizeof(err)))
		ret = -EXDEV;
	pthread_mutex_unlock(&A.cf_lock);
	count_apply(ch, !ret || ret == -EALREADY, t0);
	if (!ret) {
		say("applied rev=%" PRIu64 " %s %s", ch->rev, cf_fleet_kind_name(ch->kind), id);
		clear_failing(ch->rev);
		return 0;
	}
	if (ret == -EALREADY) {
		if (chained)
			clear_failing(ch->rev);
		return 0;	/* the module has it already */
	}
	set_failing(ch->rev, "rev=%" PRIu64 " %s %s: %s", ch->rev, cf_fleet_kind_name(ch->kind),
		    id, err);
	return ret;
}

/* ---- host report ------------------------------------------------------------------ */

static void report_locked(void);

static void report(void)
{
	pthread_mutex_lock(&A.report_lock);
	report_locked();
	pthread_mutex_unlock(&A.report_lock);
}

static void report_locked(void)
{
	struct capfence_fleet_status st;
	struct cf_fleet_host h;
	char err[CAPFENCE_ERR_MAX];
	int64_t ttl = 0, now;
	int ret;

	pthread_mutex_lock(&A.cf_lock);
	ret = capfence_client_fleet_status(A.cf, &st, err, sizeof(err));
	pthread_mutex_unlock(&A.cf_lock);
	if (ret) {
		say("cannot read the module's fleet state: %s", err);
		return;
	}
	/* the lease: renewed once a heartbeat (a report on apply needs none) */
	now = now_ms();
	if (A.lease && now - A.lease_renewed >= (int64_t)A.heartbeat_ms / 2) {
		ret = cf_etcd_lease_keepalive(A.fleet->etcd, A.lease, &ttl, err, sizeof(err));
		if (ret) {
			say("lease keepalive: %s", err);
			return;
		}
		A.lease_renewed = now;
		if (!ttl) {
			A.lease = 0;	/* expired, the report with it: a new one */
			cf_fleet_report_lost(&A.pacer);
		}
	}
	if (!A.lease) {
		if (cf_etcd_lease_grant(A.fleet->etcd, A.lease_ttl, &A.lease, err, sizeof(err))) {
			say("lease grant: %s", err);
			A.lease = 0;
			return;
		}
		A.lease_renewed = now;
		cf_fleet_report_lost(&A.pacer);
	}
	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", A.host);
	h.applied = st.rev;
	snprintf(h.state, sizeof(h.state), "%s", capfence_fleet_state_name(st.state));
	h.stale_ms = st.stale_ms;
	h.deny_ms = st.deny_ms;
	pthread_mutex_lock(&A.state_lock);
	snprintf(h.failing, sizeof(h.failing), "%s", A.failing[0] ? A.failing : A.head_why);
	pthread_mutex_unlock(&A.state_lock);
	if (A.chained) {
		/* the position the module holds, never the agent's own count */
		pthread_mutex_lock(&A.cf_lock);
		ret = cf_fleet_module_chain(A.cf, &h.seq, h.link, err, sizeof(err));
		pthread_mutex_unlock(&A.cf_lock);
		if (ret) {
			say("cannot read the module's fleet chain: %s", err);
			return;
		}
		/* the store revision of that change, an index for people */
		pthread_mutex_lock(&A.state_lock);
		h.applied = h.seq == A.chain_seq ? A.chain_rev : 0;
		pthread_mutex_unlock(&A.state_lock);
	}
	/*
	 * What the report says changed: now (`--wait` counts the host at
	 * once, and never by a report that no longer holds); else only
	 * every --report-every.
	 */
	if (!cf_fleet_report_due(&A.pacer, &h, now))
		return;
	h.time_ms = cf_fleet_wall_ms();
	if (cf_fleet_report(A.fleet, &h, A.lease, err, sizeof(err)))
		say("host report: %s", err);
	else
		cf_fleet_report_done(&A.pacer, &h, now);
}

/* ---- the watch ------------------------------------------------------------------- */

/* A failed change ends the stream: the watch restarts from it after a backoff. */
static int on_event(const struct cf_etcd_event *ev, void *arg)
{
	struct cf_fleet_change ch;
	char err[CAPFENCE_ERR_MAX];
	uint64_t rev = (uint64_t)ev->kv->mod_rev;
	int ret;

	(void)arg;
	if (A.chained) {
		/*
		 * A revision is an index to watch from, never evidence: one not
		 * above the last on this stream is dropped (the chain, read
		 * again on a resync, decides what the module lacks).
		 */
		if (rev <= A.stream_rev) {
			say("rev=%" PRIu64 ": %s is not above the stream's rev=%" PRIu64
			    ": dropped", rev, ev->kv->key, A.stream_rev);
			return 0;
		}
		A.stream_rev = rev;
	}
	if (ev->deleted) {
		/* the fleet's keys are never deleted: a delete carries no change */
		say("rev=%" PRIu64 ": delete of %s, nothing to apply", rev, ev->kv->key);
		/*
		 * Chained, the module's revision is only ever a change it
		 * applied: a store could send a delete past a change it
		 * withholds, and the watch would start past that change.
		 */
		return A.chained || !skip_to(rev) ? 0 : -EAGAIN;
	}
	ret = cf_fleet_decode_verified(A.fleet, ev->kv->key, ev->kv->value, &ch, err, sizeof(err));
	if (ret) {
		count_error(CF_AGENT_ERR_DECODE);
		set_failing(rev, "rev=%" PRIu64 " %s: %s", rev,
			    ret == -EPERM ? "refused" : "cannot be decoded", err);
		return -EAGAIN;
	}
	ch.rev = rev;
	if (A.chained && ch.seq && ch.seq <= A.chain_seq) {
		const unsigned char *have;
		bool held;

		pthread_mutex_lock(&A.state_lock);
		have = link_of(ch.seq);
		held = have && !memcmp(have, ch.link, CF_FLEET_HASH_LEN);
		pthread_mutex_unlock(&A.state_lock);
		if (held) {	/* the module holds it already */
			cf_fleet_change_release(&ch);
			return 0;
		}
	}
	if (!chain_follows(&ch)) {
		cf_fleet_change_release(&ch);
		return -EAGAIN;
	}
	ret = apply(&ch);
	if (!ret)
		ret = chain_add(&ch);
	cf_fleet_change_release(&ch);
	report();
	return ret ? -EAGAIN : 0;
}

static bool watch_stop(void *arg)
{
	(void)arg;
	return atomic_load(&A.stop) || atomic_exchange(&A.restart, false);
}

static int ensure_state(const struct cf_fleet_change *chs, size_t n, uint64_t upto,
			const char *what, uint64_t fail_rev, size_t *repaired);

/*
 * After a compaction (etcd's, or the fleet's into its snapshot): every
 * change at one revision S. A module below the snapshot is made to hold
 * the snapshot's state (ensure_state()) and advanced to its revision, the
 * chain starting at its seq and link; then each change past it is applied
 * in order, never past one that did not apply.
 */
static int rebuild(void)
{
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	uint64_t s, r0 = module_rev();
	size_t i, n, applied = 0;

	if (cf_fleet_snapshot(A.fleet, 0, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(r0 + 1, "snapshot: %s", err);
		return -1;
	}
	/*
	 * The chain moves to the snapshot only once the module holds its
	 * state: a host that reports the snapshot's seq, or that the head
	 * confirms, has every revocation folded into it.
	 */
	if (b.seq && b.rev > r0) {
		if (ensure_state(chs, n, b.rev, "snapshot", b.rev, &applied) || skip_to(b.rev)) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
		say("applied the fleet's snapshot: seq=%" PRIu64 " rev=%" PRIu64 " (%zu entries the module lacked)",
		    b.seq, b.rev, applied);
		r0 = b.rev;
	}
	chain_reset(&b);
	for (i = 0; i < n; i++) {
		if (chs[i].base)
			continue;
		if (!chain_follows(&chs[i])) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
		if (chs[i].rev > r0) {	/* else applied before */
			if (apply(&chs[i])) {
				cf_fleet_changes_free(chs, n);
				return -1;	/* never past a change that did not apply */
			}
			applied++;
		}
		if (chain_add(&chs[i])) {
			cf_fleet_changes_free(chs, n);
			return -1;
		}
	}
	cf_fleet_changes_free(chs, n);
	if (A.chained)
		A.watch_from = s + 1;	/* the module stays at the last change */
	else if (skip_to(s))
		return -1;
	say("rebuilt from a snapshot at rev=%" PRIu64 " (%zu changes past rev=%" PRIu64 ")",
	    s, applied, r0);
	clear_failing(s);	/* every change up to s holds */
	report();
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
static int chain_sync(void)
{
	static const unsigned char genesis[CF_FLEET_HASH_LEN];
	unsigned char mlink[CF_FLEET_HASH_LEN];
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	size_t i, n, applied = 0, repaired = 0;
	uint64_t s, mseq;
	int ret;

	if (module_chain(&mseq, mlink))
		return -1;
	if (cf_fleet_snapshot(A.fleet, 0, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(SYNC_FAIL, "the chain: %s", err);
		return -1;
	}
	if (b.seq && mseq < b.seq) {
		if (ensure_state(chs, n, b.rev, "snapshot", SYNC_FAIL, &repaired))
			goto fail;
		pthread_mutex_lock(&A.cf_lock);
		ret = cf_fleet_module_chain_set(A.cf, b.seq, b.hash, err, sizeof(err));
		pthread_mutex_unlock(&A.cf_lock);
		if (ret) {
			set_failing(SYNC_FAIL, "snapshot seq=%" PRIu64 ": %s", b.seq, err);
			goto fail;
		}
		say("applied the fleet's snapshot: seq=%" PRIu64 " rev=%" PRIu64 " (%zu entries the module lacked)",
		    b.seq, b.rev, repaired);
		mseq = b.seq;
		memcpy(mlink, b.hash, CF_FLEET_HASH_LEN);
	}
	if (mseq == b.seq && memcmp(mlink, b.seq ? b.hash : genesis, CF_FLEET_HASH_LEN)) {
		set_failing(SYNC_FAIL, "the module's seq=%" PRIu64 " is not the store's there (a forked or restored store)",
			    mseq);
		goto fail;
	}
	chain_reset(&b);
	for (i = 0; i < n; i++) {
		const struct cf_fleet_change *ch = &chs[i];

		if (ch->base)
			continue;
		if (!chain_follows(ch))
			goto fail;
		if (ch->seq <= mseq) {
			if (ch->seq == mseq && memcmp(ch->link, mlink, CF_FLEET_HASH_LEN)) {
				set_failing(SYNC_FAIL, "the store's change at seq=%" PRIu64
					    " is not the one the module holds (a forked or restored store)",
					    mseq);
				goto fail;
			}
		} else {
			if (apply(ch))
				goto fail;	/* never past a change that did not apply */
			applied++;
		}
		if (chain_add(ch))
			goto fail;
	}
	if (A.chain_seq < mseq) {
		set_failing(SYNC_FAIL, "the module holds seq=%" PRIu64 ", the store's chain ends at seq=%" PRIu64
			    " (a store restored from a backup, or rolled back)", mseq, A.chain_seq);
		goto fail;
	}
	cf_fleet_changes_free(chs, n);
	A.watch_from = s + 1;
	if (applied)
		say("caught up with the fleet's chain at seq=%" PRIu64 " (%zu changes applied)",
		    A.chain_seq, applied);
	clear_failing(SYNC_FAIL);
	report();
	return 0;
fail:
	cf_fleet_changes_free(chs, n);
	return -1;
}

static void *watch_main(void *arg)
{
	char err[CAPFENCE_ERR_MAX];
	uint32_t backoff = 200, retry = RETRY_MIN_MS;
	bool failing = false;

	(void)arg;
	while (!atomic_load(&A.stop)) {
		uint64_t from = module_rev() + 1;

		if (A.chained) {
			atomic_store(&A.restart, false);
			atomic_store(&A.rebuild_asked, false);
			if (chain_sync()) {
				nap(retry);
				retry = retry < RETRY_MAX_MS ? retry * 2 : RETRY_MAX_MS;
				continue;
			}
			from = A.watch_from;
			A.stream_rev = from - 1;
			goto watch;
		}
		if (atomic_exchange(&A.rebuild_asked, false) && rebuild()) {
			nap(retry);
			retry = retry < RETRY_MAX_MS ? retry * 2 : RETRY_MAX_MS;
			continue;
		}
		from = module_rev() + 1;
		if (A.watch_from > from)
			from = A.watch_from;
		atomic_store(&A.restart, false);
		if (chain_load(from - 1)) {
			nap(retry);
			retry = retry < RETRY_MAX_MS ? retry * 2 : RETRY_MAX_MS;
			continue;
		}
watch:;
		int64_t compact = 0, t0 = now_ms();
		int ret;

		ret = cf_etcd_watch(A.fleet->etcd, A.fleet->fleet, (int64_t)from, on_event,
				    watch_stop, NULL, &compact, err, sizeof(err));
		if (atomic_load(&A.stop))
			break;
		if (now_ms() - t0 > 10000) {	/* it was up: a new failure */
			backoff = 200;
			failing = false;
		}
		if (ret == -ECANCELED && compact) {
			say("watch from rev=%" PRIu64 ": compacted at rev=%" PRId64 ", rebuilding",
			    from, compact);
			if (A.chained) {
				retry = RETRY_MIN_MS;	/* chain_sync() on the way round */
			} else if (rebuild()) {
				nap(retry);
				retry = retry < RETRY_MAX_MS ? retry * 2 : RETRY_MAX_MS;
			} else {
				retry = RETRY_MIN_MS;
			}
			continue;
		}
		if (ret == -EAGAIN) {
			/* a change did not apply: from it again, after a backoff */
			nap(retry);
			retry = retry < RETRY_MAX_MS ? retry * 2 : RETRY_MAX_MS;
			continue;
		}
		retry = RETRY_MIN_MS;
		if (!ret) {
			if (A.chained)
				say("restarting the watch: resyncing with the fleet's chain");
			else
				say("restarting the watch from rev=%" PRIu64, module_rev() + 1);
			backoff = 200;
			failing = false;
			continue;
		}
		if (!failing || backoff >= 5000)	/* not every retry */
			say("watch from rev=%" PRIu64 ": %s", from, err);
		failing = true;
		nap(backoff);
		backoff = backoff < 5000 ? backoff * 2 : 5000;
	}
	return NULL;
}

/* ---- module reload and reconciliation ------------------------------------------- */

static int set_bounds(char *err, size_t errlen)
{
	struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_BOUNDS,
					 .stale_ms = A.stale_ms, .deny_ms = A.deny_ms };

	return capfence_client_fleet_set(A.cf, &fs, err, errlen);
}

/*
 * The module as the agent left it? A reloaded module (the handle fails,
 * or fleet mode is off, or its revision went back) is re-armed: bounds set
 * again (it denies until the first confirmation) and the watch replays
 * the fleet from its revision + 1. Returns the module's revision, or -1
 * when it cannot be read (no confirmation then).
 */
static int64_t check_module(bool *rearmed)
{
	struct capfence_fleet_status st;
	char err[CAPFENCE_ERR_MAX];
	static bool gone;
	uint64_t mseq = 0;
	int ret;

	*rearmed = false;
	pthread_mutex_lock(&A.cf_lock);
	ret = capfence_client_fleet_status(A.cf, &st, err, sizeof(err));
	if (ret) {
		struct capfence_client *c;

		/* a reloaded module is a new generic netlink family: reopen */
		if (capfence_client_open(&c, err, sizeof(err))) {
			pthread_mutex_unlock(&A.cf_lock);
			if (!gone)
				say("the module cannot be reached: %s; waiting for it", err);
			gone = true;
			return -1;
		}
		capfence_client_close(A.cf);
		A.cf = c;
		ret = capfence_client_fleet_status(A.cf, &st, err, sizeof(err));
		if (ret) {
			pthread_mutex_unlock(&A.cf_lock);
			say("cannot read the module's fleet state: %s", err);
			return -1;
		}
	}
	gone = false;
	if (A.chained) {
		unsigned char link[CF_FLEET_HASH_LEN];

		if (cf_fleet_module_chain(A.cf, &mseq, link, err, sizeof(err))) {
			pthread_mutex_unlock(&A.cf_lock);
			say("cannot read the module's fleet chain: %s", err);
			return -1;
		}
	}
	if (!st.stale_ms || st.rev < A.known_rev || mseq < A.known_seq) {
		say("the module was reloaded or reset (rev=%" PRIu64 ", fleet mode %s): re-arming fleet mode and replaying the fleet",
		    st.rev, st.stale_ms ? "on" : "off");
		if (set_bounds(err, sizeof(err))) {
			pthread_mutex_unlock(&A.cf_lock);
			say("cannot set the fleet bounds: %s", err);
			return -1;
		}
		A.known_rev = st.rev;
		A.known_seq = mseq;
		*rearmed = true;
		/*
		 * The module has none of the chain: until the watch has
		 * replayed it, the head finds this host behind and confirms
		 * nothing, and a change still in flight on the old stream
		 * does not follow.
		 */
		chain_reset(&(struct cf_fleet_base){ 0 });
		A.watch_from = 0;
		atomic_store(&A.rearm, true);
		atomic_store(&A.restart, true);
	}
	if (st.rev > A.known_rev)
		A.known_rev = st.rev;
	if (mseq > A.known_seq)
		A.known_seq = mseq;
	pthread_mutex_unlock(&A.cf_lock);
	/* chained, the position is what the module has applied */
	return (int64_t)(A.chained ? mseq : st.rev);
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
static int ensure_state(const struct cf_fleet_change *chs, size_t n, uint64_t upto,
			const char *what, uint64_t fail_rev, size_t *repaired)
{
	const struct cf_fleet_change *act = NULL;
	char err[CAPFENCE_ERR_MAX];
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&A.cf_lock);
	for (i = 0; i < n && !ret; i++) {
		const struct cf_fleet_change *ch = &chs[i];
		struct capfence_epoch_info ei;
		struct capfence_result r;
		char id[24];

		if (ch->rev > upto)
			break;
		err[0] = '\0';
		change_id(ch, id, sizeof(id));
		switch (ch->kind) {
		case CF_FLEET_EPOCH_INSTALL:
			ret = capfence_client_epoch_get(A.cf, ch->id, &ei, err, sizeof(err));
			if (ret == -ENOENT) {
				ret = capfence_client_epoch_install(A.cf, ch->epoch, err, sizeof(err));
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
			ret = injected_fault(err, sizeof(err));
			if (!ret)
				ret = capfence_client_revoke(A.cf, ch->id, &r);
			if (ret && !err[0])
				snprintf(err, sizeof(err), "%s", r.message[0] ? r.message : strerror(-ret));
			break;
		case CF_FLEET_KEY_REMOVE:
			ret = capfence_client_key_remove(A.cf, (uint32_t)ch->id, err, sizeof(err));
			if (!ret) {
				say("%s: key %s was back in the module: removed", what, id);
				(*repaired)++;
			} else if (ret == -ENOENT) {
				ret = 0;
			}
			break;
		default:
			break;
		}
		if (ret)
			set_failing(fail_rev, "%s: rev=%" PRIu64 " %s %s: %s", what, ch->rev,
				    cf_fleet_kind_name(ch->kind), id, err);
	}
	if (!ret && act) {
		struct capfence_epoch_info ei;

		ret = capfence_client_epoch_get(A.cf, act->id, &ei, err, sizeof(err));
		if (!ret && !ei.active) {
			ret = capfence_client_epoch_activate(A.cf, act->id, err, sizeof(err));
			*repaired += !ret;
		}
		if (ret)
			set_failing(fail_rev, "%s: rev=%" PRIu64 " epoch_activate %" PRIu64 ": %s",
				    what, act->rev, act->id, err);
	}
	pthread_mutex_unlock(&A.cf_lock);
	return ret ? -1 : 0;
}

/*
 * Compare the module with the fleet (its snapshot and the changes past
 * it) up to the module's revision (chained: its seq), and repair
 * (ensure_state()). 0 when the module agrees (after repairs).
 */
static int reconcile(uint64_t upto)
{
	struct cf_fleet_base b;
	struct cf_fleet_change *chs;
	char err[CAPFENCE_ERR_MAX];
	size_t n, repaired = 0;
	uint64_t s;
	int ret;

	if (cf_fleet_snapshot(A.fleet, 0, &chs, &n, &s, &b, err, sizeof(err))) {
		set_failing(0, "reconcile: %s", err);
		count_error(CF_AGENT_ERR_RECONCILE);
		return -1;
	}
	if (A.chained) {
		/* upto is the module's seq: as far as the change at it (a resync judges the rest) */
		size_t i;
		uint64_t seq = upto;

		upto = seq && seq == b.seq ? b.rev : 0;
		for (i = 0; i < n && !upto; i++)
			if (!chs[i].base && chs[i].seq == seq)
				upto = chs[i].rev;
	}
	ret = ensure_state(chs, n, upto, "reconcile", 0, &repaired);
	cf_fleet_changes_free(chs, n);
	pthread_mutex_lock(&A.metrics_lock);
	A.m.reconciles++;
	A.m.repaired += repaired;
	if (ret)
		A.m.errors[CF_AGENT_ERR_RECONCILE]++;
	pthread_mutex_unlock(&A.metrics_lock);
	if (repaired)
		say("reconcile: %zu change%s repaired in the module", repaired, repaired == 1 ? "" : "s");
	if (!ret)
		clear_failing(0);
	return ret;
}

/* ---- the heartbeat ------------------------------------------------------------------ */

/* Why the head stops confirmations ("" clears); said once per kind. */
static void head_note(int kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void head_note(int kind, const char *fmt, ...)
{
	static int last_kind;
	char why[sizeof(A.head_why)] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_lock(&A.state_lock);
	snprintf(A.head_why, sizeof(A.head_why), "%s", why);
	pthread_mutex_unlock(&A.state_lock);
	if (kind != last_kind)
		say(kind ? "HEAD: %s; no freshness confirmed until it clears" : "head: %s",
		    kind ? why : "the module has the fleet's head again");
	last_kind = kind;
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
static bool head_allows(uint64_t *asked, bool *behind)
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
	ret = cf_fleet_head_get(A.fleet, &hd, NULL, err, sizeof(err));
	if (ret == -ENOENT && !A.require_head) {
		memset(&hd, 0, sizeof(hd));	/* no change signed yet: genesis */
	} else if (ret) {
		head_note(HEAD_UNREAD, "the fleet head: %s", err);
		return false;
	}
	if (hd.seq < A.head_seen) {
		head_note(HEAD_ROLLBACK, "the store's head went back from seq=%" PRIu64 " to seq=%" PRIu64
			  " (a rollback)", A.head_seen, hd.seq);
		return false;
	}
	A.head_seen = hd.seq;
	if (module_chain(&mseq, mlink)) {
		head_note(HEAD_UNREAD, "the module's fleet chain cannot be read");
		return false;
	}
	pthread_mutex_lock(&A.state_lock);
	seq = A.chain_seq;
	link = hd.seq <= seq ? link_of(hd.seq) : NULL;
	fork = hd.seq && hd.seq <= seq && (!link || memcmp(link, hd.hash, CF_FLEET_HASH_LEN));
	pthread_mutex_unlock(&A.state_lock);
	if (hd.seq == mseq && memcmp(mlink, hd.hash, CF_FLEET_HASH_LEN))
		fork = true;
	if (mseq < hd.seq || seq != mseq) {
		*behind = true;
		head_note(HEAD_BEHIND, "behind the fleet head: seq=%" PRIu64 " of seq=%" PRIu64, mseq, hd.seq);
		return false;
	}
	if (fork) {
		head_note(HEAD_FORK, "the fleet head's seq=%" PRIu64 " is not the change this host has there (a forked store)",
			  hd.seq);
		return false;
	}
	if (!A.require_head) {
		head_note(HEAD_OK, NULL);
		return true;
	}
	if (A.anchor.have && hd.time_ms < A.anchor.time_ms) {
		head_note(HEAD_ROLLBACK, "the fleet head's signed time went back from %" PRId64 " to %" PRId64
			  " (a replayed head)", A.anchor.time_ms, hd.time_ms);
		return false;
	}
	if (!A.anchor.have || hd.seq != A.anchor.seq || hd.time_ms != A.anchor.time_ms) {
		/* first sight: its age on the wall clock now, once */
		uint64_t nb = boot_ns();

		age = wall - hd.time_ms;
		if (age < 0)
			age = 0;	/* the signer's clock is ahead: dated now */
		A.anchor.have = true;
		A.anchor.seq = hd.seq;
		A.anchor.time_ms = hd.time_ms;
		A.anchor.signed_ns = nb > (uint64_t)age * 1000000ull ? nb - (uint64_t)age * 1000000ull : 1;
	}
	age = (int64_t)((boot_ns() - A.anchor.signed_ns) / 1000000ull);
	if (age >= (int64_t)A.stale_ms) {
		head_note(HEAD_OLD, "the fleet head is %" PRId64 " ms old, signed at %" PRId64
			  " (frozen, or no `capfence fleet head --every` runs)", age, hd.time_ms);
		return false;
	}
	if (*asked > A.anchor.signed_ns)
		*asked = A.anchor.signed_ns;
	head_note(HEAD_OK, NULL);
	return true;
}

/*
 * After a confirmation: READY=1 the first time the module says it is in
 * fleet mode and current; STATUS= with the state from then on.
 */
static void notify_state(void)
{
	struct capfence_fleet_status st;
	char err[CAPFENCE_ERR_MAX];
	bool failing = is_failing(), ready;
	int ret;

	pthread_mutex_lock(&A.cf_lock);
	ret = capfence_client_fleet_status(A.cf, &st, err, sizeof(err));
	pthread_mutex_unlock(&A.cf_lock);
	if (ret)
		return;
	pthread_mutex_lock(&A.metrics_lock);
	ready = A.m.ready;
	if (!ready && st.stale_ms && st.state == CAPFENCE_FLEET_CURRENT && !failing)
		A.m.ready = true;
	pthread_mutex_unlock(&A.metrics_lock);
	if (!ready && st.stale_ms && st.state == CAPFENCE_FLEET_CURRENT && !failing) {
		say("ready: the module is in fleet mode and current at rev=%" PRIu64, st.rev);
		sd_notify(0, "READY=1");
	}
	if (failing)
		sd_status("failing: a change does not apply (capfence fleet status says which)");
	else
		sd_status("fleet %s", capfence_fleet_state_name(st.state));
}

/* the heartbeat's sleep, feeding the watchdog */
static void beat_nap(uint32_t ms)
{
	while (ms && !atomic_load(&A.stop)) {
		uint32_t step = ms < 100 ? ms : 100;

		watchdog_ping();
		nap(step);
		ms -= step;
	}
}

static void heartbeat_loop(void)
{
	uint64_t last_applied = 0, lag_beats = 0;
	int64_t next_reconcile = 0;	/* now: on start */
	char err[CAPFENCE_ERR_MAX];
	bool down = false;

	while (!atomic_load(&A.stop)) {
		int64_t t0 = now_ms(), spent, mrev;
		uint64_t f = 0, store = 0, applied, asked;
		bool rearmed;
		int ret;

		watchdog_ping();
		mrev = check_module(&rearmed);
		if (mrev < 0) {
			count_error(CF_AGENT_ERR_MODULE);
			sd_status("the module cannot be reached");
			goto next;
		}
		/*
		 * Read before the store is asked: the module dates the
		 * confirmation from this instant, so no stall or suspend
		 * between here and FLEET_SET extends its bounds.
		 */
		asked = boot_ns();
		if (A.chained) {
			/*
			 * The signed head says what the module must have
			 * (head_allows): one key read per beat, however long the
			 * fleet's history.
			 */
			f = 0;
		} else if (cf_fleet_latest(A.fleet, &f, &store, err, sizeof(err))) {
			if (!down)	/* once per outage */
				say("heartbeat: %s; no confirmations until it answers", err);
			down = true;
			count_error(CF_AGENT_ERR_ETCD);
			sd_status("etcd does not answer: no confirmations");
			goto next;
		}
		watchdog_ping();	/* each etcd request is bounded by its timeout */
		if (down)
			say("heartbeat: etcd answers again");
		down = false;
		applied = A.chained ? (uint64_t)mrev : module_rev();
		if (applied >= f && (atomic_load(&A.rearm) ||
				     (A.reconcile_s && now_ms() >= next_reconcile))) {
			/* caught up (after a reload: replayed): compare and repair */
			atomic_store(&A.rearm, false);
			next_reconcile = now_ms() + (int64_t)A.reconcile_s * 1000;
			reconcile(applied);
			watchdog_ping();
		}
		if (A.chained && !is_failing()) {
			bool behind;

			if (!head_allows(&asked, &behind)) {
				if (behind && applied == last_applied && ++lag_beats >= WATCH_LAG_BEATS) {
					/* a snapshot: the store may withhold the change from a watch */
					say("the module is behind the fleet head: rebuilding from a snapshot");
					atomic_store(&A.rebuild_asked, true);
					atomic_store(&A.restart, true);
					lag_beats = 0;
				}
				last_applied = applied;
				report();
				notify_state();
				goto next;
			}
		}
		if (applied >= f && !is_failing()) {
			/*
			 * No fleet change lies in (f, store]: the module is
			 * current as of the store's revision, which becomes its
			 * revision (as after a snapshot) with the confirmation.
			 */
			struct capfence_fleet_set fs = {
				.flags = CAPFENCE_FLEET_SET_FRESH | CAPFENCE_FLEET_SET_ASKED |
					 (store > applied && !A.chained ? CAPFENCE_FLEET_SET_REV : 0),
				.rev = store,
				.asked_ns = asked,
			};

			pthread_mutex_lock(&A.cf_lock);
			ret = capfence_client_fleet_set(A.cf, &fs, err, sizeof(err));
			if (ret == -EALREADY && (fs.flags & CAPFENCE_FLEET_SET_REV)) {
				/* the watch applied a newer change meanwhile */
				fs.flags = CAPFENCE_FLEET_SET_FRESH | CAPFENCE_FLEET_SET_ASKED;
				ret = capfence_client_fleet_set(A.cf, &fs, err, sizeof(err));
			}
			pthread_mutex_unlock(&A.cf_lock);
			if (ret) {
				say("cannot confirm freshness: %s", err);
				count_error(CF_AGENT_ERR_CONFIRM);
			} else {
				pthread_mutex_lock(&A.metrics_lock);
				A.m.confirmations++;
				pthread_mutex_unlock(&A.metrics_lock);
			}
			notify_state();
			lag_beats = 0;
		} else if (is_failing()) {
			lag_beats = 0;	/* the watch retries the change itself */
			notify_state();
		} else if (applied == last_applied && ++lag_beats >= WATCH_LAG_BEATS) {
			/* the store has rev=f, the watch delivers nothing: a dead stream */
			say("the module is at rev=%" PRIu64 ", the fleet at rev=%" PRIu64
			    ": restarting the watch", applied, f);
			atomic_store(&A.restart, true);
			lag_beats = 0;
		} else if (applied != last_applied) {
			lag_beats = 0;
		}
		last_applied = applied;
		report();
next:
		watchdog_ping();
		spent = now_ms() - t0;
		if (spent < A.heartbeat_ms)
			beat_nap((uint32_t)(A.heartbeat_ms - spent));
	}
}

/* ---- options -------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: capfenced --endpoints URL[,URL...] --host NAME [--prefix P]\n"
		"                 [--max-staleness MS] [--deny-after MS] [--heartbeat MS]\n"
		"                 [--lease-ttl S] [--reconcile S] [--report-every MS] [--foreground]\n"
		"                 [--log FILE]\n"
		"                 [--cacert FILE] [--cert FILE --key FILE] [--user U --password-file F]\n"
		"                 [--insecure-plaintext]\n"
		"                 [--fleet-pubkey KEY]... [--host-key FILE] [--require-head]\n"
		"                 [--metrics-listen ADDR:PORT]\n");
}

static int num(const char *opt, const char *s, unsigned long min, unsigned long max,
	       uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "capfenced: %s: '%s' is not a number from %lu to %lu\n",
			opt, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoints", required_argument, NULL, 'e' },
		{ "host", required_argument, NULL, 'H' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "max-staleness", required_argument, NULL, 's' },
		{ "deny-after", required_argument, NULL, 'd' },
		{ "heartbeat", required_argument, NULL, 'b' },
		{ "lease-ttl", required_argument, NULL, 'l' },
		{ "reconcile", required_argument, NULL, 'r' },
		{ "report-every", required_argument, NULL, 'E' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "insecure-plaintext", no_argument, NULL, 'I' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "fleet-pubkey", required_argument, NULL, 'P' },
		{ "host-key", required_argument, NULL, 'K' },
		{ "require-head", no_argument, NULL, 'R' },
		{ "user", required_argument, NULL, 'u' },
		{ "password-file", required_argument, NULL, 'W' },
		{ "metrics-listen", required_argument, NULL, 'M' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *endpoints = getenv("CAPFENCE_ETCD_ENDPOINTS"), *prefix = CF_FLEET_PREFIX;
	const char *logpath = NULL, *cacert = NULL, *cert = NULL, *key = NULL, *host_key = NULL;
	const char *user = NULL, *password_file = NULL, *listen_on = NULL;
	bool insecure = false;
	struct cfd_http http = { .fd = -1, .stop = &A.stop, .agent = agent_metrics };
	pthread_t listener;
	const char *pubkeys[CF_FLEET_MAX_PUBKEYS + 1];
	size_t npub = 0, i;
	uint32_t ttl = DEF_LEASE_TTL, ttl_asked = 0, report_ms = DEF_REPORT_MS;
	bool fg = false, deny_set = false;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_fleet_set fs;
	pthread_t watcher;
	struct sigaction sa;
	int c, ret;

	A.stale_ms = DEF_STALE_MS;
	A.deny_ms = DEF_DENY_MS;
	A.heartbeat_ms = DEF_HEARTBEAT_MS;
	A.reconcile_s = DEF_RECONCILE_S;
	A.fault_file = getenv("CAPFENCED_FAULT_FILE");
	pthread_mutex_init(&A.log_lock, NULL);
	pthread_mutex_init(&A.cf_lock, NULL);
	pthread_mutex_init(&A.state_lock, NULL);
	pthread_mutex_init(&A.report_lock, NULL);
	pthread_mutex_init(&A.metrics_lock, NULL);
	opterr = 0;	/* our own one-line messages */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e': endpoints = optarg; break;
		case 'H': A.host = optarg; break;
		case 'p': prefix = optarg; break;
		case 's':
			if (num("--max-staleness", optarg, 1, CAPFENCE_FLEET_MAX_MS, &A.stale_ms))
				return 2;
			break;
		case 'd':
			if (num("--deny-after", optarg, 1, CAPFENCE_FLEET_MAX_MS, &A.deny_ms))
				return 2;
			deny_set = true;
			break;
		case 'b':
			if (num("--heartbeat", optarg, 10, 3600000, &A.heartbeat_ms))
				return 2;
			break;
		case 'l':
			if (num("--lease-ttl", optarg, 1, 3600, &ttl))
				return 2;
			break;
		case 'r':
			if (num("--reconcile", optarg, 0, 86400, &A.reconcile_s))
				return 2;
			break;
		case 'E':
			if (num("--report-every", optarg, 0, 3600000, &report_ms))
				return 2;
			break;
		case 'C': cacert = optarg; break;
		case 'I': insecure = true; break;
		case 'c': cert = optarg; break;
		case 'k': key = optarg; break;
		case 'K': host_key = optarg; break;
		case 'u': user = optarg; break;
		case 'W': password_file = optarg; break;
		case 'P':
			if (npub == CF_FLEET_MAX_PUBKEYS) {
				fprintf(stderr, "capfenced: --fleet-pubkey: at most %d keys\n",
					CF_FLEET_MAX_PUBKEYS);
				return 2;
			}
			pubkeys[npub++] = optarg;
			break;
		case 'R': A.require_head = true; break;
		case 'M': listen_on = optarg; break;
		case 'f': fg = true; break;
		case 'L': logpath = optarg; break;
		case 'h': usage(stdout); return 0;
		case ':':
		default:
			fprintf(stderr, "capfenced: %s '%s'\n",
				optopt && c == ':' ? "missing value of" : "unknown option or missing value:",
				argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "capfenced: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!endpoints || !*endpoints) {
		fprintf(stderr, "capfenced: --endpoints is required (or CAPFENCE_ETCD_ENDPOINTS)\n");
		return 2;
	}
	if (!A.host) {
		fprintf(stderr, "capfenced: --host is required\n");
		return 2;
	}
	if (cf_fleet_check_host(A.host, err, sizeof(err))) {
		fprintf(stderr, "capfenced: --host: %s\n", err);
		return 2;
	}
	if (!deny_set && A.deny_ms < A.stale_ms)
		A.deny_ms = A.stale_ms;
	if (A.deny_ms < A.stale_ms) {
		fprintf(stderr, "capfenced: --deny-after (%u) must not be below --max-staleness (%u)\n",
			A.deny_ms, A.stale_ms);
		return 2;
	}
	if (A.require_head && !npub) {
		fprintf(stderr, "capfenced: --require-head needs --fleet-pubkey (the head is verified with it)\n");
		return 2;
	}
	A.chained = npub > 0;
	if (A.heartbeat_ms >= A.stale_ms) {
		fprintf(stderr, "capfenced: --heartbeat (%u) must be below --max-staleness (%u)\n",
			A.heartbeat_ms, A.stale_ms);
		return 2;
	}
	/* 0: a report every heartbeat; never less often than that */
	A.pacer.every_ms = report_ms && report_ms < A.heartbeat_ms ? A.heartbeat_ms : report_ms;
	/*
	 * A host leaves the live set (its key goes with the lease) only once
	 * its module denies every grant: the lease outlives the deny bound by
	 * a heartbeat and a second, so `fleet revoke --wait` never counts a
	 * cut-off host out while it still allows what was revoked.
	 */
	if (A.deny_ms) {
		uint32_t min_ttl = (A.deny_ms + A.heartbeat_ms + 999) / 1000 + 1;

		if (ttl < min_ttl) {
			ttl_asked = ttl;	/* said once running */
			ttl = min_ttl;
		}
	}
	A.lease_ttl = ttl;
	A.log = stderr;
	/* bound before anything else can fail: a bad address is one line here */
	if (listen_on) {
		http.fd = cfd_http_listen(listen_on, err, sizeof(err));
		if (http.fd < 0) {
			fprintf(stderr, "capfenced: %s\n", err);
			return 2;
		}
	}
	if (logpath) {
		A.log = fopen(logpath, "ae");
		if (!A.log) {
			fprintf(stderr, "capfenced: --log %s: %s\n", logpath, strerror(errno));
			return 2;
		}
	}
	ret = cf_fleet_open(&A.fleet, endpoints, prefix, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "capfenced: %s\n", err);
		return 2;
	}
	if (insecure)
		cf_etcd_allow_plaintext(A.fleet->etcd);
	if ((cacert || cert || key) &&
	    cf_etcd_set_tls(A.fleet->etcd, cacert, cert, key, err, sizeof(err))) {
		fprintf(stderr, "capfenced: %s\n", err);
		cf_fleet_close(A.fleet);
		return 2;
	}
	if ((user || password_file) &&
	    cf_etcd_set_auth(A.fleet->etcd, user, password_file, err, sizeof(err))) {
		fprintf(stderr, "capfenced: %s\n", err);
		cf_fleet_close(A.fleet);
		return 2;
	}
	for (i = 0; i < npub; i++) {
		if (cf_fleet_add_pubkey(A.fleet, pubkeys[i], err, sizeof(err))) {
			fprintf(stderr, "capfenced: --fleet-pubkey %s\n", err);
			cf_fleet_close(A.fleet);
			return 2;
		}
	}
	if (host_key && cf_fleet_load_host_key(A.fleet, host_key, err, sizeof(err))) {
		fprintf(stderr, "capfenced: --host-key %s\n", err);
		cf_fleet_close(A.fleet);
		return 2;
	}
	/* a partition must never hold a heartbeat for long (a TLS handshake is slower) */
	cf_etcd_set_timeouts(A.fleet->etcd, strstr(endpoints, "https://") ? 3000 : 1000,
			     A.heartbeat_ms * 2 > 3000 ? (long)A.heartbeat_ms * 2 : 3000);
	ret = capfence_client_open(&A.cf, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "capfenced: %s\n", err);
		cf_fleet_close(A.fleet);
		return 1;
	}
	fs = (struct capfence_fleet_set){ .flags = CAPFENCE_FLEET_SET_BOUNDS,
					  .stale_ms = A.stale_ms, .deny_ms = A.deny_ms };
	A.known_rev = module_rev();
	if (capfence_client_fleet_set(A.cf, &fs, err, sizeof(err))) {
		fprintf(stderr, "capfenced: cannot set the fleet bounds: %s\n", err);
		capfence_client_close(A.cf);
		cf_fleet_close(A.fleet);
		return 1;
	}
	if (!fg) {
		if (daemon(0, logpath != NULL) < 0) {
			fprintf(stderr, "capfenced: daemon: %s\n", strerror(errno));
			return 1;
		}
		if (!logpath) {
			openlog("capfenced", LOG_PID, LOG_DAEMON);
			A.use_syslog = true;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	say("host %s, fleet %s at %s, module at rev=%" PRIu64 ", stale after %u ms, deny after %u ms",
	    A.host, A.fleet->fleet, endpoints, module_rev(), A.stale_ms, A.deny_ms);
	A.m.start_time = (double)cf_fleet_wall_ms() / 1000.0;
	/* systemd's watchdog, fed by the heartbeat: it must beat well within it */
	if (sd_watchdog_enabled(0, &A.wd_usec) <= 0)
		A.wd_usec = 0;
	if (A.wd_usec)
		say("watchdog: WATCHDOG=1 from the heartbeat, WatchdogSec=%" PRIu64 " ms%s",
		    A.wd_usec / 1000, A.wd_usec / 1000 < 2ull * A.heartbeat_ms ?
		    " (below twice --heartbeat: systemd may restart a healthy agent)" : "");
	sd_status("starting: waiting for the module to be current with the fleet");
	if (http.fd >= 0) {
		if (pthread_create(&listener, NULL, cfd_http_main, &http)) {
			say("cannot start the metrics listener");
			return 1;
		}
		say("metrics at http://%s/metrics, health at /healthz", listen_on);
	}
	if (!npub)
		say("no --fleet-pubkey: changes are not authenticated, whoever can write to etcd can change this host's policy");
	if (ttl_asked)
		say("--lease-ttl %u raised to %u s: a host must stay live until it denies (--deny-after %u ms)",
		    ttl_asked, ttl, A.deny_ms);
	if (pthread_create(&watcher, NULL, watch_main, NULL)) {
		say("cannot start the watch thread");
		return 1;
	}
	heartbeat_loop();
	sd_notify(0, "STOPPING=1");
	pthread_join(watcher, NULL);
	if (http.fd >= 0) {
		pthread_join(listener, NULL);
		close(http.fd);
	}
	/*
	 * The lease is left to expire, not revoked: the module keeps allowing
	 * grants until its deny bound, so the host stays in the live set (and
	 * `fleet revoke --wait` waits for it) until then. A restarted agent
	 * puts the key under its new lease.
	 */
	say("stopped at rev=%" PRIu64, module_rev());
	capfence_client_close(A.cf);
	cf_fleet_close(A.fleet);
	free(A.links);
	if (A.log != stderr)
		fclose(A.log);
	pthread_mutex_destroy(&A.log_lock);
	return 0;
}
