/* The report writer's rendering: a run snapshot of the week ending
 * 1987-03-27 (FRED closes, Reuters story ids) to Markdown and JSON, read
 * the way a reader of the weekly would: the table row, the summary, the
 * event bullets, the findings by verdict, failures, provenance, drafts,
 * hostile text from news stories, the JSON twin, sparklines, file names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/report.h"
#include "core/json_out.h"
#include "core/util.h"

#include "core/banned.h"

/* The snapshot, in JSON with ' for " to keep it readable. EUR/USD has no
 * figures (no euro in 1987); the USD/JPY market task was reassigned. */
static const char SNAPSHOT[] =
	"{'run_id': 'weekly-1987-W13-6f2a', 'iso_week': '1987-W13',"
	" 'title': 'Weekly Asia/G10 FX report', 'status': 'done',"
	" 'as_of': '1987-03-27T21:00:00Z',"
	" 'window': {'start': '1987-03-20', 'end': '1987-03-27'},"
	" 'pairs': ['USD/JPY', 'EUR/USD', 'GBP/USD', 'AUD/USD'],"
	" 'sources': {'market': 'csv:../shared/data/fx/fred-daily-1971-2017.csv',"
	"   'news': 'jsonl:../shared/data/news/reuters21578.jsonl',"
	"   'market_simulated': false, 'news_simulated': false},"
	" 'market': {"
	"  'USD/JPY': {'pair': 'USD/JPY', 'simulated': false,"
	"   'start': {'date': '1987-03-20', 'close': 151.70},"
	"   'end': {'date': '1987-03-27', 'close': 147.72},"
	"   'change_pct': -2.6236, 'high': 151.70, 'low': 147.72,"
	"   'volatility_annualised_pct': 9.87, 'zscore': -1.84, 'trend': 'down',"
	"   'ma_short': 149.12, 'ma_long': 151.35,"
	"   'largest_move': {'date': '1987-03-27', 'pct': -0.99},"
	"   'observations': 6, 'freshness_days': 0,"
	"   'closes': [{'date': '1987-03-20', 'close': 151.70}, {'date': '1987-03-23', 'close': 150.25},"
	"    {'date': '1987-03-24', 'close': 149.32}, {'date': '1987-03-25', 'close': 149.15},"
	"    {'date': '1987-03-26', 'close': 149.20}, {'date': '1987-03-27', 'close': 147.72}],"
	"   'agent': 'research_agent_2', 'message_id': 'm-0007',"
	"   'source': 'csv:../shared/data/fx/fred-daily-1971-2017.csv rows 1987-03-20..1987-03-27'},"
	"  'GBP/USD': {'pair': 'GBP/USD', 'simulated': false,"
	"   'start': {'date': '1987-03-20', 'close': 1.6023},"
	"   'end': {'date': '1987-03-27', 'close': 1.6031},"
	"   'change_pct': 0.0481, 'high': 1.6171, 'low': 1.6023,"
	"   'volatility_annualised_pct': 7.12, 'zscore': null, 'trend': 'flat',"
	"   'observations': 6, 'freshness_days': 0,"
	"   'closes': [{'date': '1987-03-20', 'close': 1.6023}, {'date': '1987-03-23', 'close': 1.6171},"
	"    {'date': '1987-03-24', 'close': 1.6100}, {'date': '1987-03-25', 'close': 1.6059},"
	"    {'date': '1987-03-26', 'close': 1.6059}, {'date': '1987-03-27', 'close': 1.6031}],"
	"   'agent': 'research_agent_1', 'message_id': 'm-0005',"
	"   'source': 'csv:../shared/data/fx/fred-daily-1971-2017.csv rows 1987-03-20..1987-03-27'},"
	"  'AUD/USD': {'pair': 'AUD/USD', 'simulated': false,"
	"   'start': {'date': '1987-03-20', 'close': 0.6857},"
	"   'end': {'date': '1987-03-27', 'close': 0.6980},"
	"   'change_pct': 1.7938, 'high': 0.6980, 'low': 0.6857,"
	"   'volatility_annualised_pct': null, 'zscore': 1.21, 'trend': null,"
	"   'observations': 6, 'freshness_days': 0,"
	"   'agent': 'research_agent_1', 'message_id': 'm-0006',"
	"   'source': 'csv:../shared/data/fx/fred-daily-1971-2017.csv rows 1987-03-20..1987-03-27'}},"
	" 'events': ["
	"  {'id': 'ev-2', 'bank': 'Bundesbank', 'action': 'intervention', 'date': '1987-03-25',"
	"   'title': 'BUNDESBANK BUYS DOLLARS IN FRANKFURT - DEALERS',"
	"   'sources': ['reuters-21578-9282', 'reuters-21578-9295'],"
	"   'agent': 'research_agent_2', 'message_id': 'm-0008'},"
	"  {'id': 'ev-1', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-24',"
	"   'title': 'BANK OF JAPAN STEPS UP DOLLAR BUYING',"
	"   'sources': ['reuters-21578-8591', 'reuters-21578-8657'],"
	"   'agent': 'research_agent_2', 'message_id': 'm-0008'}],"
	" 'sentiment': {'JPY': {'score': 0.35, 'stories': 14, 'agent': 'research_agent_2',"
	"   'message_id': 'm-0008'}},"
	" 'findings': ["
	"  {'id': 'USD_JPY-M1', 'agent': 'research_agent_2', 'kind': 'market', 'pair': 'USD/JPY',"
	"   'text': 'USD/JPY fell 2.62% over the window, from 151.7 on 1987-03-20 to 147.7 "
	"on 1987-03-27.',"
	"   'sources': ['csv:../shared/data/fx/fred-daily-1971-2017.csv rows 1987-03-20..1987-03-27'],"
	"   'message_id': 'm-0007', 'verdict': 'confirmed'},"
	"  {'id': 'USD_JPY-N1', 'agent': 'research_agent_2', 'kind': 'news', 'pair': 'USD/JPY',"
	"   'text': 'Bank of Japan buying held the dollar above 150 yen all week.',"
	"   'sources': ['reuters-21578-8591', 'reuters-21578-9128'], 'message_id': 'm-0008',"
	"   'data': {'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-24'},"
	"   'verdict': 'disputed',"
	"   'verdict_reason': 'USD/JPY closed at 149.32 on 1987-03-24, below 150'},"
	"  {'id': 'AUD_USD-N1', 'agent': 'research_agent_1', 'kind': 'news', 'pair': 'AUD/USD',"
	"   'text': 'Sentiment on the Australian dollar was positive.',"
	"   'sources': ['reuters-21578-9301'], 'message_id': 'm-0006', 'verdict': 'unverified',"
	"   'verdict_reason': 'no authoritative story in the window'},"
	"  {'id': 'GBP_USD-M1', 'agent': 'research_agent_1', 'kind': 'market', 'pair': 'GBP/USD',"
	"   'text': 'GBP/USD rose 0.05% over the window.',"
	"   'sources': ['csv:../shared/data/fx/fred-daily-1971-2017.csv rows 1987-03-20..1987-03-27'],"
	"   'message_id': 'm-0005', 'verdict': 'confirmed'}],"
	" 'issues': [{'issue_type': 'conflict', 'severity': 'medium',"
	"   'description': 'News says the dollar held above 150 yen; the closes say it fell below',"
	"   'affected_data': {'finding': 'USD_JPY-N1', 'pair': 'USD/JPY'},"
	"   'recommendation': 'Report the closes; cite the intervention without the level',"
	"   'confidence': 0.9}],"
	" 'validation': {'status': 'done', 'message_id': 'm-0011', 'overall_confidence': 0.82},"
	" 'tasks': [{'task_id': 't-market-USD_JPY', 'kind': 'market_data', 'pair': 'USD/JPY',"
	"   'assignee': 'research_agent_2', 'status': 'done', 'attempts': 2,"
	"   'assignments': ['m-0002', 'm-0009'], 'result_message_id': 'm-0007'}],"
	" 'failures': [{'task_id': 't-market-USD_JPY', 'kind': 'market_data', 'pair': 'USD/JPY',"
	"   'what': 'reassigned', 'from': 'research_agent_1', 'to': 'research_agent_2',"
	"   'reason': 'no result within 300 s', 'at': '1987-03-27T21:05:00Z'}],"
	" 'warnings': ['no quotes for EUR/USD in the window (no rows)'],"
	" 'messages': {"
	"  'm-0005': {'from': 'research_agent_1', 'type': 'research_result',"
	"   'timestamp': '1987-03-27T21:02:10Z'},"
	"  'm-0006': {'from': 'research_agent_1', 'type': 'research_result',"
	"   'timestamp': '1987-03-27T21:02:40Z'},"
	"  'm-0007': {'from': 'research_agent_2', 'type': 'research_result',"
	"   'timestamp': '1987-03-27T21:06:30Z'},"
	"  'm-0008': {'from': 'research_agent_2', 'type': 'research_result',"
	"   'timestamp': '1987-03-27T21:03:05Z'},"
	"  'm-0011': {'from': 'validator', 'type': 'validation_result',"
	"   'timestamp': '1987-03-27T21:09:00Z'}}}";

