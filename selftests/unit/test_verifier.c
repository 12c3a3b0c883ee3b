// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence: the verified-token memo (struct capfence_verifier) decides exactly
 * what capfence_decide_delegation() decides, and a forged token never hits.
 */
#include <errno.h>
#include <string.h>

#include "cf_test.h"

FIXTURE(ver) {
	struct capfence_key *k1, *k2, *k1_forger;
	struct capfence_epoch e41, e42;
	struct capfence_constraint lo, ten;
};

FIXTURE_SETUP(ver)
{
	const char *r41[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8",
			      "fs:write=token" };
	const char *r42[] = { "net:connect=token:127.0.0.0/8" };
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, capfence_key_generate(1, &self->k1));
	ASSERT_EQ(0, capfence_key_generate(2, &self->k2));
	ASSERT_EQ(0, capfence_key_generate(1, &self->k1_forger));
	ASSERT_EQ(0, capfence_epoch_parse_rules(&self->e41, 41, r41, 2, err,
					  sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&self->e42, 42, r42, 1, err,
					  sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_constraint_parse("127.0.0.0/8", &self->lo, err,
					 sizeof(err)));
	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/8", &self->ten, err,
					 sizeof(err)));
}

FIXTURE_TEARDOWN(ver)
{
	capfence_key_free(self->k1);
	capfence_key_free(self->k2);
	capfence_key_free(self->k1_forger);
	CF_NO_LEAKS();
}

TEST_F(ver, bad_arguments)
{
	const struct capfence_key *keys[] = { self->k1 };
	const struct capfence_key *holes[] = { self->k1, NULL };
	struct capfence_verifier *v = (void *)1;
	struct capfence_token t;

	EXPECT_EQ(-EINVAL, capfence_verifier_new(keys, 1, 0, NULL));
	EXPECT_EQ(-EINVAL, capfence_verifier_new(NULL, 1, 0, &v));
	EXPECT_EQ(NULL, v);
	EXPECT_EQ(-EINVAL, capfence_verifier_new(keys, 0, 0, &v));
	EXPECT_EQ(-EINVAL, capfence_verifier_new(holes, 2, 0, &v));
	EXPECT_EQ(-EINVAL, capfence_verifier_new(keys, 1, (1u << 20) + 1, &v));
	EXPECT_EQ(-EBADMSG, capfence_verifier_verify(NULL, &t));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_verifier_decide(NULL, NULL, &self->e41));
	EXPECT_EQ(-EINVAL, capfence_verifier_mint(NULL, self->k1,
					    CAPFENCE_CLASS_NET_CONNECT, 41,
					    &self->lo, 1, 0, &t, NULL, 0));
	capfence_verifier_free(NULL);
}

/* Minted through the verifier: the first check already hits. */
TEST_F(ver, minted_tokens_hit)
{
	const struct capfence_key *keys[] = { self->k1 };
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_token t;
	int i;

	ASSERT_EQ(0, capfence_verifier_new(keys, 1, 0, &v));
	ASSERT_EQ(0, capfence_verifier_mint(v, self->k1, CAPFENCE_CLASS_NET_CONNECT,
				      41, &self->lo, 1, 0, &t, NULL, 0));
	for (i = 0; i < 10; i++)
		EXPECT_EQ((int)CAPFENCE_R_OK,
			  (int)capfence_verifier_decide(v, &t, &self->e41));
	EXPECT_EQ((int)CAPFENCE_R_EPOCH_MISMATCH,
		  (int)capfence_verifier_decide(v, &t, &self->e42));
	capfence_verifier_get_stats(v, &st);
	EXPECT_EQ(11u, st.hits);
	EXPECT_EQ(0u, st.misses);
	EXPECT_EQ(1u, st.remembered);
	capfence_verifier_free(v);
}

/* A token from elsewhere: one MAC, then hits; same answers as the plain path. */
TEST_F(ver, foreign_token_verified_once)
{
	const struct capfence_key *keys[] = { self->k2, self->k1 };
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_token t, wide;

	ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT, 42,
				   &self->lo, 1, 0, &t, NULL, 0));
	ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT, 42,
				   &self->ten, 1, 0, &wide, NULL, 0));
	ASSERT_EQ(0, capfence_verifier_new(keys, 2, 64, &v));
	EXPECT_EQ((int)CAPFENCE_R_OK, (int)capfence_verifier_decide(v, &t, &self->e42));
	EXPECT_EQ((int)CAPFENCE_R_OK, (int)capfence_verifier_decide(v, &t, &self->e42));
	EXPECT_EQ((int)capfence_decide_delegation(keys, 2, &wide, &self->e42),
		  (int)capfence_verifier_decide(v, &wide, &self->e42));
	EXPECT_EQ((int)CAPFENCE_R_CLASS_DENIED,
		  (int)capfence_verifier_decide(v, &wide, &self->e42));
	capfence_verifier_get_stats(v, &st);
	EXPECT_EQ(2u, st.hits);
	EXPECT_EQ(2u, st.misses);
	EXPECT_EQ(2u, st.remembered);
	capfence_verifier_free(v);
}

