// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet schema (tools/lib/cf_fleet.c) without a store: every change
 * kind encodes to its key and value and decodes back; malformed keys and
 * values are refused with a message; prefixes, host names, host reports;
 * the fleet reason and the fleet state names.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"
#include "cf_fleet.h"

static void roundtrip(struct __test_metadata *_metadata,
		      const struct cf_fleet_change *ch, const char *want_key)
{
	struct cf_fleet_change back;
	char *key, *value, err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, cf_fleet_encode("/capfence/", ch, &key, &value, err, sizeof(err)));
	EXPECT_STREQ(want_key, key);
	ASSERT_EQ(0, cf_fleet_decode("/capfence/", key, value, &back, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	EXPECT_EQ(ch->kind, back.kind);
	EXPECT_EQ(ch->id, back.id);
	if (ch->kind == CF_FLEET_EPOCH_INSTALL) {
		ASSERT_NE(NULL, back.epoch);
		EXPECT_EQ(0, memcmp(ch->epoch, back.epoch, sizeof(*back.epoch)));
	} else {
		EXPECT_EQ(NULL, back.epoch);
	}
	cf_fleet_change_release(&back);
	free(key);
	free(value);
}

TEST(every_kind_roundtrips)
{
	static const char *const rules[] = {
		"net:connect=token:10.0.0.0/8:443,[fd00::]/8", "fs:read=token:/srv/data",
		"fs:write=open",
	};
	struct cf_fleet_change ch;
	struct capfence_epoch e;

	memset(&ch, 0, sizeof(ch));
	ch.kind = CF_FLEET_EPOCH_INSTALL;
	ch.id = 41;
	ch.epoch = &e;
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 41, rules, 3, NULL, 0));
	roundtrip(_metadata, &ch, "/capfence/fleet/epoch/41");
	memset(&ch, 0, sizeof(ch));
	ch.kind = CF_FLEET_EPOCH_ACTIVATE;
	ch.id = 18446744073709551615ULL;
	roundtrip(_metadata, &ch, "/capfence/fleet/activate/18446744073709551615");
	ch.kind = CF_FLEET_KEY_ADD;
	ch.id = 4294967295ULL;
	roundtrip(_metadata, &ch, "/capfence/fleet/key/4294967295");
	ch.kind = CF_FLEET_KEY_REMOVE;
	ch.id = 7;
	roundtrip(_metadata, &ch, "/capfence/fleet/unkey/7");
	ch.kind = CF_FLEET_REVOKE;
	ch.id = 0x1234abcdULL;
	roundtrip(_metadata, &ch, "/capfence/fleet/revoke/305441741");
	CF_NO_LEAKS();
}

TEST(value_is_stable_json)
{
	struct cf_fleet_change ch;
	struct capfence_epoch e;
	char *key, *value, want[512];
	int c;

	memset(&ch, 0, sizeof(ch));
	ch.kind = CF_FLEET_REVOKE;
	ch.id = 5;
	ASSERT_EQ(0, cf_fleet_encode("/p/", &ch, &key, &value, NULL, 0));
	EXPECT_STREQ("/p/fleet/revoke/5", key);
	EXPECT_STREQ("{\"kind\":\"revoke\",\"cap_id\":\"5\"}", value);
	free(key);
	free(value);
	ch.kind = CF_FLEET_EPOCH_INSTALL;
	ch.id = 2;
	capfence_epoch_init(&e, 2);
	ch.epoch = &e;
	ASSERT_EQ(0, cf_fleet_encode("/p/", &ch, &key, &value, NULL, 0));
	/* every class's rule, in id order (a class added later: one more) */
	snprintf(want, sizeof(want), "{\"kind\":\"epoch_install\",\"epoch\":\"2\",\"rules\":["
		 "\"net:connect=deny\",\"net:bind=deny\",\"fs:read=deny\",\"fs:write=deny\"");
	for (c = CAPFENCE_CLASS_FS_WRITE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), ",\"%s=deny\"",
			 capfence_class_name(c));
	snprintf(want + strlen(want), sizeof(want) - strlen(want), "]}");
	EXPECT_STREQ(want, value);
	free(key);
	free(value);
	CF_NO_LEAKS();
}