static cJSON *snapshot(void)
{
	char *s = xstrdup(SNAPSHOT);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	cJSON *j = cJSON_Parse(s);
	free(s);
	assert_non_null(j);
	return j;
}

static void set_string(cJSON *o, const char *k, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddStringToObject(o, k, v);
}

/* The text from the heading to the next heading of the same level or
 * above; caller frees. */
static char *section(const char *md, const char *head)
{
	char *needle = xasprintf("\n%s\n", head);
	const char *p = strstr(md, needle);
	free(needle);
	assert_non_null(p);
	p += 1;
	const char *end = strstr(p + 1, "\n## ");
	if (!strncmp(head, "### ", 4)) {
		const char *sub = strstr(p + 1, "\n### ");
		if (sub && (!end || sub < end))
			end = sub;
	}
	return end ? xstrndup(p, (size_t)(end - p)) : xstrdup(p);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The line of md that starts with prefix; caller frees. */
static char *line_starting(const char *md, const char *prefix)
{
	char *needle = xasprintf("\n%s", prefix);
	const char *p = strstr(md, needle);
	free(needle);
	assert_non_null(p);
	p += 1;
	const char *nl = strchr(p, '\n');
	return nl ? xstrndup(p, (size_t)(nl - p)) : xstrdup(p);
}

/* Pipes in a table row that are not escaped. */
static size_t cell_bars(const char *row)
{
	size_t n = 0;
	for (const char *p = row; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		n += *p == '|';
	}
	return n;
}

static void test_title_and_window(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	assert_true(starts_with(md, "# Weekly Asia/G10 FX report — 1987-W13\n\n"));
	assert_non_null(strstr(md, "**Window:** 20 Mar 1987 – 27 Mar 1987 (1987-03-20 to "
				   "1987-03-27). **Sources:** market "
				   "csv:../shared/data/fx/fred-daily-1971-2017.csv, news "
				   "jsonl:../shared/data/news/reuters21578.jsonl.\n"));
	assert_null(strstr(md, "Simulated data"));
	assert_null(strstr(md, "Draft"));
	assert_null(strstr(md, "_pending_"));
	/* Sections in order. */
	static const char *const order[] = {
		"\n## Executive summary\n", "\n## Pairs\n", "\n## Key events\n",
		"\n## Findings\n", "\n### Confirmed\n", "\n### Disputed\n",
		"\n### Unverified\n", "\n## Validation issues\n",
		"\n## Data freshness and warnings\n", "\n## Failures and reassignments\n",
		"\n## Provenance\n",
	};
	const char *at = md;
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		const char *p = strstr(at, order[i]);
		assert_non_null(p);
		at = p + 1;
	}
	assert_int_equal(md[strlen(md) - 1], '\n');
	assert_int_not_equal(md[strlen(md) - 2], '\n');
	free(md);

	cJSON *src = cJSON_GetObjectItem(run, "sources");
	cJSON_ReplaceItemInObject(src, "market_simulated", cJSON_CreateTrue());
	md = report_markdown(run, true);
	assert_non_null(strstr(md, "\n> **Simulated data:** the market prices in this report "
				   "are simulated, not real."));
	free(md);
	cJSON_Delete(run);
}

static void test_pairs_table(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Pairs");
	assert_non_null(strstr(sec, "| Pair | Start (date) | End (date) | Change % | High | Low "
				    "| Vol (ann.) % | z | MA5 vs MA20 | Sparkline |\n"));
	/* the column is explained under the table, with why it can differ
	 * from Change % */
	assert_non_null(strstr(sec, "MA5 vs MA20 says whether the average of the last 5 closes is "
				    "above or below the average of the last 20"));
	assert_non_null(strstr(sec, "can point the other way from Change %"));
	assert_null(strstr(sec, "Trend"));
	char *row = line_starting(sec, "| USD/JPY |");
	assert_non_null(strstr(row, "| 151.70 (1987-03-20) |"));
	assert_non_null(strstr(row, "| 147.72 (1987-03-27) |"));
	assert_non_null(strstr(row, "| -2.62 |"));
	assert_string_equal(row, "| USD/JPY | 151.70 (1987-03-20) | 147.72 (1987-03-27) | -2.62 "
				 "| 151.70 | 147.72 | 9.87 | -1.84 | below | █▅▄▄▄▁ |");
	free(row);
	/* Below 100: four decimals; a signed change; null figures as n/a. */
	row = line_starting(sec, "| GBP/USD |");
	assert_string_equal(row, "| GBP/USD | 1.6023 (1987-03-20) | 1.6031 (1987-03-27) | +0.05 "
				 "| 1.6171 | 1.6023 | 7.12 | n/a | level | ▁█▅▃▃▁ |");
	free(row);
	row = line_starting(sec, "| AUD/USD |");
	assert_non_null(strstr(row, "| +1.79 | 0.6980 | 0.6857 | n/a | +1.21 | n/a | n/a |"));
	free(row);
	row = line_starting(sec, "| EUR/USD |");
	assert_non_null(strstr(row, "| no data |"));
	assert_int_equal(cell_bars(row), 11);
	free(row);
	free(sec);
	/* The pair without figures is named in the warnings. */
	sec = section(md, "### Warnings");
	assert_non_null(strstr(sec, "- EUR/USD: no data; the pair has no figures in this report\n"));
	assert_non_null(strstr(sec, "- no quotes for EUR/USD in the window (no rows)\n"));
	free(sec);
	sec = section(md, "### Freshness");
	/* Pairs alike share one line, not one line each. */
	assert_string_equal(sec, "### Freshness\n\n"
				 "- USD/JPY, GBP/USD, AUD/USD: last quote 1987-03-27, 0 days "
				 "before the window end.\n"
				 "- EUR/USD: no data.\n");
	free(sec);
	free(md);
	/* A stale pair stands apart. */
	cJSON *gbp = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "market"), "GBP/USD");
	cJSON_ReplaceItemInObject(gbp, "freshness_days", cJSON_CreateNumber(4));
	set_string(cJSON_GetObjectItem(gbp, "end"), "date", "1987-03-23");
	md = report_markdown(run, true);
	sec = section(md, "### Freshness");
	assert_string_equal(sec, "### Freshness\n\n"
				 "- USD/JPY, AUD/USD: last quote 1987-03-27, 0 days before the "
				 "window end.\n"
				 "- EUR/USD: no data.\n"
				 "- GBP/USD: last quote 1987-03-23, 4 days before the window end "
				 "(stale).\n");
	free(sec);
	free(md);
	cJSON_Delete(run);
}

