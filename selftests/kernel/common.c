// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the VM tests; see common.h. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <sodium.h>
#include "common.h"

/*
 * What each thread of a test waits for: a slot per thread (a test that
 * runs threads, stress_test's, has several waits at once), each with two
 * buffers, so that the watchdog (a signal handler) never reads one half
 * written.
 */
#define WAIT_SLOTS 16

struct wait_slot {
	char what[2][192];
	volatile sig_atomic_t cur, active;
	uint64_t ns;
	pid_t tid;
};

static struct wait_slot wait_slots[WAIT_SLOTS];
static int wait_slots_used;
static __thread struct wait_slot *wait_mine;

static struct wait_slot *wait_slot(void)
{
	int i;

	if (!wait_mine) {
		i = __atomic_fetch_add(&wait_slots_used, 1, __ATOMIC_RELAXED);
		/* past the table, threads share its last slot */
		wait_mine = &wait_slots[i < WAIT_SLOTS ? i : WAIT_SLOTS - 1];
		wait_mine->tid = (pid_t)syscall(SYS_gettid);
	}
	return wait_mine;
}

/*
 * A helper's own wait is marked only when the test has not marked a
 * wider one (the test's says more: "the hooks to detach", not "the
 * module's answer to command 3"); the helper clears only its own.
 */
#define HELPER_WAITING(...) \
	bool helper_mark = !wait_slot()->active; \
	if (helper_mark) \
		cft_waiting(__VA_ARGS__)
#define HELPER_WAITED() \
	do { if (helper_mark) cft_waited(); } while (0)

int cft_nl_open(struct cft_nl *nl)
{
	int err;

	memset(nl, 0, sizeof(*nl));
	nl->buf = calloc(1, CFT_NL_BUFSZ);
	if (!nl->buf)
		return -ENOMEM;
	err = capfence_client_open(&nl->c, nl->ext, sizeof(nl->ext));
	if (err) {
		free(nl->buf);
		nl->buf = NULL;
		return err;
	}
	nl->family = capfence_client_family(nl->c);
	nl->fd = capfence_client_fd(nl->c);
	return 0;
}

void cft_nl_close(struct cft_nl *nl)
{
	capfence_client_close(nl->c);
	free(nl->buf);
	nl->c = NULL;
	nl->buf = NULL;
}

struct nlmsghdr *cft_nl_req(struct cft_nl *nl, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = nl->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = nl->family == GENL_ID_CTRL ? 1 : CAPFENCE_GENL_VERSION;
	return nlh;
}

int cft_nl_talk(struct cft_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	int err;

	nl->ext[0] = '\0';
	HELPER_WAITING("the module's answer to command %u", g->cmd);
	err = capfence_client_request(nl->c, nlh, cb, data, nl->ext,
				      sizeof(nl->ext));
	HELPER_WAITED();
	return err;
}

int cft_nl_status(struct cft_nl *nl, struct capfence_status *s)
{
	nl->ext[0] = '\0';
	return capfence_client_status(nl->c, s, nl->ext, sizeof(nl->ext));
}

struct cft_stat {
	int attr;
	uint64_t *v;
	bool found;
};

static int stat_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	struct cft_stat *s = data;

	if (cft_nl_parse(nlh, tb) || !tb[CAPFENCE_A_STATS] ||
	    cft_nl_parse_nested(tb[CAPFENCE_A_STATS], st, &cf_attrs_stats) ||
	    !st[s->attr] || mnl_attr_validate(st[s->attr], MNL_TYPE_U64))
		return MNL_CB_OK;
	*s->v = mnl_attr_get_u64(st[s->attr]);
	s->found = true;
	return MNL_CB_OK;
}

int cft_nl_stat(struct cft_nl *nl, int attr, uint64_t *v)
{
	struct cft_stat s = { attr, v, false };
	int err;

	if (attr <= 0 || attr > CAPFENCE_STATS_A_MAX)
		return -EINVAL;
	err = cft_nl_talk(nl, cft_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0),
			  stat_cb, &s);
	return err ?: s.found ? 0 : -ENOENT;
}

int cft_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	return capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb);
}

int cft_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
			const struct cf_attr_set *set)
{
	return capfence__attrs_parse_nest(set, nest, tb);
}

static uint64_t u64_or0(const struct nlattr *a)
{
	return a ? mnl_attr_get_u64(a) : 0;
}

int cft_open(struct cft_nl *nl)
{
	if (sodium_init() < 0)
		return -EIO;
	return cft_nl_open(nl);
}

uint64_t cft_next_epoch(struct cft_nl *nl)
{
	struct capfence_status s;

	if (cft_nl_status(nl, &s))
		return 0;
	return s.max_epoch + 1;
}

int cft_key_install(struct cft_nl *nl, const struct capfence_key *k)
{
	nl->ext[0] = '\0';
	return capfence_client_key_install(nl->c, k, nl->ext, sizeof(nl->ext));
}

int cft_key_remove(struct cft_nl *nl, uint32_t id)
{
	nl->ext[0] = '\0';
	return capfence_client_key_remove(nl->c, id, nl->ext, sizeof(nl->ext));
}

/* Deterministic per boot: every test process derives the same key. */
struct capfence_key *cft_test_key(struct cft_nl *nl)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct capfence_key *k = NULL;
	int err;

	memset(raw, 0x5a, sizeof(raw));
	if (capfence_key_from_bytes(7, raw, &k))
		return NULL;
	err = cft_key_install(nl, k);
	if (err && err != -EEXIST) {
		capfence_key_free(k);
		return NULL;
	}
	return k;
}

