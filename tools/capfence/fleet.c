// SPDX-License-Identifier: GPL-2.0
/*
 * capfence fleet ...: fleet-wide changes in etcd (docs/design.md,
 * "Fleet"). Each change is one etcd transaction; its revision (rev=R) is
 * the fleet revision every host's capfenced applies it at. --wait waits
 * until every live host (a host key under <prefix>hosts/) reports it has
 * applied the change (host_lags()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cf_fleet.h"

#define DEF_ENDPOINTS	"http://127.0.0.1:2379"
#define DEF_WAIT_S	30

static const char fleet_usage[] =
	"capfence fleet [--endpoints URLS] [--prefix P] [--cacert F] [--cert F --key F] [--user U --password-file F] "
	"[--insecure-plaintext] [--high-water F] [--accept-rollback] "
	"[--signing-key F [--fleet-pubkey K]...] [--host-keys F] SUBCOMMAND...   "
	"(changes: [--wait [--timeout S]] [--json]; URLS default $CAPFENCE_ETCD_ENDPOINTS or " DEF_ENDPOINTS
	"; --signing-key default $CAPFENCE_FLEET_SIGNING_KEY)";

struct fleet_opts;

/*
 * A fleet subcommand: one row, its words (@what: "key add"), its usage
 * line (the only copy: fleet --help and its errors print it), its handler
 * and what it takes: a change (--wait applies) of @kind, or --every.
 */
struct fleet_cmd {
	const char *what;
	const char *usage;
	int (*run)(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		   int argc, char **argv);
	enum cf_fleet_kind kind;	/* id_change()'s change */
	bool change, every;
};

