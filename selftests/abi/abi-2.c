// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program of libcapfence's 2 interface (CAPFENCE_API 2, linked against
 * libcapfence.so.2), run by make abi-check on the host:
 *   - epochs are handles: made, parsed, read and set through accessors,
 *     whatever the number of classes;
 *   - every options struct follows one rule: sz below sizeof(size_t) is
 *     refused, bytes past what the library knows must be 0 (a newer
 *     caller's fields), a shorter sz takes the missing fields as 0;
 *   - a field a call does not take is refused by name.
 * With CAPFENCE_ABI_KERNEL=1 (in the VM, python/tests/run-vm-tests), also
 * the client calls against the module: install, the installed epoch and
 * the list read back through their accessors, a bound spawn with tokens,
 * a delegation with a re-mint across an epoch, a retire with options.
 * Prints kselftest-style lines; exit status 1 when anything failed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>

#include <capfence/capfence.h>

#if CAPFENCE_LIB_VERSION_MAJOR != 2
#error "build this with CAPFENCE_API 2 (pkg-config capfence-2)"
#endif

static int n, failed;

static void check(int ok, const char *what)
{
	n++;
	if (!ok)
		failed++;
	printf("%sok %d - 2 program: %s\n", ok ? "" : "not ", n, what);
}

/* options of a newer caller: one more field after the library's */
#define NEWER(T) struct { struct T o; uint64_t more; }

static const char *const profile =
	"{ \"defaultAction\": \"SCMP_ACT_ALLOW\","
	"  \"architectures\": [\"SCMP_ARCH_X86_64\"],"
	"  \"syscalls\": [ { \"names\": [\"mount\"], \"action\": \"SCMP_ACT_ERRNO\" } ] }";

static void epochs(void)
{
	static const char *const rules[] = {
		"net:connect=token:10.0.0.0/8", "fs:read=open",
	};
	struct capfence_epoch *e = NULL, *d = NULL;
	struct capfence_rule r;
	char err[CAPFENCE_ERR_MAX] = "", buf[4096];
	unsigned int cls, denied = 0;
	int ret;

	ret = capfence_epoch_new(41, &e);
	check(!ret && capfence_epoch_id(e) == 41, "capfence_epoch_new: a handle with its id");
	for (cls = 1; cls <= capfence_class_count(); cls++)
		if (!capfence_epoch_rule(e, (int)cls, &r) && r.kind == CAPFENCE_RULE_DENY &&
		    r.class_id == cls)
			denied++;
	check(denied == capfence_class_count(), "a new epoch denies every class the library knows");
	check(capfence_epoch_rule(e, 0, &r) == -EINVAL &&
	      capfence_epoch_rule(e, (int)capfence_class_count() + 1, &r) == -EINVAL,
	      "capfence_epoch_rule: -EINVAL for a class the library does not know");
	ret = capfence_epoch_parse_rules(e, 41, rules, 2, err, sizeof(err));
	check(!ret && !capfence_epoch_rule(e, CAPFENCE_CLASS_NET_CONNECT, &r) &&
	      r.kind == CAPFENCE_RULE_TOKEN && r.n == 1 &&
	      !capfence_epoch_rule(e, CAPFENCE_CLASS_FS_READ, &r) && r.kind == CAPFENCE_RULE_OPEN,
	      "capfence_epoch_parse_rules fills a handle");
	ret = capfence_epoch_format(e, buf, sizeof(buf));
	check(ret > 0 && !strncmp(buf, "epoch 41\nnet:connect=token:10.0.0.0/8\n", 38),
	      "capfence_epoch_format of a handle");
	ret = capfence_epoch_dup(e, &d);
	check(!ret && capfence_epoch_id(d) == 41, "capfence_epoch_dup");
	if (!ret) {
		memset(&r, 0, sizeof(r));
		r.class_id = CAPFENCE_CLASS_FS_WRITE;
		r.kind = CAPFENCE_RULE_TOKEN;
		r.n = 1;
		capfence_constraint_parse("/srv/data", &r.constraints[0], err, sizeof(err));
		ret = capfence_epoch_set_rule(d, &r, err, sizeof(err));
		check(!ret && !capfence_epoch_rule(d, CAPFENCE_CLASS_FS_WRITE, &r) &&
		      r.kind == CAPFENCE_RULE_TOKEN &&
		      !capfence_epoch_rule(e, CAPFENCE_CLASS_FS_WRITE, &r) &&
		      r.kind == CAPFENCE_RULE_DENY,
		      "capfence_epoch_set_rule changes the copy only");
		r.class_id = CAPFENCE_CLASS_NET_CONNECT;	/* a path on a net class */
		r.kind = CAPFENCE_RULE_TOKEN;
		r.n = 1;
		capfence_constraint_parse("/srv/data", &r.constraints[0], err, sizeof(err));
		ret = capfence_epoch_set_rule(d, &r, err, sizeof(err));
		check(ret == -EINVAL && strstr(err, "CIDR"),
		      "capfence_epoch_set_rule: a path on a net class is -EINVAL, as its text would be");
		if (ret != -EINVAL || !strstr(err, "CIDR"))
			printf("# %d %s\n", ret, err);
		r.class_id = 0;
		check(capfence_epoch_set_rule(d, &r, err, sizeof(err)) == -EINVAL,
		      "capfence_epoch_set_rule: -EINVAL for class 0");
		check(capfence_epoch_narrows(e, d, CAPFENCE_CLASS_FS_WRITE) == false &&
		      capfence_epoch_narrows(d, e, CAPFENCE_CLASS_FS_WRITE) == true,
		      "capfence_epoch_narrows between handles");
	}
	capfence_epoch_free(d);
	capfence_epoch_free(e);
	capfence_epoch_free(NULL);
}

static void options(void)
{
	NEWER(capfence_seccomp_opts) newer;
	NEWER(capfence_delegate_opts) dnewer;
	struct capfence_seccomp *sc = NULL;
	struct capfence_epoch *e = NULL;
	struct capfence_result r;
	struct capfence_token t;
	char err[CAPFENCE_ERR_MAX] = "";
	char *const env[] = { NULL };
	int ret;

	memset(&t, 0, sizeof(t));
	if (capfence_epoch_new(7, &e)) {
		check(0, "capfence_epoch_new");
		return;
	}
	/* a newer caller's options, its field 0: accepted */
	memset(&newer, 0, sizeof(newer));
	newer.o.sz = sizeof(newer);
	ret = capfence_seccomp_compile_opts(profile, strlen(profile), e, &newer.o, &sc, err, sizeof(err));
	check(!ret && sc, "a newer caller's options with its new field 0 are taken");
	capfence_seccomp_free(sc);
	sc = NULL;
	newer.more = 1;
	ret = capfence_seccomp_compile_opts(profile, strlen(profile), e, &newer.o, &sc, err, sizeof(err));
	check(ret == -EINVAL && !sc && strstr(err, "does not know"),
	      "a newer caller's field this library does not know, not 0: -EINVAL naming the byte");
	newer.o.sz = 4;
	newer.more = 0;
	ret = capfence_seccomp_compile_opts(profile, strlen(profile), e, &newer.o, &sc, err, sizeof(err));
	check(ret == -EINVAL && strstr(err, "less than sizeof(size_t)"),
	      "sz below sizeof(size_t): -EINVAL");
	/* tail padding is where a newer header's field would be: not 0, refused */
	{
		struct capfence_seccomp_opts p;
		size_t end = offsetof(struct capfence_seccomp_opts, no_new_filters) +
			     sizeof(p.no_new_filters);

		memset(&p, 0, sizeof(p));
		p.sz = sizeof(p);
		if (end < sizeof(p)) {
			((unsigned char *)&p)[end] = 1;
			ret = capfence_seccomp_compile_opts(profile, strlen(profile), e, &p, &sc,
							    err, sizeof(err));
			check(ret == -EINVAL && !sc && strstr(err, "is not 0"),
			      "a non-zero byte in the options' tail padding: -EINVAL");
		}
	}
	/* an older caller's shorter options: the rest is 0 */
	memset(&newer, 0, sizeof(newer));
	newer.o.sz = sizeof(size_t);
	newer.o.no_new_filters = true;	/* past sz: not read */
	ret = capfence_seccomp_compile_opts(profile, strlen(profile), e, &newer.o, &sc, err, sizeof(err));
	check(!ret && sc, "an older caller's shorter options are taken, the fields past sz as 0");
	capfence_seccomp_free(sc);

	/* the same rules on the client's calls, before any request is made */
	memset(&dnewer, 0, sizeof(dnewer));
	dnewer.o.sz = sizeof(dnewer);
	dnewer.more = 1;
	ret = capfence_client_delegate_opts(NULL, &t, 1, &dnewer.o, &r);
	check(ret == -EINVAL && r.err == -EINVAL && r.reason == -1 && strstr(r.message, "does not know"),
	      "capfence_client_delegate_opts: an unknown field is -EINVAL in the result");
	{
		CAPFENCE_OPTS(capfence_delegate_opts, o, .flags = 0x80);

		ret = capfence_client_delegate_opts(NULL, &t, 1, &o, &r);
		check(ret == -EINVAL && strstr(r.message, "flags 0x80"),
		      "capfence_client_delegate_opts: unknown flags are -EINVAL");
	}
	{
		CAPFENCE_OPTS(capfence_bind_opts, o, .envp = env);

		ret = capfence_client_exec_set_opts(NULL, 7, &o, &r);
		check(ret == -EINVAL && strstr(r.message, "envp is a spawn option"),
		      "capfence_client_exec_set_opts: envp is refused by name");
	}
	{
		CAPFENCE_OPTS(capfence_bind_opts, o, .wait_ms = 10);
		pid_t pid = 1234;

		ret = capfence_client_spawn_bound_opts(NULL, 7, "true", NULL, &o, &pid, &r);
		check(ret == -EINVAL && strstr(r.message, "wait_ms is a learn_verify option") &&
		      pid == -1,
		      "capfence_client_spawn_bound_opts: wait_ms is refused by name, no pid");
	}
	{
		CAPFENCE_OPTS(capfence_change_opts, o, .seccomp = (struct capfence_seccomp *)1);

		ret = capfence_client_epoch_retire_opts(NULL, 7, &o, err, sizeof(err));
		check(ret == -EINVAL && strstr(err, "seccomp is an epoch install option"),
		      "capfence_client_epoch_retire_opts: seccomp is refused by name");
	}
	{
		struct capfence_learn *l = NULL;
		CAPFENCE_OPTS(capfence_bind_opts, o, .envp = env);

		ret = capfence_client_learn_verify_opts(NULL, 7, "true", NULL, &o, &l, err, sizeof(err));
		check(ret == -EINVAL && !l && strstr(err, "envp is a spawn option"),
		      "capfence_client_learn_verify_opts: envp is refused by name");
	}
	capfence_epoch_free(e);
}

/* the client calls, against the module */
static void kernel_part(void)
{
	static const char *const rules[] = { "net:connect=token:10.0.0.0/8", "fs:read=open" };
	struct capfence_client *c = NULL;
	struct capfence_epoch *e = NULL;
	struct capfence_epoch_info *info = NULL;
	struct capfence_epoch_list *l = NULL;
	struct capfence_key *k = NULL;
	struct capfence_token t, nt;
	struct capfence_result r, first;
	struct capfence_constraint cs;
	struct capfence_status st;
	struct capfence_rule rule;
	char err[CAPFENCE_ERR_MAX] = "";
	char *const argv[] = { "sleep", "5", NULL };
	uint64_t id;
	size_t i, found = 0;
	pid_t pid = 0;
	int ret, status;

	if (capfence_client_open(&c, err, sizeof(err)) ||
	    capfence_client_status(c, &st, err, sizeof(err)) ||
	    capfence_key_generate((uint32_t)getpid() | 0x100000u, &k) ||
	    capfence_client_key_install_opts(c, k, NULL, err, sizeof(err))) {
		check(0, "client: open, status, key install");
		printf("# %s\n", err);
		goto out;
	}
	id = st.max_epoch + 1;
	ret = capfence_epoch_new(id, &e);
	if (!ret)
		ret = capfence_epoch_parse_rules(e, id, rules, 2, err, sizeof(err));
	if (!ret)
		ret = capfence_client_epoch_install_opts(c, e, NULL, err, sizeof(err));
	if (!ret)
		ret = capfence_client_epoch_activate_opts(c, id, NULL, err, sizeof(err));
	check(!ret, "capfence_client_epoch_install_opts and _activate_opts of a handle");
	if (ret) {
		printf("# %s\n", err);
		goto out;
	}
	ret = capfence_client_epoch_info(c, id, &info, err, sizeof(err));
	check(!ret && capfence_epoch_id(capfence_epoch_info_epoch(info)) == id &&
	      capfence_epoch_info_active(info) &&
	      !capfence_epoch_rule(capfence_epoch_info_epoch(info), CAPFENCE_CLASS_NET_CONNECT, &rule) &&
	      rule.kind == CAPFENCE_RULE_TOKEN && rule.n == 1 &&
	      capfence_epoch_info_fenced_at(info, CAPFENCE_CLASS_NET_CONNECT) == 0,
	      "capfence_client_epoch_info reads the installed epoch back through accessors");
	capfence_epoch_info_free(info);
	info = NULL;
	ret = capfence_client_epoch_info(c, id + 1000, &info, err, sizeof(err));
	check(ret == -ENOENT && !info, "capfence_client_epoch_info: -ENOENT for an epoch not installed");
	ret = capfence_client_epoch_infos(c, &l, err, sizeof(err));
	for (i = 0; !ret && i < capfence_epoch_list_count(l); i++)
		if (capfence_epoch_id(capfence_epoch_info_epoch(capfence_epoch_list_at(l, i))) == id)
			found++;
	check(!ret && found == 1 && !capfence_epoch_list_at(l, capfence_epoch_list_count(l)),
	      "capfence_client_epoch_infos lists it once; past the end is NULL");
	capfence_epoch_list_free(l);

	/* a child bound to id holding a token of the previous epoch id - 1 */
	capfence_constraint_parse("10.0.0.0/8", &cs, err, sizeof(err));
	ret = capfence_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, id, &cs, 1, 0, &t, err, sizeof(err));
	{
		CAPFENCE_OPTS(capfence_bind_opts, o, .tokens = &t, .n = 1);

		if (!ret)
			ret = capfence_client_spawn_bound_opts(c, id, "sleep", argv, &o, &pid, &r);
	}
	check(!ret && pid > 0, "capfence_client_spawn_bound_opts: a child bound with its token");
	if (ret) {
		printf("# %d %s\n", ret, r.message);
		goto out;
	}
	ret = capfence_token_mint(k, CAPFENCE_CLASS_NET_CONNECT, id - 1 ? id - 1 : id + 1, &cs, 1,
				  0, &t, err, sizeof(err));
	{
		CAPFENCE_OPTS(capfence_delegate_opts, o, .flags = CAPFENCE_DELEGATE_DRY_RUN);

		ret = capfence_client_delegate_opts(c, &t, (uint32_t)pid, &o, &r);
		check(ret == -ESTALE && r.reason == CAPFENCE_R_EPOCH_MISMATCH && r.epoch_id == id,
		      "capfence_client_delegate_opts: a cross-epoch token is EPOCH_MISMATCH, typed");
	}
	{
		CAPFENCE_OPTS(capfence_delegate_opts, o, .remint = k, .first = &first,
			      .reminted = &nt, .flags = CAPFENCE_DELEGATE_DRY_RUN);
		struct capfence_task_info ti;

		memset(&ti, 0, sizeof(ti));
		ret = capfence_client_delegate_opts(c, &t, (uint32_t)pid, &o, &r);
		check(!ret && r.reason == CAPFENCE_R_OK &&
		      first.reason == CAPFENCE_R_EPOCH_MISMATCH && nt.epoch_id == id &&
		      !capfence_client_task_get(c, (uint32_t)pid, &ti, err, sizeof(err)) &&
		      ti.n == 1,
		      "capfence_client_delegate_opts with .remint and DRY_RUN: the re-minted token is decided, not granted");
		capfence_task_release(&ti);
	}
	{
		CAPFENCE_OPTS(capfence_delegate_opts, o, .remint = k, .first = &first,
			      .reminted = &nt);

		ret = capfence_client_delegate_opts(c, &t, (uint32_t)pid, &o, &r);
		check(!ret && r.reason == CAPFENCE_R_OK &&
		      first.reason == CAPFENCE_R_EPOCH_MISMATCH && nt.epoch_id == id &&
		      nt.cap_id != t.cap_id,
		      "capfence_client_delegate_opts with .remint: re-minted under the receiver's epoch and granted");
	}
	kill(pid, 9);
	waitpid(pid, &status, 0);
	{
		CAPFENCE_OPTS(capfence_change_opts, o);

		ret = capfence_client_epoch_retire_opts(c, id, &o, err, sizeof(err));
		check(ret == -EBUSY, "capfence_client_epoch_retire_opts: the active epoch is -EBUSY");
	}
out:
	capfence_epoch_free(e);
	capfence_key_free(k);
	capfence_client_close(c);
}

int main(void)
{
	check(!strcmp(capfence_version(), CAPFENCE_LIB_VERSION_STRING) &&
	      capfence_version_number() == 20000,
	      "the library loaded is 2.0.0, as the header");
	epochs();
	options();
	if (getenv("CAPFENCE_ABI_KERNEL"))
		kernel_part();
	printf("1..%d\n", n);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", n - failed, failed);
	return failed ? 1 : 0;
}
