// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection over capfence: every control operation (each generic
 * netlink command, with valid input) and every hook path a bound task can
 * take runs with /proc/thread-self/fail-nth = 1, 2, 3 ... until an attempt
 * completes without an injected failure. After each attempt:
 *
 *  - the result is the operation's own (success, or the typed error the
 *    SPEC gives it) or an allocation failure (ENOMEM; ENOBUFS and EAGAIN
 *    where the kernel outside capfence reports one that way);
 *  - after a failure, the module's state (status and counters, every
 *    epoch, the tasks involved with their held capabilities) equals the
 *    state before the attempt: nothing half applied;
 *  - a bound task is still bound to its epoch with its own capabilities,
 *    and what it forks or execs is bound too, or the fork/exec failed;
 *  - the kernel log has no WARN, BUG, KASAN or lockdep report.
 *
 * Where each failure was injected comes from return probes on
 * should_failslab() and should_fail_alloc_page() with a stack trace
 * trigger (tracefs): the driver prints, per operation, the distinct
 * injection points reached and how many of them were inside capfence.ko,
 * and "# site" lines naming capfence's frames of each, which
 * selftests/faults/sites maps to source lines. The guest script
 * (selftests/faults/guest-faults) configures
 * failslab and fail_page_alloc, runs this, then scans kmemleak.
 *
 *   cf-faults [--only NAME]... [--max N] [-v]   (CF_FAULTS_RAW=1: raw traces)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/membarrier.h>
#include "kselftest.h"
#include "common.h"

#define FI_DIR		"/tmp/fi"
#define PROBE		"/usr/bin/cf-faults-probe"
#define MAX_KEYS	256
#define SNAP_MAX	(128 * 1024)

/* ---- fail-nth ---- */

static int fi_open(void)
{
	return open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
}

static int fi_arm(int fd, unsigned int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%u", n);

	return pwrite(fd, b, (size_t)l, 0) == l ? 0 : -errno;
}

/* Disarm; 1 when the armed failure was injected, 0 when not, -1 unknown. */
static int fi_disarm(int fd)
{
	char b[16] = "";
	ssize_t r = pread(fd, b, sizeof(b) - 1, 0);
	int ret = r > 0 ? atoi(b) == 0 : -1;

	if (pwrite(fd, "0", 1, 0) != 1)
		ret = -1;
	return ret;
}

/* ---- netlink snapshots ---- */

struct snap {
	size_t len;
	char buf[SNAP_MAX];
};

static void snap_add(struct snap *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void snap_add(struct snap *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->len >= sizeof(s->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(s->buf + s->len, sizeof(s->buf) - s->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
	if (s->len >= sizeof(s->buf))
		s->len = sizeof(s->buf) - 1;
}

/*
 * Nests of the capfence messages (@top: the top-level attribute a nested
 * one is in); everything else is printed flat.
 */
static bool is_nest(int depth, int top, int type)
{
	if (depth == 0)
		return type == CAPFENCE_A_RULES || type == CAPFENCE_A_CAPS ||
		       type == CAPFENCE_A_STATS || type == CAPFENCE_A_FLEET;
	if (depth == 1 && top == CAPFENCE_A_FLEET)
		return false;
	if (depth == 1 && top == CAPFENCE_A_STATS)
		return type == CAPFENCE_STATS_A_DELEGATE_REJECT ||
		       type == CAPFENCE_STATS_A_EXERCISE_DENY;
	/* every member of an array of rules or of capabilities */
	return depth == 1;
}

struct blob {
	struct snap *s;
	int depth;
	uint64_t skip;		/* top-level types left out (bit mask) */
	int top;		/* the top-level type, inside a nest */
};

static int blob_attr(const struct nlattr *a, void *data)
{
	struct blob *b = data;
	int type = mnl_attr_get_type(a);
	uint16_t len = mnl_attr_get_payload_len(a);
	const uint8_t *p = mnl_attr_get_payload(a);

	if (!b->depth && type < 64 && (b->skip & (1ULL << type)))
		return MNL_CB_OK;
	/* the age of the last fleet confirmation moves by itself */
	if (b->depth == 1 && b->top == CAPFENCE_A_FLEET &&
	    type == CAPFENCE_FLEET_A_AGE_MS)
		return MNL_CB_OK;
	snap_add(b->s, "%*s%d", b->depth * 2, "", type);
	if (is_nest(b->depth, b->top, type)) {
		struct blob in = { b->s, b->depth + 1, 0,
				   b->depth ? b->top : type };

		snap_add(b->s, " {\n");
		mnl_attr_parse_nested(a, blob_attr, &in);
		snap_add(b->s, "%*s}\n", b->depth * 2, "");
		return MNL_CB_OK;
	}
	if (len == 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		snap_add(b->s, "=%llu\n", (unsigned long long)v);
	} else if (len == 4) {
		uint32_t v;

		memcpy(&v, p, 4);
		snap_add(b->s, "=%u\n", v);
	} else if (len == 1) {
		snap_add(b->s, "=%u\n", p[0]);
	} else {
		uint16_t i;

		snap_add(b->s, "=");
		for (i = 0; i < len && i < 64; i++)
			snap_add(b->s, "%02x", p[i]);
		snap_add(b->s, "\n");
	}
	return MNL_CB_OK;
}

static int blob_cb(const struct nlmsghdr *nlh, void *data)
{
	struct blob *b = data;

	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), blob_attr, b);
	return MNL_CB_OK;
}

/*
 * TASK_GET @pid, without the attributes that name the asker or the time,
 * and without its sandbox: the sandbox's counters count the audit records
 * its denials write (a denied write after a revoke is one more), and its
 * epoch is the task's own, compared as CAPFENCE_A_EPOCH_ID.
 */
static int task_blob(struct cft_nl *nl, pid_t pid, struct snap *s)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);
	struct blob b = { s, 0, (1ULL << CAPFENCE_A_PID) |
				(1ULL << CAPFENCE_A_FENCE) |
				(1ULL << CAPFENCE_A_SANDBOX), 0 };

	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
	return cft_nl_talk(nl, nlh, blob_cb, &b);
}

static pid_t tracked[8];
static int ntracked;

