/* Tests of memory placement (launcher/memory.c, include/teams/memory.h).
 *
 * rule.*: the page -> participant rule as a pure function (placement.h), on
 * many synthetic layouts, and mapped onto the nodes of synthetic machines.
 * plan.*: the blocks the rule uses are the blocks a static range runs.
 * touch.*, alloc.*, interleave.*: the real thing, checked with move_pages(2)
 * and get_mempolicy(2); node assertions that need more than one node skip
 * with the reason on a machine whose kernel reports one.
 * WHITEBOX in tests/CMakeLists.txt: linked with teams_whitebox for the
 * internal functions. */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "placement.h"
#include "prim.h"
#include "steal.h"
#include "range.h"
#include "team-internal.h"
#include "teams/memory.h"
#include "teams/team.h"
#include "team-util.h"
#include "topology-view.h"
#include "dealt-util.h"

/* ============================ the rule ==================================== */

/* Checks every property of the rule for one layout: the spans tile the pages
 * in block order (participant owner[b] for block b, when dealt),
 * tt__touch_owner agrees with them, every page's anchor lies in the array
 * and in its owner's block, and a participant whose block is at least two
 * pages long owns at least one page. */
static void check_plan(const tt__touch_plan *t) {
  size_t pages = tt__touch_pages(t);
  size_t next = 0;
  for (size_t b = 0; b < t->p; b++) {
    size_t c = t->owner ? t->owner[b] : b;
    cr_assert_eq(t->deal ? t->deal[c] : c, b);
    size_t k0, k1;
    tt__touch_span(t, c, &k0, &k1);
    cr_assert_leq(k0, k1);
    if (k0 == k1)
      continue;
    cr_assert_eq(k0, next, "span of %zu starts at %zu, want %zu", c, k0, next);
    next = k1;
    size_t ub, ue;
    tt__block(t->units, t->p, b, &ub, &ue);
    size_t ib = ub * t->unit, ie = ue * t->unit < t->n ? ue * t->unit : t->n;
    for (size_t k = k0; k < k1; k++) {
      cr_assert_eq(tt__touch_owner(t, k), c, "page %zu", k);
      uintptr_t a = tt__touch_anchor(t, k);
      cr_assert_geq(a, t->base);
      cr_assert_lt(a, t->base + t->n * t->elem);
      size_t i = (size_t)(a - t->base) / t->elem;
      cr_assert(i >= ib && i < ie, "page %zu: element %zu not in [%zu, %zu)",
                k, i, ib, ie);
    }
    if (ie > ib && (ie - ib) * t->elem >= 2 * t->page)
      cr_assert_gt(k1 - k0, 0);
  }
  cr_assert_eq(next, pages, "spans cover %zu of %zu pages", next, pages);
}

Test(rule, tiles_and_agrees) {
  static const size_t offs[] = {0, 8, 4000, 4095};
  static const size_t elems[] = {1, 3, 8, 24, 4096, 5000};
  static const size_t ns[] = {1, 7, 1000, 4097, 100000};
  static const size_t ps[] = {1, 2, 3, 7, 64};
  static const size_t units_per[] = {1, 5, 512};
  size_t cases = 0;
  for (size_t a = 0; a < sizeof offs / sizeof *offs; a++)
    for (size_t b = 0; b < sizeof elems / sizeof *elems; b++)
      for (size_t c = 0; c < sizeof ns / sizeof *ns; c++)
        for (size_t d = 0; d < sizeof ps / sizeof *ps; d++)
          for (size_t e = 0; e < sizeof units_per / sizeof *units_per; e++) {
            tt__touch_plan t = {0x100000 + offs[a], ns[c], elems[b], 4096,
                                units_per[e], 0, ps[d], NULL, NULL};
            t.units = t.n / t.unit + (t.n % t.unit != 0);
            check_plan(&t);
            cases++;
          }
  cr_assert_gt(cases, 1000);
}

/* The boundary rule on one hand-computed layout: 3 participants, 10 pages
 * of 512 doubles, element 0 at 16 bytes into its page.  Blocks of 1707,
 * 1707, 1706 elements start at byte offsets 0, 13656, 27312 from base, i.e.
 * 13672 and 27328 from the first page: page 3 (start 12288) belongs to
 * block 0, page 4 (16384) to block 1, page 7 (28672) to block 2. */
