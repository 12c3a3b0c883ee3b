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
 * The state machine (the watch's apply, rebuild, resync and reconcile,
 * the heartbeat's verdict and the report) is agent_core.c, which the
 * fleet simulator runs too; this file gives it the module (the library's
 * client) and etcd through struct cfa_ops, and adds the options, the
 * log, systemd and the metrics listener.
 *
 * Two threads, three with --metrics-listen: the watch applies; the
 * heartbeat confirms, reports, reconciles, re-arms a reloaded module and
 * restarts a watch that stopped delivering; the listener answers scrapes
 * on a module handle of its own. The locks are agent_core.h's.
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
#include "agent_core.h"
#include "cf_fleet.h"
#include "cf_metrics.h"
#include "http.h"

#define DEF_STALE_MS	10000
#define DEF_DENY_MS	30000
#define DEF_HEARTBEAT_MS 1000
#define DEF_LEASE_TTL	10
#define DEF_RECONCILE_S	60
#define DEF_REPORT_MS	10000

static struct {
	struct cfa a;			/* the state machine (agent_core.c) */
	struct cf_fleet *fleet;
	struct capfence_client *cf;	/* the module handle (a.cf_lock) */
	const char *fault_file;		/* test only: CAPFENCED_FAULT_FILE */
	FILE *log;
	bool use_syslog;
	pthread_mutex_t log_lock;
	uint64_t wd_usec;		/* systemd's WatchdogSec, 0 = none */
	int64_t wd_last;		/* the last WATCHDOG=1, ms */
	char sd_status[200];		/* the last STATUS= sent */
} A;

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

/* ---- metrics and systemd ------------------------------------------------------------ */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* for the listener: a copy of the counters */
static void agent_metrics(struct cf_agent_metrics *out)
{
	bool failing = cfa_is_failing(&A.a);

	pthread_mutex_lock(&A.a.metrics_lock);
	*out = A.a.m;
	pthread_mutex_unlock(&A.a.metrics_lock);
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
	atomic_store(&A.a.stop, true);
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
		while (!atomic_load(&A.a.stop) && (f = fopen(A.fault_file, "re"))) {
			bool hang = fgets(buf, sizeof(buf), f) && !strncmp(buf, "hang", 4);

			fclose(f);
			if (!hang)
				break;
			cfa_nap(&A.a, 100);
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

/* ---- the module and the store, for the state machine -------------------------------- */

static int m_status(struct cfa *a, struct capfence_fleet_status *st, char *err, size_t errlen)
{
	(void)a;
	return capfence_client_fleet_status(A.cf, st, err, errlen);
}

static int m_set(struct cfa *a, const struct capfence_fleet_set *fs, char *err, size_t errlen)
{
	(void)a;
	return capfence_client_fleet_set(A.cf, fs, err, errlen);
}

static int m_chain(struct cfa *a, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN],
		   char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_module_chain(A.cf, seq, link, err, errlen);
}

static int m_chain_set(struct cfa *a, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
		       char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_module_chain_set(A.cf, seq, link, err, errlen);
}

static int m_apply(struct cfa *a, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	int ret = injected_fault(err, errlen);

	(void)a;
	return ret ? ret : cf_fleet_apply(A.cf, ch, err, errlen);
}

static int m_epoch_get(struct cfa *a, uint64_t id, struct capfence_epoch_info *ei,
		       char *err, size_t errlen)
{
	(void)a;
	return capfence_client_epoch_get(A.cf, id, ei, err, errlen);
}

static int m_epoch_install(struct cfa *a, const struct capfence_epoch *e, char *err, size_t errlen)
{
	(void)a;
	return capfence_client_epoch_install(A.cf, e, err, errlen);
}

static int m_epoch_activate(struct cfa *a, uint64_t id, char *err, size_t errlen)
{
	(void)a;
	return capfence_client_epoch_activate(A.cf, id, err, errlen);
}

static int m_revoke(struct cfa *a, uint64_t cap_id, char *err, size_t errlen)
{
	struct capfence_result r;
	int ret = injected_fault(err, errlen);

	(void)a;
	if (ret)
		return ret;
	ret = capfence_client_revoke(A.cf, cap_id, &r);
	if (ret)
		snprintf(err, errlen, "%s", r.message[0] ? r.message : strerror(-ret));
	return ret;
}

static int m_key_remove(struct cfa *a, uint32_t key_id, char *err, size_t errlen)
{
	(void)a;
	return capfence_client_key_remove(A.cf, key_id, err, errlen);
}

static int m_reopen(struct cfa *a, char *err, size_t errlen)
{
	struct capfence_client *c;

	(void)a;
	if (capfence_client_open(&c, err, errlen))
		return -1;
	capfence_client_close(A.cf);
	A.cf = c;
	return 0;
}

static int s_snapshot(struct cfa *a, struct cf_fleet_change **chs, size_t *n, uint64_t *rev,
		      struct cf_fleet_base *b, char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_snapshot(A.fleet, 0, chs, n, rev, b, err, errlen);
}

static int s_head(struct cfa *a, struct cf_fleet_head *hd, char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_head_get(A.fleet, hd, NULL, err, errlen);
}

static int s_latest(struct cfa *a, uint64_t *rev, uint64_t *store_rev, char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_latest(A.fleet, rev, store_rev, err, errlen);
}

static int s_decode(struct cfa *a, const char *key, const char *value, struct cf_fleet_change *ch,
		    char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_decode_verified(A.fleet, key, value, ch, err, errlen);
}

static int s_watch(struct cfa *a, uint64_t from, cf_etcd_event_cb cb, cf_etcd_stop_cb stop,
		   int64_t *compact, char *err, size_t errlen)
{
	return cf_etcd_watch(A.fleet->etcd, A.fleet->fleet, (int64_t)from, cb, stop, a,
			     compact, err, errlen);
}

static int s_lease_grant(struct cfa *a, int64_t ttl, int64_t *lease, char *err, size_t errlen)
{
	(void)a;
	return cf_etcd_lease_grant(A.fleet->etcd, ttl, lease, err, errlen);
}

static int s_lease_keepalive(struct cfa *a, int64_t lease, int64_t *ttl, char *err, size_t errlen)
{
	(void)a;
	return cf_etcd_lease_keepalive(A.fleet->etcd, lease, ttl, err, errlen);
}

static int s_report(struct cfa *a, const struct cf_fleet_host *h, int64_t lease,
		    char *err, size_t errlen)
{
	(void)a;
	return cf_fleet_report(A.fleet, h, lease, err, errlen);
}

static void o_say(struct cfa *a, const char *line)
{
	(void)a;
	say("%s", line);
}

static void o_tick(struct cfa *a)
{
	(void)a;
	watchdog_ping();
}

/* READY=1 once the module is in fleet mode and current; STATUS= */
static void o_notify(struct cfa *a, bool ready, const char *status)
{
	(void)a;
	if (ready)
		sd_notify(0, "READY=1");
	sd_status("%s", status);
}

static const struct cfa_ops capfenced_ops = {
	.status = m_status, .set = m_set, .chain = m_chain, .chain_set = m_chain_set,
	.apply = m_apply, .epoch_get = m_epoch_get, .epoch_install = m_epoch_install,
	.epoch_activate = m_epoch_activate, .revoke = m_revoke, .key_remove = m_key_remove,
	.reopen = m_reopen,
	.snapshot = s_snapshot, .head = s_head, .latest = s_latest, .decode = s_decode,
	.watch = s_watch, .lease_grant = s_lease_grant, .lease_keepalive = s_lease_keepalive,
	.report = s_report,
	.say = o_say, .tick = o_tick, .notify = o_notify,
};

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
	struct cfd_http http = { .fd = -1, .stop = &A.a.stop, .agent = agent_metrics };
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

	A.a.stale_ms = DEF_STALE_MS;
	A.a.deny_ms = DEF_DENY_MS;
	A.a.heartbeat_ms = DEF_HEARTBEAT_MS;
	A.a.reconcile_s = DEF_RECONCILE_S;
	A.fault_file = getenv("CAPFENCED_FAULT_FILE");
	pthread_mutex_init(&A.log_lock, NULL);
	cfa_init(&A.a);
	A.a.ops = &capfenced_ops;
	opterr = 0;	/* our own one-line messages */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'e': endpoints = optarg; break;
		case 'H': A.a.host = optarg; break;
		case 'p': prefix = optarg; break;
		case 's':
			if (num("--max-staleness", optarg, 1, CAPFENCE_FLEET_MAX_MS, &A.a.stale_ms))
				return 2;
			break;
		case 'd':
			if (num("--deny-after", optarg, 1, CAPFENCE_FLEET_MAX_MS, &A.a.deny_ms))
				return 2;
			deny_set = true;
			break;
		case 'b':
			if (num("--heartbeat", optarg, 10, 3600000, &A.a.heartbeat_ms))
				return 2;
			break;
		case 'l':
			if (num("--lease-ttl", optarg, 1, 3600, &ttl))
				return 2;
			break;
		case 'r':
			if (num("--reconcile", optarg, 0, 86400, &A.a.reconcile_s))
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
		case 'R': A.a.require_head = true; break;
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
	if (!A.a.host) {
		fprintf(stderr, "capfenced: --host is required\n");
		return 2;
	}
	if (cf_fleet_check_host(A.a.host, err, sizeof(err))) {
		fprintf(stderr, "capfenced: --host: %s\n", err);
		return 2;
	}
	if (!deny_set && A.a.deny_ms < A.a.stale_ms)
		A.a.deny_ms = A.a.stale_ms;
	if (A.a.deny_ms < A.a.stale_ms) {
		fprintf(stderr, "capfenced: --deny-after (%u) must not be below --max-staleness (%u)\n",
			A.a.deny_ms, A.a.stale_ms);
		return 2;
	}
	if (A.a.require_head && !npub) {
		fprintf(stderr, "capfenced: --require-head needs --fleet-pubkey (the head is verified with it)\n");
		return 2;
	}
	A.a.chained = npub > 0;
	if (A.a.heartbeat_ms >= A.a.stale_ms) {
		fprintf(stderr, "capfenced: --heartbeat (%u) must be below --max-staleness (%u)\n",
			A.a.heartbeat_ms, A.a.stale_ms);
		return 2;
	}
	/* 0: a report every heartbeat; never less often than that */
	A.a.pacer.every_ms = report_ms && report_ms < A.a.heartbeat_ms ? A.a.heartbeat_ms : report_ms;
	/*
	 * A host leaves the live set (its key goes with the lease) only once
	 * its module denies every grant: the lease outlives the deny bound by
	 * a heartbeat and a second, so `fleet revoke --wait` never counts a
	 * cut-off host out while it still allows what was revoked.
	 */
	if (A.a.deny_ms) {
		uint32_t min_ttl = (A.a.deny_ms + A.a.heartbeat_ms + 999) / 1000 + 1;

		if (ttl < min_ttl) {
			ttl_asked = ttl;	/* said once running */
			ttl = min_ttl;
		}
	}
	A.a.lease_ttl = ttl;
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
			     A.a.heartbeat_ms * 2 > 3000 ? (long)A.a.heartbeat_ms * 2 : 3000);
	ret = capfence_client_open(&A.cf, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "capfenced: %s\n", err);
		cf_fleet_close(A.fleet);
		return 1;
	}
	fs = (struct capfence_fleet_set){ .flags = CAPFENCE_FLEET_SET_BOUNDS,
					  .stale_ms = A.a.stale_ms, .deny_ms = A.a.deny_ms };
	A.a.known_rev = cfa_module_rev(&A.a);
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
	    A.a.host, A.fleet->fleet, endpoints, cfa_module_rev(&A.a), A.a.stale_ms, A.a.deny_ms);
	A.a.m.start_time = (double)cf_fleet_wall_ms() / 1000.0;
	/* systemd's watchdog, fed by the heartbeat: it must beat well within it */
	if (sd_watchdog_enabled(0, &A.wd_usec) <= 0)
		A.wd_usec = 0;
	if (A.wd_usec)
		say("watchdog: WATCHDOG=1 from the heartbeat, WatchdogSec=%" PRIu64 " ms%s",
		    A.wd_usec / 1000, A.wd_usec / 1000 < 2ull * A.a.heartbeat_ms ?
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
		    ttl_asked, ttl, A.a.deny_ms);
	if (pthread_create(&watcher, NULL, cfa_watch_main, &A.a)) {
		say("cannot start the watch thread");
		return 1;
	}
	cfa_heartbeat_loop(&A.a);
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
	say("stopped at rev=%" PRIu64, cfa_module_rev(&A.a));
	capfence_client_close(A.cf);
	cf_fleet_close(A.fleet);
	cfa_destroy(&A.a);
	if (A.log != stderr)
		fclose(A.log);
	pthread_mutex_destroy(&A.log_lock);
	return 0;
}
