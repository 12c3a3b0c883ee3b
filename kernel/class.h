/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The class table (class.c).
 */
#ifndef _CAPFENCE_CLASS_H
#define _CAPFENCE_CLASS_H

#include <linux/types.h>
#include <uapi/linux/capfence.h>

struct cf_class {
	const char *name;	/* stable: audit records, events, the CLI */
	u8 constraint;		/* CAPFENCE_CONSTRAINT_* of its tokens and rules */
	u8 family;		/* NET: CAPFENCE_FAMILY_VSOCK, or 0 for 4 and 6 */
};

const struct cf_class *cf_class(u8 class_id);
int cf_class_init(void);

#endif /* _CAPFENCE_CLASS_H */
