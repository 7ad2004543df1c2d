/* The operator console: the poll() reactor, keys, the command line, the
 * frame around the views. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "agents/data_tools.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/util.h"
#include "tui/console.h"
#include "cli/host.h"
#include "agents/known_agents.h"
#include "core/banned.h"

#define CONSOLE_MIN_COLS 80
#define CONSOLE_MIN_ROWS 24
#define CONSOLE_TICK_MS 500
#define CONSOLE_SCRIPT_COLS 120
#define CONSOLE_SCRIPT_ROWS 40

const char *const console_view_titles[VIEW_COUNT] = {
	"Overview", "Tasks", "Queues", "Logs", "Reports", "Tools",
};

/* The : commands, for completion (console_run_command runs them). */
const char *const console_commands[] = {
	"agent", "assign", "dlq", "help", "inbox", "logs", "messages", "overview", "processed",
	"processing", "q", "quit", "report", "retry-to", "since", "tasks", "theme", "tools",
	"trash",
};
const size_t console_ncommands = ARRAY_SIZE(console_commands);

static void console_draw_title(struct console *c)
{
	move(0, 0);
	console_put(c, 0, 0, COLS, SLOT_TITLE, " madf ", true);
	int x = 6;
	for (int v = 0; v < VIEW_COUNT; v++) {
		char t[32];
		snprintf(t, sizeof(t), " %d %s ", v + 1, console_view_titles[v]);
		int w = (int)strlen(t);
		console_put(c, 0, x, w, v == (int)c->view ? SLOT_TAB : SLOT_TITLE, t, false);
		x += w;
	}
	char right[96];
	snprintf(right, sizeof(right), "%s%s%s ", c->opts.attach ? "attach" : "embedded",
		 c->opts.read_only ? " read-only" : "", c->paused ? " PAUSED" : "");
	int w = (int)strlen(right);
	if (x + w < COLS)
		console_put(c, 0, COLS - w, w, SLOT_TITLE, right, false);
}

