// SPDX-License-Identifier: GPL-2.0
/*
 * capfence epoch install | list | show | activate: epoch table entries.
 * Rules are parsed by libcapfence and sent as the CAPFENCE_A_RULES array (a
 * rule per class: omitted classes go out as deny, which is also the kernel's
 * default); the kernel's view comes back in the same text syntax.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include "cli.h"

static const char install_usage[] =
	"capfence epoch install ID [--complain] [--seccomp PROFILE [--seccomp-caps CAPS] [--seccomp-kernel X.Y] [--seccomp-no-new-filters]] RULE... | capfence epoch install [ID] [--complain] [--seccomp PROFILE ...] -f FILE   (RULE: CLASS=open|deny|log|token[:C[,C]...]; --complain: every deny rule, given or by default, is log; FILE '-' is stdin; PROFILE: an OCI linux.seccomp JSON profile, or a container engine's seccomp.json as shipped, resolved for the capabilities CAPS (CAP_A,CAP_B,...; default the engines' default set) and kernel X.Y (default the running one); a bound task may stack seccomp filters of its own unless --seccomp-no-new-filters)";
static const char list_usage[] = "capfence epoch list [--json]";
static const char show_usage[] = "capfence epoch show ID [--json]";
static const char activate_usage[] = "capfence epoch activate ID";
static const char retire_usage[] = "capfence epoch retire ID [--json]";

/* ---- output ----------------------------------------------------------- */

static void rule_text(const struct capfence_rule *r, char *buf, size_t len)
{
	if (capfence_rule_format(r, buf, len) < 0)
		snprintf(buf, len, "%s=?", capfence_class_name(r->class_id) ?: "?");
}

static void digest_hex(const uint8_t *d, char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1])
{
	int i;

	for (i = 0; i < CAPFENCE_SECCOMP_DIGEST_LEN; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

static void json_seccomp(const struct capfence_seccomp_info *sc)
{
	char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1];

	if (!sc)
		return;		/* not asked (epoch list) */
	if (!sc->insns) {
		printf(",\"seccomp\":null");
		return;
	}
	digest_hex(sc->digest, hex);
	printf(",\"seccomp\":{\"sha256\":\"%s\",\"insns\":%u}", hex, sc->insns);
}

static void json_epoch(const struct capfence_epoch_info *info,
		       const struct capfence_seccomp_info *sc)
{
	static const char *const kinds[] = { "deny", "open", "token", "log" };
	char buf[CAPFENCE_RULE_TEXT_MAX];
	int c;

	printf("{\"epoch_id\":%" PRIu64 ",\"active\":%s,\"rules\":[",
	       info->e.epoch_id, info->active ? "true" : "false");
	for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
		const struct capfence_rule *r = &info->e.rules[c];

		rule_text(r, buf, sizeof(buf));
		printf("%s{\"class\":", c > 1 ? "," : "");
		cf_json_str(stdout, capfence_class_name(c));
		printf(",\"kind\":");
		cf_json_str(stdout, r->kind < 4 ? kinds[r->kind] : "?");
		printf(",\"rule\":");
		cf_json_str(stdout, buf);
		printf(",\"constraint\":");
		cf_json_constraints(stdout, r->constraints, r->n);
		printf(",\"fenced_at\":%" PRIu64 "}", info->fenced_at[c]);
	}
	printf("]");
	json_seccomp(sc);
	printf("}");
}

static void show_epoch(const struct capfence_epoch_info *info,
		       const struct capfence_seccomp_info *sc)
{
	char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1];

	char buf[CAPFENCE_RULE_TEXT_MAX];
	int c;

	/* the output is a valid rules file: `epoch install -f` reads it */
	printf("epoch %" PRIu64 "\n", info->e.epoch_id);
	printf("# active %s\n", info->active ? "yes" : "no");
	if (sc->insns) {
		digest_hex(sc->digest, hex);
		printf("# seccomp sha256:%s insns %u\n", hex, sc->insns);
	} else {
		printf("# seccomp none\n");
	}
	for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
		rule_text(&info->e.rules[c], buf, sizeof(buf));
		if (info->fenced_at[c])
			printf("%-32s # fenced_at %" PRIu64 "\n", buf,
			       info->fenced_at[c]);
		else
			printf("%-32s # not fenced\n", buf);
	}
}

