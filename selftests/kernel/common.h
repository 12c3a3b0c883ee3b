/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the VM tests: the capfence family over netlink, keys
 * and tokens from libcapfence, sandboxed "agent" processes bound through
 * the public interface, a loopback server and an audit listener.
 */
#ifndef CFT_COMMON_H
#define CFT_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <libmnl/libmnl.h>
#include <capfence/capfence.h>
#include "capfence_testing.h"	/* capfence_client_fd() */
#include "cf_attrs.h"		/* the attribute table */

/*
 * The tests' view of the library's client: the typed calls go through
 * nl->c; tests that build their own (often malformed) requests start them
 * in nl->buf with cft_nl_req() and send them with cft_nl_talk(), which is
 * capfence_client_request(). nl->ext holds the message of the last failed
 * request ("" after a success).
 */
#define CFT_NL_BUFSZ (64 * 1024)

struct cft_nl {
	struct capfence_client *c;
	uint16_t family;	/* capfence_client_family() */
	int fd;			/* capfence_client_fd() */
	char ext[CAPFENCE_ERR_MAX];
	char *buf;		/* CFT_NL_BUFSZ */
};

int cft_nl_open(struct cft_nl *nl);
void cft_nl_close(struct cft_nl *nl);
/* Start a request for @cmd in nl->buf; NLM_F_REQUEST|NLM_F_ACK|@flags. */
struct nlmsghdr *cft_nl_req(struct cft_nl *nl, uint8_t cmd, uint16_t flags);
/* capfence_client_request(): 0 or -errno, the message in nl->ext. */
int cft_nl_talk(struct cft_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		void *data);
/* capfence_client_status(). */
int cft_nl_status(struct cft_nl *nl, struct capfence_status *s);
/* One u64 counter of STATUS_GET's CAPFENCE_A_STATS (CAPFENCE_STATS_A_*). */
int cft_nl_stat(struct cft_nl *nl, int attr, uint64_t *v);
/*
 * Parse the attributes of a capfence message into tb[CAPFENCE_A_MAX + 1],
 * and a nest of @set into tb[set->max + 1], through the library's table
 * (cf_attrs.h): an attribute of the wrong type or size is -EBADMSG.
 */
int cft_nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb);
int cft_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb,
			const struct cf_attr_set *set);

/* The reply to a decision (DELEGATE, EXEC_SET, REVOKE). */
struct cft_reply {
	int err;		/* 0 or -errno of the request */
	int reason;		/* CAPFENCE_A_REASON, -1 when absent */
	uint64_t cap_id, epoch_id, fence;
	char ext[256];		/* extack message */
};

int cft_open(struct cft_nl *nl);
/* A fresh epoch id above every installed one. */
uint64_t cft_next_epoch(struct cft_nl *nl);
int cft_key_install(struct cft_nl *nl, const struct capfence_key *k);
int cft_key_remove(struct cft_nl *nl, uint32_t id);
/* The test key (id 7 unless told otherwise), installed once per boot. */
struct capfence_key *cft_test_key(struct cft_nl *nl);
/* Install epoch @id from rule strings ("net:connect=token:127.0.0.0/8"). */
int cft_epoch_install(struct cft_nl *nl, uint64_t id, const char *const *rules,
		      int n, char *ext, size_t extlen);
int cft_epoch_activate(struct cft_nl *nl, uint64_t id);
int cft_mint(const struct capfence_key *k, const char *class_name, uint64_t epoch,
	     const char *constraint, uint64_t cap_id, struct capfence_token *t);
int cft_delegate(struct cft_nl *nl, const struct capfence_token *t, pid_t pid,
		 pid_t from, bool dry_run, struct cft_reply *r);
int cft_delegate_raw(struct cft_nl *nl, const uint8_t *buf, size_t len,
		     pid_t pid, struct cft_reply *r);
int cft_revoke(struct cft_nl *nl, uint64_t cap_id, struct cft_reply *r);
int cft_exec_set(struct cft_nl *nl, uint64_t epoch, const struct capfence_token *t,
		 int n, struct cft_reply *r);

/* The epoch @pid is bound to (TASK_GET), 0 when unbound. */
int cft_task_epoch(struct cft_nl *nl, pid_t pid, uint64_t *epoch);
/*
 * Wait until @pid is bound to @epoch: an exec closes its close-on-exec
 * descriptors before it installs the new credential, so a pipe closing at
 * exec does not yet mean "bound". Returns 0 or -ETIMEDOUT (5 s, scaled).
 */
int cft_wait_bound(struct cft_nl *nl, pid_t pid, uint64_t epoch);

/* A bound process driven over pipes; see cft_agent_main(). */
struct cft_agent {
	pid_t pid;
	int in, out;
};

/* Fork, set the pending exec epoch (+ tokens; 0: stay unbound), exec an agent.
 * Returns 0, or the EXEC_SET error (then nothing was exec'd). */
int cft_agent_spawn(struct cft_agent *a, uint64_t epoch,
		    const struct capfence_token *t, int n, struct cft_reply *r);
/*
 * When set, a bound agent's child runs cft_pre_exec(cft_pre_exec_arg)
 * between EXEC_SET and its execve (a launcher loading a seccomp filter);
 * a negative return is the spawn's error.
 */
extern int (*cft_pre_exec)(void *arg);
extern void *cft_pre_exec_arg;
/* Run one agent command; returns its errno result (0 = success), or
 * -1 when the agent does not answer. */
