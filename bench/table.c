/* teams-bench: the parents' sample table (table.h has the contract). */
#include "table.h"

#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bench_row *rows;
static size_t nrows, caprows;
static char **notes;
static size_t nnotes;

void *bench_xrealloc(void *p, size_t size) {
  p = realloc(p, size);
  if (!p) {
    fprintf(stderr, "teams-bench: out of memory\n");
    exit(1);
  }
  return p;
}

bench_row *bench_row_get(const void *group, const char *system,
                         const char *metric, const char *unit,
                         const char *flags) {
  /* A new metric sorts after the group's metrics so far. */
  size_t metric_order = 0;
  int known = 0;
  for (size_t i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    if (r->group != group)
      continue;
    if (!strcmp(r->metric, metric)) {
      if (!strcmp(r->system, system))
        return r;
      known = 1;
      metric_order = r->metric_order;
    } else if (!known && r->metric_order + 1 > metric_order) {
      metric_order = r->metric_order + 1;
    }
  }
  if (nrows == caprows) {
    caprows = caprows ? 2 * caprows : 64;
    rows = bench_xrealloc(rows, caprows * sizeof *rows);
  }
  bench_row *r = &rows[nrows];
  memset(r, 0, sizeof *r);
  r->group = group;
  snprintf(r->system, sizeof r->system, "%s", system);
  snprintf(r->metric, sizeof r->metric, "%s", metric);
  snprintf(r->unit, sizeof r->unit, "%s", unit);
  r->higher = strstr(flags, "higher") != NULL;
  r->p99 = strstr(flags, "p99") != NULL;
  r->metric_order = metric_order;
  r->order = nrows++;
  return r;
}

void bench_row_add(bench_row *r, unsigned round, double value) {
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    r->v = bench_xrealloc(r->v, r->cap * sizeof *r->v);
    r->round = bench_xrealloc(r->round, r->cap * sizeof *r->round);
  }
  r->v[r->n] = value;
  r->round[r->n++] = round;
}

bench_row *bench_rows(size_t *n) {
  *n = nrows;
  return rows;
}

double bench_row_quantile(const bench_row *r, int only_round, unsigned round,
                          double q) {
  double *tmp = bench_xrealloc(NULL, (r->n ? r->n : 1) * sizeof *tmp);
  size_t k = 0;
  for (size_t i = 0; i < r->n; i++)
    if (!only_round || r->round[i] == round)
      tmp[k++] = r->v[i];
  double v = k ? bench_quantile(tmp, k, q) : NAN;
  free(tmp);
  return v;
}

/* The worse tail: high for "lower is better" rows, low for the others. */
static double tail(const bench_row *r, double q) {
  return bench_row_quantile(r, 0, 0, r->higher ? 1 - q : q);
}

static double paired_ratio(const bench_row *r, const bench_row *base) {
  if (!base)
    return NAN;
  if (r == base)
    return 1;
  unsigned maxround = 0;
  for (size_t i = 0; i < r->n; i++)
    if (r->round[i] > maxround)
      maxround = r->round[i];
  double *ratios = bench_xrealloc(NULL, (maxround + 1) * sizeof *ratios);
  size_t k = 0;
  for (unsigned rd = 0; rd <= maxround; rd++) {
    double a = bench_row_quantile(r, 1, rd, 0.5);
    double b = bench_row_quantile(base, 1, rd, 0.5);
    if (!isnan(a) && !isnan(b) && b != 0)
      ratios[k++] = a / b;
  }
  double v = k ? bench_quantile(ratios, k, 0.5) : NAN;
  free(ratios);
  return v;
}

void bench_note(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < nnotes; i++)
    if (!strcmp(notes[i], buf))
      return;
  notes = bench_xrealloc(notes, (nnotes + 1) * sizeof *notes);
  notes[nnotes++] = strdup(buf);
}

void bench_print_notes(int tsv) {
  if (!nnotes)
    return;
  FILE *f = tsv ? stderr : stdout;
  fprintf(f, "\nnotes:\n");
  for (size_t i = 0; i < nnotes; i++)
    fprintf(f, "  - %s\n", notes[i]);
}

/* ---- the report ---------------------------------------------------------------- */

static const bench_report *sorting; /* qsort has no context argument */

