// SPDX-License-Identifier: GPL-2.0
/*
 * bench-vm: the VM half of `make bench` (figures, never timed tests).
 *
 *   bench-vm all        netlink, activation and memory figures, one
 *                       "bench:" line each (the hook figures have their own
 *                       boot in `make bench`: guest time counts instructions)
 *   bench-vm hooks [ROUNDS [MS [PIN]]]
 *                       connect/open cost: module not loaded, no-op BPF-LSM
 *                       programs, capfence unbound, capfence bound (24
 *                       rounds of 100 ms loops; PIN=1 pins the loops to
 *                       vCPU 1 and the driver to vCPU 0)
 *                       and then, in the same boot, the peer a user would
 *                       pick instead: open(O_WRONLY)+close in the steady
 *                       state of long-running workers, at depth 1 and 8,
 *                       in 2, 8 and 32 directories in turn and in a new
 *                       directory every open, beneath the granted
 *                       directory, in a task sandboxed by Landlock with
 *                       the equivalent path-beneath rule, next to
 *                       capfence bound and unbound
 *   bench-vm builtin [ROUNDS [MS]]
 *                       on the built-in LSM's kernel: each hook figure's
 *                       ns/op with capfence left out of lsm=, or with it
 *                       in, unbound and bound, then the Landlock
 *                       comparison and the memory figure (make
 *                       bench-builtin boots both)
 *   bench-vm netlink    DELEGATE round trip vs CTRL_CMD_GETFAMILY
 *   bench-vm activate   epoch activation with 1 vs N bound tasks
 *   bench-vm epochs [N] exec (the first into an epoch: it activates it)
 *                       and exercise (TCP connect with a held token) with
 *                       1 installed epoch, N (10,000), and 1 again
 *   bench-vm memory     bytes per bound credential / held capability
 *   bench-vm credtable  an unbound task's hook cost with the credential
 *                       table empty, with one sandbox at its credential
 *                       limit, and with 300,000 entries (no limit)
 *   bench-vm seccomp [ROUNDS [MS]]
 *                       an allowed call (getppid) of a task with a seccomp
 *                       filter, with capfence's programs attached (its
 *                       fexit after seccomp's check runs) and detached
 *   bench-vm worker LFD PORT   (internal) runs measured loops on request
 *
 * Runs as root in the guest of selftests/vm/run: capfence.ko loaded from
 * /capfence.ko and attached. "hooks" unloads and reloads the module
 * (capfence detach; rmmod; insmod; capfence attach) once per round. An
 * unloaded phase measures "not loaded" against the no-op programs of
 * selftests/bench/noop-lsm.bpf.c, a loaded phase "unbound" against
 * "bound", each kind as A B B A; phases alternate, and every loaded phase
 * is paired with the unloaded phases on either side. The loops run in
 * worker processes of this binary: one unbound worker for the whole run
 * (not loaded, no-op and unbound come from the same process) and one bound
 * at its exec per round. Figures are medians of per-round paired ratios,
 * printed with their interquartile range.
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
#include <sched.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"
#include "noop-lsm.skel.h"
#include "lsm_hooks.h"

#define HK_ROUNDS	24	/* rmmod/insmod rounds of the hook figures */
#define HK_MS		100	/* duration of one measured loop */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NL_BLOCKS	10
#define NL_PER_BLOCK	200
#define ACT_REPS	15
#define BENCH_DIR	"/tmp/bench"
#define BENCH_FILE	BENCH_DIR "/w"
/* the same file seven directories deeper: depth 8 beneath BENCH_DIR */
#define BENCH_DEEP	BENCH_DIR "/1/2/3/4/5/6/7"
#define BENCH_FILE8	BENCH_DEEP "/w"
/* made and removed by the create loop (one worker at a time) */
#define BENCH_NEW	BENCH_DIR "/new"