struct fleet_opts {
	const char *endpoints, *prefix;
	const char *cacert, *cert, *key, *signing_key, *host_keys, *user, *password_file;
	const char *high_water;
	bool json, wait, insecure, accept_rollback;
	const char *pubkeys[CF_FLEET_MAX_PUBKEYS];
	size_t npub;
	unsigned long timeout_s, every_ms;
	bool timeout_set;
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


static int open_fleet(const struct fleet_opts *o, struct cf_fleet **f)
{
	char err[CAPFENCE_ERR_MAX];
	int ret = cf_fleet_open(f, o->endpoints, o->prefix, err, sizeof(err));

	if (ret) {
		cf_err("fleet: %s", err);
		return ret == -EINVAL ? CF_EXIT_USAGE : CF_EXIT_SYSTEM;
	}
	if (o->insecure)
		cf_etcd_allow_plaintext((*f)->etcd);
	if ((o->cacert || o->cert || o->key) &&
	    cf_etcd_set_tls((*f)->etcd, o->cacert, o->cert, o->key, err, sizeof(err))) {
		cf_err("fleet: %s", err);
		goto bad;
	}
	if ((o->user || o->password_file) &&
	    cf_etcd_set_auth((*f)->etcd, o->user, o->password_file, err, sizeof(err))) {
		cf_err("fleet: %s", err);
		goto bad;
	}
	if (o->signing_key && cf_fleet_load_signing_key(*f, o->signing_key, err, sizeof(err))) {
		cf_err("fleet: --signing-key %s", err);
		goto bad;
	}
	if (o->signing_key || o->high_water) {
		/* the signer's chain position on disk, next to its key by default */
		char *path = NULL;

		/* one mark per fleet prefix: SIGNING_KEY.hw, SIGNING_KEY.hw_c_ for /c/ */
		if (!o->high_water) {
			char suffix[CF_FLEET_PREFIX_MAX + 1] = "";

			if (strcmp((*f)->prefix, CF_FLEET_PREFIX)) {
				snprintf(suffix, sizeof(suffix), "%s", (*f)->prefix);
				for (char *p = suffix; *p; p++)
					if (*p == '/')
						*p = '_';
			}
			if (asprintf(&path, "%s.hw%s", o->signing_key, suffix) < 0)
				path = NULL;
		}
		if ((!o->high_water && !path) ||
		    cf_fleet_set_high_water(*f, o->high_water ? o->high_water : path,
					    o->accept_rollback, err, sizeof(err))) {
			free(path);
			cf_err("fleet: --high-water: out of memory");
			goto bad;
		}
		free(path);
	}
	for (size_t i = 0; i < o->npub; i++) {
		if (cf_fleet_add_pubkey(*f, o->pubkeys[i], err, sizeof(err))) {
			cf_err("fleet: --fleet-pubkey %s", err);
			goto bad;
		}
	}
	if (o->host_keys && cf_fleet_load_host_keys(*f, o->host_keys, err, sizeof(err))) {
		cf_err("fleet: --host-keys %s", err);
		goto bad;
	}
	return 0;
bad:
	cf_fleet_close(*f);
	*f = NULL;
	return CF_EXIT_USAGE;
}

/* keygen -o FILE: an Ed25519 key pair, FILE (secret, 0600) and FILE.pub */
static int keygen(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		  int argc, char **argv)
{
	char err[CAPFENCE_ERR_MAX], pub[64];

	(void)o;
	if (argc != 2 || (strcmp(argv[0], "-o") && strcmp(argv[0], "--output")))
		return cf_usage(cmd->usage, "fleet keygen: expected -o FILE");
	if (cf_fleet_keygen(argv[1], pub, sizeof(pub), err, sizeof(err))) {
		cf_err("fleet keygen: %s", err);
		return CF_EXIT_SYSTEM;
	}
	printf("%s\n", pub);
	return 0;
}

/* {"rev":R,"kind":K,"<id key>":ID  (the caller closes the object) */
static void json_change(const struct cf_fleet_change *ch, uint64_t rev)
{
	printf("{\"rev\":%" PRIu64 ",\"kind\":", rev);
	cf_json_str(stdout, cf_fleet_kind_name(ch->kind));
	if (ch->kind == CF_FLEET_REVOKE)
		printf(",\"cap_id\":\"%016" PRIx64 "\"", ch->id);
	else
		printf(",\"%s\":%" PRIu64,
		       ch->kind == CF_FLEET_EPOCH_INSTALL || ch->kind == CF_FLEET_EPOCH_ACTIVATE ?
		       "epoch_id" : "key_id", ch->id);
}

/* What --wait waits for: the committed change, and the log read to judge hosts past it. */
struct wait_for {
	struct cf_fleet *f;
	uint64_t rev, seq;
	unsigned char link[CF_FLEET_HASH_LEN];	/* the committed change's */
	struct cf_fleet_change *log;		/* read once a poll, when a host is past seq */
	size_t n;
	bool loaded;
};

/*
 * Does the store's log, verified, run as a chain from the committed
 * change (seq, link) to h's position, ending at h's link? Read once per
 * poll; a log that does not read, or that compaction folded the
 * committed change into, answers no (the host is not counted).
 */
static bool chain_reaches(struct wait_for *w, const struct cf_fleet_host *h)
{
	const unsigned char *at = NULL;
	char err[CAPFENCE_ERR_MAX];
	uint64_t s, next = w->seq + 1;
	size_t i;

	if (!w->loaded) {
		w->loaded = true;
		if (cf_fleet_snapshot(w->f, 0, &w->log, &w->n, &s, NULL, err, sizeof(err))) {
			w->log = NULL;
			w->n = 0;
		}
	}
	for (i = 0; i < w->n; i++) {
		const struct cf_fleet_change *c = &w->log[i];

		if (c->base || !c->seq)
			continue;
		if (!at) {
			if (c->seq == w->seq && !memcmp(c->link, w->link, CF_FLEET_HASH_LEN))
				at = c->link;
			continue;
		}
		if (c->seq != next || memcmp(c->prev, at, CF_FLEET_HASH_LEN))
			return false;
		at = c->link;
		if (c->seq == h->seq)
			return !memcmp(at, h->link, CF_FLEET_HASH_LEN);
		next++;
	}
	return false;
}

static void wait_poll_done(struct wait_for *w)
{
	if (w->loaded)
		cf_fleet_changes_free(w->log, w->n);
	w->log = NULL;
	w->n = 0;
	w->loaded = false;
}

/*
 * Has h applied the committed change? A chained one (seq > 0) when the
 * host's signed report names the chain position its module holds: the
 * change's own link at its seq, or a later position the signed log
 * reaches from it (chain_reaches()). The host's module is the record: a
 * store's revision proves nothing. An unchained change by the revision
 * the host reports. Never a host whose report says it is failing, or
 * that does not decode.
 */
static bool host_lags(const struct cf_fleet_host *h, struct wait_for *w)
{
	if (h->malformed || h->failing[0])
		return true;
	if (!w->seq)
		return h->applied < w->rev;
	if (!h->have_link || h->seq < w->seq)
		return true;
	if (h->seq == w->seq)
		return memcmp(h->link, w->link, CF_FLEET_HASH_LEN) != 0;
	return !chain_reaches(w, h);
}

/* "NAME (rev=R)", "NAME (rev=R, failing: WHY)", "NAME (malformed report: WHY)" */
static size_t host_line(char *b, size_t len, const struct cf_fleet_host *h)
{
	int k;

	char seq[32] = "";

	if (h->seq)
		snprintf(seq, sizeof(seq), ", seq=%" PRIu64, h->seq);
	if (h->malformed)
		k = snprintf(b, len, "%s (%s)", h->name, h->failing);
	else if (h->failing[0])
		k = snprintf(b, len, "%s (rev=%" PRIu64 "%s, failing: %s)", h->name, h->applied,
			     seq, h->failing);
	else
		k = snprintf(b, len, "%s (rev=%" PRIu64 "%s)", h->name, h->applied, seq);
	return k < 0 ? 0 : (size_t)k < len ? (size_t)k : len - 1;
}

/*
 * Every live host has applied rev: 0. 12 on timeout with the laggards (a
 * malformed report lags: it is never counted as applied), and 12 when no
 * host is live at all (nothing would enforce the change).
 */
static int wait_hosts(struct cf_fleet *f, const struct fleet_opts *o,
		      const char *what, const struct cf_fleet_change *ch, uint64_t rev,
		      uint64_t seq)
{
	struct wait_for w = { .f = f, .rev = rev, .seq = seq };
	double deadline = mono_s() + (double)o->timeout_s;
	struct cf_fleet_host *h = NULL;
	char err[CAPFENCE_ERR_MAX];
	size_t n = 0, i, lag;
	int ret;

	memcpy(w.link, f->committed_link, CF_FLEET_HASH_LEN);
	for (;;) {
		free(h);
		h = NULL;
		wait_poll_done(&w);
		ret = cf_fleet_hosts(f, &h, &n, err, sizeof(err));
		lag = 0;
		if (!ret)
			for (i = 0; i < n; i++)
				lag += host_lags(&h[i], &w);
		if (!ret && !lag && n)
			break;
		if (mono_s() >= deadline)
			break;
		struct timespec ts = { 0, 200 * 1000000L };
		nanosleep(&ts, NULL);
	}
	if (ret) {
		cf_err("fleet %s: rev=%" PRIu64 " committed; cannot read the hosts: %s", what, rev, err);
		if (o->json) {
			json_change(ch, rev);
			printf(",\"applied\":false,\"error\":");
			cf_json_str(stdout, err);
			printf("}\n");
		}
		wait_poll_done(&w);
		free(h);
		return CF_EXIT_FLEET_WAIT;
	}
	if (o->json) {
		json_change(ch, rev);
		if (seq)
			printf(",\"seq\":%" PRIu64, seq);
		printf(",\"applied\":%s,\"hosts\":%zu,\"lagging\":[", lag || !n ? "false" : "true", n);
		for (i = 0, lag = 0; i < n; i++) {
			if (!host_lags(&h[i], &w))
				continue;
			printf("%s{\"host\":", lag++ ? "," : "");
			cf_json_str(stdout, h[i].name);
			if (h[i].malformed) {
				printf(",\"malformed\":true,\"error\":");
				cf_json_str(stdout, h[i].failing);
			} else {
				printf(",\"applied\":%" PRIu64, h[i].applied);
				if (h[i].seq)
					printf(",\"seq\":%" PRIu64, h[i].seq);
				if (h[i].failing[0]) {
					printf(",\"failing\":");
					cf_json_str(stdout, h[i].failing);
				}
			}
			printf("}");
		}
		/* the hosts that count as having applied it */
		printf("],\"counted\":[");
		for (i = 0, lag = 0; i < n; i++) {
			if (host_lags(&h[i], &w))
				continue;
			printf("%s", lag++ ? "," : "");
			cf_json_str(stdout, h[i].name);
		}
		printf("]}\n");
		for (i = 0, lag = 0; i < n; i++)
			lag += host_lags(&h[i], &w);
	} else if (!lag && n) {
		printf("rev=%" PRIu64 " applied by %zu host%s\n", rev, n, n == 1 ? "" : "s");
	}
	if (!n) {
		cf_err("fleet %s: rev=%" PRIu64 " committed; no live host under %s after %lu s (check --prefix and the agents)",
		       what, rev, f->hosts, o->timeout_s);
		wait_poll_done(&w);
		free(h);
		return CF_EXIT_FLEET_WAIT;
	}
	if (lag) {
		char line[1024] = "";
		size_t off = 0;

		for (i = 0; i < n && off < sizeof(line) - 8; i++)
			if (host_lags(&h[i], &w)) {
				if (off)
					off += (size_t)snprintf(line + off, sizeof(line) - off, ", ");
				off += host_line(line + off, sizeof(line) - off, &h[i]);
			}
		cf_err("fleet %s: rev=%" PRIu64 " not applied after %lu s by: %s", what, rev,
		       o->timeout_s, line);
		wait_poll_done(&w);
		free(h);
		return CF_EXIT_FLEET_WAIT;
	}
	wait_poll_done(&w);
	free(h);
	return 0;
}

/* Commit one change, print rev=R (or JSON), and wait when asked. */
static int change(const struct fleet_opts *o, const char *what,
		  const struct cf_fleet_change *ch)
{
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX];
	uint64_t rev, seq;
	int ret = open_fleet(o, &f);

