// SPDX-License-Identifier: GPL-2.0
/*
 * rollsim: the seed's rolling-update failure at fleet scale, with real
 * processes, and the same run through capfence.
 *
 *   rollsim [--mode naive|capfence] [--sandboxes N] [--parents P]
 *           [--inflight K] [--retries R] [--backoff-ms MS] [--roll-at F]
 *           [--roll-len F] [--epoch ID] [--seed S] [--sandbox PATH] [--json]
 *
 * The fleet: P parent agents (sandboxes holding a net:connect capability)
 * and N - P children. The orchestrator (this process, unbound and
 * privileged) starts children continuously, at most K at a time; each child
 * is a real process bound to an epoch, receives its parent's capability by
 * delegation, then does one "RPC": connect to a loopback server run by the
 * simulator, send a byte, read the answer.
 *
 * The roll: epoch OLD (41 when free) lets net:connect reach a restricted
 * CIDR and loopback with a token; when F of the children have been started,
 * epoch NEW (42) is installed and narrows net:connect to loopback. Over the
 * next roll-len of the run, a growing share of new children is spawned under
 * NEW, and parents are replaced one by one by parents spawned under NEW with
 * NEW-minted tokens. Until a parent is replaced it keeps delegating its OLD
 * token: that is the seed's cross-epoch delegation.
 *
 * --mode naive (what the seed describes): the orchestrator validates the
 * capability graph only (MAC checked with libcapfence, holder known, epochs
 * ignored) and hands the token over; every sandbox gets, at spawn, a
 * seccomp filter for its epoch that kills the process (SECCOMP_RET_KILL_
 * PROCESS) on a connect() the epoch does not allow. seccomp cannot read the
 * sockaddr behind connect()'s pointer nor any grant state, so NEW's "loopback
 * only, gated behind a NEW-era grant" is modelled with what a static filter
 * can see: the sandbox runtime opens a socket obtained under a grant minted
 * for NEW (or later) on the reserved descriptor ROLLSIM_GRANT_FD, and NEW's
 * filter allows connect() only on that descriptor. A child under NEW holding
 * an OLD token therefore dies of SIGSYS in the middle of its RPC; OLD's
 * filter allows connect() (its CIDR restriction is just as invisible to
 * seccomp, and loopback is inside it anyway). On an unexplained death the
 * orchestrator retries with exponential backoff, re-delegating the same
 * (stale) token to a fresh child, until its retries are exhausted.
 *
 * --mode capfence: children are bound to their epoch by capfence.ko (the
 * pending exec epoch is set over netlink, then execve), parents hold their
 * token in the kernel, and the orchestrator delegates over netlink
 * (DELEGATE, with the parent as delegator). On epoch_mismatch it re-mints
 * the same class under the receiver's epoch, keeping the constraints that
 * epoch's rule admits, and retries once without a delegator, like
 * `capfence delegate --remint`. A fenced/class_denied rejection (the
 * child's epoch can no longer carry this class) makes it respawn the child
 * under the newest epoch. Every such event is typed and synchronous.
 *
 * Output: a summary, or with --json one object (see docs/benchmarks.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sodium.h>
#include "common.h"
#include "rollsim.h"

enum mode { M_NAIVE, M_CAPFENCE };

static struct {
	enum mode mode;
	int n, parents, inflight, retries, backoff_ms;
	double roll_at, roll_len;
	unsigned int seed;
	uint64_t epoch;
	const char *sandbox;
	const char *seccomp;	/* capfence: each epoch's profile, or "none" */
	bool json, verbose;
} opt = {
	.mode = M_CAPFENCE, .n = 4000, .parents = 0, .inflight = 8,
	.retries = 3, .backoff_ms = 20, .roll_at = 0.4, .roll_len = 0.2,
	.seed = 42, .seccomp = "/usr/share/capfence/seccomp-default.json",
};

/* ---- bookkeeping ---------------------------------------------------- */

enum wstate { W_PENDING, W_SPAWNING, W_GO, W_BACKOFF, W_DONE_OK, W_DONE_LOST };

struct work {
	enum wstate st;
	int parent;
	int attempts;		/* children spawned for this item */
	pid_t pid;		/* current child */
	uint64_t epoch;		/* its epoch */
	bool stale_set;		/* naive: the token chosen at the first try */
	struct capfence_token stale;
	uint64_t retry_at;	/* ns, W_BACKOFF */
};

struct parent {
	pid_t pid, next_pid;	/* next_pid: replacement being spawned */
	int in_fd, next_fd;
	uint64_t epoch;
	struct capfence_token tok, next_tok;
	bool replaced;
};

/* A process of ours, looked up by pid. */
enum pkind { P_NONE, P_CHILD, P_PARENT, P_DISCARDED };

struct proc {
	pid_t pid;
	enum pkind kind;
	int idx;		/* work item or parent */
	int in_fd;
	bool ready, alive;
};

struct tick {
	uint64_t spawned, delegations, rejected, reminted, respawned, sigsys,
		 lost, rpc_ok, rpc_eacces, unattributable;
	double share_new;
};

