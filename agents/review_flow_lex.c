/* review.flow's tokenizer and small preprocessor: comments are dropped,
 * #if/#ifdef/#ifndef/#elif/#else/#endif applied with nothing predefined
 * (an unknown name is 0, as the C preprocessor takes it), and the file's
 * own object-like and function-like #defines expanded (a macro's tokens
 * carry the line of its use; # and ## are dropped). #include is not
 * followed: names from headers stay as they are. */
#include "agents/review_flow.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define EXPAND_DEPTH 16

struct macro {
	const char *name;
	int nlen;
	bool fn;
	int nparams;
	const char *params[16];
	int plen[16];
	struct flow_tok *body;
	int nbody;
	bool busy;
};

struct pp {
	struct macro *m;
	size_t nm;
	struct flow_tok *out;
	size_t nout, cap;
};

struct lexer {
	const char *s, *e;
	int line;
	bool bol; /* the next token starts a line */
};

static const char *const puncts[] = {
	"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", NULL
};

/* The next raw token (k FT_EOF at the end); *bol: it starts a line. */
static struct flow_tok lex_next(struct lexer *x, bool *bol)
{
	for (;;) {
		if (x->s >= x->e)
			return (struct flow_tok){ FT_EOF, x->line, 0, x->e };
		char c = *x->s;
		if (c == '\n') {
			x->line++;
			x->bol = true;
			x->s++;
		} else if (c == '\\' && x->s + 1 < x->e && (x->s[1] == '\n' || x->s[1] == '\r')) {
			x->s += x->s[1] == '\r' && x->s + 2 < x->e && x->s[2] == '\n' ? 3 : 2;
			x->line++;
		} else if (isspace((unsigned char)c)) {
			x->s++;
		} else if (c == '/' && x->s + 1 < x->e && x->s[1] == '*') {
			x->s += 2;
			while (x->s + 1 < x->e && !(x->s[0] == '*' && x->s[1] == '/')) {
				x->line += *x->s == '\n';
				x->s++;
			}
			x->s = x->s + 2 < x->e ? x->s + 2 : x->e;
		} else if (c == '/' && x->s + 1 < x->e && x->s[1] == '/') {
			while (x->s < x->e && *x->s != '\n')
				x->s++;
		} else {
			break;
		}
	}
	*bol = x->bol;
	x->bol = false;
	const char *b = x->s;
	char c = *b;
	struct flow_tok t = { FT_PUNCT, x->line, 1, b };
	if (isalpha((unsigned char)c) || c == '_') {
		while (x->s < x->e && (isalnum((unsigned char)*x->s) || *x->s == '_'))
			x->s++;
		/* L"..." and L'.' */
		if (x->s - b == 1 && c == 'L' && x->s < x->e && (*x->s == '"' || *x->s == '\''))
			goto quoted;
		t.k = FT_ID;
	} else if (isdigit((unsigned char)c) || (c == '.' && x->s + 1 < x->e && isdigit((unsigned char)x->s[1]))) {
		while (x->s < x->e && (isalnum((unsigned char)*x->s) || *x->s == '.' || *x->s == '_' ||
				       ((*x->s == '+' || *x->s == '-') && (x->s[-1] == 'e' || x->s[-1] == 'E'))))
			x->s++;
		t.k = FT_NUM;
	} else if (c == '"' || c == '\'') {
quoted:;
		char q = *x->s;
		x->s++;
		while (x->s < x->e && *x->s != q && *x->s != '\n') {
			if (*x->s == '\\' && x->s + 1 < x->e)
				x->s++;
			x->s++;
		}
		if (x->s < x->e && *x->s == q)
			x->s++;
		t.k = q == '"' ? FT_STR : FT_CHR;
	} else {
		size_t n = 1;
		for (size_t i = 0; puncts[i]; i++) {
			size_t l = strlen(puncts[i]);
			if ((size_t)(x->e - b) >= l && !memcmp(b, puncts[i], l)) {
				n = l;
				break;
			}
		}
		x->s += n;
	}
	t.len = (int)(x->s - b);
	return t;
}

static void out_add(struct pp *p, struct flow_tok t)
{
	if (p->nout == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->out = xrealloc(p->out, p->cap * sizeof(*p->out));
	}
	p->out[p->nout++] = t;
}

static struct macro *macro_find(struct pp *p, const struct flow_tok *t)
{
	for (size_t i = p->nm; i-- > 0;)
		if (p->m[i].nlen == t->len && !memcmp(p->m[i].name, t->s, (size_t)t->len))
			return &p->m[i];
	return NULL;
}

