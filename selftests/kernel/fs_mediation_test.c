// SPDX-License-Identifier: GPL-2.0
/*
 * Complete mediation of fs:read and fs:write: every way a bound task can
 * read or modify a file outside its grants, tried as an attacker would.
 * Each attack asserts EACCES, the audit record (reason, class, target, pid)
 * and that no signal ended the agent; positive tests show that allowed
 * work inside a granted prefix, and everything under an all-open epoch,
 * still succeeds.
 *
 * The tree (rebuilt for every test):
 *   /tmp/fsm/allowed/      the granted prefix (fs:read token; fs:write rule)
 *   /tmp/fsm/allowed/a     a file with content
 *   /tmp/fsm/secret/s      a file no grant covers
 *   /tmp/fsm/secret/tmp/fsm/allowed/s   a tree whose layout ends in the
 *                          granted prefix (chroot and detached-tree attacks)
 *   /tmp/fsm/ro/f          outside the fs:write rule
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <liburing.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"
#include "records.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE		1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH	0x00000004
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

/*
 * POSIX ACLs in their extended attribute form (<linux/posix_acl_xattr.h>,
 * not installed everywhere): a version, then entries sorted by tag.
 */
#define ACL_XATTR_VERSION	2
#define ACL_T_USER_OBJ		0x01
#define ACL_T_USER		0x02
#define ACL_T_GROUP_OBJ		0x04
#define ACL_T_MASK		0x10
#define ACL_T_OTHER		0x20
#define ACL_NO_ID		0xffffffffu

struct acl_xattr {
	uint32_t version;
	struct { uint16_t tag, perm; uint32_t id; } e[5];
};

/*
 * An ACL value: @ext false is rwx for everyone (a mode of 0777, which the
 * kernel stores as the mode alone); @ext true adds a named user 1000, so
 * the kernel keeps it as an extended ACL. Returns its length.
 */
static size_t acl_value(struct acl_xattr *a, bool ext)
{
	int n = 0;

	memset(a, 0, sizeof(*a));
	a->version = ACL_XATTR_VERSION;
	a->e[n].tag = ACL_T_USER_OBJ; a->e[n].perm = ext ? 6 : 7; a->e[n++].id = ACL_NO_ID;
	if (ext) {
		a->e[n].tag = ACL_T_USER; a->e[n].perm = 6; a->e[n++].id = 1000;
	}
	a->e[n].tag = ACL_T_GROUP_OBJ; a->e[n].perm = ext ? 4 : 7; a->e[n++].id = ACL_NO_ID;
	if (ext) {
		a->e[n].tag = ACL_T_MASK; a->e[n].perm = 6; a->e[n++].id = ACL_NO_ID;
	}
	a->e[n].tag = ACL_T_OTHER; a->e[n].perm = ext ? 4 : 7; a->e[n++].id = ACL_NO_ID;
	return sizeof(a->version) + (size_t)n * sizeof(a->e[0]);
}

#define ACL_ACCESS	"system.posix_acl_access"
#define ACL_DEFAULT	"system.posix_acl_default"

/* setxattr(@path, @name, an rwx-for-everyone ACL) through io_uring */
static int uring_setacl(const char *path, const char *name)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct acl_xattr a;
	size_t len = acl_value(&a, false);
	int err;

	err = -io_uring_queue_init(2, &ring, 0);
	if (err)
		return err;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_setxattr(sqe, name, (const char *)&a, path, 0,
			       (unsigned int)len);
	err = io_uring_submit(&ring) == 1 ? -io_uring_wait_cqe(&ring, &cqe) : EIO;
	if (!err) {
		err = cqe->res < 0 ? -cqe->res : 0;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return err;
}

/*
 * openat(@path, @flags) through io_uring, and close it; @async forces the
 * request onto an io_uring worker thread (IOSQE_ASYNC).
 */
