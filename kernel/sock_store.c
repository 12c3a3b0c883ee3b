// SPDX-License-Identifier: GPL-2.0
/*
 * The module's store of tracked sockets (sock_store.h): an rhashtable
 * keyed by the struct sock pointer, behind a counting filter. A socket's
 * entry is removed in sk_free_security, before its memory can be reused,
 * so a pointer key never aliases a newer socket.
 *
 * Locking: the table takes its own bucket locks for inserts and removes;
 * lookups run under RCU (BPF programs hold it) and entries are freed by
 * sock.c after a grace period. The filter counter of a socket is raised
 * before its entry is inserted and lowered after it is removed. Never
 * sleeps, except init and exit.
 */
#include <linux/rhashtable.h>
#include <linux/slab.h>
#include "ptrtable.h"
#include "sock_store.h"

atomic_t cf_sock_hint[1 << CF_SOCK_HINT_BITS];
static struct rhashtable cf_socks;

static const struct rhashtable_params cf_sock_params =
	CF_PTR_TABLE_PARAMS(struct cf_sock, sk, node);

/**
 * cf_sock_store_find() - the entry of @sk
 * @sk: the socket
 *
 * Caller holds RCU.
 *
 * Return: the entry or NULL.
 */
struct cf_sock *cf_sock_store_find(const struct sock *sk)
{
	return rhashtable_lookup(&cf_socks, &sk, cf_sock_params);
}

/**
 * cf_sock_store_insert() - publish @s as the entry of @sk
 * @sk: the socket
 * @s: its new entry
 *
 * Return: NULL when @s was inserted; the entry a racing insert published
 * first, or an ERR_PTR() (@s was not inserted).
 */
struct cf_sock *cf_sock_store_insert(struct sock *sk, struct cf_sock *s)
{
	struct cf_sock *old;

	/* before the entry can be found: see cf_sock_maybe() */
	atomic_inc(cf_sock_hint_of(sk));
	old = rhashtable_lookup_get_insert_fast(&cf_socks, &s->node,
						cf_sock_params);
	if (old)
		atomic_dec(cf_sock_hint_of(sk));
	return old;
}

/**
 * cf_sock_store_remove() - unpublish the entry of a socket being freed
 * @sk: the socket
 *
 * Readers may hold the entry until a grace period ends.
 *
 * Return: the entry removed, or NULL when @sk had none.
 */
struct cf_sock *cf_sock_store_remove(struct sock *sk)
{
	struct cf_sock *s = rhashtable_lookup(&cf_socks, &sk, cf_sock_params);

	if (!s || rhashtable_remove_fast(&cf_socks, &s->node, cf_sock_params))
		return NULL;
	/* after the entry is gone: see cf_sock_maybe() */
	atomic_dec(cf_sock_hint_of(sk));
	return s;
}

/**
 * cf_sock_store_init() - create the table
 *
 * Return: 0 or -ENOMEM.
 */
int cf_sock_store_init(void)
{
	return rhashtable_init(&cf_socks, &cf_sock_params);
}

struct cf_sock_releaser {
	void (*release)(struct cf_sock *s);
};

static void cf_sock_free_entry(void *ptr, void *arg)
{
	const struct cf_sock_releaser *r = arg;

	r->release(ptr);
	kfree(ptr);
}

/**
 * cf_sock_store_exit() - destroy the table at module exit (empty by then)
 * @release: what drops one entry's grants
 */
void cf_sock_store_exit(void (*release)(struct cf_sock *s))
{
	struct cf_sock_releaser r = { release };

	rhashtable_free_and_destroy(&cf_socks, cf_sock_free_entry, &r);
}
