/* teams: the topology snapshot the team runs with (internal).
 *
 * topology.c builds one immutable snapshot per team start: where each
 * participant is pinned, its last-level cache and NUMA node, and (when every
 * participant has a PU of its own) the victim orders of the steal schedule.
 * The steal schedule, tools/teams-info and the tests read it; the functions
 * below also let tests build snapshots of synthetic machines through the same
 * hwloc code path as team start. */
#ifndef TEAMS_TOPOLOGY_VIEW_H
#define TEAMS_TOPOLOGY_VIEW_H

#include <hwloc.h>
#include <stddef.h>
#include <stdint.h>
#include "order.h"
#include "topology.h"

typedef struct tt__topo {
  size_t n;           /* participants the snapshot was built for */
  tt_pin pin;        /* pinning asked for */
  int pinned;         /* 1 when cpu[] holds a PU for every participant */
  int ordered;        /* 1: victims[] derived from the topology; 0: cyclic */
  int *cpu;           /* [n] PU os index, or -1 */
  int *llc;           /* [n] compact last-level cache id, -1 unknown/none */
  int *node;          /* [n] compact NUMA node id, -1 unknown */
  size_t nnodes;      /* distinct nodes among the participants (>= 1) */
  unsigned *dist;     /* [nnodes^2] node distances, or NULL when unknown */
  uint32_t *victims;  /* [n * (n - 1)] when ordered, else NULL */
  uint32_t *llc_end;  /* [n] when ordered: row entries in the LLC tier */
  uint32_t *local_end;/* [n] when ordered: row entries on the thief's node */
  /* The deal of a range's n blocks (tt__order_deal): participant c runs
   * block deal_block[c], block b is participant deal_owner[b].  NULL when
   * the participants lie in one (node, LLC) group, so that every deal is
   * the identity, when the team is not pinned (nodes unknown), and with
   * TEAMS_BLOCKS=contiguous.  deal_from: the fewest participants whose
   * prefix spans two groups (a smaller p deals as the identity). */
  uint32_t *deal_block, *deal_owner;
  size_t deal_from;
  const char *note;   /* why orders are cyclic or nodes ignored, or NULL */
  /* the machine as read (for teams-info) */
  unsigned machine_pus, machine_cores, machine_llcs, machine_nodes;
  char llc_name[16];  /* e.g. "L3", "" when PUs have no data cache */
} tt__topo;

/* The snapshot of the running team, or NULL (no team, TEAMS_PIN=none, or the
 * topology could not be read).  Snapshots are immutable and live until the
 * process exits (identical ones are shared across team restarts), so a
 * pointer read here stays valid even if the team shuts down meanwhile. */
const tt__topo *tt__topology_current(void);

/* Makes s the current snapshot and returns the one it replaced (NULL: none).
 * For tests that give the running team a placement this machine does not
 * have (a hand-made snapshot with n >= the team's size).  s stays the
 * caller's: swap the old one back before freeing it, and run no region
 * meanwhile from another thread. */
const tt__topo *tt__topology_swap(const tt__topo *s);

/* Time the last tt__topology_init took, in ms. */
double tt__topology_last_ms(void);

/* Creates and loads a topology with the restricted discovery team start uses
 * (no I/O devices, no misc objects, no instruction caches, binding left
 * alone).  From this system when synthetic and xml are NULL, else from a
 * synthetic description or an XML buffer.  Returns 0 or a negative code. */
int tt__topology_load(hwloc_topology_t *out, const char *synthetic,
                      const char *xml, size_t xml_len);

/* Chooses the PUs for n participants among cand (NULL: all allowed PUs).
 * TT_PIN_CORES: one PU per core, cores in topology order, SMT siblings only
 * once every core has one.  TT_PIN_NUMA: participants spread evenly over
 * the NUMA nodes that hold candidate PUs (as the nodes' capacities allow),
 * in contiguous spans: participants 0..k0-1 on the first node, k0..k1-1 on
 * the next, ...; within a node, cores order.  Falls back to cores when the
 * nodes are rejected (overlapping or emulated).  Returns 0, TT_ERANGE when
 * there are fewer candidate PUs than participants (cpus all -1), TT_EINVAL. */
int tt__topology_choose_cpus(hwloc_topology_t t, hwloc_const_cpuset_t cand,
                             size_t n, tt_pin pin, int *cpus);

/* Builds a snapshot for n participants pinned to cpus (entries may be -1).
 * Orders are built only when every participant has a distinct PU and
 * force_cyclic is 0.  Returns 0 or TT_ENOMEM / TT_EINVAL; free with
 * tt__topology_free (snapshots from here are never published). */
int tt__topology_snapshot(hwloc_topology_t t, size_t n, tt_pin pin,
                          const int *cpus, int force_cyclic, tt__topo **out);
void tt__topology_free(tt__topo *s);

/* The description (llc, node, nnodes, dist) of a snapshot, for order.h. */
static inline tt__topo_desc tt__topology_desc(const tt__topo *s) {
  tt__topo_desc d = {s->n, s->llc, s->node, s->nnodes, s->dist};
  return d;
}

#endif
