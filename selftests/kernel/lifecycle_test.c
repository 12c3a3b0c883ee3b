// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle: while a task is bound the hooks cannot be detached and the
 * module cannot be unloaded; attaching twice is harmless; once nothing is
 * bound, detach and unload succeed. Runs last: it leaves the module out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "common.h"
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

TEST(lifecycle)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_status s;
	struct cft_agent a;
	struct cft_nl nl;
	uint64_t e;
	int i, err = -1;

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
	EXPECT_EQ(0, system("capfence attach >/dev/null"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_TRUE(s.attached);
	EXPECT_TRUE(cft_agent_stop_clean(&a));

	/* credentials are freed after a grace period */
	for (i = 0; i < 50 && err; i++) {
		err = cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				 NULL, NULL);
		if (err)
			usleep(100000);
	}
	EXPECT_EQ(0, err);
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	EXPECT_EQ(0, s.bound);
	/* only capfence's own programs are accepted as its hooks */
	EXPECT_EQ(-EINVAL, attach_foreign(&nl));
	EXPECT_NE(NULL, strstr(nl.ext, "not one of capfence's own programs"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	/* binding fails closed without hooks */
	{
		struct cft_reply r;

		EXPECT_EQ(-ENOLINK, cft_exec_set(&nl, e, NULL, 0, &r));
	}
	/* re-attach and detach through the CLI, which also unpins */
	EXPECT_EQ(0, system("capfence attach >/dev/null && capfence detach >/dev/null"));
	cft_nl_close(&nl);
	/* programs hold the module until they are freed */
	err = -1;
	for (i = 0; i < 50 && err; i++) {
		err = rmmod();
		if (err)
			usleep(100000);
	}
	EXPECT_EQ(0, err);
	EXPECT_NE(0, access("/sys/kernel/btf/capfence", F_OK));
	EXPECT_EQ(0, system("insmod /capfence.ko && capfence attach >/dev/null"));
}

CFT_MAIN
