// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus exposition of tools/lib/cf_metrics.c without a module:
 * the text a known snapshot renders to, checked line by line by a strict
 * reader of the text format (0.0.4: names, labels and their escapes,
 * values, # HELP and # TYPE once per family and before its samples, a
 * family's samples together, no series twice, counters named _total,
 * histograms cumulative with +Inf equal to _count); the /healthz verdicts;
 * the request parser of capfenced's listener, every refusal included.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cf_metrics.h"

#define MAXFAM 64
#define MAXSER 512

struct expo {
	char fam[MAXFAM][96];
	char type[MAXFAM][16];
	bool help[MAXFAM], typed[MAXFAM], sampled[MAXFAM];
	int nfam, last;
	char series[MAXSER][256];
	int nser;
	/* histogram check: the last bucket count, and +Inf */
	double hist_last, hist_inf;
	char why[256];
};

static bool name_ok(const char *s, size_t n, bool metric)
{
	size_t i;

	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_' || (metric && s[0] == ':')))
		return false;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || (metric && s[i] == ':')))
			return false;
	return true;
}

static int fam_of(struct expo *e, const char *name, bool create)
{
	int i;

	for (i = 0; i < e->nfam; i++)
		if (!strcmp(e->fam[i], name))
			return i;
	if (!create || e->nfam == MAXFAM)
		return -1;
	snprintf(e->fam[e->nfam], sizeof(e->fam[0]), "%s", name);
	return e->nfam++;
}

static bool ends(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static bool value_ok(const char *s, double *v)
{
	char *end;

	if (!strcmp(s, "+Inf")) {
		*v = INFINITY;
		return true;
	}
	if (!strcmp(s, "-Inf") || !strcmp(s, "NaN")) {
		*v = NAN;
		return true;
	}
	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && !isspace((unsigned char)*s);
}

#define BAD(...) do { snprintf(e->why, sizeof(e->why), __VA_ARGS__); return -1; } while (0)

/* one sample line: its family (by the base name) must be typed already */
static int sample(struct expo *e, char *line, int ln)
{
	char name[96], base[96], key[256], le[32] = "";
	char *p = line, *q;
	size_t n;
	double v;
	int f;

	for (n = 0; p[n] && p[n] != '{' && p[n] != ' '; n++)
		;
	if (!name_ok(p, n, true) || n >= sizeof(name))
		BAD("line %d: bad metric name", ln);
	memcpy(name, p, n);
	name[n] = '\0';
	snprintf(key, sizeof(key), "%s", name);
	p += n;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			char lname[64];
			size_t k = strlen(key);

			for (n = 0; p[n] && p[n] != '='; n++)
				;
			if (!name_ok(p, n, false) || n >= sizeof(lname) || p[n] != '=' || p[n + 1] != '"')
				BAD("line %d: bad label", ln);
			memcpy(lname, p, n);
			lname[n] = '\0';
			p += n + 2;
			q = p;
			while (*q && *q != '"') {
				if (*q == '\\') {
					if (q[1] != '\\' && q[1] != '"' && q[1] != 'n')
						BAD("line %d: bad escape in a label value", ln);
					q++;
				}
				q++;
			}
			if (*q != '"')
				BAD("line %d: unterminated label value", ln);
			if (!strcmp(lname, "le"))
				snprintf(le, sizeof(le), "%.*s", (int)(q - p), p);
			else
				snprintf(key + k, sizeof(key) - k, "|%s=%.*s", lname, (int)(q - p), p);
			p = q + 1;
			if (*p == ',')
				p++;
			else if (*p != '}')
				BAD("line %d: expected , or } after a label", ln);
		}
		p++;
	}
	if (*p != ' ')
		BAD("line %d: expected one space before the value", ln);
	p++;
	q = strchr(p, ' ');
	if (q)
		*q = '\0';	/* a timestamp may follow; these have none */
	if (q || !value_ok(p, &v))
		BAD("line %d: bad value '%s'", ln, p);
	snprintf(base, sizeof(base), "%s", name);
	f = fam_of(e, base, false);
	if (f < 0) {
		/* histogram series: NAME_bucket, NAME_sum, NAME_count */
		static const char *const suf[] = { "_bucket", "_sum", "_count" };
		size_t i;

		for (i = 0; i < 3 && f < 0; i++) {
			if (ends(name, suf[i])) {
				base[strlen(name) - strlen(suf[i])] = '\0';
				f = fam_of(e, base, false);
				if (f >= 0 && strcmp(e->type[f], "histogram"))
					f = -1;
				if (f < 0)
					snprintf(base, sizeof(base), "%s", name);
			}
		}
	}
	if (f < 0 || !e->typed[f] || !e->help[f])
		BAD("line %d: sample of %s before its # HELP and # TYPE", ln, name);
	if (e->sampled[f] && e->last != f)
		BAD("line %d: the samples of %s are not together", ln, base);
	e->sampled[f] = true;
	e->last = f;
	if (!strcmp(e->type[f], "counter") && !ends(name, "_total"))
		BAD("line %d: counter %s not named _total", ln, name);
	if (!strcmp(e->type[f], "counter") && !(v >= 0))
		BAD("line %d: negative counter", ln);
	if (!strcmp(e->type[f], "histogram")) {
		if (ends(name, "_bucket")) {
			double b;

			if (!le[0] || !value_ok(le, &b))
				BAD("line %d: bucket without a valid le", ln);
			if (v < e->hist_last)
				BAD("line %d: buckets not cumulative", ln);
			e->hist_last = v;
			if (isinf(b))
				e->hist_inf = v;
		} else if (ends(name, "_count") && v != e->hist_inf) {
			BAD("line %d: _count %g is not the +Inf bucket %g", ln, v, e->hist_inf);
		}
		if (le[0]) {
			size_t k = strlen(key);

			snprintf(key + k, sizeof(key) - k, "|le=%s", le);
		}
	} else if (le[0]) {
		BAD("line %d: le on a %s", ln, e->type[f]);
	}
	for (n = 0; n < (size_t)e->nser; n++)
		if (!strcmp(e->series[n], key))
			BAD("line %d: series %.160s twice", ln, key);
	if (e->nser == MAXSER)
		BAD("too many series");
	snprintf(e->series[e->nser++], sizeof(e->series[0]), "%s", key);
	return 0;
}

