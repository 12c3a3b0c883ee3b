// SPDX-License-Identifier: GPL-2.0
/*
 * The syscall policy of an epoch: an OCI seccomp profile compiled with
 * libseccomp, every refusal rewritten to EACCES and recorded by capfence
 * (op=syscall) within the sandbox's audit budget, never by the kernel's
 * AUDIT_SECCOMP (the filter is loaded without the log flag, and a bind
 * under a logging one is refused); the exec that binds a task to the
 * epoch, and every later exec of a bound task, refused (EACCES, reason
 * seccomp, recorded) unless the task's seccomp filter chain holds the
 * epoch's program, at any depth (the bind record names it); a bound
 * task's own filters answering for themselves (no capfence record),
 * never loosening the epoch's refusals, and refused altogether by an
 * epoch installed with no_new_filters; one sandbox's flood of refusals
 * costs another none of its records at the kernel's default audit
 * backlog, nor does a flood of the kernel's own records (a task's own
 * logging filter, AUDIT_USER messages), and a report of missed records
 * made while the backlog is full waits for room; install refusing a profile that contradicts the epoch's
 * classes, and every malformed profile, with one line and nothing
 * installed. io_uring is refused whole (ENOSYS, recorded by capfence), a
 * ring made before the bind included, under a profile that refuses a call
 * one of its opcodes performs (one case per opcode family), and works
 * bound, class hooks and all, under one that refuses none. No sandboxed
 * task is ever ended by a signal but by its own filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <liburing.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"
#include "records.h"

#define DEFAULT_PROFILE "/usr/share/capfence/seccomp-default.json"
/* the engines' profiles as Debian ships them (tools/build/engine-profiles.sh) */
#define PODMAN_PROFILE "/usr/share/capfence/profiles/containers-seccomp.json"
#define DOCKER_PROFILE "/usr/share/capfence/profiles/moby-default.json"

/* refusals of every kind, on calls no agent makes by itself */
static const char kill_trap_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\","
	"\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\"],"
	"\"syscalls\":["
	"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"},"
	"{\"names\":[\"swapoff\",\"swapon\"],\"action\":\"SCMP_ACT_TRAP\"},"
	"{\"names\":[\"syslog\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1},"
	"{\"names\":[\"vhangup\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13},"
	"{\"names\":[\"quotactl\"],\"action\":\"SCMP_ACT_KILL_THREAD\","
	"\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}";

/* the same refusal of acct, another program */
static const char other_profile[] =
	"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	"{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}]}";

/*
 * A task's own filter, stacked on the epoch's: it answers acct (which the
 * epoch refuses with EACCES) and getppid (which the epoch allows) with
 * EPERM, kills the process at getpgrp, and allows the rest. Loaded without
 * SECCOMP_FILTER_FLAG_LOG, as sshd's and bwrap's are.
 */
static struct sock_filter own_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgrp, 2, 3),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/* A task's own filter that allows everything. */
static struct sock_filter allow_all[] = {
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

/*
 * Floods, each by N children of the agent until "sysflood-stop", which
 * answers 0 when every call of every child was answered as expected:
 * "sysflood N" refuses acct() in a loop (the epoch's refusals);
 * "kflood log N" stacks a filter of the child's own that answers getppid()
 * with SECCOMP_RET_LOG, and calls it in a loop (the kernel logs each);
 * "kflood flaglog N" stacks one loaded with SECCOMP_FILTER_FLAG_LOG that
 * answers it ERRNO(EPERM) (logged too); "kflood user N" sends AUDIT_USER
 * messages over the audit netlink socket (CAP_AUDIT_WRITE) in a loop.
 * "sysflood-halt" only raises the stop flag: with several floods, halt
 * them all before stopping any, or the stopping agent's nudge meets a
 * backlog another flood keeps full and sleeps in audit_receive() with it.
 */
#define FLOODERS_MAX 32
/* the calls the flood makes before "sysflood" answers */
#define FLOOD_FIRST 1000
static volatile int *flood_stop;	/* [0] stop, [1] refusals so far */
static pid_t flooders[FLOODERS_MAX];
static int nflooders;

enum flood_kind { FLOOD_ACCT, FLOOD_LOG, FLOOD_FLAGLOG, FLOOD_USER };

static int flood_filter(enum flood_kind k)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, k == FLOOD_LOG ? SECCOMP_RET_LOG :
			 SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = 4, .filter = f };

	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    k == FLOOD_FLAGLOG ? SECCOMP_FILTER_FLAG_LOG : 0, &fp);
}

/* One call of the flood: 0 when answered as expected. */
static int flood_once(enum flood_kind k, int fd)
{
	static const char msg[] = "cft flood";
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		char text[sizeof(msg)];
	} m = { .h = { .nlmsg_len = NLMSG_LENGTH(sizeof(msg)),
		       .nlmsg_type = AUDIT_USER,
		       .nlmsg_flags = NLM_F_REQUEST } };

	switch (k) {
	case FLOOD_ACCT:
		return syscall(SYS_acct, NULL) != -1 || errno != EACCES;
	case FLOOD_LOG:
		return syscall(SYS_getppid) <= 0;
	case FLOOD_FLAGLOG:
		return syscall(SYS_getppid) != -1 || errno != EPERM;
	case FLOOD_USER:
		memcpy(m.text, msg, sizeof(msg));
		return sendto(fd, &m, m.h.nlmsg_len, 0, (struct sockaddr *)&sa,
			      sizeof(sa)) != (ssize_t)m.h.nlmsg_len;
	}
	return 1;
}

static enum flood_kind flood_kind;

static int sysflood(enum flood_kind k, int n)
{
	int i, fd = -1;

	flood_kind = k;

	flood_stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (flood_stop == MAP_FAILED)
		return errno;
	for (i = 0; i < n && i < FLOODERS_MAX; i++) {
		pid_t p = fork();

		if (p < 0)
			return errno;
		if (!p) {
			if ((k == FLOOD_LOG || k == FLOOD_FLAGLOG) && flood_filter(k))
				_exit(2);
			if (k == FLOOD_USER) {
				fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
					    NETLINK_AUDIT);
				if (fd < 0)
					_exit(3);
			}
			while (!flood_stop[0]) {
				if (flood_once(k, fd))
					_exit(1);
				__atomic_add_fetch(&flood_stop[1], 1, __ATOMIC_RELAXED);
			}
			_exit(0);
		}
		flooders[nflooders++] = p;
	}
	/* under way: answer once the flood has spent any budget */
	while (__atomic_load_n(&flood_stop[1], __ATOMIC_RELAXED) < FLOOD_FIRST) {
		int st;

		/* a child that failed at once: say so rather than wait */
		for (i = 0; i < nflooders; i++)
			if (waitpid(flooders[i], &st, WNOHANG) == flooders[i])
				return EIO;
		usleep(1000);
	}
	return 0;
}

/*
 * A flooder the backlog was full for (an AUDIT_USER sender, or a logging
 * filter's caller, whose AUDIT_SECCOMP record waits) sleeps (up to
 * audit_backlog_wait_time) until kauditd, after a pass over its queue,
 * wakes one such sleeper: once the flood stops, nothing else makes
 * kauditd pass. One message of ours per child still there wakes it.
 */
static void flood_nudge(void)
{
	pid_t p = fork();
	int fd;

	/*
	 * The sender of the nudge is penalized too (audit_receive() sleeps
	 * while the backlog is over its limit): a grandchild init reaps sends
	 * it, so the agent never sleeps there.
	 */
	if (p > 0) {
		waitpid(p, NULL, 0);
		return;
	}
	if (p < 0 || fork())
		_exit(0);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd >= 0)
		flood_once(FLOOD_USER, fd);
	_exit(0);
}

static int sysflood_stop(void)
{
	int i, st, left, bad = 0;

	*flood_stop = 1;
	do {
		for (left = 0, i = 0; i < nflooders; i++) {
			pid_t p = flooders[i], r;

			if (p <= 0)
				continue;
			r = waitpid(p, &st, WNOHANG);
			if (r == 0) {
				left++;
				continue;
			}
			if (r != p || !WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
			flooders[i] = 0;
		}
		if (left) {
			/* the epoch's refusals make no kernel record to wait on */
			if (flood_kind != FLOOD_ACCT)
				flood_nudge();
			usleep(20000);
		}
	} while (left);
	nflooders = 0;
	return bad ? EIO : 0;
}

/* "denyflood N": N connects refused (10.0.0.1:9, outside the rule): 0 or EIO */
static int connects(long n)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
	long i;
	int fd, bad = 0;

	sin.sin_addr.s_addr = htonl(0x0a000001);
	for (i = 0; i < n; i++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (!connect(fd, (struct sockaddr *)&sin, sizeof(sin)) || errno != EACCES)
			bad++;
		close(fd);
	}
	return bad ? EIO : 0;
}

/*
 * agent side: "sys NR" makes system call NR with zero arguments;
 * "killer seccomp|prctl" loads a filter that kills the process at its
 * next getppid(), through seccomp(2) or prctl(2); "strict" asks for strict
 * mode (which kills at any other call); "own seccomp|prctl" stacks
 * own_filter, "allow-all" stacks allow_all.
 */
static void *thread_noop(void *arg)
{
	return arg;
}

/*
 * io_uring, as a bound agent uses it. A ring made before the bind (by the
 * launcher, cft_pre_exec) is inherited at CFT_RING_FD, its parameters in
 * the environment: the agent maps it without io_uring_setup.
 */
#define CFT_RING_FD	100
#define CFT_RING_ENV	"CFT_RING"
/* 6.7's opcodes and socket commands, past the headers this is built with */
#define CFT_OP_WAITID		50
#define CFT_OP_FIXED_FD_INSTALL	54	/* 6.8 */
#define CFT_URING_SETSOCKOPT	3

static char uring_buf[64];
static struct statx uring_stx;
static struct __kernel_timespec uring_ts = { .tv_nsec = 1000000 };
static struct open_how uring_how = { .flags = O_CREAT | O_WRONLY, .mode = 0600 };
static struct sockaddr_in uring_sin = { .sin_family = AF_INET };

/*
 * One request of the opcode family @fam (@arg: its path or port); file
 * descriptors are -1 where the request is never meant to run.
 */
