/* Helpers shared by the commands: errors, the bus, option scanning. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "cli/cli.h"
#include "core/banned.h"

int cli_fail(int code, const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	char *red = config_redact(msg);
	char *safe = util_sanitize(red, strlen(red), false);
	fprintf(stderr, "madf: %s%s%s\n", cmd ? cmd : "", cmd ? ": " : "", safe);
	free(safe);
	free(red);
	free(msg);
	return code;
}

int cli_bus(struct cli *cli, struct bus **out)
{
	if (!cli->bus) {
		char *err = NULL;
		if (bus_open(&cli->bcfg, &cli->bus, &err) < 0) {
			cli_fail(EXIT_FAIL, NULL, "%s", err);
			free(err);
			return -1;
		}
	}
	*out = cli->bus;
	return 0;
}

const struct cli_opt *cli_opt_find(const struct cli_opt *t, const char *s, size_t n)
{
	for (; t && (t->name || t->group); t++) {
		if (t->group) {
			const struct cli_opt *g = cli_opt_find(t->group, s, n);
			if (g)
				return g;
		} else if (strlen(t->name) == n && !strncmp(t->name, s, n)) {
			return t;
		}
	}
	return NULL;
}

int cli_next(struct cli_opts *o, const char **name, const char **val)
{
	if (o->i >= o->argc)
		return 0;
	const char *a = o->argv[o->i++];
	*name = NULL;
	*val = NULL;
	if (!strcmp(a, "--")) {
		if (o->i >= o->argc)
			return 0;
		*val = o->argv[o->i++];
		return 1;
	}
	if (a[0] != '-' || !a[1]) {
		*val = a;
		return 1;
	}
	const char *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);
	const struct cli_opt *opt = cli_opt_find(o->entry ? o->entry->opts : NULL, a, n);
	if (!opt) {
		cli_fail(EXIT_USAGE, o->cmd, "unknown option %s (see madf %s --help)", a, o->cmd);
		return -1;
	}
	*name = opt->name;
	if (!opt->arg) {
		if (eq) {
			cli_fail(EXIT_USAGE, o->cmd, "option %s takes no value", opt->name);
			return -1;
		}
		return 1;
	}
	if (eq) {
		*val = eq + 1;
	} else if (o->i < o->argc) {
		*val = o->argv[o->i++];
	} else {
		cli_fail(EXIT_USAGE, o->cmd, "option %s needs a value", opt->name);
		return -1;
	}
	return 1;
}

/* Required options first (as "--to AGENT"), then the rest in brackets. */
static void usage_opts(struct sbuf *b, const struct cli_opt *t, bool required)
{
	for (; t && (t->name || t->group); t++) {
		if (t->group) {
			usage_opts(b, t->group, required);
			continue;
		}
		if (t->required != required)
			continue;
		sbuf_addf(b, " %s%s%s%s%s", required ? "" : "[", t->name, t->arg ? " " : "",
			  t->arg ? t->arg : "", required ? "" : "]");
	}
}

char *cli_usage(const struct cli_cmd *e, const char *path)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "madf %s", path);
	if (e->args)
		sbuf_addf(&b, " %s", e->args);
	usage_opts(&b, e->opts, true);
	usage_opts(&b, e->opts, false);
	return sbuf_detach(&b);
}

/* The usage lines of e (when it runs by itself) and of every subcommand
 * below it. */
static void usage_lines(FILE *f, const struct cli_cmd *e, const char *path, int *n)
{
	if (e->run) {
		char *u = cli_usage(e, path);
		fprintf(f, "%s%s\n", (*n)++ ? "       " : "usage: ", u);
		free(u);
	}
	for (const struct cli_cmd *const *s = e->subs; s && *s; s++) {
		char *p = xasprintf("%s %s", path, (*s)->name);
		usage_lines(f, *s, p, n);
		free(p);
	}
}

/* text from column col, wrapped at 79 columns with indent spaces on each
 * further line. */
static void print_wrapped(FILE *f, const char *text, size_t col, size_t indent)
{
	const size_t width = 79;
	const char *p = text;
	while (*p) {
		size_t room = width > col ? width - col : 20, n = strlen(p);
		if (room < 20)
			room = 20;
		if (n > room) {
			size_t cut = room;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			n = cut ? cut : room;
		}
		fprintf(f, "%.*s\n", (int)n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "%*s", (int)indent, "");
		col = indent;
	}
}

void cli_opts_print(FILE *f, const struct cli_opt *t)
{
	for (; t && (t->name || t->group); t++) {
		if (t->group) {
			cli_opts_print(f, t->group);
			continue;
		}
		char head[64];
		snprintf(head, sizeof(head), "%s%s%s", t->name, t->arg ? " " : "",
			 t->arg ? t->arg : "");
		const size_t col = 24;
		if (strlen(head) + 4 > col)
			fprintf(f, "  %s\n%*s", head, (int)col, "");
		else
			fprintf(f, "  %-*s", (int)(col - 2), head);
		print_wrapped(f, t->help, col, col);
	}
}

void cli_help_print(FILE *f, const struct cli_cmd *e, const char *path)
{
	int n = 0;
	usage_lines(f, e, path, &n);
	fputc('\n', f);
	print_wrapped(f, e->summary, 0, 0);
	if (e->opts && (e->opts->name || e->opts->group)) {
		fprintf(f, "\noptions:\n");
		cli_opts_print(f, e->opts);
	}
	if (e->subs && *e->subs) {
		fprintf(f, "\nsubcommands (madf %s SUBCOMMAND --help for one):\n", path);
		for (const struct cli_cmd *const *s = e->subs; *s; s++) {
			fprintf(f, "  %-22s", (*s)->name);
			print_wrapped(f, (*s)->summary, 24, 24);
		}
	}
}

int cli_usage_fail(const struct cli_cmd *e, const char *cmd, const char *path)
{
	char *u = cli_usage(e, path);
	cli_fail(EXIT_USAGE, cmd, "usage: %s", u);
	free(u);
	return EXIT_USAGE;
}

int cli_long(const char *cmd, const char *name, const char *val, long min, long max,
	     long *out)
{
	char *end;
	errno = 0;
	long v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < min || v > max) {
		cli_fail(EXIT_USAGE, cmd, "invalid %s \"%s\": a whole number from %ld to %ld",
			 name, val, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_double(const char *cmd, const char *name, const char *val, double min,
	       double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= min && v <= max)) {
		cli_fail(EXIT_USAGE, cmd, "invalid %s \"%s\": a number from %g to %g", name, val,
			 min, max);
		return -1;
	}
	*out = v;
	return 0;
}
