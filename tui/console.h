/* The operator console: one event loop (core/loop.h) over the keyboard,
 * the bus monitor's inotify descriptor, the views' descriptors, a timer
 * and signals (self-pipe); views (struct view_ops) that read the bus, the
 * state files and the logs; every action a bus operation, journalled.
 * Only the UI thread touches curses. */
#ifndef MADF_CONSOLE_H
#define MADF_CONSOLE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include <cJSON.h>

#include "core/bus.h"
#include "cli/cli.h"
#include "tui/keys.h"
#include "tui/theme.h"

struct console;
struct view;
struct loop;

/* A view: one table of functions, as tmux's struct window_mode, with its
 * state in view->data; the console drives it and knows no view by name.
 * Adding a view is a file with its ops and an entry in console_view_table
 * (tui/views.c). name, title, help, init, load, draw and release are
 * required; the other hooks may be NULL. */
struct view_ops {
	const char *name;   /* "queues": the digit key's operation is view-NAME */
	const char *title;  /* "Queues": its tab, its heading in ? help */
	const char *help;   /* what its digit key shows, for ? help */
	const struct key_binding *keys; /* its own keys (help, the hint line) */
	size_t nkeys;
	/* Its state, owned (view->data); NULL when it has none. */
	void *(*init)(struct console *c);
	/* Every reload, for every view: shown is whether it is on screen (a
	 * view not shown does no more than cheap upkeep). Flags. */
	unsigned (*load)(struct console *c, struct view *v, bool shown);
	/* Paints lines y0..y1 (exclusive). */
	void (*draw)(struct console *c, struct view *v, int y0, int y1);
	/* One of its keys (or OP_OPEN, OP_BACK); answer is 0 when pressed,
	 * the key typed at the question it asked with console_confirm
	 * otherwise. Flags; CONSOLE_PASS when it leaves the key to the
	 * console. */
	unsigned (*act)(struct console *c, struct view *v, enum console_op op, int answer);
	/* Whether key op does something on what the view shows (the hint
	 * line leaves out those that do not). */
	bool (*applies)(const struct view *v, enum console_op op);
	/* The Enter (or Esc) item of the hint line ("Enter inbox"), or NULL. */
	const char *(*enter_hint)(const struct view *v);
	/* The selection moved (keys, the mouse). */
	void (*moved)(struct console *c, struct view *v);
	/* Every frame, for every view (answers coming in); flags. */
	unsigned (*frame)(struct console *c, struct view *v);
	/* A descriptor the loop watches for the view (-1: none), and what it
	 * does when that is readable (flags). */
	int (*fd)(const struct view *v);
	unsigned (*wake)(struct console *c, struct view *v);
	/* Frees data, after ending what the view runs (c still usable: its
	 * journal, its status line). */
	void (*release)(struct console *c, struct view *v);
};

/* The views, in tab order (tui/views.c); 1-9 select them. */
#define CONSOLE_VIEWS_MAX 9
extern const struct view_ops *const console_view_table[];
extern const size_t console_nviews;
extern const struct view_ops view_overview_ops, view_tasks_ops, view_queues_ops,
	view_logs_ops, view_reports_ops, view_tools_ops, view_conversations_ops;