static void test_summary(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Executive summary");
	assert_string_equal(sec,
		"## Executive summary\n\n"
		"The week's main story was the BOJ intervention, buying USD, on 24 Mar 1987 "
		"(2 stories), as JPY strengthened: USD/JPY fell 2.62% from 151.70 on "
		"20 Mar 1987 to 147.72 on 27 Mar 1987. USD/JPY was the biggest mover. "
		"Against the US dollar, 2 currencies strengthened (JPY +2.69%, AUD +1.79%) and "
		"1 was little changed (GBP +0.05%); there were no figures for EUR/USD. "
		"The news reported 2 central-bank acts: the Bank of Japan bought dollars on "
		"24 Mar 1987 (disputed); the Bundesbank on 25 Mar 1987 (not validated). "
		"Of 4 findings, validation confirmed 2, disputed 1 and left 1 unverified "
		"(overall confidence 0.82). "
		"During the run, the USD/JPY market data task was reassigned from "
		"research_agent_1 to research_agent_2.\n");
	free(sec);
	free(md);

	/* No failures: no failure sentence; a pair that weakened. */
	cJSON_DeleteItemFromObject(run, "failures");
	cJSON *aud = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "market"), "AUD/USD");
	cJSON_ReplaceItemInObject(aud, "change_pct", cJSON_CreateNumber(-0.4));
	md = report_markdown(run, true);
	sec = section(md, "## Executive summary");
	assert_non_null(strstr(sec, "Against the US dollar, 1 currency strengthened (JPY +2.69%), "
				    "1 weakened (AUD -0.40%) and 1 was little changed (GBP +0.05%)"));
	assert_null(strstr(sec, "During the run"));
	free(sec);
	free(md);

	/* One task failed: which, and why, not just a count. */
	cJSON *fl = cJSON_Parse(
		"[{\"task_id\": \"EURUSD-market\", \"kind\": \"market\", \"pair\": \"EUR/USD\","
		" \"what\": \"failed\", \"from\": \"research_agent_1\", \"reason\": \"no data "
		"for EUR/USD in fred-daily-1971-2017.csv between 1987-03-20 and 1987-03-27 (its "
		"first quote is on 1999-01-04)\"}]");
	assert_non_null(fl);
	cJSON_AddItemToObject(run, "failures", fl);
	md = report_markdown(run, true);
	sec = section(md, "## Executive summary");
	assert_non_null(strstr(sec, "During the run, the EUR/USD market task failed: no data for "
				    "EUR/USD in fred-daily-1971-2017.csv between 1987-03-20 and "
				    "1987-03-27 (its first quote is on 1999-01-04).\n"));
	free(sec);
	free(md);
	cJSON_Delete(run);
}

/* The lead is the theme that dominated by stories and move, not the
 * event the ranking lists first: three days of BOJ dollar buying (three
 * stories, USD/JPY -2.62%) lead over a Bundesbank intervention with more
 * stories on its one day, and over a Fed cut on a pair that barely moved. */
static void test_summary_lead(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	cJSON *ev = cJSON_Parse(
		"[{\"bank\": \"Bundesbank\", \"action\": \"intervention\", \"date\": \"1987-03-25\","
		"  \"title\": \"BUNDESBANK BUYS DOLLARS\", \"sources\": [\"a1\", \"a2\"],"
		"  \"currencies\": [\"DEM\", \"USD\"], \"pairs\": [\"USD/JPY\"]},"
		" {\"bank\": \"BOJ\", \"action\": \"intervention\", \"date\": \"1987-03-23\","
		"  \"title\": \"BANK OF JAPAN BUYS DOLLARS\", \"sources\": [\"b1\"],"
		"  \"currencies\": [\"JPY\", \"USD\"], \"pairs\": [\"USD/JPY\"]},"
		" {\"bank\": \"BOJ\", \"action\": \"intervention\", \"date\": \"1987-03-26\","
		"  \"title\": \"BANK OF JAPAN SEEN IN MARKET\", \"sources\": [\"b2\", \"b1\"],"
		"  \"evidence\": [\"the Bank of Japan bought dollars for yen\"],"
		"  \"currencies\": [\"JPY\", \"USD\"], \"pairs\": [\"USD/JPY\"]},"
		" {\"bank\": \"BOJ\", \"action\": \"intervention\", \"date\": \"1987-03-27\","
		"  \"title\": \"BANK OF JAPAN INTERVENES\", \"sources\": [\"b3\"],"
		"  \"currencies\": [\"JPY\", \"USD\"], \"pairs\": [\"USD/JPY\"]},"
		" {\"bank\": \"Fed\", \"action\": \"cut\", \"date\": \"1987-03-24\","
		"  \"title\": \"FED CUTS DISCOUNT RATE\", \"sources\": [\"c1\", \"c2\", \"c3\","
		"  \"c4\"], \"currencies\": [\"USD\"], \"pairs\": [\"GBP/USD\"]}]");
	assert_non_null(ev);
	cJSON_ReplaceItemInObject(run, "events", ev);
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Executive summary");
	assert_true(starts_with(sec, "## Executive summary\n\n"
		"The week's main story was the BOJ intervention, buying USD, on 3 days from "
		"23 Mar 1987 to 27 Mar 1987 (3 stories), as JPY strengthened: USD/JPY fell 2.62% "
		"from 151.70 on 20 Mar 1987 to 147.72 on 27 Mar 1987. "));
	/* The acts after it, by bank and action over days: an intervention
	 * before a rate cut, the bank with more days first, the verb said
	 * once for banks that did the same; none has a finding. */
	assert_non_null(strstr(sec, "The news reported 5 central-bank acts: the Bank of Japan "
				    "bought dollars on 23, 26 and 27 Mar 1987 (not validated); the "
				    "Bundesbank on 25 Mar 1987 (not validated); the Federal Reserve "
				    "cut its discount rate on 24 Mar 1987 (not validated). "));
	free(sec);
	free(md);

	/* Without the BOJ, the Fed's cut (4 stories, GBP/USD +0.05%) outweighs
	 * the Bundesbank's intervention (2 stories, USD/JPY -2.62%): 4.2 to 7.2
	 * is lost, 2 x 3.62 = 7.25 > 4 x 1.05 = 4.19. */
	for (int i = 3; i >= 1; i--)
		cJSON_DeleteItemFromArray(ev, i);
	md = report_markdown(run, true);
	sec = section(md, "## Executive summary");
	assert_true(starts_with(sec, "## Executive summary\n\n"
		"The week's main story was the Bundesbank intervention, buying USD, on "
		"25 Mar 1987 (2 stories), as JPY strengthened: USD/JPY fell 2.62%"));
	free(sec);
	free(md);
	/* With only a policy-free event list, no lead: the biggest mover opens. */
	cJSON_ReplaceItemInObject(run, "events", cJSON_CreateArray());
	md = report_markdown(run, true);
	sec = section(md, "## Executive summary");
	assert_true(starts_with(sec, "## Executive summary\n\nThe biggest mover was USD/JPY"));
	free(sec);
	free(md);
	cJSON_Delete(run);
}

