/* teams: running a region on OpenMP's threads (docs/protocol.md item 43).
 *
 * In a process whose OpenMP runtime keeps its threads spinning between its
 * regions (libgomp for GOMP_SPINCOUNT, libomp for KMP_BLOCKTIME), those
 * threads hold the CPUs, and the team's workers compete with them for
 * scheduler time slices.  Lending a region to OpenMP runs it on the threads
 * that hold the CPUs: the holder calls GOMP_parallel (libgomp's entry for a
 * parallel region, which LLVM's libomp exports too), with as many threads
 * as OpenMP would use, at most p.  Thread t of that region is participant
 * t: a static region's chunk c runs on thread c mod n (n threads), a greedy
 * one claims batches from the region's own counter as the team does, an
 * each region runs f(ctx, t) on threads t < p.  Nothing of the team's
 * protocol runs: the team is held, no go word is written, no worker is
 * woken, and the region's end is OpenMP's join barrier.  Whether a region
 * is lent is way.c's choice, from what lent and other regions cost.
 *
 * Only possible (tt__lend_possible) from the process's first thread, which
 * is where an OpenMP program runs its own regions: another thread would get
 * an OpenMP thread pool of its own, one more set of spinners; never for a
 * region that asked for every participant (first touch places pages on the
 * team's CPUs), nor along the tree, nor for a pinned team (its participants
 * are CPUs: victim orders, sub-devices, first touch); not in a
 * ThreadSanitizer build, which cannot see OpenMP's barriers (the runtime is
 * not instrumented) and would report every lent region's results as a
 * race.
 *
 * How long OpenMP's threads spin after a region (tt__lend_spin_ns), which
 * way.c's trials wait out: libomp reports its blocktime (kmp_get_blocktime,
 * 200 ms by default); libgomp spins GOMP_SPINCOUNT times (300000 by
 * default, none with OMP_WAIT_POLICY=passive) around a pause instruction,
 * whose cost is measured here (docs/measurements.md, "Lent regions").
 * A runtime that spins for longer than a second (OMP_WAIT_POLICY=active,
 * KMP_BLOCKTIME=infinite) counts as one that never sleeps: no trial of that
 * length could pay for itself.
 *
 * Whether OpenMP's threads spin now (tt__lend_spinning), which picks the
 * lent way's constant (way.c): the process's threads other than the caller
 * and the team's workers used at least half a CPU since the last look.
 * How many CPUs they used goes to team.others_busy, which the idle rule
 * counts (idle.c, "Overcommitted"): the team's workers do not spin beside
 * OpenMP's spinners, each set taking the CPUs the other's next region
 * needs.  A look reads the process's, the caller's and each worker's CPU
 * clock (a system call each; the workers' clock ids copied at a look made
 * with the team held, after a region on it, when the workers cannot go
 * away).  It comes at most once a millisecond, and less often
 * where the clocks cost more than 1/TT__OVERHEAD_DIV of the time between
 * looks; from the process's first thread only, the one that lends, whose
 * statics these are. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lend.h"
#include "team-state.h"

extern int omp_in_parallel(void) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));
extern int omp_get_num_threads(void) __attribute__((weak));
extern int omp_get_max_threads(void) __attribute__((weak));
extern void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads,
                          unsigned flags) __attribute__((weak));
extern int kmp_get_blocktime(void) __attribute__((weak));

bool tt__in_openmp_parallel(void) {
  return omp_in_parallel && omp_in_parallel();
}

bool tt__lend_possible(tt__thread *me, size_t p) {
#if defined(__SANITIZE_THREAD__)
  (void)me;
  (void)p;
  return false;
#else
  if (!GOMP_parallel || !omp_get_thread_num || !omp_get_num_threads ||
      !omp_get_max_threads || p >= tt_atomic_load_relaxed(&tt__the_team.tree_min) ||
      tt_atomic_load_relaxed(&tt__the_team.pin) != TT_PIN_NONE)
    return false;
  if (!me->first)
    me->first = tt__first_thread() ? 1 : -1;
  return me->first > 0;
#endif
}

uint64_t tt__lend_spin_ns(void) {
  if (!GOMP_parallel)
    return 0;
  uint64_t ns;
  if (kmp_get_blocktime) {
    ns = (uint64_t)kmp_get_blocktime() * 1000000u;
  } else {
    const char *policy = getenv("OMP_WAIT_POLICY");
    const char *count = getenv("GOMP_SPINCOUNT");
    long spins = 300000;
    if (count && *count)
      spins = !strcmp(count, "infinite") || !strcmp(count, "INFINITE")
                  ? -1
                  : strtol(count, NULL, 10);
    else if (policy && !strcasecmp(policy, "passive"))
      spins = 0;
    else if (policy && !strcasecmp(policy, "active"))
      spins = -1;
    uint64_t t0 = tt__now_ns();
    for (int i = 0; i < 4096; i++)
      tt__cpu_relax();
    uint64_t pause = (tt__now_ns() - t0) / 4096;
    ns = spins < 0 ? UINT64_MAX : (uint64_t)spins * (pause ? pause : 1);
  }
  return ns > 1000000000u ? 0 : ns;
}

bool tt__lend_spinning(bool held) {
  static uint64_t at, every = 1000000;
  static int64_t others_at;
  static bool spinning;
  /* The workers' clocks, copied at a look made with the team held (the
   * workers cannot go away then) and read at every look: a clock of a
   * worker gone since reads 0, and that look counts too much. */
  static clockid_t *clocks;
  static size_t nclocks, cap, counted;
  tt__team *T = &tt__the_team;
  if (held && nclocks != tt__team_size()) {
    size_t n = tt__team_size();
    if (n > cap) {
      clockid_t *c = realloc(clocks, n * sizeof *c);
      if (c)
        clocks = c, cap = n;
    }
    nclocks = n <= cap ? n : 0;
    for (size_t i = 1; i < nclocks; i++)
      clocks[i] = T->workers[i].clock;
  }
  uint64_t now = tt__now_ns();
  if (now - at < every)
    return spinning;
  int64_t others = (int64_t)tt__cpu_time_ns(true) - (int64_t)tt__cpu_time_ns(false);
  for (size_t i = 1; i < nclocks; i++)
    others -= (int64_t)tt__clock_ns(clocks[i]);
  uint64_t look = tt__now_ns() - now;
  every = look * TT__OVERHEAD_DIV > 1000000 ? look * TT__OVERHEAD_DIV : 1000000;
  /* a delta only between looks that subtracted the same workers */
  int64_t used = at && counted == nclocks ? others - others_at : 0,
          span = (int64_t)(now - at);
  counted = nclocks;
  spinning = at && used >= span / 2;
  tt_atomic_store_relaxed(&T->others_busy,
                          used > 0 ? (uint32_t)((2 * used + span) / (2 * span)) : 0);
  at = now;
  others_at = others;
  return spinning;
}

