// SPDX-License-Identifier: GPL-2.0
/*
 * The control plane: status, epoch install (monotonic, atomic, validated),
 * activation, keys, task inspection, events, and who may do what:
 * CAP_MAC_ADMIN in the initial user namespace and an unbound caller. Each
 * command takes only its own attributes: any other is refused, naming it.
 * Epochs are retired when nothing refers to them, and their number is
 * bounded (epochs_max, epochs_keep).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/genetlink.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

FIXTURE(ctl) {
	struct cft_nl nl;
	struct capfence_key *key;
};

FIXTURE_SETUP(ctl)
{
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
}

FIXTURE_TEARDOWN(ctl)
{
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

TEST_F(ctl, status_attached)
{
	struct capfence_status s;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &s));
	EXPECT_TRUE(s.attached);
}

/*
 * Every command is validated strictly: a non-zero reserved field, an
 * attribute the family does not have and bytes after the last attribute
 * are each EINVAL, where a lenient family would ignore them.
 */
TEST_F(ctl, strict_validation)
{
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;

	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_STATUS_GET, 0);
	g = mnl_nlmsg_get_payload(nlh);
	g->reserved = 1;
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));

	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	mnl_attr_put_u32(nlh, CAPFENCE_A_MAX + 1, 0);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));

	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	/* two bytes that cannot be an attribute */
	memset((char *)nlh + nlh->nlmsg_len, 0, 4);
	nlh->nlmsg_len += 2;
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));

	/* the same requests, well formed, are answered */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	EXPECT_EQ(0, cft_nl_talk(&self->nl, nlh, NULL, NULL));
}

TEST_F(ctl, epoch_ids_strictly_increase)
{
	const char *rules[] = { "net:connect=open" };
	uint64_t e = cft_next_epoch(&self->nl);
	char ext[256];

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, ext, sizeof(ext)));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e + 1, rules, 1, ext,
				       sizeof(ext)));
	EXPECT_EQ(-ERANGE, cft_epoch_install(&self->nl, e + 1, rules, 1, ext,
					     sizeof(ext)));
	EXPECT_NE(NULL, strstr(ext, "not above the highest installed"));
	EXPECT_EQ(-ERANGE, cft_epoch_install(&self->nl, e, rules, 1, ext,
					     sizeof(ext)));
	EXPECT_EQ(e + 2, cft_next_epoch(&self->nl));
}

static int raw_install(struct cft_nl *nl, uint64_t id, int cls, int kind,
		       const struct capfence_net_range *net, const char *path,
		       int dup_class)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	struct nlattr *arr, *nest;

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	nest = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, (uint8_t)cls);
	mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, (uint8_t)kind);
	if (net)
		mnl_attr_put(nlh, CAPFENCE_RULE_A_NET, sizeof(*net), net);
	if (path)
		mnl_attr_put_strz(nlh, CAPFENCE_RULE_A_PATH, path);
	mnl_attr_nest_end(nlh, nest);
	if (dup_class) {
		nest = mnl_attr_nest_start(nlh, 2);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, (uint8_t)dup_class);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, CAPFENCE_RULE_OPEN);
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, arr);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

TEST_F(ctl, bad_install_changes_nothing)
{
	struct capfence_net_range ok = { .family = 4, .prefix_len = 8,
					 .port_max = 65535, .addr = { 127 } };
	struct capfence_net_range hostbits = ok;
	uint64_t e = cft_next_epoch(&self->nl);

	hostbits.addr[3] = 1;
	/* duplicate class */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, e, 1, CAPFENCE_RULE_OPEN,
				       NULL, NULL, 1));
	EXPECT_NE(NULL, strstr(self->nl.ext, "duplicate class"));
	/* unknown class: refused by the attribute policy */
	EXPECT_EQ(-ERANGE, raw_install(&self->nl, e, CAPFENCE_CLASS_MAX + 1,
				       CAPFENCE_RULE_OPEN, NULL, NULL, 0));
	/* unknown rule kind */
	EXPECT_EQ(-ERANGE, raw_install(&self->nl, e, 1, 7, NULL, NULL, 0));
	/* non-canonical CIDR */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, e, 1, CAPFENCE_RULE_TOKEN,
				       &hostbits, NULL, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "non-canonical"));
	/* a path on a net class */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, e, 1, CAPFENCE_RULE_TOKEN,
				       NULL, "/srv", 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "does not fit the class"));
	/* relative path */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, e, 3, CAPFENCE_RULE_TOKEN,
				       NULL, "srv", 0));
	/* a constraint on an open rule */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, e, 1, CAPFENCE_RULE_OPEN,
				       &ok, NULL, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "only token rules"));
	/* epoch 0 is "unbound" */
	EXPECT_EQ(-EINVAL, raw_install(&self->nl, 0, 1, CAPFENCE_RULE_OPEN,
				       NULL, NULL, 0));
	/* nothing of the above was installed */
	EXPECT_EQ(e, cft_next_epoch(&self->nl));
	EXPECT_EQ(0, raw_install(&self->nl, e, 1, CAPFENCE_RULE_TOKEN, &ok,
				 NULL, 0));
}

struct dump {
	int n;
	uint64_t last;
	int rules;
	int paths;		/* path constraints of the last epoch */
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *a;
	struct dump *d = data;

	cft_nl_parse(nlh, tb);
	d->n++;
	d->last = mnl_attr_get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	d->rules = 0;
	d->paths = 0;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		const struct nlattr *r, *c;

		if (mnl_attr_get_type(a) != CAPFENCE_A_RULES)
			continue;
		mnl_attr_for_each_nested(r, a) {
			d->rules++;
			mnl_attr_for_each_nested(c, r)
				if (mnl_attr_get_type(c) == CAPFENCE_RULE_A_PATH)
					d->paths++;
		}
	}
	return MNL_CB_OK;
}

TEST_F(ctl, epoch_dump_and_get)
{
	const char *rules[] = { "fs:read=token:/srv" };
	uint64_t e = cft_next_epoch(&self->nl);
	struct nlmsghdr *nlh;
	struct dump d = {};

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_GET, NLM_F_DUMP);
	ASSERT_EQ(0, cft_nl_talk(&self->nl, nlh, dump_cb, &d));
	EXPECT_LE(1, d.n);
	EXPECT_EQ(e, d.last);
	EXPECT_EQ(CAPFENCE_CLASS_MAX, d.rules);
	memset(&d, 0, sizeof(d));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_GET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	ASSERT_EQ(0, cft_nl_talk(&self->nl, nlh, dump_cb, &d));
	EXPECT_EQ(1, d.n);
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_GET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e + 100);
	EXPECT_EQ(-ENOENT, cft_nl_talk(&self->nl, nlh, dump_cb, &d));
	EXPECT_EQ(-ENOENT, cft_epoch_activate(&self->nl, e + 100));
	EXPECT_EQ(0, cft_epoch_activate(&self->nl, e));
	/* activating twice is harmless */
	EXPECT_EQ(0, cft_epoch_activate(&self->nl, e));
}

