// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: for CFT_STRESS_SECONDS (default 10), overlapping generations of
 * bound agents while threads delegate, re-delegate, revoke, activate
 * epochs and fork/exec bound children, all at once. Each generation g has
 * its own epoch E_g whose net:connect rule covers a port range disjoint
 * from E_{g-1}'s (so activating E_g fences every E_{g-1} token), and:
 *
 *   agent A_g  spins connects to the generation's ports (2 threads);
 *   agent B_g  is driven to fork a child that connects, and to re-exec
 *              itself (keeping its epoch and capabilities);
 *   delegator  mints one capability per port, delegates it to A_g, and
 *              re-delegates some to B_g from A_g;
 *   revoker    revokes delegated capabilities at random;
 *   main       starts a generation every GEN_MS: installs and activates
 *              E_g, and mid-generation installs and activates an epoch
 *              identical to E_g (the fence moves, nothing is fenced).
 *
 * A generation's workers run on for a tail after the next activation.
 * Invariants, checked on every record:
 *   - no connect that started after the revoke of its capability
 *     returned is allowed (nor one on a port never delegated);
 *   - no connect that started after E_{g+1}'s activation returned is
 *     allowed, and no delegation of an E_g token started after it is
 *     accepted (it is fenced, EKEYEXPIRED);
 *   - counters add up: the status deltas of delegate ok/reject per reason
 *     and exercise allow/deny equal what the threads did and saw;
 *   - no agent is ended by a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

#define GEN_MS		2500
#define TAIL_MS		800
#define NPORTS		48
#define MAX_GENS	64

struct counters {
	uint64_t delegate_ok, exercise_allow;
	uint64_t delegate_reject[__CAPFENCE_R_MAX];
	uint64_t exercise_deny[__CAPFENCE_R_MAX];
};

struct gen {
	int g;
	uint64_t epoch;
	int base;			/* first port */
	uint64_t cap_id[NPORTS];
	volatile int delegated[NPORTS];	/* to A */
	volatile uint64_t revoked_ns[NPORTS];	/* return of the revoke */
	volatile uint64_t fenced_ns;	/* return of E_{g+1}'s activation */
	uint64_t end_ns;		/* workers run at least to here */
	uint64_t hard_end_ns;		/* and never past here */
	struct cft_agent a, b;
	pthread_t th[4];
	struct cft_spin_rec brec[4096];	/* B's children: judged at the end */
	int nbrec;
	/* results */
	struct counters did;
	long allowed, denied, records;
	long violations;
	volatile long del_after_fence;
	char why[1024];
	pthread_mutex_t lock;
};

static struct capfence_key *key;

/*
 * A generation's workers run for GEN_MS + TAIL_MS and then on until
 * TAIL_MS past its fence (with, for the delegator, one delegation after
 * it): on a busy machine the next epoch's activation can come after that
 * span, and a generation that ended first would test nothing across its
 * fence.  The hard end only keeps a stuck generation from running forever.
 */
static bool gen_over(const struct gen *g, bool want_delegation)
{
	uint64_t now = cft_now_ns(), fenced = g->fenced_ns;

	if (now >= g->hard_end_ns)
		return true;
	if (now < g->end_ns || !fenced || now < fenced + TAIL_MS * 1000000ull)
		return false;
	return !want_delegation || g->del_after_fence > 0;
}

static void gnote(struct gen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void gnote(struct gen *g, const char *fmt, ...)
{
	size_t len;
	va_list ap;

	pthread_mutex_lock(&g->lock);
	g->violations++;
	len = strlen(g->why);
	if (len + 2 < sizeof(g->why)) {
		va_start(ap, fmt);
		vsnprintf(g->why + len, sizeof(g->why) - len - 1, fmt, ap);
		va_end(ap);
		len = strlen(g->why);
		g->why[len] = '\n';
		g->why[len + 1] = '\0';
	}
	pthread_mutex_unlock(&g->lock);
}

static uint64_t u64a(const struct nlattr *a)
{
	return a ? mnl_attr_get_u64(a) : 0;
}

static void reasons(const struct nlattr *nest, uint64_t *out)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) < __CAPFENCE_R_MAX)
			out[mnl_attr_get_type(a)] = mnl_attr_get_u64(a);
}

