// SPDX-License-Identifier: GPL-2.0
/*
 * capfence learn [--json] [-o FILE] [--seccomp PROFILE] [--open CLASS]... [--prefix4 N]
 *                [--prefix6 N] [--any-port] [--depth N] [--wait MS] -- COMMAND [ARG]...
 * capfence learn --verify FILE [--seccomp PROFILE] [--key FILE] [--json] [--wait MS] -- COMMAND [ARG]...
 *
 * Learning runs COMMAND bound to a fresh complain epoch (every class log)
 * and writes the narrowest epoch file that admits what it exercised, with
 * the capfence mint lines for its token rules (and, with --seccomp, the OCI
 * seccomp profile of the system calls it made); verifying installs FILE as
 * a new epoch, runs COMMAND bound to it holding a token minted for each
 * token rule, and reports each denial with its record. Both are
 * libcapfence's learner (capfence_client_learn_*).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cli.h"

static const char learn_usage[] =
	"capfence learn [--json] [-o FILE] [--seccomp PROFILE] [--open CLASS]... [--prefix4 N] [--prefix6 N] [--any-port] [--depth N] [--wait MS] -- COMMAND [ARG]... | capfence learn --verify FILE [--seccomp PROFILE] [--key FILE] [--json] [--wait MS] -- COMMAND [ARG]...";

static void status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status %d", status);
}

static bool incomplete(const struct capfence_learn_stats *s)
{
	return s->missing || s->over_budget || s->over_ceiling || s->lost ||
	       s->overflows || s->counts_unknown;
}

static void json_stats(const struct capfence_learn_stats *s)
{
	printf("\"epoch_id\":%" PRIu64 ",\"sandbox\":%" PRIu64 ",\"exit\":%d,\"signal\":%d,"
	       "\"records\":%" PRIu64 ",\"received\":%" PRIu64 ",\"learned\":%" PRIu64
	       ",\"denied\":%" PRIu64 ",\"over_budget\":%" PRIu64 ",\"over_ceiling\":%" PRIu64
	       ",\"lost\":%" PRIu64 ",\"missing\":%" PRIu64 ",\"overflows\":%" PRIu64
	       ",\"complete\":%s",
	       s->epoch_id, s->sandbox_id,
	       WIFEXITED(s->status) ? WEXITSTATUS(s->status) : -1,
	       WIFSIGNALED(s->status) ? WTERMSIG(s->status) : 0,
	       s->records, s->received, s->learned, s->denied, s->over_budget,
	       s->over_ceiling, s->lost, s->missing, s->overflows,
	       incomplete(s) ? "false" : "true");
}

static void json_notes(const struct capfence_learn *l)
{
	size_t i;

	printf(",\"notes\":[");
	for (i = 0; i < capfence_client_learn_notes(l); i++) {
		printf("%s", i ? "," : "");
		cf_json_str(stdout, capfence_client_learn_note(l, i));
	}
	printf("]");
}

/* "capfence mint ..." for token rule r, into buf */
static void mint_line(const struct capfence_rule *r, char *buf, size_t len)
{
	char c[CAPFENCE_CONSTRAINT_TEXT_MAX];
	size_t off;
	int i;

	off = (size_t)snprintf(buf, len, "capfence mint --key KEY --epoch ID --class %s",
			       capfence_class_name(r->class_id));
	for (i = 0; i < r->n && off < len; i++) {
		if (capfence_constraint_format(&r->constraints[i], c, sizeof(c)) < 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, " --constraint %s", c);
	}
}

static int learn_write(FILE *f, const struct capfence_learn *l,
		       const struct capfence_epoch *e, const char *profile,
		       char *const argv[])
{
	struct capfence_learn_stats s;
	char buf[CAPFENCE_RULE_TEXT_MAX + 512], st[32];
	int c, i;
	size_t k;

	capfence_client_learn_stats(l, &s);
	status_text(s.status, st, sizeof(st));
	fprintf(f, "# capfence learn:");
	for (i = 0; argv[i]; i++)
		fprintf(f, " %s", argv[i]);
	fprintf(f, "\n# ran bound to complain epoch %" PRIu64 " (sandbox %" PRIu64 "): %s\n",
		s.epoch_id, s.sandbox_id, st);
	fprintf(f, "# records: %" PRIu64 " learned of %" PRIu64 " written; without a record: %" PRIu64
		" over budget, %" PRIu64 " over ceiling, %" PRIu64 " lost; not received: %" PRIu64 "\n",
		s.learned, s.records, s.over_budget, s.over_ceiling, s.lost, s.missing);
	for (k = 0; k < capfence_client_learn_notes(l); k++)
		fprintf(f, "# note: %s\n", capfence_client_learn_note(l, k));
	if (profile)
		fprintf(f, "# syscalls: %zu seen, allowed by %s (every other call ENOSYS)\n"
			"# install: capfence epoch install ID -f FILE --seccomp %s\n",
			capfence_client_learn_syscalls(l), profile, profile);
	else
		fprintf(f, "# install: capfence epoch install ID -f FILE\n");
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		if (e->rules[c].kind != CAPFENCE_RULE_TOKEN)
			continue;
		mint_line(&e->rules[c], buf, sizeof(buf));
		fprintf(f, "# mint: %s\n", buf);
	}
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		if (capfence_rule_format(&e->rules[c], buf, sizeof(buf)) < 0)
			return -ENOSPC;
		fprintf(f, "%s\n", buf);
	}
	return ferror(f) ? -EIO : 0;
}

