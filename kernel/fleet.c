// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet revision: the position of this host in the fleet-wide order of
 * changes (an etcd revision, applied by the host agent), and the bounds
 * that make a host that cannot confirm it is current fail closed.
 *
 * A change command carrying CAPFENCE_A_FLEET_REV is applied only when the
 * revision is above the module's, and the revision moves with it, so a
 * replayed change is refused (EALREADY) rather than applied twice. One
 * carrying a chain position (a signed fleet's) is applied only as the
 * next link of the chain the module holds (EALREADY for the link it holds,
 * EXDEV for anything else), and the module moves to its position: that,
 * not a store's revision, records what a chained host applied.
 * FLEET_SET moves the revision alone, sets the bounds and records the
 * agent's confirmations. From the last confirmation on, STALE_MS later
 * delegations and exec tokens are refused (fleet_stale) and DENY_MS later
 * exercises of every grant are denied: each was accepted at or below the
 * module's revision, and a later revision the host has not seen may have
 * revoked it.
 * Decisions read the deadlines, not a state, so no timer is needed for
 * enforcement; a delayed work only announces state changes.
 *
 * Locking: cf_mutex serializes every writer (netlink handlers and the
 * state work). Readers (exercise in BPF program context, status) read the
 * revision and deadlines locklessly with READ_ONCE(); each is one u64 and
 * no decision needs two of them consistent with each other. The chain
 * position (seq and link, a pair) is written under cf_mutex and
 * cf_fleet_chain_lock (a seqlock) and read under cf_mutex or as a
 * seqlock reader (cf_fleet_view(), from any process context). The
 * cf_fleet_mode static key is flipped only under cf_mutex.
 */
#include <linux/ktime.h>
#include <linux/netlink.h>
#include <linux/seqlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "fence.h"
#include "fleet.h"

DEFINE_STATIC_KEY_FALSE(cf_fleet_mode);
u64 cf_fleet_rev_val;
u64 cf_fleet_deny_at;
static DEFINE_SEQLOCK(cf_fleet_chain_lock);

static struct {
	u32 stale_ms;			/* 0: fleet mode off */
	u32 deny_ms;
	u64 confirmed;			/* boot ns of the last confirmation, 0 = none */
	u64 stale_at;			/* boot ns: delegations refused from here */
	u64 applied;			/* changes applied at a revision */
	u64 seq;			/* the chain's position held, 0: genesis */
	u8 link[CAPFENCE_FLEET_LINK_LEN];	/* its link */
	enum capfence_fleet_state announced;
	bool stopping;
} cf_fleet;

static void cf_fleet_watch(struct work_struct *work);
static DECLARE_DELAYED_WORK(cf_fleet_work, cf_fleet_watch);

static enum capfence_fleet_state cf_fleet_state(u64 now)
{
	if (!READ_ONCE(cf_fleet.stale_ms))
		return CAPFENCE_FLEET_OFF;
	if (now >= READ_ONCE(cf_fleet_deny_at))
		return CAPFENCE_FLEET_DENY;
	if (now >= READ_ONCE(cf_fleet.stale_at))
		return CAPFENCE_FLEET_STALE;
	return CAPFENCE_FLEET_CURRENT;
}

/*
 * Announce a state change and wake again at the next deadline. Caller
 * holds cf_mutex.
 */
static void cf_fleet_note(void)
{
	u64 now = ktime_get_boot_fast_ns(), next = 0;
	enum capfence_fleet_state s = cf_fleet_state(now);

	lockdep_assert_held(&cf_mutex);
	if (s != cf_fleet.announced) {
		cf_fleet.announced = s;
		cf_notify(CAPFENCE_EV_FLEET_STATE, 0, 0,
			  s >= CAPFENCE_FLEET_STALE ? CAPFENCE_R_FLEET_STALE :
			  CAPFENCE_R_OK, 0);
	}
	if (s == CAPFENCE_FLEET_CURRENT)
		next = cf_fleet.stale_at;
	else if (s == CAPFENCE_FLEET_STALE)
		next = cf_fleet_deny_at;
	if (next && !cf_fleet.stopping)
		mod_delayed_work(system_wq, &cf_fleet_work,
				 nsecs_to_jiffies(next - now) + 1);
}

static void cf_fleet_watch(struct work_struct *work)
{
	mutex_lock(&cf_mutex);
	cf_fleet_note();
	mutex_unlock(&cf_mutex);
}

/* Recompute the deadlines from the last confirmation. Under cf_mutex. */
static void cf_fleet_deadlines(void)
{
	u64 base = cf_fleet.confirmed;

	if (!base) {
		/* never confirmed: stale and denying from the start */
		WRITE_ONCE(cf_fleet.stale_at, 0);
		WRITE_ONCE(cf_fleet_deny_at, 0);
		return;
	}
	WRITE_ONCE(cf_fleet.stale_at,
		   base + (u64)cf_fleet.stale_ms * NSEC_PER_MSEC);
	WRITE_ONCE(cf_fleet_deny_at,
		   base + (u64)cf_fleet.deny_ms * NSEC_PER_MSEC);
}

/**
 * cf_fleet_stale() - must a delegation be refused as fleet_stale?
 *
 * Return: true in fleet mode when the last confirmation is older than the
 * stale bound (or there was none).
 */
bool cf_fleet_stale(void)
{
	return static_branch_unlikely(&cf_fleet_mode) &&
	       cf_fleet_state(ktime_get_boot_fast_ns()) >= CAPFENCE_FLEET_STALE;
}

/* Move the chain position. Under cf_mutex. */
static void cf_fleet_chain_set(const struct cf_fleet_link *chain)
{
	lockdep_assert_held(&cf_mutex);
	write_seqlock(&cf_fleet_chain_lock);
	cf_fleet.seq = chain->seq;
	memcpy(cf_fleet.link, chain->link, sizeof(cf_fleet.link));
	write_sequnlock(&cf_fleet_chain_lock);
}

/**
 * cf_fleet_begin() - may a change be applied at fleet revision @rev?
 * @rev: the revision the change carries, 0 for none
 * @chain: the chain position it carries, seq 0 for none
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex from here to cf_fleet_commit().
 *
 * Return: 0, -EALREADY when the module is at @rev or past it, or holds
 * @chain's link already, -EXDEV when @chain is not the next link of the
 * module's chain.
 */
int cf_fleet_begin(u64 rev, const struct cf_fleet_link *chain,
		   struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&cf_mutex);
	if (chain->seq) {
		if (chain->seq == cf_fleet.seq &&
		    !memcmp(chain->link, cf_fleet.link, sizeof(cf_fleet.link))) {
			NL_SET_ERR_MSG(extack,
				       "the module holds this fleet chain link already");
			return -EALREADY;
		}
		if (chain->seq != cf_fleet.seq + 1 ||
		    memcmp(chain->prev, cf_fleet.link, sizeof(cf_fleet.link))) {
			NL_SET_ERR_MSG(extack,
				       "not the next link of the module's fleet chain");
			return -EXDEV;
		}
	}
	if (rev && rev <= cf_fleet_rev_val) {
		NL_SET_ERR_MSG(extack,
			       "the module has applied this fleet revision already");
		return -EALREADY;
	}
	return 0;
}