/* 0 when text is valid exposition text; else -1, e->why says where */
static int parse_expo(struct expo *e, const char *text)
{
	char *copy = strdup(text), *line, *save = NULL;
	int ln = 0, ret = 0;

	memset(e, 0, sizeof(*e));
	e->last = -1;
	if (!copy)
		return -1;
	if (!*text || text[strlen(text) - 1] != '\n') {
		snprintf(e->why, sizeof(e->why), "the text does not end with a newline");
		free(copy);
		return -1;
	}
	for (line = strtok_r(copy, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save)) {
		ln++;
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			bool help = line[2] == 'H';
			char *name = line + 7, *rest = strchr(name, ' ');
			int f;

			if (!rest || !name_ok(name, (size_t)(rest - name), true)) {
				snprintf(e->why, sizeof(e->why), "line %d: bad # HELP/# TYPE", ln);
				ret = -1;
				break;
			}
			*rest++ = '\0';
			f = fam_of(e, name, true);
			if (f < 0 || (help ? e->help[f] : e->typed[f]) || e->sampled[f]) {
				snprintf(e->why, sizeof(e->why),
					 "line %d: %s of %s twice, or after its samples", ln,
					 help ? "HELP" : "TYPE", name);
				ret = -1;
				break;
			}
			if (help) {
				e->help[f] = *rest != '\0';
			} else {
				if (strcmp(rest, "counter") && strcmp(rest, "gauge") &&
				    strcmp(rest, "histogram") && strcmp(rest, "summary") &&
				    strcmp(rest, "untyped")) {
					snprintf(e->why, sizeof(e->why), "line %d: bad type '%s'", ln, rest);
					ret = -1;
					break;
				}
				snprintf(e->type[f], sizeof(e->type[0]), "%s", rest);
				e->typed[f] = true;
				e->hist_last = 0;
				e->hist_inf = -1;
			}
		} else if (line[0] == '#') {
			continue;
		} else {
			ret = sample(e, line, ln);
		}
	}
	free(copy);
	return ret;
}

static struct cf_metrics_module known(void)
{
	struct cf_metrics_module m;