int cft_epoch_install(struct cft_nl *nl, uint64_t id, const char *const *rules,
		      int n, char *ext, size_t extlen)
{
	struct capfence_epoch e;
	char err[256];
	int ret;

	ret = capfence_epoch_parse_rules(&e, id, rules, (size_t)n, err, sizeof(err));
	if (ret) {
		if (ext)
			snprintf(ext, extlen, "%s", err);
		return ret;
	}
	nl->ext[0] = '\0';
	ret = capfence_client_epoch_install(nl->c, &e, nl->ext, sizeof(nl->ext));
	if (ext)
		snprintf(ext, extlen, "%s", ret ? nl->ext : "");
	return ret;
}

int cft_epoch_activate(struct cft_nl *nl, uint64_t id)
{
	nl->ext[0] = '\0';
	return capfence_client_epoch_activate(nl->c, id, nl->ext,
					      sizeof(nl->ext));
}

int cft_mint(const struct capfence_key *k, const char *class_name, uint64_t epoch,
	     const char *constraint, uint64_t cap_id, struct capfence_token *t)
{
	struct capfence_constraint c[CAPFENCE_MAX_CONSTRAINTS];
	char err[256], buf[1024], *save = NULL, *tok;
	size_t n = 0;

	if (constraint) {
		snprintf(buf, sizeof(buf), "%s", constraint);
		for (tok = strtok_r(buf, ",", &save); tok && n < 8;
		     tok = strtok_r(NULL, ",", &save))
			if (capfence_constraint_parse(tok, &c[n++], err, sizeof(err)))
				return -EINVAL;
	}
	return capfence_token_mint(k, capfence_class_from_name(class_name), epoch, c, n,
			     cap_id, t, err, sizeof(err));
}

static int reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	struct cft_reply *r = data;

	cft_nl_parse(nlh, tb);
	if (tb[CAPFENCE_A_REASON])
		r->reason = (int)mnl_attr_get_u32(tb[CAPFENCE_A_REASON]);
	r->cap_id = u64_or0(tb[CAPFENCE_A_CAP_ID]);
	r->epoch_id = u64_or0(tb[CAPFENCE_A_EPOCH_ID]);
	r->fence = u64_or0(tb[CAPFENCE_A_FENCE]);
	return MNL_CB_OK;
}

/* The library's typed result as the tests' reply. */
static int to_reply(const struct capfence_result *res, struct cft_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->err = res->err;
	r->reason = res->reason;
	r->cap_id = res->cap_id;
	r->epoch_id = res->epoch_id;
	r->fence = res->fence;
	snprintf(r->ext, sizeof(r->ext), "%s", res->message);
	return r->err;
}

static int talk_reply(struct cft_nl *nl, struct nlmsghdr *nlh,
		      struct cft_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->reason = -1;
	r->err = cft_nl_talk(nl, nlh, reply_cb, r);
	/* the kernel's extack only, as capfence_result.message has it */
	if (r->err && strcmp(nl->ext, strerror(-r->err)))
		snprintf(r->ext, sizeof(r->ext), "%s", nl->ext);
	return r->err;
}

int cft_delegate_raw(struct cft_nl *nl, const uint8_t *buf, size_t len,
		     pid_t pid, struct cft_reply *r)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_DELEGATE, 0);

	mnl_attr_put(nlh, CAPFENCE_A_TOKEN, len, buf);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
	return talk_reply(nl, nlh, r);
}

int cft_delegate(struct cft_nl *nl, const struct capfence_token *t, pid_t pid,
		 pid_t from, bool dry_run, struct cft_reply *r)
{
	struct capfence_result res;

	HELPER_WAITING("the module's answer to DELEGATE to pid %d", (int)pid);
	capfence_client_delegate(nl->c, t, (uint32_t)pid, (uint32_t)from,
				 dry_run ? CAPFENCE_DELEGATE_DRY_RUN : 0, &res);
	HELPER_WAITED();
	return to_reply(&res, r);
}

int cft_revoke(struct cft_nl *nl, uint64_t cap_id, struct cft_reply *r)
{
	struct capfence_result res;

	HELPER_WAITING("the module's answer to REVOKE of %016llx",
		       (unsigned long long)cap_id);
	capfence_client_revoke(nl->c, cap_id, &res);
	HELPER_WAITED();
	return to_reply(&res, r);
}

int cft_exec_set(struct cft_nl *nl, uint64_t epoch, const struct capfence_token *t,
		 int n, struct cft_reply *r)
{
	struct capfence_result res;

	capfence_client_exec_set(nl->c, epoch, t, (size_t)(n < 0 ? 0 : n), &res);
	return to_reply(&res, r);
}

int cft_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, cft_ms(timeout_ms)) <= 0)
			return -ETIMEDOUT;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return -EPIPE;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return (int)n;
}

int (*cft_pre_exec)(void *arg);
void *cft_pre_exec_arg;

