// SPDX-License-Identifier: GPL-2.0
/* libcapfence: token encoding, text form, mint and verify. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "cf_test.h"

static const uint8_t key1_bytes[CAPFENCE_KEY_LEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

/* Sample tokens: class, constraints (text), exercised by every test. */
static const struct {
	int class_id;
	const char *cs[CAPFENCE_MAX_CONSTRAINTS];
} samples[] = {
	{ CAPFENCE_CLASS_NET_CONNECT, { "10.0.0.0/8" } },
	{ CAPFENCE_CLASS_NET_CONNECT, { "127.0.0.1/32:443-445", "[::1]/128:80" } },
	{ CAPFENCE_CLASS_NET_BIND, { NULL } },
	{ CAPFENCE_CLASS_FS_READ, { "/", "/etc/ssl" } },
	{ CAPFENCE_CLASS_FS_WRITE, { "/srv/data" } },
};

FIXTURE(tok) {
	struct capfence_key *k1, *k1b, *k2;
	struct capfence_token t[ARRAY_SIZE(samples)];
};

FIXTURE_SETUP(tok)
{
	uint8_t other[CAPFENCE_KEY_LEN];
	size_t i, j;

	ASSERT_EQ(0, capfence_key_from_bytes(1, key1_bytes, &self->k1));
	memcpy(other, key1_bytes, sizeof(other));
	other[31] ^= 1;
	/* same id, different bytes: what a forger with a guessed id has */
	ASSERT_EQ(0, capfence_key_from_bytes(1, other, &self->k1b));
	ASSERT_EQ(0, capfence_key_generate(2, &self->k2));
	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		struct capfence_constraint cs[CAPFENCE_MAX_CONSTRAINTS];
		char err[CAPFENCE_ERR_MAX];

		for (j = 0; samples[i].cs[j]; j++)
			ASSERT_EQ(0, capfence_constraint_parse(samples[i].cs[j],
							 &cs[j], NULL, 0));
		ASSERT_EQ(0, capfence_token_mint(self->k1, samples[i].class_id,
					   41 + i, cs, j, 0, &self->t[i], err,
					   sizeof(err)))
			TH_LOG("%s", err);
	}
}

FIXTURE_TEARDOWN(tok)
{
	capfence_key_free(self->k1);
	capfence_key_free(self->k1b);
	capfence_key_free(self->k2);
	/* after the frees: anything still allocated is a leak */
	CF_NO_LEAKS();
}

static bool tok_equal(const struct capfence_token *a, const struct capfence_token *b)
{
	int i;

	if (a->version != b->version || a->class_id != b->class_id ||
	    a->flags != b->flags || a->key_id != b->key_id ||
	    a->cap_id != b->cap_id || a->epoch_id != b->epoch_id ||
	    a->n != b->n || memcmp(a->mac, b->mac, sizeof(a->mac)))
		return false;
	for (i = 0; i < a->n; i++)
		if (!capfence_constraint_equal(&a->constraints[i], &b->constraints[i]))
			return false;
	return true;
}

TEST_F(tok, round_trip_bin_and_text)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN], bin2[CAPFENCE_TOKEN_MAX_LEN];
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1], text2[CAPFENCE_TOKEN_TEXT_MAX + 1];
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token d;
	size_t i;
	int n, m;

	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		const struct capfence_token *t = &self->t[i];

		EXPECT_EQ(CAPFENCE_TOKEN_VERSION, t->version);
		EXPECT_EQ(1u, t->key_id);
		EXPECT_NE(0u, t->cap_id);
		EXPECT_EQ(0, capfence_token_verify(self->k1, t));
		n = capfence_token_encode_bin(t, bin, sizeof(bin));
		ASSERT_LT(25 + CAPFENCE_MAC_LEN - 1, n);
		ASSERT_EQ(0, capfence_token_decode_bin(bin, (size_t)n, &d, err,
						 sizeof(err))) TH_LOG("%s", err);
		EXPECT_TRUE(tok_equal(t, &d));
		m = capfence_token_encode_bin(&d, bin2, sizeof(bin2));
		ASSERT_EQ(n, m);
		EXPECT_EQ(0, memcmp(bin, bin2, (size_t)n));

		n = capfence_token_to_text(t, text, sizeof(text));
		ASSERT_EQ((int)strlen(text), n);
		EXPECT_EQ(0, strncmp(text, "cf1_", 4));
		ASSERT_EQ(0, capfence_token_from_text(text, &d, err, sizeof(err)))
			TH_LOG("%s", err);
		EXPECT_TRUE(tok_equal(t, &d));
		EXPECT_EQ(0, capfence_token_verify(self->k1, &d));
		ASSERT_EQ(n, capfence_token_to_text(&d, text2, sizeof(text2)));
		EXPECT_STREQ(text, text2);
		EXPECT_EQ(-ENOSPC, capfence_token_to_text(t, text2, (size_t)n));
		EXPECT_EQ(-ENOSPC, capfence_token_encode_bin(t, bin, 30));
	}
}