/* Status and counters, every epoch, and the tracked tasks. */
static int snapshot(struct cft_nl *nl, struct snap *s)
{
	struct nlmsghdr *nlh;
	struct blob b = { s, 0, 0, 0 };
	int err, i;

	s->len = 0;
	s->buf[0] = '\0';
	snap_add(s, "[status]\n");
	nlh = cft_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0);
	err = cft_nl_talk(nl, nlh, blob_cb, &b);
	if (err)
		return err;
	snap_add(s, "[epochs]\n");
	nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_GET, NLM_F_DUMP);
	err = cft_nl_talk(nl, nlh, blob_cb, &b);
	if (err)
		return err;
	for (i = 0; i < ntracked; i++) {
		snap_add(s, "[task %d]\n", (int)tracked[i]);
		err = task_blob(nl, tracked[i], s);
		if (err == -ESRCH)
			snap_add(s, "gone\n");
		else if (err)
			return err;
	}
	return 0;
}

/* First differing line of two snapshots, for the log. */
static void snap_diff(const struct snap *a, const struct snap *b, char *out,
		      size_t len)
{
	const char *p = a->buf, *q = b->buf, *sec = "?";

	while (*p && *q) {
		const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
		size_t pl = pe ? (size_t)(pe - p) : strlen(p);
		size_t ql = qe ? (size_t)(qe - q) : strlen(q);

		if (*p == '[')
			sec = p;
		if (pl != ql || memcmp(p, q, pl)) {
			snprintf(out, len, "in %.*s: '%.*s' became '%.*s'",
				 (int)strcspn(sec, "\n"), sec, (int)pl, p,
				 (int)ql, q);
			return;
		}
		p += pl + (pe ? 1 : 0);
		q += ql + (qe ? 1 : 0);
	}
	snprintf(out, len, "one snapshot is longer");
}

/* Wait until freed credentials and grants have left the state. */
static void quiesce(void)
{
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
	syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
}

static int settle(struct cft_nl *nl, struct snap *s)
{
	static struct snap prev;
	int i, err;

	quiesce();
	err = snapshot(nl, &prev);
	for (i = 0; !err && i < cft_ms(2000) / 20; i++) {
		usleep(20000);
		err = snapshot(nl, s);
		if (!err && s->len == prev.len && !memcmp(s->buf, prev.buf, s->len))
			return 0;
		memcpy(&prev, s, sizeof(*s));
	}
	return err ? err : -ETIMEDOUT;
}

/* Does the state come back to @want (RCU callbacks may lag)? */
static bool state_equals(struct cft_nl *nl, const struct snap *want, char *why,
			 size_t len)
{
	static struct snap now;
	int i, n = cft_ms(3000) / 20;

	for (i = 0; i < n; i++) {
		if (i == 1 || i == 10)
			quiesce();
		if (!snapshot(nl, &now) && now.len == want->len &&
		    !memcmp(now.buf, want->buf, now.len))
			return true;
		usleep(20000);
	}
	snap_diff(want, &now, why, len);
	return false;
}

/* ---- where the failure was injected (tracefs) ---- */

static char tracefs[64];

static int write_file(const char *path, const char *s, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

/*
 * Return probes on the two places fail-nth answers from (lib/ is built
 * without ftrace, so should_fail_ex() itself cannot be probed): a stack
 * trace of every allocation made to fail.
 */
static int trace_setup(void)
{
	static const char *const knobs[][2] = {
		{ "events/cfault/slab/filter", "ret != 0" },
		{ "events/cfault/slab/trigger", "stacktrace if ret != 0" },
		{ "events/cfault/page/filter", "ret != 0" },
		{ "events/cfault/page/trigger", "stacktrace if ret != 0" },
		{ "trace_options", "sym-offset" },
		{ "buffer_size_kb", "4096" },
		{ "events/cfault/enable", "1" },
		{ "tracing_on", "1" },
	};
	char p[128];
	size_t i;
	int err;

	if (!access("/sys/kernel/tracing/kprobe_events", F_OK))
		strcpy(tracefs, "/sys/kernel/tracing");
	else if (!access("/sys/kernel/debug/tracing/kprobe_events", F_OK))
		strcpy(tracefs, "/sys/kernel/debug/tracing");
	else if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		strcpy(tracefs, "/sys/kernel/tracing");
	else
		return -ENOENT;
	snprintf(p, sizeof(p), "%s/kprobe_events", tracefs);
	err = write_file(p, "r128:cfault/slab should_failslab ret=$retval:s32\n",
			 O_APPEND);
	if (!err)
		err = write_file(p, "r128:cfault/page should_fail_alloc_page ret=$retval:u8\n",
				 O_APPEND);
	if (err)
		return err;
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", tracefs, knobs[i][0]);
		err = write_file(p, knobs[i][1], 0);
		if (err) {
			ksft_print_msg("tracefs %s: %s\n", knobs[i][0],
				       strerror(-err));
			return err;
		}
	}
	return 0;
}

static void trace_clear(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/trace", tracefs);
	write_file(p, "", O_TRUNC);
}

/* allocator internals: the injection point is the first frame past them */
static bool alloc_frame(const char *f)
{
	static const char *const pre[] = {
		"should_fail", "__should_fail", "should_failslab",
		"__should_failslab", "slab_pre_alloc_hook", "slab_alloc",
		"__slab_alloc", "___slab_alloc", "kmem_cache_alloc",
		"__kmem_cache_alloc", "kmalloc", "__kmalloc", "kmalloc_trace",
		"kmalloc_node", "__kmalloc_node", "kmalloc_large",
		"kmalloc_order", "alloc_pages", "__alloc_pages",
		"alloc_slab_page", "allocate_slab", "new_slab",
		"__get_free_pages", "get_zeroed_page", "kzalloc", "kvmalloc",
		"__kvmalloc", "should_fail_alloc_page", "prepare_alloc_pages",
		"kmalloc_reserve", "arch_rethook", "rethook", "kretprobe",
		"trace_", "__trace", "ftrace", "stack_trace", "event_triggers",
		"kretprobe_dispatcher", "__kretprobe",
	};
	size_t i;

	for (i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(f, pre[i], strlen(pre[i])))
			return true;
	return false;
}

struct inj {
	char key[512];		/* the first frames past the allocator */
	char cf[512];		/* capfence's frames, innermost first, or "" */
	bool ack;		/* in netlink_ack(): the ACK was lost */
	bool execve;		/* inside an execve */
};

