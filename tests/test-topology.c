/* Tests of topology.c and order.c: PU choice and victim orders on synthetic
 * machines (hwloc synthetic strings, XML with distance matrices), node
 * rejection, and team start's topology read on this machine.  WHITEBOX in
 * tests/CMakeLists.txt: these are internal functions. */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "teams/errors.h"
#include "topology-view.h"

/* ---- helpers -------------------------------------------------------------- */

static hwloc_topology_t load_synthetic(const char *desc) {
  hwloc_topology_t t;
  int rc = tt__topology_load(&t, desc, NULL, 0);
  cr_assert_eq(rc, 0, "loading synthetic \"%s\": %d", desc, rc);
  return t;
}

/* Adds a NUMA latency matrix: dist(a, b) = local if a == b, else far(a, b). */
static void add_node_distances(hwloc_topology_t t, const hwloc_uint64_t *m) {
  int k = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  cr_assert_gt(k, 1);
  hwloc_obj_t objs[16];
  for (int i = 0; i < k; i++)
    objs[i] = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, (unsigned)i);
  hwloc_distances_add_handle_t h = hwloc_distances_add_create(
      t, "NUMALatency",
      HWLOC_DISTANCES_KIND_FROM_USER | HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
  cr_assert_not_null(h);
  cr_assert_eq(hwloc_distances_add_values(t, h, (unsigned)k, objs,
                                          (hwloc_uint64_t *)m, 0),
               0);
  cr_assert_eq(hwloc_distances_add_commit(t, h, 0), 0);
}

static tt__topo *snapshot(hwloc_topology_t t, size_t n, tt_pin pin) {
  int cpus[64];
  cr_assert_leq(n, 64);
  int rc = tt__topology_choose_cpus(t, NULL, n, pin, cpus);
  cr_assert_eq(rc, 0, "choose_cpus: %d", rc);
  tt__topo *s = NULL;
  rc = tt__topology_snapshot(t, n, pin, cpus, 0, &s);
  cr_assert_eq(rc, 0, "snapshot: %d", rc);
  return s;
}

static const uint32_t *row_of(const tt__topo *s, size_t i) {
  cr_assert(s->ordered);
  return s->victims + i * (s->n - 1);
}

/* Asserts participant i's order equals want[0..n-2] (values < 0 end early). */
static void expect_row(const tt__topo *s, size_t i, const int *want,
                       uint32_t llc_end, uint32_t local_end) {
  const uint32_t *row = row_of(s, i);
  char got[512] = "", exp[512] = "";
  for (size_t k = 0; k + 1 < s->n; k++) {
    snprintf(got + strlen(got), sizeof got - strlen(got), " %u", row[k]);
    snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", want[k]);
  }
  cr_expect_str_eq(got, exp, "order of %zu:%s, expected%s", i, got, exp);
  cr_expect_eq(s->llc_end[i], llc_end, "llc_end of %zu: %u", i, s->llc_end[i]);
  cr_expect_eq(s->local_end[i], local_end, "local_end of %zu: %u", i,
               s->local_end[i]);
}

/* Every row is a permutation of the other participants. */
static void expect_permutations(const tt__topo *s) {
  for (size_t i = 0; i < s->n; i++) {
    const uint32_t *row = row_of(s, i);
    unsigned char seen[64] = {0};
    for (size_t k = 0; k + 1 < s->n; k++) {
      cr_assert_lt(row[k], s->n);
      cr_assert_neq(row[k], i, "participant %zu lists itself", i);
      cr_assert_eq(seen[row[k]]++, 0, "participant %zu lists %u twice", i,
                   row[k]);
    }
  }
}

/* 2 nodes (one per package) x 2 L3 x 2 cores, distances 10 / 20. */
static const char *TWO_BY_TWO = "pack:2 [numa] l3:2 core:2 pu:1";
static const hwloc_uint64_t D2[4] = {10, 20, 20, 10};

/* ---- order construction --------------------------------------------------- */

Test(order, two_nodes_two_llcs_cores_layout) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 8, TT_PIN_CORES);
  for (int i = 0; i < 8; i++)
    cr_expect_eq(s->cpu[i], i, "cores pinning puts participant %d on PU %d", i,
                 s->cpu[i]);
  cr_assert(s->ordered && s->pinned);
  cr_expect_eq(s->nnodes, 2);
  cr_assert_not_null(s->dist);
  cr_expect_eq(s->dist[1], 20);
  expect_permutations(s);
  /* LLC mate | rest of node (after i) | remote, rotated by rank in node */
  expect_row(s, 0, (int[]){1, 2, 3, 4, 5, 6, 7}, 1, 3);
  expect_row(s, 1, (int[]){0, 2, 3, 5, 6, 7, 4}, 1, 3);
  expect_row(s, 2, (int[]){3, 0, 1, 6, 7, 4, 5}, 1, 3);
  expect_row(s, 3, (int[]){2, 0, 1, 7, 4, 5, 6}, 1, 3);
  expect_row(s, 5, (int[]){4, 6, 7, 1, 2, 3, 0}, 1, 3);
  expect_row(s, 6, (int[]){7, 4, 5, 2, 3, 0, 1}, 1, 3);
  tt__topo_desc d = tt__topology_desc(s);
  cr_expect_eq(tt__order_tier(&d, 0, 1), 0);
  cr_expect_eq(tt__order_tier(&d, 0, 3), 1);
  cr_expect_eq(tt__order_tier(&d, 0, 4), 2);
  cr_expect_eq(s->machine_llcs, 4);
  cr_expect_str_eq(s->llc_name, "L3");
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, smt_cores_layout_takes_one_pu_per_core_first) {
  hwloc_topology_t t = load_synthetic("pack:2 [numa] l3:2 core:2 pu:2");
  int cpus[16];
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 8, TT_PIN_CORES, cpus), 0);
  for (int i = 0; i < 8; i++)
    cr_expect_eq(cpus[i], 2 * i, "participant %d on PU %d", i, cpus[i]);
  /* more participants than cores: the siblings, in core order */
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 10, TT_PIN_CORES, cpus), 0);
  cr_expect_eq(cpus[8], 1);
  cr_expect_eq(cpus[9], 3);
  hwloc_topology_destroy(t);
}