static void learn_json(const struct capfence_learn *l,
		       const struct capfence_epoch *e, const char *file,
		       const char *profile)
{
	struct capfence_learn_stats s;
	char buf[CAPFENCE_RULE_TEXT_MAX + 512];
	bool first = true;
	int c;

	capfence_client_learn_stats(l, &s);
	printf("{");
	json_stats(&s);
	printf(",\"file\":");
	if (file)
		cf_json_str(stdout, file);
	else
		printf("null");
	printf(",\"seccomp\":");
	if (profile)
		cf_json_str(stdout, profile);
	else
		printf("null");
	printf(",\"syscalls\":%zu", capfence_client_learn_syscalls(l));
	printf(",\"rules\":[");
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		if (capfence_rule_format(&e->rules[c], buf, sizeof(buf)) < 0)
			continue;
		printf("%s", c > 1 ? "," : "");
		cf_json_str(stdout, buf);
	}
	printf("],\"mint\":[");
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		if (e->rules[c].kind != CAPFENCE_RULE_TOKEN)
			continue;
		mint_line(&e->rules[c], buf, sizeof(buf));
		printf("%s", first ? "" : ",");
		cf_json_str(stdout, buf);
		first = false;
	}
	printf("]");
	json_notes(l);
	printf("}\n");
}

static void summary(FILE *f, const char *what, const struct capfence_learn_stats *s)
{
	char st[32];

	status_text(s->status, st, sizeof(st));
	fprintf(f, "%s: epoch %" PRIu64 ", sandbox %" PRIu64 ", command %s; records %" PRIu64
		" (learned %" PRIu64 ", refused %" PRIu64 "), without a record %" PRIu64
		" (over budget %" PRIu64 ", over ceiling %" PRIu64 ", lost %" PRIu64
		"), not received %" PRIu64 "%s\n",
		what, s->epoch_id, s->sandbox_id, st, s->records, s->learned,
		s->denied, s->over_budget + s->over_ceiling + s->lost,
		s->over_budget, s->over_ceiling, s->lost, s->missing,
		s->overflows ? " (the audit stream overflowed)" : "");
}

/* the OCI seccomp profile of the calls the run made, into f (closed) */
static int write_profile(const struct capfence_learn *l, FILE *f,
			 const char *file)
{
	char *buf;
	int n, ret = 0;

	n = capfence_client_learn_profile(l, NULL, 0);
	buf = n < 0 ? NULL : malloc((size_t)n + 1);
	if (!buf) {
		cf_err("learn: the seccomp profile: %s", strerror(n < 0 ? -n : ENOMEM));
		fclose(f);
		return CF_EXIT_SYSTEM;
	}
	capfence_client_learn_profile(l, buf, (size_t)n + 1);
	ret = fputs(buf, f) < 0;
	ret = fclose(f) || ret;
	if (ret) {
		cf_err("learn: cannot write %s: %s", file, strerror(errno));
		ret = CF_EXIT_SYSTEM;
	}
	free(buf);
	return ret;
}

