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

int config_load_env_file(const char *path, bool optional, char **err)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		return err_set(err, "cannot open %s: %s", path, strerror(errno));
	}
	char line[8192];
	int lineno = 0, r = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			r = err_set(err, "%s:%d: line too long", path, lineno);
			break;
		}
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "export ", 7))
			s = trim(s + 7);
		char *eq = strchr(s, '=');
		if (!eq) {
			r = err_set(err, "%s:%d: expected KEY=VALUE", path, lineno);
			break;
		}
		*eq = '\0';
		char *key = trim(s), *val = trim(eq + 1);
		bool ok = *key && (isalpha((unsigned char)*key) || *key == '_');
		for (char *k = key; *k; k++)
			ok = ok && (isalnum((unsigned char)*k) || *k == '_');
		if (!ok) {
			r = err_set(err, "%s:%d: invalid variable name", path, lineno);
			break;
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
		setenv(key, val, 0);
	}
	fclose(f);
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
