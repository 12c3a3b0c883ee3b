/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet agent's state machine (docs/design.md, "Fleet"): what a
 * change event does (verify, chain, apply, never skip), the rebuild from
 * a snapshot, the resync with the signed chain, the reconcile, the head's
 * verdict and the confirmation, and the paced host report. capfenced runs
 * it against the module and etcd; fleet-sim (selftests/fleet) runs the
 * same code for thousands of hosts against an in-memory module and a real
 * etcd; selftests/unit/test_agent.c against fakes of both. Every module
 * and store request goes through struct cfa_ops.
 *
 * Locking: cf_lock serializes every module op (capfenced's heartbeat
 * reopens the module handle); state_lock guards failing and the chain;
 * report_lock the lease and the pacer; metrics_lock m. When two are held,
 * cf_lock is taken first. Two threads drive one agent: the watch
 * (cfa_watch_main) and the heartbeat (cfa_beat); the fields under "the
 * watch's" and "the heartbeat's" below are each one thread's own.
 */
#ifndef CAPFENCED_AGENT_CORE_H
#define CAPFENCED_AGENT_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <capfence/capfence.h>
#include "cf_fleet.h"
#include "cf_metrics.h"

/* the retry backoff of a change that fails to apply */
#define CFA_RETRY_MIN_MS	200
#define CFA_RETRY_MAX_MS	5000
/* a failed reconcile's longest retry when reconciles have no period */
#define CFA_RECONCILE_RETRY_MAX_MS	60000
/* heartbeats that see the watch behind the store without progress */
#define CFA_WATCH_LAG_BEATS	3

struct cfa;

/*
 * The module and the store, as the agent sees them: 0 or a negative errno
 * with one line in err. capfenced's are the library's client calls
 * (capfence_client_*, cf_fleet_*, cf_etcd_*).
 */
struct cfa_ops {
	/* the module; each called with cf_lock held */
	int (*status)(struct cfa *a, struct capfence_fleet_status *st, char *err, size_t errlen);
	int (*set)(struct cfa *a, const struct capfence_fleet_set *fs, char *err, size_t errlen);
	int (*chain)(struct cfa *a, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN],
		     char *err, size_t errlen);
	int (*chain_set)(struct cfa *a, uint64_t seq, const unsigned char link[CF_FLEET_HASH_LEN],
			 char *err, size_t errlen);
	/* cf_fleet_apply(): chained, the module admits only the next link */
	int (*apply)(struct cfa *a, const struct cf_fleet_change *ch, char *err, size_t errlen);
	int (*epoch_get)(struct cfa *a, uint64_t id, struct capfence_epoch_info *ei,
			 char *err, size_t errlen);
	int (*epoch_install)(struct cfa *a, const struct capfence_epoch *e, char *err, size_t errlen);
	int (*epoch_activate)(struct cfa *a, uint64_t id, char *err, size_t errlen);
	int (*revoke)(struct cfa *a, uint64_t cap_id, char *err, size_t errlen);
	int (*key_remove)(struct cfa *a, uint32_t key_id, char *err, size_t errlen);
	/* the module handle failed: open it again (a reloaded module); NULL: never */
	int (*reopen)(struct cfa *a, char *err, size_t errlen);
	/* the store */
	int (*snapshot)(struct cfa *a, struct cf_fleet_change **chs, size_t *n, uint64_t *rev,
			struct cf_fleet_base *b, char *err, size_t errlen);
	int (*head)(struct cfa *a, struct cf_fleet_head *hd, char *err, size_t errlen);
	int (*latest)(struct cfa *a, uint64_t *rev, uint64_t *store_rev, char *err, size_t errlen);
	int (*decode)(struct cfa *a, const char *key, const char *value, struct cf_fleet_change *ch,
		      char *err, size_t errlen);
	/* cf_etcd_watch() of the fleet's keys from rev from; arg is a */
	int (*watch)(struct cfa *a, uint64_t from, cf_etcd_event_cb cb, cf_etcd_stop_cb stop,
		     int64_t *compact, char *err, size_t errlen);
	int (*lease_grant)(struct cfa *a, int64_t ttl, int64_t *lease, char *err, size_t errlen);
	int (*lease_keepalive)(struct cfa *a, int64_t lease, int64_t *ttl, char *err, size_t errlen);
	int (*report)(struct cfa *a, const struct cf_fleet_host *h, int64_t lease,
		      char *err, size_t errlen);
	/* the surroundings, each may be NULL: a log line */
	void (*say)(struct cfa *a, const char *line);
	/* between requests of a beat (systemd's watchdog) */
	void (*tick)(struct cfa *a);
	/* after a beat: ready (once, the first time current), a status line */
	void (*notify)(struct cfa *a, bool ready, const char *status);
};

