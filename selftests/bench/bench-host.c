// SPDX-License-Identifier: GPL-2.0
/*
 * bench-host: the host half of `make bench` (figures, never timed tests).
 *
 *   bench-host [SEED_REFERENCE_SCRIPT]
 *
 * 1. libcapfence mint and verify against raw libsodium HMAC-SHA256 over the
 *    same bytes. Measured in adjacent pairs of short blocks (the order
 *    alternates), and the figure is the median of the per-pair ratios, so
 *    that the machine's drift hits both sides of each ratio alike. The raw
 *    baseline is the cheapest way libsodium offers: a keyed
 *    crypto_auth_hmacsha256_state copied, updated and finalised.
 * 2. The delegation-time check, per call, over an orchestrator's stream:
 *    P parents' tokens delegated round robin, a roll to a narrower epoch
 *    half way (parents re-minted; one in eight delegations still carries a
 *    stale token); five passes, and the figures are medians of the
 *    per-pass percentiles, so that one disturbed pass on a shared host
 *    does not decide them. Through a capfence_verifier (what an orchestrator links) and
 *    through plain capfence_decide_delegation() (what the one-shot CLI runs).
 *    Also the first check of a token minted elsewhere, which must pay the
 *    MAC: the memo must add little to it (against the plain check, per
 *    call, alternating which goes first).
 * 3. The design note's own Python reference of the check, timed on this
 *    machine in the same run (before and after the C figures).
 *
 * Pinned to one CPU; clock reads are included in per-call figures and
 * their cost is printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sodium.h>
#include <capfence/capfence.h>

#define PAIRS		101	/* adjacent block pairs per ratio */
#define BLOCK		1500	/* calls per block */
#define LAT_N		100000	/* per-call samples of one pass of the stream */
#define STREAM_RUNS	5	/* passes; figures are medians over passes */
#define PARENTS		64	/* parent tokens in the stream */
#define FOREIGN_N	20000	/* first-seen tokens */

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

/* Sorts v in place. */
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

static void die(const char *what)
{
	fprintf(stderr, "bench-host: %s\n", what);
	exit(1);
}

/* ---- what is measured --------------------------------------------------- */

static struct {
	struct capfence_key *k;
	crypto_auth_hmacsha256_state keyed;
	uint8_t body[CAPFENCE_TOKEN_BODY_MAX];
	unsigned long long blen;
	struct capfence_constraint cs[2];
	struct capfence_token t;
} B;

static void raw_hmac(void)
{
	crypto_auth_hmacsha256_state st = B.keyed;
	uint8_t mac[32];

	crypto_auth_hmacsha256_update(&st, B.body, B.blen);
	crypto_auth_hmacsha256_final(&st, mac);
	sink ^= mac[0];
}

static void raw_verify(void)
{
	crypto_auth_hmacsha256_state st = B.keyed;
	uint8_t mac[32];

	crypto_auth_hmacsha256_update(&st, B.body, B.blen);
	crypto_auth_hmacsha256_final(&st, mac);
	sink ^= (uint8_t)sodium_memcmp(mac, B.t.mac, 32);
}

static void lib_mint(void)
{
	struct capfence_token o;

	capfence_token_mint(B.k, CAPFENCE_CLASS_NET_CONNECT, 41, B.cs, 2,
		      0x1234567890abcdefull, &o, NULL, 0);
	sink ^= o.mac[0];
}

static void lib_verify(void)
{
	sink ^= (uint8_t)capfence_token_verify(B.k, &B.t);
}

static double block_ns(void (*fn)(void))
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < BLOCK; i++)
		fn();
	return (double)(now_ns() - t0) / BLOCK;
}

