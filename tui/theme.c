/* Colour themes. */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "tui/theme.h"
#include "core/banned.h"

static const char *const slot_names[SLOT_COUNT] = {
	[SLOT_NORMAL] = "normal", [SLOT_TITLE] = "title", [SLOT_TAB] = "tab",
	[SLOT_HEADER] = "header", [SLOT_SELECTED] = "selected", [SLOT_MARKED] = "marked",
	[SLOT_STATUS] = "status", [SLOT_ERROR] = "error", [SLOT_WARN] = "warn",
	[SLOT_OK] = "ok", [SLOT_DIM] = "dim", [SLOT_HEADING] = "heading",
	[SLOT_METER] = "meter",
};

static const char *const colour_names[16] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
	"bright-black", "bright-red", "bright-green", "bright-yellow", "bright-blue",
	"bright-magenta", "bright-cyan", "bright-white",
};

static const struct {
	const char *name;
	int attr;
} attr_names[] = {
	{ "bold", A_BOLD }, { "reverse", A_REVERSE }, { "underline", A_UNDERLINE },
	{ "dim", A_DIM }, { "standout", A_STANDOUT }, { "normal", 0 },
};

int theme_slot_from_name(const char *s)
{
	for (int i = 0; i < SLOT_COUNT; i++)
		if (!strcmp(slot_names[i], s))
			return i;
	return -1;
}

void theme_default(struct theme *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "dark");
	for (int i = 0; i < SLOT_COUNT; i++)
		t->slot[i] = (struct theme_style){ -1, -1, 0 };
	t->slot[SLOT_TITLE] = (struct theme_style){ 15, 4, A_BOLD };
	t->slot[SLOT_TAB] = (struct theme_style){ 0, 6, A_BOLD };
	t->slot[SLOT_HEADER] = (struct theme_style){ 6, -1, A_BOLD };
	t->slot[SLOT_SELECTED] = (struct theme_style){ 0, 7, 0 };
	t->slot[SLOT_MARKED] = (struct theme_style){ 3, -1, A_BOLD };
	t->slot[SLOT_STATUS] = (struct theme_style){ 15, 8, 0 };
	t->slot[SLOT_ERROR] = (struct theme_style){ 9, -1, A_BOLD };
	t->slot[SLOT_WARN] = (struct theme_style){ 11, -1, 0 };
	t->slot[SLOT_OK] = (struct theme_style){ 10, -1, 0 };
	t->slot[SLOT_DIM] = (struct theme_style){ 8, -1, 0 };
	t->slot[SLOT_HEADING] = (struct theme_style){ 14, -1, A_BOLD };
	t->slot[SLOT_METER] = (struct theme_style){ 12, -1, 0 };
}

void theme_mono(struct theme *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "mono");
	t->mono = true;
	for (int i = 0; i < SLOT_COUNT; i++)
		t->slot[i] = (struct theme_style){ -1, -1, 0 };
	t->slot[SLOT_TITLE].attr = A_REVERSE;
	t->slot[SLOT_TAB].attr = A_BOLD | A_UNDERLINE;
	t->slot[SLOT_HEADER].attr = A_BOLD;
	t->slot[SLOT_SELECTED].attr = A_REVERSE;
	t->slot[SLOT_MARKED].attr = A_BOLD;
	t->slot[SLOT_STATUS].attr = A_REVERSE;
	t->slot[SLOT_ERROR].attr = A_BOLD;
	t->slot[SLOT_WARN].attr = A_BOLD;
	t->slot[SLOT_DIM].attr = A_DIM;
	t->slot[SLOT_HEADING].attr = A_BOLD | A_UNDERLINE;
}

