// SPDX-License-Identifier: GPL-2.0
/*
 * Revalidation of sockets connected or bound under a capability, and the
 * addresses of a socket as targets (for net.c's judgements and for the
 * records of denied rechecks). A socket
 * whose connect, bind, autobind or SCTP address was admitted by a token
 * grant remembers every such grant; each later send, receive and accept
 * checks them all again, so a revoke or fence move reaches established
 * connections and listeners, not only the next connect. A socket accepted
 * from a remembered listener inherits the listener's grants. Every packet
 * the stack queues to a remembered socket is checked too (cf_sock_rcv(),
 * softirq): once a grant behind the socket is invalid, nothing more is
 * delivered to it, whatever receive call is waiting. vsock sockets
 * (connected under vsock:connect, vsock.c) are rechecked on each send and
 * receive call, but their transports queue data without that hook: a
 * receive already waiting when the grant goes can still return data.
 *
 * Locking: entries are kept by the front end (sock_store.h: the module's
 * table keyed by the struct sock pointer, or a pointer in the built-in
 * LSM's sock blob). They are added from the hooks (task context, or
 * softirq for an accepted child), removed in sk_free_security (the socket
 * is dying), read under RCU (BPF programs hold it). An entry's grant
 * array only grows, under the entry's spinlock; readers load the count
 * with acquire semantics and need no lock. Grant
 * validity is read in a fence read section, except in softirq: there the
 * fence lock's writer may be the task interrupted on this CPU, so
 * cf_sock_rcv() reads each grant's state once without one. cf_socks_freed
 * only grows: it is raised when an entry is removed, ordered before the
 * socket's memory is freed (see cf_sock_gen()). Never sleeps.
 */
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/in6.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/icmp.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/af_vsock.h>
#include "cap.h"
#include "class.h"
#include "constraint.h"
#include "decide.h"
#include "sock.h"
#include "sock_store.h"
#include "compat.h"

atomic_long_t cf_nr_socks = ATOMIC_LONG_INIT(0);
atomic_long_t cf_socks_freed = ATOMIC_LONG_INIT(0);

static struct cf_sock *cf_sock_get(struct sock *sk)
{
	struct cf_sock *s, *old;

	s = cf_sock_store_find(sk);
	if (s)
		return s;
	s = kzalloc(sizeof(*s), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->sk = sk;
	spin_lock_init(&s->lock);
	old = cf_sock_store_insert(sk, s);
	if (old) {
		/* a racing first track of the same socket won, or failure */
		kfree(s);
		return old;
	}
	atomic_long_inc(&cf_nr_socks);
	return s;
}

static int cf_sock_add(struct cf_sock *s, struct cf_grant *g)
{
	/* pairs with the release below: slots under n are set */
	u32 i, n = smp_load_acquire(&s->n);
	int err = 0;

	/* the usual case, a repeated connect under the same grant: no lock */
	for (i = 0; i < n; i++)
		if (READ_ONCE(s->g[i]) == g)
			return 0;
	spin_lock_bh(&s->lock);
	for (i = 0; i < s->n; i++)
		if (s->g[i] == g)
			goto out;
	if (s->n == CF_SOCK_GRANTS) {
		err = -ENOBUFS;
		goto out;
	}
	refcount_inc(&g->ref);
	s->g[s->n] = g;
	/* pairs with the readers' acquire: the slot is set before it counts */
	smp_store_release(&s->n, s->n + 1);
out:
	spin_unlock_bh(&s->lock);
	return err;
}

/**
 * cf_sock_target_v4() - an IPv4 address and port as a target
 * @t: filled with family, address and port
 * @addr: the address (4 bytes, network order)
 * @port: the port, network order
 */
void cf_sock_target_v4(struct cf_target *t, const void *addr, __be16 port)
{
	t->family = 4;
	memcpy(t->addr, addr, 4);
	t->port = ntohs(port);
}

/**
 * cf_sock_target_v6() - an IPv6 address and port as a target
 * @t: filled with family, address and port
 * @a: the address; a v4-mapped one is judged as IPv4
 * @port: the port, network order
 */
void cf_sock_target_v6(struct cf_target *t, const struct in6_addr *a,
		       __be16 port)
{
	/* a v4-mapped address reaches the IPv4 host */
	if (ipv6_addr_v4mapped(a)) {
		cf_sock_target_v4(t, &a->s6_addr32[3], port);
		return;
	}
	t->family = 6;
	memcpy(t->addr, a, 16);
	t->port = ntohs(port);
}

/**
 * cf_sock_target_vsock() - a vsock CID and port as a target
 * @t: filled with family, CID and port
 * @cid: the CID
 * @port: the port; one above 65535 is judged as port 0, which only a
 *	  constraint for any port admits (the record names it whole)
 */
void cf_sock_target_vsock(struct cf_target *t, u32 cid, u32 port)
{
	t->family = CAPFENCE_FAMILY_VSOCK;
	memset(t->addr, 0, sizeof(t->addr));
	put_unaligned_be32(cid, t->addr);
	put_unaligned_be32(port, t->addr + 4);
	t->port = port <= U16_MAX ? port : 0;
}

/**
 * cf_sock_local() - the socket's local address with port @port
 * @sk: the socket (AF_INET or AF_INET6)
 * @port: the port (autobind: 0), host order
 * @t: filled with family, address and port
 */
void cf_sock_local(const struct sock *sk, u16 port, struct cf_target *t)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		cf_sock_target_v6(t, &sk->sk_v6_rcv_saddr, htons(port));
		return;
	}
