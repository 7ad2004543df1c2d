/* review.flow's models of the C library (agents/review_flow.c is the
 * interpreter): the sources of outside input, the string functions that
 * carry it, allocations, the sinks (CWE-78 commands, CWE-134 formats) and
 * the findings they make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/review_flow_priv.h"
#include "agents/review_priv.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- findings ---- */

void flow_report(struct ctx *c, int line, const char *cwe, const char *rule, int src,
		   const char *sink, int argn)
{
	if (c->s.dead)
		return;
	const struct flow_file *f = &c->files[c->fi];
	char *key = xasprintf("%d:%d:%s", c->fi, line, cwe);
	bool dup = cJSON_GetObjectItemCaseSensitive(c->seen, key) != NULL;
	if (!dup)
		cJSON_AddTrueToObject(c->seen, key);
	free(key);
	if (dup)
		return;
	char where[512] = "outside input";
	if (src > 0 && (size_t)src <= c->nsrc) {
		const struct src *s = &c->srcs[src - 1];
		if (s->fi == c->fi)
			snprintf(where, sizeof(where), "data from %s at line %d", s->what, s->line);
		else
			snprintf(where, sizeof(where), "data from %s at %s:%d", s->what,
				 c->files[s->fi].path, s->line);
	}
	char *msg = !strcmp(cwe, "CWE-134")
		? xasprintf("%s reaches the format string of %s() (argument %d) at line %d unchecked: "
			    "its %% directives are read from the input", where, sink, argn, line)
		: xasprintf("%s reaches %s() (argument %d) at line %d unchecked: the input chooses "
			    "the command that runs", where, sink, argn, line);
	cJSON_AddItemToArray(c->items, review_raw_new("madf-flow", rule, 5, f->path, line, msg, cwe));
	free(msg);
}

int flow_src_add(struct ctx *c, const char *what, int line)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->srcs[i].fi == c->fi && c->srcs[i].line == line && !strcmp(c->srcs[i].what, what))
			return (int)i + 1;
	c->srcs = xrealloc(c->srcs, (c->nsrc + 1) * sizeof(*c->srcs));
	c->srcs[c->nsrc++] = (struct src){ c->fi, line, xstrdup(what) };
	return (int)c->nsrc;
}

int flow_src_tok(struct ctx *c, const struct flow_tok *name, int line)
{
	char what[64];
	snprintf(what, sizeof(what), "%.*s()", name->len > 40 ? 40 : name->len, name->s);
	return flow_src_add(c, what, line);
}

/* ---- calls ---- */

static const char *const src_into0[] = { "fgets", "gets", "fread", "fgetws", NULL };
static const char *const src_into1[] = { "recv", "recvfrom", "read", "pread", "recvmsg", NULL };
static const char *const src_ret[] = { "getenv", "secure_getenv", "fgetc", "getc", "getchar",
				       "fgetwc", "getwc", "getwchar", NULL };
static const char *const copy_strong[] = { "strcpy", "strncpy", "wcscpy", "wcsncpy", "strlcpy",
					   "stpcpy", "stpncpy", NULL };
static const char *const copy_weak[] = { "strcat", "strncat", "wcscat", "wcsncat", "strlcat",
					 "memcpy", "memmove", "wmemcpy", "wmemmove", "bcopy", NULL };
static const char *const ptr_into[] = { "strchr", "strrchr", "strstr", "strpbrk", "strtok",
					"strtok_r", "memchr", "wcschr", "wcsrchr", "wcsstr", NULL };
static const char *const to_num[] = { "atoi", "atol", "atoll", "strtol", "strtoul", "strtoll",
				      "strtoull", "strtod", "strtof", NULL };
static const char *const alloc_fns[] = { "malloc", "calloc", "realloc", "alloca", "strdup",
					 "strndup", "wcsdup", NULL };

/* CWE-78 sinks: name, the first argument that is part of the command (all
 * following ones too, for the exec family). */
static const struct {
	const char *name;
	int arg;
	bool rest;
} cmd_sinks[] = {
	{ "system", 0, false }, { "popen", 0, false }, { "execl", 0, true }, { "execlp", 0, true },
	{ "execle", 0, true }, { "execv", 0, true }, { "execvp", 0, true }, { "execve", 0, true },
	{ "execvpe", 0, true },
};

/* CWE-134 sinks: the format argument. */
static const struct {
	const char *name;
	int arg;
} fmt_sinks[] = {
	{ "printf", 0 }, { "vprintf", 0 }, { "wprintf", 0 }, { "vwprintf", 0 },
	{ "fprintf", 1 }, { "vfprintf", 1 }, { "fwprintf", 1 }, { "vfwprintf", 1 },
	{ "dprintf", 1 }, { "sprintf", 1 }, { "vsprintf", 1 }, { "syslog", 1 }, { "vsyslog", 1 },
	{ "snprintf", 2 }, { "vsnprintf", 2 }, { "swprintf", 2 }, { "vswprintf", 2 },
	{ "warn", 0 }, { "warnx", 0 }, { "err", 1 }, { "errx", 1 },
};

/* The taint of v's elements when v points to cells holding pointers
 * (argv-like arrays). */
int flow_deep_src(struct ctx *c, const struct val *v)
{
	int s = flow_content_src(c, v);
	for (int i = 0; i < v->np && !s; i++) {
		struct val w = flow_cell_val(c, v->p[i]);
		s = flow_content_src(c, &w);
	}
	return s;
}

