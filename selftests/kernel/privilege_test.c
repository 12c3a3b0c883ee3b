// SPDX-License-Identifier: GPL-2.0
/*
 * The privilege matrix: every mutating operation, each sent well formed
 * (so that only the caller's privilege decides), by
 *   root unbound             -> succeeds
 *   root bound to an epoch   -> EPERM ("a task bound to an epoch ...")
 *   an unprivileged user     -> EPERM ("CAP_MAC_ADMIN in the initial ...")
 *   root in a user namespace -> EPERM (same message)
 * and two mixed cases: a socket opened by root used after dropping
 * privileges, and a socket opened unprivileged that root then write(2)s
 * to (the confused deputy: netlink_capable() checks the opener only for
 * sends without a destination address; a sendto(2) naming the kernel is
 * judged on the sender alone, by netlink's design). Refusals change
 * nothing. Also the non-mutating edges: TASK_GET of another task needs
 * privilege, TASK_GET of oneself does not, subscribing to the events
 * group needs privilege, and epochs are readable by the admin (all), a
 * bound task (its own) and nobody else.
 *
 * Lifecycle points not in lifecycle_test: rmmod is refused while the hooks
 * are attached even with nothing bound; detach is refused while a task
 * only has a pending exec epoch; held capabilities and bound credentials
 * are all released when their tasks exit (nothing leaked), after which
 * detach succeeds and a re-attach restores service; with a second set of
 * capfence's programs attached beside the module's (every credential
 * hook runs twice) a bound task still forks and execs, and nothing leaks.
 * Leaves the module loaded and attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* lifecycle_pending_rmmod_and_leaks: about 30 s on a busy machine */
#define CFT_TEST_SECONDS 120
#include "harness.h"
#include "capfence.skel.h"
#include "foreign.skel.h"
#include "forger.skel.h"
#include "skipper.skel.h"
#include "records.h"
#include "lsm_hooks.h"

enum who { ROOT, BOUND, UNPRIV, USERNS, DROPPED, REGAINED, NWHO };
static const char *const who_name[] = {
	"root unbound", "root bound", "unprivileged", "root in a user namespace",
	"root socket, privileges dropped", "unprivileged socket, root writer" };

#define NOPS 9
static const char *const op_name[NOPS] = {
	"key install", "key remove", "epoch install", "epoch activate",
	"exec set", "delegate", "revoke", "hooks attach", "hooks detach" };

/* What the operations act on; the same for every identity. */
struct ctx {
	uint32_t key_id;		/* installed by root's "key install" */
	uint64_t epoch;			/* installed, bound agent's epoch */
	uint64_t new_epoch;		/* installed by root's "epoch install" */
	pid_t agent;			/* bound to epoch */
	uint64_t cap_id;
	uint8_t token[CAPFENCE_TOKEN_MAX_LEN];
	int token_len;
};

static struct nlmsghdr *build(struct cft_nl *nl, int op, const struct ctx *c)
{
	static const uint8_t raw[CAPFENCE_KEY_LEN] = { 0x11, 0x22 };
	struct nlmsghdr *nlh;
	struct nlattr *arr, *nest;
	int i;

	switch (op) {
	case 0:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_KEY_INSTALL, 0);
		mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, c->key_id);
		mnl_attr_put(nlh, CAPFENCE_A_KEY, sizeof(raw), raw);
		return nlh;
	case 1:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_KEY_REMOVE, 0);
		mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, c->key_id);
		return nlh;
	case 2:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_INSTALL, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->new_epoch);
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_RULES);
		nest = mnl_attr_nest_start(nlh, 1);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_CLASS, CAPFENCE_CLASS_FS_READ);
		mnl_attr_put_u8(nlh, CAPFENCE_RULE_A_KIND, CAPFENCE_RULE_OPEN);
		mnl_attr_nest_end(nlh, nest);
		mnl_attr_nest_end(nlh, arr);
		return nlh;
	case 3:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_ACTIVATE, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->new_epoch);
		return nlh;
	case 4:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_EXEC_SET, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->epoch);
		return nlh;
	case 5:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_DELEGATE, 0);
		mnl_attr_put(nlh, CAPFENCE_A_TOKEN, (size_t)c->token_len, c->token);
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)c->agent);
		return nlh;
	case 6:
		nlh = cft_nl_req(nl, CAPFENCE_CMD_REVOKE, 0);
		mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, c->cap_id);
		return nlh;
	case 7:
		/* well formed: one link fd per hook (not links: never read) */
		nlh = cft_nl_req(nl, CAPFENCE_CMD_HOOKS_ATTACH, 0);
		arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
		for (i = 0; i < 10; i++)
			mnl_attr_put_u32(nlh, (uint16_t)(i + 1), 0);
		mnl_attr_nest_end(nlh, arr);
		return nlh;
	default:
		return cft_nl_req(nl, CAPFENCE_CMD_HOOKS_DETACH, 0);
	}
}

/*
 * Send with write(2), no destination address: the way a confused deputy
 * would (netlink checks the socket opener too only then; a sendto(2) with
 * an explicit address, as libmnl does, is judged on the sender alone).
 * Returns 0 or -errno of the ack; the extack message goes to nl->ext.
 */
static int talk_write(struct cft_nl *nl, struct nlmsghdr *nlh)
{
	int fd = nl->fd;
	char buf[8192];

	nl->ext[0] = '\0';
	if (write(fd, nlh, nlh->nlmsg_len) != (ssize_t)nlh->nlmsg_len)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0)
			return -errno;
		for (h = (void *)buf; mnl_nlmsg_ok(h, (int)n);
		     h = mnl_nlmsg_next(h, (int *)&n)) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
			const struct nlattr *a;

			if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq != nlh->nlmsg_seq)
				continue;
			if (h->nlmsg_flags & NLM_F_ACK_TLVS)
				mnl_attr_for_each(a, h, sizeof(*e))
					if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG)
						snprintf(nl->ext, sizeof(nl->ext), "%s",
							 mnl_attr_get_str(a));
			return e->error;
		}
	}
}

/*
 * Run refused operation @op on @nl; print one line ("op errno extack") to
 * @out.
 */
static void run_refused(struct cft_nl *nl, const struct ctx *c, FILE *out,
			bool use_write, int op)
{
	struct nlmsghdr *nlh = build(nl, op, c);
	int err;

	err = use_write ? talk_write(nl, nlh) : cft_nl_talk(nl, nlh, NULL, NULL);
	fprintf(out, "%d %d %s\n", op, -err, nl->ext);
	fflush(out);
}

/* Check the line a refused identity printed for @want_op. */
static void check_refused(struct __test_metadata *_metadata, enum who w,
			  int want_op, FILE *in)
{
	const char *want = w == BOUND ?
		"a task bound to an epoch cannot use control operations" :
		"CAP_MAC_ADMIN in the initial user namespace is required";
	char line[512], ext[400];
	int op, err, n = 0;

	while (fgets(line, sizeof(line), in)) {
		ext[0] = '\0';
		if (sscanf(line, "%d %d %399[^\n]", &op, &err, ext) < 2)
			continue;
		EXPECT_EQ(want_op, op);
		if (err != EPERM || !strstr(ext, want))
			TH_LOG("%s: %s gave errno %d \"%s\"", who_name[w],
			       op_name[want_op], err, ext);
		EXPECT_EQ(EPERM, err);
		EXPECT_NE(NULL, strstr(ext, want));
		n++;
	}
	EXPECT_EQ(1, n);
}

struct snapshot {
	struct capfence_status st;
	bool key_present, epoch_present;
	int agent_caps;
};

static int caps_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		const struct nlattr *m;

		if (mnl_attr_get_type(a) != CAPFENCE_A_CAPS)
			continue;
		mnl_attr_for_each_nested(m, a)
			(*(int *)data)++;
	}
	return MNL_CB_OK;
}

