/* Lending a region to OpenMP (launcher/lend.c, docs/protocol.md item 43):
 * in a process with an OpenMP runtime, a region may run on OpenMP's threads
 * (GOMP_parallel) instead of the team's workers.  Whether it does is the
 * way's choice (launcher/way.c, tested with synthetic costs by
 * tests/test-way.c); TEAMS_RUN=openmp fixes it, which these tests use to
 * check the mechanism itself.  This binary links libgomp (gcc -fopenmp) and
 * the static library.
 *
 * Checked: every chunk runs exactly once in each mode; a lent chunk runs
 * inside an OpenMP parallel region, on participant omp_get_thread_num();
 * a static region of p chunks on n OpenMP threads runs chunk c on thread
 * c mod n; a region inside a lent chunk runs serially; and the regions
 * that must stay on the team's own workers do: first touch
 * (TT__MODE_STATIC_PLACED), a caller other than the process's first thread,
 * a pinned team, and TEAMS_RUN=team. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lend.h"
#include "team-internal.h"
#include "team-state.h"
#include "teams/team.h"

#define MAX_M 256

typedef struct region {
  _Atomic int runs[MAX_M];
  _Atomic int part[MAX_M];   /* tt_participant() in chunk c */
  _Atomic int omp_tid[MAX_M]; /* omp_get_thread_num() there, -1 outside */
  _Atomic int nested_serial; /* chunks whose nested region ran serially */
} region;

static void count(void *ctx, size_t c) {
  region *r = ctx;
  atomic_fetch_add(&r->runs[c], 1);
  atomic_store(&r->part[c], tt_participant());
  atomic_store(&r->omp_tid[c], omp_in_parallel() ? omp_get_thread_num() : -1);
}

static void inner(void *ctx, size_t c) {
  (void)c;
  atomic_fetch_add((_Atomic int *)ctx, 1);
}

/* count, plus a region of 4 chunks inside the chunk: serial (nested). */
static void count_nested(void *ctx, size_t c) {
  region *r = ctx;
  count(ctx, c);
  int parallel = -1;
  _Atomic int ran = 0;
  tt__team_run(inner, &ran, 4, 4, TT__MODE_STATIC, &parallel);
  if (parallel == 0 && atomic_load(&ran) == 4)
    atomic_fetch_add(&r->nested_serial, 1);
}

/* A team of n participants whose regions run as TEAMS_RUN says, OpenMP
 * regions of omp_threads threads (the runtime read OMP_NUM_THREADS when it
 * was loaded: set it through the API), and a region record to check. */
static region *team_of(const char *n, int omp_threads, const char *way,
                       const char *pin) {
#if defined(__SANITIZE_THREAD__)
  cr_skip_test("ThreadSanitizer build: regions are never lent (lend.c)");
#endif
  setenv("TEAMS_NUM_THREADS", n, 1);
  omp_set_num_threads(omp_threads);
  setenv("TEAMS_RUN", way, 1);
  if (pin)
    setenv("TEAMS_PIN", pin, 1);
  else
    unsetenv("TEAMS_PIN");
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  cr_assert_eq(tt_team_size(), (size_t)atoi(n));
  region *r = malloc(sizeof *r);
  cr_assert_not_null(r);
  return r;
}

/* Runs m chunks on p participants in `mode`; checks each ran once and
 * returns how many ran inside an OpenMP parallel region. */
static size_t run_region(region *r, size_t m, size_t p, tt__mode mode,
                  void (*f)(void *, size_t)) {
  memset(r, 0, sizeof *r);
  int parallel = -1;
  cr_assert_eq(tt__team_run(f ? f : count, r, m, p, mode, &parallel), 0);
  size_t in_omp = 0, ran = mode == TT__MODE_EACH ? p : m;
  for (size_t c = 0; c < ran; c++) {
    if (mode == TT__MODE_EACH && c > 0 && atomic_load(&r->runs[c]) == 0)
      continue; /* an each region need not reach every participant */
    cr_assert_eq(atomic_load(&r->runs[c]), 1, "mode %d m=%zu p=%zu: chunk %zu ran %d times",
                 (int)mode, m, p, c, atomic_load(&r->runs[c]));
    if (atomic_load(&r->omp_tid[c]) >= 0) {
      in_omp++;
      cr_assert_eq(atomic_load(&r->part[c]), atomic_load(&r->omp_tid[c]),
                   "chunk %zu: participant %d on OpenMP thread %d", c,
                   atomic_load(&r->part[c]), atomic_load(&r->omp_tid[c]));
    }
  }
  return in_omp;
}