void flow_sinks(struct ctx *c, const struct flow_tok *name, const struct ev *a, int na, int line)
{
	for (size_t k = 0; k < sizeof(cmd_sinks) / sizeof(cmd_sinks[0]); k++) {
		if (!flow_is(name, cmd_sinks[k].name))
			continue;
		for (int i = cmd_sinks[k].arg; i < na; i++) {
			int s = flow_deep_src(c, &a[i].v);
			if (s) {
				flow_report(c, line, "CWE-78", "tainted-command", s, cmd_sinks[k].name, i + 1);
				return;
			}
			if (!cmd_sinks[k].rest)
				break;
		}
	}
	for (size_t k = 0; k < sizeof(fmt_sinks) / sizeof(fmt_sinks[0]); k++) {
		int i = fmt_sinks[k].arg;
		if (!flow_is(name, fmt_sinks[k].name) || i >= na || a[i].v.lit)
			continue;
		int s = flow_content_src(c, &a[i].v);
		if (s)
			flow_report(c, line, "CWE-134", "tainted-format", s, fmt_sinks[k].name, i + 1);
	}
}

/* Taints the cells v points to (or, with none, nothing). */
void flow_taint_into(struct ctx *c, const struct val *v, int src)
{
	struct val t = flow_tainted(src);
	for (int i = 0; i < v->np; i++)
		flow_cell_set(c, v->p[i], &t, false);
}

/* Copies the content of from into the cells to points to. */
void flow_copy_into(struct ctx *c, const struct val *to, const struct val *from, bool strong)
{
	int s = flow_content_src(c, from);
	struct val w = s ? flow_tainted(s > 0 ? s : 0) : (struct val){ 0 };
	for (int i = 0; i < to->np; i++)
		flow_cell_write(c, to->p[i], &w, strong && to->np == 1, true);
}

/* The effect of a call of a C library function (its name) on the store:
 * sources, the string functions that carry input, allocations. Its
 * value. */
struct val flow_lib_call(struct ctx *c, const struct flow_tok *name, const struct ev *a, int na,
			 int line)
{
	struct val r = { 0 };
	if (flow_tok_is_name(name, src_into0) && na > 0) {
		int s = flow_src_tok(c, name, line);
		flow_taint_into(c, &a[0].v, s);
		r = a[0].v;
	} else if (flow_tok_is_name(name, src_into1) && na > 1) {
		flow_taint_into(c, &a[1].v, flow_src_tok(c, name, line));
	} else if (flow_tok_is_name(name, src_ret)) {
		r = flow_tainted(flow_src_tok(c, name, line));
	} else if ((flow_is(name, "getline") || flow_is(name, "getdelim")) && na > 0) {
		flow_taint_into(c, &a[0].v, flow_src_tok(c, name, line));
	} else if ((flow_is(name, "scanf") || flow_is(name, "fscanf") || flow_is(name, "wscanf") ||
		    flow_is(name, "fwscanf")) && na > 0) {
		int s = flow_src_tok(c, name, line);
		for (int i = flow_is(name, "scanf") || flow_is(name, "wscanf") ? 1 : 2; i < na; i++)
			flow_taint_into(c, &a[i].v, s);
	} else if (flow_is(name, "sscanf") && na > 1) {
		for (int i = 2; i < na; i++)
			flow_copy_into(c, &a[i].v, &a[0].v, false);
	} else if (flow_tok_is_name(name, copy_strong) && na > 1) {
		flow_copy_into(c, &a[0].v, &a[1].v, true);
		r = a[0].v;
	} else if (flow_tok_is_name(name, copy_weak) && na > 1) {
		flow_copy_into(c, &a[0].v, &a[1].v, false);
		r = a[0].v;
	} else if ((flow_is(name, "sprintf") || flow_is(name, "snprintf") ||
		    flow_is(name, "vsprintf") || flow_is(name, "vsnprintf")) && na > 1) {
		for (int i = 1; i < na; i++)
			flow_copy_into(c, &a[0].v, &a[i].v, false);
	} else if (flow_tok_is_name(name, ptr_into) && na > 0) {
		r = a[0].v;
		r.lit = false;
	} else if (flow_tok_is_name(name, to_num) && na > 0) {
		int s = flow_content_src(c, &a[0].v);
		r = s ? flow_tainted(s > 0 ? s : 0) : (struct val){ 0 };
	} else if (flow_tok_is_name(name, alloc_fns)) {
		int cell = flow_cell_new(c, true);
		r = (struct val){ .np = 1, .p = { cell } };
		if ((flow_is(name, "strdup") || flow_is(name, "strndup") || flow_is(name, "wcsdup") ||
		     flow_is(name, "realloc")) && na > 0)
			flow_copy_into(c, &r, &a[0].v, true);
	}
	return r;
}

bool flow_is_source_name(const struct flow_tok *t)
{
	return flow_tok_is_name(t, src_into0) || flow_tok_is_name(t, src_into1) || flow_tok_is_name(t, src_ret) ||
	       flow_is(t, "getline") || flow_is(t, "getdelim") || flow_is(t, "scanf") ||
	       flow_is(t, "fscanf") || flow_is(t, "wscanf") || flow_is(t, "fwscanf");
}
