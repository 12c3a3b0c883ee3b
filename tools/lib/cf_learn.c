// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The learner: run a command bound to an epoch and collect what the module
 * recorded about its sandbox from the audit stream (the read-only
 * multicast group of the audit netlink socket, which needs CAP_AUDIT_READ
 * and takes nothing from auditd). Learning binds it to a fresh complain
 * epoch (every class log, or open where asked) and turns the op=learn
 * records into the narrowest epoch that admits them; verifying binds it
 * to a given epoch and keeps its denials.
 *
 * Nothing is lost silently: the module counts, per sandbox, the records
 * it wrote and the exercises it left without one (over the sandbox's
 * budget, over the host's ceiling, lost by the audit subsystem); the
 * learner reads those counts from the exited command (a zombie until the
 * learner has read them), waits for as many records as were written, and
 * reports what it did not see (the stream overflowed, or they did not
 * arrive in time).
 *
 * System calls (CAPFENCE_LEARN_SYSCALLS) are seen without the audit
 * stream: a filter loading SECCOMP_RET_LOG would write a kernel record
 * per call, outside every sandbox's budget. The child stacks a filter
 * answering SECCOMP_RET_USER_NOTIF for every call but the one sendmsg()
 * that hands its listener to the learner, which notes each call's
 * architecture and number and lets it through unchanged
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The learner serves it until the
 * command has exited and its records are in.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <json-c/json.h>
#include <seccomp.h>
#include "cf_internal.h"

#define CF_LEARN_WAIT_MS	5000
#define CF_LEARN_RCVBUF		(32 << 20)
/* system call numbers recorded, per architecture */
#define CF_LEARN_NR_MAX		1024
#define CF_X32_BIT		0x40000000u
/* the flags of the child's one sendmsg() its own filter lets through */
#define CF_LEARN_SEND_FLAGS	(MSG_NOSIGNAL | MSG_DONTWAIT | MSG_EOR)

enum { CF_ARCH_X86_64, CF_ARCH_X32, CF_ARCH_I386, CF_NR_ARCHES };

static const struct {
	uint32_t scmp;
	const char *name;
} cf_learn_arches[CF_NR_ARCHES] = {
	[CF_ARCH_X86_64] = { SCMP_ARCH_X86_64, "SCMP_ARCH_X86_64" },
	[CF_ARCH_X32] = { SCMP_ARCH_X32, "SCMP_ARCH_X32" },
	[CF_ARCH_I386] = { SCMP_ARCH_X86, "SCMP_ARCH_X86" },
};

struct capfence_learn {
	struct capfence_learn_stats st;
	char **rec;		/* the sandbox's records, in arrival order */
	size_t n, cap;
	char **note;
	size_t nnotes;
	uint32_t open;		/* classes left open while learning */
	bool syscalls;		/* calls were recorded */
	bool any_port;		/* CAPFENCE_LEARN_ANY_PORT */
	uint8_t prefix4, prefix6, path_depth;	/* coarser suggestions */
	uint64_t calls, calls_other;	/* calls seen; of no known arch/nr */
	uint8_t seen[CF_NR_ARCHES][CF_LEARN_NR_MAX];
};

/* the learner's side of the child's USER_NOTIF filter */
struct learn_sc {
	struct capfence_learn *l;
	int sock[2];		/* [0] the learner's end, [1] the child's */
	int listener;		/* -1 until the child has handed it over */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_sz, resp_sz;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int add_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	char **nv, *d = strdup(s);

	if (!d)
		return -ENOMEM;
	if (*n == *cap) {
		nv = realloc(*v, (*cap ? *cap * 2 : 64) * sizeof(*nv));
		if (!nv) {
			free(d);
			return -ENOMEM;
		}
		*v = nv;
		*cap = *cap ? *cap * 2 : 64;
	}
	(*v)[(*n)++] = d;
	return 0;
}

static __attribute__((format(printf, 2, 3)))
int add_note(struct capfence_learn *l, const char *fmt, ...)
{
	size_t cap = l->nnotes;	/* grown one at a time: notes are few */
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return add_str(&l->note, &l->nnotes, &cap, buf);
}

/*
 * The value of field key in record rec, into buf: quoted values unquoted,
 * hex-encoded ones (audit's escaping) decoded. NULL when absent.
 */
static const char *field(const char *rec, const char *key, char *buf,
			 size_t len)
{
	size_t klen = strlen(key), n = 0;
	const char *p = rec, *e;

	while ((p = strstr(p, key))) {
		if ((p == rec || p[-1] == ' ') && p[klen] == '=')
			break;
		p += klen;
	}
	if (!p)
		return NULL;
	p += klen + 1;
	if (*p == '"') {
		e = strchr(p + 1, '"');
		if (!e)
			return NULL;
		n = (size_t)(e - p - 1);
		if (n >= len)
			return NULL;
		memcpy(buf, p + 1, n);
		buf[n] = '\0';
		return buf;
	}
	e = p + strcspn(p, " ");
	n = (size_t)(e - p);
	if (n >= len)
		return NULL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* a hex-encoded audit string (even length, hex digits only), decoded */
static bool unhex(const char *s, char *out, size_t len)
{
	size_t n = strlen(s), i;

	if (!n || n % 2 || n / 2 >= len)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789ABCDEFabcdef", s[i]))
			return false;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		sscanf(s + 2 * i, "%2x", &b);
		out[i] = (char)b;
	}
	out[n / 2] = '\0';
	return true;
}

static int audit_open(char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	int fd, sz = CF_LEARN_RCVBUF, e;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_AUDIT);
	if (fd < 0) {
		e = errno;
		capfence__seterr(err, errlen, "cannot open the audit stream: %s",
				 strerror(e));
		return -e;
	}
	/* room for a flood: the stream's overflow is counted, not hidden */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		capfence__seterr(err, errlen,
				 "cannot read the audit stream (its multicast group needs CAP_AUDIT_READ): %s",
				 strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* every capfence record waiting on fd into l's list (all sandboxes) */
static int audit_drain(int fd, struct capfence_learn *l, char ***all,
		       size_t *nall, size_t *capall)
{
	char buf[9000], *text;
	ssize_t n;
	int ret;

	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t len;

		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			if (errno == ENOBUFS) {
				l->st.overflows++;
				continue;
			}
			if (errno == EINTR)
				continue;
			return 0;	/* EAGAIN: nothing more now */
		}
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != CAPFENCE_AUDIT_TYPE)
			continue;
		len = h->nlmsg_len > (size_t)n ? (size_t)n : h->nlmsg_len;
		if (len < NLMSG_HDRLEN)
			continue;
		buf[len] = '\0';
		/* the module's text, after the "audit(TIME:SERIAL): " stamp */
		text = strstr((char *)NLMSG_DATA(h), "lsm=capfence ");
		if (!text)
			continue;
		ret = add_str(all, nall, capall, text);
		if (ret)
			return ret;
	}
}

