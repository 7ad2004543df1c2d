/* The critical agent's keep-policy: the analyzers' raw findings grouped
 * by file, line and defect class (one finding per group, whichever tools
 * reported it), and a group kept only when the agent can stand behind it:
 *   - two tools agree on it (the same defect class on the same line);
 *   - one tool whose track record in that class (its rule's, else the
 *     tool's in the class) is at least REVIEW_KEEP_PRECISION: the table
 *     below, from `madf bench review --findings` on the odd-numbered half
 *     of Juliet C/C++ 1.3 (the first 150 C test cases of CWE 78, 121, 122,
 *     134, 401, 415, 416 and 476; each analyzer alone, every file fully
 *     analyzed); the even half was not used for it;
 *   - a tool with no track record in the class (fewer than TRACK_MIN_HITS
 *     hits there) that reports it as a definite defect (level 5: cppcheck's
 *     error severity, gcc's and clang's definite path-sensitive checks),
 *     flawfinder's lexical matches never;
 *   - a hard-coded secret (the secrets scan; Juliet has none, so it is not
 *     measured): critical when it matches a credential format exactly.
 * Each kept finding says which rule applied. */
#include "agents/review.h"
#include "agents/review_priv.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- defect classes ---- */

static const struct {
	int cwe;
	const char *cls;
} classes[] = {
	{ 119, "overflow" }, { 120, "overflow" }, { 121, "overflow" }, { 122, "overflow" },
	{ 124, "overflow" }, { 125, "overflow" }, { 126, "overflow" }, { 127, "overflow" },
	{ 129, "overflow" }, { 131, "overflow" }, { 170, "overflow" }, { 193, "overflow" },
	{ 787, "overflow" }, { 788, "overflow" }, { 805, "overflow" }, { 806, "overflow" },
	{ 415, "double free" }, { 416, "use after free" }, { 825, "use after free" },
	{ 476, "NULL dereference" }, { 690, "NULL dereference" },
	{ 401, "leak" }, { 772, "leak" }, { 775, "leak" },
	{ 134, "format string" }, { 78, "command injection" }, { 88, "command injection" },
	{ 457, "uninitialized" }, { 665, "uninitialized" }, { 908, "uninitialized" },
	{ 190, "integer overflow" }, { 191, "integer overflow" }, { 680, "integer overflow" },
	{ 798, "secret" },
};

/* The class of a CWE id ("CWE-121" -> "overflow"); the id itself when it
 * has none; "" for no CWE. */
static const char *class_of(const char *cwe)
{
	if (strncmp(cwe, "CWE-", 4))
		return "";
	int n = atoi(cwe + 4);
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++)
		if (classes[i].cwe == n)
			return classes[i].cls;
	return cwe;
}

/* ---- track records ----
 * hits and false alarms of a tool (rule "*": all its rules) in a class on
 * the tuning half; a record needs at least TRACK_MIN_HITS hits to count. */
