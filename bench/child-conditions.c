/* teams-bench-child-conditions-libgomp and -libomp: one cell of the
 * "conditions" section, a child of teams-bench.
 *
 * A process that holds an OpenMP runtime and the team runs a pattern of
 * regions, as a program that mixes them does, and prints the cost of one
 * iteration of the pattern, in us (the team region and the OpenMP regions
 * the pattern puts beside it):
 *   solo     the team region back to back, in a process that used OpenMP
 *            once (its threads asleep: the child waits out libomp's 200 ms
 *            blocktime first);
 *   batchB   B OpenMP regions then B team regions, repeated; per team
 *            region (B OpenMP and B team regions over B);
 *   pairs    an OpenMP region then a team region, repeated;
 *   once     a sample is one OpenMP region, a 250 ms sleep (its threads
 *            and the team's go to sleep), then the first 2000 regions of a
 *            loop the process has not run before (a program that used
 *            OpenMP once, then only the team);
 *   steps    as solo, but the chunks' work changes every 2500 regions
 *            (empty: none and ~2 us; work: ~0.5 and ~4 us);
 *   two      as solo, while a second thread launches the same regions.
 * A region is p chunks: empty, or ~2 us of work each (--kind work).  The
 * "team region" is what TEAMS_BENCH_REGION says: tt_foreach_chunk (team,
 * the default), the same loop written with OpenMP (omp-loop: `parallel for
 * schedule(static)`), or an OpenCL kernel of p work-groups on the teams
 * device, enqueue + clFinish (cl; built with BENCH_WITH_CL).  The parent
 * sets TEAMS_RUN and TEAMS_NUM_THREADS for the fixed alternatives, and
 * TEAMS_BENCH_PIN=1 to pin the first thread to one CPU before OpenMP and
 * the team start (their threads stay unpinned).
 *
 * Changes while the process runs (--change): the child itself narrows its
 * first thread's affinity mask to one CPU (mask), or halves the CPU quota
 * of the cgroup the parent put it in (quota: TEAMS_BENCH_QUOTA names the
 * file and the two values), a third of the way into its samples, and gives
 * the old value back two thirds in; where the team sizes itself (no
 * TEAMS_NUM_THREADS) it also prints the seconds until tt_team_size()
 * showed each change (9.99: not within the run).
 *
 *   child --cell solo|batchB|pairs|once|steps|two --kind empty|work --team P --label SYS
 *         --metric NAME [--change mask|quota] [--quick] [--round R] */
#include "mix.h"
#include "args.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

enum { REGION_TEAM, REGION_OPENMP, REGION_CL };
static int region = REGION_TEAM;

static void team_region(size_t p) {
  switch (region) {
  case REGION_OPENMP:
    mix_omp_region(p);
    return;
#ifdef BENCH_WITH_CL
  case REGION_CL:
    mix_cl_region(p);
    return;
#endif
  default:
    mix_team_region(p);
  }
}

/* once: a loop per sample, so that each starts as a new loop would (the
 * functions differ, so that the compiler does not fold them into one). */
#define ONCE_FN(k)                                                             \
  static void once_chunk_##k(void *ctx, size_t c) {                            \
    (void)ctx;                                                                 \
    mix_work(c + (k) * BENCH_MAX_P);                                           \
  }
ONCE_FN(0) ONCE_FN(1) ONCE_FN(2) ONCE_FN(3) ONCE_FN(4) ONCE_FN(5) ONCE_FN(6)
ONCE_FN(7) ONCE_FN(8) ONCE_FN(9)
static void (*const once_chunk[])(void *, size_t) = {
    once_chunk_0, once_chunk_1, once_chunk_2, once_chunk_3, once_chunk_4,
    once_chunk_5, once_chunk_6, once_chunk_7, once_chunk_8, once_chunk_9};

static double once_us(size_t p, unsigned sample) {
  mix_omp_region(p);
  struct timespec nap = {0, 250000000};
  nanosleep(&nap, NULL);
  int64_t t0 = bench_now_ns();
  for (int i = 0; i < 2000; i++) {
    if (region == REGION_TEAM)
      tt_foreach_chunk(once_chunk[sample % 10], NULL, p, p);
    else
      team_region(p);
  }
  return (double)(bench_now_ns() - t0) / 1e3 / 2000;
}

/* steps: the chunks' units, changed every 2500 regions. */
static uint32_t steps_units[2];
static unsigned steps_done;

/* two: the second thread's regions, until told to stop. */
static atomic_int two_stop;
static size_t two_p;
static void *two_main(void *arg) {
  (void)arg;
  while (!atomic_load(&two_stop))
    team_region(two_p);
  return NULL;
}

