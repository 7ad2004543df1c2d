/* madf bench news: precision and recall of the news agent's central-bank
 * events on the project's labelled stories, beside the previous rules. */
#ifndef MADF_BENCH_NEWS_H
#define MADF_BENCH_NEWS_H

#include "cli/cli.h"

/* argv[1] is "news". */
int bench_news(struct cli *cli, int argc, char **argv);

#endif
