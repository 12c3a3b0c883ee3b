// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any BPF-LSM design: one program on each hook capfence uses,
 * each doing nothing but keep the verdict it was given. `bench-vm hooks`
 * attaches it (capfence.ko not loaded) to measure what the BPF-LSM
 * mechanism itself costs (trampoline, program entry and exit) under the
 * same loops as capfence's programs in lsm/capfence.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/cred_prepare")
int BPF_PROG(noop_cred_prepare, struct cred *new, const struct cred *old,
	     gfp_t gfp, int ret)
{
	return ret;
}

SEC("lsm/cred_alloc_blank")
int BPF_PROG(noop_cred_alloc_blank, struct cred *cred, gfp_t gfp, int ret)
{
	return ret;
}

SEC("lsm/cred_transfer")
int BPF_PROG(noop_cred_transfer, struct cred *new, const struct cred *old)
{
	return 0;
}

SEC("lsm/cred_free")
int BPF_PROG(noop_cred_free, struct cred *cred)
{
	return 0;
}

SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(noop_bprm_creds_for_exec, struct linux_binprm *bprm, int ret)
{
	return ret;
}

SEC("lsm/socket_connect")
int BPF_PROG(noop_socket_connect, struct socket *sock,
	     struct sockaddr *address, int addrlen, int ret)
{
	return ret;
}

SEC("lsm/socket_bind")
int BPF_PROG(noop_socket_bind, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return ret;
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(noop_socket_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size, int ret)
{
	return ret;
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(noop_socket_recvmsg, struct socket *sock, struct msghdr *msg,
	     int size, int flags, int ret)
{
	return ret;
}

SEC("lsm/socket_listen")
int BPF_PROG(noop_socket_listen, struct socket *sock, int backlog, int ret)
{
	return ret;
}

SEC("lsm/socket_accept")
int BPF_PROG(noop_socket_accept, struct socket *sock, struct socket *newsock,
	     int ret)
{
	return ret;
}

SEC("lsm/socket_getsockopt")
int BPF_PROG(noop_socket_getsockopt, struct socket *sock, int level,
	     int optname, int ret)
{
	return ret;
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(noop_socket_setsockopt, struct socket *sock, int level,
	     int optname, int ret)
{
	return ret;
}

SEC("lsm/socket_create")
int BPF_PROG(noop_socket_create, int family, int type, int protocol, int kern,
	     int ret)
{
	return ret;
}

SEC("lsm/sctp_bind_connect")
int BPF_PROG(noop_sctp_bind_connect, struct sock *sk, int optname,
	     struct sockaddr *address, int addrlen, int ret)
{
	return ret;
}

SEC("lsm/sk_clone_security")
int BPF_PROG(noop_sk_clone_security, const struct sock *sk, struct sock *newsk)
{
	return 0;
}

SEC("lsm/sk_free_security")
int BPF_PROG(noop_sk_free_security, struct sock *sk)
{
	return 0;
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(noop_ptrace_access_check, struct task_struct *child,
	     unsigned int mode, int ret)
{
	return ret;
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(noop_ptrace_traceme, struct task_struct *parent, int ret)
{
	return ret;
}

SEC("lsm/file_open")
int BPF_PROG(noop_file_open, struct file *file, int ret)
{
	return ret;
}

SEC("lsm/file_permission")
int BPF_PROG(noop_file_permission, struct file *file, int mask, int ret)
{
	return ret;
}

SEC("lsm/file_free_security")
int BPF_PROG(noop_file_free_security, struct file *file)
{
	return 0;
}
