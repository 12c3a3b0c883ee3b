// SPDX-License-Identifier: GPL-2.0
/*
 * capfence's control plane through its uapi alone: the LSM is active, its
 * generic netlink family resolves at the ABI version of the header, the
 * host's status answers only CAP_MAC_ADMIN, and a command given an
 * attribute it does not take is refused before it acts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/capfence.h>

#include "../kselftest_harness.h"

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[256];
};

static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	int one = 1;

	if (fd >= 0)
		setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	return fd;
}

static void nl_init(struct nl_req *r, __u16 family, __u8 cmd, __u8 version)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = family;
	r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r->g.cmd = cmd;
	r->g.version = version;
}

static void nl_put(struct nl_req *r, __u16 type, const void *data, __u16 len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/*
 * Send @r; the first answer lands in @ans (a message is followed by the
 * ack NLM_F_ACK asked for, read here too). Return: the error of an error
 * answer, 1 for a message, or -errno of the socket.
 */
static int nl_talk(int fd, struct nl_req *r, char *ans, size_t len)
{
	struct nlmsghdr *h = (void *)ans;
	char ack[1024];
	ssize_t n;

	if (send(fd, r, r->n.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, ans, len, 0);
	if (n < (ssize_t)sizeof(*h))
		return n < 0 ? -errno : -EIO;
	if (h->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	n = recv(fd, ack, sizeof(ack), 0);
	if (n < (ssize_t)sizeof(*h))
		return n < 0 ? -errno : -EIO;
	return 1;
}

/* the attribute @type of the genetlink message @h, or NULL */
static struct nlattr *nl_attr(struct nlmsghdr *h, __u16 type)
{
	char *p = (char *)NLMSG_DATA(h) + GENL_HDRLEN;
	char *end = (char *)h + h->nlmsg_len;

	while (p + NLA_HDRLEN <= end) {
		struct nlattr *a = (void *)p;

		if (a->nla_len < NLA_HDRLEN)
			break;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* capfence's family id and version, or 0 */
static __u16 family_id(int fd, __u32 *version)
{
	char ans[4096];
	struct nl_req r;
	struct nlattr *id, *ver;

	nl_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	nl_put(&r, CTRL_ATTR_FAMILY_NAME, CAPFENCE_GENL_NAME,
	       sizeof(CAPFENCE_GENL_NAME));
	if (nl_talk(fd, &r, ans, sizeof(ans)) != 1)
		return 0;
	id = nl_attr((void *)ans, CTRL_ATTR_FAMILY_ID);
	ver = nl_attr((void *)ans, CTRL_ATTR_VERSION);
	if (!id || !ver)
		return 0;
	memcpy(version, (char *)ver + NLA_HDRLEN, sizeof(*version));
	return *(__u16 *)((char *)id + NLA_HDRLEN);
}

FIXTURE(family) {
	int fd;
	__u16 id;
	__u32 version;
};

FIXTURE_SETUP(family)
{
	self->fd = nl_open();
	ASSERT_LE(0, self->fd);
	self->id = family_id(self->fd, &self->version);
	if (!self->id)
		SKIP(return, "no \"%s\" generic netlink family: capfence is not running",
		     CAPFENCE_GENL_NAME);
}

FIXTURE_TEARDOWN(family)
{
	close(self->fd);
}

/* a built-in capfence is in the active LSM list */
TEST(lsm_listed)
{
	char list[512] = "";
	int fd = open("/sys/kernel/security/lsm", O_RDONLY);
	ssize_t n;

	ASSERT_LE(0, fd);
	n = read(fd, list, sizeof(list) - 1);
	close(fd);
	ASSERT_LT(0, n);
	if (!strstr(list, "capfence"))
		SKIP(return, "not among the active LSMs (%s): a module, or not in lsm=",
		     list);
}

TEST_F(family, abi_version)
{
	EXPECT_EQ((__u32)CAPFENCE_GENL_VERSION, self->version);
}

/* the host's status names every tenant's epochs: CAP_MAC_ADMIN only */
TEST_F(family, status_needs_cap_mac_admin)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = {};
	struct nl_req r;
	char ans[4096];
	int status;
	pid_t pid;

	nl_init(&r, self->id, CAPFENCE_CMD_STATUS_GET, CAPFENCE_GENL_VERSION);
	ASSERT_EQ(1, nl_talk(self->fd, &r, ans, sizeof(ans)));
	EXPECT_NE(NULL, nl_attr((void *)ans, CAPFENCE_A_VERSION));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = nl_open();

		if (fd < 0 || syscall(SYS_capset, &h, none))
			_exit(100);
		_exit(-nl_talk(fd, &r, ans, sizeof(ans)) & 0xff);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(EPERM, WEXITSTATUS(status));
}

/*
 * Each command takes only its attributes: a revoke marked dry-run is
 * refused, not carried out as a revoke.
 */
TEST_F(family, stray_attribute_refused)
{
	__u64 cap_id = 0x5e1f7e57ull;
	struct nl_req r;
	char ans[4096];

	nl_init(&r, self->id, CAPFENCE_CMD_REVOKE, CAPFENCE_GENL_VERSION);
	nl_put(&r, CAPFENCE_A_CAP_ID, &cap_id, sizeof(cap_id));
	nl_put(&r, CAPFENCE_A_DRY_RUN, NULL, 0);
	EXPECT_EQ(-EINVAL, nl_talk(self->fd, &r, ans, sizeof(ans)));
}

TEST_HARNESS_MAIN