static void snap(struct cft_nl *nl, const struct ctx *c, struct snapshot *s)
{
	static const uint8_t raw[CAPFENCE_KEY_LEN] = { 0x11, 0x22 };
	struct nlmsghdr *nlh;
	struct cft_reply r;
	struct capfence_token t;
	struct capfence_key *k;

	memset(s, 0, sizeof(*s));
	cft_nl_status(nl, &s->st);
	/* key presence without changing it: a dry-run delegation of a token
	 * made with it is forged iff the key is not installed */
	if (!capfence_key_from_bytes(c->key_id, raw, &k) &&
	    !cft_mint(k, "net:connect", c->epoch, "127.0.0.0/8", 0x5eed, &t)) {
		cft_delegate(nl, &t, c->agent, 0, true, &r);
		s->key_present = r.reason != CAPFENCE_R_FORGED;
	}
	capfence_key_free(k);
	nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_GET, 0);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, c->new_epoch);
	s->epoch_present = cft_nl_talk(nl, nlh, NULL, NULL) == 0;
	nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)c->agent);
	cft_nl_talk(nl, nlh, caps_cb, &s->agent_caps);
}

/* Run refused operation @op as @w in a child; check its report. */
static void refused_as(struct __test_metadata *_metadata, enum who w, int op,
		       const struct ctx *c)
{
	int p[2], st;
	pid_t pid;
	FILE *in;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct cft_nl nl;
		FILE *out;

		close(p[0]);
		out = fdopen(p[1], "w");
		switch (w) {
		case UNPRIV:
			if (setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534) || cft_nl_open(&nl))
				_exit(90);
			break;
		case USERNS:
			if (unshare(CLONE_NEWUSER) || cft_nl_open(&nl))
				_exit(91);
			break;
		case DROPPED:	/* opened by root, sent by nobody */
			if (cft_nl_open(&nl) || setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				_exit(92);
			break;
		case REGAINED:	/* opened by nobody, written by root */
			if (setresuid(65534, 65534, 0) || cft_nl_open(&nl) ||
			    setresuid(0, 0, 0))
				_exit(93);
			break;
		case BOUND: {
			struct cft_reply r;
			char fd[16], buf[512];
			char *argv[] = { "privilege_test", "--bound-ops", fd, buf,
					 NULL };

			if (cft_open(&nl) || cft_exec_set(&nl, c->epoch, NULL, 0, &r))
				_exit(94);
			cft_nl_close(&nl);
			snprintf(fd, sizeof(fd), "%d", p[1]);
			snprintf(buf, sizeof(buf), "%u %llu %llu %d %llu %d %d",
				 c->key_id, (unsigned long long)c->epoch,
				 (unsigned long long)c->new_epoch, c->agent,
				 (unsigned long long)c->cap_id, c->token_len, op);
			execv("/proc/self/exe", argv);
			_exit(95);
		}
		default:
			_exit(96);
		}
		run_refused(&nl, c, out, w == REGAINED, op);
		_exit(0);
	}
	close(p[1]);
	in = fdopen(p[0], "r");
	check_refused(_metadata, w, op, in);
	fclose(in);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/* The bound side of refused_as(BOUND): exec'd after EXEC_SET. */
static int bound_ops_main(char **argv)
{
	struct ctx c = {};
	unsigned long long e, ne, cap;
	struct cft_nl nl;
	FILE *out = fdopen(atoi(argv[2]), "w");
	struct capfence_key *k;
	struct capfence_token t;
	int op;

	if (!out || sscanf(argv[3], "%u %llu %llu %d %llu %d %d", &c.key_id, &e,
			   &ne, &c.agent, &cap, &c.token_len, &op) != 7 ||
	    op < 0 || op >= NOPS)
		return 1;
	c.epoch = e;
	c.new_epoch = ne;
	c.cap_id = cap;
	/* the same token as root's: key 7 of the tests */
	if (cft_open(&nl))
		return 2;
	{
		uint8_t raw[CAPFENCE_KEY_LEN];

		memset(raw, 0x5a, sizeof(raw));
		if (capfence_key_from_bytes(7, raw, &k) ||
		    cft_mint(k, "net:connect", c.epoch, "127.0.0.0/8", c.cap_id, &t))
			return 3;
		c.token_len = capfence_token_encode_bin(&t, c.token, sizeof(c.token));
		capfence_key_free(k);
	}
	run_refused(&nl, &c, out, false, op);
	fclose(out);
	cft_nl_close(&nl);
	return 0;
}

/*
 * Reading epochs. Rules name paths and networks, so EPOCH_GET and its dump
 * show an unbound admin every epoch, a bound task its own epoch only and
 * anyone else nothing.
 */
/* what a reply or dump showed: how many epochs, and whether these two */
struct epochs_read {
	uint64_t a, b;
	int n;
	bool saw_a, saw_b;
};

static void epoch_ids(const struct nlmsghdr *nlh, struct epochs_read *r)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) != CAPFENCE_A_EPOCH_ID)
			continue;
		r->n++;
		r->saw_a |= mnl_attr_get_u64(a) == r->a;
		r->saw_b |= mnl_attr_get_u64(a) == r->b;
	}
}

/*
 * EPOCH_GET of @id, or a dump for @id 0, sent with sendto(2) naming the
 * kernel or, with @use_write, write(2). Returns 0 or -errno; what was
 * read is counted in @r.
 */
static int epoch_read(struct cft_nl *nl, uint64_t id, bool use_write,
		      struct epochs_read *r)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	/* a dump part is up to 32 KiB, or one epoch at its largest */
	static char buf[128 * 1024];
	struct nlmsghdr *nlh;
	ssize_t n;

	r->n = 0;
	r->saw_a = r->saw_b = false;
	nlh = cft_nl_req(nl, CAPFENCE_CMD_EPOCH_GET, id ? 0 : NLM_F_DUMP);
	if (id)
		mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, id);
	nlh->nlmsg_seq = 4242;
	n = use_write ? write(nl->fd, nlh, nlh->nlmsg_len) :
	    sendto(nl->fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel));
	if (n != (ssize_t)nlh->nlmsg_len)
		return -errno;
	for (;;) {
		int len = (int)recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (void *)buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != 4242)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((const struct nlmsgerr *)mnl_nlmsg_get_payload(h))->error;
			if (h->nlmsg_type == nl->family)
				epoch_ids(h, r);
		}
	}
}

/* What a STATUS_GET reply held: the attributes a caller may see. */
enum {
	ST_FENCE = 1, ST_MAX_EPOCH = 2, ST_ACTIVE_EPOCH = 4, ST_GENERATION = 8,
	ST_FLEET_REV = 16, ST_FLEET = 32, ST_STATS = 64, ST_SANDBOX = 128,
	ST_SANDBOX_ONE = 256, ST_VERSION = 512, ST_EPOCH = 1024,
};
#define ST_HOST (ST_FENCE | ST_MAX_EPOCH | ST_ACTIVE_EPOCH | ST_GENERATION | \
		 ST_FLEET_REV | ST_FLEET | ST_STATS | ST_SANDBOX | ST_VERSION)
#define ST_OWN (ST_VERSION | ST_EPOCH | ST_SANDBOX | ST_SANDBOX_ONE)

struct status_read {
	int seen;		/* ST_* */
	uint64_t epoch;		/* CAPFENCE_A_EPOCH_ID */
	uint64_t sb_epoch;	/* its sandbox's epoch */
	bool ext_ok;		/* a refusal said why */
};

