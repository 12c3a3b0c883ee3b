/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * capfence - capability delegation fenced by syscall-policy epochs.
 *
 * This header is the only ABI shared by capfence.ko, its BPF-LSM programs
 * and the user-space tools. The control plane is the generic netlink family
 * CAPFENCE_GENL_NAME; docs/netlink/capfence.yaml documents every command and
 * attribute. Integers inside binary attributes and inside the token encoding
 * are little-endian; netlink integer attributes are host order.
 */
#ifndef _UAPI_LINUX_CAPFENCE_H
#define _UAPI_LINUX_CAPFENCE_H

#include <linux/types.h>

#define CAPFENCE_GENL_NAME		"capfence"
#define CAPFENCE_GENL_VERSION		2
#define CAPFENCE_GENL_MCGRP_EVENTS	"events"

/* Capability classes. New classes are appended; ids never change. */
enum capfence_class {
	CAPFENCE_CLASS_NONE,
	CAPFENCE_CLASS_NET_CONNECT,	/* "net:connect", socket_connect */
	CAPFENCE_CLASS_NET_BIND,	/* "net:bind", socket_bind */
	CAPFENCE_CLASS_FS_READ,		/* "fs:read", file_open for reading */
	CAPFENCE_CLASS_FS_WRITE,	/* "fs:write", file_open for writing */
	CAPFENCE_CLASS_VSOCK_CONNECT,	/* "vsock:connect", socket_connect on
					 * AF_VSOCK
					 */
	__CAPFENCE_CLASS_MAX
};

#define CAPFENCE_CLASS_MAX (__CAPFENCE_CLASS_MAX - 1)

/* An epoch rule for one class. A class omitted from an epoch is DENY. */
enum capfence_rule_kind {
	CAPFENCE_RULE_DENY,
	CAPFENCE_RULE_OPEN,	/* not mediated */
	CAPFENCE_RULE_TOKEN,	/* exercise needs a held capability */
	CAPFENCE_RULE_LOG,	/* complain: every exercise is allowed and
				 * recorded (op=learn) with the refusal a
				 * deny rule would give; no token of the
				 * class is accepted. An epoch with a log
				 * rule is a complain epoch.
				 */
	__CAPFENCE_RULE_MAX
};

/*
 * Typed decision results. Delegation uses the CAPFENCE_R_* values listed in
 * the order of the delegation table in docs/errors.md; exercise
 * (syscall-time) denials use a subset plus NO_CAPABILITY and CONSTRAINT.
 * The value is carried in CAPFENCE_A_REASON.
 */
enum capfence_reason {
	CAPFENCE_R_OK,
	CAPFENCE_R_NO_TASK,		/* ESRCH */
	CAPFENCE_R_NOT_BOUND,		/* EINVAL */
	CAPFENCE_R_FORGED,		/* EBADMSG */
	CAPFENCE_R_EPOCH_MISMATCH,	/* ESTALE: re-mint required */
	CAPFENCE_R_CLASS_DENIED,	/* EACCES */
	CAPFENCE_R_REVOKED,		/* EKEYREVOKED */
	CAPFENCE_R_FENCED,		/* EKEYEXPIRED */
	CAPFENCE_R_NOT_HELD,		/* ENOKEY */
	CAPFENCE_R_NO_CAPABILITY,	/* exercise only: EACCES */
	CAPFENCE_R_CONSTRAINT,		/* exercise only: EACCES */
	CAPFENCE_R_BYPASS,		/* exercise only: EACCES; the operation
					 * would escape the mediation of a class
					 * (raw socket, filesystem view change)
					 */
	CAPFENCE_R_BORROW,		/* exercise only: EACCES; acting through
					 * another task (ptrace and friends)
					 */
	CAPFENCE_R_FLEET_STALE,		/* ENOLINK at delegation, EACCES at
					 * exercise: the host has not confirmed
					 * it is current with its fleet within
					 * the configured bound
					 */
	CAPFENCE_R_SECCOMP,		/* exec: EACCES; no seccomp filter
					 * of the task's chain is its epoch's
					 * program (see CAPFENCE_A_SECCOMP_PROG);
					 * also op=syscall records' reason
					 */
	__CAPFENCE_R_MAX
};

