/* madf bench console: keypress-to-frame time, peak RSS and idle CPU of
 * the console on a loaded bus and on an empty one. */
#ifndef MADF_BENCH_CONSOLE_H
#define MADF_BENCH_CONSOLE_H

#include "cli/cli.h"

/* madf bench console (its function is bench_console: argv[1] is "console"). */
extern const struct cli_cmd cmd_bench_console_entry;

#endif
