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
#include "libcapfence.h"
#include "nl.h"

/* The reply to a decision (DELEGATE, EXEC_SET, REVOKE). */
struct cft_reply {
	int err;		/* 0 or -errno of the request */
	int reason;		/* CAPFENCE_A_REASON, -1 when absent */
	uint64_t cap_id, epoch_id, fence;
	char ext[256];		/* extack message */
};

int cft_open(struct cf_nl *nl);
/* A fresh epoch id above every installed one. */
uint64_t cft_next_epoch(struct cf_nl *nl);
int cft_key_install(struct cf_nl *nl, const struct cf_key *k);
int cft_key_remove(struct cf_nl *nl, uint32_t id);
/* The test key (id 7 unless told otherwise), installed once per boot. */
struct cf_key *cft_test_key(struct cf_nl *nl);
/* Install epoch @id from rule strings ("net:connect=token:127.0.0.0/8"). */
int cft_epoch_install(struct cf_nl *nl, uint64_t id, const char *const *rules,
		      int n, char *ext, size_t extlen);
int cft_epoch_activate(struct cf_nl *nl, uint64_t id);
int cft_mint(const struct cf_key *k, const char *class_name, uint64_t epoch,
	     const char *constraint, uint64_t cap_id, struct cf_token *t);
int cft_delegate(struct cf_nl *nl, const struct cf_token *t, pid_t pid,
		 pid_t from, bool dry_run, struct cft_reply *r);
int cft_delegate_raw(struct cf_nl *nl, const uint8_t *buf, size_t len,
		     pid_t pid, struct cft_reply *r);
int cft_revoke(struct cf_nl *nl, uint64_t cap_id, struct cft_reply *r);
int cft_exec_set(struct cf_nl *nl, uint64_t epoch, const struct cf_token *t,
		 int n, struct cft_reply *r);

/* The epoch @pid is bound to (TASK_GET), 0 when unbound. */
int cft_task_epoch(struct cf_nl *nl, pid_t pid, uint64_t *epoch);
/*
 * Wait until @pid is bound to @epoch: an exec closes its close-on-exec
 * descriptors before it installs the new credential, so a pipe closing at
 * exec does not yet mean "bound". Returns 0 or -ETIMEDOUT (5 s).
 */
int cft_wait_bound(struct cf_nl *nl, pid_t pid, uint64_t epoch);

/* A bound process driven over pipes; see cft_agent_main(). */
struct cft_agent {
	pid_t pid;
	int in, out;
};

/* Fork, set the pending exec epoch (+ tokens; 0: stay unbound), exec an agent.
 * Returns 0, or the EXEC_SET error (then nothing was exec'd). */
int cft_agent_spawn(struct cft_agent *a, uint64_t epoch,
		    const struct cf_token *t, int n, struct cft_reply *r);
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
 * list); copies it into out. Returns 0 or -ETIMEDOUT. */
int cft_audit_wait(int fd, char *out, size_t len, int timeout_ms, ...);
void cft_audit_close(int fd);
/* Value of key=VALUE in an audit record (quotes kept), or "" if absent. */
const char *cft_field(const char *rec, const char *key, char *buf,
		      size_t len);

/* Run the test harness, or act as an agent when exec'd as one. */
#define CFT_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		if (argc > 1 && !strcmp(argv[1], "--agent"))		\
			return cft_agent_main();			\
		return test_harness_run(argc, argv);			\
	}

#endif
