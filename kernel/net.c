// SPDX-License-Identifier: GPL-2.0
/*
 * Network mediation: net:connect and net:bind for AF_INET and AF_INET6
 * sockets (AF_VSOCK connects and sends go to vsock.c) on every path the
 * stack offers, not only connect() and bind():
 * sendmsg with an address (datagrams, TCP Fast Open, SCTP implicit
 * association), SCTP address lists, bind with any family value the stack
 * accepts, autobind at listen() and at a datagram socket's first send. Raw
 * and packet sockets, whose headers the task writes itself, and every
 * family and protocol not judged end to end (MPTCP, whose subflows the
 * kernel makes) are refused while a net class is mediated. Sockets
 * connected or bound under a capability are remembered (sock.c) and
 * rechecked on every send, receive and accept.
 *
 * The address is read the way the stack will read it: AF_UNSPEC counts as
 * AF_INET where the IPv4 stack accepts it so (bind, UDP and raw sendmsg on
 * an AF_INET socket), and an AF_INET address on an AF_INET6 socket reaches
 * the IPv4 host. An address the stack will reject is left to the stack.
 * An unspecified peer names this host, at addresses the stack picks when
 * it routes (cf_net_judge_peer()); a local "::" on a socket that is not
 * IPv6-only takes IPv4 as well (cf_net_judge_local()). sendmmsg() asks
 * the LSM once for a run of messages to one address, so such a batch is
 * refused (cf_net_sendmsg()).
 *
 * Locking and context: called from the kfuncs (BPF program context: RCU
 * read lock held, never sleeps). Decisions read grant state in a fence
 * read section (decide.c).
 */
#include <linux/bitops.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ipv6.h>
#include <linux/net.h>
#include <linux/sctp.h>
#include <linux/socket.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include "cap.h"
#include "class.h"
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "net.h"
#include "sock.h"
#include "vsock.h"
#include "compat.h"

static bool cf_inet(const struct sock *sk)
{
	return sk && (sk->sk_family == AF_INET || sk->sk_family == AF_INET6);
}

/**
 * cf_net_addr() - the peer or local address a sockaddr names
 * @sk: the socket (AF_INET or AF_INET6)
 * @sa: the address
 * @len: its length
 * @unspec_inet: AF_UNSPEC means AF_INET on an AF_INET socket (bind, UDP
 *		 and raw sendmsg); false where it means "disconnect"
 * @t: filled with family, address and port
 *
 * Return: 0, or -ENOENT when the stack will not read @sa as an address.
 */
static int cf_net_addr(const struct sock *sk, const struct sockaddr *sa,
		       int len, bool unspec_inet, struct cf_target *t)
{
	sa_family_t family;

	if (!sa || len < (int)offsetofend(struct sockaddr, sa_family))
		return -ENOENT;
	family = sa->sa_family;
	if (family == AF_UNSPEC && unspec_inet && sk->sk_family == AF_INET)
		family = AF_INET;
	if (family == AF_INET && len >= (int)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const void *)sa;

		cf_sock_target_v4(t, &sin->sin_addr, sin->sin_port);
		return 0;
	}
	if (family == AF_INET6 && len >= SIN6_LEN_RFC2133) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		cf_sock_target_v6(t, &sin6->sin6_addr, sin6->sin6_port);
		return 0;
	}
	return -ENOENT;
}

/*
 * @t's address is the unspecified one, 0.0.0.0 or ::. Inline and without
 * a loop: every connect, bind and send with an address asks it.
 */
static inline bool cf_net_unspec(const struct cf_target *t)
{
	const u8 *a = t->addr;

	if (get_unaligned((const u32 *)a))
		return false;
	return t->family == 4 ||
	       !(get_unaligned((const u32 *)(a + 4)) |
		 get_unaligned((const u64 *)(a + 8)));
}

