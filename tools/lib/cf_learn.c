// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The learner: run a command bound to an epoch and collect what the module
 * recorded about its sandbox from the audit stream (the read-only
 * multicast group of the audit netlink socket, which needs CAP_AUDIT_READ
 * and takes nothing from auditd). Learning binds it to a fresh complain
 * epoch (every class log, or open where asked) and turns the op=learn
 * records into the narrowest epoch that admits them; verifying binds it
 * to a given epoch and keeps its denials.
 *
 * Nothing is lost silently: the module counts, per sandbox, the records
 * it wrote and the exercises it left without one (over the sandbox's
 * budget, over the host's ceiling, lost by the audit subsystem); the
 * learner reads those counts from the exited command (a zombie until the
 * learner has read them), waits for as many records as were written, and
 * reports what it did not see (the stream overflowed, or they did not
 * arrive in time).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include "cf_internal.h"

#define CF_LEARN_WAIT_MS	5000
#define CF_LEARN_RCVBUF		(32 << 20)

struct capfence_learn {
	struct capfence_learn_stats st;
	char **rec;		/* the sandbox's records, in arrival order */
	size_t n, cap;
	char **note;
	size_t nnotes;
	uint32_t open;		/* classes left open while learning */
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int add_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	char **nv, *d = strdup(s);

	if (!d)
		return -ENOMEM;
	if (*n == *cap) {
		nv = realloc(*v, (*cap ? *cap * 2 : 64) * sizeof(*nv));
		if (!nv) {
			free(d);
			return -ENOMEM;
		}
		*v = nv;
		*cap = *cap ? *cap * 2 : 64;
	}
	(*v)[(*n)++] = d;
	return 0;
}

static __attribute__((format(printf, 2, 3)))
int add_note(struct capfence_learn *l, const char *fmt, ...)
{
	size_t cap = l->nnotes;	/* grown one at a time: notes are few */
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return add_str(&l->note, &l->nnotes, &cap, buf);
}

/*
 * The value of field key in record rec, into buf: quoted values unquoted,
 * hex-encoded ones (audit's escaping) decoded. NULL when absent.
 */
static const char *field(const char *rec, const char *key, char *buf,
			 size_t len)
{
	size_t klen = strlen(key), n = 0;
	const char *p = rec, *e;

	while ((p = strstr(p, key))) {
		if ((p == rec || p[-1] == ' ') && p[klen] == '=')
			break;
		p += klen;
	}
	if (!p)
		return NULL;
	p += klen + 1;
	if (*p == '"') {
		e = strchr(p + 1, '"');
		if (!e)
			return NULL;
		n = (size_t)(e - p - 1);
		if (n >= len)
			return NULL;
		memcpy(buf, p + 1, n);
		buf[n] = '\0';
		return buf;
	}
	e = p + strcspn(p, " ");
	n = (size_t)(e - p);
	if (n >= len)
		return NULL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/* a hex-encoded audit string (even length, hex digits only), decoded */
static bool unhex(const char *s, char *out, size_t len)
{
	size_t n = strlen(s), i;

	if (!n || n % 2 || n / 2 >= len)
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789ABCDEFabcdef", s[i]))
			return false;
	for (i = 0; i < n / 2; i++) {
		unsigned int b;

		sscanf(s + 2 * i, "%2x", &b);
		out[i] = (char)b;
	}
	out[n / 2] = '\0';
	return true;
}

static int audit_open(char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
	int fd, sz = CF_LEARN_RCVBUF, e;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_AUDIT);
	if (fd < 0) {
		e = errno;
		capfence__seterr(err, errlen, "cannot open the audit stream: %s",
				 strerror(e));
		return -e;
	}
	/* room for a flood: the stream's overflow is counted, not hidden */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		capfence__seterr(err, errlen,
				 "cannot read the audit stream (its multicast group needs CAP_AUDIT_READ): %s",
				 strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* every capfence record waiting on fd into l's list (all sandboxes) */
static int audit_drain(int fd, struct capfence_learn *l, char ***all,
		       size_t *nall, size_t *capall)
{
	char buf[9000], *text;
	ssize_t n;
	int ret;

	for (;;) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t len;

		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			if (errno == ENOBUFS) {
				l->st.overflows++;
				continue;
			}
			if (errno == EINTR)
				continue;
			return 0;	/* EAGAIN: nothing more now */
		}
		if (n < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != CAPFENCE_AUDIT_TYPE)
			continue;
		len = h->nlmsg_len > (size_t)n ? (size_t)n : h->nlmsg_len;
		if (len < NLMSG_HDRLEN)
			continue;
		buf[len] = '\0';
		/* the module's text, after the "audit(TIME:SERIAL): " stamp */
		text = strstr((char *)NLMSG_DATA(h), "lsm=capfence ");
		if (!text)
			continue;
		ret = add_str(all, nall, capall, text);
		if (ret)
			return ret;
	}
}

/* does record rec name sandbox id (and is it one of its own records)? */
static bool of_sandbox(const char *rec, uint64_t id)
{
	char v[32], op[32];

	if (!field(rec, "sandbox", v, sizeof(v)) ||
	    strtoull(v, NULL, 10) != id)
		return false;
	/* the module's report of records not written is not one of them */
	return !(field(rec, "op", op, sizeof(op)) && !strcmp(op, "suppressed"));
}

/*
 * Run path/argv bound to epoch_id with tokens, and collect its sandbox's
 * records into a new learner.
 */
static int learn_collect(struct capfence_client *c, uint64_t epoch_id,
			 const struct capfence_token *toks, size_t ntok,
			 const char *path, char *const argv[],
			 unsigned int wait_ms, struct capfence_learn **out,
			 char *err, size_t errlen)
{
	struct capfence_sandbox_info sb;
	struct capfence_learn *l;
	struct capfence_result r;
	char **all = NULL, why[CAPFENCE_ERR_MAX] = "";
	size_t nall = 0, capall = 0, i, seen;
	siginfo_t si;
	int fd, ret, status = 0;
	long last;
	pid_t pid;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->st.epoch_id = epoch_id;
	fd = audit_open(err, errlen);
	if (fd < 0) {
		free(l);
		return fd;
	}
	ret = capfence_client_spawn_bound(c, epoch_id, toks, ntok, path, argv,
					  NULL, &pid, &r);
	if (ret) {
		if (r.message[0])
			capfence__seterr(err, errlen, "cannot run %s bound to epoch %" PRIu64 ": %s",
					 path, epoch_id, r.message);
		else
			capfence__seterr(err, errlen, "cannot run %s bound to epoch %" PRIu64 ": %s",
					 path, epoch_id, strerror(-ret));
		goto fail;
	}
	memset(&sb, 0, sizeof(sb));
	capfence_client_task_sandbox(c, (uint32_t)pid, &sb, why, sizeof(why));
	l->st.sandbox_id = sb.id;
	/* read while it runs: the socket's buffer is the only queue */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == pid)
			break;
		poll(&p, 1, 50);
		ret = audit_drain(fd, l, &all, &nall, &capall);
		if (ret)
			goto reap;
	}
	/* exited, not reaped: its sandbox's final counts */
	memset(&sb, 0, sizeof(sb));
	if (capfence_client_task_sandbox(c, (uint32_t)pid, &sb, why,
					 sizeof(why)) || !sb.id) {
		l->st.counts_unknown = true;
	} else {
		l->st.sandbox_id = sb.id;
		l->st.records = sb.records;
		l->st.over_budget = sb.over_budget;
		l->st.over_ceiling = sb.over_ceiling;
		l->st.lost = sb.lost;
	}
	/* the records are written by a work item: wait for the last one */
	last = now_ms();
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		ret = audit_drain(fd, l, &all, &nall, &capall);
		if (ret)
			goto reap;
		for (i = 0, seen = 0; l->st.sandbox_id && i < nall; i++)
			if (of_sandbox(all[i], l->st.sandbox_id))
				seen++;
		if (!l->st.counts_unknown && seen >= l->st.records)
			break;
		if (seen != l->st.received) {
			l->st.received = seen;
			last = now_ms();
		}
		if (now_ms() - last > (long)(wait_ms ? wait_ms : CF_LEARN_WAIT_MS))
			break;
		poll(&p, 1, 100);
	}
	ret = 0;