/* does record rec name sandbox id (and is it one of its own records)? */
static bool of_sandbox(const char *rec, uint64_t id)
{
	char v[32], op[32];

	if (!field(rec, "sandbox", v, sizeof(v)) ||
	    strtoull(v, NULL, 10) != id)
		return false;
	/* the module's report of records not written is not one of them */
	return !(field(rec, "op", op, sizeof(op)) && !strcmp(op, "suppressed"));
}

/*
 * Run path/argv bound to epoch_id with tokens, and collect its sandbox's
 * records into a new learner.
 */
/* In the child, before its execve: stack the filter, hand over its listener. */
static int sc_child(void *arg)
{
	struct learn_sc *x = arg;
	/*
	 * exit and exit_group pass too (every profile allows them): a child
	 * that lost its listener must still be able to die.
	 */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 9),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendmsg, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)x->sock[1], 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CF_LEARN_SEND_FLAGS, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	long fd;

	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return -errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &(int){ (int)fd }, sizeof(int));
	/*
	 * The listener is close-on-exec: the command never sees it. Without
	 * it nobody would answer this child's next call: it can only exit
	 * (the learner then sees no listener and fails the run).
	 */
	if (sendmsg(x->sock[1], &m, CF_LEARN_SEND_FLAGS) != 1)
		_exit(127);
	return 0;
}

/**
 * capfence__learn_note_call() - note one system call a learning run made
 * @l: the run
 * @arch: its AUDIT_ARCH_ (x32 is AUDIT_ARCH_X86_64 with the x32 bit)
 * @nr: its number
 */
void capfence__learn_note_call(struct capfence_learn *l, uint32_t arch, int nr)
{
	int a;

	l->calls++;
	if (arch == AUDIT_ARCH_X86_64 && ((uint32_t)nr & CF_X32_BIT)) {
		a = CF_ARCH_X32;
		nr = (int)((uint32_t)nr & ~CF_X32_BIT);
	} else if (arch == AUDIT_ARCH_X86_64) {
		a = CF_ARCH_X86_64;
	} else if (arch == AUDIT_ARCH_I386) {
		a = CF_ARCH_I386;
	} else {
		l->calls_other++;
		return;
	}
	if (nr < 0 || nr >= CF_LEARN_NR_MAX) {
		l->calls_other++;
		return;
	}
	l->seen[a][nr] = 1;
}

