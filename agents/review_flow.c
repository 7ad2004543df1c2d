/* review.flow: madf's own finder. An abstract interpreter over the tokens
 * of each function (agents/review_flow_lex.c: comments stripped,
 * directives applied, the file's macros expanded) that follows data from
 * outside input to the calls where it does harm:
 *   - sources: recv, recvfrom, read, fgets, gets, fread, getline, scanf,
 *     fscanf, getenv, fgetc/getc/getchar, and main's argv;
 *   - CWE-78: a tainted string reaching system, popen or an exec* call;
 *   - CWE-134: a tainted, non-literal format reaching the printf family.
 * The store maps each variable (and each buffer malloc returns) to a cell;
 * a value is tainted, or points to cells (whose content may be tainted),
 * or names a function. Both arms of a branch are followed and joined (a
 * condition that folds to a constant takes one arm); a loop body is
 * followed once; pointers, arrays (any element), struct and union fields
 * (field-insensitive), globals, function pointers and calls are followed.
 * A call to a function of the reviewed files is analyzed at the call with
 * its arguments (any file; depth at most FLOW_DEPTH, a step budget per
 * analysis), so data passed through helpers, globals, structs and
 * pointer-to-pointer arguments across files is followed. Each function
 * that can see outside input (it or a function it calls reads some) is
 * analyzed from its entry. A finding is reported at the sink's line, once,
 * with the source's place in its message. */
#include "agents/review_flow.h"
#include "agents/review_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

#define MAXP 4            /* cells a value may point to */
#define FLOW_DEPTH 8      /* nested calls analyzed */
#define FLOW_BUDGET 200000 /* steps per analysis from an entry */
#define MAXARGS 16

struct val {
	bool taint;   /* the value itself comes from outside input */
	bool known;   /* an integer constant */
	bool lit;     /* a string literal */
	int src;      /* 1 + index of the taint's origin in ctx.srcs, 0 none */
	int np;
	int p[MAXP];  /* the cells it may point to */
	int fn;       /* 1 + index of the function it names, 0 none */
	long cint;
};

struct cell {
	struct val v;
	bool array;
};

struct store {
	struct cell *c;
	int n, cap;
	bool dead;
};

struct bind {
	const char *name;
	int len;
	int cell;
	int file; /* the file of a static global; -1 visible everywhere */
};

struct fn {
	const struct flow_tok *name;
	int fi;
	size_t lp, body, end; /* '(' of the parameters, '{', '}' */
	bool is_static, has_src, on_stack;
	int nparams;
	const struct flow_tok *param[MAXARGS];
};

struct src {
	int fi, line;
	char *what;
};

struct frame {
	size_t bbase;       /* its bindings start here */
	struct store rets;  /* the stores at its returns */
	struct val ret;
	bool has_ret;
};

/* name -> indices, chained */
struct hidx {
	int *head, *next;
	size_t cap, n;
};

struct ctx {
	struct hidx hf, hg; /* functions; global bindings (after the scan) */
	struct flow_file *files;
	size_t nfiles;
	struct fn *fns;
	size_t nfns;
	struct bind *b;
	size_t nb, cb, nglobal;
	struct store s, init;
	struct src *srcs;
	size_t nsrc;
	int fi;
	const struct flow_tok *t; /* the current file's tokens */
	size_t i, n;
	long steps;
	int depth;
	struct frame *fr;
	struct store *brk, *cont;
	char **typedefs;
	size_t ntypedefs;
	int ninit;          /* the globals' cells: [0, ninit) */
	bool *gmark;        /* a global cell written in this analysis */
	int *gw;
	size_t ngw;
	cJSON *items, *seen;
};

/* ---- tokens ---- */

static const struct flow_tok *T(struct ctx *c)
{
	return &c->t[c->i < c->n ? c->i : c->n];
}

static const struct flow_tok *TA(struct ctx *c, size_t k)
{
	return &c->t[c->i + k < c->n ? c->i + k : c->n];
}

static bool at(struct ctx *c, const char *s)
{
	return flow_is(T(c), s);
}

static bool eat(struct ctx *c, const char *s)
{
	if (!at(c, s))
		return false;
	c->i++;
	return true;
}

static bool at_end(struct ctx *c)
{
	return c->i >= c->n;
}

/* From an opening bracket to just past its match (or the end). */
static void skip_balanced(struct ctx *c)
{
	int d = 0;
	do {
		const struct flow_tok *t = T(c);
		if (flow_is(t, "(") || flow_is(t, "[") || flow_is(t, "{"))
			d++;
		else if (flow_is(t, ")") || flow_is(t, "]") || flow_is(t, "}"))
			d--;
		c->i++;
	} while (d > 0 && !at_end(c));
}

static bool tok_is_name(const struct flow_tok *t, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		if (flow_is(t, names[i]))
			return true;
	return false;
}

/* ---- values and the store ---- */

static void val_addp(struct val *v, int p)
{
	for (int i = 0; i < v->np; i++)
		if (v->p[i] == p)
			return;
	if (v->np < MAXP)
		v->p[v->np++] = p;
}

static struct val val_join(struct val a, const struct val *b)
{
	if (b->taint && !a.taint)
		a.src = b->src;
	a.taint |= b->taint;
	for (int i = 0; i < b->np; i++)
		val_addp(&a, b->p[i]);
	if (!a.fn)
		a.fn = b->fn;
	a.known = a.known && b->known && a.cint == b->cint;
	a.lit = a.lit && b->lit;
	return a;
}

static int cell_new(struct ctx *c, bool array)
{
	struct store *s = &c->s;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->c = xrealloc(s->c, (size_t)s->cap * sizeof(*s->c));
	}
	memset(&s->c[s->n], 0, sizeof(s->c[s->n]));
	s->c[s->n].array = array;
	return s->n++;
}

