// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An orchestrator built against libcapfence 1.3: compiled with the 1.3
 * headers of selftests/abi/1.3 only (struct capfence_epoch sized by
 * CAPFENCE_CLASS_MAX == 4: rules[5]), linked against a stub with 1.3's
 * version script, and run by tools/lib/abi-check against today's
 * libcapfence.so.1. It exercises every function that takes the structs
 * whose size 1.4 changed and that runs without a kernel, and checks
 *   - the answers are 1.3's (the texts, the decisions, the errors);
 *   - the library never writes past the 1.3 struct (a guard after each);
 *   - it runs the library's 1.4 or later (capfence_version_number()).
 * With CAPFENCE_ABI_KERNEL=1 (in the VM, python/tests/run-vm-tests), also
 * the client calls of 1.3's layout against the module: epoch install
 * (@1.0, _at @1.1, _seccomp @1.3), get and list (@1.0) read back.
 * Prints kselftest-style lines; exit status 1 when anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capfence/capfence.h>

#if CAPFENCE_LIB_VERSION != 10300
#error "build this against selftests/abi/1.3, the headers of libcapfence 1.3"
#endif
_Static_assert(CAPFENCE_CLASS_MAX == 4, "the 1.3 headers have four classes");

static int n, failed;

static void check(int ok, const char *what)
{
	n++;
	if (!ok)
		failed++;
	printf("%sok %d - 1.3 program: %s\n", ok ? "" : "not ", n, what);
}

#define GUARD_LEN 256
#define GUARD_BYTE 0xa5

/* a 1.3 struct, then bytes a newer layout would write over */
struct guarded_epoch {
	struct capfence_epoch e;
	unsigned char guard[GUARD_LEN];
};

static void guard_set(unsigned char *g)
{
	memset(g, GUARD_BYTE, GUARD_LEN);
}

static int guard_ok(const unsigned char *g)
{
	int i;

	for (i = 0; i < GUARD_LEN; i++)
		if (g[i] != GUARD_BYTE)
			return 0;
	return 1;
}

static const char *const seccomp_denies_connect =
	"{ \"defaultAction\": \"SCMP_ACT_ALLOW\","
	"  \"architectures\": [\"SCMP_ARCH_X86_64\"],"
	"  \"syscalls\": [ { \"names\": [\"connect\"], \"action\": \"SCMP_ACT_ERRNO\" } ] }";
static const char *const seccomp_denies_mount =
	"{ \"defaultAction\": \"SCMP_ACT_ALLOW\","
	"  \"architectures\": [\"SCMP_ARCH_X86_64\"],"
	"  \"syscalls\": [ { \"names\": [\"mount\"], \"action\": \"SCMP_ACT_ERRNO\" } ] }";