Test(order, two_nodes_numa_layout_spreads_over_nodes) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 4, TT_PIN_NUMA);
  /* two per node, contiguous, cores order within the node */
  int want[4] = {0, 1, 4, 5};
  for (int i = 0; i < 4; i++)
    cr_expect_eq(s->cpu[i], want[i], "numa: participant %d on PU %d", i,
                 s->cpu[i]);
  expect_row(s, 0, (int[]){1, 2, 3}, 1, 1);
  expect_row(s, 1, (int[]){0, 3, 2}, 1, 1);
  expect_row(s, 2, (int[]){3, 0, 1}, 1, 1);
  expect_row(s, 3, (int[]){2, 1, 0}, 1, 1);
  tt__topology_free(s);

  /* the same 4 participants with TEAMS_PIN=cores stay on node 0 */
  s = snapshot(t, 4, TT_PIN_CORES);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(s->cpu[i], i);
  cr_expect_eq(s->nnodes, 1);
  expect_row(s, 0, (int[]){1, 2, 3}, 1, 3);
  expect_row(s, 2, (int[]){3, 0, 1}, 1, 3);
  tt__topology_free(s);

  /* odd counts: 3 participants, 2 + 1 */
  s = snapshot(t, 3, TT_PIN_NUMA);
  cr_expect_eq(s->cpu[0], 0);
  cr_expect_eq(s->cpu[1], 1);
  cr_expect_eq(s->cpu[2], 4);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, numa_layout_respects_node_capacity) {
  /* node 0 has 2 cores, node 1 has 6: 6 participants go 2 + 4 */
  hwloc_topology_t t = load_synthetic("pack:2 [numa] core:4 pu:1");
  int cpus[8];
  hwloc_bitmap_t cand = hwloc_bitmap_alloc();
  hwloc_bitmap_set_range(cand, 2, 7); /* PUs 2,3 of node 0, all of node 1 */
  cr_assert_eq(tt__topology_choose_cpus(t, cand, 6, TT_PIN_NUMA, cpus), 0);
  int want[6] = {2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 6; i++)
    cr_expect_eq(cpus[i], want[i], "participant %d on PU %d", i, cpus[i]);
  cr_expect_eq(tt__topology_choose_cpus(t, cand, 7, TT_PIN_NUMA, cpus),
               TT_ERANGE);
  for (int i = 0; i < 7; i++)
    cr_expect_eq(cpus[i], -1);
  hwloc_bitmap_free(cand);
  hwloc_topology_destroy(t);
}

