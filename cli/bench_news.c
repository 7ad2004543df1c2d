/* madf bench news: scores the event extractor (and the previous keyword
 * rules, in the same run) on tests/data/news-labels.jsonl, per split. */
#include "cli/bench_news.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/events_eval.h"
#include "agents/market.h"
#include "agents/news.h"
#include "agents/validator_evidence.h"
#include "cli/bench_news_vev.h"
#include "core/banned.h"
#include "core/util.h"

static const char *const action_names[EVAL_ACTIONS + 1] = { "hike", "cut", "hold",
							    "intervention", "all four" };
static const char *const splits[] = { "dev", "held-out", "named-week" };

static void fmt_pr(char *buf, size_t size, const struct eval_counts *c)
{
	double p = eval_precision(c), r = eval_recall(c);
	char ps[8], rs[8];
	snprintf(ps, sizeof(ps), isnan(p) ? "  -" : "%.2f", p);
	snprintf(rs, sizeof(rs), isnan(r) ? "  -" : "%.2f", r);
	snprintf(buf, size, "P %4s R %4s (%u/%u/%u)", ps, rs, c->tp, c->fp, c->fn);
}

static void json_counts(const char *name, const struct eval_counts *c, bool last)
{
	double p = eval_precision(c), r = eval_recall(c);
	printf("\"%s\": {\"tp\": %u, \"fp\": %u, \"fn\": %u, \"precision\": ", name, c->tp, c->fp,
	       c->fn);
	if (isnan(p))
		printf("null");
	else
		printf("%.4f", p);
	printf(", \"recall\": ");
	if (isnan(r))
		printf("null");
	else
		printf("%.4f", r);
	printf("}%s", last ? "" : ", ");
}

static const char *const verdict_names[3] = { "confirmed", "disputed", "unverified" };

static void json_verdicts(const char *name, const unsigned v[3], bool last)
{
	printf("\"%s\": {", name);
	for (int i = 0; i < 3; i++)
		printf("\"%s\": %u%s", verdict_names[i], v[i], i < 2 ? ", " : "");
	printf("}%s", last ? "" : ", ");
}

static void print_verdicts(const char *name, const unsigned v[3])
{
	unsigned n = v[0] + v[1] + v[2];
	printf("  %-13s %5u %9u %9u %10u\n", name, n, v[VEV_CONFIRMED], v[VEV_DISPUTED],
	       v[VEV_UNVERIFIED]);
}

static void day_str(int32_t day, char *buf, size_t size)
{
	int y, m, d;
	market_day_to_ymd(day, &y, &m, &d);
	snprintf(buf, size, "%04d-%02d-%02d", y, m, d);
}

/* Lists the stories of a split where the extractor and the labels differ:
 * an act missed or extra, or found on a day more than one off the label's. */
static void list_errors(const struct eval_set *set, const struct news_list *arch,
			const char *split)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct eval_story *st = &set->s[i];
		if (strcmp(st->split, split))
			continue;
		const struct news_item *it = NULL;
		for (size_t k = 0; k < arch->n && !it; k++)
			if (!strcmp(arch->items[k].id, st->id))
				it = &arch->items[k];
		if (!it)
			continue;
		struct eval_fact got[EVENTS_MAX];
		size_t n = eval_story_acts(it, st->pub, EVAL_RULES_NEW, got, EVENTS_MAX);
		struct sbuf b;
		sbuf_init(&b);
		for (size_t g = 0; g < n; g++) {
			bool ok = false;
			for (size_t f = 0; f < st->nfacts; f++)
				ok = ok || (!strcmp(st->facts[f].bank, got[g].bank) &&
					    st->facts[f].kind == got[g].kind);
			if (!ok) {
				sbuf_addf(&b, " extra %s %s;", got[g].bank, events_kind_name(got[g].kind));
				continue;
			}
			/* Right act, wrong day: a wrong event by event. */
			const struct eval_fact *near = NULL;
			for (size_t f = 0; f < st->nfacts; f++)
				if (!strcmp(st->facts[f].bank, got[g].bank) &&
				    st->facts[f].kind == got[g].kind &&
				    (!near || abs(st->facts[f].day - got[g].day) <
						      abs(near->day - got[g].day)))
					near = &st->facts[f];
			if (near && abs(near->day - got[g].day) > 1) {
				char gd[16], ld[16];
				day_str(got[g].day, gd, sizeof(gd));
				day_str(near->day, ld, sizeof(ld));
				sbuf_addf(&b, " %s %s dated %s, labelled %s;", got[g].bank,
					  events_kind_name(got[g].kind), gd, ld);
			}
		}
		for (size_t f = 0; f < st->nfacts; f++) {
			if (st->facts[f].background)
				continue;
			bool ok = false;
			for (size_t g = 0; g < n; g++)
				ok = ok || (!strcmp(st->facts[f].bank, got[g].bank) &&
					    st->facts[f].kind == got[g].kind);
			if (!ok)
				sbuf_addf(&b, " missed %s %s;", st->facts[f].bank,
					  events_kind_name(st->facts[f].kind));
		}
		if (b.len) {
			char *t = util_sanitize(it->title, strlen(it->title), false);
			printf("  %s %s:%s\n", st->id, t, b.data);
			free(t);
		}
		sbuf_release(&b);
	}
}

