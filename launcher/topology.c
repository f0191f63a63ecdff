/* teams: the machine's topology, read once at team start (see topology.h).
 *
 * What is read: every PU's highest-level data or unified cache (its "LLC"),
 * the NUMA nodes that hold CPUs, and the nodes' latency distances.  Nodes
 * are rejected (the machine is treated as one node) when their CPU sets
 * overlap, as the emulated nodes of a Raspberry Pi 5 do, or when two distinct
 * nodes are no farther apart than a node from itself, as with x86
 * `numa=fake` nodes carved out of one physical node.  Memory-only nodes (no
 * CPUs: CXL, HBM, NVDIMM) are ignored.
 *
 * Pinning (TEAMS_PIN), among the allowed PUs within the team's CPUs
 * (cpuset.h):
 *   cores  participant i on the i-th core in topology order, one PU per core;
 *          SMT siblings only once every core has one participant.
 *   numa   participants spread evenly over the NUMA nodes that hold CPUs (as
 *          far as each node has PUs), in contiguous spans: 0..k0-1 on the
 *          first node, k0..k1-1 on the next, ...; cores order within a node.
 *          Contiguous spans make a node's participants a span of indices: a
 *          sub-team of one node (the PoCL driver's sub-devices, which keep
 *          block k on member k) is then one span.  A range's blocks are dealt
 *          over the nodes and LLCs instead (the snapshot's deal, order.h).
 *          Rejected nodes: as cores.
 *   Fewer candidate PUs than participants: nobody is pinned.
 * Victim orders are built only when every participant has a PU of its own
 * (and TEAMS_VICTIMS is not "cyclic", a switch for measuring locality against
 * the cyclic order on the same pinning).
 *
 * Cost.  hwloc's discovery is restricted: no I/O devices, no misc objects,
 * no instruction caches, and HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING, which
 * also skips the x86 CPUID backend (it binds to every PU in turn); it takes
 * about two thirds of a full discovery's time (docs/measurements.md).  The
 * whole tt__topology_init is reported by tt__topology_last_ms() and
 * tt_team_info.start_ms.  With
 * TEAMS_PIN=none nothing is read at all: unpinned participants get cyclic
 * orders, so the topology would be unused.
 *
 * Snapshots (topology-view.h) are immutable and kept until exit, because a
 * region that runs serially on a thread not holding the team may still read
 * one while another thread shuts the team down; a restart with the same
 * configuration reuses the identical snapshot, so restarts do not grow
 * memory.  All of this runs under the team's lifecycle lock (team start and
 * shutdown), which serializes init, fini and the snapshot list. */
#include "topology-view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "atomic.h"
#include "cpumask.h"
#include "settings.h"
#include "teams/errors.h"

/* ---- published snapshot ------------------------------------------------- */

/* Written by tt__topology_init/fini under the lifecycle lock, read by any
 * region: release on publish so readers see a fully built snapshot. */
static _Atomic(tt__topo *) current;
static double last_ms;

/* every snapshot ever published (lifecycle lock) */
typedef struct kept_link { tt__topo *s; struct kept_link *next; } kept_link;
static kept_link *kept_list;

const tt__topo *tt__topology_current(void) {
  return tt_atomic_load_acquire(&current);
}
double tt__topology_last_ms(void) { return last_ms; }

const tt__topo *tt__topology_swap(const tt__topo *s) {
  const tt__topo *old = tt_atomic_load_acquire(&current);
  tt_atomic_store_release(&current, (tt__topo *)s);
  return old;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- loading ------------------------------------------------------------ */

int tt__topology_load(hwloc_topology_t *out, const char *synthetic,
                      const char *xml, size_t xml_len) {
  hwloc_topology_t t;
  if (!out)
    return TT_EINVAL;
  *out = NULL;
  if (hwloc_topology_init(&t) < 0)
    return TT_ENOMEM;
  int rc = 0;
  rc |= hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
  rc |= hwloc_topology_set_type_filter(t, HWLOC_OBJ_MISC,
                                       HWLOC_TYPE_FILTER_KEEP_NONE);
  rc |= hwloc_topology_set_icache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
  rc |= hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING |
                                        HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS |
                                        HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS);
  if (!rc && synthetic)
    rc = hwloc_topology_set_synthetic(t, synthetic);
  else if (!rc && xml)
    rc = xml_len > (size_t)INT32_MAX
             ? -1
             : hwloc_topology_set_xmlbuffer(t, xml, (int)xml_len);
  if (!rc)
    rc = hwloc_topology_load(t);
  if (rc) {
    hwloc_topology_destroy(t);
    return TT_EINVAL;
  }
  *out = t;
  return 0;
}

