// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall-policy compiler on the container engines' profile files as
 * Debian ships them (fetched at build time: tools/build/engine-profiles.sh),
 * under AddressSanitizer: each resolves for x86_64 and a capability set,
 * keeps ENOSYS, and says what it left out; malformed engine keys are one
 * line each. io_uring is refused whole (ENOSYS) when the profile refuses
 * a call one of its opcodes performs, and only then: the compiled program
 * is run here on the calls' seccomp_data. The learner's profile of the
 * calls a run made (capfence learn --seccomp) compiles back to a program
 * that allows exactly those and answers ENOSYS to the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <json-c/json.h>
#include "cf_test.h"
#include "cf_internal.h"

static bool has_note(const struct capfence_seccomp *s, const char *want)
{
	size_t i;

	for (i = 0; i < capfence_seccomp_notes(s); i++)
		if (!strcmp(capfence_seccomp_note(s, i), want))
			return true;
	return false;
}

static void epoch(struct __test_metadata *_metadata, struct capfence_epoch *e)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, capfence_epoch_parse_rules(e, 7, rules, 3, err, sizeof(err)));
}

TEST(podman_profile_as_shipped)
{
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];

	epoch(_metadata, &e);
	ASSERT_EQ(0, capfence_seccomp_compile_file(CF_PROFILES "/containers-seccomp.json",
						   &e, &s, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_TRUE(has_note(s, "defaultAction: SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)"));
	EXPECT_TRUE(has_note(s, "syscalls[12] (open_by_handle_at): left out (needs CAP_DAC_READ_SEARCH)"));
	EXPECT_TRUE(has_note(s, "syscalls[30] (socket): left out (excluded with CAP_AUDIT_WRITE)"));
	EXPECT_TRUE(has_note(s, "syscalls[0] (bdflush, ...): SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)"));
	capfence_seccomp_free(s);
	CF_NO_LEAKS();
}

TEST(docker_profile_for_a_capability_set_and_kernel)
{
	struct capfence_seccomp_opts o = { .sz = sizeof(o) };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	const char *path = CF_PROFILES "/moby-default.json";

	epoch(_metadata, &e);
	ASSERT_EQ(0, capfence_seccomp_compile_file_opts(path, &e, &o, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(has_note(s, "syscalls[16] (clone3): SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)"));
	EXPECT_TRUE(has_note(s, "syscalls[13] (bpf, ...): left out (needs CAP_SYS_ADMIN)"));
	capfence_seccomp_free(s);
	s = NULL;

	o.caps = "CAP_SYS_ADMIN,CAP_SYS_PTRACE";
	o.kernel = "4.4";
	ASSERT_EQ(0, capfence_seccomp_compile_file_opts(path, &e, &o, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(has_note(s, "syscalls[16] (clone3): left out (excluded with CAP_SYS_ADMIN)"));
	EXPECT_TRUE(has_note(s, "syscalls[1] (ptrace): left out (needs kernel 4.8)"));
	EXPECT_FALSE(has_note(s, "syscalls[13] (bpf, ...): left out (needs CAP_SYS_ADMIN)"));
	capfence_seccomp_free(s);
	s = NULL;

	o.kernel = "six";
	EXPECT_EQ(-EINVAL, capfence_seccomp_compile_file_opts(path, &e, &o, &s, err, sizeof(err)));
	/* a file's messages start with its path */
	EXPECT_NE(NULL, strstr(err, "moby-default.json: profile: kernel version 'six' is not MAJOR.MINOR"))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, s);
	CF_NO_LEAKS();
}

static const struct {
	const char *json;
	const char *msg;
} bad[] = {
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[],\"archMap\":[]}",
	  "profile: both architectures and archMap (an engine takes one or the other)" },
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"subArchitectures\":[]}]}",
	  "profile: archMap must be an array of {architecture, subArchitectures}" },
	{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrno\":\"ENOPE\"}",
	  "profile: defaultAction: defaultErrno must name an errno (EPERM, ENOSYS, ...)" },
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,\"errno\":\"ENOSYS\"}]}",
	  "profile: syscalls[0]: errno must name an errno (EPERM, ENOSYS, ...) that agrees with its number" },
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ALLOW\",\"excludes\":{\"os\":[]}}]}",
	  "profile: syscalls[0]: excludes must be an object of arches, caps and minKernel" },
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"minKernel\":\"x\"}}]}",
	  "profile: syscalls[0]: includes: arches and caps must be arrays of names, minKernel a version" },
	{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"nosuchcall\"],\"action\":\"SCMP_ACT_ALLOW\"}]}",
	  "profile: syscalls[0]: unknown syscall 'nosuchcall'" },
};

