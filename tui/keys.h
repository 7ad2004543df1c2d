/* The console's key tables: declarative lists of bindings (key,
 * operation, help, destructive, hint), the global one here and each
 * view's own in its view_ops, from which `?` help and each view's key-hint
 * line are generated. */
#ifndef MADF_KEYS_H
#define MADF_KEYS_H

#include <stdbool.h>
#include <stddef.h>

enum console_op {
	OP_NONE,
	OP_QUIT, OP_HELP, OP_VIEW_NEXT, OP_VIEW_PREV,
	OP_UP, OP_DOWN, OP_PAGE_UP, OP_PAGE_DOWN, OP_HOME, OP_END,
	OP_OPEN, OP_BACK, OP_FILTER, OP_COMMAND, OP_PAUSE,
	OP_MARK, OP_MARK_ALL,
	OP_RETRY, OP_DELETE, OP_KILL,
	OP_REASSIGN, OP_TASK_RETRY, OP_TASK_CANCEL, OP_TASK_HOLD, OP_TASK_RELEASE,
	OP_TASK_PRIORITY, OP_TASK_ASSIGN, OP_LEVEL, OP_FOLLOW, OP_EXPORT,
	OP_EDIT, OP_RETRY_TO, OP_TASK_APPROVE, OP_TASK_SKIP_LLM,
	OP_COUNT
};

struct key_binding {
	int key;              /* a character or a curses KEY_* code */
	enum console_op op;
	const char *help;
	bool destructive;     /* asks "... N messages? y/n" */
	bool writes;          /* changes something: refused with --read-only */
	const char *hint;     /* a word for the key-hint line ("retry"), or NULL */
};

/* The keys of every view. */
extern const struct key_binding keys_table[];
extern const size_t keys_count;

/* The binding of key among a view's own (own, nown; may be NULL, 0), then
 * the global ones, or NULL. */
const struct key_binding *keys_lookup(const struct key_binding *own, size_t nown, int key);
/* "q", "Enter", "Up", "Tab" ... for help; buf of at least 16 bytes. */
void keys_name(int key, char *buf, size_t size);
/* The operation's name, for the journal and messages ("retry"). */
const char *keys_op_name(enum console_op op);
/* A script token ("x", "<Enter>", "<Up>") to a key; -1 if unknown. */
int keys_parse(const char *token);

#endif
