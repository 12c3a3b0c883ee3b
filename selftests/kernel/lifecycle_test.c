// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle: while a task is bound the hooks cannot be detached and the
 * module cannot be unloaded; attaching twice is harmless; once nothing is
 * bound, detach and unload succeed. Runs last: it takes the module out
 * and puts it back. CFT_DIE_AT=detached or =unloaded stops it there, with
 * the hooks detached or the module out (run-vm-tests' isolation check).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
/* three BPF loads and a module reload: about 60 s on a busy machine */
#define CFT_TEST_SECONDS 180
#include "harness.h"
#include "noop-lsm.skel.h"
#include "lsm_hooks.h"

/*
 * Hand the module the links of programs that are not capfence's, on every
 * hook it needs: refused, and the hooks stay detached.
 */
static int attach_foreign(struct cft_nl *nl)
{
	struct noop_lsm_bpf *skel = noop_lsm_bpf__open();
	struct bpf_program *prog;
	struct nlmsghdr *nlh;
	struct nlattr *arr;
	size_t i = 0;
	int err;

	if (!skel)
		return -ENOENT;
	cf_lsm_skip_missing_hooks(skel->obj);
	err = noop_lsm_bpf__load(skel) ?: noop_lsm_bpf__attach(skel);
	if (!err) {
		nlh = cft_nl_req(nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
		bpf_object__for_each_program(prog, skel->obj) {
			struct bpf_link *l = ((struct bpf_link **)&skel->links)[i++];

			if (l)
				mnl_attr_put_u32(nlh, (uint16_t)i,
						 (uint32_t)bpf_link__fd(l));
		}
		mnl_attr_nest_end(nlh, arr);
		err = cft_nl_talk(nl, nlh, NULL, NULL);
	}
	noop_lsm_bpf__destroy(skel);
	return err;
}

static int rmmod(void)
{
	return syscall(__NR_delete_module, "capfence", O_NONBLOCK) ? -errno : 0;
}

/* The module's reference count (its programs not yet freed), or -1. */
static int refcnt(void)
{
	FILE *f = fopen("/sys/module/capfence/refcnt", "r");
	int ref = -1;

	if (f) {
		if (fscanf(f, "%d", &ref) != 1)
			ref = -1;
		fclose(f);
	}
	return ref;
}

/* Move a new session keyring to this process, over and over, until killed. */
static void session_to_parent_loop(void)
{
	for (;;) {
		pid_t pid = fork();

		if (!pid) {
			syscall(SYS_keyctl, 1 /* JOIN_SESSION_KEYRING */, 0);
			syscall(SYS_keyctl, 18 /* SESSION_TO_PARENT */);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		/* the transfer runs on the way back to user space */
		getpid();
		usleep(1000);
	}
}

/* Detach over netlink, retrying while a reservation is in flight. */
static int detach_retry(struct cft_nl *nl, int ms)
{
	int i, err = -EBUSY;

	for (i = 0; i < ms / 20 && err == -EBUSY; i++) {
		err = cft_nl_talk(nl, cft_nl_req(nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				  NULL, NULL);
		if (err == -EBUSY)
			usleep(20000);
	}
	return err;
}

/*
 * keyctl(KEYCTL_SESSION_TO_PARENT) reserves credential state for any
 * caller (cred_alloc_blank), outside the control plane's lock: a
 * reservation made while a detach counts the entries must not survive it
 * without hooks, which would hold every later detach off. Detach and
 * attach race a loop of session-to-parent; each detach succeeds within a
 * moment, and the last one finds nothing left.
 */
TEST(session_to_parent_across_detach)
{
	uint64_t foreign0 = 0, foreign1 = 0;
	struct capfence_status s;
	struct cft_nl nl;
	pid_t looper;
	int round;

	CFT_MODULE_ONLY("its hooks cannot be detached, nor capfence unloaded");
	/* run-vm-tests' isolation check stops global.lifecycle on purpose */
	if (getenv("CFT_DIE_AT"))
		SKIP(return, "CFT_DIE_AT is set: only global.lifecycle runs");

	ASSERT_EQ(0, cft_open(&nl));
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &foreign0));
	looper = fork();
	ASSERT_LE(0, looper);
	if (!looper)
		session_to_parent_loop();
	cft_waiting("3 rounds of detach and attach beside a keyctl loop");
	for (round = 0; round < 3; round++) {
		EXPECT_EQ(0, detach_retry(&nl, cft_ms(2000))) TH_LOG("round %d", round);
		/* loading the programs is slow enough without the loop */
		kill(looper, SIGSTOP);
		EXPECT_EQ(0, system("capfence attach >/dev/null"));
		kill(looper, SIGCONT);
		usleep(200000);
	}
	cft_waited();
	kill(looper, SIGKILL);
	waitpid(looper, NULL, 0);
	/* the looper's credentials go after a grace period */
	EXPECT_EQ(0, detach_retry(&nl, cft_ms(5000)));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	EXPECT_EQ(0, s.bound);
	EXPECT_EQ(0, system("capfence attach >/dev/null"));
	/* capfence's own programs, run while attach and detach are under way,
	 * are not foreign calls */
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &foreign1));
	EXPECT_EQ(foreign0, foreign1);
	cft_nl_close(&nl);
}

