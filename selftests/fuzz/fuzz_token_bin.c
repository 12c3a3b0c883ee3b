// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_token_decode_bin: the decoder is strict, so an accepted encoding is
 * the canonical one: re-encoding gives back exactly the input bytes, the
 * body is the input minus the MAC, and the text form round-trips. The MAC
 * of a random key never verifies a token it did not make (no crash either).
 */
#include "fuzz.h"

static struct capfence_key *key;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t raw[CAPFENCE_KEY_LEN];

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		return 1;
	memset(raw, 0x5a, sizeof(raw));
	return capfence_key_from_bytes(7, raw, &key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[CAPFENCE_TOKEN_MAX_LEN + 64];
	static char text[CAPFENCE_TOKEN_TEXT_MAX + 1];
	uint8_t *buf = malloc(size ? size : 1);
	struct capfence_token t, u;
	char err[CAPFENCE_ERR_MAX] = "";
	int ret, len;

	if (!buf)
		abort();
	memcpy(buf, data, size);	/* exact size: ASan sees over-reads */
	ret = capfence_token_decode_bin(buf, size, &t, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret == 0 || ret == -EBADMSG);
	if (!ret) {
		FUZZ_ASSERT(capfence_token_check(&t, NULL, 0) == 0);
		len = capfence_token_encode_bin(&t, out, sizeof(out));
		FUZZ_ASSERT(len >= 0 && (size_t)len == size);
		FUZZ_ASSERT(!memcmp(out, data, size));
		len = capfence_token_encode_body(&t, out, sizeof(out));
		FUZZ_ASSERT(len >= 0 && (size_t)len == size - CAPFENCE_MAC_LEN);
		FUZZ_ASSERT(!memcmp(out, data, (size_t)len));
		len = capfence_token_to_text(&t, text, sizeof(text));
		FUZZ_ASSERT(len > 0);
		FUZZ_ASSERT(capfence_token_from_text(text, &u, NULL, 0) == 0);
		FUZZ_ASSERT(capfence_token_encode_bin(&u, out, sizeof(out)) == (int)size &&
			    !memcmp(out, data, size));
		/* verification answers, never crashes; a mismatch is EBADMSG */
		ret = capfence_token_verify(key, &t);
		FUZZ_ASSERT(ret == 0 || ret == -EBADMSG);
		if (t.key_id != capfence_key_id(key))
			FUZZ_ASSERT(ret == -EBADMSG);
	}
	free(buf);
	return 0;
}
