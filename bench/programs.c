/* teams-bench: the "programs" section -- programs nobody tuned the runtime
 * for, generated from seeds (programs.h), each run under the default way
 * and under every fixed TEAMS_RUN.
 *
 * For each seed and round, five child processes (child-programs.c) run the
 * same program, in an order rotated by seed and round:
 *   default  TEAMS_RUN unset: the way the runtime chooses;
 *   team     TEAMS_RUN=team, serial  TEAMS_RUN=serial,
 *   openmp   TEAMS_RUN=openmp: the way fixed for the whole process;
 *   again    TEAMS_RUN unset, a second time: the control.  The default's
 *            median over its own again is what a ratio of two medians of
 *            this section reads where nothing differs; its share within
 *            1.1x and 1.3x is the most the default / best fixed can show
 *            on this machine in this run.
 * Rounds are the outer loop, so a seed's repetitions are spread over the
 * run.  Per seed and system the time is the median over rounds; the best
 * fixed way is the one of team, serial and openmp with the lowest median,
 * and the seed's ratio is the default's median over that.  The report:
 * the ratio's distribution over seeds (median, p90, p99, max, and the
 * shares within 1.1x and 1.3x), the best fixed way's own spread over its
 * rounds (the resolution of those ratios), each system's time over the best fixed,
 * how often each fixed way was the best, and the ten worst seeds with
 * their times and what their programs do, so that one can be replayed
 * (--seeds 1 --seed S, which also prints the program in full and its
 * phases' times); with --tsv, every seed's times, the worst first, so
 * that two runs of the same seeds (two builds) compare seed by seed.  It
 * measures; it asserts nothing.
 *
 * The work of every child is the same: the parent measures the ns of a
 * unit of work once (the child's --calibrate, before any thread exists)
 * and hands it to every child. */
#include "bench.h"
#include "driver.h"
#include "programs.h"
#include "table.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const systems[] = {"default", "team", "serial", "openmp", "again"};
#define NSYS 5
#define AGAIN 4 /* the control: the default a second time */
#define FIXED_LAST 3

/* The fixed ways, systems 1..FIXED_LAST: the best fixed one is among them. */
static bool is_fixed(int s) { return s > 0 && s <= FIXED_LAST; }
#define NWORST 10

static const int group_tag = 0, calib_tag = 0;
static const void *const group = &group_tag; /* the rows of this section */

static int run_child(const bench_conditions_opt *o, const char *path, size_t seed,
                     int sys, unsigned round, const char *unit) {
  char seed_s[32], round_s[16];
  snprintf(seed_s, sizeof seed_s, "%zu", seed);
  snprintf(round_s, sizeof round_s, "%u", round);
  char *argv[] = {(char *)path, "--seed", seed_s, "--unit-ns", (char *)unit,
                  "--label", (char *)systems[sys], "--round", round_s, NULL};
  static char omp[64], way[32];
  snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%zu", o->cpus);
  snprintf(way, sizeof way, "TEAMS_RUN=%s", sys && sys != AGAIN ? systems[sys] : "");
  const char *set[2] = {omp, way};
  char **env = bench_child_env(set, 2);
  char what[200];
  snprintf(what, sizeof what, "programs: seed %zu, %s, round %u", seed, systems[sys], round);
  int rc = bench_run_program(group, round, what, argv, env, 120);
  free(env);
  return rc;
}

static const bench_row *row_of(const char *metric, const char *sys) {
  size_t n;
  bench_row *rows = bench_rows(&n);
  for (size_t i = 0; i < n; i++)
    if (rows[i].group == group && !strcmp(rows[i].metric, metric) &&
        !strcmp(rows[i].system, sys))
      return &rows[i];
  return NULL;
}

static double median_of(const char *metric, int sys) {
  const bench_row *r = row_of(metric, systems[sys]);
  return r && r->n ? bench_row_quantile(r, 0, 0, 0.5) : NAN;
}

typedef struct seed_result {
  size_t seed;
  double ms[NSYS]; /* median over rounds */
  int best;        /* the best fixed way */
  double ratio;    /* default / best fixed */
} seed_result;

static int by_ratio_desc(const void *a, const void *b) {
  double x = ((const seed_result *)a)->ratio, y = ((const seed_result *)b)->ratio;
  return (x < y) - (x > y);
}

