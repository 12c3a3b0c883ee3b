// SPDX-License-Identifier: GPL-2.0
/*
 * capfence exec --epoch ID [--token TOKEN]... -- COMMAND [ARG]...
 *
 * Sets the pending exec epoch (and the tokens to hold) on this unbound
 * launcher with CAPFENCE_CMD_EXEC_SET, then execvp()s COMMAND: the kernel
 * binds the new credential to the epoch at that execve, or fails it. When
 * EXEC_SET is refused nothing is run. An epoch with a syscall policy has
 * its seccomp program loaded (no_new_privs, no SECCOMP_FILTER_FLAG_LOG)
 * between EXEC_SET and the execve: the kernel binds the task only when its
 * filter chain holds that program.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static const char exec_usage[] =
	"capfence exec --epoch ID [--token TOKEN]... -- COMMAND [ARG]...";

static int cf_cmd_exec(int argc, char **argv)
{
	struct capfence_seccomp_info sc = { 0 };
	struct capfence_token *toks;
	struct capfence_result d;
	uint64_t epoch = 0;
	char line[512], why[CAPFENCE_ERR_MAX];
	struct capfence_client *nl = NULL;
	static const struct option lo[] = {
		{ "epoch", required_argument, NULL, 'e' },
		{ "token", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "exec", .usage = exec_usage, .longopts = lo,
			     .rest = true };
	int c, cmd = 0, ntok = 0, ret, e;

	toks = calloc(CAPFENCE_MAX_TOKENS, sizeof(*toks));
	if (!toks) {
		cf_err("exec: out of memory");
		return CF_EXIT_SYSTEM;
	}
	/* options end at "--" or at the first non-option: COMMAND's own
	 * arguments, --help included, are never ours */
	while (!cmd && (c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			if (cf_arg_u64(optarg, &epoch)) {
				free(toks);
				return cf_usage(exec_usage, "exec: bad epoch id '%s' (a decimal > 0)",
						optarg);
			}
			break;
		case 't':
			if (ntok == CAPFENCE_MAX_TOKENS) {
				free(toks);
				return cf_usage(exec_usage, "exec: more than %d tokens",
						CAPFENCE_MAX_TOKENS);
			}
			if (capfence_token_from_text(optarg, &toks[ntok], why,
					       sizeof(why))) {
				/* as the kernel would: a token that does not
				 * decode is forged */
				cf_err("exec: token %d: malformed token: %s; nothing was run",
				       ntok + 1, why);
				free(toks);
				return CF_EXIT_FORGED;
			}
			ntok++;
			break;
		case CF_OPT_ARG:
			cmd = optind - 1;
			break;
		default:
			free(toks);
			return o.exit;
		}
	}
	if (!cmd)
		cmd = optind;	/* after "--" (or argc: none) */
	if (!epoch) {
		free(toks);
		return cf_usage(exec_usage, "exec: missing --epoch ID");
	}
	if (!cmd || cmd >= argc) {
		free(toks);
		return cf_usage(exec_usage, "exec: missing COMMAND");
	}
	ret = cf_client_open_or_die(&nl);
	if (ret) {
		free(toks);
		return ret;
	}
	ret = capfence_client_exec_set(nl, epoch, toks, (size_t)ntok, &d);
	free(toks);
	if (!ret) {
		char msg[CAPFENCE_ERR_MAX] = "";

		ret = capfence_client_epoch_seccomp(nl, epoch, &sc, msg, sizeof(msg));
		if (ret) {
			snprintf(line, sizeof(line),
				 "exec: epoch %" PRIu64 ": cannot read its syscall policy (nothing was run)",
				 epoch);
			cf_client_fail(line, ret, msg);
			capfence_client_close(nl);
			return CF_EXIT_SYSTEM;
		}
	}
	if (ret) {
		if (d.reason >= 0) {
			cf_decision_text(&d, line, sizeof(line));
			cf_err("exec: token cap_id %016" PRIx64 " for epoch %" PRIu64 ": %s; nothing was run",
			       d.cap_id, epoch, line);
		} else {
			snprintf(line, sizeof(line), "exec: epoch %" PRIu64 " (nothing was run)",
				 epoch);
			cf_client_fail(line, ret, d.message);
		}
		capfence_client_close(nl);
		return cf_decision_exit(&d);
	}
	capfence_client_close(nl);
	fflush(NULL);
	if (sc.insns) {
		ret = capfence_seccomp_apply(sc.prog, sc.len);
		capfence_free(sc.prog);
		if (ret) {
			cf_err("exec: epoch %" PRIu64 ": cannot load its seccomp filter: %s; nothing was run",
			       epoch, strerror(-ret));
			return CF_EXIT_SYSTEM;
		}
	}
	execvp(argv[cmd], argv + cmd);
	e = errno;
	if (e == EACCES && sc.insns)
		cf_err("exec: cannot run '%s': %s (if it is executable, the kernel refused to bind epoch %" PRIu64 ": see its op=bind audit record, or the epoch's syscall policy denies execve)",
		       argv[cmd], strerror(e), epoch);
	else if (e == EACCES)
		cf_err("exec: cannot run '%s': %s (if it is executable, the kernel refused to bind epoch %" PRIu64 ": are the hooks attached?)",
		       argv[cmd], strerror(e), epoch);
	else
		cf_err("exec: cannot run '%s': %s", argv[cmd], strerror(e));
	return 127;
}

const struct cf_cmd cf_exec_cmd = { .name = "exec", .run = cf_cmd_exec, .usage = exec_usage };
