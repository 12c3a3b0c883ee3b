// SPDX-License-Identifier: GPL-2.0
/*
 * Exercise at the LSM hooks: every denial is EACCES with an audit record
 * whose fields are checked one by one; unbound tasks are untouched; fork
 * and exec keep the epoch and the held capabilities; no sandboxed task is
 * ever ended by a signal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"
#include "records.h"

/*
 * More files than the module's table of tracked files has slots (2048
 * buckets of 4): some are remembered in its overflow table, and every one
 * must be rechecked after a revoke.
 */
#define MANY_FILES	8400

static int many_fd[MANY_FILES];
static int many_n;

/* agent side: "many-hold DIR N" opens N files for writing, "many-write"
 * writes to each: 0 if every write worked, EACCES if every one was
 * refused with EACCES, EIO for a mix. */
int cft_agent_extra(char *cmd)
{
	struct rlimit rl = { MANY_FILES + 64, MANY_FILES + 64 };
	char dir[128], path[192];
	int i, n, ok = 0, denied = 0;

	if (sscanf(cmd, "many-hold %127s %d", dir, &n) == 2) {
		if (n > MANY_FILES || setrlimit(RLIMIT_NOFILE, &rl))
			return EINVAL;
		for (many_n = 0; many_n < n; many_n++) {
			snprintf(path, sizeof(path), "%s/f%d", dir, many_n);
			many_fd[many_n] = open(path, O_WRONLY | O_CREAT, 0600);
			if (many_fd[many_n] < 0)
				return errno;
		}
		return 0;
	}
	if (!strcmp(cmd, "many-write")) {
		for (i = 0; i < many_n; i++) {
			if (write(many_fd[i], "x", 1) == 1)
				ok++;
			else if (errno == EACCES)
				denied++;
		}
		return ok == many_n ? 0 : denied == many_n ? EACCES : EIO;
	}
	return EINVAL;
}

FIXTURE(ex) {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e;
	struct cft_agent agent;
	int srv;
	uint16_t port;
	int audit;
};

FIXTURE_SETUP(ex)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8,[::1]/128",
				"net:bind=token:127.0.0.1/32:20000-20999",
				"fs:read=open", "fs:write=token:/tmp/cft" };

	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->e, rules, 4, NULL, 0));
	self->srv = cft_listen(&self->port);
	ASSERT_LE(0, self->srv);
	mkdir("/tmp/cft", 0755);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	ASSERT_EQ(0, cft_agent_spawn(&self->agent, self->e, NULL, 0, NULL));
}

FIXTURE_TEARDOWN(ex)
{
	EXPECT_TRUE(cft_agent_stop_clean(&self->agent));
	cft_audit_close(self->audit);
	close(self->srv);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static void give(struct __test_metadata *_metadata, FIXTURE_DATA(ex) *self,
		 const char *class_name, const char *constraint,
		 struct capfence_token *t)
{
	struct cft_reply r;

	ASSERT_EQ(0, cft_mint(self->key, class_name, self->e, constraint, 0, t));
	ASSERT_EQ(0, cft_delegate(&self->nl, t, self->agent.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
}

/* Check every field of the denial record. */
static void check_record(struct __test_metadata *_metadata,
			 FIXTURE_DATA(ex) *self, const char *reason,
			 const char *class_name, const char *target,
			 uint64_t cap_id)
{
	char rec[2048], v[256], want[64], pid[32];

	snprintf(want, sizeof(want), "reason=%s", reason);
	/*
	 * this agent's record: the records of an earlier test's storm
	 * (many_open_files_revalidated_after_revoke) can still be coming
	 * in on a slow kernel, after its settle record
	 */
	snprintf(pid, sizeof(pid), " pid=%d ", self->agent.pid);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", want, pid, NULL));
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ("exercise", cft_field(rec, "op", v, sizeof(v)));
	EXPECT_STREQ(reason, cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want, sizeof(want), "%d", self->agent.pid);
	EXPECT_STREQ(want, cft_field(rec, "pid", v, sizeof(v)));
	/* agents are exec'd through /proc/self/exe */
	EXPECT_STREQ("\"exe\"", cft_field(rec, "comm", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)self->e);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	EXPECT_STREQ(class_name, cft_field(rec, "class", v, sizeof(v)));
	EXPECT_STREQ(target, cft_field(rec, "target", v, sizeof(v)));
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)cap_id);
	EXPECT_STREQ(want, cft_field(rec, "cap_id", v, sizeof(v)));
	EXPECT_NE(0, strlen(cft_field(rec, "fence", v, sizeof(v))));
}

TEST_F(ex, unbound_task_is_not_mediated)
{
	struct capfence_status a, b;
	struct cft_agent u;
	int r;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &a));
	/* an unbound task needs no token, and no decision is even counted */
	ASSERT_EQ(0, cft_agent_spawn(&u, 0, NULL, 0, NULL));
	EXPECT_EQ(0, cft_agent_do(&u, "connect 127.0.0.1 %u", self->port));
	EXPECT_EQ(0, cft_agent_do(&u, "connect 127.0.0.2 %u", self->port));
	EXPECT_EQ(0, cft_agent_do(&u, "open /tmp/cft-unbound w"));
	EXPECT_TRUE(cft_agent_stop_clean(&u));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_EQ(a.exercise_allow, b.exercise_allow);
	for (r = 0; r < __CAPFENCE_R_MAX; r++)
		EXPECT_EQ(a.exercise_deny[r], b.exercise_deny[r]) TH_LOG("%s",
			  capfence_reason_name(r));
}