static struct {
	struct work *w;
	int nw;
	struct parent *p;
	int np;
	struct proc *procs;
	size_t nprocs_cap;
	int started, finished, active, alive, nbackoff;
	int res_r, res_w, sigfd, srv_port;
	pid_t srv_pid;
	uint64_t t0, roll_t, roll_end_t;
	bool rolled;
	uint64_t e_old, e_new;
	struct capfence_epoch ep_old, ep_new;
	struct capfence_key *key;
	struct capfence_verifier *ver;	/* the orchestrator's memo of its tokens */
	struct cft_nl nl;
	bool have_nl;
	char rbuf[1 << 16];
	size_t rlen;
	/* results */
	uint64_t delegations, reminted, respawned, sigsys, lost, rpc_ok,
		 rpc_eacces, unattributable, spawn_err, other_deaths,
		 cross_epoch, processes;
	uint64_t reject[__CAPFENCE_R_MAX];
	/* capfence: each epoch's syscall policy ([0] old, [1] new) and the
	 * seccomp denials (EACCES) its children met */
	struct capfence_seccomp_info sc[2];
	uint64_t sc_denied[2];
	uint64_t *lat, *lat_x;	/* ns per delivery; cross-epoch ones */
	size_t nlat, nlat_x;
	struct tick *tl;
	size_t ntl;
	struct capfence_status st0, st1;
} S;

