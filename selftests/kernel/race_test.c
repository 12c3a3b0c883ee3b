// SPDX-License-Identifier: GPL-2.0
/*
 * Linearizability under concurrency: a bound agent connects from two
 * threads to ports each guarded by its own capability, while one thread
 * revokes those capabilities one by one and another installs and activates
 * epochs (moving the fence). Invariant: no connect that started after the
 * revoke covering it returned is allowed; and once an activation that
 * narrows net:connect returns, no connect under the old tokens succeeds.
 * And every TASK_GET reply raced by revocations is one fence snapshot.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/genetlink.h>
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

/*
 * One snapshot per answer: TASK_GET names the fence its reply was read at,
 * and lists every capability's state at that fence. Revocations race the
 * queries; afterwards each reply is held against the fence each revoke
 * returned: a capability revoked at a fence <= the reply's shows revoked,
 * one revoked after it shows valid.
 */
#define SNAP_CAPS 150
#define SNAP_REPLIES 4000

struct snap_race {
	uint64_t cap_id[SNAP_CAPS];
	uint64_t fence[SNAP_CAPS];	/* the revoke's, 0 = not revoked */
	volatile int done;
	int errors;
};

struct snap_reply {
	uint64_t fence;
	int n, bad;
	uint8_t revoked[SNAP_CAPS];
};

static const struct snap_race *snap_rc;

static void *snap_revoker(void *p)
{
	struct snap_race *rc = p;
	struct cft_reply r;
	struct cft_nl nl;
	int i;

	if (cft_nl_open(&nl)) {
		rc->errors++;
		rc->done = 1;
		return NULL;
	}
	for (i = 0; i < SNAP_CAPS; i++) {
		if (cft_revoke(&nl, rc->cap_id[i], &r)) {
			rc->errors++;
			break;
		}
		rc->fence[i] = r.fence;
		usleep(500);
	}
	rc->done = 1;
	cft_nl_close(&nl);
	return NULL;
}

static int snap_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *a, *m;
	struct snap_reply *sr = data;

	if (cft_nl_parse(nlh, tb) || !tb[CAPFENCE_A_FENCE])
		return MNL_CB_ERROR;
	sr->fence = mnl_attr_get_u64(tb[CAPFENCE_A_FENCE]);
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != CAPFENCE_A_CAPS)
			continue;
		mnl_attr_for_each_nested(m, a) {
			const struct nlattr *c[CAPFENCE_CAP_A_MAX + 1];
			uint64_t id;
			uint32_t st;
			int i;

			if (cft_nl_parse_nested(m, c, &cf_attrs_cap))
				return MNL_CB_ERROR;
			id = mnl_attr_get_u64(c[CAPFENCE_CAP_A_CAP_ID]);
			st = mnl_attr_get_u32(c[CAPFENCE_CAP_A_STATE]);
			for (i = 0; i < SNAP_CAPS && snap_rc->cap_id[i] != id; i++)
				;
			if (i == SNAP_CAPS ||
			    (st != 0 && st != CAPFENCE_R_REVOKED)) {
				sr->bad++;
				continue;
			}
			sr->revoked[i] = st == CAPFENCE_R_REVOKED;
			sr->n++;
		}
	}
	return MNL_CB_OK;
}

TEST(task_get_is_one_snapshot_under_revokes)
{
	const char *rules[] = { "net:connect=token:127.0.0.1/32:30000-39999",
				"fs:read=open", "fs:write=open" };
	struct snap_race *rc = calloc(1, sizeof(*rc));
	struct snap_reply *rep = calloc(SNAP_REPLIES, sizeof(*rep));
	size_t nrep = 0, k, mixed = 0, wrong = 0;
	struct capfence_key *key;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	pthread_t th;
	char con[64];
	uint64_t e;
	int i;

	ASSERT_NE(NULL, rc);
	ASSERT_NE(NULL, rep);
	snap_rc = rc;
	ASSERT_EQ(0, cft_open(&nl));
	key = cft_test_key(&nl);
	ASSERT_NE(NULL, key);
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	for (i = 0; i < SNAP_CAPS; i++) {
		struct capfence_token t;

		snprintf(con, sizeof(con), "127.0.0.1/32:%d", BASE + i);
		ASSERT_EQ(0, cft_mint(key, "net:connect", e, con, 0, &t));
		ASSERT_EQ(0, cft_delegate(&nl, &t, a.pid, 0, false, &r));
		rc->cap_id[i] = t.cap_id;
	}
	pthread_create(&th, NULL, snap_revoker, rc);
	while (!rc->done && nrep < SNAP_REPLIES) {
		struct nlmsghdr *nlh = cft_nl_req(&nl, CAPFENCE_CMD_TASK_GET, 0);

		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)a.pid);
		if (cft_nl_talk(&nl, nlh, snap_cb, &rep[nrep])) {
			rc->errors++;
			break;
		}
		nrep++;
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, rc->errors);

	for (k = 0; k < nrep; k++) {
		int nrev = 0, off = 0;

		EXPECT_EQ(SNAP_CAPS, rep[k].n);
		EXPECT_EQ(0, rep[k].bad);
		for (i = 0; i < SNAP_CAPS; i++) {
			bool want = rc->fence[i] && rc->fence[i] <= rep[k].fence;

			nrev += rep[k].revoked[i];
			if (rep[k].revoked[i] != want) {
				if (!off++)
					TH_LOG("reply %zu at fence %llu: cap %d revoked at %llu shows %s",
					       k, (unsigned long long)rep[k].fence, i,
					       (unsigned long long)rc->fence[i],
					       rep[k].revoked[i] ? "revoked" : "valid");
				wrong++;
			}
		}
		mixed += nrev > 0 && nrev < SNAP_CAPS;
	}
	TH_LOG("%zu replies, %zu while revocations were under way, %zu capabilities shown at another fence",
	       nrep, mixed, wrong);
	EXPECT_EQ(0, wrong);
	/* the race happened: replies read while revocations went on */
	EXPECT_LT(10, mixed);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_key_free(key);
	free(rep);
	free(rc);
	cft_nl_close(&nl);
}

CFT_MAIN
