// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: classes, reasons, constraints, rules and epochs. Pure
 * parsing and set logic; no crypto and no kernel.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <capfence/capfence.h>
#include "cf_internal.h"

void capfence__seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* messages are one line: input echoed into them must not break it */
	for (; *err; err++)
		if ((unsigned char)*err < 0x20 || *err == 0x7f)
			*err = '?';
}

/* ---- classes ------------------------------------------------------------- */

/*
 * The class registry: each class's name, constraint kind, and the system
 * calls (x86_64 names) that exercise it. An epoch whose syscall policy
 * denies one of them while it grants the class is refused at install
 * (cf_seccomp.c): the capability graph would say yes and the syscall
 * policy no.
 */
/*
 * io_uring is not among them: its connect and sends reach the same LSM
 * hooks as the calls, and a profile may refuse io_uring, as the engines'
 * default profiles do.
 */
static const char *const sys_net_connect[] = {
	"connect", "sendto", "sendmsg", "sendmmsg", NULL
};
static const char *const sys_net_bind[] = { "bind", "listen", NULL };
static const char *const sys_fs_read[] = { "open", "openat", "openat2", NULL };
static const char *const sys_fs_write[] = {
	"open", "openat", "openat2", "creat", "truncate", "ftruncate",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink",
	"symlinkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir",
	"mknod", "mknodat", "chmod", "fchmod", "fchmodat", "chown", "fchown",
	"lchown", "fchownat", "setxattr", "lsetxattr", "fsetxattr",
	"removexattr", "lremovexattr", "fremovexattr", NULL
};

static const struct {
	const char *name;
	bool net;
	const char *const *syscalls;
	uint8_t family;		/* net: CAPFENCE_FAMILY_VSOCK, or 0 for 4 and 6 */
} classes[] = {
	[CAPFENCE_CLASS_NET_CONNECT]	= { "net:connect", true, sys_net_connect },
	[CAPFENCE_CLASS_NET_BIND]	= { "net:bind", true, sys_net_bind },
	[CAPFENCE_CLASS_FS_READ]	= { "fs:read", false, sys_fs_read },
	[CAPFENCE_CLASS_FS_WRITE]	= { "fs:write", false, sys_fs_write },
	[CAPFENCE_CLASS_VSOCK_CONNECT]	= { "vsock:connect", true, sys_net_connect,
					    CAPFENCE_FAMILY_VSOCK },
};

_Static_assert(sizeof(classes) / sizeof(classes[0]) == CAPFENCE_CLASS_MAX + 1,
	       "every uapi class needs a name");
_Static_assert(CAPFENCE_CLASS_MAX < CAPFENCE_CLASS_SLOTS,
	       "a class beyond CAPFENCE_CLASS_SLOTS changes the size of struct "
	       "capfence_epoch: raise the slots under a new symbol version");

unsigned int capfence_class_count(void)
{
	return CAPFENCE_CLASS_MAX;
}

size_t capfence_struct_size(const char *name)
{
	static const struct {
		const char *name;
		size_t size;
	} sizes[] = {
#define CF_SIZE(t) { #t, sizeof(struct t) }
		CF_SIZE(capfence_net_range),
		CF_SIZE(capfence_constraint),
		CF_SIZE(capfence_rule),
		CF_SIZE(capfence_token),
		CF_SIZE(capfence_verifier_stats),
		CF_SIZE(capfence_status),
		CF_SIZE(capfence_result),
		CF_SIZE(capfence_seccomp_info),
		CF_SIZE(capfence_cap_info),
		CF_SIZE(capfence_task_info),
		CF_SIZE(capfence_fleet_status),
		CF_SIZE(capfence_sandbox_info),
		CF_SIZE(capfence_event_info),
		CF_SIZE(capfence_change_opts),
		CF_SIZE(capfence_seccomp_opts),
		CF_SIZE(capfence_learn_opts),
		CF_SIZE(capfence_learn_stats),
#if CAPFENCE_API == 2
		/* the 2 interface's options; its epochs have no size */
		CF_SIZE(capfence_delegate_opts),
		CF_SIZE(capfence_bind_opts),
		CF_SIZE(capfence_fleet_set_opts),
#else
		CF_SIZE(capfence_epoch),
		CF_SIZE(capfence_epoch_info),
		CF_SIZE(capfence_fleet_set),
#endif
#undef CF_SIZE
	};
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].name, name))
			return sizes[i].size;
	return 0;
}

const char *const *capfence__class_syscalls(int class_id)
{
	static const char *const none[] = { NULL };

	if (class_id <= CAPFENCE_CLASS_NONE || class_id > CAPFENCE_CLASS_MAX)
		return none;
	return classes[class_id].syscalls;
}

bool capfence_class_valid(int class_id)
{
	return class_id > CAPFENCE_CLASS_NONE && class_id <= CAPFENCE_CLASS_MAX;
}

int capfence_class_from_name(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 1; i <= CAPFENCE_CLASS_MAX; i++)
		if (!strcmp(classes[i].name, name))
			return i;
	return -EINVAL;
}

const char *capfence_class_name(int class_id)
{
	return capfence_class_valid(class_id) ? classes[class_id].name : NULL;
}