static double quantile(const double *v, size_t n, double q) {
  double *tmp = bench_xrealloc(NULL, (n ? n : 1) * sizeof *tmp);
  memcpy(tmp, v, n * sizeof *tmp);
  double x = bench_quantile(tmp, n, q);
  free(tmp);
  return x;
}

static void print_full(const bench_conditions_opt *o, const seed_result *r) {
  program pg;
  prog_generate(&pg, (uint64_t)r->seed);
  FILE *f = o->tsv ? stderr : stdout;
  fprintf(f, "%s", o->tsv ? "" : "\n");
  prog_print_full(f, o->tsv ? "programs: " : "", &pg);
  fprintf(f, "%s%-8s %9s %9s %9s %9s %9s  (ms, median over rounds)\n",
          o->tsv ? "programs: " : "", "phase", systems[0], systems[1], systems[2], systems[3],
          systems[4]);
  for (unsigned k = 0; k <= pg.nphases; k++) {
    char metric[64], name[16], f4[NSYS][24];
    if (k < pg.nphases)
      snprintf(metric, sizeof metric, "seed %zu phase %u", r->seed, k + 1);
    else
      snprintf(metric, sizeof metric, "seed %zu", r->seed);
    snprintf(name, sizeof name, k < pg.nphases ? "%u" : "all", k + 1);
    for (int s = 0; s < NSYS; s++)
      bench_fmt(f4[s], sizeof f4[s], median_of(metric, s));
    fprintf(f, "%s%-8s %9s %9s %9s %9s %9s\n", o->tsv ? "programs: " : "", name, f4[0],
            f4[1], f4[2], f4[3], f4[4]);
  }
}

