/* The console's setup and teardown: options, signals, curses, the
 * embedded agents and the weekly trigger, the scripted mode, the
 * benchmark hooks. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "agents/review.h"
#include "agents/runtime.h"
#include "agents/workflow.h"
#include "core/util.h"
#include "tui/console.h"
#include "cli/host.h"
#include "cli/workflows.h"
#include "core/banned.h"

#define CONSOLE_SCRIPT_COLS 120
#define CONSOLE_SCRIPT_ROWS 40

/* Signals reach the loop through this pipe. */
static int sig_pipe[2] = { -1, -1 };
static int crash_fd = 2;
static volatile sig_atomic_t curses_up;

static void console_on_signal(int sig)
{
	int e = errno;
	unsigned char b = (unsigned char)sig;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &b, 1) < 0) {
		/* the pipe is full: the loop wakes up anyway */
	}
	errno = e;
}

/* A crash restores the terminal before saying so. */
static void console_on_crash(int sig)
{
	if (curses_up)
		endwin();
	static const char msg[] = "madf: console crashed; the terminal was restored\n";
	if (write(crash_fd, msg, sizeof(msg) - 1) < 0) {
		/* nothing more can be done */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int console_signals_init(void)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	struct sigaction sa = { .sa_handler = console_on_signal };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	struct sigaction cr = { .sa_handler = console_on_crash };
	sigemptyset(&cr.sa_mask);
	cr.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &cr, NULL);
	sigaction(SIGABRT, &cr, NULL);
	sigaction(SIGBUS, &cr, NULL);
	sigaction(SIGFPE, &cr, NULL);
	return 0;
}

static void console_signals_release(void)
{
	signal(SIGWINCH, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	for (int i = 0; i < 2; i++)
		if (sig_pipe[i] >= 0) {
			close(sig_pipe[i]);
			sig_pipe[i] = -1;
		}
}

/* ---- scripted mode ---- */

char *console_screen_text(void)
{
	struct sbuf b;
	sbuf_init(&b);
	for (int y = 0; y < LINES; y++) {
		size_t start = b.len, keep = b.len;
		for (int x = 0; x < COLS; x++) {
			cchar_t cc;
			wchar_t wc[CCHARW_MAX + 1] = { 0 };
			attr_t a;
			short pair;
			if (mvwin_wch(stdscr, y, x, &cc) == ERR || getcchar(&cc, wc, &a, &pair, NULL) == ERR)
				continue;
			for (int i = 0; wc[i]; i++) {
				char mb[8];
				mbstate_t st = { 0 };
				size_t k = wcrtomb(mb, wc[i], &st);
				if (k == (size_t)-1) {
					mb[0] = '?';
					k = 1;
				}
				sbuf_add(&b, mb, k);
			}
			if (wc[0] && wc[0] != L' ')
				keep = b.len;
		}
		b.len = keep > start ? keep : start;
		b.data[b.len] = 0;
		sbuf_addch(&b, '\n');
	}
	return sbuf_detach(&b);
}

static int console_dump(struct console *c, const char *path)
{
	char *text = console_screen_text();
	char *err = NULL;
	int r = util_write_file_atomic(path, text, strlen(text), false, &err);
	if (r < 0) {
		fprintf(stderr, "madf: console: --dump-screen: %s\n", err);
		free(err);
	}
	free(text);
	(void)c;
	return r;
}

static int console_script(struct console *c, const char *path)
{
	char *buf = NULL, *err = NULL;
	size_t len;
	if (util_read_file(path, 1 << 20, &buf, &len, &err) < 0) {
		c->script_error = xasprintf("--script: %s", err);
		free(err);
		return -1;
	}
	double limit_s = getenv("MADF_SCRIPT_TIMEOUT") ? atof(getenv("MADF_SCRIPT_TIMEOUT")) : 10.0;
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	int ln = 0, rc = 0;
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line && !c->quit && !rc;
	     line = strtok_r(NULL, "\n", &save)) {
		ln++;
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = 0;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || (line[0] == '#' && line[1]))
			continue;
		if (!strncmp(line, "wait-for ", 9)) {
			const char *want = line + 9;
			int64_t end = util_mono_ns() + (int64_t)(limit_s * 1e9);
			for (;;) {
				console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
				char *text = console_screen_text();
				bool found = strstr(text, want) != NULL;
				free(text);
				if (found)
					break;
				if (util_mono_ns() > end) {
					c->script_error = xasprintf("%s:%d: wait-for \"%s\": not on the screen "
								    "after %.1fs", path, ln, want, limit_s);
					rc = -1;
					break;
				}
				console_frame(c, console_pump(c, 50));
			}
			continue;
		}
		if (!strncmp(line, "type ", 5)) {
			for (const char *p = line + 5; *p && !c->quit; p++)
				console_frame(c, console_key(c, (unsigned char)*p));
			continue;
		}
		int cols, rows;
		if (sscanf(line, "resize %d %d", &cols, &rows) == 2 && cols > 0 && rows > 0) {
			resizeterm(rows, cols);
			console_frame(c, CONSOLE_REDRAW);
			continue;
		}
		int key = keys_parse(line);
		if (key < 0) {
			c->script_error = xasprintf("%s:%d: unknown key \"%s\" (a character, <Enter>, "
						    "<Esc>, <Tab>, <Up>, <Down>, <Left>, <Right>, <Space>, "
						    "<BS>, <PgUp>, <PgDn>, <Home>, <End>, <C-x>; or wait-for "
						    "TEXT, type TEXT, resize COLS ROWS)", path, ln, line);
			rc = -1;
			break;
		}
		console_frame(c, console_key(c, key) | CONSOLE_RELOAD);
		console_frame(c, console_pump(c, 0));
	}
	free(buf);
	console_frame(c, CONSOLE_REDRAW);
	return rc;
}

