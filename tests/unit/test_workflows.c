/* The registered workflows (cli/workflows.h): every entry complete, names
 * and roles unique, every agent role in exactly one workflow; the weekly
 * workflow's runs and tasks as the front ends list them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "agents/review.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/bus.h"
#include "cli/workflows.h"
#include "core/util.h"

#include "core/banned.h"

/* How many workflows list role among their roles. */
static int owners(const char *role)
{
	int n = 0;
	for (size_t i = 0; i < workflow_ndefs; i++)
		for (const char *const *r = workflow_defs[i]->roles; *r; r++)
			n += !strcmp(*r, role);
	return n;
}

static void test_table_complete_unique(void **state)
{
	(void)state;
	assert_true(workflow_ndefs >= 2);
	assert_string_equal(workflow_defs[0]->name, "weekly");   /* the first entry */
	assert_string_equal(workflow_defs[1]->name, "review");
	assert_null(workflow_run_subs[workflow_ndefs]);
	for (size_t i = 0; i < workflow_ndefs; i++) {
		const struct workflow_def *w = workflow_defs[i];
		assert_non_null(w->name);
		assert_true(*w->name);
		for (const char *p = w->name; *p; p++)
			assert_true((*p >= 'a' && *p <= 'z') || *p == '_');
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(workflow_defs[k]->name, w->name);
		assert_ptr_equal(workflow_find(w->name), w);
		assert_true(w->summary && *w->summary);
		/* its `madf run NAME` entry: named as it is, with a start,
		 * and the same in workflow_run_subs[] (the run command's subs) */
		assert_non_null(w->entry);
		assert_string_equal(w->entry->name, w->name);
		assert_non_null(w->entry->run);
		assert_ptr_equal(workflow_run_subs[i], w->entry);
		/* roles: at least one, each a known agent, none twice */
		assert_non_null(w->roles);
		assert_non_null(w->roles[0]);
		bool has_controller = !w->controller;
		for (const char *const *r = w->roles; *r; r++) {
			const struct agent_role *role = agent_role_find(*r);
			assert_non_null(role);
			assert_string_equal(role->name, *r);
			assert_int_equal(owners(*r), 1);
			for (const char *const *q = w->roles; q < r; q++)
				assert_string_not_equal(*q, *r);
			has_controller = has_controller || !strcmp(*r, w->controller);
		}
		assert_true(has_controller);
		/* options: "--name", none twice (a group's rows counted too) */
		const char *seen[64];
		size_t nseen = 0;
		const struct cli_opt *stack[4] = { w->entry->opts };
		size_t depth = w->entry->opts ? 1 : 0;
		while (depth) {
			const struct cli_opt *o = stack[--depth];
			for (; o && (o->name || o->group); o++) {
				if (o->group) {
					assert_true(depth < 4);
					stack[depth++] = o->group;
					continue;
				}
				assert_true(o->name[0] == '-');
				for (size_t m = 0; m < nseen; m++)
					assert_string_not_equal(seen[m], o->name);
				assert_true(nseen < 64);
				seen[nseen++] = o->name;
			}
		}
		/* a workflow keeps runs with every hook that reads them, or none */
		bool runs = w->runs != NULL;
		assert_int_equal(w->run_load != NULL, runs);
		assert_int_equal(w->tasks != NULL, runs);
		assert_int_equal(w->health != NULL, runs);
		assert_int_equal(w->report != NULL, runs);
		assert_int_equal(w->drafts_dir != NULL, runs);
		assert_int_equal(w->reports_dir != NULL, runs);
		assert_int_equal(w->render != NULL, runs);
		assert_int_equal(w->render_json != NULL, runs);
		assert_int_equal(w->basename != NULL, runs);
		/* what the console names through it: the kinds (unique
		 * names), the workers (roles of the workflow, not its
		 * controller), and a trigger only with a controller and runs */
		for (const char *const *k = w->task_kinds; k && *k; k++) {
			assert_true(**k);
			for (const char *const *q = w->task_kinds; q < k; q++)
				assert_string_not_equal(*q, *k);
		}
		if (w->task_kinds || w->workers || w->trigger)
			assert_non_null(w->controller);
		for (const char *const *k = w->workers; k && *k; k++) {
			bool role = false;
			for (const char *const *r = w->roles; *r; r++)
				role = role || !strcmp(*r, *k);
			assert_true(role);
			assert_string_not_equal(*k, w->controller);
		}
		if (w->trigger)
			assert_true(runs);
	}
	/* every agent the runtime knows belongs to exactly one workflow */
	for (size_t i = 0; i < agent_nroles; i++)
		assert_int_equal(owners(agent_roles[i]->name), 1);
	for (size_t i = 0; i < review_nroles; i++)
		assert_int_equal(owners(review_roles[i]->name), 1);
	assert_null(workflow_find("nosuch"));
	assert_null(workflow_find(NULL));
	char *names = workflow_names();
	assert_string_equal(names, "weekly, review");
	free(names);
}

