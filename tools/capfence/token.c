// SPDX-License-Identifier: GPL-2.0
/*
 * capfence mint | inspect | check | delegate | revoke: tokens offline and
 * the delegation-time decision, locally (libcapfence) or in the kernel
 * (CAPFENCE_CMD_DELEGATE, optionally as a dry run). Also the helpers the
 * other command files share: argument parsing, typed decisions, JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char mint_usage[] =
	"capfence mint --key FILE --class CLASS --epoch ID [--constraint C]... [--id CAP_ID] [--complain] [--json]";
static const char inspect_usage[] =
	"capfence inspect TOKEN [--key FILE] [--json]";
static const char check_usage[] =
	"capfence check TOKEN (--pid PID [--from PID] | --epoch ID) [--key FILE] [--json]";
static const char delegate_usage[] =
	"capfence delegate TOKEN --pid PID [--from PID] [--remint --key FILE] [--json]";
static const char revoke_usage[] = "capfence revoke CAP_ID [--json]";

/* ---- shared helpers ----------------------------------------------------- */

static int parse_digits(const char *s, int base, uint64_t *v)
{
	uint64_t x = 0;
	const char *p;

	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned int)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned int)(*p - 'A' + 10);
		else
			return -EINVAL;
		if (x > (UINT64_MAX - d) / (uint64_t)base)
			return -ERANGE;
		x = x * (uint64_t)base + d;
	}
	*v = x;
	return 0;
}

/* A non-zero number in @base; ids are never 0. */
static int parse_nonzero(const char *s, int base, uint64_t *v)
{
	uint64_t x;
	int err = parse_digits(s, base, &x);

	if (err)
		return err;
	if (!x)
		return -EINVAL;
	*v = x;
	return 0;
}

int cf_arg_u64(const char *s, uint64_t *v)
{
	return s ? parse_nonzero(s, 10, v) : -EINVAL;
}

int cf_arg_cap_id(const char *s, uint64_t *v)
{
	if (!s)
		return -EINVAL;
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		return parse_nonzero(s + 2, 16, v);
	if (strlen(s) == 16)
		return parse_nonzero(s, 16, v);	/* as capfence prints it */
	return parse_nonzero(s, 10, v);
}