static void status_attrs(const struct nlmsghdr *nlh, struct status_read *r)
{
	static const int bit[CAPFENCE_A_MAX + 1] = {
		[CAPFENCE_A_FENCE] = ST_FENCE,
		[CAPFENCE_A_MAX_EPOCH_ID] = ST_MAX_EPOCH,
		[CAPFENCE_A_ACTIVE_EPOCH_ID] = ST_ACTIVE_EPOCH,
		[CAPFENCE_A_GENERATION] = ST_GENERATION,
		[CAPFENCE_A_FLEET_REV] = ST_FLEET_REV,
		[CAPFENCE_A_FLEET] = ST_FLEET,
		[CAPFENCE_A_STATS] = ST_STATS,
		[CAPFENCE_A_SANDBOX] = ST_SANDBOX,
		[CAPFENCE_A_VERSION] = ST_VERSION,
		[CAPFENCE_A_EPOCH_ID] = ST_EPOCH,
	};
	const struct nlattr *a, *m;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);

		if (t <= CAPFENCE_A_MAX)
			r->seen |= bit[t];
		if (t == CAPFENCE_A_EPOCH_ID)
			r->epoch = mnl_attr_get_u64(a);
		if (t != CAPFENCE_A_SANDBOX)
			continue;
		mnl_attr_for_each_nested(m, a) {
			if (mnl_attr_get_type(m) == CAPFENCE_SANDBOX_A_ID)
				r->seen |= ST_SANDBOX_ONE;
			if (mnl_attr_get_type(m) == CAPFENCE_SANDBOX_A_EPOCH_ID)
				r->sb_epoch = mnl_attr_get_u64(m);
		}
	}
}

/* STATUS_GET, sent as epoch_read() sends. Returns 0 or -errno. */
static int status_read(struct cft_nl *nl, bool use_write, struct status_read *r)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	static char buf[16384];
	struct nlmsghdr *nlh;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	nlh = cft_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0);
	nlh->nlmsg_seq = 4343;
	n = use_write ? write(nl->fd, nlh, nlh->nlmsg_len) :
	    sendto(nl->fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel));
	if (n != (ssize_t)nlh->nlmsg_len)
		return -errno;
	for (;;) {
		int len = (int)recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (void *)buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
			size_t hl = sizeof(*e);
			const struct nlattr *a;

			if (h->nlmsg_seq != 4343)
				continue;
			if (h->nlmsg_type == nl->family)
				status_attrs(h, r);
			if (h->nlmsg_type != NLMSG_ERROR)
				continue;
			/* the request is echoed unless NLM_F_CAPPED */
			if (!(h->nlmsg_flags & NLM_F_CAPPED))
				hl += e->msg.nlmsg_len - sizeof(e->msg);
			if (h->nlmsg_flags & NLM_F_ACK_TLVS)
				mnl_attr_for_each(a, h, hl)
					if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
					    strstr(mnl_attr_get_str(a),
						   "CAP_MAC_ADMIN in the initial user namespace is needed to read the status of the host"))
						r->ext_ok = true;
			return e->error;
		}
	}
}

/*
 * What @nl may read of epochs @mine and @other and of the status, one line
 * to @out: "GET_MINE GET_OTHER DUMP N SAW_MINE SAW_OTHER STATUS SEEN EPOCH
 * SB_EPOCH EXT_OK" (errnos, 0 for success; then what the dump showed, then
 * what STATUS_GET did).
 */
static void epochs_probe(struct cft_nl *nl, uint64_t mine, uint64_t other,
			 bool use_write, FILE *out)
{
	struct epochs_read r = { .a = mine, .b = other };
	struct status_read sr;
	int a, b, d, s;

	a = epoch_read(nl, mine, use_write, &r);
	b = epoch_read(nl, other, use_write, &r);
	d = epoch_read(nl, 0, use_write, &r);
	s = status_read(nl, use_write, &sr);
	fprintf(out, "%d %d %d %d %d %d %d %d %llu %llu %d\n", -a, -b, -d, r.n,
		r.saw_a, r.saw_b, -s, sr.seen, (unsigned long long)sr.epoch,
		(unsigned long long)sr.sb_epoch, sr.ext_ok);
	fflush(out);
}

/* The bound side of epochs_as(BOUND): exec'd after EXEC_SET. */
static int bound_epochs_main(char **argv)
{
	unsigned long long mine, other;
	FILE *out = fdopen(atoi(argv[2]), "w");
	struct cft_nl nl;

	if (!out || sscanf(argv[3], "%llu %llu", &mine, &other) != 2 ||
	    cft_open(&nl))
		return 1;
	epochs_probe(&nl, mine, other, false, out);
	fclose(out);
	cft_nl_close(&nl);
	return 0;
}

struct epochs_seen {
	int get_mine, get_other, dump;
	bool saw_mine, saw_other;
	int n;
	int status, status_seen;	/* STATUS_GET's errno, ST_* */
	unsigned long long status_epoch, status_sb_epoch;
	bool status_ext;
};

/* epochs_probe() as @w, in a child: what it could read */
static int epochs_as(enum who w, uint64_t mine, uint64_t other,
		     struct epochs_seen *seen)
{
	char line[256], *p;
	int pd[2], st, sm, so, se;
	struct cft_nl nl;
	pid_t pid;
	FILE *in;

	memset(seen, 0, sizeof(*seen));
	if (pipe(pd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		FILE *out;

		close(pd[0]);
		out = fdopen(pd[1], "w");
		switch (w) {
		case ROOT:
			if (cft_nl_open(&nl))
				_exit(89);
			break;
		case UNPRIV:
			if (setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534) || cft_nl_open(&nl))
				_exit(90);
			break;
		case USERNS:
			if (unshare(CLONE_NEWUSER) || cft_nl_open(&nl))
				_exit(91);
			break;
		case DROPPED:
			if (cft_nl_open(&nl) || setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				_exit(92);
			break;
		case REGAINED:
			if (setresuid(65534, 65534, 0) || cft_nl_open(&nl) ||
			    setresuid(0, 0, 0))
				_exit(93);
			break;
		case BOUND: {
			struct cft_reply r;
			char fd[16], buf[64];
			char *argv[] = { "privilege_test", "--bound-epochs", fd,
					 buf, NULL };

			if (cft_open(&nl) || cft_exec_set(&nl, mine, NULL, 0, &r))
				_exit(94);
			cft_nl_close(&nl);
			snprintf(fd, sizeof(fd), "%d", pd[1]);
			snprintf(buf, sizeof(buf), "%llu %llu",
				 (unsigned long long)mine,
				 (unsigned long long)other);
			execv("/proc/self/exe", argv);
			_exit(95);
		}
		default:
			_exit(96);
		}
		epochs_probe(&nl, mine, other, w == REGAINED, out);
		_exit(0);
	}
	close(pd[1]);
	in = fdopen(pd[0], "r");
	p = in && fgets(line, sizeof(line), in) ? line : NULL;
	if (in)
		fclose(in);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -ECHILD;
	if (!p || sscanf(p, "%d %d %d %d %d %d %d %d %llu %llu %d",
			 &seen->get_mine, &seen->get_other, &seen->dump,
			 &seen->n, &sm, &so, &seen->status, &seen->status_seen,
			 &seen->status_epoch, &seen->status_sb_epoch, &se) != 11)
		return -EIO;
	seen->saw_mine = sm;
	seen->saw_other = so;
	seen->status_ext = se;
	return 0;
}

/* What every test acts on: a key, an epoch, a bound agent, a token. */
static void ctx_setup(struct __test_metadata *_metadata, struct cft_nl *nl,
		      struct capfence_key **key, struct ctx *c,
		      struct cft_agent *agent)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	struct capfence_token t;
	int len;

	ASSERT_EQ(0, cft_open(nl));
	*key = cft_test_key(nl);
	ASSERT_NE(NULL, *key);
	c->key_id = 4000 + (uint32_t)(getpid() % 1000);
	c->epoch = cft_next_epoch(nl);
	ASSERT_EQ(0, cft_epoch_install(nl, c->epoch, rules, 3, NULL, 0));
	c->new_epoch = c->epoch + 1;
	ASSERT_EQ(0, cft_agent_spawn(agent, c->epoch, NULL, 0, NULL));
	c->agent = agent->pid;
	c->cap_id = 0x9e1f0000ull + (uint64_t)getpid();
	ASSERT_EQ(0, cft_mint(*key, "net:connect", c->epoch, "127.0.0.0/8",
			      c->cap_id, &t));
	len = capfence_token_encode_bin(&t, c->token, sizeof(c->token));
	ASSERT_LT(0, len);
	c->token_len = len;
}

