// SPDX-License-Identifier: GPL-2.0
/*
 * capfence attach | detach | status: load and attach the BPF-LSM programs
 * from the embedded skeleton, hand their links to capfence.ko (which holds
 * them), pin them for visibility, and report the module's state.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <sodium.h>
#include "cli.h"
#include "capfence.skel.h"
#include "lsm_hooks.h"

#define CF_PIN_DIR "/sys/fs/bpf/capfence"

static const char attach_usage[] = "capfence attach";
static const char detach_usage[] = "capfence detach";
static const char status_usage[] = "capfence status [--json]";

static void print_reasons(const char *key, const uint64_t *v, int from,
			  bool json)
{
	bool first = true;
	int r;

	if (json)
		printf(",\"%s\":{", key);
	else
		printf("%-22s", key);
	for (r = from; r < __CAPFENCE_R_MAX; r++) {
		if (json) {
			printf("%s\"%s\":%llu", first ? "" : ",",
			       capfence_reason_name(r), (unsigned long long)v[r]);
		} else if (v[r]) {
			printf("%s%s=%llu", first ? "" : " ", capfence_reason_name(r),
			       (unsigned long long)v[r]);
		} else {
			continue;
		}
		first = false;
	}
	if (json)
		printf("}");
	else
		printf("%s\n", first ? "none" : "");
}

/* capfence status run by a bound task: the module, its epoch, its sandbox */
static int print_own_status(const struct capfence_status *s,
			    const struct capfence_sandbox_info *sb, bool json)
{
	unsigned long long nrec = sb->over_budget + sb->over_ceiling + sb->lost;

	if (json) {
		printf("{\"module_version\":");
		cf_json_str(stdout, s->version);
		printf(",\"abi\":%u,\"hooks_attached\":%s,\"epoch_id\":%llu,"
		       "\"sandbox\":{\"id\":%llu,\"pid\":%u,\"creds\":%llu,"
		       "\"cred_limit\":%u,\"cred_refused\":%llu,\"records\":%llu,"
		       "\"not_recorded\":%llu,\"over_budget\":%llu,"
		       "\"over_ceiling\":%llu,\"lost\":%llu}}\n",
		       s->abi, s->attached ? "true" : "false",
		       (unsigned long long)sb->epoch_id, (unsigned long long)sb->id,
		       sb->pid, (unsigned long long)sb->creds, sb->cred_limit,
		       (unsigned long long)sb->cred_refused,
		       (unsigned long long)sb->records, nrec,
		       (unsigned long long)sb->over_budget,
		       (unsigned long long)sb->over_ceiling,
		       (unsigned long long)sb->lost);
		return 0;
	}
	printf("module version        %s (abi %u)\n", s->version, s->abi);
	printf("hooks                 %s\n", s->attached ? "attached" : "not attached");
	printf("bound to epoch        %llu (the host's status is not shown to a bound task)\n",
	       (unsigned long long)sb->epoch_id);
	printf("sandbox               %llu, made by pid %u\n",
	       (unsigned long long)sb->id, sb->pid);
	printf("credentials           %llu live, limit %u, %llu refused\n",
	       (unsigned long long)sb->creds, sb->cred_limit,
	       (unsigned long long)sb->cred_refused);
	printf("denial records        %llu written, %llu not (over its budget %llu, over the ceiling %llu, lost %llu)\n",
	       (unsigned long long)sb->records, nrec,
	       (unsigned long long)sb->over_budget,
	       (unsigned long long)sb->over_ceiling,
	       (unsigned long long)sb->lost);
	return 0;
}

