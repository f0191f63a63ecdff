/* teams-sim: the steal schedule on machines we do not have, in simulated
 * time.
 *
 * What runs is the runtime's own code: the victim orders are built by
 * topology.c/order.c from hwloc synthetic machines (the path team start
 * takes), and every simulated participant runs tt__steal_participant
 * (steal.c) itself, on a coroutine of its own (ucontext).  The steal
 * region's probe hook (steal.h) and the region's f are the only places the
 * simulator takes over: there it charges the simulated cost of what the
 * participant is about to do, and switches to the participant with the
 * earliest simulated clock (a discrete-event simulation: ties go to the lower
 * index, so every run is deterministic).  The range words are ordinary
 * atomics read and written by one thread at a time, so the claims, steals,
 * republishes, startup protection and rescues are exactly the runtime's.
 *
 * Cost model (all constants per machine in `machines` below, with sources):
 *   - an item (a grid row) costs units(i) * UNIT_NS of compute plus its data,
 *     bytes(i) = ROW_BYTES + unit_bytes * units(i) (default: one line per
 *     row and none per unit, a compute-bound grid like teams-bench's;
 *     --unit-bytes 8 makes row i a row of a triangular matrix of doubles),
 *     at mem_ns_per_byte from its home node, times the ACPI SLIT
 *     distance / 10 from another node (SLIT entries are relative memory
 *     latencies, ACPI 6.4 section 5.2.17).  An item's home is the
 *     participant whose block holds it, the blocks dealt as the runtime
 *     deals them (range.c; --contiguous: block c on participant c): the
 *     arrays were placed by first touch (tt_mem_touch), as a NUMA-aware
 *     program does;
 *   - a cache line (a range word, the shared counter of dynamic/guided, a
 *     fork/join flag) moved between two cores costs the machine's
 *     core-to-core latency for their tier: same LLC, same node, another node
 *     in the package, another package.  A participant's range word lives in
 *     the cache of whoever wrote it last: a probe reads it there, a claim or
 *     steal takes it over.  A reader keeps a copy until the word is written
 *     again (MSI: Sorin, Hill and Wood, A Primer on Memory Consistency and
 *     Cache Coherence, 2011, ch. 6): reading it again costs 1 ns, and the
 *     owner's next claim pays the transfer to the farthest reader since its
 *     last write (the invalidation);
 *   - probes overlap: a probe that follows another one with no steal, claim
 *     or back-off between them is an independent load the core issues
 *     before the last one's line arrived, so it costs 1 / SCAN_OVERLAP of
 *     its transfer (SCAN_OVERLAP below says where it was measured).  Until
 *     these two rules the model charged every probe a full transfer, in
 *     turn: 8-14% of p * ideal went to scans of empty words at 256
 *     participants;
 *   - a back-off (Go's rule in steal.c) costs its 32 pauses;
 *   - fork: below TT__TREE_MIN_DEFAULT participants the flat protocol
 *     (fork.c): the holder writes one line per worker in turn, so worker i
 *     starts after the transfers to workers 1..i, and the holder after all
 *     of them; join: every participant adds to one counter, one transfer at
 *     a time.  From it on (the runs below: 128 and 256), fork.c's tree of
 *     branching TT__TREE_K_DEFAULT: a participant starts its share after
 *     handing the region to its children in turn, and reports after its
 *     children's reports, which come into its counter one transfer at a
 *     time.
 *   Not modelled: SMT siblings share a core (256 participants on 128 cores
 *   are 256 full cores here), memory bandwidth saturation, the pauses
 *   between protected passes, and cache effects of the data other than its
 *   node.
 * ideal = (sum of every item's compute + local data cost) / p: no schedule
 * can finish earlier, so makespan / ideal >= 1 (checked).  The table also
 * shows where the time above ideal went, as % of p * ideal: scan (thieves'
 * probes and back-offs) and remote (data read from another node above its
 * local cost); the rest is fork, join, claims and idle time at the end.
 *
 * Schedules compared (same grid, same data placement):
 *   teams    the steal schedule with the topology's victim orders;
 *   cyclic   the same code with cyclic orders (steal.c without orders);
 *   random   the same code, each participant's order reshuffled before each
 *            search and taken first-found in every tier: random victims, as
 *            oneTBB's task arenas choose them (oneTBB steals one task at a
 *            time where this takes a quarter of the victim's block, half
 *            from another node: only the victim choice differs);
 *   static   the same blocks, no balancing;
 *   dynamic  one shared counter, chunks of the steal unit (OpenMP
 *            schedule(dynamic, unit));
 *   guided   one shared counter, chunks of max(remaining / p, unit)
 *            (libgomp's schedule(guided, unit)).
 *
 * Below each grid on a machine with several nodes: the bytes that any
 * schedule ending with every participant at the same time must run away
 * from their home node (min_node_bytes), against random's.
 *
 * Usage: teams-sim [--check] [--p N] [--rows N] [--machine NAME]
 *                  [--unit-bytes B] [--detail] [--contiguous]
 *   --contiguous  block c on participant c, as before blocks were dealt
 *            over the nodes and LLCs (homes follow the blocks).
 *   --detail where the time above ideal went (fork, claims, scan, remote
 *            data, idle at the end, join), and per tier the units per
 *            steal, the probes and the back-offs, for each steal schedule.
 *   --check  small runs of every machine, grid and schedule, checking that
 *            every item ran exactly once, that makespan >= ideal, that the
 *            steals the simulator saw are the ones steal.c counted, and
 *            that every participant joined; and the placement policy (the
 *            deal and the victim orders): on the triangular grid the
 *            topology's orders run at most half of random's bytes off their
 *            node at 16 and 32 participants and at most a tenth at 128.
 *            Exit status 1 on a violation.  No timing is
 *            asserted: the times are simulated, and a run is deterministic. */
#include <hwloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "order.h"
#include "steal.h"
#include "range.h"
#include "team-internal.h"
#include "topology-view.h"

/* ---- machines ------------------------------------------------------------- */

