/* madf bench review SUITE: the review crew (its critical agent, through the
 * master and the bus as `madf review` runs it) and each analyzer alone
 * (cppcheck, flawfinder, through the tool registry) on the C test cases of
 * a Juliet C/C++ 1.3 checkout (SUITE/testcases/CWEnnn_Name/[sNN/]), scored
 * line by line in one run.
 *
 * Scoring (Juliet user guide, section 8, at the line): only findings of
 * the test case's CWE count (a family of equivalent CWEs per target, e.g.
 * CWE-787 for CWE-121); other findings are ignored, as incidental flaws
 * exist. A finding on a defect line (the statement under a "POTENTIAL
 * FLAW:" or "FLAW:" comment, up to the next blank or comment line, at most
 * 8 lines, in a function whose name has "bad") is a hit; elsewhere in a bad function
 * it is off the line (neither); in a function whose name has "good" (the
 * fixed twin) a false alarm; outside both, not counted. A test case
 * (its files a-e) is detected when one of its defect lines is hit.
 * Recall = detected cases / cases; precision = hit lines / (hit lines +
 * false-alarm lines), each line counted once per run. Windows-only files
 * (w32 in the name) and C++ are left out. The selected files are copied
 * to a temporary directory, reviewed there and removed. */
#include "cli/bench_review.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/llm_agent.h"
#include "agents/review.h"
#include "core/tools.h"
#include "core/util.h"
#include "core/banned.h"

#define FLAW_WINDOW 8   /* lines under a POTENTIAL FLAW comment */
#define TOOL_CHUNK 400  /* files per analyzer call */

enum { RUN_CREW, RUN_CPPCHECK, RUN_FLAWFINDER, RUN_GCC, RUN_CLANG, RUN_FLOW, RUN_UNION,
       RUN_UNION5, NRUNS };
#define RUN_TOOL0 RUN_CPPCHECK
#define RUN_TOOLN RUN_UNION /* the tools alone: [RUN_TOOL0, RUN_TOOLN) */
/* the union of the four: the other analyzers' plain union, madf-flow not in it */
static const char *const run_names[NRUNS] = { "crew (critical)", "cppcheck alone",
					       "flawfinder alone", "gcc-analyzer alone",
					       "clang-analyzer alone", "madf-flow alone",
					       "union of the four", "union of the five" };
static const char *const run_keys[NRUNS] = { "crew", "cppcheck", "flawfinder", "gcc_analyzer",
					      "clang_analyzer", "flow", "union", "union5" };
static const char *const run_tool_names[NRUNS] = { NULL, "review.cppcheck", "review.flawfinder",
					       "review.gcc_analyzer", "review.clang_analyzer",
					       "review.flow", NULL, NULL };

/* The CWEs a finding may carry for a test case's CWE to count. */
static const struct {
	int target;
	int ok[18];
} families[] = {
#define OVERFLOW { 119, 120, 121, 122, 124, 125, 126, 127, 129, 131, 170, 193, 787, 788, 805, 806, 0 }
	{ 121, OVERFLOW }, { 122, OVERFLOW }, { 124, OVERFLOW }, { 126, OVERFLOW },
	{ 127, OVERFLOW },
#undef OVERFLOW
	{ 78, { 78, 88, 0 } },
	{ 190, { 190, 191, 680, 0 } }, { 191, { 190, 191, 680, 0 } },
	{ 401, { 401, 772, 775, 0 } },
	{ 416, { 416, 825, 0 } },
	{ 457, { 457, 665, 908, 0 } },
	{ 476, { 476, 690, 0 } }, { 690, { 476, 690, 0 } },
};

static bool cwe_counts(int target, const char *cwe)
{
	if (!cwe || strncmp(cwe, "CWE-", 4))
		return false;
	int n = atoi(cwe + 4);
	if (n == target)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		if (families[i].target == target)
			for (size_t k = 0; families[i].ok[k]; k++)
				if (families[i].ok[k] == n)
					return true;
	return false;
}

struct fn {
	char *name;
	long start, end;
	int kind; /* 1 bad, 2 good, 0 neither */
};

struct bfile {
	char *rel;
	int cwe;
	size_t kase;
	struct fn *fns;
	size_t nfns;
	unsigned char *defect; /* [1..nlines] */
	long nlines, ndefect;
};

struct bcase {
	char *name;
	int cwe;
	bool hit[NRUNS];
};

struct run {
	long hits, fas, off, outside, cases_hit;
	long skipped; /* files the analyzer skipped (timed out, did not compile) */
	double secs;
	char *error; /* the run failed (the row says why) */
};

struct bench {
	const char *suite;
	struct bfile *files;
	size_t nfiles;
	struct bcase *cases;
	size_t ncases;
	int *cwes;
	size_t ncwes;
	int split; /* SPLIT_ALL, SPLIT_ODD, SPLIT_EVEN */
	FILE *dump; /* --findings: every scored finding as a JSON line */
	bool want[NRUNS]; /* --runs */
	struct run runs[NRUNS];
};

