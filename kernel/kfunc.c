// SPDX-License-Identifier: GPL-2.0
/*
 * The kfuncs the BPF-LSM programs in lsm/ call, one per hook. All policy is
 * here; the programs only forward their hook arguments.
 *
 * Locking and context: every function runs in BPF program context (RCU
 * read lock held, migration disabled, may be preempted), so nothing here
 * sleeps: allocations are GFP_ATOMIC and the fence is only ever taken as a
 * spinlock. capfence_cred_free() runs from an RCU callback.
 */
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include "capfence.h"

__diag_push();
__diag_ignore_all("-Wmissing-prototypes",
		  "kfuncs are called from BPF programs and found through BTF");

noinline int capfence_cred_prepare(struct cred *new, const struct cred *old)
{
	return cf_cred_prepare(new, old, GFP_ATOMIC);
}

noinline int capfence_cred_alloc_blank(struct cred *cred)
{
	return cf_cred_alloc_blank(cred);
}

noinline void capfence_cred_transfer(struct cred *new, const struct cred *old)
{
	cf_cred_transfer(new, old);
}

noinline void capfence_cred_free(struct cred *cred)
{
	cf_cred_free(cred);
}

noinline int capfence_bprm_creds_for_exec(struct linux_binprm *bprm)
{
	return cf_cred_bind_exec(bprm);
}

/* Out of line: the kfuncs' unbound path (the filter test) needs no frame. */
static noinline int cf_connect_hook(const struct cred *cred,
				    struct socket *sock,
				    struct sockaddr *address, int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_connect(e, sock, address, addrlen) : 0;
}

/*
 * The usual case, a task capfence does not mediate, costs one counter read
 * of the credential filter in the kfunc itself, which then needs no stack
 * frame; everything else is a tail call.
 */
noinline int capfence_socket_connect(struct socket *sock,
				     struct sockaddr *address, int addrlen)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_connect_hook(cred, sock, address, addrlen);
}

static noinline int cf_bind_hook(const struct cred *cred, struct socket *sock,
				 struct sockaddr *address, int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_bind(e, sock, address, addrlen) : 0;
}

noinline int capfence_socket_bind(struct socket *sock,
				  struct sockaddr *address, int addrlen)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_bind_hook(cred, sock, address, addrlen);
}

static noinline int cf_sendmsg_hook(const struct cred *cred,
				    struct socket *sock, struct msghdr *msg)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_sendmsg(e, sock, msg) : 0;
}

/* every send in the system: the unbound path is the filter test */
noinline int capfence_socket_sendmsg(struct socket *sock, struct msghdr *msg,
				     int size)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sendmsg_hook(cred, sock, msg);
}

static noinline int cf_sock_use_hook(const struct cred *cred,
				     struct socket *sock)
{
	struct cf_cred *e = cf_subject(cred);

	return e && sock->sk ? cf_sock_revalidate(sock->sk) : 0;
}

/* every receive in the system: the same */
noinline int capfence_socket_recvmsg(struct socket *sock, struct msghdr *msg,
				     int size, int flags)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

/* TCP_ZEROCOPY_RECEIVE receives through getsockopt, not recvmsg */
noinline int capfence_socket_getsockopt(struct socket *sock, int level,
					int optname)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

static noinline int cf_setsockopt_hook(const struct cred *cred,
				       struct socket *sock, int level,
				       int optname)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_setsockopt(e, sock, level, optname) : 0;
}

noinline int capfence_socket_setsockopt(struct socket *sock, int level,
					int optname)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_setsockopt_hook(cred, sock, level, optname);
}

noinline int capfence_socket_accept(struct socket *sock,
				    struct socket *newsock)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sock_use_hook(cred, sock);
}

static noinline int cf_listen_hook(const struct cred *cred,
				   struct socket *sock)
{
	struct cf_cred *e = cf_subject(cred);
	int err;

	if (!e)
		return 0;
	err = cf_net_listen(e, sock);
	return err ?: (sock->sk ? cf_sock_revalidate(sock->sk) : 0);
}