#define UNIT_NS 5.0 /* one unit of compute: a dependent multiply-add chain
                       (bench.h's row body), a few ns on any of them */
#define ROW_BYTES 64.0
/* Probes in one scan are independent loads: the core issues the next before
 * the last one's line arrived.  Measured by bench/teams-bench-line-scan (a
 * scan's line read against a chain of dependent reads: 12.6x to 18x,
 * docs/measurements.md); the model takes a conservative 8. */
#define SCAN_OVERLAP 8.0
static double unit_bytes = 0; /* --unit-bytes */
static int detail;             /* --detail */

static double row_bytes(uint32_t units) {
  return ROW_BYTES + unit_bytes * (double)units;
}

typedef struct machine {
  const char *name;
  const char *synthetic;   /* hwloc synthetic description */
  unsigned nodes_per_pack; /* NUMA nodes per package */
  unsigned near, far;      /* SLIT: other node in the package, other package */
  double lat[4];           /* ns: same LLC, same node, near node, far node */
  double mem_ns_per_byte;  /* local DRAM per core, all cores streaming */
  double pause_ns;
  const char *source;
} machine;

/* Core-to-core latencies read off the published inter-core bounce charts;
 * per-core bandwidth = the socket's STREAM bandwidth / its cores. */
static const machine machines[] = {
    {"epyc-2x64-nps1", "pack:2 [numa] l3:8 core:8 pu:2", 1, 32, 32,
     {25, 110, 110, 200}, 1.0 / 2.5, 20,
     "AMD EPYC 7763 x2 (Zen 3, 8 CCDs of 8 cores): AnandTech, AMD 3rd Gen "
     "EPYC Milan Review (2021), core-to-core ~25 ns in a CCX, ~110 ns "
     "across CCDs, ~200 ns across sockets; ~160 GB/s STREAM per socket; "
     "SLIT 10/32"},
    {"epyc-2x64-nps4", "pack:2 group:4 [numa] l3:2 core:8 pu:2", 4, 12, 32,
     {25, 105, 115, 200}, 1.0 / 2.6, 20,
     "as epyc-2x64-nps1 with 4 nodes per socket (2 CCDs each); AnandTech, "
     "2nd Gen EPYC Rome review: NPS4 DRAM ~113 ns against ~122 ns NPS1; "
     "SLIT 10/12/32"},
    {"spr-2x56-snc4", "pack:2 group:4 [numa] l3:1 core:14 pu:2", 4, 12, 21,
     {55, 55, 75, 160}, 1.0 / 2.5, 40,
     "Intel Xeon Platinum 8480+ x2 (Sapphire Rapids, SNC4: 4 nodes of 14 "
     "cores per socket, each with its LLC slices): Chips and Cheese, "
     "Sapphire Rapids: Golden Cove Hits the Server (2023), core-to-core "
     "~50-60 ns in a socket, ~150-170 ns across; SLIT 10/12/21"},
    {"arm-128-1llc", "pack:1 [numa] l3:1 core:128 pu:1", 1, 10, 10,
     {80, 80, 80, 80}, 1.0 / 1.3, 10,
     "Ampere Altra Max M128-30 (one node, one system-level cache): "
     "AnandTech, Ampere Altra Max review (2021), core-to-core ~50-100 ns "
     "across the mesh, ~170 GB/s STREAM"},
};
#define NMACHINES (sizeof machines / sizeof machines[0])

static hwloc_topology_t machine_load(const machine *m) {
  hwloc_topology_t t;
  if (tt__topology_load(&t, m->synthetic, NULL, 0) != 0) {
    fprintf(stderr, "teams-sim: cannot load %s\n", m->synthetic);
    exit(2);
  }
  int nn = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  if (nn > 1) {
    hwloc_obj_t *nodes = calloc((size_t)nn, sizeof *nodes);
    hwloc_uint64_t *d = calloc((size_t)nn * (size_t)nn, sizeof *d);
    for (int i = 0; i < nn; i++)
      nodes[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
    for (int i = 0; i < nn; i++)
      for (int j = 0; j < nn; j++)
        d[i * nn + j] = i == j ? 10
                        : (unsigned)i / m->nodes_per_pack ==
                                (unsigned)j / m->nodes_per_pack
                            ? m->near
                            : m->far;
    hwloc_distances_add_handle_t h = hwloc_distances_add_create(
        t, "NUMALatency",
        HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    if (!h || hwloc_distances_add_values(t, h, (unsigned)nn, nodes, d, 0) ||
        hwloc_distances_add_commit(t, h, 0)) {
      fprintf(stderr, "teams-sim: cannot set distances on %s\n", m->name);
      exit(2);
    }
    free(nodes);
    free(d);
  }
  return t;
}

/* ---- grids ------------------------------------------------------------------ */

enum { GRID_UNIFORM, GRID_TRIANGULAR, GRID_POWER, NGRIDS };
static const char *const grid_names[] = {"uniform", "triangular", "power-law"};

/* Units of compute per row, mean ~64 for every grid. */
static void grid_fill(int kind, size_t n, uint32_t *w) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; i++) {
    switch (kind) {
    case GRID_UNIFORM:
      w[i] = 64;
      break;
    case GRID_TRIANGULAR: /* row i of a lower-triangular matrix */
      w[i] = (uint32_t)(1 + (i * 127) / (n > 1 ? n - 1 : 1));
      break;
    default: { /* Pareto, alpha 1.5, x_m 21 (mean 63), capped at 4096 */
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      double u = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
      double v = 21.0 / pow(u, 1.0 / 1.5);
      w[i] = v > 4096 ? 4096 : (uint32_t)v;
    }
    }
  }
}

/* ---- one simulation ----------------------------------------------------------- */

enum { S_TEAMS, S_CYCLIC, S_RANDOM, S_STATIC, S_DYNAMIC, S_GUIDED, NSCHED };
static const char *const sched_names[] = {"teams",  "cyclic",  "random",
                                          "static", "dynamic", "guided"};

#define STACK_BYTES (64 * 1024)

typedef struct result {
  double makespan, ideal;
  uint64_t steals, steals_tier[3]; /* same LLC, same node, other node */
  uint64_t stats_steals;           /* steal.c's own count */
  uint64_t joined;
  double moved_llc, moved_node; /* bytes run away from home, by tier */
  double scan_ns;   /* summed over participants: probes and back-offs */
  double remote_ns; /* summed: data cost above local, for rows away */
  double bytes;
  /* --detail: where p * (makespan - ideal) went, summed over participants */
  double fork_ns;  /* start delays */
  double claim_ns; /* owners' claims (the RMW on their word) */
  double idle_ns;  /* finished (and scanned) before the last one */
  double join_ns;  /* the join after the last participant returned */
  double last_scan_ns; /* the last participant's closing scan */
  double first_remote; /* simulated time of the first cross-node steal */
  uint64_t units_tier[3]; /* units stolen, by tier */
  uint64_t probes_tier[2][3]; /* [word seen non-empty, empty][tier] */
  uint64_t backoffs_tier[3];
  int ok; /* invariants held */
} result;

typedef struct sim {
  const machine *m;
  const tt__topo *topo;
  size_t p, n;
  const uint32_t *w;
  const double *wsum, *bsum; /* prefix sums of units and bytes */
  size_t *home;              /* [n] participant whose block holds row i */
  unsigned char *hits;       /* [n] */
  double *t;                 /* [p] simulated clocks, ns */
  double *finish;
  size_t *word_owner; /* [p] whose cache holds participant i's range word */
  /* Copies of the range words (the cache model): writes[i] counts the
   * writes to word i the simulator saw (claims, steals, republishes);
   * copy_val/copy_writes[r * p + i] is what reader r last read of it.  A
   * reader's copy is valid while both still match: the owner's closing
   * empty claim, the one write the simulator does not see, changes the
   * value.  shared_lat[i]: the farthest reader since the last write, whom
   * the next write must invalidate. */
  uint64_t *writes, *copy_val, *copy_writes;
  unsigned char *in_run; /* [p] the last event was a probe that saw empty */
  double *shared_lat;
  size_t *last_probe;
  uint64_t *seen_steals;
  uint64_t *seen_moved;
  double *last_work; /* end of the participant's last run of rows */
  int *done;
  uint64_t *rng;
  tt__steal_region r;
  tt__steal_slot *slots;
  uint32_t *rand_rows, *rand_end; /* the random orders */
  ucontext_t *uc;
  char *stacks;
  ucontext_t main_uc;
  size_t cur;
  int random_orders;
  result *res;
} sim;

static sim *S; /* the running simulation (one thread) */
static int contiguous; /* --contiguous: block c on participant c */

/* Participant c's initial block: the runtime's deal (range.c), the one the
 * snapshot holds for p participants, unless --contiguous. */
static size_t block_of(const tt__topo *t, size_t c) {
  return contiguous ? c : tt__dealt(t->deal_block, c);
}

/* 0 same LLC, 1 same node, 2 another node in the package, 3 another package */
static int tier(const sim *s, size_t a, size_t b) {
  const tt__topo *t = s->topo;
  if (t->node[a] == t->node[b])
    return t->llc[a] >= 0 && t->llc[a] == t->llc[b] ? 0 : 1;
  return (unsigned)t->node[a] / s->m->nodes_per_pack ==
                 (unsigned)t->node[b] / s->m->nodes_per_pack
             ? 2
             : 3;
}

static double line(const sim *s, size_t a, size_t b) {
  return a == b ? 1.0 : s->m->lat[tier(s, a, b)];
}

static unsigned slit(const sim *s, size_t a, size_t b) {
  int t = tier(s, a, b);
  return t < 2 ? 10 : t == 2 ? s->m->near : s->m->far;
}

/* Cost of rows [b, e) run by x; counts the bytes moved away from home. */
static double run_rows(sim *s, size_t x, size_t b, size_t e) {
  double c = (s->wsum[e] - s->wsum[b]) * UNIT_NS;
  for (size_t i = b; i < e; i++) {
    double bytes = row_bytes(s->w[i]);
    size_t h = s->home[i];
    int ti = tier(s, x, h);
    c += bytes * s->m->mem_ns_per_byte * (double)slit(s, x, h) / 10.0;
    s->res->remote_ns +=
        bytes * s->m->mem_ns_per_byte * (double)(slit(s, x, h) - 10) / 10.0;
    if (ti == 1)
      s->res->moved_llc += bytes;
    else if (ti >= 2)
      s->res->moved_node += bytes;
    if (s->hits[i]++ != 0)
      s->res->ok = 0;
  }
  return c;
}

static void yield_to_main(sim *s, size_t self) {
  swapcontext(&s->uc[self], &s->main_uc);
}

/* Word i was written: every other copy is gone. */
static void word_written(sim *s, size_t i) {
  s->writes[i]++;
  s->shared_lat[i] = 0;
}

/* Reader r reads word i: a hit in its own cache while its copy is valid
 * (MSI: a load miss leaves the line Shared in the reader's cache, and it
 * stays valid until a store by another core invalidates it; Sorin, Hill and
 * Wood, A Primer on Memory Consistency and Cache Coherence, 2011, ch. 6),
 * else a transfer from the cache of the last writer. */
static double word_read(sim *s, size_t r, size_t i) {
  uint64_t val = tt_atomic_load_relaxed(&s->slots[i].range);
  size_t k = r * s->p + i;
  if (s->word_owner[i] == r ||
      (s->copy_writes[k] == s->writes[i] + 1 && s->copy_val[k] == val))
    return 1.0;
  double c = line(s, r, s->word_owner[i]);
  s->copy_writes[k] = s->writes[i] + 1; /* 0: no copy yet */
  s->copy_val[k] = val;
  if (c > s->shared_lat[i])
    s->shared_lat[i] = c;
  return c;
}

/* A steal by self since its last event took the word of its last probe. */
static void note_steal(sim *s, size_t self) {
  uint64_t st = s->slots[self].stats.steals;
  if (st == s->seen_steals[self])
    return;
  s->in_run[self] = 0;
  size_t v = s->last_probe[self];
  s->seen_steals[self] = st;
  s->res->steals++;
  int ti = tier(s, self, v);
  s->res->steals_tier[ti == 0 ? 0 : ti == 1 ? 1 : 2]++;
  uint64_t mv = s->slots[self].stats.moved;
  s->res->units_tier[ti == 0 ? 0 : ti == 1 ? 1 : 2] +=
      (mv - s->seen_moved[self]) / s->r.unit;
  s->seen_moved[self] = mv;
  if (ti >= 2 && (s->res->first_remote == 0 || s->t[self] < s->res->first_remote))
    s->res->first_remote = s->t[self];
  s->t[self] += line(s, self, s->word_owner[v]); /* the CAS */
  s->word_owner[v] = self;
  s->word_owner[self] = self; /* the republish */
  word_written(s, v);
  word_written(s, self);
}

static void sim_probe(void *ctx, size_t self, size_t v, int backoff) {
  sim *s = ctx;
  note_steal(s, self);
  uint64_t w = tt_atomic_load_relaxed(&s->slots[v].range);
  int empty = TT__RANGE_FRONT(w) >= TT__RANGE_BACK(w);
  double c = word_read(s, self, v);
  /* a probe that follows an empty one overlaps with it (SCAN_OVERLAP) */
  if (!backoff && s->in_run[self])
    c /= SCAN_OVERLAP;
  s->in_run[self] = !backoff;
  {
    int ti = tier(s, self, v);
    int t3 = ti == 0 ? 0 : ti == 1 ? 1 : 2;
    if (backoff)
      s->res->backoffs_tier[t3]++;
    else
      s->res->probes_tier[empty][t3]++;
  }
  if (backoff)
    c += s->r.backoff_spins * s->m->pause_ns;
  s->t[self] += c;
  s->res->scan_ns += c;
  s->last_probe[self] = v;
  yield_to_main(s, self);
}

static void shuffle_row(sim *s, size_t self) {
  uint32_t *row = s->rand_rows + self * (s->p - 1);
  uint64_t *x = &s->rng[self];
  for (size_t k = s->p - 1; k > 1; k--) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    size_t j = (size_t)(*x % k);
    uint32_t tmp = row[k - 1];
    row[k - 1] = row[j];
    row[j] = tmp;
  }
}