int cft_agent_do(struct cft_agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Close the agent and reap it; returns its wait status. */
int cft_agent_stop(struct cft_agent *a);
/*
 * cft_agent_stop(), true only when the agent exited by itself with 0: a
 * sandboxed task ended by a signal (SIGSYS above all) is logged and fails.
 * WEXITSTATUS() alone reads 0 for a killed task.
 */
bool cft_agent_stop_clean(struct cft_agent *a);
int cft_agent_main(void);
/* One line from @fd (without its newline), waiting at most @timeout_ms
 * (scaled; -1: no limit) for each byte: its length, -ETIMEDOUT or -EPIPE. */
int cft_read_line(int fd, char *buf, size_t len, int timeout_ms);
/*
 * Agent commands of one test program: a program may define this (a weak
 * default answers EINVAL) to run attack steps inside its bound agents.
 * Returns the command's errno result, 0 for success.
 */
int cft_agent_extra(char *cmd);

/* One connect attempt of the "spin" agent command (/tmp/spin.PID). */
struct cft_spin_rec {
	uint64_t start_ns;	/* CLOCK_MONOTONIC before connect() */
	uint32_t port;
	uint32_t allowed;	/* not EACCES */
};

uint64_t cft_now_ns(void);

/* A TCP listener on 127.0.0.1; returns the fd and sets *port. */
int cft_listen(uint16_t *port);

/* Become the audit daemon; records of CAPFENCE_AUDIT_TYPE come to us. */
int cft_audit_open(void);
/* Wait for a capfence record containing every needle (NULL-terminated
 * list) for @timeout_ms (scaled); copies it into out. Returns 0 or
 * -ETIMEDOUT. */
int cft_audit_wait(int fd, char *out, size_t len, int timeout_ms, ...);
/* cft_audit_wait() for records of another audit type. */
int cft_audit_wait_type(int fd, int type, char *out, size_t len,
			int timeout_ms, ...);
void cft_audit_close(int fd);
struct audit_status;
/*
 * The audit subsystem's status (AUDIT_GET) in *st, then @backlog_limit as
 * the new backlog limit (AUDIT_SET) unless it is 0. 0 or -errno.
 */
int cft_audit_status(struct audit_status *st, uint32_t backlog_limit);
/* The backlog limit, then @set as the new one unless 0: the old, or -errno. */
long cft_audit_backlog(uint32_t set);
/* Value of key=VALUE in an audit record (quotes kept), or "" if absent. */
const char *cft_field(const char *rec, const char *key, char *buf,
		      size_t len);

/*
 * Make up to @n new credentials of the calling task and keep each alive:
 * capset() to the capabilities it has (every call commits a new
 * credential), then an io_uring personality of it (rings are opened as
 * they fill and kept until cft_creds_drop()). Returns how many were made;
 * *err is the errno that stopped it early (0 when all were made).
 */
int cft_creds_hold(int n, int *err);
/* Close the rings: the credentials they kept go. */
void cft_creds_drop(void);


/* ---- time budgets and the state a program starts from ---- */

/*
 * capfence is built into the running kernel (CONFIG_SECURITY_CAPFENCE: an
 * active LSM of /sys/kernel/security/lsm), not the module: its hooks are
 * always attached and it cannot be unloaded.
 */
bool cft_builtin(void);
/* in a test that is about the module's BPF-LSM front end: skip it, saying why */
#define CFT_MODULE_ONLY(why) do {					\
	if (cft_builtin())						\
		SKIP(return, "capfence is built into this kernel: %s", why); \
} while (0)

/*
 * CAPFENCE_TIMEOUT_SCALE: the one factor by which every time budget of the
 * VM tests is multiplied (default 1: the stock kernels under TCG; the
 * debug and fault-injection runs set it). A positive number up to 1000;
 * anything else ends the program with a one-line error (exit 2).
 */
double cft_timeout_scale(void);
/* @ms (a wait that only measures speed) scaled; < 0 stays as it is. */
int cft_ms(int ms);

/* A capfence.ko parameter: its value or -1; set it, 0 or -errno. */
long cft_param_get(const char *name);
int cft_param_set(const char *name, long v);
/* @s seconds scaled, rounded up. */
unsigned int cft_secs(unsigned int s);

/*
 * What the test is waiting for now, printed when its budget runs out:
 * "# NAME: timed out after N s (B s x scale S), waiting for: WHAT (for
 * M s)". The shared helpers (agents, audit, binding, netlink requests)
 * set it themselves unless the test has marked a wider wait, which then
 * covers them; cft_waited() says the wait is over. A helper's wait that
 * timed out stays marked.
 */
void cft_waiting(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cft_waited(void);

/*
 * The per-test watchdog (harness.h arms it in each test's process):
 * after @secs seconds it prints the line above on stderr and hands the
 * harness its own timeout (SIGALRM to the harness process, which kills
 * the test's process group and reports "Test terminated by timeout").
 */
void cft_watchdog_arm(const char *name, unsigned int base, unsigned int secs);
/* Seconds since the watchdog was armed; disarms it. */
double cft_watchdog_disarm(void);

/*
 * A test stops here when CFT_DIE_AT=@point: its budget runs out at once,
 * leaving whatever state it has made (run-vm-tests proves with it that
 * the next program does not depend on that state).
 */
void cft_die_at(const char *point);

/* The module file a program loads when the module is not in. */
#define CFT_MODULE_PATH "/capfence.ko"
/* the bound on installed epochs while the tests run (the default is 1024) */
#define CFT_EPOCHS_MAX 65536

/*
 * The state every VM test program starts from, established by itself
 * whatever an earlier program left: capfence.ko loaded (CFT_MODULE_PATH),
 * the hooks attached (capfence attach), fleet mode off, the test key
 * (id 7) installed afresh, nothing left bound by tasks of an earlier
 * program. 0, or -errno with a one-line reason in @why.
 */
int cft_establish(char *why, size_t len);

#endif
