/* SPDX-License-Identifier: GPL-2.0 */
/* capfence CLI: shared helpers of the command files. */
#ifndef CAPFENCE_CLI_H
#define CAPFENCE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <capfence/capfence.h>

#define CAPFENCE_CLI_VERSION "0.3.0"

/* Exit codes (docs/errors.md, "Delegation"). */
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
	CF_EXIT_FLEET_STALE = 11,	/* the host is not current with its fleet */
	CF_EXIT_FLEET_WAIT = 12,	/* fleet --wait: a live host lags */
	CF_EXIT_LEARN_INCOMPLETE = 13,	/* learn: exercises without a record */
	CF_EXIT_LEARN_DENIED = 14,	/* learn --verify: a denial */
};

/*
 * A command, or a group of subcommands: one row, defined beside its
 * handler, whose usage line is its only copy (capfence --help, COMMAND
 * --help and every usage error print it). A group has @sub, rows up to
 * one without a name, instead of @run and @usage.
 */
struct cf_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
	const struct cf_cmd *sub;
};

/* Run the subcommand argv[1] of @group (argv[0] is the group's name). */
int cf_run_group(const struct cf_cmd *group, int argc, char **argv);
/* "usage: LINE": a command's line, or each line of a group's rows. */
void cf_print_usage(FILE *f, const struct cf_cmd *c);

/* The commands, in the order capfence --help lists them (main.c). */
extern const struct cf_cmd cf_attach_cmd, cf_detach_cmd, cf_status_cmd,
	cf_metrics_cmd, cf_key_cmd, cf_epoch_cmd, cf_mint_cmd, cf_inspect_cmd,
	cf_check_cmd, cf_delegate_cmd, cf_revoke_cmd, cf_exec_cmd,
	cf_learn_cmd, cf_task_cmd, cf_monitor_cmd, cf_fleet_cmd;

extern const char *cf_prog;

/* One-line error on stderr: "capfence: <what>". */
void cf_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: prints the line and the command's usage; returns 2. */
int cf_usage(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* True when argv[i] is -h/--help; then prints usage. */
bool cf_want_help(int argc, char **argv, const char *usage);

/*
 * The one option parser of every command: getopt_long(3) over argv[1..],
 * in order (positional arguments come back as CF_OPT_ARG, with optarg),
 * long options only by their full names ("--key FILE" or "--key=FILE"),
 * "-h"/"--help" printing the usage line, and the same one-line messages
 * for every command:
 *   "CMD: unknown option '--x'", "CMD: option '--key' needs a value",
 *   "CMD: option '--json' takes no value", "CMD: unexpected argument 'x'"
 * (the last from cf_opt_unexpected() and for anything after "--" unless
 * .rest). A negative number ("-5") is a positional argument, so its own
 * check names it. cf_getopt() returns the option's val, CF_OPT_ARG, -1 at
 * the end (with .rest, argv[optind..] is what followed "--"), or '?' after
 * an error or --help: return .exit (2, or 0 after --help).
 */
#define CF_OPT_ARG	1
struct cf_opts {
	const char *cmd;		/* "key generate": starts every message */
	const char *usage;
	const char *shortopts;		/* e.g. "o:f:"; NULL for none */
	const struct option *longopts;	/* { NULL } terminated; NULL for none */
	bool rest;			/* "--" ends the options, the rest is the caller's */
	int exit;
	/* the parser's */
	bool started;
	char optstring[64];	/* "-:h" and .shortopts; longer: exit 70 */
};
int cf_getopt(struct cf_opts *o, int argc, char **argv);
/* A positional argument the command does not take; returns 2. */
int cf_opt_unexpected(struct cf_opts *o, const char *arg);
/*
 * A command that takes no argument but --json (json NULL: not even that):
 * -1 to go on, else the exit code to return.
 */
int cf_opts_simple(const char *cmd, const char *usage, int argc, char **argv,
		   bool *json);

/* Open a libcapfence client or print why not; returns 0 or an exit code. */
int cf_client_open_or_die(struct capfence_client **c);
/*
 * Report a failed request: msg is the library's message (the kernel's
 * extack, or strerror when there was none). Returns the exit code 1.
 */
int cf_client_fail(const char *what, int err, const char *msg);

/* Minimal JSON writer for stable machine output. */
void cf_json_str(FILE *f, const char *s);

/* ---- helpers shared by the command files (token.c, epoch.c) ---- */

/* Strict decimal u64 > 0 (epoch ids, key ids); 0 or -EINVAL/-ERANGE. */
int cf_arg_u64(const char *s, uint64_t *v);
/* cap_id: "0x..." or exactly 16 hex digits = hex, else decimal; > 0. */
int cf_arg_cap_id(const char *s, uint64_t *v);
/* pid: decimal 1..INT32_MAX. */
int cf_arg_pid(const char *s, uint32_t *v);
/* Symbolic name of a positive errno ("ESTALE"), or its number as text. */
const char *cf_errno_name(int err);
/* An epoch from install arguments ([ID] RULE... | [ID] -f FILE); 0 or an
 * exit code after saying why (epoch.c). */
int cf_epoch_from_args(const char *what, const char *usage, int argc,
		       char **argv, struct capfence_epoch *e);
/* The same from parsed parts: epoch id (0: none), rules[n] or FILE. */
int cf_epoch_from_parts(const char *what, const char *usage, uint64_t id,
			const char *const *rules, size_t n, const char *file,
			struct capfence_epoch *e);
/* Decode a text token argument; prints why not. 0 or an exit code. */
int cf_token_arg(const char *what, const char *text, struct capfence_token *t);
/* Constraints as "a,b" (or "-" when none) and as a JSON array. */
void cf_print_constraints(FILE *f, const struct capfence_constraint *c, size_t n);
void cf_json_constraints(FILE *f, const struct capfence_constraint *c, size_t n);
/* "rejected: REASON (ERRNO): EXTACK" (or "ok") of a typed result into buf. */
void cf_decision_text(const struct capfence_result *d, char *buf, size_t len);
/* Exit code: per reason when one arrived, else 1 (0 when d->err == 0). */
int cf_decision_exit(const struct capfence_result *d);

/* All of stdin (at most 1 MiB) as a string, or NULL; free() it. */
char *cf_read_stdin(void);


#endif