static void sim_f(void *ctx, size_t b, size_t e) {
  sim *s = ctx;
  size_t self = s->cur;
  note_steal(s, self);
  s->in_run[self] = 0;
  /* the claim: an RMW on self's own word */
  double cl = s->word_owner[self] != self ? line(s, self, s->word_owner[self])
              : s->shared_lat[self] > 0   ? s->shared_lat[self]
                                          : 1.0;
  word_written(s, self);
  s->t[self] += cl;
  s->res->claim_ns += cl;
  s->word_owner[self] = self;
  s->t[self] += run_rows(s, self, b, e);
  s->last_work[self] = s->t[self];
  if (s->random_orders)
    shuffle_row(s, self); /* the next search starts from a fresh order */
  yield_to_main(s, self);
}

static void coro_main(void) {
  sim *s = S;
  size_t self = s->cur;
  tt__steal_participant(&s->r, self);
  note_steal(s, self);
  s->finish[self] = s->t[self];
  s->done[self] = 1;
  swapcontext(&s->uc[self], &s->main_uc); /* never resumed */
}

/* Fork below the tree's threshold: worker i starts after the holder's
 * transfers to 1..i; the holder (participant 0) after all of them.  From
 * TT__TREE_MIN_DEFAULT participants on, fork.c's tree (tree_fork). */
