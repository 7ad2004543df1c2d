/* LLM mode: configuration, the tool-calling loop, usage accounting. */
#include "agents/llm_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "agents/data_tools.h"
#include "agents/runtime.h"
#include "core/http.h"
#include "core/json_out.h"
#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define TOOL_RESULT_MAX 16000 /* bytes of one tool result shown to the model */
#define USAGE_MAX ((size_t)64 << 20)

/* ---- configuration ------------------------------------------------------ */

static const char *env_get(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int env_long(const char *name, long lo, long hi, long def, long *out, char **err)
{
	const char *v = env_get(name);
	*out = def;
	if (!v)
		return 0;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return err_set(err, "%s: \"%s\" is not an integer from %ld to %ld", name, v, lo, hi);
	*out = x;
	return 0;
}

static int env_double(const char *name, double def, double *out, char **err)
{
	const char *v = env_get(name);
	*out = def;
	if (!v)
		return 0;
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || *end || !isfinite(x) || x < 0 || x > 1e9)
		return err_set(err, "%s: \"%s\" is not a non-negative number", name, v);
	*out = x;
	return 0;
}

static char *first_of(const char *a, const char *b, const char *c)
{
	const char *v = env_get(a);
	if (!v && b)
		v = env_get(b);
	if (!v && c)
		v = env_get(c);
	return v ? xstrdup(v) : NULL;
}

