/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where tracked sockets' entries are kept: the front end's. This is the
 * module's (sock_store.c): a loadable module owns no sock security blob,
 * so entries live in an rhashtable keyed by the struct sock pointer,
 * behind a counting filter. The built-in LSM keeps a pointer to the entry
 * in the sock blob instead and brings its own sock_store.h with the same
 * functions.
 *
 * Locking: entries are inserted from the hooks (task context, or softirq
 * for an accepted child) and removed in sk_free_security; lookups run
 * under RCU (BPF programs hold it). A filter counter is raised before an
 * entry is inserted and lowered after it is removed, so a zero counter
 * means the socket has no entry.
 */
#ifndef _CAPFENCE_SOCK_STORE_H
#define _CAPFENCE_SOCK_STORE_H

#include <linux/atomic.h>
#include <linux/hash.h>
#include "sock.h"

#define CF_SOCK_HINT_BITS	12
extern atomic_t cf_sock_hint[1 << CF_SOCK_HINT_BITS];

static inline atomic_t *cf_sock_hint_of(const struct sock *sk)
{
	return &cf_sock_hint[hash_ptr(sk, CF_SOCK_HINT_BITS)];
}

/**
 * cf_sock_maybe() - might @sk be remembered?
 * @sk: a socket
 *
 * Inline: every packet the stack delivers asks it (socket_sock_rcv_skb).
 *
 * Return: false when @sk certainly has no entry (nearly every socket).
 */
static inline bool cf_sock_maybe(const struct sock *sk)
{
	return atomic_read(cf_sock_hint_of(sk));
}

struct cf_sock *cf_sock_store_find(const struct sock *sk);
struct cf_sock *cf_sock_store_insert(struct sock *sk, struct cf_sock *s);
struct cf_sock *cf_sock_store_remove(struct sock *sk);
int cf_sock_store_init(void);
void cf_sock_store_exit(void (*release)(struct cf_sock *s));

#endif /* _CAPFENCE_SOCK_STORE_H */