/* ---- NUMA nodes --------------------------------------------------------- */

/* The NUMA nodes that hold CPUs, in logical order, into nodes[] (malloc'd).
 * *count = 0 with *why set when the nodes are rejected. */
static int cpu_nodes(hwloc_topology_t t, hwloc_obj_t **nodes, size_t *count,
                     const char **why) {
  int total = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  *nodes = NULL;
  *count = 0;
  *why = NULL;
  if (total <= 0)
    return 0;
  hwloc_obj_t *v = malloc((size_t)total * sizeof *v);
  if (!v)
    return TT_ENOMEM;
  size_t k = 0;
  for (int i = 0; i < total; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
    if (o && o->cpuset && !hwloc_bitmap_iszero(o->cpuset))
      v[k++] = o;
  }
  for (size_t a = 0; a < k && !*why; a++)
    for (size_t b = a + 1; b < k && !*why; b++)
      if (hwloc_bitmap_intersects(v[a]->cpuset, v[b]->cpuset))
        *why = "overlapping NUMA nodes ignored";
  if (!*why && k > 1) {
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr >= 1 && d) {
      for (size_t a = 0; a < k && !*why; a++)
        for (size_t b = 0; b < k && !*why; b++) {
          hwloc_uint64_t ab, ba, aa, tmp;
          if (a == b ||
              hwloc_distances_obj_pair_values(d, v[a], v[b], &ab, &ba) < 0 ||
              hwloc_distances_obj_pair_values(d, v[a], v[a], &aa, &tmp) < 0)
            continue;
          if (ab <= aa)
            *why = "emulated NUMA nodes ignored (remote distance == local)";
        }
      hwloc_distances_release(t, d);
    }
  }
  if (*why)
    k = 0;
  *nodes = v;
  *count = k;
  return 0;
}

/* ---- choosing PUs ------------------------------------------------------- */

/* PUs of `within` in cores order: the first PU of every core (cores in
 * logical order), then the second, ...  Returns how many were written. */
static size_t pus_in_core_order(hwloc_topology_t t, hwloc_const_cpuset_t within,
                                int *out, size_t max) {
  int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  hwloc_obj_type_t unit = ncores > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  int nunits = hwloc_get_nbobjs_by_type(t, unit);
  size_t k = 0;
  for (unsigned round = 0;; round++) {
    size_t before = k;
    for (int c = 0; c < nunits && k < max; c++) {
      hwloc_obj_t o = hwloc_get_obj_by_type(t, unit, (unsigned)c);
      unsigned seen = 0;
      int id;
      hwloc_bitmap_foreach_begin(id, o->cpuset) {
        if (hwloc_bitmap_isset(within, (unsigned)id) && seen++ == round) {
          out[k++] = id;
          break;
        }
      }
      hwloc_bitmap_foreach_end();
    }
    if (k == before || k == max)
      return k;
  }
}

