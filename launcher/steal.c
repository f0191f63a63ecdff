/* teams: the steal schedule (one participant's loop).
 *
 * ---------------------------------------------------------------------------
 * Protocol
 * ---------------------------------------------------------------------------
 * A range of `units` units is cut into p blocks, one per participant, each a
 * [front, back) pair packed into one 64-bit word, slot[i].range.  The word is
 * the whole state of a block: an index is unclaimed exactly while its unit
 * lies in [front, back) of some slot's word, and nothing else records it.
 *
 * Who writes which word:
 *   slot[i].range  owner i:  fetch_add(front += 1) to claim the unit at
 *                            front (one unit per RMW, then runs it);
 *                            store(new range) to republish stolen units, only
 *                            while its own block is empty;
 *                  thief t:  CAS(front, back -> front, back - q) to take the
 *                            last q units, q = max(1, (back - front) / 4)
 *                            from a victim on t's node, max(1, (back -
 *                            front) / 2) from another node.
 *   slot[i].state  owner i only: IDLE -> RUNNING (on entry) -> DONE (on exit).
 *   slot[i].rescued          exchange 0 -> 1 by thieves (counts a rescue once).
 *   slot[i].stats, .backoffs, .protected_skips
 *                  participant i only, plain; summed by the caller after
 *                  tt__team_run returned (its completion orders them).
 *
 * Why no unit runs twice: every claim is one RMW on the word that holds the
 * unit.  All RMWs on one word are totally ordered, and each removes the units
 * it claims from [front, back) of the value it replaced: the owner's
 * fetch_add takes `front` only when front < back in the value it read, and a
 * thief's CAS succeeds only if the word still holds the value it computed q
 * from.  A CAS compares the whole state, so a word that left and came back to
 * the same value is no hazard (ABA is harmless: the value means the same
 * unclaimed units either way).  A republish writes stolen units into the
 * thief's own slot with a plain store while that slot is empty; nobody else
 * can change an empty slot (the owner is the only one that adds, and a
 * thief's CAS against an empty value never happens and against an older
 * non-empty value fails), so the store loses nothing.  An owner's fetch_add
 * on an empty block leaves front = back + 1: still empty, and front never
 * exceeds TT__STEAL_MAX_UNITS + 1 = UINT32_MAX because the owner stops at the
 * first empty claim and the next republish resets front.
 *
 * Why no unit is lost: a participant returns only after its own block came up
 * empty and then a full scan, over every other block < p, saw each one empty
 * with nothing skipped.  After the scan saw slot j empty, only owner j can
 * put units into it again (by republishing units it stole), and then owner j
 * is running and drains its block before it may return.  The caller's
 * f(ctx, 0) is this loop too, so when it returns every block has been seen
 * empty: units are either done, or being run by a participant that joined,
 * which tt__team_run waits for.  A participant that had not joined by then
 * never runs (TT__MODE_EACH), and it had nothing: its block was seen empty,
 * and only it could have refilled it.  So the caller (or a thief) rescues the
 * blocks of owners that never start.
 *
 * Startup protection, then rescue.  An owner wakes up later than the caller
 * (a sleeping worker started 12-100 us after the region was published on the
 * 2-core KVM guest we build on; a spinning one at once): for the first
 * TT__STEAL_PROTECT_PASSES passes a thief leaves alone a non-empty block whose
 * owner is still IDLE, so the owner finds its own block, with its locality,
 * when it arrives.  Such a pass is not fruitless: the thief pauses (doubling,
 * 32 to 256 pauses) and scans again; after the protected passes it steals
 * from those blocks like any other, counting the first steal per block as a
 * rescue.  A late owner then drains what is left from the front.
 *
 * Back-off (Go's rule, Go commit 868c8b3, "runtime: only back off before
 * stealing from a running P").  Before taking the last unit of a block
 * whose owner is RUNNING, a thief pauses briefly (backoff_spins pauses) and
 * re-reads the word: the owner is about to take it itself, and a steal then
 * would only move it.  With two or more units left it does not wait: the
 * owner claims one unit at a time, so the steal happens either way, and the
 * pause only delayed it (about 1 us per steal; in tools/teams-sim it was
 * 0.5-0.8% of p * ideal on the triangular grid at 256 participants).  Nor
 * before stealing from an IDLE owner: that owner cannot take the work back.
 *
 * Victim order, the crossing rule and the amounts.  A thief scans its order
 * (order.h) tier by tier, and only after its node found nothing, the other
 * nodes:
 *   LLC tier        the first victim with work, a quarter of its remainder:
 *                   a neighbour in the same cache, cheap to read and to
 *                   take from;
 *   rest of node    every word read first, then a quarter from the victim
 *                   with the most units left (ties: the nearer);
 *   other nodes     likewise the one with the most units left on any other
 *                   node (ties: the nearer tier), and half of it.
 * The thief republishes what it took in its own block (so thieves near it
 * can split it further), drains it, and then starts again from the top of
 * its order: local passes repeat while they find work, and after a remote
 * steal the next scan starts at home.  Without an order (unpinned team, or
 * a caller that is not the pinned thread that started the team) the order
 * is cyclic, i + 1, i + 2, ... mod p, first victim with work, a quarter.
 *
 * Why most-left beyond the LLC, and half across nodes.  tools/teams-sim
 * (2 x 64-core EPYC NPS1/NPS4, 2 x 56-core Sapphire Rapids SNC4, 128 and
 * 256 participants, a triangular grid) showed what first-found nearest-first
 * stealing did: light nodes' thieves split each other's small republished
 * pieces (1.1-1.4 units per steal, about 4x the steals of random victims), and
 * with several nodes per package they first evened out the package's nodes
 * and then moved work again across packages: 1.5-1.8x the bytes random
 * victims run off their node.  Taking from the most loaded victim goes
 * where the work is (the victim that would finish last) and takes big
 * pieces, so fewer steals; the extra reads overlap (one thief's reads do
 * not depend on each other: 5.4 against 68 ns per line here,
 * bench/teams-bench-line-scan).  A crossing costs a far transfer and the
 * remote data, and the thief's node mates split what it republishes, so it
 * takes half.  Triangular makespan / ideal went from 1.053/1.058/1.051 to
 * 1.048/1.045/1.037 at 128 and from 1.075/1.096/1.085 to 1.067/1.063/1.049
 * at 256 (224 on SPR), bytes run off their node from 0.96/1.77/1.75 to
 * 0.88/0.65/0.67 of random victims' (13.2-15.0% of the bytes, where any
 * schedule that ends balanced runs at least 12.75-13.9% off their
 * first-touch node; all with contiguous blocks, before range.c dealt them
 * over the nodes, which took these to 1.019-1.030x ideal and 0.005-0.041 of
 * random's bytes); uniform and power-law within 0.002 (power-law on
 * NPS1 at 256: 1.042 -> 1.044, the last units' order; elsewhere the same
 * or better).  Measured and rejected: most-left in the LLC tier too (fewer
 * steals, no better makespan), half everywhere, a crossing
 * threshold (leave the node while its best victim has <= K units, K = 1..8:
 * within +-0.005), sampling d remote victims each search and crossing when
 * one has r times the node's best (d = 2..8, r = 2..8: NPS1 1.070 at 256,
 * NPS4 moved 18-21% of bytes off their node against 15%).
 *
 * Memory order.  The range words are RMW'd with relaxed order (the claims) or
 * acq_rel CAS: no data is published through them, only the claims, which the
 * words' modification order settles.  The user's writes in f reach the caller
 * through tt__team_run's completion (release by each participant, acquire by
 * the caller).  state and rescued are hints and counters: relaxed.
 *
 * Rejected: separate front and back words with a fence-based owner path (the
 * THE protocol) would save the owner's RMW, but needs a seq_cst fence per
 * claim instead, and a range, unlike a deque, never grows at the owner's end,
 * so one word and one RMW is both simpler and as fast; 128-bit words for
 * 64-bit indices need cmpxchg16b (libatomic, no plain loads), so ranges with
 * more than 2^32 - 2 grains use a larger unit (a multiple of the grain). */