int llm_agent_settings_from_env(struct llm_agent_settings **out, char **err)
{
	*out = NULL;
	const char *mode = env_get("MADF_LLM");
	const char *prov;
	if (mode && !strcmp(mode, "off"))
		return 0;
	if (mode && strcmp(mode, "anthropic") && strcmp(mode, "openai"))
		return err_set(err, "MADF_LLM: \"%s\" is not off, anthropic or openai", mode);
	if (mode)
		prov = mode;
	else if (env_get("ANTHROPIC_API_KEY"))
		prov = "anthropic";
	else if (env_get("OPENAI_API_KEY"))
		prov = "openai";
	else
		return 0;
	bool anth = !strcmp(prov, "anthropic");
	const char *key = env_get(anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	if (!key) {
		return err_set(err, "MADF_LLM=%s but %s is not set", prov,
			       anth ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
	}
	struct llm_agent_settings *s = xcalloc(1, sizeof(*s));
	s->provider = anth ? LLM_ANTHROPIC : LLM_OPENAI;
	s->provider_name = xstrdup(prov);
	s->api_key = xstrdup(key);
	const char *url = env_get(anth ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
	s->base_url = xstrdup(url ? url : anth ? "https://api.anthropic.com" :
				   "https://api.openai.com/v1");
	if (anth) {
		s->model_orchestrator = first_of("CLAUDE_MODEL_ORCHESTRATOR", "CLAUDE_MODEL_EXECUTION", NULL);
		s->model_execution = first_of("CLAUDE_MODEL_EXECUTION", "CLAUDE_MODEL_ORCHESTRATOR", NULL);
	} else {
		s->model_orchestrator = first_of("OPENAI_MODEL_ORCHESTRATOR", "OPENAI_MODEL",
						 "OPENAI_MODEL_EXECUTION");
		s->model_execution = first_of("OPENAI_MODEL_EXECUTION", "OPENAI_MODEL",
					      "OPENAI_MODEL_ORCHESTRATOR");
	}
	long steps = 8, budget = 0, cont = 0;
	int r = 0;
	if (!s->model_execution) {
		if (mode)
			r = err_set(err, "MADF_LLM=%s but no model: set %s", prov,
				    anth ? "CLAUDE_MODEL_EXECUTION (or CLAUDE_MODEL_ORCHESTRATOR)" :
					   "OPENAI_MODEL (or OPENAI_MODEL_EXECUTION)");
		/* A key alone is not LLM mode: the deterministic agents run. */
		llm_agent_settings_free(&s);
		return r;
	}
	if (env_long("MADF_LLM_MAX_STEPS", 1, 100, 8, &steps, err) < 0 ||
	    env_long("MADF_LLM_MAX_TOKENS", 1, 1000000, 1024, &s->max_tokens, err) < 0 ||
	    env_long("MADF_TASK_TOKEN_BUDGET", 0, 1000000000L, 0, &budget, err) < 0 ||
	    env_double("MADF_TASK_COST_BUDGET", 0, &s->cost_budget, err) < 0 ||
	    env_double("MADF_LLM_PRICE_IN", -1, &s->price_in, err) < 0 ||
	    env_double("MADF_LLM_PRICE_OUT", -1, &s->price_out, err) < 0 ||
	    env_long("MADF_LLM_CONTINUE_AT_LIMIT", 0, 1, 0, &cont, err) < 0) {
		llm_agent_settings_free(&s);
		return -1;
	}
	s->continue_at_limit = cont == 1;
	s->max_steps = (int)steps;
	s->token_budget = budget;
	*out = s;
	return 0;
}

void llm_agent_settings_free(struct llm_agent_settings **sp)
{
	struct llm_agent_settings *s = *sp;
	if (!s)
		return;
	free(s->provider_name);
	free(s->base_url);
	if (s->api_key) {
		explicit_bzero(s->api_key, strlen(s->api_key));
		free(s->api_key);
	}
	free(s->model_orchestrator);
	free(s->model_execution);
	free(s);
	*sp = NULL;
}

char *llm_agent_settings_describe(const struct llm_agent_settings *s)
{
	if (!s)
		return xstrdup("deterministic mode (no model configured)");
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "LLM mode: %s, orchestrator %s, execution %s, at most %d steps per task",
		  s->provider_name, s->model_orchestrator, s->model_execution, s->max_steps);
	if (s->token_budget)
		sbuf_addf(&b, ", budget %ld tokens per task", s->token_budget);
	if (s->cost_budget > 0)
		sbuf_addf(&b, ", budget $%.4f per task", s->cost_budget);
	if ((s->token_budget || s->cost_budget > 0) && s->continue_at_limit)
		sbuf_addstr(&b, " (at the cap the LLM part is skipped: MADF_LLM_CONTINUE_AT_LIMIT)");
	double in, out;
	if (!llm_agent_price(s, s->model_execution, &in, &out))
		sbuf_addf(&b, " (no price known for %s: cost counted as 0; set "
			  "MADF_LLM_PRICE_IN/MADF_LLM_PRICE_OUT)", s->model_execution);
	return sbuf_detach(&b);
}

cJSON *llm_agent_settings_manifest(const struct llm_agent_settings *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "mode", s ? "llm" : "deterministic");
	if (!s)
		return o;
	cJSON_AddStringToObject(o, "provider", s->provider_name);
	cJSON *m = cJSON_AddObjectToObject(o, "models");
	cJSON_AddStringToObject(m, "orchestrator", s->model_orchestrator);
	cJSON_AddStringToObject(m, "execution", s->model_execution);
	cJSON_AddNumberToObject(o, "max_steps", s->max_steps);
	cJSON_AddNumberToObject(o, "token_budget", (double)s->token_budget);
	cJSON_AddNumberToObject(o, "cost_budget_usd", s->cost_budget);
	cJSON_AddBoolToObject(o, "continue_at_limit", s->continue_at_limit);
	return o;
}

/* USD per million tokens, input and output (list prices; override with
 * MADF_LLM_PRICE_IN / MADF_LLM_PRICE_OUT). The longest prefix wins. */
static const struct {
	const char *prefix;
	double in, out;
} prices[] = {
	{ "claude-opus-4-5", 5, 25 },      { "claude-opus-4", 15, 75 },
	{ "claude-3-opus", 15, 75 },       { "claude-sonnet-4", 3, 15 },
	{ "claude-3-7-sonnet", 3, 15 },    { "claude-3-5-sonnet", 3, 15 },
	{ "claude-haiku-4-5", 1, 5 },      { "claude-3-5-haiku", 0.8, 4 },
	{ "claude-3-haiku", 0.25, 1.25 },  { "gpt-4o-mini", 0.15, 0.6 },
	{ "gpt-4o", 2.5, 10 },             { "gpt-4.1-nano", 0.1, 0.4 },
	{ "gpt-4.1-mini", 0.4, 1.6 },      { "gpt-4.1", 2, 8 },
	{ "gpt-5-nano", 0.05, 0.4 },       { "gpt-5-mini", 0.25, 2 },
	{ "gpt-5", 1.25, 10 },             { "o4-mini", 1.1, 4.4 },
	{ "o3-mini", 1.1, 4.4 },           { "o3", 2, 8 },
};

bool llm_agent_price(const struct llm_agent_settings *s, const char *model, double *in, double *out)
{
	*in = *out = 0;
	size_t best = 0;
	bool known = false;
	for (size_t i = 0; model && i < ARRAY_SIZE(prices); i++) {
		size_t n = strlen(prices[i].prefix);
		if (n > best && !strncmp(model, prices[i].prefix, n)) {
			best = n;
			*in = prices[i].in;
			*out = prices[i].out;
			known = true;
		}
	}
	if (s && s->price_in >= 0) {
		*in = s->price_in;
		known = s->price_out >= 0 || known;
	}
	if (s && s->price_out >= 0)
		*out = s->price_out;
	return known || (s && s->price_in >= 0 && s->price_out >= 0);
}

/* ---- usage ------------------------------------------------------------------ */

cJSON *llm_agent_usage_json(const struct llm_agent_usage *u)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "calls", (double)u->calls);
	cJSON_AddNumberToObject(o, "input_tokens", (double)u->input_tokens);
	cJSON_AddNumberToObject(o, "output_tokens", (double)u->output_tokens);
	cJSON_AddNumberToObject(o, "cost_usd", round(u->cost_usd * 1e6) / 1e6);
	return o;
}

