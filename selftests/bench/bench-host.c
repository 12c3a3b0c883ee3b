// SPDX-License-Identifier: GPL-2.0
/*
 * bench-host: the host half of `make bench` (figures, never timed tests).
 *
 * libcapfence's token work against raw libsodium HMAC-SHA256 over the same
 * bytes, measured side by side in one run (interleaved rounds, median of
 * rounds), and the delegation-time decision's latency distribution.
 *
 * The raw baseline is the cheapest way libsodium offers: a
 * crypto_auth_hmacsha256_state keyed once, copied, updated with the
 * token's canonical bytes and finalised (what libcapfence does inside).
 * The one-shot crypto_auth_hmacsha256() (which re-keys on every call) is
 * printed for reference.
 *
 * It also measures a *proposal* (not in libcapfence): a small verified-token
 * cache in front of the MAC check of cf_decide_delegation(), keyed by the
 * full canonical token bytes (MAC included) and compared with
 * sodium_memcmp(); see docs/benchmarks.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include "libcapfence.h"

#define ROUNDS		15
#define PER_ROUND	20000
#define LAT_N		200000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static volatile uint8_t sink;

static void line(const char *name, double v, const char *unit,
		 const char *target, bool ok)
{
	printf("bench: %s value=%.3f%s target=%s %s\n", name, v, unit, target,
	       ok ? "ok" : "MISS");
}

/* ---- the proposal: verified-token cache -------------------------------- */

#define VC_SLOTS 256

struct vc_slot {
	const struct cf_key *key;	/* identity of the key that verified */
	uint16_t len;
	uint8_t bytes[CAPFENCE_TOKEN_MAX_LEN];
};

static struct vc_slot vc[VC_SLOTS];

/*
 * 0 iff t is authentic under k. A hit needs the exact canonical bytes
 * (body and MAC) that a full verification under the same key object
 * accepted before; only verified tokens are inserted, so a forged token can
 * only miss. The slot index comes from the MAC, which for genuine tokens
 * is uniformly distributed; an attacker choosing MACs only evicts (cost, not
 * soundness). A key object is immutable; removing/rotating a key must clear
 * the cache (vc_flush), as must freeing it (pointer reuse).
 */
static int vc_verify(const struct cf_key *k, const struct cf_token *t)
{
	uint8_t buf[CAPFENCE_TOKEN_MAX_LEN];
	struct vc_slot *s;
	uint32_t idx;
	int len;

	if (t->key_id != cf_key_id(k))
		return -EBADMSG;
	len = cf_token_encode_bin(t, buf, sizeof(buf));
	if (len < 0)
		return -EBADMSG;
	memcpy(&idx, t->mac, sizeof(idx));
	s = &vc[idx % VC_SLOTS];
	if (s->key == k && s->len == len &&
	    !sodium_memcmp(s->bytes, buf, (size_t)len))
		return 0;
	if (cf_token_verify(k, t))
		return -EBADMSG;
	s->key = k;
	s->len = (uint16_t)len;
	memcpy(s->bytes, buf, (size_t)len);
	return 0;
}

static void vc_flush(void)
{
	sodium_memzero(vc, sizeof(vc));
}

/* cf_decide_delegation() with the cache in front of the MAC check. */
static enum capfence_reason decide_cached(const struct cf_key *const keys[],
					  size_t nkeys, const struct cf_token *t,
					  const struct cf_epoch *receiver)
{
	const struct cf_key *k = NULL;
	size_t i;

	for (i = 0; i < nkeys; i++)
		if (keys[i] && cf_key_id(keys[i]) == t->key_id)
			k = keys[i];
	if (!k || vc_verify(k, t))
		return CAPFENCE_R_FORGED;
	if (t->epoch_id != receiver->epoch_id)
		return CAPFENCE_R_EPOCH_MISMATCH;
	if (!cf_class_valid(t->class_id) ||
	    !cf_rule_admits_constraints(&receiver->rules[t->class_id],
					t->constraints, t->n))
		return CAPFENCE_R_CLASS_DENIED;
	return CAPFENCE_R_OK;
}