	memset(&m, 0, sizeof(m));
	m.loaded = true;
	snprintf(m.st.version, sizeof(m.st.version), "0.1.0");
	m.st.abi = 2;
	m.st.attached = true;
	m.st.fence = 17;
	m.st.max_epoch = 42;
	m.st.active_epoch = 41;
	m.st.bound = 3;
	m.st.held = 5;
	m.st.delegate_ok = 11;
	m.st.delegate_reject[CAPFENCE_R_EPOCH_MISMATCH] = 4;
	m.st.delegate_reject[CAPFENCE_R_FORGED] = 1;
	m.st.exercise_allow = 1000;
	m.st.exercise_deny[CAPFENCE_R_REVOKED] = 2;
	m.sb.supported = true;
	m.sb.records = 9;
	m.sb.over_budget = 6;
	m.fleet.supported = true;
	m.fleet.rev = 77;
	m.fleet.stale_ms = 10000;
	m.fleet.deny_ms = 30000;
	m.fleet.confirmed = true;
	m.fleet.age_ms = 1234;
	m.fleet.state = CAPFENCE_FLEET_CURRENT;
	m.fleet.applied = 12;
	return m;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
		p++;
	}
	return false;
}

TEST(module_families)
{
	struct cf_metrics_module m = known();
	struct expo *e = calloc(1, sizeof(*e));
	size_t len;
	char *t = cf_metrics_render(&m, NULL, &len);

	ASSERT_NE(NULL, t);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(strlen(t), len);
	EXPECT_EQ(0, parse_expo(e, t)) {
		TH_LOG("%s\n%s", e->why, t);
	}
	EXPECT_TRUE(has_line(t, "# TYPE capfence_delegations_total counter"));
	EXPECT_TRUE(has_line(t, "capfence_delegations_total{result=\"accepted\",reason=\"ok\"} 11"));
	EXPECT_TRUE(has_line(t, "capfence_delegations_total{result=\"rejected\",reason=\"epoch_mismatch\"} 4"));
	EXPECT_TRUE(has_line(t, "capfence_delegations_total{result=\"rejected\",reason=\"forged\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_delegations_total{result=\"rejected\",reason=\"fleet_stale\"} 0"));
	EXPECT_TRUE(has_line(t, "capfence_exercises_total{result=\"allowed\",reason=\"ok\"} 1000"));
	EXPECT_TRUE(has_line(t, "capfence_exercises_total{result=\"denied\",reason=\"revoked\"} 2"));
	EXPECT_TRUE(has_line(t, "capfence_module_loaded 1"));
	EXPECT_TRUE(has_line(t, "capfence_module_info{version=\"0.1.0\",abi=\"2\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_hooks_attached 1"));
	EXPECT_TRUE(has_line(t, "capfence_fence 17"));
	EXPECT_TRUE(has_line(t, "capfence_epoch_active 41"));
	EXPECT_TRUE(has_line(t, "capfence_epoch_max 42"));
	EXPECT_TRUE(has_line(t, "capfence_bound_credentials 3"));
	EXPECT_TRUE(has_line(t, "capfence_held_capabilities 5"));
	EXPECT_TRUE(has_line(t, "capfence_audit_records_total 9"));
	EXPECT_TRUE(has_line(t, "capfence_audit_unrecorded_total{why=\"over_budget\"} 6"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_mode 1"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_state{state=\"current\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_state{state=\"stale\"} 0"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_revision 77"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_changes_applied_total 12"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_max_staleness_seconds 10.000"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_deny_after_seconds 30.000"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_confirmation_age_seconds 1.234"));
	EXPECT_EQ(NULL, strstr(t, "capfence_agent_"));
	free(t);
	/* never confirmed: no age at all (not 0, which would read as fresh) */
	m.fleet.confirmed = false;
	m.fleet.state = CAPFENCE_FLEET_DENY;
	t = cf_metrics_render(&m, NULL, NULL);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, parse_expo(e, t));
	EXPECT_EQ(NULL, strstr(t, "capfence_fleet_confirmation_age_seconds"));
	EXPECT_TRUE(has_line(t, "capfence_fleet_state{state=\"deny\"} 1"));
	free(t);
	/* a version with a quote and a backslash stays one escaped label */
	snprintf(m.st.version, sizeof(m.st.version), "1\"x\\y\nz");
	t = cf_metrics_render(&m, NULL, NULL);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, parse_expo(e, t)) {
		TH_LOG("%s", e->why);
	}
	EXPECT_TRUE(has_line(t, "capfence_module_info{version=\"1\\\"x\\\\y\\nz\",abi=\"2\"} 1"));
	free(t);
	free(e);
	CF_NO_LEAKS();
}