static void test_events(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Key events");
	/* Sorted by date although the snapshot lists them the other way;
	 * each act marked as its findings stand: the BOJ's disputed (finding
	 * USD_JPY-N1), the Bundesbank's reported by no finding. */
	const char *boj = strstr(sec, "\n- 1987-03-24 — BOJ intervention (disputed): BANK OF JAPAN "
				      "STEPS UP DOLLAR BUYING [sources: reuters-21578-8591, "
				      "reuters-21578-8657]\n");
	const char *buba = strstr(sec, "\n- 1987-03-25 — Bundesbank intervention (not validated): "
				       "BUNDESBANK BUYS DOLLARS IN FRANKFURT - DEALERS [sources: "
				       "reuters-21578-9282, reuters-21578-9295]\n");
	assert_non_null(boj);
	assert_non_null(buba);
	assert_true(boj < buba);
	assert_non_null(strstr(sec, "News sentiment by currency (score from -1 to +1): JPY +0.35 "
				    "(14 stories).\n"));
	free(sec);
	free(md);

	/* An act found in a story about another bank's: its words, then
	 * the headline; the same words as the headline are not repeated. */
	cJSON *boe = cJSON_Parse(
		"{\"bank\": \"BoE\", \"action\": \"intervention\", \"date\": \"1987-03-25\","
		" \"title\": \"BUNDESBANK BUYS DOLLARS IN FRANKFURT - DEALERS\","
		" \"sources\": [\"reuters-21578-9295\"], \"evidence\": [\"Dealers said the Bank of "
		"England supported the dollar\\u001b[2J against the yen\"], \"currencies\": [\"GBP\"],"
		" \"pairs\": [\"GBP/USD\"]}");
	cJSON *same = cJSON_Parse(
		"{\"bank\": \"BOJ\", \"action\": \"intervention\", \"date\": \"1987-03-26\","
		" \"title\": \"BANK OF JAPAN BUYS DOLLARS\", \"sources\": [\"x\"],"
		" \"evidence\": [\"Bank of Japan buys dollars\"], \"currencies\": [\"JPY\"],"
		" \"pairs\": [\"USD/JPY\"]}");
	assert_non_null(boe);
	assert_non_null(same);
	cJSON *evs = cJSON_CreateArray();
	cJSON_AddItemToArray(evs, boe);
	cJSON_AddItemToArray(evs, same);
	cJSON_ReplaceItemInObject(run, "events", evs);
	md = report_markdown(run, true);
	sec = section(md, "## Key events");
	assert_non_null(strstr(sec, "\n- 1987-03-25 — BoE intervention (not validated): \"Dealers "
				    "said the Bank of "
				    "England supported the dollar"));
	assert_non_null(strstr(sec, " against the yen\" (BUNDESBANK BUYS DOLLARS IN FRANKFURT - "
				    "DEALERS) [sources: reuters-21578-9295]\n"));
	assert_null(strchr(sec, '\x1b'));
	assert_non_null(strstr(sec, "\n- 1987-03-26 — BOJ intervention (not validated): BANK OF "
				    "JAPAN BUYS DOLLARS "
				    "[sources: x]\n"));
	free(sec);
	free(md);

	cJSON_ReplaceItemInObject(run, "events", cJSON_CreateArray());
	md = report_markdown(run, true);
	sec = section(md, "## Key events");
	assert_non_null(strstr(sec, "No central-bank events were found in the news for the "
				    "window.\n"));
	free(sec);
	sec = section(md, "## Executive summary");
	assert_non_null(strstr(sec, "The news search found no central-bank events in the window."));
	free(sec);
	free(md);
	cJSON_Delete(run);
}

/* The acts of the week ending 1987-03-27 as research_agent_2 reports
 * them (one event per bank, action and day; the quoted sentence first)
 * with the validator's verdicts on their findings. */