/* One notification: note the call, let it through as it is. */
static void sc_serve_one(struct learn_sc *x)
{
	memset(x->req, 0, x->req_sz);
	if (ioctl(x->listener, SECCOMP_IOCTL_NOTIF_RECV, x->req))
		return;		/* EINTR, or ENOENT: the task went */
	capfence__learn_note_call(x->l, x->req->data.arch, x->req->data.nr);
	memset(x->resp, 0, x->resp_sz);
	x->resp->id = x->req->id;
	x->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: the call was interrupted; it is asked again */
	ioctl(x->listener, SECCOMP_IOCTL_NOTIF_SEND, x->resp);
}

/* capfence__spawn_hooks.serve: the listener first, then its calls */
static void sc_serve(void *arg, int *fd)
{
	struct learn_sc *x = arg;
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (x->listener >= 0) {
		sc_serve_one(x);
		return;
	}
	if (recvmsg(x->sock[0], &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1) {
		if (errno != EAGAIN && errno != EINTR)
			*fd = -1;	/* the child went before it sent */
		return;
	}
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)) || (m.msg_flags & MSG_CTRUNC)) {
		if (cm && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int got;

			memcpy(&got, CMSG_DATA(cm), sizeof(int));
			close(got);
		}
		*fd = -1;
		return;
	}
	memcpy(&x->listener, CMSG_DATA(cm), sizeof(int));
	*fd = x->listener;
}

static int sc_init(struct learn_sc *x, struct capfence_learn *l, char *err,
		   size_t errlen)
{
	struct seccomp_notif_sizes sz;

	memset(x, 0, sizeof(*x));
	x->l = l;
	x->listener = -1;
	x->sock[0] = x->sock[1] = -1;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz)) {
		int e = errno;

		capfence__seterr(err, errlen, "cannot record system calls: seccomp notification sizes: %s",
				 strerror(e));
		return -e;
	}
	x->req_sz = sz.seccomp_notif > sizeof(*x->req) ? sz.seccomp_notif : sizeof(*x->req);
	x->resp_sz = sz.seccomp_notif_resp > sizeof(*x->resp) ?
		     sz.seccomp_notif_resp : sizeof(*x->resp);
	x->req = calloc(1, x->req_sz);
	x->resp = calloc(1, x->resp_sz);
	if (!x->req || !x->resp ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->sock)) {
		int e = x->req && x->resp ? errno : ENOMEM;

		capfence__seterr(err, errlen, "cannot record system calls: %s",
				 strerror(e));
		free(x->req);
		free(x->resp);
		return -e;
	}
	l->syscalls = true;
	return 0;
}

static void sc_fini(struct learn_sc *x)
{
	if (x->listener >= 0)
		close(x->listener);
	if (x->sock[0] >= 0)
		close(x->sock[0]);
	if (x->sock[1] >= 0)
		close(x->sock[1]);
	free(x->req);
	free(x->resp);
}

/*
 * Wait up to ms for the audit stream (afd) or a call of the command
 * (x's listener), serving every call that is waiting.
 */
static void learn_poll(int afd, struct learn_sc *x, int ms)
{
	struct pollfd p[2] = {
		{ .fd = afd, .events = POLLIN },
		{ .fd = x ? x->listener : -1, .events = POLLIN },
	};

	if (poll(p, 2, ms) <= 0)
		return;
	if (p[1].revents & POLLIN)
		sc_serve_one(x);
	else if (p[1].revents) {
		/* no task is left under the filter */
		close(x->listener);
		x->listener = -1;
	}
}

/* say which calls seen cannot be in the profile (and so answer ENOSYS) */
static int note_unnamed(struct capfence_learn *l)
{
	uint64_t unnamed = 0;
	char *nm;
	int a, nr;

	for (a = 0; a < CF_NR_ARCHES; a++) {
		for (nr = 0; nr < CF_LEARN_NR_MAX; nr++) {
			if (!l->seen[a][nr])
				continue;
			nm = seccomp_syscall_resolve_num_arch(cf_learn_arches[a].scmp,
							      a == CF_ARCH_X32 ?
							      (int)(nr | CF_X32_BIT) : nr);
			if (nm)
				free(nm);
			else
				unnamed++;
		}
	}
	if (!unnamed && !l->calls_other)
		return 0;
	return add_note(l, "%" PRIu64 " system calls seen have no name libseccomp knows, or another architecture: the profile leaves them out (they answer ENOSYS)",
			unnamed + l->calls_other);
}

