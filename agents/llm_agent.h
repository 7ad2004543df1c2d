/* LLM mode for the agents: the configuration (which provider, which
 * models, budgets, prices), a blocking tool-calling loop for one task on
 * an agent's thread (its own http_multi, so the console's loop is never
 * blocked), and the accounting of tokens and cost per task and per agent
 * in <data_dir>/llm/usage.json.
 *
 * Configuration, from the environment or .env:
 *   MADF_LLM                 off (deterministic), anthropic or openai; unset:
 *                            anthropic when ANTHROPIC_API_KEY is set, else
 *                            openai when OPENAI_API_KEY is set, else off
 *   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, CLAUDE_MODEL_ORCHESTRATOR,
 *   CLAUDE_MODEL_EXECUTION   (either model stands in for the other)
 *   OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL_ORCHESTRATOR,
 *   OPENAI_MODEL_EXECUTION, OPENAI_MODEL (for both when those are unset)
 *   MADF_LLM_MAX_STEPS       model calls per task, default 8
 *   MADF_LLM_MAX_TOKENS      output tokens per call, default 1024
 *   MADF_TASK_TOKEN_BUDGET   input + output tokens per task (0: no cap)
 *   MADF_TASK_COST_BUDGET    USD per task (0: no cap)
 *   MADF_LLM_PRICE_IN, MADF_LLM_PRICE_OUT  USD per million tokens, over
 *                            the built-in price table
 *   MADF_LLM_CONTINUE_AT_LIMIT  1: a task at its cap skips the rest of its
 *                            LLM part and carries on (unattended runs)
 *                            instead of waiting for the operator */
#ifndef MADF_LLM_AGENT_H
#define MADF_LLM_AGENT_H

#include <stdbool.h>

#include <cJSON.h>

#include "core/llm.h"

struct agent;
struct agent_env;

/* product_manager -> researcher or validator: the operator approved more budget for
 * the paused assignment "approve_id" ("extra_tokens", "extra_cost_usd"). */
#define LLM_TASK_APPROVE "budget_approval"
/* product_manager -> researcher or validator: the operator dropped the LLM
 * part of the paused assignment "approve_id"; it finishes with the
 * deterministic result and a warning. */
#define LLM_TASK_SKIP "llm_skip"

struct llm_agent_settings {
	enum llm_provider provider;
	char *provider_name;       /* "anthropic" or "openai" */
	char *base_url;
	char *api_key;             /* never logged, sent in a header only */
	char *model_orchestrator;  /* the product_manager's narrative */
	char *model_execution;     /* researchers and the validator */
	int max_steps;
	long max_tokens;
	long token_budget;         /* per task; 0: none */
	double cost_budget;        /* per task, USD; 0: none */
	double price_in, price_out; /* override, USD per million; < 0: table */
	bool continue_at_limit;    /* at the cap: skip, do not pause */
};

/* Reads the configuration. Returns 0 with *out NULL (deterministic mode)
 * or a new settings; -1 with *err when it is invalid (MADF_LLM names a
 * provider without its key, a bad number). */
int llm_agent_settings_from_env(struct llm_agent_settings **out, char **err);
void llm_agent_settings_free(struct llm_agent_settings **s);
/* "LLM mode: anthropic, orchestrator M, execution M" or "deterministic
 * mode (no model configured)"; caller frees. No key. */
char *llm_agent_settings_describe(const struct llm_agent_settings *s);
/* {"mode": "llm"|"deterministic", "provider", "models": {"orchestrator",
 * "execution"}, "max_steps", "token_budget", "cost_budget_usd"}; no key. */
cJSON *llm_agent_settings_manifest(const struct llm_agent_settings *s);

/* USD per million input and output tokens of model: the override when
 * set, else the table (longest known prefix). Returns false (prices 0)
 * for an unknown model. */
bool llm_agent_price(const struct llm_agent_settings *s, const char *model, double *in, double *out);

struct llm_agent_usage {
	long calls, input_tokens, output_tokens;
	double cost_usd;
};
/* {"calls","input_tokens","output_tokens","cost_usd"} (new object). */
cJSON *llm_agent_usage_json(const struct llm_agent_usage *u);
/* Reads such an object (missing fields: 0). */
void llm_agent_usage_from_json(const cJSON *j, struct llm_agent_usage *u);

