/* GET /api/metrics of madf serve: the seed's metrics (completion rate,
 * average execution time per agent, tool call success rate, error
 * frequency and types, resource use per conversation), derived from the
 * recorded conversations' meta files (data/serve-sessions/SESSION.json), so a
 * restart keeps them; as JSON or in the Prometheus text format (0.0.4). */
#include "server/conv_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define RECENT_MAX 100 /* conversations listed one by one */

struct named {
	char *name;
	double a, b; /* agents: turns, seconds; errors: count */
};

struct tally {
	long running, ended, completed;
	long tool_calls, tool_errors, agent_errors;
	double tokens_in, tokens_out, rounds, wall, model_calls;
	struct named *agents;
	size_t nagents;
	struct named *errors;
	size_t nerrors;
	cJSON *recent; /* [{sessionId, user, created, outcome, usage}] newest first */
	const char *user; /* recent lists this user's conversations only */
};

static struct named *named_get(struct named **v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].name, name))
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	struct named *x = &(*v)[(*n)++];
	x->name = xstrdup(name);
	x->a = x->b = 0;
	return x;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static void add_meta(void *ctx, const cJSON *m)
{
	struct tally *t = ctx;
	const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "state"));
	if (state && !strcmp(state, "running")) {
		t->running++;
		return;
	}
	t->ended++;
	const char *outcome = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "outcome"));
	if (!outcome)
		outcome = "unknown";
	if (!strcmp(outcome, "complete"))
		t->completed++;
	else
		named_get(&t->errors, &t->nerrors, outcome)->a++;
	const cJSON *u = cJSON_GetObjectItemCaseSensitive(m, "usage");
	t->tool_calls += (long)num(u, "toolCalls");
	t->tool_errors += (long)num(u, "toolErrors");
	long ae = (long)num(u, "agentErrors");
	t->agent_errors += ae;
	if (ae)
		named_get(&t->errors, &t->nerrors, "agent_error")->a += (double)ae;
	t->tokens_in += num(u, "inputTokens");
	t->tokens_out += num(u, "outputTokens");
	t->rounds += num(u, "rounds");
	t->wall += num(u, "wallSeconds");
	t->model_calls += num(u, "modelCalls");
	const cJSON *ag;
	cJSON_ArrayForEach(ag, cJSON_GetObjectItemCaseSensitive(u, "agents")) {
		if (num(ag, "turns") <= 0)
			continue; /* named, never ran (the conversation ended first) */
		struct named *x = named_get(&t->agents, &t->nagents, ag->string);
		x->a += num(ag, "turns");
		x->b += num(ag, "seconds");
	}
	/* The caller's newest RECENT_MAX, by created (ISO 8601 sorts as text). */
	const char *owner = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "user"));
	if (!owner || strcmp(owner, t->user))
		return;
	const char *created = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "created"));
	cJSON *r = cJSON_CreateObject();
	const char *sid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "sessionId"));
	const char *user = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "user"));
	cJSON_AddStringToObject(r, "sessionId", sid ? sid : "");
	cJSON_AddStringToObject(r, "user", user ? user : "");
	cJSON_AddStringToObject(r, "created", created ? created : "");
	cJSON_AddStringToObject(r, "outcome", outcome);
	cJSON_AddNumberToObject(r, "inputTokens", num(u, "inputTokens"));
	cJSON_AddNumberToObject(r, "outputTokens", num(u, "outputTokens"));
	cJSON_AddNumberToObject(r, "rounds", num(u, "rounds"));
	cJSON_AddNumberToObject(r, "wallSeconds", num(u, "wallSeconds"));
	cJSON_AddNumberToObject(r, "toolCalls", num(u, "toolCalls"));
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, t->recent) {
		const char *c2 = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "created"));
		if (strcmp(created ? created : "", c2 ? c2 : "") > 0)
			break;
		i++;
	}
	/* Not cJSON_InsertItemInArray: Debian's cJSON 1.7.15 fails an insert
	 * between two items (returns false, the item not added). The items
	 * from i on are taken out, r added, and they go back after it. */
	cJSON *rest = cJSON_CreateArray();
	while (cJSON_GetArraySize(t->recent) > i)
		cJSON_AddItemToArray(rest, cJSON_DetachItemFromArray(t->recent, i));
	cJSON_AddItemToArray(t->recent, r);
	while (cJSON_GetArraySize(rest) > 0)
		cJSON_AddItemToArray(t->recent, cJSON_DetachItemFromArray(rest, 0));
	cJSON_Delete(rest);
	if (cJSON_GetArraySize(t->recent) > RECENT_MAX)
		cJSON_DeleteItemFromArray(t->recent, RECENT_MAX);
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* Rounds to 6 decimals (stable text for both formats). */
static double r6(double x)
{
	return (double)(long long)(x * 1e6 + (x < 0 ? -0.5 : 0.5)) / 1e6;
}

