/* madf serve's bearer tokens: random, shown once, stored as SHA-256 in a
 * 0600 file, checked in constant time. */
#include "server/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "core/util.h"
#include "core/banned.h"

#define TOKENS_FILE_MAX ((size_t)4 << 20)
#define TOKEN_BYTES 32

char *serve_tokens_path(const char *data_dir)
{
	return xasprintf("%s/serve-tokens", data_dir);
}

bool serve_user_ok(const char *user)
{
	size_t n = strlen(user);
	if (n == 0 || n > SERVE_USER_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = user[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '@' || c == '-'))
			return false;
	}
	return true;
}

void serve_sha256(const void *data, size_t len, unsigned char out[32])
{
	/* GNUTLS_DIG_SHA256 cannot fail for a valid algorithm and buffer. */
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, out) < 0)
		abort();
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_line(const char *path, int lineno, char *line, struct serve_token *t,
		      char **err)
{
	char *save = NULL;
	char *user = strtok_r(line, " \t", &save);
	char *hex = strtok_r(NULL, " \t", &save);
	char *created = strtok_r(NULL, " \t", &save);
	if (!user || !hex || !serve_user_ok(user) || strlen(hex) != 64)
		return err_set(err, "%s:%d: not USER SHA256-HEX [CREATED]", path, lineno);
	for (int i = 0; i < 32; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return err_set(err, "%s:%d: the hash is not 64 lowercase hex digits",
				       path, lineno);
		t->hash[i] = (unsigned char)(hi << 4 | lo);
	}
	util_strlcpy(t->user, user, sizeof(t->user));
	util_strlcpy(t->created, created ? created : "-", sizeof(t->created));
	return 0;
}

int serve_tokens_load(const char *path, struct serve_tokens *out, char **err)
{
	memset(out, 0, sizeof(*out));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, "%s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return err_set(err, "%s is accessible by group or others (mode %04o): "
			       "run chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
	}
	close(fd);
	char *buf = NULL;
	size_t len = 0;
	if (util_read_file(path, TOKENS_FILE_MAX, &buf, &len, err) < 0)
		return -1;
	int lineno = 0, r = 0;
	char *p = buf;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		if (*p && *p != '#') {
			struct serve_token t = { 0 };
			if (parse_line(path, lineno, p, &t, err) < 0) {
				r = -1;
				break;
			}
			out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
			out->v[out->n++] = t;
		}
		p = nl ? nl + 1 : NULL;
	}
	free(buf);
	if (r < 0)
		serve_tokens_free(out);
	return r;
}

void serve_tokens_free(struct serve_tokens *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* Writes the tokens to path atomically with mode 0600. */
static int tokens_save(const char *path, const struct serve_tokens *t, char **err)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "# madf serve tokens: USER SHA256(token) CREATED (mode 0600)\n");
	for (size_t i = 0; i < t->n; i++) {
		sbuf_addf(&b, "%s ", t->v[i].user);
		for (int k = 0; k < 32; k++)
			sbuf_addf(&b, "%02x", t->v[i].hash[k]);
		sbuf_addf(&b, " %s\n", t->v[i].created);
	}
	unsigned char rnd[4];
	util_random(rnd, sizeof(rnd));
	char *tmp = xasprintf("%s.%02x%02x%02x%02x.tmp", path, rnd[0], rnd[1], rnd[2], rnd[3]);
	int r = -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err_set(err, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	size_t off = 0;
	while (off < b.len) {
		ssize_t w = write(fd, b.data + off, b.len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err_set(err, "cannot write %s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		err_set(err, "cannot write %s: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		err_set(err, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	r = 0;
out:
	free(tmp);
	sbuf_release(&b);
	return r;
}

static void base64url(const unsigned char *in, size_t n, char *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		acc = acc << 8 | in[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = tab[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[o++] = tab[(acc << (6 - bits)) & 63];
	out[o] = '\0';
}

/* Takes the lock file beside path (so two token commands do not lose
 * each other's change); returns its fd or -1. */
static int tokens_lock(const char *path, char **err)
{
	char *lock = xasprintf("%s.lock", path);
	int fd = util_lock_file(lock, true, err);
	free(lock);
	return fd;
}

int serve_token_add(const char *path, const char *user, char **token, char **err)
{
	*token = NULL;
	if (!serve_user_ok(user))
		return err_set(err, "\"%s\" is not a user name ([A-Za-z0-9._@-], 1 to 64)", user);
	int lfd = tokens_lock(path, err);
	if (lfd < 0)
		return -1;
	struct serve_tokens t;
	if (serve_tokens_load(path, &t, err) < 0) {
		close(lfd);
		return -1;
	}
	unsigned char raw[TOKEN_BYTES];
	util_random(raw, sizeof(raw));
	char enc[TOKEN_BYTES * 2];
	base64url(raw, sizeof(raw), enc);
	char *tok = xasprintf("madf_%s", enc);
	struct serve_token e = { 0 };
	util_strlcpy(e.user, user, sizeof(e.user));
	serve_sha256(tok, strlen(tok), e.hash);
	util_iso8601(util_now_ns(), e.created, sizeof(e.created));
	t.v = xrealloc(t.v, (t.n + 1) * sizeof(*t.v));
	t.v[t.n++] = e;
	int r = tokens_save(path, &t, err);
	serve_tokens_free(&t);
	close(lfd);
	memset(raw, 0, sizeof(raw));
	memset(enc, 0, sizeof(enc));
	if (r < 0) {
		free(tok);
		return -1;
	}
	*token = tok;
	return 0;
}

int serve_token_revoke(const char *path, const char *user, size_t *removed, char **err)
{
	*removed = 0;
	int lfd = tokens_lock(path, err);
	if (lfd < 0)
		return -1;
	struct serve_tokens t;
	if (serve_tokens_load(path, &t, err) < 0) {
		close(lfd);
		return -1;
	}
	size_t k = 0;
	for (size_t i = 0; i < t.n; i++) {
		if (!strcmp(t.v[i].user, user))
			(*removed)++;
		else
			t.v[k++] = t.v[i];
	}
	t.n = k;
	int r = 0;
	if (!*removed)
		r = err_set(err, "user \"%s\" has no token", user);
	else
		r = tokens_save(path, &t, err);
	serve_tokens_free(&t);
	close(lfd);
	return r;
}

const char *serve_tokens_check(const struct serve_tokens *t, const char *token, size_t len)
{
	unsigned char h[32];
	serve_sha256(token, len, h);
	const char *found = NULL;
	/* Every entry is compared, each in full: the time does not depend on
	 * where (or whether) the token matches. */
	for (size_t i = 0; i < t->n; i++) {
		unsigned char diff = 0;
		for (int k = 0; k < 32; k++)
			diff |= (unsigned char)(h[k] ^ t->v[i].hash[k]);
		volatile unsigned char d = diff;
		if (d == 0 && !found)
			found = t->v[i].user;
	}
	return found;
}
