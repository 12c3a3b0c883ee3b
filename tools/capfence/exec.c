// SPDX-License-Identifier: GPL-2.0
/*
 * capfence exec --epoch ID [--token TOKEN]... -- COMMAND [ARG]...
 *
 * Sets the pending exec epoch (and the tokens to hold) on this unbound
 * launcher with CAPFENCE_CMD_EXEC_SET, then execvp()s COMMAND: the kernel
 * binds the new credential to the epoch at that execve, or fails it. When
 * EXEC_SET is refused nothing is run.
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

int cf_cmd_exec(int argc, char **argv)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct cf_token *toks;
	struct cf_decision d = { 0 };
	struct nlmsghdr *nlh;
	uint64_t epoch = 0;
	char line[512], why[CF_ERR_MAX];
	struct cf_nl nl;
	int i, cmd = 0, ntok = 0, ret, len, e;

	toks = calloc(CAPFENCE_MAX_TOKENS, sizeof(*toks));
	if (!toks) {
		cf_err("exec: out of memory");
		return CF_EXIT_SYSTEM;
	}
	/* options end at "--" or at the first non-option: COMMAND's own
	 * arguments, --help included, are never ours */
	for (i = 1; i < argc && !cmd; i++) {
		const char *a = argv[i];
		bool has = i + 1 < argc;

		if (!strcmp(a, "--")) {
			cmd = i + 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("usage: %s\n", exec_usage);
			free(toks);
			return 0;
		} else if (!strcmp(a, "--epoch") && has) {
			if (cf_arg_u64(argv[++i], &epoch)) {
				free(toks);
				return cf_usage(exec_usage, "exec: bad epoch id '%s' (a decimal > 0)",
						argv[i]);
			}
		} else if (!strcmp(a, "--token") && has) {
			if (ntok == CAPFENCE_MAX_TOKENS) {
				free(toks);
				return cf_usage(exec_usage, "exec: more than %d tokens",
						CAPFENCE_MAX_TOKENS);
			}
			if (cf_token_from_text(argv[++i], &toks[ntok], why,
					       sizeof(why))) {
				/* as the kernel would: a token that does not
				 * decode is forged */
				cf_err("exec: token %d: malformed token: %s; nothing was run",
				       ntok + 1, why);
				free(toks);
				return CF_EXIT_FORGED;
			}
			ntok++;
		} else if (cf_opt_in(a, "--epoch --token")) {
			free(toks);
			return cf_usage(exec_usage, "exec: option '%s' needs a value", a);
		} else if (a[0] == '-') {
			free(toks);
			return cf_usage(exec_usage, "exec: unknown option '%s'", a);
		} else {
			cmd = i;
		}
	}
	if (!epoch) {
		free(toks);
		return cf_usage(exec_usage, "exec: missing --epoch ID");
	}
	if (!cmd || cmd >= argc) {
		free(toks);
		return cf_usage(exec_usage, "exec: missing COMMAND");
	}
	ret = cf_nl_open_or_die(&nl);
	if (ret) {
		free(toks);
		return ret;
	}
	nlh = cf_nl_req(&nl, CAPFENCE_CMD_EXEC_SET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch);
	for (i = 0; i < ntok; i++) {
		len = cf_token_encode_bin(&toks[i], bin, sizeof(bin));
		if (len < 0) {
			cf_err("exec: cannot encode token %d; nothing was run", i + 1);
			cf_nl_close(&nl);
			free(toks);
			return CF_EXIT_SYSTEM;
		}
		mnl_attr_put(nlh, CAPFENCE_A_TOKEN, (size_t)len, bin);
	}
	free(toks);
	ret = cf_nl_talk(&nl, nlh, cf_decision_cb, &d);
	if (ret) {
		if (d.have) {
			cf_decision_text(&nl, &d, ret, line, sizeof(line));
			cf_err("exec: token cap_id %016" PRIx64 " for epoch %" PRIu64 ": %s; nothing was run",
			       d.cap_id, epoch, line);
		} else {
			snprintf(line, sizeof(line), "exec: epoch %" PRIu64 " (nothing was run)",
				 epoch);
			cf_nl_fail(&nl, line, ret);
		}
		cf_nl_close(&nl);
		return cf_decision_exit(&d, ret);
	}
	cf_nl_close(&nl);
	fflush(NULL);
	execvp(argv[cmd], argv + cmd);
	e = errno;
	if (e == EACCES)
		cf_err("exec: cannot run '%s': %s (if it is executable, the kernel refused to bind epoch %" PRIu64 ": are the hooks attached?)",
		       argv[cmd], strerror(e), epoch);
	else
		cf_err("exec: cannot run '%s': %s", argv[cmd], strerror(e));
	return 127;
}
