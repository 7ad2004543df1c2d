/* HTML entities in news text (see events.h). */
#include "agents/events.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

char *events_decode_entities(const char *s)
{
	struct sbuf b;
	sbuf_init(&b);
	static const struct { const char *name; char c; } named[] = {
		{ "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' },
	};
	for (const char *p = s ? s : ""; *p;) {
		if (*p == '&') {
			const char *semi = strchr(p, ';');
			if (semi && semi - p <= 8) {
				size_t n = (size_t)(semi - p - 1);
				int c = -1;
				for (size_t i = 0; i < ARRAY_SIZE(named); i++)
					if (strlen(named[i].name) == n && !strncmp(p + 1, named[i].name, n))
						c = named[i].c;
				if (c < 0 && n >= 2 && p[1] == '#') {
					char *end;
					bool hex = p[2] == 'x' || p[2] == 'X';
					long v = strtol(p + (hex ? 3 : 2), &end, hex ? 16 : 10);
					if (end == semi && v >= 32 && v < 127)
						c = (int)v;
				}
				if (c >= 0) {
					sbuf_addch(&b, (char)c);
					p = semi + 1;
					continue;
				}
			}
		}
		sbuf_addch(&b, *p++);
	}
	return sbuf_detach(&b);
}
