// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcapfence: the kernel client. Every control operation of the capfence
 * generic netlink family (docs/netlink/capfence.yaml), typed, on libmnl;
 * the event subscription; spawning a bound child.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>
#include <sodium.h>
#include "cf_internal.h"
#include "capfence_testing.h"
#include "cf_attrs.h"

/* Room for any reply (a dump batch) and any request (16 tokens). */
#define CF_NL_BUFSZ	(64 * 1024)

/* One generic netlink socket with the capfence family resolved. */
struct cf_sock {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t mcgrp;		/* the "events" group id, 0 if none */
	uint32_t portid;
	uint32_t seq;
	char *rbuf;		/* CF_NL_BUFSZ: replies */
	char *wbuf;		/* CF_NL_BUFSZ: requests the library builds */
};

struct capfence_client {
	pthread_mutex_t lock;	/* one request at a time */
	struct cf_sock s;
	const struct capfence__fleet_link *chain;	/* change commands carry it */
};

struct capfence_events {
	struct cf_sock s;
	size_t off, len;	/* messages of rbuf not yet returned */
};

/* ---- the socket --------------------------------------------------------- */

struct cf_family_info {
	uint16_t id;
	uint32_t mcgrp;
};

static int family_attr(const struct nlattr *attr, void *data)
{
	struct cf_family_info *fi = data;
	const struct nlattr *grp, *a;

	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		if (!mnl_attr_validate(attr, MNL_TYPE_U16))
			fi->id = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(grp, attr) {
			const char *name = NULL;
			uint32_t id = 0;

			mnl_attr_for_each_nested(a, grp) {
				if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
				    !mnl_attr_validate(a, MNL_TYPE_NUL_STRING))
					name = mnl_attr_get_str(a);
				else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
					 !mnl_attr_validate(a, MNL_TYPE_U32))
					id = mnl_attr_get_u32(a);
			}
			if (name && !strcmp(name, CAPFENCE_GENL_MCGRP_EVENTS))
				fi->mcgrp = id;
		}
		break;
	}
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr,
			      data);
}

struct cf_talk {
	char *ext;		/* extack message, size ext_len */
	size_t ext_len;
	capfence_msg_cb cb;
	void *data;
};

static int ext_attr(const struct nlattr *attr, void *data)
{
	struct cf_talk *t = data;

	if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		capfence__seterr(t->ext, t->ext_len, "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

static int err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		mnl_attr_parse(nlh, sizeof(*e), ext_attr, data);
	if (!e->error)
		return MNL_CB_STOP;
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)data;
	/* a dump interrupted by a change must not pass as complete */
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
		errno = EINTR;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cf_talk *t = data;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
		errno = EINTR;
		return MNL_CB_ERROR;
	}
	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

/*
 * Send nlh (seq and pid set here) and run every reply through cb until the
 * ACK or DONE. ext (may be NULL) gets the extack message or "".
 */
