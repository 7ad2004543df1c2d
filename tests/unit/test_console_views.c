/* Unit tests of the console's views on an in-memory screen: a headless
 * console (newterm on /dev/null, 120x40, as the scripted mode) over a bus
 * in a temporary directory; the views driven through their ops and by
 * keys, what they show read back from the screen. Also the : command
 * table against ? help, Tab completion and man/madf.1. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/util.h"
#include "tui/console.h"
#include "tests/unit/console_test.h"

struct fx {
	char dir[64];
	struct cli cli;
	struct console *c;
	char *ids[2];   /* the messages sent to research_agent_1 */
};

static char *send_hb(struct bus *b, const char *to, int seq)
{
	cJSON *content = cJSON_CreateObject();
	cJSON_AddStringToObject(content, "status", "idle");
	cJSON_AddNumberToObject(content, "uptime_seconds", 1);
	cJSON_AddNumberToObject(content, "active_tasks", 0);
	cJSON_AddNumberToObject(content, "sequence", seq);
	struct msg *m = msg_new("operator", to, MSG_HEARTBEAT, content);
	assert_non_null(m);
	char *err = NULL;
	if (bus_send(b, m, &err) < 0)
		fail_msg("send: %s", err);
	char *id = xstrdup(m->id);
	msg_free(&m);
	return id;
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	struct bus *b = console_test_cli(f->dir, sizeof(f->dir), "views", &f->cli);
	f->ids[0] = send_hb(b, "research_agent_1", 1);
	f->ids[1] = send_hb(b, "research_agent_1", 2);
	f->c = console_bench_open(&f->cli);
	assert_non_null(f->c);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	console_bench_close(f->c);
	console_test_cli_release(f->dir, &f->cli);
	free(f->ids[0]);
	free(f->ids[1]);
	free(f);
	return 0;
}

/* The line of text that contains needle (a copy, "" when none). */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	if (!p)
		return xstrdup("");
	const char *b = p;
	while (b > text && b[-1] != '\n')
		b--;
	const char *e = strchr(p, '\n');
	return xstrndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* The n-th (0-based) blank-separated word of line, in buf. */
static const char *word(const char *line, int n, char *buf, size_t size)
{
	buf[0] = 0;
	for (int i = 0; i <= n; i++) {
		while (*line == ' ')
			line++;
		size_t k = strcspn(line, " ");
		if (i == n)
			snprintf(buf, size, "%.*s", (int)k, line);
		line += k;
	}
	return buf;
}

/* Overview: one row per agent with its inbox depth as the bus counts it. */
static void test_overview_rows(void **state)
{
	struct fx *f = *state;
	struct view *v = console_view_find(f->c, &view_overview_ops);
	assert_non_null(v);
	char *text = console_test_show(f->c, v);
	char *hdr = line_with(text, "AGENT");
	char w[64];
	assert_string_equal(word(hdr, 2, w, sizeof(w)), "INBOX");
	char *r1 = line_with(text, " research_agent_1 ");
	char *r2 = line_with(text, " research_agent_2 ");
	assert_string_equal(word(r1, 0, w, sizeof(w)), "research_agent_1");
	assert_string_equal(word(r1, 1, w, sizeof(w)), "offline"); /* no state file */
	assert_string_equal(word(r1, 2, w, sizeof(w)), "2");
	assert_string_equal(word(r2, 2, w, sizeof(w)), "0");
	char *meter = line_with(text, " waiting ");
	assert_string_equal(word(meter, 1, w, sizeof(w)), "2");
	/* one row per default agent, each with an id */
	assert_int_equal(v->rows.n, bus_default_agent_count);
	free(meter);
	free(r1);
	free(r2);
	free(hdr);
	free(text);
}

/* Queues: an inbox listed (ids, type, sender); K on the current message
 * asks, y kills it into the dead letters, which list it. */
