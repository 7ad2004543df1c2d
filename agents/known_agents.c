/* Known agent names (see known_agents.h). */
#include "agents/known_agents.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agents/runtime.h"
#include "core/util.h"
#include "core/banned.h"

struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *s, const char *name)
{
	if (!util_valid_agent_name(name))
		return;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = xstrdup(name);
}

/* Directory entries under dir that are directories (queues) or, with
 * suffix, files NAME<suffix> (state files). */
static void names_scan(struct names *s, const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!suffix) {
			char *p = xasprintf("%s/%s", dir, de->d_name);
			struct stat st;
			if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
				names_add(s, de->d_name);
			free(p);
			continue;
		}
		size_t len = strlen(de->d_name), sl = strlen(suffix);
		if (len > sl && !strcmp(de->d_name + len - sl, suffix)) {
			char *n = xstrndup(de->d_name, len - sl);
			names_add(s, n);
			free(n);
		}
	}
	if (d)
		closedir(d);
}

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool known_agent(const char *data_dir, const char *name, bool broadcast_ok, char **known)
{
	if (known)
		*known = NULL;
	if (broadcast_ok && !strcmp(name, "broadcast"))
		return true;
	struct names s = { 0 };
	for (size_t i = 0; i < agent_nroles; i++)
		names_add(&s, agent_roles[i]->name);
	static const char *const qs[] = { "inbox", "processing", "retry" };
	for (size_t i = 0; i < ARRAY_SIZE(qs); i++) {
		char *dir = xasprintf("%s/messages/%s", data_dir, qs[i]);
		names_scan(&s, dir, NULL);
		free(dir);
	}
	char *sd = xasprintf("%s/state", data_dir);
	names_scan(&s, sd, "-state.json");
	free(sd);
	bool found = false;
	for (size_t i = 0; i < s.n && !found; i++)
		found = !strcmp(s.v[i], name);
	if (!found && known) {
		if (s.n > 1)
			qsort(s.v, s.n, sizeof(*s.v), names_cmp);
		struct sbuf b;
		sbuf_init(&b);
		for (size_t i = 0; i < s.n; i++)
			sbuf_addf(&b, "%s%s", i ? ", " : "", s.v[i]);
		if (broadcast_ok)
			sbuf_addf(&b, "%sbroadcast", s.n ? ", " : "");
		*known = sbuf_detach(&b);
	}
	for (size_t i = 0; i < s.n; i++)
		free(s.v[i]);
	free(s.v);
	return found;
}