bool capfence_class_is_net(int class_id)
{
	return capfence_class_valid(class_id) && classes[class_id].net;
}

const char *capfence__class_misfit(int class_id,
				   const struct capfence_constraint *c)
{
	bool vsock = capfence_class_valid(class_id) &&
		     classes[class_id].family == CAPFENCE_FAMILY_VSOCK;

	if (capfence_class_is_net(class_id) != (c->kind == CAPFENCE_CONSTRAINT_NET))
		return capfence_class_is_net(class_id) ?
		       (vsock ? "CID" : "CIDR") : "path";
	if (c->kind == CAPFENCE_CONSTRAINT_NET &&
	    vsock != (c->net.family == CAPFENCE_FAMILY_VSOCK))
		return vsock ? "CID" : "CIDR";
	return NULL;
}

/* ---- reasons ------------------------------------------------------------- */

static const struct {
	const char *name;
	int err;
	int exit;
} reasons[] = {
	[CAPFENCE_R_OK]			= { "ok", 0, 0 },
	[CAPFENCE_R_NO_TASK]		= { "no_task", ESRCH, 8 },
	[CAPFENCE_R_NOT_BOUND]		= { "not_bound", EINVAL, 8 },
	[CAPFENCE_R_FORGED]		= { "forged", EBADMSG, 5 },
	[CAPFENCE_R_EPOCH_MISMATCH]	= { "epoch_mismatch", ESTALE, 3 },
	[CAPFENCE_R_CLASS_DENIED]	= { "class_denied", EACCES, 4 },
	[CAPFENCE_R_REVOKED]		= { "revoked", EKEYREVOKED, 6 },
	[CAPFENCE_R_FENCED]		= { "fenced", EKEYEXPIRED, 7 },
	[CAPFENCE_R_NOT_HELD]		= { "not_held", ENOKEY, 9 },
	/* exercise-only reasons have no CLI exit of their own: access denied */
	[CAPFENCE_R_NO_CAPABILITY]	= { "no_capability", EACCES, 4 },
	[CAPFENCE_R_CONSTRAINT]		= { "constraint", EACCES, 4 },
	[CAPFENCE_R_BYPASS]		= { "bypass", EACCES, 4 },
	[CAPFENCE_R_BORROW]		= { "borrow", EACCES, 4 },
	/* delegation on a host out of touch with its fleet */
	[CAPFENCE_R_FLEET_STALE]	= { "fleet_stale", ENOLINK, 11 },
	/* exec only: the task does not run its epoch's seccomp program */
	[CAPFENCE_R_SECCOMP]		= { "seccomp", EACCES, 4 },
};

_Static_assert(sizeof(reasons) / sizeof(reasons[0]) == CAPFENCE_R_MAX + 1,
	       "every uapi reason needs a name");

static bool reason_valid(int r)
{
	return r >= 0 && r <= CAPFENCE_R_MAX;
}

const char *capfence_reason_name(int reason)
{
	return reason_valid(reason) ? reasons[reason].name : "?";
}

int capfence_reason_from_name(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i <= CAPFENCE_R_MAX; i++)
		if (!strcmp(reasons[i].name, name))
			return i;
	return -EINVAL;
}

int capfence_reason_errno(int reason)
{
	return reason_valid(reason) ? reasons[reason].err : EINVAL;
}

int capfence_reason_exit(int reason)
{
	return reason_valid(reason) ? reasons[reason].exit : 1;
}

/* ---- constraints --------------------------------------------------------- */

/* Inputs echoed in messages are cut to keep the message one short line. */
#define ECHO_MAX	60
#define ECHO_FMT	"%.*s%s"
#define ECHO(s)		(strlen(s) > ECHO_MAX ? ECHO_MAX - 3 : (int)strlen(s)), \
			(s), (strlen(s) > ECHO_MAX ? "..." : "")

static unsigned int family_bits(int family)
{
	return family == 4 || family == CAPFENCE_FAMILY_VSOCK ? 32 :
	       family == 6 ? 128 : 0;
}

/* True iff the first plen bits of a and b agree. */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int plen)
{
	unsigned int full = plen / 8, rem = plen % 8;

	if (memcmp(a, b, full))
		return false;
	if (!rem)
		return true;
	return !((a[full] ^ b[full]) & (uint8_t)(0xff00 >> rem));
}

/* True iff any bit of addr beyond plen (up to bits) is set. */
static bool host_bits_set(const uint8_t *addr, unsigned int plen,
			  unsigned int bits)
{
	unsigned int i = plen / 8;

	/* a byte at a time: this is on the mint and verify paths */
	if (plen % 8 && (addr[i++] & (uint8_t)(0xff >> (plen % 8))))
		return true;
	for (; i < bits / 8; i++)
		if (addr[i])
			return true;
	return false;
}