Test(lend, lends_every_mode, .timeout = 60) {
  region *r = team_of("4", 4, "openmp", NULL);
  for (int i = 0; i < 20; i++) {
    cr_assert_eq(run_region(r, 4, 4, TT__MODE_STATIC, NULL), 4);
    for (size_t c = 0; c < 4; c++)
      cr_assert_eq(atomic_load(&r->part[c]), (int)c,
                   "static chunk %zu on participant %d", c, atomic_load(&r->part[c]));
    cr_assert_eq(run_region(r, 200, 4, TT__MODE_GREEDY, NULL), 200);
    cr_assert_eq(run_region(r, 4, 4, TT__MODE_EACH, NULL), 4);
    /* tt_foreach_chunk is the same path. */
    memset(r, 0, sizeof *r);
    cr_assert_eq(tt_foreach_chunk(count, r, 100, 4), 0);
    for (size_t c = 0; c < 100; c++)
      cr_assert_eq(atomic_load(&r->runs[c]), 1);
  }
  /* A region inside a lent chunk runs serially, on that thread. */
  cr_assert_eq(run_region(r, 4, 4, TT__MODE_STATIC, count_nested), 4);
  cr_assert_eq(atomic_load(&r->nested_serial), 4);
  /* First touch places pages on the team's own CPUs: never lent. */
  for (int i = 0; i < 5; i++) {
    cr_assert_eq(run_region(r, 4, 4, TT__MODE_STATIC_PLACED, NULL), 0);
    for (size_t c = 0; c < 4; c++)
      cr_assert_eq(atomic_load(&r->part[c]), (int)c);
  }
  free(r);
}

/* Whose spin a lend prolongs (tt__lend_tail_ns): OpenMP's threads seen
 * spinning before any region of ours was lent spin for the program, and a
 * lend adds nothing there; lent while they were seen asleep, the spin is
 * ours, and the next lend prolongs it by the time since (a share of the
 * tail, under it), until they are seen asleep again. */
Test(lend, a_spin_is_ours_only_where_a_lend_woke_openmp, .timeout = 60) {
  setenv("GOMP_SPINCOUNT", "3000000", 1); /* S: 3 ms at 1 ns a pause, under 1 s */
  region *r = team_of("2", 2, "openmp", NULL);
  cr_assert_float_eq(tt__lend_tail_ns(2, true), 0, 1e-9, "the program's spin");
  float tail = tt__lend_tail_ns(2, false);
  cr_assert_gt(tail, 0, "seen asleep: a lend leaves its whole tail");
  double spin = (double)tail * (double)tt__the_team.cpus; /* S (n - 1) / cpus, n = 2 */
  uint64_t t0 = tt__now_ns();
  cr_assert_eq(run_region(r, 4, 2, TT__MODE_STATIC, NULL), 4, "lent");
  float ext = tt__lend_tail_ns(2, true);
  /* within S of the lent region (read after the call: the call's own
   * reading was earlier) the spin is ours; past it, where the call read
   * its clock is not known here: ours or the program's */
  if ((double)(tt__now_ns() - t0) < spin)
    cr_assert(ext > 0 && ext < tail, "ours: %g of a tail of %g", ext, tail);
  else
    cr_assert(ext >= 0 && ext < tail, "%g of a tail of %g", ext, tail);
  cr_assert_float_eq(tt__lend_tail_ns(2, false), tail, 1e-3 * tail);
  cr_assert_float_eq(tt__lend_tail_ns(2, true), 0, 1e-9, "seen asleep since: not ours");
  free(r);
}