#define CAPFENCE_R_MAX (__CAPFENCE_R_MAX - 1)

/*
 * Constraints. A net constraint is a CIDR with an inclusive port range
 * (0-65535 when no port was given; port 0 appears only in that range);
 * host bits of addr must be zero. An IPv4-mapped IPv6 target
 * (::ffff:a.b.c.d) is judged as the IPv4 address it reaches.
 * A vsock constraint (vsock:* classes) is a net constraint of family
 * CAPFENCE_FAMILY_VSOCK: the CID in addr[0..3] (network order), prefix_len
 * 32 for that CID (never 4294967295, VMADDR_CID_ANY) or 0 for any CID; a
 * peer port above 65535 is admitted only by the range 0-65535 (any port).
 * A path constraint is an absolute, normalized path prefix matched on
 * component boundaries ("/srv" admits "/srv" and "/srv/x", not "/srvx");
 * it contains no control bytes and no ','.
 */
enum capfence_constraint_kind {
	CAPFENCE_CONSTRAINT_NONE,
	CAPFENCE_CONSTRAINT_NET,
	CAPFENCE_CONSTRAINT_PATH,
};

#define CAPFENCE_FAMILY_VSOCK		40	/* AF_VSOCK */

struct capfence_net_range {
	__u8	family;		/* 4, 6 or CAPFENCE_FAMILY_VSOCK */
	__u8	prefix_len;	/* 0..32 or 0..128; vsock: 0 or 32 */
	__u16	port_min;	/* little-endian in tokens, host order in netlink */
	__u16	port_max;
	__u16	reserved;	/* must be zero */
	__u8	addr[16];	/* network order; IPv4 in addr[0..3], rest zero */
};

#define CAPFENCE_PATH_MAX		255	/* bytes, without NUL */
#define CAPFENCE_MAX_CONSTRAINTS	8	/* per token and per rule */
#define CAPFENCE_MAX_TOKENS		16	/* per exec request */

/*
 * Token canonical encoding (the MAC input), all integers little-endian:
 *
 *   struct capfence_token_hdr           24 bytes
 *   n_constraints x {
 *     __u8 kind                         CAPFENCE_CONSTRAINT_NET or _PATH
 *     NET:  struct capfence_net_range   24 bytes
 *     PATH: __u8 len, len bytes         path without NUL, 1 <= len <= 255
 *   }
 *   __u8 mac[32]                        HMAC-SHA256(key[key_id], bytes above)
 *
 * Text form: "cf1_" followed by the whole encoding (MAC included) in
 * base64url without padding. Constraints are all NET (net:* classes, of
 * family 4 or 6; vsock:* classes, of family CAPFENCE_FAMILY_VSOCK) or all
 * PATH (fs:* classes); decoders reject anything else, trailing bytes,
 * non-zero reserved fields and non-canonical CIDRs.
 */
#define CAPFENCE_TOKEN_VERSION		1
#define CAPFENCE_TOKEN_PREFIX		"cf1_"
#define CAPFENCE_MAC_LEN		32
#define CAPFENCE_KEY_LEN		32
#define CAPFENCE_TOKEN_MAX_LEN		(24 + 1 + CAPFENCE_MAX_CONSTRAINTS * \
					 (1 + 1 + CAPFENCE_PATH_MAX) + \
					 CAPFENCE_MAC_LEN)

struct capfence_token_hdr {
	__u8	version;	/* CAPFENCE_TOKEN_VERSION */
	__u8	class_id;	/* enum capfence_class */
	__u16	flags;		/* CAPFENCE_TOKEN_F_*; unknown bits rejected */
	__u32	key_id;		/* non-zero */
	__u64	cap_id;		/* random, non-zero */
	__u64	epoch_id;	/* non-zero */
	/* followed by __u8 n_constraints; see above */
};

