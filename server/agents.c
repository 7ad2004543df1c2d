/* The conversation agents of madf serve: definitions in
 * <data_dir>/serve-agents.json, which the operator edits (written with the
 * seed's three and madf's two research personas on first use). */
#include "server/serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

#define AGENTS_FILE_MAX ((size_t)1 << 20)

static const struct {
	const char *name, *description, *role, *system;
	int max_steps;
	const char *tools[3];
} builtin[] = {
	{ "data-steward", "Finds, cleans and explains the data the goal needs", "execution",
	  "You are data-steward, a data steward in a multi-agent team. You find the records "
	  "the goal needs, say what they contain, how complete and how fresh they are, and "
	  "what filters you would apply. Be concrete and brief; build on what the other "
	  "agents said.", 4, { NULL } },
	{ "prospect-finder", "Scores and ranks prospects against the goal", "execution",
	  "You are prospect-finder, a sales analyst in a multi-agent team. From what the "
	  "team has found, you identify, score and rank prospects and say why each one "
	  "qualifies. Be concrete and brief; build on what the other agents said.", 4, { NULL } },
	{ "contract-reader", "Reads contracts and terms for obligations and risks", "execution",
	  "You are contract-reader, a contracts analyst in a multi-agent team. You read the "
	  "contracts and terms the goal touches and report obligations, renewal dates and "
	  "risks. Be concrete and brief; build on what the other agents said.", 4, { NULL } },
	/* madf's own research personas, on the registry's data tools. */
	{ "fx-researcher", "madf's FX researcher: exchange-rate moves from fx_rates", "execution",
	  "You are fx-researcher, the FX market researcher of a multi-agent team. Use fx_rates "
	  "(pair like USD/JPY, start and end dates YYYY-MM-DD) to get the closes the goal "
	  "needs, and report the move in figures: first and last close, change in percent. "
	  "Never invent a figure the tool did not return.", 4, { "fx_rates" } },
	{ "news-researcher", "madf's news researcher: the stories behind the moves", "execution",
	  "You are news-researcher, the news researcher of a multi-agent team. Use news_search "
	  "(start and end dates, topics) and news_get (id) to find the stories that explain "
	  "what the goal asks about, and cite each by its id and title.", 4,
	  { "news_search", "news_get" } },
};

cJSON *serve_agents_builtin_json(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *a = cJSON_AddArrayToObject(o, "agents");
	for (size_t i = 0; i < ARRAY_SIZE(builtin); i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", builtin[i].name);
		cJSON_AddStringToObject(x, "description", builtin[i].description);
		cJSON_AddStringToObject(x, "role", builtin[i].role);
		cJSON_AddStringToObject(x, "system", builtin[i].system);
		cJSON_AddNumberToObject(x, "maxSteps", builtin[i].max_steps);
		cJSON *tl = cJSON_AddArrayToObject(x, "tools");
		for (size_t k = 0; k < ARRAY_SIZE(builtin[i].tools) && builtin[i].tools[k]; k++)
			cJSON_AddItemToArray(tl, cJSON_CreateString(builtin[i].tools[k]));
		cJSON_AddStringToObject(x, "onError", "skip");
		cJSON_AddItemToArray(a, x);
	}
	return o;
}

static void agent_release(struct serve_agent *x)
{
	free(x->name);
	free(x->description);
	free(x->role);
	free(x->system);
	for (size_t k = 0; k < x->ntools; k++)
		free(x->tools[k]);
	free(x->tools);
	free(x->on_error);
}

void serve_agents_free(struct serve_agents *a)
{
	for (size_t i = 0; i < a->n; i++)
		agent_release(&a->v[i]);
	if (a->initiator) {
		agent_release(a->initiator);
		free(a->initiator);
	}
	free(a->v);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

const struct serve_agent *serve_agents_find(const struct serve_agents *a, const char *name)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].name, name))
			return &a->v[i];
	return NULL;
}

/* "tools" and "maxSteps" of definition it (named name) into *steps and
 * the new array *tools (*ntools). */
static int tools_steps(const cJSON *it, const char *path, const char *name, int *steps,
		       char ***tools, size_t *ntools, char **err)
{
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(it, "maxSteps");
	*steps = SERVE_STEPS_DEFAULT;
	if (ms) {
		if (!cJSON_IsNumber(ms) || ms->valuedouble < 1 || ms->valuedouble > SERVE_STEPS_CAP ||
		    ms->valuedouble != (int)ms->valuedouble)
			return err_set(err, "%s: %s: \"maxSteps\" must be an integer from 1 to %d",
				       path, name, SERVE_STEPS_CAP);
		*steps = (int)ms->valuedouble;
	}
	const cJSON *tl = cJSON_GetObjectItemCaseSensitive(it, "tools"), *tn;
	if (tl && !cJSON_IsArray(tl))
		return err_set(err, "%s: %s: \"tools\" must be an array of tool names", path, name);
	cJSON_ArrayForEach(tn, tl)
		if (!cJSON_IsString(tn) || !*tn->valuestring)
			return err_set(err, "%s: %s: \"tools\" must be an array of tool names", path,
				       name);
	*tools = NULL;
	*ntools = 0;
	cJSON_ArrayForEach(tn, tl) {
		*tools = xrealloc(*tools, (*ntools + 1) * sizeof(**tools));
		(*tools)[(*ntools)++] = xstrdup(tn->valuestring);
	}
	return 0;
}