static int uring_prep(struct io_uring_sqe *sqe, const char *fam, const char *arg)
{
	if (!strcmp(fam, "socket")) {
		io_uring_prep_socket(sqe, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, 0);
	} else if (!strcmp(fam, "openat2")) {
		io_uring_prep_openat2(sqe, AT_FDCWD, arg, &uring_how);
	} else if (!strcmp(fam, "openat")) {
		io_uring_prep_openat(sqe, AT_FDCWD, arg, O_RDONLY, 0);
	} else if (!strcmp(fam, "statx")) {
		io_uring_prep_statx(sqe, AT_FDCWD, "/", 0, STATX_BASIC_STATS, &uring_stx);
	} else if (!strcmp(fam, "xattr")) {
		io_uring_prep_getxattr(sqe, "user.cft", uring_buf, "/tmp", sizeof(uring_buf));
	} else if (!strcmp(fam, "tee")) {
		io_uring_prep_tee(sqe, -1, -1, 1, 0);
	} else if (!strcmp(fam, "fadvise")) {
		io_uring_prep_fadvise(sqe, -1, 0, 0, POSIX_FADV_NORMAL);
	} else if (!strcmp(fam, "waitid")) {
		io_uring_prep_nop(sqe);
		sqe->opcode = CFT_OP_WAITID;
		sqe->len = P_ALL;
	} else if (!strcmp(fam, "fdinstall")) {
		io_uring_prep_nop(sqe);
		sqe->opcode = CFT_OP_FIXED_FD_INSTALL;
		sqe->fd = 0;
		sqe->flags = IOSQE_FIXED_FILE;
	} else if (!strcmp(fam, "timeout")) {
		io_uring_prep_timeout(sqe, &uring_ts, 0, 0);
	} else if (!strcmp(fam, "uring_cmd")) {
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, -1, NULL, 0, 0);
		sqe->cmd_op = CFT_URING_SETSOCKOPT;
	} else if (!strcmp(fam, "accept")) {
		io_uring_prep_accept(sqe, -1, NULL, NULL, 0);
	} else if (!strcmp(fam, "read")) {
		io_uring_prep_read(sqe, -1, uring_buf, 1, 0);
	} else if (!strcmp(fam, "mkdir")) {
		io_uring_prep_mkdirat(sqe, AT_FDCWD, arg, 0700);
	} else if (!strcmp(fam, "connect")) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return -errno;
		uring_sin.sin_port = htons((uint16_t)atoi(arg));
		uring_sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		io_uring_prep_connect(sqe, fd, (struct sockaddr *)&uring_sin,
				      sizeof(uring_sin));
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * "uring fresh FAM [ARG]": a new ring, one request of family FAM; the
 * errno of io_uring_setup, or of the request. "uring inherited FAM":
 * the same on the ring from before the bind: the errno of
 * io_uring_enter, or 200 when the kernel took the request anyway (its
 * submission head moved or a completion came) or io_uring_register
 * answered otherwise. "uring sqpoll FAM": the request on an inherited
 * SQPOLL ring, submitted without a system call while its thread is
 * awake; the request's errno.
 */
static int uring_cmd(const char *how, const char *fam, const char *arg)
{
	bool sqpoll = !strcmp(how, "sqpoll");
	bool inherited = sqpoll || !strcmp(how, "inherited");
	struct io_uring_params p = { 0 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int err, ret, reg, fd;

	if (inherited) {
		const char *hex = getenv(CFT_RING_ENV);
		size_t i;

		if (!hex || strlen(hex) != 2 * sizeof(p))
			return ENOENT;
		for (i = 0; i < sizeof(p); i++)
			sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&p + i);
		/* a copy, which io_uring_queue_exit() closes */
		fd = dup(CFT_RING_FD);
		if (fd < 0)
			return errno;
		err = io_uring_queue_mmap(fd, &p, &ring);
		if (err)
			close(fd);
		else	/* go on from where the ring's last user left it */
			ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
	} else {
		err = io_uring_queue_init(4, &ring, 0);
	}
	if (err)
		return -err;
	err = uring_prep(io_uring_get_sqe(&ring), fam, arg);
	if (err) {
		io_uring_queue_exit(&ring);
		return -err;
	}
	err = io_uring_submit(&ring);
	if (sqpoll && err == 1) {
		unsigned int head = *ring.cq.khead;

		/* its thread takes the request: no system call to wait with */
		while (io_uring_smp_load_acquire(ring.cq.ktail) == head)
			sched_yield();
		cqe = &ring.cq.cqes[head & *ring.cq.kring_mask];
		/* a descriptor it makes is in its creator's table, not ours */
		ret = cqe->res < 0 ? -cqe->res : 0;
		io_uring_cqe_seen(&ring, cqe);
	} else if (err < 0) {
		ret = -err;
		/* the request is still where the agent wrote it */
		if (*ring.sq.khead != 0 || *ring.cq.ktail != 0)
			ret = 200;
		reg = (int)syscall(SYS_io_uring_register, ring.ring_fd,
				   IORING_UNREGISTER_BUFFERS, NULL, 0);
		if (inherited && (reg != -1 || errno != -err))
			ret = 200;
	} else {
		err = io_uring_wait_cqe(&ring, &cqe);
		ret = err ? -err : cqe->res < 0 ? -cqe->res : 0;
		if (!err && cqe->res >= 0 && (!strcmp(fam, "openat") || !strcmp(fam, "socket")))
			close(cqe->res);
	}
	io_uring_queue_exit(&ring);
	return ret;
}

int cft_agent_extra(char *cmd)
{
	char how[16], fam[16], arg[64] = "";
	struct sock_filter killer[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = 4, .filter = killer };
	struct sock_fprog own = { .len = sizeof(own_filter) / sizeof(own_filter[0]),
				  .filter = own_filter };
	struct sock_fprog all = { .len = 1, .filter = allow_all };
	long nr;

	if (sscanf(cmd, "uring %15s %15s %63s", how, fam, arg) >= 2)
		return uring_cmd(how, fam, arg);
	if (sscanf(cmd, "sys %ld", &nr) == 1)
		return syscall(nr, 0, 0, 0, 0, 0, 0) < 0 ? errno : 0;
	if (sscanf(cmd, "sysflood %ld", &nr) == 1)
		return sysflood(FLOOD_ACCT, (int)nr);
	if (sscanf(cmd, "kflood log %ld", &nr) == 1)
		return sysflood(FLOOD_LOG, (int)nr);
	if (sscanf(cmd, "kflood flaglog %ld", &nr) == 1)
		return sysflood(FLOOD_FLAGLOG, (int)nr);
	if (sscanf(cmd, "kflood user %ld", &nr) == 1)
		return sysflood(FLOOD_USER, (int)nr);
	if (sscanf(cmd, "denyflood %ld", &nr) == 1)
		return connects(nr);
	if (!strcmp(cmd, "sysflood-halt")) {
		if (flood_stop)
			*flood_stop = 1;
		return 0;
	}
	if (!strcmp(cmd, "sysflood-stop"))
		return sysflood_stop();
	/* glibc starts a thread with clone3, and falls back on ENOSYS only */
	if (!strcmp(cmd, "thread")) {
		pthread_t t;
		int err = pthread_create(&t, NULL, thread_noop, NULL);

		return err ?: pthread_join(t, NULL);
	}
	if (!strcmp(cmd, "own seccomp"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &own) ? errno : 0;
	if (!strcmp(cmd, "own prctl"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &own) ? errno : 0;
	if (!strcmp(cmd, "allow-all"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &all) ? errno : 0;
	if (!strcmp(cmd, "killer seccomp"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) ? errno : 0;
	if (!strcmp(cmd, "killer prctl"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) ? errno : 0;
	if (!strcmp(cmd, "strict"))
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) ? errno : 0;
	/* the kernel reads argument 0 as 32 bits: the upper half set */
	if (!strcmp(cmd, "killer seccomp-high"))
		return syscall(SYS_seccomp, (1ul << 32) | SECCOMP_SET_MODE_FILTER, 0, &fp) ?
		       errno : 0;
	if (!strcmp(cmd, "killer prctl-high"))
		return syscall(SYS_prctl, (1ul << 32) | PR_SET_SECCOMP,
			       (unsigned long)SECCOMP_MODE_FILTER, &fp, 0ul, 0ul) ? errno : 0;
	return EINVAL;
}

/* What a launcher does between EXEC_SET and execve (cft_pre_exec). */
struct launch {
	const void *prog;	/* the epoch's program, or NULL */
	size_t len;
	bool log;		/* load it with SECCOMP_FILTER_FLAG_LOG */
	const void *extra;	/* another program loaded after it */
	size_t extra_len;
	const void *below;	/* another program loaded before it */
	size_t below_len;
	bool ring;		/* an io_uring instance made first, inherited */
};

/* A ring made before the bind, left open across the exec (CFT_RING_FD). */
static int make_ring(bool sqpoll)
{
	/* once woken, a thread that stays awake (it ends with the ring) */
	struct io_uring_params p = { .flags = sqpoll ? IORING_SETUP_SQPOLL : 0,
				     .sq_thread_idle = sqpoll ? 600000 : 0 };
	char hex[2 * sizeof(p) + 1];
	size_t i;
	int fd = (int)syscall(SYS_io_uring_setup, 4, &p);

	if (fd < 0)
		return -errno;
	/* dup2 leaves the copy without O_CLOEXEC */
	if (dup2(fd, CFT_RING_FD) < 0)
		return -errno;
	close(fd);
	for (i = 0; i < sizeof(p); i++)
		sprintf(hex + 2 * i, "%02x", ((unsigned char *)&p)[i]);
	return setenv(CFT_RING_ENV, hex, 1) ? -errno : 0;
}

static int load(const void *prog, size_t len, unsigned int flags)
{
	struct sock_fprog fp = { .len = (unsigned short)(len / 8),
				 .filter = (struct sock_filter *)prog };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp))
		return -errno;
	return 0;
}

static int launch(void *arg)
{
	struct launch *l = arg;
	int err = 0;

	if (l->ring)
		err = make_ring(false);
	if (!err && l->below)
		err = load(l->below, l->below_len, 0);
	if (!err && l->prog)
		err = l->log ? load(l->prog, l->len, SECCOMP_FILTER_FLAG_LOG) :
			       capfence_seccomp_apply(l->prog, l->len);
	if (!err && l->extra)
		err = load(l->extra, l->extra_len, SECCOMP_FILTER_FLAG_LOG);
	return err;
}

FIXTURE(sc) {
	struct cft_nl nl;
	struct capfence_key *key;
	int audit;
	uint64_t e;
	struct capfence_seccomp_info info;	/* epoch e's, from the module */
	struct launch l;
	long window, backlog;	/* to restore, when a test changed them */
};

/*
 * Install epoch @id with @rules and the profile @json, refusing new
 * filters when @no_new_filters; 0 or -errno.
 */
static int install_opts(struct cft_nl *nl, uint64_t id, const char *const *rules,
			int n, const char *json, bool no_new_filters, char *err,
			size_t errlen)
{
	struct capfence_seccomp_opts o = { .sz = sizeof(o),
					   .no_new_filters = no_new_filters };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	int ret;

	ret = capfence_epoch_parse_rules(&e, id, rules, (size_t)n, err, errlen);
	if (ret)
		return ret;
	ret = capfence_seccomp_compile_opts(json, strlen(json), &e, &o, &s, err,
					    errlen);
	if (ret)
		return ret;
	ret = capfence_client_epoch_install_seccomp(nl->c, &e, s, err, errlen);
	capfence_seccomp_free(s);
	return ret;
}

/* install_opts() with the default: a bound task may stack filters. */
static int install(struct cft_nl *nl, uint64_t id, const char *const *rules,
		   int n, const char *json, char *err, size_t errlen)
{
	return install_opts(nl, id, rules, n, json, false, err, errlen);
}

/* Point the launcher at epoch @e's program (capfence_free() *info's). */
static void use_epoch(struct __test_metadata *_metadata, FIXTURE_DATA(sc) *self,
		      uint64_t e, struct capfence_seccomp_info *info)
{
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, info, err,
						   sizeof(err))) TH_LOG("%s", err);
	self->l.prog = info->prog;
	self->l.len = info->len;
}