int cft_agent_spawn(struct cft_agent *a, uint64_t epoch,
		    const struct capfence_token *t, int n, struct cft_reply *r)
{
	int in[2], out[2], err;
	char line[128];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -errno;
	a->pid = fork();
	if (a->pid < 0)
		return -errno;
	if (!a->pid) {
		struct cft_nl nl;
		struct cft_reply mine;
		char *argv[] = { "cft-agent", "--agent", NULL };

		if (!r)
			r = &mine;
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		/* epoch 0: an unbound agent, for comparison */
		if (epoch && (cft_open(&nl) ||
			      cft_exec_set(&nl, epoch, t, n, r))) {
			dprintf(1, "E %d %d %s\n", -r->err, r->reason, r->ext);
			_exit(0);
		}
		if (epoch)
			cft_nl_close(&nl);
		if (epoch && cft_pre_exec) {
			err = cft_pre_exec(cft_pre_exec_arg);
			if (err) {
				dprintf(1, "E %d -1 pre-exec step failed\n", -err);
				_exit(0);
			}
		}
		execv("/proc/self/exe", argv);
		dprintf(1, "E %d -1 execv failed\n", errno);
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	a->in = in[1];
	a->out = out[0];
	HELPER_WAITING("agent %d to start (bound to epoch %llu)", (int)a->pid,
		       (unsigned long long)epoch);
	err = cft_read_line(a->out, line, sizeof(line), 10000);
	HELPER_WAITED();
	if (err < 0) {
		int st = cft_agent_stop(a);

		fprintf(stderr, "# agent died before answering: %s %d\n",
			WIFSIGNALED(st) ? "signal" : "exit",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return err;
	}
	if (!strncmp(line, "ready", 5))
		return 0;
	if (r) {
		memset(r, 0, sizeof(*r));
		sscanf(line, "E %d %d %255[^\n]", &r->err, &r->reason, r->ext);
		err = -r->err;
	} else {
		err = -EIO;
	}
	cft_agent_stop(a);
	return err ? err : -EIO;
}

int cft_agent_do(struct cft_agent *a, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n, res;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (write(a->in, line, (size_t)n) != n)
		return -1;
	HELPER_WAITING("agent %d to answer '%.*s'", (int)a->pid, n - 1, line);
	n = cft_read_line(a->out, line, sizeof(line), 20000);
	HELPER_WAITED();
	if (n < 0)
		return -1;
	if (sscanf(line, "R %d", &res) != 1)
		return -1;
	return res;
}

/* Where each thread of @pid is: state, wait channel, kernel stack. */
static void agent_where(pid_t pid)
{
	char path[320], buf[2048];
	struct dirent *d;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, d->d_name);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f)) {
			char *e = strrchr(buf, ')');

			fprintf(stderr, "#   thread %s: state %c\n", d->d_name,
				e && e[1] ? e[2] : '?');
		}
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stack", (int)pid, d->d_name);
		f = fopen(path, "r");
		while (f && fgets(buf, sizeof(buf), f))
			fprintf(stderr, "#     %s", buf);
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
}

int cft_agent_stop(struct cft_agent *a)
{
	uint64_t told = cft_now_ns() + cft_secs(30) * 1000000000ull;
	int status = 0;

	if (a->pid <= 0)
		return 0;
	close(a->in);
	close(a->out);
	HELPER_WAITING("agent %d to exit", (int)a->pid);
	/* an agent slow to exit says where it is, once */
	while (waitpid(a->pid, &status, told ? WNOHANG : 0) == 0) {
		if (cft_now_ns() > told) {
			fprintf(stderr, "# agent %d has not exited %u s after its input closed:\n",
				(int)a->pid, cft_secs(30));
			agent_where(a->pid);
			told = 0;
			continue;
		}
		usleep(20000);
	}
	HELPER_WAITED();
	a->pid = 0;
	return status;
}

bool cft_agent_stop_clean(struct cft_agent *a)
{
	pid_t pid = a->pid;
	int st = cft_agent_stop(a);

	if (WIFSIGNALED(st))
		fprintf(stderr, "# agent %d was killed by signal %d\n", (int)pid,
			WTERMSIG(st));
	else if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "# agent %d ended with wait status 0x%x\n",
			(int)pid, st);
	return WIFEXITED(st) && !WEXITSTATUS(st);
}

int cft_listen(uint16_t *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len)) {
		close(fd);
		return -errno;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

static int epoch_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];

	cft_nl_parse(nlh, tb);
	*(uint64_t *)data = u64_or0(tb[CAPFENCE_A_EPOCH_ID]);
	return MNL_CB_OK;
}

int cft_task_epoch(struct cft_nl *nl, pid_t pid, uint64_t *epoch)
{
	struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);

	*epoch = 0;
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
	return cft_nl_talk(nl, nlh, epoch_cb, epoch);
}