TEST_F(tok, max_size_token)
{
	struct capfence_constraint cs[CAPFENCE_MAX_CONSTRAINTS];
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1], p[CAPFENCE_PATH_MAX + 1];
	struct capfence_token t, d;
	int i;

	for (i = 0; i < CAPFENCE_MAX_CONSTRAINTS; i++) {
		memset(p, 'a' + i, CAPFENCE_PATH_MAX);
		p[0] = '/';
		p[CAPFENCE_PATH_MAX] = '\0';
		ASSERT_EQ(0, capfence_constraint_parse(p, &cs[i], NULL, 0));
	}
	ASSERT_EQ(0, capfence_token_mint(self->k2, CAPFENCE_CLASS_FS_READ, UINT64_MAX,
				   cs, CAPFENCE_MAX_CONSTRAINTS, UINT64_MAX,
				   &t, NULL, 0));
	EXPECT_EQ(CAPFENCE_TOKEN_MAX_LEN,
		  capfence_token_encode_bin(&t, bin, sizeof(bin)));
	EXPECT_EQ((int)CAPFENCE_TOKEN_TEXT_MAX,
		  capfence_token_to_text(&t, text, sizeof(text)));
	ASSERT_EQ(0, capfence_token_from_text(text, &d, NULL, 0));
	EXPECT_TRUE(tok_equal(&t, &d));
	EXPECT_EQ(0, capfence_token_verify(self->k2, &d));
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &d));
}

/* Flip every bit of every sample's encoding: never accepted as genuine. */
TEST_F(tok, every_bit_flip_detected)
{
	const struct capfence_key *keys[] = { self->k1, self->k2 };
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_epoch open_e;
	struct capfence_token d;
	size_t i, bit, decoded = 0, flips = 0;
	int n;

	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		n = capfence_token_encode_bin(&self->t[i], bin, sizeof(bin));
		ASSERT_LT(0, n);
		for (bit = 0; bit < (size_t)n * 8; bit++) {
			bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			flips++;
			if (!capfence_token_decode_bin(bin, (size_t)n, &d, NULL, 0)) {
				decoded++;
				EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &d))
					TH_LOG("sample %zu bit %zu verified", i, bit);
				/* the epoch is the token's own: only forgery can fail */
				capfence_epoch_init(&open_e, d.epoch_id);
				EXPECT_EQ((int)CAPFENCE_R_FORGED,
					  (int)capfence_decide_delegation(keys, 2, &d,
								    &open_e))
					TH_LOG("sample %zu bit %zu", i, bit);
			}
			bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
	ASSERT_LT(0u, decoded);
	TH_LOG("%zu flips, %zu decoded and failed verification", flips,
	       decoded);
}

/* Replace every text character by every other one: never genuine. */
TEST_F(tok, every_text_substitution_detected)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	struct capfence_token d;
	size_t i, pos, a;
	int n;

	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		n = capfence_token_to_text(&self->t[i], text, sizeof(text));
		ASSERT_LT(0, n);
		for (pos = 0; pos < (size_t)n; pos++) {
			char orig = text[pos];

			for (a = 0; a < sizeof(alpha) - 1; a++) {
				if (alpha[a] == orig)
					continue;
				text[pos] = alpha[a];
				if (!capfence_token_from_text(text, &d, NULL, 0))
					EXPECT_EQ(-EBADMSG,
						  capfence_token_verify(self->k1, &d))
						TH_LOG("%s", text);
			}
			text[pos] = orig;
		}
	}
}