/* The weekly workflow's tasks: research tasks with their pair, the
 * priority the product_manager sends when unset (high), then in LLM mode
 * the validation and the narrative as stages. */
static void test_weekly_tasks(void **state)
{
	(void)state;
	cJSON *run = cJSON_Parse(
		"{\"run_id\":\"weekly-x\",\"llm\":{\"mode\":\"llm\"},"
		"\"tasks\":[{\"task_id\":\"USDJPY-market\",\"kind\":\"market\",\"pair\":\"USD/JPY\","
		"\"assignee\":\"research_agent_1\",\"status\":\"done\",\"attempts\":2,"
		"\"progress\":100,\"done_by\":\"research_agent_1\"},"
		"{\"task_id\":\"USDJPY-news\",\"kind\":\"news\",\"pair\":\"USD/JPY\","
		"\"assignee\":\"research_agent_2\",\"status\":\"queued\",\"priority\":\"low\","
		"\"deadline_ns\":5e18}],"
		"\"validation\":{\"status\":\"requested\",\"request_id\":\"m1\",\"deadline_ns\":7e18}}");
	assert_non_null(run);
	struct workflow_task t[8];
	assert_int_equal(workflow_weekly.tasks(run, t, 1), 4); /* told how many there are */
	assert_string_equal(t[0].id, "USDJPY-market");
	assert_int_equal(workflow_weekly.tasks(run, t, 8), 4);
	assert_string_equal(t[0].subject, "USD/JPY");
	assert_string_equal(t[0].priority, "high");
	assert_int_equal(t[0].attempts, 2);
	assert_string_equal(t[0].done_by, "research_agent_1");
	assert_false(t[0].stage);
	assert_string_equal(t[1].priority, "low");
	assert_string_equal(t[1].status, "queued");
	assert_int_equal(t[1].deadline_ns, 5000000000000000000LL);
	assert_string_equal(t[1].done_by, "");
	assert_string_equal(t[2].id, "validation");
	assert_string_equal(t[2].assignee, "validator_agent");
	assert_string_equal(t[2].status, "requested");
	assert_int_equal(t[2].attempts, 1);
	assert_int_equal(t[2].deadline_ns, 7000000000000000000LL);
	assert_true(t[2].stage);
	assert_string_equal(t[3].id, "narrative");
	assert_string_equal(t[3].status, "waiting");
	assert_int_equal(t[3].attempts, 0);
	/* deterministic mode: no stages */
	cJSON_DeleteItemFromObject(run, "llm");
	assert_int_equal(workflow_weekly.tasks(run, t, 8), 2);
	/* workflow_tasks: every task, however many */
	cJSON *tasks = cJSON_GetObjectItem(run, "tasks");
	for (int i = 0; i < 98; i++) {
		cJSON *o = cJSON_CreateObject();
		char id[16];
		snprintf(id, sizeof(id), "T%d", i);
		cJSON_AddStringToObject(o, "task_id", id);
		cJSON_AddItemToArray(tasks, o);
	}
	size_t n;
	struct workflow_task *all = workflow_tasks(&workflow_weekly, run, &n);
	assert_int_equal(n, 100);
	assert_string_equal(all[0].id, "USDJPY-market");
	assert_string_equal(all[99].id, "T97");
	assert_string_equal(all[99].status, "");
	free(all);
	assert_null(workflow_tasks(NULL, run, &n)); /* no workflow */
	assert_int_equal(n, 0);
	cJSON_Delete(run);
}

/* The weekly workflow's runs: in the order they started, none without a
 * state file, an unreadable state an error naming it. */
