/* One multi-agent conversation of madf serve: the initiator refines the
 * goal, the agents take turns each round, the summarizer streams the
 * summary; every step is an SSE event of seed 004, queued whole for the
 * connection's thread. */
#include "server/conv_priv.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/llm_agent.h"
#include "core/bus.h"
#include "core/http.h"
#include "core/llm.h"
#include "core/message.h"
#include "core/tools.h"
#include "core/util.h"
#include "server/serve_bus.h"
#include "core/banned.h"

static pthread_mutex_t alive_mu = PTHREAD_MUTEX_INITIALIZER;
static struct conv *alive;
static size_t nalive;

long conv_env_long(const char *name, long def, long lo, long hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	return errno || *end || x < lo || x > hi ? def : x;
}

void conv_log(const struct conv *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *safe = util_sanitize(m, strlen(m), false);
	fprintf(stderr, "madf: serve: session %s (%s): %s\n", c->session, c->user, safe);
	free(safe);
	free(m);
}

void conv_unref(struct conv *c)
{
	pthread_mutex_lock(&c->mu);
	bool last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (!last)
		return;
	if (c->listed) {
		pthread_mutex_lock(&alive_mu);
		for (struct conv **p = &alive; *p; p = &(*p)->next_alive)
			if (*p == c) {
				*p = c->next_alive;
				break;
			}
		nalive--;
		pthread_mutex_unlock(&alive_mu);
	}
	bus_events_close(&c->ev, false);
	convbus_free(c);
	free(c->ends);
	free(c->events_path);
	free(c->meta_path);
	free(c->outcome);
	free(c->initiator_system);
	free(c->trace);
	for (long i = 0; i < c->nmem; i++)
		free(c->mem[i]);
	serve_request_release(&c->req);
	free(c->user);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* The event's line (caller frees): {"type", "data"} with timestamp, seq
 * and sessionId added to data (taken), and a newline. Under c->mu. */
static char *event_line(struct conv *c, const char *type, cJSON *data)
{
	char ts[40];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	cJSON_AddStringToObject(data, "timestamp", ts);
	cJSON_AddNumberToObject(data, "seq", (double)(c->seq + 1));
	cJSON_AddStringToObject(data, "sessionId", c->session);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", type);
	cJSON_AddItemToObject(o, "data", data);
	char *json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	char *text = xasprintf("%s\n", json);
	free(json);
	return text;
}

/* Records one event of type with data (taken) under c->mu: timestamp, seq
 * and sessionId are added to data. A terminal event (conversation_complete
 * or error) finishes the conversation's events; nothing is recorded after
 * it. Returns false when they are already finished (or the file broke). */
static bool emit_locked(struct conv *c, const char *type, cJSON *data, bool terminal)
{
	if (c->finished) {
		cJSON_Delete(data);
		return false;
	}
	if (terminal && !c->outcome) {
		const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "code"));
		c->outcome = xstrdup(code ? code : "complete");
	}
	char *text = event_line(c, type, data);
	int r = convlog_append(c, text, strlen(text));
	free(text);
	if (c->trace && c->seq == 1)
		c->trace[TR_EMIT] = util_mono_ns();
	if (terminal || r < 0) {
		c->finished = true;
		if (r < 0)
			c->cancel = 1;
	}
	pthread_cond_broadcast(&c->cv);
	conv_streams_wake(c);
	return r == 0;
}

static bool emit(struct conv *c, const char *type, cJSON *data, bool terminal)
{
	pthread_mutex_lock(&c->mu);
	bool r = emit_locked(c, type, data, terminal);
	pthread_mutex_unlock(&c->mu);
	return r;
}

static cJSON *error_data(const char *code, const char *msg, const char *agent, int round,
			 bool recoverable)
{
	cJSON *d = cJSON_CreateObject();
	char *safe = util_sanitize(msg, strlen(msg), false);
	cJSON_AddStringToObject(d, "error", safe);
	free(safe);
	cJSON_AddStringToObject(d, "code", code);
	if (agent)
		cJSON_AddStringToObject(d, "agent", agent);
	if (round > 0)
		cJSON_AddNumberToObject(d, "round", round);
	cJSON_AddBoolToObject(d, "recoverable", recoverable);
	return d;
}

static bool emit_error(struct conv *c, const char *code, const char *msg, const char *agent,
		       int round, bool recoverable)
{
	return emit(c, "error", error_data(code, msg, agent, round, recoverable), true);
}

/* ---- model calls ------------------------------------------------------------ */

struct tool_use {
	int index;
	char *id, *name;
	struct sbuf args;
};

struct call {
	struct conv *c;
	const char *agent;    /* NULL: the summarizer */
	int round;
	bool stream;          /* text goes out as chunks */
	struct sbuf text;     /* this call's text */
	struct tool_use *uses; /* this call's tool calls */
	size_t nuses;
	bool ok;
	char *error;
	char *error_type;
};

