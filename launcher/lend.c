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
 * What a lent region leaves behind (tt__lend_tail_ns), which way.c adds
 * to the openmp way where OpenMP's threads sleep and to every try of it:
 * after the region OpenMP's n - 1 threads spin for S, taking n - 1 of the
 * team's CPUs meanwhile, so the team's next regions lose up to
 * S (n - 1) / cpus of its time.  Where they spin because a region of
 * ours woke them, a region lent within S of the last lent one prolongs
 * that spin by the time since (a try of openmp every few regions would
 * otherwise keep them spinning for good, beside a caller that runs the
 * regions alone); a spin the program's own OpenMP regions keep up (they
 * spun when we first lent, or still spin S after our last lent region)
 * is not ours, and a lend leaves nothing of its own there.  S: libomp reports its blocktime
 * (kmp_get_blocktime, 200 ms by default); libgomp spins GOMP_SPINCOUNT
 * times (300000 by default, none with OMP_WAIT_POLICY=passive) around a
 * pause instruction, whose cost is measured here, once
 * (docs/measurements.md, "Lent regions").  A runtime that spins for longer
 * than a second (OMP_WAIT_POLICY=active, KMP_BLOCKTIME=infinite) never
 * sleeps: its threads spin whatever the team does, and a lent region
 * leaves nothing of its own behind.
 *
 * Whether OpenMP's threads spin now (tt__lend_spinning), which picks the
 * lent way's constant (way.c): the process's threads other than the caller
 * and the team's workers used at least half a CPU since the last look.
 * How many CPUs they used goes to team.others_busy, which the idle rule
 * counts (idle.c, "Overcommitted"): the team's workers do not spin beside
 * OpenMP's spinners, each set taking the CPUs the other's next region
 * needs.  A look reads the CPU clock of each of those threads (a system
 * call each), listed from /proc/self/task at most every 100 ms and
 * whenever a thread of the list is gone, less the caller and the workers
 * (their clock ids copied at a look made with the team held, after a
 * region on it, when the workers cannot go away); not the process's
 * clock, which leaves out what a thread running elsewhere used since its
 * last tick.  It comes at most once a millisecond, and less often where
 * the clocks cost more than 1/TT__OVERHEAD_DIV of the time between looks;
 * from the process's first thread only, the one that lends, whose statics
 * these are. */
#include <dirent.h>
#include <pthread.h>
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

/* S, above: how long OpenMP's threads spin after a region, in ns; 0 when
 * there is no OpenMP runtime or it spins for longer than a second. */
