// SPDX-License-Identifier: GPL-2.0
/* libcapfence: constraint parsing, printing, containment and admission. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cf_test.h"

static const struct {
	const char *in, *canon;
} good[] = {
	{ "10.0.0.0/8", "10.0.0.0/8" },
	{ "10.1.2.3", "10.1.2.3/32" },
	{ "10.1.2.3:80", "10.1.2.3/32:80" },
	{ "10.0.0.0/8:443", "10.0.0.0/8:443" },
	{ "10.0.0.0/8:443-443", "10.0.0.0/8:443" },
	{ "10.0.0.0/8:1000-2000", "10.0.0.0/8:1000-2000" },
	{ "10.0.0.0/8:1-65535", "10.0.0.0/8:1-65535" },
	{ "10.0.0.0/8:65535", "10.0.0.0/8:65535" },
	{ "0.0.0.0/0", "0.0.0.0/0" },
	{ "255.255.255.255/32", "255.255.255.255/32" },
	{ "[::1]/128:80", "[::1]/128:80" },
	{ "::1/128", "::1/128" },
	{ "::1", "::1/128" },
	{ "[::1]", "::1/128" },
	{ "[::1]:80", "[::1]/128:80" },
	{ "[::1]/128", "::1/128" },
	{ "::/0", "::/0" },
	{ "[2001:db8::]/32:1000-2000", "[2001:db8::]/32:1000-2000" },
	{ "2001:DB8:0:0::/64", "2001:db8::/64" },
	{ "/", "/" },
	{ "/srv/data", "/srv/data" },
	{ "/srv/.hidden", "/srv/.hidden" },
	{ "/srv/..x/...", "/srv/..x/..." },
	{ "/with space", "/with space" },
	{ "cid:2", "cid:2" },
	{ "cid:2:1024-2048", "cid:2:1024-2048" },
	{ "cid:2:52-52", "cid:2:52" },
	{ "cid:0", "cid:0" },
	{ "cid:4294967294:1", "cid:4294967294:1" },
	{ "cid:any", "cid:any" },
	{ "cid:any:1-65535", "cid:any:1-65535" },
};

TEST(parse_good)
{
	char err[CAPFENCE_ERR_MAX], buf[CAPFENCE_CONSTRAINT_TEXT_MAX];
	struct capfence_constraint c, d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		err[0] = '\0';
		EXPECT_EQ(0, capfence_constraint_parse(good[i].in, &c, err,
						 sizeof(err)))
			TH_LOG("\"%s\": %s", good[i].in, err);
		EXPECT_EQ(0, capfence_constraint_check(&c, err, sizeof(err)))
			TH_LOG("\"%s\": %s", good[i].in, err);
		EXPECT_EQ((int)strlen(good[i].canon),
			  capfence_constraint_format(&c, buf, sizeof(buf)));
		EXPECT_STREQ(good[i].canon, buf);
		/* the printed form parses back to the same constraint */
		EXPECT_EQ(0, capfence_constraint_parse(buf, &d, NULL, 0));
		EXPECT_TRUE(capfence_constraint_equal(&c, &d)) TH_LOG("%s", buf);
	}
}