static void tree_fork(sim *s, size_t i, size_t hi, double t0);
static void fork_times(sim *s) {
  if (s->p >= TT__TREE_MIN_DEFAULT) {
    tree_fork(s, 0, s->p, 0);
    return;
  }
  double acc = 0;
  for (size_t i = 1; i < s->p; i++) {
    acc += line(s, 0, i);
    s->t[i] = acc;
  }
  s->t[0] = acc;
}

/* Participant i, handed the region at t0 with subtree [i, hi), hands it to
 * its children in turn (hand_on's split), then starts its own share. */
static void tree_fork(sim *s, size_t i, size_t hi, double t0) {
  size_t rest = hi - i - 1, k = TT__TREE_K_DEFAULT, kids = k < rest ? k : rest;
  double acc = t0;
  for (size_t j = 0; j < kids; j++) {
    size_t lo, end;
    tt__block(rest, kids, j, &lo, &end);
    acc += line(s, i, lo + i + 1);
    tree_fork(s, lo + i + 1, end + i + 1, acc);
  }
  s->t[i] = acc;
}

/* Join: participants add to one counter in the order they finish, one
 * transfer at a time; the holder then reads it.  Along the tree, each
 * participant's children add to its own counter (tree_join). */
static int cmp_finish(const void *a, const void *b) {
  double x = S->finish[*(const size_t *)a], y = S->finish[*(const size_t *)b];
  return x < y ? -1 : x > y;
}
typedef struct report {
  double ready, cost;
} report;
static int cmp_report(const void *a, const void *b) {
  double x = ((const report *)a)->ready, y = ((const report *)b)->ready;
  return x < y ? -1 : x > y;
}
/* When participant i, subtree [i, hi), has its children's reports (each a
 * transfer of i's counter line, one at a time, in the order they come) and
 * has finished its own share: the time it reports to its parent, or for the
 * holder, the region's end. */
static double tree_join(sim *s, size_t i, size_t hi) {
  size_t rest = hi - i - 1, k = TT__TREE_K_DEFAULT, kids = k < rest ? k : rest;
  report at[64];
  for (size_t j = 0; j < kids; j++) {
    size_t lo, end;
    tt__block(rest, kids, j, &lo, &end);
    at[j].ready = tree_join(s, lo + i + 1, end + i + 1);
    at[j].cost = line(s, i, lo + i + 1);
  }
  qsort(at, kids, sizeof *at, cmp_report);
  double free_at = 0;
  for (size_t j = 0; j < kids; j++)
    free_at = (at[j].ready > free_at ? at[j].ready : free_at) + at[j].cost;
  return s->finish[i] > free_at ? s->finish[i] : free_at;
}
static double join_time(sim *s) {
  if (s->p >= TT__TREE_MIN_DEFAULT)
    return tree_join(s, 0, s->p);
  size_t *ord = malloc(s->p * sizeof *ord);
  for (size_t i = 0; i < s->p; i++)
    ord[i] = i;
  qsort(ord, s->p, sizeof *ord, cmp_finish);
  double free_at = 0;
  size_t last = 0;
  for (size_t k = 0; k < s->p; k++) {
    size_t i = ord[k];
    double start = s->finish[i] > free_at ? s->finish[i] : free_at;
    free_at = start + line(s, i, last);
    last = i;
  }
  free(ord);
  return free_at + line(s, 0, last);
}

/* ---- the steal schedules: coroutines ------------------------------------------- */

