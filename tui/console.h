/* The operator console: one poll() reactor over the keyboard, the bus
 * monitor's inotify descriptor, a timer and signals (self-pipe); views that
 * read the bus, the state files and the logs; every action a bus
 * operation, journalled. Only the UI thread touches curses. */
#ifndef MADF_CONSOLE_H
#define MADF_CONSOLE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include <cJSON.h>

#include "core/bus.h"
#include "cli/cli.h"
#include "tui/keys.h"
#include "tui/theme.h"

enum console_view {
	VIEW_OVERVIEW,
	VIEW_TASKS,
	VIEW_QUEUES,
	VIEW_LOGS,
	VIEW_REPORTS,
	VIEW_TOOLS,
	VIEW_COUNT
};

/* What a handler changed; the loop redraws once per turn. */
enum {
	CONSOLE_REDRAW = 1 << 0,  /* draw the screen again */
	CONSOLE_RELOAD = 1 << 1,  /* re-read the current view's data */
	CONSOLE_QUIT = 1 << 2,
};

/* One line of a view: text already sanitised; id NULL for a heading. */
struct console_row {
	char *text;
	char *id;
	enum theme_slot slot;
	bool marked;
};

struct console_rows {
	struct console_row *v;
	size_t n, cap;
	size_t *vis;       /* indexes of the rows that pass the filter */
	size_t nvis;
	size_t sel, top;   /* in vis */
	uint64_t hash;     /* of the texts: unchanged data draws nothing */
	char *sel_id;      /* kept across a refresh */
	char **keep;       /* marked ids kept across a refresh */
	size_t nkeep;
	bool keep_pending; /* keep not yet applied to the new rows */
};

enum console_mode { MODE_NORMAL, MODE_COMMAND, MODE_FILTER, MODE_CONFIRM, MODE_HELP,
		    MODE_READER };

/* One status message as kept for :messages. */
struct console_msg {
	int64_t ts_ns;   /* wall clock */
	bool error;
	char *text;      /* sanitised, whole */
};
#define CONSOLE_MSGS_MAX 200
enum queue_kind { QUEUE_INBOX, QUEUE_PROCESSING, QUEUE_DEAD, QUEUE_PROCESSED, QUEUE_TRASH };

struct console_opts {
	bool attach, read_only;
	const char *theme;
	const char *script, *dump;
};

struct console {
	struct cli *cli;
	struct console_opts opts;
	struct bus *bus;
	struct bus_monitor *mon;
	struct theme theme;
	bool headless;           /* scripted mode: no terminal */
	enum console_view view;
	struct console_rows rows[VIEW_COUNT];
	enum console_mode mode;
	char line[256];          /* command or filter being typed */
	size_t line_len;
	char status[2048];
	bool status_error;
	/* status messages, oldest first, a ring of CONSOLE_MSGS_MAX */
	struct console_msg msgs[CONSOLE_MSGS_MAX];
	size_t nmsgs, msgs_head;
	/* the full-screen reader (MODE_READER) */
	char *reader_title, *reader_text;
	int reader_indent;        /* continuation lines of a paragraph */
	size_t reader_top, reader_nlines;
	int reader_h;             /* lines shown at the last draw */
	enum console_mode reader_back;
	/* Tab completion: the candidates shown above the command line */
	char **comp;
	size_t ncomp, comp_i;     /* comp_i == ncomp: none chosen yet */
	size_t comp_base;         /* where the word completed starts in line */
	/* quit */
	size_t embedded_agents;   /* agent threads this console runs */
	char quit_question[512];
	enum console_op pending; /* waiting for y */
	size_t pending_n;
	bool paused;
	/* filter */
	regex_t re;
	bool re_set, re_invert;
	char *re_literal;  /* the pattern, when it has no regex syntax */
	char filter[256];
	/* overview */
	struct bus_stats stats;
	uint64_t data_bytes;
	int64_t data_bytes_ns;
	/* queues */
	enum queue_kind qkind;
	char qagent[MSG_AGENT_MAX + 1];
	char *detail;            /* sanitised, with newlines */
	char detail_id[256];
	char retry_to[MSG_AGENT_MAX + 1]; /* T / :retry-to: the inbox asked for */
	/* logs */
	char log_agent[MSG_AGENT_MAX + 1];
	int log_level;           /* minimum level shown, 0 debug .. 3 error */
	bool log_follow;
	char *log_sig;           /* sizes and mtimes of the files read */
	int64_t log_since_s;     /* :since: lines older than this hidden; 0 all */
	char log_since[16];      /* as typed, for the header */
	bool log_open;           /* the selected line's detail pane is shown */
	/* overview: errors per minute, tool calls */
	double err_rate;         /* error-log lines per minute, last 5 minutes */
	/* reports */
	char run_id[128];        /* the run this console started, or "" */
	char report_path[1024];
	char report_open[1024];  /* a finished report shown instead of the draft */
	char *report_sig;
	/* help */
	size_t help_top;
	int rows_y0;             /* screen line of the first row drawn */
	/* loop */
	bool quit;
	int sig_fd;              /* read end of the self-pipe */
	int64_t next_tick_ns, last_reload_ns;
	char *script_error;
	unsigned long frames;    /* screens drawn (for madf bench console) */
	unsigned long bus_gen;   /* bumped whenever the bus monitor sees a change */
};