/* ---- commands ------------------------------------------------------------- */

char *cf_read_stdin(void)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	ssize_t n;

	if (!buf)
		return NULL;
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= (1 << 20))
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(0, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (!n) {
			buf[len] = '\0';
			return buf;
		}
		len += (size_t)n;
	}
	free(buf);
	return NULL;
}

/*
 * An epoch from the arguments of an install: [ID] RULE... or [ID] -f FILE
 * (FILE "-": stdin); @what names the command in messages. Shared by
 * "epoch install" and "fleet epoch install". 0, or a CLI exit code after
 * saying why.
 */
int cf_epoch_from_args(const char *what, const char *usage, int argc,
		       char **argv, struct capfence_epoch *e)
{
	const char **rules = calloc((size_t)argc + 1, sizeof(*rules));
	const char *file = NULL;
	uint64_t id = 0;
	size_t n = 0;
	int i, ret = 0;

	if (!rules) {
		cf_err("%s: out of memory", what);
		return CF_EXIT_SYSTEM;
	}
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--file")) {
			if (i + 1 >= argc) {
				ret = cf_usage(usage, "%s: option '%s' needs a value", what, argv[i]);
				goto out;
			}
			if (file) {
				ret = cf_usage(usage, "%s: only one -f FILE", what);
				goto out;
			}
			file = argv[++i];
		} else if (i == 0 && !strchr(argv[i], '=')) {
			if (cf_arg_u64(argv[i], &id)) {
				ret = cf_usage(usage, "%s: bad epoch id '%s' (a decimal > 0)", what, argv[i]);
				goto out;
			}
		} else if (argv[i][0] == '-') {
			ret = cf_usage(usage, "%s: unknown option '%s'", what, argv[i]);
			goto out;
		} else {
			rules[n++] = argv[i];
		}
	}
	ret = cf_epoch_from_parts(what, usage, id, rules, n, file, e);
out:
	free(rules);
	return ret;
}

int cf_epoch_from_parts(const char *what, const char *usage, uint64_t id,
			const char *const *rules, size_t n, const char *file,
			struct capfence_epoch *e)
{
	char err[CAPFENCE_ERR_MAX] = "";
	int ret = 0;

	if (file && n) {
		ret = cf_usage(usage, "%s: give rules either as arguments or with -f, not both ('%s')",
			       what, rules[0]);
		goto out;
	}
	if (!file && !id) {
		ret = cf_usage(usage, "%s: missing epoch ID", what);
		goto out;
	}
	if (file && !strcmp(file, "-")) {
		char *text = cf_read_stdin();

		if (!text) {
			cf_err("%s: cannot read the rules from stdin", what);
			ret = CF_EXIT_SYSTEM;
			goto out;
		}
		ret = capfence_epoch_parse_text(e, id, text, err, sizeof(err));
		free(text);
		if (ret) {
			cf_err("%s: stdin: %s", what, err);
			ret = CF_EXIT_USAGE;
		}
	} else if (file) {
		ret = capfence_epoch_parse_file(e, id, file, err, sizeof(err));
		if (ret) {
			cf_err("%s: %s", what, err);
			ret = ret == -EINVAL ? CF_EXIT_USAGE : CF_EXIT_SYSTEM;
		}
	} else if (capfence_epoch_parse_rules(e, id, rules, n, err, sizeof(err))) {
		cf_err("%s: %s", what, err);
		ret = CF_EXIT_USAGE;
	}
out:
	return ret;
}

