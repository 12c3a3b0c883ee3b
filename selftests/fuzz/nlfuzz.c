// SPDX-License-Identifier: GPL-2.0
/*
 * nlfuzz: the capfence generic netlink surface under random and mutated
 * messages, run in the VM (selftests/vm/run -- nlfuzz --messages N).
 *
 *   nlfuzz [--messages N] [--seed S] [--max-epoch]
 *
 * Four identities send N random messages in all: root (unbound), an
 * unprivileged user (setresuid 65534), root in a new user namespace, and a
 * bound task (EXEC_SET then execve of this program). Messages are built per
 * command with right and wrong attribute types, lengths, nesting, missing
 * and duplicate attributes, huge counts, unknown commands and flags,
 * truncated and over-long headers, batches, then byte-mutated.
 *
 * Checks:
 *  - every well-framed request with NLM_F_ACK gets exactly one errno or a
 *    valid reply, the errno is one the family documents, and replies parse;
 *  - no mutating command ever succeeds for a refused identity, nor a
 *    TASK_GET of another task for an unprivileged one;
 *  - a burst of invalid messages (each must be rejected) leaves the state
 *    unchanged: status (counters excluded), every epoch, key presence
 *    probed by dry-run delegations, and the task state of bound agents;
 *  - malformed messages carry an extended ack;
 *  - with --max-epoch (make fuzz only: it poisons the boot), epoch id
 *    2^64-1 installs and nothing can follow it.
 * Output is kselftest-style ("ok N - ...", "# Totals: ...").
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/utsname.h>
#include <sodium.h>
#include "common.h"

enum ident { ID_ROOT, ID_UNPRIV, ID_USERNS, ID_BOUND, ID_MAX };
static const char *const ident_name[] = { "root", "unprivileged",
					  "root in a user namespace", "bound" };

/* What one identity saw; children send it back through a pipe. */
struct result {
	long sent, answered, accepted, rejected, dropped;
	long bad;		/* unexpected errno, bad reply, no reply */
	long admin_ok;		/* a mutating op accepted from a refused identity */
	long no_extack;		/* malformed (EINVAL/ERANGE/E2BIG) without extack */
	long malformed;
	long err[256];
	char why[1536];		/* the first problems, one per line */
};

static uint64_t rng_state;
static uint16_t family;
static uint32_t seq0;
static struct capfence_key *key7;
static uint64_t epoch_e, epoch_max;
static pid_t agent_pids[2];
static uint64_t known_caps[4];

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool chance(int percent)
{
	return rn(100) < (uint32_t)percent;
}

static void note(struct result *r, const char *fmt, ...)
{
	size_t len = strlen(r->why);
	va_list ap;

	if (len + 2 >= sizeof(r->why))
		return;
	va_start(ap, fmt);
	vsnprintf(r->why + len, sizeof(r->why) - len - 1, fmt, ap);
	va_end(ap);
	len = strlen(r->why);
	r->why[len] = '\n';
	r->why[len + 1] = '\0';
}

/* ---- message building ---------------------------------------------------- */

#define MSG_MAX (48 * 1024)

struct msg {
	uint8_t buf[MSG_MAX];
	size_t len;
	uint8_t cmd;
	bool admin;		/* a CF_NL_ADMIN command of the family */
	bool ping;		/* odd framing: reply accounting via a ping */
	bool malformed;		/* structurally bad (for the extack check) */
	const char *what;
};

static void clamp_epoch_ids(struct msg *m);

static bool put(struct msg *m, const void *p, size_t n)
{
	if (m->len + n > MSG_MAX)
		return false;
	memcpy(m->buf + m->len, p, n);
	m->len += n;
	return true;
}

static void pad(struct msg *m)
{
	static const uint8_t z[4];

	put(m, z, NLA_ALIGN(m->len) - m->len);
}

/* An attribute with payload; returns its offset (for nests). */
static size_t attr(struct msg *m, uint16_t type, const void *p, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n),
			    .nla_type = type };
	size_t off = m->len;

	if (NLA_HDRLEN + n > 0xffff || m->len + NLA_HDRLEN + n + 4 > MSG_MAX)
		return off;
	put(m, &a, sizeof(a));
	if (n)
		put(m, p, n);
	pad(m);
	return off;
}

static void attr_u8(struct msg *m, uint16_t t, uint8_t v) { attr(m, t, &v, 1); }
static void attr_u32(struct msg *m, uint16_t t, uint32_t v) { attr(m, t, &v, 4); }
static void attr_u64(struct msg *m, uint16_t t, uint64_t v) { attr(m, t, &v, 8); }

static size_t nest_start(struct msg *m, uint16_t type)
{
	return attr(m, type | (chance(80) ? NLA_F_NESTED : 0), NULL, 0);
}

static void nest_end(struct msg *m, size_t off)
{
	struct nlattr *a = (struct nlattr *)(m->buf + off);
	size_t n = m->len - off;

	if (off + NLA_HDRLEN <= m->len)
		a->nla_len = n > 0xffff ? 0xffff : (uint16_t)n;
}