TEST(malformed_engine_keys)
{
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	epoch(_metadata, &e);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, capfence_seccomp_compile(bad[i].json, strlen(bad[i].json),
							    &e, &s, err, sizeof(err)));
		EXPECT_STREQ(bad[i].msg, err);
		EXPECT_EQ(NULL, s);
	}
	CF_NO_LEAKS();
}

/* A name of another architecture's call is left out, not refused. */
/*
 * A class's newer call answered ENOSYS (openat2, renameat2) leaves the
 * class usable when its older call is let through: libc falls back. Any
 * other refusal of it, or ENOSYS with the older call refused too, still
 * contradicts the grant.
 */
TEST(enosys_newer_call_falls_back_within_its_class)
{
	static const char fallback[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"openat2\",\"renameat2\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38}]}";
	static const char both[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"syscalls\":["
		"{\"names\":[\"open\",\"connect\",\"sendto\",\"sendmsg\",\"sendmmsg\",\"execve\"],"
		"\"action\":\"SCMP_ACT_ALLOW\"}]}";
	static const char eperm[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"openat2\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];

	epoch(_metadata, &e);
	ASSERT_EQ(0, capfence_seccomp_compile(fallback, strlen(fallback), &e, &s, err,
					      sizeof(err))) TH_LOG("%s", err);
	EXPECT_TRUE(has_note(s, "openat2 answered ENOSYS: class fs:read falls back to the older call"));
	EXPECT_TRUE(has_note(s, "renameat2 answered ENOSYS: class fs:write falls back to the older call"));
	capfence_seccomp_free(s);
	s = NULL;
	EXPECT_EQ(-EINVAL, capfence_seccomp_compile(both, strlen(both), &e, &s, err, sizeof(err)));
	EXPECT_STREQ("profile: the default action denies openat, which class fs:read needs, and epoch 7 grants fs:read (open): allow the call or deny the class",
		     err);
	EXPECT_EQ(NULL, s);
	EXPECT_EQ(-EINVAL, capfence_seccomp_compile(eperm, strlen(eperm), &e, &s, err, sizeof(err)));
	EXPECT_STREQ("profile: syscalls[0] denies openat2, which class fs:read needs, and epoch 7 grants fs:read (open): allow the call or deny the class",
		     err);
	EXPECT_EQ(NULL, s);
	CF_NO_LEAKS();
}

TEST(other_architectures_names_left_out)
{
	const char json[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
			    "{\"names\":[\"arm_fadvise64_64\",\"acct\"],\"action\":\"SCMP_ACT_ERRNO\","
			    "\"errnoRet\":38}]}";
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];

	epoch(_metadata, &e);
	ASSERT_EQ(0, capfence_seccomp_compile(json, strlen(json), &e, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(has_note(s, "syscalls[0] (arm_fadvise64_64, ...): SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)"));
	EXPECT_TRUE(has_note(s, "syscalls[0]: 1 name left out (not x86_64 system calls: arm_fadvise64_64)"));
	capfence_seccomp_free(s);
	CF_NO_LEAKS();
}

/*
 * The program's answer to x86_64 call @name with @arg0: the classic BPF
 * that libseccomp emits (loads, ALU, jumps, returns) run on seccomp_data.
 * 0xffffffff for an instruction it does not know.
 */
static uint32_t run(const struct capfence_seccomp *s, const char *name, uint64_t arg0)
{
	struct seccomp_data d = { .nr = seccomp_syscall_resolve_name(name),
				  .arch = AUDIT_ARCH_X86_64, .args = { arg0 } };
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 }, k;
	const struct sock_filter *f;
	size_t pc, n, len;

	f = capfence_seccomp_program(s, &len);
	n = len / sizeof(*f);
	for (pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t src = BPF_SRC(i->code) == BPF_X ? x : i->k;

		k = i->k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			if (BPF_MODE(i->code) == BPF_ABS && k + 4 <= sizeof(d))
				memcpy(&a, (const char *)&d + k, 4);
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				a = mem[k];
			else if (BPF_MODE(i->code) == BPF_IMM)
				a = k;
			else
				return 0xffffffff;
			break;
		case BPF_LDX:
			if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				x = mem[k];
			else if (BPF_MODE(i->code) == BPF_IMM)
				x = k;
			else
				return 0xffffffff;
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return 0xffffffff;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_RSH: a >>= src & 31; break;
			case BPF_LSH: a <<= src & 31; break;
			default: return 0xffffffff;
			}
			break;
		case BPF_JMP:
			switch (BPF_OP(i->code)) {
			case BPF_JA: pc += k; break;
			case BPF_JEQ: pc += a == src ? i->jt : i->jf; break;
			case BPF_JGT: pc += a > src ? i->jt : i->jf; break;
			case BPF_JGE: pc += a >= src ? i->jt : i->jf; break;
			case BPF_JSET: pc += (a & src) ? i->jt : i->jf; break;
			default: return 0xffffffff;
			}
			break;
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return 0xffffffff;
		}
	}
	return 0xffffffff;
}

#define ENOSYS_RET	(SECCOMP_RET_ERRNO | ENOSYS)
#define EACCES_RET	(SECCOMP_RET_ERRNO | EACCES)

/* io_uring's three calls all answer @want; no io_uring note unless @note. */
static void uring_answers(struct __test_metadata *_metadata,
			  const struct capfence_seccomp *s, uint32_t want,
			  const char *note)
{
	size_t i;

	EXPECT_EQ(want, run(s, "io_uring_setup", 0));
	EXPECT_EQ(want, run(s, "io_uring_enter", 0));
	EXPECT_EQ(want, run(s, "io_uring_register", 0));
	for (i = 0; i < capfence_seccomp_notes(s); i++)
		if (!strncmp(capfence_seccomp_note(s, i), "io_uring", 8))
			break;
	if (note) {
		EXPECT_STREQ(note, i < capfence_seccomp_notes(s) ?
			     capfence_seccomp_note(s, i) : "(no io_uring note)");
	} else {
		EXPECT_EQ(capfence_seccomp_notes(s), i) TH_LOG("%s", capfence_seccomp_note(s, i));
	}
}

/*
 * The engines' profiles as shipped: Docker's (this version) allows
 * io_uring and every call its opcodes perform, so io_uring stays;
 * Podman's refuses io_uring itself (its ENOSYS default), kept as is.
 * capfence's own default profile lets io_uring and all its calls through.
 */
TEST(uring_under_engine_profiles)
{
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];

	epoch(_metadata, &e);
	ASSERT_EQ(0, capfence_seccomp_compile_file(CF_PROFILES "/moby-default.json",
						   &e, &s, err, sizeof(err))) TH_LOG("%s", err);
	uring_answers(_metadata, s, SECCOMP_RET_ALLOW, NULL);
	EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, "socket", 16));
	EXPECT_EQ(EACCES_RET, run(s, "vhangup", 0));
	capfence_seccomp_free(s);
	s = NULL;
	ASSERT_EQ(0, capfence_seccomp_compile_file(CF_PROFILES "/containers-seccomp.json",
						   &e, &s, err, sizeof(err))) TH_LOG("%s", err);
	uring_answers(_metadata, s, ENOSYS_RET, NULL);
	capfence_seccomp_free(s);
	s = NULL;
	ASSERT_EQ(0, capfence_seccomp_compile_file(CF_SC_DEFAULT, &e, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	uring_answers(_metadata, s, SECCOMP_RET_ALLOW, NULL);
	capfence_seccomp_free(s);
	CF_NO_LEAKS();
}

#define ALLOW_WITH(rules) "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[" rules "]}"

static const struct {
	const char *json;
	uint32_t want;		/* io_uring's three calls */
	const char *note;
} uring_profiles[] = {
	/* socket(AF_NETLINK) refused: IORING_OP_SOCKET would make it */
	{ ALLOW_WITH("{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,"
		     "\"args\":[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]}"),
	  ENOSYS_RET, "io_uring refused (ENOSYS): the profile refuses socket (IORING_OP_SOCKET)" },
	/* the first three named, in opcode order */
	{ ALLOW_WITH("{\"names\":[\"openat2\",\"setxattr\",\"splice\",\"statx\"],"
		     "\"action\":\"SCMP_ACT_KILL_PROCESS\"}"),
	  ENOSYS_RET,
	  "io_uring refused (ENOSYS): the profile refuses statx (IORING_OP_STATX), openat2 (IORING_OP_OPENAT2), splice (IORING_OP_SPLICE), ..." },
	/* refused by the default: an allow list of a few calls */
	{ "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"read\",\"write\","
	  "\"openat\",\"io_uring_setup\",\"io_uring_enter\",\"io_uring_register\"],"
	  "\"action\":\"SCMP_ACT_ALLOW\"}]}",
	  ENOSYS_RET,
	  "io_uring refused (ENOSYS): the profile refuses pread64 (IORING_OP_READV), readv (IORING_OP_READV), preadv (IORING_OP_READV), ..." },
	/* madvise refused for one advice only */
	{ ALLOW_WITH("{\"names\":[\"madvise\"],\"action\":\"SCMP_ACT_ERRNO\","
		     "\"args\":[{\"index\":2,\"value\":4,\"op\":\"SCMP_CMP_EQ\"}]}"),
	  ENOSYS_RET, "io_uring refused (ENOSYS): the profile refuses madvise (IORING_OP_MADVISE)" },
	/* io_uring_enter alone let through (a ring from before the bind) */
	{ ALLOW_WITH("{\"names\":[\"io_uring_setup\",\"io_uring_register\"],\"action\":\"SCMP_ACT_ERRNO\"},"
		     "{\"names\":[\"waitid\"],\"action\":\"SCMP_ACT_TRAP\"}"),
	  ENOSYS_RET, "io_uring refused (ENOSYS): the profile refuses waitid (IORING_OP_WAITID)" },
	/* refuses nothing io_uring does: io_uring as the profile says */
	{ ALLOW_WITH("{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_KILL\"},"
		     "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_LOG\"}"),
	  SECCOMP_RET_ALLOW, NULL },
	/* refuses io_uring itself: its own answer kept, nothing else to do */
	{ ALLOW_WITH("{\"names\":[\"io_uring_setup\",\"io_uring_enter\",\"io_uring_register\","
		     "\"socket\"],\"action\":\"SCMP_ACT_ERRNO\"}"),
	  EACCES_RET, NULL },
};

TEST(uring_under_hand_profiles)
{
	const char *deny[] = { "fs:read=deny" };	/* no class needs a call */
	struct capfence_seccomp *s;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, deny, 1, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < sizeof(uring_profiles) / sizeof(uring_profiles[0]); i++) {
		s = NULL;
		ASSERT_EQ(0, capfence_seccomp_compile(uring_profiles[i].json,
						      strlen(uring_profiles[i].json),
						      &e, &s, err, sizeof(err)))
			TH_LOG("profile %zu: %s", i, err);
		TH_LOG("profile %zu", i);
		uring_answers(_metadata, s, uring_profiles[i].want, uring_profiles[i].note);
		/* the rest of the profile as before */
		EXPECT_NE(0xffffffff, run(s, "getpid", 0));
		capfence_seccomp_free(s);
	}
	/* the conditional socket rule still answers socket(AF_NETLINK) itself */
	s = NULL;
	ASSERT_EQ(0, capfence_seccomp_compile(uring_profiles[0].json,
					      strlen(uring_profiles[0].json),
					      &e, &s, err, sizeof(err)));
	EXPECT_EQ(EACCES_RET, run(s, "socket", 16));
	EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, "socket", 2));
	EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, "getpid", 0));
	capfence_seccomp_free(s);
	CF_NO_LEAKS();
}