/* Read the stack of the one injection of the last attempt. */
static bool trace_read(struct inj *in)
{
	static char buf[1 << 16];
	char p[128], *line, *save = NULL;
	int fd, nkey = 0;
	bool past = false, any = false;
	ssize_t n, got = 0;

	in->key[0] = in->cf[0] = '\0';
	in->ack = false;
	in->execve = false;
	snprintf(p, sizeof(p), "%s/trace", tracefs);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	if (getenv("CF_FAULTS_RAW"))
		printf("# raw trace:\n%s", buf);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char fn[160];

		if (strstr(line, ": page: (") || strstr(line, ": slab: (")) {
			/* the page under a slab and the slab object differ */
			snprintf(in->key, sizeof(in->key), "%s",
				 strstr(line, ": page: (") ? "page: " : "slab: ");
			continue;
		}
		if (strncmp(line, " => ", 4))
			continue;
		any = true;
		snprintf(fn, sizeof(fn), "%s", line + 4);
		if (!strncmp(fn, "netlink_ack+", 12))
			in->ack = true;
		if (strstr(fn, "execve"))
			in->execve = true;
		if (!past && alloc_frame(fn))
			continue;
		past = true;
		if (strstr(fn, "[capfence]")) {
			size_t l = strlen(in->cf);

			*strstr(fn, " [capfence]") = '\0';
			snprintf(in->cf + l, sizeof(in->cf) - l, "%s%s",
				 l ? " < " : "", fn);
		}
		if (nkey < 4) {
			size_t l = strlen(in->key);

			snprintf(in->key + l, sizeof(in->key) - l, "%s%s",
				 nkey ? " < " : "", fn);
			nkey++;
		}
	}
	if (any && !nkey)
		snprintf(in->key + strlen(in->key), sizeof(in->key) - strlen(in->key),
			 "(allocator only)");
	return any;
}

/* ---- the kernel log ---- */

static int kmsg = -1;
static int kernel_reports;

static void kmsg_check(const char *op, unsigned int n)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "KASAN", "Oops", "possible circular",
		"suspicious RCU", "inconsistent lock", "lock held when returning",
		"sleeping function called", "ODEBUG", "general protection",
	};
	char rec[2048];
	ssize_t r;
	size_t i;

	while ((r = read(kmsg, rec, sizeof(rec) - 1)) > 0 || (r < 0 && errno == EPIPE)) {
		if (r < 0)
			continue;
		rec[r] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(rec, bad[i])) {
				kernel_reports++;
				ksft_print_msg("%s n=%u: kernel: %s", op, n,
					       strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
				break;
			}
	}
}

/* ---- the agent side (bound processes) ---- */

/*
 * A bound task cannot open /proc/thread-self/fail-nth for writing (its
 * epoch mediates fs:write), and opening it would count as an exercise in
 * the state compared. So the driver arms the agent's task from outside,
 * through /proc/TID/fail-nth, while the agent waits between two lines:
 *
 *   agent: "A TID"   driver: arms TID, then "g"   agent: the operation
 *   agent: "D ERRNO" driver: reads and disarms, then "c"
 *
 * and the command ends with the agent's "R RESULT" line. Pipe writes in
 * between allocate user pages only (__GFP_HIGHMEM), which fail_page_alloc
 * is told to ignore.
 */
static struct cft_nl agent_nl;
static bool agent_nl_open;
static int held = -1;

/* the agent's own state, as TASK_GET reports it */
static int self_state(struct snap *s)
{
	if (!agent_nl_open) {
		if (cft_open(&agent_nl))
			return -EIO;
		agent_nl_open = true;
	}
	s->len = 0;
	s->buf[0] = '\0';
	return task_blob(&agent_nl, getpid(), s);
}

#define RES(err, bad)	(((err) & 0xfff) | (!!(bad)) << 13)
#define RES_ERR(r)	((r) & 0xfff)
#define RES_BAD(r)	(((r) >> 13) & 1)

static void wait_char(char want)
{
	char c;

	while (read(0, &c, 1) == 1 && c != want)
		;
}

static void step_begin(void)
{
	dprintf(1, "A %ld\n", (long)syscall(SYS_gettid));
	wait_char('g');
}

static void step_end(int err)
{
	dprintf(1, "D %d\n", err);
	wait_char('c');
}

/* In a child: @fn's result through a pipe (its exit code is too narrow). */
static int in_child(int (*fn)(const char *), const char *arg)
{
	int p[2], st, res = -1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return RES(errno, 1);
	pid = fork();
	if (pid < 0)
		return RES(errno, 1);
	if (!pid) {
		res = fn(arg);
		if (write(p[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &res, sizeof(res)) != sizeof(res))
		res = RES(0, 1);
	close(p[0]);
	waitpid(pid, &st, 0);
	return res;
}

static struct snap self_before, self_after;

static bool self_same(void)
{
	if (self_state(&self_after))
		return false;
	return self_after.len == self_before.len &&
	       !memcmp(self_after.buf, self_before.buf, self_after.len);
}

static int do_fork(void)
{
	int err = 0, st = 0;
	pid_t pid;

	step_begin();
	pid = fork();
	if (!pid)	/* a forked bound task is bound like its parent */
		_exit(self_same() ? 0 : 1);
	if (pid < 0)
		err = errno;
	step_end(err);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return RES(err, pid > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)));
}

static int do_setuid(const char *arg)
{
	int err = 0;

	(void)arg;
	step_begin();
	if (setresuid(65534, 65534, 65534))
		err = errno;
	step_end(err);
	/* the same epoch and capabilities, whichever way setuid went */
	return RES(err, !self_same());
}

static int do_s2p(const char *arg)
{
	int err = 0;

	(void)arg;
	if (syscall(SYS_keyctl, 1 /* JOIN_SESSION_KEYRING */, 0) < 0)
		return RES(errno, 1);
	step_begin();
	if (syscall(SYS_keyctl, 18 /* SESSION_TO_PARENT */) < 0)
		err = errno;
	step_end(err);
	return RES(err, 0);
}

static int do_open(const char *path)
{
	int err = 0, f;

	step_begin();
	f = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (f < 0)
		err = errno;
	step_end(err);
	if (f >= 0)
		close(f);
	return RES(err, 0);
}

static int do_connect(const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int err = 0, s;

	sin.sin_port = htons((uint16_t)atoi(port));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return RES(errno, 1);
	step_begin();
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)))
		err = errno;
	step_end(err);
	close(s);
	return RES(err, 0);
}

static int do_write(void)
{
	int err = 0;

	if (held < 0)
		return RES(EBADF, 1);
	step_begin();
	if (write(held, "x", 1) != 1)
		err = errno;
	step_end(err);
	return RES(err, 0);
}