static void test_weekly_runs(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-test-workflows-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *err = NULL;
	cJSON *runs = workflow_weekly.runs(dir, &err);
	assert_non_null(runs);
	assert_int_equal(cJSON_GetArraySize(runs), 0);
	cJSON_Delete(runs);
	char *sdir = xasprintf("%s/state", dir);
	char *path = xasprintf("%s/product_manager-state.json", sdir);
	assert_int_equal(util_mkdirs(sdir, NULL), 0);
	const char *text = "{\"runs\":{"
		"\"b\":{\"run_id\":\"b\",\"started_at\":\"2026-01-02T00:00:00Z\"},"
		"\"a\":{\"run_id\":\"a\",\"started_at\":\"2026-01-03T00:00:00Z\"},"
		"\"c\":{\"run_id\":\"c\",\"started_at\":\"2026-01-01T00:00:00Z\"},"
		"\"x\":\"not a run\"}}";
	assert_int_equal(util_write_file_atomic(path, text, strlen(text), false, NULL), 0);
	runs = workflow_weekly.runs(dir, &err);
	assert_non_null(runs);
	assert_int_equal(cJSON_GetArraySize(runs), 3);
	const char *want[] = { "c", "b", "a" };
	for (int i = 0; i < 3; i++)
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(runs, i), "run_id")->valuestring,
				    want[i]);
	cJSON_Delete(runs);
	cJSON *one = workflow_weekly.run_load(dir, "b");
	assert_non_null(one);
	cJSON_Delete(one);
	assert_ptr_equal(workflow_of_run(dir, "a"), &workflow_weekly);
	assert_null(workflow_of_run(dir, "nosuch"));
	assert_int_equal(util_write_file_atomic(path, "{bad", 4, false, NULL), 0);
	assert_null(workflow_weekly.runs(dir, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "product_manager-state.json"));
	free(err);
	unlink(path);
	rmdir(sdir);
	rmdir(dir);
	free(path);
	free(sdir);
}

/* What the console takes from the definitions: weekly's kinds, workers
 * and trigger; the review crew's agents' parts, its workers and its
 * trigger, its controller the review master. */
static void test_console_fields(void **state)
{
	(void)state;
	const char *const *k = workflow_weekly.task_kinds, *const *wk = workflow_weekly.workers;
	assert_non_null(k);
	assert_string_equal(k[0], "market");
	assert_string_equal(k[1], "news");
	assert_null(k[2]);
	assert_non_null(wk);
	assert_string_equal(wk[0], "research_agent_1");
	assert_string_equal(wk[1], "research_agent_2");
	assert_null(wk[2]);
	assert_string_equal(workflow_weekly.controller, "product_manager");
	assert_non_null(workflow_weekly.trigger);
	assert_null(workflow_weekly.render_sarif);
	k = workflow_review.task_kinds;
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		assert_string_equal(k[i], review_part_name((enum review_part)i));
		assert_string_equal(workflow_review.workers[i], review_part_agent((enum review_part)i));
	}
	assert_null(k[REVIEW_NPARTS]);
	assert_null(workflow_review.workers[REVIEW_NPARTS]);
	assert_string_equal(workflow_review.controller, "review_master");
	assert_non_null(workflow_review.trigger);
	assert_non_null(workflow_review.render_sarif);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	assert_int_equal(util_write_file_atomic(p, text, strlen(text), false, NULL), 0);
	free(p);
}

static cJSON *finding(const char *type, const char *sev, const char *file, int line,
		      const char *ref)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "type", type);
	cJSON_AddStringToObject(f, "severity", sev);
	cJSON_AddStringToObject(f, "description", "what it is");
	cJSON_AddStringToObject(f, "file", file);
	cJSON_AddNumberToObject(f, "line", line);
	cJSON_AddStringToObject(f, !strcmp(type, "critical") ? "remediation" : "suggestion", "fix it");
	cJSON_AddStringToObject(f, "reference", ref);
	return f;
}

/* The review crew's runs: the trigger refuses a path that is no directory
 * (nothing written, nothing sent), else writes the run as starting with a
 * waiting task per agent and sends code_review_run to review_master; the
 * hooks list it (runs, run_load, tasks, health), and its report groups the
 * findings by severity with the source lines around each: tabs expanded,
 * an escape sequence and invalid UTF-8 made safe, a secret's line
 * withheld, a path outside the codebase never read; SARIF from it. */