reap:
	waitpid(pid, &status, 0);
	l->st.status = status;
	for (i = 0; i < nall; i++) {
		char op[32];

		if (!ret && l->st.sandbox_id && of_sandbox(all[i], l->st.sandbox_id)) {
			size_t cap = l->cap;

			ret = add_str(&l->rec, &l->n, &cap, all[i]);
			l->cap = cap;
			if (field(all[i], "op", op, sizeof(op)) && !strcmp(op, "learn"))
				l->st.learned++;
			else if (field(all[i], "op", op, sizeof(op)) &&
				 strcmp(op, "bind"))
				l->st.denied++;
		}
		free(all[i]);
	}
	free(all);
	l->st.received = l->n;
	if (!l->st.counts_unknown && l->st.records > l->n)
		l->st.missing = l->st.records - l->n;
	close(fd);
	if (ret) {
		capfence__seterr(err, errlen, "out of memory");
		capfence_client_learn_free(l);
		return ret;
	}
	*out = l;
	return 0;
fail:
	close(fd);
	free(l);
	return ret;
}

int capfence_client_learn_run(struct capfence_client *c,
			      const struct capfence_learn_opts *o,
			      const char *path, char *const argv[],
			      struct capfence_learn **out, char *err,
			      size_t errlen)
{
	struct capfence_status st;
	struct capfence_epoch e;
	char why[CAPFENCE_ERR_MAX];
	uint64_t id = 0;
	uint32_t open = 0;
	unsigned int wait = 0;
	int cls, ret, rr, tries;

	*out = NULL;
	if (o && o->sz >= sizeof(*o)) {
		id = o->epoch_id;
		open = o->open_classes;
		wait = o->wait_ms;
	} else if (o) {
		capfence__seterr(err, errlen, "learn options of an unknown size");
		return -EINVAL;
	}
	if (!id) {
		ret = capfence_client_status(c, &st, err, errlen);
		if (ret)
			return ret;
		id = st.max_epoch + 1;
	}
	capfence_epoch_init(&e, id);
	for (cls = CAPFENCE_CLASS_NONE + 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		e.rules[cls].class_id = (uint8_t)cls;
		e.rules[cls].kind = (open & (1u << cls)) ? CAPFENCE_RULE_OPEN :
				    CAPFENCE_RULE_LOG;
	}
	ret = capfence_client_epoch_install(c, &e, err, errlen);
	if (ret)
		return ret;
	ret = learn_collect(c, id, NULL, 0, path, argv, wait, out, err, errlen);
	if (*out)
		(*out)->open = open;
	/*
	 * A learning epoch is not kept: retired once nothing names it (the
	 * reaped command's credentials go after an RCU grace period).
	 */
	for (tries = 0; tries < 40; tries++) {
		rr = capfence_client_epoch_retire(c, id, why, sizeof(why));
		if (rr != -EBUSY)
			break;
		usleep(50000);
	}
	if (rr && *out)
		add_note(*out, "complain epoch %" PRIu64 " is still in use (%s): retire it later with capfence epoch retire %" PRIu64,
			 id, why, id);
	return ret;
}