static int sock_talk(struct cf_sock *s, struct nlmsghdr *nlh,
		     capfence_msg_cb cb, void *data, char *ext, size_t ext_len)
{
	struct cf_talk t = { ext, ext_len, cb, data };
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = noop_cb,
		[NLMSG_ERROR] = err_cb,
		[NLMSG_DONE] = done_cb,
	};
	int ret;

	if (ext && ext_len)
		ext[0] = '\0';
	nlh->nlmsg_seq = ++s->seq;
	nlh->nlmsg_pid = 0;
	if (mnl_socket_sendto(s->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ret = (int)mnl_socket_recvfrom(s->sock, s->rbuf, CF_NL_BUFSZ);
		if (ret < 0)
			return -errno;
		errno = 0;
		ret = mnl_cb_run2(s->rbuf, (size_t)ret, nlh->nlmsg_seq, s->portid,
				  data_cb, &t, ctl, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *put_req(char *buf, uint16_t family, uint8_t cmd,
				uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = family == GENL_ID_CTRL ? 1 : CAPFENCE_GENL_VERSION;
	return nlh;
}

static void sock_close(struct cf_sock *s)
{
	if (s->sock)
		mnl_socket_close(s->sock);
	if (s->wbuf)
		sodium_memzero(s->wbuf, CF_NL_BUFSZ);	/* key bytes */
	free(s->rbuf);
	free(s->wbuf);
	memset(s, 0, sizeof(*s));
}

static int sock_open(struct cf_sock *s, char *err, size_t errlen)
{
	struct cf_family_info fi = { 0, 0 };
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(s, 0, sizeof(*s));
	s->rbuf = malloc(CF_NL_BUFSZ);
	s->wbuf = calloc(1, CF_NL_BUFSZ);
	if (!s->rbuf || !s->wbuf) {
		ret = -ENOMEM;
		capfence__seterr(err, errlen, "out of memory");
		goto fail;
	}
	s->sock = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!s->sock || mnl_socket_bind(s->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "cannot open generic netlink: %s",
			  strerror(errno));
		goto fail;
	}
	mnl_socket_setsockopt(s->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(s->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	s->portid = mnl_socket_get_portid(s->sock);
	s->seq = (uint32_t)time(NULL);
	nlh = put_req(s->wbuf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, CAPFENCE_GENL_NAME);
	ret = sock_talk(s, nlh, family_cb, &fi, NULL, 0);
	if (!ret && !fi.id)
		ret = -ENOENT;
	if (ret) {
		if (ret == -ENOENT)
			capfence__seterr(err, errlen, "the capfence module is not loaded (modprobe capfence)");
		else
			capfence__seterr(err, errlen, "cannot resolve the %s family: %s",
				  CAPFENCE_GENL_NAME, strerror(-ret));
		goto fail;
	}
	s->family = fi.id;
	s->mcgrp = fi.mcgrp;
	return 0;
fail:
	sock_close(s);
	return ret;
}

/* ---- the handle -------------------------------------------------------------- */

int capfence_client_open(struct capfence_client **out, char *err,
			 size_t errlen)
{
	struct capfence_client *c;
	int ret;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = sock_open(&c->s, err, errlen);
	if (ret) {
		free(c);
		return ret;
	}
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void capfence_client_close(struct capfence_client *c)
{
	if (!c)
		return;
	sock_close(&c->s);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

uint16_t capfence_client_family(const struct capfence_client *c)
{
	return c->s.family;
}

int capfence_client_fd(const struct capfence_client *c)
{
	return mnl_socket_get_fd(c->s.sock);
}

/* The message of a failed request: the extack text, else strerror. */
static int finish(int ret, const char *ext, char *err, size_t errlen)
{
	if (ret && err && errlen) {
		if (ext[0])
			capfence__seterr(err, errlen, "%s", ext);
		else
			capfence__seterr(err, errlen, "%s", strerror(-ret));
	}
	return ret;
}

int capfence_client_request(struct capfence_client *c, struct nlmsghdr *msg,
			    capfence_msg_cb cb, void *arg, char *err,
			    size_t errlen)
{
	char ext[CAPFENCE_ERR_MAX];
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = sock_talk(&c->s, msg, cb, arg, ext, sizeof(ext));
	pthread_mutex_unlock(&c->lock);
	return finish(ret, ext, err, errlen);
}

/*
 * Typed requests: begin() takes the lock and starts a request in wbuf;
 * end() sends it, runs cb over the replies, wipes wbuf and unlocks.
 */
static struct nlmsghdr *begin(struct capfence_client *c, uint8_t cmd,
			      uint16_t flags)
{
	pthread_mutex_lock(&c->lock);
	return put_req(c->s.wbuf, c->s.family, cmd, flags);
}

static int end(struct capfence_client *c, struct nlmsghdr *nlh,
	       capfence_msg_cb cb, void *data, char *ext, size_t ext_len)
{
	size_t len = nlh->nlmsg_len;
	int ret = sock_talk(&c->s, nlh, cb, data, ext, ext_len);

	sodium_memzero(c->s.wbuf, len);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

static int simple(struct capfence_client *c, struct nlmsghdr *nlh,
		  capfence_msg_cb cb, void *data, char *err, size_t errlen)
{
	char ext[CAPFENCE_ERR_MAX];

	return finish(end(c, nlh, cb, data, ext, sizeof(ext)), ext, err,
		      errlen);
}

/* ---- attribute helpers ------------------------------------------------------ */

/*
 * Every attribute is read through cf_attrs.c's table: parsed into tb[]
 * there with its type and size checked, so what follows only reads.
 */
static int parse_top(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	return capfence__attrs_parse_msg(&cf_attrs_capfence, nlh, tb);
}

static uint64_t get_u64(const struct nlattr *a)
{
	return a ? mnl_attr_get_u64(a) : 0;
}

static uint32_t get_u32(const struct nlattr *a)
{
	return a ? mnl_attr_get_u32(a) : 0;
}

static uint8_t get_u8(const struct nlattr *a)
{
	return a ? mnl_attr_get_u8(a) : 0;
}

/*
 * A NET (binary range, host-order ports) or PATH (string) attribute of
 * @set (a rule or a held capability), one of a repeated list.
 */
static int get_constraint(const struct cf_attr_set *set, const struct nlattr *a,
			  bool net, struct capfence_constraint *c)
{
	memset(c, 0, sizeof(*c));
	if (!capfence__attr_valid(set, a))
		return -EBADMSG;
	if (net) {
		c->kind = CAPFENCE_CONSTRAINT_NET;
		memcpy(&c->net, mnl_attr_get_payload(a), sizeof(c->net));
		return 0;
	}
	if (strlen(mnl_attr_get_str(a)) > CAPFENCE_PATH_MAX)
		return -EBADMSG;
	c->kind = CAPFENCE_CONSTRAINT_PATH;
	c->path.len = (uint8_t)strlen(mnl_attr_get_str(a));
	memcpy(c->path.s, mnl_attr_get_str(a), c->path.len + 1U);
	return 0;
}

/* ---- status ------------------------------------------------------------------- */

static int get_reasons(const struct nlattr *nest, uint64_t *out)
{
	const struct nlattr *tb[CAPFENCE_R_MAX + 1];
	unsigned int t;

	if (capfence__attrs_parse_nest(&cf_attrs_reason_counts, nest, tb))
		return -EBADMSG;
	for (t = 0; t <= CAPFENCE_R_MAX && t < CAPFENCE_STATUS_REASONS; t++)
		if (tb[t])
			out[t] = mnl_attr_get_u64(tb[t]);
	return 0;
}

static int status_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	struct capfence_status *s = data;

	if (parse_top(nlh, tb))
		goto bad;
	if (tb[CAPFENCE_A_VERSION])
		snprintf(s->version, sizeof(s->version), "%s",
			 mnl_attr_get_str(tb[CAPFENCE_A_VERSION]));
	s->abi = get_u32(tb[CAPFENCE_A_ABI]);
	s->attached = get_u8(tb[CAPFENCE_A_HOOKS_ATTACHED]);
	s->fence = get_u64(tb[CAPFENCE_A_FENCE]);
	s->max_epoch = get_u64(tb[CAPFENCE_A_MAX_EPOCH_ID]);
	s->active_epoch = get_u64(tb[CAPFENCE_A_ACTIVE_EPOCH_ID]);
	if (!tb[CAPFENCE_A_STATS])
		return MNL_CB_OK;
	if (capfence__attrs_parse_nest(&cf_attrs_stats, tb[CAPFENCE_A_STATS], st))
		goto bad;
	s->bound = get_u64(st[CAPFENCE_STATS_A_BOUND_CREDS]);
	s->held = get_u64(st[CAPFENCE_STATS_A_HELD_CAPS]);
	s->delegate_ok = get_u64(st[CAPFENCE_STATS_A_DELEGATE_OK]);
	s->exercise_allow = get_u64(st[CAPFENCE_STATS_A_EXERCISE_ALLOW]);
	s->cred_bytes = get_u64(st[CAPFENCE_STATS_A_CRED_BYTES]);
	s->cap_bytes = get_u64(st[CAPFENCE_STATS_A_CAP_BYTES]);
	if ((st[CAPFENCE_STATS_A_DELEGATE_REJECT] &&
	     get_reasons(st[CAPFENCE_STATS_A_DELEGATE_REJECT], s->delegate_reject)) ||
	    (st[CAPFENCE_STATS_A_EXERCISE_DENY] &&
	     get_reasons(st[CAPFENCE_STATS_A_EXERCISE_DENY], s->exercise_deny)))
		goto bad;
	return MNL_CB_OK;
bad:
	errno = EBADMSG;
	return MNL_CB_ERROR;
}

int capfence_client_status(struct capfence_client *c,
			   struct capfence_status *st, char *err,
			   size_t errlen)
{
	memset(st, 0, sizeof(*st));
	return simple(c, begin(c, CAPFENCE_CMD_STATUS_GET, 0), status_cb, st,
		      err, errlen);
}

/* ---- fleet ------------------------------------------------------------------------ */

static int fleet_status_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *fl[CAPFENCE_FLEET_A_MAX + 1];
	struct capfence_fleet_status *f = data;

	if (parse_top(nlh, tb)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	f->rev = get_u64(tb[CAPFENCE_A_FLEET_REV]);
	if (!tb[CAPFENCE_A_FLEET])
		return MNL_CB_OK;
	f->supported = true;
	if (capfence__attrs_parse_nest(&cf_attrs_fleet, tb[CAPFENCE_A_FLEET], fl)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	f->stale_ms = get_u32(fl[CAPFENCE_FLEET_A_STALE_MS]);
	f->deny_ms = get_u32(fl[CAPFENCE_FLEET_A_DENY_MS]);
	f->confirmed = fl[CAPFENCE_FLEET_A_AGE_MS] != NULL;
	f->age_ms = get_u32(fl[CAPFENCE_FLEET_A_AGE_MS]);
	f->state = (int)get_u32(fl[CAPFENCE_FLEET_A_STATE]);
	f->applied = get_u64(fl[CAPFENCE_FLEET_A_APPLIED]);
	return MNL_CB_OK;
}

int capfence_client_fleet_status(struct capfence_client *c,
				 struct capfence_fleet_status *out, char *err,
				 size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return simple(c, begin(c, CAPFENCE_CMD_STATUS_GET, 0), fleet_status_cb,
		      out, err, errlen);
}

/* ---- sandboxes --------------------------------------------------------------------- */

static int sandbox_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *sa[CAPFENCE_SANDBOX_A_MAX + 1];
	struct capfence_sandbox_info *o = data;

	if (parse_top(nlh, tb)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!tb[CAPFENCE_A_SANDBOX])
		return MNL_CB_OK;
	if (capfence__attrs_parse_nest(&cf_attrs_sandbox, tb[CAPFENCE_A_SANDBOX], sa)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	o->supported = true;
	o->id = get_u64(sa[CAPFENCE_SANDBOX_A_ID]);
	o->pid = get_u32(sa[CAPFENCE_SANDBOX_A_PID]);
	o->epoch_id = get_u64(sa[CAPFENCE_SANDBOX_A_EPOCH_ID]);
	o->creds = get_u64(sa[CAPFENCE_SANDBOX_A_CREDS]);
	o->cred_limit = get_u32(sa[CAPFENCE_SANDBOX_A_CRED_LIMIT]);
	o->cred_refused = get_u64(sa[CAPFENCE_SANDBOX_A_CRED_REFUSED]);
	o->records = get_u64(sa[CAPFENCE_SANDBOX_A_RECORDS]);
	o->over_budget = get_u64(sa[CAPFENCE_SANDBOX_A_OVER_BUDGET]);
	o->over_ceiling = get_u64(sa[CAPFENCE_SANDBOX_A_OVER_CEILING]);
	o->lost = get_u64(sa[CAPFENCE_SANDBOX_A_LOST]);
	o->reports = get_u64(sa[CAPFENCE_SANDBOX_A_REPORTS]);
	o->window_ms = get_u32(sa[CAPFENCE_SANDBOX_A_WINDOW_MS]);
	o->budget = get_u32(sa[CAPFENCE_SANDBOX_A_BUDGET]);
	o->floor = get_u32(sa[CAPFENCE_SANDBOX_A_FLOOR]);
	o->ceiling = get_u32(sa[CAPFENCE_SANDBOX_A_CEILING]);
	return MNL_CB_OK;
}

int capfence_client_sandbox_status(struct capfence_client *c,
				   struct capfence_sandbox_info *out, char *err,
				   size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return simple(c, begin(c, CAPFENCE_CMD_STATUS_GET, 0), sandbox_cb, out,
		      err, errlen);
}

int capfence_client_task_sandbox(struct capfence_client *c, uint32_t pid,
				 struct capfence_sandbox_info *out, char *err,
				 size_t errlen)
{
	struct nlmsghdr *nlh;

	memset(out, 0, sizeof(*out));
	nlh = begin(c, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, pid);
	return simple(c, nlh, sandbox_cb, out, err, errlen);
}

static const char *const fleet_state_names[] = {
	[CAPFENCE_FLEET_OFF] = "off",
	[CAPFENCE_FLEET_CURRENT] = "current",
	[CAPFENCE_FLEET_STALE] = "stale",
	[CAPFENCE_FLEET_DENY] = "deny",
};

const char *capfence_fleet_state_name(int state)
{
	if (state < 0 || (size_t)state >= sizeof(fleet_state_names) /
					  sizeof(fleet_state_names[0]))
		return "?";
	return fleet_state_names[state];
}

static int fleet_set(struct capfence_client *c,
		     const struct capfence_fleet_set_opts *fs, char *err,
		     size_t errlen)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	if (fs->flags & ~(CAPFENCE_FLEET_SET_REV | CAPFENCE_FLEET_SET_BOUNDS |
			  CAPFENCE_FLEET_SET_FRESH | CAPFENCE_FLEET_SET_ASKED) ||
	    ((fs->flags & CAPFENCE_FLEET_SET_ASKED) && !(fs->flags & CAPFENCE_FLEET_SET_FRESH))) {
		capfence__seterr(err, errlen, "unknown fleet set flags 0x%x",
				 fs->flags);
		return -EINVAL;
	}
	nlh = begin(c, CAPFENCE_CMD_FLEET_SET, 0);
	if (fs->flags & CAPFENCE_FLEET_SET_REV)
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, fs->rev);
	if (fs->flags & (CAPFENCE_FLEET_SET_BOUNDS | CAPFENCE_FLEET_SET_FRESH)) {
		nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
		if (fs->flags & CAPFENCE_FLEET_SET_BOUNDS) {
			mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_STALE_MS, fs->stale_ms);
			mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_DENY_MS, fs->deny_ms);
		}
		if (fs->flags & CAPFENCE_FLEET_SET_FRESH) {
			mnl_attr_put(nlh, CAPFENCE_FLEET_A_FRESH, 0, NULL);
			if (fs->flags & CAPFENCE_FLEET_SET_ASKED)
				mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_ASKED_NS, fs->asked_ns);
			else
				mnl_attr_put_u32(nlh, CAPFENCE_FLEET_A_AGE_MS, fs->age_ms);
		}
		mnl_attr_nest_end(nlh, nest);
	}
	return simple(c, nlh, NULL, NULL, err, errlen);
}

int capfence_client_fleet_set_opts(struct capfence_client *c,
				   const struct capfence_fleet_set_opts *opts,
				   char *err, size_t errlen)
{
	struct capfence_fleet_set_opts o;
	int ret = CF_OPTS(opts, &o, asked_ns, "options", err, errlen);

	return ret ?: fleet_set(c, &o, err, errlen);
}

/* ---- keys ------------------------------------------------------------------------ */

/*
 * A change applied at a fleet revision carries it (0: no revision), and
 * the chain position the client was given (capfence__client_fleet_link()).
 */
static void put_rev(struct capfence_client *c, struct nlmsghdr *nlh, uint64_t rev)
{
	struct nlattr *nest;

	if (rev)
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, rev);
	if (c->chain) {
		nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);
		mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_SEQ, c->chain->seq);
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_PREV, CAPFENCE_FLEET_LINK_LEN, c->chain->prev);
		mnl_attr_put(nlh, CAPFENCE_FLEET_A_LINK, CAPFENCE_FLEET_LINK_LEN, c->chain->link);
		mnl_attr_nest_end(nlh, nest);
	}
}

