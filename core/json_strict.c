/* Strict JSON in front of cJSON. One iterative pass over the bytes checks
 * UTF-8, NUL bytes, the grammar of RFC 8259 and the nesting depth, so cJSON
 * only ever sees well-formed, shallow input (it never recurses deeper than
 * MSG_MAX_DEPTH and never fails on what we hand it). A walk of the tree,
 * bounded by that depth, then rejects duplicate keys and numbers that
 * overflowed to infinity; json_check_tree runs the same walk, plus UTF-8
 * checks, over trees built in code. Byte offsets in errors count from 0. */
#include "core/message.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/banned.h"

_Static_assert(MSG_MAX_DEPTH <= 64, "the scanner keeps one bit per level");

/* cJSON copies a number into a 64-byte buffer and cuts it there. */
#define JSON_NUMBER_MAX 63
/* Keys longer than this are shortened in error paths. */
#define JSON_KEY_SHOWN 64

enum scan_state {
	ST_VALUE,
	ST_VALUE_OR_END,
	ST_KEY,
	ST_KEY_OR_END,
	ST_COLON,
	ST_COMMA_OR_END,
	ST_DONE,
};

struct scan {
	const unsigned char *p;
	size_t len, pos;
	unsigned depth;
	uint64_t objects; /* bit d-1 set: level d is an object */
	enum scan_state st;
	char **err;
};

static bool is_digit(unsigned c)
{
	return c >= '0' && c <= '9';
}

/* Length of the valid UTF-8 sequence at p, or 0 (overlong, surrogate,
 * above U+10FFFF, truncated). */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned c = p[0], lo = 0x80, hi = 0xbf;
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static int json_check_bytes(const unsigned char *p, size_t len, char **err)
{
	size_t i = 0;
	while (i < len) {
		if (p[i] == 0)
			return err_set(err, "NUL byte at byte %zu", i);
		size_t n = utf8_len(p + i, len - i);
		if (n == 0)
			return err_set(err, "invalid UTF-8 at byte %zu", i);
		i += n;
	}
	return 0;
}

static int scan_fail(struct scan *s, size_t at)
{
	return err_set(s->err, "invalid JSON at byte %zu", at);
}

static void scan_skip_ws(struct scan *s)
{
	while (s->pos < s->len) {
		unsigned c = s->p[s->pos];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		s->pos++;
	}
}

