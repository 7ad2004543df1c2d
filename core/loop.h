/* A small reactor on poll(2), in the manner of redis' ae: file events (an
 * fd, a READ/WRITE mask, a callback and its context), timers whose
 * callback returns its next delay, and a hook called before each sleep.
 * One loop per thread; every function but loop_stop and loop_wake is
 * called on the loop's own thread (from its callbacks too).
 *
 * One turn (loop_run_once): the before-sleep hook; poll until an fd is
 * ready, the nearest timer is due or the timeout passes; the ready fds'
 * callbacks in fd order (read before write); then the due timers, earliest
 * first (equal times: the one added first). Events and timers may be added
 * and removed at any time, from inside callbacks too: a callback removed
 * during a turn is not called for the rest of it, and a timer added during
 * a turn first runs in a later one.
 *
 * Ownership: the loop never frees a ctx; a ctx must stay valid while it is
 * registered (remove it before freeing it). The loop does not close fds:
 * remove an fd before closing it. */
#ifndef MADF_LOOP_H
#define MADF_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#define LOOP_READ  0x1
#define LOOP_WRITE 0x2
/* Given to a callback (with LOOP_READ and/or LOOP_WRITE, as it asked) when
 * poll reports an error, a hang-up or a closed fd (POLLERR, POLLHUP,
 * POLLNVAL): its read or write then says what happened. A callback that
 * cannot make the fd progress should remove it. */
#define LOOP_ERROR 0x4

/* A timer callback's answer: delete the timer (otherwise: its next delay in
 * milliseconds, >= 0). */
#define LOOP_NOMORE (-1)

struct loop;

/* mask: what is ready, among those the callback was added for, plus
 * LOOP_ERROR. */
typedef void loop_fd_fn(struct loop *l, int fd, int mask, void *ctx);
/* Returns the delay in ms until it runs again, or LOOP_NOMORE. */
typedef int64_t loop_timer_fn(struct loop *l, int64_t id, void *ctx);
typedef void loop_hook_fn(struct loop *l, void *ctx);

/* A new loop, or NULL with *err (it needs one eventfd for loop_wake). */
struct loop *loop_new(char **err);
/* Frees the loop and sets *l to NULL; registered ctxs are left alone. */
void loop_free(struct loop **l);

/* Watches fd for mask (LOOP_READ, LOOP_WRITE or both) with fn(ctx); added
 * to what fd already has (one mask's earlier callback is replaced). Any fd
 * number: the tables grow. Returns 0, or -1 with *err for a negative fd or
 * an empty mask. */
int loop_add_fd(struct loop *l, int fd, int mask, loop_fd_fn *fn, void *ctx, char **err);
/* Stops watching fd for mask (both: LOOP_READ|LOOP_WRITE); fds never added
 * are ignored. */
void loop_del_fd(struct loop *l, int fd, int mask);
/* What fd is watched for (0: nothing). */
int loop_fd_mask(const struct loop *l, int fd);

/* Calls fn(ctx) delay_ms from now (0: the next turn), then again after
 * each delay it returns. Returns the timer's id (> 0), or -1 with *err for
 * a negative delay. */
int64_t loop_add_timer(struct loop *l, int64_t delay_ms, loop_timer_fn *fn, void *ctx,
		       char **err);
/* Deletes a timer (from inside its own callback too). Returns 0, or -1
 * when there is no such timer. */
int loop_del_timer(struct loop *l, int64_t id);

/* fn(ctx) is called at the start of each turn, before the loop sleeps (NULL:
 * none). It may add and remove events and timers, and stop the loop. */
void loop_set_before_sleep(struct loop *l, loop_hook_fn *fn, void *ctx);

/* One turn, sleeping at most timeout_ms (-1: until an event or a timer; 0:
 * not at all). Returns the number of callbacks called (0 on a timeout, or
 * when a signal interrupted poll), or -1 with *err when poll fails. After
 * loop_stop the rest of the turn is not dispatched (ready fds stay ready,
 * due timers due) and the stop stays requested (loop_stopped) until
 * loop_run returns. */
int loop_run_once(struct loop *l, int timeout_ms, char **err);
/* Turns until loop_stop. Returns 0 (the stop request is then cleared), or
 * -1 with *err when poll fails. */
int loop_run(struct loop *l, char **err);
/* Asks the loop to stop: from a callback, or from another thread or a
 * signal handler (async-signal-safe: it wakes a sleeping poll). */
void loop_stop(struct loop *l);
bool loop_stopped(const struct loop *l);
/* Wakes a sleeping poll (the turn then runs its hook and timers as usual);
 * async-signal-safe, for other threads with news for this one. */
void loop_wake(struct loop *l);

#endif
