// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the module's counters and capfenced's in the Prometheus
 * text exposition format (cf_metrics.h). Every family has its # HELP and
 * # TYPE lines and every series of a labelled family is written, zeros
 * included, so that rate() and absent() work from the first scrape.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_internal.h"
#include "cf_fleet.h"
#include "cf_metrics.h"

const double cf_metrics_bucket_le[CF_METRICS_BUCKETS - 1] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5,
};

static const char *const agent_errors[CF_AGENT_ERR_MAX] = {
	[CF_AGENT_ERR_APPLY] = "apply",
	[CF_AGENT_ERR_DECODE] = "decode",
	[CF_AGENT_ERR_ETCD] = "etcd",
	[CF_AGENT_ERR_CONFIRM] = "confirm",
	[CF_AGENT_ERR_RECONCILE] = "reconcile",
	[CF_AGENT_ERR_MODULE] = "module",
};

const char *cf_agent_error_name(int e)
{
	return e >= 0 && e < CF_AGENT_ERR_MAX ? agent_errors[e] : "?";
}

int cf_metrics_collect(struct capfence_client *c, struct cf_metrics_module *m,
		       char *err, size_t errlen)
{
	struct capfence_client *own = NULL;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!c) {
		ret = capfence_client_open(&own, err, errlen);
		if (ret == -ENOENT)
			return 0;	/* not loaded: that is what the metrics say */
		if (ret)
			return ret;
		c = own;
	}
	ret = capfence_client_status(c, &m->st, err, errlen);
	if (!ret)
		ret = capfence_client_fleet_status(c, &m->fleet, err, errlen);
	if (!ret)
		ret = capfence_client_sandbox_status(c, &m->sb, err, errlen);
	m->loaded = !ret;
	capfence_client_close(own);
	return ret;
}