static int cf_cmd_status(int argc, char **argv)
{
	struct capfence_sandbox_info sb;
	struct capfence_status s;
	struct capfence_fleet_status fl;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	bool json = false;
	int err;

	if (cf_want_help(argc, argv, status_usage))
		return 0;
	err = cf_opts_simple("status", status_usage, argc, argv, &json);
	if (err >= 0)
		return err;
	err = cf_client_open_or_die(&nl);
	if (err)
		return err;
	err = capfence_client_status(nl, &s, msg, sizeof(msg));
	if (!err)
		err = capfence_client_fleet_status(nl, &fl, msg, sizeof(msg));
	if (!err)
		err = capfence_client_sandbox_status(nl, &sb, msg, sizeof(msg));
	if (err) {
		err = cf_client_fail("status", err, msg);
		capfence_client_close(nl);
		return err;
	}
	capfence_client_close(nl);
	/* a bound caller is told its own sandbox only (sb.id set) */
	if (sb.id)
		return print_own_status(&s, &sb, json);
	if (json) {
		printf("{\"module_version\":");
		cf_json_str(stdout, s.version);
		printf(",\"abi\":%u,\"hooks_attached\":%s,\"fence\":%llu,"
		       "\"max_epoch_id\":%llu,\"active_epoch_id\":%llu,"
		       "\"bound_creds\":%llu,\"held_caps\":%llu,"
		       "\"delegate_ok\":%llu,\"exercise_allow\":%llu,"
		       "\"cred_bytes\":%llu,\"cap_bytes\":%llu",
		       s.abi, s.attached ? "true" : "false",
		       (unsigned long long)s.fence,
		       (unsigned long long)s.max_epoch,
		       (unsigned long long)s.active_epoch,
		       (unsigned long long)s.bound,
		       (unsigned long long)s.held,
		       (unsigned long long)s.delegate_ok,
		       (unsigned long long)s.exercise_allow,
		       (unsigned long long)s.cred_bytes,
		       (unsigned long long)s.cap_bytes);
		print_reasons("delegate_reject", s.delegate_reject, 1, true);
		print_reasons("exercise_deny", s.exercise_deny, 1, true);
		printf(",\"fleet_rev\":%llu,\"fleet\":{\"state\":",
		       (unsigned long long)fl.rev);
		cf_json_str(stdout, capfence_fleet_state_name(fl.state));
		printf(",\"stale_ms\":%u,\"deny_ms\":%u,\"age_ms\":", fl.stale_ms, fl.deny_ms);
		if (fl.confirmed)
			printf("%u", fl.age_ms);
		else
			printf("null");
		printf(",\"applied\":%llu}", (unsigned long long)fl.applied);
		printf(",\"audit\":{\"records\":%llu,\"not_recorded\":%llu,"
		       "\"over_budget\":%llu,\"over_ceiling\":%llu,\"lost\":%llu,"
		       "\"reports\":%llu,\"window_ms\":%u,\"budget\":%u,"
		       "\"floor\":%u,\"ceiling\":%u}",
		       (unsigned long long)sb.records,
		       (unsigned long long)(sb.over_budget + sb.over_ceiling + sb.lost),
		       (unsigned long long)sb.over_budget,
		       (unsigned long long)sb.over_ceiling,
		       (unsigned long long)sb.lost, (unsigned long long)sb.reports,
		       sb.window_ms, sb.budget, sb.floor, sb.ceiling);
		printf(",\"cred_limit\":%u,\"cred_refused\":%llu}\n", sb.cred_limit,
		       (unsigned long long)sb.cred_refused);
		return 0;
	}
	printf("module version        %s (abi %u)\n", s.version, s.abi);
	printf("hooks                 %s\n", s.attached ? "attached" : "not attached");
	printf("fence                 %llu\n", (unsigned long long)s.fence);
	printf("max epoch             %llu\n", (unsigned long long)s.max_epoch);
	printf("active epoch          %llu\n", (unsigned long long)s.active_epoch);
	printf("bound credentials     %llu\n", (unsigned long long)s.bound);
	printf("held capabilities     %llu\n", (unsigned long long)s.held);
	printf("delegations accepted  %llu\n", (unsigned long long)s.delegate_ok);
	print_reasons("delegations rejected", s.delegate_reject, 1, false);
	printf("exercises allowed     %llu\n", (unsigned long long)s.exercise_allow);
	print_reasons("exercises denied", s.exercise_deny, 1, false);
	printf("denial records        %llu written, %llu not (over a sandbox's budget %llu, over the ceiling %llu, lost %llu); %llu reports\n",
	       (unsigned long long)sb.records,
	       (unsigned long long)(sb.over_budget + sb.over_ceiling + sb.lost),
	       (unsigned long long)sb.over_budget,
	       (unsigned long long)sb.over_ceiling, (unsigned long long)sb.lost,
	       (unsigned long long)sb.reports);
	printf("audit budget          %u per sandbox (the first %u whatever the ceiling), %u per host, per %u ms\n",
	       sb.budget, sb.floor, sb.ceiling, sb.window_ms);
	printf("credential limit      %u per sandbox, %llu refused\n", sb.cred_limit,
	       (unsigned long long)sb.cred_refused);
	printf("fleet rev             %llu\n", (unsigned long long)fl.rev);
	if (fl.state == CAPFENCE_FLEET_OFF) {
		printf("fleet                 off\n");
		return 0;
	}
	printf("fleet                 %s", capfence_fleet_state_name(fl.state));
	if (fl.confirmed)
		printf(", confirmed %u ms ago", fl.age_ms);
	else
		printf(", never confirmed");
	printf(" (stale after %u ms, deny after %u ms)\n", fl.stale_ms, fl.deny_ms);
	printf("fleet changes applied %llu\n", (unsigned long long)fl.applied);
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_WARN || getenv("CAPFENCE_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* skeleton links are declared in program order; NULL when not loaded */
static struct bpf_link *prog_link(struct capfence_bpf *skel, size_t i)
{
	return ((struct bpf_link **)&skel->links)[i];
}

/*
 * Programs for hooks that only newer kernels have are left out where the
 * kernel lacks them (6.2: file_truncate, where ftruncate() and
 * open(O_TRUNC) stopped calling path_truncate; inode_set_acl and
 * inode_remove_acl, where POSIX ACL changes stopped calling the xattr
 * hooks). The module checks that it
 * gets exactly the hooks its kernel needs.
 */
static int load_programs(struct capfence_bpf **out)
{
	struct capfence_bpf *skel = capfence_bpf__open();
	int err;

	*out = NULL;
	if (!skel)
		return -errno;
	cf_lsm_skip_missing_hooks(skel->obj);
	err = capfence_bpf__load(skel);
	if (err) {
		capfence_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

static void pin_links(struct capfence_bpf *skel)
{
	struct bpf_program *prog;
	char path[256];
	size_t i = 0;

	if (mkdir(CF_PIN_DIR, 0700) && errno != EEXIST)
		return;	/* no bpffs: the module's references suffice */
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link = prog_link(skel, i++);

		if (!link)
			continue;
		snprintf(path, sizeof(path), CF_PIN_DIR "/%s",
			 bpf_program__name(prog));
		unlink(path);
		if (bpf_link__pin(link, path))
			fprintf(stderr, "capfence: warning: cannot pin %s\n", path);
	}
}

static void unpin_links(void)
{
	struct capfence_bpf *skel = capfence_bpf__open();
	struct bpf_program *prog;
	char path[256];

	if (!skel)
		return;
	bpf_object__for_each_program(prog, skel->obj) {
		snprintf(path, sizeof(path), CF_PIN_DIR "/%s",
			 bpf_program__name(prog));
		unlink(path);
	}
	rmdir(CF_PIN_DIR);
	capfence_bpf__destroy(skel);
}

/*
 * Attach every loaded program with one random cookie: the module takes it
 * as the mark of its own programs, and its kfuncs ignore any other caller
 * (another BPF-LSM program calling them changes nothing).
 */
static int attach_programs(struct capfence_bpf *skel)
{
	LIBBPF_OPTS(bpf_trace_opts, opts);
	struct bpf_program *prog;
	size_t i = 0;

	randombytes_buf(&opts.cookie, sizeof(opts.cookie));
	opts.cookie |= 1;	/* 0 is the module's "no programs" */
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link **link = &((struct bpf_link **)&skel->links)[i++];

		if (!bpf_program__autoload(prog))
			continue;
		*link = bpf_program__attach_trace_opts(prog, &opts);
		if (!*link)
			return -errno;
	}
	return 0;
}

/* more than the programs capfence.bpf.c has */
#define CF_MAX_LINKS 64

/*
 * The kernel frees detached BPF programs asynchronously, and each holds a
 * reference on capfence.ko until then: wait for them, so that `capfence
 * detach && rmmod capfence` works.
 */
static void wait_programs_freed(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		FILE *f = fopen("/sys/module/capfence/refcnt", "r");
		int ref = -1;

		if (!f)
			return;
		if (fscanf(f, "%d", &ref) != 1)
			ref = -1;
		fclose(f);
		if (ref <= 0)
			return;
		usleep(50000);
	}
}

/* @id is one of @skel's programs */
static bool own_program(struct capfence_bpf *skel, __u32 id)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.id == id)
			return true;
	}
	return false;
}

