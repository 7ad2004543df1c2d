/* LLM mode of the review crew (a model configured, as for `madf run
 * weekly`): the debt, improvement and critical agents send the
 * line-numbered code and their checklist to the execution model and get
 * {"findings": [...]} back, validated strictly (core/finding.c's schema,
 * and the file must be one that was sent, the line one that exists); a
 * second call scores each finding 0-10 (pr-agent's self-reflection) and
 * the findings under the threshold are dropped. The documentation agent
 * asks for README.md and CONTRIBUTING.md drafts and, when that fails,
 * tries once more with a simplified prompt.
 *
 * Only transient failures are retried: each model call is given 3 HTTP
 * attempts (the client retries 408, 409, 429, 5xx and network errors,
 * honouring retry-after); an answer that fails the schema is an error of
 * the agent and is not asked again (nothing would change). */
#include "agents/review.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_agent.h"
#include "core/finding.h"
#include "core/message.h"
#include "core/schema.h"
#include "core/util.h"
#include "core/banned.h"

#define LLM_ATTEMPTS 3 /* per model call: a transient failure is retried twice */
#define LLM_OUTPUT_TOKENS 4096 /* at least, per call: a list of findings is long */

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return errno || *end || v < min || v > max ? def : v;
}

long review_llm_min_score(void)
{
	return env_long("MADF_REVIEW_MIN_SCORE", REVIEW_LLM_MIN_SCORE, 0, 10);
}

static long input_budget(void)
{
	return env_long("MADF_REVIEW_LLM_INPUT_TOKENS", REVIEW_LLM_INPUT_TOKENS, 100, 10000000);
}

/* ---- the code, line-numbered ---- */

struct code {
	struct sbuf text;
	cJSON *lines; /* {"file": lines} of the files sent */
	int sent, left;
};

static long count_lines(const char *s, size_t len)
{
	long n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	return n + (len && s[len - 1] != '\n');
}

/* The files of input that are text, numbered, until budget tokens (a
 * token per four bytes); the rest are named only, with a note. */
static void code_build(const char *root, const cJSON *files, long budget, struct code *c,
		       cJSON *notes)
{
	sbuf_init(&c->text);
	sbuf_addstr(&c->text, "");
	c->lines = cJSON_CreateObject();
	c->sent = c->left = 0;
	struct sbuf left;
	sbuf_init(&left);
	const cJSON *f;
	cJSON_ArrayForEach(f, files) {
		bool utf8;
		review_file_lang(root, f->valuestring, &utf8);
		if (!utf8) {
			review_note(notes, "%s: not valid UTF-8: not sent to the model", f->valuestring);
			continue;
		}
		char *p = xasprintf("%s/%s", root, f->valuestring), *buf = NULL;
		size_t len = 0;
		int r = util_read_file(p, (size_t)REVIEW_MAX_FILE_BYTES * 64, &buf, &len, NULL);
		free(p);
		if (r < 0)
			continue;
		long n = count_lines(buf, len);
		struct sbuf b;
		sbuf_init(&b);
		sbuf_addf(&b, "=== %s (%ld lines) ===\n", f->valuestring, n);
		long ln = 1;
		for (char *s = buf; s && *s; ln++) {
			char *nl = strchr(s, '\n');
			size_t l = nl ? (size_t)(nl - s) : strlen(s);
			sbuf_addf(&b, "%ld| %.*s\n", ln, (int)l, s);
			s = nl ? nl + 1 : NULL;
		}
		free(buf);
		if ((long)((c->text.len + b.len + 3) / 4) > budget) {
			sbuf_addf(&left, "%s%s", left.len ? ", " : "", f->valuestring);
			c->left++;
		} else {
			sbuf_add(&c->text, b.data, b.len);
			cJSON_AddNumberToObject(c->lines, f->valuestring, (double)n);
			c->sent++;
		}
		sbuf_release(&b);
	}
	if (c->left) {
		sbuf_addf(&c->text, "=== not included (over the prompt budget): %s ===\n", left.data);
		review_note(notes, "%d file%s over the prompt budget of %ld tokens "
			    "(MADF_REVIEW_LLM_INPUT_TOKENS) not sent to the model: %s", c->left,
			    c->left == 1 ? "" : "s", budget, left.data);
	}
	sbuf_release(&left);
}

