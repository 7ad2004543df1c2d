/* View 6, tools and learning: tool usage (calls, errors, p50/p95, cache
 * hits) and the learning system's error patterns and recommendations. */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "tui/wrap.h"
#include "core/banned.h"

/* text as rows wrapped to the screen, "  " before each, continuation
 * lines under the text after indent columns; the first row has id. */
static void rows_add_wrapped(struct console_rows *r, const char *id, enum theme_slot slot,
			     const char *text, size_t indent)
{
	char *clean = util_sanitize(text, strlen(text), false);
	char **lines = NULL;
	size_t n = wrap_text(clean, COLS > 12 ? (size_t)COLS - 4 : 8, indent, &lines);
	for (size_t i = 0; i < n; i++) {
		console_rows_add(r, i ? NULL : id, slot, "  %s", lines[i]);
		free(lines[i]);
	}
	free(lines);
	free(clean);
}

/* LLM usage (data/llm/usage.json, written by the agents in LLM mode):
 * tokens and cost per agent, then per task, the ones paused on their
 * budget first. */
static void view_tools_llm(struct console *c, struct console_rows *r)
{
	char *path = xasprintf("%s/llm/usage.json", c->cli->data_dir);
	cJSON *u = console_load_json(path);
	free(path);
	console_rows_add(r, NULL, SLOT_NORMAL, "%s", "");
	console_rows_add(r, NULL, SLOT_HEADING, "LLM usage (%s/llm/usage.json)", c->cli->data_dir);
	if (!cJSON_GetObjectItem(u, "agents")) {
		console_rows_add(r, NULL, SLOT_DIM, "  (no model calls: the agents run deterministically "
				 "unless a model is configured)");
		cJSON_Delete(u);
		return;
	}
	console_rows_add(r, NULL, SLOT_HEADER, "  %-24s %8s %12s %12s %10s", "AGENT", "CALLS",
			 "INPUT TOK", "OUTPUT TOK", "COST USD");
	const cJSON *t;
	double in = 0, out = 0, cost = 0, calls = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(u, "agents")) {
		char id[160];
		snprintf(id, sizeof(id), "llm:%s", t->string ? t->string : "?");
		console_rows_add(r, id, SLOT_NORMAL, "  %-24.24s %8.0f %12.0f %12.0f %10.4f",
				 t->string ? t->string : "?", jnum(t, "calls", 0), jnum(t, "input_tokens", 0),
				 jnum(t, "output_tokens", 0), jnum(t, "cost_usd", 0));
		calls += jnum(t, "calls", 0);
		in += jnum(t, "input_tokens", 0);
		out += jnum(t, "output_tokens", 0);
		cost += jnum(t, "cost_usd", 0);
	}
	console_rows_add(r, NULL, SLOT_DIM, "  %-24s %8.0f %12.0f %12.0f %10.4f", "all", calls, in,
			 out, cost);
	console_rows_add(r, NULL, SLOT_HEADER, "  %-30s %-18s %-17s %12s %10s", "TASK", "AGENT",
			 "STATUS", "TOKENS", "COST USD");
	for (int pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(u, "tasks")) {
			bool paused = !strcmp(jstr_or(t, "status", ""), "awaiting_approval");
			if (paused != (pass == 0))
				continue;
			char id[200];
			snprintf(id, sizeof(id), "llmtask:%s", t->string ? t->string : "?");
			const char *label = *jstr_or(t, "label", "") ? jstr_or(t, "label", "") : t->string ? t->string : "?";
			console_rows_add(r, id, paused ? SLOT_WARN : SLOT_NORMAL,
					 "  %-30.30s %-18.18s %-17.17s %12.0f %10.4f", label, jstr_or(t, "agent", ""),
					 jstr_or(t, "status", ""), jnum(t, "input_tokens", 0) + jnum(t, "output_tokens", 0),
					 jnum(t, "cost_usd", 0));
		}
	}
	cJSON_Delete(u);
}