/* the kernel's id of its own BTF object ("vmlinux"), or 0 */
static __u32 vmlinux_btf_id(void)
{
	__u32 id = 0;

	while (!bpf_btf_get_next_id(id, &id)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd = bpf_btf_get_fd_by_id(id);

		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, "vmlinux")) {
			close(fd);
			return id;
		}
		close(fd);
	}
	return 0;
}

/*
 * What the attach cannot refuse: a program loaded before it (while capfence
 * did not enforce) that, linked later, could end a hook's run before
 * capfence has judged. Once attached, the module refuses the load of such
 * a program by any task but the control plane; those already loaded are
 * named here, every BPF-LSM program not capfence's and every tracing
 * program on a security_* or bpf_lsm_* function (an fmod_ret program
 * cannot be told from an fentry one by its info). Return: how many.
 */
static int report_preloaded(struct capfence_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	__u32 vmlinux_id = vmlinux_btf_id(), id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		const char *target = "";
		const char *kind = NULL;
		int fd = bpf_prog_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			if (info.type == BPF_PROG_TYPE_TRACING && vmlinux &&
			    info.attach_btf_obj_id == vmlinux_id && info.attach_btf_id) {
				const struct btf_type *t =
					btf__type_by_id(vmlinux, info.attach_btf_id);

				target = t ? btf__name_by_offset(vmlinux, t->name_off) : "";
				if (!target)
					target = "";
				if (!strncmp(target, "security_", 9) ||
				    !strncmp(target, "bpf_lsm_", 8))
					kind = "tracing";
			} else if (info.type == BPF_PROG_TYPE_LSM &&
				   !own_program(skel, info.id)) {
				kind = "lsm";
			}
		}
		close(fd);
		if (!kind)
			continue;
		fprintf(stderr,
			"capfence: warning: BPF program id=%u (%s '%s'%s%s) was loaded before the attach; linked later, it could end capfence's checks on its hook\n",
			info.id, kind, info.name, *target ? " on " : "", target);
		n++;
	}
	btf__free(vmlinux);
	return n;
}

