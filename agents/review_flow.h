/* madf's own finder (review.flow): a tokenizer with a small C
 * preprocessor (agents/review_flow_lex.c) and an abstract interpreter over
 * the tokens that follows data from outside input to dangerous calls
 * (agents/review_flow.c). Internal to the two files and their tests. */
#ifndef MADF_REVIEW_FLOW_H
#define MADF_REVIEW_FLOW_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

enum flow_tk { FT_ID, FT_NUM, FT_STR, FT_CHR, FT_PUNCT, FT_EOF };

struct flow_tok {
	enum flow_tk k;
	int line;
	int len;
	const char *s; /* not NUL-terminated; into the file's text or a macro's */
};

/* One C file: its text (comments gone, directives applied, macros
 * expanded), as tokens ending with FT_EOF. */
struct flow_file {
	char *path;    /* relative to the root */
	char *text;    /* the source, owned (tokens point into it) */
	struct flow_tok *t;
	size_t n;
	void *pp;      /* the preprocessor's leftovers (macro bodies), owned */
};

/* Reads root/path and tokenizes it (comments stripped; #if/#ifdef/#else
 * applied with nothing predefined; object- and function-like #defines of
 * the file expanded). -1 when the file cannot be read. */
int flow_file_load(struct flow_file *f, const char *root, const char *path, char **err);
/* The same from text (copied). */
void flow_file_from_text(struct flow_file *f, const char *path, const char *text, size_t len);
void flow_file_release(struct flow_file *f);

static inline bool flow_is(const struct flow_tok *t, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return (size_t)t->len == n && __builtin_memcmp(t->s, s, n) == 0;
}

/* Analyses files (each a flow_file), appending raw findings
 * (review_raw_new's, tool "madf-flow") to items. */
void flow_analyze(struct flow_file *files, size_t n, cJSON *items);

/* The tool: {"root","files"} -> {"items": [...]} over the .c files. */
int review_flow_tool(void *ctx, const cJSON *args, cJSON **result, char **err);

#endif