int tt__topology_choose_cpus(hwloc_topology_t t, hwloc_const_cpuset_t cand,
                             size_t n, tt_pin pin, int *cpus) {
  if (!t || !cpus || n == 0)
    return TT_EINVAL;
  for (size_t i = 0; i < n; i++)
    cpus[i] = -1;
  if (pin == TT_PIN_NONE)
    return 0;
  if (pin != TT_PIN_CORES && pin != TT_PIN_NUMA)
    return TT_EINVAL;
  hwloc_bitmap_t c = hwloc_bitmap_dup(cand ? cand
                                           : hwloc_topology_get_allowed_cpuset(t));
  if (!c)
    return TT_ENOMEM;
  hwloc_bitmap_and(c, c, hwloc_topology_get_allowed_cpuset(t));
  int w = hwloc_bitmap_weight(c);
  if (w < 0 || (size_t)w < n) {
    hwloc_bitmap_free(c);
    return TT_ERANGE;
  }
  int rc = 0;
  hwloc_obj_t *nodes = NULL;
  size_t nn = 0;
  const char *why;
  if (pin == TT_PIN_NUMA && (rc = cpu_nodes(t, &nodes, &nn, &why)) < 0)
    goto out;
  if (pin == TT_PIN_CORES || nn <= 1) {
    if (pus_in_core_order(t, c, cpus, n) < n)
      rc = TT_ERANGE;
    goto out;
  }
  {
    /* per node: candidate PUs in cores order, then counts dealt round-robin
     * over the nodes that still have room */
    int **lists = calloc(nn, sizeof *lists);
    size_t *cap = calloc(nn, sizeof *cap), *cnt = calloc(nn, sizeof *cnt);
    hwloc_bitmap_t within = hwloc_bitmap_alloc();
    if (!lists || !cap || !cnt || !within)
      rc = TT_ENOMEM;
    for (size_t k = 0; k < nn && !rc; k++) {
      if (!(lists[k] = malloc(n * sizeof **lists))) {
        rc = TT_ENOMEM;
        break;
      }
      hwloc_bitmap_and(within, c, nodes[k]->cpuset);
      cap[k] = pus_in_core_order(t, within, lists[k], n);
    }
    for (size_t i = 0, k = 0; i < n && !rc; i++) {
      size_t tries = 0;
      while (cnt[k] == cap[k] && tries++ < nn)
        k = (k + 1) % nn;
      if (cnt[k] == cap[k]) {
        rc = TT_ERANGE; /* PUs outside every node */
        break;
      }
      cnt[k]++;
      k = (k + 1) % nn;
    }
    for (size_t k = 0, i = 0; k < nn && !rc; k++)
      for (size_t j = 0; j < cnt[k]; j++)
        cpus[i++] = lists[k][j];
    for (size_t k = 0; lists && k < nn; k++)
      free(lists[k]);
    free(lists), free(cap), free(cnt);
    hwloc_bitmap_free(within);
  }
out:
  if (rc)
    for (size_t i = 0; i < n; i++)
      cpus[i] = -1;
  free(nodes);
  hwloc_bitmap_free(c);
  return rc;
}

/* ---- snapshots ---------------------------------------------------------- */

void tt__topology_free(tt__topo *s) {
  if (!s)
    return;
  free(s->cpu), free(s->llc), free(s->node), free(s->dist);
  free(s->victims), free(s->llc_end), free(s->local_end);
  free(s->deal_block), free(s->deal_owner);
  free(s);
}

/* The highest data/unified cache above pu, or NULL. */
static hwloc_obj_t llc_of(hwloc_obj_t pu) {
  hwloc_obj_t llc = NULL;
  for (hwloc_obj_t o = pu->parent; o; o = o->parent)
    if (hwloc_obj_type_is_dcache(o->type))
      llc = o;
  return llc;
}

static void machine_summary(hwloc_topology_t t, tt__topo *s, size_t nodes) {
  s->machine_pus = (unsigned)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  int nc = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  s->machine_cores = nc > 0 ? (unsigned)nc : s->machine_pus;
  s->machine_nodes = (unsigned)nodes;
  hwloc_obj_t pu = hwloc_get_obj_by_type(t, HWLOC_OBJ_PU, 0);
  hwloc_obj_t llc = pu ? llc_of(pu) : NULL;
  s->llc_name[0] = 0;
  s->machine_llcs = 0;
  if (llc) {
    hwloc_obj_type_snprintf(s->llc_name, sizeof s->llc_name, llc, 0);
    int k = hwloc_get_nbobjs_by_depth(t, llc->depth);
    s->machine_llcs = k > 0 ? (unsigned)k : 0;
  }
}

