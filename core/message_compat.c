/* Time stamps, and what madf reads beyond its canonical form from writers
 * that follow seed 002's reference code: pydantic's message.json() writes
 * datetime.utcnow() without a zone, which is read here as UTC and noted in
 * the message ("<path>_assumed_utc"). */
#include "core/message_compat.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/banned.h"

#define TIME_MIN_S (-9214560000LL)  /* 1678-01-01T00:00:00Z */
#define TIME_END_S 9214646400LL     /* 2262-01-01T00:00:00Z */
#define NOTE_MAX 128

/* ---- Time ---- */

struct civil {
	int year, mon, day, hour, min, sec;
	long nsec;
	int offset_s;
	bool naive; /* no zone given */
};

static bool parse_digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static int month_days(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31 };
	bool leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
	return m == 2 && leap ? 29 : days[m - 1];
}

static bool time_split_fraction(const char **pp, long *nsec)
{
	const char *p = *pp;
	int n = 0;
	*nsec = 0;
	if (*p != '.')
		return true;
	for (p++; *p >= '0' && *p <= '9'; p++, n++)
		if (n < 9)
			*nsec = *nsec * 10 + (*p - '0');
	if (n == 0 || n > 9)
		return false;
	for (int i = n; i < 9; i++)
		*nsec *= 10;
	*pp = p;
	return true;
}

/* Z, +HH:MM, -HH:MM, or nothing (naive, offset 0). */
static bool time_split_zone(const char *p, struct civil *c)
{
	int h, m;
	c->offset_s = 0;
	c->naive = p[0] == '\0';
	if (c->naive || (p[0] == 'Z' && p[1] == '\0'))
		return true;
	if ((p[0] != '+' && p[0] != '-') || !parse_digits(p + 1, 2, &h) ||
	    p[3] != ':' || !parse_digits(p + 4, 2, &m) || p[6] != '\0' ||
	    h > 23 || m > 59)
		return false;
	c->offset_s = (p[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
	return true;
}

/* YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|-HH:MM], a real calendar date. */
static bool time_split(const char *s, struct civil *c)
{
	if (!parse_digits(s, 4, &c->year) || s[4] != '-' ||
	    !parse_digits(s + 5, 2, &c->mon) || s[7] != '-' ||
	    !parse_digits(s + 8, 2, &c->day) || s[10] != 'T' ||
	    !parse_digits(s + 11, 2, &c->hour) || s[13] != ':' ||
	    !parse_digits(s + 14, 2, &c->min) || s[16] != ':' ||
	    !parse_digits(s + 17, 2, &c->sec))
		return false;
	const char *p = s + 19;
	if (!time_split_fraction(&p, &c->nsec) || !time_split_zone(p, c))
		return false;
	return c->year >= 1 && c->mon >= 1 && c->mon <= 12 && c->day >= 1 &&
	       c->day <= month_days(c->year, c->mon) && c->hour <= 23 &&
	       c->min <= 59 && c->sec <= 59;
}

enum msg_time_form msg_time_read(const char *s, int64_t *ns)
{
	struct civil c;
	if (!s || !time_split(s, &c))
		return MSG_TIME_BAD;
	struct tm tm = {
		.tm_year = c.year - 1900,
		.tm_mon = c.mon - 1,
		.tm_mday = c.day,
		.tm_hour = c.hour,
		.tm_min = c.min,
		.tm_sec = c.sec,
	};
	int64_t sec = (int64_t)timegm(&tm) - c.offset_s;
	if (sec < TIME_MIN_S || sec >= TIME_END_S)
		return MSG_TIME_RANGE;
	*ns = sec * 1000000000 + c.nsec;
	return c.naive ? MSG_TIME_NAIVE : MSG_TIME_ZONED;
}

int msg_parse_time(const char *s, int64_t *ns)
{
	int64_t t;
	if (msg_time_read(s, &t) != MSG_TIME_ZONED)
		return -1;
	*ns = t;
	return 0;
}

/* ---- Notes ---- */

bool msg_valid_note(const char *note)
{
	if (!note)
		return false;
	size_t n = 0;
	for (const char *p = note; *p; p++, n++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' ||
			  c == ':' || c == '-';
		if (!ok || n >= NOTE_MAX)
			return false;
	}
	return n > 0;
}

bool msg_has_note(const struct msg *m, const char *note)
{
	for (const cJSON *c = m->notes ? m->notes->child : NULL; c; c = c->next)
		if (cJSON_IsString(c) && !strcmp(c->valuestring, note))
			return true;
	return false;
}

int msg_note_add(struct msg *m, const char *note)
{
	if (!msg_valid_note(note))
		return -1;
	if (msg_has_note(m, note))
		return 0;
	if (cJSON_GetArraySize(m->notes) >= MSG_NOTES_MAX)
		return -1;
	if (!m->notes)
		m->notes = cJSON_CreateArray();
	cJSON_AddItemToArray(m->notes, cJSON_CreateString(note));
	return 0;
}

int msg_time_assume_utc(struct msg *m, cJSON *item, const char *path)
{
	int64_t ns;
	if (!cJSON_IsString(item) ||
	    msg_time_read(item->valuestring, &ns) != MSG_TIME_NAIVE)
		return 0;
	char *note = xasprintf("%s%s", path, MSG_NOTE_ASSUMED_UTC);
	int r = msg_note_add(m, note);
	free(note);
	if (r < 0)
		return -1;
	char *zoned = xasprintf("%sZ", item->valuestring);
	/* Out of memory, it stays as it was and fails validation. */
	cJSON_SetValuestring(item, zoned);
	free(zoned);
	return 1;
}

static int note_errors(struct msg_errors *errs, const char *label,
		       const cJSON *arr)
{
	int n = 0;
	if (cJSON_GetArraySize(arr) > MSG_NOTES_MAX) {
		msg_errors_add(errs, "%s: at most %d notes", label, MSG_NOTES_MAX);
		return 1;
	}
	size_t i = 0;
	for (const cJSON *c = arr->child; c; c = c->next, i++) {
		if (cJSON_IsString(c) && msg_valid_note(c->valuestring))
			continue;
		msg_errors_add(errs, "%s[%zu]: must match [A-Za-z0-9_.:-]{1,128}",
			       label, i);
		n++;
	}
	return n;
}

int msg_notes_read(struct msg *m, const cJSON *item, const char *label,
		   struct msg_errors *errs)
{
	if (cJSON_IsNull(item))
		return 0;
	if (!cJSON_IsArray(item)) {
		msg_errors_add(errs, "%s: must be an array of strings", label);
		return 1;
	}
	int n = note_errors(errs, label, item);
	for (const cJSON *c = item->child; !n && c; c = c->next)
		msg_note_add(m, c->valuestring);
	return n;
}

int msg_notes_check(const struct msg *m, struct msg_errors *errs)
{
	if (!m->notes)
		return 0;
	if (!cJSON_IsArray(m->notes)) {
		msg_errors_add(errs, "notes: must be an array of strings");
		return 1;
	}
	return note_errors(errs, "notes", m->notes);
}