static void rand_bytes(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void hdr(struct msg *m, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr h = { .nlmsg_type = family,
			      .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags };
	struct genlmsghdr g = { .cmd = cmd, .version = CAPFENCE_GENL_VERSION };

	m->len = 0;
	m->cmd = cmd;
	m->admin = cmd >= CAPFENCE_CMD_HOOKS_ATTACH && cmd <= CAPFENCE_CMD_REVOKE &&
		   cmd != CAPFENCE_CMD_EPOCH_GET;
	m->ping = false;
	m->malformed = false;
	m->what = "";
	put(m, &h, sizeof(h));
	if (chance(3))
		g.version = (uint8_t)rnd();
	if (chance(3))
		g.reserved = (uint16_t)rnd();
	put(m, &g, sizeof(g));
}

static void finish(struct msg *m)
{
	((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len;
}

/* An id in [0, epoch_max] near the top (no wrap below 0). */
static uint64_t not_above_max(void)
{
	uint64_t d = rn(3);

	return d > epoch_max ? 0 : epoch_max - d;
}

static uint64_t pick_epoch(bool root_safe)
{
	switch (rn(8)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return epoch_e;
	case 3: return epoch_max;
	case 4: return epoch_max + 1 + rn(3);
	case 5: return root_safe ? not_above_max() : ~0ull - rn(2);
	case 6: return root_safe ? epoch_e + rn(4) : rnd();
	default: return epoch_e > 2 ? epoch_e - 1 : 2;
	}
}

static uint32_t pick_pid(void)
{
	switch (rn(8)) {
	case 0: case 1: return (uint32_t)agent_pids[rn(2)];
	case 2: return (uint32_t)getpid();
	case 3: return 1;
	case 4: return 0;
	case 5: return 0x7fffffff;
	case 6: return 0xffffffff - rn(2);
	default: return rn(40000);
	}
}

static uint64_t pick_cap(void)
{
	switch (rn(5)) {
	case 0: return 0;
	case 1: return ~0ull;
	case 2: case 3: return known_caps[rn(4)];
	default: return rnd();
	}
}

static void net_range(struct capfence_net_range *r, bool valid)
{
	memset(r, 0, sizeof(*r));
	if (!valid) {
		rand_bytes((uint8_t *)r, sizeof(*r));
		return;
	}
	r->family = chance(70) ? 4 : 6;
	r->prefix_len = (uint8_t)(r->family == 4 ? 8 : 128);
	if (r->family == 4) {
		r->addr[0] = chance(50) ? 127 : 10;
	} else {
		r->addr[15] = 1;
	}
	r->port_min = chance(50) ? 0 : (uint16_t)(1 + rn(1000));
	r->port_max = r->port_min ? (uint16_t)(r->port_min + rn(100)) : 65535;
	if (chance(10))
		r->reserved = 1;
	if (chance(10))
		r->prefix_len = (uint8_t)rn(200);
	if (chance(10))
		r->port_min = (uint16_t)rnd();
}

static const char *const paths[] = { "/srv", "/", "/tmp/x", "", "rel/path",
	"/a/../b", "/a//b", "/a/", "/a,b", "/with\nnl", "/x/./y" };

/*
 * The type of the @i-th member of a nested array: its index from 1, which
 * the kernel ignores; sometimes anything else.
 */
static uint16_t member(int i)
{
	return chance(5) ? (uint16_t)(rnd() & 0x3fff) : (uint16_t)(i + 1);
}

/* A rule nest of type @type: a member of CAPFENCE_A_RULES, or not. */
static void rule_nest(struct msg *m, uint16_t type, bool sane)
{
	size_t off = nest_start(m, type);
	int i, n = chance(10) ? (int)rn(14) : (int)rn(4);
	uint8_t cls = sane ? (uint8_t)(1 + rn(CAPFENCE_CLASS_MAX)) : (uint8_t)rn(8);
	uint8_t kind = sane ? (uint8_t)rn(3) : (uint8_t)rn(5);

	if (!chance(5))
		attr_u8(m, CAPFENCE_RULE_A_CLASS, cls);
	if (!chance(5))
		attr_u8(m, CAPFENCE_RULE_A_KIND, kind);
	for (i = 0; i < n; i++) {
		bool net = sane ? cls <= 2 : chance(50);

		if (net) {
			struct capfence_net_range r;

			net_range(&r, !chance(10));
			attr(m, CAPFENCE_RULE_A_NET, &r,
			     chance(95) ? sizeof(r) : rn(40));
		} else if (chance(5)) {
			char p[300];

			memset(p, 'a', sizeof(p));
			p[0] = '/';
			p[sizeof(p) - 1] = 0;
			attr(m, CAPFENCE_RULE_A_PATH, p, 256 + rn(44));
		} else {
			const char *p = paths[rn(sizeof(paths) / sizeof(paths[0]))];

			attr(m, CAPFENCE_RULE_A_PATH, p,
			     strlen(p) + (chance(95) ? 1 : 0));
		}
	}
	if (chance(5))
		attr_u64(m, CAPFENCE_RULE_A_FENCED_AT, rnd());
	if (chance(5)) {
		uint8_t junk[16];

		rand_bytes(junk, sizeof(junk));
		attr(m, (uint16_t)rn(12), junk, rn(16));
	}
	if (chance(3))		/* nesting where none is expected */
		nest_end(m, nest_start(m, CAPFENCE_RULE_A_CLASS));
	nest_end(m, off);
}

/*
 * A token attribute of type @type: valid under key 7 and epoch E most of
 * the time, then damaged.
 */
static void token_attr(struct msg *m, uint16_t type)
{
	static const char *const classes[] = { "net:connect", "net:bind",
					       "fs:read", "fs:write" };
	static const char *const cons[] = { "127.0.0.0/8", "127.0.0.1:80",
					    "10.0.0.0/8", "/srv", NULL };
	uint8_t buf[CAPFENCE_TOKEN_MAX_LEN + 64];
	struct capfence_token t;
	int c = (int)rn(4), len;
	const char *k = cons[rn(5)];

	if ((c >= 2) != (k && k[0] == '/'))
		k = c >= 2 ? "/srv" : "127.0.0.0/8";
	if (chance(10) || cft_mint(key7, classes[c], chance(70) ? epoch_e :
				   pick_epoch(true) ?: 1, k,
				   known_caps[rn(4)] & (chance(70) ? ~0ull : 0),
				   &t) ||
	    (len = capfence_token_encode_bin(&t, buf, sizeof(buf))) < 0) {
		len = (int)rn(sizeof(buf));
		rand_bytes(buf, (size_t)len);
	}
	if (chance(30)) {
		switch (rn(5)) {
		case 0: len = (int)rn((uint32_t)len + 1); break;
		case 1: buf[rn((uint32_t)len ?: 1)] ^= (uint8_t)(1 + rn(255)); break;
		case 2: buf[4] = (uint8_t)rnd(); break;	/* key id */
		case 3: len = len + (int)rn(40); break;
		default: buf[24] = (uint8_t)rnd(); break;	/* count */
		}
	}
	attr(m, type, buf, (size_t)len);
}

/* CAPFENCE_A_RULES with @n rule members */
static void rules_array(struct msg *m, int n, bool sane)
{
	size_t off = nest_start(m, CAPFENCE_A_RULES);
	int i;

	for (i = 0; i < n; i++)
		rule_nest(m, member(i), sane && chance(70));
	nest_end(m, off);
}

/* CAPFENCE_A_TOKENS with @n token members */
static void tokens_array(struct msg *m, int n)
{
	size_t off = nest_start(m, CAPFENCE_A_TOKENS);
	int i;

	for (i = 0; i < n; i++)
		token_attr(m, member(i));
	nest_end(m, off);
}

/* CAPFENCE_A_LINK_FDS with @n fd members, sometimes not u32 */
static void link_fds_array(struct msg *m, int n)
{
	size_t off = nest_start(m, CAPFENCE_A_LINK_FDS);
	int i;

	for (i = 0; i < n; i++) {
		if (chance(3))
			attr_u64(m, member(i), rnd());
		else
			attr_u32(m, member(i), chance(50) ? rn(8) : rnd());
	}
	nest_end(m, off);
}

/* A random attribute of any top-level type, shaped or not. */
static void any_attr(struct msg *m, bool root_safe)
{
	uint16_t t = chance(80) ? (uint16_t)rn(CAPFENCE_A_MAX + 1) :
		     (uint16_t)rn(0x4000);
	uint8_t junk[600];

	if (chance(60)) {
		switch (t) {
		case CAPFENCE_A_LINK_FD: attr_u32(m, t, rn(24)); return;
		case CAPFENCE_A_KEY_ID: attr_u32(m, t, chance(50) ? rn(9) : 100 + rn(8)); return;
		case CAPFENCE_A_KEY:
			rand_bytes(junk, 32);
			attr(m, t, junk, 32);
			return;
		case CAPFENCE_A_EPOCH_ID: attr_u64(m, t, pick_epoch(root_safe)); return;
		case CAPFENCE_A_RULE: rule_nest(m, t, chance(50)); return;
		case CAPFENCE_A_TOKEN: token_attr(m, t); return;
		case CAPFENCE_A_LINK_FDS: link_fds_array(m, (int)rn(4)); return;
		case CAPFENCE_A_RULES: rules_array(m, (int)rn(4), chance(50)); return;
		case CAPFENCE_A_TOKENS: tokens_array(m, (int)rn(3)); return;
		case CAPFENCE_A_PID:
		case CAPFENCE_A_FROM_PID: attr_u32(m, t, pick_pid()); return;
		case CAPFENCE_A_DRY_RUN: attr(m, t, NULL, 0); return;
		case CAPFENCE_A_CAP_ID: attr_u64(m, t, pick_cap()); return;
		default: break;
		}
	}
	if (chance(5))
		t |= chance(50) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
	if (chance(5)) {
		size_t off = nest_start(m, t);

		any_attr(m, root_safe);
		nest_end(m, off);
		return;
	}
	{
		static const size_t lens[] = { 0, 1, 2, 3, 4, 7, 8, 9, 16,
					       31, 32, 33, 255, 256 };
		size_t n = chance(80) ? lens[rn(14)] : rn(sizeof(junk));

		rand_bytes(junk, n);
		attr(m, t, junk, n);
	}
}

/* The attributes a command needs, each sometimes left out. */
static void cmd_attrs(struct msg *m, uint8_t cmd, bool root_safe)
{
	int n;

	switch (cmd) {
	case CAPFENCE_CMD_HOOKS_ATTACH:
		n = chance(10) ? 17 + (int)rn(40) : (int)rn(12);
		if (chance(90))
			link_fds_array(m, n);
		break;
	case CAPFENCE_CMD_KEY_INSTALL:
		if (chance(90))
			attr_u32(m, CAPFENCE_A_KEY_ID, chance(30) ? 7 : 100 + rn(8));
		if (chance(90)) {
			uint8_t k[40];

			rand_bytes(k, sizeof(k));
			attr(m, CAPFENCE_A_KEY, k, chance(90) ? 32 : rn(40));
		}
		break;
	case CAPFENCE_CMD_KEY_REMOVE:
		if (chance(90))
			attr_u32(m, CAPFENCE_A_KEY_ID, rn(3) ? 100 + rn(8) : rn(9));
		break;
	case CAPFENCE_CMD_EPOCH_INSTALL:
		if (chance(90))
			attr_u64(m, CAPFENCE_A_EPOCH_ID, pick_epoch(root_safe));
		n = chance(5) ? 5 + (int)rn(60) : (int)rn(5);
		if (chance(90))
			rules_array(m, n, true);
		break;
	case CAPFENCE_CMD_EPOCH_ACTIVATE:
	case CAPFENCE_CMD_EPOCH_GET:
		if (chance(90))
			attr_u64(m, CAPFENCE_A_EPOCH_ID, pick_epoch(root_safe));
		break;
	case CAPFENCE_CMD_EXEC_SET:
		if (chance(90))
			attr_u64(m, CAPFENCE_A_EPOCH_ID, chance(60) ? epoch_e :
				 pick_epoch(root_safe));
		n = chance(5) ? 15 + (int)rn(6) : (int)rn(3);
		if (chance(80))
			tokens_array(m, n);
		break;
	case CAPFENCE_CMD_DELEGATE:
		if (chance(90))
			token_attr(m, CAPFENCE_A_TOKEN);
		if (chance(90))
			attr_u32(m, CAPFENCE_A_PID, pick_pid());
		if (chance(30))
			attr_u32(m, CAPFENCE_A_FROM_PID, pick_pid());
		if (chance(50))
			attr(m, CAPFENCE_A_DRY_RUN, NULL, 0);
		break;
	case CAPFENCE_CMD_REVOKE:
		if (chance(90))
			attr_u64(m, CAPFENCE_A_CAP_ID, pick_cap());
		break;
	case CAPFENCE_CMD_TASK_GET:
		if (chance(90))
			attr_u32(m, CAPFENCE_A_PID, pick_pid());
		break;
	default:
		break;
	}
}

/* A random message: a command, its attributes, noise, then mutations. */
static void gen_random(struct msg *m, bool root_safe)
{
	uint8_t cmd;
	uint16_t flags = 0;
	int i, extra;

	if (chance(90))
		cmd = (uint8_t)(1 + rn(CAPFENCE_CMD_MAX));
	else
		cmd = chance(50) ? (uint8_t)rn(CAPFENCE_CMD_MAX + 4) : (uint8_t)rnd();
	if (chance(5))
		flags |= NLM_F_DUMP;
	if (chance(3))
		flags |= (uint16_t)(rnd() & 0x0f00);
	hdr(m, cmd, flags);
	/*
	 * no detach from the root fuzzer: later phases need the hooks; and no
	 * fleet bounds, which would deny the later phases' exercises
	 */
	if (root_safe && (cmd == CAPFENCE_CMD_HOOKS_DETACH ||
			  cmd == CAPFENCE_CMD_FLEET_SET))
		m->buf[sizeof(struct nlmsghdr)] = CAPFENCE_CMD_STATUS_GET;
	cmd_attrs(m, cmd, root_safe);
	extra = chance(40) ? (int)rn(4) : 0;
	for (i = 0; i < extra; i++)
		any_attr(m, root_safe);
	if (chance(10))		/* duplicate the first attribute */
		if (m->len >= NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN) {
			struct nlattr *a = (void *)(m->buf + NLMSG_HDRLEN + GENL_HDRLEN);
			size_t n = NLA_ALIGN(a->nla_len);

			if (n >= NLA_HDRLEN && NLMSG_HDRLEN + GENL_HDRLEN + n <= m->len)
				put(m, a, n);
		}
	finish(m);
	/* byte mutations of the genl header and attributes */
	if (chance(25) && m->len > NLMSG_HDRLEN) {
		int k, flips = 1 + (int)rn(4);

		for (k = 0; k < flips; k++) {
			size_t at = NLMSG_HDRLEN + rn((uint32_t)(m->len - NLMSG_HDRLEN));

			/* a flipped command byte could turn into a detach */
			if (root_safe && at == NLMSG_HDRLEN)
				continue;
			m->buf[at] ^= (uint8_t)(1 + rn(255));
		}
		m->malformed = true;
	}
	if (chance(5) && m->len > NLMSG_HDRLEN + 1) {	/* cut the tail */
		m->len -= 1 + rn((uint32_t)(m->len - NLMSG_HDRLEN - 1));
		finish(m);
		m->malformed = true;
	}
	if (chance(3)) {	/* trailing garbage inside the message */
		uint8_t j[8];

		rand_bytes(j, sizeof(j));
		put(m, j, 1 + rn(8));
		finish(m);
		m->malformed = true;
	}
	if (root_safe)
		clamp_epoch_ids(m);
	/* framing: what netlink itself must survive */
	switch (chance(8) ? rn(7) : 99) {
	case 0:	/* shorter than a netlink header */
		m->len = rn(NLMSG_HDRLEN);
		m->ping = true;
		break;
	case 1:	/* nlmsg_len too small */
		((struct nlmsghdr *)m->buf)->nlmsg_len = rn(NLMSG_HDRLEN);
		m->ping = true;
		break;
	case 2:	/* nlmsg_len beyond the datagram */
		((struct nlmsghdr *)m->buf)->nlmsg_len = (uint32_t)m->len + 1 + rn(1000);
		m->ping = true;
		break;
	case 3:	/* no genetlink header */
		m->len = NLMSG_HDRLEN;
		finish(m);
		m->malformed = true;
		break;
	case 4:	/* another message type: control, genl ctrl, unknown family */
		((struct nlmsghdr *)m->buf)->nlmsg_type =
			chance(50) ? (uint16_t)rn(NLMSG_MIN_TYPE + 1) : (uint16_t)rnd();
		if (((struct nlmsghdr *)m->buf)->nlmsg_type == family)
			((struct nlmsghdr *)m->buf)->nlmsg_type = 0;
		m->ping = true;
		m->admin = false;
		break;
	case 5:	/* flags: no ACK, or no REQUEST */
		((struct nlmsghdr *)m->buf)->nlmsg_flags &=
			(uint16_t)~(chance(50) ? NLM_F_ACK : NLM_F_REQUEST);
		m->ping = true;
		break;
	case 6:	/* nlmsg_len shorter than the datagram: the rest is a 2nd message */
		if (m->len > NLMSG_HDRLEN + 8)
			((struct nlmsghdr *)m->buf)->nlmsg_len =
				NLMSG_HDRLEN + 4 * rn((uint32_t)(m->len - NLMSG_HDRLEN) / 4);
		m->ping = true;
		break;
	default:
		break;
	}
}

/* ---- sending and checking replies ---------------------------------------- */

static int fuzz_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int one = 1, sz = 4 << 20;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	return fd;
}

static bool errno_documented(int e)
{
	switch (e) {
	case EINVAL: case EPERM: case ENOENT: case ERANGE: case E2BIG:
	case EOPNOTSUPP: case EBADMSG: case ESTALE: case EACCES:
	case EKEYREVOKED: case EKEYEXPIRED: case ENOKEY: case ESRCH:
	case EEXIST: case EALREADY: case EBUSY: case ENOLINK: case EMSGSIZE:
	case EBADF: case ENOSPC:
		return true;
	default:
		return false;
	}
}

/* Does an error carry an extended ack (message, offset or missing attr)? */
static bool has_extack(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	const struct nlattr *a;
	size_t off = sizeof(*e);

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return false;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	for (a = (const void *)((const char *)e + off);
	     (const char *)a + NLA_HDRLEN <= (const char *)h + h->nlmsg_len &&
	     a->nla_len >= NLA_HDRLEN;
	     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) >= NLMSGERR_ATTR_MSG)
			return true;
	return false;
}

/*
 * 6.1 gives a dump's start callback no extack: the epoch dump's refusal
 * of an attribute it does not take is a bare EINVAL there.
 */
static bool start_extack;

static bool dump_start_quiet(const struct msg *m)
{
	const struct nlmsghdr *h = (const void *)m->buf;

	return !start_extack && m->cmd == CAPFENCE_CMD_EPOCH_GET &&
	       (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
}

/* A data message of the family: a known command and well-formed attrs. */
static bool reply_valid(const struct nlmsghdr *h)
{
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *a;
	size_t rem;

	if (h->nlmsg_type != family)
		return h->nlmsg_len >= NLMSG_HDRLEN;	/* not ours to judge */
	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return false;
	switch (g->cmd) {
	case CAPFENCE_CMD_STATUS_GET: case CAPFENCE_CMD_EPOCH_GET:
	case CAPFENCE_CMD_EXEC_SET: case CAPFENCE_CMD_DELEGATE:
	case CAPFENCE_CMD_REVOKE: case CAPFENCE_CMD_TASK_GET:
		break;
	default:
		return false;
	}
	rem = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	a = (const void *)((const char *)g + GENL_HDRLEN);
	while (rem >= NLA_HDRLEN) {
		if (a->nla_len < NLA_HDRLEN || a->nla_len > rem)
			return false;
		if ((a->nla_type & NLA_TYPE_MASK) > CAPFENCE_A_MAX)
			return false;
		if ((a->nla_type & NLA_TYPE_MASK) == CAPFENCE_A_REASON &&
		    (a->nla_len != NLA_HDRLEN + 4 ||
		     *(const uint32_t *)((const char *)a + NLA_HDRLEN) > CAPFENCE_R_MAX))
			return false;
		if ((size_t)NLA_ALIGN(a->nla_len) >= rem)
			return true;
		rem -= NLA_ALIGN(a->nla_len);
		a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return rem == 0;
}

static uint8_t rbuf[1 << 20];

/*
 * Read until the terminator of @seq (an error/ack, or DONE of a dump).
 * Returns the errno (0 = accepted), or -1 on no/odd reply. Every message
 * read is checked; problems are noted in @r.
 */
static int read_until(int fd, uint32_t seq, struct result *r, bool *ext,
		      bool *data_seen, int timeout_ms)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		struct nlmsghdr *h;

		if (poll(&p, 1, cft_ms(timeout_ms)) <= 0)
			return -1;
		n = recv(fd, rbuf, sizeof(rbuf), MSG_TRUNC);
		if (n < 0) {
			if (errno == ENOBUFS) {
				note(r, "ENOBUFS on the reply socket");
				r->bad++;
			}
			return -1;
		}
		if ((size_t)n > sizeof(rbuf)) {
			note(r, "reply of %zd bytes truncated", n);
			r->bad++;
			return -1;
		}
		for (h = (void *)rbuf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e))) {
					note(r, "short NLMSG_ERROR");
					r->bad++;
					continue;
				}
				if (e->error > 0) {
					note(r, "positive error %d", e->error);
					r->bad++;
				}
				if (h->nlmsg_seq != seq)
					continue;
				*ext = has_extack(h);
				return -e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				if (h->nlmsg_seq == seq) {
					int err = 0;

					if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
						memcpy(&err, NLMSG_DATA(h), sizeof(err));
					*ext = has_extack(h);
					return err < 0 ? -err : 0;
				}
				continue;
			}
			if (h->nlmsg_seq == seq)
				*data_seen = true;
			if (!reply_valid(h)) {
				note(r, "malformed reply type %u cmd %u len %u",
				     h->nlmsg_type,
				     ((struct genlmsghdr *)NLMSG_DATA(h))->cmd,
				     h->nlmsg_len);
				r->bad++;
			}
		}
	}
}

