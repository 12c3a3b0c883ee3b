// SPDX-License-Identifier: GPL-2.0
/*
 * The seed scenario (the one `make demo` plays), end to end through the public
 * interface: epoch 41 grants net:connect to a CIDR by token, epoch 42
 * narrows it to loopback; a parent under 41 holds a 41 token; a child is
 * spawned under 42; re-delegation is rejected as epoch_mismatch; a re-mint
 * under 42 is accepted only within loopback; the parent's 41 token is
 * fenced. Every failure is EACCES with an audit record, never a signal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

TEST(seed_scenario)
{
	const char *e41_rules[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8",
				    "fs:read=open" };
	const char *e42_rules[] = { "net:connect=token:127.0.0.0/8",
				    "fs:read=open" };
	struct cft_agent parent, child;
	struct capfence_token t41, t42;
	struct cft_reply r;
	struct capfence_key *key;
	struct cft_nl nl;
	uint64_t e41, e42;
	char rec[2048], v[64], want[64];
	uint16_t port;
	int srv, audit;

	ASSERT_EQ(0, cft_open(&nl));
	key = cft_test_key(&nl);
	ASSERT_NE(NULL, key);
	srv = cft_listen(&port);
	ASSERT_LE(0, srv);
	audit = cft_audit_open();
	ASSERT_LE(0, audit);
	/* epochs 41 and 42 of the seed, shifted above what is installed */
	e41 = cft_next_epoch(&nl);
	e42 = e41 + 1;
	ASSERT_EQ(0, cft_epoch_install(&nl, e41, e41_rules, 2, NULL, 0));

	/* the parent agent runs under 41 holding a 41-minted token */
	ASSERT_EQ(0, cft_mint(key, "net:connect", e41, "10.0.0.0/8,127.0.0.0/8",
			      0, &t41));
	ASSERT_EQ(0, cft_agent_spawn(&parent, e41, &t41, 1, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&parent, "connect 127.0.0.1 %u", port));
	EXPECT_EQ(0, cft_agent_do(&parent, "connect 10.1.2.3 80"));

	/* the policy rolls to 42; a child is spawned under 42 */
	ASSERT_EQ(0, cft_epoch_install(&nl, e42, e42_rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&child, e42, NULL, 0, NULL));

	/* re-delegating the parent's token: rejected at delegation, typed */
	EXPECT_EQ(-ESTALE, cft_delegate(&nl, &t41, child.pid, parent.pid,
					false, &r));
	EXPECT_EQ(CAPFENCE_R_EPOCH_MISMATCH, r.reason);
	EXPECT_EQ(e42, r.epoch_id);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000,
				    "op=delegate", "reason=epoch_mismatch", NULL));

	/* re-minting the same grant under 42: only loopback fits */
	ASSERT_EQ(0, cft_mint(key, "net:connect", e42, "10.0.0.0/8,127.0.0.0/8",
			      0, &t42));
	EXPECT_EQ(-EACCES, cft_delegate(&nl, &t42, child.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_CLASS_DENIED, r.reason);
	ASSERT_EQ(0, cft_mint(key, "net:connect", e42, "127.0.0.0/8", 0, &t42));
	EXPECT_EQ(0, cft_delegate(&nl, &t42, child.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_OK, r.reason);

	/* the child: loopback succeeds, the old CIDR is EACCES + audit */
	EXPECT_EQ(0, cft_agent_do(&child, "connect 127.0.0.1 %u", port));
	EXPECT_EQ(EACCES, cft_agent_do(&child, "connect 10.1.2.3 80"));
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=constraint",
				    "target=10.1.2.3:80", NULL));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)e42);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));

	/* the parent's 41 token is fenced: EACCES, tagged, not SIGSYS */
	EXPECT_EQ(EACCES, cft_agent_do(&parent, "connect 127.0.0.1 %u", port));
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=fenced", NULL));
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)t41.cap_id);
	EXPECT_STREQ(want, cft_field(rec, "cap_id", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)e41);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	/* and it is still alive and answering */
	EXPECT_EQ(parent.pid, cft_agent_do(&parent, "pid"));

	EXPECT_TRUE(cft_agent_stop_clean(&child));
	EXPECT_TRUE(cft_agent_stop_clean(&parent));
	cft_audit_close(audit);
	close(srv);
	capfence_key_free(key);
	cft_nl_close(&nl);
}

CFT_MAIN