int tt__topology_snapshot(hwloc_topology_t t, size_t n, tt_pin pin,
                          const int *cpus, int force_cyclic, tt__topo **out) {
  if (!t || !cpus || !out || n == 0 || n > UINT32_MAX)
    return TT_EINVAL;
  *out = NULL;
  tt__topo *s = calloc(1, sizeof *s);
  hwloc_obj_t *nodes = NULL, *llcs = NULL;
  size_t nn = 0, nllc = 0;
  int rc = TT_ENOMEM;
  if (!s)
    return rc;
  s->n = n;
  s->pin = pin;
  s->nnodes = 1;
  s->cpu = malloc(n * sizeof *s->cpu);
  s->llc = malloc(n * sizeof *s->llc);
  s->node = malloc(n * sizeof *s->node);
  llcs = malloc(n * sizeof *llcs);
  if (!s->cpu || !s->llc || !s->node || !llcs)
    goto fail;
  const char *why = NULL;
  if ((rc = cpu_nodes(t, &nodes, &nn, &why)) < 0)
    goto fail;
  s->note = why;
  machine_summary(t, s, nn ? nn : 1);

  /* participants -> PU, LLC, node (node ids compacted below) */
  int pinned = 1;
  for (size_t i = 0; i < n; i++) {
    s->cpu[i] = cpus[i];
    s->llc[i] = -1;
    s->node[i] = -1;
    hwloc_obj_t pu = cpus[i] >= 0
                         ? hwloc_get_pu_obj_by_os_index(t, (unsigned)cpus[i])
                         : NULL;
    if (!pu) {
      pinned = 0;
      continue;
    }
    for (size_t j = 0; j < i; j++)
      if (s->cpu[j] == cpus[i])
        pinned = 0; /* shares a PU: no PU of its own */
    hwloc_obj_t llc = llc_of(pu);
    if (llc) {
      size_t k = 0;
      while (k < nllc && llcs[k] != llc)
        k++;
      if (k == nllc)
        llcs[nllc++] = llc;
      s->llc[i] = (int)k;
    }
    s->node[i] = 0;
    for (size_t k = 0; k < nn; k++)
      if (hwloc_bitmap_isset(nodes[k]->cpuset, (unsigned)cpus[i]))
        s->node[i] = (int)k + 1; /* +1: 0 marks "in no node" for now */
  }
  s->pinned = pinned;

  /* compact the node ids to the nodes holding participants; a participant in
   * no CPU-bearing node makes the node information unusable */
  int *map = calloc(nn + 1, sizeof *map);
  if (!map) {
    rc = TT_ENOMEM;
    goto fail;
  }
  for (size_t k = 0; k <= nn; k++)
    map[k] = -1;
  int lost = 0;
  for (size_t i = 0; i < n; i++)
    if (s->node[i] == 0)
      lost = 1;
  size_t used = 0;
  if (!lost) {
    for (size_t k = 1; k <= nn; k++) {
      for (size_t i = 0; i < n; i++)
        if (s->node[i] == (int)k) {
          map[k] = (int)used++;
          break;
        }
    }
    for (size_t i = 0; i < n; i++)
      if (s->node[i] > 0)
        s->node[i] = map[s->node[i]];
  } else {
    for (size_t i = 0; i < n; i++)
      s->node[i] = s->node[i] < 0 ? -1 : 0;
    used = 1;
    if (nn > 0 && !s->note)
      s->note = "a participant's PU is in no NUMA node: nodes ignored";
  }
  s->nnodes = used ? used : 1;

  /* distances between the used nodes, in the compact numbering */
  if (s->nnodes > 1) {
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    hwloc_obj_t *byid = calloc(s->nnodes, sizeof *byid);
    if (byid &&
        hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr >= 1 && d) {
      for (size_t k = 1; k <= nn; k++)
        for (size_t i = 0; i < n; i++)
          if (map[k] >= 0 && (size_t)map[k] < s->nnodes && s->cpu[i] >= 0 &&
              hwloc_bitmap_isset(nodes[k - 1]->cpuset, (unsigned)s->cpu[i])) {
            byid[map[k]] = nodes[k - 1];
            break;
          }
      s->dist = malloc(s->nnodes * s->nnodes * sizeof *s->dist);
      for (size_t a = 0; s->dist && a < s->nnodes; a++)
        for (size_t b = 0; b < s->nnodes; b++) {
          hwloc_uint64_t ab, ba;
          if (!byid[a] || !byid[b] ||
              hwloc_distances_obj_pair_values(d, byid[a], byid[b], &ab, &ba) < 0 ||
              ab > UINT32_MAX) {
            free(s->dist); /* a node missing from the matrix: no distances */
            s->dist = NULL;
            break;
          }
          s->dist[a * s->nnodes + b] = (unsigned)ab;
        }
      hwloc_distances_release(t, d);
    }
    free(byid);
  }
  free(map);

  if (!pinned && !s->note)
    s->note = "participants are not each pinned to a PU of their own: cyclic orders";
  if (pinned && force_cyclic)
    s->note = "TEAMS_VICTIMS=cyclic: cyclic orders";
  if (pinned && !force_cyclic && n > 1) {
    s->victims = malloc(n * (n - 1) * sizeof *s->victims);
    s->llc_end = malloc(n * sizeof *s->llc_end);
    s->local_end = malloc(n * sizeof *s->local_end);
    if (!s->victims || !s->llc_end || !s->local_end) {
      rc = TT_ENOMEM;
      goto fail;
    }
    tt__topo_desc desc = tt__topology_desc(s);
    if ((rc = tt__order_build(&desc, s->victims, s->llc_end, s->local_end)) < 0)
      goto fail;
    s->ordered = 1;
  }
  if (pinned && n > 1) {
    /* more than one (node, LLC) group: the blocks of a range are dealt */
    for (size_t i = 1; i < n && !s->deal_from; i++)
      if (s->node[i] != s->node[0] || s->llc[i] != s->llc[0])
        s->deal_from = i + 1;
    if (s->deal_from) {
      s->deal_block = malloc(n * sizeof *s->deal_block);
      s->deal_owner = malloc(n * sizeof *s->deal_owner);
      if (!s->deal_block || !s->deal_owner) {
        rc = TT_ENOMEM;
        goto fail;
      }
      tt__topo_desc desc = tt__topology_desc(s);
      if ((rc = tt__order_deal(&desc, n, s->deal_block, s->deal_owner)) < 0)
        goto fail;
    }
  }
  free(nodes);
  free(llcs);
  *out = s;
  return 0;
fail:
  free(nodes);
  free(llcs);
  tt__topology_free(s);
  return rc;
}

