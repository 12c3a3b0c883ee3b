/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcapfence's test hooks: functions the library exports for its own test
 * programs (selftests/) and keeps exporting for binaries linked against an
 * earlier release, but that are no part of its interface. Not installed;
 * an orchestrator has no use for them.
 */
#ifndef CAPFENCE_TESTING_H
#define CAPFENCE_TESTING_H

#include <capfence/capfence.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The socket's fd of a client (since 1.0; in <capfence/capfence.h> until
 * 1.3), for tests that send malformed frames or poll it; never close it.
 */
int capfence_client_fd(const struct capfence_client *c);

#ifdef __cplusplus
}
#endif

#endif /* CAPFENCE_TESTING_H */