void llm_agent_usage_from_json(const cJSON *j, struct llm_agent_usage *u)
{
	u->calls = (long)jnum(j, "calls", 0);
	u->input_tokens = (long)jnum(j, "input_tokens", 0);
	u->output_tokens = (long)jnum(j, "output_tokens", 0);
	u->cost_usd = jnum(j, "cost_usd", 0);
}

static void usage_add(cJSON *o, const struct llm_agent_usage *d)
{
	struct llm_agent_usage u;
	llm_agent_usage_from_json(o, &u);
	u.calls += d->calls;
	u.input_tokens += d->input_tokens;
	u.output_tokens += d->output_tokens;
	u.cost_usd += d->cost_usd;
	static const char *const keys[] = { "calls", "input_tokens", "output_tokens", "cost_usd" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(o, keys[i]);
	cJSON *n = llm_agent_usage_json(&u);
	while (n->child) {
		cJSON *c = cJSON_DetachItemViaPointer(n, n->child);
		cJSON_AddItemToObject(o, c->string, c);
	}
	cJSON_Delete(n);
}

static cJSON *obj_member(cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!cJSON_IsObject(v)) {
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		v = cJSON_AddObjectToObject(o, k);
	}
	return v;
}

int llm_agent_usage_record(const char *data_dir, const char *agent, const char *task_id,
		     const char *label, const struct llm_agent_usage *delta, const char *status,
		     char **err)
{
	char *dir = xasprintf("%s/llm", data_dir);
	char *lock_path = xasprintf("%s/usage.json.lock", dir);
	char *path = xasprintf("%s/usage.json", dir);
	int lfd = -1, r = -1;
	cJSON *root = NULL;
	if (util_mkdirs(dir, err) < 0)
		goto out;
	lfd = util_lock_file(lock_path, true, err);
	if (lfd < 0)
		goto out;
	char *buf = NULL, *rerr = NULL;
	size_t len;
	if (util_read_file(path, USAGE_MAX, &buf, &len, &rerr) == 0) {
		root = json_parse_strict(buf, len, &rerr);
		free(buf);
		if (!cJSON_IsObject(root)) {
			err_set(err, "%s is corrupt: %s", path, rerr ? rerr : "not an object");
			free(rerr);
			goto out;
		}
	} else if (access(path, F_OK) < 0 && errno == ENOENT) {
		root = cJSON_CreateObject();
	} else {
		err_set(err, "%s", rerr ? rerr : "cannot read usage.json");
		free(rerr);
		goto out;
	}
	free(rerr);
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	cJSON_DeleteItemFromObjectCaseSensitive(root, "updated_at");
	cJSON_AddStringToObject(root, "updated_at", now);
	usage_add(obj_member(obj_member(root, "agents"), agent), delta);
	if (task_id) {
		cJSON *t = obj_member(obj_member(root, "tasks"), task_id);
		cJSON_DeleteItemFromObjectCaseSensitive(t, "agent");
		cJSON_AddStringToObject(t, "agent", agent);
		if (label) {
			cJSON_DeleteItemFromObjectCaseSensitive(t, "label");
			cJSON_AddStringToObject(t, "label", label);
		}
		usage_add(t, delta);
		if (status || !cJSON_GetObjectItemCaseSensitive(t, "status")) {
			cJSON_DeleteItemFromObjectCaseSensitive(t, "status");
			cJSON_AddStringToObject(t, "status", status ? status : "running");
		}
	}
	char *txt = json_pretty(root);
	r = util_write_file_atomic(path, txt, strlen(txt), false, err);
	free(txt);
out:
	if (lfd >= 0)
		close(lfd); /* releases the lock */
	cJSON_Delete(root);
	free(dir);
	free(lock_path);
	free(path);
	return r;
}

/* ---- the loop ---------------------------------------------------------------- */

bool llm_agent_budget_reached(const struct llm_agent_settings *s, const struct llm_agent_usage *u,
			long extra_tokens, double extra_cost)
{
	if (!s)
		return false;
	if (s->token_budget > 0 &&
	    u->input_tokens + u->output_tokens >= s->token_budget + extra_tokens)
		return true;
	if (s->cost_budget > 0 && u->cost_usd >= s->cost_budget + extra_cost)
		return true;
	return false;
}

