/* The week's main story for the executive summary: of the central-bank
 * policy themes of the run (a bank and an action: hike, cut, hold or
 * intervention, over all its days), the one that dominated by story count
 * and market move.
 *
 * A theme's stories are the distinct stories its events cite; its move is
 * the largest absolute change of the pairs its events concern (the
 * event's "pairs", else the run's pairs holding one of its currencies or,
 * without currencies, the bank's own).
 * Score: stories x (1 + |move %|); ties go to the larger move, then to
 * the bank and action in alphabetical order. Pure: reads the run snapshot
 * (agents/report.h). */
#ifndef MADF_REPORT_LEAD_H
#define MADF_REPORT_LEAD_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

struct report_lead {
	char bank[24], action[24];
	size_t ndays, nstories;
	char first[11], last[11];   /* the first and last days of the act */
	char pair[16];              /* its pair that moved most, "" if none has figures */
	double change;              /* that pair's change over the window, % */
	char bought[4], sold[4];    /* an intervention's currencies, "" if not read */
	double score;
};

/* Fills *out with the main story. Returns false when the run has no
 * policy event. */
bool report_lead_find(const cJSON *run, struct report_lead *out);

#endif
