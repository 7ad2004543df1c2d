/* review.flow: madf's own finder. An abstract interpreter over the tokens
 * of each function (agents/review_flow_lex.c: comments stripped,
 * directives applied, the file's macros expanded) that follows data from
 * outside input to the calls where it does harm:
 *   - sources: recv, recvfrom, read, fgets, gets, fread, getline, scanf,
 *     fscanf, getenv, fgetc/getc/getchar, and main's argv;
 *   - CWE-78: a tainted string reaching system, popen or an exec* call;
 *   - CWE-134: a flow_tainted, non-literal format reaching the printf family.
 * The store maps each variable (and each buffer malloc returns) to a cell;
 * a value is flow_tainted, or points to cells (whose content may be tainted),
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/review_flow_priv.h"
#include "agents/review_priv.h"
#include "core/json_out.h"
#include "core/util.h"
#include "core/banned.h"

/* ---- tokens ---- */

const struct flow_tok *flow_cur(struct ctx *c)
{
	return &c->t[c->i < c->n ? c->i : c->n];
}

const struct flow_tok *flow_ahead(struct ctx *c, size_t k)
{
	return &c->t[c->i + k < c->n ? c->i + k : c->n];
}

bool flow_at(struct ctx *c, const char *s)
{
	return flow_is(flow_cur(c), s);
}

bool flow_eat(struct ctx *c, const char *s)
{
	if (!flow_at(c, s))
		return false;
	c->i++;
	return true;
}

bool flow_at_end(struct ctx *c)
{
	return c->i >= c->n;
}

/* From an opening bracket to just past its match (or the end). */
void flow_skip_balanced(struct ctx *c)
{
	int d = 0;
	do {
		const struct flow_tok *t = flow_cur(c);
		if (flow_is(t, "(") || flow_is(t, "[") || flow_is(t, "{"))
			d++;
		else if (flow_is(t, ")") || flow_is(t, "]") || flow_is(t, "}"))
			d--;
		c->i++;
	} while (d > 0 && !flow_at_end(c));
}

bool flow_tok_is_name(const struct flow_tok *t, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		if (flow_is(t, names[i]))
			return true;
	return false;
}

/* ---- values and the store ---- */

void flow_val_addp(struct val *v, int p)
{
	for (int i = 0; i < v->np; i++)
		if (v->p[i] == p)
			return;
	if (v->np < MAXP)
		v->p[v->np++] = p;
}

struct val flow_val_join(struct val a, const struct val *b)
{
	if (b->taint && !a.taint)
		a.src = b->src;
	a.taint |= b->taint;
	for (int i = 0; i < b->np; i++)
		flow_val_addp(&a, b->p[i]);
	if (!a.fn)
		a.fn = b->fn;
	a.known = a.known && b->known && a.cint == b->cint;
	a.lit = a.lit && b->lit;
	return a;
}

int flow_cell_new(struct ctx *c, bool array)
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

void flow_store_copy(struct store *d, const struct store *s)
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
void flow_store_join(struct store *d, const struct store *s)
{
	if (s->dead)
		return;
	if (d->dead) {
		flow_store_copy(d, s);
		return;
	}
	int n = d->n < s->n ? d->n : s->n;
	for (int i = 0; i < n; i++)
		d->c[i].v = flow_val_join(d->c[i].v, &s->c[i].v);
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

void flow_store_free(struct store *s)
{
	free(s->c);
	memset(s, 0, sizeof(*s));
}

struct val flow_cell_val(struct ctx *c, int p)
{
	return p >= 0 && p < c->s.n ? c->s.c[p].v : (struct val){ 0 };
}

/* strong: the cell's value replaced (an array's too: its content written
 * whole, as strcpy does); else joined. */
void flow_cell_write(struct ctx *c, int p, const struct val *v, bool strong, bool whole)
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
		x->v = flow_val_join(x->v, v);
}

void flow_cell_set(struct ctx *c, int p, const struct val *v, bool strong)
{
	flow_cell_write(c, p, v, strong, false);
}

/* The taint of what v is or points to (a string's characters): its
 * origin + 1, 0 when untainted. */
