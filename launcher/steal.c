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
 *                            last q units, q = max(1, (back - front) / 4).
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
 * stealing from a running P").  Before stealing from a block whose owner
 * is RUNNING, a thief pauses briefly (backoff_spins pauses) and re-reads the
 * word: the owner may be about to take its last units itself, and a steal
 * then would only move them.  Before stealing from an IDLE owner it does not
 * wait: that owner cannot take the work back, so waiting is waste.
 *
 * Victim order and the crossing rule.  A thief scans its order (order.h):
 * first the victims on its node (LLC tier, then the rest of the node), and
 * only after that local pass found nothing, the remote tiers by distance.  It
 * steals from the first victim with work, republishes what it took in its
 * own block (so thieves near it can split it further), drains it, and then
 * starts again from the top of its order: local passes repeat while they
 * find work, and after a remote steal the next scan starts at home.  Without
 * an order (unpinned team, or a caller that is not the pinned thread that
 * started the team) the order is cyclic: i + 1, i + 2, ... mod p.
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
    size_t front, back;
    tt__block(units, p, i, &front, &back);
    memset(&slots[i], 0, sizeof slots[i]);
    tt_atomic_store_relaxed(&slots[i].range, TT__RANGE_PACK(front, back));
    tt_atomic_store_relaxed(&slots[i].state, TT__OWNER_IDLE);
    tt_atomic_store_relaxed(&slots[i].rescued, 0);
  }
}

void tt__steal_region_topology(tt__steal_region *r, const tt__topo *s) {
  r->victims = NULL;
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
  if (owner == TT__OWNER_RUNNING && r->backoff_spins) {
    me->backoffs++;
    spin(r->backoff_spins);
    if (r->probe)
      r->probe(r->ctx, self, v, 1);
    w = tt_atomic_load_relaxed(&vs->range);
  }
  uint32_t front, back, q;
  for (;;) {
    front = TT__RANGE_FRONT(w);
    back = TT__RANGE_BACK(w);
    if (front >= back)
      return TRY_NOTHING;
    q = (back - front) / 4;
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
  int ns = node_of(r, self), nv = node_of(r, v);
  if (ns >= 0 && nv >= 0 && ns != nv)
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

/* Looks for work: a local pass, and only when it took nothing a remote
 * pass.  Returns 1 after a steal (the units are in self's block), 0 after a
 * full scan found nothing and skipped nothing. */
static int steal(const tt__steal_region *r, size_t self, unsigned *passes) {
  const uint32_t *row = NULL;
  size_t count = r->p - 1, local = r->p - 1;
  if (r->victims && !(self == 0 && r->caller_unplaced)) {
    row = r->victims + self * r->stride;
    count = r->stride;
    local = r->local_end[self];
  }
  for (;;) {
    int skipped = 0;
    if (scan(r, self, row, 0, local, *passes, &skipped) ||
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
    const tt_steal_stats *s = &r->slots[i].stats;
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