/* a binary heap of participants by (t, index) */
typedef struct heap {
  size_t *a, n;
} heap;
static int before(const sim *s, size_t x, size_t y) {
  return s->t[x] < s->t[y] || (s->t[x] == s->t[y] && x < y);
}
static void heap_push(heap *h, const sim *s, size_t x) {
  size_t i = h->n++;
  h->a[i] = x;
  while (i && before(s, h->a[i], h->a[(i - 1) / 2])) {
    size_t p = (i - 1) / 2, tmp = h->a[p];
    h->a[p] = h->a[i];
    h->a[i] = tmp;
    i = p;
  }
}
static size_t heap_pop(heap *h, const sim *s) {
  size_t top = h->a[0];
  h->a[0] = h->a[--h->n];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && before(s, h->a[l], h->a[m]))
      m = l;
    if (r < h->n && before(s, h->a[r], h->a[m]))
      m = r;
    if (m == i)
      break;
    size_t tmp = h->a[m];
    h->a[m] = h->a[i];
    h->a[i] = tmp;
    i = m;
  }
  return top;
}

static void run_steal(sim *s, int kind, size_t unit, size_t units) {
  size_t p = s->p;
  s->slots = aligned_alloc(TT_CACHE_PAD, p * sizeof *s->slots);
  tt__steal_region_init(&s->r, s->slots, sim_f, s, s->n, unit, units, p);
  tt__steal_region_deal(&s->r, contiguous ? NULL : s->topo->deal_block);
  tt__steal_region_topology(&s->r, s->topo);
  s->r.caller_unplaced = 0;
  s->r.probe = sim_probe;
  if (kind == S_CYCLIC) {
    s->r.victims = NULL;
    s->r.local_end = NULL;
    s->r.llc_end = NULL;
    s->r.stride = 0;
  } else if (kind == S_RANDOM) {
    s->random_orders = 1;
    s->rand_rows = malloc(p * (p - 1) * sizeof *s->rand_rows);
    s->rand_end = malloc(p * sizeof *s->rand_end);
    for (size_t i = 0; i < p; i++) {
      for (size_t k = 0; k < p - 1; k++)
        s->rand_rows[i * (p - 1) + k] = (uint32_t)(k < i ? k : k + 1);
      s->rand_end[i] = (uint32_t)(p - 1);
      s->rng[i] = 0x2545f4914f6cdd1dull ^ (i * 0x9e3779b97f4a7c15ull);
      shuffle_row(s, i);
    }
    s->r.victims = s->rand_rows;
    s->r.local_end = s->rand_end;
    s->r.llc_end = NULL; /* first-found in every tier: random victims */
    s->r.stride = p - 1;
  }
  s->uc = calloc(p, sizeof *s->uc);
  s->stacks = malloc(p * (size_t)STACK_BYTES);
  heap h = {malloc(p * sizeof(size_t)), 0};
  for (size_t i = 0; i < p; i++) {
    getcontext(&s->uc[i]);
    s->uc[i].uc_stack.ss_sp = s->stacks + i * (size_t)STACK_BYTES;
    s->uc[i].uc_stack.ss_size = STACK_BYTES;
    s->uc[i].uc_link = NULL;
    makecontext(&s->uc[i], coro_main, 0);
    heap_push(&h, s, i);
  }
  while (h.n) {
    size_t i = heap_pop(&h, s);
    s->cur = i;
    swapcontext(&s->main_uc, &s->uc[i]);
    if (!s->done[i])
      heap_push(&h, s, i);
  }
  tt_steal_stats st;
  tt__steal_region_stats(&s->r, &st);
  s->res->stats_steals = st.steals;
  s->res->joined = st.joined;
  if (st.steals != s->res->steals || st.joined != p)
    s->res->ok = 0;
  free(h.a);
  free(s->uc);
  free(s->stacks);
  free(s->slots);
  free(s->rand_rows);
  free(s->rand_end);
  s->rand_rows = NULL;
  s->rand_end = NULL;
}

/* ---- static, dynamic, guided: a plain event loop ---------------------------------- */

static void run_shared(sim *s, int kind, size_t unit, size_t units) {
  size_t p = s->p;
  if (kind == S_STATIC) { /* the same blocks, grain = the unit */
    for (size_t c = 0; c < p; c++) {
      size_t b, e;
      tt__block(units, p, block_of(s->topo, c), &b, &e);
      b *= unit;
      e = e * unit < s->n ? e * unit : s->n;
      s->t[c] += run_rows(s, c, b, e);
      s->finish[c] = s->t[c];
      s->done[c] = 1;
    }
    s->res->joined = p;
    return;
  }
  /* one counter: a grab waits for the line, then moves it */
  size_t next = 0, owner = 0;
  double free_at = 0;
  heap h = {malloc(p * sizeof(size_t)), 0};
  for (size_t i = 0; i < p; i++)
    heap_push(&h, s, i);
  while (h.n) {
    size_t x = heap_pop(&h, s);
    double start = s->t[x] > free_at ? s->t[x] : free_at;
    start += line(s, x, owner);
    free_at = start;
    owner = x;
    s->t[x] = start;
    if (next >= s->n) {
      s->finish[x] = s->t[x];
      s->done[x] = 1;
      continue;
    }
    size_t q = unit;
    if (kind == S_GUIDED) {
      size_t g = (s->n - next + p - 1) / p;
      q = g > unit ? g : unit;
    }
    size_t b = next, e = s->n - next > q ? next + q : s->n;
    next = e;
    s->res->steals++; /* grabs */
    s->t[x] += run_rows(s, x, b, e);
    heap_push(&h, s, x);
  }
  s->res->joined = p;
  free(h.a);
}

/* ---- driver ------------------------------------------------------------------------ */

typedef struct setup {
  const machine *m;
  tt__topo *topo;
  size_t p, n;
  uint32_t *w;
  double *wsum, *bsum, ideal;
  double min_node; /* bytes any balanced schedule runs off their node */
} setup;