static void console_draw(struct console *c)
{
	c->frames++;
	erase();
	if (COLS < CONSOLE_MIN_COLS || LINES < CONSOLE_MIN_ROWS) {
		char buf[128];
		snprintf(buf, sizeof(buf), "terminal too small: %dx%d (madf needs %dx%d)", COLS, LINES,
			 CONSOLE_MIN_COLS, CONSOLE_MIN_ROWS);
		console_put(c, LINES / 2, 0, COLS, SLOT_ERROR, buf, false);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	console_draw_title(c);
	int y0 = 1, y1 = LINES - 2; /* the key-hint line and the bottom line below */
	if (c->mode == MODE_HELP) {
		console_draw_help(c, y0, y1);
	} else if (c->mode == MODE_READER) {
		console_reader_draw(c, y0, y1);
	} else {
		switch (c->view) {
		case VIEW_OVERVIEW: view_overview_draw(c, y0, y1); break;
		case VIEW_TASKS: view_tasks_draw(c, y0, y1); break;
		case VIEW_QUEUES: view_queues_draw(c, y0, y1); break;
		case VIEW_LOGS: view_logs_draw(c, y0, y1); break;
		case VIEW_REPORTS: view_reports_draw(c, y0, y1); break;
		case VIEW_TOOLS: view_tools_draw(c, y0, y1); break;
		case VIEW_COUNT: break;
		}
	}
	console_draw_bottom(c);
	curs_set(c->mode == MODE_COMMAND || c->mode == MODE_FILTER ? 1 : 0);
	wnoutrefresh(stdscr);
	doupdate();
}

static unsigned console_reload(struct console *c)
{
	c->last_reload_ns = util_mono_ns();
	unsigned f = view_overview_refresh(c); /* the meters feed every view */
	switch (c->view) {
	case VIEW_OVERVIEW: break;
	case VIEW_TASKS: f |= view_tasks_refresh(c); break;
	case VIEW_QUEUES: f |= view_queues_refresh(c); break;
	case VIEW_LOGS: f |= view_logs_refresh(c); break;
	case VIEW_REPORTS: f |= view_reports_refresh(c); break;
	case VIEW_TOOLS: f |= view_tools_refresh(c); break;
	case VIEW_COUNT: break;
	}
	return f;
}

/* ---- keys ---- */

static void console_set_view(struct console *c, enum console_view v)
{
	c->view = v;
	c->rows[v].hash = 0;
}

static void console_filter_set(struct console *c, const char *text)
{
	if (c->re_set)
		regfree(&c->re);
	c->re_set = false;
	free(c->re_literal);
	c->re_literal = NULL;
	util_strlcpy(c->filter, text, sizeof(c->filter));
	if (!*text)
		return;
	c->re_invert = text[0] == '!';
	const char *pat = text + (c->re_invert ? 1 : 0);
	int rc = regcomp(&c->re, pat, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc) {
		char msg[128];
		regerror(rc, &c->re, msg, sizeof(msg));
		regfree(&c->re);
		console_status(c, true, "filter \"%s\": %s", pat, msg);
		c->filter[0] = 0;
		return;
	}
	c->re_set = true;
	/* A pattern without regex syntax matches as a plain substring (case
	 * ignored, as the regex would): far faster over 100,000 rows. */
	bool ascii = true;
	for (const char *p = pat; *p; p++)
		ascii = ascii && !((unsigned char)*p & 0x80);
	if (*pat && ascii && !strpbrk(pat, ".[]()*+?{}|^$\\"))
		c->re_literal = xstrdup(pat);
}

static unsigned console_refuse(struct console *c, enum console_op op);

/* Why a queue action cannot run on what the queues view shows, or NULL. */
static const char *console_queue_why(struct console *c, enum console_op op)
{
	if (c->view != VIEW_QUEUES)
		return "only in the queues view (:dlq)";
	if (c->qkind == QUEUE_PROCESSED)
		return "processed messages are history: read-only here";
	if (c->qkind == QUEUE_TRASH)
		return op == OP_RETRY ? NULL :
		       op == OP_DELETE ? "already in the trash (madf gc purges it after 30 days); "
					 "R restores" : "in the trash: R restores it first";
	if (c->qkind == QUEUE_PROCESSING)
		return "claimed messages cannot be changed; wait for the lease or kill in the inbox";
	if ((op == OP_RETRY || op == OP_RETRY_TO || op == OP_EDIT) && c->qkind != QUEUE_DEAD)
		return op == OP_EDIT ? "E edits dead letters (:dlq)" :
		       op == OP_RETRY ? "R retries dead letters (:dlq)" : "T retries dead letters (:dlq)";
	if (op == OP_KILL && c->qkind == QUEUE_DEAD)
		return "already dead letters (D deletes, R retries)";
	return NULL;
}

/* An agent neither configured nor ever seen on the bus is refused (a typo
 * would make an inbox no agent reads) unless the command ends in '!'; true
 * when refused, the status line naming the known agents. */
static bool console_unknown_agent(struct console *c, const char *cmd, const char *agent)
{
	char *known = NULL;
	if (known_agent(c->cli->data_dir, agent, false, &known))
		return false;
	console_status(c, true, "%s: no agent \"%s\" (known: %s); :%s! %s if it is new", cmd, agent,
		       known ? known : "none", cmd, agent);
	free(known);
	return true;
}

/* :retry-to AGENT: asks to confirm a retry of the marked dead letters (or
 * the current one) to AGENT's inbox. */
static unsigned console_retry_to(struct console *c, const char *agent, bool is_new)
{
	if (c->opts.read_only)
		return console_refuse(c, OP_RETRY_TO);
	const char *why = console_queue_why(c, OP_RETRY_TO);
	if (why) {
		console_status(c, true, "retry-to: %s", why);
		return CONSOLE_REDRAW;
	}
	if (!*agent || !util_valid_agent_name(agent) || !strcmp(agent, "broadcast")) {
		console_status(c, true, *agent ? "retry-to: invalid agent name \"%s\"" :
			       "%s:retry-to needs an agent name (Tab completes)", agent);
		return CONSOLE_REDRAW;
	}
	if (!is_new && console_unknown_agent(c, "retry-to", agent))
		return CONSOLE_REDRAW;
	size_t n = view_queues_count(c);
	if (!n) {
		console_status(c, true, "no message selected");
		return CONSOLE_REDRAW;
	}
	util_strlcpy(c->retry_to, agent, sizeof(c->retry_to));
	c->pending = OP_RETRY_TO;
	c->pending_n = n;
	c->mode = MODE_CONFIRM;
	return CONSOLE_REDRAW;
}

/* :since 10m|2h|1d|90s|all: the logs' time window. */
static unsigned console_since(struct console *c, const char *arg)
{
	char unit = 0, extra = 0;
	long long v = 0;
	if (!strcmp(arg, "all") || !*arg) {
		c->log_since_s = 0;
		c->log_since[0] = 0;
		console_status(c, false, "logs: every line of the day");
	} else if (sscanf(arg, "%lld%c%c", &v, &unit, &extra) == 2 && v > 0 && v < 100000 &&
		   strchr("smhd", unit)) {
		c->log_since_s = v * (unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400);
		util_strlcpy(c->log_since, arg, sizeof(c->log_since));
		console_status(c, false, "logs: the last %s", arg);
	} else {
		console_status(c, true, ":since takes a duration like 90s, 10m, 2h, 1d, or all");
		return CONSOLE_REDRAW;
	}
	free(c->log_sig);
	c->log_sig = NULL;
	console_set_view(c, VIEW_LOGS);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}

static unsigned console_run_command(struct console *c, const char *line)
{
	char cmd[64] = "", arg[192] = "";
	sscanf(line, " %63s %191s", cmd, arg);
	c->status[0] = 0;
	/* :inbox! NAME, :retry-to! NAME: the agent is new, open or send anyway */
	size_t clen = strlen(cmd);
	bool is_new = clen > 1 && cmd[clen - 1] == '!';
	if (is_new)
		cmd[clen - 1] = 0;
	if (!strcmp(cmd, "q") || !strcmp(cmd, "quit"))
		return console_quit_ask(c);
	if (!strcmp(cmd, "messages"))
		return console_messages_open(c);
	if (!strcmp(cmd, "inbox") || !strcmp(cmd, "logs") || !strcmp(cmd, "agent") ||
	    !strcmp(cmd, "processing")) {
		if (*arg && !util_valid_agent_name(arg)) {
			console_status(c, true, "invalid agent name \"%s\"", arg);
			return CONSOLE_REDRAW;
		}
		if (!*arg && strcmp(cmd, "processing")) {
			console_status(c, true, ":%s needs an agent name (Tab completes)", cmd);
			return CONSOLE_REDRAW;
		}
		if (*arg && !is_new && (!strcmp(cmd, "inbox") || !strcmp(cmd, "processing")) &&
		    console_unknown_agent(c, cmd, arg))
			return CONSOLE_REDRAW;
		if (!strcmp(cmd, "logs")) {
			util_strlcpy(c->log_agent, arg, sizeof(c->log_agent));
			free(c->log_sig);
			c->log_sig = NULL;
			console_set_view(c, VIEW_LOGS);
		} else if (!strcmp(cmd, "agent")) {
			console_set_view(c, VIEW_OVERVIEW);
			free(c->rows[VIEW_OVERVIEW].sel_id);
			c->rows[VIEW_OVERVIEW].sel_id = NULL;
			view_overview_refresh(c);
			struct console_rows *r = &c->rows[VIEW_OVERVIEW];
			for (size_t k = 0; k < r->nvis; k++)
				if (r->v[r->vis[k]].id && !strcmp(r->v[r->vis[k]].id, arg))
					r->sel = k;
		} else {
			c->qkind = !strcmp(cmd, "inbox") ? QUEUE_INBOX : QUEUE_PROCESSING;
			util_strlcpy(c->qagent, arg, sizeof(c->qagent));
			console_set_view(c, VIEW_QUEUES);
		}
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "dlq") || !strcmp(cmd, "processed") || !strcmp(cmd, "trash")) {
		c->qkind = !strcmp(cmd, "dlq") ? QUEUE_DEAD :
			   !strcmp(cmd, "trash") ? QUEUE_TRASH : QUEUE_PROCESSED;
		console_set_view(c, VIEW_QUEUES);
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "retry-to"))
		return console_retry_to(c, arg, is_new);
	if (!strcmp(cmd, "assign")) {
		if (c->opts.read_only)
			return console_refuse(c, OP_TASK_ASSIGN);
		char kind[16] = "", pair[16] = "", agent[MSG_AGENT_MAX + 1] = "";
		if (sscanf(line, " %*s %15s %15s %64s", kind, pair, agent) < 2) {
			console_status(c, true, "assign: usage :assign market|news PAIR [AGENT]");
			return CONSOLE_REDRAW;
		}
		console_set_view(c, VIEW_TASKS);
		return view_tasks_assign(c, kind, pair, agent);
	}
	if (!strcmp(cmd, "since"))
		return console_since(c, arg);
	static const struct {
		const char *name;
		enum console_view v;
	} views[] = { { "tasks", VIEW_TASKS }, { "report", VIEW_REPORTS }, { "tools", VIEW_TOOLS },
		      { "overview", VIEW_OVERVIEW } };
	for (size_t i = 0; i < ARRAY_SIZE(views); i++)
		if (!strcmp(cmd, views[i].name)) {
			console_set_view(c, views[i].v);
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
	if (!strcmp(cmd, "help")) {
		c->mode = MODE_HELP;
		c->help_top = 0;
		return CONSOLE_REDRAW;
	}
	if (!strcmp(cmd, "theme")) {
		struct theme t;
		char *err = NULL;
		if (!*arg || theme_load(arg, &t, &err) < 0) {
			console_status(c, true, "%s", err ? err : ":theme needs a name (Tab completes)");
			free(err);
			return CONSOLE_REDRAW;
		}
		if (getenv("NO_COLOR"))
			t.mono = true;
		c->theme = t;
		theme_apply(&c->theme);
		console_status(c, false, "theme %s", arg);
		for (int v = 0; v < VIEW_COUNT; v++)
			c->rows[v].hash = 0;
		return CONSOLE_REDRAW;
	}
	if (*cmd)
		console_status(c, true, "unknown command \":%s\" (:help lists them)", cmd);
	return CONSOLE_REDRAW;
}

