// SPDX-License-Identifier: GPL-2.0
/*
 * What one sandbox can cost the others. A sandbox is what one EXEC_SET
 * binds: the agent and everything it forks, whatever credentials they
 * make.
 *
 * - Audit records: a sandbox that floods denials must not leave another
 *   sandbox's denial without its record, and every denial left without a
 *   record must be counted, for its sandbox, and reported in a record of
 *   its own (op=suppressed sandbox=ID), so that "no denial" and "denials
 *   not recorded" can be told apart.
 *
 * - Credentials: every credential of a bound task is an entry in the
 *   table every hook of every task may walk; one sandbox must not be able
 *   to make 300,000 of them (capset and io_uring personalities, as uid
 *   65534): past its limit a credential change fails with ENOMEM and an
 *   op=cred_limit record (keyctl's session-to-parent included), and
 *   other sandboxes are not affected.
 *
 * - Memory: what a bound task makes the module allocate for it (an entry
 *   per tracked socket) is charged to the task's memory cgroup, not left
 *   to the host.
 *
 * - io_uring personalities: a request under a personality runs as the
 *   credential that registered it. A ring of one sandbox taken by another
 *   (pidfd_getfd) must not let the taker act as the owner, spend its
 *   budget or exercise its grants: refused (the completion's EACCES) and
 *   recorded in the taker's own sandbox.
 *
 * Each attack asserts its errno, the records (reason, class, target, pid,
 * sandbox) and that no signal ended the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <liburing.h>
#include <linux/audit.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#define CFT_TEST_SECONDS 120
#include "harness.h"
#include "common.h"

#define SBX_SECRET	"/tmp/sbx/secret"
/* the libraries and the agent's own binary */
#define SBX_READ	"/lib,/lib64,/usr,/etc"

/* ---- agent side ---- */

/* @n opens of @path: 0 when every one was refused with EACCES */
static int flood(int n, const char *path)
{
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = open(path, O_RDONLY);
		if (fd >= 0) {
			close(fd);
			return 255;
		}
		if (errno != EACCES)
			return errno;
	}
	return 0;
}

static int creds_err;

/*
 * keyctl(KEYCTL_SESSION_TO_PARENT) makes a credential for the parent
 * through cred_alloc_blank and cred_transfer, not cred_prepare: a child
 * that joined a session keyring of its own (itself a new credential)
 * waits, and on "s2p-go" gives it to us.
 */
static pid_t s2p_child;
static int s2p_pipe = -1;

static int s2p_start(void)
{
	int p[2];
	char c;

	if (pipe(p))
		return errno;
	s2p_child = fork();
	if (s2p_child < 0)
		return errno;
	if (!s2p_child) {
		close(p[1]);
		if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0) < 0)
			_exit(100);
		if (read(p[0], &c, 1) != 1)
			_exit(101);
		_exit(syscall(SYS_keyctl, KEYCTL_SESSION_TO_PARENT) < 0 ? errno : 0);
	}
	close(p[0]);
	s2p_pipe = p[1];
	return 0;
}

static int s2p_go(void)
{
	int st;

	if (s2p_pipe < 0 || write(s2p_pipe, "x", 1) != 1 ||
	    waitpid(s2p_child, &st, 0) != s2p_child)
		return -1;
	close(s2p_pipe);
	s2p_pipe = -1;
	/* a transferred credential is installed on our return to user */
	getpid();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st);
}

/* connected UDP sockets the agent keeps open ("udp N PORT") */
static int udp_fd[1000];
static int udp_n;

static int udp_many(int n, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd, err;

	while (udp_n < n && udp_n < (int)(sizeof(udp_fd) / sizeof(udp_fd[0]))) {
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
			err = errno;
			close(fd);
			return err;
		}
		udp_fd[udp_n++] = fd;
	}
	return 0;
}

/* a listener, and the connections it accepted, kept open */
static int acc_lfd = -1, acc_fd[1024], acc_n;

static int tcp_listen_on(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1;

	acc_lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (acc_lfd < 0)
		return errno;
	setsockopt(acc_lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(acc_lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(acc_lfd, 1024))
		return errno;
	return 0;
}

static int tcp_accept_many(int n)
{
	int fd;

	while (acc_n < n && acc_n < (int)(sizeof(acc_fd) / sizeof(acc_fd[0]))) {
		fd = accept(acc_lfd, NULL, NULL);
		if (fd < 0)
			return errno;
		acc_fd[acc_n++] = fd;
	}
	return 0;
}

/*
 * io_uring personalities. A ring's personality ids start at 1; the ring
 * is also kept at UR_FD for a pidfd_getfd of it.
 */
#define UR_FD		100
static int ur_listen_fd = -1, ur_fd = -1;

static socklen_t ur_addr(const char *name, struct sockaddr_un *sun)
{
	size_t n = strnlen(name, sizeof(sun->sun_path) - 1);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	/* abstract: nothing on the filesystem for fs:write to judge */
	memcpy(sun->sun_path + 1, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* "ur-listen NAME": a datagram socket a ring is sent to */
static int ur_listen(const char *name)
{
	struct sockaddr_un sun;
	socklen_t len = ur_addr(name, &sun);

	ur_listen_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ur_listen_fd < 0)
		return errno;
	return bind(ur_listen_fd, (struct sockaddr *)&sun, len) ? errno : 0;
}

/* "ur-recv": the ring sent there (SCM_RIGHTS) becomes ur_fd */
static int ur_recv(void)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (recvmsg(ur_listen_fd, &m, MSG_CMSG_CLOEXEC) != 1)
		return errno ?: EIO;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return EPROTO;
	memcpy(&ur_fd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

/*
 * "ur-give NAME": a new ring with a personality of the calling task's
 * credential, kept at UR_FD (inherited across exec) and sent to NAME
 * ("-": to nobody)
 */
static int ur_give(const char *name)
{
	char c = 'r', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct io_uring_params p = { 0 };
	struct sockaddr_un sun;
	struct cmsghdr *cm;
	int fd, pers, s, err = 0;

	fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0)
		return errno;
	pers = (int)syscall(SYS_io_uring_register, fd, IORING_REGISTER_PERSONALITY,
			    NULL, 0);
	if (pers != 1) {
		close(fd);
		return pers < 0 ? errno : EPROTO;
	}
	if (dup2(fd, UR_FD) != UR_FD)
		err = errno;
	close(fd);
	if (err || !strcmp(name, "-"))
		return err;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno;
	m.msg_name = &sun;
	m.msg_namelen = ur_addr(name, &sun);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	fd = UR_FD;
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(s, &m, 0) != 1)
		err = errno;
	close(s);
	return err;
}

/* "ur-getfd PID": ring UR_FD of task PID, taken with pidfd_getfd */
static int ur_getfd(pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), err = 0;

	if (pfd < 0)
		return errno;
	ur_fd = (int)syscall(SYS_pidfd_getfd, pfd, UR_FD, 0);
	if (ur_fd < 0)
		err = errno;
	close(pfd);
	return err;
}

