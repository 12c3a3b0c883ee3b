// SPDX-License-Identifier: GPL-2.0
/*
 * vsock:connect: a bound task's way to a vsock peer (in a guest, the
 * host's services at CID 2) is judged by its epoch's rule and the
 * capabilities it holds, like net:connect. Run over the loopback transport
 * (selftests/vm/run --kmod vsock_loopback), where CID 1 is this guest and,
 * with no guest-to-host transport loaded, CID 2 reaches it too: a peer the
 * grant does not name is refused even where the stack would reach it. Each
 * denial is EACCES with an audit record whose reason, class and target
 * (cid:CID:PORT) are checked, and no agent is ended by a signal.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"
#include "records.h"

#define PORT_IN		1500	/* inside the tokens' range */
#define PORT_OUT	3000	/* inside the rule, outside the tokens */
#define PORT_HIGH	70000	/* above 65535: only "any port" admits it */

/* ---- agent side ---- */

static int held = -1;

static int vsock_socket(int type)
{
	int fd = socket(AF_VSOCK, type, 0);

	/* not EACCES: creating a vsock socket is not mediated */
	return fd < 0 ? -(100 + errno) : fd;
}

static int vsock_connect(int fd, unsigned int cid, unsigned int port)
{
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK, .svm_cid = cid,
				   .svm_port = port };

	return connect(fd, (struct sockaddr *)&svm, sizeof(svm)) ? errno : 0;
}

/* connect a fresh stream socket; keep it as the held one when @keep */
static int v_connect(unsigned int cid, unsigned int port, bool keep)
{
	int fd = vsock_socket(SOCK_STREAM), err;

	if (fd < 0)
		return -fd;
	err = vsock_connect(fd, cid, port);
	if (err || !keep) {
		close(fd);
		return err;
	}
	if (held >= 0)
		close(held);
	held = fd;
	return 0;
}

/* a datagram to @cid:@port on a fresh unconnected socket */
static int v_dgram(unsigned int cid, unsigned int port)
{
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK, .svm_cid = cid,
				   .svm_port = port };
	int fd = vsock_socket(SOCK_DGRAM), err;

	if (fd < 0)
		return -fd;
	err = sendto(fd, "x", 1, 0, (struct sockaddr *)&svm, sizeof(svm)) < 0 ?
	      errno : 0;
	close(fd);
	return err;
}

static int v_use(const char *how)
{
	char c;

	if (held < 0)
		return EBADF;
	if (!strcmp(how, "send"))
		return send(held, "x", 1, MSG_DONTWAIT) < 0 ? errno : 0;
	if (!strcmp(how, "recv")) {
		/*
		 * vsock's loopback transport queues the peer's bytes from a
		 * work item: wait until they are there (a refusal comes from
		 * the hook whatever is queued), then a non-blocking receive
		 */
		struct pollfd p = { .fd = held, .events = POLLIN };

		poll(&p, 1, 2000);
		return recv(held, &c, 1, MSG_DONTWAIT) < 0 ? errno : 0;
	}
	if (!strcmp(how, "write"))
		return write(held, "x", 1) < 0 ? errno : 0;
	if (!strcmp(how, "read"))
		return read(held, &c, 1) < 0 ? errno : 0;
	return EINVAL;
}

int cft_agent_extra(char *cmd)
{
	unsigned int cid, port;
	char how[16];

	if (sscanf(cmd, "v-connect %u %u", &cid, &port) == 2)
		return v_connect(cid, port, false);
	if (sscanf(cmd, "v-hold %u %u", &cid, &port) == 2)
		return v_connect(cid, port, true);
	if (sscanf(cmd, "v-dgram %u %u", &cid, &port) == 2)
		return v_dgram(cid, port);
	if (sscanf(cmd, "v-sock %15s", how) == 1)
		return v_use(how);
	return EINVAL;
}

/* ---- test side ---- */

static int v_listen(unsigned int port)
{
	struct sockaddr_vm svm = { .svm_family = AF_VSOCK,
				   .svm_cid = VMADDR_CID_ANY, .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&svm, sizeof(svm)) || listen(fd, 64)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* the next connection on @lfd (5 s, scaled), or -1 */
static int v_accept(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, cft_ms(5000)) != 1)
		return -1;
	return accept(lfd, NULL, NULL);
}

/*
 * Epochs: e grants vsock:connect by token for CID 1 and CID 2 (any port);
 * deny denies it; omitted names every class but vsock:connect; open leaves
 * it open. Each has the other classes open.
 */
FIXTURE(vsock) {
	struct cft_nl nl;
	struct capfence_key *key;
	uint64_t e, deny, omitted, open;
	struct cft_agent agent;	/* bound to e, holds nothing */
	int in, out;		/* listeners on PORT_IN and PORT_OUT */
	int audit;
};

static const char *const other[] = { "net:connect=open", "net:bind=open",
				      "fs:read=open", "fs:write=open" };

