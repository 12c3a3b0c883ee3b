// SPDX-License-Identifier: GPL-2.0
/*
 * The LSM hook inventory of docs/threat-model.md against the running
 * kernel: every BPF-LSM hook the kernel has (a bpf_lsm_<hook> function in
 * its BTF) must have a row that says the kernel has it, and the hooks
 * capfence has attached (its BPF-LSM links, programs cf_*) must be exactly
 * the rows marked used for this kernel. A kernel that routes an operation
 * through a hook nobody classified (as 6.2 did with POSIX ACLs and
 * inode_set_acl) fails here until the table says what capfence does
 * with it. Its programs on other attach points (the fexit of
 * __secure_computing) are exactly the "Other attach points" rows.
 *
 * The protocol inventory of the same file likewise: every socket family
 * number below AF_MAX and every protocol in /proc/net/protocols has a row,
 * and each row's socket, tried by a task bound to an epoch whose net
 * classes are mediated, is refused (EACCES and its record) or mediated
 * (created as for an unbound task, then judged) as the row says.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <netinet/in.h>
#include <netinet/icmp6.h>
#include <netinet/ip_icmp.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#define CFT_TEST_SECONDS 120
#include "harness.h"
#include "common.h"
#include "records.h"

#define INVENTORY	"/usr/share/capfence/threat-model.md"
#define MAXHOOKS	512

/* bpf_lsm_* functions of kernel/bpf/bpf_lsm.c that are not hooks */
static const char *const not_hooks[] = {
	"find_cgroup_shim", "func_proto", "get_retval_range", "init",
	"is_sleepable_hook", "is_trusted", "verify_prog",
};

struct row {
	char name[64];
	bool in61, in612;
	bool used61, used612;
};

struct inventory {
	struct row r[MAXHOOKS];
	int n;
};

/* "yes" or "–" */
static bool cell_yes(const char *c)
{
	while (*c == ' ')
		c++;
	return !strncmp(c, "yes", 3);
}

/* the rows of the table of section "## @section" */
static int inventory_section(struct inventory *inv, const char *section)
{
	char line[2048];
	bool in = false;
	FILE *f = fopen(INVENTORY, "r");

	if (!f)
		return -errno;
	inv->n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *cell[5], *p = line, *end;
		struct row *r;
		int i;

		if (!strncmp(line, "## ", 3)) {
			in = !strncmp(line + 3, section, strlen(section));
			continue;
		}
		if (!in || strncmp(line, "| `", 3))
			continue;
		for (i = 0; i < 5; i++) {
			p = strchr(p, '|');
			if (!p)
				break;
			cell[i] = ++p;
		}
		if (i < 5 || inv->n == MAXHOOKS)
			continue;
		r = &inv->r[inv->n++];
		memset(r, 0, sizeof(*r));
		end = strchr(cell[0] + 2, '`');
		if (!end || end - (cell[0] + 2) >= (long)sizeof(r->name))
			continue;
		memcpy(r->name, cell[0] + 2, (size_t)(end - (cell[0] + 2)));
		r->in61 = cell_yes(cell[1]);
		r->in612 = cell_yes(cell[2]);
		if (strstr(cell[3], "**used on 6.1**")) {
			r->used61 = true;
		} else if (strstr(cell[3], "**used on 6.12**")) {
			r->used612 = true;
		} else if (strstr(cell[3], "**used**")) {
			r->used61 = true;
			r->used612 = true;
		}
	}
	fclose(f);
	return 0;
}

/* the rows of the "## The LSM hook inventory" table */
static int inventory_read(struct inventory *inv)
{
	return inventory_section(inv, "The LSM hook inventory");
}

static const struct row *inventory_find(const struct inventory *inv,
					const char *name)
{
	int i;

	for (i = 0; i < inv->n; i++)
		if (!strcmp(inv->r[i].name, name))
			return &inv->r[i];
	return NULL;
}