TEST_F(tok, truncated_and_trailing)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN + 8];
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token d;
	size_t i, len, extra;
	int n;

	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		n = capfence_token_encode_bin(&self->t[i], bin, sizeof(bin));
		ASSERT_LT(0, n);
		for (len = 0; len < (size_t)n; len++) {
			err[0] = '\0';
			EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, len, &d,
						err, sizeof(err)));
			EXPECT_NE(NULL, strstr(err, "truncated"))
				TH_LOG("len %zu: %s", len, err);
		}
		for (extra = 1; extra <= 8; extra++) {
			char want[64];

			memset(bin + n, 0, extra);
			EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n + extra,
						&d, err, sizeof(err)));
			snprintf(want, sizeof(want),
				 "%zu trailing bytes after the MAC", extra);
			EXPECT_STREQ(want, err);
		}
	}
	memset(bin, 0, sizeof(bin));
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, CAPFENCE_TOKEN_MAX_LEN + 1,
						&d, err, sizeof(err)));
	EXPECT_STREQ("token too long: 2114 bytes (max 2113)", err);
}

/* Field-level defects, each with its own message. */
TEST_F(tok, decode_rejects_bad_fields)
{
	static const struct {
		size_t off;
		uint8_t val;
		const char *msg;
	} cases[] = {
		{ 0, 2, "unsupported token version 2" },
		{ 0, 0, "unsupported token version 0" },
		{ 1, 0, "unknown class id 0" },
		{ 1, CAPFENCE_CLASS_MAX + 1, NULL },	/* the first id past the enum */
		{ 1, 3, "constraint 1: net constraint in a fs:read token" },
		{ 2, 2, "unknown flag bits 0x0002" },
		{ 3, 0x80, "unknown flag bits 0x8000" },
		{ 24, 9, "9 constraints (max 8)" },
		{ 24, 2, "constraint 2" },
		{ 24, 0, "trailing bytes after the MAC" },
		{ 25, 0, "constraint 1: unknown kind 0" },
		{ 25, 2, "trailing bytes after the MAC" },
		{ 25, 3, "constraint 1: unknown kind 3" },
		{ 26, 5, "address family 5" },
		{ 26, 0, "address family 0" },
		{ 27, 33, "prefix length 33 > 32" },
		{ 27, 6, "host bits set" },
		{ 32, 1, "reserved field is not zero" },
		{ 35, 1, "host bits set" },
		{ 40, 1, "IPv4 address with non-zero bytes" },
	};
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token d;
	size_t i;
	int n;

	/* sample 0: net:connect 10.0.0.0/8 */
	n = capfence_token_encode_bin(&self->t[0], bin, sizeof(bin));
	ASSERT_EQ(25 + 25 + 32, n);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t save = bin[cases[i].off], mac0 = bin[n - CAPFENCE_MAC_LEN];

		bin[cases[i].off] = cases[i].val;
		/*
		 * A count of 2 reads the MAC as constraint 2: its first byte
		 * (random: the cap_id is) must not be a valid kind, or the
		 * message is about the truncated MAC instead (2 runs in 256).
		 */
		if (cases[i].off == 24 && cases[i].val == 2)
			bin[n - CAPFENCE_MAC_LEN] = 0;
		err[0] = '\0';
		EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, (size_t)n, &d, err,
							sizeof(err)))
			TH_LOG("case %zu accepted", i);
		if (cases[i].msg) {
			EXPECT_NE(NULL, strstr(err, cases[i].msg))
				TH_LOG("case %zu: got \"%s\", want \"%s\"", i, err,
				       cases[i].msg);
		} else {
			char want[64];

			snprintf(want, sizeof(want), "unknown class id %d", CAPFENCE_CLASS_MAX + 1);
			EXPECT_STREQ(want, err);
		}
		bin[cases[i].off] = save;
		bin[n - CAPFENCE_MAC_LEN] = mac0;
	}
	/* zero ids: key id, cap id, epoch id */
	memset(bin + 4, 0, 4);
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_STREQ("key id is 0", err);
	bin[4] = 1;
	memset(bin + 8, 0, 8);
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_STREQ("cap id is 0", err);
	bin[8] = 1;
	memset(bin + 16, 0, 8);
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_STREQ("epoch id is 0", err);

	/* sample 4: fs:write /srv/data, path bytes at 27.. */
	n = capfence_token_encode_bin(&self->t[4], bin, sizeof(bin));
	ASSERT_EQ(25 + 2 + 9 + 32, n);
	bin[1] = CAPFENCE_CLASS_NET_BIND;
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_STREQ("constraint 1: path constraint in a net:bind token", err);
	bin[1] = CAPFENCE_CLASS_FS_WRITE;
	bin[27] = 's';
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_STREQ("constraint 1: path constraint: not an absolute path", err);
	bin[27] = '/';
	bin[32] = '/';	/* "/srv//ata" */
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "empty component")) TH_LOG("%s", err);
	bin[32] = '\0';
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "NUL byte in path")) TH_LOG("%s", err);
	bin[32] = 'd';
	bin[35] = '/';	/* "/srv/dat/" */
	EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, n, &d, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "trailing '/'")) TH_LOG("%s", err);
}