static int cmp_rows(const void *a, const void *b) {
  const bench_row *x = *(bench_row *const *)a, *y = *(bench_row *const *)b;
  if (x->metric_order != y->metric_order)
    return x->metric_order < y->metric_order ? -1 : 1;
  size_t sx = sorting->system_order(sorting->ctx, x->system);
  size_t sy = sorting->system_order(sorting->ctx, y->system);
  if (sx != sy)
    return sx < sy ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The baseline's row for r's metric: the first row, in report order, of the
 * system named exactly, else of one of its schedules ("libgomp/...").  The
 * children list their preferred schedule first. */
static const bench_row *baseline_row(const bench_row *r, bench_row *const *sorted,
                                     size_t n, const char *b) {
  size_t len = strlen(b);
  const bench_row *prefix = NULL;
  for (size_t i = 0; i < n; i++) {
    const bench_row *c = sorted[i];
    if (strcmp(c->metric, r->metric))
      continue;
    if (!strcmp(c->system, b))
      return c;
    if (!prefix && !strncmp(c->system, b, len) && c->system[len] == '/')
      prefix = c;
  }
  return prefix;
}

void bench_fmt(char *buf, size_t size, double v) {
  if (isnan(v))
    snprintf(buf, size, "-");
  else if (fabs(v) >= 1000)
    snprintf(buf, size, "%.0f", v);
  else
    snprintf(buf, size, "%.4g", v);
}

void bench_print_header(void) {
  printf("  %-24s %-22s %10s %10s  %-12s %7s\n", "metric", "system", "median",
         "p90", "unit", "ratio");
}

static void print_row(const bench_report *rep, const bench_result *r,
                      int first_of_metric) {
  if (rep->tsv) {
    printf("%s\t%s\t%s\t%s\t%.6g\t%.6g\t%.6g\n", rep->section, r->system,
           r->metric, r->unit, r->median, r->p90, r->ratio);
    return;
  }
  char m[32], p[32], q[32];
  bench_fmt(m, sizeof m, r->median);
  bench_fmt(p, sizeof p, r->p90);
  bench_fmt(q, sizeof q, r->ratio);
  printf("  %-24s %-22s %10s %10s  %-12s %7s\n",
         first_of_metric ? r->metric : "", r->system, m, p, r->unit, q);
}

static void result_set(bench_result *res, const bench_report *rep,
                       const bench_row *r, const char *metric, int p99,
                       double median, double p90, double ratio,
                       const bench_row *base) {
  snprintf(res->system, sizeof res->system, "%s", r->system);
  snprintf(res->metric, sizeof res->metric, "%s", metric);
  snprintf(res->unit, sizeof res->unit, "%s", r->unit);
  res->median = median;
  res->p90 = p90;
  res->ratio = ratio;
  res->higher = r->higher;
  res->p99 = p99;
  res->baseline = r == base;
  res->system_order = rep->system_order(rep->ctx, r->system);
}

bench_result *bench_results(const bench_report *rep, size_t *nres) {
  bench_row **sorted = bench_xrealloc(NULL, (nrows ? nrows : 1) * sizeof *sorted);
  size_t n = 0;
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].group == rep->group &&
        (!rep->wants_metric || rep->wants_metric(rep->ctx, rows[i].metric)))
      sorted[n++] = &rows[i];
  sorting = rep;
  qsort(sorted, n, sizeof *sorted, cmp_rows);
  bench_result *res = bench_xrealloc(NULL, (n ? 2 * n : 1) * sizeof *res);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const bench_row *r = sorted[i];
    const bench_row *base = baseline_row(r, sorted, n, rep->baseline);
    result_set(&res[k++], rep, r, r->metric, 0, tail(r, 0.5), tail(r, 0.9),
               paired_ratio(r, base), base);
  }
  /* p99 rows: the median column holds the pooled 99th percentile, and the
   * ratio is pooled too (a round has too few samples for its own p99). */
  for (size_t i = 0; i < n; i++) {
    const bench_row *r = sorted[i];
    if (!r->p99)
      continue;
    const bench_row *base = baseline_row(r, sorted, n, rep->baseline);
    char metric[80];
    snprintf(metric, sizeof metric, "%s_p99", r->metric);
    double v = tail(r, 0.99);
    result_set(&res[k++], rep, r, metric, 1, v, NAN,
               base ? v / tail(base, 0.99) : NAN, base);
  }
  free(sorted);
  *nres = k;
  return res;
}

void bench_print_rows(const bench_report *rep) {
  size_t n;
  bench_result *res = bench_results(rep, &n);
  for (size_t i = 0; i < n; i++)
    print_row(rep, &res[i], i == 0 || strcmp(res[i - 1].metric, res[i].metric));
  free(res);
}
