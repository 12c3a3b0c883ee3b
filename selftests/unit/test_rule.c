// SPDX-License-Identifier: GPL-2.0
/* libcapfence: rule and epoch parsing/printing, and narrowing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_test.h"

static const struct {
	const char *in, *canon;
} good[] = {
	{ "net:connect=open", "net:connect=open" },
	{ "net:bind=deny", "net:bind=deny" },
	{ "fs:read=token", "fs:read=token" },
	{ "fs:write=open", "fs:write=open" },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.0.0.0/8" },
	{ "net:connect=token:10.1.2.3,[::1]/128:80",
	  "net:connect=token:10.1.2.3/32,[::1]/128:80" },
	{ "net:bind=token:0.0.0.0/0:8080-8090,::/0",
	  "net:bind=token:0.0.0.0/0:8080-8090,::/0" },
	{ "fs:write=token:/srv,/tmp", "fs:write=token:/srv,/tmp" },
	{ "fs:read=token:/", "fs:read=token:/" },
	{ "vsock:connect=token:cid:2:1024-2048,cid:any:52",
	  "vsock:connect=token:cid:2:1024-2048,cid:any:52" },
	{ "net:connect=token:10.0.0.0/8,10.1.0.0/16,10.2.0.0/16,10.3.0.0/16,"
	  "10.4.0.0/16,10.5.0.0/16,10.6.0.0/16,10.7.0.0/16",
	  "net:connect=token:10.0.0.0/8,10.1.0.0/16,10.2.0.0/16,10.3.0.0/16,"
	  "10.4.0.0/16,10.5.0.0/16,10.6.0.0/16,10.7.0.0/16" },
};

TEST(rule_parse_good)
{
	char err[CAPFENCE_ERR_MAX], buf[CAPFENCE_RULE_TEXT_MAX];
	struct capfence_rule r, r2;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		err[0] = '\0';
		EXPECT_EQ(0, capfence_rule_parse(good[i].in, &r, err, sizeof(err)))
			TH_LOG("\"%s\": %s", good[i].in, err);
		EXPECT_EQ((int)strlen(good[i].canon),
			  capfence_rule_format(&r, buf, sizeof(buf)));
		EXPECT_STREQ(good[i].canon, buf);
		ASSERT_EQ(0, capfence_rule_parse(buf, &r2, NULL, 0));
		EXPECT_EQ(0, memcmp(&r, &r2, sizeof(r)));
	}
	ASSERT_EQ(0, capfence_rule_parse("net:connect=token:10.0.0.0/8", &r, NULL, 0));
	EXPECT_EQ(CAPFENCE_CLASS_NET_CONNECT, r.class_id);
	EXPECT_EQ(CAPFENCE_RULE_TOKEN, r.kind);
	EXPECT_EQ(1, r.n);
	EXPECT_EQ(-ENOSPC, capfence_rule_format(&r, buf, 20));
}

static const struct {
	const char *in, *msg;
} bad[] = {
	{ "", "empty rule" },
	{ "net:connect", "bad rule \"net:connect\": expected CLASS=open|deny|log|token" },
	{ "net:connect=log:10.0.0.0/8", "net:connect: \"log\" takes no constraints" },
	{ "net:listen=open", "unknown class \"net:listen\"" },
	{ "=open", "unknown class \"\"" },
	{ "NET:CONNECT=open", "unknown class \"NET:CONNECT\"" },
	{ "net:connect =open", "unknown class \"net:connect \"" },
	{ "a-very-long-class-name-that-overflows=open", "unknown class \"a-very" },
	{ "net:connect=allow", "net:connect: unknown rule \"allow\"" },
	{ "net:connect=", "net:connect: unknown rule \"\"" },
	{ "net:connect=tokens", "net:connect: unknown rule \"tokens\"" },
	{ "net:connect=Open", "unknown rule \"Open\"" },
	{ "net:connect=open:10.0.0.0/8", "net:connect: \"open\" takes no constraints" },
	{ "net:connect=deny:10.0.0.0/8", "net:connect: \"deny\" takes no constraints" },
	{ "net:connect=token:", "net:connect: empty constraint list after \"token:\"" },
	{ "net:connect=token:10.0.0.0/8,", "net:connect: empty constraint in list" },
	{ "net:connect=token:,10.0.0.0/8", "net:connect: empty constraint in list" },
	{ "net:connect=token:10.0.0.0/8,,11.0.0.0/8", "empty constraint in list" },
	{ "net:connect=token:/srv", "net:connect takes CIDR constraints, not \"/srv\"" },
	{ "net:bind=token:10.0.0.0/8,/srv", "net:bind takes CIDR constraints, not \"/srv\"" },
	{ "fs:read=token:10.0.0.0/8", "fs:read takes path constraints, not \"10.0.0.0/8\"" },
	{ "fs:write=token:/srv,::1", "fs:write takes path constraints, not \"::1\"" },
	{ "vsock:connect=token:10.0.0.0/8",
	  "vsock:connect takes CID constraints, not \"10.0.0.0/8\"" },
	{ "vsock:connect=token:/srv", "vsock:connect takes CID constraints, not \"/srv\"" },
	{ "net:connect=token:cid:2", "net:connect takes CIDR constraints, not \"cid:2\"" },
	{ "fs:read=token:cid:2", "fs:read takes path constraints, not \"cid:2\"" },
	{ "vsock:connect=token:cid:2:52,cid:2:52-52",
	  "vsock:connect: duplicate constraint \"cid:2:52-52\"" },
	{ "fs:read=token:srv", "bad constraint \"srv\"" },
	{ "fs:read=token:/srv/", "bad constraint \"/srv/\": trailing '/'" },
	{ "net:connect=token:10.0.0.1/8", "host bits set (did you mean 10.0.0.0/8?)" },
	{ "net:connect=token:10.0.0.0/8:0", "port 0" },
	{ "net:connect=token:10.0.0.0/8 ", "bad prefix length" },
	{ "net:connect=token:10.0.0.0/8,10.0.0.0/8",
	  "net:connect: duplicate constraint \"10.0.0.0/8\"" },
	{ "net:connect=token:10.0.0.0/8,10.1.0.0/16,10.2.0.0/16,10.3.0.0/16,"
	  "10.4.0.0/16,10.5.0.0/16,10.6.0.0/16,10.7.0.0/16,10.8.0.0/16",
	  "net:connect: more than 8 constraints" },
};

TEST(rule_parse_bad)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_rule r;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, capfence_rule_parse(bad[i].in, &r, err,
						 sizeof(err)))
			TH_LOG("\"%s\" accepted", bad[i].in);
		EXPECT_NE(NULL, strstr(err, bad[i].msg))
			TH_LOG("\"%s\": got \"%s\", want \"%s\"", bad[i].in,
			       err, bad[i].msg);
		EXPECT_EQ(NULL, strchr(err, '\n'));
	}
}

TEST(epoch_parse_rules)
{
	const char *ok[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char *unknown[] = { "net:connect=open", "net:listen=deny" };
	const char *dup[] = { "fs:read=open", "net:bind=deny", "fs:read=deny" };
	const char *badc[] = { "fs:read=open", "fs:write=token:/a/../b" };
	char err[CAPFENCE_ERR_MAX];
	struct capfence_epoch e;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 42, ok, 2, err, sizeof(err)));
	EXPECT_EQ(42u, e.epoch_id);
	EXPECT_EQ(CAPFENCE_RULE_TOKEN, e.rules[CAPFENCE_CLASS_NET_CONNECT].kind);
	EXPECT_EQ(1, e.rules[CAPFENCE_CLASS_NET_CONNECT].n);
	EXPECT_EQ(CAPFENCE_RULE_OPEN, e.rules[CAPFENCE_CLASS_FS_READ].kind);
	/* omitted classes are deny */
	EXPECT_EQ(CAPFENCE_RULE_DENY, e.rules[CAPFENCE_CLASS_NET_BIND].kind);
	EXPECT_EQ(CAPFENCE_RULE_DENY, e.rules[CAPFENCE_CLASS_FS_WRITE].kind);
	EXPECT_EQ(CAPFENCE_CLASS_FS_WRITE, e.rules[CAPFENCE_CLASS_FS_WRITE].class_id);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 7, NULL, 0, err, sizeof(err)));
	EXPECT_EQ(CAPFENCE_RULE_DENY, e.rules[CAPFENCE_CLASS_NET_CONNECT].kind);

	EXPECT_EQ(-EINVAL, capfence_epoch_parse_rules(&e, 42, unknown, 2, err,
						sizeof(err)));
	EXPECT_STREQ("rule 2: unknown class \"net:listen\"", err);
	EXPECT_EQ(-EINVAL, capfence_epoch_parse_rules(&e, 42, dup, 3, err,
						sizeof(err)));
	EXPECT_STREQ("rule 3: duplicate class \"fs:read\"", err);
	EXPECT_EQ(-EINVAL, capfence_epoch_parse_rules(&e, 42, badc, 2, err,
						sizeof(err)));
	EXPECT_STREQ("rule 2: bad constraint \"/a/../b\": \"..\" component", err);
	EXPECT_EQ(-EINVAL, capfence_epoch_parse_rules(&e, 0, ok, 2, err, sizeof(err)));
	EXPECT_STREQ("epoch id must be greater than 0", err);
}