#endif
	cf_sock_target_v4(t, &sk->sk_rcv_saddr, htons(port));
}

/* The address a connected socket reaches, for audit. */
static void cf_sock_peer(const struct sock *sk, struct cf_target *t)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		cf_sock_target_v6(t, &sk->sk_v6_daddr, sk->sk_dport);
		return;
	}
#endif
	cf_sock_target_v4(t, &sk->sk_daddr, sk->sk_dport);
}

/* The local address of a bound socket, for audit. */
static void cf_sock_bound(const struct sock *sk, struct cf_target *t)
{
	cf_sock_local(sk, inet_sk(sk)->inet_num, t);
}

/**
 * cf_sock_track() - remember the grant that admitted a socket operation
 * @sk: the socket
 * @g: the grant, or NULL when an open rule admitted it (nothing to do)
 *
 * Return: 0, -ENOMEM or -ENOBUFS (the operation then fails: fail closed).
 */
int cf_sock_track(struct sock *sk, struct cf_grant *g)
{
	struct cf_sock *s;

	if (!g)
		return 0;
	s = cf_sock_get(sk);
	if (IS_ERR(s))
		return PTR_ERR(s);
	return cf_sock_add(s, g);
}

/**
 * cf_sock_judge() - judge a socket's target, and remember what admitted it
 * @e: the bound caller's state
 * @sk: the socket
 * @t: the peer or local address, of the class it is judged for
 * @track: remember the admitting grant on @sk, so that a revoke or fence
 *	   move reaches the socket's later traffic
 *
 * BPF program context (net.c, vsock.c); never sleeps.
 *
 * Return: 0, -EACCES (recorded), or -ENOMEM/-ENOBUFS when the admitted
 * socket cannot be tracked (the exercise is then not counted allowed).
 */
int cf_sock_judge(struct cf_cred *e, struct sock *sk, struct cf_target *t,
		  bool track)
{
	unsigned int allowed = 0;
	int err = cf_sock_judge_part(e, sk, t, track, &allowed);

	/* @allowed is read after the judgement, in a statement of its own */
	return cf_exercise_admitted_if(err, allowed);
}

/**
 * cf_sock_judge_part() - one of several judgements of one operation
 * @e: the bound caller's state
 * @sk: the socket
 * @t: one address the operation reaches
 * @track: as cf_sock_judge()
 * @allowed: raised by one for an allow under a grant, which the caller
 *	     counts (cf_exercise_admitted()) once every judgement of the
 *	     operation allowed it: an operation refused at its second
 *	     address is never counted allowed at its first
 *
 * BPF program context; never sleeps.
 *
 * Return: as cf_sock_judge(). A grant tracked on @sk by an earlier part
 * stays there when a later part refuses: one more grant to recheck.
 */
int cf_sock_judge_part(struct cf_cred *e, struct sock *sk,
		       struct cf_target *t, bool track, unsigned int *allowed)
{
	unsigned long gen;
	struct cf_grant *g;
	int err;

