// SPDX-License-Identifier: GPL-2.0
/*
 * What a loader holding CAP_BPF and CAP_PERFMON could do to every LSM
 * (privilege_test): a BPF_MODIFY_RETURN program on the kernel's
 * security_file_permission() skips the whole function, every LSM's
 * file_permission hook included, when it returns non-zero; its value
 * becomes the function's, and sendfile() takes a positive one as leave to
 * go on. This one would do so for the task whose tgid is target_tgid.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

int target_tgid;

SEC("fmod_ret/security_file_permission")
int BPF_PROG(skip_file_permission, struct file *file, int mask, int ret)
{
	return (int)(bpf_get_current_pid_tgid() >> 32) == target_tgid ? 1 : 0;
}

char LICENSE[] SEC("license") = "GPL";