static void call_on_tool_start(void *ctx, int index, const char *id, const char *name)
{
	struct call *k = ctx;
	k->uses = xrealloc(k->uses, (k->nuses + 1) * sizeof(*k->uses));
	struct tool_use *u = &k->uses[k->nuses++];
	u->index = index;
	u->id = xstrdup(id ? id : "");
	u->name = xstrdup(name ? name : "");
	sbuf_init(&u->args);
}

static void call_on_tool_args(void *ctx, int index, const char *json, size_t len)
{
	struct call *k = ctx;
	for (size_t i = 0; i < k->nuses; i++)
		if (k->uses[i].index == index)
			sbuf_add(&k->uses[i].args, json, len);
}

static void call_on_text(void *ctx, const char *text, size_t len)
{
	struct call *k = ctx;
	sbuf_add(&k->text, text, len);
	if (!k->stream || !len)
		return;
	cJSON *d = cJSON_CreateObject();
	if (k->agent) {
		cJSON_AddStringToObject(d, "agent", k->agent);
		cJSON_AddNumberToObject(d, "round", k->round);
	}
	char *chunk = xstrndup(text, len);
	cJSON_AddStringToObject(d, "chunk", chunk);
	free(chunk);
	emit(k->c, k->agent ? "agent_response_chunk" : "summarizer_chunk", d, false);
}

static void call_on_done(void *ctx, const struct llm_result *res)
{
	struct call *k = ctx;
	k->ok = res->ok;
	k->c->use.model_calls++;
	k->c->use.tokens_in += res->input_tokens;
	k->c->use.tokens_out += res->output_tokens;
	if (!res->ok) {
		k->error = xstrdup(res->error ? res->error : "the model call failed");
		k->error_type = xstrdup(res->error_type ? res->error_type : "error");
	}
}

/* One model call over msgs with tools: 0 with k->text and k->uses, or -1
 * with k->error. */
static int call_model_msgs(struct call *k, const char *model, const char *system,
			   const struct llm_message *msgs, size_t nmsgs,
			   const struct llm_tool *tools, size_t ntools)
{
	struct conv *c = k->c;
	const struct llm_agent_settings *s = c->llm;
	int64_t left_ms = (c->deadline_ns - util_mono_ns()) / 1000000;
	if (left_ms <= 0) {
		k->error = xstrdup("the conversation took too long");
		k->error_type = xstrdup("timeout");
		return -1;
	}
	struct llm_config cfg = {
		.provider = s->provider,
		.base_url = s->base_url,
		.api_key = s->api_key,
		.total_timeout_ms = (long)left_ms,
		.cancel = &c->cancel,
	};
	struct llm_request req = {
		.model = model,
		.system = system,
		.messages = msgs,
		.nmessages = nmsgs,
		.max_tokens = s->max_tokens ? s->max_tokens : 1024,
		.temperature = -1,
		.tools = tools,
		.ntools = ntools,
	};
	struct llm_callbacks cb = { .on_text = call_on_text, .on_tool_use_start = call_on_tool_start,
				    .on_tool_use_args = call_on_tool_args,
				    .on_done = call_on_done, .ctx = k };
	struct http_multi *m = NULL;
	char *err = NULL;
	int r = 0;
	sbuf_init(&k->text);
	if (http_multi_new(&m, &err) < 0 || llm_call_start(m, &cfg, &req, &cb, &err) < 0 ||
	    http_multi_run(m, &err) < 0) {
		k->error = err ? err : xstrdup("the model call failed");
		k->error_type = xstrdup("error");
		err = NULL;
		r = -1;
	} else if (!k->ok) {
		r = -1;
	}
	free(err);
	http_multi_free(&m);
	return r;
}

static int call_model(struct call *k, const char *model, const char *system,
		      const char *prompt)
{
	struct llm_message msg = { .role = "user", .content = prompt };
	return call_model_msgs(k, model, system, &msg, 1, NULL, 0);
}

/* Ready for the next call of the same turn: text, tool calls, error gone. */
static void call_reset(struct call *k)
{
	sbuf_release(&k->text);
	for (size_t i = 0; i < k->nuses; i++) {
		free(k->uses[i].id);
		free(k->uses[i].name);
		sbuf_release(&k->uses[i].args);
	}
	free(k->uses);
	k->uses = NULL;
	k->nuses = 0;
	free(k->error);
	free(k->error_type);
	k->error = k->error_type = NULL;
	k->ok = false;
}

static void call_release(struct call *k)
{
	call_reset(k);
}

/* ---- one agent's turn: model calls and tool calls, up to maxSteps ---------- */

#define TOOL_RESULT_MAX 16000 /* bytes of a tool result shown to the model */

struct turn {
	struct sbuf response;   /* the text of every step */
	cJSON *tool_calls;      /* [{name, args, id}] */
	int steps;
	const char *finish;     /* "completed" or "max_steps" */
	char *error;            /* when the turn failed */
};

struct keep {
	void **v;
	size_t n;
};

static void *keep(struct keep *k, void *p)
{
	k->v = xrealloc(k->v, (k->n + 1) * sizeof(*k->v));
	k->v[k->n++] = p;
	return p;
}