static int bench_news(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	struct cli_opts o = { argc, argv, 2, "bench", &cmd_bench_news_entry, 0 };
	const char *labels = "tests/data/news-labels.jsonl";
	const char *news = "../shared/data/news/reuters21578.jsonl";
	const char *market = "../shared/data/fx/fred-daily-1971-2017.csv";
	const char *errors = NULL, *verdicts = NULL;
	bool json = false;
	const char *name, *val;
	int r;
	while ((r = cli_next(&o, &name, &val)) > 0) {
		if (!name)
			return cli_fail(EXIT_USAGE, "bench", "unexpected argument %s", val);
		if (!strcmp(name, "--json"))
			json = true;
		else if (!strcmp(name, "--labels"))
			labels = val;
		else if (!strcmp(name, "--news"))
			news = val;
		else if (!strcmp(name, "--market"))
			market = val;
		else if (!strcmp(name, "--verdicts"))
			verdicts = val;
		else
			errors = val;
	}
	if (r < 0)
		return EXIT_USAGE;
	if (access(news, R_OK) < 0)
		return cli_fail(EXIT_FAIL, "bench", "the news archive is needed: %s (--news): %s",
				news, strerror(errno));
	struct eval_set set;
	char *err = NULL;
	if (eval_set_load(labels, &set, &err) < 0) {
		int rc = cli_fail(EXIT_FAIL, "bench", "%s", err);
		free(err);
		return rc;
	}
	struct news_list arch;
	if (news_load_jsonl(news, NEWS_TIME_ALL_FROM, NEWS_TIME_ALL_TO, &arch, &err) < 0) {
		int rc = cli_fail(EXIT_FAIL, "bench", "%s", err);
		free(err);
		eval_set_release(&set);
		return rc;
	}
	if (errors) {
		list_errors(&set, &arch, errors);
		news_list_release(&arch);
		eval_set_release(&set);
		return EXIT_OK;
	}
	struct bnv_table vt[ARRAY_SIZE(splits)];
	if (bench_news_vev_run(&set, &arch, market, splits, ARRAY_SIZE(splits), verdicts, vt,
			       &err) < 0) {
		int rc = cli_fail(EXIT_FAIL, "bench", "%s", err);
		free(err);
		news_list_release(&arch);
		eval_set_release(&set);
		return rc;
	}
	if (verdicts) {
		news_list_release(&arch);
		eval_set_release(&set);
		return EXIT_OK;
	}
	if (json)
		printf("{\"labels\": \"%s\", \"splits\": {", labels);
	else
		printf("bench news: central-bank acts reported as fact (hike, cut, hold, "
		       "intervention), labelled set %s\n  new = the event extractor, old = the "
		       "previous keyword rules; P precision, R recall (right/wrong/missed)\n",
		       labels);
	bool first = true;
	for (size_t s = 0; s < ARRAY_SIZE(splits); s++) {
		struct eval_result res[2];
		size_t missing = 0, m2 = 0;
		eval_run(&set, &arch, splits[s], EVAL_RULES_NEW, &res[0], &missing);
		eval_run(&set, &arch, splits[s], EVAL_RULES_OLD, &res[1], &m2);
		if (!res[0].stories)
			continue;
		if (json) {
			printf("%s\"%s\": {\"stories\": %zu, \"facts\": %zu, \"missing\": %zu",
			       first ? "" : ", ", splits[s], res[0].stories, res[0].facts, missing);
			for (int k = 0; k < 2; k++) {
				printf(", \"%s\": {\"by_story\": {", k ? "old" : "new");
				for (int a = 0; a <= EVAL_ACTIONS; a++)
					json_counts(a == EVAL_ACTIONS ? "all" : action_names[a],
						    &res[k].cite[a], a == EVAL_ACTIONS);
				printf("}, \"by_event\": {");
				for (int a = 0; a <= EVAL_ACTIONS; a++)
					json_counts(a == EVAL_ACTIONS ? "all" : action_names[a],
						    &res[k].event[a], a == EVAL_ACTIONS);
				printf("}}");
			}
			printf(", \"validator\": {");
			json_verdicts("right", vt[s].right, false);
			json_verdicts("wrong", vt[s].wrong, false);
			printf("\"background\": %u}", vt[s].background);
			printf("}");
		} else {
			printf("\n%s: %zu stories, %zu acts reported as fact%s\n", splits[s],
			       res[0].stories, res[0].facts,
			       missing ? " (some labelled stories are not in the archive)" : "");
			printf("  %-13s %-30s %-30s | %-30s %s\n", "by story", "new", "old", "by event",
			       "");
			for (int a = 0; a <= EVAL_ACTIONS; a++) {
				char n1[48], o1[48], n2[48], o2[48];
				fmt_pr(n1, sizeof(n1), &res[0].cite[a]);
				fmt_pr(o1, sizeof(o1), &res[1].cite[a]);
				fmt_pr(n2, sizeof(n2), &res[0].event[a]);
				fmt_pr(o2, sizeof(o2), &res[1].event[a]);
				printf("  %-13s %-30s %-30s | new %-30s old %s\n", action_names[a], n1, o1,
				       n2, o2);
			}
			printf("  validator's verdicts on the new acts, by event (%u matching only a "
			       "background fact left out):\n  %-13s %5s %9s %9s %10s\n",
			       vt[s].background, "acts", "n", "confirmed", "disputed", "unverified");
			print_verdicts("right", vt[s].right);
			print_verdicts("wrong", vt[s].wrong);
		}
		first = false;
	}
	if (json)
		printf("}}\n");
	news_list_release(&arch);
	eval_set_release(&set);
	return EXIT_OK;
}