static const char rules_text[] =
	"# epoch 42: the seed's narrowed policy\n"
	"epoch 42\n"
	"\n"
	"net:connect=token:127.0.0.0/8,[::1]/128   # loopback only\n"
	"  fs:read=open\t\n"
	"fs:write=token:/srv\n";

TEST(epoch_parse_text)
{
	char err[CAPFENCE_ERR_MAX], buf[4096], want[4096];
	struct capfence_epoch e, e2;
	int c;

	ASSERT_EQ(0, capfence_epoch_parse_text(&e, 0, rules_text, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(42u, e.epoch_id);
	EXPECT_EQ(2, e.rules[CAPFENCE_CLASS_NET_CONNECT].n);
	EXPECT_EQ(CAPFENCE_RULE_OPEN, e.rules[CAPFENCE_CLASS_FS_READ].kind);
	EXPECT_EQ(CAPFENCE_RULE_DENY, e.rules[CAPFENCE_CLASS_NET_BIND].kind);
	ASSERT_EQ(0, capfence_epoch_parse_text(&e2, 42, rules_text, NULL, 0));
	EXPECT_EQ(0, memcmp(&e, &e2, sizeof(e)));

	ASSERT_LT(0, capfence_epoch_format(&e, buf, sizeof(buf)));
	/* a class added later formats as the deny it defaults to */
	snprintf(want, sizeof(want), "epoch 42\n"
		 "net:connect=token:127.0.0.0/8,::1/128\n"
		 "net:bind=deny\n"
		 "fs:read=open\n"
		 "fs:write=token:/srv\n");
	for (c = CAPFENCE_CLASS_FS_WRITE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s=deny\n",
			 capfence_class_name(c));
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, capfence_epoch_parse_text(&e2, 0, buf, NULL, 0));
	EXPECT_EQ(0, memcmp(&e, &e2, sizeof(e)));
	EXPECT_EQ(-ENOSPC, capfence_epoch_format(&e, buf, 30));

	/* an id from the caller may replace the file's "epoch" line */
	ASSERT_EQ(0, capfence_epoch_parse_text(&e, 9, "fs:read=open\n", NULL, 0));
	EXPECT_EQ(9u, e.epoch_id);
	CF_NO_LEAKS();
}

static const struct {
	const char *text;
	uint64_t id;
	const char *msg;
} bad_text[] = {
	{ "epoch 1\nnet:connect=open\nnet:listen=open\n", 0,
	  "line 3: unknown class \"net:listen\"" },
	{ "epoch 1\n\n# c\nfs:read=open\nfs:read=deny\n", 0,
	  "line 5: duplicate class \"fs:read\"" },
	{ "epoch x\n", 0, "line 1: bad epoch id \"x\"" },
	{ "epoch 0\n", 0, "line 1: bad epoch id \"0\"" },
	{ "epoch\n", 0, "line 1: bad epoch id \"\"" },
	{ "epoch 18446744073709551616\n", 0, "line 1: bad epoch id" },
	{ "epoch 1\nepoch 1\n", 0, "line 2: second \"epoch\" line" },
	{ "epoch 41\nfs:read=open\n", 42, "file is for epoch 41, not 42" },
	{ "fs:read=open\n", 0, "no \"epoch ID\" line and no id given" },
	{ "epoch 3\nfs:read=token:10.0.0.0/8\n", 0,
	  "line 2: fs:read takes path constraints" },
	{ "epoch 3\nnet:connect = open\n", 0,
	  "line 2: unknown class \"net:connect \"" },
	{ "epoch 3\nnet:connect=token: 10.0.0.0/8\n", 0,
	  "line 2: bad constraint \" 10.0.0.0/8\"" },
};

TEST(epoch_parse_text_bad)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_epoch e;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_text); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, capfence_epoch_parse_text(&e, bad_text[i].id,
						       bad_text[i].text, err,
						       sizeof(err)))
			TH_LOG("case %zu accepted", i);
		EXPECT_NE(NULL, strstr(err, bad_text[i].msg))
			TH_LOG("case %zu: got \"%s\", want \"%s\"", i, err,
			       bad_text[i].msg);
	}
	CF_NO_LEAKS();
}

