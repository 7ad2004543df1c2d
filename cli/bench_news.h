/* madf bench news: precision and recall of the news agent's central-bank
 * events on the project's labelled stories, beside the previous rules. */
#ifndef MADF_BENCH_NEWS_H
#define MADF_BENCH_NEWS_H

#include "cli/cli.h"

/* madf bench news (its function is bench_news: argv[1] is "news"). */
extern const struct cli_cmd cmd_bench_news_entry;

#endif