void capfence__client_fleet_link(struct capfence_client *c,
				 const struct capfence__fleet_link *l)
{
	c->chain = l;
}

static int fleet_chain_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *fl[CAPFENCE_FLEET_A_MAX + 1];
	struct capfence__fleet_link *l = data;

	if (parse_top(nlh, tb)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!tb[CAPFENCE_A_FLEET])
		return MNL_CB_OK;
	if (capfence__attrs_parse_nest(&cf_attrs_fleet, tb[CAPFENCE_A_FLEET], fl)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	l->seq = get_u64(fl[CAPFENCE_FLEET_A_SEQ]);
	if (fl[CAPFENCE_FLEET_A_LINK])
		memcpy(l->link, mnl_attr_get_payload(fl[CAPFENCE_FLEET_A_LINK]),
		       CAPFENCE_FLEET_LINK_LEN);
	return MNL_CB_OK;
}

int capfence__fleet_chain_get(struct capfence_client *c, struct capfence__fleet_link *l,
			      char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	return simple(c, begin(c, CAPFENCE_CMD_STATUS_GET, 0), fleet_chain_cb, l,
		      err, errlen);
}

int capfence__fleet_chain_set(struct capfence_client *c, const struct capfence__fleet_link *l,
			      char *err, size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_FLEET_SET, 0);
	struct nlattr *nest = mnl_attr_nest_start(nlh, CAPFENCE_A_FLEET);

	mnl_attr_put_u64(nlh, CAPFENCE_FLEET_A_SEQ, l->seq);
	mnl_attr_put(nlh, CAPFENCE_FLEET_A_LINK, CAPFENCE_FLEET_LINK_LEN, l->link);
	mnl_attr_nest_end(nlh, nest);
	return simple(c, nlh, NULL, NULL, err, errlen);
}