static int uring_open(const char *path, int flags, bool async)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int err;

	err = -io_uring_queue_init(2, &ring, 0);
	if (err)
		return err;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, 0644);
	if (async)
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	err = io_uring_submit(&ring) == 1 ? -io_uring_wait_cqe(&ring, &cqe) : EIO;
	if (!err) {
		err = cqe->res < 0 ? -cqe->res : 0;
		if (cqe->res >= 0)
			close(cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return err;
}

/* the agent could not set up the attack (e.g. user namespaces disabled) */
#define FSM_NOSETUP	250

/* the libraries and the agent's own binary, plus the granted prefix */
#define FSM_READ	"/lib,/lib64,/usr,/etc,/tmp/fsm/allowed"

/* ---- agent side: runs inside the bound agent ---- */

static int fsm_fd = -1;
static int fsm_dirfd = -1;
static void *fsm_map;
static pid_t fsm_last_child;

static int open_flags(const char *f)
{
	int fl = 0;

	for (; *f; f++) {
		switch (*f) {
		case 'r': fl |= O_RDONLY; break;
		case 'w': fl |= O_WRONLY; break;
		case 'b': fl |= O_RDWR; break;
		case '3': fl |= O_RDWR | O_WRONLY; break;
		case 't': fl |= O_TRUNC; break;
		case 'c': fl |= O_CREAT; break;
		case 'a': fl |= O_APPEND; break;
		case 'T': fl |= O_TMPFILE | O_RDWR; break;
		case 'n': fl |= O_NONBLOCK; break;
		default: return -1;
		}
	}
	return fl;
}

/* mq_open(@name, @flags) and close it: 0 or the errno */
static int mq_call(const char *name, int flags)
{
	int fd = (int)syscall(SYS_mq_open, name, flags, 0600, NULL);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int read_file(const char *path)
{
	char c;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return errno;
	/* an empty file reads 0 bytes: what counts is being let in */
	if (read(fd, &c, 1) < 0) {
		int e = errno;

		close(fd);
		return e;
	}
	close(fd);
	return 0;
}

/* open_tree(OPEN_TREE_CLONE) of @src: a detached copy of the tree */
static int clone_tree(const char *src)
{
	return (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE);
}

/* "exec": the program ran and exited non-zero (its own step refused) */
#define FSM_EXEC_NONZERO	150

/*
 * Run @path @arg in a child, without our pipes: the execve's errno when it
 * failed, else 0 when the program exited 0, FSM_EXEC_NONZERO when it exited
 * otherwise, 200 + the signal that ended it.
 */
static int exec_child(const char *path, const char *arg)
{
	int p[2], e = 0, st;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid) {
		char *argv[] = { (char *)path, (char *)arg, NULL };

		close(p[0]);
		close(0);
		close(1);
		/* the loader's complaint about a refused mprotect: not ours */
		close(2);
		execv(path, argv);
		e = errno;
		if (write(p[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		_exit(0);
	}
	fsm_last_child = pid;
	close(p[1]);
	/* the pipe closes without a word when the execve succeeded */
	n = read(p[0], &e, sizeof(e));
	close(p[0]);
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	if (WIFSIGNALED(st))
		return 200 + WTERMSIG(st);
	if (n == sizeof(e))
		return e;
	return WEXITSTATUS(st) ? FSM_EXEC_NONZERO : 0;
}

/*
 * A pidfd of a child (clone3 with CLONE_PIDFD) and of ourselves
 * (pidfd_open), used to signal and reap the child: from 6.9 each is a
 * file of pidfs opened through file_open.
 */
static int pidfds(void)
{
	struct clone_args ca = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
	int self, child = -1, err = 0;
	siginfo_t si = {};
	pid_t pid;

	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0)
		return errno;
	ca.pidfd = (uint64_t)(uintptr_t)&child;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (!pid) {
		pause();
		_exit(0);
	}
	if (pid < 0)
		err = errno;
	else if (syscall(SYS_pidfd_send_signal, child, SIGKILL, NULL, 0) ||
		 waitid(P_PIDFD, (id_t)child, &si, WEXITED))
		err = errno;
	else if (si.si_pid != pid || si.si_status != SIGKILL)
		err = ECHILD;
	if (child >= 0)
		close(child);
	close(self);
	return err;
}

/* One step; 0 or an errno. */
static int fsm_step(char *cmd)
{
	char a[128], b[128], c[128];
	struct open_how how = {};
	int fd, fl, r, ms, n;

	/* before "xopen", which sscanf() would match as a prefix */
	if (sscanf(cmd, "xopenat2 %127s %127s", a, b) == 2) {
		fl = open_flags(b);
		if (fl < 0)
			return EINVAL;
		how.flags = (unsigned int)fl;
		how.mode = fl & O_CREAT ? 0644 : 0;
		fd = (int)syscall(SYS_openat2, AT_FDCWD, a, &how, sizeof(how));
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	if (sscanf(cmd, "xopen %127s %127s", a, b) == 2) {
		fl = open_flags(b);
		if (fl < 0)
			return EINVAL;
		fd = open(a, fl, 0644);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	if (sscanf(cmd, "xread %127s", a) == 1)
		return read_file(a);
	if (!strcmp(cmd, "pidfds"))
		return pidfds();
	if (sscanf(cmd, "exec %127s %127s", a, b) == 2)
		return exec_child(a, b);
	if (sscanf(cmd, "truncate %127s", a) == 1)
		return truncate(a, 0) ? errno : 0;
	if (sscanf(cmd, "rename %127s %127s", a, b) == 2)
		return rename(a, b) ? errno : 0;
	if (sscanf(cmd, "exchange %127s %127s", a, b) == 2)
		return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			       RENAME_EXCHANGE) ? errno : 0;
	if (sscanf(cmd, "link %127s %127s", a, b) == 2)
		return link(a, b) ? errno : 0;
	if (sscanf(cmd, "symlink %127s %127s", a, b) == 2)
		return symlink(a, b) ? errno : 0;
	if (sscanf(cmd, "unlink %127s", a) == 1)
		return unlink(a) ? errno : 0;
	/* POSIX message queues by name, through their system calls (no path) */
	if (sscanf(cmd, "mq-create %127s", a) == 1)
		return mq_call(a, O_CREAT | O_RDWR);
	if (sscanf(cmd, "mq-open %127s", a) == 1)
		return mq_call(a, O_RDWR);
	if (sscanf(cmd, "mq-read %127s", a) == 1)
		return mq_call(a, O_RDONLY);
	if (sscanf(cmd, "mq-write %127s", a) == 1)
		return mq_call(a, O_WRONLY);

	if (sscanf(cmd, "mq-unlink %127s", a) == 1)
		return syscall(SYS_mq_unlink, a) ? errno : 0;
	if (sscanf(cmd, "mkdir %127s", a) == 1)
		return mkdir(a, 0755) ? errno : 0;
	if (sscanf(cmd, "rmdir %127s", a) == 1)
		return rmdir(a) ? errno : 0;
	if (sscanf(cmd, "mkfifo %127s", a) == 1)
		return mknod(a, S_IFIFO | 0644, 0) ? errno : 0;
	if (sscanf(cmd, "chmod %127s", a) == 1)
		return chmod(a, 0600) ? errno : 0;
	if (sscanf(cmd, "chown %127s", a) == 1)
		return chown(a, 0, 0) ? errno : 0;
	if (sscanf(cmd, "setxattr %127s", a) == 1)
		return setxattr(a, "trusted.cft", "1", 1, 0) ? errno : 0;
	if (sscanf(cmd, "removexattr %127s", a) == 1)
		return removexattr(a, "trusted.cft") ? errno : 0;
	/* POSIX ACLs: since 6.2 they bypass the *xattr hooks */
	if (sscanf(cmd, "setacl %127s", a) == 1) {
		struct acl_xattr v;
		size_t len = acl_value(&v, false);

		return setxattr(a, ACL_ACCESS, &v, len, 0) ? errno : 0;
	}
	if (sscanf(cmd, "setdefacl %127s", a) == 1) {
		struct acl_xattr v;
		size_t len = acl_value(&v, false);

		return setxattr(a, ACL_DEFAULT, &v, len, 0) ? errno : 0;
	}
	if (sscanf(cmd, "rmacl %127s", a) == 1)
		return removexattr(a, ACL_ACCESS) ? errno : 0;
	if (sscanf(cmd, "rmdefacl %127s", a) == 1)
		return removexattr(a, ACL_DEFAULT) ? errno : 0;
	if (sscanf(cmd, "uring-setacl %127s", a) == 1)
		return uring_setacl(a, ACL_ACCESS);
	/* openat through io_uring, inline or on a worker ("async") */
	if (sscanf(cmd, "uring-open %127s %127s %127s", a, b, c) == 3 ||
	    sscanf(cmd, "uring-open %127s %127s", a, b) == 2) {
		bool async = strstr(cmd, " async") != NULL;

		fl = open_flags(b);
		if (fl < 0)
			return EINVAL;
		return uring_open(a, fl, async);
	}
	/* O_TMPFILE in @a, then give it the name @b */
	if (sscanf(cmd, "tmpfile-link %127s %127s", a, b) == 2) {
		fd = open(a, O_TMPFILE | O_RDWR, 0644);
		if (fd < 0)
			return errno;
		r = linkat(fd, "", AT_FDCWD, b, AT_EMPTY_PATH) ? errno : 0;
		close(fd);
		return r;
	}
	if (sscanf(cmd, "bindmount %127s %127s", a, b) == 2)
		return mount(a, b, NULL, MS_BIND, NULL) ? errno : 0;
	if (sscanf(cmd, "mount-tmpfs %127s", a) == 1)
		return mount("none", a, "tmpfs", 0, NULL) ? errno : 0;
	if (sscanf(cmd, "umount %127s", a) == 1)
		return umount2(a, MNT_DETACH) ? errno : 0;
	if (sscanf(cmd, "chroot %127s", a) == 1)
		return chroot(a) || chdir("/") ? errno : 0;
	if (sscanf(cmd, "pivot %127s %127s", a, b) == 2)
		return syscall(SYS_pivot_root, a, b) ? errno : 0;
	/* read @b beneath a detached clone of @a */
	if (sscanf(cmd, "tree-read %127s %127s", a, b) == 2) {
		char ch;
		int t = clone_tree(a);

		if (t < 0)
			return errno;
		fd = openat(t, b, O_RDONLY);
		r = fd < 0 ? errno : 0;
		if (fd >= 0 && read(fd, &ch, 1) < 0)
			r = errno;
		if (fd >= 0)
			close(fd);
		close(t);
		return r;
	}
	/* attach a detached clone of @a at @b */
	if (sscanf(cmd, "tree-move %127s %127s", a, b) == 2) {
		int t = clone_tree(a);

		if (t < 0)
			return errno;
		r = syscall(SYS_move_mount, t, "", AT_FDCWD, b,
			    MOVE_MOUNT_F_EMPTY_PATH) ? errno : 0;
		close(t);
		return r;
	}
	/*
	 * Open @a/d0/f ... @a/d<n-1>/f in turn (n = 0: @a/f) with flags @b
	 * for @ms milliseconds: the steady state of a long-running task.
	 */
	if (sscanf(cmd, "rotopen %d %127s %127s %d", &ms, b, a, &n) == 4) {
		uint64_t end = cft_now_ns() + (uint64_t)ms * 1000000;
		char p[160];
		int i = 0;

		fl = open_flags(b);
		if (fl < 0 || n < 0)
			return EINVAL;
		while (cft_now_ns() < end) {
			if (n)
				snprintf(p, sizeof(p), "%s/d%d/f", a, i++ % n);
			else
				snprintf(p, sizeof(p), "%s/f", a);
			fd = open(p, fl, 0644);
			if (fd < 0)
				return errno;
			close(fd);
		}
		return 0;
	}
	/* a directory kept open, for "at" (before "xread"-like prefixes) */
	if (sscanf(cmd, "dir %127s", a) == 1) {
		if (fsm_dirfd >= 0)
			close(fsm_dirfd);
		fsm_dirfd = open(a, O_RDONLY | O_DIRECTORY);
		return fsm_dirfd < 0 ? errno : 0;
	}
	/* open @a beneath the kept directory, whatever its name is now */
	if (sscanf(cmd, "at %127s %127s", a, b) == 2) {
		fl = open_flags(b);
		if (fl < 0)
			return EINVAL;
		fd = openat(fsm_dirfd, a, fl, 0644);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	/* a file kept open for reading only (before "fopen": a prefix) */
	if (sscanf(cmd, "fopen-ro %127s", a) == 1) {
		if (fsm_fd >= 0)
			close(fsm_fd);
		fsm_fd = open(a, O_RDONLY);
		return fsm_fd < 0 ? errno : 0;
	}
	/* a file kept open read-write for the mapping commands */
	if (sscanf(cmd, "fopen %127s", a) == 1) {
		if (fsm_fd >= 0)
			close(fsm_fd);
		fsm_fd = open(a, O_RDWR);
		return fsm_fd < 0 ? errno : 0;
	}
	/* the descriptor number, for another task's pidfd_getfd() */
	if (!strcmp(cmd, "fd"))
		return fsm_fd;
	if (sscanf(cmd, "mmap %127s %127s", b, c) == 2) {
		int prot = strchr(b, 'w') ? PROT_READ | PROT_WRITE : PROT_READ;
		int flags = strcmp(c, "shared") ? MAP_PRIVATE : MAP_SHARED;
		void *m;

		/* never touched: a store could fault beyond the file's end */
		m = mmap(NULL, 4096, prot, flags, fsm_fd, 0);
		if (m == MAP_FAILED)
			return errno;
		if (fsm_map)
			munmap(fsm_map, 4096);
		fsm_map = m;
		return 0;
	}
	if (!strcmp(cmd, "mprotect-write"))
		return mprotect(fsm_map, 4096, PROT_READ | PROT_WRITE) ? errno : 0;
	if (!strcmp(cmd, "mprotect-ro"))
		return mprotect(fsm_map, 4096, PROT_READ) ? errno : 0;
	if (!strcmp(cmd, "mprotect-rx"))
		return mprotect(fsm_map, 4096, PROT_READ | PROT_EXEC) ? errno : 0;
	/* an ioctl on the kept file (FIONREAD: any file system answers it) */
	if (!strcmp(cmd, "fioctl"))
		return ioctl(fsm_fd, FIONREAD, &n) ? errno : 0;
	/* the same through the 32-bit entry (ioctl is 54 there): compat_ioctl */
	if (!strcmp(cmd, "fioctl32")) {
		long ret;
		int *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		if (p == MAP_FAILED)
			return errno;
		__asm__ __volatile__("int $0x80" : "=a"(ret)
			     : "a"(54L), "b"((long)fsm_fd), "c"((long)FIONREAD),
			       "d"(p) : "memory");
		munmap(p, 4096);
		return ret < 0 ? (int)-ret : 0;
	}
	if (!strcmp(cmd, "ftruncate"))
		return ftruncate(fsm_fd, 1) ? errno : 0;
	if (!strcmp(cmd, "fwrite"))
		return pwrite(fsm_fd, "w", 1, 0) == 1 ? 0 : errno;
	(void)c;
	return EINVAL;
}

/* Steps separated by ';': the first failure's errno, or 0. */
static int fsm_steps(char *cmds)
{
	char *save = NULL, *s;
	int r = 0;

	for (s = strtok_r(cmds, ";", &save); s && !r;
	     s = strtok_r(NULL, ";", &save)) {
		while (*s == ' ')
			s++;
		r = fsm_step(s);
	}
	return r;
}

/*
 * "as ROLE STEPS": the steps in a child of the agent (bound like it), after
 * ROLE: root (nothing), root-ns (a new mount namespace), nobody-ns (uid
 * 65534 in a new user and mount namespace), nobody-user (uid 65534 in a
 * new user namespace).
 */
static int fsm_as(const char *role, char *steps)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return errno;
	if (!pid) {
		int ns = 0;

		if (strstr(role, "nobody") &&
		    (setresgid(65534, 65534, 65534) ||
		     setresuid(65534, 65534, 65534)))
			_exit(FSM_NOSETUP);
		if (!strcmp(role, "root-ns"))
			ns = CLONE_NEWNS;
		else if (!strcmp(role, "nobody-ns"))
			ns = CLONE_NEWUSER | CLONE_NEWNS;
		else if (!strcmp(role, "nobody-user"))
			ns = CLONE_NEWUSER;
		if (ns && unshare(ns))
			_exit(FSM_NOSETUP);
		/*
		 * Our own copy of the mount tree, so nothing leaks out of it.
		 * capfence refuses this mount(2) call too where the epoch
		 * mediates fs classes, and then every later mount as well.
		 */
		if (ns & CLONE_NEWNS)
			mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
		_exit(fsm_steps(steps));
	}
	fsm_last_child = pid;
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st);
}

int cft_agent_extra(char *cmd)
{
	char role[32];
	int n = 0;

	if (sscanf(cmd, "as %31s %n", role, &n) == 1 && n)
		return fsm_as(role, cmd + n);
	if (!strcmp(cmd, "lastchild"))
		return fsm_last_child;
	return fsm_steps(cmd);
}

/* ---- test side ---- */

FIXTURE(fsm) {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e;
	struct capfence_token rt;		/* the agent's fs:read token */
	struct cft_agent agent;
	int audit;
};

static void put_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

#define OPEN_MEMO_PARAM	"/sys/module/capfence/parameters/open_memo"

static int write_param(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(v, f);
	return fclose(f) ? -1 : 0;
}

static int make_tree(void)
{
	/* the open memo on, whatever a failed memo_switched_off left */
	write_param(OPEN_MEMO_PARAM, "1");
	/* a mount a failed test left behind */
	umount2("/tmp/fsm/allowed/m", MNT_DETACH);
	umount2("/tmp/fsm/ro/m", MNT_DETACH);
	umount2("/tmp/fsm/secret/bm", MNT_DETACH);
	if (system("rm -rf /tmp/fsm /tmp/fsm-old"))
		return -1;
	if (mkdir("/tmp/fsm", 0755) ||
	    mkdir("/tmp/fsm/allowed", 0777) ||
	    mkdir("/tmp/fsm/allowed/dir0", 0777) ||
	    mkdir("/tmp/fsm/secret", 0755) ||
	    mkdir("/tmp/fsm/secret/tmp", 0755) ||
	    mkdir("/tmp/fsm/secret/tmp/fsm", 0755) ||
	    mkdir("/tmp/fsm/secret/tmp/fsm/allowed", 0755) ||
	    mkdir("/tmp/fsm/ro", 0777))
		return -1;
	/* the chmod after creation: the umask must not matter */
	chmod("/tmp/fsm/allowed", 0777);
	chmod("/tmp/fsm/allowed/dir0", 0777);
	chmod("/tmp/fsm/ro", 0777);
	put_file("/tmp/fsm/allowed/a", "allowed\n", 0666);
	put_file("/tmp/fsm/secret/s", "SECRET\n", 0644);
	put_file("/tmp/fsm/secret/probe", "", 0644);
	put_file("/tmp/fsm/secret/tmp/fsm/allowed/s", "SECRET\n", 0644);
	put_file("/tmp/fsm/ro/f", "ro\n", 0666);
	return 0;
}

/* A bound agent under a fresh epoch of @rules, holding a read token. */
static int spawn(FIXTURE_DATA(fsm) *self, const char *const *rules, int n, bool read_token,
		 struct cft_agent *a, uint64_t *e)
{
	*e = cft_next_epoch(&self->nl);
	if (cft_epoch_install(&self->nl, *e, rules, n, NULL, 0))
		return -1;
	if (!read_token)
		return cft_agent_spawn(a, *e, NULL, 0, NULL);
	if (cft_mint(self->key, "fs:read", *e, FSM_READ, 0, &self->rt))
		return -1;
	return cft_agent_spawn(a, *e, &self->rt, 1, NULL);
}

/* The fixture's bound agent; fsm's setup, and fs_path's. */
static void fsm_up(struct __test_metadata *_metadata, FIXTURE_DATA(fsm) *self)
{
	/* reading needs a token; writing is inside /tmp/fsm/allowed only */
	const char *rules[] = { "fs:read=token",
				"fs:write=token:/tmp/fsm/allowed" };

	ASSERT_EQ(0, make_tree());
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	ASSERT_EQ(0, spawn(self, rules, 2, true, &self->agent,
			   &self->e));
	ASSERT_TRUE(cft_audit_settle(self->audit, &self->agent,
				     "xread /tmp/fsm/secret/probe",
				     "target=\"/tmp/fsm/secret/probe\""));
}

/* The agent ended by itself, no signal; everything closed. */
static void fsm_down(struct __test_metadata *_metadata, FIXTURE_DATA(fsm) *self)
{
	EXPECT_TRUE(cft_agent_stop_clean(&self->agent));
	cft_audit_close(self->audit);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

FIXTURE_SETUP(fsm)
{
	fsm_up(_metadata, self);
}

FIXTURE_TEARDOWN(fsm)
{
	fsm_down(_metadata, self);
}

/* Give the agent an fs:write token for @constraint. */
static void give_write(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fsm) *self, const char *constraint,
		       struct capfence_token *t)
{
	struct cft_reply r;

	ASSERT_EQ(0, cft_mint(self->key, "fs:write", self->e, constraint, 0, t));
	ASSERT_EQ(0, cft_delegate(&self->nl, t, self->agent.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
}

#define REC(reason, cls, target, cap)					\
	cft_check_denial(_metadata, self->audit, self->agent.pid, self->e,	\
		  reason, cls, target, cap)

/* the record of the agent's last "as" child */
#define CHILD_REC(reason, cls, target, cap)				\
	cft_check_denial(_metadata, self->audit,				\
		  cft_agent_do(&self->agent, "lastchild"), self->e,	\
		  reason, cls, target, cap)

/* an "as" command whose namespace setup the kernel refused: skip */
#define AS(expect, ...) do {						\
	int __r = cft_agent_do(&self->agent, __VA_ARGS__);		\
	if (__r == FSM_NOSETUP)						\
		SKIP(return, "namespaces unavailable for this attack");	\
	ASSERT_EQ(expect, __r);						\
} while (0)

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

/*
 * ---- the paths that change a name: one row each ----
 *
 * Every row is one system call path a bound agent takes (under the fsm
 * epoch: fs:read=token, fs:write=token:/tmp/fsm/allowed, and a read token
 * for FSM_READ), refused with EACCES and a record naming its reason, class
 * and target; counted once as a denial of that reason and never as an
 * allow; leaving the tree as it was (no name it would have made, the two
 * files it could have changed unchanged); the agent ending by itself.
 * @path and @hook are docs/threat-model.md's generated table
 * (selftests/kernel/path-table.py), so a path with no row shows there.
 */
FIXTURE(fs_path) {
	FIXTURE_DATA(fsm) m;
};

FIXTURE_VARIANT(fs_path) {
	const char *path;	/* the system call path, as the threat model says */
	const char *hook;	/* the hook that refuses it */
	const char *grant;	/* an fs:write token delegated first, or NULL */
	const char *step;	/* the agent's step (fsm_step()) */
	const char *reason;	/* the record's reason */
	const char *cls;	/* its class */
	const char *target;	/* its target */
	const char *absent;	/* a name the refusal leaves absent, or NULL */
	const char *kept;	/* a name the refusal leaves in place, or NULL */
};

#define W_ALLOWED "/tmp/fsm/allowed"
/* POSIX message queues: one the agent did not make, one it would */
#define MQ_HELD		"cfq-held"
#define MQ_NEW		"cfq-new"
#define MQUEUE_FS	0x19800202	/* MQUEUE_MAGIC */

FIXTURE_VARIANT_ADD(fs_path, open_rdonly_trunc) {
	.path = "`open(O_RDONLY | O_TRUNC)`", .hook = "file_open",
	.step = "xopen /tmp/fsm/allowed/a rt", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, openat2_rdonly_trunc) {
	.path = "`openat2(O_RDONLY | O_TRUNC)`", .hook = "file_open",
	.step = "xopenat2 /tmp/fsm/allowed/a rt", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, uring_open_rdonly_trunc) {
	.path = "io_uring `IORING_OP_OPENAT` with `O_RDONLY | O_TRUNC`",
	.hook = "file_open", .step = "uring-open /tmp/fsm/allowed/a rt",
	.reason = "no_capability", .cls = "fs:write",
	.target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, open_access_mode_3) {
	.path = "`open()` with access mode 3 (ioctls only)", .hook = "file_open",
	.step = "xopen /tmp/fsm/allowed/a 3", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
/* a device's f_mode is 0 at such an open: nothing tells it from a read */
FIXTURE_VARIANT_ADD(fs_path, open_device_access_mode_3) {
	.path = "`open()` of a device with access mode 3 (ioctls only)",
	.hook = "file_open", .step = "xopen /dev/null 3", .reason = "constraint",
	.cls = "fs:write", .target = "/dev/null",
};
FIXTURE_VARIANT_ADD(fs_path, open_creat) {
	.path = "`open(O_CREAT)` of a new file", .hook = "path_mknod",
	.step = "xopen /tmp/fsm/allowed/new rc", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/new",
	.absent = "/tmp/fsm/allowed/new",
};
FIXTURE_VARIANT_ADD(fs_path, open_creat_existing) {
	.path = "`open(O_CREAT)` of an existing file", .hook = "file_open",
	.step = "xopen /tmp/fsm/allowed/a rc", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, open_append) {
	.path = "`open(O_WRONLY | O_APPEND)`", .hook = "file_open",
	.step = "xopen /tmp/fsm/allowed/a wa", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, truncate) {
	.path = "`truncate()`", .hook = "path_truncate",
	.step = "truncate /tmp/fsm/allowed/a", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, mkdir) {
	.path = "`mkdir()`", .hook = "path_mkdir",
	.step = "mkdir /tmp/fsm/allowed/d", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/d",
	.absent = "/tmp/fsm/allowed/d",
};
FIXTURE_VARIANT_ADD(fs_path, mkfifo) {
	.path = "`mknod(S_IFIFO)` (`mkfifo()`)", .hook = "path_mknod",
	.step = "mkfifo /tmp/fsm/allowed/p", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/p",
	.absent = "/tmp/fsm/allowed/p",
};
FIXTURE_VARIANT_ADD(fs_path, symlink) {
	.path = "`symlink()`", .hook = "path_symlink",
	.step = "symlink /tmp/fsm/secret/s /tmp/fsm/allowed/sl",
	.reason = "no_capability", .cls = "fs:write",
	.target = "/tmp/fsm/allowed/sl", .absent = "/tmp/fsm/allowed/sl",
};
FIXTURE_VARIANT_ADD(fs_path, link) {
	.path = "`link()`", .hook = "path_link",
	.step = "link /tmp/fsm/allowed/a /tmp/fsm/allowed/l",
	.reason = "no_capability", .cls = "fs:write",
	.target = "/tmp/fsm/allowed/a", .absent = "/tmp/fsm/allowed/l",
};
FIXTURE_VARIANT_ADD(fs_path, link_into_grant) {
	.path = "`link()` of a file outside the grant into it",
	.hook = "path_link", .grant = W_ALLOWED,
	.step = "link /tmp/fsm/ro/f /tmp/fsm/allowed/l",
	.reason = "constraint", .cls = "fs:write", .target = "/tmp/fsm/ro/f",
	.absent = "/tmp/fsm/allowed/l",
};
FIXTURE_VARIANT_ADD(fs_path, unlink) {
	.path = "`unlink()`", .hook = "path_unlink",
	.step = "unlink /tmp/fsm/allowed/a", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, unlink_outside_the_rule) {
	.path = "`unlink()` outside the rule's constraint",
	.hook = "path_unlink", .step = "unlink /tmp/fsm/ro/f",
	.reason = "constraint", .cls = "fs:write", .target = "/tmp/fsm/ro/f",
};
FIXTURE_VARIANT_ADD(fs_path, rmdir) {
	.path = "`rmdir()`", .hook = "path_rmdir",
	.step = "rmdir /tmp/fsm/allowed/dir0", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/dir0",
};
FIXTURE_VARIANT_ADD(fs_path, rename) {
	.path = "`rename()`", .hook = "path_rename",
	.step = "rename /tmp/fsm/allowed/a /tmp/fsm/allowed/b",
	.reason = "no_capability", .cls = "fs:write",
	.target = "/tmp/fsm/allowed/a", .absent = "/tmp/fsm/allowed/b",
};
FIXTURE_VARIANT_ADD(fs_path, rename_out_of_grant) {
	.path = "`rename()` out of the grant", .hook = "path_rename",
	.grant = W_ALLOWED, .step = "rename /tmp/fsm/allowed/a /tmp/fsm/ro/a",
	.reason = "constraint", .cls = "fs:write", .target = "/tmp/fsm/ro/a",
	.absent = "/tmp/fsm/ro/a",
};
FIXTURE_VARIANT_ADD(fs_path, rename_into_grant) {
	.path = "`rename()` into the grant", .hook = "path_rename",
	.grant = W_ALLOWED, .step = "rename /tmp/fsm/ro/f /tmp/fsm/allowed/f",
	.reason = "constraint", .cls = "fs:write", .target = "/tmp/fsm/ro/f",
	.absent = "/tmp/fsm/allowed/f",
};
FIXTURE_VARIANT_ADD(fs_path, exchange_with_outside) {
	.path = "`renameat2(RENAME_EXCHANGE)` with a file outside the grant",
	.hook = "path_rename", .grant = W_ALLOWED,
	.step = "exchange /tmp/fsm/allowed/a /tmp/fsm/ro/f",
	.reason = "constraint", .cls = "fs:write", .target = "/tmp/fsm/ro/f",
};
FIXTURE_VARIANT_ADD(fs_path, chmod) {
	.path = "`chmod()`", .hook = "path_chmod",
	.step = "chmod /tmp/fsm/allowed/a", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
FIXTURE_VARIANT_ADD(fs_path, chown) {
	.path = "`chown()`", .hook = "path_chown",
	.step = "chown /tmp/fsm/allowed/a", .reason = "no_capability",
	.cls = "fs:write", .target = "/tmp/fsm/allowed/a",
};
/* the mqueue system calls name no mount: refused while fs:write is mediated */
FIXTURE_VARIANT_ADD(fs_path, mq_open_create) {
	.path = "`mq_open(O_CREAT)`", .hook = "inode_create",
	.step = "mq-create " MQ_NEW, .reason = "bypass",
	.cls = "fs:write", .target = "mq_create",
	.absent = "/dev/mqueue/" MQ_NEW,
};
FIXTURE_VARIANT_ADD(fs_path, mq_unlink) {
	.path = "`mq_unlink()`", .hook = "inode_unlink",
	.step = "mq-unlink " MQ_HELD, .reason = "bypass",
	.cls = "fs:write", .target = "mq_unlink",
	.kept = "/dev/mqueue/" MQ_HELD,
};
/* the xattr hooks get no mount: refused while fs:write is mediated */
FIXTURE_VARIANT_ADD(fs_path, setxattr) {
	.path = "`setxattr()`", .hook = "inode_setxattr",
	.step = "setxattr /tmp/fsm/allowed/a", .reason = "bypass",
	.cls = "fs:write", .target = "setxattr",
};
FIXTURE_VARIANT_ADD(fs_path, removexattr) {
	.path = "`removexattr()`", .hook = "inode_removexattr",
	.step = "removexattr /tmp/fsm/allowed/a", .reason = "bypass",
	.cls = "fs:write", .target = "removexattr",
};

/*
 * The mqueue rows: /dev/mqueue mounted (where the test sees the names) and
 * a queue MQ_HELD the agent did not make. 0, or -1 without mqueue.
 */
static int mq_up(void)
{
	struct statfs sf;

	mkdir("/dev/mqueue", 01777);
	if ((statfs("/dev/mqueue", &sf) || sf.f_type != MQUEUE_FS) &&
	    mount("mqueue", "/dev/mqueue", "mqueue", 0, NULL))
		return -1;
	syscall(SYS_mq_unlink, MQ_NEW);
	syscall(SYS_mq_unlink, MQ_HELD);
	return mq_call(MQ_HELD, O_CREAT | O_RDWR) ? -1 : 0;
}

static void mq_down(void)
{
	syscall(SYS_mq_unlink, MQ_NEW);
	syscall(SYS_mq_unlink, MQ_HELD);
}

FIXTURE_SETUP(fs_path)
{
	fsm_up(_metadata, &self->m);
}

FIXTURE_TEARDOWN(fs_path)
{
	fsm_down(_metadata, &self->m);
	mq_down();
}

TEST_F(fs_path, refused_with_its_record)
{
	int reason = capfence_reason_from_name(variant->reason);
	struct capfence_status before, after;
	struct capfence_token w;
	struct stat st;

	ASSERT_LT(0, reason);
	if (!strncmp(variant->step, "mq-", 3) && mq_up())
		SKIP(return, "no POSIX message queues in this kernel");
	if (variant->grant)
		give_write(_metadata, &self->m, variant->grant, &w);
	ASSERT_EQ(0, cft_nl_status(&self->m.nl, &before));
	EXPECT_EQ(EACCES, cft_agent_do(&self->m.agent, variant->step));
	cft_check_denial(_metadata, self->m.audit, self->m.agent.pid,
			 self->m.e, variant->reason, variant->cls,
			 variant->target, 0);
	ASSERT_EQ(0, cft_nl_status(&self->m.nl, &after));
	EXPECT_EQ(before.exercise_allow, after.exercise_allow);
	EXPECT_EQ(before.exercise_deny[reason] + 1, after.exercise_deny[reason]);
	EXPECT_EQ(8, size_of("/tmp/fsm/allowed/a"));
	EXPECT_EQ(3, size_of("/tmp/fsm/ro/f"));
	EXPECT_EQ(0666, stat("/tmp/fsm/allowed/a", &st) ? 0 :
			       st.st_mode & 0777);
	if (variant->absent)
		EXPECT_EQ(-1, lstat(variant->absent, &st));
	if (variant->kept)
		EXPECT_EQ(0, lstat(variant->kept, &st));
}

/* @step of agent b refused at once: EACCES and its bypass record */
#define MQ_REFUSED(step, cls, target) do {				\
	EXPECT_EQ(EACCES, cft_agent_do(&b, step));			\
	cft_check_denial(_metadata, self->audit, b.pid, e2, "bypass",	\
			 cls, target, 0);				\
} while (0)

/*
 * A queue's name through an mqueue mount the task sees: path_mknod and
 * path_unlink pass under a token for the mount, and inode_create and
 * inode_unlink, which cannot tell this from the system calls, refuse.
 * A queue's open, by mq_open() or through the mount, in any mode, is
 * refused whatever the grants while a path class is mediated: no recheck
 * after a revoke would reach mq_timedsend(), mq_timedreceive() or
 * mq_notify(); a receive takes a message from its owner, mq_notify() its
 * notification slot.
 */
TEST_F(fsm, mqueue_through_a_mount_and_by_name)
{
	const char *rules[] = { "fs:read=token", "fs:write=token:/dev/mqueue" };
	const char *open_read[] = { "fs:read=open",
				    "fs:write=token:/tmp/fsm/allowed" };
	const char *open_write[] = { "fs:read=token", "fs:write=open" };
	struct capfence_token w;
	struct cft_agent b;
	struct cft_reply r;
	struct stat st;
	uint64_t e2;

	if (mq_up())
		SKIP(return, "no POSIX message queues in this kernel");
	ASSERT_EQ(0, spawn(self, rules, 2, true, &b, &e2));
	ASSERT_EQ(0, cft_mint(self->key, "fs:write", e2, "/dev/mqueue", 0, &w));
	ASSERT_EQ(0, cft_delegate(&self->nl, &w, b.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
	MQ_REFUSED("xopen /dev/mqueue/" MQ_NEW " bc", "fs:write", "mq_create");
	EXPECT_EQ(-1, lstat("/dev/mqueue/" MQ_NEW, &st));
	MQ_REFUSED("unlink /dev/mqueue/" MQ_HELD, "fs:write", "mq_unlink");
	EXPECT_EQ(0, lstat("/dev/mqueue/" MQ_HELD, &st));
	MQ_REFUSED("mq-open " MQ_HELD, "fs:read", "mqueue");
	/* the token names the queue: still refused, for writing too */
	MQ_REFUSED("xopen /dev/mqueue/" MQ_HELD " w", "fs:read", "mqueue");
	EXPECT_TRUE(cft_agent_stop_clean(&b));

	/* fs:read open: a receive would still take an owner's message */
	ASSERT_EQ(0, spawn(self, open_read, 2, false, &b, &e2));
	MQ_REFUSED("mq-read " MQ_HELD, "fs:write", "mqueue");
	MQ_REFUSED("xopen /dev/mqueue/" MQ_HELD " r", "fs:write", "mqueue");
	/* the same open through io_uring, inline and on its worker */
	MQ_REFUSED("uring-open /dev/mqueue/" MQ_HELD " r", "fs:write", "mqueue");
	MQ_REFUSED("uring-open /dev/mqueue/" MQ_HELD " r async", "fs:write",
		   "mqueue");
	MQ_REFUSED("mq-create " MQ_NEW, "fs:write", "mq_create");
	EXPECT_EQ(-1, lstat("/dev/mqueue/" MQ_NEW, &st));
	/* the mount's directory is not a queue: it lists (find, ls -R) */
	EXPECT_EQ(0, cft_agent_do(&b, "xopen /dev/mqueue r"));
	EXPECT_TRUE(cft_agent_stop_clean(&b));

	/* fs:read mediated: a write-only queue would still take mq_notify() */
	ASSERT_EQ(0, spawn(self, open_write, 2, true, &b, &e2));
	MQ_REFUSED("mq-write " MQ_HELD, "fs:read", "mqueue");
	EXPECT_TRUE(cft_agent_stop_clean(&b));
	mq_down();
}

/* ---- 7. opens that modify ---- */

TEST_F(fsm, tmpfile_and_linkat)
{
	struct capfence_token w;

	EXPECT_EQ(EACCES, cft_agent_do(&self->agent,
				       "tmpfile-link /tmp/fsm/allowed /tmp/fsm/allowed/t"));
	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	/* an anonymous file inside the grant cannot be named outside it */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent,
				       "tmpfile-link /tmp/fsm/allowed /tmp/fsm/ro/t"));
	REC("constraint", "fs:write", "/tmp/fsm/ro/t", 0);
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "tmpfile-link /tmp/fsm/allowed /tmp/fsm/allowed/t"));
}

/* ---- 8. path identity ---- */

TEST_F(fsm, bind_mount_over_prefix_as_nobody)
{
	AS(EACCES, "as nobody-ns bindmount /tmp/fsm/secret /tmp/fsm/allowed; "
		   "xread /tmp/fsm/allowed/s");
	CHILD_REC("bypass", "fs:read", "mount", 0);
}

TEST_F(fsm, bind_mount_over_prefix_as_root)
{
	AS(EACCES, "as root-ns bindmount /tmp/fsm/secret /tmp/fsm/allowed; "
		   "xread /tmp/fsm/allowed/s");
	CHILD_REC("bypass", "fs:read", "mount", 0);
}

TEST_F(fsm, mount_umount_pivot_refused)
{
	AS(EACCES, "as nobody-ns mount-tmpfs /tmp/fsm/allowed");
	CHILD_REC("bypass", "fs:read", "mount", 0);
	AS(EACCES, "as root-ns umount /tmp");
	CHILD_REC("bypass", "fs:read", "umount", 0);
	AS(EACCES, "as nobody-ns pivot /tmp/fsm/secret /tmp/fsm/secret/tmp");
	CHILD_REC("bypass", "fs:read", "pivot_root", 0);
}

TEST_F(fsm, chroot_into_other_tree)
{
	AS(EACCES, "as root chroot /tmp/fsm/secret; xread /tmp/fsm/allowed/s");
	CHILD_REC("bypass", "fs:read", "chroot", 0);
	AS(EACCES, "as nobody-user chroot /tmp/fsm/secret; "
		   "xread /tmp/fsm/allowed/s");
	CHILD_REC("bypass", "fs:read", "chroot", 0);
}

TEST_F(fsm, detached_tree_is_unnamed)
{
	/* a detached copy of the secret tree, whose layout ends in the prefix */
	AS(EACCES, "as nobody-ns tree-read /tmp/fsm/secret tmp/fsm/allowed/s");
	CHILD_REC("bypass", "fs:read", "unreachable", 0);
	AS(EACCES, "as nobody-ns tree-move /tmp/fsm/secret /tmp/fsm/allowed");
	CHILD_REC("bypass", "fs:read", "move_mount", 0);
}

/*
 * A pidfd names a process, not a file beneath a path: neither fs class
 * judges it (before: from 6.9, where it is a pidfs file, refused as
 * "unreachable" to every task whose epoch mediates fs:read or fs:write).
 */
TEST_F(fsm, pidfds_are_not_paths)
{
	EXPECT_EQ(0, cft_agent_do(&self->agent, "pidfds"));
}

/* fs:write open, fs:read narrowed: a new name must not widen reading */
TEST_F(fsm, hard_link_into_prefix)
{
	const char *rules[] = { "fs:read=token", "fs:write=open" };
	struct cft_agent b;
	uint64_t e2;

	ASSERT_EQ(0, spawn(self, rules, 2, true, &b, &e2));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "link /tmp/fsm/secret/s /tmp/fsm/allowed/l"));
	cft_check_denial(_metadata, self->audit, b.pid, e2, "constraint", "fs:read",
		  "/tmp/fsm/secret/s", self->rt.cap_id);
	EXPECT_EQ(ENOENT, cft_agent_do(&b, "xread /tmp/fsm/allowed/l"));
	/* renaming it in, or swapping it in, is the same */
	EXPECT_EQ(EACCES, cft_agent_do(&b, "rename /tmp/fsm/secret/s /tmp/fsm/allowed/l"));
	cft_check_denial(_metadata, self->audit, b.pid, e2, "constraint", "fs:read",
		  "/tmp/fsm/secret/s", self->rt.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&b, "exchange /tmp/fsm/allowed/a /tmp/fsm/secret/s"));
	cft_check_denial(_metadata, self->audit, b.pid, e2, "constraint", "fs:read",
		  "/tmp/fsm/secret/s", self->rt.cap_id);
	/*
	 * A directory renames its subtree: moving /tmp/fsm away, then the
	 * secret tree's tmp/fsm in its place, would put the secret at
	 * /tmp/fsm/allowed/s, though neither /tmp/fsm-old nor /tmp/fsm is
	 * itself readable.
	 */
	EXPECT_EQ(EACCES, cft_agent_do(&b, "rename /tmp/fsm /tmp/fsm-old; "
				       "rename /tmp/fsm-old/secret/tmp/fsm /tmp/fsm; "
				       "xread /tmp/fsm/allowed/s"));
	cft_check_denial(_metadata, self->audit, b.pid, e2, "constraint", "fs:read",
		  "/tmp/fsm", self->rt.cap_id);
	/* a readable directory may move; its subtree was readable already */
	EXPECT_EQ(0, cft_agent_do(&b, "rename /tmp/fsm/allowed/dir0 /tmp/fsm/ro/dir0"));
	/* moving a file where nothing is readable gains nothing: allowed */
	EXPECT_EQ(0, cft_agent_do(&b, "rename /tmp/fsm/secret/s /tmp/fsm/ro/s"));
	/* a symlink is followed: the file it reaches is judged */
	EXPECT_EQ(0, cft_agent_do(&b, "symlink /tmp/fsm/ro/s /tmp/fsm/allowed/sl"));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "xread /tmp/fsm/allowed/sl"));
	cft_check_denial(_metadata, self->audit, b.pid, e2, "constraint", "fs:read",
		  "/tmp/fsm/ro/s", self->rt.cap_id);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/* ---- 9. metadata operations beneath a path ---- */