TEST(epoch_parse_file)
{
	char path[] = "/tmp/cf_rules_XXXXXX", err[CAPFENCE_ERR_MAX], want[128];
	struct capfence_epoch e;
	int fd;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)strlen(rules_text),
		  write(fd, rules_text, strlen(rules_text)));
	ASSERT_EQ(0, capfence_epoch_parse_file(&e, 0, path, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(42u, e.epoch_id);
	EXPECT_EQ(CAPFENCE_RULE_TOKEN, e.rules[CAPFENCE_CLASS_FS_WRITE].kind);
	ASSERT_EQ(0, ftruncate(fd, 0));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	ASSERT_EQ(32, write(fd, "epoch 5\nfs:read=open\nnet:x=open\n", 32));
	EXPECT_EQ(-EINVAL, capfence_epoch_parse_file(&e, 0, path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:3: unknown class \"net:x\"", path);
	EXPECT_STREQ(want, err);
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	ASSERT_EQ(4, write(fd, "ep\0c", 4));
	EXPECT_EQ(-EINVAL, capfence_epoch_parse_file(&e, 0, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "NUL byte in rules file"));
	close(fd);
	unlink(path);
	EXPECT_EQ(-ENOENT, capfence_epoch_parse_file(&e, 0, path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	EXPECT_STREQ(want, err);
	CF_NO_LEAKS();
}

static const struct {
	const char *old_r, *new_r;
	bool narrows;
} narrow[] = {
	{ "net:connect=open", "net:connect=open", false },
	{ "net:connect=open", "net:connect=token", true },
	{ "net:connect=open", "net:connect=token:0.0.0.0/0", true },
	{ "net:connect=open", "net:connect=deny", true },
	{ "net:connect=token", "net:connect=open", false },
	{ "net:connect=token", "net:connect=deny", true },
	{ "net:connect=token:10.0.0.0/8", "net:connect=deny", true },
	{ "net:connect=deny", "net:connect=deny", false },
	{ "net:connect=deny", "net:connect=open", false },
	{ "net:connect=deny", "net:connect=token:10.0.0.0/8", false },
	{ "net:connect=token", "net:connect=token", false },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.1.0.0/16", true },
	{ "net:connect=token:10.1.0.0/16", "net:connect=token:10.0.0.0/8", false },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.0.0.0/8", false },
	{ "net:connect=token", "net:connect=token:10.0.0.0/8", true },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token", false },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:11.0.0.0/8", true },
	{ "net:connect=token:10.0.0.0/8,11.0.0.0/8", "net:connect=token:10.0.0.0/8", true },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.0.0.0/8,11.0.0.0/8", false },
	{ "net:connect=token:11.0.0.0/8,10.0.0.0/8", "net:connect=token:10.0.0.0/7", false },
	/* covered only by a union of new constraints: fail safe */
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.0.0.0/9,10.128.0.0/9", true },
	{ "net:connect=token:10.0.0.0/8:443", "net:connect=token:10.0.0.0/8", false },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:10.0.0.0/8:443", true },
	{ "net:connect=token:10.0.0.0/8", "net:connect=token:127.0.0.0/8", true },
	{ "net:connect=token:0.0.0.0/0", "net:connect=token:::/0", true },
	{ "fs:read=token:/srv", "fs:read=token:/srv/data", true },
	{ "fs:read=token:/srv/data", "fs:read=token:/srv", false },
	{ "fs:read=token:/srv", "fs:read=token:/", false },
	{ "fs:read=token:/srv", "fs:read=token:/srvx", true },
	{ "fs:read=open", "fs:read=token:/", true },
};

TEST(narrowing)
{
	struct capfence_rule o, n;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(narrow); i++) {
		ASSERT_EQ(0, capfence_rule_parse(narrow[i].old_r, &o, NULL, 0));
		ASSERT_EQ(0, capfence_rule_parse(narrow[i].new_r, &n, NULL, 0));
		EXPECT_EQ(narrow[i].narrows, capfence_rule_narrows(&o, &n))
			TH_LOG("%s -> %s", narrow[i].old_r, narrow[i].new_r);
	}
}

TEST(epoch_narrows_seed)
{
	const char *e41r[] = { "net:connect=token:10.0.0.0/8", "fs:write=open" };
	const char *e42r[] = { "net:connect=token:127.0.0.0/8", "fs:write=open" };
	struct capfence_epoch e41, e42;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e41, 41, e41r, 2, NULL, 0));
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e42, 42, e42r, 2, NULL, 0));
	EXPECT_TRUE(capfence_epoch_narrows(&e41, &e42, CAPFENCE_CLASS_NET_CONNECT));
	EXPECT_FALSE(capfence_epoch_narrows(&e41, &e42, CAPFENCE_CLASS_FS_WRITE));
	EXPECT_FALSE(capfence_epoch_narrows(&e41, &e42, CAPFENCE_CLASS_NET_BIND));
	/* loopback and 10/8 are incomparable: that counts as narrowing */
	EXPECT_TRUE(capfence_epoch_narrows(&e42, &e41, CAPFENCE_CLASS_NET_CONNECT));
	EXPECT_FALSE(capfence_epoch_narrows(&e41, &e42, 0));
	EXPECT_FALSE(capfence_epoch_narrows(&e41, &e42, 99));
}