TEST(module_not_loaded)
{
	struct cf_metrics_module m;
	struct expo *e = calloc(1, sizeof(*e));
	char why[128];
	char *t;

	ASSERT_NE(NULL, e);
	memset(&m, 0, sizeof(m));
	t = cf_metrics_render(&m, NULL, NULL);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, parse_expo(e, t));
	EXPECT_STREQ("# HELP capfence_module_loaded Whether capfence.ko answers on generic netlink (1) or is not loaded (0).\n"
		     "# TYPE capfence_module_loaded gauge\ncapfence_module_loaded 0\n", t);
	EXPECT_EQ(503, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("module not loaded", why);
	free(t);
	free(e);
	CF_NO_LEAKS();
}

TEST(agent_families)
{
	struct cf_metrics_module m = known();
	struct cf_agent_metrics a;
	struct expo *e = calloc(1, sizeof(*e));
	char *t;

	ASSERT_NE(NULL, e);
	memset(&a, 0, sizeof(a));
	cf_agent_metrics_apply(&a, 5, true, 0.0001);	/* revoke */
	cf_agent_metrics_apply(&a, 5, true, 0.003);
	cf_agent_metrics_apply(&a, 1, false, 0.5);	/* epoch_install */
	cf_agent_metrics_apply(&a, 1, true, 100);	/* past every bucket */
	a.errors[CF_AGENT_ERR_ETCD] = 3;
	a.confirmations = 8;
	a.ready = true;
	a.start_time = 1700000000.5;
	t = cf_metrics_render(&m, &a, NULL);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, parse_expo(e, t)) {
		TH_LOG("%s\n%s", e->why, t);
	}
	EXPECT_TRUE(has_line(t, "capfence_agent_applies_total{kind=\"revoke\",result=\"applied\"} 2"));
	EXPECT_TRUE(has_line(t, "capfence_agent_applies_total{kind=\"epoch_install\",result=\"failed\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_agent_applies_total{kind=\"key_add\",result=\"applied\"} 0"));
	EXPECT_TRUE(has_line(t, "# TYPE capfence_agent_apply_duration_seconds histogram"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_bucket{le=\"0.0005\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_bucket{le=\"0.0025\"} 1"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_bucket{le=\"0.005\"} 2"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_bucket{le=\"1\"} 3"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_bucket{le=\"+Inf\"} 4"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_count 4"));
	EXPECT_TRUE(has_line(t, "capfence_agent_apply_duration_seconds_sum 100.503100000"));
	EXPECT_TRUE(has_line(t, "capfence_agent_errors_total{error=\"etcd\"} 3"));
	EXPECT_TRUE(has_line(t, "capfence_agent_errors_total{error=\"apply\"} 0"));
	EXPECT_TRUE(has_line(t, "capfence_agent_confirmations_total 8"));
	EXPECT_TRUE(has_line(t, "capfence_agent_ready 1"));
	EXPECT_TRUE(has_line(t, "capfence_agent_start_time_seconds 1700000000.500"));
	/* for promtool (selftests/cli/metrics-tests.sh): every family at once */
	if (getenv("CF_METRICS_SAMPLE")) {
		FILE *f = fopen(getenv("CF_METRICS_SAMPLE"), "we");

		ASSERT_NE(NULL, f);
		fputs(t, f);
		fclose(f);
	}
	free(t);
	/* the agent's families are there when the module is not */
	memset(&m, 0, sizeof(m));
	t = cf_metrics_render(&m, &a, NULL);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(0, parse_expo(e, t));
	EXPECT_TRUE(has_line(t, "capfence_module_loaded 0"));
	EXPECT_TRUE(has_line(t, "capfence_agent_confirmations_total 8"));
	free(t);
	free(e);
	CF_NO_LEAKS();
}

/* the reader itself refuses what promtool refuses */
TEST(reader_refuses_bad_text)
{
	static const char *const bad[] = {
		"x 1\n",						/* no HELP/TYPE */
		"# HELP x h\n# TYPE x gauge\nx 1",			/* no final newline */
		"# HELP x h\n# TYPE x counter\nx 1\n",			/* counter not _total */
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",	/* twice */
		"# HELP x h\n# TYPE x gauge\nx{a=\"\\q\"} 1\n",		/* bad escape */
		"# HELP x h\n# TYPE x gauge\nx{1a=\"1\"} 1\n",		/* bad label name */
		"# HELP x h\n# TYPE x gauge\nx one\n",			/* bad value */
		"# HELP x h\n# TYPE x gauge\n# HELP y h\n# TYPE y gauge\nx 1\ny 1\nx{a=\"b\"} 1\n",
		"# HELP h h\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
		"# HELP h h\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
		"# HELP x h\n# TYPE x frob\nx 1\n",
		"# HELP x h\n# TYPE x gauge\nx 1\n# TYPE x gauge\n",
	};
	struct expo *e = calloc(1, sizeof(*e));
	size_t i;

	ASSERT_NE(NULL, e);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *t = bad[i];

		EXPECT_EQ(-1, parse_expo(e, t)) {
			TH_LOG("accepted #%zu", i);
		}
	}
	free(e);
	CF_NO_LEAKS();
}

TEST(health)
{
	struct cf_metrics_module m = known();
	char why[160];

	EXPECT_EQ(200, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("ok: fleet current at rev=77, confirmed 1234 ms ago", why);
	m.fleet.state = CAPFENCE_FLEET_STALE;
	m.fleet.age_ms = 12000;
	EXPECT_EQ(503, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("fleet stale: confirmed 12000 ms ago (stale after 10000 ms) at rev=77", why);
	m.fleet.confirmed = false;
	m.fleet.state = CAPFENCE_FLEET_DENY;
	EXPECT_EQ(503, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("fleet deny: never confirmed, at rev=77", why);
	m.st.attached = false;
	EXPECT_EQ(503, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("hooks not attached", why);
	m = known();
	memset(&m.fleet, 0, sizeof(m.fleet));
	EXPECT_EQ(200, cf_metrics_health(&m, why, sizeof(why)));
	EXPECT_STREQ("ok: hooks attached, fleet mode off", why);
}

static int parse(const char *req, int *route, bool *head)
{
	return cf_http_parse(req, strlen(req), route, head);
}

TEST(http_requests)
{
	char *big = malloc(CF_HTTP_REQ_MAX + 1);
	int route;
	bool head;

	ASSERT_NE(NULL, big);
	EXPECT_EQ(200, parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", &route, &head));
	EXPECT_EQ(CF_HTTP_METRICS, route);
	EXPECT_FALSE(head);
	EXPECT_EQ(200, parse("HEAD /healthz HTTP/1.0\n\n", &route, &head));
	EXPECT_EQ(CF_HTTP_HEALTHZ, route);
	EXPECT_TRUE(head);
	EXPECT_EQ(200, parse("GET /metrics?x=1 HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(CF_HTTP_METRICS, route);
	EXPECT_EQ(200, parse("GET / HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(CF_HTTP_INDEX, route);
	EXPECT_EQ(200, parse("GET /metricsx HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(CF_HTTP_NONE, route);
	/* not complete yet: wait for more */
	EXPECT_EQ(0, parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &route, &head));
	EXPECT_EQ(0, parse("", &route, &head));
	EXPECT_EQ(405, parse("POST /metrics HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(405, parse("get /metrics HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("GET /metrics\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("GET  /metrics HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("GET metrics HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("GET /metrics HTTP/1.1 x\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("GET /met\001rics HTTP/1.1\r\n\r\n", &route, &head));
	EXPECT_EQ(400, parse("\r\n\r\n", &route, &head));
	EXPECT_EQ(505, parse("GET /metrics HTTP/2.0\r\n\r\n", &route, &head));
	memset(big, 'a', CF_HTTP_REQ_MAX);
	memcpy(big, "GET /", 5);
	EXPECT_EQ(431, cf_http_parse(big, CF_HTTP_REQ_MAX, &route, &head));
	EXPECT_EQ(0, cf_http_parse(big, CF_HTTP_REQ_MAX - 1, &route, &head));
	free(big);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