TEST(parse_long_path)
{
	char p[CAPFENCE_PATH_MAX + 2], buf[CAPFENCE_CONSTRAINT_TEXT_MAX];
	struct capfence_constraint c;

	memset(p, 'x', sizeof(p));
	p[0] = '/';
	p[CAPFENCE_PATH_MAX] = '\0';
	ASSERT_EQ(0, capfence_constraint_parse(p, &c, NULL, 0));
	EXPECT_EQ(CAPFENCE_PATH_MAX, c.path.len);
	EXPECT_EQ(CAPFENCE_PATH_MAX, capfence_constraint_format(&c, buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, capfence_constraint_format(&c, buf, 10));
}

static const struct {
	const char *in, *msg;
} bad[] = {
	{ "", "empty constraint" },
	{ "10.0.0.1/8", "host bits set (did you mean 10.0.0.0/8?)" },
	{ "10.0.0.1/8:443", "host bits set (did you mean 10.0.0.0/8:443?)" },
	{ "[::1]/64:80", "host bits set (did you mean [::]/64:80?)" },
	{ "10.0.0.0/33", "prefix length > 32" },
	{ "::1/129", "prefix length > 128" },
	{ "10.0.0.0/08", "bad prefix length" },
	{ "10.0.0.0/", "bad prefix length" },
	{ "10.0.0.0/-1", "bad prefix length" },
	{ "10.0.0.0/8 ", "bad prefix length" },
	{ "10.0.0.0/8:0", "port 0" },
	{ "10.0.0.0/8:0-100", "port 0" },
	{ "10.0.0.0/8:2000-1000", "port range reversed" },
	{ "10.0.0.0/8:65536", "port > 65535" },
	{ "10.0.0.0/8:1-70000", "port > 65535" },
	{ "10.0.0.0/8:", "empty port after ':'" },
	{ "10.0.0.0/8:http", "bad port" },
	{ "10.0.0.0/8:080", "bad port" },
	{ "10.0.0.0/8:1-", "bad port" },
	{ "10.0.0.0/8:+1", "bad port" },
	{ "10.0.0.0/8:1-2-3", "bad port" },
	{ "256.0.0.0/8", "not an IPv4/IPv6 address or absolute path" },
	{ "10.0.0/8", "not an IPv4/IPv6 address or absolute path" },
	{ "010.0.0.0/8", "not an IPv4/IPv6 address or absolute path" },
	{ "srv/data", "not an IPv4/IPv6 address or absolute path" },
	{ "./srv", "not an IPv4/IPv6 address or absolute path" },
	{ "~/srv", "not an IPv4/IPv6 address or absolute path" },
	{ "::1/128:80", "IPv6 with a port needs brackets" },
	{ "[::1", "missing ']'" },
	{ "[10.0.0.1]/32", "not an IPv4/IPv6 address or absolute path" },
	{ "[::1]x", "unexpected characters after the address" },
	{ "//srv", "empty component" },
	{ "/srv//data", "empty component" },
	{ "/srv/./data", "\".\" component" },
	{ "/srv/../data", "\"..\" component" },
	{ "/srv/..", "\"..\" component" },
	{ "/srv/.", "\".\" component" },
	{ "/..", "\"..\" component" },
	{ "/srv/", "trailing '/'" },
	{ "/a,b", "',' in path" },
	{ "/a\tb", "control character in path" },
	{ "/a\x7f", "control character in path" },
	{ "cid:", "bad CID" },
	{ "cid:-1", "bad CID" },
	{ "cid:02", "bad CID" },
	{ "cid:2x", "bad CID" },
	{ "cid:4294967295", "CID > 4294967294 (for any CID: cid:any)" },
	{ "cid:2:0", "port 0" },
	{ "cid:2:70000", "port > 65535" },
	{ "cid:2:", "empty port after ':'" },
	{ "cid:2:2-1", "port range reversed" },
};

TEST(parse_bad)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_constraint c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EINVAL, capfence_constraint_parse(bad[i].in, &c, err,
							sizeof(err)))
			TH_LOG("\"%s\" accepted", bad[i].in);
		EXPECT_NE(NULL, strstr(err, bad[i].msg))
			TH_LOG("\"%s\": got \"%s\", want \"%s\"", bad[i].in,
			       err, bad[i].msg);
	}
}

TEST(parse_too_long_path)
{
	char p[CAPFENCE_PATH_MAX + 2], err[CAPFENCE_ERR_MAX];
	struct capfence_constraint c;

	memset(p, 'x', sizeof(p));
	p[0] = '/';
	p[CAPFENCE_PATH_MAX + 1] = '\0';
	EXPECT_EQ(-EINVAL, capfence_constraint_parse(p, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "path longer than 255 bytes")) TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, capfence_constraint_parse(NULL, &c, err, sizeof(err)));
	EXPECT_STREQ("empty constraint", err);
}