TEST(classes_and_reasons)
{
	static const char *const names[] = {
		"ok", "no_task", "not_bound", "forged", "epoch_mismatch",
		"class_denied", "revoked", "fenced", "not_held",
		"no_capability", "constraint", "bypass", "borrow",
		"fleet_stale", "seccomp",
	};
	static const int errs[] = {
		0, ESRCH, EINVAL, EBADMSG, ESTALE, EACCES, EKEYREVOKED,
		EKEYEXPIRED, ENOKEY, EACCES, EACCES, EACCES, EACCES, ENOLINK,
		EACCES,
	};
	static const int exits[] = { 0, 8, 8, 5, 3, 4, 6, 7, 9, 4, 4, 4, 4, 11, 4 };
	int i;

	EXPECT_EQ(CAPFENCE_CLASS_NET_CONNECT, capfence_class_from_name("net:connect"));
	EXPECT_EQ(CAPFENCE_CLASS_NET_BIND, capfence_class_from_name("net:bind"));
	EXPECT_EQ(CAPFENCE_CLASS_FS_READ, capfence_class_from_name("fs:read"));
	EXPECT_EQ(CAPFENCE_CLASS_FS_WRITE, capfence_class_from_name("fs:write"));
	EXPECT_EQ(CAPFENCE_CLASS_VSOCK_CONNECT,
		  capfence_class_from_name("vsock:connect"));
	EXPECT_EQ(-EINVAL, capfence_class_from_name("net:listen"));
	EXPECT_EQ(-EINVAL, capfence_class_from_name(""));
	EXPECT_EQ(-EINVAL, capfence_class_from_name(NULL));
	EXPECT_STREQ("fs:write", capfence_class_name(CAPFENCE_CLASS_FS_WRITE));
	EXPECT_EQ(NULL, capfence_class_name(0));
	EXPECT_EQ(NULL, capfence_class_name(CAPFENCE_CLASS_MAX + 1));
	EXPECT_TRUE(capfence_class_is_net(CAPFENCE_CLASS_NET_CONNECT));
	EXPECT_TRUE(capfence_class_is_net(CAPFENCE_CLASS_NET_BIND));
	EXPECT_FALSE(capfence_class_is_net(CAPFENCE_CLASS_FS_READ));
	/* net constraints, of the vsock family */
	EXPECT_TRUE(capfence_class_is_net(CAPFENCE_CLASS_VSOCK_CONNECT));
	EXPECT_FALSE(capfence_class_is_net(0));
	EXPECT_FALSE(capfence_class_is_net(-1));

	ASSERT_EQ((int)ARRAY_SIZE(names), CAPFENCE_R_MAX + 1);
	for (i = 0; i <= CAPFENCE_R_MAX; i++) {
		EXPECT_STREQ(names[i], capfence_reason_name(i));
		EXPECT_EQ(i, capfence_reason_from_name(names[i]));
		EXPECT_EQ(errs[i], capfence_reason_errno(i)) TH_LOG("%s", names[i]);
		EXPECT_EQ(exits[i], capfence_reason_exit(i)) TH_LOG("%s", names[i]);
	}
	EXPECT_STREQ("?", capfence_reason_name(CAPFENCE_R_MAX + 1));
	EXPECT_STREQ("?", capfence_reason_name(-1));
	EXPECT_EQ(-EINVAL, capfence_reason_from_name("nope"));
	EXPECT_EQ(1, capfence_reason_exit(99));
}

