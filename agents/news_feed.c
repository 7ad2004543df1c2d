/* The news agent's feed reader: RSS 2.0 and Atom 1.0 (see news.h). */
#include "agents/news.h"

#include <ctype.h>
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/news_collect.h"
#include "core/util.h"
#include "core/banned.h"

/* RSS 2.0 and Atom 1.0. Element names come from expat as "URI local"
 * (namespace-aware parsing with ' ' as the separator). */

#define ATOM_NS "http://www.w3.org/2005/Atom"
#define DC_NS "http://purl.org/dc/elements/1.1/"
#define CONTENT_NS "http://purl.org/rss/1.0/modules/content/"

enum feed_kind { FEED_NONE, FEED_RSS, FEED_ATOM };

enum feed_field {
	FF_NONE, FF_TITLE, FF_ID, FF_LINK, FF_DATE822, FF_DATE3339,
	FF_UPDATED, FF_SUMMARY, FF_CONTENT, FF_SOURCE, FF_CATEGORY,
	FF_FEED_TITLE, FF_N
};

struct feed {
	XML_Parser p;
	const char *name;
	enum feed_kind kind;
	int depth;
	int channel_depth;   /* RSS <channel>, 0 outside */
	int item_depth;      /* <item> or <entry>, 0 outside */
	enum feed_field field;
	int field_depth;
	struct sbuf text;
	char *f[FF_N];       /* texts of the current item */
	char **topics;
	size_t ntopics;
	long item_line;
	char *feed_title;
	char *error;         /* fatal, set before XML_StopParser */
	struct news_collect *c;
};