/* The largest epoch the limits allow is read back by GET and by a dump. */
TEST_F(ctl, largest_epoch_reads_back)
{
	char rr[2][8 * 260 + 64], p[CAPFENCE_PATH_MAX + 2];
	const char *rules[4] = {
		rr[0], rr[1],
		"net:connect=token:10.0.0.0/8:1-2,10.1.0.0/16:3-4,10.2.0.0/16:5-6,10.3.0.0/16:7-8,[fd00::]/8:9-10,[fd01::]/16:11-12,[fd02::]/16:13-14,[fd03::]/16:15-16",
		"net:bind=token:10.0.0.0/8:1-2,10.1.0.0/16:3-4,10.2.0.0/16:5-6,10.3.0.0/16:7-8,[fd00::]/8:9-10,[fd01::]/16:11-12,[fd02::]/16:13-14,[fd03::]/16:15-16",
	};
	uint64_t e = cft_next_epoch(&self->nl);
	struct nlmsghdr *nlh;
	struct dump d = {};
	int i, c;

	for (c = 0; c < 2; c++) {
		snprintf(rr[c], sizeof(rr[c]), "%s=token:",
			 c ? "fs:write" : "fs:read");
		for (i = 0; i < CAPFENCE_MAX_CONSTRAINTS; i++) {
			/* /NNNNNNN...: CAPFENCE_PATH_MAX bytes each */
			memset(p, 'a' + i, CAPFENCE_PATH_MAX);
			p[0] = '/';
			p[CAPFENCE_PATH_MAX] = 0;
			strcat(rr[c], i ? "," : "");
			strcat(rr[c], p);
		}
	}
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 4, NULL, 0));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_GET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	ASSERT_EQ(0, cft_nl_talk(&self->nl, nlh, dump_cb, &d));
	EXPECT_EQ(1, d.n);
	EXPECT_EQ(e, d.last);
	EXPECT_EQ(2 * CAPFENCE_MAX_CONSTRAINTS, d.paths);
	memset(&d, 0, sizeof(d));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_GET, NLM_F_DUMP);
	ASSERT_EQ(0, cft_nl_talk(&self->nl, nlh, dump_cb, &d));
	EXPECT_EQ(e, d.last);
	EXPECT_EQ(CAPFENCE_CLASS_MAX, d.rules);
	EXPECT_EQ(2 * CAPFENCE_MAX_CONSTRAINTS, d.paths);
}

/* Every activation, revocation and key change advances the fence. */
TEST_F(ctl, fence_advances)
{
	const char *rules[] = { "net:connect=open" };
	uint8_t raw[CAPFENCE_KEY_LEN] = { 3 };
	struct capfence_status a, b;
	struct cft_reply r;
	struct capfence_key *k;
	uint64_t e;

	ASSERT_EQ(0, capfence_key_from_bytes(903, raw, &k));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &a));
	ASSERT_EQ(0, cft_key_install(&self->nl, k));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_LT(a.fence, b.fence) TH_LOG("key install");
	a = b;
	ASSERT_EQ(0, cft_key_remove(&self->nl, 903));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_LT(a.fence, b.fence) TH_LOG("key remove");
	a = b;
	e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_LT(a.fence, b.fence) TH_LOG("epoch activate");
	a = b;
	/* activating it again is a no-op and does not move the fence */
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_EQ(a.fence, b.fence);
	ASSERT_EQ(0, cft_revoke(&self->nl, 0x7e5700000000ull + (uint64_t)getpid(),
				&r));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &b));
	EXPECT_LT(a.fence, b.fence) TH_LOG("revoke");
	/* the revoke reply names the fence it took effect at */
	EXPECT_EQ(b.fence, r.fence);
	capfence_key_free(k);
}

TEST_F(ctl, keys)
{
	uint8_t raw[CAPFENCE_KEY_LEN] = { 1 };
	struct nlmsghdr *nlh;
	struct capfence_key *k;

	ASSERT_EQ(0, capfence_key_from_bytes(900, raw, &k));
	EXPECT_EQ(0, cft_key_install(&self->nl, k));
	EXPECT_EQ(-EEXIST, cft_key_install(&self->nl, k));
	EXPECT_EQ(0, cft_key_remove(&self->nl, 900));
	EXPECT_EQ(-ENOENT, cft_key_remove(&self->nl, 900));
	capfence_key_free(k);
	/* key id 0 and short keys are refused by the policy */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_KEY_INSTALL, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, 0);
	mnl_attr_put(nlh, CAPFENCE_A_KEY, sizeof(raw), raw);
	EXPECT_EQ(-ERANGE, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_KEY_INSTALL, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, 901);
	mnl_attr_put(nlh, CAPFENCE_A_KEY, 16, raw);
	EXPECT_EQ(-ERANGE, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	/* missing attribute */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_KEY_INSTALL, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, 902);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
}

/*
 * The change commands with an options struct (libcapfence 1.4's *_opts):
 * NULL options and CAPFENCE_CHANGE_OPTS() do what the plain calls do; the
 * epoch reads back with the new layout.
 */