Test(rule, boundaries_by_hand) {
  tt__touch_plan t = {0x200010, 5120, 8, 4096, 1, 5120, 3, NULL, NULL};
  size_t want[] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2};
  cr_assert_eq(tt__touch_pages(&t), 11);
  for (size_t k = 0; k < 11; k++)
    cr_assert_eq(tt__touch_owner(&t, k), want[k], "page %zu", k);
}

static hwloc_topology_t load(const char *synthetic) {
  hwloc_topology_t t;
  cr_assert_eq(tt__topology_load(&t, synthetic, NULL, 0), 0, "%s", synthetic);
  return t;
}

/* On synthetic machines pinned with TEAMS_PIN=numa, the blocks are dealt
 * over the nodes (tt__order_deal): every span of pages from the start of the
 * array holds each node's share of it to within two blocks, so a cost that
 * grows along the array is split evenly between the nodes, and the whole
 * array gives each node its participants' share to within one page per
 * block boundary. */
static void nodes_of_pages(const char *synthetic, size_t p, size_t n) {
  hwloc_topology_t h = load(synthetic);
  int *cpus = calloc(p, sizeof *cpus);
  cr_assert_eq(tt__topology_choose_cpus(h, NULL, p, TT_PIN_NUMA, cpus), 0);
  tt__topo *s = NULL;
  cr_assert_eq(tt__topology_snapshot(h, p, TT_PIN_NUMA, cpus, 0, &s), 0);
  cr_assert_gt(s->nnodes, 1, "%s", synthetic);
  cr_assert_not_null(s->deal_block, "%s: blocks not dealt", synthetic);
  size_t unit, units, pp;
  cr_assert_eq(tt__range_plan(n, 0, p, TT_SCHED_STATIC, p, &unit, &units, &pp),
               0);
  cr_assert_eq(pp, p);
  tt__touch_plan t = {0x7f0000000040, n,     sizeof(double), 4096, unit,
                      units,          p,     s->deal_block,  s->deal_owner};
  check_plan(&t);
  size_t pages = tt__touch_pages(&t);
  double per_block = (double)pages / (double)p;
  size_t *per_node = calloc(s->nnodes, sizeof *per_node);
  double *share = calloc(s->nnodes, sizeof *share);
  for (size_t i = 0; i < p; i++)
    share[s->node[i]] += 1.0 / (double)p;
  for (size_t k = 0; k < pages; k++) {
    per_node[s->node[tt__touch_owner(&t, k)]]++;
    for (size_t d = 0; d < s->nnodes; d++) {
      double want = share[d] * (double)(k + 1);
      cr_assert(fabs((double)per_node[d] - want) <= 2 * per_block + 2,
                "%s: node %zu has %zu of the first %zu pages, share %.1f",
                synthetic, d, per_node[d], k + 1, want);
    }
  }
  for (size_t d = 0; d < s->nnodes; d++) {
    size_t members = 0;
    for (size_t i = 0; i < p; i++)
      members += s->node[i] == (int)d;
    double total = (double)members / (double)p * (double)pages;
    cr_assert_leq(per_node[d], total + (double)members + 1, "node %zu", d);
    cr_assert_geq(per_node[d] + (double)members + 1, total, "node %zu", d);
  }
  free(share);
  free(per_node);
  tt__topology_free(s);
  free(cpus);
  hwloc_topology_destroy(h);
}

Test(rule, two_sockets_nps1) {
  nodes_of_pages("pack:2 [numa] l3:8 core:8 pu:1", 128, 10000000);
}
Test(rule, two_sockets_nps4) {
  nodes_of_pages("pack:2 group:4 [numa] l3:2 core:8 pu:1", 128, 1000003);
}
Test(rule, four_nodes_few_pages) {
  /* 3 pages per participant: the boundary pages matter */
  nodes_of_pages("pack:1 group:4 [numa] core:4 pu:1", 16, 16 * 3 * 512 + 5);
}

/* ====================== the blocks a range runs ============================ */

