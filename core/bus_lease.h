/* Lease keeping (core/bus_lease.c), private to core/bus*.c: every
 * delivery bus_claim hands out is renewed by a thread of its bus's own
 * until it is answered (ack, nack, giveback) or freed. See bus.h. */
#ifndef MADF_BUS_LEASE_H
#define MADF_BUS_LEASE_H

#include "core/bus.h"

/* Starts renewing d, just claimed by c on b (the keeper's thread is
 * started at the first claim). */
void bus_lease_hold(struct bus *b, struct bus_consumer *c, struct bus_delivery *d);
/* Stops renewing d (nothing when it is not renewed); when this returns, no
 * renewal of d is under way. */
void bus_lease_drop(struct bus_delivery *d);
/* The same for an answer to d: 0, or -1 with *err (caller frees) when its
 * handler held it past the lease's maximum and lost it (its renewal had
 * stopped; the message is, or will be, delivered again): the answer must
 * not reach the transport. */
int bus_lease_end(struct bus_delivery *d, char **err);
/* Stops renewing every delivery of c (its consumer is being freed). */
void bus_lease_forget_consumer(struct bus *b, struct bus_consumer *c);
/* Stops b's keeper (bus_lease_stop, in bus.h) and frees it. */
void bus_lease_close(struct bus *b);

#endif
