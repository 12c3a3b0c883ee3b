// SPDX-License-Identifier: GPL-2.0
/*
 * fleet-sim: many simulated fleet hosts against a real etcd, for `make
 * bench-fleet` (selftests/fleet/fleet-scale drives it).
 *
 *   fleet-sim --endpoints URL --hosts N --dir DIR [--heartbeat MS]
 *             [--max-staleness MS] [--report-every MS] [--reconcile S]
 *             [--steady S] [--revokes R] [--waits W] [--capfence PATH]
 *             [--workers T] [--procs P] [--cacert F --cert F --key F]
 *
 * Each host runs capfenced's own state machine (tools/capfenced/
 * agent_core.c, the code the agent runs, as `capfenced --fleet-pubkey K
 * --require-head`): its watch thread (cfa_watch_main: the resync with the
 * signed chain, every event verified under the pinned fleet key, checked
 * against the chain and applied, never past one that did not apply, the
 * rebuild when it falls behind the head) and its heartbeat (cfa_beat: the
 * signed head, the confirmation, the reconcile's full read of the fleet's
 * log every --reconcile seconds, the lease and the paced signed report).
 * What is not run is the kernel module: the module is an in-memory model
 * that decides as kernel/fleet.c does (selftests/fleet/module_model.c);
 * the store is the real etcd, through libcapfence's fleet client.
 *
 * One thread per host's watch (small stacks: the watch blocks in libcurl
 * nearly always); the heartbeats of all hosts are shared by --workers
 * threads, each with a connection of its own, and the requests a watch
 * thread makes (the resync's read, the report on apply) borrow one of a
 * few more connections: etcd sees one watch stream per host and requests
 * at the rate a fleet of N hosts makes them, over fewer connections than
 * N agents would open (each opens one for its requests and one per watch
 * stream). A watch stream holds three descriptors, so the hosts run in
 * --procs child processes (by default as many as the descriptor limit
 * needs), sharing their counters and each host's confirmation and apply
 * times with the parent through one shared mapping; the parent is the
 * orchestrator and measures. The reconciles are spread over their period
 * (a fleet's agents do not start at one instant).
 *
 * With --cacert (https:// endpoints) every connection is TLS, and the
 * connections opened (a handshake each) are counted.
 *
 * The orchestrator (the parent process) commits with the signing key
 * (cf_fleet_commit) and renews the head every second (the timestamp
 * role, cf_fleet_head_renew). Figures, measured in this one run:
 * etcd's own counters (its /metrics) over a steady window with no
 * change; per revoke, the watch events delivered and the time from the
 * commit until every host applied it; `capfence fleet revoke --wait`'s
 * return (the CLI, run as a process, counting the N hosts by their signed
 * reports). One JSON object on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <sodium.h>
#include "agent_core.h"
#include "cf_fleet.h"
#include "module_model.h"

extern char **environ;

#define PREFIX		"/capfence/"
#define POOL		16	/* connections for the watch threads' requests */

struct host {
	struct cfa a;			/* capfenced's state machine */
	struct mm m;			/* its module (a.cf_lock) */
	char name[24];
	unsigned char sk[CF_FLEET_SK_LEN];
	struct cf_fleet *w;		/* the watch's handle */
	pthread_t thread;
	int64_t next_beat;
};

static struct {
	const char *endpoints, *dir, *capfence, *cacert, *cert, *key;
	unsigned n, heartbeat_ms, report_every_ms, steady_s, revokes, waits, workers, procs;
	unsigned reconcile_s;
	unsigned lo, hi;		/* this process's hosts: [lo, hi) */
	unsigned stale_ms, deny_ms;
	uint32_t lease_ttl;
	bool verbose;
	char pub[64], sign_path[PATH_MAX], hostkeys_path[PATH_MAX];
	struct host *h;
	pthread_mutex_t pool_lock;
	pthread_cond_t pool_cond;
	struct cf_fleet *pool[POOL];
	struct cf_fleet *all[POOL + 64];	/* every request connection, for their counts */
	size_t npool, nall;
	pthread_mutex_t all_lock;
} S;

/*
 * What the processes share (one anonymous shared mapping made before the
 * fork): the hosts run in --procs children, the orchestrator and the
 * measurements in the parent. Per host, the instant it applied the
 * revoke being timed, when it was last confirmed current and whether it
 * has a report: the parent reads them, the host's process writes them.
 */
struct shared {
	atomic_bool stop;
	atomic_uint_fast64_t target_seq, reached;
	/* counters of what the hosts asked etcd */
	atomic_uint_fast64_t events, head_reads, reports, keepalives, grants, errors,
		report_bytes, beats, confirmed, log_reads, log_entries, connects, failing;
};

static struct shared *SH;
static _Atomic int64_t *apply_ms;	/* per host, the target's apply (CLOCK_MONOTONIC) */
static _Atomic int64_t *confirmed_ms;	/* per host, CLOCK_BOOTTIME, 0: never */
static atomic_uchar *reported;		/* per host: a report is in the store */

/* the heartbeat worker's connection; NULL in a watch thread (borrow one) */
static __thread struct cf_fleet *tl_conn;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "fleet-sim: %s: %s\n", what, err);
	exit(1);
}

