/* The analyzers behind the review agents, each a tool of the registry (so
 * that every run is counted, timed and logged): cppcheck, flawfinder,
 * shellcheck, universal-ctags, cloc, pmccabe, graphviz's dot, two
 * built-in scans (hard-coded secrets, TODO/FIXME markers) and madf's own
 * finder (review.flow, agents/review_flow.c). */
#include "agents/review.h"
#include "agents/review_priv.h"
#include "agents/review_flow.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/tools.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define TOOL_TIMEOUT_MS (10LL * 60 * 1000)
#define TOOL_MAX_OUT (64u * 1024 * 1024)

static const struct {
	const char *tool, *prog, *package;
} programs[] = {
	{ "review.cppcheck", "cppcheck", "cppcheck" },
	{ "review.flawfinder", "flawfinder", "flawfinder" },
	{ "review.shellcheck", "shellcheck", "shellcheck" },
	{ "review.ctags", "ctags", "universal-ctags" },
	{ "review.cloc", "cloc", "cloc" },
	{ "review.pmccabe", "pmccabe", "pmccabe" },
	{ "review.dot", "dot", "graphviz" },
	{ "review.gcc_analyzer", "gcc", "gcc" },
	{ "review.clang_analyzer", "clang", "clang" },
};

const char *review_tool_program(const char *tool)
{
	for (size_t i = 0; i < ARRAY_SIZE(programs); i++)
		if (!strcmp(programs[i].tool, tool))
			return programs[i].prog;
	return NULL;
}

const char *review_package_of(const char *prog)
{
	for (size_t i = 0; i < ARRAY_SIZE(programs); i++)
		if (!strcmp(programs[i].prog, prog))
			return programs[i].package;
	return prog;
}

/* "./x" -> "x" */
static const char *rel(const char *p)
{
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return p;
}

/* An analyzer's text (a file name, a message) into o at k made valid
 * UTF-8 without control characters (util_sanitize): a file name or a
 * tool's output is outside input, and the findings travel in bus
 * messages, which must be strict JSON. */
static void add_text(cJSON *o, const char *k, const char *s)
{
	char *clean = util_sanitize(s, strlen(s), false);
	cJSON_AddStringToObject(o, k, clean);
	free(clean);
}

/* argv = head... then "./file" for each file (owned strings in *hold). */
struct argv_b {
	char **v;
	size_t n;
};

static void av_add(struct argv_b *a, const char *s)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof(*a->v));
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

static void av_free(struct argv_b *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static int add_files(struct argv_b *a, const cJSON *args, char **err)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(args, "files");
	if (!cJSON_IsArray(files))
		return err_set(err, "args.files: must be an array");
	for (const cJSON *f = files->child; f; f = f->next) {
		if (!cJSON_IsString(f) || !f->valuestring[0] || f->valuestring[0] == '/')
			return err_set(err, "args.files: must be relative paths");
		char *p = xasprintf("./%s", f->valuestring);
		av_add(a, p);
		free(p);
	}
	return 0;
}

/* Analyzer processes run at once, across the agents of this process: at
 * most the CPU count (MADF_REVIEW_JOBS overrides), so that the agents'
 * analyzers run in parallel within the CPUs. */
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slot_cv = PTHREAD_COND_INITIALIZER;
static int slots_busy;

