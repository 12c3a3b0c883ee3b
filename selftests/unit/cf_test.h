/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libcapfence host unit tests. The kselftest harness
 * runs every TEST in a child that leaves with _exit(), which skips
 * LeakSanitizer's atexit check: CF_NO_LEAKS() runs it explicitly.
 * Include this instead of kselftest_harness.h.
 */
#ifndef CF_TEST_H
#define CF_TEST_H

#include <ctype.h>
#include <string.h>

/*
 * The harness's generated wrappers have unused parameters; the tests are
 * built with -Wextra -Werror, so silence exactly that warning.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include <capfence/capfence.h>

#if defined(__SANITIZE_ADDRESS__)
#define CF_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CF_HAVE_LSAN 1
#endif
#endif

#ifdef CF_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#define CF_NO_LEAKS() ASSERT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define CF_NO_LEAKS() do { } while (0)
#endif

/* Decode lower/upper-case hex into out; returns bytes or -1. */
static inline int cf_test_unhex(const char *s, unsigned char *out, size_t max)
{
	size_t n = strlen(s), i;

	if (n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = s[2 * i], lo = s[2 * i + 1];

		if (!isxdigit(hi) || !isxdigit(lo))
			return -1;
		hi = isdigit(hi) ? hi - '0' : (tolower(hi) - 'a' + 10);
		lo = isdigit(lo) ? lo - '0' : (tolower(lo) - 'a' + 10);
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

static inline void cf_test_hex(const unsigned char *p, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
	out[2 * n] = '\0';
}

#endif /* CF_TEST_H */
