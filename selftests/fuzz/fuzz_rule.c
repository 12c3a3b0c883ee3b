// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_rule_parse: an accepted rule formats to text that parses back to the
 * same text; a rule never narrows itself; a token rule admits its own
 * constraint set.
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
	static char t1[CAPFENCE_RULE_TEXT_MAX + 64], t2[CAPFENCE_RULE_TEXT_MAX + 64];
	static struct capfence_rule r, q;
	char err[CAPFENCE_ERR_MAX] = "";
	char *s = fuzz_str(data, size);
	int ret, l1, l2;

	ret = capfence_rule_parse(s, &r, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL);
	if (!ret) {
		FUZZ_ASSERT(capfence_class_valid(r.class_id));
		FUZZ_ASSERT(r.n <= CAPFENCE_MAX_CONSTRAINTS);
		FUZZ_ASSERT(r.kind == CAPFENCE_RULE_TOKEN || r.n == 0);
		l1 = capfence_rule_format(&r, t1, sizeof(t1));
		FUZZ_ASSERT(l1 > 0 && (size_t)l1 == strlen(t1));
		FUZZ_ASSERT(capfence_rule_parse(t1, &q, err, sizeof(err)) == 0);
		l2 = capfence_rule_format(&q, t2, sizeof(t2));
		FUZZ_ASSERT(l1 == l2 && !strcmp(t1, t2));
		FUZZ_ASSERT(!capfence_rule_narrows(&r, &r));
		FUZZ_ASSERT(!capfence_rule_narrows(&r, &q) && !capfence_rule_narrows(&q, &r));
		if (r.kind == CAPFENCE_RULE_TOKEN)
			FUZZ_ASSERT(capfence_rule_admits_constraints(&r, r.constraints,
							       r.n));
	}
	free(s);
	return 0;
}