/* judge @t again at the IPv4 address @addr (same class and port) */
static int cf_net_judge_v4(struct cf_cred *e, struct sock *sk,
			   const struct cf_target *t, __be32 addr, bool track,
			   unsigned int *allowed)
{
	struct cf_target u = { .class_id = t->class_id };

	cf_sock_target_v4(&u, &addr, htons(t->port));
	return cf_sock_judge_part(e, sk, &u, track, allowed);
}

/*
 * Can @sk still take IPv4 traffic on an IPv6 address? Only an AF_INET6
 * socket that is not IPv6-only. IPV6_V6ONLY can be changed until the
 * socket has a port, and socket_setsockopt does not show its value, so
 * another thread may clear it between a judgement and the operation: an
 * unbound socket counts as dual-stack whatever the option says now.
 */
static bool cf_net_dual_stack(const struct sock *sk)
{
	return sk->sk_family == AF_INET6 &&
	       !(ipv6_only_sock(sk) && READ_ONCE(inet_sk(sk)->inet_num));
}

/**
 * cf_net_judge_unspec() - judge an unspecified peer as the stack reaches it
 * @e: the calling task's bound state
 * @sk: the socket
 * @t: the peer as written (class net:connect)
 * @track: remember the admitting grants on @sk
 * @src: an IPv4 source address the message itself names (IP_PKTINFO),
 *	 or 0
 *
 * The unspecified address names this host: the stack rewrites it to a
 * local address when it connects or routes, from socket state that another
 * thread can change after this judgement.
 * - "::" becomes ::1, or 127.0.0.1 on a socket whose source is an
 *   IPv4-mapped address (tcp_v6_connect(), ip6_datagram_connect(),
 *   udpv6_sendmsg()): both are judged, 127.0.0.1 unless the socket can no
 *   longer take IPv4.
 * - 0.0.0.0, also as ::ffff:0.0.0.0 or an AF_INET address on an AF_INET6
 *   socket, becomes the packet's source address (the socket's, one a
 *   message names, or an address of the device it is bound to), or
 *   127.0.0.1 when it has none (ip_route_output_key_hash_rcu()). 127.0.0.1,
 *   the socket's source addresses and @src are judged, and then 0.0.0.0 as
 *   written: a grant that does not contain the unspecified address itself
 *   (as one for every address does) admits no other local address the
 *   stack could pick.
 *
 * Out of line: the usual peer is specified (cf_net_judge_peer()).
 *
 * Return: 0, -EACCES (audited, target the first address refused) or
 * -ENOMEM.
 */
static noinline int cf_net_judge_unspec(struct cf_cred *e, struct sock *sk,
					struct cf_target *t, bool track,
					__be32 src)
{
	static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
	const struct inet_sock *inet = inet_sk(sk);
	__be32 lo = htonl(INADDR_LOOPBACK), a[3];
	unsigned int i, j, n = 0;
	struct cf_target u;
	int err;

	if (t->family == 6) {
		u = *t;
		memcpy(u.addr, &lo6, sizeof(lo6));
		err = cf_sock_judge_part(e, sk, &u, track, &n);
		if (!err && cf_net_dual_stack(sk))
			err = cf_net_judge_v4(e, sk, t, lo, track, &n);
		return cf_exercise_admitted_if(err, n);
	}
	a[0] = READ_ONCE(inet->inet_saddr);
	a[1] = READ_ONCE(inet->inet_rcv_saddr);
	a[2] = src;
	err = cf_net_judge_v4(e, sk, t, lo, track, &n);
	for (i = 0; !err && i < ARRAY_SIZE(a); i++) {
		if (!a[i] || a[i] == lo)
			continue;
		for (j = 0; j < i && a[j] != a[i]; j++)
			;
		if (j == i)
			err = cf_net_judge_v4(e, sk, t, a[i], track, &n);
	}
	if (!err)
		err = cf_sock_judge_part(e, sk, t, track, &n);
	return cf_exercise_admitted_if(err, n);
}