TEST_F(ctl, change_opts)
{
	static const char *const rules[] = { "fs:read=token:/srv", "net:bind=open" };
	uint8_t raw[CAPFENCE_KEY_LEN] = { 3 };
	struct capfence_epoch_info *info = calloc(1, sizeof(*info));
	struct capfence_epoch *ep = calloc(1, sizeof(*ep));
	uint64_t e = cft_next_epoch(&self->nl);
	char err[CAPFENCE_ERR_MAX] = "";
	CAPFENCE_CHANGE_OPTS(o);
	struct capfence_change_opts tiny = { .sz = 1 };
	struct capfence_result r;
	struct capfence_key *k;

	ASSERT_NE(NULL, info);
	ASSERT_NE(NULL, ep);
	ASSERT_EQ(0, capfence_key_from_bytes(903, raw, &k));
	EXPECT_EQ(0, capfence_client_key_install_opts(self->nl.c, k, NULL, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(-EEXIST, capfence_client_key_install_opts(self->nl.c, k, &o, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence_client_key_remove_opts(self->nl.c, 903, &tiny, err, sizeof(err)));
	EXPECT_STREQ("options: sz 1 is less than sizeof(size_t)", err);
	EXPECT_EQ(0, capfence_client_key_remove_opts(self->nl.c, 903, &o, err, sizeof(err)));
	EXPECT_EQ(-ENOENT, capfence_client_key_remove_opts(self->nl.c, 903, NULL, err, sizeof(err)));
	capfence_key_free(k);

	ASSERT_EQ(0, capfence_epoch_parse_rules(ep, e, rules, 2, err, sizeof(err)));
	EXPECT_EQ(0, capfence_client_epoch_install_opts(self->nl.c, ep, &o, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_get(self->nl.c, e, info, err, sizeof(err)));
	EXPECT_EQ(e, info->e.epoch_id);
	EXPECT_EQ(CAPFENCE_RULE_TOKEN, info->e.rules[CAPFENCE_CLASS_FS_READ].kind);
	EXPECT_EQ(CAPFENCE_RULE_OPEN, info->e.rules[CAPFENCE_CLASS_NET_BIND].kind);
	EXPECT_EQ(CAPFENCE_RULE_DENY, info->e.rules[CAPFENCE_CLASS_FS_WRITE].kind);
	EXPECT_EQ(0, info->e.rules[CAPFENCE_CLASS_SLOTS - 1].kind);
	EXPECT_EQ(0, capfence_client_epoch_activate_opts(self->nl.c, e, NULL, err, sizeof(err)));
	EXPECT_EQ(-ENOENT, capfence_client_epoch_activate_opts(self->nl.c, e + 100, &o, err,
							       sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence_client_revoke_opts(self->nl.c, 1, &tiny, &r));
	EXPECT_EQ(-1, r.reason);
	free(info);
	free(ep);
}

/* Try each mutating operation; all must fail with @want. */
static void try_mutations(struct __test_metadata *_metadata, int want)
{
	const int cmds[] = { CAPFENCE_CMD_KEY_REMOVE, CAPFENCE_CMD_REVOKE,
			     CAPFENCE_CMD_EPOCH_ACTIVATE,
			     CAPFENCE_CMD_EPOCH_INSTALL,
			     CAPFENCE_CMD_EXEC_SET, CAPFENCE_CMD_DELEGATE,
			     CAPFENCE_CMD_HOOKS_DETACH,
			     CAPFENCE_CMD_HOOKS_ATTACH,
			     CAPFENCE_CMD_KEY_INSTALL };
	struct cft_nl nl;
	size_t i;

	ASSERT_EQ(0, cft_nl_open(&nl));
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct nlmsghdr *nlh = cft_nl_req(&nl, (uint8_t)cmds[i], 0);

		int res = cft_nl_talk(&nl, nlh, NULL, NULL);

		if (res != want)
			TH_LOG("command %d gave %d", cmds[i], res);
		EXPECT_EQ(want, res);
	}
	cft_nl_close(&nl);
}

TEST(unprivileged_user_refused)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(99);
		try_mutations(_metadata, -EPERM);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST(root_in_user_namespace_refused)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		if (unshare(CLONE_NEWUSER))
			_exit(98);
		try_mutations(_metadata, -EPERM);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(ctl, bound_root_refused)
{
	const char *rules[] = { "fs:read=open" };
	const char *ops[] = { "revoke", "activate", "exec", "detach" };
	uint64_t e = cft_next_epoch(&self->nl);
	struct cft_agent a;
	size_t i;

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	/* the agent runs as root with every capability, yet is bound */
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int res = cft_agent_do(&a, "mutate %s", ops[i]);

		if (res != EPERM)
			TH_LOG("%s gave %d", ops[i], res);
		EXPECT_EQ(EPERM, res);
	}
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

struct task_info {
	uint64_t epoch;
	bool has_caps;		/* CAPFENCE_A_CAPS present, even empty */
	int ncaps;
	uint64_t cap_id[4];
	uint32_t from[4];
	uint32_t state[4];
};

static int task_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *a;
	struct task_info *ti = data;

	cft_nl_parse(nlh, tb);
	ti->epoch = mnl_attr_get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	if (tb[CAPFENCE_A_CAPS])
		ti->has_caps = true;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		const struct nlattr *c[CAPFENCE_CAP_A_MAX + 1], *m;

		if (mnl_attr_get_type(a) != CAPFENCE_A_CAPS)
			continue;
		mnl_attr_for_each_nested(m, a) {
			if (ti->ncaps == 4)
				break;
			cft_nl_parse_nested(m, c, &cf_attrs_cap);
			ti->cap_id[ti->ncaps] = mnl_attr_get_u64(c[CAPFENCE_CAP_A_CAP_ID]);
			ti->from[ti->ncaps] = mnl_attr_get_u32(c[CAPFENCE_CAP_A_FROM_PID]);
			ti->state[ti->ncaps] = mnl_attr_get_u32(c[CAPFENCE_CAP_A_STATE]);
			ti->ncaps++;
		}
	}
	return MNL_CB_OK;
}

static int task_get(struct cft_nl *nl, pid_t pid, struct task_info *ti)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);

	memset(ti, 0, sizeof(*ti));
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
	return cft_nl_talk(nl, nlh, task_cb, ti);
}

TEST_F(ctl, task_get_and_revoke_cascade)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8",
				"fs:read=open" };
	uint64_t e = cft_next_epoch(&self->nl);
	struct cft_agent p, c;
	struct task_info ti;
	struct cft_reply r;
	struct capfence_token t;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&p, e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&c, e, NULL, 0, NULL));
	ASSERT_EQ(0, task_get(&self->nl, getpid(), &ti));
	EXPECT_EQ(0, ti.epoch);
	EXPECT_EQ(-ESRCH, task_get(&self->nl, 999999, &ti));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.1/32", 0,
			      &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, p.pid, 0, false, &r));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, c.pid, p.pid, false, &r));
	ASSERT_EQ(0, task_get(&self->nl, c.pid, &ti));
	EXPECT_EQ(e, ti.epoch);
	ASSERT_EQ(1, ti.ncaps);
	EXPECT_EQ(t.cap_id, ti.cap_id[0]);
	EXPECT_EQ((uint32_t)p.pid, ti.from[0]);
	EXPECT_EQ(0, ti.state[0]);
	EXPECT_EQ(0, cft_agent_do(&c, "connect 127.0.0.1 %u", port));
	/* revoking the parent's capability revokes the delegated copy */
	ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&p, "connect 127.0.0.1 %u", port));
	EXPECT_EQ(EACCES, cft_agent_do(&c, "connect 127.0.0.1 %u", port));
	ASSERT_EQ(0, task_get(&self->nl, c.pid, &ti));
	EXPECT_EQ(CAPFENCE_R_REVOKED, ti.state[0]);
	EXPECT_TRUE(cft_agent_stop_clean(&c));
	EXPECT_TRUE(cft_agent_stop_clean(&p));
	close(srv);
}

TEST_F(ctl, events_group)
{
	struct capfence_events *mon = NULL;
	struct capfence_event_info ev;
	struct cft_reply r;
	struct capfence_token t;

	ASSERT_EQ(0, capfence_events_open(&mon, NULL, 0));
	/* nothing pending yet: a poll times out */
	EXPECT_EQ(-ETIMEDOUT, capfence_events_next(mon, &ev, 0));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", 1, NULL, 0, &t));
	EXPECT_EQ(-EINVAL, cft_delegate(&self->nl, &t, getpid(), 0, false, &r));
	ASSERT_EQ(0, capfence_events_next(mon, &ev, 5000));
	EXPECT_EQ(CAPFENCE_EV_DELEGATE_REJECT, ev.type);
	EXPECT_EQ(CAPFENCE_R_NOT_BOUND, ev.reason);
	EXPECT_EQ((uint32_t)getpid(), ev.pid);
	EXPECT_EQ(t.cap_id, ev.cap_id);
	EXPECT_STREQ("delegate_reject", capfence_event_name(ev.type));
	capfence_events_close(mon);
}