TEST(encode_refuses_bad_changes)
{
	struct cf_fleet_change ch;
	struct capfence_epoch e;
	char *key = (char *)1, *value = (char *)1, err[CAPFENCE_ERR_MAX];

	memset(&ch, 0, sizeof(ch));
	EXPECT_EQ(-EINVAL, cf_fleet_encode("/p/", &ch, &key, &value, err, sizeof(err)));
	EXPECT_STREQ("not a fleet change", err);
	EXPECT_EQ(NULL, key);
	ch.kind = CF_FLEET_KEY_REMOVE;
	ch.id = 1ULL << 32;
	EXPECT_EQ(-EINVAL, cf_fleet_encode("/p/", &ch, &key, &value, err, sizeof(err)));
	EXPECT_STREQ("key id 4294967296 is out of range", err);
	ch.kind = CF_FLEET_EPOCH_INSTALL;
	ch.id = 3;
	EXPECT_EQ(-EINVAL, cf_fleet_encode("/p/", &ch, &key, &value, err, sizeof(err)));
	EXPECT_STREQ("the epoch's id is not the change's", err);	/* no epoch */
	capfence_epoch_init(&e, 4);
	ch.epoch = &e;
	EXPECT_EQ(-EINVAL, cf_fleet_encode("/p/", &ch, &key, &value, err, sizeof(err)));
	EXPECT_STREQ("the epoch's id is not the change's", err);
	CF_NO_LEAKS();
}

static const struct {
	const char *key, *value, *msg;
} bad[] = {
	{ "/other/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":\"5\"}",
	  "key '/other/fleet/revoke/5' is not under /p/fleet/" },
	{ "/p/hosts/a", "{}", "key '/p/hosts/a' is not under /p/fleet/" },
	{ "/p/fleet/revoke", "{}",
	  "key '/p/fleet/revoke' is not a fleet change (<prefix>fleet/KIND/ID)" },
	{ "/p/fleet/revoke/05", "{\"kind\":\"revoke\",\"cap_id\":\"05\"}",
	  "key '/p/fleet/revoke/05' is not a fleet change (<prefix>fleet/KIND/ID)" },
	{ "/p/fleet/revoke/0", "{\"kind\":\"revoke\",\"cap_id\":\"0\"}",
	  "key '/p/fleet/revoke/0' is not a fleet change (<prefix>fleet/KIND/ID)" },
	{ "/p/fleet/revoke/5", "not json",
	  "/p/fleet/revoke/5: the value is not a fleet change (no \"kind\")" },
	{ "/p/fleet/revoke/5", "[1]",
	  "/p/fleet/revoke/5: the value is not a fleet change (no \"kind\")" },
	{ "/p/fleet/revoke/5", "{\"kind\":\"explode\"}",
	  "/p/fleet/revoke/5: unknown change kind 'explode'" },
	{ "/p/fleet/key/5", "{\"kind\":\"revoke\",\"cap_id\":\"5\"}",
	  "/p/fleet/key/5: a revoke change under key/" },
	{ "/p/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":\"6\"}",
	  "/p/fleet/revoke/5: \"cap_id\" is missing or not the key's id" },
	{ "/p/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":5}",
	  "/p/fleet/revoke/5: \"cap_id\" is missing or not the key's id" },
	{ "/p/fleet/unkey/5", "{\"kind\":\"key_add\",\"key_id\":\"5\"}",
	  "/p/fleet/unkey/5: a key_add change under unkey/" },
	/* a chained change: seq from 1, prev the 32-byte link before it */
	{ "/p/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":\"5\",\"seq\":\"1\"}",
	  "/p/fleet/revoke/5: \"seq\" or \"prev\" is malformed" },
	{ "/p/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":\"5\",\"seq\":\"0\",\"prev\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"}",
	  "/p/fleet/revoke/5: \"seq\" or \"prev\" is malformed" },
	{ "/p/fleet/revoke/5", "{\"kind\":\"revoke\",\"cap_id\":\"5\",\"seq\":\"1\",\"prev\":\"AAAA\"}",
	  "/p/fleet/revoke/5: \"seq\" or \"prev\" is malformed" },
	{ "/p/fleet/key/4294967296", "{\"kind\":\"key_add\",\"key_id\":\"4294967296\"}",
	  "/p/fleet/key/4294967296: key id out of range" },
	{ "/p/fleet/epoch/9", "{\"kind\":\"epoch_install\",\"epoch\":\"9\"}",
	  "/p/fleet/epoch/9: \"rules\" is missing or too long" },
	{ "/p/fleet/epoch/9", "{\"kind\":\"epoch_install\",\"epoch\":\"9\",\"rules\":[\"net:connect=maybe\"]}",
	  NULL },	/* the rule parser's message, prefixed */
	{ "/p/fleet/epoch/9", "{\"kind\":\"epoch_install\",\"epoch\":\"9\",\"rules\":[1]}",
	  "/p/fleet/epoch/9: rule 1 is not a string" },
};