/* Fewer OpenMP threads than participants: thread t runs chunks t, t + n... */
Test(lend, fewer_openmp_threads, .timeout = 60) {
  region *r = team_of("4", 2, "openmp", NULL);
  for (int i = 0; i < 20; i++) {
    cr_assert_eq(run_region(r, 4, 4, TT__MODE_STATIC, NULL), 4);
    for (size_t c = 0; c < 4; c++)
      cr_assert_eq(atomic_load(&r->omp_tid[c]), (int)(c % 2));
    cr_assert_eq(run_region(r, 150, 4, TT__MODE_GREEDY, NULL), 150);
  }
  free(r);
}

static void *other_thread(void *arg) {
  region *r = arg;
  memset(r, 0, sizeof *r);
  tt__team_run(count, r, 4, 4, TT__MODE_STATIC, NULL);
  return NULL;
}

/* Another thread would get an OpenMP thread pool of its own: not lent. */
Test(lend, only_from_the_first_thread, .timeout = 60) {
  region *r = team_of("4", 4, "openmp", NULL);
  for (int i = 0; i < 10; i++) {
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, other_thread, r), 0);
    pthread_join(t, NULL);
    for (size_t c = 0; c < 4; c++) {
      cr_assert_eq(atomic_load(&r->runs[c]), 1);
      cr_assert_eq(atomic_load(&r->omp_tid[c]), -1, "chunk %zu lent", c);
    }
  }
  free(r);
}

/* A pinned team, or TEAMS_RUN=team: the team's own participants only,
 * chunk c on participant c, or on the caller when its worker came late
 * (docs/protocol.md item 10). */
static void never_lent(const char *way, const char *pin) {
  region *r = team_of("4", 4, way, pin);
  for (int i = 0; i < 10; i++) {
    cr_assert_eq(run_region(r, 4, 4, TT__MODE_STATIC, NULL), 0);
    for (size_t c = 0; c < 4; c++) {
      int part = atomic_load(&r->part[c]);
      cr_assert(part == (int)c || part == 0, "chunk %zu on participant %d", c, part);
    }
    cr_assert_eq(run_region(r, 100, 4, TT__MODE_GREEDY, NULL), 0);
  }
  free(r);
}

Test(lend, not_with_the_team_fixed, .timeout = 60) { never_lent("team", NULL); }
Test(lend, not_for_a_pinned_team, .timeout = 60) { never_lent("openmp", "cores"); }

/* The process's other threads -- OpenMP's spinners, here one thread that
 * spins -- count in the overcommit rule: a look (lend.c) sets
 * team.others_busy while it spins, whether the team's workers are awake
 * (the look made with the team held reads their clocks) or asleep, and
 * back to 0 once it stopped.  The regions run on the team's workers
 * (TEAMS_RUN=team): under the default way a region may be lent, and
 * OpenMP's threads, spinning after it, are busy threads of the process
 * too -- the look would be right to count them.  Nothing is timed against
 * a limit: the loops run until they saw the value, 20 s at most. */
static _Atomic int spin_stop;
static void *spinner(void *arg) {
  (void)arg;
  while (!atomic_load(&spin_stop))
    ;
  return NULL;
}
static void busy_chunk(void *ctx, size_t c) {
  (void)ctx;
  (void)c;
  uint64_t until = tt__now_ns() + 2000;
  while (tt__now_ns() < until)
    ;
}
static uint32_t regions_until(uint32_t want, bool at_least) {
  uint64_t until = tt__now_ns() + 20000000000u;
  uint32_t seen;
  do {
    cr_assert_eq(tt__team_run(busy_chunk, NULL, 64, 2, TT__MODE_GREEDY, NULL), 0);
    seen = tt_atomic_load_relaxed(&tt__the_team.others_busy);
  } while ((at_least ? seen < want : seen != want) && tt__now_ns() < until);
  return seen;
}
Test(lend, openmps_spinning_threads_count_as_busy_cpus, .timeout = 60) {
  region *r = team_of("2", 2, "team", NULL);
  free(r);
  pthread_t t;
  atomic_store(&spin_stop, 0);
  cr_assert_eq(pthread_create(&t, NULL, spinner, NULL), 0);
  cr_assert_geq(regions_until(1, true), 1, "a spinning thread never counted");
  atomic_store(&spin_stop, 1);
  pthread_join(t, NULL);
  cr_assert_eq(regions_until(0, false), 0, "the stopped thread still counted");
}