static void keep_free(struct keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i]);
	free(k->v);
}

/* Runs tool call u (its id kept as id) of step for agent ag: the events,
 * the model's "tool" message (*msg, its text kept in kp), the call
 * recorded in t. */
static void run_tool(struct conv *c, const struct serve_agent *ag, int round, int step,
		     const struct tool_use *u, const char *id, char (*mapped)[65], struct turn *t,
		     struct llm_message *msg, struct keep *kp)
{
	const char *regname = NULL;
	for (size_t i = 0; i < ag->ntools; i++)
		if (!strcmp(mapped[i], u->name))
			regname = ag->tools[i];
	char *perr = NULL;
	cJSON *args = json_parse_strict(u->args.len ? u->args.data : "{}",
					u->args.len ? u->args.len : 2, &perr);
	cJSON *res = NULL;
	char *err = NULL;
	if (!regname)
		err = xasprintf("the agent has no tool \"%s\"", u->name);
	else if (!cJSON_IsObject(args))
		err = xasprintf("%s: the arguments are not a JSON object%s%s", regname,
				perr ? ": " : "", perr ? perr : "");
	free(perr);
	cJSON *tc = cJSON_CreateObject();
	cJSON_AddStringToObject(tc, "name", regname ? regname : u->name);
	cJSON_AddItemToObject(tc, "args", cJSON_IsObject(args) ? cJSON_Duplicate(args, true) :
								  cJSON_CreateObject());
	cJSON_AddStringToObject(tc, "id", id);
	bool ini = ag == c->initiator;
	cJSON *d = cJSON_CreateObject();
	if (!ini) {
		cJSON_AddStringToObject(d, "agent", ag->name);
		cJSON_AddNumberToObject(d, "round", round);
		cJSON_AddNumberToObject(d, "step", step);
	}
	cJSON_AddItemToObject(d, "toolCall", cJSON_Duplicate(tc, true));
	emit(c, ini ? "initiator_tool_call" : "agent_tool_call", d, false);
	cJSON_AddItemToArray(t->tool_calls, tc);
	if (!err && tools_call(c->reg, ag->name, regname, args, &res, &err) < 0 && !err)
		err = xasprintf("%s failed", regname);
	cJSON_Delete(args);
	c->use.tool_calls++;
	if (err)
		c->use.tool_errors++;
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "agent", ag->name);
	cJSON_AddNumberToObject(d, "round", round);
	cJSON_AddNumberToObject(d, "step", step);
	cJSON_AddStringToObject(d, "toolCallId", id);
	char *text;
	if (err) {
		char *safe = util_sanitize(err, strlen(err), false);
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "error", safe);
		cJSON_AddItemToObject(d, "result", r);
		text = safe;
		conv_log(c, "agent %s, round %d: tool %s: %s", ag->name, round,
			 regname ? regname : u->name, safe);
	} else {
		text = cJSON_PrintUnformatted(res);
		if (strlen(text) > TOOL_RESULT_MAX)
			text[TOOL_RESULT_MAX] = '\0';
		cJSON_AddItemToObject(d, "result", res);
		res = NULL;
	}
	if (ini)
		cJSON_Delete(d); /* the seed has no initiator_tool_result: the model gets it */
	else
		emit(c, "agent_tool_result", d, false);
	cJSON_Delete(res);
	*msg = (struct llm_message){ .role = "tool", .content = keep(kp, text),
				     .tool_call_id = id, .is_error = err != NULL };
	free(err);
}