static void report(const bench_conditions_opt *o, size_t first, size_t nseeds,
                   double unit_ns, double seconds) {
  seed_result *res = bench_xrealloc(NULL, nseeds * sizeof *res);
  size_t n = 0, failed = 0;
  for (size_t i = 0; i < nseeds; i++) {
    seed_result *r = &res[n];
    char metric[64];
    r->seed = first + i;
    snprintf(metric, sizeof metric, "seed %zu", r->seed);
    int ok = 1;
    r->best = 0;
    for (int s = 0; s < NSYS; s++) {
      r->ms[s] = median_of(metric, s);
      ok &= !isnan(r->ms[s]) && r->ms[s] > 0;
      if (is_fixed(s) && ok && (!r->best || r->ms[s] < r->ms[r->best]))
        r->best = s;
    }
    if (!ok) {
      failed++;
      continue;
    }
    r->ratio = r->ms[0] / r->ms[r->best];
    n++;
  }
  double *q = bench_xrealloc(NULL, (n ? n : 1) * sizeof *q);
  double over[NSYS][3]; /* per system over the best fixed: median, p90, max */
  unsigned best_on[NSYS] = {0};
  for (int s = 0; s < NSYS; s++) {
    for (size_t i = 0; i < n; i++)
      q[i] = res[i].ms[s] / res[i].ms[res[i].best];
    over[s][0] = quantile(q, n, 0.5);
    over[s][1] = quantile(q, n, 0.9);
    over[s][2] = quantile(q, n, 1.0);
  }
  size_t within11 = 0, within13 = 0;
  for (size_t i = 0; i < n; i++) {
    q[i] = res[i].ratio;
    best_on[res[i].best]++;
    within11 += res[i].ratio <= 1.1;
    within13 += res[i].ratio <= 1.3;
  }
  double med = quantile(q, n, 0.5), p90 = quantile(q, n, 0.9), p99 = quantile(q, n, 0.99),
         max = quantile(q, n, 1.0);
  /* The resolution: the best fixed way's own spread over its rounds (its
   * slowest round over its fastest), the same program and build each time. */
  for (size_t i = 0; i < n; i++) {
    char metric[64];
    snprintf(metric, sizeof metric, "seed %zu", res[i].seed);
    const bench_row *b = row_of(metric, systems[res[i].best]);
    q[i] = bench_row_quantile(b, 0, 0, 1.0) / bench_row_quantile(b, 0, 0, 0.0);
  }
  double spread_med = quantile(q, n, 0.5), spread_p90 = quantile(q, n, 0.9);
  /* The control: the default against its second run, the larger over the
   * smaller -- how far apart this section reads two runs of one thing. */
  size_t same11 = 0, same13 = 0;
  for (size_t i = 0; i < n; i++) {
    double a = res[i].ms[0], b = res[i].ms[AGAIN];
    q[i] = a > b ? a / b : b / a;
    same11 += q[i] <= 1.1;
    same13 += q[i] <= 1.3;
  }
  double same_med = quantile(q, n, 0.5), same_p90 = quantile(q, n, 0.9),
         same_max = quantile(q, n, 1.0);
  double c11 = n ? (double)same11 / (double)n : NAN, c13 = n ? (double)same13 / (double)n : NAN;
  double s11 = n ? (double)within11 / (double)n : NAN, s13 = n ? (double)within13 / (double)n : NAN;
  qsort(res, n, sizeof *res, by_ratio_desc);
  size_t nworst = n < NWORST ? n : NWORST;

  if (o->tsv) {
    printf("programs\tdefault/best\tover %zu seeds\tx\t%.4g\t%.4g\t-\n", n, med, p90);
    printf("programs\tdefault/best\tp99 over seeds\tx\t%.4g\t-\t-\n", p99);
    printf("programs\tdefault/best\tmax over seeds\tx\t%.4g\t-\t-\n", max);
    printf("programs\tdefault/best\tseeds within 1.1x\tshare\t%.4g\t-\t-\n", s11);
    printf("programs\tdefault/best\tseeds within 1.3x\tshare\t%.4g\t-\t-\n", s13);
    printf("programs\tbest fixed\tspread over rounds\tx\t%.4g\t%.4g\t-\n", spread_med,
           spread_p90);
    printf("programs\tdefault/again\tover %zu seeds\tx\t%.4g\t%.4g\t-\n", n, same_med,
           same_p90);
    printf("programs\tdefault/again\tmax over seeds\tx\t%.4g\t-\t-\n", same_max);
    printf("programs\tdefault/again\tseeds within 1.1x\tshare\t%.4g\t-\t-\n", c11);
    printf("programs\tdefault/again\tseeds within 1.3x\tshare\t%.4g\t-\t-\n", c13);
    for (int s = 0; s < NSYS; s++) {
      printf("programs\t%s\tover best fixed\tx\t%.4g\t%.4g\t-\n", systems[s], over[s][0],
             over[s][1]);
      if (is_fixed(s))
        printf("programs\t%s\tbest fixed on\tseeds\t%u\t-\t-\n", systems[s], best_on[s]);
    }
    /* every seed, the worst first: two runs (two builds) are compared
     * seed by seed from these rows */
    for (size_t i = 0; i < n; i++) {
      const seed_result *r = &res[i];
      char metric[64], desc[1200];
      snprintf(metric, sizeof metric, "seed %zu", r->seed);
      printf("programs\tdefault/best\t%s\tx\t%.4g\t-\t%s\n", metric, r->ratio,
             systems[r->best]);
      for (int s = 0; s < NSYS; s++)
        printf("programs\t%s\t%s\tms\t%.4g\t%.4g\t%.4g\n", systems[s], metric, r->ms[s],
               bench_row_quantile(row_of(metric, systems[s]), 0, 0, 0.9),
               r->ms[s] / r->ms[r->best]);
      if (i >= nworst)
        continue;
      program pg;
      prog_generate(&pg, (uint64_t)r->seed);
      prog_describe(desc, sizeof desc, &pg);
      fprintf(stderr, "programs: worst %zu: seed %zu (%.2fx): %s\n", i + 1, r->seed, r->ratio,
              desc);
    }
  } else {
    printf("\n== programs: programs generated from seeds, the default against the best "
           "fixed TEAMS_RUN (p = %zu; seeds %zu..%zu, %u rounds in %.1f s; a unit of work "
           "%.3g ns)\n",
           o->cpus, first, first + nseeds - 1, o->rounds, seconds, unit_ns);
    char f[4][24];
    bench_fmt(f[0], sizeof f[0], med);
    bench_fmt(f[1], sizeof f[1], p90);
    bench_fmt(f[2], sizeof f[2], p99);
    bench_fmt(f[3], sizeof f[3], max);
    printf("default / best fixed over %zu seeds: median %sx, p90 %sx, p99 %sx, max %sx\n", n,
           f[0], f[1], f[2], f[3]);
    printf("  within 1.1x on %.1f%% of seeds (target: >= 95%%), within 1.3x on %.1f%% "
           "(target: all)\n",
           100 * s11, 100 * s13);
    printf("  the best fixed way's own spread over its rounds (slowest / fastest): "
           "median %.3gx, p90 %.3gx\n",
           spread_med, spread_p90);
    printf("  the control, the default against its second run (again; the larger over the "
           "smaller): median %.3gx, p90 %.3gx, max %.3gx; within 1.1x on %.1f%% of seeds, "
           "within 1.3x on %.1f%%\n",
           same_med, same_p90, same_max, 100 * c11, 100 * c13);
    printf("%-10s %27s %12s\n", "", "time over the best fixed", "best fixed");
    printf("%-10s %9s %9s %9s %12s\n", "system", "median", "p90", "max", "on seeds");
    for (int s = 0; s < NSYS; s++) {
      char m[3][24], b[16] = "";
      for (int k = 0; k < 3; k++)
        bench_fmt(m[k], sizeof m[k], over[s][k]);
      if (is_fixed(s))
        snprintf(b, sizeof b, "%u", best_on[s]);
      printf("%-10s %8sx %8sx %8sx %12s\n", systems[s], m[0], m[1], m[2], b);
    }
    printf("the %zu worst seeds (ms, median over rounds; * the best fixed; replay one: "
           "teams-bench --section programs --seeds 1 --seed S):\n",
           nworst);
    printf("%8s %8s %9s %9s %9s %9s %9s  %s\n", "seed", "def/best", systems[0], systems[1],
           systems[2], systems[3], systems[4], "program");
    for (size_t i = 0; i < nworst; i++) {
      const seed_result *r = &res[i];
      char t[NSYS][24], desc[1200];
      for (int s = 0; s < NSYS; s++) {
        char v[20];
        bench_fmt(v, sizeof v, r->ms[s]);
        snprintf(t[s], sizeof t[s], "%s%s", s == r->best ? "*" : "", v);
      }
      program pg;
      prog_generate(&pg, (uint64_t)r->seed);
      prog_describe(desc, sizeof desc, &pg);
      printf("%8zu %7.2fx %9s %9s %9s %9s %9s  %s\n", r->seed, r->ratio, t[0], t[1], t[2],
             t[3], t[4], desc);
    }
  }
  if (nseeds == 1 && n == 1)
    print_full(o, &res[0]);
  if (failed)
    bench_note("programs: %zu of %zu seeds left out: a child failed under some system "
               "(see the notes above)",
               failed, nseeds);
  free(q);
  free(res);
}