typedef struct who {
  int *by;
  size_t n;
  _Atomic size_t begun; /* blocks begun; the caller's waits for `parts` */
  size_t parts;
} who;

/* Who ran each index.  The caller's block waits until every block began:
 * every participant comes in time and runs its own block (the caller takes
 * over only a block whose participant has not begun when its own is done,
 * docs/protocol.md item 10). */
static void record(void *ctx, size_t b, size_t e) {
  who *w = ctx;
  atomic_fetch_add(&w->begun, 1);
  while (tt_participant() == 0 && atomic_load(&w->begun) < w->parts)
    sched_yield();
  for (size_t i = b; i < e; i++)
    w->by[i] = tt_participant();
}

/* The plan's blocks are the ones tt_foreach_range's static schedule runs:
 * index i on the participant whose block holds it, under the team's deal
 * (the identity here, unless the team is pinned over several LLCs). */
static void static_matches_the_range(void) {
  /* tt_foreach_range's static blocks on their participants, strictly: the
   * way's choice may run a cheap range on the caller alone (way.c). */
  setenv("TEAMS_RUN", "team", 1);
  size_t team = tt_team_size();
  static const size_t ns[] = {2, 3, 100, 4097, 65536};
  static const size_t grains[] = {0, 1, 7, 4096};
  for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
    for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) {
      size_t n = ns[a];
      size_t unit, units, pp;
      cr_assert_eq(tt__range_plan(n, grains[g], 64, TT_SCHED_STATIC, team,
                                  &unit, &units, &pp),
                   0);
      who w = {calloc(n, sizeof(int)), n, 0, pp};
      cr_assert_eq(tt_foreach_range(record, &w, n, grains[g], 64,
                                    TT_SCHED_STATIC),
                   0);
      const uint32_t *owner = NULL;
      (void)tt__range_deal(pp, &owner);
      for (size_t b = 0; b < pp; b++) {
        size_t ub, ue;
        tt__block(units, pp, b, &ub, &ue);
        for (size_t i = ub * unit; i < ue * unit && i < n; i++)
          cr_assert_eq(w.by[i], (int)tt__dealt(owner, b),
                       "n %zu grain %zu index %zu", n, grains[g], i);
      }
      free(w.by);
    }
}

Test(plan, static_matches_the_range) { static_matches_the_range(); }

/* The same under a placement whose deal is not the identity
 * (tests/dealt-util.h): block 0 on participant 1. */
Test(plan, static_matches_the_dealt_range) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  setenv("TEAMS_RUN", "team", 1); /* read at team start */
  cr_assert_eq(tt_team_start(), 0);
  dealt_topo dt;
  dealt_install(&dt);
  const uint32_t *owner = NULL;
  cr_assert_not_null(tt__range_deal(2, &owner));
  cr_assert_eq(owner[0], 1);
  static_matches_the_range();
  dealt_remove(&dt);
}

/* Steal and auto: the steal region's initial blocks (tt__steal_region_init)
 * are the plan's. */
Test(plan, steal_blocks_match_the_region) {
  static const size_t ns[] = {100, 4097, 1000000};
  static const tt_schedule ss[] = {TT_SCHED_STEAL, TT_SCHED_AUTO};
  for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
    for (size_t b = 0; b < 2; b++) {
      size_t unit, units, pp;
      cr_assert_eq(
          tt__range_plan(ns[a], 0, 16, ss[b], 16, &unit, &units, &pp), 0);
      cr_assert_eq(units, ns[a] / unit + (ns[a] % unit != 0));
      tt__steal_slot *slots = aligned_alloc(TT_CACHE_PAD, pp * sizeof *slots);
      tt__steal_region r;
      tt__steal_region_init(&r, slots, record, NULL, ns[a], unit, units, pp);
      for (size_t c = 0; c < pp; c++) {
        size_t ub, ue;
        tt__block(units, pp, c, &ub, &ue);
        uint64_t w = tt_atomic_load_relaxed(&slots[c].range);
        cr_assert_eq(TT__RANGE_FRONT(w), ub);
        cr_assert_eq(TT__RANGE_BACK(w), ue);
      }
      free(slots);
    }
}