/* ---- setup ---- */

static void console_release(struct console *c)
{
	console_loop_close(c);
	console_views_release(c);
	if (c->re_set)
		regfree(&c->re);
	free(c->re_literal);
	bus_stats_release(&c->stats);
	bus_monitor_free(&c->mon);
	free(c->script_error);
	console_status_release(c);
}

/* Sends the trigger of the console's workflow (the first registered,
 * cli/workflows.h) for the request of the command line (--as-of, --pairs,
 * --fresh; now and the default pairs without them); sets c->run_id and
 * says what the definition answers (for weekly: which sources the agents
 * really use). */
static void console_trigger(struct console *c, struct agent_env *env, struct wf_request *req)
{
	const struct workflow_def *w = workflow_defs[0];
	if (!w->trigger) {
		console_status(c, true, "the %s workflow has no run to start here", w->name);
		return;
	}
	req->market_source = env->market_source;
	req->news_source = env->news_source;
	char said[1024] = "", *msg_id = NULL, *err = NULL;
	int r = w->trigger(c->cli->data_dir, c->bus, req, c->run_id, sizeof(c->run_id), said,
			   sizeof(said), &msg_id, &err);
	if (r < 0) {
		console_status(c, true, "%s trigger: %s", w->name, err ? err : "failed");
		free(err);
		return;
	}
	console_status(c, false, "%s", said);
	if (r > 0) {
		cJSON *ids = cJSON_CreateArray();
		cJSON_AddItemToArray(ids, cJSON_CreateString(msg_id));
		console_journal(c, "start-run", ids, c->run_id);
		cJSON_Delete(ids);
	}
	free(msg_id);
}

/* Ends curses, deletes the scripted mode's screen, closes its terminal. */
static void console_curses_end(struct console *c)
{
	if (curses_up) {
		endwin();
		curses_up = 0;
	}
	if (c->screen) {
		delscreen(c->screen);
		c->screen = NULL;
	}
	if (c->null_out)
		fclose(c->null_out);
	if (c->null_in)
		fclose(c->null_in);
	c->null_out = c->null_in = NULL;
}

static int console_curses_init(struct console *c)
{
	/* The terminal's character set for ncursesw (LC_CTYPE only: numbers
	 * keep the C locale, as JSON needs). */
	setlocale(LC_CTYPE, "");
	if (c->headless) {
		const char *cs = nl_langinfo(CODESET);
		if (!cs || strcmp(cs, "UTF-8"))
			setlocale(LC_CTYPE, "C.UTF-8");
		c->null_out = fopen("/dev/null", "w");
		c->null_in = fopen("/dev/null", "r");
		const char *term = getenv("TERM");
		if (!term || !*term || !strcmp(term, "dumb"))
			term = "xterm-256color";
		FILE *o = c->null_out, *i = c->null_in;
		SCREEN *s = o && i ? newterm(term, o, i) : NULL;
		if (!s)
			s = o && i ? newterm("xterm-256color", o, i) : NULL;
		if (!s)
			return -1;
		set_term(s);
		c->screen = s;
		resizeterm(CONSOLE_SCRIPT_ROWS, CONSOLE_SCRIPT_COLS);
	} else {
		if (!initscr())
			return -1;
	}
	curses_up = 1;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
	}
	theme_apply(&c->theme);
	curs_set(0);
	if (!c->headless)
		mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	return 0;
}

