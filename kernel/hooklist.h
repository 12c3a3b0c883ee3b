/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook table built from hook_defs.h.
 *
 * Locking: none; a constant table.
 */
#ifndef _CAPFENCE_HOOKLIST_H
#define _CAPFENCE_HOOKLIST_H

#include <linux/bpf.h>
#include "compat.h"

/* the number of hooks, a constant expression (the kfunc is not counted) */
enum {
#define CF_KFUNC(...)
#define CF_HOOK(hook, ...) CF_HOOK_IDX_##hook,
#define CF_FEXIT(func, ...) CF_FEXIT_IDX_##func,
#include "hook_defs.h"
#undef CF_FEXIT
#undef CF_HOOK
#undef CF_KFUNC
	CF_NR_HOOKS
};

/* the kfuncs, numbered */
enum {
#define CF_KFUNC(fn) CF_KFUNC_ID_##fn,
#define CF_HOOK(...)
#define CF_FEXIT(...)
#include "hook_defs.h"
#undef CF_FEXIT
#undef CF_HOOK
#undef CF_KFUNC_UNTRUSTED
#undef CF_KFUNC
	CF_NR_KFUNCS
};

/* the most hooks whose programs call one kfunc (path_entry's five) */
#define CF_KFUNC_HOOKS_MAX 5

/*
 * A hook: its attach point and the kfunc its program calls, and the
 * program's type and attach type (a BPF-LSM program, or the fexit of a
 * kernel function).
 */
struct cf_hook {
	const char *name;		/* "bpf_lsm_<hook>", or the function */
	const void *kfunc;
	int kfunc_id;			/* CF_KFUNC_ID_<fn> */
	enum bpf_prog_type type;
	enum bpf_attach_type attach;
};

extern const struct cf_hook cf_hooks[CF_NR_HOOKS];

#endif /* _CAPFENCE_HOOKLIST_H */