int review_slots_max(void)
{
	const char *s = getenv("MADF_REVIEW_JOBS");
	long n = s && *s ? strtol(s, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

void review_slot_take(void)
{
	int max = review_slots_max();
	pthread_mutex_lock(&slot_mu);
	while (slots_busy >= max)
		pthread_cond_wait(&slot_cv, &slot_mu);
	slots_busy++;
	pthread_mutex_unlock(&slot_mu);
}

void review_slot_give(void)
{
	pthread_mutex_lock(&slot_mu);
	slots_busy--;
	pthread_cond_signal(&slot_cv);
	pthread_mutex_unlock(&slot_mu);
}

/* Runs a's program in the root; stdout or stderr into *text. A status
 * above ok_max is a failure (the program crashed or refused). */
static int run_prog(struct argv_b *a, const char *root, int ok_max, bool want_stderr,
		    char **text, char **err)
{
	char *out = NULL, *eo = NULL;
	int st = 0;
	if (!review_have(a->v[0]))
		return err_set(err, "%s is not installed (Debian package %s; make deps)",
			       a->v[0], review_package_of(a->v[0]));
	review_slot_take();
	int r = review_exec((const char *const *)a->v, root, TOOL_TIMEOUT_MS, TOOL_MAX_OUT, &out,
			    &eo, &st, err);
	review_slot_give();
	if (r < 0)
		return -1;
	if (st == 124 || st >= 128) {
		err_set(err, st == 124 ? "%s timed out (transient)" : "%s crashed (status %d; transient)",
			a->v[0], st);
		free(out);
		free(eo);
		return -1;
	}
	if (st > ok_max) {
		char *first = util_sanitize(eo, strlen(eo) > 200 ? 200 : strlen(eo), false);
		err_set(err, "%s exited with status %d%s%s", a->v[0], st, *first ? ": " : "", first);
		free(first);
		free(out);
		free(eo);
		return -1;
	}
	if (want_stderr) {
		*text = eo;
		free(out);
	} else {
		*text = out;
		free(eo);
	}
	return 0;
}

/* Runs argv0 (the program and its fixed arguments, NULL-terminated) over
 * args.files in args.root; its stdout (stderr when stderr_too) into *text,
 * caller frees. A status above ok_exit is a failure. */
static int tool_run(const cJSON *args, const char *const *argv0, int ok_exit, bool stderr_too,
		    char **text, char **err)
{
	struct argv_b a = { 0 };
	for (size_t i = 0; argv0[i]; i++)
		av_add(&a, argv0[i]);
	int r = add_files(&a, args, err) < 0 ? -1
		: run_prog(&a, jstr(args, "root"), ok_exit, stderr_too, text, err);
	av_free(&a);
	return r;
}

/* tool_run, then its output parsed as JSON (if_empty stands for no output
 * when not NULL); *j is NULL when the output is not JSON. Caller frees *j. */
static int tool_run_json(const cJSON *args, const char *const *argv0, int ok_exit,
			 const char *if_empty, cJSON **j, char **err)
{
	char *text = NULL;
	if (tool_run(args, argv0, ok_exit, false, &text, err) < 0)
		return -1;
	*j = cJSON_Parse(if_empty && !text[0] ? if_empty : text);
	free(text);
	return 0;
}

cJSON *review_raw_new(const char *tool, const char *rule, int level, const char *file,
		      long line, const char *message, const char *cwe)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "tool", tool);
	add_text(o, "rule", rule);
	cJSON_AddNumberToObject(o, "level", level);
	add_text(o, "file", rel(file));
	cJSON_AddNumberToObject(o, "line", (double)(line > 0 ? line : 1));
	add_text(o, "message", message);
	if (cwe && *cwe)
		cJSON_AddStringToObject(o, "cwe", cwe);
	else
		cJSON_AddNullToObject(o, "cwe");
	return o;
}

static cJSON *items_result(cJSON *items)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToObject(r, "items", items);
	return r;
}

/* tool_run, then fn(items, line) for each non-empty line of the output
 * (the line is fn's to cut up); *result {"items": [...]}, caller frees. */
static int tool_lines(const cJSON *args, const char *const *argv0, int ok_exit, bool stderr_too,
		      void (*fn)(cJSON *items, char *line), cJSON **result, char **err)
{
	char *text = NULL;
	if (tool_run(args, argv0, ok_exit, stderr_too, &text, err) < 0)
		return -1;
	cJSON *items = cJSON_CreateArray();
	char *save = NULL;
	for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save))
		fn(items, ln);
	free(text);
	*result = items_result(items);
	return 0;
}

/* ---- cppcheck ---- */

static int severity_level(const char *s)
{
	if (!strcmp(s, "error"))
		return 5;
	if (!strcmp(s, "warning"))
		return 4;
	if (!strcmp(s, "portability") || !strcmp(s, "performance"))
		return 3;
	if (!strcmp(s, "style"))
		return 2;
	return 1;
}

static void cppcheck_line(cJSON *items, char *ln)
{
	char *f[6];
	int k = 0;
	char *s2 = NULL;
	for (char *t = strtok_r(ln, "\t", &s2); t && k < 6; t = k < 5 ? strtok_r(NULL, "\t", &s2) : strtok_r(NULL, "\n", &s2))
		f[k++] = t;
	if (k < 6 || !strcmp(f[3], "missingInclude") || !strcmp(f[3], "missingIncludeSystem") ||
	    !strcmp(f[2], "information"))
		return;
	/* the rest of the line is the message, tabs included */
	char *cwe = atoi(f[4]) > 0 ? xasprintf("CWE-%d", atoi(f[4])) : NULL;
	cJSON_AddItemToArray(items, review_raw_new("cppcheck", f[3], severity_level(f[2]), f[0],
					    atol(f[1]), f[5], cwe));
	free(cwe);
}

