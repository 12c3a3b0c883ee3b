// SPDX-License-Identifier: GPL-2.0
/*
 * The LSM hook inventory of docs/threat-model.md against the running
 * kernel: every BPF-LSM hook the kernel has (a bpf_lsm_<hook> function in
 * its BTF) must have a row that says the kernel has it, and the hooks
 * capfence has attached (its BPF-LSM links, programs cf_*) must be exactly
 * the rows marked used for this kernel. A kernel that routes an operation
 * through a hook nobody classified (as 6.2 did with POSIX ACLs and
 * inode_set_acl) fails here until the table says what capfence does
 * with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#define CFT_TEST_SECONDS 120
#include "harness.h"
#include "common.h"

#define INVENTORY	"/usr/share/capfence/threat-model.md"
#define MAXHOOKS	512

/* bpf_lsm_* functions of kernel/bpf/bpf_lsm.c that are not hooks */
static const char *const not_hooks[] = {
	"find_cgroup_shim", "func_proto", "get_retval_range", "init",
	"is_sleepable_hook", "is_trusted", "verify_prog",
};

struct row {
	char name[64];
	bool in61, in612;
	bool used61, used612;
};

struct inventory {
	struct row r[MAXHOOKS];
	int n;
};

/* "yes" or "–" */
static bool cell_yes(const char *c)
{
	while (*c == ' ')
		c++;
	return !strncmp(c, "yes", 3);
}

/* the rows of the "## The LSM hook inventory" table */
static int inventory_read(struct inventory *inv)
{
	char line[2048];
	bool in = false;
	FILE *f = fopen(INVENTORY, "r");

	if (!f)
		return -errno;
	inv->n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *cell[5], *p = line, *end;
		struct row *r;
		int i;

		if (!strncmp(line, "## ", 3)) {
			in = !strncmp(line, "## The LSM hook inventory", 25);
			continue;
		}
		if (!in || strncmp(line, "| `", 3))
			continue;
		for (i = 0; i < 5; i++) {
			p = strchr(p, '|');
			if (!p)
				break;
			cell[i] = ++p;
		}
		if (i < 5 || inv->n == MAXHOOKS)
			continue;
		r = &inv->r[inv->n++];
		memset(r, 0, sizeof(*r));
		end = strchr(cell[0] + 2, '`');
		if (!end || end - (cell[0] + 2) >= (long)sizeof(r->name))
			continue;
		memcpy(r->name, cell[0] + 2, (size_t)(end - (cell[0] + 2)));
		r->in61 = cell_yes(cell[1]);
		r->in612 = cell_yes(cell[2]);
		if (strstr(cell[3], "**used on 6.1**")) {
			r->used61 = true;
		} else if (strstr(cell[3], "**used on 6.12**")) {
			r->used612 = true;
		} else if (strstr(cell[3], "**used**")) {
			r->used61 = true;
			r->used612 = true;
		}
	}
	fclose(f);
	return 0;
}

static const struct row *inventory_find(const struct inventory *inv,
					const char *name)
{
	int i;

	for (i = 0; i < inv->n; i++)
		if (!strcmp(inv->r[i].name, name))
			return &inv->r[i];
	return NULL;
}

/* 612 on 6.12, 601 on 6.1, else 0 */
static int kernel_series(void)
{
	struct utsname u;
	int maj, min;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return 0;
	return maj == 6 && (min == 1 || min == 12) ? maj * 100 + min : 0;
}

static bool row_has(const struct row *r, int series)
{
	return series == 601 ? r->in61 : r->in612;
}

static bool row_used(const struct row *r, int series)
{
	return series == 601 ? r->used61 : r->used612;
}

static bool is_hook(const char *fn)
{
	size_t i;

	if (strncmp(fn, "bpf_lsm_", 8))
		return false;
	for (i = 0; i < sizeof(not_hooks) / sizeof(not_hooks[0]); i++)
		if (!strcmp(fn + 8, not_hooks[i]))
			return false;
	return true;
}

