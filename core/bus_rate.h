/* Events per second over the last BUS_RATE_S seconds (the monitor's
 * deliveries per second): a count per monotonic second in a small ring.
 * Internal to the bus. */
#ifndef MADF_BUS_RATE_H
#define MADF_BUS_RATE_H

#include <stdint.h>

#define BUS_RATE_S 5

struct bus_rate {
	int64_t opened_ns; /* monotonic */
	uint64_t total;
	struct {
		int64_t sec;
		uint64_t n;
	} s[8];
};

void bus_rate_open(struct bus_rate *r);
void bus_rate_add(struct bus_rate *r);
/* The events of the last BUS_RATE_S seconds (this one included) over as
 * much of that time as r has been open, a second at least. */
double bus_rate_per_s(const struct bus_rate *r);

#endif