	if (ret)
		return ret;
	ret = cf_fleet_commit(f, ch, &rev, &seq, err, sizeof(err));
	if (ret) {
		cf_err("fleet %s: %s", what, err);
		cf_fleet_close(f);
		return CF_EXIT_SYSTEM;
	}
	if (o->wait) {
		if (!o->json)
			printf("rev=%" PRIu64 "\n", rev);
		fflush(stdout);
		ret = wait_hosts(f, o, what, ch, rev, seq);
	} else if (o->json) {
		json_change(ch, rev);
		if (seq)
			printf(",\"seq\":%" PRIu64, seq);
		printf("}\n");
	} else {
		printf("rev=%" PRIu64 "\n", rev);
	}
	cf_fleet_close(f);
	return ret;
}

static int epoch_install(const struct fleet_opts *o, const struct fleet_cmd *cmd,
			 int argc, char **argv)
{
	struct cf_fleet_change *ch = calloc(1, sizeof(*ch));
	struct capfence_epoch *e = calloc(1, sizeof(*e));
	int ret;

	if (!ch || !e) {
		free(ch);
		free(e);
		cf_err("fleet epoch install: out of memory");
		return CF_EXIT_SYSTEM;
	}
	ret = cf_epoch_from_args("fleet epoch install", cmd->usage, argc, argv, e);
	if (!ret) {
		ch->kind = CF_FLEET_EPOCH_INSTALL;
		ch->id = e->epoch_id;
		ch->epoch = e;
		ret = change(o, "epoch install", ch);
	}
	free(ch);
	free(e);
	return ret;
}

