// SPDX-License-Identifier: GPL-2.0
/*
 * The capability classes: one row per class of include/uapi/linux/capfence.h
 * with what the rest of the module asks of a class, its stable name and the
 * kind of constraint its tokens and rules carry. Adding a class is a uapi
 * enum value, a row here, the hook glue that mediates it (hook_defs.h,
 * kfunc.c and its concern's file) and tests; nothing else switches on
 * class ids.
 *
 * Locking: none; a constant table.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include "class.h"

static const struct cf_class cf_classes[] = {
	[CAPFENCE_CLASS_NONE] = { .name = "none" },
	[CAPFENCE_CLASS_NET_CONNECT] = { .name = "net:connect",
					 .constraint = CAPFENCE_CONSTRAINT_NET },
	[CAPFENCE_CLASS_NET_BIND] = { .name = "net:bind",
				      .constraint = CAPFENCE_CONSTRAINT_NET },
	[CAPFENCE_CLASS_FS_READ] = { .name = "fs:read",
				     .constraint = CAPFENCE_CONSTRAINT_PATH },
	[CAPFENCE_CLASS_FS_WRITE] = { .name = "fs:write",
				      .constraint = CAPFENCE_CONSTRAINT_PATH },
	[CAPFENCE_CLASS_VSOCK_CONNECT] = { .name = "vsock:connect",
					   .constraint = CAPFENCE_CONSTRAINT_NET,
					   .family = CAPFENCE_FAMILY_VSOCK },
};

/* a class appended to the uapi enum without a row fails the build */
static_assert(ARRAY_SIZE(cf_classes) == __CAPFENCE_CLASS_MAX);

static const struct cf_class cf_class_unknown = { .name = "unknown" };

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

/**
 * cf_class_init() - check that every class has its row
 *
 * A class in the middle of the enum left without a row would have no name
 * and no constraint kind: the module refuses to load.
 *
 * Return: 0 or -EINVAL.
 */
int cf_class_init(void)
{
	u8 c;

	for (c = CAPFENCE_CLASS_NONE + 1; c <= CAPFENCE_CLASS_MAX; c++)
		if (WARN_ON(!cf_classes[c].name || !cf_classes[c].constraint))
			return -EINVAL;
	return 0;
}