static void simulate(const setup *u, int kind, result *res) {
  memset(res, 0, sizeof *res);
  res->ok = 1;
  sim s;
  memset(&s, 0, sizeof s);
  s.m = u->m;
  s.topo = u->topo;
  s.p = u->p;
  s.n = u->n;
  s.w = u->w;
  s.wsum = u->wsum;
  s.bsum = u->bsum;
  s.res = res;
  size_t p = u->p;
  s.hits = calloc(u->n, 1);
  s.home = malloc(u->n * sizeof *s.home);
  s.t = calloc(p, sizeof *s.t);
  s.finish = calloc(p, sizeof *s.finish);
  s.word_owner = malloc(p * sizeof *s.word_owner);
  s.writes = calloc(p, sizeof *s.writes);
  s.copy_val = calloc(p * p, sizeof *s.copy_val);
  s.copy_writes = calloc(p * p, sizeof *s.copy_writes);
  s.shared_lat = calloc(p, sizeof *s.shared_lat);
  s.in_run = calloc(p, 1);
  s.last_probe = calloc(p, sizeof *s.last_probe);
  s.seen_steals = calloc(p, sizeof *s.seen_steals);
  s.seen_moved = calloc(p, sizeof *s.seen_moved);
  s.last_work = calloc(p, sizeof *s.last_work);
  s.done = calloc(p, sizeof *s.done);
  s.rng = calloc(p, sizeof *s.rng);
  for (size_t i = 0; i < p; i++)
    s.word_owner[i] = i;
  /* the steal schedule's units: the launcher's default grain */
  size_t unit, units, pp;
  tt__range_plan(u->n, 0, p, TT_SCHED_STEAL, p, &unit, &units, &pp);
  /* homes: first touch by the steal schedule's initial blocks
   * (tt_mem_touch(.., TT_SCHED_STEAL)), whole units; rows stand in for
   * pages */
  for (size_t c = 0; c < p; c++) {
    size_t b, e;
    tt__block(units, p, block_of(s.topo, c), &b, &e);
    for (size_t i = b * unit; i < e * unit && i < u->n; i++)
      s.home[i] = c;
  }
  fork_times(&s);
  for (size_t i = 0; i < p; i++)
    res->fork_ns += s.t[i];
  S = &s;
  if (kind <= S_RANDOM)
    run_steal(&s, kind, unit, units);
  else
    run_shared(&s, kind, unit, units);
  for (size_t i = 0; i < u->n; i++)
    if (s.hits[i] != 1)
      res->ok = 0;
  res->makespan = join_time(&s);
  size_t last = 0;
  for (size_t i = 0; i < p; i++)
    if (s.finish[i] > s.finish[last])
      last = i;
  for (size_t i = 0; i < p; i++)
    res->idle_ns += s.finish[last] - s.finish[i];
  res->join_ns = (res->makespan - s.finish[last]) * (double)p;
  if (kind <= S_RANDOM)
    res->last_scan_ns = s.finish[last] - s.last_work[last];
  res->ideal = u->ideal;
  res->bytes = u->bsum[u->n];
  if (res->makespan < res->ideal * (1 - 1e-9))
    res->ok = 0;
  S = NULL;
  free(s.hits);
  free(s.home);
  free(s.t);
  free(s.finish);
  free(s.word_owner);
  free(s.writes);
  free(s.copy_val);
  free(s.copy_writes);
  free(s.shared_lat);
  free(s.in_run);
  free(s.last_probe);
  free(s.seen_steals);
  free(s.seen_moved);
  free(s.last_work);
  free(s.done);
  free(s.rng);
}

static double min_node_bytes(const setup *u);

static int setup_make(setup *u, const machine *m, size_t p, size_t n,
                      int grid) {
  memset(u, 0, sizeof *u);
  u->m = m;
  u->p = p;
  u->n = n;
  hwloc_topology_t t = machine_load(m);
  int *cpus = malloc(p * sizeof *cpus);
  if (tt__topology_choose_cpus(t, NULL, p, TT_PIN_NUMA, cpus) != 0 ||
      tt__topology_snapshot(t, p, TT_PIN_NUMA, cpus, 0, &u->topo) != 0 ||
      !u->topo->ordered) {
    free(cpus);
    hwloc_topology_destroy(t);
    return -1;
  }
  free(cpus);
  hwloc_topology_destroy(t);
  u->w = malloc(n * sizeof *u->w);
  grid_fill(grid, n, u->w);
  u->wsum = malloc((n + 1) * sizeof *u->wsum);
  u->bsum = malloc((n + 1) * sizeof *u->bsum);
  u->wsum[0] = u->bsum[0] = 0;
  for (size_t i = 0; i < n; i++) {
    u->wsum[i + 1] = u->wsum[i] + u->w[i];
    u->bsum[i + 1] = u->bsum[i] + row_bytes(u->w[i]);
  }
  u->ideal =
      (u->wsum[n] * UNIT_NS + u->bsum[n] * m->mem_ns_per_byte) / (double)p;
  u->min_node = min_node_bytes(u);
  return 0;
}

/* A lower bound on the bytes that any schedule ending with every
 * participant at the same time must run away from their home node: each
 * node holds the rows of its participants' initial blocks (first touch),
 * and the work above the node's share (its participants' part of the
 * total) must run elsewhere; taking the rows with the most work per byte
 * first moves the fewest bytes (fractions of a row allowed). */
static const double *cmp_key;
static int cmp_by_key(const void *a, const void *b) {
  double x = cmp_key[*(const size_t *)a], y = cmp_key[*(const size_t *)b];
  return x < y ? -1 : x > y;
}
static double min_node_bytes(const setup *u) {
  size_t p = u->p, n = u->n, nn = u->topo->nnodes;
  size_t unit, units, pp;
  tt__range_plan(n, 0, p, TT_SCHED_STEAL, p, &unit, &units, &pp);
  double *cost = malloc(n * sizeof *cost), *key = malloc(n * sizeof *key);
  double *have = calloc(nn, sizeof *have), *share = calloc(nn, sizeof *share);
  size_t *ord = malloc(n * sizeof *ord), *node = malloc(n * sizeof *node);
  double total = 0, moved = 0;
  for (size_t c = 0; c < p; c++) {
    size_t b, e;
    tt__block(units, p, block_of(u->topo, c), &b, &e);
    share[u->topo->node[c]] += 1.0 / (double)p;
    for (size_t i = b * unit; i < e * unit && i < n; i++)
      node[i] = (size_t)u->topo->node[c];
  }
  for (size_t i = 0; i < n; i++) {
    double bytes = row_bytes(u->w[i]);
    cost[i] = u->w[i] * UNIT_NS + bytes * u->m->mem_ns_per_byte;
    key[i] = bytes / cost[i];
    have[node[i]] += cost[i];
    total += cost[i];
    ord[i] = i;
  }
  cmp_key = key;
  qsort(ord, n, sizeof *ord, cmp_by_key);
  for (size_t k = 0; k < nn; k++)
    share[k] *= total;
  for (size_t j = 0; j < n; j++) {
    size_t i = ord[j], k = node[i];
    if (have[k] <= share[k])
      continue;
    double take = have[k] - share[k] < cost[i] ? have[k] - share[k] : cost[i];
    have[k] -= take;
    moved += row_bytes(u->w[i]) * take / cost[i];
  }
  free(cost), free(key), free(have), free(share), free(ord), free(node);
  return moved;
}

