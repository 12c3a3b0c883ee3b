// SPDX-License-Identifier: GPL-2.0
/*
 * capfence key generate | install | remove. Key material lives in
 * libcapfence's guarded memory; every copy made here (the netlink request,
 * the key file text) is wiped with sodium_memzero once used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sodium.h>
#include "cli.h"

static const char generate_usage[] = "capfence key generate [--id N] [-o FILE]";
static const char install_usage[] = "capfence key install FILE";
static const char remove_usage[] = "capfence key remove ID";

static int parse_key_id(const char *s, uint32_t *id)
{
	uint64_t v;

	if (cf_arg_u64(s, &v) || v > UINT32_MAX)
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}

static int key_generate(int argc, char **argv)
{
	char err[CAPFENCE_ERR_MAX] = "", text[256];
	const char *out = NULL;
	struct capfence_key *k = NULL;
	uint32_t id = 1;
	static const struct option lo[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 }
	};
	struct cf_opts o = { .cmd = "key generate", .usage = generate_usage,
			     .shortopts = "o:", .longopts = lo };
	int c, n, ret;

	if (cf_want_help(argc, argv, generate_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		switch (c) {
		case 'i':
			if (parse_key_id(optarg, &id))
				return cf_usage(generate_usage, "key generate: bad key id '%s' (a decimal in 1..4294967295)",
						optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case CF_OPT_ARG:
			return cf_opt_unexpected(&o, optarg);
		default:
			return o.exit;
		}
	}
	ret = capfence_key_generate(id, &k);
	if (ret) {
		cf_err("key generate: %s", strerror(-ret));
		return CF_EXIT_SYSTEM;
	}
	if (out) {
		ret = capfence_key_save(k, out, err, sizeof(err));
		capfence_key_free(k);
		if (ret) {
			cf_err("key generate: %s", err);
			return CF_EXIT_SYSTEM;
		}
		printf("key %u written to %s (mode 0600)\n", id, out);
		return 0;
	}
	n = capfence_key_format(k, text, sizeof(text));
	capfence_key_free(k);
	if (n < 0) {
		cf_err("key generate: cannot format the key");
		return CF_EXIT_SYSTEM;
	}
	ret = fwrite(text, 1, (size_t)n, stdout) == (size_t)n &&
	      !fflush(stdout) ? 0 : CF_EXIT_SYSTEM;
	sodium_memzero(text, sizeof(text));
	if (ret)
		cf_err("key generate: cannot write the key to stdout");
	return ret;
}

static int key_install(int argc, char **argv)
{
	char err[CAPFENCE_ERR_MAX] = "";
	struct capfence_key *k = NULL;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	struct cf_opts o = { .cmd = "key install", .usage = install_usage };
	const char *file = NULL;
	uint32_t id;
	int c, ret;

	if (cf_want_help(argc, argv, install_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c != CF_OPT_ARG)
			return o.exit;
		if (file)
			return cf_opt_unexpected(&o, optarg);
		file = optarg;
	}
	if (!file)
		return cf_usage(install_usage, "key install: missing key FILE");
	if (capfence_key_load(file, &k, err, sizeof(err))) {
		cf_err("key install: %s", err);
		return CF_EXIT_SYSTEM;
	}
	ret = cf_client_open_or_die(&nl);
	if (ret) {
		capfence_key_free(k);
		return ret;
	}
	id = capfence_key_id(k);
	/* the library wipes the request it built from the key bytes */
	ret = capfence_client_key_install(nl, k, msg, sizeof(msg));
	capfence_key_free(k);
	if (ret)
		ret = cf_client_fail("key install", ret, msg);
	else
		printf("key %u installed\n", id);
	capfence_client_close(nl);
	return ret;
}

static int key_remove(int argc, char **argv)
{
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	struct cf_opts o = { .cmd = "key remove", .usage = remove_usage };
	const char *arg = NULL;
	uint32_t id;
	int c, ret;

	if (cf_want_help(argc, argv, remove_usage))
		return 0;
	while ((c = cf_getopt(&o, argc, argv)) != -1) {
		if (c != CF_OPT_ARG)
			return o.exit;
		if (arg)
			return cf_opt_unexpected(&o, optarg);
		arg = optarg;
	}
	if (!arg)
		return cf_usage(remove_usage, "key remove: missing key ID");
	if (parse_key_id(arg, &id))
		return cf_usage(remove_usage, "key remove: bad key id '%s' (a decimal in 1..4294967295)",
				arg);
	ret = cf_client_open_or_die(&nl);
	if (ret)
		return ret;
	ret = capfence_client_key_remove(nl, id, msg, sizeof(msg));
	if (ret)
		ret = cf_client_fail("key remove", ret, msg);
	else
		printf("key %u removed\n", id);
	capfence_client_close(nl);
	return ret;
}

static const struct cf_cmd key_cmds[] = {
	{ .name = "generate", .run = key_generate, .usage = generate_usage },
	{ .name = "install", .run = key_install, .usage = install_usage },
	{ .name = "remove", .run = key_remove, .usage = remove_usage },
	{ .name = NULL }
};

const struct cf_cmd cf_key_cmd = { .name = "key", .sub = key_cmds };
