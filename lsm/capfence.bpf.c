// SPDX-License-Identifier: GPL-2.0
/*
 * capfence BPF-LSM programs: one program per LSM hook, each forwarding its
 * arguments to a capfence.ko kfunc. No policy lives here.
 *
 * Context: LSM programs are non-sleepable and run under RCU; the kfuncs
 * they call never sleep. A non-zero `ret` means an earlier BPF program on
 * the same hook already denied: keep its verdict.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

extern int capfence_cred_prepare(struct cred *new, const struct cred *old) __ksym;
extern int capfence_cred_alloc_blank(struct cred *cred) __ksym;
extern void capfence_cred_transfer(struct cred *new, const struct cred *old) __ksym;
extern void capfence_cred_free(struct cred *cred) __ksym;
extern int capfence_bprm_creds_for_exec(struct linux_binprm *bprm) __ksym;
extern int capfence_socket_connect(struct socket *sock, struct sockaddr *address,
				   int addrlen) __ksym;
extern int capfence_socket_bind(struct socket *sock, struct sockaddr *address,
				int addrlen) __ksym;
extern int capfence_socket_sendmsg(struct socket *sock, struct msghdr *msg,
				   int size) __ksym;
extern int capfence_socket_recvmsg(struct socket *sock, struct msghdr *msg,
				   int size, int flags) __ksym;
extern int capfence_socket_listen(struct socket *sock, int backlog) __ksym;
extern int capfence_socket_accept(struct socket *sock,
				  struct socket *newsock) __ksym;
extern int capfence_socket_getsockopt(struct socket *sock, int level,
				      int optname) __ksym;
extern int capfence_socket_setsockopt(struct socket *sock, int level,
				      int optname) __ksym;
extern int capfence_socket_create(int family, int type, int protocol,
				  int kern) __ksym;
extern int capfence_sctp_bind_connect(struct sock *sk, int optname,
				      struct sockaddr *address,
				      int addrlen) __ksym;
extern void capfence_sk_clone_security(const struct sock *sk,
				       struct sock *newsk) __ksym;
extern void capfence_sk_free_security(struct sock *sk) __ksym;
extern int capfence_ptrace_access_check(struct task_struct *child,
					unsigned int mode) __ksym;
extern int capfence_ptrace_traceme(struct task_struct *parent) __ksym;
extern int capfence_file_open(struct file *file) __ksym;
extern int capfence_file_permission(struct file *file, int mask) __ksym;
extern void capfence_file_free_security(struct file *file) __ksym;

char LICENSE[] SEC("license") = "GPL";

SEC("lsm/cred_prepare")
int BPF_PROG(cf_cred_prepare, struct cred *new, const struct cred *old,
	     gfp_t gfp, int ret)
{
	return ret ?: capfence_cred_prepare(new, old);
}

SEC("lsm/cred_alloc_blank")
int BPF_PROG(cf_cred_alloc_blank, struct cred *cred, gfp_t gfp, int ret)
{
	return ret ?: capfence_cred_alloc_blank(cred);
}

SEC("lsm/cred_transfer")
int BPF_PROG(cf_cred_transfer, struct cred *new, const struct cred *old)
{
	capfence_cred_transfer(new, old);
	return 0;
}

SEC("lsm/cred_free")
int BPF_PROG(cf_cred_free, struct cred *cred)
{
	capfence_cred_free(cred);
	return 0;
}

SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(cf_bprm_creds_for_exec, struct linux_binprm *bprm, int ret)
{
	return ret ?: capfence_bprm_creds_for_exec(bprm);
}

SEC("lsm/socket_connect")
int BPF_PROG(cf_socket_connect, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return ret ?: capfence_socket_connect(sock, address, addrlen);
}

SEC("lsm/socket_bind")
int BPF_PROG(cf_socket_bind, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	return ret ?: capfence_socket_bind(sock, address, addrlen);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(cf_socket_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size, int ret)
{
	return ret ?: capfence_socket_sendmsg(sock, msg, size);
}

SEC("lsm/socket_recvmsg")
int BPF_PROG(cf_socket_recvmsg, struct socket *sock, struct msghdr *msg,
	     int size, int flags, int ret)
{
	return ret ?: capfence_socket_recvmsg(sock, msg, size, flags);
}

SEC("lsm/socket_listen")
int BPF_PROG(cf_socket_listen, struct socket *sock, int backlog, int ret)
{
	return ret ?: capfence_socket_listen(sock, backlog);
}

SEC("lsm/socket_accept")
int BPF_PROG(cf_socket_accept, struct socket *sock, struct socket *newsock,
	     int ret)
{
	return ret ?: capfence_socket_accept(sock, newsock);
}

SEC("lsm/socket_getsockopt")
int BPF_PROG(cf_socket_getsockopt, struct socket *sock, int level, int optname,
	     int ret)
{
	return ret ?: capfence_socket_getsockopt(sock, level, optname);
}

SEC("lsm/socket_setsockopt")
int BPF_PROG(cf_socket_setsockopt, struct socket *sock, int level, int optname,
	     int ret)
{
	return ret ?: capfence_socket_setsockopt(sock, level, optname);
}

SEC("lsm/socket_create")
int BPF_PROG(cf_socket_create, int family, int type, int protocol, int kern,
	     int ret)
{
	return ret ?: capfence_socket_create(family, type, protocol, kern);
}

SEC("lsm/sctp_bind_connect")
int BPF_PROG(cf_sctp_bind_connect, struct sock *sk, int optname,
	     struct sockaddr *address, int addrlen, int ret)
{
	return ret ?: capfence_sctp_bind_connect(sk, optname, address, addrlen);
}

SEC("lsm/sk_clone_security")
int BPF_PROG(cf_sk_clone_security, const struct sock *sk, struct sock *newsk)
{
	capfence_sk_clone_security(sk, newsk);
	return 0;
}

SEC("lsm/sk_free_security")
int BPF_PROG(cf_sk_free_security, struct sock *sk)
{
	capfence_sk_free_security(sk);
	return 0;
}

SEC("lsm/ptrace_access_check")
int BPF_PROG(cf_ptrace_access_check, struct task_struct *child,
	     unsigned int mode, int ret)
{
	return ret ?: capfence_ptrace_access_check(child, mode);
}

SEC("lsm/ptrace_traceme")
int BPF_PROG(cf_ptrace_traceme, struct task_struct *parent, int ret)
{
	return ret ?: capfence_ptrace_traceme(parent);
}

/*
 * FMODE_READ | FMODE_WRITE; reading f_mode also makes clang emit the full
 * struct file type, which libbpf needs to match the kfunc's prototype.
 */
#define CF_FMODE_RW 0x3

SEC("lsm/file_open")
int BPF_PROG(cf_file_open, struct file *file, int ret)
{
	if (ret || !(file->f_mode & CF_FMODE_RW))
		return ret;
	return capfence_file_open(file);
}

SEC("lsm/file_permission")
int BPF_PROG(cf_file_permission, struct file *file, int mask, int ret)
{
	return ret ?: capfence_file_permission(file, mask);
}

SEC("lsm/file_free_security")
int BPF_PROG(cf_file_free_security, struct file *file)
{
	capfence_file_free_security(file);
	return 0;
}