static void code_release(struct code *c)
{
	sbuf_release(&c->text);
	cJSON_Delete(c->lines);
}

/* ---- one model call ---- */

static void usage_set(cJSON *st, const struct llm_agent_usage *u)
{
	cJSON_DeleteItemFromObject(st, "usage");
	cJSON_AddItemToObject(st, "usage", llm_agent_usage_json(u));
}

static bool transient(const struct llm_agent_task *t)
{
	static const char *const kinds[] = { "timeout", "rate_limit_error", "overloaded_error",
					     "network_error", "incomplete_response", "api_error",
					     NULL };
	long s = t->http_status;
	if (s == 408 || s == 429 || (s >= 500 && s <= 599))
		return true;
	for (size_t i = 0; t->error_type && kinds[i]; i++)
		if (!strcmp(t->error_type, kinds[i]))
			return true;
	return false;
}

/* Asks the model once (no tools). DONE: *text (new). Otherwise *why
 * (new) and *retry (a transient failure). st keeps the task's usage and
 * the approved extras across pauses. */
static enum llm_agent_outcome ask(struct agent *a, const char *task_id, const char *system,
			    const char *prompt, cJSON *st, char **text, char **why, bool *retry)
{
	struct llm_agent_task lt = {
		.task_id = task_id, .system = system, .prompt = prompt,
		.estimate_input = true, .max_attempts = LLM_ATTEMPTS,
		.max_tokens = a->env->llm->max_tokens > LLM_OUTPUT_TOKENS ? a->env->llm->max_tokens
									   : LLM_OUTPUT_TOKENS,
		.extra_tokens = (long)jnum(st, "extra_tokens", 0),
		.extra_cost = jnum(st, "extra_cost_usd", 0),
	};
	llm_agent_usage_from_json(cJSON_GetObjectItem(st, "usage"), &lt.used);
	enum llm_agent_outcome o = llm_agent_task_run(a, &lt);
	usage_set(st, &lt.used);
	*retry = false;
	if (o == LLM_RUN_DONE) {
		*text = lt.text;
		lt.text = NULL;
	} else {
		*why = xstrdup(lt.error ? lt.error : llm_agent_outcome_name(o));
		*retry = o == LLM_RUN_FAILED && transient(&lt);
	}
	llm_agent_task_release(&lt);
	return o;
}

/* The answer as JSON: one object, alone or in one ``` fence. */
static cJSON *answer_json(const char *text, char **err)
{
	const char *s = text, *e = text + strlen(text);
	while (s < e && strchr(" \t\r\n", *s))
		s++;
	while (e > s && strchr(" \t\r\n", e[-1]))
		e--;
	if (e - s >= 6 && !strncmp(s, "```", 3) && !strncmp(e - 3, "```", 3)) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		if (nl && nl < e - 3) {
			s = nl + 1;
			e -= 3;
		}
	}
	char *perr = NULL;
	cJSON *j = json_parse_strict(s, (size_t)(e - s), &perr);
	if (!j) {
		err_set(err, "the answer is not JSON (%s)", perr ? perr : "?");
		free(perr);
		return NULL;
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		err_set(err, "the answer must be a JSON object");
		return NULL;
	}
	return j;
}

/* ---- the findings pass ---- */

static const char *const default_checklist[REVIEW_NPARTS][7] = {
	[REVIEW_DEBT] = { "TODO, FIXME, XXX and HACK comments left in the code",
			  "functions too long or too complex to follow",
			  "duplicated code", "dead or unreachable code", NULL },
	[REVIEW_IMPROVEMENT] = { "unchecked return values and missing error handling",
				 "resource handling (files, memory) that is fragile but not yet a defect",
				 "unquoted variables and other shell pitfalls",
				 "readability: naming, magic numbers, unclear control flow", NULL },
	[REVIEW_CRITICAL] = { "memory safety: double free, use after free, leaks, NULL dereference",
			      "buffer overflows and out-of-bounds reads or writes",
			      "format strings taken from data",
			      "command or path injection",
			      "hard-coded credentials and keys", NULL },
};