int cf_arg_pid(const char *s, uint32_t *v)
{
	uint64_t x;

	if (cf_arg_u64(s, &x) || x > INT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

const char *cf_errno_name(int err)
{
	static const struct { int e; const char *n; } names[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },
		{ EINTR, "EINTR" }, { EIO, "EIO" }, { E2BIG, "E2BIG" },
		{ ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { EINVAL, "EINVAL" }, { ERANGE, "ERANGE" },
		{ ENOKEY, "ENOKEY" }, { EBADMSG, "EBADMSG" },
		{ ESTALE, "ESTALE" }, { EKEYREVOKED, "EKEYREVOKED" },
		{ EKEYEXPIRED, "EKEYEXPIRED" }, { ENOLINK, "ENOLINK" },
		{ EALREADY, "EALREADY" }, { EMSGSIZE, "EMSGSIZE" },
		{ EOPNOTSUPP, "EOPNOTSUPP" },
	};
	static char num[16];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == err)
			return names[i].n;
	snprintf(num, sizeof(num), "%d", err);
	return num;
}

int cf_token_arg(const char *what, const char *text, struct capfence_token *t)
{
	char err[CAPFENCE_ERR_MAX] = "";

	if (capfence_token_from_text(text, t, err, sizeof(err))) {
		/* the kernel too calls a token that does not decode forged */
		cf_err("%s: malformed token: %s", what, err);
		return CF_EXIT_FORGED;
	}
	return 0;
}

void cf_print_constraints(FILE *f, const struct capfence_constraint *c, size_t n)
{
	char buf[CAPFENCE_CONSTRAINT_TEXT_MAX];
	size_t i;

	if (!n) {
		fputs("-", f);
		return;
	}
	for (i = 0; i < n; i++) {
		if (capfence_constraint_format(&c[i], buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "?");
		fprintf(f, "%s%s", i ? "," : "", buf);
	}
}

void cf_json_constraints(FILE *f, const struct capfence_constraint *c, size_t n)
{
	char buf[CAPFENCE_CONSTRAINT_TEXT_MAX];
	size_t i;

	fputc('[', f);
	for (i = 0; i < n; i++) {
		if (capfence_constraint_format(&c[i], buf, sizeof(buf)) < 0)
			snprintf(buf, sizeof(buf), "?");
		if (i)
			fputc(',', f);
		cf_json_str(f, buf);
	}
	fputc(']', f);
}

void cf_decision_text(const struct capfence_result *d, char *buf, size_t len)
{
	const char *ext = d->message;

	if (d->reason == CAPFENCE_R_OK && !d->err) {
		snprintf(buf, len, "ok");
		return;
	}
	if (d->reason >= 0)
		snprintf(buf, len, "rejected: %s (%s)%s%s",
			 capfence_reason_name(d->reason),
			 cf_errno_name(capfence_reason_errno(d->reason)),
			 ext[0] ? ": " : "", ext);
	else
		snprintf(buf, len, "%s%s%s", ext, ext[0] ? " " : "",
			 strerror(-d->err));
}

int cf_decision_exit(const struct capfence_result *d)
{
	if (d->reason >= 0)
		return capfence_reason_exit(d->reason);
	return d->err ? CF_EXIT_SYSTEM : CF_EXIT_OK;
}

/* JSON members of a decision, after "{": no leading comma. */
static void json_decision(const struct capfence_result *d)
{
	int r = d->reason;

	printf("\"reason\":");
	if (r >= 0)
		cf_json_str(stdout, capfence_reason_name(r));
	else
		printf("null");
	printf(",\"errno\":");
	if (r > 0)
		cf_json_str(stdout, cf_errno_name(capfence_reason_errno(r)));
	else if (d->err)
		cf_json_str(stdout, cf_errno_name(-d->err));
	else
		printf("null");
	printf(",\"message\":");
	if (d->message[0])
		cf_json_str(stdout, d->message);
	else
		printf("null");
	printf(",\"cap_id\":\"%016" PRIx64 "\",\"epoch_id\":%" PRIu64
	       ",\"fence\":%" PRIu64, d->cap_id, d->epoch_id, d->fence);
}

static int load_key(const char *what, const char *path, struct capfence_key **k)
{
	char err[CAPFENCE_ERR_MAX] = "";

	if (capfence_key_load(path, k, err, sizeof(err))) {
		cf_err("%s: key file %s", what, err);
		return CF_EXIT_SYSTEM;
	}
	return 0;
}

/* Split "a,b,c" into constraints appended to cs[*n]. */
static int parse_constraints(const char *what, const char *arg,
			     struct capfence_constraint *cs, size_t *n)
{
	char err[CAPFENCE_ERR_MAX] = "", *dup, *p, *save = NULL;
	int ret = 0;

	dup = strdup(arg);
	if (!dup)
		return CF_EXIT_SYSTEM;
	for (p = strtok_r(dup, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (*n == CAPFENCE_MAX_CONSTRAINTS) {
			cf_err("%s: more than %d constraints", what,
			       CAPFENCE_MAX_CONSTRAINTS);
			ret = CF_EXIT_USAGE;
			break;
		}
		if (capfence_constraint_parse(p, &cs[*n], err, sizeof(err))) {
			cf_err("%s: --constraint: %s", what, err);
			ret = CF_EXIT_USAGE;
			break;
		}
		(*n)++;
	}
	free(dup);
	return ret;
}

/* ---- mint --------------------------------------------------------------- */

static void print_token_json(const struct capfence_token *t, const char *text)
{
	printf("{\"token\":");
	cf_json_str(stdout, text);
	printf(",\"cap_id\":\"%016" PRIx64 "\",\"class\":", t->cap_id);
	cf_json_str(stdout, capfence_class_name(t->class_id) ?: "?");
	printf(",\"epoch_id\":%" PRIu64 ",\"key_id\":%u,\"constraint\":",
	       t->epoch_id, t->key_id);
	cf_json_constraints(stdout, t->constraints, t->n);
	printf("}\n");
}

static int cf_cmd_mint(int argc, char **argv)
{
	struct capfence_constraint cs[CAPFENCE_MAX_CONSTRAINTS];
	const char *keyfile = NULL, *cls = NULL;
	char err[CAPFENCE_ERR_MAX] = "", text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	uint64_t epoch = 0, cap_id = 0;
	struct capfence_key *k = NULL;
	struct capfence_token t;
	bool json = false, complain = false;
	size_t n = 0;
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "complain", no_argument, NULL, 'L' },
		{ "key", required_argument, NULL, 'k' },
		{ "class", required_argument, NULL, 'c' },
		{ "epoch", required_argument, NULL, 'e' },
		{ "id", required_argument, NULL, 'i' },
		{ "constraint", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "mint", .usage = mint_usage, .longopts = lo };
	int c, class_id, ret;

	if (cf_want_help(argc, argv, mint_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'L':
			complain = true;
			break;
		case 'k':
			keyfile = optarg;
			break;
		case 'c':
			cls = optarg;
			break;
		case 'e':
			if (cf_arg_u64(optarg, &epoch))
				return cf_usage(mint_usage, "mint: bad epoch id '%s' (a decimal > 0)",
						optarg);
			break;
		case 'i':
			if (cf_arg_cap_id(optarg, &cap_id))
				return cf_usage(mint_usage, "mint: bad cap_id '%s' (hex 0x... or 16 digits, or decimal; not 0)",
						optarg);
			break;
		case 'C':
			ret = parse_constraints("mint", optarg, cs, &n);
			if (ret)
				return ret;
			break;
		case CF_OPT_ARG:
			return cf_opt_unexpected(&o, optarg);
		default:
			return o.exit;
		}
	}
	if (!keyfile)
		return cf_usage(mint_usage, "mint: missing --key FILE");
	if (!cls)
		return cf_usage(mint_usage, "mint: missing --class CLASS");
	if (!epoch)
		return cf_usage(mint_usage, "mint: missing --epoch ID");
	class_id = capfence_class_from_name(cls);
	if (class_id < 0) {
		char names[128] = "";
		int c;

		/* the library's class table, not a second list */
		for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names),
				 "%s%s", c > 1 ? ", " : "", capfence_class_name(c));
		return cf_usage(mint_usage, "mint: unknown class \"%s\" (%s)",
				cls, names);
	}
	ret = load_key("mint", keyfile, &k);
	if (ret)
		return ret;
	if (capfence_token_mint(k, class_id, epoch, cs, n, cap_id, &t, err,
			  sizeof(err))) {
		cf_err("mint: %s", err);
		capfence_key_free(k);
		return CF_EXIT_USAGE;
	}
	/* for a complain epoch: the flag is part of what the MAC covers */
	if (complain) {
		t.flags |= CAPFENCE_TOKEN_F_COMPLAIN;
		if (capfence_token_compute_mac(k, &t, t.mac)) {
			cf_err("mint: cannot compute the token's MAC");
			capfence_key_free(k);
			return CF_EXIT_SYSTEM;
		}
	}
	capfence_key_free(k);
	if (capfence_token_to_text(&t, text, sizeof(text)) < 0) {
		cf_err("mint: cannot encode the token");
		return CF_EXIT_SYSTEM;
	}
	if (json)
		print_token_json(&t, text);
	else
		printf("%s\n", text);
	return 0;
}