int cft_wait_bound(struct cft_nl *nl, pid_t pid, uint64_t epoch)
{
	uint64_t now;
	int i, n = cft_ms(5000) / 10;

	HELPER_WAITING("pid %d to be bound to epoch %llu", (int)pid,
		       (unsigned long long)epoch);
	for (i = 0; i < n; i++) {
		if (!cft_task_epoch(nl, pid, &now) && now == epoch) {
			HELPER_WAITED();
			return 0;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/* ---- the agent: a bound process obeying one-line commands ---- */

static int agent_connect(int family, const char *addr, int port, bool do_bind)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, ret = 0;

	if (family == AF_INET) {
		struct sockaddr_in *sin = (void *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
			return EINVAL;
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (void *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
			return EINVAL;
		len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return errno;
	if (do_bind) {
		int one = 1;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len))
			ret = errno;
	} else if (connect(fd, (struct sockaddr *)&ss, len)) {
		/* a non-routable target is "in progress", not denied */
		ret = errno == EINPROGRESS ? 0 : errno;
	}
	close(fd);
	return ret;
}

static int agent_open(const char *path, const char *mode)
{
	int fd = open(path, mode[0] == 'w' ? O_WRONLY | O_CREAT : O_RDONLY,
		      0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int agent_mutate(const char *what)
{
	struct cft_nl nl;
	struct nlmsghdr *nlh;
	int err = cft_nl_open(&nl);

	if (err)
		return -err;
	if (!strcmp(what, "revoke")) {
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_REVOKE, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, 1);
	} else if (!strcmp(what, "activate")) {
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_EPOCH_ACTIVATE, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, 1);
	} else if (!strcmp(what, "exec")) {
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_EXEC_SET, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, 1);
	} else {
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0);
	}
	err = cft_nl_talk(&nl, nlh, NULL, NULL);
	cft_nl_close(&nl);
	return -err;
}

struct spin_arg {
	int seconds, base, nports;
	struct cft_spin_rec *recs;
	size_t n, cap;
	unsigned int seed;
};

uint64_t cft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *spin_thread(void *p)
{
	struct spin_arg *a = p;
	uint64_t end = cft_now_ns() + (uint64_t)a->seconds * 1000000000ull;

	while (a->n < a->cap) {
		struct cft_spin_rec *r = &a->recs[a->n];
		int port = a->base + (int)(rand_r(&a->seed) % (unsigned int)a->nports);
		int err;

		r->start_ns = cft_now_ns();
		if (r->start_ns > end)
			break;
		err = agent_connect(AF_INET, "127.0.0.1", port, false);
		r->port = (uint32_t)port;
		/* refused means the LSM let it through */
		r->allowed = err != EACCES;
		a->n++;
	}
	return NULL;
}

/* Connect to random ports from two threads; log every attempt. */
static int agent_spin(int seconds, int base, int nports)
{
	struct spin_arg a[2];
	pthread_t th[2];
	char path[64];
	FILE *f;
	int i;

	for (i = 0; i < 2; i++) {
		a[i] = (struct spin_arg){ seconds, base, nports, NULL, 0,
					  1 << 20, (unsigned int)(getpid() + i) };
		a[i].recs = calloc(a[i].cap, sizeof(*a[i].recs));
		if (!a[i].recs)
			return ENOMEM;
		pthread_create(&th[i], NULL, spin_thread, &a[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	snprintf(path, sizeof(path), "/tmp/spin.%d", getpid());
	f = fopen(path, "w");
	for (i = 0; i < 2; i++) {
		if (f)
			fwrite(a[i].recs, sizeof(*a[i].recs), a[i].n, f);
		free(a[i].recs);
	}
	if (!f)
		return errno;
	fclose(f);
	return 0;
}

struct thread_arg {
	char addr[128];
	int port, ret;
};

/* Change only this thread's credentials (raw syscall), then connect. */
static void *thread_connect(void *p)
{
	struct thread_arg *a = p;

	if (syscall(SYS_setresgid, 1000, 1000, 1000) ||
	    syscall(SYS_setresuid, 1000, 1000, 1000)) {
		a->ret = errno;
		return NULL;
	}
	a->ret = agent_connect(AF_INET, a->addr, a->port, false);
	return NULL;
}

static int agent_thread_connect(const char *addr, int port)
{
	struct thread_arg a = { .port = port };
	pthread_t th;

	snprintf(a.addr, sizeof(a.addr), "%s", addr);
	if (pthread_create(&th, NULL, thread_connect, &a))
		return EAGAIN;
	pthread_join(th, NULL);
	return a.ret;
}

/* keyctl(KEYCTL_SESSION_TO_PARENT) from a child replaces our credentials
 * through cred_alloc_blank + cred_transfer. */
static int agent_session_to_parent(void)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		if (syscall(SYS_keyctl, 1 /* JOIN_SESSION_KEYRING */, 0) < 0 ||
		    syscall(SYS_keyctl, 18 /* SESSION_TO_PARENT */) < 0)
			_exit(errno);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	/* the new credentials are installed on our next return to user */
	getpid();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

static int held_fd = -1;

/* Keep a file open for writing, or reading and writing ("rw"); "write"
 * and "read" then use it. */
static int agent_hold(const char *path, bool rw)
{
	if (held_fd >= 0)
		close(held_fd);
	held_fd = open(path, (rw ? O_RDWR : O_WRONLY) | O_CREAT, 0600);
	return held_fd < 0 ? errno : 0;
}

static int agent_write(void)
{
	if (held_fd < 0)
		return EBADF;
	return write(held_fd, "x", 1) == 1 ? 0 : errno;
}

static int agent_read(void)
{
	char c;

	if (held_fd < 0)
		return EBADF;
	return pread(held_fd, &c, 1, 0) >= 0 ? 0 : errno;
}

static int agent_run(char *cmd)
{
	int secs, nports;
	char a[128], b[128];
	int port;

	if (sscanf(cmd, "connect %127s %d", a, &port) == 2)
		return agent_connect(strchr(a, ':') ? AF_INET6 : AF_INET, a,
				     port, false);
	if (sscanf(cmd, "bind %127s %d", a, &port) == 2)
		return agent_connect(strchr(a, ':') ? AF_INET6 : AF_INET, a,
				     port, true);
	if (sscanf(cmd, "open %127s %127s", a, b) == 2)
		return agent_open(a, b);
	if (sscanf(cmd, "mutate %127s", a) == 1)
		return agent_mutate(a);
	if (sscanf(cmd, "spin %d %d %d", &secs, &port, &nports) == 3)
		return agent_spin(secs, port, nports);
	if (sscanf(cmd, "thread-setuid-connect %127s %d", a, &port) == 2)
		return agent_thread_connect(a, port);
	if (!strcmp(cmd, "setuid"))
		return setresuid(65534, 65534, 65534) ? errno : 0;
	if (!strcmp(cmd, "session-to-parent"))
		return agent_session_to_parent();
	if (sscanf(cmd, "hold %127s %127s", a, b) == 2)
		return strcmp(b, "rw") ? EINVAL : agent_hold(a, true);
	if (sscanf(cmd, "hold %127s", a) == 1)
		return agent_hold(a, false);
	if (!strcmp(cmd, "write"))
		return agent_write();
	if (!strcmp(cmd, "setown"))	/* file_set_fowner on the held file */
		return held_fd < 0 ? EBADF :
		       fcntl(held_fd, F_SETOWN, getpid()) ? errno : 0;
	if (!strcmp(cmd, "read"))
		return agent_read();
	if (!strcmp(cmd, "pid"))
		return getpid();
	return cft_agent_extra(cmd);
}

/* A test program that needs its own agent commands defines this. */
__attribute__((weak)) int cft_agent_extra(char *cmd)
{
	(void)cmd;
	return EINVAL;
}

int cft_agent_main(void)
{
	char line[256];

	signal(SIGPIPE, SIG_IGN);
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (cft_read_line(0, line, sizeof(line), -1) >= 0) {
		int res;

		if (!strncmp(line, "fork ", 5)) {
			/* the child runs the command; its exit code is the result */
			pid_t pid = fork();
			int st;

			if (!pid)
				_exit(agent_run(line + 5));
			waitpid(pid, &st, 0);
			res = WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st);
		} else if (!strcmp(line, "exec")) {
			char *argv[] = { "cft-agent", "--agent", NULL };

			/* the new image answers "ready" then obeys again */
			printf("R 0\n");
			fflush(stdout);
			execv("/proc/self/exe", argv);
			return 1;
		} else {
			res = agent_run(line);
		}
		printf("R %d\n", res);
		fflush(stdout);
	}
	return 0;
}

/* ---- audit ---- */

/*
 * Register @fd as the audit daemon (@pid != 0) or unregister it, and wait
 * for the kernel's answer: a registration the kernel refused (another
 * daemon holds it: -EEXIST) must fail the test here, not as a missing
 * record later.  Records that arrive before the answer are skipped.
 */
static int audit_set_pid(int fd, uint32_t pid)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		struct audit_status s;
	} req = {};
	static uint32_t seq;
	char buf[8192];
	int tries;

	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = AUDIT_SET;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = ++seq;
	req.s.mask = AUDIT_STATUS_PID | AUDIT_STATUS_ENABLED;
	req.s.enabled = 1;
	req.s.pid = pid;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return -errno;
	for (tries = 0; tries < 10000; tries++) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n < 0 && errno == ENOBUFS)
			continue;
		if (n < 0)
			return -errno;
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != NLMSG_ERROR ||
		    h->nlmsg_seq != req.h.nlmsg_seq)
			continue;
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	}
	return -ETIMEDOUT;
}

