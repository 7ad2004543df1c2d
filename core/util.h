/* Small shared helpers: errors through a char ** out-parameter, checked
 * allocation, time, paths. */
#ifndef MADF_UTIL_H
#define MADF_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BUG(msg) util_bug(__FILE__, __LINE__, msg)

/* Sets *err (when err is not NULL) to a newly allocated message and
 * returns -1, so callers can write `return err_set(err, "...")`. */
int err_set(char **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes an existing *err with "prefix: ". Returns -1. */
int err_prefix(char **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

_Noreturn void util_bug(const char *file, int line, const char *msg);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Growable byte buffer; data is always NUL-terminated. */
struct sbuf {
	char *data;
	size_t len, cap;
};
void sbuf_init(struct sbuf *b);
void sbuf_release(struct sbuf *b);
void sbuf_add(struct sbuf *b, const void *p, size_t n);
void sbuf_addstr(struct sbuf *b, const char *s);
void sbuf_addf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_addch(struct sbuf *b, char c);
char *sbuf_detach(struct sbuf *b);

/* Copies at most size-1 bytes and terminates; returns strlen(src). */
size_t util_strlcpy(char *dst, const char *src, size_t size);

/* Time. */
int64_t util_now_ns(void);       /* CLOCK_REALTIME in ns */
int64_t util_mono_ns(void);      /* CLOCK_MONOTONIC in ns */
double util_now_s(void);
/* Formats t (ns since epoch, UTC) as 2026-11-22T04:39:11.123456Z. */
void util_iso8601(int64_t t_ns, char *buf, size_t size);
/* Formats a UTC date as YYYY-MM-DD. */
void util_date(int64_t t_ns, char *buf, size_t size);

/* Files. */
/* Reads a whole regular file (at most max bytes) without following a
 * final symlink. Returns 0 or -1 with *err. */
int util_read_file(const char *path, size_t max, char **out, size_t *len,
		   char **err);
/* The same for name relative to the directory dfd (or AT_FDCWD); path
 * names the file in errors; *st_out (when given) gets the file's stat. */
struct stat;
int util_read_file_at(int dfd, const char *name, const char *path, size_t max, char **out,
		      size_t *len, struct stat *st_out, char **err);
/* Writes data to path atomically (temp file, fsync when durable, rename). */
int util_write_file_atomic(const char *path, const void *data, size_t len,
			   bool durable, char **err);
/* mkdir -p, mode 0755. */
int util_mkdirs(const char *path, char **err);
/* Removes path and everything under it (no symlinks followed). */
int util_rm_tree(const char *path);
/* Opens (creating) the lock file path and takes an flock on it, exclusive
 * or shared, waiting for it. Returns the fd (closing it unlocks), or -1
 * with *err. */
int util_lock_file(const char *path, bool exclusive, char **err);
/* fsync a directory by path. */
int util_fsync_dir(const char *path);

/* Agent names: [a-z0-9][a-z0-9_-]{0,63}. */
bool util_valid_agent_name(const char *s);

/* Text for a terminal or a one-line error: control characters and escape
 * sequences replaced, invalid UTF-8 replaced with U+FFFD. Caller frees. */
char *util_sanitize(const char *s, size_t len, bool keep_newlines);

/* Decodes the RFC 3986 percent-escapes (%40 -> '@') of the n bytes at s
 * into *out (the caller's, NUL-terminated). -1 with *err for a '%' not
 * followed by two hex digits, or %00; *err never quotes s (it may be a
 * password): the caller names the part. */
int util_pct_decode(const char *s, size_t n, char **out, char **err);

/* Random bytes from getrandom(2). */
void util_random(void *buf, size_t n);

#endif