static mode_t mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? (mode_t)-1 : st.st_mode & 07777;
}

/* does @path carry the extended attribute @name? */
static bool has_xattr(const char *path, const char *name)
{
	return getxattr(path, name, NULL, 0) > 0;
}

/* cft_check_denial() of a setxattr refusal, whatever thread made it */
static void uring_rec(struct __test_metadata *_metadata, int audit, pid_t pid,
		      uint64_t epoch)
{
	char rec[2048], v[128], want_p[32], want_e[32];

	snprintf(want_p, sizeof(want_p), "pid=%d ", pid);
	snprintf(want_e, sizeof(want_e), "%llu", (unsigned long long)epoch);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000, "op=exercise",
				    "reason=bypass", "class=fs:write",
				    "target=setxattr", want_p, NULL));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	EXPECT_STREQ(want_e, cft_field(rec, "epoch", v, sizeof(v)));
	EXPECT_STREQ("0000000000000000", cft_field(rec, "cap_id", v, sizeof(v)));
}

/*
 * POSIX ACLs change a file's permissions. Since 6.2 setxattr() and
 * removexattr() of system.posix_acl_* go to vfs_set_acl()/vfs_remove_acl()
 * and the inode_set_acl/inode_remove_acl hooks, not to inode_setxattr: a
 * bound uid 65534 that owns a file outside its fs:write grant must not
 * change its mode, nor set or remove a directory's default ACL, by any of
 * them (setxattr, removexattr, io_uring's IORING_OP_SETXATTR). Refused as
 * every xattr change is while fs:write is mediated: bypass, on both
 * kernels with the same record.
 */