const char *llm_agent_outcome_name(enum llm_agent_outcome o)
{
	switch (o) {
	case LLM_RUN_DONE:
		return "done";
	case LLM_RUN_PAUSED:
		return "awaiting_approval";
	case LLM_RUN_STEP_LIMIT:
		return "step_limit";
	case LLM_RUN_CANCELLED:
		return "cancelled";
	case LLM_RUN_FAILED:
		break;
	}
	return "failed";
}

/* The tools offered to the model: registry name and the name it is sent
 * as (unique, ^[a-zA-Z0-9_-]{1,64}$). */
struct offered {
	char *reg;
	char sent[65];
	char *description, *schema;
};

struct call_slot {
	int index;
	char *id, *name;
	struct sbuf args;
};

struct turn {
	struct sbuf text;
	struct call_slot *calls;
	size_t ncalls;
	bool done;
	struct llm_result res;  /* strings copied below */
	char *stop_reason, *error_type, *error;
	void (*on_text)(void *ctx, const char *text, size_t len);
	void (*on_wait)(void *ctx);
	void *ctx;
};

static void turn_text(void *ctx, const char *text, size_t len)
{
	struct turn *t = ctx;
	sbuf_add(&t->text, text, len);
	if (t->on_text)
		t->on_text(t->ctx, text, len);
}

static struct call_slot *turn_slot(struct turn *t, int index)
{
	for (size_t i = 0; i < t->ncalls; i++)
		if (t->calls[i].index == index)
			return &t->calls[i];
	t->calls = xrealloc(t->calls, (t->ncalls + 1) * sizeof(*t->calls));
	struct call_slot *c = &t->calls[t->ncalls++];
	memset(c, 0, sizeof(*c));
	c->index = index;
	sbuf_init(&c->args);
	return c;
}

static void turn_tool_start(void *ctx, int index, const char *id, const char *name)
{
	struct call_slot *c = turn_slot(ctx, index);
	if (*id && !c->id)
		c->id = xstrdup(id);
	if (*name && !c->name)
		c->name = xstrdup(name);
}

static void turn_tool_args(void *ctx, int index, const char *json, size_t len)
{
	sbuf_add(&turn_slot(ctx, index)->args, json, len);
}

static void turn_done(void *ctx, const struct llm_result *res)
{
	struct turn *t = ctx;
	t->done = true;
	t->res = *res;
	t->stop_reason = xstrdup(res->stop_reason ? res->stop_reason : "");
	t->error_type = xstrdup(res->error_type ? res->error_type : "");
	t->error = xstrdup(res->error ? res->error : "");
}

static void turn_release(struct turn *t)
{
	sbuf_release(&t->text);
	for (size_t i = 0; i < t->ncalls; i++) {
		free(t->calls[i].id);
		free(t->calls[i].name);
		sbuf_release(&t->calls[i].args);
	}
	free(t->calls);
	free(t->stop_reason);
	free(t->error_type);
	free(t->error);
}

/* The conversation (JSON) as the request's messages; pointers borrow
 * from conv. */
static struct llm_message *conv_messages(const cJSON *conv, size_t *n,
					 struct llm_tool_call **calls_out)
{
	size_t nm = (size_t)cJSON_GetArraySize(conv), nc = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, conv)
		nc += (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(m, "tool_calls"));
	struct llm_message *msgs = xcalloc(nm ? nm : 1, sizeof(*msgs));
	struct llm_tool_call *calls = xcalloc(nc ? nc : 1, sizeof(*calls));
	size_t i = 0, k = 0;
	cJSON_ArrayForEach(m, conv) {
		struct llm_message *lm = &msgs[i++];
		lm->role = jstr(m, "role");
		lm->content = jstr(m, "content");
		lm->tool_call_id = jstr(m, "tool_call_id");
		lm->is_error = cJSON_IsTrue(cJSON_GetObjectItem(m, "is_error"));
		const cJSON *tc;
		lm->tool_calls = &calls[k];
		cJSON_ArrayForEach(tc, cJSON_GetObjectItem(m, "tool_calls")) {
			calls[k].id = jstr(tc, "id");
			calls[k].name = jstr(tc, "name");
			calls[k].arguments = jstr(tc, "arguments");
			k++;
			lm->ntool_calls++;
		}
		if (!lm->ntool_calls)
			lm->tool_calls = NULL;
	}
	*n = nm;
	*calls_out = calls;
	return msgs;
}

