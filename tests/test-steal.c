/* Tests of tt_foreach_range and the steal schedule.
 *
 * Two kinds:
 *  - sim.*: a deterministic, single-threaded simulation of the steal state
 *    machine.  A region is built by hand (steal.h) with the victim orders of
 *    a synthetic machine installed, blocks and owner states preset, and one
 *    participant's loop run on the test thread; the other owners never run,
 *    so every choice the thief makes shows in the order f sees the indices.
 *    Each locality test also runs the same scene with a cyclic order and
 *    checks that the property then does not hold, so it can fail.
 *  - range.*: the real team, multiple host threads, random sizes and grains
 *    with fixed seeds, counting every index.  These stress tests are not
 *    benchmarks: they assert no timings and print none.
 * Linked with teams_static (tests/internal.cmake) for the internal functions. */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "steal.h"
#include "team-internal.h"
#include "teams/errors.h"
#include "teams/team.h"
#include "topology-view.h"

/* ======================= simulation of one thief ========================== */

#define SIM_MAX_LOG 4096

typedef struct sim {
  tt__steal_region r;
  tt__steal_slot *slots;
  size_t p, per, n;
  unsigned char hits[SIM_MAX_LOG];
  size_t log[SIM_MAX_LOG]; /* begin of every call of f, in order */
  size_t nlog;
  /* hook: the first time an index of block hook_block runs, call hook */
  size_t hook_block;
  int hook_done;
  void (*hook)(struct sim *);
} sim;

static void sim_f(void *ctx, size_t begin, size_t end) {
  sim *s = ctx;
  cr_assert_lt(begin, end);
  cr_assert_leq(end, s->n);
  cr_assert_lt(s->nlog, SIM_MAX_LOG);
  s->log[s->nlog++] = begin;
  for (size_t i = begin; i < end; i++)
    s->hits[i]++;
  if (s->hook && !s->hook_done && begin / s->per == s->hook_block) {
    s->hook_done = 1;
    s->hook(s);
  }
}

/* p blocks of per units (unit = 1 index); every owner RUNNING, every block
 * empty (front = back); the thief's loop is run by sim_run. */
static void sim_init(sim *s, size_t p, size_t per, const tt__topo *topo) {
  memset(s, 0, sizeof *s);
  s->p = p;
  s->per = per;
  s->n = p * per;
  cr_assert_leq(s->n, SIM_MAX_LOG);
  s->slots = aligned_alloc(TT_CACHE_PAD, p * sizeof *s->slots);
  cr_assert_not_null(s->slots);
  tt__steal_region_init(&s->r, s->slots, sim_f, s, s->n, 1, s->n, p);
  tt__steal_region_topology(&s->r, topo);
  s->r.caller_unplaced = 0;
  for (size_t v = 0; v < p; v++) {
    tt_atomic_store_relaxed(&s->slots[v].state, TT__OWNER_RUNNING);
    tt_atomic_store_relaxed(&s->slots[v].range,
                            TT__RANGE_PACK(v * per, v * per));
  }
}

static void sim_fill(sim *s, size_t v) {
  tt_atomic_store_relaxed(&s->slots[v].range,
                          TT__RANGE_PACK(v * s->per, (v + 1) * s->per));
}

static void sim_fini(sim *s) { free(s->slots); }

static size_t block_of(const sim *s, size_t k) { return s->log[k] / s->per; }

/* Blocks in the order the thief first took from them. */
static size_t first_blocks(const sim *s, size_t *out, size_t max) {
  size_t k = 0;
  for (size_t i = 0; i < s->nlog && k < max; i++) {
    size_t b = block_of(s, i);
    int seen = 0;
    for (size_t j = 0; j < k; j++)
      seen |= out[j] == b;
    if (!seen)
      out[k++] = b;
  }
  return k;
}

/* The synthetic machine of the locality tests: 2 nodes x 2 L3 x 2 cores,
 * participants pinned in cores order: node 0 = {0,1 | 2,3}, node 1 =
 * {4,5 | 6,7}.  Participant 3's order is 2 | 0 1 | 7 4 5 6; cyclic would be
 * 4 5 6 7 0 1 2. */
