// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the transport to etcd's v3 JSON gateway (cf_etcd.h). HTTP
 * is libcurl's, JSON json-c's (the watch stream is fed chunk by chunk to
 * json_tokener_parse_ex()), base64 libsodium's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <curl/curl.h>
#include <json-c/json.h>
#include <sodium.h>
#include "cf_internal.h"
#include "cf_etcd.h"

struct cf_etcd {
	pthread_mutex_t lock;	/* one request at a time on curl */
	CURL *curl;
	char *urls[CF_ETCD_MAX_ENDPOINTS];
	size_t n, cur;		/* cur: the endpoint that answered last */
	long connect_ms, total_ms;
	char *cacert, *cert, *key;	/* TLS files, NULL = curl's default / none */
	char *user, *password;		/* etcd user auth, NULL = none */
	char *token;			/* its token, under lock; NULL = ask */
	bool plaintext_ok;		/* --insecure-plaintext: http:// with TLS options or --user */
	_Atomic uint64_t connects;	/* connections opened (requests' and watches') */
};

/* the connections a transfer opened (each a TLS handshake over https://) */
static void count_connects(struct cf_etcd *e, CURL *c)
{
	long n = 0;

	if (curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &n) == CURLE_OK && n > 0)
		atomic_fetch_add(&e->connects, (uint64_t)n);
}

uint64_t cf_etcd_connects(struct cf_etcd *e)
{
	return atomic_load(&e->connects);
}

/* ---- endpoints -------------------------------------------------------------- */

static int check_url(const char *u, char *err, size_t errlen)
{
	const char *h;

	if (!strncmp(u, "http://", 7))
		h = u + 7;
	else if (!strncmp(u, "https://", 8))
		h = u + 8;
	else
		h = NULL;
	if (!h || !*h || *h == '/' || *h == ':' || strpbrk(u, " \t\r\n?#")) {
		capfence__seterr(err, errlen,
				 "bad etcd endpoint '%.60s': expected http://HOST:PORT or https://HOST:PORT",
				 u);
		return -EINVAL;
	}
	return 0;
}

int cf_etcd_open(struct cf_etcd **out, const char *endpoints, char *err,
		 size_t errlen)
{
	struct cf_etcd *e;
	char *copy, *tok, *save = NULL;
	int ret = -EINVAL;

	*out = NULL;
	if (!endpoints || !*endpoints) {
		capfence__seterr(err, errlen, "no etcd endpoint given");
		return -EINVAL;
	}
	e = calloc(1, sizeof(*e));
	copy = strdup(endpoints);
	if (!e || !copy) {
		free(e);
		free(copy);
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->connect_ms = strstr(endpoints, "https://") ? CF_ETCD_TLS_CONNECT_MS :
		CF_ETCD_CONNECT_MS;
	e->total_ms = strstr(endpoints, "https://") ? CF_ETCD_TLS_TIMEOUT_MS :
		CF_ETCD_TIMEOUT_MS;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(tok);

		while (l && tok[l - 1] == '/')	/* "http://h:2379/" */
			tok[--l] = '\0';
		ret = check_url(tok, err, errlen);
		if (ret)
			goto fail;
		if (e->n == CF_ETCD_MAX_ENDPOINTS) {
			capfence__seterr(err, errlen, "more than %d etcd endpoints",
					 CF_ETCD_MAX_ENDPOINTS);
			ret = -EINVAL;
			goto fail;
		}
		e->urls[e->n] = strdup(tok);
		if (!e->urls[e->n]) {
			ret = -ENOMEM;
			goto fail;
		}
		e->n++;
	}
	if (!e->n) {
		capfence__seterr(err, errlen, "no etcd endpoint in '%.60s'", endpoints);
		ret = -EINVAL;
		goto fail;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		capfence__seterr(err, errlen, "cannot initialise libcurl");
		ret = -ENOMEM;
		goto fail;
	}
	e->curl = curl_easy_init();
	if (!e->curl) {
		curl_global_cleanup();
		capfence__seterr(err, errlen, "cannot initialise libcurl");
		ret = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&e->lock, NULL);
	free(copy);
	*out = e;
	return 0;
fail:
	if (ret == -ENOMEM)
		capfence__seterr(err, errlen, "out of memory");
	for (size_t i = 0; i < e->n; i++)
		free(e->urls[i]);
	free(e);
	free(copy);
	return ret;
}

