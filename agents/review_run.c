/* A review as a run (agents/review.h, "review runs"): the master keeps each
 * review in DATA_DIR/review/runs/RUN_ID.json, written atomically at every
 * change (its tasks per agent, then the aggregate), with a Markdown draft
 * beside the weekly ones and, once done, the finished report; `madf runs`,
 * `madf tasks` and the console read them through cli/run_review.c. The
 * report groups the findings by severity with the source lines around
 * each, read from the codebase and made safe for a terminal. */
#include "agents/review.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define CONTEXT_LINES 2
#define CONTEXT_COLS 160

void review_run_id(char *buf, size_t size)
{
	char ts[40];
	util_iso8601(util_now_ns(), ts, sizeof(ts));
	/* 2026-11-25T02:01:02.123456Z -> 20261125T020102 */
	char compact[20];
	size_t k = 0;
	for (size_t i = 0; ts[i] && ts[i] != '.' && k + 1 < sizeof(compact); i++)
		if (ts[i] != '-' && ts[i] != ':')
			compact[k++] = ts[i];
	compact[k] = 0;
	unsigned char r[2];
	util_random(r, sizeof(r));
	snprintf(buf, size, "review-%s-%02x%02x", compact, r[0], r[1]);
}

bool review_run_id_valid(const char *id)
{
	if (!id || strncmp(id, "review-", 7) || strlen(id) > 63)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-'))
			return false;
	return true;
}

static char *run_path(const char *data_dir, const char *run_id)
{
	return xasprintf("%s/" REVIEW_RUNS_DIR "/%s.json", data_dir, run_id);
}

cJSON *review_run_new(const char *run_id, const cJSON *request)
{
	cJSON *run = cJSON_CreateObject();
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	cJSON_AddStringToObject(run, "run_id", run_id);
	cJSON_AddStringToObject(run, "workflow", "review");
	cJSON_AddStringToObject(run, "codebase", jstr_or(request, "id", ""));
	cJSON_AddStringToObject(run, "status", "starting");
	cJSON_AddStringToObject(run, "started_at", now);
	cJSON_AddStringToObject(run, "phase_since", now);
	cJSON_AddItemToObject(run, "request", cJSON_Duplicate(request, true));
	cJSON *tasks = cJSON_AddArrayToObject(run, "tasks");
	const cJSON *ag = cJSON_GetObjectItemCaseSensitive(jget(request, "params"), "agents");
	for (int i = 0; i < REVIEW_NPARTS; i++) {
		bool wanted = !cJSON_IsArray(ag);
		const cJSON *a;
		cJSON_ArrayForEach(a, ag)
			wanted = wanted || (cJSON_IsString(a) && !strcmp(a->valuestring,
						review_part_name((enum review_part)i)));
		if (!wanted)
			continue;
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "task_id", review_part_name((enum review_part)i));
		cJSON_AddStringToObject(t, "kind", review_part_name((enum review_part)i));
		cJSON_AddStringToObject(t, "assignee", review_part_agent((enum review_part)i));
		cJSON_AddStringToObject(t, "status", "waiting");
		cJSON_AddStringToObject(t, "priority", "normal");
		cJSON_AddNumberToObject(t, "attempts", 0);
		cJSON_AddNumberToObject(t, "progress", 0);
		cJSON_AddItemToArray(tasks, t);
	}
	return run;
}

cJSON *review_run_task(const cJSON *run, const char *task_id)
{
	cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (task_id && !strcmp(jstr_or(t, "task_id", ""), task_id))
			return t;
	return NULL;
}

static int write_text(const char *dir, const char *name, const char *text, bool durable,
		      char **err)
{
	if (util_mkdirs(dir, err) < 0)
		return -1;
	char *p = xasprintf("%s/%s", dir, name);
	int r = util_write_file_atomic(p, text, strlen(text), durable, err);
	free(p);
	return r;
}