int cft_agent_extra(char *cmd)
{
	char what[32], arg[128] = "";
	int r;

	if (sscanf(cmd, "fhold %127s", arg) == 1) {
		if (held >= 0)
			close(held);
		held = open(arg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		return held < 0 ? errno : 0;
	}
	if (!strcmp(cmd, "fwrite"))
		return held < 0 ? EBADF : write(held, "x", 1) == 1 ? 0 : errno;
	if (sscanf(cmd, "fi %31s %127s", what, arg) < 1)
		return EINVAL;
	/* every result is checked against the state before the attempt */
	if (self_state(&self_before))
		return RES(EIO, 1);
	if (!strcmp(what, "fork"))
		r = do_fork();
	else if (!strcmp(what, "setuid"))
		r = in_child(do_setuid, arg);
	else if (!strcmp(what, "session-to-parent"))
		/* our new credentials are installed on our return from wait */
		r = in_child(do_s2p, arg);
	else if (!strcmp(what, "open"))
		r = do_open(arg);
	else if (!strcmp(what, "connect"))
		r = do_connect(arg);
	else if (!strcmp(what, "write"))
		r = do_write();
	else
		return EINVAL;
	if (!self_same())
		r |= RES(0, 1);
	return r;
}

/* ---- the operations ---- */

static struct cft_nl rnl;	/* requests under injection */
static struct cft_nl snl;	/* snapshots and setup */
static struct capfence_events *evl;	/* events listener */
static struct capfence_key *key;
static uint64_t e1, e2;		/* the agents' epoch, another one */
static struct cft_agent agent_a, agent_b;
static uint16_t udp_port;
static uint64_t next_cap = 0x7a00000000000000ULL;
static int fi_fd;
static unsigned int max_n = 3000;

struct op;
/* One attempt: fills err (0 or errno) and inj (injected failure or not). */
struct attempt {
	int err;
	int inj;
	bool bad;		/* a check inside the attempt failed */
	bool killed;		/* the process was killed (after exec) */
	bool ack_lost;		/* ENOBUFS: the ACK could not be allocated */
	bool traced;
	struct inj in;		/* where it was injected */
	char why[512];
};

/* Where the failure of @a was injected, once. */
static void attempt_trace(struct attempt *a)
{
	if (a->traced)
		return;
	a->traced = true;
	if (a->inj == 0 || !trace_read(&a->in))
		a->in.key[0] = a->in.cf[0] = '\0';
	a->ack_lost = a->in.ack;
}

struct op {
	const char *name;
	int (*run)(struct op *op, unsigned int n, struct attempt *a);
	int expect;		/* the clean result: 0 or an errno */
	const char *arg;
	/* results */
	unsigned int attempts, injected, failures;
	int nkeys, ncf;
	char *keys[MAX_KEYS];
	char *cfs[MAX_KEYS];
	bool keycf[MAX_KEYS];
	int errs[8][2];
	int nerrs;
	int killed;
};

static bool allowed_errno(int err)
{
	return err == ENOMEM || err == ENOBUFS || err == EAGAIN;
}

static void reopen(struct cft_nl *n)
{
	cft_nl_close(n);
	if (cft_open(n))
		ksft_exit_fail_msg("cannot reopen the netlink socket\n");
}

static void drain_events(void)
{
	char buf[8192];

	while (recv(capfence_events_fd(evl), buf, sizeof(buf),
		    MSG_DONTWAIT) > 0)
		;
}

/* Send @nlh on @nl with the Nth allocation failing. */
static int talk_armed(struct nlmsghdr *nlh, unsigned int n, struct attempt *a)
{
	int err;

	fi_arm(fi_fd, n);
	err = cft_nl_talk(&rnl, nlh, NULL, NULL);
	a->inj = fi_disarm(fi_fd);
	a->err = -err;
	if (err)
		reopen(&rnl);
	attempt_trace(a);
	return 0;
}

static struct snap before;

/* The common check of a control operation: whole on failure. */
static void check_whole(struct op *op, struct attempt *a)
{
	if (a->err == op->expect)
		return;
	/*
	 * A failure injected outside capfence.ko fails the syscall the way
	 * that subsystem does (an exec's argument pages: E2BIG, its ELF
	 * headers: ENOEXEC); capfence's own must say ENOMEM. Either way the
	 * state must be whole.
	 */
	if (!allowed_errno(a->err) && (a->in.cf[0] || !a->traced || a->inj != 1)) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why), "errno %d (%s), expected %d or ENOMEM",
			 a->err, strerror(a->err), op->expect);
		return;
	}
	if (a->err == ENOBUFS && a->ack_lost)
		return;
	if (!state_equals(&snl, &before, a->why, sizeof(a->why)))
		a->bad = true;
}

static int op_status(struct op *op, unsigned int n, struct attempt *a)
{
	talk_armed(cft_nl_req(&rnl, CAPFENCE_CMD_STATUS_GET, 0), n, a);
	(void)op;
	return 0;
}

static int op_task_get(struct op *op, unsigned int n, struct attempt *a)
{
	struct nlmsghdr *nlh = cft_nl_req(&rnl, CAPFENCE_CMD_TASK_GET, 0);

	(void)op;
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)agent_a.pid);
	return talk_armed(nlh, n, a);
}

static int op_epoch_get(struct op *op, unsigned int n, struct attempt *a)
{
	struct nlmsghdr *nlh;

	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_EPOCH_GET, op->arg ? NLM_F_DUMP : 0);
	if (!op->arg)
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e1);
	return talk_armed(nlh, n, a);
}

static uint32_t next_key_id = 100;

static int op_key_install(struct op *op, unsigned int n, struct attempt *a)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct nlmsghdr *nlh;
	struct capfence_key *k;

	(void)op;
	memset(raw, 0x33, sizeof(raw));
	if (capfence_key_from_bytes(next_key_id, raw, &k))
		return -EIO;
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_KEY_INSTALL, 0);
	capfence_key_bytes(k, raw);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, next_key_id);
	mnl_attr_put(nlh, CAPFENCE_A_KEY, sizeof(raw), raw);
	capfence_key_free(k);
	talk_armed(nlh, n, a);
	/* leave no key behind for the next attempt */
	if (!a->err || a->ack_lost)
		cft_key_remove(&snl, next_key_id);
	next_key_id++;
	return 0;
}

static int op_key_remove(struct op *op, unsigned int n, struct attempt *a)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct nlmsghdr *nlh;
	struct capfence_key *k;
	int err;

	(void)op;
	memset(raw, 0x44, sizeof(raw));
	if (capfence_key_from_bytes(99, raw, &k))
		return -EIO;
	err = cft_key_install(&snl, k);
	capfence_key_free(k);
	if (err && err != -EEXIST)
		return err;
	if (settle(&snl, &before))
		return -EIO;
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_KEY_REMOVE, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, 99);
	return talk_armed(nlh, n, a);
}