/*
 * Lists are nested arrays (ABI 2): one attribute whose members each carry
 * one element, a member's type being its index (ignored on input).
 */

/* EPOCH_INSTALL of @e with @n members in CAPFENCE_A_RULES, typed @type */
static int rules_install(struct cft_nl *nl, uint64_t e, int n, uint16_t type)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	struct nlattr *arr, *nest;
	int i;

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	for (i = 0; i < n; i++) {
		nest = mnl_attr_nest_start(nlh, type);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS,
				(uint8_t)(1 + i % CAPFENCE_CLASS_MAX));
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, CAPFENCE_RULE_OPEN);
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, arr);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* EXEC_SET of @e with @n junk tokens in CAPFENCE_A_TOKENS */
static int tokens_exec_set(struct cft_nl *nl, uint64_t e, int n)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_EXEC_SET, 0);
	uint8_t junk[64] = { CAPFENCE_TOKEN_VERSION };
	struct nlattr *arr;
	int i;

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_TOKENS);
	for (i = 0; i < n; i++)
		mnl_attr_put(nlh, (uint16_t)(i + 1), sizeof(junk), junk);
	mnl_attr_nest_end(nlh, arr);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* HOOKS_ATTACH with @n link fds (never read: refused before) */
static int link_fds_attach(struct cft_nl *nl, int n)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
	struct nlattr *arr;
	int i;

	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
	for (i = 0; i < n; i++)
		mnl_attr_put_u32(nlh, (uint16_t)(i + 1), 0);
	mnl_attr_nest_end(nlh, arr);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/* ABI 1's repeated top-level attributes are refused, never ignored. */
TEST_F(ctl, array_old_repeated_attrs_refused)
{
	uint64_t e = cft_next_epoch(&self->nl);
	const char *rules[] = { "net:connect=open" };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint8_t junk[64] = { CAPFENCE_TOKEN_VERSION };
	int i;

	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	for (i = 1; i <= 2; i++) {
		nest = mnl_attr_nest_start(nlh, CAPFENCE_A_RULE);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, (uint8_t)i);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, CAPFENCE_RULE_OPEN);
		mnl_attr_nest_end(nlh, nest);
	}
	/* (a nest where the policy has NLA_REJECT: "NLA_F_NESTED not expected") */
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_STRNE("", self->nl.ext);
	/* nothing was installed */
	EXPECT_EQ(e, cft_next_epoch(&self->nl));

	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
	for (i = 0; i < 2; i++)
		mnl_attr_put_u32(nlh, CAPFENCE_A_LINK_FD, 0);
	/* a hole in the command's generated policy */
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "Unsupported attribute"));

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EXEC_SET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	for (i = 0; i < 2; i++)
		mnl_attr_put(nlh, CAPFENCE_A_TOKEN, sizeof(junk), junk);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "Unsupported attribute"));

	/* the reply-only id of ABI 1 is refused in a request too */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	nest = mnl_attr_nest_start(nlh, CAPFENCE_A_CAP);
	mnl_attr_nest_end(nlh, nest);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
}

/* The limits of the lists: E2BIG, checked before anything is done. */
TEST_F(ctl, array_over_limit_e2big)
{
	const char *rules[] = { "net:connect=open" };
	uint64_t e = cft_next_epoch(&self->nl);

	/* one rule per class: more members than classes */
	EXPECT_EQ(-E2BIG, rules_install(&self->nl, e, CAPFENCE_CLASS_MAX + 1, 0));
	EXPECT_NE(NULL, strstr(self->nl.ext, "more rules than classes"));
	EXPECT_EQ(e, cft_next_epoch(&self->nl));
	/* exactly one per class is fine */
	EXPECT_EQ(0, rules_install(&self->nl, e, CAPFENCE_CLASS_MAX, 0));
	e++;

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	EXPECT_EQ(-E2BIG, tokens_exec_set(&self->nl, e, CAPFENCE_MAX_TOKENS + 1));
	EXPECT_NE(NULL, strstr(self->nl.ext, "too many"));

	/* more link fds than the module has hooks */
	EXPECT_EQ(-E2BIG, link_fds_attach(&self->nl, 256));
	EXPECT_NE(NULL, strstr(self->nl.ext, "too many"));
}

/*
 * An empty array is the list it carries: no rules (every class denied),
 * no tokens; TASK_GET always answers with CAPFENCE_A_CAPS, empty for a
 * task that holds nothing. Member types (indexes) are ignored.
 */
TEST_F(ctl, array_empty_and_indexes)
{
	const char *rules[] = { "net:connect=open" };
	uint64_t e = cft_next_epoch(&self->nl);
	struct capfence_epoch_info info;
	struct task_info ti;
	int status, cls;
	pid_t pid;

	ASSERT_EQ(0, rules_install(&self->nl, e, 0, 0));
	ASSERT_EQ(0, capfence_client_epoch_get(self->nl.c, e, &info, NULL, 0));
	for (cls = 1; cls <= CAPFENCE_CLASS_MAX; cls++)
		EXPECT_EQ(CAPFENCE_RULE_DENY, info.e.rules[cls].kind);
	/* members typed 0 and 0x1234: the type is not read */
	ASSERT_EQ(0, rules_install(&self->nl, e + 1, 1, 0x1234));
	ASSERT_EQ(0, capfence_client_epoch_get(self->nl.c, e + 1, &info, NULL, 0));
	EXPECT_EQ(CAPFENCE_RULE_OPEN, info.e.rules[1].kind);
	EXPECT_EQ(CAPFENCE_RULE_DENY, info.e.rules[2].kind);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e + 2, rules, 1, NULL, 0));

	/* an exec binding with an empty token array: pending, no tokens */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cft_nl cn;
		struct task_info me;

		if (cft_open(&cn) || tokens_exec_set(&cn, e + 2, 0) ||
		    task_get(&cn, getpid(), &me) || !me.has_caps || me.ncaps)
			_exit(1);
		_exit(0);	/* never execs: the binding is dropped */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	ASSERT_EQ(0, task_get(&self->nl, getpid(), &ti));
	EXPECT_TRUE(ti.has_caps);
	EXPECT_EQ(0, ti.ncaps);
}