/* CAPFENCE_A_PID as the kernel reads it (the last one wins), or 0. */
static uint32_t last_pid_attr(const struct msg *m)
{
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	uint32_t pid = 0;

	while (off + NLA_HDRLEN <= m->len) {
		const struct nlattr *a = (const void *)(m->buf + off);

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > m->len)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == CAPFENCE_A_PID &&
		    a->nla_len >= NLA_HDRLEN + 4)
			memcpy(&pid, m->buf + off + NLA_HDRLEN, 4);
		off += NLA_ALIGN(a->nla_len);
	}
	return pid;
}

/* The first bytes of a message in hex, for notes. */
static const char *hex(const uint8_t *p, size_t n)
{
	static char out[2 * 96 + 4];
	size_t i;

	for (i = 0; i < n && i < 96; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	if (n > 96)
		strcpy(out + 2 * i, "...");
	return out;
}

static uint32_t next_seq(void)
{
	return ++seq0;
}

/*
 * Send one message and account for its answer. Returns the errno (0 when
 * accepted), or -1 when no answer was due or none came.
 */
static int send_one(int fd, struct msg *m, struct result *r, enum ident id)
{
	struct nlmsghdr *h = (void *)m->buf;
	uint32_t seq = next_seq();
	bool ext = false, data = false;
	int err;

	if (m->len >= sizeof(h->nlmsg_seq) + offsetof(struct nlmsghdr, nlmsg_seq))
		h->nlmsg_seq = seq;
	/* the command the kernel will see (byte flips may have changed it) */
	if (!m->ping && m->len > NLMSG_HDRLEN && h->nlmsg_type == family) {
		m->cmd = m->buf[NLMSG_HDRLEN];
		m->admin = m->cmd >= CAPFENCE_CMD_HOOKS_ATTACH &&
			   m->cmd <= CAPFENCE_CMD_REVOKE &&
			   m->cmd != CAPFENCE_CMD_EPOCH_GET &&
			   !(h->nlmsg_flags & NLM_F_DUMP);
	}
	r->sent++;
	if (send(fd, m->buf, m->len, 0) < 0) {
		/* only a zero-length datagram may fail to send */
		if (m->len) {
			note(r, "send %zu bytes: %s", m->len, strerror(errno));
			r->bad++;
		}
		return -1;
	}
	if (m->ping) {
		/* odd framing: whatever comes back must parse; then a ping */
		struct genlmsghdr *pg;
		struct msg pm;
		uint32_t pseq;

		hdr(&pm, CAPFENCE_CMD_STATUS_GET, 0);
		finish(&pm);
		/* hdr() may have drawn a bad version or reserved field: a ping
		 * is well formed (every command is validated strictly) */
		pg = (struct genlmsghdr *)(pm.buf + NLMSG_HDRLEN);
		pg->version = CAPFENCE_GENL_VERSION;
		pg->reserved = 0;
		pseq = next_seq();
		((struct nlmsghdr *)pm.buf)->nlmsg_seq = pseq;
		err = send(fd, pm.buf, pm.len, 0) < 0 ? -errno :
		      read_until(fd, pseq, r, &ext, &data, 5000);
		/* an answer is all a ping asks: the host's status is an
		 * admin's, anyone else is refused it */
		if (err && !(err == EPERM && id != ID_ROOT && id != ID_BOUND)) {
			note(r, "ping after an oddly framed %s message failed (%d)",
			     ident_name[id], err);
			r->bad++;
		}
		r->dropped++;
		return -1;
	}
	err = read_until(fd, seq, r, &ext, &data, 10000);
	if (err < 0) {
		note(r, "%s: no answer to cmd %u (%zu bytes)", ident_name[id],
		     m->cmd, m->len);
		r->bad++;
		return -1;
	}
	r->answered++;
	if (err > 255 || !(err == 0 || errno_documented(err))) {
		note(r, "%s: cmd %u answered with undocumented errno %d",
		     ident_name[id], m->cmd, err);
		r->bad++;
	}
	r->err[err & 0xff]++;
	if (err) {
		r->rejected++;
		if ((err == EINVAL || err == ERANGE || err == E2BIG) &&
		    m->len >= NLMSG_HDRLEN + GENL_HDRLEN) {
			r->malformed++;
			if (!ext && !dump_start_quiet(m)) {
				r->no_extack++;
				if (r->no_extack <= 3)
					note(r, "%s: cmd %u errno %d without extack (%s)",
					     ident_name[id], m->cmd, err, m->what);
			}
		}
	} else {
		r->accepted++;
		if (!m->admin && m->cmd == CAPFENCE_CMD_TASK_GET &&
		    (id == ID_UNPRIV || id == ID_USERNS) &&
		    last_pid_attr(m) != (uint32_t)getpid()) {
			r->admin_ok++;
			note(r, "%s: TASK_GET of pid %u ACCEPTED", ident_name[id],
			     last_pid_attr(m));
		}
		if (m->admin && id != ID_ROOT) {
			r->admin_ok++;
			note(r, "%s: mutating cmd %u ACCEPTED: %s", ident_name[id],
			     m->cmd, hex(m->buf, m->len));
		}
	}
	return err;
}

static void fuzz_loop(int fd, long n, enum ident id, struct result *r)
{
	static struct msg m;
	long i;

	for (i = 0; i < n; i++) {
		if (chance(2)) {	/* a batch: two or three in one datagram */
			static struct msg b;
			int k, cnt = 2 + (int)rn(2);

			b.len = 0;
			for (k = 0; k < cnt; k++) {
				hdr(&m, (uint8_t)(1 + rn(CAPFENCE_CMD_MAX)), 0);
				if (m.buf[sizeof(struct nlmsghdr)] == CAPFENCE_CMD_HOOKS_DETACH ||
				    m.buf[sizeof(struct nlmsghdr)] == CAPFENCE_CMD_FLEET_SET)
					m.buf[sizeof(struct nlmsghdr)] = CAPFENCE_CMD_TASK_GET;
				cmd_attrs(&m, m.buf[sizeof(struct nlmsghdr)], true);
				finish(&m);
				((struct nlmsghdr *)m.buf)->nlmsg_seq = next_seq();
				put(&b, m.buf, NLMSG_ALIGN(m.len));
			}
			b.ping = true;
			b.admin = false;
			b.cmd = 0;
			send_one(fd, &b, r, id);
			continue;
		}
		gen_random(&m, id == ID_ROOT);
		send_one(fd, &m, r, id);
	}
}

/* ---- state snapshots ----------------------------------------------------- */

struct snap {
	char *s;
	size_t len, cap;
};

static void sput(struct snap *sn, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sn->cap - sn->len < 4096) {
		sn->cap = sn->cap * 2 + 65536;
		sn->s = realloc(sn->s, sn->cap);
		if (!sn->s)
			abort();
	}
	va_start(ap, fmt);
	n = vsnprintf(sn->s + sn->len, sn->cap - sn->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		sn->len += (size_t)n < sn->cap - sn->len ? (size_t)n : 0;
}

static void sput_hex(struct snap *sn, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		sput(sn, "%02x", b[i]);
		if (i % 64 == 63)
			sput(sn, "\n");
	}
	sput(sn, "\n");
}

