// SPDX-License-Identifier: GPL-2.0
/*
 * What a loader holding CAP_BPF and CAP_PERFMON could do to every LSM
 * (privilege_test): a BPF_MODIFY_RETURN program on the kernel's
 * security_file_permission() skips the whole function, every LSM's
 * file_permission hook included, when it returns non-zero; its value
 * becomes the function's, and sendfile() takes a positive one as leave to
 * go on. A BPF_LSM_CGROUP program does the same from the hook's own
 * trampoline, ahead of capfence's program, with what bpf_set_retval() set
 * (a fifth outside round). A plain BPF-LSM program attached after
 * capfence's runs first on the hook's trampoline, and a return that is
 * non-zero on 64 bits ends the run before capfence's program: on 6.1 any
 * positive value (no verifier bound), on 6.12 one whose low 32 bits, all
 * the verifier checks, are 0 (a sixth outside round). These would do so
 * for the task whose tgid is target_tgid.
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

SEC("lsm_cgroup/file_permission")
int BPF_PROG(cgroup_file_permission, struct file *file, int mask)
{
	if ((int)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 1;
	bpf_set_retval(1);
	return 1;
}

SEC("lsm/file_permission")
int BPF_PROG(mac_file_permission, struct file *file, int mask, int ret)
{
	if (ret)
		return ret;
	return (int)(bpf_get_current_pid_tgid() >> 32) == target_tgid ? 1 : 0;
}

SEC("lsm/file_permission")
long BPF_PROG(hi32_file_permission, struct file *file, int mask, int ret)
{
	if (ret)
		return ret;
	return (int)(bpf_get_current_pid_tgid() >> 32) == target_tgid ?
	       0x100000000L : 0;
}

char LICENSE[] SEC("license") = "GPL";
