#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/banned.h"

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed");
	char *s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

int err_set(char **err, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	free(*err);
	*err = s;
	return -1;
}

int err_prefix(char **err, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	char *s = xasprintf("%s: %s", p, *err ? *err : "unknown error");
	free(p);
	free(*err);
	*err = s;
	return -1;
}

_Noreturn void util_bug(const char *file, int line, const char *msg)
{
	fprintf(stderr, "madf: BUG at %s:%d: %s\n", file, line, msg);
	abort();
}

static _Noreturn void oom(size_t n)
{
	fprintf(stderr, "madf: out of memory (%zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = xmalloc(len + 1);
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

void sbuf_init(struct sbuf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void sbuf_release(struct sbuf *b)
{
	free(b->data);
	sbuf_init(b);
}

static void sbuf_grow(struct sbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
	b->data[b->len] = '\0'; /* terminated even before the first add */
}

void sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	sbuf_grow(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void sbuf_addstr(struct sbuf *b, const char *s)
{
	sbuf_add(b, s, strlen(s));
}

void sbuf_addch(struct sbuf *b, char c)
{
	sbuf_add(b, &c, 1);
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap, cp;
	va_start(ap, fmt);
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n > 0) {
		sbuf_grow(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		b->len += (size_t)n;
	}
	va_end(ap);
}

char *sbuf_detach(struct sbuf *b)
{
	char *s = b->data ? b->data : xstrdup("");
	sbuf_init(b);
	return s;
}

size_t util_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);
	if (size) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

int64_t util_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t util_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double util_now_s(void)
{
	return (double)util_now_ns() / 1e9;
}

void util_iso8601(int64_t t_ns, char *buf, size_t size)
{
	time_t s = (time_t)(t_ns / 1000000000);
	long us = (long)((t_ns % 1000000000) / 1000);
	if (us < 0) {
		us += 1000000;
		s -= 1;
	}
	struct tm tm;
	gmtime_r(&s, &tm);
	char tmp[40];
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06ldZ", tmp, us);
}

void util_date(int64_t t_ns, char *buf, size_t size)
{
	time_t s = (time_t)(t_ns / 1000000000);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, size, "%Y-%m-%d", &tm);
}

int util_read_file_at(int dfd, const char *name, const char *path, size_t max, char **out,
		      size_t *len, struct stat *st_out, char **err)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return err_set(err, "cannot stat %s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, "%s is not a regular file", path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return err_set(err, "%s is %lld bytes, over the %zu-byte limit",
			       path, (long long)st.st_size, max);
	}
	/* Room for one byte more than the file has: a read that comes back
	 * short of what it asked is the end of a regular file, so a file that
	 * did not grow is read with one read(). */
	size_t cap = (size_t)st.st_size + 2, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max + 1) {
				free(buf);
				close(fd);
				return err_set(err, "%s grew over the %zu-byte limit",
					       path, max);
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		size_t want = cap - n - 1;
		ssize_t r = read(fd, buf + n, want);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			return err_set(err, "cannot read %s: %s", path, strerror(e));
		}
		n += (size_t)r;
		if ((size_t)r < want)
			break;
	}
	close(fd);
	if (n > max) {
		free(buf);
		return err_set(err, "%s is over the %zu-byte limit", path, max);
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	if (st_out)
		*st_out = st;
	return 0;
}

int util_read_file(const char *path, size_t max, char **out, size_t *len,
		   char **err)
{
	return util_read_file_at(AT_FDCWD, path, path, max, out, len, NULL, err);
}

int util_lock_file(const char *path, bool exclusive, char **err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
		if (errno != EINTR) {
			int e = errno;
			close(fd);
			return err_set(err, "cannot lock %s: %s", path, strerror(e));
		}
	}
	return fd;
}

int util_fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = fsync(fd);
	close(fd);
	return r;
}

