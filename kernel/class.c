// SPDX-License-Identifier: GPL-2.0
/*
 * The capability classes: one row per class of include/uapi/linux/capfence.h
 * with what the rest of the module asks of a class: its stable name, the
 * kind of constraint its tokens and rules carry, and for a path class the
 * opens that need it, what an open keeps of its grant and which other path
 * operations it judges. The edges loop over the rows (fspath.c judges at
 * open every class whose row says the open needs it), so a path class
 * mediated at open is a uapi enum value and a row here. A class on a hook
 * of its own adds the hook's glue (hook_defs.h, kfunc.c and its concern's
 * file).
 *
 * Locking: none; a constant table, and cf_open_classes written once at
 * init (read-only after): cf_class_sets.
 */
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/cache.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "class.h"

static const struct cf_class cf_classes[] = {
	[CAPFENCE_CLASS_NONE] = { .name = "none" },
	[CAPFENCE_CLASS_NET_CONNECT] = { .name = "net:connect", .net_end = CF_NET_PEER,
					 .constraint = CAPFENCE_CONSTRAINT_NET },
	[CAPFENCE_CLASS_NET_BIND] = { .name = "net:bind", .net_end = CF_NET_LOCAL,
				      .constraint = CAPFENCE_CONSTRAINT_NET },
	[CAPFENCE_CLASS_FS_READ] = { .name = "fs:read", .open_mode = FMODE_READ,
				     .constraint = CAPFENCE_CONSTRAINT_PATH,
				     .open_keep = CF_KEEP_READ, .path_ops = CF_PATH_NAMES },
	/* writing, O_APPEND, O_TRUNC, O_CREAT, access mode 3 (ioctls only) */
	[CAPFENCE_CLASS_FS_WRITE] = { .name = "fs:write", .open_mode = FMODE_WRITE,
				      .open_flags = O_TRUNC | O_CREAT, .open_ioctl = true,
				      .constraint = CAPFENCE_CONSTRAINT_PATH,
				      .open_keep = CF_KEEP_WRITE, .path_ops = CF_PATH_CHANGE },
	[CAPFENCE_CLASS_VSOCK_CONNECT] = { .name = "vsock:connect", .net_end = CF_NET_PEER,
					   .constraint = CAPFENCE_CONSTRAINT_NET,
					   .family = CAPFENCE_FAMILY_VSOCK },
};

/* a class appended to the uapi enum without a row fails the build */
static_assert(ARRAY_SIZE(cf_classes) == __CAPFENCE_CLASS_MAX);

static const struct cf_class cf_class_unknown = { .name = "unknown" };

struct cf_class_sets cf_class_sets __ro_after_init;

/**
 * cf_class() - the row of a class
 * @class_id: enum capfence_class, or any other value
 *
 * Return: the row; for an id outside the enum a row named "unknown" whose
 * constraint kind (0) no constraint has.
 */
const struct cf_class *cf_class(u8 class_id)
{
	return class_id < ARRAY_SIZE(cf_classes) ? &cf_classes[class_id] :
						   &cf_class_unknown;
}

/* Is the row of @c one that fspath.c can serve? */
static bool cf_class_row_valid(const struct cf_class *c)
{
	bool opens = c->open_mode || c->open_flags || c->open_ioctl;

	if (!c->name || !c->constraint)
		return false;
	if (c->constraint == CAPFENCE_CONSTRAINT_NET &&
	    (c->net_end < CF_NET_PEER || c->net_end > CF_NET_LOCAL))
		return false;
	if (c->constraint != CAPFENCE_CONSTRAINT_PATH)
		return !opens && !c->open_keep && !c->path_ops;
	if (c->net_end)
		return false;
	/* a path class is judged somewhere; what an open keeps needs one */
	return (opens || c->path_ops) && c->open_keep < __CF_KEEP_MAX &&
	       (opens || !c->open_keep);
}

/**
 * cf_class_init() - check every row and make the path classes' masks
 *
 * A class in the middle of the enum left without a row would have no name
 * and no constraint kind, and a path class judged nowhere would never be
 * refused: the module refuses to load. No two classes may keep the same
 * grant of an open.
 *
 * Return: 0 or -EINVAL.
 */
int cf_class_init(void)
{
	struct cf_class_sets *p = &cf_class_sets;
	u32 kept = 0;
	u8 c;

	/* every mask of class ids (these, the memos') is a u32 */
	BUILD_BUG_ON(__CAPFENCE_CLASS_MAX > 32);
	memset(p, 0, sizeof(*p));
	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++) {
		const struct cf_class *r = &cf_classes[c];

		if (WARN_ON(!cf_class_row_valid(r)))
			return -EINVAL;
		if (r->constraint == CAPFENCE_CONSTRAINT_NET && !r->family)
			p->inet |= BIT(c);
		if (r->constraint != CAPFENCE_CONSTRAINT_PATH)
			continue;
		p->path |= BIT(c);
		if (r->path_ops & CF_PATH_CHANGE)
			p->change |= BIT(c);
		if (r->path_ops & CF_PATH_NAMES)
			p->names |= BIT(c);
		if (!r->open_mode && !r->open_flags && !r->open_ioctl)
			continue;
		p->open[p->n_open++] = (struct cf_open_test){
			.class_id = c, .ioctl = r->open_ioctl,
			.mode = r->open_mode, .flags = r->open_flags };
		if (!r->open_keep) {
			p->unkept |= BIT(c);
			continue;
		}
		if (WARN_ON(kept & BIT(r->open_keep)))
			return -EINVAL;
		kept |= BIT(r->open_keep);
		p->keeps[r->open_keep - 1] = BIT(c);
	}
	return 0;
}
