/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the built-in LSM keeps a tracked socket's entry: a pointer in the
 * socket's security blob. No table and no lookup; every socket pays one
 * pointer, and only a tracked socket an entry. The module keeps the same
 * entries in a table instead (kernel/sock_store.h).
 *
 * Locking: the pointer is published with a full-barrier cmpxchg() (a
 * racing first track of the same socket finds the winner's entry), read
 * with rcu_dereference() under RCU and cleared with xchg() in
 * sk_free_security, before the blob and the socket are freed; sock.c
 * frees the entry after a grace period.
 */
#ifndef _CAPFENCE_SOCK_STORE_H
#define _CAPFENCE_SOCK_STORE_H

#include <linux/err.h>
#include <linux/lsm_hooks.h>
#include <linux/rcupdate.h>
#include <net/sock.h>
#include "sock.h"

extern struct lsm_blob_sizes capfence_blob_sizes;

/* the slot of @sk's blob that points to its entry */
static inline struct cf_sock __rcu **cf_sock_slot(const struct sock *sk)
{
	return sk->sk_security + capfence_blob_sizes.lbs_sock;
}

/* false: @sk has no entry (nearly every socket) */
static inline bool cf_sock_maybe(const struct sock *sk)
{
	return sk->sk_security && rcu_access_pointer(*cf_sock_slot(sk));
}

/**
 * cf_sock_store_find() - the entry of @sk
 * @sk: the socket
 *
 * Caller holds RCU.
 *
 * Return: the entry or NULL.
 */
static inline struct cf_sock *cf_sock_store_find(const struct sock *sk)
{
	return sk->sk_security ? rcu_dereference(*cf_sock_slot(sk)) : NULL;
}

/**
 * cf_sock_store_insert() - publish @s as the entry of @sk
 * @sk: the socket
 * @s: its new entry
 *
 * Return: NULL when @s was published; the entry a racing insert published
 * first; ERR_PTR(-ENOMEM) for a socket without a blob.
 */
static inline struct cf_sock *cf_sock_store_insert(struct sock *sk,
						   struct cf_sock *s)
{
	if (!sk->sk_security)
		return ERR_PTR(-ENOMEM);
	return unrcu_pointer(cmpxchg(cf_sock_slot(sk), NULL,
				     RCU_INITIALIZER(s)));
}

/**
 * cf_sock_store_remove() - unpublish the entry of a socket being freed
 * @sk: the socket
 *
 * Return: the entry, which readers may hold until a grace period ends,
 * or NULL when @sk had none.
 */
static inline struct cf_sock *cf_sock_store_remove(struct sock *sk)
{
	if (!sk->sk_security)
		return NULL;
	return unrcu_pointer(xchg(cf_sock_slot(sk), NULL));
}

/* no table to create */
static inline int cf_sock_store_init(void)
{
	return 0;
}

/* built in, never unloaded */
static inline void cf_sock_store_exit(void (*release)(struct cf_sock *s))
{
}

#endif /* _CAPFENCE_SOCK_STORE_H */
