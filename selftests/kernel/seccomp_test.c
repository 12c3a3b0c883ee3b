// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall policy of an epoch: an OCI seccomp profile compiled with
 * libseccomp, every refusal rewritten to EACCES and logged; the exec that
 * binds a task to the epoch, and every later exec of a bound task, refused
 * (EACCES, reason seccomp, recorded) unless the task's seccomp filter
 * chain holds the epoch's program, at any depth (the bind record names
 * it); a bound task's own stacked filters answering for themselves, never
 * loosening the epoch's refusals, and refused altogether by an epoch
 * installed with no_new_filters; install refusing a profile that
 * contradicts the epoch's classes, and every malformed profile, with one
 * line and nothing installed. No sandboxed task is ever ended by a signal
 * but by its own filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <pthread.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

#define DEFAULT_PROFILE "/usr/share/capfence/seccomp-default.json"
/* the engines' profiles as Debian ships them (tools/build/engine-profiles.sh) */
#define PODMAN_PROFILE "/usr/share/capfence/profiles/containers-seccomp.json"
#define DOCKER_PROFILE "/usr/share/capfence/profiles/moby-default.json"

/* refusals of every kind, on calls no agent makes by itself */
static const char kill_trap_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\","
	"\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\"],"
	"\"syscalls\":["
	"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
	"{\"names\":[\"swapoff\",\"swapon\"],\"action\":\"SCMP_ACT_TRAP\"},"
	"{\"names\":[\"syslog\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1},"
	"{\"names\":[\"vhangup\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13},"
	"{\"names\":[\"quotactl\"],\"action\":\"SCMP_ACT_KILL_THREAD\","
	"\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}";

/* the same refusal of acct, another program */
static const char other_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}]}";

/*
 * A task's own filter, stacked on the epoch's: it answers acct (which the
 * epoch refuses with EACCES) and getppid (which the epoch allows) with
 * EPERM, kills the process at getpgrp, and allows the rest. Loaded without
 * SECCOMP_FILTER_FLAG_LOG, as sshd's and bwrap's are.
 */
