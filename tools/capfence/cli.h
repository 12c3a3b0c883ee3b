/* SPDX-License-Identifier: GPL-2.0 */
/* capfence CLI: shared helpers of the command files. */
#ifndef CAPFENCE_CLI_H
#define CAPFENCE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "nl.h"

#define CAPFENCE_CLI_VERSION "0.1.0"

/* Exit codes (SPEC section 4). */
enum {
	CF_EXIT_OK = 0,
	CF_EXIT_SYSTEM = 1,
	CF_EXIT_USAGE = 2,
	CF_EXIT_EPOCH_MISMATCH = 3,
	CF_EXIT_CLASS_DENIED = 4,
	CF_EXIT_FORGED = 5,
	CF_EXIT_REVOKED = 6,
	CF_EXIT_FENCED = 7,
	CF_EXIT_NOT_BOUND = 8,
	CF_EXIT_NOT_HELD = 9,
	CF_EXIT_NOT_MONOTONIC = 10,
};

struct cf_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
};

extern const char *cf_prog;

/* One-line error on stderr: "capfence: <what>". */
void cf_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: prints the line and the command's usage; returns 2. */
int cf_usage(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True when argv[i] is -h/--help; then prints usage. */
bool cf_want_help(int argc, char **argv, const char *usage);

/* Open the netlink socket or print why not; returns 0 or an exit code. */
int cf_nl_open_or_die(struct cf_nl *nl);
/* Report a failed request: extack message if any, else strerror. */
int cf_nl_fail(struct cf_nl *nl, const char *what, int err);

/* Minimal JSON writer for stable machine output. */
void cf_json_str(FILE *f, const char *s);

int cf_cmd_attach(int argc, char **argv);
int cf_cmd_detach(int argc, char **argv);
int cf_cmd_status(int argc, char **argv);

/* ---- helpers shared by the command files (token.c, epoch.c) ---- */
#include <libcapfence.h>

/* Strict decimal u64 > 0 (epoch ids, key ids); 0 or -EINVAL/-ERANGE. */
int cf_arg_u64(const char *s, uint64_t *v);
/* cap_id: "0x..." or exactly 16 hex digits = hex, else decimal; > 0. */
int cf_arg_cap_id(const char *s, uint64_t *v);
/* pid: decimal 1..INT32_MAX. */
int cf_arg_pid(const char *s, uint32_t *v);
/* True iff a is one of the space-separated options in list. */
bool cf_opt_in(const char *a, const char *list);
/* Symbolic name of a positive errno ("ESTALE"), or its number as text. */
const char *cf_errno_name(int err);
/* Decode a text token argument; prints why not. 0 or an exit code. */
int cf_token_arg(const char *what, const char *text, struct cf_token *t);
/* Constraints as "a,b" (or "-" when none) and as a JSON array. */
void cf_print_constraints(FILE *f, const struct cf_constraint *c, size_t n);
void cf_json_constraints(FILE *f, const struct cf_constraint *c, size_t n);
/* A NET (binary range, host-order ports) or PATH (string) attribute. */
int cf_nl_get_constraint(const struct nlattr *a, bool net,
			 struct cf_constraint *c);

/* The typed result a DELEGATE or EXEC_SET request carries. */
struct cf_decision {
	bool have;		/* a CAPFENCE_A_REASON reply arrived */
	uint32_t reason;
	uint64_t cap_id, epoch_id, fence;
};
int cf_decision_cb(const struct nlmsghdr *nlh, void *data);
/* "rejected: REASON (ERRNO): EXTACK" into buf. */
void cf_decision_text(const struct cf_nl *nl, const struct cf_decision *d,
		      int err, char *buf, size_t len);
/* Exit code: per reason when one arrived, else 1 (0 when err == 0). */
int cf_decision_exit(const struct cf_decision *d, int err);

/* An installed epoch as the kernel reports it (epoch.c). */
struct cf_epoch_info {
	struct cf_epoch e;
	bool active;
	uint64_t fenced_at[CAPFENCE_CLASS_MAX + 1];
};
int cf_epoch_get(struct cf_nl *nl, uint64_t id, struct cf_epoch_info *out);

int cf_cmd_key(int argc, char **argv);
int cf_cmd_epoch(int argc, char **argv);
int cf_cmd_mint(int argc, char **argv);
int cf_cmd_inspect(int argc, char **argv);
int cf_cmd_check(int argc, char **argv);
int cf_cmd_delegate(int argc, char **argv);
int cf_cmd_revoke(int argc, char **argv);
int cf_cmd_exec(int argc, char **argv);
int cf_cmd_task(int argc, char **argv);
int cf_cmd_monitor(int argc, char **argv);

#endif
