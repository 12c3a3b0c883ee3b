// SPDX-License-Identifier: GPL-2.0
/*
 * capfence: the control CLI. One file per command group, each defining
 * its commands' rows (struct cf_cmd: name, handler, usage) beside their
 * handlers; this file holds the table of rows, the group dispatcher,
 * shared error reporting and the JSON string writer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/*
 * Test builds only: pretend to be another CLI version or to speak another
 * ABI, so that the mismatch report of --version can be exercised against
 * the real module (selftests/netlink/version-test.sh).
 */
#ifdef CF_TEST_CLI_VERSION
#undef CAPFENCE_CLI_VERSION
#define CAPFENCE_CLI_VERSION CF_TEST_CLI_VERSION
#endif
#ifdef CF_TEST_CLI_ABI
#define CF_CLI_ABI CF_TEST_CLI_ABI
#else
#define CF_CLI_ABI CAPFENCE_GENL_VERSION
#endif

const char *cf_prog = "capfence";

void cf_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "capfence: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cf_usage(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "capfence: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s\n", usage);
	return CF_EXIT_USAGE;
}

bool cf_want_help(int argc, char **argv, const char *usage)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s\n", usage);
			return true;
		}
	}
	return false;
}

static int opt_fail(struct cf_opts *o, const char *fmt, const char *arg,
		    int len)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, len, arg);
	o->exit = cf_usage(o->usage, "%s: %s", o->cmd, what);
	return '?';
}

int cf_opt_unexpected(struct cf_opts *o, const char *arg)
{
	opt_fail(o, "unexpected argument '%.*s'", arg, (int)strlen(arg));
	return o->exit;
}

/* the long option named exactly a[2..] (up to '='), or NULL */
static const struct option *opt_long(const struct cf_opts *o, const char *a)
{
	size_t len = strcspn(a + 2, "=");
	const struct option *lo;

	static const struct option help = { "help", no_argument, NULL, 'h' };

	for (lo = o->longopts; lo && lo->name; lo++)
		if (strlen(lo->name) == len && !strncmp(lo->name, a + 2, len))
			return lo;
	return len == 4 && !strncmp(a + 2, "help", 4) ? &help : NULL;
}

int cf_getopt(struct cf_opts *o, int argc, char **argv)
{
	static const struct option none = { NULL, 0, NULL, 0 };
	char short_opt[3] = "-?";
	const struct option *lo;
	const char *a;
	int c, next;

	if (!o->started) {
		/* "-": positional arguments in order; ":": missing values */
		if (snprintf(o->optstring, sizeof(o->optstring), "-:h%s",
			     o->shortopts ? o->shortopts : "") >=
		    (int)sizeof(o->optstring)) {
			fprintf(stderr, "capfence: %s: internal error: more short options than the parser holds\n",
				o->cmd);
			o->exit = 70;	/* EX_SOFTWARE */
			return '?';
		}
		o->started = true;
		o->exit = 0;
		opterr = 0;
		optind = 0;	/* glibc: start over (a command may parse twice) */
	}
	next = optind ? optind : 1;
	if (next < argc) {
		a = argv[next];
		/* a negative number is an argument: its own check names it */
		if (a[0] == '-' && a[1] >= '0' && a[1] <= '9') {
			optind = next + 1;
			optarg = argv[next];
			return CF_OPT_ARG;
		}
		/* long options by their full names only (no abbreviations) */
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			lo = opt_long(o, a);
			if (!lo)
				return opt_fail(o, "unknown option '%.*s'", a, (int)strlen(a));
			/* --help is every command's, in no table */
			if (lo->val == 'h' && !strcmp(lo->name, "help")) {
				optind = next + 1;
				if (strchr(a, '='))
					return opt_fail(o, "option '%.*s' takes no value", a,
							(int)strcspn(a, "="));
				printf("usage: %s\n", o->usage);
				o->exit = 0;
				return '?';
			}
		}
	}
	c = getopt_long(argc, argv, o->optstring,
			o->longopts ? o->longopts : &none, NULL);
	a = optind > 1 ? argv[optind - 1] : "";
	switch (c) {
	case -1:
		if (!o->rest && optind < argc)
			return opt_fail(o, "unexpected argument '%.*s'", argv[optind],
					(int)strlen(argv[optind]));
		return -1;
	case 'h':
		printf("usage: %s\n", o->usage);
		o->exit = 0;
		return '?';
	case ':':
		return opt_fail(o, "option '%.*s' needs a value", a,
				(int)strcspn(a, "="));
	case '?':
		/* "--json=1": a known name given a value it does not take */
		if (a[0] == '-' && a[1] == '-' && strchr(a, '=') && opt_long(o, a))
			return opt_fail(o, "option '%.*s' takes no value", a,
					(int)strcspn(a, "="));
		short_opt[1] = (char)optopt;
		return opt_fail(o, "unknown option '%.*s'", short_opt, 2);
	case CF_OPT_ARG:
	default:
		return c;
	}
}