static void feed_fail(struct feed *fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void feed_fail(struct feed *fd, const char *fmt, ...)
{
	if (fd->error)
		return;
	va_list ap;
	va_start(ap, fmt);
	fd->error = xvasprintf(fmt, ap);
	va_end(ap);
	XML_StopParser(fd->p, XML_FALSE);
}

static void feed_item_reset(struct feed *fd)
{
	for (int i = 0; i < FF_N; i++) {
		if (i == FF_FEED_TITLE)
			continue;
		free(fd->f[i]);
		fd->f[i] = NULL;
	}
	news_strv_free(fd->topics, fd->ntopics);
	fd->topics = NULL;
	fd->ntopics = 0;
}

static char *trimmed_copy(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

static const char *attr(const XML_Char **atts, const char *name)
{
	for (size_t i = 0; atts[i]; i += 2)
		if (!strcmp(atts[i], name))
			return atts[i + 1];
	return NULL;
}

static enum feed_field rss_field(const char *name)
{
	static const struct {
		const char *name;
		enum feed_field f;
	} map[] = {
		{ "title", FF_TITLE }, { "guid", FF_ID }, { "link", FF_LINK },
		{ "pubDate", FF_DATE822 }, { DC_NS " date", FF_DATE3339 },
		{ "description", FF_SUMMARY },
		{ CONTENT_NS " encoded", FF_CONTENT },
		{ "source", FF_SOURCE }, { "category", FF_CATEGORY },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(name, map[i].name))
			return map[i].f;
	return FF_NONE;
}

static enum feed_field atom_field(const char *name)
{
	static const struct {
		const char *name;
		enum feed_field f;
	} map[] = {
		{ ATOM_NS " title", FF_TITLE }, { ATOM_NS " id", FF_ID },
		{ ATOM_NS " published", FF_DATE3339 },
		{ ATOM_NS " updated", FF_UPDATED },
		{ ATOM_NS " summary", FF_SUMMARY },
		{ ATOM_NS " content", FF_CONTENT },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(name, map[i].name))
			return map[i].f;
	return FF_NONE;
}

static void XMLCALL feed_start(void *ud, const XML_Char *name,
			       const XML_Char **atts)
{
	struct feed *fd = ud;
	fd->depth++;
	if (fd->depth == 1) {
		if (!strcmp(name, "rss"))
			fd->kind = FEED_RSS;
		else if (!strcmp(name, ATOM_NS " feed"))
			fd->kind = FEED_ATOM;
		else
			feed_fail(fd, "not an RSS 2.0 or Atom 1.0 feed (root element <%s>)",
				  name);
		return;
	}
	if (fd->field != FF_NONE)
		return; /* markup inside a text element: its text is kept */
	enum feed_field ff = FF_NONE;
	if (fd->kind == FEED_RSS) {
		if (!fd->channel_depth && fd->depth == 2 &&
		    !strcmp(name, "channel")) {
			fd->channel_depth = 2;
		} else if (fd->channel_depth && !fd->item_depth &&
			   fd->depth == 3) {
			if (!strcmp(name, "item")) {
				fd->item_depth = 3;
				fd->item_line = (long)XML_GetCurrentLineNumber(fd->p);
			} else if (!strcmp(name, "title")) {
				ff = FF_FEED_TITLE;
			}
		} else if (fd->item_depth && fd->depth == fd->item_depth + 1) {
			ff = rss_field(name);
		}
	} else if (fd->kind == FEED_ATOM) {
		if (!fd->item_depth && fd->depth == 2) {
			if (!strcmp(name, ATOM_NS " entry")) {
				fd->item_depth = 2;
				fd->item_line = (long)XML_GetCurrentLineNumber(fd->p);
			} else if (!strcmp(name, ATOM_NS " title")) {
				ff = FF_FEED_TITLE;
			}
		} else if (fd->item_depth && fd->depth == fd->item_depth + 1) {
			if (!strcmp(name, ATOM_NS " category")) {
				const char *t = attr(atts, "term");
				if (t && *t)
					news_strv_add(&fd->topics, &fd->ntopics, t);
			} else if (!strcmp(name, ATOM_NS " link")) {
				const char *href = attr(atts, "href");
				const char *rel = attr(atts, "rel");
				if (href && !fd->f[FF_LINK] &&
				    (!rel || !strcmp(rel, "alternate")))
					fd->f[FF_LINK] = xstrdup(href);
			} else {
				ff = atom_field(name);
			}
		}
	}
	if (ff != FF_NONE) {
		fd->field = ff;
		fd->field_depth = fd->depth;
		fd->text.len = 0;
		fd->text.data[0] = '\0';
	}
}

static void XMLCALL feed_text(void *ud, const XML_Char *s, int len)
{
	struct feed *fd = ud;
	if (fd->field == FF_NONE || len <= 0)
		return;
	if (fd->text.len + (size_t)len > NEWS_FIELD_MAX) {
		feed_fail(fd, "element text over %zu bytes",
			  (size_t)NEWS_FIELD_MAX);
		return;
	}
	sbuf_add(&fd->text, s, (size_t)len);
}

/* The id of an item that has neither guid nor link: FNV-1a of its title
 * and date text, so it is stable across reads. */
static char *feed_synth_id(struct feed *fd, const char *date)
{
	uint64_t h = UINT64_C(1469598103934665603);
	const char *parts[] = { fd->f[FF_TITLE] ? fd->f[FF_TITLE] : "",
				"\n", date ? date : "" };
	for (size_t k = 0; k < ARRAY_SIZE(parts); k++)
		for (const char *c = parts[k]; *c; c++)
			h = (h ^ (unsigned char)*c) * UINT64_C(1099511628211);
	return xasprintf("urn:madf:fnv1a:%016llx", (unsigned long long)h);
}

static void feed_item_end(struct feed *fd)
{
	const char *date = NULL;
	int64_t t = 0;
	int rc = -1;
	if (fd->kind == FEED_RSS && (date = fd->f[FF_DATE822]))
		rc = news_parse_rfc822(date, &t);
	else if ((date = fd->f[FF_DATE3339]) || (date = fd->f[FF_UPDATED]))
		rc = news_parse_rfc3339(date, strlen(date), &t);
	const char *title = fd->f[FF_TITLE] ? fd->f[FF_TITLE] : "";
	const char *body = fd->f[FF_SUMMARY] && *fd->f[FF_SUMMARY] ?
				   fd->f[FF_SUMMARY] :
				   fd->f[FF_CONTENT];
	if (!body)
		body = "";
	char *why = NULL;
	if (!date) {
		why = xstrdup("item without a date (pubDate, published or updated)");
	} else if (rc < 0) {
		char *s = news_printable(date);
		why = xasprintf("item with a bad date \"%.40s\"", s);
		free(s);
	}
	if (why) {
		news_collect_warn(fd->c, fd->name, fd->item_line, why);
		free(why);
		feed_item_reset(fd);
		return;
	}
	struct news_item it;
	memset(&it, 0, sizeof(it));
	it.published_ns = t;
	it.title = xstrdup(title);
	it.body = xstrdup(body);
	if (fd->f[FF_ID] && *fd->f[FF_ID])
		it.id = xstrdup(fd->f[FF_ID]);
	else if (fd->f[FF_LINK] && *fd->f[FF_LINK])
		it.id = xstrdup(fd->f[FF_LINK]);
	else
		it.id = feed_synth_id(fd, date);
	if (fd->f[FF_LINK])
		it.url = xstrdup(fd->f[FF_LINK]);
	if (fd->f[FF_SOURCE] && *fd->f[FF_SOURCE])
		it.source = xstrdup(fd->f[FF_SOURCE]);
	it.topics = fd->topics;
	it.ntopics = fd->ntopics;
	fd->topics = NULL;
	fd->ntopics = 0;
	/* Sources left NULL get the feed title once the whole feed is read. */
	char **f[] = { &it.id, &it.title, &it.body, &it.dateline, &it.url };
	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		if (!*f[i])
			*f[i] = xstrdup("");
	news_collect_item(fd->c, &it);
	feed_item_reset(fd);
}

static void XMLCALL feed_end(void *ud, const XML_Char *name)
{
	struct feed *fd = ud;
	(void)name;
	if (fd->field != FF_NONE && fd->depth == fd->field_depth) {
		enum feed_field ff = fd->field;
		fd->field = FF_NONE;
		if (ff == FF_CATEGORY) {
			char *t = trimmed_copy(fd->text.data, fd->text.len);
			if (*t)
				news_strv_add(&fd->topics, &fd->ntopics, t);
			free(t);
		} else if (!fd->f[ff]) {
			fd->f[ff] = trimmed_copy(fd->text.data, fd->text.len);
		}
	} else if (fd->item_depth && fd->depth == fd->item_depth) {
		fd->item_depth = 0;
		feed_item_end(fd);
	} else if (fd->channel_depth && fd->depth == fd->channel_depth) {
		fd->channel_depth = 0;
	}
	fd->depth--;
}

static void XMLCALL feed_entity_decl(void *ud, const XML_Char *name,
				     int is_param, const XML_Char *value,
				     int value_len, const XML_Char *base,
				     const XML_Char *system_id,
				     const XML_Char *public_id,
				     const XML_Char *notation)
{
	(void)is_param, (void)value, (void)value_len, (void)base;
	(void)system_id, (void)public_id, (void)notation;
	feed_fail(ud, "DTD entity declarations are not accepted (entity \"%s\")",
		  name);
}

int news_parse_feed(const char *data, size_t len, const char *name,
		    int64_t from_ns, int64_t to_ns, struct news_list *out,
		    char **err)
{
	struct news_collect c;
	news_collect_init(&c, out, from_ns, to_ns);
	if (len > NEWS_FEED_MAX)
		return err_set(err, "%s: feed of %zu bytes, over the %zu-byte limit",
			       name, len, (size_t)NEWS_FEED_MAX);
	struct feed fd;
	memset(&fd, 0, sizeof(fd));
	fd.name = name;
	fd.c = &c;
	sbuf_init(&fd.text);
	sbuf_add(&fd.text, "", 0);
	fd.p = XML_ParserCreateNS(NULL, ' ');
	if (!fd.p)
		BUG("XML_ParserCreateNS: out of memory");
	XML_SetUserData(fd.p, &fd);
	XML_SetElementHandler(fd.p, feed_start, feed_end);
	XML_SetCharacterDataHandler(fd.p, feed_text);
	XML_SetEntityDeclHandler(fd.p, feed_entity_decl);
	XML_SetParamEntityParsing(fd.p, XML_PARAM_ENTITY_PARSING_NEVER);
	int rc = 0;
	if (XML_Parse(fd.p, data, (int)len, XML_TRUE) != XML_STATUS_OK) {
		unsigned long line = XML_GetCurrentLineNumber(fd.p);
		unsigned long col = XML_GetCurrentColumnNumber(fd.p) + 1;
		rc = err_set(err, "%s:%lu:%lu: %s", name, line, col,
			     fd.error ? fd.error :
					XML_ErrorString(XML_GetErrorCode(fd.p)));
	} else if (fd.kind == FEED_NONE) {
		rc = err_set(err, "%s: not an RSS or Atom feed", name);
	}
	if (rc == 0) {
		char *title = fd.f[FF_FEED_TITLE];
		const char *src = title && *title ? title : news_path_base(name);
		for (size_t i = 0; i < out->n; i++)
			if (!out->items[i].source)
				out->items[i].source = xstrdup(src);
	}
	XML_ParserFree(fd.p);
	feed_item_reset(&fd);
	free(fd.f[FF_FEED_TITLE]);
	free(fd.error);
	sbuf_release(&fd.text);
	if (rc < 0) {
		news_collect_abort(&c);
		return rc;
	}
	news_collect_finish(&c);
	return 0;
}

int news_load_rss(const char *path, int64_t from_ns, int64_t to_ns,
		  struct news_list *out, char **err)
{
	memset(out, 0, sizeof(*out));
	char *data;
	size_t len;
	if (util_read_file(path, NEWS_FEED_MAX, &data, &len, err) < 0)
		return -1;
	int rc = news_parse_feed(data, len, path, from_ns, to_ns, out, err);
	free(data);
	return rc;
}
