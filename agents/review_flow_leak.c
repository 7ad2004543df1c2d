/* review.flow's memory-leak finder (CWE-401), run after the taint
 * interpreter over the functions agents/review_flow_scan.c found.
 *
 * For each local pointer a function assigns from an allocator (malloc,
 * calloc, realloc, strdup, strndup, wcsdup, or a function of the files
 * that returns such a block), every use of the variable in the function
 * is classified. Harmless: a test against NULL, a dereference or index,
 * an argument to a C library function that does not keep its argument,
 * a new value assigned. Anything else makes the block escape and ends the
 * check (conservative): free(), a return, an assignment of the pointer
 * anywhere (a global, a struct, another variable), its address taken, an
 * argument to an unknown function ("may keep"), an argument to a function
 * of the files that frees or keeps that parameter (decided by the same
 * classification over the callee's body, to FLOW_DEPTH calls).
 *
 * A block that never escapes is lost when the function returns: the
 * finding is at the function's closing brace, or, when the pointer's last
 * use hands it to a function of the files that neither frees nor keeps it,
 * at that function's closing brace (no live pointer is left once it
 * returns). p = realloc(p, ...) on a block p holds loses it when realloc
 * fails: a finding at that line. The analysis is flow-insensitive (a free
 * on any path counts as freed), so it misses leaks on some paths only,
 * never reports a block freed on every path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/review_flow_priv.h"
#include "agents/review_priv.h"
#include "core/util.h"
#include "core/banned.h"

static const char *const alloc_names[] = { "malloc", "calloc", "realloc", "strdup",
					   "strndup", "wcsdup", NULL };
/* C library functions that read or write the memory of a pointer argument
 * but keep no copy of it */
static const char *const keepless_names[] = {
	"strlen", "wcslen", "strcmp", "strncmp", "wcscmp", "memcmp", "printf", "fprintf",
	"wprintf", "fwprintf", "puts", "fputs", "fputws", "snprintf", "swprintf", "fwrite",
	"fread", "atoi", "atol", "strtol", "strtoul", "sscanf", "fscanf", "write", "read",
	"send", "recv", NULL
};
/* ... and those that also return it (harmless only as a statement) */
static const char *const keepless_ret_names[] = {
	"strcpy", "strncpy", "strcat", "strncat", "memcpy", "memmove", "memset", "wcscpy",
	"wcsncpy", "wcscat", "wcsncat", "wmemset", "wmemcpy", "fgets", "fgetws", NULL
};
static const char *const not_calls[] = { "if", "while", "for", "switch", "return", "sizeof",
					 NULL };
static const char *const not_types[] = { "return", "else", "case", "goto", "sizeof", "do",
					 NULL };

enum use { U_NONE, U_ESCAPE, U_PASS, U_ALIAS };

struct lk {
	struct ctx *c;
	int depth;
	signed char *kept;   /* per function and parameter: -1 unknown, 0, 1 */
	signed char *fresh;  /* per function: returns a new block: -1, 0, 1 */
};

static bool same(const struct flow_tok *a, const struct flow_tok *b)
{
	return a->k == FT_ID && b->k == FT_ID && a->len == b->len &&
	       !memcmp(a->s, b->s, (size_t)a->len);
}

static bool is_p(const struct flow_tok *t, const char *s)
{
	return t->k == FT_PUNCT && flow_is(t, s);
}

static bool stmt_start(const struct flow_tok *t)
{
	return is_p(t, ";") || is_p(t, "{") || is_p(t, "}");
}

/* Whether t[i] is the name a declaration of a pointer declares: "T * name"
 * after the start of a statement. */
static bool is_ptr_decl(const struct flow_tok *t, size_t lo, size_t i)
{
	size_t j = i;
	if (j <= lo || !is_p(&t[j - 1], "*"))
		return false;
	while (j > lo && is_p(&t[j - 1], "*"))
		j--;
	size_t k = j, ids = 0;
	while (k > lo && t[k - 1].k == FT_ID) {
		if (flow_tok_is_name(&t[k - 1], not_types))
			return false;
		k--;
		ids++;
	}
	return ids > 0 && k > lo && stmt_start(&t[k - 1]);
}

