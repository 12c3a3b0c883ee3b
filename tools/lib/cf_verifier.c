// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the verified-token memo (struct capfence_verifier).
 *
 * A 4-way set-associative table of canonical token bytes (MAC included)
 * that the library authenticated, or minted, under the verifier's keys. A
 * check is a hit only when the presented token encodes to exactly the
 * bytes of a remembered one, compared in constant time (crypto_verify_32
 * over zero-padded 32-byte blocks, every block always): a near miss must
 * not tell an attacker how much of a genuine token it guessed. The set and a 64-bit tag come from the MAC, uniform for genuine
 * tokens; comparing the whole tag at once reveals only full equality. An
 * attacker who picks MACs can only evict (cost), never be admitted
 * (soundness). Remembered bytes are wiped when replaced and when the
 * verifier is freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <capfence/capfence.h>
#include "cf_internal.h"

#define CF_MEMO_DEFAULT_SLOTS	1024
#define CF_MEMO_MAX_SLOTS	(1u << 20)
#define CF_MEMO_WAYS		4
/* remembered and presented bytes are zero-padded to whole 32-byte blocks */
#define CF_MEMO_BLOCK		32
#define CF_MEMO_PAD(n)		(((n) + CF_MEMO_BLOCK - 1) & ~(CF_MEMO_BLOCK - 1))
#define CF_MEMO_BUF		CF_MEMO_PAD(CAPFENCE_TOKEN_MAX_LEN)

struct cf_memo_slot {
	uint64_t tag;		/* MAC bytes 0-7 */
	uint16_t len;		/* 0: empty */
	uint16_t cap;		/* bytes allocated */
	uint8_t *bytes;
};

struct cf_memo_set {
	struct cf_memo_slot way[CF_MEMO_WAYS];
	unsigned int next;	/* round-robin victim once the set is full */
};

struct capfence_verifier {
	const struct capfence_key **keys;
	size_t nkeys;
	size_t mask;		/* sets - 1 */
	struct cf_memo_set *sets;
	struct capfence_verifier_stats st;
};

int capfence_verifier_new(const struct capfence_key *const keys[], size_t nkeys,
		    size_t slots, struct capfence_verifier **out)
{
	struct capfence_verifier *v;
	size_t n = CF_MEMO_WAYS, i;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!keys || !nkeys || slots > CF_MEMO_MAX_SLOTS)
		return -EINVAL;
	for (i = 0; i < nkeys; i++)
		if (!keys[i])
			return -EINVAL;
	if (!slots)
		slots = CF_MEMO_DEFAULT_SLOTS;
	while (n < slots)
		n <<= 1;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->keys = calloc(nkeys, sizeof(*v->keys));
	v->sets = calloc(n / CF_MEMO_WAYS, sizeof(*v->sets));
	if (!v->keys || !v->sets) {
		free(v->keys);
		free(v->sets);
		free(v);
		return -ENOMEM;
	}
	memcpy(v->keys, keys, nkeys * sizeof(*keys));
	v->nkeys = nkeys;
	v->mask = n / CF_MEMO_WAYS - 1;
	*out = v;
	return 0;
}

void capfence_verifier_free(struct capfence_verifier *v)
{
	size_t i, w;

	if (!v)
		return;
	for (i = 0; i <= v->mask; i++) {
		for (w = 0; w < CF_MEMO_WAYS; w++) {
			struct cf_memo_slot *s = &v->sets[i].way[w];

			if (s->bytes) {
				sodium_memzero(s->bytes, s->cap);
				free(s->bytes);
			}
		}
	}
	free(v->sets);
	free(v->keys);
	free(v);
}

/* The key capfence_decide_delegation() would use: the first with the id. */
static const struct capfence_key *find_key(const struct capfence_verifier *v, uint32_t id)
{
	size_t i;

	for (i = 0; i < v->nkeys; i++)
		if (capfence_key_id(v->keys[i]) == id)
			return v->keys[i];
	return NULL;
}

static struct cf_memo_set *set_of(const struct capfence_verifier *v,
				  const uint8_t mac[CAPFENCE_MAC_LEN],
				  uint64_t *tag)
{
	uint32_t h;

	memcpy(tag, mac, sizeof(*tag));
	memcpy(&h, mac + sizeof(*tag), sizeof(h));
	return &v->sets[h & v->mask];
}

/* Constant time in the padded length; sodium_memcmp() goes byte by byte. */
static bool same_bytes(const uint8_t *a, const uint8_t *b, size_t padded)
{
	int diff = 0;
	size_t i;

	for (i = 0; i < padded; i += CF_MEMO_BLOCK)
		diff |= crypto_verify_32(a + i, b + i);
	return !diff;
}