/* cppcheck's runs, per registry: an identical call (the critical and the
 * improvement agents ask for the same files) waits for the run in flight
 * or takes its result instead of running cppcheck again; the results go
 * with review_tools_release, at the end of the review. */
struct memo {
	const void *owner; /* the registry */
	char *key;
	bool done;
	int rc;
	cJSON *result;
	char *err;
	struct memo *next;
};
static pthread_mutex_t memo_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t memo_cv = PTHREAD_COND_INITIALIZER;
static struct memo *memos;

/* The memo's outcome, copied for one caller. */
static int memo_copy(const struct memo *m, cJSON **result, char **err)
{
	if (m->rc < 0)
		return err_set(err, "%s", m->err ? m->err : "failed");
	*result = cJSON_Duplicate(m->result, true);
	return 0;
}

void review_tools_release(const struct tools *t)
{
	pthread_mutex_lock(&memo_mu);
	for (struct memo **p = &memos; *p;) {
		struct memo *m = *p;
		if (m->owner == t && m->done) {
			*p = m->next;
			free(m->key);
			cJSON_Delete(m->result);
			free(m->err);
			free(m);
		} else {
			p = &m->next;
		}
	}
	pthread_mutex_unlock(&memo_mu);
}

static int tool_cppcheck(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	static const char *const argv0[] = {
		"cppcheck", "--enable=warning,style,performance,portability", "--inline-suppr",
		"--quiet", "--template={file}\\t{line}\\t{severity}\\t{id}\\t{cwe}\\t{message}",
		NULL
	};
	char *key = cJSON_PrintUnformatted(args);
	pthread_mutex_lock(&memo_mu);
	struct memo *m = memos;
	/* a failed run is not reused: a retry runs cppcheck again */
	while (m && (m->owner != ctx || strcmp(m->key, key) || (m->done && m->rc < 0)))
		m = m->next;
	if (m) {
		free(key);
		while (!m->done)
			pthread_cond_wait(&memo_cv, &memo_mu);
		int r = memo_copy(m, result, err);
		pthread_mutex_unlock(&memo_mu);
		return r;
	}
	m = xcalloc(1, sizeof(*m));
	m->owner = ctx;
	m->key = key;
	m->next = memos;
	memos = m;
	pthread_mutex_unlock(&memo_mu);
	cJSON *res = NULL;
	char *e = NULL;
	int r = tool_lines(args, argv0, 0, true, cppcheck_line, &res, &e);
	pthread_mutex_lock(&memo_mu);
	m->done = true;
	m->rc = r;
	m->result = res;
	m->err = e;
	r = memo_copy(m, result, err);
	pthread_cond_broadcast(&memo_cv);
	pthread_mutex_unlock(&memo_mu);
	return r;
}

/* ---- flawfinder (SARIF output) ---- */

static char *first_cwe(const char *s)
{
	const char *p = strstr(s, "CWE-");
	if (!p || !isdigit((unsigned char)p[4]))
		return NULL;
	size_t n = 4;
	while (isdigit((unsigned char)p[n]))
		n++;
	return xstrndup(p, n);
}

static int tool_flawfinder(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const argv0[] = { "flawfinder", "--sarif", "--quiet", NULL };
	cJSON *j = NULL;
	if (tool_run_json(args, argv0, 0, NULL, &j, err) < 0)
		return -1;
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(j, "runs");
	const cJSON *res = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "results");
	if (!cJSON_IsArray(res)) {
		cJSON_Delete(j);
		return err_set(err, "flawfinder: its SARIF output has no results");
	}
	cJSON *items = cJSON_CreateArray();
	const cJSON *r;
	cJSON_ArrayForEach(r, res) {
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(r, "message"), "text");
		const cJSON *loc = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "locations"), 0),
			"physicalLocation");
		const cJSON *uri = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(loc, "artifactLocation"), "uri");
		const cJSON *line = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(loc, "region"), "startLine");
		const cJSON *rank = cJSON_GetObjectItemCaseSensitive(r, "rank");
		if (!cJSON_IsString(msg) || !cJSON_IsString(uri) || !cJSON_IsNumber(line))
			continue;
		/* "category/name:warning" */
		const char *colon = strchr(msg->valuestring, ':');
		char *rule = colon ? xstrndup(msg->valuestring, (size_t)(colon - msg->valuestring))
				   : xstrdup("flawfinder");
		char *cwe = first_cwe(msg->valuestring);
		/* rank 0..1; a number out of range (outside input) is clamped */
		int level = cJSON_IsNumber(rank) ?
			    (int)lround(fmin(fmax(rank->valuedouble, 0.0), 1.0) * 5) : 1;
		long ln = 0; /* none, or past an int: review_raw_new's 1 */
		jint(cJSON_GetObjectItemCaseSensitive(loc, "region"), "startLine", 1, INT_MAX, &ln);
		cJSON_AddItemToArray(items, review_raw_new("flawfinder", rule, level, uri->valuestring,
						    ln, colon ? colon + 1 : msg->valuestring, cwe));
		free(rule);
		free(cwe);
	}
	cJSON_Delete(j);
	*result = items_result(items);
	return 0;
}

