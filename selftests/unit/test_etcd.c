// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence's etcd client (tools/lib/cf_etcd.c) and the fleet
 * operations (cf_fleet.c) against a real etcd, which each test starts on
 * free loopback ports in a fresh data directory. Skipped with a message
 * when there is no etcd binary (Debian: etcd-server, tools/build/deps.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "cf_test.h"
#include <json-c/json.h>
#include <sodium.h>
#include "cf_fleet.h"

static const char *etcd_binary(void)
{
	static const char *const paths[] = { "/usr/bin/etcd", "/usr/local/bin/etcd",
					     "/usr/sbin/etcd" };
	const char *env = getenv("CAPFENCE_TEST_ETCD");
	size_t i;

	if (env)
		return access(env, X_OK) ? NULL : env;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!access(paths[i], X_OK))
			return paths[i];
	return NULL;
}

/* A loopback port nobody listens on now (the kernel's choice). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static void msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

FIXTURE(etcd) {
	pid_t pid;
	char dir[64];
	char url[64];
	struct cf_fleet *f;
};

FIXTURE_SETUP(etcd)
{
	const char *bin = etcd_binary();
	char peer[64], cluster[96], err[CAPFENCE_ERR_MAX];
	struct cf_etcd_range r;
	struct cf_etcd_range_opts o = { 0 };
	int i, cport, pport;

	self->pid = 0;
	self->f = NULL;
	if (!bin)
		SKIP(return, "no etcd binary (apt-get install etcd-server)");
	snprintf(self->dir, sizeof(self->dir), "/tmp/cf-etcd-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	cport = free_port();
	pport = free_port();
	ASSERT_LT(0, cport);
	ASSERT_LT(0, pport);
	snprintf(self->url, sizeof(self->url), "http://127.0.0.1:%d", cport);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", pport);
	snprintf(cluster, sizeof(cluster), "t=%s", peer);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		int null = open("/dev/null", O_RDWR);
		char data[96];

		snprintf(data, sizeof(data), "%s/data", self->dir);
		dup2(null, 1);
		dup2(null, 2);
		execl(bin, "etcd", "--name", "t", "--data-dir", data,
		      "--listen-client-urls", self->url, "--advertise-client-urls", self->url,
		      "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		      "--initial-cluster", cluster, (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(0, cf_fleet_open(&self->f, self->url, "/t/", err, sizeof(err)));
	cf_etcd_set_timeouts(self->f->etcd, 500, 2000);
	for (i = 0; i < 100; i++) {	/* up to 10 s */
		if (!cf_etcd_range(self->f->etcd, "/t/x", &o, &r, NULL, 0)) {
			cf_etcd_range_release(&r);
			return;
		}
		msleep(100);
	}
	ASSERT_TRUE(false) {
		TH_LOG("etcd did not start on %s", self->url);
	}
}

FIXTURE_TEARDOWN(etcd)
{
	cf_fleet_close(self->f);
	if (self->pid > 0) {
		kill(self->pid, SIGTERM);
		waitpid(self->pid, NULL, 0);
		nftw(self->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
}

static uint64_t commit(struct __test_metadata *_metadata, struct cf_fleet *f,
		       enum cf_fleet_kind kind, uint64_t id, int want)
{
	struct cf_fleet_change ch;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX] = "";
	uint64_t rev = 0;

	memset(&ch, 0, sizeof(ch));
	ch.kind = kind;
	ch.id = id;
	if (kind == CF_FLEET_EPOCH_INSTALL) {
		const char *rules[] = { "net:connect=token:10.0.0.0/8", "fs:read=open" };

		capfence_epoch_parse_rules(&e, id, rules, 2, NULL, 0);
		ch.epoch = &e;
	}
	EXPECT_EQ(want, cf_fleet_commit(f, &ch, &rev, NULL, err, sizeof(err))) {
		TH_LOG("%s %llu: %s", cf_fleet_kind_name(kind), (unsigned long long)id, err);
	}
	return rev;
}

TEST_F(etcd, changes_are_guarded_transactions)
{
	struct cf_fleet_change ch;
	char err[CAPFENCE_ERR_MAX];
	uint64_t r1, r2, r3, r4, r5, latest, store;

	r1 = commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 41, 0);
	r2 = commit(_metadata, self->f, CF_FLEET_EPOCH_ACTIVATE, 41, 0);
	r3 = commit(_metadata, self->f, CF_FLEET_KEY_ADD, 3, 0);
	r4 = commit(_metadata, self->f, CF_FLEET_KEY_REMOVE, 3, 0);
	r5 = commit(_metadata, self->f, CF_FLEET_REVOKE, 99, 0);
	EXPECT_LT(0, r1);
	EXPECT_LT(r1, r2);
	EXPECT_LT(r2, r3);
	EXPECT_LT(r3, r4);
	EXPECT_LT(r4, r5);
	/* each guard, and its message */
	memset(&ch, 0, sizeof(ch));
	ch.kind = CF_FLEET_REVOKE;
	ch.id = 99;
	EXPECT_EQ(-EEXIST, cf_fleet_commit(self->f, &ch, &r1, NULL, err, sizeof(err)));
	EXPECT_STREQ("cap 0000000000000063 is already revoked in the fleet", err);
	ch.kind = CF_FLEET_EPOCH_ACTIVATE;
	ch.id = 42;
	EXPECT_EQ(-ENOENT, cf_fleet_commit(self->f, &ch, &r1, NULL, err, sizeof(err)));
	EXPECT_STREQ("epoch 42 is not in the fleet (fleet epoch install first)", err);
	ch.id = 41;
	EXPECT_EQ(-EEXIST, cf_fleet_commit(self->f, &ch, &r1, NULL, err, sizeof(err)));
	EXPECT_STREQ("epoch 41 is already activated in the fleet", err);
	ch.kind = CF_FLEET_KEY_REMOVE;
	ch.id = 3;
	EXPECT_EQ(-EEXIST, cf_fleet_commit(self->f, &ch, &r1, NULL, err, sizeof(err)));
	EXPECT_STREQ("key 3 is already removed from the fleet", err);
	ch.id = 4;
	EXPECT_EQ(-ENOENT, cf_fleet_commit(self->f, &ch, &r1, NULL, err, sizeof(err)));
	EXPECT_STREQ("key 4 is not in the fleet (fleet key add first)", err);
	commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 41, -EEXIST);
	commit(_metadata, self->f, CF_FLEET_KEY_ADD, 3, -EEXIST);
	/* the newest change's revision, by a linearizable read */
	ASSERT_EQ(0, cf_fleet_latest(self->f, &latest, &store, err, sizeof(err)));
	EXPECT_EQ(r5, latest);
	EXPECT_LE(r5, store);
	CF_NO_LEAKS();
}