static int learn_collect(struct capfence_client *c, uint64_t epoch_id,
			 const struct capfence_token *toks, size_t ntok,
			 const char *path, char *const argv[],
			 unsigned int wait_ms, bool syscalls,
			 struct capfence_learn **out, char *err, size_t errlen)
{
	struct learn_sc scx, *x = NULL;
	struct capfence__spawn_hooks hooks;
	struct capfence_sandbox_info sb;
	struct capfence_learn *l;
	struct capfence_result r;
	char **all = NULL, why[CAPFENCE_ERR_MAX] = "";
	size_t nall = 0, capall = 0, i, seen;
	siginfo_t si;
	int fd, ret, status = 0;
	long last;
	pid_t pid;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->st.epoch_id = epoch_id;
	fd = audit_open(err, errlen);
	if (fd < 0) {
		free(l);
		return fd;
	}
	if (syscalls) {
		ret = sc_init(&scx, l, err, errlen);
		if (ret) {
			close(fd);
			free(l);
			return ret;
		}
		x = &scx;
		hooks = (struct capfence__spawn_hooks){ .child = sc_child,
			.serve = sc_serve, .fd = x->sock[0], .arg = x };
	}
	ret = capfence__spawn_bound(c, epoch_id, toks, ntok, path, argv, NULL,
				    &pid, &r, x ? &hooks : NULL);
	if (x) {
		int unused = x->sock[0];

		close(x->sock[1]);
		x->sock[1] = -1;
		/* the listener was sent before the exec: it must be here */
		if (!ret && x->listener < 0)
			sc_serve(x, &unused);
		if (!ret && x->listener < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			capfence__seterr(err, errlen, "cannot record the system calls of %s: its listener did not arrive",
					 path);
			ret = -EIO;
			goto fail;
		}
	}
	if (ret) {
		if (r.message[0])
			capfence__seterr(err, errlen, "cannot run %s bound to epoch %" PRIu64 ": %s",
					 path, epoch_id, r.message);
		else
			capfence__seterr(err, errlen, "cannot run %s bound to epoch %" PRIu64 ": %s",
					 path, epoch_id, strerror(-ret));
		goto fail;
	}
	memset(&sb, 0, sizeof(sb));
	capfence_client_task_sandbox(c, (uint32_t)pid, &sb, why, sizeof(why));
	l->st.sandbox_id = sb.id;
	/* read while it runs: the socket's buffer is the only queue */
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid)
			break;
		learn_poll(fd, x, 50);
		ret = audit_drain(fd, l, &all, &nall, &capall);
		if (ret)
			goto reap;
	}
	/* exited, not reaped: its sandbox's final counts */
	memset(&sb, 0, sizeof(sb));
	if (capfence_client_task_sandbox(c, (uint32_t)pid, &sb, why,
					 sizeof(why)) || !sb.id) {
		l->st.counts_unknown = true;
	} else {
		l->st.sandbox_id = sb.id;
		l->st.records = sb.records;
		l->st.over_budget = sb.over_budget;
		l->st.over_ceiling = sb.over_ceiling;
		l->st.lost = sb.lost;
	}
	/* the records are written by a work item: wait for the last one */
	last = now_ms();
	for (;;) {
		ret = audit_drain(fd, l, &all, &nall, &capall);
		if (ret)
			goto reap;
		for (i = 0, seen = 0; l->st.sandbox_id && i < nall; i++)
			if (of_sandbox(all[i], l->st.sandbox_id))
				seen++;
		if (!l->st.counts_unknown && seen >= l->st.records)
			break;
		if (seen != l->st.received) {
			l->st.received = seen;
			last = now_ms();
		}
		if (now_ms() - last > (long)(wait_ms ? wait_ms : CF_LEARN_WAIT_MS))
			break;
		learn_poll(fd, x, 100);
	}
	ret = 0;
reap:
	/* out of memory mid-run: nobody would answer its calls any more */
	if (ret && x)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	l->st.status = status;
	for (i = 0, seen = 0; i < nall; i++) {
		char op[32];

		if (!ret && l->st.sandbox_id && of_sandbox(all[i], l->st.sandbox_id)) {
			size_t cap = l->cap;

			seen++;
			/* the bind record (an epoch with a profile) is no refusal */
			if (!field(all[i], "op", op, sizeof(op)) || strcmp(op, "bind"))
				ret = add_str(&l->rec, &l->n, &cap, all[i]);
			l->cap = cap;
			if (field(all[i], "op", op, sizeof(op)) && !strcmp(op, "learn"))
				l->st.learned++;
			else if (field(all[i], "op", op, sizeof(op)) &&
				 strcmp(op, "bind"))
				l->st.denied++;
		}
		free(all[i]);
	}
	free(all);
	l->st.received = seen;
	if (!l->st.counts_unknown && l->st.records > seen)
		l->st.missing = l->st.records - seen;
	close(fd);
	if (x) {
		sc_fini(x);
		if (!ret)
			ret = note_unnamed(l);
	}
	if (ret) {
		capfence__seterr(err, errlen, "out of memory");
		capfence_client_learn_free(l);
		return ret;
	}
	*out = l;
	return 0;
fail:
	if (x)
		sc_fini(x);
	close(fd);
	free(l);
	return ret;
}