static int counters_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	struct counters *c = data;

	cft_nl_parse(nlh, tb);
	if (!tb[CAPFENCE_A_STATS] ||
	    cft_nl_parse_nested(tb[CAPFENCE_A_STATS], st, &cf_attrs_stats))
		return MNL_CB_ERROR;
	c->delegate_ok = u64a(st[CAPFENCE_STATS_A_DELEGATE_OK]);
	c->exercise_allow = u64a(st[CAPFENCE_STATS_A_EXERCISE_ALLOW]);
	if (st[CAPFENCE_STATS_A_DELEGATE_REJECT])
		reasons(st[CAPFENCE_STATS_A_DELEGATE_REJECT], c->delegate_reject);
	if (st[CAPFENCE_STATS_A_EXERCISE_DENY])
		reasons(st[CAPFENCE_STATS_A_EXERCISE_DENY], c->exercise_deny);
	return MNL_CB_OK;
}

static int get_counters(struct cft_nl *nl, struct counters *c)
{
	memset(c, 0, sizeof(*c));
	return cft_nl_talk(nl, cft_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0),
			  counters_cb, c);
}

static int rules_for(int g, char *buf, size_t len)
{
	int lo = g % 2 ? 30000 : 20000;

	return snprintf(buf, len, "net:connect=token:127.0.0.0/8:%d-%d", lo,
			lo + 9999);
}

static int install(struct cft_nl *nl, int g, uint64_t *id)
{
	char net[64];
	const char *rules[] = { net, "fs:read=open", "fs:write=open" };
	int err;

	rules_for(g, net, sizeof(net));
	*id = cft_next_epoch(nl);
	err = cft_epoch_install(nl, *id, rules, 3, NULL, 0);
	return err ?: cft_epoch_activate(nl, *id);
}

/* One line from an agent, for the "ready" after its exec. */
static int agent_line(struct cft_agent *a, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = a->out, .events = POLLIN };

		if (poll(&p, 1, 20000) <= 0 || read(a->out, buf + n, 1) != 1)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static void count_reply(struct gen *g, const struct cft_reply *r)
{
	pthread_mutex_lock(&g->lock);
	if (r->reason == CAPFENCE_R_OK)
		g->did.delegate_ok++;
	else if (r->reason > 0 && r->reason < __CAPFENCE_R_MAX)
		g->did.delegate_reject[r->reason]++;
	pthread_mutex_unlock(&g->lock);
}