/* One iteration of the pattern... reps of them; returns us per iteration. */
static double pattern_us(const char *cell, size_t p, unsigned reps) {
  int64_t t0 = bench_now_ns();
  if (!strcmp(cell, "steps")) {
    for (unsigned i = 0; i < reps; i++, steps_done++) {
      mix_units = steps_units[steps_done / 2500 % 2];
      team_region(p);
    }
    return (double)(bench_now_ns() - t0) / 1e3 / reps;
  }
  if (!strncmp(cell, "batch", 5)) {
    unsigned b = (unsigned)strtoul(cell + 5, NULL, 10);
    unsigned batches = reps / b ? reps / b : 1;
    for (unsigned k = 0; k < batches; k++) {
      for (unsigned i = 0; i < b; i++)
        mix_omp_region(p);
      for (unsigned i = 0; i < b; i++)
        team_region(p);
    }
    return (double)(bench_now_ns() - t0) / 1e3 / ((double)batches * b);
  }
  int pairs = !strcmp(cell, "pairs");
  for (unsigned i = 0; i < reps; i++) {
    if (pairs)
      mix_omp_region(p);
    team_region(p);
  }
  return (double)(bench_now_ns() - t0) / 1e3 / reps;
}

/* ---- changes while running ----------------------------------------------------- */