/* 612 on 6.12, 601 on 6.1, else 0 */
static int kernel_series(void)
{
	struct utsname u;
	int maj, min;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj == 6 && (min == 1 || min == 12) ? maj * 100 + min : 0;
}

static bool row_has(const struct row *r, int series)
{
	return series == 601 ? r->in61 : r->in612;
}

static bool row_used(const struct row *r, int series)
{
	return series == 601 ? r->used61 : r->used612;
}

static bool is_hook(const char *fn)
{
	size_t i;

	if (strncmp(fn, "bpf_lsm_", 8))
		return false;
	for (i = 0; i < sizeof(not_hooks) / sizeof(not_hooks[0]); i++)
		if (!strcmp(fn + 8, not_hooks[i]))
			return false;
	return true;
}

FIXTURE(inv) {
	struct inventory inv;
	struct btf *btf;
	int series;
};

FIXTURE_SETUP(inv)
{
	if (cft_builtin())
		return;		/* each test says why it is skipped */
	self->series = kernel_series();
	ASSERT_NE(0, self->series) TH_LOG("not a kernel capfence supports");
	ASSERT_EQ(0, inventory_read(&self->inv)) TH_LOG("no " INVENTORY);
	ASSERT_LT(200, self->inv.n) TH_LOG("only %d rows", self->inv.n);
	self->btf = btf__load_vmlinux_btf();
	ASSERT_NE(NULL, self->btf);
}

FIXTURE_TEARDOWN(inv)
{
	btf__free(self->btf);
}

/* Every hook of the running kernel is in the table, for this kernel. */
TEST_F(inv, every_hook_of_the_kernel_is_classified)
{
	int id, n, hooks = 0, bad = 0;

	CFT_MODULE_ONLY("the inventory is of the BPF-LSM attach points, and capfence attaches none");
	n = btf__type_cnt(self->btf);

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(self->btf, id);
		const char *fn;
		const struct row *r;

		if (!btf_is_func(t))
			continue;
		fn = btf__name_by_offset(self->btf, t->name_off);
		if (!fn || !is_hook(fn))
			continue;
		hooks++;
		r = inventory_find(&self->inv, fn + 8);
		if (!r || !row_has(r, self->series)) {
			TH_LOG("hook %s of this kernel is not in the inventory for %d.%d",
			       fn + 8, self->series / 100, self->series % 100);
			bad++;
		}
	}
	TH_LOG("%d hooks, %d rows", hooks, self->inv.n);
	EXPECT_LT(200, hooks);
	EXPECT_EQ(0, bad);
}

/* capfence's attached hooks are exactly the rows marked used here. */
TEST_F(inv, attached_hooks_are_the_used_rows)
{
	static bool attached[MAXHOOKS];
	__u32 lid = 0;
	int i, links = 0, bad = 0, used = 0;

	CFT_MODULE_ONLY("the inventory is of the BPF-LSM attach points, and capfence attaches none");

	memset(attached, 0, sizeof(attached));
	while (!bpf_link_get_next_id(lid, &lid)) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(li);
		const struct btf_type *t;
		const struct row *r;
		const char *fn;
		int fd = bpf_link_get_fd_by_id(lid), pfd;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &li, &len) ||
		    li.type != BPF_LINK_TYPE_TRACING ||
		    li.tracing.attach_type != BPF_LSM_MAC) {
			close(fd);
			continue;
		}
		close(fd);
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0)
			continue;
		len = sizeof(pi);
		if (bpf_obj_get_info_by_fd(pfd, &pi, &len) ||
		    strncmp(pi.name, "cf_", 3)) {
			close(pfd);
			continue;
		}
		close(pfd);
		t = btf__type_by_id(self->btf, li.tracing.target_btf_id);
		fn = t ? btf__name_by_offset(self->btf, t->name_off) : NULL;
		ASSERT_NE(NULL, fn);
		ASSERT_TRUE(is_hook(fn)) TH_LOG("%s", fn);
		links++;
		r = inventory_find(&self->inv, fn + 8);
		if (!r || !row_used(r, self->series)) {
			TH_LOG("capfence is attached to %s, which the inventory does not mark used on %d.%d",
			       fn + 8, self->series / 100, self->series % 100);
			bad++;
			continue;
		}
		attached[r - self->inv.r] = true;
	}
	for (i = 0; i < self->inv.n; i++) {
		if (!row_used(&self->inv.r[i], self->series))
			continue;
		used++;
		if (!attached[i]) {
			TH_LOG("the inventory marks %s used on %d.%d, capfence is not attached to it",
			       self->inv.r[i].name, self->series / 100,
			       self->series % 100);
			bad++;
		}
	}
	TH_LOG("%d capfence links, %d rows used here", links, used);
	EXPECT_LT(40, links);
	EXPECT_EQ(used, links);
	EXPECT_EQ(0, bad);
}