void cf_agent_metrics_apply(struct cf_agent_metrics *a, int kind, bool ok, double s)
{
	int b;

	if (kind > 0 && kind < CF_METRICS_KINDS)
		a->applies[kind][ok ? 0 : 1]++;
	for (b = 0; b < CF_METRICS_BUCKETS - 1 && s > cf_metrics_bucket_le[b]; b++)
		;
	a->buckets[b]++;
	a->seconds += s;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	family(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* a label value: backslash, double quote and newline escaped */
static void label(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* seconds from milliseconds, exactly (no float rounding in the text) */
static void ms_seconds(FILE *f, const char *name, uint64_t ms)
{
	fprintf(f, "%s %" PRIu64 ".%03" PRIu64 "\n", name, ms / 1000, ms % 1000);
}

static void render_module(FILE *f, const struct cf_metrics_module *m)
{
	const struct capfence_status *s = &m->st;
	const struct capfence_fleet_status *fl = &m->fleet;
	int r, st;

	one(f, "capfence_module_loaded", "gauge",
	    "Whether capfence.ko answers on generic netlink (1) or is not loaded (0).", m->loaded);
	if (!m->loaded)
		return;
	family(f, "capfence_module_info", "gauge", "The loaded module's version and netlink ABI.");
	fputs("capfence_module_info{version=", f);
	label(f, s->version);
	fprintf(f, ",abi=\"%u\"} 1\n", s->abi);
	one(f, "capfence_hooks_attached", "gauge",
	    "Whether the BPF-LSM hooks are attached (1); while 0 nothing is mediated and binding fails.",
	    s->attached);
	one(f, "capfence_fence", "gauge",
	    "The module's fence: it moves with every revocation and every narrowing activation.",
	    s->fence);
	one(f, "capfence_epoch_active", "gauge", "The active epoch's id (0: none).", s->active_epoch);
	one(f, "capfence_epoch_max", "gauge", "The highest epoch id installed.", s->max_epoch);
	one(f, "capfence_bound_credentials", "gauge",
	    "Credentials bound to an epoch (sandboxed tasks share them).", s->bound);
	one(f, "capfence_held_capabilities", "gauge", "Capabilities held by bound credentials.",
	    s->held);
	family(f, "capfence_delegations_total", "counter",
	       "Delegations the module decided, by result and reason.");
	fprintf(f, "capfence_delegations_total{result=\"accepted\",reason=\"ok\"} %" PRIu64 "\n",
		s->delegate_ok);
	for (r = 1; r <= CAPFENCE_R_MAX; r++)
		fprintf(f, "capfence_delegations_total{result=\"rejected\",reason=\"%s\"} %" PRIu64 "\n",
			capfence_reason_name(r), s->delegate_reject[r]);
	family(f, "capfence_exercises_total", "counter",
	       "Exercises of a mediated class by bound tasks (and rechecks of their files and sockets), by result and reason.");
	fprintf(f, "capfence_exercises_total{result=\"allowed\",reason=\"ok\"} %" PRIu64 "\n",
		s->exercise_allow);
	for (r = 1; r <= CAPFENCE_R_MAX; r++)
		fprintf(f, "capfence_exercises_total{result=\"denied\",reason=\"%s\"} %" PRIu64 "\n",
			capfence_reason_name(r), s->exercise_deny[r]);
	if (m->sb.supported) {
		one(f, "capfence_audit_records_total", "counter",
		    "Denial audit records written (type 1460).", m->sb.records);
		family(f, "capfence_audit_unrecorded_total", "counter",
		       "Denials left without an audit record, by why.");
		fprintf(f, "capfence_audit_unrecorded_total{why=\"over_budget\"} %" PRIu64 "\n"
			"capfence_audit_unrecorded_total{why=\"over_ceiling\"} %" PRIu64 "\n"
			"capfence_audit_unrecorded_total{why=\"lost\"} %" PRIu64 "\n",
			m->sb.over_budget, m->sb.over_ceiling, m->sb.lost);
		one(f, "capfence_audit_suppressed_reports_total", "counter",
		    "op=suppressed audit records written.", m->sb.reports);
		one(f, "capfence_credentials_refused_total", "counter",
		    "Credential changes refused at a sandbox's cred_limit.", m->sb.cred_refused);
	}
	one(f, "capfence_fleet_mode", "gauge",
	    "Whether the module is in fleet mode (an agent set its staleness bounds).",
	    fl->stale_ms != 0);
	family(f, "capfence_fleet_state", "gauge",
	       "The module's fleet state: 1 for the state it is in.");
	for (st = CAPFENCE_FLEET_OFF; st <= CAPFENCE_FLEET_DENY; st++)
		fprintf(f, "capfence_fleet_state{state=\"%s\"} %d\n",
			capfence_fleet_state_name(st), fl->state == st);
	one(f, "capfence_fleet_revision", "gauge",
	    "The fleet revision the module has applied (etcd revision).", fl->rev);
	one(f, "capfence_fleet_changes_applied_total", "counter",
	    "Fleet changes the module applied at a revision.", fl->applied);
	family(f, "capfence_fleet_max_staleness_seconds", "gauge",
	       "Past this age of the last confirmation delegations are refused (0: fleet mode off).");
	ms_seconds(f, "capfence_fleet_max_staleness_seconds", fl->stale_ms);
	family(f, "capfence_fleet_deny_after_seconds", "gauge",
	       "Past this age of the last confirmation every grant is denied (0: fleet mode off).");
	ms_seconds(f, "capfence_fleet_deny_after_seconds", fl->deny_ms);
	if (fl->confirmed) {
		family(f, "capfence_fleet_confirmation_age_seconds", "gauge",
		       "Time since the agent last confirmed the module current (absent: never confirmed).");
		ms_seconds(f, "capfence_fleet_confirmation_age_seconds", fl->age_ms);
	}
}

static void render_agent(FILE *f, const struct cf_agent_metrics *a)
{
	uint64_t cum = 0;
	int k, b;

	family(f, "capfence_agent_applies_total", "counter",
	       "Fleet changes capfenced applied to the module (or found it had), by kind and result.");
	for (k = 1; k < CF_METRICS_KINDS; k++) {
		fprintf(f, "capfence_agent_applies_total{kind=\"%s\",result=\"applied\"} %" PRIu64 "\n",
			cf_fleet_kind_name(k), a->applies[k][0]);
		fprintf(f, "capfence_agent_applies_total{kind=\"%s\",result=\"failed\"} %" PRIu64 "\n",
			cf_fleet_kind_name(k), a->applies[k][1]);
	}
	family(f, "capfence_agent_apply_duration_seconds", "histogram",
	       "Time to apply one fleet change to the module.");
	for (b = 0; b < CF_METRICS_BUCKETS; b++) {
		cum += a->buckets[b];
		if (b < CF_METRICS_BUCKETS - 1)
			fprintf(f, "capfence_agent_apply_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				cf_metrics_bucket_le[b], cum);
		else
			fprintf(f, "capfence_agent_apply_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
				cum);
	}
	fprintf(f, "capfence_agent_apply_duration_seconds_sum %.9f\n", a->seconds);
	fprintf(f, "capfence_agent_apply_duration_seconds_count %" PRIu64 "\n", cum);
	family(f, "capfence_agent_errors_total", "counter", "capfenced's errors, by what failed.");
	for (k = 0; k < CF_AGENT_ERR_MAX; k++)
		fprintf(f, "capfence_agent_errors_total{error=\"%s\"} %" PRIu64 "\n",
			agent_errors[k], a->errors[k]);
	one(f, "capfence_agent_confirmations_total", "counter",
	    "Freshness confirmations capfenced sent the module.", a->confirmations);
	one(f, "capfence_agent_reconciles_total", "counter",
	    "Comparisons of the module with the fleet.", a->reconciles);
	one(f, "capfence_agent_reconcile_repairs_total", "counter",
	    "Changes a reconcile repaired in the module.", a->repaired);
	one(f, "capfence_agent_failing", "gauge",
	    "Whether a change does not apply (no confirmation until it does).", a->failing);
	one(f, "capfence_agent_ready", "gauge",
	    "Whether capfenced has been ready (the module current in fleet mode).", a->ready);
	family(f, "capfence_agent_start_time_seconds", "gauge",
	       "When capfenced started, in seconds since the epoch.");
	fprintf(f, "capfence_agent_start_time_seconds %.3f\n", a->start_time);
}

char *cf_metrics_render(const struct cf_metrics_module *m,
			const struct cf_agent_metrics *a, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	render_module(f, m);
	if (a)
		render_agent(f, a);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	if (len)
		*len = n;
	return buf;
}

int cf_metrics_health(const struct cf_metrics_module *m, char *why, size_t len)
{
	const struct capfence_fleet_status *fl = &m->fleet;

	if (!m->loaded) {
		snprintf(why, len, "module not loaded");
		return 503;
	}
	if (!m->st.attached) {
		snprintf(why, len, "hooks not attached");
		return 503;
	}
	if (fl->state == CAPFENCE_FLEET_OFF) {
		snprintf(why, len, "ok: hooks attached, fleet mode off");
		return 200;
	}
	if (fl->state != CAPFENCE_FLEET_CURRENT) {
		if (fl->confirmed)
			snprintf(why, len, "fleet %s: confirmed %u ms ago (stale after %u ms) at rev=%" PRIu64,
				 capfence_fleet_state_name(fl->state), fl->age_ms, fl->stale_ms, fl->rev);
		else
			snprintf(why, len, "fleet %s: never confirmed, at rev=%" PRIu64,
				 capfence_fleet_state_name(fl->state), fl->rev);
		return 503;
	}
	snprintf(why, len, "ok: fleet current at rev=%" PRIu64 ", confirmed %u ms ago", fl->rev,
		 fl->age_ms);
	return 200;
}

const char *cf_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

int cf_http_parse(const char *buf, size_t len, int *route, bool *head)
{
	const char *end = NULL, *sp1, *sp2, *eol, *p;
	size_t i, plen;

	*route = CF_HTTP_NONE;
	*head = false;
	/* the header ends at an empty line (CRLF CRLF, or bare LFs) */
	for (i = 0; i + 1 < len && i < CF_HTTP_REQ_MAX; i++) {
		if (buf[i] == '\n' && buf[i + 1] == '\n') {
			end = buf + i;
			break;
		}
		if (i + 3 < len && !memcmp(buf + i, "\r\n\r\n", 4)) {
			end = buf + i;
			break;
		}
	}
	if (!end)
		return len >= CF_HTTP_REQ_MAX ? 431 : 0;
	/* end is the first byte of the empty line's terminator pair: +2 holds a \n */
	eol = memchr(buf, '\n', (size_t)(end - buf) + 2);
	if (eol > buf && eol[-1] == '\r')
		eol--;
	for (p = buf; p < eol; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 400;
	sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || sp2 == sp1 + 1 || memchr(sp2 + 1, ' ', (size_t)(eol - sp2 - 1)))
		return 400;
	if (eol - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return (eol - sp2 - 1 >= 5 && !memcmp(sp2 + 1, "HTTP/", 5)) ? 505 : 400;
	if (sp1 - buf == 4 && !memcmp(buf, "HEAD", 4))
		*head = true;
	else if (!(sp1 - buf == 3 && !memcmp(buf, "GET", 3)))
		return 405;
	p = sp1 + 1;
	if (*p != '/')
		return 400;
	/* the path, without a query string */
	for (plen = 0; p + plen < sp2 && p[plen] != '?'; plen++)
		;
	if (plen == 8 && !memcmp(p, "/metrics", 8))
		*route = CF_HTTP_METRICS;
	else if (plen == 8 && !memcmp(p, "/healthz", 8))
		*route = CF_HTTP_HEALTHZ;
	else if (plen == 1)
		*route = CF_HTTP_INDEX;
	return 200;
}
