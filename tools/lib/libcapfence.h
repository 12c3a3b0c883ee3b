/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcapfence - the pure (no kernel) part of capfence: classes, constraints,
 * epoch rules, keys, tokens and the delegation-time decision of SPEC §4
 * rows 2-4. Uses libsodium for every cryptographic primitive.
 *
 * Conventions: functions return 0 (or a length) on success and a negative
 * errno on failure. Functions that parse user input take (err, errlen): on
 * failure they write one line, without a trailing newline, naming the bad
 * input. err may be NULL. Nothing here talks to the kernel.
 */
#ifndef LIBCAPFENCE_H
#define LIBCAPFENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uapi/linux/capfence.h>

/* Largest error line the library writes (callers may pass less). */
#define CF_ERR_MAX		256

/* Bytes of the canonical encoding before the MAC, at most. */
#define CF_TOKEN_BODY_MAX	(CAPFENCE_TOKEN_MAX_LEN - CAPFENCE_MAC_LEN)
/* Longest text form: prefix + base64url(no padding) of the longest token. */
#define CF_TOKEN_TEXT_MAX	(sizeof(CAPFENCE_TOKEN_PREFIX) - 1 + \
				 (CAPFENCE_TOKEN_MAX_LEN * 4 + 2) / 3)
/* Longest printed constraint ("[v6]/128:65535-65535" or a path), with NUL. */
#define CF_CONSTRAINT_TEXT_MAX	(CAPFENCE_PATH_MAX + 1)
/* Longest printed rule: class, "=token:", constraints and commas, NUL. */
#define CF_RULE_TEXT_MAX	(32 + CAPFENCE_MAX_CONSTRAINTS * \
				 CF_CONSTRAINT_TEXT_MAX)

/* ---- classes and reasons ---------------------------------------------- */

/* Class id of a name such as "net:connect", or -EINVAL if unknown. */
int cf_class_from_name(const char *name);
/* Name of a class id, or NULL if the id is not a known class. */
const char *cf_class_name(int class_id);
/* True iff class_id is a known net:* class (constraints are CIDRs). */
bool cf_class_is_net(int class_id);
/* True iff class_id is a known class (1..CAPFENCE_CLASS_MAX). */
bool cf_class_valid(int class_id);

/* Stable lower-case name of a reason ("ok", "forged", ...); "?" if unknown. */
const char *cf_reason_name(int reason);
/* Reason id of a name as printed by cf_reason_name, or -EINVAL. */
int cf_reason_from_name(const char *name);
/* Positive errno a reason is reported with (0 for ok, EINVAL if unknown). */
int cf_reason_errno(int reason);
/* Exit status of the capfence CLI for a reason (0 ok, 1 if unknown). */
int cf_reason_exit(int reason);

/* ---- constraints -------------------------------------------------------- */

/*
 * One constraint. NET ranges are kept in host order (ports); addr is in
 * network order as in the uapi struct. PATH is a NUL-terminated absolute,
 * normalized path of 1..CAPFENCE_PATH_MAX bytes.
 */
struct cf_constraint {
	uint8_t kind;			/* enum capfence_constraint_kind */
	union {
		struct capfence_net_range net;
		struct {
			uint8_t len;	/* strlen(s) */
			char s[CAPFENCE_PATH_MAX + 1];
		} path;
	};
};

/*
 * Parse one constraint: "10.0.0.0/8", "10.1.2.3" (= /32), "10.0.0.0/8:443",
 * "10.0.0.0/8:1000-2000", "[::1]/128:80", "::1/128", "/srv/data".
 * Rejects host bits, bad prefixes, port 0, reversed ranges, ports > 65535,
 * and non-normalized or over-long paths. -EINVAL on error.
 */
int cf_constraint_parse(const char *s, struct cf_constraint *c,
			char *err, size_t errlen);
/* Print the canonical text form; returns its length or -ENOSPC. */
int cf_constraint_format(const struct cf_constraint *c, char *buf, size_t len);
/*
 * Check that c is well formed and canonical (what a decoder accepts);
 * 0 or -EINVAL with a message.
 */