/* Median over PAIRS of fn/base in adjacent blocks, with the quartiles. */
static double paired_ratio(void (*fn)(void), void (*base)(void), double *q1,
			   double *q3, double *base_ns)
{
	double r[PAIRS], b[PAIRS];
	int p;

	for (p = 0; p < PAIRS; p++) {
		double x, y;

		if (p & 1) {
			y = block_ns(base);
			x = block_ns(fn);
		} else {
			x = block_ns(fn);
			y = block_ns(base);
		}
		r[p] = x / y;
		b[p] = y;
	}
	*base_ns = pct(b, PAIRS, 0.5);
	*q1 = pct(r, PAIRS, 0.25);
	*q3 = pct(r, PAIRS, 0.75);
	return pct(r, PAIRS, 0.5);
}

/* ---- the design note's Python reference --------------------------------- */

struct seedref {
	double p50, p99, mint50;
	bool ok;
};

static void run_seedref(const char *script, struct seedref *s)
{
	char cmd[512], out[256];
	FILE *f;

	s->ok = false;
	if (!script)
		return;
	snprintf(cmd, sizeof(cmd), "python3 '%s'", script);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(out, sizeof(out), f) &&
	    sscanf(out, "seedref: accept_p50_ns=%lf accept_p99_ns=%lf mint_p50_ns=%lf",
		   &s->p50, &s->p99, &s->mint50) == 3)
		s->ok = true;
	if (pclose(f))
		s->ok = false;
}

/* ---- the delegation stream ---------------------------------------------- */

struct stream {
	const struct capfence_token *tok[LAT_N];
	const struct capfence_epoch *rcv[LAT_N];
};

