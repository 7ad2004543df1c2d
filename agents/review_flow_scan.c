/* review.flow's driver (agents/review_flow.c is the interpreter): the
 * files' functions and globals, which functions can see outside input,
 * each of them analyzed from its entry, and the registry tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/review_flow_priv.h"
#include "agents/review_priv.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- the files' functions and globals ---- */


/* The functions and global declarations of file fi. */
static void file_scan(struct ctx *c, int fi, bool globals)
{
	const struct flow_file *f = &c->files[fi];
	c->fi = fi;
	c->t = f->t;
	c->n = f->n;
	c->i = 0;
	while (!flow_at_end(c)) {
		size_t start = c->i;
		int d = 0;
		size_t rp = 0;
		bool body = false, eq = false;
		/* to the end of the item: a ';' or a body at depth 0 */
		while (!flow_at_end(c)) {
			const struct flow_tok *t = flow_cur(c);
			if (flow_is(t, "(")) {
				d++;
			} else if (flow_is(t, ")")) {
				d--;
				if (!d)
					rp = c->i;
			} else if (flow_is(t, "=") && !d) {
				eq = true;
			} else if (flow_is(t, "{") && !d) {
				if (!eq && rp && rp + 1 == c->i) {
					body = true;
					break;
				}
				flow_skip_balanced(c);
				continue;
			} else if (flow_is(t, ";") && !d) {
				break;
			}
			c->i++;
		}
		if (body) {
			/* the '(' matching rp and the name before it */
			size_t lp = rp;
			int k = 0;
			for (; lp > start; lp--) {
				if (flow_is(&c->t[lp], ")"))
					k++;
				else if (flow_is(&c->t[lp], "(") && !--k)
					break;
			}
			size_t b = c->i;
			flow_skip_balanced(c);
			if (!globals && lp > start && c->t[lp - 1].k == FT_ID) {
				c->fns = xrealloc(c->fns, (c->nfns + 1) * sizeof(*c->fns));
				struct fn *fn = &c->fns[c->nfns++];
				memset(fn, 0, sizeof(*fn));
				fn->name = &c->t[lp - 1];
				fn->fi = fi;
				fn->lp = lp;
				fn->body = b;
				fn->end = c->i;
				for (size_t j = start; j < lp; j++)
					fn->is_static |= flow_is(&c->t[j], "static");
				/* the parameters: the last name of each */
				const struct flow_tok *last = NULL;
				int pd = 0;
				for (size_t j = lp + 1; j <= rp; j++) {
					const struct flow_tok *t = &c->t[j];
					if (flow_is(t, "(") || flow_is(t, "["))
						pd++;
					else if ((flow_is(t, ")") || flow_is(t, "]")) && pd && j < rp)
						pd--;
					else if ((flow_is(t, ",") && !pd) || j == rp) {
						if (last && fn->nparams < MAXARGS)
							fn->param[fn->nparams++] = last;
						last = NULL;
					} else if (t->k == FT_ID && !flow_tok_is_name(t, flow_type_words) &&
						   (!pd || flow_is(&c->t[j - 1], "*")))
						last = t;
				}
				for (size_t j = b; j < c->i; j++)
					if (c->t[j].k == FT_ID && flow_is(&c->t[j + 1], "(") &&
					    flow_is_source_name(&c->t[j]))
						fn->has_src = true;
				if (flow_is(fn->name, "main") && fn->nparams >= 2)
					fn->has_src = true;
			}
			continue;
		}
		if (globals) {
			c->i = start;
			flow_decl(c, true);
			if (c->i <= start)
				c->i = start + 1;
		} else {
			flow_eat(c, ";");
		}
		if (c->i == start)
			c->i++;
	}
}