int capfence_client_learn_verify(struct capfence_client *c, uint64_t epoch_id,
				 const struct capfence_token *tokens, size_t n,
				 const char *path, char *const argv[],
				 unsigned int wait_ms, struct capfence_learn **out,
				 char *err, size_t errlen)
{
	*out = NULL;
	return learn_collect(c, epoch_id, tokens, n, path, argv, wait_ms, out,
			     err, errlen);
}

void capfence_client_learn_stats(const struct capfence_learn *l,
				 struct capfence_learn_stats *st)
{
	*st = l->st;
}

size_t capfence_client_learn_records(const struct capfence_learn *l)
{
	return l->n;
}

const char *capfence_client_learn_record(const struct capfence_learn *l,
					 size_t i)
{
	return i < l->n ? l->rec[i] : NULL;
}

size_t capfence_client_learn_notes(const struct capfence_learn *l)
{
	return l->nnotes;
}

const char *capfence_client_learn_note(const struct capfence_learn *l,
				       size_t i)
{
	return i < l->nnotes ? l->note[i] : NULL;
}

void capfence_client_learn_free(struct capfence_learn *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		free(l->rec[i]);
	for (i = 0; i < l->nnotes; i++)
		free(l->note[i]);
	free(l->rec);
	free(l->note);
	free(l);
}

