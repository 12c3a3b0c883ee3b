/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAC keys (key.c) and the removal cell every grant under a key shares.
 */
#ifndef _CAPFENCE_KEY_H
#define _CAPFENCE_KEY_H

#include <linux/netlink.h>
#include <linux/refcount.h>
#include <linux/types.h>

/*
 * Removal state of one installed key, shared by every grant accepted under
 * it: removing the key fences them all in one store.
 */
struct cf_keycell {
	refcount_t ref;
	u64 removed_at;			/* fence lock; 0 = installed */
};

void cf_key_exit(void);
int cf_key_install(u32 id, const u8 *key, struct netlink_ext_ack *extack);
int cf_key_remove(u32 id, struct netlink_ext_ack *extack);
int cf_key_verify(u32 key_id, const u8 *msg, size_t len, const u8 *mac);
struct cf_keycell *cf_keycell_get(u32 key_id);
void cf_keycell_put(struct cf_keycell *c);

#endif /* _CAPFENCE_KEY_H */