/* The halves of the suite: a test case is odd or even by its flow
 * variant's number (CWE415_..._char_01: 1, odd). The critical agent's
 * keep-policy was tuned on the odd half only; --split even scores the
 * cases it was not tuned on. */
enum { SPLIT_ALL, SPLIT_ODD, SPLIT_EVEN };
static const char *const split_names[] = { "all", "odd", "even" };

/* The flow variant number at the end of a case name ("..._54" -> 54), 0
 * when there is none. */
static int case_flow(const char *kname)
{
	const char *u = strrchr(kname, '_');
	return u && isdigit((unsigned char)u[1]) ? atoi(u + 1) : 0;
}

/* ---- the suite ---- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of dir (not . and ..), or -1. */
static int list_dir(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	*out = NULL;
	*n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), name_cmp);
	return 0;
}

static void names_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "CWE415_Double_Free__x_54a.c" -> "CWE415_Double_Free__x_54" (new). */
static char *case_of(const char *base)
{
	size_t n = strlen(base) - 2; /* ".c" */
	if (n >= 2 && islower((unsigned char)base[n - 1]) && isdigit((unsigned char)base[n - 2]))
		n--;
	return xstrndup(base, n);
}

static void add_file(struct bench *b, const char *rel, int cwe, const char *base)
{
	char *kname = case_of(base);
	/* the case: the last one when it continues it (files are sorted) */
	if (!b->ncases || strcmp(b->cases[b->ncases - 1].name, kname)) {
		b->cases = xrealloc(b->cases, (b->ncases + 1) * sizeof(*b->cases));
		memset(&b->cases[b->ncases], 0, sizeof(*b->cases));
		b->cases[b->ncases].name = kname;
		b->cases[b->ncases].cwe = cwe;
		b->ncases++;
	} else {
		free(kname);
	}
	b->files = xrealloc(b->files, (b->nfiles + 1) * sizeof(*b->files));
	memset(&b->files[b->nfiles], 0, sizeof(*b->files));
	b->files[b->nfiles].rel = xstrdup(rel);
	b->files[b->nfiles].cwe = cwe;
	b->files[b->nfiles].kase = b->ncases - 1;
	b->nfiles++;
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bfile *)a)->rel, ((const struct bfile *)b)->rel);
}

static bool wanted(const int *want, size_t nwant, int cwe)
{
	if (!nwant)
		return true;
	for (size_t i = 0; i < nwant; i++)
		if (want[i] == cwe)
			return true;
	return false;
}

/* The C test cases of the wanted CWEs, at most max_cases per CWE. */
static int suite_walk(struct bench *b, const int *want, size_t nwant, long max_cases, char **err)
{
	char *tc = xasprintf("%s/testcases", b->suite);
	char **cwes;
	size_t ncwe;
	if (list_dir(tc, &cwes, &ncwe) < 0) {
		err_set(err, "%s: no testcases directory (is it a Juliet C/C++ 1.3 checkout?)", b->suite);
		free(tc);
		return -1;
	}
	for (size_t i = 0; i < ncwe; i++) {
		int cwe = 0;
		if (sscanf(cwes[i], "CWE%d_", &cwe) != 1 || !wanted(want, nwant, cwe))
			continue;
		char *dir = xasprintf("%s/%s", tc, cwes[i]);
		char **top;
		size_t ntop;
		if (list_dir(dir, &top, &ntop) < 0) {
			free(dir);
			continue;
		}
		size_t first_case = b->ncases;
		/* files directly in the CWE's directory, then in sNN/ */
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = 0; k < ntop; k++) {
				char *sub = xasprintf("%s/%s", dir, top[k]);
				bool d = is_dir(sub);
				char **leaf = NULL;
				size_t nleaf = 0;
				if (pass == 0 && !d) {
					leaf = xcalloc(1, sizeof(*leaf));
					leaf[0] = xstrdup(top[k]);
					nleaf = 1;
				} else if (pass == 1 && d) {
					list_dir(sub, &leaf, &nleaf);
				}
				for (size_t m = 0; m < nleaf; m++) {
					const char *base = leaf[m];
					size_t bl = strlen(base);
					if (bl < 3 || strcmp(base + bl - 2, ".c") || strncmp(base, "CWE", 3) ||
					    strstr(base, "w32"))
						continue;
					char *kname = case_of(base);
					bool same = b->ncases > first_case &&
						    !strcmp(b->cases[b->ncases - 1].name, kname);
					int flow = case_flow(kname);
					free(kname);
					if ((b->split == SPLIT_ODD && flow % 2 != 1) ||
					    (b->split == SPLIT_EVEN && (flow % 2 != 0 || !flow)))
						continue;
					if (!same && max_cases > 0 && (long)(b->ncases - first_case) >= max_cases)
						continue;
					char *rel = d ? xasprintf("testcases/%s/%s/%s", cwes[i], top[k], base)
						      : xasprintf("testcases/%s/%s", cwes[i], base);
					add_file(b, rel, cwe, base);
					free(rel);
				}
				names_free(leaf, nleaf);
				free(sub);
			}
		if (b->ncases > first_case) {
			b->cwes = xrealloc(b->cwes, (b->ncwes + 1) * sizeof(*b->cwes));
			b->cwes[b->ncwes++] = cwe;
		}
		names_free(top, ntop);
		free(dir);
	}
	names_free(cwes, ncwe);
	free(tc);
	if (!b->nfiles)
		return err_set(err, "%s: no C test cases of the chosen CWEs under testcases/", b->suite);
	/* by path, for the lookups (each file keeps its case) */
	qsort(b->files, b->nfiles, sizeof(*b->files), file_cmp);
	return 0;
}

