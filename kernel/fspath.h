/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fs:read and fs:write by name (fspath.c).
 */
#ifndef _CAPFENCE_FSPATH_H
#define _CAPFENCE_FSPATH_H

#include <linux/cred.h>

struct file;
struct path;
struct dentry;
struct inode;
int cf_fs_file_open(const struct cred *cred, struct file *file, u64 ns_id,
		    u64 ns_event);
int cf_fs_entry(const struct cred *cred, const struct path *dir,
		struct dentry *dentry);
int cf_fs_attr(const struct cred *cred, const struct path *path);
int cf_fs_link(const struct cred *cred, struct dentry *old_dentry,
	       const struct path *new_dir, struct dentry *new_dentry);
int cf_fs_rename(const struct cred *cred, const struct path *old_dir,
		 struct dentry *old_dentry, const struct path *new_dir,
		 struct dentry *new_dentry, unsigned int flags);
int cf_fs_view(const struct cred *cred, const char *what);
int cf_fs_xattr(const struct cred *cred, const char *what);
int cf_fs_mqueue(const struct cred *cred, const struct inode *dir,
		 const char *what);

#endif /* _CAPFENCE_FSPATH_H */