TEST_F(etcd, snapshot_holds_every_change_in_order)
{
	struct cf_fleet_change *chs;
	char err[CAPFENCE_ERR_MAX];
	uint64_t r1, r2, r3, rev;
	size_t n;

	r1 = commit(_metadata, self->f, CF_FLEET_KEY_ADD, 7, 0);
	r2 = commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 5, 0);
	r3 = commit(_metadata, self->f, CF_FLEET_KEY_REMOVE, 7, 0);
	/* a key the schema does not have stops the snapshot: never skipped */
	ASSERT_EQ(0, cf_etcd_put(self->f->etcd, "/t/fleet/junk/1", "x", 0, NULL, err, sizeof(err)));
	EXPECT_EQ(-EBADMSG, cf_fleet_snapshot(self->f, 0, &chs, &n, &rev, NULL, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, ": /t/fleet/junk/1: the value is not a fleet change"));
	EXPECT_EQ(NULL, chs);
	/* before it was written */
	ASSERT_EQ(0, cf_fleet_snapshot(self->f, r3, &chs, &n, &rev, NULL, err, sizeof(err)));
	/* a key removal has a key of its own: no change overwrites another */
	ASSERT_EQ(3u, n);
	EXPECT_EQ(CF_FLEET_KEY_ADD, chs[0].kind);
	EXPECT_EQ(r1, chs[0].rev);
	EXPECT_EQ(CF_FLEET_EPOCH_INSTALL, chs[1].kind);
	EXPECT_EQ(r2, chs[1].rev);
	EXPECT_EQ(CF_FLEET_KEY_REMOVE, chs[2].kind);
	EXPECT_EQ(r3, chs[2].rev);
	EXPECT_LT(r3, rev);
	cf_fleet_changes_free(chs, n);
	/* at an older revision */
	ASSERT_EQ(0, cf_fleet_snapshot(self->f, r1, &chs, &n, &rev, NULL, err, sizeof(err)));
	ASSERT_EQ(1u, n);
	EXPECT_EQ(CF_FLEET_KEY_ADD, chs[0].kind);
	cf_fleet_changes_free(chs, n);
	CF_NO_LEAKS();
}

struct seen {
	uint64_t revs[16];
	enum cf_fleet_kind kinds[16];
	size_t n, want;
};

static int on_event(const struct cf_etcd_event *ev, void *arg)
{
	struct seen *s = arg;
	struct cf_fleet_change ch;

	if (s->n < 16 && !cf_fleet_decode("/t/", ev->kv->key, ev->kv->value, &ch, NULL, 0)) {
		s->revs[s->n] = (uint64_t)ev->kv->mod_rev;
		s->kinds[s->n++] = ch.kind;
		cf_fleet_change_release(&ch);
	}
	return 0;
}

static bool enough(void *arg)
{
	struct seen *s = arg;

	return s->n >= s->want;
}