/* the client calls with 1.3's layout, against the module */
static void kernel_part(const struct capfence_epoch *tmpl)
{
	struct guarded_info {
		struct capfence_epoch_info i;
		unsigned char guard[GUARD_LEN];
	} *gi = malloc(sizeof(*gi));
	struct capfence_epoch_info *v = NULL;
	struct capfence_client *c = NULL;
	struct capfence_status st;
	struct capfence_epoch e = *tmpl;
	char err[CAPFENCE_ERR_MAX] = "";
	size_t n = 0, k;
	int found = 0, ret;

	if (!gi || capfence_client_open(&c, err, sizeof(err)) ||
	    capfence_client_status(c, &st, err, sizeof(err))) {
		check(0, "client: open and status");
		printf("# %s\n", err);
		capfence_client_close(c);
		free(gi);
		return;
	}
	e.epoch_id = st.max_epoch + 1;
	ret = capfence_client_epoch_install(c, &e, err, sizeof(err));
	check(!ret, "capfence_client_epoch_install (@LIBCAPFENCE_1.0)");
	if (ret)
		printf("# %s\n", err);
	guard_set(gi->guard);
	ret = capfence_client_epoch_get(c, e.epoch_id, &gi->i, err, sizeof(err));
	check(!ret && gi->i.e.epoch_id == e.epoch_id &&
	      gi->i.e.rules[CAPFENCE_CLASS_NET_CONNECT].kind == CAPFENCE_RULE_TOKEN &&
	      gi->i.e.rules[CAPFENCE_CLASS_NET_CONNECT].n == 1 &&
	      gi->i.e.rules[CAPFENCE_CLASS_FS_READ].kind == CAPFENCE_RULE_OPEN &&
	      gi->i.e.rules[CAPFENCE_CLASS_FS_WRITE].kind == CAPFENCE_RULE_DENY,
	      "capfence_client_epoch_get (@LIBCAPFENCE_1.0) reads the rules back");
	check(guard_ok(gi->guard), "capfence_client_epoch_get: nothing written past the struct");
	ret = capfence_client_epoch_list(c, &v, &n, err, sizeof(err));
	for (k = 0; !ret && k < n; k++)
		if (v[k].e.epoch_id == e.epoch_id &&
		    v[k].e.rules[CAPFENCE_CLASS_FS_READ].kind == CAPFENCE_RULE_OPEN)
			found++;
	check(!ret && found == 1,
	      "capfence_client_epoch_list (@LIBCAPFENCE_1.0): 1.3-sized entries");
	capfence_free(v);
	e.epoch_id++;
	ret = capfence_client_epoch_install_at(c, &e, 0, err, sizeof(err));
	check(!ret, "capfence_client_epoch_install_at (@LIBCAPFENCE_1.1)");
	e.epoch_id++;
	ret = capfence_client_epoch_install_seccomp(c, &e, NULL, err, sizeof(err));
	check(!ret, "capfence_client_epoch_install_seccomp (@LIBCAPFENCE_1.3)");
	ret = capfence_client_epoch_get(c, e.epoch_id, &gi->i, err, sizeof(err));
	check(!ret && gi->i.e.epoch_id == e.epoch_id && guard_ok(gi->guard),
	      "the last one reads back too");
	/* 1 passes a flag it does not know to no one and decides (2 refuses it) */
	{
		struct capfence_result r;
		struct capfence_token t;

		memset(&t, 0, sizeof(t));
		t.version = CAPFENCE_TOKEN_VERSION;
		t.class_id = CAPFENCE_CLASS_FS_READ;
		t.key_id = 1;
		t.cap_id = 1;
		t.epoch_id = 1;
		capfence_client_delegate(c, &t, 0x7ffffffe, 0,
					 CAPFENCE_DELEGATE_DRY_RUN | 0x2, &r);
		check(r.reason > 0,
		      "capfence_client_delegate (@LIBCAPFENCE_1.0) ignores a flag it does not know: the kernel decides");
		if (r.reason <= 0)
			printf("# reason %d err %d: %s\n", r.reason, r.err, r.message);
	}
	capfence_client_close(c);
	free(gi);
}

