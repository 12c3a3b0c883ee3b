// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence's client on the host, where capfence.ko is not loaded: the
 * errors and messages an orchestrator sees, the version calls, and that
 * nothing leaks on the failure paths. (The requests themselves are tested
 * against the module in the VM.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <libmnl/libmnl.h>

#include "cf_attrs.h"
#include "cf_test.h"

static bool module_loaded(void)
{
	return access("/sys/module/capfence", F_OK) == 0;
}

TEST(version)
{
	EXPECT_STREQ(CAPFENCE_LIB_VERSION_STRING, capfence_version());
	EXPECT_EQ(CAPFENCE_LIB_VERSION, capfence_version_number());
	EXPECT_EQ(10700u, CAPFENCE_LIB_VERSION);
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

/*
 * A caller of 1.1 passes struct capfence_fleet_set without asked_ns (1.2
 * added it without a new symbol version): 1 reads it only with the flag
 * of 1.2, never past the end of the caller's 1.1 struct (ASan sees it).
 */
TEST(fleet_set_reads_no_field_past_a_callers_layout)
{
	size_t v11 = offsetof(struct capfence_fleet_set, asked_ns);
	struct capfence_fleet_set *fs = malloc(v11);
	char err[CAPFENCE_ERR_MAX] = "";

	ASSERT_NE(NULL, fs);
	memset(fs, 0, v11);
	fs->flags = 0x10;	/* refused before any request: no client needed */
	EXPECT_EQ(-EINVAL, capfence_client_fleet_set(NULL, fs, err, sizeof(err)));
	EXPECT_STREQ("unknown fleet set flags 0x10", err);
	free(fs);
}

/* The options of learn run follow the rules of every options struct. */
TEST(learn_opts_follow_the_options_rules)
{
	struct capfence_learn_opts o = { .sz = 4 };
	struct capfence_learn *l = NULL;
	char *const argv[] = { "true", NULL };
	char err[CAPFENCE_ERR_MAX] = "";
	unsigned char *b = (unsigned char *)&o;
	size_t end = offsetof(struct capfence_learn_opts, path_depth) + 1;

	EXPECT_EQ(-EINVAL, capfence_client_learn_run(NULL, &o, "true", argv, &l, err, sizeof(err)));
	EXPECT_STREQ("learn options: sz 4 is less than sizeof(size_t)", err);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = 0x80;
	EXPECT_EQ(-EINVAL, capfence_client_learn_run(NULL, &o, "true", argv, &l, err, sizeof(err)));
	EXPECT_STREQ("unknown learn flags 0x80", err);
	/* tail padding is where a newer header's field would be */
	if (end < sizeof(o)) {
		o.flags = 0;
		b[end] = 1;
		EXPECT_EQ(-EINVAL, capfence_client_learn_run(NULL, &o, "true", argv, &l, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, "is not 0: a field this library"));
	}
	EXPECT_EQ(NULL, l);
}

/* A capfence reply in buf with a genlmsghdr, for the attribute table. */
static struct nlmsghdr *reply(char *buf)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));

	g->cmd = CAPFENCE_CMD_STATUS_GET;
	return nlh;
}

TEST(attribute_table_reads_what_the_spec_says)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *st[CAPFENCE_STATS_A_MAX + 1];
	struct nlmsghdr *nlh = reply(buf);
	struct nlattr *nest;

	mnl_attr_put_strz(nlh, CAPFENCE_A_VERSION, "1.0");
	mnl_attr_put_u64(nlh, CAPFENCE_A_FENCE, 7);
	mnl_attr_put_u32(nlh, CAPFENCE_A_MAX + 5, 1);	/* a newer kernel's: skipped */
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_STATS);
	mnl_attr_put_u64(nlh, CAPFENCE_STATS_A_HELD_CAPS, 3);
	mnl_attr_nest_end(nlh, nest);
	ASSERT_EQ(0, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
	EXPECT_STREQ("1.0", mnl_attr_get_str(tb[CAPFENCE_A_VERSION]));
	EXPECT_EQ(7u, mnl_attr_get_u64(tb[CAPFENCE_A_FENCE]));
	EXPECT_EQ(NULL, tb[CAPFENCE_A_EPOCH_ID]);
	ASSERT_EQ(0, capfence__attrs_parse_nest(&cf_attrs_stats, tb[CAPFENCE_A_STATS], st));
	EXPECT_EQ(3u, mnl_attr_get_u64(st[CAPFENCE_STATS_A_HELD_CAPS]));
	/* the first of a repeated attribute */
	nlh = reply(buf);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, 1);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, 2);
	ASSERT_EQ(0, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
	EXPECT_EQ(1u, mnl_attr_get_u64(tb[CAPFENCE_A_EPOCH_ID]));
}

TEST(attribute_table_refuses_a_wrong_type_or_size)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *cb[CAPFENCE_CAP_A_MAX + 1];
	unsigned char key[CAPFENCE_KEY_LEN - 1] = { 0 };
	struct nlmsghdr *nlh = reply(buf);
	struct nlattr *nest;

	/* a u32 where the spec says u64: the message, not a 0 */
	mnl_attr_put_u32(nlh, CAPFENCE_A_FENCE, 7);
	EXPECT_EQ(-EBADMSG, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
	/* a string without its NUL */
	nlh = reply(buf);
	mnl_attr_put(nlh, CAPFENCE_A_VERSION, 3, "1.0");
	EXPECT_EQ(-EBADMSG, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
	/* a fixed-size binary one byte short */
	nlh = reply(buf);
	mnl_attr_put(nlh, CAPFENCE_A_KEY, sizeof(key), key);
	EXPECT_EQ(-EBADMSG, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
	/* inside a nest: a held capability's net range of the wrong size */
	nlh = reply(buf);
	nest = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put(nlh, CAPFENCE_CAP_A_NET, 8, key);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EBADMSG, capfence__attrs_parse_nest(&cf_attrs_cap, nest, cb));
	EXPECT_FALSE(capfence__attr_valid(&cf_attrs_cap, mnl_attr_get_payload(nest)));
	/* a flag with a payload */
	nlh = reply(buf);
	mnl_attr_put_u8(nlh, CAPFENCE_A_DRY_RUN, 1);
	EXPECT_EQ(-EBADMSG, capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb));
}

TEST_HARNESS_MAIN