static unsigned console_key_line(struct console *c, int ch)
{
	if (ch != '\t')
		console_complete_reset(c);
	if (ch == 27) {
		c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	}
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		enum console_mode m = c->mode;
		c->mode = MODE_NORMAL;
		if (m == MODE_FILTER) {
			console_filter_set(c, c->line);
			for (int v = 0; v < VIEW_COUNT; v++)
				c->rows[v].hash = 0;
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		char line[256];
		util_strlcpy(line, c->line, sizeof(line));
		return console_run_command(c, line);
	}
	if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (c->line_len)
			c->line[--c->line_len] = 0;
		else
			c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	}
	if (ch == '\t' && c->mode == MODE_COMMAND) {
		console_complete(c);
		return CONSOLE_REDRAW;
	}
	if (ch >= 32 && ch < 127 && c->line_len + 1 < sizeof(c->line)) {
		c->line[c->line_len++] = (char)ch;
		c->line[c->line_len] = 0;
	}
	return CONSOLE_REDRAW;
}

static unsigned console_move(struct console *c, enum console_op op)
{
	struct console_rows *r = &c->rows[c->view];
	size_t page = LINES > 6 ? (size_t)LINES / 2 : 1;
	switch (op) {
	case OP_UP: if (r->sel) r->sel--; break;
	case OP_DOWN: if (r->sel + 1 < r->nvis) r->sel++; break;
	case OP_PAGE_UP: r->sel = r->sel > page ? r->sel - page : 0; break;
	case OP_PAGE_DOWN: r->sel = r->sel + page < r->nvis ? r->sel + page : (r->nvis ? r->nvis - 1 : 0); break;
	case OP_HOME: r->sel = 0; break;
	case OP_END: r->sel = r->nvis ? r->nvis - 1 : 0; break;
	default: break;
	}
	console_rows_skip_headings(r, op == OP_UP || op == OP_PAGE_UP || op == OP_END ? -1 : 1);
	if (r->sel == 0 && r->top)
		r->top = 0;
	if (c->view == VIEW_LOGS)
		c->log_follow = r->sel + 1 >= r->nvis;
	struct console_row *cur = console_rows_current(r);
	free(r->sel_id);
	r->sel_id = cur && cur->id ? xstrdup(cur->id) : NULL;
	return CONSOLE_REDRAW;
}

