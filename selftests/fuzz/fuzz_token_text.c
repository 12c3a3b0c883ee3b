// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_token_from_text: any accepted text is canonical (re-encodes to the
 * same string), well formed, and survives a binary round trip.
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
	static char text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	static uint8_t bin[CAPFENCE_TOKEN_MAX_LEN];
	struct capfence_token t, u;
	char err[CAPFENCE_ERR_MAX] = "";
	char *s = fuzz_str(data, size);
	int ret, len, blen;

	ret = capfence_token_from_text(s, &t, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret == 0 || ret == -EBADMSG);
	if (!ret) {
		FUZZ_ASSERT(capfence_token_check(&t, NULL, 0) == 0);
		len = capfence_token_to_text(&t, text, sizeof(text));
		FUZZ_ASSERT(len > 0 && (size_t)len == strlen(s));
		FUZZ_ASSERT(!strcmp(text, s));
		blen = capfence_token_encode_bin(&t, bin, sizeof(bin));
		FUZZ_ASSERT(blen > CAPFENCE_MAC_LEN);
		FUZZ_ASSERT(capfence_token_decode_bin(bin, (size_t)blen, &u, NULL, 0) == 0);
		FUZZ_ASSERT(capfence_token_encode_bin(&u, bin, sizeof(bin)) == blen);
		FUZZ_ASSERT(capfence_token_to_text(&u, text, sizeof(text)) == len &&
			    !strcmp(text, s));
	}
	free(s);
	return 0;
}
