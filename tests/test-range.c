/* Tests of tt_foreach_range and its schedules on the real team (range.c).
 *
 * range.*: multiple host threads, random sizes and grains with fixed seeds,
 * counting every index; forced steals, the auto policy, a pinned team's
 * victim orders.  These stress tests are not benchmarks: they assert no
 * timings and print none.  tests/test-steal.c simulates the steal state
 * machine itself, one thief at a time.  WHITEBOX in
 * tests/CMakeLists.txt: linked with teams_whitebox for the internal functions. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "range.h"
#include "prim.h"
#include "teams-driver.h"
#include "team-internal.h"
#include "teams/errors.h"
#include "teams/team.h"
#include "team-util.h"
#include "topology-view.h"
#include "dealt-util.h"

typedef struct counts {
  size_t n, grain;
  _Atomic unsigned *hits;
  atomic_int bad; /* a subrange that breaks the contract */
  unsigned spin_mod; /* uneven work: index i spins (i % spin_mod) times */
} counts;

static void count_f(void *ctx, size_t begin, size_t end) {
  counts *c = ctx;
  if (begin >= end || end > c->n || begin % c->grain != 0 ||
      ((end - begin) % c->grain != 0 && end != c->n))
    atomic_store(&c->bad, 1);
  for (size_t i = begin; i < end && i < c->n; i++) {
    if (c->spin_mod)
      for (volatile unsigned k = 0; k < (unsigned)(i % c->spin_mod); k++)
        ;
    atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
  }
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64*, fixed seeds */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Runs `iters` random loops (sizes, grains, p, schedules from seed) and
 * checks every index ran exactly once in subranges that keep the contract. */
static void random_loops(uint64_t seed, int iters) {
  uint64_t s = seed;
  size_t cap = 20000;
  _Atomic unsigned *hits = calloc(cap, sizeof *hits);
  cr_assert_not_null(hits);
  for (int it = 0; it < iters; it++) {
    size_t n = (size_t)(rng_next(&s) % cap);
    if (it % 7 == 0)
      n %= 40; /* many tiny ranges too */
    size_t grain = 1 + (size_t)(rng_next(&s) % (it % 3 == 0 ? 200 : 17));
    size_t p = 1 + (size_t)(rng_next(&s) % 5);
    tt_schedule sched = (tt_schedule)(rng_next(&s) % 4);
    for (size_t i = 0; i < n; i++)
      atomic_store_explicit(&hits[i], 0, memory_order_relaxed);
    counts c = {n, grain, hits, 0, (unsigned)(rng_next(&s) % 3) * 64};
    int rc = tt_foreach_range(count_f, &c, n, grain, p, sched);
    cr_assert_eq(rc, 0, "seed %llu iter %d: rc %d",
                 (unsigned long long)seed, it, rc);
    cr_assert_eq(atomic_load(&c.bad), 0,
                 "seed %llu iter %d: a subrange broke the grain contract "
                 "(n %zu grain %zu p %zu schedule %d)",
                 (unsigned long long)seed, it, n, grain, p, (int)sched);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(atomic_load_explicit(&hits[i], memory_order_relaxed), 1,
                   "seed %llu iter %d: index %zu of %zu ran %u times "
                   "(grain %zu p %zu schedule %d)",
                   (unsigned long long)seed, it, i, n, hits[i], grain, p,
                   (int)sched);
  }
  free(hits);
}

Test(range, exactly_once_random_sizes_and_grains) {
  random_loops(0x5eed0001ull, 400);
  random_loops(0x5eed0002ull, 400);
}

Test(range, exactly_once_steal_only) {
  uint64_t s = 0x5eed00aaull;
  size_t cap = 50000;
  _Atomic unsigned *hits = calloc(cap, sizeof *hits);
  for (int it = 0; it < 200; it++) {
    size_t n = 1 + (size_t)(rng_next(&s) % cap);
    size_t grain = 1 + (size_t)(rng_next(&s) % 64);
    for (size_t i = 0; i < n; i++)
      hits[i] = 0;
    counts c = {n, grain, hits, 0, it % 2 ? 256 : 0};
    cr_assert_eq(tt_foreach_range(count_f, &c, n, grain, 8, TT_SCHED_STEAL), 0);
    cr_assert_eq(atomic_load(&c.bad), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(hits[i], 1, "iter %d index %zu ran %u times", it, i,
                   hits[i]);
    tt_steal_stats st;
    cr_assert_eq(tt_steal_last_stats(&st), 0);
    size_t grains = n / grain + (n % grain != 0);
    if (grains >= 2 && tt_team_size() >= 2) { /* else serial: no region */
      cr_assert_eq(st.units, grains);
      /* A thief republishes what it took, and another may take it again:
       * an index can move more than once, so moved may exceed n (it did on
       * 16 CPUs), but every steal moves at least one index and at most n. */
      cr_assert_eq(st.steals == 0, st.moved == 0);
      cr_assert_geq(st.moved, st.steals);
      cr_assert_leq(st.moved, (uint64_t)n * st.steals);
      cr_assert_geq(st.joined, 1);
    }
  }
  free(hits);
}

static void *host_thread(void *arg) {
  random_loops((uint64_t)(uintptr_t)arg, 150);
  return NULL;
}

Test(range, exactly_once_from_several_host_threads) {
  /* the threads share the one team: whoever holds it runs parallel, the
   * others run serially (busy rule); every index still runs exactly once */
  pthread_t th[3];
  for (uintptr_t i = 0; i < 3; i++)
    cr_assert_eq(pthread_create(&th[i], NULL, host_thread,
                                (void *)(0x5eed1000u + i)),
                 0);
  random_loops(0x5eed2000ull, 150);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
}

typedef struct nest {
  counts inner;
  atomic_int failed;
} nest;

static void outer_f(void *ctx, size_t begin, size_t end) {
  nest *ns = ctx;
  for (size_t i = begin; i < end; i++) {
    /* each outer index runs the inner range's slice [i*10, i*10+10) */
    counts *c = &ns->inner;
    counts sub = *c;
    sub.hits = c->hits + i * 10;
    sub.n = 10;
    if (tt_foreach_range(count_f, &sub, 10, 3, 4, TT_SCHED_STEAL) != 0 ||
        atomic_load(&sub.bad))
      atomic_store(&ns->failed, 1);
  }
}

Test(range, nested_ranges_run_serially_and_exactly_once) {
  _Atomic unsigned *hits = calloc(1000, sizeof *hits);
  nest ns = {{1000, 1, hits, 0, 0}, 0};
  cr_assert_eq(tt_foreach_range(outer_f, &ns, 100, 1, 4, TT_SCHED_STEAL), 0);
  cr_assert_eq(atomic_load(&ns.failed), 0);
  for (size_t i = 0; i < 1000; i++)
    cr_assert_eq(hits[i], 1);
  free(hits);
}

static void noop_f(void *ctx, size_t b, size_t e) {
  (void)ctx, (void)b, (void)e;
}

Test(range, bad_inputs_return_codes_and_leave_the_team_usable) {
  tt_steal_stats before, after;
  _Atomic unsigned hits[100] = {0};
  counts c = {100, 1, hits, 0, 0};
  cr_assert_eq(tt_foreach_range(count_f, &c, 100, 7, 2, TT_SCHED_STEAL), 0);
  cr_assert_eq(tt_steal_last_stats(&before), 0);
  cr_expect_eq(tt_foreach_range(NULL, NULL, 10, 1, 2, TT_SCHED_STEAL), TT_EINVAL);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, 10, 1, 0, TT_SCHED_STEAL), TT_EINVAL);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, 10, 1, 2, (tt_schedule)17), TT_EINVAL);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, 10, 1, 2, (tt_schedule)-1), TT_EINVAL);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, SIZE_MAX, 1, 2, TT_SCHED_STEAL),
               TT_EOVERFLOW);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, SIZE_MAX - 10, 11, 2, TT_SCHED_AUTO),
               TT_EOVERFLOW);
  cr_expect_eq(tt_foreach_range(noop_f, NULL, 0, 1, 2, TT_SCHED_STEAL), 0);
  cr_expect_eq(tt_steal_last_stats(NULL), TT_EINVAL);
  cr_assert_eq(tt_steal_last_stats(&after), 0);
  cr_expect_arr_eq(&before, &after, sizeof before, "failed calls ran no region");
  /* still usable: every schedule runs every index once */
  for (int sch = 0; sch < 4; sch++) {
    for (size_t i = 0; i < 100; i++)
      hits[i] = 0;
    cr_assert_eq(tt_foreach_range(count_f, &c, 100, 3, 2, (tt_schedule)sch), 0);
    for (size_t i = 0; i < 100; i++)
      cr_assert_eq(hits[i], 1);
  }
  /* and the team too */
  cr_expect_eq(tt_foreach_chunk(NULL, NULL, 4, 2), TT_EINVAL);
}

