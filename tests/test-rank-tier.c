/* Tests of the rank tier's protocol (mpi/tier.c) without MPI: the words are
 * C11 atomics in one process.
 *
 * scene.*: one thief on the test thread, the other ranks never running, so
 * its choices show in the order it runs units: the quarter it takes, this
 * node's ranks before other nodes' (and, with the node boundary removed, the
 * order it would take otherwise, so the check can fail).
 * threads.*: every rank a thread, random blocks, many rounds: each unit runs
 * exactly once.  Not a benchmark.  tests/mpi/test-mpi-steal.c runs the tier
 * over a real MPI window. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tier.h"

#define MAX_RANKS 8
#define MAX_UNITS 4096

typedef struct world {
  _Atomic uint64_t word[MAX_RANKS];
  _Atomic int hits[MAX_UNITS];
  /* scene: the units in the order the thief ran them */
  uint32_t log[MAX_UNITS];
  size_t nlog;
} world;

static uint64_t w_read(void *words, int r) {
  return atomic_load_explicit(&((world *)words)->word[r], memory_order_relaxed);
}
static int w_cas(void *words, int r, uint64_t *expected, uint64_t desired) {
  return atomic_compare_exchange_strong_explicit(
      &((world *)words)->word[r], expected, desired, memory_order_acq_rel,
      memory_order_relaxed);
}
static void w_run(void *ctx, uint32_t u) {
  world *w = ctx;
  atomic_fetch_add_explicit(&w->hits[u], 1, memory_order_relaxed);
  if (w->nlog < MAX_UNITS)
    w->log[w->nlog++] = u;
}

static tt__tier tier_of(world *w, int self, const int *order, int n,
                        int local_end) {
  return (tt__tier){.self = self, .nvictims = n, .order = order,
                    .local_end = local_end, .read = w_read, .cas = w_cas,
                    .words = w, .run = w_run, .ctx = w};
}

Test(scene, quarter_from_the_back) {
  static world w;
  memset(&w, 0, sizeof w);
  atomic_store(&w.word[0], TT__TIER_PACK(0, 0));
  atomic_store(&w.word[1], TT__TIER_PACK(0, 16));
  int order[] = {1};
  tt__tier t = tier_of(&w, 0, order, 1, 1);
  tt__tier_run(&t);
  /* 16 left: takes 4 ([12, 16)), then 12 left: 3 ([9, 12)), ... */
  uint32_t want[] = {12, 13, 14, 15, 9, 10, 11, 7, 8, 6, 5};
  cr_assert_eq(w.nlog, 16);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    cr_expect_eq(w.log[i], want[i], "unit %zu: %u, want %u", i, w.log[i],
                 want[i]);
  for (int u = 0; u < 16; u++)
    cr_expect_eq(atomic_load(&w.hits[u]), 1);
  /* q = 4, 3, 2, then 1 for each of the last 7 units */
  cr_expect_eq(t.steals_node, 10);
  cr_expect_eq(t.steals_other, 0);
}

/* Rank 0, empty, on node A with rank 2; rank 1 on node B.  Blocks: rank 1
 * [0, 8), rank 2 [8, 16).  Returns the position in the log of the last unit
 * of rank 2's block and of the first of rank 1's. */
static void crossing(const int *order, int local_end, size_t *last_local,
                     size_t *first_remote, tt__tier *out) {
  static world w;
  memset(&w, 0, sizeof w);
  atomic_store(&w.word[1], TT__TIER_PACK(0, 8));
  atomic_store(&w.word[2], TT__TIER_PACK(8, 16));
  *out = tier_of(&w, 0, order, 2, local_end);
  tt__tier_run(out);
  cr_assert_eq(w.nlog, 16);
  *last_local = 0;
  *first_remote = SIZE_MAX;
  for (size_t i = 0; i < w.nlog; i++) {
    if (w.log[i] >= 8)
      *last_local = i;
    else if (*first_remote == SIZE_MAX)
      *first_remote = i;
  }
}

Test(scene, own_node_first) {
  size_t last_local, first_remote;
  tt__tier t;
  int order[] = {2, 1};
  crossing(order, 1, &last_local, &first_remote, &t);
  cr_expect_lt(last_local, first_remote,
               "a unit of the other node ran at %zu, before the last of this "
               "node's at %zu",
               first_remote, last_local);
  cr_expect_gt(t.steals_node, 0);
  cr_expect_gt(t.steals_other, 0);
  /* Without the node order (rank 1 first) the property does not hold. */
  int cyclic[] = {1, 2};
  crossing(cyclic, 2, &last_local, &first_remote, &t);
  cr_expect_gt(last_local, first_remote);
}

typedef struct {
  world *w;
  int self, n;
  int order[MAX_RANKS];
} rank_arg;

static void w_count(void *ctx, uint32_t u) {
  world *w = ctx;
  atomic_fetch_add_explicit(&w->hits[u], 1, memory_order_relaxed);
}

static void *rank_main_count(void *p) {
  rank_arg *a = p;
  tt__tier t = tier_of(a->w, a->self, a->order, a->n - 1, (a->n - 1) / 2);
  t.run = w_count; /* the log is single-threaded only */
  tt__tier_run(&t);
  return NULL;
}

Test(threads, each_unit_once) {
  static world w;
  uint64_t rng = 0x853c49e6748fea9bull;
  for (int round = 0; round < 400; round++) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    int n = 2 + (int)(rng % (MAX_RANKS - 1));
    uint32_t units = (uint32_t)(rng >> 20) % 2000 + 1;
    memset(&w, 0, sizeof w);
    /* Random cut points: some blocks empty, some large. */
    uint32_t cut[MAX_RANKS + 1];
    cut[0] = 0;
    cut[n] = units;
    for (int r = 1; r < n; r++) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      cut[r] = (uint32_t)(rng % (units + 1));
    }
    for (int r = 1; r < n; r++) /* sort */
      for (int s = r; s > 1 && cut[s - 1] > cut[s]; s--) {
        uint32_t x = cut[s];
        cut[s] = cut[s - 1];
        cut[s - 1] = x;
      }
    for (int r = 0; r < n; r++)
      atomic_store(&w.word[r], TT__TIER_PACK(cut[r], cut[r + 1]));
    pthread_t th[MAX_RANKS];
    rank_arg args[MAX_RANKS];
    for (int r = 0; r < n; r++) {
      args[r] = (rank_arg){&w, r, n, {0}};
      for (int i = 1; i < n; i++)
        args[r].order[i - 1] = (r + i) % n;
      cr_assert_eq(pthread_create(&th[r], NULL, rank_main_count, &args[r]), 0);
    }
    for (int r = 0; r < n; r++)
      pthread_join(th[r], NULL);
    for (uint32_t u = 0; u < units; u++)
      cr_assert_eq(atomic_load(&w.hits[u]), 1,
                   "round %d (%d ranks, %u units): unit %u ran %d times", round,
                   n, units, u, atomic_load(&w.hits[u]));
  }
}