int util_write_file_atomic(const char *path, const void *data, size_t len,
			   bool durable, char **err)
{
	char rnd[8];
	util_random(rnd, sizeof(rnd));
	char *tmp = xasprintf("%s.%02x%02x%02x%02x.tmp", path, rnd[0] & 0xff,
			      rnd[1] & 0xff, rnd[2] & 0xff, rnd[3] & 0xff);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err_set(err, "cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	const char *p = data;
	size_t left = len;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err_set(err, "cannot write %s: %s", tmp, strerror(errno));
			goto fail;
		}
		p += w;
		left -= (size_t)w;
	}
	if (durable && fdatasync(fd) < 0) {
		err_set(err, "cannot sync %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err_set(err, "cannot close %s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		err_set(err, "cannot rename %s to %s: %s", tmp, path,
			strerror(errno));
		goto fail;
	}
	free(tmp);
	if (durable) {
		char *dir = xstrdup(path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		util_fsync_dir(slash ? dir : ".");
		free(dir);
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return -1;
}

int util_mkdirs(const char *path, char **err)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			err_set(err, "cannot create directory %s: %s", p,
				strerror(errno));
			free(p);
			return -1;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		err_set(err, "cannot create directory %s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	return 0;
}

bool util_valid_agent_name(const char *s)
{
	if (!s)
		return false;
	size_t n = 0;
	for (const char *p = s; *p; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (n > 0)
			ok = ok || c == '_' || c == '-';
		if (!ok || n >= 64)
			return false;
	}
	return n > 0;
}

/* Length of the UTF-8 sequence at s (at most left bytes), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t left)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n > left)
		return 0;
	unsigned cp = c & (0xff >> (n + 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls (U+0080..U+009F) are escape-capable: reject too. */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	return n;
}

char *util_sanitize(const char *s, size_t len, bool keep_newlines)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_grow(&b, len);
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < len) {
		unsigned c = p[i];
		if (c == '\n' && keep_newlines) {
			sbuf_addch(&b, '\n');
			i++;
		} else if (c == '\t') {
			sbuf_addch(&b, keep_newlines ? '\t' : ' ');
			i++;
		} else if (c == 0x1b) {
			sbuf_addstr(&b, "^[");
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addch(&b, '^');
			sbuf_addch(&b, (char)(c == 0x7f ? '?' : c + 0x40));
			i++;
		} else {
			size_t n = utf8_seq(p + i, len - i);
			if (n == 0) {
				sbuf_addstr(&b, "\xef\xbf\xbd");
				i++;
			} else {
				sbuf_add(&b, p + i, n);
				i += n;
			}
		}
	}
	return sbuf_detach(&b);
}

void util_random(void *buf, size_t n)
{
	unsigned char *p = buf;
	while (n) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			BUG("getrandom failed");
		}
		p += r;
		n -= (size_t)r;
	}
}

int util_rm_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *p = xasprintf("%s/%s", path, de->d_name);
			util_rm_tree(p);
			free(p);
		}
		if (d)
			closedir(d);
		return rmdir(path);
	}
	return unlink(path);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int util_pct_decode(const char *s, size_t n, char **out, char **err)
{
	*out = NULL;
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			sbuf_addch(&b, s[i]);
			continue;
		}
		int hi = i + 1 < n ? hex_digit(s[i + 1]) : -1;
		int lo = i + 2 < n ? hex_digit(s[i + 2]) : -1;
		if (hi < 0 || lo < 0) {
			sbuf_release(&b);
			return err_set(err, "a '%%' not followed by two hexadecimal digits (write "
					    "a '%%' itself as %%25)");
		}
		if (hi == 0 && lo == 0) {
			sbuf_release(&b);
			return err_set(err, "%%00 (a NUL byte) is not allowed");
		}
		sbuf_addch(&b, (char)(hi * 16 + lo));
		i += 2;
	}
	*out = sbuf_detach(&b);
	return 0;
}
