/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The VM test programs' harness: the kernel's kselftest_harness.h, with
 * a time budget each program states and one factor that scales them all,
 * a watchdog that names what a test that runs out of time was waiting
 * for, and a starting state each program establishes itself:
 *
 *	#define CFT_TEST_SECONDS 30	(what each test needs at scale 1)
 *	#include "harness.h"
 *	...
 *	TEST_F_TIMEOUT(fixture, name, 300)	(a test that needs more)
 *	CFT_MAIN
 *
 * Budgets are stated for the stock kernels under TCG on a machine doing
 * nothing else; CAPFENCE_TIMEOUT_SCALE (common.h) multiplies every one at
 * run time. The harness keeps each test's budget in the int "timeout" of
 * its struct __test_metadata (a static object it links into its list
 * from a constructor) and hands it to alarm() in the harness process when
 * the test runs; main() scales it there before the first test, and puts
 * cft_run_test() in front of each test's function, which runs in the
 * test's own process: it arms the watchdog (common.c) for the scaled
 * budget and records how long the test took. The harness's alarm stays
 * armed CFT_GRACE_SECONDS (scaled) later, for a test process that cannot take the
 * watchdog's signal. After the last test, the slowest one is printed with
 * its budget ("# timing: ...").
 */
#ifndef CFT_HARNESS_H
#define CFT_HARNESS_H

#ifndef CFT_TEST_SECONDS
#error "define CFT_TEST_SECONDS (what each test of the program needs at scale 1) before harness.h"
#endif

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "kselftest_harness.h"
#include "common.h"

/* Every test without a TEST_F_TIMEOUT of its own gets the program's. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT CFT_TEST_SECONDS

#define CFT_GRACE_SECONDS 5

struct cft_test {
	struct __test_metadata *t;
	void (*fn)(struct __test_metadata *, struct __fixture_variant_metadata *);
	unsigned int base, secs;
};

static struct cft_test *cft_tests;
static size_t cft_ntests;
static pid_t cft_harness_pid;
/* how long each test took (shared with the tests' processes), -1: no end */
static double *cft_took;

static void cft_run_test(struct __test_metadata *t,
			 struct __fixture_variant_metadata *v)
{
	struct cft_test *c = NULL;
	char name[160];
	size_t i;

	for (i = 0; i < cft_ntests && !c; i++)
		if (cft_tests[i].t == t)
			c = &cft_tests[i];
	if (!c)
		abort();
	snprintf(name, sizeof(name), "%s%s%s.%s", t->fixture->name,
		 v->name[0] ? "." : "", v->name, t->name);
	cft_watchdog_arm(name, c->base, c->secs);
	c->fn(t, v);
	cft_took[c - cft_tests] = cft_watchdog_disarm();
}

static void cft_timing(void)
{
	size_t i, slow = 0;

	if (!cft_ntests || !cft_took || getpid() != cft_harness_pid)
		return;
	for (i = 1; i < cft_ntests; i++)
		if (cft_took[i] * cft_tests[slow].secs >
		    cft_took[slow] * cft_tests[i].secs)
			slow = i;
	if (cft_took[slow] < 0)
		return;
	printf("# timing: the slowest test for its budget, %s, took %.1f s of %u s (%u s x scale %g)\n",
	       cft_tests[slow].t->name, cft_took[slow], cft_tests[slow].secs,
	       cft_tests[slow].base, cft_timeout_scale());
	fflush(stdout);
}

/*
 * Scale every test's budget, put cft_run_test() in front of it, and
 * establish the starting state (common.h); then run the harness.
 */
static inline int cft_harness_run(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t;
	char why[256];
	size_t n = 0, i;
	int err;

	cft_timeout_scale();
	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			n++;
	cft_tests = calloc(n ? n : 1, sizeof(*cft_tests));
	cft_took = mmap(NULL, (n ? n : 1) * sizeof(*cft_took),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!cft_tests || cft_took == MAP_FAILED) {
		fprintf(stderr, "capfence tests: out of memory\n");
		return 2;
	}
	for (f = __fixture_list; f; f = f->next) {
		for (t = f->tests; t; t = t->next) {
			struct cft_test *c = &cft_tests[cft_ntests++];

			c->t = t;
			c->fn = t->fn;
			c->base = (unsigned int)t->timeout;
			c->secs = cft_secs(c->base);
			t->fn = cft_run_test;
			/* room for the watchdog's task dump on a slow kernel */
			t->timeout = (int)(c->secs + cft_secs(CFT_GRACE_SECONDS));
		}
	}
	for (i = 0; i < n; i++)
		cft_took[i] = -1;
	err = cft_establish(why, sizeof(why));
	if (err) {
		ksft_print_header();
		ksft_set_plan(1);
		ksft_test_result_fail("starting state: %s\n", why);
		ksft_exit_fail();
	}
	if (why[0])
		printf("# starting state: %s\n", why);
	cft_harness_pid = getpid();
	atexit(cft_timing);
	return test_harness_run(argc, argv);
}

/* Run the test harness, or act as an agent when exec'd as one. */
#define CFT_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		if (argc > 1 && !strcmp(argv[1], "--agent"))		\
			return cft_agent_main();			\
		return cft_harness_run(argc, argv);			\
	}

#endif