TEST_F(tok, text_rejects)
{
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1], bad[CAPFENCE_TOKEN_TEXT_MAX + 16];
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token d;
	int n;

	n = capfence_token_to_text(&self->t[1], text, sizeof(text));
	ASSERT_LT(0, n);
#define REJECT(s, want) do { \
		err[0] = '\0'; \
		EXPECT_EQ(-EBADMSG, capfence_token_from_text((s), &d, err, \
						       sizeof(err))); \
		EXPECT_NE(NULL, strstr(err, (want))) \
			TH_LOG("%s: got \"%s\"", (want), err); \
	} while (0)
	REJECT("", "empty token");
	REJECT(NULL, "empty token");
	REJECT("cf1", "must start with \"cf1_\"");
	REJECT("cf1_", "token truncated: 0 bytes");
	snprintf(bad, sizeof(bad), " %s", text);
	REJECT(bad, "must start with");
	snprintf(bad, sizeof(bad), "%s\n", text);
	REJECT(bad, "whitespace in token at offset");
	snprintf(bad, sizeof(bad), "%s ", text);
	REJECT(bad, "whitespace in token");
	snprintf(bad, sizeof(bad), "%.20s\t%s", text, text + 20);
	REJECT(bad, "whitespace in token at offset 20");
	snprintf(bad, sizeof(bad), "%s==", text);
	REJECT(bad, "padding '='");
	snprintf(bad, sizeof(bad), "cf2_%s", text + 4);
	REJECT(bad, "must start with \"cf1_\"");
	snprintf(bad, sizeof(bad), "CF1_%s", text + 4);
	REJECT(bad, "must start with \"cf1_\"");
	REJECT(text + 4, "must start with \"cf1_\"");
	snprintf(bad, sizeof(bad), "%.10s+%s", text, text + 11);
	REJECT(bad, "invalid character 0x2b in token at offset 10");
	snprintf(bad, sizeof(bad), "%.10s/%s", text, text + 11);
	REJECT(bad, "invalid character 0x2f");
	snprintf(bad, sizeof(bad), "%.10s\xc3\xa9%s", text, text + 11);
	REJECT(bad, "invalid character 0xc3");
	/* one extra character: a length no base64 has, or leftover bits */
	snprintf(bad, sizeof(bad), "%sA", text);
	err[0] = '\0';
	EXPECT_EQ(-EBADMSG, capfence_token_from_text(bad, &d, err, sizeof(err)));
	snprintf(bad, sizeof(bad), "%.*s", n - 1, text);
	REJECT(bad, "");
	memset(bad, 'A', sizeof(bad));
	memcpy(bad, "cf1_", 4);
	bad[CAPFENCE_TOKEN_TEXT_MAX + 1] = '\0';
	REJECT(bad, "token text too long (max 2822 characters)");
	bad[CAPFENCE_TOKEN_TEXT_MAX] = '\0';	/* right length, zero bytes */
	REJECT(bad, "unsupported token version 0");
#undef REJECT
}

TEST_F(tok, non_canonical_base64_rejected)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789-_";
	char text[CAPFENCE_TOKEN_TEXT_MAX + 1], err[CAPFENCE_ERR_MAX];
	struct capfence_token d;
	const char *p;
	size_t i, tested = 0;
	int n;

	for (i = 0; i < ARRAY_SIZE(samples); i++) {
		unsigned int idx;

		n = capfence_token_to_text(&self->t[i], text, sizeof(text));
		ASSERT_LT(0, n);
		if ((n - 4) % 4 == 0)
			continue;	/* no leftover bits to set */
		p = strchr(alpha, text[n - 1]);
		ASSERT_NE(NULL, p);
		idx = (unsigned int)(p - alpha);
		text[n - 1] = alpha[idx | 1];	/* set a leftover bit */
		EXPECT_EQ(-EBADMSG, capfence_token_from_text(text, &d, err,
						       sizeof(err)));
		EXPECT_STREQ("token is not canonical base64url", err);
		tested++;
	}
	EXPECT_LT(0u, tested);
}

