// SPDX-License-Identifier: GPL-2.0
/*
 * vsock mediation: vsock:connect for AF_VSOCK sockets. Inside a guest a
 * vsock socket reaches services of the host (CID 2) and, through the
 * loopback transport, of the guest itself; a peer is a CID and a 32-bit
 * port. A connect() is judged on the address it names, and so is a
 * datagram send that names one (a datagram transport, where the kernel
 * has one, sends to it). A socket connected under a capability is
 * remembered (sock.c) and rechecked on every send and receive call. A
 * listening vsock socket is not mediated: it reaches no peer of its own
 * choosing (docs/threat-model.md).
 *
 * The address is judged as written: the stack does not rewrite a
 * connect's CID. A datagram to VMADDR_CID_ANY goes to the local CID; a
 * constraint cannot name VMADDR_CID_ANY, so only one for any CID admits
 * it.
 *
 * Locking and context: called from net.c's hooks (BPF program context:
 * RCU read lock held, never sleeps). Decisions read grant state in a
 * fence read section (decide.c).
 */
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/vm_sockets.h>
#include <net/sock.h>
#include "constraint.h"
#include "cred.h"
#include "decide.h"
#include "sock.h"
#include "vsock.h"
#include "compat.h"

/*
 * The peer @sa names, or -ENOENT when the stack will not read it as a
 * vsock address (it fails the call itself).
 */
static int cf_vsock_addr(const struct sockaddr *sa, int len,
			 struct cf_target *t)
{
	const struct sockaddr_vm *svm = (const void *)sa;

	if (!sa || len < (int)sizeof(*svm) || svm->svm_family != AF_VSOCK)
		return -ENOENT;
	cf_sock_target_vsock(t, svm->svm_cid, svm->svm_port);
	return 0;
}

/**
 * cf_vsock_connect() - socket_connect on AF_VSOCK: vsock:connect
 * @e: the calling task's bound state
 * @sk: the socket (AF_VSOCK)
 * @sa: the address
 * @len: its length
 *
 * A datagram socket's connect to VMADDR_CID_ANY and VMADDR_PORT_ANY
 * disconnects it: nothing to judge.
 *
 * Return: 0, -EACCES (audited) or -ENOMEM (the connect fails).
 */
int cf_vsock_connect(struct cf_cred *e, struct sock *sk, struct sockaddr *sa,
		     int len)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_VSOCK_CONNECT };

	if (cf_vsock_addr(sa, len, &t))
		return 0;
	if (sk->sk_type == SOCK_DGRAM &&
	    get_unaligned_be32(t.addr) == VMADDR_CID_ANY &&
	    get_unaligned_be32(t.addr + 4) == VMADDR_PORT_ANY)
		return 0;
	return cf_sock_judge(e, sk, &t, true);
}

/**
 * cf_vsock_sendmsg() - socket_sendmsg on AF_VSOCK
 * @e: the calling task's bound state
 * @sk: the socket (AF_VSOCK)
 * @msg: the message: its address and flags are read
 *
 * A datagram with an address is judged for vsock:connect, each one (the
 * socket is not remembered for it); a connection-oriented socket refuses
 * an address itself. A batch naming an address (MSG_BATCH: sendmmsg()
 * asks once for a run of messages to one address) is refused while
 * vsock:connect is mediated, as net.c's cf_net_sendmsg() does. A socket
 * connected under a capability is rechecked.
 *
 * Return: 0, -EACCES (audited) or -ENOMEM.
 */
int cf_vsock_sendmsg(struct cf_cred *e, struct sock *sk, struct msghdr *msg)
{
	struct cf_target t = { .class_id = CAPFENCE_CLASS_VSOCK_CONNECT };
	int err;

	if (sk->sk_type == SOCK_DGRAM && msg->msg_name &&
	    !cf_vsock_addr(msg->msg_name, msg->msg_namelen, &t)) {
		err = cf_sock_judge(e, sk, &t, false);
		if (err)
			return err;
		if (msg->msg_flags & MSG_BATCH) {
			err = cf_refuse_mediated(e, CAPFENCE_CLASS_VSOCK_CONNECT,
						 "sendmmsg:named");
			if (err)
				return err;
		}
	}
	return cf_sock_revalidate(sk);
}
