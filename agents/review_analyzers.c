/* The compilers' path-sensitive analyzers as tools of the registry:
 * review.gcc_analyzer (gcc -fanalyzer, its JSON diagnostics, with the
 * compiler's -O2 buffer-size warnings) and review.clang_analyzer (clang
 * --analyze with the core, unix and security checkers and a few alpha
 * ones). Each runs once per translation unit (each .c file of
 * args.files), in parallel within the analyzer slots (the CPU count), each
 * run bounded by a per-file timeout (MADF_REVIEW_TU_TIMEOUT_S, default
 * REVIEW_TU_TIMEOUT_S); a file that times out or does not compile is
 * skipped with a note, the others still count. Include paths are guessed:
 * the root and every directory of the tree that holds headers (-I), and a
 * system header that is not found is looked for one level under
 * /usr/include and /usr/local/include (e.g. /usr/include/cjson/cJSON.h)
 * and the file compiled again with it. Findings carry a CWE: gcc prints
 * its own; clang's checkers map to CWEs by the table below. */
#include "agents/review.h"
#include "agents/review_priv.h"

#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define REVIEW_TU_TIMEOUT_S 60
#define REVIEW_ANALYZER_MAX_LINES 200 /* longer files: the fast mode */
#define TU_MAX_OUT (8u * 1024 * 1024)
#define INC_MAX 64     /* guessed -I directories */
#define WALK_MAX 20000 /* directories looked at for headers */
#define RETRY_MAX 4    /* compiles of one file with a newly found header dir */

/* ---- clang's checkers and gcc's options as CWEs: the one table ----
 * A row matches when the tool and the rule (clang's checker, gcc's
 * option) are equal and the message contains text ("" matches all); the
 * first matching row wins. level: how sure the analyzer is (5: a definite
 * path-sensitive defect, 4: a likely one or an alpha checker, 2: a
 * remark). gcc's own CWE (metadata.cwe) is used when it gives one. */
