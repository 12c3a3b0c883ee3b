// SPDX-License-Identifier: GPL-2.0
/*
 * libcapfence against the shared vectors (selftests/vectors/tokens.txt,
 * format in its header): byte-exact encoding, MACs, text forms, decisions
 * and rejections. The file is found through $CF_VECTORS, else the
 * compile-time CF_VECTORS, else the path relative to the repository root.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_test.h"

#ifndef CF_VECTORS
#define CF_VECTORS "selftests/vectors/tokens.txt"
#endif

#define MAX_LINES	1024
#define MAX_WORDS	24

struct line {
	int nw;
	char *w[MAX_WORDS];
	char *rest;		/* text after the second word */
};

struct vectors {
	char *buf;
	int n;
	struct line l[MAX_LINES];
	struct capfence_key *keys[8];
	int nkeys;
};

static const char *vectors_path(void)
{
	const char *p = getenv("CF_VECTORS");

	return p && *p ? p : CF_VECTORS;
}

/* Split the file into records of space-separated words. */
static int load(struct vectors *v)
{
	FILE *f = fopen(vectors_path(), "r");
	char *line, *save;
	long size;

	memset(v, 0, sizeof(*v));
	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	v->buf = calloc(1, (size_t)size + 1);
	if (!v->buf || fread(v->buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (line = strtok_r(v->buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct line *l = &v->l[v->n];
		char *p = line, *sp;

		if (!*line || *line == '#')
			continue;
		if (v->n == MAX_LINES)
			return -E2BIG;
		while (p && l->nw < MAX_WORDS) {
			sp = strchr(p, ' ');
			if (sp)
				*sp = '\0';
			if (l->nw == 2)
				l->rest = p;
			l->w[l->nw++] = p;
			p = sp ? sp + 1 : NULL;
		}
		/* the message of reject/badtext records keeps its spaces */
		if ((!strcmp(l->w[0], "reject") ||
		     !strcmp(l->w[0], "badtext")) && l->rest && l->nw > 3)
			for (p = l->rest; p < l->w[l->nw - 1]; p++)
				if (!*p)
					*p = ' ';
		v->n++;
	}
	return 0;
}

static void unload(struct vectors *v)
{
	int i;

	for (i = 0; i < v->nkeys; i++)
		capfence_key_free(v->keys[i]);
	free(v->buf);
}

static struct line *find(struct vectors *v, const char *type,
			 const char *name)
{
	int i;

	for (i = 0; i < v->n; i++)
		if (!strcmp(v->l[i].w[0], type) && v->l[i].nw > 1 &&
		    !strcmp(v->l[i].w[1], name))
			return &v->l[i];
	return NULL;
}

static int count(struct vectors *v, const char *type)
{
	int i, n = 0;

	for (i = 0; i < v->n; i++)
		n += !strcmp(v->l[i].w[0], type);
	return n;
}

static const char *field(struct line *l, const char *key)
{
	size_t kl = strlen(key);
	int i;

	for (i = 2; i < l->nw; i++)
		if (!strncmp(l->w[i], key, kl) && l->w[i][kl] == '=')
			return l->w[i] + kl + 1;
	return NULL;
}

static int load_keys(struct vectors *v)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	int i;

	for (i = 0; i < v->n; i++) {
		struct line *l = &v->l[i];

		if (strcmp(l->w[0], "key"))
			continue;
		if (l->nw != 3 || v->nkeys == 8 ||
		    cf_test_unhex(l->w[2], raw, sizeof(raw)) != CAPFENCE_KEY_LEN ||
		    capfence_key_from_bytes((uint32_t)strtoul(l->w[1], NULL, 10), raw,
				      &v->keys[v->nkeys]))
			return -EINVAL;
		v->nkeys++;
	}
	return 0;
}

static const struct capfence_key *key_by_id(struct vectors *v, uint32_t id)
{
	int i;

	for (i = 0; i < v->nkeys; i++)
		if (capfence_key_id(v->keys[i]) == id)
			return v->keys[i];
	return NULL;
}

FIXTURE(vec) {
	struct vectors v;
};

FIXTURE_SETUP(vec)
{
	int ret = load(&self->v);

	ASSERT_EQ(0, ret) TH_LOG("%s: %s (set CF_VECTORS)", vectors_path(),
				 strerror(-ret));
	ASSERT_EQ(0, load_keys(&self->v));
	ASSERT_LE(2, self->v.nkeys);
}

FIXTURE_TEARDOWN(vec)
{
	unload(&self->v);
	/* after the frees: anything still allocated is a leak */
	CF_NO_LEAKS();
}

/* Does every decide record of this text expect "forged"? */
static bool only_forged(struct vectors *v, const char *text)
{
	int i, n = 0;

	for (i = 0; i < v->n; i++) {
		struct line *l = &v->l[i];

		if (strcmp(l->w[0], "decide") || strcmp(l->w[1], text))
			continue;
		if (l->nw != 4 || strcmp(l->w[3], "forged"))
			return false;
		n++;
	}
	return n > 0;
}

TEST_F(vec, tokens_byte_exact)
{
	int i, tokens = 0, genuine = 0;

	for (i = 0; i < self->v.n; i++) {
		struct line *l = &self->v.l[i], *lb, *lm, *lt;
		uint8_t body[CAPFENCE_TOKEN_BODY_MAX], want[CAPFENCE_TOKEN_MAX_LEN];
		uint8_t mac[CAPFENCE_MAC_LEN];
		char text[CAPFENCE_TOKEN_TEXT_MAX + 1], err[CAPFENCE_ERR_MAX];
		struct capfence_token t, d;
		const struct capfence_key *k;
		const char *name;
		int j, n, wn;

		if (strcmp(l->w[0], "token"))
			continue;
		tokens++;
		name = l->w[1];
		memset(&t, 0, sizeof(t));
		t.version = CAPFENCE_TOKEN_VERSION;
		ASSERT_LT(0, capfence_class_from_name(field(l, "class"))) TH_LOG("%s", name);
		t.class_id = (uint8_t)capfence_class_from_name(field(l, "class"));
		t.key_id = (uint32_t)strtoul(field(l, "key"), NULL, 10);
		t.cap_id = strtoull(field(l, "cap"), NULL, 10);
		t.epoch_id = strtoull(field(l, "epoch"), NULL, 10);
		t.flags = (uint16_t)strtoul(field(l, "flags"), NULL, 10);
		for (j = 2; j < l->nw; j++) {
			if (strncmp(l->w[j], "c=", 2))
				continue;
			ASSERT_EQ(0, capfence_constraint_parse(l->w[j] + 2,
					&t.constraints[t.n++], err, sizeof(err)))
				TH_LOG("%s: %s", name, err);
		}
		lb = find(&self->v, "body", name);
		lm = find(&self->v, "mac", name);
		lt = find(&self->v, "text", name);
		ASSERT_NE(NULL, lb);
		ASSERT_NE(NULL, lm);
		ASSERT_NE(NULL, lt);

		/* body: byte for byte */
		n = capfence_token_encode_body(&t, body, sizeof(body));
		wn = cf_test_unhex(lb->w[2], want, sizeof(want));
		ASSERT_EQ(wn, n) TH_LOG("%s", name);
		EXPECT_EQ(0, memcmp(body, want, (size_t)n)) TH_LOG("%s body", name);

		/* text decodes to the same fields and the recorded MAC */
		ASSERT_EQ(0, capfence_token_from_text(lt->w[2], &d, err, sizeof(err)))
			TH_LOG("%s: %s", name, err);
		ASSERT_EQ(CAPFENCE_MAC_LEN, cf_test_unhex(lm->w[2], mac,
							  sizeof(mac)));
		EXPECT_EQ(0, memcmp(d.mac, mac, sizeof(mac))) TH_LOG("%s", name);
		memcpy(t.mac, mac, sizeof(mac));
		n = capfence_token_to_text(&t, text, sizeof(text));
		ASSERT_LT(0, n);
		EXPECT_STREQ(lt->w[2], text) TH_LOG("%s text", name);
		EXPECT_EQ(t.cap_id, d.cap_id);
		EXPECT_EQ(t.epoch_id, d.epoch_id);
		EXPECT_EQ(t.n, d.n);

		/* MAC: ours must match unless the file says it is forged */
		k = key_by_id(&self->v, t.key_id);
		if (k && !capfence_token_compute_mac(k, &t, mac) &&
		    !memcmp(mac, t.mac, sizeof(mac))) {
			genuine++;
			EXPECT_EQ(0, capfence_token_verify(k, &d));
		} else {
			EXPECT_TRUE(only_forged(&self->v, lt->w[2]))
				TH_LOG("%s: MAC differs but not a forged case",
				       name);
		}
	}
	EXPECT_LE(10, tokens);
	EXPECT_LE(10, genuine);
	TH_LOG("%d tokens, %d genuine", tokens, genuine);
}

TEST_F(vec, decisions)
{
	struct capfence_epoch epochs[16];
	int i, ne = 0, nd = 0;

	for (i = 0; i < self->v.n; i++) {
		struct line *l = &self->v.l[i];
		char err[CAPFENCE_ERR_MAX];

		if (strcmp(l->w[0], "epoch"))
			continue;
		ASSERT_GT(16, ne);
		ASSERT_EQ(0, capfence_epoch_parse_rules(&epochs[ne],
				strtoull(l->w[1], NULL, 10),
				(const char *const *)&l->w[2],
				(size_t)(l->nw - 2), err, sizeof(err)))
			TH_LOG("epoch %s: %s", l->w[1], err);
		ne++;
	}
	ASSERT_LE(2, ne);
	for (i = 0; i < self->v.n; i++) {
		struct line *l = &self->v.l[i];
		const struct capfence_epoch *e = NULL;
		enum capfence_reason r;
		char err[CAPFENCE_ERR_MAX];
		struct capfence_token t;
		uint64_t id;
		int j;

		if (strcmp(l->w[0], "decide"))
			continue;
		ASSERT_EQ(4, l->nw);
		id = strtoull(l->w[2], NULL, 10);
		for (j = 0; j < ne; j++)
			if (epochs[j].epoch_id == id)
				e = &epochs[j];
		ASSERT_NE(NULL, e) TH_LOG("no epoch %s", l->w[2]);
		ASSERT_LE(0, capfence_reason_from_name(l->w[3]));
		ASSERT_EQ(0, capfence_token_from_text(l->w[1], &t, err, sizeof(err)))
			TH_LOG("%s", err);
		r = capfence_decide_delegation((const struct capfence_key *const *)
					 self->v.keys, (size_t)self->v.nkeys,
					 &t, e);
		EXPECT_STREQ(l->w[3], capfence_reason_name(r))
			TH_LOG("%s at epoch %s", l->w[1], l->w[2]);
		nd++;
	}
	EXPECT_LE(20, nd);
	EXPECT_EQ(count(&self->v, "decide"), nd);
}

TEST_F(vec, rejects)
{
	static uint8_t bin[CAPFENCE_TOKEN_MAX_LEN + 64];
	int i, nr = 0, nt = 0;

	for (i = 0; i < self->v.n; i++) {
		struct line *l = &self->v.l[i];
		char err[CAPFENCE_ERR_MAX];
		struct capfence_token t;
		int n;

		if (!strcmp(l->w[0], "reject")) {
			ASSERT_LE(3, l->nw);
			n = cf_test_unhex(l->w[1], bin, sizeof(bin));
			ASSERT_LE(0, n) TH_LOG("bad hex on reject %d", nr);
			err[0] = '\0';
			EXPECT_EQ(-EBADMSG, capfence_token_decode_bin(bin, (size_t)n,
						&t, err, sizeof(err)))
				TH_LOG("accepted: %s", l->rest);
			EXPECT_NE(NULL, strstr(err, l->rest))
				TH_LOG("got \"%s\", want \"%s\"", err, l->rest);
			nr++;
		} else if (!strcmp(l->w[0], "badtext")) {
			ASSERT_LE(3, l->nw);
			err[0] = '\0';
			EXPECT_EQ(-EBADMSG, capfence_token_from_text(l->w[1], &t, err,
							       sizeof(err)))
				TH_LOG("accepted: %.60s", l->w[1]);
			EXPECT_NE(NULL, strstr(err, l->rest))
				TH_LOG("got \"%s\", want \"%s\"", err, l->rest);
			nt++;
		}
	}
	EXPECT_LE(30, nr);
	EXPECT_LE(10, nt);
}

TEST_HARNESS_MAIN