static int key_install(struct capfence_client *c, const struct capfence_key *k,
		       uint64_t rev, char *err, size_t errlen)
{
	uint8_t raw[CAPFENCE_KEY_LEN];
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_KEY_INSTALL, 0);

	put_rev(c, nlh, rev);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, capfence_key_id(k));
	capfence_key_bytes(k, raw);
	mnl_attr_put(nlh, CAPFENCE_A_KEY, sizeof(raw), raw);
	sodium_memzero(raw, sizeof(raw));
	return simple(c, nlh, NULL, NULL, err, errlen);	/* wipes wbuf */
}

static int key_remove(struct capfence_client *c, uint32_t key_id, uint64_t rev,
		      char *err, size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_KEY_REMOVE, 0);

	put_rev(c, nlh, rev);
	mnl_attr_put_u32(nlh, CAPFENCE_A_KEY_ID, key_id);
	return simple(c, nlh, NULL, NULL, err, errlen);
}

/* ---- epochs ---------------------------------------------------------------------- */

static int epoch_install(struct capfence_client *c,
			 const struct capfence_epoch *e, uint64_t rev,
			 const struct capfence_seccomp *s, char *err,
			 size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_EPOCH_INSTALL, 0);
	struct nlattr *arr, *nest;
	int cls, i;

	put_rev(c, nlh, rev);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, e->epoch_id);
	if (s) {
		size_t plen;
		const void *prog = capfence_seccomp_program(s, &plen);

		if (!mnl_attr_put_check(nlh, CF_NL_BUFSZ, CAPFENCE_A_SECCOMP_PROG,
					plen, prog))
			goto too_big;
	}
	/* one nested array of rules; a member's type is its index */
	arr = mnl_attr_nest_start_check(nlh, CF_NL_BUFSZ, CAPFENCE_A_RULES);
	if (!arr)
		goto too_big;
	for (cls = 1; cls <= CAPFENCE_CLASS_MAX; cls++) {
		const struct capfence_rule *r = &e->rules[cls];

		nest = mnl_attr_nest_start_check(nlh, CF_NL_BUFSZ, (uint16_t)cls);
		if (!nest)
			goto too_big;
		if (!mnl_attr_put_u8_check(nlh, CF_NL_BUFSZ, CAPFENCE_RULE_A_CLASS,
					   (uint8_t)cls) ||
		    !mnl_attr_put_u8_check(nlh, CF_NL_BUFSZ, CAPFENCE_RULE_A_KIND,
					   r->kind))
			goto too_big;
		for (i = 0; i < r->n && i < CAPFENCE_MAX_CONSTRAINTS; i++) {
			const struct capfence_constraint *k = &r->constraints[i];
			bool ok;

			/* ports are host order in netlink, as in the struct */
			if (k->kind == CAPFENCE_CONSTRAINT_NET)
				ok = mnl_attr_put_check(nlh, CF_NL_BUFSZ,
							CAPFENCE_RULE_A_NET,
							sizeof(k->net), &k->net);
			else
				ok = mnl_attr_put_strz_check(nlh, CF_NL_BUFSZ,
							     CAPFENCE_RULE_A_PATH,
							     k->path.s);
			if (!ok)
				goto too_big;
		}
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, arr);
	return simple(c, nlh, NULL, NULL, err, errlen);
too_big:
	sodium_memzero(c->s.wbuf, CF_NL_BUFSZ);
	pthread_mutex_unlock(&c->lock);
	capfence__seterr(err, errlen, "epoch %llu does not fit one request",
		  (unsigned long long)e->epoch_id);
	return -EMSGSIZE;
}

static int epoch_activate(struct capfence_client *c, uint64_t epoch_id,
			  uint64_t rev, char *err, size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_EPOCH_ACTIVATE, 0);

	put_rev(c, nlh, rev);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch_id);
	return simple(c, nlh, NULL, NULL, err, errlen);
}

static int epoch_retire(struct capfence_client *c, uint64_t epoch_id,
			uint64_t rev, char *err, size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_EPOCH_RETIRE, 0);

	/* the op takes a revision, not the fleet nest of a chain position */
	if (rev)
		mnl_attr_put_u64(nlh, CAPFENCE_A_FLEET_REV, rev);
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch_id);
	return simple(c, nlh, NULL, NULL, err, errlen);
}


static int parse_rule(const struct nlattr *nest,
		      struct capfence_epoch_info *info)
{
	const struct nlattr *tb[CAPFENCE_RULE_A_MAX + 1], *a;
	struct capfence_rule r;
	uint64_t fenced_at;
	int class_id;

	memset(&r, 0, sizeof(r));
	if (capfence__attrs_parse_nest(&cf_attrs_rule, nest, tb))
		return -EBADMSG;
	class_id = tb[CAPFENCE_RULE_A_CLASS] ? get_u8(tb[CAPFENCE_RULE_A_CLASS]) : -1;
	r.kind = get_u8(tb[CAPFENCE_RULE_A_KIND]);
	fenced_at = get_u64(tb[CAPFENCE_RULE_A_FENCED_AT]);
	/* a class this library does not know yet: skip it, never misread it */
	if (!capfence_class_valid(class_id))
		return 0;
	r.class_id = (uint8_t)class_id;
	mnl_attr_for_each_nested(a, nest) {
		int type = mnl_attr_get_type(a);

		if (type != CAPFENCE_RULE_A_NET && type != CAPFENCE_RULE_A_PATH)
			continue;
		if (r.n == CAPFENCE_MAX_CONSTRAINTS ||
		    get_constraint(&cf_attrs_rule, a, type == CAPFENCE_RULE_A_NET,
				   &r.constraints[r.n]))
			return -EBADMSG;
		r.n++;
	}
	info->e.rules[class_id] = r;
	info->fenced_at[class_id] = fenced_at;
	return 0;
}

static int parse_epoch_msg(const struct nlmsghdr *nlh,
			   struct capfence_epoch_info *info)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *r;

	memset(info, 0, sizeof(*info));
	capfence__epoch_init(&info->e, 0);
	if (parse_top(nlh, tb))
		return -EBADMSG;
	info->e.epoch_id = get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	info->active = get_u8(tb[CAPFENCE_A_ACTIVE]);
	if (tb[CAPFENCE_A_RULES])
		mnl_attr_for_each_nested(r, tb[CAPFENCE_A_RULES])
			if (parse_rule(r, info))
				return -EBADMSG;
	return 0;
}

static int epoch_get_cb(const struct nlmsghdr *nlh, void *data)
{
	if (parse_epoch_msg(nlh, data)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int capfence__epoch_get(struct capfence_client *c, uint64_t epoch_id,
			struct capfence_epoch_info *out, char *err, size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_EPOCH_GET, 0);

	memset(out, 0, sizeof(*out));
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch_id);
	return simple(c, nlh, epoch_get_cb, out, err, errlen);
}

