// SPDX-License-Identifier: GPL-2.0
/*
 * The module's hold on its BPF-LSM programs. `capfence attach` loads and
 * attaches the programs and hands the module one link per hook; the module
 * keeps a reference on each link, so the hooks stay attached whatever
 * happens to the CLI or to bpffs pins, and releases them only on an
 * explicit detach while no credential carries capfence state. Binding
 * operations fail closed while the hooks are not attached. Only capfence's
 * own programs are accepted: a link on a hook of hook_defs.h whose program
 * calls that hook's kfunc, so a no-op program on the same hook cannot
 * stand in for capfence's. Every link carries the same non-zero cookie,
 * chosen at random by `capfence attach`; the module takes it as the mark
 * of its programs (fence.c), with the machine code of those programs,
 * which the kfuncs check at every call (kfunc.c): another BPF program
 * calling them changes nothing.
 *
 * Locking: cf_links and the attached state (fence.c, cf_attached_set())
 * change under cf_mutex; the attached state is read locklessly
 * (cf_hooks_attached()) from any context.
 */
#include <linux/bpf.h>
#include <linux/cred.h>
#include <linux/filter.h>
#include <linux/string.h>
#include "cred.h"
#include "fence.h"
#include "file.h"
#include "hooks.h"
#include "kfunc.h"
#include "sock.h"
#include "hooklist.h"

static struct bpf_link *cf_links[CF_NR_HOOKS];

/*
 * The machine code of the held links' programs, and the function whose
 * trampoline runs each: a kfunc answers only a call from there, run from
 * there (kfunc.c).
 */
static struct cf_image cf_image_tab[CF_NR_KFUNCS * CF_KFUNC_HOOKS_MAX];

/*
 * Fill the images of @links by kfunc: -EINVAL for a program that is not
 * JIT-compiled or has subprograms (the kfunc's caller is then not the
 * program's own frame, which the kfuncs walk from).
 */
static int cf_images_gather(struct bpf_link **links)
{
	int i, j;

	memset(cf_image_tab, 0, sizeof(cf_image_tab));
	for (i = 0; i < CF_NR_HOOKS; i++) {
		const struct bpf_prog *prog = links[i]->prog;
		const struct bpf_tracing_link *tl =
			container_of(links[i], struct bpf_tracing_link, link.link);
		struct cf_image *img =
			&cf_image_tab[cf_hooks[i].kfunc_id * CF_KFUNC_HOOKS_MAX];

		if (!prog->jited || prog->aux->func_cnt || !tl->trampoline)
			return -EINVAL;
		for (j = 0; j < CF_KFUNC_HOOKS_MAX && img[j].start; j++)
			;
		if (WARN_ON_ONCE(j == CF_KFUNC_HOOKS_MAX))
			return -EINVAL;
		img[j].start = (unsigned long)prog->bpf_func;
		img[j].end = img[j].start + prog->jited_len;
		img[j].hook = (unsigned long)tl->trampoline->func.addr;
	}
	return 0;
}

/*
 * Does @prog call @kfunc? The verifier has rewritten each kfunc call's
 * immediate to the function's offset from __bpf_call_base.
 */
static bool cf_prog_calls(const struct bpf_prog *prog, const void *kfunc)
{
	u32 i;

	for (i = 0; i < prog->len; i++) {
		const struct bpf_insn *insn = &prog->insnsi[i];

		if (insn->code == (BPF_JMP | BPF_CALL) &&
		    insn->src_reg == BPF_PSEUDO_KFUNC_CALL &&
		    (const u8 *)__bpf_call_base + insn->imm == kfunc)
			return true;
	}
	return false;
}

/* The cookie of a BPF-LSM (tracing) link: what its trampoline runs with. */
static u64 cf_link_cookie(struct bpf_link *link)
{
	return container_of(link, struct bpf_tramp_link, link)->cookie;
}

/*
 * The hook a link attaches to, when it is a BPF-LSM (or, for a CF_FEXIT
 * line, fexit) link whose program is capfence's own for that hook (it
 * calls the hook's kfunc), else -1.
 */