/* One turn of agent ag in round: 0 with t filled, or -1 with t->error. */
static int agent_turn(struct conv *c, const struct serve_agent *ag, int round,
		      const char *prompt, struct turn *t)
{
	const struct llm_agent_settings *s = c->llm;
	const char *model = !strcmp(ag->role, "orchestrator") ? s->model_orchestrator :
								 s->model_execution;
	size_t nt = ag->ntools;
	struct keep kp = { 0 };
	struct llm_tool *lt = keep(&kp, xcalloc(nt + 1, sizeof(*lt)));
	char (*mapped)[65] = keep(&kp, xcalloc(nt + 1, 65));
	for (size_t i = 0; i < nt; i++) {
		char *desc = NULL, *schema = NULL, *err = NULL;
		if (tools_describe(c->reg, ag->tools[i], &desc, &schema, &err) < 0) {
			free(err); /* checked at start; a tool gone since is described empty */
			desc = xstrdup("");
			schema = xstrdup("{\"type\":\"object\"}");
		}
		llm_tool_name(ag->tools[i], mapped[i]);
		lt[i] = (struct llm_tool){ mapped[i], keep(&kp, desc), keep(&kp, schema) };
	}
	size_t cap = 1 + (size_t)ag->max_steps * 9, n = 0;
	struct llm_message *msgs = keep(&kp, xcalloc(cap, sizeof(*msgs)));
	msgs[n++] = (struct llm_message){ .role = "user", .content = prompt };
	sbuf_init(&t->response);
	t->tool_calls = cJSON_CreateArray();
	t->finish = "completed";
	int r = 0;
	for (int step = 1; step <= ag->max_steps; step++) {
		/* The initiator's text is its plan: not streamed. */
		bool ini = ag == c->initiator;
		struct call k = { .c = c, .agent = ini ? NULL : ag->name, .round = round,
				  .stream = !ini };
		t->steps = step;
		if (call_model_msgs(&k, model, ini ? c->initiator_system : ag->system, msgs, n,
				    nt ? lt : NULL, nt) < 0) {
			t->error = k.error;
			k.error = NULL;
			call_release(&k);
			r = -1;
			break;
		}
		if (k.text.len)
			sbuf_add(&t->response, k.text.data, k.text.len);
		if (!k.nuses || step == ag->max_steps) {
			t->finish = k.nuses ? "max_steps" : "completed";
			call_release(&k);
			break;
		}
		/* The model's tool calls, run in order, answered in the conversation. */
		size_t nu = k.nuses;
		if (n + 1 + nu > cap) {
			cap = n + 1 + nu;
			struct llm_message *m2 = xrealloc(msgs, cap * sizeof(*msgs));
			for (size_t i = 0; i < kp.n; i++)
				if (kp.v[i] == msgs)
					kp.v[i] = m2;
			msgs = m2;
		}
		struct llm_tool_call *tc = keep(&kp, xcalloc(nu, sizeof(*tc)));
		for (size_t i = 0; i < nu; i++) {
			tc[i].id = keep(&kp, xstrdup(k.uses[i].id));
			tc[i].name = keep(&kp, xstrdup(k.uses[i].name));
			tc[i].arguments = keep(&kp, xstrndup(k.uses[i].args.data ? k.uses[i].args.data : "",
							      k.uses[i].args.len));
		}
		msgs[n++] = (struct llm_message){ .role = "assistant",
						  .content = keep(&kp, xstrndup(k.text.data ? k.text.data : "",
										 k.text.len)),
						  .tool_calls = tc, .ntool_calls = nu };
		for (size_t i = 0; i < nu && !c->cancel; i++)
			run_tool(c, ag, round, step, &k.uses[i], tc[i].id, mapped, t, &msgs[n++], &kp);
		call_release(&k);
		if (c->cancel) {
			t->error = xstrdup("cancelled");
			r = -1;
			break;
		}
	}
	keep_free(&kp);
	return r;
}

static void turn_release(struct turn *t)
{
	sbuf_release(&t->response);
	cJSON_Delete(t->tool_calls);
	free(t->error);
	memset(t, 0, sizeof(*t));
}

/* ---- the conversation ------------------------------------------------------ */

static const char INITIATOR_SYSTEM[] =
	"You are the initiator of a multi-agent conversation. Refine the user's request "
	"into a goal the agents can work on together. Answer with JSON only, no prose: "
	"{\"goal\": string, \"strategy\": string, \"successCriteria\": [string, ...]}.";
static const char SUMMARIZER_SYSTEM[] =
	"You are the summarizer of a multi-agent conversation. From what the agents said, "
	"write the final answer to the user: what was found, and the next steps.";

/* The request's messages as a transcript (system messages included). */
static void add_transcript(struct sbuf *b, const struct serve_request *r)
{
	sbuf_addstr(b, "The conversation so far:\n");
	for (size_t i = 0; i < r->nmessages; i++)
		sbuf_addf(b, "[%s] %s\n", r->messages[i].role, r->messages[i].content);
}

struct plan {
	char *goal, *strategy;
	cJSON *criteria; /* array of strings */
};

/* The initiator's answer as JSON, or its text as the goal. */
static void plan_from_text(struct conv *c, const char *text, struct plan *p)
{
	const char *a = strchr(text, '{'), *z = strrchr(text, '}');
	cJSON *j = NULL;
	if (a && z && z > a) {
		char *perr = NULL;
		j = json_parse_strict(a, (size_t)(z - a + 1), &perr);
		free(perr);
	}
	const char *goal = j ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "goal")) : NULL;
	if (goal && *goal) {
		const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "strategy"));
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "successCriteria");
		p->goal = xstrdup(goal);
		p->strategy = xstrdup(st ? st : "");
		p->criteria = cJSON_CreateArray();
		const cJSON *it;
		cJSON_ArrayForEach(it, sc)
			if (cJSON_IsString(it))
				cJSON_AddItemToArray(p->criteria, cJSON_CreateString(it->valuestring));
	} else {
		conv_log(c, "warning: the initiator did not answer with the goal as JSON; "
			    "its text is the goal");
		p->goal = xstrdup(text);
		p->strategy = xstrdup("");
		p->criteria = cJSON_CreateArray();
	}
	cJSON_Delete(j);
}

static bool timed_out(struct conv *c)
{
	return util_mono_ns() >= c->deadline_ns;
}

