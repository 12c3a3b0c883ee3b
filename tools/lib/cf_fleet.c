// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the fleet schema in etcd, its changes as one transaction
 * each, host reports, and applying a change to the local module
 * (cf_fleet.h; docs/design.md, "Fleet").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sodium.h>
#include "cf_internal.h"
#include "cf_fleet.h"

static const struct {
	const char *name;	/* the value's "kind" */
	const char *dir;	/* the key's directory under <prefix>fleet/ */
	const char *field;	/* the id's field */
} kinds[] = {
	[CF_FLEET_NONE]			= { "?", NULL, NULL },
	[CF_FLEET_EPOCH_INSTALL]	= { "epoch_install", "epoch", "epoch" },
	[CF_FLEET_EPOCH_ACTIVATE]	= { "epoch_activate", "activate", "epoch" },
	[CF_FLEET_KEY_ADD]		= { "key_add", "key", "key_id" },
	[CF_FLEET_KEY_REMOVE]		= { "key_remove", "unkey", "key_id" },
	[CF_FLEET_REVOKE]		= { "revoke", "revoke", "cap_id" },
};

#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

const char *cf_fleet_kind_name(enum cf_fleet_kind kind)
{
	return (size_t)kind < NKINDS ? kinds[kind].name : "?";
}

int cf_fleet_check_prefix(const char *p, char *err, size_t errlen)
{
	size_t l = p ? strlen(p) : 0;

	if (l < 1 || p[0] != '/' || p[l - 1] != '/' || l > CF_FLEET_PREFIX_MAX ||
	    strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-") != l ||
	    strstr(p, "//")) {
		capfence__seterr(err, errlen,
				 "bad fleet prefix '%.60s': expected /NAME/.../ (letters, digits, '.', '_', '-'; at most %d bytes)",
				 p ? p : "", CF_FLEET_PREFIX_MAX);
		return -EINVAL;
	}
	return 0;
}

int cf_fleet_check_host(const char *n, char *err, size_t errlen)
{
	size_t l = n ? strlen(n) : 0;

	if (l < 1 || l > CF_FLEET_HOST_MAX || n[0] == '.' ||
	    strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != l) {
		capfence__seterr(err, errlen,
				 "bad host name '%.60s': expected 1-%d letters, digits, '.', '_' or '-'",
				 n ? n : "", CF_FLEET_HOST_MAX);
		return -EINVAL;
	}
	return 0;
}

/* ---- encoding -------------------------------------------------------------------- */

#define B64V		sodium_base64_VARIANT_ORIGINAL
#define DOMAIN_LINK	"capfence-link-v1\n"

static int unb64(const char *b64, unsigned char *out, size_t want);

void cf_fleet_link(const char *key, const char *value, unsigned char out[CF_FLEET_HASH_LEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, CF_FLEET_HASH_LEN);
	crypto_generichash_update(&st, (const unsigned char *)DOMAIN_LINK, strlen(DOMAIN_LINK));
	crypto_generichash_update(&st, (const unsigned char *)key, strlen(key));
	crypto_generichash_update(&st, (const unsigned char *)"\n", 1);
	crypto_generichash_update(&st, (const unsigned char *)value, strlen(value));
	crypto_generichash_final(&st, out, CF_FLEET_HASH_LEN);
}

static void add_u64(struct json_object *o, const char *name, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	json_object_object_add(o, name, json_object_new_string(b));
}

/* A canonical decimal u64 (no sign, no leading zero, no overflow). */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int get_u64(struct json_object *o, const char *name, uint64_t *v)
{
	struct json_object *f;

	if (!json_object_object_get_ex(o, name, &f) ||
	    !json_object_is_type(f, json_type_string))
		return -EINVAL;
	return parse_u64(json_object_get_string(f), v);
}

/* An epoch's "rules": every class's rule as the CLI writes it, in id order. */
static struct json_object *rules_json(const struct capfence_epoch *e)
{
	struct json_object *rules = json_object_new_array();
	char rule[CAPFENCE_RULE_TEXT_MAX];
	int cls;

	for (cls = 1; rules && cls <= CAPFENCE_CLASS_MAX; cls++) {
		if (capfence_rule_format(&e->rules[cls], rule, sizeof(rule)) < 0) {
			json_object_put(rules);
			return NULL;
		}
		json_object_array_add(rules, json_object_new_string(rule));
	}
	return rules;
}

/*
 * Epoch id's rules from a "rules" array (NULL: absent) into a new *out
 * (malloc'd). -EBADMSG with the reason in msg, -ENOMEM.
 */
static int rules_parse(struct json_object *rules, uint64_t id, struct capfence_epoch **out,
		       char *msg, size_t msglen)
{
	const char *r[CAPFENCE_CLASS_MAX];
	size_t i, n;

	*out = NULL;
	if (!rules || !json_object_is_type(rules, json_type_array) ||
	    (n = json_object_array_length(rules)) > CAPFENCE_CLASS_MAX) {
		snprintf(msg, msglen, "\"rules\" is missing or too long");
		return -EBADMSG;
	}
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(rules, i);

		if (!json_object_is_type(x, json_type_string)) {
			snprintf(msg, msglen, "rule %zu is not a string", i + 1);
			return -EBADMSG;
		}
		r[i] = json_object_get_string(x);
	}
	*out = malloc(sizeof(**out));
	if (!*out) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	if (capfence_epoch_parse_rules(*out, id, r, n, msg, msglen)) {
		free(*out);
		*out = NULL;
		return -EBADMSG;
	}
	return 0;
}

int cf_fleet_encode(const char *prefix, const struct cf_fleet_change *ch,
		    char **key, char **value, char *err, size_t errlen)
{
	struct json_object *o, *rules;

	*key = *value = NULL;
	if (ch->kind <= CF_FLEET_NONE || (size_t)ch->kind >= NKINDS || !ch->id) {
		capfence__seterr(err, errlen, "not a fleet change");
		return -EINVAL;
	}
	if (ch->kind == CF_FLEET_EPOCH_INSTALL && (!ch->epoch || ch->epoch->epoch_id != ch->id)) {
		capfence__seterr(err, errlen, "the epoch's id is not the change's");
		return -EINVAL;
	}
	if ((ch->kind == CF_FLEET_KEY_ADD || ch->kind == CF_FLEET_KEY_REMOVE) &&
	    ch->id > UINT32_MAX) {
		capfence__seterr(err, errlen, "key id %" PRIu64 " is out of range", ch->id);
		return -EINVAL;
	}
	o = json_object_new_object();
	if (!o)
		goto nomem;
	json_object_object_add(o, "kind", json_object_new_string(kinds[ch->kind].name));
	add_u64(o, kinds[ch->kind].field, ch->id);
	if (ch->kind == CF_FLEET_EPOCH_INSTALL) {
		rules = rules_json(ch->epoch);
		if (!rules) {
			json_object_put(o);
			capfence__seterr(err, errlen, "epoch %" PRIu64 ": a rule cannot be printed", ch->id);
			return -EINVAL;
		}
		json_object_object_add(o, "rules", rules);
	}
	if (ch->seq) {
		char b64[sodium_base64_ENCODED_LEN(CF_FLEET_HASH_LEN, B64V)];

		add_u64(o, "seq", ch->seq);
		sodium_bin2base64(b64, sizeof(b64), ch->prev, CF_FLEET_HASH_LEN, B64V);
		json_object_object_add(o, "prev", json_object_new_string(b64));
	}
	*value = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	if (asprintf(key, "%sfleet/%s/%" PRIu64, prefix, kinds[ch->kind].dir, ch->id) < 0)
		*key = NULL;
	json_object_put(o);
	if (*key && *value)
		return 0;
	free(*key);
	free(*value);
	*key = *value = NULL;
	o = NULL;
nomem:
	json_object_put(o);
	capfence__seterr(err, errlen, "out of memory");
	return -ENOMEM;
}

int cf_fleet_decode(const char *prefix, const char *key, const char *value,
		    struct cf_fleet_change *ch, char *err, size_t errlen)
{
	size_t pl = strlen(prefix);
	struct json_object *o = NULL, *f, *rules;
	const char *rel, *slash, *kname;
	char dir[16];
	uint64_t kid, vid;
	size_t k;
	int ret = -EBADMSG;

	memset(ch, 0, sizeof(*ch));
	if (strncmp(key, prefix, pl) || strncmp(key + pl, "fleet/", 6)) {
		capfence__seterr(err, errlen, "key '%.80s' is not under %sfleet/", key, prefix);
		return -EBADMSG;
	}
	rel = key + pl + 6;
	slash = strchr(rel, '/');
	if (!slash || (size_t)(slash - rel) >= sizeof(dir) ||
	    parse_u64(slash + 1, &kid) || !kid) {
		capfence__seterr(err, errlen, "key '%.80s' is not a fleet change (<prefix>fleet/KIND/ID)", key);
		return -EBADMSG;
	}
	memcpy(dir, rel, (size_t)(slash - rel));
	dir[slash - rel] = '\0';
	o = json_tokener_parse(value);
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "kind", &f) ||
	    !json_object_is_type(f, json_type_string)) {
		capfence__seterr(err, errlen, "%.80s: the value is not a fleet change (no \"kind\")", key);
		goto out;
	}
	kname = json_object_get_string(f);
	for (k = 1; k < NKINDS; k++)
		if (!strcmp(kinds[k].name, kname))
			break;
	if (k == NKINDS) {
		capfence__seterr(err, errlen, "%.80s: unknown change kind '%.40s'", key, kname);
		goto out;
	}
	if (strcmp(kinds[k].dir, dir)) {
		capfence__seterr(err, errlen, "%.80s: a %s change under %s/", key, kname, dir);
		goto out;
	}
	if (get_u64(o, kinds[k].field, &vid) || vid != kid) {
		capfence__seterr(err, errlen, "%.80s: \"%s\" is missing or not the key's id", key,
				 kinds[k].field);
		goto out;
	}
	if ((k == CF_FLEET_KEY_ADD || k == CF_FLEET_KEY_REMOVE) && kid > UINT32_MAX) {
		capfence__seterr(err, errlen, "%.80s: key id out of range", key);
		goto out;
	}
	ch->kind = (enum cf_fleet_kind)k;
	ch->id = kid;
	if (json_object_object_get_ex(o, "seq", &f)) {
		struct json_object *pv;

		if (get_u64(o, "seq", &ch->seq) || !ch->seq ||
		    !json_object_object_get_ex(o, "prev", &pv) ||
		    !json_object_is_type(pv, json_type_string) ||
		    unb64(json_object_get_string(pv), ch->prev, CF_FLEET_HASH_LEN)) {
			capfence__seterr(err, errlen, "%.80s: \"seq\" or \"prev\" is malformed", key);
			goto out;
		}
	}
	cf_fleet_link(key, value, ch->link);
	if (k == CF_FLEET_EPOCH_INSTALL) {
		char msg[CAPFENCE_ERR_MAX];

		if (!json_object_object_get_ex(o, "rules", &rules))
			rules = NULL;
		ret = rules_parse(rules, kid, &ch->epoch, msg, sizeof(msg));
		if (ret == -ENOMEM)
			capfence__seterr(err, errlen, "out of memory");
		else if (ret)
			capfence__seterr(err, errlen, "%.80s: %s", key, msg);
		if (ret)
			goto out;
	}
	ret = 0;