static struct sock_filter own_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgrp, 2, 3),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* A task's own filter that allows everything. */
static struct sock_filter allow_all[] = {
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/*
 * agent side: "sys NR" makes system call NR with zero arguments;
 * "killer seccomp|prctl" loads a filter that kills the process at its
 * next getppid(), through seccomp(2) or prctl(2); "strict" asks for strict
 * mode (which kills at any other call); "own seccomp|prctl" stacks
 * own_filter, "allow-all" stacks allow_all.
 */
static void *thread_noop(void *arg)
{
	return arg;
}

int cft_agent_extra(char *cmd)
{
	struct sock_filter killer[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = 4, .filter = killer };
	struct sock_fprog own = { .len = sizeof(own_filter) / sizeof(own_filter[0]),
				  .filter = own_filter };
	struct sock_fprog all = { .len = 1, .filter = allow_all };
	long nr;

	if (sscanf(cmd, "sys %ld", &nr) == 1)
		return syscall(nr, 0, 0, 0, 0, 0, 0) < 0 ? errno : 0;
	/* glibc starts a thread with clone3, and falls back on ENOSYS only */
	if (!strcmp(cmd, "thread")) {
		pthread_t t;
		int err = pthread_create(&t, NULL, thread_noop, NULL);

		return err ?: pthread_join(t, NULL);
	}
	if (!strcmp(cmd, "own seccomp"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &own) ? errno : 0;
	if (!strcmp(cmd, "own prctl"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &own) ? errno : 0;
	if (!strcmp(cmd, "allow-all"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &all) ? errno : 0;
	if (!strcmp(cmd, "killer seccomp"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) ? errno : 0;
	if (!strcmp(cmd, "killer prctl"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) ? errno : 0;
	if (!strcmp(cmd, "strict"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) ? errno : 0;
	/* the kernel reads argument 0 as 32 bits: the upper half set */
	if (!strcmp(cmd, "killer seccomp-high"))
		return syscall(SYS_seccomp, (1ul << 32) | SECCOMP_SET_MODE_FILTER, 0, &fp) ?
		       errno : 0;
	if (!strcmp(cmd, "killer prctl-high"))
		return syscall(SYS_prctl, (1ul << 32) | PR_SET_SECCOMP,
			       (unsigned long)SECCOMP_MODE_FILTER, &fp, 0ul, 0ul) ? errno : 0;
	return EINVAL;
}

/* What a launcher does between EXEC_SET and execve (cft_pre_exec). */
struct launch {
	const void *prog;	/* the epoch's program, or NULL */
	size_t len;
	bool nolog;		/* load it without SECCOMP_FILTER_FLAG_LOG */
	const void *extra;	/* another program loaded after it */
	size_t extra_len;
	const void *below;	/* another program loaded before it */
	size_t below_len;
};

static int load(const void *prog, size_t len, unsigned int flags)
{
	struct sock_fprog fp = { .len = (unsigned short)(len / 8),
				 .filter = (struct sock_filter *)prog };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp))
		return -errno;
	return 0;
}

static int launch(void *arg)
{
	struct launch *l = arg;
	int err = 0;

	if (l->below)
		err = load(l->below, l->below_len, 0);
	if (!err && l->prog)
		err = l->nolog ? load(l->prog, l->len, 0) :
				 capfence_seccomp_apply(l->prog, l->len);
	if (!err && l->extra)
		err = load(l->extra, l->extra_len, SECCOMP_FILTER_FLAG_LOG);
	return err;
}

FIXTURE(sc) {
	struct cft_nl nl;
	struct capfence_key *key;
	int audit;
	uint64_t e;
	struct capfence_seccomp_info info;	/* epoch e's, from the module */
	struct launch l;
};

/*
 * Install epoch @id with @rules and the profile @json, refusing new
 * filters when @no_new_filters; 0 or -errno.
 */
static int install_opts(struct cft_nl *nl, uint64_t id, const char *const *rules,
			int n, const char *json, bool no_new_filters, char *err,
			size_t errlen)
{
	struct capfence_seccomp_opts o = { .sz = sizeof(o),
					   .no_new_filters = no_new_filters };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	int ret;

	ret = capfence_epoch_parse_rules(&e, id, rules, (size_t)n, err, errlen);
	if (ret)
		return ret;
	ret = capfence_seccomp_compile_opts(json, strlen(json), &e, &o, &s, err,
					    errlen);
	if (ret)
		return ret;
	ret = capfence_client_epoch_install_seccomp(nl->c, &e, s, err, errlen);
	capfence_seccomp_free(s);
	return ret;
}

/* install_opts() with the default: a bound task may stack filters. */
static int install(struct cft_nl *nl, uint64_t id, const char *const *rules,
		   int n, const char *json, char *err, size_t errlen)
{
	return install_opts(nl, id, rules, n, json, false, err, errlen);
}

/* Point the launcher at epoch @e's program (capfence_free() *info's). */
static void use_epoch(struct __test_metadata *_metadata, FIXTURE_DATA(sc) *self,
		      uint64_t e, struct capfence_seccomp_info *info)
{
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, info, err,
						   sizeof(err))) TH_LOG("%s", err);
	self->l.prog = info->prog;
	self->l.len = info->len;
}

FIXTURE_SETUP(sc)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, install(&self->nl, self->e, rules, 2, kill_trap_profile,
			     err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, self->e, &self->info,
						   err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_NE(0, self->info.insns);
	memset(&self->l, 0, sizeof(self->l));
	self->l.prog = self->info.prog;
	self->l.len = self->info.len;
	cft_pre_exec = launch;
	cft_pre_exec_arg = &self->l;
}

FIXTURE_TEARDOWN(sc)
{
	cft_pre_exec = NULL;
	capfence_free(self->info.prog);
	cft_audit_close(self->audit);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static void hex(const uint8_t *d, char *out)
{
	int i;

	for (i = 0; i < CAPFENCE_SECCOMP_DIGEST_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/*
 * The capfence bind record of @pid: @reason, the epoch, the digest and
 * the program's @depth in the task's filter chain ("none": not in it).
 */
static void check_bind(struct __test_metadata *_metadata, int audit, pid_t pid,
		       uint64_t epoch, const uint8_t *digest, const char *reason,
		       const char *depth)
{
	char rec[2048], v[128], want_r[64], want_p[32], want_d[80], want_depth[32];

	snprintf(want_r, sizeof(want_r), "reason=%s ", reason);
	snprintf(want_depth, sizeof(want_depth), " depth=%s ", depth);
	/* a refused exec's agent is reaped: its epoch (one per test) finds it */
	if (pid > 0)
		snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	else
		snprintf(want_p, sizeof(want_p), " epoch=%llu ",
			 (unsigned long long)epoch);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000, "op=bind",
				    want_r, want_p, want_depth, NULL))
		TH_LOG("no op=bind %s%s%s record", want_r, want_p, want_depth);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ(reason, cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ(strcmp(reason, "ok") ? "13" : "0",
		     cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want_r, sizeof(want_r), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want_r, cft_field(rec, "epoch", v, sizeof(v)));
	hex(digest, want_d);
	EXPECT_STREQ(want_d, cft_field(rec, "seccomp", v, sizeof(v)));
	EXPECT_STREQ(depth, cft_field(rec, "depth", v, sizeof(v)));
	/* the fields after it are kept */
	EXPECT_STRNE("", cft_field(rec, "sandbox", v, sizeof(v)));
	EXPECT_STRNE("", cft_field(rec, "fleet_rev", v, sizeof(v)));
}

/* The kernel's AUDIT_SECCOMP record of @pid's call @nr: an errno action. */
static void check_seccomp_record(struct __test_metadata *_metadata, int audit,
				 pid_t pid, long nr)
{
	char rec[2048], v[128], want_p[32], want_s[32];

	snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	snprintf(want_s, sizeof(want_s), " syscall=%ld ", nr);
	ASSERT_EQ(0, cft_audit_wait_type(audit, AUDIT_SECCOMP, rec, sizeof(rec),
					 5000, want_p, want_s, NULL))
		TH_LOG("no AUDIT_SECCOMP record of pid %d syscall %ld", pid, nr);
	/* no signal: the ERRNO action (the kernel logs the action, not its data) */
	EXPECT_STREQ("0", cft_field(rec, "sig", v, sizeof(v)));
	EXPECT_STREQ("0x50000", cft_field(rec, "code", v, sizeof(v)));
	EXPECT_STREQ("c000003e", cft_field(rec, "arch", v, sizeof(v)));
}

TEST(rewrite_notes)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t len;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(kill_trap_profile, strlen(kill_trap_profile),
					      &e, &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(4, capfence_seccomp_notes(s));
	EXPECT_STREQ("syscalls[0] (acct): SCMP_ACT_KILL_PROCESS -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 0));
	EXPECT_STREQ("syscalls[1] (swapoff, ...): SCMP_ACT_TRAP -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 1));
	EXPECT_STREQ("syscalls[2] (syslog): SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 2));
	EXPECT_STREQ("syscalls[4] (quotactl): SCMP_ACT_KILL_THREAD -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 3));
	EXPECT_EQ(NULL, capfence_seccomp_note(s, 4));
	EXPECT_NE(NULL, capfence_seccomp_program(s, &len));
	EXPECT_EQ(0, len % 8);
	capfence_seccomp_free(s);
}

/* KILL_PROCESS, TRAP and ERRNO(EPERM) all answer EACCES, logged, no signal. */
TEST_F(sc, denied_syscall_is_eacces_and_recorded)
{
	struct cft_agent a;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_acct);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_syslog));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_syslog);
	/* allowed by the profile: the kernel's own answer */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

TEST_F(sc, epoch_get_shows_the_program)
{
	uint8_t d[CAPFENCE_SECCOMP_DIGEST_LEN];

	EXPECT_EQ(self->info.insns * 8, self->info.len);
	crypto_hash_sha256(d, self->info.prog, self->info.len);
	EXPECT_EQ(0, memcmp(d, self->info.digest, sizeof(d)));
}

TEST_F(sc, exec_refused_without_the_filter)
{
	struct cft_reply r;
	struct cft_agent a;

	self->l.prog = NULL;
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
}

TEST_F(sc, exec_refused_with_another_filter)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.prog = capfence_seccomp_program(s, &self->l.len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
	capfence_seccomp_free(s);
}

/*
 * The epoch's program need not be the newest filter: one loaded after it
 * (a filter of the task's own) leaves it at depth 1, and the bind
 * succeeds, recorded with depth=1; one loaded before it (a runtime's own)
 * leaves it newest. Under an epoch installed with no_new_filters the
 * program itself refuses the filter above it (EACCES, nothing is exec'd).
 */
static const struct sock_filter below_acct[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

TEST_F(sc, filter_above_or_below_the_epochs_accepted)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info strict;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;
	uint64_t se = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 2, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "1");
	/* the epoch's refusal holds under a filter that allows the call */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	/*
	 * below: a runtime's own filter first (one that lets filters be
	 * stacked on it: refuses acct, allows the rest), then the epoch's
	 */
	self->l.extra = NULL;
	self->l.below = below_acct;
	self->l.below_len = sizeof(below_acct);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	/* both filters apply (the epoch's answers acct first: KILL rewritten) */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	/* no_new_filters: the program refuses the filter above it */
	ASSERT_EQ(0, install_opts(&self->nl, se, rules, 2, kill_trap_profile, true,
				  err, sizeof(err))) TH_LOG("%s", err);
	use_epoch(_metadata, self, se, &strict);
	self->l.below = NULL;
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, se, NULL, 0, &r));
	EXPECT_STREQ("pre-exec step failed", r.ext);
	capfence_free(strict.prog);
	capfence_seccomp_free(s);
}

/*
 * An exec into the epoch whose filter chain holds the epoch's program
 * nowhere is refused, however deep the chain: the program loaded without
 * the log flag under another logging filter, and another program with a
 * filter below and above it.
 */
TEST_F(sc, exec_refused_when_the_chain_lacks_the_program)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.nolog = true;
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");

	self->l.nolog = false;
	self->l.below = below_acct;
	self->l.below_len = sizeof(below_acct);
	self->l.prog = capfence_seccomp_program(s, &self->l.len);
	self->l.extra = allow_all;
	self->l.extra_len = sizeof(allow_all);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
	capfence_seccomp_free(s);
}

/*
 * Read records up to @pid's AUDIT_SECCOMP record of call @sentinel,
 * counting on the way the AUDIT_SECCOMP records of @nr[0] and @nr[1] (any
 * pid; *code: the last one's code) and capfence's records. Returns 0, or
 * -ETIMEDOUT without the sentinel.
 */
static int records_until(int audit, pid_t pid, long sentinel, const long nr[2],
			 int *n_nr, char *code, size_t code_len, int *n_capfence)
{
	char buf[8192], want_p[32], want_s[32], want_n[2][32];
	int waited = 0, timeout = cft_ms(5000);

	*n_nr = *n_capfence = 0;
	snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	snprintf(want_s, sizeof(want_s), " syscall=%ld ", sentinel);
	snprintf(want_n[0], sizeof(want_n[0]), " syscall=%ld ", nr[0]);
	snprintf(want_n[1], sizeof(want_n[1]), " syscall=%ld ", nr[1]);
	while (waited < timeout) {
		ssize_t n = recv(audit, buf, sizeof(buf) - 1, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		const char *text;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				waited += 1000;
			continue;
		}
		if (n < (ssize_t)NLMSG_HDRLEN)
			continue;
		buf[n] = '\0';
		text = (const char *)NLMSG_DATA(h);
		if (h->nlmsg_type == CAPFENCE_AUDIT_TYPE)
			(*n_capfence)++;
		if (h->nlmsg_type != AUDIT_SECCOMP)
			continue;
		if (strstr(text, want_p) && strstr(text, want_s))
			return 0;
		if (strstr(text, want_n[0]) || strstr(text, want_n[1])) {
			(*n_nr)++;
			cft_field(text, "code", code, code_len);
		}
	}
	return -ETIMEDOUT;
}

/*
 * A bound task stacks filters of its own, through seccomp(2) and
 * prctl(PR_SET_SECCOMP). What they answer is theirs: EPERM for a call the
 * epoch allows, EPERM (the newest filter's errno among equal ERRNO
 * answers) for one the epoch refuses with EACCES, a kill: none of it
 * written by capfence or logged as the epoch's. The epoch's refusal of a
 * call they allow is still EACCES, recorded.
 */
TEST_F(sc, stacked_filters_answer_for_themselves)
{
	const long own_calls[2] = { SYS_getppid, SYS_acct };
	const long kill_calls[2] = { SYS_getpgrp, SYS_getpgrp };
	char code[32];
	struct cft_agent a;
	int n_own, n_capfence;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	ASSERT_EQ(0, cft_agent_do(&a, "own seccomp"));
	ASSERT_EQ(0, cft_agent_do(&a, "own prctl"));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_acct));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	ASSERT_EQ(0, records_until(self->audit, a.pid, SYS_swapoff, own_calls, &n_own,
				   code, sizeof(code), &n_capfence))
		TH_LOG("no AUDIT_SECCOMP record of the epoch's refusal of swapoff");
	EXPECT_EQ(0, n_own) TH_LOG("the task's own EPERM logged (code=%s)", code);
	EXPECT_EQ(0, n_capfence);
	/* its own kill, in a child: SIGSYS; the kernel names the action */
	EXPECT_EQ(200 + SIGSYS, cft_agent_do(&a, "fork sys %d", SYS_getpgrp));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	ASSERT_EQ(0, records_until(self->audit, a.pid, SYS_swapoff, kill_calls, &n_own,
				   code, sizeof(code), &n_capfence));
	EXPECT_EQ(1, n_own);
	EXPECT_STREQ("0x80000000", code);
	EXPECT_EQ(0, n_capfence);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/* Under a stacked filter that allows everything, the epoch still answers. */
TEST_F(sc, epochs_refusal_holds_under_an_allowing_filter)
{
	struct cft_agent a;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_do(&a, "allow-all"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_acct);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_syslog));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_syslog);
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/*
 * A later exec of a bound task with stacked filters is checked again and
 * succeeds: the epoch's program is found three filters down, and the
 * record names the depth. The filters outlive the exec.
 */