int main(int argc, char **argv)
{
	static const char *const rules41[] = {
		"net:connect=token:10.0.0.0/8", "fs:read=open",
	};
	static const char *const rules_dup[] = { "fs:read=open", "fs:read=deny" };
	static const char *const want41 =
		"epoch 41\nnet:connect=token:10.0.0.0/8\nnet:bind=deny\n"
		"fs:read=open\nfs:write=deny\n";
	struct guarded_epoch *g41 = malloc(sizeof(*g41));
	struct guarded_epoch *g42 = malloc(sizeof(*g42));
	struct guarded_epoch *gi = malloc(sizeof(*gi));
	struct capfence_constraint c;
	struct capfence_token t_net, t_bind, t_fs;
	struct capfence_key *k = NULL;
	struct capfence_verifier *v = NULL;
	struct capfence_seccomp *sc = NULL;
	uint8_t raw[CAPFENCE_KEY_LEN];
	char err[CAPFENCE_ERR_MAX], buf[4096];
	const char *rules_path = argc > 1 ? argv[1] : NULL;
	int ret, i;

	(void)argc;
	if (!g41 || !g42 || !gi)
		return 1;
	printf("TAP version 13\n");
	check(sizeof(struct capfence_epoch) == 10432 &&
	      sizeof(struct capfence_epoch_info) == 10480,
	      "built with the 1.3 layout (struct capfence_epoch 10432 bytes)");
	check(capfence_version_number() >= 10400,
	      "runs against libcapfence 1.4 or later");
	printf("# library %s\n", capfence_version());

	/* capfence_epoch_init */
	guard_set(gi->guard);
	memset(&gi->e, 0xff, sizeof(gi->e));
	capfence_epoch_init(&gi->e, 7);
	ret = gi->e.epoch_id == 7;
	for (i = 1; i <= CAPFENCE_CLASS_MAX; i++)
		ret &= gi->e.rules[i].class_id == i &&
		       gi->e.rules[i].kind == CAPFENCE_RULE_DENY && !gi->e.rules[i].n;
	check(ret, "capfence_epoch_init: every class deny");
	check(guard_ok(gi->guard), "capfence_epoch_init: nothing written past the struct");

	/* capfence_epoch_parse_rules, _format */
	guard_set(g41->guard);
	ret = capfence_epoch_parse_rules(&g41->e, 41, rules41, 2, err, sizeof(err));
	check(!ret && g41->e.rules[CAPFENCE_CLASS_NET_CONNECT].kind == CAPFENCE_RULE_TOKEN &&
	      g41->e.rules[CAPFENCE_CLASS_NET_CONNECT].n == 1 &&
	      g41->e.rules[CAPFENCE_CLASS_FS_READ].kind == CAPFENCE_RULE_OPEN &&
	      g41->e.rules[CAPFENCE_CLASS_FS_WRITE].kind == CAPFENCE_RULE_DENY,
	      "capfence_epoch_parse_rules");
	check(guard_ok(g41->guard), "capfence_epoch_parse_rules: nothing written past the struct");
	ret = capfence_epoch_format(&g41->e, buf, sizeof(buf));
	check(ret > 0 && !strcmp(buf, want41), "capfence_epoch_format: 1.3's text");
	if (ret <= 0 || strcmp(buf, want41))
		printf("# got: %s\n", ret > 0 ? buf : "(error)");
	guard_set(gi->guard);
	ret = capfence_epoch_parse_rules(&gi->e, 43, rules_dup, 2, err, sizeof(err));
	check(ret == -22 && !strcmp(err, "rule 2: duplicate class \"fs:read\""),
	      "capfence_epoch_parse_rules: a duplicate class, 1.3's message");
	check(guard_ok(gi->guard), "capfence_epoch_parse_rules (error): nothing written past the struct");

	/* capfence_epoch_parse_text, _parse_file */
	guard_set(g42->guard);
	ret = capfence_epoch_parse_text(&g42->e, 0, "epoch 42\nfs:write=token:/srv\n",
					err, sizeof(err));
	check(!ret && g42->e.epoch_id == 42 &&
	      g42->e.rules[CAPFENCE_CLASS_FS_WRITE].kind == CAPFENCE_RULE_TOKEN &&
	      g42->e.rules[CAPFENCE_CLASS_NET_CONNECT].kind == CAPFENCE_RULE_DENY,
	      "capfence_epoch_parse_text");
	check(guard_ok(g42->guard), "capfence_epoch_parse_text: nothing written past the struct");
	ret = capfence_epoch_parse_text(&gi->e, 0, "epoch 44\nnet:bind=maybe\n", err, sizeof(err));
	check(ret == -22 && strstr(err, "line 2: ") == err,
	      "capfence_epoch_parse_text: a bad rule, 1.3's \"line K:\" message");
	if (rules_path) {
		guard_set(gi->guard);
		ret = capfence_epoch_parse_file(&gi->e, 45, rules_path, err, sizeof(err));
		check(!ret && gi->e.epoch_id == 45 && guard_ok(gi->guard),
		      "capfence_epoch_parse_file, nothing written past the struct");
	}

	/* capfence_epoch_narrows */
	check(capfence_epoch_narrows(&g41->e, &g42->e, CAPFENCE_CLASS_NET_CONNECT) &&
	      !capfence_epoch_narrows(&g41->e, &g42->e, CAPFENCE_CLASS_FS_WRITE) &&
	      capfence_epoch_narrows(&g41->e, &g42->e, CAPFENCE_CLASS_FS_READ) &&
	      !capfence_epoch_narrows(&g41->e, &g42->e, 99),
	      "capfence_epoch_narrows");

	/* capfence_decide_delegation and the verifier: rows 2-4 */
	memset(raw, 0x5a, sizeof(raw));
	if (capfence_key_from_bytes(3, raw, &k) ||
	    capfence_constraint_parse("10.1.0.0/16", &c, err, sizeof(err)) ||
	    capfence_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, 41, &c, 1, 0, &t_net, err, sizeof(err)) ||
	    capfence_token_mint(k, CAPFENCE_CLASS_NET_BIND, 41, &c, 1, 0, &t_bind, err, sizeof(err)) ||
	    capfence_constraint_parse("/srv/x", &c, err, sizeof(err)) ||
	    capfence_token_mint(k, CAPFENCE_CLASS_FS_WRITE, 42, &c, 1, 0, &t_fs, err, sizeof(err))) {
		check(0, "minting the tokens");
		return 1;
	} else {
		const struct capfence_key *keys[] = { k };

		check(capfence_decide_delegation(keys, 1, &t_net, &g41->e) == CAPFENCE_R_OK &&
		      capfence_decide_delegation(keys, 1, &t_net, &g42->e) == CAPFENCE_R_EPOCH_MISMATCH &&
		      capfence_decide_delegation(keys, 1, &t_bind, &g41->e) == CAPFENCE_R_CLASS_DENIED &&
		      capfence_decide_delegation(keys, 1, &t_fs, &g42->e) == CAPFENCE_R_OK &&
		      capfence_decide_delegation(keys, 0, &t_fs, &g42->e) == CAPFENCE_R_FORGED,
		      "capfence_decide_delegation: ok, epoch_mismatch, class_denied, forged");
		ret = capfence_verifier_new(keys, 1, 0, &v);
		check(!ret &&
		      capfence_verifier_decide(v, &t_net, &g41->e) == CAPFENCE_R_OK &&
		      capfence_verifier_decide(v, &t_net, &g41->e) == CAPFENCE_R_OK &&
		      capfence_verifier_decide(v, &t_net, &g42->e) == CAPFENCE_R_EPOCH_MISMATCH &&
		      capfence_verifier_decide(v, &t_bind, &g41->e) == CAPFENCE_R_CLASS_DENIED,
		      "capfence_verifier_decide: the same answers through the memo");
	}

	/* capfence_seccomp_compile: the epoch's classes read from the 1.3 layout */
	ret = capfence_seccomp_compile(seccomp_denies_connect, strlen(seccomp_denies_connect),
				       &g41->e, &sc, err, sizeof(err));
	check(ret == -22 && strstr(err, "connect") && strstr(err, "net:connect"),
	      "capfence_seccomp_compile: refuses a profile denying a granted class's call");
	if (ret)
		printf("# %s\n", err);
	capfence_seccomp_free(sc);
	sc = NULL;
	ret = capfence_seccomp_compile(seccomp_denies_mount, strlen(seccomp_denies_mount),
				       &g41->e, &sc, err, sizeof(err));
	check(!ret && sc && capfence_seccomp_program(sc, &(size_t){ 0 }),
	      "capfence_seccomp_compile: compiles a profile the classes allow");
	if (ret)
		printf("# %s\n", err);
	check(guard_ok(g41->guard) && guard_ok(g42->guard),
	      "no call wrote past a 1.3 struct");
	if (getenv("CAPFENCE_ABI_KERNEL"))
		kernel_part(&g41->e);

	capfence_seccomp_free(sc);
	capfence_verifier_free(v);
	capfence_key_free(k);
	free(g41);
	free(g42);
	free(gi);
	printf("1..%d\n", n);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", n - failed, failed);
	return failed ? 1 : 0;
}