TEST_F(etcd, watch_delivers_in_revision_order_and_reports_compaction)
{
	char err[CAPFENCE_ERR_MAX];
	struct seen s = { .want = 3 };
	uint64_t r1, r2, r3;
	int64_t compact = 0;
	double t0;

	r1 = commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 1, 0);
	r2 = commit(_metadata, self->f, CF_FLEET_EPOCH_ACTIVATE, 1, 0);
	r3 = commit(_metadata, self->f, CF_FLEET_REVOKE, 12, 0);
	t0 = now_s();
	EXPECT_EQ(0, cf_etcd_watch(self->f->etcd, self->f->fleet, (int64_t)r1, on_event, enough,
				   &s, &compact, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	EXPECT_GT(5.0, now_s() - t0);	/* the stop callback is polled */
	ASSERT_EQ(3u, s.n);
	EXPECT_EQ(r1, s.revs[0]);
	EXPECT_EQ(r2, s.revs[1]);
	EXPECT_EQ(r3, s.revs[2]);
	EXPECT_EQ(CF_FLEET_EPOCH_INSTALL, s.kinds[0]);
	EXPECT_EQ(CF_FLEET_EPOCH_ACTIVATE, s.kinds[1]);
	EXPECT_EQ(CF_FLEET_REVOKE, s.kinds[2]);
	/* compact, then watch from before it */
	{
		struct json_object *req = json_object_new_object(), *resp = NULL;
		char rev[24];

		snprintf(rev, sizeof(rev), "%llu", (unsigned long long)r3);
		json_object_object_add(req, "revision", json_object_new_string(rev));
		ASSERT_EQ(0, cf_etcd_call(self->f->etcd, "/v3/kv/compaction", req, true, &resp,
					  err, sizeof(err)));
		json_object_put(req);
		json_object_put(resp);
	}
	s.n = 0;
	EXPECT_EQ(-ECANCELED, cf_etcd_watch(self->f->etcd, self->f->fleet, (int64_t)r1, on_event,
					    enough, &s, &compact, err, sizeof(err)));
	EXPECT_EQ((int64_t)r3, compact);
	EXPECT_EQ(0u, s.n);
	CF_NO_LEAKS();
}

TEST_F(etcd, host_reports_live_under_a_lease)
{
	struct cf_fleet_host h = { "b-host", 12, "current", 100, 200, 1, "", false, 0, { 0 }, false }, *hs;
	char err[CAPFENCE_ERR_MAX];
	int64_t lease, ttl;
	size_t n;

	ASSERT_EQ(0, cf_etcd_lease_grant(self->f->etcd, 30, &lease, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_report(self->f, &h, lease, err, sizeof(err)));
	snprintf(h.name, sizeof(h.name), "a-host");
	h.applied = 3;
	ASSERT_EQ(0, cf_fleet_report(self->f, &h, lease, err, sizeof(err)));
	ASSERT_EQ(0, cf_etcd_lease_keepalive(self->f->etcd, lease, &ttl, err, sizeof(err)));
	EXPECT_LT(0, ttl);
	ASSERT_EQ(0, cf_fleet_hosts(self->f, &hs, &n, err, sizeof(err)));
	ASSERT_EQ(2u, n);
	EXPECT_STREQ("a-host", hs[0].name);
	EXPECT_EQ(3u, hs[0].applied);
	EXPECT_STREQ("b-host", hs[1].name);
	EXPECT_EQ(12u, hs[1].applied);
	EXPECT_FALSE(hs[1].malformed);
	free(hs);
	/* a report that does not decode is listed, malformed, never applied */
	ASSERT_EQ(0, cf_etcd_put(self->f->etcd, "/t/hosts/c-host", "{\"applied\":\"99\"}",
				 lease, NULL, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_hosts(self->f, &hs, &n, err, sizeof(err)));
	ASSERT_EQ(3u, n);
	EXPECT_STREQ("c-host", hs[2].name);
	EXPECT_TRUE(hs[2].malformed);
	EXPECT_EQ(0u, hs[2].applied);
	EXPECT_STREQ("malformed report (not JSON with \"host\" and \"applied\")", hs[2].failing);
	free(hs);
	/* the lease gone, the hosts are gone */
	ASSERT_EQ(0, cf_etcd_lease_revoke(self->f->etcd, lease, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_hosts(self->f, &hs, &n, err, sizeof(err)));
	EXPECT_EQ(0u, n);
	free(hs);
	ASSERT_EQ(0, cf_etcd_lease_keepalive(self->f->etcd, lease, &ttl, err, sizeof(err)));
	EXPECT_EQ(0, ttl);
	CF_NO_LEAKS();
}

/* a change fetched back from the store as the agent sees it */
static char *stored(struct __test_metadata *_metadata, struct cf_fleet *f, const char *key)
{
	struct cf_etcd_range_opts o = { 0 };
	struct cf_etcd_range r;
	char err[CAPFENCE_ERR_MAX], *v = NULL;

	EXPECT_EQ(0, cf_etcd_range(f->etcd, key, &o, &r, err, sizeof(err)));
	if (r.n)
		v = strdup(r.kvs[0].value);
	cf_etcd_range_release(&r);
	return v;
}

TEST_F(etcd, signed_changes_verify_only_with_a_pinned_key)
{
	char dir[] = "/tmp/cf-sig.XXXXXX", sk[64], sk2[64], pub[64], pub2[64], err[CAPFENCE_ERR_MAX];
	struct cf_fleet_change ch = { .kind = CF_FLEET_REVOKE, .id = 0x99 }, back;
	struct cf_fleet *reader;
	char *v, *forged;
	uint64_t rev;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(sk, sizeof(sk), "%s/k1", dir);
	snprintf(sk2, sizeof(sk2), "%s/k2", dir);
	ASSERT_EQ(0, cf_fleet_keygen(sk, pub, sizeof(pub), err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_keygen(sk2, pub2, sizeof(pub2), err, sizeof(err)));
	EXPECT_EQ(-EEXIST, cf_fleet_keygen(sk, pub, sizeof(pub), err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_load_signing_key(self->f, sk, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_commit(self->f, &ch, &rev, NULL, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, cf_fleet_open(&reader, self->url, "/t/", err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_add_pubkey(reader, pub, err, sizeof(err)));
	v = stored(_metadata, reader, "/t/fleet/revoke/153");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(0, cf_fleet_decode_verified(reader, "/t/fleet/revoke/153", v, &back, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(0x99u, back.id);
	/* moved to another key (another cap), the signature no longer holds */
	forged = strdup(v);
	ASSERT_NE(NULL, forged);
	EXPECT_EQ(-EPERM, cf_fleet_decode_verified(reader, "/u/fleet/revoke/153", v, &back, err,
						   sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "bad signature on the change (no pinned key made it)"));
	/* a value changed under its signature */
	memcpy(strstr(forged, "153"), "154", 3);
	EXPECT_EQ(-EPERM, cf_fleet_decode_verified(reader, "/t/fleet/revoke/153", forged, &back, err,
						   sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "bad signature"));
	/* unsigned */
	EXPECT_EQ(-EPERM, cf_fleet_decode_verified(reader, "/t/fleet/revoke/153",
						   "{\"kind\":\"revoke\",\"cap_id\":\"153\"}", &back,
						   err, sizeof(err)));
	EXPECT_STREQ("/t/fleet/revoke/153: unsigned change refused", err);
	/*
	 * A rotation: the new key pinned beside the old one, both verify. The
	 * orchestrator signing with the new key must trust the head the old
	 * one signed (pinned), else it refuses to chain onto it.
	 */
	ASSERT_EQ(0, cf_fleet_load_signing_key(self->f, sk2, err, sizeof(err)));
	ch.id = 0x9a;
	EXPECT_EQ(-EPERM, cf_fleet_commit(self->f, &ch, &rev, NULL, err, sizeof(err)));
	EXPECT_STREQ("/t/head: bad signature on the head (no pinned key made it)", err);
	ASSERT_EQ(0, cf_fleet_add_pubkey(self->f, pub, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_commit(self->f, &ch, &rev, NULL, err, sizeof(err))) TH_LOG("%s", err);
	free(v);
	v = stored(_metadata, reader, "/t/fleet/revoke/154");
	ASSERT_NE(NULL, v);
	EXPECT_EQ(-EPERM, cf_fleet_decode_verified(reader, "/t/fleet/revoke/154", v, &back, err,
						   sizeof(err)));
	ASSERT_EQ(0, cf_fleet_add_pubkey(reader, pub2, err, sizeof(err)));
	EXPECT_EQ(0, cf_fleet_decode_verified(reader, "/t/fleet/revoke/154", v, &back, err, sizeof(err)));
	free(v);
	free(forged);
	cf_fleet_close(reader);
	unlink(sk);
	unlink(sk2);
	snprintf(sk, sizeof(sk), "%s/k1.pub", dir);
	unlink(sk);
	snprintf(sk, sizeof(sk), "%s/k2.pub", dir);
	unlink(sk);
	rmdir(dir);
	CF_NO_LEAKS();
}

/*
 * A fleet signing key in dir (sk: its path, pub: its public half) and a
 * reader of the store under /t/ that pins it.
 */
static struct cf_fleet *keyed_reader(struct __test_metadata *_metadata, const char *url,
				     char *dir, char sk[64], char pub[64])
{
	char err[CAPFENCE_ERR_MAX];
	struct cf_fleet *reader = NULL;

	EXPECT_NE(NULL, mkdtemp(dir));
	snprintf(sk, 64, "%s/k", dir);
	EXPECT_EQ(0, cf_fleet_keygen(sk, pub, 64, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0, cf_fleet_open(&reader, url, "/t/", err, sizeof(err))) TH_LOG("%s", err);
	if (reader)
		EXPECT_EQ(0, cf_fleet_add_pubkey(reader, pub, err, sizeof(err)));
	return reader;
}

static void keyed_cleanup(const char *dir, char sk[64])
{
	unlink(sk);
	snprintf(sk, 64, "%s/k.pub", dir);
	unlink(sk);
	rmdir(dir);
}

/*
 * Signed commits form a chain that the head closes: each change's seq and
 * prev follow the one before, the head names the last one's link, and a
 * head below one signed before is refused (a rollback); an unsigned or
 * altered head does not verify.
 */
TEST_F(etcd, signed_changes_form_a_chain_closed_by_the_head)
{
	char dir[] = "/tmp/cf-chain.XXXXXX", sk[64], pub[64], err[CAPFENCE_ERR_MAX];
	unsigned char zero[CF_FLEET_HASH_LEN] = { 0 };
	struct cf_fleet_change ch = { .kind = CF_FLEET_REVOKE }, *chs;
	struct cf_fleet_head h, h2;
	struct cf_fleet *reader;
	uint64_t rev, seq, srev;
	size_t n, i;
	char *v;

	reader = keyed_reader(_metadata, self->url, dir, sk, pub);
	ASSERT_NE(NULL, reader);
	EXPECT_EQ(-ENOENT, cf_fleet_head_get(reader, &h, NULL, err, sizeof(err)));
	/* renewing needs the signing key; then a genesis head */
	EXPECT_EQ(-EINVAL, cf_fleet_head_renew(self->f, 0, &h, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_load_signing_key(self->f, sk, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_head_renew(self->f, 0, &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0u, h.seq);
	for (i = 1; i <= 3; i++) {
		ch.id = 0x200 + i;
		ASSERT_EQ(0, cf_fleet_commit(self->f, &ch, &rev, &seq, err, sizeof(err))) TH_LOG("%s", err);
		EXPECT_EQ(i, seq);
	}
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, NULL, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3u, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(i + 1, chs[i].seq);
		EXPECT_EQ(0, memcmp(chs[i].prev, i ? chs[i - 1].link : zero, CF_FLEET_HASH_LEN));
	}
	ASSERT_EQ(0, cf_fleet_head_get(reader, &h, &srev, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(3u, h.seq);
	EXPECT_EQ(0, memcmp(h.hash, chs[2].link, CF_FLEET_HASH_LEN));
	EXPECT_EQ((int64_t)rev, h.mod_rev);	/* moved in the change's own transaction */
	cf_fleet_changes_free(chs, n);
	/* renewed: the same seq and hash, a new time and revision */
	msleep(20);
	ASSERT_EQ(0, cf_fleet_head_renew(self->f, 3, &h2, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(3u, h2.seq);
	EXPECT_EQ(0, memcmp(h.hash, h2.hash, CF_FLEET_HASH_LEN));
	EXPECT_LT(h.time_ms, h2.time_ms);
	EXPECT_LT(h.mod_rev, h2.mod_rev);
	/* a store that shows an older head than one signed is refused */
	EXPECT_EQ(-ESTALE, cf_fleet_head_renew(self->f, 4, &h2, err, sizeof(err)));
	EXPECT_STREQ("the store's head is at seq=3, below seq=4 signed before: a rollback, not signed", err);
	/* a head altered or unsigned does not verify */
	v = stored(_metadata, reader, "/t/head");
	ASSERT_NE(NULL, v);
	memcpy(strstr(v, "\"seq\":\"3\""), "\"seq\":\"9\"", 9);
	ASSERT_EQ(0, cf_etcd_put(self->f->etcd, "/t/head", v, 0, NULL, err, sizeof(err)));
	EXPECT_EQ(-EPERM, cf_fleet_head_get(reader, &h, NULL, err, sizeof(err)));
	EXPECT_STREQ("/t/head: bad signature on the head (no pinned key made it)", err);
	ASSERT_EQ(0, cf_etcd_put(self->f->etcd, "/t/head", "{\"seq\":\"9\",\"hash\":\"\",\"time_ms\":1}", 0,
				 NULL, err, sizeof(err)));
	EXPECT_EQ(-EPERM, cf_fleet_head_get(reader, &h, NULL, err, sizeof(err)));
	EXPECT_STREQ("/t/head: unsigned head refused", err);
	/* and the committer will not chain onto it */
	ch.id = 0x300;
	EXPECT_EQ(-EPERM, cf_fleet_commit(self->f, &ch, &rev, &seq, err, sizeof(err)));
	free(v);
	cf_fleet_close(reader);
	keyed_cleanup(dir, sk);
	CF_NO_LEAKS();
}

static size_t keys_under(struct __test_metadata *_metadata, struct cf_fleet *f, const char *p)
{
	struct cf_etcd_range_opts o = { .prefix = true, .keys_only = true };
	struct cf_etcd_range r;
	char err[CAPFENCE_ERR_MAX];
	size_t n;

	EXPECT_EQ(0, cf_etcd_range(f->etcd, p, &o, &r, err, sizeof(err))) TH_LOG("%s", err);
	n = r.n;
	cf_etcd_range_release(&r);
	return n;
}

/*
 * Compaction folds the chained log into one signed snapshot at the head
 * and deletes the revocation keys it covers: a reader gets the same state
 * (the snapshot's entries, then the changes past it, which chain onto the
 * snapshot's link); a cap revoked again after it is one revocation; an
 * altered snapshot does not verify; a log that is not the chain, and a
 * snapshot over its bound, are refused with nothing written.
 */
TEST_F(etcd, compaction_folds_the_chain_into_a_signed_snapshot)
{
	char dir[] = "/tmp/cf-compact.XXXXXX", sk[64], pub[64], err[CAPFENCE_ERR_MAX];
	char rule[CAPFENCE_RULE_TEXT_MAX];
	struct cf_fleet_compaction c;
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	struct cf_fleet_head h;
	struct cf_fleet *reader, *plain;
	uint64_t rev, last = 0, srev;
	size_t n, i;
	char *v;

	reader = keyed_reader(_metadata, self->url, dir, sk, pub);
	ASSERT_NE(NULL, reader);
	/* the snapshot is signed: no compaction without the key */
	EXPECT_EQ(-EINVAL, cf_fleet_compact(self->f, &c, err, sizeof(err)));
	EXPECT_STREQ("a snapshot is signed with the fleet signing key (--signing-key)", err);
	ASSERT_EQ(0, cf_fleet_load_signing_key(self->f, sk, err, sizeof(err)));
	EXPECT_EQ(-ENODATA, cf_fleet_compact(self->f, &c, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_head_renew(self->f, 0, &h, err, sizeof(err))) TH_LOG("%s", err);
	commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 41, 0);
	commit(_metadata, self->f, CF_FLEET_EPOCH_ACTIVATE, 41, 0);
	commit(_metadata, self->f, CF_FLEET_KEY_ADD, 3, 0);
	commit(_metadata, self->f, CF_FLEET_KEY_REMOVE, 3, 0);
	for (i = 1; i <= 5; i++)
		last = commit(_metadata, self->f, CF_FLEET_REVOKE, 0x200 + i, 0);
	ASSERT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(9u, c.base.seq);
	EXPECT_EQ(last, c.base.rev);
	EXPECT_EQ(9u, c.folded);
	EXPECT_EQ(4u, c.deleted);	/* the newest change's key stays */
	EXPECT_EQ(1u, c.epochs);
	EXPECT_EQ(1u, c.keys_removed);
	EXPECT_EQ(5u, c.revoked);
	EXPECT_EQ(1u, keys_under(_metadata, self->f, "/t/fleet/revoke/"));
	EXPECT_EQ(5u, keys_under(_metadata, self->f, "/t/fleet/"));	/* and the guards */
	/* the reader gets the state, verified, then nothing past it */
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(8u, n);
	EXPECT_EQ(9u, b.seq);
	EXPECT_EQ(last, b.rev);
	ASSERT_EQ(0, cf_fleet_head_get(reader, &h, NULL, err, sizeof(err)));
	EXPECT_EQ(0, memcmp(h.hash, b.hash, CF_FLEET_HASH_LEN));
	EXPECT_EQ(CF_FLEET_EPOCH_INSTALL, chs[0].kind);
	EXPECT_EQ(41u, chs[0].id);
	ASSERT_NE(NULL, chs[0].epoch);
	ASSERT_LT(0, capfence_rule_format(&chs[0].epoch->rules[CAPFENCE_CLASS_NET_CONNECT], rule, sizeof(rule)));
	EXPECT_STREQ("net:connect=token:10.0.0.0/8", rule);
	EXPECT_EQ(CF_FLEET_EPOCH_ACTIVATE, chs[1].kind);
	EXPECT_EQ(CF_FLEET_KEY_REMOVE, chs[2].kind);
	EXPECT_EQ(3u, chs[2].id);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(chs[i].base);
		EXPECT_EQ(last, chs[i].rev);
		if (i >= 3)
			EXPECT_EQ(0x200 + i - 2, chs[i].id);
	}
	cf_fleet_changes_free(chs, n);
	/* a change past it chains onto the snapshot's link */
	rev = commit(_metadata, self->f, CF_FLEET_REVOKE, 0x206, 0);
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(9u, n);
	EXPECT_FALSE(chs[8].base);
	EXPECT_EQ(rev, chs[8].rev);
	EXPECT_EQ(10u, chs[8].seq);
	EXPECT_EQ(0, memcmp(chs[8].prev, b.hash, CF_FLEET_HASH_LEN));
	cf_fleet_changes_free(chs, n);
	/* at a revision before the compaction: the whole log, no snapshot */
	ASSERT_EQ(0, cf_fleet_snapshot(reader, last, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(9u, n);
	EXPECT_EQ(0u, b.seq);
	cf_fleet_changes_free(chs, n);
	/* a cap whose key was compacted away can be revoked again: one revocation */
	commit(_metadata, self->f, CF_FLEET_REVOKE, 0x201, 0);
	commit(_metadata, self->f, CF_FLEET_EPOCH_INSTALL, 41, -EEXIST);	/* guards stay */
	ASSERT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(11u, c.base.seq);
	EXPECT_EQ(2u, c.folded);
	EXPECT_EQ(2u, c.deleted);
	EXPECT_EQ(6u, c.revoked);
	/* a store that fails a deletion: the snapshot stays, a second run finishes */
	for (i = 0; i < 130; i++)
		commit(_metadata, self->f, CF_FLEET_REVOKE, 0x1000 + i, 0);
	self->f->compact_fail_after = 64;
	EXPECT_EQ(-EIO, cf_fleet_compact(self->f, &c, err, sizeof(err)));
	EXPECT_STREQ("the snapshot at seq=141 is written, 64 revocation keys deleted, then: injected: the store failed a deletion (run it again to finish)",
		     err);
	self->f->compact_fail_after = 0;
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(141u, b.seq);
	cf_fleet_changes_free(chs, n);
	EXPECT_EQ(1u + 130 - 64, keys_under(_metadata, self->f, "/t/fleet/revoke/"));
	ASSERT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0u, c.folded);
	EXPECT_EQ(130u - 64, c.deleted);
	EXPECT_EQ(1u, keys_under(_metadata, self->f, "/t/fleet/revoke/"));
	/* nothing new: nothing written */
	srev = (uint64_t)c.base.mod_rev;
	ASSERT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0u, c.folded);
	EXPECT_EQ(0u, c.deleted);
	EXPECT_EQ(srev, (uint64_t)c.base.mod_rev);
	EXPECT_EQ(136u, c.revoked);
	/* over its bound: refused, the old snapshot stays */
	commit(_metadata, self->f, CF_FLEET_REVOKE, 0x207, 0);
	self->f->snapshot_max = 200;
	EXPECT_EQ(-E2BIG, cf_fleet_compact(self->f, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, ", above 200 (137 revocations): not compacted")) TH_LOG("%s", err);
	self->f->snapshot_max = CF_FLEET_SNAPSHOT_MAX;
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(141u, b.seq);
	cf_fleet_changes_free(chs, n);
	/* an altered snapshot does not verify; a reader without keys takes it */
	v = stored(_metadata, reader, "/t/snapshot");
	ASSERT_NE(NULL, v);
	ASSERT_NE(NULL, strstr(v, "\"revoked\":[\"513\""));
	memcpy(strstr(v, "\"revoked\":[\"513\""), "\"revoked\":[\"999\"", 16);
	ASSERT_EQ(0, cf_etcd_put(self->f->etcd, "/t/snapshot", v, 0, NULL, err, sizeof(err)));
	EXPECT_EQ(-EPERM, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err)));
	EXPECT_STREQ("/t/snapshot: bad signature on the snapshot (no pinned key made it)", err);
	EXPECT_EQ(NULL, chs);
	ASSERT_EQ(0, cf_fleet_open(&plain, self->url, "/t/", err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_snapshot(plain, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(0x3e7u, chs[3].id);
	cf_fleet_changes_free(chs, n);
	cf_fleet_close(plain);
	free(v);
	/* a log with an unchained change is not compacted */
	ASSERT_EQ(0, cf_fleet_open(&plain, self->url, "/u/", err, sizeof(err)));
	commit(_metadata, plain, CF_FLEET_REVOKE, 0x300, 0);
	ASSERT_EQ(0, cf_fleet_load_signing_key(plain, sk, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_head_renew(plain, 0, &h, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(-EBADMSG, cf_fleet_compact(plain, &c, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, ": an unchained change (committed without --signing-key): only a chained log is compacted"))
		TH_LOG("%s", err);
	EXPECT_EQ(1u, keys_under(_metadata, plain, "/u/fleet/"));
	EXPECT_EQ(0u, keys_under(_metadata, plain, "/u/snapshot"));
	cf_fleet_close(plain);
	cf_fleet_close(reader);
	keyed_cleanup(dir, sk);
	CF_NO_LEAKS();
}

/*
 * Compaction beside a committer that never stops: the head is read at
 * the log's revision, so a commit between the two reads is no fault of
 * the store's (before: 44 of 100 compactions failed with -EBADMSG); every
 * compaction succeeds, and what a reader gets is still one chain, from
 * the snapshot's link on.
 */
TEST_F(etcd, compaction_beside_concurrent_commits)
{
	char dir[] = "/tmp/cf-race.XXXXXX", sk[64], pub[64], err[CAPFENCE_ERR_MAX];
	struct cf_fleet_compaction c;
	struct cf_fleet_change *chs;
	struct cf_fleet_base b;
	struct cf_fleet_head h;
	struct cf_fleet *reader;
	unsigned char link[CF_FLEET_HASH_LEN];
	uint64_t seq, srev;
	size_t n, i;
	int st, done = 0;
	pid_t pid;

	reader = keyed_reader(_metadata, self->url, dir, sk, pub);
	ASSERT_NE(NULL, reader);
	ASSERT_EQ(0, cf_fleet_load_signing_key(self->f, sk, err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_head_renew(self->f, 0, &h, err, sizeof(err))) TH_LOG("%s", err);
	commit(_metadata, self->f, CF_FLEET_REVOKE, 1, 0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cf_fleet *w;
		uint64_t r;

		if (cf_fleet_open(&w, self->url, "/t/", err, sizeof(err)) ||
		    cf_fleet_load_signing_key(w, sk, err, sizeof(err)))
			_exit(1);
		for (i = 0; i < 200; i++) {
			struct cf_fleet_change ch = { .kind = CF_FLEET_REVOKE, .id = 1000 + i };

			if (cf_fleet_commit(w, &ch, &r, NULL, err, sizeof(err)))
				_exit(2);
		}
		_exit(0);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		EXPECT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
		done++;
	}
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_LT(2, done);
	ASSERT_EQ(0, cf_fleet_compact(self->f, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(201u, c.revoked);
	/* one more change, then the reader's chain from the snapshot on */
	commit(_metadata, self->f, CF_FLEET_REVOKE, 2, 0);
	ASSERT_EQ(0, cf_fleet_snapshot(reader, 0, &chs, &n, &srev, &b, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(201u, b.seq);
	seq = b.seq;
	memcpy(link, b.hash, sizeof(link));
	for (i = 0; i < n; i++) {
		if (chs[i].base)
			continue;
		EXPECT_EQ(seq + 1, chs[i].seq);
		EXPECT_EQ(0, memcmp(chs[i].prev, link, sizeof(link)));
		seq = chs[i].seq;
		memcpy(link, chs[i].link, sizeof(link));
	}
	EXPECT_EQ(202u, seq);
	cf_fleet_changes_free(chs, n);
	cf_fleet_close(reader);
	keyed_cleanup(dir, sk);
	CF_NO_LEAKS();
}

/*
 * --host-keys past the 256 hosts it once held: every listed host is
 * found (by bisection), a host without a report lags, a name listed twice
 * counts by its first key, a report from a host not listed is not counted.
 */
TEST_F(etcd, host_keys_list_hundreds_of_hosts)
{
	enum { LISTED = 300, REPORTING = 40 };
	static unsigned char sk[LISTED][CF_FLEET_SK_LEN], sk2[CF_FLEET_SK_LEN];
	char path[128], err[CAPFENCE_ERR_MAX] = "", b64[64];
	unsigned char pk[CF_FLEET_PK_LEN];
	struct cf_fleet *cli;
	struct cf_fleet_host *hs, h;
	size_t n, i, counted = 0, lagging = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/hosts", self->dir);
	fp = fopen(path, "w");
	ASSERT_NE(NULL, fp);
	for (i = 0; i < LISTED; i++) {
		crypto_sign_keypair(pk, sk[i]);
		sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
		/* listed out of order: the library sorts them */
		fprintf(fp, "h%03zu %s\n", (i * 7) % LISTED, b64);
	}
	/* h000 again, with another key: its first line counts */
	crypto_sign_keypair(pk, sk2);
	sodium_bin2base64(b64, sizeof(b64), pk, sizeof(pk), sodium_base64_VARIANT_ORIGINAL);
	fprintf(fp, "h000 %s\n", b64);
	fclose(fp);
	ASSERT_EQ(0, cf_fleet_open(&cli, self->url, "/t/", err, sizeof(err)));
	ASSERT_EQ(0, cf_fleet_load_host_keys(cli, path, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	EXPECT_EQ(LISTED + 1, cli->nhostkeys);
	/* hosts h000..h039 report, each signed with its own key (line i*7 % LISTED = name) */
	for (i = 0; i < REPORTING; i++) {
		size_t line;

		for (line = 0; (line * 7) % LISTED != i; line++)
			;
		memset(&h, 0, sizeof(h));
		snprintf(h.name, sizeof(h.name), "h%03zu", i);
		strcpy(h.state, "current");
		h.applied = 7;
		memcpy(self->f->host_sk, i ? sk[line] : sk2, CF_FLEET_SK_LEN);
		self->f->have_host_sk = true;
		ASSERT_EQ(0, cf_fleet_report(self->f, &h, 0, err, sizeof(err)));
	}
	/* a host nobody listed */
	strcpy(h.name, "stranger");
	ASSERT_EQ(0, cf_fleet_report(self->f, &h, 0, err, sizeof(err)));
	self->f->have_host_sk = false;
	ASSERT_EQ(0, cf_fleet_hosts(cli, &hs, &n, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	/* each listed name once, and the stranger */
	EXPECT_EQ(LISTED + 1, n);
	for (i = 0; i < n; i++) {
		if (hs[i].malformed)
			lagging++;
		else
			counted++;
		if (i)
			EXPECT_LT(0, strcmp(hs[i].name, hs[i - 1].name));
	}
	/* h000 signed with its second key: not counted */
	EXPECT_EQ(REPORTING - 1, counted);
	EXPECT_TRUE(hs[0].malformed);
	EXPECT_STREQ("h000", hs[0].name);
	EXPECT_STREQ("no live report", hs[n - 2].failing);
	EXPECT_STREQ("stranger", hs[n - 1].name);
	EXPECT_STREQ("not a host of --host-keys", hs[n - 1].failing);
	free(hs);
	cf_fleet_close(cli);
}

TEST_F(etcd, fails_over_to_the_next_endpoint)
{
	struct cf_fleet *f;
	char eps[160], err[CAPFENCE_ERR_MAX];
	uint64_t rev, store;
	int dead = free_port();

	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d,%s", dead, self->url);
	ASSERT_EQ(0, cf_fleet_open(&f, eps, "/t/", err, sizeof(err)));
	EXPECT_EQ(0, cf_fleet_latest(f, &rev, &store, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	EXPECT_STREQ(self->url, cf_etcd_endpoint(f->etcd));
	cf_fleet_close(f);
	CF_NO_LEAKS();
}

TEST_F(etcd, a_change_fails_over_past_a_member_that_holds_it)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct cf_fleet_change ch;
	struct cf_fleet *f;
	char eps[160], err[CAPFENCE_ERR_MAX];
	uint64_t rev = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* a member that takes the request and never answers (no leader) */
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(fd, 4));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&a, &len));
	snprintf(eps, sizeof(eps), "http://127.0.0.1:%d,%s", ntohs(a.sin_port), self->url);
	ASSERT_EQ(0, cf_fleet_open(&f, eps, "/t/", err, sizeof(err)));
	cf_etcd_set_timeouts(f->etcd, 300, 700);
	memset(&ch, 0, sizeof(ch));
	ch.kind = CF_FLEET_REVOKE;
	ch.id = 77;
	EXPECT_EQ(0, cf_fleet_commit(f, &ch, &rev, NULL, err, sizeof(err))) {
		TH_LOG("%s", err);
	}
	EXPECT_LT(0, rev);
	/* a second revoke of it is refused as before */
	EXPECT_EQ(-EEXIST, cf_fleet_commit(self->f, &ch, &rev, NULL, err, sizeof(err)));
	cf_fleet_close(f);
	close(fd);
	CF_NO_LEAKS();
}

/* No etcd needed: bad endpoints, nobody listening, a server that never answers. */
TEST(bad_endpoints)
{
	static const char *const bad[] = { "", "127.0.0.1:2379", "ftp://h:1", "http://",
					   "http://:2379", "http://h:1,", "http://h 1" };
	struct cf_etcd *e;
	char err[CAPFENCE_ERR_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!strcmp(bad[i], "http://h:1,")) {
			/* a trailing comma is no endpoint: fine */
			ASSERT_EQ(0, cf_etcd_open(&e, bad[i], err, sizeof(err)));
			cf_etcd_close(e);
			continue;
		}
		EXPECT_EQ(-EINVAL, cf_etcd_open(&e, bad[i], err, sizeof(err))) {
			TH_LOG("'%s'", bad[i]);
		}
		EXPECT_EQ(NULL, e);
	}
	EXPECT_EQ(-EINVAL, cf_etcd_open(&e, "ftp://h:1", err, sizeof(err)));
	EXPECT_STREQ("bad etcd endpoint 'ftp://h:1': expected http://HOST:PORT or https://HOST:PORT",
		     err);
	EXPECT_EQ(-EINVAL, cf_etcd_open(&e, "", err, sizeof(err)));
	EXPECT_STREQ("no etcd endpoint given", err);
	CF_NO_LEAKS();
}

TEST(a_partition_never_hangs_a_caller)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct cf_etcd_range_opts o = { 0 };
	struct cf_etcd_range r;
	struct cf_etcd *e;
	char url[64], err[CAPFENCE_ERR_MAX];
	int fd = socket(AF_INET, SOCK_STREAM, 0), dead = free_port();
	double t0;

	/* listens, never answers: connects, then the total timeout */
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(fd, 4));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&a, &len));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	ASSERT_EQ(0, cf_etcd_open(&e, url, err, sizeof(err)));
	cf_etcd_set_timeouts(e, 200, 500);
	t0 = now_s();
	EXPECT_EQ(-ETIMEDOUT, cf_etcd_range(e, "/k", &o, &r, err, sizeof(err)));
	EXPECT_GT(2.0, now_s() - t0);
	EXPECT_EQ(0, strncmp(err, "etcd unreachable (", 18)) {
		TH_LOG("%s", err);
	}
	cf_etcd_close(e);
	close(fd);
	/* nobody listens: refused at once */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", dead);
	ASSERT_EQ(0, cf_etcd_open(&e, url, err, sizeof(err)));
	t0 = now_s();
	EXPECT_EQ(-EHOSTUNREACH, cf_etcd_range(e, "/k", &o, &r, err, sizeof(err)));
	EXPECT_GT(2.0, now_s() - t0);
	cf_etcd_close(e);
	CF_NO_LEAKS();
}

TEST_HARNESS_MAIN