static void store_copy(struct store *d, const struct store *s)
{
	if (d->cap < s->n) {
		d->cap = s->n + 16;
		d->c = xrealloc(d->c, (size_t)d->cap * sizeof(*d->c));
	}
	if (s->n)
		memcpy(d->c, s->c, (size_t)s->n * sizeof(*s->c));
	d->n = s->n;
	d->dead = s->dead;
}

/* d = d joined with s (a dead store is the identity). */
static void store_join(struct store *d, const struct store *s)
{
	if (s->dead)
		return;
	if (d->dead) {
		store_copy(d, s);
		return;
	}
	int n = d->n < s->n ? d->n : s->n;
	for (int i = 0; i < n; i++)
		d->c[i].v = val_join(d->c[i].v, &s->c[i].v);
	if (s->n > d->n) {
		struct store tmp = *d;
		if (tmp.cap < s->n) {
			tmp.cap = s->n + 16;
			tmp.c = xrealloc(tmp.c, (size_t)tmp.cap * sizeof(*tmp.c));
		}
		memcpy(tmp.c + d->n, s->c + d->n, (size_t)(s->n - d->n) * sizeof(*s->c));
		tmp.n = s->n;
		*d = tmp;
	}
}

static void store_free(struct store *s)
{
	free(s->c);
	memset(s, 0, sizeof(*s));
}

static struct val cell_val(struct ctx *c, int p)
{
	return p >= 0 && p < c->s.n ? c->s.c[p].v : (struct val){ 0 };
}

/* strong: the cell's value replaced (an array's too: its content written
 * whole, as strcpy does); else joined. */
static void cell_write(struct ctx *c, int p, const struct val *v, bool strong, bool whole)
{
	if (p < 0 || p >= c->s.n)
		return;
	struct cell *x = &c->s.c[p];
	if (p < c->ninit && c->gmark && !c->gmark[p]) {
		c->gmark[p] = true;
		c->gw = xrealloc(c->gw, (c->ngw + 1) * sizeof(*c->gw));
		c->gw[c->ngw++] = p;
	}
	if (strong && (whole || !x->array))
		x->v = *v;
	else
		x->v = val_join(x->v, v);
}

static void cell_set(struct ctx *c, int p, const struct val *v, bool strong)
{
	cell_write(c, p, v, strong, false);
}

/* The taint of what v is or points to (a string's characters): its
 * origin + 1, 0 when untainted. */
static int content_src(struct ctx *c, const struct val *v)
{
	if (v->taint)
		return v->src ? v->src : -1;
	for (int i = 0; i < v->np; i++) {
		struct val w = cell_val(c, v->p[i]);
		if (w.taint)
			return w.src ? w.src : -1;
	}
	return 0;
}

static struct val tainted(int src)
{
	return (struct val){ .taint = true, .src = src };
}

/* ---- names ---- */