/*
 * Minted for a complain epoch (one with a CAPFENCE_RULE_LOG rule): a
 * complain epoch accepts only tokens with this flag, an enforcing epoch
 * only tokens without it (class_denied), so that nothing granted while
 * learning is ever valid under a policy that enforces.
 */
#define CAPFENCE_TOKEN_F_COMPLAIN	0x0001
#define CAPFENCE_TOKEN_F_MASK		0x0001

/* Generic netlink commands. */
enum capfence_cmd {
	CAPFENCE_CMD_UNSPEC,
	CAPFENCE_CMD_STATUS_GET,	/* status and counters */
	CAPFENCE_CMD_HOOKS_ATTACH,	/* hand the module its BPF links */
	CAPFENCE_CMD_HOOKS_DETACH,	/* release the links; EBUSY while bound */
	CAPFENCE_CMD_KEY_INSTALL,
	CAPFENCE_CMD_KEY_REMOVE,
	CAPFENCE_CMD_EPOCH_INSTALL,
	CAPFENCE_CMD_EPOCH_ACTIVATE,
	CAPFENCE_CMD_EPOCH_GET,		/* doit by id, or dump */
	CAPFENCE_CMD_EXEC_SET,		/* pending exec epoch (+ tokens) */
	CAPFENCE_CMD_DELEGATE,		/* CAPFENCE_A_DRY_RUN: check only */
	CAPFENCE_CMD_REVOKE,
	CAPFENCE_CMD_TASK_GET,
	CAPFENCE_CMD_EVENT,		/* multicast notifications only */
	CAPFENCE_CMD_FLEET_SET,		/* fleet revision, bounds, freshness */
	CAPFENCE_CMD_EPOCH_RETIRE,	/* free an unreferenced epoch; EBUSY */
	__CAPFENCE_CMD_MAX
};

#define CAPFENCE_CMD_MAX (__CAPFENCE_CMD_MAX - 1)

/*
 * Top-level attributes. Ids are appended, never renumbered. No attribute
 * is repeated at the top level: a list is one nested array (NLA_F_NESTED)
 * whose members each carry one element of the list, of the type named
 * below; a member's own type is its index (from 1 in what the kernel
 * sends) and is ignored on input. The ids of ABI 1's repeated attributes
 * are reserved and refused (EINVAL) by the policy.
 */
