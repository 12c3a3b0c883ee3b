// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet revision and its bounds, through the real module: a change
 * carrying a fleet revision is applied once (a replay is EALREADY), the
 * revision only moves forward, a host past its stale bound refuses
 * delegations and exec tokens with fleet_stale (ENOLINK), and past its
 * deny bound denies the exercise of every grant with EACCES and an audit
 * record saying fleet_stale and fleet_rev. A new
 * confirmation ends both. Fleet mode is switched off again after each test.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

struct fleet_status {
	uint64_t rev, applied, seq;
	uint8_t link[CAPFENCE_FLEET_LINK_LEN];
	uint32_t stale_ms, deny_ms, state;
	int64_t age_ms;		/* -1: never confirmed */
};

static int status_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1] = {};
	const struct nlattr *fb[CAPFENCE_FLEET_A_MAX + 1] = {};
	struct fleet_status *s = data;

	if (cft_nl_parse(nlh, tb) || !tb[CAPFENCE_A_FLEET_REV] ||
	    !tb[CAPFENCE_A_FLEET] ||
	    cft_nl_parse_nested(tb[CAPFENCE_A_FLEET], fb, &cf_attrs_fleet))
		return MNL_CB_ERROR;
	s->rev = mnl_attr_get_u64(tb[CAPFENCE_A_FLEET_REV]);
	s->stale_ms = mnl_attr_get_u32(fb[CAPFENCE_FLEET_A_STALE_MS]);
	s->deny_ms = mnl_attr_get_u32(fb[CAPFENCE_FLEET_A_DENY_MS]);
	s->state = mnl_attr_get_u32(fb[CAPFENCE_FLEET_A_STATE]);
	s->applied = mnl_attr_get_u64(fb[CAPFENCE_FLEET_A_APPLIED]);
	s->age_ms = fb[CAPFENCE_FLEET_A_AGE_MS] ?
		    (int64_t)mnl_attr_get_u32(fb[CAPFENCE_FLEET_A_AGE_MS]) : -1;
	s->seq = fb[CAPFENCE_FLEET_A_SEQ] ? mnl_attr_get_u64(fb[CAPFENCE_FLEET_A_SEQ]) : 0;
	if (fb[CAPFENCE_FLEET_A_LINK])
		memcpy(s->link, mnl_attr_get_payload(fb[CAPFENCE_FLEET_A_LINK]), sizeof(s->link));
	return MNL_CB_OK;
}

static int fleet_status(struct cft_nl *nl, struct fleet_status *s)
{
	memset(s, 0, sizeof(*s));
	return cft_nl_talk(nl, cft_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0),
			   status_cb, s);
}

/* FLEET_SET; rev 0 leaves the revision, stale_ms < 0 leaves the bounds. */
static int fleet_set(struct cft_nl *nl, uint64_t rev, int stale_ms,
		     uint32_t deny_ms, bool fresh, uint32_t age_ms)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_FLEET_SET, 0);
	struct nlattr *nest;

	if (rev)
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, rev);
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
	if (stale_ms >= 0) {
		mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_STALE_MS, stale_ms);
		mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_DENY_MS, deny_ms);
	}
	if (fresh) {
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_FRESH, 0, NULL);
		mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_AGE_MS, age_ms);
	}
	mnl_attr_nest_end(nlh, nest);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* Each held grant's cap_id -> (fleet revision, state), from TASK_GET. */
struct held {
	int n;
	uint64_t cap_id[4], rev[4];
	uint32_t state[4];
};

static int held_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1] = {}, *m;
	struct held *h = data;

	if (cft_nl_parse(nlh, tb) || !tb[CAPFENCE_A_CAPS])
		return MNL_CB_ERROR;
	mnl_attr_for_each_nested(m, tb[CAPFENCE_A_CAPS]) {
		const struct nlattr *c[CAPFENCE_CAP_A_MAX + 1] = {};

		if (h->n == 4 || cft_nl_parse_nested(m, c, &cf_attrs_cap) ||
		    !c[CAPFENCE_CAP_A_FLEET_REV])
			return MNL_CB_ERROR;
		h->cap_id[h->n] = mnl_attr_get_u64(c[CAPFENCE_CAP_A_CAP_ID]);
		h->rev[h->n] = mnl_attr_get_u64(c[CAPFENCE_CAP_A_FLEET_REV]);
		h->state[h->n++] = mnl_attr_get_u32(c[CAPFENCE_CAP_A_STATE]);
	}
	return MNL_CB_OK;
}