int cf_opts_simple(const char *cmd, const char *usage, int argc, char **argv,
		   bool *json)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = cmd, .usage = usage,
			     .longopts = json ? lo : NULL };
	int c;

	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j')
			*json = true;
		else if (c == CF_OPT_ARG)
			return cf_opt_unexpected(&o, optarg);
		else
			return o.exit;
	}
	return -1;
}

int cf_client_open_or_die(struct capfence_client **c)
{
	char msg[CAPFENCE_ERR_MAX];
	int err = capfence_client_open(c, msg, sizeof(msg));

	if (!err)
		return 0;
	if (err == -ENOENT)
		cf_err("the capfence module is not loaded (modprobe capfence)");
	else
		cf_err("cannot open generic netlink: %s", strerror(-err));
	return CF_EXIT_SYSTEM;
}

int cf_client_fail(const char *what, int err, const char *msg)
{
	if (msg && msg[0] && strcmp(msg, strerror(-err)))
		cf_err("%s: %s (%s)", what, msg, strerror(-err));
	else if (err == -EPERM)
		cf_err("%s: %s (needs CAP_MAC_ADMIN and an unbound caller)",
		       what, strerror(-err));
	else
		cf_err("%s: %s", what, strerror(-err));
	return CF_EXIT_SYSTEM;
}

void cf_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const struct cf_cmd *const cmds[] = {
	&cf_attach_cmd, &cf_detach_cmd, &cf_status_cmd, &cf_metrics_cmd,
	&cf_key_cmd, &cf_epoch_cmd, &cf_mint_cmd, &cf_inspect_cmd,
	&cf_check_cmd, &cf_delegate_cmd, &cf_revoke_cmd, &cf_exec_cmd,
	&cf_learn_cmd, &cf_task_cmd, &cf_monitor_cmd, &cf_fleet_cmd,
};

void cf_print_usage(FILE *f, const struct cf_cmd *c)
{
	const struct cf_cmd *s;

	if (!c->sub) {
		fprintf(f, "usage: %s\n", c->usage);
		return;
	}
	for (s = c->sub; s->name; s++)
		fprintf(f, "%s %s\n", s == c->sub ? "usage:" : "      ", s->usage);
}

int cf_run_group(const struct cf_cmd *group, int argc, char **argv)
{
	const struct cf_cmd *s;

	if (argc < 2) {
		cf_err("%s: missing subcommand", group->name);
		cf_print_usage(stderr, group);
		return CF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		cf_print_usage(stdout, group);
		return 0;
	}
	for (s = group->sub; s->name; s++)
		if (!strcmp(argv[1], s->name))
			return s->run(argc - 1, argv + 1);
	cf_err("%s: unknown subcommand '%s'", group->name, argv[1]);
	cf_print_usage(stderr, group);
	return CF_EXIT_USAGE;
}

/*
 * capfence --version: the CLI's version and ABI, then the loaded module's
 * (STATUS_GET: CAPFENCE_A_VERSION, CAPFENCE_A_ABI). A mismatch is one line
 * on stderr; both versions are still printed and the exit status is 0.
 */
static int print_version(void)
{
	struct capfence_status m;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	int err;

	printf("capfence %s (abi %d)\n", CAPFENCE_CLI_VERSION, CF_CLI_ABI);
	err = capfence_client_open(&nl, NULL, 0);
	if (err == -ENOENT) {
		printf("module not loaded\n");
		return 0;
	}
	if (err) {
		printf("module unknown\n");
		cf_err("cannot ask the module for its version: %s", strerror(-err));
		return 0;
	}
	err = capfence_client_status(nl, &m, msg, sizeof(msg));
	capfence_client_close(nl);
	if (err || !m.version[0] || !m.abi) {
		printf("module unknown\n");
		cf_err("the module did not report its version: %s",
		       err ? strerror(-err) : "attribute missing");
		return 0;
	}
	printf("module %s (abi %u)\n", m.version, m.abi);
	if (m.abi != (uint32_t)CF_CLI_ABI)
		cf_err("ABI mismatch: this CLI speaks abi %d, the loaded module abi %u; install matching versions",
		       CF_CLI_ABI, m.abi);
	else if (strcmp(m.version, CAPFENCE_CLI_VERSION))
		cf_err("version mismatch: CLI %s, module %s (same abi %u)",
		       CAPFENCE_CLI_VERSION, m.version, m.abi);
	return 0;
}

static void usage(FILE *f)
{
	const struct cf_cmd *s;
	size_t i;

	fprintf(f, "usage: capfence COMMAND [ARGS]... (capfence COMMAND --help)\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!cmds[i]->sub)
			fprintf(f, "  %s\n", cmds[i]->usage);
		for (s = cmds[i]->sub; s && s->name; s++)
			fprintf(f, "  %s\n", s->usage);
	}
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		return print_version();
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i]->name))
			continue;
		if (cmds[i]->sub)
			return cf_run_group(cmds[i], argc - 1, argv + 1);
		return cmds[i]->run(argc - 1, argv + 1);
	}
	cf_err("unknown command '%s' (capfence --help lists them)", argv[1]);
	return CF_EXIT_USAGE;
}
