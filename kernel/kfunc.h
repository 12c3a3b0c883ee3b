/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kfuncs of the BPF programs (kfunc.c).
 */
#ifndef _CAPFENCE_KFUNC_H
#define _CAPFENCE_KFUNC_H

int cf_kfunc_init(void);

#endif /* _CAPFENCE_KFUNC_H */