static struct cf_fleet *open_fleet(void)
{
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX];

	if (cf_fleet_open(&f, S.endpoints, PREFIX, err, sizeof(err)))
		die("open", err);
	if ((S.cacert || S.cert) &&
	    cf_etcd_set_tls(f->etcd, S.cacert, S.cert, S.key, err, sizeof(err)))
		die("tls", err);
	if (cf_fleet_add_pubkey(f, S.pub, err, sizeof(err)))
		die("pubkey", err);
	/* capfenced's: a TLS handshake is slower */
	cf_etcd_set_timeouts(f->etcd, S.cacert ? 3000 : 2000, 10000);
	return f;
}

/* a connection for a request: the worker's, else one of the pool's */
static struct cf_fleet *conn_get(void)
{
	struct cf_fleet *f = tl_conn;

	if (f)
		return f;
	pthread_mutex_lock(&S.pool_lock);
	while (!S.npool)
		pthread_cond_wait(&S.pool_cond, &S.pool_lock);
	f = S.pool[--S.npool];
	pthread_mutex_unlock(&S.pool_lock);
	return f;
}

static void conn_put(struct cf_fleet *f)
{
	if (f == tl_conn)
		return;
	pthread_mutex_lock(&S.pool_lock);
	S.pool[S.npool++] = f;
	pthread_cond_signal(&S.pool_cond);
	pthread_mutex_unlock(&S.pool_lock);
}

static void track(struct cf_fleet *f)
{
	pthread_mutex_lock(&S.all_lock);
	if (S.nall < sizeof(S.all) / sizeof(S.all[0]))
		S.all[S.nall++] = f;
	pthread_mutex_unlock(&S.all_lock);
}

/* the model's state on the module's clock: current, stale, deny */
static const char *model_state(unsigned i, int64_t now)
{
	int64_t c = atomic_load(&confirmed_ms[i]);

	if (!c || now - c >= S.deny_ms)
		return "deny";
	return now - c >= S.stale_ms ? "stale" : "current";
}

/* ---- the module: the model ------------------------------------------------------- */

static struct host *H(struct cfa *a)
{
	return a->ctx;
}

static int m_status(struct cfa *a, struct capfence_fleet_status *st, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return mm_status(&H(a)->m, st);
}

/* a confirmation: the parent sees it (its instant, on the module's clock) */
static int m_set(struct cfa *a, const struct capfence_fleet_set *fs, char *err, size_t errlen)
{
	struct host *h = H(a);
	int ret = mm_set(&h->m, fs, err, errlen);

	if (!ret && (fs->flags & CAPFENCE_FLEET_SET_FRESH)) {
		atomic_store(&confirmed_ms[h - S.h], (int64_t)(h->m.confirmed_ns / 1000000ull));
		atomic_fetch_add(&SH->confirmed, 1);
	}
	return ret;
}

static int m_chain(struct cfa *a, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN],
		   char *err, size_t errlen)
{
	(void)err, (void)errlen;
	mm_chain(&H(a)->m, seq, link);
	return 0;
}

static int m_chain_set(struct cfa *a, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
		       char *err, size_t errlen)
{
	return mm_chain_set(&H(a)->m, seq, link, err, errlen);
}

/* an apply: the revoke being timed, when its link is the module's */
static int m_apply(struct cfa *a, const struct cf_fleet_change *ch, char *err, size_t errlen)
{
	struct host *h = H(a);
	int ret = mm_apply(&h->m, ch, err, errlen);
	uint64_t target = atomic_load(&SH->target_seq);

	if (!ret && target && ch->seq == target) {
		atomic_store(&apply_ms[h - S.h], mono_ms());
		atomic_fetch_add(&SH->reached, 1);
	}
	return ret;
}

static int m_epoch_get(struct cfa *a, uint64_t id, struct capfence_epoch_info *ei,
		       char *err, size_t errlen)
{
	return mm_epoch_get(&H(a)->m, id, ei, err, errlen);
}

static int m_epoch_install(struct cfa *a, const struct capfence_epoch *e, char *err, size_t errlen)
{
	return mm_epoch_install(&H(a)->m, e, err, errlen);
}

static int m_epoch_activate(struct cfa *a, uint64_t id, char *err, size_t errlen)
{
	return mm_epoch_activate(&H(a)->m, id, err, errlen);
}

static int m_revoke(struct cfa *a, uint64_t id, char *err, size_t errlen)
{
	return mm_revoke(&H(a)->m, id, err, errlen);
}

static int m_key_remove(struct cfa *a, uint32_t id, char *err, size_t errlen)
{
	return mm_key_remove(&H(a)->m, id, err, errlen);
}

/* ---- the store: etcd, through the fleet client ------------------------------------ */

static int counted(int ret)
{
	if (ret)
		atomic_fetch_add(&SH->errors, 1);
	return ret;
}

/* a full read of the fleet's log (the resync's, the reconcile's) */
static int s_snapshot(struct cfa *a, struct cf_fleet_change **chs, size_t *n, uint64_t *rev,
		      struct cf_fleet_base *b, char *err, size_t errlen)
{
	struct cf_fleet *f = conn_get();
	int ret;

	(void)a;
	ret = cf_fleet_snapshot(f, 0, chs, n, rev, b, err, errlen);
	conn_put(f);
	atomic_fetch_add(&SH->log_reads, 1);
	if (!ret)
		atomic_fetch_add(&SH->log_entries, *n);
	return counted(ret);
}

static int s_head(struct cfa *a, struct cf_fleet_head *hd, char *err, size_t errlen)
{
	struct cf_fleet *f = conn_get();
	int ret;

	(void)a;
	atomic_fetch_add(&SH->head_reads, 1);
	ret = cf_fleet_head_get(f, hd, NULL, err, errlen);
	conn_put(f);
	return counted(ret);
}