static int epoch_seccomp_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *a;
	struct capfence_seccomp_info *out = data;

	if (parse_top(nlh, tb))
		goto bad;
	out->insns = get_u32(tb[CAPFENCE_A_SECCOMP_LEN]);
	a = tb[CAPFENCE_A_SECCOMP_DIGEST];
	if (a) {
		if (mnl_attr_get_payload_len(a) != CAPFENCE_SECCOMP_DIGEST_LEN)
			goto bad;
		memcpy(out->digest, mnl_attr_get_payload(a), CAPFENCE_SECCOMP_DIGEST_LEN);
	}
	a = tb[CAPFENCE_A_SECCOMP_PROG];
	if (a) {
		if (out->prog)	/* one reply only */
			goto bad;
		out->len = mnl_attr_get_payload_len(a);
		out->prog = malloc(out->len ?: 1);
		if (!out->prog) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		memcpy(out->prog, mnl_attr_get_payload(a), out->len);
	}
	if (out->insns && (!out->prog || out->len != out->insns * 8ULL))
		goto bad;
	return MNL_CB_OK;
bad:
	errno = EBADMSG;
	return MNL_CB_ERROR;
}

int capfence_client_epoch_seccomp(struct capfence_client *c, uint64_t epoch_id,
				  struct capfence_seccomp_info *out, char *err,
				  size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_EPOCH_GET, 0);
	int ret;

	memset(out, 0, sizeof(*out));
	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch_id);
	ret = simple(c, nlh, epoch_seccomp_cb, out, err, errlen);
	if (ret) {
		free(out->prog);
		memset(out, 0, sizeof(*out));
	}
	return ret;
}

struct epoch_list {
	struct capfence_epoch_info *v;
	size_t n, cap;
};

static int epoch_dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct epoch_list *l = data;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct capfence_epoch_info *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		l->v = v;
		l->cap = cap;
	}
	if (parse_epoch_msg(nlh, &l->v[l->n])) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	l->n++;
	return MNL_CB_OK;
}

int capfence__epoch_list(struct capfence_client *c, struct capfence_epoch_info **out,
			 size_t *n, char *err, size_t errlen)
{
	struct epoch_list l = { NULL, 0, 0 };
	int ret;

	ret = simple(c, begin(c, CAPFENCE_CMD_EPOCH_GET, NLM_F_DUMP),
		     epoch_dump_cb, &l, err, errlen);
	if (ret) {
		free(l.v);
		l.v = NULL;
		l.n = 0;
	}
	*out = l.v;
	*n = l.n;
	return ret;
}

void capfence_free(void *p)
{
	free(p);
}

/* ---- decisions ----------------------------------------------------------------- */

static int decision_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	struct capfence_result *r = data;

	if (parse_top(nlh, tb)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (tb[CAPFENCE_A_REASON])
		r->reason = (int)get_u32(tb[CAPFENCE_A_REASON]);
	if (tb[CAPFENCE_A_CAP_ID])
		r->cap_id = get_u64(tb[CAPFENCE_A_CAP_ID]);
	if (tb[CAPFENCE_A_EPOCH_ID])
		r->epoch_id = get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	if (tb[CAPFENCE_A_FENCE])
		r->fence = get_u64(tb[CAPFENCE_A_FENCE]);
	return MNL_CB_OK;
}

static void result_init(struct capfence_result *r)
{
	memset(r, 0, sizeof(*r));
	r->reason = -1;
}

static int decide(struct capfence_client *c, struct nlmsghdr *nlh,
		  struct capfence_result *r)
{
	r->err = end(c, nlh, decision_cb, r, r->message, sizeof(r->message));
	return r->err;
}

static int put_token(struct nlmsghdr *nlh, uint16_t type,
		     const struct capfence_token *t)
{
	uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	int len = capfence_token_encode_bin(t, bin, sizeof(bin));

	if (len < 0)
		return len;
	if (!mnl_attr_put_check(nlh, CF_NL_BUFSZ, type, (size_t)len, bin))
		return -EMSGSIZE;
	return 0;
}

/* A request abandoned before it was sent. */
static int abandon(struct capfence_client *c, struct capfence_result *r,
		   int err, const char *what)
{
	pthread_mutex_unlock(&c->lock);
	r->err = err;
	capfence__seterr(r->message, sizeof(r->message), "%s", what);
	return err;
}

static int delegate(struct capfence_client *c, const struct capfence_token *t,
		    uint32_t pid, uint32_t from_pid, unsigned int flags,
		    struct capfence_result *r)
{
	struct nlmsghdr *nlh;

	result_init(r);
	nlh = begin(c, CAPFENCE_CMD_DELEGATE, 0);
	if (put_token(nlh, CAPFENCE_A_TOKEN, t))
		return abandon(c, r, -EINVAL, "the token is not well formed");
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, pid);
	if (from_pid)
		mnl_attr_put_u32(nlh, CAPFENCE_A_FROM_PID, from_pid);
	if (flags & CAPFENCE_DELEGATE_DRY_RUN)
		mnl_attr_put(nlh, CAPFENCE_A_DRY_RUN, 0, NULL);
	return decide(c, nlh, r);
}

int capfence_client_delegate_opts(struct capfence_client *c,
				  const struct capfence_token *t, uint32_t pid,
				  const struct capfence_delegate_opts *opts,
				  struct capfence_result *r)
{
	struct capfence_delegate_opts o;
	struct capfence_token nt;
	int ret;

	result_init(r);
	ret = CF_OPTS(opts, &o, reminted, "options", r->message,
			     sizeof(r->message));
	if (!ret && (o.flags & ~CAPFENCE_DELEGATE_DRY_RUN)) {
		capfence__seterr(r->message, sizeof(r->message),
				 "options: unknown delegation flags 0x%x", o.flags);
		ret = -EINVAL;
	}
	if (ret) {
		r->err = ret;
		return ret;
	}
	if (o.reminted)
		memset(o.reminted, 0, sizeof(*o.reminted));
	ret = delegate(c, t, pid, o.from_pid, o.flags, r);
	if (o.first)
		*o.first = *r;
	if (r->reason != CAPFENCE_R_EPOCH_MISMATCH || !r->epoch_id || !o.remint)
		return ret;
	if (capfence_token_mint(o.remint, t->class_id, r->epoch_id, t->constraints,
				t->n, 0, &nt, r->message, sizeof(r->message))) {
		r->err = -EINVAL;
		return r->err;
	}
	if (o.reminted)
		*o.reminted = nt;
	/* the re-minted token is the orchestrator's own: no from_pid */
	ret = delegate(c, &nt, pid, 0, o.flags, r);
	sodium_memzero(&nt, sizeof(nt));
	return ret;
}

static int cap_revoke(struct capfence_client *c, uint64_t cap_id, uint64_t rev,
		      struct capfence_result *r)
{
	struct nlmsghdr *nlh;

	result_init(r);
	nlh = begin(c, CAPFENCE_CMD_REVOKE, 0);
	put_rev(c, nlh, rev);	mnl_attr_put_u64(nlh, CAPFENCE_A_CAP_ID, cap_id);
	return decide(c, nlh, r);
}

/* ---- the change commands with options (libbpf-style *_opts) ---- */