static void conv_add(cJSON *conv, const char *role, const char *content)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", role);
	cJSON_AddStringToObject(m, "content", content);
	cJSON_AddItemToArray(conv, m);
}

static int conv_steps(const cJSON *conv)
{
	int n = 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, conv)
		if (jstr(m, "role") && !strcmp(jstr(m, "role"), "assistant"))
			n++;
	return n;
}

static bool is_data_tool(const char *name)
{
	return !strcmp(name, "fx_rates") || !strcmp(name, "news_search") ||
	       !strcmp(name, "news_get");
}

/* Runs one tool call for the model; returns the text to send back. */
static char *run_tool(struct agent *a, const char *reg, const char *args_text, bool *is_error)
{
	cJSON *args = args_text && *args_text ? cJSON_Parse(args_text) : cJSON_CreateObject();
	if (!cJSON_IsObject(args)) {
		cJSON_Delete(args);
		*is_error = true;
		return xstrdup("the arguments are not a JSON object");
	}
	cJSON *res = NULL;
	char *err = NULL;
	int r;
	if (is_data_tool(reg) && a->env->data)
		r = data_call(a, reg, args, &res, &err); /* takes args */
	else {
		r = tools_call(a->env->tools, a->name, reg, args, &res, &err);
		cJSON_Delete(args);
	}
	if (r < 0) {
		*is_error = true;
		char *s = xstrdup(err ? err : "the tool failed");
		free(err);
		return s;
	}
	*is_error = false;
	char *txt = cJSON_PrintUnformatted(res);
	cJSON_Delete(res);
	if (!txt)
		return xstrdup("{}");
	size_t len = strlen(txt);
	if (len > TOOL_RESULT_MAX) {
		char *cut = xasprintf("%.*s... [truncated: %zu of %zu bytes shown]",
				      TOOL_RESULT_MAX, txt, (size_t)TOOL_RESULT_MAX, len);
		free(txt);
		return cut;
	}
	return txt;
}

static void offered_release(struct offered *o, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(o[i].reg);
		free(o[i].description);
		free(o[i].schema);
	}
	free(o);
}

static struct offered *offer_tools(struct agent *a, const struct llm_agent_task *t, size_t *n)
{
	struct tools *reg = a->env->tools;
	size_t cap = t->all_tools ? tools_count(reg) : t->ntools, k = 0;
	struct offered *o = xcalloc(cap ? cap : 1, sizeof(*o));
	for (size_t i = 0; i < cap; i++) {
		const char *name = t->all_tools ? tools_name(reg, i) : t->tools[i];
		char *d = NULL, *s = NULL;
		if (!name || tools_describe(reg, name, &d, &s, NULL) < 0)
			continue;
		struct offered *x = &o[k];
		x->reg = xstrdup(name);
		x->description = d;
		x->schema = s;
		llm_tool_name(name, x->sent);
		/* Unique: "a.b" and "a_b" must not meet. */
		for (int dup = 2;; dup++) {
			bool clash = false;
			for (size_t j = 0; j < k; j++)
				clash = clash || !strcmp(o[j].sent, x->sent);
			if (!clash)
				break;
			char base[65], suf[16];
			llm_tool_name(name, base);
			snprintf(suf, sizeof(suf), "_%d", dup);
			size_t room = 64 - strlen(suf);
			snprintf(x->sent, sizeof(x->sent), "%.*s%s", (int)room, base, suf);
		}
		k++;
	}
	*n = k;
	return o;
}

/* One model call on a private http_multi, polled here; env->stop cancels it. */
static void call_model(struct agent *a, const struct llm_config *cfg,
		       const struct llm_request *req, struct turn *turn, char **err)
{
	struct http_multi *m = NULL;
	volatile sig_atomic_t cancel = 0;
	struct llm_config c = *cfg;
	c.cancel = &cancel;
	struct llm_callbacks cb = {
		.on_text = turn_text, .on_tool_use_start = turn_tool_start,
		.on_tool_use_args = turn_tool_args, .on_done = turn_done, .ctx = turn,
	};
	if (http_multi_new(&m, err) < 0)
		return;
	if (llm_call_start(m, &c, req, &cb, err) < 0) {
		http_multi_free(&m);
		return;
	}
	struct pollfd *fds = NULL;
	size_t cap = 0;
	while (http_multi_pending(m)) {
		size_t n = http_multi_fds(m, fds, cap);
		if (n > cap) { /* every socket is waited for, however many */
			cap = n;
			fds = xrealloc(fds, cap * sizeof(*fds));
			n = http_multi_fds(m, fds, cap);
		}
		int to = http_multi_timeout(m);
		if (to < 0 || to > 100)
			to = 100;
		if (poll(fds, n, to) < 0 && errno != EINTR)
			break;
		if (atomic_load(&a->env->stop))
			cancel = 1;
		http_multi_dispatch(m, fds, n);
		if (turn->on_wait)
			turn->on_wait(turn->ctx);
	}
	free(fds);
	http_multi_free(&m);
}

