/* The registered workflows: adding an agent system is a definition in its
 * own file and one line here (see cli/workflows.h). */
#include "cli/workflows.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/banned.h"

const struct workflow_def *const workflow_defs[] = {
	&workflow_weekly,
	&workflow_review,
};
const size_t workflow_ndefs = ARRAY_SIZE(workflow_defs);

const struct cli_cmd *const workflow_run_subs[] = {
	&run_weekly_entry,
	&run_review_entry,
	NULL,
};

const struct workflow_def *workflow_find(const char *name)
{
	for (size_t i = 0; name && i < workflow_ndefs; i++)
		if (!strcmp(workflow_defs[i]->name, name))
			return workflow_defs[i];
	return NULL;
}

const struct workflow_def *workflow_of_run(const char *data_dir, const char *run_id)
{
	for (size_t i = 0; run_id && i < workflow_ndefs; i++) {
		const struct workflow_def *w = workflow_defs[i];
		cJSON *run = w->run_load ? w->run_load(data_dir, run_id) : NULL;
		bool found = run != NULL;
		cJSON_Delete(run);
		if (found)
			return w;
	}
	return NULL;
}

struct workflow_task *workflow_tasks(const struct workflow_def *w, const cJSON *run, size_t *n)
{
	*n = 0;
	if (!w || !w->tasks || !run)
		return NULL;
	size_t cap = 64;
	struct workflow_task *t = xcalloc(cap, sizeof(*t));
	*n = w->tasks(run, t, cap);
	if (*n > cap) {
		free(t);
		t = xcalloc(*n, sizeof(*t));
		*n = w->tasks(run, t, *n);
	}
	return t;
}

char *workflow_names(void)
{
	struct sbuf b;
	sbuf_init(&b);
	for (size_t i = 0; i < workflow_ndefs; i++)
		sbuf_addf(&b, "%s%s", i ? ", " : "", workflow_defs[i]->name);
	return sbuf_detach(&b);
}
