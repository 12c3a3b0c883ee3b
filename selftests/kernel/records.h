/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The denial record check shared by the mediation tests; include after
 * kselftest_harness.h.
 */
#ifndef CFT_RECORDS_H
#define CFT_RECORDS_H

#include <stdio.h>
#include "common.h"

/*
 * The denial record of @pid under @epoch: found by reason, class and target
 * (so earlier records of the same test are skipped), then checked field by
 * field. @target is a path (quoted in the record) or, when it does not
 * start with '/', the name of a refused operation.
 */
static inline void cft_check_denial(struct __test_metadata *_metadata,
				    int audit, pid_t pid, uint64_t epoch,
				    const char *reason, const char *class_name,
				    const char *target, uint64_t cap_id)
{
	char rec[2048], v[512], want_r[64], want_c[64], want_t[320], want[300];
	char want_p[32];

	snprintf(want_r, sizeof(want_r), "reason=%s", reason);
	snprintf(want_c, sizeof(want_c), "class=%s", class_name);
	if (target[0] == '/')
		snprintf(want, sizeof(want), "\"%s\"", target);
	else
		snprintf(want, sizeof(want), "%s", target);
	snprintf(want_t, sizeof(want_t), "target=%s", want);
	snprintf(want_p, sizeof(want_p), "pid=%d ", pid);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000,
				    "op=exercise", want_r, want_c, want_t,
				    want_p, NULL))
		TH_LOG("no record %s %s %s %s", want_r, want_c, want_t, want_p);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ(reason, cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want_r, sizeof(want_r), "%d", pid);
	EXPECT_STREQ(want_r, cft_field(rec, "pid", v, sizeof(v)));
	/* the agent, or the io_uring worker thread it made (async requests) */
	snprintf(want_r, sizeof(want_r), "\"iou-wrk-%d\"", pid);
	cft_field(rec, "comm", v, sizeof(v));
	if (strcmp(v, want_r))
		EXPECT_STREQ("\"exe\"", v);
	snprintf(want_r, sizeof(want_r), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want_r, cft_field(rec, "epoch", v, sizeof(v)));
	EXPECT_STREQ(class_name, cft_field(rec, "class", v, sizeof(v)));
	EXPECT_STREQ(want, cft_field(rec, "target", v, sizeof(v)));
	snprintf(want_r, sizeof(want_r), "%016llx", (unsigned long long)cap_id);
	EXPECT_STREQ(want_r, cft_field(rec, "cap_id", v, sizeof(v)));
}

/*
 * Denial records are budgeted per sandbox (100 per 5 s): after a storm of
 * denials of the same agent, wait until its records are written again. @cmd makes @agent
 * be denied with a record containing @needle; true once one arrived
 * (within 8 s).
 */
static inline bool cft_audit_settle(int audit, struct cft_agent *agent,
				    const char *cmd, const char *needle)
{
	char rec[2048];
	int i;

	for (i = 0; i < 8; i++) {
		if (cft_agent_do(agent, "%s", cmd) != EACCES)
			return false;
		if (!cft_audit_wait(audit, rec, sizeof(rec), 1000, needle, NULL))
			return true;
	}
	return false;
}

#endif
