// SPDX-License-Identifier: GPL-2.0
/*
 * Linearizability under concurrency: a bound agent connects from two
 * threads to ports each guarded by its own capability, while one thread
 * revokes those capabilities one by one and another installs and activates
 * epochs (moving the fence). Invariant: no connect that started after the
 * revoke covering it returned is allowed; and once an activation that
 * narrows net:connect returns, no connect under the old tokens succeeds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

#define NCAPS 400
#define BASE 30000

struct race {
	struct capfence_key *key;
	uint64_t e;
	uint64_t cap_id[NCAPS];
	uint64_t revoked_ns[NCAPS];	/* 0 = not revoked */
	volatile int stop;
	int activations;
	int errors;
};

static void *revoker(void *p)
{
	struct race *rc = p;
	struct cft_reply r;
	struct cft_nl nl;
	int i;

	if (cft_nl_open(&nl)) {
		rc->errors++;
		return NULL;
	}
	usleep(300000);
	for (i = 0; i < NCAPS && !rc->stop; i++) {
		if (cft_revoke(&nl, rc->cap_id[i], &r)) {
			rc->errors++;
			break;
		}
		rc->revoked_ns[i] = cft_now_ns();
		usleep(2000);
	}
	cft_nl_close(&nl);
	return NULL;
}

static void *activator(void *p)
{
	const char *rules[] = { "net:connect=token:127.0.0.1/32:30000-39999",
				"fs:read=open", "fs:write=token:/nowhere" };
	struct race *rc = p;
	struct cft_nl nl;
	uint64_t e;

	if (cft_nl_open(&nl)) {
		rc->errors++;
		return NULL;
	}
	/* epochs that narrow only fs:write: the fence moves, net stays */
	while (!rc->stop) {
		e = cft_next_epoch(&nl);
		if (cft_epoch_install(&nl, e, rules, 3, NULL, 0) ||
		    cft_epoch_activate(&nl, e)) {
			rc->errors++;
			break;
		}
		rc->activations++;
	}
	cft_nl_close(&nl);
	return NULL;
}

TEST(revoke_and_activate_race_exercise)
{
	const char *rules[] = { "net:connect=token:127.0.0.1/32:30000-39999",
				"fs:read=open", "fs:write=open" };
	struct cft_spin_rec rec;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	struct race *rc = calloc(1, sizeof(*rc));
	pthread_t th[2];
	size_t total = 0, allowed = 0, denied = 0, violations = 0;
	char path[64], con[64];
	FILE *f;
	int i;

	ASSERT_NE(NULL, rc);
	ASSERT_EQ(0, cft_open(&nl));
	rc->key = cft_test_key(&nl);
	ASSERT_NE(NULL, rc->key);
	rc->e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, rc->e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, rc->e, NULL, 0, NULL));
	for (i = 0; i < NCAPS; i++) {
		struct capfence_token t;

		snprintf(con, sizeof(con), "127.0.0.1/32:%d", BASE + i);
		ASSERT_EQ(0, cft_mint(rc->key, "net:connect", rc->e, con, 0, &t));
		ASSERT_EQ(0, cft_delegate(&nl, &t, a.pid, 0, false, &r));
		rc->cap_id[i] = t.cap_id;
	}
	pthread_create(&th[0], NULL, revoker, rc);
	pthread_create(&th[1], NULL, activator, rc);
	/* 4 s is enough for a few hundred connects on the stock kernels;
	 * a slower kernel gets the time of its timeout scale */
	ASSERT_EQ(0, cft_agent_do(&a, "spin %u %d %d", cft_secs(4), BASE, NCAPS));
	rc->stop = 1;
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	EXPECT_EQ(0, rc->errors);

	snprintf(path, sizeof(path), "/tmp/spin.%d", a.pid);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fread(&rec, sizeof(rec), 1, f) == 1) {
		uint64_t rv = rec.port >= BASE && rec.port < BASE + NCAPS ?
			      rc->revoked_ns[rec.port - BASE] : 0;

		total++;
		if (rec.allowed)
			allowed++;
		else
			denied++;
		if (rec.allowed && rv && rec.start_ns > rv)
			violations++;
	}
	fclose(f);
	unlink(path);
	TH_LOG("%zu connects (%zu allowed, %zu denied), %d activations",
	       total, allowed, denied, rc->activations);
	EXPECT_EQ(0, violations);
	/* the race really happened: both outcomes, many fence moves */
	EXPECT_LT(100, total);	/* a few hundred, the debug kernel's too */
	EXPECT_LT(0, allowed);
	EXPECT_LT(0, denied);
	EXPECT_LT(5, rc->activations);

	/* after the last revoke returned, nothing is allowed any more */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 %d", BASE));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_key_free(rc->key);
	free(rc);
	cft_nl_close(&nl);
}

CFT_MAIN
