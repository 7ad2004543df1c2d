/* The dead-letter index (see bus_dlx.h). A line is
 *   DLX1 TAB ino TAB size TAB attempts TAB name TAB message_id TAB reason
 *   TAB original_inbox TAB from TAB to TAB type TAB error LF
 * with every text field sanitised (no control characters, so no TAB or LF)
 * and an empty field meaning unknown. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bus_dlx.h"
#include "core/util.h"
#include "core/banned.h"

#define DLX_FIELDS 12
#define DLX_ERROR_MAX 2000 /* bytes of the error text kept in a line */

/* A line, parsed: its strings as offsets into the buffer (+1; 0 for
 * none), so that 100,000 of them take 48 bytes each. */
struct dlx_packed {
	uint64_t ino;
	uint32_t size;
	int32_t attempts;
	uint32_t off[8]; /* name, message_id, reason, original_inbox, from, to, type, error */
};

struct dlx {
	char *buf;           /* the file, split in place */
	size_t len;          /* bytes loaded: a rewrite carries what follows */
	struct dlx_packed *v;
	size_t n, lines;
	struct dlx_rec out;  /* what dlx_get lends */
	uint32_t *slot;      /* open addressing: index + 1, 0 empty */
	size_t nslot;
};

static char *index_path(const char *dir)
{
	return xasprintf("%s/.index", dir);
}

/* Takes the index lock (shared or exclusive); -1 when it cannot. */
static int lock_index(const char *dir, int how)
{
	char *p = xasprintf("%s/.index.lock", dir);
	int fd = util_lock_file(p, how == LOCK_EX, NULL);
	free(p);
	return fd;
}

static void add_field(struct sbuf *b, const char *s, size_t max)
{
	sbuf_addch(b, '\t');
	if (!s)
		return;
	size_t len = strlen(s);
	char *clean = util_sanitize(s, len > max ? max : len, false);
	sbuf_addstr(b, clean);
	free(clean);
}

static void format_line(struct sbuf *b, const struct dlx_rec *r)
{
	sbuf_addf(b, "DLX1\t%llu\t%zu\t%d", (unsigned long long)r->ino, r->size, r->attempts);
	const char *f[] = { r->name, r->message_id, r->reason, r->original_inbox,
			    r->from, r->to, r->type };
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		add_field(b, f[i], 256);
	add_field(b, r->error, DLX_ERROR_MAX);
	sbuf_addch(b, '\n');
}

static bool write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t w = write(fd, s, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		s += w;
		len -= (size_t)w;
	}
	return true;
}

void dlx_append(const char *dir, const struct dlx_rec *r, size_t n)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < n; i++)
		format_line(&b, &r[i]);
	int lfd = lock_index(dir, LOCK_SH);
	if (lfd >= 0) {
		char *p = index_path(dir);
		int fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		free(p);
		if (fd >= 0) {
			/* One write: concurrent appenders do not interleave. */
			(void)write_all(fd, b.data, b.len);
			close(fd);
		}
		close(lfd);
	}
	sbuf_release(&b);
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Parses one line (NUL-terminated, without LF) in place into r. */
static bool parse_line(char *line, struct dlx_rec *r)
{
	char *f[DLX_FIELDS];
	size_t k = 0;
	f[k++] = line;
	for (char *p = line; *p && k < DLX_FIELDS; p++) {
		if (*p == '\t') {
			*p = '\0';
			f[k++] = p + 1;
		}
	}
	if (k != DLX_FIELDS || strcmp(f[0], "DLX1") || strchr(f[DLX_FIELDS - 1], '\t'))
		return false;
	char *end;
	errno = 0;
	unsigned long long ino = strtoull(f[1], &end, 10);
	if (errno || *end || end == f[1])
		return false;
	unsigned long long size = strtoull(f[2], &end, 10);
	if (errno || *end || end == f[2])
		return false;
	long att = strtol(f[3], &end, 10);
	if (errno || *end || end == f[3] || att < 0 || att > 1000000)
		return false;
	if (!*f[4])
		return false;
	memset(r, 0, sizeof(*r));
	r->ino = (ino_t)ino;
	r->size = (size_t)size;
	r->attempts = (int)att;
	const char **dst[] = { &r->name, &r->message_id, &r->reason, &r->original_inbox,
			       &r->from, &r->to, &r->type, &r->error };
	for (size_t i = 0; i < ARRAY_SIZE(dst); i++)
		*dst[i] = *f[4 + i] ? f[4 + i] : NULL;
	return true;
}

static const char *pstr(const struct dlx *x, uint32_t off)
{
	return off ? x->buf + off - 1 : NULL;
}