	/* an allow under a grant is counted by the caller, never taken back */
	t->tracks = true;
	err = cf_exercise(e, t, &g);
	if (err || !g)
		return err;
	/* the same socket under the same grant as last time: tracked */
	if (track && !cf_memo_sock_tracked(e, sk, g)) {
		gen = cf_sock_gen();
		err = cf_sock_track(sk, g);
		/* the operation fails closed, not counted allowed */
		if (err)
			return err;
		cf_memo_sock_note(e, sk, g, gen);
	}
	(*allowed)++;
	return 0;
}

/* Name @obj, a socket, for the record of a denied recheck. */
static void cf_sock_name(struct cf_target *t, const void *obj, char *buf)
{
	const struct sock *sk = obj;

	/* a vsock socket is tracked for its connect only (vsock.c) */
	if (sk->sk_family == AF_VSOCK)
		cf_sock_target_vsock(t, vsock_sk(sk)->remote_addr.svm_cid,
				     vsock_sk(sk)->remote_addr.svm_port);
	/* an SCTP socket's peers live in its associations, not in the sock */
	else if (sk->sk_protocol == IPPROTO_SCTP)
		t->what = "socket:sctp";
	else if (cf_class(t->class_id)->net_end == CF_NET_PEER)
		cf_sock_peer(sk, t);
	else
		cf_sock_bound(sk, t);
}

/**
 * cf_sock_revalidate() - are the grants behind a socket still valid?
 * @sk: the socket being used
 *
 * Return: 0, or -EACCES (audited, target the socket's peer or local
 * address) when a grant that admitted the socket was revoked or fenced.
 */
int cf_sock_revalidate(struct sock *sk)
{
	struct cf_sock *s;

	if (!cf_nr_tracked_socks())
		return 0;
	s = cf_sock_store_find(sk);
	if (!s)
		return 0;
	/* pairs with cf_sock_add(): slots below n are set */
	return cf_exercise_recheck(s->g, smp_load_acquire(&s->n), cf_sock_name,
				   sk);
}

/*
 * A connection request (a SYN) to a TCP listener that takes no more: TCP
 * drops what the filter refuses without a word, so the peer's connect()
 * would wait out every SYN retry, over two minutes, whatever epoch it is
 * bound to. Port unreachable ends it at once with ECONNREFUSED (a peer
 * in SYN_SENT takes it as a hard error), as for a port nobody listens on.
 * The stack's rate limits for ICMP apply (none on loopback).
 */
static void cf_sock_refuse_request(struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);

	if (!th->syn || th->ack || th->rst)
		return;
	if (skb->protocol == htons(ETH_P_IP))
		icmp_send(skb, ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, 0);
#if IS_ENABLED(CONFIG_IPV6)
	else if (skb->protocol == htons(ETH_P_IPV6))
		icmpv6_send(skb, ICMPV6_DEST_UNREACH, ICMPV6_PORT_UNREACH, 0);
#endif
}

/**
 * cf_sock_rcv() - may the stack queue a packet to @sk?
 * @sk: a socket cf_sock_maybe() did not rule out
 * @skb: the packet (a TCP segment starts at its TCP header)
 *
 * socket_sock_rcv_skb, for every packet delivered to a socket (TCP
 * segments and connection requests, UDP and ping datagrams, SCTP
 * packets), in softirq. A socket connected or bound under a grant that is
 * no longer valid takes nothing more, so a receive that was admitted
 * before a revoke (a blocking recvmmsg() is judged once, at its start)
 * delivers only what had arrived before it. A refused packet also sets
 * the socket's error to EACCES and wakes its waiters: a blocked receive
 * returns it, a send blocked for buffer space too, and poll() reports it.
 * The packet belongs to no task: it is neither audited nor counted as an
 * exercise (the stack counts it as a socket filter drop); the task's next
 * use of the socket is refused and audited by the hooks that recheck it.
 * A socket no file refers to any more (closed: SOCK_DEAD) has no reader:
 * its packets pass, so that its close can finish (TCP's FIN and ACKs) and
 * free it, with its entry and the grants the entry holds. A TCP socket in
 * SYN_SENT takes the answer to its handshake (a segment without payload):
 * the connect() waiting for it was admitted before the revoke, and would
 * otherwise wait out every SYN retry; the connection it makes is refused
 * at its first use. A connection request refused at a TCP listener is
 * answered with port unreachable, so that the peer's connect() fails with
 * ECONNREFUSED instead of waiting out its SYN retries
 * (cf_sock_refuse_request()).
 *
 * Each grant's state is read once, without a fence read section (see the
 * top of this file): a revoke, activation or key removal that has
 * returned is seen, and one under way is not waited for.
 *
 * Return: 0, or -EACCES: drop the packet.
 */