static int write_text(const char *path, const char *text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

static cpu_set_t mask_all;
static char quota_file[1024], quota_low[64], quota_high[64];

/* Narrow (1) or restore (0); returns what the team's size should become. */
static size_t change(const char *what, int narrow, size_t p) {
  if (!strcmp(what, "mask")) {
    cpu_set_t one;
    CPU_ZERO(&one);
    int c = 0;
    while (!CPU_ISSET(c, &mask_all))
      c++;
    CPU_SET(c, &one);
    sched_setaffinity(0, sizeof(cpu_set_t), narrow ? &one : &mask_all);
    return narrow ? 1 : p;
  }
  write_text(quota_file, narrow ? quota_low : quota_high);
  return narrow ? (p + 1) / 2 : p;
}

int main(int argc, char **argv) {
  const char *label = "conditions", *metric = "cell", *cell = NULL, *kind = "empty",
             *chg = NULL;
  size_t p = 0;
  unsigned round = 0; /* the driver passes it to every child; a cell's
                         samples do not depend on it */
  int quick = 0;
  const bench_arg args[] = {
      {"--cell", BENCH_ARG_TEXT, &cell, "solo|batchB|pairs|once|steps|two", "the pattern of regions"},
      {"--kind", BENCH_ARG_TEXT, &kind, "empty|work", "the region's chunks"},
      {"--team", BENCH_ARG_SIZE, &p, "P", "participants per region"},
      {"--label", BENCH_ARG_TEXT, &label, "SYS", "the system's name in the rows"},
      {"--metric", BENCH_ARG_TEXT, &metric, "NAME", "the metric's name in the rows"},
      {"--change", BENCH_ARG_TEXT, &chg, "mask|quota", "what changes while it runs"},
      {"--quick", BENCH_ARG_FLAG, &quick, NULL, "fewer samples"},
      {"--round", BENCH_ARG_UINT, &round, "R", "the round"},
  };
  int rc = BENCH_ARGS(argc, argv, args, NULL);
  if (rc >= 0)
    return rc;
  if (!cell || p < 2 || p > BENCH_MAX_P) {
    fprintf(stderr, "%s: want --cell and --team 2..%d\n", argv[0], BENCH_MAX_P);
    return 2;
  }
  /* A quota cell: into the parent's cgroup first, before OpenMP or the
   * team read the CPUs. */
  const char *cg = getenv("TEAMS_BENCH_CGROUP");
  if (cg && *cg) {
    char pid[32];
    snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (write_text(cg, pid) != 0) {
      printf("note\t%s: %s left out: cannot join %s\n", label, metric, cg);
      return 0;
    }
  }
  mix_units = !strcmp(kind, "work") ? MIX_CHUNK_UNITS : 0;
  steps_units[0] = mix_units ? MIX_CHUNK_UNITS / 4 : 0;
  steps_units[1] = mix_units ? 2 * MIX_CHUNK_UNITS : MIX_CHUNK_UNITS;
  const char *pin = getenv("TEAMS_BENCH_PIN");
  if (pin && *pin == '1') { /* before OpenMP's threads and the team exist */
    cpu_set_t mine, one;
    sched_getaffinity(0, sizeof mine, &mine);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &mine)) {
        CPU_SET(c, &one);
        break;
      }
    sched_setaffinity(0, sizeof one, &one);
  }
  const char *r = getenv("TEAMS_BENCH_REGION");
  if (r && !strcmp(r, "omp-loop"))
    region = REGION_OPENMP;
  else if (r && !strcmp(r, "cl")) {
#ifdef BENCH_WITH_CL
    const char *why = mix_cl_open(p);
    if (why) {
      printf("note\t%s: %s left out: %s\n", label, metric, why);
      return 0;
    }
    region = REGION_CL;
#else
    printf("note\t%s: %s left out: built without OpenCL\n", label, metric);
    return 0;
#endif
  }
  if (chg && !strcmp(chg, "quota")) {
    const char *q = getenv("TEAMS_BENCH_QUOTA"); /* FILE:LOW:HIGH */
    if (!q || sscanf(q, "%1023[^:]:%63[^:]:%63s", quota_file, quota_low, quota_high) != 3) {
      printf("note\t%s: %s left out: no cgroup quota to change\n", label, metric);
      return 0;
    }
    for (char *s = quota_low; *s; s++)
      if (*s == '_')
        *s = ' '; /* v2's "50000_100000" */
    for (char *s = quota_high; *s; s++)
      if (*s == '_')
        *s = ' ';
  }
  sched_getaffinity(0, sizeof mask_all, &mask_all);

  /* The process has used OpenMP (and the team, or the device) once. */
  mix_omp_region(p);
  team_region(p);
  if (!strcmp(cell, "solo")) {
    struct timespec nap = {0, 250000000}; /* OpenMP's threads go to sleep */
    nanosleep(&nap, NULL);
  }
  if (!strcmp(cell, "once")) {
    for (unsigned s = 0; s < (quick ? 5u : 9u); s++)
      printf("sample\t%s\t%s\tus\t-\t%.6g\n", label, metric, once_us(p, s));
    return 0;
  }
  pthread_t two;
  int two_started = 0;
  if (!strcmp(cell, "two")) {
    two_p = p;
    two_started = pthread_create(&two, NULL, two_main, NULL) == 0;
  }
  /* A sample: at least 20 ms of the pattern, 100 ms where the CPUs change
   * (each third of the run then lasts 1.5 s, three of the monitor's
   * looks), in runs of reps iterations.  reps comes from a first estimate,
   * but a sample's length does not: an estimate made while the first
   * regions waited for a time slice (ms each under a spinner) gave samples
   * of ten regions, 65 us, that no time slice fell into -- a team twice as
   * fast as it runs. */
  double one = pattern_us(cell, p, !strncmp(cell, "batch", 5) ? 20 : 50);
  double sample_us = chg ? 100000.0 : 20000.0;
  unsigned reps = (unsigned)(sample_us / (one > 0.01 ? one : 0.01));
  if (!strncmp(cell, "batch", 5)) {
    unsigned b = (unsigned)strtoul(cell + 5, NULL, 10);
    reps = reps < b ? b : reps; /* whole batches */
  }
  if (reps < 10)
    reps = 10;
  unsigned samples = quick ? 5 : 9;
  if (chg)
    samples = 45;
  /* follow[0]: seconds until the team shrank, [1]: grew back (-1: not yet) */
  double follow[2] = {-1, -1};
  size_t want = 0;
  int64_t changed_at = 0;
  int which = -1, sized = region != REGION_OPENMP && !getenv("TEAMS_NUM_THREADS");
  for (unsigned s = 0; s < samples; s++) {
    if (chg && (s == samples / 3 || s == 2 * samples / 3)) {
      which = s == samples / 3 ? 0 : 1;
      want = change(chg, which == 0, p);
      changed_at = bench_now_ns();
    }
    double us = pattern_us(cell, p, reps);
    for (unsigned more = 1; (double)more * reps * us < sample_us; more++)
      us = (us * more + pattern_us(cell, p, reps)) / (more + 1);
    if (sized && which >= 0 && follow[which] < 0 && tt_team_size() == want)
      follow[which] = (double)(bench_now_ns() - changed_at) / 1e9;
    printf("sample\t%s\t%s\tus\t-\t%.6g\n", label, metric, us);
  }
  if (chg && sized) {
    /* the last change's follow time, looked for until two seconds passed */
    while (follow[1] < 0 && bench_now_ns() - changed_at < 2000000000) {
      pattern_us(cell, p, 10);
      if (tt_team_size() == want)
        follow[1] = (double)(bench_now_ns() - changed_at) / 1e9;
    }
    for (int k = 0; k < 2; k++)
      printf("sample\t%s\t%s %s\ts\t-\t%.4g\n", label, metric,
             k ? "grew back after" : "shrank after", follow[k] < 0 ? 9.99 : follow[k]);
  }
  if (two_started) {
    atomic_store(&two_stop, 1);
    pthread_join(two, NULL);
  }
  return 0;
}