TEST_F(fsm, posix_acl_needs_write)
{
	struct capfence_token w;
	struct acl_xattr v;
	size_t len;

	/* the file and directories are uid 65534's own: DAC lets it */
	ASSERT_EQ(0, mkdir("/tmp/fsm/ro/d", 0755));
	ASSERT_EQ(0, mkdir("/tmp/fsm/ro/dd", 0755));
	ASSERT_EQ(0, chown("/tmp/fsm/ro/f", 65534, 65534));
	ASSERT_EQ(0, chown("/tmp/fsm/ro/d", 65534, 65534));
	ASSERT_EQ(0, chown("/tmp/fsm/ro/dd", 65534, 65534));
	ASSERT_EQ(0, chmod("/tmp/fsm/ro/f", 0644));
	/* an extended access ACL and a default ACL to try to remove */
	ASSERT_EQ(0, chown("/tmp/fsm/allowed/a", 65534, 65534));
	len = acl_value(&v, true);
	/* a kernel without POSIX ACLs on tmpfs has no such path to guard */
	if (setxattr("/tmp/fsm/allowed/a", ACL_ACCESS, &v, len, 0) &&
	    errno == EOPNOTSUPP)
		SKIP(return, "no POSIX ACLs on /tmp (CONFIG_TMPFS_POSIX_ACL)");
	ASSERT_EQ(0, setxattr("/tmp/fsm/allowed/a", ACL_ACCESS, &v, len, 0))
		TH_LOG("POSIX ACLs on /tmp: %s", strerror(errno));
	ASSERT_EQ(0, setxattr("/tmp/fsm/ro/dd", ACL_DEFAULT, &v, len, 0));
	give_write(_metadata, self, "/tmp/fsm/allowed", &w);

	/* what the kernel's DAC allows uid 65534, capfence refuses */
	AS(EACCES, "as nobody chmod /tmp/fsm/ro/f");
	CHILD_REC("constraint", "fs:write", "/tmp/fsm/ro/f", 0);
	AS(EACCES, "as nobody setacl /tmp/fsm/ro/f");
	CHILD_REC("bypass", "fs:write", "setxattr", 0);
	EXPECT_EQ(0644, mode_of("/tmp/fsm/ro/f"));
	/* io_uring may hand it to a worker thread (comm iou-wrk-PID) */
	AS(EACCES, "as nobody uring-setacl /tmp/fsm/ro/f");
	uring_rec(_metadata, self->audit,
		  cft_agent_do(&self->agent, "lastchild"), self->e);
	EXPECT_EQ(0644, mode_of("/tmp/fsm/ro/f"));
	AS(EACCES, "as nobody setdefacl /tmp/fsm/ro/d");
	CHILD_REC("bypass", "fs:write", "setxattr", 0);
	EXPECT_FALSE(has_xattr("/tmp/fsm/ro/d", ACL_DEFAULT));
	AS(EACCES, "as nobody rmdefacl /tmp/fsm/ro/dd");
	CHILD_REC("bypass", "fs:write", "removexattr", 0);
	EXPECT_TRUE(has_xattr("/tmp/fsm/ro/dd", ACL_DEFAULT));
	/* inside the grant too: an xattr hook cannot name the file */
	AS(EACCES, "as nobody rmacl /tmp/fsm/allowed/a");
	CHILD_REC("bypass", "fs:write", "removexattr", 0);
	EXPECT_TRUE(has_xattr("/tmp/fsm/allowed/a", ACL_ACCESS));
	/* the agent itself, root, the same */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "setacl /tmp/fsm/allowed/a"));
	REC("bypass", "fs:write", "setxattr", 0);
	EXPECT_EQ(0664, mode_of("/tmp/fsm/allowed/a"));
}