#include "steal.h"

#include <string.h>
#include "prim.h"
#include "range.h"
#include "team-internal.h"
#include "topology-view.h"

void tt__steal_units(size_t n, size_t grain, uint64_t max_units, size_t *unit,
                     size_t *units) {
  size_t grains = n / grain + (n % grain != 0);
  size_t k = 1;
  if (max_units < 1)
    max_units = 1;
  if ((uint64_t)grains > max_units)
    k = (size_t)(grains / max_units + (grains % max_units != 0));
  *unit = grain * k;
  *units = n / *unit + (n % *unit != 0);
}

void tt__steal_region_init(tt__steal_region *r, tt__steal_slot *slots,
                           void (*f)(void *, size_t, size_t), void *ctx,
                           size_t n, size_t unit, size_t units, size_t p) {
  memset(r, 0, sizeof *r);
  r->f = f;
  r->ctx = ctx;
  r->n = n;
  r->unit = unit;
  r->units = units;
  r->p = p;
  r->slots = slots;
  r->protect_passes = TT__STEAL_PROTECT_PASSES;
  r->backoff_spins = 32;
  for (size_t i = 0; i < p; i++) {
    memset(&slots[i], 0, sizeof slots[i]);
    tt_atomic_store_relaxed(&slots[i].state, TT__OWNER_IDLE);
    tt_atomic_store_relaxed(&slots[i].rescued, 0);
  }
  tt__steal_region_deal(r, NULL);
}