static int snap_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct snap *sn = data;

	sput(sn, "msg cmd %u:\n",
	     ((const struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd);
	sput_hex(sn, (const char *)mnl_nlmsg_get_payload(nlh) + GENL_HDRLEN,
		 mnl_nlmsg_get_payload_len(nlh) - GENL_HDRLEN);
	return MNL_CB_OK;
}

static const uint8_t probe_bytes[4][CAPFENCE_KEY_LEN] = {
	{ 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
	  0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
	  0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a },
	{ 1 }, { 2 }, { 3 } };
static const uint32_t probe_ids[4] = { 7, 200, 201, 202 };
static bool probe_present[4];	/* as the last snapshot saw them */

/*
 * Whole state, counters excluded. The status and the tasks come last:
 * bound and held are gauges that drop an RCU grace period after the fact
 * (the probes' dry runs build a holdings set and free it deferred), so
 * they are read once two reads a quarter second apart agree.
 */
static int snapshot(struct cft_nl *nl, struct snap *sn)
{
	struct capfence_status st, prev;
	int i, err;

	sn->len = 0;
	sput(sn, "%s", "");
	sput(sn, "epochs:\n");
	err = cft_nl_talk(nl, cft_nl_req(nl, CAPFENCE_CMD_EPOCH_GET, NLM_F_DUMP),
			 snap_msg_cb, sn);
	if (err)
		return err;
	/* keys: a dry-run delegation of a token of each known key */
	for (i = 0; i < 4; i++) {
		struct capfence_key *k = NULL;
		struct capfence_token t;
		struct cft_reply rep;

		if (capfence_key_from_bytes(probe_ids[i], probe_bytes[i], &k) ||
		    cft_mint(k, "net:connect", epoch_e, "127.0.0.0/8",
			     0xf00d0000ull + probe_ids[i], &t)) {
			capfence_key_free(k);
			return -EIO;
		}
		capfence_key_free(k);
		cft_delegate(nl, &t, agent_pids[0], 0, true, &rep);
		sput(sn, "key %u probe: err %d reason %d\n", probe_ids[i],
		     rep.err, rep.reason);
		probe_present[i] = rep.reason != CAPFENCE_R_FORGED;
	}
	err = cft_nl_status(nl, &prev);
	for (i = 0; !err && i < cft_ms(10000) / 250; i++) {
		usleep(250000);
		err = cft_nl_status(nl, &st);
		if (!err && st.bound == prev.bound && st.held == prev.held)
			break;
		prev = st;
	}
	if (err)
		return err;
	/*
	 * The tasks once the gauges agree: a task's sandbox counts its live
	 * credentials (CAPFENCE_SANDBOX_A_CREDS), which drop in the same
	 * deferred free as bound.
	 */
	for (i = 0; i < 3; i++) {
		pid_t pid = i < 2 ? agent_pids[i] : getpid();
		struct nlmsghdr *nlh = cft_nl_req(nl, CAPFENCE_CMD_TASK_GET, 0);

		mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)pid);
		sput(sn, "task %d:\n", i);
		err = cft_nl_talk(nl, nlh, snap_msg_cb, sn);
		if (err)
			return err;
	}
	sput(sn, "attached %d fence %llu max %llu active %llu bound %llu held %llu\n",
	     st.attached, (unsigned long long)st.fence,
	     (unsigned long long)st.max_epoch,
	     (unsigned long long)st.active_epoch,
	     (unsigned long long)st.bound, (unsigned long long)st.held);
	return 0;
}