/* Ends the stream after a failed call of the initiator or summarizer. */
static void fail_call(struct conv *c, struct call *k, const char *who)
{
	if (timed_out(c) || (k->error_type && !strcmp(k->error_type, "timeout")))
		emit_error(c, "CONVERSATION_TIMEOUT", "the conversation took too long", NULL, 0,
			   false);
	else {
		char *m = xasprintf("%s: %s", who, k->error ? k->error : "failed");
		emit_error(c, "AGENT_EXECUTION_FAILED", m, NULL, 0, false);
		free(m);
	}
	conv_log(c, "%s failed: %s", who, k->error ? k->error : "?");
}

static void run(struct conv *c)
{
	const struct serve_request *r = &c->req;
	const struct llm_agent_settings *s = c->llm;
	cJSON *names = cJSON_CreateArray(); /* owned here; copied into events */
	for (size_t i = 0; i < r->nagents; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(r->agents[i]->name));
	/* conversation_start was recorded at the admission (conv_start). */
	convbus_begin(c);

	/* The initiator. */
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "agent", "initiator");
	emit(c, "initiator_start", d, false);
	struct sbuf prompt;
	sbuf_init(&prompt);
	add_transcript(&prompt, r);
	struct call k = { .c = c };
	struct plan p = { 0 };
	convbus_turn(c, 0, 0);
	if (c->initiator && c->initiator->ntools) {
		/* An initiator with tools: their calls are initiator_tool_call
		 * events, up to its maxSteps; its last text is the plan. */
		struct turn t = { 0 };
		if (agent_turn(c, c->initiator, 0, prompt.data, &t) < 0) {
			k.error = t.error;
			t.error = NULL;
			turn_release(&t);
			convbus_turn_done(c, 0, false, k.error);
			fail_call(c, &k, "initiator");
			call_release(&k);
			sbuf_release(&prompt);
			cJSON_Delete(names);
			return;
		}
		plan_from_text(c, t.response.data ? t.response.data : "", &p);
		turn_release(&t);
	} else {
		if (call_model(&k, s->model_orchestrator, c->initiator_system, prompt.data) < 0) {
			convbus_turn_done(c, 0, false, k.error);
			fail_call(c, &k, "initiator");
			call_release(&k);
			sbuf_release(&prompt);
			cJSON_Delete(names);
			return;
		}
		plan_from_text(c, k.text.data ? k.text.data : "", &p);
	}
	call_release(&k);
	convbus_turn_done(c, 0, true, NULL);
	d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "goal", p.goal);
	cJSON_AddStringToObject(d, "strategy", p.strategy);
	cJSON_AddItemToObject(d, "successCriteria", cJSON_Duplicate(p.criteria, true));
	emit(c, "initiator_complete", d, false);

	/* The rounds: each agent sees the goal and what was said before. */
	struct sbuf said;
	sbuf_init(&said);
	bool aborted = false;
	for (int round = 1; round <= r->rounds && !aborted; round++) {
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "round", round);
		cJSON_AddItemToObject(d, "agents", cJSON_Duplicate(names, true));
		cJSON_AddStringToObject(d, "goal", p.goal);
		emit(c, "round_start", d, false);
		c->rounds_started = round;
		cJSON *results = cJSON_CreateArray();
		for (size_t i = 0; i < r->nagents; i++) {
			const struct serve_agent *ag = r->agents[i];
			if (timed_out(c) || c->cancel) {
				aborted = true;
				break;
			}
			d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "agent", ag->name);
			cJSON_AddNumberToObject(d, "round", round);
			cJSON_AddNumberToObject(d, "maxSteps", ag->max_steps);
			emit(c, "agent_start", d, false);
			convbus_turn(c, i + 1, round);
			sbuf_release(&prompt);
			sbuf_init(&prompt);
			add_transcript(&prompt, r);
			sbuf_addf(&prompt, "\nGoal: %s\nStrategy: %s\n", p.goal, p.strategy);
			if (said.len)
				sbuf_addf(&prompt, "\nWhat the agents said so far:\n%s", said.data);
			sbuf_addf(&prompt, "\nRound %d of %d. You are %s; your turn.", round,
				  r->rounds, ag->name);
			struct turn t = { 0 };
			int64_t t0 = util_mono_ns();
			int tries = !strcmp(ag->on_error, "retry") ? 2 : 1, rc = -1;
			for (int attempt = 1; attempt <= tries && rc < 0; attempt++) {
				turn_release(&t);
				rc = agent_turn(c, ag, round, prompt.data, &t);
				if (rc == 0 || timed_out(c) || c->cancel)
					break;
				const char *action = attempt < tries ? "retry" :
						     !strcmp(ag->on_error, "abort") ? "abort" : "skip";
				d = cJSON_CreateObject();
				cJSON_AddStringToObject(d, "agent", ag->name);
				cJSON_AddNumberToObject(d, "round", round);
				char *safe = util_sanitize(t.error, strlen(t.error), false);
				cJSON_AddStringToObject(d, "error", safe);
				cJSON_AddStringToObject(d, "action", action);
				emit(c, "agent_error", d, false);
				c->use.agent_errors++;
				conv_log(c, "agent %s, round %d: %s (%s)", ag->name, round, safe, action);
				if (!strcmp(action, "abort")) {
					char *m = xasprintf("%s: %s", ag->name, safe);
					emit_error(c, "AGENT_EXECUTION_FAILED", m, ag->name, round, false);
					free(m);
				}
				free(safe);
			}
			c->use.agents[i].turns++;
			c->use.agents[i].turn_ns += util_mono_ns() - t0;
			convbus_turn_done(c, i + 1, rc == 0, rc == 0 ? NULL :
					  t.error ? t.error : "the turn failed");
			if (rc < 0) {
				turn_release(&t);
				if (timed_out(c) || c->cancel || !strcmp(ag->on_error, "abort")) {
					aborted = true;
					break;
				}
				continue;
			}
			const char *resp = t.response.data ? t.response.data : "";
			d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "agent", ag->name);
			cJSON_AddNumberToObject(d, "round", round);
			cJSON_AddStringToObject(d, "response", resp);
			cJSON_AddItemToObject(d, "toolCalls", cJSON_Duplicate(t.tool_calls, true));
			cJSON_AddNumberToObject(d, "steps", t.steps);
			cJSON_AddStringToObject(d, "finishReason", t.finish);
			emit(c, "agent_complete", d, false);
			cJSON *res = cJSON_CreateObject();
			cJSON_AddStringToObject(res, "agent", ag->name);
			cJSON_AddStringToObject(res, "response", resp);
			cJSON_AddItemToObject(res, "toolCalls", cJSON_Duplicate(t.tool_calls, true));
			cJSON_AddNumberToObject(res, "steps", t.steps);
			cJSON_AddItemToArray(results, res);
			sbuf_addf(&said, "- %s (round %d): %s\n", ag->name, round, resp);
			turn_release(&t);
		}
		if (aborted) {
			cJSON_Delete(results);
			break;
		}
		d = cJSON_CreateObject();
		cJSON_AddNumberToObject(d, "round", round);
		cJSON_AddItemToObject(d, "results", results);
		emit(c, "round_complete", d, false);
	}
	if (aborted) {
		if (timed_out(c))
			emit_error(c, "CONVERSATION_TIMEOUT", "the conversation took too long", NULL,
				   0, false);
		/* A cancel (client gone, or shutdown) has its terminal event already. */
	} else {
		/* The summarizer. */
		d = cJSON_CreateObject();
		emit(c, "summarizer_start", d, false);
		sbuf_release(&prompt);
		sbuf_init(&prompt);
		add_transcript(&prompt, r);
		sbuf_addf(&prompt, "\nGoal: %s\n\nWhat the agents said:\n%s", p.goal,
			  said.data ? said.data : "(nothing)\n");
		struct call z = { .c = c, .stream = true };
		size_t zi = r->nagents + 1;
		convbus_turn(c, zi, 0);
		if (call_model(&z, s->model_orchestrator, SUMMARIZER_SYSTEM, prompt.data) < 0) {
			convbus_turn_done(c, zi, false, z.error);
			fail_call(c, &z, "summarizer");
		} else {
			convbus_turn_done(c, zi, true, NULL);
			d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "summary", z.text.data ? z.text.data : "");
			cJSON_AddNumberToObject(d, "totalRounds", r->rounds);
			cJSON_AddNumberToObject(d, "totalAgents", (double)r->nagents);
			cJSON_AddNumberToObject(d, "executionTime",
						(double)((util_mono_ns() - c->start_ns) / 1000000) / 1000.0);
			emit(c, "conversation_complete", d, true);
			conv_log(c, "complete");
		}
		call_release(&z);
	}
	sbuf_release(&said);
	sbuf_release(&prompt);
	free(p.goal);
	free(p.strategy);
	cJSON_Delete(p.criteria);
	cJSON_Delete(names);
}