TEST_F(sc, later_exec_with_stacked_filters_names_the_depth)
{
	struct cft_agent a;
	char line[128];

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	ASSERT_EQ(0, cft_agent_do(&a, "own seccomp"));
	ASSERT_EQ(0, cft_agent_do(&a, "own prctl"));
	ASSERT_EQ(0, cft_agent_do(&a, "allow-all"));
	ASSERT_EQ(0, cft_agent_do(&a, "exec"));
	ASSERT_LT(0, cft_read_line(a.out, line, sizeof(line), 10000));
	ASSERT_EQ(0, strncmp(line, "ready", 5)) TH_LOG("%s", line);
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "3");
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

TEST_F(sc, exec_refused_without_log_flag)
{
	struct cft_reply r;
	struct cft_agent a;

	self->l.nolog = true;
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
}

/* An epoch without a syscall policy binds whatever filters the task has. */
TEST_F(sc, epoch_without_profile_binds_as_before)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp_info none;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &none, err, sizeof(err)));
	EXPECT_EQ(0, none.insns);
	EXPECT_EQ(NULL, none.prog);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/* Equal epochs: the receiver runs exactly the epoch's syscall policy. */
TEST_F(sc, accepted_token_meets_no_seccomp_denial)
{
	struct capfence_token t, other;
	struct cft_reply r;
	struct cft_agent a;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e - 1, "127.0.0.0/8", 0,
			      &other));
	EXPECT_EQ(-ESTALE, cft_delegate(&self->nl, &other, a.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_EPOCH_MISMATCH, r.reason);
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 10.0.0.1 %d", port));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	close(srv);
}