static const struct cwe_row {
	const char *tool, *rule, *text, *cwe;
	int level;
} cwe_map[] = {
	{ "clang", "unix.Malloc", "free released memory", "CWE-415", 5 },
	{ "clang", "unix.Malloc", "after it is freed", "CWE-416", 5 },
	{ "clang", "unix.Malloc", "after it is released", "CWE-416", 5 },
	{ "clang", "unix.Malloc", "leak", "CWE-401", 4 },
	{ "clang", "unix.Malloc", "not allocated by malloc", "CWE-590", 4 },
	{ "clang", "unix.Malloc", "non-heap", "CWE-590", 4 },
	{ "clang", "unix.Malloc", "zero-allocated", "CWE-687", 4 },
	{ "clang", "unix.Malloc", "", "CWE-762", 4 },
	{ "clang", "cplusplus.NewDelete", "free released memory", "CWE-415", 5 },
	{ "clang", "cplusplus.NewDelete", "after it is freed", "CWE-416", 5 },
	{ "clang", "cplusplus.NewDelete", "", "CWE-762", 4 },
	{ "clang", "cplusplus.NewDeleteLeaks", "", "CWE-401", 4 },
	{ "clang", "unix.MismatchedDeallocator", "", "CWE-762", 5 },
	{ "clang", "core.NullDereference", "", "CWE-476", 5 },
	{ "clang", "core.NonNullParamChecker", "", "CWE-476", 5 },
	{ "clang", "unix.cstring.NullArg", "", "CWE-476", 5 },
	{ "clang", "core.CallAndMessage", "null", "CWE-476", 5 },
	{ "clang", "core.CallAndMessage", "uninitialized", "CWE-457", 5 },
	{ "clang", "core.CallAndMessage", "garbage", "CWE-457", 5 },
	{ "clang", "core.UndefinedBinaryOperatorResult", "", "CWE-457", 5 },
	{ "clang", "core.uninitialized.Assign", "", "CWE-457", 5 },
	{ "clang", "core.uninitialized.Branch", "", "CWE-457", 5 },
	{ "clang", "core.uninitialized.UndefReturn", "", "CWE-457", 5 },
	{ "clang", "core.uninitialized.ArraySubscript", "", "CWE-457", 5 },
	{ "clang", "core.uninitialized.CapturedBlockVariable", "", "CWE-457", 5 },
	{ "clang", "core.DivideZero", "", "CWE-369", 5 },
	{ "clang", "core.StackAddressEscape", "", "CWE-562", 5 },
	{ "clang", "core.VLASize", "", "CWE-129", 4 },
	{ "clang", "unix.cstring.BadSizeArg", "", "CWE-131", 4 },
	{ "clang", "unix.API", "", "CWE-628", 4 },
	{ "clang", "unix.Stream", "", "CWE-775", 4 },
	{ "clang", "alpha.unix.Stream", "", "CWE-775", 4 },
	{ "clang", "alpha.security.ArrayBoundV2", "", "CWE-787", 4 },
	{ "clang", "alpha.security.ArrayBound", "", "CWE-787", 4 },
	{ "clang", "alpha.unix.cstring.OutOfBounds", "", "CWE-787", 4 },
	{ "clang", "alpha.unix.cstring.BufferOverlap", "", "CWE-475", 4 },
	{ "clang", "alpha.security.MallocOverflow", "", "CWE-190", 4 },
	{ "clang", "alpha.security.ReturnPtrRange", "", "CWE-466", 4 },
	{ "clang", "alpha.security.taint.TaintPropagation", "format string", "CWE-134", 4 },
	{ "clang", "alpha.security.taint.TaintPropagation", "system call", "CWE-78", 4 },
	{ "clang", "alpha.security.taint.TaintPropagation", "buffer size", "CWE-789", 4 },
	{ "clang", "alpha.security.taint.TaintPropagation", "", "CWE-20", 4 },
	{ "clang", "security.insecureAPI.gets", "", "CWE-242", 4 },
	{ "clang", "security.insecureAPI.strcpy", "", "CWE-120", 3 },
	{ "clang", "security.insecureAPI.rand", "", "CWE-338", 2 },
	{ "clang", "security.insecureAPI.mktemp", "", "CWE-377", 3 },
	{ "clang", "security.insecureAPI.vfork", "", "CWE-676", 3 },
	{ "clang", "security.insecureAPI.getpw", "", "CWE-676", 3 },
	{ "clang", "security.insecureAPI.UncheckedReturn", "", "CWE-252", 3 },
	{ "clang", "security.FloatLoopCounter", "", "CWE-1339", 2 },
	{ "clang", "deadcode.DeadStores", "", "CWE-563", 2 },
	{ "gcc", "-Wanalyzer-double-free", "", "CWE-415", 5 },
	{ "gcc", "-Wanalyzer-use-after-free", "", "CWE-416", 5 },
	{ "gcc", "-Wanalyzer-null-dereference", "", "CWE-476", 5 },
	{ "gcc", "-Wanalyzer-null-argument", "", "CWE-476", 5 },
	{ "gcc", "-Wanalyzer-possible-null-dereference", "", "CWE-690", 4 },
	{ "gcc", "-Wanalyzer-possible-null-argument", "", "CWE-690", 4 },
	{ "gcc", "-Wanalyzer-malloc-leak", "", "CWE-401", 4 },
	{ "gcc", "-Wanalyzer-file-leak", "", "CWE-775", 4 },
	{ "gcc", "-Wanalyzer-use-of-uninitialized-value", "", "CWE-457", 5 },
	{ "gcc", "-Wanalyzer-free-of-non-heap", "", "CWE-590", 5 },
	{ "gcc", "-Wanalyzer-mismatching-deallocation", "", "CWE-762", 5 },
	{ "gcc", "-Wanalyzer-use-of-pointer-in-stale-stack-frame", "", "CWE-562", 5 },
	{ "gcc", "-Wanalyzer-tainted-array-index", "", "CWE-129", 4 },
	{ "gcc", "-Wanalyzer-", "", NULL, 4 },
	{ "gcc", "-Wstringop-overflow=", "", "CWE-787", 4 },
	{ "gcc", "-Wstringop-overflow", "", "CWE-787", 4 },
	{ "gcc", "-Warray-bounds", "", "CWE-787", 4 },
	{ "gcc", "-Warray-bounds=", "", "CWE-787", 4 },
	{ "gcc", "-Wstringop-overread", "", "CWE-125", 4 },
	{ "gcc", "-Wformat-overflow=", "", "CWE-787", 4 },
	{ "gcc", "-Wfree-nonheap-object", "", "CWE-590", 4 },
	{ "gcc", "-Wuse-after-free", "", "CWE-416", 4 },
	{ "gcc", "-Wuse-after-free=", "", "CWE-416", 4 },
	{ "gcc", "-Wformat-security", "", "CWE-134", 3 },
	{ "gcc", "-Wdiv-by-zero", "", "CWE-369", 4 },
};