/* c's files (its events file with the events kept in memory so far, its
 * meta): 0, or -1 after ending it (the error goes to the client from
 * memory; its rounds refunded; the set-up's reference dropped). */
static int conv_make_files(struct conv *c)
{
	char *err = NULL;
	int r = convlog_create(c, &err);
	convlog_journal_done();
	conv_trace_mark(c, TR_FILES);
	if (r == 0)
		return 0;
	conv_log(c, "cannot record its events: %s", err ? err : "?");
	free(err);
	emit_error(c, "AGENT_EXECUTION_FAILED", "the server cannot record the "
		   "conversation's events (see its log)", NULL, 0, false);
	serve_limits_end(c->lim, c->user, c->resv, 0, util_now_ns() / 1000000000LL);
	conv_unref(c);
	return -1;
}

/* A conversation's thread: its files first (its own set-up, beside the
 * other conversations' rather than queued behind them), then it runs,
 * unless it ended before (cancelled, or the server stopping). */
static void *conv_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "serve-conv"); /* top -H, /proc/PID/task/TID/comm */
	struct conv *c = arg;
	if (conv_make_files(c) < 0)
		return NULL;
	pthread_mutex_lock(&c->mu);
	bool ran = !c->finished;
	pthread_mutex_unlock(&c->mu);
	if (ran) {
		run(c);
		/* Whatever happened, the conversation ends: a terminal event if none yet. */
		emit_error(c, "AGENT_EXECUTION_FAILED", "the conversation was cancelled", NULL, 0,
			   false);
		convbus_end(c, c->outcome ? c->outcome : "unknown");
	}
	convlog_finish(c);
	serve_limits_end(c->lim, c->user, c->resv, c->rounds_started, util_now_ns() / 1000000000LL);
	conv_unref(c);
	return NULL;
}