/* ---- team start / shutdown ---------------------------------------------- */

static int same_ints(const int *a, const int *b, size_t k) {
  return (!a && !b) || (a && b && memcmp(a, b, k * sizeof *a) == 0);
}
static int same_u32(const uint32_t *a, const uint32_t *b, size_t k) {
  return (!a && !b) || (a && b && memcmp(a, b, k * sizeof *a) == 0);
}

static int snapshot_equal(const tt__topo *a, const tt__topo *b) {
  size_t n = a->n;
  if (a->n != b->n || a->pin != b->pin || a->pinned != b->pinned ||
      a->ordered != b->ordered || a->nnodes != b->nnodes || a->note != b->note ||
      !same_ints(a->cpu, b->cpu, n) || !same_ints(a->llc, b->llc, n) ||
      !same_ints(a->node, b->node, n) ||
      !same_u32(a->victims, b->victims, n * (n - 1)) ||
      !same_u32(a->llc_end, b->llc_end, n) ||
      !same_u32(a->local_end, b->local_end, n) ||
      !same_u32(a->deal_block, b->deal_block, n))
    return 0;
  if (!a->dist != !b->dist ||
      (a->dist && memcmp(a->dist, b->dist,
                         a->nnodes * a->nnodes * sizeof *a->dist)))
    return 0;
  return a->machine_pus == b->machine_pus &&
         a->machine_cores == b->machine_cores &&
         a->machine_llcs == b->machine_llcs &&
         a->machine_nodes == b->machine_nodes &&
         strcmp(a->llc_name, b->llc_name) == 0;
}

