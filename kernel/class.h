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
	u32 unkept;	/* opened classes with CF_KEEP_NONE: no open memo */
	u32 change;	/* CF_PATH_CHANGE */
	u32 names;	/* CF_PATH_NAMES */
	u32 keeps[CF_OPEN_SLOTS];	/* BIT(id) of the class keeping each slot */
	u8 n_open;	/* the classes an open may need: their rows' tests, */
	struct cf_open_test {	/* copied so that an open reads one array */
		u8 class_id;
		bool ioctl;
		fmode_t mode;
		unsigned int flags;
	} open[__CAPFENCE_CLASS_MAX];
};

extern struct cf_class_sets cf_class_sets;

const struct cf_class *cf_class(u8 class_id);
int cf_class_init(void);

/**
 * cf_open_needs() - does an open with @f_mode and @f_flags need a class?
 * @o: the class's test, from cf_class_sets.open
 * @f_mode: the file's f_mode
 * @f_flags: the file's f_flags
 *
 * Inline: every mediated open asks it of each class an open may need.
 *
 * Return: true when the open exercises the class.
 */
static inline bool cf_open_needs(const struct cf_open_test *o, fmode_t f_mode,
				 unsigned int f_flags)
{
	return (f_mode & o->mode) || (f_flags & o->flags) ||
	       (o->ioctl && (f_flags & O_ACCMODE) == O_ACCMODE);
}

#endif /* _CAPFENCE_CLASS_H */