noinline int capfence_socket_listen(struct socket *sock, int backlog)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_listen_hook(cred, sock);
}

static noinline int cf_create_hook(const struct cred *cred, int family,
				   int type)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_create(e, family, type) : 0;
}

noinline int capfence_socket_create(int family, int type, int protocol,
				    int kern)
{
	const struct cred *cred = current_cred();

	/* sockets the kernel makes for itself are not the task's */
	if (kern || !cf_cred_maybe(cred))
		return 0;
	return cf_create_hook(cred, family, type);
}

static noinline int cf_sctp_hook(const struct cred *cred, struct sock *sk,
				 int optname, struct sockaddr *address,
				 int addrlen)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_net_sctp(e, sk, optname, address, addrlen) : 0;
}

noinline int capfence_sctp_bind_connect(struct sock *sk, int optname,
					struct sockaddr *address, int addrlen)
{
	const struct cred *cred;

	/* an address change a peer asks for in softirq is no task's act */
	if (!in_task())
		return 0;
	cred = current_cred();
	if (!cf_cred_maybe(cred))
		return 0;
	return cf_sctp_hook(cred, sk, optname, address, addrlen);
}

/* every socket cloned or freed in the system: no call while none is tracked */
noinline void capfence_sk_clone_security(const struct sock *sk,
					 struct sock *newsk)
{
	if (cf_nr_tracked_socks())
		cf_sock_clone(sk, newsk);
}

noinline void capfence_sk_free_security(struct sock *sk)
{
	if (cf_nr_tracked_socks())
		cf_sock_free(sk);
}

static noinline int cf_ptrace_hook(const struct cred *cred,
				   struct task_struct *child)
{
	struct cf_cred *e = cf_subject(cred);

	return e ? cf_borrow_attach(e, child) : 0;
}

/* a bound tracer: ptrace attach, /proc/PID/mem, process_vm_*, pidfd_getfd */
noinline int capfence_ptrace_access_check(struct task_struct *child,
					  unsigned int mode)
{
	const struct cred *cred = current_cred();

	if (!(mode & PTRACE_MODE_ATTACH) || !cf_cred_maybe(cred))
		return 0;
	return cf_ptrace_hook(cred, child);
}

/* PTRACE_TRACEME: @parent becomes the tracer of the calling task */
noinline int capfence_ptrace_traceme(struct task_struct *parent)
{
	const struct cred *cred = __task_cred(parent);

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_ptrace_hook(cred, current);
}

/*
 * Path buffer of file_open decisions. BPF programs run with migration
 * disabled but may be preempted, so the buffer is used with preemption
 * disabled; nothing between get and put sleeps.
 */
static DEFINE_PER_CPU(char [PATH_MAX], cf_path_buf);

static noinline int cf_file_open_hook(const struct cred *cred,
				      struct file *file)
{
	struct cf_target t = {};
	struct cf_cred *e = cf_subject(cred);
	struct cf_grant *rg = NULL, *wg = NULL;
	char *buf, *path;
	int err = 0;

	if (!e)
		return 0;
	/*
	 * Naming the file is the expensive part: skip it for open rules. The
	 * BPF program only calls for files opened to read or write.
	 */
	if ((!(file->f_mode & FMODE_READ) ||
	     e->epoch->rules[CAPFENCE_CLASS_FS_READ].kind == CAPFENCE_RULE_OPEN) &&
	    (!(file->f_mode & FMODE_WRITE) ||
	     e->epoch->rules[CAPFENCE_CLASS_FS_WRITE].kind == CAPFENCE_RULE_OPEN))
		return 0;
	buf = *get_cpu_ptr(&cf_path_buf);
	path = d_path(&file->f_path, buf, PATH_MAX);
	if (IS_ERR(path)) {
		/* fail closed: an unnameable file cannot be judged */
		err = -EACCES;
		goto out;
	}
	t.path = path;
	t.path_len = strlen(path);
	if (file->f_mode & FMODE_READ) {
		t.class_id = CAPFENCE_CLASS_FS_READ;
		err = cf_exercise(e, &t, &rg);
	}
	if (!err && (file->f_mode & FMODE_WRITE)) {
		t.class_id = CAPFENCE_CLASS_FS_WRITE;
		err = cf_exercise(e, &t, &wg);
	}
	/* opened under a capability: recheck it on every read and write */
	if (!err && (wg || rg))
		err = cf_file_track(file, rg, wg);
out:
	put_cpu_ptr(&cf_path_buf);
	return err;
}

