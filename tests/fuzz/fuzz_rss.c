/* libFuzzer target: the RSS 2.0 / Atom 1.0 reader, news_parse_feed on an
 * exact-size buffer as live_rss_load calls it (every time, no window),
 * then again with a window as news_load_rss does. Every story of a feed
 * it accepts has its strings (never NULL) and the stories are sorted by
 * time; the window keeps exactly the stories inside it; a refusal has an
 * error naming the feed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/news.h"

#include "core/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_rss: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void fuzz_check_list(const struct news_list *nl)
{
	for (size_t i = 0; i < nl->n; i++) {
		const struct news_item *it = &nl->items[i];
		if (!it->id || !it->source || !it->title || !it->body || !it->dateline || !it->url)
			fuzz_fail("a story with a NULL string", NULL);
		for (size_t k = 0; k < it->ntopics; k++)
			if (!it->topics[k])
				fuzz_fail("a NULL topic", it->id);
		if (i && it->published_ns < nl->items[i - 1].published_ns)
			fuzz_fail("stories out of order", it->id);
	}
	if (nl->nbad && !nl->warnings)
		fuzz_fail("bad stories without a warning", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly size bytes, so ASan sees any read past the end. */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	struct news_list all, win;
	char *err = NULL;
	if (news_parse_feed(buf, size, "fuzz.rss", NEWS_TIME_ALL_FROM, NEWS_TIME_ALL_TO, &all,
			    &err) == 0) {
		if (err)
			fuzz_fail("accepted with an error", err);
		fuzz_check_list(&all);
		/* The window [1987-03-01, 2000-01-01). */
		const int64_t from = 541555200LL * 1000000000, to = 946684800LL * 1000000000;
		if (news_parse_feed(buf, size, "fuzz.rss", from, to, &win, &err) != 0)
			fuzz_fail("refused with a window what it took without", err);
		fuzz_check_list(&win);
		size_t inside = 0;
		for (size_t i = 0; i < all.n; i++)
			inside += all.items[i].published_ns >= from && all.items[i].published_ns < to;
		if (win.n != inside || win.nbad != all.nbad)
			fuzz_fail("the window does not keep the stories inside it", NULL);
		for (size_t i = 0, j = 0; i < all.n; i++) {
			if (all.items[i].published_ns < from || all.items[i].published_ns >= to)
				continue;
			if (strcmp(all.items[i].id, win.items[j].id) ||
			    strcmp(all.items[i].title, win.items[j].title))
				fuzz_fail("the window changed a story", all.items[i].id);
			j++;
		}
		news_list_release(&win);
		news_list_release(&all);
	} else if (!err || strncmp(err, "fuzz.rss", 8)) {
		fuzz_fail("refused without an error naming the feed", err);
	}
	free(err);
	free(buf);
	return 0;
}