/* ---- shellcheck ---- */

static int tool_shellcheck(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const argv0[] = { "shellcheck", "-f", "json1", NULL };
	cJSON *j = NULL;
	/* 1: findings; above: it could not check */
	if (tool_run_json(args, argv0, 1, NULL, &j, err) < 0)
		return -1;
	const cJSON *cs = cJSON_GetObjectItemCaseSensitive(j, "comments");
	if (!cJSON_IsArray(cs)) {
		cJSON_Delete(j);
		return err_set(err, "shellcheck: unexpected output");
	}
	cJSON *items = cJSON_CreateArray();
	const cJSON *c;
	cJSON_ArrayForEach(c, cs) {
		const cJSON *file = cJSON_GetObjectItemCaseSensitive(c, "file");
		const cJSON *line = cJSON_GetObjectItemCaseSensitive(c, "line");
		const cJSON *lvl = cJSON_GetObjectItemCaseSensitive(c, "level");
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(c, "code");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(c, "message");
		if (!cJSON_IsString(file) || !cJSON_IsNumber(line) || !cJSON_IsString(lvl) ||
		    !cJSON_IsNumber(code) || !cJSON_IsString(msg))
			continue;
		char rule[32];
		snprintf(rule, sizeof(rule), "SC%.0f", trunc(code->valuedouble));
		long ln = 0;
		jint(c, "line", 1, INT_MAX, &ln);
		int level = !strcmp(lvl->valuestring, "error") ? 4 :
			    !strcmp(lvl->valuestring, "warning") ? 3 :
			    !strcmp(lvl->valuestring, "info") ? 2 : 1;
		cJSON_AddItemToArray(items, review_raw_new("shellcheck", rule, level, file->valuestring,
						    ln, msg->valuestring, NULL));
	}
	cJSON_Delete(j);
	*result = items_result(items);
	return 0;
}

/* ---- universal-ctags: functions and their spans ---- */

static void ctags_line(cJSON *items, char *ln)
{
	cJSON *t = cJSON_Parse(ln);
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(t, "kind");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(t, "path");
	const cJSON *line = cJSON_GetObjectItemCaseSensitive(t, "line");
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(t, "end");
	if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "function") &&
	    cJSON_IsString(name) && cJSON_IsString(path) && cJSON_IsNumber(line)) {
		cJSON *o = cJSON_CreateObject();
		add_text(o, "name", name->valuestring);
		add_text(o, "file", rel(path->valuestring));
		cJSON_AddNumberToObject(o, "line", line->valuedouble);
		cJSON_AddNumberToObject(o, "end", cJSON_IsNumber(end) ? end->valuedouble
								    : line->valuedouble);
		cJSON_AddItemToArray(items, o);
	}
	cJSON_Delete(t);
}

static int tool_ctags(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const argv0[] = {
		"ctags", "--output-format=json", "--fields=+ne", "-o", "-", NULL
	};
	return tool_lines(args, argv0, 0, false, ctags_line, result, err);
}

/* ---- cloc: lines per file ---- */

static int tool_cloc(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const argv0[] = { "cloc", "--json", "--by-file", "--quiet", NULL };
	cJSON *j = NULL;
	if (tool_run_json(args, argv0, 0, "{}", &j, err) < 0)
		return -1;
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return err_set(err, "cloc: unexpected output");
	}
	cJSON *items = cJSON_CreateArray();
	const cJSON *e;
	cJSON_ArrayForEach(e, j) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
		const cJSON *lang = cJSON_GetObjectItemCaseSensitive(e, "language");
		if (!strcmp(e->string, "header") || !strcmp(e->string, "SUM") ||
		    !cJSON_IsNumber(code) || !cJSON_IsString(lang))
			continue;
		cJSON *o = cJSON_CreateObject();
		add_text(o, "file", rel(e->string));
		add_text(o, "language", lang->valuestring);
		cJSON_AddNumberToObject(o, "code", code->valuedouble);
		const cJSON *cm = cJSON_GetObjectItemCaseSensitive(e, "comment");
		cJSON_AddNumberToObject(o, "comment", cJSON_IsNumber(cm) ? cm->valuedouble : 0);
		cJSON_AddItemToArray(items, o);
	}
	cJSON_Delete(j);
	*result = items_result(items);
	return 0;
}

