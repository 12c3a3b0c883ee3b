// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF-LSM program that is not capfence's and calls its kfuncs, as a
 * hostile or buggy program on the same host could (privilege_test:
 * foreign_program_cannot_drop_a_binding): on every socket a task makes
 * (before its connect) it asks capfence.ko to forget the task's
 * credential state, from a hook capfence does not use.
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

char LICENSE[] SEC("license") = "GPL";