out:
	if (ret) {
		free(ch->epoch);
		memset(ch, 0, sizeof(*ch));
	}
	json_object_put(o);
	return ret;
}

void cf_fleet_change_release(struct cf_fleet_change *ch)
{
	free(ch->epoch);
	ch->epoch = NULL;
}

void cf_fleet_changes_free(struct cf_fleet_change *chs, size_t n)
{
	size_t i;

	for (i = 0; chs && i < n; i++)
		cf_fleet_change_release(&chs[i]);
	free(chs);
}

/* ---- signatures -------------------------------------------------------------- */

#define DOMAIN_CHANGE	"capfence-fleet-v1\n"
#define DOMAIN_HOST	"capfence-host-v1\n"
#define DOMAIN_HEAD	"capfence-head-v1\n"
#define DOMAIN_SNAPSHOT	"capfence-snapshot-v1\n"

static int read_line(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t l;

	if (!f) {
		int e = errno;

		capfence__seterr(err, errlen, "%.200s: %s", path, strerror(e));
		return -e;
	}
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	l = strcspn(buf, "\r\n");
	buf[l] = '\0';
	return 0;
}

static int unb64(const char *b64, unsigned char *out, size_t want)
{
	size_t got = 0;

	if (sodium_base642bin(out, want, b64, strlen(b64), NULL, &got, NULL, B64V) || got != want)
		return -EINVAL;
	return 0;
}

int cf_fleet_keygen(const char *path, char *pub_b64, size_t publen, char *err, size_t errlen)
{
	unsigned char pk[CF_FLEET_PK_LEN], sk[CF_FLEET_SK_LEN];
	char skb[sodium_base64_ENCODED_LEN(CF_FLEET_SK_LEN, B64V)];
	char pkb[sodium_base64_ENCODED_LEN(CF_FLEET_PK_LEN, B64V)];
	char *pubpath = NULL;
	FILE *f;
	int fd, ret = 0;

	if (sodium_init() < 0) {
		capfence__seterr(err, errlen, "libsodium cannot start");
		return -ENOTRECOVERABLE;
	}
	crypto_sign_keypair(pk, sk);
	sodium_bin2base64(skb, sizeof(skb), sk, sizeof(sk), B64V);
	sodium_bin2base64(pkb, sizeof(pkb), pk, sizeof(pk), B64V);
	sodium_memzero(sk, sizeof(sk));
	if (asprintf(&pubpath, "%s.pub", path) < 0) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "%.200s: %s", path, strerror(errno));
		goto out;
	}
	if (dprintf(fd, "%s\n", skb) < 0 || close(fd)) {
		ret = -EIO;
		capfence__seterr(err, errlen, "%.200s: cannot write", path);
		goto out;
	}
	f = fopen(pubpath, "we");
	if (!f || fprintf(f, "%s\n", pkb) < 0 || fclose(f)) {
		ret = -EIO;
		capfence__seterr(err, errlen, "%.200s: cannot write", pubpath);
		goto out;
	}
	snprintf(pub_b64, publen, "%s", pkb);
out:
	sodium_memzero(skb, sizeof(skb));
	free(pubpath);
	return ret;
}

static int load_sk(const char *path, unsigned char *sk, char *err, size_t errlen)
{
	char line[256];
	int ret;

	if (sodium_init() < 0) {
		capfence__seterr(err, errlen, "libsodium cannot start");
		return -ENOTRECOVERABLE;
	}
	ret = read_line(path, line, sizeof(line), err, errlen);
	if (ret)
		return ret;
	ret = unb64(line, sk, CF_FLEET_SK_LEN);
	sodium_memzero(line, sizeof(line));
	if (ret)
		capfence__seterr(err, errlen, "%.200s: not a signing key (base64 of 64 bytes)", path);
	return ret;
}

int cf_fleet_load_signing_key(struct cf_fleet *f, const char *path, char *err, size_t errlen)
{
	int ret = load_sk(path, f->sk, err, errlen);

	f->have_sk = !ret;
	return ret;
}

int cf_fleet_load_host_key(struct cf_fleet *f, const char *path, char *err, size_t errlen)
{
	int ret = load_sk(path, f->host_sk, err, errlen);

	f->have_host_sk = !ret;
	return ret;
}

int cf_fleet_add_pubkey(struct cf_fleet *f, const char *arg, char *err, size_t errlen)
{
	char line[256];

	if (f->npk >= CF_FLEET_MAX_PUBKEYS) {
		capfence__seterr(err, errlen, "at most %d fleet public keys", CF_FLEET_MAX_PUBKEYS);
		return -E2BIG;
	}
	snprintf(line, sizeof(line), "%s", arg);
	if (unb64(line, f->pk[f->npk], CF_FLEET_PK_LEN)) {
		int ret = read_line(arg, line, sizeof(line), err, errlen);

		if (ret)
			return ret;
		if (unb64(line, f->pk[f->npk], CF_FLEET_PK_LEN)) {
			capfence__seterr(err, errlen, "%.200s: not a fleet public key (base64 of 32 bytes)", arg);
			return -EINVAL;
		}
	}
	f->npk++;
	return 0;
}

static int hostkey_cmp(const void *a, const void *b)
{
	const struct cf_fleet_hostkey *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

int cf_fleet_load_host_keys(struct cf_fleet *f, const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "re");
	char line[512];
	int lineno = 0, ret = 0;

	if (!fp) {
		ret = -errno;
		capfence__seterr(err, errlen, "%.200s: %s", path, strerror(errno));
		return ret;
	}
	size_t cap = 0;

	free(f->hostkeys);
	f->nhostkeys = 0;
	f->hostkeys = NULL;
	while (fgets(line, sizeof(line), fp)) {
		char name[CF_FLEET_HOST_MAX + 2], pk[128];
		struct cf_fleet_hostkey *h;
		int k;

		lineno++;
		line[strcspn(line, "#\r\n")] = '\0';
		k = sscanf(line, "%65s %127s", name, pk);
		if (k <= 0)
			continue;
		if (f->nhostkeys == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			void *p = realloc(f->hostkeys, ncap * sizeof(*f->hostkeys));

			if (!p) {
				capfence__seterr(err, errlen, "out of memory");
				ret = -ENOMEM;
				break;
			}
			f->hostkeys = p;
			cap = ncap;
		}
		h = &f->hostkeys[f->nhostkeys];
		memset(h, 0, sizeof(*h));
		if (k != 2 || cf_fleet_check_host(name, NULL, 0) || unb64(pk, h->pk, CF_FLEET_PK_LEN)) {
			capfence__seterr(err, errlen, "%.200s:%d: expected NAME PUBLIC-KEY (base64 of 32 bytes)",
					 path, lineno);
			ret = -EINVAL;
			break;
		}
		if (f->nhostkeys + 1 >= CF_FLEET_MAX_HOSTKEYS) {
			capfence__seterr(err, errlen, "%.200s: more than %d hosts", path,
					 CF_FLEET_MAX_HOSTKEYS - 1);
			ret = -E2BIG;
			break;
		}
		snprintf(h->name, sizeof(h->name), "%.*s", CF_FLEET_HOST_MAX, name);
		f->nhostkeys++;
	}
	fclose(fp);
	if (!ret && !f->nhostkeys) {
		capfence__seterr(err, errlen, "%.200s: no host listed", path);
		ret = -EINVAL;
	}
	/* by name, a name listed twice by its first line: found by bisection */
	if (!ret) {
		size_t i;

		for (i = 0; i < f->nhostkeys; i++)
			f->hostkeys[i].line = i;
		qsort(f->hostkeys, f->nhostkeys, sizeof(*f->hostkeys), hostkey_cmp);
	}
	return ret;
}

/* The message a signature covers; *o the value parsed, "sig" taken out. */
static char *signed_message(const char *domain, const char *key, const char *value,
			    struct json_object **o, char *sig_b64, size_t siglen)
{
	struct json_object *sg;
	char *msg;