static const char *bench_rules[] = {
	"net:connect=token:127.0.0.0/8",
	"fs:write=token:" BENCH_DIR,
	"fs:read=open",
	"net:bind=open",
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

/* ---- the measured loops (run in a worker process) ---------------------- */

/*
 * The hook figures run the first NKIND; K_OPEN8 opens at depth 8, K_ROT*
 * open BENCH_ROT/d<i>/w for i = 0, 1, ... N-1 in turn (a workspace, /tmp,
 * a cache ...), and K_NEWDIR does so among BENCH_ROT_DIRS directories: a
 * directory the open memo does not hold at every open.
 */
enum { K_TCP, K_UDP, K_OPEN, K_SENDTO, K_SEND, K_CREAT, NKIND,
       K_OPEN8 = NKIND, K_ROT2, K_ROT8, K_ROT32, K_NEWDIR, NLOOP };

#define BENCH_ROT	BENCH_DIR "/rot"
#define BENCH_ROT_DIRS	1024
/* how long a loop runs before it is measured: the steady state */
#define BENCH_STEADY_MS	3000

/* how many directories a rotating kind opens in turn, 0 for the others */
static int rot_dirs(int kind)
{
	switch (kind) {
	case K_ROT2: return 2;
	case K_ROT8: return 8;
	case K_ROT32: return 32;
	case K_NEWDIR: return BENCH_ROT_DIRS;
	default: return 0;
	}
}

static const char *const kind_label[NKIND];

static const char *loop_label(int kind)
{
	static const char *const more[NLOOP - NKIND] = {
		"open depth 8", "open 2 directories", "open 8 directories",
		"open 32 directories", "open a new directory",
	};

	return kind < NKIND ? kind_label[kind] : more[kind - NKIND];
}

static const char *const kind_label[NKIND] = {
	"tcp connect", "udp connect", "open", "udp sendto", "udp send",
	"create+unlink",
};
/*
 * Figure names: "connect" is the TCP connect+close of the issue; udp_sendto
 * is a datagram to an address (judged as a connect), udp_send one on a
 * socket connected under a capability (rechecked); create_unlink makes a
 * file and removes it (path_mknod, inode_create, file_open, path_unlink,
 * inode_unlink: every create and unlink of the machine passes the last
 * two, which judge only POSIX message queues).
 */
static const char *const kind_fig[NKIND] = {
	"connect", "udp_connect", "open_write", "udp_sendto", "udp_send",
	"create_unlink",
};

/* The worker's sockets: a UDP socket to connect, one to send from, one connected. */
struct socks {
	int udp, udps, udpc;
};

/* the worker's rotation: names built once, so the loop only opens */
static char rot_path[BENCH_ROT_DIRS][sizeof(BENCH_ROT) + 16];
static unsigned long rot_next;

static void rot_names(void)
{
	int i;

	for (i = 0; i < BENCH_ROT_DIRS; i++)
		snprintf(rot_path[i], sizeof(rot_path[i]), BENCH_ROT "/d%d/w", i);
}

/* the files of the rotating kinds, made by the driver */
static void rot_make(void)
{
	int i, fd;

	rot_names();
	mkdir(BENCH_ROT, 0755);
	for (i = 0; i < BENCH_ROT_DIRS; i++) {
		char d[sizeof(rot_path[0])];

		snprintf(d, sizeof(d), BENCH_ROT "/d%d", i);
		if (mkdir(d, 0755) && errno != EEXIST)
			die(d, errno);
		fd = open(rot_path[i], O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			die(rot_path[i], errno);
		close(fd);
	}
}

/* One measured loop of @kind for about @ms; ops and elapsed ns. */
static int loop_run(int kind, int ms, int lfd, const struct sockaddr_in *sin,
		    const struct socks *so, unsigned long *opsp, uint64_t *nsp)
{
	uint64_t t0, t, end;
	unsigned long ops = 0;
	int i;

	t0 = cft_now_ns();
	end = t0 + (uint64_t)ms * 1000000ull;
	do {
		for (i = 0; i < 32; i++, ops++) {
			if (kind == K_TCP) {
				struct linger lg = { 1, 0 };
				int c = socket(AF_INET, SOCK_STREAM, 0), a;

				if (c < 0)
					return errno;
				/* RST on close: no TIME_WAIT pile-up */
				setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				if (connect(c, (const struct sockaddr *)sin, sizeof(*sin)))
					return errno;
				close(c);
				/* drain the (non-blocking) accept queue now and then */
				if (i == 31)
					while ((a = accept(lfd, NULL, NULL)) >= 0)
						close(a);
			} else if (kind == K_UDP) {
				if (connect(so->udp, (const struct sockaddr *)sin,
					    sizeof(*sin)))
					return errno;
			} else if (kind == K_SENDTO) {
				if (sendto(so->udps, "x", 1, 0,
					   (const struct sockaddr *)sin,
					   sizeof(*sin)) != 1)
					return errno;
			} else if (kind == K_SEND) {
				if (send(so->udpc, "x", 1, 0) != 1)
					return errno;
			} else if (kind == K_CREAT) {
				int fd = open(BENCH_NEW, O_WRONLY | O_CREAT | O_EXCL,
					      0644);

				if (fd < 0)
					return errno;
				close(fd);
				if (unlink(BENCH_NEW))
					return errno;
			} else {
				int n = rot_dirs(kind), fd;
				const char *path;

				if (n)
					path = rot_path[rot_next++ % (unsigned int)n];
				else
					path = kind == K_OPEN8 ? BENCH_FILE8 : BENCH_FILE;
				fd = open(path, O_WRONLY);
				if (fd < 0)
					return errno;
				close(fd);
			}
		}
		t = cft_now_ns();
	} while (t < end);
	*opsp = ops;
	*nsp = t - t0;
	return 0;
}

/*
 * The worker: a process of this binary, bound at its exec or not, that
 * runs "KIND MS" requests from stdin and answers "ERR OPS NS" on stdout.
 * Keeping it alive across cases makes the unbound, no-op and not-loaded
 * figures come from the very same process.
 */
static int worker_main(int lfd, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct socks so;
	char line[64];

	rot_names();
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* the datagrams go to the driver's UDP sink on the same port */
	so.udp = socket(AF_INET, SOCK_DGRAM, 0);
	so.udps = socket(AF_INET, SOCK_DGRAM, 0);
	so.udpc = socket(AF_INET, SOCK_DGRAM, 0);
	if (so.udp < 0 || so.udps < 0 || so.udpc < 0 ||
	    connect(so.udpc, (struct sockaddr *)&sin, sizeof(sin)))
		return errno;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long ops = 0;
		uint64_t ns = 0;
		int kind, ms, err;

		if (sscanf(line, "%d %d", &kind, &ms) != 2 || kind < 0 ||
		    kind >= NLOOP)
			return EINVAL;
		err = loop_run(kind, ms, lfd, &sin, &so, &ops, &ns);
		printf("%d %lu %" PRIu64 "\n", err, ops, ns);
	}
	return 0;
}

struct worker {
	pid_t pid;
	FILE *in, *out;
};

static void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity", errno);
}

/*
 * Sandbox the calling process with Landlock as capfence's bench epoch
 * sandboxes a bound worker: writing files is handled, and allowed beneath
 * BENCH_DIR only (fs:write=token:BENCH_DIR).
 */
static int landlock_self(void)
{
	struct landlock_ruleset_attr ra = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE,
	};
	struct landlock_path_beneath_attr pb = {
		.allowed_access = LANDLOCK_ACCESS_FS_WRITE_FILE,
	};
	int rs, err = 0;

	rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (rs < 0)
		return errno;
	pb.parent_fd = open(BENCH_DIR, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0 ||
	    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, rs, 0))
		err = errno;
	if (pb.parent_fd >= 0)
		close(pb.parent_fd);
	close(rs);
	return err;
}

/*
 * Start a worker, bound to @epoch with @toks if @epoch, sandboxed by
 * Landlock if @landlock, on @cpu if >= 0.
 */
static void worker_start_as(struct worker *w, uint64_t epoch,
			    const struct capfence_token *toks, int ntok, bool landlock,
			    int lfd, int port, int cpu)
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe", errno);
	w->pid = fork();
	if (w->pid < 0)
		die("fork", errno);
	if (!w->pid) {
		char fd[16], p[16];
		char *argv[] = { "bench-vm", "worker", fd, p, NULL };
		struct cft_reply r;
		struct cft_nl nl;

		dup2(in[0], 0);
		dup2(out[1], 1);
		snprintf(fd, sizeof(fd), "%d", lfd);
		snprintf(p, sizeof(p), "%d", port);
		if (cpu >= 0)
			pin_cpu(cpu);
		if (epoch && (cft_open(&nl) || cft_exec_set(&nl, epoch, toks, ntok, &r)))
			_exit(90);
		if (landlock && landlock_self())
			_exit(92);
		if (epoch)
			cft_nl_close(&nl);
		execv("/proc/self/exe", argv);
		_exit(91);
	}
	close(in[0]);
	close(out[1]);
	w->in = fdopen(in[1], "w");
	w->out = fdopen(out[0], "r");
	if (!w->in || !w->out)
		die("fdopen", errno);
	setvbuf(w->in, NULL, _IOLBF, 0);
}

static void worker_start(struct worker *w, uint64_t epoch,
			 const struct capfence_token *toks, int ntok, int lfd,
			 int port, int cpu)
{
	worker_start_as(w, epoch, toks, ntok, false, lfd, port, cpu);
}

/* One loop of @kind in @w: ns per operation. */
static double worker_run(struct worker *w, int kind, int ms)
{
	unsigned long ops;
	uint64_t ns;
	int err;

	fprintf(w->in, "%d %d\n", kind, ms);
	if (fscanf(w->out, "%d %lu %" SCNu64, &err, &ops, &ns) != 3 || err || !ops) {
		fprintf(stderr, "bench-vm: worker %d: %s loop failed (%s)\n",
			(int)w->pid, loop_label(kind),
			err ? strerror(err) : "no answer");
		exit(1);
	}
	return (double)ns / (double)ops;
}

static void worker_stop(struct worker *w)
{
	int st;

	fclose(w->in);
	fclose(w->out);
	waitpid(w->pid, &st, 0);
}

/* ---- module state --------------------------------------------------- */

struct env {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t epoch;
	struct capfence_token net, fs;
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
	err = cft_epoch_install(&e->nl, e->epoch, bench_rules,
				ARRAY_SIZE(bench_rules), ext, sizeof(ext));
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
	capfence_key_free(e->key);
	e->key = NULL;
	cft_nl_close(&e->nl);
}