TEST(lifecycle)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_status s;
	struct cft_agent a;
	struct cft_nl nl;
	uint64_t e;
	int i, n, err = -1;

	CFT_MODULE_ONLY("its hooks cannot be detached, nor capfence unloaded");

	ASSERT_EQ(0, cft_open(&nl));
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));

	/* bound task: no detach, no unload */
	EXPECT_EQ(-EBUSY, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH,
						      0), NULL, NULL));
	EXPECT_NE(NULL, strstr(nl.ext, "tasks are bound"));
	EXPECT_EQ(-EWOULDBLOCK, rmmod());
	/* attach while attached */
	EXPECT_EQ(-EALREADY, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_ATTACH,
							0), NULL, NULL));
	cft_waiting("capfence attach while attached");
	EXPECT_EQ(0, system("capfence attach >/dev/null"));
	cft_waited();
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_TRUE(s.attached);
	EXPECT_TRUE(cft_agent_stop_clean(&a));

	/* credentials are freed after a grace period */
	n = cft_ms(5000) / 100;
	cft_waiting("the hooks to detach once the agent's credential is freed");
	for (i = 0; i < n && err; i++) {
		err = cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				 NULL, NULL);
		if (err)
			usleep(100000);
	}
	cft_waited();
	EXPECT_EQ(0, err);
	cft_die_at("detached");
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	EXPECT_EQ(0, s.bound);
	/* only capfence's own programs are accepted as its hooks */
	cft_waiting("the no-op BPF-LSM programs to load and be offered as hooks");
	EXPECT_EQ(-EINVAL, attach_foreign(&nl));
	cft_waited();
	EXPECT_NE(NULL, strstr(nl.ext, "not one of capfence's own programs"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	/* binding fails closed without hooks */
	{
		struct cft_reply r;

		EXPECT_EQ(-ENOLINK, cft_exec_set(&nl, e, NULL, 0, &r));
	}
	/* re-attach and detach through the CLI, which also unpins */
	cft_waiting("capfence attach, then capfence detach");
	EXPECT_EQ(0, system("capfence attach >/dev/null && capfence detach >/dev/null"));
	cft_nl_close(&nl);
	/*
	 * Programs hold the module until they are freed: after a grace
	 * period and a work item, which a loaded machine stretches well past
	 * the 5 s `capfence detach` waits. What is tested is that they go,
	 * not how fast: up to 30 s (scaled) of the program's budget.
	 */
	err = -1;
	cft_waiting("rmmod capfence once its programs are freed");
	for (i = 0; i < cft_ms(30000) / 100 && err; i++) {
		err = rmmod();
		if (err)
			usleep(100000);
	}
	cft_waited();
	EXPECT_EQ(0, err) TH_LOG("rmmod: %s; module references left: %d",
				 strerror(-err), refcnt());
	EXPECT_NE(0, access("/sys/kernel/btf/capfence", F_OK));
	cft_die_at("unloaded");
	cft_waiting("insmod " CFT_MODULE_PATH ", then capfence attach");
	EXPECT_EQ(0, system("insmod " CFT_MODULE_PATH " && capfence attach >/dev/null"));
	cft_waited();
}

CFT_MAIN