/*
 * Each call an io_uring opcode performs, refused alone under an allowing
 * default, refuses io_uring and names the first opcode (in opcode order)
 * that performs it: the legacy calls of the same effect too (unlink and
 * rmdir for UNLINKAT, open and creat for OPENAT, the dups for
 * FIXED_FD_INSTALL, the sleeps for the timeouts).
 */
static const struct {
	const char *call, *op;
} uring_calls[] = {
	{ "read", "READV" }, { "pread64", "READV" }, { "readv", "READV" },
	{ "preadv", "READV" }, { "preadv2", "READV" },
	{ "write", "WRITEV" }, { "pwrite64", "WRITEV" }, { "writev", "WRITEV" },
	{ "pwritev", "WRITEV" }, { "pwritev2", "WRITEV" },
	{ "fsync", "FSYNC" }, { "fdatasync", "FSYNC" },
	{ "poll", "POLL_ADD" }, { "ppoll", "POLL_ADD" }, { "select", "POLL_ADD" },
	{ "pselect6", "POLL_ADD" },
	{ "sync_file_range", "SYNC_FILE_RANGE" },
	{ "sendmsg", "SENDMSG" }, { "recvmsg", "RECVMSG" },
	{ "nanosleep", "TIMEOUT" }, { "clock_nanosleep", "TIMEOUT" },
	{ "accept4", "ACCEPT" }, { "accept", "ACCEPT" },
	{ "connect", "CONNECT" }, { "fallocate", "FALLOCATE" },
	{ "openat", "OPENAT" }, { "open", "OPENAT" }, { "creat", "OPENAT" },
	{ "close", "CLOSE" }, { "close_range", "CLOSE" },
	{ "statx", "STATX" }, { "newfstatat", "STATX" }, { "stat", "STATX" },
	{ "lstat", "STATX" }, { "fstat", "STATX" },
	{ "fadvise64", "FADVISE" }, { "madvise", "MADVISE" },
	{ "sendto", "SEND" }, { "recvfrom", "RECV" }, { "openat2", "OPENAT2" },
	{ "epoll_ctl", "EPOLL_CTL" }, { "splice", "SPLICE" }, { "tee", "TEE" },
	{ "shutdown", "SHUTDOWN" },
	{ "renameat2", "RENAMEAT" }, { "renameat", "RENAMEAT" }, { "rename", "RENAMEAT" },
	{ "unlinkat", "UNLINKAT" }, { "unlink", "UNLINKAT" }, { "rmdir", "UNLINKAT" },
	{ "mkdirat", "MKDIRAT" }, { "mkdir", "MKDIRAT" },
	{ "symlinkat", "SYMLINKAT" }, { "symlink", "SYMLINKAT" },
	{ "linkat", "LINKAT" }, { "link", "LINKAT" },
	{ "fsetxattr", "FSETXATTR" },
	{ "setxattr", "SETXATTR" }, { "lsetxattr", "SETXATTR" },
	{ "fgetxattr", "FGETXATTR" },
	{ "getxattr", "GETXATTR" }, { "lgetxattr", "GETXATTR" },
	{ "socket", "SOCKET" },
	{ "ioctl", "URING_CMD" }, { "getsockopt", "URING_CMD" },
	{ "setsockopt", "URING_CMD" },
	{ "waitid", "WAITID" }, { "wait4", "WAITID" },
	{ "futex", "FUTEX_WAIT" }, { "futex_waitv", "FUTEX_WAITV" },
	{ "dup", "FIXED_FD_INSTALL" }, { "dup2", "FIXED_FD_INSTALL" },
	{ "dup3", "FIXED_FD_INSTALL" }, { "fcntl", "FIXED_FD_INSTALL" },
	{ "ftruncate", "FTRUNCATE" }, { "bind", "BIND" }, { "listen", "LISTEN" },
};

