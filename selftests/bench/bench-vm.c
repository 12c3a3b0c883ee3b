// SPDX-License-Identifier: GPL-2.0
/*
 * bench-vm: the VM half of `make bench` (figures, never timed tests).
 *
 *   bench-vm all        every VM figure, one "bench:" line each
 *   bench-vm hooks      connect/open cost: module not loaded, hooks attached
 *                       with an unbound task, bound task holding a capability
 *   bench-vm netlink    DELEGATE round trip vs CTRL_CMD_GETFAMILY
 *   bench-vm activate   epoch activation with 1 vs N bound tasks
 *   bench-vm memory     bytes per bound credential / held capability
 *   bench-vm loop KIND MS LFD PORT   (internal) one measured loop
 *
 * Runs as root in the guest of selftests/vm/run: capfence.ko loaded from
 * /capfence.ko and attached. "hooks" unloads and reloads the module
 * (capfence detach; rmmod; insmod; capfence attach) once per repetition so
 * that the three cases are interleaved and TCG drift hits them alike.
 * Each loop runs in a freshly exec'd process of this binary, bound or not,
 * for a fixed time; the figure is the median over repetitions of ns/op.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/genetlink.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

#define REPS		5	/* repetitions of each interleaved case */
#define LOOP_MS		400	/* duration of one measured loop */
#define NL_BLOCKS	10
#define NL_PER_BLOCK	200
#define ACT_REPS	15
#define BENCH_DIR	"/tmp/bench"
#define BENCH_FILE	BENCH_DIR "/w"

static const char *bench_rules[] = {
	"net:connect=token:127.0.0.0/8",
	"fs:write=token:" BENCH_DIR,
	"fs:read=open",
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-vm: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double pctl(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return v[(int)(q * (n - 1) + 0.5)];
}

static void line(const char *name, double value, const char *unit,
		 const char *target, bool ok)
{
	printf("bench: %s value=%.3f%s target=%s %s\n", name, value, unit, target,
	       ok ? "ok" : "MISS");
	fflush(stdout);
}

/* ---- the measured loops (run in an exec'd child) ----------------------- */

static int loop_main(const char *kind, int ms, int lfd, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint64_t t0, t, end;
	unsigned long ops = 0;
	int i, s = -1;

	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (!strcmp(kind, "udp")) {
		s = socket(AF_INET, SOCK_DGRAM, 0);
		if (s < 0)
			return errno;
	}
	t0 = cft_now_ns();
	end = t0 + (uint64_t)ms * 1000000ull;
	do {
		for (i = 0; i < 32; i++, ops++) {
			if (!strcmp(kind, "connect")) {
				struct linger lg = { 1, 0 };
				int c = socket(AF_INET, SOCK_STREAM, 0), a;

				if (c < 0)
					return errno;
				/* RST on close: no TIME_WAIT pile-up */
				setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				if (connect(c, (struct sockaddr *)&sin, sizeof(sin)))
					return errno;
				close(c);
				/* drain the (non-blocking) accept queue now and then */
				if (i == 31)
					while ((a = accept(lfd, NULL, NULL)) >= 0)
						close(a);
			} else if (!strcmp(kind, "udp")) {
				if (connect(s, (struct sockaddr *)&sin, sizeof(sin)))
					return errno;
			} else {
				int fd = open(BENCH_FILE, O_WRONLY);

				if (fd < 0)
					return errno;
				close(fd);
			}
		}
		t = cft_now_ns();
	} while (t < end);
	printf("%lu %" PRIu64 "\n", ops, t - t0);
	return 0;
}

/* Run one loop in a fresh process, bound to @epoch with @toks if non-zero. */
static double run_loop(const char *kind, uint64_t epoch,
		       const struct cf_token *toks, int ntok, int lfd, int port)
{
	int out[2], st;
	char buf[128];
	unsigned long ops;
	uint64_t ns;
	ssize_t n;
	pid_t pid;

	if (pipe(out))
		die("pipe", errno);
	pid = fork();
	if (!pid) {
		char ms[16], fd[16], p[16];
		char *argv[] = { "bench-vm", "loop", (char *)kind, ms, fd, p, NULL };
		struct cft_reply r;
		struct cf_nl nl;

		dup2(out[1], 1);
		snprintf(ms, sizeof(ms), "%d", LOOP_MS);
		snprintf(fd, sizeof(fd), "%d", lfd);
		snprintf(p, sizeof(p), "%d", port);
		if (epoch && (cft_open(&nl) || cft_exec_set(&nl, epoch, toks, ntok, &r)))
			_exit(90);
		if (epoch)
			cf_nl_close(&nl);
		execv("/proc/self/exe", argv);
		_exit(91);
	}
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1);
	close(out[0]);
	waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench-vm: loop %s (epoch %" PRIu64 ") failed: status 0x%x\n",
			kind, epoch, st);
		exit(1);
	}
	buf[n] = '\0';
	if (sscanf(buf, "%lu %" SCNu64, &ops, &ns) != 2 || !ops)
		die("loop output", EINVAL);
	return (double)ns / (double)ops;
}

