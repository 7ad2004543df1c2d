/* madf serve on madf's bus (server/serve_bus.c): the serve process's
 * controller, an agent of the runtime (agents/runtime.h) whose inbox takes
 * the operator's controls of conversations (an operator_control
 * task_assignment, action cancel, answered with a task_acceptance), and
 * every running conversation's initiator, agents and summarizer as agents
 * on the bus: CONV_AGENT_PREFIX SESSION "-" NAME, with heartbeats (their
 * state files at every change, and heartbeat messages to the controller
 * when they start and stop), log lines through
 * core/log.c, and each turn a task_assignment from the controller to the
 * agent's inbox, claimed there, answered with a task_acceptance, then a
 * task_progress (100 %) or an error_report. No thread per agent: the
 * controller's thread acts for them (the conversation's thread only queues
 * the work, in order: its events never wait on the bus) and refreshes their
 * heartbeats. */
#ifndef MADF_SERVE_BUS_H
#define MADF_SERVE_BUS_H

#include <stdbool.h>
#include <stddef.h>

/* The controller's name: the console's C sends its cancel here. */
#define SERVE_CONTROLLER "serve_controller"
/* A conversation agent's name starts with this, then the session id. */
#define CONV_AGENT_PREFIX "conv-"
/* The task_type of a conversation's turn. */
#define CONV_TASK_TURN "conversation_turn"

struct agent_env;
struct bus;
struct conv;

/* Starts the controller (a thread of its own) on env's bus and opens the
 * bus the conversations share (env must outlive serve_bus_close). 0 or -1
 * with *err. Until it is open, the conversations run off the bus. */
int serve_bus_open(struct agent_env *env, char **err);
/* The server begins to stop: from now on the turns still queued for
 * conversations that have ended are dropped, not put on the bus (their
 * ends, and the done of turns begun, still are). */
void serve_bus_drain(void);
/* Stops the controller (after the conversations have ended). */
void serve_bus_close(void);
/* The shared bus, or NULL when serve_bus_open was not called. */
struct bus *serve_bus(void);

/* ---- a conversation's agents (called on the conversation's thread: each
 * queues the work, done on the controller's thread in that order; c is
 * referenced until it is done) ---- */

/* Its members: index 0 the initiator, 1..nagents the agents, nagents + 1
 * the summarizer. Nothing happens when the bus is not open. */
void convbus_begin(struct conv *c);
/* Member idx starts a turn of round (0: the initiator's plan, the
 * summary): the controller's task_assignment to its inbox, claimed and
 * accepted; its heartbeat busy, current task "SESSION round N". */
void convbus_turn(struct conv *c, size_t idx, int round);
/* The turn ended: a task_progress (100 %, "complete") or, when !ok, an
 * error_report with detail; the assignment acked; heartbeat idle. */
void convbus_turn_done(struct conv *c, size_t idx, bool ok, const char *detail);
/* The conversation ended (outcome: "complete" or its error's code): a turn
 * still open ends failed, every member says it stops, their inboxes (empty)
 * and state files go. */
void convbus_end(struct conv *c, const char *outcome);
/* The controller's refresh: every running conversation's members' heartbeats
 * rewritten when older than refresh_ms (their state files). */
void convbus_refresh(struct conv *c, long refresh_ms);
void convbus_free(struct conv *c);

#endif