enum capfence_attr {
	CAPFENCE_A_UNSPEC,
	CAPFENCE_A_VERSION,		/* string: module version */
	CAPFENCE_A_ABI,			/* u32: CAPFENCE_GENL_VERSION */
	CAPFENCE_A_HOOKS_ATTACHED,	/* u8 */
	CAPFENCE_A_FENCE,		/* u64 */
	CAPFENCE_A_LINK_FD,		/* reserved (ABI 1): CAPFENCE_A_LINK_FDS */
	CAPFENCE_A_KEY_ID,		/* u32 */
	CAPFENCE_A_KEY,			/* binary, CAPFENCE_KEY_LEN, write-only */
	CAPFENCE_A_EPOCH_ID,		/* u64 */
	CAPFENCE_A_RULE,		/* reserved (ABI 1): CAPFENCE_A_RULES */
	CAPFENCE_A_ACTIVE,		/* u8: epoch activated */
	CAPFENCE_A_TOKEN,		/* binary canonical token (DELEGATE) */
	CAPFENCE_A_PID,			/* u32: target task */
	CAPFENCE_A_FROM_PID,		/* u32: delegator task */
	CAPFENCE_A_DRY_RUN,		/* flag */
	CAPFENCE_A_REASON,		/* u32 enum capfence_reason */
	CAPFENCE_A_CAP_ID,		/* u64 */
	CAPFENCE_A_CAP,			/* reserved (ABI 1): CAPFENCE_A_CAPS */
	CAPFENCE_A_STATS,		/* nest capfence_stats_attr */
	CAPFENCE_A_GENERATION,		/* u64: state generation for dumps */
	CAPFENCE_A_CLASS,		/* u8 enum capfence_class */
	CAPFENCE_A_EVENT,		/* u32 enum capfence_event */
	CAPFENCE_A_MAX_EPOCH_ID,	/* u64: highest installed epoch */
	CAPFENCE_A_ACTIVE_EPOCH_ID,	/* u64: highest activated epoch */
	CAPFENCE_A_PAD,
	CAPFENCE_A_PENDING_EPOCH_ID,	/* u64: TASK_GET, epoch the next execve binds */
	CAPFENCE_A_FLEET_REV,		/* u64: fleet revision; see below */
	CAPFENCE_A_FLEET,		/* nest capfence_fleet_attr */
	CAPFENCE_A_LINK_FDS,		/* array of u32: BPF link fds (HOOKS_ATTACH) */
	CAPFENCE_A_RULES,		/* array of nest capfence_rule_attr */
	CAPFENCE_A_TOKENS,		/* array of binary tokens (EXEC_SET) */
	CAPFENCE_A_CAPS,		/* array of nest capfence_cap_attr */
	CAPFENCE_A_SANDBOX,		/* nest capfence_sandbox_attr: STATUS_GET
					 * the host's, TASK_GET the task's
					 */
	CAPFENCE_A_SECCOMP_PROG,	/* binary: the epoch's seccomp program,
					 * struct sock_filter[] (EPOCH_INSTALL;
					 * EPOCH_GET by id)
					 */
	CAPFENCE_A_SECCOMP_DIGEST,	/* binary, CAPFENCE_SECCOMP_DIGEST_LEN:
					 * SHA-256 of the program (output)
					 */
	CAPFENCE_A_SECCOMP_LEN,		/* u32: its instructions (output) */
	__CAPFENCE_A_MAX
};

#define CAPFENCE_A_MAX (__CAPFENCE_A_MAX - 1)

/*
 * One class rule of an epoch (a member of CAPFENCE_A_RULES). Its
 * constraints are repeated attributes of the rule: at most
 * CAPFENCE_MAX_CONSTRAINTS, all of the class's kind.
 */
enum capfence_rule_attr {
	CAPFENCE_RULE_A_UNSPEC,
	CAPFENCE_RULE_A_CLASS,		/* u8 enum capfence_class */
	CAPFENCE_RULE_A_KIND,		/* u8 enum capfence_rule_kind */
	CAPFENCE_RULE_A_NET,		/* binary capfence_net_range, repeated */
	CAPFENCE_RULE_A_PATH,		/* string, repeated */
	CAPFENCE_RULE_A_FENCED_AT,	/* u64, output only: fence value */
	CAPFENCE_RULE_A_PAD,
	__CAPFENCE_RULE_A_MAX
};

#define CAPFENCE_RULE_A_MAX (__CAPFENCE_RULE_A_MAX - 1)

/* One held capability (a member of CAPFENCE_A_CAPS); constraints as in a rule. */
enum capfence_cap_attr {
	CAPFENCE_CAP_A_UNSPEC,
	CAPFENCE_CAP_A_CAP_ID,		/* u64 */
	CAPFENCE_CAP_A_CLASS,		/* u8 */
	CAPFENCE_CAP_A_EPOCH_ID,	/* u64 */
	CAPFENCE_CAP_A_KEY_ID,		/* u32 */
	CAPFENCE_CAP_A_FROM_PID,	/* u32: delegator, 0 = orchestrator */
	CAPFENCE_CAP_A_STATE,		/* u32: 0 valid, else reason */
	CAPFENCE_CAP_A_NET,		/* binary capfence_net_range, repeated */
	CAPFENCE_CAP_A_PATH,		/* string, repeated */
	CAPFENCE_CAP_A_PAD,
	CAPFENCE_CAP_A_FLEET_REV,	/* u64: fleet revision it was accepted at */
	__CAPFENCE_CAP_A_MAX
};

