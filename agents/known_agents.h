/* The agents an operator may address: the configured roles, broadcast,
 * and any agent seen on the bus (an inbox, a claim or retry directory, a
 * state file with its heartbeat). The operator-facing paths (madf send and
 * recv, the console's :inbox, :processing and :retry-to) refuse other
 * names unless told the agent is new, so that a typo does not make an
 * inbox no agent reads. Agents' own sends are not checked. */
#ifndef MADF_KNOWN_AGENTS_H
#define MADF_KNOWN_AGENTS_H

#include <stdbool.h>

/* Whether name is known under data_dir (broadcast counts when
 * broadcast_ok). When not, *known (may be NULL) gets the known names,
 * sorted, ", "-separated (caller frees). */
bool known_agent(const char *data_dir, const char *name, bool broadcast_ok, char **known);

#endif
