// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_key_parse: an accepted key file formats back to text that parses to
 * the same id and bytes. Keys live in sodium_malloc'd memory: a leak or an
 * overrun shows up under ASan or as a guard-page fault.
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
	uint8_t a[CAPFENCE_KEY_LEN], b[CAPFENCE_KEY_LEN];
	char err[CAPFENCE_ERR_MAX] = "", text[256];
	struct capfence_key *k = NULL, *k2 = NULL;
	char *s = fuzz_str(data, size);
	int ret, len;

	ret = capfence_key_parse(s, &k, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret <= 0);
	FUZZ_ASSERT(!ret == !!k);
	if (!ret) {
		FUZZ_ASSERT(capfence_key_id(k) != 0);
		len = capfence_key_format(k, text, sizeof(text));
		FUZZ_ASSERT(len > 0);
		FUZZ_ASSERT(capfence_key_parse(text, &k2, err, sizeof(err)) == 0);
		FUZZ_ASSERT(capfence_key_id(k) == capfence_key_id(k2));
		capfence_key_bytes(k, a);
		capfence_key_bytes(k2, b);
		FUZZ_ASSERT(!memcmp(a, b, sizeof(a)));
		capfence_key_free(k2);
		capfence_key_free(k);
	}
	free(s);
	return 0;
}