/*
 * capfence's programs on other attach points than LSM hooks (the fexit
 * after seccomp's check of a call): exactly the functions the
 * inventory's "Other attach points" table marks used here, each one in
 * this kernel's BTF.
 */
TEST_F(inv, other_attach_points_are_the_used_rows)
{
	static struct inventory other;
	__u32 lid = 0;
	int i, links = 0, used = 0, bad = 0;
	bool attached[16] = {};

	CFT_MODULE_ONLY("the inventory is of the BPF-LSM attach points, and capfence attaches none");

	ASSERT_EQ(0, inventory_section(&other, "Other attach points"));
	ASSERT_LT(0, other.n);
	ASSERT_GE(16, other.n);
	while (!bpf_link_get_next_id(lid, &lid)) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(li);
		const struct btf_type *t;
		const struct row *r;
		const char *fn;
		int fd = bpf_link_get_fd_by_id(lid), pfd;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &li, &len) ||
		    li.type != BPF_LINK_TYPE_TRACING ||
		    li.tracing.attach_type == BPF_LSM_MAC) {
			close(fd);
			continue;
		}
		close(fd);
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0)
			continue;
		len = sizeof(pi);
		if (bpf_obj_get_info_by_fd(pfd, &pi, &len) ||
		    strncmp(pi.name, "cf_", 3)) {
			close(pfd);
			continue;
		}
		close(pfd);
		EXPECT_EQ(BPF_TRACE_FEXIT, li.tracing.attach_type);
		t = btf__type_by_id(self->btf, li.tracing.target_btf_id);
		fn = t ? btf__name_by_offset(self->btf, t->name_off) : NULL;
		ASSERT_NE(NULL, fn);
		links++;
		r = inventory_find(&other, fn);
		if (!r || !row_used(r, self->series) || !row_has(r, self->series)) {
			TH_LOG("capfence is attached to %s, which the inventory does not mark used on %d.%d",
			       fn, self->series / 100, self->series % 100);
			bad++;
			continue;
		}
		attached[r - other.r] = true;
	}
	for (i = 0; i < other.n; i++) {
		if (!row_used(&other.r[i], self->series))
			continue;
		used++;
		if (!attached[i]) {
			TH_LOG("the inventory marks %s used on %d.%d, capfence is not attached to it",
			       other.r[i].name, self->series / 100, self->series % 100);
			bad++;
		}
	}
	TH_LOG("%d capfence links on other attach points, %d rows used here", links,
	       used);
	EXPECT_EQ(used, links);
	EXPECT_EQ(0, bad);
}

/* ---- the protocol inventory ---- */

#define PROTO_AF_MAX	46	/* AF_MAX of both kernels */
#define PROTO_ROWS	128

#ifndef SOCK_DCCP
#define SOCK_DCCP	6
#endif

enum outcome { P_MEDIATED, P_ALLOWED, P_REFUSED, P_VSOCK };

struct prow {
	char name[32];
	int nr, type, proto;
	enum outcome out;
	char target[32];	/* refused: socket:... */
	char kp[96];		/* kernel protocols, ",name,name," */
};

