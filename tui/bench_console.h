/* madf bench console: keypress-to-frame time, peak RSS and idle CPU of
 * the console on a loaded bus and on an empty one. */
#ifndef MADF_BENCH_CONSOLE_H
#define MADF_BENCH_CONSOLE_H

#include "cli/cli.h"

/* argv[1] is "console". */
int bench_console(struct cli *cli, int argc, char **argv);

#endif
