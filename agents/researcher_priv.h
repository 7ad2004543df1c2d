/* Shared between the research agents' parts: agents/researcher.c (tasks,
 * market work, the model's analysis) and agents/researcher_news.c (news
 * work). Not a public interface. */
#ifndef MADF_RESEARCHER_PRIV_H
#define MADF_RESEARCHER_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

struct agent;

/* Sends a task_progress for task to `to` (correlation corr). */
void researcher_progress(struct agent *a, const char *task, const char *to, const char *corr,
			 double pct, const char *step);
/* Appends a finding to arr; takes sources and data (either may be NULL). */
void researcher_add_finding(cJSON *arr, const char *id, const char *kind, const char *pair,
			    const char *text, cJSON *sources, cJSON *data);
/* "USD/JPY" -> "USDJPY" into buf. */
void researcher_pair_code(const char *pair, char *buf, size_t size);
/* A news task for pair over the days ws..we: the acts, tone and stories
 * into raw, findings, sources and warnings; 0, or -1 with *err. */
int researcher_work_news(struct agent *a, const char *pair, int32_t ws, int32_t we,
			 cJSON *raw, cJSON *findings, cJSON *sources, cJSON *warnings,
			 int *points, double *confidence, char **err);

#endif