/* Past a cast "( type ... )" at i; i when there is none. */
static size_t skip_cast(const struct flow_tok *t, size_t i, size_t end)
{
	if (!is_p(&t[i], "("))
		return i;
	size_t j = i + 1;
	while (j < end && (t[j].k == FT_ID || is_p(&t[j], "*")))
		j++;
	return j > i + 1 && j < end && is_p(&t[j], ")") ? j + 1 : i;
}

static int fn_at(struct lk *k, const struct flow_tok *name, int fi)
{
	int save = k->c->fi;
	k->c->fi = fi;
	int g = flow_fn_find(k->c, name);
	k->c->fi = save;
	return g;
}

static bool fn_fresh(struct lk *k, int g);

/* Whether the call at t[i] (a name before '(') makes a new block. */
static bool call_allocates(struct lk *k, const struct flow_tok *t, size_t i, int fi)
{
	if (t[i].k != FT_ID || !is_p(&t[i + 1], "("))
		return false;
	if (flow_tok_is_name(&t[i], alloc_names))
		return true;
	int g = fn_at(k, &t[i], fi);
	return g >= 0 && fn_fresh(k, g);
}

static bool fn_kept(struct lk *k, int g, int param);

/* The function a local function pointer of f names: declared
 * "T (*name)(...) = fn;" and never assigned again; -1 when not so. */
static int fp_target(struct lk *k, const struct fn *f, const struct flow_tok *name)
{
	const struct flow_tok *t = k->c->files[f->fi].t;
	int g = -1;
	for (size_t j = f->body + 2; j + 2 < f->end; j++) {
		if (!same(&t[j], name))
			continue;
		if (is_p(&t[j + 1], "="))
			return -1; /* assigned again */
		if (!is_p(&t[j - 1], "*") || !is_p(&t[j - 2], "(") || !is_p(&t[j + 1], ")") ||
		    !is_p(&t[j + 2], "("))
			continue;
		size_t e = j + 2;
		int d = 0;
		for (; e < f->end; e++) {
			d += is_p(&t[e], "(") - is_p(&t[e], ")");
			if (!d)
				break;
		}
		if (e + 3 < f->end && is_p(&t[e + 1], "=") && t[e + 2].k == FT_ID &&
		    is_p(&t[e + 3], ";"))
			g = fn_at(k, &t[e + 2], f->fi);
	}
	return g;
}

/* How the use of the variable at t[i] (in function f) treats its block;
 * callee and param: the function of the files it is handed to (U_PASS). */