/*
 * "ur-use WHAT": through ring ur_fd under its personality 1, open WHAT
 * (a path) or connect to 127.0.0.1:WHAT (a port) with a socket of the
 * caller's; the errno of the completion (0: done). The ring's layout is
 * that of any ring of 4 entries: a ring of our own says where its parts
 * are.
 */
static int ur_use(const char *what)
{
	static struct sockaddr_in sin = { .sin_family = AF_INET };
	struct io_uring_params p = { 0 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int fd, err, sk = -1;

	fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0)
		return errno;
	close(fd);
	fd = dup(ur_fd);
	if (fd < 0)
		return errno;
	err = -io_uring_queue_mmap(fd, &p, &ring);
	if (err) {
		close(fd);
		return err;
	}
	/* go on from where the ring's last user left it */
	ring.sq.sqe_head = ring.sq.sqe_tail = *ring.sq.ktail;
	sqe = io_uring_get_sqe(&ring);
	if (what[0] >= '0' && what[0] <= '9') {
		sk = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sin.sin_port = htons((uint16_t)atoi(what));
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		io_uring_prep_connect(sqe, sk, (struct sockaddr *)&sin, sizeof(sin));
	} else {
		io_uring_prep_openat(sqe, AT_FDCWD, what, O_RDONLY | O_CLOEXEC, 0);
	}
	sqe->personality = 1;
	err = io_uring_submit(&ring) == 1 ? -io_uring_wait_cqe(&ring, &cqe) : EIO;
	if (!err) {
		if (cqe->res >= 0 && sk < 0)
			close(cqe->res);
		err = cqe->res < 0 ? -cqe->res : 0;
		io_uring_cqe_seen(&ring, cqe);
	}
	if (sk >= 0)
		close(sk);
	io_uring_queue_exit(&ring);
	return err;
}

int cft_agent_extra(char *cmd)
{
	char a[128];
	int n, fd, port;

	if (sscanf(cmd, "ur-listen %127s", a) == 1)
		return ur_listen(a);
	if (!strcmp(cmd, "ur-recv"))
		return ur_recv();
	if (sscanf(cmd, "ur-give %127s", a) == 1)
		return ur_give(a);
	if (sscanf(cmd, "ur-getfd %d", &n) == 1)
		return ur_getfd(n);
	if (sscanf(cmd, "ur-use %127s", a) == 1)
		return ur_use(a);
	/* the ring its launcher left open across the binding exec */
	if (sscanf(cmd, "ur-inherited %127s", a) == 1) {
		ur_fd = UR_FD;
		return ur_use(a);
	}
	/* a personality of its own, through a ring of its own */
	if (sscanf(cmd, "ur-self %127s", a) == 1) {
		n = ur_give("-");
		if (n)
			return n;
		ur_fd = UR_FD;
		return ur_use(a);
	}
	if (sscanf(cmd, "flood %d %127s", &n, a) == 2)
		return flood(n, a);
	if (sscanf(cmd, "udp %d %d", &n, &port) == 2)
		return udp_many(n, port);
	if (sscanf(cmd, "tlisten %d", &port) == 1)
		return tcp_listen_on(port);
	if (sscanf(cmd, "taccept %d", &n) == 1)
		return tcp_accept_many(n);
	/* credentials kept alive: how many were made, then why it stopped */
	if (sscanf(cmd, "creds %d", &n) == 1)
		return cft_creds_hold(n, &creds_err);
	if (!strcmp(cmd, "creds-err"))
		return creds_err;
	if (!strcmp(cmd, "creds-drop")) {
		cft_creds_drop();
		return 0;
	}
	if (!strcmp(cmd, "s2p-start"))
		return s2p_start();
	if (!strcmp(cmd, "s2p-go"))
		return s2p_go();
	if (sscanf(cmd, "xread %127s", a) == 1) {
		fd = open(a, O_RDONLY);
		if (fd < 0)
			return errno;
		close(fd);
		return 0;
	}
	return EINVAL;
}

/* ---- test side ---- */

/* The next capfence record within @timeout_ms: 0, or -ETIMEDOUT. */
static int audit_next(int fd, char *out, size_t len, int timeout_ms)
{
	uint64_t end = cft_now_ns() + (uint64_t)timeout_ms * 1000000;
	char buf[8192];

	while (cft_now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != CAPFENCE_AUDIT_TYPE)
			continue;
		buf[n] = '\0';
		n = (ssize_t)strnlen((const char *)NLMSG_DATA(h), len - 1);
		memcpy(out, NLMSG_DATA(h), (size_t)n);
		out[n] = '\0';
		return 0;
	}
	return -ETIMEDOUT;
}

static uint64_t field_u64(const char *rec, const char *key)
{
	char v[64];

	return strtoull(cft_field(rec, key, v, sizeof(v)), NULL, 10);
}