int cf_sock_rcv(struct sock *sk, struct sk_buff *skb)
{
	enum capfence_reason r = CAPFENCE_R_OK;
	struct cf_sock *s;
	u32 i, n;

	if (sock_flag(sk, SOCK_DEAD))
		return 0;
	/*
	 * A connect() admitted before the revoke, still in its handshake:
	 * its wait ends on a state change only (sk_err does not end it), so
	 * the handshake's answer passes, and the call ends as any call under
	 * way when a revoke returns. Only a segment without payload: a
	 * SYN-ACK may carry data for a Fast Open client, which is dropped.
	 */
	if (sk->sk_protocol == IPPROTO_TCP &&
	    READ_ONCE(sk->sk_state) == TCP_SYN_SENT &&
	    skb->len <= tcp_hdrlen(skb))
		return 0;
	s = cf_sock_store_find(sk);
	if (!s)
		return 0;
	/* pairs with cf_sock_add(): slots below n are set */
	n = smp_load_acquire(&s->n);
	for (i = 0; i < n && r == CAPFENCE_R_OK; i++)
		r = cf_grant_state(s->g[i]);
	if (r == CAPFENCE_R_OK)
		return 0;
	if (sk->sk_protocol == IPPROTO_TCP &&
	    READ_ONCE(sk->sk_state) == TCP_LISTEN)
		cf_sock_refuse_request(skb);
	if (READ_ONCE(sk->sk_err) != EACCES) {
		WRITE_ONCE(sk->sk_err, EACCES);
		sk_error_report(sk);
	}
	return -EACCES;
}

/* the memory cgroup @sk is charged to, or NULL */
static struct mem_cgroup *cf_sock_memcg(const struct sock *sk)
{
#ifdef CONFIG_MEMCG
	return sk->sk_memcg;
#else
	return NULL;
#endif
}

/**
 * cf_sock_clone() - a socket made from another inherits its grants
 * @sk: the listener, or the SCTP socket an association is peeled off
 * @newsk: the new connection (softirq or task context)
 *
 * Called for an accepted TCP connection (sk_clone_security) and for an
 * accepted or peeled-off SCTP association (sctp_sk_clone). Neither hook
 * can fail: should the entry not be allocated, the new socket is not
 * rechecked (threat-model.md).
 */
void cf_sock_clone(const struct sock *sk, struct sock *newsk)
{
	struct mem_cgroup *memcg;
	struct cf_sock *s, *ns;
	u32 i, n;

	s = cf_sock_store_find(sk);
	if (!s)
		return;
	/* pairs with cf_sock_add(): slots below n are set */
	n = smp_load_acquire(&s->n);
	if (!n)
		return;
	/*
	 * In softirq no task is charged: the entry is the listener's
	 * cgroup's, as the listener's own is (its sandbox made it)
	 */
	memcg = set_active_memcg(cf_sock_memcg(sk));
	ns = cf_sock_get(newsk);
	set_active_memcg(memcg);
	if (IS_ERR(ns))
		return;
	for (i = 0; i < n; i++)
		cf_sock_add(ns, s->g[i]);
}

static void cf_sock_release(struct cf_sock *s)
{
	u32 i;

	for (i = 0; i < s->n; i++)
		cf_grant_put(s->g[i]);
}

/**
 * cf_sock_free() - forget a socket that is being freed
 * @sk: the socket
 */
void cf_sock_free(struct sock *sk)
{
	struct cf_sock *s;

	s = cf_sock_store_remove(sk);
	if (!s)
		return;
	/* before @sk's memory is freed and reused: see cf_sock_gen() */
	atomic_long_inc(&cf_socks_freed);
	/* the raise, then the free of the entry and (later) of the socket */
	smp_mb__after_atomic();
	atomic_long_dec(&cf_nr_socks);
	cf_sock_release(s);
	kfree_rcu(s, rcu);
}

/**
 * cf_sock_init() - create the front end's store of tracked sockets
 *
 * Return: 0 or -ENOMEM.
 */
int cf_sock_init(void)
{
	return cf_sock_store_init();
}

/**
 * cf_sock_exit() - destroy the store at module exit (empty by then)
 */
void cf_sock_exit(void)
{
	cf_sock_store_exit(cf_sock_release);
}