#define TRACK_MIN_HITS 5
static const struct track {
	const char *tool, *rule, *cls;
	int hits, fas;
} track[] = {
	/* generated from `madf bench review --split odd --findings F`: each
	 * analyzer alone, its target-CWE findings by rule and class */
	{ "clang-analyzer", "alpha.security.ArrayBoundV2", "overflow", 52, 0 },
	{ "clang-analyzer", "alpha.unix.cstring.OutOfBounds", "overflow", 44, 0 },
	{ "clang-analyzer", "core.NullDereference", "NULL dereference", 47, 16 },
	{ "clang-analyzer", "unix.Malloc", "double free", 44, 0 },
	{ "clang-analyzer", "unix.Malloc", "leak", 7, 28 },
	{ "clang-analyzer", "unix.Malloc", "use after free", 18, 0 },
	{ "cppcheck", "arrayIndexOutOfBounds", "overflow", 19, 0 },
	{ "cppcheck", "bufferAccessOutOfBounds", "overflow", 18, 0 },
	{ "cppcheck", "doubleFree", "double free", 28, 0 },
	{ "cppcheck", "nullPointer", "NULL dereference", 41, 0 },
	{ "flawfinder", "buffer/char", "overflow", 0, 54 },
	{ "flawfinder", "buffer/fscanf", "overflow", 19, 27 },
	{ "flawfinder", "buffer/memcpy", "overflow", 28, 27 },
	{ "flawfinder", "format/fprintf", "format string", 19, 53 },
	{ "flawfinder", "format/printf", "format string", 19, 53 },
	{ "flawfinder", "format/vfprintf", "format string", 18, 51 },
	{ "gcc-analyzer", "-Wanalyzer-double-free", "double free", 52, 0 },
	{ "gcc-analyzer", "-Wanalyzer-malloc-leak", "leak", 36, 16 },
	{ "gcc-analyzer", "-Wanalyzer-null-dereference", "NULL dereference", 38, 0 },
	{ "gcc-analyzer", "-Wanalyzer-use-after-free", "use after free", 27, 0 },
	{ "gcc-analyzer", "-Warray-bounds", "overflow", 6, 0 },
	{ "gcc-analyzer", "-Wstringop-overflow=", "overflow", 11, 0 },
	/* madf's own finder (review.flow), measured the same way */
	{ "madf-flow", "tainted-command", "command injection", 75, 0 },
	{ "madf-flow", "tainted-format", "format string", 75, 0 },
	{ "madf-flow", "memory-leak", "leak", 15, 0 },
};

static const struct track *track_of(const char *tool, const char *rule, const char *cls)
{
	const struct track *any = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(track); i++) {
		const struct track *t = &track[i];
		if (strcmp(t->tool, tool) || strcmp(t->cls, cls))
			continue;
		if (!strcmp(t->rule, rule))
			return t;
		if (!strcmp(t->rule, "*"))
			any = t;
	}
	return any;
}

static double track_precision(const struct track *t)
{
	return t && t->hits >= TRACK_MIN_HITS ? (double)t->hits / (t->hits + t->fas) : -1;
}

/* ---- remedies ---- */

static const struct {
	const char *cls, *remedy;
} remedies[] = {
	{ "double free", "Free the memory exactly once on every path, and set the pointer to NULL after free()." },
	{ "use after free", "Do not use the memory after free(); set the pointer to NULL and check it." },
	{ "leak", "Free the memory (close the file) on every path that leaves the function." },
	{ "NULL dereference", "Check the pointer for NULL before dereferencing it." },
	{ "overflow", "Bound every access by the buffer's size; size the buffer for the data, or copy with a length limit (snprintf)." },
	{ "format string", "Use a constant format string and pass the text as an argument: printf(\"%s\", text)." },
	{ "command injection", "Do not build a command from input; use execve() with an argument vector and no shell." },
	{ "uninitialized", "Initialize the variable on every path before it is read." },
	{ "integer overflow", "Check the operands' range before the arithmetic (or use __builtin_*_overflow)." },
	{ "secret", "Remove the secret from the source, load it from the environment or a secrets store, and rotate it now." },
};

const char *review_critical_remedy(const char *cwe)
{
	const char *cls = class_of(cwe ? cwe : "");
	for (size_t i = 0; i < ARRAY_SIZE(remedies); i++)
		if (!strcmp(remedies[i].cls, cls))
			return remedies[i].remedy;
	return "Fix the defect the analyzer names on this line; see the reference for the weakness class.";
}

/* ---- grouping ---- */

struct raw {
	const cJSON *j;
	const char *file, *tool, *rule, *cwe, *cls;
	long line;
};

static int raw_cmp(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	c = strcmp(x->cls, y->cls);
	if (c)
		return c;
	return (int)jnum(y->j, "level", 0) - (int)jnum(x->j, "level", 0);
}

/* The name a tool is shown by ("cppcheck", "gcc-analyzer"). */
static bool same_tool(const struct raw *v, size_t i, size_t j)
{
	return !strcmp(v[i].tool, v[j].tool);
}