/* A change command's options; seccomp only where seccomp_ok. */
static int change_opts(const struct capfence_change_opts *in,
		       struct capfence_change_opts *out, bool seccomp_ok,
		       char *err, size_t errlen)
{
	int ret = CF_OPTS(in, out, seccomp, "options", err, errlen);

	if (!ret && out->seccomp && !seccomp_ok) {
		capfence__seterr(err, errlen, "options: seccomp is an epoch install option");
		return -EINVAL;
	}
	return ret;
}

int capfence_client_key_install_opts(struct capfence_client *c,
				     const struct capfence_key *k,
				     const struct capfence_change_opts *opts,
				     char *err, size_t errlen)
{
	struct capfence_change_opts o;
	int ret = change_opts(opts, &o, false, err, errlen);

	return ret ?: key_install(c, k, o.fleet_rev, err, errlen);
}

int capfence_client_key_remove_opts(struct capfence_client *c, uint32_t key_id,
				    const struct capfence_change_opts *opts,
				    char *err, size_t errlen)
{
	struct capfence_change_opts o;
	int ret = change_opts(opts, &o, false, err, errlen);

	return ret ?: key_remove(c, key_id, o.fleet_rev, err, errlen);
}

int capfence_client_epoch_install_opts(struct capfence_client *c,
				       const struct capfence_epoch *e,
				       const struct capfence_change_opts *opts,
				       char *err, size_t errlen)
{
	struct capfence_change_opts o;
	int ret = change_opts(opts, &o, true, err, errlen);

	return ret ?: epoch_install(c, e, o.fleet_rev, o.seccomp, err, errlen);
}

int capfence_client_epoch_activate_opts(struct capfence_client *c,
					uint64_t epoch_id,
					const struct capfence_change_opts *opts,
					char *err, size_t errlen)
{
	struct capfence_change_opts o;
	int ret = change_opts(opts, &o, false, err, errlen);

	return ret ?: epoch_activate(c, epoch_id, o.fleet_rev, err, errlen);
}

int capfence_client_epoch_retire_opts(struct capfence_client *c,
				      uint64_t epoch_id,
				      const struct capfence_change_opts *opts,
				      char *err, size_t errlen)
{
	struct capfence_change_opts o;
	int ret = change_opts(opts, &o, false, err, errlen);

	return ret ?: epoch_retire(c, epoch_id, o.fleet_rev, err, errlen);
}

int capfence_client_revoke_opts(struct capfence_client *c, uint64_t cap_id,
				const struct capfence_change_opts *opts,
				struct capfence_result *r)
{
	struct capfence_change_opts o;
	int ret;

	result_init(r);
	ret = change_opts(opts, &o, false, r->message, sizeof(r->message));
	if (ret) {
		r->err = ret;
		return ret;
	}
	return cap_revoke(c, cap_id, o.fleet_rev, r);
}

static int put_exec_set(struct nlmsghdr *nlh, uint64_t epoch_id,
			const struct capfence_token *tokens, size_t n)
{
	struct nlattr *arr;
	size_t i;

	mnl_attr_put_u64(nlh, CAPFENCE_A_EPOCH_ID, epoch_id);
	if (!n)
		return 0;
	/* one nested array of tokens; a member's type is its index */
	arr = mnl_attr_nest_start_check(nlh, CF_NL_BUFSZ, CAPFENCE_A_TOKENS);
	if (!arr)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (put_token(nlh, (uint16_t)(i + 1), &tokens[i]))
			return -EINVAL;
	mnl_attr_nest_end(nlh, arr);
	return 0;
}

static int exec_set(struct capfence_client *c, uint64_t epoch_id,
		    const struct capfence_token *tokens, size_t n,
		    struct capfence_result *r)
{
	struct nlmsghdr *nlh;

	nlh = begin(c, CAPFENCE_CMD_EXEC_SET, 0);
	if (put_exec_set(nlh, epoch_id, tokens, n))
		return abandon(c, r, -EINVAL, "a token is not well formed");
	return decide(c, nlh, r);
}

/* bind options: tokens for every call, envp only where envp_ok */
static int bind_opts(const struct capfence_bind_opts *in,
		     struct capfence_bind_opts *out, bool envp_ok,
		     struct capfence_result *r)
{
	int ret = CF_OPTS(in, out, wait_ms, "options", r->message,
				 sizeof(r->message));

	if (!ret && out->envp && !envp_ok) {
		capfence__seterr(r->message, sizeof(r->message),
				 "options: envp is a spawn option");
		ret = -EINVAL;
	}
	if (!ret && out->wait_ms) {
		capfence__seterr(r->message, sizeof(r->message),
				 "options: wait_ms is a learn_verify option");
		ret = -EINVAL;
	}
	r->err = ret;
	return ret;
}

int capfence_client_exec_set_opts(struct capfence_client *c, uint64_t epoch_id,
				  const struct capfence_bind_opts *opts,
				  struct capfence_result *r)
{
	struct capfence_bind_opts o;

	result_init(r);
	if (bind_opts(opts, &o, false, r))
		return r->err;
	return exec_set(c, epoch_id, o.tokens, o.n, r);
}

/* ---- spawning a bound child ------------------------------------------------------- */

/*
 * The child runs between fork() and execve() with nothing but system calls
 * and libmnl's pure parsing over buffers the parent prepared: no malloc,
 * no locks (the parent may have other threads).
 */
