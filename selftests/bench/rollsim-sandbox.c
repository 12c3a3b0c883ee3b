// SPDX-License-Identifier: GPL-2.0
/*
 * rollsim-sandbox: the body of one simulated sandbox, kept tiny (statically
 * linked, no allocation) so that thousands fit in a small guest.
 *
 *   rollsim-sandbox idle    wait for EOF on stdin, exit 0 (a parent agent,
 *                           or an idle bound task for the benchmarks)
 *   rollsim-sandbox child   print "ready PID", wait for one line
 *                           "go PORT GRANT_EPOCH NARROW_EPOCH", do the RPC
 *                           (connect to 127.0.0.1:PORT, send a byte, read the
 *                           answer), print "R PID ERRNO", then wait for EOF
 *
 * stdout is a pipe shared by every sandbox of a run: each report is one
 * write(2) shorter than PIPE_BUF, so reports never interleave.
 *
 * The naive mode's seccomp filter (installed by rollsim before execve) can
 * only see syscall arguments, never the sockaddr behind the pointer nor any
 * grant state. The simulated runtime therefore makes the grant visible to it
 * the only way a static filter can see anything: a socket opened under a
 * grant minted for the narrowing epoch (or later) is placed on the reserved
 * descriptor ROLLSIM_GRANT_FD. The narrowed epoch's filter allows connect()
 * only on that descriptor and kills the process on any other (see rollsim.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include "rollsim.h"

static int say(const char *fmt, long a, long b)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), fmt, a, b);

	return write(1, buf, (size_t)n) == n ? 0 : -1;
}

static int read_line(char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(0, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return (int)n;
}

static void wait_eof(void)
{
	char c;

	while (read(0, &c, 1) > 0)
		;
}

static int rpc(int port, unsigned long grant, unsigned long narrow)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 5 };
	char c = 'q';
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return errno;
	if (narrow && grant >= narrow) {
		if (dup2(fd, ROLLSIM_GRANT_FD) < 0)
			return errno;
		close(fd);
		fd = ROLLSIM_GRANT_FD;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		return errno;
	if (write(fd, &c, 1) != 1)
		return errno ? errno : EIO;
	if (read(fd, &c, 1) != 1)
		return errno ? errno : ENODATA;
	close(fd);
	return c == 'a' ? 0 : EPROTO;
}

int main(int argc, char **argv)
{
	unsigned long grant, narrow;
	char line[128];
	int port;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "idle")) {
		if (say("ready %ld\n", (long)getpid(), 0))
			return 1;
		wait_eof();
		return 0;
	}
	if (strcmp(argv[1], "child"))
		return 2;
	/*
	 * One call a container profile refuses (acct(2)), with a pointer it
	 * would fault on: under an epoch's syscall policy the answer is
	 * EACCES and capfence's op=syscall record, never a signal; rollsim counts
	 * these per epoch.
	 */
	if (say("ready %ld %ld\n", (long)getpid(),
		syscall(SYS_acct, (void *)1) < 0 ? errno : 0))
		return 1;
	if (read_line(line, sizeof(line)) < 0)
		return 0;
	if (sscanf(line, "go %d %lu %lu", &port, &grant, &narrow) != 3)
		return 2;
	say("R %ld %ld\n", (long)getpid(), rpc(port, grant, narrow));
	wait_eof();
	return 0;
}