/* The row for tool's rule and message, or NULL: a rule outside the table
 * is not kept (gcc's -Wanalyzer-* rows end in a catch-all). */
static const struct cwe_row *cwe_of(const char *tool, const char *rule, const char *msg)
{
	for (size_t i = 0; i < ARRAY_SIZE(cwe_map); i++) {
		const struct cwe_row *r = &cwe_map[i];
		size_t n = strlen(r->rule);
		bool prefix = r->rule[n - 1] == '-';
		if (strcmp(r->tool, tool) || (prefix ? strncmp(rule, r->rule, n) : strcmp(rule, r->rule)))
			continue;
		if (!*r->text || strstr(msg, r->text))
			return r;
	}
	return NULL;
}

/* ---- include paths ---- */

struct incs {
	pthread_mutex_t mu;
	char **dirs; /* "-I..." arguments */
	size_t n;
};

/* Whether dir was added (not there yet, room left). */
static bool incs_add(struct incs *in, const char *dir)
{
	char *arg = xasprintf("-I%s", dir);
	bool added = false, there = false;
	pthread_mutex_lock(&in->mu);
	for (size_t i = 0; i < in->n && !there; i++)
		there = !strcmp(in->dirs[i], arg);
	if (!there && in->n < INC_MAX + 16) {
		in->dirs = xrealloc(in->dirs, (in->n + 1) * sizeof(*in->dirs));
		in->dirs[in->n++] = arg;
		arg = NULL;
		added = true;
	}
	pthread_mutex_unlock(&in->mu);
	free(arg);
	return added;
}

/* Directories under root (relative; "." first) that hold a .h file;
 * dot directories and symlinks are not entered. */
static void incs_walk(struct incs *in, const char *root)
{
	char **queue = xcalloc(1, sizeof(*queue));
	size_t nq = 1, head = 0;
	queue[0] = xstrdup(".");
	incs_add(in, ".");
	while (head < nq && head < WALK_MAX && in->n < INC_MAX) {
		char *rel = queue[head++];
		char *abs = xasprintf("%s/%s", root, rel);
		DIR *d = opendir(abs);
		bool headers = false;
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			size_t l = strlen(e->d_name);
			char *p = xasprintf("%s/%s", abs, e->d_name);
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				queue = xrealloc(queue, (nq + 1) * sizeof(*queue));
				queue[nq++] = strcmp(rel, ".") ? xasprintf("%s/%s", rel, e->d_name)
							       : xstrdup(e->d_name);
			} else if (l > 2 && !strcmp(e->d_name + l - 2, ".h") && S_ISREG(st.st_mode)) {
				headers = true;
			}
			free(p);
		}
		if (d)
			closedir(d);
		if (headers)
			incs_add(in, rel);
		free(abs);
	}
	for (size_t i = 0; i < nq; i++)
		free(queue[i]);
	free(queue);
}

/* The directory, one level under /usr/include or /usr/local/include,
 * holding header name (e.g. "cJSON.h"), or NULL. New. */
