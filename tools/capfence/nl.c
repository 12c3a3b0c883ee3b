// SPDX-License-Identifier: GPL-2.0
/* Generic netlink client for the capfence family, on libmnl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include "nl.h"

struct cf_family_info {
	uint16_t id;
	uint32_t mcgrp;
};

static int cf_mcgrp_cb(const struct nlattr *attr, void *data)
{
	struct cf_family_info *fi = data;
	const struct nlattr *a;
	const char *name = NULL;
	uint32_t id = 0;

	mnl_attr_for_each_nested(a, attr) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME)
			name = mnl_attr_get_str(a);
		else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID)
			id = mnl_attr_get_u32(a);
	}
	if (name && !strcmp(name, CAPFENCE_GENL_MCGRP_EVENTS))
		fi->mcgrp = id;
	return MNL_CB_OK;
}

static int cf_family_attr(const struct nlattr *attr, void *data)
{
	struct cf_family_info *fi = data;
	const struct nlattr *grp;

	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		fi->id = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(grp, attr)
			cf_mcgrp_cb(grp, fi);
		break;
	}
	return MNL_CB_OK;
}

static int cf_family_cb(const struct nlmsghdr *nlh, void *data)
{
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), cf_family_attr,
			      data);
}

static int cf_ext_attr(const struct nlattr *attr, void *data)
{
	struct cf_nl *nl = data;

	if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		snprintf(nl->ext, sizeof(nl->ext), "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

struct cf_talk {
	struct cf_nl *nl;
	mnl_cb_t cb;
	void *data;
};

static int cf_err_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	struct cf_nl *nl = ((struct cf_talk *)data)->nl;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		mnl_attr_parse(nlh, sizeof(*e), cf_ext_attr, nl);
	if (!e->error)
		return MNL_CB_STOP;
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int cf_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int cf_done_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)data;
	/* a dump interrupted by a change must not pass as complete */
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
		errno = EINTR;
		return MNL_CB_ERROR;
	}
	return MNL_CB_STOP;
}

static int cf_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct cf_talk *t = data;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
		errno = EINTR;
		return MNL_CB_ERROR;
	}
	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

static int cf_run(struct cf_nl *nl, uint32_t seq, mnl_cb_t cb, void *data)
{
	struct cf_talk t = { nl, cb, data };
	int ret;

	for (;;) {
		mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
			[NLMSG_NOOP] = cf_noop_cb,
			[NLMSG_ERROR] = cf_err_cb,
			[NLMSG_DONE] = cf_done_cb,
		};

		ret = mnl_socket_recvfrom(nl->sock, nl->buf, CF_NL_BUFSZ);
		if (ret < 0)
			return -errno;
		errno = 0;
		ret = mnl_cb_run2(nl->buf, ret, seq, nl->portid, cf_data_cb, &t,
				  ctl, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

int cf_nl_talk(struct cf_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void *data)
{
	nl->ext[0] = '\0';
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return cf_run(nl, nlh->nlmsg_seq, cb, data);
}

struct nlmsghdr *cf_nl_req(struct cf_nl *nl, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = nl->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = nl->family == GENL_ID_CTRL ? 1 : CAPFENCE_GENL_VERSION;
	return nlh;
}

int cf_nl_open(struct cf_nl *nl)
{
	struct cf_family_info fi = { 0, 0 };
	struct nlmsghdr *nlh;
	int one = 1, err;

	memset(nl, 0, sizeof(*nl));
	nl->buf = malloc(CF_NL_BUFSZ);
	if (!nl->buf)
		return -ENOMEM;
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock) {
		err = -errno;
		goto fail;
	}
	if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		goto fail;
	}
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = (uint32_t)time(NULL);
	nl->family = GENL_ID_CTRL;
	nlh = cf_nl_req(nl, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, CAPFENCE_GENL_NAME);
	err = cf_nl_talk(nl, nlh, cf_family_cb, &fi);
	if (err)
		goto fail;
	nl->family = fi.id;
	nl->mcgrp_events = fi.mcgrp;
	return 0;
fail:
	cf_nl_close(nl);
	return err;
}

void cf_nl_close(struct cf_nl *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	free(nl->buf);
	nl->sock = NULL;
	nl->buf = NULL;
}

int cf_nl_subscribe(struct cf_nl *nl)
{
	int grp = (int)nl->mcgrp_events;

	if (!grp)
		return -ENOENT;
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP, &grp,
				  sizeof(grp)) < 0)
		return -errno;
	return 0;
}

