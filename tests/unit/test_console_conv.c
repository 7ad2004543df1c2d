/* Unit tests of the console's Conversations view (tui/view_conversations.c)
 * on the in-memory screen of a headless console: a recorded serve-sessions
 * directory written as the fixture (one finished conversation, one
 * running), the rows (user, round, state, tokens) and the transcript read
 * back from the screen, the running one's events file followed as it
 * grows (a line cut in two included), C (an operator_control to serve's
 * controller over the bus, its answer shown and journalled) and e. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/workflow.h"
#include "core/bus.h"
#include "core/json_out.h"
#include "core/util.h"
#include "server/serve_bus.h"
#include "tui/console.h"
#include "tests/unit/console_test.h"

#define S_DONE "aaaaaaaaaaaaaaaaaaaaaaa1"
#define S_LIVE "bbbbbbbbbbbbbbbbbbbbbbb2"

struct fx {
	char dir[64];
	struct cli cli;
	struct console *c;
};

static void put(const char *dir, const char *name, const char *text, const char *mode)
{
	char *p = xasprintf("%s/serve-sessions/%s", dir, name);
	FILE *f = fopen(p, mode);
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	console_test_cli(f->dir, sizeof(f->dir), "conv", &f->cli);
	char *sd = xasprintf("%s/serve-sessions", f->dir);
	char *err = NULL;
	assert_int_equal(util_mkdirs(sd, &err), 0);
	free(sd);
	put(f->dir, S_DONE ".json",
	    "{\"version\":1,\"sessionId\":\"" S_DONE "\",\"user\":\"alice\",\"agents\":[\"data-steward\","
	    "\"analyst\"],\"rounds\":2,\"created\":\"2026-11-24T10:00:00.000Z\",\"state\":\"ended\","
	    "\"ended\":\"2026-11-24T10:01:30.000Z\",\"outcome\":\"complete\",\"events\":11,\"usage\":"
	    "{\"inputTokens\":1200,\"outputTokens\":345,\"rounds\":2}}", "w");
	put(f->dir, S_DONE ".jsonl",
	    "{\"type\":\"conversation_start\",\"data\":{\"seq\":1,\"agents\":[\"data-steward\",\"analyst\"],\"rounds\":2}}\n"
	    "{\"type\":\"round_start\",\"data\":{\"seq\":2,\"round\":1}}\n"
	    "{\"type\":\"agent_start\",\"data\":{\"seq\":3,\"agent\":\"data-steward\",\"round\":1}}\n"
	    "{\"type\":\"agent_response_chunk\",\"data\":{\"seq\":4,\"agent\":\"data-steward\",\"round\":1,\"chunk\":\"part one \"}}\n"
	    "{\"type\":\"agent_response_chunk\",\"data\":{\"seq\":5,\"agent\":\"data-steward\",\"round\":1,\"chunk\":\"part two\\u001b[2J\"}}\n"
	    "{\"type\":\"agent_tool_call\",\"data\":{\"seq\":6,\"agent\":\"data-steward\",\"round\":1,\"toolCall\":{\"id\":\"t1\",\"function\":{\"name\":\"web_search\",\"arguments\":\"{\\\"q\\\":\\\"acme\\\"}\"}}}}\n"
	    "{\"type\":\"agent_tool_result\",\"data\":{\"seq\":7,\"agent\":\"data-steward\",\"round\":1,\"result\":{\"hits\":3}}}\n"
	    "{\"type\":\"agent_complete\",\"data\":{\"seq\":8,\"agent\":\"data-steward\",\"round\":1,\"response\":\"part one part two\"}}\n"
	    "{\"type\":\"round_start\",\"data\":{\"seq\":9,\"round\":2}}\n"
	    "{\"type\":\"summarizer_start\",\"data\":{\"seq\":10}}\n"
	    "{\"type\":\"conversation_complete\",\"data\":{\"seq\":11,\"summary\":\"the summary\",\"totalRounds\":2}}\n", "w");
	put(f->dir, S_LIVE ".json",
	    "{\"version\":1,\"sessionId\":\"" S_LIVE "\",\"user\":\"bob\\u001b]0;x\",\"agents\":[\"analyst\"],"
	    "\"rounds\":3,\"created\":\"2026-11-24T11:00:00.000Z\",\"state\":\"running\"}", "w");
	put(f->dir, S_LIVE ".jsonl",
	    "{\"type\":\"conversation_start\",\"data\":{\"seq\":1,\"agents\":[\"analyst\"],\"rounds\":3}}\n"
	    "{\"type\":\"round_start\",\"data\":{\"seq\":2,\"round\":1}}\n"
	    "{\"type\":\"agent_start\",\"data\":{\"seq\":3,\"agent\":\"analyst\",\"round\":1}}\n"
	    "{\"type\":\"agent_response_chunk\",\"data\":{\"seq\":4,\"agent\":\"analyst\",\"round\":1,\"chunk\":\"thinking \"}}\n", "w");
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
	free(f);
	return 0;
}

/* The list row of session (its first line starting with it), "" if none. */
static char *row_of(const char *text, const char *session)
{
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *s = p;
		while (*s == ' ')
			s++;
		char *line = xstrndup(p, n);
		if (!strncmp(s, session, 24) && !strstr(line, " of "))
			return line;
		free(line);
		p = e ? e + 1 : NULL;
	}
	return xstrdup("");
}

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