noinline int capfence_file_open(struct file *file)
{
	const struct cred *cred = current_cred();

	if (!cf_cred_maybe(cred))
		return 0;
	return cf_file_open_hook(cred, file);
}

/*
 * A socket used as a file: sendfile() and splice() reach a socket through
 * its file operations, not through sendmsg.
 */
static noinline int cf_sock_file_hook(struct file *file)
{
	const struct cred *cred = current_cred();
	struct socket *sock;

	if (!cf_cred_maybe(cred) || !cf_subject(cred))
		return 0;
	sock = sock_from_file(file);
	return sock && sock->sk ? cf_sock_revalidate(sock->sk) : 0;
}

/* every read and write in the system: no call while nothing is tracked */
noinline int capfence_file_permission(struct file *file, int mask)
{
	int err = 0;

	if (cf_nr_tracked_files())
		err = cf_file_revalidate(file, mask);
	if (!err && cf_nr_tracked_socks())
		err = cf_sock_file_hook(file);
	return err;
}

/* every file freed in the system: the same */
noinline void capfence_file_free_security(struct file *file)
{
	if (cf_nr_tracked_files())
		cf_file_free(file);
}

__diag_pop();

BTF_SET8_START(capfence_kfunc_ids)
BTF_ID_FLAGS(func, capfence_cred_prepare)
BTF_ID_FLAGS(func, capfence_cred_alloc_blank)
BTF_ID_FLAGS(func, capfence_cred_transfer)
BTF_ID_FLAGS(func, capfence_cred_free)
BTF_ID_FLAGS(func, capfence_bprm_creds_for_exec)
BTF_ID_FLAGS(func, capfence_socket_connect)
BTF_ID_FLAGS(func, capfence_socket_bind)
BTF_ID_FLAGS(func, capfence_socket_sendmsg)
BTF_ID_FLAGS(func, capfence_socket_recvmsg)
BTF_ID_FLAGS(func, capfence_socket_listen)
BTF_ID_FLAGS(func, capfence_socket_accept)
BTF_ID_FLAGS(func, capfence_socket_getsockopt)
BTF_ID_FLAGS(func, capfence_socket_setsockopt)
BTF_ID_FLAGS(func, capfence_socket_create)
BTF_ID_FLAGS(func, capfence_sctp_bind_connect)
BTF_ID_FLAGS(func, capfence_sk_clone_security)
BTF_ID_FLAGS(func, capfence_sk_free_security)
BTF_ID_FLAGS(func, capfence_ptrace_access_check)
BTF_ID_FLAGS(func, capfence_ptrace_traceme)
BTF_ID_FLAGS(func, capfence_file_open)
BTF_ID_FLAGS(func, capfence_file_permission)
BTF_ID_FLAGS(func, capfence_file_free_security)
BTF_SET8_END(capfence_kfunc_ids)

static const struct btf_kfunc_id_set capfence_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &capfence_kfunc_ids,
};

/**
 * cf_kfunc_init() - register the kfuncs for BPF_PROG_TYPE_LSM programs
 *
 * 6.1 cannot unregister a kfunc set; the BPF programs that use it hold a
 * reference on this module, which keeps it loaded while they exist.
 *
 * Return: 0 or an error from the BTF core.
 */
int cf_kfunc_init(void)
{
	return register_btf_kfunc_id_set(BPF_PROG_TYPE_LSM, &capfence_kfunc_set);
}
