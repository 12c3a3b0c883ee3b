// SPDX-License-Identifier: GPL-2.0
/*
 * Delegation: every row of the delegation table of docs/errors.md (target, MAC, epoch,
 * class, revoked or fenced, delegator), in order, through the
 * real module: errno, reason attribute, extack text, counters, and the
 * audit record of forged and cross-epoch rejections.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

FIXTURE(deleg) {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e;
	struct cft_agent agent;
};

FIXTURE_SETUP(deleg)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8",
				"net:bind=open", "fs:read=open",
				"fs:write=open" };
	char ext[256];

	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->e, rules, 4, ext,
				       sizeof(ext))) TH_LOG("%s", ext);
	ASSERT_EQ(0, cft_agent_spawn(&self->agent, self->e, NULL, 0, NULL));
}

FIXTURE_TEARDOWN(deleg)
{
	/* no sandboxed task may be ended by a signal */
	EXPECT_TRUE(cft_agent_stop_clean(&self->agent));
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

TEST_F(deleg, accepted)
{
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32:80", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, self->agent.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_OK, r.reason);
	EXPECT_EQ(t.cap_id, r.cap_id);
	EXPECT_EQ(self->e, r.epoch_id);
}

TEST_F(deleg, target_no_such_task)
{
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, NULL, 0, &t));
	EXPECT_EQ(-ESRCH, cft_delegate(&self->nl, &t, 999999, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_NO_TASK, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "no_task"));
}

TEST_F(deleg, target_not_bound)
{
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32", 0, &t));
	EXPECT_EQ(-EINVAL, cft_delegate(&self->nl, &t, getpid(), 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_NOT_BOUND, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "not_bound"));
}

TEST_F(deleg, forged_mac_does_not_verify)
{
	uint8_t buf[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_status before, after;
	struct cft_reply r;
	struct capfence_token t;
	char rec[1024];
	int fd, len;

	fd = cft_audit_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32", 0, &t));
	len = capfence_token_encode_bin(&t, buf, sizeof(buf));
	ASSERT_LT(0, len);
	buf[len - 1] ^= 1;	/* last MAC byte */
	ASSERT_EQ(0, cft_nl_status(&self->nl, &before));
	EXPECT_EQ(-EBADMSG, cft_delegate_raw(&self->nl, buf, (size_t)len,
					     self->agent.pid, &r));
	EXPECT_EQ(CAPFENCE_R_FORGED, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "MAC does not verify"));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &after));
	EXPECT_EQ(before.delegate_reject[CAPFENCE_R_FORGED] + 1,
		  after.delegate_reject[CAPFENCE_R_FORGED]);
	ASSERT_EQ(0, cft_audit_wait(fd, rec, sizeof(rec), 5000,
				    "op=delegate", "reason=forged", NULL));
	EXPECT_NE(NULL, strstr(rec, "errno=74"));
	cft_audit_close(fd);
}

TEST_F(deleg, forged_key_not_installed)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct capfence_key *other;
	struct cft_reply r;
	struct capfence_token t;

	memset(raw, 0x11, sizeof(raw));
	ASSERT_EQ(0, capfence_key_from_bytes(4242, raw, &other));
	ASSERT_EQ(0, cft_mint(other, "net:connect", self->e, NULL, 0, &t));
	EXPECT_EQ(-EBADMSG, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					 false, &r));
	EXPECT_EQ(CAPFENCE_R_FORGED, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "not installed"));
	capfence_key_free(other);
}

TEST_F(deleg, forged_wins_over_epoch_mismatch)
{
	uint8_t buf[CAPFENCE_TOKEN_MAX_LEN];
	struct cft_reply r;
	struct capfence_token t;
	int len;

	/* wrong epoch AND wrong MAC: forgery wins, never epoch_mismatch */
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e + 1000,
			      NULL, 0, &t));
	len = capfence_token_encode_bin(&t, buf, sizeof(buf));
	buf[len - 5] ^= 0x80;
	EXPECT_EQ(-EBADMSG, cft_delegate_raw(&self->nl, buf, (size_t)len,
					     self->agent.pid, &r));
	EXPECT_EQ(CAPFENCE_R_FORGED, r.reason);
}

TEST_F(deleg, token_of_another_epoch_is_epoch_mismatch)
{
	struct cft_reply r;
	struct capfence_token t;
	char rec[1024], want[64];
	int fd = cft_audit_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e - 1,
			      "127.0.0.1/32", 0, &t));
	EXPECT_EQ(-ESTALE, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_EPOCH_MISMATCH, r.reason);
	EXPECT_EQ(self->e, r.epoch_id);
	EXPECT_NE(NULL, strstr(r.ext, "re-mint required"));
	snprintf(want, sizeof(want), "token_epoch=%llu",
		 (unsigned long long)(self->e - 1));
	ASSERT_EQ(0, cft_audit_wait(fd, rec, sizeof(rec), 5000,
				    "op=delegate", "reason=epoch_mismatch",
				    want, "class=net:connect", NULL));
	EXPECT_NE(NULL, strstr(rec, "errno=116"));
	/* pid and comm are the delegating caller's, target_pid the receiver */
	snprintf(want, sizeof(want), " pid=%d ", getpid());
	EXPECT_NE(NULL, strstr(rec, want));
	snprintf(want, sizeof(want), " target_pid=%d ", self->agent.pid);
	EXPECT_NE(NULL, strstr(rec, want));
	/* every record ends with the host's fleet revision */
	EXPECT_NE(NULL, strstr(rec, " fleet_rev="));
	cft_audit_close(fd);
}