FIXTURE_SETUP(sc)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	char err[CAPFENCE_ERR_MAX];

	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, install(&self->nl, self->e, rules, 2, kill_trap_profile,
			     err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, self->e, &self->info,
						   err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_NE(0, self->info.insns);
	memset(&self->l, 0, sizeof(self->l));
	self->l.prog = self->info.prog;
	self->l.len = self->info.len;
	cft_pre_exec = launch;
	cft_pre_exec_arg = &self->l;
	self->window = -1;
	self->backlog = -1;
}

FIXTURE_TEARDOWN(sc)
{
	if (self->window >= 0)
		cft_param_set("audit_window_ms", self->window);
	if (self->backlog >= 0)
		cft_audit_backlog((uint32_t)self->backlog);
	cft_pre_exec = NULL;
	capfence_free(self->info.prog);
	cft_audit_close(self->audit);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static void hex(const uint8_t *d, char *out)
{
	int i;

	for (i = 0; i < CAPFENCE_SECCOMP_DIGEST_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/*
 * The capfence bind record of @pid: @reason, the epoch, the digest and
 * the program's @depth in the task's filter chain ("none": not in it).
 */
static void check_bind(struct __test_metadata *_metadata, int audit, pid_t pid,
		       uint64_t epoch, const uint8_t *digest, const char *reason,
		       const char *depth)
{
	char rec[2048], v[128], want_r[64], want_p[32], want_d[80], want_depth[32];

	snprintf(want_r, sizeof(want_r), "reason=%s ", reason);
	snprintf(want_depth, sizeof(want_depth), " depth=%s ", depth);
	/* a refused exec's agent is reaped: its epoch (one per test) finds it */
	if (pid > 0)
		snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	else
		snprintf(want_p, sizeof(want_p), " epoch=%llu ",
			 (unsigned long long)epoch);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000, "op=bind",
				    want_r, want_p, want_depth, NULL))
		TH_LOG("no op=bind %s%s%s record", want_r, want_p, want_depth);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ(reason, cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ(strcmp(reason, "ok") ? "13" : "0",
		     cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want_r, sizeof(want_r), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want_r, cft_field(rec, "epoch", v, sizeof(v)));
	hex(digest, want_d);
	EXPECT_STREQ(want_d, cft_field(rec, "seccomp", v, sizeof(v)));
	EXPECT_STREQ(depth, cft_field(rec, "depth", v, sizeof(v)));
	/* the fields after it are kept */
	EXPECT_STRNE("", cft_field(rec, "sandbox", v, sizeof(v)));
	EXPECT_STRNE("", cft_field(rec, "fleet_rev", v, sizeof(v)));
}

/*
 * The next audit record of any type within @timeout_ms (scaled): its type,
 * its text in @out; -ETIMEDOUT.
 */
static int audit_any(int fd, char *out, size_t len, int timeout_ms)
{
	uint64_t end = cft_now_ns() + (uint64_t)cft_ms(timeout_ms) * 1000000;
	char buf[8192];

	while (cft_now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < (ssize_t)NLMSG_HDRLEN)
			continue;
		buf[n] = '\0';
		n = (ssize_t)strnlen((const char *)NLMSG_DATA(h), len - 1);
		memcpy(out, NLMSG_DATA(h), (size_t)n);
		out[n] = '\0';
		return h->nlmsg_type;
	}
	return -ETIMEDOUT;
}

/*
 * capfence's record of @pid's call @nr, refused by epoch @epoch's program
 * with @err: reason seccomp, no signal. The kernel writes none of its own
 * (an AUDIT_SECCOMP record of @pid would come first: it is logged before
 * seccomp returns). Returns the record in @rec.
 */
static void seccomp_record(struct __test_metadata *_metadata, int audit,
			   pid_t pid, long nr, char *rec, size_t len)
{
	char want_p[32], want_s[32];
	int type;

	snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	snprintf(want_s, sizeof(want_s), " syscall=%ld ", nr);
	for (;;) {
		type = audit_any(audit, rec, len, 5000);
		ASSERT_LT(0, type) TH_LOG("no op=syscall record of pid %d syscall %ld",
					  pid, nr);
		if (type == AUDIT_SECCOMP && strstr(rec, want_p))
			ASSERT_TRUE(false) TH_LOG("the kernel's own record: %s", rec);
		if (type == CAPFENCE_AUDIT_TYPE && strstr(rec, "op=syscall") &&
		    strstr(rec, want_p) && strstr(rec, want_s))
			return;
	}
}

static void check_seccomp_record(struct __test_metadata *_metadata, int audit,
				 pid_t pid, long nr, uint64_t epoch, int err)
{
	char rec[2048], v[128], want[32];

	seccomp_record(_metadata, audit, pid, nr, rec, sizeof(rec));
	snprintf(want, sizeof(want), "%ld", nr);
	ASSERT_STREQ(want, cft_field(rec, "syscall", v, sizeof(v))) TH_LOG("%s", rec);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ("seccomp", cft_field(rec, "reason", v, sizeof(v)));
	snprintf(want, sizeof(want), "%d", err);
	EXPECT_STREQ(want, cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	EXPECT_STREQ("c000003e", cft_field(rec, "arch", v, sizeof(v)));
	/* the epoch's program's own answer: SECCOMP_RET_ERRNO | err */
	snprintf(want, sizeof(want), "0x%x", 0x50000 | err);
	EXPECT_STREQ(want, cft_field(rec, "code", v, sizeof(v)));
	EXPECT_STREQ("\"exe\"", cft_field(rec, "comm", v, sizeof(v)));
	EXPECT_NE(0, cft_field(rec, "sandbox", v, sizeof(v))[0]);
}

TEST(rewrite_notes)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	size_t len;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(kill_trap_profile, strlen(kill_trap_profile),
					      &e, &s, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(4, capfence_seccomp_notes(s));
	EXPECT_STREQ("syscalls[0] (acct): SCMP_ACT_KILL_PROCESS -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 0));
	EXPECT_STREQ("syscalls[1] (swapoff, ...): SCMP_ACT_TRAP -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 1));
	EXPECT_STREQ("syscalls[2] (syslog): SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 2));
	EXPECT_STREQ("syscalls[4] (quotactl): SCMP_ACT_KILL_THREAD -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 3));
	EXPECT_EQ(NULL, capfence_seccomp_note(s, 4));
	EXPECT_NE(NULL, capfence_seccomp_program(s, &len));
	EXPECT_EQ(0, len % 8);
	capfence_seccomp_free(s);
}

/* KILL_PROCESS, TRAP and ERRNO(EPERM) all answer EACCES, logged, no signal. */
TEST_F(sc, denied_syscall_is_eacces_and_recorded)
{
	struct cft_agent a;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_acct, self->e, EACCES);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff, self->e, EACCES);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_syslog));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_syslog, self->e, EACCES);
	/* allowed by the profile: the kernel's own answer */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/*
 * A refusal by a filter of the task's own (one loaded below the epoch's,
 * as a runtime does; or stacked above it) is the task's answer, not
 * capfence's: no record. The epoch's refusals still have theirs.
 */
static const struct sock_filter below_vserver[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vserver, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

TEST_F(sc, own_filters_refusal_is_not_capfences)
{
	char rec[2048], v[64], want[32];
	struct cft_agent a;

	self->l.below = below_vserver;
	self->l.below_len = sizeof(below_vserver);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	/* the task's own filter answers (the epoch's allows vserver) */
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_vserver));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	/* the agent's first op=syscall record is acct's, not vserver's */
	snprintf(want, sizeof(want), " pid=%d ", a.pid);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000, "op=syscall",
				    want, NULL));
	snprintf(want, sizeof(want), "%d", SYS_acct);
	EXPECT_STREQ(want, cft_field(rec, "syscall", v, sizeof(v))) TH_LOG("%s", rec);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

#define FLOODERS 16
#define B_DENIALS 80

/*
 * The review's measurement: sandbox A's 16 processes refuse calls in a
 * loop while sandbox B makes 80 denials, at the kernel's default audit
 * backlog (64). B keeps every one of its 80 records: A's refusals are
 * capfence's records within A's budget (the rest counted and reported),
 * and the kernel writes none of its own. Windows of 250 ms make A spend
 * its whole budget at once many times while B denies: a budget is below
 * the backlog, so no burst of A's fills it. Before, the kernel's
 * AUDIT_SECCOMP records of A's refusals (outside every budget) kept the
 * backlog full, and 14 to 36 of B's records were lost.
 */