static int held_get(struct cft_nl *nl, pid_t pid, struct held *h)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);

	memset(h, 0, sizeof(*h));
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
	return cft_nl_talk(nl, nlh, held_cb, h);
}

/* REVOKE carrying a fleet revision */
static int revoke_at(struct cft_nl *nl, uint64_t cap_id, uint64_t rev)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_REVOKE, 0);

	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, cap_id);
	mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, rev);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* REVOKE carrying a chain position (seq, prev, link) */
static int revoke_chained(struct cft_nl *nl, uint64_t cap_id, uint64_t seq,
			  const uint8_t *prev, const uint8_t *link)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_REVOKE, 0);
	struct nlattr *nest;

	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, cap_id);
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
	mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_SEQ, seq);
	if (prev)
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_PREV, CAPFENCE_FLEET_LINK_LEN, prev);
	if (link)
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_LINK, CAPFENCE_FLEET_LINK_LEN, link);
	mnl_attr_nest_end(nlh, nest);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* FLEET_SET of a snapshot's chain position (seq, link) */
static int chain_set(struct cft_nl *nl, uint64_t seq, const uint8_t *link)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_FLEET_SET, 0);
	struct nlattr *nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);

	mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_SEQ, seq);
	mnl_attr_put(nlh, CAPFENCE_FLEET_A_LINK, CAPFENCE_FLEET_LINK_LEN, link);
	mnl_attr_nest_end(nlh, nest);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

FIXTURE(fleet) {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e, rev;
	struct cft_agent agent;
	int srv, audit;
	uint16_t port;
};

FIXTURE_SETUP(fleet)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8",
				"net:bind=open", "fs:read=open",
				"fs:write=open" };
	struct fleet_status s;

	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->e, rules, 4, NULL, 0));
	self->srv = cft_listen(&self->port);
	ASSERT_LE(0, self->srv);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	ASSERT_EQ(0, cft_agent_spawn(&self->agent, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	self->rev = s.rev;
}

FIXTURE_TEARDOWN(fleet)
{
	struct fleet_status s;

	EXPECT_EQ(0, fleet_set(&self->nl, 0, 0, 0, false, 0)) TH_LOG("%s",
		  self->nl.ext);
	EXPECT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(CAPFENCE_FLEET_OFF, s.state);
	EXPECT_TRUE(cft_agent_stop_clean(&self->agent));
	cft_audit_close(self->audit);
	close(self->srv);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static void give(struct __test_metadata *_metadata, FIXTURE_DATA(fleet) *self,
		 struct capfence_token *t)
{
	struct cft_reply r;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "127.0.0.1/32",
			      0, t));
	ASSERT_EQ(0, cft_delegate(&self->nl, t, self->agent.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
}

TEST_F(fleet, revision_only_moves_forward)
{
	struct fleet_status s;

	ASSERT_EQ(0, fleet_set(&self->nl, self->rev + 5, -1, 0, false, 0));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(self->rev + 5, s.rev);
	EXPECT_EQ(CAPFENCE_FLEET_OFF, s.state);
	/* the same revision again changes nothing and is no error */
	EXPECT_EQ(0, fleet_set(&self->nl, self->rev + 5, -1, 0, false, 0));
	EXPECT_EQ(-EALREADY, fleet_set(&self->nl, self->rev + 4, -1, 0, false, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "below the module's"));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(self->rev + 5, s.rev);
}

TEST_F(fleet, change_at_a_revision_is_applied_once)
{
	struct capfence_token t;
	struct fleet_status a, b;
	struct cft_reply r;
	uint64_t rev = self->rev + 1;

	give(_metadata, self, &t);
	ASSERT_EQ(0, fleet_status(&self->nl, &a));
	ASSERT_EQ(0, revoke_at(&self->nl, t.cap_id, rev)) TH_LOG("%s",
		  self->nl.ext);
	ASSERT_EQ(0, fleet_status(&self->nl, &b));
	EXPECT_EQ(rev, b.rev);
	EXPECT_EQ(a.applied + 1, b.applied);
	/* a replay of the same change, or of any older one, is refused */
	EXPECT_EQ(-EALREADY, revoke_at(&self->nl, t.cap_id, rev));
	EXPECT_NE(NULL, strstr(self->nl.ext, "applied this fleet revision"));
	EXPECT_EQ(-EALREADY, revoke_at(&self->nl, t.cap_id + 1, rev - 1));
	ASSERT_EQ(0, fleet_status(&self->nl, &b));
	EXPECT_EQ(a.applied + 1, b.applied);
	/* the revoke itself took effect */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	/* a revision of 0 is never issued */
	{
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_REVOKE, 0);

		mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, t.cap_id);
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, 0);
		EXPECT_EQ(-ERANGE, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	}
	/* the local (revision-less) revoke still works */
	EXPECT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
}