/* ---- inspect ------------------------------------------------------------ */

static int cf_cmd_inspect(int argc, char **argv)
{
	const char *text = NULL, *keyfile = NULL;
	char why[CAPFENCE_ERR_MAX] = "";
	struct capfence_key *k = NULL;
	struct capfence_token t;
	bool json = false;
	int verified = -1;	/* -1 not checked, 0 forged, 1 ok */
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "key", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "inspect", .usage = inspect_usage, .longopts = lo };
	int c, i, ret;

	if (cf_want_help(argc, argv, inspect_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'k')
			keyfile = optarg;
		else if (c == CF_OPT_ARG && !text)
			text = optarg;
		else if (c == CF_OPT_ARG)
			return cf_opt_unexpected(&o, optarg);
		else
			return o.exit;
	}
	if (!text)
		return cf_usage(inspect_usage, "inspect: missing TOKEN");
	ret = cf_token_arg("inspect", text, &t);
	if (ret)
		return ret;
	if (keyfile) {
		ret = load_key("inspect", keyfile, &k);
		if (ret)
			return ret;
		if (capfence_key_id(k) != t.key_id)
			snprintf(why, sizeof(why), "token names key %u, the key file holds key %u",
				 t.key_id, capfence_key_id(k));
		else if (capfence_token_verify(k, &t))
			snprintf(why, sizeof(why), "MAC does not verify under key %u",
				 t.key_id);
		verified = !why[0];
		capfence_key_free(k);
	}
	if (json) {
		printf("{\"version\":%u,\"cap_id\":\"%016" PRIx64 "\",\"class\":",
		       t.version, t.cap_id);
		cf_json_str(stdout, capfence_class_name(t.class_id) ?: "?");
		printf(",\"epoch_id\":%" PRIu64 ",\"key_id\":%u,\"flags\":%u,\"constraint\":",
		       t.epoch_id, t.key_id, t.flags);
		cf_json_constraints(stdout, t.constraints, t.n);
		printf(",\"mac\":\"");
		for (i = 0; i < CAPFENCE_MAC_LEN; i++)
			printf("%02x", t.mac[i]);
		printf("\",\"verified\":%s,\"reason\":%s}\n",
		       verified < 0 ? "null" : verified ? "true" : "false",
		       verified < 0 ? "null" : verified ? "\"ok\"" : "\"forged\"");
	} else {
		printf("version     %u\n", t.version);
		printf("class       %s\n", capfence_class_name(t.class_id) ?: "?");
		printf("cap_id      %016" PRIx64 "\n", t.cap_id);
		printf("epoch_id    %" PRIu64 "\n", t.epoch_id);
		printf("key_id      %u\n", t.key_id);
		printf("flags       0x%04x\n", t.flags);
		printf("constraint  ");
		cf_print_constraints(stdout, t.constraints, t.n);
		printf("%s\nmac         ", t.n ? "" : " (unconstrained)");
		for (i = 0; i < CAPFENCE_MAC_LEN; i++)
			printf("%02x", t.mac[i]);
		printf("\nverified    %s\n", verified < 0 ? "not checked (no --key)" :
		       verified ? "yes" : "NO (forged)");
	}
	if (verified == 0) {
		fflush(stdout);
		cf_err("inspect: forged: %s", why);
		return CF_EXIT_FORGED;
	}
	return 0;
}

