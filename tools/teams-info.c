/* teams-info: the topology the team sees, each participant's block of a
 * range (the deal, launcher/order.h) and its victim order for the steal
 * schedule.
 *
 *   teams-info                      this machine, as the team starts here
 *                                   (TEAMS_NUM_THREADS, TEAMS_PIN apply):
 *                                   its CPUs and size, and where they came
 *                                   from (launcher/cpuset.h)
 *   teams-info --synthetic DESC     a synthetic hwloc machine instead, e.g.
 *              [--pin cores|numa]   "pack:2 [numa] l3:2 core:4 pu:1"
 *              [-n N]               participants (default: one per core)
 *   teams-info --xml FILE [...]     an hwloc XML export (with distances)
 *   teams-info --settings           every TEAMS_* setting as a markdown table
 *                                   (the README's environment table)
 *
 * Orders print by tier: llc[...] node[...] then one remote tier per distance
 * (d21[...], or remote[...] when the distances are unknown). */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "team-internal.h"
#include "teams/team.h"
#include "topology-view.h"

static const char *pin_name(int pin) {
  return pin == TT_PIN_CORES ? "cores" : pin == TT_PIN_NUMA ? "numa" : "none";
}

static void print_machine(const tt__topo *s) {
  printf("machine: %u PUs, %u cores, %u %s caches as last level, %u NUMA "
         "node%s with CPUs\n",
         s->machine_pus, s->machine_cores, s->machine_llcs,
         s->llc_name[0] ? s->llc_name : "(no)", s->machine_nodes,
         s->machine_nodes == 1 ? "" : "s");
  if (s->note)
    printf("note: %s\n", s->note);
}

static void print_orders(const tt__topo *s) {
  size_t n = s->n;
  printf("participants: %zu, pin %s%s\n", n, pin_name(s->pin),
         s->pinned ? "" : " (not each on a PU of its own)");
  for (size_t i = 0; i < n; i++) {
    printf("  %3zu: PU %3d", i, s->cpu[i]);
    if (s->llc[i] >= 0)
      printf("  %s #%d", s->llc_name, s->llc[i]);
    else
      printf("  no LLC");
    if (s->node[i] >= 0)
      printf("  node %d", s->node[i]);
    if (s->deal_block)
      printf("  block %u", s->deal_block[i]);
    printf("\n");
  }
  int dealt = 0;
  for (size_t i = 0; s->deal_block && i < n; i++)
    dealt |= s->deal_block[i] != i;
  printf("blocks of a range: %s\n",
         dealt ? "dealt over the nodes, then the LLCs of each node "
                 "(block shown above, for p = all participants)"
               : "block c on participant c");
  if (s->dist && s->nnodes > 1) {
    printf("node distances (participants' nodes):\n");
    for (size_t a = 0; a < s->nnodes; a++) {
      printf("  ");
      for (size_t b = 0; b < s->nnodes; b++)
        printf(" %4u", s->dist[a * s->nnodes + b]);
      printf("\n");
    }
  }
  if (!s->ordered) {
    printf("victim orders: cyclic (i+1, i+2, ... mod p)\n");
    return;
  }
  printf("victim orders (a region of p < %zu participants skips victims >= p):\n", n);
  tt__topo_desc d = tt__topology_desc(s);
  for (size_t i = 0; i < n; i++) {
    const uint32_t *row = s->victims + i * (n - 1);
    printf("  %3zu:", i);
    unsigned tier = ~0u;
    for (size_t k = 0; k + 1 < n; k++) {
      unsigned t = tt__order_tier(&d, i, row[k]);
      if (t != tier) {
        if (tier != ~0u)
          printf("]");
        if (t == 0)
          printf(" llc[");
        else if (t == 1)
          printf(" node[");
        else if (s->dist)
          printf(" d%u[", s->dist[(size_t)s->node[i] * s->nnodes +
                                  (size_t)s->node[row[k]]]);
        else
          printf(" remote[");
        tier = t;
      } else {
        printf(" ");
      }
      printf("%u", row[k]);
    }
    printf("%s\n", n > 1 ? "]" : " (alone)");
  }
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = sz >= 0 ? malloc((size_t)sz + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[sz] = 0;
    *len = (size_t)sz;
  }
  return buf;
}

static int usage(void) {
  fprintf(stderr, "usage: teams-info [--synthetic DESC | --xml FILE] "
                  "[--pin none|cores|numa] [-n N] | --settings\n");
  return 2;
}

/* A machine that is not this one: hwloc from a description or a file. */
static int describe_other(const char *synthetic, const char *xml_path,
                          tt_pin pin, size_t n) {
  size_t len = 0;
  char *xml = NULL;
  if (xml_path && !(xml = read_file(xml_path, &len))) {
    fprintf(stderr, "teams-info: cannot read %s\n", xml_path);
    return 1;
  }
  hwloc_topology_t t;
  int rc = tt__topology_load(&t, synthetic, xml, len);
  free(xml);
  if (rc < 0) {
    fprintf(stderr, "teams-info: hwloc could not load that machine: %s\n",
            tt_strerror(rc));
    return 1;
  }
  if (n == 0) {
    int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    n = cores > 0 ? (size_t)cores
                  : (size_t)hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  }
  int *cpus = malloc(n * sizeof *cpus);
  tt__topo *s = NULL;
  if (!cpus) {
    hwloc_topology_destroy(t);
    return 1;
  }
  rc = tt__topology_choose_cpus(t, NULL, n, pin, cpus);
  if (rc < 0)
    fprintf(stderr, "teams-info: cannot pin %zu participants: %s\n", n,
            tt_strerror(rc));
  rc = tt__topology_snapshot(t, n, pin, cpus, 0, &s);
  hwloc_topology_destroy(t);
  free(cpus);
  if (rc < 0) {
    fprintf(stderr, "teams-info: %s\n", tt_strerror(rc));
    return 1;
  }
  printf("machine from %s\n", synthetic ? synthetic : xml_path);
  print_machine(s);
  print_orders(s);
  tt__topology_free(s);
  return 0;
}