struct pinv {
	struct prow r[PROTO_ROWS];
	int n;
};

static const struct { const char *name; int type; } sock_types[] = {
	{ "SOCK_STREAM", SOCK_STREAM }, { "SOCK_DGRAM", SOCK_DGRAM },
	{ "SOCK_RAW", SOCK_RAW }, { "SOCK_RDM", SOCK_RDM },
	{ "SOCK_SEQPACKET", SOCK_SEQPACKET }, { "SOCK_DCCP", SOCK_DCCP },
	{ "SOCK_PACKET", SOCK_PACKET },
};

/* the text between the first pair of backquotes in @c, into @out */
static bool quoted(const char *c, char *out, size_t len)
{
	const char *a = strchr(c, '`'), *b = a ? strchr(a + 1, '`') : NULL;

	if (!b || (size_t)(b - a - 1) >= len)
		return false;
	memcpy(out, a + 1, (size_t)(b - a - 1));
	out[b - a - 1] = 0;
	return true;
}

/* one table row: 0, or -EINVAL naming nothing the test understands */
static int prow_parse(char *line, struct prow *r)
{
	char *cell[6], *p = line, buf[64];
	size_t i;
	int n;

	for (n = 0; n < 6; n++) {
		p = strchr(p, '|');
		if (!p)
			return -EINVAL;
		cell[n] = ++p;
	}
	memset(r, 0, sizeof(*r));
	if (!quoted(cell[0], r->name, sizeof(r->name)) ||
	    sscanf(cell[1], "%d", &r->nr) != 1 ||
	    !quoted(cell[2], buf, sizeof(buf)))
		return -EINVAL;
	r->type = -1;
	for (i = 0; i < sizeof(sock_types) / sizeof(sock_types[0]); i++)
		if (!strcmp(buf, sock_types[i].name))
			r->type = sock_types[i].type;
	p = strchr(strchr(cell[2], '`') + 1, '`') + 1;
	if (r->type < 0 || sscanf(p, "%d", &r->proto) != 1)
		return -EINVAL;
	/* kernel protocols: `A`, `B` or – */
	strcpy(r->kp, ",");
	for (p = cell[3]; p < cell[4] && quoted(p, buf, sizeof(buf));
	     p = strchr(strchr(p, '`') + 1, '`') + 1) {
		if (strlen(r->kp) + strlen(buf) + 2 > sizeof(r->kp))
			return -EINVAL;
		strcat(r->kp, buf);
		strcat(r->kp, ",");
	}
	while (*cell[4] == ' ')
		cell[4]++;
	if (!strncmp(cell[4], "mediated", 8)) {
		r->out = P_MEDIATED;
	} else if (!strncmp(cell[4], "allowed", 7)) {
		r->out = P_ALLOWED;
	} else if (!strncmp(cell[4], "vsock", 5)) {
		r->out = P_VSOCK;
	} else if (!strncmp(cell[4], "refused", 7)) {
		r->out = P_REFUSED;
		if (!quoted(cell[4], r->target, sizeof(r->target)) ||
		    strncmp(r->target, "socket:", 7))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	return 0;
}

/* the rows of "## The protocol inventory"; -errno, or the bad row's -line */
static int pinv_read(struct pinv *inv)
{
	char line[2048];
	bool in = false;
	int lineno = 0, err = 0;
	FILE *f = fopen(INVENTORY, "r");

	if (!f)
		return -errno;
	inv->n = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strncmp(line, "## ", 3)) {
			in = !strncmp(line, "## The protocol inventory", 25);
			continue;
		}
		if (!in || strncmp(line, "| `", 3))
			continue;
		if (inv->n == PROTO_ROWS ||
		    prow_parse(line, &inv->r[inv->n])) {
			err = -lineno;
			break;
		}
		inv->n++;
	}
	fclose(f);
	return err;
}

static bool ip_family(int nr)
{
	return nr == AF_INET || nr == AF_INET6;
}