/* ---- the suggestion ------------------------------------------------------ */

/* the deepest common directory of a and b ("/" at worst) into a */
static void common_dir(char *a, const char *b)
{
	size_t i = 0, cut = 1;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			cut = i ? i : 1;
		i++;
	}
	/* a whole component in common: a is b's ancestor, or they are equal */
	if ((!a[i] && (b[i] == '/' || !b[i])) || (!b[i] && a[i] == '/'))
		cut = i;
	a[cut] = '\0';
}

/* is path p beneath or at dir d (component-wise)? */
static bool beneath(const char *p, const char *d)
{
	size_t n = strlen(d);

	if (!strcmp(d, "/"))
		return true;
	return !strncmp(p, d, n) && (p[n] == '/' || !p[n]);
}

/* the directories that admit every path in p[n], at most max of them */
static size_t paths_generalize(char (*p)[CAPFENCE_PATH_MAX + 1], size_t n,
			       size_t max)
{
	size_t i, j, k, bi = 0, bj = 0, best;
	char tmp[CAPFENCE_PATH_MAX + 1];

	for (;;) {
		/* drop what another entry admits already */
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				if (i != j && beneath(p[i], p[j])) {
					memmove(p[i], p[n - 1], sizeof(p[0]));
					n--;
					i = (size_t)-1;
					break;
				}
		if (n <= max)
			return n;
		/* merge the two with the deepest common directory */
		best = 0;
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++) {
				memcpy(tmp, p[i], sizeof(tmp));
				common_dir(tmp, p[j]);
				k = strlen(tmp);
				if (k >= best) {
					best = k;
					bi = i;
					bj = j;
				}
			}
		common_dir(p[bi], p[bj]);
	}
}

/* the directory a file was seen in: the path itself for a directory */
static void seen_dir(const char *path, char *out)
{
	struct stat s;
	char *slash;

	snprintf(out, CAPFENCE_PATH_MAX + 1, "%s", path);
	if (!stat(path, &s) && S_ISDIR(s.st_mode))
		return;
	slash = strrchr(out, '/');
	if (slash == out)
		out[1] = '\0';
	else if (slash)
		*slash = '\0';
}

/* "a.b.c.d:P", "[v6]:P" or "cid:C:P" into a constraint's text */
static int peer_constraint(const char *target, bool bind, char *out,
			   size_t len)
{
	const char *colon = strrchr(target, ':');
	unsigned long port;
	char host[64];

	if (!colon || (size_t)(colon - target) >= sizeof(host))
		return -EINVAL;
	port = strtoul(colon + 1, NULL, 10);
	memcpy(host, target, (size_t)(colon - target));
	host[colon - target] = '\0';
	if (!strncmp(target, "cid:", 4)) {
		/* a peer port above 65535 is admitted only by any port */
		if (port > 65535)
			snprintf(out, len, "%s", host);
		else
			snprintf(out, len, "%s:%lu", host, port);
		return 0;
	}
	/* port 0 (a bind that picks one) is admitted only by any port */
	if (host[0] == '[') {
		host[strlen(host) - 1] = '\0';
		if (bind && !port)
			snprintf(out, len, "[%s]/128", host + 1);
		else
			snprintf(out, len, "[%s]/128:%lu", host + 1, port);
	} else if (bind && !port) {
		snprintf(out, len, "%s/32", host);
	} else {
		snprintf(out, len, "%s/32:%lu", host, port);
	}
	return 0;
}