/* The function name on a signature line: the identifier before '(' (new). */
static char *sig_name(const char *s)
{
	const char *p = strchr(s, '(');
	if (!p)
		return NULL;
	while (p > s && (p[-1] == ' ' || p[-1] == '\t'))
		p--;
	const char *e = p;
	while (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
		p--;
	return e > p ? xstrndup(p, (size_t)(e - p)) : NULL;
}

/* 1 bad, 2 good, 0 neither: by the name's last part ("..._01_bad",
 * "goodG2BSink", "CWE..._54b_badSink"), case-insensitively. */
static int fn_kind(const char *name)
{
	const char *u = strrchr(name, '_');
	const char *tail = !strncmp(name, "CWE", 3) && u ? u + 1 : name;
	char low[128];
	size_t i = 0;
	for (; tail[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)tail[i]);
	low[i] = 0;
	return strstr(low, "bad") ? 1 : strstr(low, "good") ? 2 : 0;
}

/* Functions (Allman style, as Juliet is written: a signature at column 0,
 * "{" and "}" alone at column 0) and the defect lines of the bad ones. */
static void file_parse(struct bfile *f, char *text)
{
	long n = 1;
	for (const char *c = text; *c; c++)
		n += *c == '\n';
	f->nlines = n;
	f->defect = xcalloc((size_t)n + 2, 1);
	char *sig = NULL;
	long sig_line = 0, l = 0;
	struct fn *cur = NULL;
	int flaw = 0, win = 0; /* flaw: 1 in the comment, 2 under it */
	char *save = NULL;
	for (char *s = text; s; s = save) {
		char *nl = strchr(s, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		l++;
		const char *t = s;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!cur) {
			if (s[0] == '{' && sig) {
				f->fns = xrealloc(f->fns, (f->nfns + 1) * sizeof(*f->fns));
				cur = &f->fns[f->nfns++];
				cur->name = sig;
				cur->start = sig_line;
				cur->end = 0;
				cur->kind = fn_kind(sig);
				sig = NULL;
				flaw = 0;
			} else if ((isalpha((unsigned char)s[0]) || s[0] == '_') && strchr(s, '(') &&
				   s[strlen(s) - 1] != ';') {
				free(sig);
				sig = sig_name(s);
				sig_line = l;
			} else if (*t) {
				free(sig);
				sig = NULL;
			}
			continue;
		}
		if (s[0] == '}') {
			if (flaw == 2 && cur->kind == 1 && win < FLAW_WINDOW)
				f->defect[l] = 1;
			cur->end = l;
			cur = NULL;
			continue;
		}
		if (cur->kind != 1)
			continue;
		if (strstr(s, "/* POTENTIAL FLAW:") || strstr(s, "/* FLAW:")) {
			flaw = strstr(s, "*/") || !strncmp(t, "//", 2) ? 2 : 1;
			win = 0;
			continue;
		}
		if (flaw == 1) {
			if (strstr(s, "*/"))
				flaw = 2;
			continue;
		}
		if (flaw == 2) {
			if (!*t || !strncmp(t, "/*", 2) || !strncmp(t, "//", 2) || win >= FLAW_WINDOW) {
				flaw = 0;
			} else {
				f->defect[l] = 1;
				win++;
			}
		}
	}
	free(sig);
	for (long k = 1; k <= n; k++)
		f->ndefect += f->defect[k];
}

/* Reads, parses and copies the files into tmp. */
static int suite_load(struct bench *b, const char *tmp, char **err)
{
	for (size_t i = 0; i < b->nfiles; i++) {
		struct bfile *f = &b->files[i];
		char *src = xasprintf("%s/%s", b->suite, f->rel), *dst = xasprintf("%s/%s", tmp, f->rel);
		char *buf = NULL;
		size_t len = 0;
		int r = util_read_file(src, (size_t)REVIEW_MAX_FILE_BYTES, &buf, &len, err);
		char *slash = strrchr(dst, '/');
		*slash = 0;
		if (r == 0)
			r = util_mkdirs(dst, err);
		*slash = '/';
		if (r == 0)
			r = util_write_file_atomic(dst, buf, len, false, err);
		if (r == 0)
			file_parse(f, buf);
		free(buf);
		free(src);
		free(dst);
		if (r < 0)
			return -1;
	}
	/* the suite's headers (std_testcase.h), which the compilers'
	 * analyzers need (the review guesses -I testcasesupport from them) */
	char *sup = xasprintf("%s/testcasesupport", b->suite), **names = NULL;
	size_t n = 0;
	int r = 0;
	if (list_dir(sup, &names, &n) == 0) {
		char *dir = xasprintf("%s/testcasesupport", tmp);
		r = util_mkdirs(dir, err);
		for (size_t i = 0; i < n && r == 0; i++) {
			size_t l = strlen(names[i]);
			if (l < 3 || strcmp(names[i] + l - 2, ".h"))
				continue;
			char *src = xasprintf("%s/%s", sup, names[i]), *dst = xasprintf("%s/%s", dir, names[i]);
			char *buf = NULL;
			size_t len = 0;
			r = util_read_file(src, (size_t)REVIEW_MAX_FILE_BYTES, &buf, &len, err);
			if (r == 0)
				r = util_write_file_atomic(dst, buf, len, false, err);
			free(buf);
			free(src);
			free(dst);
		}
		free(dir);
		names_free(names, n);
	}
	free(sup);
	return r;
}

/* ---- scoring ---- */

static int rel_cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key, ((const struct bfile *)elem)->rel);
}