static enum use use_at(struct lk *k, const struct fn *f, size_t i, int *callee, int *param)
{
	const struct flow_tok *t = k->c->files[f->fi].t;
	const struct flow_tok *pv = &t[i - 1], *nx = &t[i + 1];
	if (is_p(pv, ".") || is_p(pv, "->"))
		return U_NONE; /* a member of the same name */
	if (is_ptr_decl(t, f->body, i))
		return U_NONE;
	if (is_p(pv, "&"))
		return U_ESCAPE; /* &v, &v[i], &v->x: a pointer to it or into the block */
	if (is_p(nx, "[") || is_p(nx, "->") || is_p(nx, "==") || is_p(nx, "!=") ||
	    is_p(pv, "==") || is_p(pv, "!=") || is_p(pv, "!"))
		return U_NONE;
	if (is_p(pv, "*") && (stmt_start(&t[i - 2]) || is_p(&t[i - 2], "(") ||
			      is_p(&t[i - 2], "=") || is_p(&t[i - 2], ",")))
		return U_NONE; /* a dereference */
	if (is_p(nx, "=") && (stmt_start(pv) || is_p(pv, "(") || is_p(pv, ",")))
		return U_NONE; /* a new value (an allocation is handled by the caller) */
	if (is_p(pv, "=") && is_p(nx, ";") && is_ptr_decl(t, f->body, i - 2)) {
		*param = (int)(i - 2); /* T * w = v;: w a local copy */
		return U_ALIAS;
	}
	if ((is_p(pv, "(") || is_p(pv, ",")) && (is_p(nx, ")") || is_p(nx, ","))) {
		/* a whole argument: find the call */
		size_t j = i;
		int d = 0, argn = 0;
		while (j > f->body) {
			j--;
			if (is_p(&t[j], ")") || is_p(&t[j], "]"))
				d++;
			else if (is_p(&t[j], "(") || is_p(&t[j], "[")) {
				if (!d)
					break;
				d--;
			} else if (is_p(&t[j], ",") && !d)
				argn++;
			else if (stmt_start(&t[j]) && !d)
				return U_ESCAPE;
		}
		if (!is_p(&t[j], "(") || j == 0 || t[j - 1].k != FT_ID)
			return U_ESCAPE;
		const struct flow_tok *name = &t[j - 1];
		if (flow_is(name, "sizeof"))
			return U_NONE;
		if (flow_tok_is_name(name, not_calls) || flow_is(name, "free") ||
		    flow_tok_is_name(name, alloc_names))
			return U_ESCAPE;
		if (flow_tok_is_name(name, keepless_names))
			return U_NONE;
		if (flow_tok_is_name(name, keepless_ret_names))
			return j >= 2 && (stmt_start(&t[j - 2]) || is_p(&t[j - 2], ")") ||
					  flow_is(&t[j - 2], "else")) ? U_NONE : U_ESCAPE;
		int g = fn_at(k, name, f->fi);
		if (g < 0)
			g = fp_target(k, f, name);
		if (g < 0 || argn >= k->c->fns[g].nparams || fn_kept(k, g, argn))
			return U_ESCAPE;
		*callee = g;
		*param = argn;
		return U_PASS;
	}
	return U_ESCAPE;
}

/* Whether variable v (a name token) of function f has a use that lets its
 * block escape, from token lo on; *last: the pass of its last use, if any. */
static bool var_escapes(struct lk *k, const struct fn *f, const struct flow_tok *v, size_t lo,
			int *last_fn, int *last_param)
{
	const struct flow_tok *t = k->c->files[f->fi].t;
	*last_fn = -1;
	for (size_t i = lo; i < f->end; i++) {
		if (!same(&t[i], v))
			continue;
		int g = -1, p = -1;
		enum use u = use_at(k, f, i, &g, &p);
		if (u == U_ALIAS) {
			/* the copy's uses, from its declaration on (a copy of a copy:
			 * escapes, conservatively) */
			if (k->depth >= FLOW_DEPTH)
				return true;
			k->depth++;
			int af = -1, ap = -1;
			bool esc = var_escapes(k, f, &t[p], (size_t)p + 1, &af, &ap);
			k->depth--;
			if (esc)
				return true;
			g = af;
			p = ap;
			u = af >= 0 ? U_PASS : U_NONE;
		}
		if (u == U_ESCAPE)
			return true;
		*last_fn = u == U_PASS ? g : -1;
		*last_param = p;
	}
	return false;
}

/* Whether function f has a loop or a goto (uses before a statement may
 * then follow it). */
static bool fn_loops(const struct flow_tok *t, const struct fn *f)
{
	static const char *const loops[] = { "for", "while", "do", "goto", NULL };
	for (size_t i = f->body; i < f->end; i++)
		if (t[i].k == FT_ID && flow_tok_is_name(&t[i], loops))
			return true;
	return false;
}

/* Whether function g frees or keeps (or may keep) its parameter param. */
static bool fn_kept(struct lk *k, int g, int param)
{
	signed char *m = &k->kept[(size_t)g * MAXARGS + (size_t)param];
	if (*m >= 0)
		return *m;
	if (k->depth >= FLOW_DEPTH)
		return true;
	*m = 1; /* while it is decided (recursion): kept */
	k->depth++;
	const struct fn *f = &k->c->fns[g];
	int lf, lp;
	bool kept = !f->param[param] || var_escapes(k, f, f->param[param], f->body, &lf, &lp);
	k->depth--;
	*m = kept;
	return kept;
}