static const char WEEK_EVENTS[] =
	"[{'id': 'E1', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-23',"
	"  'title': 'TOKYO - Bank of Japan buys small amount of dollars, dealers said',"
	"  'evidence': ['TOKYO - Bank of Japan buys small amount of dollars, dealers said'],"
	"  'sources': ['reuters-21578-8586']},"
	" {'id': 'E2', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-24',"
	"  'title': 'BANK OF JAPAN STEPS UP DOLLAR BUYING',"
	"  'evidence': ['The Bank of Japan stepped up its dollar buying, dealers said'],"
	"  'sources': ['reuters-21578-8591', 'reuters-21578-8657', 'reuters-21578-9022']},"
	" {'id': 'E3', 'bank': 'BoE', 'action': 'intervention', 'date': '1987-03-24',"
	"  'title': 'DOLLAR EXPECTED TO FALL DESPITE INTERVENTION',"
	"  'evidence': ['traders said the Bank of Japan, Federal Reserve Board and Bank of "
	"England intervened in the markets on behalf of the U.S. currency'],"
	"  'sources': ['reuters-21578-9022']},"
	" {'id': 'E4', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-25',"
	"  'title': 'Bank of Japan keeps intervening to hold dollar above 149 yen, brokers',"
	"  'evidence': ['Bank of Japan keeps intervening to hold dollar above 149 yen, brokers'],"
	"  'sources': ['reuters-21578-9128', 'reuters-21578-9129']},"
	" {'id': 'E5', 'bank': 'Bundesbank', 'action': 'intervention', 'date': '1987-03-25',"
	"  'title': 'Bundesbank buys dollars for yen - Frankfurt dealers',"
	"  'evidence': ['Bundesbank buys dollars for yen - Frankfurt dealers'],"
	"  'sources': ['reuters-21578-9282', 'reuters-21578-9295']},"
	" {'id': 'E6', 'bank': 'BoE', 'action': 'intervention', 'date': '1987-03-25',"
	"  'title': 'BUNDESBANK BUYS DOLLARS IN FRANKFURT - DEALERS',"
	"  'evidence': ['Dealers said the Bank of Japan and Bank of England supported the "
	"dollar against the yen earlier today'],"
	"  'sources': ['reuters-21578-9295']},"
	" {'id': 'E17', 'bank': 'RBA', 'action': 'cut', 'date': '1987-03-25',"
	"  'title': 'AUSTRALIAN RESERVE BANK CUTS REDISCOUNT RATE',"
	"  'sources': ['reuters-21578-9675']},"
	" {'id': 'E7', 'bank': 'Fed', 'action': 'intervention', 'date': '1987-03-26',"
	"  'title': 'MONETARY AUTHORITIES SAID TO LOSE CREDIBILITY',"
	"  'evidence': ['the market challenged the authorities despite concerted intervention by "
	"the central banks of the United States, Japan, Britain and West Germany'],"
	"  'sources': ['reuters-21578-9764']},"
	" {'id': 'E8', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-26',"
	"  'title': 'MONETARY AUTHORITIES SAID TO LOSE CREDIBILITY',"
	"  'evidence': ['the market challenged the authorities despite concerted intervention by "
	"the central banks of the United States, Japan, Britain and West Germany'],"
	"  'sources': ['reuters-21578-9764', 'reuters-21578-9783', 'reuters-21578-9871']},"
	" {'id': 'E15', 'bank': 'Bundesbank', 'action': 'intervention', 'date': '1987-03-26',"
	"  'title': 'MONETARY AUTHORITIES SAID TO LOSE CREDIBILITY',"
	"  'evidence': ['the market challenged the authorities despite concerted intervention by "
	"the central banks of the United States, Japan, Britain and West Germany'],"
	"  'sources': ['reuters-21578-9764']},"
	" {'id': 'E16', 'bank': 'BoE', 'action': 'intervention', 'date': '1987-03-26',"
	"  'title': 'MONETARY AUTHORITIES SAID TO LOSE CREDIBILITY',"
	"  'evidence': ['the market challenged the authorities despite concerted intervention by "
	"the central banks of the United States, Japan, Britain and West Germany'],"
	"  'sources': ['reuters-21578-9764']},"
	" {'id': 'E9', 'bank': 'BdF', 'action': 'intervention', 'date': '1987-03-26',"
	"  'title': 'BANK OF FRANCE BUYS DOLLARS, SELLS YEN - DEALERS',"
	"  'sources': ['reuters-21578-9862', 'reuters-21578-9871']},"
	" {'id': 'E12', 'bank': 'BOJ', 'action': 'intervention', 'date': '1987-03-27',"
	"  'title': 'BANK OF JAPAN INTERVENES TO STEM DOLLAR FALL',"
	"  'sources': ['reuters-21578-10357']}]";

/* Findings on those acts: bank, action, date and verdict. */
static const char *const WEEK_VERDICTS[][4] = {
	{ "BOJ", "intervention", "1987-03-23", "disputed" },
	{ "BOJ", "intervention", "1987-03-24", "confirmed" },
	{ "BoE", "intervention", "1987-03-24", "unverified" },
	{ "BOJ", "intervention", "1987-03-25", "confirmed" },
	{ "Bundesbank", "intervention", "1987-03-25", "confirmed" },
	{ "BoE", "intervention", "1987-03-25", "disputed" },
	{ "BoE", "intervention", "1987-03-25", "disputed" },  /* under two pairs */
	{ "RBA", "cut", "1987-03-25", "disputed" },
	{ "Fed", "intervention", "1987-03-26", "unverified" },
	{ "BOJ", "intervention", "1987-03-26", "confirmed" },
	{ "Bundesbank", "intervention", "1987-03-26", "unverified" },
	{ "BoE", "intervention", "1987-03-26", "disputed" },
};

