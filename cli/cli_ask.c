/* madf ask: one prompt to the configured model, its answer streamed to
 * stdout; the smallest way to check an LLM configuration. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/http.h"
#include "core/llm.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

static volatile sig_atomic_t ask_cancel;

static void ask_on_signal(int sig)
{
	(void)sig;
	ask_cancel = 1;
}

struct ask_state {
	bool done;
	bool ok;
	bool wrote;
	bool ends_nl;
	bool write_failed;
	int verbose;
	char *error;
};

static void ask_on_text(void *ctx, const char *text, size_t len)
{
	struct ask_state *st = ctx;
	if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
		st->write_failed = true;
		ask_cancel = 1;
	}
	st->wrote = true;
	st->ends_nl = len && text[len - 1] == '\n';
}

static void ask_on_done(void *ctx, const struct llm_result *res)
{
	struct ask_state *st = ctx;
	st->done = true;
	st->ok = res->ok;
	if (!res->ok)
		st->error = xstrdup(res->error);
	if (st->verbose)
		cli_fail(0, "ask", "%d attempt%s, HTTP %ld, stop %s, %ld input tokens, %ld output tokens",
			 res->attempts, res->attempts == 1 ? "" : "s", res->http_status,
			 *res->stop_reason ? res->stop_reason : "-", res->input_tokens,
			 res->output_tokens);
}

static const char *ask_env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static int cmd_ask(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "ask", &cmd_ask_entry, 0 };
	const char *provider = "anthropic", *model = NULL, *prompt = NULL, *name, *val;
	long max_tokens = 1024;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (prompt)
				return cli_fail(EXIT_USAGE, "ask", "one PROMPT only (quote it)");
			prompt = val;
		} else if (!strcmp(name, "--provider")) {
			provider = val;
		} else if (!strcmp(name, "--model")) {
			model = val;
		} else if (cli_long("ask", name, val, 1, 1000000, &max_tokens) < 0) {
			return EXIT_USAGE;
		}
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!prompt || !*prompt)
		return cli_fail(EXIT_USAGE, "ask", "PROMPT is required");
	struct llm_config cfg = { 0 };
	const char *key_var, *url_var;
	if (!strcmp(provider, "anthropic")) {
		cfg.provider = LLM_ANTHROPIC;
		key_var = "ANTHROPIC_API_KEY";
		url_var = "ANTHROPIC_BASE_URL";
		cfg.base_url = ask_env(url_var) ? ask_env(url_var) : "https://api.anthropic.com";
		if (!model)
			model = ask_env("CLAUDE_MODEL_EXECUTION");
		if (!model)
			model = ask_env("CLAUDE_MODEL_ORCHESTRATOR");
		if (!model)
			return cli_fail(EXIT_FAIL, "ask", "no model: pass --model or set "
				       "CLAUDE_MODEL_EXECUTION (or CLAUDE_MODEL_ORCHESTRATOR)");
	} else if (!strcmp(provider, "openai")) {
		cfg.provider = LLM_OPENAI;
		key_var = "OPENAI_API_KEY";
		url_var = "OPENAI_BASE_URL";
		cfg.base_url = ask_env(url_var) ? ask_env(url_var) : "https://api.openai.com/v1";
		if (!model)
			model = ask_env("OPENAI_MODEL");
		if (!model)
			return cli_fail(EXIT_FAIL, "ask", "no model: pass --model or set OPENAI_MODEL");
	} else {
		return cli_fail(EXIT_USAGE, "ask", "unknown provider \"%s\": anthropic or openai",
				provider);
	}
	cfg.api_key = ask_env(key_var);
	if (!cfg.api_key)
		return cli_fail(EXIT_FAIL, "ask", "%s is not set (in the environment or .env)",
				key_var);
	cfg.cancel = &ask_cancel;

	struct sigaction sa = { 0 }, old_int, old_term;
	sa.sa_handler = ask_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	struct llm_message msg = { .role = "user", .content = prompt };
	struct llm_request req = {
		.model = model,
		.messages = &msg,
		.nmessages = 1,
		.max_tokens = max_tokens,
		.temperature = -1,
	};
	struct ask_state st = { .verbose = cli->verbose };
	struct llm_callbacks cb = { .on_text = ask_on_text, .on_done = ask_on_done, .ctx = &st };
	struct http_multi *m = NULL;
	char *err = NULL;
	int rc = EXIT_OK;
	if (http_multi_new(&m, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "ask", "%s", err);
	} else if (llm_call_start(m, &cfg, &req, &cb, &err) < 0) {
		bool url = strstr(err, "base URL") != NULL;
		rc = cli_fail(EXIT_FAIL, "ask", "%s%s%s", url ? url_var : "", url ? ": " : "", err);
	} else if (http_multi_run(m, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "ask", "%s", err);
	}
	http_multi_free(&m);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (st.wrote && !st.ends_nl && isatty(STDOUT_FILENO))
		putchar('\n');
	if (rc == EXIT_OK && st.write_failed)
		rc = cli_fail(EXIT_FAIL, "ask", "cannot write the answer to stdout");
	else if (rc == EXIT_OK && (!st.done || !st.ok))
		rc = cli_fail(EXIT_FAIL, "ask", "%s", st.error ? st.error : "no answer");
	free(st.error);
	free(err);
	return rc;
}

static const struct cli_opt ask_options[] = {
	{ .name = "--provider", .arg = "anthropic|openai",
	  .help = "the API: Messages (default) or Chat Completions" },
	{ .name = "--model", .arg = "M",
	  .help = "the model (default: CLAUDE_MODEL_EXECUTION, CLAUDE_MODEL_ORCHESTRATOR "
		  "or OPENAI_MODEL)" },
	{ .name = "--max-tokens", .arg = "N",
	  .help = "the longest answer in tokens (default 1024)" },
	{ 0 },
};

const struct cli_cmd cmd_ask_entry = {
	.name = "ask",
	.args = "PROMPT",
	.opts = ask_options,
	.summary = "stream one answer from the configured LLM to stdout",
	.run = cmd_ask,
};