static void select_session(struct console *c, struct view *v, const char *session)
{
	for (size_t i = 0; i < v->rows.nvis; i++) {
		const char *id = v->rows.v[v->rows.vis[i]].id;
		if (id && !strcmp(id, session)) {
			v->rows.sel = i;
			v->ops->moved(c, v);
			return;
		}
	}
	fail_msg("no row %s", session);
}

/* Rows newest first with user, round N/M, state, tokens; the newest
 * (running) one's transcript below; control characters shown, not sent. */
static void test_rows_and_detail(void **state)
{
	struct fx *f = *state;
	struct view *v = console_view_find(f->c, &view_conversations_ops);
	assert_non_null(v);
	char *text = console_test_show(f->c, v);
	char *live = row_of(text, S_LIVE), *done = row_of(text, S_DONE);
	char w[64];
	assert_string_equal(word(live, 1, w, sizeof(w)), "bob^[]0;x");
	assert_string_equal(word(live, 2, w, sizeof(w)), "1/3");
	assert_string_equal(word(live, 3, w, sizeof(w)), "running");
	assert_string_equal(word(live, 5, w, sizeof(w)), "-");
	assert_string_equal(word(done, 1, w, sizeof(w)), "alice");
	assert_string_equal(word(done, 2, w, sizeof(w)), "2/2");
	assert_string_equal(word(done, 3, w, sizeof(w)), "complete");
	assert_string_equal(word(done, 4, w, sizeof(w)), "90s");
	assert_string_equal(word(done, 5, w, sizeof(w)), "1545");
	assert_true(strstr(text, S_LIVE) < strstr(text, S_DONE)); /* newest first */
	assert_non_null(strstr(text, "Conversations of madf serve: 2 (1 running)"));
	/* the selected (newest) one's transcript */
	assert_non_null(strstr(text, "of bob^[]0;x: running, round 1 of 3"));
	assert_non_null(strstr(text, "### analyst"));
	assert_non_null(strstr(text, "thinking"));
	assert_null(strchr(text, '\033'));
	free(live);
	free(done);
	free(text);
	/* the finished one selected: chunks joined, tool call and result, summary */
	select_session(f->c, v, S_DONE);
	erase();
	v->ops->draw(f->c, v, 1, LINES - 2);
	text = console_screen_text();
	assert_non_null(strstr(text, "part one part two^[[2J"));
	assert_non_null(strstr(text, "- tool call web_search: {\"q\":\"acme\"}"));
	assert_non_null(strstr(text, "- tool result: {\"hits\":3}"));
	assert_non_null(strstr(text, "## Summary"));
	assert_non_null(strstr(text, "the summary"));
	assert_non_null(strstr(text, "Complete: 2 rounds."));
	assert_null(strstr(text, "thinking"));
	assert_null(strchr(text, '\033'));
	free(text);
}