TEST_F(sc, refusal_flood_costs_other_sandboxes_no_record)
{
	struct capfence_sandbox_info sa, sb;
	char rec[2048], err[CAPFENCE_ERR_MAX], want_b[32], want_sa[48];
	unsigned int seen_b = 0, a_syscall = 0, kernel = 0, a_reported = 0;
	struct cft_agent a, b;
	uint64_t end, b_before;
	int i, type;

	self->backlog = cft_audit_backlog(64);
	ASSERT_LE(0, self->backlog);
	self->window = cft_param_get("audit_window_ms");
	ASSERT_LE(0, self->window);
	ASSERT_EQ(0, cft_param_set("audit_window_ms", 250));
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&b, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid, &sa,
						  err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid, &sb,
						  err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_NE(sa.id, sb.id);
	b_before = sb.records;	/* its op=bind */
	/* A floods (it answers once 1000 calls were refused), B denies meanwhile */
	ASSERT_EQ(0, cft_agent_do(&a, "sysflood %d", FLOODERS));
	/*
	 * B denies within its own budget (32 per window): bursts of 16 more
	 * than a window apart, so no window holds more than one. Unpaced, B
	 * made 33 in one window in one run of several and lost 16 to its
	 * budget, which is not what this test is about.
	 */
	for (i = 0; i < B_DENIALS; i++) {
		if (i && !(i % 16))
			usleep(300 * 1000);
		EXPECT_EQ(EACCES, cft_agent_do(&b, "connect 10.0.0.1 9"));
	}
	/* every one of A's calls was refused with EACCES, none killed */
	EXPECT_EQ(0, cft_agent_do(&a, "sysflood-stop"));
	snprintf(want_b, sizeof(want_b), " pid=%d ", b.pid);
	snprintf(want_sa, sizeof(want_sa), " sandbox=%llu ",
		 (unsigned long long)sa.id);
	end = cft_now_ns() + cft_secs(20) * 1000000000ull;
	cft_waiting("sandbox B's %d denial records", B_DENIALS);
	while (seen_b < B_DENIALS && cft_now_ns() < end) {
		type = audit_any(self->audit, rec, sizeof(rec), 1000);
		if (type == AUDIT_SECCOMP)
			kernel++;
		if (type != CAPFENCE_AUDIT_TYPE)
			continue;
		if (strstr(rec, "op=exercise") && strstr(rec, want_b))
			seen_b++;
		if (strstr(rec, "op=syscall") && strstr(rec, want_sa))
			a_syscall++;
		if (strstr(rec, "op=suppressed") && strstr(rec, want_sa))
			a_reported++;
	}
	cft_waited();
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid, &sb,
						  err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid, &sa,
						  err, sizeof(err))) TH_LOG("%s", err);
	TH_LOG("B: %u of %d records read; sandbox B written %llu, lost %llu; A: %u op=syscall and %u op=suppressed read, written %llu, over budget %llu, lost %llu; kernel records %u",
	       seen_b, B_DENIALS, (unsigned long long)sb.records,
	       (unsigned long long)sb.lost, a_syscall, a_reported,
	       (unsigned long long)sa.records, (unsigned long long)sa.over_budget,
	       (unsigned long long)sa.lost, kernel);
	EXPECT_EQ(B_DENIALS, seen_b);
	EXPECT_EQ(B_DENIALS, sb.records - b_before);
	EXPECT_EQ(0, sb.over_budget + sb.over_ceiling + sb.lost);
	/* A's refusals: capfence's records within A's budget, the rest counted */
	EXPECT_EQ(0, kernel);
	EXPECT_LT(0, a_syscall);
	EXPECT_GE(sa.records, a_syscall);
	EXPECT_LT(0, sa.over_budget);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/*
 * Floods of the kernel's own records, outside every budget: a task's own
 * stacked filter answering SECCOMP_RET_LOG, or loaded with
 * SECCOMP_FILTER_FLAG_LOG; AUDIT_USER messages sent with CAP_AUDIT_WRITE.
 * The kernel's records wait for room in the backlog, and so do capfence's
 * (written by the module's own workqueue): a flood delays another
 * sandbox's records, and loses none. Before, capfence wrote them from the
 * hook without waiting, and the audit subsystem dropped those that found
 * the backlog full: a victim lost 8 of 30 (four logging sandboxes) and 4
 * to 5 of 30 (two sending AUDIT_USER) at the default backlog of 64.
 */
#define KF_DENIALS	30
#define KF_ROUNDS	3	/* sandbox C's bursts past its budget */
#define KF_BURST	50

/* The records the test reads while the floods run (a thread of its own). */
struct kwatch {
	int fd;
	int stop;
	char want_b[32], want_c[48];
	const char *ref;		/* B's record, after its stamp */
	/* the reader's; counts read atomically while it runs */
	unsigned int b_seen, b_same, kernel, c_seen, c_reports;
	uint64_t c_reported;		/* records= of C's reports */
	long reports_lost_first, reports_lost_max;
	char b_other[2048];		/* a B record unlike the reference */
};

/* The text of a record after its "audit(T:N): " stamp. */
static const char *unstamped(const char *rec)
{
	const char *p = strstr(rec, "): ");

	return p ? p + 3 : rec;
}

static void kwatch_c(struct kwatch *w, const char *rec)
{
	char v[32];
	long lost;

	if (strstr(rec, "op=exercise")) {
		__atomic_add_fetch(&w->c_seen, 1, __ATOMIC_RELEASE);
		return;
	}
	if (!strstr(rec, "op=suppressed"))
		return;
	lost = atol(cft_field(rec, "reports_lost", v, sizeof(v)));
	if (!w->c_reports)
		w->reports_lost_first = lost;
	if (lost > w->reports_lost_max)
		w->reports_lost_max = lost;
	__atomic_add_fetch(&w->c_reported,
			   strtoull(cft_field(rec, "records", v, sizeof(v)), NULL, 10),
			   __ATOMIC_RELEASE);
	__atomic_add_fetch(&w->c_reports, 1, __ATOMIC_RELEASE);
}

static void *kwatch_read(void *arg)
{
	struct kwatch *w = arg;
	char rec[2048];
	int type;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		type = audit_any(w->fd, rec, sizeof(rec), 200);
		if (type == AUDIT_SECCOMP || type == AUDIT_USER)
			__atomic_add_fetch(&w->kernel, 1, __ATOMIC_RELEASE);
		if (type != CAPFENCE_AUDIT_TYPE)
			continue;
		if (strstr(rec, "op=exercise") && strstr(rec, w->want_b)) {
			if (!strcmp(unstamped(rec), w->ref))
				w->b_same++;
			else
				snprintf(w->b_other, sizeof(w->b_other), "%s", rec);
			__atomic_add_fetch(&w->b_seen, 1, __ATOMIC_RELEASE);
		} else if (__atomic_load_n(&w->want_c[0], __ATOMIC_ACQUIRE) &&
			   strstr(rec, w->want_c)) {
			kwatch_c(w, rec);
		}
	}
	return NULL;
}

/* Wait (bounded, never timed) until *@n reaches @want. */
static bool kwatch_until(unsigned int *n, unsigned int want, unsigned int secs)
{
	uint64_t end = cft_now_ns() + cft_secs(secs) * 1000000000ull;

	while (__atomic_load_n(n, __ATOMIC_ACQUIRE) < want && cft_now_ns() < end)
		usleep(10000);
	return __atomic_load_n(n, __ATOMIC_ACQUIRE) >= want;
}

/*
 * @nflood sandboxes flood kernel records ("kflood @kind @per") at a
 * backlog of @backlog while sandbox B makes KF_DENIALS denials: every
 * one of B's records arrives, the same text as its record before the
 * flood, and B's sandbox counts no record lost. With @with_c, sandbox C
 * first goes past its budget before the flood (its report), then
 * KF_ROUNDS times during it: every one of its denials is a record or
 * counted in a report (op=suppressed), each burst is reported, and no
 * report is lost (reports_lost= as in its first report).
 */