/* ---- 10. files opened under a capability ---- */

/*
 * A FIFO's data moves without file_permission (splice() between two
 * pipes, tee(), vmsplice()): after a revoke nothing could stop them, so a
 * FIFO is refused at open under a grant, for either class ("bypass",
 * target "fifo"); a regular file beside it opens.
 */
TEST_F(fsm, fifo_under_a_grant_refused)
{
	struct capfence_token w;

	ASSERT_EQ(0, mkfifo("/tmp/fsm/allowed/fifo", 0666));
	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/fifo"));
	REC("bypass", "fs:write", "fifo", w.cap_id);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "dir /tmp/fsm/allowed"));
	/* reading alone, under the fs:read grant (O_NONBLOCK: no writer) */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at fifo rn"));
	REC("bypass", "fs:read", "fifo", self->rt.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at fifo rn"));
	REC("bypass", "fs:read", "fifo", self->rt.cap_id);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "at a r"));
}

TEST_F(fsm, shared_mapping_of_writable_file_refused)
{
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/a"));
	/* its stores could not be stopped by a later revoke */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mmap rw shared"));
	REC("bypass", "fs:write", "mmap", w.cap_id);
	/*
	 * Nor a read-only one: userfaultfd's UFFDIO_COPY fills holes of a
	 * tmpfs file through it, and mprotect could make it writable.
	 */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mmap r shared"));
	REC("bypass", "fs:write", "mmap", w.cap_id);
	/* private copies never reach the file */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mmap rw private"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mprotect-write"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fwrite"));
	/* open for reading only, it carries no write grant: shared is fine */
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen-ro /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mmap r shared"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mprotect-write"));
}

