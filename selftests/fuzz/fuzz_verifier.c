// SPDX-License-Identifier: GPL-2.0
/*
 * cf_verifier against the plain check: the input is a program of 4-byte
 * steps over a pool of genuine tokens (check one, check it with one bit
 * flipped, mint a replacement through the verifier, verify one), run on a
 * small verifier so that hits, misses and evictions all happen. Every
 * answer must equal cf_decide_delegation()'s / cf_token_verify()'s, and a
 * flipped token is never accepted.
 */
#include "fuzz.h"

#define POOL	6

static struct cf_key *key, *other;
static struct cf_token pool0[POOL];
static struct cf_epoch ep[3];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *r41[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8",
			      "fs:write=token:/srv" };
	const char *r42[] = { "net:connect=token:127.0.0.0/8" };
	const char *cons[] = { "10.0.0.0/8", "127.0.0.0/8", "/srv/data" };
	struct cf_constraint c[3];
	uint8_t raw[CAPFENCE_KEY_LEN];
	int i;

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		return 1;
	memset(raw, 0x5a, sizeof(raw));
	if (cf_key_from_bytes(7, raw, &key) || cf_key_generate(8, &other))
		return 1;
	for (i = 0; i < 3; i++)
		if (cf_constraint_parse(cons[i], &c[i], NULL, 0))
			return 1;
	if (cf_epoch_parse_rules(&ep[0], 41, r41, 2, NULL, 0) ||
	    cf_epoch_parse_rules(&ep[1], 42, r42, 1, NULL, 0))
		return 1;
	cf_epoch_init(&ep[2], 43);
	for (i = 0; i < POOL; i++) {
		int net = i % 3 != 2;

		if (cf_token_mint(i == POOL - 1 ? other : key,
				  net ? CAPFENCE_CLASS_NET_CONNECT :
					CAPFENCE_CLASS_FS_WRITE,
				  41 + (uint64_t)(i % 2), net ? &c[i % 2] : &c[2],
				  1, 1000 + (uint64_t)i, &pool0[i], NULL, 0))
			return 1;
	}
	return 0;
}

/* cf_token_verify() under the key a check would pick, or -EBADMSG. */
static int plain_verify(const struct cf_token *t)
{
	if (t->key_id == cf_key_id(key))
		return cf_token_verify(key, t);
	if (t->key_id == cf_key_id(other))
		return cf_token_verify(other, t);
	return -EBADMSG;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct cf_key *keys[] = { key, other };
	static struct cf_token pool[POOL];
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct cf_verifier_stats st;
	struct cf_verifier *v;
	struct cf_constraint lo;
	struct cf_token d;
	uint64_t next_id = 5000;
	size_t i;

	memcpy(pool, pool0, sizeof(pool));
	/* 8 slots: two sets of four, so the pool overflows one now and then */
	FUZZ_ASSERT(cf_verifier_new(keys, 2, 8, &v) == 0);
	FUZZ_ASSERT(cf_constraint_parse("127.0.0.0/8", &lo, NULL, 0) == 0);
	for (i = 0; i + 4 <= size; i += 4) {
		const struct cf_token *t = &pool[data[i + 1] % POOL];
		const struct cf_epoch *e = &ep[data[i + 3] % 3];
		int n, bit;

		switch (data[i] % 4) {
		case 0:
			FUZZ_ASSERT(cf_verifier_decide(v, t, e) ==
				    cf_decide_delegation(keys, 2, t, e));
			break;
		case 1:
			n = cf_token_encode_bin(t, bin, sizeof(bin));
			FUZZ_ASSERT(n > 0);
			bit = (data[i + 2] << 8 | data[i + 3]) % (n * 8);
			bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (!cf_token_decode_bin(bin, (size_t)n, &d, NULL, 0)) {
				FUZZ_ASSERT(cf_verifier_decide(v, &d, e) ==
					    CAPFENCE_R_FORGED);
				FUZZ_ASSERT(cf_decide_delegation(keys, 2, &d, e) ==
					    CAPFENCE_R_FORGED);
			}
			break;
		case 2:
			FUZZ_ASSERT(cf_verifier_mint(v, data[i + 2] & 1 ? other : key,
						     CAPFENCE_CLASS_NET_CONNECT,
						     41 + data[i + 3] % 3, &lo, 1,
						     next_id++,
						     &pool[data[i + 1] % POOL],
						     NULL, 0) == 0);
			break;
		default:
			FUZZ_ASSERT(cf_verifier_verify(v, t) == plain_verify(t));
			break;
		}
	}
	cf_verifier_get_stats(v, &st);
	FUZZ_ASSERT(st.remembered >= st.evicted);
	cf_verifier_free(v);
	return 0;
}