static int parse_colour(const char *s, short *out)
{
	if (!strcmp(s, "default") || !strcmp(s, "-")) {
		*out = -1;
		return 0;
	}
	for (int i = 0; i < 16; i++)
		if (!strcmp(s, colour_names[i])) {
			*out = (short)i;
			return 0;
		}
	if (!strncmp(s, "colour", 6) || !strncmp(s, "color", 5)) {
		const char *d = s + (s[5] == 'r' ? 6 : 5);
		char *end;
		long v = strtol(d, &end, 10);
		if (*d && !*end && v >= 0 && v <= 255) {
			*out = (short)v;
			return 0;
		}
	}
	return -1;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

static int parse_line(char *line, struct theme *t, const char *file, int ln, char **err)
{
	char *eq = strchr(line, '=');
	if (!eq)
		return err_set(err, "%s:%d: expected \"slot = fg,bg[,attr]\"", file, ln);
	*eq = 0;
	char *name = trim(line), *val = trim(eq + 1);
	if (!strcmp(name, "mono")) {
		t->mono = !strcmp(val, "yes") || !strcmp(val, "true");
		return 0;
	}
	int s = theme_slot_from_name(name);
	if (s < 0) {
		struct sbuf b;
		sbuf_init(&b);
		for (int i = 0; i < SLOT_COUNT; i++)
			sbuf_addf(&b, "%s%s", i ? ", " : "", slot_names[i]);
		err_set(err, "%s:%d: unknown slot \"%s\" (slots: %s)", file, ln, name, b.data);
		sbuf_release(&b);
		return -1;
	}
	struct theme_style st = { -1, -1, 0 };
	char *save = NULL;
	int field = 0;
	for (char *p = strtok_r(val, ",", &save); p; p = strtok_r(NULL, ",", &save), field++) {
		p = trim(p);
		if (field < 2) {
			if (parse_colour(p, field ? &st.bg : &st.fg) < 0)
				return err_set(err, "%s:%d: unknown colour \"%s\" (black, red, green, "
					       "yellow, blue, magenta, cyan, white, bright-NAME, "
					       "colourN 0..255, default)", file, ln, p);
			continue;
		}
		size_t i;
		for (i = 0; i < ARRAY_SIZE(attr_names); i++)
			if (!strcmp(p, attr_names[i].name))
				break;
		if (i == ARRAY_SIZE(attr_names))
			return err_set(err, "%s:%d: unknown attribute \"%s\" (bold, reverse, "
				       "underline, dim, standout, normal)", file, ln, p);
		st.attr |= attr_names[i].attr;
	}
	if (field < 2)
		return err_set(err, "%s:%d: \"%s\" needs fg,bg", file, ln, name);
	t->slot[s] = st;
	return 0;
}

int theme_parse(const char *text, size_t len, const char *origin, struct theme *t, char **err)
{
	size_t off = 0;
	int ln = 0;
	while (off < len) {
		ln++;
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		if (memchr(text + off, '\0', n))
			return err_set(err, "%s:%d: a NUL byte", origin, ln);
		char *line = xstrndup(text + off, n);
		off += n + (nl ? 1 : 0);
		char *p = trim(line);
		int r = !*p || *p == '#' ? 0 : parse_line(p, t, origin, ln, err);
		free(line);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int load_file(const char *path, struct theme *t, char **err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(err, "%s: %s", path, strerror(errno));
	struct sbuf b;
	sbuf_init(&b);
	char chunk[4096];
	size_t n;
	int rc = 0;
	while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.len + n > THEME_FILE_MAX)
			rc = err_set(err, "%s: over %zu bytes", path, (size_t)THEME_FILE_MAX);
		else
			sbuf_add(&b, chunk, n);
	}
	if (rc == 0 && ferror(f))
		rc = err_set(err, "%s: %s", path, strerror(errno));
	fclose(f);
	if (rc == 0)
		rc = theme_parse(b.data ? b.data : "", b.len, path, t, err);
	sbuf_release(&b);
	return rc;
}

/* The directory of the running binary ("" when unknown), once. */
static const char *exe_dir(void)
{
	static char dir[4096];
	static bool done;
	if (done)
		return dir;
	done = true;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		dir[0] = 0;
		return dir;
	}
	dir[n] = 0;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		dir[0] = 0;
	return dir;
}

#define THEME_NDIRS 7

/* Where themes are looked for, in order (caller frees): $MADF_THEME_DIR,
 * next to the binary (themes/ beside a built ./madf, ../share/madf/themes
 * for an installed one, ../../themes for build/{rel,san}/madf), ./themes,
 * then the usual installed places. */
static char *theme_dir(size_t i)
{
	const char *e = exe_dir();
	switch (i) {
	case 0: return getenv("MADF_THEME_DIR") && *getenv("MADF_THEME_DIR") ?
		       xstrdup(getenv("MADF_THEME_DIR")) : NULL;
	case 1: return *e ? xasprintf("%s/themes", e) : NULL;
	case 2: return *e ? xasprintf("%s/../share/madf/themes", e) : NULL;
	case 3: return *e ? xasprintf("%s/../../themes", e) : NULL;
	case 4: return xstrdup("themes");
	case 5: return xstrdup("/usr/local/share/madf/themes");
	case 6: return xstrdup("/usr/share/madf/themes");
	default: return NULL;
	}
}