int cf_constraint_check(const struct cf_constraint *c, char *err,
			size_t errlen);
/* True iff c admits exactly the same targets as d. */
bool cf_constraint_equal(const struct cf_constraint *c,
			 const struct cf_constraint *d);
/* True iff everything inner admits is admitted by outer (same kind only). */
bool cf_constraint_contains(const struct cf_constraint *outer,
			    const struct cf_constraint *inner);
/* True iff NET constraint c admits address addr (network order) of family 4/6. */
bool cf_constraint_admits_addr(const struct cf_constraint *c, int family,
			       const uint8_t *addr);
/* True iff NET constraint c admits port (host order). */
bool cf_constraint_admits_port(const struct cf_constraint *c,
			       unsigned int port);
/*
 * True iff PATH constraint c admits path (prefix on component boundary).
 * path must already be resolved (no "..", no symlinks): this is a string
 * comparison.
 */
bool cf_constraint_admits_path(const struct cf_constraint *c,
			       const char *path);
/*
 * True iff every constraint of inner[] is contained in some constraint of
 * outer[]. An empty outer set is unconstrained and contains everything; an
 * empty inner set (unconstrained) fits only an empty outer set.
 */
bool cf_constraints_contained(const struct cf_constraint *outer, size_t nout,
			      const struct cf_constraint *inner, size_t nin);

/* ---- rules and epochs --------------------------------------------------- */

/* The rule of one class in an epoch. n == 0 with TOKEN is unconstrained. */
struct cf_rule {
	uint8_t class_id;		/* enum capfence_class */
	uint8_t kind;			/* enum capfence_rule_kind */
	uint8_t n;
	struct cf_constraint constraints[CAPFENCE_MAX_CONSTRAINTS];
};

/* An epoch table entry: one rule per class, indexed by class id. */
struct cf_epoch {
	uint64_t epoch_id;
	struct cf_rule rules[CAPFENCE_CLASS_MAX + 1];	/* [0] unused */
};

/*
 * Parse "CLASS=open", "CLASS=deny", "CLASS=token" or
 * "CLASS=token:C1,C2,...". Net classes take only net constraints, fs
 * classes only paths. -EINVAL on error.
 */
int cf_rule_parse(const char *s, struct cf_rule *r, char *err, size_t errlen);
/* Print the canonical text form of r; returns its length or -ENOSPC. */
int cf_rule_format(const struct cf_rule *r, char *buf, size_t len);
/*
 * True iff new_rule does not admit everything old_rule admitted, i.e. the
 * class is narrowed: open > token(larger) > token(smaller) > deny.
 * Incomparable constraint sets count as narrowing (fail safe).
 */
bool cf_rule_narrows(const struct cf_rule *old_rule,
		     const struct cf_rule *new_rule);
/*
 * True iff a token of rule r's class with constraints cs[n] fits rule r
 * (SPEC §4 row 4): r is TOKEN and the set is contained in r's set.
 */
bool cf_rule_admits_constraints(const struct cf_rule *r,
				const struct cf_constraint *cs, size_t n);

/* Initialise e: epoch_id, every class deny. */
void cf_epoch_init(struct cf_epoch *e, uint64_t epoch_id);
/*
 * Parse rules[0..n-1] into e (initialised to deny first). A duplicate or
 * unknown class is an error; the message is "rule K: ..." (1-based).
 */
int cf_epoch_parse_rules(struct cf_epoch *e, uint64_t epoch_id,
			 const char *const *rules, size_t n,
			 char *err, size_t errlen);
/*
 * Parse a rules file text: one rule per line, '#' starts a comment, blank
 * lines ignored, and an optional "epoch ID" line. epoch_id 0 means the text
 * must carry the id; otherwise a differing "epoch" line is an error.
 * Messages are "line K: ...".
 */
int cf_epoch_parse_text(struct cf_epoch *e, uint64_t epoch_id,
			const char *text, char *err, size_t errlen);