/* ---- pmccabe: complexity per function ---- */

static void pmccabe_line(cJSON *items, char *ln)
{
	/* modified traditional statements first_line lines file(line): name */
	long mod, trad, stmts, first, nlines;
	int used = 0;
	if (sscanf(ln, "%ld %ld %ld %ld %ld %n", &mod, &trad, &stmts, &first, &nlines,
		   &used) < 5 || !used)
		return;
	char *loc = ln + used, *paren = strrchr(loc, '('), *colon = strstr(loc, "): ");
	if (!paren || !colon || colon < paren)
		return;
	char *file = xstrndup(loc, (size_t)(paren - loc));
	cJSON *o = cJSON_CreateObject();
	add_text(o, "file", rel(file));
	cJSON_AddNumberToObject(o, "line", (double)first);
	add_text(o, "name", colon + 3);
	cJSON_AddNumberToObject(o, "complexity", (double)trad);
	cJSON_AddNumberToObject(o, "lines", (double)nlines);
	cJSON_AddItemToArray(items, o);
	free(file);
}

static int tool_pmccabe(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const argv0[] = { "pmccabe", NULL };
	return tool_lines(args, argv0, 0, false, pmccabe_line, result, err);
}

/* ---- dot: a graph to SVG ---- */

static int tool_dot(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(args, "dot");
	if (!cJSON_IsString(g))
		return err_set(err, "args.dot: must be a string");
	if (!review_have("dot"))
		return err_set(err, "dot is not installed (Debian package graphviz; make deps)");
	char tmpl[] = "/tmp/madf-review-XXXXXX";
	int fd = mkstemp(tmpl);
	if (fd < 0)
		return err_set(err, "cannot create a temporary file");
	size_t n = strlen(g->valuestring);
	bool ok = write(fd, g->valuestring, n) == (ssize_t)n;
	close(fd);
	struct argv_b a = { 0 };
	av_add(&a, "dot");
	av_add(&a, "-Tsvg");
	av_add(&a, tmpl);
	char *svg = NULL;
	int r = ok ? run_prog(&a, NULL, 0, false, &svg, err) : err_set(err, "cannot write the graph");
	av_free(&a);
	unlink(tmpl);
	if (r < 0)
		return -1;
	*result = cJSON_CreateObject();
	cJSON_AddStringToObject(*result, "svg", svg);
	free(svg);
	return 0;
}

/* ---- built-in scans over the files' text ---- */

/* Calls fn for each line of each file (text NUL-terminated, no newline). */
static int each_line(const cJSON *args, void (*fn)(void *c, const char *file, long line,
						  const char *text), void *c, char **err)
{
	const char *root = jstr(args, "root");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(args, "files");
	if (!root || !cJSON_IsArray(files))
		return err_set(err, "args: root and files are required");
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		if (!cJSON_IsString(f))
			continue;
		char *p = xasprintf("%s/%s", root, f->valuestring), *buf = NULL;
		size_t len = 0;
		if (util_read_file(p, REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) == 0) {
			long line = 1;
			char *s = buf;
			while (s < buf + len) {
				char *nl = memchr(s, '\n', (size_t)(buf + len - s));
				if (nl)
					*nl = 0;
				fn(c, f->valuestring, line++, s);
				if (!nl)
					break;
				s = nl + 1;
			}
		}
		free(buf);
		free(p);
	}
	return 0;
}

static double entropy(const char *s, size_t n)
{
	unsigned counts[256] = { 0 };
	for (size_t i = 0; i < n; i++)
		counts[(unsigned char)s[i]]++;
	double h = 0;
	for (int i = 0; i < 256; i++)
		if (counts[i]) {
			double p = (double)counts[i] / (double)n;
			h -= p * log2(p);
		}
	return h;
}

/* Whether the n bytes at s are a plausible body of an "sk-" key: letters
 * and digits both, and not a placeholder's few characters repeated
 * ("sk-xxxxxxxxxxxxxxxxxxxxxxxx", "sk-000...0"): 2.5 bits per character or
 * more. */
static bool sk_body_plausible(const char *s, size_t n)
{
	bool digit = false, letter = false;
	for (size_t i = 0; i < n; i++) {
		digit = digit || isdigit((unsigned char)s[i]);
		letter = letter || isalpha((unsigned char)s[i]);
	}
	return digit && letter && entropy(s, n) >= 2.5;
}

/* A well-known format: re (POSIX extended); with body_ok, a match counts
 * only when its subexpression body passes it (every match on the line is
 * tried). */