/* For the views. */
void console_rows_clear(struct console_rows *r);
void console_rows_add(struct console_rows *r, const char *id, enum theme_slot slot,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* After a refresh: the filter again, the selection kept in range; returns
 * CONSOLE_REDRAW when the texts changed. */
unsigned console_rows_done(struct console *c, struct console_rows *r);
struct console_row *console_rows_current(struct console_rows *r);
/* Draws the rows between lines y0 and y1 (exclusive), with the header
 * line hdr (may be NULL) above them. */
void console_rows_draw(struct console *c, struct console_rows *r, int y0, int y1,
		       const char *hdr);
/* Text at (y, x), at most width columns, UTF-8; the rest of the width
 * blank when pad. */
void console_put(struct console *c, int y, int x, int width, enum theme_slot slot,
		 const char *s, bool pad);
/* Says fmt on the status line (wrapped onto the line above when long)
 * and keeps it for :messages. (tui/console_status.c) */
void console_status(struct console *c, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The full-screen reader: title and text (copied; sanitised here, newlines
 * kept) wrapped to the screen, j/k PgUp/PgDn g/G scroll, Esc, q or Enter
 * return to the view. For a view's Enter on a row. */
void console_reader_open(struct console *c, const char *title, const char *text);
/* :messages: the status messages kept, newest first, with their time. */
unsigned console_messages_open(struct console *c);
/* Enter on a row of a view without an Enter of its own: the whole row (a
 * task: its record in the product_manager's state) in the reader. */
unsigned console_read_row(struct console *c);
/* q, :q: quits at once when no agent runs in this console; else asks,
 * naming what stops and where the run is. */
unsigned console_quit_ask(struct console *c);
/* Frame pieces drawn by tui/console_status.c: the key-hint (or
 * completion, or second status) line above the bottom line and the bottom
 * line; help; the reader. */
void console_draw_bottom(struct console *c);
void console_draw_help(struct console *c, int y0, int y1);
void console_reader_draw(struct console *c, int y0, int y1);
unsigned console_reader_key(struct console *c, int ch);
/* Tab on the command line: completes, lists the candidates above it,
 * cycles through them on the next Tab; console_complete_reset forgets
 * them (any other key). */
void console_complete(struct console *c);
void console_complete_reset(struct console *c);
void console_status_release(struct console *c);
/* The commands of the : line, for completion; agents known. */
extern const char *const console_commands[];
extern const size_t console_ncommands;
extern const char *const console_view_titles[VIEW_COUNT];
const char *console_agent_name(struct console *c, size_t i);
/* UTF-8: the next character of s at *i (advanced); '?' for a bad byte. */
void console_utf8_next(const char *s, size_t *i, wchar_t *out);
/* Columns a character takes on the screen (control characters: 1, shown
 * as '?'). */
int console_char_width(wchar_t w);
/* Appends {ts, user, action, ids, result} to data/journal/actions.jsonl;
 * console_journal_with adds extra (copied; may be NULL) under key. */
void console_journal(struct console *c, const char *action, const cJSON *ids,
		     const char *result);
void console_journal_with(struct console *c, const char *action, const cJSON *ids,
			  const char *result, const char *key, const cJSON *extra);
/* A JSON file under the data directory, or NULL. */
cJSON *console_load_json(const char *path);
/* "12s", "3m", "2h", "4d" */
void console_age(int64_t ns, char *buf, size_t size);

/* The views: refresh re-reads data and returns flags; draw paints lines
 * y0..y1; act performs a view's operation. */
unsigned view_overview_refresh(struct console *c);
void view_overview_draw(struct console *c, int y0, int y1);
void view_overview_release(void); /* stops the data size walk */
unsigned view_tasks_refresh(struct console *c);
void view_tasks_draw(struct console *c, int y0, int y1);
unsigned view_tasks_act(struct console *c, enum console_op op);
/* Whether the selected task is awaiting budget approval; says why not. */
bool view_tasks_awaits_approval(struct console *c);
/* :assign KIND PAIR [AGENT]: asks the product_manager for a new task. */
unsigned view_tasks_assign(struct console *c, const char *kind, const char *pair,
			   const char *agent);
/* p: the priority prompt (c->pending OP_TASK_PRIORITY in MODE_CONFIRM);
 * its text, and the key that answers it (u, h, n, l; others cancel). */
const char *view_tasks_prompt(void);
unsigned view_tasks_priority(struct console *c, int key);
/* The answers to the task controls sent (tui/task_replies.c): shown on
 * the status line and journalled as they come; called every frame. */
unsigned view_tasks_poll(struct console *c);
/* The run-health line of the current run (agents/workflow.h,
 * wf_run_health) for the overview; true when the run is stuck. */
bool view_tasks_health(struct console *c, char *buf, size_t size);
/* Remembers the control id (action on task, NULL for assign; label names
 * it on the status line) until its answer comes; returns the
 * product_manager's wf_liveness (agents/workflow.h), with a phrase in why
 * when it is not alive. */
int tasks_control_sent(struct console *c, const char *id, const char *action, const char *task,
		       const char *label, char *why, size_t size);
unsigned view_queues_refresh(struct console *c);
void view_queues_draw(struct console *c, int y0, int y1);
/* Destructive queue operations on the marked rows (or the current one). */
size_t view_queues_count(struct console *c);
unsigned view_queues_act(struct console *c, enum console_op op);
/* E: the current dead letter edited in $EDITOR, then bus_requeue. */
unsigned view_queues_edit(struct console *c);
void view_queues_release(struct console *c); /* the kept listing */
/* The queue shown is read again at the next refresh (after an action). */
void view_queues_dirty(void);
/* The dead-letter listing that runs in the background: an fd to poll (-1
 * when none) that becomes readable when it has finished; view_queues_wake
 * consumes that and says whether to reload. */
int view_queues_fd(void);
unsigned view_queues_wake(struct console *c);
unsigned view_logs_refresh(struct console *c);
void view_logs_draw(struct console *c, int y0, int y1);
/* Enter: opens (or closes) the pane with every field of the selected line;
 * Esc closes it (0 when it was not open). */
unsigned view_logs_open(struct console *c);
unsigned view_logs_back(struct console *c);
unsigned view_reports_refresh(struct console *c);
void view_reports_draw(struct console *c, int y0, int y1);
unsigned view_reports_export(struct console *c);
/* Enter on a finished report shows it; Esc back to the draft (0 when
 * there was nothing to go back from). */
unsigned view_reports_open(struct console *c);
unsigned view_reports_back(struct console *c);
unsigned view_tools_refresh(struct console *c);
void view_tools_draw(struct console *c, int y0, int y1);

/* Inside the console (tui/console*.c): rows kept and moved, the loop's
 * pieces. */
void console_rows_release(struct console_rows *r);
/* Moves the cursor off a heading row, in direction dir (1 or -1) first. */
void console_rows_skip_headings(struct console_rows *r, int dir);
/* One key as the loop handles it; flags. */
unsigned console_key(struct console *c, int ch);
/* One wait (at most max_ms; -1: until the timer) for signals, bus events,
 * the keyboard, a view's descriptor; flags. */
unsigned console_pump(struct console *c, int max_ms);
/* The frame flags call for: task answers, a reload, a draw. */
void console_frame(struct console *c, unsigned f);
/* The interactive loop, until quit. */
int console_loop(struct console *c);

/* Benchmark hooks (madf bench console, cli/cli_bench.c): a headless
 * console on the scripted mode's 120x40 virtual screen, in --attach mode
 * on cli's bus, driven in-process. One at a time per process. */
struct console *console_bench_open(struct cli *cli);   /* NULL on failure */
/* One key as the interactive loop handles it: the key, then its frame. */
void console_bench_key(struct console *c, int key);
/* One turn of the loop with no key: wait at most max_ms for the timer or
 * bus events, then the frame they call for. */
void console_bench_turn(struct console *c, int max_ms);
void console_bench_close(struct console *c);

#endif