static void ctx_teardown(struct __test_metadata *_metadata,
			 struct cft_nl *nl, struct capfence_key *key,
			 struct cft_agent *agent)
{
	EXPECT_TRUE(cft_agent_stop_clean(agent));
	capfence_key_free(key);
	cft_nl_close(nl);
}

/*
 * The refusals: one result per identity and operation (the variant names
 * both), each checked to leave everything as it was.
 */
FIXTURE(refused) {
	struct cft_nl nl;
	struct capfence_key *key;
	struct ctx c;
	struct cft_agent agent;
};

FIXTURE_VARIANT(refused) {
	enum who who;
	int op;
};

#define REFUSED(w, W)							\
	FIXTURE_VARIANT_ADD(refused, w##_key_install) { W, 0 };	\
	FIXTURE_VARIANT_ADD(refused, w##_key_remove) { W, 1 };	\
	FIXTURE_VARIANT_ADD(refused, w##_epoch_install) { W, 2 };	\
	FIXTURE_VARIANT_ADD(refused, w##_epoch_activate) { W, 3 };	\
	FIXTURE_VARIANT_ADD(refused, w##_exec_set) { W, 4 };		\
	FIXTURE_VARIANT_ADD(refused, w##_delegate) { W, 5 };		\
	FIXTURE_VARIANT_ADD(refused, w##_revoke) { W, 6 };		\
	FIXTURE_VARIANT_ADD(refused, w##_hooks_attach) { W, 7 };	\
	FIXTURE_VARIANT_ADD(refused, w##_hooks_detach) { W, 8 }

REFUSED(root_bound, BOUND);
REFUSED(unprivileged, UNPRIV);
REFUSED(root_in_userns, USERNS);
REFUSED(root_socket_dropped, DROPPED);
REFUSED(unprivileged_socket_root_writer, REGAINED);

FIXTURE_SETUP(refused)
{
	ctx_setup(_metadata, &self->nl, &self->key, &self->c, &self->agent);
}

FIXTURE_TEARDOWN(refused)
{
	ctx_teardown(_metadata, &self->nl, self->key, &self->agent);
}

TEST_F(refused, changes_nothing)
{
	struct snapshot a, b;

	snap(&self->nl, &self->c, &a);
	refused_as(_metadata, variant->who, variant->op, &self->c);
	snap(&self->nl, &self->c, &b);
	EXPECT_FALSE(b.key_present);
	EXPECT_FALSE(b.epoch_present);
	EXPECT_EQ(0, b.agent_caps);
	EXPECT_TRUE(b.st.attached);
	EXPECT_EQ(a.st.fence, b.st.fence);
	EXPECT_EQ(a.st.max_epoch, b.st.max_epoch);
	EXPECT_EQ(a.st.active_epoch, b.st.active_epoch);
	EXPECT_EQ(a.st.held, b.st.held);
}

FIXTURE(priv) {
	struct cft_nl nl;
	struct capfence_key *key;
	struct ctx c;
	struct cft_agent agent;
};

FIXTURE_SETUP(priv)
{
	ctx_setup(_metadata, &self->nl, &self->key, &self->c, &self->agent);
}

FIXTURE_TEARDOWN(priv)
{
	ctx_teardown(_metadata, &self->nl, self->key, &self->agent);
}

/* Root, unbound: the same well-formed messages succeed. */
TEST_F(priv, matrix_root_unbound_succeeds)
{
	/* delegate and revoke before the new epoch's activation fences them */
	static const int order[] = { 0, 5, 6, 2, 3, 4 };
	struct snapshot s;
	size_t i;
	int err;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int op = order[i];

		if (op == 4) {	/* exec set, in a child: it marks the caller */
			pid_t pid = fork();
			int st;

			ASSERT_LE(0, pid);
			if (!pid) {
				struct cft_nl nl;

				_exit(cft_nl_open(&nl) ? 99 :
				      -cft_nl_talk(&nl, build(&nl, op, &self->c),
						  NULL, NULL));
			}
			ASSERT_EQ(pid, waitpid(pid, &st, 0));
			EXPECT_EQ(0, WEXITSTATUS(st));
			continue;
		}
		err = cft_nl_talk(&self->nl, build(&self->nl, op, &self->c), NULL, NULL);
		if (err)
			TH_LOG("%s: %d %s", op_name[op], err, self->nl.ext);
		EXPECT_EQ(0, err);
	}
	snap(&self->nl, &self->c, &s);
	EXPECT_TRUE(s.key_present);
	EXPECT_TRUE(s.epoch_present);
	EXPECT_EQ(1, s.agent_caps);
	EXPECT_EQ(0, cft_nl_talk(&self->nl, build(&self->nl, 1, &self->c), NULL, NULL));
	snap(&self->nl, &self->c, &s);
	EXPECT_FALSE(s.key_present);
	/* attach while attached is harmless; detach while bound refused */
	EXPECT_EQ(-EALREADY, cft_nl_talk(&self->nl, build(&self->nl, 7, &self->c),
					 NULL, NULL));
	/* built in: the hooks can never be detached (docs/errors.md) */
	EXPECT_EQ(cft_builtin() ? -EOPNOTSUPP : -EBUSY,
		  cft_nl_talk(&self->nl, build(&self->nl, 8, &self->c), NULL, NULL));
	ASSERT_EQ(0, cft_nl_status(&self->nl, &s.st));
	EXPECT_TRUE(s.st.attached);
}

/* Non-mutating operations that still need privilege, or do not. */
TEST_F(priv, inspection_and_events)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct nlmsghdr *nlh;
		struct cft_nl nl;
		int bad = 0;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534) ||
		    cft_nl_open(&nl))
			_exit(90);
		/* another task: refused */
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_TASK_GET, 0);
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)self->c.agent);
		bad |= cft_nl_talk(&nl, nlh, NULL, NULL) != -EPERM;
		/* itself: fine */
		nlh = cft_nl_req(&nl, CAPFENCE_CMD_TASK_GET, 0);
		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
		bad |= (cft_nl_talk(&nl, nlh, NULL, NULL) != 0) << 1;
		/* the host's status: not for an unprivileged user */
		bad |= (cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_STATUS_GET, 0),
				   NULL, NULL) != -EPERM) << 2;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/*
 * EPOCH_GET and the epoch dump, by every identity of the matrix: the
 * unbound admin reads every epoch, a bound task its own only (another is
 * EPERM, the dump has its own alone), everyone else nothing (EPERM, for
 * the dump too).
 */
TEST_F(priv, epoch_get_scope)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	struct epochs_seen seen;
	uint64_t other;
	int w;

	other = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, other, rules, 3, NULL, 0));
	for (w = ROOT; w < NWHO; w++) {
		ASSERT_EQ(0, epochs_as(w, self->c.epoch, other, &seen))
			TH_LOG("%s", who_name[w]);
		if (w == ROOT) {
			EXPECT_EQ(0, seen.get_mine);
			EXPECT_EQ(0, seen.get_other);
			EXPECT_EQ(0, seen.dump);
			EXPECT_TRUE(seen.saw_mine && seen.saw_other);
		} else if (w == BOUND) {
			EXPECT_EQ(0, seen.get_mine);
			EXPECT_EQ(EPERM, seen.get_other);
			EXPECT_EQ(0, seen.dump);
			EXPECT_EQ(1, seen.n);
			EXPECT_TRUE(seen.saw_mine);
		} else {
			EXPECT_EQ(EPERM, seen.get_mine) TH_LOG("%s", who_name[w]);
			EXPECT_EQ(EPERM, seen.get_other) TH_LOG("%s", who_name[w]);
			EXPECT_EQ(EPERM, seen.dump) TH_LOG("%s", who_name[w]);
			EXPECT_EQ(0, seen.n) TH_LOG("%s", who_name[w]);
		}
	}
}