/* A member of the wrong type, or an array without NLA_F_NESTED. */
TEST_F(ctl, array_member_wrong_type)
{
	uint64_t e = cft_next_epoch(&self->nl);
	const char *rules[] = { "net:connect=open" };
	struct nlmsghdr *nlh;
	static const uint8_t big[CAPFENCE_TOKEN_MAX_LEN + 1];
	struct nlattr *arr, *m;

	/* a rule member that is a u32, not a nest */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	mnl_attr_put_u32(nlh, 1, 1);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	/* shorter than an attribute header: the kernel's ERANGE */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	mnl_attr_put_u8(nlh, 1, 1);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-ERANGE, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	/* a rule member that is a nest of something else than a rule */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	m = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_u64(nlh, CAPFENCE_RULE_A_MAX + 1, 0);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	/* a rule with what only the kernel sends: its fence value */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	m = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, 1);
	mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, CAPFENCE_RULE_OPEN);
	mnl_attr_put_u64(nlh, CAPFENCE_RULE_A_FENCED_AT, 1);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "FENCED_AT is output only"));
	EXPECT_EQ(e, cft_next_epoch(&self->nl));
	/* a token longer than the spec's max-len: the kernel's ERANGE */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_DELEGATE, 0);
	mnl_attr_put(nlh, CAPFENCE_A_TOKEN, sizeof(big), big);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	EXPECT_EQ(-ERANGE, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "token longer than"));

	/* a link fd member that is a u64 */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
	mnl_attr_put_u64(nlh, 1, 0);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "wrong type"));

	/* a token member that is a nest */
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EXEC_SET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_TOKENS);
	m = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_u32(nlh, 1, 0);
	mnl_attr_nest_end(nlh, m);
	mnl_attr_nest_end(nlh, arr);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->nl.ext, "wrong type"));

	/* an array without NLA_F_NESTED (strict validation) */
	nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_LINK_FDS, 0);
	EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
}

/* ---- each command takes only its own attributes ---- */

/* What each command takes: its request attributes in the YAML spec. */
#define A(x) (1ULL << CAPFENCE_A_##x)
static const struct {
	uint8_t cmd;
	const char *name;
	uint64_t takes;
} cmd_takes[] = {
	{ CAPFENCE_CMD_STATUS_GET, "status-get", 0 },
	{ CAPFENCE_CMD_HOOKS_ATTACH, "hooks-attach", A(LINK_FDS) },
	{ CAPFENCE_CMD_HOOKS_DETACH, "hooks-detach", 0 },
	{ CAPFENCE_CMD_KEY_INSTALL, "key-install",
	  A(KEY_ID) | A(KEY) | A(FLEET_REV) | A(FLEET) },
	{ CAPFENCE_CMD_KEY_REMOVE, "key-remove", A(KEY_ID) | A(FLEET_REV) | A(FLEET) },
	{ CAPFENCE_CMD_EPOCH_INSTALL, "epoch-install",
	  A(EPOCH_ID) | A(RULES) | A(FLEET_REV) | A(FLEET) | A(SECCOMP_PROG) },
	{ CAPFENCE_CMD_EPOCH_ACTIVATE, "epoch-activate",
	  A(EPOCH_ID) | A(FLEET_REV) | A(FLEET) },
	{ CAPFENCE_CMD_EPOCH_GET, "epoch-get", A(EPOCH_ID) },
	{ CAPFENCE_CMD_EXEC_SET, "exec-set", A(EPOCH_ID) | A(TOKENS) },
	{ CAPFENCE_CMD_DELEGATE, "delegate", A(TOKEN) | A(PID) | A(FROM_PID) | A(DRY_RUN) },
	{ CAPFENCE_CMD_REVOKE, "revoke", A(CAP_ID) | A(FLEET_REV) | A(FLEET) },
	{ CAPFENCE_CMD_TASK_GET, "task-get", A(PID) },
	{ CAPFENCE_CMD_FLEET_SET, "fleet-set", A(FLEET_REV) | A(FLEET) },
	{ CAPFENCE_CMD_EPOCH_RETIRE, "epoch-retire", A(EPOCH_ID) | A(FLEET_REV) },
	/* the epoch dump takes nothing */
	{ CAPFENCE_CMD_EPOCH_GET, "epoch-get dump", 0 },
};

/* The attributes the family accepts in some request, with their names. */
static const struct {
	int type;
	const char *name;
} req_attrs[] = {
	{ CAPFENCE_A_KEY_ID, "CAPFENCE_A_KEY_ID" },
	{ CAPFENCE_A_KEY, "CAPFENCE_A_KEY" },
	{ CAPFENCE_A_EPOCH_ID, "CAPFENCE_A_EPOCH_ID" },
	{ CAPFENCE_A_TOKEN, "CAPFENCE_A_TOKEN" },
	{ CAPFENCE_A_PID, "CAPFENCE_A_PID" },
	{ CAPFENCE_A_FROM_PID, "CAPFENCE_A_FROM_PID" },
	{ CAPFENCE_A_DRY_RUN, "CAPFENCE_A_DRY_RUN" },
	{ CAPFENCE_A_CAP_ID, "CAPFENCE_A_CAP_ID" },
	{ CAPFENCE_A_FLEET_REV, "CAPFENCE_A_FLEET_REV" },
	{ CAPFENCE_A_FLEET, "CAPFENCE_A_FLEET" },
	{ CAPFENCE_A_LINK_FDS, "CAPFENCE_A_LINK_FDS" },
	{ CAPFENCE_A_RULES, "CAPFENCE_A_RULES" },
	{ CAPFENCE_A_TOKENS, "CAPFENCE_A_TOKENS" },
	{ CAPFENCE_A_SECCOMP_PROG, "CAPFENCE_A_SECCOMP_PROG" },
};

/*
 * Attributes no request takes: ABI 1's reserved ids and one the kernel
 * only sends. Every command refuses them too.
 */
static const struct {
	int type;
	const char *name;
} never_attrs[] = {
	{ CAPFENCE_A_LINK_FD, "CAPFENCE_A_LINK_FD" },
	{ CAPFENCE_A_RULE, "CAPFENCE_A_RULE" },
	{ CAPFENCE_A_CAP, "CAPFENCE_A_CAP" },
	{ CAPFENCE_A_FENCE, "CAPFENCE_A_FENCE" },
};

/*
 * The kernel's validator refuses an attribute outside the command's
 * generated policy (above its highest attribute, or a hole in it); a
 * command without a policy, and the epoch dump, by their pre_doit or start.
 */
static bool refused_text(const char *ext)
{
	return strstr(ext, "Unknown attribute type") ||
	       strstr(ext, "Unsupported attribute") ||
	       strstr(ext, "takes no attribute");
}

#define NREQ (sizeof(req_attrs) / sizeof(req_attrs[0]))
#define NNEVER (sizeof(never_attrs) / sizeof(never_attrs[0]))

/* What the requests act on. */
struct takes_ctx {
	uint64_t epoch;		/* installed, not activated */
	uint64_t bound_epoch;	/* the agent's */
	uint64_t next_epoch;	/* not installed */
	pid_t agent;
	uint64_t cap_id;	/* the agent holds it */
	uint8_t tok[CAPFENCE_TOKEN_MAX_LEN];	/* a second capability for it */
	int tok_len;
};