/* The console set up from its options, run, taken down. */
int console_main(struct console *cp, struct run_opts *ro)
{
	struct console c = *cp;
	struct cli *cli = c.cli;
	struct host_opts ho = ro->host;
	char *err = NULL;
	const char *tname = getenv("NO_COLOR") && !c.opts.theme ? "mono" : c.opts.theme ? c.opts.theme : "dark";
	if (theme_load(tname, &c.theme, &err) < 0) {
		if (c.opts.theme) {
			cli_fail(EXIT_USAGE, "console", "--theme: %s", err);
			free(err);
			return EXIT_USAGE;
		}
		free(err);
		theme_default(&c.theme);
	}
	if (getenv("NO_COLOR"))
		c.theme.mono = true;
	console_views_init(&c);
	if (cli_bus(cli, &c.bus) < 0) {
		console_release(&c);
		return EXIT_FAIL;
	}
	if (bus_monitor_open(c.bus, &c.mon, &err) < 0) {
		free(err); /* no inotify: the timer refreshes */
		c.mon = NULL;
	}
	struct agent_env env;
	struct agent *agents[16] = { 0 }, *reviewer = NULL;
	bool hosted = false;
	int saved_err = -1;
	if (!c.opts.attach) {
		if (host_setup(cli, &env, &ho) < 0) {
			host_teardown(&env);
			console_release(&c);
			return EXIT_FAIL;
		}
		/* the agents' own complaints go to a file, not over the screen */
		char *dir = xasprintf("%s", cli->log_dir);
		util_mkdirs(dir, NULL);
		char *path = xasprintf("%s/console-stderr.log", dir);
		int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			saved_err = dup(2);
			dup2(fd, 2);
			close(fd);
			crash_fd = saved_err;
		}
		free(path);
		free(dir);
	}
	if (console_signals_init() < 0) {
		console_release(&c);
		return cli_fail(EXIT_FAIL, "console", "pipe: %s", strerror(errno));
	}
	c.sig_fd = sig_pipe[0];
	if (!c.opts.attach) {
		if (host_start_agents(&env, agents) == 0) {
			hosted = true;
			c.embedded_agents = agent_nroles;
			/* the code review master too, for :run review (it hosts
			 * its crew while a review runs) */
			char *rerr = NULL;
			if (agent_open(&role_review_master, &env, &reviewer, &rerr) < 0 ||
			    agent_start_thread(reviewer, &rerr) < 0) {
				console_status(&c, true, "could not start the review master: %s",
					       rerr ? rerr : "?");
				agent_free(&reviewer);
			} else {
				c.embedded_agents++;
			}
			free(rerr);
			console_trigger(&c, &env, &ro->req);
		} else {
			console_status(&c, true, "could not start the agents (see %s/console-stderr.log)",
				       cli->log_dir);
		}
	}
	int rc = EXIT_OK;
	if (console_curses_init(&c) < 0) {
		rc = EXIT_FAIL;
	} else {
		c.next_tick_ns = util_mono_ns();
		char *lerr = NULL;
		if (console_loop_open(&c, &lerr) < 0) {
			c.script_error = xasprintf("event loop: %s", lerr);
			free(lerr);
			rc = EXIT_FAIL;
		} else if (c.headless) {
			if (console_script(&c, c.opts.script) < 0)
				rc = EXIT_FAIL;
			if (c.opts.dump && console_dump(&c, c.opts.dump) < 0)
				rc = EXIT_FAIL;
		} else {
			rc = console_loop(&c);
		}
	}
	console_curses_end(&c);
	if (hosted)
		host_stop_agents(&env, agents);
	if (reviewer) {
		agent_join(reviewer); /* env.stop is set: it ends its review and stops */
		agent_free(&reviewer);
	}
	if (!c.opts.attach)
		host_teardown(&env);
	if (saved_err >= 0) {
		dup2(saved_err, 2);
		close(saved_err);
		crash_fd = 2;
	}
	console_signals_release();
	if (rc != EXIT_OK && !c.script_error)
		cli_fail(rc, "console", "cannot set up the terminal (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
	if (c.script_error)
		cli_fail(rc, "console", "%s", c.script_error);
	console_release(&c);
	return rc;
}

/* ---- benchmark hooks (madf bench console) ---- */

struct console *console_bench_open(struct cli *cli)
{
	struct console *c = xcalloc(1, sizeof(*c));
	*c = (struct console){ .cli = cli, .sig_fd = -1, .headless = true };
	c->opts.attach = true;
	theme_default(&c->theme);
	console_views_init(c);
	char *err = NULL;
	if (cli_bus(cli, &c->bus) < 0) {
		console_release(c);
		free(c);
		return NULL;
	}
	if (bus_monitor_open(c->bus, &c->mon, &err) < 0) {
		free(err);
		c->mon = NULL;
	}
	if (console_signals_init() < 0 || console_curses_init(c) < 0) {
		console_bench_close(c);
		return NULL;
	}
	c->sig_fd = sig_pipe[0];
	c->next_tick_ns = util_mono_ns();
	if (console_loop_open(c, &err) < 0) {
		free(err);
		console_bench_close(c);
		return NULL;
	}
	console_frame(c, CONSOLE_RELOAD | CONSOLE_REDRAW);
	return c;
}

void console_bench_key(struct console *c, int key)
{
	console_frame(c, console_key(c, key));
}

void console_bench_turn(struct console *c, int max_ms)
{
	console_frame(c, console_pump(c, max_ms));
}

void console_bench_close(struct console *c)
{
	if (!c)
		return;
	console_curses_end(c);
	console_signals_release();
	console_release(c);
	free(c);
}