static const struct cli_opt bench_news_options[] = {
	{ .name = "--labels", .arg = "PATH",
	  .help = "the labelled stories (default: tests/data/news-labels.jsonl)" },
	{ .name = "--news", .arg = "PATH",
	  .help = "the news archive (default: ../shared/data/news/reuters21578.jsonl)" },
	{ .name = "--market", .arg = "PATH",
	  .help = "the FRED daily closes the validator's check reads (default: "
		  "../shared/data/fx/fred-daily-1971-2017.csv)" },
	{ .name = "--verdicts", .arg = "SPLIT",
	  .help = "list each act the extractor reports as done in SPLIT, right or wrong "
		  "by the labels, with the validator's verdict and its reason" },
	{ .name = "--errors", .arg = "SPLIT",
	  .help = "list the stories of SPLIT (dev, held-out, named-week) where the "
		  "extractor and the labels differ: an act missed or extra, or dated "
		  "more than a day off the label's" },
	{ .name = "--json", .help = "print the figures as JSON" },
	{ 0 },
};

const struct cli_cmd cmd_bench_news_entry = {
	.name = "news",
	.opts = bench_news_options,
	.summary = "precision and recall of the news agent's central-bank events on the "
		   "hand-labelled stories, beside the previous keyword rules, and the "
		   "validator's verdicts on them",
	.run = bench_news,
};