static cJSON *as_json(const struct tally *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *c = cJSON_AddObjectToObject(o, "conversations");
	cJSON_AddNumberToObject(c, "running", (double)t->running);
	cJSON_AddNumberToObject(c, "ended", (double)t->ended);
	cJSON_AddNumberToObject(c, "completed", (double)t->completed);
	cJSON_AddNumberToObject(c, "completionRate", r6(ratio((double)t->completed, (double)t->ended)));
	cJSON *a = cJSON_AddObjectToObject(o, "agents");
	for (size_t i = 0; i < t->nagents; i++) {
		cJSON *x = cJSON_AddObjectToObject(a, t->agents[i].name);
		cJSON_AddNumberToObject(x, "turns", t->agents[i].a);
		cJSON_AddNumberToObject(x, "averageSeconds", r6(ratio(t->agents[i].b, t->agents[i].a)));
	}
	cJSON *tl = cJSON_AddObjectToObject(o, "tools");
	cJSON_AddNumberToObject(tl, "calls", (double)t->tool_calls);
	cJSON_AddNumberToObject(tl, "errors", (double)t->tool_errors);
	cJSON_AddNumberToObject(tl, "successRate",
				t->tool_calls ? r6(ratio((double)(t->tool_calls - t->tool_errors),
							 (double)t->tool_calls)) : 1);
	cJSON *e = cJSON_AddObjectToObject(o, "errors");
	for (size_t i = 0; i < t->nerrors; i++)
		cJSON_AddNumberToObject(e, t->errors[i].name, t->errors[i].a);
	cJSON *r = cJSON_AddObjectToObject(o, "resources");
	cJSON_AddNumberToObject(r, "inputTokens", t->tokens_in);
	cJSON_AddNumberToObject(r, "outputTokens", t->tokens_out);
	cJSON_AddNumberToObject(r, "modelCalls", t->model_calls);
	cJSON_AddNumberToObject(r, "rounds", t->rounds);
	cJSON_AddNumberToObject(r, "wallSeconds", r6(t->wall));
	double n = (double)t->ended;
	cJSON *p = cJSON_AddObjectToObject(r, "perConversation");
	cJSON_AddNumberToObject(p, "inputTokens", r6(ratio(t->tokens_in, n)));
	cJSON_AddNumberToObject(p, "outputTokens", r6(ratio(t->tokens_out, n)));
	cJSON_AddNumberToObject(p, "rounds", r6(ratio(t->rounds, n)));
	cJSON_AddNumberToObject(p, "wallSeconds", r6(ratio(t->wall, n)));
	cJSON_AddItemToObject(o, "recent", cJSON_Duplicate(t->recent, true));
	char ts[40];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON_AddStringToObject(o, "timestamp", ts);
	return o;
}

/* A label value as the text format wants it (\\, \" and \n escaped). */
static void label(struct sbuf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sbuf_addch(b, '\\');
		if (*v == '\n') {
			sbuf_addstr(b, "\\n");
			continue;
		}
		sbuf_addch(b, *v);
	}
}

