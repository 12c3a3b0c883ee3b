/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Revalidation of files opened under a capability (file.c).
 */
#ifndef _CAPFENCE_FILE_H
#define _CAPFENCE_FILE_H

#include <linux/atomic.h>
#include <linux/types.h>
#include "cap.h"

struct file;
struct cf_file_exec;

/*
 * The grants that admitted an open; a reference is held on each. The
 * front end keeps one per tracked file (file_store.h).
 */
struct cf_file_grants {
	struct cf_grant *read;		/* fs:read grant or NULL */
	struct cf_grant *write;		/* fs:write grant or NULL */
	struct cf_file_exec *exec;	/* an exec's file, or NULL */
};

int cf_file_init(void);
void cf_file_exit(void);
int cf_file_track(struct file *file, struct cf_grant *rg, struct cf_grant *wg);
int cf_file_revalidate(struct file *file, int mask);
int cf_file_ioctl(struct file *file);
void cf_file_free(struct file *file);
int cf_file_map(struct file *file, unsigned long prot, bool shared,
		const char *what);
int cf_file_exec_commit(void);
bool cf_file_exec_pending(void);

extern atomic_long_t cf_nr_files;

/**
 * cf_nr_tracked_files() - files whose grant is rechecked on use
 *
 * Inline: the file hooks (kfunc.c) test it before calling into file.c,
 * which relies on that.
 *
 * Return: the count; hooks stay attached while it is non-zero.
 */
static inline long cf_nr_tracked_files(void)
{
	return atomic_long_read(&cf_nr_files);
}

#endif /* _CAPFENCE_FILE_H */
