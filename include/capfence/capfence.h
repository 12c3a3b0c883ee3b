/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence - the library an orchestrator links to drive capfence:
 *
 *   - the pure part: classes, constraints, epoch rules, keys, tokens and
 *     the delegation-time decision of rows 2-4 of the delegation table
 *     (docs/errors.md, "Delegation"; libsodium
 *     for every cryptographic primitive);
 *   - the kernel client (struct capfence_client): every control operation
 *     of the capfence generic netlink family, typed, over libmnl;
 *   - the event subscription (struct capfence_events).
 *
 * Conventions: functions return 0 (or a length) on success and a negative
 * errno on failure. Functions that parse user input or talk to the kernel
 * take (err, errlen): on failure they write one line, without a trailing
 * newline, naming the bad input or carrying the kernel's extack message.
 * err may be NULL. The library keeps no global state; a capfence_client is
 * safe to share between threads (its requests are serialised), everything
 * else is owned by the caller. Memory the library hands out is released
 * with the release call named next to the function that returned it.
 *
 * Link with pkg-config: cc prog.c $(pkg-config --cflags --libs capfence).
 *
 * Two interfaces (docs/libcapfence.3, "THE 2 INTERFACE"): this header
 * declares libcapfence.so.1's by default, and libcapfence.so.2's when
 * CAPFENCE_API is 2 (pkg-config capfence-2 defines it). The 2 interface
 * knows no kernel limit: epochs and installed epochs are opaque handles
 * read through accessors, and each call that can grow has one entry point
 * taking a size-prefixed options struct. Both libraries are built from the
 * same sources until 2 replaces 1.
 */
#ifndef CAPFENCE_CAPFENCE_H
#define CAPFENCE_CAPFENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/capfence.h>

#ifndef CAPFENCE_API
#define CAPFENCE_API	1
#endif
#if CAPFENCE_API != 1 && CAPFENCE_API != 2
#error "CAPFENCE_API is 1 (libcapfence.so.1) or 2 (libcapfence.so.2)"
#endif
/* what this translation unit sees: one interface, or both (the library) */
#if CAPFENCE_API == 1 || defined(CAPFENCE_LIBRARY_BUILD)
#define CAPFENCE__API1	1
#else
#define CAPFENCE__API1	0
#endif
#if CAPFENCE_API == 2 || defined(CAPFENCE_LIBRARY_BUILD)
#define CAPFENCE__API2	1
#else
#define CAPFENCE__API2	0
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------ */

/* The version of the library this header belongs to (of its CAPFENCE_API). */
#define CAPFENCE__LIB2_VERSION_STRING	"2.0.0"
#if CAPFENCE_API == 2
#define CAPFENCE_LIB_VERSION_MAJOR	2
#define CAPFENCE_LIB_VERSION_MINOR	0
#define CAPFENCE_LIB_VERSION_PATCH	0
#define CAPFENCE_LIB_VERSION_STRING	CAPFENCE__LIB2_VERSION_STRING
#else
#define CAPFENCE_LIB_VERSION_MAJOR	1
#define CAPFENCE_LIB_VERSION_MINOR	7
#define CAPFENCE_LIB_VERSION_PATCH	0
#define CAPFENCE_LIB_VERSION_STRING	"1.7.0"
#endif
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define CAPFENCE_LIB_VERSION		(CAPFENCE_LIB_VERSION_MAJOR * 10000 + \
					 CAPFENCE_LIB_VERSION_MINOR * 100 + \
					 CAPFENCE_LIB_VERSION_PATCH)

/* The version of the library actually loaded: "1.7.0" (2: "2.0.0"). */
const char *capfence_version(void);
/* The same as a number (CAPFENCE_LIB_VERSION of the loaded library). */
unsigned int capfence_version_number(void);

/* Largest error line the library writes (callers may pass less). */
#define CAPFENCE_ERR_MAX		256

/* Bytes of the canonical encoding before the MAC, at most. */
#define CAPFENCE_TOKEN_BODY_MAX	(CAPFENCE_TOKEN_MAX_LEN - CAPFENCE_MAC_LEN)
/* Longest text form: prefix + base64url(no padding) of the longest token. */
#define CAPFENCE_TOKEN_TEXT_MAX	(sizeof(CAPFENCE_TOKEN_PREFIX) - 1 + \
				 (CAPFENCE_TOKEN_MAX_LEN * 4 + 2) / 3)
/* Longest printed constraint ("[v6]/128:65535-65535" or a path), with NUL. */
#define CAPFENCE_CONSTRAINT_TEXT_MAX	(CAPFENCE_PATH_MAX + 1)
/* Longest printed rule: class, "=token:", constraints and commas, NUL. */
#define CAPFENCE_RULE_TEXT_MAX	(32 + CAPFENCE_MAX_CONSTRAINTS * \
				 CAPFENCE_CONSTRAINT_TEXT_MAX)

/* ---- classes and reasons ---------------------------------------------- */

/* Class id of a name such as "net:connect", or -EINVAL if unknown. */
int capfence_class_from_name(const char *name);
/* Name of a class id, or NULL if the id is not a known class. */
const char *capfence_class_name(int class_id);
/*
 * True iff class_id is a known class whose constraints are NET: the net:*
 * classes (CIDRs) and vsock:* (CIDs, family CAPFENCE_FAMILY_VSOCK).
 */
bool capfence_class_is_net(int class_id);
/* True iff class_id is a known class (1..CAPFENCE_CLASS_MAX). */
bool capfence_class_valid(int class_id);

#if CAPFENCE__API1
/*
 * Room for classes in the structs indexed by class id (struct
 * capfence_epoch, struct capfence_epoch_info; since 1.4): ids
 * 0..CAPFENCE_CLASS_SLOTS - 1. A class added to the uapi enum takes a free
 * slot, so those structs keep their size and a program built against an
 * older header keeps working with a newer library; slots above the
 * library's classes are unused (zero). Programs built against 1.3 or
 * earlier (CAPFENCE_CLASS_MAX + 1 == 5 slots) call the functions of the
 * older symbol versions, which convert.
 */
#define CAPFENCE_CLASS_SLOTS		16
/*
 * The classes the loaded library knows: ids 1..capfence_class_count()
 * (its CAPFENCE_CLASS_MAX, which may be above the header's); and its
 * CAPFENCE_CLASS_SLOTS (since 1.4). Bindings size their structs from these.
 */
unsigned int capfence_class_slots(void);
#endif /* CAPFENCE__API1 */
/* The classes the loaded library knows: ids 1..capfence_class_count(). */
unsigned int capfence_class_count(void);
/*
 * sizeof() of the public struct named ("capfence_rule", "capfence_token",
 * ... without "struct "), as the loaded library was built, for bindings
 * that mirror a struct; 0 for a name it does not know (since 1.4), and in
 * the 2 interface for the opaque ones (capfence_epoch...).
 */
size_t capfence_struct_size(const char *name);

/* Stable lower-case name of a reason ("ok", "forged", ...); "?" if unknown. */
const char *capfence_reason_name(int reason);
/* Reason id of a name as printed by capfence_reason_name, or -EINVAL. */
int capfence_reason_from_name(const char *name);
/* Positive errno a reason is reported with (0 for ok, EINVAL if unknown). */
int capfence_reason_errno(int reason);
/* Exit status of the capfence CLI for a reason (0 ok, 1 if unknown). */
int capfence_reason_exit(int reason);