/* socket(@family, @type, @proto) closed again: 0 or errno */
static int try_socket(int family, int type, int proto)
{
	int fd = socket(family, type, proto);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int fill(int family, const char *addr, int port,
		struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (void *)ss;
	struct sockaddr_in6 *sin6 = (void *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1 ? 0 : EINVAL;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	*len = sizeof(*sin);
	return inet_pton(AF_INET, addr, &sin->sin_addr) == 1 ? 0 : EINVAL;
}

/* the agent's socket connected under a capability, and what it sends */
static int held = -1, held_family, held_proto;

/* one message on @fd (to @sa when set): an echo request on a ping socket */
static int send_one(int fd, int family, int proto, const struct sockaddr *sa,
		    socklen_t len)
{
	struct icmphdr e4 = { .type = ICMP_ECHO };
	struct icmp6_hdr e6 = { .icmp6_type = ICMP6_ECHO_REQUEST };
	const void *buf = "x";
	size_t n = 1;

	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6) {
		buf = family == AF_INET6 ? (const void *)&e6 : (const void *)&e4;
		n = family == AF_INET6 ? sizeof(e6) : sizeof(e4);
	}
	return sendto(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL, sa, len) < 0 ?
	       errno : 0;
}

/*
 * @op ("connect", "bind", "sendto", "hold") on a fresh socket(@f, @t, @p) at
 * @addr:@port: the errno of the operation, 0, or 100 + the errno of
 * socket() or of parsing.
 */
static int sock_op(const char *op, int f, int t, int p, const char *addr,
		   int port)
{
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err;

	if (fill(f, addr, port, &ss, &len))
		return 100 + EINVAL;
	fd = socket(f, t, p);
	if (fd < 0)
		return 100 + errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!strcmp(op, "bind")) {
		err = bind(fd, (struct sockaddr *)&ss, len) ? errno : 0;
	} else if (!strcmp(op, "sendto")) {
		err = send_one(fd, f, p, (struct sockaddr *)&ss, len);
	} else {
		err = connect(fd, (struct sockaddr *)&ss, len) ? errno : 0;
		if (!err && !strcmp(op, "hold")) {
			if (held >= 0)
				close(held);
			held = fd;
			held_family = f;
			held_proto = p;
			return 0;
		}
	}
	close(fd);
	return err;
}

/* one message on "held" */
static int held_send(void)
{
	if (held < 0)
		return EBADF;
	return send_one(held, held_family, held_proto, NULL, 0);
}

int cft_agent_extra(char *cmd)
{
	char op[16], addr[64];
	int f, t, p, port;

	if (sscanf(cmd, "p-sock %d %d %d", &f, &t, &p) == 3)
		return try_socket(f, t, p);
	if (sscanf(cmd, "p-op %15s %d %d %d %63s %d", op, &f, &t, &p, addr,
		   &port) == 6)
		return sock_op(op, f, t, p, addr, port);
	if (!strcmp(cmd, "p-send"))
		return held_send();
	return EINVAL;
}