/* ---- module state --------------------------------------------------- */

struct env {
	struct cf_nl nl;
	struct cf_key *key;
	uint64_t epoch;
	struct cf_token net, fs;
	pid_t idle;
	int idle_fd;
};

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* Module loaded and attached: key, epoch, tokens. */
static void env_up(struct env *e)
{
	char ext[256];
	int err;

	err = cft_open(&e->nl);
	if (err)
		die("netlink", err);
	e->key = cft_test_key(&e->nl);
	if (!e->key)
		die("key install", EIO);
	e->epoch = cft_next_epoch(&e->nl);
	err = cft_epoch_install(&e->nl, e->epoch, bench_rules, 3, ext, sizeof(ext));
	if (err) {
		fprintf(stderr, "bench-vm: epoch install: %s\n", ext);
		exit(1);
	}
	if (cft_mint(e->key, "net:connect", e->epoch, "127.0.0.0/8", 0, &e->net) ||
	    cft_mint(e->key, "fs:write", e->epoch, BENCH_DIR, 0, &e->fs))
		die("mint", EINVAL);
}

static void env_down(struct env *e)
{
	cf_key_free(e->key);
	e->key = NULL;
	cf_nl_close(&e->nl);
}

/* An idle bound sandbox (static rollsim-sandbox), holding @t if given. */
static pid_t spawn_idle(struct cf_nl *nl, uint64_t epoch,
			const struct cf_token *t, int *in_fd, int res_w)
{
	int in[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		char *argv[] = { "rollsim-sandbox", "idle", NULL };
		struct cft_reply r;

		(void)nl;
		dup2(in[0], 0);
		dup2(res_w, 1);
		if (cft_open(nl) || cft_exec_set(nl, epoch, t, t ? 1 : 0, &r)) {
			fprintf(stderr, "bench-vm: EXEC_SET %" PRIu64 ": %d %s (%s)\n",
				epoch, r.err, cf_reason_name(r.reason), r.ext);
			printf("E\n");
			fflush(stdout);
			_exit(90);
		}
		cf_nl_close(nl);
		execvp("rollsim-sandbox", argv);
		_exit(91);
	}
	close(in[0]);
	*in_fd = in[1];
	return pid;
}

static void wait_ready(int res_r, int n)
{
	char buf[4096];
	int got = 0;

	while (got < n) {
		ssize_t r = read(res_r, buf, sizeof(buf));
		ssize_t i;

		if (r <= 0)
			die("sandbox did not start", r < 0 ? errno : EPIPE);
		for (i = 0; i < r; i++)
			got += buf[i] == '\n';
		if (memchr(buf, 'E', (size_t)r))
			die("a sandbox could not be bound", EIO);
	}
}

/* Wait until no credential carries capfence state (cred_free is deferred). */
static void wait_unbound(struct cf_nl *nl)
{
	struct cf_status s;
	int i;

	for (i = 0; i < 300; i++) {
		if (!cf_nl_status(nl, &s) && !s.bound)
			return;
		usleep(20000);
	}
}

/* ---- figures 3 and 4: hook cost ------------------------------------- */