int capfence_client_learn_run(struct capfence_client *c,
			      const struct capfence_learn_opts *o,
			      const char *path, char *const argv[],
			      struct capfence_learn **out, char *err,
			      size_t errlen)
{
	struct capfence_learn_opts lo;
	struct capfence_status st;
	struct capfence_epoch e;
	char why[CAPFENCE_ERR_MAX];
	uint64_t id;
	int cls, ret, rr, tries;

	*out = NULL;
	/* 1.6's layout ends at wait_ms: its tail padding is reserved, ignored */
	ret = CF_OPTS(o, &lo, path_depth, "learn options", err, errlen);
	if (ret)
		return ret;
	id = lo.epoch_id;
	if (lo.flags & ~(CAPFENCE_LEARN_SYSCALLS | CAPFENCE_LEARN_ANY_PORT)) {
		capfence__seterr(err, errlen, "unknown learn flags 0x%x", lo.flags);
		return -EINVAL;
	}
	if (lo.prefix4 > 32 || lo.prefix6 > 128) {
		capfence__seterr(err, errlen, "a prefix length past the address (IPv4 1-32, IPv6 1-128)");
		return -EINVAL;
	}
	if (!id) {
		ret = capfence_client_status(c, &st, err, errlen);
		if (ret)
			return ret;
		id = st.max_epoch + 1;
	}
	capfence__epoch_init(&e, id);
	for (cls = CAPFENCE_CLASS_NONE + 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		e.rules[cls].class_id = (uint8_t)cls;
		e.rules[cls].kind = (lo.open_classes & (1u << cls)) ? CAPFENCE_RULE_OPEN :
				    CAPFENCE_RULE_LOG;
	}
	ret = capfence_client_epoch_install_opts(c, &e, NULL, err, errlen);
	if (ret)
		return ret;
	ret = learn_collect(c, id, NULL, 0, path, argv, lo.wait_ms,
			    lo.flags & CAPFENCE_LEARN_SYSCALLS, out, err, errlen);
	if (*out) {
		(*out)->open = lo.open_classes;
		(*out)->any_port = lo.flags & CAPFENCE_LEARN_ANY_PORT;
		(*out)->prefix4 = lo.prefix4;
		(*out)->prefix6 = lo.prefix6;
		(*out)->path_depth = lo.path_depth;
	}
	/*
	 * A learning epoch is not kept: retired once nothing names it. The
	 * module itself waits up to 0.5 s for the reaped command's state to
	 * go; a few more tries cover a loaded host, not a descendant the
	 * command left running (that one is the note's case).
	 */
	for (tries = 0; tries < 4; tries++) {
		rr = capfence_client_epoch_retire_opts(c, id, NULL, why, sizeof(why));
		if (rr != -EBUSY)
			break;
		usleep(50000);
	}
	if (rr && *out)
		add_note(*out, "complain epoch %" PRIu64 " is still in use (%s): retire it later with capfence epoch retire %" PRIu64,
			 id, why, id);
	return ret;
}

int capfence_client_learn_verify_opts(struct capfence_client *c,
				      uint64_t epoch_id, const char *path,
				      char *const argv[],
				      const struct capfence_bind_opts *opts,
				      struct capfence_learn **out, char *err,
				      size_t errlen)
{
	struct capfence_bind_opts o;
	int ret;

	*out = NULL;
	ret = CF_OPTS(opts, &o, wait_ms, "options", err, errlen);
	if (ret)
		return ret;
	if (o.envp) {
		capfence__seterr(err, errlen, "options: envp is a spawn option");
		return -EINVAL;
	}
	return learn_collect(c, epoch_id, o.tokens, o.n, path, argv, o.wait_ms,
			     false, out, err, errlen);
}

/* An empty run, recording system calls or not, classes open (unit tests). */
struct capfence_learn *capfence__learn_alloc(bool syscalls, uint32_t open)
{
	struct capfence_learn *l = calloc(1, sizeof(*l));

	if (l) {
		l->syscalls = syscalls;
		l->open = open;
	}
	return l;
}

