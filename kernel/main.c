// SPDX-License-Identifier: GPL-2.0
/*
 * capfence: capability delegation fenced by syscall-policy epochs.
 *
 * Module entry and exit. The LSM hooks are BPF-LSM programs (lsm/) that
 * call this module's kfuncs; a module cannot register LSM hooks itself.
 *
 * Locking: init and exit run single-threaded. Exit is reachable only when
 * no BPF program references the module (they hold it through their kfunc
 * calls), so no hook can run concurrently with it; netlink is unregistered
 * first (after the activation event work), then the audit queue is
 * written out (cf_audit_exit()), then cf_cap_drain() waits for deferred
 * frees, including the ones a deferred free queues.
 */
#include <linux/module.h>
#include <net/genetlink.h>
#include "audit.h"
#include "cap.h"
#include "class.h"
#include "cred.h"
#include "epoch.h"
#include "file.h"
#include "fleet.h"
#include "hooks.h"
#include "key.h"
#include "kfunc.h"
#include "netlink.h"
#include "sandbox.h"
#include "sock.h"
#include "version.h"
#include "compat.h"

static int __init capfence_init(void)
{
	int err;

	err = cf_class_init();
	if (err)
		return err;
	err = cf_audit_init();
	if (err)
		return err;
	err = cf_cred_init();
	if (err)
		goto err_audit;
	err = cf_file_init();
	if (err)
		goto err_cred;
	err = cf_sock_init();
	if (err)
		goto err_file;
	err = cf_kfunc_init();
	if (err) {
		pr_err("capfence: kfunc registration failed (%d); is module BTF present?\n",
		       err);
		goto err_sock;
	}
	err = cf_netlink_init();
	if (err)
		goto err_sock;
	pr_info("capfence: version %s loaded, hooks not attached\n",
		CAPFENCE_VERSION);
	return 0;
err_sock:
	cf_sock_exit();
err_file:
	cf_file_exit();
err_cred:
	cf_cred_exit();
err_audit:
	cf_audit_exit();
	return err;
}

static void __exit capfence_exit(void)
{
	/* no activation event may be sent to an unregistered family */
	cf_epoch_events_stop();
	cf_fleet_exit();
	cf_netlink_exit();
	cf_hooks_exit();
	cf_audit_exit();
	cf_sock_exit();
	cf_file_exit();
	cf_cred_exit();
	cf_cap_drain();
	cf_key_exit();
	cf_cap_exit();
	cf_epoch_exit();
}

module_init(capfence_init);
module_exit(capfence_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("capfence: capability delegation fenced by syscall-policy epochs");
MODULE_VERSION(CAPFENCE_VERSION);
MODULE_ALIAS_GENL_FAMILY(CAPFENCE_GENL_NAME);
#ifdef CF_IMPORT_BPF_INTERNAL
MODULE_IMPORT_NS(BPF_INTERNAL);
#endif
