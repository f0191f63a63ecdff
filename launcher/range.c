/* teams: tt_foreach_range, its schedules, and the auto policy.
 *
 *   static  p blocks of whole grains (balanced to within one grain), block c
 *           on participant c: one call of f per participant.
 *   greedy  one grain per chunk from the team's shared counter.
 *   steal   the steal schedule (steal.c) over p blocks of grains.
 *   auto    see below.
 * A range with a single grain, p == 1, or a call from inside a chunk (where
 * the team would run it serially anyway) runs as one call f(ctx, 0, n) on the
 * caller.
 *
 * Auto.  tt_foreach_range cannot know whether its work is uneven, so auto
 * decides by length, measured:
 *   - fewer than AUTO_MIN_GRAINS grains per participant: static.  A block of
 *     one to three grains leaves a thief nothing worth splitting, and static
 *     costs one call per participant and no atomics.
 *   - otherwise auto times each region (two clock reads, ~40 ns) and keeps
 *     the last duration per loop, a loop being a function f and a length n
 *     (the launcher runs every kernel through one f, and its launches differ
 *     in n), in a small per-thread table.  A loop whose last auto region
 *     took at least AUTO_LONG_NS runs with the steal schedule, its units
 *     coarsened to at most AUTO_UNITS_PER_P per participant (a multiple of
 *     the grain); one that took less than AUTO_SHORT_NS runs static.
 *     Between the two it keeps its schedule, so a loop near the threshold
 *     does not flip back and forth.  A loop not in the table steals: its
 *     length is unknown, and stealing bounds the cost of being wrong both
 *     ways -- a short loop pays the units' overhead once (~1-2 us on the
 *     2-core guest, 64 units per participant against static, n = 64..16384)
 *     and is static from then on, while a long uneven loop that ran static
 *     first lost a third of its time (the triangular grid: 1.5x ideal
 *     static, 1.0x stealing), and a loop that runs once never got a second
 *     chance.
 * Why these numbers.  Stealing pays off when a region is long enough that
 * imbalance, an interrupted worker or a late wake-up can cost more than the
 * schedule's overhead.  A sleeping worker started its chunk 12-100 us after
 * the region was published on the 2-core KVM guest we build on (50 regions
 * 2 ms apart, TEAMS_SPIN_US=50: median 17 us in one run, 101 us in another);
 * 50 us is on that scale, and it is the steal threshold KernelAbstractions'
 * adaptive CPU policy uses (ThreadTeams.jl PR #85).  The overhead is one
 * RMW and one call of f per unit: 21 ns per unit and participant on the
 * 2-core KVM guest we build on (steal minus static, 1e7 units of an empty f,
 * 2 participants, 5 runs 20.8-21.6 ns); capping the units at 64 per
 * participant bounds it near 1.4 us per participant, under 3% of a 50 us
 * region, while a thief can still balance to 1/64 of a block.  The
 * table (16 entries, direct-mapped on f and n) forgets a loop when another
 * one maps to its entry: it then starts again as unknown. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prim.h"
#include "steal.h"
#include "team-internal.h"

#define AUTO_MIN_GRAINS 4
#define AUTO_UNITS_PER_P 64
#define AUTO_LONG_NS 50000
#define AUTO_SHORT_NS 25000
#define AUTO_MEMO 16

typedef void (*range_fn)(void *, size_t, size_t);

/* ---- per-thread state: steal slots, last counters, the auto table --------- */

static pthread_key_t slots_key;
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static _Thread_local tt__steal_slot *tls_slots;
static _Thread_local size_t tls_slots_cap;
static _Thread_local tt_steal_stats tls_last;

typedef struct auto_entry {
  range_fn f;
  size_t n;
  int steal;
} auto_entry;
static _Thread_local auto_entry tls_auto[AUTO_MEMO];

static void slots_free(void *p) { free(p); }
static void slots_key_init(void) { pthread_key_create(&slots_key, slots_free); }

/* The calling thread's slots for a steal region of p participants.  Not
 * tt__scratch: a launch's chunks take their local memory from it, on the
 * caller's thread too, while the region runs. */
static tt__steal_slot *thread_slots(size_t p) {
  if (p <= tls_slots_cap)
    return tls_slots;
  pthread_once(&slots_once, slots_key_init);
  size_t cap = p < 16 ? 16 : p;
  tt__steal_slot *s = aligned_alloc(TT_CACHE_PAD, cap * sizeof *s);
  if (!s)
    return NULL;
  free(tls_slots);
  tls_slots = s;
  tls_slots_cap = cap;
  pthread_setspecific(slots_key, s);
  return s;
}

/* ---- static and greedy ---------------------------------------------------- */

typedef struct plain_range {
  range_fn f;
  void *ctx;
  size_t n, grain, grains, p;
} plain_range;

static void static_chunk(void *ctx, size_t c) {
  const plain_range *s = ctx;
  size_t base = s->grains / s->p, extra = s->grains % s->p;
  size_t g0 = c * base + (c < extra ? c : extra);
  size_t g1 = g0 + base + (c < extra);
  size_t begin = g0 * s->grain;
  size_t end = s->n - begin > (g1 - g0) * s->grain ? g1 * s->grain : s->n;
  if (begin < end)
    s->f(s->ctx, begin, end);
}