TEST(uring_each_call_an_opcode_performs)
{
	const char *deny[] = { "fs:read=deny" };	/* no class needs a call */
	char err[CAPFENCE_ERR_MAX], json[256], note[160];
	struct capfence_seccomp *s;
	struct capfence_epoch e;
	size_t i;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, deny, 1, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < sizeof(uring_calls) / sizeof(uring_calls[0]); i++) {
		s = NULL;
		snprintf(json, sizeof(json),
			 ALLOW_WITH("{\"names\":[\"%s\"],\"action\":\"SCMP_ACT_ERRNO\"}"),
			 uring_calls[i].call);
		ASSERT_EQ(0, capfence_seccomp_compile(json, strlen(json), &e, &s, err,
						      sizeof(err)))
			TH_LOG("%s: %s", uring_calls[i].call, err);
		snprintf(note, sizeof(note),
			 "io_uring refused (ENOSYS): the profile refuses %s (IORING_OP_%s)",
			 uring_calls[i].call, uring_calls[i].op);
		TH_LOG("%s", uring_calls[i].call);
		uring_answers(_metadata, s, ENOSYS_RET, note);
		EXPECT_EQ(EACCES_RET, run(s, uring_calls[i].call, 0));
		capfence_seccomp_free(s);
	}
	CF_NO_LEAKS();
}