/* One group v[i..j) (same file, line, class): kept (a new finding) or NULL. */
static cJSON *judge(const struct raw *v, size_t i, size_t j)
{
	/* the distinct tools, each by its most confident report (sorted by
	 * level within the group) */
	size_t lead[8] = { i }, nt = 0;
	for (size_t k = i; k < j && nt < ARRAY_SIZE(lead); k++) {
		bool seen = false;
		for (size_t m = 0; m < nt && !seen; m++)
			seen = same_tool(v, lead[m], k);
		if (!seen)
			lead[nt++] = k;
	}
	const struct raw *best = &v[lead[0]];
	struct sbuf tools;
	sbuf_init(&tools);
	for (size_t m = 0; m < nt; m++)
		sbuf_addf(&tools, "%s%s %s", m ? ", " : "", v[lead[m]].tool, v[lead[m]].rule);
	char *why = NULL;
	const char *sev = "high";
	/* the best single record among the group's tools */
	double p = -1;
	const struct track *rec = NULL;
	for (size_t m = 0; m < nt; m++) {
		const struct raw *r = &v[lead[m]];
		const struct track *t = track_of(r->tool, r->rule, r->cls);
		double q = track_precision(t);
		if (q > p) {
			p = q;
			rec = t;
			best = r;
		}
	}
	if (!strcmp(v[i].cls, "secret")) {
		bool exact = false;
		for (size_t k = i; k < j; k++)
			exact |= !strcmp(v[k].rule, "pattern");
		sev = exact ? "critical" : "high";
		why = xstrdup(exact ? "the literal matches a credential format exactly"
				    : "a high-entropy literal under a secret's name");
	} else if (nt >= 2) {
		sev = "critical";
		why = xasprintf("%zu tools agree on this line's %s", nt, v[i].cls);
	} else if (p < 0 && jnum(v[i].j, "level", 0) >= 5 && strcmp(v[i].tool, "flawfinder")) {
		sev = "critical";
		best = &v[i];
		why = xasprintf("%s reports it as a definite %s (%s) and has no track record in "
				"that class to weigh it by", v[i].tool, v[i].cls, v[i].rule);
	} else if (p >= REVIEW_KEEP_PRECISION) {
		sev = jnum(best->j, "level", 0) >= 5 ? "critical" : "high";
		why = xasprintf("%s alone, whose track record for %s (%s) is %.2f: %d hits, %d false "
				"alarms on the tuning half of Juliet C/C++ 1.3", best->tool, v[i].cls,
				strcmp(rec->rule, "*") ? rec->rule : "all its rules", p, rec->hits,
				rec->fas);
	}
	cJSON *f = NULL;
	if (why) {
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "file", best->file);
		cJSON_AddNumberToObject(f, "line", (double)best->line);
		cJSON_AddStringToObject(f, "cwe", best->cwe);
		cJSON_AddStringToObject(f, "severity", sev);
		cJSON_AddStringToObject(f, "message", review_str(best->j, "message"));
		cJSON_AddStringToObject(f, "tools", tools.data);
		cJSON_AddStringToObject(f, "why", why);
		free(why);
	}
	sbuf_release(&tools);
	return f;
}

cJSON *review_critical_keep(const cJSON *raw, const char *root, long *dropped)
{
	(void)root;
	size_t n = (size_t)cJSON_GetArraySize(raw), k = 0;
	struct raw *v = xcalloc(n + 1, sizeof(*v));
	const cJSON *x;
	*dropped = 0;
	cJSON_ArrayForEach(x, raw) {
		const char *cwe = review_str(x, "cwe");
		if (!*cwe) {
			(*dropped)++; /* no defect class: not the critical agent's */
			continue;
		}
		v[k] = (struct raw){ x, review_str(x, "file"), review_str(x, "tool"),
				     review_str(x, "rule"), cwe, class_of(cwe), (long)jnum(x, "line", 0) };
		k++;
	}
	if (k)
		qsort(v, k, sizeof(*v), raw_cmp);
	cJSON *out = cJSON_CreateArray();
	for (size_t i = 0; i < k;) {
		size_t j = i + 1;
		while (j < k && !strcmp(v[i].file, v[j].file) && v[i].line == v[j].line &&
		       !strcmp(v[i].cls, v[j].cls))
			j++;
		cJSON *f = judge(v, i, j);
		if (f)
			cJSON_AddItemToArray(out, f);
		else
			*dropped += (long)(j - i);
		i = j;
	}
	free(v);
	return out;
}
