// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence's client on the host, where capfence.ko is not loaded: the
 * errors and messages an orchestrator sees, the version calls, and that
 * nothing leaks on the failure paths. (The requests themselves are tested
 * against the module in the VM.)
 */
#include <errno.h>
#include <string.h>
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

TEST_HARNESS_MAIN
