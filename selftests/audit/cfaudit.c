// SPDX-License-Identifier: GPL-2.0
/*
 * cfaudit: read capfence audit records with libauparse.
 *
 *   cfaudit LOGFILE [TYPE]
 *
 * Walks every event of an audit log (as auditd wrote it) with auparse and
 * prints one line per record of TYPE (default 1460, CAPFENCE_AUDIT_TYPE):
 *
 *   record FIELD=VALUE... comm_i=INTERPRETED
 *
 * where each FIELD's value is what auparse_find_field() returns for it
 * (lsm, op, reason, errno, pid, comm, epoch, class, target, cap_id, fence,
 * token_epoch); a field auparse cannot find in that record is printed as
 * FIELD=<missing>. The last line is "records N". Exit 0 when the log was
 * read, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <auparse.h>

static const char *const fields[] = {
	"lsm", "op", "reason", "errno", "pid", "comm", "target_pid", "epoch",
	"token_epoch",
	"class", "target", "cap_id", "fence",
};

int main(int argc, char **argv)
{
	auparse_state_t *au;
	int type = 1460, n = 0;
	size_t i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: cfaudit LOGFILE [TYPE]\n");
		return 2;
	}
	if (argc == 3)
		type = atoi(argv[2]);
	au = auparse_init(AUSOURCE_FILE, argv[1]);
	if (!au) {
		perror("cfaudit: auparse_init");
		return 1;
	}
	while (auparse_next_event(au) > 0) {
		do {
			unsigned int rec;

			if (auparse_get_type(au) != type)
				continue;
			rec = auparse_get_record_num(au);
			printf("record");
			for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
				const char *v;

				/* search this record only, from its first field */
				auparse_goto_record_num(au, rec);
				auparse_first_field(au);
				v = auparse_find_field(au, fields[i]);
				if (v && auparse_get_record_num(au) != rec)
					v = NULL;
				if (!v) {
					/* delegate records only / exercise only */
					if (strcmp(fields[i], "token_epoch") &&
					    strcmp(fields[i], "target_pid") &&
					    strcmp(fields[i], "target"))
						printf(" %s=<missing>", fields[i]);
					continue;
				}
				printf(" %s=%s", fields[i], v);
				if (!strcmp(fields[i], "comm")) {
					const char *it = auparse_interpret_field(au);

					printf(" comm_i=%s", it ? it : "<none>");
				}
			}
			auparse_goto_record_num(au, rec);
			printf("\n");
			n++;
		} while (auparse_next_record(au) > 0);
	}
	printf("records %d\n", n);
	auparse_destroy(au);
	return 0;
}