/*
 * The chain position, not a revision, records what a chained host applied:
 * a change is applied only as the next link (EXDEV otherwise, nothing
 * changed), the link held is EALREADY, a snapshot's position moves it
 * forward only. The position persists across tests (the module's): each
 * run builds on what it finds.
 */
TEST_F(fleet, chain_position_is_the_record)
{
	uint8_t x[CAPFENCE_FLEET_LINK_LEN], y[CAPFENCE_FLEET_LINK_LEN];
	uint8_t z[CAPFENCE_FLEET_LINK_LEN];
	struct capfence_token t;
	struct fleet_status a, b;
	uint64_t s;

	ASSERT_EQ(0, fleet_status(&self->nl, &a));
	s = a.seq;
	memset(x, 0x11 ^ (uint8_t)s, sizeof(x));
	memset(y, 0x22 ^ (uint8_t)s, sizeof(y));
	memset(z, 0x33 ^ (uint8_t)s, sizeof(z));
	give(_metadata, self, &t);
	/* a gap, or another prev: refused, the grant still admits */
	EXPECT_EQ(-EXDEV, revoke_chained(&self->nl, t.cap_id, s + 2, a.link, x));
	EXPECT_NE(NULL, strstr(self->nl.ext, "not the next link"));
	EXPECT_EQ(-EXDEV, revoke_chained(&self->nl, t.cap_id, s + 1, y, x));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u", self->port));
	ASSERT_EQ(0, fleet_status(&self->nl, &b));
	EXPECT_EQ(s, b.seq);
	EXPECT_EQ(a.applied, b.applied);
	/* the next link: applied, the module moves to it, whatever its revision */
	ASSERT_EQ(0, revoke_chained(&self->nl, t.cap_id, s + 1, a.link, x))
		TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, fleet_status(&self->nl, &b));
	EXPECT_EQ(s + 1, b.seq);
	EXPECT_EQ(0, memcmp(b.link, x, sizeof(x)));
	EXPECT_EQ(a.rev, b.rev);
	EXPECT_EQ(a.applied + 1, b.applied);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u", self->port));
	/* the link held: EALREADY; another link at that seq: EXDEV */
	EXPECT_EQ(-EALREADY, revoke_chained(&self->nl, t.cap_id, s + 1, a.link, x));
	EXPECT_NE(NULL, strstr(self->nl.ext, "holds this fleet chain link"));
	EXPECT_EQ(-EXDEV, revoke_chained(&self->nl, t.cap_id, s + 1, a.link, y));
	/* a position is SEQ, PREV and LINK together, nothing else */
	EXPECT_EQ(-EINVAL, revoke_chained(&self->nl, t.cap_id, s + 2, x, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "together"));
	/* a snapshot's position: forward only, the same one is no error */
	EXPECT_EQ(-EXDEV, chain_set(&self->nl, s + 1, y));
	EXPECT_EQ(0, chain_set(&self->nl, s + 1, x));
	ASSERT_EQ(0, chain_set(&self->nl, s + 3, z)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, fleet_status(&self->nl, &b));
	EXPECT_EQ(s + 3, b.seq);
	EXPECT_EQ(0, memcmp(b.link, z, sizeof(z)));
	EXPECT_EQ(-EXDEV, chain_set(&self->nl, s + 1, x));
	EXPECT_NE(NULL, strstr(self->nl.ext, "below the module's"));
	/* seq 0 is never a position */
	EXPECT_EQ(-ERANGE, chain_set(&self->nl, 0, z));
}