/* ---- measurements ----------------------------------------------------- */

int main(void)
{
	const char *rules[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8" };
	static double lat_cur[LAT_N], lat_hit[LAT_N], lat_miss[LAT_N / 10];
	double r_raw[ROUNDS], r_one[ROUNDS], r_mint[ROUNDS], r_mintr[ROUNDS];
	double r_ver[ROUNDS], r_rawv[ROUNDS], r_dec[ROUNDS], r_chk[ROUNDS], r_enc[ROUNDS];
	uint8_t body[CF_TOKEN_BODY_MAX], key[CAPFENCE_KEY_LEN], mac[32];
	crypto_auth_hmacsha256_state keyed, st;
	struct cf_constraint cs[2];
	struct cf_token t, *fresh;
	struct cf_epoch ep;
	struct cf_key *k;
	char err[CF_ERR_MAX];
	const struct cf_key *keys[1];
	double clk, raw, one, mnt, mntr, ver, rawv, dec;
	int blen, r, i;
	uint64_t t0;

	if (sodium_init() < 0)
		return 1;
	memset(key, 0x5a, sizeof(key));
	if (cf_key_from_bytes(7, key, &k) ||
	    cf_constraint_parse("10.0.0.0/8", &cs[0], err, sizeof(err)) ||
	    cf_constraint_parse("127.0.0.0/8", &cs[1], err, sizeof(err)) ||
	    cf_epoch_parse_rules(&ep, 41, rules, 1, err, sizeof(err)) ||
	    cf_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, 41, cs, 2, 0x1234567890abcdefull,
			  &t, err, sizeof(err)))
		return 1;
	keys[0] = k;
	blen = cf_token_encode_body(&t, body, sizeof(body));
	if (blen < 0)
		return 1;
	crypto_auth_hmacsha256_init(&keyed, key, sizeof(key));

	/* interleaved rounds: every variant sees the same machine state */
	for (r = 0; r < ROUNDS; r++) {
		struct cf_token o;

		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++) {
			st = keyed;
			crypto_auth_hmacsha256_update(&st, body, (unsigned long long)blen);
			crypto_auth_hmacsha256_final(&st, mac);
			sink ^= mac[0];
		}
		r_raw[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++) {
			crypto_auth_hmacsha256(mac, body, (unsigned long long)blen, key);
			sink ^= mac[0];
		}
		r_one[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++) {
			cf_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, 41, cs, 2,
				      0x1234567890abcdefull, &o, NULL, 0);
			sink ^= o.mac[0];
		}
		r_mint[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++) {
			cf_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, 41, cs, 2, 0,
				      &o, NULL, 0);
			sink ^= o.mac[0];
		}
		r_mintr[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++) {
			st = keyed;
			crypto_auth_hmacsha256_update(&st, body, (unsigned long long)blen);
			crypto_auth_hmacsha256_final(&st, mac);
			sink ^= (uint8_t)sodium_memcmp(mac, t.mac, 32);
		}
		r_rawv[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++)
			sink ^= (uint8_t)cf_token_verify(k, &t);
		r_ver[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++)
			sink ^= (uint8_t)cf_decide_delegation(keys, 1, &t, &ep);
		r_dec[r] = (double)(now_ns() - t0) / PER_ROUND;
		/* where mint's time goes beyond the MAC */
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++)
			sink ^= (uint8_t)cf_token_check(&t, NULL, 0);
		r_chk[r] = (double)(now_ns() - t0) / PER_ROUND;
		t0 = now_ns();
		for (i = 0; i < PER_ROUND; i++)
			sink ^= (uint8_t)cf_token_encode_body(&t, body, sizeof(body));
		r_enc[r] = (double)(now_ns() - t0) / PER_ROUND;
	}
	raw = pct(r_raw, ROUNDS, 0.5);
	one = pct(r_one, ROUNDS, 0.5);
	mnt = pct(r_mint, ROUNDS, 0.5);
	mntr = pct(r_mintr, ROUNDS, 0.5);
	rawv = pct(r_rawv, ROUNDS, 0.5);
	ver = pct(r_ver, ROUNDS, 0.5);
	dec = pct(r_dec, ROUNDS, 0.5);

	/* per-call latency distributions (clock overhead measured and shown) */
	t0 = now_ns();
	for (i = 0; i < LAT_N; i++)
		sink ^= (uint8_t)now_ns();
	clk = (double)(now_ns() - t0) / LAT_N;
	vc_flush();
	fresh = calloc(LAT_N / 10, sizeof(*fresh));
	if (!fresh)
		return 1;
	for (i = 0; i < LAT_N / 10; i++)
		cf_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, 41, cs, 2, 0, &fresh[i],
			      NULL, 0);
	for (i = 0; i < LAT_N; i++) {
		uint64_t a = now_ns(), b, c;

		sink ^= (uint8_t)cf_decide_delegation(keys, 1, &t, &ep);
		b = now_ns();
		sink ^= (uint8_t)decide_cached(keys, 1, &t, &ep);
		c = now_ns();
		lat_cur[i] = (double)(b - a);
		lat_hit[i] = (double)(c - b);
		if (i % 10 == 0) {
			a = now_ns();
			sink ^= (uint8_t)decide_cached(keys, 1, &fresh[i / 10], &ep);
			lat_miss[i / 10] = (double)(now_ns() - a);
		}
	}

	printf("# host: libsodium %s; token %d canonical bytes + 32 MAC; median of %d interleaved rounds x %d\n",
	       sodium_version_string(), blen, ROUNDS, PER_ROUND);
	printf("# raw HMAC (keyed state copy+update+final) %.0f ns; one-shot crypto_auth_hmacsha256 %.0f ns\n",
	       raw, one);
	printf("# cf_token_mint (given cap_id) %.0f ns; with random cap_id %.0f ns; of which cf_token_check %.0f ns, cf_token_encode_body %.0f ns\n",
	       mnt, mntr, pct(r_chk, ROUNDS, 0.5), pct(r_enc, ROUNDS, 0.5));
	printf("# cf_token_verify %.0f ns; raw HMAC + sodium_memcmp %.0f ns\n", ver, rawv);
	printf("# cf_decide_delegation mean %.0f ns; per-call p50 %.0f p99 %.0f ns (clock read %.0f ns included)\n",
	       dec, pct(lat_cur, LAT_N, 0.5), pct(lat_cur, LAT_N, 0.99), clk);
	printf("# proposal, verified-token cache: hit p50 %.0f p99 %.0f ns; first-seen token p50 %.0f p99 %.0f ns\n",
	       pct(lat_hit, LAT_N, 0.5), pct(lat_hit, LAT_N, 0.99),
	       pct(lat_miss, LAT_N / 10, 0.5), pct(lat_miss, LAT_N / 10, 0.99));
	line("mint_vs_raw_hmac", mnt / raw, "", "<=1.15", mnt / raw <= 1.15);
	line("verify_vs_raw_hmac", ver / rawv, "", "<=1.15", ver / rawv <= 1.15);
	line("decide_delegation_p99", pct(lat_cur, LAT_N, 0.99) / 1000, "us", "<=0.6",
	     pct(lat_cur, LAT_N, 0.99) <= 600);
	line("proposal_decide_delegation_cached_p99", pct(lat_hit, LAT_N, 0.99) / 1000,
	     "us", "<=0.6", pct(lat_hit, LAT_N, 0.99) <= 600);
	free(fresh);
	cf_key_free(k);
	return 0;
}