static cJSON *week_snapshot(void)
{
	cJSON *run = snapshot();
	char *s = xstrdup(WEEK_EVENTS);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	cJSON *ev = cJSON_Parse(s);
	free(s);
	assert_non_null(ev);
	cJSON_ReplaceItemInObject(run, "events", ev);
	cJSON *findings = cJSON_GetObjectItem(run, "findings"), *f0;
	cJSON_ArrayForEach(f0, findings)
		cJSON_DeleteItemFromObject(f0, "data"); /* only the week's verdicts */
	for (size_t i = 0; i < ARRAY_SIZE(WEEK_VERDICTS); i++) {
		cJSON *f = cJSON_CreateObject();
		char id[16];
		snprintf(id, sizeof(id), "W-N%zu", i + 1);
		cJSON_AddStringToObject(f, "id", id);
		cJSON_AddStringToObject(f, "kind", "news");
		cJSON_AddStringToObject(f, "text", "an act");
		cJSON *d = cJSON_AddObjectToObject(f, "data");
		cJSON_AddStringToObject(d, "bank", WEEK_VERDICTS[i][0]);
		cJSON_AddStringToObject(d, "action", WEEK_VERDICTS[i][1]);
		cJSON_AddStringToObject(d, "date", WEEK_VERDICTS[i][2]);
		cJSON_AddStringToObject(f, "verdict", WEEK_VERDICTS[i][3]);
		cJSON_AddItemToArray(findings, f);
	}
	return run;
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Acts of one day told by one sentence or story share a Key events line
 * (the concerted intervention of 26 Mar is one line, not four quoting the
 * same sentence); acts not confirmed are marked; every source is kept. */
static void test_events_grouped(void **state)
{
	(void)state;
	cJSON *run = week_snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Key events");
	assert_non_null(strstr(sec,
		"\n- 1987-03-26 — concerted intervention by the BOJ, Fed, Bundesbank and BoE (Fed and "
		"Bundesbank unverified, BoE disputed): \"the market challenged the authorities despite "
		"concerted intervention by the central banks of the United States, Japan, Britain "
		"and West Germany\" (MONETARY AUTHORITIES SAID TO LOSE CREDIBILITY) [sources: "
		"reuters-21578-9764, reuters-21578-9783, reuters-21578-9871]\n"));
	assert_int_equal(count_of(sec, "MONETARY AUTHORITIES"), 1);
	/* The Bank of France's own story of that day stays its own line. */
	assert_non_null(strstr(sec, "\n- 1987-03-26 — BdF intervention (not validated): BANK OF "
				    "FRANCE BUYS DOLLARS, SELLS YEN - DEALERS [sources: "
				    "reuters-21578-9862, reuters-21578-9871]\n"));
	/* 24 Mar: the BoE's sentence names the BOJ's act; both quotes kept. */
	assert_non_null(strstr(sec,
		"\n- 1987-03-24 — intervention by the BOJ and BoE (BoE unverified): \"The Bank of Japan "
		"stepped up its dollar buying, dealers said\" (BANK OF JAPAN STEPS UP DOLLAR "
		"BUYING); \"traders said the Bank of Japan, Federal Reserve Board and Bank of "
		"England intervened in the markets on behalf of the U.S. currency\" (DOLLAR "
		"EXPECTED TO FALL DESPITE INTERVENTION) [sources: reuters-21578-8591, "
		"reuters-21578-8657, reuters-21578-9022]\n"));
	/* 25 Mar: the BoE joins the bank its sentence names (the BOJ), not the
	 * Bundesbank whose headline it came under. */
	assert_non_null(strstr(sec,
		"\n- 1987-03-25 — intervention by the BOJ and BoE (BoE disputed): Bank of Japan keeps "
		"intervening to hold dollar above 149 yen, brokers; \"Dealers said the Bank of Japan "
		"and Bank of England supported the dollar against the yen earlier today\" (BUNDESBANK "
		"BUYS DOLLARS IN FRANKFURT - DEALERS) [sources: reuters-21578-9128, "
		"reuters-21578-9129, reuters-21578-9295]\n"));
	assert_non_null(strstr(sec, "\n- 1987-03-25 — Bundesbank intervention: Bundesbank buys "
				    "dollars for yen - Frankfurt dealers [sources: "
				    "reuters-21578-9282, reuters-21578-9295]\n"));
	assert_non_null(strstr(sec, "\n- 1987-03-25 — RBA cut (disputed): AUSTRALIAN RESERVE BANK "
				    "CUTS REDISCOUNT RATE [sources: reuters-21578-9675]\n"));
	assert_non_null(strstr(sec, "\n- 1987-03-23 — BOJ intervention (disputed): TOKYO - Bank of "
				    "Japan buys small amount of dollars, dealers said [sources: "
				    "reuters-21578-8586]\n"));
	assert_non_null(strstr(sec, "\n- 1987-03-27 — BOJ intervention (not validated): BANK OF "
				    "JAPAN INTERVENES TO STEM DOLLAR FALL [sources: "
				    "reuters-21578-10357]\n"));
	/* 13 acts on 8 lines. */
	assert_int_equal(count_of(sec, "\n- 1987-"), 8);
	free(sec);

	/* The summary: by bank and action over days, banks in words, the acts
	 * not confirmed marked, no act named twice. */
	sec = section(md, "## Executive summary");
	assert_non_null(strstr(sec,
		"The news reported 13 central-bank acts: the Bank of Japan bought dollars on each "
		"day from 23 to 27 Mar 1987 (23 Mar disputed, 27 Mar not validated); the Bank of "
		"England on each day from 24 to 26 Mar 1987 (25 and 26 Mar disputed, 24 Mar "
		"unverified); the Bundesbank on 25 and 26 Mar 1987 (26 Mar unverified); the Bank of "
		"France on 26 Mar 1987 (not validated); the Federal Reserve intervened on 26 Mar "
		"1987 (unverified); the Reserve Bank of Australia cut its rediscount rate on 25 Mar "
		"1987 (disputed). "));
	assert_null(strstr(sec, "chief among them"));
	free(sec);
	free(md);

	/* The JSON twin keeps one entry per act, with its verdict and the
	 * acts told on its line. */
	cJSON *j = report_json(run);
	const cJSON *e, *boj26 = NULL, *bdf26 = NULL;
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "events")), 13);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "events")) {
		if (!strcmp(cJSON_GetObjectItem(e, "id")->valuestring, "E8"))
			boj26 = e;
		if (!strcmp(cJSON_GetObjectItem(e, "id")->valuestring, "E9"))
			bdf26 = e;
	}
	assert_non_null(boj26);
	assert_non_null(bdf26);
	assert_string_equal(cJSON_GetObjectItem(boj26, "verdict")->valuestring, "confirmed");
	char *with = cJSON_PrintUnformatted(cJSON_GetObjectItem(boj26, "told_with"));
	assert_string_equal(with, "[\"E7\",\"E15\",\"E16\"]");
	free(with);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(boj26, "sources")), 3);
	assert_string_equal(cJSON_GetObjectItem(bdf26, "verdict")->valuestring, "not validated");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(bdf26, "told_with")), 0);
	cJSON_Delete(j);

	/* A draft before validation marks nothing. */
	cJSON *v = cJSON_GetObjectItem(run, "validation");
	cJSON_ReplaceItemInObject(v, "status", cJSON_CreateString("pending"));
	md = report_markdown(run, false);
	sec = section(md, "## Key events");
	assert_non_null(strstr(sec, "\n- 1987-03-27 — BOJ intervention: BANK OF JAPAN INTERVENES"));
	assert_null(strstr(sec, "not validated"));
	free(sec);
	free(md);
	cJSON_Delete(run);
}

/* A currency's tone counts only the stories that discuss it: one no
 * story discusses is said to have none, not "0.00 (42 stories)", and a
 * pair whose tone rests on the dollar alone is named. */
static void test_sentiment_by_currency(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	cJSON *sent = cJSON_Parse(
		"{\"USD\": {\"score\": -0.84, \"stories\": 42}, \"JPY\": {\"score\": 0.67, "
		"\"stories\": 22}, \"EUR\": {\"score\": 0, \"stories\": 0}, \"GBP\": {\"score\": "
		"0.43, \"stories\": 4}, \"AUD\": {\"score\": 0, \"stories\": 0}}");
	assert_non_null(sent);
	cJSON_ReplaceItemInObject(run, "sentiment", sent);
	char *md = report_markdown(run, true);
	char *line = line_starting(md, "News sentiment by currency");
	assert_string_equal(line,
		"News sentiment by currency (score from -1 to +1): USD -0.84 (42 stories); JPY +0.67 "
		"(22 stories); GBP +0.43 (4 stories). No story in the window discusses EUR or AUD, "
		"so they have no tone. The tone of EUR/USD and AUD/USD rests on USD alone, so the "
		"news does not say whether their moves fit it.");
	free(line);
	free(md);
	/* The JSON twin carries the same counts. */
	cJSON *j = report_json(run);
	double n = -1;
	assert_true(jnum_get(jget(jget(j, "sentiment"), "AUD"), "stories", &n));
	assert_true(n == 0);
	assert_true(jnum_get(jget(jget(j, "sentiment"), "USD"), "stories", &n));
	assert_true(n == 42);
	cJSON_Delete(j);
	cJSON_Delete(run);
}

static void test_findings_and_issues(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "### Confirmed");
	assert_non_null(strstr(sec, "- USD/JPY fell 2.62% over the window, from 151.7 on "
				    "1987-03-20 to 147.7 on 1987-03-27. — by research_agent_2; "
				    "sources: csv:../shared/data/fx/fred-daily-1971-2017.csv rows "
				    "1987-03-20..1987-03-27; finding USD_JPY-M1\n"));
	assert_non_null(strstr(sec, "finding GBP_USD-M1"));
	assert_null(strstr(sec, "USD_JPY-N1"));
	free(sec);
	sec = section(md, "### Disputed");
	assert_non_null(strstr(sec, "- USD/JPY: Bank of Japan buying held the dollar above 150 yen "
				    "all week. — by research_agent_2; sources: reuters-21578-8591, "
				    "reuters-21578-9128; finding USD_JPY-N1\n"
				    "  - Reason: USD/JPY closed at 149.32 on 1987-03-24, below "
				    "150\n"));
	assert_null(strstr(sec, "USD_JPY-M1"));
	free(sec);
	sec = section(md, "### Unverified");
	assert_non_null(strstr(sec, "- AUD/USD: Sentiment on the Australian dollar was positive. "
				    "— by research_agent_1; sources: reuters-21578-9301; finding "
				    "AUD_USD-N1\n  - Reason: no authoritative story in the window\n"));
	free(sec);
	sec = section(md, "## Validation issues");
	assert_string_equal(sec,
		"## Validation issues\n\n"
		"- conflict (severity medium): News says the dollar held above 150 yen; the "
		"closes say it fell below\n"
		"  - Recommendation: Report the closes; cite the intervention without the "
		"level\n"
		"  - Affected: finding USD_JPY-N1; pair USD/JPY\n"
		"  - Confidence: 0.90\n");
	free(sec);
	free(md);
	cJSON_Delete(run);
}

