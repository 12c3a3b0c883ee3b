// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence: the delegation-time decision (rows 2-4 of the delegation table, docs/errors.md), including
 * the seed's scenario and its reference semantics.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cf_test.h"

FIXTURE(decide) {
	struct capfence_key *k1, *k2, *k1_forger, *k9;
	struct capfence_epoch e41, e42, e43;
};

FIXTURE_SETUP(decide)
{
	const char *r41[] = {
		"net:connect=token:10.0.0.0/8",
		"net:bind=open",
		"fs:write=token",
		"fs:read=token:/srv,/etc",
	};
	const char *r42[] = {
		"net:connect=token:127.0.0.0/8,[::1]/128:1-1024",
		"fs:write=token:/srv/data",
	};
	const char *r43[] = { "net:connect=token" };
	uint8_t raw[CAPFENCE_KEY_LEN];
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, capfence_key_generate(1, &self->k1));
	ASSERT_EQ(0, capfence_key_generate(2, &self->k2));
	/* a forger who knows id 1 but not its bytes */
	ASSERT_EQ(0, capfence_key_generate(1, &self->k1_forger));
	memset(raw, 9, sizeof(raw));
	ASSERT_EQ(0, capfence_key_from_bytes(9, raw, &self->k9));
	ASSERT_EQ(0, capfence_epoch_parse_rules(&self->e41, 41, r41, 4, err,
					  sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&self->e42, 42, r42, 2, err,
					  sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&self->e43, 43, r43, 1, err,
					  sizeof(err))) TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(decide)
{
	capfence_key_free(self->k1);
	capfence_key_free(self->k2);
	capfence_key_free(self->k1_forger);
	capfence_key_free(self->k9);
	/* after the frees: anything still allocated is a leak */
	CF_NO_LEAKS();
}

/* Which key mints; the receiver knows keys 1 and 2 only. */
enum { K1, K2, K1_FORGER, K9 };

