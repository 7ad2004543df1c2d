/* The local day of a story (see events.h): the day its "today" means. */
#include "agents/events.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "agents/market.h"
#include "core/banned.h"

/* Month and day of a dateline ("TOKYO, March 24 -", "LONDON, Feb 27 -"):
 * 0 when it names none. */
static int dateline_month_day(const char *dl, int *mon, int *mday)
{
	static const char *const months[] = { "jan", "feb", "mar", "apr", "may", "jun", "jul",
					      "aug", "sep", "oct", "nov", "dec" };
	for (const char *p = dl; p && *p; p++) {
		if (!isupper((unsigned char)*p) || (p > dl && isalpha((unsigned char)p[-1])))
			continue;
		for (int m = 0; m < 12; m++) {
			if (strncasecmp(p, months[m], 3))
				continue;
			const char *q = p + 3;
			while (isalpha((unsigned char)*q) || *q == '.')
				q++;
			while (*q == ' ')
				q++;
			if (!isdigit((unsigned char)*q))
				continue;
			int d = atoi(q);
			if (d < 1 || d > 31)
				continue;
			*mon = m + 1;
			*mday = d;
			return 1;
		}
	}
	return 0;
}

static bool starts_asian_city(const char *t)
{
	static const char *const cities[] = { "TOKYO", "SYDNEY", "WELLINGTON", "HONG KONG",
		"SINGAPORE", "SEOUL", "TAIPEI", "MANILA", "JAKARTA", "KUALA LUMPUR", "BANGKOK",
		"MELBOURNE", "BOMBAY", "PEKING", "BEIJING", NULL };
	while (t && *t == ' ')
		t++;
	for (size_t i = 0; t && cities[i]; i++) {
		size_t n = strlen(cities[i]);
		if (!strncasecmp(t, cities[i], n) && !isalpha((unsigned char)t[n]))
			return true;
	}
	return false;
}

int32_t events_local_day(int32_t utc_day, int utc_sec, const char *dateline, const char *title,
			 const char *body)
{
	int mon = 0, mday = 0;
	if (dateline && *dateline) {
		if (!dateline_month_day(dateline, &mon, &mday))
			return utc_day;
		/* The dateline's day when it is the UTC day or one either
		 * side; a typo ("March 2" for April 2) leaves the UTC day. */
		for (int32_t d = utc_day - 1; d <= utc_day + 1; d++) {
			int y, m, dd;
			market_day_to_ymd(d, &y, &m, &dd);
			if (m == mon && dd == mday)
				return d;
		}
		return utc_day;
	}
	/* A flash with no dateline, sent after midnight in Tokyo (15:00
	 * UTC): of the next day when it is from an Asian market ("TOKYO -
	 * Bank of Japan buys", "... - Tokyo dealers"), or when it tells of
	 * "this morning" after 18:00 UTC, when no European or American
	 * morning is under way. */
	if (utc_sec < 15 * 3600)
		return utc_day;
	/* After 22:00 UTC New York has closed and Asia opened. */
	if (utc_sec >= 22 * 3600)
		return utc_day + 1;
	bool asian = starts_asian_city(title) || (title && strcasestr(title, "tokyo dealers")) ||
		     (title && strcasestr(title, "in tokyo"));
	bool morning = utc_sec >= 18 * 3600 &&
		       ((title && strcasestr(title, "this morning")) ||
			(body && strcasestr(body, "this morning")));
	return asian || morning ? utc_day + 1 : utc_day;
}

int32_t events_local_day_iso(const char *published_at, const char *dateline, const char *title,
			     const char *body, bool *ok)
{
	int32_t day = 0;
	*ok = published_at && strlen(published_at) >= 10 &&
	      market_day_parse(published_at, 10, &day) == 0;
	if (!*ok)
		return 0;
	int sec = 0;
	const char *t = published_at + 10;
	if ((*t == 'T' || *t == ' ') && isdigit((unsigned char)t[1]) && isdigit((unsigned char)t[2]) &&
	    t[3] == ':' && isdigit((unsigned char)t[4]) && isdigit((unsigned char)t[5]))
		sec = ((t[1] - '0') * 10 + (t[2] - '0')) * 3600 + ((t[4] - '0') * 10 + (t[5] - '0')) * 60;
	/* A time with an offset other than UTC is not read: its day stays. */
	if (strlen(t) > 6 && (strchr(t + 6, '+') || strchr(t + 6, '-')))
		sec = 0;
	return events_local_day(day, sec, dateline, title, body);
}