static char *system_header_dir(const char *name)
{
	static const char *const bases[] = { "/usr/include", "/usr/local/include" };
	if (!*name || strstr(name, ".."))
		return NULL;
	for (size_t b = 0; b < ARRAY_SIZE(bases); b++) {
		DIR *d = opendir(bases[b]);
		struct dirent *e;
		char *found = NULL;
		while (d && !found && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char *p = xasprintf("%s/%s/%s", bases[b], e->d_name, name);
			if (access(p, R_OK) == 0)
				found = xasprintf("%s/%s", bases[b], e->d_name);
			free(p);
		}
		if (d)
			closedir(d);
		if (found)
			return found;
	}
	return NULL;
}

/* The header a compiler did not find, from its message (gcc: "X: No such
 * file or directory", clang: "'X' file not found"). New, or NULL. */
static char *missing_header(const char *msg)
{
	const char *p = strstr(msg, ": No such file or directory");
	if (p) {
		const char *s = p;
		while (s > msg && s[-1] != ' ' && s[-1] != '\n' && s[-1] != '"')
			s--;
		return s < p ? xstrndup(s, (size_t)(p - s)) : NULL;
	}
	p = strstr(msg, "' file not found");
	if (p) {
		const char *s = p;
		while (s > msg && s[-1] != '\'')
			s--;
		return s < p ? xstrndup(s, (size_t)(p - s)) : NULL;
	}
	return NULL;
}

/* ---- one run over many translation units ---- */

struct tu_run {
	const char *tool; /* "gcc", "clang" */
	const char *const *fixed; /* the program and its fixed arguments */
	/* a file over max_lines runs in the fast mode: fixed without drop,
	 * and fast's arguments added */
	const char *drop;
	const char *const *fast;
	long max_lines, nfast;
	const char *fast_what; /* what the fast mode leaves out, for the note */
	const char *root;
	char **files;
	size_t nfiles, next;
	int64_t timeout_ms;
	struct incs incs;
	pthread_mutex_t mu; /* next, items, notes */
	cJSON *items;
	cJSON *notes; /* per-file notes */
	long analyzed, timed_out, failed;
	/* parses one file's output into items (under mu) */
	void (*parse)(struct tu_run *r, const char *file, const char *out, int status);
};

/* Notes "gcc-analyzer: FILE: why" (called under mu). */
static void tu_note(struct tu_run *r, const char *file, const char *why)
{
	char *clean = util_sanitize(why, strlen(why) > 200 ? 200 : strlen(why), false);
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	char *line = xasprintf("%s-analyzer: %s: %s", r->tool, file, clean);
	cJSON_AddItemToArray(r->notes, cJSON_CreateString(line));
	free(line);
	free(clean);
}

/* Compiles file once with the include dirs known now; 0 with *out (the
 * diagnostics, caller frees) and *status, or -1 (could not run). */
static int tu_exec(struct tu_run *r, const char *file, bool fast, char **out, int *status)
{
	pthread_mutex_lock(&r->incs.mu);
	size_t ni = r->incs.n, nf = 0, nx = 0, k = 0;
	while (r->fixed[nf])
		nf++;
	while (fast && r->fast[nx])
		nx++;
	const char **argv = xcalloc(nf + nx + ni + 2, sizeof(*argv));
	char **hold = xcalloc(ni + 1, sizeof(*hold));
	for (size_t i = 0; i < nf; i++)
		if (!fast || !r->drop || strcmp(r->fixed[i], r->drop))
			argv[k++] = r->fixed[i];
	for (size_t i = 0; i < nx; i++)
		argv[k++] = r->fast[i];
	nf = k;
	for (size_t i = 0; i < ni; i++)
		argv[nf + i] = hold[i] = xstrdup(r->incs.dirs[i]);
	pthread_mutex_unlock(&r->incs.mu);
	argv[nf + ni] = file;
	char *so = NULL, *se = NULL, *err = NULL;
	review_slot_take();
	int rc = review_exec(argv, r->root, r->timeout_ms, TU_MAX_OUT, &so, &se, status, &err);
	review_slot_give();
	for (size_t i = 0; i < ni; i++)
		free(hold[i]);
	free(hold);
	free(argv);
	free(err);
	if (rc < 0)
		return -1;
	/* both write diagnostics on stderr */
	free(so);
	*out = se;
	return 0;
}