size_t capfence_client_learn_syscalls(const struct capfence_learn *l)
{
	size_t n = 0;
	int a, nr;

	for (a = 0; a < CF_NR_ARCHES; a++)
		for (nr = 0; nr < CF_LEARN_NR_MAX; nr++)
			n += l->seen[a][nr];
	return n;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sort names[*n], dropping repeats */
static int names_sort_unique(char **names, size_t *n)
{
	size_t i, k;

	if (!*n)
		return 0;
	qsort(names, *n, sizeof(*names), name_cmp);
	for (i = 1, k = 1; i < *n; i++) {
		if (strcmp(names[i], names[k - 1]))
			names[k++] = names[i];
		else
			free(names[i]);
	}
	*n = k;
	return 0;
}

/* the names of every call seen into *names[*n] (room *cap) */
static int seen_names(const struct capfence_learn *l, char ***names,
		      size_t *n, size_t *cap)
{
	int a, nr, ret = 0;
	char *nm;

	*names = NULL;
	*n = 0;
	*cap = 0;
	for (a = 0; a < CF_NR_ARCHES && !ret; a++) {
		for (nr = 0; nr < CF_LEARN_NR_MAX && !ret; nr++) {
			if (!l->seen[a][nr])
				continue;
			nm = seccomp_syscall_resolve_num_arch(cf_learn_arches[a].scmp,
							      a == CF_ARCH_X32 ?
							      (int)(nr | CF_X32_BIT) : nr);
			if (!nm)
				continue;	/* a number libseccomp does not know */
			ret = add_str(names, n, cap, nm);
			free(nm);
		}
	}
	return ret;
}

/*
 * The classes the learned epoch can grant: those left open and those with
 * an op=learn record. Their calls are in the profile whether the run made
 * them or not: an epoch's profile may not deny a call a class it grants
 * needs (cf_seccomp.c, check_classes()).
 */
static uint32_t classes_used(const struct capfence_learn *l)
{
	char op[16], cls[32];
	uint32_t used = l->open;
	size_t i;
	int c;

	for (i = 0; i < l->n; i++) {
		if (!field(l->rec[i], "op", op, sizeof(op)) || strcmp(op, "learn") ||
		    !field(l->rec[i], "class", cls, sizeof(cls)))
			continue;
		c = capfence_class_from_name(cls);
		if (c > 0 && c < 32)
			used |= 1u << c;
	}
	return used;
}

int capfence_client_learn_profile(const struct capfence_learn *l, char *buf,
				  size_t len)
{
	struct json_object *p = NULL, *arches = NULL, *rules = NULL, *rule = NULL,
			   *names = NULL;
	const char *const *sys;
	char **nm = NULL;
	const char *text;
	size_t n = 0, cap, i;
	uint32_t used;
	int a, nr, ret;

	if (!l->syscalls)
		return -ENODATA;
	ret = seen_names(l, &nm, &n, &cap);
	/* the recorder's filter lets these two pass unseen */
	if (!ret)
		ret = add_str(&nm, &n, &cap, "exit");
	if (!ret)
		ret = add_str(&nm, &n, &cap, "exit_group");
	used = classes_used(l);
	for (a = CAPFENCE_CLASS_NONE + 1; a <= CAPFENCE_CLASS_MAX; a++) {
		if (!(used & (1u << a)))
			continue;
		for (sys = capfence__class_syscalls(a); !ret && *sys; sys++)
			ret = add_str(&nm, &n, &cap, *sys);
	}
	if (!ret)
		ret = names_sort_unique(nm, &n);
	if (ret)
		goto out;
	p = json_object_new_object();
	arches = json_object_new_array();
	rules = json_object_new_array();
	rule = json_object_new_object();
	names = json_object_new_array();
	if (!p || !arches || !rules || !rule || !names) {
		ret = -ENOMEM;
		goto out;
	}
	/* every call not seen is "no such call": programs fall back */
	json_object_object_add(p, "defaultAction", json_object_new_string("SCMP_ACT_ERRNO"));
	json_object_object_add(p, "defaultErrnoRet", json_object_new_int(ENOSYS));
	for (a = 0; a < CF_NR_ARCHES; a++) {
		for (nr = 0; nr < CF_LEARN_NR_MAX && !l->seen[a][nr]; nr++)
			;
		if (a == CF_ARCH_X86_64 || nr < CF_LEARN_NR_MAX)
			json_object_array_add(arches, json_object_new_string(cf_learn_arches[a].name));
	}
	json_object_object_add(p, "architectures", arches);
	arches = NULL;
	for (i = 0; i < n; i++)
		json_object_array_add(names, json_object_new_string(nm[i]));
	json_object_object_add(rule, "names", names);
	names = NULL;
	json_object_object_add(rule, "action", json_object_new_string("SCMP_ACT_ALLOW"));
	json_object_array_add(rules, rule);
	rule = NULL;
	json_object_object_add(p, "syscalls", rules);
	rules = NULL;
	text = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	ret = snprintf(buf, len, "%s\n", text);
out:
	json_object_put(p);
	json_object_put(arches);
	json_object_put(rules);
	json_object_put(rule);
	json_object_put(names);
	for (i = 0; i < n; i++)
		free(nm[i]);
	free(nm);
	return ret;
}

void capfence_client_learn_stats(const struct capfence_learn *l,
				 struct capfence_learn_stats *st)
{
	*st = l->st;
}

size_t capfence_client_learn_records(const struct capfence_learn *l)
{
	return l->n;
}

const char *capfence_client_learn_record(const struct capfence_learn *l,
					 size_t i)
{
	return i < l->n ? l->rec[i] : NULL;
}

size_t capfence_client_learn_notes(const struct capfence_learn *l)
{
	return l->nnotes;
}

const char *capfence_client_learn_note(const struct capfence_learn *l,
				       size_t i)
{
	return i < l->nnotes ? l->note[i] : NULL;
}

void capfence_client_learn_free(struct capfence_learn *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		free(l->rec[i]);
	for (i = 0; i < l->nnotes; i++)
		free(l->note[i]);
	free(l->rec);
	free(l->note);
	free(l);
}

/* ---- the suggestion ------------------------------------------------------ */

/* the deepest common directory of a and b ("/" at worst) into a */
static void common_dir(char *a, const char *b)
{
	size_t i = 0, cut = 1;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			cut = i ? i : 1;
		i++;
	}
	/* a whole component in common: a is b's ancestor, or they are equal */
	if ((!a[i] && (b[i] == '/' || !b[i])) || (!b[i] && a[i] == '/'))
		cut = i;
	a[cut] = '\0';
}