/**
 * cf_fleet_commit() - record that a change was applied at @rev and @chain
 * @rev: the revision cf_fleet_begin() admitted, 0 for none
 * @chain: the chain position it admitted, seq 0 for none
 *
 * Caller holds cf_mutex, taken before cf_fleet_begin().
 */
void cf_fleet_commit(u64 rev, const struct cf_fleet_link *chain)
{
	lockdep_assert_held(&cf_mutex);
	if (chain->seq)
		cf_fleet_chain_set(chain);
	if (!rev && !chain->seq)
		return;
	if (rev)
		WRITE_ONCE(cf_fleet_rev_val, rev);
	cf_notify(CAPFENCE_EV_FLEET_APPLY, 0, 0, CAPFENCE_R_OK, 0);
	/* after the event: not a tail call, so fault injection can name it */
	cf_fleet.applied++;
}

/**
 * cf_fleet_set() - move the revision, set the bounds, record a confirmation
 * @req: the parsed FLEET_SET request
 * @extack: netlink extended ack
 *
 * Caller holds cf_mutex.
 *
 * Return: 0, -EALREADY for a revision below the module's, -EXDEV for a
 * chain position below the module's (or at it with another link), -EINVAL for
 * bounds that are not 0 <= STALE_MS <= DENY_MS (both 0 or both set), a
 * confirmation outside fleet mode, or one asked at an instant ahead of
 * the module's clock.
 */