static void sysctl_set(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

/* a peer on loopback of @family, @type: the socket (port in *@port) */
static int peer(int family, int type, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, type | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -errno;
	fill(family, family == AF_INET6 ? "::1" : "127.0.0.1", 0, &ss, &len);
	if (bind(fd, (struct sockaddr *)&ss, len) ||
	    (type == SOCK_STREAM && listen(fd, 64)) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		close(fd);
		return -errno;
	}
	*port = ntohs(family == AF_INET6 ?
		      ((struct sockaddr_in6 *)&ss)->sin6_port :
		      ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/*
 * Epochs: e (net:connect by token for loopback, net:bind open), deny
 * (net:connect open, net:bind deny), open (both open). An agent in each.
 */
FIXTURE(proto) {
	struct pinv inv;
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e, deny, open;
	struct cft_agent a, d, o;
	int audit;
	long budget;
	int peers[4];		/* TCP v4, v6, UDP v4, v6 */
	uint16_t ports[4];
};

FIXTURE_SETUP(proto)
{
	const char *rules[] = { "net:connect=token:127.0.0.0/8,[::1]/128",
				"net:bind=open", "fs:read=open",
				"fs:write=open" };
	const char *deny[] = { "net:connect=open", "net:bind=deny",
			       "fs:read=open", "fs:write=open" };
	const char *open_rules[] = { "net:connect=open", "net:bind=open",
				     "fs:read=open", "fs:write=open" };
	int i, err;

	err = pinv_read(&self->inv);
	ASSERT_EQ(0, err) TH_LOG(INVENTORY " line %d: a protocol inventory row the test cannot read",
				 -err);
	ASSERT_LT(60, self->inv.n) TH_LOG("only %d rows", self->inv.n);
	/* ping sockets for root */
	sysctl_set("/proc/sys/net/ipv4/ping_group_range", "0 65534");
	/* every refusal of this program has a record to check */
	self->budget = cft_param_get("audit_budget");
	ASSERT_LT(0, self->budget);
	ASSERT_EQ(0, cft_param_set("audit_budget", 1000));
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	self->deny = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->deny, deny, 4, NULL, 0));
	self->e = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->e, rules, 4, NULL, 0));
	self->open = cft_next_epoch(&self->nl);
	ASSERT_EQ(0, cft_epoch_install(&self->nl, self->open, open_rules, 4,
				       NULL, 0));
	for (i = 0; i < 4; i++) {
		self->peers[i] = peer(i & 1 ? AF_INET6 : AF_INET,
				      i < 2 ? SOCK_STREAM : SOCK_DGRAM,
				      &self->ports[i]);
		ASSERT_LE(0, self->peers[i]);
	}
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	ASSERT_EQ(0, cft_agent_spawn(&self->a, self->e, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&self->d, self->deny, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&self->o, self->open, NULL, 0, NULL));
}

