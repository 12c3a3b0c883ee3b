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

#endif