int cf_fleet_set(const struct cf_fleet_req *req, struct netlink_ext_ack *extack)
{
	u32 stale = cf_fleet.stale_ms, deny = cf_fleet.deny_ms;

	lockdep_assert_held(&cf_mutex);
	if (req->rev && req->rev < cf_fleet_rev_val) {
		NL_SET_ERR_MSG(extack,
			       "the fleet revision is below the module's");
		return -EALREADY;
	}
	if (req->bounds) {
		stale = req->stale_ms;
		deny = req->deny_ms;
		if (deny < stale || (!stale && deny)) {
			NL_SET_ERR_MSG(extack,
				       "fleet bounds: DENY_MS must be at least STALE_MS, and 0 only with it");
			return -EINVAL;
		}
	}
	if (req->fresh && !stale) {
		NL_SET_ERR_MSG(extack, "a fleet confirmation needs fleet mode (STALE_MS)");
		return -EINVAL;
	}
	if (req->chain.seq &&
	    (req->chain.seq < cf_fleet.seq ||
	     (req->chain.seq == cf_fleet.seq &&
	      memcmp(req->chain.link, cf_fleet.link, sizeof(cf_fleet.link))))) {
		NL_SET_ERR_MSG(extack,
			       "the fleet chain position is below the module's, or another link at it");
		return -EXDEV;
	}
	if (req->asked_ns > ktime_get_boot_fast_ns()) {
		NL_SET_ERR_MSG(extack,
			       "ASKED_NS is ahead of the module's CLOCK_BOOTTIME");
		return -EINVAL;
	}
	if (req->rev > cf_fleet_rev_val) {
		WRITE_ONCE(cf_fleet_rev_val, req->rev);
		cf_notify(CAPFENCE_EV_FLEET_APPLY, 0, 0, CAPFENCE_R_OK, 0);
	}
	if (req->chain.seq > cf_fleet.seq) {
		cf_fleet_chain_set(&req->chain);
		cf_notify(CAPFENCE_EV_FLEET_APPLY, 0, 0, CAPFENCE_R_OK, 0);
	}
	WRITE_ONCE(cf_fleet.stale_ms, stale);
	cf_fleet.deny_ms = deny;
	if (req->fresh) {
		u64 now = ktime_get_boot_fast_ns();
		u64 age = (u64)req->age_ms * NSEC_PER_MSEC;

		/* the confirmation holds from when the agent asked */
		if (req->asked_ns)
			cf_fleet.confirmed = req->asked_ns;
		else
			cf_fleet.confirmed = age < now ? now - age : 1;
	}
	cf_fleet_deadlines();
	if (stale)
		static_branch_enable(&cf_fleet_mode);
	else
		static_branch_disable(&cf_fleet_mode);
	cf_fleet_note();
	return 0;
}

/**
 * cf_fleet_view() - the fleet state, for a status reply or a fleet event
 * @v: filled; read locklessly, one field at a time, the chain position
 *     as one pair (a seqlock reader)
 */
void cf_fleet_view(struct cf_fleet_view *v)
{
	u64 now = ktime_get_boot_fast_ns(), confirmed;
	unsigned int sq;

	v->rev = cf_fleet_rev();
	v->stale_ms = READ_ONCE(cf_fleet.stale_ms);
	v->deny_ms = READ_ONCE(cf_fleet.deny_ms);
	v->state = cf_fleet_state(now);
	v->applied = READ_ONCE(cf_fleet.applied);
	confirmed = READ_ONCE(cf_fleet.confirmed);
	v->confirmed = confirmed != 0;
	v->age_ms = min_t(u64, (now - min(now, confirmed)) / NSEC_PER_MSEC,
			  U32_MAX);
	do {
		sq = read_seqbegin(&cf_fleet_chain_lock);
		v->seq = cf_fleet.seq;
		memcpy(v->link, cf_fleet.link, sizeof(v->link));
	} while (read_seqretry(&cf_fleet_chain_lock, sq));
}

/**
 * cf_fleet_exit() - stop state announcements before netlink goes
 */
void cf_fleet_exit(void)
{
	mutex_lock(&cf_mutex);
	cf_fleet.stopping = true;
	mutex_unlock(&cf_mutex);
	cancel_delayed_work_sync(&cf_fleet_work);
}