/* is path p beneath or at dir d (component-wise)? */
static bool beneath(const char *p, const char *d)
{
	size_t n = strlen(d);

	if (!strcmp(d, "/"))
		return true;
	return !strncmp(p, d, n) && (p[n] == '/' || !p[n]);
}

/* the directories that admit every path in p[n], at most max of them */
static size_t paths_generalize(char (*p)[CAPFENCE_PATH_MAX + 1], size_t n,
			       size_t max)
{
	size_t i, j, k, bi = 0, bj = 0, best;
	char tmp[CAPFENCE_PATH_MAX + 1];

	for (;;) {
		/* drop what another entry admits already */
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				if (i != j && beneath(p[i], p[j])) {
					memmove(p[i], p[n - 1], sizeof(p[0]));
					n--;
					i = (size_t)-1;
					break;
				}
		if (n <= max)
			return n;
		/* merge the two with the deepest common directory */
		best = 0;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++) {
				memcpy(tmp, p[i], sizeof(tmp));
				common_dir(tmp, p[j]);
				k = strlen(tmp);
				if (k >= best) {
					best = k;
					bi = i;
					bj = j;
				}
			}
		common_dir(p[bi], p[bj]);
	}
}

/*
 * The directory a file was seen in: the path itself for a directory; with
 * depth, no deeper than its first depth names.
 */
