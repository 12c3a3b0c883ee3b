// SPDX-License-Identifier: GPL-2.0
/*
 * capfence_constraint_parse: an accepted constraint is well formed, contains
 * itself, and its canonical text parses back to an equal constraint whose
 * text is the same (format is a fixed point).
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
	char err[CAPFENCE_ERR_MAX] = "", t1[CAPFENCE_CONSTRAINT_TEXT_MAX + 64],
	     t2[CAPFENCE_CONSTRAINT_TEXT_MAX + 64];
	struct capfence_constraint c, d;
	char *s = fuzz_str(data, size);
	int ret, l1, l2;

	ret = capfence_constraint_parse(s, &c, err, sizeof(err));
	fuzz_check_err(err, sizeof(err), ret);
	FUZZ_ASSERT(ret == 0 || ret == -EINVAL);
	if (!ret) {
		FUZZ_ASSERT(capfence_constraint_check(&c, NULL, 0) == 0);
		FUZZ_ASSERT(capfence_constraint_contains(&c, &c));
		FUZZ_ASSERT(capfence_constraint_equal(&c, &c));
		l1 = capfence_constraint_format(&c, t1, sizeof(t1));
		FUZZ_ASSERT(l1 > 0 && (size_t)l1 == strlen(t1));
		FUZZ_ASSERT(capfence_constraint_parse(t1, &d, err, sizeof(err)) == 0);
		FUZZ_ASSERT(capfence_constraint_equal(&c, &d));
		l2 = capfence_constraint_format(&d, t2, sizeof(t2));
		FUZZ_ASSERT(l1 == l2 && !strcmp(t1, t2));
		if (c.kind == CAPFENCE_CONSTRAINT_PATH)
			FUZZ_ASSERT(capfence_constraint_admits_path(&c, c.path.s));
		else
			FUZZ_ASSERT(capfence_constraint_admits_port(&c, c.net.port_min) &&
				    capfence_constraint_admits_port(&c, c.net.port_max) &&
				    capfence_constraint_admits_addr(&c, c.net.family,
							      c.net.addr));
	}
	free(s);
	return 0;
}