static int child_exec_set(const struct nlmsghdr *req, char *buf, size_t len,
			  struct capfence_result *r)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	struct cf_talk t = { r->message, sizeof(r->message), decision_cb, r };
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = noop_cb,
		[NLMSG_ERROR] = err_cb,
		[NLMSG_DONE] = done_cb,
	};
	int fd, one = 1, ret;
	ssize_t got;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    sendto(fd, req, req->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		got = recv(fd, buf, len, 0);
		if (got < 0) {
			ret = -errno;
			break;
		}
		errno = 0;
		ret = mnl_cb_run2(buf, (size_t)got, req->nlmsg_seq, 0, data_cb,
				  &t, ctl, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR) {
			ret = errno ? -errno : -EIO;
			break;
		}
		if (ret == MNL_CB_STOP) {
			ret = 0;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

static int abandon_nolock(struct capfence_result *r, int err,
			  const char *what)
{
	r->err = err;
	capfence__seterr(r->message, sizeof(r->message), "%s", what);
	return err;
}

/*
 * An exec closes its close-on-exec descriptors before it installs the new
 * credential: the pipe closing says the child is past the point of no
 * return, not yet that it is bound. Wait (at most 5 s) until the module
 * says so, so that the caller's next request sees the child bound.
 */
static void wait_bound(struct capfence_client *c, pid_t child, uint64_t epoch_id)
{
	struct capfence_task_info ti;
	char err[CAPFENCE_ERR_MAX];
	uint64_t now;
	int i;

	for (i = 0; i < 5000; i++) {
		memset(&ti, 0, sizeof(ti));
		if (capfence_client_task_get(c, (uint32_t)child, &ti, err,
					     sizeof(err)))
			return;		/* gone: the caller learns it by waiting */
		now = ti.epoch_id;
		capfence_task_release(&ti);
		if (now == epoch_id)
			return;
		usleep(1000);
	}
}

int capfence_client_spawn_bound_opts(struct capfence_client *c,
				     uint64_t epoch_id, const char *path,
				     char *const argv[],
				     const struct capfence_bind_opts *opts,
				     pid_t *pid, struct capfence_result *r)
{
	struct capfence_bind_opts o;

	result_init(r);
	if (bind_opts(opts, &o, true, r)) {
		if (pid)
			*pid = -1;
		return r->err;
	}
	return capfence__spawn_bound(c, epoch_id, o.tokens, o.n, path, argv,
				     o.envp, pid, r, NULL);
}

/* Read the child's result from fd, serving h while it is not there. */
static ssize_t spawn_wait(int fd, struct capfence_result *r,
			  struct capfence__spawn_hooks *h)
{
	struct pollfd p[2];
	ssize_t got;

	for (;;) {
		p[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = h ? h->fd : -1, .events = POLLIN };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents)
			h->serve(h->arg, &h->fd);
		if (p[0].revents)
			break;
	}
	do {
		got = read(fd, r, sizeof(*r));
	} while (got < 0 && errno == EINTR);
	return got;
}

int capfence__spawn_bound(struct capfence_client *c, uint64_t epoch_id,
			  const struct capfence_token *tokens, size_t n,
			  const char *path, char *const argv[],
			  char *const envp[], pid_t *pid,
			  struct capfence_result *r,
			  struct capfence__spawn_hooks *h)
{
	static const char sc_fail[] = "cannot load the epoch's seccomp filter";
	struct capfence_seccomp_info sc;
	struct nlmsghdr *nlh;
	char *req, *buf;
	int pfd[2], ret, status;
	ssize_t got;
	pid_t child;

	result_init(r);
	*pid = -1;
	if (n > CAPFENCE_MAX_TOKENS || !path || !argv)
		return abandon_nolock(r, -EINVAL, "bad arguments");
	/*
	 * The epoch's syscall policy, loaded by the child between EXEC_SET
	 * and execve. When it cannot be read, EXEC_SET says why (an unknown
	 * epoch) or the kernel refuses the bind (reason seccomp).
	 */
	if (capfence_client_epoch_seccomp(c, epoch_id, &sc, r->message,
					  sizeof(r->message)))
		memset(&sc, 0, sizeof(sc));
	r->message[0] = '\0';
	req = calloc(1, CF_NL_BUFSZ);
	buf = malloc(8192);
	if (!req || !buf) {
		free(req);
		free(buf);
		free(sc.prog);
		return abandon_nolock(r, -ENOMEM, "out of memory");
	}
	nlh = put_req(req, c->s.family, CAPFENCE_CMD_EXEC_SET, 0);
	nlh->nlmsg_seq = 1;
	if (put_exec_set(nlh, epoch_id, tokens, n)) {
		free(req);
		free(buf);
		free(sc.prog);
		return abandon_nolock(r, -EINVAL, "a token is not well formed");
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		ret = -errno;
		free(req);
		free(buf);
		free(sc.prog);
		return abandon_nolock(r, ret, strerror(-ret));
	}
	child = fork();
	if (child < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		free(req);
		free(buf);
		free(sc.prog);
		return abandon_nolock(r, ret, strerror(-ret));
	}
	if (!child) {
		close(pfd[0]);
		r->err = child_exec_set(nlh, buf, 8192, r);
		if (!r->err && sc.insns) {
			r->err = capfence_seccomp_apply(sc.prog, sc.len);
			if (r->err) {
				r->reason = -1;
				memcpy(r->message, sc_fail, sizeof(sc_fail));
			}
		}
		if (!r->err && h && h->child) {
			r->err = h->child(h->arg);
			if (r->err) {
				r->reason = -1;
				capfence__seterr(r->message, sizeof(r->message),
						 "cannot record the system calls: %s",
						 strerror(-r->err));
			}
		}
		if (!r->err) {
			if (strchr(path, '/'))
				execve(path, argv, envp ? envp : environ);
			else
				execvpe(path, argv, envp ? envp : environ);
			r->err = -errno;
			r->reason = -1;
			r->message[0] = '\0';
		}
		/* the parent reads the result; the write end closes at exit */
		if (write(pfd[1], r, sizeof(*r)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	sodium_memzero(req, CF_NL_BUFSZ);
	free(req);
	free(buf);
	free(sc.prog);
	got = spawn_wait(pfd[0], r, h);
	close(pfd[0]);
	if (got == 0) {		/* close-on-exec: the child exec'd */
		result_init(r);
		r->epoch_id = epoch_id;
		r->reason = CAPFENCE_R_OK;
		*pid = child;
		wait_bound(c, child, epoch_id);
		return 0;
	}
	/* a hook's child may wait on a call nobody answers any more */
	if (h)
		kill(child, SIGKILL);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(*r)) {
		result_init(r);
		r->err = -EIO;
		capfence__seterr(r->message, sizeof(r->message),
			  "the child died before it exec'd");
	} else if (!r->err) {
		r->err = -EIO;
	}
	if (r->err && !r->message[0] && r->reason < 0)
		capfence__seterr(r->message, sizeof(r->message), "%s: %s", path,
			  strerror(-r->err));
	return r->err;
}

/* ---- tasks ---------------------------------------------------------------------- */

static int parse_cap(const struct nlattr *nest, struct capfence_cap_info *c)
{
	const struct nlattr *tb[CAPFENCE_CAP_A_MAX + 1], *a;

	memset(c, 0, sizeof(*c));
	if (capfence__attrs_parse_nest(&cf_attrs_cap, nest, tb))
		return -EBADMSG;
	c->cap_id = get_u64(tb[CAPFENCE_CAP_A_CAP_ID]);
	c->class_id = tb[CAPFENCE_CAP_A_CLASS] ? get_u8(tb[CAPFENCE_CAP_A_CLASS]) : -1;
	c->epoch_id = get_u64(tb[CAPFENCE_CAP_A_EPOCH_ID]);
	c->key_id = get_u32(tb[CAPFENCE_CAP_A_KEY_ID]);
	c->from_pid = get_u32(tb[CAPFENCE_CAP_A_FROM_PID]);
	c->state = get_u32(tb[CAPFENCE_CAP_A_STATE]);
	mnl_attr_for_each_nested(a, nest) {
		int type = mnl_attr_get_type(a);

		if (type != CAPFENCE_CAP_A_NET && type != CAPFENCE_CAP_A_PATH)
			continue;
		if (c->n == CAPFENCE_MAX_CONSTRAINTS ||
		    get_constraint(&cf_attrs_cap, a, type == CAPFENCE_CAP_A_NET,
				   &c->constraints[c->n]))
			return -EBADMSG;
		c->n++;
	}
	return 0;
}

struct task_acc {
	struct capfence_task_info *ti;
	size_t cap;
};

/* the members of CAPFENCE_A_CAPS, one held capability each */
static int task_caps(struct task_acc *acc, const struct nlattr *arr)
{
	struct capfence_task_info *ti = acc->ti;
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, arr) {
		if (ti->n == acc->cap) {
			size_t cap = acc->cap ? acc->cap * 2 : 8;
			struct capfence_cap_info *v =
				realloc(ti->caps, cap * sizeof(*v));

			if (!v) {
				errno = ENOMEM;
				return -1;
			}
			ti->caps = v;
			acc->cap = cap;
		}
		if (parse_cap(a, &ti->caps[ti->n])) {
			errno = EBADMSG;
			return -1;
		}
		ti->n++;
	}
	return 0;
}

static int task_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1], *a;
	struct task_acc *acc = data;
	struct capfence_task_info *ti = acc->ti;

	if (parse_top(nlh, tb)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	/* a long list comes in several messages, CAPS in each */
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == CAPFENCE_A_CAPS && task_caps(acc, a))
			return MNL_CB_ERROR;
	if (tb[CAPFENCE_A_PID])
		ti->pid = get_u32(tb[CAPFENCE_A_PID]);
	if (tb[CAPFENCE_A_EPOCH_ID])
		ti->epoch_id = get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	if (tb[CAPFENCE_A_PENDING_EPOCH_ID])
		ti->pending_epoch_id = get_u64(tb[CAPFENCE_A_PENDING_EPOCH_ID]);
	if (tb[CAPFENCE_A_FENCE])
		ti->fence = get_u64(tb[CAPFENCE_A_FENCE]);
	return MNL_CB_OK;
}