/*
 * STATUS_GET by every identity of the matrix, scoped as EPOCH_GET: the
 * unbound admin reads the host's status (fence, epochs, generation, fleet,
 * counters, the sandboxes' totals), a bound task only the module's version
 * and hooks, its own epoch and its own sandbox (none of the host's values,
 * which move with other tenants' work), everyone else nothing (EPERM, with
 * the reason).
 */
TEST_F(priv, status_get_scope)
{
	struct epochs_seen seen;
	uint64_t other = cft_next_epoch(&self->nl);
	int w;

	for (w = ROOT; w < NWHO; w++) {
		ASSERT_EQ(0, epochs_as(w, self->c.epoch, other, &seen))
			TH_LOG("%s", who_name[w]);
		if (w == ROOT) {
			EXPECT_EQ(0, seen.status);
			EXPECT_EQ(ST_HOST, seen.status_seen);
		} else if (w == BOUND) {
			EXPECT_EQ(0, seen.status);
			EXPECT_EQ(ST_OWN, seen.status_seen);
			EXPECT_EQ(self->c.epoch, seen.status_epoch);
			EXPECT_EQ(self->c.epoch, seen.status_sb_epoch);
		} else {
			EXPECT_EQ(EPERM, seen.status) TH_LOG("%s", who_name[w]);
			EXPECT_EQ(0, seen.status_seen) TH_LOG("%s", who_name[w]);
			EXPECT_TRUE(seen.status_ext) TH_LOG("%s", who_name[w]);
		}
	}
}

/*
 * Every decision, pid, cap_id and epoch goes out on the events group: an
 * unprivileged user must not be able to subscribe. (The group's flags
 * must be GENL_MCAST_CAP_*: GENL_UNS_ADMIN_PERM is an operation flag that
 * genl_bind() does not look at.)
 */
TEST(events_group_needs_privilege)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct capfence_events *ev = NULL;
		int err;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(90);
		/* the library's subscription: resolves the group, then joins */
		err = capfence_events_open(&ev, NULL, 0);
		if (!err)
			_exit(1);
		_exit(err == -EPERM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	if (WEXITSTATUS(st) == 1)
		TH_LOG("an unprivileged user subscribed to the capfence events group");
	EXPECT_EQ(0, WEXITSTATUS(st));
}

static int rmmod(void)
{
	return syscall(__NR_delete_module, "capfence", O_NONBLOCK) ? -errno : 0;
}

static int wait_unbound(struct cft_nl *nl, struct capfence_status *s)
{
	int i, n = cft_ms(5000) / 50;

	/* credentials are freed after an RCU grace period */
	cft_waiting("every task to be unbound and every grant freed");
	for (i = 0; i < n; i++) {
		if (cft_nl_status(nl, s))
			return -EIO;
		if (!s->bound && !s->held) {
			cft_waited();
			return 0;
		}
		usleep(50000);
	}
	return -EBUSY;
}

TEST(lifecycle_pending_rmmod_and_leaks)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	struct cft_agent a[3];
	struct capfence_status s;
	struct cft_reply r;
	struct capfence_token t[2];
	struct capfence_key *k;
	struct cft_nl nl;
	uint64_t e;
	int p[2], q[2], i, st;
	pid_t pending;
	char c;

	CFT_MODULE_ONLY("nothing to unload, no hooks to detach");

	ASSERT_EQ(0, cft_open(&nl));
	k = cft_test_key(&nl);
	ASSERT_NE(NULL, k);
	/* nothing of earlier tests may remain bound */
	ASSERT_EQ(0, wait_unbound(&nl, &s));
	ASSERT_TRUE(s.attached);

	/* hooks attached, nothing bound: rmmod is still refused */
	EXPECT_EQ(-EWOULDBLOCK, rmmod());

	/* a task that only has a pending exec epoch blocks detach */
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	pending = fork();
	ASSERT_LE(0, pending);
	if (!pending) {
		struct cft_nl cnl;

		close(p[1]);
		close(q[0]);
		if (cft_open(&cnl) || cft_exec_set(&cnl, e, NULL, 0, &r))
			_exit(1);
		if (write(q[1], "x", 1) != 1 || read(p[0], &c, 1) < 0)
			_exit(2);
		_exit(0);	/* never execs: never bound */
	}
	close(p[0]);
	close(q[1]);
	ASSERT_EQ(1, read(q[0], &c, 1));
	close(q[0]);
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_EQ(0, s.bound);
	EXPECT_EQ(-EBUSY, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				      NULL, NULL));
	EXPECT_NE(NULL, strstr(nl.ext, "pending exec epoch"));
	ASSERT_EQ(1, write(p[1], "x", 1));
	close(p[1]);
	ASSERT_EQ(pending, waitpid(pending, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));

	/* bound agents with held, delegated and revoked capabilities ... */
	ASSERT_EQ(0, cft_mint(k, "net:connect", e, "127.0.0.0/8",
			      0x1eaf0000ull + (uint64_t)getpid(), &t[0]));
	ASSERT_EQ(0, cft_mint(k, "net:connect", e, "127.0.0.1:80",
			      0x1eaf8000ull + (uint64_t)getpid(), &t[1]));
	ASSERT_EQ(0, cft_agent_spawn(&a[0], e, t, 2, &r));
	ASSERT_EQ(0, cft_agent_spawn(&a[1], e, NULL, 0, &r));
	ASSERT_EQ(0, cft_agent_spawn(&a[2], e, NULL, 0, &r));
	EXPECT_EQ(0, cft_delegate(&nl, &t[0], a[1].pid, a[0].pid, false, &r));
	EXPECT_EQ(0, cft_delegate(&nl, &t[1], a[2].pid, 0, false, &r));
	/* allowed: the agent's non-blocking connect is in progress */
	EXPECT_EQ(0, cft_agent_do(&a[1], "fork connect 127.0.0.1 9"));
	EXPECT_EQ(0, cft_revoke(&nl, t[1].cap_id, &r));
	EXPECT_EQ(0, cft_agent_do(&a[0], "exec"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_LE(3, s.bound);
	EXPECT_LE(3, s.held);
	/* ... all gone once their tasks are: nothing leaked */
	for (i = 0; i < 3; i++) {
		EXPECT_TRUE(cft_agent_stop_clean(&a[i]));
	}
	EXPECT_EQ(0, wait_unbound(&nl, &s));
	EXPECT_EQ(0, s.bound);
	EXPECT_EQ(0, s.held);

	/* now detach succeeds, binding fails closed, re-attach restores */
	EXPECT_EQ(0, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				 NULL, NULL));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_FALSE(s.attached);
	EXPECT_EQ(-ENOLINK, cft_exec_set(&nl, e, NULL, 0, &r));
	EXPECT_NE(NULL, strstr(r.ext, "capfence attach"));
	EXPECT_EQ(-ENOENT, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				       NULL, NULL));
	EXPECT_EQ(-EWOULDBLOCK, rmmod());	/* the programs hold the module */
	EXPECT_EQ(0, system("capfence attach >/dev/null"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_TRUE(s.attached);
	ASSERT_EQ(0, cft_agent_spawn(&a[0], e, NULL, 0, &r));
	EXPECT_TRUE(cft_agent_stop_clean(&a[0]));
	capfence_key_free(k);
	cft_nl_close(&nl);
}

/*
 * Two sets of capfence's programs attached at once: what a re-attach
 * leaves until the links of the set before it (dropped by a detach,
 * replaced as pins) are freed, and `capfence attach` while attached until
 * the module refuses the second set. Every credential hook then runs
 * twice for one change; the second run finds the entry the first made.
 * A pending task still execs and binds, a bound one still forks,
 * connects, opens a file under a grant, moves its keyring session to its
 * parent and execs, and every entry goes with its task.
 */
TEST(two_program_sets_attached_at_once)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=token:/tmp" };
	struct capfence_token t[2];
	struct capfence_status s;
	struct capfence_bpf *skel;
	struct capfence_key *k;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	uint64_t e, calls = 0;

	CFT_MODULE_ONLY("no BPF-LSM programs to attach twice");

	ASSERT_EQ(0, cft_open(&nl));
	k = cft_test_key(&nl);
	ASSERT_NE(NULL, k);
	ASSERT_EQ(0, wait_unbound(&nl, &s));
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_mint(k, "net:connect", e, "127.0.0.0/8",
			      0x2e7a0000ull + (uint64_t)getpid(), &t[0]));
	ASSERT_EQ(0, cft_mint(k, "fs:write", e, "/tmp",
			      0x2e7a8000ull + (uint64_t)getpid(), &t[1]));

	cft_waiting("a second set of capfence's programs to load and attach");
	skel = capfence_bpf__open();
	ASSERT_NE(NULL, skel);
	cf_lsm_skip_missing_hooks(skel->obj);
	ASSERT_EQ(0, capfence_bpf__load(skel));
	ASSERT_EQ(0, capfence_bpf__attach(skel));
	cft_waited();

	/* pending, then bound at exec, with tokens: each hook runs twice */
	ASSERT_EQ(0, cft_agent_spawn(&a, e, t, 2, &r)) TH_LOG("%s", r.ext);
	EXPECT_EQ(0, cft_agent_do(&a, "fork connect 127.0.0.1 9"));
	/* a file opened under a grant, tracked once, still rechecked */
	EXPECT_EQ(0, cft_agent_do(&a, "hold /tmp/cft-two-sets"));
	EXPECT_EQ(0, cft_agent_do(&a, "write"));
	/* keyctl session-to-parent: alloc_blank and transfer, twice */
	EXPECT_EQ(0, cft_agent_do(&a, "session-to-parent"));
	EXPECT_EQ(0, cft_agent_do(&a, "exec"));
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_LE(1, s.bound);
	EXPECT_LE(1, s.held);
	EXPECT_TRUE(cft_agent_stop_clean(&a));

	/* the second set's links lack the module's cookie: ignored, counted */
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls));
	EXPECT_LT(0, calls);
	cft_waiting("the second set of programs to detach");
	capfence_bpf__destroy(skel);
	cft_waited();
	/* nothing counted twice, nothing leaked */
	EXPECT_EQ(0, wait_unbound(&nl, &s));
	EXPECT_EQ(0, s.bound);
	EXPECT_EQ(0, s.held);
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_TRUE(s.attached);
	capfence_key_free(k);
	cft_nl_close(&nl);
}