Test(order, sub_numa_clustering) {
  /* 2 packages, one L3 each, split into 2 NUMA nodes (SNC2): distances 10
   * local, 12 to the sibling cluster, 21 across packages */
  hwloc_topology_t t = load_synthetic("pack:2 l3:1 group:2 [numa] core:2 pu:1");
  static const hwloc_uint64_t d[16] = {10, 12, 21, 21, 12, 10, 21, 21,
                                       21, 21, 10, 12, 21, 21, 12, 10};
  add_node_distances(t, d);
  tt__topo *s = snapshot(t, 8, TT_PIN_CORES);
  cr_assert_eq(s->nnodes, 4);
  expect_permutations(s);
  /* LLC within node: the cluster mate; no rest of node; then the sibling
   * cluster (12), then the other package (21, one tier) */
  expect_row(s, 0, (int[]){1, 2, 3, 4, 5, 6, 7}, 1, 1);
  expect_row(s, 1, (int[]){0, 3, 2, 5, 6, 7, 4}, 1, 1);
  expect_row(s, 4, (int[]){5, 6, 7, 0, 1, 2, 3}, 1, 1);
  tt__topo_desc desc = tt__topology_desc(s);
  cr_expect_eq(tt__order_tier(&desc, 0, 2), 2);
  cr_expect_eq(tt__order_tier(&desc, 0, 4), 3);
  /* the sibling cluster shares the L3: same LLC id, other node */
  cr_expect_eq(s->llc[0], s->llc[2]);
  cr_expect_neq(s->node[0], s->node[2]);
  cr_expect_neq(s->llc[0], s->llc[4]);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

/* Two NUMA nodes attached to one package: both span all its CPUs. */
static const char OVERLAP_XML[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x0000000f\" "
    "complete_cpuset=\"0x0000000f\" allowed_cpuset=\"0x0000000f\" "
    "nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\" "
    "allowed_nodeset=\"0x00000003\" gp_index=\"1\">\n"
    "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x0000000f\" "
    "complete_cpuset=\"0x0000000f\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"2\">\n"
    "   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x0000000f\" "
    "complete_cpuset=\"0x0000000f\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"3\" local_memory=\"1073741824\"/>\n"
    "   <object type=\"NUMANode\" os_index=\"1\" cpuset=\"0x0000000f\" "
    "complete_cpuset=\"0x0000000f\" nodeset=\"0x00000002\" "
    "complete_nodeset=\"0x00000002\" gp_index=\"4\" local_memory=\"1073741824\"/>\n"
    "   <object type=\"L2Cache\" cpuset=\"0x0000000f\" complete_cpuset=\"0x0000000f\" "
    "nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\" gp_index=\"5\" "
    "cache_size=\"2097152\" depth=\"2\" cache_linesize=\"64\" "
    "cache_associativity=\"16\" cache_type=\"0\">\n"
    "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000001\" "
    "complete_cpuset=\"0x00000001\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"6\">\n"
    "     <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" "
    "complete_cpuset=\"0x00000001\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"7\"/>\n"
    "    </object>\n"
    "    <object type=\"Core\" os_index=\"1\" cpuset=\"0x00000002\" "
    "complete_cpuset=\"0x00000002\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"8\">\n"
    "     <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" "
    "complete_cpuset=\"0x00000002\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"9\"/>\n"
    "    </object>\n"
    "    <object type=\"Core\" os_index=\"2\" cpuset=\"0x00000004\" "
    "complete_cpuset=\"0x00000004\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"10\">\n"
    "     <object type=\"PU\" os_index=\"2\" cpuset=\"0x00000004\" "
    "complete_cpuset=\"0x00000004\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"11\"/>\n"
    "    </object>\n"
    "    <object type=\"Core\" os_index=\"3\" cpuset=\"0x00000008\" "
    "complete_cpuset=\"0x00000008\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"12\">\n"
    "     <object type=\"PU\" os_index=\"3\" cpuset=\"0x00000008\" "
    "complete_cpuset=\"0x00000008\" nodeset=\"0x00000003\" "
    "complete_nodeset=\"0x00000003\" gp_index=\"13\"/>\n"
    "    </object>\n"
    "   </object>\n"
    "  </object>\n"
    " </object>\n"
    "</topology>\n";

Test(order, overlapping_nodes_are_rejected) {
  hwloc_topology_t t;
  cr_assert_eq(tt__topology_load(&t, NULL, OVERLAP_XML, sizeof OVERLAP_XML), 0);
  cr_assert_eq(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), 2,
               "the XML really has two nodes");
  /* numa pinning falls back to cores order */
  int cpus[4];
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 4, TT_PIN_NUMA, cpus), 0);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(cpus[i], i);
  tt__topo *s = snapshot(t, 4, TT_PIN_CORES);
  cr_expect_eq(s->nnodes, 1);
  cr_assert_not_null(s->note);
  cr_expect(strstr(s->note, "overlapping") != NULL, "note: %s", s->note);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(s->node[i], 0);
  /* one node, one L2: everyone in the LLC tier, rotated after i */
  expect_row(s, 0, (int[]){1, 2, 3}, 3, 3);
  expect_row(s, 2, (int[]){3, 0, 1}, 3, 3);
  cr_expect_str_eq(s->llc_name, "L2");
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, emulated_nodes_are_rejected) {
  /* numa=fake style: distinct CPU sets, but remote distance == local */
  hwloc_topology_t t = load_synthetic("pack:2 [numa] core:2 pu:1");
  static const hwloc_uint64_t d[4] = {10, 10, 10, 10};
  add_node_distances(t, d);
  tt__topo *s = snapshot(t, 4, TT_PIN_NUMA);
  cr_expect_eq(s->nnodes, 1);
  cr_assert_not_null(s->note);
  cr_expect(strstr(s->note, "emulated") != NULL, "note: %s", s->note);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(s->cpu[i], i, "numa falls back to cores order");
  expect_row(s, 1, (int[]){2, 3, 0}, 0, 3);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, missing_caches) {
  hwloc_topology_t t = load_synthetic("pack:2 [numa] core:3 pu:1");
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 6, TT_PIN_CORES);
  for (int i = 0; i < 6; i++)
    cr_expect_eq(s->llc[i], -1, "no cache: no LLC id");
  cr_expect_str_eq(s->llc_name, "");
  /* no LLC tier; the node, then the other node */
  expect_row(s, 0, (int[]){1, 2, 3, 4, 5}, 0, 2);
  expect_row(s, 4, (int[]){5, 3, 1, 2, 0}, 0, 2);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, fewer_participants_than_pus) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 3, TT_PIN_NUMA);
  /* 2 + 1 over the nodes */
  cr_expect_eq(s->cpu[2], 4);
  expect_row(s, 0, (int[]){1, 2}, 1, 1);
  expect_row(s, 1, (int[]){0, 2}, 1, 1);
  expect_row(s, 2, (int[]){0, 1}, 0, 0);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, xml_with_distance_matrix) {
  /* a 4-node ring: 0-1-2-3-0 at 20, opposite nodes at 30 */
  hwloc_topology_t t = load_synthetic("pack:4 [numa] l3:1 core:2 pu:1");
  static const hwloc_uint64_t d[16] = {10, 20, 30, 20, 20, 10, 20, 30,
                                       30, 20, 10, 20, 20, 30, 20, 10};
  add_node_distances(t, d);
  char *xml = NULL;
  int len = 0;
  cr_assert_eq(hwloc_topology_export_xmlbuffer(t, &xml, &len, 0), 0);
  hwloc_topology_destroy(t);
  cr_assert(strstr(xml, "distances2") != NULL, "the XML carries the matrix");
  cr_assert_eq(tt__topology_load(&t, NULL, xml, (size_t)len), 0);
  hwloc_free_xmlbuffer(t, xml);
  tt__topo *s = snapshot(t, 8, TT_PIN_CORES);
  cr_assert_not_null(s->dist, "distances read back from the XML");
  cr_expect_eq(s->dist[0 * 4 + 2], 30);
  /* node 0: nodes 1 and 3 at 20 form one tier (after node 0: 1 then 3),
   * node 2 at 30 last */
  expect_row(s, 0, (int[]){1, 2, 3, 6, 7, 4, 5}, 1, 1);
  expect_row(s, 1, (int[]){0, 3, 6, 7, 2, 5, 4}, 1, 1);
  /* node 2 (participants 4, 5): tier {3, 1} after node 2, then node 0 */
  expect_row(s, 4, (int[]){5, 6, 7, 2, 3, 0, 1}, 1, 1);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, cyclic_unless_every_participant_has_its_own_pu) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  tt__topo *s = NULL;
  int unpinned[4] = {0, 1, -1, 3};
  cr_assert_eq(tt__topology_snapshot(t, 4, TT_PIN_CORES, unpinned, 0, &s), 0);
  cr_expect_eq(s->ordered, 0);
  cr_expect_eq(s->pinned, 0);
  cr_expect_null(s->victims);
  cr_expect_not_null(s->note);
  tt__topology_free(s);
  int shared[4] = {0, 1, 1, 3};
  cr_assert_eq(tt__topology_snapshot(t, 4, TT_PIN_CORES, shared, 0, &s), 0);
  cr_expect_eq(s->ordered, 0);
  tt__topology_free(s);
  int own[4] = {0, 1, 2, 3};
  cr_assert_eq(tt__topology_snapshot(t, 4, TT_PIN_CORES, own, 1, &s), 0);
  cr_expect_eq(s->ordered, 0, "force_cyclic (TEAMS_VICTIMS=cyclic)");
  cr_expect_eq(s->pinned, 1, "still pinned: the counters know the LLCs");
  tt__topology_free(s);
  cr_assert_eq(tt__topology_snapshot(t, 4, TT_PIN_CORES, own, 0, &s), 0);
  cr_expect_eq(s->ordered, 1);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, too_many_participants_and_bad_arguments) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  int cpus[9];
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 9, TT_PIN_CORES, cpus),
               TT_ERANGE);
  for (int i = 0; i < 9; i++)
    cr_expect_eq(cpus[i], -1);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 0, TT_PIN_CORES, cpus),
               TT_EINVAL);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 2, (tt_pin)7, cpus),
               TT_EINVAL);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 2, TT_PIN_NONE, cpus), 0);
  cr_expect_eq(cpus[0], -1);
  hwloc_topology_destroy(t);
  cr_expect_lt(tt__topology_load(&t, "not a topology", NULL, 0), 0);
}