/* The file's optional "initiator". */
static int initiator_from_json(const cJSON *j, const char *path, struct serve_agents *out,
			       char **err)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, "initiator");
	if (!it)
		return 0;
	if (!cJSON_IsObject(it))
		return err_set(err, "%s: \"initiator\" must be an object ({\"system\", \"tools\", "
			       "\"maxSteps\"})", path);
	const cJSON *sys = cJSON_GetObjectItemCaseSensitive(it, "system");
	if (sys && !cJSON_IsString(sys))
		return err_set(err, "%s: initiator: \"system\" must be a string", path);
	struct serve_agent *a = xcalloc(1, sizeof(*a));
	if (tools_steps(it, path, "initiator", &a->max_steps, &a->tools, &a->ntools, err) < 0) {
		free(a);
		return -1;
	}
	a->name = xstrdup("initiator");
	a->description = xstrdup("");
	a->role = xstrdup("orchestrator");
	a->system = xstrdup(sys ? sys->valuestring : "");
	a->on_error = xstrdup("abort");
	out->initiator = a;
	return 0;
}

static int agents_from_json(const cJSON *j, const char *path, struct serve_agents *out,
			    char **err)
{
	if (initiator_from_json(j, path, out, err) < 0)
		return -1;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "agents");
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1)
		return err_set(err, "%s: \"agents\" must be a non-empty array", path);
	const cJSON *it;
	int k = 0;
	cJSON_ArrayForEach(it, arr) {
		k++;
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
		const char *desc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "description"));
		const char *role = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "role"));
		const char *sys = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "system"));
		const cJSON *steps = cJSON_GetObjectItemCaseSensitive(it, "maxSteps");
		if (!name || !util_valid_agent_name(name))
			return err_set(err, "%s: agent %d: \"name\" must be [a-z0-9][a-z0-9_-]{0,63}",
				       path, k);
		if (serve_agents_find(out, name))
			return err_set(err, "%s: agent \"%s\" is defined twice", path, name);
		if (!sys || !*sys)
			return err_set(err, "%s: agent \"%s\": \"system\" (its prompt) is required",
				       path, name);
		if (role && strcmp(role, "orchestrator") && strcmp(role, "execution"))
			return err_set(err, "%s: agent \"%s\": \"role\" must be orchestrator or "
				       "execution", path, name);
		int ms = SERVE_STEPS_DEFAULT;
		if (steps) {
			if (!cJSON_IsNumber(steps) || steps->valuedouble < 1 ||
			    steps->valuedouble > SERVE_STEPS_CAP ||
			    steps->valuedouble != (int)steps->valuedouble)
				return err_set(err, "%s: agent \"%s\": \"maxSteps\" must be an integer "
					       "from 1 to %d", path, name, SERVE_STEPS_CAP);
			ms = (int)steps->valuedouble;
		}
		const char *onerr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "onError"));
		if (cJSON_GetObjectItemCaseSensitive(it, "onError") &&
		    (!onerr || (strcmp(onerr, "skip") && strcmp(onerr, "retry") &&
				strcmp(onerr, "abort"))))
			return err_set(err, "%s: agent \"%s\": \"onError\" must be skip, retry or "
				       "abort", path, name);
		const cJSON *tools = cJSON_GetObjectItemCaseSensitive(it, "tools");
		if (tools && !cJSON_IsArray(tools))
			return err_set(err, "%s: agent \"%s\": \"tools\" must be an array of tool "
				       "names", path, name);
		const cJSON *tn;
		cJSON_ArrayForEach(tn, tools)
			if (!cJSON_IsString(tn) || !*tn->valuestring)
				return err_set(err, "%s: agent \"%s\": \"tools\" must be an array of "
					       "tool names", path, name);
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		struct serve_agent *a = &out->v[out->n++];
		memset(a, 0, sizeof(*a));
		cJSON_ArrayForEach(tn, tools) {
			a->tools = xrealloc(a->tools, (a->ntools + 1) * sizeof(*a->tools));
			a->tools[a->ntools++] = xstrdup(tn->valuestring);
		}
		a->on_error = xstrdup(onerr ? onerr : "skip");
		a->name = xstrdup(name);
		a->description = xstrdup(desc ? desc : "");
		a->role = xstrdup(role ? role : "execution");
		a->system = xstrdup(sys);
		a->max_steps = ms;
	}
	return 0;
}

int serve_agents_load(const char *data_dir, struct serve_agents *out, char **err)
{
	memset(out, 0, sizeof(*out));
	char *path = xasprintf("%s/serve-agents.json", data_dir);
	struct stat st;
	if (stat(path, &st) < 0 && errno == ENOENT) {
		/* First use: the built-in agents, in the file the operator edits. */
		cJSON *j = serve_agents_builtin_json();
		char *s = cJSON_Print(j);
		cJSON_Delete(j);
		int w = util_mkdirs(data_dir, err) < 0 ? -1 :
			util_write_file_atomic(path, s, strlen(s), true, err);
		free(s);
		if (w < 0) {
			free(path);
			return -1;
		}
	}
	char *buf = NULL;
	size_t len = 0;
	if (util_read_file(path, AGENTS_FILE_MAX, &buf, &len, err) < 0) {
		free(path);
		return -1;
	}
	char *perr = NULL;
	cJSON *j = json_parse_strict(buf, len, &perr);
	free(buf);
	int r;
	if (!j) {
		r = err_set(err, "%s: %s", path, perr ? perr : "not JSON");
		free(perr);
	} else {
		r = agents_from_json(j, path, out, err);
		cJSON_Delete(j);
	}
	if (r < 0) {
		free(path);
		serve_agents_free(out);
		return -1;
	}
	out->path = path;
	return 0;
}