static const char *const part_role[REVIEW_NPARTS] = {
	[REVIEW_DEBT] = "technical debt: what makes the code costly to change",
	[REVIEW_IMPROVEMENT] = "improvements to robustness and readability that are not defects",
	[REVIEW_CRITICAL] = "defects that can crash the program, corrupt memory or be exploited",
};

static const struct field_spec input_fields[] = {
	{ "root",         FK_STR,      REQ | F_NONEMPTY, 0, 0, NULL, NULL },
	{ "files",        FK_STR_LIST, REQ,              0, 0, NULL, NULL },
	{ "checklist",    FK_STR_LIST, OPT,              0, 0, NULL, NULL },
	{ "max_findings", FK_INT,      OPT | F_MIN,      1, 0, NULL, NULL },
};
static const struct schema input_schema = SCHEMA_CLOSED(input_fields, NULL);

static int input_check(const cJSON *input, char **err)
{
	struct msg_errors e = { 0 };
	int n = schema_validate(&input_schema, input, "", &e);
	size_t i = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(input, "checklist")) {
		if (cJSON_IsString(c) && !c->valuestring[0]) {
			msg_errors_add(&e, "checklist[%zu]: must not be empty", i);
			n++;
		}
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(input, "files")) {
		const char *s = cJSON_IsString(c) ? c->valuestring : "";
		if (!s[0] || s[0] == '/' || !strncmp(s, "../", 3) || strstr(s, "/../")) {
			msg_errors_add(&e, "files[%zu]: must be a path relative to root, inside it", i);
			n++;
		}
		i++;
	}
	if (!n)
		return 0;
	*err = msg_errors_join(&e);
	msg_errors_release(&e);
	return 400;
}

static char *findings_prompt(enum review_part part, const cJSON *input, const struct code *c,
			     long max)
{
	struct sbuf p;
	sbuf_init(&p);
	bool crit = part == REVIEW_CRITICAL;
	sbuf_addf(&p, "Review this code for %s. Checklist:\n", part_role[part]);
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(input, "checklist"), *k;
	if (cJSON_GetArraySize(cl))
		cJSON_ArrayForEach(k, cl)
			sbuf_addf(&p, "- %s\n", k->valuestring);
	else
		for (int i = 0; default_checklist[part][i]; i++)
			sbuf_addf(&p, "- %s\n", default_checklist[part][i]);
	sbuf_addf(&p,
		  "\nAnswer with one JSON object and nothing else: {\"findings\": [...]}, each "
		  "finding exactly {\"type\": \"%s\", \"severity\": \"low\"|\"medium\"|\"high\"|"
		  "\"critical\", \"description\": \"what is wrong\", \"file\": \"the path as "
		  "written after ===\", \"line\": the number printed before the line, \"%s\": "
		  "\"%s\", \"reference\": \"a CWE id such as CWE-415, or the rule's documentation "
		  "URL\"}. Report at most %ld findings, only issues you are confident about; an "
		  "empty list is acceptable.\n\nThe code, each line prefixed by its number:\n",
		  review_part_name(part), crit ? "remediation" : "suggestion",
		  crit ? "how to fix it" : "what to change", max);
	sbuf_add(&p, c->text.data, c->text.len);
	return sbuf_detach(&p);
}

/* 0 when obj is {"findings": [...]} of part's type, each on a line of a
 * file that was sent; else the errors in *err. */
