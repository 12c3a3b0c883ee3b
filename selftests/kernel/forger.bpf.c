// SPDX-License-Identifier: GPL-2.0
/*
 * What a loader holding CAP_SYS_ADMIN (or CAP_BPF with CAP_PERFMON) could
 * do against capfence's kfuncs (privilege_test): read the module's cookie
 * from kernel memory, then call capfence_cred_free() on a bound task's
 * credentials from one of capfence's own hooks, run on a link that carries
 * that cookie; and put a trampoline or a kprobe on a kfunc, from where it
 * could read the run context or change the kfunc's return address.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void capfence_cred_free(struct cred *cred) __ksym;

__u64 cookie_addr;	/* the module's cf_cookie, from /proc/kallsyms */
__u64 cookie;		/* what read_cookie found there */
int target_tgid;	/* the bound task forge_free unbinds */

SEC("lsm/socket_post_create")
int BPF_PROG(read_cookie, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	if (cookie_addr && !cookie)
		bpf_probe_read_kernel(&cookie, sizeof(cookie),
				      (void *)cookie_addr);
	return 0;
}

/*
 * On one of capfence's hooks, as its own program (the 6.12 filter admits
 * it): whichever of the two runs first, both credentials lose their state.
 */
SEC("lsm/cred_prepare")
int BPF_PROG(forge_free, struct cred *new, const struct cred *old, gfp_t gfp)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (target_tgid && t->tgid == target_tgid) {
		capfence_cred_free(new);
		capfence_cred_free((struct cred *)old);
	}
	return 0;
}

/* capfence's own file_free_security program, put here by the test */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} jump SEC(".maps");

/*
 * fcntl(F_SETOWN) runs file_set_fowner, whose argument types are
 * file_free_security's: the kernel's tail call check lets this program
 * run capfence's program for a file that is still open, which would make
 * capfence forget it.
 */
SEC("lsm/file_set_fowner")
int BPF_PROG(tail_free, struct file *file)
{
	bpf_tail_call(ctx, &jump, 0);
	return 0;
}

/* on one of capfence's programs (the test sets which): it runs the program */
SEC("fexit")
int BPF_PROG(watch_prog)
{
	return 0;
}

SEC("fentry/capfence_cred_free")
int BPF_PROG(trace_kfunc, struct cred *cred)
{
	return 0;
}

SEC("kprobe/capfence_cred_free")
int probe_kfunc(struct pt_regs *ctx)
{
	return 0;
}

SEC("kretprobe/capfence_cred_free")
int retprobe_kfunc(struct pt_regs *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