static uint64_t now_ns(void)
{
	return cft_now_ns();
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rollsim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static struct tick *tick(void)
{
	size_t s = (size_t)((now_ns() - S.t0) / 1000000000ull);

	if (s >= S.ntl) {
		size_t n = s + 16;

		S.tl = realloc(S.tl, n * sizeof(*S.tl));
		if (!S.tl)
			die("out of memory");
		memset(S.tl + S.ntl, 0, (n - S.ntl) * sizeof(*S.tl));
		S.ntl = n;
	}
	return &S.tl[s];
}

static struct proc *proc_slot(pid_t pid, bool create)
{
	size_t mask = S.nprocs_cap - 1, i = ((size_t)pid * 2654435761u) & mask;

	for (;;) {
		struct proc *p = &S.procs[i];

		if (p->pid == pid)
			return p;
		if (!p->pid) {
			if (!create)
				return NULL;
			p->pid = pid;
			return p;
		}
		i = (i + 1) & mask;
	}
}

/* Share of new spawns under the new epoch at the current progress. */
static double share_new(void)
{
	double prog = (double)S.started / S.nw, x;

	if (!S.rolled)
		return 0;
	x = (prog - opt.roll_at) / opt.roll_len;
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* ---- spawning --------------------------------------------------------- */

static void install_filter(uint64_t epoch)
{
	bool narrowed = epoch >= S.e_new;
	struct sock_filter allow_all[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter gate[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROLLSIM_GRANT_FD, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {
		.len = narrowed ? sizeof(gate) / sizeof(gate[0]) : 1,
		.filter = narrowed ? gate : allow_all,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(120);
}

/* Fork a sandbox bound to @epoch (capfence: holding @tok if given). */
static pid_t spawn(const char *role, uint64_t epoch, const struct capfence_token *tok,
		   int *in_fd)
{
	int in[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		char *argv[] = { "rollsim-sandbox", (char *)role, NULL };
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(in[0], 0) < 0 || dup2(S.res_w, 1) < 0)
			_exit(121);
		syscall(SYS_close_range, 3u, ~0u, 0u);
		if (opt.mode == M_NAIVE) {
			install_filter(epoch);
		} else {
			struct cft_nl nl;
			struct cft_reply r = { .err = -EIO, .reason = -1 };

			const struct capfence_seccomp_info *sc =
				&S.sc[epoch >= S.e_new];

			if (cft_open(&nl) ||
			    cft_exec_set(&nl, epoch, tok, tok ? 1 : 0, &r)) {
				dprintf(1, "E %d %d %d\n", getpid(), -r.err,
					r.reason);
				_exit(3);
			}
			cft_nl_close(&nl);
			/* the epoch's syscall policy, as capfence exec loads it */
			if (sc->insns && capfence_seccomp_apply(sc->prog, sc->len)) {
				dprintf(1, "E %d %d -1\n", getpid(), errno);
				_exit(3);
			}
		}
		execv(opt.sandbox, argv);
		dprintf(1, "E %d %d -1\n", getpid(), errno);
		_exit(127);
	}
	close(in[0]);
	*in_fd = in[1];
	S.alive++;
	S.processes++;
	return pid;
}

static void spawn_child(int i, uint64_t epoch)
{
	struct work *w = &S.w[i];
	struct proc *p;
	int fd;

	w->pid = spawn("child", epoch, NULL, &fd);
	w->epoch = epoch;
	w->attempts++;
	w->st = W_SPAWNING;
	p = proc_slot(w->pid, true);
	*p = (struct proc){ .pid = w->pid, .kind = P_CHILD, .idx = i,
			    .in_fd = fd, .alive = true };
	tick()->spawned++;
}

static int mint(uint64_t epoch, const struct capfence_epoch *rules_of,
		const struct capfence_token *like, struct capfence_token *out)
{
	const struct capfence_rule *r = &rules_of->rules[CAPFENCE_CLASS_NET_CONNECT];
	struct capfence_constraint cs[CAPFENCE_MAX_CONSTRAINTS];
	char err[CAPFENCE_ERR_MAX];
	size_t n = 0, i;

	/* keep what the epoch's rule admits: the narrowed grant */
	if (like) {
		for (i = 0; i < like->n; i++)
			if (capfence_rule_admits_constraints(r, &like->constraints[i], 1))
				cs[n++] = like->constraints[i];
	} else {
		for (i = 0; i < r->n; i++)
			cs[n++] = r->constraints[i];
	}
	if (capfence_verifier_mint(S.ver, S.key, CAPFENCE_CLASS_NET_CONNECT, epoch,
			     cs, n, 0, out, err, sizeof(err)))
		die("mint: %s", err);
	return 0;
}

static const struct capfence_epoch *rules(uint64_t epoch)
{
	return epoch >= S.e_new ? &S.ep_new : &S.ep_old;
}

static void spawn_parent(int j, uint64_t epoch, bool replacement)
{
	struct parent *p = &S.p[j];
	struct capfence_token *t = replacement ? &p->next_tok : &p->tok;
	struct proc *pr;
	pid_t pid;
	int fd;

	mint(epoch, rules(epoch), NULL, t);
	pid = spawn("idle", epoch, opt.mode == M_CAPFENCE ? t : NULL, &fd);
	if (replacement) {
		p->next_pid = pid;
		p->next_fd = fd;
	} else {
		p->pid = pid;
		p->in_fd = fd;
		p->epoch = epoch;
	}
	pr = proc_slot(pid, true);
	*pr = (struct proc){ .pid = pid, .kind = P_PARENT, .idx = j,
			     .in_fd = fd, .alive = true };
}

/* ---- delegation --------------------------------------------------------- */

static void lat_add(uint64_t ns, bool cross)
{
	S.lat = realloc(S.lat, (S.nlat + 1) * sizeof(*S.lat));
	if (!S.lat)
		die("out of memory");
	S.lat[S.nlat++] = ns;
	if (cross) {
		S.lat_x = realloc(S.lat_x, (S.nlat_x + 1) * sizeof(*S.lat_x));
		if (!S.lat_x)
			die("out of memory");
		S.lat_x[S.nlat_x++] = ns;
	}
}

static void reject(int reason)
{
	if (reason >= 0 && reason < __CAPFENCE_R_MAX)
		S.reject[reason]++;
	else
		S.reject[0]++;	/* a reply without a reason: counted as ? */
	tick()->rejected++;
}

/*
 * Deliver the parent's capability to the ready child of item i.
 * Returns 0 when delivered, 1 when the child must be respawned under the
 * newest epoch, -1 on a failure that has no typed reason.
 */
static int deliver(int i, uint64_t *grant_epoch)
{
	struct work *w = &S.w[i];
	struct parent *p = &S.p[w->parent];
	uint64_t t = now_ns();
	bool cross;
	int ret = 0;

	if (opt.mode == M_NAIVE) {
		const struct capfence_token *tok = &p->tok;

		/* the seed's retry loop re-delegates the same stale token */
		if (!w->stale_set) {
			w->stale = *tok;
			w->stale_set = true;
		}
		tok = &w->stale;
		cross = tok->epoch_id != w->epoch;
		S.cross_epoch += cross;
		/*
		 * Graph-only validation: MAC (libcapfence), class known, holder
		 * recorded in the graph (parents are never revoked here). The
		 * receiver's epoch is not consulted: decide against the
		 * token's own epoch, which is exactly "epochs ignored".
		 */
		S.delegations++;
		tick()->delegations++;
		if (capfence_verifier_decide(S.ver, tok, rules(tok->epoch_id)) !=
		    CAPFENCE_R_OK)
			ret = -1;
		*grant_epoch = tok->epoch_id;
		lat_add(now_ns() - t, cross);
		return ret;
	}

	struct cft_reply r;
	struct capfence_token nt;
	int err;

	cross = p->tok.epoch_id != w->epoch;
	S.cross_epoch += cross;
	S.delegations++;
	tick()->delegations++;
	err = cft_delegate(&S.nl, &p->tok, w->pid, p->pid, false, &r);
	if (err && r.reason == CAPFENCE_R_EPOCH_MISMATCH) {
		reject(r.reason);
		mint(r.epoch_id, rules(r.epoch_id), &p->tok, &nt);
		S.reminted++;
		tick()->reminted++;
		S.delegations++;
		tick()->delegations++;
		err = cft_delegate(&S.nl, &nt, w->pid, 0, false, &r);
	}
	if (err) {
		reject(r.reason);
		if (r.reason == CAPFENCE_R_FENCED ||
		    r.reason == CAPFENCE_R_CLASS_DENIED ||
		    r.reason == CAPFENCE_R_REVOKED ||
		    r.reason == CAPFENCE_R_NOT_HELD)
			ret = 1;
		else
			ret = -1;
		if (opt.verbose)
			fprintf(stderr, "# item %d pid %d: delegate: %s (%s)\n",
				i, w->pid, capfence_reason_name(r.reason), r.ext);
	}
	*grant_epoch = w->epoch;
	lat_add(now_ns() - t, cross);
	return ret;
}

/* ---- the work items --------------------------------------------------- */

static uint64_t pick_epoch(int i)
{
	unsigned int h = (unsigned int)i * 2654435761u ^ opt.seed * 40503u;

	h ^= h >> 15;
	h *= 2246822519u;
	h ^= h >> 13;
	return (double)(h % 100000) / 100000.0 < share_new() ? S.e_new : S.e_old;
}

static void discard(struct proc *pr)
{
	/* EOF before "go": the child exits cleanly, nothing was attempted */
	close(pr->in_fd);
	pr->in_fd = -1;
	pr->kind = P_DISCARDED;
}

static void item_done(int i, bool ok)
{
	struct work *w = &S.w[i];

	w->st = ok ? W_DONE_OK : W_DONE_LOST;
	S.active--;
	S.finished++;
	if (ok) {
		S.rpc_ok++;
		tick()->rpc_ok++;
	} else {
		S.lost++;
		tick()->lost++;
	}
}

/* The attempt of item i failed: back off and retry, or give up. */
static void item_retry(int i)
{
	struct work *w = &S.w[i];

	if (w->attempts > opt.retries) {
		item_done(i, false);
		return;
	}
	w->st = W_BACKOFF;
	S.nbackoff++;
	w->retry_at = now_ns() + (uint64_t)opt.backoff_ms * 1000000ull *
				 (1ull << (w->attempts - 1));
}

static void on_ready(struct proc *pr)
{
	char go[64];
	uint64_t grant;
	int n, ret;

	pr->ready = true;
	if (pr->kind == P_PARENT) {
		struct parent *p = &S.p[pr->idx];

		if (pr->pid == p->next_pid) {
			/* the replacement is up: retire the old parent */
			struct proc *old = proc_slot(p->pid, false);

			close(p->in_fd);
			if (old)
				old->in_fd = -1;
			p->pid = p->next_pid;
			p->in_fd = p->next_fd;
			p->tok = p->next_tok;
			p->epoch = S.e_new;
			p->next_pid = 0;
		}
		return;
	}
	if (pr->kind != P_CHILD)
		return;
	ret = deliver(pr->idx, &grant);
	if (ret > 0) {
		/* typed: this epoch can no longer carry the class */
		discard(pr);
		S.respawned++;
		tick()->respawned++;
		S.w[pr->idx].attempts--;	/* not a failure of the item */
		spawn_child(pr->idx, S.e_new);
		return;
	}
	if (ret < 0) {
		discard(pr);
		S.unattributable++;
		tick()->unattributable++;
		item_retry(pr->idx);
		return;
	}
	n = snprintf(go, sizeof(go), "go %d %" PRIu64 " %" PRIu64 "\n",
		     S.srv_port, grant, opt.mode == M_NAIVE ? S.e_new : 0);
	if (write(pr->in_fd, go, (size_t)n) != n)
		die("write go: %s", strerror(errno));
	S.w[pr->idx].st = W_GO;
}

static void on_result(struct proc *pr, int err)
{
	if (pr->kind != P_CHILD || S.w[pr->idx].pid != pr->pid)
		return;
	if (!err) {
		item_done(pr->idx, true);
		return;
	}
	if (err == EACCES) {
		/* capfence's tagged denial (audit record): attributable */
		S.rpc_eacces++;
		tick()->rpc_eacces++;
	} else {
		S.unattributable++;
		tick()->unattributable++;
	}
	item_retry(pr->idx);
}

static void on_exit_status(pid_t pid, int status)
{
	struct proc *pr = proc_slot(pid, false);

	if (pid == S.srv_pid) {
		S.srv_pid = 0;
		return;
	}
	if (!pr || !pr->alive)
		return;
	pr->alive = false;
	S.alive--;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
		S.sigsys++;
		tick()->sigsys++;
	} else if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) &&
		   WEXITSTATUS(status) != 3)) {
		S.other_deaths++;
	}
	if (pr->in_fd >= 0 && pr->kind != P_PARENT)
		close(pr->in_fd);
	pr->in_fd = -1;
	if (pr->kind != P_CHILD || S.w[pr->idx].pid != pid)
		return;
	switch (S.w[pr->idx].st) {
	case W_SPAWNING:
	case W_GO:
		/* died without an answer: the RPC in flight is gone */
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 3)) {
			S.unattributable++;
			tick()->unattributable++;
		}
		item_retry(pr->idx);
		break;
	default:
		break;
	}
}