static int s_latest(struct cfa *a, uint64_t *rev, uint64_t *store_rev, char *err, size_t errlen)
{
	struct cf_fleet *f = conn_get();
	int ret;

	(void)a;
	ret = cf_fleet_latest(f, rev, store_rev, err, errlen);
	conn_put(f);
	return counted(ret);
}

static int s_decode(struct cfa *a, const char *key, const char *value, struct cf_fleet_change *ch,
		    char *err, size_t errlen)
{
	return cf_fleet_decode_verified(H(a)->w, key, value, ch, err, errlen);
}

static int count_event(const struct cf_etcd_event *ev, void *arg)
{
	atomic_fetch_add(&SH->events, 1);
	return cfa_on_event(ev, arg);
}

static int s_watch(struct cfa *a, uint64_t from, cf_etcd_event_cb cb, cf_etcd_stop_cb stop,
		   int64_t *compact, char *err, size_t errlen)
{
	struct cf_fleet *w = H(a)->w;
	int ret;

	(void)cb;	/* cfa_on_event, counted */
	atomic_fetch_add(&SH->connects, 1);	/* a stream: a connection of its own */
	ret = cf_etcd_watch(w->etcd, w->fleet, (int64_t)from, count_event, stop, a, compact,
			    err, errlen);
	if (ret && ret != -EAGAIN && !atomic_load(&a->stop))
		atomic_fetch_add(&SH->errors, 1);
	return ret;
}

static int s_lease_grant(struct cfa *a, int64_t ttl, int64_t *lease, char *err, size_t errlen)
{
	struct cf_fleet *f = conn_get();
	int ret;

	(void)a;
	atomic_fetch_add(&SH->grants, 1);
	ret = cf_etcd_lease_grant(f->etcd, ttl, lease, err, errlen);
	conn_put(f);
	return counted(ret);
}

static int s_lease_keepalive(struct cfa *a, int64_t lease, int64_t *ttl, char *err, size_t errlen)
{
	struct cf_fleet *f = conn_get();
	int ret;

	(void)a;
	atomic_fetch_add(&SH->keepalives, 1);
	ret = cf_etcd_lease_keepalive(f->etcd, lease, ttl, err, errlen);
	conn_put(f);
	return counted(ret);
}

/* the report, signed with this host's key */
static int s_report(struct cfa *a, const struct cf_fleet_host *r, int64_t lease,
		    char *err, size_t errlen)
{
	struct host *h = H(a);
	struct cf_fleet *f = conn_get();
	char *v = cf_fleet_host_encode(r);
	int ret;

	atomic_fetch_add(&SH->reports, 1);
	if (v) {
		atomic_fetch_add(&SH->report_bytes, strlen(v) + 120);	/* + "sig" */
		free(v);
	}
	memcpy(f->host_sk, h->sk, sizeof(f->host_sk));
	f->have_host_sk = true;
	ret = cf_fleet_report(f, r, lease, err, errlen);
	f->have_host_sk = false;
	conn_put(f);
	if (!ret)
		atomic_store(&reported[h - S.h], 1);
	return counted(ret);
}

static void o_say(struct cfa *a, const char *line)
{
	if (!strncmp(line, "FAILING", 7))
		atomic_fetch_add(&SH->failing, 1);
	if (S.verbose)
		fprintf(stderr, "fleet-sim: %s: %s\n", H(a)->name, line);
}

static const struct cfa_ops sim_ops = {
	.status = m_status, .set = m_set, .chain = m_chain, .chain_set = m_chain_set,
	.apply = m_apply, .epoch_get = m_epoch_get, .epoch_install = m_epoch_install,
	.epoch_activate = m_epoch_activate, .revoke = m_revoke, .key_remove = m_key_remove,
	.snapshot = s_snapshot, .head = s_head, .latest = s_latest, .decode = s_decode,
	.watch = s_watch, .lease_grant = s_lease_grant, .lease_keepalive = s_lease_keepalive,
	.report = s_report, .say = o_say,
};

/* ---- the heartbeats ------------------------------------------------------------- */

static void *worker_main(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg, i;
	struct cf_fleet *f = open_fleet();

	track(f);
	tl_conn = f;
	while (!atomic_load(&SH->stop)) {
		int64_t now = mono_ms(), next = now + S.heartbeat_ms;

		for (i = S.lo + k; i < S.hi && !atomic_load(&SH->stop); i += S.workers) {
			struct host *h = &S.h[i];

			if (h->next_beat > now) {
				if (h->next_beat < next)
					next = h->next_beat;
				continue;
			}
			/* as capfenced: the next beat a heartbeat after this one began */
			h->next_beat = mono_ms() + S.heartbeat_ms;
			atomic_fetch_add(&SH->beats, 1);
			cfa_beat(&h->a);
			if (h->next_beat < next)
				next = h->next_beat;
			now = mono_ms();
		}
		now = mono_ms();
		if (next > now)
			msleep((unsigned)(next - now < 50 ? next - now : 50));
	}
	return NULL;
}

/* ---- the timestamp role ------------------------------------------------------- */

static pthread_mutex_t orch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cf_fleet *orch;

static void *head_main(void *arg)
{
	char err[CAPFENCE_ERR_MAX];
	struct cf_fleet_head hd;

	(void)arg;
	while (!atomic_load(&SH->stop)) {
		pthread_mutex_lock(&orch_lock);
		if (cf_fleet_head_renew(orch, 0, &hd, err, sizeof(err)))
			fprintf(stderr, "fleet-sim: head: %s\n", err);
		pthread_mutex_unlock(&orch_lock);
		msleep(1000);
	}
	return NULL;
}

