/* teams-bench: the parents' sample table (teams-bench.c, teams-bench-cl.c)
 * and its plots.
 *
 * A parent collects the samples its children print into rows, one row per
 * (group, system, metric) -- a group is whatever the parent reports together
 * (a section, or the child section several report sections share) -- and
 * prints per row the median, the worse tail (p90: the low tail for rows
 * where higher is better) and the ratio to a baseline row of the same
 * metric: the median over rounds of the paired ratio of the two rows'
 * medians in the same round, so that slow drifts of a shared machine
 * cancel.  Rows print in metric order (the order the group's metrics first
 * appeared), then in the parent's system order, then in order of first
 * appearance.  One table per process (the parents are single-threaded). */
#ifndef TEAMS_BENCH_TABLE_H
#define TEAMS_BENCH_TABLE_H

#include <stddef.h>

typedef struct bench_row {
  const void *group;
  char system[64], metric[64], unit[24];
  int higher; /* higher is better: the worse tail is the low one */
  int p99;    /* also report the pooled 99th percentile (a _p99 row) */
  size_t metric_order, order;
  double *v;
  unsigned *round;
  size_t n, cap;
} bench_row;

/* realloc, or exit with a message when out of memory. */
void *bench_xrealloc(void *p, size_t size);

/* The row of (group, system, metric), created on first use with the unit
 * and flags ("-", or a comma list of "higher" and "p99").  The pointer is
 * valid until the next call that creates a row. */
bench_row *bench_row_get(const void *group, const char *system,
                         const char *metric, const char *unit,
                         const char *flags);
void bench_row_add(bench_row *r, unsigned round, double value);

/* All rows (for derived rows); valid until the next row is created. */
bench_row *bench_rows(size_t *n);

/* The q-quantile of r's samples (of round `round` only when only_round);
 * NAN without samples. */
double bench_row_quantile(const bench_row *r, int only_round, unsigned round,
                          double q);

/* A line of text for the end of the report, kept once. */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the notes (to stderr with tsv, so that stdout stays rows only). */
void bench_print_notes(int tsv);

/* What a report prints and how. */
typedef struct bench_report {
  const char *section;  /* the name in the first column (TSV) */
  const void *group;    /* whose rows */
  const char *baseline; /* a system, or a system's schedule ("libgomp/guided")*/
  /* Order of a system (its name before any '/'): smaller first. */
  size_t (*system_order)(const void *ctx, const char *system);
  /* NULL, or which metrics this report prints. */
  int (*wants_metric)(const void *ctx, const char *metric);
  const void *ctx;
  int tsv;
} bench_report;

/* One line of a report: a row's statistics as the table prints them. */
typedef struct bench_result {
  char system[64], metric[80], unit[24];
  double median, p90, ratio; /* NAN where there is none */
  int higher;                /* the row's flag */
  int p99;                   /* a _p99 line: median holds the pooled p99 */
  int baseline;              /* this row is the baseline of its metric */
  size_t system_order;       /* rep->system_order of the system */
} bench_result;

/* The lines of rep->group in report order: median, worse p90 and paired
 * ratio to the baseline's row of the same metric (the system named exactly,
 * else its first schedule "name/..."), then the _p99 rows.  A malloc'd
 * array of *n (the caller frees it). */
bench_result *bench_results(const bench_report *rep, size_t *n);

/* A number as the human table prints it ("-" for NAN). */
void bench_fmt(char *buf, size_t size, double v);
/* The header line of the human table. */
void bench_print_header(void);
/* bench_results as a human table, or as TSV with rep->tsv. */
void bench_print_rows(const bench_report *rep);

/* ---- plots (plot.c) ----------------------------------------------------------- */

/* --plot FILE: whether gnuplot is in PATH and FILE's directory is writable;
 * prints why not and returns -1, else 0.  A parent checks before it
 * measures, so that a run does not end without its plots. */
int bench_plot_check(const char *file);
/* Draws bench_results(rep) with gnuplot into FILE-SECTION.svg (FILE without
 * its .svg suffix): one panel per metric, the systems as rows, title on
 * top.  Returns 0, or -1 after a message. */
int bench_plot(const bench_report *rep, const char *title, const char *file);

#endif
