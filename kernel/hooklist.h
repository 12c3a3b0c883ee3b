/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook table built from hook_defs.h.
 *
 * Locking: none; a constant table.
 */
#ifndef _CAPFENCE_HOOKLIST_H
#define _CAPFENCE_HOOKLIST_H

#include "compat.h"

/* the number of hooks, a constant expression */
enum {
#define CF_KFUNC(fn)
#define CF_HOOK(hook, fn) CF_HOOK_IDX_##hook,
#include "hook_defs.h"
#undef CF_HOOK
#undef CF_KFUNC
	CF_NR_HOOKS
};

/* A hook: its BPF-LSM attach point and the kfunc its program calls. */
struct cf_hook {
	const char *name;		/* "bpf_lsm_<hook>" */
	const void *kfunc;
};

extern const struct cf_hook cf_hooks[CF_NR_HOOKS];

#endif /* _CAPFENCE_HOOKLIST_H */