static void log_call(struct agent *a, const struct llm_agent_task *t, const char *model, int step,
		     const struct turn *turn, const struct llm_agent_usage *d, double ms)
{
	struct llm_agent_settings *s = a->env->llm;
	cJSON *f = cJSON_CreateObject();
	if (t->task_id)
		cJSON_AddStringToObject(f, "task_id", t->task_id);
	cJSON_AddStringToObject(f, "provider", s->provider_name);
	cJSON_AddStringToObject(f, "model", model);
	cJSON_AddNumberToObject(f, "step", step);
	cJSON_AddBoolToObject(f, "ok", turn->res.ok);
	cJSON_AddStringToObject(f, "stop_reason", turn->stop_reason ? turn->stop_reason : "");
	cJSON_AddNumberToObject(f, "input_tokens", (double)d->input_tokens);
	cJSON_AddNumberToObject(f, "output_tokens", (double)d->output_tokens);
	cJSON_AddNumberToObject(f, "cost_usd", round(d->cost_usd * 1e6) / 1e6);
	cJSON_AddNumberToObject(f, "tool_calls", (double)turn->ncalls);
	cJSON_AddNumberToObject(f, "attempts", turn->res.attempts);
	cJSON_AddNumberToObject(f, "duration_ms", round(ms));
	if (!turn->res.ok)
		cJSON_AddStringToObject(f, "error", turn->error ? turn->error : "");
	log_write(a->log, LOG_QUERIES, turn->res.ok ? LOG_INFO : LOG_WARN, "llm_call", f,
		  "%s step %d: %ld in, %ld out tokens, %zu tool call%s, stop %s%s%s",
		  model, step, d->input_tokens, d->output_tokens, turn->ncalls,
		  turn->ncalls == 1 ? "" : "s",
		  turn->stop_reason && *turn->stop_reason ? turn->stop_reason : "-",
		  turn->res.ok ? "" : ": ", turn->res.ok ? "" : turn->error);
	cJSON_Delete(f);
}

static void record(struct agent *a, const struct llm_agent_task *t, const struct llm_agent_usage *d,
		   const char *status)
{
	char *err = NULL;
	if (llm_agent_usage_record(a->env->data_dir, a->name, t->task_id, t->label, d, status,
			     &err) < 0) {
		log_write(a->log, LOG_ERRORS, LOG_WARN, "llm_usage_failed", NULL,
			  "cannot record LLM usage: %s", err);
		free(err);
	}
}

static enum llm_agent_outcome finish(struct agent *a, struct llm_agent_task *t, enum llm_agent_outcome o)
{
	static const struct llm_agent_usage zero;
	t->outcome = o;
	record(a, t, &zero, llm_agent_outcome_name(o));
	return o;
}

