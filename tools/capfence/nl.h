/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small generic netlink client for the capfence family on libmnl:
 * request building, replies through callbacks, extack messages kept.
 */
#ifndef CAPFENCE_NL_H
#define CAPFENCE_NL_H

#include <stdbool.h>
#include <stdint.h>
#include <libmnl/libmnl.h>
#include <uapi/linux/capfence.h>

#define CF_NL_BUFSZ (64 * 1024)

struct cf_nl {
	struct mnl_socket *sock;
	uint16_t family;
	uint32_t mcgrp_events;
	uint32_t portid;
	uint32_t seq;
	char ext[256];		/* extack message of the last error, or "" */
	char *buf;		/* CF_NL_BUFSZ bytes */
};

/* Open a socket and resolve the family. Returns 0 or -errno; -ENOENT when
 * capfence.ko is not loaded. */
int cf_nl_open(struct cf_nl *nl);
void cf_nl_close(struct cf_nl *nl);

/* Start a request for @cmd in nl->buf; NLM_F_REQUEST|NLM_F_ACK|@flags. */
struct nlmsghdr *cf_nl_req(struct cf_nl *nl, uint8_t cmd, uint16_t flags);

/* Send @nlh and process every reply with @cb until the ACK.
 * Returns 0 or -errno (the kernel's error); nl->ext holds its message. */
int cf_nl_talk(struct cf_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
	       void *data);

/* Subscribe to the events group; then cf_nl_recv_events() loops. */
int cf_nl_subscribe(struct cf_nl *nl);
int cf_nl_recv_events(struct cf_nl *nl, mnl_cb_t cb, void *data);

/* The module's state and counters (CAPFENCE_CMD_STATUS_GET). */
struct cf_status {
	char version[32];
	uint32_t abi;
	bool attached;
	uint64_t fence, max_epoch, active_epoch;
	uint64_t bound, held, delegate_ok, exercise_allow;
	uint64_t delegate_reject[__CAPFENCE_R_MAX];	/* by reason */
	uint64_t exercise_deny[__CAPFENCE_R_MAX];	/* by reason */
	uint64_t cred_bytes, cap_bytes;
};

int cf_nl_status(struct cf_nl *nl, struct cf_status *s);

/* Parse the attributes of a capfence message into tb[CAPFENCE_A_MAX + 1]. */
int cf_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb);
/* Parse a nest into tb[max + 1]. */
int cf_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
		       unsigned int max);

#endif