/*
 * A bound task's own filters: allowed by default (the program has no rule
 * on seccomp(2) or prctl(2), and a profile may condition prctl's argument
 * 0), refused with no_new_filters (more rules; argument 0 is capfence's).
 */
TEST(new_filters_stacked_by_default_refused_on_request)
{
	static const char allow[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	static const char deny[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
		"{\"names\":[\"prctl\"],\"action\":\"SCMP_ACT_ALLOW\","
		"\"args\":[{\"index\":0,\"value\":15,\"op\":\"SCMP_CMP_EQ\"}]}]}";
	const char *rules[] = { "net:connect=deny" };
	struct capfence_seccomp_opts o = { .sz = sizeof(o) };
	struct capfence_seccomp *s = NULL, *strict = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t len, strict_len;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_opts(allow, strlen(allow), &e, &o, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	o.no_new_filters = true;
	ASSERT_EQ(0, capfence_seccomp_compile_opts(allow, strlen(allow), &e, &o, &strict,
						   err, sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_program(s, &len);
	capfence_seccomp_program(strict, &strict_len);
	EXPECT_LT(len, strict_len);
	capfence_seccomp_free(s);
	capfence_seccomp_free(strict);
	s = NULL;
	/* NULL opts: the default, as with capfence_seccomp_compile() */
	EXPECT_EQ(0, capfence_seccomp_compile_opts(deny, strlen(deny), &e, NULL, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	s = NULL;
	EXPECT_EQ(-EINVAL, capfence_seccomp_compile_opts(deny, strlen(deny), &e, &o, &s, err,
							 sizeof(err)));
	EXPECT_STREQ("profile: syscalls[0]: conditions on argument 0 of prctl are not supported (capfence refuses new seccomp filters there itself)",
		     err);
	EXPECT_EQ(NULL, s);
	CF_NO_LEAKS();
}

/*
 * SCMP_ACT_LOG, as a rule's action or the default, is allowed unlogged:
 * the kernel's AUDIT_SECCOMP record of each such call would be outside
 * every sandbox's audit budget.
 */
TEST(log_action_is_allowed_unlogged)
{
	static const char prof[] =
		"{\"defaultAction\":\"SCMP_ACT_LOG\",\"syscalls\":["
		"{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_LOG\"},"
		"{\"names\":[\"keyctl\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	const struct sock_filter *p;
	size_t len, i, n;
	bool logs = false;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(prof, strlen(prof), &e, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	n = capfence_seccomp_notes(s);
	ASSERT_LE(2, n);
	EXPECT_STREQ("defaultAction: SCMP_ACT_LOG -> SCMP_ACT_ALLOW (the kernel's records of it would be outside every audit budget)",
		     capfence_seccomp_note(s, 0));
	EXPECT_STREQ("syscalls[0] (getppid): SCMP_ACT_LOG -> SCMP_ACT_ALLOW (the kernel's records of it would be outside every audit budget)",
		     capfence_seccomp_note(s, 1));
	/* no instruction of the program returns SECCOMP_RET_LOG */
	p = capfence_seccomp_program(s, &len);
	for (i = 0; i < len / sizeof(*p); i++)
		logs |= p[i].code == (BPF_RET | BPF_K) &&
			(p[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG;
	EXPECT_FALSE(logs);
	capfence_seccomp_free(s);
	CF_NO_LEAKS();
}

/*
 * --seccomp-caps names capabilities: a typo would resolve an engine's rules
 * for a set nobody meant, so it is refused; empty is the empty set.
 */
TEST(seccomp_caps_are_capability_names)
{
	static const char allow[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	static const struct {
		const char *caps, *err;
	} cases[] = {
		{ "", NULL },
		{ "CAP_SYS_ADMIN", NULL },
		{ "CAP_KILL,CAP_CHECKPOINT_RESTORE,", NULL },
		{ "CAP_SYS_ADMN", "profile: 'CAP_SYS_ADMN' is not a capability name (CAP_CHOWN, CAP_SYS_ADMIN, ...; comma-separated)" },
		{ "CAP_KILL,,CAP_CHOWN", "profile: '' is not a capability name (CAP_CHOWN, CAP_SYS_ADMIN, ...; comma-separated)" },
		{ "cap_kill", "profile: 'cap_kill' is not a capability name (CAP_CHOWN, CAP_SYS_ADMIN, ...; comma-separated)" },
		{ "CAP_KILL CAP_CHOWN", "profile: 'CAP_KILL CAP_CHOWN' is not a capability name (CAP_CHOWN, CAP_SYS_ADMIN, ...; comma-separated)" },
	};
	const char *rules[] = { "fs:read=open" };
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, rules, 1, err, sizeof(err)));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct capfence_seccomp_opts o = { .sz = sizeof(o), .caps = cases[i].caps };
		struct capfence_seccomp *s = NULL;
		int ret = capfence_seccomp_compile_opts(allow, strlen(allow), &e, &o, &s,
							err, sizeof(err));

		if (!cases[i].err) {
			EXPECT_EQ(0, ret) TH_LOG("'%s': %s", cases[i].caps, err);
		} else {
			EXPECT_EQ(-EINVAL, ret) TH_LOG("'%s'", cases[i].caps);
			EXPECT_STREQ(cases[i].err, err);
			EXPECT_EQ(NULL, s);
		}
		capfence_seccomp_free(s);
	}
	CF_NO_LEAKS();
}

/* ---- the learner's profile -------------------------------------------- */

#define X32_BIT 0x40000000

/* the profile of l, as text (caller frees) and parsed */
static struct json_object *learned(struct __test_metadata *_metadata,
				   const struct capfence_learn *l, char **text)
{
	int n = capfence_client_learn_profile(l, NULL, 0);

	*text = NULL;
	EXPECT_LT(0, n);
	if (n <= 0)
		return NULL;
	*text = malloc((size_t)n + 1);
	EXPECT_NE(NULL, *text);
	if (!*text)
		return NULL;
	EXPECT_EQ(n, capfence_client_learn_profile(l, *text, (size_t)n + 1));
	EXPECT_EQ((size_t)n, strlen(*text));
	return json_tokener_parse(*text);
}

static const char *str_at(struct json_object *a, size_t i)
{
	return json_object_get_string(json_object_array_get_idx(a, i));
}

TEST(learned_calls_become_a_default_enosys_profile)
{
	struct capfence_learn *l = capfence__learn_alloc(true, 0);
	struct json_object *o, *v, *rules, *names;
	char *text;

	ASSERT_NE(NULL, l);
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 59);	/* execve */
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 0);	/* read */
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 0);
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, X32_BIT | 1); /* x32 write */
	capfence__learn_note_call(l, AUDIT_ARCH_I386, 11);	/* i386 execve */
	capfence__learn_note_call(l, AUDIT_ARCH_AARCH64, 64);	/* not x86: out */
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 5000);	/* out of range */
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, -1);
	EXPECT_EQ(4, capfence_client_learn_syscalls(l));

	o = learned(_metadata, l, &text);
	ASSERT_NE(NULL, o);
	ASSERT_TRUE(json_object_object_get_ex(o, "defaultAction", &v));
	EXPECT_STREQ("SCMP_ACT_ERRNO", json_object_get_string(v));
	ASSERT_TRUE(json_object_object_get_ex(o, "defaultErrnoRet", &v));
	EXPECT_EQ(ENOSYS, json_object_get_int(v));
	ASSERT_TRUE(json_object_object_get_ex(o, "architectures", &v));
	ASSERT_EQ(3, json_object_array_length(v));
	EXPECT_STREQ("SCMP_ARCH_X86_64", str_at(v, 0));
	EXPECT_STREQ("SCMP_ARCH_X32", str_at(v, 1));
	EXPECT_STREQ("SCMP_ARCH_X86", str_at(v, 2));
	ASSERT_TRUE(json_object_object_get_ex(o, "syscalls", &rules));
	ASSERT_EQ(1, json_object_array_length(rules));
	ASSERT_TRUE(json_object_object_get_ex(json_object_array_get_idx(rules, 0),
					      "names", &names));
	/* sorted, each once whatever its architectures; exit and exit_group
	 * always (the recorder's filter lets them pass unseen) */
	ASSERT_EQ(5, json_object_array_length(names));
	EXPECT_STREQ("execve", str_at(names, 0));
	EXPECT_STREQ("exit", str_at(names, 1));
	EXPECT_STREQ("exit_group", str_at(names, 2));
	EXPECT_STREQ("read", str_at(names, 3));
	EXPECT_STREQ("write", str_at(names, 4));
	json_object_put(o);
	free(text);
	capfence_client_learn_free(l);
	CF_NO_LEAKS();
}

/* snprintf's contract: the length needed, a cut text still NUL-ended */
TEST(learned_profile_into_a_short_buffer)
{
	struct capfence_learn *l = capfence__learn_alloc(true, 0);
	char small[16];
	int n;

	ASSERT_NE(NULL, l);
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 60);	/* exit */
	n = capfence_client_learn_profile(l, small, sizeof(small));
	EXPECT_LT((int)sizeof(small), n);
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(n, capfence_client_learn_profile(l, NULL, 0));
	capfence_client_learn_free(l);
	/* a run without CAPFENCE_LEARN_SYSCALLS has none */
	l = capfence__learn_alloc(false, 0);
	ASSERT_NE(NULL, l);
	EXPECT_EQ(-ENODATA, capfence_client_learn_profile(l, small, sizeof(small)));
	EXPECT_EQ(0, capfence_client_learn_syscalls(l));
	capfence_client_learn_free(l);
	CF_NO_LEAKS();
}

/* the compiler takes it back: the calls seen pass, any other is ENOSYS */
TEST(learned_profile_compiles_and_allows_what_was_seen)
{
	static const char *const seen[] = { "read", "write", "openat", "close",
					    "execve", "exit_group", "connect" };
	struct capfence_learn *l = capfence__learn_alloc(true, 0);
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX], *text;
	struct json_object *o;
	size_t i;

	ASSERT_NE(NULL, l);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		capfence__learn_note_call(l, AUDIT_ARCH_X86_64,
					  seccomp_syscall_resolve_name(seen[i]));
	o = learned(_metadata, l, &text);
	ASSERT_NE(NULL, o);
	json_object_put(o);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, NULL, 0, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(text, strlen(text), &e, &s, err,
					      sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, seen[i], 0)) TH_LOG("%s", seen[i]);
	EXPECT_EQ(ENOSYS_RET, run(s, "mkdir", 0));
	EXPECT_EQ(ENOSYS_RET, run(s, "ptrace", 0));
	capfence_seccomp_free(s);
	free(text);
	capfence_client_learn_free(l);
	CF_NO_LEAKS();
}