/* ---- check (local) ------------------------------------------------------- */

static int check_local(const struct capfence_token *t, uint64_t epoch,
		       const char *keyfile, bool json)
{
	const char *cls = capfence_class_name(t->class_id) ?: "?";
	char msg[CAPFENCE_ERR_MAX + CAPFENCE_RULE_TEXT_MAX] = "";
	struct capfence_epoch_info *info;
	struct capfence_key *k = NULL;
	struct capfence_client *nl = NULL;
	char why[CAPFENCE_ERR_MAX] = "";
	int r, ret;

	if (keyfile) {
		ret = load_key("check", keyfile, &k);
		if (ret)
			return ret;
	}
	info = calloc(1, sizeof(*info));
	if (!info) {
		capfence_key_free(k);
		return CF_EXIT_SYSTEM;
	}
	ret = capfence_client_open(&nl, NULL, 0);
	if (ret) {
		if (ret == -ENOENT)
			cf_err("check: the capfence module is not loaded, so epoch %" PRIu64 " cannot be fetched (modprobe capfence)",
			       epoch);
		else
			cf_err("check: cannot open generic netlink: %s", strerror(-ret));
		ret = CF_EXIT_SYSTEM;
		goto out;
	}
	ret = capfence_client_epoch_get(nl, epoch, info, why, sizeof(why));
	if (ret) {
		ret = cf_client_fail("check: epoch get", ret, why);
		capfence_client_close(nl);
		goto out;
	}
	capfence_client_close(nl);
	if (k) {
		const struct capfence_key *keys[1] = { k };

		r = (int)capfence_decide_delegation(keys, 1, t, &info->e);
		if (r == CAPFENCE_R_FORGED)
			snprintf(msg, sizeof(msg), capfence_key_id(k) != t->key_id ?
				 "token names key %u, the key file holds another key" :
				 "token MAC does not verify under key %u",
				 t->key_id);
	} else if (t->epoch_id != info->e.epoch_id) {
		r = CAPFENCE_R_EPOCH_MISMATCH;
	} else if (!capfence_rule_admits_constraints(&info->e.rules[t->class_id],
					       t->constraints, t->n)) {
		r = CAPFENCE_R_CLASS_DENIED;
	} else {
		r = CAPFENCE_R_OK;
	}
	if (r == CAPFENCE_R_EPOCH_MISMATCH) {
		snprintf(msg, sizeof(msg), "token minted under epoch %" PRIu64 ", the receiver's epoch is %" PRIu64 "; re-mint required",
			 t->epoch_id, epoch);
	} else if (r == CAPFENCE_R_CLASS_DENIED) {
		char rule[CAPFENCE_RULE_TEXT_MAX];

		if (capfence_rule_format(&info->e.rules[t->class_id], rule,
				   sizeof(rule)) < 0)
			snprintf(rule, sizeof(rule), "%s=?", cls);
		snprintf(msg, sizeof(msg), "%s: epoch %" PRIu64 " has %s",
			 info->e.rules[t->class_id].kind == CAPFENCE_RULE_TOKEN ?
			 "token constraint is not inside the epoch's rule" :
			 "the epoch does not grant this class by token",
			 epoch, rule);
	} else if (r == CAPFENCE_R_OK && info->fenced_at[t->class_id]) {
		r = CAPFENCE_R_FENCED;
		snprintf(msg, sizeof(msg), "a newer epoch narrowed %s; tokens of epoch %" PRIu64 " are fenced since fence %" PRIu64,
			 cls, epoch, info->fenced_at[t->class_id]);
	}
	if (json) {
		printf("{\"mode\":\"local\",\"reason\":");
		cf_json_str(stdout, capfence_reason_name(r));
		printf(",\"errno\":");
		if (r)
			cf_json_str(stdout, cf_errno_name(capfence_reason_errno(r)));
		else
			printf("null");
		printf(",\"message\":");
		if (msg[0])
			cf_json_str(stdout, msg);
		else
			printf("null");
		printf(",\"cap_id\":\"%016" PRIx64 "\",\"class\":", t->cap_id);
		cf_json_str(stdout, cls);
		printf(",\"token_epoch_id\":%" PRIu64 ",\"epoch_id\":%" PRIu64
		       ",\"mac_verified\":%s}\n", t->epoch_id, epoch,
		       k && r != CAPFENCE_R_FORGED ? "true" : "false");
	} else if (r) {
		printf("rejected: %s (%s): %s\n", capfence_reason_name(r),
		       cf_errno_name(capfence_reason_errno(r)), msg);
	} else {
		printf("ok%s\n", k ? "" : " (MAC not verified: no --key; revocation not checked)");
	}
	ret = capfence_reason_exit(r);
out:
	free(info);
	capfence_key_free(k);
	return ret;
}