/* As cf_epoch_parse_text on the contents of a file; messages "PATH:K: ...". */
int cf_epoch_parse_file(struct cf_epoch *e, uint64_t epoch_id,
			const char *path, char *err, size_t errlen);
/* Print "epoch ID\n" and one "CLASS=RULE\n" per class; length or -ENOSPC. */
int cf_epoch_format(const struct cf_epoch *e, char *buf, size_t len);
/* True iff new_e narrows class_id relative to old_e (cf_rule_narrows). */
bool cf_epoch_narrows(const struct cf_epoch *old_e,
		      const struct cf_epoch *new_e, int class_id);

/* ---- keys ---------------------------------------------------------------- */

/*
 * A MAC key. The whole struct lives in sodium_malloc'd memory (guarded,
 * locked, read-only after set-up); st is HMAC-SHA256 already keyed, so a
 * MAC costs a state copy, one update and a final.
 */
struct cf_key;

/* Generate a random key with id (non-zero). */
int cf_key_generate(uint32_t id, struct cf_key **out);
/* Make a key from CAPFENCE_KEY_LEN raw bytes (tests, vectors). */
int cf_key_from_bytes(uint32_t id, const uint8_t *bytes, struct cf_key **out);
/* Key id. */
uint32_t cf_key_id(const struct cf_key *k);
/* Copy the raw key bytes out (e.g. for KEY_INSTALL); caller wipes them. */
void cf_key_bytes(const struct cf_key *k, uint8_t out[CAPFENCE_KEY_LEN]);
/*
 * Print the key file text "capfence-key v1\nid N\nkey <base64url>\n" into
 * buf (secret: wipe it after use). Returns its length or -ENOSPC.
 */
int cf_key_format(const struct cf_key *k, char *buf, size_t len);
/*
 * Write "capfence-key v1\nid N\nkey <base64url>\n" to path, created with
 * mode 0600; an existing file is replaced atomically (rename).
 */
int cf_key_save(const struct cf_key *k, const char *path,
		char *err, size_t errlen);
/*
 * Read a key file. -ENOENT / -EACCES / other open errors as errno;
 * -EBADMSG for a malformed file (message says which line and why).
 */
int cf_key_load(const char *path, struct cf_key **out,
		char *err, size_t errlen);
/* As cf_key_load on text already in memory. */
int cf_key_parse(const char *text, struct cf_key **out,
		 char *err, size_t errlen);
/* Wipe and free a key; NULL is fine. */
void cf_key_free(struct cf_key *k);

/* ---- tokens -------------------------------------------------------------- */

struct cf_token {
	uint8_t version;		/* CAPFENCE_TOKEN_VERSION */
	uint8_t class_id;
	uint16_t flags;
	uint32_t key_id;
	uint64_t cap_id;
	uint64_t epoch_id;
	uint8_t n;
	struct cf_constraint constraints[CAPFENCE_MAX_CONSTRAINTS];
	uint8_t mac[CAPFENCE_MAC_LEN];
};

/*
 * 0 iff t is well formed (everything cf_token_decode_bin enforces), else
 * -EBADMSG with the same message the decoder would give.
 */
int cf_token_check(const struct cf_token *t, char *err, size_t errlen);
/*
 * Canonical bytes without the MAC (the MAC input). Returns the length or
 * -ENOSPC / -EINVAL (token not well formed).
 */
int cf_token_encode_body(const struct cf_token *t, uint8_t *buf, size_t len);
/* Canonical bytes with the MAC appended; length or negative errno. */
int cf_token_encode_bin(const struct cf_token *t, uint8_t *buf, size_t len);
/*
 * Strict decoder of the canonical bytes (MAC included). -EBADMSG with a
 * distinct message for each defect: truncated, trailing bytes, version,
 * class, flags, zero ids, count, constraint kind, reserved, CIDR, path.
 */
int cf_token_decode_bin(const uint8_t *buf, size_t len, struct cf_token *t,
			char *err, size_t errlen);
/* "cf1_" + base64url without padding; length or -ENOSPC / -EINVAL. */
int cf_token_to_text(const struct cf_token *t, char *buf, size_t len);
/*
 * Parse the text form. Rejects any other prefix, whitespace, padding,
 * non-canonical base64 and over-long input, then decodes strictly.
 */
