// SPDX-License-Identifier: GPL-2.0
/*
 * A test-only module: advance rename_lock's sequence as N renames would,
 * so that a test can bring it back to a value it had (2^31 renames, which
 * would take most of an hour) in an instant. Writing N to
 * /sys/module/seqwrap/parameters/renames adds N renames; reading it shows
 * the sequence. Never loaded outside the test VM.
 *
 * Locking: one write section of rename_lock, as d_move() takes it.
 */
#include <linux/dcache.h>
#include <linux/module.h>
#include <linux/seqlock.h>

static int seqwrap_set(const char *val, const struct kernel_param *kp)
{
	unsigned long n;
	int err = kstrtoul(val, 0, &n);

	if (err || !n)
		return err;
	/* this write section is one rename; each other one adds 2 */
	write_seqlock(&rename_lock);
	rename_lock.seqcount.seqcount.sequence += 2 * (unsigned int)(n - 1);
	write_sequnlock(&rename_lock);
	return 0;
}

static int seqwrap_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", raw_read_seqcount(&rename_lock.seqcount));
}

static const struct kernel_param_ops seqwrap_ops = {
	.set = seqwrap_set,
	.get = seqwrap_get,
};
module_param_cb(renames, &seqwrap_ops, NULL, 0600);
MODULE_DESCRIPTION("capfence tests: advance rename_lock's sequence");
MODULE_LICENSE("GPL");