/* The value after "= " at i: the start of the call it is, past casts. */
static size_t rhs_call(const struct flow_tok *t, size_t i, size_t end)
{
	size_t j = skip_cast(t, i, end);
	return j + 1 < end && t[j].k == FT_ID && is_p(&t[j + 1], "(") ? j : 0;
}

/* Whether function g returns a block it allocates, and nothing else: each
 * return is an allocation, or the same local pointer, every value of which
 * is an allocation and which goes nowhere else (a new-like wrapper). */
static bool fn_fresh(struct lk *k, int g)
{
	signed char *m = &k->fresh[g];
	if (*m >= 0)
		return *m;
	*m = 0;
	if (k->depth >= FLOW_DEPTH)
		return false;
	k->depth++;
	const struct fn *f = &k->c->fns[g];
	const struct flow_tok *t = k->c->files[f->fi].t;
	const struct flow_tok *v = NULL;
	bool fresh = true;
	int returns = 0;
	for (size_t i = f->body; i < f->end && fresh; i++) {
		if (t[i].k != FT_ID || !flow_is(&t[i], "return"))
			continue;
		returns++;
		size_t j = rhs_call(t, i + 1, f->end);
		if (j && call_allocates(k, t, j, f->fi))
			continue;
		if (t[i + 1].k == FT_ID && is_p(&t[i + 2], ";") && (!v || same(v, &t[i + 1])))
			v = &t[i + 1];
		else
			fresh = false;
	}
	if (v && fresh) {
		/* a local, or a parameter whose first use, in the body's own
		 * block, gives it an allocation (the caller's value never returns) */
		bool local = false, first = true;
		int depth = 0;
		for (size_t i = f->body + 1; i < f->end && fresh; i++) {
			depth += is_p(&t[i], "{") - is_p(&t[i], "}");
			if (!same(&t[i], v) || is_p(&t[i - 1], ".") || is_p(&t[i - 1], "->"))
				continue;
			if (is_ptr_decl(t, f->body, i))
				local = true;
			if (first && !depth && stmt_start(&t[i - 1]) && is_p(&t[i + 1], "="))
				local = true;
			first = false;
			if (is_p(&t[i + 1], "=")) {
				size_t j = rhs_call(t, i + 2, f->end);
				fresh = j && call_allocates(k, t, j, f->fi);
				continue;
			}
			if (flow_is(&t[i - 1], "return"))
				continue;
			int cg = -1, cp = -1;
			enum use u = use_at(k, f, i, &cg, &cp);
			fresh = u == U_NONE || u == U_PASS;
		}
		fresh = fresh && local;
	}
	fresh = fresh && returns > 0;
	k->depth--;
	*m = fresh;
	return fresh;
}

static void leak_report(struct lk *k, int fi, int line, const char *alloc, const struct fn *af,
			int aline, const char *why)
{
	char *key = xasprintf("%d:%d:CWE-401", fi, line);
	bool dup = cJSON_GetObjectItemCaseSensitive(k->c->seen, key) != NULL;
	if (!dup)
		cJSON_AddTrueToObject(k->c->seen, key);
	free(key);
	if (dup)
		return;
	char at[600];
	if (af->fi == fi)
		snprintf(at, sizeof(at), "line %d", aline);
	else
		snprintf(at, sizeof(at), "%s:%d", k->c->files[af->fi].path, aline);
	char *msg = xasprintf("memory allocated by %s() at %s is lost at line %d: %s", alloc, at,
			      line, why);
	cJSON_AddItemToArray(k->c->items, review_raw_new("madf-flow", "memory-leak", 4,
							 k->c->files[fi].path, line, msg,
							 "CWE-401"));
	free(msg);
}

/* Whether function f never returns: no return, and its last statement
 * ends the process (exit, _exit, abort). */
static bool fn_noreturn(const struct flow_tok *t, const struct fn *f)
{
	static const char *const ends[] = { "exit", "_exit", "abort", NULL };
	for (size_t i = f->body; i < f->end; i++)
		if (t[i].k == FT_ID && flow_is(&t[i], "return"))
			return false;
	size_t e = f->end - 1; /* its '}' */
	if (e < f->body + 4 || !is_p(&t[e - 1], ";") || !is_p(&t[e - 2], ")"))
		return false;
	int d = 0;
	size_t i = e - 2;
	for (; i > f->body; i--) {
		d += is_p(&t[i], ")") - is_p(&t[i], "(");
		if (!d)
			break;
	}
	return i > f->body && flow_tok_is_name(&t[i - 1], ends) && stmt_start(&t[i - 2]);
}

