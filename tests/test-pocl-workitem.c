/* Work-item functions for every dimension index below 3, in 1-, 2- and
 * 3-dimensional launches with and without a global offset, against OpenCL
 * 3.0 section 6.15.1: at or beyond get_work_dim(), sizes are 1 and ids and
 * offsets 0.
 *
 * The values for indices 0-2 come from the pocl_context the driver hands
 * the work-group function (num_groups, global_offset, work_dim; the local
 * size too where the function is not specialised for it), so this checks
 * what the driver passes.  Indices 3 and up are PoCL 3.1's kernel library
 * alone (lib/kernel/get_global_size.c and the others: `default: return
 * 0`), the same on every PoCL CPU driver, and not checked here
 * (backend/pocl/README.md).
 *
 * Runs on teams and on PoCL's pthread driver (tests/CMakeLists.txt). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clu.h"

static clu_env E;
static cl_program P;

/* The dimension index is a constant in each call: PoCL 7.1 compiles
 * get_global_offset(d) with d known only at run time wrongly, on its own
 * drivers too (docs/driver.md, "Three PoCL releases"). */
static const char *src =
    "#define ROW(d) \\\n"
    "  r[d * 8 + 0] = get_global_size(d); \\\n"
    "  r[d * 8 + 1] = get_local_size(d); \\\n"
    "  r[d * 8 + 2] = get_num_groups(d); \\\n"
    "  r[d * 8 + 3] = get_enqueued_local_size(d); \\\n"
    "  r[d * 8 + 4] = get_global_id(d); \\\n"
    "  r[d * 8 + 5] = get_local_id(d); \\\n"
    "  r[d * 8 + 6] = get_group_id(d); \\\n"
    "  r[d * 8 + 7] = get_global_offset(d);\n"
    "kernel void wi(global ulong *o) {\n"
    "  size_t lin = get_global_linear_id();\n"
    "  global ulong *r = o + lin * 24;\n"
    "  ROW(0) ROW(1) ROW(2)\n"
    "}\n";

static void setup(void) {
  clu_open(&E, 0);
  P = clu_build_src(&E, src);
}
static void teardown(void) {
  clReleaseProgram(P);
  clu_close(&E);
}

static const char *fn[8] = {"get_global_size",  "get_local_size",
                            "get_num_groups",   "get_enqueued_local_size",
                            "get_global_id",    "get_local_id",
                            "get_group_id",     "get_global_offset"};

/* Launches wi over dims dimensions of global g, local l, offset off (NULL:
 * none) and checks every work-item's 24 values. */
static void check(cl_uint dims, const size_t *g, const size_t *l,
                  const size_t *off) {
  size_t n = 1;
  for (cl_uint d = 0; d < dims; d++)
    n *= g[d];
  size_t bytes = n * 24 * sizeof(cl_ulong);
  cl_mem o = clu_buffer(&E, CL_MEM_READ_WRITE, bytes, NULL);
  cl_kernel k = clu_kernel(P, "wi");
  CLU_ARG(k, 0, o);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, dims, off, g, l, 0, NULL, NULL));
  cl_ulong *r = malloc(bytes);
  CLU_CHECK(clEnqueueReadBuffer(E.q, o, CL_TRUE, 0, bytes, r, 0, NULL, NULL));
  for (size_t lin = 0; lin < n; lin++) {
    /* The work-item's ids from its linear id (x fastest). */
    size_t id[3] = {0, 0, 0}, rest = lin;
    for (cl_uint d = 0; d < dims; d++) {
      id[d] = rest % g[d];
      rest /= g[d];
    }
    for (cl_uint d = 0; d < 3; d++) {
      cl_ulong want[8];
      if (d < dims) {
        size_t o0 = off ? off[d] : 0;
        want[0] = g[d];
        want[1] = l[d];
        want[2] = g[d] / l[d];
        want[3] = l[d];
        want[4] = o0 + id[d];
        want[5] = id[d] % l[d];
        want[6] = id[d] / l[d];
        want[7] = o0;
      } else {
        want[0] = want[1] = want[2] = want[3] = 1;
        want[4] = want[5] = want[6] = want[7] = 0;
      }
      for (int f = 0; f < 8; f++)
        cr_assert_eq(r[lin * 24 + d * 8 + f], want[f],
                     "%u-D launch, work-item %zu: %s(%u) = %llu, want %llu",
                     dims, lin, fn[f], d,
                     (unsigned long long)r[lin * 24 + d * 8 + f],
                     (unsigned long long)want[f]);
    }
  }
  free(r);
  clReleaseKernel(k);
  clReleaseMemObject(o);
}

Test(pocl_workitem, one_dim, .init = setup, .fini = teardown) {
  size_t g[1] = {32}, l[1] = {8}, off[1] = {5};
  check(1, g, l, NULL);
  check(1, g, l, off);
}

Test(pocl_workitem, two_dims, .init = setup, .fini = teardown) {
  size_t g[2] = {8, 6}, l[2] = {4, 3}, off[2] = {3, 7};
  check(2, g, l, NULL);
  check(2, g, l, off);
}

Test(pocl_workitem, three_dims, .init = setup, .fini = teardown) {
  size_t g[3] = {4, 6, 4}, l[3] = {2, 3, 2}, off[3] = {1, 2, 3};
  check(3, g, l, NULL);
  check(3, g, l, off);
}
