/* libFuzzer target: theme files, theme_parse on an exact-size buffer as
 * theme_load calls it on a file (no curses needed). Every slot of a theme
 * it accepts, or of one it stopped reading, has colours in -1..255 and
 * known attributes; a refusal has an error naming file and line. */
#include <curses.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_theme: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct theme t;
	theme_default(&t);
	char *err = NULL;
	int r = theme_parse(buf, size, "fuzz.theme", &t, &err);
	if (r == 0 && err)
		fuzz_fail("accepted with an error", err);
	if (r < 0 && (!err || strncmp(err, "fuzz.theme:", 11)))
		fuzz_fail("refused without an error naming file and line", err);
	const int known = A_BOLD | A_REVERSE | A_UNDERLINE | A_DIM | A_STANDOUT;
	for (int s = 0; s < SLOT_COUNT; s++) {
		const struct theme_style *st = &t.slot[s];
		if (st->fg < -1 || st->fg > 255 || st->bg < -1 || st->bg > 255)
			fuzz_fail("a colour out of range", NULL);
		if (st->attr & ~known)
			fuzz_fail("an unknown attribute", NULL);
	}
	free(err);
	free(buf);
	return 0;
}
