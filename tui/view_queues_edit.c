/* The console's E in the queues view: the current dead letter edited in
 * $EDITOR, then validated and requeued (bus_requeue). */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json_out.h"
#include "core/util.h"
#include "tui/console.h"
#include "core/banned.h"

/* ---- E: a dead letter edited in $EDITOR, then requeued ---- */

/* Runs $EDITOR (default vi) on path, the terminal given back to it for the
 * time; its exit status, or -1 when it could not run. */
static int queues_run_editor(struct console *c, const char *path)
{
	const char *ed = getenv("EDITOR");
	if (!ed || !*ed)
		ed = "vi";
	/* as git does: the editor may carry arguments ("code -w") */
	char *cmd = xasprintf("%s \"$@\"", ed);
	if (!c->headless) {
		def_prog_mode();
		endwin();
	}
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	int status = -1;
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, ed, path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (!c->headless) {
		reset_prog_mode();
		clearok(curscr, TRUE);
		refresh();
	}
	free(cmd);
	return status;
}

unsigned view_queues_edit(struct console *c, struct view *v)
{
	struct console_row *cur = console_rows_current(&v->rows);
	if (!cur || !cur->id) {
		console_status(c, true, "edit: no message selected");
		return CONSOLE_REDRAW;
	}
	char id[256];
	util_strlcpy(id, cur->id, sizeof(id));
	cJSON *jids = cJSON_CreateArray();
	cJSON_AddItemToArray(jids, cJSON_CreateString(id));
	struct bus_entry e;
	memset(&e, 0, sizeof(e));
	char *err = NULL, *json = NULL, *path = NULL, *edited = NULL, *pretty = NULL;
	size_t len = 0, elen = 0;
	char result[1400];
	bool bad = true;
	if (bus_find(c->bus, id, &e, &err) < 0 || bus_read(c->bus, &e, &json, &len, &err) < 0) {
		snprintf(result, sizeof(result), "failed: %s", err ? err : "gone");
		goto out;
	}
	if (e.queue != BUS_Q_DEAD) {
		snprintf(result, sizeof(result), "failed: %s is not a dead letter (it is in %s)", id,
			 bus_queue_name(e.queue));
		goto out;
	}
	/* pretty-printed when it parses; as stored otherwise (broken JSON can
	 * be fixed too) */
	cJSON *j = cJSON_ParseWithLength(json, len);
	pretty = j ? json_pretty(j) : xstrndup(json, len);
	cJSON_Delete(j);
	char *dir = xasprintf("%s/console/edits", c->cli->data_dir);
	if (util_mkdirs(dir, &err) < 0) {
		snprintf(result, sizeof(result), "failed: %s", err);
		free(dir);
		goto out;
	}
	char safe[64];
	size_t k = 0;
	for (const char *p = id; *p && k + 1 < sizeof(safe); p++)
		safe[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ? *p : '_';
	safe[k] = 0;
	path = xasprintf("%s/%s.XXXXXX.json", dir, safe);
	free(dir);
	int fd = mkstemps(path, 5);
	size_t plen = strlen(pretty);
	if (fd < 0 || write(fd, pretty, plen) != (ssize_t)plen || write(fd, "\n", 1) != 1) {
		snprintf(result, sizeof(result), "failed: cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		goto out;
	}
	close(fd);
	int rc = queues_run_editor(c, path);
	if (rc != 0) {
		snprintf(result, sizeof(result), "not requeued: the editor exited %d; the dead letter "
			 "is kept, the edit is in %s", rc, path);
		goto out;
	}
	if (util_read_file(path, c->bus->cfg.max_bytes + 1, &edited, &elen, &err) < 0) {
		snprintf(result, sizeof(result), "not requeued: %s; the dead letter is kept", err);
		goto out;
	}
	if (elen == plen + 1 && !memcmp(edited, pretty, plen)) {
		unlink(path);
		snprintf(result, sizeof(result), "no change: nothing requeued, the dead letter is kept");
		bad = false;
		goto out;
	}
	if (bus_requeue(c->bus, id, edited, elen, &err) < 0) {
		snprintf(result, sizeof(result), "refused: %s; the dead letter is kept, the edit is in %s",
			 err ? err : "?", path);
		goto out;
	}
	unlink(path);
	cJSON *ej = cJSON_ParseWithLength(edited, elen);
	const cJSON *to = cJSON_GetObjectItem(ej, "to");
	snprintf(result, sizeof(result), "requeued to %s", cJSON_IsString(to) ? to->valuestring : "?");
	cJSON_Delete(ej);
	bad = false;
out:
	console_journal(c, "edit", jids, result);
	console_status(c, bad, "edit: %s", result);
	cJSON_Delete(jids);
	bus_entry_release(&e);
	free(err);
	free(json);
	free(path);
	free(edited);
	free(pretty);
	view_queues_dirty(v);
	return CONSOLE_RELOAD | CONSOLE_REDRAW;
}
