// SPDX-License-Identifier: GPL-2.0
/*
 * The image the fault-injection driver's "exec that binds" runs: static, so
 * that little happens between the execve and its first read. It reports
 * what is left of the fail-nth count its launcher armed (0: the failure
 * was injected, during the exec or in this image's start) on fd 3, then
 * waits to be killed, so that the driver can read its binding.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char buf[32] = "-1";
	int fd = open("/proc/thread-self/fail-nth", O_RDWR);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	if (n > 0)
		buf[n] = '\0';
	else
		strcpy(buf, "-1");
	if (fd >= 0 && pwrite(fd, "0", 1, 0) != 1)
		strcpy(buf, "-1");
	buf[strcspn(buf, "\n")] = '\0';
	dprintf(3, "X %s\n", buf);
	for (;;)
		pause();
}
