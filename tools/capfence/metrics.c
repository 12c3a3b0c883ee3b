// SPDX-License-Identifier: GPL-2.0
/*
 * capfence metrics: the module's counters in the Prometheus text
 * exposition format, for node_exporter's textfile collector (the same
 * families capfenced serves at /metrics, without the agent's own).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cf_metrics.h"

static const char metrics_usage[] = "capfence metrics";

static int cf_cmd_metrics(int argc, char **argv)
{
	struct cf_metrics_module m;
	char msg[CAPFENCE_ERR_MAX] = "";
	size_t len;
	char *text;
	int err;

	if (cf_want_help(argc, argv, metrics_usage))
		return 0;
	err = cf_opts_simple("metrics", metrics_usage, argc, argv, NULL);
	if (err >= 0)
		return err;
	/* a module that is not loaded is a metric (capfence_module_loaded 0) */
	err = cf_metrics_collect(NULL, &m, msg, sizeof(msg));
	if (err)
		return cf_client_fail("metrics", err, msg);
	text = cf_metrics_render(&m, NULL, &len);
	if (!text) {
		cf_err("metrics: %s", strerror(ENOMEM));
		return CF_EXIT_SYSTEM;
	}
	err = fwrite(text, 1, len, stdout) != len || fflush(stdout) ? CF_EXIT_SYSTEM : 0;
	free(text);
	if (err)
		cf_err("metrics: cannot write: %s", strerror(errno));
	return err;
}

const struct cf_cmd cf_metrics_cmd = { .name = "metrics", .run = cf_cmd_metrics, .usage = metrics_usage };