/* ---- the invalid burst ---------------------------------------------------- */

/* A message that must be rejected whatever the state; what says why. */
static void gen_invalid(struct msg *m)
{
	static const uint8_t admin_cmds[] = {
		CAPFENCE_CMD_KEY_INSTALL, CAPFENCE_CMD_KEY_REMOVE,
		CAPFENCE_CMD_EPOCH_INSTALL, CAPFENCE_CMD_EPOCH_ACTIVATE,
		CAPFENCE_CMD_EXEC_SET, CAPFENCE_CMD_DELEGATE,
		CAPFENCE_CMD_REVOKE, CAPFENCE_CMD_HOOKS_ATTACH,
		CAPFENCE_CMD_HOOKS_DETACH, CAPFENCE_CMD_FLEET_SET };
	uint8_t cmd = admin_cmds[rn(sizeof(admin_cmds))];
	uint8_t junk[64];
	size_t arr;
	int i;

	switch (rn(16)) {
	case 0:
		hdr(m, chance(50) ? (uint8_t)(CAPFENCE_CMD_MAX + 1 + rn(200)) :
		    (chance(50) ? CAPFENCE_CMD_EVENT : CAPFENCE_CMD_UNSPEC), 0);
		cmd_attrs(m, (uint8_t)(1 + rn(CAPFENCE_CMD_MAX)), true);
		m->what = "unknown command";
		break;
	case 1:	/* a required attribute missing */
		switch (rn(7)) {
		case 0:
			hdr(m, CAPFENCE_CMD_KEY_INSTALL, 0);
			attr_u32(m, CAPFENCE_A_KEY_ID, 100 + rn(8));
			break;
		case 1:
			hdr(m, CAPFENCE_CMD_KEY_INSTALL, 0);
			rand_bytes(junk, 32);
			attr(m, CAPFENCE_A_KEY, junk, 32);
			break;
		case 2:
			hdr(m, CAPFENCE_CMD_EPOCH_INSTALL, 0);
			rules_array(m, 1, true);
			break;
		case 3:
			hdr(m, CAPFENCE_CMD_EXEC_SET, 0);
			tokens_array(m, 1);
			break;
		case 4:
			hdr(m, CAPFENCE_CMD_DELEGATE, 0);
			if (chance(50))
				token_attr(m, CAPFENCE_A_TOKEN);
			else
				attr_u32(m, CAPFENCE_A_PID, (uint32_t)agent_pids[0]);
			break;
		case 5:
			hdr(m, CAPFENCE_CMD_REVOKE, 0);
			attr_u32(m, CAPFENCE_A_PID, 1);
			break;
		default:
			hdr(m, chance(50) ? CAPFENCE_CMD_EPOCH_ACTIVATE :
			    CAPFENCE_CMD_KEY_REMOVE, 0);
			break;
		}
		m->what = "required attribute missing";
		m->malformed = true;
		break;
	case 2:	/* wrong length for the policy */
		hdr(m, cmd, 0);
		cmd_attrs(m, cmd, true);
		switch (rn(5)) {
		case 0: attr(m, CAPFENCE_A_KEY_ID, junk, 1 + rn(3)); break;
		case 1: attr(m, CAPFENCE_A_EPOCH_ID, junk, 1 + rn(7)); break;
		case 2: attr(m, CAPFENCE_A_KEY, junk, chance(50) ? 31 : 33); break;
		case 3: attr(m, CAPFENCE_A_CAP_ID, junk, 4); break;
		default: attr(m, CAPFENCE_A_PID, junk, 2); break;
		}
		m->what = "attribute of the wrong length";
		m->malformed = true;
		break;
	case 3:	/* out of the policy range */
		hdr(m, cmd, 0);
		cmd_attrs(m, cmd, true);
		if (chance(50))
			attr_u32(m, CAPFENCE_A_KEY_ID, 0);
		else
			attr_u32(m, chance(50) ? CAPFENCE_A_PID : CAPFENCE_A_FROM_PID, 0);
		m->what = "attribute out of range";
		m->malformed = true;
		break;
	case 4:	/* unknown attribute type (strict validation) */
		hdr(m, cmd, 0);
		cmd_attrs(m, cmd, true);
		rand_bytes(junk, 8);
		if (chance(50)) {
			attr(m, (uint16_t)(CAPFENCE_A_MAX + 1 + rn(100)), junk, rn(9));
			m->what = "unknown attribute";
		} else {
			/* an id of ABI 1's repeated attributes, now reserved */
			static const uint16_t retired[] = { CAPFENCE_A_LINK_FD,
				CAPFENCE_A_RULE, CAPFENCE_A_CAP };

			attr_u32(m, retired[rn(3)], rn(8));
			m->what = "reserved attribute";
		}
		m->malformed = true;
		break;
	case 5:	/* token longer than the policy allows */
		hdr(m, chance(50) ? CAPFENCE_CMD_DELEGATE : CAPFENCE_CMD_EXEC_SET, 0);
		attr_u64(m, CAPFENCE_A_EPOCH_ID, epoch_e);
		attr_u32(m, CAPFENCE_A_PID, (uint32_t)agent_pids[0]);
		{
			static uint8_t big[CAPFENCE_TOKEN_MAX_LEN + 100];
			bool exec = m->cmd == CAPFENCE_CMD_EXEC_SET;
			size_t o = exec ? nest_start(m, CAPFENCE_A_TOKENS) : 0;

			rand_bytes(big, sizeof(big));
			attr(m, exec ? 1 : CAPFENCE_A_TOKEN, big,
			     CAPFENCE_TOKEN_MAX_LEN + 1 + rn(99));
			if (exec)
				nest_end(m, o);
		}
		m->what = "token too long";
		m->malformed = true;
		break;
	case 6:	/* bad rule nests */
		hdr(m, CAPFENCE_CMD_EPOCH_INSTALL, 0);
		attr_u64(m, CAPFENCE_A_EPOCH_ID, epoch_max + 1 + rn(5));
		arr = nest_start(m, CAPFENCE_A_RULES);
		switch (rn(7)) {
		case 0: {	/* class out of range */
			size_t o = nest_start(m, 1 + rn(4));

			attr_u8(m, CAPFENCE_RULE_A_CLASS,
				chance(50) ? 0 : CAPFENCE_CLASS_MAX + 1 + rn(200));
			attr_u8(m, CAPFENCE_RULE_A_KIND, 1);
			nest_end(m, o);
			break;
		}
		case 1: {	/* kind out of range: past the last kind the uapi names */
			size_t o = nest_start(m, 1 + rn(4));

			attr_u8(m, CAPFENCE_RULE_A_CLASS, 1);
			attr_u8(m, CAPFENCE_RULE_A_KIND, (uint8_t)(__CAPFENCE_RULE_MAX +
				rn(256 - __CAPFENCE_RULE_MAX)));
			nest_end(m, o);
			break;
		}
		case 2: {	/* duplicate class */
			uint8_t c = (uint8_t)(1 + rn(4));

			for (i = 0; i < 2; i++) {
				size_t o = nest_start(m, 1 + rn(4));

				attr_u8(m, CAPFENCE_RULE_A_CLASS, c);
				attr_u8(m, CAPFENCE_RULE_A_KIND, (uint8_t)rn(2));
				nest_end(m, o);
			}
			break;
		}
		case 3: {	/* too many constraints */
			size_t o = nest_start(m, 1 + rn(4));

			attr_u8(m, CAPFENCE_RULE_A_CLASS, 3);
			attr_u8(m, CAPFENCE_RULE_A_KIND, 2);
			for (i = 0; i < 9 + (int)rn(20); i++)
				attr(m, CAPFENCE_RULE_A_PATH, "/srv", 5);
			nest_end(m, o);
			break;
		}
		case 4: {	/* constraints on an open rule, or wrong kind */
			size_t o = nest_start(m, 1 + rn(4));
			struct capfence_net_range r;

			net_range(&r, true);
			r.reserved = 0;
			attr_u8(m, CAPFENCE_RULE_A_CLASS, chance(50) ? 1 : 3);
			attr_u8(m, CAPFENCE_RULE_A_KIND, chance(50) ? 1 : 0);
			attr(m, CAPFENCE_RULE_A_NET, &r, sizeof(r));
			nest_end(m, o);
			break;
		}
		default: {	/* relative or unnormalized path */
			size_t o = nest_start(m, 1 + rn(4));

			attr_u8(m, CAPFENCE_RULE_A_CLASS, 3);
			attr_u8(m, CAPFENCE_RULE_A_KIND, 2);
			attr(m, CAPFENCE_RULE_A_PATH, paths[3 + rn(5)],
			     strlen(paths[3 + rn(5)]) + 1);
			nest_end(m, o);
			break;
		}
		case 6:		/* a member that is not a nest */
			attr_u32(m, 1, 1 + rn(4));
			break;
		}
		nest_end(m, arr);
		m->what = "bad rule";
		m->malformed = true;
		break;
	case 7:	/* epoch ids that cannot be installed */
		hdr(m, CAPFENCE_CMD_EPOCH_INSTALL, 0);
		attr_u64(m, CAPFENCE_A_EPOCH_ID, chance(30) ? 0 : not_above_max());
		rules_array(m, 1, true);
		m->what = "epoch id not above the highest";
		break;
	case 8:	/* activation of an epoch that is not installed */
		hdr(m, CAPFENCE_CMD_EPOCH_ACTIVATE, 0);
		attr_u64(m, CAPFENCE_A_EPOCH_ID, epoch_max + 1 + rn(100));
		m->what = "activate unknown epoch";
		break;
	case 9:	/* keys: existing id, never-installed id */
		i = (int)rn(4);
		if (chance(50) && probe_present[i]) {
			hdr(m, CAPFENCE_CMD_KEY_INSTALL, 0);
			attr_u32(m, CAPFENCE_A_KEY_ID, probe_ids[i]);
			rand_bytes(junk, 32);
			attr(m, CAPFENCE_A_KEY, junk, 32);
			m->what = "install an existing key id";
		} else {
			hdr(m, CAPFENCE_CMD_KEY_REMOVE, 0);
			attr_u32(m, CAPFENCE_A_KEY_ID, 5000 + rn(1000));
			m->what = "remove an unknown key";
		}
		break;
	case 10:	/* revoke cap 0 */
		hdr(m, CAPFENCE_CMD_REVOKE, 0);
		attr_u64(m, CAPFENCE_A_CAP_ID, 0);
		m->what = "revoke cap_id 0";
		break;
	case 11: {	/* delegations that must be refused */
		struct capfence_token t;
		uint8_t b[CAPFENCE_TOKEN_MAX_LEN];
		int len;

		hdr(m, CAPFENCE_CMD_DELEGATE, 0);
		cft_mint(key7, "net:connect", epoch_e, "127.0.0.0/8",
			 0xbad0000ull + rn(1000), &t);
		len = capfence_token_encode_bin(&t, b, sizeof(b));
		switch (rn(4)) {
		case 0: b[len - 1 - rn(32)] ^= 1; m->what = "forged MAC"; break;
		case 1: len -= 1 + (int)rn(40); m->what = "truncated token"; break;
		case 2: b[0] = 2; m->what = "token version"; break;
		default: b[4] = 0x77; m->what = "unknown key id"; break;
		}
		attr(m, CAPFENCE_A_TOKEN, b, (size_t)len);
		attr_u32(m, CAPFENCE_A_PID, chance(80) ? (uint32_t)agent_pids[rn(2)] :
			 0x7ffffff0);
		if (chance(30))
			attr(m, CAPFENCE_A_DRY_RUN, NULL, 0);
		break;
	}
	case 12: {	/* exec_set with an unknown epoch or a bad token */
		struct capfence_token t;
		uint8_t b[CAPFENCE_TOKEN_MAX_LEN];
		int len;

		hdr(m, CAPFENCE_CMD_EXEC_SET, 0);
		if (chance(50)) {
			attr_u64(m, CAPFENCE_A_EPOCH_ID, epoch_max + 1 + rn(50));
			m->what = "exec_set of an unknown epoch";
		} else {
			attr_u64(m, CAPFENCE_A_EPOCH_ID, epoch_e);
			cft_mint(key7, "net:connect", epoch_e, "127.0.0.0/8",
				 0xbad1000ull + rn(1000), &t);
			len = capfence_token_encode_bin(&t, b, sizeof(b));
			b[len - 1] ^= 0x80;
			arr = nest_start(m, CAPFENCE_A_TOKENS);
			attr(m, 1, b, (size_t)len);
			nest_end(m, arr);
			m->what = "exec_set with a forged token";
		}
		break;
	}
	case 13:	/* attach while attached, detach while bound */
		hdr(m, chance(50) ? CAPFENCE_CMD_HOOKS_ATTACH : CAPFENCE_CMD_HOOKS_DETACH, 0);
		m->what = "attach twice / detach while bound";
		break;
	case 14:	/* a dump of a command that has none */
		hdr(m, (uint8_t)(1 + rn(CAPFENCE_CMD_MAX)), NLM_F_DUMP);
		if (m->cmd == CAPFENCE_CMD_EPOCH_GET)
			m->buf[sizeof(struct nlmsghdr)] = m->cmd = CAPFENCE_CMD_REVOKE;
		m->what = "dump without dumpit";
		break;
	default:	/* no genetlink header */
		hdr(m, cmd, 0);
		m->len = NLMSG_HDRLEN + rn(GENL_HDRLEN);
		m->what = "no genetlink header";
		m->malformed = true;
		break;
	}
	finish(m);
}