TEST_F(sc, contradicting_profile_refused)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char deny_connect[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"sendmsg\",\"connect\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
	const char deny_open[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
		"{\"names\":[\"read\",\"open\"],\"action\":\"SCMP_ACT_ALLOW\"}]}";
	char err[CAPFENCE_ERR_MAX], want[CAPFENCE_ERR_MAX];
	struct capfence_status st;
	uint64_t e = cft_next_epoch(&self->nl), before;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	before = st.max_epoch;
	EXPECT_EQ(-EINVAL, install(&self->nl, e, rules, 2, deny_connect, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "profile: syscalls[0] denies connect, which class net:connect needs, and epoch %llu grants net:connect (token): allow the call or deny the class",
		 (unsigned long long)e);
	EXPECT_STREQ(want, err);
	EXPECT_EQ(-EINVAL, install(&self->nl, e, rules + 1, 1, deny_open, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "the default action denies openat, which class fs:read needs"))
		TH_LOG("%s", err);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	EXPECT_EQ(before, st.max_epoch);
	/* the class denied instead: accepted */
	{
		const char *ok[] = { "net:connect=deny", "fs:read=open" };

		EXPECT_EQ(0, install(&self->nl, e, ok, 2, deny_connect, err, sizeof(err)))
			TH_LOG("%s", err);
	}
}

TEST_F(sc, malformed_profiles_refused)
{
	static const struct {
		const char *json;
		int err;
		const char *msg;
	} bad[] = {
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",", -EINVAL,
		  "profile: bad JSON at byte 34: unexpected end of input" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"nosuchcall\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  -EINVAL, "profile: syscalls[0]: unknown syscall 'nosuchcall'" },
		{ "{\"defaultAction\":\"SCMP_ACT_FOO\"}", -EINVAL,
		  "profile: defaultAction: unknown action 'SCMP_ACT_FOO'" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_AARCH64\"]}",
		  -EINVAL,
		  "profile: unsupported architecture 'SCMP_ARCH_AARCH64' (supported: SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32)" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
		  -EINVAL,
		  "profile: syscalls[0]: unsupported action 'SCMP_ACT_NOTIFY' (capfence answers every refusal itself)" },
		{ "[1]", -EINVAL, "profile: not a JSON object" },
	};
	const char *rules[] = { "fs:read=open" };
	char err[CAPFENCE_ERR_MAX], *big;
	struct capfence_status st;
	uint64_t e = cft_next_epoch(&self->nl), before;
	size_t i, n = CAPFENCE_SECCOMP_PROFILE_MAX + 1;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	before = st.max_epoch;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(bad[i].err, install(&self->nl, e, rules, 1, bad[i].json, err,
					      sizeof(err)));
		EXPECT_STREQ(bad[i].msg, err);
		EXPECT_EQ(NULL, strchr(err, '\n'));
	}
	big = malloc(n + 1);
	ASSERT_NE(NULL, big);
	memset(big, ' ', n);
	big[n] = '\0';
	memcpy(big, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}", 34);
	EXPECT_EQ(-E2BIG, install(&self->nl, e, rules, 1, big, err, sizeof(err)));
	EXPECT_STREQ("profile: 1048577 bytes, more than the 1048576 a profile may have", err);
	free(big);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	EXPECT_EQ(before, st.max_epoch);
}

/* The module checks a program's size itself, whoever sends it. */
TEST_F(sc, kernel_refuses_malformed_programs)
{
	static uint8_t prog[(CAPFENCE_SECCOMP_MAX_INSNS + 1) * 8];
	static const size_t lens[] = { 7, 0, sizeof(prog) };
	static const int errs[] = { -EINVAL, -EINVAL, -E2BIG };
	uint64_t e = cft_next_epoch(&self->nl);
	size_t i;

	for (i = 0; i < 3; i++) {
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);

		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
		mnl_attr_put(nlh, CAPFENCE_A_SECCOMP_PROG, lens[i], prog);
		EXPECT_EQ(errs[i], cft_nl_talk(&self->nl, nlh, NULL, NULL));
		EXPECT_NE(NULL, strstr(self->nl.ext, "seccomp program")) TH_LOG("%s", self->nl.ext);
	}
	{
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
		uint8_t d[CAPFENCE_SECCOMP_DIGEST_LEN] = { 0 };

		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
		mnl_attr_put(nlh, CAPFENCE_A_SECCOMP_DIGEST, sizeof(d), d);
		EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	}
}