static void metric(struct sbuf *b, const char *name, const char *type, const char *help)
{
	sbuf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static char *as_prometheus(const struct tally *t)
{
	struct sbuf b;
	sbuf_init(&b);
	metric(&b, "madf_serve_conversations", "gauge", "Conversations recorded, by state.");
	sbuf_addf(&b, "madf_serve_conversations{state=\"running\"} %ld\n", t->running);
	sbuf_addf(&b, "madf_serve_conversations{state=\"ended\"} %ld\n", t->ended);
	metric(&b, "madf_serve_conversations_completed", "gauge",
	       "Ended conversations that completed (conversation_complete).");
	sbuf_addf(&b, "madf_serve_conversations_completed %ld\n", t->completed);
	metric(&b, "madf_serve_completion_ratio", "gauge", "Completed over ended conversations.");
	sbuf_addf(&b, "madf_serve_completion_ratio %.6f\n",
		  r6(ratio((double)t->completed, (double)t->ended)));
	metric(&b, "madf_serve_agent_turns", "gauge", "Agent turns, by agent.");
	for (size_t i = 0; i < t->nagents; i++) {
		sbuf_addstr(&b, "madf_serve_agent_turns{agent=\"");
		label(&b, t->agents[i].name);
		sbuf_addf(&b, "\"} %.0f\n", t->agents[i].a);
	}
	metric(&b, "madf_serve_agent_turn_seconds_average", "gauge",
	       "Average wall time of an agent's turn, by agent.");
	for (size_t i = 0; i < t->nagents; i++) {
		sbuf_addstr(&b, "madf_serve_agent_turn_seconds_average{agent=\"");
		label(&b, t->agents[i].name);
		sbuf_addf(&b, "\"} %.6f\n", r6(ratio(t->agents[i].b, t->agents[i].a)));
	}
	metric(&b, "madf_serve_tool_calls", "gauge", "Agents' tool calls, by result.");
	sbuf_addf(&b, "madf_serve_tool_calls{result=\"ok\"} %ld\n", t->tool_calls - t->tool_errors);
	sbuf_addf(&b, "madf_serve_tool_calls{result=\"error\"} %ld\n", t->tool_errors);
	metric(&b, "madf_serve_tool_call_success_ratio", "gauge",
	       "Tool calls that succeeded over all (1 when there were none).");
	sbuf_addf(&b, "madf_serve_tool_call_success_ratio %.6f\n",
		  t->tool_calls ? r6(ratio((double)(t->tool_calls - t->tool_errors),
					   (double)t->tool_calls)) : 1.0);
	metric(&b, "madf_serve_errors", "gauge",
	       "Errors by type: the final error's code of each conversation, and agent_error events.");
	for (size_t i = 0; i < t->nerrors; i++) {
		sbuf_addstr(&b, "madf_serve_errors{type=\"");
		label(&b, t->errors[i].name);
		sbuf_addf(&b, "\"} %.0f\n", t->errors[i].a);
	}
	metric(&b, "madf_serve_resources", "gauge", "Resources used by ended conversations, in all.");
	sbuf_addf(&b, "madf_serve_resources{resource=\"input_tokens\"} %.0f\n", t->tokens_in);
	sbuf_addf(&b, "madf_serve_resources{resource=\"output_tokens\"} %.0f\n", t->tokens_out);
	sbuf_addf(&b, "madf_serve_resources{resource=\"model_calls\"} %.0f\n", t->model_calls);
	sbuf_addf(&b, "madf_serve_resources{resource=\"rounds\"} %.0f\n", t->rounds);
	sbuf_addf(&b, "madf_serve_resources{resource=\"wall_seconds\"} %.6f\n", r6(t->wall));
	metric(&b, "madf_serve_conversation_resources", "gauge",
	       "Resources of each of the caller's recent conversations (the newest 100).");
	const cJSON *it;
	static const struct { const char *key, *name; } per[] = {
		{ "inputTokens", "input_tokens" }, { "outputTokens", "output_tokens" },
		{ "rounds", "rounds" }, { "wallSeconds", "wall_seconds" },
	};
	cJSON_ArrayForEach(it, t->recent) {
		for (size_t k = 0; k < ARRAY_SIZE(per); k++) {
			sbuf_addstr(&b, "madf_serve_conversation_resources{session=\"");
			label(&b, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "sessionId")));
			sbuf_addstr(&b, "\",user=\"");
			label(&b, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "user")));
			sbuf_addf(&b, "\",resource=\"%s\"} %.6g\n", per[k].name, num(it, per[k].key));
		}
	}
	return sbuf_detach(&b);
}

char *serve_metrics(const char *dir, bool prometheus, const char *user)
{
	struct tally t = { 0 };
	t.user = user;
	t.recent = cJSON_CreateArray();
	convlog_each_meta(dir, add_meta, &t);
	char *out;
	if (prometheus) {
		out = as_prometheus(&t);
	} else {
		cJSON *o = as_json(&t);
		out = cJSON_PrintUnformatted(o);
		cJSON_Delete(o);
	}
	for (size_t i = 0; i < t.nagents; i++)
		free(t.agents[i].name);
	for (size_t i = 0; i < t.nerrors; i++)
		free(t.errors[i].name);
	free(t.agents);
	free(t.errors);
	cJSON_Delete(t.recent);
	return out;
}