static struct conv *conv_new(void)
{
	struct conv *c = xcalloc(1, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	return c;
}

struct conv_stream *conv_start(struct serve_request *req, const struct conv_env *env,
			       const char *user, long resv, bool ids, char **err)
{
	struct conv *c = conv_new();
	c->refs = 1; /* the set-up's, then the thread's; the stream takes its own */
	unsigned char rnd[12];
	util_random(rnd, sizeof(rnd));
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(c->session + 2 * i, 3, "%02x", rnd[i]);
	c->user = xstrdup(user);
	c->verbose = env->verbose;
	c->req = *req;
	memset(req, 0, sizeof(*req));
	c->llm = env->llm;
	c->reg = env->reg;
	c->lim = env->lim;
	c->resv = resv;
	c->created_ns = util_now_ns();
	c->start_ns = util_mono_ns();
	c->deadline_ns = c->start_ns +
			 conv_env_long("MADF_SERVE_TIMEOUT_S", 600, 1, 86400) * 1000000000LL;
	c->ping_ms = conv_env_long("MADF_SERVE_PING_MS", 15000, 10, 15000);
	c->grace_s = conv_env_long("MADF_SERVE_GRACE_S", 60, 0, 86400);
	c->initiator = env->initiator;
	c->initiator_system = c->initiator && *c->initiator->system ?
			      xasprintf("%s\n\n%s", c->initiator->system, INITIATOR_SYSTEM) :
			      xstrdup(INITIATOR_SYSTEM);
	for (size_t i = 0; i < c->req.nagents && i < SERVE_MAX_AGENTS; i++) {
		util_strlcpy(c->use.agents[i].name, c->req.agents[i]->name,
			     sizeof(c->use.agents[i].name));
		c->use.nagents = i + 1;
	}
	if (env->trace) {
		c->trace = xcalloc(TR_N, sizeof(*c->trace));
		memcpy(c->trace, env->trace, TR_N * sizeof(*c->trace));
	}
	convlog_paths(c, env->dir);
	/* Its first event now, kept in memory and journalled: the client has
	 * it at once, and a restart before its files are made still has it.
	 * Its thread is started by the set-up (server/conv_setup.c), and makes
	 * the files. */
	cJSON *d = cJSON_CreateObject();
	cJSON *names = cJSON_AddArrayToObject(d, "agents");
	for (size_t i = 0; i < c->req.nagents; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(c->req.agents[i]->name));
	cJSON_AddNumberToObject(d, "rounds", c->req.rounds);
	if (!emit(c, "conversation_start", d, false) || convlog_journal_add(c, err) < 0) {
		if (!*err)
			*err = xstrdup("cannot record its first event");
		serve_limits_end(env->lim, c->user, resv, 0, util_now_ns() / 1000000000LL);
		conv_unref(c);
		return NULL;
	}
	pthread_mutex_lock(&alive_mu);
	c->next_alive = alive;
	alive = c;
	c->listed = true;
	nalive++;
	pthread_mutex_unlock(&alive_mu);
	struct conv_stream *st = conv_stream_new(c, 0, ids, false);
	conv_log(c, "started: %zu agent%s, %d round%s", c->req.nagents,
		 c->req.nagents == 1 ? "" : "s", c->req.rounds, c->req.rounds == 1 ? "" : "s");
	conv_setup_queue(c);
	return st;
}

void conv_trace_mark(struct conv *c, int m)
{
	if (!c->trace || m < 0 || m >= TR_N)
		return;
	pthread_mutex_lock(&c->mu);
	bool was = c->trace[TR_SENT] && c->trace[TR_FILES];
	if (!c->trace[m])
		c->trace[m] = util_mono_ns();
	bool now = c->trace[TR_SENT] && c->trace[TR_FILES];
	pthread_mutex_unlock(&c->mu);
	if (now && !was)
		serve_trace_write(c->session, c->trace);
}

void conv_run(struct conv *c)
{
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	conv_trace_mark(c, TR_BUS); /* before: the thread may end (and free c) at once */
	int r = pthread_create(&t, &at, conv_thread, c);
	pthread_attr_destroy(&at);
	if (r == 0)
		return;
	/* No thread: its files here, and it ends. */
	if (conv_make_files(c) < 0)
		return;
	emit_error(c, "AGENT_EXECUTION_FAILED", "cannot start the conversation's thread", NULL, 0,
		   false);
	convlog_finish(c);
	serve_limits_end(c->lim, c->user, c->resv, 0, util_now_ns() / 1000000000LL);
	conv_unref(c);
}

/* The grace period of a conversation nobody reads: it runs on; if no
 * stream comes back within c->grace_s, it is cancelled. */
struct grace {
	struct conv *c;
	unsigned gen;
};

static void *grace_thread(void *arg)
{
	pthread_setname_np(pthread_self(), "serve-grace"); /* top -H, /proc/PID/task/TID/comm */
	struct grace *g = arg;
	struct conv *c = g->c;
	pthread_mutex_lock(&c->mu);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += c->grace_s;
	int w = 0;
	while (!c->attached && !c->finished && g->gen == c->detach_gen && w != ETIMEDOUT)
		w = pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	bool expire = !c->attached && !c->finished && g->gen == c->detach_gen;
	if (expire) {
		char *m = xasprintf("no client read the conversation for its grace period (%ld s)",
				    c->grace_s);
		emit_locked(c, "error", error_data("CANCELLED", m, NULL, 0, false), true);
		free(m);
		c->cancel = 1;
	}
	pthread_mutex_unlock(&c->mu);
	if (expire)
		conv_log(c, "no client came back within the grace period (%ld s): cancelled",
			 c->grace_s);
	conv_unref(c);
	free(g);
	return NULL;
}

void conv_last_detached(struct conv *c, unsigned gen)
{
	struct grace *g = xcalloc(1, sizeof(*g));
	g->c = c;
	g->gen = gen;
	pthread_t t;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, grace_thread, g) != 0) {
		/* No timer: the conversation runs to its own end (its wall-clock limit). */
		conv_log(c, "warning: cannot start the grace timer");
		conv_unref(c);
		free(g);
	}
	pthread_attr_destroy(&at);
}