/* Expands v[0..n) (macro calls included) to p->out at line. */
static void expand(struct pp *p, const struct flow_tok *v, int n, int line, int depth)
{
	for (int i = 0; i < n; i++) {
		struct flow_tok t = v[i];
		struct macro *m = t.k == FT_ID && depth < EXPAND_DEPTH ? macro_find(p, &t) : NULL;
		if (m && !m->busy && m->fn && !(i + 1 < n && flow_is(&v[i + 1], "(")))
			m = NULL;
		if (!m || m->busy) {
			if (flow_is(&t, "#") || flow_is(&t, "##"))
				continue;
			t.line = line;
			out_add(p, t);
			continue;
		}
		if (!m->fn) {
			m->busy = true;
			expand(p, m->body, m->nbody, line, depth + 1);
			m->busy = false;
			continue;
		}
		/* the arguments: v[i+2 ..] to the matching ')' */
		int argb[17], arge[17], na = 0, d = 0, j = i + 2;
		argb[0] = j;
		for (; j < n; j++) {
			if (flow_is(&v[j], "(")) {
				d++;
			} else if (flow_is(&v[j], ")")) {
				if (!d)
					break;
				d--;
			} else if (flow_is(&v[j], ",") && !d && na < 16) {
				arge[na++] = j;
				argb[na] = j + 1;
			}
		}
		arge[na++] = j;
		/* the body with the parameters replaced, then expanded again */
		struct pp sub = { .m = p->m, .nm = p->nm };
		for (int b = 0; b < m->nbody; b++) {
			int k = 0;
			while (k < m->nparams && !(m->body[b].k == FT_ID && m->plen[k] == m->body[b].len &&
						    !memcmp(m->params[k], m->body[b].s, (size_t)m->plen[k])))
				k++;
			if (k < m->nparams && k < na) {
				for (int a = argb[k]; a < arge[k]; a++)
					out_add(&sub, v[a]);
			} else {
				out_add(&sub, m->body[b]);
			}
		}
		m->busy = true;
		expand(p, sub.out, (int)sub.nout, line, depth + 1);
		m->busy = false;
		free(sub.out);
		i = j < n ? j : n - 1;
	}
}

/* #if expressions: defined, numbers, ! ~ - * / % + - < > <= >= == != && || ?: ( ) */
struct cexpr {
	const struct flow_tok *v;
	int n, i;
	struct pp *p;
};

static long ce_cond(struct cexpr *c);

static long ce_prim(struct cexpr *c)
{
	if (c->i >= c->n)
		return 0;
	const struct flow_tok *t = &c->v[c->i++];
	if (flow_is(t, "(")) {
		long r = ce_cond(c);
		if (c->i < c->n && flow_is(&c->v[c->i], ")"))
			c->i++;
		return r;
	}
	if (flow_is(t, "!"))
		return !ce_prim(c);
	if (flow_is(t, "-"))
		return -ce_prim(c);
	if (flow_is(t, "~"))
		return ~ce_prim(c);
	if (flow_is(t, "defined")) {
		bool paren = c->i < c->n && flow_is(&c->v[c->i], "(");
		c->i += paren;
		long r = c->i < c->n && macro_find(c->p, &c->v[c->i]) != NULL;
		c->i++;
		if (paren && c->i < c->n && flow_is(&c->v[c->i], ")"))
			c->i++;
		return r;
	}
	if (t->k == FT_NUM) {
		char num[32];
		size_t l = (size_t)t->len < sizeof(num) - 1 ? (size_t)t->len : sizeof(num) - 1;
		memcpy(num, t->s, l);
		num[l] = 0;
		return strtol(num, NULL, 0);
	}
	if (t->k == FT_CHR)
		return t->len > 2 ? (unsigned char)t->s[1] : 0;
	return 0; /* an unknown name */
}

static int ce_prec(const struct flow_tok *t)
{
	static const struct {
		const char *op;
		int prec;
	} ops[] = { { "*", 10 }, { "/", 10 }, { "%", 10 }, { "+", 9 }, { "-", 9 }, { "<<", 8 },
		    { ">>", 8 }, { "<", 7 }, { ">", 7 }, { "<=", 7 }, { ">=", 7 }, { "==", 6 },
		    { "!=", 6 }, { "&", 5 }, { "^", 4 }, { "|", 3 }, { "&&", 2 }, { "||", 1 } };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (flow_is(t, ops[i].op))
			return ops[i].prec;
	return 0;
}