FIXTURE_TEARDOWN(proto)
{
	int i;

	EXPECT_TRUE(cft_agent_stop_clean(&self->a));
	EXPECT_TRUE(cft_agent_stop_clean(&self->d));
	EXPECT_TRUE(cft_agent_stop_clean(&self->o));
	if (self->budget > 0)
		cft_param_set("audit_budget", self->budget);
	cft_audit_close(self->audit);
	for (i = 0; i < 4; i++)
		if (self->peers[i] >= 0)
			close(self->peers[i]);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static const char *outcome_name(enum outcome o)
{
	return o == P_MEDIATED ? "mediated" : o == P_ALLOWED ? "allowed" :
	       o == P_REFUSED ? "refused" : "vsock";
}

/*
 * A mediated socket, once created, is judged: a connect (and a datagram)
 * outside the grant, a bind under net:bind=deny, and for the protocols
 * with a peer here (TCP, UDP, UDP-Lite, ping) a send after its capability
 * is revoked.
 */
static void check_mediated(struct __test_metadata *_metadata,
			   FIXTURE_DATA(proto) *self, const struct prow *r,
			   uint64_t cap_id)
{
	bool v6 = r->nr == AF_INET6, ping;
	const char *lo = v6 ? "::1" : "127.0.0.1";
	struct capfence_token t;
	struct cft_reply rep;
	char target[64];
	int port = 0, i;

	EXPECT_EQ(EACCES, cft_agent_do(&self->a, "p-op connect %d %d %d %s 9",
				       r->nr, r->type, r->proto,
				       v6 ? "fd00::9" : "10.1.2.3"))
		TH_LOG("%s %d/%d: a connect outside the grant", r->name,
		       r->type, r->proto);
	cft_check_denial(_metadata, self->audit, self->a.pid, self->e,
			 "constraint", "net:connect",
			 v6 ? "[fd00::9]:9" : "10.1.2.3:9", 0);
	EXPECT_EQ(EACCES, cft_agent_do(&self->d, "p-op bind %d %d %d %s 0",
				       r->nr, r->type, r->proto, lo))
		TH_LOG("%s %d/%d: a bind under net:bind=deny", r->name,
		       r->type, r->proto);
	snprintf(target, sizeof(target), v6 ? "[%s]:0" : "%s:0", lo);
	cft_check_denial(_metadata, self->audit, self->d.pid, self->deny,
			 "class_denied", "net:bind", target, 0);
	/* a datagram to an address is judged on its own */
	if (r->type == SOCK_DGRAM) {
		EXPECT_EQ(EACCES, cft_agent_do(&self->a,
					       "p-op sendto %d %d %d %s 9",
					       r->nr, r->type, r->proto,
					       v6 ? "fd00::9" : "10.1.2.3"))
			TH_LOG("%s %d/%d: a datagram outside the grant",
			       r->name, r->type, r->proto);
		cft_check_denial(_metadata, self->audit, self->a.pid, self->e,
				 "constraint", "net:connect",
				 v6 ? "[fd00::9]:9" : "10.1.2.3:9", 0);
	}
	ping = r->proto == IPPROTO_ICMP || r->proto == IPPROTO_ICMPV6;
	if (r->type == SOCK_STREAM && (!r->proto || r->proto == IPPROTO_TCP))
		i = 0;
	else if (r->type == SOCK_DGRAM && !ping)
		i = 2;
	else if (ping)
		i = -1;
	else
		return;	/* SCTP: the sctp_* tests of net_mediation_test */
	if (i >= 0)
		port = self->ports[i + v6];
	ASSERT_EQ(0, cft_mint(self->key, "net:connect", self->e,
			      v6 ? "[::1]/128" : "127.0.0.0/8", cap_id, &t));
	ASSERT_EQ(0, cft_delegate(&self->nl, &t, self->a.pid, 0, false, &rep))
		TH_LOG("%s", rep.ext);
	ASSERT_EQ(0, cft_agent_do(&self->a, "p-op hold %d %d %d %s %d",
				  r->nr, r->type, r->proto, lo, port));
	EXPECT_EQ(0, cft_agent_do(&self->a, "p-send"));
	ASSERT_EQ(0, cft_revoke(&self->nl, cap_id, &rep));
	EXPECT_EQ(EACCES, cft_agent_do(&self->a, "p-send"))
		TH_LOG("%s %d/%d: a send after the revoke", r->name, r->type,
		       r->proto);
	snprintf(target, sizeof(target), v6 ? "[%s]:%d" : "%s:%d", lo, port);
	cft_check_denial(_metadata, self->audit, self->a.pid, self->e,
			 "revoked", "net:connect", target, cap_id);
}

/* one row, tried as it says; true when the kernel offers it */
static bool check_row(struct __test_metadata *_metadata,
		      FIXTURE_DATA(proto) *self, const struct prow *r,
		      uint64_t cap_id)
{
	int kernel, bound, open;

	/* the kernel's own answer, to an unbound task */
	kernel = try_socket(r->nr, r->type, r->proto);
	bound = cft_agent_do(&self->a, "p-sock %d %d %d", r->nr, r->type,
			     r->proto);
	open = cft_agent_do(&self->o, "p-sock %d %d %d", r->nr, r->type,
			    r->proto);
	TH_LOG("%-13s %2d %d/%-3d %-8s kernel: %s, bound: %s", r->name, r->nr,
	       r->type, r->proto, outcome_name(r->out),
	       kernel ? strerror(kernel) : "created",
	       bound ? strerror(bound) : "created");
	EXPECT_EQ(kernel, open) TH_LOG("%s %d/%d: an all-open epoch changes the kernel's answer",
				       r->name, r->type, r->proto);
	if (r->out == P_REFUSED) {
		EXPECT_EQ(EACCES, bound) TH_LOG("%s %d/%d is not refused",
						r->name, r->type, r->proto);
		if (bound == EACCES)
			cft_check_denial(_metadata, self->audit, self->a.pid,
					 self->e, "bypass", "net:connect",
					 r->target, 0);
		return !kernel;
	}
	EXPECT_EQ(kernel, bound) TH_LOG("%s %d/%d: the bound task's answer is not the kernel's",
					r->name, r->type, r->proto);
	if (r->out == P_MEDIATED && !kernel && !bound)
		check_mediated(_metadata, self, r, cap_id);
	return !kernel;
}

/*
 * Every family number below AF_MAX has a row, and each row that is not
 * AF_INET or AF_INET6 holds on this kernel; AF_MAX and above get the
 * kernel's EAFNOSUPPORT.
 */
TEST_F(proto, every_family_is_mediated_or_refused)
{
	bool seen[PROTO_AF_MAX] = { false };
	int i, nr, offered = 0, bad = 0;

	for (i = 0; i < self->inv.n; i++) {
		const struct prow *r = &self->inv.r[i];

		ASSERT_LE(0, r->nr);
		ASSERT_GT(PROTO_AF_MAX, r->nr) TH_LOG("%s", r->name);
		seen[r->nr] = true;
		if (ip_family(r->nr))
			continue;
		/*
		 * a vsock socket is made as for an unbound task whatever the
		 * net classes say; its peers are vsock:connect's (vsock_test)
		 */
		if (r->out == P_VSOCK) {
			struct prow v = *r;

			v.out = P_ALLOWED;
			offered += check_row(_metadata, self, &v, 0);
			continue;
		}
		offered += check_row(_metadata, self, r, 0);
	}
	for (nr = 0; nr < PROTO_AF_MAX; nr++) {
		if (!seen[nr]) {
			TH_LOG("family %d is not in the protocol inventory", nr);
			bad++;
		}
	}
	for (nr = PROTO_AF_MAX; nr < 64; nr++)
		EXPECT_EQ(EAFNOSUPPORT, cft_agent_do(&self->a, "p-sock %d %d 0",
						     nr, SOCK_STREAM))
			TH_LOG("family %d at or above AF_MAX (%d) of the inventory: this kernel has more families",
			       nr, PROTO_AF_MAX);
	TH_LOG("%d families, %d of them offered by this kernel", PROTO_AF_MAX,
	       offered);
	EXPECT_EQ(0, bad);
}

/* Every AF_INET and AF_INET6 row holds on this kernel. */
TEST_F(proto, every_ip_protocol_is_mediated_or_refused)
{
	int i, rows = 0, offered = 0;

	for (i = 0; i < self->inv.n; i++) {
		const struct prow *r = &self->inv.r[i];

		if (!ip_family(r->nr))
			continue;
		rows++;
		offered += check_row(_metadata, self, r, 0x7c00 + i);
	}
	TH_LOG("%d AF_INET/AF_INET6 rows, %d offered by this kernel", rows,
	       offered);
	EXPECT_LT(20, rows);
}

/*
 * Every protocol the kernel has registered (/proc/net/protocols: with the
 * stock modules of the VM run loaded) is named by a row.
 */
TEST_F(proto, every_kernel_protocol_has_a_row)
{
	char line[512], name[64], key[80];
	int i, n = 0, bad = 0;
	FILE *f = fopen("/proc/net/protocols", "r");

	ASSERT_NE(NULL, f);
	/* the header line */
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s", name) != 1)
			continue;
		n++;
		snprintf(key, sizeof(key), ",%s,", name);
		for (i = 0; i < self->inv.n; i++)
			if (strstr(self->inv.r[i].kp, key))
				break;
		if (i == self->inv.n) {
			TH_LOG("protocol %s of this kernel is not in the protocol inventory",
			       name);
			bad++;
		}
	}
	fclose(f);
	TH_LOG("%d protocols registered", n);
	EXPECT_LT(10, n);
	EXPECT_EQ(0, bad);
}

CFT_MAIN