static int epoch_install(int argc, char **argv)
{
	char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1];
	uint8_t digest[CAPFENCE_SECCOMP_DIGEST_LEN];
	struct capfence_seccomp *sc = NULL;
	struct capfence_epoch *e;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	const char *profile = NULL, *file = NULL;
	struct capfence_seccomp_opts so = { .sz = sizeof(so) };
	bool complain = false;
	static const struct option lo[] = {
		{ "seccomp", required_argument, NULL, 's' },
		{ "seccomp-caps", required_argument, NULL, 'c' },
		{ "seccomp-kernel", required_argument, NULL, 'k' },
		{ "seccomp-no-new-filters", no_argument, NULL, 'n' },
		{ "file", required_argument, NULL, 'f' },
		{ "complain", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "epoch install", .usage = install_usage,
			     .shortopts = "f:", .longopts = lo };
	const char **args;
	uint64_t id = 0;
	int c, n = 0, ret;
	size_t k, plen;

	if (cf_want_help(argc, argv, install_usage))
		return 0;
	e = malloc(sizeof(*e));
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!e || !args) {
		free(e);
		free(args);
		cf_err("epoch install: out of memory");
		return CF_EXIT_SYSTEM;
	}
	/* [ID] RULE... | [ID] -f FILE, and --seccomp PROFILE, in any order */
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 's':
			if (profile) {
				ret = cf_usage(install_usage, "epoch install: only one --seccomp PROFILE");
				goto out;
			}
			profile = optarg;
			break;
		case 'c':
			so.caps = optarg;
			break;
		case 'k':
			so.kernel = optarg;
			break;
		case 'n':
			so.no_new_filters = true;
			break;
		case 'C':
			complain = true;
			break;
		case 'f':
			if (file) {
				ret = cf_usage(install_usage, "epoch install: only one -f FILE");
				goto out;
			}
			file = optarg;
			break;
		case CF_OPT_ARG:
			if (!id && !n && !strchr(optarg, '=')) {
				if (cf_arg_u64(optarg, &id)) {
					ret = cf_usage(install_usage, "epoch install: bad epoch id '%s' (a decimal > 0)",
						       optarg);
					goto out;
				}
				break;
			}
			args[n++] = optarg;
			break;
		default:
			ret = o.exit;
			goto out;
		}
	}
	if ((so.caps || so.kernel || so.no_new_filters) && !profile) {
		ret = cf_usage(install_usage, "epoch install: --seccomp-caps, --seccomp-kernel and --seccomp-no-new-filters need --seccomp PROFILE");
		goto out;
	}
	ret = cf_epoch_from_parts("epoch install", install_usage, id, args,
				  (size_t)n, file, e);
	if (ret)
		goto out;
	/* the whole epoch in complain mode: what it would deny, it logs */
	for (c = CAPFENCE_CLASS_NONE + 1; complain && c <= CAPFENCE_CLASS_MAX; c++)
		if (e->rules[c].kind == CAPFENCE_RULE_DENY)
			e->rules[c].kind = CAPFENCE_RULE_LOG;
	if (profile) {
		ret = capfence_seccomp_compile_file_opts(profile, e, &so, &sc, msg,
							 sizeof(msg));
		if (ret) {
			cf_err("epoch install: %s; nothing was installed", msg);
			ret = ret == -EINVAL || ret == -E2BIG ? CF_EXIT_USAGE : CF_EXIT_SYSTEM;
			goto out;
		}
	}
	ret = cf_client_open_or_die(&nl);
	if (ret)
		goto out;
	ret = capfence_client_epoch_install_seccomp(nl, e, sc, msg, sizeof(msg));
	if (ret == -EMSGSIZE) {
		cf_err("epoch install: the epoch does not fit in one message");
		ret = CF_EXIT_SYSTEM;
	} else if (ret == -ERANGE) {
		cf_client_fail("epoch install", ret, msg);
		ret = CF_EXIT_NOT_MONOTONIC;
	} else if (ret) {
		ret = cf_client_fail("epoch install", ret, msg);
	} else {
		printf("epoch %" PRIu64 " installed\n", e->epoch_id);
		/*
		 * one line per refusing action rewritten to EACCES, answer
		 * kept, and rule or name an engine's profile left out here
		 */
		for (k = 0; k < capfence_seccomp_notes(sc); k++) {
			const char *nt = capfence_seccomp_note(sc, k);

			printf("seccomp: %s%s\n", strstr(nt, " -> ") ? "rewritten " : "", nt);
		}
		if (sc) {
			capfence_seccomp_digest(sc, digest);
			digest_hex(digest, hex);
			capfence_seccomp_program(sc, &plen);
			printf("seccomp: sha256:%s insns %zu: every denial is EACCES (ENOSYS where kept) with a capfence op=syscall record, within the sandbox's audit budget\n",
			       hex, plen / 8);
			/* which of the two, and why it matters */
			if (so.no_new_filters)
				printf("seccomp: new filters refused (--seccomp-no-new-filters): a bound task's seccomp(2) and prctl(PR_SET_SECCOMP) answer EACCES; only the epoch's program answers its calls\n");
			else
				printf("seccomp: new filters allowed: a bound task may stack its own above the epoch's (they answer for themselves and cannot loosen the epoch's refusals); --seccomp-no-new-filters refuses them\n");
		}
	}
	capfence_client_close(nl);