/* A well-formed value of attribute @type: every form the policy accepts. */
static void put_attr(struct nlmsghdr *nlh, int type, const struct takes_ctx *c)
{
	static const uint8_t key[CAPFENCE_KEY_LEN] = { 0x5a };
	/* one instruction: return SECCOMP_RET_ALLOW */
	static const uint8_t prog[8] = { 0x06, 0, 0, 0, 0, 0, 0xff, 0x7f };
	struct nlattr *n;

	switch (type) {
	case CAPFENCE_A_KEY_ID:
		mnl_attr_put_u32(nlh, type, 906);
		break;
	case CAPFENCE_A_KEY:
		mnl_attr_put(nlh, type, sizeof(key), key);
		break;
	case CAPFENCE_A_EPOCH_ID:
		mnl_attr_put_u64(nlh, type, c->next_epoch);
		break;
	case CAPFENCE_A_TOKEN:
		mnl_attr_put(nlh, type, (size_t)c->tok_len, c->tok);
		break;
	case CAPFENCE_A_PID:
	case CAPFENCE_A_FROM_PID:
		mnl_attr_put_u32(nlh, type, (uint32_t)c->agent);
		break;
	case CAPFENCE_A_DRY_RUN:
		mnl_attr_put(nlh, type, 0, NULL);
		break;
	case CAPFENCE_A_CAP_ID:
		mnl_attr_put_u64(nlh, type, c->cap_id);
		break;
	case CAPFENCE_A_FLEET_REV:
		mnl_attr_put_u64(nlh, type, 1ULL << 40);
		break;
	case CAPFENCE_A_SECCOMP_PROG:
		mnl_attr_put(nlh, type, sizeof(prog), prog);
		break;
	case CAPFENCE_A_LINK_FD:
		mnl_attr_put_u32(nlh, type, 0);
		break;
	case CAPFENCE_A_FENCE:
		mnl_attr_put_u64(nlh, type, 1);
		break;
	default:	/* the nests and arrays, empty */
		n = mnl_attr_nest_start(nlh, (uint16_t)type);
		mnl_attr_nest_end(nlh, n);
		break;
	}
}

/* A request for @cmd with what it needs to act, well formed. */
static struct nlmsghdr *takes_base(struct cft_nl *nl, uint8_t cmd, bool dump,
				   const struct takes_ctx *c)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, cmd, dump ? NLM_F_DUMP : 0);
	struct nlattr *arr;

	switch (dump ? 0 : cmd) {
	case CAPFENCE_CMD_HOOKS_ATTACH:
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
		mnl_attr_nest_end(nlh, arr);
		break;
	case CAPFENCE_CMD_KEY_INSTALL:
		put_attr(nlh, CAPFENCE_A_KEY_ID, c);
		put_attr(nlh, CAPFENCE_A_KEY, c);
		break;
	case CAPFENCE_CMD_KEY_REMOVE:
		mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, 905);
		break;
	case CAPFENCE_CMD_EPOCH_INSTALL:
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->next_epoch);
		break;
	case CAPFENCE_CMD_EPOCH_ACTIVATE:
	case CAPFENCE_CMD_EPOCH_GET:
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->epoch);
		break;
	case CAPFENCE_CMD_EXEC_SET:
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->epoch);
		break;
	case CAPFENCE_CMD_DELEGATE:
		put_attr(nlh, CAPFENCE_A_TOKEN, c);
		put_attr(nlh, CAPFENCE_A_PID, c);
		break;
	case CAPFENCE_CMD_REVOKE:
		put_attr(nlh, CAPFENCE_A_CAP_ID, c);
		break;
	case CAPFENCE_CMD_TASK_GET:
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
		break;
	}
	return nlh;
}

/*
 * Send @nlh on @fd and read its error: 0 or -errno, the extack message in
 * @ext and the offset of the attribute it names in *@off (0 for none).
 */
static int talk_offs(int fd, const struct nlmsghdr *nlh, char *ext, size_t len,
		     uint32_t *off)
{
	static char buf[65536];

	*ext = '\0';
	*off = 0;
	if (send(fd, nlh, nlh->nlmsg_len, 0) != (ssize_t)nlh->nlmsg_len)
		return -errno;
	for (;;) {
		int n = (int)recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -errno;
		for (h = (void *)buf; mnl_nlmsg_ok(h, n); h = mnl_nlmsg_next(h, &n)) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
			const struct nlattr *a;
			size_t hl = sizeof(*e);

			if (h->nlmsg_seq != nlh->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			/* the request is echoed unless NLM_F_CAPPED */
			if (!(h->nlmsg_flags & NLM_F_CAPPED))
				hl += e->msg.nlmsg_len - sizeof(e->msg);
			if (h->nlmsg_flags & NLM_F_ACK_TLVS)
				mnl_attr_for_each(a, h, hl) {
					if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
						snprintf(ext, len, "%s", mnl_attr_get_str(a));
					if (mnl_attr_get_type(a) == NLMSGERR_ATTR_OFFS)
						*off = mnl_attr_get_u32(a);
				}
			return e->error;
		}
	}
}

struct takes_state {
	uint64_t fence, generation, fleet_rev;
};

static int takes_state_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	struct takes_state *st = data;

	cft_nl_parse(nlh, tb);
	st->fence = mnl_attr_get_u64(tb[CAPFENCE_A_FENCE]);
	st->generation = mnl_attr_get_u64(tb[CAPFENCE_A_GENERATION]);
	st->fleet_rev = tb[CAPFENCE_A_FLEET_REV] ?
		mnl_attr_get_u64(tb[CAPFENCE_A_FLEET_REV]) : 0;
	return MNL_CB_OK;
}

/*
 * Every command, sent every attribute of the family it does not take
 * (with what it needs to act), refuses it with EINVAL before acting: the
 * command's generated policy has no entry for it, the extack says so and
 * its offset names the attribute. Nothing is acted on: no key, epoch,
 * activation, delegation, revocation, pending exec or fleet revision.
 * Above all a revoke marked dry-run does not revoke.
 */