static long ce_bin(struct cexpr *c, int min)
{
	long l = ce_prim(c);
	while (c->i < c->n) {
		const struct flow_tok *op = &c->v[c->i];
		int pr = ce_prec(op);
		if (!pr || pr < min)
			break;
		c->i++;
		long r = ce_bin(c, pr + 1);
		if (flow_is(op, "*")) l *= r;
		else if (flow_is(op, "/")) l = r ? l / r : 0;
		else if (flow_is(op, "%")) l = r ? l % r : 0;
		else if (flow_is(op, "+")) l += r;
		else if (flow_is(op, "-")) l -= r;
		else if (flow_is(op, "<<")) l = r >= 0 && r < 63 ? l << r : 0;
		else if (flow_is(op, ">>")) l = r >= 0 && r < 63 ? l >> r : 0;
		else if (flow_is(op, "<")) l = l < r;
		else if (flow_is(op, ">")) l = l > r;
		else if (flow_is(op, "<=")) l = l <= r;
		else if (flow_is(op, ">=")) l = l >= r;
		else if (flow_is(op, "==")) l = l == r;
		else if (flow_is(op, "!=")) l = l != r;
		else if (flow_is(op, "&")) l &= r;
		else if (flow_is(op, "^")) l ^= r;
		else if (flow_is(op, "|")) l |= r;
		else if (flow_is(op, "&&")) l = l && r;
		else l = l || r;
	}
	return l;
}

static long ce_cond(struct cexpr *c)
{
	long l = ce_bin(c, 1);
	if (c->i < c->n && flow_is(&c->v[c->i], "?")) {
		c->i++;
		long a = ce_cond(c);
		if (c->i < c->n && flow_is(&c->v[c->i], ":"))
			c->i++;
		long b = ce_cond(c);
		return l ? a : b;
	}
	return l;
}

/* The value of #if's tokens d[0..n): defined() first, then macros. */
static long pp_if(struct pp *p, const struct flow_tok *d, int n)
{
	struct pp sub = { .m = p->m, .nm = p->nm };
	for (int i = 0; i < n; i++) {
		if (flow_is(&d[i], "defined")) {
			bool paren = i + 1 < n && flow_is(&d[i + 1], "(");
			int k = i + 1 + paren;
			bool def = k < n && macro_find(p, &d[k]) != NULL;
			out_add(&sub, (struct flow_tok){ FT_NUM, d[i].line, 1, def ? "1" : "0" });
			i = k + (paren && k + 1 < n && flow_is(&d[k + 1], ")"));
		} else {
			expand(&sub, &d[i], 1, d[i].line, 0);
		}
	}
	/* sub.out is sub's own list; expand wrote into sub (p's macros) */
	struct cexpr c = { sub.out, (int)sub.nout, 0, p };
	long r = sub.nout ? ce_cond(&c) : 0;
	free(sub.out);
	return r;
}

static void pp_define(struct pp *p, const struct flow_tok *d, int n)
{
	if (n < 1 || d[0].k != FT_ID)
		return;
	p->m = xrealloc(p->m, (p->nm + 1) * sizeof(*p->m));
	struct macro *m = &p->m[p->nm++];
	memset(m, 0, sizeof(*m));
	m->name = d[0].s;
	m->nlen = d[0].len;
	int i = 1;
	/* function-like: '(' right after the name */
	if (n > 1 && flow_is(&d[1], "(") && d[1].s == d[0].s + d[0].len) {
		m->fn = true;
		for (i = 2; i < n && !flow_is(&d[i], ")"); i++)
			if (d[i].k == FT_ID && m->nparams < 16) {
				m->params[m->nparams] = d[i].s;
				m->plen[m->nparams++] = d[i].len;
			} else if (flow_is(&d[i], "...") && m->nparams < 16) {
				m->params[m->nparams] = "__VA_ARGS__";
				m->plen[m->nparams++] = 11;
			}
		i++;
	}
	if (i < n) {
		m->nbody = n - i;
		m->body = xcalloc((size_t)m->nbody, sizeof(*m->body));
		memcpy(m->body, d + i, (size_t)m->nbody * sizeof(*m->body));
	}
}

static void pp_undef(struct pp *p, const struct flow_tok *d, int n)
{
	struct macro *m = n > 0 ? macro_find(p, &d[0]) : NULL;
	if (m)
		m->nlen = 0; /* never matches again */
}

