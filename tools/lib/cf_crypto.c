// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: keys, the token encoding, mint/verify and the delegation-time
 * decision. Every primitive (randomness, HMAC-SHA256, base64url, constant
 * time compare, guarded key memory) is libsodium's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <capfence/capfence.h>
#include "cf_internal.h"

static int sodium_ready(void)
{
	static atomic_bool ready;

	/* sodium_init() takes a mutex on every call: ask it once */
	if (atomic_load_explicit(&ready, memory_order_acquire))
		return 0;
	if (sodium_init() < 0)
		return -ENOTRECOVERABLE;
	atomic_store_explicit(&ready, true, memory_order_release);
	return 0;
}

/* ---- keys ---------------------------------------------------------------- */

struct capfence_key {
	/* keyed HMAC state first: it needs 8-byte alignment */
	crypto_auth_hmacsha256_state st;
	uint32_t id;
	uint8_t key[CAPFENCE_KEY_LEN];
};

/* sodium_malloc puts the object at the end of a page: keep it aligned. */
#define CF_KEY_ALLOC	((sizeof(struct capfence_key) + 15) & ~(size_t)15)

int capfence_key_from_bytes(uint32_t id, const uint8_t *bytes, struct capfence_key **out)
{
	struct capfence_key *k;
	int ret;

	if (!out || !bytes || !id)
		return -EINVAL;
	*out = NULL;
	ret = sodium_ready();
	if (ret)
		return ret;
	k = sodium_malloc(CF_KEY_ALLOC);
	if (!k)
		return -ENOMEM;
	memset(k, 0, CF_KEY_ALLOC);
	k->id = id;
	memcpy(k->key, bytes, CAPFENCE_KEY_LEN);
	/* precompute the ipad/opad blocks once per key, not once per MAC */
	crypto_auth_hmacsha256_init(&k->st, k->key, CAPFENCE_KEY_LEN);
	sodium_mprotect_readonly(k);
	*out = k;
	return 0;
}

int capfence_key_generate(uint32_t id, struct capfence_key **out)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	int ret;

	if (!out || !id)
		return -EINVAL;
	ret = sodium_ready();
	if (ret)
		return ret;
	randombytes_buf(raw, sizeof(raw));
	ret = capfence_key_from_bytes(id, raw, out);
	sodium_memzero(raw, sizeof(raw));
	return ret;
}

uint32_t capfence_key_id(const struct capfence_key *k)
{
	return k ? k->id : 0;
}

void capfence_key_bytes(const struct capfence_key *k, uint8_t out[CAPFENCE_KEY_LEN])
{
	memcpy(out, k->key, CAPFENCE_KEY_LEN);
}

void capfence_key_free(struct capfence_key *k)
{
	/* sodium_free makes the pages writable and wipes them */
	if (k)
		sodium_free(k);
}

#define CF_KEY_MAGIC	"capfence-key v1"
#define CF_KEY_B64_LEN	sodium_base64_ENCODED_LEN(CAPFENCE_KEY_LEN, \
				sodium_base64_VARIANT_URLSAFE_NO_PADDING)
#define CF_KEY_FILE_MAX	4096

int capfence_key_format(const struct capfence_key *k, char *buf, size_t len)
{
	char b64[CF_KEY_B64_LEN];
	int n;

	if (!k || !buf)
		return -EINVAL;
	sodium_bin2base64(b64, sizeof(b64), k->key, CAPFENCE_KEY_LEN,
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	n = snprintf(buf, len, CF_KEY_MAGIC "\nid %" PRIu32 "\nkey %s\n",
		     k->id, b64);
	sodium_memzero(b64, sizeof(b64));
	if (n < 0 || (size_t)n >= len) {
		sodium_memzero(buf, len);
		return -ENOSPC;
	}
	return n;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int capfence_key_save(const struct capfence_key *k, const char *path,
		char *err, size_t errlen)
{
	char text[128], *tmp;
	int fd, n, ret;

	if (!k || !path || !*path) {
		capfence__seterr(err, errlen, "no key file path given");
		return -EINVAL;
	}
	n = capfence_key_format(k, text, sizeof(text));
	if (n < 0) {
		capfence__seterr(err, errlen, "cannot format the key: %s", strerror(-n));
		return n;
	}
	/* write a sibling and rename: a reader never sees half a key */
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		ret = -ENOMEM;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		goto out_wipe;
	}
	fd = mkstemp(tmp);	/* creates with mode 0600 */
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		goto out_free;
	}
	ret = fchmod(fd, 0600) ? -errno : 0;
	if (!ret)
		ret = write_all(fd, text, (size_t)n);
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		unlink(tmp);
	}
