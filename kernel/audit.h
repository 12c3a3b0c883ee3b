/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Audit records (audit.c).
 */
#ifndef _CAPFENCE_AUDIT_H
#define _CAPFENCE_AUDIT_H

#include <linux/types.h>
#include "constraint.h"

struct cf_sandbox;
struct cf_epoch;
struct seccomp_data;
int cf_audit_init(void);
void cf_audit_exit(void);
void cf_audit_exercise(struct cf_sandbox *sb, const struct cf_target *t,
		       u64 epoch, enum capfence_reason r, u64 cap_id, u64 fence,
		       bool learn);
void cf_audit_cred_limit(struct cf_sandbox *sb, unsigned int limit);
void cf_audit_bpf(const char *what, u32 btf_id);
void cf_audit_delegate(pid_t pid, u64 epoch, u64 token_epoch, u8 class_id,
		       enum capfence_reason r, u64 cap_id, u64 fence);
int cf_reason_errno(enum capfence_reason r);
void cf_audit_syscall(struct cf_sandbox *sb, u64 epoch,
		      const struct seccomp_data *sd, u32 answer);
void cf_audit_bind(struct cf_sandbox *sb, const struct cf_epoch *e,
		   enum capfence_reason r, int depth);

#endif /* _CAPFENCE_AUDIT_H */