/* Scores findings [{file, line, cwe}] as run r. */
static void score(struct bench *b, int r, const cJSON *findings)
{
	struct run *run = &b->runs[r];
	cJSON *seen = cJSON_CreateObject();
	const cJSON *x;
	cJSON_ArrayForEach(x, findings) {
		const char *file = review_str(x, "file");
		long line = (long)jnum(x, "line", 0);
		struct bfile *f = bsearch(file, b->files, b->nfiles, sizeof(*b->files), rel_cmp);
		if (!f || line < 1 || line > f->nlines || !cwe_counts(f->cwe, review_str(x, "cwe")))
			continue;
		char *key = xasprintf("%s:%ld", file, line);
		bool dup = cJSON_GetObjectItemCaseSensitive(seen, key) != NULL;
		if (!dup)
			cJSON_AddTrueToObject(seen, key);
		free(key);
		if (dup)
			continue;
		const struct fn *in = NULL;
		for (size_t k = 0; k < f->nfns && !in; k++)
			if (line >= f->fns[k].start && line <= f->fns[k].end)
				in = &f->fns[k];
		const char *verdict;
		if (!in || !in->kind) {
			run->outside++;
			verdict = "outside";
		} else if (in->kind == 2) {
			run->fas++;
			verdict = "false_alarm";
		} else if (f->defect[line]) {
			run->hits++;
			b->cases[f->kase].hit[r] = true;
			verdict = "hit";
		} else {
			run->off++;
			verdict = "off_line";
		}
		if (b->dump) {
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "run", run_keys[r]);
			cJSON_AddStringToObject(d, "case", b->cases[f->kase].name);
			cJSON_AddStringToObject(d, "file", file);
			cJSON_AddNumberToObject(d, "line", (double)line);
			cJSON_AddStringToObject(d, "cwe", review_str(x, "cwe"));
			cJSON_AddStringToObject(d, "tool", review_str(x, "tool"));
			cJSON_AddStringToObject(d, "rule", review_str(x, "rule"));
			cJSON_AddNumberToObject(d, "level", jnum(x, "level", 0));
			cJSON_AddStringToObject(d, "verdict", verdict);
			char *text = cJSON_PrintUnformatted(d);
			fprintf(b->dump, "%s\n", text);
			free(text);
			cJSON_Delete(d);
		}
	}
	cJSON_Delete(seen);
	run->cases_hit = 0;
	for (size_t i = 0; i < b->ncases; i++)
		run->cases_hit += b->cases[i].hit[r];
}

/* ---- the runs ---- */

static void crew_progress(void *ctx, const char *line)
{
	(void)ctx;
	char *clean = util_sanitize(line, strlen(line), false);
	fprintf(stderr, "madf: bench review: crew: %s\n", clean);
	free(clean);
}

static cJSON *files_json(const struct bench *b, size_t from, size_t to)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = from; i < to && i < b->nfiles; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(b->files[i].rel));
	return a;
}

