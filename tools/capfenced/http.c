// SPDX-License-Identifier: GPL-2.0
/*
 * capfenced's metrics listener: a single-threaded poll() loop of
 * non-blocking sockets in a thread of its own. A request's header is at
 * most CF_HTTP_REQ_MAX bytes and a connection lives at most CONN_MS; at
 * most MAX_CONNS are served at once (the rest wait in the backlog). Every
 * response closes its connection: the write side first, then what the
 * peer still sends is read and dropped, so that a refused request's
 * unread bytes do not turn the close into a reset that loses the answer. Each scrape asks the module on a
 * netlink handle of its own, never the heartbeat's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "http.h"

#define MAX_CONNS	16
#define CONN_MS		5000
#define POLL_MS		200

struct conn {
	int fd;
	int64_t deadline;
	size_t in_len;
	char in[CF_HTTP_REQ_MAX];
	char *out;			/* the response, once there is one */
	size_t out_len, out_off;
	bool draining;			/* sent: reading what the peer still sends */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cfd_http_listen(const char *spec, char *err, size_t errlen)
{
	static const char expect[] =
		"expected ADDR:PORT with a numeric address (127.0.0.1:9464, [::1]:9464)";
	struct addrinfo hints, *ai = NULL;
	char host[64], *end;
	const char *colon = strrchr(spec, ':'), *h = spec;
	size_t hl;
	unsigned long port;
	int fd, one = 1, ret;

	if (!colon || colon == spec) {
		snprintf(err, errlen, "--metrics-listen '%.80s': %s", spec, expect);
		return -1;
	}
	hl = (size_t)(colon - spec);
	if (spec[0] == '[') {	/* [IPv6] */
		if (hl < 3 || spec[hl - 1] != ']') {
			snprintf(err, errlen, "--metrics-listen '%.80s': %s", spec, expect);
			return -1;
		}
		h = spec + 1;
		hl -= 2;
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || colon[1] == '-' || colon[1] == '+' || port < 1 ||
	    port > 65535) {
		snprintf(err, errlen, "--metrics-listen '%.80s': the port must be a number from 1 to 65535",
			 spec);
		return -1;
	}
	if (hl >= sizeof(host)) {
		snprintf(err, errlen, "--metrics-listen '%.80s': %s", spec, expect);
		return -1;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_family = spec[0] == '[' ? AF_INET6 : AF_INET;
	ret = getaddrinfo(host, colon + 1, &hints, &ai);
	if (ret || !ai) {
		snprintf(err, errlen, "--metrics-listen '%.80s': %s", spec, expect);
		if (ai)
			freeaddrinfo(ai);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (ai->ai_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		snprintf(err, errlen, "--metrics-listen %.80s: %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* the whole response: status line, headers, body (none for HEAD) */
static void respond(struct conn *c, int status, const char *type, const char *body,
		    size_t body_len, bool head)
{
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!f) {
		c->out = NULL;
		return;
	}
	fprintf(f, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		"Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
		status, cf_http_reason(status), type, body_len,
		status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (!head)
		fwrite(body, 1, body_len, f);
	if (fclose(f)) {
		free(c->out);
		c->out = NULL;
	}
}

static void respond_text(struct conn *c, int status, const char *line, bool head)
{
	char body[256];
	int n = snprintf(body, sizeof(body), "%s\n", line);

	respond(c, status, "text/plain; charset=utf-8", body,
		n < (int)sizeof(body) ? (size_t)n : sizeof(body) - 1, head);
}

static void answer(struct cfd_http *h, struct conn *c, int status, int route, bool head)
{
	struct cf_metrics_module m;
	struct cf_agent_metrics a;
	char err[CAPFENCE_ERR_MAX] = "", why[256];
	char *text;
	size_t len;
	int ret;

	if (status != 200) {
		respond_text(c, status, cf_http_reason(status), head);
		return;
	}
	switch (route) {
	case CF_HTTP_INDEX:
		respond_text(c, 200, "capfenced: /metrics (Prometheus), /healthz", head);
		return;
	case CF_HTTP_METRICS:
	case CF_HTTP_HEALTHZ:
		break;
	default:
		respond_text(c, 404, "not found: /metrics or /healthz", head);
		return;
	}
	ret = cf_metrics_collect(NULL, &m, err, sizeof(err));
	if (ret) {
		snprintf(why, sizeof(why), "cannot read the module: %s", err);
		respond_text(c, route == CF_HTTP_HEALTHZ ? 503 : 500, why, head);
		return;
	}
	if (route == CF_HTTP_HEALTHZ) {
		status = cf_metrics_health(&m, why, sizeof(why));
		respond_text(c, status, why, head);
		return;
	}
	h->agent(&a);
	text = cf_metrics_render(&m, &a, &len);
	if (!text) {
		respond_text(c, 500, "out of memory", head);
		return;
	}
	respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", text, len, head);
	free(text);
}

static void drop(struct conn *c)
{
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* read what is there; answer once the header is complete (or refused) */
static void on_read(struct cfd_http *h, struct conn *c)
{
	int route, status;
	bool head;
	ssize_t n;

	if (c->draining) {
		char sink[1024];

		n = read(c->fd, sink, sizeof(sink));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			drop(c);
		return;
	}
	n = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);	/* the peer closed (or failed) before a request */
		return;
	}
	c->in_len += (size_t)n;
	status = cf_http_parse(c->in, c->in_len, &route, &head);
	if (!status)
		return;
	answer(h, c, status, route, head);
	if (!c->out)
		drop(c);
}

static void on_write(struct conn *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out_len) {
		/* Connection: close, once the peer has closed too (or the deadline) */
		shutdown(c->fd, SHUT_WR);
		free(c->out);
		c->out = NULL;
		c->draining = true;
	}
}

void *cfd_http_main(void *arg)
{
	struct cfd_http *h = arg;
	struct conn *conns = calloc(MAX_CONNS, sizeof(*conns));
	struct pollfd pfd[MAX_CONNS + 1];
	int i;

	if (!conns)
		return NULL;
	for (i = 0; i < MAX_CONNS; i++)
		conns[i].fd = -1;
	while (!atomic_load(h->stop)) {
		int slots = 0, n = 0, idx[MAX_CONNS + 1];
		int64_t now = mono_ms();

		for (i = 0; i < MAX_CONNS; i++) {
			if (conns[i].fd < 0) {
				slots++;
				continue;
			}
			if (now >= conns[i].deadline) {
				drop(&conns[i]);	/* too slow: no answer */
				slots++;
				continue;
			}
			pfd[n].fd = conns[i].fd;
			pfd[n].events = conns[i].out ? POLLOUT : POLLIN;
			idx[n++] = i;
		}
		if (slots) {	/* full: new connections wait in the backlog */
			pfd[n].fd = h->fd;
			pfd[n].events = POLLIN;
			idx[n++] = -1;
		}
		if (poll(pfd, (nfds_t)n, POLL_MS) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			struct conn *c;

			if (!pfd[i].revents)
				continue;
			if (idx[i] < 0) {
				int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				int j;

				if (fd < 0)
					continue;
				for (j = 0; j < MAX_CONNS && conns[j].fd >= 0; j++)
					;
				conns[j].fd = fd;
				conns[j].deadline = mono_ms() + CONN_MS;
				continue;
			}
			c = &conns[idx[i]];
			if (c->out)
				on_write(c);
			else
				on_read(h, c);
		}
	}
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].fd >= 0)
			drop(&conns[i]);
	free(conns);
	return NULL;
}
