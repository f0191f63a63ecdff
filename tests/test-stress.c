/* Stress test of the team.  This is not a benchmark: nothing here is timed
 * or compared, the clock only bounds how long each case runs.
 *
 * HOSTS host threads launch regions with random m and p (static m == p,
 * greedy m > p, m < p, m == 0) from fixed seeds, and chunks launch inner
 * regions of their own (which run serially: nesting) up to MAX_DEPTH levels.
 * Every launch counts the runs of each of its chunks (an atomic counter per
 * chunk) and checks, when tt_foreach_chunk returns, that each ran exactly
 * once, that the plain stamp each chunk wrote is visible to the caller (so
 * ThreadSanitizer checks the hand-off), and that the participants are
 * consistent: nested and serial regions run on participant 0, a parallel
 * static region runs chunk c on participant c or, when that participant
 * came late, on the caller (docs/protocol.md item 10), no chunk runs on a
 * participant the region does not have.  The cases differ in the team's
 * configuration (read at team start: each case shuts the team down, sets the
 * environment and restarts it, and Criterion runs each case in a process of
 * its own): the defaults, TEAMS_BUSY=wait, a team larger than the machine
 * (TEAMS_NUM_THREADS=8), workers that sleep as soon as they idle
 * (TEAMS_SPIN_US=0: a wake-up for nearly every region; also with two host
 * threads, which leave the team free more often), the sentinel
 * (TEAMS_IDLE=sentinel), and tt_foreach_range under every schedule.  Every
 * case but the default one runs its regions on the team's workers
 * (TEAMS_RUN=team): the way's choice (launcher/way.c) would run many of
 * these cheap regions on the caller alone, and the protocol is what they
 * stress; the default case lets it choose, so that regions on the caller
 * alone, which take no team, mix with the team's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "teams/team.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STRESS_MS 1000 /* sanitizers slow every launch down: fewer of them */
#else
#define STRESS_MS 2500
#endif
#define LIVENESS_MS 60000 /* see run_hosts */
#define HOSTS 8
#define MAX_M 40     /* chunks of one launch */
#define MAX_DEPTH 2  /* levels of launches inside chunks */
#define SEED UINT64_C(0x5eed0f7ea45)

/* ---- failures, from any thread ---------------------------------------------- */

static _Atomic unsigned long failures;
static _Atomic bool any_parallel; /* some launch ran a chunk off the caller */
static pthread_mutex_t failure_mu = PTHREAD_MUTEX_INITIALIZER;
static char first_failure[512];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  if (atomic_fetch_add(&failures, 1) != 0)
    return;
  pthread_mutex_lock(&failure_mu);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(first_failure, sizeof first_failure, fmt, ap);
  va_end(ap);
  pthread_mutex_unlock(&failure_mu);
}

static void expect_no_failure(void) {
  pthread_mutex_lock(&failure_mu);
  cr_assert_eq(atomic_load(&failures), 0, "%lu failures, the first: %s",
               atomic_load(&failures), first_failure);
  pthread_mutex_unlock(&failure_mu);
}

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- one launch and its checks ---------------------------------------------- */

/* A host's counts, updated also by the workers that run its chunks (nested
 * launches): relaxed atomics. */
typedef struct stats {
  _Atomic unsigned long launches, chunks, nested, parallel;
} stats;

#define COUNT(x, n) atomic_fetch_add_explicit(&(x), (n), memory_order_relaxed)

typedef struct launch {
  uint64_t seed;
  size_t m, p, size;
  int depth;
  stats *st;
  _Atomic unsigned runs[MAX_M];
  int part[MAX_M];       /* plain: written by the chunk, read by the caller */
  uint64_t stamp[MAX_M]; /* plain, ditto */
} launch;

static void run_one(uint64_t seed, int depth, size_t size, stats *st);

static void chunk(void *ctx, size_t c) {
  launch *L = ctx;
  if (c >= L->m) {
    fail("chunk %zu of a launch of %zu chunks", c, L->m);
    return;
  }
  atomic_fetch_add_explicit(&L->runs[c], 1, memory_order_relaxed);
  L->part[c] = tt_participant();
  L->stamp[c] = L->seed ^ c;
  uint64_t r = mix(L->seed + c);
  /* Uneven chunks, so participants interleave differently every time. */
  for (volatile unsigned i = 0; i < (unsigned)(r & 1023); i++)
    ;
  if (L->depth < MAX_DEPTH && (r >> 10) % 8 == 0)
    run_one(r >> 12, L->depth + 1, L->size, L->st);
}

