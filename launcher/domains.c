/* teams: the affinity domains of the team's participants (teams-driver.h,
 * tt__team_domains): for each participant, which NUMA node and which L1-L4
 * cache it runs under, as the PoCL driver's sub-devices by affinity domain
 * need them.
 *
 * A participant has domains only where it sits on a PU: the running team's
 * pinning (TEAMS_PIN=cores|numa, the snapshot of topology.c) or, for tests,
 * the pinning TEAMS_PIN=numa would choose on a synthetic machine.  NUMA
 * nodes are the snapshot's (overlapping or emulated nodes are already
 * rejected there, and count as one node); caches are read from hwloc for the
 * participants' PUs.  Reading the topology is a restricted hwloc discovery
 * (topology.c, "Cost"; docs/measurements.md, "Team start"), skipped for an
 * unpinned team: callers ask once, when a device is set up. */
#include <stdlib.h>

#include "team-internal.h"
#include "teams/errors.h"
#include "topology-view.h"

static const hwloc_obj_type_t cache_type[TT__DOMAINS] = {
    [TT__DOMAIN_L4] = HWLOC_OBJ_L4CACHE,
    [TT__DOMAIN_L3] = HWLOC_OBJ_L3CACHE,
    [TT__DOMAIN_L2] = HWLOC_OBJ_L2CACHE,
    [TT__DOMAIN_L1] = HWLOC_OBJ_L1CACHE,
};

/* ids for participants [0, n) pinned to cpus, nodes from s. */
static void fill(hwloc_topology_t t, const tt__topo *s, size_t n,
                 const int *cpus, int *ids) {
  for (size_t i = 0; i < n; i++) {
    ids[TT__DOMAIN_NUMA * n + i] = s->node[i];
    hwloc_obj_t pu = cpus[i] >= 0
                         ? hwloc_get_pu_obj_by_os_index(t, (unsigned)cpus[i])
                         : NULL;
    for (int k = TT__DOMAIN_L4; k < TT__DOMAINS; k++) {
      hwloc_obj_t c =
          pu ? hwloc_get_ancestor_obj_by_type(t, cache_type[k], pu) : NULL;
      ids[(size_t)k * n + i] = c ? (int)c->logical_index : -1;
    }
  }
}

int tt__team_domains(size_t n, const char *synthetic, int *ids) {
  if (n == 0 || !ids || n > SIZE_MAX / TT__DOMAINS / sizeof *ids)
    return TT_EINVAL;
  for (size_t i = 0; i < TT__DOMAINS * n; i++)
    ids[i] = -1;
  const tt__topo *live = NULL;
  if (!synthetic) {
    size_t size = tt_team_size(); /* starts the team: its snapshot */
    live = tt__topology_current();
    if (n > size)
      return TT_EINVAL;
    if (!live || !live->pinned || live->n < n)
      return TT_ENOSYS; /* unpinned participants move between domains */
  }
  hwloc_topology_t t = NULL;
  int rc = tt__topology_load(&t, synthetic, NULL, 0);
  if (rc < 0)
    return rc;
  if (live) {
    fill(t, live, n, live->cpu, ids);
  } else {
    int *cpus = malloc(n * sizeof *cpus);
    tt__topo *s = NULL;
    rc = cpus ? tt__topology_choose_cpus(t, NULL, n, TT_PIN_NUMA, cpus)
              : TT_ENOMEM;
    if (rc == 0)
      rc = tt__topology_snapshot(t, n, TT_PIN_NUMA, cpus, 1, &s);
    if (rc == 0 && !s->pinned)
      rc = TT_ENOSYS;
    if (rc == 0)
      fill(t, s, n, cpus, ids);
    if (s)
      tt__topology_free(s);
    free(cpus);
  }
  hwloc_topology_destroy(t);
  return rc;
}
