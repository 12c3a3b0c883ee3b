// SPDX-License-Identifier: GPL-2.0
/*
 * The image the fault-injection driver's "exec that binds" runs. It reports
 * what is left of the fail-nth count its launcher armed (0: the failure was
 * injected, during the exec or in this image's start) on fd 3, disarms it,
 * then waits to be killed, so that the driver can read its binding.
 *
 * No libc, raw x86_64 system calls: a failure injected into this image's
 * start must not run a C library's own failure path. A static glibc whose
 * start-up allocation fails waits on its own lock (futex_wait) forever, and
 * the driver then waited out a whole read timeout for each such attempt.
 * Nothing here allocates or locks in user space: a system call that fails
 * returns its error, a page fault that cannot be served kills the image
 * (the driver reads end of file).
 */
#include <asm/unistd.h>
#include <linux/fcntl.h>

static long sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall" : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

void _start(void) __attribute__((noreturn, force_align_arg_pointer));
void _start(void)
{
	static const char path[] = "/proc/thread-self/fail-nth";
	char buf[32];
	long fd, n = -1;

	buf[0] = 'X';
	buf[1] = ' ';
	fd = sys4(__NR_openat, AT_FDCWD, (long)path, O_RDWR, 0);
	if (fd >= 0) {
		n = sys4(__NR_pread64, fd, (long)(buf + 2), 20, 0);
		/* disarmed: nothing after this report is injected */
		if (n > 0 && sys4(__NR_pwrite64, fd, (long)"0", 1, 0) != 1)
			n = -1;
	}
	while (n > 0 && (buf[2 + n - 1] == '\n' || buf[2 + n - 1] == '\0'))
		n--;
	if (n <= 0) {
		buf[2] = '-';
		buf[3] = '1';
		n = 2;
	}
	buf[2 + n] = '\n';
	if (sys4(__NR_write, 3, (long)buf, 3 + n, 0) != 3 + n)
		sys4(__NR_exit, 1, 0, 0, 0);	/* the driver reads end of file */
	for (;;)
		sys4(__NR_pause, 0, 0, 0, 0);
}