/*
 * Every single-bit flip of a remembered token's encoding (MAC included)
 * must miss and fail, and must not displace the genuine token unless it
 * decodes to the same slot (then the genuine one still verifies).
 */
TEST_F(ver, flips_of_remembered_token_are_forged)
{
	const struct capfence_key *keys[] = { self->k1 };
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_epoch open_e;
	struct capfence_token t, d;
	size_t bit, decoded = 0, same_key = 0;
	int n;

	ASSERT_EQ(0, capfence_verifier_new(keys, 1, 16, &v));
	ASSERT_EQ(0, capfence_verifier_mint(v, self->k1, CAPFENCE_CLASS_NET_CONNECT,
				      41, &self->lo, 1, 0, &t, NULL, 0));
	n = capfence_token_encode_bin(&t, bin, sizeof(bin));
	ASSERT_LT(0, n);
	for (bit = 0; bit < (size_t)n * 8; bit++) {
		bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (!capfence_token_decode_bin(bin, (size_t)n, &d, NULL, 0)) {
			decoded++;
			/* an unknown key id fails before the memo is consulted */
			same_key += d.key_id == capfence_key_id(self->k1);
			capfence_epoch_init(&open_e, d.epoch_id);
			EXPECT_EQ((int)CAPFENCE_R_FORGED,
				  (int)capfence_verifier_decide(v, &d, &open_e))
				TH_LOG("bit %zu", bit);
		}
		bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	ASSERT_LT(0u, decoded);
	capfence_verifier_get_stats(v, &st);
	EXPECT_EQ(0u, st.hits);
	EXPECT_EQ(same_key, st.misses);
	EXPECT_LT(same_key, decoded);
	EXPECT_EQ(1u, st.remembered);
	EXPECT_EQ((int)CAPFENCE_R_OK, (int)capfence_verifier_decide(v, &t, &self->e41));
	capfence_verifier_free(v);
}

/* Same key id, other bytes (the forger's key): never remembered, never accepted. */
TEST_F(ver, forger_key_not_remembered)
{
	const struct capfence_key *keys[] = { self->k1 };
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_token f;

	ASSERT_EQ(0, capfence_verifier_new(keys, 1, 0, &v));
	/* minting with a key the verifier does not hold remembers nothing */
	ASSERT_EQ(0, capfence_verifier_mint(v, self->k1_forger,
				      CAPFENCE_CLASS_NET_CONNECT, 41, &self->lo,
				      1, 0, &f, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_verifier_decide(v, &f, &self->e41));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_verifier_decide(v, &f, &self->e41));
	ASSERT_EQ(0, capfence_verifier_mint(v, self->k2, CAPFENCE_CLASS_NET_CONNECT,
				      41, &self->lo, 1, 0, &f, NULL, 0));
	EXPECT_EQ((int)CAPFENCE_R_FORGED,
		  (int)capfence_verifier_decide(v, &f, &self->e41));
	capfence_verifier_get_stats(v, &st);
	EXPECT_EQ(0u, st.hits);
	EXPECT_EQ(0u, st.remembered);
	capfence_verifier_free(v);
}

/* One set of four: a fifth token displaces the oldest, round robin; no leak. */
TEST_F(ver, eviction)
{
	const struct capfence_key *keys[] = { self->k1 };
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_token t[5];
	int i;

	ASSERT_EQ(0, capfence_verifier_new(keys, 1, 1, &v));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT,
					   41, &self->lo, 1, 0, &t[i], NULL, 0));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, capfence_verifier_verify(v, &t[i]));	/* 4 misses */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, capfence_verifier_verify(v, &t[i]));	/* 4 hits */
	EXPECT_EQ(0, capfence_verifier_verify(v, &t[4]));		/* miss, evicts t0 */
	for (i = 1; i < 5; i++)
		EXPECT_EQ(0, capfence_verifier_verify(v, &t[i]));	/* 4 hits */
	EXPECT_EQ(0, capfence_verifier_verify(v, &t[0]));		/* miss, evicts t1 */
	EXPECT_EQ(0, capfence_verifier_verify(v, &t[0]));		/* hit */
	capfence_verifier_get_stats(v, &st);
	EXPECT_EQ(9u, st.hits);
	EXPECT_EQ(6u, st.misses);
	EXPECT_EQ(6u, st.remembered);
	EXPECT_EQ(2u, st.evicted);
	capfence_verifier_free(v);
}

TEST_HARNESS_MAIN