static int hex_value(unsigned c)
{
	if (is_digit(c))
		return (int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (int)(c - 'A' + 10);
	return -1;
}

/* "\uXXXX" at i: its code unit in *v, or -1. */
static int scan_u_escape(const struct scan *s, size_t i, unsigned *v)
{
	if (i + 6 > s->len || s->p[i] != '\\' || s->p[i + 1] != 'u')
		return -1;
	*v = 0;
	for (size_t k = 2; k < 6; k++) {
		int h = hex_value(s->p[i + k]);
		if (h < 0)
			return -1;
		*v = *v << 4 | (unsigned)h;
	}
	return 0;
}

/* The escape at *i (a backslash); advances *i past it. */
static int scan_escape(struct scan *s, size_t *i)
{
	size_t at = *i;
	if (at + 1 >= s->len)
		return scan_fail(s, s->len);
	unsigned c = s->p[at + 1];
	if (c != 'u') {
		if (c == 0 || !strchr("\"\\/bfnrt", (int)c))
			return scan_fail(s, at + 1);
		*i = at + 2;
		return 0;
	}
	unsigned v, lo;
	if (scan_u_escape(s, at, &v) < 0)
		return scan_fail(s, at);
	if (v == 0)
		return err_set(s->err, "\\u0000 escape at byte %zu", at);
	if (v >= 0xdc00 && v <= 0xdfff)
		return scan_fail(s, at);
	if (v < 0xd800 || v > 0xdbff) {
		*i = at + 6;
		return 0;
	}
	if (scan_u_escape(s, at + 6, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return scan_fail(s, at + 6);
	*i = at + 12;
	return 0;
}

static int scan_string(struct scan *s)
{
	size_t i = s->pos + 1;
	while (i < s->len) {
		unsigned c = s->p[i];
		if (c == '"') {
			s->pos = i + 1;
			return 0;
		}
		if (c < 0x20)
			return scan_fail(s, i);
		if (c != '\\')
			i++;
		else if (scan_escape(s, &i) < 0)
			return -1;
	}
	return scan_fail(s, s->len);
}

static size_t scan_digits(const struct scan *s, size_t i)
{
	while (i < s->len && is_digit(s->p[i]))
		i++;
	return i;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int scan_number(struct scan *s)
{
	size_t i = s->pos, j;
	if (s->p[i] == '-')
		i++;
	if (i >= s->len || !is_digit(s->p[i]))
		return scan_fail(s, i);
	i = s->p[i] == '0' ? i + 1 : scan_digits(s, i);
	if (i < s->len && s->p[i] == '.') {
		j = scan_digits(s, i + 1);
		if (j == i + 1)
			return scan_fail(s, j);
		i = j;
	}
	if (i < s->len && (s->p[i] == 'e' || s->p[i] == 'E')) {
		i++;
		if (i < s->len && (s->p[i] == '+' || s->p[i] == '-'))
			i++;
		j = scan_digits(s, i);
		if (j == i)
			return scan_fail(s, j);
		i = j;
	}
	if (i - s->pos > JSON_NUMBER_MAX)
		return err_set(s->err, "number longer than %d characters at byte %zu",
			       JSON_NUMBER_MAX, s->pos);
	s->pos = i;
	return 0;
}

static int scan_literal(struct scan *s)
{
	static const char *const words[] = { "true", "false", "null" };
	for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
		size_t n = strlen(words[k]);
		if (s->len - s->pos >= n && !memcmp(s->p + s->pos, words[k], n)) {
			s->pos += n;
			return 0;
		}
	}
	return scan_fail(s, s->pos);
}

static bool scan_in_object(const struct scan *s)
{
	return (s->objects >> (s->depth - 1)) & 1;
}

static void scan_after_value(struct scan *s)
{
	s->st = s->depth == 0 ? ST_DONE : ST_COMMA_OR_END;
}

static int scan_push(struct scan *s, bool object)
{
	if (s->depth == MSG_MAX_DEPTH)
		return err_set(s->err, "nesting deeper than %d levels",
			       MSG_MAX_DEPTH);
	s->depth++;
	uint64_t bit = (uint64_t)1 << (s->depth - 1);
	s->objects = object ? s->objects | bit : s->objects & ~bit;
	s->st = object ? ST_KEY_OR_END : ST_VALUE_OR_END;
	s->pos++;
	return 0;
}

static void scan_pop(struct scan *s)
{
	s->depth--;
	s->pos++;
	scan_after_value(s);
}

static int scan_value(struct scan *s)
{
	unsigned c = s->p[s->pos];
	if (c == ']' && s->st == ST_VALUE_OR_END) {
		scan_pop(s);
		return 0;
	}
	if (c == '{' || c == '[')
		return scan_push(s, c == '{');
	int r;
	if (c == '"')
		r = scan_string(s);
	else if (c == '-' || is_digit(c))
		r = scan_number(s);
	else
		r = scan_literal(s);
	if (r == 0)
		scan_after_value(s);
	return r;
}

static int scan_key(struct scan *s)
{
	unsigned c = s->p[s->pos];
	if (c == '}' && s->st == ST_KEY_OR_END) {
		scan_pop(s);
		return 0;
	}
	if (c != '"')
		return scan_fail(s, s->pos);
	s->st = ST_COLON;
	return scan_string(s);
}

static int scan_separator(struct scan *s)
{
	unsigned c = s->p[s->pos];
	bool obj = scan_in_object(s);
	if (s->st == ST_COLON) {
		if (c != ':')
			return scan_fail(s, s->pos);
		s->st = ST_VALUE;
	} else if (c == ',') {
		s->st = obj ? ST_KEY : ST_VALUE;
	} else if (c == (obj ? '}' : ']')) {
		scan_pop(s);
		return 0;
	} else {
		return scan_fail(s, s->pos);
	}
	s->pos++;
	return 0;
}

static int scan_json(struct scan *s)
{
	scan_skip_ws(s);
	if (s->pos == s->len)
		return err_set(s->err, "empty input");
	for (;;) {
		scan_skip_ws(s);
		if (s->st == ST_DONE) {
			if (s->pos < s->len)
				return err_set(s->err,
					       "trailing data after JSON value at byte %zu",
					       s->pos);
			return 0;
		}
		if (s->pos == s->len)
			return scan_fail(s, s->pos);
		int r;
		switch (s->st) {
		case ST_VALUE:
		case ST_VALUE_OR_END:
			r = scan_value(s);
			break;
		case ST_KEY:
		case ST_KEY_OR_END:
			r = scan_key(s);
			break;
		default:
			r = scan_separator(s);
			break;
		}
		if (r < 0)
			return -1;
	}
}

/* Appends s quoted, with control characters escaped and invalid bytes as
 * \xHH, stopping (with "...") after about max bytes. */
static void sbuf_add_quoted(struct sbuf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i = 0;
	sbuf_addch(b, '"');
	while (i < len) {
		if (i >= max) {
			sbuf_addstr(b, "...");
			break;
		}
		size_t n = utf8_len(p + i, len - i);
		bool c1 = n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0;
		if (n == 0)
			sbuf_addf(b, "\\x%02x", p[i]);
		else if (p[i] == '"' || p[i] == '\\')
			sbuf_addf(b, "\\%c", p[i]);
		else if (p[i] < 0x20 || p[i] == 0x7f)
			sbuf_addf(b, "\\u%04x", p[i]);
		else if (c1)
			sbuf_addf(b, "\\u%04x", p[i + 1]);
		else
			sbuf_add(b, p + i, n);
		i += n ? n : 1;
	}
	sbuf_addch(b, '"');
}

static bool key_is_plain(const char *key)
{
	size_t n = 0;
	for (const char *p = key; *p; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  is_digit((unsigned char)c) || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return n > 0 && n <= JSON_KEY_SHOWN;
}

static void path_add_key(struct sbuf *b, const char *key)
{
	if (key_is_plain(key)) {
		if (b->len)
			sbuf_addch(b, '.');
		sbuf_addstr(b, key);
		return;
	}
	sbuf_addch(b, '[');
	sbuf_add_quoted(b, key, JSON_KEY_SHOWN);
	sbuf_addch(b, ']');
}

char *json_path_join(const char *prefix, const char *key)
{
	struct sbuf b;
	sbuf_init(&b);
	if (prefix)
		sbuf_addstr(&b, prefix);
	path_add_key(&b, key ? key : "");
	return sbuf_detach(&b);
}

/* Where the walk is: a chain of frames from the node up to the root. */
struct frame {
	const struct frame *up;
	const char *key; /* NULL in an array */
	size_t index;
};

static void frame_path(const struct frame *f, struct sbuf *b)
{
	if (!f)
		return;
	frame_path(f->up, b);
	if (f->key)
		path_add_key(b, f->key);
	else
		sbuf_addf(b, "[%zu]", f->index);
}

static int tree_fail(char **err, const struct frame *f, const char *what,
		     const char *key)
{
	struct sbuf path, k;
	sbuf_init(&path);
	sbuf_init(&k);
	frame_path(f, &path);
	if (key) {
		sbuf_addstr(&k, " ");
		sbuf_add_quoted(&k, key, JSON_KEY_SHOWN);
		sbuf_addstr(&k, " in object");
	}
	err_set(err, "%s%s at %s", what, k.len ? k.data : "",
		path.len ? path.data : "top level");
	sbuf_release(&path);
	sbuf_release(&k);
	return -1;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorting keeps an object with many keys from costing n squared. */
static const char *tree_find_duplicate(const cJSON *obj)
{
	size_t n = 0;
	for (const cJSON *c = obj->child; c; c = c->next)
		n++;
	if (n < 2)
		return NULL;
	const char **keys = xmalloc(n * sizeof(*keys));
	n = 0;
	for (const cJSON *c = obj->child; c; c = c->next)
		keys[n++] = c->string ? c->string : "";
	qsort(keys, n, sizeof(*keys), cmp_keys);
	const char *dup = NULL;
	for (size_t i = 1; i < n && !dup; i++)
		if (!strcmp(keys[i - 1], keys[i]))
			dup = keys[i];
	free(keys);
	return dup;
}

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	for (size_t i = 0, n; i < len; i += n)
		if ((n = utf8_len(p + i, len - i)) == 0)
			return false;
	return true;
}

struct tree_walk {
	char **err;
	bool check_utf8; /* text from the scanner is already valid UTF-8 */
};

static int tree_check_scalar(const cJSON *node, const struct frame *f,
			     const struct tree_walk *w)
{
	if (cJSON_IsNumber(node) && !isfinite(node->valuedouble))
		return tree_fail(w->err, f, "number out of range", NULL);
	if (w->check_utf8 && cJSON_IsString(node) && node->valuestring &&
	    !utf8_valid(node->valuestring))
		return tree_fail(w->err, f, "invalid UTF-8", NULL);
	return 0;
}

/* depth counts the containers around node. Recursion stops at
 * MSG_MAX_DEPTH, so it is bounded even for trees built in code. */
static int tree_check(const cJSON *node, const struct frame *f, int depth,
		      const struct tree_walk *w)
{
	if (!cJSON_IsObject(node) && !cJSON_IsArray(node))
		return tree_check_scalar(node, f, w);
	if (++depth > MSG_MAX_DEPTH)
		return err_set(w->err, "nesting deeper than %d levels",
			       MSG_MAX_DEPTH);
	bool obj = cJSON_IsObject(node);
	if (obj) {
		const char *dup = tree_find_duplicate(node);
		if (dup)
			return tree_fail(w->err, f, "duplicate key", dup);
	}
	struct frame child = { .up = f, .key = NULL, .index = 0 };
	for (const cJSON *c = node->child; c; c = c->next, child.index++) {
		child.key = obj ? (c->string ? c->string : "") : NULL;
		if (obj && w->check_utf8 && !utf8_valid(child.key))
			return tree_fail(w->err, &child, "invalid UTF-8 in key",
					 NULL);
		if (tree_check(c, &child, depth, w) < 0)
			return -1;
	}
	return 0;
}

int json_check_tree(const cJSON *node, const char *name, int above,
		    char **err)
{
	struct tree_walk w = { .err = err, .check_utf8 = true };
	struct frame top = { .up = NULL, .key = name, .index = 0 };
	if (!node)
		return 0;
	return tree_check(node, name ? &top : NULL, above, &w);
}

cJSON *json_parse_strict(const char *buf, size_t len, char **err)
{
	if (!buf || len == 0) {
		err_set(err, "empty input");
		return NULL;
	}
	const unsigned char *p = (const unsigned char *)buf;
	if (json_check_bytes(p, len, err) < 0)
		return NULL;
	struct scan s = { .p = p, .len = len, .st = ST_VALUE, .err = err };
	if (scan_json(&s) < 0)
		return NULL;
	char *copy = xmalloc(len + 1);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithOpts(copy, &end, 1);
	size_t at = end ? (size_t)(end - copy) : 0;
	free(copy);
	if (!root) {
		err_set(err, "invalid JSON at byte %zu (out of memory?)", at);
		return NULL;
	}
	struct tree_walk w = { .err = err, .check_utf8 = false };
	if (tree_check(root, NULL, 0, &w) < 0) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