#define CAPFENCE_CAP_A_MAX (__CAPFENCE_CAP_A_MAX - 1)

/* Counters (CAPFENCE_A_STATS), all u64. */
enum capfence_stats_attr {
	CAPFENCE_STATS_A_UNSPEC,
	CAPFENCE_STATS_A_BOUND_CREDS,
	CAPFENCE_STATS_A_HELD_CAPS,
	CAPFENCE_STATS_A_DELEGATE_OK,
	CAPFENCE_STATS_A_DELEGATE_REJECT,	/* nest: reason id -> u64 */
	CAPFENCE_STATS_A_EXERCISE_ALLOW,
	CAPFENCE_STATS_A_EXERCISE_DENY,		/* nest: reason id -> u64 */
	CAPFENCE_STATS_A_CRED_BYTES,		/* bytes per bound credential */
	CAPFENCE_STATS_A_CAP_BYTES,		/* bytes per held capability */
	CAPFENCE_STATS_A_PAD,
	CAPFENCE_STATS_A_OPEN_MEMO_HIT,		/* opens answered by the memo */
	CAPFENCE_STATS_A_OPEN_MEMO_MISS,	/* memo asked, file named */
	CAPFENCE_STATS_A_FOREIGN_CALLS,		/* kfunc calls by other programs */
	CAPFENCE_STATS_A_EXERCISE_LEARN,	/* exercises a log rule allowed
						 * (op=learn), never denials
						 */
	__CAPFENCE_STATS_A_MAX
};

#define CAPFENCE_STATS_A_MAX (__CAPFENCE_STATS_A_MAX - 1)

/*
 * Sandboxes (CAPFENCE_A_SANDBOX). A sandbox is what one EXEC_SET binds:
 * the task that execs and everything it forks, whatever credentials they
 * make; a bound task cannot make another. Each exercise denial's audit
 * record names it (sandbox=ID) and is written within the sandbox's budget
 * of records per window (its first FLOOR records whatever else happens)
 * and under the host's ceiling; every denial without a record is counted,
 * for its sandbox and the host, and reported in a record of its own
 * (op=suppressed sandbox=ID ...) within a second. A sandbox's live
 * credentials are bounded by CRED_LIMIT.
 *
 * In STATUS_GET: the limits and the host's totals (unbound tasks'
 * denials included). In TASK_GET: the task's sandbox (absent when it has
 * none), with ID, PID, CREDS and its own totals.
 */
enum capfence_sandbox_attr {
	CAPFENCE_SANDBOX_A_UNSPEC,
	CAPFENCE_SANDBOX_A_ID,		/* u64: TASK_GET, from 1 */
	CAPFENCE_SANDBOX_A_PID,		/* u32: TASK_GET, whose EXEC_SET made it */
	CAPFENCE_SANDBOX_A_EPOCH_ID,	/* u64: TASK_GET, the epoch it binds */
	CAPFENCE_SANDBOX_A_CREDS,	/* u64: TASK_GET, its live credentials */
	CAPFENCE_SANDBOX_A_CRED_LIMIT,	/* u32: credentials per sandbox */
	CAPFENCE_SANDBOX_A_CRED_REFUSED,	/* u64: credential changes refused
						 * at the limit (ENOMEM)
						 */
	CAPFENCE_SANDBOX_A_RECORDS,	/* u64: denial records written */
	CAPFENCE_SANDBOX_A_OVER_BUDGET,	/* u64: denials not recorded: over the
					 * sandbox's budget
					 */
	CAPFENCE_SANDBOX_A_OVER_CEILING,	/* u64: ... over the host's ceiling */
	CAPFENCE_SANDBOX_A_LOST,	/* u64: ... the audit subsystem took none */
	CAPFENCE_SANDBOX_A_REPORTS,	/* u64: STATUS_GET, op=suppressed records */
	CAPFENCE_SANDBOX_A_WINDOW_MS,	/* u32: STATUS_GET, the budget window */
	CAPFENCE_SANDBOX_A_BUDGET,	/* u32: records per sandbox per window */
	CAPFENCE_SANDBOX_A_FLOOR,	/* u32: of those, written over the ceiling */
	CAPFENCE_SANDBOX_A_CEILING,	/* u32: records per host per window */
	CAPFENCE_SANDBOX_A_PAD,
	__CAPFENCE_SANDBOX_A_MAX
};