out:
	capfence_seccomp_free(sc);
	free(args);
	free(e);
	return ret;
}

static int epoch_list(int argc, char **argv)
{
	struct { struct capfence_epoch_info *v; size_t n; } l = { NULL, 0 };
	char buf[CAPFENCE_RULE_TEXT_MAX];
	bool json = false;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "epoch list", .usage = list_usage, .longopts = lo };
	size_t i;
	int c, ret;

	if (cf_want_help(argc, argv, list_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == CF_OPT_ARG)
			return cf_opt_unexpected(&o, optarg);
		else
			return o.exit;
	}
	ret = cf_client_open_or_die(&nl);
	if (ret)
		return ret;
	ret = capfence_client_epoch_list(nl, &l.v, &l.n, msg, sizeof(msg));
	if (ret) {
		if (ret == -EINTR)
			cf_err("epoch list: the epoch table changed during the dump; try again");
		else
			cf_client_fail("epoch list", ret, msg);
		ret = CF_EXIT_SYSTEM;
		goto out;
	}
	if (json) {
		printf("{\"epochs\":[");
		for (i = 0; i < l.n; i++) {
			if (i)
				putchar(',');
			json_epoch(&l.v[i], NULL);
		}
		printf("]}\n");
		goto out;
	}
	printf("%-8s %-6s %-20s %s\n", "EPOCH", "ACTIVE", "FENCED", "RULES");
	for (i = 0; i < l.n; i++) {
		char fenced[128] = "";
		size_t off = 0;

		for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
			if (!l.v[i].fenced_at[c] || off >= sizeof(fenced))
				continue;
			off += (size_t)snprintf(fenced + off, sizeof(fenced) - off,
						"%s%s@%" PRIu64, off ? "," : "",
						capfence_class_name(c), l.v[i].fenced_at[c]);
		}
		printf("%-8" PRIu64 " %-6s %-20s", l.v[i].e.epoch_id,
		       l.v[i].active ? "yes" : "no", off ? fenced : "-");
		for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
			rule_text(&l.v[i].e.rules[c], buf, sizeof(buf));
			printf(" %s", buf);
		}
		putchar('\n');
	}
	if (!l.n)
		printf("(no epochs installed)\n");
out:
	capfence_free(l.v);
	capfence_client_close(nl);
	return ret;
}