static int install_epoch(struct cft_nl *n, uint64_t id)
{
	static const char *const rules[] = {
		"fs:write=token:" FI_DIR ",/var/fi",
		"fs:read=open",
		"net:connect=token:127.0.0.0/8,10.0.0.0/8",
		"net:bind=open",
	};

	return cft_epoch_install(n, id, rules, 4, NULL, 0);
}

static int op_epoch_install(struct op *op, unsigned int n, struct attempt *a)
{
	static const char *const rules[] = {
		"fs:write=token:" FI_DIR ",/var/fi",
		"fs:read=open",
		"net:connect=token:127.0.0.0/8,10.0.0.0/8",
		"net:bind=open",
	};
	/* a syscall policy: the module keeps any program as it is sent */
	static const uint32_t allow_all[2] = { 0x06, 0x7fff0000 };
	struct nlmsghdr *nlh;
	struct nlattr *arr;
	struct capfence_epoch e;
	char err[256];
	int c;

	if (capfence_epoch_parse_rules(&e, 1, rules, 4, err, sizeof(err)))
		return -EINVAL;
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, cft_next_epoch(&snl));
	if (op->arg && !strcmp(op->arg, "seccomp"))
		mnl_attr_put(nlh, CAPFENCE_A_SECCOMP_PROG, sizeof(allow_all), allow_all);
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
	for (c = 1; c <= CAPFENCE_CLASS_MAX; c++) {
		const struct capfence_rule *r = &e.rules[c];
		struct nlattr *nest;
		uint8_t i;

		if (r->kind == CAPFENCE_RULE_DENY)
			continue;
		nest = mnl_attr_nest_start(nlh, (uint16_t)c);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, (uint8_t)c);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, r->kind);
		for (i = 0; i < r->n; i++) {
			const struct capfence_constraint *k = &r->constraints[i];

			if (k->kind == CAPFENCE_CONSTRAINT_NET)
				mnl_attr_put(nlh, CAPFENCE_RULE_A_NET,
					     sizeof(k->net), &k->net);
			else
				mnl_attr_put_strz(nlh, CAPFENCE_RULE_A_PATH,
						  k->path.s);
		}
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, arr);
	return talk_armed(nlh, n, a);
}

static int op_epoch_activate(struct op *op, unsigned int n, struct attempt *a)
{
	uint64_t id = cft_next_epoch(&snl);
	struct nlmsghdr *nlh;

	(void)op;
	if (install_epoch(&snl, id) || settle(&snl, &before))
		return -EIO;
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_EPOCH_ACTIVATE, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
	return talk_armed(nlh, n, a);
}

/* a token attribute of type @type: CAPFENCE_A_TOKEN, or a member's index */
static int put_token(struct nlmsghdr *nlh, uint16_t type, const char *class_name,
		     uint64_t epoch, const char *c, uint64_t cap_id)
{
	uint8_t buf[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_token t;
	int len;

	if (cft_mint(key, class_name, epoch, c, cap_id, &t))
		return -EINVAL;
	len = capfence_token_encode_bin(&t, buf, sizeof(buf));
	if (len < 0)
		return len;
	mnl_attr_put(nlh, type, (size_t)len, buf);
	return 0;
}

/* delegate: plain, from a holder, rejected (epoch_mismatch), dry run */
static int op_delegate(struct op *op, unsigned int n, struct attempt *a)
{
	struct nlmsghdr *nlh = cft_nl_req(&rnl, CAPFENCE_CMD_DELEGATE, 0);
	const char *how = op->arg;
	uint64_t cap = next_cap++;

	if (!strcmp(how, "from")) {
		/* agent A holds cap 0x1002; B receives it from A */
		if (put_token(nlh, CAPFENCE_A_TOKEN, "net:connect", e1,
			      "127.0.0.0/8", 0x1002))
			return -EINVAL;
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)agent_b.pid);
		mnl_attr_put_u32(nlh, CAPFENCE_A_FROM_PID, (uint32_t)agent_a.pid);
	} else {
		if (put_token(nlh, CAPFENCE_A_TOKEN, "net:connect",
			      !strcmp(how, "mismatch") ? e2 : e1,
			      "127.0.0.0/8", cap))
			return -EINVAL;
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)agent_a.pid);
		if (!strcmp(how, "dry-run"))
			mnl_attr_put(nlh, CAPFENCE_A_DRY_RUN, 0, NULL);
	}
	return talk_armed(nlh, n, a);
}

static int op_revoke(struct op *op, unsigned int n, struct attempt *a)
{
	struct nlmsghdr *nlh = cft_nl_req(&rnl, CAPFENCE_CMD_REVOKE, 0);

	(void)op;
	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, next_cap++);
	return talk_armed(nlh, n, a);
}

/* Revocation of the capability a bound task holds a file open under. */
static int op_revoke_held(struct op *op, unsigned int n, struct attempt *a)
{
	uint64_t cap = next_cap++;
	struct nlmsghdr *nlh;
	struct cft_reply r;
	struct capfence_token t;
	bool applied;
	int res;

	/* agent B holds no other fs:write grant: the file is tracked under cap */
	if (cft_mint(key, "fs:write", e1, FI_DIR, cap, &t) ||
	    cft_delegate(&snl, &t, agent_b.pid, 0, false, &r) ||
	    cft_agent_do(&agent_b, "fhold " FI_DIR "/held") ||
	    settle(&snl, &before))
		return -EIO;
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_REVOKE, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, cap);
	talk_armed(nlh, n, a);
	applied = !a->err || a->ack_lost;
	if (!applied)
		check_whole(op, a);
	/* the held file follows the revocation, or the lack of one */
	res = cft_agent_do(&agent_b, "fwrite");
	if (!a->bad && res != (applied ? EACCES : 0)) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why),
			 "write to the held file gave %d after revoke gave %d",
			 res, a->err);
	}
	if (!applied)
		cft_revoke(&snl, cap, &r);
	return 1;
}