TEST_F(ex, class_denied)
{
	/* an epoch without a net:connect rule denies the class outright */
	const char *rules[] = { "fs:read=open" };
	struct cft_agent b;
	pid_t mine;
	uint64_t e2 = cft_next_epoch(&self->nl);
	char target[64];

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&b, e2, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "connect 127.0.0.1 %u", self->port));
	/* the record names b and its epoch */
	mine = self->agent.pid;
	self->agent.pid = b.pid;
	self->e = e2;
	snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
	check_record(_metadata, self, "class_denied", "net:connect", target, 0);
	self->agent.pid = mine;
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

TEST_F(ex, no_capability)
{
	char target[64];

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
	check_record(_metadata, self, "no_capability", "net:connect", target, 0);
}

TEST_F(ex, allowed_with_capability)
{
	struct capfence_token t;

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	/* an IPv4-mapped IPv6 destination is judged as the IPv4 host */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect ::ffff:127.0.0.1 %u",
				  self->port));
}

TEST_F(ex, constraint)
{
	struct capfence_token t;

	give(_metadata, self, "net:connect", "127.0.0.1/32:1-1000", &t);
	/* inside the rule, outside the capability's ports */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	{
		char target[64];

		snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
		/* the held capability that came closest is named */
		check_record(_metadata, self, "constraint", "net:connect",
			     target, t.cap_id);
	}
	/* outside the epoch's rule altogether */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 10.9.9.9 80"));
	/* outside the rule itself: no capability is involved */
	check_record(_metadata, self, "constraint", "net:connect",
		     "10.9.9.9:80", 0);
}

TEST_F(ex, revoked)
{
	struct cft_reply r;
	struct capfence_token t;
	char target[64];

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
	check_record(_metadata, self, "revoked", "net:connect", target,
		     t.cap_id);
}

TEST_F(ex, fenced_by_narrowing)
{
	const char *narrow[] = { "net:connect=token:127.0.0.2/32",
				 "fs:read=open" };
	uint64_t e2 = cft_next_epoch(&self->nl);
	struct cft_agent b;
	struct capfence_token t;
	char target[64];

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, narrow, 2, NULL, 0));
	/* installing alone changes nothing */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	ASSERT_EQ(0, cft_agent_spawn(&b, e2, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
	check_record(_metadata, self, "fenced", "net:connect", target, t.cap_id);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/* The same through `epoch activate`, with nothing bound to the new epoch. */
TEST_F(ex, fenced_by_explicit_activation)
{
	const char *narrow[] = { "net:connect=token:127.0.0.2/32",
				 "fs:read=open" };
	const char *fs_only[] = { "net:connect=token:127.0.0.0/8,[::1]/128",
				  "fs:read=open", "fs:write=token:/tmp/cft/x" };
	uint64_t e2 = cft_next_epoch(&self->nl), e3;
	struct capfence_token t;
	char target[64];

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	/* an epoch that narrows only fs:write leaves net:connect alone */
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, fs_only, 3, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e2));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	e3 = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e3, narrow, 2, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e3));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				       self->port));
	snprintf(target, sizeof(target), "127.0.0.1:%u", self->port);
	check_record(_metadata, self, "fenced", "net:connect", target, t.cap_id);
}

