// SPDX-License-Identifier: MIT
/*
 * An orchestrator on libcapfence's 2 interface: the design note's scenario.
 *
 *   cc orchestrator.c $(pkg-config --cflags --libs capfence-2) -o orchestrator
 *   ./orchestrator           against capfence.ko (root, module loaded)
 *   ./orchestrator --local   the same decisions by the library alone
 *
 * Epoch E41 lets agents connect to loopback and write under /tmp; the
 * rolling update E42 narrows net:connect away. A parent agent spawned
 * under E41 holds a net:connect token; its child is spawned under E42.
 * Delegating the parent's token to the child is rejected at the boundary
 * (epoch_mismatch, ESTALE: re-mint under the receiver's epoch); re-minted
 * under E42 it is denied (class_denied, EACCES): the narrowing applies to
 * the child. An fs:write token, still allowed in E42, goes through after
 * its re-mint. Exit status 0 iff every step decided as the note says.
 *
 * The 2 interface (libcapfence(3)): epochs are the library's handles
 * (capfence_epoch_new), and each call takes an options struct declared
 * with CAPFENCE_OPTS (NULL: the defaults).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <capfence/capfence.h>

static int failures;

static void expect(const char *what, int got, int want)
{
	printf("%-58s %s (%s)\n", what,
	       got < 0 ? "error" : capfence_reason_name(got),
	       got == want ? "as expected" : "UNEXPECTED");
	if (got != want)
		failures++;
}

static int mint(const struct capfence_key *k, const char *cls, uint64_t epoch,
		const char *constraint, struct capfence_token *t)
{
	struct capfence_constraint c;
	char err[CAPFENCE_ERR_MAX];
	size_t n = 0;

	if (constraint) {
		if (capfence_constraint_parse(constraint, &c, err, sizeof(err))) {
			fprintf(stderr, "constraint %s: %s\n", constraint, err);
			return -1;
		}
		n = 1;
	}
	if (capfence_token_mint(k, capfence_class_from_name(cls), epoch, &c, n,
				0, t, err, sizeof(err))) {
		fprintf(stderr, "mint: %s\n", err);
		return -1;
	}
	return 0;
}

static int epoch(struct capfence_epoch **e, uint64_t id,
		 const char *const *rules, size_t n)
{
	char err[CAPFENCE_ERR_MAX];

	if (capfence_epoch_new(id, e)) {
		fprintf(stderr, "epoch %" PRIu64 ": no memory\n", id);
		return -1;
	}
	if (capfence_epoch_parse_rules(*e, id, rules, n, err, sizeof(err))) {
		fprintf(stderr, "epoch %" PRIu64 ": %s\n", id, err);
		return -1;
	}
	return 0;
}

static const char *const e41_rules[] = { "net:connect=token:127.0.0.0/8",
					 "fs:write=token:/tmp" };
static const char *const e42_rules[] = { "fs:write=token:/tmp" };

/* The note's accept_delegation(), decided by the library alone. */
static int local(const struct capfence_key *k)
{
	const struct capfence_key *keys[] = { k };
	struct capfence_epoch *e41 = NULL, *e42 = NULL;
	struct capfence_token net, renet, wr;

	if (epoch(&e41, 41, e41_rules, 2) || epoch(&e42, 42, e42_rules, 1) ||
	    mint(k, "net:connect", 41, "127.0.0.1:8080", &net) ||
	    mint(k, "net:connect", 42, "127.0.0.1:8080", &renet) ||
	    mint(k, "fs:write", 42, "/tmp/out", &wr)) {
		failures++;
		goto out;
	}
	expect("E41 token, receiver bound to E41",
	       capfence_decide_delegation(keys, 1, &net, e41), CAPFENCE_R_OK);
	expect("E41 token, receiver bound to E42",
	       capfence_decide_delegation(keys, 1, &net, e42),
	       CAPFENCE_R_EPOCH_MISMATCH);
	expect("re-minted under E42 (net:connect narrowed away)",
	       capfence_decide_delegation(keys, 1, &renet, e42),
	       CAPFENCE_R_CLASS_DENIED);
	expect("fs:write under E42",
	       capfence_decide_delegation(keys, 1, &wr, e42), CAPFENCE_R_OK);
out:
	capfence_epoch_free(e41);
	capfence_epoch_free(e42);
	return failures ? 1 : 0;
}