static tt__topo *machine(void) {
  hwloc_topology_t t;
  cr_assert_eq(tt__topology_load(&t, "pack:2 [numa] l3:2 core:2 pu:1", NULL, 0),
               0);
  hwloc_obj_t nodes[2] = {hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, 0),
                          hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, 1)};
  hwloc_uint64_t d[4] = {10, 20, 20, 10};
  hwloc_distances_add_handle_t h = hwloc_distances_add_create(
      t, "NUMALatency",
      HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
  cr_assert_not_null(h);
  cr_assert_eq(hwloc_distances_add_values(t, h, 2, nodes, d, 0), 0);
  cr_assert_eq(hwloc_distances_add_commit(t, h, 0), 0);
  int cpus[8];
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 8, TT__PIN_CORES, cpus), 0);
  tt__topo *s = NULL;
  cr_assert_eq(tt__topology_snapshot(t, 8, TT__PIN_CORES, cpus, 0, &s), 0);
  cr_assert(s->ordered);
  hwloc_topology_destroy(t);
  return s;
}

/* Runs thief 3 with work in blocks a and b; returns the first block taken. */
static size_t first_victim(const tt__topo *topo, size_t a, size_t b) {
  sim s;
  sim_init(&s, 8, 16, topo);
  sim_fill(&s, a);
  sim_fill(&s, b);
  tt__steal_participant(&s.r, 3);
  for (size_t i = 0; i < s.n; i++) {
    size_t blk = i / s.per;
    cr_assert_eq(s.hits[i], (blk == a || blk == b) ? 1 : 0,
                 "index %zu ran %u times", i, s.hits[i]);
  }
  size_t first = block_of(&s, 0);
  sim_fini(&s);
  return first;
}

Test(sim, thief_takes_a_same_node_victim_before_a_remote_one) {
  tt__topo *topo = machine();
  cr_expect_eq(first_victim(topo, 1, 4), 1, "same node (1) before remote (4)");
  cr_expect_eq(first_victim(topo, 0, 5), 0, "same node (0) before remote (5)");
  /* control: with a cyclic order the same scene goes remote first */
  cr_expect_eq(first_victim(NULL, 1, 4), 4);
  cr_expect_neq(first_victim(NULL, 0, 5), 0);
  tt__topology_free(topo);
}

Test(sim, thief_takes_its_llc_mate_before_the_rest_of_its_node) {
  tt__topo *topo = machine();
  cr_expect_eq(first_victim(topo, 0, 2), 2, "LLC mate (2) before node (0)");
  cr_expect_eq(first_victim(NULL, 0, 2), 0, "control: cyclic takes 0 first");
  tt__topology_free(topo);
}

/* Block 1's owner republishes [16, 32) (work it "stole") while the thief is
 * draining its first remote steal. */
static void refill_block_1(sim *s) { sim_fill(s, 1); }

static size_t second_victim_after_remote(const tt__topo *topo) {
  sim s;
  sim_init(&s, 8, 16, topo);
  sim_fill(&s, 5);
  sim_fill(&s, 6);
  s.hook_block = 5;
  s.hook = refill_block_1;
  tt__steal_participant(&s.r, 3);
  for (size_t i = 0; i < s.n; i++) {
    size_t blk = i / s.per;
    cr_assert_eq(s.hits[i], (blk == 1 || blk == 5 || blk == 6) ? 1 : 0,
                 "index %zu ran %u times", i, s.hits[i]);
  }
  /* the first steal took a quarter of block 5 [80, 96) from the back */
  cr_assert_geq(s.nlog, 5);
  for (size_t k = 0; k < 4; k++)
    cr_expect_eq(s.log[k], 92 + k, "call %zu began at %zu", k, s.log[k]);
  size_t second = block_of(&s, 4);
  tt_steal_stats st;
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.moved, 48);
  sim_fini(&s);
  return second;
}

