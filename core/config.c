#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

extern char **environ;

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* One line of len bytes (no newline) into key and value, in place in line
 * (a copy, NUL-terminated). Returns 1 with a variable, 0 for a blank or
 * comment line, -1 with *why. */
static int env_line(char *line, char **key_out, char **val_out, const char **why)
{
	char *s = trim(line);
	if (!*s || *s == '#')
		return 0;
	if (!strncmp(s, "export ", 7))
		s = trim(s + 7);
	char *eq = strchr(s, '=');
	if (!eq) {
		*why = "expected KEY=VALUE";
		return -1;
	}
	*eq = '\0';
	char *key = trim(s), *val = trim(eq + 1);
	bool ok = *key && (isalpha((unsigned char)*key) || *key == '_');
	for (char *k = key; *k; k++)
		ok = ok && (isalnum((unsigned char)*k) || *k == '_');
	if (!ok) {
		*why = "invalid variable name";
		return -1;
	}
	size_t vl = strlen(val);
	if (vl >= 2 && (val[0] == '"' || val[0] == '\'') && val[vl - 1] == val[0]) {
		val[vl - 1] = '\0';
		val++;
	} else {
		/* an unquoted value ends at " #" (a comment) */
		char *hash = strstr(val, " #");
		if (hash) {
			*hash = '\0';
			val = trim(val);
		}
	}
	*key_out = key;
	*val_out = val;
	return 1;
}

int config_parse_env(const char *text, size_t len, const char *origin, config_env_fn fn,
		     void *ctx, char **err)
{
	size_t off = 0;
	int lineno = 0;
	while (off < len) {
		lineno++;
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		if (memchr(text + off, '\0', n))
			return err_set(err, "%s:%d: a NUL byte", origin, lineno);
		char *line = xstrndup(text + off, n);
		off += n + (nl ? 1 : 0);
		char *key, *val;
		const char *why = NULL;
		int r = env_line(line, &key, &val, &why);
		if (r < 0)
			err_set(err, "%s:%d: %s", origin, lineno, why);
		else if (r > 0)
			r = fn(ctx, key, val, err);
		free(line);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int env_set(void *ctx, const char *key, const char *value, char **err)
{
	(void)ctx, (void)err;
	setenv(key, value, 0);
	return 0;
}

int config_load_env_file(const char *path, bool optional, char **err)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	}
	struct sbuf b;
	sbuf_init(&b);
	char chunk[8192];
	size_t n;
	int r = 0;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.len + n > CONFIG_FILE_MAX) {
			r = err_set(err, "%s: over %zu bytes", path, (size_t)CONFIG_FILE_MAX);
			break;
		}
		sbuf_add(&b, chunk, n);
	}
	if (r == 0 && ferror(f))
		r = err_set(err, "cannot read %s: %s", path, strerror(errno));
	fclose(f);
	if (r == 0)
		r = config_parse_env(b.data ? b.data : "", b.len, path, env_set, NULL, err);
	sbuf_release(&b);
	return r;
}

char *config_data_dir(const char *explicit_dir)
{
	if (explicit_dir && *explicit_dir)
		return xstrdup(explicit_dir);
	const char *e = getenv("MADF_DATA_DIR");
	if (e && *e)
		return xstrdup(e);
	const char *md = getenv("MESSAGE_DIR");
	if (md && *md) {
		size_t n = strlen(md);
		while (n > 1 && md[n - 1] == '/')
			n--;
		if (n > 9 && !strncmp(md + n - 9, "/messages", 9))
			return xstrndup(md, n - 9);
		if (n == 8 && !strncmp(md, "messages", 8))
			return xstrdup(".");
	}
	return xstrdup("data");
}

char *config_log_dir(const char *explicit_dir, const char *data_dir)
{
	if (explicit_dir && *explicit_dir)
		return xstrdup(explicit_dir);
	const char *e = getenv("LOG_DIR");
	if (e && *e)
		return xstrdup(e);
	if (!data_dir || !*data_dir)
		return xstrdup("logs");
	size_t n = strlen(data_dir);
	while (n > 1 && data_dir[n - 1] == '/')
		n--;
	size_t base = n;
	while (base && data_dir[base - 1] != '/')
		base--;
	size_t blen = n - base;
	bool dots = (blen == 1 && data_dir[base] == '.') ||
		    (blen == 2 && !strncmp(data_dir + base, "..", 2)) || (n == 1 && data_dir[0] == '/');
	if (dots)
		return xasprintf("%.*s%slogs", (int)n, data_dir, data_dir[n - 1] == '/' ? "" : "/");
	/* the parent keeps its trailing slash: "data" -> "logs", "a/data" -> "a/logs" */
	return xasprintf("%.*slogs", (int)base, data_dir);
}

bool config_is_secret(const char *name)
{
	static const char *const marks[] = { "KEY", "TOKEN", "SECRET", "PASSWORD",
					     "PASSWD", "CREDENTIAL", "AUTH" };
	for (size_t i = 0; i < ARRAY_SIZE(marks); i++)
		if (strstr(name, marks[i]))
			return true;
	return false;
}

char *config_redact(const char *s)
{
	char *out = xstrdup(s);
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq)
			continue;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
		const char *val = eq + 1;
		if (!config_is_secret(name) || strlen(val) < 6)
			continue;
		char *hit;
		while ((hit = strstr(out, val))) {
			struct sbuf b;
			sbuf_init(&b);
			sbuf_add(&b, out, (size_t)(hit - out));
			sbuf_addstr(&b, "[redacted]");
			sbuf_addstr(&b, hit + strlen(val));
			free(out);
			out = sbuf_detach(&b);
		}
	}
	return out;
}