/* A change named by one id argument: epoch activate, key add/remove, revoke. */
static int id_change(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		     int argc, char **argv)
{
	const char *what = cmd->what, *usage = cmd->usage;
	enum cf_fleet_kind kind = cmd->kind;
	struct cf_fleet_change ch;
	uint64_t id;

	if (argc < 1)
		return cf_usage(usage, "fleet %s: missing ID", what);
	if (argc > 1)
		return cf_usage(usage, "fleet %s: unexpected argument '%s'", what, argv[1]);
	if (kind == CF_FLEET_REVOKE) {
		if (cf_arg_cap_id(argv[0], &id))
			return cf_usage(usage, "fleet %s: bad cap id '%s' (decimal, 0xHEX or 16 hex digits; > 0)",
					what, argv[0]);
	} else if (cf_arg_u64(argv[0], &id) ||
		   ((kind == CF_FLEET_KEY_ADD || kind == CF_FLEET_KEY_REMOVE) && id > UINT32_MAX)) {
		return cf_usage(usage, "fleet %s: bad %s id '%s' (a decimal from 1 to %s)", what,
				kind == CF_FLEET_EPOCH_ACTIVATE ? "epoch" : "key", argv[0],
				kind == CF_FLEET_EPOCH_ACTIVATE ? "2^64-1" : "4294967295");
	}
	memset(&ch, 0, sizeof(ch));
	ch.kind = kind;
	ch.id = id;
	return change(o, what, &ch);
}

/*
 * head [--every MS]: sign the chain's head again with the time now (the
 * fleet's timestamp role); with --every, for ever, never signing a head
 * below one it signed before (a store that rolls the head back is
 * refused, loudly, until it shows the newer one again).
 */