static bool recalled(const struct cf_memo_set *set, uint64_t tag,
		     const uint8_t *bytes, int len)
{
	unsigned int w;

	/* the length of a remembered token is public: its constraints' shape */
	for (w = 0; w < CF_MEMO_WAYS; w++) {
		const struct cf_memo_slot *s = &set->way[w];

		if (s->len == len && s->tag == tag &&
		    same_bytes(s->bytes, bytes, CF_MEMO_PAD((size_t)len)))
			return true;
	}
	return false;
}

/*
 * Remember len authenticated bytes, zero-padded like the encoding buffer;
 * a failed allocation only forgets.
 */
static void remember(struct capfence_verifier *v, struct cf_memo_set *set,
		     uint64_t tag, const uint8_t *bytes, int len)
{
	struct cf_memo_slot *s = NULL;
	unsigned int w;

	for (w = 0; w < CF_MEMO_WAYS && !s; w++)
		if (!set->way[w].len)
			s = &set->way[w];
	if (!s) {
		s = &set->way[set->next++ % CF_MEMO_WAYS];
		v->st.evicted++;
		sodium_memzero(s->bytes, s->cap);
		s->len = 0;
	}
	if (s->cap < CF_MEMO_PAD(len)) {
		uint8_t *b = malloc(CF_MEMO_PAD((size_t)len));

		if (!b)
			return;
		free(s->bytes);
		s->bytes = b;
		s->cap = (uint16_t)CF_MEMO_PAD(len);
	}
	memcpy(s->bytes, bytes, CF_MEMO_PAD((size_t)len));
	s->tag = tag;
	s->len = (uint16_t)len;
	v->st.remembered++;
}

/* Canonical bytes with the MAC, zero-padded to CF_MEMO_PAD(length). */
static int encode_padded(const struct capfence_token *t, uint8_t buf[CF_MEMO_BUF])
{
	int len = capfence_token_encode_bin(t, buf, CF_MEMO_BUF);

	if (len > 0)
		memset(buf + len, 0, CF_MEMO_PAD((size_t)len) - (size_t)len);
	return len;
}

int capfence_verifier_verify(struct capfence_verifier *v, const struct capfence_token *t)
{
	uint8_t buf[CF_MEMO_BUF], mac[CAPFENCE_MAC_LEN];
	const struct capfence_key *k;
	struct cf_memo_set *set;
	uint64_t tag;
	int len, ret;

	if (!v || !t)
		return -EBADMSG;
	k = find_key(v, t->key_id);
	if (!k)
		return -EBADMSG;
	len = encode_padded(t, buf);
	if (len < 0)
		return -EBADMSG;
	set = set_of(v, t->mac, &tag);
	if (recalled(set, tag, buf, len)) {
		v->st.hits++;
		return 0;
	}
	v->st.misses++;
	capfence__mac_body(k, buf, (size_t)len - CAPFENCE_MAC_LEN, mac);
	ret = crypto_verify_32(mac, t->mac) ? -EBADMSG : 0;
	if (!ret)
		remember(v, set, tag, buf, len);
	sodium_memzero(mac, sizeof(mac));
	return ret;
}

enum capfence_reason capfence_verifier_decide(struct capfence_verifier *v,
					const struct capfence_token *t,
					const struct capfence_epoch *receiver)
{
	if (!t || !receiver)
		return CAPFENCE_R_FORGED;
	/* authenticity first: a forgery must never read as epoch skew */
	if (capfence_verifier_verify(v, t))
		return CAPFENCE_R_FORGED;
	return capfence__decide_authentic(t, receiver);
}
CF_DEFAULT_VERSION(capfence_verifier_decide, LIBCAPFENCE_1.4);

int capfence_verifier_mint(struct capfence_verifier *v, const struct capfence_key *k,
		     int class_id, uint64_t epoch_id,
		     const struct capfence_constraint *cs, size_t n, uint64_t cap_id,
		     struct capfence_token *out, char *err, size_t errlen)
{
	uint8_t buf[CF_MEMO_BUF];
	struct cf_memo_set *set;
	uint64_t tag;
	int ret, len;

	if (!v)
		return -EINVAL;
	ret = capfence_token_mint(k, class_id, epoch_id, cs, n, cap_id, out, err,
			    errlen);
	if (ret)
		return ret;
	/* only if a check of this token would use this very key */
	if (find_key(v, capfence_key_id(k)) != k)
		return 0;
	len = encode_padded(out, buf);
	if (len > 0) {
		set = set_of(v, out->mac, &tag);
		remember(v, set, tag, buf, len);
	}
	return 0;
}

void capfence_verifier_get_stats(const struct capfence_verifier *v,
			   struct capfence_verifier_stats *st)
{
	if (v && st)
		*st = v->st;
}