static void test_queues_inbox_kill(void **state)
{
	struct fx *f = *state;
	struct console *c = f->c;
	assert_int_equal(view_queues_show(c, QUEUE_INBOX, "research_agent_1") & CONSOLE_RELOAD,
			 CONSOLE_RELOAD);
	struct view *v = console_view(c);
	assert_ptr_equal(v->ops, &view_queues_ops);
	char *text = console_test_show(c, v);
	char *head = line_with(text, "inbox of research_agent_1");
	assert_non_null(strstr(head, "inbox of research_agent_1: 2 messages, 0 marked"));
	for (int i = 0; i < 2; i++) {
		char *row = line_with(text, f->ids[i]);
		char w[128];
		assert_string_equal(word(row, 0, w, sizeof(w)), f->ids[i]);
		assert_string_equal(word(row, 1, w, sizeof(w)), "heartbeat");
		assert_string_equal(word(row, 2, w, sizeof(w)), "operator");
		free(row);
	}
	free(head);
	free(text);
	/* K through the view's act: a question, nothing killed yet */
	struct console_row *cur = console_rows_current(&v->rows);
	assert_non_null(cur);
	char *victim = xstrdup(cur->id);
	v->ops->act(c, v, OP_KILL, 0);
	assert_int_equal(c->mode, MODE_CONFIRM);
	assert_string_equal(c->question, "Kill 1 message? y/n");
	assert_int_equal(c->stats.dead_letter, 0);
	console_bench_key(c, 'y');
	assert_int_equal(c->mode, MODE_NORMAL);
	assert_non_null(strstr(c->status, "kill: 1 of 1 killed"));
	view_queues_show(c, QUEUE_DEAD, "");
	text = console_test_show(c, v);
	head = line_with(text, "dead letters:");
	assert_non_null(strstr(head, "dead letters: 1 message, 0 marked"));
	char *row = line_with(text, victim);
	char w[128];
	assert_string_equal(word(row, 0, w, sizeof(w)), victim);
	assert_string_equal(word(row, 2, w, sizeof(w)), "research_agent_1"); /* original inbox */
	free(row);
	free(head);
	free(text);
	free(victim);
}

/* Keys reach the view shown: 3 and the mark key mark a message, the
 * header counts it; the hint line names only the keys that apply. */
static void test_queues_keys(void **state)
{
	struct fx *f = *state;
	struct console *c = f->c;
	const char *cmd = ":inbox research_agent_1\n";
	for (const char *p = cmd; *p; p++)
		console_bench_key(c, (unsigned char)*p);
	assert_ptr_equal(console_view(c)->ops, &view_queues_ops);
	console_bench_key(c, ' ');
	char *text = console_screen_text();
	char *head = line_with(text, "inbox of research_agent_1");
	assert_non_null(strstr(head, "2 messages, 1 marked"));
	/* an inbox: K and D apply, R (dead letters only) does not */
	assert_non_null(strstr(text, "K kill"));
	assert_non_null(strstr(text, "D delete"));
	assert_null(strstr(text, "R retry"));
	free(head);
	free(text);
	/* under a / filter the header says how many are shown of how many
	 * (the mark, on the first message, still counted) */
	char filter[160];
	snprintf(filter, sizeof(filter), "/%s\n", f->ids[1]);
	for (const char *p = filter; *p; p++)
		console_bench_key(c, (unsigned char)*p);
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	text = console_screen_text();
	head = line_with(text, "inbox of research_agent_1");
	assert_non_null(strstr(head, "inbox of research_agent_1: 1 of 2 messages, 1 marked"));
	free(head);
	free(text);
	console_bench_key(c, 27);
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	text = console_screen_text();
	head = line_with(text, "inbox of research_agent_1");
	assert_non_null(strstr(head, "inbox of research_agent_1: 2 messages, 1 marked"));
	free(head);
	free(text);
}

/* A bulk action (past 200 messages, on a thread of its own) still running
 * when the console closes is waited for and journalled, not dropped. */