static int head(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		int argc, char **argv)
{
	const char *usage = cmd->usage;
	struct cf_fleet_head h;
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX], last[CAPFENCE_ERR_MAX] = "";
	uint64_t seen = 0;
	int ret;

	if (argc > 0)
		return cf_usage(usage, "fleet head: unexpected argument '%s'", argv[0]);
	if (!o->signing_key)
		return cf_usage(usage, "fleet head: the head is signed with the fleet signing key (--signing-key or $CAPFENCE_FLEET_SIGNING_KEY)");
	ret = open_fleet(o, &f);
	if (ret)
		return ret;
	for (;;) {
		ret = cf_fleet_head_renew(f, seen, &h, err, sizeof(err));
		if (!ret) {
			seen = h.seq;
			if (last[0])
				cf_err("fleet head: signing again at seq=%" PRIu64, h.seq);
			last[0] = '\0';
			if (!o->every_ms) {
				if (o->json)
					printf("{\"seq\":%" PRIu64 ",\"rev\":%" PRId64 ",\"time_ms\":%" PRId64 "}\n",
					       h.seq, h.mod_rev, h.time_ms);
				else
					printf("head seq=%" PRIu64 " rev=%" PRId64 " time_ms=%" PRId64 "\n",
					       h.seq, h.mod_rev, h.time_ms);
			}
		} else if (strcmp(err, last)) {	/* once per distinct failure */
			cf_err("fleet head: %s", err);
			snprintf(last, sizeof(last), "%s", err);
		}
		if (!o->every_ms)
			break;
		struct timespec ts = { (time_t)(o->every_ms / 1000), (long)(o->every_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	cf_fleet_close(f);
	return ret ? CF_EXIT_SYSTEM : 0;
}

/*
 * fleet compact: fold the log into a signed snapshot at the head and
 * delete the revocation keys it covers (docs/design.md, "Compaction").
 */
static int compact(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		   int argc, char **argv)
{
	const char *usage = cmd->usage;
	struct cf_fleet_compaction c;
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX];
	int ret;

	if (argc > 0)
		return cf_usage(usage, "fleet compact: unexpected argument '%s'", argv[0]);
	if (!o->signing_key)
		return cf_usage(usage, "fleet compact: the snapshot is signed with the fleet signing key (--signing-key or $CAPFENCE_FLEET_SIGNING_KEY)");
	ret = open_fleet(o, &f);
	if (ret)
		return ret;
	ret = cf_fleet_compact(f, &c, err, sizeof(err));
	cf_fleet_close(f);
	if (ret) {
		cf_err("fleet compact: %s", err);
		return CF_EXIT_SYSTEM;
	}
	if (o->json)
		printf("{\"seq\":%" PRIu64 ",\"rev\":%" PRIu64 ",\"bytes\":%zu,\"folded\":%" PRIu64
		       ",\"deleted\":%" PRIu64 ",\"epochs\":%zu,\"keys_removed\":%zu,\"revoked\":%zu}\n",
		       c.base.seq, c.base.rev, c.base.bytes, c.folded, c.deleted, c.epochs,
		       c.keys_removed, c.revoked);
	else
		printf("snapshot seq=%" PRIu64 " rev=%" PRIu64 " bytes=%zu: %" PRIu64
		       " changes folded, %" PRIu64 " revocation keys deleted (%zu epochs, %zu keys removed, %zu revocations)\n",
		       c.base.seq, c.base.rev, c.base.bytes, c.folded, c.deleted, c.epochs,
		       c.keys_removed, c.revoked);
	return 0;
}

/*
 * fleet recover: after etcd was restored from a backup (or rolled back),
 * commit again, exactly as signed, the changes the store lost, from this
 * signer's record; or name the seqs it has no record of.
 */
static int recover(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		   int argc, char **argv)
{
	const char *usage = cmd->usage;
	struct cf_fleet_recovery r;
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX];
	size_t i;
	int ret;

	if (argc > 0)
		return cf_usage(usage, "fleet recover: unexpected argument '%s'", argv[0]);
	if (!o->signing_key)
		return cf_usage(usage, "fleet recover: the changes are committed again with the fleet signing key (--signing-key or $CAPFENCE_FLEET_SIGNING_KEY)");
	if (o->accept_rollback)
		return cf_usage(usage, "fleet recover: --accept-rollback goes with a change or head (recover never goes below the mark)");
	ret = open_fleet(o, &f);
	if (ret)
		return ret;
	ret = cf_fleet_recover(f, &r, err, sizeof(err));
	if (o->json) {
		printf("{\"store_seq\":%" PRIu64 ",\"high_water\":%" PRIu64 ",\"recommitted\":[",
		       r.store_seq, r.mark_seq);
		for (i = 0; i < r.n; i++) {
			printf("%s", i ? "," : "");
			json_change(&r.chs[i], r.chs[i].rev);
			printf(",\"seq\":%" PRIu64 "}", r.chs[i].seq);
		}
		printf("]");
		if (r.missing_from)
			printf(",\"unrecorded\":[%" PRIu64 ",%" PRIu64 "]", r.missing_from, r.missing_to);
		if (ret) {
			printf(",\"error\":");
			cf_json_str(stdout, err);
		}
		printf("}\n");
	} else {
		for (i = 0; i < r.n; i++) {
			const struct cf_fleet_change *c = &r.chs[i];

			if (c->kind == CF_FLEET_REVOKE)
				printf("seq=%" PRIu64 " rev=%" PRIu64 " revoke %016" PRIx64 " committed again\n",
				       c->seq, c->rev, c->id);
			else
				printf("seq=%" PRIu64 " rev=%" PRIu64 " %s %" PRIu64 " committed again\n",
				       c->seq, c->rev, cf_fleet_kind_name(c->kind), c->id);
		}
		if (!ret && r.n)
			printf("the store's head is at seq=%" PRIu64 " again (%zu change%s committed again)\n",
			       r.mark_seq, r.n, r.n == 1 ? "" : "s");
		else if (!ret)
			printf("the store's head is at seq=%" PRIu64 ", this signer's high-water mark seq=%" PRIu64
			       ": nothing lost\n", r.store_seq, r.mark_seq);
	}
	if (ret)
		cf_err("fleet recover: %s", err);
	cf_fleet_recovery_release(&r);
	cf_fleet_close(f);
	return ret ? CF_EXIT_SYSTEM : 0;
}