TEST_F(ctl, each_command_takes_only_its_attributes)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8",
				"fs:read=open" };
	struct capfence_key *k905;
	uint8_t raw[CAPFENCE_KEY_LEN] = { 9 };
	struct takes_ctx c = { 0 };
	struct takes_state before, after;
	struct capfence_token t, t2;
	struct cft_agent a;
	struct task_info ti;
	struct cft_reply r;
	uint16_t port;
	int srv = cft_listen(&port);
	struct utsname u;
	bool start_extack;
	int n = 0, maj = 0, min = 0;
	size_t i, j;

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, uname(&u));
	sscanf(u.release, "%d.%d", &maj, &min);
	start_extack = maj > 6 || (maj == 6 && min >= 12);
	ASSERT_EQ(0, capfence_key_from_bytes(905, raw, &k905));
	cft_key_remove(&self->nl, 905);
	ASSERT_EQ(0, cft_key_install(&self->nl, k905));
	capfence_key_free(k905);
	c.bound_epoch = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, c.bound_epoch, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, c.bound_epoch, NULL, 0, NULL));
	c.agent = a.pid;
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", c.bound_epoch,
			      "127.0.0.1/32", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r));
	c.cap_id = t.cap_id;
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", c.bound_epoch,
			      "127.0.0.1/32", 0, &t2));
	c.tok_len = capfence_token_encode_bin(&t2, c.tok, sizeof(c.tok));
	ASSERT_LT(0, c.tok_len);
	c.epoch = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, c.epoch, rules, 2, NULL, 0));
	c.next_epoch = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_nl_talk(&self->nl, cft_nl_req(&self->nl, CAPFENCE_CMD_STATUS_GET, 0),
				 takes_state_cb, &before));

	for (i = 0; i < sizeof(cmd_takes) / sizeof(cmd_takes[0]); i++) {
		bool dump = i == sizeof(cmd_takes) / sizeof(cmd_takes[0]) - 1;

		for (j = 0; j < NREQ + NNEVER; j++) {
			int type = j < NREQ ? req_attrs[j].type :
				   never_attrs[j - NREQ].type;
			const char *name = j < NREQ ? req_attrs[j].name :
					   never_attrs[j - NREQ].name;
			struct nlmsghdr *nlh;
			uint32_t want, off;
			char ext[256];
			int err;

			if (j < NREQ && (cmd_takes[i].takes & (1ULL << type)))
				continue;
			nlh = takes_base(&self->nl, cmd_takes[i].cmd, dump, &c);
			want = (uint32_t)((char *)mnl_nlmsg_get_payload_tail(nlh) -
					  (char *)nlh);
			put_attr(nlh, type, &c);
			nlh->nlmsg_seq = (uint32_t)++n;
			err = talk_offs(self->nl.fd, nlh, ext, sizeof(ext), &off);
			/* 6.1 gives a dump's start callback no extack */
			if (dump && !start_extack && err == -EINVAL && !*ext) {
				snprintf(ext, sizeof(ext), "a dump of epochs takes no attribute");
				off = want;
			}
			if (err != -EINVAL || !refused_text(ext) || off != want)
				TH_LOG("%s with %s: %d \"%s\" at offset %u (want %u)",
				       cmd_takes[i].name, name, err, ext, off, want);
			EXPECT_EQ(-EINVAL, err);
			EXPECT_TRUE(refused_text(ext));
			EXPECT_EQ(want, off);
		}
	}
	/* 14 commands and the dump, 14 + 4 attributes, 31 pairs taken */
	EXPECT_EQ(15 * (14 + 4) - 31, n);

	/* nothing changed: no fence move, no new state, no fleet revision */
	ASSERT_EQ(0, cft_nl_talk(&self->nl, cft_nl_req(&self->nl, CAPFENCE_CMD_STATUS_GET, 0),
				 takes_state_cb, &after));
	EXPECT_EQ(before.fence, after.fence);
	EXPECT_EQ(before.generation, after.generation);
	EXPECT_EQ(before.fleet_rev, after.fleet_rev);
	EXPECT_EQ(c.next_epoch, cft_next_epoch(&self->nl));
	/* no delegation: the agent holds its one capability, still valid */
	ASSERT_EQ(0, task_get(&self->nl, a.pid, &ti));
	EXPECT_EQ(1, ti.ncaps);
	EXPECT_EQ(c.cap_id, ti.cap_id[0]);
	EXPECT_EQ(0, ti.state[0]);
	/* the dry-run revokes revoked nothing: the capability still works */
	EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %u", port));
	/* no pending exec epoch for this task */
	{
		const struct nlattr *tb[CAPFENCE_A_MAX + 1];
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_TASK_GET, 0);
		ssize_t got;

		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
		nlh->nlmsg_seq = (uint32_t)++n;
		nlh->nlmsg_flags &= (uint16_t)~NLM_F_ACK;
		ASSERT_EQ((ssize_t)nlh->nlmsg_len, send(self->nl.fd, nlh, nlh->nlmsg_len, 0));
		got = recv(self->nl.fd, self->nl.buf, CFT_NL_BUFSZ, 0);
		ASSERT_LT(0, got);
		ASSERT_EQ(0, cft_nl_parse((struct nlmsghdr *)self->nl.buf, tb));
		EXPECT_EQ(NULL, tb[CAPFENCE_A_PENDING_EPOCH_ID]);
	}
	/* key 905 is still installed, 906 never was */
	EXPECT_EQ(0, cft_key_remove(&self->nl, 905));
	EXPECT_NE(0, cft_key_remove(&self->nl, 906));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	close(srv);
}

CFT_MAIN

/* EPOCH_RETIRE of @id: its errno, the extack in nl->ext. */
static int retire(struct cft_nl *nl, uint64_t id)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_RETIRE, 0);

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/*
 * Retire @id right after its tasks were reaped: the module waits for their
 * credentials and grants itself (up to 0.5 s); past that, under a loaded
 * host, retry for a while, and say so.
 */
static int retire_reaped(struct __test_metadata *_metadata, struct cft_nl *nl,
			 uint64_t id)
{
	int i, err = retire(nl, id);

	for (i = 0; err == -EBUSY && i < cft_ms(30000) / 100; i++) {
		if (!i)
			TH_LOG("retire %llu: %s; retrying", (unsigned long long)id,
			       nl->ext);
		usleep(100000);
		err = retire(nl, id);
	}
	if (i)
		TH_LOG("retired after %d retries", i);
	return err;
}

static int epoch_get(struct cft_nl *nl, uint64_t id)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_GET, 0);

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
	return cft_nl_talk(nl, nlh, NULL, NULL);
}

/*
 * An epoch nothing refers to is retired: it is gone from lookups,
 * activation and exec-set (ENOENT), a second retire is ENOENT, and its id
 * is never installed again (ERANGE), even as the highest one.
 */
TEST_F(ctl, epoch_retire_unreferenced)
{
	const char *rules[] = { "fs:read=open" };
	uint64_t e = cft_next_epoch(&self->nl);
	struct cft_reply r;
	char ext[256];

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e + 1, rules, 1, NULL, 0));
	EXPECT_EQ(0, retire(&self->nl, e));
	EXPECT_EQ(-ENOENT, epoch_get(&self->nl, e));
	EXPECT_EQ(0, epoch_get(&self->nl, e + 1));
	EXPECT_EQ(-ENOENT, retire(&self->nl, e));
	EXPECT_NE(NULL, strstr(self->nl.ext, "not installed (retired"));
	EXPECT_EQ(-ENOENT, cft_epoch_activate(&self->nl, e));
	EXPECT_EQ(-ENOENT, cft_exec_set(&self->nl, e, NULL, 0, &r));
	EXPECT_EQ(-ERANGE, cft_epoch_install(&self->nl, e, rules, 1, ext,
					     sizeof(ext)));
	/* the newest one too: its id stays the floor */
	EXPECT_EQ(0, retire(&self->nl, e + 1));
	EXPECT_EQ(-ERANGE, cft_epoch_install(&self->nl, e + 1, rules, 1, ext,
					     sizeof(ext)));
	EXPECT_NE(NULL, strstr(ext, "retired ones count"));
	EXPECT_EQ(e + 2, cft_next_epoch(&self->nl));
	/* never installed: ENOENT too, and 0 is no epoch */
	EXPECT_EQ(-ENOENT, retire(&self->nl, e + 1000));
	EXPECT_EQ(-ENOENT, retire(&self->nl, 0));
}