TEST(decode_refuses_what_the_schema_lacks)
{
	struct cf_fleet_change ch;
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(-EBADMSG, cf_fleet_decode("/p/", bad[i].key, bad[i].value, &ch,
						    err, sizeof(err))) {
			TH_LOG("case %zu: %s", i, bad[i].key);
		}
		if (bad[i].msg) {
			EXPECT_STREQ(bad[i].msg, err);
		} else {
			EXPECT_EQ(0, strncmp(err, "/p/fleet/epoch/9: rule 1: ", 26)) {
				TH_LOG("%s", err);
			}
		}
		EXPECT_EQ(CF_FLEET_NONE, ch.kind);
	}
	CF_NO_LEAKS();
}

TEST(prefixes_and_host_names)
{
	static const char *const good_prefix[] = { "/", "/capfence/", "/a/b-c_d.e/" };
	static const char *const bad_prefix[] = { "", "capfence/", "/capfence", "//", "/a b/",
						  "/a//b/", "/\xc3\xa9/" };
	static const char *const good_host[] = { "a", "web-1", "h.example.com", "A_9" };
	static const char *const bad_host[] = { "", ".hidden", "a/b", "a b", "a\n",
		"01234567890123456789012345678901234567890123456789012345678901234" };
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	for (i = 0; i < sizeof(good_prefix) / sizeof(good_prefix[0]); i++)
		EXPECT_EQ(0, cf_fleet_check_prefix(good_prefix[i], err, sizeof(err)));
	for (i = 0; i < sizeof(bad_prefix) / sizeof(bad_prefix[0]); i++)
		EXPECT_EQ(-EINVAL, cf_fleet_check_prefix(bad_prefix[i], err, sizeof(err)));
	EXPECT_EQ(0, strncmp(err, "bad fleet prefix '", 18));
	for (i = 0; i < sizeof(good_host) / sizeof(good_host[0]); i++)
		EXPECT_EQ(0, cf_fleet_check_host(good_host[i], err, sizeof(err)));
	for (i = 0; i < sizeof(bad_host) / sizeof(bad_host[0]); i++)
		EXPECT_EQ(-EINVAL, cf_fleet_check_host(bad_host[i], err, sizeof(err)));
	EXPECT_EQ(0, strncmp(err, "bad host name '", 15));
}

TEST(host_report_roundtrips)
{
	struct cf_fleet_host h = { "web-1", 18446744073709551615ULL, "current", 10000, 30000,
				   1700000000123LL, "rev=9 revoke 0000000000000009: out of memory", false, 41,
				   { 7, 7, 7 }, true }, back;
	char *v = cf_fleet_host_encode(&h), err[CAPFENCE_ERR_MAX];

	ASSERT_NE(NULL, v);
	ASSERT_EQ(0, cf_fleet_host_decode(v, &back, err, sizeof(err)));
	EXPECT_STREQ("web-1", back.name);
	EXPECT_EQ(h.applied, back.applied);
	EXPECT_STREQ("current", back.state);
	EXPECT_EQ(10000u, back.stale_ms);
	EXPECT_EQ(30000u, back.deny_ms);
	EXPECT_EQ(h.time_ms, back.time_ms);
	EXPECT_STREQ(h.failing, back.failing);
	EXPECT_EQ(41u, back.seq);
	/* the link its module holds, as the report names it */
	EXPECT_TRUE(back.have_link);
	EXPECT_EQ(0, memcmp(h.link, back.link, sizeof(h.link)));
	free(v);
	EXPECT_EQ(-EBADMSG, cf_fleet_host_decode("{\"host\":\"a\",\"applied\":\"1\",\"seq\":\"1\",\"link\":\"AA\"}",
						 &back, err, sizeof(err)));
	EXPECT_STREQ("malformed report (\"link\" is not a link hash)", err);
	EXPECT_EQ(-EBADMSG, cf_fleet_host_decode("{\"host\":\"a\",\"applied\":\"1\",\"seq\":\"-1\"}", &back,
						 err, sizeof(err)));
	EXPECT_STREQ("malformed report (\"seq\" is not a number)", err);
	EXPECT_EQ(-EBADMSG, cf_fleet_host_decode("{\"host\":\"a/b\",\"applied\":\"1\"}", &back,
						 err, sizeof(err)));
	EXPECT_STREQ("malformed report (not JSON with \"host\" and \"applied\")", err);
	EXPECT_EQ(-EBADMSG, cf_fleet_host_decode("{\"host\":\"a\",\"applied\":\"x\"}", &back,
						 err, sizeof(err)));
	CF_NO_LEAKS();
}