/* The class registry as bindings read it (since 1.4), and its bad inputs. */
TEST(class_count_slots_sizes)
{
	struct capfence_epoch *e = malloc(sizeof(*e));
	size_t i;
	int c;

	ASSERT_NE(NULL, e);
	EXPECT_EQ(CAPFENCE_CLASS_MAX, (int)capfence_class_count());
	EXPECT_EQ(CAPFENCE_CLASS_SLOTS, (int)capfence_class_slots());
	EXPECT_LT(CAPFENCE_CLASS_MAX, CAPFENCE_CLASS_SLOTS);
	EXPECT_EQ(sizeof(struct capfence_epoch), capfence_struct_size("capfence_epoch"));
	EXPECT_EQ(sizeof(struct capfence_epoch_info),
		  capfence_struct_size("capfence_epoch_info"));
	EXPECT_EQ(sizeof(struct capfence_rule), capfence_struct_size("capfence_rule"));
	EXPECT_EQ(sizeof(struct capfence_token), capfence_struct_size("capfence_token"));
	EXPECT_EQ(sizeof(struct capfence_status), capfence_struct_size("capfence_status"));
	EXPECT_EQ(sizeof(struct capfence_change_opts),
		  capfence_struct_size("capfence_change_opts"));
	EXPECT_EQ(8 + CAPFENCE_CLASS_SLOTS * sizeof(struct capfence_rule),
		  sizeof(struct capfence_epoch));
	/* bad names: 0, never a guess */
	EXPECT_EQ(0, capfence_struct_size(NULL));
	EXPECT_EQ(0, capfence_struct_size(""));
	EXPECT_EQ(0, capfence_struct_size("struct capfence_epoch"));
	EXPECT_EQ(0, capfence_struct_size("capfence_epoch "));
	EXPECT_EQ(0, capfence_struct_size("capfence_key"));	/* opaque */
	/* the slots above the library's classes stay unused */
	memset(e, 0xff, sizeof(*e));
	capfence_epoch_init(e, 3);
	for (c = CAPFENCE_CLASS_MAX + 1; c < CAPFENCE_CLASS_SLOTS; c++)
		for (i = 0; i < sizeof(e->rules[c]); i++)
			ASSERT_EQ(0, ((unsigned char *)&e->rules[c])[i]);
	EXPECT_FALSE(capfence_class_valid(CAPFENCE_CLASS_MAX + 1));
	EXPECT_FALSE(capfence_class_valid(CAPFENCE_CLASS_SLOTS));
	EXPECT_FALSE(capfence_epoch_narrows(e, e, CAPFENCE_CLASS_SLOTS));
	free(e);
}