/*
 * The kernel sends records to the audit daemon without waiting: when its
 * socket is full, kauditd moves them to its retry and hold queues and
 * only tries again when a new record is logged, so on a slow guest a
 * flood of records could leave later tests' records stuck behind it.  A
 * receive buffer larger than any test's records keeps the socket from
 * ever filling.
 */
#define CFT_AUDIT_RCVBUF (32 << 20)

int cft_audit_open(void)
{
	struct timeval tv = { .tv_sec = 1 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	int sz = CFT_AUDIT_RCVBUF, err;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		close(fd);
		return err;
	}
	err = audit_set_pid(fd, (uint32_t)getpid());
	if (err) {
		fprintf(stderr, "# audit: registering as the audit daemon: %s\n",
			strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static int audit_vwait(int fd, int type, char *out, size_t len, int timeout_ms,
		       va_list ap1)
{
	char buf[8192];
	int waited = 0;
	va_list ap0;

	va_copy(ap0, ap1);
	HELPER_WAITING("an audit record with \"%s\"", va_arg(ap0, const char *) ?: "");
	va_end(ap0);
	timeout_ms = cft_ms(timeout_ms);
	while (waited < timeout_ms) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		const char *text, *needle;
		bool all = true;
		va_list ap;

		if (n < 0) {
			/* only the receive timeout counts; ENOBUFS is news */
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				waited += 1000;
			continue;
		}
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != type)
			continue;
		buf[n] = '\0';
		text = (const char *)NLMSG_DATA(h);
		va_copy(ap, ap1);
		while ((needle = va_arg(ap, const char *)))
			if (!strstr(text, needle))
				all = false;
		va_end(ap);
		if (all) {
			snprintf(out, len, "%s", text);
			HELPER_WAITED();
			return 0;
		}
	}
	return -ETIMEDOUT;
}

int cft_audit_wait(int fd, char *out, size_t len, int timeout_ms, ...)
{
	va_list ap;
	int ret;

	va_start(ap, timeout_ms);
	ret = audit_vwait(fd, CAPFENCE_AUDIT_TYPE, out, len, timeout_ms, ap);
	va_end(ap);
	return ret;
}

int cft_audit_wait_type(int fd, int type, char *out, size_t len,
			int timeout_ms, ...)
{
	va_list ap;
	int ret;

	va_start(ap, timeout_ms);
	ret = audit_vwait(fd, type, out, len, timeout_ms, ap);
	va_end(ap);
	return ret;
}

void cft_audit_close(int fd)
{
	if (fd < 0)
		return;
	audit_set_pid(fd, 0);
	close(fd);
}

int cft_audit_status(struct audit_status *st, uint32_t backlog_limit)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		struct audit_status s;
	} req = {};
	struct timeval tv = { .tv_sec = 2 };
	char buf[8192];
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	int err = -ETIMEDOUT;
	ssize_t n;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	req.h.nlmsg_len = NLMSG_LENGTH(0);
	req.h.nlmsg_type = AUDIT_GET;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t have = h->nlmsg_len - NLMSG_HDRLEN;

		if (h->nlmsg_type != AUDIT_GET)
			continue;
		/* an older kernel's status is shorter: the rest stays 0 */
		memset(st, 0, sizeof(*st));
		memcpy(st, NLMSG_DATA(h), have < sizeof(*st) ? have : sizeof(*st));
		err = 0;
		break;
	}
	if (err || !backlog_limit)
		goto out;
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = AUDIT_SET;
	req.s.mask = AUDIT_STATUS_BACKLOG_LIMIT;
	req.s.backlog_limit = backlog_limit;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		err = -errno;
