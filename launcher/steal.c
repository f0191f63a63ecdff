/* teams: the steal schedule (one participant's loop).
 *
 * ---------------------------------------------------------------------------
 * Protocol
 * ---------------------------------------------------------------------------
 * The rules are docs/protocol.md items 25-29, each cited where the code
 * keeps it.  A range of `units` units is cut into p blocks, one per
 * participant, and block i is the one word slot[i].range (protocol 25).
 * Who writes which word:
 *   slot[i].range    owner i: fetch_add of front, one unit per claim
 *                    (protocol 26); a plain store that republishes stolen
 *                    units, only while its block is empty (protocol 27);
 *                    thief t: CAS of back, taking the last q units
 *                    (protocol 26).
 *   slot[i].state    owner i only: IDLE -> RUNNING -> DONE (protocol 29).
 *   slot[i].rescued  thieves: exchange 0 -> 1, a rescue counted once
 *                    (protocol 29).
 *   slot[i].stats, .backoffs, .protected_skips
 *                    participant i only, plain; summed by the caller after
 *                    the region (protocol 29).
 * Which victim a thief picks, and how much it takes, is steal()'s rule
 * below; the measurements behind the protection, the back-off and the
 * victim rule are in docs/measurements.md, "The steal schedule".
 *
 * Rejected: separate front and back words with a fence-based owner path (the
 * THE protocol) would save the owner's RMW, but needs a seq_cst fence per
 * claim instead, and a range, unlike a deque, never grows at the owner's end,
 * so one word and one RMW is both simpler and as fast; 128-bit words for
 * 64-bit indices need cmpxchg16b (libatomic, no plain loads), so ranges with
 * more than 2^32 - 2 grains use a larger unit (a multiple of the grain). */
#include "steal.h"

#include <string.h>
#include "blocks.h"
#include "prim.h"
#include "team-internal.h"
#include "topology-view.h"

/* A unit of several grains when the range has more grains than max_units,
 * so that front never passes TT__STEAL_MAX_UNITS + 1 (protocol 27). */
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

/* Runs the units of its own block from the front until it is empty: one
 * fetch_add per unit, run only when it was below back (protocol 26); it
 * stops at the first empty claim, which leaves front = back + 1 (protocol
 * 27). */
static void drain(const tt__steal_region *r, tt__steal_slot *me) {
  for (;;) {
    uint64_t w = tt_atomic_fetch_add_relaxed(&me->range, (uint64_t)1 << 32);
    uint32_t front = TT__RANGE_FRONT(w), back = TT__RANGE_BACK(w);
    if (front >= back)
      return;
    size_t begin = (size_t)front * r->unit;
    size_t end = r->n - begin > r->unit ? begin + r->unit : r->n;
    r->f(r->ctx, begin, end);
    me->ran += end - begin;
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
  if (owner == TT__OWNER_IDLE && passes < r->protect_passes &&
      !tt__participant_late(v)) {
    /* startup protection (protocol 29), not for an owner that was asleep
     * when the region was published: it comes after a wake-up, if at all */
    me->protected_skips++;
    return TRY_SKIPPED;
  }
  /* Go's back-off (Go commit 868c8b3, "runtime: only back off before
   * stealing from a running P"), only where it can change the outcome
   * (protocol 29): a running owner is about to take its last unit itself,
   * and a steal would only move it; it claims one unit at a time, so with
   * two or more left the steal happens either way, and an IDLE owner
   * cannot take it back */
  if (owner == TT__OWNER_RUNNING && r->backoff_spins &&
      TT__RANGE_BACK(w) - TT__RANGE_FRONT(w) == 1) {
    me->backoffs++;
    spin(r->backoff_spins);
    if (r->probe)
      r->probe(r->ctx, self, v, 1);
    w = tt_atomic_load_relaxed(&vs->range);
  }
  /* a quarter of what is left on the thief's node, half across nodes; the
   * CAS claims only from the value q was computed from (protocol 26) */
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
  /* a rescue, counted once per block (protocol 29) */
  if (owner == TT__OWNER_IDLE &&
      tt_atomic_exchange_acq_rel(&vs->rescued, 1) == 0)
    me->stats.rescues++;
  /* own block is empty (we only steal after draining it): republish
   * (protocol 27) */
  tt_atomic_store_relaxed(&me->range, TT__RANGE_PACK(back - q, back));
  return TRY_STOLE;
}

/* One pass over entries [from, to) of self's order (row NULL: cyclic),
 * first victim with work.  Returns 1 after a steal; sets *skipped when it
 * passed protected work, so that the pass is no full scan (protocol 28). */
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
 * CAS, and a victim emptied meanwhile sends the pass round again, so a pass
 * that returns 0 read every block of its tier (protocol 29). */
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
          passes < r->protect_passes && !tt__participant_late(v)) {
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
 * pass.  With an order (order.h), tier by tier:
 *   LLC tier      the first victim with work, a quarter of its remainder: a
 *                 neighbour in the same cache, cheap to read and take from;
 *   rest of node  every word read first, then a quarter from the victim
 *                 with the most units left (ties: the nearer);
 *   other nodes   likewise the one with the most units left on any other
 *                 node (ties: the nearer tier), and half of it.
 * The most loaded victim is where the work is (the one that would finish
 * last) and gives big pieces, so fewer steals, and the reads that find it
 * do not depend on each other, so they overlap.  A crossing costs a far
 * transfer and the remote data, and the thief's node mates split what it
 * republishes, so it takes half.  Without LLC tiers (llc_end NULL) each
 * part is first-found; without an order (an unpinned team, or a caller that
 * is not the pinned thread that started the team) the order is cyclic,
 * i + 1, i + 2, ... mod p, first victim with work, a quarter.  Which victim
 * a pass picks is a hint (protocol 29).  Rejected: most-left in the LLC
 * tier too, half everywhere, a crossing threshold, sampling remote victims
 * (docs/measurements.md, "The steal schedule").
 * Returns 1 after a steal (the units are in self's block, where thieves
 * near it can split them further; the caller drains it and looks again
 * from the top of its order, so local passes repeat while they find work
 * and a remote steal is followed by a scan at home), 0 after a full scan
 * found nothing and skipped nothing (protocol 28). */
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
    /* only protected work left: let late owners arrive, then scan again
     * (protocol 29) */
    unsigned shift = *passes < 3 ? *passes : 3;
    spin(32u << shift);
    if (*passes < UINT32_MAX)
      (*passes)++;
  }
}

/* Drains its own block, then steals, and returns only after a full scan
 * found nothing (protocol 28); its state, a hint, is RUNNING from entry and
 * DONE at exit (protocol 29). */
void tt__steal_participant(tt__steal_region *r, size_t self) {
  tt__steal_slot *me = &r->slots[self];
  unsigned passes = 0;
  tt_atomic_store_relaxed(&me->state, TT__OWNER_RUNNING);
  do
    drain(r, me);
  while (steal(r, self, &passes));
  tt_atomic_store_relaxed(&me->state, TT__OWNER_DONE);
}

/* After the region: the team's completion orders the participants' plain
 * counters before these reads (protocol 29). */
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