static int install(FIXTURE_DATA(vsock) *self, uint64_t *id, const char *vsock)
{
	const char *rules[5];
	int n = 4;

	memcpy(rules, other, sizeof(other));
	if (vsock)
		rules[n++] = vsock;
	*id = cft_next_epoch(&self->nl);
	return cft_epoch_install(&self->nl, *id, rules, n, NULL, 0);
}

FIXTURE_SETUP(vsock)
{
	int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

	if (fd < 0)
		SKIP(return, "no vsock in this guest (--kmod vsock_loopback)");
	close(fd);
	ASSERT_EQ(0, cft_open(&self->nl));
	self->key = cft_test_key(&self->nl);
	ASSERT_NE(NULL, self->key);
	ASSERT_EQ(0, install(self, &self->deny, "vsock:connect=deny"));
	ASSERT_EQ(0, install(self, &self->omitted, NULL));
	ASSERT_EQ(0, install(self, &self->open, "vsock:connect=open"));
	ASSERT_EQ(0, install(self, &self->e, "vsock:connect=token:cid:1,cid:2"));
	self->in = v_listen(PORT_IN);
	ASSERT_LE(0, self->in);
	self->out = v_listen(PORT_OUT);
	ASSERT_LE(0, self->out);
	self->audit = cft_audit_open();
	ASSERT_LE(0, self->audit);
	ASSERT_EQ(0, cft_agent_spawn(&self->agent, self->e, NULL, 0, NULL));
	ASSERT_TRUE(cft_audit_settle(self->audit, &self->agent, "v-connect 3 1",
				     "target=cid:3:1"));
}

FIXTURE_TEARDOWN(vsock)
{
	if (!self->key)
		return;
	EXPECT_TRUE(cft_agent_stop_clean(&self->agent));
	cft_audit_close(self->audit);
	close(self->in);
	close(self->out);
	capfence_key_free(self->key);
	cft_nl_close(&self->nl);
}

static void give(struct __test_metadata *_metadata, FIXTURE_DATA(vsock) *self,
		 pid_t pid, pid_t from, const char *constraint, uint64_t cap_id,
		 struct capfence_token *t)
{
	struct cft_reply r;

	if (constraint)
		ASSERT_EQ(0, cft_mint(self->key, "vsock:connect", self->e,
				      constraint, cap_id, t));
	ASSERT_EQ(0, cft_delegate(&self->nl, t, pid, from, false, &r))
		TH_LOG("%s", r.ext);
	ASSERT_EQ(0, r.reason) TH_LOG("%s", r.ext);
}

static void denied(struct __test_metadata *_metadata, FIXTURE_DATA(vsock) *self,
		   pid_t pid, uint64_t epoch, const char *reason,
		   const char *target, uint64_t cap_id)
{
	cft_check_denial(_metadata, self->audit, pid, epoch, reason,
			 "vsock:connect", target, cap_id);
}

/* a connection the agent made arrives at @lfd; close it */
static bool arrived(int lfd)
{
	int c = v_accept(lfd);

	if (c < 0)
		return false;
	close(c);
	return true;
}

TEST_F(vsock, connect_within_the_grant_only)
{
	struct capfence_token t;
	pid_t a = self->agent.pid;

	/* inside the rule, no capability held */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_IN));
	denied(_metadata, self, a, self->e, "no_capability", "cid:1:1500", 0);
	/* outside the rule: CID 3 */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 3 %u", PORT_IN));
	denied(_metadata, self, a, self->e, "constraint", "cid:3:1500", 0);
	give(_metadata, self, a, 0, "cid:1:1024-2048", 0x9100, &t);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_IN));
	EXPECT_TRUE(arrived(self->in));
	/* wrong port: the listener is there, the grant does not name it */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_OUT));
	denied(_metadata, self, a, self->e, "constraint", "cid:1:3000", 0x9100);
	/* wrong CID: CID 2 reaches the same listener over loopback */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 2 %u", PORT_IN));
	denied(_metadata, self, a, self->e, "constraint", "cid:2:1500", 0x9100);
	/* a port above 65535 is not in 1024-2048 */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_HIGH));
	denied(_metadata, self, a, self->e, "constraint", "cid:1:70000", 0x9100);
	/* no connection was made by a refused connect */
	EXPECT_EQ(-1, v_accept(self->out));
	/*
	 * No datagrams without a datagram transport (only VMCI has one): the
	 * kernel's own answer at socket(), not capfence's
	 */
	EXPECT_EQ(100 + ENODEV, cft_agent_do(&self->agent, "v-dgram 1 %u",
					     PORT_OUT));
	/* a token for CID 1 at any port admits a port above 65535: the
	 * stack answers (nobody listens there)
	 */
	give(_metadata, self, a, 0, "cid:1", 0x9101, &t);
	EXPECT_EQ(ECONNRESET, cft_agent_do(&self->agent, "v-connect 1 %u",
					   PORT_HIGH));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_OUT));
	EXPECT_TRUE(arrived(self->out));
}