static void bench_hooks(void)
{
	const char *kinds[] = { "connect", "udp", "open" };
	double v[3][3][REPS];	/* kind, case, rep */
	uint16_t port;
	int lfd, rep, k, fd;

	mkdir(BENCH_DIR, 0755);
	fd = open(BENCH_FILE, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die(BENCH_FILE, errno);
	close(fd);
	lfd = cft_listen(&port);
	if (lfd < 0)
		die("listen", lfd);
	fcntl(lfd, F_SETFD, 0);	/* the loops inherit it */
	fcntl(lfd, F_SETFL, O_NONBLOCK);

	for (rep = 0; rep < REPS; rep++) {
		struct env e;
		int res[2];

		/* case 0: module not loaded */
		/* BPF programs are freed asynchronously after the detach */
		if (sh("capfence detach >/dev/null 2>&1; for i in $(seq 100); do "
		       "rmmod capfence 2>/dev/null && exit 0; sleep 0.1; done; exit 1"))
			die("rmmod capfence (is a task still bound?)", EBUSY);
		for (k = 0; k < 3; k++)
			v[k][0][rep] = run_loop(kinds[k], 0, NULL, 0, lfd, port);
		if (sh("insmod /capfence.ko && capfence attach >/dev/null"))
			die("insmod/attach", EIO);
		env_up(&e);
		/* an idle bound task exists: unbound lookups really look up */
		if (pipe(res))
			die("pipe", errno);
		e.idle = spawn_idle(&e.nl, e.epoch, NULL, &e.idle_fd, res[1]);
		wait_ready(res[0], 1);
		for (k = 0; k < 3; k++) {
			struct cf_token toks[2] = { e.net, e.fs };

			v[k][1][rep] = run_loop(kinds[k], 0, NULL, 0, lfd, port);
			v[k][2][rep] = run_loop(kinds[k], e.epoch, toks, 2, lfd, port);
		}
		close(e.idle_fd);
		waitpid(e.idle, NULL, 0);
		close(res[0]);
		close(res[1]);
		wait_unbound(&e.nl);
		env_down(&e);
		fprintf(stderr, "# hooks rep %d: connect %.0f/%.0f/%.0f ns, udp %.0f/%.0f/%.0f ns, open %.0f/%.0f/%.0f ns\n",
			rep, v[0][0][rep], v[0][1][rep], v[0][2][rep],
			v[1][0][rep], v[1][1][rep], v[1][2][rep],
			v[2][0][rep], v[2][1][rep], v[2][2][rep]);
	}
	close(lfd);
	for (k = 0; k < 3; k++) {
		double base = median(v[k][0], REPS);
		double unb = median(v[k][1], REPS);
		double bnd = median(v[k][2], REPS);
		char name[64];

		printf("# %s: not loaded %.0f ns/op, attached+unbound %.0f ns/op, bound+capability %.0f ns/op (median of %d, %d ms each)\n",
		       kinds[k], base, unb, bnd, REPS, LOOP_MS);
		snprintf(name, sizeof(name), "%s_unbound_ratio",
			 k == 0 ? "connect" : k == 1 ? "udp_connect" : "open_write");
		line(name, unb / base, "", "<=1.02", unb / base <= 1.02);
		snprintf(name, sizeof(name), "%s_bound_ratio",
			 k == 0 ? "connect" : k == 1 ? "udp_connect" : "open_write");
		line(name, bnd / base, "", "<=1.10", bnd / base <= 1.10);
	}
}

/* ---- figure 2: netlink round trips ---------------------------------- */

static double getfamily_rtt(struct cf_nl *nl)
{
	uint16_t fam = nl->family;
	struct nlmsghdr *nlh;
	uint64_t t0;
	int err;

	nl->family = GENL_ID_CTRL;
	nlh = cf_nl_req(nl, CTRL_CMD_GETFAMILY, 0);
	nl->family = fam;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, CAPFENCE_GENL_NAME);
	t0 = cft_now_ns();
	err = cf_nl_talk(nl, nlh, NULL, NULL);
	if (err)
		die("GETFAMILY", err);
	return (double)(cft_now_ns() - t0);
}