/* An idle bound sandbox (static rollsim-sandbox), holding @t if given. */
static pid_t spawn_idle(struct cft_nl *nl, uint64_t epoch,
			const struct capfence_token *t, int *in_fd, int res_w)
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
				epoch, r.err, capfence_reason_name(r.reason), r.ext);
			printf("E\n");
			fflush(stdout);
			_exit(90);
		}
		cft_nl_close(nl);
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
static void wait_unbound(struct cft_nl *nl)
{
	struct capfence_status s;
	int i;

	for (i = 0; i < 300; i++) {
		if (!cft_nl_status(nl, &s) && !s.bound)
			return;
		usleep(20000);
	}
}

/* ---- figures 3 and 4: hook cost ------------------------------------- */

enum { C_NL, C_NOOP, C_UNB, C_BND, NCASE };

static const char *const case_label[NCASE] = {
	"not loaded", "no-op BPF-LSM", "capfence unbound", "capfence bound",
};

/* median and quartiles of @n values (left in @v sorted) */
struct spread {
	double p25, med, p75;
};

static struct spread spread_of(double *v, int n)
{
	struct spread s;

	s.med = median(v, n);
	s.p25 = pctl(v, n, 0.25);
	s.p75 = pctl(v, n, 0.75);
	return s;
}

static void module_unload(void)
{
	/* BPF programs are freed asynchronously after the detach */
	if (sh("for i in $(seq 100); do capfence detach >/dev/null 2>&1; "
	       "rmmod capfence 2>/dev/null && exit 0; sleep 0.1; done; exit 1"))
		die("rmmod capfence (is a task still bound?)", EBUSY);
}

static void module_load(void)
{
	if (sh("insmod /capfence.ko && capfence attach >/dev/null"))
		die("insmod/attach", EIO);
}

static void noop_attach(struct noop_lsm_bpf *skel, bool on)
{
	if (on) {
		if (noop_lsm_bpf__attach(skel))
			die("attach the no-op BPF-LSM programs", errno);
	} else {
		noop_lsm_bpf__detach(skel);
	}
}

/*
 * One phase: A on every kind, switch, B twice (kinds in order, then in
 * reverse), switch back, A in reverse: each kind runs A B B A, which
 * cancels a linear drift between the two cases. @skel, if given, is the
 * switch (no-op programs attached for B).
 */
static void phase(struct worker *wa, struct worker *wb,
		  struct noop_lsm_bpf *skel, int ms, double *a, double *b)
{
	int k;

	for (k = 0; k < NKIND; k++)
		a[k] = worker_run(wa, k, ms);
	if (skel)
		noop_attach(skel, true);
	for (k = 0; k < NKIND; k++)
		b[k] = worker_run(wb, k, ms);
	for (k = NKIND - 1; k >= 0; k--)
		b[k] = (b[k] + worker_run(wb, k, ms)) / 2;
	if (skel)
		noop_attach(skel, false);
	for (k = NKIND - 1; k >= 0; k--)
		a[k] = (a[k] + worker_run(wa, k, ms)) / 2;
}

/*
 * Rounds alternate an unloaded phase (capfence.ko removed: not loaded vs
 * the no-op BPF-LSM programs) and a loaded phase (hooks attached: unbound
 * vs bound worker), and end with an unloaded phase. A loaded phase's
 * figures are paired with the mean of the unloaded phases on either side
 * of it; the figures are medians of these per-round ratios.
 */
/*
 * The datagrams' destination: a UDP socket on @port that never reads, with
 * the smallest receive buffer, so every datagram takes the same drop path.
 */
static int udp_sink(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("udp sink", errno);
	return fd;
}

static void bench_landlock(int rounds, int ms, int lfd, uint16_t port,
			   bool builtin);

/*
 * The bound side of the hook figures: the bench epoch and tokens, an idle
 * bound task (so that an unbound task's lookups really look up; its
 * result pipe in @res) and a warmed-up worker bound with both tokens.
 */
static void bound_side_up(struct env *e, int res[2], struct worker *bnd,
			  int lfd, uint16_t port, int cpu, int ms)
{
	struct capfence_token toks[2];
	int k;

	env_up(e);
	if (pipe(res))
		die("pipe", errno);
	e->idle = spawn_idle(&e->nl, e->epoch, NULL, &e->idle_fd, res[1]);
	wait_ready(res[0], 1);
	toks[0] = e->net;
	toks[1] = e->fs;
	worker_start(bnd, e->epoch, toks, 2, lfd, port, cpu);
	for (k = 0; k < NKIND; k++)
		worker_run(bnd, k, ms / 4 + 1);	/* warm-up */
}

/*
 * What the hook loops use: the files they open, a listener the workers
 * inherit (connect), and the UDP sink on its port (datagrams).
 */
