/* The code review crew's definition (cli/workflows.h): `madf run review
 * PATH|NAME [OPTIONS]` is `madf review` (cli/cli_review.c), which stays as
 * its friendly name. The crew keeps no runs: its report is what it prints
 * (--json, --out DIR, --sarif FILE). */
#include "cli/cli.h"
#include "cli/workflows.h"
#include "core/banned.h"

/* argv[0] "run", argv[1] "review": `madf review` from argv[1], the same
 * command, the same output and errors. */
static int review_start(struct cli *cli, int argc, char **argv)
{
	return cmd_review_entry.run(cli, argc - 1, argv + 1);
}

const struct cli_cmd run_review_entry = {
	.name = "review",
	.args = "PATH|NAME",
	.opts = review_options,
	.summary = "the code review crew on a codebase (as madf review, which takes the same "
		   "arguments)",
	.run = review_start,
};

static const char *const crew_roles[] = {
	"review_master", "review_documentation", "review_debt", "review_improvement",
	"review_critical", NULL
};

const struct workflow_def workflow_review = {
	.name = "review",
	.summary = "the code review crew on a codebase (documentation, debt, improvement, "
		   "critical; deterministic analyzers)",
	.roles = crew_roles,
	.entry = &run_review_entry,
};