	*o = json_tokener_parse(value);
	if (!*o || !json_object_is_type(*o, json_type_object))
		return NULL;
	if (sig_b64)
		sig_b64[0] = '\0';
	if (json_object_object_get_ex(*o, "sig", &sg)) {
		if (sig_b64 && json_object_is_type(sg, json_type_string))
			snprintf(sig_b64, siglen, "%s", json_object_get_string(sg));
		json_object_object_del(*o, "sig");
	}
	if (asprintf(&msg, "%s%s\n%s", domain, key,
		     json_object_to_json_string_ext(*o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		return NULL;
	return msg;
}

/* Replace *value by its signed form. */
static int sign_value(const char *domain, const unsigned char *sk, const char *key,
		      char **value)
{
	unsigned char sig[crypto_sign_BYTES];
	char b64[sodium_base64_ENCODED_LEN(crypto_sign_BYTES, B64V)];
	struct json_object *o = NULL;
	char *msg = signed_message(domain, key, *value, &o, NULL, 0), *out;

	if (!msg) {
		json_object_put(o);
		return -ENOMEM;
	}
	crypto_sign_detached(sig, NULL, (const unsigned char *)msg, strlen(msg), sk);
	free(msg);
	sodium_bin2base64(b64, sizeof(b64), sig, sizeof(sig), B64V);
	json_object_object_add(o, "sig", json_object_new_string(b64));
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (!out)
		return -ENOMEM;
	free(*value);
	*value = out;
	return 0;
}

/* 0 when value at key carries a signature one of pks made; -EPERM else. */
static int verify_value(const char *domain, const unsigned char (*pks)[CF_FLEET_PK_LEN],
			size_t npk, const char *key, const char *value, const char *what,
			char *err, size_t errlen)
{
	unsigned char sig[crypto_sign_BYTES];
	struct json_object *o = NULL;
	char b64[256];
	char *msg = signed_message(domain, key, value, &o, b64, sizeof(b64));
	size_t i;
	int ret = -EPERM;

	json_object_put(o);
	if (!msg) {
		capfence__seterr(err, errlen, "%.80s: the value is not a JSON object", key);
		return -EBADMSG;
	}
	if (sodium_init() < 0) {
		free(msg);
		capfence__seterr(err, errlen, "libsodium cannot start");
		return -ENOTRECOVERABLE;
	}
	if (!b64[0]) {
		capfence__seterr(err, errlen, "%.80s: unsigned %s refused", key, what);
	} else if (unb64(b64, sig, sizeof(sig))) {
		capfence__seterr(err, errlen, "%.80s: bad signature on the %s (not base64 of %d bytes)",
				 key, what, crypto_sign_BYTES);
	} else {
		for (i = 0; i < npk && ret; i++)
			if (!crypto_sign_verify_detached(sig, (const unsigned char *)msg, strlen(msg), pks[i]))
				ret = 0;
		if (ret)
			capfence__seterr(err, errlen, "%.80s: bad signature on the %s (no pinned key made it)",
					 key, what);
	}
	free(msg);
	return ret;
}

int cf_fleet_decode_verified(struct cf_fleet *f, const char *key, const char *value,
			     struct cf_fleet_change *ch, char *err, size_t errlen)
{
	if (f->npk) {
		int ret = verify_value(DOMAIN_CHANGE, (const unsigned char (*)[CF_FLEET_PK_LEN])f->pk,
				       f->npk, key, value, "change", err, errlen);

		if (ret) {
			memset(ch, 0, sizeof(*ch));
			return ret;
		}
	}
	return cf_fleet_decode(f->prefix, key, value, ch, err, errlen);
}

/* ---- the store ------------------------------------------------------------------- */

int cf_fleet_open(struct cf_fleet **out, const char *endpoints,
		  const char *prefix, char *err, size_t errlen)
{
	struct cf_fleet *f;
	int ret;

	*out = NULL;
	if (!prefix)
		prefix = CF_FLEET_PREFIX;
	ret = cf_fleet_check_prefix(prefix, err, errlen);
	if (ret)
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = cf_etcd_open(&f->etcd, endpoints, err, errlen);
	if (ret) {
		free(f);
		return ret;
	}
	snprintf(f->prefix, sizeof(f->prefix), "%s", prefix);
	snprintf(f->fleet, sizeof(f->fleet), "%sfleet/", prefix);
	snprintf(f->hosts, sizeof(f->hosts), "%shosts/", prefix);
	snprintf(f->head, sizeof(f->head), "%shead", prefix);
	snprintf(f->snapshot, sizeof(f->snapshot), "%ssnapshot", prefix);
	f->snapshot_max = CF_FLEET_SNAPSHOT_MAX;
	*out = f;
	return 0;
}

void cf_fleet_close(struct cf_fleet *f)
{
	if (!f)
		return;
	cf_etcd_close(f->etcd);
	free(f->hostkeys);
	free(f->hw_path);
	sodium_memzero(f->sk, sizeof(f->sk));
	sodium_memzero(f->host_sk, sizeof(f->host_sk));
	free(f);
}

/* The fleet's current value at key, or NULL (absent); *err_ret on failure. */
static char *get_value(struct cf_fleet *f, const char *key, int *err_ret,
		       char *err, size_t errlen)
{
	struct cf_etcd_range_opts o = { 0 };
	struct cf_etcd_range r;
	char *v = NULL;

	*err_ret = cf_etcd_range(f->etcd, key, &o, &r, err, errlen);
	if (*err_ret)
		return NULL;
	if (r.n)
		v = strdup(r.kvs[0].value);
	cf_etcd_range_release(&r);
	return v;
}

static char *key_of(struct cf_fleet *f, enum cf_fleet_kind kind, uint64_t id)
{
	char *k;

	return asprintf(&k, "%s%s/%" PRIu64, f->fleet, kinds[kind].dir, id) < 0 ? NULL : k;
}

/* The keys a head must verify under: the pinned ones and our own. */
static size_t trusted_keys(const struct cf_fleet *f,
			   unsigned char (*pks)[CF_FLEET_PK_LEN])
{
	size_t n = f->npk;

	memcpy(pks, f->pk, n * CF_FLEET_PK_LEN);
	if (f->have_sk)
		crypto_sign_ed25519_sk_to_pk(pks[n++], f->sk);
	return n;
}

/* The head as of revision at (0: now). */
static int head_read(struct cf_fleet *f, struct cf_fleet_head *h, int64_t at, uint64_t *store_rev,
		     char *err, size_t errlen)
{
	unsigned char pks[CF_FLEET_MAX_PUBKEYS + 1][CF_FLEET_PK_LEN];
	struct cf_etcd_range_opts o = { .revision = at };
	struct json_object *v = NULL, *t, *hb;
	struct cf_etcd_range r;
	size_t npk = trusted_keys(f, pks);
	int ret;

	memset(h, 0, sizeof(*h));
	if (store_rev)
		*store_rev = 0;
	ret = cf_etcd_range(f->etcd, f->head, &o, &r, err, errlen);
	if (ret)
		return ret;
	if (store_rev)
		*store_rev = (uint64_t)r.rev;
	if (!r.n) {
		cf_etcd_range_release(&r);
		capfence__seterr(err, errlen, "%s: the fleet has no head (start `capfence fleet head --every MS`)",
				 f->head);
		return -ENOENT;
	}
	ret = npk ? verify_value(DOMAIN_HEAD, (const unsigned char (*)[CF_FLEET_PK_LEN])pks, npk,
				 f->head, r.kvs[0].value, "head", err, errlen) : 0;
	if (!npk) {
		capfence__seterr(err, errlen, "no key to verify the head with");
		ret = -EPERM;
	}
	if (ret)
		goto out;
	ret = -EBADMSG;
	v = json_tokener_parse(r.kvs[0].value);
	if (!v || get_u64(v, "seq", &h->seq) ||
	    !json_object_object_get_ex(v, "hash", &hb) || !json_object_is_type(hb, json_type_string) ||
	    unb64(json_object_get_string(hb), h->hash, CF_FLEET_HASH_LEN) ||
	    !json_object_object_get_ex(v, "time_ms", &t) || !json_object_is_type(t, json_type_int)) {
		capfence__seterr(err, errlen, "%s: a malformed head", f->head);
		goto out;
	}
	h->time_ms = json_object_get_int64(t);
	h->mod_rev = r.kvs[0].mod_rev;
	ret = 0;
out:
	json_object_put(v);
	cf_etcd_range_release(&r);
	return ret;
}

int cf_fleet_head_get(struct cf_fleet *f, struct cf_fleet_head *h, uint64_t *store_rev,
		      char *err, size_t errlen)
{
	return head_read(f, h, 0, store_rev, err, errlen);
}

int64_t cf_fleet_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The signed value of a head at seq/hash, dated now (malloc'd). */
static char *head_value(struct cf_fleet *f, uint64_t seq, const unsigned char *hash)
{
	char b64[sodium_base64_ENCODED_LEN(CF_FLEET_HASH_LEN, B64V)];
	struct json_object *o = json_object_new_object();
	char *v;

	if (!o)
		return NULL;
	add_u64(o, "seq", seq);
	sodium_bin2base64(b64, sizeof(b64), hash, CF_FLEET_HASH_LEN, B64V);
	json_object_object_add(o, "hash", json_object_new_string(b64));
	json_object_object_add(o, "time_ms", json_object_new_int64(cf_fleet_wall_ms()));
	v = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (v && sign_value(DOMAIN_HEAD, f->sk, f->head, &v)) {
		free(v);
		v = NULL;
	}
	return v;
}

/* ---- the signer's high-water mark ------------------------------------------------ */

int cf_fleet_set_high_water(struct cf_fleet *f, const char *path, bool override,
			    char *err, size_t errlen)
{
	free(f->hw_path);
	f->hw_path = path ? strdup(path) : NULL;
	f->hw_override = override;
	if (path && !f->hw_path) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The mark: 0 (seq 0 when there is none yet), or -errno with err set. */
static int hw_read(struct cf_fleet *f, uint64_t *seq, unsigned char link[CF_FLEET_HASH_LEN],
		   char *err, size_t errlen)
{
	char line[128] = "", b64[80];
	FILE *fp = fopen(f->hw_path, "re");
	int ret;

	*seq = 0;
	memset(link, 0, CF_FLEET_HASH_LEN);
	if (!fp) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		capfence__seterr(err, errlen, "high-water mark %.200s: %s", f->hw_path, strerror(errno));
		return ret;
	}
	if (!fgets(line, sizeof(line), fp))
		line[0] = '\0';
	fclose(fp);
	if (sscanf(line, "%" SCNu64 " %79s", seq, b64) != 2 ||
	    unb64(b64, link, CF_FLEET_HASH_LEN)) {
		capfence__seterr(err, errlen, "high-water mark %.200s: not \"SEQ LINK\"", f->hw_path);
		return -EBADMSG;
	}
	return 0;
}

int cf_fleet_high_water(struct cf_fleet *f, uint64_t *seq, char *err, size_t errlen)
{
	unsigned char link[CF_FLEET_HASH_LEN];

	*seq = 0;
	return f->hw_path ? hw_read(f, seq, link, err, errlen) : 0;
}

/*
 * The mark, read before the store's head is: a commit moves the mark only
 * once the store has its head, so a head read after the mark is never
 * below it but for a rollback. Read after the head, the mark may be
 * another signer's commit made in between (concurrent signers share it).
 */
struct hw_mark {
	bool check;
	uint64_t seq;
	unsigned char link[CF_FLEET_HASH_LEN];
};

static int hw_mark_read(struct cf_fleet *f, struct hw_mark *m, char *err, size_t errlen)
{
	m->check = f->hw_path && !f->hw_override;
	m->seq = 0;
	return m->check ? hw_read(f, &m->seq, m->link, err, errlen) : 0;
}

/* Is the store's head h at or past the mark m, on its chain? -ESTALE if not. */
static int hw_check(struct cf_fleet *f, const struct hw_mark *m, const struct cf_fleet_head *h,
		    char *err, size_t errlen)
{
	if (!m->check)
		return 0;
	if (h->seq > m->seq || (h->seq == m->seq && !memcmp(h->hash, m->link, CF_FLEET_HASH_LEN)))
		return 0;
	capfence__seterr(err, errlen,
			 "the store's head (seq=%" PRIu64 ") is %s this signer's high-water mark seq=%" PRIu64
			 " (%.120s): a store restored from a backup or rolled back, or a path showing an old head; "
			 "nothing signed (--accept-rollback once the fleet's changes since are re-issued)",
			 h->seq, h->seq < m->seq ? "below" : "another link at", m->seq, f->hw_path);
	return -ESTALE;
}

/* Signed at (seq, link): the mark moves up to it (to it, overridden). */
static void hw_note(struct cf_fleet *f, uint64_t seq, const unsigned char *link)
{
	char b64[sodium_base64_ENCODED_LEN(CF_FLEET_HASH_LEN, B64V)], err[CAPFENCE_ERR_MAX];
	unsigned char have_link[CF_FLEET_HASH_LEN];
	uint64_t have = 0;
	char *tmp = NULL;
	FILE *fp;

	if (!f->hw_path || !seq)
		return;
	if (hw_read(f, &have, have_link, err, sizeof(err)) == 0 && seq <= have && !f->hw_override)
		return;
	sodium_bin2base64(b64, sizeof(b64), link, CF_FLEET_HASH_LEN, B64V);
	if (asprintf(&tmp, "%s.tmp%d", f->hw_path, (int)getpid()) < 0)
		return;
	fp = fopen(tmp, "we");
	if (fp) {
		bool ok = fprintf(fp, "%" PRIu64 " %s\n", seq, b64) > 0;

		ok = !fflush(fp) && !fsync(fileno(fp)) && ok;
		if (!fclose(fp) && ok)
			(void)!rename(tmp, f->hw_path);
		else
			unlink(tmp);
	}
	free(tmp);
}

/* ---- the signer's record of its changes ------------------------------------------ */

/* MARK.log: "SEQ KEY_B64 VALUE_B64" a line, one per commit attempt */
static char *record_path(const struct cf_fleet *f)
{
	char *p;

	return asprintf(&p, "%s.log", f->hw_path) < 0 ? NULL : p;
}

static char *b64_of(const char *s)
{
	size_t l = strlen(s), n = sodium_base64_ENCODED_LEN(l, B64V);
	char *b = malloc(n);

	if (b)
		sodium_bin2base64(b, n, (const unsigned char *)s, l, B64V);
	return b;
}

/*
 * Append a change about to be committed, on disk before the store has it:
 * a store restored from a backup can be given back every change the mark
 * covers (cf_fleet_recover()). An attempt that loses a race stays in the
 * file; recovery follows the links down from the mark, so it is ignored.
 */
static int record_append(struct cf_fleet *f, uint64_t seq, const char *key, const char *value,
			 char *err, size_t errlen)
{
	char *path, *kb, *vb, *line = NULL;
	int fd, len, ret = 0;

	if (!f->hw_path)
		return 0;
	path = record_path(f);
	kb = b64_of(key);
	vb = b64_of(value);
	len = path && kb && vb ? asprintf(&line, "%" PRIu64 " %s %s\n", seq, kb, vb) : -1;
	free(kb);
	free(vb);
	if (len < 0) {
		free(path);
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	errno = 0;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line, (size_t)len) != len || fsync(fd)) {
		ret = errno ? -errno : -EIO;
		capfence__seterr(err, errlen, "cannot record the change in %.200s: %s (nothing committed)",
				 path, strerror(-ret));
	}
	if (fd >= 0 && close(fd) && !ret) {
		ret = -errno;
		capfence__seterr(err, errlen, "cannot record the change in %.200s: %s (nothing committed)",
				 path, strerror(-ret));
	}
	free(line);
	free(path);
	return ret;
}

struct record_entry {
	uint64_t seq;
	char *key, *value;
	unsigned char link[CF_FLEET_HASH_LEN];
};

static void record_free(struct record_entry *r, size_t n)
{
	for (size_t i = 0; r && i < n; i++) {
		free(r[i].key);
		free(r[i].value);
	}
	free(r);
}

static char *unb64_str(const char *b64)
{
	size_t l = strlen(b64), got = 0;
	char *s = malloc(l + 1);

	if (!s || sodium_base642bin((unsigned char *)s, l, b64, l, NULL, &got, NULL, B64V)) {
		free(s);
		return NULL;
	}
	s[got] = '\0';
	if (strlen(s) != got) {
		free(s);
		return NULL;
	}
	return s;
}

/* Every line of the record (none: no file). A line that does not parse is skipped. */
static int record_read(struct cf_fleet *f, struct record_entry **out, size_t *n,
		       char *err, size_t errlen)
{
	char *path = record_path(f), *line = NULL;
	struct record_entry *v = NULL;
	size_t cap = 0, len = 0;
	FILE *fp;

	*out = NULL;
	*n = 0;
	if (!path) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fp = fopen(path, "re");
	if (!fp) {
		int e = errno;

		free(path);
		if (e == ENOENT)
			return 0;
		capfence__seterr(err, errlen, "the record %.200s: %s", f->hw_path, strerror(e));
		return -e;
	}
	free(path);
	while (getline(&line, &len, fp) > 0) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		struct record_entry e = { 0 };

		if (!sp1 || !sp2)
			continue;
		*sp1 = *sp2 = '\0';
		sp2[1 + strcspn(sp2 + 1, "\r\n")] = '\0';
		if (parse_u64(line, &e.seq) || !e.seq)
			continue;
		e.key = unb64_str(sp1 + 1);
		e.value = unb64_str(sp2 + 1);
		if (!e.key || !e.value) {
			free(e.key);
			free(e.value);
			continue;
		}
		cf_fleet_link(e.key, e.value, e.link);
		if (*n == cap) {
			struct record_entry *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv) {
				free(e.key);
				free(e.value);
				record_free(v, *n);
				free(line);
				fclose(fp);
				*n = 0;
				capfence__seterr(err, errlen, "out of memory");
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = e;
	}
	free(line);
	fclose(fp);
	*out = v;
	return 0;
}

int cf_fleet_head_renew(struct cf_fleet *f, uint64_t min_seq, struct cf_fleet_head *h,
			char *err, size_t errlen)
{
	int attempt, ret;

	if (!f->have_sk) {
		capfence__seterr(err, errlen, "the head is signed with the fleet signing key (--signing-key)");
		return -EINVAL;
	}
	for (attempt = 0; attempt < 16; attempt++) {
		struct cf_etcd_cmp cmp;
		struct cf_etcd_put put;
		struct hw_mark mark;
		bool ok, retried;
		int64_t r;
		char *v;

		ret = hw_mark_read(f, &mark, err, errlen);
		if (ret)
			return ret;
		ret = cf_fleet_head_get(f, h, NULL, err, errlen);
		if (ret && ret != -ENOENT)
			return ret;
		if (h->seq < min_seq) {
			capfence__seterr(err, errlen,
					 "the store's head is at seq=%" PRIu64 ", below seq=%" PRIu64
					 " signed before: a rollback, not signed", h->seq, min_seq);
			return -ESTALE;
		}
		ret = hw_check(f, &mark, h, err, errlen);
		if (ret)
			return ret;
		v = head_value(f, h->seq, h->hash);
		if (!v) {
			capfence__seterr(err, errlen, "out of memory");
			return -ENOMEM;
		}
		cmp = (struct cf_etcd_cmp){ f->head, CF_ETCD_MOD_REV, NULL, h->mod_rev };
		put = (struct cf_etcd_put){ .key = f->head, .value = v };
		ret = cf_etcd_txn(f->etcd, &cmp, 1, &put, 1, &r, &ok, &retried, err, errlen);
		free(v);
		if (ret)
			return ret;
		if (ok || retried) {	/* retried: ours, or a commit's newer head */
			ret = cf_fleet_head_get(f, h, NULL, err, errlen);
			if (!ret)
				hw_note(f, h->seq, h->hash);
			return ret;
		}
		/* a commit moved the head meanwhile: renew that one */
	}
	capfence__seterr(err, errlen, "the head kept moving under 16 attempts to renew it");
	return -EAGAIN;
}

/* Why a guarded change did not go in: -EEXIST or -ENOENT and the message. */
static int guard_failed(struct cf_fleet *f, const struct cf_fleet_change *ch, const char *needs,
			char *err, size_t errlen)
{
	char *cur;
	int ret;

	switch (ch->kind) {
	case CF_FLEET_EPOCH_INSTALL:
		capfence__seterr(err, errlen, "epoch %" PRIu64 " is already in the fleet", ch->id);
		return -EEXIST;
	case CF_FLEET_KEY_ADD:
		capfence__seterr(err, errlen, "key %" PRIu64 " is already in the fleet", ch->id);
		return -EEXIST;
	case CF_FLEET_REVOKE:
		capfence__seterr(err, errlen, "cap %016" PRIx64 " is already revoked in the fleet", ch->id);
		return -EEXIST;
	case CF_FLEET_EPOCH_ACTIVATE:
	case CF_FLEET_KEY_REMOVE: {
		bool epoch = ch->kind == CF_FLEET_EPOCH_ACTIVATE;

		/* the change needs what it refers to, and must not be done already */
		cur = get_value(f, needs, &ret, err, errlen);
		if (ret)
			return ret;
		free(cur);
		if (!cur) {
			capfence__seterr(err, errlen, "%s %" PRIu64 " is not in the fleet (fleet %s first)",
					 epoch ? "epoch" : "key", ch->id, epoch ? "epoch install" : "key add");
			return -ENOENT;
		}
		capfence__seterr(err, errlen, "%s %" PRIu64 " is already %s the fleet",
				 epoch ? "epoch" : "key", ch->id,
				 epoch ? "activated in" : "removed from");
		return -EEXIST;
	}
	default:
		capfence__seterr(err, errlen, "not a fleet change");
		return -EINVAL;
	}
}

int cf_fleet_commit(struct cf_fleet *f, const struct cf_fleet_change *ch,
		    uint64_t *rev, uint64_t *seq, char *err, size_t errlen)
{
	struct cf_fleet_change c = *ch;
	struct cf_fleet_head h;
	struct hw_mark mark;
	struct cf_etcd_cmp cmp[3];
	struct cf_etcd_put put[2];
	char *key = NULL, *value = NULL, *needs = NULL, *hv = NULL;
	unsigned char link[CF_FLEET_HASH_LEN];
	int attempt, ret;

	*rev = 0;
	if (seq)
		*seq = 0;
	c.seq = 0;
	if (ch->kind == CF_FLEET_EPOCH_ACTIVATE || ch->kind == CF_FLEET_KEY_REMOVE) {
		needs = key_of(f, ch->kind == CF_FLEET_EPOCH_ACTIVATE ? CF_FLEET_EPOCH_INSTALL :
			       CF_FLEET_KEY_ADD, ch->id);
		if (!needs)
			goto nomem;
	}
	for (attempt = 0; attempt < 16; attempt++) {
		size_t ncmp = 0, nput = 1;
		bool ok = false, retried = false;
		int64_t r = 0;

		free(key);
		free(value);
		free(hv);
		key = value = hv = NULL;
		memset(&h, 0, sizeof(h));
		if (f->have_sk) {
			/* chained: after the head the store shows now */
			ret = hw_mark_read(f, &mark, err, errlen);
			if (ret)
				goto out;
			ret = cf_fleet_head_get(f, &h, NULL, err, errlen);
			if (ret && ret != -ENOENT)
				goto out;
			ret = hw_check(f, &mark, &h, err, errlen);
			if (ret)
				goto out;
			c.seq = h.seq + 1;
			memcpy(c.prev, h.hash, sizeof(c.prev));
		}
		ret = cf_fleet_encode(f->prefix, &c, &key, &value, err, errlen);
		if (ret)
			goto out;
		if (f->have_sk) {
			if (sign_value(DOMAIN_CHANGE, f->sk, key, &value))
				goto nomem;
			ret = record_append(f, c.seq, key, value, err, errlen);
			if (ret)
				goto out;
			cf_fleet_link(key, value, link);
			hv = head_value(f, c.seq, link);
			if (!hv)
				goto nomem;
			cmp[ncmp++] = (struct cf_etcd_cmp){ f->head, CF_ETCD_MOD_REV, NULL, h.mod_rev };
			put[nput++] = (struct cf_etcd_put){ .key = f->head, .value = hv };
		}
		put[0] = (struct cf_etcd_put){ .key = key, .value = value };
		if (needs)
			cmp[ncmp++] = (struct cf_etcd_cmp){ needs, CF_ETCD_PRESENT, NULL, 0 };
		cmp[ncmp++] = (struct cf_etcd_cmp){ key, CF_ETCD_ABSENT, NULL, 0 };
		ret = cf_etcd_txn(f->etcd, cmp, ncmp, put, nput, &r, &ok, &retried, err, errlen);
		if (ret)
			goto out;
		if (!ok && retried) {
			/* the guard may have failed on our own first attempt */
			struct cf_etcd_range_opts o = { 0 };
			struct cf_etcd_range rr;

			ret = cf_etcd_range(f->etcd, key, &o, &rr, err, errlen);
			if (ret)
				goto out;
			if (rr.n && !strcmp(rr.kvs[0].value, value)) {
				r = rr.kvs[0].mod_rev;
				ok = true;
			}
			cf_etcd_range_release(&rr);
		}
		if (ok) {
			*rev = (uint64_t)r;
			if (seq)
				*seq = c.seq;
			f->committed_seq = c.seq;
			if (c.seq) {
				memcpy(f->committed_link, link, CF_FLEET_HASH_LEN);
				hw_note(f, c.seq, link);
			}
			ret = 0;
			goto out;
		}
		if (f->have_sk) {
			struct cf_fleet_head now;

			ret = cf_fleet_head_get(f, &now, NULL, err, errlen);
			if (ret && ret != -ENOENT)
				goto out;
			if (now.mod_rev != h.mod_rev)
				continue;	/* another commit (or a renewal) moved the head */
		}
		ret = guard_failed(f, ch, needs, err, errlen);
		goto out;
	}
	ret = -EAGAIN;
	capfence__seterr(err, errlen, "the fleet's head kept moving under 16 attempts to commit");
	goto out;
nomem:
	ret = -ENOMEM;
	capfence__seterr(err, errlen, "out of memory");
out:
	free(key);
	free(value);
	free(needs);
	free(hv);
	return ret;
}

/* ---- recovery of a restored store ------------------------------------------------ */

void cf_fleet_recovery_release(struct cf_fleet_recovery *r)
{
	cf_fleet_changes_free(r->chs, r->n);
	r->chs = NULL;
	r->n = 0;
}

/* Put one recorded change back at its place, the head moved to it. */
static int recommit(struct cf_fleet *f, const struct record_entry *e, const struct cf_fleet_head *h,
		    uint64_t *rev, char *err, size_t errlen)
{
	struct cf_etcd_cmp cmp[2] = {
		{ f->head, CF_ETCD_MOD_REV, NULL, h->mod_rev },
		{ e->key, CF_ETCD_ABSENT, NULL, 0 },
	};
	struct cf_etcd_put put[2];
	bool ok = false, retried = false;
	char *hv = head_value(f, e->seq, e->link), *cur;
	int64_t r = 0;
	int ret;

	if (!hv) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	put[0] = (struct cf_etcd_put){ .key = e->key, .value = e->value };
	put[1] = (struct cf_etcd_put){ .key = f->head, .value = hv };
	ret = cf_etcd_txn(f->etcd, cmp, 2, put, 2, &r, &ok, &retried, err, errlen);
	free(hv);
	if (ret)
		return ret;
	cur = ok ? NULL : get_value(f, e->key, &ret, err, errlen);
	if (ret)
		return ret;
	if (!ok && cur && !strcmp(cur, e->value)) {
		/* ours went in (an answer lost on the way): the caller reads the head */
		free(cur);
		capfence__seterr(err, errlen, "the store's head moved while seq=%" PRIu64
				 " was re-committed (another signer, or the head role running): run it again",
				 e->seq);
		return -EAGAIN;
	}
	if (!ok) {
		if (cur)
			capfence__seterr(err, errlen, "%.120s holds another change than seq=%" PRIu64
					 " of this signer's record (the store was written to since its restore): "
					 "nothing more re-committed", e->key, e->seq);
		else
			capfence__seterr(err, errlen, "the store's head moved while seq=%" PRIu64
					 " was re-committed (another signer, or the head role running): run it again",
					 e->seq);
		free(cur);
		return cur ? -EEXIST : -EAGAIN;
	}
	*rev = (uint64_t)r;
	return 0;
}

int cf_fleet_recover(struct cf_fleet *f, struct cf_fleet_recovery *res, char *err, size_t errlen)
{
	unsigned char pks[CF_FLEET_MAX_PUBKEYS + 1][CF_FLEET_PK_LEN], want[CF_FLEET_HASH_LEN];
	unsigned char mlink[CF_FLEET_HASH_LEN];
	struct record_entry *rec = NULL;
	const struct record_entry **chain = NULL;
	struct cf_fleet_head h;
	size_t nrec = 0, npk, i;
	uint64_t mseq, s;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!f->have_sk || !f->hw_path) {
		capfence__seterr(err, errlen, "recovery re-commits with the fleet signing key (--signing-key) "
				 "from the record beside its high-water mark");
		return -EINVAL;
	}
	ret = hw_read(f, &mseq, mlink, err, errlen);
	if (ret)
		return ret;
	ret = cf_fleet_head_get(f, &h, NULL, err, errlen);
	if (ret && ret != -ENOENT)
		return ret;
	res->mark_seq = mseq;
	res->store_seq = h.seq;
	if (h.seq > mseq || (h.seq == mseq && !memcmp(h.hash, mlink, CF_FLEET_HASH_LEN)))
		return 0;	/* nothing of ours lost */
	if (h.seq == mseq) {
		capfence__seterr(err, errlen, "the store's head at seq=%" PRIu64 " is another change than this "
				 "signer's (a forked store): nothing re-committed", h.seq);
		return -ESTALE;
	}
	ret = record_read(f, &rec, &nrec, err, errlen);
	if (ret)
		return ret;
	chain = calloc(mseq - h.seq, sizeof(*chain));
	if (!chain) {
		record_free(rec, nrec);
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	npk = trusted_keys(f, pks);
	/* down from the mark by the links each change signs */
	memcpy(want, mlink, CF_FLEET_HASH_LEN);
	for (s = mseq; s > h.seq; s--) {
		const struct record_entry *e = NULL;
		struct cf_fleet_change ch = { 0 };

		for (i = nrec; i-- > 0 && !e;)
			if (rec[i].seq == s && !memcmp(rec[i].link, want, CF_FLEET_HASH_LEN))
				e = &rec[i];
		if (!e || verify_value(DOMAIN_CHANGE, (const unsigned char (*)[CF_FLEET_PK_LEN])pks, npk,
				       e->key, e->value, "change", err, errlen) ||
		    cf_fleet_decode(f->prefix, e->key, e->value, &ch, err, errlen) || ch.seq != s) {
			if (e)
				cf_fleet_change_release(&ch);
			res->missing_from = h.seq + 1;
			res->missing_to = s;
			capfence__seterr(err, errlen, "the store lost seq=%" PRIu64 "..%" PRIu64 " (its head is at seq=%"
					 PRIu64 "); this signer's record %.120s.log has no seq=%" PRIu64 "..%" PRIu64
					 ": nothing re-committed (re-issue them by hand, then --accept-rollback)",
					 h.seq + 1, mseq, h.seq, f->hw_path, h.seq + 1, s);
			ret = -ENODATA;
			goto out;
		}
		memcpy(want, ch.prev, CF_FLEET_HASH_LEN);
		cf_fleet_change_release(&ch);
		chain[s - h.seq - 1] = e;
	}
	if (memcmp(want, h.hash, CF_FLEET_HASH_LEN)) {
		capfence__seterr(err, errlen, "the store's change at seq=%" PRIu64 " is not the one this signer's "
				 "seq=%" PRIu64 " follows (a forked store): nothing re-committed", h.seq, h.seq + 1);
		ret = -ESTALE;
		goto out;
	}
	res->chs = calloc(mseq - h.seq, sizeof(*res->chs));
	if (!res->chs) {
		capfence__seterr(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/* one transaction each, as committed: a watch sees one change a revision */
	for (i = 0, s = mseq - h.seq; i < s; i++) {
		const struct record_entry *e = chain[i];
		uint64_t rev = 0;

		ret = recommit(f, e, &h, &rev, err, errlen);
		if (ret == -EAGAIN && !cf_fleet_head_get(f, &h, NULL, err, errlen) &&
		    h.seq == e->seq && !memcmp(h.hash, e->link, CF_FLEET_HASH_LEN)) {
			ret = 0;	/* an answer lost on the way: it went in */
			rev = (uint64_t)h.mod_rev;
		} else if (ret) {
			goto out;
		} else {
			ret = cf_fleet_head_get(f, &h, NULL, err, errlen);
			if (ret)
				goto out;
		}
		cf_fleet_decode(f->prefix, e->key, e->value, &res->chs[i], err, errlen);
		res->chs[i].rev = rev;
		res->n++;
	}
	ret = 0;
out:
	free(chain);
	record_free(rec, nrec);
	return ret;
}

int cf_fleet_latest(struct cf_fleet *f, uint64_t *rev, uint64_t *store_rev,
		    char *err, size_t errlen)
{
	struct cf_etcd_range_opts o = { .limit = 1, .prefix = true, .keys_only = true,
					.sort_mod_desc = true };
	struct cf_etcd_range r;
	int ret;

	*rev = 0;
	ret = cf_etcd_range(f->etcd, f->fleet, &o, &r, err, errlen);
	if (ret)
		return ret;
	if (r.n)
		*rev = (uint64_t)r.kvs[0].mod_rev;
	if (store_rev)
		*store_rev = (uint64_t)r.rev;
	cf_etcd_range_release(&r);
	return 0;
}

/* ---- hosts ----------------------------------------------------------------------- */

char *cf_fleet_host_encode(const struct cf_fleet_host *h)
{
	struct json_object *o = json_object_new_object();
	char *s;

	if (!o)
		return NULL;
	/* the revision first: a reader that takes the first number gets it */
	add_u64(o, "applied", h->applied);
	json_object_object_add(o, "host", json_object_new_string(h->name));
	json_object_object_add(o, "state", json_object_new_string(h->state));
	json_object_object_add(o, "stale_ms", json_object_new_int64(h->stale_ms));
	json_object_object_add(o, "deny_ms", json_object_new_int64(h->deny_ms));
	json_object_object_add(o, "time_ms", json_object_new_int64(h->time_ms));
	if (h->seq) {
		char b64[sodium_base64_ENCODED_LEN(CF_FLEET_HASH_LEN, B64V)];

		add_u64(o, "seq", h->seq);
		sodium_bin2base64(b64, sizeof(b64), h->link, CF_FLEET_HASH_LEN, B64V);
		json_object_object_add(o, "link", json_object_new_string(b64));
	}
	if (h->failing[0])
		json_object_object_add(o, "failing", json_object_new_string(h->failing));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

int cf_fleet_host_decode(const char *value, struct cf_fleet_host *h, char *err,
			 size_t errlen)
{
	struct json_object *o = json_tokener_parse(value), *f;
	int ret = -EBADMSG;

	memset(h, 0, sizeof(*h));
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "host", &f) ||
	    !json_object_is_type(f, json_type_string) ||
	    cf_fleet_check_host(json_object_get_string(f), NULL, 0) ||
	    get_u64(o, "applied", &h->applied)) {
		capfence__seterr(err, errlen, "malformed report (not JSON with \"host\" and \"applied\")");
		goto out;
	}
	snprintf(h->name, sizeof(h->name), "%s", json_object_get_string(f));
	if (json_object_object_get_ex(o, "state", &f) && json_object_is_type(f, json_type_string))
		snprintf(h->state, sizeof(h->state), "%s", json_object_get_string(f));
	if (json_object_object_get_ex(o, "stale_ms", &f))
		h->stale_ms = (uint32_t)json_object_get_int64(f);
	if (json_object_object_get_ex(o, "deny_ms", &f))
		h->deny_ms = (uint32_t)json_object_get_int64(f);
	if (json_object_object_get_ex(o, "time_ms", &f))
		h->time_ms = json_object_get_int64(f);
	if (json_object_object_get_ex(o, "failing", &f) && json_object_is_type(f, json_type_string))
		snprintf(h->failing, sizeof(h->failing), "%s", json_object_get_string(f));
	if (json_object_object_get_ex(o, "seq", &f) && get_u64(o, "seq", &h->seq)) {
		capfence__seterr(err, errlen, "malformed report (\"seq\" is not a number)");
		goto out;
	}
	if (json_object_object_get_ex(o, "link", &f) &&
	    (!json_object_is_type(f, json_type_string) ||
	     unb64(json_object_get_string(f), h->link, CF_FLEET_HASH_LEN))) {
		capfence__seterr(err, errlen, "malformed report (\"link\" is not a link hash)");
		goto out;
	}
	h->have_link = json_object_object_get_ex(o, "link", &f);
	ret = 0;
out:
	json_object_put(o);
	return ret;
}

int cf_fleet_report(struct cf_fleet *f, const struct cf_fleet_host *h,
		    int64_t lease, char *err, size_t errlen)
{
	char *key = NULL, *value = cf_fleet_host_encode(h);
	int ret;

	if (!value || asprintf(&key, "%s%s", f->hosts, h->name) < 0 ||
	    (f->have_host_sk && sign_value(DOMAIN_HOST, f->host_sk, key, &value))) {
		free(value);
		free(key);
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = cf_etcd_put(f->etcd, key, value, lease, NULL, err, errlen);
	free(key);
	free(value);
	return ret;
}

/* ---- report pacing ---------------------------------------------------------------- */

/* Do two reports say the same, their time aside? */
static bool same_report(const struct cf_fleet_host *a, const struct cf_fleet_host *b)
{
	return a->applied == b->applied && a->seq == b->seq &&
	       !memcmp(a->link, b->link, CF_FLEET_HASH_LEN) && a->stale_ms == b->stale_ms &&
	       a->deny_ms == b->deny_ms && !strcmp(a->name, b->name) &&
	       !strcmp(a->state, b->state) && !strcmp(a->failing, b->failing);
}

bool cf_fleet_report_due(const struct cf_fleet_pacer *p, const struct cf_fleet_host *h,
			 int64_t now_ms)
{
	if (!p->have || !p->every_ms || !same_report(&p->last, h))
		return true;
	return now_ms - p->last_ms >= (int64_t)p->every_ms || now_ms < p->last_ms;
}

void cf_fleet_report_done(struct cf_fleet_pacer *p, const struct cf_fleet_host *h,
			  int64_t now_ms)
{
	p->have = true;
	p->last = *h;
	p->last_ms = now_ms;
}

void cf_fleet_report_lost(struct cf_fleet_pacer *p)
{
	p->have = false;
}

static const struct cf_fleet_hostkey *find_hostkey(const struct cf_fleet *f, const char *name)
{
	size_t lo = 0, hi = f->nhostkeys;

	/* the first of the names equal to name (hostkeys is sorted) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(f->hostkeys[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nhostkeys && !strcmp(f->hostkeys[lo].name, name) ? &f->hostkeys[lo] : NULL;
}

static int host_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cf_fleet_host *)a)->name,
		      ((const struct cf_fleet_host *)b)->name);
}

int cf_fleet_hosts(struct cf_fleet *f, struct cf_fleet_host **out, size_t *n,
		   char *err, size_t errlen)
{
	struct cf_etcd_range_opts o = { .prefix = true };
	struct cf_etcd_range r;
	bool *seen;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	ret = cf_etcd_range(f->etcd, f->hosts, &o, &r, err, errlen);
	if (ret)
		return ret;
	*out = calloc(r.n + f->nhostkeys + 1, sizeof(**out));
	seen = calloc(f->nhostkeys + 1, 1);
	if (!*out || !seen) {
		free(*out);
		*out = NULL;
		free(seen);
		cf_etcd_range_release(&r);
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < r.n; i++) {
		struct cf_fleet_host *h = &(*out)[(*n)++];
		const char *name = r.kvs[i].key + strlen(f->hosts);
		const struct cf_fleet_hostkey *hk = find_hostkey(f, name);
		char why[160] = "";

		if (hk)
			seen[hk - f->hostkeys] = true;

		if (f->nhostkeys && !hk) {
			snprintf(why, sizeof(why), "not a host of --host-keys");
		} else if (hk && verify_value(DOMAIN_HOST, &hk->pk, 1, r.kvs[i].key, r.kvs[i].value,
					      "report", why, sizeof(why))) {
			/* the message names the key: say it shorter */
			const char *c = strstr(why, ": ");

			if (c)
				memmove(why, c + 2, strlen(c + 2) + 1);
		} else if (!cf_fleet_host_decode(r.kvs[i].value, h, why, sizeof(why)) &&
			   !strcmp(h->name, name)) {
			continue;
		} else if (!why[0]) {
			snprintf(why, sizeof(why), "the report names host '%.64s'", h->name);
		}
		/* listed, never counted as applied: --wait names it */
		memset(h, 0, sizeof(*h));
		h->malformed = true;
		snprintf(h->name, sizeof(h->name), "%.*s", CF_FLEET_HOST_MAX, name);
		snprintf(h->failing, sizeof(h->failing), "%s", why);
	}
	/* a host of --host-keys the store does not show lags: etcd cannot hide it */
	for (i = 0; i < f->nhostkeys; i++) {
		if (seen[i] || (i && !strcmp(f->hostkeys[i - 1].name, f->hostkeys[i].name)))
			continue;	/* reported, or listed twice */
		(*out)[*n].malformed = true;
		snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", f->hostkeys[i].name);
		snprintf((*out)[*n].failing, sizeof((*out)[*n].failing), "no live report");
		(*n)++;
	}
	cf_etcd_range_release(&r);
	free(seen);
	qsort(*out, *n, sizeof(**out), host_cmp);
	return 0;
}

/* ---- snapshots ------------------------------------------------------------------- */

/* Append a state entry of the snapshot (kind and id; an epoch's rules). */
static struct cf_fleet_change *base_entry(struct cf_fleet_change **v, size_t *n, size_t *cap,
					  enum cf_fleet_kind kind, uint64_t id, uint64_t rev)
{
	struct cf_fleet_change *ch;

	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*v, c * sizeof(**v));

		if (!p)
			return NULL;
		*v = p;
		*cap = c;
	}
	ch = &(*v)[(*n)++];
	memset(ch, 0, sizeof(*ch));
	ch->kind = kind;
	ch->id = id;
	ch->rev = rev;
	ch->base = true;
	return ch;
}

/* The ids of a snapshot's array (canonical decimal strings). */
static int base_ids(struct json_object *o, const char *name, enum cf_fleet_kind kind, uint64_t rev,
		    struct cf_fleet_change **v, size_t *n, size_t *cap)
{
	struct json_object *a;
	size_t i;