FIXTURE(sbx) {
	struct cft_nl nl;
	struct capfence_key *key;
	struct capfence_token rt;
	uint64_t e;
	int audit;
	long backlog;
	long budget, floor, ceiling, window;
	long cred_limit;	/* to put back at teardown, -1: untouched */
};

FIXTURE_SETUP(sbx)
{
	const char *rules[] = { "fs:read=token" };
	int fd;

	system("rm -rf /tmp/sbx");
	ASSERT_EQ(0, mkdir("/tmp/sbx", 0755));
	fd = open(SBX_SECRET, O_WRONLY | O_CREAT, 0644);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->budget = cft_param_get("audit_budget");
	self->floor = cft_param_get("audit_floor");
	self->ceiling = cft_param_get("audit_ceiling");
	self->window = cft_param_get("audit_window_ms");
	self->cred_limit = -1;
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	self->backlog = cft_audit_backlog(1 << 16);
	ASSERT_LE(0, self->backlog);
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->e, rules, 1, NULL, 0));
	ASSERT_EQ(0, cft_mint(self->key, "fs:read", self->e, SBX_READ, 0,
			      &self->rt));
}

FIXTURE_TEARDOWN(sbx)
{
	/* the defaults back, for the tests after this program */
	if (self->budget >= 0) {
		cft_param_set("audit_budget", self->budget);
		cft_param_set("audit_floor", self->floor);
		cft_param_set("audit_ceiling", self->ceiling);
		cft_param_set("audit_window_ms", self->window);
	}
	if (self->cred_limit >= 0)
		cft_param_set("cred_limit", self->cred_limit);
	if (self->backlog >= 0)
		cft_audit_backlog((uint32_t)self->backlog);
	cft_audit_close(self->audit);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

/* A bound agent of the fixture's epoch: its own sandbox. */
static int spawn(FIXTURE_DATA(sbx) *self, struct cft_agent *a,
		 struct capfence_sandbox_info *sb)
{
	char err[CAPFENCE_ERR_MAX];
	int r = cft_agent_spawn(a, self->e, &self->rt, 1, NULL);

	if (r)
		return r;
	return capfence_client_task_sandbox(self->nl.c, (uint32_t)a->pid, sb,
					    err, sizeof(err));
}

/* A's denials, recorded and reported, of one sandbox. */
struct tally {
	uint64_t sandbox;
	pid_t pid;
	uint64_t seen;		/* op=exercise records */
	uint64_t reported;	/* records= of its op=suppressed records */
	uint64_t budget, ceiling, lost;	/* and their parts */
	char report[2048];	/* its last report */
};

static void tally(struct tally *t, const char *rec)
{
	char want[64];

	snprintf(want, sizeof(want), "pid=%d ", t->pid);
	if (strstr(rec, "op=exercise") && strstr(rec, want)) {
		t->seen++;
		return;
	}
	snprintf(want, sizeof(want), "sandbox=%llu ",
		 (unsigned long long)t->sandbox);
	if (strstr(rec, "op=suppressed") && strstr(rec, want)) {
		t->reported += field_u64(rec, "records");
		t->budget += field_u64(rec, "budget");
		t->ceiling += field_u64(rec, "ceiling");
		t->lost += field_u64(rec, "lost");
		snprintf(t->report, sizeof(t->report), "%s", rec);
	}
}

/* the checks of a report record of @sb */
static void check_report(struct __test_metadata *_metadata, const char *rec,
			 const struct capfence_sandbox_info *sb)
{
	char v[64], want[64];

	ASSERT_NE(0, rec[0]) TH_LOG("no op=suppressed record for sandbox %llu",
				    (unsigned long long)sb->id);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	snprintf(want, sizeof(want), "%u", sb->pid);
	EXPECT_STREQ(want, cft_field(rec, "pid", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)sb->epoch_id);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	EXPECT_EQ(field_u64(rec, "records"),
		  field_u64(rec, "budget") + field_u64(rec, "ceiling") +
		  field_u64(rec, "lost"));
}

/* the checks of an exercise denial record of agent @pid in sandbox @sb */
static void check_denial(struct __test_metadata *_metadata, const char *rec,
			 pid_t pid, uint64_t epoch, uint64_t sb, uint64_t cap_id)
{
	char v[512], want[64];

	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ("exercise", cft_field(rec, "op", v, sizeof(v)));
	EXPECT_STREQ("constraint", cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	EXPECT_STREQ("fs:read", cft_field(rec, "class", v, sizeof(v)));
	EXPECT_STREQ("\"" SBX_SECRET "\"", cft_field(rec, "target", v, sizeof(v)));
	EXPECT_STREQ("\"exe\"", cft_field(rec, "comm", v, sizeof(v)));
	snprintf(want, sizeof(want), "%d", pid);
	EXPECT_STREQ(want, cft_field(rec, "pid", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)sb);
	EXPECT_STREQ(want, cft_field(rec, "sandbox", v, sizeof(v)));
	snprintf(want, sizeof(want), "%016llx", (unsigned long long)cap_id);
	EXPECT_STREQ(want, cft_field(rec, "cap_id", v, sizeof(v)));
}

#define FLOOD 3000

/*
 * The review's attack: one sandbox makes 3,000 denied opens; another
 * sandbox's next denial, under the same epoch, must still have its record.
 * Every denial of the first is either recorded or counted and reported:
 * its records seen plus its reports' counts are exactly 3,000, and its
 * sandbox's counters say the same.
 */
TEST_F(sbx, flood_leaves_other_sandboxes_their_records)
{
	struct capfence_sandbox_info sa, sb, host0, host1;
	struct tally ta = {};
	char rec[2048], brec[2048] = "", want[64], err[CAPFENCE_ERR_MAX];
	struct cft_agent a, b;
	uint64_t end;

	ASSERT_EQ(0, spawn(self, &a, &sa));
	ASSERT_EQ(0, spawn(self, &b, &sb));
	ASSERT_EQ(0, capfence_client_sandbox_status(self->nl.c, &host0, err,
						    sizeof(err)));
	ta.sandbox = sa.id;
	ta.pid = a.pid;
	ASSERT_EQ(0, cft_agent_do(&a, "flood %d " SBX_SECRET, FLOOD));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "xread " SBX_SECRET));
	snprintf(want, sizeof(want), "pid=%d ", b.pid);
	end = cft_now_ns() + cft_secs(20) * 1000000000ull;
	cft_waiting("the flood's %d records or reports and sandbox B's denial record",
		    FLOOD);
	while (cft_now_ns() < end &&
	       (!brec[0] || ta.seen + ta.reported < FLOOD)) {
		if (audit_next(self->audit, rec, sizeof(rec), 1000))
			continue;
		tally(&ta, rec);
		if (strstr(rec, "op=exercise") && strstr(rec, want))
			snprintf(brec, sizeof(brec), "%s", rec);
	}
	cft_waited();
	ASSERT_NE(0, brec[0]) TH_LOG("the other sandbox's denial has no record");
	ASSERT_NE(0, sa.id);
	ASSERT_NE(sa.id, sb.id);
	check_denial(_metadata, brec, b.pid, self->e, sb.id, self->rt.cap_id);
	/* every denial of the flood: a record, or counted and reported */
	EXPECT_EQ(FLOOD, ta.seen + ta.reported)
		TH_LOG("%llu records, %llu reported", (unsigned long long)ta.seen,
		       (unsigned long long)ta.reported);
	EXPECT_LT(0, ta.budget);
	check_report(_metadata, ta.report, &sa);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid,
						  &sa, err, sizeof(err)));
	EXPECT_EQ(ta.seen, sa.records);
	EXPECT_EQ(FLOOD, sa.records + sa.over_budget + sa.over_ceiling + sa.lost);
	EXPECT_EQ(ta.budget, sa.over_budget);
	EXPECT_EQ(ta.ceiling, sa.over_ceiling);
	EXPECT_EQ(ta.lost, sa.lost);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid,
						  &sb, err, sizeof(err)));
	EXPECT_EQ(1, sb.records);
	EXPECT_EQ(0, sb.over_budget + sb.over_ceiling + sb.lost);
	/* and the host's counters (status) */
	ASSERT_EQ(0, capfence_client_sandbox_status(self->nl.c, &host1, err,
						    sizeof(err)));
	EXPECT_EQ(sa.over_budget, host1.over_budget - host0.over_budget);
	EXPECT_LE(1, host1.reports - host0.reports);
	TH_LOG("flood of %d: %llu recorded, %llu reported (over budget %llu, ceiling %llu, lost %llu)",
	       FLOOD, (unsigned long long)ta.seen, (unsigned long long)ta.reported,
	       (unsigned long long)ta.budget, (unsigned long long)ta.ceiling,
	       (unsigned long long)ta.lost);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/*
 * A reader that is slow, not absent: the flood is logged while nobody
 * reads, and only then are the records collected. kauditd does not wait
 * for a full daemon socket; it parks what did not fit and tries again only
 * when a new record is logged, so with a socket smaller than the flood the
 * rest would never come. Each of the 3,000 records the module wrote must
 * still arrive, with no record after the flood to push it (the test's
 * audit socket: cft_audit_open()).
 */
