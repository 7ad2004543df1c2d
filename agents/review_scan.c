/* The codebase under review: the tree walk (links never followed, binary
 * and huge files left out with a note, limits) and the registered names. */
#include "agents/review.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/message.h"
#include "core/util.h"
#include "core/banned.h"

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return !errno && !*end && v > 0 ? v : def;
}

void review_limits_default(struct review_limits *l)
{
	l->max_files = env_long("MADF_REVIEW_MAX_FILES", REVIEW_MAX_FILES);
	l->max_bytes = env_long("MADF_REVIEW_MAX_BYTES", REVIEW_MAX_BYTES);
	l->max_file_bytes = env_long("MADF_REVIEW_MAX_FILE_BYTES", REVIEW_MAX_FILE_BYTES);
}

static const char *lang_of(const char *name, const char *head, size_t n)
{
	const char *dot = strrchr(name, '.');
	if (dot && (!strcmp(dot, ".c") || !strcmp(dot, ".h")))
		return "c";
	if (dot && (!strcmp(dot, ".sh") || !strcmp(dot, ".bash")))
		return "shell";
	if (n > 2 && head[0] == '#' && head[1] == '!') {
		const char *nl = memchr(head, '\n', n);
		size_t l = nl ? (size_t)(nl - head) : n;
		char *first = xstrndup(head, l);
		bool sh = strstr(first, "/sh") || strstr(first, "bash") || strstr(first, "dash");
		free(first);
		if (sh)
			return "shell";
	}
	return "other";
}

/* Valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t k;
		unsigned min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			k = 1, min = 0x80, c &= 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			k = 2, min = 0x800, c &= 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			k = 3, min = 0x10000, c &= 0x07;
		} else {
			return false;
		}
		if (i + k >= n)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			c = (c << 6) | (s[i + j] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

struct walk {
	const char *root; /* realpath */
	const struct review_limits *l;
	cJSON *files, *notes;
	long nfiles, bytes;
	int status;
	char *err;
	cJSON *ignored;      /* git's ignored paths (dirs end in /), or NULL */
	long nignored;
	struct sbuf ignored_names;
};

/* The paths git ignores under root when root is in a git work tree
 * (relative to root; a directory as "dir/"), as an object used as a set;
 * NULL when it is not one or git is missing. */
static cJSON *git_ignored(const char *root)
{
	const char *argv[] = { "git", "ls-files", "--others", "--ignored", "--exclude-standard",
			       "--directory", NULL };
	char *out = NULL;
	int st = 0;
	if (!review_have("git") || review_exec(argv, root, 60000, 64u << 20, &out, NULL, &st, NULL) < 0 ||
	    st) {
		free(out);
		return NULL;
	}
	cJSON *set = cJSON_CreateObject();
	/* a name git quotes (unusual characters) is not matched: reviewed */
	char *save = NULL;
	for (char *ln = strtok_r(out, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save))
		if (ln[0] != '"' && !cJSON_GetObjectItemCaseSensitive(set, ln))
			cJSON_AddTrueToObject(set, ln);
	free(out);
	return set;
}