static int cf_hook_index(struct bpf_link *link)
{
	const char *name;
	int i;

	if (link->type != BPF_LINK_TYPE_TRACING || !link->prog)
		return -1;
	name = link->prog->aux->attach_func_name;
	if (!name)
		return -1;
	for (i = 0; i < CF_NR_HOOKS; i++)
		if (link->prog->type == cf_hooks[i].type &&
		    link->prog->expected_attach_type == cf_hooks[i].attach &&
		    !strcmp(name, cf_hooks[i].name))
			return cf_prog_calls(link->prog, cf_hooks[i].kfunc) ?
			       i : -1;
	return -1;
}

/**
 * cf_hooks_attach() - take over the links of the capfence programs
 * @fds: bpf link file descriptors of the caller
 * @n: number of @fds
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex. All or nothing: every required hook must be
 * present exactly once, and every link carry the same non-zero cookie.
 *
 * Return: 0, -EALREADY when attached, -EOPNOTSUPP when no LSM gives
 * credentials a security blob, -EINVAL for a missing, duplicate or
 * foreign link, a link without the set's cookie or a program that is not
 * JIT-compiled or has subprograms, or -EBADF.
 */
int cf_hooks_attach(const u32 *fds, int n, struct netlink_ext_ack *extack)
{
	struct bpf_link *links[CF_NR_HOOKS] = {};
	int i, idx, err = 0;
	u64 cookie = 0;

	lockdep_assert_held(&cf_mutex);
	if (cf_hooks_attached()) {
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
					   "a link is not one of capfence's own programs on a hook it needs, or is given twice");
			err = -EINVAL;
			goto out;
		}
		links[idx] = link;
		if (!i)
			cookie = cf_link_cookie(link);
		if (!cookie || cf_link_cookie(link) != cookie) {
			NL_SET_ERR_MSG_MOD(extack,
					   "the links do not all carry one non-zero cookie (attach with a current capfence)");
			err = -EINVAL;
			goto out;
		}
	}
	err = cf_images_gather(links);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack,
				   "capfence's programs are not JIT-compiled, or have subprograms");
		goto out;
	}
	memcpy(cf_links, links, sizeof(links));
	cf_images_set(cf_image_tab);
	cf_attached_set(cookie);
	cf_creds_reopen();
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

	cf_attached_set(0);
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
 * Caller holds cf_mutex. Refused while any credential has capfence state
 * (bound, a pending exec epoch, or a reservation for keyctl's
 * session-to-parent), or a file or socket opened under a capability is
 * still open (a closed TCP connection lives on until it has finished
 * closing): without their free hooks the module could not forget them.
 *
 * Return: 0, -ENOENT when not attached, -EBUSY while state exists.
 */
int cf_hooks_detach(struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&cf_mutex);
	if (!cf_hooks_attached()) {
		NL_SET_ERR_MSG_MOD(extack, "hooks are not attached");
		return -ENOENT;
	}
	/* sockets of exited sandboxes are freed after a grace period */
	if (!cf_nr_creds() && (cf_nr_tracked_files() || cf_nr_tracked_socks()))
		rcu_barrier();
	/* from here no entry appears unseen (cred.c) */
	if (cf_creds_close()) {
		cf_creds_reopen();
		NL_SET_ERR_MSG_MOD(extack,
				   "tasks are bound or have a pending exec epoch; hooks stay attached");
		return -EBUSY;
	}
	if (cf_nr_tracked_files() || cf_nr_tracked_socks()) {
		cf_creds_reopen();
		NL_SET_ERR_MSG_MOD(extack,
				   "files or sockets opened under a capability are still open; hooks stay attached");
		return -EBUSY;
	}
	cf_hooks_release();
	return 0;
}

/**
 * cf_hooks_exit() - drop links at module exit (none can be held then)
 */
void cf_hooks_exit(void)
{
	if (cf_hooks_attached())
		cf_hooks_release();
}