static unsigned console_refuse(struct console *c, enum console_op op)
{
	console_status(c, true, "read-only: %s refused (started with --read-only)", keys_op_name(op));
	console_journal(c, keys_op_name(op), NULL, "refused: read-only");
	return CONSOLE_REDRAW;
}

static unsigned console_op(struct console *c, const struct key_binding *k)
{
	struct console_rows *r = &c->rows[c->view];
	switch (k->op) {
	case OP_QUIT:
		return console_quit_ask(c);
	case OP_HELP:
		c->mode = MODE_HELP;
		c->help_top = 0;
		return CONSOLE_REDRAW;
	case OP_VIEW_NEXT:
	case OP_VIEW_PREV:
		console_set_view(c, (enum console_view)((c->view + (k->op == OP_VIEW_NEXT ? 1 : VIEW_COUNT - 1)) % VIEW_COUNT));
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_VIEW_1: case OP_VIEW_2: case OP_VIEW_3:
	case OP_VIEW_4: case OP_VIEW_5: case OP_VIEW_6:
		console_set_view(c, (enum console_view)(k->op - OP_VIEW_1));
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_UP: case OP_DOWN: case OP_PAGE_UP: case OP_PAGE_DOWN: case OP_HOME: case OP_END:
		return console_move(c, k->op);
	case OP_OPEN: {
		struct console_row *cur = console_rows_current(r);
		if (!cur || !cur->id)
			return 0;
		if (c->view == VIEW_REPORTS)
			return view_reports_open(c);
		if (c->view == VIEW_LOGS)
			return view_logs_open(c);
		if (c->view == VIEW_OVERVIEW) {
			c->qkind = QUEUE_INBOX;
			util_strlcpy(c->qagent, cur->id, sizeof(c->qagent));
			console_set_view(c, VIEW_QUEUES);
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		if (c->view != VIEW_QUEUES)
			return console_read_row(c);
		return 0;
	}
	case OP_BACK:
		c->status[0] = 0;
		if (c->view == VIEW_REPORTS && c->report_open[0])
			return view_reports_back(c);
		if (c->view == VIEW_LOGS && c->log_open)
			return view_logs_back(c);
		if (c->re_set || c->filter[0]) {
			console_filter_set(c, "");
			for (int v = 0; v < VIEW_COUNT; v++)
				c->rows[v].hash = 0;
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
		return CONSOLE_REDRAW;
	case OP_FILTER:
	case OP_COMMAND:
		c->mode = k->op == OP_FILTER ? MODE_FILTER : MODE_COMMAND;
		c->line_len = util_strlcpy(c->line, k->op == OP_FILTER ? c->filter : "", sizeof(c->line));
		c->status[0] = 0;
		return CONSOLE_REDRAW;
	case OP_PAUSE:
		c->paused = !c->paused;
		console_status(c, false, "refresh %s", c->paused ? "paused (Z resumes)" : "resumed");
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_MARK: {
		struct console_row *cur = console_rows_current(r);
		if (cur && cur->id)
			cur->marked = !cur->marked;
		/* down to the next message, the selection following it (not
		 * the row number) across refreshes */
		console_move(c, OP_DOWN);
		console_rows_done(c, r);
		return CONSOLE_REDRAW;
	}
	case OP_MARK_ALL: {
		bool any_unmarked = false;
		for (size_t i = 0; i < r->nvis; i++)
			any_unmarked = any_unmarked || (r->v[r->vis[i]].id && !r->v[r->vis[i]].marked);
		for (size_t i = 0; i < r->nvis; i++)
			if (r->v[r->vis[i]].id)
				r->v[r->vis[i]].marked = any_unmarked;
		console_rows_done(c, r);
		return CONSOLE_REDRAW;
	}
	case OP_RETRY:
	case OP_DELETE:
	case OP_KILL:
	case OP_EDIT:
	case OP_RETRY_TO: {
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		const char *why = console_queue_why(c, k->op);
		if (why) {
			console_status(c, true, "%s: %s", keys_op_name(k->op), why);
			return CONSOLE_REDRAW;
		}
		size_t n = k->op == OP_EDIT ? (console_rows_current(r) && console_rows_current(r)->id) :
			   view_queues_count(c);
		if (!n) {
			console_status(c, true, "no message selected");
			return CONSOLE_REDRAW;
		}
		if (k->op == OP_RETRY_TO) {
			/* the agent on the command line, then the confirmation */
			c->mode = MODE_COMMAND;
			c->line_len = util_strlcpy(c->line, "retry-to ", sizeof(c->line));
			console_status(c, false, "retry %zu message%s to which inbox? (Tab completes)", n,
				       n == 1 ? "" : "s");
			return CONSOLE_REDRAW;
		}
		c->pending = k->op;
		c->pending_n = n;
		c->mode = MODE_CONFIRM;
		return CONSOLE_REDRAW;
	}
	case OP_TASK_CANCEL:
	case OP_TASK_APPROVE:
	case OP_TASK_SKIP_LLM:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		if (!console_rows_current(&c->rows[VIEW_TASKS])) {
			console_status(c, true, "no task selected");
			return CONSOLE_REDRAW;
		}
		if ((k->op == OP_TASK_APPROVE || k->op == OP_TASK_SKIP_LLM) &&
		    !view_tasks_awaits_approval(c))
			return CONSOLE_REDRAW;
		c->pending = k->op;
		c->pending_n = 1;
		c->mode = MODE_CONFIRM;
		return CONSOLE_REDRAW;
	case OP_TASK_ASSIGN:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		c->mode = MODE_COMMAND;
		c->line_len = util_strlcpy(c->line, "assign ", sizeof(c->line));
		console_status(c, false, "assign market|news PAIR [AGENT]");
		return CONSOLE_REDRAW;
	case OP_REASSIGN:
	case OP_TASK_RETRY:
	case OP_TASK_HOLD:
	case OP_TASK_RELEASE:
	case OP_TASK_PRIORITY:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		return view_tasks_act(c, k->op);
	case OP_EXPORT:
		if (c->opts.read_only)
			return console_refuse(c, k->op);
		return view_reports_export(c);
	case OP_LEVEL:
		c->log_level = (c->log_level + 1) % 4;
		console_status(c, false, "logs: level %s and above",
			       (const char *[]){ "debug", "info", "warn", "error" }[c->log_level]);
		free(c->log_sig);
		c->log_sig = NULL;
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_FOLLOW:
		c->log_follow = !c->log_follow;
		console_status(c, false, "follow %s", c->log_follow ? "on" : "off");
		return CONSOLE_RELOAD | CONSOLE_REDRAW;
	case OP_NONE:
	case OP_COUNT:
		break;
	}
	return 0;
}

/* Wheel scrolls, a click on a tab switches view, a click on a line
 * selects it. */
static unsigned console_mouse(struct console *c)
{
	MEVENT ev;
	if (getmouse(&ev) != OK || c->mode != MODE_NORMAL)
		return 0;
	static const struct key_binding up = { 0, KEYS_GLOBAL, OP_UP, "", false, NULL };
	static const struct key_binding down = { 0, KEYS_GLOBAL, OP_DOWN, "", false, NULL };
	if (ev.bstate & BUTTON4_PRESSED)
		return console_op(c, &up);
	if (ev.bstate & BUTTON5_PRESSED)
		return console_op(c, &down);
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return 0;
	if (ev.y == 0) {
		int x = 6;
		for (int v = 0; v < VIEW_COUNT; v++) {
			int w = (int)strlen(console_view_titles[v]) + 4;
			if (ev.x >= x && ev.x < x + w) {
				console_set_view(c, (enum console_view)v);
				return CONSOLE_RELOAD | CONSOLE_REDRAW;
			}
			x += w;
		}
		return 0;
	}
	struct console_rows *r = &c->rows[c->view];
	for (size_t k = r->top; k < r->nvis; k++) {
		int y = (int)(k - r->top) + c->rows_y0;
		if (y == ev.y && r->v[r->vis[k]].id) {
			r->sel = k;
			free(r->sel_id);
			r->sel_id = xstrdup(r->v[r->vis[k]].id);
			return CONSOLE_REDRAW;
		}
	}
	return 0;
}

unsigned console_key(struct console *c, int ch)
{
	if (ch == KEY_RESIZE)
		return CONSOLE_REDRAW;
	if (ch == KEY_MOUSE)
		return console_mouse(c);
	if (ch == '\r' || ch == KEY_ENTER)
		ch = '\n';
	switch (c->mode) {
	case MODE_COMMAND:
	case MODE_FILTER:
		return console_key_line(c, ch);
	case MODE_READER:
		return console_reader_key(c, ch);
	case MODE_CONFIRM:
		c->mode = MODE_NORMAL;
		if (c->pending == OP_TASK_PRIORITY)
			return view_tasks_priority(c, ch) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if (c->pending == OP_QUIT) {
			if (ch == 'y' || ch == 'Y') {
				c->quit = true;
				return CONSOLE_QUIT;
			}
			console_status(c, false, "not quitting");
			return CONSOLE_REDRAW;
		}
		if ((ch == 'y' || ch == 'Y') &&
		    (c->pending == OP_TASK_CANCEL || c->pending == OP_TASK_APPROVE ||
		     c->pending == OP_TASK_SKIP_LLM))
			return view_tasks_act(c, c->pending) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if ((ch == 'y' || ch == 'Y') && c->pending == OP_EDIT)
			return view_queues_edit(c) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		if (ch == 'y' || ch == 'Y')
			return view_queues_act(c, c->pending) | CONSOLE_RELOAD | CONSOLE_REDRAW;
		console_status(c, false, "cancelled");
		return CONSOLE_REDRAW;
	case MODE_HELP:
		if (ch == KEY_DOWN || ch == 'j')
			c->help_top++;
		else if ((ch == KEY_UP || ch == 'k') && c->help_top)
			c->help_top--;
		else if (ch == 27 || ch == '?' || ch == 'q' || ch == '\n')
			c->mode = MODE_NORMAL;
		return CONSOLE_REDRAW;
	case MODE_NORMAL:
		break;
	}
	const struct key_binding *k = keys_lookup(c->view, ch);
	if (!k) {
		char name[16];
		keys_name(ch, name, sizeof(name));
		console_status(c, true, "%s: no such key here (? shows the keys)", name);
		return CONSOLE_REDRAW;
	}
	if (k->op != OP_FILTER && k->op != OP_COMMAND)
		c->status[0] = c->status_error && k->op >= OP_UP && k->op <= OP_END ? c->status[0] : 0;
	return console_op(c, k);
}

/* ---- the reactor ---- */

static void console_resize(struct console *c)
{
	if (c->headless)
		return;
	struct winsize ws;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
}

/* One wait: signals, bus events, the keyboard, the timer. */
unsigned console_pump(struct console *c, int max_ms)
{
	struct pollfd p[4];
	int n = 0, ifd = -1, wfd = -1, mfd = c->mon ? bus_monitor_fd(c->mon) : -1;
	p[n++] = (struct pollfd){ .fd = c->sig_fd, .events = POLLIN };
	if (mfd >= 0)
		p[n++] = (struct pollfd){ .fd = mfd, .events = POLLIN };
	if (view_queues_fd() >= 0) {
		wfd = n;
		p[n++] = (struct pollfd){ .fd = view_queues_fd(), .events = POLLIN };
	}
	if (!c->headless) {
		ifd = n;
		p[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
	}
	int64_t now = util_mono_ns();
	int64_t wait = (c->next_tick_ns - now) / 1000000;
	if (wait < 0)
		wait = 0;
	if (max_ms >= 0 && wait > max_ms)
		wait = max_ms;
	unsigned f = 0;
	if (poll(p, (nfds_t)n, (int)wait) < 0 && errno != EINTR)
		return 0;
	if (p[0].revents & POLLIN) {
		unsigned char b[64];
		ssize_t k = read(c->sig_fd, b, sizeof(b));
		for (ssize_t i = 0; i < k; i++) {
			if (b[i] == SIGWINCH) {
				console_resize(c);
				f |= CONSOLE_REDRAW;
			} else if (b[i] == SIGINT || b[i] == SIGTERM) {
				c->quit = true;
				f |= CONSOLE_QUIT;
			}
			/* SIGCHLD only wakes the loop: every child has an owner
			 * that reaps it (the editor's wait, the MCP client, which
			 * reports how a crashed server ended). */
		}
	}
	if (mfd >= 0 && (p[1].revents & POLLIN) && bus_monitor_process(c->mon) > 0) {
		c->bus_gen++;
		/* coalesce bursts: at most one reload every 100 ms */
		int64_t soon = c->last_reload_ns + 100 * 1000000LL;
		if (!c->paused && soon < c->next_tick_ns)
			c->next_tick_ns = soon;
	}
	if (wfd >= 0 && (p[wfd].revents & POLLIN))
		f |= view_queues_wake(c);
	if (ifd >= 0 && (p[ifd].revents & POLLIN))
		f |= CONSOLE_REDRAW; /* keys drained by the loop */
	now = util_mono_ns();
	if (now >= c->next_tick_ns) {
		if (!c->paused)
			f |= CONSOLE_RELOAD;
		c->next_tick_ns = now + CONSOLE_TICK_MS * 1000000LL;
	}
	return f;
}

void console_frame(struct console *c, unsigned f)
{
	f |= view_tasks_poll(c); /* answers to the task controls */
	if ((f & CONSOLE_RELOAD) && !c->paused)
		f |= console_reload(c);
	if (f & CONSOLE_REDRAW)
		console_draw(c);
}

int console_loop(struct console *c)
{
	unsigned f = CONSOLE_RELOAD | CONSOLE_REDRAW;
	while (!c->quit) {
		console_frame(c, f);
		f = 0;
		int ch;
		timeout(0);
		while (!c->quit && (ch = getch()) != ERR)
			f |= console_key(c, ch);
		if (f || c->quit)
			continue;
		f = console_pump(c, -1);
	}
	return EXIT_OK;
}