static int findings_check(const cJSON *obj, enum review_part part, const cJSON *lines,
			  char **err)
{
	struct msg_errors e = { 0 };
	const cJSON *c;
	cJSON_ArrayForEach(c, obj)
		if (strcmp(c->string, "findings"))
			msg_errors_add(&e, "%s: not allowed (the answer is {\"findings\": [...]})",
				       c->string);
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, "findings");
	if (!arr)
		msg_errors_add(&e, "findings: required");
	else if (!finding_list_validate(arr, (int)(part - REVIEW_DEBT), "findings", &e)) {
		size_t i = 0;
		cJSON_ArrayForEach(c, arr) {
			const char *file = review_str(c, "file");
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(lines, file);
			if (!n)
				msg_errors_add(&e, "findings[%zu].file: \"%s\" is not a file that was sent",
					       i, file);
			else if (jnum(c, "line", 0) > n->valuedouble)
				msg_errors_add(&e, "findings[%zu].line: %s has %.0f lines", i, file,
					       n->valuedouble);
			i++;
		}
	}
	if (!e.count)
		return 0;
	char *why = msg_errors_join(&e);
	msg_errors_release(&e);
	char *clean = util_sanitize(why, strlen(why), false);
	err_set(err, "%s", clean);
	free(clean);
	free(why);
	return -1;
}

/* ---- the scoring pass ---- */

static const struct field_spec score_fields[] = {
	{ "index",  FK_INT, REQ | F_MIN,      0, 0,  NULL, NULL },
	{ "score",  FK_INT, REQ | RANGE,      0, 10, NULL, NULL },
	{ "reason", FK_STR, REQ | F_NONEMPTY, 0, 0,  NULL, NULL },
};
static const struct schema score_schema = SCHEMA_CLOSED(score_fields, NULL);
static const struct field_spec scores_fields[] = {
	{ "scores", FK_OBJ_LIST, REQ, 0, 0, NULL, &score_schema },
};
static const struct schema scores_schema = SCHEMA_CLOSED(scores_fields, NULL);

static char *score_prompt(const char *root, const cJSON *findings)
{
	struct sbuf p;
	sbuf_init(&p);
	sbuf_addstr(&p,
		    "Score each finding below from 0 (wrong, or not worth a reviewer's time) to 10 "
		    "(a real and important issue at exactly that line), judging it against the code "
		    "shown. Answer with one JSON object and nothing else: {\"scores\": [{\"index\": "
		    "N, \"score\": 0-10, \"reason\": \"one sentence\"}, ...]}, exactly one entry per "
		    "finding.\n");
	int i = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, findings) {
		const char *file = review_str(f, "file");
		long line = (long)jnum(f, "line", 0);
		sbuf_addf(&p, "\nFinding %d: %s:%ld [%s] %s (%s)\n", i++, file, line,
			  review_str(f, "severity"), review_str(f, "description"),
			  review_str(f, "reference"));
		for (long l = line > 3 ? line - 3 : 1; l <= line + 3; l++) {
			char *t = review_line_text(root, file, l);
			if (*t || l <= line)
				sbuf_addf(&p, "%ld| %s\n", l, t);
			free(t);
		}
	}
	return sbuf_detach(&p);
}

/* The scores by index (new array of n, -1 unset), or NULL with *err. */
static int *scores_check(const cJSON *obj, int n, cJSON **reasons, char **err)
{
	struct msg_errors e = { 0 };
	schema_validate(&scores_schema, obj, "", &e);
	int *sc = xcalloc((size_t)(n ? n : 1), sizeof(*sc));
	for (int i = 0; i < n; i++)
		sc[i] = -1;
	*reasons = cJSON_CreateArray();
	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(*reasons, cJSON_CreateString(""));
	size_t k = 0;
	const cJSON *s;
	if (!e.count)
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(obj, "scores")) {
			int i = (int)jnum(s, "index", -1);
			if (i >= n)
				msg_errors_add(&e, "scores[%zu].index: must be under %d", k, n);
			else if (sc[i] >= 0)
				msg_errors_add(&e, "scores[%zu].index: finding %d scored twice", k, i);
			else {
				sc[i] = (int)jnum(s, "score", 0);
				cJSON_ReplaceItemInArray(*reasons, i, cJSON_CreateString(review_str(s, "reason")));
			}
			k++;
		}
	for (int i = 0; !e.count && i < n; i++)
		if (sc[i] < 0)
			msg_errors_add(&e, "scores: finding %d has no score", i);
	if (!e.count)
		return sc;
	char *why = msg_errors_join(&e);
	msg_errors_release(&e);
	char *clean = util_sanitize(why, strlen(why), false);
	err_set(err, "%s", clean);
	free(clean);
	free(why);
	free(sc);
	cJSON_Delete(*reasons);
	*reasons = NULL;
	return NULL;
}