struct cfa {
	const struct cfa_ops *ops;
	void *ctx;			/* the ops' own */
	/* configuration, set before the threads start */
	const char *host;
	uint32_t stale_ms, deny_ms, heartbeat_ms, reconcile_s;
	int64_t lease_ttl;
	bool chained;			/* changes must form the chain (--fleet-pubkey) */
	bool require_head;		/* confirm only at the signed head */
	struct cf_fleet_pacer pacer;	/* its every_ms: --report-every (report_lock) */
	int64_t next_reconcile;		/* CLOCK_BOOTTIME ms; 0: at the first beat */
	/* a failed reconcile is tried again after retry_ms (doubling up to
	 * the period), not a whole period later: its failure holds the
	 * host's confirmations until a reconcile passes. 0: none failed.
	 */
	uint32_t reconcile_retry_ms;
	int64_t next_reconcile_retry;	/* CLOCK_BOOTTIME ms */

	atomic_bool stop, restart, rearm;
	pthread_mutex_t cf_lock, state_lock, report_lock, metrics_lock;
	char failing[160];		/* why the host is below the fleet, "" */
	uint64_t failing_rev;		/* the change that fails, 0 = reconcile */
	char head_why[160];		/* why the head stops confirmations, "" */
	uint64_t known_rev;		/* the highest revision seen in the module */
	uint64_t known_seq;		/* chained: the highest position seen in the module */
	uint64_t chain_seq;		/* the chain's changes the module has (read back from it) */
	uint64_t chain_rev;		/* the store revision of change chain_seq: an index, no evidence */
	uint64_t chain_base;		/* the snapshot's seq the chain starts at, 0: genesis */
	unsigned char base_hash[CF_FLEET_HASH_LEN];	/* its link */
	unsigned char (*links)[CF_FLEET_HASH_LEN];	/* links[s - base - 1]: change s's */
	size_t links_cap;
	_Atomic uint64_t watch_from;	/* after a rebuild, its revision + 1 */
	atomic_bool rebuild_asked;	/* behind the head, rebuild */
	/* the watch's */
	uint64_t stream_rev;		/* chained: the last event's revision on this stream */
	/* the heartbeat's */
	uint64_t head_seen;		/* the highest head seq seen */
	struct {			/* the head last seen, anchored at first sight */
		bool have;
		uint64_t seq;
		int64_t time_ms;	/* its signed time */
		uint64_t signed_ns;	/* CLOCK_BOOTTIME: first sight less its age then */
	} anchor;
	int head_kind;			/* the last head_note() kind */
	bool module_gone, store_down;
	uint64_t last_applied, lag_beats;
	/* report_lock */
	int64_t lease, lease_renewed;
	struct cf_agent_metrics m;	/* metrics_lock */
};

/* Ready a: locks, metrics; ops and configuration set by the caller. */
void cfa_init(struct cfa *a);
void cfa_destroy(struct cfa *a);

void cfa_say(struct cfa *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sleep ms, waking early when a is asked to stop. */
void cfa_nap(struct cfa *a, uint32_t ms);
/* CLOCK_BOOTTIME, the module's clock: ms, and ns */
int64_t cfa_now_ms(void);
uint64_t cfa_boot_ns(void);

bool cfa_is_failing(struct cfa *a);
/* the module's fleet revision (0 when it cannot be read) */
uint64_t cfa_module_rev(struct cfa *a);

/*
 * A watch event: verify, check against the chain, apply, report. A
 * change that did not apply ends the stream (-EAGAIN). arg: the agent.
 */
int cfa_on_event(const struct cf_etcd_event *ev, void *arg);
/*
 * Chained: bring the module to the store's chain by the position the
 * module holds; sets watch_from. 0, or -1 with the host failing.
 */
int cfa_chain_sync(struct cfa *a);
/* Unchained: the rebuild from a compacted store's snapshot. */
int cfa_rebuild(struct cfa *a);
/* Compare the module with the fleet up to upto (chained: its seq) and repair. */
int cfa_reconcile(struct cfa *a, uint64_t upto);
/* The host report, written when due (cf_fleet_report_due). */
void cfa_report(struct cfa *a);
/* One heartbeat: check the module, the head, confirm, reconcile when due, report. */
void cfa_beat(struct cfa *a);
/* The watch thread: sync, watch, retry, until a->stop. arg: the agent. */
void *cfa_watch_main(void *arg);
/* The heartbeat thread's loop: cfa_beat() every heartbeat_ms until a->stop. */
void cfa_heartbeat_loop(struct cfa *a);

#endif /* CAPFENCED_AGENT_CORE_H */
