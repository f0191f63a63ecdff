/* teams: the steal schedule's region state (internal).
 *
 * steal.c runs one participant of a steal region (tt__steal_participant);
 * range.c sets regions up for tt_foreach_range.  The state is laid out here so
 * that tests can build a region by hand, install victim orders of a synthetic
 * machine, preset blocks and owner states, and drive one participant from a
 * single thread: a deterministic simulation of the steal state machine. */
#ifndef TEAMS_STEAL_H
#define TEAMS_STEAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "teams/team.h"
#include "atomic.h"

/* The topology snapshot (topology-view.h, which brings in hwloc): only
 * steal.c and the code that installs orders need its fields. */
struct tt__topo;

/* Blocks are ranges of units (grains, or multiples of the grain when a range
 * has more grains than fit): [front, back) packed in one 64-bit word. */
#define TT__STEAL_MAX_UNITS ((uint64_t)UINT32_MAX - 1)
#define TT__RANGE_PACK(front, back) (((uint64_t)(front) << 32) | (uint64_t)(back))
#define TT__RANGE_FRONT(w) ((uint32_t)((w) >> 32))
#define TT__RANGE_BACK(w) ((uint32_t)(w))

/* Owner states: written by the owner only (IDLE -> RUNNING -> DONE). */
enum { TT__OWNER_IDLE = 0, TT__OWNER_RUNNING = 1, TT__OWNER_DONE = 2 };

/* Passes over the victims during which a thief leaves alone the blocks of
 * owners that have not started (startup protection), then rescues them. */
#define TT__STEAL_PROTECT_PASSES 4

/* A participant's own counts: the fields of tt_steal_stats it keeps
 * itself (the public struct's reserved room has no place in the slot). */
typedef struct tt__steal_counts {
  uint64_t steals, moved, moved_cross_llc, moved_cross_node, rescues;
} tt__steal_counts;

/* One participant's slot, padded: the range word is RMW'd by its owner on
 * every grain and by thieves, so it must not share a line with another
 * participant's. */
typedef struct tt__steal_slot {
  _Alignas(TT_CACHE_PAD) _Atomic uint64_t range; /* see steal.c's protocol */
  _Atomic uint32_t state;   /* TT__OWNER_*, written by the owner */
  _Atomic uint32_t rescued; /* 0 -> 1 by the first thief to rescue it */
  /* Written by this participant only, read by the caller after the region
   * (tt__team_run's completion orders them). */
  tt__steal_counts stats;
  uint64_t backoffs;        /* back-offs before steals (Go's rule) */
  uint64_t ran;             /* indices this participant ran */
  uint64_t protected_skips; /* protected blocks passed over */
} tt__steal_slot;

typedef struct tt__steal_region {
  void (*f)(void *ctx, size_t begin, size_t end);
  void *ctx;
  size_t n;     /* indices [0, n) */
  size_t unit;  /* indices per unit: a multiple of the grain */
  size_t units; /* ceil(n / unit) <= TT__STEAL_MAX_UNITS */
  size_t p;     /* participants = blocks */
  tt__steal_slot *slots; /* [p] */
  /* Victim orders (topology-view.h); victims == NULL: cyclic for everyone.
   * Rows have `stride` entries; entries >= p are skipped.  llc_end NULL:
   * every tier is scanned first-found (random orders in tools/teams-sim). */
  const uint32_t *victims;
  const uint32_t *llc_end;
  const uint32_t *local_end;
  size_t stride;
  const int *llc, *node; /* [>= p] or NULL: for the cross counters */
  int caller_unplaced;   /* participant 0 is not on its snapshot PU: it scans
                            cyclically and counts as unknown LLC/node */
  unsigned protect_passes;
  unsigned backoff_spins; /* pauses before stealing from a running owner */
  /* NULL in the runtime.  tools/teams-sim sets it to run many participants
   * as coroutines in simulated time: a thief calls probe(ctx, self, v, 0)
   * before it reads victim v's word, and probe(ctx, self, v, 1) after a
   * back-off pause before it reads the word again; the simulator charges
   * the read and switches participants there.  It changes no decision. */
  void (*probe)(void *ctx, size_t self, size_t victim, int backoff);
} tt__steal_region;

/* Unit size and count for n indices in grains of `grain`, at most max_units
 * units (a multiple of the grain).  n + grain must not overflow. */
void tt__steal_units(size_t n, size_t grain, uint64_t max_units, size_t *unit,
                     size_t *units);

/* Sets r up: p blocks of whole units, balanced to within one unit, owners
 * IDLE, counters zero, cyclic order, default protection and back-off.
 * slots must hold p entries. */
void tt__steal_region_init(tt__steal_region *r, tt__steal_slot *slots,
                           void (*f)(void *, size_t, size_t), void *ctx,
                           size_t n, size_t unit, size_t units, size_t p);

/* Gives participant c block deal[c] of the p blocks (a permutation of
 * 0..p-1: range.c's deal; NULL: block c, as tt__steal_region_init does).
 * Before the region runs. */
void tt__steal_region_deal(tt__steal_region *r, const uint32_t *deal);

/* Installs the victim orders of snapshot s (when ordered, s->n >= p) and its
 * LLC/node ids for the counters (when s is pinned).  NULL: cyclic. */
void tt__steal_region_topology(tt__steal_region *r,
                               const struct tt__topo *s);

/* Runs participant self of r: its own block from the front, then steals.
 * Returns when a full scan over the other blocks found nothing to take. */
void tt__steal_participant(tt__steal_region *r, size_t self);

/* The region's counters (every field of tt_steal_stats): the participants'
 * sums, the participants that joined, and the units.  Call it after the
 * region (the team's completion orders the participants' writes). */
void tt__steal_region_stats(const tt__steal_region *r, tt_steal_stats *out);

#endif
