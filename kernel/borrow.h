/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Acting through another task (borrow.c).
 */
#ifndef _CAPFENCE_BORROW_H
#define _CAPFENCE_BORROW_H

#include "cred.h"

struct task_struct;
int cf_borrow_attach(struct cf_cred *tracer, struct task_struct *tracee,
		     unsigned int mode);
int cf_borrow_personality(const struct cred *cred, const struct cred *new);

#endif /* _CAPFENCE_BORROW_H */