/* Participant 1 may not finish its own block before someone stole from it:
 * a steal is forced without relying on timing. */
typedef struct forced {
  atomic_int stolen;
  _Atomic unsigned hits[64];
} forced;

static void forced_f(void *ctx, size_t begin, size_t end) {
  forced *fo = ctx;
  for (size_t i = begin; i < end; i++) {
    int me = tt_participant();
    if (i >= 32 && me != 1)
      atomic_store(&fo->stolen, 1);
    if (i >= 32 && me == 1)
      while (!atomic_load(&fo->stolen))
        sched_yield();
    atomic_fetch_add(&fo->hits[i], 1);
  }
}

Test(range, a_thief_steals_from_a_busy_owner) {
  if (tt_team_size() < 2)
    cr_skip_test("needs a team of two");
  for (int rep = 0; rep < 20; rep++) {
    forced fo;
    memset(&fo, 0, sizeof fo);
    cr_assert_eq(tt_foreach_range(forced_f, &fo, 64, 1, 2, TT_SCHED_STEAL), 0);
    for (int i = 0; i < 64; i++)
      cr_assert_eq(fo.hits[i], 1);
    tt_steal_stats st;
    tt_steal_last_stats(&st);
    cr_expect_geq(st.steals, 1, "rep %d: someone stole from block 1", rep);
    cr_expect_geq(st.moved, 1);
    cr_expect_eq(st.units, 64);
    cr_expect(st.joined == 1 || st.joined == 2);
    if (st.joined == 1)
      cr_expect_eq(st.rescues, 1, "the caller rescued the absent owner's block");
    cr_expect_eq(st.moved_cross_node, 0, "unpinned: cross counts unknown");
  }
}

