/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence internals: the fleet schema in etcd and its operations
 * (docs/design.md, "Fleet"). Not installed, not exported; the CLI and
 * capfenced link it from libcapfence.a.
 *
 *   <prefix>fleet/epoch/<id>      {"kind":"epoch_install","epoch":"ID","rules":[RULE...]}
 *   <prefix>fleet/activate/<id>   {"kind":"epoch_activate","epoch":"ID"}
 *   <prefix>fleet/key/<id>        {"kind":"key_add","key_id":"ID"}
 *   <prefix>fleet/unkey/<id>      {"kind":"key_remove","key_id":"ID"}
 *   <prefix>fleet/revoke/<cap>    {"kind":"revoke","cap_id":"ID"}
 *   <prefix>hosts/<name>          {"applied":"REV","host":NAME,"state":S,...}
 *                                 (under the host agent's lease)
 *   <prefix>head                  {"seq":"N","hash":B64,"time_ms":T,"sig":B64}
 *
 * Each change is one etcd transaction (a guarded put of one key); its
 * revision is the fleet revision the hosts apply it at. No key is ever
 * written twice, so the keys under fleet/ are the whole history. Key
 * material never goes to etcd: keys are installed on each host by hand;
 * the fleet records key ids and orders their removal.
 *
 * The chain (signed fleets): a change committed with the signing key also
 * carries "seq" (1, 2, ...) and "prev", the link hash of the change before
 * it (BLAKE2b-256 of "capfence-link-v1\n" KEY "\n" VALUE as stored;
 * genesis: zeros), inside what it signs; the same transaction moves the
 * signed head to its seq and link hash, guarded by the head's revision,
 * so the chain is the order of the store. The head's time_ms is the
 * signer's wall clock, renewed by `capfence fleet head --every`: a host
 * that must reach a fresh head before it confirms cannot be kept behind
 * a change the store withholds, or a head it freezes, for longer than
 * its --head-max-age (The Update Framework's timestamp role).
 */
#ifndef CF_FLEET_H
#define CF_FLEET_H

#include <capfence/capfence.h>
#include "cf_etcd.h"

#pragma GCC visibility push(hidden)

#define CF_FLEET_PREFIX		"/capfence/"
#define CF_FLEET_PREFIX_MAX	128
#define CF_FLEET_HOST_MAX	64	/* bytes of a host name */

enum cf_fleet_kind {
	CF_FLEET_NONE,
	CF_FLEET_EPOCH_INSTALL,
	CF_FLEET_EPOCH_ACTIVATE,
	CF_FLEET_KEY_ADD,
	CF_FLEET_KEY_REMOVE,
	CF_FLEET_REVOKE,
};

#define CF_FLEET_HASH_LEN	32	/* a link hash */

/* One fleet change. id: the epoch, key or cap id. */
struct cf_fleet_change {
	enum cf_fleet_kind kind;
	uint64_t id;
	uint64_t rev;			/* its etcd mod revision (decoded) */
	/*
	 * EPOCH_INSTALL: its rules. The decoders allocate it
	 * (cf_fleet_change_release()); a caller that builds a change points
	 * it at its own. A pointer, not the 33 KB struct: a list of every
	 * revocation of a fleet must not carry an epoch each.
	 */
	struct capfence_epoch *epoch;
	uint64_t seq;			/* its place in the chain, 0: unchained */
	unsigned char prev[CF_FLEET_HASH_LEN];	/* the link before it (seq > 0) */
	unsigned char link[CF_FLEET_HASH_LEN];	/* its own link hash (decoded) */
	bool base;			/* state of the fleet's snapshot, not a logged change */
};

/* Free what a decoder allocated in ch (its epoch); ch stays usable. */
void cf_fleet_change_release(struct cf_fleet_change *ch);
/* Release each of n changes and free the array (cf_fleet_snapshot()'s). */
void cf_fleet_changes_free(struct cf_fleet_change *chs, size_t n);

/* "epoch_install", ...; "?" if unknown. */
const char *cf_fleet_kind_name(enum cf_fleet_kind kind);
/* A prefix is "/" ... "/", printable, no spaces, at most CF_FLEET_PREFIX_MAX. */
int cf_fleet_check_prefix(const char *prefix, char *err, size_t errlen);
/* A host name: 1..64 of [A-Za-z0-9._-], not starting with '.'. */
int cf_fleet_check_host(const char *name, char *err, size_t errlen);

/* The key and value of a change (malloc'd, both freed by the caller). */
int cf_fleet_encode(const char *prefix, const struct cf_fleet_change *ch,
		    char **key, char **value, char *err, size_t errlen);
/*
 * A change from its key and value; -EBADMSG (message says why) for a key
 * or value the schema does not have, or a value that disagrees with its key.
 */
int cf_fleet_decode(const char *prefix, const char *key, const char *value,
		    struct cf_fleet_change *ch, char *err, size_t errlen);

#define CF_FLEET_MAX_PUBKEYS	4	/* pinned fleet keys (a rotation holds two) */
#define CF_FLEET_MAX_HOSTKEYS	65536	/* --host-keys lines (a fleet's hosts) */
#define CF_FLEET_SK_LEN		64	/* Ed25519 secret key (libsodium's form) */
#define CF_FLEET_PK_LEN		32

struct cf_fleet_hostkey {
	char name[CF_FLEET_HOST_MAX + 1];
	unsigned char pk[CF_FLEET_PK_LEN];
	size_t line;			/* its place in the file */
};

struct cf_fleet {
	struct cf_etcd *etcd;
	bool have_sk;				/* changes are signed with sk */
	unsigned char sk[CF_FLEET_SK_LEN];
	size_t npk;				/* > 0: changes must verify */
	unsigned char pk[CF_FLEET_MAX_PUBKEYS][CF_FLEET_PK_LEN];
	bool have_host_sk;			/* reports are signed with host_sk */
	unsigned char host_sk[CF_FLEET_SK_LEN];
	size_t nhostkeys;			/* > 0: only these hosts count */
	struct cf_fleet_hostkey *hostkeys;
	char prefix[CF_FLEET_PREFIX_MAX + 1];
	char fleet[CF_FLEET_PREFIX_MAX + 16];	/* <prefix>fleet/ */
	char hosts[CF_FLEET_PREFIX_MAX + 16];	/* <prefix>hosts/ */
	char head[CF_FLEET_PREFIX_MAX + 16];	/* <prefix>head */
	char snapshot[CF_FLEET_PREFIX_MAX + 16];	/* <prefix>snapshot */
	size_t snapshot_max;			/* CF_FLEET_SNAPSHOT_MAX (tests lower it) */
	size_t compact_fail_after;		/* tests: a deletion batch past this many keys fails (0: never) */
	char *hw_path;				/* the signer's high-water mark, NULL: none */
	bool hw_override;			/* below it anyway (--accept-rollback) */
	uint64_t committed_seq;			/* cf_fleet_commit()'s last change, 0: unchained */
	unsigned char committed_link[CF_FLEET_HASH_LEN];	/* its link */
};

int cf_fleet_open(struct cf_fleet **out, const char *endpoints,
		  const char *prefix, char *err, size_t errlen);

/*
 * Signatures (Ed25519, libsodium). A signed value carries "sig", the
 * base64 signature of "capfence-fleet-v1\n" KEY "\n" VALUE (for host
 * reports "capfence-host-v1\n" ...), VALUE being the value's JSON without
 * "sig" as json-c prints it plainly: the signature binds the value to its
 * key, so a signed change cannot be moved to another key or fleet prefix.
 *
 * Key files: a secret key file holds the base64 of the 64-byte secret key
 * on one line (mode 0600); a public key file (or argument) the base64 of
 * the 32-byte public key.
 */
int cf_fleet_keygen(const char *path, char *pub_b64, size_t publen, char *err, size_t errlen);
/* The fleet signing key (the orchestrator's): every commit is signed. */
int cf_fleet_load_signing_key(struct cf_fleet *f, const char *path, char *err, size_t errlen);
/* A pinned fleet public key (a file, or base64 itself); up to CF_FLEET_MAX_PUBKEYS. */
int cf_fleet_add_pubkey(struct cf_fleet *f, const char *file_or_b64, char *err, size_t errlen);
/* This host's report signing key (capfenced --host-key). */
int cf_fleet_load_host_key(struct cf_fleet *f, const char *path, char *err, size_t errlen);
/* The hosts that count, "NAME PUBKEY" per line ('#' comments). */
int cf_fleet_load_host_keys(struct cf_fleet *f, const char *path, char *err, size_t errlen);
/*
 * A change from the store, checked against the pinned keys when there are
 * any: -EPERM "unsigned change ..." / "bad signature ..." before decoding.
 */
int cf_fleet_decode_verified(struct cf_fleet *f, const char *key, const char *value,
			     struct cf_fleet_change *ch, char *err, size_t errlen);
void cf_fleet_close(struct cf_fleet *f);

/*
 * Commit a change as one guarded transaction; *rev its revision, *seq
 * (may be NULL) its place in the chain (0: unsigned, unchained), its link
 * f->committed_link. With the
 * signing key the change is chained and the head moved in the same
 * transaction (retried while other commits move the head). -EEXIST: the
 * epoch (key id, revocation, activation) is already in the fleet;
 * -ENOENT: what it refers to is not (activating an epoch, removing a key
 * id the fleet does not have); -EPERM: the store's head is not signed by
 * a key of ours. The message says which.
 */
int cf_fleet_commit(struct cf_fleet *f, const struct cf_fleet_change *ch,
		    uint64_t *rev, uint64_t *seq, char *err, size_t errlen);

/*
 * The signer's high-water mark: the highest chain position (seq, link) it
 * committed or signed a head at, in the file path ("SEQ LINK_B64" on one
 * line, replaced atomically; absent: none yet). With it, cf_fleet_commit()
 * and cf_fleet_head_renew() refuse a store whose head is below it, or at
 * it with another link (-ESTALE: a store restored from a backup or rolled
 * back, or a path that shows an old head), unless override (the
 * operator's --accept-rollback, which also moves the mark to the store's).
 * Beside it, path with ".log" is the signer's record of every change it
 * commits (cf_fleet_recover()).
 */
int cf_fleet_set_high_water(struct cf_fleet *f, const char *path, bool override,
			    char *err, size_t errlen);

/* The mark's seq (0: none, or no mark file set). */
int cf_fleet_high_water(struct cf_fleet *f, uint64_t *seq, char *err, size_t errlen);

/*
 * What cf_fleet_recover() found and did: the store's head and the mark
 * (seqs), the changes it committed again (chs, n; rev their new
 * revisions), and the seqs it had no record of (missing_from ..
 * missing_to, 0: none).
 */
struct cf_fleet_recovery {
	uint64_t store_seq, mark_seq;
	struct cf_fleet_change *chs;
	size_t n;
	uint64_t missing_from, missing_to;
};

/*
 * Give a store restored from a backup (or rolled back) the changes it
 * lost: every change from the store's head up to the signer's mark,
 * exactly as it was signed (its seq, prev and signature: the same links
 * the hosts' modules hold), from the signer's record (the mark's file
 * with ".log": cf_fleet_commit() appends each change to it before the
 * store sees it), one transaction each, the head signed again at each.
 * 0 also when nothing is lost. -ENODATA when the record lacks a change
 * on the way down from the mark (res->missing_*; nothing committed),
 * -ESTALE when the store's chain is not the one the record follows (a
 * forked store), -EEXIST / -EAGAIN when the store was written to
 * meanwhile (res->n re-committed before that). Free res with
 * cf_fleet_recovery_release().
 */
int cf_fleet_recover(struct cf_fleet *f, struct cf_fleet_recovery *res, char *err, size_t errlen);
void cf_fleet_recovery_release(struct cf_fleet_recovery *r);

/* The signed head of the chain. */
struct cf_fleet_head {
	uint64_t seq;				/* chained changes so far */
	unsigned char hash[CF_FLEET_HASH_LEN];	/* the last one's link (zeros: none) */
	int64_t time_ms;			/* the signer's wall clock */
	int64_t mod_rev;			/* its etcd mod revision */
};

/*
 * The head, verified under the pinned keys (or, without any, the signing
 * key's own): -ENOENT when the store has none, -EPERM unsigned or
 * mis-signed, -EBADMSG malformed; *store_rev (may be NULL) the store's
 * revision at the read.
 */
int cf_fleet_head_get(struct cf_fleet *f, struct cf_fleet_head *h, uint64_t *store_rev,
		      char *err, size_t errlen);
/*
 * Sign the head again with the wall clock now (the signing key; a
 * genesis head when the store has none). -ESTALE when the store shows a
 * head below min_seq (a rollback: nothing is signed). *h the head now.
 */
int cf_fleet_head_renew(struct cf_fleet *f, uint64_t min_seq, struct cf_fleet_head *h,
			char *err, size_t errlen);
/* The wall clock (CLOCK_REALTIME) in ms: heads' and reports' time_ms. */
int64_t cf_fleet_wall_ms(void);
/* The link hash of a change's key and stored value. */
void cf_fleet_link(const char *key, const char *value, unsigned char out[CF_FLEET_HASH_LEN]);

/*
 * The revision of the newest fleet change (0: none yet), by a linearizable
 * read; *store_rev (may be NULL): the store's revision at that read.
 */
int cf_fleet_latest(struct cf_fleet *f, uint64_t *rev, uint64_t *store_rev,
		    char *err, size_t errlen);

/* A host's report. */
struct cf_fleet_host {
	char name[CF_FLEET_HOST_MAX + 1];
	uint64_t applied;		/* the module's fleet revision */
	char state[16];			/* capfence_fleet_state_name() */
	uint32_t stale_ms, deny_ms;
	int64_t time_ms;		/* the agent's clock at the report */
	char failing[160];		/* why the agent is stuck below the fleet, "" */
	bool malformed;			/* the report under hosts/NAME did not decode */
	uint64_t seq;			/* the chain's position its module holds, 0: unchained */
	unsigned char link[CF_FLEET_HASH_LEN];	/* the link at seq, as its module holds it */
	bool have_link;			/* the report named link */
};

/* The report's JSON (malloc'd). */
char *cf_fleet_host_encode(const struct cf_fleet_host *h);
int cf_fleet_host_decode(const char *value, struct cf_fleet_host *h,
			 char *err, size_t errlen);
/*
 * Put the report under lease (signed with the host key when loaded); *rev
 * (may be NULL) its revision.
 */
int cf_fleet_report(struct cf_fleet *f, const struct cf_fleet_host *h,
		    int64_t lease, char *err, size_t errlen);
/*
 * When a host writes its report (capfenced, and the fleet simulation of
 * `make bench-fleet`). A report is a store write (a raft proposal, a
 * new revision of its key), so it is written at once when what it says
 * changes (a change applied, the chain's seq, the state, the bounds, why
 * the host fails: `--wait` counts a host as soon as it has applied, and
 * never by a report that no longer holds) and otherwise only every
 * every_ms, to refresh its time: a fleet of N hosts writes N / every_ms
 * reports in steady state, not one per host per heartbeat. The lease
 * that keeps the report live is renewed on every heartbeat still (a
 * renewal is no store write: etcd's leader keeps leases), so a host
 * leaves the live set as soon as before.
 */
struct cf_fleet_pacer {
	uint32_t every_ms;		/* the periodic rate; 0: every call */
	bool have;			/* a report was written */
	int64_t last_ms;		/* when (the caller's clock) */
	struct cf_fleet_host last;	/* what it said */
};

/* Is a report due at now_ms for h? */
bool cf_fleet_report_due(const struct cf_fleet_pacer *p, const struct cf_fleet_host *h,
			 int64_t now_ms);
/* h was written at now_ms. */
void cf_fleet_report_done(struct cf_fleet_pacer *p, const struct cf_fleet_host *h,
			  int64_t now_ms);
/* Forget the last report (the lease expired with it): the next is due. */
void cf_fleet_report_lost(struct cf_fleet_pacer *p);

/*
 * Every live host's report, sorted by name (free *out). A report that does
 * not decode is listed too, malformed, its name taken from its key and
 * failing saying why: a caller never counts it as a host that applied.
 * With host keys loaded, a report that is unsigned, mis-signed or from a
 * host not listed is malformed too, and a listed host without a report is
 * listed malformed ("no live report"): the store cannot hide a host.
 */
int cf_fleet_hosts(struct cf_fleet *f, struct cf_fleet_host **out, size_t *n,
		   char *err, size_t errlen);

/*
 * The fleet's snapshot (`capfence fleet compact`): the state of every
 * change up to one chained change, signed under <prefix>snapshot. It
 * stands for the changes up to it, whose revocation keys compaction
 * deletes.
 */
struct cf_fleet_base {
	uint64_t seq;				/* the chained change it covers up to, 0: none */
	unsigned char hash[CF_FLEET_HASH_LEN];	/* that change's link */
	uint64_t rev;				/* that change's revision */
	int64_t time_ms;			/* the signer's wall clock */
	int64_t mod_rev;			/* the snapshot key's mod revision (0: absent) */
	size_t bytes;				/* its value's length */
};

/* A snapshot's value is one etcd request: under etcd's default 1.5 MiB. */
#define CF_FLEET_SNAPSHOT_MAX	(1024 * 1024)

/*
 * Every change at one revision: *out (free it) holds, oldest first, the
 * snapshot's state (base set, rev = the snapshot's rev: every epoch, the
 * active one, every removed key, every revocation) and then each fleet
 * key's change past the snapshot; *rev the revision read (0 = now);
 * *base (may be NULL) the snapshot (seq 0: none). -EBADMSG (naming its
 * revision) when a value under <prefix>fleet/ does not decode or verify,
 * or the snapshot does not decode; -EPERM when the snapshot's signature is
 * refused: a reader never rebuilds past a change it cannot read.
 */
int cf_fleet_snapshot(struct cf_fleet *f, uint64_t at,
		      struct cf_fleet_change **out, size_t *n, uint64_t *rev,
		      struct cf_fleet_base *base, char *err, size_t errlen);

/*
 * The snapshot alone (b->seq 0: none), verified as cf_fleet_snapshot()
 * verifies it.
 */
int cf_fleet_base_get(struct cf_fleet *f, struct cf_fleet_base *b, char *err, size_t errlen);

/* What cf_fleet_compact() did. */
struct cf_fleet_compaction {
	struct cf_fleet_base base;	/* the snapshot now */
	uint64_t folded;		/* chained changes it added to the snapshot */
	uint64_t deleted;		/* revocation keys deleted from the log */
	size_t epochs, keys_removed, revoked;	/* the snapshot's state */
};

/*
 * Fold the log into a new snapshot (signed with the signing key) at the
 * chain's newest change, then delete every revocation key the snapshot
 * covers except the newest change's, in batches (etcd's --max-txn-ops).
 * Epoch, activation and key keys stay: they are the guards of later
 * commits (an epoch id is never installed twice). The log must be the
 * chain from the old snapshot to the head, every change chained: else
 * -EBADMSG and nothing is written. -E2BIG when the snapshot would exceed
 * f->snapshot_max (CF_FLEET_SNAPSHOT_MAX); -EINVAL without the signing
 * key. A deletion that fails leaves the snapshot written (res->base) and
 * says so; running it again with nothing new only finishes the deletions.
 */
int cf_fleet_compact(struct cf_fleet *f, struct cf_fleet_compaction *res,
		     char *err, size_t errlen);

/*
 * Apply a change to the local module: a chained one (ch->seq) as the next
 * link of the module's chain (the module refuses anything else: -EXDEV;
 * -EALREADY: it holds that very link), no revision sent; an unchained
 * one at its revision ch->rev (-EALREADY: the module is at or past it).
 * A key id the host does not have, an epoch already installed (a
 * snapshot replayed), and the like are failures of that change.
 */
int cf_fleet_apply(struct capfence_client *c, const struct cf_fleet_change *ch,
		   char *err, size_t errlen);
/* The chain position the module holds (seq 0: none; link zeros then). */
int cf_fleet_module_chain(struct capfence_client *c, uint64_t *seq,
			  unsigned char link[CF_FLEET_HASH_LEN], char *err, size_t errlen);
/*
 * Move the module forward to a snapshot's position (its state made to
 * hold first); -EXDEV below the module's, or at it with another link.
 */
int cf_fleet_module_chain_set(struct capfence_client *c, uint64_t seq,
			      const unsigned char link[CF_FLEET_HASH_LEN], char *err, size_t errlen);

#pragma GCC visibility pop

#endif /* CF_FLEET_H */