static void hook_targets(int *lfd, uint16_t *port, int *sink)
{
	int fd;

	mkdir(BENCH_DIR, 0755);
	fd = open(BENCH_FILE, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die(BENCH_FILE, errno);
	close(fd);
	if (sh("mkdir -p " BENCH_DEEP " && touch " BENCH_FILE8))
		die(BENCH_FILE8, EIO);
	*lfd = cft_listen(port);
	if (*lfd < 0)
		die("listen", *lfd);
	fcntl(*lfd, F_SETFD, 0);	/* the workers inherit it */
	fcntl(*lfd, F_SETFL, O_NONBLOCK);
	*sink = udp_sink(*port);
}

static void bench_hooks(int rounds, int ms, bool pin)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int wcpu = pin && ncpu > 1 ? 1 : -1;
	int nph = rounds + 1, lfd, sink, p, r, k, c;
	double (*v)[NCASE][NKIND];	/* per phase; loaded cases in [0..rounds) */
	double *x = calloc((size_t)nph, sizeof(*x));
	struct noop_lsm_bpf *skel;
	struct worker unb;
	uint16_t port;

	v = calloc((size_t)nph, sizeof(*v));
	if (!v || !x || rounds < 1 || ms < 1)
		die("bench_hooks", EINVAL);
	hook_targets(&lfd, &port, &sink);
	skel = noop_lsm_bpf__open();
	if (!skel)
		die("open the no-op BPF-LSM programs", errno);
	cf_lsm_skip_missing_hooks(skel->obj);
	if (noop_lsm_bpf__load(skel))
		die("load the no-op BPF-LSM programs", errno);
	/* the driver on vCPU 0, the measured loops alone on vCPU 1 */
	if (wcpu >= 0)
		pin_cpu(0);
	printf("# hooks: %d rounds (rmmod/insmod each), %d ms loops, %s\n",
	       rounds, ms, wcpu >= 0 ? "workers pinned to vCPU 1, driver to vCPU 0" :
	       "not pinned");
	worker_start(&unb, 0, NULL, 0, lfd, port, wcpu);
	for (k = 0; k < NKIND; k++)
		worker_run(&unb, k, ms / 4 + 1);	/* warm-up */

	for (p = 0; ; p++) {
		struct worker bnd;
		struct env e;
		int res[2];

		module_unload();
		phase(&unb, &unb, skel, ms, v[p][C_NL], v[p][C_NOOP]);
		if (p == rounds)
			break;
		module_load();
		bound_side_up(&e, res, &bnd, lfd, port, wcpu, ms);
		phase(&unb, &bnd, NULL, ms, v[p][C_UNB], v[p][C_BND]);
		worker_stop(&bnd);
		close(e.idle_fd);
		waitpid(e.idle, NULL, 0);
		close(res[0]);
		close(res[1]);
		wait_unbound(&e.nl);
		env_down(&e);
		fprintf(stderr, "# hooks round %d:", p);
		for (k = 0; k < NKIND; k++)
			fprintf(stderr, " %s %.0f/%.0f/%.0f/%.0f ns%s", kind_label[k],
				v[p][C_NL][k], v[p][C_NOOP][k], v[p][C_UNB][k],
				v[p][C_BND][k], k < NKIND - 1 ? "," : "\n");
	}
	worker_stop(&unb);
	noop_lsm_bpf__destroy(skel);
	module_load();
	bench_landlock(rounds, ms, lfd, port, false);
	close(sink);
	close(lfd);

	for (k = 0; k < NKIND; k++) {
		/* paired ratios: loaded phase r against unloaded phases r, r+1 */
		static const struct { int num, den; const char *name; } pr[] = {
			{ C_UNB, C_NL, "unbound/not loaded" },
			{ C_BND, C_NL, "bound/not loaded" },
			{ C_UNB, C_NOOP, "unbound/no-op" },
			{ C_BND, C_NOOP, "bound/no-op" },
			{ C_BND, C_UNB, "bound/unbound" },
		};
		struct spread rs[ARRAY_SIZE(pr)], noop, cs;
		char name[64];
		size_t i;

		printf("# %s ns/op, median [p25-p75] over phases:", kind_label[k]);
		for (c = 0; c < NCASE; c++) {
			int n = c == C_UNB || c == C_BND ? rounds : nph;

			for (p = 0; p < n; p++)
				x[p] = v[p][c][k];
			cs = spread_of(x, n);
			printf(" %s %.0f [%.0f-%.0f]%s", case_label[c], cs.med, cs.p25,
			       cs.p75, c < NCASE - 1 ? "," : "\n");
		}
		for (p = 0; p < nph; p++)
			x[p] = v[p][C_NOOP][k] / v[p][C_NL][k];
		noop = spread_of(x, nph);
		for (i = 0; i < ARRAY_SIZE(pr); i++) {
			for (r = 0; r < rounds; r++) {
				double den = pr[i].den == C_UNB ? v[r][C_UNB][k] :
					     (v[r][pr[i].den][k] + v[r + 1][pr[i].den][k]) / 2;

				x[r] = v[r][pr[i].num][k] / den;
			}
			rs[i] = spread_of(x, rounds);
		}
		printf("# %s paired ratios, median [p25-p75]: no-op/not loaded %.3f [%.3f-%.3f]",
		       kind_label[k], noop.med, noop.p25, noop.p75);
		for (i = 0; i < ARRAY_SIZE(pr); i++)
			printf(", %s %.3f [%.3f-%.3f]", pr[i].name, rs[i].med,
			       rs[i].p25, rs[i].p75);
		printf("\n");
		snprintf(name, sizeof(name), "%s_unbound_ratio", kind_fig[k]);
		line(name, rs[0].med, "", "<=1.02", rs[0].med <= 1.02);
		snprintf(name, sizeof(name), "%s_bound_ratio", kind_fig[k]);
		line(name, rs[1].med, "", "<=1.10", rs[1].med <= 1.10);
		/* the BPF-LSM floor, and capfence's own cost above it */
		snprintf(name, sizeof(name), "%s_noop_bpf_ratio", kind_fig[k]);
		line(name, noop.med, "", "report", true);
		snprintf(name, sizeof(name), "%s_unbound_vs_noop_bpf", kind_fig[k]);
		line(name, rs[2].med, "", "<=1.02", rs[2].med <= 1.02);
		snprintf(name, sizeof(name), "%s_bound_vs_noop_bpf", kind_fig[k]);
		line(name, rs[3].med, "", "<=1.10", rs[3].med <= 1.10);
	}
	free(v);
	free(x);
}

#define NK 7	/* the open loops of the Landlock comparison */
#define OPEN_MEMO_PARAM	"/sys/module/capfence/parameters/open_memo"

/* capfence's open memo on or off (module parameter open_memo) */
static void open_memo_set(bool on)
{
	FILE *f = fopen(OPEN_MEMO_PARAM, "w");

	if (!f || fputs(on ? "1" : "0", f) < 0 || fclose(f))
		die(OPEN_MEMO_PARAM, errno ? errno : EIO);
}

/*
 * The peer a user would pick instead of capfence for files: Landlock, in
 * Debian's kernel, with the equivalent rule. In one loaded boot, three
 * long-running workers open(O_WRONLY)+close files beneath BENCH_DIR:
 * capfence unbound (U), capfence bound under the bench epoch (B) and
 * Landlock-sandboxed, unbound by capfence (L). Each measured loop follows
 * BENCH_STEADY_MS of the same loop in the same worker, so the figures are
 * a long-running sandbox's steady state (the open memo's entries renew
 * themselves once a second), not the moment after a cache was filled.
 * Loops: one directory at depth 1 and 8; 2, 8 and 32 directories in turn;
 * a directory never opened before at every open (all of them beneath the
 * grant: the open memo answers for the subtree the grant admits); and the
 * last again with the memo switched off for the bound worker (open_memo=0):
 * what an open pays when it must be named, as the first open after a
 * rename anywhere on the machine does.
 * Workers go U B L, then L B U in the next round. capfence's own share is
 * B - U, Landlock's whole cost L - U; under -icount shift=2 a guest ns is
 * a quarter instruction.
 */