/* Is the running kernel @maj.@min or later? */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

/*
 * A BPF-LSM program that is not capfence's calls capfence_cred_free() on
 * every socket a task makes, to drop its binding before its connect, and
 * tracing programs on the allocator call it from inside capfence's own
 * kfuncs (where capfence's run context is still current's). From 6.9 the
 * verifier refuses them (the kfunc set's filter: not one of capfence's
 * hooks, not a BPF-LSM program);
 * where it loads (6.1), the module ignores the call and counts it: the task
 * stays bound, and its connect outside its grants is still EACCES with its
 * record.
 */
TEST(foreign_program_cannot_drop_a_binding)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	uint64_t e, bound_to = 0, calls0 = 0, calls1 = 0;
	struct foreign_bpf *skel;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	bool loaded;
	int audit;

	ASSERT_EQ(0, cft_open(&nl));
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, &r)) TH_LOG("%s", r.ext);
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls0));

	skel = foreign_bpf__open();
	ASSERT_NE(NULL, skel);
	loaded = !foreign_bpf__load(skel);
	/* the verifier's kfunc filter exists from 6.9 */
	EXPECT_EQ(!kernel_at_least(6, 9), loaded);
	if (loaded)
		ASSERT_EQ(0, foreign_bpf__attach(skel));

	audit = cft_audit_open();
	ASSERT_LE(0, audit);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 9"));
	cft_check_denial(_metadata, audit, a.pid, e, "no_capability",
			 "net:connect", "127.0.0.1:9", 0);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 9"));
	ASSERT_EQ(0, cft_task_epoch(&nl, a.pid, &bound_to));
	EXPECT_EQ(e, bound_to);
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls1));
	if (loaded) {
		EXPECT_LE(calls0 + 2, calls1);
	} else {
		EXPECT_EQ(calls0, calls1);
	}
	foreign_bpf__destroy(skel);
	cft_audit_close(audit);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	cft_nl_close(&nl);
}

/* The address of the module's cookie, as a root loader finds it: 0 if none. */
static unsigned long cookie_symbol(void)
{
	char line[256], name[128], mod[64];
	unsigned long addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	char type;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %127s %63s", &addr, &type, name, mod) == 4 &&
		    !strcmp(name, "cf_cookie") && !strcmp(mod, "[capfence]"))
			found = addr;
	fclose(f);
	return found;
}

/* Open the forger's object with only the programs named in @keep to load. */
static struct forger_bpf *forger_open(const char *const *keep)
{
	struct forger_bpf *skel = forger_bpf__open();
	struct bpf_program *p;
	int i;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(p, skel->obj) {
		bool on = false;

		for (i = 0; keep[i]; i++)
			on |= !strcmp(bpf_program__name(p), keep[i]);
		bpf_program__set_autoload(p, on);
	}
	return skel;
}

/*
 * The forger's object with the programs of @keep (which names read_cookie)
 * loaded, once its read_cookie program has read capfence's cookie from
 * kernel memory at the address /proc/kallsyms gives: NULL if any step
 * failed or the cookie read is 0.
 */
static struct forger_bpf *forger_with_cookie(const char *const *keep)
{
	struct forger_bpf *skel = forger_open(keep);
	struct bpf_link *reader;
	int fd;

	if (!skel)
		return NULL;
	skel->bss->cookie_addr = cookie_symbol();
	if (!skel->bss->cookie_addr || forger_bpf__load(skel))
		goto fail;
	reader = bpf_program__attach(skel->progs.read_cookie);
	if (!reader)
		goto fail;
	/* socket_post_create runs it */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(reader);
	if (skel->bss->cookie)
		return skel;
fail:
	forger_bpf__destroy(skel);
	return NULL;
}

/*
 * The cookie is no secret from a loader that may read kernel memory: this
 * one reads it, then runs a program on one of capfence's hooks (admitted
 * by 6.12's filter: root, unbound, the right hook) on a link carrying it,
 * which calls capfence_cred_free() on a bound task's old and new
 * credentials when it changes its uid. The call does not come from capfence's programs' machine
 * code: ignored and counted, the task stays bound and refused.
 */
TEST(program_with_the_cookie_cannot_drop_a_binding)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	LIBBPF_OPTS(bpf_trace_opts, opts);
	uint64_t e, bound_to = 0, calls0 = 0, calls1 = 0;
	static const char *const keep[] = { "read_cookie", "forge_free", NULL };
	struct bpf_link *forged;
	struct forger_bpf *skel;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	int audit;

	CFT_MODULE_ONLY("no kfuncs: the built-in LSM's hooks are called directly");
	ASSERT_EQ(0, cft_open(&nl));
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, &r)) TH_LOG("%s", r.ext);
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls0));
	skel = forger_with_cookie(keep);
	/* the premise: the loader holds capfence's cookie */
	ASSERT_NE(NULL, skel);

	opts.cookie = skel->bss->cookie;
	forged = bpf_program__attach_trace_opts(skel->progs.forge_free, &opts);
	ASSERT_NE(NULL, forged) TH_LOG("attach with the cookie: %s", strerror(errno));
	skel->bss->target_tgid = a.pid;
	/* a new credential: cred_prepare runs the forged program */
	EXPECT_EQ(0, cft_agent_do(&a, "setuid"));
	skel->bss->target_tgid = 0;

	ASSERT_EQ(0, cft_task_epoch(&nl, a.pid, &bound_to));
	EXPECT_EQ(e, bound_to);
	audit = cft_audit_open();
	ASSERT_LE(0, audit);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 9"));
	cft_check_denial(_metadata, audit, a.pid, e, "no_capability",
			 "net:connect", "127.0.0.1:9", 0);
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls1));
	EXPECT_LE(calls0 + 1, calls1);
	bpf_link__destroy(forged);
	forger_bpf__destroy(skel);
	cft_audit_close(audit);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	cft_nl_close(&nl);
}

