// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_verifier against the plain check: the input is a program of 4-byte
 * steps over a pool of genuine tokens (check one, check it with one bit
 * flipped, mint a replacement through the verifier, verify one), run on a
 * small verifier so that hits, misses and evictions all happen. Every
 * answer must equal capfence_decide_delegation()'s / capfence_token_verify()'s, and a
 * flipped token is never accepted.
 */
#include "fuzz.h"

#define POOL	6

static struct capfence_key *key, *other;
static struct capfence_token pool0[POOL];
static struct capfence_epoch ep[3];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *r41[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8",
			      "fs:write=token:/srv" };
	const char *r42[] = { "net:connect=token:127.0.0.0/8" };
	const char *cons[] = { "10.0.0.0/8", "127.0.0.0/8", "/srv/data" };
	struct capfence_constraint c[3];
	uint8_t raw[CAPFENCE_KEY_LEN];
	int i;

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		return 1;
	memset(raw, 0x5a, sizeof(raw));
	if (capfence_key_from_bytes(7, raw, &key) || capfence_key_generate(8, &other))
		return 1;
	for (i = 0; i < 3; i++)
		if (capfence_constraint_parse(cons[i], &c[i], NULL, 0))
			return 1;
	if (capfence_epoch_parse_rules(&ep[0], 41, r41, 2, NULL, 0) ||
	    capfence_epoch_parse_rules(&ep[1], 42, r42, 1, NULL, 0))
		return 1;
	FUZZ_ASSERT(!capfence_epoch_parse_rules(&ep[2], 43, NULL, 0, NULL, 0));
	for (i = 0; i < POOL; i++) {
		int net = i % 3 != 2;

		if (capfence_token_mint(i == POOL - 1 ? other : key,
				  net ? CAPFENCE_CLASS_NET_CONNECT :
					CAPFENCE_CLASS_FS_WRITE,
				  41 + (uint64_t)(i % 2), net ? &c[i % 2] : &c[2],
				  1, 1000 + (uint64_t)i, &pool0[i], NULL, 0))
			return 1;
	}
	return 0;
}

/* capfence_token_verify() under the key a check would pick, or -EBADMSG. */
static int plain_verify(const struct capfence_token *t)
{
	if (t->key_id == capfence_key_id(key))
		return capfence_token_verify(key, t);
	if (t->key_id == capfence_key_id(other))
		return capfence_token_verify(other, t);
	return -EBADMSG;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct capfence_key *keys[] = { key, other };
	static struct capfence_token pool[POOL];
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_verifier_stats st;
	struct capfence_verifier *v;
	struct capfence_constraint lo;
	struct capfence_token d;
	uint64_t next_id = 5000;
	size_t i;

	memcpy(pool, pool0, sizeof(pool));
	/* 8 slots: two sets of four, so the pool overflows one now and then */
	FUZZ_ASSERT(capfence_verifier_new(keys, 2, 8, &v) == 0);
	FUZZ_ASSERT(capfence_constraint_parse("127.0.0.0/8", &lo, NULL, 0) == 0);
	for (i = 0; i + 4 <= size; i += 4) {
		const struct capfence_token *t = &pool[data[i + 1] % POOL];
		const struct capfence_epoch *e = &ep[data[i + 3] % 3];
		int n, bit;

		switch (data[i] % 4) {
		case 0:
			FUZZ_ASSERT(capfence_verifier_decide(v, t, e) ==
				    capfence_decide_delegation(keys, 2, t, e));
			break;
		case 1:
			n = capfence_token_encode_bin(t, bin, sizeof(bin));
			FUZZ_ASSERT(n > 0);
			bit = (data[i + 2] << 8 | data[i + 3]) % (n * 8);
			bin[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (!capfence_token_decode_bin(bin, (size_t)n, &d, NULL, 0)) {
				FUZZ_ASSERT(capfence_verifier_decide(v, &d, e) ==
					    CAPFENCE_R_FORGED);
				FUZZ_ASSERT(capfence_decide_delegation(keys, 2, &d, e) ==
					    CAPFENCE_R_FORGED);
			}
			break;
		case 2:
			FUZZ_ASSERT(capfence_verifier_mint(v, data[i + 2] & 1 ? other : key,
						     CAPFENCE_CLASS_NET_CONNECT,
						     41 + data[i + 3] % 3, &lo, 1,
						     next_id++,
						     &pool[data[i + 1] % POOL],
						     NULL, 0) == 0);
			break;
		default:
			FUZZ_ASSERT(capfence_verifier_verify(v, t) == plain_verify(t));
			break;
		}
	}
	capfence_verifier_get_stats(v, &st);
	FUZZ_ASSERT(st.remembered >= st.evicted);
	capfence_verifier_free(v);
	return 0;
}