static const struct {
	int key;
	const char *class_name;
	uint64_t epoch;
	const char *cs;		/* comma list or NULL */
	uint64_t receiver;
	enum capfence_reason want;
} cases[] = {
	/* row 4 and OK */
	{ K1, "net:connect", 41, "10.0.0.0/8", 41, CAPFENCE_R_OK },
	{ K1, "net:connect", 41, "10.1.0.0/16:443", 41, CAPFENCE_R_OK },
	{ K2, "net:connect", 41, "10.1.2.3", 41, CAPFENCE_R_OK },
	{ K1, "net:connect", 41, "11.0.0.0/8", 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 41, "0.0.0.0/0", 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 41, "10.0.0.0/8,11.0.0.0/8", 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 41, NULL, 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:bind", 41, NULL, 41, CAPFENCE_R_CLASS_DENIED },	/* open */
	{ K1, "fs:write", 41, NULL, 41, CAPFENCE_R_OK },		/* unconstrained */
	{ K1, "fs:write", 41, "/anything/at/all", 41, CAPFENCE_R_OK },
	{ K1, "fs:read", 41, "/srv/x,/etc/ssl", 41, CAPFENCE_R_OK },
	{ K1, "fs:read", 41, "/srv,/var", 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "fs:read", 41, "/", 41, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 42, "127.0.0.1/32:80", 42, CAPFENCE_R_OK },
	{ K1, "net:connect", 42, "[::1]/128:443", 42, CAPFENCE_R_OK },
	{ K1, "net:connect", 42, "[::1]/128:8080", 42, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 42, "::1/128", 42, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 42, "10.0.0.0/8", 42, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:bind", 42, NULL, 42, CAPFENCE_R_CLASS_DENIED },	/* omitted */
	{ K1, "fs:read", 42, "/srv", 42, CAPFENCE_R_CLASS_DENIED },	/* omitted */
	{ K1, "fs:write", 42, "/srv/data/x", 42, CAPFENCE_R_OK },
	{ K1, "fs:write", 42, "/srv/database", 42, CAPFENCE_R_CLASS_DENIED },
	{ K1, "fs:write", 42, NULL, 42, CAPFENCE_R_CLASS_DENIED },
	{ K1, "net:connect", 43, NULL, 43, CAPFENCE_R_OK },
	{ K1, "net:connect", 43, "1.2.3.4", 43, CAPFENCE_R_OK },
	{ K1, "fs:read", 43, "/", 43, CAPFENCE_R_CLASS_DENIED },
	/* row 3 before row 4 */
	{ K1, "net:connect", 41, "10.0.0.0/8", 42, CAPFENCE_R_EPOCH_MISMATCH },
	{ K1, "net:connect", 42, "127.0.0.0/8", 41, CAPFENCE_R_EPOCH_MISMATCH },
	{ K1, "net:bind", 42, NULL, 41, CAPFENCE_R_EPOCH_MISMATCH },
	{ K2, "fs:read", 44, "/", 43, CAPFENCE_R_EPOCH_MISMATCH },
	/* row 2 before everything: never conflated with skew */
	{ K9, "net:connect", 41, "10.0.0.0/8", 41, CAPFENCE_R_FORGED },
	{ K9, "net:connect", 41, "10.0.0.0/8", 42, CAPFENCE_R_FORGED },
	{ K1_FORGER, "net:connect", 41, "10.0.0.0/8", 41, CAPFENCE_R_FORGED },
	{ K1_FORGER, "net:connect", 41, "10.0.0.0/8", 42, CAPFENCE_R_FORGED },
	{ K1_FORGER, "net:bind", 42, NULL, 42, CAPFENCE_R_FORGED },
};

static int mint(struct __test_metadata *_metadata,
		FIXTURE_DATA(decide) *self, int key, const char *cname,
		uint64_t epoch, const char *list, struct capfence_token *t)
{
	struct capfence_key *keys[] = { self->k1, self->k2, self->k1_forger,
				  self->k9 };
	struct capfence_constraint cs[CAPFENCE_MAX_CONSTRAINTS];
	char buf[512], *save = NULL, *tok;
	size_t n = 0;

	if (list) {
		snprintf(buf, sizeof(buf), "%s", list);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (capfence_constraint_parse(tok, &cs[n++], NULL, 0))
				return -1;
		}
	}
	(void)_metadata;
	return capfence_token_mint(keys[key], capfence_class_from_name(cname), epoch, cs,
			     n, 0, t, NULL, 0);
}

static const struct capfence_epoch *epoch_of(FIXTURE_DATA(decide) *self,
				       uint64_t id)
{
	return id == 41 ? &self->e41 : id == 42 ? &self->e42 : &self->e43;
}

TEST_F(decide, table)
{
	const struct capfence_key *known[] = { self->k1, self->k2 };
	struct capfence_token t;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		enum capfence_reason r;

		ASSERT_EQ(0, mint(_metadata, self, cases[i].key,
				  cases[i].class_name, cases[i].epoch,
				  cases[i].cs, &t)) TH_LOG("case %zu", i);
		r = capfence_decide_delegation(known, 2, &t,
					 epoch_of(self, cases[i].receiver));
		EXPECT_STREQ(capfence_reason_name(cases[i].want), capfence_reason_name(r))
			TH_LOG("case %zu: %s@%llu [%s] -> epoch %llu", i,
			       cases[i].class_name,
			       (unsigned long long)cases[i].epoch,
			       cases[i].cs ? cases[i].cs : "",
			       (unsigned long long)cases[i].receiver);
	}
}

TEST_F(decide, key_set)
{
	const struct capfence_key *none[] = { NULL };
	const struct capfence_key *only2[] = { self->k2 };
	const struct capfence_key *all[] = { self->k2, NULL, self->k1 };
	struct capfence_token t;

	ASSERT_EQ(0, mint(_metadata, self, K1, "net:connect", 41,
			  "10.0.0.0/8", &t));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(NULL, 0, &t, &self->e41));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(none, 1, &t, &self->e41));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(only2, 1, &t, &self->e41));
	EXPECT_EQ((int)CAPFENCE_R_OK,
		  (int)capfence_decide_delegation(all, 3, &t, &self->e41));
	/* a tampered field is forged even when it would also mismatch */
	t.epoch_id = 42;
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(all, 3, &t, &self->e42));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(all, 3, &t, &self->e41));
}

/*
 * The seed scenario: E41 allows net:connect to a restricted CIDR, E42
 * narrows it to loopback. The parent's E41 token is rejected for a child
 * under E42 as epoch_mismatch; the re-mint under E42 is accepted only
 * within loopback.
 */
