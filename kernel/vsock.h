/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsock mediation (vsock.c).
 */
#ifndef _CAPFENCE_VSOCK_H
#define _CAPFENCE_VSOCK_H

#include <linux/types.h>
#include "cred.h"

struct sock;
struct sockaddr;
struct msghdr;
int cf_vsock_connect(struct cf_cred *e, struct sock *sk, struct sockaddr *sa,
		     int len);
int cf_vsock_sendmsg(struct cf_cred *e, struct sock *sk, struct msghdr *msg);

#endif /* _CAPFENCE_VSOCK_H */
