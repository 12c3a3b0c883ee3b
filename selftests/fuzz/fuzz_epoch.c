// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_epoch_parse_text: the first input byte picks the expected epoch id
 * (0: the text must name it); an accepted table formats to text that
 * parses back to the same text, and narrows no class relative to itself.
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
	static char t1[64 * 1024], t2[64 * 1024];
	static struct capfence_epoch e, f;
	char err[CAPFENCE_ERR_MAX] = "";
	uint64_t want;
	char *s;
	int ret, l1, l2, c;

	if (!size)
		return 0;
	want = data[0] < 128 ? 0 : data[0];
	s = fuzz_str(data + 1, size - 1);
	ret = capfence_epoch_parse_text(&e, want, s, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret <= 0);
	if (!ret) {
		FUZZ_ASSERT(e.epoch_id != 0);
		FUZZ_ASSERT(!want || e.epoch_id == want);
		l1 = capfence_epoch_format(&e, t1, sizeof(t1));
		FUZZ_ASSERT(l1 > 0 && (size_t)l1 == strlen(t1));
		FUZZ_ASSERT(capfence_epoch_parse_text(&f, e.epoch_id, t1, err,
						sizeof(err)) == 0);
		l2 = capfence_epoch_format(&f, t2, sizeof(t2));
		FUZZ_ASSERT(l1 == l2 && !strcmp(t1, t2));
		for (c = 1; c <= CAPFENCE_CLASS_MAX; c++)
			FUZZ_ASSERT(!capfence_epoch_narrows(&e, &f, c));
	}
	free(s);
	return 0;
}