static const struct {
	const char *outer, *inner;
	bool contains;
} cont[] = {
	{ "10.0.0.0/8", "10.1.0.0/16", true },
	{ "10.1.0.0/16", "10.0.0.0/8", false },
	{ "10.0.0.0/8", "10.0.0.0/8", true },
	{ "10.0.0.0/8", "11.0.0.0/8", false },
	{ "10.0.0.0/8", "10.255.255.255", true },
	{ "10.128.0.0/9", "10.0.0.0/8", false },
	{ "10.0.0.0/7", "11.0.0.0/8", true },
	{ "10.0.0.0/8:443", "10.1.0.0/16", false },
	{ "10.0.0.0/8", "10.1.0.0/16:443", true },
	{ "10.0.0.0/8:1000-2000", "10.0.0.0/8:1500-1600", true },
	{ "10.0.0.0/8:1000-2000", "10.0.0.0/8:900-1500", false },
	{ "10.0.0.0/8:1000-2000", "10.0.0.0/8:1500-2001", false },
	{ "10.0.0.0/8:1-65535", "10.0.0.0/8", false },
	{ "127.0.0.0/8", "127.0.0.1/32:443-445", true },
	{ "0.0.0.0/0", "::/0", false },
	{ "::/0", "0.0.0.0/0", false },
	{ "::/0", "::1/128", true },
	{ "[::1]/128", "[::1]/128:80", true },
	{ "2001:db8::/32", "2001:db9::/32", false },
	{ "10.0.0.0/8", "/srv", false },
	{ "/srv", "10.0.0.0/8", false },
	{ "/srv", "/srv/data", true },
	{ "/srv", "/srv", true },
	{ "/srv", "/srvx", false },
	{ "/srv", "/sr", false },
	{ "/srv/data", "/srv", false },
	{ "/", "/srv", true },
	{ "/", "/", true },
	{ "/srv", "/", false },
	{ "cid:any", "cid:2:52", true },
	{ "cid:2", "cid:2:1024-2048", true },
	{ "cid:2:1024-2048", "cid:2", false },
	{ "cid:2:1024-2048", "cid:2:1500", true },
	{ "cid:2", "cid:3", false },
	{ "cid:2", "cid:any", false },
	{ "cid:any", "0.0.0.0/0", false },
	{ "0.0.0.0/0", "cid:0", false },
};

TEST(contains)
{
	struct capfence_constraint o, i;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(cont); k++) {
		ASSERT_EQ(0, capfence_constraint_parse(cont[k].outer, &o, NULL, 0));
		ASSERT_EQ(0, capfence_constraint_parse(cont[k].inner, &i, NULL, 0));
		EXPECT_EQ(cont[k].contains, capfence_constraint_contains(&o, &i))
			TH_LOG("%s contains %s?", cont[k].outer, cont[k].inner);
	}
}

TEST(contained_sets)
{
	struct capfence_constraint o[2], i[2];

	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/9", &o[0], NULL, 0));
	ASSERT_EQ(0, capfence_constraint_parse("10.128.0.0/9", &o[1], NULL, 0));
	ASSERT_EQ(0, capfence_constraint_parse("10.1.0.0/16", &i[0], NULL, 0));
	ASSERT_EQ(0, capfence_constraint_parse("10.200.0.0/16", &i[1], NULL, 0));
	EXPECT_TRUE(capfence_constraints_contained(o, 2, i, 2));
	EXPECT_TRUE(capfence_constraints_contained(o, 2, i, 1));
	EXPECT_FALSE(capfence_constraints_contained(o, 1, i, 2));
	/* unconstrained outer holds everything; unconstrained inner only fits it */
	EXPECT_TRUE(capfence_constraints_contained(o, 0, i, 2));
	EXPECT_TRUE(capfence_constraints_contained(o, 0, i, 0));
	EXPECT_FALSE(capfence_constraints_contained(o, 2, i, 0));
	/* covered only by a union: rejected, fail safe */
	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/8", &i[0], NULL, 0));
	EXPECT_FALSE(capfence_constraints_contained(o, 2, i, 1));
}