/* The allocations of function f's local pointers. */
static void fn_leaks(struct lk *k, const struct fn *f)
{
	const struct flow_tok *t = k->c->files[f->fi].t;
	for (size_t i = f->body + 1; i + 2 < f->end; i++) {
		if (t[i].k != FT_ID || !is_p(&t[i + 1], "=") ||
		    !(stmt_start(&t[i - 1]) || is_ptr_decl(t, f->body, i)))
			continue;
		size_t j = rhs_call(t, i + 2, f->end);
		if (!j || !call_allocates(k, t, j, f->fi))
			continue;
		/* a local pointer: declared in the body */
		bool local = false;
		for (size_t d = f->body + 1; d <= i && !local; d++)
			local = same(&t[d], &t[i]) && is_ptr_decl(t, f->body, d);
		if (!local)
			continue;
		char alloc[64];
		snprintf(alloc, sizeof(alloc), "%.*s", t[j].len, t[j].s);
		if (flow_is(&t[j], "realloc") && same(&t[j + 2], &t[i]) && is_p(&t[j + 3], ",")) {
			/* p = realloc(p, ...): lost when realloc fails, if p holds a block
			 * (else, realloc(NULL, ...), an allocation like any other) */
			bool held = false;
			for (size_t a = f->body + 1; a < i && !held; a++) {
				if (!same(&t[a], &t[i]) || !is_p(&t[a + 1], "="))
					continue;
				size_t aj = rhs_call(t, a + 2, f->end);
				if (aj && call_allocates(k, t, aj, f->fi)) {
					char what[64];
					snprintf(what, sizeof(what), "%.*s", t[aj].len, t[aj].s);
					leak_report(k, f->fi, t[i].line, what, f, t[a].line,
						    "realloc() returns NULL on failure and the only "
						    "pointer to the block is overwritten");
					held = true;
				}
			}
			if (held)
				continue;
		}
		/* its uses: after the statement (the earlier ones see an older
		 * value), or all of them in a function with loops */
		size_t from = f->body + 1;
		if (!fn_loops(t, f)) {
			int d = 0;
			for (from = j; from < f->end && !(is_p(&t[from], ";") && !d); from++)
				d += is_p(&t[from], "(") - is_p(&t[from], ")");
		}
		int lf = -1, lp = -1;
		if (var_escapes(k, f, &t[i], from, &lf, &lp))
			continue;
		/* lost at the end of f, or of the function its last use hands it to
		 * (not when f ends the process there) */
		if (lf < 0 && fn_noreturn(t, f))
			continue;
		const struct fn *at = f;
		for (int hops = 0; lf >= 0 && hops < FLOW_DEPTH; hops++) {
			at = &k->c->fns[lf];
			if (!at->param[lp])
				break;
			int nf = -1, np = -1;
			if (var_escapes(k, at, at->param[lp], at->body, &nf, &np))
				break; /* not reached: fn_kept said it is not kept */
			lf = nf;
			lp = np;
		}
		const struct flow_tok *et = &k->c->files[at->fi].t[at->end - 1]; /* its '}' */
		leak_report(k, at->fi, et->line, alloc, f, t[i].line,
			    "not freed, returned or stored when the function returns");
	}
}

void flow_leaks(struct ctx *c)
{
	struct lk k = { .c = c };
	k.kept = xmalloc((c->nfns + 1) * MAXARGS);
	memset(k.kept, -1, (c->nfns + 1) * MAXARGS);
	k.fresh = xmalloc(c->nfns + 1);
	memset(k.fresh, -1, c->nfns + 1);
	for (size_t g = 0; g < c->nfns; g++)
		fn_leaks(&k, &c->fns[g]);
	free(k.kept);
	free(k.fresh);
}