/* EXEC_SET with tokens, in a child: the pending epoch is its own. */
static int op_exec_set(struct op *op, unsigned int n, struct attempt *a)
{
	int p[2], q[2], res[2] = { -1, -1 };
	char go = 'g';
	pid_t pid;

	(void)op;
	if (pipe2(p, O_CLOEXEC) || pipe2(q, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (!pid) {
		struct nlmsghdr *nlh;
		struct nlattr *arr;
		struct cft_nl cn;
		int fd = fi_open();

		close(p[0]);
		close(q[1]);
		if (cft_open(&cn) || read(q[0], &go, 1) != 1)
			_exit(1);
		nlh = cft_nl_req(&cn, CAPFENCE_CMD_EXEC_SET, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e1);
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_TOKENS);
		put_token(nlh, 1, "net:connect", e1, "127.0.0.0/8", 0x2001);
		put_token(nlh, 2, "fs:write", e1, FI_DIR, 0x2002);
		mnl_attr_nest_end(nlh, arr);
		fi_arm(fd, n);
		res[0] = -cft_nl_talk(&cn, nlh, NULL, NULL);
		res[1] = fi_disarm(fd);
		if (write(p[1], res, sizeof(res)) != sizeof(res))
			_exit(1);
		/* stay until the driver has read our state */
		while (read(q[0], &go, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[1]);
	close(q[0]);
	tracked[ntracked++] = pid;
	if (settle(&snl, &before) || write(q[1], &go, 1) != 1 ||
	    read(p[0], res, sizeof(res)) != sizeof(res)) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why), "the EXEC_SET child failed");
	}
	a->err = res[0];
	a->inj = res[1];
	attempt_trace(a);
	/* while the child (and its pending epoch) is still there */
	if (!a->bad)
		check_whole(op, a);
	close(q[1]);
	close(p[0]);
	waitpid(pid, NULL, 0);
	ntracked--;
	return 1;
}

/* An execve that binds: a launcher with a pending epoch execs the probe. */
static int op_exec_bind(struct op *op, unsigned int n, struct attempt *a)
{
	int p[2], q[2], st, ret;
	char line[64], go = 'g';
	pid_t pid;

	if (pipe2(p, 0) || pipe2(q, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (!pid) {
		struct cft_nl cn;
		struct nlmsghdr *nlh;
		struct nlattr *arr;
		char *argv[] = { "cf-faults-probe", NULL };
		int fd = fi_open(), err, inj;

		close(p[0]);
		close(q[1]);
		if (cft_open(&cn))
			_exit(1);
		nlh = cft_nl_req(&cn, CAPFENCE_CMD_EXEC_SET, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e1);
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_TOKENS);
		put_token(nlh, 1, "net:connect", e1, "127.0.0.0/8", 0x2001);
		mnl_attr_nest_end(nlh, arr);
		if (cft_nl_talk(&cn, nlh, NULL, NULL))
			_exit(1);
		cft_nl_close(&cn);
		if (dup2(p[1], 3) != 3 || write(3, "R\n", 2) != 2 ||
		    read(q[0], &go, 1) != 1)
			_exit(1);
		fi_arm(fd, n);
		execv(PROBE, argv);
		err = errno;
		inj = fi_disarm(fd);
		dprintf(3, "E %d %d\n", err, inj);
		while (read(q[0], &go, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[1]);
	close(q[0]);
	tracked[ntracked++] = pid;
	if (cft_read_line(p[0], line, sizeof(line), 20000) < 0 ||
	    strcmp(line, "R") || settle(&snl, &before) ||
	    write(q[1], &go, 1) != 1) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why), "the launcher failed");
		goto out;
	}
	ret = cft_read_line(p[0], line, sizeof(line), 20000);
	if (ret == -ETIMEDOUT) {
		/* neither a report nor an end: a hang, never taken for a kill */
		a->bad = true;
		snprintf(a->why, sizeof(a->why),
			 "the new image neither reported nor ended within %d ms",
			 cft_ms(20000));
		goto out;
	}
	if (ret < 0) {
		/* killed past the point of no return: nothing runs unbound */
		a->killed = true;
		a->inj = 1;
		goto done;
	}
	if (line[0] == 'E') {
		sscanf(line, "E %d %d", &a->err, &a->inj);
		attempt_trace(a);
		check_whole(op, a);
	} else {
		uint64_t epoch = 0;
		long left = strtol(line + 2, NULL, 10);

		a->inj = left <= 0;
		a->err = 0;
		/* the image runs: it must be bound, with its token */
		if (cft_task_epoch(&snl, pid, &epoch) || epoch != e1) {
			a->bad = true;
			snprintf(a->why, sizeof(a->why),
				 "exec succeeded but the image is bound to %llu, not %llu",
				 (unsigned long long)epoch,
				 (unsigned long long)e1);
		}
	}
done:
	/*
	 * The execve returned into the new image, and a later allocation of
	 * its start failed: the exec itself completed without one.
	 */
	attempt_trace(a);
	if (a->inj == 1 && a->traced && a->in.key[0] && !a->in.execve)
		a->inj = 0;
out:
	kill(pid, SIGKILL);
	close(q[1]);
	close(p[0]);
	waitpid(pid, &st, 0);
	ntracked--;
	return 1;
}

/* Run agent command @cmd with the Nth allocation of its armed step failing. */
static int agent_step(struct cft_agent *ag, const char *cmd, unsigned int n,
		      struct attempt *a)
{
	char line[128], path[64];
	int tid, fd, res;

	dprintf(ag->in, "%s\n", cmd);
	if (cft_read_line(ag->out, line, sizeof(line), 20000) < 0)
		return -1;
	if (sscanf(line, "A %d", &tid) != 1)
		return sscanf(line, "R %d", &res) == 1 ? res : -1;
	snprintf(path, sizeof(path), "/proc/%d/fail-nth", tid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fi_arm(fd, n) || write(ag->in, "g", 1) != 1 ||
	    cft_read_line(ag->out, line, sizeof(line), 60000) < 0 ||
	    sscanf(line, "D %d", &a->err) != 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	a->inj = fi_disarm(fd);
	close(fd);
	if (write(ag->in, "c", 1) != 1 ||
	    cft_read_line(ag->out, line, sizeof(line), 20000) < 0 ||
	    sscanf(line, "R %d", &res) != 1)
		return -1;
	return res;
}

/* Hook paths of a bound agent. */
static int op_agent(struct op *op, unsigned int n, struct attempt *a)
{
	struct cft_agent *ag = &agent_a;
	char cmd[160];
	int res;

	if (!strcmp(op->name, "write after revoke")) {
		static bool ready;
		uint64_t cap = 0x1003;
		struct cft_reply r;
		struct capfence_token t;

		/* once: a held file whose grant is revoked */
		if (!ready && (cft_mint(key, "fs:write", e1, FI_DIR, cap, &t) ||
			       cft_delegate(&snl, &t, agent_b.pid, 0, false, &r) ||
			       cft_agent_do(&agent_b, "fhold " FI_DIR "/revoked") ||
			       cft_revoke(&snl, cap, &r)))
			return -EIO;
		ag = &agent_b;
		if (!ready && settle(&snl, &before))
			return -EIO;
		ready = true;
	}
	snprintf(cmd, sizeof(cmd), "fi %s", op->arg);
	res = agent_step(ag, cmd, n, a);
	if (res < 0) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why), "the agent died or did not answer");
		return 1;
	}
	if (RES_ERR(res) != (unsigned int)a->err) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why), "agent result %d, step %d",
			 RES_ERR(res), a->err);
		return 1;
	}
	attempt_trace(a);
	if (RES_BAD(res)) {
		a->bad = true;
		snprintf(a->why, sizeof(a->why),
			 "a bound task's epoch or capabilities changed (errno %d)",
			 a->err);
		return 1;
	}
	check_whole(op, a);
	return 1;
}