TEST_F(fleet, bad_requests)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	/* DENY_MS below STALE_MS */
	EXPECT_EQ(-EINVAL, fleet_set(&self->nl, 0, 500, 400, false, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "DENY_MS must be at least"));
	/* a deny bound without fleet mode */
	EXPECT_EQ(-EINVAL, fleet_set(&self->nl, 0, 0, 400, false, 0));
	/* a confirmation outside fleet mode */
	EXPECT_EQ(-EINVAL, fleet_set(&self->nl, 0, -1, 0, true, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "needs fleet mode"));
	/* a bound above a day */
	EXPECT_EQ(-ERANGE, fleet_set(&self->nl, 0, 1000,
				     CAPFENCE_FLEET_MAX_MS + 1, false, 0));
	/* one bound alone */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_FLEET_SET, 0);
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
	mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_STALE_MS, 100);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "come together"));
	/* an age without a confirmation */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_FLEET_SET, 0);
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
	mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_AGE_MS, 100);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	/* output-only attributes are refused */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_FLEET_SET, 0);
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
	mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_STATE, CAPFENCE_FLEET_CURRENT);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
}

/* FLEET_SET with ASKED_NS (CLOCK_BOOTTIME), FRESH and AGE_MS as asked */
static int fleet_asked(struct cft_nl *nl, uint64_t asked, bool fresh, bool age)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_FLEET_SET, 0);
	struct nlattr *nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);

	if (fresh)
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_FRESH, 0, NULL);
	if (age)
		mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_AGE_MS, 1);
	mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_ASKED_NS, asked);
	mnl_attr_nest_end(nlh, nest);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A confirmation holds from the instant the agent asked its store, on the
 * module's clock: however late the request arrives (a stalled or
 * suspended agent), its age is counted from then.
 */
TEST_F(fleet, confirmation_dated_by_the_instant_asked)
{
	struct fleet_status s;
	uint64_t asked;

	ASSERT_EQ(0, fleet_set(&self->nl, 0, 1000, 2000, false, 0));
	asked = boot_ns() - 1500ull * 1000000;	/* asked 1.5 s ago */
	ASSERT_EQ(0, fleet_asked(&self->nl, asked, true, false));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_LE(1500, s.age_ms);
	EXPECT_GT(1900, s.age_ms);
	/* past the stale bound already: the stall did not extend it */
	EXPECT_EQ(CAPFENCE_FLEET_STALE, s.state);
	/* ahead of the module's clock */
	EXPECT_EQ(-EINVAL, fleet_asked(&self->nl, boot_ns() + 60ull * 1000000000,
				       true, false));
	EXPECT_NE(NULL, strstr(self->nl.ext, "ahead of the module's CLOCK_BOOTTIME"));
	/* without FRESH, or with AGE_MS */
	EXPECT_EQ(-EINVAL, fleet_asked(&self->nl, boot_ns(), false, false));
	EXPECT_NE(NULL, strstr(self->nl.ext, "ASKED_NS dates a FRESH confirmation"));
	EXPECT_EQ(-EINVAL, fleet_asked(&self->nl, boot_ns(), true, true));
	EXPECT_NE(NULL, strstr(self->nl.ext, "without AGE_MS"));
	/* a fresh one: current again */
	ASSERT_EQ(0, fleet_asked(&self->nl, boot_ns(), true, false));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(CAPFENCE_FLEET_CURRENT, s.state);
	EXPECT_GT(500, s.age_ms);
}