/*
 * The 1.3 layout's wrappers (cf_compat.c; shared library: the symbols
 * @LIBCAPFENCE_1.0/_1.1/_1.3), called here by their internal names under
 * ASan: a write past the 1.3 struct is a heap overflow.
 */
struct v10_epoch {
	uint64_t epoch_id;
	struct capfence_rule rules[5];
};
void capfence__v10_epoch_init(struct v10_epoch *o, uint64_t epoch_id);
int capfence__v10_epoch_parse_rules(struct v10_epoch *o, uint64_t epoch_id,
				    const char *const *rules, size_t n,
				    char *err, size_t errlen);
int capfence__v10_epoch_parse_text(struct v10_epoch *o, uint64_t epoch_id,
				   const char *text, char *err, size_t errlen);
int capfence__v10_epoch_format(const struct v10_epoch *o, char *buf, size_t len);
bool capfence__v10_epoch_narrows(const struct v10_epoch *old_o,
				 const struct v10_epoch *new_o, int class_id);
enum capfence_reason capfence__v10_decide_delegation(const struct capfence_key *const keys[],
						     size_t nkeys,
						     const struct capfence_token *t,
						     const struct v10_epoch *receiver);

TEST(compat_1_3_layout)
{
	static const char *const rules[] = { "net:bind=token:0.0.0.0/0:80", "fs:write=open" };
	static const char *const bad[] = { "net:bind=open", "fs:nope=open" };
	struct v10_epoch *o = malloc(sizeof(*o)), *o2 = malloc(sizeof(*o2));
	char err[CAPFENCE_ERR_MAX], buf[4096];

	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, o2);
	ASSERT_EQ(10432, sizeof(*o));
	capfence__v10_epoch_init(o, 9);
	EXPECT_EQ(9, o->epoch_id);
	EXPECT_EQ(CAPFENCE_RULE_DENY, o->rules[CAPFENCE_CLASS_FS_WRITE].kind);
	ASSERT_EQ(0, capfence__v10_epoch_parse_rules(o, 9, rules, 2, err, sizeof(err)));
	ASSERT_LT(0, capfence__v10_epoch_format(o, buf, sizeof(buf)));
	EXPECT_STREQ("epoch 9\nnet:connect=deny\nnet:bind=token:0.0.0.0/0:80\n"
		     "fs:read=deny\nfs:write=open\n", buf);
	EXPECT_EQ(-ENOSPC, capfence__v10_epoch_format(o, buf, 10));
	ASSERT_EQ(0, capfence__v10_epoch_parse_text(o2, 10, "fs:write=deny\n", err, sizeof(err)));
	EXPECT_TRUE(capfence__v10_epoch_narrows(o, o2, CAPFENCE_CLASS_FS_WRITE));
	EXPECT_FALSE(capfence__v10_epoch_narrows(o, o2, CAPFENCE_CLASS_NET_CONNECT));
	/* bad input: the same errors as the current functions */
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_parse_rules(o, 9, bad, 2, err, sizeof(err)));
	EXPECT_STREQ("rule 2: unknown class \"fs:nope\"", err);
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_parse_rules(o, 0, rules, 2, err, sizeof(err)));
	EXPECT_STREQ("epoch id must be greater than 0", err);
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_parse_text(o, 0, "fs:write=deny\n", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_parse_text(NULL, 1, "", err, sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_parse_text(o, 1, NULL, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, capfence__v10_epoch_format(NULL, buf, sizeof(buf)));
	EXPECT_FALSE(capfence__v10_epoch_narrows(o, o2, 0));
	EXPECT_FALSE(capfence__v10_epoch_narrows(o, o2, 5));
	EXPECT_FALSE(capfence__v10_epoch_narrows(o, o2, -1));
	EXPECT_EQ(CAPFENCE_R_FORGED, capfence__v10_decide_delegation(NULL, 0, NULL, o));
	free(o);
	free(o2);
}

TEST_HARNESS_MAIN