static void bench_landlock(int rounds, int ms, int lfd, uint16_t port,
			   bool builtin)
{
	static const int kinds[NK] = { K_OPEN, K_OPEN8, K_ROT2, K_ROT8,
				       K_ROT32, K_NEWDIR, K_NEWDIR };
	static const char *const kname[NK] = { "depth1", "depth8", "rot2",
					       "rot8", "rot32", "newdir",
					       "named" };
	/*
	 * capfence's share over Landlock's cost: the targets, 0 = report;
	 * built in, its hooks are called directly, as Landlock's are
	 */
	static const double target_module[NK] = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.25, 0 };
	static const double target_builtin[NK] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0 };
	const double *target = builtin ? target_builtin : target_module;
	const int named = NK - 1;
	double (*v)[3][NK] = calloc((size_t)rounds, sizeof(*v));
	double *x = calloc((size_t)rounds, sizeof(*x));
	struct worker w[3];
	struct capfence_token toks[2];
	struct env e;
	int r, k, i;

	if (!v || !x)
		die("bench_landlock", ENOMEM);
	rot_make();
	env_up(&e);
	toks[0] = e.net;
	toks[1] = e.fs;
	worker_start_as(&w[0], 0, NULL, 0, false, lfd, port, -1);
	worker_start_as(&w[1], e.epoch, toks, 2, false, lfd, port, -1);
	worker_start_as(&w[2], 0, NULL, 0, true, lfd, port, -1);
	printf("# open vs Landlock: %d rounds; each %d ms loop measured after %d ms of the same loop in the same worker\n",
	       rounds, ms, BENCH_STEADY_MS);
	for (r = 0; r < rounds; r++)
		for (k = 0; k < NK; k++)
			for (i = 0; i < 3; i++) {
				int wi = r % 2 ? 2 - i : i;

				if (k == named && wi == 1)
					open_memo_set(false);
				worker_run(&w[wi], kinds[k], BENCH_STEADY_MS);
				v[r][wi][k] = worker_run(&w[wi], kinds[k], ms);
				if (k == named && wi == 1)
					open_memo_set(true);
			}
	for (i = 0; i < 3; i++)
		worker_stop(&w[i]);
	for (k = 0; k < NK; k++) {
		struct spread cf, ll, rt;
		char name[64], tgt[16];

		for (r = 0; r < rounds; r++)
			x[r] = v[r][1][k] - v[r][0][k];
		cf = spread_of(x, rounds);
		for (r = 0; r < rounds; r++)
			x[r] = v[r][2][k] - v[r][0][k];
		ll = spread_of(x, rounds);
		for (r = 0; r < rounds; r++)
			x[r] = (v[r][1][k] - v[r][0][k]) / (v[r][2][k] - v[r][0][k]);
		rt = spread_of(x, rounds);
		printf("# %s%s: capfence bound - unbound %.0f ns [%.0f-%.0f], Landlock - unbound %.0f ns [%.0f-%.0f] (median [p25-p75] over %d rounds)\n",
		       loop_label(kinds[k]), k == named ? ", open memo off" : "",
		       cf.med, cf.p25, cf.p75, ll.med,
		       ll.p25, ll.p75, rounds);
		snprintf(name, sizeof(name), "open_%s_capfence_share_ns", kname[k]);
		line(name, cf.med, "ns", "report", true);
		snprintf(name, sizeof(name), "open_%s_landlock_ns", kname[k]);
		line(name, ll.med, "ns", "report", true);
		snprintf(name, sizeof(name), "open_%s_capfence_share_vs_landlock", kname[k]);
		if (target[k] > 0) {
			snprintf(tgt, sizeof(tgt), "<=%.2f", target[k]);
			line(name, rt.med, "", tgt, rt.med <= target[k]);
		} else {
			line(name, rt.med, "", "report", true);
		}
	}
	env_down(&e);
	free(v);
	free(x);
}

/* The Landlock comparison alone (bench-vm landlock ROUNDS MS). */
static void bench_files_only(int rounds, int ms)
{
	uint16_t port;
	int lfd;

	if (sh("mkdir -p " BENCH_DEEP " && touch " BENCH_FILE " " BENCH_FILE8))
		die(BENCH_FILE8, EIO);
	lfd = cft_listen(&port);
	if (lfd < 0)
		die("listen", lfd);
	fcntl(lfd, F_SETFD, 0);
	fcntl(lfd, F_SETFL, O_NONBLOCK);
	if (sh("grep -q '^capfence ' /proc/modules"))
		module_load();
	bench_landlock(rounds, ms, lfd, port, false);
	close(lfd);
}

/* ---- the built-in LSM: each hook figure against capfence left out ------ */

static void bench_memory(struct env *e);

/* Is capfence one of the active LSMs (built in, and named in lsm=)? */
static bool lsm_active(const char *name)
{
	char buf[256], *tok, *save = NULL;
	FILE *f = fopen("/sys/kernel/security/lsm", "r");
	bool found = false;

	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f))
		for (tok = strtok_r(buf, ",\n", &save); tok && !found;
		     tok = strtok_r(NULL, ",\n", &save))
			found = !strcmp(tok, name);
	fclose(f);
	return found;
}

/*
 * bench-vm builtin ROUNDS MS, on the kernel of `make kernel-builtin`,
 * booted twice by `make bench-builtin`: once with capfence left out of
 * lsm= (one unbound worker: the figures every ratio divides by) and once
 * with it in (an unbound and a bound worker, each kind A B B A per round
 * as in the hook figures, then the Landlock comparison and the memory
 * figure). A built-in LSM cannot be unloaded, so the two cases are two
 * boots of the same image; under -icount a guest ns is a quarter of an
 * instruction, and the same loop repeats to within 0.3 % across boots.
 * Lines: builtin_<figure>_{leftout,unbound,bound}_ns; the ratios are made
 * by selftests/bench/bench-builtin-table from both boots' lines.
 */
static void bench_builtin(int rounds, int ms)
{
	bool in = lsm_active("capfence");
	double (*a)[NKIND] = calloc((size_t)rounds, sizeof(*a));
	double (*b)[NKIND] = calloc((size_t)rounds, sizeof(*b));
	double *x = calloc((size_t)rounds, sizeof(*x));
	struct worker unb, bnd;
	int lfd, sink, r, k, res[2];
	struct env e;
	uint16_t port;

	if (!a || !b || !x || rounds < 1 || ms < 1)
		die("bench_builtin", EINVAL);
	hook_targets(&lfd, &port, &sink);
	printf("# builtin: capfence %s lsm= (%s), %d rounds, %d ms loops\n",
	       in ? "in" : "left out of", in ? "unbound and bound workers" :
	       "one unbound worker", rounds, ms);
	worker_start(&unb, 0, NULL, 0, lfd, port, -1);
	for (k = 0; k < NKIND; k++)
		worker_run(&unb, k, ms / 4 + 1);	/* warm-up */
	if (in)
		bound_side_up(&e, res, &bnd, lfd, port, -1, ms);
	for (r = 0; r < rounds; r++)
		phase(&unb, in ? &bnd : &unb, NULL, ms, a[r], b[r]);
	if (in)
		worker_stop(&bnd);
	worker_stop(&unb);
	for (k = 0; k < NKIND; k++) {
		struct spread su, sb;
		char name[64];

		for (r = 0; r < rounds; r++)
			x[r] = in ? a[r][k] : (a[r][k] + b[r][k]) / 2;
		su = spread_of(x, rounds);
		for (r = 0; r < rounds; r++)
			x[r] = b[r][k];
		sb = spread_of(x, rounds);
		if (!in) {
			printf("# %s ns/op, capfence left out: %.1f [%.1f-%.1f]\n",
			       kind_label[k], su.med, su.p25, su.p75);
			snprintf(name, sizeof(name), "builtin_%s_leftout_ns", kind_fig[k]);
			line(name, su.med, "ns", "report", true);
			continue;
		}
		printf("# %s ns/op: capfence unbound %.1f [%.1f-%.1f], bound %.1f [%.1f-%.1f]\n",
		       kind_label[k], su.med, su.p25, su.p75, sb.med, sb.p25, sb.p75);
		snprintf(name, sizeof(name), "builtin_%s_unbound_ns", kind_fig[k]);
		line(name, su.med, "ns", "report", true);
		snprintf(name, sizeof(name), "builtin_%s_bound_ns", kind_fig[k]);
		line(name, sb.med, "ns", "report", true);
	}
	if (in) {
		close(e.idle_fd);
		waitpid(e.idle, NULL, 0);
		close(res[0]);
		close(res[1]);
		wait_unbound(&e.nl);
		bench_memory(&e);
		env_down(&e);
		bench_landlock(rounds, ms, lfd, port, true);
	}
	close(sink);
	close(lfd);
	free(a);
	free(b);
	free(x);
}