static void pack(struct dlx *x, const struct dlx_rec *r, struct dlx_packed *p)
{
	p->ino = (uint64_t)r->ino;
	p->size = r->size > UINT32_MAX ? UINT32_MAX : (uint32_t)r->size;
	p->attempts = r->attempts;
	const char *f[8] = { r->name, r->message_id, r->reason, r->original_inbox,
			     r->from, r->to, r->type, r->error };
	for (int i = 0; i < 8; i++)
		p->off[i] = f[i] ? (uint32_t)(f[i] - x->buf) + 1 : 0;
}

static void put(struct dlx *x, uint32_t idx)
{
	size_t mask = x->nslot - 1;
	const char *name = pstr(x, x->v[idx].off[0]);
	size_t i = hash_name(name) & mask;
	while (x->slot[i]) {
		/* A later line for the same name replaces the earlier one. */
		if (!strcmp(pstr(x, x->v[x->slot[i] - 1].off[0]), name)) {
			x->slot[i] = idx + 1;
			return;
		}
		i = (i + 1) & mask;
	}
	x->slot[i] = idx + 1;
}

struct dlx *dlx_load(const char *dir)
{
	struct dlx *x = xcalloc(1, sizeof(*x));
	char *p = index_path(dir);
	size_t len = 0;
	if (util_read_file(p, (size_t)UINT32_MAX - 1, &x->buf, &len, NULL) < 0) {
		x->buf = NULL;
		len = 0;
	}
	free(p);
	/* Only whole lines: a line being appended is read next time. */
	while (len && x->buf[len - 1] != '\n')
		len--;
	x->len = len;
	size_t cap = 0;
	for (size_t i = 0; i < len; i++)
		cap += x->buf[i] == '\n';
	x->v = cap ? xmalloc(cap * sizeof(*x->v)) : NULL;
	char *s = x->buf;
	for (size_t i = 0; i < len; i++) {
		if (x->buf[i] != '\n')
			continue;
		x->buf[i] = '\0';
		x->lines++;
		struct dlx_rec r;
		if (x->n < UINT32_MAX - 1 && parse_line(s, &r))
			pack(x, &r, &x->v[x->n++]);
		s = x->buf + i + 1;
	}
	x->nslot = 16;
	while (x->nslot < x->n * 2)
		x->nslot *= 2;
	x->slot = xcalloc(x->nslot, sizeof(*x->slot));
	for (size_t i = 0; i < x->n; i++)
		put(x, (uint32_t)i);
	return x;
}

void dlx_free(struct dlx **px)
{
	struct dlx *x = *px;
	if (!x)
		return;
	free(x->buf);
	free(x->v);
	free(x->slot);
	free(x);
	*px = NULL;
}

const struct dlx_rec *dlx_get(struct dlx *x, const char *name, ino_t ino)
{
	if (!x || !x->n)
		return NULL;
	size_t mask = x->nslot - 1;
	for (size_t i = hash_name(name) & mask; x->slot[i]; i = (i + 1) & mask) {
		const struct dlx_packed *p = &x->v[x->slot[i] - 1];
		if (strcmp(pstr(x, p->off[0]), name))
			continue;
		if (p->ino != (uint64_t)ino)
			return NULL;
		struct dlx_rec *r = &x->out;
		r->ino = (ino_t)p->ino;
		r->size = p->size;
		r->attempts = p->attempts;
		const char **dst[8] = { &r->name, &r->message_id, &r->reason, &r->original_inbox,
					&r->from, &r->to, &r->type, &r->error };
		for (int k = 0; k < 8; k++)
			*dst[k] = pstr(x, p->off[k]);
		return r;
	}
	return NULL;
}

size_t dlx_lines(const struct dlx *x)
{
	return x ? x->lines : 0;
}

void dlx_rewrite(const char *dir, const struct dlx *x, const struct dlx_rec *live,
		 size_t n)
{
	int lfd = lock_index(dir, LOCK_EX);
	if (lfd < 0)
		return;
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < n; i++)
		format_line(&b, &live[i]);
	/* Lines appended after x was loaded: kept as they are. */
	char *p = index_path(dir);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;
		size_t from = x ? x->len : 0;
		if (fstat(fd, &st) == 0 && (size_t)st.st_size > from &&
		    lseek(fd, (off_t)from, SEEK_SET) == (off_t)from) {
			char chunk[65536];
			ssize_t r;
			while ((r = read(fd, chunk, sizeof(chunk))) > 0)
				sbuf_add(&b, chunk, (size_t)r);
		}
		close(fd);
	}
	(void)util_write_file_atomic(p, b.data ? b.data : "", b.len, false, NULL);
	free(p);
	sbuf_release(&b);
	close(lfd);
}
