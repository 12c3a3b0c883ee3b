/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence internals: a client of etcd's v3 JSON gateway (libcurl,
 * json-c, libsodium's base64). Not installed, not exported; the CLI and
 * capfenced link it from libcapfence.a.
 *
 * Every request has a connect and a total timeout; a request goes to the
 * endpoint that answered last and fails over to the next ones in turn.
 * Functions return 0 or a negative errno with one line in err.
 */
#ifndef CF_ETCD_H
#define CF_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#pragma GCC visibility push(hidden)

#define CF_ETCD_MAX_ENDPOINTS	16
#define CF_ETCD_CONNECT_MS	2000	/* default connect timeout */
#define CF_ETCD_TIMEOUT_MS	5000	/* default total timeout */
/* with https: a TLS handshake with client certificates on a busy host */
#define CF_ETCD_TLS_CONNECT_MS	5000
#define CF_ETCD_TLS_TIMEOUT_MS	10000

struct cf_etcd;

/*
 * endpoints: "URL[,URL...]", each http:// or https:// with a host; -EINVAL
 * and a message naming the bad one.
 */
int cf_etcd_open(struct cf_etcd **out, const char *endpoints, char *err,
		 size_t errlen);
void cf_etcd_close(struct cf_etcd *e);
void cf_etcd_set_timeouts(struct cf_etcd *e, long connect_ms, long total_ms);
/*
 * Transport security for https:// endpoints: cacert, the CA bundle that
 * verifies the members (NULL: the system's); cert and key, a client
 * certificate and its key (mutual TLS; both or neither). Each file must be
 * readable now: -errno and "--cacert FILE: why" otherwise.
 */
int cf_etcd_set_tls(struct cf_etcd *e, const char *cacert, const char *cert,
		    const char *key, char *err, size_t errlen);
/*
 * etcd user auth: the password is the first line of password_file (read
 * now). Each request carries the user's token (/v3/auth/authenticate,
 * asked again when the store says it expired). -EACCES for a refused
 * authentication or permission.
 */
int cf_etcd_set_auth(struct cf_etcd *e, const char *user, const char *password_file,
		     char *err, size_t errlen);
/*
 * TLS means TLS: once any of --cacert, --cert, --key or --user is set, an
 * http:// endpoint is refused (-EINVAL, naming it: its requests, and the
 * etcd password, would travel in clear text), by cf_etcd_set_tls(),
 * cf_etcd_set_auth() and every request, unless this was called first
 * (--insecure-plaintext).
 */
void cf_etcd_allow_plaintext(struct cf_etcd *e);
/* Connections opened so far, requests' and watches' (over https://, a TLS handshake each). */
uint64_t cf_etcd_connects(struct cf_etcd *e);
/* The endpoint that answered last (for messages). */
const char *cf_etcd_endpoint(const struct cf_etcd *e);

/*
 * POST the JSON object req to path ("/v3/kv/range") and parse the reply
 * into *resp (json_object_put() it). idempotent: a request that may have
 * reached a server is retried on the next endpoint (else only requests
 * that never connected are). An etcd error reply is -EIO (-ERANGE for a
 * compacted revision) with its message.
 */
int cf_etcd_call(struct cf_etcd *e, const char *path, struct json_object *req,
		 bool idempotent, struct json_object **resp, char *err,
		 size_t errlen);

/* base64 (the gateway's bytes) of n bytes; malloc'd, NULL on ENOMEM. */
char *cf_etcd_b64(const void *p, size_t n);
/* The key just past every key with prefix p (a range_end); malloc'd. */
char *cf_etcd_prefix_end(const char *p);
/* An int64 field that the gateway writes as a string (or a number); 0 if absent. */
int64_t cf_etcd_int(struct json_object *o, const char *name);

struct cf_etcd_kv {
	char *key;		/* NUL-terminated (keys are text here) */
	char *value;		/* NUL-terminated, value_len bytes */
	size_t value_len;
	int64_t create_rev, mod_rev, version, lease;
};

struct cf_etcd_range_opts {
	int64_t revision;	/* 0 = newest */
	int64_t limit;		/* 0 = all */
	bool prefix;		/* key is a prefix */
	bool keys_only;
	bool sort_mod_desc;	/* newest change first */
	bool sort_mod_asc;	/* oldest change first */
};