Test(order, builder_rejects_invalid_descriptions) {
  uint32_t v[6], le[3], lo[3];
  int llc[3] = {0, 0, 1}, node[3] = {0, 0, 2};
  tt__topo_desc d = {3, llc, node, 2, NULL};
  cr_expect_eq(tt__order_build(&d, v, le, lo), TT_EINVAL, "node out of range");
  node[2] = 1;
  cr_expect_eq(tt__order_build(&d, v, le, lo), 0);
  d.nnodes = 0;
  cr_expect_eq(tt__order_build(&d, v, le, lo), TT_EINVAL);
  d.nnodes = 2;
  d.n = 0;
  cr_expect_eq(tt__order_build(&d, v, le, lo), TT_EINVAL);
  cr_expect_eq(tt__order_build(NULL, v, le, lo), TT_EINVAL);
  /* one participant: an empty order */
  d.n = 1;
  cr_expect_eq(tt__order_build(&d, v, le, lo), 0);
  cr_expect_eq(le[0], 0);
  cr_expect_eq(lo[0], 0);
}

Test(order, pure_builder_matches_the_hwloc_path) {
  /* the description alone gives the same orders as the synthetic machine */
  int llc[8] = {0, 0, 1, 1, 2, 2, 3, 3}, node[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  unsigned dist[4] = {10, 20, 20, 10};
  tt__topo_desc d = {8, llc, node, 2, dist};
  uint32_t v[56], le[8], lo[8];
  cr_assert_eq(tt__order_build(&d, v, le, lo), 0);
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 8, TT_PIN_CORES);
  cr_expect_arr_eq(v, s->victims, sizeof v);
  cr_expect_arr_eq(le, s->llc_end, sizeof le);
  cr_expect_arr_eq(lo, s->local_end, sizeof lo);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

/* ---- this machine ---------------------------------------------------------- */

Test(topology, init_reads_this_machine_and_reports_its_cost) {
  size_t n = 2;
  int cpus[2] = {7, 7};
  double ms = -1;
  int rc = tt__topology_init(n, TT_PIN_NONE, cpus, &ms);
  cr_assert_eq(rc, 0);
  cr_expect_eq(cpus[0], -1, "TEAMS_PIN=none pins nothing");
  cr_expect_null(tt__topology_current(), "and reads nothing");
  cr_expect_geq(ms, 0);
  tt__topology_fini();

  hwloc_topology_t t;
  cr_assert_eq(tt__topology_load(&t, NULL, NULL, 0), 0);
  int pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_topology_destroy(t);
  if ((size_t)pus < n)
    n = 1;
  rc = tt__topology_init(n, TT_PIN_CORES, cpus, &ms);
  cr_assert_eq(rc, 0);
  const tt__topo *s = tt__topology_current();
  cr_assert_not_null(s);
  cr_expect_eq(s->n, n);
  cr_expect(cpus[0] >= 0);
  if (n == 2) {
    cr_expect_neq(cpus[0], cpus[1]);
    cr_expect(s->ordered);
  }
  /* not an assertion on time: printed for the record (no timing asserts) */
  fprintf(stderr, "topology start-up on this machine: %.3f ms (%u PUs, %s)\n",
          ms, s->machine_pus, s->llc_name);
  /* a restart with the same configuration reuses the snapshot */
  tt__topology_fini();
  cr_expect_null(tt__topology_current());
  cr_assert_eq(tt__topology_init(n, TT_PIN_CORES, cpus, &ms), 0);
  cr_expect_eq(tt__topology_current(), s);
  tt__topology_fini();
}

/* ---- the rules, on random descriptions ------------------------------------- */

static uint64_t rng_next(uint64_t *s) { /* xorshift64*, fixed seed */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

Test(order, random_descriptions_keep_the_rules) {
  uint64_t seed = 0x0bde5eedull;
  enum { MAXN = 40, MAXNODES = 5 };
  int llc[MAXN], node[MAXN];
  unsigned dist[MAXNODES * MAXNODES];
  uint32_t v[MAXN * MAXN], le[MAXN], lo[MAXN];
  for (int it = 0; it < 300; it++) {
    size_t n = 1 + (size_t)(rng_next(&seed) % MAXN);
    size_t nn = 1 + (size_t)(rng_next(&seed) % MAXNODES);
    for (size_t i = 0; i < n; i++) {
      node[i] = (int)(rng_next(&seed) % nn);
      llc[i] = rng_next(&seed) % 5 == 0 ? -1 : (int)(rng_next(&seed) % 6);
    }
    for (size_t a = 0; a < nn; a++)
      for (size_t b = 0; b < nn; b++)
        dist[a * nn + b] = a == b ? 10 : 11 + (unsigned)(rng_next(&seed) % 4);
    tt__topo_desc d = {n, llc, node, nn, it % 4 ? dist : NULL};
    cr_assert_eq(tt__order_build(&d, v, le, lo), 0);
    for (size_t i = 0; i < n; i++) {
      const uint32_t *row = v + i * (n - 1);
      unsigned char seen[MAXN] = {0};
      size_t rank = 0, ntier0 = 0, nlocal = 0;
      for (size_t j = 0; j < i; j++)
        rank += node[j] == node[i];
      for (size_t k = 0; k + 1 < n; k++) {
        cr_assert_lt(row[k], n);
        cr_assert_neq(row[k], i);
        cr_assert_eq(seen[row[k]]++, 0);
        unsigned t = tt__order_tier(&d, i, row[k]);
        ntier0 += t == 0;
        nlocal += t <= 1;
        if (k > 0) {
          unsigned tp = tt__order_tier(&d, i, row[k - 1]);
          cr_assert_leq(tp, t, "it %d: tiers out of order in row %zu", it, i);
          if (tp == t && t <= 1) /* rotation after i */
            cr_assert_lt((row[k - 1] + n - i) % n, (row[k] + n - i) % n);
        }
      }
      cr_assert_eq(le[i], ntier0);
      cr_assert_eq(lo[i], nlocal);
      /* each remote tier: (node after i's, index) order, rotated by rank */
      for (size_t k = nlocal; k + 1 < n;) {
        unsigned t = tt__order_tier(&d, i, row[k]);
        uint32_t want[MAXN];
        size_t len = 0;
        for (size_t r = 1; r < nn; r++)
          for (size_t j = 0; j < n; j++)
            if ((size_t)node[j] == ((size_t)node[i] + r) % nn &&
                tt__order_tier(&d, i, j) == t)
              want[len++] = (uint32_t)j;
        for (size_t m = 0; m < len; m++)
          cr_assert_eq(row[k + m], want[(m + rank) % len],
                       "it %d row %zu remote tier %u entry %zu", it, i, t, m);
        k += len;
      }
    }
  }
}

/* ---- dealing a range's blocks (tt__order_deal) ----------------------------- */

/* The (node, LLC) group of participant c: the first participant with c's node
 * and LLC (participants with llc -1 form one group per node). */
static size_t group_of(const tt__topo_desc *d, size_t c) {
  size_t g = 0;
  while (d->node[g] != d->node[c] || d->llc[g] != d->llc[c])
    g++;
  return g;
}

/* Deals p blocks over d and checks the rules of order.h on the result:
 *   block and owner are inverse permutations of 0..p-1, and nothing past p
 *   is written (the arrays hold d->n entries, pre-filled);
 *   the return value says whether the deal is the identity;
 *   within a group, blocks increase with participant index;
 *   every prefix [0, b) of the blocks gives each node its share of b (its
 *   participants / p) to within one block, and each group of a node its
 *   share (group size / node size) of the node's blocks to within one.
 * Integer form of "within one": |count * total - b * size| <= total.
 * Returns tt__order_deal's value; block/owner (d->n entries) get the deal. */
static int check_deal(const tt__topo_desc *d, size_t p, uint32_t *block,
                      uint32_t *owner, const char *what) {
  size_t n = d->n;
  for (size_t c = 0; c < n; c++)
    block[c] = owner[c] = 0xdeadbeefu;
  int rc = tt__order_deal(d, p, block, owner);
  cr_assert(rc == 0 || rc == 1, "%s: tt__order_deal(p = %zu) = %d", what, p,
            rc);
  int identity = 1;
  for (size_t c = 0; c < p; c++) {
    cr_assert_lt(block[c], p, "%s: block[%zu] = %u", what, c, block[c]);
    cr_assert_eq(owner[block[c]], c, "%s: owner[block[%zu]] = %u", what, c,
                 owner[block[c]]);
    identity &= block[c] == c;
  }
  for (size_t c = p; c < n; c++)
    cr_assert(block[c] == 0xdeadbeefu && owner[c] == 0xdeadbeefu,
              "%s: entry %zu written past p = %zu", what, c, p);
  cr_assert_eq(rc, identity, "%s: returned %d, identity %d", what, rc,
               identity);

  /* the description of participants 0..p-1 only: the prefix's groups */
  tt__topo_desc dp = *d;
  dp.n = p;
  size_t *nsize = calloc(d->nnodes, sizeof *nsize);
  size_t *ncount = calloc(d->nnodes, sizeof *ncount);
  size_t *grp = malloc(p * sizeof *grp), *gsize = calloc(p, sizeof *gsize);
  size_t *gcount = calloc(p, sizeof *gcount);
  cr_assert(nsize && ncount && grp && gsize && gcount);
  for (size_t c = 0; c < p; c++) {
    grp[c] = group_of(&dp, c);
    gsize[grp[c]]++;
    nsize[d->node[c]]++;
    for (size_t e = 0; e < c; e++)
      if (grp[e] == grp[c])
        cr_assert_lt(block[e], block[c],
                     "%s: participants %zu and %zu share a group, blocks %u "
                     "and %u",
                     what, e, c, block[e], block[c]);
  }
  for (size_t b = 1; b <= p; b++) {
    size_t o = owner[b - 1];
    ncount[d->node[o]]++;
    gcount[grp[o]]++;
    for (size_t j = 0; j < d->nnodes; j++) {
      long long off = (long long)(ncount[j] * p) - (long long)(b * nsize[j]);
      cr_assert_leq(llabs(off), (long long)p,
                    "%s: node %zu has %zu of the first %zu blocks, share "
                    "%zu/%zu",
                    what, j, ncount[j], b, nsize[j], p);
    }
    for (size_t g = 0; g < p; g++) {
      if (grp[g] != g)
        continue; /* g is not the first member of its group */
      size_t j = (size_t)d->node[g];
      long long off =
          (long long)(gcount[g] * nsize[j]) - (long long)(ncount[j] * gsize[g]);
      cr_assert_leq(llabs(off), (long long)nsize[j],
                    "%s: group of %zu has %zu of its node's %zu blocks "
                    "(first %zu), share %zu/%zu",
                    what, g, gcount[g], ncount[j], b, gsize[g], nsize[j]);
    }
  }
  free(nsize), free(ncount), free(grp), free(gsize), free(gcount);
  return rc;
}

Test(deal, by_hand_two_nodes_of_two_llcs) {
  /* TWO_BY_TWO in cores order: node 0 = {0, 1 | 2, 3}, node 1 = {4, 5 | 6, 7}.
   * Even blocks on node 0, odd on node 1; within a node the LLCs alternate
   * (the LLC seen first gets the node's first block). */
  int llc[8] = {0, 0, 1, 1, 2, 2, 3, 3}, node[8] = {0, 0, 0, 0, 1, 1, 1, 1};
  tt__topo_desc d = {8, llc, node, 2, NULL};
  uint32_t block[8], owner[8];
  cr_assert_eq(check_deal(&d, 8, block, owner, "2x2x2"), 0);
  static const uint32_t want[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  for (size_t c = 0; c < 8; c++)
    cr_expect_eq(block[c], want[c], "participant %zu runs block %u", c,
                 block[c]);
  /* ties between groups go to the group seen first in index order, not to
   * the lower LLC id; ties between nodes to the lower node id */
  int llc2[4] = {5, 5, 2, 2}, node2[4] = {1, 1, 0, 0};
  tt__topo_desc d2 = {4, llc2, node2, 2, NULL};
  cr_assert_eq(check_deal(&d2, 4, block, owner, "ties"), 0);
  cr_expect_eq(owner[0], 2, "block 0 to node 0's first participant: %u",
               owner[0]);
  cr_expect_eq(owner[1], 0);
  d2.nnodes = 2;
  node2[0] = node2[1] = node2[2] = node2[3] = 0;
  cr_assert_eq(check_deal(&d2, 4, block, owner, "ties, one node"), 0);
  static const uint32_t want2[4] = {0, 2, 1, 3}; /* LLC 5 first: seen first */
  for (size_t c = 0; c < 4; c++)
    cr_expect_eq(block[c], want2[c], "participant %zu runs block %u", c,
                 block[c]);
}

Test(deal, identity_on_one_node_and_one_llc) {
  int llc[6] = {3, 3, 3, 3, 3, 3}, node[6] = {0, 0, 0, 0, 0, 0};
  tt__topo_desc d = {6, llc, node, 1, NULL};
  uint32_t block[6], owner[6];
  for (size_t p = 1; p <= 6; p++)
    cr_expect_eq(check_deal(&d, p, block, owner, "one LLC"), 1, "p = %zu", p);
  /* no caches: one group per node */
  for (size_t c = 0; c < 6; c++)
    llc[c] = -1;
  cr_expect_eq(check_deal(&d, 6, block, owner, "no caches"), 1);
  /* one LLC spanning two nodes (sub-NUMA clustering) is two groups */
  for (size_t c = 0; c < 6; c++)
    llc[c] = 0, node[c] = c >= 3;
  d.nnodes = 2;
  cr_expect_eq(check_deal(&d, 6, block, owner, "SNC"), 0);
  /* a prefix inside node 0 is one group again; one past it is not */
  cr_expect_eq(check_deal(&d, 3, block, owner, "SNC prefix"), 1);
  cr_expect_eq(check_deal(&d, 4, block, owner, "3 + 1"), 0);
  /* two nodes of one participant each: the rule's deal is the identity
   * although the groups differ, and the return value says so */
  int llc2[2] = {0, 1}, node2[2] = {0, 1};
  tt__topo_desc d2 = {2, llc2, node2, 2, NULL};
  cr_expect_eq(check_deal(&d2, 2, block, owner, "1 + 1"), 1);
}

Test(deal, a_prefix_deals_over_its_own_participants) {
  /* participants p..n-1 (other nodes, other LLCs) change nothing: the deal
   * of p blocks over d equals the deal over d cut to its first p */
  int llc[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 4, -1};
  int node[12] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3};
  unsigned dist[16] = {10, 20, 30, 30, 20, 10, 30, 30,
                       30, 30, 10, 20, 30, 30, 20, 10};
  tt__topo_desc d = {12, llc, node, 4, dist};
  uint32_t block[12], owner[12], cut_block[12], cut_owner[12];
  int identities = 0;
  for (size_t p = 1; p <= 12; p++) {
    char what[32];
    snprintf(what, sizeof what, "p = %zu", p);
    int rc = check_deal(&d, p, block, owner, what);
    tt__topo_desc cut = d;
    cut.n = p;
    cr_assert_eq(tt__order_deal(&cut, p, cut_block, cut_owner), rc);
    cr_expect_arr_eq(block, cut_block, p * sizeof *block, "%s", what);
    cr_expect_arr_eq(owner, cut_owner, p * sizeof *owner, "%s", what);
    identities += rc;
  }
  /* p = 1, 2 (one group); p = 3, 4 deal 0 2 1 3 over node 0's LLCs */
  cr_expect_eq(identities, 2);
}

Test(deal, rejects_bad_arguments) {
  int llc[3] = {0, 0, 1}, node[3] = {0, 0, 1};
  tt__topo_desc d = {3, llc, node, 2, NULL};
  uint32_t block[4], owner[4];
  cr_assert_eq(tt__order_deal(&d, 3, block, owner), 0, "a valid one");
  cr_expect_eq(tt__order_deal(&d, 0, block, owner), TT_EINVAL, "p == 0");
  cr_expect_eq(tt__order_deal(&d, 4, block, owner), TT_EINVAL, "p > n");
  cr_expect_eq(tt__order_deal(NULL, 3, block, owner), TT_EINVAL);
  cr_expect_eq(tt__order_deal(&d, 3, NULL, owner), TT_EINVAL);
  cr_expect_eq(tt__order_deal(&d, 3, block, NULL), TT_EINVAL);
  node[2] = 2;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL,
               "node out of range");
  /* ... even when the bad entry lies past p: the description is invalid */
  cr_expect_eq(tt__order_deal(&d, 2, block, owner), TT_EINVAL);
  node[2] = -1;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL, "node -1");
  node[2] = 1;
  llc[2] = -2;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL, "llc -2");
  llc[2] = 1;
  d.nnodes = 0;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL, "nnodes 0");
  d.nnodes = 2;
  d.llc = NULL;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL, "llc NULL");
  d.llc = llc;
  d.node = NULL;
  cr_expect_eq(tt__order_deal(&d, 3, block, owner), TT_EINVAL, "node NULL");
  d.node = node;
  d.n = 0;
  cr_expect_eq(tt__order_deal(&d, 1, block, owner), TT_EINVAL, "n == 0");
}

