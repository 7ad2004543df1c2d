/* The debt, improvement and critical agents: their input checked, the
 * analyzers called through the tool registry, raw hits turned into
 * findings (the critical agent keeps what it can stand behind and says
 * why), and the worker roles that answer review tasks over the bus. */
#include "agents/review.h"

#include <ctype.h>
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
static const char *const checks_critical[] = { "cppcheck", "flawfinder", "secrets", NULL };
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
static int input_check(enum review_part part, const cJSON *input, char **err)
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

static const struct {
	const char *cwe, *remedy;
} remedies[] = {
	{ "CWE-415", "Free the memory exactly once on every path, and set the pointer to NULL after free()." },
	{ "CWE-416", "Do not use the memory after free(); set the pointer to NULL and check it." },
	{ "CWE-401", "Free the memory on every path that leaves the function." },
	{ "CWE-476", "Check the pointer for NULL before dereferencing it." },
	{ "CWE-120", "Bound the copy by the destination's size (snprintf, or check the length before memcpy)." },
	{ "CWE-121", "Bound every write by the array's size; use snprintf or a length-checked copy." },
	{ "CWE-787", "Bound every write by the buffer's size; use snprintf or a length-checked copy." },
	{ "CWE-788", "Bound the access by the buffer's size; size the buffer for the data or copy with a length limit (snprintf)." },
	{ "CWE-134", "Use a constant format string and pass the text as an argument: printf(\"%s\", text)." },
	{ "CWE-78", "Do not build a command from input; use execve() with an argument vector and no shell." },
	{ "CWE-798", "Remove the secret from the source, load it from the environment or a secrets store, and rotate it now." },
};

static const char *remedy_of(const char *cwe)
{
	for (size_t i = 0; cwe && i < ARRAY_SIZE(remedies); i++)
		if (!strcmp(remedies[i].cwe, cwe))
			return remedies[i].remedy;
	return "Fix the defect the analyzer names on this line; see the reference for the weakness class.";
}

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

static bool cwe_in(const char *cwe, const char *const *list)
{
	for (size_t i = 0; cwe && list[i]; i++)
		if (!strcmp(cwe, list[i]))
			return true;
	return false;
}

/* Whether flawfinder's hit is the call it names, not a word on the line:
 * a format attribute (format(printf, ...)), a va_list wrapper handing on
 * its caller's format (vsnprintf and kin), a member or key named system. */
static bool lexical_call(struct work *w, const cJSON *ff)
{
	const char *rule = review_str(ff, "rule"), *slash = strchr(rule, '/');
	const char *fn = slash ? slash + 1 : rule;
	if (!strcmp(review_str(ff, "cwe"), "CWE-134") && fn[0] == 'v')
		return false;
	char *text = review_line_text(w->root, review_str(ff, "file"), (long)jnum(ff, "line", 0));
	bool call = false;
	size_t n = strlen(fn);
	for (const char *p = strstr(text, fn); p && n; p = strstr(p + 1, fn)) {
		char before = p > text ? p[-1] : ' ';
		const char *after = p + n;
		while (*after == ' ' || *after == '\t')
			after++;
		if (isalnum((unsigned char)before) || before == '_' || before == '.' || before == '>' ||
		    before == '"' || *after != '(')
			continue;
		call = true;
		break;
	}
	if (strstr(text, "__attribute__") || strstr(text, "format("))
		call = false;
	free(text);
	return call;
}