/* ---- delegate and check --pid (kernel) ------------------------------------ */

static int check_kernel(const struct capfence_token *t, uint32_t pid, uint32_t from,
			const char *keyfile, bool json)
{
	struct capfence_result d;
	char line[512];
	struct capfence_client *nl = NULL;
	int err;

	if (keyfile) {
		struct capfence_key *k = NULL;

		err = load_key("check", keyfile, &k);
		if (err)
			return err;
		if (capfence_key_id(k) != t->key_id || capfence_token_verify(k, t)) {
			snprintf(line, sizeof(line), "token %s under key file %s (local check)",
				 capfence_key_id(k) != t->key_id ? "names another key than the one" :
				 "MAC does not verify", keyfile);
			capfence_key_free(k);
			if (json) {
				printf("{\"mode\":\"local\",\"reason\":\"forged\",\"errno\":\"EBADMSG\",\"message\":");
				cf_json_str(stdout, line);
				printf(",\"cap_id\":\"%016" PRIx64 "\",\"pid\":%u}\n",
				       t->cap_id, pid);
			} else {
				printf("rejected: forged (EBADMSG): %s\n", line);
			}
			return CF_EXIT_FORGED;
		}
		capfence_key_free(k);
	}
	err = cf_client_open_or_die(&nl);
	if (err)
		return err;
	err = capfence_client_delegate(nl, t, pid, from,
				       CAPFENCE_DELEGATE_DRY_RUN, &d);
	if (err && d.reason < 0) {
		err = cf_client_fail("check", err, d.message);
		capfence_client_close(nl);
		return err;
	}
	if (json) {
		printf("{\"mode\":\"kernel\",\"pid\":%u,", pid);
		json_decision(&d);
		printf("}\n");
	} else {
		cf_decision_text(&d, line, sizeof(line));
		printf("%s\n", line);
	}
	capfence_client_close(nl);
	return cf_decision_exit(&d);
}