void cf_etcd_close(struct cf_etcd *e)
{
	if (!e)
		return;
	curl_easy_cleanup(e->curl);
	curl_global_cleanup();
	for (size_t i = 0; i < e->n; i++)
		free(e->urls[i]);
	free(e->cacert);
	free(e->cert);
	free(e->key);
	free(e->user);
	if (e->password)
		sodium_memzero(e->password, strlen(e->password));
	free(e->password);
	free(e->token);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

void cf_etcd_allow_plaintext(struct cf_etcd *e)
{
	e->plaintext_ok = true;
}

/* With TLS options or a user, no http:// endpoint (unless allowed). */
static int check_secure(const struct cf_etcd *e, const char *why, char *err, size_t errlen)
{
	size_t i;

	if (e->plaintext_ok)
		return 0;
	for (i = 0; i < e->n; i++) {
		if (strncmp(e->urls[i], "http://", 7))
			continue;
		capfence__seterr(err, errlen,
				 "%s with the plaintext endpoint %.60s: its requests%s would travel in clear text (https://, or --insecure-plaintext)",
				 why, e->urls[i], e->user || !strcmp(why, "--user") ? " and the etcd password" : "");
		return -EINVAL;
	}
	return 0;
}

int cf_etcd_set_tls(struct cf_etcd *e, const char *cacert, const char *cert,
		    const char *key, char *err, size_t errlen)
{
	const char *files[3] = { cacert, cert, key }, *opts[3] = { "--cacert", "--cert", "--key" };
	char **dst[3] = { &e->cacert, &e->cert, &e->key };
	size_t i;

	if (!cert != !key) {
		capfence__seterr(err, errlen, "--cert and --key come together (a client certificate and its key)");
		return -EINVAL;
	}
	for (i = 0; i < 3; i++) {
		FILE *f;

		if (!files[i])
			continue;
		f = fopen(files[i], "re");
		if (!f) {
			capfence__seterr(err, errlen, "%s %.200s: %s", opts[i], files[i], strerror(errno));
			return -errno;
		}
		fclose(f);
	}
	if ((cacert || cert) &&
	    check_secure(e, cacert ? "--cacert" : "--cert", err, errlen))
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		if (!files[i])
			continue;
		free(*dst[i]);
		*dst[i] = strdup(files[i]);
		if (!*dst[i]) {
			capfence__seterr(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

int cf_etcd_set_auth(struct cf_etcd *e, const char *user, const char *password_file,
		     char *err, size_t errlen)
{
	char line[256] = "";
	FILE *f;

	if (!user || !*user || !password_file) {
		capfence__seterr(err, errlen, "--user and --password-file come together");
		return -EINVAL;
	}
	f = fopen(password_file, "re");
	if (!f) {
		int r = -errno;

		capfence__seterr(err, errlen, "--password-file %.200s: %s", password_file, strerror(errno));
		return r;
	}
	if (check_secure(e, "--user", err, errlen)) {
		fclose(f);
		return -EINVAL;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	free(e->user);
	free(e->password);
	e->user = strdup(user);
	e->password = strdup(line);
	sodium_memzero(line, sizeof(line));
	if (!e->user || !e->password) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

void cf_etcd_set_timeouts(struct cf_etcd *e, long connect_ms, long total_ms)
{
	if (connect_ms > 0)
		e->connect_ms = connect_ms;
	if (total_ms > 0)
		e->total_ms = total_ms;
}

const char *cf_etcd_endpoint(const struct cf_etcd *e)
{
	return e->urls[e->cur];
}

/* ---- helpers ----------------------------------------------------------------- */

char *cf_etcd_b64(const void *p, size_t n)
{
	size_t len = sodium_base64_encoded_len(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(len);

	if (s)
		sodium_bin2base64(s, len, p, n, sodium_base64_VARIANT_ORIGINAL);
	return s;
}

/* base64 text to a NUL-terminated malloc'd buffer; NULL if malformed. */
static char *unb64(const char *s, size_t *n)
{
	size_t len = strlen(s), out_len = 0;
	char *b = malloc(len / 4 * 3 + 3);

	if (!b)
		return NULL;
	if (sodium_base642bin((unsigned char *)b, len / 4 * 3 + 2, s, len, NULL,
			      &out_len, NULL, sodium_base64_VARIANT_ORIGINAL)) {
		free(b);
		return NULL;
	}
	b[out_len] = '\0';
	if (n)
		*n = out_len;
	return b;
}

char *cf_etcd_prefix_end(const char *p)
{
	size_t l = strlen(p);
	char *s = strdup(p);

	if (!s)
		return NULL;
	while (l) {
		if ((unsigned char)s[l - 1] < 0xff) {
			s[l - 1]++;
			s[l] = '\0';
			return s;
		}
		l--;
	}
	s[0] = '\0';	/* every key: "\0" as the gateway reads it */
	return s;
}

int64_t cf_etcd_int(struct json_object *o, const char *name)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, name, &v))
		return 0;
	if (json_object_is_type(v, json_type_string))
		return strtoll(json_object_get_string(v), NULL, 10);
	return json_object_get_int64(v);
}

static int add_b64(struct json_object *o, const char *name, const void *p,
		   size_t n)
{
	char *s = cf_etcd_b64(p, n);

	if (!s)
		return -ENOMEM;
	json_object_object_add(o, name, json_object_new_string(s));
	free(s);
	return 0;
}

static void add_int(struct json_object *o, const char *name, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	json_object_object_add(o, name, json_object_new_string(buf));
}

/* ---- one request -------------------------------------------------------------- */

struct buf {
	char *p;
	size_t n;
};

#define CF_ETCD_REPLY_MAX	(64u << 20)

static size_t buf_write(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct buf *b = data;
	size_t add = size * nmemb;
	char *p;

	if (b->n + add > CF_ETCD_REPLY_MAX)
		return 0;
	p = realloc(b->p, b->n + add + 1);
	if (!p)
		return 0;
	memcpy(p + b->n, ptr, add);
	b->p = p;
	b->n += add;
	b->p[b->n] = '\0';
	return add;
}

static void set_common(const struct cf_etcd *e, CURL *c, const char *url,
		       struct curl_slist *hdr, long connect_ms)
{
	if (e->cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, e->cacert);
	if (e->cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, e->cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, e->key);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
}

/* An etcd error reply: {"error": ..., "message": ..., "code": N}. */
static int etcd_error(struct json_object *o, long http, char *err,
		      size_t errlen)
{
	struct json_object *m, *inner;
	const char *msg = "?";
	int64_t code;

	/* a stream's error is an object: {"error":{"grpc_code":14,"message":...}} */
	if (o && json_object_object_get_ex(o, "error", &inner) &&
	    json_object_is_type(inner, json_type_object))
		o = inner;
	code = cf_etcd_int(o, "code");
	if (!code)
		code = cf_etcd_int(o, "grpc_code");
	if (o && (json_object_object_get_ex(o, "message", &m) ||
		  json_object_object_get_ex(o, "error", &m)) &&
	    json_object_is_type(m, json_type_string))
		msg = json_object_get_string(m);
	capfence__seterr(err, errlen, "etcd: %s (HTTP %ld)", msg, http);
	if (code == 11 || strstr(msg, "compacted"))	/* OutOfRange */
		return -ERANGE;
	if (code == 14)					/* Unavailable */
		return -EAGAIN;
	if (strstr(msg, "invalid auth token"))
		return -EKEYEXPIRED;
	if (code == 16 || code == 7 || strstr(msg, "permission denied") ||
	    strstr(msg, "authentication failed") || strstr(msg, "user name is empty"))
		return -EACCES;				/* Unauthenticated, PermissionDenied */
	return -EIO;
}

/*
 * One request, failing over. *ambiguous (may be NULL): an attempt that
 * reached a server failed before the answer (it may have been applied).
 */
static int call_locked(struct cf_etcd *e, const char *path, struct json_object *req,
		       bool idempotent, struct json_object **resp, bool *ambiguous,
		       char *err, size_t errlen);

/* A token for the user (under e->lock): /v3/auth/authenticate. */
static int authenticate_locked(struct cf_etcd *e, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL, *t;
	char *user = e->user;
	int ret;

	if (!req) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_object_object_add(req, "name", json_object_new_string(e->user));
	json_object_object_add(req, "password", json_object_new_string(e->password));
	e->user = NULL;		/* no token for the authentication itself */
	ret = call_locked(e, "/v3/auth/authenticate", req, true, &resp, NULL, err, errlen);
	e->user = user;
	json_object_put(req);
	if (!ret) {
		free(e->token);
		e->token = NULL;
		if (json_object_object_get_ex(resp, "token", &t) &&
		    json_object_is_type(t, json_type_string))
			e->token = strdup(json_object_get_string(t));
		if (!e->token) {
			capfence__seterr(err, errlen, "etcd: authentication of '%.60s' gave no token", user);
			ret = -EACCES;
		}
	} else {
		char why[CAPFENCE_ERR_MAX];

		snprintf(why, sizeof(why), "%s", err);
		capfence__seterr(err, errlen, "etcd user '%.60s': %s", user, why);
	}
	json_object_put(resp);
	return ret;
}

static int call(struct cf_etcd *e, const char *path, struct json_object *req,
		bool idempotent, struct json_object **resp, bool *ambiguous,
		char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&e->lock);
	ret = call_locked(e, path, req, idempotent, resp, ambiguous, err, errlen);
	if (ret == -EKEYEXPIRED) {	/* the token expired or the store forgot it */
		free(e->token);
		e->token = NULL;
		ret = call_locked(e, path, req, idempotent, resp, ambiguous, err, errlen);
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

static int call_locked(struct cf_etcd *e, const char *path, struct json_object *req,
		       bool idempotent, struct json_object **resp, bool *ambiguous,
		       char *err, size_t errlen)
{
	const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	char why[CAPFENCE_ERR_MAX] = "";
	int ret = -EHOSTUNREACH;
	size_t tries;

	*resp = NULL;
	if (!hdr) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* never a request, or the password, in clear text once TLS or a user is set */
	if ((e->user || e->cacert || e->cert) &&
	    check_secure(e, e->user ? "--user" : "TLS options", err, errlen)) {
		curl_slist_free_all(hdr);
		return -EINVAL;
	}
	if (e->user) {
		char *auth = NULL;

		if (!e->token && (ret = authenticate_locked(e, err, errlen))) {
			curl_slist_free_all(hdr);
			return ret;
		}
		if (asprintf(&auth, "Authorization: %s", e->token) < 0 ||
		    !curl_slist_append(hdr, auth)) {
			free(auth);
			curl_slist_free_all(hdr);
			capfence__seterr(err, errlen, "out of memory");
			return -ENOMEM;
		}
		free(auth);
		ret = -EHOSTUNREACH;
	}
	for (tries = 0; tries < e->n; tries++) {
		size_t i = (e->cur + tries) % e->n;
		char url[512], cerr[CURL_ERROR_SIZE] = "";
		struct buf b = { NULL, 0 };
		curl_off_t connected = 0;
		long http = 0;
		CURLcode cc;

		snprintf(url, sizeof(url), "%s%s", e->urls[i], path);
		curl_easy_reset(e->curl);
		set_common(e, e->curl, url, hdr, e->connect_ms);
		curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, e->total_ms);
		curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, buf_write);
		curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
		curl_easy_setopt(e->curl, CURLOPT_ERRORBUFFER, cerr);
		cc = curl_easy_perform(e->curl);
		count_connects(e, e->curl);
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &http);
		curl_easy_getinfo(e->curl, CURLINFO_CONNECT_TIME_T, &connected);
		if (cc != CURLE_OK) {
			snprintf(why, sizeof(why), "%.100s: %.120s", e->urls[i],
				 cerr[0] ? cerr : curl_easy_strerror(cc));
			ret = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
			free(b.p);
			if (connected > 0 && ambiguous)
				*ambiguous = true;
			if (!idempotent && connected > 0)
				break;	/* it may have been applied */
			continue;
		}
		*resp = b.p ? json_tokener_parse(b.p) : NULL;
		free(b.p);
		if (http == 200 && *resp) {
			e->cur = i;
			ret = 0;
			goto out;
		}
		ret = etcd_error(*resp, http, why, sizeof(why));
		json_object_put(*resp);
		*resp = NULL;
		if (ret != -EAGAIN && http != 503 && http != 502)
			goto fail;	/* the store's answer, not the endpoint's */
	}
fail:
	if (ret == -ETIMEDOUT || ret == -EHOSTUNREACH)
		capfence__seterr(err, errlen, "etcd unreachable (%s)", why);
	else
		capfence__seterr(err, errlen, "%s", why);
out:
	curl_slist_free_all(hdr);
	return ret;
}

int cf_etcd_call(struct cf_etcd *e, const char *path, struct json_object *req,
		 bool idempotent, struct json_object **resp, char *err,
		 size_t errlen)
{
	return call(e, path, req, idempotent, resp, NULL, err, errlen);
}

/* ---- kv ---------------------------------------------------------------------------- */

static int parse_kv(struct json_object *o, struct cf_etcd_kv *kv)
{
	struct json_object *v;

	memset(kv, 0, sizeof(*kv));
	if (!json_object_object_get_ex(o, "key", &v) ||
	    !(kv->key = unb64(json_object_get_string(v), NULL)))
		return -EBADMSG;
	if (json_object_object_get_ex(o, "value", &v))
		kv->value = unb64(json_object_get_string(v), &kv->value_len);
	else
		kv->value = calloc(1, 1);
	if (!kv->value) {
		free(kv->key);
		kv->key = NULL;
		return -EBADMSG;
	}
	kv->create_rev = cf_etcd_int(o, "create_revision");
	kv->mod_rev = cf_etcd_int(o, "mod_revision");
	kv->version = cf_etcd_int(o, "version");
	kv->lease = cf_etcd_int(o, "lease");
	return 0;
}

static void kv_release(struct cf_etcd_kv *kv)
{
	free(kv->key);
	free(kv->value);
}

void cf_etcd_range_release(struct cf_etcd_range *r)
{
	for (size_t i = 0; i < r->n; i++)
		kv_release(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

static int64_t header_rev(struct json_object *o)
{
	struct json_object *h;

	return json_object_object_get_ex(o, "header", &h) ?
		cf_etcd_int(h, "revision") : 0;
}

int cf_etcd_range(struct cf_etcd *e, const char *key,
		  const struct cf_etcd_range_opts *o, struct cf_etcd_range *out,
		  char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL, *kvs, *m;
	char *end = NULL;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!req || add_b64(req, "key", key, strlen(key)))
		goto nomem;
	if (o->prefix) {
		end = cf_etcd_prefix_end(key);
		if (!end || add_b64(req, "range_end", end, strlen(end) ? strlen(end) : 1))
			goto nomem;
	}
	if (o->revision)
		add_int(req, "revision", o->revision);
	if (o->limit)
		add_int(req, "limit", o->limit);
	if (o->keys_only)
		json_object_object_add(req, "keys_only", json_object_new_boolean(1));
	if (o->sort_mod_desc || o->sort_mod_asc) {
		json_object_object_add(req, "sort_target", json_object_new_string("MOD"));
		json_object_object_add(req, "sort_order",
				       json_object_new_string(o->sort_mod_desc ? "DESCEND" : "ASCEND"));
	}
	ret = cf_etcd_call(e, "/v3/kv/range", req, true, &resp, err, errlen);
	if (ret)
		goto out;
	out->rev = header_rev(resp);
	out->more = json_object_object_get_ex(resp, "more", &m) && json_object_get_boolean(m);
	if (json_object_object_get_ex(resp, "kvs", &kvs) &&
	    json_object_is_type(kvs, json_type_array)) {
		size_t n = json_object_array_length(kvs);

		out->kvs = calloc(n ? n : 1, sizeof(*out->kvs));
		if (!out->kvs)
			goto nomem;
		for (size_t i = 0; i < n; i++) {
			if (parse_kv(json_object_array_get_idx(kvs, i), &out->kvs[i])) {
				cf_etcd_range_release(out);
				capfence__seterr(err, errlen, "etcd: a malformed key in a range reply");
				ret = -EBADMSG;
				goto out;
			}
			out->n++;
		}
	}
	ret = 0;
	goto out;
nomem:
	ret = -ENOMEM;
	capfence__seterr(err, errlen, "out of memory");
	cf_etcd_range_release(out);
out:
	json_object_put(req);
	json_object_put(resp);
	free(end);
	return ret;
}

static struct json_object *put_req(const char *key, const char *value,
				   int64_t lease)
{
	struct json_object *p = json_object_new_object();

	if (!p || add_b64(p, "key", key, strlen(key)) ||
	    add_b64(p, "value", value, strlen(value))) {
		json_object_put(p);
		return NULL;
	}
	if (lease)
		add_int(p, "lease", lease);
	return p;
}

int cf_etcd_put(struct cf_etcd *e, const char *key, const char *value,
		int64_t lease, int64_t *rev, char *err, size_t errlen)
{
	struct json_object *req = put_req(key, value, lease), *resp = NULL;
	int ret;

	if (!req) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = cf_etcd_call(e, "/v3/kv/put", req, true, &resp, err, errlen);
	if (!ret && rev)
		*rev = header_rev(resp);
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

int cf_etcd_txn(struct cf_etcd *e, const struct cf_etcd_cmp *cmps, size_t ncmp,
		const struct cf_etcd_put *puts, size_t nput, int64_t *rev,
		bool *succeeded, bool *retried, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL, *s;
	struct json_object *cmp = json_object_new_array(), *succ = json_object_new_array();
	int ret = -ENOMEM;
	size_t i;

	*succeeded = false;
	*retried = false;
	*rev = 0;
	if (!req || !cmp || !succ) {
		json_object_put(cmp);
		json_object_put(succ);
		goto nomem;
	}
	json_object_object_add(req, "compare", cmp);
	json_object_object_add(req, "success", succ);
	for (i = 0; i < nput; i++) {
		struct json_object *op = json_object_new_object(), *put;

		if (puts[i].del) {
			put = json_object_new_object();
			if (put && add_b64(put, "key", puts[i].key, strlen(puts[i].key))) {
				json_object_put(put);
				put = NULL;
			}
		} else {
			put = put_req(puts[i].key, puts[i].value, 0);
		}
		if (!op || !put) {
			json_object_put(op);
			json_object_put(put);
			goto nomem;
		}
		json_object_object_add(op, puts[i].del ? "request_delete_range" : "request_put", put);
		json_object_array_add(succ, op);
	}
	for (i = 0; i < ncmp; i++) {
		struct json_object *c = json_object_new_object();

		if (!c || add_b64(c, "key", cmps[i].key, strlen(cmps[i].key))) {
			json_object_put(c);
			goto nomem;
		}
		json_object_array_add(cmp, c);
		switch (cmps[i].kind) {
		case CF_ETCD_ABSENT:
		case CF_ETCD_PRESENT:
			json_object_object_add(c, "target", json_object_new_string("CREATE"));
			json_object_object_add(c, "result", json_object_new_string(
				cmps[i].kind == CF_ETCD_ABSENT ? "EQUAL" : "GREATER"));
			add_int(c, "create_revision", 0);
			break;
		case CF_ETCD_MOD_REV:
			json_object_object_add(c, "target", json_object_new_string("MOD"));
			json_object_object_add(c, "result", json_object_new_string("EQUAL"));
			add_int(c, "mod_revision", cmps[i].mod_rev);
			break;
		case CF_ETCD_VALUE:
		case CF_ETCD_NOT_VALUE:
			json_object_object_add(c, "target", json_object_new_string("VALUE"));
			json_object_object_add(c, "result", json_object_new_string(
				cmps[i].kind == CF_ETCD_VALUE ? "EQUAL" : "NOT_EQUAL"));
			if (add_b64(c, "value", cmps[i].value, strlen(cmps[i].value)))
				goto nomem;
			break;
		}
	}
	/*
	 * Retried on the next endpoint even after a server took it (a member
	 * without a leader holds requests until the timeout): the guards make
	 * a second application fail, and *retried tells the caller to look.
	 */
	ret = call(e, "/v3/kv/txn", req, true, &resp, retried, err, errlen);
	if (!ret) {
		*rev = header_rev(resp);
		*succeeded = json_object_object_get_ex(resp, "succeeded", &s) &&
			     json_object_get_boolean(s);
	}
	goto out;
nomem:
	ret = -ENOMEM;
	capfence__seterr(err, errlen, "out of memory");
out:
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

int cf_etcd_txn_put(struct cf_etcd *e, const struct cf_etcd_cmp *cmps,
		    size_t ncmp, const char *key, const char *value,
		    int64_t *rev, bool *succeeded, bool *retried, char *err,
		    size_t errlen)
{
	struct cf_etcd_put p = { .key = key, .value = value };

	return cf_etcd_txn(e, cmps, ncmp, &p, 1, rev, succeeded, retried, err, errlen);
}

int cf_etcd_lease_grant(struct cf_etcd *e, int64_t ttl_s, int64_t *id,
			char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL;
	int ret;

	if (!req) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_object_object_add(req, "TTL", json_object_new_int64(ttl_s));
	ret = cf_etcd_call(e, "/v3/lease/grant", req, true, &resp, err, errlen);
	if (!ret) {
		*id = cf_etcd_int(resp, "ID");
		if (!*id) {
			capfence__seterr(err, errlen, "etcd granted no lease");
			ret = -EIO;
		}
	}
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

int cf_etcd_lease_keepalive(struct cf_etcd *e, int64_t id, int64_t *ttl,
			    char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL, *r;
	int ret;

	*ttl = 0;
	if (!req) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	add_int(req, "ID", id);
	/* a stream on gRPC; the gateway answers one request and ends */
	ret = cf_etcd_call(e, "/v3/lease/keepalive", req, true, &resp, err, errlen);
	if (!ret && json_object_object_get_ex(resp, "result", &r))
		*ttl = cf_etcd_int(r, "TTL");
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

int cf_etcd_lease_revoke(struct cf_etcd *e, int64_t id, char *err,
			 size_t errlen)
{
	struct json_object *req = json_object_new_object(), *resp = NULL;
	int ret;

	if (!req) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	add_int(req, "ID", id);
	ret = cf_etcd_call(e, "/v3/lease/revoke", req, true, &resp, err, errlen);
	json_object_put(req);
	json_object_put(resp);
	return ret;
}

/* ---- watch --------------------------------------------------------------------------- */

struct watch {
	json_tokener *tok;
	cf_etcd_event_cb cb;
	cf_etcd_stop_cb stop;
	void *arg;
	int ret;		/* set when the stream must end */
	bool done;
	int64_t compact_rev;
	char *err;
	size_t errlen;
};

/* One message of the stream: {"result": {...}} or {"error": ...}. */
static int watch_msg(struct watch *w, struct json_object *o)
{
	struct json_object *res, *evs, *c;
	size_t i, n;

	if (!json_object_object_get_ex(o, "result", &res)) {
		w->ret = etcd_error(o, 200, w->err, w->errlen);
		return -1;
	}
	if (json_object_object_get_ex(res, "canceled", &c) && json_object_get_boolean(c)) {
		w->compact_rev = cf_etcd_int(res, "compact_revision");
		if (w->compact_rev) {
			capfence__seterr(w->err, w->errlen,
					 "etcd: the watch's start revision was compacted (compact revision %lld)",
					 (long long)w->compact_rev);
			w->ret = -ECANCELED;
		} else {
			capfence__seterr(w->err, w->errlen, "etcd canceled the watch");
			w->ret = -ECONNRESET;
		}
		return -1;
	}
	if (!json_object_object_get_ex(res, "events", &evs) ||
	    !json_object_is_type(evs, json_type_array))
		return 0;	/* created, progress */
	n = json_object_array_length(evs);
	for (i = 0; i < n; i++) {
		struct json_object *ev = json_object_array_get_idx(evs, i), *kvo, *t;
		struct cf_etcd_event e = { false, NULL };
		struct cf_etcd_kv kv;
		int r;

		if (!json_object_object_get_ex(ev, "kv", &kvo) || parse_kv(kvo, &kv)) {
			capfence__seterr(w->err, w->errlen, "etcd: a malformed watch event");
			w->ret = -EBADMSG;
			return -1;
		}
		e.deleted = json_object_object_get_ex(ev, "type", &t) &&
			    !strcmp(json_object_get_string(t), "DELETE");
		e.kv = &kv;
		r = w->cb(&e, w->arg);
		kv_release(&kv);
		if (r) {
			w->ret = r;
			return -1;
		}
	}
	return 0;
}

static size_t watch_write(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct watch *w = data;
	size_t len = size * nmemb, off = 0;

	while (off < len) {
		struct json_object *o;
		enum json_tokener_error je;
		size_t used;

		o = json_tokener_parse_ex(w->tok, ptr + off, (int)(len - off));
		je = json_tokener_get_error(w->tok);
		if (je == json_tokener_continue)
			break;	/* the rest of the object is in a later chunk */
		if (!o) {
			capfence__seterr(w->err, w->errlen, "etcd: a malformed watch stream: %s",
					 json_tokener_error_desc(je));
			w->ret = -EBADMSG;
			return 0;
		}
		used = json_tokener_get_parse_end(w->tok);
		off += used ? used : len - off;
		json_tokener_reset(w->tok);
		if (watch_msg(w, o)) {
			json_object_put(o);
			w->done = true;
			return 0;	/* ends the transfer */
		}
		json_object_put(o);
		/* whitespace between messages */
		while (off < len && strchr(" \t\r\n", ptr[off]))
			off++;
	}
	return len;
}

static int watch_progress(void *data, curl_off_t a, curl_off_t b, curl_off_t c,
			  curl_off_t d)
{
	struct watch *w = data;

	(void)a; (void)b; (void)c; (void)d;
	if (w->stop && w->stop(w->arg)) {
		w->done = true;
		w->ret = 0;
		return 1;
	}
	return 0;
}

int cf_etcd_watch(struct cf_etcd *e, const char *prefix, int64_t start_rev,
		  cf_etcd_event_cb cb, cf_etcd_stop_cb stop, void *arg,
		  int64_t *compact_rev, char *err, size_t errlen)
{
	struct json_object *req = json_object_new_object(), *cr = json_object_new_object();
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	struct watch w = { NULL, cb, stop, arg, 0, false, 0, err, errlen };
	char *end = cf_etcd_prefix_end(prefix);
	CURL *c = curl_easy_init();
	char why[CAPFENCE_ERR_MAX] = "";
	const char *body;
	int ret = -ENOMEM;
	size_t tries, first;

	*compact_rev = 0;
	w.tok = json_tokener_new();
	if (!req || !cr || !hdr || !end || !c || !w.tok ||
	    add_b64(cr, "key", prefix, strlen(prefix)) ||
	    add_b64(cr, "range_end", end, strlen(end))) {
		json_object_put(cr);
		capfence__seterr(err, errlen, "out of memory");
		goto out;
	}
	add_int(cr, "start_revision", start_rev);
	json_object_object_add(req, "create_request", cr);
	body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	pthread_mutex_lock(&e->lock);
	first = e->cur;
	if (e->user) {
		char *auth = NULL;

		ret = e->token ? 0 : authenticate_locked(e, err, errlen);
		if (!ret && (asprintf(&auth, "Authorization: %s", e->token) < 0 ||
			     !curl_slist_append(hdr, auth))) {
			capfence__seterr(err, errlen, "out of memory");
			ret = -ENOMEM;
		}
		free(auth);
		if (ret) {
			pthread_mutex_unlock(&e->lock);
			goto out;
		}
		ret = -ENOMEM;
	}
	pthread_mutex_unlock(&e->lock);
	for (tries = 0; tries < e->n; tries++) {
		size_t i = (first + tries) % e->n;
		char url[512], cerr[CURL_ERROR_SIZE] = "";
		long http = 0;
		CURLcode cc;

		snprintf(url, sizeof(url), "%s/v3/watch", e->urls[i]);
		curl_easy_reset(c);
		set_common(e, c, url, hdr, e->connect_ms);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, watch_write);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, watch_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, &w);
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
		json_tokener_reset(w.tok);
		cc = curl_easy_perform(c);
		count_connects(e, c);
		if (w.done) {
			ret = w.ret;
			*compact_rev = w.compact_rev;
			goto out;
		}
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
		if (cc == CURLE_OK) {
			/* the server ended the stream: the caller restarts it */
			capfence__seterr(err, errlen, "etcd: the watch stream ended (%s, HTTP %ld)",
					 e->urls[i], http);
			ret = -ECONNRESET;
			goto out;
		}
		if (http) {	/* it answered, then the stream broke */
			capfence__seterr(err, errlen, "etcd: the watch stream broke (%s: %s)",
					 e->urls[i], cerr[0] ? cerr : curl_easy_strerror(cc));
			ret = -ECONNRESET;
			goto out;
		}
		snprintf(why, sizeof(why), "%.100s: %.120s", e->urls[i],
			 cerr[0] ? cerr : curl_easy_strerror(cc));
	}
	capfence__seterr(err, errlen, "etcd unreachable (%s)", why);
	ret = -EHOSTUNREACH;
out:
	if (ret == -EKEYEXPIRED) {	/* a new token for the next watch */
		pthread_mutex_lock(&e->lock);
		free(e->token);
		e->token = NULL;
		pthread_mutex_unlock(&e->lock);
	}
	if (w.tok)
		json_tokener_free(w.tok);
	if (c)
		curl_easy_cleanup(c);
	curl_slist_free_all(hdr);
	json_object_put(req);
	free(end);
	return ret;
}