/* The number of lines of root/file (0 when unreadable). */
static long file_lines(const char *root, const char *file)
{
	char *p = xasprintf("%s/%s", root, file), *buf = NULL;
	size_t len = 0;
	long n = 0;
	if (util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) == 0)
		for (size_t i = 0; i < len; i++)
			n += buf[i] == '\n';
	free(buf);
	free(p);
	return n;
}

static void tu_one(struct tu_run *r, const char *file)
{
	bool fast = r->max_lines > 0 && file_lines(r->root, file) > r->max_lines;
	if (fast) {
		pthread_mutex_lock(&r->mu);
		r->nfast++;
		pthread_mutex_unlock(&r->mu);
	}
	for (int attempt = 0; attempt < RETRY_MAX; attempt++) {
		char *out = NULL;
		int st = 0;
		if (tu_exec(r, file, fast, &out, &st) < 0) {
			pthread_mutex_lock(&r->mu);
			r->failed++;
			tu_note(r, file, "could not run the compiler; skipped");
			pthread_mutex_unlock(&r->mu);
			return;
		}
		if (st == 124) {
			pthread_mutex_lock(&r->mu);
			r->timed_out++;
			char *why = xasprintf("timed out after %lld s (MADF_REVIEW_TU_TIMEOUT_S); skipped",
					      (long long)(r->timeout_ms / 1000));
			tu_note(r, file, why);
			free(why);
			pthread_mutex_unlock(&r->mu);
			free(out);
			return;
		}
		char *hdr = st ? missing_header(out) : NULL;
		char *dir = hdr ? system_header_dir(hdr) : NULL;
		free(hdr);
		if (dir) {
			bool added = incs_add(&r->incs, dir);
			free(dir);
			if (added || attempt == 0) {
				free(out);
				continue; /* again with the header's directory */
			}
		}
		pthread_mutex_lock(&r->mu);
		r->parse(r, file, out, st);
		pthread_mutex_unlock(&r->mu);
		free(out);
		return;
	}
	pthread_mutex_lock(&r->mu);
	r->failed++;
	tu_note(r, file, "its headers were not found; skipped");
	pthread_mutex_unlock(&r->mu);
}

static void *tu_worker(void *arg)
{
	struct tu_run *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->mu);
		size_t i = r->next++;
		pthread_mutex_unlock(&r->mu);
		if (i >= r->nfiles)
			return NULL;
		tu_one(r, r->files[i]);
	}
}

static int64_t tu_timeout_ms(void)
{
	const char *s = getenv("MADF_REVIEW_TU_TIMEOUT_S");
	long v = s && *s ? strtol(s, NULL, 10) : REVIEW_TU_TIMEOUT_S;
	return (int64_t)(v < 1 ? 1 : v > 86400 ? 86400 : v) * 1000;
}

/* Runs r over args.files' .c files; *result {"items": [...], "notes":
 * [...], "analyzed": N, "timed_out": N, "failed": N}. */