static int status(const struct fleet_opts *o, const struct fleet_cmd *cmd,
		  int argc, char **argv)
{
	const char *usage = cmd->usage;
	char head_err[CAPFENCE_ERR_MAX] = "", snap_err[CAPFENCE_ERR_MAX] = "";
	int head_ret = -ENODATA;	/* not asked: no key to verify it */
	struct cf_fleet_head hd;
	struct cf_fleet_base snap;
	int snap_ret;
	struct cf_fleet_host *h = NULL;
	struct wait_for w = { 0 };
	struct cf_fleet *f;
	char err[CAPFENCE_ERR_MAX];
	uint64_t latest, store, mark = 0;
	size_t n, i;
	int ret;

	if (argc > 0)
		return cf_usage(usage, "fleet status: unexpected argument '%s'", argv[0]);
	ret = open_fleet(o, &f);
	if (ret)
		return ret;
	ret = cf_fleet_latest(f, &latest, &store, err, sizeof(err));
	if (!ret)
		ret = cf_fleet_hosts(f, &h, &n, err, sizeof(err));
	if (ret) {
		cf_err("fleet status: %s", err);
		cf_fleet_close(f);
		return CF_EXIT_SYSTEM;
	}
	/* the signed head, when there is a key to verify it with */
	if (f->npk || f->have_sk)
		head_ret = cf_fleet_head_get(f, &hd, NULL, head_err, sizeof(head_err));
	snap_ret = cf_fleet_base_get(f, &snap, snap_err, sizeof(snap_err));
	/* below this signer's mark: the store lost changes (fleet recover) */
	if (!head_ret && cf_fleet_high_water(f, &mark, err, sizeof(err)))
		mark = 0;
	/* behind: below the signed head's position, or off its chain; else the newest revision */
	w.f = f;
	w.rev = latest;
	if (!head_ret && hd.seq) {
		w.seq = hd.seq;
		memcpy(w.link, hd.hash, CF_FLEET_HASH_LEN);
	}
	if (o->json) {
		printf("{\"fleet_rev\":%" PRIu64 ",\"store_rev\":%" PRIu64 ",\"prefix\":", latest, store);
		cf_json_str(stdout, f->prefix);
		if (!head_ret) {
			printf(",\"head\":{\"seq\":%" PRIu64 ",\"rev\":%" PRId64 ",\"age_ms\":%" PRId64 "}",
			       hd.seq, hd.mod_rev, cf_fleet_wall_ms() - hd.time_ms);
			if (mark)
				printf(",\"high_water\":%" PRIu64, mark);
			if (mark > hd.seq)
				printf(",\"lost\":[%" PRIu64 ",%" PRIu64 "]", hd.seq + 1, mark);
		} else if (head_ret != -ENODATA) {
			printf(",\"head\":{\"error\":");
			cf_json_str(stdout, head_err);
			printf("}");
		}
		if (snap_ret) {
			printf(",\"snapshot\":{\"error\":");
			cf_json_str(stdout, snap_err);
			printf("}");
		} else if (snap.seq) {
			printf(",\"snapshot\":{\"seq\":%" PRIu64 ",\"rev\":%" PRIu64 ",\"bytes\":%zu,\"age_ms\":%" PRId64 "}",
			       snap.seq, snap.rev, snap.bytes, cf_fleet_wall_ms() - snap.time_ms);
		}
		printf(",\"hosts\":[");
		for (i = 0; i < n; i++) {
			printf("%s{\"host\":", i ? "," : "");
			cf_json_str(stdout, h[i].name);
			if (h[i].malformed) {
				printf(",\"malformed\":true,\"current\":false,\"error\":");
				cf_json_str(stdout, h[i].failing);
				printf("}");
				continue;
			}
			printf(",\"applied\":%" PRIu64 ",\"current\":%s,\"state\":", h[i].applied,
			       !host_lags(&h[i], &w) ? "true" : "false");
			cf_json_str(stdout, h[i].state);
			printf(",\"stale_ms\":%u,\"deny_ms\":%u,\"time_ms\":%" PRId64,
			       h[i].stale_ms, h[i].deny_ms, h[i].time_ms);
			if (h[i].failing[0]) {
				printf(",\"failing\":");
				cf_json_str(stdout, h[i].failing);
			}
			printf("}");
		}
		printf("]}\n");
	} else {
		printf("fleet rev             %" PRIu64 "\n", latest);
		printf("store rev             %" PRIu64 "\n", store);
		if (!head_ret)
			printf("head                  seq=%" PRIu64 ", signed %" PRId64 " ms ago\n", hd.seq,
			       cf_fleet_wall_ms() - hd.time_ms);
		else if (head_ret != -ENODATA)
			printf("head                  %s\n", head_err);
		if (!head_ret && mark > hd.seq)
			printf("lost                  seq=%" PRIu64 "..%" PRIu64
			       " (below this signer's high-water mark: capfence fleet recover)\n",
			       hd.seq + 1, mark);
		if (snap_ret)
			printf("snapshot              %s\n", snap_err);
		else if (snap.seq)
			printf("snapshot              seq=%" PRIu64 " rev=%" PRIu64 ", %zu bytes, %" PRId64 " s old\n",
			       snap.seq, snap.rev, snap.bytes, (cf_fleet_wall_ms() - snap.time_ms) / 1000);
		printf("live hosts            %zu\n", n);
		if (n)
			printf("%-24s %12s %-8s %s\n", "HOST", "APPLIED", "STATE", "BEHIND");
		for (i = 0; i < n; i++) {
			if (h[i].malformed) {
				printf("%-24s %12s %-8s yes (%s)\n", h[i].name, "-", "?", h[i].failing);
				continue;
			}
			printf("%-24s %12" PRIu64 " %-8s %s", h[i].name, h[i].applied,
			       h[i].state[0] ? h[i].state : "?",
			       !host_lags(&h[i], &w) ? "no" : "yes");
			if (h[i].failing[0])
				printf(" (failing: %s)", h[i].failing);
			printf("\n");
		}
	}
	wait_poll_done(&w);
	free(h);
	cf_fleet_close(f);
	return 0;
}