/* --verify: install FILE as a new epoch, mint, run, report its denials */
static int verify(struct capfence_client *nl, const char *file,
		  const char *profile, const char *keyfile, bool json,
		  unsigned int wait_ms, char *const argv[])
{
	struct capfence_seccomp_opts so = { .sz = sizeof(so) };
	struct capfence_seccomp *sc = NULL;
	struct capfence_token toks[CAPFENCE_MAX_TOKENS];
	char err[CAPFENCE_ERR_MAX] = "";
	struct capfence_learn_stats s;
	struct capfence_key *k = NULL;
	struct capfence_learn *l = NULL;
	struct capfence_status st;
	struct capfence_epoch e;
	size_t n = 0, i;
	int c, ret;

	ret = capfence_client_status(nl, &st, err, sizeof(err));
	if (ret)
		return cf_client_fail("learn --verify: status", ret, err);
	/* its own id (a new epoch) unless the file names one */
	if (capfence_epoch_parse_file(&e, st.max_epoch + 1, file, err, sizeof(err))) {
		cf_err("learn --verify: %s", err);
		return CF_EXIT_USAGE;
	}
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		if (e.rules[c].kind == CAPFENCE_RULE_TOKEN)
			n++;
	if (n && !keyfile)
		return cf_usage(learn_usage, "learn: --verify %s has token rules: --key FILE mints their tokens",
				file);
	if (n && capfence_key_load(keyfile, &k, err, sizeof(err))) {
		cf_err("learn --verify: key file %s", err);
		return CF_EXIT_SYSTEM;
	}
	n = 0;
	for (c = CAPFENCE_CLASS_NONE + 1; k && c <= CAPFENCE_CLASS_MAX; c++) {
		const struct capfence_rule *r = &e.rules[c];

		if (r->kind != CAPFENCE_RULE_TOKEN)
			continue;
		if (capfence_token_mint(k, c, e.epoch_id, r->constraints, r->n, 0,
					&toks[n], err, sizeof(err))) {
			cf_err("learn --verify: %s: %s", capfence_class_name(c), err);
			capfence_key_free(k);
			return CF_EXIT_USAGE;
		}
		n++;
	}
	capfence_key_free(k);
	if (profile) {
		ret = capfence_seccomp_compile_file_opts(profile, &e, &so, &sc, err,
							 sizeof(err));
		if (ret) {
			cf_err("learn --verify: %s; nothing was installed", err);
			return ret == -EINVAL || ret == -E2BIG ? CF_EXIT_USAGE : CF_EXIT_SYSTEM;
		}
	}
	ret = capfence_client_epoch_install_seccomp(nl, &e, sc, err, sizeof(err));
	capfence_seccomp_free(sc);
	if (ret)
		return cf_client_fail("learn --verify: epoch install", ret, err);
	ret = capfence_client_learn_verify(nl, e.epoch_id, toks, n, argv[0], argv,
					   wait_ms, &l, err, sizeof(err));
	if (ret) {
		cf_err("learn --verify: %s", err);
		return CF_EXIT_SYSTEM;
	}
	capfence_client_learn_stats(l, &s);
	if (json) {
		printf("{");
		json_stats(&s);
		printf(",\"denials\":[");
		for (i = 0; i < capfence_client_learn_records(l); i++) {
			printf("%s", i ? "," : "");
			cf_json_str(stdout, capfence_client_learn_record(l, i));
		}
		printf("]");
		json_notes(l);
		printf("}\n");
	} else {
		for (i = 0; i < capfence_client_learn_records(l); i++)
			printf("denied: %s\n", capfence_client_learn_record(l, i));
		summary(stdout, "verify", &s);
	}
	capfence_client_learn_free(l);
	if (s.denied)
		return CF_EXIT_LEARN_DENIED;
	return incomplete(&s) ? CF_EXIT_LEARN_INCOMPLETE : 0;
}