/*
 * Judge the peer @t of a connect or send for net:connect as the stack
 * reaches it: the unspecified address by cf_net_judge_unspec(), any other
 * as it is. @src: an IPv4 source address the message names, or 0.
 */
static inline int cf_net_judge_peer(struct cf_cred *e, struct sock *sk,
				    struct cf_target *t, bool track,
				    __be32 src)
{
	if (likely(!cf_net_unspec(t)))
		return cf_sock_judge(e, sk, t, track);
	return cf_net_judge_unspec(e, sk, t, track, src);
}

/**
 * cf_net_judge_local() - judge a local address for net:bind as it binds
 * @e: the calling task's bound state
 * @sk: the socket
 * @t: the local address (class net:bind)
 * @track: remember the admitting grants on @sk
 *
 * "::" on a socket that can take IPv4 (cf_net_dual_stack()) binds
 * 0.0.0.0 at the same port too: both are judged.
 *
 * Return: 0, -EACCES (audited) or -ENOMEM.
 */
static int cf_net_judge_local(struct cf_cred *e, struct sock *sk,
			      struct cf_target *t, bool track)
{
	unsigned int n = 0;
	int err = cf_sock_judge_part(e, sk, t, track, &n);

	if (!err && t->family == 6 && cf_net_unspec(t) &&
	    cf_net_dual_stack(sk))
		err = cf_net_judge_v4(e, sk, t, htonl(INADDR_ANY), track, &n);
	return cf_exercise_admitted_if(err, n);
}

/**
 * cf_net_connect() - socket_connect: net:connect on the peer address
 * @e: the calling task's bound state
 * @sock: the socket
 * @sa: the address
 * @len: its length
 *
 * AF_UNSPEC disconnects: nothing to judge. The unspecified address is
 * judged as the local addresses it reaches (cf_net_judge_peer()). An
 * AF_VSOCK socket is judged for vsock:connect (cf_vsock_connect()).
 *
 * Return: 0, -EACCES (audited) or -ENOMEM (the connect fails).
 */
int cf_net_connect(struct cf_cred *e, struct socket *sock,
		   struct sockaddr *sa, int len)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NET_CONNECT };
	struct sock *sk = sock ? sock->sk : NULL;

	if (sk && sk->sk_family == AF_VSOCK)
		return cf_vsock_connect(e, sk, sa, len);
	if (!cf_inet(sk))
		return 0;
	if (cf_net_addr(sk, sa, len, false, &t))
		return 0;
	return cf_net_judge_peer(e, sk, &t, true, 0);
}

/**
 * cf_net_bind() - socket_bind: net:bind on the local address
 * @e: the calling task's bound state
 * @sock: the socket
 * @sa: the address
 * @len: its length
 *
 * "::" on a socket that can take IPv4 needs net:bind for 0.0.0.0 at the
 * same port as well (cf_net_judge_local()).
 *
 * Return: 0, -EACCES (audited) or -ENOMEM.
 */
int cf_net_bind(struct cf_cred *e, struct socket *sock, struct sockaddr *sa,
		int len)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NET_BIND };
	struct sock *sk = sock ? sock->sk : NULL;

	if (!cf_inet(sk))
		return 0;
	if (cf_net_addr(sk, sa, len, true, &t))
		return 0;	/* the stack refuses it: EINVAL, EAFNOSUPPORT */
	return cf_net_judge_local(e, sk, &t, true);
}

/**
 * cf_net_listen() - socket_listen: the address a listener receives on
 * @e: the calling task's bound state
 * @sock: the socket
 *
 * A listener's local address needs net:bind, however it got it: an unbound
 * socket autobinds an ephemeral port here (judged as port 0, which only a
 * capability for any port admits), and a port an SCTP socket was given by
 * an earlier connect or send is judged as it is, so a connect's ephemeral
 * port never becomes a listening address unjudged. "::" is judged for
 * IPv4 too where the socket can take it (cf_net_judge_local()).
 *
 * Return: 0, -EACCES (audited) or -ENOMEM.
 */