static void on_line(char *line)
{
	int pid, a, b;
	struct proc *pr;

	if (sscanf(line, "ready %d", &pid) == 1) {
		pr = proc_slot(pid, false);
		/* a child's probe of its syscall policy: attributed by epoch */
		if (pr && pr->kind == P_CHILD && sscanf(line, "ready %d %d", &pid, &a) == 2 &&
		    a == EACCES && opt.mode == M_CAPFENCE)
			S.sc_denied[S.w[pr->idx].epoch >= S.e_new]++;
		if (pr && pr->alive)
			on_ready(pr);
	} else if (sscanf(line, "R %d %d", &pid, &a) == 2) {
		pr = proc_slot(pid, false);
		if (pr)
			on_result(pr, a);
	} else if (sscanf(line, "E %d %d %d", &pid, &a, &b) == 3) {
		/* EXEC_SET refused (typed) or execve failed */
		S.spawn_err++;
		if (opt.verbose)
			fprintf(stderr, "# pid %d: spawn failed: errno %d reason %s\n",
				pid, a, capfence_reason_name(b));
	}
}

/* Handle whatever arrived, waiting at most timeout_ms. */
static void pump(int timeout_ms)
{
	struct pollfd pf[2] = {
		{ .fd = S.res_r, .events = POLLIN },
		{ .fd = S.sigfd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	int status;
	pid_t pid;

	if (poll(pf, 2, timeout_ms) < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
	for (;;) {
		ssize_t n = read(S.res_r, S.rbuf + S.rlen, sizeof(S.rbuf) - 1 - S.rlen);
		char *nl, *s;

		if (n <= 0)
			break;
		S.rlen += (size_t)n;
		S.rbuf[S.rlen] = '\0';
		s = S.rbuf;
		while ((nl = strchr(s, '\n'))) {
			*nl = '\0';
			on_line(s);
			s = nl + 1;
		}
		S.rlen -= (size_t)(s - S.rbuf);
		memmove(S.rbuf, s, S.rlen);
	}
	while (read(S.sigfd, &si, sizeof(si)) > 0)
		;
	/* reap after reading: an answer is always seen before its death */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		on_exit_status(pid, status);
}

/* ---- the loopback server ----------------------------------------------- */

static void server(int lfd)
{
	struct timeval tv = { .tv_sec = 2 };

	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		char c;

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (read(fd, &c, 1) == 1) {
			c = 'a';
			if (write(fd, &c, 1) != 1)
				c = 0;
		}
		close(fd);
	}
}

/* ---- output ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(uint64_t *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i] / 1000.0;
}

static void report(void)
{
	const char *mode = opt.mode == M_NAIVE ? "naive" : "capfence";
	double secs = (double)(now_ns() - S.t0) / 1e9;
	double roll = S.rolled ? (double)(S.roll_t - S.t0) / 1e9 : -1;
	double roll_end = S.roll_end_t ? (double)(S.roll_end_t - S.t0) / 1e9 : -1;
	double p50 = pct_us(S.lat, S.nlat, 0.50), p99 = pct_us(S.lat, S.nlat, 0.99);
	double x50 = pct_us(S.lat_x, S.nlat_x, 0.50), x99 = pct_us(S.lat_x, S.nlat_x, 0.99);
	uint64_t rej = 0;
	size_t i;
	int r;

	for (r = 0; r < __CAPFENCE_R_MAX; r++)
		rej += S.reject[r];
	if (!opt.json) {
		printf("rollsim: mode %s, %d sandboxes (%d parents), epochs %" PRIu64 " -> %" PRIu64 ", %.1f s\n",
		       mode, opt.n, S.np, S.e_old, S.e_new, secs);
		printf("  delegations %" PRIu64 ", rejected at delegation %" PRIu64 " (",
		       S.delegations, rej);
		for (r = 0; r < __CAPFENCE_R_MAX; r++)
			if (S.reject[r])
				printf(" %s=%" PRIu64, capfence_reason_name(r), S.reject[r]);
		printf(" ), reminted %" PRIu64 ", respawned %" PRIu64 "\n",
		       S.reminted, S.respawned);
		printf("  rpc ok %" PRIu64 ", SIGSYS %" PRIu64 ", lost RPCs %" PRIu64
		       ", unattributable failures %" PRIu64 ", EACCES %" PRIu64 "\n",
		       S.rpc_ok, S.sigsys, S.lost, S.unattributable, S.rpc_eacces);
		printf("  delegate p50 %.1f us, p99 %.1f us; cross-epoch p50 %.1f us, p99 %.1f us\n",
		       p50, p99, x50, x99);
		for (r = 0; r < 2; r++) {
			char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1] = "none";

			if (opt.mode != M_CAPFENCE)
				break;
			if (S.sc[r].insns)
				sodium_bin2hex(hex, sizeof(hex), S.sc[r].digest,
					       CAPFENCE_SECCOMP_DIGEST_LEN);
			printf("  epoch %" PRIu64 " syscall policy %s: seccomp denials (EACCES, op=syscall) %" PRIu64 "\n",
			       r ? S.e_new : S.e_old, hex, S.sc_denied[r]);
		}
		return;
	}
	printf("{\"mode\":\"%s\",\"sandboxes\":%d,\"parents\":%d,\"processes\":%" PRIu64
	       ",\"epoch_old\":%" PRIu64 ",\"epoch_new\":%" PRIu64
	       ",\"seconds\":%.3f,\"roll_start_s\":%.3f,\"roll_end_s\":%.3f",
	       mode, opt.n, S.np, S.processes, S.e_old, S.e_new, secs, roll, roll_end);
	printf(",\"rpcs\":%d,\"rpc_ok\":%" PRIu64 ",\"delegations\":%" PRIu64
	       ",\"cross_epoch_delegations\":%" PRIu64 ",\"rejected_at_delegation\":{",
	       S.nw, S.rpc_ok, S.delegations, S.cross_epoch);
	for (r = 0, i = 0; r < __CAPFENCE_R_MAX; r++)
		if (S.reject[r])
			printf("%s\"%s\":%" PRIu64, i++ ? "," : "",
			       capfence_reason_name(r), S.reject[r]);
	printf("},\"rejected_total\":%" PRIu64 ",\"reminted\":%" PRIu64
	       ",\"respawned\":%" PRIu64 ",\"sigsys\":%" PRIu64
	       ",\"lost_rpcs\":%" PRIu64 ",\"unattributable_failures\":%" PRIu64
	       ",\"rpc_eacces\":%" PRIu64 ",\"spawn_errors\":%" PRIu64
	       ",\"other_deaths\":%" PRIu64,
	       rej, S.reminted, S.respawned, S.sigsys, S.lost, S.unattributable,
	       S.rpc_eacces, S.spawn_err, S.other_deaths);
	printf(",\"delegate_p50_us\":%.2f,\"delegate_p99_us\":%.2f"
	       ",\"cross_epoch_p50_us\":%.2f,\"cross_epoch_p99_us\":%.2f",
	       p50, p99, x50, x99);
	if (opt.mode == M_NAIVE) {
		struct capfence_verifier_stats vs;

		capfence_verifier_get_stats(S.ver, &vs);
		printf(",\"check_memo\":{\"hits\":%" PRIu64 ",\"misses\":%" PRIu64 "}",
		       vs.hits, vs.misses);
	}
	if (opt.mode == M_CAPFENCE) {
		printf(",\"seccomp\":{");
		for (r = 0; r < 2; r++) {
			char hex[2 * CAPFENCE_SECCOMP_DIGEST_LEN + 1] = "";

			if (S.sc[r].insns)
				sodium_bin2hex(hex, sizeof(hex), S.sc[r].digest,
					       CAPFENCE_SECCOMP_DIGEST_LEN);
			printf("%s\"%" PRIu64 "\":{\"sha256\":\"%s\",\"insns\":%u,\"denials\":%" PRIu64 "}",
			       r ? "," : "", r ? S.e_new : S.e_old, hex, S.sc[r].insns,
			       S.sc_denied[r]);
		}
		printf("}");
		printf(",\"kernel\":{\"delegate_reject\":{");
		for (r = 0, i = 0; r < __CAPFENCE_R_MAX; r++)
			if (S.st1.delegate_reject[r] - S.st0.delegate_reject[r])
				printf("%s\"%s\":%" PRIu64, i++ ? "," : "", capfence_reason_name(r),
				       S.st1.delegate_reject[r] - S.st0.delegate_reject[r]);
		printf("},\"exercise_deny\":{");
		for (r = 0, i = 0; r < __CAPFENCE_R_MAX; r++)
			if (S.st1.exercise_deny[r] - S.st0.exercise_deny[r])
				printf("%s\"%s\":%" PRIu64, i++ ? "," : "", capfence_reason_name(r),
				       S.st1.exercise_deny[r] - S.st0.exercise_deny[r]);
		printf("}}");
	}
	printf(",\"timeline\":[");
	for (i = 0; i < S.ntl; i++) {
		struct tick *t = &S.tl[i];

		if (i && (double)i > secs + 1)
			break;
		printf("%s{\"t\":%zu,\"spawned\":%" PRIu64 ",\"delegations\":%" PRIu64
		       ",\"rejected\":%" PRIu64 ",\"reminted\":%" PRIu64
		       ",\"respawned\":%" PRIu64 ",\"sigsys\":%" PRIu64
		       ",\"lost\":%" PRIu64 ",\"rpc_ok\":%" PRIu64
		       ",\"rpc_eacces\":%" PRIu64 ",\"unattributable\":%" PRIu64
		       ",\"share_new\":%.3f}",
		       i ? "," : "", i, t->spawned, t->delegations, t->rejected,
		       t->reminted, t->respawned, t->sigsys, t->lost, t->rpc_ok,
		       t->rpc_eacces, t->unattributable, t->share_new);
	}
	printf("]}\n");
}

/* ---- main ------------------------------------------------------------- */

static void usage(int st)
{
	fprintf(st ? stderr : stdout,
		"usage: rollsim [--mode naive|capfence] [--sandboxes N] [--parents P] [--inflight K]\n"
		"               [--retries R] [--backoff-ms MS] [--roll-at F] [--roll-len F]\n"
		"               [--epoch ID] [--seed S] [--sandbox PATH] [--seccomp PROFILE|none]\n"
		"               [--json] [--verbose]\n");
	exit(st);
}

static const char *find_sandbox(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;

	if (n > 0) {
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (slash) {
			strcpy(slash + 1, "rollsim-sandbox");
			if (!access(path, X_OK))
				return path;
		}
	}
	return "/usr/bin/rollsim-sandbox";
}

/*
 * capfence: install an epoch with the syscall policy of --seccomp (a
 * container-style default-deny profile unless "none") and keep its program
 * for the spawns.
 */
static void install_epoch(uint64_t id, const struct capfence_epoch *e,
			  const char **rules, struct capfence_seccomp_info *sc)
{
	struct capfence_seccomp *s = NULL;
	char err[CAPFENCE_ERR_MAX];

	memset(sc, 0, sizeof(*sc));
	if (!strcmp(opt.seccomp, "none")) {
		if (cft_epoch_install(&S.nl, id, rules, 1, err, sizeof(err)))
			die("install epoch %" PRIu64 ": %s", id, err);
		return;
	}
	if (capfence_seccomp_compile_file(opt.seccomp, e, &s, err, sizeof(err)) ||
	    capfence_client_epoch_install_seccomp(S.nl.c, e, s, err, sizeof(err)) ||
	    capfence_client_epoch_seccomp(S.nl.c, id, sc, err, sizeof(err)))
		die("install epoch %" PRIu64 " with %s: %s", id, opt.seccomp, err);
	capfence_seccomp_free(s);
}

static void setup_epochs(void)
{
	const char *old_rules[] = { "net:connect=token:10.0.0.0/8,127.0.0.0/8" };
	const char *new_rules[] = { "net:connect=token:127.0.0.0/8" };
	char err[CAPFENCE_ERR_MAX];

	if (!opt.epoch) {
		opt.epoch = 41;
		if (opt.mode == M_CAPFENCE && S.st0.max_epoch >= 41)
			opt.epoch = S.st0.max_epoch + 1;
	}
	S.e_old = opt.epoch;
	S.e_new = opt.epoch + 1;
	if (capfence_epoch_parse_rules(&S.ep_old, S.e_old, old_rules, 1, err, sizeof(err)) ||
	    capfence_epoch_parse_rules(&S.ep_new, S.e_new, new_rules, 1, err, sizeof(err)))
		die("rules: %s", err);
	if (opt.mode == M_CAPFENCE)
		install_epoch(S.e_old, &S.ep_old, old_rules, &S.sc[0]);
}

static void roll(void)
{
	const char *new_rules[] = { "net:connect=token:127.0.0.0/8" };

	if (opt.mode == M_CAPFENCE)
		install_epoch(S.e_new, &S.ep_new, new_rules, &S.sc[1]);
	S.rolled = true;
	S.roll_t = now_ns();
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "sandboxes", 1, 0, 'n' },
		{ "parents", 1, 0, 'p' }, { "inflight", 1, 0, 'k' },
		{ "retries", 1, 0, 'r' }, { "backoff-ms", 1, 0, 'b' },
		{ "roll-at", 1, 0, 'a' }, { "roll-len", 1, 0, 'l' },
		{ "epoch", 1, 0, 'e' }, { "seed", 1, 0, 's' },
		{ "sandbox", 1, 0, 'x' }, { "json", 0, 0, 'j' },
		{ "verbose", 0, 0, 'v' }, { "help", 0, 0, 'h' },
		{ "seccomp", 1, 0, 'c' }, {}
	};
	struct rlimit rl;
	uint16_t port;
	sigset_t chld;
	int c, lfd, i, j, fds[2];

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "naive"))
				opt.mode = M_NAIVE;
			else if (!strcmp(optarg, "capfence"))
				opt.mode = M_CAPFENCE;
			else
				usage(2);
			break;
		case 'n': opt.n = atoi(optarg); break;
		case 'p': opt.parents = atoi(optarg); break;
		case 'k': opt.inflight = atoi(optarg); break;
		case 'r': opt.retries = atoi(optarg); break;
		case 'b': opt.backoff_ms = atoi(optarg); break;
		case 'a': opt.roll_at = atof(optarg); break;
		case 'l': opt.roll_len = atof(optarg); break;
		case 'e': opt.epoch = strtoull(optarg, NULL, 10); break;
		case 's': opt.seed = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'x': opt.sandbox = optarg; break;
		case 'c': opt.seccomp = optarg; break;
		case 'j': opt.json = true; break;
		case 'v': opt.verbose = true; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc || opt.n < 4 || opt.inflight < 1 || opt.retries < 0 ||
	    opt.roll_len <= 0 || opt.roll_at < 0 || opt.roll_at + opt.roll_len > 1)
		usage(2);
	if (!opt.parents)
		opt.parents = opt.n / 20 > 2 ? opt.n / 20 : 2;
	if (opt.parents >= opt.n / 2)
		usage(2);
	if (!opt.sandbox)
		opt.sandbox = find_sandbox();
	if (sodium_init() < 0)
		die("sodium_init failed");
	signal(SIGPIPE, SIG_IGN);

	/* one descriptor per live sandbox */
	rl.rlim_cur = rl.rlim_max = (rlim_t)opt.n * 3 + 1024;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(NOFILE, %lu): %s", (unsigned long)rl.rlim_cur, strerror(errno));

	S.np = opt.parents;
	S.nw = opt.n - opt.parents;
	S.w = calloc((size_t)S.nw, sizeof(*S.w));
	S.p = calloc((size_t)S.np, sizeof(*S.p));
	for (S.nprocs_cap = 1024; S.nprocs_cap < (size_t)opt.n * 8; S.nprocs_cap <<= 1)
		;
	S.procs = calloc(S.nprocs_cap, sizeof(*S.procs));
	if (!S.w || !S.p || !S.procs)
		die("out of memory");
	if (capfence_key_generate(1, &S.key))
		die("key generate failed");

	if (opt.mode == M_CAPFENCE) {
		struct capfence_key *k;
		uint8_t raw[CAPFENCE_KEY_LEN];
		uint32_t id;
		int err = -EEXIST;
		char why[256];

		/* module in, hooks attached, whatever ran before */
		if (cft_establish(why, sizeof(why)))
			die("starting state: %s", why);
		if (cft_open(&S.nl))
			die("capfence.ko is not loaded (netlink family missing)");
		S.have_nl = true;
		if (cft_nl_status(&S.nl, &S.st0))
			die("status failed");
		if (!S.st0.attached)
			die("capfence hooks are not attached");
		/* a key id of our own: 4100 and up */
		capfence_key_bytes(S.key, raw);
		for (id = 4100; err == -EEXIST && id < 4200; id++) {
			if (capfence_key_from_bytes(id, raw, &k))
				die("key");
			err = cft_key_install(&S.nl, k);
			if (err) {
				capfence_key_free(k);
			} else {
				capfence_key_free(S.key);
				S.key = k;
			}
		}
		sodium_memzero(raw, sizeof(raw));
		if (err)
			die("key install: %s", strerror(-err));
	}
	{
		const struct capfence_key *keys[] = { S.key };

		if (capfence_verifier_new(keys, 1, 0, &S.ver))
			die("verifier");
	}
	setup_epochs();

	lfd = cft_listen(&port);
	if (lfd < 0)
		die("listen: %s", strerror(-lfd));
	S.srv_port = port;
	S.srv_pid = fork();
	if (S.srv_pid < 0)
		die("fork: %s", strerror(errno));
	if (!S.srv_pid) {
		server(lfd);
		_exit(0);
	}
	close(lfd);

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		die("pipe: %s", strerror(errno));
	S.res_r = fds[0];
	S.res_w = fds[1];
	fcntl(S.res_r, F_SETPIPE_SZ, 1 << 20);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	S.sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (S.sigfd < 0)
		die("signalfd: %s", strerror(errno));

	S.t0 = now_ns();
	for (j = 0; j < S.np; j++)
		spawn_parent(j, S.e_old, false);
	for (;;) {
		int ready = 0;

		for (j = 0; j < S.np; j++) {
			struct proc *pr = proc_slot(S.p[j].pid, false);

			if (!pr->alive)
				die("parent %d died at start (spawn errors %" PRIu64 ")",
				    j, S.spawn_err);
			ready += pr->ready;
		}
		if (ready == S.np)
			break;
		pump(100);
	}
	for (i = 0; i < S.nw; i++)
		S.w[i].parent = i % S.np;

	while (S.finished < S.nw) {
		uint64_t now = now_ns();
		int wait_ms = 50;

		if (!S.rolled && (double)S.started / S.nw >= opt.roll_at)
			roll();
		/* replace parents as the roll reaches them */
		for (j = 0; j < S.np; j++) {
			struct parent *p = &S.p[j];

			if (!p->replaced && S.rolled &&
			    share_new() >= (j + 0.5) / S.np) {
				p->replaced = true;
				spawn_parent(j, S.e_new, true);
			}
		}
		if (S.rolled && !S.roll_end_t && share_new() >= 1)
			S.roll_end_t = now;
		tick()->share_new = share_new();
		for (i = 0; S.nbackoff && i < S.nw; i++) {
			struct work *w = &S.w[i];

			if (w->st != W_BACKOFF)
				continue;
			if (w->retry_at <= now) {
				/* a slot that rolled to the new epoch stays there */
				S.nbackoff--;
				spawn_child(i, w->epoch >= S.e_new ? S.e_new :
					       pick_epoch(S.started));
			}
			else if ((int)((w->retry_at - now) / 1000000) < wait_ms)
				wait_ms = (int)((w->retry_at - now) / 1000000) + 1;
		}
		while (S.active < opt.inflight && S.started < S.nw) {
			i = S.started++;
			S.active++;
			spawn_child(i, pick_epoch(i));
		}
		pump(wait_ms);
	}
	if (S.rolled && !S.roll_end_t)
		S.roll_end_t = now_ns();

	if (opt.mode == M_CAPFENCE && cft_nl_status(&S.nl, &S.st1))
		die("status failed");
	report();
	fflush(stdout);

	/* let every sandbox go: EOF on its stdin */
	for (i = 0; i < (int)S.nprocs_cap; i++)
		if (S.procs[i].pid && S.procs[i].in_fd >= 0 && S.procs[i].alive) {
			close(S.procs[i].in_fd);
			S.procs[i].in_fd = -1;
		}
	{
		uint64_t deadline = now_ns() + 60ull * 1000000000ull;

		while (S.alive > 0 && now_ns() < deadline)
			pump(100);
	}
	kill(S.srv_pid, SIGKILL);
	waitpid(S.srv_pid, NULL, 0);
	if (opt.mode == M_CAPFENCE) {
		cft_key_remove(&S.nl, capfence_key_id(S.key));
		cft_nl_close(&S.nl);
	}
	capfence_verifier_free(S.ver);
	capfence_key_free(S.key);
	return 0;
}
