/* Word wrapping for the console's panes (see wrap.h). */
#include "tui/wrap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

size_t wrap_cols(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len && s[i]; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static void push(char ***v, size_t *n, size_t indent, const char *s, size_t len)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	char *l = xmalloc(indent + len + 1);
	memset(l, ' ', indent);
	memcpy(l + indent, s, len);
	l[indent + len] = 0;
	(*v)[(*n)++] = l;
}

/* One input line (no newline) into lines of width columns. */
static void wrap_line(const char *s, size_t len, size_t width, size_t indent, char ***v, size_t *n)
{
	size_t pad = 0; /* the first line has no added indent */
	for (;;) {
		size_t room = width - pad;
		/* the longest prefix that fits, in bytes, and the last space in it */
		size_t i = 0, cols = 0, space = 0;
		bool seen_space = false, seen_text = false;
		while (i < len) {
			size_t k = i + 1;
			while (k < len && ((unsigned char)s[k] & 0xc0) == 0x80)
				k++;
			if (cols + 1 > room)
				break;
			if (s[i] == ' ' && seen_text) {
				space = i;
				seen_space = true;
			} else if (s[i] != ' ') {
				seen_text = true;
			}
			cols++;
			i = k;
		}
		if (i >= len) {
			push(v, n, pad, s, len);
			return;
		}
		size_t cut = i, next = i;
		if (s[i] == ' ') {
			cut = i; /* breaks right at a space */
		} else if (seen_space) {
			cut = space;
			next = space;
		}
		while (cut > 1 && s[cut - 1] == ' ')
			cut--;
		push(v, n, pad, s, cut);
		while (next < len && s[next] == ' ')
			next++;
		s += next;
		len -= next;
		if (!len)
			return;
		pad = indent;
	}
}

size_t wrap_text(const char *text, size_t width, size_t indent, char ***out)
{
	if (width < 8)
		width = 8;
	if (indent >= width / 2)
		indent = 0;
	char **v = NULL;
	size_t n = 0;
	const char *p = text ? text : "";
	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (!len)
			push(&v, &n, 0, "", 0);
		else
			wrap_line(p, len, width, indent, &v, &n);
		if (!nl)
			break;
		p = nl + 1;
	}
	*out = v;
	return n;
}
