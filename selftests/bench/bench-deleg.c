// SPDX-License-Identifier: GPL-2.0
/*
 * Delegations per second, three ways, in one VM boot (make bench):
 *
 *   bench-deleg setup            key, epoch, a bound sleeper; prints
 *                                "TOKEN PID" for the other modes
 *   bench-deleg lib TOKEN PID S  libcapfence: one handle, one thread,
 *                                capfence_client_delegate() for S seconds
 *   bench-deleg cli TOKEN PID N  the CLI: N times fork + exec
 *                                `capfence delegate TOKEN --pid PID`
 *
 * Every call delegates the same token to the same bound task: the kernel
 * runs the whole decision (decode, MAC, epoch, class, fence) each time and
 * the holding does not grow, so the three rates differ only by the path.
 * Built against the installed library (pkg-config), like an orchestrator.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <capfence/capfence.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "bench-deleg: %s: %s\n", what, msg);
	return 1;
}

static int setup(void)
{
	const char *rules[] = { "fs:read=token:/etc" };
	char *const argv[] = { "/bin/busybox", "sleep", "3600", NULL };
	char err[CAPFENCE_ERR_MAX], text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	struct capfence_client *c = NULL;
	struct capfence_constraint cs;
	struct capfence_status st;
	struct capfence_key *k = NULL;
	struct capfence_result r;
	struct capfence_epoch e;
	struct capfence_token t;
	pid_t pid;

	if (capfence_client_open(&c, err, sizeof(err)))
		return die("open", err);
	if (capfence_key_generate(4242, &k) ||
	    capfence_client_key_install(c, k, err, sizeof(err)) ||
	    capfence_client_status(c, &st, err, sizeof(err)) ||
	    capfence_epoch_parse_rules(&e, st.max_epoch + 1, rules, 1, err,
				       sizeof(err)) ||
	    capfence_client_epoch_install(c, &e, err, sizeof(err)) ||
	    capfence_constraint_parse("/etc/hostname", &cs, err, sizeof(err)) ||
	    capfence_token_mint(k, CAPFENCE_CLASS_FS_READ, e.epoch_id, &cs, 1,
				0, &t, err, sizeof(err)))
		return die("setup", err);
	if (capfence_client_spawn_bound(c, e.epoch_id, NULL, 0, argv[0], argv,
					NULL, &pid, &r))
		return die("spawn", r.message);
	if (capfence_token_to_text(&t, text, sizeof(text)) < 0)
		return die("setup", "token text");
	/* the first delegation grants; the measured ones find it held */
	if (capfence_client_delegate(c, &t, (uint32_t)pid, 0, 0, &r))
		return die("delegate", r.message);
	printf("%s %d\n", text, (int)pid);
	capfence_key_free(k);
	capfence_client_close(c);
	return 0;
}

static int lib(const char *text, uint32_t pid, double secs)
{
	struct capfence_client *c = NULL;
	char err[CAPFENCE_ERR_MAX];
	struct capfence_result r;
	struct capfence_token t;
	double t0, t1;
	long n = 0;

	if (capfence_token_from_text(text, &t, err, sizeof(err)))
		return die("token", err);
	if (capfence_client_open(&c, err, sizeof(err)))
		return die("open", err);
	t0 = now();
	do {
		int i;

		for (i = 0; i < 100; i++, n++)
			if (capfence_client_delegate(c, &t, pid, 0, 0, &r))
				return die("delegate", r.message);
		t1 = now();
	} while (t1 - t0 < secs);
	capfence_client_close(c);
	printf("rate lib %.0f\n", (double)n / (t1 - t0));
	printf("# lib: %ld delegations in %.2f s, one handle, one thread\n", n,
	       t1 - t0);
	return 0;
}

static int cli(const char *text, const char *pid, long n)
{
	char *argv[] = { "capfence", "delegate", (char *)text, "--pid",
			 (char *)pid, NULL };
	double t0, t1;
	long i;

	t0 = now();
	for (i = 0; i < n; i++) {
		int st;
		pid_t p = fork();

		if (p < 0)
			return die("fork", strerror(errno));
		if (!p) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 1);
			execvp(argv[0], argv);
			_exit(127);
		}
		if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return die("capfence delegate", "failed");
	}
	t1 = now();
	printf("rate cli %.0f\n", (double)n / (t1 - t0));
	printf("# cli: %ld `capfence delegate` processes in %.2f s\n", n, t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "setup"))
		return setup();
	if (argc == 5 && !strcmp(argv[1], "lib"))
		return lib(argv[2], (uint32_t)atoi(argv[3]), atof(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "cli"))
		return cli(argv[2], argv[3], atol(argv[4]));
	fprintf(stderr, "usage: bench-deleg setup | lib TOKEN PID SECONDS | cli TOKEN PID N\n");
	return 2;
}
