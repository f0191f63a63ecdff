/* Tests of topology.c and order.c: PU choice and victim orders on synthetic
 * machines (hwloc synthetic strings, XML with distance matrices), node
 * rejection, and team start's topology read on this machine.  Linked with
 * teams_static (tests/internal.cmake): these are internal functions. */
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

static tt__topo *snapshot(hwloc_topology_t t, size_t n, tt__pin pin) {
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
  tt__topo *s = snapshot(t, 8, TT__PIN_CORES);
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
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 8, TT__PIN_CORES, cpus), 0);
  for (int i = 0; i < 8; i++)
    cr_expect_eq(cpus[i], 2 * i, "participant %d on PU %d", i, cpus[i]);
  /* more participants than cores: the siblings, in core order */
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 10, TT__PIN_CORES, cpus), 0);
  cr_expect_eq(cpus[8], 1);
  cr_expect_eq(cpus[9], 3);
  hwloc_topology_destroy(t);
}

Test(order, two_nodes_numa_layout_spreads_over_nodes) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  add_node_distances(t, D2);
  tt__topo *s = snapshot(t, 4, TT__PIN_NUMA);
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
  s = snapshot(t, 4, TT__PIN_CORES);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(s->cpu[i], i);
  cr_expect_eq(s->nnodes, 1);
  expect_row(s, 0, (int[]){1, 2, 3}, 1, 3);
  expect_row(s, 2, (int[]){3, 0, 1}, 1, 3);
  tt__topology_free(s);

  /* odd counts: 3 participants, 2 + 1 */
  s = snapshot(t, 3, TT__PIN_NUMA);
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
  cr_assert_eq(tt__topology_choose_cpus(t, cand, 6, TT__PIN_NUMA, cpus), 0);
  int want[6] = {2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 6; i++)
    cr_expect_eq(cpus[i], want[i], "participant %d on PU %d", i, cpus[i]);
  cr_expect_eq(tt__topology_choose_cpus(t, cand, 7, TT__PIN_NUMA, cpus),
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
  tt__topo *s = snapshot(t, 8, TT__PIN_CORES);
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
  cr_assert_eq(tt__topology_choose_cpus(t, NULL, 4, TT__PIN_NUMA, cpus), 0);
  for (int i = 0; i < 4; i++)
    cr_expect_eq(cpus[i], i);
  tt__topo *s = snapshot(t, 4, TT__PIN_CORES);
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
  tt__topo *s = snapshot(t, 4, TT__PIN_NUMA);
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
  tt__topo *s = snapshot(t, 6, TT__PIN_CORES);
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
  tt__topo *s = snapshot(t, 3, TT__PIN_NUMA);
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
  tt__topo *s = snapshot(t, 8, TT__PIN_CORES);
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
  cr_assert_eq(tt__topology_snapshot(t, 4, TT__PIN_CORES, unpinned, 0, &s), 0);
  cr_expect_eq(s->ordered, 0);
  cr_expect_eq(s->pinned, 0);
  cr_expect_null(s->victims);
  cr_expect_not_null(s->note);
  tt__topology_free(s);
  int shared[4] = {0, 1, 1, 3};
  cr_assert_eq(tt__topology_snapshot(t, 4, TT__PIN_CORES, shared, 0, &s), 0);
  cr_expect_eq(s->ordered, 0);
  tt__topology_free(s);
  int own[4] = {0, 1, 2, 3};
  cr_assert_eq(tt__topology_snapshot(t, 4, TT__PIN_CORES, own, 1, &s), 0);
  cr_expect_eq(s->ordered, 0, "force_cyclic (TEAMS_VICTIMS=cyclic)");
  cr_expect_eq(s->pinned, 1, "still pinned: the counters know the LLCs");
  tt__topology_free(s);
  cr_assert_eq(tt__topology_snapshot(t, 4, TT__PIN_CORES, own, 0, &s), 0);
  cr_expect_eq(s->ordered, 1);
  tt__topology_free(s);
  hwloc_topology_destroy(t);
}

Test(order, too_many_participants_and_bad_arguments) {
  hwloc_topology_t t = load_synthetic(TWO_BY_TWO);
  int cpus[9];
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 9, TT__PIN_CORES, cpus),
               TT_ERANGE);
  for (int i = 0; i < 9; i++)
    cr_expect_eq(cpus[i], -1);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 0, TT__PIN_CORES, cpus),
               TT_EINVAL);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 2, (tt__pin)7, cpus),
               TT_EINVAL);
  cr_expect_eq(tt__topology_choose_cpus(t, NULL, 2, TT__PIN_NONE, cpus), 0);
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
  tt__topo *s = snapshot(t, 8, TT__PIN_CORES);
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
  int rc = tt__topology_init(n, TT__PIN_NONE, cpus, &ms);
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
  rc = tt__topology_init(n, TT__PIN_CORES, cpus, &ms);
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
  cr_assert_eq(tt__topology_init(n, TT__PIN_CORES, cpus, &ms), 0);
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