void tt__steal_region_deal(tt__steal_region *r, const uint32_t *deal) {
  for (size_t i = 0; i < r->p; i++) {
    size_t front, back;
    tt__block(r->units, r->p, tt__dealt(deal, i), &front, &back);
    tt_atomic_store_relaxed(&r->slots[i].range, TT__RANGE_PACK(front, back));
  }
}

void tt__steal_region_topology(tt__steal_region *r, const tt__topo *s) {
  r->victims = NULL;
  r->llc_end = NULL;
  r->local_end = NULL;
  r->stride = 0;
  r->llc = r->node = NULL;
  if (!s || s->n < r->p)
    return;
  if (s->pinned) {
    r->llc = s->llc;
    r->node = s->node;
  }
  if (s->ordered) {
    r->victims = s->victims;
    r->llc_end = s->llc_end;
    r->local_end = s->local_end;
    r->stride = s->n - 1;
  }
}

static void spin(unsigned pauses) {
  for (unsigned k = 0; k < pauses; k++)
    tt__cpu_relax();
}

/* Runs the units of its own block from the front until it is empty. */
static void drain(const tt__steal_region *r, tt__steal_slot *me) {
  for (;;) {
    uint64_t w = tt_atomic_fetch_add_relaxed(&me->range, (uint64_t)1 << 32);
    uint32_t front = TT__RANGE_FRONT(w), back = TT__RANGE_BACK(w);
    if (front >= back)
      return;
    size_t begin = (size_t)front * r->unit;
    size_t end = r->n - begin > r->unit ? begin + r->unit : r->n;
    r->f(r->ctx, begin, end);
  }
}

static int llc_of(const tt__steal_region *r, size_t i) {
  return (!r->llc || (i == 0 && r->caller_unplaced)) ? -1 : r->llc[i];
}
static int node_of(const tt__steal_region *r, size_t i) {
  return (!r->node || (i == 0 && r->caller_unplaced)) ? -1 : r->node[i];
}

enum { TRY_NOTHING, TRY_SKIPPED, TRY_STOLE };

/* One steal attempt on victim v; on success republishes into self's slot. */
static int try_steal(const tt__steal_region *r, size_t self, size_t v,
                     unsigned passes) {
  tt__steal_slot *me = &r->slots[self], *vs = &r->slots[v];
  if (r->probe)
    r->probe(r->ctx, self, v, 0);
  uint64_t w = tt_atomic_load_relaxed(&vs->range);
  if (TT__RANGE_FRONT(w) >= TT__RANGE_BACK(w))
    return TRY_NOTHING;
  uint32_t owner = tt_atomic_load_relaxed(&vs->state);
  if (owner == TT__OWNER_IDLE && passes < r->protect_passes) {
    me->protected_skips++;
    return TRY_SKIPPED;
  }
  /* Go's back-off, only where it can change the outcome: a running owner
   * claims one unit at a time, so with two or more left the steal happens
   * either way and a pause would only delay it */
  if (owner == TT__OWNER_RUNNING && r->backoff_spins &&
      TT__RANGE_BACK(w) - TT__RANGE_FRONT(w) == 1) {
    me->backoffs++;
    spin(r->backoff_spins);
    if (r->probe)
      r->probe(r->ctx, self, v, 1);
    w = tt_atomic_load_relaxed(&vs->range);
  }
  /* a quarter of what is left on the thief's node, half across nodes */
  int ns = node_of(r, self), nv = node_of(r, v);
  unsigned part = ns >= 0 && nv >= 0 && ns != nv ? 2 : 4;
  uint32_t front, back, q;
  for (;;) {
    front = TT__RANGE_FRONT(w);
    back = TT__RANGE_BACK(w);
    if (front >= back)
      return TRY_NOTHING;
    q = (back - front) / part;
    if (q == 0)
      q = 1;
    if (tt_atomic_cas_acq_rel(&vs->range, &w, TT__RANGE_PACK(front, back - q)))
      break;
  }
  size_t begin = (size_t)(back - q) * r->unit;
  size_t end = r->n - (size_t)(back - 1) * r->unit > r->unit
                   ? (size_t)back * r->unit
                   : r->n;
  uint64_t moved = end - begin;
  me->stats.steals++;
  me->stats.moved += moved;
  int ls = llc_of(r, self), lv = llc_of(r, v);
  if (ls >= 0 && lv >= 0 && ls != lv)
    me->stats.moved_cross_llc += moved;
  if (part == 2)
    me->stats.moved_cross_node += moved;
  if (owner == TT__OWNER_IDLE &&
      tt_atomic_exchange_acq_rel(&vs->rescued, 1) == 0)
    me->stats.rescues++;
  /* own block is empty (we only steal after draining it): republish */
  tt_atomic_store_relaxed(&me->range, TT__RANGE_PACK(back - q, back));
  return TRY_STOLE;
}