static void step(const struct review_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void step(const struct review_progress *p, const char *fmt, ...)
{
	if (!p || !p->fn)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	p->fn(p->ctx, s);
	free(s);
}

/* A failed or paused call as the run's status. */
static int not_done(enum llm_agent_outcome o, const char *what, char *why, bool retry, cJSON *st,
		    char **err)
{
	if (o == LLM_RUN_PAUSED) {
		jset_str(st, "paused_because", why);
		err_set(err, "%s", why);
		free(why);
		return REVIEW_LLM_PAUSED;
	}
	err_set(err, "the model's %s failed%s: %s", what,
		retry ? " (transient, after its retries)" : "", why);
	free(why);
	return retry ? 503 : 502;
}

int review_llm_run(struct agent *a, enum review_part part, const char *task_id,
		   const cJSON *input, cJSON *st, const struct review_progress *prog,
		   cJSON **result, char **err)
{
	*result = NULL;
	int rc = input_check(input, err);
	if (rc)
		return rc;
	const struct llm_agent_settings *s = a->env->llm;
	const char *root = review_str(input, "root");
	cJSON *notes = cJSON_CreateArray();
	cJSON_DeleteItemFromObject(st, "paused_because");
	long max = (long)jnum(input, "max_findings", 10);
	char *system = xasprintf("You are the %s agent of the code review crew in madf, a careful "
				 "senior reviewer. You answer in JSON only.", review_part_name(part));
	char *text = NULL, *why = NULL;
	bool retry = false;
	cJSON *findings = cJSON_Duplicate(cJSON_GetObjectItem(st, "findings"), true);
	if (!cJSON_IsArray(findings)) {
		cJSON_Delete(findings);
		findings = NULL;
		struct code c;
		code_build(root, cJSON_GetObjectItemCaseSensitive(input, "files"), input_budget(), &c,
			   notes);
		char *prompt = findings_prompt(part, input, &c, max);
		step(prog, "asking the model for findings in %d files", c.sent);
		enum llm_agent_outcome o = ask(a, task_id, system, prompt, st, &text, &why, &retry);
		free(prompt);
		if (o != LLM_RUN_DONE) {
			code_release(&c);
			rc = not_done(o, "findings call", why, retry, st, err);
			goto out;
		}
		cJSON *ans = answer_json(text, &why);
		if (!ans || findings_check(ans, part, c.lines, &why) < 0) {
			err_set(err, "the model's findings failed the schema (not retried): %s", why);
			free(why);
			cJSON_Delete(ans);
			code_release(&c);
			rc = 422;
			goto out;
		}
		code_release(&c);
		findings = cJSON_DetachItemFromObject(ans, "findings");
		cJSON_Delete(ans);
		free(text);
		text = NULL;
		/* kept across a pause before the scoring call */
		cJSON_DeleteItemFromObject(st, "findings");
		cJSON_AddItemToObject(st, "findings", cJSON_Duplicate(findings, true));
		cJSON_DeleteItemFromObject(st, "notes");
		cJSON_AddItemToObject(st, "notes", cJSON_Duplicate(notes, true));
	} else {
		cJSON_Delete(notes);
		notes = cJSON_Duplicate(cJSON_GetObjectItem(st, "notes"), true);
		if (!cJSON_IsArray(notes)) {
			cJSON_Delete(notes);
			notes = cJSON_CreateArray();
		}
	}
	int n = cJSON_GetArraySize(findings), dropped = 0;
	long min = review_llm_min_score();
	if (n) {
		char *prompt = score_prompt(root, findings);
		char *ssys = xasprintf("You are the reviewer of the %s agent's findings in the code "
				       "review crew in madf. You answer in JSON only.",
				       review_part_name(part));
		step(prog, "asking the model to score %d finding%s", n, n == 1 ? "" : "s");
		enum llm_agent_outcome o = ask(a, task_id, ssys, prompt, st, &text, &why, &retry);
		free(prompt);
		free(ssys);
		if (o != LLM_RUN_DONE) {
			rc = not_done(o, "scoring call", why, retry, st, err);
			goto out;
		}
		cJSON *ans = answer_json(text, &why), *reasons = NULL;
		int *sc = ans ? scores_check(ans, n, &reasons, &why) : NULL;
		cJSON_Delete(ans);
		if (!sc) {
			err_set(err, "the model's scores failed the schema (not retried): %s", why);
			free(why);
			rc = 422;
			goto out;
		}
		int i = 0;
		for (cJSON *f = findings->child; f; i++) {
			cJSON *next = f->next;
			if (sc[i] < min) {
				cJSON_Delete(cJSON_DetachItemViaPointer(findings, f));
				dropped++;
			} else {
				char *d = xasprintf("%s Score %d/10: %s", review_str(f, "description"),
						    sc[i], cJSON_GetArrayItem(reasons, i)->valuestring);
				cJSON_ReplaceItemInObject(f, "description", cJSON_CreateString(d));
				free(d);
				cJSON_AddNumberToObject(f, "score", sc[i]); /* removed below */
			}
			f = next;
		}
		free(sc);
		cJSON_Delete(reasons);
		if (dropped)
			review_note(notes, "%s: %d of %d finding%s scored under %ld by the model's "
				    "second pass and dropped", review_part_name(part), dropped, n,
				    n == 1 ? "" : "s", min);
		/* the cap keeps the best scores */
		while (cJSON_GetArraySize(findings) > max) {
			cJSON *worst = NULL;
			cJSON *f;
			cJSON_ArrayForEach(f, findings)
				if (!worst || jnum(f, "score", 0) < jnum(worst, "score", 0))
					worst = f;
			cJSON_Delete(cJSON_DetachItemViaPointer(findings, worst));
		}
		cJSON *f;
		cJSON_ArrayForEach(f, findings)
			cJSON_DeleteItemFromObject(f, "score");
	}
	struct msg_errors e = { 0 };
	if (finding_list_validate(findings, (int)(part - REVIEW_DEBT), review_part_name(part), &e)) {
		*err = msg_errors_join(&e);
		msg_errors_release(&e);
		rc = 500;
		goto out;
	}
	*result = cJSON_CreateObject();
	cJSON_AddItemToObject(*result, "findings", findings);
	findings = NULL;
	cJSON_AddItemToObject(*result, "notes", notes);
	notes = NULL;
	cJSON_AddObjectToObject(*result, "tools");
	cJSON *info = cJSON_AddObjectToObject(*result, "llm");
	cJSON_AddStringToObject(info, "provider", s->provider_name);
	cJSON_AddStringToObject(info, "model", s->model_execution);
	cJSON_AddNumberToObject(info, "scored", n);
	cJSON_AddNumberToObject(info, "dropped", dropped);
	cJSON_AddNumberToObject(info, "min_score", (double)min);
	cJSON_AddItemToObject(info, "usage", cJSON_Duplicate(cJSON_GetObjectItem(st, "usage"), true));
	rc = 0;
out:
	free(text);
	free(system);
	cJSON_Delete(findings);
	cJSON_Delete(notes);
	return rc;
}

/* ---- documentation ---- */

/* 0 when obj holds exactly the wanted drafts as non-empty Markdown
 * starting with a heading. */
static int docs_check(const cJSON *obj, bool contributing, char **err)
{
	static const char *const names[] = { "README.md", "CONTRIBUTING.md" };
	const cJSON *c;
	cJSON_ArrayForEach(c, obj)
		if (strcmp(c->string, "README.md") && (!contributing || strcmp(c->string, "CONTRIBUTING.md")))
			return err_set(err, "%s: not allowed", c->string);
	for (int i = 0; i < (contributing ? 2 : 1); i++) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(obj, names[i]);
		if (!cJSON_IsString(d))
			return err_set(err, "%s: required, a string of Markdown", names[i]);
		if (d->valuestring[0] != '#')
			return err_set(err, "%s: must start with a Markdown heading", names[i]);
	}
	return 0;
}

