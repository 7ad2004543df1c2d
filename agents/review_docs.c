/* The documentation agent: README.md and CONTRIBUTING.md drafts from the
 * file structure and metadata (cloc, ctags), the include graph as SVG
 * (graphviz dot), an OpenAPI draft when it finds HTTP routes. What it
 * cannot make is said in Markdown in its place. */
#include "agents/review.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tools.h"
#include "core/util.h"
#include "core/banned.h"

/* A tool's items, or NULL with *why (new) saying why. */
static cJSON *items_of(struct tools *t, const char *agent, const char *tool, const cJSON *args,
		       cJSON *status, char **why)
{
	cJSON *res = NULL;
	char *err = NULL;
	const char *name = strchr(tool, '.') + 1;
	if (tools_call(t, agent, tool, args, &res, &err) < 0) {
		bool missing = err && strstr(err, "is not installed");
		cJSON_AddStringToObject(status, name, missing ? "missing" : "failed");
		*why = err ? err : xstrdup("failed");
		return NULL;
	}
	cJSON_AddStringToObject(status, name, "ok");
	cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(res, "items");
	if (!items) /* dot */
		items = cJSON_Duplicate(res, true);
	cJSON_Delete(res);
	return items;
}

static bool has_file(const cJSON *files, const char *name)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, files)
		if (!strcmp(f->valuestring, name))
			return true;
	return false;
}

static bool has_prefix(const cJSON *files, const char *prefix)
{
	size_t n = strlen(prefix);
	const cJSON *f;
	cJSON_ArrayForEach(f, files)
		if (!strncmp(f->valuestring, prefix, n))
			return true;
	return false;
}

static char *read_rel(const char *root, const char *rel)
{
	char *p = xasprintf("%s/%s", root, rel), *buf = NULL;
	size_t len;
	if (util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL) < 0)
		buf = NULL;
	free(p);
	return buf;
}

/* Routes: a line with a quoted HTTP method and then a quoted "/path". */
static void find_routes(const char *root, const cJSON *files, cJSON *routes)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "PATCH", NULL };
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		bool utf8;
		if (strcmp(review_file_lang(root, f->valuestring, &utf8), "c"))
			continue;
		char *buf = read_rel(root, f->valuestring);
		long line = 1;
		for (char *s = buf; s && *s; line++) {
			char *nl = strchr(s, '\n');
			if (nl)
				*nl = 0;
			for (size_t m = 0; methods[m]; m++) {
				char *q = xasprintf("\"%s\"", methods[m]);
				char *hit = strstr(s, q);
				free(q);
				if (!hit)
					continue;
				char *p = strstr(hit + strlen(methods[m]) + 2, "\"/");
				if (!p)
					continue;
				char *e = strchr(p + 1, '"');
				if (!e)
					continue;
				bool ok = e - p > 1;
				for (char *c = p + 1; c < e; c++)
					ok = ok && (isalnum((unsigned char)*c) || strchr("/_-.{}:", *c));
				if (!ok)
					continue;
				cJSON *r = cJSON_CreateObject();
				char *path = xstrndup(p + 1, (size_t)(e - p - 1));
				char *lower = xstrdup(methods[m]);
				for (char *c = lower; *c; c++)
					*c = (char)tolower((unsigned char)*c);
				cJSON_AddStringToObject(r, "method", lower);
				cJSON_AddStringToObject(r, "path", path);
				cJSON_AddStringToObject(r, "file", f->valuestring);
				cJSON_AddNumberToObject(r, "line", (double)line);
				cJSON_AddItemToArray(routes, r);
				free(path);
				free(lower);
				break;
			}
			s = nl ? nl + 1 : NULL;
		}
		free(buf);
	}
}

/* The include graph in dot: an edge per #include "x" that names a file
 * of the tree (matched by its base name). */
static char *include_graph(const char *root, const cJSON *files, int *edges)
{
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addstr(&b, "digraph includes {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n");
	*edges = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		bool utf8;
		if (strcmp(review_file_lang(root, f->valuestring, &utf8), "c") ||
		    strpbrk(f->valuestring, "\"\\"))
			continue;
		sbuf_addf(&b, "  \"%s\";\n", f->valuestring);
		char *buf = read_rel(root, f->valuestring);
		for (char *s = buf; s && *s;) {
			char *nl = strchr(s, '\n');
			if (nl)
				*nl = 0;
			char *t = s;
			while (*t == ' ' || *t == '\t')
				t++;
			if (!strncmp(t, "#include", 8)) {
				char *q = strchr(t, '"'), *e = q ? strchr(q + 1, '"') : NULL;
				if (q && e) {
					char *inc = xstrndup(q + 1, (size_t)(e - q - 1));
					const char *base = strrchr(inc, '/') ? strrchr(inc, '/') + 1 : inc;
					const cJSON *g;
					cJSON_ArrayForEach(g, files) {
						const char *gb = strrchr(g->valuestring, '/');
						gb = gb ? gb + 1 : g->valuestring;
						if (!strcmp(gb, base) && !strpbrk(g->valuestring, "\"\\")) {
							sbuf_addf(&b, "  \"%s\" -> \"%s\";\n",
								  f->valuestring, g->valuestring);
							(*edges)++;
							break;
						}
					}
					free(inc);
				}
			}
			s = nl ? nl + 1 : NULL;
		}
		free(buf);
	}
	sbuf_addstr(&b, "}\n");
	return sbuf_detach(&b);
}