struct conv *conv_find_running(const char *session, const char *user)
{
	struct conv *found = NULL;
	pthread_mutex_lock(&alive_mu);
	for (struct conv *c = alive; c; c = c->next_alive) {
		if (strcmp(c->session, session) || strcmp(c->user, user))
			continue;
		pthread_mutex_lock(&c->mu);
		c->refs++;
		pthread_mutex_unlock(&c->mu);
		found = c;
		break;
	}
	pthread_mutex_unlock(&alive_mu);
	return found;
}

void conv_shutdown_all(void)
{
	pthread_mutex_lock(&alive_mu);
	for (struct conv *c = alive; c; c = c->next_alive) {
		emit_error(c, "SERVER_SHUTDOWN", "the server is shutting down; start the "
			   "conversation again", NULL, 0, true);
		c->cancel = 1;
	}
	pthread_mutex_unlock(&alive_mu);
}

int conv_cancel(const char *session, const char *user)
{
	int rc = -1;
	pthread_mutex_lock(&alive_mu);
	for (struct conv *c = alive; c; c = c->next_alive) {
		if (strcmp(c->session, session) || strcmp(c->user, user))
			continue;
		if (emit_error(c, "CANCELLED", "cancelled", NULL, 0, false)) {
			c->cancel = 1;
			conv_log(c, "cancelled by its owner");
			rc = 0;
		}
		break;
	}
	pthread_mutex_unlock(&alive_mu);
	return rc;
}

int conv_cancel_by(const char *session, const char *who, char **detail)
{
	int rc = 1;
	*detail = NULL;
	pthread_mutex_lock(&alive_mu);
	for (struct conv *c = alive; c; c = c->next_alive) {
		if (strcmp(c->session, session))
			continue;
		char *m = !strcmp(who, "operator") ? xstrdup("cancelled by the operator") :
			  xasprintf("cancelled by %s", who);
		if (emit_error(c, "CANCELLED", m, NULL, 0, false)) {
			c->cancel = 1;
			conv_log(c, "cancelled by the operator (%s, over the bus)", who);
			*detail = xasprintf("conversation %s of %s cancelled: its stream ended with "
					    "an error CANCELLED", session, c->user);
			rc = 0;
		} else {
			*detail = xasprintf("conversation %s is ending already", session);
		}
		free(m);
		break;
	}
	pthread_mutex_unlock(&alive_mu);
	if (!*detail)
		*detail = xasprintf("no conversation %s is running in this madf serve (pid %ld)",
				    session, (long)getpid());
	return rc;
}

void conv_refresh_all(long refresh_ms)
{
	/* taken (a reference each) under the list's lock, refreshed without
	 * it: a conversation starting or ending does not wait on the files */
	struct conv **v = NULL;
	size_t n = 0;
	pthread_mutex_lock(&alive_mu);
	if (nalive)
		v = xcalloc(nalive, sizeof(*v));
	for (struct conv *c = alive; c && n < nalive; c = c->next_alive) {
		pthread_mutex_lock(&c->mu);
		if (c->bus && !c->finished) {
			c->refs++;
			v[n++] = c;
		}
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&alive_mu);
	for (size_t i = 0; i < n; i++) {
		convbus_refresh(v[i], refresh_ms);
		conv_unref(v[i]);
	}
	free(v);
}

size_t conv_alive(void)
{
	pthread_mutex_lock(&alive_mu);
	size_t n = nalive;
	pthread_mutex_unlock(&alive_mu);
	return n;
}
