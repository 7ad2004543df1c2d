/* The code review crew hosted in this process: the four workers on
 * threads of an environment of their own, the review tools registered,
 * and the master (given, or opened here) driving them. `madf review`,
 * `madf mcp`'s review tool and the review master's own runs (a trigger
 * from the console) all start a review here. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_agent.h"
#include "agents/review.h"
#include "agents/runtime.h"
#include "core/tools.h"
#include "core/util.h"
#include "core/banned.h"

/* The workers as the master sees them (review_progress's alive and
 * reassign), on the thread that runs the master. */
struct crew {
	struct agent_env *env;
	struct agent **workers;
};

static bool crew_alive(void *ctx, enum review_part part)
{
	struct crew *c = ctx;
	struct agent *w = c->workers[part];
	if (!w || !w->thread)
		return false;
	if (pthread_tryjoin_np(w->thread, NULL) == 0) {
		w->thread = 0; /* joined: its agent_run returned (an injected crash) */
		return false;
	}
	return true;
}

static int crew_reassign(void *ctx, enum review_part part)
{
	struct crew *c = ctx;
	if (crew_alive(ctx, part))
		return 0;
	agent_free(&c->workers[part]);
	char *err = NULL;
	const struct agent_role *role = review_role_find(review_part_agent(part));
	if (agent_open(role, c->env, &c->workers[part], &err) < 0) {
		free(err);
		return -1;
	}
	/* a replacement, as a new process would be: without the first one's
	 * injected fault */
	c->workers[part]->fault = FAULT_NONE;
	if (agent_start_thread(c->workers[part], &err) < 0) {
		free(err);
		agent_free(&c->workers[part]);
		return -1;
	}
	return 1;
}

int review_crew_run(struct agent *given, const struct review_crew_opts *o, const cJSON *request,
		    const struct review_progress *progress, cJSON **agg, cJSON **error)
{
	*agg = *error = NULL;
	struct agent_env env;
	agent_env_init(&env, o->data_dir, o->log_dir);
	env.bcfg.durable = o->durable;
	for (size_t i = 0; i < o->nfaults && env.nfaults < ARRAY_SIZE(env.faults); i++)
		env.faults[env.nfaults++] = xstrdup(o->faults[i]);
	char *err = NULL;
	struct agent *workers[REVIEW_NPARTS] = { NULL }, *master = given;
	int st = 500;
	/* LLM mode when a model is configured, as for madf run weekly */
	if (llm_agent_settings_from_env(&env.llm, &err) < 0)
		goto out;
	if (progress && progress->fn) {
		char *mode = llm_agent_settings_describe(env.llm);
		progress->fn(progress->ctx, mode);
		free(mode);
	}
	if (tools_open(env.data_dir, env.log_dir, NULL, &env.tools, &err) < 0 ||
	    review_tools_register(env.tools, &err) < 0 ||
	    (o->write_registry && tools_write_registry(env.tools, &err) < 0))
		goto out;
	static const char *const crit[] = { "review.cppcheck", "review.flawfinder", "review.secrets",
					    "review.gcc_analyzer", "review.clang_analyzer", "review.flow",
					    "review.ctags" };
	static const char *const debt[] = { "review.markers", "review.pmccabe", "review.cloc", "review.ctags" };
	static const char *const impr[] = { "review.cppcheck", "review.shellcheck" };
	static const char *const docs[] = { "review.cloc", "review.ctags", "review.dot" };
	tools_set_essential(env.tools, "review_critical", crit, ARRAY_SIZE(crit), NULL);
	tools_set_essential(env.tools, "review_debt", debt, ARRAY_SIZE(debt), NULL);
	tools_set_essential(env.tools, "review_improvement", impr, ARRAY_SIZE(impr), NULL);
	tools_set_essential(env.tools, "review_documentation", docs, ARRAY_SIZE(docs), NULL);
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		const struct agent_role *role = review_role_find(review_part_agent((enum review_part)i));
		if (agent_open(role, &env, &workers[i], &err) < 0 ||
		    agent_start_thread(workers[i], &err) < 0)
			goto out;
	}
	if (!master && agent_open(&role_review_master, &env, &master, &err) < 0)
		goto out;
	struct crew crew = { &env, workers };
	struct review_progress hooks = { 0 };
	if (progress)
		hooks = *progress;
	hooks.alive = crew_alive;
	hooks.reassign = crew_reassign;
	hooks.crew = &crew;
	st = review_master_run(master, request, &hooks, agg, error);
out:
	if (err) {
		cJSON_Delete(*error);
		*error = cJSON_CreateObject();
		cJSON_AddNumberToObject(*error, "status", 500);
		char *clean = util_sanitize(err, strlen(err), false);
		cJSON_AddStringToObject(*error, "error", clean);
		free(clean);
		free(err);
	}
	atomic_store(&env.stop, 1);
	for (int i = 0; i < REVIEW_NPARTS; i++)
		if (workers[i]) {
			if (workers[i]->thread)
				agent_join(workers[i]);
			agent_free(&workers[i]);
		}
	if (master != given)
		agent_free(&master);
	if (env.tools) {
		tools_save_usage(env.tools, NULL);
		review_tools_release(env.tools);
	}
	tools_free(&env.tools);
	agent_env_release(&env);
	return st;
}
