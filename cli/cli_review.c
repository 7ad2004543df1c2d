/* madf review: the code review crew (agents/review*.c) run on a codebase,
 * the master in this process driving the four agents on threads. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_agent.h"
#include "agents/review.h"
#include "agents/runtime.h"
#include "core/json_out.h"
#include "core/message.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

static void on_progress(void *ctx, const char *line)
{
	(void)ctx;
	char *clean = util_sanitize(line, strlen(line), false);
	fprintf(stderr, "madf: review: %s\n", clean);
	free(clean);
}

static void print_clean(const char *prefix, const char *s)
{
	char *c = util_sanitize(s, strlen(s), false);
	printf("%s%s\n", prefix, c);
	free(c);
}

static void print_summary(const cJSON *agg, const char *out_dir)
{
	const cJSON *rv = cJSON_GetObjectItem(agg, "review");
	char *head = xasprintf("review of %s (%s): %d files",
			       cJSON_GetStringValue(cJSON_GetObjectItem(rv, "codebase")),
			       cJSON_GetStringValue(cJSON_GetObjectItem(rv, "root")),
			       (int)cJSON_GetNumberValue(cJSON_GetObjectItem(rv, "files")));
	print_clean("", head);
	free(head);
	static const char *const parts[] = { "critical", "debt", "improvement" };
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		const cJSON *l = cJSON_GetObjectItem(agg, parts[i]), *f;
		printf("\n%s: %d\n", parts[i], cJSON_GetArraySize(l));
		cJSON_ArrayForEach(f, l) {
			char *line = xasprintf("%s:%d [%s] %s", cJSON_GetStringValue(cJSON_GetObjectItem(f, "file")),
					       (int)cJSON_GetNumberValue(cJSON_GetObjectItem(f, "line")),
					       cJSON_GetStringValue(cJSON_GetObjectItem(f, "severity")),
					       cJSON_GetStringValue(cJSON_GetObjectItem(f, "description")));
			print_clean("  ", line);
			free(line);
		}
	}
	const cJSON *d = cJSON_GetObjectItem(agg, "documentation"), *c;
	printf("\ndocumentation:");
	cJSON_ArrayForEach(c, d)
		printf(" %s", c->string);
	if (out_dir)
		print_clean(" written to ", out_dir);
	else
		printf(" (--out DIR writes them)\n");
	const cJSON *notes = cJSON_GetObjectItem(rv, "notes");
	if (cJSON_GetArraySize(notes)) {
		printf("\nnotes:\n");
		cJSON_ArrayForEach(c, notes)
			print_clean("  - ", c->valuestring);
	}
	printf("\ntools:");
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(rv, "tools"))
		printf(" %s %s%s", c->string, cJSON_IsString(c) ? c->valuestring : "?", c->next ? "," : "");
	printf("\n");
}

static int write_out(const char *dir, const cJSON *agg, char **err)
{
	if (util_mkdirs(dir, err) < 0)
		return -1;
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(agg, "documentation")) {
		if (!cJSON_IsString(c) || strchr(c->string, '/') || c->string[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, c->string);
		int r = util_write_file_atomic(p, c->valuestring, strlen(c->valuestring), true, err);
		free(p);
		if (r < 0)
			return -1;
	}
	char *text = cJSON_Print(agg);
	char *p = xasprintf("%s/review.json", dir);
	int r = util_write_file_atomic(p, text, strlen(text), true, err);
	free(p);
	free(text);
	return r;
}

static const struct cli_cmd review_add_entry;

static int review_add(struct cli *cli, int argc, char **argv)
{
	if (argc != 4)
		return cli_usage_fail(&review_add_entry, "review", "review add");
	char *err = NULL;
	if (review_register(cli->data_dir, argv[2], argv[3], &err) < 0) {
		int r = cli_fail(EXIT_USAGE, "review", "add: %s", err);
		free(err);
		return r;
	}
	char *real = review_resolve(cli->data_dir, argv[2]);
	printf("%s %s\n", argv[2], real ? real : argv[3]);
	free(real);
	return EXIT_OK;
}

/* The workers as the master sees them (agents/review.h's alive and
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

int cli_review_run_crew(struct cli *cli, const cJSON *request, const char *const *faults,
			size_t nfaults, const struct review_progress *progress, cJSON **agg,
			cJSON **error)
{
	struct agent_env env;
	agent_env_init(&env, cli->data_dir, cli->log_dir);
	env.bcfg.durable = cli->bcfg.durable;
	for (size_t i = 0; i < nfaults && i < ARRAY_SIZE(env.faults); i++)
		env.faults[env.nfaults++] = xstrdup(faults[i]);
	char *err = NULL;
	struct agent *workers[REVIEW_NPARTS] = { NULL }, *master = NULL;
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
	    review_tools_register(env.tools, &err) < 0 || tools_write_registry(env.tools, &err) < 0)
		goto out;
	static const char *const crit[] = { "review.cppcheck", "review.flawfinder", "review.secrets",
					    "review.gcc_analyzer", "review.clang_analyzer", "review.ctags" };
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
	if (agent_open(&role_review_master, &env, &master, &err) < 0)
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
	agent_free(&master);
	if (env.tools) {
		tools_save_usage(env.tools, NULL);
		review_tools_release(env.tools);
	}
	tools_free(&env.tools);
	agent_env_release(&env);
	return st;
}

static int cmd_review(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 1, "review", &cmd_review_entry, 0 };
	const char *name, *val, *id = NULL, *out_dir = NULL, *agents = NULL, *params_text = NULL,
			       *request_text = NULL, *sarif = NULL,
		   *since = NULL, *checklist = NULL, *include = NULL, *exclude = NULL;
	const char *faults[16];
	size_t nfaults = 0;
	bool json = false;
	long max_findings = 0, max_files = 0, max_bytes = 0, timeout = 0;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (id)
				return cli_fail(EXIT_USAGE, "review", "one codebase at a time (got \"%s\" and \"%s\")", id, val);
			id = val;
		} else if (!strcmp(name, "--json")) {
			json = true;
		} else if (!strcmp(name, "--out")) {
			out_dir = val;
		} else if (!strcmp(name, "--agents")) {
			agents = val;
		} else if (!strcmp(name, "--since")) {
			since = val;
		} else if (!strcmp(name, "--checklist")) {
			checklist = val;
		} else if (!strcmp(name, "--include")) {
			include = val;
		} else if (!strcmp(name, "--exclude")) {
			exclude = val;
		} else if (!strcmp(name, "--sarif")) {
			sarif = val;
		} else if (!strcmp(name, "--params")) {
			params_text = val;
		} else if (!strcmp(name, "--request")) {
			request_text = val;
		} else if (!strcmp(name, "--inject-fault")) {
			if (nfaults >= ARRAY_SIZE(faults) || !strchr(val, ':') ||
			    agent_fault_from_name(strchr(val, ':') + 1) < 0)
				return cli_fail(EXIT_USAGE, "review", "--inject-fault: AGENT:KIND, KIND one of error, malformed, slow, crash");
			faults[nfaults++] = val;
		} else if (!strcmp(name, "--max-findings")) {
			if (cli_long("review", name, val, 1, 1000000, &max_findings) < 0)
				return EXIT_USAGE;
		} else if (!strcmp(name, "--max-files")) {
			if (cli_long("review", name, val, 1, 100000000, &max_files) < 0)
				return EXIT_USAGE;
		} else if (!strcmp(name, "--max-bytes")) {
			if (cli_long("review", name, val, 1, 1L << 40, &max_bytes) < 0)
				return EXIT_USAGE;
		} else if (!strcmp(name, "--timeout")) {
			if (cli_long("review", name, val, 1, 86400, &timeout) < 0)
				return EXIT_USAGE;
		}
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!id == !request_text)
		return cli_fail(EXIT_USAGE, "review", "usage: madf review PATH|NAME [options] "
				"(or --request JSON); see madf review --help");
	cJSON *request;
	char *perr = NULL;
	if (request_text) {
		request = json_parse_strict(request_text, strlen(request_text), &perr);
		if (!request) {
			r = cli_fail(EXIT_USAGE, "review", "--request: %s", perr ? perr : "not JSON");
			free(perr);
			return r;
		}
	} else {
		request = cJSON_CreateObject();
		cJSON_AddStringToObject(request, "id", id);
		cJSON *params = params_text ? json_parse_strict(params_text, strlen(params_text), &perr)
					    : cJSON_CreateObject();
		if (!params) {
			r = cli_fail(EXIT_USAGE, "review", "--params: %s", perr ? perr : "not JSON");
			free(perr);
			cJSON_Delete(request);
			return r;
		}
		cJSON_AddItemToObject(request, "params", params);
		if (cJSON_IsObject(params)) {
			const char *lists[][2] = { { "agents", agents }, { "include", include },
						   { "exclude", exclude } };
			for (size_t k = 0; k < ARRAY_SIZE(lists); k++) {
				if (!lists[k][1])
					continue;
				cJSON *l = cJSON_CreateArray();
				char *copy = xstrdup(lists[k][1]), *save = NULL;
				for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
					cJSON_AddItemToArray(l, cJSON_CreateString(t));
				free(copy);
				cJSON_DeleteItemFromObject(params, lists[k][0]);
				cJSON_AddItemToObject(params, lists[k][0], l);
			}
			if (since) {
				cJSON_DeleteItemFromObject(params, "since");
				cJSON_AddStringToObject(params, "since", since);
			}
			if (checklist) {
				char *buf = NULL, *e2 = NULL;
				size_t len = 0;
				cJSON *cl = NULL;
				if (util_read_file(checklist, 1 << 20, &buf, &len, &e2) == 0)
					cl = json_parse_strict(buf, len, &e2);
				free(buf);
				if (!cl) {
					r = cli_fail(EXIT_USAGE, "review", "--checklist: %s", e2 ? e2 : "not JSON");
					free(e2);
					cJSON_Delete(request);
					return r;
				}
				free(e2);
				cJSON_DeleteItemFromObject(params, "checklist");
				cJSON_AddItemToObject(params, "checklist", cl);
			}
			if (max_findings)
				cJSON_AddNumberToObject(params, "max_findings", (double)max_findings);
			if (max_files)
				cJSON_AddNumberToObject(params, "max_files", (double)max_files);
			if (max_bytes)
				cJSON_AddNumberToObject(params, "max_bytes", (double)max_bytes);
			if (timeout)
				cJSON_AddNumberToObject(params, "timeout_s", (double)timeout);
		}
	}
	cJSON *agg = NULL, *error = NULL;
	struct review_progress progress = { .fn = on_progress };
	int st = cli_review_run_crew(cli, request, faults, nfaults, &progress, &agg, &error);
	cJSON_Delete(request);
	int rc = st == 0 ? EXIT_OK : st == 400 ? EXIT_USAGE : EXIT_FAIL;
	char *err = NULL;
	if (agg && out_dir && write_out(out_dir, agg, &err) < 0) {
		cli_fail(EXIT_FAIL, "review", "--out: %s", err ? err : "?");
		free(err);
		rc = EXIT_FAIL;
	}
	if (agg && sarif) {
		cJSON *log = review_sarif(agg);
		char *text = cJSON_Print(log);
		if (util_write_file_atomic(sarif, text, strlen(text), true, &err) < 0) {
			cli_fail(EXIT_FAIL, "review", "--sarif: %s", err ? err : "?");
			free(err);
			rc = EXIT_FAIL;
		}
		free(text);
		cJSON_Delete(log);
	}
	if (json) {
		cJSON *doc = agg ? agg : cJSON_CreateObject();
		if (error)
			cJSON_AddItemReferenceToObject(doc, "error", error);
		char *text = cJSON_Print(doc);
		printf("%s\n", text);
		free(text);
		if (!agg)
			cJSON_Delete(doc);
	} else if (agg) {
		print_summary(agg, out_dir);
	}
	if (error)
		cli_fail(0, "review", "%d: %s", (int)cJSON_GetNumberValue(cJSON_GetObjectItem(error, "status")),
			 cJSON_GetStringValue(cJSON_GetObjectItem(error, "error")));
	cJSON_Delete(agg);
	cJSON_Delete(error);
	return rc;
}

const struct cli_opt review_options[] = {
	{ .name = "--json",
	  .help = "print the aggregate (and the error on failure) as JSON" },
	{ .name = "--sarif", .arg = "FILE", .help = "write a SARIF 2.1.0 log" },
	{ .name = "--out", .arg = "DIR",
	  .help = "write the documentation drafts and review.json" },
	{ .name = "--agents", .arg = "LIST",
	  .help = "the agents, of documentation, debt, improvement, critical (default: "
		  "all)" },
	{ .name = "--max-findings", .arg = "N", .help = "per agent, the most severe kept" },
	{ .name = "--max-files", .arg = "N",
	  .help = "the most files in the tree (default 5000)" },
	{ .name = "--max-bytes", .arg = "N",
	  .help = "the most bytes in the tree (default 64 MiB)" },
	{ .name = "--include", .arg = "GLOBS",
	  .help = "only the paths matching one of these globs (a,b)" },
	{ .name = "--exclude", .arg = "GLOBS",
	  .help = "not the paths matching one of these globs (a,b)" },
	{ .name = "--since", .arg = "REV",
	  .help = "only the files changed since a git revision, and the untracked ones" },
	{ .name = "--checklist", .arg = "FILE",
	  .help = "the checklist object from a JSON file" },
	{ .name = "--params", .arg = "JSON", .help = "the request's params object" },
	{ .name = "--timeout", .arg = "S", .help = "per task (default 600)" },
	{ .name = "--inject-fault", .arg = "AGENT:KIND",
	  .help = "for tests: KIND error, malformed, slow or crash" },
	{ .name = "--request", .arg = "JSON",
	  .help = "the whole request {\"id\", \"params\"}, instead of PATH|NAME" },
	{ 0 },
};

static const struct cli_cmd review_add_entry = {
	.name = "add",
	.args = "NAME PATH",
	.summary = "register a codebase under NAME in data/review/codebases.json",
	.run = review_add,
};

static const struct cli_cmd *const review_subs[] = { &review_add_entry, NULL };

const struct cli_cmd cmd_review_entry = {
	.name = "review",
	.args = "PATH|NAME",
	.opts = review_options,
	.summary = "review a codebase with the code review crew (documentation, debt, "
		   "improvement, critical; the analyzers, or a model in LLM mode); exit 0 "
		   "completed, 1 failed, 2 usage",
	.run = cmd_review,
	.subs = review_subs,
};
