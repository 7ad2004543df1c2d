/* The debt, improvement and critical agents: their input checked, the
 * analyzers called through the tool registry, raw hits turned into
 * findings (the critical agent keeps what it can stand behind and says
 * why), and the worker roles that answer review tasks over the bus. */
#include "agents/review.h"
#include "agents/review_priv.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/finding.h"
#include "core/message.h"
#include "core/schema.h"
#include "core/util.h"
#include "core/banned.h"

#define COMPLEXITY_MAX 10  /* pmccabe's traditional McCabe number */
#define FILE_LINES_MAX 1000 /* cloc's code lines per file */

static const char *const part_names[REVIEW_NPARTS] = { "documentation", "debt", "improvement",
							 "critical" };
static const char *const part_agents[REVIEW_NPARTS] = { "review_documentation", "review_debt",
							  "review_improvement", "review_critical" };

const char *review_part_name(enum review_part p)
{
	return (unsigned)p < REVIEW_NPARTS ? part_names[p] : "unknown";
}

const char *review_part_agent(enum review_part p)
{
	return (unsigned)p < REVIEW_NPARTS ? part_agents[p] : "unknown";
}

int review_part_from_name(const char *s)
{
	for (int i = 0; s && i < REVIEW_NPARTS; i++)
		if (!strcmp(s, part_names[i]) || !strcmp(s, part_agents[i]))
			return i;
	return -1;
}

/* ---- the input ---- */

static const struct field_spec input_fields[] = {
	{ "root",         FK_STR,      REQ | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "files",        FK_STR_LIST, REQ,              0, 0, NULL, NULL },
	{ "checklist",    FK_STR_LIST, OPT,              0, 0, NULL, NULL },
	{ "max_findings", FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
};
static const struct schema input_schema = SCHEMA_CLOSED(input_fields, NULL);

/* The checks each agent knows (its checklist items). */
static const char *const checks_debt[] = { "markers", "complexity", "size", NULL };
static const char *const checks_improvement[] = { "cppcheck", "shellcheck", NULL };
static const char *const checks_critical[] = { "cppcheck", "flawfinder", "secrets", "gcc-analyzer",
					       "clang-analyzer", "madf-flow", NULL };
static const char *const checks_docs[] = { "readme", "contributing", "diagram", "openapi", NULL };

static const char *const *part_checks(enum review_part p)
{
	switch (p) {
	case REVIEW_DEBT: return checks_debt;
	case REVIEW_IMPROVEMENT: return checks_improvement;
	case REVIEW_CRITICAL: return checks_critical;
	case REVIEW_DOCUMENTATION:
	case REVIEW_NPARTS: break;
	}
	return checks_docs;
}

/* 0, or 400 with *err naming the field and the rule. */
int review_input_check(enum review_part part, const cJSON *input, char **err)
{
	struct msg_errors e = { 0 };
	int n = schema_validate(&input_schema, input, "", &e);
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(input, "files");
	size_t i = 0;
	const cJSON *f;
	if (!n && cJSON_IsArray(files))
		cJSON_ArrayForEach(f, files) {
			const char *s = f->valuestring;
			if (!s[0] || s[0] == '/' || !strncmp(s, "../", 3) || strstr(s, "/../")) {
				msg_errors_add(&e, "files[%zu]: must be a path relative to root, inside it", i);
				n++;
			}
			i++;
		}
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(input, "checklist");
	i = 0;
	if (!n && cJSON_IsArray(cl))
		cJSON_ArrayForEach(f, cl) {
			const char *const *k = part_checks(part);
			size_t j = 0;
			while (k[j] && strcmp(k[j], f->valuestring))
				j++;
			if (!k[j]) {
				struct sbuf b;
				sbuf_init(&b);
				for (j = 0; k[j]; j++)
					sbuf_addf(&b, "%s%s", j ? ", " : "", k[j]);
				msg_errors_add(&e, "checklist[%zu]: must be one of %s", i, b.data);
				sbuf_release(&b);
				n++;
			}
			i++;
		}
	if (!n)
		return 0;
	*err = msg_errors_join(&e);
	msg_errors_release(&e);
	return 400;
}

static bool wants(const cJSON *input, const char *check)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(input, "checklist");
	if (!cJSON_IsArray(cl))
		return true;
	const cJSON *c;
	cJSON_ArrayForEach(c, cl)
		if (!strcmp(c->valuestring, check))
			return true;
	return false;
}

/* ---- calling the analyzers ---- */

