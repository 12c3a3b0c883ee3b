// SPDX-License-Identifier: GPL-2.0
/*
 * Complain epochs: the log rule, and what learning must never weaken.
 *
 * - A class whose rule is log allows the exercise and records it with the
 *   denial's record shape, op=learn and the reason a deny rule would give;
 *   it is counted apart (exercise_learn), never as a denial.
 * - A token marked complain is refused by an enforcing epoch, and a
 *   complain epoch refuses an unmarked token (class_denied, the message
 *   naming why), at delegation and at exec alike.
 * - A complain epoch narrows nothing: activating one whose log rule
 *   narrows an older epoch's class fences none of it, and it does not
 *   become the active epoch.
 *
 * Each step asserts its errno, reason, message or record text, and that
 * no signal ended the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 60
#include "harness.h"
#include "common.h"

#define LRN_DIR		"/tmp/learn"
#define LRN_FILE	LRN_DIR "/out"

#define MSG_MARKED \
	"class_denied: the token is marked complain (minted for a complain epoch); an enforcing epoch refuses it"
#define MSG_UNMARKED \
	"class_denied: the receiver's epoch is a complain epoch; it takes only tokens marked complain"

FIXTURE(lrn) {
	struct cft_nl nl;
	struct capfence_key *key;
	int audit;
};

FIXTURE_SETUP(lrn)
{
	int fd;

	system("rm -rf " LRN_DIR);
	ASSERT_EQ(0, mkdir(LRN_DIR, 0755));
	/* exists: the open below is one fs:write exercise, not a create too */
	fd = open(LRN_FILE, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key) TH_LOG("the test key: %s", self->nl.ext);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
}

FIXTURE_TEARDOWN(lrn)
{
	cft_audit_close(self->audit);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

/* token t marked complain, its MAC computed again */
static int mark_complain(const struct capfence_key *k, struct capfence_token *t)
{
	t->flags |= CAPFENCE_TOKEN_F_COMPLAIN;
	return capfence_token_compute_mac(k, t, t->mac);
}

/* a record's text after the audit core's "audit(TIME:SERIAL): " stamp */
static const char *body(const char *rec)
{
	const char *p = strstr(rec, "): ");

	return p ? p + 3 : rec;
}

static uint64_t sandbox_of(struct cft_nl *nl, pid_t pid)
{
	struct capfence_sandbox_info sb;
	char err[CAPFENCE_ERR_MAX];

	if (capfence_client_task_sandbox(nl->c, (uint32_t)pid, &sb, err,
					 sizeof(err)))
		return 0;
	return sb.id;
}

/*
 * The log rule: the agent's write and connect succeed; each has exactly
 * one op=learn record, of the exact text a class_denied denial has but
 * for op; the learn counter moves by two and no denial counter moves.
 */
TEST_F(lrn, log_rule_allows_and_records_op_learn)
{
	const char *rules[] = { "fs:read=open", "fs:write=log",
				"net:connect=log", "net:bind=open" };
	struct capfence_status s0, s1;
	uint64_t e, sb, learn0, learn1;
	char rec[2048], want[2048], fence[32], rev[32], pfx[64];
	struct cft_agent a;
	uint16_t port;
	int r, lfd;

	lfd = cft_listen(&port);
	ASSERT_LE(0, lfd);
	e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 4, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	sb = sandbox_of(&self->nl, a.pid);
	ASSERT_NE(0, sb);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &s0));
	ASSERT_EQ(0, cft_nl_stat(&self->nl, CAPFENCE_STATS_A_EXERCISE_LEARN, &learn0));

	EXPECT_EQ(0, cft_agent_do(&a, "open " LRN_FILE " w"));
	snprintf(want, sizeof(want), "connect 127.0.0.1 %u", port);
	r = cft_agent_do(&a, "%s", want);
	EXPECT_EQ(0, r);

	ASSERT_EQ(0, cft_nl_stat(&self->nl, CAPFENCE_STATS_A_EXERCISE_LEARN, &learn1));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &s1));
	EXPECT_EQ(learn0 + 2, learn1);
	EXPECT_EQ(0, memcmp(s0.exercise_deny, s1.exercise_deny,
			    sizeof(s0.exercise_deny)))
		TH_LOG("an op=learn exercise moved a denial counter");

	snprintf(pfx, sizeof(pfx), "pid=%d ", a.pid);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 10000,
				    "op=learn", "class=fs:write", pfx, NULL));
	cft_field(rec, "fence", fence, sizeof(fence));
	cft_field(rec, "fleet_rev", rev, sizeof(rev));
	snprintf(want, sizeof(want),
		 "lsm=capfence op=learn reason=class_denied errno=13 pid=%d comm=\"exe\" epoch=%llu class=fs:write target=\"" LRN_FILE "\" cap_id=0000000000000000 fence=%s sandbox=%llu fleet_rev=%s",
		 a.pid, (unsigned long long)e, fence,
		 (unsigned long long)sb, rev);
	EXPECT_STREQ(want, body(rec));
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 10000,
				    "op=learn", "class=net:connect", pfx, NULL));
	cft_field(rec, "fence", fence, sizeof(fence));
	snprintf(want, sizeof(want),
		 "lsm=capfence op=learn reason=class_denied errno=13 pid=%d comm=\"exe\" epoch=%llu class=net:connect target=127.0.0.1:%u cap_id=0000000000000000 fence=%s sandbox=%llu fleet_rev=%s",
		 a.pid, (unsigned long long)e, port, fence,
		 (unsigned long long)sb, rev);
	EXPECT_STREQ(want, body(rec));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	close(lfd);
}

