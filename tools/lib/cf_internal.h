/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libcapfence internals shared between its source files; not installed and
 * not part of the library's interface.
 */
#ifndef CF_INTERNAL_H
#define CF_INTERNAL_H

#include "libcapfence.h"

/*
 * Write one error line for the caller (libcapfence.h conventions): control
 * bytes echoed from the input become '?', so the line stays one line.
 */
void cf_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* HMAC-SHA256 of n canonical body bytes under k (the key's keyed state). */
void cf_mac_body(const struct cf_key *k, const uint8_t *body, size_t n,
		 uint8_t mac[CAPFENCE_MAC_LEN]);

/* SPEC §4 rows 3-4 for a token already known to be authentic. */
enum capfence_reason cf_decide_authentic(const struct cf_token *t,
					 const struct cf_epoch *receiver);

#endif /* CF_INTERNAL_H */
