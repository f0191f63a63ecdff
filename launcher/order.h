/* teams: victim orders for the steal schedule, and the deal of a range's
 * blocks over the participants (internal).
 *
 * A pure function of a small description of where the participants sit:
 * each participant's last-level cache and NUMA node, and the node distances.
 * topology.c fills the description from hwloc; tests fill it from synthetic
 * machines.  Nothing here touches hwloc, the team or the environment.
 *
 * Order of participant i (the victims it scans, n - 1 of them):
 *   tier 0  participants sharing i's last-level cache within i's node,
 *   tier 1  the rest of i's node,
 *   tier 2+ the other nodes, nearest first; nodes at equal distance from i's
 *           node share one tier.
 * Within tiers 0 and 1 the victims are rotated to start after i (i + 1, i + 2,
 * ... wrapping), so neighbours do not all scan the same victim first.  A
 * remote tier lists its nodes starting after i's node (cyclically by node
 * index), participants by index within a node, and is rotated by i's rank
 * within its node: the thieves of one node start on different remote victims,
 * and the thieves of different nodes start on different remote nodes. */
#ifndef TEAMS_ORDER_H
#define TEAMS_ORDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt__topo_desc {
  size_t n;              /* participants */
  const int *llc;        /* [n] id of the participant's last-level cache, or
                            -1 when its PU has no data cache (shares none) */
  const int *node;       /* [n] NUMA node in [0, nnodes) */
  size_t nnodes;         /* >= 1 */
  const unsigned *dist;  /* [nnodes * nnodes], row = from, or NULL: all remote
                            nodes at one distance */
} tt__topo_desc;

/* Tier of victim v in thief i's order: 0 (same LLC and node), 1 (same node),
 * 2 + k for the k-th distinct remote distance from i's node.  d must be valid
 * (tt__order_build accepted it); i != v. */
unsigned tt__order_tier(const tt__topo_desc *d, size_t i, size_t v);

/* Builds every participant's order.  victims: n rows of n - 1 entries
 * (row i at victims + i * (n - 1)); llc_end[i]: entries of row i in tier 0;
 * local_end[i]: entries in tiers 0 and 1 (i's node).  Returns 0, or TT_EINVAL
 * for an invalid description (n == 0, n > UINT32_MAX, nnodes == 0, a node out
 * of range), or TT_ENOMEM. */
int tt__order_build(const tt__topo_desc *d, uint32_t *victims,
                    uint32_t *llc_end, uint32_t *local_end);

/* Deals the p blocks of a range, in range order, to participants 0..p-1
 * (p <= d->n): block[c] is participant c's block, owner[b] the participant of
 * block b.  Blocks go to nodes in proportion to their participants and as
 * evenly interleaved as those shares allow (each next block to the node
 * furthest below its share: with two equal nodes, even blocks on node 0, odd
 * on node 1); within a node, a node's next block to its LLC furthest below
 * its share; within an LLC, to its participants in index order (order.c
 * says how close to its share each prefix keeps a node).  So a cost
 * that trends along the range (a triangular grid) is split evenly between
 * the nodes and between the LLCs of a node, and stealing stays near (see
 * range.c).  With all p on one node and one LLC the deal is the identity.
 * Participants whose llc is -1 form one group per node.  Returns 1 when the
 * deal is the identity (block and owner are still filled), 0 otherwise,
 * TT_EINVAL for p == 0, p > d->n or an invalid description, or TT_ENOMEM. */
int tt__order_deal(const tt__topo_desc *d, size_t p, uint32_t *block,
                   uint32_t *owner);

#endif
