// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall-policy compiler on the container engines' profile files as
 * Debian ships them (fetched at build time: tools/build/engine-profiles.sh),
 * under AddressSanitizer: each resolves for x86_64 and a capability set,
 * keeps ENOSYS, and says what it left out; malformed engine keys are one
 * line each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cf_test.h"

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

TEST_HARNESS_MAIN