static const struct {
	const char *name, *re;
	size_t body;
	bool (*body_ok)(const char *s, size_t n);
} secret_patterns[] = {
	{ "an AWS access key id", "(AKIA|ASIA)[0-9A-Z]{16}", 0, NULL },
	{ "a private key", "-----BEGIN ([A-Z]+ )?PRIVATE KEY-----", 0, NULL },
	{ "a GitHub token", "gh[pousr]_[A-Za-z0-9]{36}", 0, NULL },
	{ "a Slack token", "xox[baprs]-[A-Za-z0-9-]{10,}", 0, NULL },
	/* "sk-" at the start or after a character that is neither a letter, a
	 * digit nor a dash: not the tail of a word ("task-", "disk-", "desk-") */
	{ "an API secret key", "(^|[^A-Za-z0-9-])sk-([A-Za-z0-9]{20,})", 2, sk_body_plausible },
	{ "a Google API key", "AIza[0-9A-Za-z_-]{35}", 0, NULL },
};

/* Whether pattern i matches somewhere in text. */
static bool secret_pattern_match(const regex_t *re, size_t i, const char *text)
{
	if (!secret_patterns[i].body_ok)
		return regexec(re, text, 0, NULL, 0) == 0;
	regmatch_t m[4];
	size_t k = secret_patterns[i].body;
	int flags = 0;
	for (const char *p = text; regexec(re, p, k + 1, m, flags) == 0; flags = REG_NOTBOL) {
		if (m[k].rm_so >= 0 &&
		    secret_patterns[i].body_ok(p + m[k].rm_so, (size_t)(m[k].rm_eo - m[k].rm_so)))
			return true;
		/* the next match starts after this one's body (it ends at a
		 * character that cannot continue it) */
		regoff_t next = m[k].rm_eo > 0 ? m[k].rm_eo : m[0].rm_eo;
		if (next <= 0 || !p[next])
			break;
		p += next;
	}
	return false;
}

struct secrets_ctx {
	regex_t re[ARRAY_SIZE(secret_patterns)];
	cJSON *items;
};

/* Where the first word that says key, secret, token, password or
 * credential ends in the n bytes at s (any case), or SIZE_MAX: none. */
static size_t secret_word_end(const char *s, size_t n)
{
	static const char *const words[] = { "key", "secret", "token", "passw", "credential", NULL };
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		for (size_t w = 0; words[w]; w++) {
			size_t k = strlen(words[w]);
			if (i + k <= n && i + k < best && !strncasecmp(s + i, words[w], k))
				best = i + k;
		}
	return best;
}

/* Whether the n bytes at s name a variable rather than hold a value: words
 * of one case joined by underscores (MADF_LLM_API_KEY, aws_secret_key), or
 * a reference to one (${API_KEY}, $TOKEN, "$D/serve-tokens"). */
static bool is_var_name(const char *s, size_t n)
{
	if (n >= 2 && s[0] == '$') {
		if (s[1] == '{')
			return true;
		size_t i = 1;
		while (i < n && (isupper((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
				 s[i] == '_'))
			i++;
		return i > 1 && !isdigit((unsigned char)s[1]) && (i == n || s[i] == '/');
	}
	if (!n || !isalpha((unsigned char)s[0]) || s[n - 1] == '_')
		return false;
	bool upper = false, lower = false, under = false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '_')
			under = true;
		else if (isupper(c))
			upper = true;
		else if (islower(c))
			lower = true;
		else if (!isdigit(c))
			return false;
	}
	return under && !(upper && lower);
}

/* Whether the n bytes at s are the NAME of a "NAME=VALUE": a variable's
 * name, or one upper-case word (TOKEN). */
static bool is_env_name(const char *s, size_t n)
{
	if (is_var_name(s, n))
		return s[0] != '$';
	for (size_t i = 0; i < n; i++)
		if (!isupper((unsigned char)s[i]) && (!i || !isdigit((unsigned char)s[i])))
			return false;
	return n > 0;
}

/* Whether the literal opening at q (in line) is the first argument of a
 * call whose name says env (getenv, secure_getenv, setenv, env_get,
 * os.environ.get, os.environ[...]): the name of a variable. */
static bool env_argument(const char *line, const char *q)
{
	const char *p = q;
	while (p > line && isspace((unsigned char)p[-1]))
		p--;
	if (p == line || (p[-1] != '(' && p[-1] != '['))
		return false;
	p--;
	while (p > line && isspace((unsigned char)p[-1]))
		p--;
	const char *end = p;
	while (p > line && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))
		p--;
	for (; p + 3 <= end; p++)
		if (tolower((unsigned char)p[0]) == 'e' && tolower((unsigned char)p[1]) == 'n' &&
		    tolower((unsigned char)p[2]) == 'v')
			return true;
	return false;
}

