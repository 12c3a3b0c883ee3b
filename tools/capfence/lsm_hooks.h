/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF-LSM programs for hooks the running kernel has. A BPF object built
 * once for every supported kernel may carry programs for hooks only newer
 * kernels have (file_truncate, inode_set_acl, inode_remove_acl: 6.2);
 * before loading, turn off autoload of every "lsm/<hook>" program whose
 * bpf_lsm_<hook> the kernel's BTF lacks.
 * The inode_setattr program is written for the signature before 6.3 and
 * only needed before 6.2: it is left out where file_truncate exists.
 * Their skeleton links then stay NULL. Header-only: used by the CLI and by
 * the test and benchmark programs that load BPF-LSM objects (libbpf).
 */
#ifndef CF_LSM_HOOKS_H
#define CF_LSM_HOOKS_H

#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Returns the number of programs left out, or -1 without kernel BTF. */
static inline int cf_lsm_skip_missing_hooks(struct bpf_object *obj)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	char fn[128];
	int skipped = 0;

	if (!vmlinux)
		return -1;	/* let the load report it */
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);

		if (strncmp(sec, "lsm/", 4))
			continue;
		snprintf(fn, sizeof(fn), "bpf_lsm_%s", sec + 4);
		if (btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC) < 0 ||
		    (!strcmp(sec, "lsm/inode_setattr") &&
		     btf__find_by_name_kind(vmlinux, "bpf_lsm_file_truncate",
					    BTF_KIND_FUNC) >= 0)) {
			bpf_program__set_autoload(prog, false);
			skipped++;
		}
	}
	btf__free(vmlinux);
	return skipped;
}

#endif /* CF_LSM_HOOKS_H */
