/* Events per second (see bus_rate.h). */
#include "core/bus_rate.h"

#include <string.h>

#include "core/util.h"
#include "core/banned.h"

#define NS_PER_S 1000000000LL

void bus_rate_open(struct bus_rate *r)
{
	memset(r, 0, sizeof(*r));
	r->opened_ns = util_mono_ns();
}

void bus_rate_add(struct bus_rate *r)
{
	int64_t sec = util_mono_ns() / NS_PER_S;
	size_t k = (size_t)sec % ARRAY_SIZE(r->s);
	if (r->s[k].sec != sec) {
		r->s[k].sec = sec;
		r->s[k].n = 0;
	}
	r->s[k].n++;
	r->total++;
}

double bus_rate_per_s(const struct bus_rate *r)
{
	int64_t now = util_mono_ns(), sec = now / NS_PER_S;
	uint64_t recent = 0;
	for (size_t k = 0; k < ARRAY_SIZE(r->s); k++)
		if (r->s[k].n && sec - r->s[k].sec < BUS_RATE_S)
			recent += r->s[k].n;
	double span = (double)(now - r->opened_ns) / 1e9;
	if (span > BUS_RATE_S)
		span = BUS_RATE_S;
	if (span < 1)
		span = 1;
	return (double)recent / span;
}
