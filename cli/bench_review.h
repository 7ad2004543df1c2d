/* madf bench review: the code review crew's critical findings and each
 * analyzer alone scored line by line on a Juliet C/C++ 1.3 checkout. */
#ifndef MADF_BENCH_REVIEW_H
#define MADF_BENCH_REVIEW_H

#include "cli/cli.h"

/* argv[1] is "review". */
extern const struct cli_cmd cmd_bench_review_entry;

#endif