static void clear_host_bits(uint8_t *addr, unsigned int plen, unsigned int bits)
{
	unsigned int i;

	for (i = plen; i < bits; i++)
		addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

/*
 * Why path p[0..len) is not an absolute normalized path, or NULL if it is.
 * ',' is refused because rules separate constraints with it, so every
 * token constraint can be printed as a rule; control bytes keep audit
 * records and the line-oriented formats unambiguous.
 */
static const char *path_problem(const char *p, size_t len)
{
	size_t i, start;

	if (!len)
		return "empty path";
	if (p[0] != '/')
		return "not an absolute path";
	if (len > CAPFENCE_PATH_MAX)
		return "path longer than 255 bytes";
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (!ch)
			return "NUL byte in path";
		if (ch < 0x20 || ch == 0x7f)
			return "control character in path";
		if (ch == ',')
			return "',' in path";
	}
	if (len == 1)
		return NULL;
	if (p[len - 1] == '/')
		return "trailing '/'";
	/* walk components after each '/' */
	for (start = 1; start <= len; ) {
		size_t end = start;

		while (end < len && p[end] != '/')
			end++;
		if (end == start)
			return "empty component (\"//\")";
		if (end - start == 1 && p[start] == '.')
			return "\".\" component";
		if (end - start == 2 && p[start] == '.' && p[start + 1] == '.')
			return "\"..\" component";
		start = end + 1;
	}
	return NULL;
}

/* Path p admits target (NUL-terminated) on a component boundary. */
static bool path_prefix(const char *p, size_t plen, const char *target)
{
	size_t tlen = strlen(target);

	if (plen == 1 && p[0] == '/')
		return target[0] == '/';
	if (tlen < plen || memcmp(p, target, plen))
		return false;
	return target[plen] == '\0' || target[plen] == '/';
}