struct work {
	struct tools *tools;
	const char *agent, *root;
	cJSON *notes, *status; /* status: {"tool": "ok" | "missing" | "failed: ..."} */
	const struct review_progress *prog; /* hears each analyzer's start; may be NULL */
};

/* Files of one language (lang NULL: all; utf8_only: valid UTF-8 only). */
static cJSON *files_of(struct work *w, const cJSON *input, const char *lang, bool utf8_only,
		       const char *tool)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(input, "files")) {
		bool utf8;
		const char *l = review_file_lang(w->root, f->valuestring, &utf8);
		if (lang && strcmp(l, lang))
			continue;
		if (utf8_only && !utf8) {
			review_note(w->notes, "%s: not valid UTF-8: %s skipped it", f->valuestring, tool);
			continue;
		}
		cJSON_AddItemToArray(out, cJSON_CreateString(f->valuestring));
	}
	return out;
}

/* Calls tool over files; its items (new), or NULL with the tool's state
 * noted: missing (what was skipped) or failed. A transient failure
 * (timeout, crash) is tried again, twice at most. */
static cJSON *call(struct work *w, const char *tool, cJSON *files, const char *skipped)
{
	if (!cJSON_GetArraySize(files)) {
		cJSON_Delete(files);
		return cJSON_CreateArray();
	}
	if (w->prog && w->prog->fn) {
		char *line = xasprintf("%s on %d file%s", strchr(tool, '.') ? strchr(tool, '.') + 1 : tool,
				       cJSON_GetArraySize(files), cJSON_GetArraySize(files) == 1 ? "" : "s");
		w->prog->fn(w->prog->ctx, line);
		free(line);
	}
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "root", w->root);
	cJSON_AddItemToObject(args, "files", files);
	cJSON *res = NULL;
	char *err = NULL;
	int r = -1;
	for (int attempt = 0; attempt < 3; attempt++) {
		free(err);
		err = NULL;
		r = tools_call(w->tools, w->agent, tool, args, &res, &err);
		if (r == 0 || !err || (!strstr(err, "(transient)") && !strstr(err, "transient)")))
			break;
		review_note(w->notes, "%s: %s; attempt %d of 3", tool, err, attempt + 1);
	}
	cJSON_Delete(args);
	const char *name = strchr(tool, '.') ? strchr(tool, '.') + 1 : tool;
	cJSON_DeleteItemFromObjectCaseSensitive(w->status, name);
	if (r < 0) {
		bool missing = err && strstr(err, "is not installed");
		char *st = missing ? xstrdup("missing") : xasprintf("failed: %s", err ? err : "?");
		cJSON_AddStringToObject(w->status, name, st);
		free(st);
		review_note(w->notes, "%s %s: skipped %s", name, missing ? "is not installed (make deps installs it)" : "failed", skipped);
		free(err);
		return NULL;
	}
	free(err);
	cJSON_AddStringToObject(w->status, name, "ok");
	cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(res, "items");
	/* the tool's own notes (a file it skipped, and why) */
	const cJSON *note;
	cJSON_ArrayForEach(note, cJSON_GetObjectItemCaseSensitive(res, "notes"))
		if (cJSON_IsString(note))
			review_note(w->notes, "%s", note->valuestring);
	cJSON_Delete(res);
	return cJSON_IsArray(items) ? items : (cJSON_Delete(items), cJSON_CreateArray());
}

/* " in function f()" when ctags knows the function holding file:line. */
static char *in_function(const cJSON *funcs, const char *file, long line)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, funcs)
		if (!strcmp(review_str(f, "file"), file) && line >= (long)jnum(f, "line", 0) &&
		    line <= (long)jnum(f, "end", 0))
			return xasprintf(" in %s()", review_str(f, "name"));
	return xstrdup("");
}

static cJSON *functions(struct work *w, const cJSON *input)
{
	cJSON *f = call(w, "review.ctags", files_of(w, input, "c", false, "ctags"),
			"mapping findings to functions");
	return f ? f : cJSON_CreateArray();
}

static void add_finding(cJSON *out, enum finding_type t, const char *sev, const char *desc,
			const char *file, long line, const char *advice, const char *ref)
{
	char *d = util_sanitize(desc, strlen(desc), false);
	char *a = util_sanitize(advice, strlen(advice), false);
	cJSON *f = finding_new(t, sev, d, file, line, a, ref);
	if (f)
		cJSON_AddItemToArray(out, f);
	free(d);
	free(a);
}

/* ---- critical ---- */

static int raw_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	int c = strcmp(review_str(x, "file"), review_str(y, "file"));
	if (c)
		return c;
	double d = jnum(x, "line", 0) - jnum(y, "line", 0);
	return d < 0 ? -1 : d > 0;
}