static void run_crew(struct cli *cli, struct bench *b, const char *tmp)
{
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "id", tmp);
	cJSON *p = cJSON_AddObjectToObject(req, "params");
	cJSON_AddItemToObject(p, "agents", cJSON_CreateStringArray((const char *[]){ "critical" }, 1));
	cJSON_AddNumberToObject(p, "max_files", 100000000);
	cJSON_AddNumberToObject(p, "max_bytes", 1e12);
	cJSON_AddNumberToObject(p, "timeout_s", 86400);
	cJSON *agg = NULL, *error = NULL;
	struct review_progress prog = { .fn = crew_progress };
	int64_t t0 = util_mono_ns();
	int st = cli_review_run_crew(cli, req, NULL, 0, &prog, &agg, &error);
	b->runs[RUN_CREW].secs = (double)(util_mono_ns() - t0) / 1e9;
	cJSON *found = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(agg, "critical")) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "file", review_str(f, "file"));
		cJSON_AddNumberToObject(x, "line", jnum(f, "line", 0));
		cJSON_AddStringToObject(x, "cwe", review_str(f, "reference"));
		cJSON_AddItemToArray(found, x);
	}
	if (st)
		b->runs[RUN_CREW].error = xasprintf("%d: %s", st, error && jstr(error, "error") ?
						    jstr(error, "error") : "the review failed");
	else
		score(b, RUN_CREW, found);
	cJSON_Delete(found);
	cJSON_Delete(agg);
	cJSON_Delete(error);
	cJSON_Delete(req);
}

/* One analyzer alone over every file, through the tool registry; its
 * items (with their CWE) added to all. */
static void run_tool(struct bench *b, struct tools *t, int r, const char *tool, const char *tmp,
		     cJSON *all)
{
	cJSON *found = cJSON_CreateArray();
	int64_t t0 = util_mono_ns();
	for (size_t i = 0; i < b->nfiles && !b->runs[r].error; i += TOOL_CHUNK) {
		cJSON *args = cJSON_CreateObject();
		cJSON_AddStringToObject(args, "root", tmp);
		cJSON_AddItemToObject(args, "files", files_json(b, i, i + TOOL_CHUNK));
		cJSON *res = NULL;
		char *err = NULL;
		if (tools_call(t, "bench_review", tool, args, &res, &err) < 0) {
			b->runs[r].error = util_sanitize(err ? err : "failed", strlen(err ? err : "failed"), false);
		} else {
			cJSON *it;
			while ((it = cJSON_DetachItemFromArray(cJSON_GetObjectItem(res, "items"), 0)))
				cJSON_AddItemToArray(found, it);
			const cJSON *note;
			cJSON_ArrayForEach(note, cJSON_GetObjectItem(res, "notes")) {
				const char *txt = cJSON_IsString(note) ? note->valuestring : "";
				char *clean = util_sanitize(txt, strlen(txt), false);
				fprintf(stderr, "madf: bench review: %s\n", clean);
				free(clean);
				/* a file it skipped (not the fast-mode note) */
				b->runs[r].skipped += strstr(txt, "; skipped") != NULL;
			}
		}
		free(err);
		cJSON_Delete(res);
		cJSON_Delete(args);
	}
	b->runs[r].secs = (double)(util_mono_ns() - t0) / 1e9;
	if (!b->runs[r].error)
		score(b, r, found);
	cJSON *it;
	while ((it = cJSON_DetachItemFromArray(found, 0)))
		cJSON_AddItemToArray(all, it);
	cJSON_Delete(found);
}

static void run_tools(struct cli *cli, struct bench *b, const char *tmp)
{
	bool any = false;
	for (int r = RUN_TOOL0; r < NRUNS; r++)
		any |= b->want[r];
	if (!any)
		return;
	struct tools *t = NULL;
	char *err = NULL;
	if (tools_open(cli->data_dir, cli->log_dir, NULL, &t, &err) < 0 ||
	    review_tools_register(t, &err) < 0) {
		for (int r = RUN_TOOL0; r < NRUNS; r++)
			b->runs[r].error = xstrdup(err ? err : "the tool registry failed");
		free(err);
		if (t)
			review_tools_release(t);
		tools_free(&t);
		return;
	}
	cJSON *all = cJSON_CreateArray(), *flow = cJSON_CreateArray();
	bool failed = false, missing4 = false, missing5 = false;
	for (int r = RUN_TOOL0; r < RUN_TOOLN; r++) {
		if (!b->want[r]) {
			missing4 |= r != RUN_FLOW;
			missing5 = true;
			continue;
		}
		fprintf(stderr, "madf: bench review: %s\n", run_names[r]);
		run_tool(b, t, r, run_tool_names[r], tmp, r == RUN_FLOW ? flow : all);
		if (r != RUN_FLOW)
			b->runs[RUN_UNION].secs += b->runs[r].secs;
		b->runs[RUN_UNION5].secs += b->runs[r].secs;
		failed |= b->runs[r].error != NULL;
	}
	for (int u = RUN_UNION; u <= RUN_UNION5; u++) {
		if (!b->want[u])
			continue;
		if (u == RUN_UNION ? missing4 : missing5)
			b->want[u] = false; /* not all of its analyzers ran */
		else if (failed)
			b->runs[u].error = xstrdup("an analyzer failed");
		else if (u == RUN_UNION)
			score(b, u, all);
	}
	if (b->want[RUN_UNION5] && !b->runs[RUN_UNION5].error) {
		cJSON *it;
		while ((it = cJSON_DetachItemFromArray(flow, 0)))
			cJSON_AddItemToArray(all, it);
		score(b, RUN_UNION5, all);
	}
	cJSON_Delete(flow);
	cJSON_Delete(all);
	tools_save_usage(t, NULL);
	review_tools_release(t);
	tools_free(&t);
}

