/* Declarative JSON object schemas: a table of field_spec rows per object,
 * checked by schema_validate. The message content schemas (core/message.c)
 * and the review findings (core/finding.c) are written with it. */
#ifndef MADF_SCHEMA_H
#define MADF_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

struct msg_errors;
struct vctx;

enum field_kind {
	FK_STR,
	FK_ENUM,
	FK_INT,
	FK_NUM,
	FK_TIME,
	FK_OBJ,
	FK_NUM_MAP,  /* an object whose values are all numbers */
	FK_STR_LIST,
	FK_OBJ_LIST, /* a list of objects, each checked against items */
};

#define F_REQ 1u      /* required; null is then a wrong type */
#define F_NONEMPTY 2u /* a string or list that must not be empty */
#define F_MIN 4u
#define F_MAX 8u
#define REQ F_REQ
#define OPT 0u
#define RANGE (F_MIN | F_MAX)

struct schema;

struct field_spec {
	const char *name;
	enum field_kind kind;
	unsigned flags;
	double min, max;
	const char *const *choices; /* FK_ENUM, NULL-terminated */
	const struct schema *items; /* FK_OBJ_LIST */
};

struct schema {
	const struct field_spec *fields;
	size_t count;
	/* A rule across fields, or NULL. Report errors with schema_error. */
	void (*check)(const cJSON *obj, const char *prefix, struct vctx *v);
	/* Closed: a member the table does not name is an error ("not
	 * allowed"). The message schemas are open. */
	bool closed;
};

#define SCHEMA(fields, check) { fields, sizeof(fields) / sizeof((fields)[0]), check, false }
#define SCHEMA_CLOSED(fields, check) { fields, sizeof(fields) / sizeof((fields)[0]), check, true }

/* Checks obj (an object) against sc; error paths start at prefix ("" for
 * the top level). Returns the number of errors, appended to errs (may be
 * NULL) as "path: rule". */
int schema_validate(const struct schema *sc, const cJSON *obj,
		    const char *prefix, struct msg_errors *errs);
/* For a check function: one error at path. */
void schema_error(struct vctx *v, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