static void greedy_chunk(void *ctx, size_t c) {
  const plain_range *s = ctx;
  size_t begin = c * s->grain;
  size_t end = s->n - begin > s->grain ? begin + s->grain : s->n;
  s->f(s->ctx, begin, end);
}

/* ---- steal ------------------------------------------------------------------ */

static void steal_each(void *ctx, size_t i) {
  /* Run serially (the team was busy, or nested): no owner will come, so
   * nothing is worth protecting.  Only participant 0 runs then, so the
   * plain write races with no one. */
  if (!tt__region_parallel())
    ((tt__steal_region *)ctx)->protect_passes = 0;
  tt__steal_participant(ctx, i);
}

static int run_steal(range_fn f, void *ctx, size_t n, size_t unit,
                     size_t units, size_t p) {
  tt__steal_slot *slots = thread_slots(p);
  if (!slots) { /* no memory for the slots: static needs none */
    size_t grains = units; /* units are whole multiples of the grain */
    plain_range pr = {f, ctx, n, unit, grains, p};
    return tt__team_run(static_chunk, &pr, p, p, TT__MODE_STATIC, NULL);
  }
  tt__steal_region r;
  tt__steal_region_init(&r, slots, f, ctx, n, unit, units, p);
  const tt__topo *s = tt__topology_current();
  tt__steal_region_topology(&r, s);
  /* The caller is participant 0, but only the thread that started a pinned
   * team sits on participant 0's PU; any other caller scans cyclically. */
  r.caller_unplaced =
      !s || !s->pinned || tt__participant_cpu(0) != s->cpu[0];
  tt__team_run(steal_each, &r, p, p, TT__MODE_EACH, NULL);
  tt_steal_stats st;
  tt__steal_region_stats(&r, &st);
  st.units = units;
  for (size_t i = 0; i < p; i++) {
    st.joined += tt_atomic_load_relaxed(&slots[i].state) != TT__OWNER_IDLE;
    st.backoffs += slots[i].backoffs;
  }
  tls_last = st;
  return 0;
}

/* ---- the entry point ---------------------------------------------------------- */

int tt_foreach_range(void (*f)(void *ctx, size_t begin, size_t end), void *ctx,
                     size_t n, size_t grain, size_t p, tt_schedule schedule) {
  if (!f || p == 0 || grain == 0 || (unsigned)schedule > (unsigned)TT_SCHED_AUTO)
    return TT_EINVAL;
  if (n > SIZE_MAX - grain)
    return TT_EOVERFLOW;
  if (n == 0)
    return 0;
  size_t grains = n / grain + (n % grain != 0);
  if (p > grains)
    p = grains;
  if (p > 1 && tt__self() < 0) {
    size_t team = tt__team_size(); /* starts the team */
    if (p > team)
      p = team;
  }
  if (p == 1 || tt__self() >= 0) {
    f(ctx, 0, n); /* one grain, one participant, or nested in a chunk */
    return 0;
  }

  plain_range pr = {f, ctx, n, grain, grains, p};
  switch (schedule) {
  case TT_SCHED_STATIC:
    return tt__team_run(static_chunk, &pr, p, p, TT__MODE_STATIC, NULL);
  case TT_SCHED_GREEDY:
    return tt__team_run(greedy_chunk, &pr, grains, p, TT__MODE_GREEDY, NULL);
  case TT_SCHED_STEAL: {
    size_t unit, units;
    tt__steal_units(n, grain, TT__STEAL_MAX_UNITS, &unit, &units);
    return run_steal(f, ctx, n, unit, units, p);
  }
  case TT_SCHED_AUTO:
  default:
    break;
  }

  if (grains < (size_t)AUTO_MIN_GRAINS * p)
    return tt__team_run(static_chunk, &pr, p, p, TT__MODE_STATIC, NULL);
  uintptr_t h = ((uintptr_t)f >> 4) ^ (uintptr_t)n ^ ((uintptr_t)n >> 7);
  auto_entry *e = &tls_auto[h % AUTO_MEMO];
  int steal = e->f == f && e->n == n ? e->steal : 1; /* unknown: steal */
  uint64_t t0 = tt__now_ns();
  int rc;
  if (steal) {
    size_t unit, units;
    tt__steal_units(n, grain, (uint64_t)AUTO_UNITS_PER_P * p, &unit, &units);
    rc = run_steal(f, ctx, n, unit, units, p);
  } else {
    rc = tt__team_run(static_chunk, &pr, p, p, TT__MODE_STATIC, NULL);
  }
  uint64_t dt = tt__now_ns() - t0;
  e->f = f;
  e->n = n;
  e->steal = steal ? dt >= AUTO_SHORT_NS : dt >= AUTO_LONG_NS;
  return rc;
}

int tt_steal_last_stats(tt_steal_stats *out) {
  if (!out)
    return TT_EINVAL;
  *out = tls_last;
  return 0;
}