/* The snapshot of n participants pinned with `pin` on a synthetic machine
 * (want_nodes nodes among them): its deal is tt__order_deal's of its
 * description, not the identity, and keeps the rules. */
static void machine_deal(const char *desc, size_t n, tt_pin pin,
                         size_t want_nodes) {
  hwloc_topology_t t = load_synthetic(desc);
  int *cpus = malloc(n * sizeof *cpus);
  cr_assert_not_null(cpus);
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, n, pin, cpus), 0, "%s", desc);
  tt__topo *s = NULL;
  cr_assert_eq(tt__topology_snapshot(t, n, pin, cpus, 0, &s), 0, "%s", desc);
  cr_assert(s->pinned, "%s", desc);
  cr_assert_eq(s->nnodes, want_nodes, "%s: %zu nodes", desc, s->nnodes);
  tt__topo_desc d = tt__topology_desc(s);
  uint32_t *block = malloc(n * sizeof *block),
           *owner = malloc(n * sizeof *owner);
  cr_assert(block && owner);
  char what[96];
  snprintf(what, sizeof what, "%s, %zu %s", desc, n,
           pin == TT_PIN_NUMA ? "numa" : "cores");
  cr_expect_eq(check_deal(&d, n, block, owner, what), 0,
               "%s: several nodes or LLCs, and the identity", what);
  cr_assert_not_null(s->deal_block, "%s: not dealt", what);
  cr_assert_not_null(s->deal_owner, "%s", what);
  cr_expect_arr_eq(s->deal_block, block, n * sizeof *block, "%s", what);
  cr_expect_arr_eq(s->deal_owner, owner, n * sizeof *owner, "%s", what);
  /* and every prefix of the team keeps the rules too (range.c deals p < n
   * when a range has fewer grains than participants) */
  for (size_t p = 1; p < n; p += 1 + p / 4)
    check_deal(&d, p, block, owner, what);
  free(block), free(owner), free(cpus);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(deal, synthetic_machines) {
  /* 2 x 64-core EPYC, NPS1: 2 nodes of 8 L3s of 8 cores */
  machine_deal("pack:2 [numa] l3:8 core:8 pu:1", 128, TT_PIN_NUMA, 2);
  /* ... 100 in cores order: nodes of 64 and 36, node 1 with a 4-core group */
  machine_deal("pack:2 [numa] l3:8 core:8 pu:1", 100, TT_PIN_CORES, 2);
  /* ... 101 spread over the nodes: 51 + 50, partial groups of 3 and 2 */
  machine_deal("pack:2 [numa] l3:8 core:8 pu:1", 101, TT_PIN_NUMA, 2);
  /* NPS4: 8 nodes of 2 L3s of 8 cores; and 77 spread over them */
  machine_deal("pack:2 group:4 [numa] l3:2 core:8 pu:1", 128, TT_PIN_NUMA, 8);
  machine_deal("pack:2 group:4 [numa] l3:2 core:8 pu:1", 77, TT_PIN_NUMA, 8);
  /* 2 x 56-core Sapphire Rapids: 2 nodes of 4 LLCs of 14 cores; and SNC4,
   * one L3 per package over its 4 nodes (one group per node) */
  machine_deal("pack:2 [numa] l3:4 core:14 pu:1", 112, TT_PIN_NUMA, 2);
  machine_deal("pack:2 l3:1 group:4 [numa] core:14 pu:1", 112, TT_PIN_NUMA, 8);
  machine_deal("pack:2 l3:1 group:4 [numa] core:14 pu:1", 90, TT_PIN_CORES, 7);
  /* one node, several L3s; 20 in cores order leave a group of 2 */
  machine_deal("pack:1 [numa] l3:4 core:6 pu:1", 24, TT_PIN_CORES, 1);
  machine_deal("pack:1 [numa] l3:4 core:6 pu:1", 20, TT_PIN_CORES, 1);
  /* SMT siblings come after every core: a group's members are not
   * contiguous in index order */
  machine_deal("pack:2 [numa] l3:2 core:4 pu:2", 16, TT_PIN_CORES, 2);
  machine_deal("pack:2 [numa] l3:2 core:4 pu:2", 13, TT_PIN_NUMA, 2);
  /* no caches: one group per node */
  machine_deal("pack:2 [numa] core:3 pu:1", 6, TT_PIN_CORES, 2);
}