/* The running one followed as its file grows: only what was appended is
 * read (a line cut in two waits for its end), the round moves on, the
 * end shows. */
static void test_follow_appended(void **state)
{
	struct fx *f = *state;
	struct view *v = console_view_find(f->c, &view_conversations_ops);
	free(console_test_show(f->c, v));
	put(f->dir, S_LIVE ".jsonl",
	    "{\"type\":\"agent_response_chunk\",\"data\":{\"seq\":5,\"agent\":\"analyst\",\"round\":1,\"chunk\":\"done\"}}\n"
	    "{\"type\":\"agent_complete\",\"data\":{\"seq\":6,\"agent\":\"analyst\",\"round\":1,\"response\":\"thinking done\"}}\n"
	    "{\"type\":\"round_start\",\"data\":{\"seq\":7,\"ro", "a");
	char *text = console_test_show(f->c, v);
	char *live = row_of(text, S_LIVE);
	char w[64];
	assert_string_equal(word(live, 2, w, sizeof(w)), "1/3"); /* round 2's line not ended */
	assert_non_null(strstr(text, "thinking done"));
	/* joined from chunks, not printed again from agent_complete */
	assert_null(strstr(strstr(text, "thinking done") + 1, "thinking done"));
	free(live);
	free(text);
	put(f->dir, S_LIVE ".jsonl",
	    "und\":2}}\n"
	    "{\"type\":\"error\",\"data\":{\"seq\":8,\"code\":\"CANCELLED\",\"error\":\"cancelled\"}}\n", "a");
	text = console_test_show(f->c, v);
	live = row_of(text, S_LIVE);
	assert_string_equal(word(live, 2, w, sizeof(w)), "2/3");
	assert_non_null(strstr(text, "## Round 2"));
	assert_non_null(strstr(text, "Error CANCELLED: cancelled"));
	/* serve ended it: the meta rewritten, read again */
	put(f->dir, S_LIVE ".json",
	    "{\"version\":1,\"sessionId\":\"" S_LIVE "\",\"user\":\"bob\",\"agents\":[\"analyst\"],"
	    "\"rounds\":3,\"created\":\"2026-11-24T11:00:00.000Z\",\"state\":\"ended\","
	    "\"ended\":\"2026-11-24T11:02:00.000Z\",\"outcome\":\"CANCELLED\",\"usage\":"
	    "{\"inputTokens\":10,\"outputTokens\":5,\"rounds\":2}}", "w");
	free(live);
	free(text);
	text = console_test_show(f->c, v);
	live = row_of(text, S_LIVE);
	assert_string_equal(word(live, 1, w, sizeof(w)), "bob");
	assert_string_equal(word(live, 2, w, sizeof(w)), "2/3");
	assert_string_equal(word(live, 3, w, sizeof(w)), "cancelled");
	assert_string_equal(word(live, 4, w, sizeof(w)), "2m");
	assert_string_equal(word(live, 5, w, sizeof(w)), "15");
	assert_non_null(strstr(text, "Conversations of madf serve: 2 (0 running)"));
	/* each line once: the file was read on, not again from its start */
	const char *p = strstr(text, "### analyst");
	assert_non_null(p);
	assert_null(strstr(p + 1, "### analyst"));
	free(live);
	free(text);
}

/* C on the running one asks; y sends an operator_control (cancel, run_id
 * the session) to serve's controller over the bus and journals it; the
 * controller's task_acceptance is shown and journalled when it comes; on
 * a finished one C is refused; e exports the finished one. */