/*
 * After a revoke, an mprotect that only takes permissions away reaches
 * nothing new and is not judged (a program's loader makes its relocated
 * pages read-only right after its exec's point of no return, where a
 * refusal kills it); one that adds a permission is judged.
 */
TEST_F(fsm, mprotect_taking_permissions_away_not_judged)
{
	struct cft_reply r;

	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen-ro /tmp/fsm/allowed/a"));
	ASSERT_EQ(0, cft_agent_do(&self->agent, "mmap rw private"));
	ASSERT_EQ(0, cft_revoke(&self->nl, self->rt.cap_id, &r));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mprotect-ro"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mprotect-rx"));
	REC("revoked", "fs:read", "/tmp/fsm/allowed/a", self->rt.cap_id);
}

/*
 * A descriptor opened under a capability keeps its grant wherever it
 * goes: truncating it through another task, even an unbound one, rechecks
 * the write grant once it is revoked.
 */
TEST_F(fsm, passed_descriptor_truncate_rechecked)
{
	char rec[2048], v[128], want[64];
	struct capfence_token w;
	struct cft_reply r;
	int fd, pidfd, mine;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/a"));
	fd = cft_agent_do(&self->agent, "fd");
	ASSERT_LE(0, fd);
	pidfd = (int)syscall(SYS_pidfd_open, self->agent.pid, 0);
	ASSERT_LE(0, pidfd);
	mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	ASSERT_LE(0, mine);
	EXPECT_EQ(0, ftruncate(mine, 1));
	ASSERT_EQ(0, cft_revoke(&self->nl, w.cap_id, &r));
	EXPECT_EQ(-1, ftruncate(mine, 0));
	EXPECT_EQ(EACCES, errno);
	snprintf(want, sizeof(want), "pid=%d ", getpid());
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=revoked", want,
				    "target=\"/tmp/fsm/allowed/a\"", NULL));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	EXPECT_STREQ("fs:write", cft_field(rec, "class", v, sizeof(v)));
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)w.cap_id);
	EXPECT_STREQ(want, cft_field(rec, "cap_id", v, sizeof(v)));
	EXPECT_EQ(1, size_of("/tmp/fsm/allowed/a"));
	close(mine);
	close(pidfd);
}