static void kernel_flood(struct __test_metadata *_metadata, FIXTURE_DATA(sc) *self,
			 const char *kind, int nflood, int per, uint32_t backlog,
			 bool with_c)
{
	struct capfence_sandbox_info bi, ci, b0, c0;
	struct audit_status st0, st1;
	struct kwatch w = { .fd = self->audit, .reports_lost_max = -1 };
	char rec[2048], ref[2048], err[CAPFENCE_ERR_MAX], v[32], id[32];
	struct cft_agent b, c, f[4];
	unsigned int c_total = 0;
	uint64_t end;
	pthread_t th;
	int i;

	ASSERT_GE(4, nflood);
	self->backlog = cft_audit_backlog(backlog);
	ASSERT_LE(0, self->backlog);
	ASSERT_EQ(0, cft_agent_spawn(&b, self->e, NULL, 0, NULL));
	snprintf(w.want_b, sizeof(w.want_b), " pid=%d ", b.pid);
	/* B's denial before the flood: the text every one of its records has */
	EXPECT_EQ(EACCES, cft_agent_do(&b, "connect 10.0.0.1 9"));
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000, "op=exercise",
				    w.want_b, NULL));
	snprintf(ref, sizeof(ref), "%s", unstamped(rec));
	w.ref = ref;
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid, &b0,
						  err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("capfence", cft_field(ref, "lsm", v, sizeof(v)));
	EXPECT_STREQ("net:connect", cft_field(ref, "class", v, sizeof(v)));
	EXPECT_STREQ("10.0.0.1:9", cft_field(ref, "target", v, sizeof(v)));
	EXPECT_STREQ("13", cft_field(ref, "errno", v, sizeof(v)));
	EXPECT_STREQ("\"exe\"", cft_field(ref, "comm", v, sizeof(v)));
	snprintf(id, sizeof(id), "%llu", (unsigned long long)b0.id);
	EXPECT_STREQ(id, cft_field(ref, "sandbox", v, sizeof(v)));
	ASSERT_EQ(0, pthread_create(&th, NULL, kwatch_read, &w));
	if (with_c) {
		/* past its budget before the flood: its first report */
		ASSERT_EQ(0, cft_agent_spawn(&c, self->e, NULL, 0, NULL));
		ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)c.pid,
							  &c0, err, sizeof(err))) TH_LOG("%s", err);
		snprintf(w.want_c, sizeof(w.want_c), " sandbox=%llu ",
			 (unsigned long long)c0.id);
		ASSERT_EQ(0, cft_agent_do(&c, "denyflood %d", KF_BURST));
		c_total += KF_BURST;
		ASSERT_TRUE(kwatch_until(&w.c_reports, 1, 10))
			TH_LOG("no report of sandbox C before the flood");
	}
	ASSERT_EQ(0, cft_audit_status(&st0, 0));
	for (i = 0; i < nflood; i++) {
		ASSERT_EQ(0, cft_agent_spawn(&f[i], self->e, NULL, 0, NULL));
		ASSERT_EQ(0, cft_agent_do(&f[i], "kflood %s %d", kind, per))
			TH_LOG("flood %d of %s did not start", i, kind);
	}
	for (i = 0; i < KF_DENIALS; i++)
		EXPECT_EQ(EACCES, cft_agent_do(&b, "connect 10.0.0.1 9"));
	for (i = 0; with_c && i < KF_ROUNDS; i++) {
		unsigned int r = __atomic_load_n(&w.c_reports, __ATOMIC_ACQUIRE);

		EXPECT_EQ(0, cft_agent_do(&c, "denyflood %d", KF_BURST));
		c_total += KF_BURST;
		/* its report before the next burst */
		EXPECT_TRUE(kwatch_until(&w.c_reports, r + 1, 60))
			TH_LOG("no report of sandbox C's burst %d", i);
	}
	cft_waiting("sandbox B's %d denial records under the %s flood", KF_DENIALS, kind);
	kwatch_until(&w.b_seen, KF_DENIALS, 90);
	cft_waited();
	ASSERT_EQ(0, cft_audit_status(&st1, 0));
	/* every call of every flood was answered as expected, none killed */
	for (i = 0; i < nflood; i++)
		EXPECT_EQ(0, cft_agent_do(&f[i], "sysflood-halt"));
	for (i = 0; i < nflood; i++) {
		EXPECT_EQ(0, cft_agent_do(&f[i], "sysflood-stop"));
		EXPECT_TRUE(cft_agent_stop_clean(&f[i]));
	}
	/* what the flood held back of C's: records, or counted in a report */
	end = cft_now_ns() + cft_secs(30) * 1000000000ull;
	while (with_c && __atomic_load_n(&w.c_seen, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&w.c_reported, __ATOMIC_ACQUIRE) < c_total &&
	       cft_now_ns() < end)
		usleep(10000);
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid, &bi,
						  err, sizeof(err))) TH_LOG("%s", err);
	TH_LOG("%s x%d: B %u of %d records (%u as before), written %llu, lost %llu; kernel records %u; audit lost %u, waited %u",
	       kind, nflood, w.b_seen, KF_DENIALS, w.b_same,
	       (unsigned long long)(bi.records - b0.records), (unsigned long long)bi.lost,
	       w.kernel, st1.lost - st0.lost,
	       st1.backlog_wait_time_actual - st0.backlog_wait_time_actual);
	EXPECT_EQ(KF_DENIALS, w.b_seen);
	EXPECT_EQ(KF_DENIALS, w.b_same) TH_LOG("B's record changed: %s", w.b_other);
	EXPECT_EQ(KF_DENIALS, bi.records - b0.records);
	EXPECT_EQ(0, bi.over_budget + bi.over_ceiling + bi.lost);
	/* the flood was the kernel's records, far more than capfence's */
	EXPECT_LE(FLOOD_FIRST * nflood, w.kernel);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
	if (!with_c)
		return;
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)c.pid, &ci,
						  err, sizeof(err))) TH_LOG("%s", err);
	TH_LOG("C: %u denials: %u records, %llu reported in %u reports; written %llu, over budget %llu, lost %llu; reports_lost %ld first, %ld at most",
	       c_total, w.c_seen, (unsigned long long)w.c_reported, w.c_reports,
	       (unsigned long long)(ci.records - c0.records),
	       (unsigned long long)ci.over_budget, (unsigned long long)ci.lost,
	       w.reports_lost_first, w.reports_lost_max);
	EXPECT_EQ(c_total, w.c_seen + w.c_reported);
	EXPECT_EQ(w.c_seen, ci.records - c0.records);
	EXPECT_EQ(c_total, ci.records - c0.records + ci.over_budget + ci.over_ceiling +
		  ci.lost);
	EXPECT_EQ(0, ci.lost);
	EXPECT_LE(1 + KF_ROUNDS, w.c_reports);
	/* no report refused while the flood filled the backlog */
	EXPECT_EQ(w.reports_lost_first, w.reports_lost_max);
	EXPECT_TRUE(cft_agent_stop_clean(&c));
}

/*
 * Four sandboxes' own filters answer getppid() SECCOMP_RET_LOG in a loop
 * (four processes each), at the kernel's default backlog.
 */
TEST_F_TIMEOUT(sc, logging_filter_flood_costs_other_sandboxes_no_record, 300)
{
	kernel_flood(_metadata, self, "log", 4, 4, 64, false);
}

/* Four sandboxes' own filters, loaded with SECCOMP_FILTER_FLAG_LOG, answer ERRNO. */
TEST_F_TIMEOUT(sc, flag_log_filter_flood_costs_other_sandboxes_no_record, 300)
{
	kernel_flood(_metadata, self, "flaglog", 4, 4, 64, false);
}

/* Two sandboxes holding CAP_AUDIT_WRITE send AUDIT_USER messages in a loop. */
TEST_F_TIMEOUT(sc, audit_user_flood_costs_other_sandboxes_no_record, 300)
{
	kernel_flood(_metadata, self, "user", 2, 2, 64, false);
}

/*
 * A report of missed records (op=suppressed) made while the backlog is
 * full waits for room on the module's workqueue (not system_wq), as the
 * kernel's records do, and is not lost: sandbox C's three bursts past its
 * budget under four logging sandboxes' flood are each reported, every
 * denial counted once, reports_lost= unchanged. The backlog is 1 here, so
 * that it is full whenever a report is made.
 */
TEST_F_TIMEOUT(sc, suppressed_report_waits_for_room_in_a_full_backlog, 400)
{
	kernel_flood(_metadata, self, "log", 4, 4, 1, true);
}

TEST_F(sc, epoch_get_shows_the_program)
{
	uint8_t d[CAPFENCE_SECCOMP_DIGEST_LEN];

	EXPECT_EQ(self->info.insns * 8, self->info.len);
	crypto_hash_sha256(d, self->info.prog, self->info.len);
	EXPECT_EQ(0, memcmp(d, self->info.digest, sizeof(d)));
}

TEST_F(sc, exec_refused_without_the_filter)
{
	struct cft_reply r;
	struct cft_agent a;

	self->l.prog = NULL;
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
}

TEST_F(sc, exec_refused_with_another_filter)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.prog = capfence_seccomp_program(s, &self->l.len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
	capfence_seccomp_free(s);
}

/*
 * The epoch's program need not be the newest filter: one loaded after it
 * (a filter of the task's own) leaves it at depth 1, and the bind
 * succeeds, recorded with depth=1; one loaded before it (a runtime's own)
 * leaves it newest. Under an epoch installed with no_new_filters the
 * program itself refuses the filter above it (EACCES, nothing is exec'd).
 */
static const struct sock_filter below_acct[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

TEST_F(sc, filter_above_or_below_the_epochs_accepted)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info strict;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;
	uint64_t se = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 2, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "1");
	/* the epoch's refusal holds under a filter that allows the call */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff, self->e, EACCES);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	/*
	 * below: a runtime's own filter first (one that lets filters be
	 * stacked on it: refuses acct, allows the rest), then the epoch's
	 */
	self->l.extra = NULL;
	self->l.below = below_acct;
	self->l.below_len = sizeof(below_acct);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	/* both filters apply (the epoch's answers acct first: KILL rewritten) */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	/* no_new_filters: the program refuses the filter above it */
	ASSERT_EQ(0, install_opts(&self->nl, se, rules, 2, kill_trap_profile, true,
				  err, sizeof(err))) TH_LOG("%s", err);
	use_epoch(_metadata, self, se, &strict);
	self->l.below = NULL;
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, se, NULL, 0, &r));
	EXPECT_STREQ("pre-exec step failed", r.ext);
	capfence_free(strict.prog);
	capfence_seccomp_free(s);
}

/*
 * An exec into the epoch whose filter chain holds the epoch's program
 * nowhere is refused, however deep the chain: the program loaded with
 * the log flag under another logging filter, and another program with a
 * filter below and above it.
 */
TEST_F(sc, exec_refused_when_the_chain_lacks_the_program)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch e;
	char err[CAPFENCE_ERR_MAX];
	struct cft_reply r;
	struct cft_agent a;

	ASSERT_EQ(0, capfence_epoch_parse_rules(&e, 1, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(other_profile, strlen(other_profile), &e,
					      &s, err, sizeof(err))) TH_LOG("%s", err);
	self->l.log = true;
	self->l.extra = capfence_seccomp_program(s, &self->l.extra_len);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");

	self->l.log = false;
	self->l.below = below_acct;
	self->l.below_len = sizeof(below_acct);
	self->l.prog = capfence_seccomp_program(s, &self->l.len);
	self->l.extra = allow_all;
	self->l.extra_len = sizeof(allow_all);
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
	capfence_seccomp_free(s);
}

/*
 * Read records up to capfence's op=syscall record of @pid's call
 * @sentinel, counting on the way the kernel's AUDIT_SECCOMP records of
 * @nr[0] and @nr[1] (any pid; *code: the last one's code) and capfence's
 * other records of @pid or of those calls. Returns 0, or -ETIMEDOUT without the sentinel.
 */
static int records_until(int audit, pid_t pid, long sentinel, const long nr[2],
			 int *n_nr, char *code, size_t code_len, int *n_capfence)
{
	char rec[2048], want_p[32], want_s[32], want_n[2][32];
	int type;

	*n_nr = *n_capfence = 0;
	snprintf(want_p, sizeof(want_p), " pid=%d ", pid);
	snprintf(want_s, sizeof(want_s), " syscall=%ld ", sentinel);
	snprintf(want_n[0], sizeof(want_n[0]), " syscall=%ld ", nr[0]);
	snprintf(want_n[1], sizeof(want_n[1]), " syscall=%ld ", nr[1]);
	while ((type = audit_any(audit, rec, sizeof(rec), 5000)) > 0) {
		if (type == CAPFENCE_AUDIT_TYPE && strstr(rec, want_p) &&
		    strstr(rec, "op=syscall") && strstr(rec, want_s))
			return 0;
		if (type == CAPFENCE_AUDIT_TYPE &&
		    (strstr(rec, want_p) || (strstr(rec, "op=syscall") &&
		     (strstr(rec, want_n[0]) || strstr(rec, want_n[1])))))
			(*n_capfence)++;
		if (type != AUDIT_SECCOMP)
			continue;
		if (strstr(rec, want_n[0]) || strstr(rec, want_n[1])) {
			(*n_nr)++;
			cft_field(rec, "code", code, code_len);
		}
	}
	return -ETIMEDOUT;
}