/* above any fleet revision the module has seen in this boot */
static uint64_t next_fleet_rev = 1ull << 40;

/* A FLEET_SET request: fleet mode with bounds @ms (0: off), at @rev. */
static struct nlmsghdr *fleet_set_req(struct cft_nl *nl, uint32_t ms,
				      uint64_t rev)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_FLEET_SET, 0);
	struct nlattr *nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);

	mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_STALE_MS, ms);
	mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_DENY_MS, ms);
	if (ms)
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_FRESH, 0, NULL);
	mnl_attr_nest_end(nlh, nest);
	if (rev)
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, rev);
	return nlh;
}

/*
 * "revoke": a REVOKE at a fleet revision (the change and the revision are
 * applied together, and announced). "set": FLEET_SET at a new revision
 * into fleet mode (a revision and a state change announced), then, not
 * armed, out of it again without a revision: fleet mode's confirmation
 * age moves, and the state must stand still between attempts.
 */
static int op_fleet(struct op *op, unsigned int n, struct attempt *a)
{
	struct nlmsghdr *nlh;

	if (strcmp(op->arg, "revoke")) {
		talk_armed(fleet_set_req(&rnl, CAPFENCE_FLEET_MAX_MS,
					 next_fleet_rev++), n, a);
		return cft_nl_talk(&snl, fleet_set_req(&snl, 0, 0), NULL, NULL);
	}
	nlh = cft_nl_req(&rnl, CAPFENCE_CMD_REVOKE, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, next_cap++);
	mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, next_fleet_rev++);
	return talk_armed(nlh, n, a);
}

static char port_arg[16];

#define OP(n, f, e, a) { .name = n, .run = f, .expect = e, .arg = a }

static struct op ops[] = {
	OP("STATUS_GET", op_status, 0, NULL),
	OP("KEY_INSTALL", op_key_install, 0, NULL),
	OP("KEY_REMOVE", op_key_remove, 0, NULL),
	OP("EPOCH_INSTALL", op_epoch_install, 0, NULL),
	OP("EPOCH_INSTALL with a syscall policy", op_epoch_install, 0, "seccomp"),
	OP("EPOCH_ACTIVATE", op_epoch_activate, 0, NULL),
	OP("EPOCH_GET", op_epoch_get, 0, NULL),
	OP("EPOCH_GET dump", op_epoch_get, 0, "dump"),
	OP("EXEC_SET", op_exec_set, 0, NULL),
	OP("DELEGATE", op_delegate, 0, "plain"),
	OP("DELEGATE from holder", op_delegate, 0, "from"),
	OP("DELEGATE epoch_mismatch", op_delegate, ESTALE, "mismatch"),
	OP("DELEGATE dry run", op_delegate, 0, "dry-run"),
	OP("REVOKE", op_revoke, 0, NULL),
	OP("REVOKE held file", op_revoke_held, 0, NULL),
	OP("TASK_GET", op_task_get, 0, NULL),
	OP("fork", op_agent, 0, "fork"),
	OP("exec that binds", op_exec_bind, 0, NULL),
	OP("setuid", op_agent, 0, "setuid"),
	OP("keyctl session-to-parent", op_agent, 0, "session-to-parent"),
	OP("open under a capability", op_agent, 0, "open " FI_DIR "/f"),
	OP("connect under a capability", op_agent, 0, port_arg),
	OP("write after revoke", op_agent, EACCES, "write"),
	/* last: fleet mode must not be on while the ops above run */
	OP("REVOKE at a fleet revision", op_fleet, 0, "revoke"),
	OP("FLEET_SET", op_fleet, 0, "set"),
};

static void note_errno(struct op *op, int err)
{
	int i;

	for (i = 0; i < op->nerrs; i++)
		if (op->errs[i][0] == err) {
			op->errs[i][1]++;
			return;
		}
	if (op->nerrs < 8) {
		op->errs[op->nerrs][0] = err;
		op->errs[op->nerrs++][1] = 1;
	}
}

static void note_point(struct op *op, const struct inj *in)
{
	int i;

	for (i = 0; i < op->nkeys; i++)
		if (!strcmp(op->keys[i], in->key))
			return;
	if (op->nkeys == MAX_KEYS)
		return;
	op->keys[op->nkeys] = strdup(in->key);
	op->keycf[op->nkeys++] = in->cf[0];
	if (!in->cf[0])
		return;
	for (i = 0; i < op->ncf; i++)
		if (!strcmp(op->cfs[i], in->cf))
			return;
	op->cfs[op->ncf++] = strdup(in->cf);
}

static bool verbose;

/*
 * One sweep, N = 1, 2, ... An allocation sequence is not quite the same
 * from one attempt to the next (a slab refilled or not, the debug
 * kernel's own bookkeeping), so one sweep can step over a point; short
 * operations are swept three times.
 */
static void sweep(struct op *op)
{
	unsigned int n;

	for (n = 1; n <= max_n; n++) {
		struct attempt a = { 0 };
		int ret;

		uint64_t t0 = cft_now_ns(), t1, t2;

		drain_events();
		ret = settle(&snl, &before);
		trace_clear();
		t1 = cft_now_ns();
		if (!ret)
			ret = op->run(op, n, &a);
		t2 = cft_now_ns();
		if (ret < 0) {
			op->failures++;
			ksft_print_msg("%s n=%u: setup failed: %s\n", op->name,
				       n, strerror(-ret));
			break;
		}
		op->attempts++;
		attempt_trace(&a);
		if (ret == 0)	/* checked here, not by the operation */
			check_whole(op, &a);
		if (a.killed)
			op->killed++;
		if (a.err)
			note_errno(op, a.err);
		if (a.inj)
			op->injected++;
		if (a.inj && a.in.key[0])
			note_point(op, &a.in);
		if (verbose)
			ksft_print_msg("%s n=%u: [%llu+%llu+%llu ms] err %d inj %d %s%s | %s | %s\n",
				       op->name, n,
				       (unsigned long long)(t1 - t0) / 1000000,
				       (unsigned long long)(t2 - t1) / 1000000,
				       (unsigned long long)(cft_now_ns() - t2) / 1000000,
				       a.err, a.inj,
				       a.bad ? "BAD " : "", a.why, a.in.key,
				       a.in.cf);
		if (a.bad) {
			op->failures++;
			ksft_print_msg("%s n=%u: %s (injected at %s)\n", op->name,
				       n, a.why, a.in.key[0] ? a.in.key : "?");
		}
		kmsg_check(op->name, n);
		if (a.inj < 0) {
			op->failures++;
			ksft_print_msg("%s n=%u: fail-nth could not be read back\n",
				       op->name, n);
			break;
		}
		if (a.inj == 0 || op->failures > 20)
			break;
	}
	if (n > max_n) {
		op->failures++;
		ksft_print_msg("%s: still injecting after %u attempts\n",
			       op->name, max_n);
	}
}