int flow_content_src(struct ctx *c, const struct val *v)
{
	if (v->taint)
		return v->src ? v->src : -1;
	for (int i = 0; i < v->np; i++) {
		struct val w = flow_cell_val(c, v->p[i]);
		if (w.taint)
			return w.src ? w.src : -1;
	}
	return 0;
}

struct val flow_tainted(int src)
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

void flow_hidx_build(struct hidx *h, size_t n, const struct flow_tok *(*name)(struct ctx *, size_t),
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

void flow_hidx_free(struct hidx *h)
{
	free(h->head);
	free(h->next);
}

static int hidx_first(const struct hidx *h, const struct flow_tok *t)
{
	return h->cap ? h->head[name_hash(t->s, t->len) % h->cap] : -1;
}

const struct flow_tok *flow_fn_name_at(struct ctx *c, size_t i)
{
	return c->fns[i].name;
}

const struct flow_tok *flow_bind_name_at(struct ctx *c, size_t i)
{
	static __thread struct flow_tok t;
	t = (struct flow_tok){ FT_ID, 0, c->b[i].len, c->b[i].name };
	return &t;
}

int flow_bind_add(struct ctx *c, const struct flow_tok *name, int cell, int file)
{
	if (c->nb == c->cb) {
		c->cb = c->cb ? c->cb * 2 : 128;
		c->b = xrealloc(c->b, c->cb * sizeof(*c->b));
	}
	c->b[c->nb++] = (struct bind){ name->s, name->len, cell, file };
	return cell;
}

static bool bind_is(const struct bind *b, const struct flow_tok *name)
{
	return b->len == name->len && !memcmp(b->name, name->s, (size_t)name->len);
}

/* A global binding i of name: this file's static one ends the search
 * (returns true with its cell in *cell); a shared one is kept in *any. */
static bool global_pick(const struct ctx *c, size_t i, int *any, int *cell)
{
	if (c->b[i].file == c->fi) {
		*cell = c->b[i].cell;
		return true;
	}
	if (c->b[i].file < 0 && *any < 0)
		*any = c->b[i].cell;
	return false;
}

/* The cell of a name: the frame's, then the globals (a static one of this
 * file first); -1 when unknown. */
int flow_lookup(struct ctx *c, const struct flow_tok *name)
{
	size_t base = c->fr ? c->fr->bbase : c->nglobal;
	for (size_t i = c->nb; i-- > base;)
		if (bind_is(&c->b[i], name))
			return c->b[i].cell;
	int any = -1, cell;
	if (c->hg.cap) {
		for (int i = hidx_first(&c->hg, name); i >= 0; i = c->hg.next[i])
			if (bind_is(&c->b[i], name) && global_pick(c, (size_t)i, &any, &cell))
				return cell;
		return any;
	}
	for (size_t i = c->nglobal; i-- > 0;)
		if (bind_is(&c->b[i], name) && global_pick(c, i, &any, &cell))
			return cell;
	return any;
}

int flow_fn_find(struct ctx *c, const struct flow_tok *name)
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

const char *const flow_type_words[] = {
	"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
	"bool", "const", "volatile", "static", "extern", "register", "auto", "struct", "union",
	"enum", "inline", "restrict", "__restrict", "size_t", "ssize_t", "wchar_t", "FILE",
	"va_list", "__inline", "_Atomic", "_Thread_local", "__thread", NULL
};

static bool is_typedef_name(struct ctx *c, const struct flow_tok *t)
{
	if (t->k != FT_ID)
		return false;
	if (flow_tok_is_name(t, flow_type_words))
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
	const struct flow_tok *t = flow_cur(c), *u = flow_ahead(c, 1);
	if (t->k != FT_ID)
		return false;
	if (is_typedef_name(c, t))
		return !flow_is(u, "(") || flow_is(flow_ahead(c, 2), "*");
	if (flow_lookup(c, t) >= 0 || flow_fn_find(c, t) >= 0)
		return false;
	if (u->k == FT_ID)
		return true;
	const struct flow_tok *w = flow_ahead(c, 2);
	return flow_is(u, "*") && w->k == FT_ID &&
	       (flow_is(flow_ahead(c, 3), "=") || flow_is(flow_ahead(c, 3), ";") || flow_is(flow_ahead(c, 3), ",") ||
		flow_is(flow_ahead(c, 3), "["));
}

/* ---- expressions ---- */

static struct ev e_comma(struct ctx *c);
static struct ev e_assign(struct ctx *c);
static struct ev e_unary(struct ctx *c);
static void stmt(struct ctx *c);

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
		struct val w = flow_cell_val(c, ps[i]);
		e.v = first ? w : flow_val_join(e.v, &w);
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
	if (!flow_at(c, "("))
		return false;
	const struct flow_tok *t = flow_ahead(c, 1);
	if (!is_typedef_name(c, t) && !(t->k == FT_ID && flow_lookup(c, t) < 0 && flow_fn_find(c, t) < 0 &&
					(flow_is(flow_ahead(c, 2), "*") || flow_is(flow_ahead(c, 2), ")")) &&
					!(flow_is(flow_ahead(c, 2), ")") && flow_ahead(c, 3)->k != FT_ID &&
					  !flow_is(flow_ahead(c, 3), "(") && flow_ahead(c, 3)->k != FT_NUM &&
					  flow_ahead(c, 3)->k != FT_STR)))
		return false;
	return true;
}

