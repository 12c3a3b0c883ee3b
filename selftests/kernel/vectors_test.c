// SPDX-License-Identifier: GPL-2.0
/*
 * The shared test vectors (selftests/vectors/tokens.txt) against the real
 * module: the kernel must reach exactly the decisions libcapfence and the
 * seed's reference reach, and refuse every malformed encoding. Needs a
 * fresh module (epoch ids 41..43 free), so run-vm-tests runs it first.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#define CFT_TEST_SECONDS 30
#include "harness.h"

#ifndef CF_VECTORS
#define CF_VECTORS "/usr/share/capfence/tokens.txt"
#endif

/* A task bound to @epoch that opens no file after exec (busybox is static). */
static pid_t bound_sleeper(uint64_t epoch)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		struct cft_reply r;
		struct cft_nl nl;

		close(p[0]);
		if (cft_open(&nl) || cft_exec_set(&nl, epoch, NULL, 0, &r))
			_exit(1);
		cft_nl_close(&nl);
		/* the pipe closes at exec; cft_wait_bound() waits for the bind */
		fcntl(p[1], F_SETFD, FD_CLOEXEC);
		execl("/bin/busybox", "sleep", "600", NULL);
		_exit(2);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 0) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t bin_len = 0;

	if (sodium_hex2bin(out, max, s, strlen(s), NULL, &bin_len, NULL))
		return 0;
	return bin_len;
}

#define MAXL 512

struct vec {
	char *line[MAXL];
	int n;
};

static void load(struct __test_metadata *_metadata, struct vec *v)
{
	char buf[4096];
	FILE *f = fopen(getenv("CF_VECTORS") ?: CF_VECTORS, "r");

	ASSERT_NE(NULL, f);
	while (fgets(buf, sizeof(buf), f) && v->n < MAXL) {
		buf[strcspn(buf, "\n")] = '\0';
		if (buf[0] && buf[0] != '#')
			v->line[v->n++] = strdup(buf);
	}
	fclose(f);
}

/* Run every "decide" record of @epoch against a task bound to it. */
static int decide_all(struct __test_metadata *_metadata, struct vec *v,
		      struct cft_nl *nl, uint64_t epoch, pid_t target,
		      int *mismatches)
{
	int i, n = 0;

	for (i = 0; i < v->n; i++) {
		char copy[4096], *save, *text, *want;
		struct cft_reply r;
		struct capfence_token t;
		char err[256];

		snprintf(copy, sizeof(copy), "%s", v->line[i]);
		if (strcmp(strtok_r(copy, " ", &save), "decide"))
			continue;
		text = strtok_r(NULL, " ", &save);
		if (strtoull(strtok_r(NULL, " ", &save), NULL, 10) != epoch)
			continue;
		want = strtok_r(NULL, " ", &save);
		if (capfence_token_from_text(text, &t, err, sizeof(err))) {
			TH_LOG("libcapfence cannot decode %s: %s", text, err);
			(*mismatches)++;
			continue;
		}
		cft_delegate(nl, &t, target, 0, true, &r);
		n++;
		if (r.reason < 0 || strcmp(capfence_reason_name(r.reason), want)) {
			(*mismatches)++;
			TH_LOG("%s at epoch %llu: kernel says %s, vectors say %s",
			       text, (unsigned long long)epoch,
			       r.reason < 0 ? "nothing" : capfence_reason_name(r.reason),
			       want);
		}
	}
	return n;
}

TEST(kernel_agrees_with_vectors)
{
	int decided = 0, rejected = 0, mismatches = 0, i;
	struct vec v = {};
	pid_t sleeper = -1;
	struct cft_nl nl;

	ASSERT_EQ(0, cft_open(&nl));
	if (cft_next_epoch(&nl) > 41)
		SKIP(return, "epochs 41..43 are taken; needs a fresh module");
	load(_metadata, &v);
	for (i = 0; i < v.n; i++) {
		char copy[4096], *save, *tok;

		snprintf(copy, sizeof(copy), "%s", v.line[i]);
		tok = strtok_r(copy, " ", &save);
		if (!strcmp(tok, "key")) {
			uint8_t raw[CAPFENCE_KEY_LEN];
			uint32_t id = (uint32_t)strtoul(strtok_r(NULL, " ", &save),
							NULL, 10);
			struct capfence_key *k;

			ASSERT_EQ(CAPFENCE_KEY_LEN,
				  unhex(strtok_r(NULL, " ", &save), raw, sizeof(raw)));
			ASSERT_EQ(0, capfence_key_from_bytes(id, raw, &k));
			ASSERT_EQ(0, cft_key_install(&nl, k));
			capfence_key_free(k);
		} else if (!strcmp(tok, "epoch")) {
			const char *rules[8];
			uint64_t epoch;
			int n = 0;

			epoch = strtoull(strtok_r(NULL, " ", &save), NULL, 10);
			while ((tok = strtok_r(NULL, " ", &save)) && n < 8)
				rules[n++] = tok;
			ASSERT_EQ(0, cft_epoch_install(&nl, epoch, rules, n, NULL, 0));
			/* older epochs are decided: binding this one may fence them */
			if (sleeper > 0) {
				kill(sleeper, SIGKILL);
				waitpid(sleeper, NULL, 0);
			}
			sleeper = bound_sleeper(epoch);
			ASSERT_LT(0, sleeper);
			ASSERT_EQ(0, cft_wait_bound(&nl, sleeper, epoch));
			decided += decide_all(_metadata, &v, &nl, epoch, sleeper,
					      &mismatches);
		} else if (!strcmp(tok, "reject")) {
			uint8_t buf[CAPFENCE_TOKEN_MAX_LEN + 64];
			size_t len = unhex(strtok_r(NULL, " ", &save), buf,
					   sizeof(buf));
			struct cft_reply r;
			int ret;

			if (!len || sleeper <= 0)
				continue;
			ret = cft_delegate_raw(&nl, buf, len, sleeper, &r);
			rejected++;
			/* oversized input is refused by the attribute policy */
			if (!(ret == -EBADMSG && r.reason == CAPFENCE_R_FORGED) &&
			    !(ret == -ERANGE && len > CAPFENCE_TOKEN_MAX_LEN)) {
				mismatches++;
				TH_LOG("reject (%s): kernel gave %d reason %d",
				       save, ret, r.reason);
			}
		}
	}
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
	}
	for (i = 0; i < v.n; i++)
		free(v.line[i]);
	TH_LOG("%d decisions and %d malformed encodings checked", decided,
	       rejected);
	EXPECT_LT(20, decided);
	EXPECT_LT(20, rejected);
	EXPECT_EQ(0, mismatches);
	cft_nl_close(&nl);
}

CFT_MAIN