/* ---- identities ----------------------------------------------------------- */

static void child_report(int wfd, struct result *r)
{
	const char *p = (const char *)r;
	size_t left = sizeof(*r);

	while (left) {
		ssize_t n = write(wfd, p, left);

		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	close(wfd);
}

static int run_child_loop(int wfd, long n, enum ident id)
{
	static struct result r;
	int fd = fuzz_socket();

	if (fd < 0) {
		note(&r, "%s: socket: %s", ident_name[id], strerror(-fd));
		r.bad++;
	} else {
		fuzz_loop(fd, n, id, &r);
		close(fd);
	}
	child_report(wfd, &r);
	return 0;
}

static int collect(pid_t pid, int rfd, struct result *r)
{
	char *p = (char *)r;
	size_t got = 0;
	int st = 0;

	memset(r, 0, sizeof(*r));
	while (got < sizeof(*r)) {
		ssize_t n = read(rfd, p + got, sizeof(*r) - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(rfd);
	waitpid(pid, &st, 0);
	if (got != sizeof(*r) || !WIFEXITED(st) || WEXITSTATUS(st)) {
		note(r, "child ended %s %d before reporting",
		     WIFSIGNALED(st) ? "by signal" : "with status",
		     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		r->bad++;
		return -1;
	}
	return 0;
}

/* Fork an identity; the child fuzzes and reports through a pipe. */
static int run_identity(enum ident id, long n, struct result *r)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		close(p[0]);
		rng_state ^= 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
		switch (id) {
		case ID_UNPRIV:
			if (setresgid(65534, 65534, 65534) ||
			    setresuid(65534, 65534, 65534))
				_exit(97);
			break;
		case ID_USERNS:
			if (unshare(CLONE_NEWUSER))
				_exit(98);
			break;
		case ID_BOUND: {
			struct cft_nl nl;
			struct cft_reply rep;
			char a1[32], a2[32], a3[32], a4[32], a5[32], a6[32];
			char *argv[] = { "nlfuzz", "--bound-child", a1, a2, a3,
					 a4, a5, a6, NULL };

			if (cft_open(&nl) || cft_exec_set(&nl, epoch_e, NULL, 0, &rep))
				_exit(96);
			cft_nl_close(&nl);
			snprintf(a1, sizeof(a1), "%d", p[1]);
			snprintf(a2, sizeof(a2), "%ld", n);
			snprintf(a3, sizeof(a3), "%llu", (unsigned long long)rng_state);
			snprintf(a4, sizeof(a4), "%llu", (unsigned long long)epoch_e);
			snprintf(a5, sizeof(a5), "%d", agent_pids[0]);
			snprintf(a6, sizeof(a6), "%d", agent_pids[1]);
			execv("/proc/self/exe", argv);
			_exit(95);
		}
		default:
			break;
		}
		_exit(run_child_loop(p[1], n, id));
	}
	close(p[1]);
	return collect(pid, p[0], r);
}

static int epoch_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];

	cft_nl_parse(nlh, tb);
	if (tb[CAPFENCE_A_EPOCH_ID])
		*(uint64_t *)data = mnl_attr_get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	return MNL_CB_OK;
}