TEST_F(fsm, revoked_file_ftruncate_and_mmap)
{
	struct cft_reply r;
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "ftruncate"));
	ASSERT_EQ(0, cft_revoke(&self->nl, w.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fwrite"));
	REC("revoked", "fs:write", "/tmp/fsm/allowed/a", w.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "ftruncate"));
	REC("revoked", "fs:write", "/tmp/fsm/allowed/a", w.cap_id);
	EXPECT_EQ(1, size_of("/tmp/fsm/allowed/a"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mmap rw shared"));
	REC("bypass", "fs:write", "mmap", w.cap_id);
	/* the read grant behind the same file is rechecked on new mappings */
	ASSERT_EQ(0, cft_revoke(&self->nl, self->rt.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "mmap r private"));
	REC("revoked", "fs:read", "/tmp/fsm/allowed/a", self->rt.cap_id);
}

/*
 * A directory moved out of a bind mount's tree by someone else, while the
 * agent holds it open: beneath that mount it has no name, and d_path()
 * would call it "/" and its own name (an outside round created and
 * removed files outside every grant under a token for "/output", on both
 * kernels and built in; here the rule refused "/y" by that wrong name). It
 * is unreachable.
 */
TEST_F(fsm, directory_escaped_from_its_mount_is_unreachable)
{
	struct capfence_token w;

	ASSERT_EQ(0, system("mkdir -p /tmp/fsm/vol/job/sub /tmp/fsm/vol/arch "
			    "/tmp/fsm/allowed/m"));
	ASSERT_EQ(0, mount("/tmp/fsm/vol/job", "/tmp/fsm/allowed/m", NULL,
			   MS_BIND, NULL));
	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "dir /tmp/fsm/allowed/m/sub"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "at x rc"));
	ASSERT_EQ(0, rename("/tmp/fsm/vol/job/sub", "/tmp/fsm/vol/arch/sub"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at y rc"));
	REC("bypass", "fs:write", "unreachable", 0);
	EXPECT_NE(0, access("/tmp/fsm/vol/arch/sub/y", F_OK));
	umount2("/tmp/fsm/allowed/m", MNT_DETACH);
}

/*
 * An ioctl reads or changes a file without read() or write() (XFS SWAPEXT
 * swaps a file's extents with another's, ext4 MOVE_EXT moves them; an
 * outside round used both after a revoke): every ioctl on a file opened
 * under a capability rechecks each grant the file holds.
 */
TEST_F(fsm, ioctl_on_a_revoked_file_refused)
{
	struct cft_reply r;
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fioctl"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fioctl32"));
	ASSERT_EQ(0, cft_revoke(&self->nl, w.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fioctl"));
	REC("revoked", "fs:write", "/tmp/fsm/allowed/a", w.cap_id);
	/* a 32-bit caller reaches file_ioctl_compat instead */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fioctl32"));
	REC("revoked", "fs:write", "/tmp/fsm/allowed/a", w.cap_id);
	/* the read grant too, on a file kept open for reading only */
	ASSERT_EQ(0, cft_agent_do(&self->agent, "fopen-ro /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "fioctl"));
	ASSERT_EQ(0, cft_revoke(&self->nl, self->rt.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "fioctl"));
	REC("revoked", "fs:read", "/tmp/fsm/allowed/a", self->rt.cap_id);
}

/*
 * ---- the open memo ----
 *
 * A credential remembers the last directory whose name admitted its
 * opens. Each test fills it with repeated opens beneath a kept directory
 * descriptor, then changes what the directory's name is, or what the
 * grant is, and opens beneath the same descriptor again: the memo must
 * not answer for the old name.
 */

/* fill the memo: the same open three times beneath the kept directory */
#define FILL(dir, file, flags)						\
	ASSERT_EQ(0, cft_agent_do(&self->agent, "dir " dir "; at " file " "	\
				  flags "; at " file " " flags "; at "	\
				  file " " flags))

TEST_F(fsm, memo_directory_renamed_away)
{
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	FILL("/tmp/fsm/allowed/dir0", "f", "wc");
	/* renamed out of the write rule by someone else (unbound root) */
	ASSERT_EQ(0, rename("/tmp/fsm/allowed/dir0", "/tmp/fsm/ro/dir0"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f w"));
	REC("constraint", "fs:write", "/tmp/fsm/ro/dir0/f", 0);
	/* and out of the read token's constraint */
	ASSERT_EQ(0, rename("/tmp/fsm/ro/dir0", "/tmp/fsm/allowed/dir0"));
	FILL("/tmp/fsm/allowed/dir0", "f", "r");
	ASSERT_EQ(0, rename("/tmp/fsm/allowed/dir0", "/tmp/fsm/secret/dir0"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/dir0/f", self->rt.cap_id);
	/* an ancestor's rename renames it too */
	ASSERT_EQ(0, rename("/tmp/fsm/secret/dir0", "/tmp/fsm/allowed/dir0"));
	FILL("/tmp/fsm/allowed/dir0", "f", "r");
	ASSERT_EQ(0, rename("/tmp/fsm/allowed", "/tmp/fsm/moved"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f r"));
	REC("constraint", "fs:read", "/tmp/fsm/moved/dir0/f", self->rt.cap_id);
}

TEST_F(fsm, memo_mount_moved_away)
{
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	ASSERT_EQ(0, mkdir("/tmp/fsm/allowed/m", 0777));
	ASSERT_EQ(0, mkdir("/tmp/fsm/ro/m", 0777));
	ASSERT_EQ(0, mount("none", "/tmp/fsm/allowed/m", "tmpfs", 0, "mode=0777"));
	FILL("/tmp/fsm/allowed/m", "f", "wc");
	/* the mount moved by someone else: same mount, same dentry */
	ASSERT_EQ(0, mount("/tmp/fsm/allowed/m", "/tmp/fsm/ro/m", NULL,
			   MS_MOVE, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f w"));
	REC("constraint", "fs:write", "/tmp/fsm/ro/m/f", 0);
	ASSERT_EQ(0, mount("/tmp/fsm/ro/m", "/tmp/fsm/allowed/m", NULL,
			   MS_MOVE, NULL));
	FILL("/tmp/fsm/allowed/m", "f", "w");
	/* detached: it has no name from the task's root any more */
	ASSERT_EQ(0, umount2("/tmp/fsm/allowed/m", MNT_DETACH));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f w"));
	REC("bypass", "fs:write", "unreachable", 0);
}

/* the test-only module that advances rename_lock's sequence */
#define SEQWRAP_KO	"/usr/lib/capfence-test/seqwrap.ko"
#define SEQWRAP_PARAM	"/sys/module/seqwrap/parameters/renames"

/* 0 once it is loaded, -ENOENT when this guest has none, else -errno */
static int seqwrap_load(void)
{
	int fd, r;

	if (!access(SEQWRAP_PARAM, F_OK))
		return 0;
	fd = open(SEQWRAP_KO, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	r = (int)syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return r;
}

/* rename_lock's sequence, or -1 */
static long long rename_seq(void)
{
	unsigned int v;
	FILE *f = fopen(SEQWRAP_PARAM, "r");
	int n = f ? fscanf(f, "%u", &v) : 0;

	if (f)
		fclose(f);
	return n == 1 ? (long long)v : -1;
}

/* as many renames as bring the sequence back to @to (it wraps at 2^32) */
static int rename_seq_wrap_to(unsigned int to)
{
	long long cur = rename_seq();
	unsigned int n;
	FILE *f;

	if (cur < 0)
		return -1;
	n = (to - (unsigned int)cur) / 2;
	if (!n)
		return 0;
	f = fopen(SEQWRAP_PARAM, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", n);
	return fclose(f) ? -1 : 0;
}

/*
 * rename_lock's sequence is 32 bits: 2^31 renames bring it back to the
 * value the memo remembered. The module stands in for them (they would take
 * most of an hour); a memo is used only for a second after it was filled.
 */
TEST_F(fsm, memo_rename_seq_wrap)
{
	long long s0;
	int r = seqwrap_load();

	if (r == -ENOENT)
		SKIP(return, "no " SEQWRAP_KO " in this guest");
	ASSERT_EQ(0, r);
	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	s0 = rename_seq();
	ASSERT_LE(0, s0);
	FILL("/tmp/fsm/allowed/dir0", "f", "r");
	ASSERT_EQ(0, rename("/tmp/fsm/allowed/dir0", "/tmp/fsm/secret/dir0"));
	put_file("/tmp/fsm/secret/dir0/s", "SECRET\n", 0644);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at s r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/dir0/s", self->rt.cap_id);
	/* a second later, and 2^31 renames later */
	usleep(1100 * 1000);
	ASSERT_EQ(0, rename_seq_wrap_to((unsigned int)s0));
	ASSERT_EQ(s0, rename_seq());
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at s r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/dir0/s", self->rt.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "xread /tmp/fsm/secret/dir0/s"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/dir0/s", self->rt.cap_id);
}

TEST_F(fsm, memo_revoked_grant)
{
	struct cft_reply r;
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	FILL("/tmp/fsm/allowed/dir0", "f", "wc");
	ASSERT_EQ(0, cft_revoke(&self->nl, w.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f w"));
	REC("revoked", "fs:write", "/tmp/fsm/allowed/dir0/f", w.cap_id);
	/* reading was admitted by another grant, still valid */
	EXPECT_EQ(0, cft_agent_do(&self->agent, "at f r"));
}

TEST_F(fsm, memo_each_class_judged)
{
	/* reads fill the memo; a write beneath the same directory is judged */
	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	FILL("/tmp/fsm/allowed/dir0", "f", "r");
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f w"));
	REC("no_capability", "fs:write", "/tmp/fsm/allowed/dir0/f", 0);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f rt"));
	REC("no_capability", "fs:write", "/tmp/fsm/allowed/dir0/f", 0);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "at f 3"));
	REC("no_capability", "fs:write", "/tmp/fsm/allowed/dir0/f", 0);
	EXPECT_EQ(2, size_of("/tmp/fsm/allowed/dir0/f"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "at f r"));
}

/* the open memo's counters now */
static void memo_counts(struct __test_metadata *_metadata,
			FIXTURE_DATA(fsm) *self, uint64_t *hit, uint64_t *miss)
{
	ASSERT_EQ(0, cft_nl_stat(&self->nl, CAPFENCE_STATS_A_OPEN_MEMO_HIT, hit));
	ASSERT_EQ(0, cft_nl_stat(&self->nl, CAPFENCE_STATS_A_OPEN_MEMO_MISS, miss));
}

/*
 * The agent opens @dir/d<i>/f for i < @n in turn (n = 0: @dir/f) for @ms
 * milliseconds; *hit and *named are how many of those opens the open memo
 * answered and how many it left to be judged by name.
 */
static void memo_rotopen(struct __test_metadata *_metadata,
			 FIXTURE_DATA(fsm) *self, int ms, const char *dir, int n,
			 uint64_t *hit, uint64_t *named)
{
	uint64_t h0, m0, h1, m1;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rotopen %d r %s %d", ms, dir, n);
	memo_counts(_metadata, self, &h0, &m0);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "%s", cmd));
	memo_counts(_metadata, self, &h1, &m1);
	*hit = h1 - h0;
	*named = m1 - m0;
	TH_LOG("%d ms of opens in %s (%d directories): %llu answered by the memo, %llu named",
	       ms, dir, n, (unsigned long long)*hit, (unsigned long long)*named);
}

/* mkdir @n directories @dir/d<i>, each with a file f */
static int make_dirs(const char *dir, int n)
{
	char p[96];
	int i;

	if (mkdir(dir, 0777))
		return -1;
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/d%d", dir, i);
		if (mkdir(p, 0777))
			return -1;
		snprintf(p, sizeof(p), "%s/d%d/f", dir, i);
		put_file(p, "f\n", 0666);
	}
	return 0;
}


/*
 * A long-running task: 3.5 s of opens in one directory, well past an
 * entry's one-second lifetime, are answered by the memo but for the first
 * and about one renewal a second; after that long, a rename still makes
 * the next open be judged by name.
 */
TEST_F(fsm, memo_answers_in_the_steady_state)
{
	uint64_t hit, named;

	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	memo_rotopen(_metadata, self, 3500, "/tmp/fsm/allowed/dir0", 0, &hit, &named);
	/* the first open, then a renewal a second */
	EXPECT_LE(named, 8);
	EXPECT_GE(hit, 20 * named);
	ASSERT_EQ(0, rename("/tmp/fsm/allowed/dir0", "/tmp/fsm/secret/dir0"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent,
				       "xopen /tmp/fsm/secret/dir0/f r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/dir0/f", self->rt.cap_id);
}

/*
 * Opens in eight directories in turn stay on the memo; one of them
 * renamed out of the grant is judged by its new name, and the others are
 * judged again and still allowed.
 */
TEST_F(fsm, memo_answers_a_rotation_of_directories)
{
	uint64_t hit, named;

	ASSERT_EQ(0, make_dirs("/tmp/fsm/allowed/rot", 8));
	memo_rotopen(_metadata, self, 2500, "/tmp/fsm/allowed/rot", 8, &hit, &named);
	/* one subtree for all eight: its first open and a renewal a second */
	EXPECT_LE(named, 8);
	EXPECT_GE(hit, 20 * named);
	ASSERT_EQ(0, rename("/tmp/fsm/allowed/rot/d3", "/tmp/fsm/secret/d3"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "xopen /tmp/fsm/secret/d3/f r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/d3/f", self->rt.cap_id);
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "rotopen 200 r /tmp/fsm/allowed/rot 3"));
}

/*
 * An entry stands for the subtree its grant and rule admit whole: opens in
 * a hundred directories never opened before are answered without naming
 * them; and the subtree is the one the admitting constraint names, not the
 * shallowest constraint of the token (FSM_READ also admits /etc, /usr ...):
 * /tmp/fsm/secret stays outside it.
 */
TEST_F(fsm, memo_answers_new_directories_beneath_a_subtree)
{
	uint64_t hit, named;

	ASSERT_EQ(0, make_dirs("/tmp/fsm/allowed/new", 100));
	memo_rotopen(_metadata, self, 1500, "/tmp/fsm/allowed/new", 100, &hit, &named);
	EXPECT_LE(named, 6);
	EXPECT_GE(hit, 20 * named);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "xread /tmp/fsm/secret/s"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/s", self->rt.cap_id);
}

/*
 * The subtree is the deeper of what the rule and the grant admit: with a
 * write grant for /tmp/fsm/allowed/dir0 under a rule for /tmp/fsm/allowed,
 * writes in dir0 leave dir0 in the memo, and a write beside it (inside the
 * rule, outside the grant) is judged and refused.
 */
TEST_F(fsm, memo_subtree_is_the_deeper_constraint)
{
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed/dir0", &w);
	FILL("/tmp/fsm/allowed/dir0", "f", "wc");
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "xopen /tmp/fsm/allowed/a w"));
	REC("constraint", "fs:write", "/tmp/fsm/allowed/a", w.cap_id);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "at f w"));
}

/*
 * io_uring's openat (inline and on a worker thread) goes through the same
 * file_open hook and the same memo: with the memo filled beneath
 * /tmp/fsm/allowed, a file beneath it is answered and one outside is
 * judged by name and refused.
 */
TEST_F(fsm, memo_io_uring_open)
{
	uint64_t hit, named;

	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	memo_rotopen(_metadata, self, 300, "/tmp/fsm/allowed/dir0", 0, &hit, &named);
	EXPECT_LT(0, hit);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "uring-open /tmp/fsm/allowed/dir0/f r"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "uring-open /tmp/fsm/allowed/dir0/f r async"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "uring-open /tmp/fsm/secret/s r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/s", self->rt.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "uring-open /tmp/fsm/secret/s r async"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/s", self->rt.cap_id);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "uring-open /tmp/fsm/ro/f w async"));
	REC("constraint", "fs:write", "/tmp/fsm/ro/f", 0);
}

/* open_memo=0: every open is named, none is answered by the memo */
TEST_F(fsm, memo_switched_off)
{
	uint64_t hit, named;

	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	ASSERT_EQ(0, write_param(OPEN_MEMO_PARAM, "0"));
	memo_rotopen(_metadata, self, 300, "/tmp/fsm/allowed/dir0", 0, &hit, &named);
	ASSERT_EQ(0, write_param(OPEN_MEMO_PARAM, "1"));
	EXPECT_EQ(0, hit);
	EXPECT_EQ(0, named);
	memo_rotopen(_metadata, self, 300, "/tmp/fsm/allowed/dir0", 0, &hit, &named);
	EXPECT_LT(0, hit);
}

/*
 * An entry is a directory on a mount: the same directory reached through
 * a bind mount outside the grant has another name and is judged by it.
 */
TEST_F(fsm, memo_same_directory_through_another_mount)
{
	put_file("/tmp/fsm/allowed/dir0/f", "f\n", 0666);
	ASSERT_EQ(0, mkdir("/tmp/fsm/secret/bm", 0755));
	ASSERT_EQ(0, mount("/tmp/fsm/allowed/dir0", "/tmp/fsm/secret/bm",
			   NULL, MS_BIND, NULL));
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "rotopen 300 r /tmp/fsm/allowed/dir0 0"));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "xopen /tmp/fsm/secret/bm/f r"));
	REC("constraint", "fs:read", "/tmp/fsm/secret/bm/f", self->rt.cap_id);
	EXPECT_EQ(0, umount2("/tmp/fsm/secret/bm", MNT_DETACH));
}

/* ---- what stays allowed ---- */

TEST_F(fsm, allowed_inside_the_grant)
{
	struct capfence_token w;

	give_write(_metadata, self, "/tmp/fsm/allowed", &w);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xopen /tmp/fsm/allowed/n wc"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xopen /tmp/fsm/allowed/n rt"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xopen /tmp/fsm/allowed/n 3"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xopen /tmp/fsm/allowed/n wa"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xopenat2 /tmp/fsm/allowed/n bt"));
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "rename /tmp/fsm/allowed/n /tmp/fsm/allowed/m"));
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "exchange /tmp/fsm/allowed/m /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "link /tmp/fsm/allowed/m /tmp/fsm/allowed/l"));
	EXPECT_EQ(0, cft_agent_do(&self->agent,
				  "symlink m /tmp/fsm/allowed/sl"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "xread /tmp/fsm/allowed/sl"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mkdir /tmp/fsm/allowed/d"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "rmdir /tmp/fsm/allowed/d"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "mkfifo /tmp/fsm/allowed/p"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "chmod /tmp/fsm/allowed/m"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "chown /tmp/fsm/allowed/m"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "truncate /tmp/fsm/allowed/m"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "unlink /tmp/fsm/allowed/l"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "unlink /tmp/fsm/allowed/m"));
	/* a new mount namespace is the same view: reading still works */
	AS(0, "as nobody-ns xread /tmp/fsm/allowed/a");
}

TEST_F(fsm, all_open_epoch_refuses_nothing)
{
	const char *rules[] = { "fs:read=open", "fs:write=open" };
	struct cft_agent b;
	uint64_t e2;
	int r;

	ASSERT_EQ(0, spawn(self, rules, 2, false, &b, &e2));
	EXPECT_EQ(0, cft_agent_do(&b, "xopen /tmp/fsm/secret/n rct"));
	EXPECT_EQ(0, cft_agent_do(&b, "xopen /tmp/fsm/ro/f 3"));
	EXPECT_EQ(0, cft_agent_do(&b, "rename /tmp/fsm/secret/s /tmp/fsm/allowed/s"));
	EXPECT_EQ(0, cft_agent_do(&b, "link /tmp/fsm/allowed/s /tmp/fsm/ro/l"));
	EXPECT_EQ(0, cft_agent_do(&b, "chmod /tmp/fsm/ro/f"));
	EXPECT_EQ(0, cft_agent_do(&b, "truncate /tmp/fsm/ro/f"));
	EXPECT_EQ(0, cft_agent_do(&b, "setxattr /tmp/fsm/ro/f"));
	EXPECT_EQ(0, cft_agent_do(&b, "removexattr /tmp/fsm/ro/f"));
	if (!mq_up()) {
		EXPECT_EQ(0, cft_agent_do(&b, "mq-create " MQ_NEW));
		EXPECT_EQ(0, cft_agent_do(&b, "mq-unlink " MQ_HELD));
		mq_down();
	}
	EXPECT_EQ(0, cft_agent_do(&b, "fopen /tmp/fsm/allowed/a"));
	EXPECT_EQ(0, cft_agent_do(&b, "mmap rw shared"));
	EXPECT_EQ(0, cft_agent_do(&b, "as root chroot /tmp/fsm/secret"));
	r = cft_agent_do(&b, "as nobody-ns bindmount /tmp/fsm/secret /tmp/fsm/allowed; "
			     "xread /tmp/fsm/allowed/tmp/fsm/allowed/s; "
			     "umount /tmp/fsm/allowed; "
			     "mount-tmpfs /tmp/fsm/allowed");
	EXPECT_TRUE(r == 0 || r == FSM_NOSETUP) TH_LOG("result %d", r);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/*
 * ---- exec: one exercise ----
 *
 * An execve is judged when it opens its executable and interpreter and
 * rechecked until begin_new_exec(); its own mappings of them are not
 * judged again. Each round gives the agent a fresh fs:read token for the
 * directory of the program (and, dynamically linked, of its interpreter),
 * has a child of the agent exec it and revokes the token at a delay that
 * sweeps the exec: the execve answers success or EACCES with its record,
 * never ENOEXEC, and no signal ends the child.
 */
#define EXR_ROUNDS	40
#define EXR_SWEEP	8	/* rounds that find where the exec is */

/* copy @src to @dst (mode 0755), the interpreter name @from made @to */
static int copy_prog(const char *src, const char *dst, const char *from,
		     const char *to)
{
	size_t len = 0, cap = 1 << 20, i, fl = from ? strlen(from) : 0;
	char *buf = malloc(cap);
	FILE *in = fopen(src, "rb"), *out;
	bool done = !from;
	size_t n;

	if (!buf || !in)
		return -1;
	while ((n = fread(buf + len, 1, cap - len, in)) > 0) {
		len += n;
		if (len == cap && !(buf = realloc(buf, cap *= 2)))
			return -1;
	}
	fclose(in);
	for (i = 0; !done && i + fl < len; i++) {
		if (!memcmp(buf + i, from, fl + 1)) {
			memset(buf + i, 0, fl);
			memcpy(buf + i, to, strlen(to));
			done = true;
		}
	}
	out = fopen(dst, "wb");
	if (!done || !out || fwrite(buf, 1, len, out) != len || fclose(out))
		return -1;
	free(buf);
	return chmod(dst, 0755);
}

/* a fresh fs:read token for @grant, held by the agent */
static void exr_give(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fsm) *self, const char *grant,
		     struct capfence_token *t)
{
	struct cft_reply r;

	ASSERT_EQ(0, cft_mint(self->key, "fs:read", self->e, grant, 0, t));
	ASSERT_EQ(0, cft_delegate(&self->nl, t, self->agent.pid, 0, false, &r))
		TH_LOG("%s", r.ext);
}

static void exr_sleep_until(uint64_t ns)
{
	uint64_t now = cft_now_ns();
	struct timespec ts;

	if (now >= ns)
		return;
	ts.tv_sec = (time_t)((ns - now) / 1000000000);
	ts.tv_nsec = (long)((ns - now) % 1000000000);
	nanosleep(&ts, NULL);
}

/* the record of the exec the agent's last child was refused */
static void exr_check_record(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fsm) *self, uint64_t cap_id,
			     const char *const *targets)
{
	char rec[2048], v[512], want_p[32], want_c[48];
	pid_t child = cft_agent_do(&self->agent, "lastchild");
	bool named = false;
	int i;

	snprintf(want_p, sizeof(want_p), "pid=%d ", child);
	snprintf(want_c, sizeof(want_c), "cap_id=%016llx",
		 (unsigned long long)cap_id);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", "reason=revoked",
				    "class=fs:read", want_p, want_c, NULL))
		TH_LOG("no record of the refused exec of %d", child);
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	/* refused before the point of no return: still the agent's name */
	EXPECT_STREQ("\"exe\"", cft_field(rec, "comm", v, sizeof(v)));
	cft_field(rec, "target", v, sizeof(v));
	for (i = 0; targets[i]; i++) {
		char q[160];

		snprintf(q, sizeof(q), "\"%s\"", targets[i]);
		named |= !strcmp(v, q);
	}
	EXPECT_TRUE(named) TH_LOG("target %s", v);
}