TEST_F(sbx, records_reach_a_reader_that_paused)
{
	struct capfence_sandbox_info sa;
	struct tally ta = {};
	char rec[2048], err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	uint64_t end;

	/* every denial of the flood recorded: far more than a default socket */
	ASSERT_EQ(0, cft_param_set("audit_window_ms", 60000));
	ASSERT_EQ(0, cft_param_set("audit_budget", 2 * FLOOD));
	ASSERT_EQ(0, cft_param_set("audit_ceiling", 4 * FLOOD));
	ASSERT_EQ(0, spawn(self, &a, &sa));
	ta.sandbox = sa.id;
	ta.pid = a.pid;
	ASSERT_EQ(0, cft_agent_do(&a, "flood %d " SBX_SECRET, FLOOD));
	/* its counts are final: a denial is counted when it is judged */
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid,
						  &sa, err, sizeof(err)));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	sleep(2);	/* kauditd has sent, or parked, all it had */
	end = cft_now_ns() + cft_secs(20) * 1000000000ull;
	cft_waiting("the flood's %d records or reports, read late", FLOOD);
	while (cft_now_ns() < end && ta.seen + ta.reported < FLOOD) {
		if (audit_next(self->audit, rec, sizeof(rec), 1000))
			continue;
		tally(&ta, rec);
	}
	cft_waited();
	EXPECT_EQ(FLOOD, sa.records);
	EXPECT_EQ(FLOOD, ta.seen)
		TH_LOG("%llu of %d records arrived, %llu reported",
		       (unsigned long long)ta.seen, FLOOD,
		       (unsigned long long)ta.reported);
}

/*
 * Several sandboxes flooding at once fill the host's ceiling; a sandbox's
 * first records of a window (the floor) are written all the same, and what
 * the ceiling cuts is counted for the sandbox it was cut from. With a
 * budget of 20, a floor of 3 and a ceiling of 40 in one long window, three
 * floods of 100 and one denial of a fourth sandbox come out exactly: 20
 * and 20 records (80 over budget each), 3 (17 over the ceiling, 80 over
 * budget), and the fourth's one record.
 */