int capfence_client_learn_epoch(struct capfence_learn *l, uint64_t epoch_id,
				struct capfence_epoch *out, char *err,
				size_t errlen)
{
	char (*p)[CAPFENCE_PATH_MAX + 1];
	char cls_name[32], tgt[2 * CAPFENCE_PATH_MAX + 3], dec[CAPFENCE_PATH_MAX + 1];
	char peers[CAPFENCE_MAX_CONSTRAINTS + 1][96], text[96];
	size_t i, n, np, k;
	int cls, ret;

	capfence_epoch_init(out, epoch_id);
	p = calloc(256, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (cls = CAPFENCE_CLASS_NONE + 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		struct capfence_rule *r = &out->rules[cls];
		bool net = capfence_class_is_net(cls), too_many = false;

		r->class_id = (uint8_t)cls;
		r->kind = CAPFENCE_RULE_DENY;
		/* open while learning, nothing seen of it: open */
		if (l->open & (1u << cls)) {
			r->kind = CAPFENCE_RULE_OPEN;
			continue;
		}
		n = np = 0;
		for (i = 0; i < l->n; i++) {
			char op[16];
			const char *t;

			if (!field(l->rec[i], "op", op, sizeof(op)) ||
			    strcmp(op, "learn") ||
			    !field(l->rec[i], "class", cls_name, sizeof(cls_name)) ||
			    capfence_class_from_name(cls_name) != cls ||
			    !(t = field(l->rec[i], "target", tgt, sizeof(tgt))))
				continue;
			if (!net) {
				/* a quoted path is plain; otherwise hex */
				if (t[0] != '/' && unhex(t, dec, sizeof(dec)))
					t = dec;
				if (t[0] != '/' || strlen(t) > CAPFENCE_PATH_MAX)
					continue;
				if (n == 256) {
					/* merge as we go: room for more */
					n = paths_generalize(p, n, 128);
				}
				seen_dir(t, p[n++]);
				continue;
			}
			ret = peer_constraint(t, cls == CAPFENCE_CLASS_NET_BIND,
					      text, sizeof(text));
			if (ret)
				continue;
			for (k = 0; k < np; k++)
				if (!strcmp(peers[k], text))
					break;
			if (k < np)
				continue;
			if (np == CAPFENCE_MAX_CONSTRAINTS) {
				too_many = true;
				continue;
			}
			snprintf(peers[np++], sizeof(peers[0]), "%s", text);
		}
		if (too_many) {
			add_note(l, "%s: more than %d distinct peers; the class is left deny (write its rule by hand)",
				 capfence_class_name(cls), CAPFENCE_MAX_CONSTRAINTS);
			continue;
		}
		if (!net && n) {
			n = paths_generalize(p, n, CAPFENCE_MAX_CONSTRAINTS);
			for (k = 0; k < n; k++)
				if (!strcmp(p[k], "/"))
					add_note(l, "%s: the paths seen have no common directory but /: the rule admits every path",
						 capfence_class_name(cls));
		}
		if (!(net ? np : n))
			continue;
		r->kind = CAPFENCE_RULE_TOKEN;
		for (k = 0; k < (net ? np : n); k++) {
			ret = capfence_constraint_parse(net ? peers[k] : p[k],
							&r->constraints[r->n],
							err, errlen);
			if (ret) {
				free(p);
				return ret;
			}
			r->n++;
		}
	}
	free(p);
	if (l->st.missing || l->st.over_budget || l->st.over_ceiling ||
	    l->st.lost || l->st.overflows || l->st.counts_unknown)
		add_note(l, "incomplete: exercises without a record were seen (over budget %" PRIu64 ", over ceiling %" PRIu64 ", lost %" PRIu64 ", not received %" PRIu64 ", stream overflows %" PRIu64 "%s); the rules may admit too little: check them with capfence learn --verify",
			 l->st.over_budget, l->st.over_ceiling, l->st.lost,
			 l->st.missing, l->st.overflows,
			 l->st.counts_unknown ? ", the sandbox's counts unavailable" : "");
	return 0;
}