TEST_F(vsock, deny_omitted_and_open_epochs)
{
	struct cft_agent d, o, p;

	ASSERT_EQ(0, cft_agent_spawn(&d, self->deny, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&o, self->omitted, NULL, 0, NULL));
	ASSERT_EQ(0, cft_agent_spawn(&p, self->open, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&d, "v-connect 1 %u", PORT_IN));
	denied(_metadata, self, d.pid, self->deny, "class_denied", "cid:1:1500", 0);
	/* an epoch written before the class denies it */
	EXPECT_EQ(EACCES, cft_agent_do(&o, "v-connect 2 %u", PORT_IN));
	denied(_metadata, self, o.pid, self->omitted, "class_denied",
	       "cid:2:1500", 0);
	EXPECT_EQ(-1, v_accept(self->in));
	/* an open rule: nothing is judged */
	EXPECT_EQ(0, cft_agent_do(&p, "v-connect 2 %u", PORT_IN));
	EXPECT_TRUE(arrived(self->in));
	EXPECT_TRUE(cft_agent_stop_clean(&d));
	EXPECT_TRUE(cft_agent_stop_clean(&o));
	EXPECT_TRUE(cft_agent_stop_clean(&p));
}

TEST_F(vsock, delegated_token_is_exercised)
{
	struct capfence_token t;
	struct cft_agent b;

	ASSERT_EQ(0, cft_agent_spawn(&b, self->e, NULL, 0, NULL));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "v-connect 2 %u", PORT_IN));
	denied(_metadata, self, b.pid, self->e, "no_capability", "cid:2:1500", 0);
	/* the orchestrator gives it to the agent, the agent to b */
	give(_metadata, self, self->agent.pid, 0, "cid:2:1500", 0x9200, &t);
	give(_metadata, self, b.pid, self->agent.pid, NULL, 0, &t);
	EXPECT_EQ(0, cft_agent_do(&b, "v-connect 2 %u", PORT_IN));
	EXPECT_TRUE(arrived(self->in));
	EXPECT_EQ(EACCES, cft_agent_do(&b, "v-connect 2 %u", PORT_OUT));
	denied(_metadata, self, b.pid, self->e, "constraint", "cid:2:3000", 0x9200);
	EXPECT_TRUE(cft_agent_stop_clean(&b));
}

TEST_F(vsock, established_connection_after_revoke)
{
	struct capfence_token t;
	struct cft_reply r;
	pid_t a = self->agent.pid;
	int c;

	give(_metadata, self, a, 0, "cid:1:1024-2048", 0x9300, &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "v-hold 1 %u", PORT_IN));
	c = v_accept(self->in);
	ASSERT_LE(0, c);
	ASSERT_EQ(2, write(c, "yy", 2));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "v-sock send"));
	EXPECT_EQ(0, cft_agent_do(&self->agent, "v-sock recv"));
	ASSERT_EQ(0, cft_revoke(&self->nl, 0x9300, &r));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock send"));
	denied(_metadata, self, a, self->e, "revoked", "cid:1:1500", 0x9300);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock recv"));
	denied(_metadata, self, a, self->e, "revoked", "cid:1:1500", 0x9300);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock write"));
	denied(_metadata, self, a, self->e, "revoked", "cid:1:1500", 0x9300);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock read"));
	denied(_metadata, self, a, self->e, "revoked", "cid:1:1500", 0x9300);
	/* and a new connection */
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_IN));
	denied(_metadata, self, a, self->e, "revoked", "cid:1:1500", 0x9300);
	close(c);
}

TEST_F(vsock, established_connection_after_fence)
{
	const char *narrow = "vsock:connect=token:cid:1:1024-1100";
	struct capfence_token t;
	uint64_t e2;
	pid_t a = self->agent.pid;
	int c;

	give(_metadata, self, a, 0, "cid:1:1024-2048", 0x9400, &t);
	ASSERT_EQ(0, cft_agent_do(&self->agent, "v-hold 1 %u", PORT_IN));
	c = v_accept(self->in);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, cft_agent_do(&self->agent, "v-sock send"));
	/* a narrowing epoch fences the tokens of the class minted before */
	ASSERT_EQ(0, install(self, &e2, narrow));
	ASSERT_EQ(0, cft_epoch_activate(&self->nl, e2));
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock send"));
	denied(_metadata, self, a, self->e, "fenced", "cid:1:1500", 0x9400);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-sock recv"));
	denied(_metadata, self, a, self->e, "fenced", "cid:1:1500", 0x9400);
	EXPECT_EQ(EACCES, cft_agent_do(&self->agent, "v-connect 1 %u", PORT_IN));
	denied(_metadata, self, a, self->e, "fenced", "cid:1:1500", 0x9400);
	close(c);
}

CFT_MAIN
