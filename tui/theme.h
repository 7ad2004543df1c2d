/* Colour themes: named slots mapped to colours by themes/NAME.theme files
 * ("slot = fg,bg[,attr]" lines), with 256/16/8-colour fallback and a
 * monochrome mode (NO_COLOR, or a terminal without colours). */
#ifndef MADF_THEME_H
#define MADF_THEME_H

#include <stdbool.h>
#include <stddef.h>

#define THEME_FILE_MAX ((size_t)64 << 10) /* the largest theme file */

enum theme_slot {
	SLOT_NORMAL,
	SLOT_TITLE,     /* the view tabs line */
	SLOT_TAB,       /* the current view's tab */
	SLOT_HEADER,    /* column headers */
	SLOT_SELECTED,  /* the cursor line */
	SLOT_MARKED,
	SLOT_STATUS,    /* the bottom line */
	SLOT_ERROR,
	SLOT_WARN,
	SLOT_OK,
	SLOT_DIM,
	SLOT_HEADING,   /* report headings, group headings */
	SLOT_METER,
	SLOT_COUNT
};

struct theme_style {
	short fg, bg;   /* -1: terminal default; 0..255 */
	int attr;       /* curses A_* bits */
};

struct theme {
	char name[64];
	struct theme_style slot[SLOT_COUNT];
	bool mono;      /* attributes only */
};

/* The slot named s ("selected"), or -1. */
int theme_slot_from_name(const char *s);
/* The built-in dark theme (also what a missing themes/ gives). */
void theme_default(struct theme *t);
/* The built-in monochrome theme (attributes only), as themes/mono.theme. */
void theme_mono(struct theme *t);
/* Loads NAME (themes/NAME.theme looked up in $MADF_THEME_DIR, then beside
 * the binary: themes/, ../share/madf/themes, ../../themes; then ./themes,
 * /usr/local/share/madf/themes, /usr/share/madf/themes) or a path
 * containing '/'. "dark" and "mono" are built in when no file is found.
 * Returns 0, or -1 with *err "FILE:LINE: what" (caller frees). */
int theme_load(const char *name, struct theme *t, char **err);
/* Applies theme file text of len bytes ("slot = fg,bg[,attr]" and "mono =
 * yes" lines, blank lines, # comments) to t, what theme_load does with
 * the file; origin names it in errors. Returns 0, or -1 with *err
 * "ORIGIN:LINE: what" at the first bad line (a NUL byte, an unknown slot,
 * colour or attribute; the lines before it applied). */
int theme_parse(const char *text, size_t len, const char *origin, struct theme *t,
		char **err);
/* Theme names found, for completion; caller frees each and the array. */
char **theme_list(size_t *n);
/* Sets up colour pairs for the terminal's colours (curses must be up). */
void theme_apply(struct theme *t);
/* The curses attributes of a slot (pair and attributes). Without colours
 * the selected line is always in reverse video and the current tab
 * differs from the title line. */
int theme_attr(const struct theme *t, enum theme_slot s);

#endif
