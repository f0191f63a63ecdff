/* Tests of the steal schedule's state machine (steal.c).
 *
 * sim.*: a deterministic, single-threaded simulation.  A region is built by
 * hand (steal.h) with the victim orders of a synthetic machine installed,
 * blocks and owner states preset, and one participant's loop run on the test
 * thread; the other owners never run, so every choice the thief makes shows
 * in the order f sees the indices.  Each locality test also runs the same
 * scene with a cyclic order and checks that the property then does not hold,
 * so it can fail.  tests/test-range.c runs the schedule on the real team.
 *
 * threads.*: the same region run by one real thread per participant, with
 * the victim orders of a synthetic machine with several nodes and LLCs
 * (this machine has one of each, so the team's own runs never reach the
 * node and remote passes), checking that every index runs exactly once; it
 * runs under ThreadSanitizer too.  Not a benchmark: nothing is timed.
 * WHITEBOX in tests/CMakeLists.txt: linked with teams_whitebox for the
 * internal functions. */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "steal.h"
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

/* Block v holds only its first `units` units. */
static void sim_fill_n(sim *s, size_t v, size_t units) {
  tt_atomic_store_relaxed(&s->slots[v].range,
                          TT__RANGE_PACK(v * s->per, v * s->per + units));
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
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 8, TT_PIN_CORES, cpus), 0);
  tt__topo *s = NULL;
  cr_assert_eq(tt__topology_snapshot(t, 8, TT_PIN_CORES, cpus, 0, &s), 0);
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

static size_t second_victim_after_remote(const tt__topo *topo, size_t take) {
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
  /* the first steal took `take` units of block 5 [80, 96) from the back */
  cr_assert_geq(s.nlog, take + 1);
  for (size_t k = 0; k < take; k++)
    cr_expect_eq(s.log[k], 96 - take + k, "call %zu began at %zu", k,
                 s.log[k]);
  size_t second = block_of(&s, take);
  tt_steal_stats st;
  tt__steal_region_stats(&s.r, &st);
  cr_expect_eq(st.moved, 48);
  sim_fini(&s);
  return second;
}