TEST_F(sbx, ceiling_keeps_each_sandbox_its_floor)
{
	static const uint64_t want_rec[3] = { 20, 20, 3 }, want_ceil[3] = { 0, 0, 17 };
	struct capfence_sandbox_info si[4];
	struct tally t[4] = {};
	char rec[2048], err[CAPFENCE_ERR_MAX];
	struct cft_agent a[4];
	uint64_t end;
	int i, done;

	ASSERT_LE(0, self->budget) TH_LOG("no audit budget parameters");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, spawn(self, &a[i], &si[i]));
		t[i].sandbox = si[i].id;
		t[i].pid = a[i].pid;
	}
	/* a new parameter starts a new host window */
	ASSERT_EQ(0, cft_param_set("audit_window_ms", 60000));
	ASSERT_EQ(0, cft_param_set("audit_budget", 20));
	ASSERT_EQ(0, cft_param_set("audit_floor", 3));
	ASSERT_EQ(0, cft_param_set("audit_ceiling", 40));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, cft_agent_do(&a[i], "flood 100 " SBX_SECRET));
	EXPECT_EQ(EACCES, cft_agent_do(&a[3], "xread " SBX_SECRET));
	end = cft_now_ns() + cft_secs(15) * 1000000000ull;
	do {
		if (!audit_next(self->audit, rec, sizeof(rec), 1000))
			for (i = 0; i < 4; i++)
				tally(&t[i], rec);
		for (done = 0, i = 0; i < 3; i++)
			done += t[i].seen + t[i].reported == 100;
	} while (cft_now_ns() < end && (done < 3 || !t[3].seen));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c,
							  (uint32_t)a[i].pid,
							  &si[i], err, sizeof(err)));
		EXPECT_EQ(want_rec[i], si[i].records) TH_LOG("sandbox %d", i);
		EXPECT_EQ(80, si[i].over_budget) TH_LOG("sandbox %d", i);
		EXPECT_EQ(want_ceil[i], si[i].over_ceiling) TH_LOG("sandbox %d", i);
		EXPECT_EQ(0, si[i].lost);
		/* what the log shows: its records, then its reports */
		EXPECT_EQ(want_rec[i], t[i].seen) TH_LOG("sandbox %d", i);
		EXPECT_EQ(80, t[i].budget) TH_LOG("sandbox %d", i);
		EXPECT_EQ(want_ceil[i], t[i].ceiling) TH_LOG("sandbox %d", i);
		check_report(_metadata, t[i].report, &si[i]);
	}
	/* the fourth sandbox, after the ceiling: its first denial recorded */
	EXPECT_EQ(1, t[3].seen);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a[3].pid,
						  &si[3], err, sizeof(err)));
	EXPECT_EQ(1, si[3].records);
	EXPECT_EQ(0, si[3].over_budget + si[3].over_ceiling + si[3].lost);
	for (i = 0; i < 4; i++)
		EXPECT_TRUE(cft_agent_stop_clean(&a[i]));
}

#define CREDS_TRY	300000
#define CREDS_CHUNK	20000

/* the op=cred_limit record of @pid, within @timeout_ms */
static int cred_limit_record(int audit, pid_t pid, char *rec, size_t len)
{
	char want[32];
	uint64_t end = cft_now_ns() + cft_secs(10) * 1000000000ull;

	snprintf(want, sizeof(want), "pid=%d ", pid);
	while (cft_now_ns() < end)
		if (!audit_next(audit, rec, len, 1000) &&
		    strstr(rec, "op=cred_limit") && strstr(rec, want))
			return 0;
	return -ETIMEDOUT;
}

/* Wait (up to 10 s) until the live credentials of @pid's sandbox hold still. */
static void creds_settle(struct __test_metadata *_metadata,
			 FIXTURE_DATA(sbx) *self, pid_t pid)
{
	struct capfence_sandbox_info sa;
	char err[CAPFENCE_ERR_MAX];
	uint64_t last = UINT64_MAX;
	int same = 0, i;

	for (i = 0; i < 100 && same < 3; i++) {
		ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)pid,
							  &sa, err, sizeof(err)))
			TH_LOG("%s", err);
		same = sa.creds == last ? same + 1 : 0;
		last = sa.creds;
		usleep(100000);
	}
}

/*
 * The review's attack: a bound uid 65534 makes credentials (capset) and
 * keeps each alive (an io_uring personality each), 300,000 of them. Its
 * sandbox stops at cred_limit live credentials: the next credential
 * change fails with ENOMEM, recorded as op=cred_limit; another sandbox
 * still makes its own, and the limit counts live credentials only.
 */