struct cf_etcd_range {
	int64_t rev;		/* the store's revision the read saw */
	size_t n;
	struct cf_etcd_kv *kvs;
	bool more;
};

int cf_etcd_range(struct cf_etcd *e, const char *key,
		  const struct cf_etcd_range_opts *o, struct cf_etcd_range *out,
		  char *err, size_t errlen);
void cf_etcd_range_release(struct cf_etcd_range *r);

/* A guard of cf_etcd_txn(). */
enum cf_etcd_cmp_kind {
	CF_ETCD_ABSENT,		/* key does not exist */
	CF_ETCD_PRESENT,	/* key exists */
	CF_ETCD_VALUE,		/* key's value is value */
	CF_ETCD_NOT_VALUE,	/* key exists and its value is not value */
	CF_ETCD_MOD_REV,	/* key's mod revision is mod_rev (0: absent) */
};

struct cf_etcd_cmp {
	const char *key;
	enum cf_etcd_cmp_kind kind;
	const char *value;
	int64_t mod_rev;
};

/* One put of cf_etcd_txn(), or with del the key's deletion (value unused). */
struct cf_etcd_put {
	const char *key;
	const char *value;
	bool del;
};

/*
 * One transaction: if every cmp holds, every put and delete (in order, at
 * one revision; etcd's --max-txn-ops, 128 by default, bounds ncmp and nput
 * each). Otherwise as cf_etcd_txn_put().
 */
int cf_etcd_txn(struct cf_etcd *e, const struct cf_etcd_cmp *cmps, size_t ncmp,
		const struct cf_etcd_put *puts, size_t nput, int64_t *rev,
		bool *succeeded, bool *retried, char *err, size_t errlen);

/*
 * One transaction: if every cmp holds, put value at key. *rev: the
 * revision of the put (the store's revision when it failed);
 * *succeeded: whether it did; *retried: an earlier attempt reached a
 * server and got no answer, so it may have been applied (a failed guard
 * may then be this very put).
 */
int cf_etcd_txn_put(struct cf_etcd *e, const struct cf_etcd_cmp *cmps,
		    size_t ncmp, const char *key, const char *value,
		    int64_t *rev, bool *succeeded, bool *retried, char *err,
		    size_t errlen);
/* Put (lease 0: none); *rev (may be NULL) the put's revision. */
int cf_etcd_put(struct cf_etcd *e, const char *key, const char *value,
		int64_t lease, int64_t *rev, char *err, size_t errlen);
int cf_etcd_lease_grant(struct cf_etcd *e, int64_t ttl_s, int64_t *id,
			char *err, size_t errlen);
/* One keepalive; *ttl 0 when the lease has expired (grant a new one). */
int cf_etcd_lease_keepalive(struct cf_etcd *e, int64_t id, int64_t *ttl,
			    char *err, size_t errlen);

/* Revoke a lease (its keys go at once). */
int cf_etcd_lease_revoke(struct cf_etcd *e, int64_t id, char *err,
			 size_t errlen);

/* One watch event. */
struct cf_etcd_event {
	bool deleted;
	const struct cf_etcd_kv *kv;
};

/*
 * Called for each event, in revision order; a non-zero return ends the
 * watch with that value.
 */
typedef int (*cf_etcd_event_cb)(const struct cf_etcd_event *ev, void *arg);
/* Polled about once a second; true ends the watch (return 0). */
typedef bool (*cf_etcd_stop_cb)(void *arg);

/*
 * Watch every key with prefix from start_rev on, on a stream of its own
 * (no total timeout; stop ends it). Returns 0 when stop said so,
 * -ECANCELED with *compact_rev when start_rev was compacted, the
 * callback's value, or a negative errno when the stream failed or ended.
 */
int cf_etcd_watch(struct cf_etcd *e, const char *prefix, int64_t start_rev,
		  cf_etcd_event_cb cb, cf_etcd_stop_cb stop, void *arg,
		  int64_t *compact_rev, char *err, size_t errlen);

#pragma GCC visibility pop

#endif /* CF_ETCD_H */