static char *project_name(const char *root)
{
	const char *s = strrchr(root, '/');
	return xstrdup(s && s[1] ? s + 1 : root);
}

int review_docs_run(struct tools *tools, const char *agent, const cJSON *input,
		    cJSON **result, char **err)
{
	(void)err;
	const char *root = review_str(input, "root");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(input, "files");
	cJSON *notes = cJSON_CreateArray(), *status = cJSON_CreateObject();
	cJSON *docs = cJSON_CreateObject();
	char *why = NULL;
	cJSON *args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "root", root);
	cJSON_AddItemToObject(args, "files", cJSON_Duplicate(files, true));
	cJSON *cloc = cJSON_GetArraySize(files) ? items_of(tools, agent, "review.cloc", args, status, &why)
						: cJSON_CreateArray();
	if (!cloc) {
		cJSON_AddItemToArray(notes, cJSON_CreateString(why));
		free(why);
		why = NULL;
	}
	cJSON *cfiles = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		bool utf8;
		if (!strcmp(review_file_lang(root, f->valuestring, &utf8), "c"))
			cJSON_AddItemToArray(cfiles, cJSON_CreateString(f->valuestring));
	}
	cJSON *cargs = cJSON_CreateObject();
	cJSON_AddStringToObject(cargs, "root", root);
	cJSON_AddItemToObject(cargs, "files", cfiles);
	cJSON *funcs = cJSON_GetArraySize(cfiles) ? items_of(tools, agent, "review.ctags", cargs, status, &why)
						  : cJSON_CreateArray();
	if (!funcs) {
		cJSON_AddItemToArray(notes, cJSON_CreateString(why));
		free(why);
		why = NULL;
	}
	cJSON *routes = cJSON_CreateArray();
	find_routes(root, files, routes);
	char *name = project_name(root);

	/* README.md */
	struct sbuf b;
	sbuf_init(&b);
	sbuf_addf(&b, "# %s\n\n> A draft by madf review from the file structure and metadata: "
		      "check every statement before you publish it.\n\n## Overview\n\n", name);
	sbuf_addf(&b, "%d files", cJSON_GetArraySize(files));
	if (cloc && cJSON_GetArraySize(cloc)) {
		/* code lines per language */
		cJSON *langs = cJSON_CreateObject();
		const cJSON *c;
		cJSON_ArrayForEach(c, cloc) {
			cJSON *l = cJSON_GetObjectItemCaseSensitive(langs, review_str(c, "language"));
			if (l)
				cJSON_SetNumberValue(l, l->valuedouble + jnum(c, "code", 0));
			else
				cJSON_AddNumberToObject(langs, review_str(c, "language"), jnum(c, "code", 0));
		}
		sbuf_addstr(&b, "; lines of code by language:");
		cJSON_ArrayForEach(c, langs)
			sbuf_addf(&b, " %s %d%s", c->string, (int)c->valuedouble, c->next ? "," : "");
		cJSON_Delete(langs);
	}
	sbuf_addstr(&b, ".\n\n## Layout\n\n");
	cJSON_ArrayForEach(f, files)
		sbuf_addf(&b, "- `%s`\n", f->valuestring);
	if (funcs && cJSON_GetArraySize(funcs)) {
		sbuf_addstr(&b, "\n## Functions\n\n| File | Function | Lines |\n|---|---|---|\n");
		const cJSON *c;
		cJSON_ArrayForEach(c, funcs)
			sbuf_addf(&b, "| `%s` | `%s()` | %d-%d |\n", review_str(c, "file"), review_str(c, "name"),
				  (int)jnum(c, "line", 0), (int)jnum(c, "end", 0));
	}
	sbuf_addstr(&b, "\n## Building\n\n");
	if (has_file(files, "Makefile"))
		sbuf_addstr(&b, "`make` (see the Makefile).\n");
	else
		sbuf_addstr(&b, "No build file was found; describe how to build it here.\n");
	if (cJSON_GetArraySize(routes)) {
		sbuf_addstr(&b, "\n## HTTP API\n\nSee `openapi.yaml`.\n\n");
		const cJSON *r;
		cJSON_ArrayForEach(r, routes)
			sbuf_addf(&b, "- `%s %s` (`%s:%d`)\n", review_str(r, "method"), review_str(r, "path"),
				  review_str(r, "file"), (int)jnum(r, "line", 0));
	}
	sbuf_addstr(&b, "\n## Architecture\n\nThe include graph: `diagram.svg`.\n");
	cJSON_AddStringToObject(docs, "README.md", b.data);
	sbuf_release(&b);

	/* CONTRIBUTING.md */
	sbuf_init(&b);
	sbuf_addf(&b, "# Contributing to %s\n\n> A draft by madf review; adapt it to the project's "
		      "practice.\n\n## Before you send a change\n\n", name);
	if (has_file(files, "Makefile"))
		sbuf_addstr(&b, "1. Build it: `make`.\n");
	if (has_prefix(files, "tests/") || has_prefix(files, "test/"))
		sbuf_addstr(&b, "1. Run the tests (in `tests/`).\n");
	sbuf_addstr(&b, "1. Review it: `madf review .` reports defects, debt and improvements.\n");
	bool shell = false;
	cJSON_ArrayForEach(f, files) {
		bool utf8;
		shell = shell || !strcmp(review_file_lang(root, f->valuestring, &utf8), "shell");
	}
	if (shell)
		sbuf_addstr(&b, "1. Check the shell scripts: `shellcheck`.\n");
	sbuf_addstr(&b, "\n## Reporting a problem\n\nSay what you ran, what you expected and what "
		      "happened instead.\n");
	cJSON_AddStringToObject(docs, "CONTRIBUTING.md", b.data);
	sbuf_release(&b);

	/* diagram.svg */
	int edges = 0;
	char *dot = include_graph(root, files, &edges);
	cJSON *dargs = cJSON_CreateObject();
	cJSON_AddStringToObject(dargs, "dot", dot);
	cJSON *svg = items_of(tools, agent, "review.dot", dargs, status, &why);
	if (svg && cJSON_IsString(cJSON_GetObjectItem(svg, "svg"))) {
		cJSON_AddStringToObject(docs, "diagram.svg", review_str(svg, "svg"));
	} else {
		char *clean = util_sanitize(why ? why : "?", strlen(why ? why : "?"), false);
		char *md = xasprintf("# Architecture diagram\n\nNot generated: %s.\n\nThe graph in "
				     "dot:\n\n```dot\n%s```\n", clean, dot);
		cJSON_AddStringToObject(docs, "diagram.md", md);
		free(md);
		free(clean);
		char *n2 = xasprintf("diagram.svg not generated: %s", why ? why : "?");
		cJSON_AddItemToArray(notes, cJSON_CreateString(n2));
		free(n2);
	}
	free(why);
	cJSON_Delete(svg);
	cJSON_Delete(dargs);
	free(dot);

	/* openapi.yaml */
	if (cJSON_GetArraySize(routes)) {
		sbuf_init(&b);
		sbuf_addf(&b, "openapi: 3.0.3\ninfo:\n  title: %s\n  version: \"0.1.0\"\n"
			      "  description: A draft by madf review from the routes found in the "
			      "source.\npaths:\n", name);
		/* one entry per path, its methods under it */
		cJSON *seen = cJSON_CreateObject();
		const cJSON *r;
		cJSON_ArrayForEach(r, routes) {
			if (cJSON_GetObjectItemCaseSensitive(seen, review_str(r, "path")))
				continue;
			cJSON_AddTrueToObject(seen, review_str(r, "path"));
			sbuf_addf(&b, "  \"%s\":\n", review_str(r, "path"));
			const cJSON *r2;
			cJSON_ArrayForEach(r2, routes)
				if (!strcmp(review_str(r2, "path"), review_str(r, "path")))
					sbuf_addf(&b, "    %s:\n      summary: \"found at %s:%d\"\n"
						      "      responses:\n        \"200\":\n"
						      "          description: OK\n",
						  review_str(r2, "method"), review_str(r2, "file"), (int)jnum(r2, "line", 0));
		}
		cJSON_Delete(seen);
		cJSON_AddStringToObject(docs, "openapi.yaml", b.data);
		sbuf_release(&b);
	}
	free(name);
	cJSON_Delete(routes);
	cJSON_Delete(funcs);
	cJSON_Delete(cloc);
	cJSON_Delete(args);
	cJSON_Delete(cargs);
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "documentation", docs);
	cJSON_AddItemToObject(*result, "notes", notes);
	cJSON_AddItemToObject(*result, "tools", status);
	return 0;
}