/* The bound identity: exec'd by run_identity() after EXEC_SET. */
static int bound_child_main(char **argv)
{
	static struct result r;
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct nlmsghdr *nlh;
	uint64_t mine = 0;
	struct cft_nl nl;
	int wfd = atoi(argv[2]);
	long n = atol(argv[3]);

	rng_state = strtoull(argv[4], NULL, 10) | 1;
	epoch_e = epoch_max = strtoull(argv[5], NULL, 10);
	agent_pids[0] = atoi(argv[6]);
	agent_pids[1] = atoi(argv[7]);
	memset(raw, 0x5a, sizeof(raw));
	if (cft_open(&nl) || capfence_key_from_bytes(7, raw, &key7)) {
		note(&r, "bound: cannot open netlink");
		r.bad++;
		child_report(wfd, &r);
		return 0;
	}
	family = nl.family;
	seq0 = (uint32_t)getpid() << 12;
	nlh = cft_nl_req(&nl, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, (uint32_t)getpid());
	if (cft_nl_talk(&nl, nlh, epoch_cb, &mine) || mine != epoch_e) {
		note(&r, "bound: the child is not bound to %llu (%llu)",
		     (unsigned long long)epoch_e, (unsigned long long)mine);
		r.bad++;
		child_report(wfd, &r);
		return 0;
	}
	cft_nl_close(&nl);
	return run_child_loop(wfd, n, ID_BOUND);
}

/*
 * Root's random messages must not install a huge epoch id by accident (a
 * byte flip): later phases need ids above the highest. Clamp what the
 * kernel would read as CAPFENCE_A_EPOCH_ID.
 */
static void clamp_epoch_ids(struct msg *m)
{
	size_t off = NLMSG_HDRLEN + GENL_HDRLEN;
	struct nlmsghdr *h = (void *)m->buf;

	if (m->len < off || h->nlmsg_type != family)
		return;
	while (off + NLA_HDRLEN <= m->len) {
		struct nlattr *a = (void *)(m->buf + off);
		uint64_t v;

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > m->len)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == CAPFENCE_A_EPOCH_ID &&
		    a->nla_len >= NLA_HDRLEN + 8) {
			memcpy(&v, m->buf + off + NLA_HDRLEN, 8);
			if (v > epoch_max + 64 && v < ~0ull - 64) {
				v = epoch_max + 1;
				memcpy(m->buf + off + NLA_HDRLEN, &v, 8);
			} else if (v >= ~0ull - 64) {
				v = 0;
				memcpy(m->buf + off + NLA_HDRLEN, &v, 8);
			}
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

/* ---- main ----------------------------------------------------------------- */

static int ntest, npass, nfail;

static void report(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
}

static void print_why(const struct result *r)
{
	const char *p = r->why, *nl;

	while (*p && (nl = strchr(p, '\n'))) {
		printf("#   %.*s\n", (int)(nl - p), p);
		p = nl + 1;
	}
}

static void print_errnos(const struct result *r)
{
	int e;

	printf("#   errnos:");
	for (e = 0; e < 256; e++)
		if (r->err[e])
			printf(" %s=%ld", e ? strerrorname_np(e) ?: "?" : "ok", r->err[e]);
	printf("\n");
}

/* The lines that differ between two snapshots (at most 12). */
static void print_diff(const struct snap *a, const struct snap *b)
{
	const char *p = a->s, *q = b->s, *pe = a->s + a->len, *qe = b->s + b->len;
	int shown = 0;

	while (p < pe && q < qe && shown < 12) {
		const char *pn = memchr(p, '\n', (size_t)(pe - p)) ?: pe;
		const char *qn = memchr(q, '\n', (size_t)(qe - q)) ?: qe;

		if (pn - p != qn - q || memcmp(p, q, (size_t)(pn - p))) {
			printf("#   - %.*s\n#   + %.*s\n", (int)(pn - p), p,
			       (int)(qn - q), q);
			shown++;
		}
		p = pn + 1;
		q = qn + 1;
	}
}

static int setup(struct cft_nl *nl, struct cft_agent *agents)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8", "fs:read=open",
				"fs:write=token:/tmp" };
	struct capfence_token t;
	struct cft_reply rep;
	int i;

	/* known bytes under every probe id, whatever an earlier run left */
	for (i = 0; i < 4; i++) {
		struct capfence_key *k = NULL;
		int err;

		cft_key_remove(nl, probe_ids[i]);
		if (capfence_key_from_bytes(probe_ids[i], probe_bytes[i], &k))
			return -EIO;
		err = cft_key_install(nl, k);
		if (i == 0)
			key7 = k;
		else
			capfence_key_free(k);
		if (err)
			return err;
	}
	/* probe key 202 absent: its probe must say forged before and after */
	cft_key_remove(nl, 202);
	epoch_e = cft_next_epoch(nl);
	if (!epoch_e || cft_epoch_install(nl, epoch_e, rules, 3, NULL, 0))
		return -EIO;
	epoch_max = epoch_e;
	for (i = 0; i < 4; i++)
		known_caps[i] = 0xcafe0000ull + (uint64_t)i + ((uint64_t)getpid() << 20);
	if (cft_mint(key7, "net:connect", epoch_e, "127.0.0.0/8", known_caps[0], &t))
		return -EIO;
	for (i = 0; i < 2; i++) {
		int err = cft_agent_spawn(&agents[i], epoch_e, &t, 1, &rep);

		if (err)
			return err;
		agent_pids[i] = agents[i].pid;
	}
	/* a delegated descendant, so that task state has a graph */
	if (cft_mint(key7, "net:connect", epoch_e, "127.0.0.1:80", known_caps[1], &t))
		return -EIO;
	cft_delegate(nl, &t, agent_pids[1], agent_pids[0], false, &rep);
	return 0;
}

