/* SPDX-License-Identifier: GPL-2.0 */
/*
 * capfenced's metrics listener (--metrics-listen ADDR:PORT): /metrics and
 * /healthz over HTTP/1.x, one thread of its own, so a scrape never holds
 * up the heartbeat that confirms freshness.
 */
#ifndef CAPFENCED_HTTP_H
#define CAPFENCED_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include "cf_metrics.h"

/*
 * Bind and listen on spec (IPv4 "A.B.C.D:PORT" or "[IPv6]:PORT", numeric):
 * the socket, or -1 with a one-line message in err.
 */
int cfd_http_listen(const char *spec, char *err, size_t errlen);

struct cfd_http {
	int fd;				/* from cfd_http_listen() */
	atomic_bool *stop;		/* the agent stops: return */
	/* a copy of the agent's counters, taken under its lock */
	void (*agent)(struct cf_agent_metrics *out);
};

/* The listener's thread: serves until *stop. */
void *cfd_http_main(void *arg);

#endif