int review_llm_docs(struct agent *a, const char *task_id, const cJSON *input, cJSON *result,
		    const struct review_progress *prog)
{
	cJSON *docs = cJSON_GetObjectItem(result, "documentation");
	cJSON *notes = cJSON_GetObjectItem(result, "notes");
	const cJSON *readme = cJSON_GetObjectItem(docs, "README.md");
	struct sbuf files;
	sbuf_init(&files);
	sbuf_addstr(&files, "");
	const cJSON *f;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(input, "files")) {
		bool utf8;
		sbuf_addf(&files, "- %s (%s)\n", f->valuestring,
			  review_file_lang(review_str(input, "root"), f->valuestring, &utf8));
	}
	const char *system = "You are the documentation agent of the code review crew in madf. "
			     "You answer in JSON only.";
	char *full = xasprintf(
		"Write README.md and CONTRIBUTING.md drafts in Markdown for this codebase. Answer "
		"with one JSON object and nothing else: {\"README.md\": \"...\", \"CONTRIBUTING.md\": "
		"\"...\"}, each starting with a heading.\n\nFiles:\n%s\nWhat the analyzers found "
		"(a draft to improve on):\n%s\n", files.data,
		cJSON_IsString(readme) ? readme->valuestring : "(none)");
	char *simple = xasprintf(
		"Write a short README.md in Markdown for a codebase with these files. Answer with "
		"one JSON object and nothing else: {\"README.md\": \"# ...\"}.\n\nFiles:\n%s",
		files.data);
	sbuf_release(&files);
	cJSON *st = cJSON_CreateObject();
	char *last = NULL;
	int rc = -1;
	for (int attempt = 0; attempt < 2 && rc < 0; attempt++) {
		char *text = NULL, *why = NULL;
		bool retry;
		step(prog, "asking the model for the documentation drafts%s",
		     attempt ? " (simplified prompt)" : "");
		enum llm_agent_outcome o = ask(a, task_id, system, attempt ? simple : full, st, &text, &why,
					 &retry);
		cJSON *ans = NULL;
		if (o == LLM_RUN_DONE && (ans = answer_json(text, &why)) &&
		    docs_check(ans, attempt == 0, &why) == 0) {
			cJSON *c;
			cJSON_ArrayForEach(c, ans) {
				cJSON_DeleteItemFromObject(docs, c->string);
				cJSON_AddStringToObject(docs, c->string, c->valuestring);
			}
			rc = 0;
		} else {
			free(last);
			last = xasprintf("%s", why ? why : "no answer");
			review_note(notes, "documentation: the model's drafts %s (%s)%s",
				    o == LLM_RUN_DONE ? "failed the schema" : "failed", last,
				    attempt ? "; the analyzers' drafts are kept" :
					      "; trying once more with a simplified prompt");
		}
		cJSON_Delete(ans);
		free(text);
		free(why);
		if (o == LLM_RUN_PAUSED)
			break; /* no second call over the budget */
	}
	if (rc < 0) {
		char *clean = util_sanitize(last ? last : "?", strlen(last ? last : "?"), false);
		char *md = xasprintf("# Documentation drafts by the model\n\nThe model's drafts "
				     "failed: %s\n\nREADME.md and CONTRIBUTING.md are the analyzers' "
				     "drafts.\n", clean);
		cJSON_DeleteItemFromObject(docs, "llm-error.md");
		cJSON_AddStringToObject(docs, "llm-error.md", md);
		free(md);
		free(clean);
	}
	cJSON *info = cJSON_AddObjectToObject(result, "llm");
	const struct llm_agent_settings *s = a->env->llm;
	cJSON_AddStringToObject(info, "provider", s->provider_name);
	cJSON_AddStringToObject(info, "model", s->model_execution);
	cJSON_AddStringToObject(info, "outcome", rc == 0 ? "done" : "failed");
	cJSON_AddItemToObject(info, "usage", cJSON_Duplicate(cJSON_GetObjectItem(st, "usage"), true));
	cJSON_Delete(st);
	free(last);
	free(full);
	free(simple);
	return rc;
}