typedef struct lent {
  void (*f)(void *, size_t);
  void *ctx;
  size_t m, p;
  tt__mode mode;
  _Atomic size_t next;
} lent;

/* Thread t of n's part of a lent region. */
static void lent_chunks(const lent *L, size_t t, size_t n) {
  if (L->mode == TT__MODE_GREEDY)
    tt__run_greedy((_Atomic size_t *)&L->next, L->f, L->ctx, L->m, n);
  else if (L->mode == TT__MODE_EACH)
    L->f(L->ctx, t);
  else
    for (size_t c = t; c < L->p; c += n)
      L->f(L->ctx, c);
}

static void lent_part(void *data) {
  lent *L = data;
  size_t t = (size_t)omp_get_thread_num(), n = (size_t)omp_get_num_threads();
  tt__thread *me = tt__me();
  TT__AS_PARTICIPANT(me, t, true, lent_chunks(L, t, n));
}

size_t tt__lend(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                tt__mode mode) {
  int max = omp_get_max_threads();
  size_t n = max < 2 ? 0 : (size_t)max < p ? (size_t)max : p;
  if (n == 0)
    return 0;
  lent L = {f, ctx, m, p, mode, 0};
  /* No region of the team runs: a worker that ran a chunk of the last one
   * must not spin on for this one (protocol 2, 19); and OpenMP's n - 1
   * threads are busy now and spin after it: the team's workers count them
   * (idle.c, "Overcommitted") until the next look says otherwise. */
  tt_atomic_store_relaxed(&tt__the_team.running_gen, 0);
  tt_atomic_store_relaxed(&tt__the_team.others_busy, (uint32_t)(n - 1));
  GOMP_parallel(lent_part, &L, (unsigned)n, 0);
  return n;
}