int main(int argc, char **argv)
{
	static struct result res[ID_MAX], burst;
	static struct snap before, after;
	const long share[ID_MAX] = { 40, 20, 10, 30 };
	long total = 5000, nburst;
	uint64_t seed = 0;
	bool max_epoch = false;
	struct cft_agent agents[2];
	struct cft_nl nl;
	struct capfence_status st;
	time_t t0;
	int i, fd;

	{
		struct utsname u;
		int maj = 0, min = 0;

		if (!uname(&u))
			sscanf(u.release, "%d.%d", &maj, &min);
		start_extack = maj > 6 || (maj == 6 && min >= 12);
	}
	if (argc > 1 && !strcmp(argv[1], "--agent"))
		return cft_agent_main();
	if (argc == 8 && !strcmp(argv[1], "--bound-child"))
		return bound_child_main(argv);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--messages") && i + 1 < argc)
			total = atol(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max-epoch"))
			max_epoch = true;
		else {
			fprintf(stderr, "usage: nlfuzz [--messages N] [--seed S] [--max-epoch]\n");
			return 2;
		}
	}
	if (!seed) {
		randombytes_buf(&seed, sizeof(seed));
		seed |= 1;
	}
	rng_state = seed;
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n");
	printf("# nlfuzz: %ld random messages, seed 0x%llx\n", total,
	       (unsigned long long)seed);
	fflush(stdout);
	{
		char why[256];
		int err = cft_establish(why, sizeof(why));

		if (!err) {
			if (why[0])
				printf("# starting state: %s\n", why);
			err = cft_open(&nl) ?: setup(&nl, agents);
			snprintf(why, sizeof(why), "%s", strerror(err < 0 ? -err : err));
		}
		if (err) {
			printf("not ok 1 - setup (capfence family, keys, epoch, agents): %s\n",
			       why);
			printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
			return 1;
		}
	}
	family = nl.family;
	seq0 = 0x10000000;
	fd = fuzz_socket();
	if (fd < 0)
		return 1;

	/* 1. random messages per identity */
	for (i = 0; i < ID_MAX; i++) {
		long n = total * share[i] / 100;

		t0 = time(NULL);
		if (i == ID_ROOT)
			fuzz_loop(fd, n, ID_ROOT, &res[i]);
		else
			run_identity((enum ident)i, n, &res[i]);
		/* what root may have changed: the highest epoch */
		if (!cft_nl_status(&nl, &st))
			epoch_max = st.max_epoch;
		printf("# after %s: fence %llu, highest epoch %llu, active %llu\n",
		       ident_name[i], (unsigned long long)st.fence,
		       (unsigned long long)st.max_epoch,
		       (unsigned long long)st.active_epoch);
		report(res[i].bad == 0 && res[i].admin_ok == 0 &&
		       res[i].sent >= n,
		       "%s: %ld messages (%ld answered: %ld accepted, %ld rejected; "
		       "%ld oddly framed), every one answered, %ld bad, %ld "
		       "mutations accepted, %lds",
		       ident_name[i], res[i].sent, res[i].answered,
		       res[i].accepted, res[i].rejected, res[i].dropped,
		       res[i].bad, res[i].admin_ok, (long)(time(NULL) - t0));
		print_errnos(&res[i]);
		print_why(&res[i]);
		if (i != ID_ROOT && res[i].admin_ok)
			report(false, "%s: a mutating operation was accepted",
			       ident_name[i]);
	}

	/* 2. an invalid burst changes nothing */
	nburst = total / 5 > 1000 ? total / 5 : 1000;
	if (cft_nl_status(&nl, &st) == 0)
		epoch_max = st.max_epoch;
	if (snapshot(&nl, &before)) {
		report(false, "state snapshot before the burst");
	} else {
		static struct msg m;
		long accepted = 0, k;

		t0 = time(NULL);
		for (k = 0; k < nburst; k++) {
			gen_invalid(&m);
			if (send_one(fd, &m, &burst, ID_ROOT) == 0) {
				if (++accepted <= 5)
					note(&burst, "invalid message accepted: cmd %u (%s): %s",
					     m.cmd, m.what, hex(m.buf, m.len));
			}
		}
		/* and refused identities with valid mutations */
		for (i = ID_UNPRIV; i < ID_MAX; i++) {
			struct result cr;

			run_identity((enum ident)i, nburst / 10, &cr);
			burst.bad += cr.bad;
			if (cr.admin_ok) {
				accepted += cr.admin_ok;
				note(&burst, "%s: mutation accepted in the burst",
				     ident_name[i]);
			}
		}
		report(accepted == 0 && burst.bad == 0,
		       "invalid burst: %ld messages, every one rejected (%ld accepted, %ld bad), %lds",
		       burst.sent, accepted, burst.bad, (long)(time(NULL) - t0));
		print_errnos(&burst);
		print_why(&burst);
		/* the burst's bound child has exited: its cred goes after RCU */
		for (k = 0; k < 10; k++) {
			if (snapshot(&nl, &after) == 0 && before.len == after.len &&
			    !memcmp(before.s, after.s, before.len))
				break;
		}
		if (snapshot(&nl, &after)) {
			report(false, "state snapshot after the burst");
		} else {
			bool same = before.len == after.len &&
				    !memcmp(before.s, after.s, before.len);

			report(same, "state after the burst is identical (%zu bytes: "
			       "status, epochs, keys, bound tasks)", before.len);
			if (!same) {
				FILE *f = fopen("/tmp/nlfuzz.before", "w");

				if (f) {
					fwrite(before.s, 1, before.len, f);
					fclose(f);
				}
				f = fopen("/tmp/nlfuzz.after", "w");
				if (f) {
					fwrite(after.s, 1, after.len, f);
					fclose(f);
				}
				print_diff(&before, &after);
			}
		}
	}

	/* 3. extended acks for malformed messages */
	{
		long mal = burst.malformed, no = burst.no_extack;

		for (i = 0; i < ID_MAX; i++) {
			mal += res[i].malformed;
			no += res[i].no_extack;
		}
		report(no == 0, "%ld malformed messages (EINVAL/ERANGE/E2BIG) carry an extack (%ld without)",
		       mal, no);
	}

	/* 4. the last possible epoch id (poisons the boot: make fuzz only) */
	if (max_epoch) {
		const char *rules[] = { "fs:read=open" };
		int e1 = cft_epoch_install(&nl, ~0ull, rules, 1, NULL, 0);
		int e2 = cft_epoch_install(&nl, ~0ull, rules, 1, NULL, 0);

		cft_nl_status(&nl, &st);
		report(e1 == 0 && e2 != 0 && st.max_epoch == ~0ull,
		       "epoch id 2^64-1 installs (%d), then nothing above it (%d)",
		       e1, e2);
	}

	for (i = 0; i < 2; i++)
		cft_agent_stop(&agents[i]);
	{
		long sent = burst.sent;

		for (i = 0; i < ID_MAX; i++)
			sent += res[i].sent;
		printf("# nlfuzz: %ld messages in all\n", sent);
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       npass, nfail);
	return nfail ? 1 : 0;
}