/* What a handler changed; the loop redraws once per turn. */
enum {
	CONSOLE_REDRAW = 1 << 0,  /* draw the screen again */
	CONSOLE_RELOAD = 1 << 1,  /* re-read the current view's data */
	CONSOLE_QUIT = 1 << 2,
	CONSOLE_PASS = 1 << 3,    /* a view's act: not handled, the console's default */
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
struct console_opts {
	bool attach, read_only;
	const char *theme;
	const char *script, *dump;
};

/* A view's descriptor as the console's loop watches it. */
struct console_watch {
	struct console *c;
	struct view *v;
	int fd;                  /* registered in the loop; -1: none */
};

/* One view of the console: its ops, its rows, its state. */
struct view {
	const struct view_ops *ops;
	void *data;
	struct console_rows rows;
};

struct console {
	struct cli *cli;
	struct console_opts opts;
	struct bus *bus;
	struct bus_monitor *mon;
	struct bus_stats stats;  /* the bus meters, read every reload */
	struct theme theme;
	bool headless;           /* scripted mode: no terminal */
	struct view *views;      /* console_nviews, in console_view_table's order */
	size_t view;             /* the one shown */
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
	/* a question (MODE_CONFIRM): quit, or a view's (console_confirm) */
	size_t embedded_agents;   /* agent threads this console runs */
	char question[640];
	enum console_op pending;  /* waiting for y (or any key: pending_any) */
	struct view *pending_view; /* NULL: the console's own (quit) */
	bool pending_any;
	bool paused;
	/* filter */
	regex_t re;
	bool re_set, re_invert;
	char *re_literal;  /* the pattern, when it has no regex syntax */
	char filter[256];
	char run_id[128];        /* the run this console started, or "" */
	/* help */
	size_t help_top;
	int rows_y0;             /* screen line of the first row drawn */
	/* loop (core/loop.h): the self-pipe, the bus monitor, the keyboard,
	 * the views' descriptors, the refresh timer */
	struct loop *loop;
	unsigned turn;           /* what the callbacks of this turn saw */
	struct console_watch watch[CONSOLE_VIEWS_MAX];
	int64_t tick_id, tick_at; /* the timer, and the next_tick_ns it is set for */
	bool quit;
	int sig_fd;              /* read end of the self-pipe */
	int64_t next_tick_ns, last_reload_ns;
	char *script_error;
	unsigned long frames;    /* screens drawn (for madf bench console) */
	unsigned long bus_gen;   /* bumped whenever the bus monitor sees a change */
	void *screen;            /* the scripted mode's SCREEN, or NULL */
	FILE *null_out, *null_in; /* its /dev/null terminal */
};

/* The views of c: set up (each one's init) and released. */
void console_views_init(struct console *c);
void console_views_release(struct console *c);
/* The view shown; the view of c with these ops (NULL when none). */
struct view *console_view(struct console *c);
struct view *console_view_find(struct console *c, const struct view_ops *ops);
/* Shows v (its data read again at the next reload). */
void console_show(struct console *c, struct view *v);
/* Asks the question fmt (sanitised) on the bottom line before view v's
 * op; y (any key when any_key) calls v's act with op and the key as
 * answer, anything else says "cancelled". Returns CONSOLE_REDRAW. */
unsigned console_confirm(struct console *c, struct view *v, enum console_op op, bool any_key,
			 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Opens the command line with text typed (":retry-to "), status saying why. */
unsigned console_command_open(struct console *c, const char *text, const char *status);
/* Read-only: says and journals that op was refused. */
unsigned console_refuse(struct console *c, enum console_op op);
/* An agent neither configured nor ever seen on the bus is refused (a typo
 * would make an inbox no agent reads) unless the command ends in '!'; true
 * when refused, the status line naming the known agents. */
bool console_agent_unknown(struct console *c, const char *cmd, const char *agent);

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
/* Enter on a row of a view without an Enter of its own: the whole row in
 * the reader, extra (may be NULL) below it. */
unsigned console_read_row(struct console *c, const char *extra);
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
/* The : commands: one table (tui/console_cmd.c) from which the command
 * line runs them, Tab completes them and ? help lists them. */
enum console_arg { CMD_ARG_AGENT, CMD_ARG_THEME }; /* what Tab completes after the name */
struct console_cmd {
	const char *name;
	const char *args;  /* as help shows them ("NAME", "[NAME]"), or NULL */
	const char *help;
	enum console_arg complete;
	/* arg: the first word after the name ("" when none); line: the whole
	 * line; is_new: the name ended in '!' (:inbox! NAME). Flags. */
	unsigned (*run)(struct console *c, const char *name, const char *arg, const char *line,
			bool is_new);
};
extern const struct console_cmd console_cmds[];
extern const size_t console_ncmds;
/* Runs one command line (without the ':'). */
unsigned console_run_command(struct console *c, const char *line);
/* The agents Tab completes: the default ones, then those the bus has. */
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
/* The exports directory dir (data/reports/exports) made and writable: 0,
 * or -1 with *err (caller frees) saying what failed. (tui/view_reports.c) */
int console_export_dir_ready(const char *dir, char **err);
/* A JSON file under the data directory, or NULL. */
cJSON *console_load_json(const char *path);
/* "12s", "3m", "2h", "4d" */
void console_age(int64_t ns, char *buf, size_t size);

/* What the views offer each other and the : commands. */
/* :agent NAME: the overview shown, NAME's row selected. */
unsigned view_overview_select(struct console *c, const char *agent);
/* :assign KIND PAIR [AGENT]: asks the product_manager for a new task. */
/* :run WORKFLOW ARGS: the workflow's trigger (the review's: ARGS its
 * PATH|NAME), said on the status line and journalled; the run becomes the
 * console's (Tasks, Reports). */
unsigned view_tasks_run(struct console *c, const char *workflow, const char *args);
unsigned view_tasks_assign(struct console *c, const char *kind, const char *pair,
			   const char *agent);
/* The run-health line of the current run (agents/workflow.h,
 * wf_run_health) for the overview; true when the run is stuck. */
bool view_tasks_health(struct console *c, char *buf, size_t size);
/* The answers to the task controls sent (tui/task_replies.c): shown on
 * the status line and journalled as they come. */
#define TASK_REPLIES_MAX 32
struct task_reply_wait {
	char id[MSG_ID_MAX + 1];   /* the control's message id */
	char action[32];
	char task[64];             /* "" for assign */
	char label[160];           /* "reassign USDJPY-market" */
	char controller[64];       /* who answers it (the workflow's controller) */
	int64_t sent_ns;           /* monotonic */
	bool said;                 /* offline or no answer: said once */
};
struct task_replies {
	struct task_reply_wait v[TASK_REPLIES_MAX];
	size_t n;
	int64_t polled_ns;
};
/* Remembers the control id sent to controller (the run's workflow's,
 * cli/workflows.h; action on task, NULL for assign; label names it on the
 * status line) until its answer comes; returns the controller's
 * wf_liveness (agents/workflow.h), with a phrase in why when it is not
 * alive. */
int task_replies_sent(struct task_replies *tr, struct console *c, const char *controller,
		      const char *id, const char *action, const char *task, const char *label,
		      char *why, size_t size);
/* Takes the answers come in (at most every 100 ms, while one is awaited). */
unsigned task_replies_poll(struct task_replies *tr, struct console *c);

enum queue_kind { QUEUE_INBOX, QUEUE_PROCESSING, QUEUE_DEAD, QUEUE_PROCESSED, QUEUE_TRASH };
/* :inbox NAME, :dlq ...: the queues view shown on that queue (agent ""
 * for every agent's claims; NULL keeps the agent it had). */
unsigned view_queues_show(struct console *c, enum queue_kind kind, const char *agent);
/* :retry-to AGENT: asks to confirm a retry of the marked dead letters (or
 * the current one) to AGENT's inbox. */
unsigned view_queues_retry_to(struct console *c, const char *agent, bool is_new);
/* Whether the queues view is shown on the dead letters (madf bench). */
bool view_queues_shows_dead(struct console *c);
/* E (tui/view_queues_edit.c): the current dead letter of v edited in
 * $EDITOR, then bus_requeue; view_queues_dirty has the queue read again
 * (and the detail pane) at the next refresh. */
unsigned view_queues_edit(struct console *c, struct view *v);
void view_queues_dirty(struct view *v);
/* :logs NAME, :since 10m|2h|1d|90s|all: the logs view shown, of that agent,
 * over that window. */
unsigned view_logs_show(struct console *c, const char *agent);
unsigned view_logs_since(struct console *c, const char *arg);

/* Inside the console (tui/console*.c): rows kept and moved, the loop's
 * pieces. */
void console_rows_release(struct console_rows *r);
/* Moves the cursor off a heading row, in direction dir (1 or -1) first. */
void console_rows_skip_headings(struct console_rows *r, int dir);
/* One key as the loop handles it; flags. */
unsigned console_key(struct console *c, int ch);
/* The console's loop: set up once sig_fd, mon, headless, the views and
 * next_tick_ns are (0, or -1 with *err), freed. */
int console_loop_open(struct console *c, char **err);
void console_loop_close(struct console *c);
/* One turn of the loop (at most max_ms; -1: until the timer) for signals,
 * bus events, the keyboard, a view's descriptor; flags. */
unsigned console_pump(struct console *c, int max_ms);
/* The frame flags call for: task answers, a reload, a draw. */
void console_frame(struct console *c, unsigned f);
/* The interactive loop, until quit. */
int console_loop(struct console *c);
/* The screen's text, a line per row, trailing blanks cut (caller frees). */
char *console_screen_text(void);

/* The console set up from its options (c, copied; ro: the options of the
 * run it starts), run, taken down; an exit code (cli/cli.h).
 * (tui/console_main.c; cmd_console in tui/console_cli.c parses them) */
struct run_opts;
int console_main(struct console *c, struct run_opts *ro);

/* Benchmark hooks (madf bench console, cli/cli_bench.c): a headless
 * console on the scripted mode's 120x40 virtual screen, in --attach mode
 * on cli's bus, driven in-process. One at a time per process (the
 * signal self-pipe is the process's). */
struct console *console_bench_open(struct cli *cli);   /* NULL on failure */
/* One key as the interactive loop handles it: the key, then its frame. */
void console_bench_key(struct console *c, int key);
/* One turn of the loop with no key: wait at most max_ms for the timer or
 * bus events, then the frame they call for. */
void console_bench_turn(struct console *c, int max_ms);
void console_bench_close(struct console *c);

#endif