static double delegate_rtt(struct cf_nl *nl, const struct cf_token *t,
			   pid_t pid, int want_reason)
{
	struct cft_reply r;
	uint64_t t0 = cft_now_ns();
	int err = cft_delegate(nl, t, pid, 0, false, &r);
	double ns = (double)(cft_now_ns() - t0);

	if (want_reason ? r.reason != want_reason : err) {
		fprintf(stderr, "bench-vm: delegate: %d %s (%s)\n", err,
			cf_reason_name(r.reason), r.ext);
		exit(1);
	}
	return ns;
}

static void bench_netlink(struct env *e)
{
	static double gf[NL_BLOCKS * NL_PER_BLOCK], dl[NL_BLOCKS * NL_PER_BLOCK];
	static double mm[NL_BLOCKS * NL_PER_BLOCK / 4];
	double gfm[NL_BLOCKS], dlm[NL_BLOCKS];
	struct cf_token other;
	int b, i, res[2], nm = 0;

	if (pipe(res))
		die("pipe", errno);
	e->idle = spawn_idle(&e->nl, e->epoch, NULL, &e->idle_fd, res[1]);
	wait_ready(res[0], 1);
	/* a token of another epoch: the typed epoch_mismatch path */
	if (cft_mint(e->key, "net:connect", e->epoch + 1, "127.0.0.0/8", 0, &other))
		die("mint", EINVAL);
	for (b = 0; b < NL_BLOCKS; b++) {
		for (i = 0; i < NL_PER_BLOCK; i++) {
			int j = b * NL_PER_BLOCK + i;

			gf[j] = getfamily_rtt(&e->nl);
			dl[j] = delegate_rtt(&e->nl, &e->net, e->idle, 0);
			if (i % 4 == 0 && nm < (int)(sizeof(mm) / sizeof(mm[0])))
				mm[nm++] = delegate_rtt(&e->nl, &other, e->idle,
							CAPFENCE_R_EPOCH_MISMATCH);
		}
		gfm[b] = median(gf + b * NL_PER_BLOCK, NL_PER_BLOCK);
		dlm[b] = median(dl + b * NL_PER_BLOCK, NL_PER_BLOCK);
	}
	{
		double g = median(gfm, NL_BLOCKS), d = median(dlm, NL_BLOCKS);
		int n = NL_BLOCKS * NL_PER_BLOCK;

		printf("# netlink: GETFAMILY median %.1f us p99 %.1f us; DELEGATE (accepted, idempotent) median %.1f us p99 %.1f us; DELEGATE (epoch_mismatch, audited) median %.1f us p99 %.1f us\n",
		       g / 1000, pctl(gf, n, 0.99) / 1000, d / 1000,
		       pctl(dl, n, 0.99) / 1000, median(mm, nm) / 1000,
		       pctl(mm, nm, 0.99) / 1000);
		line("netlink_delegate_vs_getfamily", d / g, "", "<=2", d / g <= 2);
	}
	close(e->idle_fd);
	waitpid(e->idle, NULL, 0);
	close(res[0]);
	close(res[1]);
}

/* ---- figure 5: activation with 1 vs N bound tasks -------------------- */

static double activate_rtt(struct env *e, uint64_t *next)
{
	/* alternate open and token: every second activation narrows */
	const char *open_rules[] = { "net:connect=open", "fs:read=open" };
	const char *tok_rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	uint64_t id = (*next)++, t0;
	char ext[256];
	int err;

	err = cft_epoch_install(&e->nl, id, id % 2 ? open_rules : tok_rules, 2,
				ext, sizeof(ext));
	if (err) {
		fprintf(stderr, "bench-vm: epoch install %" PRIu64 ": %s\n", id, ext);
		exit(1);
	}
	t0 = cft_now_ns();
	err = cft_epoch_activate(&e->nl, id);
	if (err)
		die("activate", err);
	return (double)(cft_now_ns() - t0);
}

