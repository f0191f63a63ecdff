/* Tests: a hand-made placement whose deal is not the identity, for the
 * running team of this machine (white-box: needs topology-view.h).
 *
 * Three participants, on nodes 1, 0, 0 (LLCs 1, 0, 0): the deal of three
 * blocks is {1, 0, 2} (block 0 to node 0, the furthest below its share),
 * and the deal of its two-participant prefix, nodes 1 and 0, is {1, 0}.  So
 * on a team of two, participant 1 runs the first block of a range and
 * participant 0 the second.  Installed with tt__topology_swap, which the
 * test must undo (dealt_remove) before the struct goes. */
#ifndef TEAMS_TESTS_DEALT_UTIL_H
#define TEAMS_TESTS_DEALT_UTIL_H

#include <criterion/criterion.h>
#include <string.h>
#include "order.h"
#include "topology-view.h"

typedef struct dealt_topo {
  tt__topo s;
  int llc[3], node[3], cpu[3];
  uint32_t block[3], owner[3];
  const tt__topo *old;
} dealt_topo;

static inline void dealt_install(dealt_topo *d) {
  memset(d, 0, sizeof *d);
  d->llc[0] = d->node[0] = 1;
  d->cpu[0] = d->cpu[1] = d->cpu[2] = -1;
  d->s.n = 3;
  d->s.pinned = 1;
  d->s.cpu = d->cpu;
  d->s.llc = d->llc;
  d->s.node = d->node;
  d->s.nnodes = 2;
  tt__topo_desc desc = tt__topology_desc(&d->s);
  cr_assert_eq(tt__order_deal(&desc, 3, d->block, d->owner), 0);
  cr_assert(d->block[0] == 1 && d->block[1] == 0 && d->block[2] == 2);
  d->s.deal_block = d->block;
  d->s.deal_owner = d->owner;
  d->s.deal_from = 2;
  d->old = tt__topology_swap(&d->s);
}

static inline void dealt_remove(dealt_topo *d) {
  cr_assert_eq(tt__topology_swap(d->old), &d->s);
}

#endif