static void seen_dir(const char *path, unsigned int depth, char *out)
{
	unsigned int names = 0;
	struct stat s;
	char *slash;

	snprintf(out, CAPFENCE_PATH_MAX + 1, "%s", path);
	if (stat(path, &s) || !S_ISDIR(s.st_mode)) {
		slash = strrchr(out, '/');
		if (slash == out)
			out[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	for (slash = out; depth && *slash; slash++) {
		if (*slash == '/' && slash != out && ++names == depth) {
			*slash = '\0';
			break;
		}
	}
}

/* host (text) as its /prefix network, in place; false if not an address */
static bool mask_host(char *host, size_t len, int af, unsigned int prefix)
{
	unsigned char a[16];
	unsigned int i, bits = af == AF_INET ? 32 : 128;

	if (inet_pton(af, host, a) != 1)
		return false;
	for (i = prefix; i < bits; i++)
		a[i / 8] &= (unsigned char)~(0x80u >> (i % 8));
	return inet_ntop(af, a, host, (socklen_t)len) != NULL;
}

/*
 * "a.b.c.d:P", "[v6]:P" or "cid:C:P" into a constraint's text: the host,
 * or its network as l says, and the port unless l says any port.
 */
static int peer_constraint(const struct capfence_learn *l, const char *target,
			   bool bind, char *out, size_t len)
{
	const char *colon = strrchr(target, ':');
	unsigned int p4 = l->prefix4 ? l->prefix4 : 32;
	unsigned int p6 = l->prefix6 ? l->prefix6 : 128;
	unsigned long port;
	char host[64];

	if (!colon || (size_t)(colon - target) >= sizeof(host))
		return -EINVAL;
	port = strtoul(colon + 1, NULL, 10);
	memcpy(host, target, (size_t)(colon - target));
	host[colon - target] = '\0';
	if (l->any_port) {
		bind = true;
		port = 0;
	}
	if (!strncmp(target, "cid:", 4)) {
		/* a peer port above 65535 is admitted only by any port */
		if (port > 65535 || !port)
			snprintf(out, len, "%s", host);
		else
			snprintf(out, len, "%s:%lu", host, port);
		return 0;
	}
	/* port 0 (a bind that picks one) is admitted only by any port */
	if (host[0] == '[') {
		host[strlen(host) - 1] = '\0';
		if (!mask_host(host + 1, sizeof(host) - 1, AF_INET6, p6))
			return -EINVAL;
		if (bind && !port)
			snprintf(out, len, "[%s]/%u", host + 1, p6);
		else
			snprintf(out, len, "[%s]/%u:%lu", host + 1, p6, port);
	} else {
		if (!mask_host(host, sizeof(host), AF_INET, p4))
			return -EINVAL;
		if (bind && !port)
			snprintf(out, len, "%s/%u", host, p4);
		else
			snprintf(out, len, "%s/%u:%lu", host, p4, port);
	}
	return 0;
}

int capfence_client_learn_epoch(struct capfence_learn *l, uint64_t epoch_id,
				struct capfence_epoch *out, char *err,
				size_t errlen)
{
	char (*p)[CAPFENCE_PATH_MAX + 1];
	char cls_name[32], tgt[2 * CAPFENCE_PATH_MAX + 3], dec[CAPFENCE_PATH_MAX + 1];
	char peers[CAPFENCE_MAX_CONSTRAINTS + 1][96], text[96];
	size_t i, n, np, k;
	int cls, ret;

	capfence__epoch_init(out, epoch_id);
	p = calloc(256, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (cls = CAPFENCE_CLASS_NONE + 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		struct capfence_rule *r = &out->rules[cls];
		bool net = capfence_class_is_net(cls), too_many = false;

		r->class_id = (uint8_t)cls;
		r->kind = CAPFENCE_RULE_DENY;
		/* open while learning, nothing seen of it: open */
		if (l->open & (1u << cls)) {
			r->kind = CAPFENCE_RULE_OPEN;
			continue;
		}
		n = np = 0;
		for (i = 0; i < l->n; i++) {
			char op[16];
			const char *t;

			if (!field(l->rec[i], "op", op, sizeof(op)) ||
			    strcmp(op, "learn") ||
			    !field(l->rec[i], "class", cls_name, sizeof(cls_name)) ||
			    capfence_class_from_name(cls_name) != cls ||
			    !(t = field(l->rec[i], "target", tgt, sizeof(tgt))))
				continue;
			if (!net) {
				/* a quoted path is plain; otherwise hex */
				if (t[0] != '/' && unhex(t, dec, sizeof(dec)))
					t = dec;
				if (t[0] != '/' || strlen(t) > CAPFENCE_PATH_MAX)
					continue;
				if (n == 256) {
					/* merge as we go: room for more */
					n = paths_generalize(p, n, 128);
				}
				seen_dir(t, l->path_depth, p[n++]);
				continue;
			}
			ret = peer_constraint(l, t, cls == CAPFENCE_CLASS_NET_BIND,
					      text, sizeof(text));
			if (ret)
				continue;
			for (k = 0; k < np; k++)
				if (!strcmp(peers[k], text))
					break;
			if (k < np)
				continue;
			if (np == CAPFENCE_MAX_CONSTRAINTS) {
				too_many = true;
				continue;
			}
			snprintf(peers[np++], sizeof(peers[0]), "%s", text);
		}
		if (too_many) {
			add_note(l, "%s: more than %d distinct peers; the class is left deny (write its rule by hand)",
				 capfence_class_name(cls), CAPFENCE_MAX_CONSTRAINTS);
			continue;
		}
		if (!net && n) {
			n = paths_generalize(p, n, CAPFENCE_MAX_CONSTRAINTS);
			for (k = 0; k < n; k++)
				if (!strcmp(p[k], "/"))
					add_note(l, "%s: the paths seen have no common directory but /: the rule admits every path",
						 capfence_class_name(cls));
		}
		if (!(net ? np : n))
			continue;
		r->kind = CAPFENCE_RULE_TOKEN;
		for (k = 0; k < (net ? np : n); k++) {
			ret = capfence_constraint_parse(net ? peers[k] : p[k],
							&r->constraints[r->n],
							err, errlen);
			if (ret) {
				free(p);
				return ret;
			}
			r->n++;
		}
	}
	free(p);
	if (l->st.missing || l->st.over_budget || l->st.over_ceiling ||
	    l->st.lost || l->st.overflows || l->st.counts_unknown)
		add_note(l, "incomplete: exercises without a record were seen (over budget %" PRIu64 ", over ceiling %" PRIu64 ", lost %" PRIu64 ", not received %" PRIu64 ", stream overflows %" PRIu64 "%s); the rules may admit too little: check them with capfence learn --verify",
			 l->st.over_budget, l->st.over_ceiling, l->st.lost,
			 l->st.missing, l->st.overflows,
			 l->st.counts_unknown ? ", the sandbox's counts unavailable" : "");
	return 0;
}