/*
 * Rounds of "exec @prog @arg" by the agent against revokes of fs:read on
 * @grant; @targets: the files a refusal may name. The revokes first sweep
 * a whole round, then close in on the delays between the last one that
 * refused the exec and the first one that let it run: a revoke there
 * lands inside the exec.
 */
static void exec_revoke_race(struct __test_metadata *_metadata,
			     FIXTURE_DATA(fsm) *self, const char *grant,
			     const char *prog, const char *arg,
			     const char *const *targets)
{
	int i, res, allowed = 0, ran_refused = 0, refused = 0, bad = 0;
	uint64_t t0, d, w, span = 0, lo = 0, hi;
	struct capfence_token t;
	long budget = cft_param_get("audit_budget");
	unsigned int rnd = 1;
	struct cft_reply r;
	char line[64];

	/*
	 * Every refused round is a record, and a slow exec under load makes
	 * most rounds refuse: more than a window's budget (32), whose
	 * suppressed records are not what this test is about.
	 */
	ASSERT_LT(0, budget);
	ASSERT_EQ(0, cft_param_set("audit_budget", 4 * EXR_ROUNDS));
	/* how long a whole round takes unrevoked */
	for (i = 0; i < 3; i++) {
		exr_give(_metadata, self, grant, &t);
		t0 = cft_now_ns();
		ASSERT_EQ(0, cft_agent_do(&self->agent, "exec %s %s", prog, arg));
		span += cft_now_ns() - t0;
		ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
	}
	span /= 3;
	hi = span;
	for (i = 0; i < EXR_ROUNDS; i++) {
		if (i < EXR_SWEEP) {
			d = span * (uint64_t)i / (EXR_SWEEP - 1) / 2;
		} else {
			/* anywhere in [lo, hi], and a quarter beyond each end */
			w = hi > lo + span / 16 ? hi - lo : span / 16;
			rnd = rnd * 1103515245 + 12345;
			d = lo + w * ((rnd >> 8) % 1501) / 1000;
			d = d > w / 4 ? d - w / 4 : 0;
		}
		exr_give(_metadata, self, grant, &t);
		t0 = cft_now_ns();
		ASSERT_LT(0, dprintf(self->agent.in, "exec %s %s\n", prog, arg));
		exr_sleep_until(t0 + d);
		ASSERT_EQ(0, cft_revoke(&self->nl, t.cap_id, &r));
		ASSERT_LT(0, cft_read_line(self->agent.out, line, sizeof(line),
					   20000));
		ASSERT_EQ(1, sscanf(line, "R %d", &res));
		/* success, or EACCES: never ENOEXEC, never a signal */
		if (res != 0 && res != FSM_EXEC_NONZERO && res != EACCES) {
			TH_LOG("round %d (revoke after %llu us): %s %d", i,
			       (unsigned long long)(d / 1000),
			       res >= 200 ? "signal" : "errno",
			       res >= 200 ? res - 200 : res);
			bad++;
		} else if (res == EACCES) {
			refused++;
			exr_check_record(_metadata, self, t.cap_id, targets);
			if (d > lo && d < hi)
				lo = d;
		} else {
			allowed++;
			ran_refused += res == FSM_EXEC_NONZERO;
			if (d < hi && d > lo)
				hi = d;
		}
	}
	TH_LOG("%d rounds: %d execs refused (EACCES, recorded), %d ran (%d exited non-zero), %d otherwise; round %llu us, exec between %llu and %llu us",
	       EXR_ROUNDS, refused, allowed, ran_refused, bad,
	       (unsigned long long)(span / 1000), (unsigned long long)(lo / 1000),
	       (unsigned long long)(hi / 1000));
	EXPECT_EQ(0, bad);
	/* both ends were reached: revoked before the exec, and after */
	EXPECT_LT(0, refused);
	EXPECT_LT(0, allowed);
	EXPECT_EQ(0, cft_param_set("audit_budget", budget));
}

/* a large static program: its executable's grant alone */
TEST_F_TIMEOUT(fsm, exec_revoke_race_static, 120)
{
	const char *targets[] = { "/tmp/fsx/s/busybox", NULL };

	ASSERT_EQ(0, system("rm -rf /tmp/fsx; mkdir -p /tmp/fsx/s"));
	ASSERT_EQ(0, copy_prog("/bin/busybox", "/tmp/fsx/s/busybox", NULL,
			       NULL));
	exec_revoke_race(_metadata, self, "/tmp/fsx/s", "/tmp/fsx/s/busybox",
			 "true", targets);
}

/*
 * A dynamically linked program whose interpreter is a copy beside it: the
 * grant revoked covers both; the program is this one as an agent with no
 * input, which answers nothing and exits 0.
 */
TEST_F_TIMEOUT(fsm, exec_revoke_race_interpreter, 120)
{
	const char *targets[] = { "/tmp/fsx/d/dyn", "/tmp/fsx/d/ld.so", NULL };

	ASSERT_EQ(0, system("rm -rf /tmp/fsx; mkdir -p /tmp/fsx/d"));
	ASSERT_EQ(0, copy_prog("/lib64/ld-linux-x86-64.so.2", "/tmp/fsx/d/ld.so",
			       NULL, NULL));
	ASSERT_EQ(0, copy_prog("/proc/self/exe", "/tmp/fsx/d/dyn",
			       "/lib64/ld-linux-x86-64.so.2", "/tmp/fsx/d/ld.so"));
	exec_revoke_race(_metadata, self, "/tmp/fsx/d", "/tmp/fsx/d/dyn",
			 "--agent", targets);
}

CFT_MAIN