Test(sim, thief_returns_home_right_after_a_remote_steal) {
  tt__topo *topo = machine();
  cr_expect_eq(second_victim_after_remote(topo), 1,
               "after the remote steal, the refilled local block 1 next");
  cr_expect_eq(second_victim_after_remote(NULL), 5,
               "control: cyclic goes back to the remote block");
  tt__topology_free(topo);
}

Test(sim, cross_counters_follow_the_topology) {
  tt__topo *topo = machine();
  sim s;
  sim_init(&s, 8, 16, topo);
  sim_fill(&s, 1); /* node 0, other LLC than 3 */
  sim_fill(&s, 2); /* LLC mate */
  sim_fill(&s, 4); /* node 1 */
  tt__steal_participant(&s.r, 3);
  tt_steal_stats st;
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.moved, 48);
  cr_expect_eq(st.moved_cross_llc, 32, "blocks 1 and 4");
  cr_expect_eq(st.moved_cross_node, 16, "block 4");
  size_t order[3];
  cr_assert_eq(first_blocks(&s, order, 3), 3);
  cr_expect_eq(order[0], 2);
  cr_expect_eq(order[1], 1);
  cr_expect_eq(order[2], 4);
  sim_fini(&s);

  /* a caller that is not on its snapshot PU scans cyclically and counts as
   * unknown: no cross counts for it */
  sim_init(&s, 8, 16, topo);
  s.r.caller_unplaced = 1;
  sim_fill(&s, 4);
  tt__steal_participant(&s.r, 0);
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.moved, 16);
  cr_expect_eq(st.moved_cross_node, 0);
  cr_expect_eq(st.moved_cross_llc, 0);
  sim_fini(&s);

  /* the same steal by a placed participant 0 crosses */
  sim_init(&s, 8, 16, topo);
  sim_fill(&s, 4);
  tt__steal_participant(&s.r, 0);
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.moved_cross_node, 16);
  sim_fini(&s);
  tt__topology_free(topo);
}

Test(sim, victims_beyond_p_are_skipped) {
  tt__topo *topo = machine(); /* orders for 8 participants */
  sim s;
  sim_init(&s, 5, 16, topo); /* a region of 5 */
  sim_fill(&s, 4);
  sim_fill(&s, 0);
  tt__steal_participant(&s.r, 3); /* order 2 | 0 1 | (7) 4 (5 6) */
  size_t order[2];
  cr_assert_eq(first_blocks(&s, order, 2), 2);
  cr_expect_eq(order[0], 0);
  cr_expect_eq(order[1], 4);
  for (size_t i = 0; i < s.n; i++)
    cr_expect_eq(s.hits[i], (i / 16 == 0 || i / 16 == 4) ? 1 : 0);
  sim_fini(&s);
  tt__topology_free(topo);
}

Test(sim, quarter_steals_protection_rescue_and_go_backoff) {
  sim s;
  sim_init(&s, 4, 16, NULL); /* cyclic: thief 0 scans 1, 2, 3 */
  sim_fill(&s, 1);
  sim_fill(&s, 2);
  tt_atomic_store_relaxed(&s.slots[1].state, TT__OWNER_IDLE); /* not started */
  tt__steal_participant(&s.r, 0);
  for (size_t i = 0; i < s.n; i++)
    cr_assert_eq(s.hits[i], (i / 16 == 1 || i / 16 == 2) ? 1 : 0);
  /* block 1 comes first in the order but is protected: all of block 2 runs
   * first, a quarter from the back at a time (16 -> 4, 12 -> 3, 9 -> 2) */
  for (size_t k = 0; k < 16; k++)
    cr_expect_eq(block_of(&s, k), 2, "call %zu from block %zu", k,
                 block_of(&s, k));
  static const size_t first[9] = {44, 45, 46, 47, 41, 42, 43, 39, 40};
  for (size_t k = 0; k < 9; k++)
    cr_expect_eq(s.log[k], first[k], "call %zu began at %zu", k, s.log[k]);
  for (size_t k = 16; k < 32; k++)
    cr_expect_eq(block_of(&s, k), 1);
  tt_steal_stats st;
  tt__steal_region_stats(&s.r, &st);
  /* each block: 16 -> 4,3,2,1,1,1,1,1,1,1 = 10 steals */
  cr_expect_eq(st.steals, 20);
  cr_expect_eq(st.moved, 32);
  cr_expect_eq(st.rescues, 1, "block 1 rescued once");
  /* Go's rule: back off before each steal from the running owner (block 2),
   * never before stealing from the owner that has not started (block 1) */
  cr_expect_eq(s.slots[0].backoffs, 10);
  cr_expect_geq(s.slots[0].protected_skips, 10 + TT__STEAL_PROTECT_PASSES);
  cr_expect_eq(tt_atomic_load_relaxed(&s.slots[0].state), TT__OWNER_DONE);
  sim_fini(&s);
}