out:
	close(fd);
	return err;
}

long cft_audit_backlog(uint32_t set)
{
	struct audit_status st;
	int err = cft_audit_status(&st, set);

	return err ? err : (long)st.backlog_limit;
}

const char *cft_field(const char *rec, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n = 0;
	const char *p = rec;

	buf[0] = '\0';
	while ((p = strstr(p, key))) {
		if ((p == rec || p[-1] == ' ') && p[klen] == '=') {
			p += klen + 1;
			while (p[n] && p[n] != ' ' && n + 1 < len) {
				buf[n] = p[n];
				n++;
			}
			buf[n] = '\0';
			break;
		}
		p += klen;
	}
	return buf;
}

/* ---- credentials kept alive ---- */

#define CFT_RINGS_MAX	64
static int cft_rings[CFT_RINGS_MAX];
static int cft_nrings;

int cft_creds_hold(int n, int *err)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int made = 0, fd;

	*err = 0;
	if (syscall(SYS_capget, &h, d)) {
		*err = errno;
		return 0;
	}
	while (made < n) {
		struct io_uring_params p = {};

		if (syscall(SYS_capset, &h, d)) {
			*err = errno;
			break;
		}
		if (!cft_nrings ||
		    syscall(SYS_io_uring_register, cft_rings[cft_nrings - 1],
			    IORING_REGISTER_PERSONALITY, NULL, 0) < 0) {
			/* the ring's personalities are full (EBUSY), or none yet */
			if (cft_nrings == CFT_RINGS_MAX) {
				*err = EMFILE;
				break;
			}
			fd = (int)syscall(SYS_io_uring_setup, 1, &p);
			if (fd < 0) {
				*err = errno;
				break;
			}
			if (syscall(SYS_io_uring_register, fd,
				    IORING_REGISTER_PERSONALITY, NULL, 0) < 0) {
				*err = errno;
				close(fd);
				break;
			}
			cft_rings[cft_nrings++] = fd;
		}
		made++;
	}
	return made;
}

void cft_creds_drop(void)
{
	while (cft_nrings)
		close(cft_rings[--cft_nrings]);
}

/* ---- front end ---- */

bool cft_builtin(void)
{
	static int builtin = -1;
	char buf[256], *w;
	ssize_t n;
	int fd;

	if (builtin >= 0)
		return builtin;
	builtin = 0;
	fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (w = strtok(buf, ",\n"); w; w = strtok(NULL, ",\n"))
		if (!strcmp(w, "capfence"))
			builtin = 1;
	return builtin;
}

/* ---- time budgets ---- */

double cft_timeout_scale(void)
{
	static double scale;
	const char *env;
	char *end;
	double v = 1;

	if (scale)
		return scale;
	env = getenv("CAPFENCE_TIMEOUT_SCALE");
	if (env && *env) {
		errno = 0;
		v = strtod(env, &end);
		if (errno || *end || !(v >= 1 && v <= 1000)) {
			fprintf(stderr, "capfence tests: CAPFENCE_TIMEOUT_SCALE=%s: want a number from 1 to 1000\n",
				env);
			exit(2);
		}
	}
	scale = v;
	return scale;
}

int cft_ms(int ms)
{
	double v;

	if (ms < 0)
		return ms;
	v = ms * cft_timeout_scale();
	return v >= 2e9 ? 2000000000 : (int)v + ((int)v < v);
}

unsigned int cft_secs(unsigned int s)
{
	double v = s * cft_timeout_scale();

	return v >= 4e9 ? 4000000000u : (unsigned int)v + ((unsigned int)v < v);
}

void cft_waiting(const char *fmt, ...)
{
	struct wait_slot *w = wait_slot();
	int next = !w->cur;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->what[next], sizeof(w->what[next]), fmt, ap);
	va_end(ap);
	w->active = 0;
	w->cur = next;
	w->ns = cft_now_ns();
	w->active = 1;
}

void cft_waited(void)
{
	struct wait_slot *w = wait_slot();

	if (w->active) {
		w->ns = cft_now_ns();
		w->active = 0;
	}
}

static struct {
	char name[160];
	char scale[16];
	unsigned int base, secs;
	uint64_t start_ns;
	pid_t harness;
	const char *forced;	/* CFT_DIE_AT's point */
	bool armed;
} wd;

struct wbuf {
	char b[512];
	size_t n;
};

/* async-signal-safe formatting for the watchdog */
static void wput(struct wbuf *w, const char *s)
{
	while (*s && w->n + 1 < sizeof(w->b))
		w->b[w->n++] = *s++;
}