/* A container-runtime style default-deny profile runs the agents. */
TEST_F(sc, container_default_profile)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "net:bind=open",
				"fs:read=open", "fs:write=token:/tmp" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t;
	struct cft_reply r;
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 4, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file(DEFAULT_PROFILE, &ep, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3, capfence_seccomp_notes(s));
	EXPECT_STREQ("defaultAction: SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 0));
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
	EXPECT_EQ(0, cft_agent_do(&a, "open /etc/passwd r"));
	/* not in the allow list: the default, rewritten */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup);
	/* KILL_PROCESS in the profile */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_process_vm_readv));
	/* a forked child and an exec keep the filter and the epoch */
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
	close(srv);
}

/*
 * The container engines' default profiles, as Debian ships them, install
 * as epochs' syscall policies, resolved for x86_64 and the engines'
 * default capability set; bound agents under them start threads (Docker's
 * answers clone3 with ENOSYS, glibc falls back to clone), get ENOSYS for
 * a call Podman's does not list, EACCES for a call they refuse, and do
 * their granted connect.
 */
TEST_F(sc, engine_profiles_as_shipped)
{
	static const struct {
		const char *path;
		long unlisted_errno;	/* the default's answer, kept or rewritten */
		const char *clone3_note;
	} profiles[] = {
		{ PODMAN_PROFILE, ENOSYS, NULL },
		{ DOCKER_PROFILE, EACCES,
		  "syscalls[16] (clone3): SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)" },
	};
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "net:bind=open",
				"fs:read=open", "fs:write=token:/tmp" };
	char err[CAPFENCE_ERR_MAX];
	size_t i, k;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct capfence_seccomp *s = NULL;
		struct capfence_seccomp_info info;
		struct capfence_epoch ep;
		struct capfence_token t;
		struct cft_reply r;
		struct cft_agent a;
		uint64_t e = cft_next_epoch(&self->nl);
		bool noted = !profiles[i].clone3_note;
		uint16_t port;
		int srv = cft_listen(&port);

		ASSERT_LE(0, srv);
		ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 4, err, sizeof(err)));
		ASSERT_EQ(0, capfence_seccomp_compile_file(profiles[i].path, &ep, &s, err,
							   sizeof(err))) TH_LOG("%s", err);
		for (k = 0; k < capfence_seccomp_notes(s); k++)
			noted |= profiles[i].clone3_note &&
				 !strcmp(profiles[i].clone3_note, capfence_seccomp_note(s, k));
		EXPECT_TRUE(noted) TH_LOG("%s: no note '%s'", profiles[i].path,
					  profiles[i].clone3_note);
		ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
								   sizeof(err))) TH_LOG("%s", err);
		capfence_seccomp_free(s);
		ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err,
							   sizeof(err)));
		self->l.prog = info.prog;
		self->l.len = info.len;
		ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL)) TH_LOG("%s", profiles[i].path);
		EXPECT_EQ(0, cft_agent_do(&a, "thread")) TH_LOG("%s", profiles[i].path);
		EXPECT_EQ(profiles[i].unlisted_errno, cft_agent_do(&a, "sys %d", SYS_tuxcall))
			TH_LOG("%s", profiles[i].path);
		check_seccomp_record(_metadata, self->audit, a.pid, SYS_tuxcall);
		/* refused by both (CAP_SYS_TTY_CONFIG is not in the default set) */
		EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
		check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup);
		ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.0/8", 0, &t));
		ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
		EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
		EXPECT_TRUE(cft_agent_stop_clean(&a));
		capfence_free(info.prog);
		close(srv);
	}
}