int cf_net_listen(struct cf_cred *e, struct socket *sock)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NET_BIND };
	struct sock *sk = sock ? sock->sk : NULL;

	if (!cf_inet(sk))
		return 0;
	cf_sock_local(sk, READ_ONCE(inet_sk(sk)->inet_num), &t);
	return cf_net_judge_local(e, sk, &t, true);
}

/* a datagram socket the first send autobinds, and which then receives
 * from anyone (UDP, UDP-Lite; not TCP, whose autobind belongs to its
 * connect, nor ping sockets, which receive only echo replies)
 */
static bool cf_net_autobinds(const struct sock *sk)
{
	return sk->sk_type == SOCK_DGRAM &&
	       (sk->sk_protocol == IPPROTO_UDP ||
		sk->sk_protocol == IPPROTO_UDPLITE) &&
	       !READ_ONCE(inet_sk(sk)->inet_num);
}

/*
 * Options that send a packet first to an address nobody judged, as a
 * socket option or as ancillary data of one send: source routes (IP
 * options LSRR/SSRR, IPv6 routing headers) and a next hop (IPV6_NEXTHOP,
 * which Linux does not implement today: refused all the same, so that a
 * kernel that does cannot open the path).
 */
enum { CF_ROUTE_NONE, CF_ROUTE_SOURCE, CF_ROUTE_NEXT_HOP };

static const char *const cf_route_sockopt[] = {
	[CF_ROUTE_SOURCE] = "sockopt:source-route",
	[CF_ROUTE_NEXT_HOP] = "sockopt:next-hop",
};

static const char *const cf_route_cmsg[] = {
	[CF_ROUTE_SOURCE] = "cmsg:source-route",
	[CF_ROUTE_NEXT_HOP] = "cmsg:next-hop",
};

static int cf_net_route(int level, int optname)
{
	if (level == SOL_IP && (optname == IP_OPTIONS || optname == IP_RETOPTS))
		return CF_ROUTE_SOURCE;
	if (level != SOL_IPV6)
		return CF_ROUTE_NONE;
	if (optname == IPV6_RTHDR || optname == IPV6_2292RTHDR ||
	    optname == IPV6_2292PKTOPTIONS)
		return CF_ROUTE_SOURCE;
	return optname == IPV6_NEXTHOP ? CF_ROUTE_NEXT_HOP : CF_ROUTE_NONE;
}

/**
 * cf_net_setsockopt() - socket_setsockopt: refuse source routes
 * @e: the calling task's bound state
 * @sock: the socket
 * @level: option level
 * @optname: option
 *
 * IP options (LSRR/SSRR), IPv6 routing headers (segment routing) and a
 * next hop send a connection's packets to the route's first hop: while
 * net:connect is mediated they are refused (reason bypass).
 *
 * Return: 0 or -EACCES (audited).
 */
int cf_net_setsockopt(struct cf_cred *e, struct socket *sock, int level,
		      int optname)
{
	int route;

	if (!cf_inet(sock->sk))
		return 0;
	route = cf_net_route(level, optname);
	if (route == CF_ROUTE_NONE)
		return 0;
	return cf_refuse_mediated(e, CAPFENCE_CLASS_NET_CONNECT,
				  cf_route_sockopt[route]);
}

/*
 * The IPv4 source address an IP_PKTINFO cmsg sets (ipi_spec_dst; on an
 * AF_INET6 socket sending to IPv4, an IPV6_PKTINFO with a v4-mapped
 * address, as ip_cmsg_send() reads it), or 0.
 */
