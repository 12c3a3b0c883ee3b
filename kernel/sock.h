/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Revalidation of sockets connected or bound under a capability (sock.c).
 */
#ifndef _CAPFENCE_SOCK_H
#define _CAPFENCE_SOCK_H

#include <linux/atomic.h>
#include "cap.h"

struct sock;

int cf_sock_init(void);
void cf_sock_exit(void);
int cf_sock_track(struct sock *sk, struct cf_grant *g);
int cf_sock_revalidate(struct sock *sk);
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

#endif /* _CAPFENCE_SOCK_H */