	if (!json_object_object_get_ex(o, name, &a) || !json_object_is_type(a, json_type_array))
		return -EBADMSG;
	for (i = 0; i < json_object_array_length(a); i++) {
		struct json_object *x = json_object_array_get_idx(a, i);
		uint64_t id;

		if (!json_object_is_type(x, json_type_string) ||
		    parse_u64(json_object_get_string(x), &id) || !id ||
		    (kind == CF_FLEET_KEY_REMOVE && id > UINT32_MAX))
			return -EBADMSG;
		if (!base_entry(v, n, cap, kind, id, rev))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The snapshot at revision at (0: now), verified under the pinned keys
 * and our own when there are any (as changes are): its state appended to
 * *v. b->seq 0: there is none.
 */
static int snapshot_read(struct cf_fleet *f, int64_t at, struct cf_fleet_base *b,
			 struct cf_fleet_change **v, size_t *n, size_t *cap,
			 char *err, size_t errlen)
{
	unsigned char pks[CF_FLEET_MAX_PUBKEYS + 1][CF_FLEET_PK_LEN];
	struct cf_etcd_range_opts o = { .revision = at };
	struct json_object *j = NULL, *x, *t, *eps;
	struct cf_etcd_range r;
	size_t i, npk = trusted_keys(f, pks);
	uint64_t act = 0;
	int ret;

	memset(b, 0, sizeof(*b));
	ret = cf_etcd_range(f->etcd, f->snapshot, &o, &r, err, errlen);
	if (ret)
		return ret;
	if (!r.n)
		goto out;
	if (npk) {
		ret = verify_value(DOMAIN_SNAPSHOT, (const unsigned char (*)[CF_FLEET_PK_LEN])pks, npk,
				   f->snapshot, r.kvs[0].value, "snapshot", err, errlen);
		if (ret)
			goto out;
	}
	ret = -EBADMSG;
	j = json_tokener_parse(r.kvs[0].value);
	if (!j || !json_object_object_get_ex(j, "kind", &x) ||
	    !json_object_is_type(x, json_type_string) || strcmp(json_object_get_string(x), "snapshot") ||
	    get_u64(j, "seq", &b->seq) || !b->seq || get_u64(j, "rev", &b->rev) || !b->rev ||
	    !json_object_object_get_ex(j, "hash", &x) || !json_object_is_type(x, json_type_string) ||
	    unb64(json_object_get_string(x), b->hash, CF_FLEET_HASH_LEN) ||
	    !json_object_object_get_ex(j, "time_ms", &t) || !json_object_is_type(t, json_type_int) ||
	    !json_object_object_get_ex(j, "epochs", &eps) || !json_object_is_type(eps, json_type_array) ||
	    (json_object_object_get_ex(j, "active", &x) && (get_u64(j, "active", &act) || !act)))
		goto bad;
	b->time_ms = json_object_get_int64(t);
	for (i = 0; i < json_object_array_length(eps); i++) {
		struct json_object *e = json_object_array_get_idx(eps, i), *rules;
		char msg[CAPFENCE_ERR_MAX];
		struct cf_fleet_change *ch;
		uint64_t id;

		if (!json_object_is_type(e, json_type_object) || get_u64(e, "epoch", &id) || !id)
			goto bad;
		ch = base_entry(v, n, cap, CF_FLEET_EPOCH_INSTALL, id, b->rev);
		if (!ch)
			goto nomem;
		if (!json_object_object_get_ex(e, "rules", &rules))
			rules = NULL;
		ret = rules_parse(rules, id, &ch->epoch, msg, sizeof(msg));
		if (ret == -ENOMEM)
			goto nomem;
		if (ret) {
			capfence__seterr(err, errlen, "%s: epoch %" PRIu64 ": %s", f->snapshot, id, msg);
			goto out;
		}
		ret = -EBADMSG;
	}
	if (act && !base_entry(v, n, cap, CF_FLEET_EPOCH_ACTIVATE, act, b->rev))
		goto nomem;
	ret = base_ids(j, "keys_removed", CF_FLEET_KEY_REMOVE, b->rev, v, n, cap);
	if (!ret)
		ret = base_ids(j, "revoked", CF_FLEET_REVOKE, b->rev, v, n, cap);
	if (ret == -ENOMEM)
		goto nomem;
	if (ret)
		goto bad;
	b->mod_rev = r.kvs[0].mod_rev;
	b->bytes = r.kvs[0].value_len;
	goto out;
nomem:
	ret = -ENOMEM;
	capfence__seterr(err, errlen, "out of memory");
	goto out;
bad:
	ret = -EBADMSG;
	capfence__seterr(err, errlen, "%s: a malformed snapshot", f->snapshot);
out:
	if (ret)
		memset(b, 0, sizeof(*b));
	json_object_put(j);
	cf_etcd_range_release(&r);
	return ret;
}

int cf_fleet_base_get(struct cf_fleet *f, struct cf_fleet_base *b, char *err, size_t errlen)
{
	struct cf_fleet_change *v = NULL;
	size_t n = 0, cap = 0;
	int ret = snapshot_read(f, 0, b, &v, &n, &cap, err, errlen);

	cf_fleet_changes_free(v, n);
	return ret;
}

int cf_fleet_snapshot(struct cf_fleet *f, uint64_t at,
		      struct cf_fleet_change **out, size_t *n, uint64_t *rev,
		      struct cf_fleet_base *base, char *err, size_t errlen)
{
	struct cf_etcd_range_opts o = { .revision = (int64_t)at, .prefix = true,
					.sort_mod_asc = true };
	struct cf_fleet_base b;
	struct cf_etcd_range r;
	size_t i, cap = 0;
	int ret;

	*out = NULL;
	*n = 0;
	if (base)
		memset(base, 0, sizeof(*base));
	ret = cf_etcd_range(f->etcd, f->fleet, &o, &r, err, errlen);
	if (ret)
		return ret;
	*rev = (uint64_t)r.rev;
	/* the snapshot as of the same revision (the header's is the store's now) */
	ret = snapshot_read(f, at ? (int64_t)at : r.rev, &b, out, n, &cap, err, errlen);
	if (!ret && *n + r.n + 1 > cap) {
		void *p = realloc(*out, (*n + r.n + 1) * sizeof(**out));

		if (p)
			*out = p;
		else
			ret = -ENOMEM;
		if (!p)
			capfence__seterr(err, errlen, "out of memory");
	}
	for (i = 0; i < r.n && !ret; i++) {
		struct cf_fleet_change *ch = &(*out)[*n];
		char why[CAPFENCE_ERR_MAX];

		if ((uint64_t)r.kvs[i].mod_rev <= b.rev)
			continue;	/* the snapshot stands for it */
		/* a change that does not decode stops the reader: never skipped */
		ret = cf_fleet_decode_verified(f, r.kvs[i].key, r.kvs[i].value, ch, why, sizeof(why));
		if (ret) {
			capfence__seterr(err, errlen, "rev=%" PRId64 ": %s", r.kvs[i].mod_rev, why);
			ret = -EBADMSG;
			break;
		}
		ch->rev = (uint64_t)r.kvs[i].mod_rev;
		(*n)++;
	}
	cf_etcd_range_release(&r);
	if (ret) {
		cf_fleet_changes_free(*out, *n);
		*out = NULL;
		*n = 0;
		return ret;
	}
	if (base)
		*base = b;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The signed snapshot of the state in chs at the chain's seq/hash (malloc'd). */
static char *snapshot_value(struct cf_fleet *f, const struct cf_fleet_change *chs, size_t n,
			    const struct cf_fleet_base *b, struct cf_fleet_compaction *res)
{
	char b64[sodium_base64_ENCODED_LEN(CF_FLEET_HASH_LEN, B64V)];
	struct json_object *o = json_object_new_object();
	struct json_object *eps = json_object_new_array(), *kr = json_object_new_array();
	struct json_object *rv = json_object_new_array();
	uint64_t act = 0, *caps = calloc(n + 1, sizeof(*caps));
	size_t i, ncap = 0;
	char *v = NULL;

	if (!o || !eps || !kr || !rv || !caps) {
		json_object_put(eps);
		json_object_put(kr);
		json_object_put(rv);
		goto out;
	}
	json_object_object_add(o, "kind", json_object_new_string("snapshot"));
	add_u64(o, "seq", b->seq);
	sodium_bin2base64(b64, sizeof(b64), b->hash, CF_FLEET_HASH_LEN, B64V);
	json_object_object_add(o, "hash", json_object_new_string(b64));
	add_u64(o, "rev", b->rev);
	json_object_object_add(o, "time_ms", json_object_new_int64(cf_fleet_wall_ms()));
	json_object_object_add(o, "epochs", eps);
	json_object_object_add(o, "keys_removed", kr);
	json_object_object_add(o, "revoked", rv);
	for (i = 0; i < n; i++) {
		const struct cf_fleet_change *ch = &chs[i];
		struct json_object *e, *rules;
		char id[24];

		snprintf(id, sizeof(id), "%" PRIu64, ch->id);
		switch (ch->kind) {
		case CF_FLEET_EPOCH_INSTALL:
			e = json_object_new_object();
			rules = rules_json(ch->epoch);
			if (!e || !rules) {
				json_object_put(e);
				json_object_put(rules);
				goto out;
			}
			add_u64(e, "epoch", ch->id);
			json_object_object_add(e, "rules", rules);
			json_object_array_add(eps, e);
			res->epochs++;
			break;
		case CF_FLEET_EPOCH_ACTIVATE:
			act = ch->id;
			break;
		case CF_FLEET_KEY_REMOVE:
			json_object_array_add(kr, json_object_new_string(id));
			res->keys_removed++;
			break;
		case CF_FLEET_REVOKE:
			caps[ncap++] = ch->id;
			break;
		default:	/* a key id: the key itself is never in the store */
			break;
		}
	}
	/* a cap id revoked again after a compaction is one revocation */
	qsort(caps, ncap, sizeof(*caps), u64_cmp);
	for (i = 0; i < ncap; i++) {
		char id[24];

		if (i && caps[i] == caps[i - 1])
			continue;
		snprintf(id, sizeof(id), "%" PRIu64, caps[i]);
		json_object_array_add(rv, json_object_new_string(id));
		res->revoked++;
	}
	if (act)
		add_u64(o, "active", act);
	v = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						  JSON_C_TO_STRING_NOSLASHESCAPE));
	if (v && sign_value(DOMAIN_SNAPSHOT, f->sk, f->snapshot, &v)) {
		free(v);
		v = NULL;
	}
out:
	free(caps);
	json_object_put(o);
	return v;
}

#define COMPACT_BATCH	64	/* keys per transaction: 64 guards and 64 deletions (etcd allows 128 each) */

/*
 * Delete the revocation keys below rev, in batches, each key only while
 * its mod revision is the one read: a key revoked again meanwhile (its
 * key written anew, above rev) is never deleted, whoever else deletes
 * at the same time. A batch whose guard fails is read again. *deleted
 * counts the keys this call deleted.
 */
static int compact_log(struct cf_fleet *f, uint64_t rev, uint64_t *deleted,
		       char *err, size_t errlen)
{
	struct cf_etcd_range_opts o = { .prefix = true, .keys_only = true };
	struct cf_etcd_cmp cmp[COMPACT_BATCH];
	struct cf_etcd_put del[COMPACT_BATCH];
	char revokes[sizeof(f->fleet) + 16];
	int pass, ret = 0;

	snprintf(revokes, sizeof(revokes), "%s%s/", f->fleet, kinds[CF_FLEET_REVOKE].dir);
	for (pass = 0; pass < 16; pass++) {
		struct cf_etcd_range r;
		bool again = false;
		size_t i, nd = 0;

		ret = cf_etcd_range(f->etcd, revokes, &o, &r, err, errlen);
		if (ret)
			return ret;
		for (i = 0; i <= r.n && !ret; i++) {
			bool ok, retried;
			int64_t at;

			if (i < r.n && (uint64_t)r.kvs[i].mod_rev < rev) {
				cmp[nd] = (struct cf_etcd_cmp){ r.kvs[i].key, CF_ETCD_MOD_REV, NULL,
								r.kvs[i].mod_rev };
				del[nd++] = (struct cf_etcd_put){ .key = r.kvs[i].key, .del = true };
			}
			if (!nd || (nd < COMPACT_BATCH && i < r.n))
				continue;
			if (f->compact_fail_after && *deleted + nd > f->compact_fail_after) {
				cf_etcd_range_release(&r);
				capfence__seterr(err, errlen, "injected: the store failed a deletion");
				return -EIO;
			}
			ret = cf_etcd_txn(f->etcd, cmp, nd, del, nd, &at, &ok, &retried, err, errlen);
			if (!ret && ok)
				*deleted += nd;
			else if (!ret)
				again = true;	/* a key changed, or this batch went in before a retry */
			nd = 0;
		}
		cf_etcd_range_release(&r);
		if (ret || !again)
			return ret;
	}
	capfence__seterr(err, errlen, "the revocation keys kept changing under 16 passes to delete them");
	return -EAGAIN;
}

int cf_fleet_compact(struct cf_fleet *f, struct cf_fleet_compaction *res,
		     char *err, size_t errlen)
{
	int attempt, ret;

	memset(res, 0, sizeof(*res));
	if (!f->have_sk) {
		capfence__seterr(err, errlen, "a snapshot is signed with the fleet signing key (--signing-key)");
		return -EINVAL;
	}
	for (attempt = 0; attempt < 16; attempt++) {
		struct cf_fleet_change *chs;
		struct cf_fleet_base old, now;
		struct cf_fleet_head h;
		struct cf_etcd_cmp cmp;
		struct cf_etcd_put put;
		uint64_t rev;
		bool ok, retried;
		int64_t at;
		size_t i, n;
		char *v;

		memset(res, 0, sizeof(*res));
		ret = cf_fleet_snapshot(f, 0, &chs, &n, &rev, &old, err, errlen);
		if (ret)
			return ret;
		/* the head as of the log's revision: a commit moves both at once */
		ret = head_read(f, &h, (int64_t)rev, NULL, err, errlen);
		if (ret == -ENOENT) {
			cf_fleet_changes_free(chs, n);
			capfence__seterr(err, errlen, "the fleet has no chained change to compact");
			return -ENODATA;
		}
		if (ret) {
			cf_fleet_changes_free(chs, n);
			return ret;
		}
		/* the log must be the chain from the old snapshot to the head */
		now = old;
		for (i = 0; i < n && !ret; i++) {
			const struct cf_fleet_change *ch = &chs[i];

			if (ch->base)
				continue;
			if (!ch->seq) {
				capfence__seterr(err, errlen,
						 "rev=%" PRIu64 ": an unchained change (committed without --signing-key): only a chained log is compacted",
						 ch->rev);
				ret = -EBADMSG;
			} else if (ch->seq != now.seq + 1 ||
				   memcmp(ch->prev, now.hash, CF_FLEET_HASH_LEN)) {
				capfence__seterr(err, errlen,
						 "rev=%" PRIu64 ": seq=%" PRIu64 " does not follow seq=%" PRIu64
						 " in the store's log: not compacted", ch->rev, ch->seq, now.seq);
				ret = -EBADMSG;
			}
			now.seq = ch->seq;
			memcpy(now.hash, ch->link, CF_FLEET_HASH_LEN);
			now.rev = ch->rev;
			res->folded++;
		}
		if (!ret && (now.seq != h.seq || memcmp(now.hash, h.hash, CF_FLEET_HASH_LEN))) {
			capfence__seterr(err, errlen,
					 "the store's log ends at seq=%" PRIu64 ", not at its head's seq=%" PRIu64
					 ": not compacted", now.seq, h.seq);
			ret = -EBADMSG;
		}
		if (ret) {
			cf_fleet_changes_free(chs, n);
			return ret;
		}
		if (!res->folded) {	/* nothing new: finish the deletions */
			for (i = 0; i < n; i++) {
				res->epochs += chs[i].kind == CF_FLEET_EPOCH_INSTALL;
				res->keys_removed += chs[i].kind == CF_FLEET_KEY_REMOVE;
				res->revoked += chs[i].kind == CF_FLEET_REVOKE;
			}
			cf_fleet_changes_free(chs, n);
			res->base = old;
			goto count;
		}
		v = snapshot_value(f, chs, n, &now, res);
		cf_fleet_changes_free(chs, n);
		if (!v) {
			capfence__seterr(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (strlen(v) > f->snapshot_max) {
			capfence__seterr(err, errlen,
					 "the snapshot would be %zu bytes, above %zu (%zu revocations): not compacted",
					 strlen(v), f->snapshot_max, res->revoked);
			free(v);
			return -E2BIG;
		}
		/* over the snapshot read, never over a newer one */
		cmp = (struct cf_etcd_cmp){ f->snapshot, CF_ETCD_MOD_REV, NULL, old.mod_rev };
		put = (struct cf_etcd_put){ .key = f->snapshot, .value = v };
		now.bytes = strlen(v);
		ret = cf_etcd_txn(f->etcd, &cmp, 1, &put, 1, &at, &ok, &retried, err, errlen);
		free(v);
		if (ret)
			return ret;
		if (!ok)
			continue;	/* another compaction's, or ours retried: read it again */
		now.mod_rev = at;
		res->base = now;
		goto count;
	}
	capfence__seterr(err, errlen, "the fleet kept changing under 16 attempts to compact it");
	return -EAGAIN;
count:
	ret = compact_log(f, res->base.rev, &res->deleted, err, errlen);
	if (ret) {
		char why[CAPFENCE_ERR_MAX];

		snprintf(why, sizeof(why), "%s", err);
		capfence__seterr(err, errlen,
				 "the snapshot at seq=%" PRIu64 " is written, %" PRIu64
				 " revocation keys deleted, then: %s (run it again to finish)",
				 res->base.seq, res->deleted, why);
	}
	return ret;
}

/* ---- the local module ------------------------------------------------------------ */

static int fleet_apply(struct capfence_client *c, const struct cf_fleet_change *ch,
		       uint64_t rev, char *err, size_t errlen)
{
	CAPFENCE_OPTS(capfence_fleet_set_opts, fs, .flags = CAPFENCE_FLEET_SET_REV, .rev = rev);
	CAPFENCE_OPTS(capfence_change_opts, o, .fleet_rev = rev);
	struct capfence_result r;
	int ret;

	switch (ch->kind) {
	case CF_FLEET_EPOCH_INSTALL:
		if (!ch->epoch)
			break;
		return capfence_client_epoch_install_opts(c, ch->epoch, &o, err, errlen);
	case CF_FLEET_EPOCH_ACTIVATE:
		return capfence_client_epoch_activate_opts(c, ch->id, &o, err, errlen);
	case CF_FLEET_KEY_REMOVE:
		return capfence_client_key_remove_opts(c, (uint32_t)ch->id, &o, err, errlen);
	case CF_FLEET_REVOKE:
		ret = capfence_client_revoke_opts(c, ch->id, &o, &r);
		if (ret)
			capfence__seterr(err, errlen, "%s", r.message[0] ? r.message :
					 r.reason > 0 ? capfence_reason_name(r.reason) : strerror(-ret));
		return ret;
	case CF_FLEET_KEY_ADD:
		/* the key itself is installed on each host by hand: the position only */
		if (ch->seq) {
			struct capfence__fleet_link l = { .seq = ch->seq };

			memcpy(l.link, ch->link, sizeof(l.link));
			return capfence__fleet_chain_set(c, &l, err, errlen);
		}
		return capfence_client_fleet_set_opts(c, &fs, err, errlen);
	default:
		break;
	}
	capfence__seterr(err, errlen, "not a fleet change");
	return -EINVAL;
}

int cf_fleet_apply(struct capfence_client *c, const struct cf_fleet_change *ch,
		   char *err, size_t errlen)
{
	struct capfence__fleet_link l = { .seq = ch->seq };
	int ret;

	if (!ch->seq)
		return fleet_apply(c, ch, ch->rev, err, errlen);
	/* chained: the position is the record, the store's revision is not sent */
	memcpy(l.prev, ch->prev, sizeof(l.prev));
	memcpy(l.link, ch->link, sizeof(l.link));
	capfence__client_fleet_link(c, &l);
	ret = fleet_apply(c, ch, 0, err, errlen);
	capfence__client_fleet_link(c, NULL);
	return ret;
}

int cf_fleet_module_chain(struct capfence_client *c, uint64_t *seq,
			  unsigned char link[CF_FLEET_HASH_LEN], char *err, size_t errlen)
{
	struct capfence__fleet_link l;
	int ret = capfence__fleet_chain_get(c, &l, err, errlen);

	*seq = ret ? 0 : l.seq;
	memcpy(link, l.link, CF_FLEET_HASH_LEN);
	return ret;
}

int cf_fleet_module_chain_set(struct capfence_client *c, uint64_t seq,
			      const unsigned char link[CF_FLEET_HASH_LEN], char *err, size_t errlen)
{
	struct capfence__fleet_link l = { .seq = seq };

	memcpy(l.link, link, CF_FLEET_HASH_LEN);
	return capfence__fleet_chain_set(c, &l, err, errlen);
}