static void run_op(struct op *op)
{
	unsigned int first;
	int pass;

	sweep(op);
	first = op->attempts;
	for (pass = 1; pass < 3 && first < 60 && !op->failures; pass++)
		sweep(op);
}

static int setup(void)
{
	struct capfence_token t[2];
	struct cft_reply r;
	int fd;

	if (cft_open(&rnl) || cft_open(&snl) ||
	    capfence_events_open(&evl, NULL, 0))
		return -EIO;
	key = cft_test_key(&snl);
	if (!key)
		return -EIO;
	e1 = cft_next_epoch(&snl);
	e2 = e1 + 1;
	if (install_epoch(&snl, e1) || install_epoch(&snl, e2))
		return -EIO;
	mkdir(FI_DIR, 0755);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	{
		struct sockaddr_in sin = { .sin_family = AF_INET };
		socklen_t len = sizeof(sin);

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    getsockname(fd, (struct sockaddr *)&sin, &len))
			return -EIO;
		udp_port = ntohs(sin.sin_port);
	}
	snprintf(port_arg, sizeof(port_arg), "connect %u", udp_port);
	if (cft_mint(key, "fs:write", e1, FI_DIR, 0x1001, &t[0]) ||
	    cft_mint(key, "net:connect", e1, "127.0.0.0/8", 0x1002, &t[1]))
		return -EINVAL;
	if (cft_agent_spawn(&agent_a, e1, t, 2, &r) ||
	    cft_agent_spawn(&agent_b, e1, NULL, 0, &r) ||
	    cft_wait_bound(&snl, agent_a.pid, e1) ||
	    cft_wait_bound(&snl, agent_b.pid, e1))
		return -EIO;
	tracked[ntracked++] = agent_a.pid;
	tracked[ntracked++] = agent_b.pid;
	fi_fd = fi_open();
	return fi_fd < 0 ? -errno : 0;
}

static const char *only[32];
static int nonly;

static bool selected(const char *name)
{
	int i;

	if (!nonly)
		return true;
	for (i = 0; i < nonly; i++)
		if (!strcmp(only[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	size_t i, nops = sizeof(ops) / sizeof(ops[0]);
	unsigned int tp = 0, tc = 0;
	int k, err;

	if (argc > 1 && !strcmp(argv[1], "--agent"))
		return cft_agent_main();
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--only") && k + 1 < argc)
			only[nonly++] = argv[++k];
		else if (!strcmp(argv[k], "--max") && k + 1 < argc)
			max_n = (unsigned int)atoi(argv[++k]);
		else if (!strcmp(argv[k], "-v"))
			verbose = true;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan((unsigned int)nops + 3);
	if (access("/proc/thread-self/fail-nth", F_OK))
		ksft_exit_skip("no /proc/thread-self/fail-nth: kernel without CONFIG_FAULT_INJECTION\n");
	err = trace_setup();
	if (err)
		ksft_exit_fail_msg("tracefs return probes on should_failslab, should_fail_alloc_page: %s\n",
				   strerror(-err));
	{
		char why[256];

		err = cft_establish(why, sizeof(why));
		if (err)
			ksft_exit_fail_msg("starting state: %s\n", why);
		if (why[0])
			ksft_print_msg("starting state: %s\n", why);
	}
	err = setup();
	if (err)
		ksft_exit_fail_msg("setup: %s\n", strerror(-err));
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg >= 0)
		lseek(kmsg, 0, SEEK_END);
	for (i = 0; i < nops; i++) {
		struct op *op = &ops[i];
		char errs[128] = "";
		int j, c;
		size_t l;

		if (!selected(op->name)) {
			ksft_test_result_skip("%s: not selected\n", op->name);
			continue;
		}
		run_op(op);
		for (j = 0; j < op->nerrs; j++) {
			l = strlen(errs);
			snprintf(errs + l, sizeof(errs) - l, "%s%s x%d",
				 j ? ", " : "", strerrorname_np(op->errs[j][0]) ?: "?",
				 op->errs[j][1]);
		}
		for (j = 0, c = 0; j < op->nkeys; j++)
			c += op->keycf[j];
		ksft_test_result(!op->failures,
				 "%s: %u attempts, %d points (%d in capfence.ko)%s%s%s\n",
				 op->name, op->attempts, op->nkeys, c,
				 op->nerrs ? "; errors " : "", errs,
				 op->killed ? "; killed after exec" : "");
	}
	/* the table and the capfence frames for the site map */
	ksft_print_msg("%-28s %8s %8s %10s %s\n", "operation", "attempts",
		       "points", "capfence", "capfence frames");
	for (i = 0; i < nops; i++) {
		struct op *op = &ops[i];
		int c = 0, j;

		if (!op->attempts)
			continue;
		for (j = 0; j < op->nkeys; j++)
			c += op->keycf[j];
		ksft_print_msg("%-28s %8u %8d %10d %d\n", op->name, op->attempts,
			       op->nkeys, c, op->ncf);
		tp += (unsigned int)op->nkeys;
		tc += (unsigned int)c;
	}
	for (i = 0; i < nops; i++)
		for (k = 0; k < ops[i].ncf; k++)
			printf("# site %s | %s\n", ops[i].cfs[k], ops[i].name);
	ksft_test_result(tp > 0 && tc > 0,
			 "injection points reached: %u, %u inside capfence.ko\n",
			 tp, tc);
	ksft_test_result(!kernel_reports, "no WARN, BUG, KASAN or lockdep report\n");
	cft_agent_stop(&agent_b);
	ksft_test_result(cft_agent_stop_clean(&agent_a),
			 "the bound agents end cleanly\n");
	ksft_finished();
}