/* ---- output ---- */

static double ratio(long a, long b)
{
	return b > 0 ? (double)a / (double)b : -1;
}

static void print_table(const struct bench *b, const char *mode)
{
	printf("madf bench review: Juliet C/C++ 1.3 at %s\n", b->suite);
	printf("CWE");
	for (size_t i = 0; i < b->ncwes; i++)
		printf("%s%d", i ? ", " : " ", b->cwes[i]);
	long nd = 0;
	for (size_t i = 0; i < b->nfiles; i++)
		nd += b->files[i].ndefect;
	printf(": %zu test cases in %zu C files, %ld defect lines; %s\n", b->ncases, b->nfiles, nd,
	       mode);
	printf("test cases: %s (the critical agent's keep-policy was tuned on the odd-numbered "
	       "cases only%s)\n\n", b->split == SPLIT_ALL ? "all" : b->split == SPLIT_ODD ?
	       "the odd-numbered half (flow variants 01, 03, ...)" :
	       "the even-numbered half (flow variants 02, 04, ...)",
	       b->split == SPLIT_EVEN ? ": none of these" : b->split == SPLIT_ODD ?
	       ": these figures are of its tuning set" : "; --split even for the held-out half");
	printf("%-20s %6s %9s %11s %6s %12s %8s %8s %7s %9s\n", "run", "recall", "precision",
	       "cases hit", "hits", "false alarms", "off line", "outside", "skipped", "time");
	for (int r = 0; r < NRUNS; r++) {
		const struct run *x = &b->runs[r];
		if (!b->want[r]) {
			printf("%-20s not run\n", run_names[r]);
			continue;
		}
		if (x->error) {
			char *clean = util_sanitize(x->error, strlen(x->error), false);
			printf("%-20s failed: %s\n", run_names[r], clean);
			free(clean);
			continue;
		}
		double rc = ratio(x->cases_hit, (long)b->ncases), pr = ratio(x->hits, x->hits + x->fas);
		char ps[16], cs[32];
		if (pr < 0)
			snprintf(ps, sizeof(ps), "-");
		else
			snprintf(ps, sizeof(ps), "%.3f", pr);
		snprintf(cs, sizeof(cs), "%ld/%zu", x->cases_hit, b->ncases);
		printf("%-20s %6.3f %9s %11s %6ld %12ld %8ld %8ld %7ld %7.1f s\n", run_names[r], rc, ps,
		       cs, x->hits, x->fas, x->off, x->outside, x->skipped, x->secs);
	}
	printf("\ncases hit by CWE      cases");
	for (int r = 0; r < NRUNS; r++)
		if (b->want[r])
			printf(" %14s", run_keys[r]);
	printf("\n");
	for (size_t i = 0; i < b->ncwes; i++) {
		long n = 0, h[NRUNS] = { 0 };
		for (size_t k = 0; k < b->ncases; k++)
			if (b->cases[k].cwe == b->cwes[i]) {
				n++;
				for (int r = 0; r < NRUNS; r++)
					h[r] += b->cases[k].hit[r];
			}
		printf("CWE-%-17d %5ld", b->cwes[i], n);
		for (int r = 0; r < NRUNS; r++)
			if (b->want[r])
				printf(" %14ld", h[r]);
		printf("\n");
	}
	printf("\nA hit: a finding of the case's CWE (or its family) on a line under a "
	       "(POTENTIAL) FLAW comment in a bad function; a false alarm: one in a good "
	       "function; off line: elsewhere in a bad function. Recall per test case, "
	       "precision per line.\n");
}