static const struct fleet_cmd fleet_cmds[] = {
	{ "epoch install", "capfence fleet epoch install ID RULE... | capfence fleet epoch install [ID] -f FILE   (RULE: CLASS=open|deny|token[:C[,C]...]; FILE '-' is stdin)",
	  epoch_install, CF_FLEET_EPOCH_INSTALL, true, false },
	{ "epoch activate", "capfence fleet epoch activate ID", id_change,
	  CF_FLEET_EPOCH_ACTIVATE, true, false },
	{ "key add", "capfence fleet key add ID", id_change, CF_FLEET_KEY_ADD, true, false },
	{ "key remove", "capfence fleet key remove ID", id_change, CF_FLEET_KEY_REMOVE, true, false },
	{ "revoke", "capfence fleet revoke CAP_ID [--wait [--timeout S]] [--json]", id_change,
	  CF_FLEET_REVOKE, true, false },
	{ "status", "capfence fleet status [--json]", status, 0, false, false },
	{ "head", "capfence fleet --signing-key F head [--every MS] [--json]", head, 0, false, true },
	{ "compact", "capfence fleet --signing-key F compact [--json]", compact, 0, false, false },
	{ "recover", "capfence fleet --signing-key F recover [--json]", recover, 0, false, false },
	{ "keygen", "capfence fleet keygen -o FILE   (writes FILE, mode 0600, and FILE.pub)", keygen,
	  0, false, false },
};

#define FLEET_NCMDS (sizeof(fleet_cmds) / sizeof(fleet_cmds[0]))

/* Does the first word of @r's words equal @w (the whole of @w)? */
static bool fleet_first_word(const struct fleet_cmd *r, const char *w)
{
	size_t len = strcspn(r->what, " ");

	return strlen(w) == len && !strncmp(r->what, w, len);
}

/*
 * The words of a list of rows, each once, in table order: the first
 * words of every row (@group NULL), or the second words of @group's rows.
 * Written to @buf as "a, b, c"; a usage line for the rows too, joined by
 * " | ", to @usage when not NULL.
 */
static void fleet_words(const char *group, char *buf, size_t len, char *usage,
			size_t ulen)
{
	size_t i, j, k, n = 0, u = 0;
	const char *w;

	buf[0] = '\0';
	if (usage)
		usage[0] = '\0';
	for (i = 0; i < FLEET_NCMDS; i++) {
		const struct fleet_cmd *r = &fleet_cmds[i];

		if (group && !fleet_first_word(r, group))
			continue;
		w = group ? r->what + strlen(group) + 1 : r->what;
		k = group ? strlen(w) : strcspn(w, " ");
		for (j = 0; j < i; j++)
			if (!group && strcspn(fleet_cmds[j].what, " ") == k &&
			    !strncmp(fleet_cmds[j].what, w, k))
				break;
		if (j < i)
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%.*s",
				      n ? ", " : "", (int)k, w);
		if (usage)
			u += (size_t)snprintf(usage + u, u < ulen ? ulen - u : 0, "%s%s",
					      u ? " | " : "", r->usage);
	}
}

static void fleet_help(void)
{
	size_t i;

	printf("usage: %s\n", fleet_usage);
	for (i = 0; i < FLEET_NCMDS; i++)
		printf("       %s\n", fleet_cmds[i].usage);
}

/* The row named by pos[0] (and pos[1]); *@words: how many it took. */
static const struct fleet_cmd *fleet_find(int n, char **pos, int *words, int *ret)
{
	char list[128], usage[1024];
	bool group = false;
	size_t i;

	for (i = 0; i < FLEET_NCMDS; i++) {
		const struct fleet_cmd *r = &fleet_cmds[i];
		const char *sp = strchr(r->what, ' ');

		if (!fleet_first_word(r, pos[0]))
			continue;
		if (!sp) {
			*words = 1;
			return r;
		}
		group = true;
		if (n >= 2 && !strcmp(pos[1], sp + 1)) {
			*words = 2;
			return r;
		}
	}
	if (!group) {
		*ret = cf_usage(fleet_usage, "fleet: unknown subcommand '%s'", pos[0]);
		return NULL;
	}
	fleet_words(pos[0], list, sizeof(list), usage, sizeof(usage));
	if (n >= 2)
		*ret = cf_usage(usage, "fleet %s: unknown subcommand '%s'", pos[0], pos[1]);
	else
		*ret = cf_usage(usage, "fleet %s: missing subcommand (%s)", pos[0], list);
	return NULL;
}