/* Adds delta to agent's and task_id's totals in <data_dir>/llm/usage.json
 * ({"updated_at", "agents": {NAME: usage}, "tasks": {ID: usage + "agent",
 * "status"}}), under an flock on usage.json.lock, replaced atomically.
 * status may be NULL (unchanged); label (e.g. the product_manager's task id
 * "USDJPY-market", may be NULL) is kept as the task's "label". A corrupt
 * file is an error. */
int llm_agent_usage_record(const char *data_dir, const char *agent, const char *task_id,
		     const char *label, const struct llm_agent_usage *delta, const char *status,
		     char **err);

enum llm_agent_outcome {
	LLM_RUN_DONE,        /* the model ended its turn: text is its answer */
	LLM_RUN_PAUSED,      /* the task's budget is spent: approval needed */
	LLM_RUN_STEP_LIMIT,  /* still calling tools after max_steps calls */
	LLM_RUN_FAILED,      /* error says why */
	LLM_RUN_CANCELLED,   /* cancelled() said so before a call */
};

/* One task's loop. The caller keeps used, extra_* and conversation in
 * the task's state, so a paused task resumes where it stopped. */
struct llm_agent_task {
	const char *task_id;
	const char *label;             /* usage.json's label; may be NULL */
	const char *model;             /* NULL: the execution model */
	const char *system, *prompt;
	const char *const *tools;      /* registry names the model may call */
	size_t ntools;
	bool all_tools;                /* every registered tool instead */
	bool estimate_input;           /* count each call's estimated input
					* against the budget before making it
					* (a task of one call can be capped) */
	struct llm_agent_usage used;         /* in/out: the task's usage so far */
	long extra_tokens;             /* approved over the budget */
	double extra_cost;
	cJSON *conversation;           /* in/out (owned); NULL: a new one */
	long max_tokens;               /* output tokens per call; 0: the
					* settings' (MADF_LLM_MAX_TOKENS) */
	int max_attempts;              /* HTTP attempts per model call (the
					* client retries 408, 409, 429, 5xx and
					* network errors); 0: the client's 4 */
	void (*on_text)(void *ctx, const char *text, size_t len);
	/* Before each model call (step: its number, from 1), and about ten
	 * times a second while a call waits for the model's answer; either
	 * may be NULL. A slow model's task says it works on (the validator's
	 * progress moves its deadline on). */
	void (*on_call)(void *ctx, int step);
	void (*on_wait)(void *ctx);
	void *ctx;
	/* May be NULL; asked before each model call: true stops the task
	 * there (CANCELLED, error saying why), no more calls made. */
	bool (*cancelled)(void *cancel_ctx);
	void *cancel_ctx;
	/* out */
	char *text;                    /* the final answer (or what came) */
	int steps;                     /* model calls in the conversation */
	enum llm_agent_outcome outcome;
	char *error;
	char *error_type;              /* of a failed call ("rate_limit_error",
					* "timeout", ...), else NULL */
	long http_status;              /* of the last call's last attempt */
};

/* Runs the loop on a's thread: stops before a call when the task's
 * budget is reached (PAUSED), at end_turn (DONE), after max_steps calls
 * (STEP_LIMIT), when t->cancelled says so (CANCELLED), or on an error or
 * env->stop (FAILED). Tool calls go
 * through the tool registry on a's behalf. Every call is logged in a's
 * log (queries) and recorded in usage.json. Returns t->outcome. */
enum llm_agent_outcome llm_agent_task_run(struct agent *a, struct llm_agent_task *t);
void llm_agent_task_release(struct llm_agent_task *t);
/* Whether a task that used u (with the approved extras) is at its cap. */
bool llm_agent_budget_reached(const struct llm_agent_settings *s, const struct llm_agent_usage *u,
			long extra_tokens, double extra_cost);
const char *llm_agent_outcome_name(enum llm_agent_outcome o);
/* About how many input tokens a request with this system prompt and
 * conversation (llm_task's) takes: one per four bytes of text, rounded up. */
long llm_agent_input_estimate(const char *system, const cJSON *conversation);

#endif