/* The entropy of the string literal between q and e (its quotes) on line
 * when it is a hard-coded secret's value, or 0: 16 or more characters with
 * no space, 3.5 bits per character or more, assigned to a name that says
 * key, secret, token or password (the line before it; or NAME in a
 * "NAME=VALUE" literal, whose VALUE is the value). A variable's name (a
 * getenv() argument, MADF_LLM_API_KEY, ${API_KEY}) is no value, nor is a
 * regular expression (a bracket expression with its count), nor text with
 * a quote or a control character in it (the value read with its escapes:
 * "\"published_at\"" is 14 characters). */
static double literal_secret(const char *line, size_t word_end, const char *q, const char *e)
{
	const char *v = q + 1;
	size_t n = (size_t)(e - v);
	bool named = word_end <= (size_t)(q - line);
	const char *eq = memchr(v, '=', n);
	if (eq && eq > v && eq + 1 < e && eq[1] != '=' && is_env_name(v, (size_t)(eq - v))) {
		named = named || secret_word_end(v, (size_t)(eq - v)) != SIZE_MAX;
		n -= (size_t)(eq + 1 - v);
		v = eq + 1;
	} else if (env_argument(line, q)) {
		return 0;
	}
	/* ${NAME:-DEFAULT} (or :=): the default is a value */
	const char *close = n > 2 && v[0] == '$' && v[1] == '{' ? memchr(v, '}', n) : NULL;
	for (const char *d = v + 2; close && d + 1 < close; d++)
		if (d[0] == ':' && (d[1] == '-' || d[1] == '=')) {
			v = d + 2;
			n = (size_t)(close - v);
			break;
		}
	if (n < 16 || !named || is_var_name(v, n))
		return 0;
	/* the value as the program has it: \" is ", \n a line break */
	char *val = xmalloc(n + 1);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = v[i];
		if (ch == '\\' && i + 1 < n && strchr("ntrvfab0", v[i + 1])) {
			m = 0;
			break; /* a control character: text, no key */
		}
		if (ch == '\\' && i + 1 < n)
			ch = v[++i];
		/* a space or a quote: text (a message, JSON); no key */
		if (isspace((unsigned char)ch) || ch == '"') {
			m = 0;
			break;
		}
		val[m++] = ch;
	}
	bool regex = false;
	for (size_t i = 0; i + 1 < m && !regex; i++)
		regex = val[i] == ']' && memchr("{+*?", val[i + 1], 4);
	double h = m >= 16 && !regex ? entropy(val, m) : 0;
	free(val);
	return h >= 3.5 ? h : 0;
}

static void secrets_line(void *c, const char *file, long line, const char *text)
{
	struct secrets_ctx *sc = c;
	for (size_t i = 0; i < ARRAY_SIZE(secret_patterns); i++) {
		if (secret_pattern_match(&sc->re[i], i, text)) {
			char *m = xasprintf("hard-coded secret: %s matches its well-known "
					    "pattern (the value is withheld)", secret_patterns[i].name);
			cJSON_AddItemToArray(sc->items, review_raw_new("secrets", "pattern", 5, file, line, m,
								"CWE-798"));
			free(m);
			return;
		}
	}
	size_t word_end = secret_word_end(text, strlen(text));
	if (word_end == SIZE_MAX)
		return; /* nothing here names a secret */
	/* each string literal in double quotes (a \" within is no end) */
	for (const char *q = strchr(text, '"'); q; ) {
		const char *e = q + 1;
		while (*e && *e != '"')
			e += e[0] == '\\' && e[1] ? 2 : 1;
		if (!*e)
			break;
		double h = literal_secret(text, word_end, q, e);
		if (h > 0) {
			char *m = xasprintf("hard-coded secret: a high-entropy string (%.1f bits per "
					    "character) assigned to a name that says key, secret, "
					    "token or password (the value is withheld)", h);
			cJSON_AddItemToArray(sc->items, review_raw_new("secrets", "entropy", 4, file, line, m,
								"CWE-798"));
			free(m);
			return;
		}
		q = strchr(e + 1, '"');
	}
}