/*
 * A bound task stacks filters of its own, through seccomp(2) and
 * prctl(PR_SET_SECCOMP). What they answer is theirs: EPERM for a call the
 * epoch allows, EPERM (the newest filter's errno among equal ERRNO
 * answers) for one the epoch refuses with EACCES, a kill: none of it
 * written by capfence or logged as the epoch's. The epoch's refusal of a
 * call they allow is still EACCES, recorded.
 */
TEST_F(sc, stacked_filters_answer_for_themselves)
{
	const long own_calls[2] = { SYS_getppid, SYS_acct };
	const long kill_calls[2] = { SYS_getpgrp, SYS_getpgrp };
	char code[32];
	struct cft_agent a;
	int n_own, n_capfence;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	ASSERT_EQ(0, cft_agent_do(&a, "own seccomp"));
	ASSERT_EQ(0, cft_agent_do(&a, "own prctl"));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_acct));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	ASSERT_EQ(0, records_until(self->audit, a.pid, SYS_swapoff, own_calls, &n_own,
				   code, sizeof(code), &n_capfence))
		TH_LOG("no op=syscall record of the epoch's refusal of swapoff");
	EXPECT_EQ(0, n_own) TH_LOG("the task's own EPERM logged (code=%s)", code);
	EXPECT_EQ(0, n_capfence);
	/* its own kill, in a child: SIGSYS; the kernel names the action */
	EXPECT_EQ(200 + SIGSYS, cft_agent_do(&a, "fork sys %d", SYS_getpgrp));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	ASSERT_EQ(0, records_until(self->audit, a.pid, SYS_swapoff, kill_calls, &n_own,
				   code, sizeof(code), &n_capfence));
	EXPECT_EQ(1, n_own);
	EXPECT_STREQ("0x80000000", code);
	EXPECT_EQ(0, n_capfence);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/* Under a stacked filter that allows everything, the epoch still answers. */
TEST_F(sc, epochs_refusal_holds_under_an_allowing_filter)
{
	struct cft_agent a;

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_do(&a, "allow-all"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_acct));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_acct, self->e, EACCES);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_syslog));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_syslog, self->e, EACCES);
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/*
 * A later exec of a bound task with stacked filters is checked again and
 * succeeds: the epoch's program is found three filters down, and the
 * record names the depth. The filters outlive the exec.
 */
TEST_F(sc, later_exec_with_stacked_filters_names_the_depth)
{
	struct cft_agent a;
	char line[128];

	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "0");
	ASSERT_EQ(0, cft_agent_do(&a, "own seccomp"));
	ASSERT_EQ(0, cft_agent_do(&a, "own prctl"));
	ASSERT_EQ(0, cft_agent_do(&a, "allow-all"));
	ASSERT_EQ(0, cft_agent_do(&a, "exec"));
	ASSERT_LT(0, cft_read_line(a.out, line, sizeof(line), 10000));
	ASSERT_EQ(0, strncmp(line, "ready", 5)) TH_LOG("%s", line);
	check_bind(_metadata, self->audit, a.pid, self->e, self->info.digest, "ok", "3");
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_swapoff));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_swapoff, self->e, EACCES);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/*
 * The epoch's program loaded to log: the kernel would write an
 * AUDIT_SECCOMP record of every refusal, outside every budget. Refused.
 */
TEST_F(sc, exec_refused_with_log_flag)
{
	struct cft_reply r;
	struct cft_agent a;

	self->l.log = true;
	EXPECT_EQ(-EACCES, cft_agent_spawn(&a, self->e, NULL, 0, &r));
	EXPECT_STREQ("execv failed", r.ext);
	check_bind(_metadata, self->audit, 0, self->e, self->info.digest, "seccomp", "none");
}

/* An epoch without a syscall policy binds whatever filters the task has. */
TEST_F(sc, epoch_without_profile_binds_as_before)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp_info none;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 1, NULL, 0));
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &none, err, sizeof(err)));
	EXPECT_EQ(0, none.insns);
	EXPECT_EQ(NULL, none.prog);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/* Equal epochs: the receiver runs exactly the epoch's syscall policy. */
TEST_F(sc, accepted_token_meets_no_seccomp_denial)
{
	struct capfence_token t, other;
	struct cft_reply r;
	struct cft_agent a;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e - 1, "127.0.0.0/8", 0,
			      &other));
	EXPECT_EQ(-ESTALE, cft_delegate(&self->nl, &other, a.pid, 0, false, &r));
	EXPECT_EQ(CAPFENCE_R_EPOCH_MISMATCH, r.reason);
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 10.0.0.1 %d", port));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	close(srv);
}

TEST_F(sc, contradicting_profile_refused)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char deny_connect[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"sendmsg\",\"connect\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
	const char deny_open[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
		"{\"names\":[\"read\",\"open\"],\"action\":\"SCMP_ACT_ALLOW\"}]}";
	char err[CAPFENCE_ERR_MAX], want[CAPFENCE_ERR_MAX];
	struct capfence_status st;
	uint64_t e = cft_next_epoch(&self->nl), before;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	before = st.max_epoch;
	EXPECT_EQ(-EINVAL, install(&self->nl, e, rules, 2, deny_connect, err, sizeof(err)));
	snprintf(want, sizeof(want),
		 "profile: syscalls[0] denies connect, which class net:connect needs, and epoch %llu grants net:connect (token): allow the call or deny the class",
		 (unsigned long long)e);
	EXPECT_STREQ(want, err);
	EXPECT_EQ(-EINVAL, install(&self->nl, e, rules + 1, 1, deny_open, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "the default action denies openat, which class fs:read needs"))
		TH_LOG("%s", err);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	EXPECT_EQ(before, st.max_epoch);
	/* the class denied instead: accepted */
	{
		const char *ok[] = { "net:connect=deny", "fs:read=open" };

		EXPECT_EQ(0, install(&self->nl, e, ok, 2, deny_connect, err, sizeof(err)))
			TH_LOG("%s", err);
	}
}

TEST_F(sc, malformed_profiles_refused)
{
	static const struct {
		const char *json;
		int err;
		const char *msg;
	} bad[] = {
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",", -EINVAL,
		  "profile: bad JSON at byte 34: unexpected end of input" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"nosuchcall\"],\"action\":\"SCMP_ACT_ERRNO\"}]}",
		  -EINVAL, "profile: syscalls[0]: unknown syscall 'nosuchcall'" },
		{ "{\"defaultAction\":\"SCMP_ACT_FOO\"}", -EINVAL,
		  "profile: defaultAction: unknown action 'SCMP_ACT_FOO'" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_AARCH64\"]}",
		  -EINVAL,
		  "profile: unsupported architecture 'SCMP_ARCH_AARCH64' (supported: SCMP_ARCH_X86_64, SCMP_ARCH_X86, SCMP_ARCH_X32)" },
		{ "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"acct\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
		  -EINVAL,
		  "profile: syscalls[0]: unsupported action 'SCMP_ACT_NOTIFY' (capfence answers every refusal itself)" },
		{ "[1]", -EINVAL, "profile: not a JSON object" },
	};
	const char *rules[] = { "fs:read=open" };
	char err[CAPFENCE_ERR_MAX], *big;
	struct capfence_status st;
	uint64_t e = cft_next_epoch(&self->nl), before;
	size_t i, n = CAPFENCE_SECCOMP_PROFILE_MAX + 1;

	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	before = st.max_epoch;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		EXPECT_EQ(bad[i].err, install(&self->nl, e, rules, 1, bad[i].json, err,
					      sizeof(err)));
		EXPECT_STREQ(bad[i].msg, err);
		EXPECT_EQ(NULL, strchr(err, '\n'));
	}
	big = malloc(n + 1);
	ASSERT_NE(NULL, big);
	memset(big, ' ', n);
	big[n] = '\0';
	memcpy(big, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}", 34);
	EXPECT_EQ(-E2BIG, install(&self->nl, e, rules, 1, big, err, sizeof(err)));
	EXPECT_STREQ("profile: 1048577 bytes, more than the 1048576 a profile may have", err);
	free(big);
	ASSERT_EQ(0, cft_nl_status(&self->nl, &st));
	EXPECT_EQ(before, st.max_epoch);
}

/* The module checks a program's size itself, whoever sends it. */
TEST_F(sc, kernel_refuses_malformed_programs)
{
	static uint8_t prog[(CAPFENCE_SECCOMP_MAX_INSNS + 1) * 8];
	static const size_t lens[] = { 7, 0, sizeof(prog) };
	static const int errs[] = { -EINVAL, -EINVAL, -E2BIG };
	uint64_t e = cft_next_epoch(&self->nl);
	size_t i;

	for (i = 0; i < 3; i++) {
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);

		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
		mnl_attr_put(nlh, CAPFENCE_A_SECCOMP_PROG, lens[i], prog);
		EXPECT_EQ(errs[i], cft_nl_talk(&self->nl, nlh, NULL, NULL));
		EXPECT_NE(NULL, strstr(self->nl.ext, "seccomp program")) TH_LOG("%s", self->nl.ext);
	}
	{
		struct nlmsghdr *nlh = cft_nl_req(&self->nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
		uint8_t d[CAPFENCE_SECCOMP_DIGEST_LEN] = { 0 };

		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e);
		mnl_attr_put(nlh, CAPFENCE_A_SECCOMP_DIGEST, sizeof(d), d);
		EXPECT_EQ(-EINVAL, cft_nl_talk(&self->nl, nlh, NULL, NULL));
	}
}

/* A container-runtime style default-deny profile runs the agents. */
TEST_F(sc, container_default_profile)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "net:bind=open",
				"fs:read=open", "fs:write=token:/tmp" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t;
	struct cft_reply r;
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 4, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file(DEFAULT_PROFILE, &ep, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(3, capfence_seccomp_notes(s));
	EXPECT_STREQ("defaultAction: SCMP_ACT_ERRNO(EPERM) -> SCMP_ACT_ERRNO(EACCES)",
		     capfence_seccomp_note(s, 0));
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
	EXPECT_EQ(0, cft_agent_do(&a, "open /etc/passwd r"));
	/* not in the allow list: the default, rewritten */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup, e, EACCES);
	/* KILL_PROCESS in the profile */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_process_vm_readv));
	/* a forked child and an exec keep the filter and the epoch */
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
	close(srv);
}

/*
 * The container engines' default profiles, as Debian ships them, install
 * as epochs' syscall policies, resolved for x86_64 and the engines'
 * default capability set; bound agents under them start threads (Docker's
 * answers clone3 with ENOSYS, glibc falls back to clone), get ENOSYS for
 * a call Podman's does not list, EACCES for a call they refuse, and do
 * their granted connect. Podman's leaves io_uring out (its ENOSYS);
 * Docker's allows it and every call its opcodes perform, so it stays.
 */