static cJSON *bench_json(const struct bench *b, const char *mode)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "suite", b->suite);
	cJSON_AddStringToObject(j, "mode", mode);
	cJSON_AddStringToObject(j, "split", split_names[b->split]);
	cJSON_AddStringToObject(j, "tuned_on", "odd");
	cJSON *cw = cJSON_AddArrayToObject(j, "cwes");
	for (size_t i = 0; i < b->ncwes; i++)
		cJSON_AddItemToArray(cw, cJSON_CreateNumber(b->cwes[i]));
	cJSON_AddNumberToObject(j, "cases", (double)b->ncases);
	cJSON_AddNumberToObject(j, "files", (double)b->nfiles);
	long nd = 0;
	for (size_t i = 0; i < b->nfiles; i++)
		nd += b->files[i].ndefect;
	cJSON_AddNumberToObject(j, "defect_lines", (double)nd);
	cJSON *runs = cJSON_AddObjectToObject(j, "runs");
	for (int r = 0; r < NRUNS; r++) {
		const struct run *x = &b->runs[r];
		if (!b->want[r])
			continue;
		cJSON *o = cJSON_AddObjectToObject(runs, run_keys[r]);
		if (x->error) {
			cJSON_AddStringToObject(o, "error", x->error);
			continue;
		}
		double rc = ratio(x->cases_hit, (long)b->ncases), pr = ratio(x->hits, x->hits + x->fas);
		cJSON_AddNumberToObject(o, "recall", rc);
		if (pr < 0)
			cJSON_AddNullToObject(o, "precision");
		else
			cJSON_AddNumberToObject(o, "precision", pr);
		cJSON_AddNumberToObject(o, "cases_hit", (double)x->cases_hit);
		cJSON_AddNumberToObject(o, "hits", (double)x->hits);
		cJSON_AddNumberToObject(o, "false_alarms", (double)x->fas);
		cJSON_AddNumberToObject(o, "off_line", (double)x->off);
		cJSON_AddNumberToObject(o, "outside", (double)x->outside);
		cJSON_AddNumberToObject(o, "skipped", (double)x->skipped);
		cJSON_AddNumberToObject(o, "seconds", x->secs);
	}
	cJSON *by = cJSON_AddObjectToObject(j, "by_cwe");
	for (size_t i = 0; i < b->ncwes; i++) {
		char k[16];
		snprintf(k, sizeof(k), "%d", b->cwes[i]);
		cJSON *o = cJSON_AddObjectToObject(by, k);
		long n = 0, h[NRUNS] = { 0 };
		for (size_t c = 0; c < b->ncases; c++)
			if (b->cases[c].cwe == b->cwes[i]) {
				n++;
				for (int r = 0; r < NRUNS; r++)
					h[r] += b->cases[c].hit[r];
			}
		cJSON_AddNumberToObject(o, "cases", (double)n);
		for (int r = 0; r < NRUNS; r++)
			if (b->want[r])
				cJSON_AddNumberToObject(o, run_keys[r], (double)h[r]);
	}
	return j;
}

static void bench_release(struct bench *b)
{
	for (size_t i = 0; i < b->nfiles; i++) {
		for (size_t k = 0; k < b->files[i].nfns; k++)
			free(b->files[i].fns[k].name);
		free(b->files[i].fns);
		free(b->files[i].defect);
		free(b->files[i].rel);
	}
	free(b->files);
	for (size_t i = 0; i < b->ncases; i++)
		free(b->cases[i].name);
	free(b->cases);
	free(b->cwes);
	for (int r = 0; r < NRUNS; r++)
		free(b->runs[r].error);
}

