/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network mediation (net.c).
 */
#ifndef _CAPFENCE_NET_H
#define _CAPFENCE_NET_H

#include <linux/types.h>
#include "cred.h"

struct socket;
struct sockaddr;
struct msghdr;
struct sock;
int cf_net_connect(struct cf_cred *e, struct socket *sock,
		   struct sockaddr *sa, int len);
int cf_net_bind(struct cf_cred *e, struct socket *sock, struct sockaddr *sa,
		int len);
int cf_net_listen(struct cf_cred *e, struct socket *sock);
int cf_net_sendmsg(struct cf_cred *e, struct socket *sock, struct msghdr *msg);
int cf_net_create(struct cf_cred *e, int family, int type, int protocol);
int cf_net_setsockopt(struct cf_cred *e, struct socket *sock, int level,
		      int optname);
int cf_net_sctp(struct cf_cred *e, struct sock *sk, int optname,
		struct sockaddr *sa, int len);

#endif /* _CAPFENCE_NET_H */