/* Sorted array of pointers into arr (caller frees the array only). */
static cJSON **sorted(const cJSON *arr, size_t *n)
{
	*n = (size_t)cJSON_GetArraySize(arr);
	cJSON **v = xcalloc(*n + 1, sizeof(*v));
	size_t i = 0;
	cJSON *c;
	cJSON_ArrayForEach(c, arr)
		v[i++] = c;
	if (*n)
		qsort(v, *n, sizeof(*v), raw_cmp);
	return v;
}


/* The critical agent's analyzers, run at once (each within the analyzer
 * slots): its checklist item, tool, and what is skipped without it. */
static const struct {
	const char *check, *tool, *skipped, *lang;
	bool utf8_only;
} crit_tools[] = {
	{ "cppcheck", "review.cppcheck", "C defect checks (double free, bounds, null pointers)", "c", false },
	{ "flawfinder", "review.flawfinder", "risky-call checks (format strings, command injection)", "c", true },
	{ "secrets", "review.secrets", "the secrets scan", NULL, false },
	{ "gcc-analyzer", "review.gcc_analyzer", "gcc's path-sensitive checks (double free, use "
	  "after free, NULL dereference, leaks, buffer sizes)", "c", false },
	{ "clang-analyzer", "review.clang_analyzer", "clang's path-sensitive checks (memory, NULL, "
	  "bounds, tainted format strings and commands)", "c", false },
	{ "madf-flow", "review.flow", "madf's own finder (outside input followed to commands and "
	  "format strings across functions and files; memory leaks)", "c", false },
};
#define NCRIT (sizeof(crit_tools) / sizeof(crit_tools[0]))

struct crit_call {
	struct work w; /* its own notes and status, merged after */
	size_t k;
	cJSON *files, *items;
	pthread_t th;
	bool started;
};

static void *crit_thread(void *arg)
{
	struct crit_call *c = arg;
	c->items = call(&c->w, crit_tools[c->k].tool, c->files, crit_tools[c->k].skipped);
	c->files = NULL;
	return NULL;
}

static void critical_run(struct work *w, const cJSON *input, cJSON *out)
{
	struct crit_call calls[NCRIT];
	memset(calls, 0, sizeof(calls));
	for (size_t k = 0; k < NCRIT; k++) {
		struct crit_call *c = &calls[k];
		if (!wants(input, crit_tools[k].check))
			continue;
		c->k = k;
		c->w = *w;
		c->w.notes = cJSON_CreateArray();
		c->w.status = cJSON_CreateObject();
		c->w.prog = NULL;
		c->files = files_of(&c->w, input, crit_tools[k].lang, crit_tools[k].utf8_only,
				    crit_tools[k].check);
		if (w->prog && w->prog->fn && cJSON_GetArraySize(c->files)) {
			int n = cJSON_GetArraySize(c->files);
			char *line = xasprintf("%s on %d file%s", crit_tools[k].check, n, n == 1 ? "" : "s");
			w->prog->fn(w->prog->ctx, line);
			free(line);
		}
		c->started = pthread_create(&c->th, NULL, crit_thread, c) == 0;
		if (!c->started)
			crit_thread(c);
	}
	cJSON *funcs = functions(w, input);
	cJSON *raw = cJSON_CreateArray();
	for (size_t k = 0; k < NCRIT; k++) {
		struct crit_call *c = &calls[k];
		if (!c->w.notes)
			continue;
		if (c->started)
			pthread_join(c->th, NULL);
		cJSON *x;
		while ((x = cJSON_DetachItemFromArray(c->w.notes, 0)))
			cJSON_AddItemToArray(w->notes, x);
		while (c->w.status->child) {
			x = cJSON_DetachItemViaPointer(c->w.status, c->w.status->child);
			cJSON_DeleteItemFromObjectCaseSensitive(w->status, x->string);
			cJSON_AddItemToObject(w->status, x->string, x);
		}
		while (c->items && (x = cJSON_DetachItemFromArray(c->items, 0))) {
			/* cppcheck's style and portability remarks are the
			 * improvement agent's */
			if (!strcmp(review_str(x, "tool"), "cppcheck") && jnum(x, "level", 0) < 4)
				cJSON_Delete(x);
			else
				cJSON_AddItemToArray(raw, x);
		}
		cJSON_Delete(c->items);
		cJSON_Delete(c->w.notes);
		cJSON_Delete(c->w.status);
	}
	long dropped = 0;
	cJSON *kept = review_critical_keep(raw, w->root, &dropped);
	const cJSON *k;
	cJSON_ArrayForEach(k, kept) {
		const char *cwe = review_str(k, "cwe"), *file = review_str(k, "file");
		long line = (long)jnum(k, "line", 0);
		char *fn = in_function(funcs, file, line);
		char *desc = xasprintf("%s (%s)%s. Kept: %s.", review_str(k, "message"),
				       review_str(k, "tools"), fn, review_str(k, "why"));
		add_finding(out, FINDING_CRITICAL, review_str(k, "severity"), desc, file, line,
			    review_critical_remedy(cwe), *cwe ? cwe : "https://cwe.mitre.org/");
		free(desc);
		free(fn);
	}
	if (dropped)
		review_note(w->notes, "critical: %ld hit%s below the confidence bar left out (a single "
			    "tool in a class whose track record is under %.2f, and no other tool "
			    "agreeing)", dropped, dropped == 1 ? "" : "s", REVIEW_KEEP_PRECISION);
	cJSON_Delete(kept);
	cJSON_Delete(raw);
	cJSON_Delete(funcs);
}

