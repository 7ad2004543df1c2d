/* madf mcp's insides, shared by server/mcp_server*.c only: the server's state
 * and what one part calls in another. No other file includes this. */
#ifndef MADF_CLI_MCP_PRIV_H
#define MADF_CLI_MCP_PRIV_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

#include "agents/workflow.h"
#include "cli/cli.h"

struct mcp;
struct mcp_review;

/* The weekly run in progress, on its own thread. */
struct mcp_job {
	struct mcp *s;
	cJSON *id;           /* the request's id */
	cJSON *token;        /* its progress token, or NULL */
	struct wf_request req;
	double progress;
	char last[256];
	pthread_t thread;
};

struct mcp {
	struct cli *cli;
	struct agent_env env;
	struct agent caller;  /* who the data tools are called for */
	FILE *out;            /* the protocol stream */
	pthread_mutex_t out_lock;
	int wake[2];          /* self-pipe: signals, a finished job */
	bool initialized;
	char version[16];     /* the protocol version agreed on */
	size_t page_size;
	struct mcp_job *job;
	atomic_int job_done, job_cancelled;
	struct mcp_review *review; /* review_codebase in progress, or NULL */
	struct mcp_review *review_queue; /* the ones waiting for it */
};

/* One line from the client (len bytes, without its newline): answered
 * on s->out (tests/fuzz/fuzz_mcp_server.c calls it too). */
void cli_mcp_handle_line(struct mcp *s, const char *line, size_t len);

/* cli_mcp.c: the end asked for, and the output. */
extern volatile sig_atomic_t cli_mcp_term;
void cli_mcp_write(struct mcp *s, cJSON *msg);
void cli_mcp_rpc_result(struct mcp *s, const cJSON *id, cJSON *result);
cJSON *cli_mcp_tool_result(const char *text, cJSON *structured, bool is_error);
cJSON *cli_mcp_tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A JSON-RPC error answer to id with data (taken over; may be NULL). */
void cli_mcp_rpc_error_data(struct mcp *s, const cJSON *id, int code, const char *msg,
			    cJSON *data);
#define MCP_INVALID_PARAMS (-32602)

/* cli_mcp_review.c: review_codebase, the code review crew of seed 001. */
cJSON *cli_mcp_call_review_codebase(struct mcp *s, const cJSON *id, const cJSON *params,
				    const cJSON *args);
/* Joins a finished review's thread (wait: whatever its state; at SIGTERM
 * it is cancelled first). */
void cli_mcp_review_reap(struct mcp *s, bool wait);
/* notifications/cancelled for request_id: true when it was the review's. */
bool cli_mcp_review_cancel(struct mcp *s, const cJSON *request_id);
extern const char cli_mcp_review_output_schema[];

/* cli_mcp_tools.c: the tools, and the weekly run's worker. */
cJSON *cli_mcp_call_fx_rates(struct mcp *s, const cJSON *id, const cJSON *params,
			     const cJSON *args);
cJSON *cli_mcp_call_news_search(struct mcp *s, const cJSON *id, const cJSON *params,
				const cJSON *args);
cJSON *cli_mcp_call_news_get(struct mcp *s, const cJSON *id, const cJSON *params,
			     const cJSON *args);
cJSON *cli_mcp_call_queue_status(struct mcp *s, const cJSON *id, const cJSON *params,
				 const cJSON *args);
cJSON *cli_mcp_call_send_task(struct mcp *s, const cJSON *id, const cJSON *params,
			      const cJSON *args);
void cli_mcp_job_reap(struct mcp *s, bool wait);
cJSON *cli_mcp_call_run_weekly(struct mcp *s, const cJSON *id, const cJSON *params,
			       const cJSON *args);
cJSON *cli_mcp_call_read_report(struct mcp *s, const cJSON *id, const cJSON *params,
				const cJSON *args);

#endif