void review_note(cJSON *notes, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	char *clean = util_sanitize(s, strlen(s), false);
	cJSON_AddItemToArray(notes, cJSON_CreateString(clean));
	free(clean);
	free(s);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk_dir(struct walk *w, const char *rel, int depth)
{
	char *abs = rel[0] ? xasprintf("%s/%s", w->root, rel) : xstrdup(w->root);
	DIR *d = opendir(abs);
	if (!d) {
		review_note(w->notes, "%s: cannot read the directory (%s): skipped", rel[0] ? rel : ".",
			    strerror(errno));
		free(abs);
		return;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git"))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n && !w->status; i++) {
		char *r = rel[0] ? xasprintf("%s/%s", rel, names[i]) : xstrdup(names[i]);
		char *p = xasprintf("%s/%s", w->root, r);
		struct stat st;
		bool odd = !utf8_valid((const unsigned char *)names[i], strlen(names[i]));
		for (const char *c = names[i]; *c && !odd; c++)
			odd = (unsigned char)*c < 0x20 || *c == 0x7f;
		char *rdir = xasprintf("%s/", r);
		bool ignored = w->ignored && (cJSON_GetObjectItemCaseSensitive(w->ignored, r) ||
					      cJSON_GetObjectItemCaseSensitive(w->ignored, rdir));
		free(rdir);
		if (ignored) {
			if (w->nignored++ < 5)
				sbuf_addf(&w->ignored_names, "%s%s", w->ignored_names.len ? ", " : "", r);
		} else if (odd) {
			review_note(w->notes, "%s: a name that is not valid UTF-8 or has control characters: skipped", r);
		} else if (lstat(p, &st) < 0) {
			review_note(w->notes, "%s: cannot stat (%s): skipped", r, strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			char *target = realpath(p, NULL);
			size_t rl = strlen(w->root);
			bool inside = target && !strncmp(target, w->root, rl) &&
				      (target[rl] == '/' || !target[rl]);
			if (inside)
				review_note(w->notes, "%s: a symbolic link inside the tree: not followed (its target is reviewed at its own path)", r);
			else
				review_note(w->notes, "%s: a symbolic link leaving the tree: not followed", r);
			free(target);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth >= 64)
				review_note(w->notes, "%s: deeper than 64 directories: skipped", r);
			else
				walk_dir(w, r, depth + 1);
		} else if (!S_ISREG(st.st_mode)) {
			review_note(w->notes, "%s: not a regular file: skipped", r);
		} else if (st.st_size > w->l->max_file_bytes) {
			review_note(w->notes, "%s: %lld bytes, over the %ld-byte limit per file: skipped (huge file)",
				    r, (long long)st.st_size, w->l->max_file_bytes);
		} else {
			char *buf = NULL;
			size_t len = 0;
			char *e2 = NULL;
			if (util_read_file(p, (size_t)w->l->max_file_bytes, &buf, &len, &e2) < 0) {
				review_note(w->notes, "%s: cannot read (%s): skipped", r, e2 ? e2 : "?");
				free(e2);
			} else if (memchr(buf, 0, len)) {
				review_note(w->notes, "%s: a binary file (NUL bytes): skipped", r);
			} else {
				bool utf8 = utf8_valid((const unsigned char *)buf, len);
				if (!utf8)
					review_note(w->notes, "%s: not valid UTF-8: reviewed as bytes", r);
				w->nfiles++;
				w->bytes += (long)len;
				cJSON *f = cJSON_CreateObject();
				cJSON_AddStringToObject(f, "path", r);
				cJSON_AddNumberToObject(f, "bytes", (double)len);
				cJSON_AddStringToObject(f, "lang", lang_of(names[i], buf, len));
				cJSON_AddBoolToObject(f, "utf8", utf8);
				cJSON_AddItemToArray(w->files, f);
				if (w->nfiles > w->l->max_files) {
					w->status = 413;
					w->err = xasprintf("codebase too large: more than %ld files "
							   "(the limit: params.max_files or MADF_REVIEW_MAX_FILES)",
							   w->l->max_files);
				} else if (w->bytes > w->l->max_bytes) {
					w->status = 413;
					w->err = xasprintf("codebase too large: more than %ld bytes "
							   "(the limit: params.max_bytes or MADF_REVIEW_MAX_BYTES)",
							   w->l->max_bytes);
				}
			}
			free(buf);
		}
		free(p);
		free(r);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(abs);
}

int review_scan(const char *root, const struct review_limits *l, cJSON **out,
		char **err)
{
	*out = NULL;
	struct stat st;
	char *real = realpath(root, NULL);
	if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		err_set(err, "unknown codebase: %s is not a directory", root);
		return 404;
	}
	struct walk w = { .root = real, .l = l, .files = cJSON_CreateArray(),
			  .notes = cJSON_CreateArray(), .ignored = git_ignored(real) };
	sbuf_init(&w.ignored_names);
	sbuf_addstr(&w.ignored_names, "");
	walk_dir(&w, "", 0);
	if (w.nignored)
		review_note(w.notes, "%ld path%s git ignores left out (%s%s)", w.nignored,
			    w.nignored == 1 ? "" : "s", w.ignored_names.data, w.nignored > 5 ? ", ..." : "");
	sbuf_release(&w.ignored_names);
	cJSON_Delete(w.ignored);
	if (w.status) {
		*err = w.err;
		cJSON_Delete(w.files);
		cJSON_Delete(w.notes);
		free(real);
		return w.status;
	}
	if (w.nfiles == 0)
		review_note(w.notes, "no files to review: the tree is empty (after the skipped files)");
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "root", real);
	cJSON_AddItemToObject(o, "files", w.files);
	cJSON_AddItemToObject(o, "notes", w.notes);
	cJSON_AddNumberToObject(o, "bytes", (double)w.bytes);
	free(real);
	*out = o;
	return 0;
}