Test(plan, rejects_what_the_range_rejects) {
  size_t u, us, pp;
  cr_assert_eq(tt__range_plan(10, 1, 0, TT_SCHED_STATIC, 2, &u, &us, &pp),
               TT_EINVAL);
  cr_assert_eq(tt__range_plan(10, 1, 2, (tt_schedule)9, 2, &u, &us, &pp),
               TT_EINVAL);
  cr_assert_eq(tt__range_plan(SIZE_MAX, 2, 2, TT_SCHED_STATIC, 2, &u, &us, &pp),
               TT_EOVERFLOW);
}

/* ====================== the kernel's view of pages ========================= */

/* Node of every page of [p, p + bytes): -ENOENT for a page not present. */
static void page_nodes(void *base, size_t bytes, int *status) {
  size_t bp = tt__page_size(), n = bytes / bp;
  void **pages = malloc(n * sizeof *pages);
  for (size_t k = 0; k < n; k++)
    pages[k] = (char *)base + k * bp;
  cr_assert_eq(tt__page_nodes(pages, n, status), 0);
  free(pages);
}

static size_t allowed_nodes(void) {
  unsigned long mask[16];
  if (tt__mems_allowed(mask, 1024) != 0)
    return 0;
  size_t k = 0;
  for (size_t i = 0; i < 16; i++)
    k += (size_t)__builtin_popcountl(mask[i]);
  return k;
}

/* bytes of fresh anonymous memory, not yet faulted in, in small pages: THP
 * "always" would fault 2 MiB at once and the touch rule would use it. */
static char *fresh_pages(size_t bytes) {
  char *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(a, MAP_FAILED);
  (void)madvise(a, bytes, MADV_NOHUGEPAGE);
  return a;
}

Test(touch, places_fresh_pages_and_keeps_contents) {
  size_t bp = tt__page_size(), pages = 64, bytes = pages * bp;
  char *a = fresh_pages(bytes);
  int *st = malloc(pages * sizeof *st);
  page_nodes(a, bytes, st);
  for (size_t k = 0; k < pages; k++)
    cr_assert_lt(st[k], 0, "page %zu present before the touch", k);
  /* the second half is filled first: the touch must keep it */
  for (size_t i = bytes / 2; i < bytes; i++)
    a[i] = (char)(i * 7);
  cr_assert_eq(tt_mem_touch(a, bytes / 8, 8, 0, 64, TT_SCHED_STATIC), 0);
  page_nodes(a, bytes, st);
  for (size_t k = 0; k < pages; k++)
    cr_assert_geq(st[k], 0, "page %zu not present after the touch (%d)", k,
                  st[k]);
  for (size_t i = 0; i < bytes; i++)
    cr_assert_eq(a[i], i < bytes / 2 ? 0 : (char)(i * 7), "byte %zu", i);
  if (allowed_nodes() == 1)
    for (size_t k = 0; k < pages; k++)
      cr_assert_eq(st[k], 0, "one node: page %zu on node %d", k, st[k]);
  free(st);
  munmap(a, bytes);
}

Test(touch, rejects_bad_arguments) {
  char x[16];
  cr_assert_eq(tt_mem_touch(NULL, 4, 1, 0, 2, TT_SCHED_STATIC), TT_EINVAL);
  cr_assert_eq(tt_mem_touch(x, 4, 0, 0, 2, TT_SCHED_STATIC), TT_EINVAL);
  cr_assert_eq(tt_mem_touch(x, 4, 1, 0, 0, TT_SCHED_STATIC), TT_EINVAL);
  cr_assert_eq(tt_mem_touch(x, 4, 1, 0, 2, (tt_schedule)7), TT_EINVAL);
  cr_assert_eq(tt_mem_touch(x, SIZE_MAX / 2, 4, 0, 2, TT_SCHED_STATIC),
               TT_EOVERFLOW);
  cr_assert_eq(tt_mem_touch(NULL, 0, 1, 0, 2, TT_SCHED_STATIC), 0);
  cr_assert_eq(tt_mem_touch(x, sizeof x, 1, 0, 2, TT_SCHED_STEAL), 0);
}