Test(sim, owner_drains_its_block_front_first_then_retires) {
  sim s;
  sim_init(&s, 3, 8, NULL);
  sim_fill(&s, 1);
  tt__steal_participant(&s.r, 1);
  cr_assert_eq(s.nlog, 8);
  for (size_t k = 0; k < 8; k++)
    cr_expect_eq(s.log[k], 8 + k);
  tt_steal_stats st;
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.steals, 0);
  /* front ran one past back (the empty claim), and stays empty */
  uint64_t w = tt_atomic_load_relaxed(&s.slots[1].range);
  cr_expect_eq(TT__RANGE_FRONT(w), 17);
  cr_expect_eq(TT__RANGE_BACK(w), 16);
  sim_fini(&s);
}

Test(sim, units_for_huge_ranges_stay_multiples_of_the_grain) {
  size_t unit, units;
  tt__steal_units(100, 7, TT__STEAL_MAX_UNITS, &unit, &units);
  cr_expect_eq(unit, 7);
  cr_expect_eq(units, 15);
  tt__steal_units((size_t)1 << 40, 3, TT__STEAL_MAX_UNITS, &unit, &units);
  cr_expect_eq(unit % 3, 0);
  cr_expect_leq(units, TT__STEAL_MAX_UNITS);
  cr_expect_geq((unsigned __int128)unit * units, (unsigned __int128)1 << 40);
  cr_expect_lt((unsigned __int128)unit * (units - 1), (unsigned __int128)1 << 40);
  tt__steal_units(SIZE_MAX - 5, 5, TT__STEAL_MAX_UNITS, &unit, &units);
  cr_expect_eq(unit % 5, 0);
  cr_expect_leq(units, TT__STEAL_MAX_UNITS);
  tt__steal_units(1000, 1, 128, &unit, &units); /* auto's cap */
  cr_expect_eq(unit, 8);
  cr_expect_eq(units, 125);
}

/* ============================ the real team ================================ */

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
      cr_assert_leq(st.moved, n);
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
  /* a short range (fewer than 4 grains per participant) is always static */
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 3, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert_eq(tt_foreach_range(sleepy_f, NULL, 3, 1, 2, TT_SCHED_AUTO), 0);
  tt_steal_last_stats(&st);
  cr_assert_eq(st.units, 0);
  /* a loop auto has not seen steals (one unit per grain below the cap) */
  cr_assert_eq(tt_foreach_range(quick_f, NULL, 100, 1, 2, TT_SCHED_AUTO), 0);
  cr_assert(stole_with_units(100), "an unknown loop steals");
  /* an empty f over 100 units takes a few us, under auto's 25 us: static
   * from then on.  A loaded machine may stretch a region past 25 us, so
   * this waits (boundedly) for one short region rather than timing one. */
  int went_static = 0;
  for (int k = 0; k < 200 && !went_static; k++) {
    marker();
    cr_assert_eq(tt_foreach_range(quick_f, NULL, 100, 1, 2, TT_SCHED_AUTO), 0);
    went_static = stole_with_units(MARKER);
  }
  cr_assert(went_static, "a loop whose regions are short never ran static");
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
