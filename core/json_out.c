#include "core/json_out.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

static void indent(struct sbuf *b, int depth)
{
	for (int i = 0; i < depth; i++)
		sbuf_addstr(b, "  ");
}

static void scalar(struct sbuf *b, const cJSON *j)
{
	cJSON copy = *j;
	copy.next = copy.prev = NULL;
	copy.string = NULL;
	char *s = cJSON_PrintUnformatted(&copy);
	sbuf_addstr(b, s ? s : "null");
	cJSON_free(s);
}

static void key(struct sbuf *b, const char *k)
{
	cJSON *s = cJSON_CreateString(k);
	char *q = cJSON_PrintUnformatted(s);
	sbuf_addstr(b, q);
	sbuf_addstr(b, ": ");
	cJSON_free(q);
	cJSON_Delete(s);
}

/* Iterative over containers is not needed: depth is bounded by the strict
 * parser (64) for anything that came from outside. */
static void emit(struct sbuf *b, const cJSON *j, int depth)
{
	bool obj = cJSON_IsObject(j);
	if (!obj && !cJSON_IsArray(j)) {
		scalar(b, j);
		return;
	}
	if (!j->child) {
		sbuf_addstr(b, obj ? "{}" : "[]");
		return;
	}
	sbuf_addch(b, obj ? '{' : '[');
	for (const cJSON *c = j->child; c; c = c->next) {
		sbuf_addch(b, '\n');
		indent(b, depth + 1);
		if (obj)
			key(b, c->string ? c->string : "");
		emit(b, c, depth + 1);
		if (c->next)
			sbuf_addch(b, ',');
	}
	sbuf_addch(b, '\n');
	indent(b, depth);
	sbuf_addch(b, obj ? '}' : ']');
}

char *json_pretty(const cJSON *j)
{
	struct sbuf b;
	sbuf_init(&b);
	emit(&b, j, 0);
	return sbuf_detach(&b);
}
