/* The console's key table. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "tui/keys.h"
#include "core/banned.h"

const struct key_binding keys_table[] = {
	{ 'q', OP_QUIT, "quit (also :q); asks first while agents run in this console", false, false, NULL },
	{ '?', OP_HELP, "this help", false, false, NULL },
	{ '\t', OP_VIEW_NEXT, "next view", false, false, NULL },
	{ KEY_BTAB, OP_VIEW_PREV, "previous view", false, false, NULL },
	{ KEY_UP, OP_UP, "move up", false, false, NULL },
	{ 'k', OP_UP, "move up", false, false, NULL },
	{ KEY_DOWN, OP_DOWN, "move down", false, false, NULL },
	{ 'j', OP_DOWN, "move down", false, false, NULL },
	{ KEY_PPAGE, OP_PAGE_UP, "page up", false, false, NULL },
	{ KEY_NPAGE, OP_PAGE_DOWN, "page down", false, false, NULL },
	{ KEY_HOME, OP_HOME, "first line", false, false, NULL },
	{ 'g', OP_HOME, "first line", false, false, NULL },
	{ KEY_END, OP_END, "last line", false, false, NULL },
	{ 'G', OP_END, "last line", false, false, NULL },
	{ KEY_LEFT, OP_VIEW_PREV, "previous view", false, false, NULL },
	{ 'h', OP_VIEW_PREV, "previous view", false, false, NULL },
	{ KEY_RIGHT, OP_VIEW_NEXT, "next view", false, false, NULL },
	{ 'l', OP_VIEW_NEXT, "next view", false, false, NULL },
	{ '\n', OP_OPEN, "open: an agent's inbox (overview), a finished report (reports), the whole line elsewhere", false, false, NULL },
	{ 27, OP_BACK, "back: clear the filter, close help or a reader, the live draft (reports)", false, false, NULL },
	{ '/', OP_FILTER, "filter lines (POSIX regex; a leading ! inverts)", false, false, NULL },
	{ ':', OP_COMMAND, "command line (Tab completes; again cycles the candidates)", false, false, NULL },
	{ 'Z', OP_PAUSE, "pause or resume refresh", false, false, NULL },
};
const size_t keys_count = ARRAY_SIZE(keys_table);

static const char *const op_names[OP_COUNT] = {
	[OP_NONE] = "none", [OP_QUIT] = "quit", [OP_HELP] = "help",
	[OP_VIEW_NEXT] = "view-next", [OP_VIEW_PREV] = "view-prev",
	[OP_UP] = "up", [OP_DOWN] = "down", [OP_PAGE_UP] = "page-up", [OP_PAGE_DOWN] = "page-down",
	[OP_HOME] = "home", [OP_END] = "end", [OP_OPEN] = "open", [OP_BACK] = "back",
	[OP_FILTER] = "filter", [OP_COMMAND] = "command", [OP_PAUSE] = "pause",
	[OP_MARK] = "mark", [OP_MARK_ALL] = "mark-all", [OP_RETRY] = "retry",
	[OP_DELETE] = "delete", [OP_KILL] = "kill", [OP_REASSIGN] = "reassign",
	[OP_TASK_RETRY] = "task-retry", [OP_TASK_CANCEL] = "task-cancel",
	[OP_TASK_HOLD] = "task-hold", [OP_TASK_RELEASE] = "task-release",
	[OP_TASK_PRIORITY] = "task-priority", [OP_TASK_ASSIGN] = "task-assign",
	[OP_LEVEL] = "level", [OP_FOLLOW] = "follow", [OP_EXPORT] = "export",
	[OP_EDIT] = "edit", [OP_RETRY_TO] = "retry-to",
	[OP_TASK_APPROVE] = "task-approve", [OP_TASK_SKIP_LLM] = "task-skip-llm",
};

const char *keys_op_name(enum console_op op)
{
	return (unsigned)op < OP_COUNT && op_names[op] ? op_names[op] : "unknown";
}

const struct key_binding *keys_lookup(const struct key_binding *own, size_t nown, int key)
{
	for (size_t i = 0; i < nown; i++)
		if (own[i].key == key)
			return &own[i];
	for (size_t i = 0; i < keys_count; i++)
		if (keys_table[i].key == key)
			return &keys_table[i];
	return NULL;
}

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{ "Enter", '\n' }, { "Esc", 27 }, { "Tab", '\t' }, { "S-Tab", KEY_BTAB },
	{ "Space", ' ' }, { "Up", KEY_UP }, { "Down", KEY_DOWN }, { "Left", KEY_LEFT },
	{ "Right", KEY_RIGHT }, { "PgUp", KEY_PPAGE }, { "PgDn", KEY_NPAGE },
	{ "Home", KEY_HOME }, { "End", KEY_END }, { "BS", KEY_BACKSPACE },
};

void keys_name(int key, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_names); i++)
		if (key_names[i].key == key) {
			snprintf(buf, size, "%s", key_names[i].name);
			return;
		}
	if (key > 32 && key < 127)
		snprintf(buf, size, "%c", key);
	else
		snprintf(buf, size, "#%d", key);
}

int keys_parse(const char *t)
{
	size_t n = strlen(t);
	if (n == 1)
		return (unsigned char)t[0];
	if (n > 2 && t[0] == '<' && t[n - 1] == '>') {
		for (size_t i = 0; i < ARRAY_SIZE(key_names); i++)
			if (strlen(key_names[i].name) == n - 2 &&
			    !strncasecmp(key_names[i].name, t + 1, n - 2))
				return key_names[i].key;
		if (n == 5 && (t[1] == 'C' || t[1] == 'c') && t[2] == '-' && t[3] >= 'a' && t[3] <= 'z')
			return t[3] - 'a' + 1;
	}
	return -1;
}