static void sleepy_f(void *ctx, size_t b, size_t e) {
  (void)ctx, (void)b, (void)e;
  usleep(100); /* at least 100 us per call */
}

static void quick_f(void *ctx, size_t b, size_t e) {
  (void)ctx, (void)b, (void)e;
}

/* Whether the last region stole with this many units: tt_steal_last_stats
 * keeps the last steal region's counters, so a static region leaves the
 * marker's (a steal region of MARKER units) in place. */
#define MARKER 7
static void marker(void) {
  cr_assert_eq(tt_foreach_range(quick_f, NULL, MARKER, 1, 2, TT_SCHED_STEAL), 0);
}
static int stole_with_units(size_t units) {
  tt_steal_stats st;
  tt_steal_last_stats(&st);
  return st.units == units;
}

Test(range, auto_steals_unknown_loops_then_learns_their_length) {
  tt_steal_stats st;
  tt_steal_last_stats(&st);
  cr_assert_eq(st.units, 0, "no steal region yet in this process");
  if (tt_team_size() < 2)
    cr_skip_test("one participant: every range runs serially");
  /* a short range (fewer than 4 grains per participant) is always greedy */
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 3, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 3, 1, 2, TT_SCHED_AUTO), 0);
  tt_steal_last_stats(&st);
  cr_assert_eq(st.units, 0);
  /* a loop auto has not seen steals (one unit per grain below the cap) */
  cr_assert_eq(tt_foreach_range(quick_f, NULL, 100, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert(stole_with_units(100), "an unknown loop steals");
  /* an empty f over 100 units takes a few us, under auto's 25 us: greedy
   * from then on.  A loaded machine may stretch a region past 25 us, so
   * this waits (boundedly) for one short region rather than timing one. */
  int went_greedy = 0;
  for (int k = 0; k < 200 && !went_greedy; k++) {
    marker();
    cr_assert_eq(tt_foreach_range(quick_f, NULL, 100, 1, 2, TT_SCHED_AUTO), 0);
    went_greedy = stole_with_units(MARKER);
  }
  cr_assert(went_greedy, "a loop whose regions are short never stopped stealing");
  /* sleepy_f sleeps >= 100 us per unit: unknown, it steals; long, it keeps
   * stealing */
  marker();
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 90, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert(stole_with_units(90), "another unknown loop steals");
  marker();
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 90, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert(stole_with_units(90), "a loop whose last region was long steals");
  /* units are coarsened to <= 64 per participant */
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 512, 1, 2, TT_SCHED_AUTO), 0);
  tt_steal_last_stats(&st);
  cr_expect_gt(st.units, 0);
  cr_expect_leq(st.units, 128);
}

