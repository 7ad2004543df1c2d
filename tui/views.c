/* The console's views, in tab order: adding a view is a file with its
 * struct view_ops and a line in this table. */
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

const struct view_ops *const console_view_table[] = {
	&view_overview_ops, &view_tasks_ops, &view_queues_ops,
	&view_logs_ops, &view_reports_ops, &view_tools_ops, &view_conversations_ops,
};
const size_t console_nviews = ARRAY_SIZE(console_view_table);

_Static_assert(ARRAY_SIZE(console_view_table) <= CONSOLE_VIEWS_MAX,
	       "1-9 select the views: at most CONSOLE_VIEWS_MAX");

void console_views_init(struct console *c)
{
	c->views = xcalloc(console_nviews, sizeof(*c->views));
	for (size_t i = 0; i < console_nviews; i++) {
		c->views[i].ops = console_view_table[i];
		c->views[i].data = console_view_table[i]->init(c);
	}
	c->view = 0;
}

void console_views_release(struct console *c)
{
	for (size_t i = 0; c->views && i < console_nviews; i++) {
		c->views[i].ops->release(c, &c->views[i]);
		c->views[i].data = NULL;
		console_rows_release(&c->views[i].rows);
	}
	free(c->views);
	c->views = NULL;
}

struct view *console_view(struct console *c)
{
	return &c->views[c->view < console_nviews ? c->view : 0];
}

struct view *console_view_find(struct console *c, const struct view_ops *ops)
{
	for (size_t i = 0; c->views && i < console_nviews; i++)
		if (c->views[i].ops == ops)
			return &c->views[i];
	return NULL;
}

void console_show(struct console *c, struct view *v)
{
	c->view = (size_t)(v - c->views);
	v->rows.hash = 0;
}