static int bench_review(struct cli *cli, int argc, char **argv)
{
	struct cli_opts o = { argc, argv, 2, "bench", &cmd_bench_review_entry, 0 };
	const char *name, *val, *suite = NULL, *cwe_list = NULL, *split = NULL, *dump = NULL;
	const char *runs = NULL;
	long max_cases = 0;
	bool json = false;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name) {
			if (suite)
				return cli_fail(EXIT_USAGE, "bench", "review: one suite at a time");
			suite = val;
		} else if (!strcmp(name, "--json")) {
			json = true;
		} else if (!strcmp(name, "--cwe")) {
			cwe_list = val;
		} else if (!strcmp(name, "--split")) {
			split = val;
		} else if (!strcmp(name, "--findings")) {
			dump = val;
		} else if (!strcmp(name, "--runs")) {
			runs = val;
		} else if (!strcmp(name, "--max-cases")) {
			if (cli_long("bench", name, val, 1, 1000000, &max_cases) < 0)
				return EXIT_USAGE;
		}
	}
	if (r < 0)
		return EXIT_USAGE;
	if (!suite)
		suite = getenv("MADF_JULIET");
	if (!suite || !*suite)
		return cli_fail(EXIT_USAGE, "bench", "review: which suite? give the path of a Juliet "
				"C/C++ 1.3 checkout (GitHub arichardson/juliet-test-suite-c) or set MADF_JULIET");
	int want[256];
	size_t nwant = 0;
	if (cwe_list) {
		char *copy = xstrdup(cwe_list), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (!strncasecmp(t, "CWE", 3))
				t += 3 + (t[3] == '-');
			char *end;
			errno = 0;
			long v = strtol(t, &end, 10);
			if (errno || *end || v < 1 || v > 100000 || nwant >= ARRAY_SIZE(want)) {
				free(copy);
				return cli_fail(EXIT_USAGE, "bench", "review: --cwe: a comma-separated list of "
						"CWE numbers (e.g. 121,415,CWE-476), got \"%s\"", cwe_list);
			}
			want[nwant++] = (int)v;
		}
		free(copy);
	}
	struct bench b = { .suite = suite };
	for (int i = 0; i < NRUNS; i++)
		b.want[i] = !runs;
	if (runs) {
		char *copy = xstrdup(runs), *save = NULL;
		for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			int i = 0;
			while (i < NRUNS && strcmp(t, run_keys[i]))
				i++;
			if (i == NRUNS) {
				free(copy);
				return cli_fail(EXIT_USAGE, "bench", "review: --runs: a comma-separated list "
						"of crew, cppcheck, flawfinder, gcc_analyzer, clang_analyzer, "
						"flow, union, union5; got \"%s\"", runs);
			}
			b.want[i] = true;
			/* a union needs its analyzers */
			for (int k = RUN_TOOL0; k < RUN_TOOLN && i >= RUN_UNION; k++)
				b.want[k] |= k != RUN_FLOW || i == RUN_UNION5;
		}
		free(copy);
	}
	if (split) {
		for (b.split = SPLIT_ALL; b.split <= SPLIT_EVEN; b.split++)
			if (!strcmp(split, split_names[b.split]))
				break;
		if (b.split > SPLIT_EVEN)
			return cli_fail(EXIT_USAGE, "bench", "review: --split: odd, even or all, got "
					"\"%s\"", split);
	}
	if (dump && !(b.dump = fopen(dump, "w")))
		return cli_fail(EXIT_FAIL, "bench", "review: --findings %s: %s", dump, strerror(errno));
	char *err = NULL;
	const char *tdir = getenv("TMPDIR");
	char *tmp = xasprintf("%s/madf-bench-review.XXXXXX", tdir && *tdir ? tdir : "/tmp");
	int rc = EXIT_OK;
	if (!mkdtemp(tmp)) {
		rc = cli_fail(EXIT_FAIL, "bench", "review: %s: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	if (suite_walk(&b, want, nwant, max_cases, &err) < 0 || suite_load(&b, tmp, &err) < 0) {
		rc = cli_fail(EXIT_USAGE, "bench", "review: %s", err ? err : "?");
		free(err);
		goto out;
	}
	fprintf(stderr, "madf: bench review: %zu test cases in %zu C files copied to %s\n", b.ncases,
		b.nfiles, tmp);
	struct llm_agent_settings *s = NULL;
	if (llm_agent_settings_from_env(&s, &err) < 0) {
		rc = cli_fail(EXIT_USAGE, "bench", "review: %s", err);
		free(err);
		goto out;
	}
	char *mode = llm_agent_settings_describe(s);
	llm_agent_settings_free(&s);
	if (b.want[RUN_CREW])
		run_crew(cli, &b, tmp);
	run_tools(cli, &b, tmp);
	if (json) {
		cJSON *j = bench_json(&b, mode);
		char *text = cJSON_Print(j);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(j);
	} else {
		print_table(&b, mode);
	}
	free(mode);
	for (int i = 0; i < NRUNS; i++)
		if (b.runs[i].error)
			rc = EXIT_FAIL;
out:
	if (b.dump)
		fclose(b.dump);
	util_rm_tree(tmp);
	free(tmp);
	bench_release(&b);
	return rc;
}

static const struct cli_opt bench_review_options[] = {
	{ .name = "--cwe", .arg = "LIST", .help = "the CWEs to run, like 121,415 (default: all)" },
	{ .name = "--max-cases", .arg = "N", .help = "the first N test cases of each CWE" },
	{ .name = "--split", .arg = "HALF", .help = "odd, even or all (default): the test cases "
	  "whose flow variant number is odd (the critical agent's keep-policy was tuned on "
	  "them) or even (never tuned on)" },
	{ .name = "--runs", .arg = "LIST", .help = "only these runs: crew, cppcheck, flawfinder, "
	  "gcc_analyzer, clang_analyzer, flow (madf's own finder), union (the four analyzers "
	  "but flow), union5 (the five); a union runs its analyzers (default: all)" },
	{ .name = "--findings", .arg = "FILE", .help = "write every scored finding of every "
	  "run as a JSON line (run, case, file, line, cwe, tool, rule, level, verdict)" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

const struct cli_cmd cmd_bench_review_entry = {
	.name = "review",
	.args = "[SUITE]",
	.opts = bench_review_options,
	.summary = "the code review crew and each analyzer alone on a Juliet C/C++ 1.3 "
		   "checkout (SUITE, default MADF_JULIET), scored line by line: recall and "
		   "precision side by side",
	.run = bench_review,
};