static struct ev e_primary(struct ctx *c)
{
	const struct flow_tok *t = flow_cur(c);
	if (t->k == FT_NUM) {
		c->i++;
		return ev_of((struct val){ .known = true, .cint = strtol(t->s, NULL, 0) });
	}
	if (t->k == FT_CHR) {
		c->i++;
		return ev_of((struct val){ .known = true, .cint = t->len > 2 ? (unsigned char)t->s[1] : 0 });
	}
	if (t->k == FT_STR) {
		while (flow_cur(c)->k == FT_STR)
			c->i++;
		return ev_of((struct val){ .lit = true });
	}
	if (flow_eat(c, "(")) {
		if (flow_at(c, "{")) { /* a statement expression */
			flow_block(c);
			flow_eat(c, ")");
			return ev_of((struct val){ 0 });
		}
		struct ev e = e_comma(c);
		flow_eat(c, ")");
		return e;
	}
	if (t->k == FT_ID) {
		c->i++;
		if (flow_is(t, "sizeof") || flow_is(t, "_Alignof") || flow_is(t, "alignof")) {
			if (flow_at(c, "("))
				flow_skip_balanced(c);
			else
				e_unary(c);
			return ev_of((struct val){ 0 });
		}
		int cell = flow_lookup(c, t);
		if (flow_at(c, "("))
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
		int f = flow_fn_find(c, t);
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
		const struct flow_tok *t = flow_cur(c);
		if (flow_is(t, "[")) {
			c->i++;
			e_comma(c);
			flow_eat(c, "]");
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
	const struct flow_tok *t = flow_cur(c);
	if (flow_is(t, "&")) {
		c->i++;
		struct ev x = e_unary(c);
		struct val v = { 0 };
		for (int i = 0; i < x.nl; i++)
			flow_val_addp(&v, x.l[i]);
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
		flow_skip_balanced(c);
		if (flow_at(c, "{")) { /* a compound literal */
			flow_skip_balanced(c);
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
		const struct flow_tok *op = flow_cur(c);
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
				flow_val_addp(&v, l.v.p[i]);
			for (int i = 0; i < r.v.np && flow_is(op, "+"); i++)
				flow_val_addp(&v, r.v.p[i]);
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
	if (!flow_eat(c, "?"))
		return e;
	struct ev a = e_comma(c);
	flow_eat(c, ":");
	struct ev b = e_cond(c);
	if (e.v.known)
		return e.v.cint ? a : b;
	return ev_of(flow_val_join(a.v, &b.v));
}

static bool assign_op(const struct flow_tok *t)
{
	static const char *const ops[] = { "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
					   "<<=", ">>=", NULL };
	return t->k == FT_PUNCT && flow_tok_is_name(t, ops);
}

static void assign_to(struct ctx *c, const struct ev *l, struct val v, bool strong)
{
	for (int i = 0; i < l->nl; i++)
		flow_cell_set(c, l->l[i], &v, strong && l->strong);
}

static struct ev e_assign(struct ctx *c)
{
	struct ev l = e_cond(c);
	const struct flow_tok *op = flow_cur(c);
	if (!assign_op(op))
		return l;
	c->i++;
	struct ev r = e_assign(c);
	bool plain = flow_is(op, "=");
	struct val v = r.v;
	if (!plain)
		v = flow_val_join(l.v, &r.v), v.known = false;
	assign_to(c, &l, v, plain);
	return ev_of(v);
}

static struct ev e_comma(struct ctx *c)
{
	struct ev e = e_assign(c);
	while (flow_eat(c, ","))
		e = e_assign(c);
	return e;
}

/* ---- calls ---- */



/* A call of name (or of the function fnv - 1) at '(' (c->i). */
static struct ev call(struct ctx *c, const struct flow_tok *name, int fnv, int line)
{
	struct ev a[MAXARGS];
	int na = 0;
	c->i++; /* ( */
	while (!flow_at(c, ")") && !flow_at_end(c)) {
		struct ev x = e_assign(c);
		if (na < MAXARGS)
			a[na++] = x;
		if (!flow_eat(c, ","))
			break;
	}
	flow_eat(c, ")");
	int f = fnv ? fnv - 1 : name->k == FT_ID ? flow_fn_find(c, name) : -1;
	if (fnv)
		name = c->fns[f].name;
	flow_sinks(c, name, a, na, line);
	struct val r = { 0 };
	if (f >= 0) {
		r = flow_call_user(c, f, a, na);
	} else if (name->k == FT_ID) {
		r = flow_lib_call(c, name, a, na, line);
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

struct val flow_call_user(struct ctx *c, int fi, struct ev *a, int na)
{
	struct fn *f = &c->fns[fi];
	if (f->on_stack || c->depth >= FLOW_DEPTH || c->steps > FLOW_BUDGET)
		return (struct val){ 0 };
	/* a call that can neither see nor pass outside input is skipped */
	bool any = f->has_src;
	for (int i = 0; i < na && !any; i++)
		any = flow_deep_src(c, &a[i].v) != 0;
	for (size_t i = 0; i < c->ngw && !any; i++)
		any = flow_deep_src(c, &c->s.c[c->gw[i]].v) != 0;
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
		int cell = flow_cell_new(c, false);
		struct val v = i < na ? a[i].v : (struct val){ 0 };
		/* a pointer from nowhere known (the entry's own parameters)
		 * points to a buffer of its own, so that what is read into it
		 * is followed */
		if (!v.np && !v.fn && !v.known && !v.lit) {
			int obj = flow_cell_new(c, true);
			flow_val_addp(&v, obj);
		}
		v.known = false;
		c->s.c[cell].v = v;
		flow_bind_add(c, f->param[i], cell, 0);
	}
	c->fr = &fr;
	c->brk = c->cont = NULL;
	f->on_stack = true;
	c->depth++;
	c->i = f->body;
	flow_block(c);
	c->depth--;
	f->on_stack = false;
	flow_store_join(&fr.rets, &c->s);
	if (!fr.rets.dead)
		flow_store_copy(&c->s, &fr.rets);
	c->s.dead = false;
	flow_store_free(&fr.rets);
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
	if (flow_at(c, "{")) {
		c->i++;
		while (!flow_at(c, "}") && !flow_at_end(c)) {
			if (flow_at(c, ".") || flow_at(c, "[")) { /* a designator */
				while (!flow_at(c, "=") && !flow_at(c, ",") && !flow_at(c, "}") && !flow_at_end(c))
					c->i++;
				flow_eat(c, "=");
			}
			if (flow_at(c, "{")) {
				initializer(c, cell, false);
			} else {
				struct ev e = e_assign(c);
				flow_cell_set(c, cell, &e.v, false);
			}
			if (!flow_eat(c, ","))
				break;
		}
		flow_eat(c, "}");
		return;
	}
	struct ev e = e_assign(c);
	struct val v = e.v;
	if (!keep_const)
		v.known = false;
	flow_cell_set(c, cell, &v, true);
}

/* A declaration (local, or global when file >= -1 is given as the
 * binding's file), to its ';'. */
void flow_decl(struct ctx *c, bool global)
{
	bool is_const = false, is_static = false, is_typedef = false;
	for (;;) {
		const struct flow_tok *t = flow_cur(c);
		if (flow_is(t, "struct") || flow_is(t, "union") || flow_is(t, "enum")) {
			c->i++;
			if (flow_cur(c)->k == FT_ID)
				c->i++;
			if (flow_at(c, "{"))
				flow_skip_balanced(c);
			continue;
		}
		if (flow_is(t, "__attribute__") || flow_is(t, "__declspec")) {
			c->i++;
			if (flow_at(c, "("))
				flow_skip_balanced(c);
			continue;
		}
		if (flow_is(t, "typedef")) {
			is_typedef = true;
			c->i++;
			continue;
		}
		if (t->k != FT_ID || !(is_typedef_name(c, t) || flow_ahead(c, 1)->k == FT_ID ||
				       (flow_is(flow_ahead(c, 1), "*") && flow_lookup(c, t) < 0)))
			break;
		is_const |= flow_is(t, "const");
		is_static |= flow_is(t, "static");
		c->i++;
	}
	while (!flow_at_end(c) && !flow_at(c, ";") && !flow_at(c, "}")) {
		const struct flow_tok *name = NULL;
		bool fnptr = false, proto = false, array = false;
		while (flow_eat(c, "*") || flow_eat(c, "const") || flow_eat(c, "restrict") || flow_eat(c, "volatile"))
			;
		if (flow_at(c, "(")) { /* (*name)(...) or (name) */
			c->i++;
			while (flow_eat(c, "*"))
				;
			if (flow_cur(c)->k == FT_ID)
				name = flow_cur(c), c->i++;
			while (!flow_at(c, ")") && !flow_at_end(c))
				c->i++;
			flow_eat(c, ")");
			fnptr = flow_at(c, "(");
		} else if (flow_cur(c)->k == FT_ID) {
			name = flow_cur(c);
			c->i++;
		}
		if (flow_at(c, "(")) {
			proto = !fnptr;
			flow_skip_balanced(c);
		}
		while (flow_at(c, "[")) {
			array = true;
			flow_skip_balanced(c);
		}
		while (flow_at(c, "__attribute__") || flow_at(c, "__asm__") || flow_at(c, "asm")) {
			c->i++;
			if (flow_at(c, "("))
				flow_skip_balanced(c);
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
				cell = flow_cell_new(c, array);
				flow_bind_add(c, name, cell, global ? (is_static ? c->fi : -1) : 0);
			}
			if (flow_eat(c, "="))
				initializer(c, cell, !global || is_const);
		} else if (flow_eat(c, "=")) {
			e_assign(c);
		}
		if (flow_at(c, "{") && proto) /* a function body where none was expected */
			flow_skip_balanced(c);
		if (!flow_eat(c, ","))
			break;
	}
	/* anything left of a declaration the parser does not follow */
	while (!flow_at_end(c) && !flow_at(c, ";") && !flow_at(c, "}")) {
		if (flow_at(c, "(") || flow_at(c, "[") || flow_at(c, "{"))
			flow_skip_balanced(c);
		else
			c->i++;
	}
	flow_eat(c, ";");
}

/* ---- statements ---- */

/* A parenthesized condition: its value (known when it folds). */
static struct val cond(struct ctx *c)
{
	if (!flow_eat(c, "("))
		return (struct val){ 0 };
	struct ev e = e_comma(c);
	flow_eat(c, ")");
	return e.v;
}

void flow_block(struct ctx *c)
{
	size_t nb = c->nb;
	c->i++; /* { */
	while (!flow_at(c, "}") && !flow_at_end(c))
		stmt(c);
	flow_eat(c, "}");
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
	flow_store_join(&c->s, &cont);
	flow_store_free(&cont);
	c->brk = sb;
	c->cont = sc;
}

static void stmt(struct ctx *c)
{
	if (++c->steps > FLOW_BUDGET * 4) { /* out of budget: the rest is skipped */
		c->i = c->n;
		return;
	}
	const struct flow_tok *t = flow_cur(c);
	size_t start = c->i;
	if (flow_is(t, "{")) {
		flow_block(c);
	} else if (flow_is(t, ";")) {
		c->i++;
	} else if (flow_is(t, "if")) {
		c->i++;
		struct val v = cond(c);
		struct store pre = { 0 };
		flow_store_copy(&pre, &c->s);
		if (v.known && !v.cint)
			c->s.dead = true;
		stmt(c);
		struct store then = { 0 };
		flow_store_copy(&then, &c->s);
		flow_store_copy(&c->s, &pre);
		if (v.known && v.cint)
			c->s.dead = true;
		if (flow_eat(c, "else"))
			stmt(c);
		flow_store_join(&c->s, &then);
		flow_store_free(&pre);
		flow_store_free(&then);
	} else if (flow_is(t, "while") || flow_is(t, "for") || flow_is(t, "switch")) {
		bool is_for = flow_is(t, "for"), is_switch = flow_is(t, "switch");
		c->i++;
		struct val v = { 0 };
		size_t nb = c->nb;
		if (is_for) {
			flow_eat(c, "(");
			if (at_decl(c))
				flow_decl(c, false);
			else
				e_comma(c), flow_eat(c, ";");
			if (flow_at(c, ";"))
				v = (struct val){ .known = true, .cint = 1 };
			else
				v = e_comma(c).v;
			flow_eat(c, ";");
			if (!flow_at(c, ")"))
				e_comma(c);
			flow_eat(c, ")");
		} else {
			v = cond(c);
		}
		struct store pre = { 0 }, brk = { 0 };
		flow_store_copy(&pre, &c->s);
		if (!is_switch && v.known && !v.cint)
			c->s.dead = true;
		loop_body(c, &brk);
		/* the loop left by its condition (not a constant true), or the
		 * switch's end, or a switch with no case taken */
		if (!is_switch && v.known && v.cint)
			c->s.dead = true;
		flow_store_join(&c->s, &brk);
		if (is_switch || !(v.known && v.cint))
			flow_store_join(&c->s, &pre);
		c->s.dead = false;
		flow_store_free(&pre);
		flow_store_free(&brk);
		c->nb = nb;
	} else if (flow_is(t, "do")) {
		c->i++;
		struct store brk = { 0 };
		loop_body(c, &brk);
		if (flow_eat(c, "while"))
			cond(c);
		flow_eat(c, ";");
		flow_store_join(&c->s, &brk);
		flow_store_free(&brk);
		c->s.dead = false;
	} else if (flow_is(t, "case") || flow_is(t, "default")) {
		/* a case is entered from the switch too: the store before the
		 * switch is joined at its end, which stands for it here */
		while (!flow_at(c, ":") && !flow_at_end(c))
			c->i++;
		flow_eat(c, ":");
		c->s.dead = false;
	} else if (flow_is(t, "return")) {
		c->i++;
		struct val v = { 0 };
		if (!flow_at(c, ";"))
			v = e_comma(c).v;
		flow_eat(c, ";");
		if (c->fr && !c->s.dead) {
			c->fr->ret = c->fr->has_ret ? flow_val_join(c->fr->ret, &v) : v;
			c->fr->has_ret = true;
			flow_store_join(&c->fr->rets, &c->s);
		}
		c->s.dead = true;
	} else if (flow_is(t, "break") || flow_is(t, "continue")) {
		struct store *to = flow_is(t, "break") ? c->brk : c->cont;
		c->i++;
		flow_eat(c, ";");
		if (to) {
			flow_store_join(to, &c->s);
			c->s.dead = true;
		}
	} else if (flow_is(t, "goto")) {
		c->i += 2;
		flow_eat(c, ";");
	} else if (t->k == FT_ID && flow_is(flow_ahead(c, 1), ":") && !flow_is(flow_ahead(c, 2), ":")) {
		c->i += 2; /* a label */
		c->s.dead = false;
	} else if (flow_is(t, "typedef") || at_decl(c)) {
		flow_decl(c, false);
	} else if (flow_is(t, "asm") || flow_is(t, "__asm__")) {
		while (!flow_at(c, ";") && !flow_at_end(c))
			c->i++;
		flow_eat(c, ";");
	} else {
		e_comma(c);
		flow_eat(c, ";");
	}
	if (c->i == start) /* nothing understood: step over it */
		c->i++;
}