/* Launch one region with parameters drawn from seed and check it. */
static void run_one(uint64_t seed, int depth, size_t size, stats *st) {
  launch L;
  uint64_t r = mix(seed);
  size_t m, p;
  switch (r % 8) {
  case 0: case 1: case 2: /* static: m == p, up to past the team's size */
    p = m = 1 + (r >> 8) % (size + 2);
    break;
  case 3: case 4: case 5: /* greedy: m > p */
    p = 1 + (r >> 8) % (size + 1);
    m = p + 1 + (r >> 16) % (MAX_M - p - 1);
    break;
  case 6: /* m < p: p is lowered to m */
    m = 1 + (r >> 8) % size;
    p = m + 1 + (r >> 16) % 3;
    break;
  default: /* nothing to run */
    m = 0;
    p = 1 + (r >> 8) % (size + 1);
    break;
  }
  if (m > MAX_M)
    m = p = MAX_M;
  L.seed = r;
  L.m = m;
  L.p = p;
  L.size = size;
  L.depth = depth;
  L.st = st;
  for (size_t c = 0; c < MAX_M; c++) {
    atomic_init(&L.runs[c], 0);
    L.part[c] = -2;
    L.stamp[c] = 0;
  }

  int rc = tt_foreach_chunk(chunk, &L, m, p);

  if (rc != 0)
    fail("tt_foreach_chunk(m %zu, p %zu) returned %d", m, p, rc);
  COUNT(st->launches, 1);
  COUNT(st->nested, depth > 0);
  bool all_placed = true, all_zero = true;
  size_t parts = p < size ? p : size;
  for (size_t c = 0; c < MAX_M; c++) {
    unsigned runs = atomic_load_explicit(&L.runs[c], memory_order_relaxed);
    if (c >= m) {
      if (runs != 0)
        fail("chunk %zu of %zu ran %u times", c, m, runs);
      continue;
    }
    if (runs != 1) {
      fail("depth %d, m %zu, p %zu: chunk %zu ran %u times", depth, m, p, c,
           runs);
      continue;
    }
    if (L.stamp[c] != (L.seed ^ c))
      fail("chunk %zu: its stamp is not visible to the caller", c);
    int who = L.part[c];
    if (who < 0 || (size_t)who >= parts)
      fail("m %zu, p %zu, team %zu: chunk %zu ran on participant %d", m, p,
           size, c, who);
    all_placed &= who == (int)c || who == 0;
    all_zero &= who == 0;
  }
  COUNT(st->chunks, m);
  if (m == 0)
    return;
  if ((depth > 0 || p == 1 || m == 1) && !all_zero)
    fail("a serial region (depth %d, m %zu, p %zu) ran off the caller", depth,
         m, p);
  if (m == p && p <= size && !all_placed)
    fail("static region of %zu: a chunk neither on its own participant nor "
         "on the caller", m);
  COUNT(st->parallel, !all_zero);
  if (!all_zero)
    atomic_store_explicit(&any_parallel, true, memory_order_relaxed);
}

/* ---- host threads ---------------------------------------------------------------- */

typedef struct host {
  pthread_t thread;
  unsigned id;
  size_t size;
  uint64_t deadline_ms, liveness_ms;
  void (*body)(struct host *, uint64_t seed);
  stats st;
} host;

static void chunk_body(host *h, uint64_t seed) {
  run_one(seed, 0, h->size, &h->st);
}

static void *host_main(void *arg) {
  host *h = arg;
  uint64_t seed = SEED * (h->id + 1);
  /* Check the clock every few launches: it bounds the run, nothing more. */
  do
    for (int i = 0; i < 16; i++)
      h->body(h, seed++);
  while (now_ms() < h->deadline_ms ||
         (!atomic_load(&any_parallel) && now_ms() < h->liveness_ms));
  return NULL;
}