static int cf_cmd_learn(int argc, char **argv)
{
	struct capfence_learn_opts lo_ = { .sz = sizeof(lo_) };
	const char *out = NULL, *vfile = NULL, *keyfile = NULL, *profile = NULL;
	char err[CAPFENCE_ERR_MAX] = "";
	struct capfence_client *nl = NULL;
	struct capfence_learn_stats s;
	struct capfence_learn *l = NULL;
	struct capfence_epoch e;
	bool json = false, coarse = false;
	FILE *f = NULL, *pf = NULL;
	uint64_t v;
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "open", required_argument, NULL, 'O' },
		{ "verify", required_argument, NULL, 'V' },
		{ "key", required_argument, NULL, 'k' },
		{ "wait", required_argument, NULL, 'w' },
		{ "seccomp", required_argument, NULL, 's' },
		{ "prefix4", required_argument, NULL, '4' },
		{ "prefix6", required_argument, NULL, '6' },
		{ "any-port", no_argument, NULL, 'P' },
		{ "depth", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "learn", .usage = learn_usage, .longopts = lo,
			     .shortopts = "o:", .rest = true };
	int c, cmd = 0, ret, cls;

	while (!cmd && (c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'O':
			cls = capfence_class_from_name(optarg);
			if (cls < 0)
				return cf_usage(learn_usage, "learn: unknown class \"%s\"", optarg);
			lo_.open_classes |= 1u << cls;
			break;
		case 'V':
			vfile = optarg;
			break;
		case 'k':
			keyfile = optarg;
			break;
		case 's':
			profile = optarg;
			break;
		case '4':
		case '6':
			if (cf_arg_u64(optarg, &v) || v > (c == '4' ? 32u : 128u))
				return cf_usage(learn_usage, "learn: bad --prefix%c '%s' (1 to %d)",
						c, optarg, c == '4' ? 32 : 128);
			if (c == '4')
				lo_.prefix4 = (uint8_t)v;
			else
				lo_.prefix6 = (uint8_t)v;
			coarse = true;
			break;
		case 'P':
			lo_.flags |= CAPFENCE_LEARN_ANY_PORT;
			coarse = true;
			break;
		case 'D':
			if (cf_arg_u64(optarg, &v) || v > 64)
				return cf_usage(learn_usage, "learn: bad --depth '%s' (1 to 64 names)",
						optarg);
			lo_.path_depth = (uint8_t)v;
			coarse = true;
			break;
		case 'w':
			if (cf_arg_u64(optarg, &v) || v > 600000)
				return cf_usage(learn_usage, "learn: bad --wait '%s' (milliseconds, 1 to 600000)",
						optarg);
			lo_.wait_ms = (unsigned int)v;
			break;
		case CF_OPT_ARG:
			cmd = optind - 1;
			break;
		default:
			return o.exit;
		}
	}
	if (!cmd)
		cmd = optind;
	if (!cmd || cmd >= argc)
		return cf_usage(learn_usage, "learn: missing COMMAND");
	if (vfile && (out || lo_.open_classes || coarse))
		return cf_usage(learn_usage, "learn: --verify takes neither -o, --open, --prefix4, --prefix6, --any-port nor --depth");
	if (!vfile && keyfile)
		return cf_usage(learn_usage, "learn: --key is --verify's");
	/* the files first: a path that cannot be written wastes no run */
	if (!vfile && profile && !(pf = fopen(profile, "w"))) {
		cf_err("learn: cannot write %s: %s", profile, strerror(errno));
		return CF_EXIT_SYSTEM;
	}
	if (out && !(f = fopen(out, "w"))) {
		cf_err("learn: cannot write %s: %s", out, strerror(errno));
		if (pf)
			fclose(pf);
		return CF_EXIT_SYSTEM;
	}
	ret = cf_client_open_or_die(&nl);
	if (ret) {
		if (pf)
			fclose(pf);
		if (f)
			fclose(f);
		return ret;
	}
	if (vfile) {
		ret = verify(nl, vfile, profile, keyfile, json, lo_.wait_ms, argv + cmd);
		capfence_client_close(nl);
		return ret;
	}
	if (profile)
		lo_.flags |= CAPFENCE_LEARN_SYSCALLS;
	ret = capfence_client_learn_run(nl, &lo_, argv[cmd], argv + cmd, &l, err,
					sizeof(err));
	capfence_client_close(nl);
	if (!ret)
		/* the suggestion has no id: capfence epoch install ID -f FILE */
		ret = capfence_client_learn_epoch(l, 1, &e, err, sizeof(err));
	if (ret) {
		cf_err("learn: %s", err);
		capfence_client_learn_free(l);
		if (pf)
			fclose(pf);
		if (f)
			fclose(f);
		return CF_EXIT_SYSTEM;
	}
	capfence_client_learn_stats(l, &s);
	if (pf) {
		ret = write_profile(l, pf, profile);
		if (ret) {
			capfence_client_learn_free(l);
			if (f)
				fclose(f);
			return ret;
		}
	}
	if (f) {
		ret = learn_write(f, l, &e, profile, argv + cmd);
		if (fclose(f) || ret) {
			cf_err("learn: cannot write %s", out);
			capfence_client_learn_free(l);
			return CF_EXIT_SYSTEM;
		}
	}
	if (json)
		learn_json(l, &e, out, profile);
	else if (out)
		summary(stdout, "learn", &s);
	else if (learn_write(stdout, l, &e, profile, argv + cmd))
		ret = CF_EXIT_SYSTEM;
	if (!json && !out)
		summary(stderr, "learn", &s);
	if (!json && profile)
		fprintf(out ? stdout : stderr, "learn: %zu system calls seen; their profile is %s\n",
			capfence_client_learn_syscalls(l), profile);
	capfence_client_learn_free(l);
	if (ret)
		return ret;
	return incomplete(&s) ? CF_EXIT_LEARN_INCOMPLETE : 0;
}

const struct cf_cmd cf_learn_cmd = { .name = "learn", .run = cf_cmd_learn, .usage = learn_usage };