static int tu_run_all(struct tu_run *r, const cJSON *args, cJSON **result, char **err)
{
	const char *prog = r->fixed[0];
	if (!review_have(prog))
		return err_set(err, "%s is not installed (Debian package %s; make deps)", prog,
			       review_package_of(prog));
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(args, "files");
	r->root = jstr(args, "root");
	if (!r->root || !cJSON_IsArray(files))
		return err_set(err, "args: root and files are required");
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		const char *s = cJSON_IsString(f) ? f->valuestring : "";
		size_t l = strlen(s);
		if (!l || s[0] == '/' || !strncmp(s, "../", 3) || strstr(s, "/../")) {
			for (size_t i = 0; i < r->nfiles; i++)
				free(r->files[i]);
			free(r->files);
			return err_set(err, "args.files: must be relative paths inside the root");
		}
		if (l < 3 || strcmp(s + l - 2, ".c"))
			continue; /* headers are analyzed through the files that include them */
		r->files = xrealloc(r->files, (r->nfiles + 1) * sizeof(*r->files));
		r->files[r->nfiles++] = xasprintf("./%s", s);
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_mutex_init(&r->incs.mu, NULL);
	r->items = cJSON_CreateArray();
	r->notes = cJSON_CreateArray();
	r->timeout_ms = tu_timeout_ms();
	const char *ml = getenv("MADF_REVIEW_ANALYZER_MAX_LINES");
	r->max_lines = ml && *ml ? strtol(ml, NULL, 10) : REVIEW_ANALYZER_MAX_LINES;
	incs_walk(&r->incs, r->root);
	int nth = review_slots_max();
	if ((size_t)nth > r->nfiles)
		nth = (int)r->nfiles;
	pthread_t th[256];
	int started = 0;
	for (int i = 0; i < nth; i++)
		if (pthread_create(&th[started], NULL, tu_worker, r) == 0)
			started++;
	if (!started && r->nfiles)
		tu_worker(r);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	for (size_t i = 0; i < r->incs.n; i++)
		free(r->incs.dirs[i]);
	free(r->incs.dirs);
	pthread_mutex_destroy(&r->mu);
	pthread_mutex_destroy(&r->incs.mu);
	if (r->nfast) {
		char *line = xasprintf("%s-analyzer: %ld file%s over %ld lines (MADF_REVIEW_ANALYZER_MAX_LINES) "
				       "analyzed in its fast mode (%s)", r->tool, r->nfast,
				       r->nfast == 1 ? "" : "s", r->max_lines, r->fast_what);
		cJSON_AddItemToArray(r->notes, cJSON_CreateString(line));
		free(line);
	}
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "items", r->items);
	cJSON_AddItemToObject(*result, "notes", r->notes);
	cJSON_AddNumberToObject(*result, "analyzed", (double)r->analyzed);
	cJSON_AddNumberToObject(*result, "timed_out", (double)r->timed_out);
	cJSON_AddNumberToObject(*result, "failed", (double)r->failed);
	return 0;
}

static void add_item(struct tu_run *r, const char *rule, const char *file, long line,
		     const char *msg, int gcc_cwe)
{
	const struct cwe_row *row = cwe_of(r->tool, rule, msg);
	if (!row)
		return;
	char buf[24];
	const char *cwe = row->cwe;
	if (gcc_cwe > 0) {
		snprintf(buf, sizeof(buf), "CWE-%d", gcc_cwe);
		cwe = buf;
	}
	char *clean = util_sanitize(msg, strlen(msg) > 300 ? 300 : strlen(msg), false);
	char *tool = xasprintf("%s-analyzer", r->tool);
	cJSON_AddItemToArray(r->items, review_raw_new(tool, rule, row->level, file, line, clean, cwe));
	free(tool);
	free(clean);
}

/* ---- gcc -fanalyzer: JSON diagnostics ---- */

static void gcc_parse(struct tu_run *r, const char *file, const char *out, int status)
{
	cJSON *j = cJSON_Parse(out);
	const cJSON *d;
	const char *first_error = NULL;
	cJSON_ArrayForEach(d, j) {
		const char *kind = review_str(d, "kind"), *opt = review_str(d, "option");
		const char *msg = review_str(d, "message");
		if (strstr(kind, "error") && !first_error) /* "error", "fatal error" */
			first_error = msg;
		if (strcmp(kind, "warning"))
			continue;
		const cJSON *caret = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "locations"), 0), "caret");
		const char *fl = review_str(caret, "file");
		long line = 0, cwe = 0; /* a number out of range (outside input): none */
		jint(caret, "line", 1, INT_MAX, &line);
		if (!*fl || line < 1 || fl[0] == '/')
			continue; /* in a system header */
		jint(cJSON_GetObjectItemCaseSensitive(d, "metadata"), "cwe", 1, INT_MAX, &cwe);
		add_item(r, opt, fl, line, msg, (int)cwe);
	}
	if (status && (first_error || !j)) {
		r->failed++;
		char *why = xasprintf("does not compile (%s); skipped",
				      first_error ? first_error : "no diagnostics");
		tu_note(r, file, why);
		free(why);
	} else {
		r->analyzed++;
	}
	cJSON_Delete(j);
}