TEST_F(sc, engine_profiles_as_shipped)
{
	static const struct {
		const char *path;
		long unlisted_errno;	/* the default's answer, kept or rewritten */
		const char *clone3_note;
		int uring;	/* Podman's leaves io_uring out; Docker's allows it and its calls */
	} profiles[] = {
		{ PODMAN_PROFILE, ENOSYS, NULL, ENOSYS },
		{ DOCKER_PROFILE, EACCES,
		  "syscalls[16] (clone3): SCMP_ACT_ERRNO(ENOSYS) kept (no such call: libc falls back)", 0 },
	};
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "net:bind=open",
				"fs:read=open", "fs:write=token:/tmp" };
	char err[CAPFENCE_ERR_MAX];
	size_t i, k;

	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct capfence_seccomp *s = NULL;
		struct capfence_seccomp_info info;
		struct capfence_epoch ep;
		struct capfence_token t;
		struct cft_reply r;
		struct cft_agent a;
		uint64_t e = cft_next_epoch(&self->nl);
		bool noted = !profiles[i].clone3_note;
		uint16_t port;
		int srv = cft_listen(&port);

		ASSERT_LE(0, srv);
		ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 4, err, sizeof(err)));
		ASSERT_EQ(0, capfence_seccomp_compile_file(profiles[i].path, &ep, &s, err,
							   sizeof(err))) TH_LOG("%s", err);
		for (k = 0; k < capfence_seccomp_notes(s); k++)
			noted |= profiles[i].clone3_note &&
				 !strcmp(profiles[i].clone3_note, capfence_seccomp_note(s, k));
		EXPECT_TRUE(noted) TH_LOG("%s: no note '%s'", profiles[i].path,
					  profiles[i].clone3_note);
		ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
								   sizeof(err))) TH_LOG("%s", err);
		capfence_seccomp_free(s);
		ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err,
							   sizeof(err)));
		self->l.prog = info.prog;
		self->l.len = info.len;
		ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL)) TH_LOG("%s", profiles[i].path);
		EXPECT_EQ(0, cft_agent_do(&a, "thread")) TH_LOG("%s", profiles[i].path);
		EXPECT_EQ(profiles[i].unlisted_errno, cft_agent_do(&a, "sys %d", SYS_tuxcall))
			TH_LOG("%s", profiles[i].path);
		check_seccomp_record(_metadata, self->audit, a.pid, SYS_tuxcall, e,
				     (int)profiles[i].unlisted_errno);
		/* refused by both (CAP_SYS_TTY_CONFIG is not in the default set) */
		EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
		check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup, e, EACCES);
		EXPECT_EQ(profiles[i].uring, cft_agent_do(&a, "uring fresh socket"))
			TH_LOG("%s", profiles[i].path);
		ASSERT_EQ(0, cft_mint(self->key, "net:connect", e, "127.0.0.0/8", 0, &t));
		ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
		EXPECT_EQ(0, cft_agent_do(&a, "connect 127.0.0.1 %d", port));
		EXPECT_TRUE(cft_agent_stop_clean(&a));
		capfence_free(info.prog);
		close(srv);
	}
}

/*
 * io_uring performs its opcodes' calls out of seccomp's sight. Under a
 * profile that refuses the call of one opcode family (@rules, with an
 * allowing default), the compiled program refuses io_uring whole:
 * io_uring_setup answers ENOSYS, and so do io_uring_enter and
 * io_uring_register on a ring the launcher made before the bind, each
 * with its AUDIT_SECCOMP record; the request was never taken.
 */
static void uring_refused(struct __test_metadata *_metadata, FIXTURE_DATA(sc) *self,
			  const char *rules, const char *fam, const char *arg,
			  const char *named)
{
	const char *classes[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX], json[1024];
	const char *nt = NULL;
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);
	size_t k;

	snprintf(json, sizeof(json),
		 "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[%s]}", rules);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, classes, 2, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(json, strlen(json), &ep, &s, err,
					      sizeof(err))) TH_LOG("%s", err);
	for (k = 0; k < capfence_seccomp_notes(s); k++)
		if (!strncmp(capfence_seccomp_note(s, k), "io_uring refused (ENOSYS): ", 27))
			nt = capfence_seccomp_note(s, k);
	EXPECT_NE(NULL, nt) TH_LOG("%s: no io_uring note", fam);
	EXPECT_NE(NULL, nt ? strstr(nt, named) : NULL) TH_LOG("%s", nt ?: "");
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	self->l.ring = true;
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	check_bind(_metadata, self->audit, a.pid, e, info.digest, "ok", "0");
	EXPECT_EQ(ENOSYS, cft_agent_do(&a, "uring fresh %s %s", fam, arg)) TH_LOG("%s", fam);
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_io_uring_setup, e, ENOSYS);
	EXPECT_EQ(ENOSYS, cft_agent_do(&a, "uring inherited %s %s", fam, arg)) TH_LOG("%s", fam);
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_io_uring_enter, e, ENOSYS);
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_io_uring_register, e, ENOSYS);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

/* socket(AF_NETLINK) refused: IORING_OP_SOCKET would make it (the report's case) */
TEST_F(sc, uring_socket)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13,"
		      "\"args\":[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]}",
		      "socket", "", "socket (IORING_OP_SOCKET)");
}

/*
 * open and openat2 are fs:read's calls: a profile refusing them is refused
 * at install beside a read grant (io_uring's opens are fs:read's at
 * file_open); beside fs:read=deny it refuses io_uring.
 */
TEST_F(sc, uring_open)
{
	const char json[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
			    "{\"names\":[\"openat2\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	const char *grant[] = { "fs:read=open" }, *deny[] = { "fs:read=deny" };
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	uint64_t e = cft_next_epoch(&self->nl);
	bool noted = false;
	size_t k;

	EXPECT_EQ(-EINVAL, install(&self->nl, e, grant, 1, json, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "denies openat2, which class fs:read needs")) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, deny, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile(json, strlen(json), &ep, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (k = 0; k < capfence_seccomp_notes(s); k++)
		noted |= !strcmp(capfence_seccomp_note(s, k),
				 "io_uring refused (ENOSYS): the profile refuses openat2 (IORING_OP_OPENAT2)");
	EXPECT_TRUE(noted);
	capfence_seccomp_free(s);
}

TEST_F(sc, uring_statx)
{
	uring_refused(_metadata, self, "{\"names\":[\"statx\"],\"action\":\"SCMP_ACT_ERRNO\"}",
		      "statx", "", "statx (IORING_OP_STATX)");
}

TEST_F(sc, uring_xattr)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"setxattr\",\"fsetxattr\",\"getxattr\",\"fgetxattr\"],"
		      "\"action\":\"SCMP_ACT_KILL_PROCESS\"}",
		      "xattr", "", "fsetxattr (IORING_OP_FSETXATTR)");
}

TEST_F(sc, uring_splice_tee)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"splice\",\"tee\"],\"action\":\"SCMP_ACT_ERRNO\"}",
		      "tee", "", "splice (IORING_OP_SPLICE), tee (IORING_OP_TEE)");
}

/* madvise refused for one advice only (MADV_HWPOISON), fadvise64 outright */
TEST_F(sc, uring_madvise_fadvise)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"fadvise64\"],\"action\":\"SCMP_ACT_ERRNO\"},"
		      "{\"names\":[\"madvise\"],\"action\":\"SCMP_ACT_ERRNO\","
		      "\"args\":[{\"index\":2,\"value\":100,\"op\":\"SCMP_CMP_EQ\"}]}",
		      "fadvise", "", "fadvise64 (IORING_OP_FADVISE), madvise (IORING_OP_MADVISE)");
}

/* waitid refused for P_PIDFD only; futex_waitv outright (6.7's opcodes) */
TEST_F(sc, uring_futex_waitid)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"futex_waitv\"],\"action\":\"SCMP_ACT_ERRNO\"},"
		      "{\"names\":[\"waitid\"],\"action\":\"SCMP_ACT_ERRNO\","
		      "\"args\":[{\"index\":0,\"value\":3,\"op\":\"SCMP_CMP_EQ\"}]}",
		      "waitid", "", "waitid (IORING_OP_WAITID), futex_waitv (IORING_OP_FUTEX_WAITV)");
}

/* setsockopt(SO_DEBUG) refused: a socket's URING_CMD sets options */
TEST_F(sc, uring_cmd)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"setsockopt\"],\"action\":\"SCMP_ACT_ERRNO\","
		      "\"args\":[{\"index\":2,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}",
		      "uring_cmd", "", "setsockopt (IORING_OP_URING_CMD)");
}

/* connect and the sends are net:connect's (granted here): accept and receives */
TEST_F(sc, uring_accept_recv)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"accept\",\"accept4\",\"recvfrom\",\"recvmsg\"],"
		      "\"action\":\"SCMP_ACT_TRAP\"}",
		      "accept", "", "recvmsg (IORING_OP_RECVMSG), accept4 (IORING_OP_ACCEPT)");
}

TEST_F(sc, uring_read_write)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"preadv2\",\"pwritev2\"],\"action\":\"SCMP_ACT_ERRNO\"}",
		      "read", "", "preadv2 (IORING_OP_READV), pwritev2 (IORING_OP_WRITEV)");
}

TEST_F(sc, uring_names)
{
	const char *dir = "/tmp/cft-uring-dir";

	rmdir(dir);
	uring_refused(_metadata, self,
		      "{\"names\":[\"renameat2\",\"unlinkat\",\"mkdirat\",\"symlinkat\",\"linkat\"],"
		      "\"action\":\"SCMP_ACT_ERRNO\"}",
		      "mkdir", dir, "renameat2 (IORING_OP_RENAMEAT), unlinkat (IORING_OP_UNLINKAT)");
	EXPECT_NE(0, access(dir, F_OK));
}

/*
 * The legacy calls of the same effect: UNLINKAT's do_unlinkat() and
 * do_rmdir() are unlink's and rmdir's, MKDIRAT mkdir's, RENAMEAT rename's,
 * LINKAT link's, SYMLINKAT symlink's.
 */