static void run_hosts(void (*body)(host *, uint64_t), unsigned nhosts,
                      const char *what) {
  size_t size = tt_team_size();
  host hs[HOSTS];
  /* On the team's workers (TEAMS_RUN=team) some launch must run a chunk
   * off the caller, or the protocol was not stressed; but a region starts on
   * the caller at once and a worker joins what is left when it runs
   * (docs/protocol.md item 10), so on a loaded machine (the sanitizer builds
   * beside the other suites) a second of cheap regions can pass without a
   * worker arriving in time.  The hosts go on past STRESS_MS until one
   * did, up to LIVENESS_MS: a bound on a hang, not a timing.  Under the
   * default way the caller alone may be the better way for every one of
   * these regions: nothing is required of it. */
  const char *way = getenv("TEAMS_RUN");
  bool need_team = way && !strcmp(way, "team");
  atomic_store(&any_parallel, false);
  uint64_t deadline = now_ms() + STRESS_MS,
           liveness = need_team ? now_ms() + LIVENESS_MS : deadline;
  cr_assert_leq(nhosts, HOSTS);
  for (unsigned i = 0; i < nhosts; i++) {
    hs[i] = (host){.id = i, .size = size, .deadline_ms = deadline,
                   .liveness_ms = liveness, .body = body};
    cr_assert_eq(pthread_create(&hs[i].thread, NULL, host_main, &hs[i]), 0);
  }
  unsigned long launches = 0, chunks = 0, nested = 0, parallel = 0;
  for (unsigned i = 0; i < nhosts; i++) {
    pthread_join(hs[i].thread, NULL);
    launches += atomic_load(&hs[i].st.launches);
    chunks += atomic_load(&hs[i].st.chunks);
    nested += atomic_load(&hs[i].st.nested);
    parallel += atomic_load(&hs[i].st.parallel);
  }
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_log_info("%s, %u hosts: team %zu (busy %s, idle %s, spin %.0f us): %lu "
              "launches (%lu nested, %lu parallel), %lu chunks, %lu failures",
              what, nhosts, info.size, info.busy_wait ? "wait" : "serial",
              info.sentinel ? "sentinel" : "sleep", info.spin_us, launches,
              nested, parallel, chunks, atomic_load(&failures));
  expect_no_failure();
  cr_assert_gt(launches, 0);
  cr_assert_gt(nested, 0, "no chunk launched an inner region");
  if (need_team)
    cr_assert_gt(parallel, 0, "no launch ran a chunk off the caller in %d s",
                 LIVENESS_MS / 1000);
}

/* Restart the team with one variable of the environment set. */
static void restart_with(const char *name, const char *value) {
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(setenv(name, value, 1), 0);
  cr_assert_eq(tt_team_start(), 0);
}

/* ---- cases ------------------------------------------------------------------------- */

__attribute__((constructor)) static void team_way(void) {
  setenv("TEAMS_RUN", "team", 0);
}

Test(stress, default_configuration, .timeout = 300) {
  restart_with("TEAMS_RUN", "auto");
  run_hosts(chunk_body, HOSTS, "default");
}

Test(stress, busy_wait, .timeout = 300) {
  restart_with("TEAMS_BUSY", "wait");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.busy_wait, 1);
  run_hosts(chunk_body, HOSTS, "busy wait");
}

Test(stress, team_larger_than_the_machine, .timeout = 300) {
  restart_with("TEAMS_NUM_THREADS", "8");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.requested, 8);
  cr_assert_eq(info.size, 8, "degraded: %s", info.degraded ? info.degraded : "-");
  run_hosts(chunk_body, HOSTS, "8 participants");
}

Test(stress, larger_team_busy_wait, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "8", 1), 0);
  restart_with("TEAMS_BUSY", "wait");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.size, 8);
  cr_assert_eq(info.busy_wait, 1);
  run_hosts(chunk_body, HOSTS, "8 participants, busy wait");
}

Test(stress, workers_sleep_at_once, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  restart_with("TEAMS_SPIN_US", "0");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.spin_us, 0.0);
  run_hosts(chunk_body, HOSTS, "spin 0");
}

/* Two host threads leave the team free more often: many more regions reach
 * workers that have just gone to sleep. */
Test(stress, two_hosts_workers_sleep_at_once, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "3", 1), 0);
  restart_with("TEAMS_SPIN_US", "0");
  run_hosts(chunk_body, 2, "spin 0");
}

Test(stress, sentinel, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  cr_assert_eq(setenv("TEAMS_SPIN_US", "0", 1), 0);
  restart_with("TEAMS_IDLE", "sentinel");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.sentinel, 1);
  run_hosts(chunk_body, HOSTS, "sentinel, spin 0");
}

/* ---- tt_foreach_range under every schedule ------------------------------------ */

#define MAX_N 600

typedef struct range_launch {
  size_t n, grain;
  _Atomic unsigned runs[MAX_N];
  _Atomic unsigned bad_cuts;
} range_launch;

static void range_body_fn(void *ctx, size_t begin, size_t end) {
  range_launch *R = ctx;
  /* Subranges are multiples of grain except possibly the last. */
  if (begin >= end || end > R->n ||
      ((end - begin) % R->grain != 0 && end != R->n))
    atomic_fetch_add(&R->bad_cuts, 1);
  for (size_t i = begin; i < end && i < R->n; i++)
    atomic_fetch_add_explicit(&R->runs[i], 1, memory_order_relaxed);
}