/*
 * Not retired while the active epoch, while a task is bound to it, or
 * while a capability granted under it is held: EBUSY, each with its own
 * message; once the tasks are reaped it is retired (the module waits
 * for their credentials and grants to go).
 */
TEST_F(ctl, epoch_retire_busy)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8",
				"fs:read=open" };
	uint64_t e = cft_next_epoch(&self->nl), e2;
	struct capfence_token t;
	struct cft_agent a, b;
	struct cft_reply r;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));
	EXPECT_EQ(-EBUSY, retire(&self->nl, e));
	EXPECT_NE(NULL, strstr(self->nl.ext, "is the active epoch"));

	/* a bound task, no capability; a newer active epoch */
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	e2 = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e2, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e2));
	EXPECT_EQ(-EBUSY, retire(&self->nl, e));
	EXPECT_NE(NULL, strstr(self->nl.ext, "tasks are bound to the epoch"));

	/* a second bound task holding a capability of it */
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.1/32", 0, &t));
	ASSERT_EQ(0, cft_agent_spawn(&b, e, &t, 1, &r));
	EXPECT_EQ(0, cft_agent_do(&b, "connect 127.0.0.1 %u", port));
	EXPECT_EQ(-EBUSY, retire(&self->nl, e));
	EXPECT_NE(NULL, strstr(self->nl.ext, "capabilities granted under the epoch"));
	/* still in force: the refusal changed nothing */
	EXPECT_EQ(0, cft_agent_do(&b, "connect 127.0.0.1 %u", port));
	EXPECT_EQ(0, epoch_get(&self->nl, e));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	/*
	 * The listener never accepted: b's two connections, closed by its
	 * exit, may wait in FIN_WAIT2 for their peers with their grant for
	 * tcp_fin_timeout (60 s), as when an ACK reached a socket its close
	 * still held. Closing the listener resets them.
	 */
	close(srv);

	/* reaped: the retire waits for their credentials and grants */
	EXPECT_EQ(0, retire_reaped(_metadata, &self->nl, e));
	EXPECT_EQ(-ENOENT, epoch_get(&self->nl, e));
}

/*
 * An exec set to bind an epoch (pending) holds it too; a retired epoch
 * cannot be set.
 */
TEST_F(ctl, epoch_retire_pending)
{
	const char *rules[] = { "fs:read=open" };
	uint64_t e = cft_next_epoch(&self->nl);
	int p[2], q[2];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e + 1, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e + 1));
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cft_nl nl;
		struct cft_reply r;
		char ok;

		ok = !cft_open(&nl) && !cft_exec_set(&nl, e, NULL, 0, &r);
		if (write(p[1], &ok, 1) != 1 || read(q[0], &ok, 1) < 0)
			_exit(1);
		/* exits without the exec: the pending state goes with it */
		_exit(0);
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	ASSERT_EQ(1, c);
	EXPECT_EQ(-EBUSY, retire(&self->nl, e));
	EXPECT_NE(NULL, strstr(self->nl.ext, "an exec is set to bind it"));
	ASSERT_EQ(1, write(q[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_EQ(0, retire_reaped(_metadata, &self->nl, e));
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* How many epochs are installed (the dump), or -1. */
static long epoch_count(struct cft_nl *nl)
{
	struct capfence_epoch_info *v = NULL;
	size_t n = 0;

	if (capfence_client_epoch_list(nl->c, &v, &n, NULL, 0))
		return -1;
	capfence_free(v);
	return (long)n;
}

/*
 * At most epochs_max epochs are installed (ENOSPC, nothing installed);
 * with epochs_keep set an install first retires the oldest epochs nothing
 * refers to, down to epochs_keep - 1, never the active one.
 */
TEST_F(ctl, epoch_bound_and_keep)
{
	const char *rules[] = { "fs:read=open" };
	long max = cft_param_get("epochs_max");
	long keep = cft_param_get("epochs_keep");
	uint64_t e = cft_next_epoch(&self->nl);
	char ext[256];
	long n;

	ASSERT_LT(0, max);
	ASSERT_EQ(0, keep);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e));
	n = epoch_count(&self->nl);
	ASSERT_LE(1, n);
	ASSERT_EQ(0, cft_param_set("epochs_max", n));
	EXPECT_EQ(-ENOSPC, cft_epoch_install(&self->nl, e + 1, rules, 1, ext,
					     sizeof(ext)));
	EXPECT_NE(NULL, strstr(ext, "epochs_max"));
	EXPECT_EQ(-ENOENT, epoch_get(&self->nl, e + 1));
	EXPECT_EQ(e + 1, cft_next_epoch(&self->nl));
	EXPECT_EQ(n, epoch_count(&self->nl));
	/* with room for one more (a retire makes it) */
	ASSERT_EQ(0, cft_param_set("epochs_max", n + 1));
	EXPECT_EQ(0, cft_epoch_install(&self->nl, e + 1, rules, 1, NULL, 0));
	EXPECT_EQ(-ENOSPC, cft_epoch_install(&self->nl, e + 2, rules, 1, NULL, 0));
	EXPECT_EQ(0, retire(&self->nl, e + 1));
	EXPECT_EQ(0, cft_epoch_install(&self->nl, e + 2, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_param_set("epochs_max", max));

	/* epochs_keep: one retired (the oldest retirable), one installed */
	n = epoch_count(&self->nl);
	ASSERT_EQ(0, cft_param_set("epochs_keep", n));
	EXPECT_EQ(0, cft_epoch_install(&self->nl, e + 3, rules, 1, NULL, 0));
	EXPECT_EQ(n, epoch_count(&self->nl));
	/* until only the active one and the new one are left */
	ASSERT_EQ(0, cft_param_set("epochs_keep", 1));
	EXPECT_EQ(0, cft_epoch_install(&self->nl, e + 4, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_param_set("epochs_keep", 0));
	EXPECT_EQ(0, epoch_get(&self->nl, e));
	EXPECT_EQ(0, epoch_get(&self->nl, e + 4));
	EXPECT_EQ(-ENOENT, epoch_get(&self->nl, e + 3));
	EXPECT_EQ(-ENOENT, epoch_get(&self->nl, e + 2));
}