static unsigned name_hash(const char *s, int n)
{
	unsigned h = 2166136261u;
	for (int i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static void hidx_build(struct hidx *h, size_t n, const struct flow_tok *(*name)(struct ctx *, size_t),
		       struct ctx *c)
{
	h->cap = n * 2 + 1;
	h->n = n;
	h->head = xmalloc(h->cap * sizeof(int));
	h->next = xmalloc((n + 1) * sizeof(int));
	for (size_t i = 0; i < h->cap; i++)
		h->head[i] = -1;
	for (size_t i = n; i-- > 0;) {
		const struct flow_tok *t = name(c, i);
		size_t k = name_hash(t->s, t->len) % h->cap;
		h->next[i] = h->head[k];
		h->head[k] = (int)i;
	}
}

static void hidx_free(struct hidx *h)
{
	free(h->head);
	free(h->next);
}

static int hidx_first(const struct hidx *h, const struct flow_tok *t)
{
	return h->cap ? h->head[name_hash(t->s, t->len) % h->cap] : -1;
}

static const struct flow_tok *fn_name_at(struct ctx *c, size_t i)
{
	return c->fns[i].name;
}

static const struct flow_tok *bind_name_at(struct ctx *c, size_t i)
{
	static __thread struct flow_tok t;
	t = (struct flow_tok){ FT_ID, 0, c->b[i].len, c->b[i].name };
	return &t;
}

static int bind_add(struct ctx *c, const struct flow_tok *name, int cell, int file)
{
	if (c->nb == c->cb) {
		c->cb = c->cb ? c->cb * 2 : 128;
		c->b = xrealloc(c->b, c->cb * sizeof(*c->b));
	}
	c->b[c->nb++] = (struct bind){ name->s, name->len, cell, file };
	return cell;
}

/* The cell of a name: the frame's, then the globals (a static one of this
 * file first); -1 when unknown. */
static int lookup(struct ctx *c, const struct flow_tok *name)
{
	size_t base = c->fr ? c->fr->bbase : c->nglobal;
	for (size_t i = c->nb; i-- > base;)
		if (c->b[i].len == name->len && !memcmp(c->b[i].name, name->s, (size_t)name->len))
			return c->b[i].cell;
	int any = -1;
	if (c->hg.cap) {
		for (int i = hidx_first(&c->hg, name); i >= 0; i = c->hg.next[i])
			if (c->b[i].len == name->len && !memcmp(c->b[i].name, name->s, (size_t)name->len)) {
				if (c->b[i].file == c->fi)
					return c->b[i].cell;
				if (c->b[i].file < 0 && any < 0)
					any = c->b[i].cell;
			}
		return any;
	}
	for (size_t i = c->nglobal; i-- > 0;)
		if (c->b[i].len == name->len && !memcmp(c->b[i].name, name->s, (size_t)name->len)) {
			if (c->b[i].file == c->fi)
				return c->b[i].cell;
			if (c->b[i].file < 0 && any < 0)
				any = c->b[i].cell;
		}
	return any;
}

static int fn_find(struct ctx *c, const struct flow_tok *name)
{
	int any = -1;
	if (!c->hf.cap)
		return -1;
	for (int i = hidx_first(&c->hf, name); i >= 0; i = c->hf.next[i]) {
		const struct fn *f = &c->fns[i];
		if (f->name->len != name->len || memcmp(f->name->s, name->s, (size_t)name->len))
			continue;
		if (f->fi == c->fi)
			return (int)i;
		if (!f->is_static && any < 0)
			any = (int)i;
	}
	return any;
}

static const char *const type_words[] = {
	"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
	"bool", "const", "volatile", "static", "extern", "register", "auto", "struct", "union",
	"enum", "inline", "restrict", "__restrict", "size_t", "ssize_t", "wchar_t", "FILE",
	"va_list", "__inline", "_Atomic", "_Thread_local", "__thread", NULL
};

static bool is_typedef_name(struct ctx *c, const struct flow_tok *t)
{
	if (t->k != FT_ID)
		return false;
	if (tok_is_name(t, type_words))
		return true;
	if (t->len > 2 && t->s[t->len - 2] == '_' && t->s[t->len - 1] == 't')
		return true;
	for (size_t i = 0; i < c->ntypedefs; i++)
		if ((int)strlen(c->typedefs[i]) == t->len && !memcmp(c->typedefs[i], t->s, (size_t)t->len))
			return true;
	return false;
}

/* Whether a declaration starts here. */
static bool at_decl(struct ctx *c)
{
	const struct flow_tok *t = T(c), *u = TA(c, 1);
	if (t->k != FT_ID)
		return false;
	if (is_typedef_name(c, t))
		return !flow_is(u, "(") || flow_is(TA(c, 2), "*");
	if (lookup(c, t) >= 0 || fn_find(c, t) >= 0)
		return false;
	if (u->k == FT_ID)
		return true;
	const struct flow_tok *w = TA(c, 2);
	return flow_is(u, "*") && w->k == FT_ID &&
	       (flow_is(TA(c, 3), "=") || flow_is(TA(c, 3), ";") || flow_is(TA(c, 3), ",") ||
		flow_is(TA(c, 3), "["));
}

/* ---- findings ---- */

static void report(struct ctx *c, int line, const char *cwe, const char *rule, int src,
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

static int src_add(struct ctx *c, const char *what, int line)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->srcs[i].fi == c->fi && c->srcs[i].line == line && !strcmp(c->srcs[i].what, what))
			return (int)i + 1;
	c->srcs = xrealloc(c->srcs, (c->nsrc + 1) * sizeof(*c->srcs));
	c->srcs[c->nsrc++] = (struct src){ c->fi, line, xstrdup(what) };
	return (int)c->nsrc;
}

static int src_tok(struct ctx *c, const struct flow_tok *name, int line)
{
	char what[64];
	snprintf(what, sizeof(what), "%.*s()", name->len > 40 ? 40 : name->len, name->s);
	return src_add(c, what, line);
}

/* ---- expressions ---- */

struct ev {
	struct val v;
	int nl, l[MAXP]; /* the cells it designates (an lvalue) */
	bool strong;     /* one cell, written whole */
};

static struct ev e_comma(struct ctx *c);
static struct ev e_assign(struct ctx *c);
static struct ev e_unary(struct ctx *c);
static void stmt(struct ctx *c);
static void block(struct ctx *c);

static struct ev ev_of(struct val v)
{
	struct ev e;
	memset(&e, 0, sizeof(e));
	e.v = v;
	return e;
}

/* An lvalue designating cells ps (read now). */
static struct ev ev_cells(struct ctx *c, const int *ps, int n, bool strong, bool taint, int src)
{
	struct ev e = ev_of((struct val){ 0 });
	bool first = true;
	for (int i = 0; i < n; i++) {
		e.l[e.nl++] = ps[i];
		struct val w = cell_val(c, ps[i]);
		e.v = first ? w : val_join(e.v, &w);
		first = false;
	}
	if (taint && !e.v.taint) {
		e.v.taint = true;
		e.v.src = src;
	}
	e.strong = strong && n == 1;
	return e;
}

static struct ev call(struct ctx *c, const struct flow_tok *name, int fnv, int line);

static bool at_cast(struct ctx *c)
{
	if (!at(c, "("))
		return false;
	const struct flow_tok *t = TA(c, 1);
	if (!is_typedef_name(c, t) && !(t->k == FT_ID && lookup(c, t) < 0 && fn_find(c, t) < 0 &&
					(flow_is(TA(c, 2), "*") || flow_is(TA(c, 2), ")")) &&
					!(flow_is(TA(c, 2), ")") && TA(c, 3)->k != FT_ID &&
					  !flow_is(TA(c, 3), "(") && TA(c, 3)->k != FT_NUM &&
					  TA(c, 3)->k != FT_STR)))
		return false;
	return true;
}

static struct ev e_primary(struct ctx *c)
{
	const struct flow_tok *t = T(c);
	if (t->k == FT_NUM) {
		c->i++;
		return ev_of((struct val){ .known = true, .cint = strtol(t->s, NULL, 0) });
	}
	if (t->k == FT_CHR) {
		c->i++;
		return ev_of((struct val){ .known = true, .cint = t->len > 2 ? (unsigned char)t->s[1] : 0 });
	}
	if (t->k == FT_STR) {
		while (T(c)->k == FT_STR)
			c->i++;
		return ev_of((struct val){ .lit = true });
	}
	if (eat(c, "(")) {
		if (at(c, "{")) { /* a statement expression */
			block(c);
			eat(c, ")");
			return ev_of((struct val){ 0 });
		}
		struct ev e = e_comma(c);
		eat(c, ")");
		return e;
	}
	if (t->k == FT_ID) {
		c->i++;
		if (flow_is(t, "sizeof") || flow_is(t, "_Alignof") || flow_is(t, "alignof")) {
			if (at(c, "("))
				skip_balanced(c);
			else
				e_unary(c);
			return ev_of((struct val){ 0 });
		}
		int cell = lookup(c, t);
		if (at(c, "("))
			return call(c, t, cell >= 0 ? c->s.c[cell].v.fn : 0, t->line);
		if (cell >= 0) {
			if (c->s.c[cell].array) {
				struct ev e = ev_of((struct val){ .np = 1, .p = { cell } });
				e.l[0] = cell;
				e.nl = 1;
				return e;
			}
			return ev_cells(c, &cell, 1, true, false, 0);
		}
		int f = fn_find(c, t);
		if (f >= 0)
			return ev_of((struct val){ .fn = f + 1 });
		if (flow_is(t, "NULL"))
			return ev_of((struct val){ .known = true, .cint = 0 });
		return ev_of((struct val){ 0 });
	}
	c->i++; /* something else: skipped */
	return ev_of((struct val){ 0 });
}

static struct ev e_postfix(struct ctx *c)
{
	struct ev e = e_primary(c);
	for (;;) {
		const struct flow_tok *t = T(c);
		if (flow_is(t, "[")) {
			c->i++;
			e_comma(c);
			eat(c, "]");
			e = ev_cells(c, e.v.p, e.v.np, false, e.v.taint, e.v.src);
		} else if (flow_is(t, ".")) {
			c->i += 2;
			e.strong = false;
		} else if (flow_is(t, "->")) {
			c->i += 2;
			e = ev_cells(c, e.v.p, e.v.np, false, e.v.taint, e.v.src);
		} else if (flow_is(t, "(")) {
			e = call(c, t, e.v.fn, t->line);
		} else if (flow_is(t, "++") || flow_is(t, "--")) {
			c->i++;
			e.v.known = false;
		} else {
			return e;
		}
	}
}

static struct ev e_unary(struct ctx *c)
{
	const struct flow_tok *t = T(c);
	if (flow_is(t, "&")) {
		c->i++;
		struct ev x = e_unary(c);
		struct val v = { 0 };
		for (int i = 0; i < x.nl; i++)
			val_addp(&v, x.l[i]);
		if (!x.nl)
			v = x.v;
		return ev_of(v);
	}
	if (flow_is(t, "*")) {
		c->i++;
		struct ev x = e_unary(c);
		if (x.v.fn)
			return x;
		return ev_cells(c, x.v.p, x.v.np, true, x.v.taint, x.v.src);
	}
	if (flow_is(t, "!") || flow_is(t, "-") || flow_is(t, "~") || flow_is(t, "+")) {
		c->i++;
		struct ev x = e_unary(c);
		struct val v = { .taint = x.v.taint, .src = x.v.src, .known = x.v.known };
		v.cint = flow_is(t, "!") ? !x.v.cint : flow_is(t, "-") ? -x.v.cint
			 : flow_is(t, "~") ? ~x.v.cint : x.v.cint;
		return ev_of(v);
	}
	if (flow_is(t, "++") || flow_is(t, "--")) {
		c->i++;
		struct ev x = e_unary(c);
		x.v.known = false;
		return x;
	}
	if (at_cast(c)) {
		skip_balanced(c);
		if (at(c, "{")) { /* a compound literal */
			skip_balanced(c);
			return ev_of((struct val){ 0 });
		}
		struct ev x = e_unary(c);
		x.nl = 0;
		return x;
	}
	return e_postfix(c);
}

static int bin_prec(const struct flow_tok *t)
{
	static const struct {
		const char *op;
		int prec;
	} ops[] = { { "*", 13 }, { "/", 13 }, { "%", 13 }, { "+", 12 }, { "-", 12 }, { "<<", 11 },
		    { ">>", 11 }, { "<", 10 }, { ">", 10 }, { "<=", 10 }, { ">=", 10 }, { "==", 9 },
		    { "!=", 9 }, { "&", 8 }, { "^", 7 }, { "|", 6 }, { "&&", 5 }, { "||", 4 } };
	if (t->k != FT_PUNCT)
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (flow_is(t, ops[i].op))
			return ops[i].prec;
	return 0;
}

static long fold(const struct flow_tok *op, long l, long r)
{
	if (flow_is(op, "*")) return l * r;
	if (flow_is(op, "/")) return r ? l / r : 0;
	if (flow_is(op, "%")) return r ? l % r : 0;
	if (flow_is(op, "+")) return l + r;
	if (flow_is(op, "-")) return l - r;
	if (flow_is(op, "<<")) return r >= 0 && r < 32 ? l << r : 0;
	if (flow_is(op, ">>")) return r >= 0 && r < 63 ? l >> r : 0;
	if (flow_is(op, "<")) return l < r;
	if (flow_is(op, ">")) return l > r;
	if (flow_is(op, "<=")) return l <= r;
	if (flow_is(op, ">=")) return l >= r;
	if (flow_is(op, "==")) return l == r;
	if (flow_is(op, "!=")) return l != r;
	if (flow_is(op, "&")) return l & r;
	if (flow_is(op, "^")) return l ^ r;
	if (flow_is(op, "|")) return l | r;
	if (flow_is(op, "&&")) return l && r;
	return l || r;
}

static struct ev e_bin(struct ctx *c, int min)
{
	struct ev l = e_unary(c);
	for (;;) {
		const struct flow_tok *op = T(c);
		int pr = bin_prec(op);
		if (!pr || pr < min)
			return l;
		c->i++;
		struct ev r = e_bin(c, pr + 1);
		struct val v = { 0 };
		v.taint = l.v.taint || r.v.taint;
		v.src = l.v.taint ? l.v.src : r.v.src;
		if (flow_is(op, "+") || flow_is(op, "-")) { /* pointer arithmetic */
			for (int i = 0; i < l.v.np; i++)
				val_addp(&v, l.v.p[i]);
			for (int i = 0; i < r.v.np && flow_is(op, "+"); i++)
				val_addp(&v, r.v.p[i]);
		}
		v.known = l.v.known && r.v.known;
		if (v.known)
			v.cint = fold(op, l.v.cint, r.v.cint);
		if (pr <= 10) { /* comparisons and logic: a truth value */
			v.np = 0;
			v.taint = false;
		}
		l = ev_of(v);
	}
}

static struct ev e_cond(struct ctx *c)
{
	struct ev e = e_bin(c, 4);
	if (!eat(c, "?"))
		return e;
	struct ev a = e_comma(c);
	eat(c, ":");
	struct ev b = e_cond(c);
	if (e.v.known)
		return e.v.cint ? a : b;
	return ev_of(val_join(a.v, &b.v));
}

static bool assign_op(const struct flow_tok *t)
{
	static const char *const ops[] = { "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
					   "<<=", ">>=", NULL };
	return t->k == FT_PUNCT && tok_is_name(t, ops);
}

static void assign_to(struct ctx *c, const struct ev *l, struct val v, bool strong)
{
	for (int i = 0; i < l->nl; i++)
		cell_set(c, l->l[i], &v, strong && l->strong);
}

static struct ev e_assign(struct ctx *c)
{
	struct ev l = e_cond(c);
	const struct flow_tok *op = T(c);
	if (!assign_op(op))
		return l;
	c->i++;
	struct ev r = e_assign(c);
	bool plain = flow_is(op, "=");
	struct val v = r.v;
	if (!plain)
		v = val_join(l.v, &r.v), v.known = false;
	assign_to(c, &l, v, plain);
	return ev_of(v);
}

static struct ev e_comma(struct ctx *c)
{
	struct ev e = e_assign(c);
	while (eat(c, ","))
		e = e_assign(c);
	return e;
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
static int deep_src(struct ctx *c, const struct val *v)
{
	int s = content_src(c, v);
	for (int i = 0; i < v->np && !s; i++) {
		struct val w = cell_val(c, v->p[i]);
		s = content_src(c, &w);
	}
	return s;
}

static void sinks(struct ctx *c, const struct flow_tok *name, const struct ev *a, int na, int line)
{
	for (size_t k = 0; k < sizeof(cmd_sinks) / sizeof(cmd_sinks[0]); k++) {
		if (!flow_is(name, cmd_sinks[k].name))
			continue;
		for (int i = cmd_sinks[k].arg; i < na; i++) {
			int s = deep_src(c, &a[i].v);
			if (s) {
				report(c, line, "CWE-78", "tainted-command", s, cmd_sinks[k].name, i + 1);
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
		int s = content_src(c, &a[i].v);
		if (s)
			report(c, line, "CWE-134", "tainted-format", s, fmt_sinks[k].name, i + 1);
	}
}

/* Taints the cells v points to (or, with none, nothing). */
static void taint_into(struct ctx *c, const struct val *v, int src)
{
	struct val t = tainted(src);
	for (int i = 0; i < v->np; i++)
		cell_set(c, v->p[i], &t, false);
}

/* Copies the content of from into the cells to points to. */
static void copy_into(struct ctx *c, const struct val *to, const struct val *from, bool strong)
{
	int s = content_src(c, from);
	struct val w = s ? tainted(s > 0 ? s : 0) : (struct val){ 0 };
	for (int i = 0; i < to->np; i++)
		cell_write(c, to->p[i], &w, strong && to->np == 1, true);
}

static struct val call_user(struct ctx *c, int fi, struct ev *a, int na);

/* A call of name (or of the function fnv - 1) at '(' (c->i). */
static struct ev call(struct ctx *c, const struct flow_tok *name, int fnv, int line)
{
	struct ev a[MAXARGS];
	int na = 0;
	c->i++; /* ( */
	while (!at(c, ")") && !at_end(c)) {
		struct ev x = e_assign(c);
		if (na < MAXARGS)
			a[na++] = x;
		if (!eat(c, ","))
			break;
	}
	eat(c, ")");
	int f = fnv ? fnv - 1 : name->k == FT_ID ? fn_find(c, name) : -1;
	if (fnv)
		name = c->fns[f].name;
	sinks(c, name, a, na, line);
	struct val r = { 0 };
	if (f >= 0) {
		r = call_user(c, f, a, na);
	} else if (name->k != FT_ID) {
		/* a call through an expression: nothing known */
	} else if (tok_is_name(name, src_into0) && na > 0) {
		int s = src_tok(c, name, line);
		taint_into(c, &a[0].v, s);
		r = a[0].v;
	} else if (tok_is_name(name, src_into1) && na > 1) {
		taint_into(c, &a[1].v, src_tok(c, name, line));
	} else if (tok_is_name(name, src_ret)) {
		r = tainted(src_tok(c, name, line));
	} else if ((flow_is(name, "getline") || flow_is(name, "getdelim")) && na > 0) {
		taint_into(c, &a[0].v, src_tok(c, name, line));
	} else if ((flow_is(name, "scanf") || flow_is(name, "fscanf") || flow_is(name, "wscanf") ||
		    flow_is(name, "fwscanf")) && na > 0) {
		int s = src_tok(c, name, line);
		for (int i = flow_is(name, "scanf") || flow_is(name, "wscanf") ? 1 : 2; i < na; i++)
			taint_into(c, &a[i].v, s);
	} else if (flow_is(name, "sscanf") && na > 1) {
		for (int i = 2; i < na; i++)
			copy_into(c, &a[i].v, &a[0].v, false);
	} else if (tok_is_name(name, copy_strong) && na > 1) {
		copy_into(c, &a[0].v, &a[1].v, true);
		r = a[0].v;
	} else if (tok_is_name(name, copy_weak) && na > 1) {
		copy_into(c, &a[0].v, &a[1].v, false);
		r = a[0].v;
	} else if ((flow_is(name, "sprintf") || flow_is(name, "snprintf") ||
		    flow_is(name, "vsprintf") || flow_is(name, "vsnprintf")) && na > 1) {
		for (int i = 1; i < na; i++)
			copy_into(c, &a[0].v, &a[i].v, false);
	} else if (tok_is_name(name, ptr_into) && na > 0) {
		r = a[0].v;
		r.lit = false;
	} else if (tok_is_name(name, to_num) && na > 0) {
		int s = content_src(c, &a[0].v);
		r = s ? tainted(s > 0 ? s : 0) : (struct val){ 0 };
	} else if (tok_is_name(name, alloc_fns)) {
		int cell = cell_new(c, true);
		r = (struct val){ .np = 1, .p = { cell } };
		if ((flow_is(name, "strdup") || flow_is(name, "strndup") || flow_is(name, "wcsdup") ||
		     flow_is(name, "realloc")) && na > 0)
			copy_into(c, &r, &a[0].v, true);
	}
	return ev_of(r);
}

/* Drops the cells from n on; pointers to them keep their taint. */
static struct val store_cut(struct ctx *c, int n, struct val v)
{
	for (int i = 0; i <= c->s.n; i++) {
		struct val *x = i < c->s.n ? &c->s.c[i].v : &v;
		if (i < c->s.n && i >= n)
			continue;
		int k = 0;
		for (int j = 0; j < x->np; j++) {
			if (x->p[j] < n) {
				x->p[k++] = x->p[j];
			} else if (x->p[j] < c->s.n && c->s.c[x->p[j]].v.taint && !x->taint) {
				x->taint = true;
				x->src = c->s.c[x->p[j]].v.src;
			}
		}
		x->np = k;
	}
	c->s.n = n < c->s.n ? n : c->s.n;
	return v;
}

static struct val call_user(struct ctx *c, int fi, struct ev *a, int na)
{
	struct fn *f = &c->fns[fi];
	if (f->on_stack || c->depth >= FLOW_DEPTH || c->steps > FLOW_BUDGET)
		return (struct val){ 0 };
	/* a call that can neither see nor pass outside input is skipped */
	bool any = f->has_src;
	for (int i = 0; i < na && !any; i++)
		any = deep_src(c, &a[i].v) != 0;
	for (size_t i = 0; i < c->ngw && !any; i++)
		any = deep_src(c, &c->s.c[c->gw[i]].v) != 0;
	if (!any)
		return (struct val){ 0 };
	const struct flow_tok *st = c->t;
	size_t si = c->i, sn = c->n;
	int sfi = c->fi;
	struct frame *sfr = c->fr;
	struct store *sbrk = c->brk, *scont = c->cont;
	int ncell = c->s.n;
	struct frame fr = { .bbase = c->nb };
	fr.rets.dead = true;
	c->fi = f->fi;
	c->t = c->files[f->fi].t;
	c->n = c->files[f->fi].n;
	for (int i = 0; i < f->nparams; i++) {
		int cell = cell_new(c, false);
		struct val v = i < na ? a[i].v : (struct val){ 0 };
		/* a pointer from nowhere known (the entry's own parameters)
		 * points to a buffer of its own, so that what is read into it
		 * is followed */
		if (!v.np && !v.fn && !v.known && !v.lit) {
			int obj = cell_new(c, true);
			val_addp(&v, obj);
		}
		v.known = false;
		c->s.c[cell].v = v;
		bind_add(c, f->param[i], cell, 0);
	}
	c->fr = &fr;
	c->brk = c->cont = NULL;
	f->on_stack = true;
	c->depth++;
	c->i = f->body;
	block(c);
	c->depth--;
	f->on_stack = false;
	store_join(&fr.rets, &c->s);
	if (!fr.rets.dead)
		store_copy(&c->s, &fr.rets);
	c->s.dead = false;
	store_free(&fr.rets);
	struct val r = store_cut(c, ncell, fr.ret);
	c->nb = fr.bbase;
	c->fr = sfr;
	c->brk = sbrk;
	c->cont = scont;
	c->fi = sfi;
	c->t = st;
	c->n = sn;
	c->i = si;
	return r;
}

/* ---- declarations ---- */

static void initializer(struct ctx *c, int cell, bool keep_const)
{
	if (at(c, "{")) {
		c->i++;
		while (!at(c, "}") && !at_end(c)) {
			if (at(c, ".") || at(c, "[")) { /* a designator */
				while (!at(c, "=") && !at(c, ",") && !at(c, "}") && !at_end(c))
					c->i++;
				eat(c, "=");
			}
			if (at(c, "{")) {
				initializer(c, cell, false);
			} else {
				struct ev e = e_assign(c);
				cell_set(c, cell, &e.v, false);
			}
			if (!eat(c, ","))
				break;
		}
		eat(c, "}");
		return;
	}
	struct ev e = e_assign(c);
	struct val v = e.v;
	if (!keep_const)
		v.known = false;
	cell_set(c, cell, &v, true);
}

/* A declaration (local, or global when file >= -1 is given as the
 * binding's file), to its ';'. */
static void decl(struct ctx *c, bool global)
{
	bool is_const = false, is_static = false, is_typedef = false;
	for (;;) {
		const struct flow_tok *t = T(c);
		if (flow_is(t, "struct") || flow_is(t, "union") || flow_is(t, "enum")) {
			c->i++;
			if (T(c)->k == FT_ID)
				c->i++;
			if (at(c, "{"))
				skip_balanced(c);
			continue;
		}
		if (flow_is(t, "__attribute__") || flow_is(t, "__declspec")) {
			c->i++;
			if (at(c, "("))
				skip_balanced(c);
			continue;
		}
		if (flow_is(t, "typedef")) {
			is_typedef = true;
			c->i++;
			continue;
		}
		if (t->k != FT_ID || !(is_typedef_name(c, t) || TA(c, 1)->k == FT_ID ||
				       (flow_is(TA(c, 1), "*") && lookup(c, t) < 0)))
			break;
		is_const |= flow_is(t, "const");
		is_static |= flow_is(t, "static");
		c->i++;
	}
	while (!at_end(c) && !at(c, ";") && !at(c, "}")) {
		const struct flow_tok *name = NULL;
		bool fnptr = false, proto = false, array = false;
		while (eat(c, "*") || eat(c, "const") || eat(c, "restrict") || eat(c, "volatile"))
			;
		if (at(c, "(")) { /* (*name)(...) or (name) */
			c->i++;
			while (eat(c, "*"))
				;
			if (T(c)->k == FT_ID)
				name = T(c), c->i++;
			while (!at(c, ")") && !at_end(c))
				c->i++;
			eat(c, ")");
			fnptr = at(c, "(");
		} else if (T(c)->k == FT_ID) {
			name = T(c);
			c->i++;
		}
		if (at(c, "(")) {
			proto = !fnptr;
			skip_balanced(c);
		}
		while (at(c, "[")) {
			array = true;
			skip_balanced(c);
		}
		while (at(c, "__attribute__") || at(c, "__asm__") || at(c, "asm")) {
			c->i++;
			if (at(c, "("))
				skip_balanced(c);
		}
		if (is_typedef && name) {
			c->typedefs = xrealloc(c->typedefs, (c->ntypedefs + 1) * sizeof(*c->typedefs));
			c->typedefs[c->ntypedefs++] = xstrndup(name->s, (size_t)name->len);
		} else if (name && !proto) {
			/* a global declared again (extern here, defined there): one cell */
			int cell = -1;
			for (size_t i = 0; global && !is_static && i < c->nb && cell < 0; i++)
				if (c->b[i].file < 0 && c->b[i].len == name->len &&
				    !memcmp(c->b[i].name, name->s, (size_t)name->len))
					cell = c->b[i].cell;
			if (cell < 0) {
				cell = cell_new(c, array);
				bind_add(c, name, cell, global ? (is_static ? c->fi : -1) : 0);
			}
			if (eat(c, "="))
				initializer(c, cell, !global || is_const);
		} else if (eat(c, "=")) {
			e_assign(c);
		}
		if (at(c, "{") && proto) /* a function body where none was expected */
			skip_balanced(c);
		if (!eat(c, ","))
			break;
	}
	/* anything left of a declaration the parser does not follow */
	while (!at_end(c) && !at(c, ";") && !at(c, "}")) {
		if (at(c, "(") || at(c, "[") || at(c, "{"))
			skip_balanced(c);
		else
			c->i++;
	}
	eat(c, ";");
}

/* ---- statements ---- */

/* A parenthesized condition: its value (known when it folds). */
static struct val cond(struct ctx *c)
{
	if (!eat(c, "("))
		return (struct val){ 0 };
	struct ev e = e_comma(c);
	eat(c, ")");
	return e.v;
}

static void block(struct ctx *c)
{
	size_t nb = c->nb;
	c->i++; /* { */
	while (!at(c, "}") && !at_end(c))
		stmt(c);
	eat(c, "}");
	c->nb = nb;
}

/* A loop's body (the cursor on it), once; breaks and continues joined. */
static void loop_body(struct ctx *c, struct store *after_breaks)
{
	struct store *sb = c->brk, *sc = c->cont;
	struct store cont = { .dead = true };
	after_breaks->dead = true;
	c->brk = after_breaks;
	c->cont = &cont;
	stmt(c);
	store_join(&c->s, &cont);
	store_free(&cont);
	c->brk = sb;
	c->cont = sc;
}

static void stmt(struct ctx *c)
{
	if (++c->steps > FLOW_BUDGET * 4) { /* out of budget: the rest is skipped */
		c->i = c->n;
		return;
	}
	const struct flow_tok *t = T(c);
	size_t start = c->i;
	if (flow_is(t, "{")) {
		block(c);
	} else if (flow_is(t, ";")) {
		c->i++;
	} else if (flow_is(t, "if")) {
		c->i++;
		struct val v = cond(c);
		struct store pre = { 0 };
		store_copy(&pre, &c->s);
		if (v.known && !v.cint)
			c->s.dead = true;
		stmt(c);
		struct store then = { 0 };
		store_copy(&then, &c->s);
		store_copy(&c->s, &pre);
		if (v.known && v.cint)
			c->s.dead = true;
		if (eat(c, "else"))
			stmt(c);
		store_join(&c->s, &then);
		store_free(&pre);
		store_free(&then);
	} else if (flow_is(t, "while") || flow_is(t, "for") || flow_is(t, "switch")) {
		bool is_for = flow_is(t, "for"), is_switch = flow_is(t, "switch");
		c->i++;
		struct val v = { 0 };
		size_t nb = c->nb;
		if (is_for) {
			eat(c, "(");
			if (at_decl(c))
				decl(c, false);
			else
				e_comma(c), eat(c, ";");
			if (at(c, ";"))
				v = (struct val){ .known = true, .cint = 1 };
			else
				v = e_comma(c).v;
			eat(c, ";");
			if (!at(c, ")"))
				e_comma(c);
			eat(c, ")");
		} else {
			v = cond(c);
		}
		struct store pre = { 0 }, brk = { 0 };
		store_copy(&pre, &c->s);
		if (!is_switch && v.known && !v.cint)
			c->s.dead = true;
		loop_body(c, &brk);
		/* the loop left by its condition (not a constant true), or the
		 * switch's end, or a switch with no case taken */
		if (!is_switch && v.known && v.cint)
			c->s.dead = true;
		store_join(&c->s, &brk);
		if (is_switch || !(v.known && v.cint))
			store_join(&c->s, &pre);
		c->s.dead = false;
		store_free(&pre);
		store_free(&brk);
		c->nb = nb;
	} else if (flow_is(t, "do")) {
		c->i++;
		struct store brk = { 0 };
		loop_body(c, &brk);
		if (eat(c, "while"))
			cond(c);
		eat(c, ";");
		store_join(&c->s, &brk);
		store_free(&brk);
		c->s.dead = false;
	} else if (flow_is(t, "case") || flow_is(t, "default")) {
		/* a case is entered from the switch too: the store before the
		 * switch is joined at its end, which stands for it here */
		while (!at(c, ":") && !at_end(c))
			c->i++;
		eat(c, ":");
		c->s.dead = false;
	} else if (flow_is(t, "return")) {
		c->i++;
		struct val v = { 0 };
		if (!at(c, ";"))
			v = e_comma(c).v;
		eat(c, ";");
		if (c->fr && !c->s.dead) {
			c->fr->ret = c->fr->has_ret ? val_join(c->fr->ret, &v) : v;
			c->fr->has_ret = true;
			store_join(&c->fr->rets, &c->s);
		}
		c->s.dead = true;
	} else if (flow_is(t, "break") || flow_is(t, "continue")) {
		struct store *to = flow_is(t, "break") ? c->brk : c->cont;
		c->i++;
		eat(c, ";");
		if (to) {
			store_join(to, &c->s);
			c->s.dead = true;
		}
	} else if (flow_is(t, "goto")) {
		c->i += 2;
		eat(c, ";");
	} else if (t->k == FT_ID && flow_is(TA(c, 1), ":") && !flow_is(TA(c, 2), ":")) {
		c->i += 2; /* a label */
		c->s.dead = false;
	} else if (flow_is(t, "typedef") || at_decl(c)) {
		decl(c, false);
	} else if (flow_is(t, "asm") || flow_is(t, "__asm__")) {
		while (!at(c, ";") && !at_end(c))
			c->i++;
		eat(c, ";");
	} else {
		e_comma(c);
		eat(c, ";");
	}
	if (c->i == start) /* nothing understood: step over it */
		c->i++;
}

/* ---- the files' functions and globals ---- */

static bool is_source_name(const struct flow_tok *t)
{
	return tok_is_name(t, src_into0) || tok_is_name(t, src_into1) || tok_is_name(t, src_ret) ||
	       flow_is(t, "getline") || flow_is(t, "getdelim") || flow_is(t, "scanf") ||
	       flow_is(t, "fscanf") || flow_is(t, "wscanf") || flow_is(t, "fwscanf");
}

/* The functions and global declarations of file fi. */
static void file_scan(struct ctx *c, int fi, bool globals)
{
	const struct flow_file *f = &c->files[fi];
	c->fi = fi;
	c->t = f->t;
	c->n = f->n;
	c->i = 0;
	while (!at_end(c)) {
		size_t start = c->i;
		int d = 0;
		size_t rp = 0;
		bool body = false, eq = false;
		/* to the end of the item: a ';' or a body at depth 0 */
		while (!at_end(c)) {
			const struct flow_tok *t = T(c);
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
				skip_balanced(c);
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
			skip_balanced(c);
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
					} else if (t->k == FT_ID && !tok_is_name(t, type_words) &&
						   (!pd || flow_is(&c->t[j - 1], "*")))
						last = t;
				}
				for (size_t j = b; j < c->i; j++)
					if (c->t[j].k == FT_ID && flow_is(&c->t[j + 1], "(") &&
					    is_source_name(&c->t[j]))
						fn->has_src = true;
				if (flow_is(fn->name, "main") && fn->nparams >= 2)
					fn->has_src = true;
			}
			continue;
		}
		if (globals) {
			c->i = start;
			decl(c, true);
			if (c->i <= start)
				c->i = start + 1;
		} else {
			eat(c, ";");
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
				int g = fn_find(c, &t[j]);
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
	hidx_build(&c.hg, c.nglobal, bind_name_at, &c);
	for (size_t i = 0; i < n; i++)
		file_scan(&c, (int)i, false);
	hidx_build(&c.hf, c.nfns, fn_name_at, &c);
	fns_propagate(&c);
	store_copy(&c.init, &c.s);
	c.ninit = c.init.n;
	c.gmark = xcalloc((size_t)c.ninit + 1, sizeof(*c.gmark));
	for (size_t k = 0; k < c.nfns; k++) {
		struct fn *f = &c.fns[k];
		if (!f->has_src)
			continue;
		store_copy(&c.s, &c.init);
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
			args[1].v = tainted(src_add(&c, "the command line (argv)", f->name->line));
		/* from its entry: a frame of its own, untainted parameters */
		f->has_src = true;
		c.fr = NULL;
		call_user(&c, (int)k, args, na);
	}
	store_free(&c.s);
	store_free(&c.init);
	for (size_t i = 0; i < c.nsrc; i++)
		free(c.srcs[i].what);
	free(c.srcs);
	free(c.gmark);
	free(c.gw);
	hidx_free(&c.hf);
	hidx_free(&c.hg);
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