/*
 * Nothing granted while learning is valid where a policy enforces: a
 * token marked complain for an enforcing epoch, and an unmarked one for a
 * complain epoch, are class_denied (EACCES) at exec and at delegation; a
 * marked one is accepted by its complain epoch.
 */
TEST_F(lrn, complain_tokens_stay_in_complain_epochs)
{
	const char *enf[] = { "fs:read=open", "fs:write=token:" LRN_DIR };
	const char *cmp[] = { "fs:read=open", "fs:write=token:" LRN_DIR,
			      "net:connect=log" };
	struct capfence_token te, tc, tc_marked;
	struct cft_reply r;
	struct cft_agent a;
	uint64_t e, c;

	e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, enf, 2, NULL, 0));
	c = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, c, cmp, 3, NULL, 0));
	ASSERT_EQ(0, cft_mint(self->key, "fs:write", e, LRN_DIR, 0, &te));
	ASSERT_EQ(0, mark_complain(self->key, &te));
	ASSERT_EQ(0, cft_mint(self->key, "fs:write", c, LRN_DIR, 0, &tc));
	tc_marked = tc;
	ASSERT_EQ(0, mark_complain(self->key, &tc_marked));

	/* exec: nothing becomes pending */
	EXPECT_EQ(-EACCES, cft_exec_set(&self->nl, e, &te, 1, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	EXPECT_STREQ(MSG_MARKED, r.ext);
	EXPECT_EQ(-EACCES, cft_exec_set(&self->nl, c, &tc, 1, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	EXPECT_STREQ(MSG_UNMARKED, r.ext);

	/* delegation to a task of the enforcing epoch */
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &te, a.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	EXPECT_STREQ(MSG_MARKED, r.ext);
	/* and it still cannot write */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "open " LRN_FILE " w"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));

	/* delegation to a task of the complain epoch */
	ASSERT_EQ(0, cft_agent_spawn(&a, c, &tc_marked, 1, NULL));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &tc, a.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	EXPECT_STREQ(MSG_UNMARKED, r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "open " LRN_FILE " w"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/*
 * A complain epoch whose log rule narrows an older epoch's open rule
 * fences nothing of it when it is activated (a deny rule there would),
 * and the host's active epoch stays the enforcing one.
 */
TEST_F(lrn, complain_epoch_fences_nothing)
{
	const char *enf[] = { "fs:read=open", "fs:write=open",
			      "net:connect=token:127.0.0.0/8" };
	const char *cmp[] = { "fs:read=open", "fs:write=log",
			      "net:connect=log" };
	struct capfence_epoch_info info;
	struct capfence_status st;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t;
	struct cft_agent a;
	uint64_t e, c;

	e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, enf, 3, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, &t, 1, NULL));
	c = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, c, cmp, 3, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, c));

	ASSERT_EQ(0, capfence_client_epoch_get(self->nl.c, e, &info, err,
					       sizeof(err)));
	EXPECT_EQ(0, info.fenced_at[CAPFENCE_CLASS_FS_WRITE]);
	EXPECT_EQ(0, info.fenced_at[CAPFENCE_CLASS_NET_CONNECT]);
	EXPECT_EQ(0, cft_agent_do(&a, "open " LRN_FILE " w"));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	EXPECT_EQ(e, st.active_epoch);
	ASSERT_EQ(0, capfence_client_epoch_get(self->nl.c, c, &info, err,
					       sizeof(err)));
	EXPECT_TRUE(info.active);
	EXPECT_EQ(CAPFENCE_RULE_LOG, info.e.rules[CAPFENCE_CLASS_FS_WRITE].kind);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

CFT_MAIN