/* Publishes s, or an identical kept snapshot (then s is freed).
 * Lifecycle lock held. */
static void publish(tt__topo *s) {
  for (kept_link *l = kept_list; l; l = l->next)
    if (snapshot_equal(l->s, s)) {
      tt__topology_free(s);
      tt_atomic_store_release(&current, l->s);
      return;
    }
  kept_link *l = malloc(sizeof *l);
  if (!l) {
    tt__topology_free(s); /* cannot keep it: run cyclic */
    tt_atomic_store_release(&current, NULL);
    return;
  }
  l->s = s;
  l->next = kept_list;
  kept_list = l;
  tt_atomic_store_release(&current, s);
}

static void free_kept(void) __attribute__((destructor));
static void free_kept(void) {
  /* at exit no region runs any more */
  while (kept_list) {
    kept_link *l = kept_list;
    kept_list = l->next;
    tt__topology_free(l->s);
    free(l);
  }
}

int tt__topology_init(size_t n, tt_pin pin, int *cpus, double *ms) {
  return tt__topology_init_within(n, pin, NULL, cpus, ms);
}

int tt__topology_init_within(size_t n, tt_pin pin, const tt__cpumask *within,
                             int *cpus, double *ms) {
  double t0 = now_ms();
  int rc = 0;
  hwloc_topology_t t = NULL;
  hwloc_bitmap_t cand = NULL;
  if (cpus)
    for (size_t i = 0; i < n; i++)
      cpus[i] = -1;
  tt_atomic_store_release(&current, NULL);
  if (n == 0 || !cpus) {
    rc = TT_EINVAL;
    goto out;
  }
  if (pin == TT_PIN_NONE)
    goto out; /* unpinned: orders would be cyclic anyway, read nothing */
  if ((rc = tt__topology_load(&t, NULL, NULL, 0)) < 0)
    goto out;
  /* candidates: the allowed PUs within the team's CPUs, or within the
   * starting thread's affinity (what taskset or a cgroup gave the process) */
  cand = hwloc_bitmap_alloc();
  if (!cand) {
    rc = TT_ENOMEM;
    goto out;
  }
  if (within) {
    for (int c = 0; c < TT__MASK_CPUS; c++)
      if (tt__mask_isset(within, c))
        hwloc_bitmap_set(cand, (unsigned)c);
  } else if (hwloc_get_cpubind(t, cand, HWLOC_CPUBIND_THREAD) < 0) {
    hwloc_bitmap_zero(cand);
  }
  if (hwloc_bitmap_iszero(cand))
    hwloc_bitmap_copy(cand, hwloc_topology_get_allowed_cpuset(t));
  /* on failure (fewer PUs than participants) cpus stay -1: run unpinned */
  int chose = tt__topology_choose_cpus(t, cand, n, pin, cpus);
  int force_cyclic = tt__setting(TT__SET_VICTIMS) == 1;
  tt__topo *s = NULL;
  if ((rc = tt__topology_snapshot(t, n, pin, cpus, force_cyclic, &s)) < 0) {
    for (size_t i = 0; i < n; i++)
      cpus[i] = -1;
    goto out;
  }
  if (chose < 0)
    s->note = "fewer candidate PUs than participants: not pinned";
  if (tt__setting(TT__SET_BLOCKS) == 1) { /* contiguous: block c on participant c */
    free(s->deal_block), free(s->deal_owner);
    s->deal_block = s->deal_owner = NULL;
    s->deal_from = 0;
  }
  publish(s);
out:
  if (cand)
    hwloc_bitmap_free(cand);
  if (t)
    hwloc_topology_destroy(t);
  last_ms = now_ms() - t0;
  if (ms)
    *ms = last_ms;
  return rc;
}

void tt__topology_fini(void) { tt_atomic_store_release(&current, NULL); }