/* An fd of capfence's attached program named @name, or -1. */
static int capfence_prog_fd(const char *name)
{
	struct bpf_prog_info info;
	__u32 id = 0, len;
	int fd;

	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, name))
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * The loader of the test above tail-calls capfence's own
 * file_free_security program from a program on file_set_fowner (same
 * argument types, so the kernel's tail call check lets it), on a link
 * with the cookie: the call comes from capfence's machine code, but its
 * program was not run by its own hook. Ignored and counted: the file a
 * bound task holds under a capability stays tracked, and a read after
 * the capability's revocation is refused.
 */
TEST(tail_call_from_another_hook_cannot_drop_a_file)
{
	static const char *const keep[] = { "read_cookie", "tail_free", NULL };
	const char *rules[] = { "fs:read=token", "fs:write=open" };
	LIBBPF_OPTS(bpf_trace_opts, opts);
	uint64_t e, calls0 = 0, calls1 = 0;
	struct bpf_link *forged;
	struct capfence_key *key;
	struct capfence_token rt;
	struct forger_bpf *skel;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	int pfd, slot = 0;

	CFT_MODULE_ONLY("no kfuncs: the built-in LSM's hooks are called directly");
	ASSERT_EQ(0, cft_open(&nl));
	key = cft_test_key(&nl);
	ASSERT_NE(NULL, key);
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 2, NULL, 0));
	ASSERT_EQ(0, cft_mint(key, "fs:read", e, "/", 0, &rt));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, &rt, 1, &r)) TH_LOG("%s", r.ext);
	/* a file held under the read capability: tracked by capfence */
	ASSERT_EQ(0, cft_agent_do(&a, "hold /tmp/cft-tail rw"));
	EXPECT_EQ(0, cft_agent_do(&a, "read"));

	skel = forger_with_cookie(keep);
	ASSERT_NE(NULL, skel);
	pfd = capfence_prog_fd("cf_file_free_se");
	ASSERT_LE(0, pfd) TH_LOG("capfence's file_free_security program not found");
	/* the kernel admits it: the two hooks' argument types are one BTF type */
	ASSERT_EQ(0, bpf_map_update_elem(bpf_map__fd(skel->maps.jump), &slot, &pfd, 0))
		TH_LOG("prog_array: %s", strerror(errno));
	close(pfd);
	opts.cookie = skel->bss->cookie;
	forged = bpf_program__attach_trace_opts(skel->progs.tail_free, &opts);
	ASSERT_NE(NULL, forged);

	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls0));
	EXPECT_EQ(0, cft_agent_do(&a, "setown"));
	ASSERT_EQ(0, cft_nl_stat(&nl, CAPFENCE_STATS_A_FOREIGN_CALLS, &calls1));
	EXPECT_LE(calls0 + 1, calls1);
	bpf_link__destroy(forged);
	forger_bpf__destroy(skel);

	ASSERT_EQ(0, cft_revoke(&nl, rt.cap_id, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&a, "read"));
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	unlink("/tmp/cft-tail");
	capfence_key_free(key);
	cft_nl_close(&nl);
}

/*
 * An fexit program on capfence's own programs (what bpftool prog profile
 * attaches too): the kernel then runs each of them from a trampoline of
 * its own. They still answer as capfence's: a bound task's connect
 * outside its grants is EACCES with its record, and its next credential
 * stays bound (both came out unbound or allowed while the kfuncs judged
 * only the frame their program's hook's trampoline makes).
 */
TEST(fexit_on_capfence_programs_changes_nothing)
{
	static const char *const keep[] = { "watch_prog", NULL };
	static const char *const progs[][2] = {
		{ "cf_socket_conne", "cf_socket_connect" },
		{ "cf_cred_prepare", "cf_cred_prepare" },
	};
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=open" };
	struct forger_bpf *skel[2] = {};
	struct bpf_link *l[2] = {};
	uint64_t e, bound_to = 0;
	struct cft_agent a;
	struct cft_reply r;
	struct cft_nl nl;
	int i, pfd, audit;

	CFT_MODULE_ONLY("no BPF programs of capfence's to trace");
	ASSERT_EQ(0, cft_open(&nl));
	e = cft_next_epoch(&nl);
	ASSERT_EQ(0, cft_epoch_install(&nl, e, rules, 3, NULL, 0));
	ASSERT_EQ(0, cft_agent_spawn(&a, e, NULL, 0, &r)) TH_LOG("%s", r.ext);
	for (i = 0; i < 2; i++) {
		skel[i] = forger_open(keep);
		ASSERT_NE(NULL, skel[i]);
		pfd = capfence_prog_fd(progs[i][0]);
		ASSERT_LE(0, pfd) TH_LOG("%s not found", progs[i][1]);
		ASSERT_EQ(0, bpf_program__set_attach_target(skel[i]->progs.watch_prog,
							    pfd, progs[i][1]));
		ASSERT_EQ(0, forger_bpf__load(skel[i]));
		close(pfd);
		l[i] = bpf_program__attach(skel[i]->progs.watch_prog);
		ASSERT_NE(NULL, l[i]) TH_LOG("fexit on %s: %s", progs[i][1], strerror(errno));
	}
	audit = cft_audit_open();
	ASSERT_LE(0, audit);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 9"));
	cft_check_denial(_metadata, audit, a.pid, e, "no_capability",
			 "net:connect", "127.0.0.1:9", 0);
	EXPECT_EQ(0, cft_agent_do(&a, "setuid"));
	ASSERT_EQ(0, cft_task_epoch(&nl, a.pid, &bound_to));
	EXPECT_EQ(e, bound_to);
	EXPECT_EQ(EACCES, cft_agent_do(&a, "connect 127.0.0.1 9"));
	for (i = 0; i < 2; i++) {
		bpf_link__destroy(l[i]);
		forger_bpf__destroy(skel[i]);
	}
	cft_audit_close(audit);
	EXPECT_TRUE(cft_agent_stop_clean(&a));
	cft_nl_close(&nl);
}

/*
 * Nothing stands between capfence's programs and its kfuncs: no fentry
 * or fexit trampoline (which could read the run context), no kprobe or
 * kretprobe (which could change the return address the kfuncs judge).
 */
TEST(kfuncs_cannot_be_traced_or_probed)
{
	static const char *const fentry[] = { "trace_kfunc", NULL };
	static const char *const probes[] = { "probe_kfunc", "retprobe_kfunc", NULL };
	struct forger_bpf *skel;
	struct bpf_link *l;

	CFT_MODULE_ONLY("no kfuncs: the built-in LSM's hooks are called directly");
	skel = forger_open(fentry);
	ASSERT_NE(NULL, skel);
	/* refused at load or at attach */
	if (!forger_bpf__load(skel)) {
		l = bpf_program__attach(skel->progs.trace_kfunc);
		EXPECT_EQ(NULL, l) TH_LOG("fentry on capfence_cred_free attached");
		bpf_link__destroy(l);
	}
	forger_bpf__destroy(skel);

	skel = forger_open(probes);
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, forger_bpf__load(skel));
	l = bpf_program__attach(skel->progs.probe_kfunc);
	EXPECT_EQ(NULL, l) TH_LOG("kprobe on capfence_cred_free attached");
	bpf_link__destroy(l);
	l = bpf_program__attach(skel->progs.retprobe_kfunc);
	EXPECT_EQ(NULL, l) TH_LOG("kretprobe on capfence_cred_free attached");
	bpf_link__destroy(l);
	forger_bpf__destroy(skel);
}

/* Load only the skipper's program @name: its error. */
static int skipper_load(const char *name)
{
	struct skipper_bpf *skel = skipper_bpf__open();
	struct bpf_program *p;
	int err;

	if (!skel)
		return -ENOENT;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	skel->bss->target_tgid = getpid();
	err = skipper_bpf__load(skel);
	skipper_bpf__destroy(skel);
	return err;
}