/* spans_f: records each call's subrange (O(1) a call, so that the loop
 * stays short under the sanitizers too); spans_cover checks them. */
#define SPANS_N 100
static size_t spans[SPANS_N][2];
static _Atomic unsigned spans_n;
static void spans_f(void *ctx, size_t begin, size_t end) {
  (void)ctx;
  unsigned k = atomic_fetch_add_explicit(&spans_n, 1, memory_order_relaxed);
  if (k < SPANS_N) {
    spans[k][0] = begin;
    spans[k][1] = end;
  }
}
/* Every index of [0, n) in exactly one recorded subrange. */
static void spans_cover(size_t n) {
  static unsigned char seen[SPANS_N];
  unsigned calls = atomic_load(&spans_n);
  cr_assert_leq(calls, SPANS_N);
  memset(seen, 0, sizeof seen);
  for (unsigned k = 0; k < calls; k++)
    for (size_t i = spans[k][0]; i < spans[k][1] && i < n; i++)
      seen[i]++;
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(seen[i], 1, "index %zu ran %u times", i, (unsigned)seen[i]);
}

Test(range, auto_short_loop_runs_coarse_greedy_chunks) {
  if (tt_team_size() < 2)
    cr_skip_test("one participant: every range runs serially");
  const size_t n = SPANS_N;
  /* Regions until one ran greedy (no steal stats since the marker): a
   * loaded machine may stretch a region past the thresholds either way. */
  int went_greedy = 0;
  unsigned calls = 0;
  for (int k = 0; k < 200 && !went_greedy; k++) {
    marker();
    atomic_store(&spans_n, 0);
    cr_assert_eq(tt_foreach_range(spans_f, NULL, n, 1, 2, TT_SCHED_AUTO), 0);
    calls = atomic_load(&spans_n);
    went_greedy = stole_with_units(MARKER);
    spans_cover(n);
  }
#if defined(__SANITIZE_THREAD__)
  if (!went_greedy) /* every access instrumented: regions of 100 calls */
    cr_skip_test("no region of the loop ran under auto's 25 us here");
#endif
  cr_assert(went_greedy, "a loop whose regions are short never stopped stealing");
  cr_expect_geq(calls, 1);
  cr_expect_leq(calls, 25, "%u calls for a short loop of %zu", calls, n);
}

static void busy_range(void *ctx, size_t begin, size_t end) {
  (void)begin;
  (void)end;
  atomic_fetch_add((_Atomic unsigned *)ctx, 1);
  uint64_t until = tt__now_ns() + 20000;
  while (tt__now_ns() < until)
    ;
}

/* A range of one grain runs on the caller, and its record keeps its time
 * (the driver runs a one-work-group launch at submit by it), as a range
 * over the team does; the look takes no record and makes none. */