static int epoch_show(int argc, char **argv)
{
	struct capfence_seccomp_info sc = { 0 };
	struct capfence_epoch_info *info;
	bool json = false;
	uint64_t id = 0;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "epoch show", .usage = show_usage, .longopts = lo };
	int c, ret;

	if (cf_want_help(argc, argv, show_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == CF_OPT_ARG && !id) {
			if (cf_arg_u64(optarg, &id))
				return cf_usage(show_usage, "epoch show: bad epoch id '%s' (a decimal > 0)",
						optarg);
		} else if (c == CF_OPT_ARG) {
			return cf_opt_unexpected(&o, optarg);
		} else {
			return o.exit;
		}
	}
	if (!id)
		return cf_usage(show_usage, "epoch show: missing epoch ID");
	info = calloc(1, sizeof(*info));
	if (!info)
		return CF_EXIT_SYSTEM;
	ret = cf_client_open_or_die(&nl);
	if (ret) {
		free(info);
		return ret;
	}
	ret = capfence_client_epoch_get(nl, id, info, msg, sizeof(msg)) ?:
	      capfence_client_epoch_seccomp(nl, id, &sc, msg, sizeof(msg));
	if (ret) {
		ret = cf_client_fail("epoch show", ret, msg);
	} else if (json) {
		json_epoch(info, &sc);
		putchar('\n');
	} else {
		show_epoch(info, &sc);
	}
	capfence_free(sc.prog);
	capfence_client_close(nl);
	free(info);
	return ret;
}

static int epoch_activate(int argc, char **argv)
{
	uint64_t id = 0;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	struct cf_opts o = { .cmd = "epoch activate", .usage = activate_usage };
	const char *arg = NULL;
	int c, ret;

	if (cf_want_help(argc, argv, activate_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c != CF_OPT_ARG)
			return o.exit;
		if (arg)
			return cf_opt_unexpected(&o, optarg);
		arg = optarg;
	}
	if (!arg)
		return cf_usage(activate_usage, "epoch activate: missing epoch ID");
	if (cf_arg_u64(arg, &id))
		return cf_usage(activate_usage, "epoch activate: bad epoch id '%s' (a decimal > 0)",
				arg);
	ret = cf_client_open_or_die(&nl);
	if (ret)
		return ret;
	ret = capfence_client_epoch_activate(nl, id, msg, sizeof(msg));
	if (ret)
		ret = cf_client_fail("epoch activate", ret, msg);
	else
		printf("epoch %" PRIu64 " active\n", id);
	capfence_client_close(nl);
	return ret;
}

static int epoch_retire(int argc, char **argv)
{
	bool json = false;
	uint64_t id = 0;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "epoch retire", .usage = retire_usage, .longopts = lo };
	int c, ret;

	if (cf_want_help(argc, argv, retire_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == CF_OPT_ARG && !id) {
			if (cf_arg_u64(optarg, &id))
				return cf_usage(retire_usage,
						"epoch retire: bad epoch id '%s' (a decimal > 0)",
						optarg);
		} else if (c == CF_OPT_ARG) {
			return cf_opt_unexpected(&o, optarg);
		} else {
			return o.exit;
		}
	}
	if (!id)
		return cf_usage(retire_usage, "epoch retire: missing epoch ID");
	ret = cf_client_open_or_die(&nl);
	if (ret)
		return ret;
	ret = capfence_client_epoch_retire(nl, id, msg, sizeof(msg));
	if (ret)
		ret = cf_client_fail("epoch retire", ret, msg);
	else if (json)
		printf("{\"epoch\":%" PRIu64 ",\"retired\":true}\n", id);
	else
		printf("epoch %" PRIu64 " retired\n", id);
	capfence_client_close(nl);
	return ret;
}

static const struct cf_cmd epoch_cmds[] = {
	{ .name = "install", .run = epoch_install, .usage = install_usage },
	{ .name = "list", .run = epoch_list, .usage = list_usage },
	{ .name = "show", .run = epoch_show, .usage = show_usage },
	{ .name = "activate", .run = epoch_activate, .usage = activate_usage },
	{ .name = "retire", .run = epoch_retire, .usage = retire_usage },
	{ .name = NULL }
};

const struct cf_cmd cf_epoch_cmd = { .name = "epoch", .sub = epoch_cmds };