static __be32 cf_net_cmsg_src(const struct sock *sk, const struct cmsghdr *c)
{
	if (c->cmsg_level == SOL_IP && c->cmsg_type == IP_PKTINFO &&
	    c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo)))
		return ((const struct in_pktinfo *)CMSG_DATA(c))->ipi_spec_dst.s_addr;
	if (sk->sk_family == AF_INET6 && c->cmsg_level == SOL_IPV6 &&
	    c->cmsg_type == IPV6_PKTINFO &&
	    c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
		const struct in6_pktinfo *pi = (const void *)CMSG_DATA(c);

		if (ipv6_addr_v4mapped(&pi->ipi6_addr))
			return pi->ipi6_addr.s6_addr32[3];
	}
	return 0;
}

/*
 * Ancillary data of one send: routes are refused as in
 * cf_net_setsockopt(), and the extra peer addresses SCTP takes for a new
 * association (SCTP_DSTADDRV4/V6, at the port of @port) are each judged
 * for net:connect. *@src is set to the last IPv4 source address the data
 * names (the stack sends there when the destination is unspecified).
 */
static int cf_net_cmsg(struct cf_cred *e, struct sock *sk,
		       struct msghdr *msg, __be16 port, __be32 *src)
{
	struct cf_target t;
	struct cmsghdr *c;
	__be32 a;
	int err, route;

	/* sendmsg has copied the control data in; refuse what was not */
	if (msg->msg_control_is_user)
		return cf_refuse_mediated(e, CAPFENCE_CLASS_NET_CONNECT,
					  "cmsg:user");
	for_each_cmsghdr(c, msg) {
		route = cf_net_route(c->cmsg_level, c->cmsg_type);
		if (route != CF_ROUTE_NONE)
			return cf_refuse_mediated(e, CAPFENCE_CLASS_NET_CONNECT,
						  cf_route_cmsg[route]);
		a = cf_net_cmsg_src(sk, c);
		if (a)
			*src = a;
		if (c->cmsg_level != SOL_SCTP)
			continue;
		t = (struct cf_target){ .class_id = CAPFENCE_CLASS_NET_CONNECT };
		if (c->cmsg_type == SCTP_DSTADDRV4 &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in_addr)))
			cf_sock_target_v4(&t, CMSG_DATA(c), port);
		else if (c->cmsg_type == SCTP_DSTADDRV6 &&
			 c->cmsg_len >= CMSG_LEN(sizeof(struct in6_addr)))
			cf_sock_target_v6(&t, (const void *)CMSG_DATA(c), port);
		else
			continue;
		err = cf_net_judge_peer(e, sk, &t, true, 0);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Refuse @what while an IPv4/IPv6 class (net:connect, net:bind) is
 * mediated; the record names the first mediated class in table order.
 */
static int cf_net_refuse_net(struct cf_cred *e, const char *what)
{
	u32 bits;
	int err;

	for (bits = cf_class_sets.inet; bits; bits &= bits - 1) {
		err = cf_refuse_mediated(e, __ffs(bits), what);
		if (err)
			return err;
	}
	return 0;
}

/**
 * cf_net_sendmsg() - socket_sendmsg: a send with an address is a connect
 * @e: the calling task's bound state
 * @sock: the socket
 * @msg: the message: its address, ancillary data and flags are read
 *
 * Datagrams to an address, TCP Fast Open and SCTP implicit association all
 * name their peer here. An unbound datagram socket is autobound by its
 * first send (net:bind on port 0). A stream or SCTP socket that the send
 * connects remembers the capability; a datagram to an address does not
 * (each one is judged). A socket connected or bound under a capability is
 * rechecked.
 *
 * sendmmsg() calls this hook only for a message whose address differs from
 * the one before it (____sys_sendmsg()'s used_address): the messages that
 * follow one to the same address reach the protocol unjudged, with
 * whatever ancillary data they carry (a source route, SCTP peers, a
 * source that redirects the unspecified address) and without the socket's
 * recheck. A message that names an address while more follow (MSG_BATCH,
 * set by sendmmsg() on every message but the last) is therefore refused
 * while net:connect or net:bind is mediated (reason bypass, target
 * sendmmsg:named): such a batch cannot be judged per message. Batches of
 * messages without an address (a connected socket) are judged per message.
 * An AF_VSOCK socket's send is cf_vsock_sendmsg()'s.
 *
 * Return: 0, -EACCES (audited) or -ENOMEM.
 */
