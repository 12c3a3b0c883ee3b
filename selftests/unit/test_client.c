// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence's client on the host, where capfence.ko is not loaded: the
 * errors and messages an orchestrator sees, the version calls, and that
 * nothing leaks on the failure paths. (The requests themselves are tested
 * against the module in the VM.)
 */
#include <errno.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

#include "cf_test.h"

static bool module_loaded(void)
{
	return access("/sys/module/capfence", F_OK) == 0;
}

TEST(version)
{
	EXPECT_STREQ(CAPFENCE_LIB_VERSION_STRING, capfence_version());
	EXPECT_EQ(CAPFENCE_LIB_VERSION, capfence_version_number());
	EXPECT_EQ(10400u, CAPFENCE_LIB_VERSION);
}

TEST(open_without_module)
{
	struct capfence_client *c = (void *)1;
	char err[CAPFENCE_ERR_MAX] = "";

	if (module_loaded())
		SKIP(return, "capfence.ko is loaded on this host");
	EXPECT_EQ(-ENOENT, capfence_client_open(&c, err, sizeof(err)));
	EXPECT_EQ(NULL, c);
	EXPECT_STREQ("the capfence module is not loaded (modprobe capfence)", err);
	/* a NULL message buffer is fine */
	EXPECT_EQ(-ENOENT, capfence_client_open(&c, NULL, 0));
	CF_NO_LEAKS();
}

TEST(events_without_module)
{
	struct capfence_events *ev = (void *)1;
	char err[CAPFENCE_ERR_MAX] = "";

	if (module_loaded())
		SKIP(return, "capfence.ko is loaded on this host");
	EXPECT_EQ(-ENOENT, capfence_events_open(&ev, err, sizeof(err)));
	EXPECT_EQ(NULL, ev);
	EXPECT_NE(NULL, strstr(err, "not loaded"));
	CF_NO_LEAKS();
}

TEST(release_calls_take_null)
{
	struct capfence_task_info ti;

	capfence_client_close(NULL);
	capfence_events_close(NULL);
	capfence_free(NULL);
	capfence_task_release(NULL);
	memset(&ti, 0, sizeof(ti));
	capfence_task_release(&ti);
	EXPECT_EQ(0u, ti.n);
}

TEST(event_names)
{
	EXPECT_STREQ("delegate_reject", capfence_event_name(CAPFENCE_EV_DELEGATE_REJECT));
	EXPECT_STREQ("epoch_install", capfence_event_name(CAPFENCE_EV_EPOCH_INSTALL));
	EXPECT_STREQ("?", capfence_event_name(__CAPFENCE_EV_MAX));
	EXPECT_STREQ("?", capfence_event_name(-1));
}

/*
 * The change commands' options (since 1.4): a bad options struct is
 * refused before the handle is touched (none is needed here).
 */
TEST(change_opts_bad_input)
{
	struct newer_opts {
		struct capfence_change_opts o;
		uint64_t later_field;	/* a newer header's */
	} big = { .o = { .sz = sizeof(big) }, .later_field = 7 };
	struct capfence_seccomp *sc = (struct capfence_seccomp *)&big;
	CAPFENCE_CHANGE_OPTS(with_sc, .seccomp = sc);
	CAPFENCE_CHANGE_OPTS(ok, .fleet_rev = 3);
	struct capfence_change_opts tiny = { .sz = 1 };
	struct capfence_result r;
	char err[CAPFENCE_ERR_MAX] = "";
	char want[CAPFENCE_ERR_MAX];

	EXPECT_EQ(sizeof(struct capfence_change_opts), ok.sz);
	EXPECT_EQ(3, ok.fleet_rev);
	EXPECT_EQ(NULL, ok.seccomp);
	EXPECT_EQ(-EINVAL, capfence_client_key_remove_opts(NULL, 1, &tiny, err, sizeof(err)));
	EXPECT_STREQ("options: sz 1 is less than sizeof(size_t)", err);
	EXPECT_EQ(-EINVAL, capfence_client_epoch_activate_opts(NULL, 1, &big.o, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "options: byte %zu of %zu is not 0: a field this library (%s) does not know",
		 offsetof(struct newer_opts, later_field), sizeof(big), CAPFENCE_LIB_VERSION_STRING);
	EXPECT_STREQ(want, err);
	EXPECT_EQ(-EINVAL, capfence_client_key_install_opts(NULL, NULL, &with_sc, err, sizeof(err)));
	EXPECT_STREQ("options: seccomp is an epoch install option", err);
	EXPECT_EQ(-EINVAL, capfence_client_epoch_install_opts(NULL, NULL, &tiny, NULL, 0));
	EXPECT_EQ(-EINVAL, capfence_client_revoke_opts(NULL, 1, &with_sc, &r));
	EXPECT_EQ(-EINVAL, r.err);
	EXPECT_EQ(-1, r.reason);
	EXPECT_STREQ("options: seccomp is an epoch install option", r.message);
}

TEST_HARNESS_MAIN