static unsigned tools_refresh(struct console *c, struct view *view, bool shown)
{
	if (!shown)
		return 0;
	struct console_rows *r = &view->rows;
	console_rows_clear(r);
	char *path = xasprintf("%s/tools/usage.json", c->cli->data_dir);
	cJSON *u = console_load_json(path);
	free(path);
	console_rows_add(r, NULL, SLOT_HEADING, "Tool usage (%s/tools/usage.json)", c->cli->data_dir);
	console_rows_add(r, NULL, SLOT_HEADER, "  %-24s %8s %8s %10s %10s %10s", "TOOL", "CALLS", "ERRORS",
			 "P50 MS", "P95 MS", "CACHE HITS");
	const cJSON *t;
	int ntools = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(u, "tools")) {
		char id[160];
		snprintf(id, sizeof(id), "tool:%s", t->string ? t->string : "?");
		console_rows_add(r, id, jnum(t, "errors", 0) > 0 ? SLOT_WARN : SLOT_NORMAL,
				 "  %-24.24s %8.0f %8.0f %10.3f %10.3f %10.0f", t->string ? t->string : "?",
				 jnum(t, "calls", 0), jnum(t, "errors", 0), jnum(t, "latency_p50_ms", 0),
				 jnum(t, "latency_p95_ms", 0), jnum(t, "cache_hits", 0));
		ntools++;
	}
	if (!ntools)
		console_rows_add(r, NULL, SLOT_DIM, "  (no tool calls recorded yet)");
	cJSON_Delete(u);
	view_tools_llm(c, r);
	path = xasprintf("%s/learning/improvement-metrics.json", c->cli->log_dir);
	cJSON *m = console_load_json(path);
	free(path);
	console_rows_add(r, NULL, SLOT_NORMAL, "%s", "");
	console_rows_add(r, NULL, SLOT_HEADING, "Learning: error rates by agent (%s/learning)", c->cli->log_dir);
	console_rows_add(r, NULL, SLOT_HEADER, "  %-24s %8s %8s %8s %10s", "AGENT", "TASKS", "ERRORS",
			 "FAILED", "ERROR RATE");
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(m, "by_agent")) {
		char id[160];
		snprintf(id, sizeof(id), "agent:%s", t->string ? t->string : "?");
		console_rows_add(r, id, jnum(t, "error_rate", 0) > 0 ? SLOT_WARN : SLOT_NORMAL,
				 "  %-24.24s %8.0f %8.0f %8.0f %9.1f%%", t->string ? t->string : "?",
				 jnum(t, "tasks", 0), jnum(t, "errors", 0), jnum(t, "failed_tasks", 0),
				 jnum(t, "error_rate", 0) * 100);
	}
	console_rows_add(r, NULL, SLOT_NORMAL, "%s", "");
	console_rows_add(r, NULL, SLOT_HEADING, "Error patterns");
	int np = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(m, "by_error_type")) {
		char *v = cJSON_IsObject(t) || cJSON_IsArray(t) ? cJSON_PrintUnformatted(t) : NULL;
		char *line = xasprintf("%-24.24s %s", t->string ? t->string : "?", v ? v : "");
		rows_add_wrapped(r, NULL, SLOT_NORMAL, line, 25);
		free(line);
		free(v);
		np++;
	}
	if (!np)
		console_rows_add(r, NULL, SLOT_DIM, "  (none)");
	console_rows_add(r, NULL, SLOT_NORMAL, "%s", "");
	console_rows_add(r, NULL, SLOT_HEADING, "Recommendations");
	int nr = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(m, "recommendations")) {
		char id[32];
		snprintf(id, sizeof(id), "rec:%d", nr);
		char *text = cJSON_IsString(t) ? xstrdup(t->valuestring) :
			     xasprintf("%s/%s (error rate %.0f%%): %s", jstr_or(t, "agent", ""), jstr_or(t, "task_kind", ""),
				       jnum(t, "error_rate", 0) * 100, jstr_or(t, "text", ""));
		rows_add_wrapped(r, id, SLOT_WARN, text, 2);
		free(text);
		nr++;
	}
	if (!nr)
		console_rows_add(r, NULL, SLOT_DIM, "  (none)");
	cJSON_Delete(m);
	return console_rows_done(c, r);
}

static void tools_draw(struct console *c, struct view *v, int y0, int y1)
{
	console_rows_draw(c, &v->rows, y0, y1, NULL);
}

static const char *tools_enter_hint(const struct view *v)
{
	(void)v;
	return "Enter read";
}

/* No state of its own: it reads the files again at each refresh. */
static void *tools_init(struct console *c)
{
	(void)c;
	return NULL;
}

static void tools_release(struct console *c, struct view *v)
{
	(void)c;
	(void)v;
}

const struct view_ops view_tools_ops = {
	.name = "tools",
	.title = "Tools",
	.help = "tools and learning",
	.init = tools_init,
	.load = tools_refresh,
	.draw = tools_draw,
	.enter_hint = tools_enter_hint,
	.release = tools_release,
};