int cf_net_sendmsg(struct cf_cred *e, struct socket *sock, struct msghdr *msg)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_NET_CONNECT };
	struct sock *sk = sock ? sock->sk : NULL;
	__be32 src = 0;
	bool named;
	int err;

	if (sk && sk->sk_family == AF_VSOCK)
		return cf_vsock_sendmsg(e, sk, msg);
	if (!cf_inet(sk))
		return 0;
	named = msg->msg_name &&
		!cf_net_addr(sk, msg->msg_name, msg->msg_namelen, true, &t);
	if (msg->msg_controllen) {
		err = cf_net_cmsg(e, sk, msg, named ? htons(t.port) : 0, &src);
		if (err)
			return err;
	}
	if (named) {
		err = cf_net_judge_peer(e, sk, &t, sk->sk_type != SOCK_DGRAM,
					src);
		if (err)
			return err;
		if (cf_net_autobinds(sk)) {
			t = (struct cf_target){ .class_id = CAPFENCE_CLASS_NET_BIND };
			cf_sock_local(sk, 0, &t);
			err = cf_net_judge_local(e, sk, &t, true);
			if (err)
				return err;
		}
	}
	if (msg->msg_name && (msg->msg_flags & MSG_BATCH)) {
		err = cf_net_refuse_net(e, "sendmmsg:named");
		if (err)
			return err;
	}
	return cf_sock_revalidate(sk);
}

/* families a mediated task may create: none of them reaches an IP peer
 * except AF_INET and AF_INET6, which capfence judges
 */
static bool cf_net_family_known(int family)
{
	switch (family) {
	case AF_UNIX:
	case AF_INET:
	case AF_INET6:
	case AF_NETLINK:
	case AF_VSOCK:
	case AF_ALG:
		return true;
	}
	return false;
}

/*
 * The AF_INET and AF_INET6 protocols whose every path net.c and sock.c
 * judge (TCP, UDP, UDP-Lite, ping, SCTP; 0 picks TCP, UDP or SCTP by
 * type). Others carry their bytes on sockets the kernel makes itself
 * (MPTCP subflows, SMC's TCP socket) or are not judged (DCCP, L2TP/IP),
 * and fail closed.
 */
static bool cf_net_proto_known(int family, int type, int protocol)
{
	switch (type) {
	case SOCK_STREAM:
		return !protocol || protocol == IPPROTO_TCP ||
		       protocol == IPPROTO_SCTP;
	case SOCK_SEQPACKET:
		return !protocol || protocol == IPPROTO_SCTP;
	case SOCK_DGRAM:
		return !protocol || protocol == IPPROTO_UDP ||
		       protocol == IPPROTO_UDPLITE ||
		       protocol == (family == AF_INET ? IPPROTO_ICMP :
						       IPPROTO_ICMPV6);
	}
	return false;
}

/**
 * cf_net_create() - socket_create: refuse what cannot be judged by address
 * @e: the calling task's bound state
 * @family: address family
 * @type: socket type
 * @protocol: protocol (the one the kernel will create, after any BPF
 *	      program rewrote it)
 *
 * A raw socket writes its own IP header (IP_HDRINCL) and a packet socket
 * its own frames, so no address decision can hold for them; other families
 * carry IP traffic under an address capfence never sees (AF_SMC falls back
 * to TCP, RDS and TIPC run over TCP and UDP, AF_XDP and AF_KCM move
 * packets of other sockets). An MPTCP socket is judged at connect, bind
 * and listen, but moves its bytes on subflows the kernel creates, which
 * no grant follows: a revoke or fence would not reach them. All of them,
 * and every AF_INET/AF_INET6 protocol not known to be judged end to end,
 * are refused while net:connect or net:bind is mediated; AF_UNIX,
 * AF_NETLINK, AF_VSOCK and AF_ALG reach no IP peer and stay allowed
 * (docs/threat-model.md, "The protocol inventory").
 *
 * Return: 0, or -EACCES (audited, reason bypass, target socket:raw,
 * socket:packet, socket:mptcp, socket:protocol or socket:family).
 */