int main(int argc, char **argv)
{
	const char *r41[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8" };
	const char *r42[] = { "net:connect=token:127.0.0.0/8" };
	static double lat_v[LAT_N], lat_p[LAT_N], lat_f[FOREIGN_N], lat_h[FOREIGN_N],
		      lat_pf[FOREIGN_N];
	static struct capfence_token par41[PARENTS], par42[PARENTS], *foreign;
	static struct stream s;
	uint8_t key[CAPFENCE_KEY_LEN];
	struct capfence_verifier_stats vst;
	struct seedref ref[2];
	struct capfence_verifier *v, *vf;
	struct capfence_epoch e41, e42;
	const struct capfence_key *keys[1];
	double q1m, q3m, q1v, q3v, raw, rawv, mint, ver, clk, first_plain;
	double v50, v99, p50, p99, f50, f99, pf50, h50, ref50, ref99;
	double rv50[STREAM_RUNS], rv99[STREAM_RUNS], rp50[STREAM_RUNS],
	       rp99[STREAM_RUNS];
	char runs[128] = "";
	int run;
	char err[CAPFENCE_ERR_MAX];
	cpu_set_t cpus;
	uint64_t t0;
	int i, n, mismatches = 0;

	/* one CPU for everything measured here, the Python reference included */
	CPU_ZERO(&cpus);
	CPU_SET((int)sysconf(_SC_NPROCESSORS_ONLN) - 1, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	if (sodium_init() < 0)
		die("libsodium init failed");
	memset(key, 0x5a, sizeof(key));
	if (capfence_key_from_bytes(7, key, &B.k) ||
	    capfence_constraint_parse("10.0.0.0/8", &B.cs[0], err, sizeof(err)) ||
	    capfence_constraint_parse("127.0.0.0/8", &B.cs[1], err, sizeof(err)) ||
	    capfence_epoch_parse_rules(&e41, 41, r41, 1, err, sizeof(err)) ||
	    capfence_epoch_parse_rules(&e42, 42, r42, 1, err, sizeof(err)) ||
	    capfence_token_mint(B.k, CAPFENCE_CLASS_NET_CONNECT, 41, B.cs, 2,
			  0x1234567890abcdefull, &B.t, err, sizeof(err)))
		die("setup failed");
	keys[0] = B.k;
	n = capfence_token_encode_body(&B.t, B.body, sizeof(B.body));
	if (n < 0)
		die("encode failed");
	B.blen = (unsigned long long)n;
	crypto_auth_hmacsha256_init(&B.keyed, key, sizeof(key));

	run_seedref(argc > 1 ? argv[1] : NULL, &ref[0]);

	/* 1. mint and verify against raw HMAC, paired blocks */
	for (i = 0; i < 3 * BLOCK; i++)
		raw_hmac();
	mint = paired_ratio(lib_mint, raw_hmac, &q1m, &q3m, &raw);
	ver = paired_ratio(lib_verify, raw_verify, &q1v, &q3v, &rawv);

	/* 2. the stream: parents minted (and re-minted at the roll) by the orchestrator */
	if (capfence_verifier_new(keys, 1, 0, &v) || capfence_verifier_new(keys, 1, 0, &vf))
		die("verifier");
	for (i = 0; i < PARENTS; i++)
		if (capfence_verifier_mint(v, B.k, CAPFENCE_CLASS_NET_CONNECT, 41,
				     B.cs, 2, 0, &par41[i], NULL, 0) ||
		    capfence_verifier_mint(v, B.k, CAPFENCE_CLASS_NET_CONNECT, 42,
				     &B.cs[1], 1, 0, &par42[i], NULL, 0))
			die("mint");
	for (i = 0; i < LAT_N; i++) {
		bool after = i >= LAT_N / 2;

		s.rcv[i] = after ? &e42 : &e41;
		s.tok[i] = after && i % 8 ? &par42[i % PARENTS] : &par41[i % PARENTS];
	}
	t0 = now_ns();
	for (i = 0; i < LAT_N; i++)
		sink ^= (uint8_t)now_ns();
	clk = (double)(now_ns() - t0) / LAT_N;
	/* the stream, STREAM_RUNS times: p99s of a run, median over runs */
	for (run = 0; run < STREAM_RUNS; run++) {
		for (i = 0; i < LAT_N; i++) {
			uint64_t a = now_ns(), b, c;
			enum capfence_reason r1, r2;

			r1 = capfence_verifier_decide(v, s.tok[i], s.rcv[i]);
			b = now_ns();
			r2 = capfence_decide_delegation(keys, 1, s.tok[i], s.rcv[i]);
			c = now_ns();
			if (r1 != r2)
				die("the verifier and capfence_decide_delegation disagree");
			mismatches += !run && r1 == CAPFENCE_R_EPOCH_MISMATCH;
			lat_v[i] = (double)(b - a);
			lat_p[i] = (double)(c - b);
		}
		rv50[run] = pct(lat_v, LAT_N, 0.5);
		rv99[run] = pct(lat_v, LAT_N, 0.99);
		rp50[run] = pct(lat_p, LAT_N, 0.5);
		rp99[run] = pct(lat_p, LAT_N, 0.99);
		snprintf(runs + strlen(runs), sizeof(runs) - strlen(runs),
			 "%s%.0f", run ? "/" : "", rv99[run]);
	}
	capfence_verifier_get_stats(v, &vst);
	v50 = pct(rv50, STREAM_RUNS, 0.5);
	v99 = pct(rv99, STREAM_RUNS, 0.5);
	p50 = pct(rp50, STREAM_RUNS, 0.5);
	p99 = pct(rp99, STREAM_RUNS, 0.5);

	/* first check of tokens minted elsewhere, next to a raw HMAC */
	foreign = calloc(FOREIGN_N, sizeof(*foreign));
	if (!foreign)
		die("out of memory");
	for (i = 0; i < FOREIGN_N; i++)
		if (capfence_token_mint(B.k, CAPFENCE_CLASS_NET_CONNECT, 41, B.cs, 2, 0,
				  &foreign[i], NULL, 0))
			die("mint");
	for (i = 0; i < FOREIGN_N; i++) {
		const struct capfence_token *ft = &foreign[i];
		uint64_t a, b, c, d;

		/* alternate which of the two goes first */
		a = now_ns();
		if (i & 1)
			sink ^= (uint8_t)capfence_decide_delegation(keys, 1, ft, &e41);
		else
			sink ^= (uint8_t)capfence_verifier_decide(vf, ft, &e41);
		b = now_ns();
		if (i & 1)
			sink ^= (uint8_t)capfence_verifier_decide(vf, ft, &e41);
		else
			sink ^= (uint8_t)capfence_decide_delegation(keys, 1, ft, &e41);
		c = now_ns();
		raw_hmac();
		d = now_ns();
		lat_f[i] = (double)(i & 1 ? c - b : b - a);
		lat_pf[i] = (double)(i & 1 ? b - a : c - b);
		lat_h[i] = (double)(d - c);
	}
	f50 = pct(lat_f, FOREIGN_N, 0.5);
	f99 = pct(lat_f, FOREIGN_N, 0.99);
	pf50 = pct(lat_pf, FOREIGN_N, 0.5);
	h50 = pct(lat_h, FOREIGN_N, 0.5);
	first_plain = f50 / pf50;

	run_seedref(argc > 1 ? argv[1] : NULL, &ref[1]);

	printf("# host: libsodium %s; token %d canonical bytes + 32 MAC; pinned to CPU %ld\n",
	       sodium_version_string(), n, sysconf(_SC_NPROCESSORS_ONLN) - 1);
	printf("# mint/raw HMAC median of %d paired blocks x %d: %.3f (IQR %.3f-%.3f); raw HMAC %.0f ns\n",
	       PAIRS, BLOCK, mint, q1m, q3m, raw);
	printf("# verify/raw HMAC+memcmp: %.3f (IQR %.3f-%.3f); raw %.0f ns\n",
	       ver, q1v, q3v, rawv);
	printf("# stream: %d delegations of %d parents' tokens, roll at half, %d epoch_mismatch answers, %d passes (medians of per-pass figures); clock read %.0f ns (included)\n",
	       LAT_N, PARENTS, mismatches, STREAM_RUNS, clk);
	printf("# capfence_verifier_decide p50 %.0f p99 %.0f ns (per-pass p99 %s; memo hits %" PRIu64 ", misses %" PRIu64 ")\n",
	       v50, v99, runs, vst.hits, vst.misses);
	printf("# capfence_decide_delegation (no memo, one-shot CLI) p50 %.0f p99 %.0f ns\n",
	       p50, p99);
	printf("# first check of a token minted elsewhere: capfence_verifier_decide p50 %.0f p99 %.0f ns, capfence_decide_delegation p50 %.0f ns, raw HMAC alone p50 %.0f ns\n",
	       f50, f99, pf50, h50);
	line("mint_vs_raw_hmac", mint, "", "<=1.15", mint <= 1.15);
	line("verify_vs_raw_hmac", ver, "", "<=1.15", ver <= 1.15);
	line("decide_delegation_p99", v99 / 1000, "us", "<=0.6", v99 <= 600);
	line("decide_first_seen_memo_vs_plain", first_plain, "", "<=1.15",
	     first_plain <= 1.15);
	if (ref[0].ok && ref[1].ok) {
		ref50 = (ref[0].p50 + ref[1].p50) / 2;
		ref99 = (ref[0].p99 + ref[1].p99) / 2;
		printf("# design note's Python reference, same run: accept_delegation p50 %.0f p99 %.0f ns (runs: %.0f/%.0f, %.0f/%.0f); mint p50 %.0f ns\n",
		       ref50, ref99, ref[0].p50, ref[0].p99, ref[1].p50,
		       ref[1].p99, (ref[0].mint50 + ref[1].mint50) / 2);
		line("decide_p99_vs_seed_python_p99", v99 / ref99, "", "<=0.333",
		     v99 / ref99 <= 1.0 / 3);
	} else {
		line("decide_p99_vs_seed_python_p99", 0, "", "<=0.333", false);
		printf("# the Python reference did not run (python3 missing?)\n");
	}
	free(foreign);
	capfence_verifier_free(v);
	capfence_verifier_free(vf);
	capfence_key_free(B.k);
	return 0;
}