static void wnum(struct wbuf *w, uint64_t v)
{
	char d[24];
	int i = 0;

	do {
		d[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (i && w->n + 1 < sizeof(w->b))
		w->b[w->n++] = d[--i];
}

static void wflush(struct wbuf *w)
{
	if (w->n && write(2, w->b, w->n) < 0)
		w->n = 0;
	w->n = 0;
}

/* A small file of /proc, read with plain syscalls (async-signal-safe). */
static ssize_t wread(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/*
 * One thread of the guest: "#   task PID/TID (comm) STATE wchan", and for
 * a thread of the test's process group or one blocked in the kernel (D),
 * its kernel stack: what a test that ran out of time was stuck in.
 */
static void wtask(struct wbuf *w, const char *pid, const char *tid,
		  pid_t pgrp, int *budget)
{
	char path[96], buf[2048], *comm, *end, state;
	long grp = 0;
	struct wbuf p = { .n = 0 };
	ssize_t n;
	char *c;

	wput(&p, "/proc/");
	wput(&p, pid);
	wput(&p, "/task/");
	wput(&p, tid);
	p.b[p.n] = '\0';
	memcpy(path, p.b, p.n + 1);
	memcpy(path + p.n, "/stat", 6);
	if (wread(path, buf, sizeof(buf)) <= 0)
		return;
	comm = strchr(buf, '(');
	end = strrchr(buf, ')');
	if (!comm || !end || end[1] != ' ' || !end[2])
		return;
	state = end[2];
	/* " S ppid pgrp" */
	c = end + 3;
	while (*c == ' ')
		c++;
	while (*c && *c != ' ')
		c++;
	while (*c == ' ')
		c++;
	while (*c >= '0' && *c <= '9')
		grp = grp * 10 + (*c++ - '0');
	if (grp != pgrp && state != 'D')
		return;
	if (*budget <= 0)
		return;
	(*budget)--;
	*end = '\0';
	wput(w, "#   task ");
	wput(w, pid);
	wput(w, "/");
	wput(w, tid);
	wput(w, " ");
	wput(w, comm);
	wput(w, ") ");
	wput(w, (char[]){ state, '\0' });
	memcpy(path + p.n, "/wchan", 7);
	if (wread(path, buf, sizeof(buf)) > 0 && buf[0] != '0') {
		wput(w, " in ");
		wput(w, buf);
	}
	wput(w, "\n");
	wflush(w);
	memcpy(path + p.n, "/stack", 7);
	n = wread(path, buf, sizeof(buf));
	for (c = buf; n > 0 && *c; c = end + 1) {
		end = strchr(c, '\n');
		if (!end)
			break;
		*end = '\0';
		wput(w, "#     ");
		wput(w, c);
		wput(w, "\n");
		wflush(w);
	}
}

struct dirent64_hdr {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

static void wtasks(struct wbuf *w)
{
	char buf[4096], tbuf[1024], path[64];
	pid_t pgrp = getpgrp();
	int budget = 48, fd, tfd;
	long n, tn, i, j;

	fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n;) {
			struct dirent64_hdr *d = (void *)(buf + i);
			struct wbuf p = { .n = 0 };

			i += d->reclen;
			if (d->name[0] < '0' || d->name[0] > '9')
				continue;
			wput(&p, "/proc/");
			wput(&p, d->name);
			wput(&p, "/task");
			p.b[p.n] = '\0';
			memcpy(path, p.b, p.n + 1);
			tfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (tfd < 0)
				continue;
			while ((tn = syscall(SYS_getdents64, tfd, tbuf,
					     sizeof(tbuf))) > 0) {
				for (j = 0; j < tn;) {
					struct dirent64_hdr *t = (void *)(tbuf + j);

					j += t->reclen;
					if (t->name[0] >= '0' && t->name[0] <= '9')
						wtask(w, d->name, t->name, pgrp,
						      &budget);
				}
			}
			close(tfd);
		}
	}
	close(fd);
}

static void wwait(struct wbuf *w, const struct wait_slot *s, uint64_t now)
{
	wput(w, s->what[s->cur]);
	wput(w, " (for ");
	wnum(w, (now - s->ns) / 1000000000ull);
	wput(w, " s)");
}

static void watchdog_fire(int sig)
{
	uint64_t now = cft_now_ns();
	struct wbuf w = { .n = 0 };
	const struct wait_slot *act = NULL, *last = NULL;
	int i, used = wait_slots_used < WAIT_SLOTS ? wait_slots_used : WAIT_SLOTS;

	(void)sig;
	/* the longest wait still going, else the one that ended last */
	for (i = 0; i < used; i++) {
		const struct wait_slot *s = &wait_slots[i];

		if (s->active && (!act || s->ns < act->ns))
			act = s;
		if (s->ns && (!last || s->ns > last->ns))
			last = s;
	}
	wput(&w, "# ");
	wput(&w, wd.name);
	if (wd.forced) {
		wput(&w, ": stopped on purpose (CFT_DIE_AT=");
		wput(&w, wd.forced);
		wput(&w, ") after ");
		wnum(&w, (now - wd.start_ns) / 1000000000ull);
		wput(&w, " s of its ");
	} else {
		wput(&w, ": timed out after ");
	}
	wnum(&w, wd.secs);
	wput(&w, " s (");
	wnum(&w, wd.base);
	wput(&w, " s x scale ");
	wput(&w, wd.scale);
	wput(&w, act ? "), waiting for: " :
		 last ? "), in no marked wait; the last one, over " :
		 "), before any marked wait");
	if (act) {
		wwait(&w, act, now);
	} else if (last) {
		wnum(&w, (now - last->ns) / 1000000000ull);
		wput(&w, " s ago: ");
		wput(&w, last->what[last->cur]);
	}
	wput(&w, "\n");
	wflush(&w);
	for (i = 0; i < used; i++) {
		const struct wait_slot *s = &wait_slots[i];

		if (!s->active || s == act)
			continue;
		wput(&w, "#   thread ");
		wnum(&w, (uint64_t)s->tid);
		wput(&w, " also waiting for: ");
		wwait(&w, s, now);
		wput(&w, "\n");
		wflush(&w);
	}
	/* where the test's tasks (and any blocked in the kernel) are */
	if (!wd.forced)
		wtasks(&w);
	/* the harness's own timeout: it kills our process group */
	if (wd.harness > 1 && getppid() == wd.harness)
		kill(wd.harness, SIGALRM);
	for (;;)
		pause();
}

void cft_watchdog_arm(const char *name, unsigned int base, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = watchdog_fire };
	sigset_t set;
	int i;

	snprintf(wd.name, sizeof(wd.name), "%s", name);
	snprintf(wd.scale, sizeof(wd.scale), "%g", cft_timeout_scale());
	wd.base = base;
	wd.secs = secs;
	wd.harness = getppid();
	wd.forced = NULL;
	wd.start_ns = cft_now_ns();
	for (i = 0; i < WAIT_SLOTS; i++) {
		wait_slots[i].active = 0;
		wait_slots[i].ns = 0;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	wd.armed = true;
	alarm(secs);
}

double cft_watchdog_disarm(void)
{
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	wd.armed = false;
	return (double)(cft_now_ns() - wd.start_ns) / 1e9;
}

void cft_die_at(const char *point)
{
	const char *at = getenv("CFT_DIE_AT");

	if (!at || strcmp(at, point))
		return;
	fflush(NULL);
	if (!wd.armed) {
		fprintf(stderr, "# CFT_DIE_AT=%s: killed here\n", point);
		kill(0, SIGKILL);
	}
	wd.forced = at;
	raise(SIGALRM);
	for (;;)
		pause();
}

/* ---- the state a program starts from ---- */

static int establish_fail(char *why, size_t len, int err, const char *what)
{
	snprintf(why, len, "%s: %s", what, strerror(-err));
	cft_waited();
	return err;
}

static void did(char *why, size_t len, const char *what)
{
	size_t n = strlen(why);

	snprintf(why + n, len - n, "%s%s", n ? ", " : "", what);
}

int cft_establish(char *why, size_t len)
{
	struct capfence_fleet_status fs;
	struct capfence_status s;
	struct capfence_key *k;
	struct cft_nl nl;
	int err, fd, i, n;
	char ext[CAPFENCE_ERR_MAX];

	why[0] = '\0';
	cft_timeout_scale();
	if (access("/sys/module/capfence", F_OK)) {
		cft_waiting("insmod %s", CFT_MODULE_PATH);
		fd = open(CFT_MODULE_PATH, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return establish_fail(why, len, -errno, "open " CFT_MODULE_PATH);
		err = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
		close(fd);
		if (err && err != -EEXIST)
			return establish_fail(why, len, err, "insmod " CFT_MODULE_PATH);
		did(why, len, "loaded capfence.ko");
	}
	/*
	 * The programs of one boot install more epochs between them than the
	 * module's default bound: each raises it (control_test tests the bound
	 * itself and puts back what it found).
	 */
	if (cft_param_get("epochs_max") >= 0 &&
	    cft_param_get("epochs_max") < CFT_EPOCHS_MAX) {
		err = cft_param_set("epochs_max", CFT_EPOCHS_MAX);
		if (err)
			return establish_fail(why, len, err, "raise epochs_max");
		did(why, len, "raised epochs_max");
	}
	err = cft_open(&nl);
	if (err)
		return establish_fail(why, len, err, "the capfence netlink family");
	err = cft_nl_status(&nl, &s);
	if (err)
		goto fail_status;
	if (!s.attached) {
		cft_waiting("capfence attach");
		if (system("capfence attach >/dev/null")) {
			cft_nl_close(&nl);
			return establish_fail(why, len, -EIO, "capfence attach");
		}
		err = cft_nl_status(&nl, &s);
		if (err)
			goto fail_status;
		if (!s.attached) {
			cft_nl_close(&nl);
			return establish_fail(why, len, -ENOLINK,
					      "capfence attach left the hooks detached");
		}
		did(why, len, "attached the hooks");
	}
	if (!capfence_client_fleet_status(nl.c, &fs, ext, sizeof(ext)) &&
	    fs.supported && fs.stale_ms) {
		struct capfence_fleet_set off = { .flags = CAPFENCE_FLEET_SET_BOUNDS };

		err = capfence_client_fleet_set(nl.c, &off, ext, sizeof(ext));
		if (err) {
			cft_nl_close(&nl);
			return establish_fail(why, len, err, "fleet mode off");
		}
		did(why, len, "turned fleet mode off");
	}
	/* the test key with the tests' bytes, whatever an id 7 held before */
	err = cft_key_remove(&nl, 7);
	if (err && err != -ENOENT) {
		cft_nl_close(&nl);
		return establish_fail(why, len, err, "remove key 7");
	}
	k = cft_test_key(&nl);
	if (!k) {
		cft_nl_close(&nl);
		return establish_fail(why, len, -EIO, "install the test key (id 7)");
	}
	capfence_key_free(k);
	/* an earlier program's tasks go once their credentials are freed */
	if (s.bound || s.held) {
		n = cft_ms(10000) / 50;
		cft_waiting("the tasks of an earlier program to be freed (%llu bound, %llu grants held)",
			    (unsigned long long)s.bound, (unsigned long long)s.held);
		for (i = 0; i < n && !cft_nl_status(&nl, &s) && (s.bound || s.held); i++)
			usleep(50000);
		did(why, len, s.bound || s.held ? "tasks of an earlier program are still bound" :
			      "waited for an earlier program's bound tasks to go");
	}
	cft_waited();
	cft_nl_close(&nl);
	return 0;
fail_status:
	cft_nl_close(&nl);
	return establish_fail(why, len, err, "capfence status");
}

#define CFT_PARAMS "/sys/module/capfence/parameters/"

long cft_param_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), CFT_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int cft_param_set(const char *name, long v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), CFT_PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%ld\n", v);
	return fclose(f) ? -errno : 0;
}