int review_run_save(const char *data_dir, cJSON *run, bool durable, char **err)
{
	const char *id = jstr(run, "run_id");
	if (!review_run_id_valid(id))
		return err_set(err, "not a review run id: \"%s\"", id ? id : ""), -1;
	char now[40];
	util_iso8601(util_now_ns(), now, sizeof(now));
	jset_str(run, "updated_at", now);
	/* the aggregate in a file of its own: listing the runs (the console's
	 * every refresh) reads only the small one */
	char *dir = xasprintf("%s/" REVIEW_RUNS_DIR, data_dir);
	cJSON *agg = cJSON_DetachItemFromObjectCaseSensitive(run, "aggregate");
	int r = 0;
	if (agg) {
		char *atext = cJSON_PrintUnformatted(agg), *aname = xasprintf("%s.aggregate.json", id);
		r = write_text(dir, aname, atext, durable, err);
		free(atext);
		free(aname);
	}
	char *text = r == 0 ? cJSON_Print(run) : NULL, *name = xasprintf("%s.json", id);
	if (r == 0)
		r = write_text(dir, name, text, durable, err);
	if (agg)
		cJSON_AddItemToObject(run, "aggregate", agg);
	free(text);
	free(name);
	free(dir);
	if (r < 0)
		return -1;
	/* the report: a draft while it runs, the finished one when done */
	bool final = !strcmp(jstr_or(run, "status", ""), "done") ||
		     !strcmp(jstr_or(run, "status", ""), "failed");
	char *md = review_run_markdown(run, final), *mdname = xasprintf("%s.md", id);
	dir = xasprintf("%s/%s", data_dir, REVIEW_DRAFTS_DIR);
	r = write_text(dir, mdname, md, durable, err);
	free(dir);
	if (r == 0 && final) {
		dir = xasprintf("%s/%s", data_dir, REVIEW_REPORTS_DIR);
		r = write_text(dir, mdname, md, durable, err);
		if (r == 0) {
			char *p = xasprintf("%s/%s", dir, mdname);
			cJSON *rep = jobj(run, "report");
			jset_str(rep, "md", p);
			free(p);
		}
		free(dir);
	}
	free(md);
	free(mdname);
	return r;
}

static cJSON *json_load(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	cJSON *j = NULL;
	if (util_read_file(path, 256u << 20, &buf, &len, NULL) == 0)
		j = json_parse_strict(buf, len, NULL);
	free(buf);
	return j;
}

/* The run without its aggregate (what listing needs), or NULL. */
static cJSON *run_load_light(const char *data_dir, const char *run_id)
{
	if (!review_run_id_valid(run_id))
		return NULL;
	char *p = run_path(data_dir, run_id);
	cJSON *run = json_load(p);
	free(p);
	if (run && (!cJSON_IsObject(run) || strcmp(jstr_or(run, "run_id", ""), run_id))) {
		cJSON_Delete(run);
		run = NULL;
	}
	return run;
}

cJSON *review_run_load(const char *data_dir, const char *run_id)
{
	cJSON *run = run_load_light(data_dir, run_id);
	if (!run)
		return NULL;
	char *p = xasprintf("%s/" REVIEW_RUNS_DIR "/%s.aggregate.json", data_dir, run_id);
	cJSON *agg = json_load(p);
	free(p);
	if (cJSON_IsObject(agg)) {
		cJSON_DeleteItemFromObjectCaseSensitive(run, "aggregate");
		cJSON_AddItemToObject(run, "aggregate", agg);
	} else {
		cJSON_Delete(agg);
	}
	return run;
}

static int by_start(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int k = strcmp(jstr_or(x, "started_at", ""), jstr_or(y, "started_at", ""));
	return k ? k : strcmp(jstr_or(x, "run_id", ""), jstr_or(y, "run_id", ""));
}

cJSON *review_runs(const char *data_dir, char **err)
{
	char *dir = xasprintf("%s/" REVIEW_RUNS_DIR, data_dir);
	DIR *d = opendir(dir);
	free(dir);
	cJSON *out = cJSON_CreateArray();
	if (!d)
		return out; /* none yet */
	cJSON **v = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len < 6 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".json"))
			continue;
		char id[80];
		if (len - 5 >= sizeof(id))
			continue;
		snprintf(id, sizeof(id), "%.*s", (int)(len - 5), e->d_name);
		cJSON *run = run_load_light(data_dir, id);
		if (!run)
			continue; /* not a run (its aggregate, a temporary file, a stray) */
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = run;
	}
	closedir(d);
	(void)err;
	if (n)
		qsort(v, n, sizeof(*v), by_start);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(out, v[i]);
	free(v);
	return out;
}

/* ---- the report ---- */

static const char *const severities[] = { "critical", "high", "medium", "low", "info" };
static const char *const finding_parts[] = { "critical", "improvement", "debt" };

static int severity_rank(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(severities); i++)
		if (!strcmp(s, severities[i]))
			return (int)i;
	return (int)ARRAY_SIZE(severities); /* unknown: last */
}

