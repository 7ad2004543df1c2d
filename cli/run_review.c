/* The code review crew's definition (cli/workflows.h): `madf run review
 * PATH|NAME [OPTIONS]` is `madf review` (cli/cli_review.c), which stays as
 * its friendly name. The crew keeps no runs: its report is what it prints
 * (--json, --out DIR, --sarif FILE). */
#include "cli/cli.h"
#include "cli/workflows.h"
#include "core/banned.h"

/* argv[0] is "review", as `madf review` has it: the same command, the same
 * output and errors. */
static int review_start(struct cli *cli, int argc, char **argv)
{
	return cmd_review(cli, argc, argv);
}

static const char *const crew_roles[] = {
	"review_master", "review_documentation", "review_debt", "review_improvement",
	"review_critical", NULL
};

const struct workflow_def workflow_review = {
	.name = "review",
	.summary = "the code review crew on a codebase (documentation, debt, improvement, "
		   "critical; deterministic analyzers)",
	.usage = REVIEW_USAGE,
	.roles = crew_roles,
	.value_options = review_value_options,
	.flag_options = review_flag_options,
	.start = review_start,
};