/* ---- figure 2: netlink round trips ---------------------------------- */

static double getfamily_rtt(struct cft_nl *nl)
{
	uint16_t fam = nl->family;
	struct nlmsghdr *nlh;
	uint64_t t0;
	int err;

	nl->family = GENL_ID_CTRL;
	nlh = cft_nl_req(nl, CTRL_CMD_GETFAMILY, 0);
	nl->family = fam;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, CAPFENCE_GENL_NAME);
	t0 = cft_now_ns();
	err = cft_nl_talk(nl, nlh, NULL, NULL);
	if (err)
		die("GETFAMILY", err);
	return (double)(cft_now_ns() - t0);
}

static double delegate_rtt(struct cft_nl *nl, const struct capfence_token *t,
			   pid_t pid, int want_reason)
{
	struct cft_reply r;
	uint64_t t0 = cft_now_ns();
	int err = cft_delegate(nl, t, pid, 0, false, &r);
	double ns = (double)(cft_now_ns() - t0);

	if (want_reason ? r.reason != want_reason : err) {
		fprintf(stderr, "bench-vm: delegate: %d %s (%s)\n", err,
			capfence_reason_name(r.reason), r.ext);
		exit(1);
	}
	return ns;
}

static void bench_netlink(struct env *e)
{
	static double gf[NL_BLOCKS * NL_PER_BLOCK], dl[NL_BLOCKS * NL_PER_BLOCK];
	static double mm[NL_BLOCKS * NL_PER_BLOCK / 4];
	double gfm[NL_BLOCKS], dlm[NL_BLOCKS];
	struct capfence_token other;
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

/* ---- exec-to-bound, with and without a syscall policy ------------------- */

#define EXEC_REPS	60
#define SC_PROFILE	"/usr/share/capfence/seccomp-default.json"

/*
 * fork, EXEC_SET, (the epoch's seccomp program, as capfence exec loads
 * it), execve of this program, which tells the parent it runs: bound (the
 * bind is part of the execve) and past its dynamic loader, under the
 * filter when there is one.
 */
static double exec_rtt(uint64_t epoch, const struct capfence_seccomp_info *sc)
{
	uint64_t t0 = cft_now_ns(), t1;
	int p[2], st;
	pid_t pid;
	char c;

	if (pipe(p))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		struct cft_reply r;
		struct cft_nl nl;

		close(p[0]);
		if (cft_open(&nl) || cft_exec_set(&nl, epoch, NULL, 0, &r))
			_exit(126);
		cft_nl_close(&nl);
		if (sc->insns && capfence_seccomp_apply(sc->prog, sc->len))
			_exit(125);
		if (dup2(p[1], 3) < 0)
			_exit(124);
		execl("/proc/self/exe", "bench-vm", "exec-child", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		fprintf(stderr, "bench-vm: exec child of epoch %" PRIu64 " failed (status %d)\n",
			epoch, st);
		exit(1);
	}
	t1 = cft_now_ns();
	close(p[0]);
	waitpid(pid, &st, 0);
	return (double)(t1 - t0);
}

/*
 * ns per getppid() over @ms in a child under an allow-all seccomp filter
 * (@filter), or none: every call of such a task crosses capfence's fexit
 * after __secure_computing() while capfence is attached.
 */
static double sc_call_ns(bool filter, int ms)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog fp = { .len = 1, .filter = &allow };
	double ns = -1;
	int p[2], st;
	pid_t pid;

	if (pipe(p))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		uint64_t t0, end, n = 0;

		close(p[0]);
		if (filter && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
			       syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp)))
			_exit(1);
		t0 = cft_now_ns();
		end = t0 + (uint64_t)ms * 1000000;
		do {
			int i;

			for (i = 0; i < 1024; i++)
				syscall(SYS_getppid);
			n += 1024;
		} while (cft_now_ns() < end);
		ns = (double)(cft_now_ns() - t0) / (double)n;
		_exit(write(p[1], &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1);
	}
	close(p[1]);
	if (read(p[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(p[0]);
	waitpid(pid, &st, 0);
	if (ns < 0)
		die("seccomp loop", EIO);
	return ns;
}

/*
 * What the fexit costs an allowed call: per round, attached and detached
 * as A B B A, each with and without a filter; the median over rounds of
 * the paired difference with a filter (the fexit's cost), and without
 * one (no trampoline either way: the noise floor).
 */
static void bench_seccomp(int rounds, int ms)
{
	double with[64], without[64], att = 0, det = 0;
	int r, k;

	if (rounds > 64)
		rounds = 64;
	for (r = 0; r < rounds; r++) {
		double a[2] = { 0, 0 }, d[2] = { 0, 0 };

		for (k = 0; k < 4; k++) {
			bool attached = k == 0 || k == 3;

			if (sh(attached ? "capfence attach >/dev/null" :
					  "capfence detach >/dev/null"))
				die(attached ? "capfence attach" : "capfence detach", EIO);
			(attached ? a : d)[0] += sc_call_ns(true, ms) / 2;
			(attached ? a : d)[1] += sc_call_ns(false, ms) / 2;
		}
		with[r] = a[0] - d[0];
		without[r] = a[1] - d[1];
		att += a[0] / rounds;
		det += d[0] / rounds;
	}
	if (sh("capfence attach >/dev/null"))
		die("capfence attach", EIO);
	printf("# seccomp: getppid() of a task with an allow-all filter, %d rounds of %d ms: %.0f ns attached, %.0f ns detached (means)\n",
	       rounds, ms, att, det);
	line("seccomp-fexit-allowed-call", median(with, rounds), "ns",
	     "info", true);
	line("seccomp-no-filter-noise", median(without, rounds), "ns", "info",
	     true);
}

static void bench_exec(void)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open" };
	static double plain[EXEC_REPS], prof[EXEC_REPS];
	struct capfence_seccomp_info none = { 0 }, sc;
	struct capfence_seccomp *s = NULL;
	struct capfence_epoch ep;
	char err[CAPFENCE_ERR_MAX];
	struct cft_nl nl;
	uint64_t a, b;
	int i, ret;

	if (cft_open(&nl))
		die("netlink", EIO);
	a = cft_next_epoch(&nl);
	if (cft_epoch_install(&nl, a, rules, 2, err, sizeof(err)))
		die("epoch install", EINVAL);
	b = a + 1;
	ret = capfence_epoch_parse_rules(&ep, b, rules, 2, err, sizeof(err)) ?:
	      capfence_seccomp_compile_file(SC_PROFILE, &ep, &s, err, sizeof(err)) ?:
	      capfence_client_epoch_install_seccomp(nl.c, &ep, s, err, sizeof(err)) ?:
	      capfence_client_epoch_seccomp(nl.c, b, &sc, err, sizeof(err));
	capfence_seccomp_free(s);
	if (ret) {
		fprintf(stderr, "bench-vm: %s\n", err);
		exit(1);
	}
	/* interleaved, so that drift of the machine hits both alike */
	exec_rtt(a, &none);
	exec_rtt(b, &sc);
	for (i = 0; i < EXEC_REPS; i++) {
		plain[i] = exec_rtt(a, &none);
		prof[i] = exec_rtt(b, &sc);
	}
	{
		double m0 = median(plain, EXEC_REPS), m1 = median(prof, EXEC_REPS);

		printf("# exec-to-bound (fork, EXEC_SET, [seccomp program], execve, first write of the new image), %d runs each: no profile median %.0f us p90 %.0f us; with the default-deny profile (%u insns) median %.0f us p90 %.0f us\n",
		       EXEC_REPS, m0 / 1000, pctl(plain, EXEC_REPS, 0.9) / 1000,
		       sc.insns, m1 / 1000, pctl(prof, EXEC_REPS, 0.9) / 1000);
		line("exec_to_bound_profile_ratio", m1 / m0, "", "<=1.5", m1 / m0 <= 1.5);
	}
	capfence_free(sc.prog);
	cft_nl_close(&nl);
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
	struct capfence_status s;
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
	cft_nl_status(&e->nl, &s);
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

/* ---- figure 5b: exec and exercise with 1 vs N installed epochs -------- */

#define EP_REPS		15	/* first execs per phase */
#define EP_ROUNDS	9	/* exercise loops per phase */
#define EP_MS		200

/* Retire @id, waiting for its last credentials to be freed. */
static void retire_wait(struct cft_nl *nl, uint64_t id)
{
	struct nlmsghdr *nlh;
	int i, err = -EBUSY;

	for (i = 0; i < 200 && err == -EBUSY; i++) {
		nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_RETIRE, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
		err = cft_nl_talk(nl, nlh, NULL, NULL);
		if (err == -EBUSY)
			usleep(10000);
	}
	/* a module without EPOCH_RETIRE (measuring the tree before it) */
	if (err && err != -EOPNOTSUPP)
		die("epoch retire", -err);
}

struct ep_phase {
	double exec_first[EP_REPS];	/* the first exec into a new epoch */
	double exec[EP_REPS];		/* an exec into an active epoch */
	double connect[EP_ROUNDS];	/* ns per connect, token held */
};

/*
 * One phase: EP_REPS first execs, each into a new epoch (which the bind
 * activates; the one before is retired, so the count stays as it is),
 * interleaved with execs into the bench epoch, then EP_ROUNDS loops of
 * connect in @w. *@last is the newest epoch made here (active).
 */
static void ep_measure(struct env *e, struct worker *w, uint64_t *next,
		       uint64_t *last, struct ep_phase *ph)
{
	struct capfence_seccomp_info none = { 0 };
	char ext[256];
	int i;

	for (i = 0; i < EP_REPS; i++) {
		uint64_t id = (*next)++;

		if (cft_epoch_install(&e->nl, id, bench_rules, ARRAY_SIZE(bench_rules),
				      ext, sizeof(ext))) {
			fprintf(stderr, "bench-vm: epoch install %" PRIu64 ": %s\n", id, ext);
			exit(1);
		}
		ph->exec_first[i] = exec_rtt(id, &none);
		ph->exec[i] = exec_rtt(e->epoch, &none);
		if (*last)
			retire_wait(&e->nl, *last);
		*last = id;
	}
	worker_run(w, K_TCP, EP_MS);
	for (i = 0; i < EP_ROUNDS; i++)
		ph->connect[i] = worker_run(w, K_TCP, EP_MS);
}

static void bench_epochs(struct env *e, int n)
{
	static struct ep_phase ph[3];
	struct capfence_status s;
	uint64_t next, last = 0;
	long max = cft_param_get("epochs_max");
	struct worker w;
	uint16_t port;
	char ext[256];
	int lfd, i, k;
	double x1, xn, f1, fn, c1, cn;

	lfd = cft_listen(&port);
	if (lfd < 0 || fcntl(lfd, F_SETFL, O_NONBLOCK))
		die("listen", errno);
	if (max > 0 && max < n + 2 * EP_REPS + 16 &&
	    cft_param_set("epochs_max", n + 2 * EP_REPS + 16))
		die("epochs_max", EPERM);
	worker_start(&w, e->epoch, &e->net, 1, lfd, port, -1);
	next = cft_next_epoch(&e->nl);
	ep_measure(e, &w, &next, &last, &ph[0]);
	/* the fillers: the bench epoch's rules, every class compared */
	fprintf(stderr, "# epochs: installing %d\n", n - 1);
	for (i = 1; i < n; i++) {
		uint64_t id = next++;

		if (cft_epoch_install(&e->nl, id, bench_rules, ARRAY_SIZE(bench_rules),
				      ext, sizeof(ext))) {
			fprintf(stderr, "bench-vm: epoch install %" PRIu64 ": %s\n", id, ext);
			exit(1);
		}
	}
	ep_measure(e, &w, &next, &last, &ph[1]);
	/* back to 1: epochs_keep retires every unused one in one go */
	fprintf(stderr, "# epochs: retiring %d\n", n - 1);
	if (cft_param_set("epochs_keep", 1))
		fprintf(stderr, "# epochs: no epochs_keep: phase 2 has N installed too\n");
	if (cft_epoch_install(&e->nl, next++, bench_rules, ARRAY_SIZE(bench_rules),
			      ext, sizeof(ext)))
		die("epoch install", EINVAL);
	cft_param_set("epochs_keep", 0);
	ep_measure(e, &w, &next, &last, &ph[2]);
	worker_stop(&w);
	close(lfd);
	cft_nl_status(&e->nl, &s);
	for (k = 0; k < 3; k++) {
		printf("# epochs phase %d (%s): first exec median %.0f us, exec median %.0f us, connect median %.2f us\n",
		       k, k == 1 ? "N installed" : "1 installed",
		       median(ph[k].exec_first, EP_REPS) / 1000,
		       median(ph[k].exec, EP_REPS) / 1000,
		       median(ph[k].connect, EP_ROUNDS) / 1000);
	}
	f1 = (median(ph[0].exec_first, EP_REPS) + median(ph[2].exec_first, EP_REPS)) / 2;
	fn = median(ph[1].exec_first, EP_REPS);
	x1 = (median(ph[0].exec, EP_REPS) + median(ph[2].exec, EP_REPS)) / 2;
	xn = median(ph[1].exec, EP_REPS);
	c1 = (median(ph[0].connect, EP_ROUNDS) + median(ph[2].connect, EP_ROUNDS)) / 2;
	cn = median(ph[1].connect, EP_ROUNDS);
	printf("# epochs installed:      1 (before, after)  %d\n", n);
	printf("# first exec (activates) %8.0f us  %8.0f us\n", f1 / 1000, fn / 1000);
	printf("# exec, active epoch     %8.0f us  %8.0f us\n", x1 / 1000, xn / 1000);
	printf("# connect, token held    %8.2f us  %8.2f us\n", c1 / 1000, cn / 1000);
	line("epochs_n_vs_1_first_exec", fn / f1, "", "<=1.5", fn / f1 <= 1.5);
	line("epochs_n_vs_1_exec", xn / x1, "", "<=1.5", xn / x1 <= 1.5);
	line("epochs_n_vs_1_connect", cn / c1, "", "<=1.5", cn / c1 <= 1.5);
	if (max > 0)
		cft_param_set("epochs_max", max);
}

/* ---- figure 6: memory ------------------------------------------------- */

static int mem_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	uint64_t *out = data;

	cft_nl_parse(nlh, tb);
	if (tb[CAPFENCE_A_STATS] &&
	    !cft_nl_parse_nested(tb[CAPFENCE_A_STATS], st, &cf_attrs_stats)) {
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

	if (cft_nl_talk(&e->nl, cft_nl_req(&e->nl, CAPFENCE_CMD_STATUS_GET, 0),
		       mem_cb, b))
		die("status", EIO);
	printf("bench: cred_bytes value=%" PRIu64 "B target=report ok\n", b[0]);
	printf("bench: cap_bytes value=%" PRIu64 "B target=report ok\n", b[1]);
}

/* ---- figure 7: an unbound task's hooks with the credential table full ---- */

#define CT_CREDS	64	/* fresh unbound credentials measured */
#define CT_OPS		500	/* hooked calls per credential */
#define CT_REPS		5
#define CT_TRY		300000	/* credentials a sandbox tries to keep */

/*
 * What an unbound task pays per hook: getsockopt(SO_TYPE) is little more
 * than capfence_socket_getsockopt()'s credential filter test, and its
 * table lookup when the credential's counter is set. The cost depends on
 * where the credential lands, so it is averaged over CT_CREDS new ones,
 * each unbound and kept alive (cft_creds_hold()), so that the allocator
 * cannot hand the same address back. ns per call.
 */
static double unbound_hook_ns(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0), c, i, type, err;
	double sum = 0;
	socklen_t len;
	uint64_t t0;

	if (s < 0)
		die("unbound hook loop", errno);
	for (c = 0; c < CT_CREDS; c++) {
		if (cft_creds_hold(1, &err) != 1)
			die("a new credential", err);
		t0 = cft_now_ns();
		for (i = 0; i < CT_OPS; i++) {
			len = sizeof(type);
			if (getsockopt(s, SOL_SOCKET, SO_TYPE, &type, &len))
				die("getsockopt", errno);
		}
		sum += (double)(cft_now_ns() - t0) / CT_OPS;
	}
	close(s);
	return sum / CT_CREDS;
}

static double unbound_hook_median(void)
{
	double v[CT_REPS];
	int i;

	for (i = 0; i < CT_REPS; i++)
		v[i] = unbound_hook_ns();
	cft_creds_drop();
	return median(v, CT_REPS);
}

/* bench-vm filler: bound at its exec, keeps CT_TRY credentials if it can */
static int filler_main(void)
{
	char c;
	int err, n = cft_creds_hold(CT_TRY, &err);

	printf("%d %d\n", n, err);
	fflush(stdout);
	/* hold them until the driver closes our stdin */
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

/* A bound sandbox that keeps as many credentials as it may; its count. */
static pid_t filler_start(struct env *e, int *in_fd, int *made, int *err)
{
	int in[2], out[2];
	pid_t pid;
	FILE *f;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		char *argv[] = { "bench-vm", "filler", NULL };
		struct cft_reply r;

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (cft_open(&e->nl) || cft_exec_set(&e->nl, e->epoch, NULL, 0, &r))
			_exit(90);
		execv("/proc/self/exe", argv);
		_exit(91);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	if (!f || fscanf(f, "%d %d", made, err) != 2)
		die("filler", EIO);
	fclose(f);
	*in_fd = in[1];
	return pid;
}

static void cred_limit_set(const char *v)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd),
		 "echo %s > /sys/module/capfence/parameters/cred_limit", v);
	if (sh(cmd))
		die("cred_limit", EIO);
}

