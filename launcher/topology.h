/* teams: the machine's topology as the team sees it (internal).
 *
 * Read once at team start through hwloc (restricted discovery), it gives the
 * CPU each participant is pinned to (TEAMS_PIN) and, when every participant
 * has a PU of its own, each participant's victim order for the steal
 * schedule.  Implemented in topology.c; the snapshot it keeps is declared in
 * topology-view.h, and the order builder, a pure function of a small
 * description, in order.h. */
#ifndef TEAMS_TOPOLOGY_H
#define TEAMS_TOPOLOGY_H

#include <stddef.h>

#include "teams/team.h" /* tt_pin: TEAMS_PIN's values */

/* Called once by team start, under the team's lifecycle lock, before any
 * worker exists.  Reads the topology; fills cpus[0..n) with the PU (OS index)
 * participant i is to be pinned to, or -1 for all when pin is TT_PIN_NONE or
 * pinning is impossible; builds the victim orders for n participants (cyclic
 * unless every participant has its own PU).  *ms receives the time taken.
 * Returns 0, or a negative code when the topology could not be read (cpus are
 * then all -1 and the orders cyclic: the team still starts). */
int tt__topology_init(size_t n, tt_pin pin, int *cpus, double *ms);
/* The same, choosing PUs among cand (the team's CPUs, cpuset.h) instead of
 * the calling thread's binding; cand NULL is tt__topology_init. */
struct tt__cpumask;
int tt__topology_init_within(size_t n, tt_pin pin,
                             const struct tt__cpumask *cand, int *cpus,
                             double *ms);

/* Frees what tt__topology_init built.  Called by shutdown, workers joined. */
void tt__topology_fini(void);

#endif