int theme_load(const char *name, struct theme *t, char **err)
{
	theme_default(t);
	if (strchr(name, '/')) {
		snprintf(t->name, sizeof(t->name), "%s", name);
		return load_file(name, t, err);
	}
	if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(name))
		return err_set(err, "invalid theme name \"%s\"", name);
	for (size_t i = 0; i < THEME_NDIRS; i++) {
		char *d = theme_dir(i);
		if (!d)
			continue;
		char *path = xasprintf("%s/%s.theme", d, name);
		free(d);
		FILE *f = fopen(path, "r");
		if (f) {
			fclose(f);
			snprintf(t->name, sizeof(t->name), "%s", name);
			int r = load_file(path, t, err);
			free(path);
			return r;
		}
		free(path);
	}
	if (!strcmp(name, "dark"))
		return 0; /* built in */
	if (!strcmp(name, "mono")) {
		theme_mono(t);
		return 0; /* built in too: NO_COLOR needs it */
	}
	return err_set(err, "theme \"%s\" not found (themes/%s.theme beside madf, in "
		       "share/madf/themes or $MADF_THEME_DIR)", name, name);
}

char **theme_list(size_t *n)
{
	char **v = NULL;
	*n = 0;
	for (size_t i = 0; i < THEME_NDIRS; i++) {
		char *d = theme_dir(i);
		DIR *dir = d ? opendir(d) : NULL;
		free(d);
		struct dirent *e;
		while (dir && (e = readdir(dir))) {
			size_t len = strlen(e->d_name);
			if (len < 7 || strcmp(e->d_name + len - 6, ".theme"))
				continue;
			char *nm = xstrndup(e->d_name, len - 6);
			bool dup = false;
			for (size_t k = 0; k < *n; k++)
				dup = dup || !strcmp(v[k], nm);
			if (dup) {
				free(nm);
				continue;
			}
			v = xrealloc(v, (*n + 1) * sizeof(*v));
			v[(*n)++] = nm;
		}
		if (dir)
			closedir(dir);
	}
	return v;
}

/* A colour the terminal has: 256 -> 16 -> 8. */
static short fit_colour(short c, int *attr, bool fg)
{
	if (c < 0)
		return -1;
	if (c >= 16 && COLORS < 256) {
		if (c >= 232) { /* grey ramp */
			int g = c - 232;
			c = g < 6 ? 0 : g < 12 ? 8 : g < 18 ? 7 : 15;
		} else { /* 6x6x6 cube to the nearest of the 16 */
			int v = c - 16, r = v / 36, g = (v / 6) % 6, b = v % 6;
			int bright = (r > 3 || g > 3 || b > 3) ? 8 : 0;
			c = (short)(((r > 1) ? 1 : 0) | ((g > 1) ? 2 : 0) | ((b > 1) ? 4 : 0));
			if (c == 0 && (r || g || b))
				c = 8;
			else
				c = (short)(c + bright);
		}
	}
	if (c >= 8 && COLORS < 16) {
		if (fg)
			*attr |= A_BOLD;
		c = (short)(c - 8);
	}
	return c;
}

void theme_apply(struct theme *t)
{
	if (t->mono || !has_colors() || getenv("NO_COLOR"))
		return;
	for (int i = 0; i < SLOT_COUNT; i++) {
		int extra = 0;
		short fg = fit_colour(t->slot[i].fg, &extra, true);
		short bg = fit_colour(t->slot[i].bg, &extra, false);
		init_pair((short)(i + 1), fg, bg);
		(void)extra;
	}
}

/* Without colours the cursor line and the current tab must still stand
 * out: the selection in reverse video, the tab the opposite of the title
 * line it sits on (and bold). */
static int mono_attr(const struct theme *t, enum theme_slot s)
{
	int attr = t->slot[s].attr;
	if (s == SLOT_SELECTED && !(attr & (A_REVERSE | A_STANDOUT)))
		attr |= A_REVERSE;
	if (s == SLOT_TAB) {
		bool title_rev = (t->slot[SLOT_TITLE].attr & (A_REVERSE | A_STANDOUT)) != 0;
		bool tab_rev = (attr & (A_REVERSE | A_STANDOUT)) != 0;
		if (title_rev == tab_rev)
			attr = title_rev ? (attr & ~(A_REVERSE | A_STANDOUT)) | A_BOLD | A_UNDERLINE :
			       attr | A_REVERSE | A_BOLD;
	}
	return attr;
}

int theme_attr(const struct theme *t, enum theme_slot s)
{
	int attr = t->slot[s].attr;
	if (t->mono || !has_colors() || getenv("NO_COLOR"))
		return mono_attr(t, s);
	int extra = 0;
	fit_colour(t->slot[s].fg, &extra, true);
	return attr | extra | COLOR_PAIR(s + 1);
}
