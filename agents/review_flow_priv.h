/* review.flow's interpreter state, shared by agents/review_flow.c (the
 * interpreter), agents/review_flow_lib.c (the C library's models and the
 * findings) and agents/review_flow_scan.c (the driver). */
#ifndef MADF_REVIEW_FLOW_PRIV_H
#define MADF_REVIEW_FLOW_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "agents/review_flow.h"

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

/* an expression evaluated */

struct ev {
	struct val v;
	int nl, l[MAXP]; /* the cells it designates (an lvalue) */
	bool strong;     /* one cell, written whole */
};

extern const char *const flow_type_words[];

const struct flow_tok *flow_cur(struct ctx *c);
const struct flow_tok *flow_ahead(struct ctx *c, size_t k);
bool flow_at(struct ctx *c, const char *s);
bool flow_eat(struct ctx *c, const char *s);
bool flow_at_end(struct ctx *c);
void flow_skip_balanced(struct ctx *c);
bool flow_tok_is_name(const struct flow_tok *t, const char *const *names);
void flow_val_addp(struct val *v, int p);
struct val flow_val_join(struct val a, const struct val *b);
int flow_cell_new(struct ctx *c, bool array);
void flow_store_copy(struct store *d, const struct store *s);
void flow_store_join(struct store *d, const struct store *s);
void flow_store_free(struct store *s);
struct val flow_cell_val(struct ctx *c, int p);
void flow_cell_write(struct ctx *c, int p, const struct val *v, bool strong, bool whole);
void flow_cell_set(struct ctx *c, int p, const struct val *v, bool strong);
int flow_content_src(struct ctx *c, const struct val *v);
struct val flow_tainted(int src);
void flow_hidx_build(struct hidx *h, size_t n,
		     const struct flow_tok *(*name)(struct ctx *, size_t), struct ctx *c);
void flow_hidx_free(struct hidx *h);
const struct flow_tok *flow_fn_name_at(struct ctx *c, size_t i);
const struct flow_tok *flow_bind_name_at(struct ctx *c, size_t i);
int flow_bind_add(struct ctx *c, const struct flow_tok *name, int cell, int file);
int flow_lookup(struct ctx *c, const struct flow_tok *name);
int flow_fn_find(struct ctx *c, const struct flow_tok *name);
struct val flow_call_user(struct ctx *c, int fi, struct ev *a, int na);
void flow_decl(struct ctx *c, bool global);
void flow_block(struct ctx *c);
void flow_report(struct ctx *c, int line, const char *cwe, const char *rule, int src,
		   const char *sink, int argn);
int flow_src_add(struct ctx *c, const char *what, int line);
int flow_src_tok(struct ctx *c, const struct flow_tok *name, int line);
int flow_deep_src(struct ctx *c, const struct val *v);
void flow_sinks(struct ctx *c, const struct flow_tok *name, const struct ev *a, int na, int line);
void flow_taint_into(struct ctx *c, const struct val *v, int src);
void flow_copy_into(struct ctx *c, const struct val *to, const struct val *from, bool strong);
struct val flow_lib_call(struct ctx *c, const struct flow_tok *name, const struct ev *a, int na,
			 int line);
bool flow_is_source_name(const struct flow_tok *t);
/* The memory-leak finder (agents/review_flow_leak.c): CWE-401 findings
 * over the functions found, appended to c->items. */
void flow_leaks(struct ctx *c);

#endif