/* On a pinned team spread over nodes, each page lands on the node of the
 * participant the rule gives it.  Needs a kernel that reports two or more
 * nodes the process may use. */
Test(touch, pages_on_their_participants_nodes) {
  size_t nodes = allowed_nodes();
  if (nodes < 2)
    cr_skip_test("the kernel reports %zu NUMA node(s) for this process: "
                 "placement across nodes cannot be observed here",
                 nodes);
  setenv("TEAMS_PIN", "numa", 1);
  cr_assert_eq(tt_team_shutdown(), 0);
  size_t team = tt_team_size();
  const tt__topo *s = tt__topology_current();
  if (!s || !s->pinned || s->nnodes < 2)
    cr_skip_test("the team did not pin over two nodes (%s)",
                 s && s->note ? s->note : "no snapshot");
  size_t bp = tt__page_size(), n = team * 64 * bp / 8;
  double *a = NULL;
  cr_assert_eq(tt_mem_alloc((void **)&a, n, 8, 0, team, TT_SCHED_STATIC, 0), 0);
  size_t unit, units, pp;
  cr_assert_eq(
      tt__range_plan(n, 0, team, TT_SCHED_STATIC, team, &unit, &units, &pp), 0);
  tt__touch_plan t = {(uintptr_t)a, n, 8, bp, unit, units, pp, NULL, NULL};
  t.deal = tt__range_deal(pp, &t.owner);
  size_t pages = tt__touch_pages(&t);
  int *st = malloc(pages * sizeof *st);
  page_nodes(a, pages * bp, st);
  for (size_t k = 0; k < pages; k++)
    cr_assert_eq(st[k], tt__cpu_node(s->cpu[tt__touch_owner(&t, k)]),
                 "page %zu", k);
  free(st);
  cr_assert_eq(tt_mem_free(a), 0);
}

/* ============================ allocation ==================================== */

Test(alloc, zeroed_aligned_present) {
  size_t bp = tt__page_size();
  for (size_t n = 1; n < 300000; n = n * 7 + 3) {
    double *a = NULL;
    cr_assert_eq(tt_mem_alloc((void **)&a, n, 8, 0, 16, TT_SCHED_STEAL, 0), 0);
    cr_assert_eq((uintptr_t)a % bp, 0);
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(a[i], 0.0);
    size_t pages = (n * 8 + bp - 1) / bp;
    int *st = malloc(pages * sizeof *st);
    page_nodes(a, pages * bp, st);
    for (size_t k = 0; k < pages; k++)
      cr_assert_geq(st[k], 0, "n %zu page %zu not placed", n, k);
    free(st);
    for (size_t i = 0; i < n; i++)
      a[i] = (double)i;
    cr_assert_eq(tt_mem_free(a), 0);
  }
}

Test(alloc, huge_is_aligned_to_the_huge_page) {
  size_t huge = tt__thp_size(NULL);
  if (!huge)
    cr_skip_test("the kernel has no transparent huge pages");
  char *a = NULL;
  cr_assert_eq(tt_mem_alloc((void **)&a, 3 * huge, 1, 0, 2, TT_SCHED_STATIC,
                            TT_MEM_HUGE),
               0);
  cr_assert_eq((uintptr_t)a % huge, 0);
  a[3 * huge - 1] = 1;
  cr_assert_eq(tt_mem_free(a), 0);
}