#define CAPFENCE_SANDBOX_A_MAX (__CAPFENCE_SANDBOX_A_MAX - 1)

/*
 * Syscall policy. An epoch may carry a classic BPF seccomp program
 * (CAPFENCE_A_SECCOMP_PROG: 1 to CAPFENCE_SECCOMP_MAX_INSNS struct
 * sock_filter, host order, as seccomp(2) takes it), compiled by the tools
 * from an OCI linux.seccomp profile whose refusing actions all answer
 * ERRNO(EACCES). The exec that binds a task to such an epoch, and every
 * later exec of a task bound to it, fails with EACCES (reason
 * CAPFENCE_R_SECCOMP, audited) unless a filter of the task's seccomp
 * filter chain, at any depth, is exactly that program, loaded without
 * SECCOMP_FILTER_FLAG_LOG (the module records the program's refusals
 * itself, within the sandbox's audit budget). The module keeps the
 * program and its SHA-256 digest, which the bind record names
 * (seccomp=HEX) with the program's depth in the chain (depth=N, 0 the
 * newest filter).
 */
#define CAPFENCE_SECCOMP_MAX_INSNS	4096	/* BPF_MAXINSNS */
#define CAPFENCE_SECCOMP_DIGEST_LEN	32

/* Multicast events (CAPFENCE_A_EVENT). */
enum capfence_event {
	CAPFENCE_EV_NONE,
	CAPFENCE_EV_DELEGATE_REJECT,
	CAPFENCE_EV_DELEGATE_OK,
	CAPFENCE_EV_EPOCH_ACTIVATE,
	CAPFENCE_EV_REVOKE,
	CAPFENCE_EV_KEY_CHANGE,
	CAPFENCE_EV_EPOCH_INSTALL,
	CAPFENCE_EV_FLEET_APPLY,	/* CAPFENCE_A_FLEET_REV applied */
	CAPFENCE_EV_FLEET_STATE,	/* the fleet state changed (CAPFENCE_A_FLEET) */
	CAPFENCE_EV_EPOCH_RETIRE,	/* an epoch was retired */
	__CAPFENCE_EV_MAX
};

/*
 * Fleet. A host agent applies the changes of a fleet-wide store (etcd) in
 * the store's revision order. Each change command (KEY_INSTALL,
 * KEY_REMOVE, EPOCH_INSTALL, EPOCH_ACTIVATE, EPOCH_RETIRE, REVOKE) may carry
 * CAPFENCE_A_FLEET_REV: the change and the new revision are applied
 * together, and only if the revision is above the module's (else
 * EALREADY), so a change is never applied twice. FLEET_SET advances the
 * revision alone (not below the module's: EALREADY), sets the bounds and
 * renews freshness (CAPFENCE_FLEET_A_FRESH: every change committed in the
 * store when the agent asked, CAPFENCE_FLEET_A_AGE_MS ago or at the
 * CLOCK_BOOTTIME instant CAPFENCE_FLEET_A_ASKED_NS, is applied). With
 * ASKED_NS the confirmation holds from that instant, however long the
 * request took to arrive (a stall or a suspend of the agent cannot extend
 * it); an instant ahead of the module's clock is EINVAL, as are ASKED_NS
 * and AGE_MS together.
 *
 * While STALE_MS is non-zero the host is in fleet mode: STALE_MS after the
 * last confirmation, delegations and exec tokens are refused with
 * CAPFENCE_R_FLEET_STALE; DENY_MS after it, exercises of every grant are
 * denied (EACCES, reason fleet_stale): each was accepted at or below the
 * module's revision, and a revision the host has not seen may have revoked
 * it. A new confirmation ends both at once.
 *
 * The chain. A signed fleet orders its changes by a chain: each has a
 * position SEQ (1, 2, ...) and a link hash LINK, and names the link PREV
 * of the one before (genesis: zeros). The module holds the position and
 * link it has applied (STATUS_GET's fleet nest) and is the only record of
 * it: a change command carrying the fleet nest with SEQ, PREV and LINK is
 * applied only as the next link (SEQ one above the module's, PREV its
 * link), and the module moves to (SEQ, LINK) with it; the link the module
 * holds already is EALREADY; anything else is EXDEV, nothing changed.
 * FLEET_SET with SEQ and LINK (a snapshot's position, the agent having
 * made the module hold its state) moves the module forward only: to the
 * position it holds, nothing changes; below it, or at it with another
 * link, EXDEV. A store's revision (CAPFENCE_A_FLEET_REV) is no evidence
 * of what a chained host applied.
 */
