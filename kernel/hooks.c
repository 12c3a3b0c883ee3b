// SPDX-License-Identifier: GPL-2.0
/*
 * The module's hold on its BPF-LSM programs. `capfence attach` loads and
 * attaches the programs and hands the module one link per hook; the module
 * keeps a reference on each link, so the hooks stay attached whatever
 * happens to the CLI or to bpffs pins, and releases them only on an
 * explicit detach while no credential carries capfence state. Binding
 * operations fail closed while the hooks are not attached.
 *
 * Locking: cf_links and cf_attached change under cf_mutex; cf_attached is
 * read locklessly (READ_ONCE) from any context.
 */
#include <linux/bpf.h>
#include <linux/cred.h>
#include <linux/string.h>
#include "capfence.h"

/* Every hook the module needs; the order is the one `capfence` attaches. */
static const char *const cf_hook_names[] = {
	"bpf_lsm_cred_prepare",
	"bpf_lsm_cred_alloc_blank",
	"bpf_lsm_cred_transfer",
	"bpf_lsm_cred_free",
	"bpf_lsm_bprm_creds_for_exec",
	"bpf_lsm_socket_connect",
	"bpf_lsm_socket_bind",
	"bpf_lsm_socket_sendmsg",
	"bpf_lsm_socket_recvmsg",
	"bpf_lsm_socket_listen",
	"bpf_lsm_socket_accept",
	"bpf_lsm_socket_getsockopt",
	"bpf_lsm_socket_setsockopt",
	"bpf_lsm_socket_create",
	"bpf_lsm_sctp_bind_connect",
	"bpf_lsm_sk_clone_security",
	"bpf_lsm_sk_free_security",
	"bpf_lsm_ptrace_access_check",
	"bpf_lsm_ptrace_traceme",
	"bpf_lsm_file_open",
	"bpf_lsm_file_permission",
	"bpf_lsm_file_free_security",
	"bpf_lsm_path_mknod",
	"bpf_lsm_path_mkdir",
	"bpf_lsm_path_rmdir",
	"bpf_lsm_path_unlink",
	"bpf_lsm_path_symlink",
	"bpf_lsm_path_truncate",
	"bpf_lsm_path_chmod",
	"bpf_lsm_path_chown",
	"bpf_lsm_path_link",
	"bpf_lsm_path_rename",
	"bpf_lsm_path_chroot",
	"bpf_lsm_sb_mount",
	"bpf_lsm_sb_umount",
	"bpf_lsm_sb_remount",
	"bpf_lsm_sb_pivotroot",
	"bpf_lsm_move_mount",
	"bpf_lsm_inode_setxattr",
	"bpf_lsm_inode_removexattr",
	"bpf_lsm_mmap_file",
	"bpf_lsm_file_mprotect",
};

#define CF_NR_HOOKS ARRAY_SIZE(cf_hook_names)

static struct bpf_link *cf_links[CF_NR_HOOKS];
static bool cf_attached;

static int cf_hook_index(struct bpf_link *link)
{
	const char *name;
	int i;

	if (link->type != BPF_LINK_TYPE_TRACING || !link->prog ||
	    link->prog->type != BPF_PROG_TYPE_LSM)
		return -1;
	name = link->prog->aux->attach_func_name;
	if (!name)
		return -1;
	for (i = 0; i < CF_NR_HOOKS; i++)
		if (!strcmp(name, cf_hook_names[i]))
			return i;
	return -1;
}

/**
 * cf_hooks_attach() - take over the links of the capfence programs
 * @fds: bpf link file descriptors of the caller
 * @n: number of @fds
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. All or nothing: every required hook must be
 * present exactly once.
 *
 * Return: 0, -EALREADY when attached, -EOPNOTSUPP when no LSM gives
 * credentials a security blob, -EINVAL for a missing, duplicate or
 * foreign link, or -EBADF.
 */
int cf_hooks_attach(const u32 *fds, int n, struct netlink_ext_ack *extack)
{
	struct bpf_link *links[CF_NR_HOOKS] = {};
	int i, idx, err = 0;

	BUILD_BUG_ON(CF_NR_HOOKS > CF_MAX_HOOKS);
	lockdep_assert_held(&cf_mutex);
	if (cf_attached) {
		NL_SET_ERR_MSG_MOD(extack, "hooks are already attached");
		return -EALREADY;
	}
	/*
	 * security_cred_free() skips every hook for a credential without a
	 * security blob, which is what all creds look like when no active
	 * LSM reserves cred blob space: state could then never be freed and
	 * a reused cred pointer would inherit it. Refuse to run there.
	 */
	if (!current_cred()->security) {
		NL_SET_ERR_MSG_MOD(extack,
				   "no active LSM allocates credential blobs, so cred_free never runs; enable one (e.g. landlock) in lsm=");
		return -EOPNOTSUPP;
	}
	if (n != CF_NR_HOOKS) {
		NL_SET_ERR_MSG_MOD(extack, "wrong number of hook links");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		struct bpf_link *link = bpf_link_get_from_fd(fds[i]);

		if (IS_ERR(link)) {
			NL_SET_ERR_MSG_MOD(extack, "a link fd is not a bpf link");
			err = PTR_ERR(link);
			goto out;
		}
		idx = cf_hook_index(link);
		if (idx < 0 || links[idx]) {
			bpf_link_put(link);
			NL_SET_ERR_MSG_MOD(extack,
					   "a link is not a capfence LSM hook, or is given twice");
			err = -EINVAL;
			goto out;
		}
		links[idx] = link;
	}
	memcpy(cf_links, links, sizeof(links));
	WRITE_ONCE(cf_attached, true);
	cf_generation_bump();
	return 0;
out:
	for (i = 0; i < CF_NR_HOOKS; i++)
		if (links[i])
			bpf_link_put(links[i]);
	return err;
}

static void cf_hooks_release(void)
{
	int i;

	WRITE_ONCE(cf_attached, false);
	for (i = 0; i < CF_NR_HOOKS; i++) {
		if (cf_links[i])
			bpf_link_put(cf_links[i]);
		cf_links[i] = NULL;
	}
	cf_generation_bump();
}

/**
 * cf_hooks_detach() - release the links
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. Refused while any credential is bound or has a
 * pending exec epoch, or a file or socket opened under a capability is
 * still open (a closed TCP connection lives on until it has finished
 * closing): without their free hooks the module could not forget them.
 *
 * Return: 0, -ENOENT when not attached, -EBUSY while state exists.
 */
int cf_hooks_detach(struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&cf_mutex);
	if (!cf_attached) {
		NL_SET_ERR_MSG_MOD(extack, "hooks are not attached");
		return -ENOENT;
	}
	/* sockets of exited sandboxes are freed after a grace period */
	if (!cf_nr_creds() && (cf_nr_tracked_files() || cf_nr_tracked_socks()))
		rcu_barrier();
	if (cf_nr_creds() || cf_nr_tracked_files() || cf_nr_tracked_socks()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "tasks are bound or have a pending exec epoch; hooks stay attached");
		return -EBUSY;
	}
	cf_hooks_release();
	return 0;
}

/**
 * cf_hooks_attached() - are the capfence hooks attached?
 *
 * Return: true when the module holds every hook's link.
 */
bool cf_hooks_attached(void)
{
	return READ_ONCE(cf_attached);
}

/**
 * cf_hooks_exit() - drop links at module exit (none can be held then)
 */
void cf_hooks_exit(void)
{
	if (cf_attached)
		cf_hooks_release();
}
