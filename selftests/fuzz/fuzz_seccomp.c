// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_seccomp_compile_opts: the first input byte picks the epoch's rules
 * (bit 0: net:connect granted, bit 1: fs:read, bit 2: fs:write), the rest
 * is the profile text. Every answer is 0, -EINVAL or -E2BIG with one line;
 * an accepted profile gives a program of whole instructions within the
 * kernel's limit whose digest is its SHA-256, and one-line notes.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return sodium_init() < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const all[] = { "net:connect=open", "fs:read=open",
					   "fs:write=open" };
	const char *rules[3];
	struct capfence_seccomp *s = NULL;
	uint8_t d[CAPFENCE_SECCOMP_DIGEST_LEN], h[CAPFENCE_SECCOMP_DIGEST_LEN];
	char err[CAPFENCE_ERR_MAX] = "";
	struct capfence_epoch e;
	const void *prog;
	size_t n = 0, len, i;
	char *text;
	int ret;

	if (!size)
		return 0;
	for (i = 0; i < 3; i++)
		if (data[0] & (1u << i))
			rules[n++] = all[i];
	FUZZ_ASSERT(!capfence_epoch_parse_rules(&e, 1, rules, n, err, sizeof(err)));
	text = fuzz_str(data + 1, size - 1);
	ret = capfence_seccomp_compile_opts(text, size - 1, &e, NULL, &s, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL || ret == -E2BIG);
	FUZZ_ASSERT(!ret == !!s);
	if (!ret) {
		prog = capfence_seccomp_program(s, &len);
		FUZZ_ASSERT(prog && len && len % 8 == 0 &&
			    len / 8 <= CAPFENCE_SECCOMP_MAX_INSNS);
		capfence_seccomp_digest(s, d);
		crypto_hash_sha256(h, prog, len);
		FUZZ_ASSERT(!memcmp(d, h, sizeof(d)));
		for (i = 0; i < capfence_seccomp_notes(s); i++) {
			const char *note = capfence_seccomp_note(s, i);

			FUZZ_ASSERT(note && note[0] && !strpbrk(note, "\n\r"));
		}
		FUZZ_ASSERT(!capfence_seccomp_note(s, i));
	}
	capfence_seccomp_free(s);
	free(text);
	return 0;
}
