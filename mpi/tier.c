/* teams::mpi: the rank tier's loop.  The protocol (who writes which word,
 * why no unit runs twice or is lost) opens mpi/steal.c, which binds the
 * words to an MPI window. */
#include "tier.h"

/* Runs the units of its own block from the front until it is empty.  A
 * claim is a CAS, not a fetch-add: see steal.c on MPI's accumulate_ops. */
static void drain(tt__tier *t) {
  uint64_t w = t->read(t->words, t->self);
  for (;;) {
    uint32_t front = TT__TIER_FRONT(w), back = TT__TIER_BACK(w);
    if (front >= back)
      return;
    if (!t->cas(t->words, t->self, &w, TT__TIER_PACK(front + 1, back)))
      continue; /* a thief moved back: w is the new value */
    t->run(t->ctx, front);
    w = TT__TIER_PACK(front + 1, back);
  }
}

static int try_steal(tt__tier *t, int v) {
  uint64_t w = t->read(t->words, v);
  uint32_t front, back, q;
  for (;;) {
    front = TT__TIER_FRONT(w);
    back = TT__TIER_BACK(w);
    if (front >= back)
      return 0;
    q = (back - front) / 4;
    if (q == 0)
      q = 1;
    if (t->cas(t->words, v, &w, TT__TIER_PACK(front, back - q)))
      break;
  }
  /* Own block is empty (a rank steals only after draining it), and only
   * this rank changes an empty word: the CAS from the value read succeeds. */
  uint64_t mine = t->read(t->words, t->self);
  while (!t->cas(t->words, t->self, &mine, TT__TIER_PACK(back - q, back)))
    ;
  return 1;
}

/* A pass over this node's ranks, then, only if it took nothing, over the
 * others.  Returns 1 after a steal, 0 when every other block was empty. */
static int steal(tt__tier *t) {
  for (int k = 0; k < t->nvictims; k++) {
    if (try_steal(t, t->order[k])) {
      if (k < t->local_end)
        t->steals_node++;
      else
        t->steals_other++;
      return 1;
    }
  }
  return 0;
}

void tt__tier_run(tt__tier *t) {
  do
    drain(t);
  while (steal(t));
}