static int cf_cmd_check(int argc, char **argv)
{
	const char *text = NULL, *keyfile = NULL;
	uint32_t pid = 0, from = 0;
	uint64_t epoch = 0;
	struct capfence_token t;
	bool json = false;
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "key", required_argument, NULL, 'k' },
		{ "pid", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'F' },
		{ "epoch", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "check", .usage = check_usage, .longopts = lo };
	int c, ret;

	if (cf_want_help(argc, argv, check_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'k':
			keyfile = optarg;
			break;
		case 'p':
			if (cf_arg_pid(optarg, &pid))
				return cf_usage(check_usage, "check: bad pid '%s'", optarg);
			break;
		case 'F':
			if (cf_arg_pid(optarg, &from))
				return cf_usage(check_usage, "check: bad --from pid '%s'", optarg);
			break;
		case 'e':
			if (cf_arg_u64(optarg, &epoch))
				return cf_usage(check_usage, "check: bad epoch id '%s' (a decimal > 0)",
						optarg);
			break;
		case CF_OPT_ARG:
			if (text)
				return cf_opt_unexpected(&o, optarg);
			text = optarg;
			break;
		default:
			return o.exit;
		}
	}
	if (!text)
		return cf_usage(check_usage, "check: missing TOKEN");
	if (!pid == !epoch)
		return cf_usage(check_usage, "check: give exactly one of --pid PID and --epoch ID");
	if (from && !pid)
		return cf_usage(check_usage, "check: --from needs --pid");
	ret = cf_token_arg("check", text, &t);
	if (ret)
		return ret;
	if (epoch)
		return check_local(&t, epoch, keyfile, json);
	return check_kernel(&t, pid, from, keyfile, json);
}

static void json_step(const struct capfence_result *d, uint32_t pid)
{
	printf("{\"action\":\"delegate\",\"pid\":%u,", pid);
	json_decision(d);
	printf("}");
}