static void *delegator(void *p)
{
	struct gen *g = p;
	struct cft_reply r;
	struct cft_nl nl;
	int order[NPORTS], i, k;
	unsigned int seed = (unsigned int)g->g * 7919u + 1;

	if (cft_open(&nl)) {
		gnote(g, "delegator: no netlink");
		return NULL;
	}
	for (i = 0; i < NPORTS; i++)
		order[i] = i;
	for (i = NPORTS - 1; i > 0; i--) {
		int j = (int)(rand_r(&seed) % (unsigned int)(i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (k = 0; !gen_over(g, true); k++) {
		struct capfence_token t;
		char c[48];
		uint64_t t0;
		int pi = order[k % NPORTS];
		bool again = k >= NPORTS;

		snprintf(c, sizeof(c), "127.0.0.1:%d", g->base + pi);
		if (cft_mint(key, "net:connect", g->epoch, c, g->cap_id[pi], &t)) {
			gnote(g, "mint failed");
			break;
		}
		t0 = cft_now_ns();
		cft_delegate(&nl, &t, g->a.pid, 0, false, &r);
		if (r.reason < 0) {
			gnote(g, "delegate to A: no reason (err %d)", r.err);
			continue;
		}
		count_reply(g, &r);
		if (r.reason == CAPFENCE_R_OK && !again)
			g->delegated[pi] = 1;
		if (g->fenced_ns && t0 > g->fenced_ns) {
			g->del_after_fence++;
			if (r.reason != CAPFENCE_R_FENCED &&
			    r.reason != CAPFENCE_R_REVOKED)
				gnote(g, "delegation of an E_%d token after the fence: reason %d",
				      g->g, r.reason);
		}
		/* re-delegate some to B, from A */
		if (r.reason == CAPFENCE_R_OK && rand_r(&seed) % 3 == 0) {
			cft_delegate(&nl, &t, g->b.pid, g->a.pid, false, &r);
			if (r.reason >= 0)
				count_reply(g, &r);
		}
		usleep(again ? 20000 : 3000);
	}
	cft_nl_close(&nl);
	return NULL;
}

static void *revoker(void *p)
{
	struct gen *g = p;
	struct cft_reply r;
	struct cft_nl nl;
	unsigned int seed = (unsigned int)g->g * 104729u + 3;

	if (cft_open(&nl)) {
		gnote(g, "revoker: no netlink");
		return NULL;
	}
	usleep(200000);
	while (!gen_over(g, false)) {
		int pi = (int)(rand_r(&seed) % NPORTS);

		if (g->delegated[pi] && !g->revoked_ns[pi]) {
			if (cft_revoke(&nl, g->cap_id[pi], &r)) {
				gnote(g, "revoke: %d", r.err);
				break;
			}
			g->revoked_ns[pi] = cft_now_ns();
		}
		usleep(1000 + rand_r(&seed) % 8000);
	}
	cft_nl_close(&nl);
	return NULL;
}

/* Check one exercise record against what had returned before it began. */
static void judge(struct gen *g, uint64_t start, int pi, bool allowed,
		  const char *who)
{
	pthread_mutex_lock(&g->lock);
	g->records++;
	if (allowed)
		g->allowed++;
	else
		g->denied++;
	pthread_mutex_unlock(&g->lock);
	if (!allowed)
		return;
	if (pi < 0 || pi >= NPORTS)
		gnote(g, "%s: allowed connect outside the generation's ports", who);
	else if (!g->delegated[pi])
		gnote(g, "%s: allowed connect to port %d, never delegated", who,
		      g->base + pi);
	else if (g->revoked_ns[pi] && start > g->revoked_ns[pi])
		gnote(g, "%s: connect to %d allowed %llu ns after its revoke returned",
		      who, g->base + pi,
		      (unsigned long long)(start - g->revoked_ns[pi]));
	else if (g->fenced_ns && start > g->fenced_ns)
		gnote(g, "%s: connect to %d allowed %llu ns after the fence (E_%d+1)",
		      who, g->base + pi,
		      (unsigned long long)(start - g->fenced_ns), g->g);
}

/* A spins; its records are judged in gen_finish(). */
static void *spinner(void *p)
{
	struct gen *g = p;
	/*
	 * Signed: on a slow machine this thread may start after the
	 * generation ended, and an unsigned difference then asked the agent
	 * to spin for decades (it did not exit when its input closed).
	 */
	int64_t left = (int64_t)(g->end_ns - cft_now_ns());
	int secs = left > 0 ? (int)(left / 1000000000) + 1 : 1;
	int res;

	res = cft_agent_do(&g->a, "spin %d %d %d", secs, g->base, NPORTS);
	if (res) {
		gnote(g, "spin: %d", res);
		return NULL;
	}
	return NULL;
}

/* B forks connecting children and re-execs itself. */
static void *forker(void *p)
{
	struct gen *g = p;
	unsigned int seed = (unsigned int)g->g * 31u + 7;
	char line[128];
	int n;

	for (n = 0; !gen_over(g, false); n++) {
		int pi = (int)(rand_r(&seed) % NPORTS);
		uint64_t t0 = cft_now_ns();
		int res;

		if (n % 10 == 9) {
			if (cft_agent_do(&g->b, "exec") != 0 ||
			    agent_line(&g->b, line, sizeof(line)) ||
			    strncmp(line, "ready", 5)) {
				gnote(g, "B: re-exec failed");
				return NULL;
			}
			continue;
		}
		res = cft_agent_do(&g->b, "fork connect 127.0.0.1 %d", g->base + pi);
		if (res < 0 || res >= 200) {
			gnote(g, "B: child failed (%d)", res);
			return NULL;
		}
		if (g->nbrec < (int)(sizeof(g->brec) / sizeof(g->brec[0])))
			g->brec[g->nbrec++] = (struct cft_spin_rec){
				t0, (uint32_t)(g->base + pi), res != EACCES };
	}
	return NULL;
}

static int gen_start(struct gen *g, int n, uint64_t epoch)
{
	struct cft_reply r;
	int i, err;

	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->g = n;
	g->epoch = epoch;
	g->base = (n % 2 ? 30000 : 20000) + (n / 2 % 150) * 64;
	for (i = 0; i < NPORTS; i++)
		g->cap_id[i] = ((uint64_t)(n + 1) << 40) | ((uint64_t)getpid() << 16) |
			       (uint64_t)(i + 1);
	err = cft_agent_spawn(&g->a, epoch, NULL, 0, &r);
	if (err)
		return err;
	err = cft_agent_spawn(&g->b, epoch, NULL, 0, &r);
	if (err)
		return err;
	/* from here: spawning two agents can take seconds under KASAN */
	g->end_ns = cft_now_ns() + (GEN_MS + TAIL_MS) * 1000000ull;
	g->hard_end_ns = g->end_ns + (uint64_t)cft_ms(10000) * 1000000ull;
	pthread_create(&g->th[0], NULL, spinner, g);
	pthread_create(&g->th[1], NULL, delegator, g);
	pthread_create(&g->th[2], NULL, revoker, g);
	pthread_create(&g->th[3], NULL, forker, g);
	return 0;
}

static int gen_finish(struct gen *g)
{
	int i, sa, sb;

	for (i = 0; i < 4; i++)
		pthread_join(g->th[i], NULL);
	/* every thread has returned: delegations and revokes are all known */
	{
		struct cft_spin_rec rec;
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/tmp/spin.%d", g->a.pid);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			gnote(g, "spin log missing");
		while (fd >= 0 && read(fd, &rec, sizeof(rec)) == sizeof(rec))
			judge(g, rec.start_ns, (int)rec.port - g->base,
			      rec.allowed, "A");
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	for (i = 0; i < g->nbrec; i++)
		judge(g, g->brec[i].start_ns, (int)g->brec[i].port - g->base,
		      g->brec[i].allowed, "B child");
	sa = cft_agent_stop(&g->a);
	sb = cft_agent_stop(&g->b);
	if (WIFSIGNALED(sa) || WIFSIGNALED(sb))
		gnote(g, "an agent was killed by signal %d",
		      WIFSIGNALED(sa) ? WTERMSIG(sa) : WTERMSIG(sb));
	return 0;
}

static struct gen gens[MAX_GENS];

FIXTURE(stress) {
	struct cft_nl nl;
};

FIXTURE_SETUP(stress)
{
	ASSERT_EQ(0, cft_open(&self->nl));
	key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, key);
}

FIXTURE_TEARDOWN(stress)
{
	cft_nl_close(&self->nl);
}

static int stress_seconds(void)
{
	const char *env = getenv("CFT_STRESS_SECONDS");

	return env ? atoi(env) : 10;
}

/* the budget is set below, from CFT_STRESS_SECONDS */
TEST_F_TIMEOUT(stress, everything_at_once, 3600)
{
	int secs = stress_seconds(), ngen, n, i, c;
	struct counters before, after, did = {};
	long allowed = 0, denied = 0, records = 0, violations = 0, after_fence = 0;
	long activations = 0;
	uint64_t e, same;
	char net[64];

	ngen = secs * 1000 / GEN_MS;
	if (ngen < 2)
		ngen = 2;
	if (ngen > MAX_GENS - 1)
		ngen = MAX_GENS - 1;
	TH_LOG("%d s: %d generations of %d ms (+%d ms tail)", secs, ngen,
	       GEN_MS, TAIL_MS);
	ASSERT_EQ(0, get_counters(&self->nl, &before));
	for (n = 0; n <= ngen; n++) {
		uint64_t t0 = cft_now_ns();

		/* E_n: its activation fences E_{n-1} */
		ASSERT_EQ(0, install(&self->nl, n, &e));
		activations++;
		if (n > 0)
			gens[n - 1].fenced_ns = cft_now_ns();
		if (n == ngen)
			break;
		ASSERT_EQ(0, gen_start(&gens[n], n, e));
		/* mid-generation: an identical epoch moves the fence only */
		usleep(GEN_MS * 1000 / 2);
		{
			const char *rules[] = { net, "fs:read=open", "fs:write=open" };

			rules_for(n, net, sizeof(net));
			same = cft_next_epoch(&self->nl);
			ASSERT_EQ(0, cft_epoch_install(&self->nl, same, rules, 3, NULL, 0));
			ASSERT_EQ(0, cft_epoch_activate(&self->nl, same));
			ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));	/* again */
			activations++;
		}
		if (n > 0)
			gen_finish(&gens[n - 1]);
		while (cft_now_ns() < t0 + GEN_MS * 1000000ull)
			usleep(10000);
	}
	gen_finish(&gens[ngen - 1]);
	ASSERT_EQ(0, get_counters(&self->nl, &after));

	for (n = 0; n < ngen; n++) {
		struct gen *g = &gens[n];

		allowed += g->allowed;
		denied += g->denied;
		records += g->records;
		violations += g->violations;
		after_fence += g->del_after_fence;
		did.delegate_ok += g->did.delegate_ok;
		for (c = 0; c < __CAPFENCE_R_MAX; c++)
			did.delegate_reject[c] += g->did.delegate_reject[c];
		if (g->violations) {
			char *line = g->why, *nl;

			while ((nl = strchr(line, '\n'))) {
				*nl = '\0';
				TH_LOG("gen %d: %s", n, line);
				line = nl + 1;
			}
		}
		EXPECT_NE(0, g->fenced_ns);
	}
	TH_LOG("%ld exercises (%ld allowed, %ld denied), %llu delegations ok, "
	       "%ld delegations after a fence, %ld activations",
	       records, allowed, denied, (unsigned long long)did.delegate_ok,
	       after_fence, activations);
	EXPECT_EQ(0, violations);
	/* something actually happened on both sides of every invariant */
	EXPECT_LT(0, allowed);
	EXPECT_LT(0, denied);
	EXPECT_LT(0, after_fence);
	/* row 5: a token both revoked and fenced is reported revoked */
	EXPECT_LT(0, (long)(did.delegate_reject[CAPFENCE_R_FENCED] +
			    did.delegate_reject[CAPFENCE_R_REVOKED]));

	/* counters add up */
	EXPECT_EQ(did.delegate_ok, after.delegate_ok - before.delegate_ok);
	for (c = 1; c < __CAPFENCE_R_MAX; c++) {
		uint64_t d = after.delegate_reject[c] - before.delegate_reject[c];

		if (d != did.delegate_reject[c])
			TH_LOG("delegate reject reason %d: counter +%llu, threads saw %llu",
			       c, (unsigned long long)d,
			       (unsigned long long)did.delegate_reject[c]);
		EXPECT_EQ(did.delegate_reject[c], d);
	}
	EXPECT_EQ((uint64_t)allowed, after.exercise_allow - before.exercise_allow);
	{
		uint64_t d = 0;

		for (i = 0; i < __CAPFENCE_R_MAX; i++)
			d += after.exercise_deny[i] - before.exercise_deny[i];
		EXPECT_EQ((uint64_t)denied, d);
	}
}

/*
 * The run takes CFT_STRESS_SECONDS; starting and ending its generations
 * and checking every record take about as long again on a busy machine.
 * (main() scales this like every budget.)
 */
static void __attribute__((constructor)) stress_budget(void)
{
	int secs = stress_seconds();

	_stress_everything_at_once_object.timeout = 120 + 3 * (secs > 0 ? secs : 0);
}

CFT_MAIN
