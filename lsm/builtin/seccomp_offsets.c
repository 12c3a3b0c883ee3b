// SPDX-License-Identifier: GPL-2.0
/*
 * The offsets of the members of struct seccomp_filter that seccomp.c
 * reads: the struct is private to kernel/seccomp.c, so they are taken
 * from that file itself, compiled to assembly only (as asm-offsets.c);
 * nothing of it is linked.
 */
#define COMPILE_OFFSETS
#include "../../kernel/seccomp.c"
#include <linux/kbuild.h>

void cf_seccomp_offsets(void);

void cf_seccomp_offsets(void)
{
	OFFSET(CF_SECCOMP_OFF_log, seccomp_filter, log);
	OFFSET(CF_SECCOMP_OFF_prev, seccomp_filter, prev);
	OFFSET(CF_SECCOMP_OFF_prog, seccomp_filter, prog);
}