FIXTURE(skipper) {
	int audit;
};

FIXTURE_VARIANT(skipper) {
	const char *prog;	/* the skipper's program */
	const char *what;	/* its record's type and attach type */
};

/*
 * A BPF_MODIFY_RETURN (fmod_ret) program on the kernel's
 * security_file_permission() skips every LSM's file_permission, capfence's
 * included, by returning non-zero: a fourth outside round used one (loaded
 * with CAP_BPF and CAP_PERFMON only) to sendfile() a file out of, and
 * into another, after their capabilities were revoked, on both kernels.
 */
FIXTURE_VARIANT_ADD(skipper, fmod_ret) {
	.prog = "skip_file_permission",
	.what = " prog_type=tracing attach=modify_return attach_btf_id=",
};

/*
 * A BPF_LSM_CGROUP program's shim runs ahead of capfence's program on the
 * hook and returns what bpf_set_retval() set: a fifth outside round did
 * the same with one, on both kernels, with the same two capabilities.
 */
FIXTURE_VARIANT_ADD(skipper, lsm_cgroup) {
	.prog = "cgroup_file_permission",
	.what = " prog_type=lsm attach=lsm_cgroup attach_btf_id=",
};

FIXTURE_SETUP(skipper)
{
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
}

FIXTURE_TEARDOWN(skipper)
{
	cft_audit_close(self->audit);
}

/*
 * While capfence enforces, neither kind is loaded: EACCES at
 * BPF_PROG_LOAD, with its record, on every front end.
 */
TEST_F(skipper, refused_at_load)
{
	char rec[1024];
	int err = skipper_load(variant->prog);

	if (cft_builtin()) {
		/* the test kernel has no BTF or ftrace: no such program loads */
		EXPECT_NE(0, err);
		SKIP(return, "the built-in test kernel cannot load %s at all (%d)",
		     variant->prog, err);
	}
	EXPECT_EQ(-EACCES, err);
	EXPECT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=bpf reason=bypass errno=13 ", variant->what,
				    NULL));
	EXPECT_NE(NULL, strstr(rec, "comm=\"privilege_test\""));
}

/*
 * Load the skipper's @name in a child holding CAP_BPF and CAP_PERFMON but
 * neither CAP_MAC_ADMIN nor CAP_SYS_ADMIN: its error, or 1 if the child
 * could not drop them.
 */
static int skipper_load_unprivileged(const char *name)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	static const int drop[] = { CAP_MAC_ADMIN, CAP_SYS_ADMIN };
	int status, i;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (!pid) {
		if (syscall(SYS_capget, &h, d))
			_exit(1);
		for (i = 0; i < 2; i++) {
			d[CAP_TO_INDEX(drop[i])].effective &= ~CAP_TO_MASK(drop[i]);
			d[CAP_TO_INDEX(drop[i])].permitted &= ~CAP_TO_MASK(drop[i]);
		}
		if (syscall(SYS_capset, &h, d))
			_exit(1);
		_exit(-skipper_load(name) & 0xff);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return -WEXITSTATUS(status);
}

FIXTURE(lsm_mac) {
	int audit;
};

FIXTURE_VARIANT(lsm_mac) {
	const char *prog;	/* the skipper's program */
	bool verifier_refuses_612;	/* 6.12's return range check sees it */
};

/*
 * Returns 1 from file_permission: 6.1's verifier bounds no BPF-LSM
 * program's return, and a third outside round sendfile()d a file out
 * after its capability was revoked with one; 6.12's refuses it itself.
 */
FIXTURE_VARIANT_ADD(lsm_mac, positive) {
	.prog = "mac_file_permission",
	.verifier_refuses_612 = true,
};

/*
 * Returns 0x100000000: 6.12's verifier checks only the low 32 bits (0,
 * in range), the trampoline compares all 64 (non-zero: the run ends,
 * capfence's program unrun) and the hook reads the low half (0, allowed).
 * A sixth outside round read, sendfile()d and opened a file after its
 * capability was revoked on 6.12 with one, and skipped capfence's bpf
 * hook with another to load an fmod_ret program again.
 */
FIXTURE_VARIANT_ADD(lsm_mac, high_half) {
	.prog = "hi32_file_permission",
	.verifier_refuses_612 = false,
};

FIXTURE_SETUP(lsm_mac)
{
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
}

FIXTURE_TEARDOWN(lsm_mac)
{
	cft_audit_close(self->audit);
}

/*
 * Programs on a hook's trampoline run newest first until one returns
 * non-zero: a BPF-LSM program attached after capfence's ends the run
 * before capfence's program by returning a value the verifier lets
 * through. Its loader needs only CAP_BPF and CAP_PERFMON: while capfence
 * enforces, only the control plane (unbound, CAP_MAC_ADMIN) loads a
 * BPF-LSM program, EACCES with an op=bpf record for any other task.
 */
TEST_F(lsm_mac, needs_the_control_plane)
{
	bool refused = variant->verifier_refuses_612 && kernel_at_least(6, 12);
	char rec[1024];

	/* (a skip in the setup would still run this body) */
	if (cft_builtin())
		SKIP(return, "the built-in test kernel loads no BPF-LSM program (no BTF)");
	EXPECT_EQ(-EACCES, skipper_load_unprivileged(variant->prog));
	EXPECT_EQ(0, cft_audit_wait(self->audit, rec, sizeof(rec), 5000,
				    "op=bpf reason=bypass errno=13 ",
				    " prog_type=lsm attach=lsm_mac attach_btf_id=",
				    NULL));
	EXPECT_NE(NULL, strstr(rec, "comm=\"privilege_test\""));
	/* the control plane's load goes on to the verifier */
	EXPECT_EQ(refused ? -EINVAL : 0, skipper_load(variant->prog));
}

/*
 * A program loaded while capfence does not enforce can be linked later
 * (the bpf hook judges loads): `capfence attach` names every such program
 * still loaded, a sixth outside round having linked one after the attach
 * and read a file after its capability was revoked.
 */
TEST(preloaded_program_named_at_attach)
{
	struct skipper_bpf *skel;
	struct bpf_program *p;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char out[4096], want[64];
	struct cft_nl nl;
	struct capfence_status s;
	size_t n;
	FILE *f;

	CFT_MODULE_ONLY("the built-in LSM has no attach: it enforces from boot");
	ASSERT_EQ(0, cft_nl_open(&nl));
	ASSERT_EQ(0, cft_nl_talk(&nl, cft_nl_req(&nl, CAPFENCE_CMD_HOOKS_DETACH, 0),
				 NULL, NULL));
	skel = skipper_bpf__open();
	ASSERT_NE(NULL, skel);
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p),
						      "skip_file_permission"));
	/* capfence does not enforce now: nothing refuses the load */
	EXPECT_EQ(0, skipper_bpf__load(skel));
	EXPECT_EQ(0, bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.skip_file_permission),
					    &info, &len));
	f = popen("capfence attach 2>&1", "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	EXPECT_EQ(0, pclose(f)) TH_LOG("%s", out);
	ASSERT_EQ(0, cft_nl_status(&nl, &s));
	EXPECT_TRUE(s.attached);
	snprintf(want, sizeof(want), "BPF program id=%u (tracing '", info.id);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, " on security_file_permission) was loaded before the attach"))
		TH_LOG("%s", out);
	/* capfence's own programs are not named */
	EXPECT_EQ(NULL, strstr(out, "(lsm 'cf_")) TH_LOG("%s", out);
	skipper_bpf__destroy(skel);
	cft_nl_close(&nl);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--agent"))
		return cft_agent_main();
	if (argc == 4 && !strcmp(argv[1], "--bound-ops"))
		return bound_ops_main(argv);
	if (argc == 4 && !strcmp(argv[1], "--bound-epochs"))
		return bound_epochs_main(argv);
	return cft_harness_run(argc, argv);
}