TEST_F(sbx, cred_limit_bounds_one_sandbox)
{
	struct capfence_sandbox_info sa, sb;
	char rec[2048], v[64], want[64], err[CAPFENCE_ERR_MAX];
	struct cft_agent a, b;
	long limit = cft_param_get("cred_limit");
	int total = 0, r;
	uint64_t end;

	/* built in, no limit by default (below): an operator's limit holds */
	if (cft_builtin() && limit == 0) {
		self->cred_limit = 0;
		ASSERT_EQ(0, cft_param_set("cred_limit", 8192));
		limit = 8192;
	}

	ASSERT_EQ(0, spawn(self, &a, &sa));
	ASSERT_EQ(0, spawn(self, &b, &sb));
	ASSERT_EQ(0, cft_agent_do(&a, "setuid"));
	ASSERT_EQ(0, cft_agent_do(&a, "s2p-start"));
	do {
		r = cft_agent_do(&a, "creds %d", CREDS_CHUNK);
		ASSERT_LE(0, r);
		total += r;
	} while (r == CREDS_CHUNK && total < CREDS_TRY);
	TH_LOG("%d credentials made of %d tried (cred_limit %ld)", total,
	       CREDS_TRY, limit);
	ASSERT_GT(CREDS_TRY, total) TH_LOG("no bound on one sandbox's credentials");
	EXPECT_EQ(ENOMEM, cft_agent_do(&a, "creds-err"));
	ASSERT_LT(0, limit);
	/* what it holds, less the few made and freed before (RCU) */
	EXPECT_GE(limit, total);
	EXPECT_LE(limit - 16, total);
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid,
						  &sa, err, sizeof(err)));
	EXPECT_EQ((uint32_t)limit, sa.cred_limit);
	EXPECT_GE((uint64_t)limit, sa.creds);
	EXPECT_LE(1, sa.cred_refused);
	ASSERT_EQ(0, cred_limit_record(self->audit, a.pid, rec, sizeof(rec)));
	EXPECT_STREQ("12", cft_field(rec, "errno", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)sa.id);
	EXPECT_STREQ(want, cft_field(rec, "sandbox", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)self->e);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	snprintf(want, sizeof(want), "%ld", limit);
	EXPECT_STREQ(want, cft_field(rec, "limit", v, sizeof(v)));
	/*
	 * nor through keyctl's session-to-parent (cred_alloc_blank). The
	 * credentials made and dropped before the loop are freed after an
	 * RCU grace period, and one freed since the loop ended leaves a slot
	 * (check-builtin saw the blank credential made in it): wait until
	 * the count holds still, fill the sandbox again, then try.
	 */
	creds_settle(_metadata, self, a.pid);
	r = cft_agent_do(&a, "creds %d", CREDS_CHUNK);
	ASSERT_LE(0, r);
	ASSERT_GT(CREDS_CHUNK, r);
	EXPECT_EQ(ENOMEM, cft_agent_do(&a, "creds-err"));
	EXPECT_EQ(ENOMEM, cft_agent_do(&a, "s2p-go"));
	/* another sandbox is not charged for it */
	EXPECT_EQ(1000, cft_agent_do(&b, "creds 1000"));
	EXPECT_EQ(0, cft_agent_do(&b, "creds-err"));
	/* live credentials only: once they go, the sandbox makes new ones */
	EXPECT_EQ(0, cft_agent_do(&a, "creds-drop"));
	/* freed after an RCU grace period: slow on a debug kernel */
	end = cft_now_ns() + cft_secs(5) * 1000000000ull;
	cft_waiting("sandbox %llu's dropped credentials to be freed",
		    (unsigned long long)sa.id);
	do {
		ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c,
							  (uint32_t)a.pid, &sa,
							  err, sizeof(err)));
		if (sa.creds < 64)
			break;
		usleep(50000);
	} while (cft_now_ns() < end);
	cft_waited();
	EXPECT_GT(64, sa.creds);
	EXPECT_EQ(1000, cft_agent_do(&a, "creds 1000"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/*
 * Built in, a credential's state is in its own blob: no table that other
 * tasks' hooks walk, so no limit by default. A sandbox keeps 3 x 8192
 * live credentials (the module's default limit is 8192), and each is
 * still charged to the sandbox's count. The module keeps its limit.
 */
#define CREDS_UNLIMITED	(3 * 8192)

TEST_F(sbx, cred_blob_needs_no_limit)
{
	struct capfence_sandbox_info sa;
	char err[CAPFENCE_ERR_MAX];
	struct cft_agent a;
	int total = 0, r;

	if (!cft_builtin()) {
		EXPECT_EQ(8192, cft_param_get("cred_limit"));
		SKIP(return, "capfence.ko: the credential table is shared, cred_limit stays 8192");
	}
	ASSERT_EQ(0, cft_param_get("cred_limit"));
	ASSERT_EQ(0, spawn(self, &a, &sa));
	ASSERT_EQ(0, cft_agent_do(&a, "setuid"));
	do {
		r = cft_agent_do(&a, "creds %d", 8192);
		ASSERT_LE(0, r);
		total += r;
	} while (r == 8192 && total < CREDS_UNLIMITED);
	EXPECT_EQ(CREDS_UNLIMITED, total);
	EXPECT_EQ(0, cft_agent_do(&a, "creds-err"));
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid,
						  &sa, err, sizeof(err)));
	EXPECT_EQ(0, sa.cred_limit);
	EXPECT_LE((uint64_t)CREDS_UNLIMITED, sa.creds);
	EXPECT_EQ(0, sa.cred_refused);
	EXPECT_EQ(0, cft_agent_do(&a, "creds-drop"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
}

/* ---- memory: charged to the sandbox's cgroup ---- */

#define CG_ROOT "/tmp/cft-cgroup"

static int cg_write(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -errno;
}

/* slab_unreclaimable of cgroup @cg, in bytes (-1 when unreadable) */
static long long cg_slab(const char *cg)
{
	char path[128], key[64];
	long long v, got = -1;
	FILE *f;

	snprintf(path, sizeof(path), CG_ROOT "/%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, "slab_unreclaimable"))
			got = v;
	fclose(f);
	return got;
}

/*
 * What @n connected UDP sockets of agent @a add to its cgroup @cg's
 * unreclaimable slab. The statistics are flushed every 2 s: read after
 * a flush.
 */
/* Move agent @a into cgroup @cg (made if missing): 0 or -1. */
static int cg_join(const char *cg, const struct cft_agent *a)
{
	char path[128], pid[16];

	snprintf(path, sizeof(path), CG_ROOT "/%s", cg);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), CG_ROOT "/%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", a->pid);
	return cg_write(path, pid) ? -1 : 0;
}

static long long udp_cost(struct __test_metadata *_metadata,
			  struct cft_agent *a, const char *cg, int n, int port)
{
	long long before, after;

	if (cg_join(cg, a))
		return -1;
	sleep(3);
	before = cg_slab(cg);
	EXPECT_EQ(0, cft_agent_do(a, "udp %d %d", n, port));
	sleep(3);
	after = cg_slab(cg);
	if (before < 0 || after < 0)
		return -1;
	return after - before;
}

/*
 * A bound task's tracked sockets (one entry each, made in its connect)
 * are charged to its memory cgroup: n connects under a capability cost
 * its cgroup about n entries more than the same connects under an open
 * rule, which are not tracked. (Tracked files take preallocated slots;
 * only a full bucket's overflow entry is allocated, charged the same way.)
 */
/*
 * The memcg tests' pair of agents in the cgroup v2 tree at CG_ROOT: @a
 * bound to an epoch whose @cls is a token rule, holding a capability for
 * @constraint, and @b to one whose @cls is open (nothing tracked).
 */
struct memcg_pair {
	struct cft_nl nl;
	struct capfence_key *key;
	struct cft_agent a, b;
};

static void memcg_pair_up(struct __test_metadata *_metadata,
			  struct memcg_pair *p, const char *cls,
			  const char *constraint)
{
	char tok[96], open_rule[64];
	const char *tr[] = { tok, "fs:read=open" };
	const char *orl[] = { open_rule, "fs:read=open" };
	struct capfence_token t;
	struct cft_reply r;
	uint64_t et, eo;

	snprintf(tok, sizeof(tok), "%s=token:%s", cls, constraint);
	snprintf(open_rule, sizeof(open_rule), "%s=open", cls);
	ASSERT_EQ(0, cft_open(&p->nl));
	p->key = cft_test_key(&p->nl);
	ASSERT_NE(NULL, p->key);
	mkdir(CG_ROOT, 0755);
	if (access(CG_ROOT "/cgroup.controllers", F_OK))
		ASSERT_EQ(0, mount("none", CG_ROOT, "cgroup2", 0, NULL));
	ASSERT_EQ(0, cg_write(CG_ROOT "/cgroup.subtree_control", "+memory"));
	et = cft_next_epoch(&p->nl);
	ASSERT_EQ(0, cft_epoch_install(&p->nl, et, tr, 2, NULL, 0));
	eo = cft_next_epoch(&p->nl);
	ASSERT_EQ(0, cft_epoch_install(&p->nl, eo, orl, 2, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&p->a, et, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&p->b, eo, NULL, 0, NULL));
	ASSERT_EQ(0, cft_mint(p->key, cls, et, constraint, 0, &t));
	ASSERT_EQ(0, cft_delegate(&p->nl, &t, p->a.pid, 0, false, &r));
}

/*
 * @charged and @free_of_entries: what @n objects cost the two agents'
 * cgroups @cga and @cgb; an entry is at least 64 bytes (its table link,
 * socket and grants).
 */
static void memcg_pair_down(struct __test_metadata *_metadata,
			    struct memcg_pair *p, int n, long long charged,
			    long long free_of_entries, const char *cga,
			    const char *cgb)
{
	char path[128];

	TH_LOG("%d objects: %lld bytes of slab tracked, %lld untracked",
	       n, charged, free_of_entries);
	EXPECT_LE(0, charged);
	EXPECT_LE(0, free_of_entries);
	EXPECT_LE(free_of_entries + 64LL * n, charged);
	EXPECT_TRUE(cft_agent_stop_clean(&p->a));
	EXPECT_TRUE(cft_agent_stop_clean(&p->b));
	snprintf(path, sizeof(path), CG_ROOT "/%s", cga);
	rmdir(path);
	snprintf(path, sizeof(path), CG_ROOT "/%s", cgb);
	rmdir(path);
	capfence_key_free(p->key);
	cft_nl_close(&p->nl);
}

TEST(tracked_sockets_charged_to_the_memcg)
{
	const int n = 900;
	struct memcg_pair p;

	memcg_pair_up(_metadata, &p, "net:connect", "127.0.0.1/32");
	memcg_pair_down(_metadata, &p, n,
			udp_cost(_metadata, &p.a, "cft-token", n, 9),
			udp_cost(_metadata, &p.b, "cft-open", n, 9),
			"cft-token", "cft-open");
}

/*
 * What @n connections accepted by agent @a (its listener on @port) add
 * to its cgroup @cg's unreclaimable slab; the clients are this test's,
 * outside the cgroup, held until the agent accepted them all.
 */
static long long accept_cost(struct __test_metadata *_metadata,
			     struct cft_agent *a, const char *cg, int n, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long long before, after;
	int *c, i;

	if (cg_join(cg, a))
		return -1;
	c = calloc((size_t)n, sizeof(*c));
	if (!c)
		return -1;
	EXPECT_EQ(0, cft_agent_do(a, "tlisten %d", port));
	sleep(3);
	before = cg_slab(cg);
	for (i = 0; i < n; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		EXPECT_EQ(0, connect(c[i], (struct sockaddr *)&sin, sizeof(sin)));
	}
	EXPECT_EQ(0, cft_agent_do(a, "taccept %d", n));
	sleep(3);
	after = cg_slab(cg);
	for (i = 0; i < n; i++)
		close(c[i]);
	free(c);
	if (before < 0 || after < 0)
		return -1;
	return after - before;
}

/*
 * A bound listener's accepted connections are tracked (each inherits the
 * listener's grants), their entries made in softirq, where no task is
 * charged: they are charged to the listener's cgroup. n accepted under a
 * net:bind capability cost its cgroup about n entries more than n under
 * an open rule (an outside round measured 900 entries charged to no
 * cgroup before).
 */
TEST(accepted_connections_charged_to_the_memcg)
{
	struct rlimit rl = { 4096, 4096 };
	const int n = 900;
	struct memcg_pair p;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	memcg_pair_up(_metadata, &p, "net:bind", "127.0.0.1/32");
	memcg_pair_down(_metadata, &p, n,
			accept_cost(_metadata, &p.a, "cft-acc-token", n, 18141),
			accept_cost(_metadata, &p.b, "cft-acc-open", n, 18142),
			"cft-acc-token", "cft-acc-open");
}

/*
 * The borrow record of a personality refused to @pid: in its own sandbox
 * @sb and epoch @epoch (0 and 0 for an unbound task).
 */
static void check_personality(struct __test_metadata *_metadata, int audit,
			      pid_t pid, uint64_t epoch, uint64_t sb)
{
	char rec[2048], v[128], want[64];

	snprintf(want, sizeof(want), "pid=%d ", pid);
	ASSERT_EQ(0, cft_audit_wait(audit, rec, sizeof(rec), 5000, "reason=borrow",
				    want, NULL))
		TH_LOG("no borrow record for pid %d", pid);
	EXPECT_STREQ("capfence", cft_field(rec, "lsm", v, sizeof(v)));
	EXPECT_STREQ("exercise", cft_field(rec, "op", v, sizeof(v)));
	EXPECT_STREQ("13", cft_field(rec, "errno", v, sizeof(v)));
	EXPECT_STREQ("none", cft_field(rec, "class", v, sizeof(v)));
	EXPECT_STREQ("io_uring:personality", cft_field(rec, "target", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)epoch);
	EXPECT_STREQ(want, cft_field(rec, "epoch", v, sizeof(v)));
	snprintf(want, sizeof(want), "%llu", (unsigned long long)sb);
	EXPECT_STREQ(want, cft_field(rec, "sandbox", v, sizeof(v)));
}

/* what the sandbox of @pid's records and its denials without one add up to */
static uint64_t sandbox_denials(struct __test_metadata *_metadata,
				FIXTURE_DATA(sbx) *self, pid_t pid)
{
	struct capfence_sandbox_info sa;
	char err[CAPFENCE_ERR_MAX];

	EXPECT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)pid, &sa,
						  err, sizeof(err))) TH_LOG("%s", err);
	return sa.records + sa.over_budget + sa.over_ceiling + sa.lost;
}