static int cf_cmd_delegate(int argc, char **argv)
{
	const char *text = NULL, *keyfile = NULL;
	char line[512], ntext[CAPFENCE_TOKEN_TEXT_MAX + 1];
	struct capfence_result d, d1;
	uint32_t pid = 0, from = 0;
	struct capfence_key *k = NULL;
	struct capfence_token t, nt;
	bool json = false, remint = false;
	struct capfence_client *nl = NULL;
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "remint", no_argument, NULL, 'r' },
		{ "key", required_argument, NULL, 'k' },
		{ "pid", required_argument, NULL, 'p' },
		{ "from", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "delegate", .usage = delegate_usage, .longopts = lo };
	int c, err, ret;

	if (cf_want_help(argc, argv, delegate_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'r':
			remint = true;
			break;
		case 'k':
			keyfile = optarg;
			break;
		case 'p':
			if (cf_arg_pid(optarg, &pid))
				return cf_usage(delegate_usage, "delegate: bad pid '%s'", optarg);
			break;
		case 'F':
			if (cf_arg_pid(optarg, &from))
				return cf_usage(delegate_usage, "delegate: bad --from pid '%s'", optarg);
			break;
		case CF_OPT_ARG:
			if (text)
				return cf_opt_unexpected(&o, optarg);
			text = optarg;
			break;
		default:
			return o.exit;
		}
	}
	if (!text)
		return cf_usage(delegate_usage, "delegate: missing TOKEN");
	if (!pid)
		return cf_usage(delegate_usage, "delegate: missing --pid PID");
	if (remint && !keyfile)
		return cf_usage(delegate_usage, "delegate: --remint needs --key FILE");
	if (keyfile && !remint)
		return cf_usage(delegate_usage, "delegate: --key is only used with --remint");
	ret = cf_token_arg("delegate", text, &t);
	if (ret)
		return ret;
	if (remint) {
		ret = load_key("delegate", keyfile, &k);
		if (ret)
			return ret;
	}
	ret = cf_client_open_or_die(&nl);
	if (ret) {
		capfence_key_free(k);
		return ret;
	}
	if (remint)
		err = capfence_client_delegate_remint(nl, k, &t, pid, from, &d1,
						      &nt, &d);
	else
		err = capfence_client_delegate(nl, &t, pid, from, 0, &d);
	if (!remint)
		d1 = d;
	if (d1.err && d1.reason < 0) {
		ret = cf_client_fail("delegate", d1.err, d1.message);
		goto out;
	}
	if (!remint || d1.reason != CAPFENCE_R_EPOCH_MISMATCH) {
		ret = cf_decision_exit(&d1);
		if (json) {
			json_step(&d1, pid);
			printf("\n");
		} else if (!ret) {
			printf("ok: cap_id %016" PRIx64 " delegated to pid %u (epoch %" PRIu64 ", fence %" PRIu64 ")\n",
			       d1.cap_id, pid, d1.epoch_id, d1.fence);
		}
		if (ret) {
			cf_decision_text(&d1, line, sizeof(line));
			cf_err("delegate: %s", line);
		}
		goto out;
	}

	/* --remint: the library re-minted under the receiver's epoch */
	cf_decision_text(&d1, line, sizeof(line));
	if (!json)
		printf("step 1: delegate cap_id %016" PRIx64 " (epoch %" PRIu64 ") to pid %u: %s\n",
		       t.cap_id, t.epoch_id, pid, line);
	if (!nt.cap_id || capfence_token_to_text(&nt, ntext, sizeof(ntext)) < 0) {
		cf_err("delegate: re-mint under epoch %" PRIu64 " failed: %s",
		       d1.epoch_id, d.message);
		ret = CF_EXIT_SYSTEM;
		goto out;
	}
	if (err && d.reason < 0) {
		ret = cf_client_fail("delegate (after re-mint)", err, d.message);
		goto out;
	}
	ret = cf_decision_exit(&d);
	cf_decision_text(&d, line, sizeof(line));
	if (json) {
		printf("{\"steps\":[");
		json_step(&d1, pid);
		printf(",{\"action\":\"remint\",\"old_cap_id\":\"%016" PRIx64 "\",\"token\":",
		       t.cap_id);
		cf_json_str(stdout, ntext);
		printf(",\"cap_id\":\"%016" PRIx64 "\",\"class\":", nt.cap_id);
		cf_json_str(stdout, capfence_class_name(nt.class_id) ?: "?");
		printf(",\"epoch_id\":%" PRIu64 ",\"key_id\":%u,\"constraint\":",
		       nt.epoch_id, nt.key_id);
		cf_json_constraints(stdout, nt.constraints, nt.n);
		printf("},");
		json_step(&d, pid);
		printf("],\"reason\":");
		cf_json_str(stdout, d.reason >= 0 ? capfence_reason_name(d.reason) : "?");
		printf(",\"token\":");
		if (!ret)
			cf_json_str(stdout, ntext);
		else
			printf("null");
		printf("}\n");
	} else {
		printf("step 2: re-minted %s ", capfence_class_name(nt.class_id) ?: "?");
		cf_print_constraints(stdout, nt.constraints, nt.n);
		printf(" under epoch %" PRIu64 " (key %u) as new random cap_id %016" PRIx64 " (was %016" PRIx64 "); delegate to pid %u: %s\n",
		       nt.epoch_id, nt.key_id, nt.cap_id, t.cap_id, pid, line);
		if (!ret)
			printf("%s\n", ntext);
	}
	if (ret)
		cf_err("delegate: after re-mint under epoch %" PRIu64 ": %s",
		       nt.epoch_id, line);