static uint64_t spin_ns(void) {
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

/* The process's first thread's (the one that lends): S, measured once;
 * the end of its last lent region (0: none yet); whether OpenMP's threads
 * spin, as the last region's choice saw them; and whether that spin is
 * ours: they were seen asleep when a region of ours was lent, and have
 * not been seen asleep since, nor spinning S after our last lent region.
 * A spin the program's own OpenMP regions keep up is not ours, whatever
 * we lend meanwhile. */
static float spin = -1;
static uint64_t last_lent_end;
static bool seen_spinning, ours;

/* S, measured at its first use. */
static float spin_measured(void) {
  if (spin < 0)
    spin = (float)spin_ns();
  return spin;
}

float tt__lend_tail_ns(size_t p, bool spinning) {
  spin_measured();
  int max = omp_get_max_threads ? omp_get_max_threads() : 1;
  size_t n = max < 2 ? 1 : (size_t)max < p ? (size_t)max : p, cpus = tt__the_team.cpus;
  float tail = cpus ? spin * (float)(n - 1) / (float)cpus : 0;
  seen_spinning = spinning;
  if (!spinning) {
    ours = false;
    return tail;
  }
  if (!ours)
    return 0;
  /* spinning, ours: a lent region within S of the last one prolongs that
   * one's spin by the time since it */
  float since = last_lent_end ? (float)(tt__now_ns() - last_lent_end) : spin;
  if (since >= spin) {
    ours = false;
    return 0;
  }
  return tail * since / spin;
}

/* The longest window a look concludes from, in looks' intervals; how often
 * the list of the process's threads is read again (ns). */
#define LOOK_WINDOW 8
#define LIST_EVERY_NS 100000000u
#define MAX_OTHERS 64

/* Thread tid's CPU-time clock: the id pthread_getcpuclockid gives it on
 * Linux (the thread's id, negated, above the clock type "sched" and the
 * per-thread flag). */
static clockid_t tid_clock(long tid) {
  return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* The process's threads other than the caller (self) and the team's
 * workers (team[1..nteam)): /proc/self/task.  Their clocks into out;
 * how many, or -1 when the list cannot be read. */
static long list_others(clockid_t *out, clockid_t self, const clockid_t *team,
                        size_t nteam) {
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  long n = 0;
  for (struct dirent *e; n < MAX_OTHERS && (e = readdir(d)) != NULL;) {
    char *end;
    long tid = strtol(e->d_name, &end, 10);
    if (*end || tid <= 0)
      continue;
    clockid_t c = tid_clock(tid);
    bool mine = c == self;
    for (size_t i = 1; i < nteam && !mine; i++)
      mine = team[i] == c;
    if (!mine)
      out[n++] = c;
  }
  closedir(d);
  return n;
}

/* The interval between looks (tt__lend_spinning): at least 1 ms, more where
 * a look costs more than 1/TT__OVERHEAD_DIV of it. */
static uint64_t look_every = 1000000;

float tt__lend_pause_ns(void) {
  return spin_measured() > 0 ? spin + 2 * (float)look_every : 0;
}

bool tt__lend_spinning(bool held) {
  static uint64_t at, listed_at;
  static int64_t others_at;
  static bool spinning, listed;
  /* The workers' clocks, copied at a look made with the team held (the
   * workers cannot go away then); the other threads' clocks, from the
   * list read at most every LIST_EVERY_NS and when those change.  A clock
   * of a thread gone since reads 0: the list is read again, the window
   * starts again. */
  static clockid_t *clocks, others_clk[MAX_OTHERS], self;
  static size_t nclocks, cap;
  static long nothers;
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
    listed = false;
  }
  uint64_t now = tt__now_ns();
  if (now - at < look_every)
    return spinning;
  bool fresh = false;
  if (!listed || now - listed_at >= LIST_EVERY_NS) {
    if (!self && pthread_getcpuclockid(pthread_self(), &self) != 0)
      return spinning = false;
    nothers = list_others(others_clk, self, clocks, nclocks);
    listed = nothers >= 0;
    listed_at = now;
    fresh = true;
  }
  /* Each thread's own clock: exact, where the process's clock leaves out
   * what a thread running on another CPU used since its last tick (up to
   * 4 ms at HZ=250: in a window of 1 ms, more than the whole window, read
   * as OpenMP's threads spinning where the team's workers ran). */
  int64_t others = 0;
  for (long i = 0; i < nothers; i++) {
    uint64_t c = tt__clock_ns(others_clk[i]);
    if (!c)
      fresh = true, listed = false; /* gone: listed again at the next look */
    others += (int64_t)c;
  }
  uint64_t look = tt__now_ns() - now;
  look_every = look * TT__OVERHEAD_DIV > 1000000 ? look * TT__OVERHEAD_DIV : 1000000;
  /* a delta only between looks that read the same threads, and only over
   * a window of a few looks: one that spans a pause of the regions (the
   * host's own work, a nap) averages what OpenMP's threads did at its
   * start -- a spin that has since ended read as one going on, and a try
   * of openmp on that reading woke them for a spin of their own (libomp:
   * 200 ms).  A longer window starts again: nothing is concluded from it
   * (spinning false, others_busy 0) until the next look. */
  int64_t span = (int64_t)(now - at);
  bool recent = at && !fresh && span <= LOOK_WINDOW * (int64_t)look_every;
  int64_t used = recent ? others - others_at : 0;
  spinning = recent && used >= span / 2;
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
  bool timed;
  /* timed: the longest of the threads' parts, ns (each thread's chunks
   * from its start to its end; the join barrier orders the maxima before
   * the caller reads them) */
  _Atomic uint64_t longest;
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
  uint64_t t0 = L->timed ? tt__now_ns() : 0;
  TT__AS_PARTICIPANT(me, t, true, lent_chunks(L, t, n));
  if (L->timed) {
    uint64_t d = tt__now_ns() - t0, old = tt_atomic_load_relaxed(&L->longest);
    while (d > old && !tt_atomic_cas_weak_acq_rel(&L->longest, &old, d)) {
    }
  }
}

size_t tt__lend(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                tt__mode mode, uint64_t *longest_ns) {
  int max = omp_get_max_threads();
  size_t n = max < 2 ? 0 : (size_t)max < p ? (size_t)max : p;
  if (n == 0)
    return 0;
  lent L = {f, ctx, m, p, mode, 0, longest_ns != NULL, 0};
  /* No region of the team runs: a worker that ran a chunk of the last one
   * must not spin on for this one (protocol 2, 19); and OpenMP's n - 1
   * threads are busy now and spin after it: the team's workers count them
   * (idle.c, "Overcommitted") until the next look says otherwise. */
  tt_atomic_store_relaxed(&tt__the_team.running_gen, 0);
  tt_atomic_store_relaxed(&tt__the_team.others_busy, (uint32_t)(n - 1));
  if (!seen_spinning)
    ours = true; /* woken by this region */
  GOMP_parallel(lent_part, &L, (unsigned)n, 0);
  last_lent_end = tt__now_ns();
  if (longest_ns)
    *longest_ns = tt_atomic_load_relaxed(&L.longest);
  return n;
}