static void setup_free(setup *u) {
  tt__topology_free(u->topo);
  free(u->w);
  free(u->wsum);
  free(u->bsum);
}

/* ---- fork/join line transfers ------------------------------------------------------- */

/* Critical path of publishing along fork.c's tree (hand_on): participant i
 * whose subtree is [i, hi) hands the region to the first participant of
 * each of min(k, hi - i - 1) spans that split i+1..hi-1 as tt__block does,
 * writing their lines in turn, so child j starts after j + 1 transfers by
 * i (with cores-order pinning a span is a set of neighbours); lat NULL counts
 * transfers.  The join is the mirror image: children add to their parent's
 * `done` one transfer at a time, and a parent reports when all have. */
static double tree_path(const sim *s, size_t i, size_t hi, size_t k,
                        int count) {
  size_t rest = hi - i - 1, kids = k < rest ? k : rest;
  double best = 0, edge = 0;
  for (size_t j = 0; j < kids; j++) {
    size_t lo, end;
    tt__block(rest, kids, j, &lo, &end);
    lo += i + 1;
    end += i + 1;
    edge += count ? 1 : line(s, i, lo);
    double d = edge + tree_path(s, lo, end, k, count);
    if (d > best)
      best = d;
  }
  return best;
}

static void forkjoin_table(void) {
  printf("\nfork/join: critical-path line transfers (publish; the join is "
         "the same count)\n");
  printf("%-6s %8s %10s %10s %12s %14s %14s\n", "p", "flat", "tree k=2",
         "tree k=3", "2*ceil(lg p)", "flat ns", "tree ns");
  const machine *m = &machines[0];
  for (size_t p = 16; p <= 512; p *= 2) {
    unsigned lg = 0;
    while (((size_t)1 << lg) < p)
      lg++;
    double fl = (double)(p - 1), tr = tree_path(NULL, 0, p, 2, 1),
           tr3 = tree_path(NULL, 0, p, 3, 1);
    char fns[32] = "-", tns[32] = "-";
    setup u;
    if (p <= 256 && setup_make(&u, m, p, p, GRID_UNIFORM) == 0) {
      sim s;
      memset(&s, 0, sizeof s);
      s.m = m;
      s.topo = u.topo;
      s.p = p;
      double flat_ns = 0;
      for (size_t i = 1; i < p; i++)
        flat_ns += line(&s, 0, i);
      snprintf(fns, sizeof fns, "%.0f", flat_ns);
      snprintf(tns, sizeof tns, "%.0f", tree_path(&s, 0, p, 2, 0));
      setup_free(&u);
    }
    printf("%-6zu %8.0f %10.0f %10.0f %12u %14s %14s\n", p, fl, tr, tr3, 2 * lg,
           fns, tns);
  }
  printf("(ns on %s: flat = the holder's p - 1 transfers in turn; tree = "
         "k=2, the default TEAMS_TREE_K)\n", m->name);
}

/* ---- main ----------------------------------------------------------------------------- */

static int check_mode(void) {
  int bad = 0;
  static const size_t ps[] = {16, 32, 128};
  for (size_t mi = 0; mi < NMACHINES; mi++)
    for (size_t pi = 0; pi < 3; pi++)
      for (int g = 0; g < NGRIDS; g++) {
        setup u;
        size_t rows = ps[pi] < 128 ? 20000 + 37 * pi : 1 << 17;
        if (setup_make(&u, &machines[mi], ps[pi], rows, g) != 0) {
          printf("FAIL %s p=%zu: no ordered snapshot\n", machines[mi].name,
                 ps[pi]);
          bad = 1;
          continue;
        }
        result rs[NSCHED];
        for (int k = 0; k < NSCHED; k++) {
          result r;
          simulate(&u, k, &r);
          rs[k] = r;
          if (!r.ok) {
            printf("FAIL %s p=%zu %s %s: ratio %.3f steals %llu/%llu "
                   "joined %llu\n",
                   machines[mi].name, ps[pi], grid_names[g], sched_names[k],
                   r.makespan / r.ideal, (unsigned long long)r.steals,
                   (unsigned long long)r.stats_steals,
                   (unsigned long long)r.joined);
            bad = 1;
          }
        }
        /* The policy, deterministic given the grid: on the triangular grid,
         * with the blocks dealt over the nodes (range.c), the topology's
         * orders run at most half the bytes random victims run off their
         * node at 16 and 32 participants (2-4 per node: 0.05-0.38 of
         * random's), and at most a tenth at 128 (0.005-0.054; contiguous
         * blocks, --check --contiguous: 0.63-0.95 at 16 and 32, 0.67-0.81
         * at 128). */
        if (g == GRID_TRIANGULAR && u.topo->nnodes > 1) {
          double rel = rs[S_TEAMS].moved_node / rs[S_RANDOM].moved_node;
          double most = ps[pi] >= 128 ? 0.1 : 0.5;
          printf("%s p=%zu triangular: bytes run off their node, teams / "
                 "random = %.3f (at most %.1f)\n",
                 machines[mi].name, ps[pi], rel, most);
          if (!(rel <= most)) {
            printf("FAIL %s p=%zu triangular: teams ran %.3f of random's "
                   "bytes off their node\n",
                   machines[mi].name, ps[pi], rel);
            bad = 1;
          }
        }
        setup_free(&u);
      }
  /* The tree's target: at most 2 * ceil(log2 p) line transfers. */
  for (size_t p = 2; p <= 512; p++) {
    unsigned lg = 0;
    while (((size_t)1 << lg) < p)
      lg++;
    double tr = tree_path(NULL, 0, p, TT__TREE_K_DEFAULT, 1);
    if (tr > 2.0 * lg) {
      printf("FAIL fork/join p=%zu: tree %.0f transfers > 2*ceil(lg p) %u\n", p,
             tr, 2 * lg);
      bad = 1;
    }
  }
  printf("%s\n", bad ? "teams-sim --check: FAILED" : "teams-sim --check: ok");
  return bad;
}