Test(range, one_grain_keeps_its_time) {
  _Atomic unsigned runs = 0;
  cr_assert_eq(tt__foreach_range_last_ns((const void *)busy_range, 1, 1, 2,
                                         TT_SCHED_AUTO), 0, "no record yet");
  cr_assert_eq(tt_foreach_range(busy_range, (void *)&runs, 1, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert_eq(atomic_load(&runs), 1);
  uint64_t ns = tt__foreach_range_last_ns((const void *)busy_range, 1, 1, 2,
                                          TT_SCHED_AUTO);
  cr_assert_geq(ns, 20000, "the one grain's region: %llu ns", (unsigned long long)ns);
  /* one participant asked: the same record (one grain either way) */
  cr_assert_eq(tt__foreach_range_last_ns((const void *)busy_range, 1, 1, 1,
                                         TT_SCHED_AUTO), ns);
  for (int i = 0; i < 100; i++)
    cr_assert_eq(tt_foreach_range(busy_range, (void *)&runs, 1, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert_eq(atomic_load(&runs), 101);
  cr_assert_gt(tt__foreach_range_last_ns((const void *)busy_range, 1, 1, 2,
                                         TT_SCHED_AUTO), 0);
}

Test(range, pinned_team_installs_orders) {
  setenv("TEAMS_PIN", "cores", 1);
  cr_assert_eq(tt_team_start(), 0);
  size_t size = tt_team_size();
  const tt__topo *s = tt__topology_current();
  if (size >= 2) {
    cr_assert_not_null(s, "TEAMS_PIN=cores publishes a snapshot");
    cr_expect_eq(s->n, size);
    if (s->pinned) {
      cr_expect(s->ordered);
      cr_expect_eq(tt__participant_cpu(0), s->cpu[0], "the starting thread");
      for (size_t i = 1; i < size; i++)
        cr_expect_eq(tt__participant_cpu(i), s->cpu[i]);
    }
  }
  _Atomic unsigned *hits = calloc(10000, sizeof *hits);
  counts c = {10000, 13, hits, 0, 128};
  for (int rep = 0; rep < 20; rep++) {
    for (size_t i = 0; i < c.n; i++)
      hits[i] = 0;
    cr_assert_eq(tt_foreach_range(count_f, &c, c.n, c.grain, size,
                                  TT_SCHED_STEAL),
                 0);
    for (size_t i = 0; i < c.n; i++)
      cr_assert_eq(hits[i], 1);
  }
  free(hits);
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_expect_null(tt__topology_current(), "shutdown unpublishes the snapshot");
}

/* The deal reaches the schedules (tests/dealt-util.h): on a team of two
 * with the hand-made placement, participant 1 must run the first half of a
 * static range and participant 0 the second, the prefix deal is computed
 * once per thread and p, and a steal range still runs every index once.
 * TEAMS_RUN=team: the way's choice may run a cheap range on the caller alone. */
/* Who ran each index.  The caller's block waits until every block began:
 * both participants come in time, so each runs its own block (the caller
 * takes over only a block whose participant has not begun when its own is
 * done, docs/protocol.md item 10). */
typedef struct who_rec {
  int *who;
  _Atomic int begun;
} who_rec;
static void who_f(void *ctx, size_t b, size_t e) {
  who_rec *w = ctx;
  atomic_fetch_add(&w->begun, 1);
  while (tt_participant() == 0 && atomic_load(&w->begun) < 2)
    sched_yield();
  for (size_t i = b; i < e; i++)
    w->who[i] = tt_participant();
}

Test(range, static_and_steal_follow_the_deal) {
  setenv("TEAMS_RUN", "team", 1);
  setenv("TEAMS_NUM_THREADS", "2", 1);
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  cr_assert_eq(tt_team_size(), 2);
  dealt_topo dt;
  dealt_install(&dt);

  const uint32_t *o3 = NULL, *o2 = NULL;
  cr_expect_eq(tt__range_deal(3, &o3), dt.block, "p == n: the snapshot's");
  cr_expect_eq(o3, dt.owner);
  uint32_t *d2 = (uint32_t *)tt__range_deal(2, &o2);
  cr_assert_not_null(d2, "the prefix of two participants is dealt");
  cr_expect(d2[0] == 1 && d2[1] == 0 && o2[0] == 1 && o2[1] == 0);
  d2[0] = 7; /* a second call must not deal again */
  cr_expect_eq(tt__range_deal(2, NULL), d2);
  cr_expect_eq(d2[0], 7, "the prefix is cached");
  d2[0] = 1;
  o2 = d2;
  cr_expect_null(tt__range_deal(1, &o2), "one participant: the identity");
  cr_expect_null(o2, "... and no owner table");

  size_t n = 1000;
  int *who = malloc(n * sizeof *who);
  who_rec w = {who, 0};
  for (int rep = 0; rep < 20; rep++) {
    for (size_t i = 0; i < n; i++)
      who[i] = -1;
    atomic_store(&w.begun, 0);
    cr_assert_eq(tt_foreach_range(who_f, &w, n, 0, 2, TT_SCHED_STATIC), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(who[i], i < n / 2 ? 1 : 0, "rep %d index %zu", rep, i);
  }
  _Atomic unsigned *hits = calloc(n, sizeof *hits);
  counts c = {n, 7, hits, 0, 128};
  for (int rep = 0; rep < 20; rep++) {
    for (size_t i = 0; i < n; i++)
      hits[i] = 0;
    cr_assert_eq(tt_foreach_range(count_f, &c, n, 7, 2, TT_SCHED_STEAL), 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(hits[i], 1, "rep %d index %zu", rep, i);
  }
  dealt_remove(&dt);
  free(hits);
  free(who);
}

/* ---- tt__foreach_range_on: a range on a span of participants ------------- */

typedef struct on_rec {
  size_t n, grain, first, count, grains;
  int stat; /* static: index i on participant first + its block */
  _Atomic unsigned *hits;
  _Atomic int *who;
  atomic_int bad;
} on_rec;

static void on_f(void *ctx, size_t begin, size_t end) {
  on_rec *r = ctx;
  int me = tt_participant();
  if (begin >= end || end > r->n || begin % r->grain != 0 ||
      me < (int)r->first || me >= (int)(r->first + r->count))
    atomic_store(&r->bad, 1);
  for (size_t i = begin; i < end && i < r->n; i++) {
    atomic_fetch_add_explicit(&r->hits[i], 1, memory_order_relaxed);
    atomic_store_explicit(&r->who[i], me, memory_order_relaxed);
  }
}

/* Every span of participants of a 6-participant team, every schedule: each
 * index once, only on the span's participants; with check_order, static
 * blocks in order (TEAMS_RUN=team: a run on the caller alone, when the busy
 * rule makes one, has its blocks run by the rounds in another order). */
static void members_only(int check_order) {
  setenv("TEAMS_NUM_THREADS", "6", 1);
  cr_assert_eq(tt_team_size(), 6);
  size_t cap = 3000;
  _Atomic unsigned *hits = calloc(cap, sizeof *hits);
  _Atomic int *who = calloc(cap, sizeof *who);
  uint64_t s = 0x5eed0001;
  for (size_t first = 0; first < 6; first++)
    for (size_t count = 1; first + count <= 6; count++)
      for (int sch = 0; sch < 4; sch++) {
        size_t n = 1 + (size_t)(rng_next(&s) % cap);
        size_t grain = sch == 0 ? 1 : (size_t)(rng_next(&s) % 9);
        on_rec r = {n, grain ? grain : 1, first, count, 0, sch == 0,
                    hits, who, 0};
        for (size_t i = 0; i < n; i++)
          hits[i] = 0;
        cr_assert_eq(tt__foreach_range_on(on_f, &r, n, grain, first, count,
                                          (tt_schedule)sch, 1),
                     0);
        if (grain == 0) /* greedy's default: whole grains */
          r.grain = tt__range_default_grain(TT_SCHED_GREEDY, n, count);
        cr_assert_eq(atomic_load(&r.bad), 0,
                     "[%zu, %zu) schedule %d: a subrange off the run", first,
                     first + count, sch);
        for (size_t i = 0; i < n; i++)
          cr_assert_eq(hits[i], 1, "index %zu ran %u times", i, hits[i]);
        if (sch == 0 && check_order)
          for (size_t k = 0; k < count; k++) {
            size_t b, e;
            tt__block(n, count, k, &b, &e);
            for (size_t i = b; i < e; i++)
              cr_assert_eq(who[i], (int)(first + k),
                           "static: index %zu on %d, block of %zu", i,
                           (int)who[i], first + k);
          }
      }
  free(hits);
  free(who);
}

Test(range_on, members_only_exactly_once) { members_only(0); }

Test(range_on, members_only_static_blocks_in_order) {
  setenv("TEAMS_RUN", "team", 1);
  members_only(1);
}

/* A second thread holds the team: a run without participant 0 cannot run
 * (TT_EBUSY without wait, nothing ran), the caller alone as participant 0
 * can; with wait the call runs the range once the team is free. */

typedef struct waiter {
  on_rec *r;
  int rc;
} waiter;

static void *wait_main(void *arg) {
  waiter *w = arg;
  w->rc = tt__foreach_range_on(on_f, w->r, 50, 1, 1, 2, TT_SCHED_GREEDY, 1);
  return NULL;
}

Test(range_on, busy_team_runs_nothing) {
  setenv("TEAMS_NUM_THREADS", "3", 1);
  cr_assert_eq(tt_team_size(), 3);
  hold_team h = {0, 0};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, hold_team_main, &h), 0);
  while (!atomic_load(&h.started))
    sched_yield();
  _Atomic unsigned hits[50] = {0};
  _Atomic int who[50];
  on_rec r = {50, 1, 1, 2, 0, 0, hits, who, 0};
  cr_assert_eq(tt__foreach_range_on(on_f, &r, 50, 1, 1, 2, TT_SCHED_GREEDY, 0),
               TT_EBUSY);
  for (size_t i = 0; i < 50; i++)
    cr_assert_eq(hits[i], 0, "index %zu ran on a held team", i);
  on_rec r0 = {50, 1, 0, 1, 0, 0, hits, who, 0};
  cr_assert_eq(tt__foreach_range_on(on_f, &r0, 50, 1, 0, 1, TT_SCHED_STATIC, 0),
               0);
  for (size_t i = 0; i < 50; i++)
    cr_assert_eq(hits[i], 1);
  /* with wait, a second thread's call runs nothing while the team is held
   * and all of it once it is free */
  for (size_t i = 0; i < 50; i++)
    hits[i] = 0;
  waiter wt = {&r, 1};
  pthread_t tw;
  cr_assert_eq(pthread_create(&tw, NULL, wait_main, &wt), 0);
  for (int k = 0; k < 1000; k++)
    sched_yield();
  for (size_t i = 0; i < 50; i++)
    cr_assert_eq(hits[i], 0, "index %zu ran on a held team", i);
  atomic_store(&h.release, 1);
  pthread_join(t, NULL);
  pthread_join(tw, NULL);
  cr_assert_eq(wt.rc, 0);
  cr_assert_eq(atomic_load(&r.bad), 0);
  for (size_t i = 0; i < 50; i++)
    cr_assert_eq(hits[i], 1);
}

static void nested_on(void *ctx, size_t c) {
  atomic_int *rc = ctx;
  (void)c;
  atomic_store(rc, tt__foreach_range_on(noop_f, NULL, 10, 1, 0, 2,
                                        TT_SCHED_STATIC, 1));
}

Test(range_on, bad_inputs) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  cr_assert_eq(tt__foreach_range_on(NULL, NULL, 10, 1, 0, 2, TT_SCHED_STATIC, 0),
               TT_EINVAL);
  cr_assert_eq(tt__foreach_range_on(noop_f, NULL, 10, 1, 0, 0, TT_SCHED_STATIC, 0),
               TT_EINVAL);
  cr_assert_eq(tt__foreach_range_on(noop_f, NULL, 10, 1, 0, 2, (tt_schedule)9, 0),
               TT_EINVAL);
  cr_assert_eq(tt__foreach_range_on(noop_f, NULL, 10, 1, 1, 2, TT_SCHED_STATIC, 0),
               TT_ERANGE);
  cr_assert_eq(tt__foreach_range_on(noop_f, NULL, SIZE_MAX, 1, 0, 2,
                                    TT_SCHED_STATIC, 0),
               TT_EOVERFLOW);
  cr_assert_eq(tt__foreach_range_on(noop_f, NULL, 0, 1, 1, 1, TT_SCHED_STATIC, 0),
               0);
  atomic_int rc = 1;
  cr_assert_eq(tt_foreach_chunk(nested_on, &rc, 1, 1), 0);
  cr_assert_eq(atomic_load(&rc), TT_ENOSYS);
}