#define CAPFENCE_FLEET_LINK_LEN		32

enum capfence_fleet_attr {
	CAPFENCE_FLEET_A_UNSPEC,
	CAPFENCE_FLEET_A_STALE_MS,	/* u32: 0 = fleet mode off */
	CAPFENCE_FLEET_A_DENY_MS,	/* u32: >= STALE_MS */
	CAPFENCE_FLEET_A_FRESH,		/* flag, FLEET_SET only */
	CAPFENCE_FLEET_A_AGE_MS,	/* u32: in FLEET_SET, the confirmation's
					 * age; in STATUS_GET, time since the
					 * last one (absent before the first)
					 */
	CAPFENCE_FLEET_A_STATE,		/* u32 enum capfence_fleet_state, output */
	CAPFENCE_FLEET_A_APPLIED,	/* u64 output: changes applied at a revision */
	CAPFENCE_FLEET_A_PAD,
	CAPFENCE_FLEET_A_ASKED_NS,	/* u64: in FLEET_SET with FRESH, the
					 * CLOCK_BOOTTIME ns the agent read
					 * before asking its store
					 */
	CAPFENCE_FLEET_A_SEQ,		/* u64: the fleet chain's position; see
					 * "The chain" above
					 */
	CAPFENCE_FLEET_A_PREV,		/* binary, CAPFENCE_FLEET_LINK_LEN: the
					 * link a change follows (change commands)
					 */
	CAPFENCE_FLEET_A_LINK,		/* binary, CAPFENCE_FLEET_LINK_LEN: the
					 * link at SEQ
					 */
	__CAPFENCE_FLEET_A_MAX
};

#define CAPFENCE_FLEET_A_MAX (__CAPFENCE_FLEET_A_MAX - 1)

enum capfence_fleet_state {
	CAPFENCE_FLEET_OFF,		/* not in fleet mode */
	CAPFENCE_FLEET_CURRENT,		/* confirmed within STALE_MS */
	CAPFENCE_FLEET_STALE,		/* delegations refused */
	CAPFENCE_FLEET_DENY,		/* old grants denied too */
};

/* bounds accepted by FLEET_SET (ms) */
#define CAPFENCE_FLEET_MAX_MS		(24U * 3600 * 1000)

/*
 * Audit record type of capfence denials and delegation rejections. In the
 * block the kernel gives its security modules (1400-1499: SELinux from
 * 1400, IPE and Landlock from 1420 on), well above the numbers handed out
 * so far. Not above 1899: auditd (3.0, Debian 12) does not log kernel
 * records of type 1900 and up; and 1500-1899 belong to AppArmor, crypto,
 * anomaly and integrity records.
 */
#define CAPFENCE_AUDIT_TYPE		1460

#endif /* _UAPI_LINUX_CAPFENCE_H */