TEST(admits)
{
	struct capfence_constraint c;
	unsigned char a[16] = { 0 };

	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/8:1000-2000", &c, NULL, 0));
	ASSERT_EQ(1, inet_pton(AF_INET, "10.255.1.1", a));
	EXPECT_TRUE(capfence_constraint_admits_addr(&c, 4, a));
	EXPECT_FALSE(capfence_constraint_admits_addr(&c, 6, a));
	ASSERT_EQ(1, inet_pton(AF_INET, "11.0.0.0", a));
	EXPECT_FALSE(capfence_constraint_admits_addr(&c, 4, a));
	EXPECT_TRUE(capfence_constraint_admits_port(&c, 1000));
	EXPECT_TRUE(capfence_constraint_admits_port(&c, 2000));
	EXPECT_FALSE(capfence_constraint_admits_port(&c, 999));
	EXPECT_FALSE(capfence_constraint_admits_port(&c, 2001));
	EXPECT_FALSE(capfence_constraint_admits_path(&c, "/srv"));

	ASSERT_EQ(0, capfence_constraint_parse("[::1]/128", &c, NULL, 0));
	ASSERT_EQ(1, inet_pton(AF_INET6, "::1", a));
	EXPECT_TRUE(capfence_constraint_admits_addr(&c, 6, a));
	EXPECT_TRUE(capfence_constraint_admits_port(&c, 0));
	EXPECT_TRUE(capfence_constraint_admits_port(&c, 65535));
	ASSERT_EQ(1, inet_pton(AF_INET6, "::2", a));
	EXPECT_FALSE(capfence_constraint_admits_addr(&c, 6, a));

	ASSERT_EQ(0, capfence_constraint_parse("/srv", &c, NULL, 0));
	EXPECT_TRUE(capfence_constraint_admits_path(&c, "/srv"));
	EXPECT_TRUE(capfence_constraint_admits_path(&c, "/srv/a/b"));
	EXPECT_FALSE(capfence_constraint_admits_path(&c, "/srvx"));
	EXPECT_FALSE(capfence_constraint_admits_path(&c, "/sr"));
	EXPECT_FALSE(capfence_constraint_admits_path(&c, "/"));
	EXPECT_FALSE(capfence_constraint_admits_port(&c, 80));
	ASSERT_EQ(0, capfence_constraint_parse("/", &c, NULL, 0));
	EXPECT_TRUE(capfence_constraint_admits_path(&c, "/etc/passwd"));
	EXPECT_FALSE(capfence_constraint_admits_path(&c, "etc/passwd"));
}

TEST(check_rejects_noncanonical_structs)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_constraint c;

	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/8", &c, NULL, 0));
	c.net.reserved = 1;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "reserved field is not zero"));
	c.net.reserved = 0;
	c.net.addr[5] = 1;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "IPv4 address with non-zero bytes"));
	c.net.addr[5] = 0;
	c.net.port_min = 0;
	c.net.port_max = 80;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "port 0 is only valid as 0-65535"));
	ASSERT_EQ(0, capfence_constraint_parse("/srv", &c, NULL, 0));
	c.path.len = 2;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "length does not match"));
	c.kind = 7;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "kind 7 unknown"));
}

/* A vsock constraint is one CID or all, never a CIDR or VMADDR_CID_ANY. */
TEST(check_rejects_vsock_structs)
{
	char err[CAPFENCE_ERR_MAX];
	struct capfence_constraint c;

	ASSERT_EQ(0, capfence_constraint_parse("cid:2", &c, NULL, 0));
	EXPECT_EQ(CAPFENCE_FAMILY_VSOCK, c.net.family);
	EXPECT_EQ(32, c.net.prefix_len);
	c.net.prefix_len = 24;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "prefix length 24 (expected 32, or 0"));
	c.net.prefix_len = 32;
	memset(c.net.addr, 0xff, 4);
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "CID 4294967295"));
	memset(c.net.addr, 0, 4);
	c.net.addr[4] = 1;
	EXPECT_EQ(-EINVAL, capfence_constraint_check(&c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "CID with non-zero bytes 4..15"));
}

TEST_HARNESS_MAIN