TEST_F(tok, mint_validation)
{
	struct capfence_constraint c[CAPFENCE_MAX_CONSTRAINTS + 1];
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t, t2;
	int i;

	ASSERT_EQ(0, capfence_constraint_parse("10.0.0.0/8", &c[0], NULL, 0));
	ASSERT_EQ(0, capfence_constraint_parse("/srv", &c[1], NULL, 0));
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, 0, 1, c, 1, 0, &t, err,
					 sizeof(err)));
	EXPECT_STREQ("unknown class id 0", err);
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, 9, 1, c, 1, 0, &t, err,
					 sizeof(err)));
	EXPECT_STREQ("unknown class id 9", err);
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT,
					 0, c, 1, 0, &t, err, sizeof(err)));
	EXPECT_STREQ("epoch id is 0", err);
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT,
					 1, c, 2, 0, &t, err, sizeof(err)));
	EXPECT_STREQ("constraint 2: path constraint in a net:connect token", err);
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, CAPFENCE_CLASS_FS_READ,
					 1, c, 1, 0, &t, err, sizeof(err)));
	EXPECT_STREQ("constraint 1: net constraint in a fs:read token", err);
	for (i = 0; i <= CAPFENCE_MAX_CONSTRAINTS; i++)
		c[i] = c[0];
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT,
					 1, c, 9, 0, &t, err, sizeof(err)));
	EXPECT_STREQ("9 constraints (max 8)", err);
	c[0].net.addr[3] = 1;
	EXPECT_EQ(-EINVAL, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_CONNECT,
					 1, c, 1, 0, &t, err, sizeof(err)));
	EXPECT_STREQ("constraint 1: net constraint: non-canonical CIDR "
		     "(host bits set)", err);

	/* cap ids: given ones are kept, random ones differ */
	ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_BIND, 5, NULL,
				   0, 77, &t, NULL, 0));
	EXPECT_EQ(77u, t.cap_id);
	EXPECT_EQ(0u, t.flags);
	ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_BIND, 5, NULL,
				   0, 0, &t, NULL, 0));
	ASSERT_EQ(0, capfence_token_mint(self->k1, CAPFENCE_CLASS_NET_BIND, 5, NULL,
				   0, 0, &t2, NULL, 0));
	EXPECT_NE(0u, t.cap_id);
	EXPECT_NE(t.cap_id, t2.cap_id);
	EXPECT_NE(0, memcmp(t.mac, t2.mac, sizeof(t.mac)));
}

TEST_F(tok, verify)
{
	uint8_t body[CAPFENCE_TOKEN_BODY_MAX], raw[CAPFENCE_MAC_LEN];
	uint8_t mac[CAPFENCE_MAC_LEN];
	struct capfence_token t = self->t[1];
	int n;

	EXPECT_EQ(0, capfence_token_verify(self->k1, &t));
	/* same id, other bytes */
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1b, &t));
	/* other id */
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k2, &t));
	t.mac[31] ^= 0x80;
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &t));
	t = self->t[1];
	t.epoch_id++;
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &t));
	t = self->t[1];
	t.constraints[1].net.port_max++;
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &t));
	t = self->t[1];
	t.n = 1;
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &t));
	t.n = 200;
	EXPECT_EQ(-EBADMSG, capfence_token_verify(self->k1, &t));
	EXPECT_EQ(-EBADMSG, capfence_token_verify(NULL, &self->t[1]));

	/* the precomputed key state equals a one-shot HMAC of the body */
	n = capfence_token_encode_body(&self->t[1], body, sizeof(body));
	ASSERT_EQ(25 + 2 * 25, n);
	crypto_auth_hmacsha256(raw, body, (unsigned long long)n, key1_bytes);
	ASSERT_EQ(0, capfence_token_compute_mac(self->k1, &self->t[1], mac));
	EXPECT_EQ(0, memcmp(raw, mac, sizeof(mac)));
	EXPECT_EQ(0, memcmp(raw, self->t[1].mac, sizeof(mac)));
	EXPECT_EQ(-ENOSPC, capfence_token_encode_body(&self->t[1], body, 40));
	t = self->t[1];
	t.flags = 4;
	EXPECT_EQ(-EINVAL, capfence_token_encode_body(&t, body, sizeof(body)));
	EXPECT_EQ(-EBADMSG, capfence_token_check(&t, NULL, 0));
}

TEST_HARNESS_MAIN
