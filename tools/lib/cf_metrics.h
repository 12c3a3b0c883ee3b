/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence internals: the module's counters, and capfenced's own, in
 * the Prometheus text exposition format (version 0.0.4), for `capfence
 * metrics` and capfenced's /metrics; /healthz's verdict; the request
 * line of capfenced's HTTP listener. Not installed, not exported; the CLI
 * and capfenced link it from libcapfence.a.
 */
#ifndef CF_METRICS_H
#define CF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <capfence/capfence.h>

/* What STATUS_GET says; loaded false: the module is not loaded. */
struct cf_metrics_module {
	bool loaded;
	struct capfence_status st;
	struct capfence_fleet_status fleet;
	struct capfence_sandbox_info sb;
};

/*
 * Ask the module (c, or a handle opened and closed here when c is NULL).
 * 0 with m->loaded false when the module is not loaded; else 0 or the
 * negative errno with a one-line message.
 */
int cf_metrics_collect(struct capfence_client *c, struct cf_metrics_module *m,
		       char *err, size_t errlen);

/* fleet change kinds (enum cf_fleet_kind) and the apply latency buckets */
#define CF_METRICS_KINDS	6
#define CF_METRICS_BUCKETS	12	/* the last one is +Inf */
extern const double cf_metrics_bucket_le[CF_METRICS_BUCKETS - 1];

enum cf_agent_error {
	CF_AGENT_ERR_APPLY,	/* a change the module did not take */
	CF_AGENT_ERR_DECODE,	/* a change refused or not decoded */
	CF_AGENT_ERR_ETCD,	/* the store did not answer a heartbeat */
	CF_AGENT_ERR_CONFIRM,	/* FLEET_SET of a confirmation failed */
	CF_AGENT_ERR_RECONCILE,	/* a reconcile failed */
	CF_AGENT_ERR_MODULE,	/* the module could not be reached */
	CF_AGENT_ERR_MAX
};

/* capfenced's own counters (the caller serializes access). */
struct cf_agent_metrics {
	uint64_t applies[CF_METRICS_KINDS][2];	/* [kind][0 applied, 1 failed] */
	uint64_t buckets[CF_METRICS_BUCKETS];	/* per bucket, not cumulative */
	double seconds;				/* sum of apply latencies */
	uint64_t errors[CF_AGENT_ERR_MAX];
	uint64_t confirmations;			/* freshness confirmed */
	uint64_t reconciles, repaired;		/* reconciles run, changes repaired */
	bool failing;				/* a change does not apply */
	bool ready;				/* READY=1 sent (fleet mode current) */
	double start_time;			/* unix seconds */
};

/* Count one apply of a change of kind (enum cf_fleet_kind) taking s seconds. */
void cf_agent_metrics_apply(struct cf_agent_metrics *a, int kind, bool ok,
			    double s);
/* "apply", "decode", ...; "?" if unknown. */
const char *cf_agent_error_name(int e);

/*
 * The exposition text (a NUL-terminated malloc'd string, *len its
 * length), the module's families first, then the agent's when a is not
 * NULL. NULL when out of memory.
 */
char *cf_metrics_render(const struct cf_metrics_module *m,
			const struct cf_agent_metrics *a, size_t *len);

/*
 * /healthz: 200 when the module is loaded, its hooks attached and, in
 * fleet mode, current; else 503. why gets one line either way.
 */
int cf_metrics_health(const struct cf_metrics_module *m, char *why, size_t len);

/* capfenced's listener: the requests it answers */
enum cf_http_route {
	CF_HTTP_NONE,		/* 404 */
	CF_HTTP_METRICS,	/* /metrics */
	CF_HTTP_HEALTHZ,	/* /healthz */
	CF_HTTP_INDEX,		/* / */
};

#define CF_HTTP_REQ_MAX	4096	/* request line and headers, bytes */

/*
 * Parse the request received so far (len bytes): 0 when the header is
 * not complete yet (and len < CF_HTTP_REQ_MAX); else an HTTP status:
 * 200 with *route and *head (a HEAD request) set, or 400 (malformed),
 * 405 (not GET or HEAD), 431 (over CF_HTTP_REQ_MAX), 505 (not HTTP/1.x).
 */
int cf_http_parse(const char *buf, size_t len, int *route, bool *head);
/* The reason phrase of an HTTP status this listener sends. */
const char *cf_http_reason(int status);

#endif