TEST(names)
{
	EXPECT_STREQ("fleet_stale", capfence_reason_name(CAPFENCE_R_FLEET_STALE));
	EXPECT_EQ((int)CAPFENCE_R_FLEET_STALE, capfence_reason_from_name("fleet_stale"));
	EXPECT_EQ(ENOLINK, capfence_reason_errno(CAPFENCE_R_FLEET_STALE));
	EXPECT_EQ(11, capfence_reason_exit(CAPFENCE_R_FLEET_STALE));
	EXPECT_STREQ("off", capfence_fleet_state_name(CAPFENCE_FLEET_OFF));
	EXPECT_STREQ("current", capfence_fleet_state_name(CAPFENCE_FLEET_CURRENT));
	EXPECT_STREQ("stale", capfence_fleet_state_name(CAPFENCE_FLEET_STALE));
	EXPECT_STREQ("deny", capfence_fleet_state_name(CAPFENCE_FLEET_DENY));
	EXPECT_STREQ("?", capfence_fleet_state_name(4));
	EXPECT_STREQ("fleet_apply", capfence_event_name(CAPFENCE_EV_FLEET_APPLY));
	EXPECT_STREQ("fleet_state", capfence_event_name(CAPFENCE_EV_FLEET_STATE));
	EXPECT_STREQ("epoch_install", cf_fleet_kind_name(CF_FLEET_EPOCH_INSTALL));
	EXPECT_STREQ("revoke", cf_fleet_kind_name(CF_FLEET_REVOKE));
}

/*
 * A host report is written when what it says changes, else every
 * every_ms only: the steady state costs a fixed low rate of writes, and
 * `--wait` sees an apply, a failure or a state change at once.
 */
TEST(host_reports_are_paced)
{
	struct cf_fleet_pacer p = { .every_ms = 10000 };
	struct cf_fleet_host h, moved;

	memset(&h, 0, sizeof(h));
	strcpy(h.name, "a");
	strcpy(h.state, "current");
	h.applied = 40;
	h.seq = 3;
	h.stale_ms = 3000;
	h.deny_ms = 6000;
	/* the first report is due */
	EXPECT_TRUE(cf_fleet_report_due(&p, &h, 1000));
	cf_fleet_report_done(&p, &h, 1000);
	/* the same report (its time aside) waits for the period */
	h.time_ms = 123456;
	EXPECT_FALSE(cf_fleet_report_due(&p, &h, 1001));
	EXPECT_FALSE(cf_fleet_report_due(&p, &h, 10999));
	EXPECT_TRUE(cf_fleet_report_due(&p, &h, 11000));
	/* a clock that went back: due, not stuck until it catches up */
	EXPECT_TRUE(cf_fleet_report_due(&p, &h, 999));
	/* whatever --wait or status reads is reported at once */
	moved = h;
	moved.applied = 41;
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 1001));
	moved = h;
	moved.seq = 4;
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 1001));
	moved = h;
	strcpy(moved.state, "stale");
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 1001));
	moved = h;
	strcpy(moved.failing, "rev=41 revoke: Cannot allocate memory");
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 1001));
	moved = h;
	moved.deny_ms = 7000;
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 1001));
	/* written: the period starts again from it */
	cf_fleet_report_done(&p, &moved, 2000);
	EXPECT_FALSE(cf_fleet_report_due(&p, &moved, 2001));
	/* back to what it said before is a change too */
	EXPECT_TRUE(cf_fleet_report_due(&p, &h, 2001));
	/* the lease expired with the report: due again */
	cf_fleet_report_lost(&p);
	EXPECT_TRUE(cf_fleet_report_due(&p, &moved, 2002));
	/* every_ms 0: every call */
	p.every_ms = 0;
	cf_fleet_report_done(&p, &h, 3000);
	EXPECT_TRUE(cf_fleet_report_due(&p, &h, 3000));
}

TEST_HARNESS_MAIN