/* ---- registered codebases ---- */

static char *registry_path(const char *data_dir)
{
	return xasprintf("%s/review/codebases.json", data_dir);
}

static cJSON *registry_load(const char *data_dir)
{
	char *p = registry_path(data_dir), *buf = NULL;
	size_t len;
	cJSON *j = NULL;
	if (util_read_file(p, 1 << 20, &buf, &len, NULL) == 0)
		j = cJSON_ParseWithLength(buf, len);
	free(buf);
	free(p);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = cJSON_CreateObject();
	}
	return j;
}

int review_register(const char *data_dir, const char *name, const char *path,
		    char **err)
{
	if (!util_valid_agent_name(name))
		return err_set(err, "NAME must match [a-z0-9][a-z0-9_-]{0,63}");
	char *real = realpath(path, NULL);
	struct stat st;
	if (!real || stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return err_set(err, "%s is not a directory", path);
	}
	char *dir = xasprintf("%s/review", data_dir);
	int r = util_mkdirs(dir, err);
	free(dir);
	if (r < 0) {
		free(real);
		return -1;
	}
	cJSON *j = registry_load(data_dir);
	cJSON_DeleteItemFromObjectCaseSensitive(j, name);
	cJSON_AddStringToObject(j, name, real);
	free(real);
	char *text = cJSON_Print(j);
	char *p = registry_path(data_dir);
	r = util_write_file_atomic(p, text, strlen(text), true, err);
	free(p);
	free(text);
	cJSON_Delete(j);
	return r;
}

char *review_resolve(const char *data_dir, const char *id)
{
	cJSON *j = registry_load(data_dir);
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, id);
	char *out = NULL;
	struct stat st;
	if (cJSON_IsString(p))
		out = xstrdup(p->valuestring);
	else if (strchr(id, '/') || !strcmp(id, ".") || (stat(id, &st) == 0 && S_ISDIR(st.st_mode)))
		out = xstrdup(id);
	cJSON_Delete(j);
	return out;
}

const char *review_file_lang(const char *root, const char *relpath, bool *utf8)
{
	char *p = xasprintf("%s/%s", root, relpath), *buf = NULL;
	size_t len = 0;
	const char *lang = "other";
	*utf8 = false;
	if (util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) == 0) {
		const char *slash = strrchr(relpath, '/');
		lang = lang_of(slash ? slash + 1 : relpath, buf, len);
		*utf8 = utf8_valid((const unsigned char *)buf, len);
	}
	free(buf);
	free(p);
	return lang;
}

/* The text of line (1-based) of root/file, blanks trimmed (new). */
char *review_line_text(const char *root, const char *file, long line)
{
	char *p = xasprintf("%s/%s", root, file), *buf = NULL;
	size_t len = 0;
	char *out = NULL;
	if (util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) == 0) {
		const char *s = buf, *end = buf + len;
		for (long l = 1; l < line && s < end; l++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			s = nl ? nl + 1 : end;
		}
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		out = xstrndup(s, (size_t)(e - s));
	}
	free(buf);
	free(p);
	return out ? out : xstrdup("");
}