/* Whether file is a path inside a codebase (relative, no ".."). */
static bool path_inside(const char *file)
{
	if (!*file || file[0] == '/')
		return false;
	for (const char *p = file; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return false;
	return true;
}

/* Whether a source line looks as if it held a credential: a well-known
 * key prefix, or a quoted literal beside a word that names one. Such a
 * line is withheld from the report even when no finding says so (the
 * critical agent that would flag it may have been cancelled). */
static bool line_looks_secret(const char *s)
{
	static const char *const prefixes[] = { "AKIA", "ASIA", "-----BEGIN", "ghp_", "gho_",
						"github_pat_", "xoxb-", "xoxp-", "sk-", "AIza" };
	static const char *const words[] = { "key", "secret", "token", "passw", "credential",
					     "auth" };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		for (const char *p = strstr(s, prefixes[i]); p; p = strstr(p + 1, prefixes[i]))
			if (p == s || !isalnum((unsigned char)p[-1])) /* "task-" is no "sk-" */
				return true;
	if (!strchr(s, '"') && !strchr(s, '\''))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcasestr(s, words[i]))
			return true;
	return false;
}

cJSON *review_source_context(const char *root, const char *file, long line, int around)
{
	cJSON *out = cJSON_CreateArray();
	if (!root || !*root || !path_inside(file) || line < 1)
		return out;
	char *p = xasprintf("%s/%s", root, file), *buf = NULL;
	size_t len = 0;
	if (util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) == 0) {
		const char *s = buf, *end = buf + len;
		for (long l = 1; s < end && l <= line + around; l++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			const char *e = nl ? nl : end;
			if (l >= line - around) {
				/* tabs as spaces (to a stop of 4), a CR dropped, cut,
				 * then stripped of control characters and invalid UTF-8 */
				struct sbuf b;
				sbuf_init(&b);
				for (const char *q = s; q < e && b.len < CONTEXT_COLS; q++) {
					if (*q == '\t')
						do
							sbuf_addch(&b, ' ');
						while (b.len % 4);
					else if (*q != '\r')
						sbuf_addch(&b, *q);
				}
				char *clean = util_sanitize(b.data ? b.data : "", b.len, false);
				cJSON *row = cJSON_CreateObject();
				cJSON_AddNumberToObject(row, "line", (double)l);
				cJSON_AddStringToObject(row, "text", line_looks_secret(clean) ?
							REVIEW_WITHHELD : clean);
				cJSON_AddItemToArray(out, row);
				free(clean);
				sbuf_release(&b);
			}
			s = nl ? nl + 1 : end;
		}
	}
	free(buf);
	free(p);
	return out;
}

/* The findings of agg, each a copy with "agent" and "context" (the source
 * lines around it), grouped by severity, critical first: {"critical":
 * [...], "high": [...], ...} with only the severities that occur. */
/* Whether f reports a hard-coded secret (CWE-798), whose line is never
 * shown. */
static bool finding_secret(const cJSON *f)
{
	return !strcmp(jstr_or(f, "reference", ""), "CWE-798");
}

/* The lines of ctx (file's) that a finding of agg says hold a secret:
 * their text withheld. */
static void context_redact(const cJSON *agg, const char *file, cJSON *ctx)
{
	cJSON *row;
	cJSON_ArrayForEach(row, ctx) {
		long l = (long)jnum(row, "line", 0);
		for (size_t k = 0; k < ARRAY_SIZE(finding_parts); k++) {
			const cJSON *f;
			cJSON_ArrayForEach(f, cJSON_GetObjectItem(agg, finding_parts[k]))
				if (finding_secret(f) && (long)jnum(f, "line", 0) == l &&
				    !strcmp(jstr_or(f, "file", ""), file))
					jset_str(row, "text", REVIEW_WITHHELD);
		}
	}
}

