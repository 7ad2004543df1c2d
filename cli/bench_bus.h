/* madf bench bus (tui/cli_bench.c) and its NATS part (tui/bench_bus_nats.c). */
#ifndef MADF_BENCH_BUS_H
#define MADF_BENCH_BUS_H

#include <stdbool.h>

#include "core/bus.h"

struct bench_run {
	double seconds, rate, p50_ms, p99_ms;
	long received, duplicates; /* messages that arrived (each once), and again */
};

/* One run: a producer process (nthreads threads, rate msg/s in all, 0: as
 * fast as possible) sends n heartbeats numbered 0..n-1 to bench_consumer
 * on the bus cfg names; a consumer process claims and acks them. Returns
 * 0 when every message arrived, -1 otherwise (said on stderr). */
int bench_bus_once(const struct bus_config *cfg, long n, double rate, long nthreads,
		   struct bench_run *out);

/* The NATS part of `madf bench bus --bus nats://...` (cfg->url): madf and a
 * raw libnats publish-then-fetch of the same message size, memory and file
 * storage, on the first server alone and, when the URL names several, on
 * all of them as a cluster (3 replicas). Prints the figures (text, or a
 * JSON object when json) to stdout. Returns 0, or -1 (said on stderr). */
int bench_bus_nats(const struct bus_config *cfg, long n, double rate, long nthreads,
		   long repeat, bool json);

#endif