/* Strict decimal: digits only, no sign, no leading zero, <= max. */
static int parse_dec(const char *s, size_t len, unsigned long max,
		     unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (!len || len > 10 || (len > 1 && s[0] == '0'))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* Parse "N" or "N-M" into the range; message names the defect. */
static int parse_ports(const char *s, struct capfence_net_range *nr,
		       const char **why)
{
	const char *dash = strchr(s, '-');
	size_t la = dash ? (size_t)(dash - s) : strlen(s);
	unsigned long a = 0, b;
	int ret;

	if (!*s) {
		*why = "empty port after ':'";
		return -EINVAL;
	}
	ret = parse_dec(s, la, 65535, &a);
	b = a;
	if (!ret && dash)
		ret = parse_dec(dash + 1, strlen(dash + 1), 65535, &b);
	if (ret == -ERANGE) {
		*why = "port > 65535";
		return -EINVAL;
	}
	if (ret) {
		*why = "bad port (expected N or N-M, decimal)";
		return -EINVAL;
	}
	if (!a || !b) {
		*why = "port 0";
		return -EINVAL;
	}
	if (a > b) {
		*why = "port range reversed";
		return -EINVAL;
	}
	nr->port_min = (uint16_t)a;
	nr->port_max = (uint16_t)b;
	return 0;
}

/*
 * "cid:C", "cid:C:PORT", "cid:C:N-M", C a decimal CID or "any" (prefix 0).
 * VMADDR_CID_ANY (4294967295) is not a CID a peer has: "cid:any" says it.
 */
static int parse_vsock(const char *s, struct capfence_constraint *c,
		       char *err, size_t errlen)
{
	struct capfence_net_range *nr = &c->net;
	const char *p = s + 4, *why = NULL;
	size_t clen = strcspn(p, ":");
	unsigned long cid = 0;
	uint32_t be;
	int ret;

	memset(nr, 0, sizeof(*nr));
	nr->family = CAPFENCE_FAMILY_VSOCK;
	nr->port_max = 65535;
	if (clen == 3 && !memcmp(p, "any", 3)) {
		nr->prefix_len = 0;
	} else {
		ret = parse_dec(p, clen, 0xfffffffeUL, &cid);
		if (ret == -ERANGE) {
			why = "CID > 4294967294 (for any CID: cid:any)";
			goto bad;
		}
		if (ret) {
			why = "bad CID (expected a decimal number or any)";
			goto bad;
		}
		nr->prefix_len = 32;
		be = htonl((uint32_t)cid);
		memcpy(nr->addr, &be, 4);
	}
	p += clen;
	if (*p == ':' && parse_ports(p + 1, nr, &why))
		goto bad;
	c->kind = CAPFENCE_CONSTRAINT_NET;
	return 0;
bad:
	capfence__seterr(err, errlen, "bad constraint \"" ECHO_FMT "\": %s", ECHO(s), why);
	return -EINVAL;
}

static int parse_net(const char *s, struct capfence_constraint *c,
		     char *err, size_t errlen)
{
	struct capfence_net_range *nr = &c->net;
	char abuf[INET6_ADDRSTRLEN + 1];
	const char *p, *aend, *why = NULL;
	unsigned int bits;
	size_t alen;
	bool v6;

	if (s[0] == '[') {
		aend = strchr(s, ']');
		if (!aend) {
			why = "missing ']'";
			goto bad;
		}
		p = s + 1;
		alen = (size_t)(aend - p);
		v6 = true;
		aend++;
	} else {
		size_t upto = strcspn(s, "/");

		const char *colon = memchr(s, ':', upto);

		p = s;
		/* every IPv6 address has two ':'; one is an IPv4 port */
		v6 = colon && memchr(colon + 1, ':', upto - (size_t)(colon - s) - 1);
		/* unbracketed IPv6 cannot carry a port: every ':' is address */
		alen = v6 ? upto : strcspn(s, "/:");
		aend = s + alen;
	}
	if (alen >= sizeof(abuf)) {
		why = "not an IPv4/IPv6 address or absolute path";
		goto bad;
	}
	memcpy(abuf, p, alen);
	abuf[alen] = '\0';
	memset(nr, 0, sizeof(*nr));
	if (inet_pton(v6 ? AF_INET6 : AF_INET, abuf, nr->addr) != 1) {
		why = "not an IPv4/IPv6 address or absolute path";
		goto bad;
	}
	nr->family = v6 ? 6 : 4;
	bits = family_bits(nr->family);
	nr->prefix_len = (uint8_t)bits;
	nr->port_min = 0;
	nr->port_max = 65535;

	p = aend;
	if (*p == '/') {
		size_t plen = strcspn(p + 1, ":");
		unsigned long v;
		int ret = parse_dec(p + 1, plen, bits, &v);

		if (ret == -ERANGE) {
			why = v6 ? "prefix length > 128" : "prefix length > 32";
			goto bad;
		}
		if (ret) {
			why = "bad prefix length";
			goto bad;
		}
		nr->prefix_len = (uint8_t)v;
		p += 1 + plen;
	}
	if (*p == ':') {
		if (v6 && s[0] != '[') {
			why = "IPv6 with a port needs brackets: [ADDR]/LEN:PORT";
			goto bad;
		}
		if (parse_ports(p + 1, nr, &why))
			goto bad;
	} else if (*p) {
		why = "unexpected characters after the address";
		goto bad;
	}
	if (host_bits_set(nr->addr, nr->prefix_len, bits)) {
		struct capfence_constraint canon = *c;
		char cbuf[CAPFENCE_CONSTRAINT_TEXT_MAX];

		canon.kind = CAPFENCE_CONSTRAINT_NET;
		clear_host_bits(canon.net.addr, nr->prefix_len, bits);
		capfence_constraint_format(&canon, cbuf, sizeof(cbuf));
		capfence__seterr(err, errlen, "bad constraint \"" ECHO_FMT "\": host bits "
		       "set (did you mean %s?)", ECHO(s), cbuf);
		return -EINVAL;
	}
	c->kind = CAPFENCE_CONSTRAINT_NET;
	return 0;
bad:
	capfence__seterr(err, errlen, "bad constraint \"" ECHO_FMT "\": %s", ECHO(s), why);
	return -EINVAL;
}

int capfence_constraint_parse(const char *s, struct capfence_constraint *c,
			char *err, size_t errlen)
{
	const char *why;
	size_t len;

	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	if (!s || !*s) {
		capfence__seterr(err, errlen, "empty constraint");
		return -EINVAL;
	}
	if (!strncmp(s, "cid:", 4))
		return parse_vsock(s, c, err, errlen);
	if (s[0] != '/')
		return parse_net(s, c, err, errlen);
	len = strlen(s);
	why = path_problem(s, len);
	if (why) {
		capfence__seterr(err, errlen, "bad constraint \"" ECHO_FMT "\": %s",
		       ECHO(s), why);
		return -EINVAL;
	}
	c->kind = CAPFENCE_CONSTRAINT_PATH;
	c->path.len = (uint8_t)len;
	memcpy(c->path.s, s, len + 1);
	return 0;
}

int capfence_constraint_format(const struct capfence_constraint *c, char *buf, size_t len)
{
	const struct capfence_net_range *nr;
	char a[INET6_ADDRSTRLEN], ports[16] = "";
	int n;

	if (!c || !buf)
		return -EINVAL;
	if (c->kind == CAPFENCE_CONSTRAINT_PATH) {
		n = snprintf(buf, len, "%.*s", (int)c->path.len, c->path.s);
	} else if (c->kind == CAPFENCE_CONSTRAINT_NET) {
		nr = &c->net;
		if (nr->family == CAPFENCE_FAMILY_VSOCK) {
			uint32_t be;

			memcpy(&be, nr->addr, 4);
			if (nr->prefix_len)
				snprintf(a, sizeof(a), "%u", ntohl(be));
			else
				snprintf(a, sizeof(a), "any");
		} else if (nr->family != 4 && nr->family != 6) {
			return -EINVAL;
		} else if (!inet_ntop(nr->family == 4 ? AF_INET : AF_INET6,
				      nr->addr, a, sizeof(a))) {
			return -EINVAL;
		}
		if (nr->port_min == nr->port_max)
			snprintf(ports, sizeof(ports), ":%u", nr->port_min);
		else if (nr->port_min != 0 || nr->port_max != 65535)
			snprintf(ports, sizeof(ports), ":%u-%u",
				 nr->port_min, nr->port_max);
		if (nr->family == CAPFENCE_FAMILY_VSOCK)
			n = snprintf(buf, len, "cid:%s%s", a, ports);
		else if (nr->family == 6 && ports[0])
			n = snprintf(buf, len, "[%s]/%u%s", a, nr->prefix_len,
				     ports);
		else
			n = snprintf(buf, len, "%s/%u%s", a, nr->prefix_len,
				     ports);
	} else {
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}

int capfence_constraint_check(const struct capfence_constraint *c, char *err,
			size_t errlen)
{
	const struct capfence_net_range *nr = &c->net;
	const char *why;
	unsigned int bits;

	switch (c->kind) {
	case CAPFENCE_CONSTRAINT_NET:
		bits = family_bits(nr->family);
		if (!bits) {
			capfence__seterr(err, errlen, "net constraint: address family %u "
			       "(expected 4, 6 or %u)", nr->family,
			       CAPFENCE_FAMILY_VSOCK);
			return -EINVAL;
		}
		if (nr->family == CAPFENCE_FAMILY_VSOCK &&
		    nr->prefix_len && nr->prefix_len != 32) {
			capfence__seterr(err, errlen, "vsock constraint: prefix "
			       "length %u (expected 32, or 0 for any CID)",
			       nr->prefix_len);
			return -EINVAL;
		}
		if (nr->family == CAPFENCE_FAMILY_VSOCK && nr->prefix_len &&
		    !memcmp(nr->addr, "\xff\xff\xff\xff", 4)) {
			capfence__seterr(err, errlen, "vsock constraint: CID "
			       "4294967295 (VMADDR_CID_ANY; any CID is prefix 0)");
			return -EINVAL;
		}
		if (nr->prefix_len > bits) {
			capfence__seterr(err, errlen, "net constraint: prefix length %u > %u",
			       nr->prefix_len, bits);
			return -EINVAL;
		}
		if (nr->reserved) {
			capfence__seterr(err, errlen, "net constraint: reserved field is "
			       "not zero");
			return -EINVAL;
		}
		if (nr->family != 6 && host_bits_set(nr->addr, 32, 128)) {
			capfence__seterr(err, errlen, "net constraint: %s with "
			       "non-zero bytes 4..15", nr->family == 4 ?
			       "IPv4 address" : "CID");
			return -EINVAL;
		}
		if (host_bits_set(nr->addr, nr->prefix_len, bits)) {
			capfence__seterr(err, errlen, "net constraint: non-canonical "
			       "CIDR (host bits set)");
			return -EINVAL;
		}
		if (nr->port_min > nr->port_max) {
			capfence__seterr(err, errlen, "net constraint: port range "
			       "%u-%u reversed", nr->port_min, nr->port_max);
			return -EINVAL;
		}
		/* port 0 only as part of "any port", which has no text form */
		if (nr->port_min == 0 && nr->port_max != 65535) {
			capfence__seterr(err, errlen, "net constraint: port range "
			       "0-%u (port 0 is only valid as 0-65535)",
			       nr->port_max);
			return -EINVAL;
		}
		return 0;
	case CAPFENCE_CONSTRAINT_PATH:
		why = path_problem(c->path.s, c->path.len);
		if (!why && strnlen(c->path.s, sizeof(c->path.s)) != c->path.len)
			why = "length does not match the string";
		if (why) {
			capfence__seterr(err, errlen, "path constraint: %s", why);
			return -EINVAL;
		}
		return 0;
	default:
		capfence__seterr(err, errlen, "constraint kind %u unknown", c->kind);
		return -EINVAL;
	}
}

bool capfence_constraint_equal(const struct capfence_constraint *c,
			 const struct capfence_constraint *d)
{
	const struct capfence_net_range *a = &c->net, *b = &d->net;

	if (c->kind != d->kind)
		return false;
	if (c->kind == CAPFENCE_CONSTRAINT_PATH)
		return c->path.len == d->path.len &&
		       !memcmp(c->path.s, d->path.s, c->path.len);
	if (c->kind == CAPFENCE_CONSTRAINT_NET)
		return a->family == b->family &&
		       a->prefix_len == b->prefix_len &&
		       a->port_min == b->port_min &&
		       a->port_max == b->port_max &&
		       !memcmp(a->addr, b->addr, sizeof(a->addr));
	return false;
}

bool capfence_constraint_contains(const struct capfence_constraint *outer,
			    const struct capfence_constraint *inner)
{
	const struct capfence_net_range *o = &outer->net, *i = &inner->net;

	if (outer->kind != inner->kind)
		return false;
	switch (outer->kind) {
	case CAPFENCE_CONSTRAINT_NET:
		return o->family == i->family &&
		       o->prefix_len <= i->prefix_len &&
		       prefix_match(o->addr, i->addr, o->prefix_len) &&
		       o->port_min <= i->port_min &&
		       i->port_max <= o->port_max;
	case CAPFENCE_CONSTRAINT_PATH:
		return inner->path.s[0] == '/' &&
		       path_prefix(outer->path.s, outer->path.len,
				   inner->path.s);
	default:
		return false;
	}
}

bool capfence_constraint_admits_addr(const struct capfence_constraint *c, int family,
			       const uint8_t *addr)
{
	return c->kind == CAPFENCE_CONSTRAINT_NET && addr &&
	       c->net.family == family &&
	       prefix_match(c->net.addr, addr, c->net.prefix_len);
}

bool capfence_constraint_admits_port(const struct capfence_constraint *c,
			       unsigned int port)
{
	return c->kind == CAPFENCE_CONSTRAINT_NET &&
	       port >= c->net.port_min && port <= c->net.port_max;
}

bool capfence_constraint_admits_path(const struct capfence_constraint *c,
			       const char *path)
{
	return c->kind == CAPFENCE_CONSTRAINT_PATH && path &&
	       path_prefix(c->path.s, c->path.len, path);
}

bool capfence_constraints_contained(const struct capfence_constraint *outer, size_t nout,
			      const struct capfence_constraint *inner, size_t nin)
{
	size_t i, j;

	if (!nout)
		return true;
	if (!nin)
		return false;
	/*
	 * Per-constraint containment: an inner range covered only by the
	 * union of several outer ones does not fit. That errs towards
	 * rejecting, never towards admitting.
	 */
	for (i = 0; i < nin; i++) {
		for (j = 0; j < nout; j++)
			if (capfence_constraint_contains(&outer[j], &inner[i]))
				break;
		if (j == nout)
			return false;
	}
	return true;
}

/* ---- rules ----------------------------------------------------------------- */

int capfence_rule_parse(const char *s, struct capfence_rule *r, char *err, size_t errlen)
{
	char cname[32], cbuf[CAPFENCE_CONSTRAINT_TEXT_MAX + 64];
	const char *eq, *kind, *list, *misfit;
	int cls;

	if (!r)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	if (!s || !*s) {
		capfence__seterr(err, errlen, "empty rule");
		return -EINVAL;
	}
	eq = strchr(s, '=');
	if (!eq) {
		capfence__seterr(err, errlen, "bad rule \"" ECHO_FMT "\": expected "
		       "CLASS=open|deny|log|token[:CONSTRAINT,...]", ECHO(s));
		return -EINVAL;
	}
	if ((size_t)(eq - s) >= sizeof(cname)) {
		capfence__seterr(err, errlen, "unknown class \"%.*s...\"", 31, s);
		return -EINVAL;
	}
	memcpy(cname, s, (size_t)(eq - s));
	cname[eq - s] = '\0';
	cls = capfence_class_from_name(cname);
	if (cls < 0) {
		capfence__seterr(err, errlen, "unknown class \"%s\"", cname);
		return -EINVAL;
	}
	r->class_id = (uint8_t)cls;
	kind = eq + 1;
	if (!strcmp(kind, "open")) {
		r->kind = CAPFENCE_RULE_OPEN;
		return 0;
	}
	if (!strcmp(kind, "deny")) {
		r->kind = CAPFENCE_RULE_DENY;
		return 0;
	}
	if (!strcmp(kind, "log")) {
		r->kind = CAPFENCE_RULE_LOG;
		return 0;
	}
	if (strncmp(kind, "token", 5) || (kind[5] && kind[5] != ':')) {
		if (!strncmp(kind, "log:", 4))
			capfence__seterr(err, errlen, "%s: \"log\" takes no constraints",
			       cname);
		else if (!strncmp(kind, "open:", 5) || !strncmp(kind, "deny:", 5))
			capfence__seterr(err, errlen, "%s: \"%.4s\" takes no constraints",
			       cname, kind);
		else
			capfence__seterr(err, errlen, "%s: unknown rule \"" ECHO_FMT
			       "\" (expected open, deny, log or token[:...])",
			       cname, ECHO(kind));
		return -EINVAL;
	}
	r->kind = CAPFENCE_RULE_TOKEN;
	if (!kind[5])
		return 0;
	list = kind + 6;
	if (!*list) {
		capfence__seterr(err, errlen, "%s: empty constraint list after "
		       "\"token:\"", cname);
		return -EINVAL;
	}
	for (;;) {
		size_t len = strcspn(list, ",");
		struct capfence_constraint *c;
		size_t i;

		if (r->n == CAPFENCE_MAX_CONSTRAINTS) {
			capfence__seterr(err, errlen, "%s: more than %d constraints",
			       cname, CAPFENCE_MAX_CONSTRAINTS);
			return -EINVAL;
		}
		if (!len) {
			capfence__seterr(err, errlen, "%s: empty constraint in list",
			       cname);
			return -EINVAL;
		}
		if (len >= sizeof(cbuf)) {
			capfence__seterr(err, errlen, "bad constraint \"%.40s...\": "
			       "too long", list);
			return -EINVAL;
		}
		memcpy(cbuf, list, len);
		cbuf[len] = '\0';
		c = &r->constraints[r->n];
		if (capfence_constraint_parse(cbuf, c, err, errlen))
			return -EINVAL;
		misfit = capfence__class_misfit(cls, c);
		if (misfit) {
			capfence__seterr(err, errlen, "%s takes %s constraints, not "
			       "\"" ECHO_FMT "\"", cname, misfit, ECHO(cbuf));
			return -EINVAL;
		}
		for (i = 0; i < r->n; i++) {
			if (capfence_constraint_equal(&r->constraints[i], c)) {
				capfence__seterr(err, errlen, "%s: duplicate constraint "
				       "\"" ECHO_FMT "\"", cname, ECHO(cbuf));
				return -EINVAL;
			}
		}
		r->n++;
		list += len;
		if (!*list)
			break;
		list++;
	}
	return 0;
}

int capfence_rule_format(const struct capfence_rule *r, char *buf, size_t len)
{
	const char *cname = capfence_class_name(r->class_id);
	size_t off;
	int n, i;

	if (!cname)
		return -EINVAL;
	switch (r->kind) {
	case CAPFENCE_RULE_OPEN:
		n = snprintf(buf, len, "%s=open", cname);
		break;
	case CAPFENCE_RULE_DENY:
		n = snprintf(buf, len, "%s=deny", cname);
		break;
	case CAPFENCE_RULE_TOKEN:
		n = snprintf(buf, len, "%s=token", cname);
		break;
	case CAPFENCE_RULE_LOG:
		n = snprintf(buf, len, "%s=log", cname);
		break;
	default:
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	if (r->kind != CAPFENCE_RULE_TOKEN)
		return n;
	for (i = 0; i < r->n; i++) {
		if (off + 1 >= len)
			return -ENOSPC;
		buf[off++] = i ? ',' : ':';
		buf[off] = '\0';
		n = capfence_constraint_format(&r->constraints[i], buf + off,
					 len - off);
		if (n < 0)
			return n;
		off += (size_t)n;
	}
	return (int)off;
}

bool capfence_rule_narrows(const struct capfence_rule *old_rule,
		     const struct capfence_rule *new_rule)
{
	/* a log rule holds no token: nothing of it to fence */
	if (old_rule->kind == CAPFENCE_RULE_DENY ||
	    old_rule->kind == CAPFENCE_RULE_LOG)
		return false;
	if (new_rule->kind == CAPFENCE_RULE_OPEN)
		return false;
	if (new_rule->kind != CAPFENCE_RULE_TOKEN ||
	    old_rule->kind != CAPFENCE_RULE_TOKEN)
		return true;	/* open -> token/deny, token -> deny, junk */
	return !capfence_constraints_contained(new_rule->constraints, new_rule->n,
					 old_rule->constraints, old_rule->n);
}

bool capfence_rule_admits_constraints(const struct capfence_rule *r,
				const struct capfence_constraint *cs, size_t n)
{
	return r->kind == CAPFENCE_RULE_TOKEN &&
	       capfence_constraints_contained(r->constraints, r->n, cs, n);
}

/* ---- epochs ------------------------------------------------------------ */

void capfence__epoch_init(struct capfence_epoch *e, uint64_t epoch_id)
{
	int i;

	memset(e, 0, sizeof(*e));
	e->epoch_id = epoch_id;
	for (i = 1; i <= CAPFENCE_CLASS_MAX; i++) {
		e->rules[i].class_id = (uint8_t)i;
		e->rules[i].kind = CAPFENCE_RULE_DENY;
	}
}

/* Parse one rule into e, refusing a class seen before. */
static int epoch_add_rule(struct capfence_epoch *e, bool *seen, const char *s,
			  char *err, size_t errlen)
{
	struct capfence_rule r;

	if (capfence_rule_parse(s, &r, err, errlen))
		return -EINVAL;
	if (seen[r.class_id]) {
		capfence__seterr(err, errlen, "duplicate class \"%s\"",
		       capfence_class_name(r.class_id));
		return -EINVAL;
	}
	seen[r.class_id] = true;
	e->rules[r.class_id] = r;
	return 0;
}

int capfence_epoch_parse_rules(struct capfence_epoch *e, uint64_t epoch_id,
			 const char *const *rules, size_t n,
			 char *err, size_t errlen)
{
	bool seen[CAPFENCE_CLASS_MAX + 1] = { false };
	char msg[CAPFENCE_ERR_MAX];
	size_t i;

	capfence__epoch_init(e, epoch_id);
	if (!epoch_id) {
		capfence__seterr(err, errlen, "epoch id must be greater than 0");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (epoch_add_rule(e, seen, rules[i], msg, sizeof(msg))) {
			capfence__seterr(err, errlen, "rule %zu: %s", i + 1, msg);
			return -EINVAL;
		}
	}
	return 0;
}
CF_DEFAULT_VERSION(capfence_epoch_parse_rules, LIBCAPFENCE_1.4);

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int epoch_parse(struct capfence_epoch *e, uint64_t epoch_id, const char *text,
		       const char *label, char *err, size_t errlen)
{
	bool seen[CAPFENCE_CLASS_MAX + 1] = { false };
	uint64_t file_id = 0;
	char msg[CAPFENCE_ERR_MAX];
	const char *p = text;
	unsigned int lineno = 0;
	int ret = 0;

	capfence__epoch_init(e, epoch_id);
	while (*p) {
		size_t len = strcspn(p, "\n");
		char *line, *s, *end, *hash;

		lineno++;
		line = strndup(p, len);
		if (!line)
			return -ENOMEM;
		p += len;
		if (*p)
			p++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (s = line; isspace((unsigned char)*s); s++)
			;
		end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*s) {
			free(line);
			continue;
		}
		if (!strncmp(s, "epoch", 5) &&
		    (!s[5] || isspace((unsigned char)s[5]))) {
			char *v = s + 5;

			while (isspace((unsigned char)*v))
				v++;
			if (file_id) {
				snprintf(msg, sizeof(msg), "second \"epoch\" "
					 "line");
				ret = -EINVAL;
			} else if (parse_u64(v, &file_id) || !file_id) {
				snprintf(msg, sizeof(msg), "bad epoch id "
					 "\"%.40s\" (expected a decimal > 0)", v);
				ret = -EINVAL;
			}
		} else {
			ret = epoch_add_rule(e, seen, s, msg, sizeof(msg));
		}
		free(line);
		if (ret)
			goto fail;
	}
	if (file_id && epoch_id && file_id != epoch_id) {
		snprintf(msg, sizeof(msg), "file is for epoch %" PRIu64
			 ", not %" PRIu64, file_id, epoch_id);
		lineno = 0;
		ret = -EINVAL;
		goto fail;
	}
	if (!file_id && !epoch_id) {
		snprintf(msg, sizeof(msg), "no \"epoch ID\" line and no id "
			 "given");
		lineno = 0;
		ret = -EINVAL;
		goto fail;
	}
	e->epoch_id = epoch_id ? epoch_id : file_id;
	return 0;
fail:
	if (label && lineno)
		capfence__seterr(err, errlen, "%s:%u: %s", label, lineno, msg);
	else if (label)
		capfence__seterr(err, errlen, "%s: %s", label, msg);
	else if (lineno)
		capfence__seterr(err, errlen, "line %u: %s", lineno, msg);
	else
		capfence__seterr(err, errlen, "%s", msg);
	return ret;
}

int capfence_epoch_parse_text(struct capfence_epoch *e, uint64_t epoch_id,
			const char *text, char *err, size_t errlen)
{
	if (!e || !text)
		return -EINVAL;
	return epoch_parse(e, epoch_id, text, NULL, err, errlen);
}
CF_DEFAULT_VERSION(capfence_epoch_parse_text, LIBCAPFENCE_1.4);

#define CF_RULES_FILE_MAX	(1 << 20)

int capfence_epoch_parse_file(struct capfence_epoch *e, uint64_t epoch_id,
			const char *path, char *err, size_t errlen)
{
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t n;
	int fd, ret;

	if (!e || !path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len + 1 >= cap) {
			char *nb;

			if (cap >= CF_RULES_FILE_MAX) {
				capfence__seterr(err, errlen, "%s: larger than 1 MiB",
				       path);
				ret = -EFBIG;
				goto out;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			capfence__seterr(err, errlen, "%s: %s", path, strerror(-ret));
			goto out;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		capfence__seterr(err, errlen, "%s: NUL byte in rules file", path);
		ret = -EINVAL;
		goto out;
	}
	ret = epoch_parse(e, epoch_id, buf, path, err, errlen);
out:
	free(buf);
	close(fd);
	return ret;
}
CF_DEFAULT_VERSION(capfence_epoch_parse_file, LIBCAPFENCE_1.4);

int capfence__epoch_format_classes(const struct capfence_epoch *e, char *buf, size_t len,
				   int max_class)
{
	size_t off;
	int n, i;

	n = snprintf(buf, len, "epoch %" PRIu64 "\n", e->epoch_id);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (i = 1; i <= max_class && i <= CAPFENCE_CLASS_MAX; i++) {
		n = capfence_rule_format(&e->rules[i], buf + off, len - off);
		if (n < 0)
			return n;
		off += (size_t)n;
		if (off + 1 >= len)
			return -ENOSPC;
		buf[off++] = '\n';
		buf[off] = '\0';
	}
	return (int)off;
}

int capfence_epoch_format(const struct capfence_epoch *e, char *buf, size_t len)
{
	return capfence__epoch_format_classes(e, buf, len, CAPFENCE_CLASS_MAX);
}
CF_DEFAULT_VERSION(capfence_epoch_format, LIBCAPFENCE_1.4);

bool capfence_epoch_narrows(const struct capfence_epoch *old_e,
		      const struct capfence_epoch *new_e, int class_id)
{
	int c;

	if (!capfence_class_valid(class_id))
		return false;
	/* a complain epoch (one with a log rule) fences nothing */
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		if (new_e->rules[c].kind == CAPFENCE_RULE_LOG)
			return false;
	return capfence_rule_narrows(&old_e->rules[class_id],
			       &new_e->rules[class_id]);
}
CF_DEFAULT_VERSION(capfence_epoch_narrows, LIBCAPFENCE_1.4);

/* ---- options structs --------------------------------------------------------- */

int capfence__opts(const void *in, void *out, size_t size, size_t known,
		   const char *what, char *err, size_t errlen)
{
	const unsigned char *b = in;
	size_t sz, i;

	memset(out, 0, size);
	if (in) {
		memcpy(&sz, in, sizeof(sz));
		if (sz < sizeof(sz)) {
			capfence__seterr(err, errlen, "%s: sz %zu is less than sizeof(size_t)",
					 what, sz);
			return -EINVAL;
		}
		for (i = known; i < sz; i++) {
			if (b[i]) {
				capfence__seterr(err, errlen,
						 "%s: byte %zu of %zu is not 0: a field this library (%s) does not know",
						 what, i, sz, CAPFENCE_LIB_VERSION_STRING);
				return -EINVAL;
			}
		}
		memcpy(out, in, sz < known ? sz : known);
	}
	memcpy(out, &size, sizeof(size));
	return 0;
}

/* ---- version ---------------------------------------------------------------- */

const char *capfence_version(void)
{
	return CAPFENCE_LIB_VERSION_STRING;
}

unsigned int capfence_version_number(void)
{
	return CAPFENCE_LIB_VERSION;
}