static int cf_cmd_fleet(int argc, char **argv)
{
	struct fleet_opts o = { .endpoints = getenv("CAPFENCE_ETCD_ENDPOINTS"),
				.prefix = CF_FLEET_PREFIX,
				.signing_key = getenv("CAPFENCE_FLEET_SIGNING_KEY"),
				.timeout_s = DEF_WAIT_S };
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	static const struct option lo[] = {
		{ "endpoints", required_argument, NULL, 'E' },
		{ "prefix", required_argument, NULL, 'x' },
		{ "timeout", required_argument, NULL, 't' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "signing-key", required_argument, NULL, 's' },
		{ "host-keys", required_argument, NULL, 'H' },
		{ "user", required_argument, NULL, 'u' },
		{ "password-file", required_argument, NULL, 'P' },
		{ "every", required_argument, NULL, 'e' },
		{ "fleet-pubkey", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'j' },
		{ "wait", no_argument, NULL, 'w' },
		{ "insecure-plaintext", no_argument, NULL, 'I' },
		{ "high-water", required_argument, NULL, 'W' },
		{ "accept-rollback", no_argument, NULL, 'A' },
		{ "file", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts p = { .cmd = "fleet", .usage = fleet_usage,
			     .shortopts = "f:o:", .longopts = lo };
	const struct fleet_cmd *cmd;
	char list[128];
	int c, n = 0, ret, words = 0;

	if (!pos) {
		cf_err("fleet: out of memory");
		return CF_EXIT_SYSTEM;
	}
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++) {
		if (!strcmp(argv[c], "-h") || !strcmp(argv[c], "--help")) {
			fleet_help();
			free(pos);
			return 0;
		}
	}
	if (!o.endpoints || !*o.endpoints)
		o.endpoints = DEF_ENDPOINTS;
	/* the options may stand anywhere; -f FILE belongs to epoch install,
	 * -o FILE to keygen */
	while ((c = cf_getopt(&p, argc, argv)) != -1) {
		char *end;

		switch (c) {
		case 'C':
			o.cacert = optarg;
			break;
		case 'I':
			o.insecure = true;
			break;
		case 'W':
			o.high_water = optarg;
			break;
		case 'A':
			o.accept_rollback = true;
			break;
		case 'c':
			o.cert = optarg;
			break;
		case 'k':
			o.key = optarg;
			break;
		case 's':
			o.signing_key = optarg;
			break;
		case 'H':
			o.host_keys = optarg;
			break;
		case 'u':
			o.user = optarg;
			break;
		case 'P':
			o.password_file = optarg;
			break;
		case 'E':
			o.endpoints = optarg;
			break;
		case 'x':
			o.prefix = optarg;
			break;
		case 'K':
			if (o.npub == CF_FLEET_MAX_PUBKEYS) {
				ret = cf_usage(fleet_usage, "fleet: --fleet-pubkey: at most %d keys",
					       CF_FLEET_MAX_PUBKEYS);
				goto out;
			}
			o.pubkeys[o.npub++] = optarg;
			break;
		case 'e':
			errno = 0;
			o.every_ms = strtoul(optarg, &end, 10);
			if (!*optarg || *end || errno || optarg[0] == '-' || o.every_ms < 10 ||
			    o.every_ms > 3600000) {
				ret = cf_usage(fleet_usage, "fleet: --every: '%s' is not a number of milliseconds from 10 to 3600000", optarg);
				goto out;
			}
			break;
		case 't':
			errno = 0;
			o.timeout_s = strtoul(optarg, &end, 10);
			if (!*optarg || *end || errno || optarg[0] == '-' || !o.timeout_s ||
			    o.timeout_s > 86400) {
				ret = cf_usage(fleet_usage, "fleet: --timeout: '%s' is not a number of seconds from 1 to 86400", optarg);
				goto out;
			}
			o.timeout_set = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'w':
			o.wait = true;
			break;
		case 'f':
		case 'o':
			pos[n++] = c == 'f' ? "-f" : "-o";
			pos[n++] = optarg;
			break;
		case CF_OPT_ARG:
			pos[n++] = optarg;
			break;
		default:
			ret = p.exit;
			goto out;
		}
	}
	if (o.timeout_set && !o.wait) {
		ret = cf_usage(fleet_usage, "fleet: --timeout goes with --wait");
		goto out;
	}
	if (!n) {
		fleet_words(NULL, list, sizeof(list), NULL, 0);
		ret = cf_usage(fleet_usage, "fleet: missing subcommand (%s)", list);
		goto out;
	}
	cmd = fleet_find(n, pos, &words, &ret);
	if (!cmd)
		goto out;
	if (o.every_ms && !cmd->every) {
		ret = cf_usage(fleet_usage, "fleet: --every goes with head");
		goto out;
	}
	if (o.wait && !cmd->change) {
		ret = cf_usage(cmd->usage, "fleet %s: --wait goes with a change", cmd->what);
		goto out;
	}
	ret = cmd->run(&o, cmd, n - words, pos + words);
out:
	free(pos);
	return ret;
}

const struct cf_cmd cf_fleet_cmd = { .name = "fleet", .run = cf_cmd_fleet, .usage = fleet_usage };