static cJSON *findings_by_severity(const cJSON *agg)
{
	const char *root = jstr_or(jget(agg, "review"), "root", "");
	cJSON *out = cJSON_CreateObject();
	for (size_t s = 0; s <= ARRAY_SIZE(severities); s++) {
		cJSON *list = NULL;
		for (size_t k = 0; k < ARRAY_SIZE(finding_parts); k++) {
			const cJSON *f;
			cJSON_ArrayForEach(f, cJSON_GetObjectItem(agg, finding_parts[k])) {
				if (severity_rank(jstr_or(f, "severity", "")) != (int)s)
					continue;
				if (!list)
					list = cJSON_AddArrayToObject(out, s < ARRAY_SIZE(severities) ?
								      severities[s] : "other");
				cJSON *c = cJSON_Duplicate(f, true);
				cJSON_AddStringToObject(c, "agent", finding_parts[k]);
				cJSON *ctx = review_source_context(root, jstr_or(f, "file", ""),
								   (long)jnum(f, "line", 0), CONTEXT_LINES);
				context_redact(agg, jstr_or(f, "file", ""), ctx);
				cJSON_AddItemToObject(c, "context", ctx);
				cJSON_AddItemToArray(list, c);
			}
		}
	}
	return out;
}

/* s as Markdown text on one line: control characters gone, the characters
 * Markdown would read escaped. */
/* A whole number of the run file in [min, max], or def (the file is the
 * data directory's: a value out of range is not cast as it comes). */
static int num_of(const cJSON *o, const char *k, long min, long max, int def)
{
	long v;
	return jint(o, k, min, max, &v) ? (int)v : def;
}

static void md_text(struct sbuf *b, const char *s)
{
	char *clean = util_sanitize(s, strlen(s), false);
	for (const char *p = clean; *p; p++) {
		if (strchr("\\`*_[]<>|#", *p))
			sbuf_addch(b, '\\');
		sbuf_addch(b, *p);
	}
	free(clean);
}

char *review_run_markdown(const cJSON *run, bool final)
{
	const cJSON *agg = jget(run, "aggregate"), *rv = jget(agg, "review");
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "# Code review of ");
	md_text(&b, jstr_or(run, "codebase", "?"));
	sbuf_addf(&b, "%s\n\n", final ? "" : " (draft)");
	sbuf_addf(&b, "Run %s, status %s, started %s", jstr_or(run, "run_id", ""),
		  jstr_or(run, "status", "starting"), jstr_or(run, "started_at", ""));
	if (jstr(run, "finished_at"))
		sbuf_addf(&b, ", finished %s", jstr(run, "finished_at"));
	sbuf_addstr(&b, ".\n");
	if (rv) {
		sbuf_addf(&b, "%d files, %.0f bytes reviewed.\n", num_of(rv, "files", 0, INT_MAX, 0),
			  jnum(rv, "bytes", 0));
	}
	if (jget(run, "error")) {
		sbuf_addf(&b, "\nError %d: ", num_of(jget(run, "error"), "status", 100, 599, 500));
		md_text(&b, jstr_or(jget(run, "error"), "error", ""));
		sbuf_addch(&b, '\n');
	}
	sbuf_addstr(&b, "\n## Tasks\n\n| task | assignee | status | attempts | findings |\n"
		       "|---|---|---|---|---|\n");
	const cJSON *t;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks")) {
		const cJSON *fl = cJSON_GetObjectItem(agg, jstr_or(t, "task_id", ""));
		char n[16] = "-";
		if (cJSON_IsArray(fl) && !strcmp(jstr_or(t, "status", ""), "done"))
			snprintf(n, sizeof(n), "%d", cJSON_GetArraySize(fl));
		else if (cJSON_IsObject(fl) && !strcmp(jstr_or(t, "status", ""), "done"))
			snprintf(n, sizeof(n), "%d files", cJSON_GetArraySize(fl));
		sbuf_addf(&b, "| %s | %s | %s | %d | %s |\n", jstr_or(t, "task_id", ""),
			  jstr_or(t, "assignee", ""), jstr_or(t, "status", ""),
			  num_of(t, "attempts", 0, INT_MAX, 0), n);
	}
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(run, "tasks"))
		if (!strcmp(jstr_or(t, "status", ""), "cancelled") ||
		    !strcmp(jstr_or(t, "status", ""), "failed")) {
			sbuf_addf(&b, "\nThe %s task %s", jstr_or(t, "task_id", ""),
				  jstr_or(t, "status", ""));
			if (jstr(t, "error")) {
				sbuf_addstr(&b, ": ");
				md_text(&b, jstr(t, "error"));
			}
			sbuf_addstr(&b, "; its findings are not in this report.\n");
		}
	if (!agg) {
		sbuf_addstr(&b, "\nThe findings come when the agents are done.\n");
		return sbuf_detach(&b);
	}
	cJSON *groups = findings_by_severity(agg);
	int total = 0;
	const cJSON *g;
	cJSON_ArrayForEach(g, groups)
		total += cJSON_GetArraySize(g);
	sbuf_addf(&b, "\n## Findings by severity (%d)\n", total);
	if (!total)
		sbuf_addstr(&b, "\nNone.\n");
	cJSON_ArrayForEach(g, groups) {
		sbuf_addf(&b, "\n### %c%s (%d)\n", g->string[0] - 'a' + 'A', g->string + 1,
			  cJSON_GetArraySize(g));
		const cJSON *f;
		cJSON_ArrayForEach(f, g) {
			long line = (long)jnum(f, "line", 0);
			sbuf_addstr(&b, "\n#### ");
			md_text(&b, jstr_or(f, "file", "?"));
			sbuf_addf(&b, ":%ld ", line);
			md_text(&b, jstr_or(f, "reference", ""));
			sbuf_addf(&b, " (%s)\n\n", jstr_or(f, "agent", ""));
			md_text(&b, jstr_or(f, "description", ""));
			sbuf_addch(&b, '\n');
			const char *fix = jstr(f, "remediation") ? jstr(f, "remediation") : jstr(f, "suggestion");
			if (fix && *fix) {
				sbuf_addstr(&b, "\nFix: ");
				md_text(&b, fix);
				sbuf_addch(&b, '\n');
			}
			const cJSON *ctx = cJSON_GetObjectItem(f, "context"), *row;
			if (cJSON_GetArraySize(ctx)) {
				sbuf_addstr(&b, "\n```\n");
				cJSON_ArrayForEach(row, ctx) {
					long l = (long)jnum(row, "line", 0);
					/* the text is sanitized; a fence in it cannot end the block */
					const char *txt = jstr_or(row, "text", "");
					sbuf_addf(&b, "%s%5ld | %s\n", l == line ? ">" : " ", l,
						  strncmp(txt, "```", 3) ? txt : "` ``");
				}
				sbuf_addstr(&b, "```\n");
			}
		}
	}
	cJSON_Delete(groups);
	const cJSON *docs = cJSON_GetObjectItem(agg, "documentation"), *d;
	sbuf_addf(&b, "\n## Documentation (%d files)\n\n", cJSON_GetArraySize(docs));
	cJSON_ArrayForEach(d, docs) {
		sbuf_addstr(&b, "- ");
		md_text(&b, d->string ? d->string : "?");
		sbuf_addf(&b, " (%zu bytes)\n", cJSON_IsString(d) ? strlen(d->valuestring) : (size_t)0);
	}
	if (!cJSON_GetArraySize(docs))
		sbuf_addstr(&b, "None.\n");
	const cJSON *notes = cJSON_GetObjectItem(rv, "notes");
	if (cJSON_GetArraySize(notes)) {
		sbuf_addstr(&b, "\n## Notes\n\n");
		cJSON_ArrayForEach(d, notes) {
			sbuf_addstr(&b, "- ");
			md_text(&b, cJSON_IsString(d) ? d->valuestring : "");
			sbuf_addch(&b, '\n');
		}
	}
	return sbuf_detach(&b);
}