Test(deal, snapshot_of_one_node_and_one_llc_is_not_dealt) {
  hwloc_topology_t t = load_synthetic("pack:1 [numa] l3:1 core:8 pu:1");
  tt__topo *s = snapshot(t, 8, TT_PIN_CORES);
  cr_expect_null(s->deal_block);
  cr_expect_null(s->deal_owner);
  tt__topo_desc d = tt__topology_desc(s);
  uint32_t block[8], owner[8];
  cr_expect_eq(check_deal(&d, 8, block, owner, "one L3"), 1);
  tt__topology_free(s);
  /* the same machine unpinned: nodes unknown, not dealt */
  int unpinned[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  cr_assert_eq(tt__topology_snapshot(t, 8, TT_PIN_CORES, unpinned, 0, &s), 0);
  cr_expect_null(s->deal_block);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
  /* 4 participants on the first L3 of a machine with two */
  t = load_synthetic("pack:1 [numa] l3:2 core:4 pu:1");
  s = snapshot(t, 4, TT_PIN_CORES);
  cr_expect_null(s->deal_block, "one L3 among the participants");
  tt__topology_free(s);
  s = snapshot(t, 5, TT_PIN_CORES);
  cr_expect_not_null(s->deal_block, "5 span both L3s");
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

/* Sainte-Lague run block by block keeps every prefix within one block of
 * each party's share for up to three parties of any sizes, and for parties
 * of sizes within one of each other, but not for four or more unequal ones
 * (nodes of 1, 1, 1 and 5 participants: after 5 blocks the node of 5 has 2,
 * its share 3.125).  So the random descriptions draw either up to three
 * nodes with at most three groups each (LLC -1, 0, 1), of any sizes, or up
 * to eight nodes of near-equal sizes; the machines above cover many equal
 * nodes and LLCs. */
Test(deal, random_descriptions_keep_the_rules) {
  uint64_t seed = 0xdea15eedull;
  enum { MAXN = 64, MAXNODES = 8 };
  int llc[MAXN], node[MAXN];
  uint32_t block[MAXN], owner[MAXN];
  for (int it = 0; it < 2000; it++) {
    size_t n = 1 + (size_t)(rng_next(&seed) % MAXN), nn, p = n;
    char what[32];
    snprintf(what, sizeof what, "random %d", it);
    if (it % 2) {
      nn = 1 + (size_t)(rng_next(&seed) % 3);
      for (size_t i = 0; i < n; i++)
        node[i] = (int)(rng_next(&seed) % nn);
      p = 1 + (size_t)(rng_next(&seed) % n); /* a prefix: any sizes */
    } else {
      /* node i % nn, shuffled: sizes within one of each other */
      nn = 1 + (size_t)(rng_next(&seed) % MAXNODES);
      for (size_t i = 0; i < n; i++)
        node[i] = (int)(i % nn);
      for (size_t i = n; i > 1; i--) {
        size_t k = (size_t)(rng_next(&seed) % i);
        int x = node[i - 1];
        node[i - 1] = node[k], node[k] = x;
      }
    }
    for (size_t i = 0; i < n; i++)
      llc[i] = (int)(rng_next(&seed) % 3) - 1;
    tt__topo_desc d = {n, llc, node, nn, NULL};
    check_deal(&d, p, block, owner, what);
  }
}