static void test_review_runs(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-test-workflows-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct bus_config cfg;
	bus_config_init(&cfg, dir);
	cfg.durable = false;
	struct bus *b = NULL;
	char *err = NULL;
	assert_int_equal(bus_open(&cfg, &b, &err), 0);
	char run_id[128] = "", said[512] = "", *id = NULL;
	char *bad = xasprintf("%s/no-such-dir", dir);
	struct wf_request req = { .codebase = bad };
	assert_int_equal(workflow_review.trigger(dir, b, &req, run_id, sizeof(run_id), said,
						 sizeof(said), &id, &err), -1);
	char *want = xasprintf("unknown codebase \"%s\": neither a registered name (madf review add "
			       "NAME PATH) nor a directory", bad);
	assert_string_equal(err, want);
	free(want);
	free(err);
	err = NULL;
	assert_null(id);
	cJSON *runs = workflow_review.runs(dir, &err);
	assert_int_equal(cJSON_GetArraySize(runs), 0);
	cJSON_Delete(runs);

	char *code = xasprintf("%s/code", dir);
	char *src = xasprintf("%s/src", code);
	assert_int_equal(util_mkdirs(src, NULL), 0);
	write_file(src, "a.c", "int a;\n\tint b; /* \x1b[31mred */\n\xe9t\xe9\nchar *k = \"AKIAQ3EXAMPLEKEY7XYZ\";\nint e;\n"
		   "int f;\nint g;\nstatic const char *api_token = \"f00dfeedcafe\";\n");
	req.codebase = code;
	assert_int_equal(workflow_review.trigger(dir, b, &req, run_id, sizeof(run_id), said,
						 sizeof(said), &id, &err), 1);
	assert_true(review_run_id_valid(run_id));
	want = xasprintf("started the review run %s of %s (4 agents; 2 shows its tasks, 5 its report)",
			 run_id, code);
	assert_string_equal(said, want);
	free(want);
	struct bus_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(bus_list(b, BUS_Q_INBOX, "review_master", false, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	bus_entries_free(v, n);
	free(id);

	runs = workflow_review.runs(dir, &err);
	assert_int_equal(cJSON_GetArraySize(runs), 1);
	cJSON_Delete(runs);
	cJSON *run = workflow_review.run_load(dir, run_id);
	assert_non_null(run);
	assert_ptr_equal(workflow_of_run(dir, run_id), &workflow_review);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(run, "status")), "starting");
	size_t nt = 0;
	struct workflow_task *t = workflow_tasks(&workflow_review, run, &nt);
	assert_int_equal(nt, 4);
	for (size_t i = 0; i < nt; i++) {
		assert_string_equal(t[i].id, review_part_name((enum review_part)i));
		assert_string_equal(t[i].assignee, review_part_agent((enum review_part)i));
		assert_string_equal(t[i].status, "waiting");
		assert_string_equal(t[i].subject, code);
	}
	free(t);
	char line[256];
	assert_false(workflow_review.health(run, util_now_ns(), line, sizeof(line)));
	assert_non_null(strstr(line, "0 of 4 tasks done, 4 open"));
	assert_null(workflow_review.render_sarif(run));

	/* done, with an aggregate: the report */
	cJSON_ReplaceItemInObject(run, "status", cJSON_CreateString("done"));
	cJSON *agg = cJSON_AddObjectToObject(run, "aggregate");
	cJSON *docs = cJSON_AddObjectToObject(agg, "documentation");
	cJSON_AddStringToObject(docs, "README.md", "# x\n");
	cJSON *debt = cJSON_AddArrayToObject(agg, "debt");
	cJSON_AddItemToArray(debt, finding("debt", "low", "src/a.c", 5, "CWE-546"));
	cJSON_AddItemToArray(debt, finding("debt", "low", "../outside.c", 1, "CWE-546"));
	cJSON_AddArrayToObject(agg, "improvement");
	cJSON *crit = cJSON_AddArrayToObject(agg, "critical");
	cJSON_AddItemToArray(crit, finding("critical", "high", "src/a.c", 2, "CWE-134"));
	cJSON_AddItemToArray(crit, finding("critical", "critical", "src/a.c", 4, "CWE-798"));
	cJSON *rv = cJSON_AddObjectToObject(agg, "review");
	cJSON_AddStringToObject(rv, "root", code);
	cJSON_AddArrayToObject(rv, "notes");
	/* a line that looks like a credential, though no finding says so */
	cJSON_AddItemToArray(debt, finding("debt", "low", "src/a.c", 7, "CWE-546"));
	char *md = workflow_review.render(run, true);
	char *c1 = strstr(md, "### Critical (1)"), *h1 = strstr(md, "### High (1)"),
	     *l1 = strstr(md, "### Low (3)");
	assert_non_null(c1);
	assert_non_null(h1);
	assert_non_null(l1);
	assert_true(c1 < h1 && h1 < l1);
	assert_non_null(strstr(md, "#### src/a.c:2 CWE-134 (critical)"));
	/* the line marked, its tab expanded, the escape sequence's ESC gone */
	assert_non_null(strstr(md, ">    2 |     int b; /* "));
	assert_null(strchr(md, '\x1b'));
	/* invalid UTF-8 (Latin-1) replaced, the secret's line withheld */
	assert_non_null(strstr(md, "     3 | \xef\xbf\xbdt\xef\xbf\xbd"));
	assert_non_null(strstr(md, ">    4 | [withheld: a hard-coded secret]"));
	assert_null(strstr(md, "AKIAQ3EXAMPLEKEY7XYZ"));
	assert_non_null(strstr(md, "- README.md (4 bytes)"));
	assert_non_null(strstr(md, "     8 | [withheld: a hard-coded secret]"));
	assert_null(strstr(md, "f00dfeedcafe"));
	assert_non_null(strstr(md, ">    7 | int g;"));
	free(md);
	cJSON *j = workflow_review.render_json(run);
	const cJSON *low = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "findings_by_severity"), "low");
	assert_int_equal(cJSON_GetArraySize(low), 3);
	/* outside the codebase: no source read */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(low, 1), "context")), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(low, 0), "context")), 5);
	cJSON_Delete(j);
	cJSON *sarif = workflow_review.render_sarif(run);
	assert_non_null(sarif);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(sarif, "version")), "2.1.0");
	cJSON_Delete(sarif);
	char base[64];
	workflow_review.basename(run, base, sizeof(base));
	assert_string_equal(base, run_id);
	cJSON_Delete(run);
	bus_free(&b);
	bus_config_release(&cfg);
	free(bad);
	free(code);
	free(src);
	char *rm = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
	free(rm);
}

