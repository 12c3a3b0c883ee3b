// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF-LSM program that is not capfence's and calls its kfuncs, as a
 * hostile or buggy program on the same host could (privilege_test:
 * foreign_program_cannot_drop_a_binding): on every socket a task makes
 * (before its connect) it asks capfence.ko to forget the task's
 * credential state, from a hook capfence does not use; and from the
 * allocator's tracepoints, which fire inside capfence's own kfuncs (a
 * denial's record is allocated there) while capfence's program's run
 * context is still current's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern void capfence_cred_free(struct cred *cred) __ksym;

SEC("lsm/socket_post_create")
int BPF_PROG(foreign_forget_cred, struct socket *sock, int family, int type,
	     int protocol, int kern)
{
	struct task_struct *t = bpf_get_current_task_btf();

	capfence_cred_free((struct cred *)t->cred);
	return 0;
}

/* only while some program's run context is current: nested in one */
static __always_inline void forget_nested(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	if (t->bpf_ctx)
		capfence_cred_free((struct cred *)t->cred);
}

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(foreign_nested_alloc)
{
	forget_nested();
	return 0;
}

SEC("tp_btf/kfree")
int BPF_PROG(foreign_nested_kfree)
{
	forget_nested();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