/* ---- etcd's counters ---------------------------------------------------------- */

static size_t buf_write(char *p, size_t size, size_t nmemb, void *data)
{
	char **b = data;
	size_t have = *b ? strlen(*b) : 0, add = size * nmemb;
	char *n = realloc(*b, have + add + 1);

	if (!n)
		return 0;
	memcpy(n + have, p, add);
	n[have + add] = '\0';
	*b = n;
	return add;
}

enum {
	M_PROPOSALS, M_PUTS, M_RANGES, M_TXNS, M_EVENTS, M_RX, M_TX, M_DB, M_DB_INUSE,
	M_CPU, M_RSS, M_WATCHERS, M_KEYS, M_N
};
static const char *const mnames[M_N] = {
	"etcd_server_proposals_committed_total", "etcd_mvcc_put_total", "etcd_mvcc_range_total",
	"etcd_mvcc_txn_total", "etcd_debugging_mvcc_events_total",
	"etcd_network_client_grpc_received_bytes_total", "etcd_network_client_grpc_sent_bytes_total",
	"etcd_mvcc_db_total_size_in_bytes", "etcd_mvcc_db_total_size_in_use_in_bytes",
	"process_cpu_seconds_total", "process_resident_memory_bytes",
	"etcd_debugging_mvcc_watcher_total", "etcd_debugging_mvcc_keys_total",
};

/* every counter of mnames, summed over its labels */
static void etcd_metrics(double m[M_N])
{
	char url[512], *b = NULL, *line, *save = NULL;
	const char *comma = strchr(S.endpoints, ',');
	CURL *c = curl_easy_init();
	int i;

	memset(m, 0, M_N * sizeof(*m));
	snprintf(url, sizeof(url), "%.*s/metrics",
		 comma ? (int)(comma - S.endpoints) : (int)strlen(S.endpoints), S.endpoints);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
	if (S.cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, S.cacert);
	if (S.cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, S.cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, S.key);
	}
	if (curl_easy_perform(c) != CURLE_OK || !b)
		die("metrics", url);
	curl_easy_cleanup(c);
	for (line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		for (i = 0; i < M_N; i++) {
			size_t l = strlen(mnames[i]);

			if (!strncmp(line, mnames[i], l) && (line[l] == ' ' || line[l] == '{')) {
				const char *sp = strrchr(line, ' ');

				m[i] += sp ? strtod(sp + 1, NULL) : 0;
			}
		}
	}
	free(b);
}

/* ---- measurements ------------------------------------------------------------- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static uint64_t cap_id(unsigned k)
{
	return 0x5100000000000000ull | ((uint64_t)getpid() << 20) | k;
}

/* commit one revoke and time it until every host applied it */
static int one_revoke(unsigned k, double *everywhere_ms, double *per_host, size_t *nper,
		      uint64_t *events)
{
	struct cf_fleet_change ch = { .kind = CF_FLEET_REVOKE, .id = cap_id(k) };
	struct cf_fleet_head hd;
	char err[CAPFENCE_ERR_MAX];
	uint64_t rev, seq, e0;
	int64_t t0, deadline, last = 0;
	unsigned i;

	pthread_mutex_lock(&orch_lock);
	if (cf_fleet_head_get(orch, &hd, NULL, err, sizeof(err)))
		die("head", err);
	for (i = 0; i < S.n; i++)
		atomic_store(&apply_ms[i], 0);
	atomic_store(&SH->reached, 0);
	atomic_store(&SH->target_seq, hd.seq + 1);
	e0 = atomic_load(&SH->events);
	t0 = mono_ms();
	if (cf_fleet_commit(orch, &ch, &rev, &seq, err, sizeof(err)))
		die("revoke", err);
	pthread_mutex_unlock(&orch_lock);
	if (seq != hd.seq + 1)
		die("revoke", "the chain moved under the bench");
	deadline = t0 + 120000;
	while (atomic_load(&SH->reached) < S.n && mono_ms() < deadline)
		msleep(2);
	if (atomic_load(&SH->reached) < S.n) {
		fprintf(stderr, "fleet-sim: revoke %u: %" PRIuFAST64 " of %u hosts after 120 s\n", k,
			atomic_load(&SH->reached), S.n);
		return -1;
	}
	for (i = 0; i < S.n; i++) {
		int64_t a = atomic_load(&apply_ms[i]);

		per_host[(*nper)++] = (double)(a - t0);
		if (a > last)
			last = a;
	}
	*everywhere_ms = (double)(last - t0);
	msleep(200);	/* the events of this revoke, all delivered */
	*events = atomic_load(&SH->events) - e0;
	atomic_store(&SH->target_seq, 0);
	return 0;
}