int cf_token_from_text(const char *s, struct cf_token *t,
		       char *err, size_t errlen);
/*
 * Mint a token: version 1, key k's id, cap_id (0 = random non-zero),
 * constraints cs[n] (copied, validated against the class). On failure
 * *out is left partly written.
 */
int cf_token_mint(const struct cf_key *k, int class_id, uint64_t epoch_id,
		  const struct cf_constraint *cs, size_t n, uint64_t cap_id,
		  struct cf_token *out, char *err, size_t errlen);
/* Compute the MAC of t under k into mac (t->mac is not read). */
int cf_token_compute_mac(const struct cf_key *k, const struct cf_token *t,
			 uint8_t mac[CAPFENCE_MAC_LEN]);
/*
 * 0 iff t->key_id is k's id and t->mac is the MAC of t's canonical bytes
 * (constant-time compare); -EBADMSG otherwise.
 */
int cf_token_verify(const struct cf_key *k, const struct cf_token *t);

/* ---- the delegation-time decision ---------------------------------------- */

/*
 * SPEC §4 rows 2-4 for token t delegated to a task bound to receiver:
 * FORGED (key unknown or MAC wrong), EPOCH_MISMATCH, CLASS_DENIED, or OK.
 * Rows 1, 5 and 6 need kernel state and are not decided here.
 */
enum capfence_reason cf_decide_delegation(const struct cf_key *const keys[],
					  size_t nkeys,
					  const struct cf_token *t,
					  const struct cf_epoch *receiver);

/* ---- the verified-token memo ---------------------------------------------- */

/*
 * A delegating process (an orchestrator) checks the same few tokens over
 * and over: every child of a parent receives the parent's token, and the
 * tokens it re-mints are its own. A cf_verifier remembers the canonical
 * bytes (MAC included) of tokens it has authenticated, or minted itself,
 * under a fixed set of keys, so a repeat check costs an encoding and a
 * constant-time compare instead of an HMAC. Only bytes whose MAC the library
 * computed under one of those keys are ever remembered: a forged token can
 * only miss, and then fails the full check like everywhere else.
 *
 * The keys are borrowed: they must outlive the verifier. Removing or
 * rotating a key means a new verifier. Not thread safe: one per thread.
 */
struct cf_verifier;

struct cf_verifier_stats {
	uint64_t hits;		/* checks answered from the memo */
	uint64_t misses;	/* checks that computed the MAC */
	uint64_t remembered;	/* tokens put into the memo (verified or minted) */
	uint64_t evicted;	/* remembered tokens displaced by another */
};

/*
 * slots: capacity in tokens, rounded up to a power of two of at least 4
 * (0 = 1024; at most 1 << 20).
 * Returns 0, -EINVAL (no key, too many slots) or -ENOMEM.
 */
int cf_verifier_new(const struct cf_key *const keys[], size_t nkeys,
		    size_t slots, struct cf_verifier **out);
void cf_verifier_free(struct cf_verifier *v);
/* 0 iff t is authentic under one of v's keys; -EBADMSG otherwise. */
int cf_verifier_verify(struct cf_verifier *v, const struct cf_token *t);
/* cf_decide_delegation() over v's keys, through the memo. */
enum capfence_reason cf_verifier_decide(struct cf_verifier *v,
					const struct cf_token *t,
					const struct cf_epoch *receiver);
/*
 * cf_token_mint() that also remembers the new token when k is one of v's
 * keys (so its first check is a hit). Same arguments and errors.
 */
int cf_verifier_mint(struct cf_verifier *v, const struct cf_key *k,
		     int class_id, uint64_t epoch_id,
		     const struct cf_constraint *cs, size_t n, uint64_t cap_id,
		     struct cf_token *out, char *err, size_t errlen);
void cf_verifier_get_stats(const struct cf_verifier *v,
			   struct cf_verifier_stats *st);

#endif /* LIBCAPFENCE_H */