/* IPv6 targets are judged and named like IPv4 ones. */
TEST_F(ex, ipv6_connect)
{
	struct capfence_token t;
	char target[64];

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect ::1 %u",
				       self->port));
	snprintf(target, sizeof(target), "[::1]:%u", self->port);
	check_record(_metadata, self, "no_capability", "net:connect", target, 0);
	give(_metadata, self, "net:connect", "[::1]/128", &t);
	/* allowed; nothing need listen there: anything but EACCES */
	EXPECT_NE(EACCES, cft_agent_do(&self->agent, "connect ::1 %u",
				       self->port));
	/* ::2 is outside both the rule and the capability */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect ::2 %u",
				       self->port));
	snprintf(target, sizeof(target), "[::2]:%u", self->port);
	check_record(_metadata, self, "constraint", "net:connect", target, 0);
}

TEST_F(ex, bind)
{
	struct capfence_token t;

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "bind 127.0.0.1 20001"));
	check_record(_metadata, self, "no_capability", "net:bind",
		     "127.0.0.1:20001", 0);
	give(_metadata, self, "net:bind", "127.0.0.1/32:20001", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "bind 127.0.0.1 20001"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "bind 127.0.0.1 20002"));
}

TEST_F(ex, fs_write)
{
	struct capfence_token t;

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "open /tmp/cft/a w"));
	check_record(_metadata, self, "no_capability", "fs:write",
		     "\"/tmp/cft/a\"", 0);
	give(_metadata, self, "fs:write", "/tmp/cft", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "open /tmp/cft/a w"));
	/* prefixes match on component boundaries only */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "open /tmp/cftx w"));
	/* outside the rule's /tmp/cft as well: no capability involved */
	check_record(_metadata, self, "constraint", "fs:write",
		     "\"/tmp/cftx\"", 0);
	/* reading is open in this epoch */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "open /tmp/cft/a r"));
}

TEST_F(ex, open_file_revalidated_after_revoke)
{
	struct cft_reply r;
	struct capfence_token t;

	give(_metadata, self, "fs:write", "/tmp/cft", &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "hold /tmp/cft/held"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "write"));
	ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	/* the file was opened before the revoke: its next write is refused */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "write"));
	check_record(_metadata, self, "revoked", "fs:write",
		     "\"/tmp/cft/held\"", t.cap_id);
}

TEST_F(ex, open_file_revalidated_after_fence)
{
	const char *narrow[] = { "fs:read=open", "fs:write=token:/tmp/cft/x" };
	uint64_t e2 = cft_next_epoch(&self->nl);
	struct cft_agent b;
	struct capfence_token t;

	give(_metadata, self, "fs:write", "/tmp/cft", &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "hold /tmp/cft/held2"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "write"));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, narrow, 2, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&b, e2, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "write"));
	check_record(_metadata, self, "fenced", "fs:write",
		     "\"/tmp/cft/held2\"", t.cap_id);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/* Every tracked file is rechecked, also those beyond the table's slots. */
TEST_F_TIMEOUT(ex, many_open_files_revalidated_after_revoke, 300)
{
	struct cft_reply r;
	struct capfence_token t;

	mkdir("/tmp/cft/many", 0755);
	give(_metadata, self, "fs:write", "/tmp/cft", &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "many-hold /tmp/cft/many %d",
				  MANY_FILES));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "many-write"));
	ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "many-write"));
	check_record(_metadata, self, "revoked", "fs:write",
		     "\"/tmp/cft/many/f0\"", t.cap_id);
	/* the storm used up the sandbox's audit budget: wait for a new one */
	EXPECT_TRUE(cft_audit_settle(self->audit, &self->agent,
				     "open /tmp/cftsettle w", "cftsettle"));
	ASSERT_EQ(0, system("rm -rf /tmp/cft/many"));
}