out_free:
	free(tmp);
out_wipe:
	sodium_memzero(text, sizeof(text));
	return ret;
}

/* Next line of *p (without '\n') into line; false at the end of text. */
static bool next_line(const char **p, const char **line, size_t *len)
{
	if (!**p)
		return false;
	*line = *p;
	*len = strcspn(*p, "\n");
	*p += *len;
	if (**p)
		(*p)++;
	return true;
}

int capfence_key_parse(const char *text, struct capfence_key **out,
		 char *err, size_t errlen)
{
	uint8_t raw[CAPFENCE_KEY_LEN + 8];
	const char *p = text, *line = NULL, *end, *cr;
	char num[16];
	size_t len, rawlen = 0;
	unsigned long long id = 0;
	int ret;

	if (!text || !out)
		return -EINVAL;
	*out = NULL;
	ret = sodium_ready();
	if (ret)
		return ret;
	cr = strchr(text, '\r');
	if (cr) {
		unsigned int lineno = 1;

		for (line = text; line < cr; line++)
			lineno += *line == '\n';
		capfence__seterr(err, errlen, "line %u: carriage return (CRLF line "
		       "ends are not accepted)", lineno);
		return -EBADMSG;
	}
	if (!next_line(&p, &line, &len) || len != strlen(CF_KEY_MAGIC) ||
	    memcmp(line, CF_KEY_MAGIC, len)) {
		if (!strncmp(text, CF_KEY_MAGIC, strlen(CF_KEY_MAGIC)))
			capfence__seterr(err, errlen, "line 1: unexpected characters "
			       "after \"" CF_KEY_MAGIC "\"");
		else if (!strncmp(text, "capfence-key ", 13))
			capfence__seterr(err, errlen, "line 1: unsupported key file "
			       "version (expected \"" CF_KEY_MAGIC "\")");
		else
			capfence__seterr(err, errlen, "line 1: not a capfence key file "
			       "(expected \"" CF_KEY_MAGIC "\")");
		return -EBADMSG;
	}
	if (!next_line(&p, &line, &len) || len < 4 || len - 3 >= sizeof(num) ||
	    memcmp(line, "id ", 3)) {
		capfence__seterr(err, errlen, "line 2: expected \"id N\"");
		return -EBADMSG;
	}
	memcpy(num, line + 3, len - 3);
	num[len - 3] = '\0';
	if (num[0] < '1' || num[0] > '9' ||
	    strspn(num, "0123456789") != len - 3 ||
	    (id = strtoull(num, NULL, 10)) > UINT32_MAX) {
		capfence__seterr(err, errlen, "line 2: key id \"%s\" is not a decimal "
		       "in 1..4294967295", num);
		return -EBADMSG;
	}
	if (!next_line(&p, &line, &len) || len < 5 || memcmp(line, "key ", 4)) {
		capfence__seterr(err, errlen, "line 3: expected \"key BASE64URL\"");
		return -EBADMSG;
	}
	if (sodium_base642bin(raw, sizeof(raw), line + 4, len - 4, NULL,
			      &rawlen, &end,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) ||
	    end != line + len) {
		capfence__seterr(err, errlen, "line 3: key is not base64url without "
		       "padding");
		ret = -EBADMSG;
		goto out;
	}
	if (rawlen != CAPFENCE_KEY_LEN) {
		capfence__seterr(err, errlen, "line 3: key is %zu bytes, expected %d",
		       rawlen, CAPFENCE_KEY_LEN);
		ret = -EBADMSG;
		goto out;
	}
	if (*p) {
		capfence__seterr(err, errlen, "line 4: unexpected content after the key");
		ret = -EBADMSG;
		goto out;
	}
	ret = capfence_key_from_bytes((uint32_t)id, raw, out);
out:
	sodium_memzero(raw, sizeof(raw));
	return ret;
}

