/* News stories: loading a JSON-lines newswire, RSS 2.0 and Atom 1.0 feeds
 * (expat), and a deterministic simulated feed of central-bank and FX
 * headlines for runs without data. */
#ifndef MADF_NEWS_H
#define MADF_NEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NEWS_LINE_MAX ((size_t)1 << 20)   /* longest JSON line accepted */
#define NEWS_FEED_MAX ((size_t)64 << 20)  /* largest RSS/Atom file */
#define NEWS_FIELD_MAX ((size_t)1 << 20)  /* longest text of one element */
#define NEWS_WARN_MAX 20                  /* warnings kept in full */
#define NEWS_TIME_ALL_FROM INT64_MIN      /* from_ns/to_ns for "no limit" */
#define NEWS_TIME_ALL_TO INT64_MAX

/* One story. Every string is allocated and never NULL (empty when the
 * source has none); the arrays hold ntopics / nplaces / norgs strings. */
struct news_item {
	char *id;          /* JSONL id, RSS guid (else link), Atom id */
	char *source;      /* "Reuters", the feed's title, or "simulated" */
	char *title;
	char *body;        /* JSONL body, RSS description, Atom summary */
	char *dateline;
	char *url;         /* RSS link, Atom link href */
	int64_t published_ns; /* UTC, ns since the epoch */
	char **topics;     /* JSONL topics, RSS category, Atom category@term */
	size_t ntopics;
	char **places;
	size_t nplaces;
	char **orgs;
	size_t norgs;
};

/* Stories sorted by published_ns (ties keep the source order). A load
 * fills a list from scratch; news_list_release frees it and every item. */
struct news_list {
	struct news_item *items;
	size_t n;
	size_t nbad;       /* records skipped because they were malformed */
	size_t nout;       /* well-formed records outside [from_ns, to_ns) */
	/* "file:line: why\n" for the first NEWS_WARN_MAX bad records, NULL
	 * when there were none; nbad counts them all. */
	char *warnings;
};

/* Reads a JSON-lines file (one object a line: id, source, published_at
 * RFC 3339, topics[], places[], orgs[], title, dateline, body; strings may
 * be null or absent except id and published_at) keeping the stories with
 * from_ns <= published < to_ns. Lines are streamed; a line over
 * NEWS_LINE_MAX, one that is not valid JSON or has a field of the wrong
 * type or a repeated key is counted in nbad with a warning and skipped.
 * Blank lines are ignored. The published_at of each line is found without
 * building the JSON tree, so lines outside the range cost little.
 * Returns 0, or -1 with *err (caller frees) when the file cannot be read;
 * on success the caller releases out. */
int news_load_jsonl(const char *path, int64_t from_ns, int64_t to_ns,
		    struct news_list *out, char **err);

/* Parses one JSON line into *it (released with news_item_release).
 * default_source is used when the line has no source. Returns 0, or -1
 * with *why (caller frees). */
int news_parse_jsonl_line(const char *line, size_t len,
			  const char *default_source, struct news_item *it,
			  char **why);

/* Reads an RSS 2.0 (rss/channel/item: title, guid, link, pubDate RFC 822
 * else dc:date, category, description else content:encoded, source) or
 * Atom 1.0 (feed/entry: title, id, published else updated RFC 3339,
 * category@term, summary else content, link@href) file, keeping the
 * stories with from_ns <= published < to_ns. Text is kept as the feed
 * gives it after XML decoding (HTML inside a description is not stripped),
 * trimmed of surrounding white space.
 *
 * Fatal, -1 with *err naming file, line and column: XML that is not well
 * formed (unclosed tags, undefined entities, ...), any DTD entity
 * declaration (which stops billion-laughs expansion before it starts;
 * external entities are never loaded), a root that is neither <rss> nor
 * an Atom <feed>, a file over NEWS_FEED_MAX or an element text over
 * NEWS_FIELD_MAX. Per item, counted in nbad with a warning naming the
 * line: a missing or unparsable date (the item is skipped, the rest of the
 * feed is kept). On success the caller releases out. */
int news_load_rss(const char *path, int64_t from_ns, int64_t to_ns,
		  struct news_list *out, char **err);

/* The same on a buffer; name is used in messages and as the default
 * source. */
int news_parse_feed(const char *data, size_t len, const char *name,
		    int64_t from_ns, int64_t to_ns, struct news_list *out,
		    char **err);

/* A deterministic simulated feed for [start_ns, end_ns): each weekday a
 * few central-bank decisions (hold, hike, cut), interventions, official
 * statements and FX market reports, written like wire copy so the news
 * analytics classify them. Every item has source "simulated" and an id
 * "sim-..."; a day's stories depend only on the seed and the day. Returns
 * 0 or -1 with *err (start after end, or over ten years); on success the
 * caller releases out. */
int news_sim(int64_t start_ns, int64_t end_ns, uint64_t seed,
	     struct news_list *out, char **err);

void news_item_release(struct news_item *it);
void news_list_release(struct news_list *l);

/* True when the item carries the topic (exact, case-sensitive). */
bool news_item_has_topic(const struct news_item *it, const char *topic);

/* Dates. Both return 0 with *t_ns (UTC), or -1. */
/* RFC 822 / 2822: "[Sun, ]01 Mar 1987 02:02:38 +0000"; seconds optional;
 * zones +hhmm, -hhmm, GMT, UT, UTC, Z and the US zones EST..PDT. */
int news_parse_rfc822(const char *s, int64_t *t_ns);
/* RFC 3339: "1987-03-01T02:02:38Z", fraction and +hh:mm allowed. */
int news_parse_rfc3339(const char *s, size_t len, int64_t *t_ns);

#endif