/*
 * A file opened for reading and writing under two capabilities: each read
 * is checked against the fs:read grant and each write against the fs:write
 * grant, so revoking one refuses only its own kind of access.
 */
TEST_F(ex, read_write_file_rechecks_each_grant)
{
	/* reading needs a capability everywhere: the agent's exec reads too */
	const char *rules[] = { "fs:read=token", "fs:write=token:/tmp/cft" };
	uint64_t e2 = cft_next_epoch(&self->nl);
	struct capfence_token rt, wt;
	struct cft_agent b;
	struct cft_reply r;
	pid_t mine;

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_mint(self->key, "fs:read", e2, "/", 0, &rt));
	ASSERT_EQ(0, cft_mint(self->key, "fs:write", e2, "/tmp/cft", 0, &wt));
	ASSERT_EQ(0, cft_agent_spawn(&b, e2, &rt, 1, NULL));
	/* without the write capability a read-write open is refused */
	EXPECT_EQ(EACCES, cft_agent_do(&b, "hold /tmp/cft/rw rw"));
	ASSERT_EQ(0, cft_delegate(&self->nl, &wt, b.pid, 0, false, &r));
	ASSERT_EQ(0, cft_agent_do(&b, "hold /tmp/cft/rw rw"));
	EXPECT_EQ(0, cft_agent_do(&b, "write"));
	EXPECT_EQ(0, cft_agent_do(&b, "read"));
	ASSERT_EQ(0, cft_revoke(&self->nl, rt.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "read"));
	EXPECT_EQ(0, cft_agent_do(&b, "write"));
	/* the record names b, its epoch and the read capability */
	mine = self->agent.pid;
	self->agent.pid = b.pid;
	self->e = e2;
	check_record(_metadata, self, "revoked", "fs:read", "\"/tmp/cft/rw\"",
		     rt.cap_id);
	self->agent.pid = mine;
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

TEST_F(ex, setuid_keeps_binding)
{
	struct capfence_token t;

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "setuid"));
	/* new credentials, same epoch and capabilities */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.2 %u",
				       self->port));
}

TEST_F(ex, thread_credential_change_keeps_binding)
{
	struct capfence_token t;

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent,
				       "thread-setuid-connect 127.0.0.1 %u",
				       self->port));
	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "thread-setuid-connect 127.0.0.1 %u",
				  self->port));
}

TEST_F(ex, keyctl_session_to_parent_keeps_binding)
{
	struct capfence_token t;

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	/* cred_alloc_blank + cred_transfer replace the agent's credentials */
	ASSERT_EQ(0, cft_agent_do(&self->agent, "session-to-parent"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.2 %u",
				       self->port));
}

TEST_F(ex, fork_inherits)
{
	struct capfence_token t;

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent,
				       "fork connect 127.0.0.1 %u", self->port));
	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fork connect 127.0.0.1 %u",
				  self->port));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fork connect 10.0.0.1 1"));
}

TEST_F(ex, exec_keeps_epoch_and_caps)
{
	char line[64];
	struct capfence_token t;
	ssize_t n;

	give(_metadata, self, "net:connect", "127.0.0.1/32", &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "exec"));
	n = read(self->agent.out, line, sizeof(line) - 1);
	ASSERT_LT(0, n);
	line[n] = '\0';
	ASSERT_EQ(0, strncmp(line, "ready", 5));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
				  self->port));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.2 %u",
				       self->port));
}

TEST_F(ex, never_eperm_never_signal)
{
	int i;

	/* a burst of denials: each one EACCES, the task stays alive */
	for (i = 0; i < 100; i++)
		ASSERT_EQ(EACCES, cft_agent_do(&self->agent, "connect 127.0.0.1 %u",
					       self->port));
	EXPECT_EQ(self->agent.pid, cft_agent_do(&self->agent, "pid"));
}

CFT_MAIN