int capfence_client_task_get(struct capfence_client *c, uint32_t pid,
			     struct capfence_task_info *out, char *err,
			     size_t errlen)
{
	struct task_acc acc = { out, 0 };
	struct nlmsghdr *nlh;
	int ret;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	nlh = begin(c, CAPFENCE_CMD_TASK_GET, 0);
	mnl_attr_put_u32(nlh, CAPFENCE_A_PID, pid);
	ret = simple(c, nlh, task_cb, &acc, err, errlen);
	if (ret)
		capfence_task_release(out);
	return ret;
}

void capfence_task_release(struct capfence_task_info *t)
{
	if (!t)
		return;
	free(t->caps);
	memset(t, 0, sizeof(*t));
}

/* ---- hooks ------------------------------------------------------------------------ */

int capfence_client_hooks_attach(struct capfence_client *c,
				 const int *link_fds, size_t n, char *err,
				 size_t errlen)
{
	struct nlmsghdr *nlh = begin(c, CAPFENCE_CMD_HOOKS_ATTACH, 0);
	struct nlattr *arr;
	size_t i;

	/* one nested array of link fds; a member's type is its index */
	arr = mnl_attr_nest_start(nlh, CAPFENCE_A_LINK_FDS);
	for (i = 0; i < n; i++)
		mnl_attr_put_u32(nlh, (uint16_t)(i + 1), (uint32_t)link_fds[i]);
	mnl_attr_nest_end(nlh, arr);
	return simple(c, nlh, NULL, NULL, err, errlen);
}

int capfence_client_hooks_detach(struct capfence_client *c, char *err,
				 size_t errlen)
{
	return simple(c, begin(c, CAPFENCE_CMD_HOOKS_DETACH, 0), NULL, NULL,
		      err, errlen);
}

/* ---- events ---------------------------------------------------------------------- */

static const char *const event_names[] = {
	[CAPFENCE_EV_NONE] = "none",
	[CAPFENCE_EV_DELEGATE_REJECT] = "delegate_reject",
	[CAPFENCE_EV_DELEGATE_OK] = "delegate_ok",
	[CAPFENCE_EV_EPOCH_ACTIVATE] = "epoch_activate",
	[CAPFENCE_EV_REVOKE] = "revoke",
	[CAPFENCE_EV_KEY_CHANGE] = "key_change",
	[CAPFENCE_EV_EPOCH_INSTALL] = "epoch_install",
	[CAPFENCE_EV_FLEET_APPLY] = "fleet_apply",
	[CAPFENCE_EV_FLEET_STATE] = "fleet_state",
	[CAPFENCE_EV_EPOCH_RETIRE] = "epoch_retire",
};

const char *capfence_event_name(int type)
{
	if (type < 0 || (size_t)type >= sizeof(event_names) / sizeof(event_names[0]))
		return "?";
	return event_names[type];
}

int capfence_events_open(struct capfence_events **out, char *err,
			 size_t errlen)
{
	struct capfence_events *ev;
	int grp, ret;

	*out = NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		capfence__seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = sock_open(&ev->s, err, errlen);
	if (ret) {
		free(ev);
		return ret;
	}
	grp = (int)ev->s.mcgrp;
	if (!grp) {
		capfence__seterr(err, errlen, "the module has no \"%s\" group",
			  CAPFENCE_GENL_MCGRP_EVENTS);
		ret = -ENOENT;
		goto fail;
	}
	if (mnl_socket_setsockopt(ev->s.sock, NETLINK_ADD_MEMBERSHIP, &grp,
				  sizeof(grp)) < 0) {
		ret = -errno;
		capfence__seterr(err, errlen, "cannot join the \"%s\" group: %s",
			  CAPFENCE_GENL_MCGRP_EVENTS, strerror(errno));
		goto fail;
	}
	*out = ev;
	return 0;
fail:
	sock_close(&ev->s);
	free(ev);
	return ret;
}

void capfence_events_close(struct capfence_events *ev)
{
	if (!ev)
		return;
	sock_close(&ev->s);
	free(ev);
}

int capfence_events_fd(const struct capfence_events *ev)
{
	return mnl_socket_get_fd(ev->s.sock);
}

/* 1 when nlh was an event (out filled), 0 when it was something else. */
static int parse_event(const struct nlmsghdr *nlh, uint16_t family,
		       struct capfence_event_info *out)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct genlmsghdr *g;

	if (nlh->nlmsg_type != family ||
	    nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*g)))
		return 0;
	g = mnl_nlmsg_get_payload(nlh);
	if (g->cmd != CAPFENCE_CMD_EVENT || parse_top(nlh, tb) ||
	    !tb[CAPFENCE_A_EVENT])
		return 0;
	memset(out, 0, sizeof(*out));
	out->type = (int)get_u32(tb[CAPFENCE_A_EVENT]);
	out->reason = (int)get_u32(tb[CAPFENCE_A_REASON]);
	out->pid = get_u32(tb[CAPFENCE_A_PID]);
	out->epoch_id = get_u64(tb[CAPFENCE_A_EPOCH_ID]);
	out->cap_id = get_u64(tb[CAPFENCE_A_CAP_ID]);
	out->fence = get_u64(tb[CAPFENCE_A_FENCE]);
	return 1;
}

int capfence_events_next(struct capfence_events *ev,
			 struct capfence_event_info *out, int timeout_ms)
{
	struct pollfd pfd;
	ssize_t got;
	int ret;

	for (;;) {
		while (ev->off < ev->len) {
			const struct nlmsghdr *nlh =
				(const void *)(ev->s.rbuf + ev->off);
			int left = (int)(ev->len - ev->off);

			if (!mnl_nlmsg_ok(nlh, left)) {
				ev->off = ev->len;
				break;
			}
			ev->off += NLMSG_ALIGN(nlh->nlmsg_len);
			if (parse_event(nlh, ev->s.family, out))
				return 0;
		}
		ev->off = ev->len = 0;
		pfd.fd = mnl_socket_get_fd(ev->s.sock);
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0)
			return -errno;
		if (!ret)
			return -ETIMEDOUT;
		got = recv(pfd.fd, ev->s.rbuf, CF_NL_BUFSZ, MSG_DONTWAIT);
		if (got < 0) {
			if (errno == EAGAIN)
				continue;
			return -errno;
		}
		ev->len = (size_t)got;
	}
}