Test(sim, thief_returns_home_right_after_a_remote_steal) {
  tt__topo *topo = machine();
  /* the crossing took half of block 5 */
  cr_expect_eq(second_victim_after_remote(topo, 8), 1,
               "after the remote steal, the refilled local block 1 next");
  /* without a topology nothing is remote: a quarter */
  cr_expect_eq(second_victim_after_remote(NULL, 4), 5,
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

/* Thief 3 with block a holding na units and block b holding nb; returns
 * the block of its first steal and how many units that steal took. */
static size_t first_steal(const tt__topo *topo, size_t a, size_t na, size_t b,
                          size_t nb, size_t *took) {
  sim s;
  sim_init(&s, 8, 16, topo);
  sim_fill_n(&s, a, na);
  if (nb)
    sim_fill_n(&s, b, nb);
  tt__steal_participant(&s.r, 3);
  for (size_t i = 0; i < s.n; i++) {
    size_t blk = i / s.per, off = i % s.per;
    int want = (blk == a && off < na) || (nb && blk == b && off < nb);
    cr_assert_eq(s.hits[i], want, "index %zu ran %u times", i, s.hits[i]);
  }
  size_t first = block_of(&s, 0);
  *took = 1;
  while (*took < s.nlog && s.log[*took] == s.log[0] + *took)
    (*took)++;
  sim_fini(&s);
  return first;
}

Test(sim, beyond_its_llc_the_thief_takes_from_the_most_loaded_victim) {
  tt__topo *topo = machine();
  size_t took;
  /* thief 3's order: 2 | 0 1 | 7 4 5 6 */
  cr_expect_eq(first_steal(topo, 0, 4, 1, 16, &took), 1,
               "rest of the node: 1 (16 left) before 0 (4 left)");
  cr_expect_eq(first_steal(topo, 4, 4, 6, 16, &took), 6,
               "other node: 6 (16 left) before 4 (4 left)");
  cr_expect_eq(first_steal(topo, 4, 16, 6, 16, &took), 4,
               "ties go to the nearer, earlier victim");
  /* the LLC tier stays first-found, and a local victim with little still
   * comes before a remote one with much */
  cr_expect_eq(first_steal(topo, 2, 2, 5, 16, &took), 2);
  cr_expect_eq(first_steal(topo, 0, 2, 5, 16, &took), 0);
  /* control: the cyclic order (4 5 6 7 0 1 2) takes the first with work */
  cr_expect_eq(first_steal(NULL, 0, 4, 1, 16, &took), 0);
  cr_expect_eq(first_steal(NULL, 4, 4, 6, 16, &took), 4);
  tt__topology_free(topo);
}

Test(sim, a_crossing_takes_half_a_steal_on_the_node_a_quarter) {
  tt__topo *topo = machine();
  size_t took;
  cr_expect_eq(first_steal(topo, 4, 16, 0, 0, &took), 4);
  cr_expect_eq(took, 8, "half of block 4 across nodes, took %zu", took);
  cr_expect_eq(first_steal(topo, 1, 16, 0, 0, &took), 1);
  cr_expect_eq(took, 4, "a quarter of block 1 on the node, took %zu", took);
  cr_expect_eq(first_steal(topo, 2, 16, 0, 0, &took), 2);
  cr_expect_eq(took, 4, "a quarter of the LLC mate's block, took %zu", took);
  /* control: without a topology nothing is remote */
  cr_expect_eq(first_steal(NULL, 4, 16, 0, 0, &took), 4);
  cr_expect_eq(took, 4);
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

/* With the blocks dealt (tt__steal_region_deal, the snapshot's deal of the
 * locality machine: 0 4 2 6 1 5 3 7), participant c drains block deal[c]
 * front first, then steals every other block: run alone, each participant
 * runs every index once and starts at the front of its dealt block. */
Test(sim, dealt_blocks_each_owner_starts_at_the_front_of_its_block) {
  tt__topo *topo = machine();
  const uint32_t *deal = topo->deal_block;
  cr_assert_not_null(deal, "two nodes of two LLCs: the blocks are dealt");
  size_t moved = 0;
  for (size_t c = 0; c < 8; c++)
    moved += deal[c] != c;
  cr_assert_gt(moved, 0, "a deal that is the identity would test nothing");
  for (size_t c = 0; c < 8; c++) {
    sim s;
    sim_init(&s, 8, 16, topo);
    tt__steal_region_deal(&s.r, deal);
    for (size_t v = 0; v < 8; v++) {
      uint64_t w = tt_atomic_load_relaxed(&s.slots[v].range);
      cr_assert_eq(TT__RANGE_FRONT(w), deal[v] * 16, "slot %zu", v);
      cr_assert_eq(TT__RANGE_BACK(w), (deal[v] + 1) * 16, "slot %zu", v);
    }
    tt__steal_participant(&s.r, c);
    for (size_t i = 0; i < s.n; i++)
      cr_assert_eq(s.hits[i], 1, "participant %zu: index %zu ran %u times", c,
                   i, s.hits[i]);
    cr_assert_geq(s.nlog, 16);
    for (size_t k = 0; k < 16; k++)
      cr_expect_eq(s.log[k], deal[c] * 16 + k,
                   "participant %zu, call %zu began at %zu (block %u)", c, k,
                   s.log[k], deal[c]);
    sim_fini(&s);
  }
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
  /* Go's rule: back off before taking the running owner's last unit (the
   * last of block 2's ten steals), not while it has two or more left (its
   * one claim meanwhile could not change the steal), never before stealing
   * from the owner that has not started (block 1) */
  cr_expect_eq(s.slots[0].backoffs, 1);
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

/* ======================= real threads, synthetic orders =================== */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RACE_SPINS 61 /* sanitizers slow every access down: less work */
#define RACE_ROUNDS(n) ((n) / 4)
#else
#define RACE_SPINS 997
#define RACE_ROUNDS(n) (n)
#endif

typedef struct race {
  tt__steal_region r;
  _Atomic unsigned *hits;
  size_t n;
  /* dealt rounds: own[c] = [front, back) indices of c's dealt block; first[c]
   * = the first index c ran before its first steal (SIZE_MAX: none), and
   * stray[c] counts its calls before its first steal outside own[c].
   * Written by participant c only, read after the join. */
  size_t (*own)[2], *first, *stray;
} race;

static _Thread_local size_t race_self; /* the participant this thread runs */

typedef struct racer {
  race *race;
  size_t self;
  unsigned delay; /* spins before joining: late owners get rescued */
} racer;

static void race_f(void *ctx, size_t begin, size_t end) {
  race *x = ctx;
  size_t c = race_self;
  /* before its first steal a participant runs only its own block (its
   * steal counter is its own, plain, and bumped before a steal runs) */
  if (x->own && x->r.slots[c].stats.steals == 0) {
    if (x->first[c] == SIZE_MAX)
      x->first[c] = begin;
    x->stray[c] += begin < x->own[c][0] || end > x->own[c][1];
  }
  for (size_t i = begin; i < end; i++) {
    /* uneven work: index i costs i % RACE_SPINS spins, so blocks drain
     * unevenly */
    for (volatile size_t k = 0; k < i % RACE_SPINS; k++)
      ;
    atomic_fetch_add_explicit(&x->hits[i], 1, memory_order_relaxed);
    if (i % 16 == 0)
      sched_yield(); /* more participants in flight than this machine has
                        cores: let the others interleave */
  }
}

static void *race_run(void *arg) {
  racer *t = arg;
  race_self = t->self;
  for (volatile unsigned k = 0; k < t->delay; k++)
    ;
  tt__steal_participant(&t->race->r, t->self);
  return NULL;
}

/* p participants on the synthetic machine `desc` (pinned in NUMA order),
 * `rounds` regions of n indices with one unit per `grain` indices.  dealt:
 * the blocks go by the snapshot's deal (tt__steal_region_deal), as range.c
 * gives them, and each participant that ran anything of its own block
 * started at the front of its dealt block and stayed in it until its first
 * steal (a late one may find its whole block rescued: it runs only stolen
 * units). */
static void race_rounds(const char *desc, size_t p, size_t n, size_t grain,
                        int rounds, int dealt) {
  hwloc_topology_t t;
  cr_assert_eq(tt__topology_load(&t, desc, NULL, 0), 0);
  int *cpus = malloc(p * sizeof *cpus);
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, p, TT_PIN_NUMA, cpus), 0);
  tt__topo *topo = NULL;
  cr_assert_eq(tt__topology_snapshot(t, p, TT_PIN_NUMA, cpus, 0, &topo), 0);
  cr_assert(topo->ordered);
  hwloc_topology_destroy(t);
  free(cpus);
  race x = {.n = n};
  x.hits = calloc(n, sizeof *x.hits);
  tt__steal_slot *slots = aligned_alloc(TT_CACHE_PAD, p * sizeof *slots);
  pthread_t *th = malloc(p * sizeof *th);
  racer *rs = malloc(p * sizeof *rs);
  size_t(*blocks)[2] = malloc(p * sizeof *blocks);
  cr_assert(x.hits && slots && th && rs && blocks);
  const uint32_t *deal = NULL;
  if (dealt) {
    deal = topo->deal_block;
    cr_assert_not_null(deal, "%s: the blocks are dealt", desc);
    size_t moved = 0;
    for (size_t c = 0; c < p; c++)
      moved += deal[c] != c;
    cr_assert_gt(moved, 0, "%s: the identity would test nothing", desc);
    x.own = malloc(p * sizeof *x.own);
    x.first = malloc(p * sizeof *x.first);
    x.stray = malloc(p * sizeof *x.stray);
    cr_assert(x.own && x.first && x.stray);
  }
  size_t units = n / grain + (n % grain != 0);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < rounds; round++) {
    for (size_t i = 0; i < n; i++)
      atomic_store_explicit(&x.hits[i], 0, memory_order_relaxed);
    tt__steal_region_init(&x.r, slots, race_f, &x, n, grain, units, p);
    if (deal) {
      /* block b, in indices, as the region cut it: slot b before the deal */
      for (size_t b = 0; b < p; b++) {
        uint64_t w = tt_atomic_load_relaxed(&slots[b].range);
        blocks[b][0] = (size_t)TT__RANGE_FRONT(w) * grain;
        blocks[b][1] = (size_t)TT__RANGE_BACK(w) * grain;
        if (blocks[b][1] > n)
          blocks[b][1] = n;
      }
      tt__steal_region_deal(&x.r, deal);
      for (size_t c = 0; c < p; c++) {
        x.own[c][0] = blocks[deal[c]][0];
        x.own[c][1] = blocks[deal[c]][1];
        x.first[c] = SIZE_MAX;
        x.stray[c] = 0;
      }
    }
    tt__steal_region_topology(&x.r, topo);
    x.r.caller_unplaced = 0;
    for (size_t i = 0; i < p; i++) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      rs[i] = (racer){&x, i, (unsigned)(seed % 4) == 0 ? 2000u : 0u};
      cr_assert_eq(pthread_create(&th[i], NULL, race_run, &rs[i]), 0);
    }
    for (size_t i = 0; i < p; i++)
      pthread_join(th[i], NULL);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(atomic_load(&x.hits[i]), 1,
                   "%s round %d: index %zu ran %u times", desc, round, i,
                   atomic_load(&x.hits[i]));
    tt_steal_stats st;
    tt__steal_region_stats(&x.r, &st);
    cr_assert_eq(st.joined, p);
    cr_assert_leq(st.moved_cross_node, st.moved);
    if (deal) {
      /* the region's first claim is an owner's (a thief steals only after
       * its own block ran out), so at least one participant drained */
      size_t drained = 0;
      for (size_t c = 0; c < p; c++) {
        cr_assert_eq(x.stray[c], 0,
                     "%s round %d: participant %zu ran outside its block "
                     "before stealing",
                     desc, round, c);
        if (x.first[c] == SIZE_MAX)
          continue;
        drained++;
        cr_assert_eq(x.first[c], x.own[c][0],
                     "%s round %d: participant %zu began at %zu, its block "
                     "(%u) at %zu",
                     desc, round, c, x.first[c], deal[c], x.own[c][0]);
      }
      cr_assert_geq(drained, 1, "%s round %d", desc, round);
    }
  }
  free(x.own);
  free(x.first);
  free(x.stray);
  free(blocks);
  free(x.hits);
  free(slots);
  free(th);
  free(rs);
  tt__topology_free(topo);
}

Test(threads, two_nodes_of_two_llcs_run_every_index_once, .timeout = 300) {
  race_rounds("pack:2 [numa] l3:2 core:2 pu:1", 8, 4000, 7, RACE_ROUNDS(60), 0);
}

Test(threads, four_nodes_in_two_packages_run_every_index_once,
     .timeout = 300) {
  race_rounds("pack:2 group:2 [numa] l3:2 core:2 pu:1", 16, 6000, 5,
              RACE_ROUNDS(40), 0);
}

Test(threads, dealt_blocks_on_two_nodes_of_two_llcs_run_every_index_once,
     .timeout = 300) {
  race_rounds("pack:2 [numa] l3:2 core:2 pu:1", 8, 4000, 7, RACE_ROUNDS(40), 1);
}

Test(threads, dealt_blocks_on_four_nodes_run_every_index_once, .timeout = 300) {
  race_rounds("pack:2 group:2 [numa] l3:2 core:2 pu:1", 16, 6000, 5,
              RACE_ROUNDS(30), 1);
}