FIXTURE(inv) {
	struct inventory inv;
	struct btf *btf;
	int series;
};

FIXTURE_SETUP(inv)
{
	self->series = kernel_series();
	ASSERT_NE(0, self->series) TH_LOG("not a kernel capfence supports");
	ASSERT_EQ(0, inventory_read(&self->inv)) TH_LOG("no " INVENTORY);
	ASSERT_LT(200, self->inv.n) TH_LOG("only %d rows", self->inv.n);
	self->btf = btf__load_vmlinux_btf();
	ASSERT_NE(NULL, self->btf);
}

FIXTURE_TEARDOWN(inv)
{
	btf__free(self->btf);
}

/* Every hook of the running kernel is in the table, for this kernel. */
TEST_F(inv, every_hook_of_the_kernel_is_classified)
{
	int id, n = btf__type_cnt(self->btf), hooks = 0, bad = 0;

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(self->btf, id);
		const char *fn;
		const struct row *r;

		if (!btf_is_func(t))
			continue;
		fn = btf__name_by_offset(self->btf, t->name_off);
		if (!fn || !is_hook(fn))
			continue;
		hooks++;
		r = inventory_find(&self->inv, fn + 8);
		if (!r || !row_has(r, self->series)) {
			TH_LOG("hook %s of this kernel is not in the inventory for %d.%d",
			       fn + 8, self->series / 100, self->series % 100);
			bad++;
		}
	}
	TH_LOG("%d hooks, %d rows", hooks, self->inv.n);
	EXPECT_LT(200, hooks);
	EXPECT_EQ(0, bad);
}

/* capfence's attached hooks are exactly the rows marked used here. */
TEST_F(inv, attached_hooks_are_the_used_rows)
{
	static bool attached[MAXHOOKS];
	__u32 lid = 0;
	int i, links = 0, bad = 0, used = 0;

	memset(attached, 0, sizeof(attached));
	while (!bpf_link_get_next_id(lid, &lid)) {
		struct bpf_link_info li = {};
		struct bpf_prog_info pi = {};
		__u32 len = sizeof(li);
		const struct btf_type *t;
		const struct row *r;
		const char *fn;
		int fd = bpf_link_get_fd_by_id(lid), pfd;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &li, &len) ||
		    li.type != BPF_LINK_TYPE_TRACING ||
		    li.tracing.attach_type != BPF_LSM_MAC) {
			close(fd);
			continue;
		}
		close(fd);
		pfd = bpf_prog_get_fd_by_id(li.prog_id);
		if (pfd < 0)
			continue;
		len = sizeof(pi);
		if (bpf_obj_get_info_by_fd(pfd, &pi, &len) ||
		    strncmp(pi.name, "cf_", 3)) {
			close(pfd);
			continue;
		}
		close(pfd);
		t = btf__type_by_id(self->btf, li.tracing.target_btf_id);
		fn = t ? btf__name_by_offset(self->btf, t->name_off) : NULL;
		ASSERT_NE(NULL, fn);
		ASSERT_TRUE(is_hook(fn)) TH_LOG("%s", fn);
		links++;
		r = inventory_find(&self->inv, fn + 8);
		if (!r || !row_used(r, self->series)) {
			TH_LOG("capfence is attached to %s, which the inventory does not mark used on %d.%d",
			       fn + 8, self->series / 100, self->series % 100);
			bad++;
			continue;
		}
		attached[r - self->inv.r] = true;
	}
	for (i = 0; i < self->inv.n; i++) {
		if (!row_used(&self->inv.r[i], self->series))
			continue;
		used++;
		if (!attached[i]) {
			TH_LOG("the inventory marks %s used on %d.%d, capfence is not attached to it",
			       self->inv.r[i].name, self->series / 100,
			       self->series % 100);
			bad++;
		}
	}
	TH_LOG("%d capfence links, %d rows used here", links, used);
	EXPECT_LT(40, links);
	EXPECT_EQ(used, links);
	EXPECT_EQ(0, bad);
}

CFT_MAIN