int cf_nl_recv_events(struct cf_nl *nl, mnl_cb_t cb, void *data)
{
	int ret;

	for (;;) {
		ret = mnl_socket_recvfrom(nl->sock, nl->buf, CF_NL_BUFSZ);
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(nl->buf, ret, 0, 0, cb, data);
		if (ret == MNL_CB_ERROR)
			return -errno;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

struct cf_parse {
	const struct nlattr **tb;
	unsigned int max;
};

static int cf_parse_attr(const struct nlattr *attr, void *data)
{
	struct cf_parse *p = data;
	unsigned int type = mnl_attr_get_type(attr);

	/* repeated attributes are walked by their users; keep the first */
	if (type <= p->max && !p->tb[type])
		p->tb[type] = attr;
	return MNL_CB_OK;
}

int cf_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	struct cf_parse p = { tb, CAPFENCE_A_MAX };

	memset(tb, 0, sizeof(*tb) * (CAPFENCE_A_MAX + 1));
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), cf_parse_attr,
			      &p) == MNL_CB_ERROR ? -EBADMSG : 0;
}

int cf_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       unsigned int max)
{
	struct cf_parse p = { tb, max };

	memset(tb, 0, sizeof(*tb) * (max + 1));
	return mnl_attr_parse_nested(nest, cf_parse_attr, &p) == MNL_CB_ERROR ?
	       -EBADMSG : 0;
}

static void get_reasons(const struct nlattr *nest, uint64_t *out)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		unsigned int t = mnl_attr_get_type(a);

		if (t < __CAPFENCE_R_MAX &&
		    mnl_attr_validate(a, MNL_TYPE_U64) == 0)
			out[t] = mnl_attr_get_u64(a);
	}
}

static uint64_t get_u64(const struct nlattr *a)
{
	return a && mnl_attr_validate(a, MNL_TYPE_U64) == 0 ?
	       mnl_attr_get_u64(a) : 0;
}

static int status_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CAPFENCE_A_MAX + 1];
	const struct nlattr *st[CAPFENCE_STATS_A_MAX + 1];
	struct cf_status *s = data;

	if (cf_nl_parse(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[CAPFENCE_A_VERSION])
		snprintf(s->version, sizeof(s->version), "%s",
			 mnl_attr_get_str(tb[CAPFENCE_A_VERSION]));
	if (tb[CAPFENCE_A_ABI])
		s->abi = mnl_attr_get_u32(tb[CAPFENCE_A_ABI]);
	if (tb[CAPFENCE_A_HOOKS_ATTACHED])
		s->attached = mnl_attr_get_u8(tb[CAPFENCE_A_HOOKS_ATTACHED]);
	s->fence = get_u64(tb[CAPFENCE_A_FENCE]);
	s->max_epoch = get_u64(tb[CAPFENCE_A_MAX_EPOCH_ID]);
	s->active_epoch = get_u64(tb[CAPFENCE_A_ACTIVE_EPOCH_ID]);
	if (tb[CAPFENCE_A_STATS] &&
	    !cf_nl_parse_nested(tb[CAPFENCE_A_STATS], st, CAPFENCE_STATS_A_MAX)) {
		s->bound = get_u64(st[CAPFENCE_STATS_A_BOUND_CREDS]);
		s->held = get_u64(st[CAPFENCE_STATS_A_HELD_CAPS]);
		s->delegate_ok = get_u64(st[CAPFENCE_STATS_A_DELEGATE_OK]);
		s->exercise_allow = get_u64(st[CAPFENCE_STATS_A_EXERCISE_ALLOW]);
		s->cred_bytes = get_u64(st[CAPFENCE_STATS_A_CRED_BYTES]);
		s->cap_bytes = get_u64(st[CAPFENCE_STATS_A_CAP_BYTES]);
		if (st[CAPFENCE_STATS_A_DELEGATE_REJECT])
			get_reasons(st[CAPFENCE_STATS_A_DELEGATE_REJECT],
				    s->delegate_reject);
		if (st[CAPFENCE_STATS_A_EXERCISE_DENY])
			get_reasons(st[CAPFENCE_STATS_A_EXERCISE_DENY],
				    s->exercise_deny);
	}
	return MNL_CB_OK;
}

int cf_nl_status(struct cf_nl *nl, struct cf_status *s)
{
	memset(s, 0, sizeof(*s));
	return cf_nl_talk(nl, cf_nl_req(nl, CAPFENCE_CMD_STATUS_GET, 0),
			  status_cb, s);
}