/* has_src for each function that calls one that has it. */
static void fns_propagate(struct ctx *c)
{
	bool changed = true;
	for (int round = 0; changed && round < 64; round++) {
		changed = false;
		for (size_t i = 0; i < c->nfns; i++) {
			struct fn *f = &c->fns[i];
			if (f->has_src)
				continue;
			const struct flow_tok *t = c->files[f->fi].t;
			c->fi = f->fi;
			for (size_t j = f->body; j < f->end && !f->has_src; j++) {
				if (t[j].k != FT_ID)
					continue;
				int g = flow_fn_find(c, &t[j]);
				if (g >= 0 && c->fns[g].has_src)
					f->has_src = changed = true;
			}
		}
	}
}

void flow_analyze(struct flow_file *files, size_t n, cJSON *items)
{
	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.files = files;
	c.nfiles = n;
	c.items = items;
	c.seen = cJSON_CreateObject();
	for (size_t i = 0; i < n; i++)
		file_scan(&c, (int)i, true);
	c.nglobal = c.nb;
	flow_hidx_build(&c.hg, c.nglobal, flow_bind_name_at, &c);
	for (size_t i = 0; i < n; i++)
		file_scan(&c, (int)i, false);
	flow_hidx_build(&c.hf, c.nfns, flow_fn_name_at, &c);
	fns_propagate(&c);
	flow_store_copy(&c.init, &c.s);
	c.ninit = c.init.n;
	c.gmark = xcalloc((size_t)c.ninit + 1, sizeof(*c.gmark));
	for (size_t k = 0; k < c.nfns; k++) {
		struct fn *f = &c.fns[k];
		if (!f->has_src)
			continue;
		flow_store_copy(&c.s, &c.init);
		for (size_t i = 0; i < c.ngw; i++)
			c.gmark[c.gw[i]] = false;
		c.ngw = 0;
		c.nb = c.nglobal;
		c.steps = 0;
		c.depth = 0;
		c.fi = f->fi;
		c.t = files[f->fi].t;
		c.n = files[f->fi].n;
		struct ev args[MAXARGS];
		memset(args, 0, sizeof(args));
		int na = f->nparams;
		if (flow_is(f->name, "main") && na >= 2)
			args[1].v = flow_tainted(flow_src_add(&c, "the command line (argv)", f->name->line));
		/* from its entry: a frame of its own, untainted parameters */
		f->has_src = true;
		c.fr = NULL;
		flow_call_user(&c, (int)k, args, na);
	}
	flow_leaks(&c);
	flow_store_free(&c.s);
	flow_store_free(&c.init);
	for (size_t i = 0; i < c.nsrc; i++)
		free(c.srcs[i].what);
	free(c.srcs);
	free(c.gmark);
	free(c.gw);
	flow_hidx_free(&c.hf);
	flow_hidx_free(&c.hg);
	free(c.fns);
	free(c.b);
	for (size_t i = 0; i < c.ntypedefs; i++)
		free(c.typedefs[i]);
	free(c.typedefs);
	cJSON_Delete(c.seen);
}

/* ---- the tool ---- */

int review_flow_tool(void *ctx, const cJSON *args, cJSON **result, char **err)
{
	(void)ctx;
	const char *root = jstr(args, "root");
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(args, "files");
	if (!root || !cJSON_IsArray(files))
		return err_set(err, "args: root and files are required");
	size_t n = 0, cap = (size_t)cJSON_GetArraySize(files);
	struct flow_file *v = xcalloc(cap + 1, sizeof(*v));
	cJSON *notes = cJSON_CreateArray();
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		size_t l = cJSON_IsString(f) ? strlen(f->valuestring) : 0;
		if (l < 3 || strcmp(f->valuestring + l - 2, ".c"))
			continue;
		char *e = NULL;
		if (flow_file_load(&v[n], root, f->valuestring, &e) == 0) {
			n++;
		} else {
			review_note(notes, "%s: cannot read (%s): skipped by madf-flow", f->valuestring,
				    e ? e : "?");
			free(e);
		}
	}
	cJSON *items = cJSON_CreateArray();
	flow_analyze(v, n, items);
	for (size_t i = 0; i < n; i++)
		flow_file_release(&v[i]);
	free(v);
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "items", items);
	cJSON_AddItemToObject(*result, "notes", notes);
	return 0;
}