/* `capfence fleet revoke ID --wait`, the CLI as a process: its wall time */
static double one_wait(unsigned k, int *status)
{
	char id[24], to[16];
	double t0;
	pid_t pid;
	char *argv[20] = { (char *)S.capfence, "fleet", "--endpoints", (char *)S.endpoints,
			   "--signing-key", S.sign_path, "--host-keys", S.hostkeys_path };
	int k0 = 8;
	posix_spawn_file_actions_t fa;

	if (S.cacert) {
		argv[k0++] = "--cacert";
		argv[k0++] = (char *)S.cacert;
	}
	if (S.cert) {
		argv[k0++] = "--cert";
		argv[k0++] = (char *)S.cert;
		argv[k0++] = "--key";
		argv[k0++] = (char *)S.key;
	}
	argv[k0++] = "revoke";
	argv[k0++] = id;
	argv[k0++] = "--wait";
	argv[k0++] = "--timeout";
	argv[k0++] = to;
	argv[k0] = NULL;
	snprintf(id, sizeof(id), "%016" PRIx64, cap_id(100000 + k));
	snprintf(to, sizeof(to), "%u", 120);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = mono_s();
	pthread_mutex_lock(&orch_lock);	/* no head renewal racing its commit */
	if (posix_spawn(&pid, S.capfence, &fa, NULL, argv, environ)) {
		pthread_mutex_unlock(&orch_lock);
		die("spawn", S.capfence);
	}
	pthread_mutex_unlock(&orch_lock);
	waitpid(pid, status, 0);
	posix_spawn_file_actions_destroy(&fa);
	return (mono_s() - t0) * 1000.0;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static unsigned num(const char *opt, const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > 10000000) {
		fprintf(stderr, "fleet-sim: %s: '%s'\n", opt, s);
		exit(2);
	}
	return (unsigned)v;
}

/* what the hosts asked, for the steady window's rates */
static void counters(uint64_t q[9])
{
	q[6] = atomic_load(&SH->log_reads);
	q[7] = atomic_load(&SH->log_entries);
	q[8] = atomic_load(&SH->connects);
	q[0] = atomic_load(&SH->head_reads);
	q[1] = atomic_load(&SH->reports);
	q[2] = atomic_load(&SH->keepalives);
	q[3] = atomic_load(&SH->beats);
	q[4] = atomic_load(&SH->confirmed);
	q[5] = atomic_load(&SH->report_bytes);
}

/* ---- a process of hosts ------------------------------------------------------ */

/*
 * The hosts [S.lo, S.hi), in a child: a watch thread each, the heartbeats
 * spread over the period and shared by S.workers threads, until the
 * parent says stop.
 */
/* this process's request connections opened so far (each watch stream opens its own) */
static uint64_t connects(void)
{
	uint64_t c = 0;
	unsigned i;

	pthread_mutex_lock(&S.all_lock);
	for (i = 0; i < S.nall; i++)
		c += cf_etcd_connects(S.all[i]->etcd);
	pthread_mutex_unlock(&S.all_lock);
	return c;
}

static void hosts_run(void)
{
	unsigned i, n = S.hi - S.lo;
	uint64_t published = 0;
	pthread_t *workers;
	pthread_attr_t small;

	pthread_mutex_init(&S.pool_lock, NULL);
	pthread_mutex_init(&S.all_lock, NULL);
	pthread_cond_init(&S.pool_cond, NULL);
	for (i = 0; i < POOL; i++) {
		S.pool[S.npool++] = open_fleet();
		track(S.pool[i]);
	}
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 256 * 1024);
	for (i = S.lo; i < S.hi; i++) {
		struct host *h = &S.h[i];
		struct capfence_fleet_set fs = { .flags = CAPFENCE_FLEET_SET_BOUNDS,
						 .stale_ms = S.stale_ms, .deny_ms = S.deny_ms };
		char err[CAPFENCE_ERR_MAX];

		h->w = open_fleet();
		cfa_init(&h->a);
		h->a.ops = &sim_ops;
		h->a.ctx = h;
		h->a.host = h->name;
		h->a.stale_ms = S.stale_ms;
		h->a.deny_ms = S.deny_ms;
		h->a.heartbeat_ms = S.heartbeat_ms;
		h->a.reconcile_s = S.reconcile_s;
		h->a.lease_ttl = S.lease_ttl;
		h->a.chained = true;		/* --fleet-pubkey */
		h->a.require_head = true;
		h->a.pacer.every_ms = S.report_every_ms;
		/* capfenced's start: fleet mode on with its bounds */
		if (mm_set(&h->m, &fs, err, sizeof(err)))
			die("bounds", err);
		h->next_beat = mono_ms() + (int64_t)((uint64_t)(i - S.lo) * S.heartbeat_ms / n);
		/* the reconciles spread over their period, as a fleet's agents start */
		h->a.next_reconcile = cfa_now_ms() +
			(int64_t)((uint64_t)(i - S.lo) * S.reconcile_s * 1000 / n);
		if (pthread_create(&h->thread, &small, cfa_watch_main, &h->a))
			die("thread", strerror(errno));
	}
	workers = calloc(S.workers, sizeof(*workers));
	if (!workers)
		die("setup", strerror(errno));
	for (i = 0; i < S.workers; i++)
		if (pthread_create(&workers[i], &small, worker_main, (void *)(uintptr_t)i))
			die("thread", strerror(errno));
	while (!atomic_load(&SH->stop)) {
		uint64_t c;

		msleep(100);
		c = connects();
		atomic_fetch_add(&SH->connects, c - published);
		published = c;
	}
	/* the watches see the stop within about a second */
	for (i = S.lo; i < S.hi; i++)
		atomic_store(&S.h[i].a.stop, true);
	for (i = 0; i < S.workers; i++)
		pthread_join(workers[i], NULL);
	for (i = S.lo; i < S.hi; i++) {
		pthread_join(S.h[i].thread, NULL);
		cf_fleet_close(S.h[i].w);
		cfa_destroy(&S.h[i].a);
		mm_free(&S.h[i].m);
	}
	for (i = 0; i < S.nall; i++)
		cf_fleet_close(S.all[i]);
	free(workers);
}