int capfence_key_load(const char *path, struct capfence_key **out,
		char *err, size_t errlen)
{
	char text[CF_KEY_FILE_MAX + 1], msg[CAPFENCE_ERR_MAX];
	size_t len = 0;
	struct stat st;
	int fd, ret;

	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		capfence__seterr(err, errlen, "%s: not a regular file", path);
		ret = -EBADMSG;
		goto out_close;
	}
	for (;;) {
		ssize_t n = read(fd, text + len, sizeof(text) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
			goto out_wipe;
		}
		if (!n)
			break;
		len += (size_t)n;
		if (len == sizeof(text) - 1) {
			capfence__seterr(err, errlen, "%s: too large for a key file",
			       path);
			ret = -EBADMSG;
			goto out_wipe;
		}
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		capfence__seterr(err, errlen, "%s: NUL byte in key file", path);
		ret = -EBADMSG;
		goto out_wipe;
	}
	ret = capfence_key_parse(text, out, msg, sizeof(msg));
	if (ret)
		capfence__seterr(err, errlen, "%s: %s", path, msg);
out_wipe:
	sodium_memzero(text, sizeof(text));
out_close:
	close(fd);
	return ret;
}

/* ---- token encoding ------------------------------------------------------ */

#define CF_HDR_LEN	24
#define CF_NET_LEN	24

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static inline uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/*
 * Encode the MAC input without validating the fields: the hot path of
 * verify. Only bounds are checked; a bad token then simply fails its MAC.
 */
static int encode_body(const struct capfence_token *t, uint8_t *buf, size_t len)
{
	size_t off = CF_HDR_LEN + 1;
	unsigned int i;

	if (t->n > CAPFENCE_MAX_CONSTRAINTS || len < off)
		return -ENOSPC;
	buf[0] = t->version;
	buf[1] = t->class_id;
	put16(buf + 2, t->flags);
	put32(buf + 4, t->key_id);
	put64(buf + 8, t->cap_id);
	put64(buf + 16, t->epoch_id);
	buf[24] = t->n;
	for (i = 0; i < t->n; i++) {
		const struct capfence_constraint *c = &t->constraints[i];
		const struct capfence_net_range *nr = &c->net;

		if (c->kind == CAPFENCE_CONSTRAINT_NET) {
			if (len - off < 1 + CF_NET_LEN)
				return -ENOSPC;
			buf[off] = CAPFENCE_CONSTRAINT_NET;
			buf[off + 1] = nr->family;
			buf[off + 2] = nr->prefix_len;
			put16(buf + off + 3, nr->port_min);
			put16(buf + off + 5, nr->port_max);
			put16(buf + off + 7, nr->reserved);
			memcpy(buf + off + 9, nr->addr, 16);
			off += 1 + CF_NET_LEN;
		} else {
			if (len - off < 2u + c->path.len)
				return -ENOSPC;
			buf[off] = c->kind;
			buf[off + 1] = c->path.len;
			memcpy(buf + off + 2, c->path.s, c->path.len);
			off += 2u + c->path.len;
		}
	}
	return (int)off;
}

/* Everything a decoder would refuse, as one message. */
int capfence_token_check(const struct capfence_token *t, char *err, size_t errlen)
{
	char msg[CAPFENCE_ERR_MAX];
	int i;

	if (t->version != CAPFENCE_TOKEN_VERSION) {
		capfence__seterr(err, errlen, "unsupported token version %u (expected %d)",
		       t->version, CAPFENCE_TOKEN_VERSION);
		return -EBADMSG;
	}
	if (!capfence_class_valid(t->class_id)) {
		capfence__seterr(err, errlen, "unknown class id %u", t->class_id);
		return -EBADMSG;
	}
	if (t->flags & ~CAPFENCE_TOKEN_F_MASK) {
		capfence__seterr(err, errlen, "unknown flag bits 0x%04x",
		       t->flags & ~CAPFENCE_TOKEN_F_MASK);
		return -EBADMSG;
	}
	if (!t->key_id) {
		capfence__seterr(err, errlen, "key id is 0");
		return -EBADMSG;
	}
	if (!t->cap_id) {
		capfence__seterr(err, errlen, "cap id is 0");
		return -EBADMSG;
	}
	if (!t->epoch_id) {
		capfence__seterr(err, errlen, "epoch id is 0");
		return -EBADMSG;
	}
	if (t->n > CAPFENCE_MAX_CONSTRAINTS) {
		capfence__seterr(err, errlen, "%u constraints (max %d)", t->n,
		       CAPFENCE_MAX_CONSTRAINTS);
		return -EBADMSG;
	}
	for (i = 0; i < t->n; i++) {
		const struct capfence_constraint *c = &t->constraints[i];

		if (c->kind != CAPFENCE_CONSTRAINT_NET &&
		    c->kind != CAPFENCE_CONSTRAINT_PATH) {
			capfence__seterr(err, errlen, "constraint %d: unknown kind %u",
			       i + 1, c->kind);
			return -EBADMSG;
		}
		if (capfence__class_misfit(t->class_id, c)) {
			capfence__seterr(err, errlen, "constraint %d: %s constraint in "
			       "a %s token", i + 1,
			       c->kind == CAPFENCE_CONSTRAINT_PATH ? "path" :
			       c->net.family == CAPFENCE_FAMILY_VSOCK ? "vsock" : "net",
			       capfence_class_name(t->class_id));
			return -EBADMSG;
		}
		if (capfence_constraint_check(c, msg, sizeof(msg))) {
			capfence__seterr(err, errlen, "constraint %d: %s", i + 1, msg);
			return -EBADMSG;
		}
	}
	return 0;
}