/* One pass over entries [from, to) of self's order (row NULL: cyclic).
 * Returns 1 after a steal; sets *skipped when it passed protected work. */
static int scan(const tt__steal_region *r, size_t self, const uint32_t *row,
                size_t from, size_t to, unsigned passes, int *skipped) {
  for (size_t k = from; k < to; k++) {
    size_t v = row ? row[k] : (self + 1 + k) % r->p;
    if (v >= r->p)
      continue; /* beyond this region's participants */
    int rc = try_steal(r, self, v, passes);
    if (rc == TRY_STOLE)
      return 1;
    *skipped |= rc == TRY_SKIPPED;
  }
  return 0;
}

/* One pass over entries [from, to) of self's order that reads every word
 * first and steals from the victim with the most units left (ties: the
 * earlier, nearer one).  Returns 1 after a steal; sets *skipped when it
 * passed protected work.  The reads are hints: the steal is try_steal's
 * CAS, and a victim emptied meanwhile sends the pass round again. */
static int scan_most(const tt__steal_region *r, size_t self,
                     const uint32_t *row, size_t from, size_t to,
                     unsigned passes, int *skipped) {
  tt__steal_slot *me = &r->slots[self];
  for (;;) {
    size_t best = SIZE_MAX;
    uint32_t most = 0;
    for (size_t k = from; k < to; k++) {
      size_t v = row[k];
      if (v >= r->p)
        continue;
      if (r->probe)
        r->probe(r->ctx, self, v, 0);
      uint64_t w = tt_atomic_load_relaxed(&r->slots[v].range);
      uint32_t front = TT__RANGE_FRONT(w), back = TT__RANGE_BACK(w);
      if (front >= back || back - front <= most)
        continue;
      if (tt_atomic_load_relaxed(&r->slots[v].state) == TT__OWNER_IDLE &&
          passes < r->protect_passes) {
        me->protected_skips++;
        *skipped = 1;
        continue;
      }
      most = back - front;
      best = v;
    }
    if (best == SIZE_MAX)
      return 0;
    if (try_steal(r, self, best, passes) == TRY_STOLE)
      return 1;
  }
}

/* Looks for work: a local pass, and only when it took nothing a remote
 * pass.  With an order: the first victim with work in the LLC tier, else
 * the one with the most work in the rest of the node, else the one with
 * the most work on the other nodes.  Returns 1 after a steal (the units are
 * in self's block), 0 after a full scan found nothing and skipped nothing. */
static int steal(const tt__steal_region *r, size_t self, unsigned *passes) {
  const uint32_t *row = NULL;
  size_t count = r->p - 1, local = r->p - 1, llc = 0;
  int tiers = 0;
  if (r->victims && !(self == 0 && r->caller_unplaced)) {
    row = r->victims + self * r->stride;
    count = r->stride;
    local = r->local_end[self];
    if (r->llc_end) {
      llc = r->llc_end[self];
      tiers = 1;
    }
  }
  for (;;) {
    int skipped = 0;
    if (tiers ? scan(r, self, row, 0, llc, *passes, &skipped) ||
                    scan_most(r, self, row, llc, local, *passes, &skipped) ||
                    scan_most(r, self, row, local, count, *passes, &skipped)
              : scan(r, self, row, 0, local, *passes, &skipped) ||
                    scan(r, self, row, local, count, *passes, &skipped))
      return 1;
    if (!skipped)
      return 0;
    /* only protected work left: let late owners arrive, then scan again */
    unsigned shift = *passes < 3 ? *passes : 3;
    spin(32u << shift);
    if (*passes < UINT32_MAX)
      (*passes)++;
  }
}

void tt__steal_participant(tt__steal_region *r, size_t self) {
  tt__steal_slot *me = &r->slots[self];
  unsigned passes = 0;
  tt_atomic_store_relaxed(&me->state, TT__OWNER_RUNNING);
  do
    drain(r, me);
  while (steal(r, self, &passes));
  tt_atomic_store_relaxed(&me->state, TT__OWNER_DONE);
}

void tt__steal_region_stats(const tt__steal_region *r, tt_steal_stats *out) {
  memset(out, 0, sizeof *out);
  for (size_t i = 0; i < r->p; i++) {
    const tt__steal_counts *s = &r->slots[i].stats;
    out->steals += s->steals;
    out->moved += s->moved;
    out->moved_cross_llc += s->moved_cross_llc;
    out->moved_cross_node += s->moved_cross_node;
    out->rescues += s->rescues;
    out->joined +=
        tt_atomic_load_relaxed(&r->slots[i].state) != TT__OWNER_IDLE;
    out->backoffs += r->slots[i].backoffs;
  }
  out->units = r->units;
}