/*
 * A class the learned epoch grants (left open, or with an op=learn
 * record) needs its calls in the profile, seen or not: the epoch installs
 * with it.
 */
TEST(learned_profile_has_the_calls_of_the_classes_it_grants)
{
	struct capfence_learn *l = capfence__learn_alloc(true,
		(1u << CAPFENCE_CLASS_FS_READ) | (1u << CAPFENCE_CLASS_NET_CONNECT) |
		(1u << CAPFENCE_CLASS_FS_WRITE));
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX], *text;
	const char *const *sys;
	struct json_object *o;

	ASSERT_NE(NULL, l);
	capfence__learn_note_call(l, AUDIT_ARCH_X86_64, 60);	/* exit */
	o = learned(_metadata, l, &text);
	ASSERT_NE(NULL, o);
	json_object_put(o);
	epoch(_metadata, &e);	/* net:connect token, fs:read and fs:write open */
	ASSERT_EQ(0, capfence_seccomp_compile(text, strlen(text), &e, &s, err,
					      sizeof(err))) TH_LOG("%s", err);
	for (sys = capfence__class_syscalls(CAPFENCE_CLASS_NET_CONNECT); *sys; sys++)
		EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, *sys, 0)) TH_LOG("%s", *sys);
	EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, "exit", 0));
	EXPECT_EQ(SECCOMP_RET_ALLOW, run(s, "mkdir", 0));	/* fs:write's */
	EXPECT_EQ(ENOSYS_RET, run(s, "ptrace", 0));
	capfence_seccomp_free(s);
	free(text);
	capfence_client_learn_free(l);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