static void range_body(host *h, uint64_t seed) {
  static const tt_schedule sched[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY,
                                      TT_SCHED_STEAL, TT_SCHED_AUTO};
  uint64_t r = mix(seed);
  range_launch *R = malloc(sizeof *R);
  if (!R) {
    fail("out of memory");
    return;
  }
  R->n = (r >> 8) % MAX_N; /* 0 included */
  R->grain = 1 + (r >> 20) % 17;
  size_t p = 1 + (r >> 30) % (h->size + 1);
  tt_schedule s = sched[r % 4];
  for (size_t i = 0; i < MAX_N; i++)
    atomic_init(&R->runs[i], 0);
  atomic_init(&R->bad_cuts, 0);
  int rc = tt_foreach_range(range_body_fn, R, R->n, R->grain, p, s);
  if (rc != 0)
    fail("tt_foreach_range(n %zu, grain %zu, p %zu, schedule %d) returned %d",
         R->n, R->grain, p, (int)s, rc);
  if (atomic_load(&R->bad_cuts))
    fail("tt_foreach_range(n %zu, grain %zu, schedule %d): %u subranges not "
         "cut at multiples of the grain", R->n, R->grain, (int)s,
         atomic_load(&R->bad_cuts));
  for (size_t i = 0; i < MAX_N; i++) {
    unsigned runs = atomic_load(&R->runs[i]);
    if (runs != (i < R->n)) {
      fail("tt_foreach_range(n %zu, grain %zu, p %zu, schedule %d): index "
           "%zu ran %u times", R->n, R->grain, p, (int)s, i, runs);
      break;
    }
  }
  COUNT(h->st.launches, 1);
  COUNT(h->st.chunks, R->n);
  free(R);
  /* Interleave chunk launches with nesting, so both paths share the team. */
  run_one(seed ^ 0xabcdefull, 0, h->size, &h->st);
}

Test(stress, ranges_every_schedule, .timeout = 300) {
  cr_assert_eq(tt_team_start(), 0);
  run_hosts(range_body, HOSTS, "ranges");
}

/* ---- the sentinel's delegated wake-ups ---------------------------------------- */

/* Static regions back to back on a team of 3 whose workers sleep as soon as
 * they idle, in sentinel mode: nearly every region finds one worker asleep
 * and leaves its wake-up to the sentinel, while the other worker, just done
 * with its chunk, claims the sentinel role.  A region whose wake-up is lost
 * waits forever for its sleeping worker; the watchdog then reports it (no
 * region finished for WATCHDOG_S seconds: a hang, not a slow machine).
 * The window is a few instructions wide (the claimant's CAS on
 * team.sentinel_id and its load of team.wake_seq must straddle the holder's
 * fetch_add of wake_seq), so this runs longer than the other cases.  On the
 * 2-core development machine team.c as of b020297 hung here in 1 of 4 runs
 * of the plain build and in every ASan and TSan run (after 300 to 120000
 * regions); tests/model-check.sh shows the interleaving every time. */
#define WATCHDOG_S 20

static _Atomic unsigned long regions_done;
static _Atomic int watchdog_stop;

static void *watchdog(void *arg) {
  unsigned long last = atomic_load(&regions_done);
  for (int quiet_ms = 0; !atomic_load(&watchdog_stop);) {
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
    unsigned long now = atomic_load(&regions_done);
    quiet_ms = now == last ? quiet_ms + 100 : 0;
    last = now;
    if (quiet_ms >= WATCHDOG_S * 1000) {
      fprintf(stderr,
              "[FAIL] sentinel: a static region has waited %d s after %lu "
              "regions: its sleeping worker was never woken (lost wake-up)\n",
              WATCHDOG_S, now);
      fflush(stderr);
      _exit(1);
    }
  }
  return arg;
}

static void count_once(void *ctx, size_t c) {
  atomic_fetch_add_explicit(&((_Atomic unsigned *)ctx)[c], 1,
                            memory_order_relaxed);
}

Test(stress, sentinel_static_regions_back_to_back, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "3", 1), 0);
  cr_assert_eq(setenv("TEAMS_SPIN_US", "0", 1), 0);
  restart_with("TEAMS_IDLE", "sentinel");
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.sentinel, 1);
  cr_assert_eq(info.size, 3);
  pthread_t dog;
  cr_assert_eq(pthread_create(&dog, NULL, watchdog, NULL), 0);
  uint64_t r = SEED, deadline = now_ms() + 4 * STRESS_MS;
  unsigned long bad = 0;
  do {
    for (int i = 0; i < 256; i++) {
      _Atomic unsigned runs[3] = {0, 0, 0};
      r = mix(r);
      size_t p = 2 + (r & 1);
      cr_assert_eq(tt_foreach_chunk(count_once, runs, p, p), 0);
      for (size_t c = 0; c < 3; c++)
        bad += atomic_load(&runs[c]) != (c < p);
      atomic_fetch_add(&regions_done, 1);
    }
  } while (now_ms() < deadline);
  atomic_store(&watchdog_stop, 1);
  pthread_join(dog, NULL);
  cr_log_info("sentinel, static regions back to back: %lu regions",
              atomic_load(&regions_done));
  cr_assert_eq(bad, 0, "%lu chunks not run exactly once", bad);
}