TEST_F(deleg, class_denied_by_the_receivers_rule)
{
	struct cft_reply r;
	struct capfence_token t;

	/* fs:write is open in this epoch: nothing to delegate */
	ASSERT_EQ(0, cft_mint(self->key, "fs:write", self->e, "/tmp", 0, &t));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	/* net:bind is open too; fs classes omitted would be deny */
	ASSERT_EQ(0, cft_mint(self->key, "net:bind", self->e, NULL, 0, &t));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
}

TEST_F(deleg, class_denied_constraint_outside_rule)
{
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "10.0.0.0/8",
			      0, &t));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "not inside"));
	/* an unconstrained token never fits a constrained rule */
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, NULL, 0, &t));
	EXPECT_EQ(-EACCES, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
}

TEST_F(deleg, revoked_capability_refused)
{
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32", 0, &t));
	ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	EXPECT_LT(0ULL, (unsigned long long)r.fence);
	EXPECT_EQ(-EKEYREVOKED, cft_delegate(&self->nl, &t, self->agent.pid,
					     0, false, &r));
	EXPECT_EQ(CAPFENCE_R_REVOKED, r.reason);
}

TEST_F(deleg, fenced_capability_refused)
{
	const char *narrow[] = { "net:connect=token:127.0.0.1/32",
				 "fs:read=open", "fs:write=open" };
	struct cft_agent b;
	struct cft_reply r;
	struct capfence_token t;
	uint64_t e2 = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.2/32", 0, &t));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, narrow, 3, NULL, 0));
	/* binding the first task to e2 activates it: e's net:connect fenced */
	ASSERT_EQ(0, cft_agent_spawn(&b, e2, NULL, 0, NULL));
	EXPECT_EQ(-EKEYEXPIRED, cft_delegate(&self->nl, &t, self->agent.pid,
					     0, false, &r));
	EXPECT_EQ(CAPFENCE_R_FENCED, r.reason);
	EXPECT_NE(NULL, strstr(r.ext, "fenced"));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

TEST_F(deleg, delegator_not_holding_it_refused)
{
	struct cft_agent b;
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32", 0, &t));
	ASSERT_EQ(0, cft_agent_spawn(&b, self->e, NULL, 0, NULL));
	/* the agent does not hold t: it cannot be the delegator */
	EXPECT_EQ(-ENOKEY, cft_delegate(&self->nl, &t, b.pid, self->agent.pid,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_NOT_HELD, r.reason);
	/* once it holds it, it can */
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, self->agent.pid, 0, false, &r));
	EXPECT_EQ(0, cft_delegate(&self->nl, &t, b.pid, self->agent.pid, false,
				  &r));
	EXPECT_EQ(CAPFENCE_R_OK, r.reason);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

TEST_F(deleg, dry_run_installs_nothing)
{
	uint16_t port;
	int srv = cft_listen(&port);
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      "127.0.0.1/32", 0, &t));
	EXPECT_EQ(0, cft_delegate(&self->nl, &t, self->agent.pid, 0, true, &r));
	EXPECT_EQ(CAPFENCE_R_OK, r.reason);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       port));
	close(srv);
}

/*
 * A task holds at most 512 capabilities (docs/errors.md): the next
 * delegation of another one is refused with E2BIG, delegating one it holds
 * again still succeeds, and TASK_GET, sized from the holdings, answers for
 * the task with its 512 capabilities (about 50 KiB: more than the fixed
 * 4-page reply it had took, less than the 64 KiB a client reads).
 */
#define HELD_MAX 512
TEST_F(deleg, held_limit_is_e2big)
{
	const char *con = "127.0.0.1/32:80";
	struct capfence_token t, first;
	struct cft_reply r;
	uint64_t epoch = 0;
	int i;

	for (i = 0; i < HELD_MAX; i++) {
		ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, con, 0,
				      &t));
		ASSERT_EQ(0, cft_delegate(&self->nl, &t, self->agent.pid, 0,
					  false, &r)) TH_LOG("%d: %s", i, r.ext);
		if (!i)
			first = t;
	}
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, con, 0, &t));
	EXPECT_EQ(-E2BIG, cft_delegate(&self->nl, &t, self->agent.pid, 0, false,
				       &r));
	EXPECT_NE(NULL, strstr(r.ext, "most capabilities")) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_delegate(&self->nl, &first, self->agent.pid, 0, false,
				  &r));
	EXPECT_EQ(CAPFENCE_R_OK, r.reason);
	EXPECT_EQ(0, cft_task_epoch(&self->nl, self->agent.pid, &epoch));
	EXPECT_EQ(self->e, epoch);
}

CFT_MAIN