TEST_F(decide, seed_scenario)
{
	const struct capfence_key *known[] = { self->k1 };
	struct capfence_token parent, remint, remint_lo;
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	struct capfence_token wire;

	ASSERT_EQ(0, mint(_metadata, self, K1, "net:connect", 41, "10.0.0.0/8",
			  &parent));
	EXPECT_EQ((int)CAPFENCE_R_OK,
		  (int)capfence_decide_delegation(known, 1, &parent, &self->e41));
	EXPECT_TRUE(capfence_epoch_narrows(&self->e41, &self->e42,
				     CAPFENCE_CLASS_NET_CONNECT));

	/* the orchestrator re-delegates over the wire to the E42 child */
	ASSERT_LT(0, capfence_token_to_text(&parent, text, sizeof(text)));
	ASSERT_EQ(0, capfence_token_from_text(text, &wire, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_EPOCH_MISMATCH,
		  (int)capfence_decide_delegation(known, 1, &wire, &self->e42));
	EXPECT_EQ(ESTALE, capfence_reason_errno(CAPFENCE_R_EPOCH_MISMATCH));
	EXPECT_EQ(3, capfence_reason_exit(CAPFENCE_R_EPOCH_MISMATCH));

	/* re-mint the same class and constraint: the narrowing applies */
	ASSERT_EQ(0, capfence_token_mint(self->k1, parent.class_id, 42,
				   parent.constraints, parent.n, parent.cap_id,
				   &remint, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_CLASS_DENIED,
		  (int)capfence_decide_delegation(known, 1, &remint, &self->e42));
	ASSERT_EQ(0, mint(_metadata, self, K1, "net:connect", 42,
			  "127.0.0.1/32", &remint_lo));
	EXPECT_EQ((int)CAPFENCE_R_OK,
		  (int)capfence_decide_delegation(known, 1, &remint_lo, &self->e42));
}

/*
 * The seed's reference accept_delegation(), with its allowed_classes read
 * as "the class rule is token (unconstrained)". Our decision must agree on
 * its four outcomes: forged, epoch mismatch, class not allowed, accept.
 */
TEST(seed_reference_semantics)
{
	const char *r41[] = { "net:connect=token", "fs:write=token" };
	const char *r42[] = { "fs:write=token" };
	struct capfence_key *secret, *other;
	struct capfence_epoch e41, e42;
	struct capfence_token tok, bad;

	ASSERT_EQ(0, capfence_key_generate(1, &secret));
	ASSERT_EQ(0, capfence_key_generate(1, &other));
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e41, 41, r41, 2, NULL, 0));
	ASSERT_EQ(0, capfence_epoch_parse_rules(&e42, 42, r42, 1, NULL, 0));
	const struct capfence_key *keys[] = { secret };

	/* parent_token = mint(secret, "cap-7", "net:connect", 41) */
	ASSERT_EQ(0, capfence_token_mint(secret, CAPFENCE_CLASS_NET_CONNECT, 41,
				   NULL, 0, 7, &tok, NULL, 0));
	/* accept_delegation(secret, parent_token, e41): accepted */
	EXPECT_EQ((int)CAPFENCE_R_OK,
		  (int)capfence_decide_delegation(keys, 1, &tok, &e41));
	/* ... e42: "minted under epoch 41, receiver bound to epoch 42" */
	EXPECT_EQ((int)CAPFENCE_R_EPOCH_MISMATCH,
		  (int)capfence_decide_delegation(keys, 1, &tok, &e42));
	/* re-mint under 42: "class net:connect not permitted" */
	ASSERT_EQ(0, capfence_token_mint(secret, CAPFENCE_CLASS_NET_CONNECT, 42,
				   NULL, 0, 7, &tok, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_CLASS_DENIED,
		  (int)capfence_decide_delegation(keys, 1, &tok, &e42));
	/* "failed MAC verification", checked first */
	ASSERT_EQ(0, capfence_token_mint(other, CAPFENCE_CLASS_NET_CONNECT, 41,
				   NULL, 0, 7, &bad, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(keys, 1, &bad, &e42));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_decide_delegation(keys, 1, &bad, &e41));
	capfence_key_free(secret);
	capfence_key_free(other);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