static int cf_cmd_attach(int argc, char **argv)
{
	struct capfence_bpf *skel = NULL;
	struct bpf_program *prog;
	int fds[CF_MAX_LINKS];
	size_t nfds = 0;
	struct capfence_status s;
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	int err, i = 0, n_skipped = 0;

	if (cf_want_help(argc, argv, attach_usage))
		return 0;
	err = cf_opts_simple("attach", attach_usage, argc, argv, NULL);
	if (err >= 0)
		return err;
	err = cf_client_open_or_die(&nl);
	if (err)
		return err;
	err = capfence_client_status(nl, &s, msg, sizeof(msg));
	if (err) {
		err = cf_client_fail("status", err, msg);
		goto out;
	}
	if (s.attached) {
		printf("hooks already attached\n");
		goto out;
	}
	/*
	 * Links pinned by an earlier attach whose hooks were then detached
	 * over netlink keep those programs running: drop them, and give the
	 * kernel time to free them, so that two sets of capfence's programs
	 * are not attached at once (each credential hook would run twice).
	 */
	unpin_links();
	wait_programs_freed();
	libbpf_set_print(libbpf_quiet);
	err = load_programs(&skel);
	if (err) {
		cf_err("cannot load the BPF-LSM programs (%s); is bpf in the LSM list and capfence.ko's BTF present?",
		       strerror(-err));
		err = CF_EXIT_SYSTEM;
		goto out;
	}
	err = attach_programs(skel);
	if (err) {
		cf_err("cannot attach the BPF-LSM programs: %s", strerror(-err));
		err = CF_EXIT_SYSTEM;
		goto out;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		struct bpf_link *link = prog_link(skel, i++);

		if (link && nfds < CF_MAX_LINKS)
			fds[nfds++] = bpf_link__fd(link);
		else
			n_skipped++;
	}
	err = capfence_client_hooks_attach(nl, fds, nfds, msg, sizeof(msg));
	if (err == -EALREADY) {
		printf("hooks already attached\n");
		err = 0;
		goto out;
	}
	if (err) {
		err = cf_client_fail("attach", err, msg);
		goto out;
	}
	pin_links(skel);
	printf("hooks attached (%d programs)\n", i - n_skipped);
	if (report_preloaded(skel))
		fprintf(stderr, "capfence: warning: unload them, or attach capfence at boot before anything else loads BPF programs (docs/threat-model.md)\n");
out:
	if (skel)
		capfence_bpf__destroy(skel);
	capfence_client_close(nl);
	return err;
}

static int cf_cmd_detach(int argc, char **argv)
{
	struct capfence_client *nl = NULL;
	char msg[CAPFENCE_ERR_MAX] = "";
	int err;

	if (cf_want_help(argc, argv, detach_usage))
		return 0;
	err = cf_opts_simple("detach", detach_usage, argc, argv, NULL);
	if (err >= 0)
		return err;
	err = cf_client_open_or_die(&nl);
	if (err)
		return err;
	err = capfence_client_hooks_detach(nl, msg, sizeof(msg));
	if (err && err != -ENOENT) {
		err = cf_client_fail("detach", err, msg);
		capfence_client_close(nl);
		return err;
	}
	capfence_client_close(nl);
	unpin_links();
	wait_programs_freed();
	printf(err ? "hooks were not attached\n" : "hooks detached\n");
	return 0;
}

const struct cf_cmd cf_attach_cmd = { .name = "attach", .run = cf_cmd_attach, .usage = attach_usage };

const struct cf_cmd cf_detach_cmd = { .name = "detach", .run = cf_cmd_detach, .usage = detach_usage };

const struct cf_cmd cf_status_cmd = { .name = "status", .run = cf_cmd_status, .usage = status_usage };
