/* The console's : commands: one table, from which the command line runs
 * them, Tab completes their names and ? help lists them (and a test
 * checks man/madf.1 names each one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/known_agents.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

static bool stats_have(const struct bus_stats *st, const char *agent)
{
	for (size_t i = 0; i < st->nagents; i++)
		if (!strcmp(st->agents[i].agent, agent))
			return true;
	return false;
}

/* Whether name is one of list's ", "-separated names. */
static bool names_listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && !strncmp(p, name, n))
			return true;
		p += k;
		p += strspn(p, ", ");
	}
	return false;
}

/* Whether the bus itself has a queue for agent: the last counts, else the
 * transport asked now (on NATS an inbox exists only on the bus, never in
 * the data directory, and the counts may be a poll interval old). When
 * not, the bus's agents missing from *known (caller frees) are added. */
static bool bus_has_agent(struct console *c, const char *agent, char **known)
{
	if (stats_have(&c->stats, agent))
		return true;
	struct bus_stats st;
	char *err = NULL;
	if (!c->bus || bus_stats(c->bus, &st, &err) < 0) {
		free(err);
		return false;
	}
	bool found = stats_have(&st, agent);
	if (!found) {
		struct sbuf b;
		sbuf_init(&b);
		sbuf_addstr(&b, *known ? *known : "");
		for (size_t i = 0; i < st.nagents; i++)
			if (!names_listed(*known, st.agents[i].agent))
				sbuf_addf(&b, "%s%s", b.len ? ", " : "", st.agents[i].agent);
		free(*known);
		*known = sbuf_detach(&b);
	}
	bus_stats_release(&st);
	return found;
}

bool console_agent_unknown(struct console *c, const char *cmd, const char *agent)
{
	char *known = NULL;
	if (known_agent(c->cli->data_dir, agent, false, &known) || bus_has_agent(c, agent, &known)) {
		free(known);
		return false;
	}
	console_status(c, true, "%s: no agent \"%s\" (known: %s); :%s! %s if it is new", cmd, agent,
		       known && *known ? known : "none", cmd, agent);
	free(known);
	return true;
}

/* An agent name argument: invalid, missing (unless optional) or, with
 * known, neither configured nor seen (unless is_new) is said and refused. */
static bool agent_arg_refused(struct console *c, const char *name, const char *arg,
			      bool optional, bool known, bool is_new)
{
	if (*arg && !util_valid_agent_name(arg)) {
		console_status(c, true, "invalid agent name \"%s\"", arg);
		return true;
	}
	if (!*arg && !optional) {
		console_status(c, true, ":%s needs an agent name (Tab completes)", name);
		return true;
	}
	return *arg && known && !is_new && console_agent_unknown(c, name, arg);
}

static unsigned ccmd_inbox(struct console *c, const char *name, const char *arg, const char *line,
			  bool is_new)
{
	(void)line;
	bool processing = !strcmp(name, "processing");
	if (agent_arg_refused(c, name, arg, processing, true, is_new))
		return CONSOLE_REDRAW;
	return view_queues_show(c, processing ? QUEUE_PROCESSING : QUEUE_INBOX, arg);
}

static unsigned ccmd_queue(struct console *c, const char *name, const char *arg, const char *line,
			  bool is_new)
{
	(void)arg, (void)line, (void)is_new;
	return view_queues_show(c, !strcmp(name, "dlq") ? QUEUE_DEAD : !strcmp(name, "trash") ?
				QUEUE_TRASH : QUEUE_PROCESSED, NULL);
}

static unsigned ccmd_retry_to(struct console *c, const char *name, const char *arg,
			     const char *line, bool is_new)
{
	(void)name, (void)line;
	return view_queues_retry_to(c, arg, is_new);
}

static unsigned ccmd_agent(struct console *c, const char *name, const char *arg, const char *line,
			  bool is_new)
{
	(void)line;
	if (agent_arg_refused(c, name, arg, false, false, is_new))
		return CONSOLE_REDRAW;
	return view_overview_select(c, arg);
}

static unsigned ccmd_logs(struct console *c, const char *name, const char *arg, const char *line,
			 bool is_new)
{
	(void)line;
	if (agent_arg_refused(c, name, arg, false, false, is_new))
		return CONSOLE_REDRAW;
	return view_logs_show(c, arg);
}

static unsigned ccmd_since(struct console *c, const char *name, const char *arg, const char *line,
			  bool is_new)
{
	(void)name, (void)line, (void)is_new;
	return view_logs_since(c, arg);
}

static unsigned ccmd_assign(struct console *c, const char *name, const char *arg,
			   const char *line, bool is_new)
{
	(void)name, (void)arg, (void)is_new;
	if (c->opts.read_only)
		return console_refuse(c, OP_TASK_ASSIGN);
	char kind[16] = "", pair[16] = "", agent[MSG_AGENT_MAX + 1] = "";
	if (sscanf(line, " %*s %15s %15s %64s", kind, pair, agent) < 2) {
		console_status(c, true, "assign: usage :assign market|news PAIR [AGENT]");
		return CONSOLE_REDRAW;
	}
	console_show(c, console_view_find(c, &view_tasks_ops));
	return view_tasks_assign(c, kind, pair, agent);
}

/* :run WORKFLOW [ARGS]: starts a run of that workflow (its trigger). */
static unsigned ccmd_run(struct console *c, const char *name, const char *arg, const char *line,
			 bool is_new)
{
	(void)name, (void)is_new;
	if (c->opts.read_only)
		return console_refuse(c, OP_TASK_ASSIGN);
	/* the rest of the line after the workflow's name: a path may hold spaces */
	const char *rest = line + strspn(line, " ");
	rest += strcspn(rest, " ");
	rest += strspn(rest, " ");
	rest += strcspn(rest, " ");
	rest += strspn(rest, " ");
	char args[1024];
	util_strlcpy(args, rest, sizeof(args));
	for (size_t n = strlen(args); n && args[n - 1] == ' '; n--)
		args[n - 1] = 0;
	unsigned r = view_tasks_run(c, arg, args);
	return r;
}