/* ---- improvement ---- */

static void improvement_run(struct work *w, const cJSON *input, cJSON *out)
{
	cJSON *raw = cJSON_CreateArray();
	/* shellcheck first: cppcheck's run is shared with the critical agent,
	 * which starts it meanwhile (the findings are sorted below) */
	if (wants(input, "shellcheck")) {
		cJSON *items = call(w, "review.shellcheck",
				    files_of(w, input, "shell", false, "shellcheck"), "the shell checks");
		cJSON *c;
		while (items && (c = cJSON_DetachItemFromArray(items, 0)))
			cJSON_AddItemToArray(raw, c);
		cJSON_Delete(items);
	}
	if (wants(input, "cppcheck")) {
		cJSON *items = call(w, "review.cppcheck", files_of(w, input, "c", false, "cppcheck"),
				    "C style, portability and performance checks");
		cJSON *c;
		while (items && (c = cJSON_DetachItemFromArray(items, 0))) {
			if (jnum(c, "level", 0) < 5)
				cJSON_AddItemToArray(raw, c);
			else
				cJSON_Delete(c); /* errors are the critical agent's */
		}
		cJSON_Delete(items);
	}
	size_t n;
	cJSON **v = sorted(raw, &n);
	for (size_t i = 0; i < n; i++) {
		const char *tool = review_str(v[i], "tool"), *rule = review_str(v[i], "rule");
		int lvl = (int)jnum(v[i], "level", 0);
		const char *sev = lvl >= 4 ? "medium" : "low";
		char *ref, *advice;
		if (!strcmp(tool, "shellcheck")) {
			ref = xasprintf("https://www.shellcheck.net/wiki/%s", rule);
			advice = xasprintf("Apply shellcheck's advice (%s): %s", rule, review_str(v[i], "message"));
		} else {
			const char *cwe = review_str(v[i], "cwe");
			ref = *cwe ? xstrdup(cwe) : xasprintf("cppcheck:%s", rule);
			advice = xasprintf("Resolve cppcheck's %s here, or suppress it with a "
					   "justified // cppcheck-suppress %s", rule, rule);
		}
		char *desc = xasprintf("%s (%s %s)", review_str(v[i], "message"), tool, rule);
		add_finding(out, FINDING_IMPROVEMENT, sev, desc, review_str(v[i], "file"),
			    (long)jnum(v[i], "line", 0), advice, ref);
		free(desc);
		free(advice);
		free(ref);
	}
	free(v);
	cJSON_Delete(raw);
}

/* ---- debt ---- */