TEST_F(fleet, stale_host_refuses_delegations)
{
	struct capfence_status a, b;
	struct capfence_token t, u;
	struct fleet_status s;
	struct cft_agent x;
	struct cft_reply r;

	give(_metadata, self, &t);
	ASSERT_EQ(0, fleet_set(&self->nl, 0, 400, 60000, true, 0));
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(CAPFENCE_FLEET_CURRENT, s.state);
	EXPECT_LE(0, s.age_ms);
	EXPECT_EQ(400, s.stale_ms);
	EXPECT_EQ(60000, s.deny_ms);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "127.0.0.2/32",
			      0, &u));
	EXPECT_EQ(0, cft_delegate(&self->nl, &u, self->agent.pid, 0, true, &r));

	sleep_ms(600);
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(CAPFENCE_FLEET_STALE, s.state);
	EXPECT_LE(600, s.age_ms);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &a));
	EXPECT_EQ(-ENOLINK, cft_delegate(&self->nl, &u, self->agent.pid, 0,
					 false, &r));
	EXPECT_EQ(CAPFENCE_R_FLEET_STALE, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "fleet_stale"));
	EXPECT_EQ(u.cap_id, r.cap_id);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_EQ(a.delegate_reject[CAPFENCE_R_FLEET_STALE] + 1,
		  b.delegate_reject[CAPFENCE_R_FLEET_STALE]);
	/* an exec binding with tokens is a delegation too */
	EXPECT_EQ(-ENOLINK, cft_agent_spawn(&x, self->e, &u, 1, &r));
	EXPECT_EQ(CAPFENCE_R_FLEET_STALE, r.reason);
	/* what the host already holds, at its revision, still works */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));

	/* a confirmation, 0 ms old, ends it */
	ASSERT_EQ(0, fleet_set(&self->nl, 0, -1, 0, true, 0));
	EXPECT_EQ(0, cft_delegate(&self->nl, &u, self->agent.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
	/* one that is already older than the bound does not */
	ASSERT_EQ(0, fleet_set(&self->nl, 0, -1, 0, true, 500));
	EXPECT_EQ(-ENOLINK, cft_delegate(&self->nl, &u, self->agent.pid, 0,
					 true, &r));
}

TEST_F(fleet, past_the_deny_bound_every_grant_is_denied)
{
	char rec[2048], v[256], want[64];
	struct capfence_token old, cur;
	struct capfence_status a, b;
	struct fleet_status s;
	struct cft_reply r;

	give(_metadata, self, &old);		/* at revision self->rev */
	ASSERT_EQ(0, fleet_set(&self->nl, self->rev + 10, 300, 600, true, 0));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.2/32", 0, &cur));
	ASSERT_EQ(0, cft_delegate(&self->nl, &cur, self->agent.pid, 0, false,
				  &r));	/* at revision self->rev + 10 */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	{
		/* each grant records the revision it was accepted at */
		struct held h;

		ASSERT_EQ(0, held_get(&self->nl, self->agent.pid, &h));
		ASSERT_EQ(2, h.n);
		EXPECT_EQ(old.cap_id, h.cap_id[0]);
		EXPECT_EQ(self->rev, h.rev[0]);
		EXPECT_EQ(cur.cap_id, h.cap_id[1]);
		EXPECT_EQ(self->rev + 10, h.rev[1]);
		EXPECT_EQ(CAPFENCE_R_OK, h.state[0]);
	}

	sleep_ms(800);
	ASSERT_EQ(0, fleet_status(&self->nl, &s));
	EXPECT_EQ(CAPFENCE_FLEET_DENY, s.state);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &a));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	snprintf(want, sizeof(want), "cap_id=%016llx",
		 (unsigned long long)old.cap_id);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=fleet_stale", want,
				    NULL));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	EXPECT_STREQ("net:connect", cft_field(rec, "class", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)self->rev + 10);
	EXPECT_STREQ(want, cft_field(rec, "fleet_rev", v, sizeof(v)));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_EQ(a.exercise_deny[CAPFENCE_R_FLEET_STALE] + 1,
		  b.exercise_deny[CAPFENCE_R_FLEET_STALE]);
	{
		/* and TASK_GET says why neither admits anything now */
		struct held h;

		ASSERT_EQ(0, held_get(&self->nl, self->agent.pid, &h));
		ASSERT_EQ(2, h.n);
		EXPECT_EQ(CAPFENCE_R_FLEET_STALE, h.state[0]);
		EXPECT_EQ(CAPFENCE_R_FLEET_STALE, h.state[1]);
	}
	/*
	 * A grant accepted at the host's own revision is denied too: a
	 * revision the host has not seen may have revoked it.
	 */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.2 %u",
				       self->port));
	snprintf(want, sizeof(want), "cap_id=%016llx",
		 (unsigned long long)cur.cap_id);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=fleet_stale", want,
				    NULL));

	ASSERT_EQ(0, fleet_set(&self->nl, 0, -1, 0, true, 0));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.2 %u",
				  self->port));
}

