/* What the console's view tests share (test_console_*.c): a scratch data
 * directory with a cli over it (file bus, not durable), and a view shown
 * through its ops on the headless console's screen. Header-only (static
 * inline): each test program includes it. */
#ifndef MADF_TEST_CONSOLE_TEST_H
#define MADF_TEST_CONSOLE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/bus.h"
#include "core/util.h"
#include "tui/console.h"

/* A new /tmp/madf-NAME.XXXXXX into dir (at least 64 bytes) and cli over
 * it, its bus opened: returned (owned by cli). */
static inline struct bus *console_test_cli(char *dir, size_t size, const char *name,
					   struct cli *cli)
{
	snprintf(dir, size, "/tmp/madf-%s.XXXXXX", name);
	assert_non_null(mkdtemp(dir));
	cli->data_dir = xstrdup(dir);
	cli->log_dir = xasprintf("%s/logs", dir);
	bus_config_init(&cli->bcfg, dir);
	cli->bcfg.durable = false;
	struct bus *b = NULL;
	assert_int_equal(cli_bus(cli, &b), 0);
	return b;
}

/* Closes cli's bus, frees what console_test_cli made and removes dir. */
static inline void console_test_cli_release(const char *dir, struct cli *cli)
{
	bus_free(&cli->bus);
	bus_config_release(&cli->bcfg);
	util_rm_tree(dir);
	free(cli->data_dir);
	free(cli->log_dir);
}

/* The view's data loaded and drawn through its ops, the frame around it
 * too; the screen's text (caller frees). */
static inline char *console_test_show(struct console *c, struct view *v)
{
	console_show(c, v);
	v->ops->load(c, v, true);
	erase();
	v->ops->draw(c, v, 1, LINES - 2);
	return console_screen_text();
}

#endif