static void test_queues_bulk_journalled_on_close(void **state)
{
	struct fx *f = *state;
	struct console *c = f->c;
	for (int i = 0; i < 201; i++)
		free(send_hb(f->cli.bus, "research_agent_2", i));
	const char *keys = ":inbox research_agent_2\nAK";
	for (const char *p = keys; *p; p++)
		console_bench_key(c, (unsigned char)*p);
	assert_string_equal(c->question, "Kill 201 messages? y/n");
	console_bench_key(c, 'y');
	console_bench_close(c); /* at once: the worker may still run */
	f->c = NULL;
	char *path = xasprintf("%s/journal/actions.jsonl", f->dir);
	char *buf = NULL, *err = NULL;
	size_t len = 0;
	if (util_read_file(path, 1 << 24, &buf, &len, &err) < 0)
		fail_msg("%s", err);
	const char *line = buf; /* the last line */
	for (const char *p = strchr(buf, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
		line = p + 1;
	assert_non_null(strstr(line, "\"action\":\"kill\""));
	assert_non_null(strstr(line, "201 of 201 killed"));
	free(buf);
	free(path);
	size_t n = 0;
	struct bus_entry *v = NULL;
	assert_int_equal(bus_list(f->cli.bus, BUS_Q_DEAD, NULL, false, &v, &n, &err), 0);
	assert_int_equal(n, 201);
	bus_entries_free(v, n);
}

/* The man page's text into *out (from the repository's root, where
 * tests run; caller frees). */
static void man_page(char **out)
{
	char *err = NULL;
	size_t len = 0;
	*out = NULL;
	if (util_read_file("man/madf.1", 1 << 20, out, &len, &err) < 0)
		fail_msg("man/madf.1: %s", err);
}

/* Whether man names :name as a command ("\fB:name" then not a name
 * character). */
static bool man_names(const char *man, const char *name)
{
	char *pat = xasprintf("\\fB:%s", name);
	bool found = false;
	for (const char *p = strstr(man, pat); p && !found; p = strstr(p + 1, pat)) {
		char next = p[strlen(pat)];
		found = !(next >= 'a' && next <= 'z') && next != '-';
	}
	free(pat);
	return found;
}

/* Every : command of the table is in ? help (with its arguments and
 * help), completes with Tab and is in man/madf.1; every :command the
 * man page's CONSOLE KEYS section names is in the table. */
static void test_commands_help_complete_man(void **state)
{
	struct fx *f = *state;
	struct console *c = f->c;
	resizeterm(200, 160); /* all of ? help on one screen */
	console_bench_key(c, '?');
	assert_int_equal(c->mode, MODE_HELP);
	char *help = console_screen_text();
	console_bench_key(c, 27);
	char *man;
	man_page(&man);
	for (size_t i = 0; i < console_ncmds; i++) {
		const struct console_cmd *k = &console_cmds[i];
		/* ? help: its line, with its arguments and help */
		char *full = xasprintf(":%s%s%s", k->name, k->args ? " " : "", k->args ? k->args : "");
		char *lead = xasprintf("\n   %s ", full);
		const char *at = strstr(help, lead);
		if (!at)
			fail_msg("? help does not list %s", full);
		char *line = line_with(at + 1, full);
		if (!strstr(line, k->help))
			fail_msg("? help: %s without its help \"%s\": %s", full, k->help, line);
		free(line);
		free(lead);
		/* Tab: the name typed but its last letter completes to it (or
		 * lists it among the candidates) */
		console_bench_key(c, ':');
		for (size_t j = 0; j + 1 < strlen(k->name); j++)
			console_bench_key(c, (unsigned char)k->name[j]);
		console_bench_key(c, '\t');
		char *want = xasprintf("%s ", k->name);
		bool listed = !strcmp(c->line, want);
		for (size_t j = 0; j < c->ncomp && !listed; j++)
			listed = !strcmp(c->comp[j], k->name);
		if (!listed)
			fail_msg("Tab after \"%.*s\" neither completes nor lists :%s (line \"%s\")",
				 (int)strlen(k->name) - 1, k->name, k->name, c->line);
		console_bench_key(c, 27);
		assert_int_equal(c->mode, MODE_NORMAL);
		free(want);
		/* man/madf.1 */
		if (!man_names(man, k->name))
			fail_msg("man/madf.1 does not name :%s", k->name);
		free(full);
	}
	/* the other way: what the man page's console section calls a :
	 * command runs */
	const char *sec = strstr(man, ".SH CONSOLE KEYS");
	assert_non_null(sec);
	const char *end = strstr(sec + 1, "\n.SH ");
	for (const char *p = strstr(sec, "\\fB:"); p && (!end || p < end); p = strstr(p + 1, "\\fB:")) {
		char name[64];
		size_t n = 0;
		for (const char *q = p + 4; ((*q >= 'a' && *q <= 'z') || *q == '-') && n + 1 < sizeof(name); q++)
			name[n++] = *q;
		name[n] = 0;
		if (!n)
			continue;
		bool known = false;
		for (size_t i = 0; i < console_ncmds && !known; i++)
			known = !strcmp(console_cmds[i].name, name);
		if (!known)
			fail_msg("man/madf.1 names :%s, which is not in console_cmds[]", name);
	}
	free(man);
	free(help);
	resizeterm(40, 120);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_overview_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queues_inbox_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queues_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queues_bulk_journalled_on_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands_help_complete_man, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
