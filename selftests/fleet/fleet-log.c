// SPDX-License-Identifier: GPL-2.0
/*
 * fleet-log: the fleet log's growth and its compaction against a real
 * etcd, for `make bench-fleet` (selftests/fleet/fleet-scale --log drives
 * it between its reads of etcd's own counters).
 *
 *   fleet-log --endpoints URL --key FILE [--prefix P] commit N   N chained revocations
 *   fleet-log --endpoints URL --key FILE read       what a rebuilding host reads
 *   fleet-log --endpoints URL --key FILE compact    capfence fleet compact
 *
 * Each prints one JSON object. The key file is the fleet signing key
 * (made on first use, its public half in FILE.pub); `read` verifies
 * under the public half only, as an agent with --fleet-pubkey does. All
 * of it is libcapfence's fleet client: cf_fleet_commit, cf_fleet_snapshot,
 * cf_fleet_compact.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sodium.h>
#include "cf_fleet.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int usage(void)
{
	fprintf(stderr, "usage: fleet-log --endpoints URL --key FILE [--prefix P] commit N | read | compact\n");
	return 2;
}

static size_t keys_under(struct cf_fleet *f, const char *p)
{
	struct cf_etcd_range_opts o = { .prefix = true, .keys_only = true };
	struct cf_etcd_range r;
	char err[CAPFENCE_ERR_MAX];
	size_t n;

	if (cf_etcd_range(f->etcd, p, &o, &r, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: %s\n", err);
		exit(1);
	}
	n = r.n;
	cf_etcd_range_release(&r);
	return n;
}

static int commit(struct cf_fleet *f, unsigned long n)
{
	struct cf_fleet_change ch = { .kind = CF_FLEET_REVOKE };
	char err[CAPFENCE_ERR_MAX];
	struct cf_fleet_head h;
	uint64_t rev = 0, seq = 0;
	double t0;
	unsigned long i;

	if (cf_fleet_head_renew(f, 0, &h, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: head: %s\n", err);
		return 1;
	}
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		randombytes_buf(&ch.id, sizeof(ch.id));
		ch.id |= 1;	/* never 0 */
		if (cf_fleet_commit(f, &ch, &rev, &seq, err, sizeof(err))) {
			fprintf(stderr, "fleet-log: commit %lu: %s\n", i + 1, err);
			return 1;
		}
	}
	t0 = now_ms() - t0;
	printf("{\"committed\":%lu,\"ms\":%.0f,\"per_s\":%.0f,\"seq\":%" PRIu64 ",\"rev\":%" PRIu64 "}\n",
	       n, t0, t0 > 0 ? (double)n * 1e3 / t0 : 0.0, seq, rev);
	return 0;
}

static int reader(struct cf_fleet *f)
{
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	char err[CAPFENCE_ERR_MAX];
	uint64_t rev;
	size_t n;
	double t0 = now_ms();

	if (cf_fleet_snapshot(f, 0, &chs, &n, &rev, &b, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: read: %s\n", err);
		return 1;
	}
	t0 = now_ms() - t0;
	cf_fleet_changes_free(chs, n);
	printf("{\"entries\":%zu,\"ms\":%.1f,\"log_keys\":%zu,\"snapshot_seq\":%" PRIu64
	       ",\"snapshot_bytes\":%zu,\"rev\":%" PRIu64 "}\n",
	       n, t0, keys_under(f, f->fleet), b.seq, b.bytes, rev);
	return 0;
}

static int compact(struct cf_fleet *f)
{
	struct cf_fleet_compaction c;
	char err[CAPFENCE_ERR_MAX];
	double t0 = now_ms();

	if (cf_fleet_compact(f, &c, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: compact: %s\n", err);
		return 1;
	}
	t0 = now_ms() - t0;
	printf("{\"ms\":%.0f,\"seq\":%" PRIu64 ",\"rev\":%" PRIu64 ",\"bytes\":%zu,\"folded\":%" PRIu64
	       ",\"deleted\":%" PRIu64 ",\"revoked\":%zu}\n",
	       t0, c.base.seq, c.base.rev, c.base.bytes, c.folded, c.deleted, c.revoked);
	return 0;
}

int main(int argc, char **argv)
{
	const char *endpoints = NULL, *key = NULL, *prefix = NULL;
	char err[CAPFENCE_ERR_MAX], pub[256], pubfile[4096];
	struct cf_fleet *f;
	int i, ret;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--endpoints"))
			endpoints = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			key = argv[i + 1];
		else if (!strcmp(argv[i], "--prefix"))
			prefix = argv[i + 1];
		else
			return usage();
	}
	if (!endpoints || !key || i >= argc || sodium_init() < 0)
		return usage();
	snprintf(pubfile, sizeof(pubfile), "%s.pub", key);
	if (access(key, R_OK) && cf_fleet_keygen(key, pub, sizeof(pub), err, sizeof(err))) {
		fprintf(stderr, "fleet-log: %s\n", err);
		return 1;
	}
	if (cf_fleet_open(&f, endpoints, prefix, err, sizeof(err)) ||
	    cf_fleet_add_pubkey(f, pubfile, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: %s\n", err);
		return 1;
	}
	cf_etcd_set_timeouts(f->etcd, 2000, 60000);
	if (!strcmp(argv[i], "read")) {
		ret = reader(f);
	} else if (cf_fleet_load_signing_key(f, key, err, sizeof(err))) {
		fprintf(stderr, "fleet-log: %s\n", err);
		ret = 1;
	} else if (!strcmp(argv[i], "commit") && i + 1 < argc) {
		ret = commit(f, strtoul(argv[i + 1], NULL, 10));
	} else if (!strcmp(argv[i], "compact")) {
		ret = compact(f);
	} else {
		ret = usage();
	}
	cf_fleet_close(f);
	return ret;
}