static int tool_gcc_analyzer(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const fixed[] = {
		"gcc", "-fanalyzer", "-O2", "-c", "-o", "/dev/null", "-fdiagnostics-format=json",
		"-Warray-bounds", "-Wstringop-overflow", "-D_GNU_SOURCE", NULL
	};
	static const char *const fast[] = { NULL };
	struct tu_run r = { .tool = "gcc", .fixed = fixed, .parse = gcc_parse, .drop = "-fanalyzer",
			    .fast = fast, .fast_what = "the compiler's -O2 buffer warnings only, "
			    "without -fanalyzer" };
	return tu_run_all(&r, args, result, err);
}

/* ---- clang --analyze: "file:line:col: warning: text [checker]" ---- */

static void clang_parse(struct tu_run *r, const char *file, const char *out, int status)
{
	char *copy = xstrdup(out), *save = NULL;
	char *first_error = NULL;
	for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
		char *w = strstr(ln, ": warning: ");
		char *e = strstr(ln, ": error: "), *fe = strstr(ln, ": fatal error: ");
		if ((e || fe) && !first_error)
			first_error = xstrdup(e ? e + 9 : fe + 15);
		size_t l = strlen(ln);
		if (!w || l < 3 || ln[l - 1] != ']')
			continue;
		char *br = strrchr(ln, '[');
		if (!br || br < w)
			continue;
		ln[l - 1] = 0;
		const char *checker = br + 1;
		*br = 0;
		if (br > w && br[-1] == ' ')
			br[-1] = 0;
		*w = 0;
		/* ln is "file:line:col" */
		char *c2 = strrchr(ln, ':');
		if (!c2)
			continue;
		*c2 = 0;
		char *c1 = strrchr(ln, ':');
		if (!c1)
			continue;
		*c1 = 0;
		long line = strtol(c1 + 1, NULL, 10);
		if (ln[0] == '/' || line < 1)
			continue;
		add_item(r, checker, ln, line, w + 11, 0);
	}
	if (status && first_error) {
		r->failed++;
		char *why = xasprintf("does not compile (%s); skipped", first_error);
		tu_note(r, file, why);
		free(why);
	} else {
		r->analyzed++;
	}
	free(first_error);
	free(copy);
}

static int tool_clang_analyzer(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	static const char *const fixed[] = {
		"clang", "--analyze", "-o", "/dev/null", "-fno-color-diagnostics",
		"-Xclang", "-analyzer-checker=alpha.security.ArrayBoundV2,alpha.unix.cstring.OutOfBounds,"
		"alpha.security.taint.TaintPropagation,alpha.security.MallocOverflow,alpha.unix.Stream",
		"-D_GNU_SOURCE", NULL
	};
	static const char *const fast[] = { "-Xclang", "-analyzer-config", "-Xclang", "mode=shallow",
					    NULL };
	struct tu_run r = { .tool = "clang", .fixed = fixed, .parse = clang_parse, .fast = fast,
			    .fast_what = "shallow: less inlining across calls" };
	return tu_run_all(&r, args, result, err);
}

static const char FILES_SCHEMA[] =
	"{\"type\":\"object\",\"properties\":{\"root\":{\"type\":\"string\"},"
	"\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
	"\"required\":[\"root\",\"files\"]}";

int review_analyzers_register(struct tools *t, char **err)
{
	const struct tool_def defs[] = {
		{ "review.gcc_analyzer", "gcc -fanalyzer per translation unit: path-sensitive "
		  "defects (double free, use after free, NULL dereference, leaks) with CWE ids",
		  FILES_SCHEMA, NULL, NULL, tool_gcc_analyzer },
		{ "review.clang_analyzer", "clang's static analyzer per translation unit: "
		  "path-sensitive defects with CWE ids by checker", FILES_SCHEMA, NULL, NULL,
		  tool_clang_analyzer },
	};
	for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
		if (tools_register(t, &defs[i], t, err) < 0)
			return -1;
	return 0;
}