TEST_F(fleet, fleet_mode_off_restores_everything)
{
	struct capfence_token t;

	give(_metadata, self, &t);
	ASSERT_EQ(0, fleet_set(&self->nl, self->rev + 1, 100, 100, false, 0));
	sleep_ms(150);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	ASSERT_EQ(0, fleet_set(&self->nl, 0, 0, 0, false, 0));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
}

/* the next event of @type within @ms, or -ETIMEDOUT */
static int next_of(struct capfence_events *ev, int type, int ms,
		   struct capfence_event_info *out)
{
	uint64_t end = cft_now_ns() + (uint64_t)ms * 1000000;
	int err;

	for (;;) {
		int64_t left = (int64_t)(end - cft_now_ns()) / 1000000;

		if (left <= 0)
			return -ETIMEDOUT;
		err = capfence_events_next(ev, out, (int)left);
		if (err)
			return err;
		if (out->type == type)
			return 0;
	}
}

TEST_F(fleet, state_changes_are_events)
{
	struct capfence_event_info in;
	struct capfence_events *ev;
	char err[256];
	/*
	 * Wide enough that a loaded machine does not pass a deadline before
	 * the module announces the state before it (it announces the state
	 * it finds, so a late look would skip one).
	 */
	int stale_ms = cft_ms(1000), deny_ms = 2 * stale_ms;
	uint64_t t0;

	ASSERT_EQ(0, capfence_events_open(&ev, err, sizeof(err))) TH_LOG("%s", err);
	t0 = cft_now_ns();
	ASSERT_EQ(0, fleet_set(&self->nl, self->rev + 1, stale_ms, deny_ms, true,
			       0));
	ASSERT_EQ(0, next_of(ev, CAPFENCE_EV_FLEET_APPLY, cft_ms(2000), &in));
	ASSERT_EQ(0, next_of(ev, CAPFENCE_EV_FLEET_STATE, cft_ms(2000), &in));
	EXPECT_EQ(CAPFENCE_R_OK, in.reason);		/* current */
	/* stale, then denying, each announced by itself at its deadline */
	ASSERT_EQ(0, next_of(ev, CAPFENCE_EV_FLEET_STATE, deny_ms + cft_ms(2000),
			     &in));
	EXPECT_EQ(CAPFENCE_R_FLEET_STALE, in.reason);
	EXPECT_LE(stale_ms, (int64_t)(cft_now_ns() - t0) / 1000000);
	ASSERT_EQ(0, next_of(ev, CAPFENCE_EV_FLEET_STATE, deny_ms + cft_ms(2000),
			     &in));
	EXPECT_EQ(CAPFENCE_R_FLEET_STALE, in.reason);
	EXPECT_LE(deny_ms, (int64_t)(cft_now_ns() - t0) / 1000000);
	/* and a confirmation brings the host back */
	ASSERT_EQ(0, fleet_set(&self->nl, 0, -1, 0, true, 0));
	ASSERT_EQ(0, next_of(ev, CAPFENCE_EV_FLEET_STATE, cft_ms(2000), &in));
	EXPECT_EQ(CAPFENCE_R_OK, in.reason);
	capfence_events_close(ev);
}

CFT_MAIN