/* ---- constraints -------------------------------------------------------- */

/*
 * One constraint. NET ranges are kept in host order (ports); addr is in
 * network order as in the uapi struct. PATH is a NUL-terminated absolute,
 * normalized path of 1..CAPFENCE_PATH_MAX bytes.
 */
struct capfence_constraint {
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
 * "10.0.0.0/8:1000-2000", "[::1]/128:80", "::1/128", "/srv/data"; a vsock
 * CID with optional ports, "cid:2", "cid:2:1024-2048", "cid:any:52" (NET,
 * family CAPFENCE_FAMILY_VSOCK, prefix 32, or 0 for any).
 * Rejects host bits, bad prefixes, port 0, reversed ranges, ports > 65535,
 * and non-normalized or over-long paths. -EINVAL on error.
 */
int capfence_constraint_parse(const char *s, struct capfence_constraint *c,
			char *err, size_t errlen);
/* Print the canonical text form; returns its length or -ENOSPC. */
int capfence_constraint_format(const struct capfence_constraint *c, char *buf, size_t len);
/*
 * Check that c is well formed and canonical (what a decoder accepts);
 * 0 or -EINVAL with a message.
 */
int capfence_constraint_check(const struct capfence_constraint *c, char *err,
			size_t errlen);
/* True iff c admits exactly the same targets as d. */
bool capfence_constraint_equal(const struct capfence_constraint *c,
			 const struct capfence_constraint *d);
/* True iff everything inner admits is admitted by outer (same kind only). */
bool capfence_constraint_contains(const struct capfence_constraint *outer,
			    const struct capfence_constraint *inner);
/* True iff NET constraint c admits address addr (network order) of family 4/6. */
bool capfence_constraint_admits_addr(const struct capfence_constraint *c, int family,
			       const uint8_t *addr);
/* True iff NET constraint c admits port (host order). */
bool capfence_constraint_admits_port(const struct capfence_constraint *c,
			       unsigned int port);
/*
 * True iff PATH constraint c admits path (prefix on component boundary).
 * path must already be resolved (no "..", no symlinks): this is a string
 * comparison.
 */
bool capfence_constraint_admits_path(const struct capfence_constraint *c,
			       const char *path);
/*
 * True iff every constraint of inner[] is contained in some constraint of
 * outer[]. An empty outer set is unconstrained and contains everything; an
 * empty inner set (unconstrained) fits only an empty outer set.
 */
bool capfence_constraints_contained(const struct capfence_constraint *outer, size_t nout,
			      const struct capfence_constraint *inner, size_t nin);

/* ---- rules and epochs --------------------------------------------------- */

/* The rule of one class in an epoch. n == 0 with TOKEN is unconstrained. */
struct capfence_rule {
	uint8_t class_id;		/* enum capfence_class */
	uint8_t kind;			/* enum capfence_rule_kind */
	uint8_t n;
	struct capfence_constraint constraints[CAPFENCE_MAX_CONSTRAINTS];
};

/*
 * An epoch table entry: one rule per class, indexed by class id ([0] and
 * the slots above the library's classes unused). Its size does not depend
 * on the number of classes (CAPFENCE_CLASS_SLOTS). In the 2 interface it
 * is opaque: capfence_epoch_new() makes one, the functions below read and
 * write it, whatever the number of classes.
 */
#if CAPFENCE__API1
struct capfence_epoch {
	uint64_t epoch_id;
	struct capfence_rule rules[CAPFENCE_CLASS_SLOTS];
};
#else
struct capfence_epoch;
#endif

/*
 * Parse "CLASS=open", "CLASS=deny", "CLASS=token" or
 * "CLASS=token:C1,C2,...". Net classes take only net constraints, fs
 * classes only paths. -EINVAL on error.
 */
int capfence_rule_parse(const char *s, struct capfence_rule *r, char *err, size_t errlen);
/* Print the canonical text form of r; returns its length or -ENOSPC. */
int capfence_rule_format(const struct capfence_rule *r, char *buf, size_t len);
/*
 * True iff new_rule does not admit everything old_rule admitted, i.e. the
 * class is narrowed: open > token(larger) > token(smaller) > deny.
 * Incomparable constraint sets count as narrowing (fail safe).
 */
bool capfence_rule_narrows(const struct capfence_rule *old_rule,
		     const struct capfence_rule *new_rule);
/*
 * True iff a token of rule r's class with constraints cs[n] fits rule r
 * (row 4 of the delegation table, docs/errors.md): r is TOKEN and the set
 * is contained in r's set.
 */
bool capfence_rule_admits_constraints(const struct capfence_rule *r,
				const struct capfence_constraint *cs, size_t n);

#if CAPFENCE__API1
/* Initialise e: epoch_id, every class deny. */
void capfence_epoch_init(struct capfence_epoch *e, uint64_t epoch_id);
#endif
/*
 * Parse rules[0..n-1] into e (initialised to deny first). A duplicate or
 * unknown class is an error; the message is "rule K: ..." (1-based).
 */
int capfence_epoch_parse_rules(struct capfence_epoch *e, uint64_t epoch_id,
			 const char *const *rules, size_t n,
			 char *err, size_t errlen);
/*
 * Parse a rules file text: one rule per line, '#' starts a comment, blank
 * lines ignored, and an optional "epoch ID" line. epoch_id 0 means the text
 * must carry the id; otherwise a differing "epoch" line is an error.
 * Messages are "line K: ...".
 */
int capfence_epoch_parse_text(struct capfence_epoch *e, uint64_t epoch_id,
			const char *text, char *err, size_t errlen);
/* As capfence_epoch_parse_text on the contents of a file; messages "PATH:K: ...". */
int capfence_epoch_parse_file(struct capfence_epoch *e, uint64_t epoch_id,
			const char *path, char *err, size_t errlen);
/* Print "epoch ID\n" and one "CLASS=RULE\n" per class; length or -ENOSPC. */
int capfence_epoch_format(const struct capfence_epoch *e, char *buf, size_t len);
/* True iff new_e narrows class_id relative to old_e (capfence_rule_narrows). */
bool capfence_epoch_narrows(const struct capfence_epoch *old_e,
		      const struct capfence_epoch *new_e, int class_id);

#if CAPFENCE__API2
/*
 * The 2 interface's epoch handle. capfence_epoch_new() makes an epoch
 * epoch_id with every class denied (0 or -ENOMEM); the parsers, the
 * learner and the accessors below fill it. capfence_epoch_dup() copies
 * one. Free with capfence_epoch_free() (NULL is fine).
 */
int capfence_epoch_new(uint64_t epoch_id, struct capfence_epoch **out);
int capfence_epoch_dup(const struct capfence_epoch *e,
		       struct capfence_epoch **out);
void capfence_epoch_free(struct capfence_epoch *e);
uint64_t capfence_epoch_id(const struct capfence_epoch *e);
/*
 * The rule of class_id (-EINVAL for a class the library does not know),
 * and setting one: r must parse as its class's rule would (-EINVAL with
 * a message otherwise); the other classes are left as they are.
 */
int capfence_epoch_rule(const struct capfence_epoch *e, int class_id,
			struct capfence_rule *out);
int capfence_epoch_set_rule(struct capfence_epoch *e,
			    const struct capfence_rule *r, char *err,
			    size_t errlen);
#endif

/* ---- keys ---------------------------------------------------------------- */

/*
 * A MAC key. The whole struct lives in sodium_malloc'd memory (guarded,
 * locked, read-only after set-up); st is HMAC-SHA256 already keyed, so a
 * MAC costs a state copy, one update and a final.
 */
struct capfence_key;

/* Generate a random key with id (non-zero). */
int capfence_key_generate(uint32_t id, struct capfence_key **out);
/* Make a key from CAPFENCE_KEY_LEN raw bytes (tests, vectors). */
int capfence_key_from_bytes(uint32_t id, const uint8_t *bytes, struct capfence_key **out);
/* Key id. */
uint32_t capfence_key_id(const struct capfence_key *k);
/* Copy the raw key bytes out (e.g. for KEY_INSTALL); caller wipes them. */
void capfence_key_bytes(const struct capfence_key *k, uint8_t out[CAPFENCE_KEY_LEN]);
/*
 * Print the key file text "capfence-key v1\nid N\nkey <base64url>\n" into
 * buf (secret: wipe it after use). Returns its length or -ENOSPC.
 */
int capfence_key_format(const struct capfence_key *k, char *buf, size_t len);
/*
 * Write "capfence-key v1\nid N\nkey <base64url>\n" to path, created with
 * mode 0600; an existing file is replaced atomically (rename).
 */
int capfence_key_save(const struct capfence_key *k, const char *path,
		char *err, size_t errlen);
/*
 * Read a key file. -ENOENT / -EACCES / other open errors as errno;
 * -EBADMSG for a malformed file (message says which line and why).
 */
int capfence_key_load(const char *path, struct capfence_key **out,
		char *err, size_t errlen);
/* As capfence_key_load on text already in memory. */
int capfence_key_parse(const char *text, struct capfence_key **out,
		 char *err, size_t errlen);
/* Wipe and free a key; NULL is fine. */
void capfence_key_free(struct capfence_key *k);

/* ---- tokens -------------------------------------------------------------- */

struct capfence_token {
	uint8_t version;		/* CAPFENCE_TOKEN_VERSION */
	uint8_t class_id;
	uint16_t flags;
	uint32_t key_id;
	uint64_t cap_id;
	uint64_t epoch_id;
	uint8_t n;
	struct capfence_constraint constraints[CAPFENCE_MAX_CONSTRAINTS];
	uint8_t mac[CAPFENCE_MAC_LEN];
};

/*
 * 0 iff t is well formed (everything capfence_token_decode_bin enforces), else
 * -EBADMSG with the same message the decoder would give.
 */
int capfence_token_check(const struct capfence_token *t, char *err, size_t errlen);
/*
 * Canonical bytes without the MAC (the MAC input). Returns the length or
 * -ENOSPC / -EINVAL (token not well formed).
 */
int capfence_token_encode_body(const struct capfence_token *t, uint8_t *buf, size_t len);
/* Canonical bytes with the MAC appended; length or negative errno. */
int capfence_token_encode_bin(const struct capfence_token *t, uint8_t *buf, size_t len);
/*
 * Strict decoder of the canonical bytes (MAC included). -EBADMSG with a
 * distinct message for each defect: truncated, trailing bytes, version,
 * class, flags, zero ids, count, constraint kind, reserved, CIDR, path.
 */
int capfence_token_decode_bin(const uint8_t *buf, size_t len, struct capfence_token *t,
			char *err, size_t errlen);
/* "cf1_" + base64url without padding; length or -ENOSPC / -EINVAL. */
int capfence_token_to_text(const struct capfence_token *t, char *buf, size_t len);
/*
 * Parse the text form. Rejects any other prefix, whitespace, padding,
 * non-canonical base64 and over-long input, then decodes strictly.
 */
int capfence_token_from_text(const char *s, struct capfence_token *t,
		       char *err, size_t errlen);
/*
 * Mint a token: version 1, key k's id, cap_id (0 = random non-zero),
 * constraints cs[n] (copied, validated against the class). On failure
 * *out is left partly written.
 */
int capfence_token_mint(const struct capfence_key *k, int class_id, uint64_t epoch_id,
		  const struct capfence_constraint *cs, size_t n, uint64_t cap_id,
		  struct capfence_token *out, char *err, size_t errlen);
/* Compute the MAC of t under k into mac (t->mac is not read). */
int capfence_token_compute_mac(const struct capfence_key *k, const struct capfence_token *t,
			 uint8_t mac[CAPFENCE_MAC_LEN]);
/*
 * 0 iff t->key_id is k's id and t->mac is the MAC of t's canonical bytes
 * (constant-time compare); -EBADMSG otherwise.
 */
int capfence_token_verify(const struct capfence_key *k, const struct capfence_token *t);

/* ---- the delegation-time decision ---------------------------------------- */

/*
 * Rows 2-4 of the delegation table (docs/errors.md) for token t delegated
 * to a task bound to receiver:
 * FORGED (key unknown or MAC wrong), EPOCH_MISMATCH, CLASS_DENIED, or OK.
 * Rows 1, 5 and 6 need kernel state and are not decided here.
 */
enum capfence_reason capfence_decide_delegation(const struct capfence_key *const keys[],
					  size_t nkeys,
					  const struct capfence_token *t,
					  const struct capfence_epoch *receiver);

/* ---- the verified-token memo ---------------------------------------------- */

/*
 * A delegating process (an orchestrator) checks the same few tokens over
 * and over: every child of a parent receives the parent's token, and the
 * tokens it re-mints are its own. A capfence_verifier remembers the canonical
 * bytes (MAC included) of tokens it has authenticated, or minted itself,
 * under a fixed set of keys, so a repeat check costs an encoding and a
 * constant-time compare instead of an HMAC. Only bytes whose MAC the library
 * computed under one of those keys are ever remembered: a forged token can
 * only miss, and then fails the full check like everywhere else.
 *
 * The keys are borrowed: they must outlive the verifier. Removing or
 * rotating a key means a new verifier. Not thread safe: one per thread.
 */
struct capfence_verifier;

struct capfence_verifier_stats {
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
int capfence_verifier_new(const struct capfence_key *const keys[], size_t nkeys,
		    size_t slots, struct capfence_verifier **out);
void capfence_verifier_free(struct capfence_verifier *v);
/* 0 iff t is authentic under one of v's keys; -EBADMSG otherwise. */
int capfence_verifier_verify(struct capfence_verifier *v, const struct capfence_token *t);
/* capfence_decide_delegation() over v's keys, through the memo. */
enum capfence_reason capfence_verifier_decide(struct capfence_verifier *v,
					const struct capfence_token *t,
					const struct capfence_epoch *receiver);
/*
 * capfence_token_mint() that also remembers the new token when k is one of v's
 * keys (so its first check is a hit). Same arguments and errors.
 */
int capfence_verifier_mint(struct capfence_verifier *v, const struct capfence_key *k,
		     int class_id, uint64_t epoch_id,
		     const struct capfence_constraint *cs, size_t n, uint64_t cap_id,
		     struct capfence_token *out, char *err, size_t errlen);
void capfence_verifier_get_stats(const struct capfence_verifier *v,
			   struct capfence_verifier_stats *st);

/* ---- the kernel client ---------------------------------------------------- */

/*
 * A handle on the capfence generic netlink family: one netlink socket with
 * the family resolved. Requests on one handle are serialised by a mutex, so
 * threads may share it; a thread wanting parallel requests opens its own.
 * After fork() the child must not use the parent's handle (open its own).
 */
struct capfence_client;

/*
 * Open a handle. -ENOENT when capfence.ko is not loaded (the family is
 * unknown), other negative errnos from socket(2)/bind(2), -ENOMEM.
 */
int capfence_client_open(struct capfence_client **out, char *err,
			 size_t errlen);
/* Close a handle; NULL is fine. */
void capfence_client_close(struct capfence_client *c);

/* The module's state and counters (CAPFENCE_CMD_STATUS_GET). */
#define CAPFENCE_STATUS_REASONS	32	/* room for reason ids, fixed ABI */
struct capfence_status {
	char version[32];	/* module version */
	uint32_t abi;		/* CAPFENCE_GENL_VERSION of the module */
	bool attached;		/* BPF-LSM hooks attached */
	uint64_t fence, max_epoch, active_epoch;
	uint64_t bound, held, delegate_ok, exercise_allow;
	uint64_t delegate_reject[CAPFENCE_STATUS_REASONS];	/* by reason */
	uint64_t exercise_deny[CAPFENCE_STATUS_REASONS];	/* by reason */
	uint64_t cred_bytes, cap_bytes;
};

int capfence_client_status(struct capfence_client *c,
			   struct capfence_status *st, char *err,
			   size_t errlen);

#if CAPFENCE__API1
/* Install key k (its id and bytes) in the module; remove key id. */
int capfence_client_key_install(struct capfence_client *c,
				const struct capfence_key *k, char *err,
				size_t errlen);
int capfence_client_key_remove(struct capfence_client *c, uint32_t key_id,
			       char *err, size_t errlen);

/* Install epoch e (its id and every class rule); activate an installed id. */
int capfence_client_epoch_install(struct capfence_client *c,
				  const struct capfence_epoch *e, char *err,
				  size_t errlen);
int capfence_client_epoch_activate(struct capfence_client *c,
				   uint64_t epoch_id, char *err,
				   size_t errlen);
/*
 * Retire (free) an installed epoch (since 1.5): -EBUSY for the active
 * epoch or one a task is bound or set to bind to, or whose capabilities
 * are held; -ENOENT for one not installed (or retired). Its id stays
 * used: a new epoch needs a higher one.
 */
int capfence_client_epoch_retire(struct capfence_client *c, uint64_t epoch_id,
				 char *err, size_t errlen);

/* An installed epoch as the module reports it. */
struct capfence_epoch_info {
	struct capfence_epoch e;
	bool active;
	uint64_t fenced_at[CAPFENCE_CLASS_SLOTS];	/* per class id, 0 = never */
};

/* One installed epoch; -ENOENT when epoch_id is not installed. */
int capfence_client_epoch_get(struct capfence_client *c, uint64_t epoch_id,
			      struct capfence_epoch_info *out, char *err,
			      size_t errlen);
/*
 * Every installed epoch, in the module's order: *out is an array of *n
 * entries (NULL when none) to release with capfence_free().
 */
int capfence_client_epoch_list(struct capfence_client *c,
			       struct capfence_epoch_info **out, size_t *n,
			       char *err, size_t errlen);
#endif /* CAPFENCE__API1 */
/* Release memory the library allocated for the caller; NULL is fine. */
void capfence_free(void *p);

/*
 * The typed result of a decision (DELEGATE, EXEC_SET, REVOKE, spawn).
 * reason is the kernel's CAPFENCE_A_REASON (enum capfence_reason), or -1
 * when the request failed before a decision (no reason in the reply):
 * then err says why (-ENOENT, -EPERM, -EINVAL...). For EPOCH_MISMATCH,
 * epoch_id is the receiver's epoch: re-mint under it.
 */
struct capfence_result {
	int err;		/* 0 or the request's negative errno */
	int reason;		/* enum capfence_reason, or -1 */
	uint64_t cap_id;	/* the token's cap_id */
	uint64_t epoch_id;	/* the receiver's (or exec) epoch */
	uint64_t fence;		/* the module's fence after the request */
	char message[CAPFENCE_ERR_MAX];	/* extack text, or "" */
};

/* Delegation flags. */
#define CAPFENCE_DELEGATE_DRY_RUN	0x1u	/* decide only, grant nothing */

#if CAPFENCE__API1

/*
 * Delegate token t to task pid (from_pid: the delegating task, 0 = the
 * orchestrator). Returns 0 when the kernel granted it (or, with DRY_RUN,
 * would), else the negative errno; r (required) carries the typed result.
 */
int capfence_client_delegate(struct capfence_client *c,
			     const struct capfence_token *t, uint32_t pid,
			     uint32_t from_pid, unsigned int flags,
			     struct capfence_result *r);
/*
 * capfence_client_delegate(), and when the kernel answers EPOCH_MISMATCH,
 * re-mint t under key k for the receiver's epoch (same class and
 * constraints, new random cap_id) and delegate that once. first (optional)
 * gets the first attempt's result; reminted (optional) gets the new token
 * (zeroed when there was no re-mint); r gets the final result. With k
 * NULL the mismatch is returned as it is.
 */
int capfence_client_delegate_remint(struct capfence_client *c,
				    const struct capfence_key *k,
				    const struct capfence_token *t,
				    uint32_t pid, uint32_t from_pid,
				    struct capfence_result *first,
				    struct capfence_token *reminted,
				    struct capfence_result *r);

/* Revoke cap_id everywhere (r->fence is the new fence). */
int capfence_client_revoke(struct capfence_client *c, uint64_t cap_id,
			   struct capfence_result *r);

/*
 * Set the pending exec epoch of the calling (unbound) task, with the n
 * tokens (n <= CAPFENCE_MAX_TOKENS) its next execve() holds: the kernel
 * binds the credential at that execve. r as for delegate.
 */
int capfence_client_exec_set(struct capfence_client *c, uint64_t epoch_id,
			     const struct capfence_token *tokens, size_t n,
			     struct capfence_result *r);
/*
 * Spawn a child bound to epoch_id holding tokens[n]: fork, EXEC_SET in the
 * child, execve(path, argv, envp) (envp NULL: the caller's environment;
 * path without '/' is searched in PATH). Returns 0 with *pid set once the
 * child has exec'd and the module has it bound (or it is already gone);
 * else nothing runs and the negative errno is returned:
 * the EXEC_SET refusal (r says why), or the exec's errno (-ENOENT...).
 * The child is the caller's to reap.
 */
int capfence_client_spawn_bound(struct capfence_client *c, uint64_t epoch_id,
				const struct capfence_token *tokens, size_t n,
				const char *path, char *const argv[],
				char *const envp[], pid_t *pid,
				struct capfence_result *r);
#endif /* CAPFENCE__API1 */

/* ---- syscall policy: OCI and container engines' seccomp profiles ----------- */

/* The most bytes of profile text capfence_seccomp_compile() takes. */
#define CAPFENCE_SECCOMP_PROFILE_MAX	(1 << 20)

/*
 * An epoch's syscall policy, compiled: the classic BPF program the module
 * keeps with the epoch, its SHA-256 digest, and one note per profile rule
 * whose refusing action capfence rewrote to SCMP_ACT_ERRNO(EACCES).
 */
struct capfence_seccomp;

/*
 * Compile the OCI runtime-spec linux.seccomp profile text[len] (JSON:
 * defaultAction, defaultErrnoRet, architectures, flags, syscalls[] with
 * names, action, errnoRet, args), or a container engine's profile file as
 * shipped (moby's default.json, containers-common's seccomp.json: also
 * defaultErrno, archMap, and per rule errno, comment, includes/excludes),
 * for epoch e with libseccomp. An engine's rules are resolved as the
 * engines resolve them on x86_64 (Go's "amd64") for the engines' default
 * capability set and the running kernel (see capfence_seccomp_compile_opts);
 * a rule left out, and a name of another architecture's system call, are
 * noted. Every refusing action (SCMP_ACT_KILL*, _TRAP, _TRACE, _ERRNO with
 * any errno but ENOSYS) becomes SCMP_ACT_ERRNO(EACCES), as does a call of
 * an architecture the profile does not list; SCMP_ACT_ERRNO(ENOSYS) is
 * kept (it answers "no such call", and libc falls back on it). -EINVAL with a one-line message for bad JSON, an
 * unknown key, syscall, action, op or architecture (x86_64, x86 and x32
 * are supported), SCMP_ACT_NOTIFY, and a profile that denies a system call
 * that a class e grants (open or token) needs (the message names the call
 * and the class); -E2BIG above CAPFENCE_SECCOMP_PROFILE_MAX bytes or
 * CAPFENCE_SECCOMP_MAX_INSNS instructions; -ENOMEM.
 */
#if CAPFENCE__API1
int capfence_seccomp_compile(const char *text, size_t len,
			     const struct capfence_epoch *e,
			     struct capfence_seccomp **out, char *err,
			     size_t errlen);
/* As capfence_seccomp_compile() on a file; messages start with its path. */
int capfence_seccomp_compile_file(const char *path,
				  const struct capfence_epoch *e,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen);
#endif

/* What an engine's profile is resolved for; sz first, as libbpf's opts. */
struct capfence_seccomp_opts {
	size_t sz;		/* sizeof(struct capfence_seccomp_opts) */
	/* comma-separated CAP_ names; NULL: the engines' default set (Docker's:
	 * CAP_AUDIT_WRITE, CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID,
	 * CAP_KILL, CAP_MKNOD, CAP_NET_BIND_SERVICE, CAP_NET_RAW, CAP_SETFCAP,
	 * CAP_SETGID, CAP_SETPCAP, CAP_SETUID, CAP_SYS_CHROOT) */
	const char *caps;
	const char *kernel;	/* "MAJOR.MINOR" for minKernel; NULL: running */
	/*
	 * true: the program refuses every new seccomp filter of a bound task
	 * (seccomp(2) SECCOMP_SET_MODE_STRICT and _FILTER, prctl(2)
	 * PR_SET_SECCOMP) with EACCES, so that the epoch's program is its only
	 * one. false (and with a NULL opts): a bound task may stack filters of
	 * its own above the epoch's (sshd's, bwrap's, QEMU's sandboxes); seccomp
	 * takes the most restrictive answer of all, so they only ever refuse
	 * more, and the module checks at every exec that the epoch's program
	 * is still in the task's chain.
	 */
	bool no_new_filters;
};
/* capfence_seccomp_compile() and _file() resolved for opts (NULL: defaults). */
int capfence_seccomp_compile_opts(const char *text, size_t len,
				  const struct capfence_epoch *e,
				  const struct capfence_seccomp_opts *opts,
				  struct capfence_seccomp **out, char *err,
				  size_t errlen);
int capfence_seccomp_compile_file_opts(const char *path,
				       const struct capfence_epoch *e,
				       const struct capfence_seccomp_opts *opts,
				       struct capfence_seccomp **out, char *err,
				       size_t errlen);
/*
 * The notes: how many, and note i: a rewrite ("syscalls[3] (ptrace):
 * SCMP_ACT_KILL -> SCMP_ACT_ERRNO(EACCES)"), an answer kept ("...:
 * SCMP_ACT_ERRNO(ENOSYS) kept ..."), or a rule or name left out ("...:
 * left out (needs CAP_SYS_ADMIN)"), or io_uring refused whole because the
 * profile refuses a call one of its opcodes performs ("io_uring refused
 * (ENOSYS): the profile refuses socket (IORING_OP_SOCKET)").
 */
size_t capfence_seccomp_notes(const struct capfence_seccomp *s);
const char *capfence_seccomp_note(const struct capfence_seccomp *s, size_t i);
/* The program (struct sock_filter[], *len bytes) and its SHA-256. */
const void *capfence_seccomp_program(const struct capfence_seccomp *s,
				     size_t *len);
void capfence_seccomp_digest(const struct capfence_seccomp *s,
			     uint8_t digest[CAPFENCE_SECCOMP_DIGEST_LEN]);
void capfence_seccomp_free(struct capfence_seccomp *s);
/*
 * Load prog[len] as the calling thread's newest seccomp filter, with
 * no_new_privs and without SECCOMP_FILTER_FLAG_LOG, as the module requires
 * of a task it binds to an epoch with a syscall policy. Async-signal-safe (for
 * a child between fork and exec). 0 or -errno.
 */
int capfence_seccomp_apply(const void *prog, size_t len);

#if CAPFENCE__API1
/* Install epoch e with the syscall policy s (NULL: none). */
int capfence_client_epoch_install_seccomp(struct capfence_client *c,
					  const struct capfence_epoch *e,
					  const struct capfence_seccomp *s,
					  char *err, size_t errlen);
#endif

/* An installed epoch's syscall policy as the module keeps it. */
struct capfence_seccomp_info {
	uint32_t insns;		/* 0: the epoch has no syscall policy */
	uint8_t digest[CAPFENCE_SECCOMP_DIGEST_LEN];
	void *prog;		/* insns * 8 bytes; release with capfence_free() */
	size_t len;		/* bytes of prog */
};

/* The syscall policy of epoch_id; -ENOENT when it is not installed. */
int capfence_client_epoch_seccomp(struct capfence_client *c, uint64_t epoch_id,
				  struct capfence_seccomp_info *out, char *err,
				  size_t errlen);

/* One held capability of a task. */
struct capfence_cap_info {
	uint64_t cap_id, epoch_id;
	uint32_t key_id;
	uint32_t from_pid;	/* delegator, 0 = orchestrator */
	uint32_t state;		/* 0 valid, else enum capfence_reason */
	int class_id;
	size_t n;
	struct capfence_constraint constraints[CAPFENCE_MAX_CONSTRAINTS];
};

/* A task's binding and holdings (CAPFENCE_CMD_TASK_GET). */
struct capfence_task_info {
	uint32_t pid;
	uint64_t epoch_id;		/* 0 = not bound */
	uint64_t pending_epoch_id;	/* epoch the next execve binds, or 0 */
	uint64_t fence;
	size_t n;
	struct capfence_cap_info *caps;	/* n entries; capfence_task_release() */
};

/* -ESRCH when there is no such task. */
int capfence_client_task_get(struct capfence_client *c, uint32_t pid,
			     struct capfence_task_info *out, char *err,
			     size_t errlen);
/* Free out->caps and zero *out; a zeroed struct is fine. */
void capfence_task_release(struct capfence_task_info *t);

/*
 * Hand the module the BPF links of its LSM programs (fds of bpf_link's),
 * or take them back (-EBUSY while tasks are bound). Loading the programs
 * is the caller's (the capfence CLI embeds them).
 */
int capfence_client_hooks_attach(struct capfence_client *c,
				 const int *link_fds, size_t n, char *err,
				 size_t errlen);
int capfence_client_hooks_detach(struct capfence_client *c, char *err,
				 size_t errlen);

/*
 * Low level: one hand-built request. msg is a struct nlmsghdr followed by
 * a struct genlmsghdr and attributes, whose nlmsg_type is
 * capfence_client_family(c); the library sets nlmsg_seq and nlmsg_pid,
 * sends it and hands every reply message to cb (a libmnl mnl_cb_t: return
 * 1 to go on, 0 to stop, -1 with errno set for an error) until the ACK or
 * the end of a dump. Returns 0 or the negative errno (extack in err).
 */
struct nlmsghdr;
typedef int (*capfence_msg_cb)(const struct nlmsghdr *nlh, void *arg);
uint16_t capfence_client_family(const struct capfence_client *c);
int capfence_client_request(struct capfence_client *c, struct nlmsghdr *msg,
			    capfence_msg_cb cb, void *arg, char *err,
			    size_t errlen);

/* ---- fleet: the kernel side (since 1.1) ------------------------------------- */

/*
 * A host of a fleet applies the fleet store's changes in revision order
 * (the "Fleet" block of <linux/capfence.h>, docs/design.md "Fleet"). The
 * _at variants of the change commands carry the fleet revision rev: the
 * change and the revision are applied together, only if rev is above the
 * module's (else -EALREADY). rev 0 sends no revision (the plain call).
 */
#if CAPFENCE__API1
int capfence_client_key_install_at(struct capfence_client *c,
				   const struct capfence_key *k, uint64_t rev,
				   char *err, size_t errlen);
int capfence_client_key_remove_at(struct capfence_client *c, uint32_t key_id,
				  uint64_t rev, char *err, size_t errlen);
int capfence_client_epoch_install_at(struct capfence_client *c,
				     const struct capfence_epoch *e,
				     uint64_t rev, char *err, size_t errlen);
int capfence_client_epoch_activate_at(struct capfence_client *c,
				      uint64_t epoch_id, uint64_t rev,
				      char *err, size_t errlen);
int capfence_client_revoke_at(struct capfence_client *c, uint64_t cap_id,
			      uint64_t rev, struct capfence_result *r);
#endif

/*
 * The change commands with options (since 1.4): one call per command, and
 * an options struct that later releases extend instead of adding _at or
 * _seccomp twins (libbpf's *_opts). sz comes first and is the caller's
 * sizeof(struct capfence_change_opts): CAPFENCE_CHANGE_OPTS(o, .fleet_rev
 * = R) declares one. A library older than the caller's header refuses
 * fields it does not know unless they are 0; a newer one reads the fields
 * the caller's sz covers and takes the rest as 0. opts may be NULL (all
 * 0). -EINVAL with a message for a bad sz or a field the command does not
 * take (seccomp outside epoch install).
 */
struct capfence_change_opts {
	size_t sz;				/* sizeof(struct capfence_change_opts) */
	uint64_t fleet_rev;			/* as the _at calls' rev; 0: none */
	const struct capfence_seccomp *seccomp;	/* epoch install only; NULL: none */
};
#define CAPFENCE_CHANGE_OPTS(name, ...)					\
	struct capfence_change_opts name = {				\
		.sz = sizeof(struct capfence_change_opts), __VA_ARGS__	\
	}

int capfence_client_key_install_opts(struct capfence_client *c,
				     const struct capfence_key *k,
				     const struct capfence_change_opts *opts,
				     char *err, size_t errlen);
int capfence_client_key_remove_opts(struct capfence_client *c, uint32_t key_id,
				    const struct capfence_change_opts *opts,
				    char *err, size_t errlen);
int capfence_client_epoch_install_opts(struct capfence_client *c,
				       const struct capfence_epoch *e,
				       const struct capfence_change_opts *opts,
				       char *err, size_t errlen);
int capfence_client_epoch_activate_opts(struct capfence_client *c,
					uint64_t epoch_id,
					const struct capfence_change_opts *opts,
					char *err, size_t errlen);
/* r as for capfence_client_revoke(); a bad opts: r->err -EINVAL, message */
int capfence_client_revoke_opts(struct capfence_client *c, uint64_t cap_id,
				const struct capfence_change_opts *opts,
				struct capfence_result *r);

/* The module's fleet state (from CAPFENCE_CMD_STATUS_GET). */
struct capfence_fleet_status {
	bool supported;		/* the module reports a fleet nest */
	uint64_t rev;		/* the module's fleet revision */
	uint32_t stale_ms;	/* 0 = fleet mode off */
	uint32_t deny_ms;
	bool confirmed;		/* a confirmation was received: age_ms valid */
	uint32_t age_ms;	/* time since the last confirmation */
	int state;		/* enum capfence_fleet_state */
	uint64_t applied;	/* changes applied at a revision */
};

int capfence_client_fleet_status(struct capfence_client *c,
				 struct capfence_fleet_status *out, char *err,
				 size_t errlen);
/* "off", "current", "stale", "deny"; "?" if unknown. */
const char *capfence_fleet_state_name(int state);

/*
 * Sandboxes (CAPFENCE_A_SANDBOX; <linux/capfence.h>): the audit budgets and
 * the credential limit, with the host's totals (STATUS_GET) or one task's
 * sandbox (TASK_GET). Denials without an audit record are counted by why:
 * over_budget (the sandbox's own), over_ceiling (the host's), lost (the
 * audit subsystem took none).
 */
struct capfence_sandbox_info {
	bool supported;		/* the module reports a sandbox nest */
	uint64_t id;		/* TASK_GET: 0 = the task has no sandbox */
	uint32_t pid;		/* TASK_GET: whose EXEC_SET made it */
	uint64_t epoch_id;	/* TASK_GET: the epoch it binds */
	uint64_t creds;		/* TASK_GET: its live credentials */
	uint32_t cred_limit;	/* credentials per sandbox, 0 = no limit */
	uint64_t cred_refused;	/* credential changes refused at the limit */
	uint64_t records;	/* denial records written */
	uint64_t over_budget, over_ceiling, lost;	/* denials not recorded */
	uint64_t reports;	/* STATUS_GET: op=suppressed records written */
	uint32_t window_ms;	/* the budget window */
	uint32_t budget;	/* records per sandbox per window */
	uint32_t floor;		/* of those, written whatever the ceiling */
	uint32_t ceiling;	/* records per host per window */
};

/*
 * The limits and the host's totals (CAPFENCE_CMD_STATUS_GET); for a bound
 * caller its own sandbox (id set), as TASK_GET of itself. -EPERM for any
 * other caller without CAP_MAC_ADMIN in the initial user namespace.
 */
int capfence_client_sandbox_status(struct capfence_client *c,
				   struct capfence_sandbox_info *out, char *err,
				   size_t errlen);
/* Task pid's sandbox (CAPFENCE_CMD_TASK_GET); -ESRCH, -EPERM as task_get. */
int capfence_client_task_sandbox(struct capfence_client *c, uint32_t pid,
				 struct capfence_sandbox_info *out, char *err,
				 size_t errlen);

/* ---- the learner: a policy from a run, and its proof by rerun ------------ */

/*
 * What a learner saw of its command's sandbox (since 1.6). The module's
 * counts (records, over_budget, over_ceiling, lost) are read from the
 * exited command; received is what the audit stream delivered of those
 * records, missing what it did not within the wait, overflows the times
 * the stream's socket overflowed (records of every sandbox lost).
 */
struct capfence_learn_stats {
	uint64_t epoch_id;	/* the epoch the command ran bound to */
	uint64_t sandbox_id;	/* its sandbox */
	int status;		/* its wait status */
	uint64_t records;	/* records the module wrote for the sandbox */
	uint64_t received, missing, overflows;
	uint64_t over_budget, over_ceiling, lost;	/* exercises without one */
	uint64_t learned;	/* op=learn records */
	uint64_t denied;	/* refusal records (op=exercise, syscall...) */
	bool counts_unknown;	/* the sandbox's counts could not be read */
};

/* capfence_client_learn_run()'s options; sz first, as libbpf's opts. */
struct capfence_learn_opts {
	size_t sz;		/* sizeof(struct capfence_learn_opts) */
	uint32_t open_classes;	/* bit c: class c open, not learned */
	uint64_t epoch_id;	/* the complain epoch's id; 0: above the highest */
	unsigned int wait_ms;	/* for records after the command; 0: 5000 */
	/* since 1.7; 1.6's layout ended at wait_ms (and its tail padding) */
	uint32_t reserved;	/* ignored: a 1.6 caller's padding */
	uint32_t flags;		/* CAPFENCE_LEARN_* */
	/* coarser suggestions; 0: the narrowest (host/32 or /128, the dirs seen) */
	uint8_t prefix4;	/* IPv4 peers as their /prefix4 network (1-32) */
	uint8_t prefix6;	/* IPv6 peers as their /prefix6 network (1-128) */
	uint8_t path_depth;	/* paths cut to their first path_depth names */
};

/*
 * (since 1.7) Record the system calls the command and its descendants make (a
 * stacked seccomp filter answering SECCOMP_RET_USER_NOTIF, each call let
 * through as it is: the learner is the listener), for
 * capfence_client_learn_profile(). Needs CAP_SYS_ADMIN.
 */
#define CAPFENCE_LEARN_SYSCALLS	0x1u
/* Peers with any port, not the port seen. */
#define CAPFENCE_LEARN_ANY_PORT	0x2u

struct capfence_learn;

/*
 * Learn: install a complain epoch (every class log, or open as o says),
 * run path/argv bound to it (capfence_client_spawn_bound()), wait for it,
 * collect its sandbox's records from the audit stream (CAP_AUDIT_READ),
 * and retire the epoch. *out holds the records and counts (release with
 * capfence_client_learn_free()). A negative errno with err set when it
 * could not run; the command's own status is in the stats.
 */
int capfence_client_learn_run(struct capfence_client *c,
			      const struct capfence_learn_opts *o,
			      const char *path, char *const argv[],
			      struct capfence_learn **out, char *err,
			      size_t errlen);
#if CAPFENCE__API1
/*
 * Verify: run path/argv bound to the installed epoch_id holding
 * tokens[n], and collect its sandbox's records (its denials) likewise.
 */
int capfence_client_learn_verify(struct capfence_client *c, uint64_t epoch_id,
				 const struct capfence_token *tokens, size_t n,
				 const char *path, char *const argv[],
				 unsigned int wait_ms, struct capfence_learn **out,
				 char *err, size_t errlen);
#endif
/*
 * The narrowest epoch (id epoch_id) that admits every op=learn record:
 * a class seen is token, its constraints the directories of the paths
 * seen (generalized to their deepest common directories, at most
 * CAPFENCE_MAX_CONSTRAINTS) or the peers seen (host/32 or /128 and port;
 * any port for a bind that let the kernel pick one); a class not seen is
 * deny, and a class open while learning is open. Notes say what was
 * widened or left out, and an incomplete run. In the 2 interface out is
 * an epoch of capfence_epoch_new().
 */
int capfence_client_learn_epoch(struct capfence_learn *l, uint64_t epoch_id,
				struct capfence_epoch *out, char *err,
				size_t errlen);
/*
 * The system calls a run with CAPFENCE_LEARN_SYSCALLS saw, as an OCI
 * seccomp profile for epoch install --seccomp: default-deny answering
 * ENOSYS, each architecture seen, the names seen allowed. Writes at most
 * len bytes (NUL included) to buf and returns the profile's length, as
 * snprintf; -ENODATA for a run without CAPFENCE_LEARN_SYSCALLS, -ENOMEM.
 * Since 1.7.
 */
int capfence_client_learn_profile(const struct capfence_learn *l, char *buf,
				  size_t len);
/* How many distinct system calls (per architecture) the run saw. */
size_t capfence_client_learn_syscalls(const struct capfence_learn *l);
void capfence_client_learn_stats(const struct capfence_learn *l,
				 struct capfence_learn_stats *st);
/* The sandbox's records, as the module wrote them (from "lsm=capfence"). */
size_t capfence_client_learn_records(const struct capfence_learn *l);
const char *capfence_client_learn_record(const struct capfence_learn *l,
					 size_t i);
size_t capfence_client_learn_notes(const struct capfence_learn *l);
const char *capfence_client_learn_note(const struct capfence_learn *l,
				       size_t i);
void capfence_client_learn_free(struct capfence_learn *l);

/* What capfence_client_fleet_set() sends: the fields its flags name. */
#define CAPFENCE_FLEET_SET_REV		0x1u	/* rev (not below the module's) */
#define CAPFENCE_FLEET_SET_BOUNDS	0x2u	/* stale_ms, deny_ms */
#define CAPFENCE_FLEET_SET_FRESH	0x4u	/* a confirmation age_ms old */
#define CAPFENCE_FLEET_SET_ASKED	0x8u	/* with FRESH: asked at asked_ns
						 * (CLOCK_BOOTTIME), not age_ms */
#if CAPFENCE__API1
struct capfence_fleet_set {
	unsigned int flags;
	uint64_t rev;
	uint32_t stale_ms, deny_ms;	/* ms, <= CAPFENCE_FLEET_MAX_MS */
	uint32_t age_ms;
	uint64_t asked_ns;		/* read only with CAPFENCE_FLEET_SET_ASKED */
};

/*
 * CAPFENCE_CMD_FLEET_SET: advance the revision, set the bounds, renew the
 * freshness, in one request. -EALREADY when rev is below the module's.
 */
int capfence_client_fleet_set(struct capfence_client *c,
			      const struct capfence_fleet_set *fs, char *err,
			      size_t errlen);
#endif

#if CAPFENCE__API2
/* ---- the 2 interface: installed epochs, and one call with options each --- */

/*
 * Declare options of struct TYPE with sz set: CAPFENCE_OPTS(capfence_
 * delegate_opts, o, .from_pid = 7) (C; with no field at all, or in C++,
 * declare it zeroed and set .sz). The rules of every options struct: sz
 * is the caller's sizeof(); a library older than the caller's header
 * refuses a non-zero byte past the last field it knows, tail padding
 * included (-EINVAL, the message says which byte), a newer one takes the
 * fields sz does not cover as 0; NULL options are all 0. So options are
 * zeroed before their fields are set, as CAPFENCE_OPTS does.
 */
#define CAPFENCE_OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* An installed epoch as the module reports it (opaque). */
struct capfence_epoch_info;

/* Installed epoch epoch_id; -ENOENT when it is not installed. */
int capfence_client_epoch_info(struct capfence_client *c, uint64_t epoch_id,
			       struct capfence_epoch_info **out, char *err,
			       size_t errlen);
/* Its epoch (valid while info is), whether active, class_id's fence (0 = never). */
const struct capfence_epoch *
capfence_epoch_info_epoch(const struct capfence_epoch_info *info);
bool capfence_epoch_info_active(const struct capfence_epoch_info *info);
uint64_t capfence_epoch_info_fenced_at(const struct capfence_epoch_info *info,
				       int class_id);
void capfence_epoch_info_free(struct capfence_epoch_info *info);

/* Every installed epoch, in the module's order. */
struct capfence_epoch_list;

int capfence_client_epoch_infos(struct capfence_client *c,
				struct capfence_epoch_list **out, char *err,
				size_t errlen);
size_t capfence_epoch_list_count(const struct capfence_epoch_list *l);
/* Entry i (valid while l is); NULL past the end. */
const struct capfence_epoch_info *
capfence_epoch_list_at(const struct capfence_epoch_list *l, size_t i);
void capfence_epoch_list_free(struct capfence_epoch_list *l);

/* Retire epoch_id as capfence_client_epoch_retire() of 1; opts: fleet_rev. */
int capfence_client_epoch_retire_opts(struct capfence_client *c,
				      uint64_t epoch_id,
				      const struct capfence_change_opts *opts,
				      char *err, size_t errlen);

/* How a token is delegated. */
struct capfence_delegate_opts {
	size_t sz;		/* sizeof(struct capfence_delegate_opts) */
	uint32_t from_pid;	/* the delegating task; 0: the orchestrator */
	unsigned int flags;	/* CAPFENCE_DELEGATE_DRY_RUN */
	/*
	 * non-NULL: on EPOCH_MISMATCH re-mint the token under this key for
	 * the receiver's epoch (same class and constraints, new cap_id) and
	 * delegate that once, as the orchestrator, with the same flags: with
	 * DRY_RUN the re-minted token is decided, not granted
	 */
	const struct capfence_key *remint;
	struct capfence_result *first;		/* optional: the first answer */
	struct capfence_token *reminted;	/* optional: the new token */
};

/*
 * Delegate token t to task pid. Returns 0 when the kernel granted it (or,
 * with DRY_RUN, would), else the negative errno; r (required) carries the
 * typed result. A bad opts: r->err -EINVAL and the message.
 */
int capfence_client_delegate_opts(struct capfence_client *c,
				  const struct capfence_token *t, uint32_t pid,
				  const struct capfence_delegate_opts *opts,
				  struct capfence_result *r);

/* What a bound task starts with: exec_set, spawn_bound, learn_verify. */
struct capfence_bind_opts {
	size_t sz;		/* sizeof(struct capfence_bind_opts) */
	const struct capfence_token *tokens;	/* held from the exec on */
	size_t n;		/* <= CAPFENCE_MAX_TOKENS */
	char *const *envp;	/* spawn only; NULL: the caller's environment */
	unsigned int wait_ms;	/* learn_verify only: for records; 0: 5000 */
};

/*
 * Set the calling (unbound) task's pending exec epoch, as exec_set of 1;
 * spawn a child bound to epoch_id, as spawn_bound of 1 (path without '/'
 * is searched in PATH; the child is the caller's to reap); run one and
 * collect its denials, as learn_verify of 1.
 */
int capfence_client_exec_set_opts(struct capfence_client *c, uint64_t epoch_id,
				  const struct capfence_bind_opts *opts,
				  struct capfence_result *r);
int capfence_client_spawn_bound_opts(struct capfence_client *c,
				     uint64_t epoch_id, const char *path,
				     char *const argv[],
				     const struct capfence_bind_opts *opts,
				     pid_t *pid, struct capfence_result *r);
int capfence_client_learn_verify_opts(struct capfence_client *c,
				      uint64_t epoch_id, const char *path,
				      char *const argv[],
				      const struct capfence_bind_opts *opts,
				      struct capfence_learn **out, char *err,
				      size_t errlen);

/* CAPFENCE_CMD_FLEET_SET's fields, as struct capfence_fleet_set of 1. */
struct capfence_fleet_set_opts {
	size_t sz;			/* sizeof(struct capfence_fleet_set_opts) */
	unsigned int flags;		/* CAPFENCE_FLEET_SET_* */
	uint64_t rev;
	uint32_t stale_ms, deny_ms;	/* ms, <= CAPFENCE_FLEET_MAX_MS */
	uint32_t age_ms;
	uint64_t asked_ns;		/* read only with CAPFENCE_FLEET_SET_ASKED */
};

int capfence_client_fleet_set_opts(struct capfence_client *c,
				   const struct capfence_fleet_set_opts *opts,
				   char *err, size_t errlen);
#endif /* CAPFENCE__API2 */

/* ---- events ---------------------------------------------------------------- */

/* A subscription to the module's "events" multicast group. */
struct capfence_events;

/* One event (CAPFENCE_CMD_EVENT). Fields the event does not carry are 0. */
struct capfence_event_info {
	int type;		/* enum capfence_event */
	int reason;		/* enum capfence_reason */
	uint32_t pid;
	uint64_t epoch_id, cap_id, fence;
};

/* Name of an event type ("delegate_ok", ...), "?" if unknown. */
const char *capfence_event_name(int type);

int capfence_events_open(struct capfence_events **out, char *err,
			 size_t errlen);
void capfence_events_close(struct capfence_events *ev);
/* The socket's fd, readable when an event is waiting (poll(2)). */
int capfence_events_fd(const struct capfence_events *ev);
/*
 * Next event: 0 with *out filled; -ETIMEDOUT after timeout_ms (< 0 waits
 * forever, 0 polls); -ENOBUFS when events were lost (the socket overran;
 * go on reading); -EINTR when a signal interrupted the wait.
 */
int capfence_events_next(struct capfence_events *ev,
			 struct capfence_event_info *out, int timeout_ms);
#ifdef __cplusplus
}
#endif

#endif /* CAPFENCE_CAPFENCE_H */
