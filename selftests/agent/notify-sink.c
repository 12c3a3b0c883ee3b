// SPDX-License-Identifier: GPL-2.0
/*
 * notify-sink SOCKET: stands in for systemd's notification socket. Binds
 * an AF_UNIX datagram socket at SOCKET and prints each message received
 * as one line, "MS FIELD FIELD..." (MS: milliseconds since it started,
 * the message's newlines as spaces), until killed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static long long ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	long long t0 = ms();
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: notify-sink SOCKET\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("notify-sink");
		return 1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
		ssize_t i;

		if (n < 0)
			return 1;
		buf[n] = '\0';
		for (i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		printf("%lld %s\n", ms() - t0, buf);
		fflush(stdout);
	}
}