static int kernel(const struct capfence_key *k)
{
	/* the agents: a sleep (busybox's in the test VM) */
	char *const busybox[] = { "/bin/busybox", "sleep", "60", NULL };
	char *const coreutils[] = { "sleep", "60", NULL };
	char *const *argv = access(busybox[0], X_OK) ? coreutils : busybox;
	struct capfence_client *c = NULL;
	struct capfence_result r, first;
	struct capfence_status st;
	struct capfence_epoch *e41 = NULL, *e42 = NULL;
	struct capfence_token net, wr, nt, held[2];
	CAPFENCE_OPTS(capfence_bind_opts, parent_opts, .tokens = held, .n = 2);
	CAPFENCE_OPTS(capfence_delegate_opts, from_parent);
	CAPFENCE_OPTS(capfence_delegate_opts, remint, .remint = k,
		      .first = &first, .reminted = &nt);
	char err[CAPFENCE_ERR_MAX];
	pid_t parent = -1, child = -1;
	uint64_t id41;

	if (capfence_client_open(&c, err, sizeof(err))) {
		fprintf(stderr, "capfence: %s\n", err);
		return 1;
	}
	if (capfence_client_status(c, &st, err, sizeof(err)) ||
	    capfence_client_key_install_opts(c, k, NULL, err, sizeof(err))) {
		fprintf(stderr, "capfence: %s\n", err);
		goto out;
	}
	/* ids only grow: the two epochs of the note, above every installed */
	id41 = st.max_epoch + 1;
	if (epoch(&e41, id41, e41_rules, 2) ||
	    epoch(&e42, id41 + 1, e42_rules, 1))
		goto out;
	if (capfence_client_epoch_install_opts(c, e41, NULL, err, sizeof(err)) ||
	    capfence_client_epoch_install_opts(c, e42, NULL, err, sizeof(err))) {
		fprintf(stderr, "epoch install: %s\n", err);
		goto out;
	}
	printf("epochs E41=%" PRIu64 " and E42=%" PRIu64 " installed\n", id41,
	       id41 + 1);
	if (mint(k, "net:connect", id41, "127.0.0.1:8080", &net) ||
	    mint(k, "fs:write", id41, "/tmp/out", &wr))
		goto out;
	/* the parent holds both tokens from its exec on; the child nothing */
	held[0] = net;
	held[1] = wr;
	if (capfence_client_spawn_bound_opts(c, id41, argv[0], argv, &parent_opts,
					     &parent, &r) ||
	    capfence_client_spawn_bound_opts(c, id41 + 1, argv[0], argv, NULL,
					     &child, &r)) {
		fprintf(stderr, "spawn: %s (%s)\n", r.message, strerror(-r.err));
		goto out;
	}
	printf("parent pid %d bound to E41, child pid %d bound to E42\n",
	       (int)parent, (int)child);

	from_parent.from_pid = (uint32_t)parent;
	capfence_client_delegate_opts(c, &net, (uint32_t)child, &from_parent, &r);
	expect("parent delegates its E41 net:connect to the child",
	       r.reason, CAPFENCE_R_EPOCH_MISMATCH);
	printf("  errno %s, receiver epoch %" PRIu64 ": %s\n",
	       r.err == -ESTALE ? "ESTALE" : "?", r.epoch_id, r.message);
	capfence_client_delegate_opts(c, &net, (uint32_t)child, &remint, &r);
	expect("re-minted under the receiver's epoch", r.reason,
	       CAPFENCE_R_CLASS_DENIED);
	printf("  errno %s: %s\n", r.err == -EACCES ? "EACCES" : "?", r.message);
	capfence_client_delegate_opts(c, &wr, (uint32_t)child, &remint, &r);
	expect("fs:write, re-minted under E42", r.reason, CAPFENCE_R_OK);
	printf("  new cap_id %016" PRIx64 " under epoch %" PRIu64 " (fence %" PRIu64 ")\n",
	       nt.cap_id, nt.epoch_id, r.fence);
out:
	if (parent > 0) {
		kill(parent, SIGKILL);
		waitpid(parent, NULL, 0);
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	capfence_epoch_free(e41);
	capfence_epoch_free(e42);
	capfence_client_close(c);
	return failures || child <= 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct capfence_key *k = NULL;
	int ret;

	printf("libcapfence %s\n", capfence_version());
	if (capfence_key_generate(77, &k)) {
		fprintf(stderr, "cannot generate a key\n");
		return 1;
	}
	ret = argc > 1 && !strcmp(argv[1], "--local") ? local(k) : kernel(k);
	capfence_key_free(k);
	printf("%s\n", ret ? "FAIL" : "ok");
	return ret;
}
