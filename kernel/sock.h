/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Revalidation of sockets connected or bound under a capability (sock.c).
 */
#ifndef _CAPFENCE_SOCK_H
#define _CAPFENCE_SOCK_H

#include <linux/atomic.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock_types.h>
#include "cap.h"
#include "cred.h"
#include "memo.h"

struct sock;
struct sk_buff;
struct in6_addr;
struct cf_target;

/* a socket admitted through more grants than this fails closed */
#define CF_SOCK_GRANTS	8

/*
 * A tracked socket: the grants that admitted it. The front end keeps one
 * per tracked socket (sock_store.h).
 */
struct cf_sock {
	struct rhash_head node;		/* in the module's table */
	const struct sock *sk;		/* whose */
	spinlock_t lock;		/* orders writers of g and n */
	u32 n;				/* published with release semantics */
	struct cf_grant *g[CF_SOCK_GRANTS];	/* references held */
	struct rcu_head rcu;
};

int cf_sock_init(void);
void cf_sock_exit(void);
void cf_sock_target_v4(struct cf_target *t, const void *addr, __be16 port);
void cf_sock_target_v6(struct cf_target *t, const struct in6_addr *a,
		       __be16 port);
void cf_sock_target_vsock(struct cf_target *t, u32 cid, u32 port);
void cf_sock_local(const struct sock *sk, u16 port, struct cf_target *t);
int cf_sock_track(struct sock *sk, struct cf_grant *g);
int cf_sock_judge(struct cf_cred *e, struct sock *sk, struct cf_target *t,
		  bool track);
int cf_sock_judge_part(struct cf_cred *e, struct sock *sk,
		       struct cf_target *t, bool track, unsigned int *allowed);
int cf_sock_revalidate(struct sock *sk);
int cf_sock_rcv(struct sock *sk, struct sk_buff *skb);
void cf_sock_clone(const struct sock *sk, struct sock *newsk);
void cf_sock_free(struct sock *sk);

extern atomic_long_t cf_nr_socks;
extern atomic_long_t cf_socks_freed;

/**
 * cf_sock_gen() - how many tracked sockets have been freed so far
 *
 * A socket pointer seen tracked at one value is the same, still tracked
 * socket while the value has not moved: a tracked socket's entry is
 * removed, and this raised, before its memory can be reused.
 *
 * Return: the count.
 */
static inline unsigned long cf_sock_gen(void)
{
	return atomic_long_read(&cf_socks_freed);
}

/**
 * cf_nr_tracked_socks() - sockets whose grants are rechecked on use
 *
 * Return: the count; hooks stay attached while it is non-zero.
 */
static inline long cf_nr_tracked_socks(void)
{
	return atomic_long_read(&cf_nr_socks);
}

/**
 * cf_memo_sock_tracked() - does the memo know @sk already carries @g?
 * @e: the calling task's bound state
 * @sk: the socket an exercise was just allowed on
 * @g: the grant that allowed it
 *
 * A repeated connect or datagram on the same socket under the same grant
 * need not look the socket up to add a grant it has. A socket's grants
 * only grow until it is freed, and cf_sock_gen() moves before a tracked
 * socket's memory can be reused, so an equal pointer at an equal
 * generation is the same socket, still carrying @g.
 *
 * Inline: it is on the path of every repeated connect; the memo's
 * writer is cf_memo_sock_note() (decide.c).
 *
 * Return: true when tracking @sk under @g again can be skipped.
 */
static inline bool cf_memo_sock_tracked(const struct cf_cred *e,
					const struct sock *sk,
					const struct cf_grant *g)
{
	const struct cf_net_memo *m = &e->memo;
	unsigned int seq;
	bool same;

	if (!cf_memo_read_begin(&m->seq, &seq))
		return false;
	same = m->sk == sk && m->sk_grant == g && m->sk_gen == cf_sock_gen();
	return cf_memo_read_done(&m->seq, seq) && same;
}

#endif /* _CAPFENCE_SOCK_H */