out:
	capfence_client_close(nl);
	capfence_key_free(k);
	return ret;
}

/* ---- revoke --------------------------------------------------------------- */

static int cf_cmd_revoke(int argc, char **argv)
{
	struct capfence_result d;
	uint64_t cap_id = 0;
	bool json = false;
	struct capfence_client *nl = NULL;
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "revoke", .usage = revoke_usage, .longopts = lo };
	int c, err;

	if (cf_want_help(argc, argv, revoke_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == CF_OPT_ARG && !cap_id) {
			if (cf_arg_cap_id(optarg, &cap_id))
				return cf_usage(revoke_usage, "revoke: bad cap_id '%s' (hex 0x... or 16 digits, or decimal; not 0)",
						optarg);
		} else if (c == CF_OPT_ARG) {
			return cf_opt_unexpected(&o, optarg);
		} else {
			return o.exit;
		}
	}
	if (!cap_id)
		return cf_usage(revoke_usage, "revoke: missing CAP_ID");
	err = cf_client_open_or_die(&nl);
	if (err)
		return err;
	err = capfence_client_revoke(nl, cap_id, &d);
	if (err) {
		err = cf_client_fail("revoke", err, d.message);
		capfence_client_close(nl);
		return err;
	}
	capfence_client_close(nl);
	if (json)
		printf("{\"cap_id\":\"%016" PRIx64 "\",\"fence\":%" PRIu64 "}\n",
		       cap_id, d.fence);
	else
		printf("revoked cap_id %016" PRIx64 " (fence %" PRIu64 ")\n",
		       cap_id, d.fence);
	return 0;
}

const struct cf_cmd cf_mint_cmd = { .name = "mint", .run = cf_cmd_mint, .usage = mint_usage };

const struct cf_cmd cf_inspect_cmd = { .name = "inspect", .run = cf_cmd_inspect, .usage = inspect_usage };

const struct cf_cmd cf_check_cmd = { .name = "check", .run = cf_cmd_check, .usage = check_usage };

const struct cf_cmd cf_delegate_cmd = { .name = "delegate", .run = cf_cmd_delegate, .usage = delegate_usage };

const struct cf_cmd cf_revoke_cmd = { .name = "revoke", .run = cf_cmd_revoke, .usage = revoke_usage };