int capfence_token_encode_body(const struct capfence_token *t, uint8_t *buf, size_t len)
{
	if (!t || !buf || capfence_token_check(t, NULL, 0))
		return -EINVAL;
	return encode_body(t, buf, len);
}

int capfence_token_encode_bin(const struct capfence_token *t, uint8_t *buf, size_t len)
{
	int n = capfence_token_encode_body(t, buf, len);

	if (n < 0)
		return n;
	if (len - (size_t)n < CAPFENCE_MAC_LEN)
		return -ENOSPC;
	memcpy(buf + n, t->mac, CAPFENCE_MAC_LEN);
	return n + CAPFENCE_MAC_LEN;
}

int capfence_token_decode_bin(const uint8_t *buf, size_t len, struct capfence_token *t,
			char *err, size_t errlen)
{
	size_t off = CF_HDR_LEN + 1;
	unsigned int i;

	if (!buf || !t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (len > CAPFENCE_TOKEN_MAX_LEN) {
		capfence__seterr(err, errlen, "token too long: %zu bytes (max %d)", len,
		       CAPFENCE_TOKEN_MAX_LEN);
		return -EBADMSG;
	}
	if (len < off) {
		capfence__seterr(err, errlen, "token truncated: %zu bytes, the header "
		       "needs %zu", len, off);
		return -EBADMSG;
	}
	t->version = buf[0];
	t->class_id = buf[1];
	t->flags = get16(buf + 2);
	t->key_id = get32(buf + 4);
	t->cap_id = get64(buf + 8);
	t->epoch_id = get64(buf + 16);
	t->n = buf[24];
	/* the layout below is version 1's: say so before judging it */
	if (t->version != CAPFENCE_TOKEN_VERSION) {
		capfence__seterr(err, errlen, "unsupported token version %u (expected %d)",
		       t->version, CAPFENCE_TOKEN_VERSION);
		return -EBADMSG;
	}
	if (t->n > CAPFENCE_MAX_CONSTRAINTS) {
		capfence__seterr(err, errlen, "%u constraints (max %d)", t->n,
		       CAPFENCE_MAX_CONSTRAINTS);
		return -EBADMSG;
	}
	for (i = 0; i < t->n; i++) {
		struct capfence_constraint *c = &t->constraints[i];

		if (off >= len) {
			capfence__seterr(err, errlen, "token truncated in constraint %u",
			       i + 1);
			return -EBADMSG;
		}
		c->kind = buf[off];
		if (c->kind == CAPFENCE_CONSTRAINT_NET) {
			const uint8_t *p = buf + off + 1;

			if (len - off < 1 + CF_NET_LEN) {
				capfence__seterr(err, errlen, "token truncated in "
				       "constraint %u", i + 1);
				return -EBADMSG;
			}
			c->net.family = p[0];
			c->net.prefix_len = p[1];
			c->net.port_min = get16(p + 2);
			c->net.port_max = get16(p + 4);
			c->net.reserved = get16(p + 6);
			memcpy(c->net.addr, p + 8, 16);
			off += 1 + CF_NET_LEN;
		} else if (c->kind == CAPFENCE_CONSTRAINT_PATH) {
			size_t plen;

			if (len - off < 2 ||
			    len - off - 2 < (plen = buf[off + 1])) {
				capfence__seterr(err, errlen, "token truncated in "
				       "constraint %u", i + 1);
				return -EBADMSG;
			}
			c->path.len = (uint8_t)plen;
			memcpy(c->path.s, buf + off + 2, plen);
			c->path.s[plen] = '\0';
			off += 2 + plen;
		} else {
			capfence__seterr(err, errlen, "constraint %u: unknown kind %u",
			       i + 1, c->kind);
			return -EBADMSG;
		}
	}
	if (len - off < CAPFENCE_MAC_LEN) {
		capfence__seterr(err, errlen, "token truncated: MAC is %zu bytes, "
		       "expected %d", len - off, CAPFENCE_MAC_LEN);
		return -EBADMSG;
	}
	if (len - off > CAPFENCE_MAC_LEN) {
		capfence__seterr(err, errlen, "%zu trailing bytes after the MAC",
		       len - off - CAPFENCE_MAC_LEN);
		return -EBADMSG;
	}
	memcpy(t->mac, buf + off, CAPFENCE_MAC_LEN);
	return capfence_token_check(t, err, errlen);
}

int capfence_token_to_text(const struct capfence_token *t, char *buf, size_t len)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	size_t plen = strlen(CAPFENCE_TOKEN_PREFIX), need;
	int n;

	if (!buf)
		return -EINVAL;
	n = capfence_token_encode_bin(t, bin, sizeof(bin));
	if (n < 0)
		return n;
	need = sodium_base64_ENCODED_LEN((size_t)n,
				sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	if (len < plen + need)
		return -ENOSPC;
	memcpy(buf, CAPFENCE_TOKEN_PREFIX, plen);
	sodium_bin2base64(buf + plen, len - plen, bin, (size_t)n,
			  sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return (int)(plen + need - 1);
}

int capfence_token_from_text(const char *s, struct capfence_token *t,
		       char *err, size_t errlen)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	size_t plen = strlen(CAPFENCE_TOKEN_PREFIX), len, i, binlen = 0;
	const char *b64, *end;

	if (!t)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (!s || !*s) {
		capfence__seterr(err, errlen, "empty token");
		return -EBADMSG;
	}
	len = strnlen(s, CAPFENCE_TOKEN_TEXT_MAX + 1);
	if (len > CAPFENCE_TOKEN_TEXT_MAX) {
		capfence__seterr(err, errlen, "token text too long (max %zu characters)",
		       (size_t)CAPFENCE_TOKEN_TEXT_MAX);
		return -EBADMSG;
	}
	if (len < plen || memcmp(s, CAPFENCE_TOKEN_PREFIX, plen)) {
		capfence__seterr(err, errlen, "token must start with \"%s\"",
		       CAPFENCE_TOKEN_PREFIX);
		return -EBADMSG;
	}
	b64 = s + plen;
	for (i = 0; i < len - plen; i++) {
		unsigned char ch = (unsigned char)b64[i];

		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')
			continue;
		if (ch == '=')
			capfence__seterr(err, errlen, "padding '=' in token (base64url "
			       "without padding expected)");
		else if (ch == ' ' || (ch >= '\t' && ch <= '\r'))
			capfence__seterr(err, errlen, "whitespace in token at offset %zu",
			       plen + i);
		else
			capfence__seterr(err, errlen, "invalid character 0x%02x in "
			       "token at offset %zu", ch, plen + i);
		return -EBADMSG;
	}
	if (sodium_base642bin(bin, sizeof(bin), b64, len - plen, NULL,
			      &binlen, &end,
			      sodium_base64_VARIANT_URLSAFE_NO_PADDING) ||
	    end != b64 + (len - plen)) {
		capfence__seterr(err, errlen, "token is not canonical base64url");
		return -EBADMSG;
	}
	return capfence_token_decode_bin(bin, binlen, t, err, errlen);
}

/* ---- MAC, mint, verify ----------------------------------------------------- */

void capfence__mac_body(const struct capfence_key *k, const uint8_t *body, size_t n,
		 uint8_t mac[CAPFENCE_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;

	/* the per-key state already absorbed the padded key */
	st = k->st;
	crypto_auth_hmacsha256_update(&st, body, (unsigned long long)n);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

int capfence_token_compute_mac(const struct capfence_key *k, const struct capfence_token *t,
			 uint8_t mac[CAPFENCE_MAC_LEN])
{
	uint8_t body[CAPFENCE_TOKEN_BODY_MAX];
	int n;

	if (!k || !t || !mac)
		return -EINVAL;
	n = encode_body(t, body, sizeof(body));
	if (n < 0)
		return n;
	capfence__mac_body(k, body, (size_t)n, mac);
	return 0;
}

/*
 * Copy what a constraint uses, not its whole ~260-byte slot: a full copy of
 * two constraints cost mint more than its own checks. Anything unexpected
 * is copied whole, so that capfence_token_check() judges exactly the input.
 */
static void copy_constraint(struct capfence_constraint *d,
			    const struct capfence_constraint *c)
{
	if (c->kind == CAPFENCE_CONSTRAINT_NET) {
		d->kind = c->kind;
		d->net = c->net;
	} else if (c->kind == CAPFENCE_CONSTRAINT_PATH &&
		   !c->path.s[c->path.len]) {
		d->kind = c->kind;
		d->path.len = c->path.len;
		memcpy(d->path.s, c->path.s, c->path.len + 1u);
	} else {
		*d = *c;
	}
}

int capfence_token_mint(const struct capfence_key *k, int class_id, uint64_t epoch_id,
		  const struct capfence_constraint *cs, size_t n, uint64_t cap_id,
		  struct capfence_token *out, char *err, size_t errlen)
{
	size_t i;
	int ret;

	/* a key exists only once libsodium is initialised (capfence_key_from_bytes) */
	if (!k || !out || (n && !cs)) {
		capfence__seterr(err, errlen, "mint: missing key, token or constraints");
		return -EINVAL;
	}
	if (!capfence_class_valid(class_id)) {
		capfence__seterr(err, errlen, "unknown class id %d", class_id);
		return -EINVAL;
	}
	if (n > CAPFENCE_MAX_CONSTRAINTS) {
		capfence__seterr(err, errlen, "%zu constraints (max %d)", n,
		       CAPFENCE_MAX_CONSTRAINTS);
		return -EINVAL;
	}
	/*
	 * Built in place: a capfence_token is ~2 KiB of constraint slots, and
	 * clearing and copying all of it would cost as much as the checks.
	 */
	memset(out, 0, offsetof(struct capfence_token, constraints));
	out->version = CAPFENCE_TOKEN_VERSION;
	out->class_id = (uint8_t)class_id;
	out->key_id = k->id;
	out->epoch_id = epoch_id;
	out->n = (uint8_t)n;
	for (i = 0; i < n; i++)
		copy_constraint(&out->constraints[i], &cs[i]);
	memset(out->mac, 0, sizeof(out->mac));
	out->cap_id = cap_id;
	while (!out->cap_id)
		randombytes_buf(&out->cap_id, sizeof(out->cap_id));
	ret = capfence_token_check(out, err, errlen);
	if (ret)
		return -EINVAL;
	ret = capfence_token_compute_mac(k, out, out->mac);
	if (ret)
		capfence__seterr(err, errlen, "mint: cannot encode the token: %s",
			  strerror(-ret));
	return ret;
}

int capfence_token_verify(const struct capfence_key *k, const struct capfence_token *t)
{
	uint8_t mac[CAPFENCE_MAC_LEN];
	int ret;

	if (!k || !t || t->key_id != k->id)
		return -EBADMSG;
	if (capfence_token_compute_mac(k, t, mac))
		return -EBADMSG;
	ret = sodium_memcmp(mac, t->mac, CAPFENCE_MAC_LEN) ? -EBADMSG : 0;
	sodium_memzero(mac, sizeof(mac));
	return ret;
}

/* ---- the delegation-time decision ---------------------------------------- */

enum capfence_reason capfence_decide_delegation(const struct capfence_key *const keys[],
					  size_t nkeys,
					  const struct capfence_token *t,
					  const struct capfence_epoch *receiver)
{
	const struct capfence_key *k = NULL;
	size_t i;

	if (!t || !receiver)
		return CAPFENCE_R_FORGED;
	for (i = 0; i < nkeys; i++) {
		if (keys[i] && keys[i]->id == t->key_id) {
			k = keys[i];
			break;
		}
	}
	/* authenticity first: a forgery must never read as epoch skew */
	if (!k || capfence_token_verify(k, t))
		return CAPFENCE_R_FORGED;
	return capfence__decide_authentic(t, receiver);
}
CF_DEFAULT_VERSION(capfence_decide_delegation, LIBCAPFENCE_1.4);

enum capfence_reason capfence__decide_authentic(const struct capfence_token *t,
					 const struct capfence_epoch *receiver)
{
	if (t->epoch_id != receiver->epoch_id)
		return CAPFENCE_R_EPOCH_MISMATCH;
	if (!capfence_class_valid(t->class_id) ||
	    !capfence_rule_admits_constraints(&receiver->rules[t->class_id],
					t->constraints, t->n))
		return CAPFENCE_R_CLASS_DENIED;
	return CAPFENCE_R_OK;
}