static void bench_credtable(struct env *e)
{
	static const char *const phase_name[3] = {
		"empty", "one sandbox at its limit", "300000 entries (no limit)",
	};
	double ns[3];
	int made[3] = { 0 }, err, fd = -1, p;
	char limit[32] = "";
	FILE *f;
	pid_t pid;

	f = fopen("/sys/module/capfence/parameters/cred_limit", "r");
	if (!f || !fgets(limit, sizeof(limit), f))
		die("cred_limit", ENOENT);
	fclose(f);
	limit[strcspn(limit, "\n")] = '\0';
	wait_unbound(&e->nl);
	for (p = 0; p < 3; p++) {
		if (p == 2)
			cred_limit_set("0");
		pid = p ? filler_start(e, &fd, &made[p], &err) : 0;
		ns[p] = unbound_hook_median();
		if (pid) {
			close(fd);
			waitpid(pid, NULL, 0);
			wait_unbound(&e->nl);
		}
		printf("# credtable: %s (%d credentials kept): unbound getsockopt %.1f ns\n",
		       phase_name[p], made[p], ns[p]);
	}
	cred_limit_set(limit);
	line("credtable_unbound_hook_empty_ns", ns[0], "ns", "report", true);
	line("credtable_unbound_hook_at_limit_ns", ns[1], "ns", "report", true);
	line("credtable_unbound_hook_300k_ns", ns[2], "ns", "report", true);
	line("credtable_at_limit_vs_empty", ns[1] / ns[0], "", "<=1.05",
	     ns[1] / ns[0] <= 1.05);
	line("credtable_300k_vs_empty", ns[2] / ns[0], "", "report", true);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	int ntasks = 4000;
	struct env e;

	if (!strcmp(what, "worker") && argc == 4)
		return worker_main(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(what, "filler"))
		return filler_main();
	if (!strcmp(what, "exec-child"))
		return write(3, "r", 1) == 1 ? 0 : 1;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(what, "hooks")) {
		bench_hooks(argc > 2 ? atoi(argv[2]) : HK_ROUNDS,
			    argc > 3 ? atoi(argv[3]) : HK_MS,
			    argc > 4 && atoi(argv[4]));
		return 0;
	}
	if (!strcmp(what, "landlock")) {
		bench_files_only(argc > 2 ? atoi(argv[2]) : HK_ROUNDS,
				 argc > 3 ? atoi(argv[3]) : HK_MS);
		return 0;
	}
	if (!strcmp(what, "builtin")) {
		bench_builtin(argc > 2 ? atoi(argv[2]) : 4,
			      argc > 3 ? atoi(argv[3]) : HK_MS);
		return 0;
	}
	if (!strcmp(what, "exec")) {
		bench_exec();
		return 0;
	}
	if (!strcmp(what, "seccomp")) {
		bench_seccomp(argc > 2 ? atoi(argv[2]) : 8,
			      argc > 3 ? atoi(argv[3]) : 200);
		return 0;
	}
	if (argc > 2)
		ntasks = atoi(argv[2]);
	env_up(&e);
	if (!strcmp(what, "all") || !strcmp(what, "netlink"))
		bench_netlink(&e);
	if (!strcmp(what, "all") || !strcmp(what, "activate"))
		bench_activate(&e, ntasks);
	if (!strcmp(what, "all") || !strcmp(what, "memory"))
		bench_memory(&e);
	if (!strcmp(what, "credtable"))
		bench_credtable(&e);
	if (!strcmp(what, "epochs"))
		bench_epochs(&e, argc > 2 ? atoi(argv[2]) : 10000);
	env_down(&e);
	return 0;
}