/* CPU seconds and peak resident kB of process @pid, from /proc */
static void proc_usage(pid_t pid, double *cpu, long *hwm_kb)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f) {
		/* past the command's closing parenthesis: utime and stime are fields 14, 15 */
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
			sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
		fclose(f);
	}
	*cpu += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f) {
		long kb;

		while (fgets(buf, sizeof(buf), f))
			if (sscanf(buf, "VmHWM: %ld", &kb) == 1)
				*hwm_kb += kb;
		fclose(f);
	}
}

static pid_t *kids;

/* the simulator's CPU seconds: the orchestrator's and every host process's */
static double sim_cpu_s(long *hwm_kb)
{
	double c = cpu_s();
	long kb = rss_kb();
	unsigned i;

	for (i = 0; i < S.procs; i++)
		proc_usage(kids[i], &c, &kb);
	if (hwm_kb)
		*hwm_kb = kb;
	return c;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "endpoints", required_argument, NULL, 'e' },
		{ "hosts", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "heartbeat", required_argument, NULL, 'b' },
		{ "max-staleness", required_argument, NULL, 'm' },
		{ "report-every", required_argument, NULL, 'r' },
		{ "steady", required_argument, NULL, 's' },
		{ "revokes", required_argument, NULL, 'R' },
		{ "waits", required_argument, NULL, 'W' },
		{ "workers", required_argument, NULL, 'T' },
		{ "procs", required_argument, NULL, 'P' },
		{ "capfence", required_argument, NULL, 'c' },
		{ "reconcile", required_argument, NULL, 'C' },
		{ "cacert", required_argument, NULL, 'A' },
		{ "cert", required_argument, NULL, 'X' },
		{ "key", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	char err[CAPFENCE_ERR_MAX];
	double m0[M_N], m1[M_N], ma[M_N], mb[M_N], c0, c1, t0, t1, ready_s;
	double *every, *per_host, *waits;
	uint64_t q0[9], q1[9], *ev;
	size_t nper = 0, nev = 0, shsize;
	pthread_t head;
	struct cf_fleet_head hd;
	uint64_t store_rev;
	unsigned i, per;
	int c, fails = 0;
	unsigned not_current = 0;
	struct rlimit nofile;
	long hwm_kb = 0;
	char *shm;
	FILE *hk;

	S.heartbeat_ms = 1000;
	S.stale_ms = 3000;
	S.report_every_ms = 10000;
	S.steady_s = 20;
	S.revokes = 20;
	S.waits = 5;
	S.workers = 4;
	S.reconcile_s = 60;	/* capfenced's default */
	S.verbose = getenv("FLEET_SIM_VERBOSE") != NULL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e': S.endpoints = optarg; break;
		case 'n': S.n = num("--hosts", optarg); break;
		case 'd': S.dir = optarg; break;
		case 'b': S.heartbeat_ms = num("--heartbeat", optarg); break;
		case 'm': S.stale_ms = num("--max-staleness", optarg); break;
		case 'r': S.report_every_ms = num("--report-every", optarg); break;
		case 's': S.steady_s = num("--steady", optarg); break;
		case 'R': S.revokes = num("--revokes", optarg); break;
		case 'W': S.waits = num("--waits", optarg); break;
		case 'T': S.workers = num("--workers", optarg); break;
		case 'P': S.procs = num("--procs", optarg); break;
		case 'c': S.capfence = optarg; break;
		case 'C': S.reconcile_s = num("--reconcile", optarg); break;
		case 'A': S.cacert = optarg; break;
		case 'X': S.cert = optarg; break;
		case 'K': S.key = optarg; break;
		default: return 2;
		}
	}
	if (!S.endpoints || !S.n || !S.dir || !S.workers || S.heartbeat_ms < 10 ||
	    S.stale_ms <= S.heartbeat_ms || !S.cert != !S.key || (S.cert && !S.cacert)) {
		fprintf(stderr, "usage: fleet-sim --endpoints URL --hosts N --dir DIR [--heartbeat MS] "
			"[--max-staleness MS (above the heartbeat)] [--report-every MS] [--steady S] "
			"[--revokes R] [--waits W] [--workers T (per process)] [--procs P] "
			"[--capfence PATH] [--reconcile S] [--cacert F [--cert F --key F]]\n");
		return 2;
	}
	S.deny_ms = 2 * S.stale_ms;	/* the bench runs capfenced with --deny-after twice it */
	/*
	 * A watch stream holds three descriptors here (its socket and the
	 * wakeup socketpair of libcurl's easy_perform), etcd one per stream:
	 * the per-process limit bounds the hosts one process simulates, so
	 * the hosts are split over as many processes as that takes.
	 */
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (getrlimit(RLIMIT_NOFILE, &nofile) ||
	    nofile.rlim_cur < (POOL + S.workers + 8) * 3 + 64 + 3)
		die("descriptors", "the limit is too low for one host");
	per = (unsigned)((nofile.rlim_cur - (POOL + S.workers + 8) * 3 - 64) / 3);
	if (!S.procs)
		S.procs = (S.n + per - 1) / per;
	/* --workers counts the heartbeat threads of all processes */
	S.workers = (S.workers + S.procs - 1) / S.procs;
	if (S.procs > S.n || (S.n + S.procs - 1) / S.procs > per) {
		fprintf(stderr, "fleet-sim: %u hosts in %u processes: at most %u per process (3 descriptors per watch stream, the limit is %llu)\n",
			S.n, S.procs, per, (unsigned long long)nofile.rlim_cur);
		return 3;
	}
	if (sodium_init() < 0 || curl_global_init(CURL_GLOBAL_DEFAULT))
		die("init", "libsodium or libcurl");
	signal(SIGPIPE, SIG_IGN);
	S.lease_ttl = (S.deny_ms + S.heartbeat_ms + 999) / 1000 + 1;	/* capfenced's */

	/* the fleet signing key and the hosts' keys (the CLI's --host-keys) */
	snprintf(S.sign_path, sizeof(S.sign_path), "%s/fleet-sign", S.dir);
	snprintf(S.hostkeys_path, sizeof(S.hostkeys_path), "%s/fleet-hosts", S.dir);
	if (cf_fleet_keygen(S.sign_path, S.pub, sizeof(S.pub), err, sizeof(err)))
		die("keygen", err);
	S.h = calloc(S.n, sizeof(*S.h));
	kids = calloc(S.procs, sizeof(*kids));
	hk = fopen(S.hostkeys_path, "w");
	if (!S.h || !kids || !hk)
		die("setup", strerror(errno));
	for (i = 0; i < S.n; i++) {
		unsigned char pk[CF_FLEET_PK_LEN];
		char b64[sodium_base64_ENCODED_LEN(CF_FLEET_PK_LEN, sodium_base64_VARIANT_ORIGINAL)];

		snprintf(S.h[i].name, sizeof(S.h[i].name), "sim-%05u", i);
		crypto_sign_keypair(pk, S.h[i].sk);
		sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
		fprintf(hk, "%s %s\n", S.h[i].name, b64);
	}
	fclose(hk);
	shsize = sizeof(*SH) + (size_t)S.n * (2 * sizeof(int64_t) + 1);
	shm = mmap(NULL, shsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		die("mmap", strerror(errno));
	SH = (struct shared *)shm;
	apply_ms = (_Atomic int64_t *)(shm + sizeof(*SH));
	confirmed_ms = apply_ms + S.n;
	reported = (atomic_uchar *)(confirmed_ms + S.n);

	/* the orchestrator: a genesis head; the hosts start at it */
	orch = open_fleet();
	if (cf_fleet_load_signing_key(orch, S.sign_path, err, sizeof(err)))
		die("signing key", err);
	if (cf_fleet_head_renew(orch, 0, &hd, err, sizeof(err)) ||
	    cf_fleet_head_get(orch, &hd, &store_rev, err, sizeof(err)))
		die("head", err);
	if (hd.seq)
		die("head", "the store has a chain already: use a fresh etcd");

	/* the hosts: S.procs children, before any thread exists */
	t0 = mono_s();
	fflush(NULL);
	for (i = 0; i < S.procs; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die("fork", strerror(errno));
		if (!kids[i]) {
			S.lo = (unsigned)((uint64_t)S.n * i / S.procs);
			S.hi = (unsigned)((uint64_t)S.n * (i + 1) / S.procs);
			hosts_run();
			_exit(0);
		}
	}
	if (pthread_create(&head, NULL, head_main, NULL))
		die("thread", strerror(errno));

	/*
	 * Every host current (confirmed at the head) and reported; a store
	 * that cannot serve every heartbeat never gets there: measured
	 * anyway after 120 s, with the hosts it keeps current.
	 */
	for (;;) {
		unsigned cur = 0;
		int64_t now = cfa_now_ms();

		for (i = 0; i < S.n; i++)
			cur += !strcmp(model_state(i, now), "current") && atomic_load(&reported[i]);
		if (cur == S.n || mono_s() - t0 > 120) {
			ready_s = mono_s() - t0;
			fprintf(stderr, "fleet-sim: %u of %u hosts current after %.1f s (%u processes)\n",
				cur, S.n, ready_s, S.procs);
			break;
		}
		msleep(200);
	}
	/* past the start's burst of first reports, one whole report period */
	msleep(S.report_every_ms > S.heartbeat_ms ? S.report_every_ms : S.heartbeat_ms);

	/* steady state: no change, the head renewed every second */
	etcd_metrics(m0);
	counters(q0);
	c0 = sim_cpu_s(NULL);
	t0 = mono_s();
	sleep(S.steady_s);
	t1 = mono_s();
	c1 = sim_cpu_s(&hwm_kb);
	{
		int64_t now = cfa_now_ms();

		for (i = 0; i < S.n; i++)
			not_current += strcmp(model_state(i, now), "current") != 0;
	}
	etcd_metrics(m1);
	counters(q1);

	/* revokes, one at a time, each until every host applied it */
	every = calloc(S.revokes + 1, sizeof(*every));
	per_host = calloc((size_t)S.revokes * S.n + 1, sizeof(*per_host));
	ev = calloc(S.revokes + 1, sizeof(*ev));
	waits = calloc(S.waits + 1, sizeof(*waits));
	etcd_metrics(ma);
	for (i = 0; i < S.revokes; i++) {
		if (one_revoke(i, &every[nev], per_host, &nper, &ev[nev])) {
			fails++;
			break;
		}
		nev++;
		msleep(300);
	}
	etcd_metrics(mb);
	/* --wait: the CLI, counting every host by its signed report */
	for (i = 0; S.capfence && i < S.waits; i++) {
		int st;

		waits[i] = one_wait(i, &st);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "fleet-sim: capfence fleet revoke --wait: status %d\n", st);
			fails++;
			break;
		}
		msleep(300);
	}

	/* the figures */
	{
		double dt = t1 - t0, evmean = 0;
		double e50, e99, h50, h99, w50, w99;
		unsigned nw = S.capfence ? (fails ? i : S.waits) : 0;

		for (i = 0; i < nev; i++)
			evmean += (double)ev[i];
		evmean = nev ? evmean / nev : 0;
		e50 = pct(every, nev, 0.5);
		e99 = pct(every, nev, 0.99);
		h50 = pct(per_host, nper, 0.5);
		h99 = pct(per_host, nper, 0.99);
		w50 = pct(waits, nw, 0.5);
		w99 = pct(waits, nw, 0.99);
		printf("{\"hosts\":%u,\"heartbeat_ms\":%u,\"max_staleness_ms\":%u,"
		       "\"report_every_ms\":%u,\"lease_ttl_s\":%u,\"procs\":%u,"
		       "\"workers\":%u,\"ready_s\":%.1f,\"steady_s\":%.1f,"
		       "\"etcd_writes_per_s\":%.1f,\"etcd_puts_per_s\":%.1f,\"etcd_ranges_per_s\":%.1f,"
		       "\"etcd_rx_bytes_per_s\":%.0f,\"etcd_tx_bytes_per_s\":%.0f,"
		       "\"etcd_db_bytes\":%.0f,\"etcd_db_growth_bytes_per_s\":%.0f,"
		       "\"etcd_cpu\":%.3f,\"etcd_rss_mb\":%.0f,\"etcd_watchers\":%.0f,\"etcd_keys\":%.0f,"
		       "\"sim_cpu\":%.3f,\"sim_maxrss_mb\":%.0f,"
		       "\"head_reads_per_s\":%.1f,\"reports_per_s\":%.1f,\"keepalives_per_s\":%.1f,"
		       "\"report_bytes_per_s\":%.0f,\"beats_per_s\":%.1f,\"confirmations_per_s\":%.1f,"
		       "\"not_current_after_steady\":%u,\"reconcile_s\":%u,\"tls\":%s,"
		       "\"log_reads_per_s\":%.2f,\"log_entries_per_s\":%.1f,"
		       "\"connects_per_s\":%.2f,\"connects\":%" PRIu64 ",\"failing_lines\":%" PRIuFAST64 ",",
		       S.n, S.heartbeat_ms, S.stale_ms, S.report_every_ms, S.lease_ttl, S.procs,
		       S.procs * S.workers, ready_s, dt,
		       (m1[M_PROPOSALS] - m0[M_PROPOSALS]) / dt, (m1[M_PUTS] - m0[M_PUTS]) / dt,
		       (m1[M_RANGES] - m0[M_RANGES]) / dt,
		       (m1[M_RX] - m0[M_RX]) / dt, (m1[M_TX] - m0[M_TX]) / dt,
		       m1[M_DB], (m1[M_DB] - m0[M_DB]) / dt,
		       (m1[M_CPU] - m0[M_CPU]) / dt, m1[M_RSS] / 1048576.0, m1[M_WATCHERS], m1[M_KEYS],
		       (c1 - c0) / dt, (double)hwm_kb / 1024.0,
		       (double)(q1[0] - q0[0]) / dt, (double)(q1[1] - q0[1]) / dt,
		       (double)(q1[2] - q0[2]) / dt, (double)(q1[5] - q0[5]) / dt,
		       (double)(q1[3] - q0[3]) / dt, (double)(q1[4] - q0[4]) / dt, not_current,
		       S.reconcile_s, S.cacert ? "true" : "false",
		       (double)(q1[6] - q0[6]) / dt, (double)(q1[7] - q0[7]) / dt,
		       (double)(q1[8] - q0[8]) / dt, (uint64_t)atomic_load(&SH->connects),
		       atomic_load(&SH->failing));
		printf("\"revokes\":%zu,\"events_per_revoke\":%.1f,\"etcd_events_per_revoke\":%.1f,"
		       "\"applied_everywhere_p50_ms\":%.1f,\"applied_everywhere_p99_ms\":%.1f,"
		       "\"applied_host_p50_ms\":%.1f,\"applied_host_p99_ms\":%.1f,"
		       "\"etcd_writes_per_revoke\":%.1f,"
		       "\"waits\":%u,\"wait_p50_ms\":%.1f,\"wait_p99_ms\":%.1f,\"errors\":%" PRIuFAST64
		       ",\"failed\":%d}\n",
		       nev, evmean, nev ? (mb[M_EVENTS] - ma[M_EVENTS]) / nev : 0, e50, e99, h50, h99,
		       nev ? (mb[M_PROPOSALS] - ma[M_PROPOSALS]) / nev : 0,
		       nw, w50, w99, atomic_load(&SH->errors), fails);
		fflush(stdout);
	}

	/* stop: the host processes end their watches and exit */
	atomic_store(&SH->stop, true);
	pthread_join(head, NULL);
	for (i = 0; i < S.procs; i++) {
		int st;

		if (waitpid(kids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "fleet-sim: host process %u ended with status %d\n", i, st);
			fails++;
		}
	}
	cf_fleet_close(orch);
	free(every);
	free(per_host);
	free(ev);
	free(waits);
	free(kids);
	free(S.h);
	munmap(shm, shsize);
	curl_global_cleanup();
	return fails ? 1 : 0;
}
