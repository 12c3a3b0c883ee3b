/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared bits of the libFuzzer targets: a NUL-terminated copy of the input
 * and an invariant check that aborts (libFuzzer then keeps the input).
 */
#ifndef CF_FUZZ_H
#define CF_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <capfence/capfence.h>

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "invariant failed: %s (%s:%d)\n",	\
			#cond, __FILE__, __LINE__);			\
		abort();						\
	}								\
} while (0)

/* A heap copy with a NUL at the end: ASan sees any read past the input. */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * A check tagged with a known, reported and still unfixed bug is skipped
 * while fuzzing when run-fuzz lists its tag in CF_FUZZ_KNOWN (its committed
 * reproducer fails on its own); fuzzing goes on looking for other bugs.
 */
static inline int fuzz_known(const char *tag)
{
	const char *k = getenv("CF_FUZZ_KNOWN");

	return k && strstr(k, tag);
}

/*
 * The error is one NUL-terminated line within its buffer (libcapfence.h:
 * "write one line, without a trailing newline"), set on failure.
 */
static inline void fuzz_check_err(const char *err, size_t len, int ret)
{
	FUZZ_ASSERT(memchr(err, '\0', len) != NULL);
	if (!fuzz_known("err-newline"))
		FUZZ_ASSERT(!strpbrk(err, "\n\r"));
	if (ret < 0)
		FUZZ_ASSERT(err[0] != '\0');
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