static void bench_activate(struct env *e, int ntasks)
{
	double one[2 * ACT_REPS], many[ACT_REPS];
	struct cf_status s;
	uint64_t next = cft_next_epoch(&e->nl);
	int res[2], *fds, i, nmany;
	pid_t *pids;
	struct rlimit rl = { (rlim_t)ntasks + 1024, (rlim_t)ntasks + 1024 };

	setrlimit(RLIMIT_NOFILE, &rl);
	fds = calloc((size_t)ntasks, sizeof(*fds));
	pids = calloc((size_t)ntasks, sizeof(*pids));
	if (!fds || !pids || pipe(res))
		die("setup", ENOMEM);
	fcntl(res[0], F_SETPIPE_SZ, 1 << 20);
	pids[0] = spawn_idle(&e->nl, e->epoch, &e->net, &fds[0], res[1]);
	wait_ready(res[0], 1);
	fprintf(stderr, "# activation: 1 bound task up\n");
	for (i = 0; i < ACT_REPS; i++)
		one[i] = activate_rtt(e, &next);
	fprintf(stderr, "# activation: spawning %d bound tasks\n", ntasks - 1);
	for (i = 1; i < ntasks; i++) {
		pids[i] = spawn_idle(&e->nl, e->epoch, &e->net, &fds[i], res[1]);
		if (i % 64 == 0)
			wait_ready(res[0], 64);
	}
	wait_ready(res[0], (ntasks - 1) % 64);
	cf_nl_status(&e->nl, &s);
	nmany = (int)s.bound;
	for (i = 0; i < ACT_REPS; i++)
		many[i] = activate_rtt(e, &next);
	printf("# memory with %d bound tasks: bound_creds %" PRIu64 ", held_caps %" PRIu64 "\n",
	       nmany, s.bound, s.held);
	for (i = 1; i < ntasks; i++)
		close(fds[i]);
	for (i = 1; i < ntasks; i++)
		waitpid(pids[i], NULL, 0);
	for (i = 0; i < ACT_REPS; i++)
		one[ACT_REPS + i] = activate_rtt(e, &next);
	close(fds[0]);
	waitpid(pids[0], NULL, 0);
	close(res[0]);
	close(res[1]);
	{
		double a = median(one, 2 * ACT_REPS), b = median(many, ACT_REPS);

		printf("# activation: 1 bound task median %.1f us, %d bound tasks median %.1f us (%d activations each)\n",
		       a / 1000, nmany, b / 1000, ACT_REPS);
		line("activation_ntasks_vs_1", b / a, "", "<=1.5", b / a <= 1.5);
	}
	free(fds);
	free(pids);
}

/* ---- figure 6: memory ------------------------------------------------- */

static int mem_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	uint64_t *out = data;

	cf_nl_parse(nlh, tb);
	if (tb[CAPFENCE_A_STATS] &&
	    !cf_nl_parse_nested(tb[CAPFENCE_A_STATS], st, CAPFENCE_STATS_A_MAX)) {
		if (st[CAPFENCE_STATS_A_CRED_BYTES])
			out[0] = mnl_attr_get_u64(st[CAPFENCE_STATS_A_CRED_BYTES]);
		if (st[CAPFENCE_STATS_A_CAP_BYTES])
			out[1] = mnl_attr_get_u64(st[CAPFENCE_STATS_A_CAP_BYTES]);
	}
	return MNL_CB_OK;
}

static void bench_memory(struct env *e)
{
	uint64_t b[2] = { 0, 0 };

	if (cf_nl_talk(&e->nl, cf_nl_req(&e->nl, CAPFENCE_CMD_STATUS_GET, 0),
		       mem_cb, b))
		die("status", EIO);
	printf("bench: cred_bytes value=%" PRIu64 "B target=report ok\n", b[0]);
	printf("bench: cap_bytes value=%" PRIu64 "B target=report ok\n", b[1]);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	int ntasks = 4000;
	struct env e;

	if (!strcmp(what, "loop") && argc == 6)
		return loop_main(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc > 2)
		ntasks = atoi(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "all") || !strcmp(what, "hooks"))
		bench_hooks();
	env_up(&e);
	if (!strcmp(what, "all") || !strcmp(what, "netlink"))
		bench_netlink(&e);
	if (!strcmp(what, "all") || !strcmp(what, "activate"))
		bench_activate(&e, ntasks);
	if (!strcmp(what, "all") || !strcmp(what, "memory"))
		bench_memory(&e);
	env_down(&e);
	return 0;
}
