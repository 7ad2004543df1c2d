/* The file-system bus tests' fixture (tests/unit/test_bus.c,
 * test_bus_durable.c): a scratch data directory with its bus, heartbeats
 * to send, and counts of an inbox's files. */
#ifndef MADF_TEST_BUS_H
#define MADF_TEST_BUS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bus.h"
#include "core/util.h"

struct fx {
	char dir[64];
	struct bus_config cfg;
	struct bus *bus;
};

static inline int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/madf-unit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	bus_config_init(&f->cfg, f->dir);
	f->cfg.durable = false;
	f->cfg.retry_base_ms = 1;
	f->cfg.retry_max_ms = 4;
	f->cfg.force_poll = false;
	char *err = NULL;
	assert_int_equal(bus_open(&f->cfg, &f->bus, &err), 0);
	*state = f;
	return 0;
}

static inline int teardown(void **state)
{
	struct fx *f = *state;
	bus_free(&f->bus);
	util_rm_tree(f->dir);
	bus_config_release(&f->cfg);
	free(f);
	return 0;
}

static inline cJSON *hb(int seq)
{
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "status", "idle");
	cJSON_AddNumberToObject(c, "uptime_seconds", 1);
	cJSON_AddNumberToObject(c, "active_tasks", 0);
	cJSON_AddNumberToObject(c, "sequence", seq);
	return c;
}

static inline char *send_hb(struct bus *b, const char *to, int seq, enum msg_priority p)
{
	struct msg *m = msg_new("operator", to, MSG_HEARTBEAT, hb(seq));
	m->priority = p;
	char *err = NULL;
	int r = bus_send(b, m, &err);
	if (r < 0)
		fail_msg("send: %s", err);
	char *id = xstrdup(m->id);
	msg_free(&m);
	return id;
}

static inline int seq_of(const struct bus_delivery *d)
{
	return cJSON_GetObjectItem(d->msg->content, "sequence")->valueint;
}

static inline size_t count_in(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		size_t s = strlen(suffix);
		if (de->d_name[0] != '.' && l > s && !strcmp(de->d_name + l - s, suffix) &&
		    !strstr(de->d_name, ".reason.json"))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

#endif
