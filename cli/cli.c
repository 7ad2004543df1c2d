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

static bool in_list(const char *const *list, const char *s, size_t n)
{
	for (; list && *list; list++)
		if (strlen(*list) == n && !strncmp(*list, s, n))
			return true;
	return false;
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
	if (in_list(o->flags, a, n)) {
		if (eq) {
			cli_fail(EXIT_USAGE, o->cmd, "option %.*s takes no value", (int)n, a);
			return -1;
		}
		*name = a;
		return 1;
	}
	if (in_list(o->with_value, a, n)) {
		static char buf[64];
		snprintf(buf, sizeof(buf), "%.*s", (int)n, a);
		*name = buf;
		if (eq) {
			*val = eq + 1;
		} else if (o->i < o->argc) {
			*val = o->argv[o->i++];
		} else {
			cli_fail(EXIT_USAGE, o->cmd, "option %s needs a value", buf);
			return -1;
		}
		return 1;
	}
	cli_fail(EXIT_USAGE, o->cmd, "unknown option %s (see madf %s --help)", a, o->cmd);
	return -1;
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