static void test_cancel_and_export(void **state)
{
	struct fx *f = *state;
	struct console *c = f->c;
	struct view *v = console_view_find(c, &view_conversations_ops);
	free(console_test_show(c, v));
	select_session(c, v, S_LIVE);
	v->ops->act(c, v, OP_TASK_CANCEL, 0);
	assert_int_equal(c->mode, MODE_CONFIRM);
	assert_string_equal(c->question, "Cancel conversation " S_LIVE " of bob^[]0;x? y/n");
	char *err = NULL;
	struct bus_entry *e = NULL;
	size_t n = 0;
	assert_int_equal(bus_list(c->bus, BUS_Q_INBOX, SERVE_CONTROLLER, true, &e, &n, &err), 0);
	assert_int_equal(n, 0);
	console_bench_key(c, 'y');
	/* the control, waiting in the controller's inbox */
	assert_int_equal(bus_list(c->bus, BUS_Q_INBOX, SERVE_CONTROLLER, true, &e, &n, &err), 0);
	assert_int_equal(n, 1);
	char *json = NULL;
	size_t len = 0;
	struct msg *m = NULL;
	assert_int_equal(bus_read(c->bus, &e[0], &json, &len, &err), 0);
	assert_int_equal(msg_parse(json, len, &m, NULL), 0);
	free(json);
	bus_entries_free(e, n);
	assert_string_equal(m->from, "operator");
	assert_int_equal(m->type, MSG_TASK_ASSIGNMENT);
	assert_string_equal(jstr(m->content, "task_type"), WF_TASK_CONTROL);
	assert_string_equal(jstr(m->content, "action"), "cancel");
	assert_string_equal(jstr(m->content, "run_id"), S_LIVE);
	/* no controller has run here: said at once */
	assert_non_null(strstr(c->status, "cancel " S_LIVE ": serve_controller is offline"));
	char *jp = xasprintf("%s/journal/actions.jsonl", f->dir);
	char *buf = NULL;
	assert_int_equal(util_read_file(jp, 1 << 20, &buf, &len, &err), 0);
	assert_non_null(strstr(buf, "\"action\":\"conversation-cancel\",\"ids\":[\"" S_LIVE "\",\""));
	free(buf);
	/* the controller's answer comes: shown and journalled */
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "task_id", m->id);
	cJSON_AddStringToObject(a, "status", "accepted");
	cJSON_AddStringToObject(a, "estimated_completion", "2026-11-24T11:00:00Z");
	cJSON_AddNumberToObject(a, "agent_capacity", 1);
	cJSON_AddStringToObject(a, "outcome", "applied");
	cJSON_AddStringToObject(a, "detail", "conversation " S_LIVE " of bob cancelled");
	struct msg *r = msg_new(SERVE_CONTROLLER, "operator", MSG_TASK_ACCEPTANCE, a);
	r->reply_to = xstrdup(m->id);
	assert_int_equal(bus_send(c->bus, r, &err), 0);
	msg_free(&r);
	msg_free(&m);
	usleep(150 * 1000); /* the answers are looked for at most every 100 ms */
	v->ops->frame(c, v);
	assert_non_null(strstr(c->status, "cancel " S_LIVE ": applied: conversation " S_LIVE
			       " of bob cancelled"));
	assert_int_equal(util_read_file(jp, 1 << 20, &buf, &len, &err), 0);
	assert_non_null(strstr(buf, "\"result\":\"applied: conversation " S_LIVE " of bob cancelled\""));
	free(buf);
	free(jp);
	select_session(c, v, S_DONE);
	v->ops->act(c, v, OP_TASK_CANCEL, 0);
	assert_int_equal(c->mode, MODE_NORMAL);
	assert_non_null(strstr(c->status, "cancel: this conversation is not running"));
	v->ops->act(c, v, OP_EXPORT, 0);
	char *mp = xasprintf("%s/reports/exports/conversation-%s.md", f->dir, S_DONE);
	assert_int_equal(util_read_file(mp, 1 << 20, &buf, &len, &err), 0);
	assert_non_null(strstr(buf, "# Conversation " S_DONE "\n\n- User: alice\n"));
	assert_non_null(strstr(buf, "- Rounds: 2 of 2\n- State: complete\n- Tokens: 1545\n"));
	assert_non_null(strstr(buf, "### data-steward\npart one part two^[[2J\n"));
	assert_null(strchr(buf, '\033'));
	free(buf);
	free(mp);
	/* a running one is not exported */
	select_session(c, v, S_LIVE);
	v->ops->act(c, v, OP_EXPORT, 0);
	assert_non_null(strstr(c->status, "export: the conversation is still running"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_and_detail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follow_appended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_and_export, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