struct cond {
	bool taking, done, parent;
};

static void file_tokenize(struct flow_file *f, size_t len)
{
	struct lexer x = { f->text, f->text + len, 1, true };
	struct pp *p = xcalloc(1, sizeof(*p));
	struct cond st[64];
	int depth = 0;
	bool active = true;
	struct flow_tok *dir = NULL;
	size_t ndir = 0, cdir = 0;
	bool bol = false;
	struct flow_tok t = lex_next(&x, &bol);
	while (t.k != FT_EOF) {
		if (!(bol && flow_is(&t, "#"))) {
			if (active) {
				/* a function-like macro's arguments may span lines: gather
				 * to the matching ')' */
				struct macro *m = t.k == FT_ID ? macro_find(p, &t) : NULL;
				if (m && m->fn) {
					struct flow_tok run[1024];
					int nr = 0, d = 0;
					run[nr++] = t;
					t = lex_next(&x, &bol);
					if (flow_is(&t, "(")) {
						do {
							if (flow_is(&t, "("))
								d++;
							else if (flow_is(&t, ")"))
								d--;
							run[nr++] = t;
							t = lex_next(&x, &bol);
						} while (d > 0 && t.k != FT_EOF && nr < 1023 &&
							 !(bol && flow_is(&t, "#")));
					}
					expand(p, run, nr, run[0].line, 0);
					continue;
				}
				expand(p, &t, 1, t.line, 0);
			}
			t = lex_next(&x, &bol);
			continue;
		}
		/* a directive: its tokens to the end of the line */
		ndir = 0;
		t = lex_next(&x, &bol);
		while (t.k != FT_EOF && !bol) {
			if (ndir == cdir) {
				cdir = cdir ? cdir * 2 : 32;
				dir = xrealloc(dir, cdir * sizeof(*dir));
			}
			dir[ndir++] = t;
			t = lex_next(&x, &bol);
		}
		if (!ndir)
			continue;
		const struct flow_tok *d = dir + 1;
		int n = (int)ndir - 1;
		if (flow_is(&dir[0], "if") || flow_is(&dir[0], "ifdef") || flow_is(&dir[0], "ifndef")) {
			bool v = false;
			if (active) {
				if (flow_is(&dir[0], "if"))
					v = pp_if(p, d, n) != 0;
				else
					v = (n > 0 && macro_find(p, &d[0]) != NULL) == flow_is(&dir[0], "ifdef");
			}
			if (depth < 64)
				st[depth] = (struct cond){ v, v, active };
			depth++;
			active = active && v;
		} else if ((flow_is(&dir[0], "elif") || flow_is(&dir[0], "else")) && depth > 0 &&
			   depth <= 64) {
			struct cond *c = &st[depth - 1];
			bool v = !c->done && c->parent && (flow_is(&dir[0], "else") || pp_if(p, d, n) != 0);
			c->taking = v;
			c->done |= v;
			active = c->parent && v;
		} else if (flow_is(&dir[0], "endif") && depth > 0) {
			depth--;
			active = depth < 64 ? st[depth].parent : active;
		} else if (active && flow_is(&dir[0], "define")) {
			pp_define(p, d, n);
		} else if (active && flow_is(&dir[0], "undef")) {
			pp_undef(p, d, n);
		}
	}
	free(dir);
	out_add(p, (struct flow_tok){ FT_EOF, x.line, 0, f->text + len });
	f->t = p->out;
	f->n = p->nout - 1;
	p->out = NULL;
	f->pp = p;
}

void flow_file_from_text(struct flow_file *f, const char *path, const char *text, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->text = xstrndup(text, len);
	file_tokenize(f, len);
}

int flow_file_load(struct flow_file *f, const char *root, const char *path, char **err)
{
	char *p = xasprintf("%s/%s", root, path), *buf = NULL;
	size_t len = 0;
	int r = util_read_file(p, 64u << 20, &buf, &len, err);
	free(p);
	if (r < 0)
		return -1;
	flow_file_from_text(f, path, buf, len);
	free(buf);
	return 0;
}

void flow_file_release(struct flow_file *f)
{
	struct pp *p = f->pp;
	if (p) {
		for (size_t i = 0; i < p->nm; i++)
			free(p->m[i].body);
		free(p->m);
		free(p);
	}
	free(f->t);
	free(f->text);
	free(f->path);
	memset(f, 0, sizeof(*f));
}