/*
 * Narrowing by profile: an epoch whose profile removes net:connect's calls
 * must deny the class (else install refuses it), and its activation fences
 * the older epoch's net:connect tokens, held ones included.
 */
TEST_F(sc, narrowing_by_profile_fences_held_tokens)
{
	const char *wide[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char *narrow[] = { "net:connect=deny", "fs:read=open" };
	const char deny_connect[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"connect\",\"sendto\",\"sendmsg\",\"sendmmsg\"],"
		"\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
	struct capfence_seccomp_info info;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t;
	struct cft_reply r;
	struct cft_agent old, young;
	uint64_t e1 = cft_next_epoch(&self->nl), e2;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, install(&self->nl, e1, wide, 2, other_profile, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e1, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	ASSERT_EQ(0, cft_agent_spawn(&old, e1, NULL, 0, NULL));
	capfence_free(info.prog);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e1, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, old.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&old, "connect 127.0.0.1 %d", port));

	e2 = cft_next_epoch(&self->nl);
	EXPECT_EQ(-EINVAL, install(&self->nl, e2, wide, 2, deny_connect, err, sizeof(err)));
	ASSERT_EQ(0, install(&self->nl, e2, narrow, 2, deny_connect, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e2, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	/* the first bind activates e2: e1's net:connect tokens are fenced */
	ASSERT_EQ(0, cft_agent_spawn(&young, e2, NULL, 0, NULL));
	capfence_free(info.prog);
	EXPECT_EQ(EACCES, cft_agent_do(&old, "connect 127.0.0.1 %d", port));
	{
		char rec[2048], want[32];

		snprintf(want, sizeof(want), " pid=%d ", old.pid);
		EXPECT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
					    "op=exercise", "reason=fenced", want, NULL));
	}
	/* the young agent's profile answers its connect: EACCES, no signal */
	EXPECT_EQ(EACCES, cft_agent_do(&young, "connect 127.0.0.1 %d", port));
	check_seccomp_record(_metadata, self->audit, young.pid, SYS_connect);
	EXPECT_TRUE(cft_agent_stop_clean(&old));
	EXPECT_TRUE(cft_agent_stop_clean(&young));
	close(srv);
}

/*
 * An epoch installed with no_new_filters keeps today's strict behaviour:
 * no stock kernel hook sees a filter's instructions at load, so the
 * epoch's program refuses every new filter (seccomp(2),
 * prctl(PR_SET_SECCOMP), strict mode) with EACCES, recorded; the task
 * lives on.
 */
TEST_F(sc, no_new_filters_epoch_refuses_a_killing_filter)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	struct capfence_seccomp_info info;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, install_opts(&self->nl, e, rules, 2, kill_trap_profile, true,
				  err, sizeof(err))) TH_LOG("%s", err);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp"));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_seccomp);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl"));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_prctl);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "strict"));
	/* with the upper half of argument 0 set (the outside review's way in) */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "own seccomp"));
	/* nothing was loaded: getppid() does not kill */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	/* prctl's other options, and seccomp's queries, still work */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getpid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

/* The same with a default-deny profile that allows seccomp and prctl. */
TEST_F(sc, no_new_filters_with_default_deny_profile)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp_opts o = { .sz = sizeof(o), .no_new_filters = true };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file_opts(DEFAULT_PROFILE, &ep, &o, &s, err,
							sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl-high"));
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

/*
 * By default the same profile lets the bound task stack its own filter,
 * through seccomp(2) and prctl(2); the epoch's refusals still hold.
 */
TEST_F(sc, default_deny_profile_lets_filters_stack)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file(DEFAULT_PROFILE, &ep, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(0, cft_agent_do(&a, "own seccomp"));
	EXPECT_EQ(0, cft_agent_do(&a, "own prctl"));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	/* not in the profile's allow list: the epoch's default, rewritten */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

CFT_MAIN