TEST_F(sc, uring_legacy_names)
{
	const char *dir = "/tmp/cft-uring-dir";

	rmdir(dir);
	uring_refused(_metadata, self,
		      "{\"names\":[\"rename\",\"unlink\",\"rmdir\",\"mkdir\",\"symlink\",\"link\"],"
		      "\"action\":\"SCMP_ACT_ERRNO\"}",
		      "mkdir", dir,
		      "rename (IORING_OP_RENAMEAT), unlink (IORING_OP_UNLINKAT), rmdir (IORING_OP_UNLINKAT), ...");
	EXPECT_NE(0, access(dir, F_OK));
}

/* a fixed file installed in the task's table is a dup of it (6.8's opcode) */
TEST_F(sc, uring_fd_install)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"dup3\"],\"action\":\"SCMP_ACT_ERRNO\"}",
		      "fdinstall", "", "dup3 (IORING_OP_FIXED_FD_INSTALL)");
}

/* the path is followed: the l- calls' effect on anything but a link */
TEST_F(sc, uring_lxattr)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"lsetxattr\",\"lgetxattr\"],\"action\":\"SCMP_ACT_KILL_PROCESS\"}",
		      "xattr", "", "lsetxattr (IORING_OP_SETXATTR), lgetxattr (IORING_OP_GETXATTR)");
}

/* a timeout waits on a clock as the sleeps do */
TEST_F(sc, uring_timeout)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"nanosleep\",\"clock_nanosleep\"],\"action\":\"SCMP_ACT_ERRNO\"}",
		      "timeout", "",
		      "nanosleep (IORING_OP_TIMEOUT), clock_nanosleep (IORING_OP_TIMEOUT)");
}

/* readiness as select, a close as close_range, a reap as wait4 */
TEST_F(sc, uring_select_close_wait)
{
	uring_refused(_metadata, self,
		      "{\"names\":[\"select\",\"pselect6\",\"close_range\",\"wait4\"],"
		      "\"action\":\"SCMP_ACT_ERRNO\"}",
		      "fadvise", "",
		      "select (IORING_OP_POLL_ADD), pselect6 (IORING_OP_POLL_ADD), close_range (IORING_OP_CLOSE), ...");
}

/*
 * Under a profile that refuses none of io_uring's calls (the fixture's),
 * io_uring works bound, a new ring and the one from before the bind, and
 * its requests meet capfence's class hooks as the calls do: a connect
 * without a token is EACCES with capfence's record, and with one it
 * connects.
 */
TEST_F(sc, uring_works_bound_under_a_profile_that_refuses_none_of_its_calls)
{
	struct capfence_token t;
	struct cft_reply r;
	struct cft_agent a;
	char target[32];
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	self->l.ring = true;
	ASSERT_EQ(0, cft_agent_spawn(&a, self->e, NULL, 0, NULL));
	EXPECT_EQ(0, cft_agent_do(&a, "uring fresh openat /etc/passwd"));
	EXPECT_EQ(0, cft_agent_do(&a, "uring inherited statx"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "uring fresh connect %u", port));
	snprintf(target, sizeof(target), "127.0.0.1:%u", port);
	cft_check_denial(_metadata, self->audit, a.pid, self->e, "no_capability",
			 "net:connect", target, 0);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, a.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "uring fresh connect %u", port));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	close(srv);
}

/*
 * What holds and what does not (docs/threat-model.md) for an SQPOLL ring
 * an unbound process made and handed over (here: left open across fork
 * and the binding exec). Its thread sleeps until io_uring_enter wakes it,
 * which the bound task is refused. Once its creator wakes it, it takes
 * the bound task's requests with no system call, on the creator's
 * thread, credential and descriptor table: the profile's refusal of
 * socket(AF_NETLINK) does not see them (the socket is the creator's),
 * while the task's own calls are refused.
 */
TEST_F(sc, sqpoll_ring_from_before_the_bind_acts_as_its_creator)
{
	const char *classes[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char json[] = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
			    "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\","
			    "\"args\":[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]}]}";
	struct capfence_seccomp_info info;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, install(&self->nl, e, classes, 2, json, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	/* this (unbound) process makes it: the agent inherits it */
	ASSERT_EQ(0, make_ring(true));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(ENOSYS, cft_agent_do(&a, "uring fresh socket"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 %u", port));
	/* asleep: waking it is io_uring_enter, refused */
	EXPECT_EQ(ENOSYS, cft_agent_do(&a, "uring sqpoll socket"));
	/* its creator wakes it (a no-op request) */
	{
		struct io_uring_params p = { 0 };
		const char *hex = getenv(CFT_RING_ENV);
		struct io_uring_cqe *cqe;
		struct io_uring ring;
		size_t i;
		int n;

		ASSERT_NE(NULL, hex);
		for (i = 0; i < sizeof(p); i++)
			sscanf(hex + 2 * i, "%2hhx", (unsigned char *)&p + i);
		ASSERT_EQ(0, io_uring_queue_mmap(CFT_RING_FD, &p, &ring));
		ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
		io_uring_prep_nop(io_uring_get_sqe(&ring));
		/* the agent's request left in the ring goes with it */
		n = io_uring_submit(&ring);
		ASSERT_LE(1, n);
		for (i = 0; i < (size_t)n; i++) {
			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			if (cqe->res > 0 && cqe->user_data != LIBURING_UDATA_TIMEOUT)
				close(cqe->res);	/* the netlink socket, ours */
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_queue_exit(&ring);	/* closes CFT_RING_FD here */
		unsetenv(CFT_RING_ENV);
	}
	EXPECT_EQ(0, cft_agent_do(&a, "uring sqpoll socket"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
	close(srv);
}

/*
 * Narrowing by profile: an epoch whose profile removes net:connect's calls
 * must deny the class (else install refuses it), and its activation fences
 * the older epoch's net:connect tokens, held ones included.
 */
TEST_F(sc, narrowing_by_profile_fences_held_tokens)
{
	const char *wide[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	const char *narrow[] = { "net:connect=deny", "fs:read=open" };
	const char deny_connect[] =
		"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"connect\",\"sendto\",\"sendmsg\",\"sendmmsg\"],"
		"\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}";
	struct capfence_seccomp_info info;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_token t;
	struct cft_reply r;
	struct cft_agent old, young;
	uint64_t e1 = cft_next_epoch(&self->nl), e2;
	uint16_t port;
	int srv = cft_listen(&port);

	ASSERT_LE(0, srv);
	ASSERT_EQ(0, install(&self->nl, e1, wide, 2, other_profile, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e1, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	ASSERT_EQ(0, cft_agent_spawn(&old, e1, NULL, 0, NULL));
	capfence_free(info.prog);
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", e1, "127.0.0.0/8", 0, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, old.pid, 0, false, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&old, "connect 127.0.0.1 %d", port));

	e2 = cft_next_epoch(&self->nl);
	EXPECT_EQ(-EINVAL, install(&self->nl, e2, wide, 2, deny_connect, err, sizeof(err)));
	ASSERT_EQ(0, install(&self->nl, e2, narrow, 2, deny_connect, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_seccomp(self->nl.c, e2, &info, err, sizeof(err)));
	self->l.prog = info.prog;
	self->l.len = info.len;
	/* the first bind activates e2: e1's net:connect tokens are fenced */
	ASSERT_EQ(0, cft_agent_spawn(&young, e2, NULL, 0, NULL));
	capfence_free(info.prog);
	EXPECT_EQ(EACCES, cft_agent_do(&old, "connect 127.0.0.1 %d", port));
	{
		char rec[2048], want[32];

		snprintf(want, sizeof(want), " pid=%d ", old.pid);
		EXPECT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
					    "op=exercise", "reason=fenced", want, NULL));
	}
	/* the young agent's profile answers its connect: EACCES, no signal */
	EXPECT_EQ(EACCES, cft_agent_do(&young, "connect 127.0.0.1 %d", port));
	check_seccomp_record(_metadata, self->audit, young.pid, SYS_connect, e2, EACCES);
	EXPECT_TRUE(cft_agent_stop_clean(&old));
	EXPECT_TRUE(cft_agent_stop_clean(&young));
	close(srv);
}

/*
 * An epoch installed with no_new_filters keeps today's strict behaviour:
 * no stock kernel hook sees a filter's instructions at load, so the
 * epoch's program refuses every new filter (seccomp(2),
 * prctl(PR_SET_SECCOMP), strict mode) with EACCES, recorded; the task
 * lives on.
 */
TEST_F(sc, no_new_filters_epoch_refuses_a_killing_filter)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	struct capfence_seccomp_info info;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, install_opts(&self->nl, e, rules, 2, kill_trap_profile, true,
				  err, sizeof(err))) TH_LOG("%s", err);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp"));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_seccomp, e, EACCES);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl"));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_prctl, e, EACCES);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "strict"));
	/* with the upper half of argument 0 set (the outside review's way in) */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "own seccomp"));
	/* nothing was loaded: getppid() does not kill */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	/* prctl's other options, and seccomp's queries, still work */
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getpid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

/* The same with a default-deny profile that allows seccomp and prctl. */
TEST_F(sc, no_new_filters_with_default_deny_profile)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp_opts o = { .sz = sizeof(o), .no_new_filters = true };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file_opts(DEFAULT_PROFILE, &ep, &o, &s, err,
							sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer seccomp-high"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "killer prctl-high"));
	EXPECT_EQ(0, cft_agent_do(&a, "sys %d", SYS_getppid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

/*
 * By default the same profile lets the bound task stack its own filter,
 * through seccomp(2) and prctl(2); the epoch's refusals still hold.
 */
TEST_F(sc, default_deny_profile_lets_filters_stack)
{
	const char *rules[] = { "fs:read=open" };
	struct capfence_seccomp *s = NULL;
	struct capfence_seccomp_info info;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, capfence_epoch_parse_rules(&ep, e, rules, 1, err, sizeof(err)));
	ASSERT_EQ(0, capfence_seccomp_compile_file(DEFAULT_PROFILE, &ep, &s, err,
						   sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, capfence_client_epoch_install_seccomp(self->nl.c, &ep, s, err,
							   sizeof(err))) TH_LOG("%s", err);
	capfence_seccomp_free(s);
	use_epoch(_metadata, self, e, &info);
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	EXPECT_EQ(0, cft_agent_do(&a, "own seccomp"));
	EXPECT_EQ(0, cft_agent_do(&a, "own prctl"));
	EXPECT_EQ(EPERM, cft_agent_do(&a, "sys %d", SYS_getppid));
	/* not in the profile's allow list: the epoch's default, rewritten */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "sys %d", SYS_vhangup));
	check_seccomp_record(_metadata, self->audit, a.pid, SYS_vhangup, e, EACCES);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	capfence_free(info.prog);
}

CFT_MAIN
