/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The class table (class.c).
 */
#ifndef _CAPFENCE_CLASS_H
#define _CAPFENCE_CLASS_H

#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/types.h>
#include <uapi/linux/capfence.h>

/* What an open keeps of the grant that admitted it for a class. */
enum cf_open_keep {
	CF_KEEP_NONE,	/* nothing: the open is the whole exercise */
	CF_KEEP_READ,	/* reads recheck it; the open memo's slot 0 */
	CF_KEEP_WRITE,	/* writes recheck it; the open memo's slot 1 */
	__CF_KEEP_MAX
};

#define CF_OPEN_SLOTS (__CF_KEEP_MAX - 1)

/*
 * Path operations other than open that a path class judges (fspath.c):
 * CHANGE, creating, removing and changing the attributes or xattrs of a
 * name, and both names of a link or rename; NAMES, that a new name (link,
 * rename) admits nothing the old one did not.
 */
enum cf_path_op {
	CF_PATH_CHANGE = 1 << 0,
	CF_PATH_NAMES = 1 << 1,
};

/*
 * A class: its name, its constraint kind, for a net class its family and
 * the end of a connection it judges, and for a path class which
 * opens need it (any of @open_mode in f_mode, any of @open_flags in
 * f_flags, or access mode 3 with @open_ioctl), what the open keeps of its
 * grant and which other path operations it judges.
 */
struct cf_class {
	const char *name;	/* stable: audit records, events, the CLI */
	u8 constraint;		/* CAPFENCE_CONSTRAINT_* of its tokens and rules */
	u8 family;		/* NET: CAPFENCE_FAMILY_VSOCK, or 0 for 4 and 6 */
	u8 net_end;		/* NET: enum cf_net_end */
	u8 open_keep;		/* enum cf_open_keep */
	u8 path_ops;		/* enum cf_path_op */
	bool open_ioctl;
	fmode_t open_mode;
	unsigned int open_flags;
};

/* Which end of a connection a net class judges (sock.c names it). */
enum cf_net_end {
	CF_NET_PEER = 1,
	CF_NET_LOCAL,
};

/*
 * The classes as the edges loop over them, made from the rows by
 * cf_class_init(): masks of BIT(class id), so a loop takes them in table
 * order.
 */
struct cf_class_sets {
	u32 inet;	/* net classes of IPv4 and IPv6 */
	u32 path;	/* every path class */
	u32 open;	/* those an open may need */
	u32 unkept;	/* of those, CF_KEEP_NONE: the open memo cannot serve */
	u32 change;	/* CF_PATH_CHANGE */
	u32 names;	/* CF_PATH_NAMES */
};

extern struct cf_class_sets cf_class_sets;

const struct cf_class *cf_class(u8 class_id);
int cf_class_init(void);

/**
 * cf_class_opens() - does an open with @f_mode and @f_flags need @c?
 * @c: a class's row
 * @f_mode: the file's f_mode
 * @f_flags: the file's f_flags
 *
 * Inline: every mediated open asks it of each path class.
 *
 * Return: true when the open exercises the class.
 */
static inline bool cf_class_opens(const struct cf_class *c, fmode_t f_mode,
				  unsigned int f_flags)
{
	return (f_mode & c->open_mode) || (f_flags & c->open_flags) ||
	       (c->open_ioctl && (f_flags & O_ACCMODE) == O_ACCMODE);
}

#endif /* _CAPFENCE_CLASS_H */