static void critical_run(struct work *w, const cJSON *input, cJSON *out)
{
	cJSON *raw = cJSON_CreateArray();
	cJSON *funcs = functions(w, input);
	const char *what[] = { "cppcheck", "flawfinder", "secrets" };
	const char *tool[] = { "review.cppcheck", "review.flawfinder", "review.secrets" };
	const char *skipped[] = { "C defect checks (double free, bounds, null pointers)",
				  "risky-call checks (format strings, command injection)",
				  "the secrets scan" };
	for (int t = 0; t < 3; t++) {
		if (!wants(input, what[t]))
			continue;
		cJSON *items = call(w, tool[t],
				    files_of(w, input, t == 2 ? NULL : "c", t == 1, what[t]),
				    skipped[t]);
		cJSON *c;
		while (items && (c = cJSON_DetachItemFromArray(items, 0))) {
			/* cppcheck's style and portability remarks are the
			 * improvement agent's */
			if (t == 0 && jnum(c, "level", 0) < 4)
				cJSON_Delete(c);
			else
				cJSON_AddItemToArray(raw, c);
		}
		cJSON_Delete(items);
	}
	size_t n;
	cJSON **v = sorted(raw, &n);
	static const char *const lexical_sure[] = { "CWE-134", "CWE-78", NULL };
	int dropped = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !raw_cmp(&v[i], &v[j]))
			j++;
		/* one line: v[i..j) */
		const cJSON *cpp_err = NULL, *cpp_warn = NULL, *ff = NULL, *sec = NULL;
		for (size_t k = i; k < j; k++) {
			const char *t = review_str(v[k], "tool");
			int lvl = (int)jnum(v[k], "level", 0);
			if (!strcmp(t, "cppcheck") && lvl >= 5 && !cpp_err)
				cpp_err = v[k];
			else if (!strcmp(t, "cppcheck") && lvl == 4 && !cpp_warn)
				cpp_warn = v[k];
			else if (!strcmp(t, "flawfinder") && (!ff || lvl > jnum(ff, "level", 0)))
				ff = v[k];
			else if (!strcmp(t, "secrets") && !sec)
				sec = v[k];
		}
		const cJSON *cpp = cpp_err ? cpp_err : cpp_warn;
		const char *file = review_str(v[i], "file");
		long line = (long)jnum(v[i], "line", 0);
		char *why = NULL;
		const cJSON *lead = NULL;
		const char *sev = "high";
		if (cpp && ff) {
			lead = cpp;
			sev = "critical";
			why = xasprintf("cppcheck (%s) and flawfinder (%s) agree on this line",
					review_str(cpp, "rule"), review_str(ff, "rule"));
		} else if (cpp_err && !cJSON_IsNull(cJSON_GetObjectItem(cpp_err, "cwe"))) {
			lead = cpp_err;
			sev = "critical";
			why = xasprintf("cppcheck reports it at error severity (%s), its "
					"path-sensitive check for this defect class", review_str(cpp_err, "rule"));
		} else if (sec) {
			lead = sec;
			sev = !strcmp(review_str(sec, "rule"), "pattern") ? "critical" : "high";
			why = xstrdup(!strcmp(review_str(sec, "rule"), "pattern")
					      ? "the literal matches a credential format exactly"
					      : "a high-entropy literal under a secret's name");
		} else if (ff && jnum(ff, "level", 0) >= 4 && cwe_in(review_str(ff, "cwe"), lexical_sure) &&
			   lexical_call(w, ff)) {
			lead = ff;
			why = xasprintf("flawfinder level %d on %s, a class it only reports when the "
					"argument is not a constant", (int)jnum(ff, "level", 0), review_str(ff, "cwe"));
		}
		if (lead) {
			const char *cwe = review_str(lead, "cwe");
			char *fn = in_function(funcs, file, line);
			char *desc = xasprintf("%s (%s %s)%s. Kept: %s.", review_str(lead, "message"),
					       review_str(lead, "tool"), review_str(lead, "rule"), fn, why);
			add_finding(out, FINDING_CRITICAL, sev, desc, file, line, remedy_of(cwe),
				    *cwe ? cwe : "https://cwe.mitre.org/");
			free(desc);
			free(fn);
		} else {
			dropped += (int)(j - i);
		}
		free(why);
		i = j;
	}
	if (dropped)
		review_note(w->notes, "critical: %d single-tool hit%s below the confidence bar left out "
			    "(flawfinder under level 4, outside its sure classes or not on a call, "
			    "cppcheck warnings without agreement)", dropped, dropped == 1 ? "" : "s");
	free(v);
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
	int st = input_check(part, input, err);
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
