/* The console's key table. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "tui/keys.h"
#include "core/banned.h"

#define V(n) (1u << (n))
/* The views, as in enum console_view. */
#define V_TASKS V(1)
#define V_QUEUES V(2)
#define V_LOGS V(3)
#define V_REPORTS V(4)

const struct key_binding keys_table[] = {
	{ 'q', KEYS_GLOBAL, OP_QUIT, "quit (also :q); asks first while agents run in this console", false, NULL },
	{ '?', KEYS_GLOBAL, OP_HELP, "this help", false, NULL },
	{ '\t', KEYS_GLOBAL, OP_VIEW_NEXT, "next view", false, NULL },
	{ KEY_BTAB, KEYS_GLOBAL, OP_VIEW_PREV, "previous view", false, NULL },
	{ '1', KEYS_GLOBAL, OP_VIEW_1, "overview: meters and agents", false, NULL },
	{ '2', KEYS_GLOBAL, OP_VIEW_2, "tasks of the current run", false, NULL },
	{ '3', KEYS_GLOBAL, OP_VIEW_3, "queues: an inbox, processing, dead letters", false, NULL },
	{ '4', KEYS_GLOBAL, OP_VIEW_4, "logs of one agent", false, NULL },
	{ '5', KEYS_GLOBAL, OP_VIEW_5, "report draft of the current run", false, NULL },
	{ '6', KEYS_GLOBAL, OP_VIEW_6, "tools and learning", false, NULL },
	{ KEY_UP, KEYS_GLOBAL, OP_UP, "move up", false, NULL },
	{ 'k', KEYS_GLOBAL, OP_UP, "move up", false, NULL },
	{ KEY_DOWN, KEYS_GLOBAL, OP_DOWN, "move down", false, NULL },
	{ 'j', KEYS_GLOBAL, OP_DOWN, "move down", false, NULL },
	{ KEY_PPAGE, KEYS_GLOBAL, OP_PAGE_UP, "page up", false, NULL },
	{ KEY_NPAGE, KEYS_GLOBAL, OP_PAGE_DOWN, "page down", false, NULL },
	{ KEY_HOME, KEYS_GLOBAL, OP_HOME, "first line", false, NULL },
	{ 'g', KEYS_GLOBAL, OP_HOME, "first line", false, NULL },
	{ KEY_END, KEYS_GLOBAL, OP_END, "last line", false, NULL },
	{ 'G', KEYS_GLOBAL, OP_END, "last line", false, NULL },
	{ KEY_LEFT, KEYS_GLOBAL, OP_VIEW_PREV, "previous view", false, NULL },
	{ 'h', KEYS_GLOBAL, OP_VIEW_PREV, "previous view", false, NULL },
	{ KEY_RIGHT, KEYS_GLOBAL, OP_VIEW_NEXT, "next view", false, NULL },
	{ 'l', KEYS_GLOBAL, OP_VIEW_NEXT, "next view", false, NULL },
	{ '\n', KEYS_GLOBAL, OP_OPEN, "open: an agent's inbox (overview), a finished report (reports), the whole line elsewhere", false, NULL },
	{ 27, KEYS_GLOBAL, OP_BACK, "back: clear the filter, close help or a reader, the live draft (reports)", false, NULL },
	{ '/', KEYS_GLOBAL, OP_FILTER, "filter lines (POSIX regex; a leading ! inverts)", false, NULL },
	{ ':', KEYS_GLOBAL, OP_COMMAND, "command line (Tab completes; again cycles the candidates)", false, NULL },
	{ 'Z', KEYS_GLOBAL, OP_PAUSE, "pause or resume refresh", false, NULL },
	{ ' ', V_QUEUES, OP_MARK, "mark or unmark the message", false, "mark" },
	{ 'A', V_QUEUES, OP_MARK_ALL, "mark all shown (again: none)", false, "all" },
	{ 'R', V_QUEUES, OP_RETRY, "retry dead letters to their original inbox", true, "retry" },
	{ 'D', V_QUEUES, OP_DELETE, "delete the messages (into the trash for 30 days; R in :trash restores)", true, "delete" },
	{ 'K', V_QUEUES, OP_KILL, "kill waiting messages to the dead letters", true, "kill" },
	{ 'E', V_QUEUES, OP_EDIT, "edit a dead letter in $EDITOR and requeue it (validated)", true, "edit" },
	{ 'T', V_QUEUES, OP_RETRY_TO, "retry dead letters to another inbox (:retry-to AGENT)", true, "retry-to" },
	{ 'r', V_TASKS, OP_REASSIGN, "reassign the task to the other researcher (cancelled on the first)", false, "reassign" },
	{ 't', V_TASKS, OP_TASK_RETRY, "retry a failed or cancelled task on the other researcher", false, "retry" },
	{ 'o', V_TASKS, OP_TASK_HOLD, "hold the task (taken back from its agent)", false, "hold" },
	{ 'u', V_TASKS, OP_TASK_RELEASE, "release a held task to its agent", false, "release" },
	{ 'p', V_TASKS, OP_TASK_PRIORITY, "set the task's priority: u)rgent h)igh n)ormal l)ow", false, "priority" },
	{ 'C', V_TASKS, OP_TASK_CANCEL, "cancel the task (named in the report)", true, "cancel" },
	{ 'B', V_TASKS, OP_TASK_APPROVE, "approve another LLM budget for a task awaiting approval", true, "budget" },
	{ 'S', V_TASKS, OP_TASK_SKIP_LLM, "skip the LLM part of a task awaiting approval (deterministic result)", true, "skip-LLM" },
	{ 'a', V_TASKS, OP_TASK_ASSIGN, "assign a new task: :assign market|news PAIR [AGENT]", false, "assign" },
	{ 'v', V_LOGS, OP_LEVEL, "cycle the lowest level shown", false, "level" },
	{ 'f', V_LOGS, OP_FOLLOW, "follow new lines on or off", false, "follow" },
	{ 'e', V_REPORTS, OP_EXPORT, "export Markdown, JSON and HTML to data/reports/exports", false, "export" },
};
const size_t keys_count = ARRAY_SIZE(keys_table);

static const char *const op_names[OP_COUNT] = {
	[OP_NONE] = "none", [OP_QUIT] = "quit", [OP_HELP] = "help",
	[OP_VIEW_NEXT] = "view-next", [OP_VIEW_PREV] = "view-prev",
	[OP_VIEW_1] = "view-overview", [OP_VIEW_2] = "view-tasks", [OP_VIEW_3] = "view-queues",
	[OP_VIEW_4] = "view-logs", [OP_VIEW_5] = "view-reports", [OP_VIEW_6] = "view-tools",
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

const struct key_binding *keys_lookup(unsigned view, int key)
{
	const struct key_binding *global = NULL;
	for (size_t i = 0; i < keys_count; i++) {
		const struct key_binding *k = &keys_table[i];
		if (k->key != key)
			continue;
		if (k->views & (1u << view))
			return k;
		if (k->views == KEYS_GLOBAL && !global)
			global = k;
	}
	return global;
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