int cf_net_create(struct cf_cred *e, int family, int type, int protocol)
{
	const char *what;

	if (family == AF_PACKET)
		what = "socket:packet";
	else if ((family == AF_INET || family == AF_INET6) &&
		 (type == SOCK_RAW || type == SOCK_PACKET))
		what = "socket:raw";
	else if ((family == AF_INET || family == AF_INET6) &&
		 protocol == IPPROTO_MPTCP)
		what = "socket:mptcp";
	else if ((family == AF_INET || family == AF_INET6) &&
		 !cf_net_proto_known(family, type, protocol))
		what = "socket:protocol";
	else if (!cf_net_family_known(family))
		what = "socket:family";
	else
		return 0;
	return cf_net_refuse_net(e, what);
}

/**
 * cf_net_sctp() - sctp_bind_connect: every address of an SCTP list
 * @e: the calling task's bound state
 * @sk: the socket
 * @optname: what the addresses are for
 * @sa: packed sockaddr_in / sockaddr_in6 entries
 * @len: total length
 *
 * bindx and primary-address changes need net:bind for every address;
 * connectx, implicit association and address additions need net:connect.
 * Each address is judged as the stack takes it (cf_net_judge_local(),
 * cf_net_judge_peer()). Only called in task context (kfunc.c): address
 * changes a peer asks for in softirq belong to no task.
 *
 * Return: 0, -EACCES (audited), or -EINVAL for a malformed list.
 */
int cf_net_sctp(struct cf_cred *e, struct sock *sk, int optname,
		struct sockaddr *sa, int len)
{
	struct cf_target t;
	u8 class_id;
	int off, step, err;

	switch (optname) {
	case SCTP_PRIMARY_ADDR:
	case SCTP_SET_PEER_PRIMARY_ADDR:
	case SCTP_SOCKOPT_BINDX_ADD:
		class_id = CAPFENCE_CLASS_NET_BIND;
		break;
	case SCTP_SOCKOPT_CONNECTX:
	case SCTP_SENDMSG_CONNECT:
	case SCTP_PARAM_SET_PRIMARY:
	case SCTP_PARAM_ADD_IP:
		class_id = CAPFENCE_CLASS_NET_CONNECT;
		break;
	default:
		return 0;
	}
	for (off = 0; off < len; off += step) {
		const struct sockaddr *a = (void *)((char *)sa + off);

		if (len - off < (int)sizeof(sa_family_t))
			return -EINVAL;
		/* SCTP reads AF_UNSPEC entries as IPv4 */
		step = a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						  sizeof(struct sockaddr_in);
		if (a->sa_family != AF_INET && a->sa_family != AF_INET6 &&
		    a->sa_family != AF_UNSPEC)
			return -EINVAL;
		if (len - off < step)
			return -EINVAL;
		t = (struct cf_target){ .class_id = class_id };
		if (a->sa_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const void *)a;

			cf_sock_target_v6(&t, &sin6->sin6_addr,
					  sin6->sin6_port);
		} else {
			const struct sockaddr_in *sin = (const void *)a;

			cf_sock_target_v4(&t, &sin->sin_addr, sin->sin_port);
		}
		if (class_id == CAPFENCE_CLASS_NET_BIND)
			err = cf_net_judge_local(e, sk, &t, true);
		else
			err = cf_net_judge_peer(e, sk, &t, true, 0);
		if (err)
			return err;
	}
	return 0;
}