static const char *get_env(const char *name, void *ctx) {
  (void)ctx;
  return getenv(name);
}

/* Under an MPI launcher (mpirun, srun): which rank this is, so that the
 * lines of several ranks' teams-info can be told apart. */
static void print_rank(void) {
  int local, nlocal;
  const char *from;
  if (!tt__mpi_local(get_env, NULL, &local, &nlocal, &from))
    return;
  static const char *const world[][2] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"PMI_RANK", "PMI_SIZE"},
      {"SLURM_PROCID", "SLURM_NTASKS"}};
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  printf("rank: ");
  for (size_t i = 0; i < sizeof world / sizeof world[0]; i++) {
    const char *r = getenv(world[i][0]), *n = getenv(world[i][1]);
    if (r && n) {
      printf("%s of %s, ", r, n);
      break;
    }
  }
  printf("local %d of %d on %s (%s)\n", local, nlocal, host, from);
}

int main(int argc, char **argv) {
  const char *synthetic = NULL, *xml = NULL;
  tt_pin pin = TT_PIN_CORES;
  int pin_given = 0;
  size_t n = 0;
  if (argc == 2 && !strcmp(argv[1], "--settings")) {
    tt__settings_print(stdout, NULL, true, "");
    return 0;
  }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--synthetic") && i + 1 < argc)
      synthetic = argv[++i];
    else if (!strcmp(argv[i], "--xml") && i + 1 < argc)
      xml = argv[++i];
    else if (!strcmp(argv[i], "--pin") && i + 1 < argc) {
      const char *v = argv[++i];
      pin_given = 1;
      if (!strcmp(v, "none"))
        pin = TT_PIN_NONE;
      else if (!strcmp(v, "cores"))
        pin = TT_PIN_CORES;
      else if (!strcmp(v, "numa"))
        pin = TT_PIN_NUMA;
      else
        return usage();
    } else if (!strcmp(argv[i], "-n") && i + 1 < argc)
      n = strtoul(argv[++i], NULL, 10);
    else
      return usage();
  }
  if (synthetic || xml)
    return describe_other(synthetic, xml, pin, n);
  if (pin_given || n)
    return usage(); /* this machine: TEAMS_PIN and TEAMS_NUM_THREADS decide */

  int rc = tt_team_start();
  tt_team_info info;
  if (rc < 0 || tt_team_get_info(&info) < 0) {
    fprintf(stderr, "teams-info: the team did not start: %s\n",
            tt_strerror(rc));
    return 1;
  }
  printf("team: %zu participants (%zu requested), pin %s, spin %.0f us, "
         "busy %s, idle %s\n",
         info.size, info.requested, pin_name(info.pinned), info.spin_us,
         info.busy_wait ? "wait" : "serial",
         info.sentinel ? "sentinel" : "sleep");
  print_rank();
  tt__cpuset cs;
  if (tt__cpuset_last(&cs)) {
    char list[1024];
    tt__cpulist_format(&cs.cpus, list, sizeof list);
    printf("cpus: %s (%s), %zu CPUs; size: %zu (%s)\n", list, cs.cpus_from,
           cs.ncpus, info.requested, cs.size_from);
  }
  printf("team start: %.3f ms, of which topology %.3f ms\n", info.start_ms,
         tt__topology_last_ms());
  uint64_t look = tt__monitor_look_once();
  if (look)
    printf("sizing: the monitor looks again every 0.5 s, a look takes %.1f us\n",
           (double)look / 1e3);
  else
    printf("sizing: fixed (TEAMS_NUM_THREADS), no monitor\n");
  tt__settings set;
  tt__settings_read(&set);
  printf("settings:\n");
  tt__settings_print(stdout, &set, false, "  ");
  if (info.degraded)
    printf("degraded: %s\n", info.degraded);
  const tt__topo *s = tt__topology_current();
  if (s) {
    print_machine(s);
    print_orders(s);
  } else {
    /* unpinned: the team read nothing; show the machine anyway */
    hwloc_topology_t t;
    tt__topo *m = NULL;
    size_t k = info.size;
    int *cpus = calloc(k, sizeof *cpus);
    for (size_t i = 0; cpus && i < k; i++)
      cpus[i] = -1;
    if (cpus && tt__topology_load(&t, NULL, NULL, 0) == 0) {
      if (tt__topology_snapshot(t, k, TT_PIN_NONE, cpus, 0, &m) == 0) {
        print_machine(m);
        tt__topology_free(m);
      }
      hwloc_topology_destroy(t);
    }
    free(cpus);
    printf("participants are not pinned (TEAMS_PIN=cores|numa pins them): "
           "victim orders are cyclic (i+1, i+2, ... mod p)\n");
  }
  tt_team_shutdown();
  return 0;
}