/* :tasks, :report, :tools, :overview, :conversations: that view. */
static unsigned ccmd_view(struct console *c, const char *name, const char *arg, const char *line,
			 bool is_new)
{
	(void)arg, (void)line, (void)is_new;
	static const struct {
		const char *cmd;
		const struct view_ops *ops;
	} views[] = { { "tasks", &view_tasks_ops }, { "report", &view_reports_ops },
		      { "tools", &view_tools_ops }, { "overview", &view_overview_ops },
		      { "conversations", &view_conversations_ops } };
	for (size_t i = 0; i < ARRAY_SIZE(views); i++)
		if (!strcmp(name, views[i].cmd)) {
			console_show(c, console_view_find(c, views[i].ops));
			return CONSOLE_RELOAD | CONSOLE_REDRAW;
		}
	return CONSOLE_REDRAW;
}

static unsigned ccmd_messages(struct console *c, const char *name, const char *arg,
			     const char *line, bool is_new)
{
	(void)name, (void)arg, (void)line, (void)is_new;
	return console_messages_open(c);
}

static unsigned ccmd_theme(struct console *c, const char *name, const char *arg, const char *line,
			  bool is_new)
{
	(void)name, (void)line, (void)is_new;
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
	for (size_t v = 0; v < console_nviews; v++)
		c->views[v].rows.hash = 0;
	return CONSOLE_REDRAW;
}

static unsigned ccmd_help(struct console *c, const char *name, const char *arg, const char *line,
			 bool is_new)
{
	(void)name, (void)arg, (void)line, (void)is_new;
	c->mode = MODE_HELP;
	c->help_top = 0;
	return CONSOLE_REDRAW;
}

static unsigned ccmd_quit(struct console *c, const char *name, const char *arg, const char *line,
			 bool is_new)
{
	(void)name, (void)arg, (void)line, (void)is_new;
	return console_quit_ask(c);
}

/* In the order ? help lists them. */
const struct console_cmd console_cmds[] = {
	{ "inbox", "NAME", "an agent's inbox (:inbox! NAME: an agent not seen yet)", CMD_ARG_AGENT, ccmd_inbox },
	{ "dlq", NULL, "the dead letters, grouped by reason", CMD_ARG_AGENT, ccmd_queue },
	{ "processing", "[NAME]", "the claimed messages (of one agent)", CMD_ARG_AGENT, ccmd_inbox },
	{ "processed", NULL, "the processed messages (read-only)", CMD_ARG_AGENT, ccmd_queue },
	{ "trash", NULL, "the deleted messages, kept 30 days (R restores)", CMD_ARG_AGENT, ccmd_queue },
	{ "retry-to", "NAME", "retry the marked dead letters (or the current one) to NAME's inbox", CMD_ARG_AGENT, ccmd_retry_to },
	{ "agent", "NAME", "the overview, on NAME's row", CMD_ARG_AGENT, ccmd_agent },
	{ "tasks", NULL, "the tasks of the current run", CMD_ARG_AGENT, ccmd_view },
	{ "run", "review PATH|NAME", "start a code review of a directory or a registered codebase (its tasks in 2, its report in 5)", CMD_ARG_AGENT, ccmd_run },
	{ "assign", "KIND PAIR [AGENT]", "ask the product_manager for a new market or news task", CMD_ARG_AGENT, ccmd_assign },
	{ "logs", "NAME", "an agent's logs", CMD_ARG_AGENT, ccmd_logs },
	{ "since", "10m|2h|1d|all", "the logs' time window", CMD_ARG_AGENT, ccmd_since },
	{ "overview", NULL, "the overview: meters and agents", CMD_ARG_AGENT, ccmd_view },
	{ "report", NULL, "the report draft of the current run", CMD_ARG_AGENT, ccmd_view },
	{ "tools", NULL, "tools, LLM usage and learning", CMD_ARG_AGENT, ccmd_view },
	{ "conversations", NULL, "madf serve's conversations", CMD_ARG_AGENT, ccmd_view },
	{ "messages", NULL, "the status messages of this session, whole, newest first", CMD_ARG_AGENT, ccmd_messages },
	{ "theme", "NAME", "another colour theme", CMD_ARG_THEME, ccmd_theme },
	{ "help", NULL, "this help", CMD_ARG_AGENT, ccmd_help },
	{ "q", NULL, "quit; asks first while agents run in this console", CMD_ARG_AGENT, ccmd_quit },
	{ "quit", NULL, "quit, as :q", CMD_ARG_AGENT, ccmd_quit },
};
const size_t console_ncmds = ARRAY_SIZE(console_cmds);

unsigned console_run_command(struct console *c, const char *line)
{
	char cmd[64] = "", arg[192] = "";
	sscanf(line, " %63s %191s", cmd, arg);
	c->status[0] = 0;
	/* :inbox! NAME, :retry-to! NAME: the agent is new, open or send anyway */
	size_t clen = strlen(cmd);
	bool is_new = clen > 1 && cmd[clen - 1] == '!';
	if (is_new)
		cmd[clen - 1] = 0;
	for (size_t i = 0; i < console_ncmds; i++)
		if (!strcmp(cmd, console_cmds[i].name))
			return console_cmds[i].run(c, cmd, arg, line, is_new);
	if (*cmd)
		console_status(c, true, "unknown command \":%s\" (:help lists them)", cmd);
	return CONSOLE_REDRAW;
}