Test(alloc, rejects_bad_arguments) {
  void *a = (void *)1;
  cr_assert_eq(tt_mem_alloc(NULL, 1, 1, 0, 1, TT_SCHED_STATIC, 0), TT_EINVAL);
  cr_assert_eq(tt_mem_alloc(&a, 0, 1, 0, 1, TT_SCHED_STATIC, 0), TT_EINVAL);
  cr_assert_eq(tt_mem_alloc(&a, 1, 0, 0, 1, TT_SCHED_STATIC, 0), TT_EINVAL);
  cr_assert_eq(tt_mem_alloc(&a, 1, 1, 0, 1, TT_SCHED_STATIC, 1u << 7),
               TT_EINVAL);
  cr_assert_eq(tt_mem_alloc(&a, SIZE_MAX / 2, 4, 0, 1, TT_SCHED_STATIC, 0),
               TT_EOVERFLOW);
  cr_assert_null(a, "*out is cleared on failure");
  char local[64];
  cr_assert_eq(tt_mem_free(NULL), 0);
  cr_assert_eq(tt_mem_free(local + 1), TT_EINVAL);
  /* a page-aligned pointer at the start of a mapping it did not make, and
   * a second free, are refused without reading the memory before them */
  size_t bp = tt__page_size();
  char *m = mmap(NULL, bp, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  cr_assert_neq(m, MAP_FAILED);
  cr_assert_eq(tt_mem_free(m), TT_EINVAL);
  munmap(m, bp);
  cr_assert_eq(tt_mem_alloc(&a, 10, 8, 0, 2, TT_SCHED_STATIC, 0), 0);
  cr_assert_eq(tt_mem_free(a), 0);
  cr_assert_eq(tt_mem_free(a), TT_EINVAL);
}

/* ============================ interleave ==================================== */

#define MPOL_INTERLEAVE_ 3
#define MPOL_F_ADDR_ 2

Test(interleave, sets_the_policy) {
  size_t bp = tt__page_size();
  char *a = NULL;
  cr_assert_eq(tt_mem_alloc((void **)&a, 16 * bp, 1, 0, 2, TT_SCHED_STATIC,
                            TT_MEM_INTERLEAVE),
               0);
  int mode = -1;
  unsigned long mask[16] = {0};
  if (syscall(SYS_get_mempolicy, &mode, mask, 1024, a, MPOL_F_ADDR_) != 0)
    cr_skip_test("get_mempolicy(2) is not available here");
  cr_assert_eq(mode, MPOL_INTERLEAVE_);
  cr_assert_neq(mask[0] | mask[1], 0ul, "some node in the interleave set");
  /* the memory works, and with one node every page is on it */
  memset(a, 5, 16 * bp);
  int st[16];
  page_nodes(a, 16 * bp, st);
  for (size_t k = 0; k < 16; k++) {
    cr_assert_geq(st[k], 0);
    if (allowed_nodes() == 1)
      cr_assert_eq(st[k], 0);
  }
  cr_assert_eq(tt_mem_free(a), 0);
  cr_assert_eq(tt_mem_interleave(NULL, 0), 0);
  cr_assert_eq(tt_mem_interleave(NULL, 5), TT_EINVAL);
}

/* tt__mem_touch_on: the pages of a span of participants' blocks are present
 * afterwards and keep their contents; with the team held by another thread
 * nothing is touched (TT_EBUSY) and the pages stay absent. */

Test(touch_on, touches_on_a_run_and_waits_for_a_held_team) {
  setenv("TEAMS_NUM_THREADS", "4", 1);
  cr_assert_eq(tt_team_size(), 4);
  size_t bp = tt__page_size(), pages = 32, bytes = pages * bp;
  char *a = fresh_pages(bytes);
  int *st = malloc(pages * sizeof *st);
  hold_team h = {0, 0};
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, hold_team_main, &h), 0);
  while (!atomic_load(&h.started))
    sched_yield();
  cr_assert_eq(tt__mem_touch_on(a, bytes, 2, 2, 0), TT_EBUSY);
  page_nodes(a, bytes, st);
  for (size_t k = 0; k < pages; k++)
    cr_assert_lt(st[k], 0, "page %zu touched on a held team", k);
  atomic_store(&h.release, 1);
  pthread_join(t, NULL);
  a[bytes - 1] = 42;
  cr_assert_eq(tt__mem_touch_on(a, bytes, 2, 2, 1), 0);
  page_nodes(a, bytes, st);
  for (size_t k = 0; k < pages; k++)
    cr_assert_geq(st[k], 0, "page %zu not present after the touch", k);
  cr_assert_eq(a[bytes - 1], 42);
  cr_assert_eq(tt__mem_touch_on(NULL, 8, 0, 2, 1), TT_EINVAL);
  cr_assert_eq(tt__mem_touch_on(a, 8, 0, 0, 1), TT_EINVAL);
  cr_assert_eq(tt__mem_touch_on(a, bytes, 3, 2, 1), TT_ERANGE);
  free(st);
  munmap(a, bytes);
}