/* weekly's trigger: sent to the product_manager over the bus (the id it
 * gives is the message in its inbox), said with the day, pairs and
 * sources; a done run is not triggered again unless fresh, which makes
 * a new run id beside it. */
static void test_weekly_trigger(void **state)
{
	(void)state;
	char dir[] = "/tmp/madf-test-workflows-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct bus_config cfg;
	bus_config_init(&cfg, dir);
	cfg.durable = false;
	struct bus *b = NULL;
	char *err = NULL;
	assert_int_equal(bus_open(&cfg, &b, &err), 0);
	char p1[] = "USD/JPY", p2[] = "EUR/USD";
	char *pairs[] = { p1, p2 };
	struct wf_request req = { .as_of_ns = 1704412800LL * 1000000000LL, /* 2024-01-05 */
				  .pairs = pairs, .npairs = 2, .market_source = "sim",
				  .news_source = "sim" };
	char run_id[128], said[512], *id = NULL;
	assert_int_equal(workflow_weekly.trigger(dir, b, &req, run_id, sizeof(run_id), said,
						 sizeof(said), &id, &err), 1);
	assert_true(run_id[0]);
	char *want = xasprintf("started the weekly run %s as of 2024-01-05 for USD/JPY, EUR/USD "
			       "(market simulated, news simulated)", run_id);
	assert_string_equal(said, want);
	free(want);
	struct bus_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(bus_list(b, BUS_Q_INBOX, "product_manager", false, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].message_id, id);
	bus_entries_free(v, n);
	free(id);
	id = NULL;

	/* the run is done: nothing sent, said so */
	char *sdir = xasprintf("%s/state", dir);
	char *path = xasprintf("%s/product_manager-state.json", sdir);
	assert_int_equal(util_mkdirs(sdir, NULL), 0);
	char *text = xasprintf("{\"runs\":{\"%s\":{\"run_id\":\"%s\",\"status\":\"done\"}}}",
			       run_id, run_id);
	assert_int_equal(util_write_file_atomic(path, text, strlen(text), false, NULL), 0);
	free(text);
	char first[128];
	util_strlcpy(first, run_id, sizeof(first));
	assert_int_equal(workflow_weekly.trigger(dir, b, &req, run_id, sizeof(run_id), said,
						 sizeof(said), &id, &err), 0);
	assert_null(id);
	assert_string_equal(run_id, first);
	want = xasprintf("the weekly run %s is done already (--fresh runs it again; 5 shows its "
			 "report)", run_id);
	assert_string_equal(said, want);
	free(want);
	/* --fresh: a new run beside it */
	req.fresh = true;
	assert_int_equal(workflow_weekly.trigger(dir, b, &req, run_id, sizeof(run_id), said,
						 sizeof(said), &id, &err), 1);
	assert_true(strlen(run_id) > strlen(first) + 1);
	assert_memory_equal(run_id, first, strlen(first));
	assert_int_equal(run_id[strlen(first)], '-');
	assert_non_null(strstr(said, "started the weekly run "));
	free(id);
	assert_int_equal(bus_list(b, BUS_Q_INBOX, "product_manager", false, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	bus_entries_free(v, n);
	bus_free(&b);
	bus_config_release(&cfg);
	free(path);
	free(sdir);
	char *rm = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(rm), 0);
	free(rm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_complete_unique),
		cmocka_unit_test(test_weekly_tasks),
		cmocka_unit_test(test_weekly_runs),
		cmocka_unit_test(test_console_fields),
		cmocka_unit_test(test_weekly_trigger),
		cmocka_unit_test(test_review_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