cJSON *review_run_json(const cJSON *run)
{
	cJSON *j = cJSON_CreateObject();
	static const char *const keys[] = { "run_id", "codebase", "status", "started_at",
					    "finished_at" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (jstr(run, keys[i]))
			cJSON_AddStringToObject(j, keys[i], jstr(run, keys[i]));
	cJSON_AddItemToObject(j, "tasks", cJSON_Duplicate(cJSON_GetObjectItem(run, "tasks"), true));
	const cJSON *agg = jget(run, "aggregate");
	cJSON_AddItemToObject(j, "findings_by_severity",
			      agg ? findings_by_severity(agg) : cJSON_CreateObject());
	cJSON *docs = cJSON_AddArrayToObject(j, "documentation");
	const cJSON *d;
	cJSON_ArrayForEach(d, cJSON_GetObjectItem(agg, "documentation"))
		if (d->string)
			cJSON_AddItemToArray(docs, cJSON_CreateString(d->string));
	if (agg)
		cJSON_AddItemToObject(j, "aggregate", cJSON_Duplicate(agg, true));
	if (jget(run, "error"))
		cJSON_AddItemToObject(j, "error", cJSON_Duplicate(jget(run, "error"), true));
	return j;
}

void review_run_basename(const cJSON *run, char *buf, size_t size)
{
	snprintf(buf, size, "%s", jstr_or(run, "run_id", "review"));
}
