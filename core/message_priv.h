/* The insides of messages, shared by core/message*.c only: a validation
 * pass, the content schemas' types and table, and what one part calls in
 * another. No other file includes this. */
#ifndef MADF_MESSAGE_PRIV_H
#define MADF_MESSAGE_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "core/message.h"

#define RULE_TIME "must be ISO 8601 with a time zone"

/* A validation pass: errors go to errs (when not NULL), n counts them. */
struct vctx {
	struct msg_errors *errs;
	int n;
};

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
	/* A rule across fields, or NULL. */
	void (*check)(const cJSON *obj, const char *prefix, struct vctx *v);
};

/* message.c: names, errors and field rules. */
char *msg_choices_join(const char *const *list);
char *msg_type_choices(bool with_aliases);
void msg_verr(struct vctx *v, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool msg_json_is_integer(double d);

/* message_schema.c: the schemas, content validation, seed 003 content. */
extern const struct schema msg_schemas[MSG_TYPE_COUNT];
void msg_content_validate(enum msg_type type, const cJSON *content,
			  const char *prefix, struct vctx *v);
void msg_content_map_apply(enum msg_type type, cJSON *content);

#endif