static int tool_secrets(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	struct secrets_ctx sc;
	for (size_t i = 0; i < ARRAY_SIZE(secret_patterns); i++)
		if (regcomp(&sc.re[i], secret_patterns[i].re,
			    REG_EXTENDED | (secret_patterns[i].body_ok ? 0 : REG_NOSUB)) != 0) {
			for (size_t j = 0; j < i; j++)
				regfree(&sc.re[j]);
			return err_set(err, "secrets: bad pattern %zu", i);
		}
	sc.items = cJSON_CreateArray();
	int r = each_line(args, secrets_line, &sc, err);
	for (size_t i = 0; i < ARRAY_SIZE(secret_patterns); i++)
		regfree(&sc.re[i]);
	if (r < 0) {
		cJSON_Delete(sc.items);
		return -1;
	}
	*result = items_result(sc.items);
	return 0;
}

static void markers_line(void *c, const char *file, long line, const char *text)
{
	static const char *const marks[] = { "TODO", "FIXME", "XXX", "HACK", NULL };
	const char *comment = strstr(text, "//");
	const char *c2 = strstr(text, "/*"), *c3 = strchr(text, '#');
	if (!comment || (c2 && c2 < comment))
		comment = c2;
	const char *t = text;
	while (*t == ' ' || *t == '\t')
		t++;
	if (!comment && *t == '*')
		comment = t;
	/* shell comments: # not followed by include/define etc. */
	if (!comment && c3 && (c3 == t || c3[-1] == ' ' || c3[-1] == '\t') && c3[1] != '!' &&
	    strncmp(c3, "#include", 8) && strncmp(c3, "#define", 7) && strncmp(c3, "#if", 3))
		comment = c3;
	if (!comment)
		return;
	for (size_t i = 0; marks[i]; i++) {
		const char *m = strstr(comment, marks[i]);
		size_t n = strlen(marks[i]);
		if (!m || (m > text && isalnum((unsigned char)m[-1])) || isalnum((unsigned char)m[n]))
			continue;
		const char *rest = m + n;
		while (*rest == ':' || *rest == ' ')
			rest++;
		char *clean = util_sanitize(rest, strlen(rest) > 160 ? 160 : strlen(rest), false);
		size_t cl = strlen(clean);
		while (cl && (clean[cl - 1] == '/' || clean[cl - 1] == '*' || clean[cl - 1] == ' '))
			clean[--cl] = 0;
		cJSON_AddItemToArray(c, review_raw_new("markers", marks[i], 1, file, line, clean, "CWE-546"));
		free(clean);
		return;
	}
}

static int tool_markers(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	cJSON *items = cJSON_CreateArray();
	if (each_line(args, markers_line, items, err) < 0) {
		cJSON_Delete(items);
		return -1;
	}
	*result = items_result(items);
	return 0;
}

static const char FILES_SCHEMA[] =
	"{\"type\":\"object\",\"properties\":{\"root\":{\"type\":\"string\"},"
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
	"\"required\":[\"root\",\"files\"]}";

int review_tools_register(struct tools *t, char **err)
{
	const struct tool_def defs[] = {
		{ "review.cppcheck", "cppcheck over C/C++ files: defects with CWE ids", FILES_SCHEMA, NULL, NULL, tool_cppcheck },
		{ "review.flawfinder", "flawfinder over C/C++ files: risky calls with CWE ids", FILES_SCHEMA, NULL, NULL, tool_flawfinder },
		{ "review.shellcheck", "shellcheck over shell scripts", FILES_SCHEMA, NULL, NULL, tool_shellcheck },
		{ "review.ctags", "universal-ctags: the functions and their line spans", FILES_SCHEMA, NULL, NULL, tool_ctags },
		{ "review.cloc", "cloc: code, comment lines and language per file", FILES_SCHEMA, NULL, NULL, tool_cloc },
		{ "review.pmccabe", "pmccabe: cyclomatic complexity per function", FILES_SCHEMA, NULL, NULL, tool_pmccabe },
		{ "review.dot", "graphviz dot: a graph to SVG",
		  "{\"type\":\"object\",\"properties\":{\"dot\":{\"type\":\"string\"}},\"required\":[\"dot\"]}",
		  NULL, NULL, tool_dot },
		{ "review.secrets", "hard-coded keys and tokens by well-known patterns and entropy", FILES_SCHEMA, NULL, NULL, tool_secrets },
		{ "review.markers", "TODO, FIXME, XXX and HACK comments", FILES_SCHEMA, NULL, NULL, tool_markers },
		{ "review.flow", "madf's own finder: outside input followed to commands (CWE-78) and "
		  "format strings (CWE-134) across functions and files; memory leaks (CWE-401)", FILES_SCHEMA, NULL, NULL,
		  review_flow_tool },
	};
	for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
		if (tools_register(t, &defs[i], t, err) < 0)
			return -1;
	return review_analyzers_register(t, err);
}