int main(int argc, char **argv) {
  size_t only_p = 0, rows = (size_t)1 << 20;
  const char *only_m = NULL;
  int check = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--check"))
      check = 1;
    else if (!strcmp(argv[a], "--p") && a + 1 < argc)
      only_p = strtoul(argv[++a], NULL, 10);
    else if (!strcmp(argv[a], "--rows") && a + 1 < argc)
      rows = strtoul(argv[++a], NULL, 10);
    else if (!strcmp(argv[a], "--machine") && a + 1 < argc)
      only_m = argv[++a];
    else if (!strcmp(argv[a], "--detail"))
      detail = 1;
    else if (!strcmp(argv[a], "--contiguous"))
      contiguous = 1;
    else if (!strcmp(argv[a], "--unit-bytes") && a + 1 < argc)
      unit_bytes = strtod(argv[++a], NULL);
    else {
      fprintf(stderr, "usage: teams-sim [--check] [--p N] [--rows N] "
                      "[--machine NAME] [--unit-bytes B] [--detail] "
                      "[--contiguous]\n");
      return 2;
    }
  }
  if (check)
    return check_mode();
  if (detail)
    printf("--detail: per steal schedule, where the time above ideal "
           "went besides scan and remote\n");
  printf("teams-sim: %zu rows of mean 64 units of %.0f ns, each with %.0f "
         "bytes of data + %.0f per unit; ratio = makespan / ideal; moved = "
         "bytes run away from their first-touch home, %% of all\n",
         rows, UNIT_NS, ROW_BYTES, unit_bytes);
  for (size_t mi = 0; mi < NMACHINES; mi++) {
    const machine *m = &machines[mi];
    if (only_m && strcmp(only_m, m->name))
      continue;
    printf("\n%s: %s\n", m->name, m->source);
    printf("%-5s %-10s %-8s %7s %8s %8s %8s %8s %9s %9s %6s %6s %s\n", "p",
           "grid", "schedule", "ratio", "steals", "st-llc", "st-node",
           "st-remote", "moved-llc", "moved-node", "scan", "remote",
           "node/random");
    /* 128 and 256, or as many as the machine has PUs */
    hwloc_topology_t ht = machine_load(m);
    size_t pus = (size_t)hwloc_get_nbobjs_by_type(ht, HWLOC_OBJ_PU);
    hwloc_topology_destroy(ht);
    static const size_t ps[] = {128, 256};
    for (size_t pi = 0; pi < 2; pi++) {
      size_t p = ps[pi] < pus ? ps[pi] : pus;
      if ((only_p && p != only_p) || (pi && p == (ps[0] < pus ? ps[0] : pus)))
        continue;
      for (int g = 0; g < NGRIDS; g++) {
        setup u;
        if (setup_make(&u, m, p, rows, g) != 0) {
          printf("%-5zu (more participants than PUs)\n", p);
          break;
        }
        result res[NSCHED];
        for (int k = 0; k < NSCHED; k++)
          simulate(&u, k, &res[k]);
        for (int k = 0; k < NSCHED; k++) {
          const result *r = &res[k];
          char rel[32] = "";
          if (k <= S_RANDOM && res[S_RANDOM].moved_node > 0)
            snprintf(rel, sizeof rel, "%.3f",
                     r->moved_node / res[S_RANDOM].moved_node);
          double pi_ns = (double)p * r->ideal;
          printf("%-5zu %-10s %-8s %7.3f %8llu %8llu %8llu %8llu %8.2f%% "
                 "%8.2f%% %5.1f%% %5.1f%% %s%s\n",
                 p, grid_names[g], sched_names[k], r->makespan / r->ideal,
                 (unsigned long long)r->steals,
                 (unsigned long long)r->steals_tier[0],
                 (unsigned long long)r->steals_tier[1],
                 (unsigned long long)r->steals_tier[2],
                 100.0 * r->moved_llc / r->bytes,
                 100.0 * r->moved_node / r->bytes, 100.0 * r->scan_ns / pi_ns,
                 100.0 * r->remote_ns / pi_ns, rel,
                 r->ok ? "" : "  INVARIANT VIOLATED");
          if (detail && k <= S_RANDOM) {
            double per[3];
            for (int t = 0; t < 3; t++)
              per[t] = r->steals_tier[t]
                         ? (double)r->units_tier[t] / (double)r->steals_tier[t]
                         : 0;
            printf("      above ideal, %% of p*ideal: fork %.1f, claims %.1f, "
                   "scan %.1f, remote %.1f, idle at the end %.1f, join %.1f; "
                   "last closing scan %.1f us; first cross-node steal at "
                   "%.0f%% of ideal\n",
                   100 * r->fork_ns / pi_ns, 100 * r->claim_ns / pi_ns,
                   100 * r->scan_ns / pi_ns, 100 * r->remote_ns / pi_ns,
                   100 * r->idle_ns / pi_ns, 100 * r->join_ns / pi_ns,
                   r->last_scan_ns / 1000, 100 * r->first_remote / r->ideal);
            printf("      LLC / node / other nodes: units per steal %.1f / "
                   "%.1f / %.1f; probes of empty words %llu / %llu / %llu, "
                   "of non-empty %llu / %llu / %llu; back-offs %llu / %llu / "
                   "%llu\n",
                   per[0], per[1], per[2],
                   (unsigned long long)r->probes_tier[1][0],
                   (unsigned long long)r->probes_tier[1][1],
                   (unsigned long long)r->probes_tier[1][2],
                   (unsigned long long)r->probes_tier[0][0],
                   (unsigned long long)r->probes_tier[0][1],
                   (unsigned long long)r->probes_tier[0][2],
                   (unsigned long long)r->backoffs_tier[0],
                   (unsigned long long)r->backoffs_tier[1],
                   (unsigned long long)r->backoffs_tier[2]);
          }
        }
        if (u.topo->nnodes > 1)
          printf("      %s: a schedule that ends balanced runs at least "
                 "%.2f%% of the bytes off their node (%.3f of random's)\n",
                 grid_names[g], 100.0 * u.min_node / res[S_RANDOM].bytes,
                 res[S_RANDOM].moved_node > 0
                     ? u.min_node / res[S_RANDOM].moved_node
                     : 0.0);
        setup_free(&u);
      }
    }
  }
  forkjoin_table();
  return 0;
}