static void test_failures_and_provenance(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	char *md = report_markdown(run, true);
	char *sec = section(md, "## Failures and reassignments");
	assert_non_null(strstr(sec, "| Task | Kind | Pair | What | From → To | Reason | At |\n"));
	assert_non_null(strstr(sec, "\n| t-market-USD_JPY | market_data | USD/JPY | reassigned | "
				    "research_agent_1 → research_agent_2 | no result within "
				    "300 s | 1987-03-27T21:05:00Z |\n"));
	free(sec);
	sec = section(md, "## Provenance");
	assert_non_null(strstr(sec, "\n- USD/JPY: message m-0007 from research_agent_2; source "
				    "csv:../shared/data/fx/fred-daily-1971-2017.csv rows "
				    "1987-03-20..1987-03-27\n"));
	assert_non_null(strstr(sec, "\n- EUR/USD: no data\n"));
	assert_non_null(strstr(sec, "\n- USD_JPY-N1: message m-0008 from research_agent_2\n"));
	assert_non_null(strstr(sec, "\n- Validation: message m-0011\n"));
	assert_non_null(strstr(sec, "\n- ev-1 (BOJ intervention): message m-0008 from "
				    "research_agent_2\n"));
	char *msgs = section(md, "### Messages cited");
	assert_non_null(strstr(msgs, "| m-0007 | research_agent_2 | research_result | "
				     "1987-03-27T21:06:30Z |\n"));
	assert_non_null(strstr(msgs, "| m-0011 | validator | validation_result | "
				     "1987-03-27T21:09:00Z |\n"));
	/* Each message once. */
	assert_null(strstr(strstr(msgs, "| m-0008 |") + 1, "| m-0008 |"));
	free(msgs);
	free(sec);
	free(md);

	/* Several: counted in the summary, one row each. */
	cJSON *fails = cJSON_GetObjectItem(run, "failures");
	cJSON *failed = cJSON_Duplicate(cJSON_GetArrayItem(fails, 0), true);
	set_string(failed, "task_id", "t-news-AUD_USD");
	set_string(failed, "kind", "news_analysis");
	set_string(failed, "pair", "AUD/USD");
	set_string(failed, "what", "failed");
	set_string(failed, "reason", "news source unreadable");
	cJSON_DeleteItemFromObject(failed, "to");
	cJSON_AddItemToArray(fails, failed);
	md = report_markdown(run, true);
	sec = section(md, "## Executive summary");
	assert_non_null(strstr(sec, "During the run, 1 task was reassigned and 1 failed; see "
				    "Failures and reassignments.\n"));
	free(sec);
	sec = section(md, "## Failures and reassignments");
	assert_non_null(strstr(sec, "\n| t-news-AUD_USD | news_analysis | AUD/USD | failed | "
				    "research_agent_1 | news source unreadable | "));
	free(sec);
	free(md);

	cJSON_ReplaceItemInObject(run, "failures", cJSON_CreateArray());
	md = report_markdown(run, true);
	sec = section(md, "## Failures and reassignments");
	assert_string_equal(sec, "## Failures and reassignments\n\nNone.\n");
	free(sec);
	free(md);
	cJSON_Delete(run);
}

/* A draft early in the run: research in, no validation yet. */
static void test_draft_pending(void **state)
{
	(void)state;
	cJSON *run = snapshot(), *f;
	set_string(run, "status", "researching");
	cJSON_DeleteItemFromObject(run, "validation");
	cJSON_DeleteItemFromObject(run, "issues");
	cJSON_DeleteItemFromObject(run, "events");
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(run, "market"), "AUD/USD");
	cJSON_ArrayForEach(f, cJSON_GetObjectItem(run, "findings")) {
		set_string(f, "verdict", "pending");
		cJSON_DeleteItemFromObject(f, "verdict_reason");
	}
	char *md = report_markdown(run, false);
	assert_non_null(strstr(md, "\n_Draft: the run is still in progress"));
	char *sec = section(md, "## Findings");
	assert_true(starts_with(sec, "## Findings\n\nValidation: _pending_.\n\n### Confirmed\n\n"
				     "_pending_\n\n### Disputed\n\n_pending_\n\n"));
	char *wait = section(md, "### Awaiting validation");
	assert_non_null(strstr(wait, "finding USD_JPY-N1"));
	free(wait);
	free(sec);
	sec = section(md, "## Key events");
	assert_string_equal(sec, "## Key events\n\n_pending_\n");
	free(sec);
	sec = section(md, "## Validation issues");
	assert_string_equal(sec, "## Validation issues\n\n_pending_\n");
	free(sec);
	char *row = line_starting(md, "| AUD/USD |");
	assert_non_null(strstr(row, "| _pending_ |"));
	free(row);
	sec = section(md, "## Executive summary");
	assert_true(starts_with(sec, "## Executive summary\n\nThe biggest mover so far was USD/JPY, "
				     "down 2.62% from 151.70 on 20 Mar 1987 to 147.72 on 27 Mar "
				     "1987. Against the US dollar, 1 currency strengthened (JPY "
				     "+2.69%) and 1 was little changed (GBP +0.05%); figures are "
				     "still pending for EUR/USD and AUD/USD. "));
	assert_non_null(strstr(sec, "News analysis is still pending."));
	assert_non_null(strstr(sec, "Validation is still pending for the 4 findings so far."));
	free(sec);
	free(md);

	/* The same data as a final report: not available, not pending. */
	md = report_markdown(run, true);
	assert_null(strstr(md, "_pending_"));
	sec = section(md, "## Key events");
	assert_string_equal(sec, "## Key events\n\n_not available_\n");
	free(sec);
	sec = section(md, "### Unverified");
	assert_non_null(strstr(sec, "finding USD_JPY-M1\n  - Not validated.\n"));
	free(sec);
	free(md);

	/* A bare snapshot still renders every section. */
	cJSON *bare = cJSON_Parse("{\"run_id\": \"weekly-1987-W13-6f2a\", \"iso_week\": "
				  "\"1987-W13\"}");
	md = report_markdown(bare, false);
	sec = section(md, "## Pairs");
	assert_string_equal(sec, "## Pairs\n\n_pending_\n");
	free(sec);
	assert_non_null(strstr(md, "Market figures are still pending."));
	free(md);
	cJSON_Delete(bare);
	cJSON_Delete(run);
}