enum llm_agent_outcome llm_agent_task_run(struct agent *a, struct llm_agent_task *t)
{
	struct llm_agent_settings *s = a->env->llm;
	free(t->text);
	free(t->error);
	free(t->error_type);
	t->text = NULL;
	t->error = NULL;
	t->error_type = NULL;
	t->http_status = 0;
	if (!s) {
		t->error = xstrdup("no model configured");
		t->outcome = LLM_RUN_FAILED;
		return t->outcome;
	}
	const char *model = t->model ? t->model : s->model_execution;
	if (!cJSON_IsArray(t->conversation)) {
		cJSON_Delete(t->conversation);
		t->conversation = cJSON_CreateArray();
	}
	cJSON *conv = t->conversation;
	if (cJSON_GetArraySize(conv) == 0)
		conv_add(conv, "user", t->prompt ? t->prompt : "");
	size_t ntools = 0;
	struct offered *off = offer_tools(a, t, &ntools);
	struct llm_tool *tools = xcalloc(ntools ? ntools : 1, sizeof(*tools));
	for (size_t i = 0; i < ntools; i++) {
		tools[i].name = off[i].sent;
		tools[i].description = off[i].description;
		tools[i].input_schema = off[i].schema;
	}
	struct llm_config cfg = {
		.provider = s->provider, .base_url = s->base_url, .api_key = s->api_key,
		.max_attempts = t->max_attempts,
	};
	double pin, pout;
	llm_agent_price(s, model, &pin, &pout);
	enum llm_agent_outcome outcome = LLM_RUN_FAILED;
	for (;;) {
		t->steps = conv_steps(conv);
		const cJSON *last = cJSON_GetArrayItem(conv, cJSON_GetArraySize(conv) - 1);
		if (jstr(last, "role") && !strcmp(jstr(last, "role"), "assistant") &&
		    !cJSON_GetArraySize(cJSON_GetObjectItem(last, "tool_calls"))) {
			t->text = xstrdup(jstr(last, "content") ? jstr(last, "content") : "");
			outcome = LLM_RUN_DONE;
			break;
		}
		if (t->steps >= s->max_steps) {
			t->error = xasprintf("the model was still calling tools after %d steps "
					     "(MADF_LLM_MAX_STEPS)", s->max_steps);
			/* The text it wrote so far, if any. */
			struct sbuf b;
			sbuf_init(&b);
			sbuf_addstr(&b, "");
			const cJSON *m;
			cJSON_ArrayForEach(m, conv)
				if (!strcmp(jstr(m, "role") ? jstr(m, "role") : "", "assistant") &&
				    jstr(m, "content") && *jstr(m, "content"))
					sbuf_addf(&b, "%s%s", b.len ? "\n" : "", jstr(m, "content"));
			t->text = sbuf_detach(&b);
			log_write(a->log, LOG_ERRORS, LOG_WARN, "llm_step_limit", NULL, "%s: %s",
				  t->task_id ? t->task_id : "task", t->error);
			outcome = LLM_RUN_STEP_LIMIT;
			break;
		}
		struct llm_agent_usage next = t->used;
		long est = t->estimate_input ? llm_agent_input_estimate(t->system, conv) : 0;
		next.input_tokens += est;
		next.cost_usd += (double)est * pin / 1e6;
		if (llm_agent_budget_reached(s, &next, t->extra_tokens, t->extra_cost)) {
			if (est)
				t->error = xasprintf("budget reached: %ld tokens, $%.4f used, and the "
						     "next call's input is about %ld tokens",
						     t->used.input_tokens + t->used.output_tokens,
						     t->used.cost_usd, est);
			else
				t->error = xasprintf("budget reached: %ld tokens, $%.4f used",
						     t->used.input_tokens + t->used.output_tokens,
						     t->used.cost_usd);
			log_write(a->log, LOG_DECISIONS, LOG_WARN, "llm_agent_budget_reached", NULL,
				  "%s paused before step %d for the operator's approval: %s",
				  t->task_id ? t->task_id : "task", t->steps + 1, t->error);
			outcome = LLM_RUN_PAUSED;
			break;
		}
		if (atomic_load(&a->env->stop)) {
			t->error = xstrdup("stopped");
			break;
		}
		if (t->cancelled && t->cancelled(t->cancel_ctx)) {
			t->error = xasprintf("cancelled before step %d", t->steps + 1);
			log_write(a->log, LOG_DECISIONS, LOG_INFO, "llm_agent_cancelled", NULL,
				  "%s cancelled before step %d: no more model calls",
				  t->task_id ? t->task_id : "task", t->steps + 1);
			outcome = LLM_RUN_CANCELLED;
			break;
		}
		size_t nm;
		struct llm_tool_call *calls;
		struct llm_message *msgs = conv_messages(conv, &nm, &calls);
		struct llm_request req = {
			.model = model, .system = t->system, .messages = msgs, .nmessages = nm,
			.max_tokens = t->max_tokens > 0 ? t->max_tokens : s->max_tokens,
			.temperature = -1, .tools = tools,
			.ntools = ntools,
		};
		struct turn turn = { .on_text = t->on_text, .on_wait = t->on_wait, .ctx = t->ctx };
		sbuf_init(&turn.text);
		sbuf_addstr(&turn.text, "");
		char *err = NULL;
		if (t->on_call)
			t->on_call(t->ctx, t->steps + 1);
		int64_t t0 = util_mono_ns();
		call_model(a, &cfg, &req, &turn, &err);
		free(msgs);
		free(calls);
		struct llm_agent_usage d = { 0 };
		if (turn.done) {
			d.calls = 1;
			d.input_tokens = turn.res.input_tokens;
			d.output_tokens = turn.res.output_tokens;
			d.cost_usd = (double)d.input_tokens * pin / 1e6 +
				     (double)d.output_tokens * pout / 1e6;
			t->used.calls += d.calls;
			t->used.input_tokens += d.input_tokens;
			t->used.output_tokens += d.output_tokens;
			t->used.cost_usd += d.cost_usd;
			log_call(a, t, model, t->steps + 1, &turn, &d, (double)(util_mono_ns() - t0) / 1e6);
			record(a, t, &d, NULL);
		}
		if (turn.done)
			t->http_status = turn.res.http_status;
		if (!turn.done || !turn.res.ok) {
			t->error = xstrdup(!turn.done ? (err ? err : "the call did not start") :
					   turn.error);
			t->error_type = xstrdup(turn.done && turn.error_type ? turn.error_type : "");
			free(err);
			if (!turn.done)
				log_write(a->log, LOG_ERRORS, LOG_WARN, "llm_call_failed", NULL,
					  "%s: %s", model, t->error);
			turn_release(&turn);
			break;
		}
		free(err);
		cJSON *am = cJSON_CreateObject();
		cJSON_AddStringToObject(am, "role", "assistant");
		cJSON_AddStringToObject(am, "content", turn.text.data);
		cJSON *tcs = cJSON_AddArrayToObject(am, "tool_calls");
		for (size_t i = 0; i < turn.ncalls; i++) {
			struct call_slot *c = &turn.calls[i];
			cJSON *tc = cJSON_CreateObject();
			char id[64];
			snprintf(id, sizeof(id), "call_%d_%zu", t->steps + 1, i);
			cJSON_AddStringToObject(tc, "id", c->id ? c->id : id);
			cJSON_AddStringToObject(tc, "name", c->name ? c->name : "");
			/* Arguments that are not an object would break the next
			 * request: sent back as {} with an error result. */
			cJSON *aj = c->args.len ? cJSON_Parse(c->args.data) : cJSON_CreateObject();
			char *at = cJSON_IsObject(aj) ? cJSON_PrintUnformatted(aj) : xstrdup("{}");
			cJSON_AddStringToObject(tc, "arguments", at);
			cJSON_AddBoolToObject(tc, "bad_arguments", !cJSON_IsObject(aj));
			cJSON_Delete(aj);
			free(at);
			cJSON_AddItemToArray(tcs, tc);
		}
		cJSON_AddItemToArray(conv, am);
		cJSON *tc;
		cJSON_ArrayForEach(tc, tcs) {
			const char *sent = jstr(tc, "name");
			const char *regname = NULL;
			for (size_t i = 0; i < ntools; i++)
				if (!strcmp(off[i].sent, sent))
					regname = off[i].reg;
			bool is_err = true;
			char *out;
			if (!regname)
				out = xasprintf("unknown tool %s", sent);
			else if (cJSON_IsTrue(cJSON_GetObjectItem(tc, "bad_arguments")))
				out = xstrdup("the arguments are not a JSON object");
			else
				out = run_tool(a, regname, jstr(tc, "arguments"), &is_err);
			cJSON *rm = cJSON_CreateObject();
			cJSON_AddStringToObject(rm, "role", "tool");
			cJSON_AddStringToObject(rm, "tool_call_id", jstr(tc, "id"));
			cJSON_AddStringToObject(rm, "content", out);
			cJSON_AddBoolToObject(rm, "is_error", is_err);
			cJSON_AddItemToArray(conv, rm);
			cJSON *lf = cJSON_CreateObject();
			cJSON_AddStringToObject(lf, "tool", regname ? regname : sent);
			cJSON_AddBoolToObject(lf, "ok", !is_err);
			if (t->task_id)
				cJSON_AddStringToObject(lf, "task_id", t->task_id);
			log_write(a->log, LOG_QUERIES, LOG_DEBUG, "llm_tool_call", lf,
				  "the model called %s%s", regname ? regname : sent,
				  is_err ? " (error)" : "");
			cJSON_Delete(lf);
			free(out);
		}
		/* A tool call without a name (a broken stream) is answered too;
		 * the turn without any tool call ends the loop above. */
		turn_release(&turn);
	}
	t->steps = conv_steps(conv);
	free(tools);
	offered_release(off, ntools);
	return finish(a, t, outcome);
}

long llm_agent_input_estimate(const char *system, const cJSON *conversation)
{
	size_t bytes = system ? strlen(system) : 0;
	const cJSON *m;
	cJSON_ArrayForEach(m, conversation) {
		const char *c = jstr(m, "content");
		bytes += c ? strlen(c) : 0;
		const cJSON *tc;
		cJSON_ArrayForEach(tc, cJSON_GetObjectItem(m, "tool_calls")) {
			const char *args = jstr(tc, "arguments"), *name = jstr(tc, "name");
			bytes += (args ? strlen(args) : 0) + (name ? strlen(name) : 0);
		}
	}
	return (long)((bytes + 3) / 4);
}

void llm_agent_task_release(struct llm_agent_task *t)
{
	free(t->text);
	free(t->error);
	free(t->error_type);
	cJSON_Delete(t->conversation);
	t->text = t->error = t->error_type = NULL;
	t->conversation = NULL;
}