static void debt_run(struct work *w, const cJSON *input, cJSON *out)
{
	cJSON *funcs = NULL;
	if (wants(input, "markers")) {
		funcs = functions(w, input);
		cJSON *items = call(w, "review.markers", files_of(w, input, NULL, false, "markers"),
				    "the TODO/FIXME scan");
		const cJSON *c;
		cJSON_ArrayForEach(c, items) {
			long line = (long)jnum(c, "line", 0);
			char *fn = in_function(funcs, review_str(c, "file"), line);
			const char *text = review_str(c, "message");
			char *desc = xasprintf("%s comment%s: %s", review_str(c, "rule"), fn,
					       *text ? text : "(no text)");
			add_finding(out, FINDING_DEBT, !strcmp(review_str(c, "rule"), "TODO") ? "low" : "medium",
				    desc, review_str(c, "file"), line,
				    "Do it, or move it to the issue tracker and remove the comment.",
				    "CWE-546");
			free(desc);
			free(fn);
		}
		cJSON_Delete(items);
	}
	if (wants(input, "complexity")) {
		cJSON *items = call(w, "review.pmccabe", files_of(w, input, "c", false, "pmccabe"),
				    "the complexity check");
		const cJSON *c;
		cJSON_ArrayForEach(c, items) {
			int cc = (int)jnum(c, "complexity", 0);
			if (cc <= COMPLEXITY_MAX)
				continue;
			char *desc = xasprintf("%s() has cyclomatic complexity %d (over %d)",
					       review_str(c, "name"), cc, COMPLEXITY_MAX);
			add_finding(out, FINDING_DEBT, cc > 2 * COMPLEXITY_MAX ? "high" : "medium", desc,
				    review_str(c, "file"), (long)jnum(c, "line", 0),
				    "Split it into smaller functions, or replace the branches with a table.",
				    "CWE-1121");
			free(desc);
		}
		cJSON_Delete(items);
	}
	if (wants(input, "size")) {
		cJSON *items = call(w, "review.cloc", files_of(w, input, NULL, false, "cloc"),
				    "the file size check");
		const cJSON *c;
		cJSON_ArrayForEach(c, items) {
			int code = (int)jnum(c, "code", 0);
			if (code <= FILE_LINES_MAX)
				continue;
			char *desc = xasprintf("%d lines of %s code in one file (over %d)", code,
					       review_str(c, "language"), FILE_LINES_MAX);
			add_finding(out, FINDING_DEBT, "medium", desc, review_str(c, "file"), 1,
				    "Split the file by responsibility.", "CWE-1080");
			free(desc);
		}
		cJSON_Delete(items);
	}
	cJSON_Delete(funcs);
	/* in file and line order */
	size_t n;
	cJSON **v = sorted(out, &n);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(out, cJSON_DetachItemViaPointer(out, v[i]));
	free(v);
}

static const char *const sev_order[] = { "critical", "high", "medium", "low", NULL };

static int sev_rank(const cJSON *f)
{
	const char *s = review_str(f, "severity");
	for (int i = 0; sev_order[i]; i++)
		if (!strcmp(s, sev_order[i]))
			return i;
	return 4;
}

/* Keeps the cap's most severe findings (in file/line order). */
static void cap(struct work *w, const char *part, cJSON *out, long max)
{
	long n = cJSON_GetArraySize(out);
	if (max <= 0 || n <= max)
		return;
	cJSON **v = xcalloc((size_t)n, sizeof(*v));
	bool *keep = xcalloc((size_t)n, sizeof(*keep));
	long i = 0, kept = 0;
	for (cJSON *c = out->child; c; c = c->next)
		v[i++] = c;
	for (int r = 0; r <= 4; r++)
		for (i = 0; i < n; i++)
			if (sev_rank(v[i]) == r && kept < max) {
				keep[i] = true;
				kept++;
			}
	for (i = 0; i < n; i++)
		if (!keep[i])
			cJSON_Delete(cJSON_DetachItemViaPointer(out, v[i]));
	free(v);
	free(keep);
	review_note(w->notes, "%s: %ld findings over the cap of %ld left out", part, n - max, max);
}

int review_part_run(enum review_part part, struct tools *tools, const char *agent,
		    const cJSON *input, const struct review_progress *prog, cJSON **result,
		    char **err)
{
	*result = NULL;
	int st = review_input_check(part, input, err);
	if (st)
		return st;
	if (part == REVIEW_DOCUMENTATION)
		return review_docs_run(tools, agent, input, result, err);
	struct work w = { tools, agent, review_str(input, "root"), cJSON_CreateArray(),
			  cJSON_CreateObject(), prog };
	cJSON *out = cJSON_CreateArray();
	if (part == REVIEW_CRITICAL)
		critical_run(&w, input, out);
	else if (part == REVIEW_IMPROVEMENT)
		improvement_run(&w, input, out);
	else
		debt_run(&w, input, out);
	cap(&w, review_part_name(part), out, (long)jnum(input, "max_findings", 0));
	struct msg_errors e = { 0 };
	if (finding_list_validate(out, (int)(part - REVIEW_DEBT), review_part_name(part), &e)) {
		*err = msg_errors_join(&e);
		msg_errors_release(&e);
		cJSON_Delete(out);
		cJSON_Delete(w.notes);
		cJSON_Delete(w.status);
		return 500;
	}
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "findings", out);
	cJSON_AddItemToObject(*result, "notes", w.notes);
	cJSON_AddItemToObject(*result, "tools", w.status);
	return 0;
}