/*
 * The outside review's case: sandbox B takes sandbox A's ring with
 * pidfd_getfd (same epoch, the same grants: the borrow rules let it) and
 * submits under the personality A registered. Each request completes
 * with EACCES before it runs, recorded in B's sandbox (reason=borrow
 * target=io_uring:personality), whether A's grants would have admitted it
 * or not; A's sandbox records and counts nothing. A's own personality
 * still serves A, and A's child. SCM_RIGHTS cannot carry a ring: the kernel refuses to
 * send one (EINVAL), whoever asks. Before: the connect ran as A, its
 * denial recorded under and counted against A. The epoch mediates
 * net:connect only: from 6.9 a pidfd is a file of pidfs, opened through
 * file_open, which fs:read=token judges (and refuses: outside the root).
 */
TEST_F(sbx, borrowed_uring_personality_spends_nothing_of_its_owner)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	struct capfence_sandbox_info sa, sb;
	struct cft_agent a, b;
	char name[64], rec[2048], v[64];
	uint64_t e = cft_next_epoch(&self->nl);

	ASSERT_EQ(0, cft_epoch_install(&self->nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, NULL));
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)a.pid, &sa,
						  name, sizeof(name)));
	ASSERT_EQ(0, cft_agent_spawn(&b, e, NULL, 0, NULL));
	ASSERT_EQ(0, capfence_client_task_sandbox(self->nl.c, (uint32_t)b.pid, &sb,
						  name, sizeof(name)));
	ASSERT_NE(0, sa.id);
	ASSERT_NE(sa.id, sb.id);
	snprintf(name, sizeof(name), "cft-ur-%d", b.pid);
	ASSERT_EQ(0, cft_agent_do(&b, "ur-listen %s", name));
	/* the ring is made and kept; only its sending fails */
	EXPECT_EQ(EINVAL, cft_agent_do(&a, "ur-give %s", name));
	ASSERT_EQ(0, cft_agent_do(&b, "ur-getfd %d", a.pid));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "ur-use 9"));
	check_personality(_metadata, self->audit, b.pid, e, sb.id);
	EXPECT_EQ(EACCES, cft_agent_do(&b, "ur-use /etc"));
	check_personality(_metadata, self->audit, b.pid, e, sb.id);
	/* a personality of one's own: the same credential, judged as always */
	EXPECT_EQ(0, cft_agent_do(&a, "ur-self /etc"));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "ur-self 9"));
	snprintf(name, sizeof(name), "pid=%d ", a.pid);
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", name, NULL));
	EXPECT_STREQ("no_capability", cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ("127.0.0.1:9", cft_field(rec, "target", v, sizeof(v)));
	snprintf(name, sizeof(name), "%llu", (unsigned long long)sa.id);
	EXPECT_STREQ(name, cft_field(rec, "sandbox", v, sizeof(v)));
	/*
	 * A's child (another credential of A's sandbox, holding what A holds)
	 * may use A's personality: judged as A, not refused as a borrow
	 */
	EXPECT_EQ(EACCES, cft_agent_do(&a, "fork ur-inherited 9"));
	ASSERT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=exercise", "comm=\"exe\"", "target=127.0.0.1:9 ",
				    NULL));
	EXPECT_STREQ("no_capability", cft_field(rec, "reason", v, sizeof(v)));
	EXPECT_STREQ(name, cft_field(rec, "sandbox", v, sizeof(v)));
	/* A's two denials are its own; B's two are B's */
	EXPECT_EQ(2, sandbox_denials(_metadata, self, a.pid));
	EXPECT_EQ(2, sandbox_denials(_metadata, self, b.pid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

/*
 * Across the binding: an unbound task may not act as a sandbox through
 * its personality (it would be the sandbox without being bound), nor a
 * bound task as an unbound credential (it would leave its binding; here
 * a ring its launcher made and left open across the binding exec).
 * Before: the unbound task's open ran as A (A's denial and record), and
 * B's ran as its launcher and opened the file.
 */
TEST_F(sbx, uring_personality_does_not_cross_the_binding)
{
	struct capfence_sandbox_info sa, sb;
	struct cft_agent a, b;

	ASSERT_EQ(0, spawn(self, &a, &sa));
	ASSERT_EQ(0, cft_agent_do(&a, "ur-give -"));
	/* this unbound task takes A's ring and submits as A */
	ASSERT_EQ(0, ur_getfd(a.pid));
	EXPECT_EQ(EACCES, ur_use(SBX_SECRET));
	check_personality(_metadata, self->audit, getpid(), 0, 0);
	close(ur_fd);
	/* B inherits a ring with this task's own, unbound, personality */
	ASSERT_EQ(0, ur_give("-"));
	ASSERT_EQ(0, spawn(self, &b, &sb));
	close(UR_FD);
	EXPECT_EQ(EACCES, cft_agent_do(&b, "ur-inherited " SBX_SECRET));
	check_personality(_metadata, self->audit, b.pid, self->e, sb.id);
	EXPECT_EQ(0, sandbox_denials(_metadata, self, a.pid));
	EXPECT_EQ(1, sandbox_denials(_metadata, self, b.pid));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

CFT_MAIN