int bench_programs(const bench_conditions_opt *o) {
  char path[4200];
  snprintf(path, sizeof path, "%s/teams-bench-child-programs", o->dir);
  if (access(path, X_OK) != 0) {
    bench_note("programs: %s was not built (it needs gcc with -fopenmp); the section is "
               "missing", path);
    return 0;
  }
  size_t nseeds = o->seeds ? o->seeds : o->quick ? 20 : 200, first = o->seed;

  /* The ns of a unit of work, once, for every child. */
  char *argv[] = {path, "--calibrate", NULL};
  char **env = bench_child_env(NULL, 0);
  int rc = bench_run_program(&calib_tag, 0, "programs: calibration", argv, env, 60);
  free(env);
  const bench_row *c = NULL;
  size_t nrows;
  bench_row *rows = bench_rows(&nrows);
  for (size_t i = 0; i < nrows; i++)
    if (rows[i].group == &calib_tag)
      c = &rows[i];
  if (rc != 0 || !c || !c->n) {
    bench_note("programs: the calibration failed; the section is missing");
    return 0;
  }
  double unit_ns = bench_row_quantile(c, 0, 0, 0.5);
  char unit[32];
  snprintf(unit, sizeof unit, "%.6g", unit_ns);

  int64_t t0 = bench_now_ns();
  for (unsigned r = 0; r < o->rounds; r++)
    for (size_t i = 0; i < nseeds; i++)
      for (int k = 0; k < NSYS; k++)
        run_child(o, path, first + i, (int)((k + r + i) % NSYS), r, unit);
  report(o, first, nseeds, unit_ns, (double)(bench_now_ns() - t0) / 1e9);
  return 0;
}