/* Text from news stories and agents cannot change the document. */
static void test_hostile_text(void **state)
{
	(void)state;
	static const char hostile[] = "| # <script> \x1b[31m";
	cJSON *run = snapshot();
	cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "events"), 1);
	set_string(ev, "title", hostile);
	cJSON *fail = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "failures"), 0);
	set_string(fail, "reason", hostile);
	cJSON *fd = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "findings"), 0);
	cJSON_DeleteItemFromObject(fd, "pair");
	set_string(fd, "text", "# heading\n> quote `code` [link](http://x)");
	cJSON_AddItemToArray(cJSON_GetObjectItem(run, "warnings"),
			     cJSON_CreateString("- 1. item <b>"));
	char *md = report_markdown(run, true);
	assert_null(strchr(md, '\x1b'));
	assert_null(strstr(md, "<script>"));
	/* The escaped forms. */
	char *row = line_starting(md, "| t-market-USD_JPY |");
	assert_non_null(strstr(row, "| \\| # &lt;script> ^\\[\\[31m |"));
	assert_int_equal(cell_bars(row), 8);
	free(row);
	assert_non_null(strstr(md, "\n- 1987-03-24 — BOJ intervention (disputed): \\| # &lt;script> "
				   "^\\[\\[31m [sources: reuters-21578-8591, "
				   "reuters-21578-8657]\n"));
	assert_non_null(strstr(md, "\n- \\# heading^J> quote \\`code\\` \\[link](http://x) — by "));
	assert_non_null(strstr(md, "\n- \\- 1. item &lt;b>\n"));
	free(md);
	cJSON_Delete(run);
}

static void test_json(void **state)
{
	(void)state;
	cJSON *run = snapshot();
	cJSON *j = report_json(run);
	assert_string_equal(cJSON_GetObjectItem(j, "run_id")->valuestring, "weekly-1987-W13-6f2a");
	assert_string_equal(cJSON_GetObjectItem(j, "iso_week")->valuestring, "1987-W13");
	assert_string_equal(cJSON_GetObjectItem(j, "title")->valuestring,
			    "Weekly Asia/G10 FX report");
	assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "generated_at")));
	cJSON *w = cJSON_GetObjectItem(j, "window");
	assert_string_equal(cJSON_GetObjectItem(w, "start")->valuestring, "1987-03-20");
	assert_string_equal(cJSON_GetObjectItem(w, "end")->valuestring, "1987-03-27");
	cJSON *pairs = cJSON_GetObjectItem(j, "pairs");
	assert_int_equal(cJSON_GetArraySize(pairs), 4);
	cJSON *uj = cJSON_GetArrayItem(pairs, 0);
	assert_string_equal(cJSON_GetObjectItem(uj, "pair")->valuestring, "USD/JPY");
	cJSON *start = cJSON_GetObjectItem(uj, "start");
	assert_string_equal(cJSON_GetObjectItem(start, "date")->valuestring, "1987-03-20");
	assert_true(cJSON_GetObjectItem(start, "close")->valuedouble == 151.70);
	assert_true(cJSON_GetObjectItem(uj, "change_pct")->valuedouble == -2.6236);
	assert_string_equal(cJSON_GetObjectItem(uj, "trend")->valuestring, "down");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(uj, "simulated")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(uj, "largest_move"),
						"date")->valuestring, "1987-03-27");
	cJSON *prov = cJSON_GetObjectItem(uj, "provenance");
	assert_string_equal(cJSON_GetObjectItem(prov, "message_id")->valuestring, "m-0007");
	assert_string_equal(cJSON_GetObjectItem(prov, "agent")->valuestring, "research_agent_2");
	cJSON *eu = cJSON_GetArrayItem(pairs, 1);
	assert_string_equal(cJSON_GetObjectItem(eu, "pair")->valuestring, "EUR/USD");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(eu, "start")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(eu, "provenance")));
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(pairs, 2), "zscore")));
	cJSON *f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "findings"), 1);
	assert_string_equal(cJSON_GetObjectItem(f, "id")->valuestring, "USD_JPY-N1");
	assert_string_equal(cJSON_GetObjectItem(f, "verdict")->valuestring, "disputed");
	assert_string_equal(cJSON_GetObjectItem(f, "message_id")->valuestring, "m-0008");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f, "sources")), 2);
	assert_null(cJSON_GetObjectItem(f, "kind"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "events")), 2);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "issues")), 1);
	cJSON *fl = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "failures"), 0);
	assert_string_equal(cJSON_GetObjectItem(fl, "to")->valuestring, "research_agent_2");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "validation"),
						"status")->valuestring, "done");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "sources"),
						      "market_simulated")));
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "complete")));
	cJSON_Delete(j);

	/* Figures for every pair and validation done: complete. */
	cJSON *market = cJSON_GetObjectItem(run, "market");
	cJSON *eur = cJSON_Duplicate(cJSON_GetObjectItem(market, "GBP/USD"), true);
	set_string(eur, "pair", "EUR/USD");
	cJSON_AddItemToObject(market, "EUR/USD", eur);
	j = report_json(run);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "warnings")), 1);
	cJSON_Delete(j);
	/* Failed validation also completes the run; pending does not. */
	cJSON *v = cJSON_GetObjectItem(run, "validation");
	set_string(v, "status", "failed");
	j = report_json(run);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "complete")));
	cJSON_Delete(j);
	set_string(v, "status", "pending");
	j = report_json(run);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "complete")));
	cJSON_Delete(j);
	cJSON_Delete(run);
}

static void test_sparkline(void **state)
{
	(void)state;
	const double rising[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const double flat[] = { 5, 5 };
	const double jpy[] = { 151.70, 150.25, 149.32, 149.15, 149.20, 147.72 };
	char *s = report_sparkline(rising, ARRAY_SIZE(rising));
	assert_string_equal(s, "▁▂▃▄▅▆▇█");
	free(s);
	s = report_sparkline(flat, ARRAY_SIZE(flat));
	assert_string_equal(s, "▄▄");
	free(s);
	s = report_sparkline(jpy, ARRAY_SIZE(jpy));
	assert_string_equal(s, "█▅▄▄▄▁");
	free(s);
	s = report_sparkline(NULL, 0);
	assert_string_equal(s, "");
	free(s);
}

static void test_basename(void **state)
{
	(void)state;
	char buf[64];
	cJSON *run = snapshot();
	report_basename(run, buf, sizeof(buf));
	assert_string_equal(buf, "1987-W13-asia-g10-fx");
	set_string(run, "iso_week", "../1987/W13 x");
	report_basename(run, buf, sizeof(buf));
	assert_string_equal(buf, "1987W13x-asia-g10-fx");
	cJSON_DeleteItemFromObject(run, "iso_week");
	report_basename(run, buf, sizeof(buf));
	assert_string_equal(buf, "weekly-1987-W13-6f2a-asia-g10-fx");
	set_string(run, "run_id", "weekly-1987-W13-6f2a-and-a-very-long-tail-of-text");
	char small[32];
	report_basename(run, small, sizeof(small));
	assert_string_equal(small, "weekly-1987-W13-6f2-asia-g10-fx");
	cJSON_Delete(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_title_and_window),
		cmocka_unit_test(test_pairs_table),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_summary_lead),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_events_grouped),
		cmocka_unit_test(test_sentiment_by_currency),
		cmocka_unit_test(test_findings_and_issues),
		cmocka_unit_test(test_failures_and_provenance),
		cmocka_unit_test(test_draft_pending),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_sparkline),
		cmocka_unit_test(test_basename),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
