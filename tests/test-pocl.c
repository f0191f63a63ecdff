/* The OpenCL C kernel set (kernels/cl) through the ICD loader, compared with
 * the serial C references of kernels/c (kernels.h states the agreement:
 * integers exact; axpy, matmul, reduce 0 ULP; stencil7 within 2 ULPs).
 *
 * tests/CMakeLists.txt runs this binary on the teams driver and again on PoCL's
 * pthread driver: the same sources must give the same results on both. */
#include <criterion/criterion.h>
#include <fenv.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clu.h"
#include "kernels.h"

static clu_env E;

static void setup(void) { clu_open(&E, 0); }
static void teardown(void) { clu_close(&E); }

/* Per test, not per suite: the TSan build's runner (tests/tsan-runner) takes
 * fixtures from the tests only. */
#define KERNEL_TEST(name)                                                      \
  Test(pocl_kernels, name, .init = setup, .fini = teardown, .timeout = 300)

static double *rand_doubles(size_t n, unsigned long long seed) {
  double *v = malloc(n * sizeof *v);
  cr_assert_not_null(v);
  for (size_t i = 0; i < n; i++)
    v[i] = (double)(clu_rand(&seed) % 2000001) / 1000.0 - 1000.0;
  return v;
}

static float *rand_floats(size_t n, unsigned long long seed, float lo,
                          float hi) {
  float *v = malloc(n * sizeof *v);
  cr_assert_not_null(v);
  for (size_t i = 0; i < n; i++)
    v[i] = lo + (hi - lo) * (float)(clu_rand(&seed) % 1000003) / 1000003.0f;
  return v;
}

/* axpy with an explicit local size, with NULL (driver-chosen) local size, and
 * through a global offset that leaves the head of y untouched. */
static void axpy_case(size_t n, size_t off, const size_t *local) {
  double a = 1.75;
  double *x = rand_doubles(n, 1), *y = rand_doubles(n, 2);
  double *ref = malloc(n * sizeof *ref);
  memcpy(ref, y, n * sizeof *ref);
  tt_ref_axpy(n - off, a, x + off, ref + off);

  cl_program p = clu_build(&E, "axpy");
  cl_kernel k = clu_kernel(p, "tt_axpy");
  cl_mem bx = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof(double), x);
  cl_mem by = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                         n * sizeof(double), y);
  CLU_ARG(k, 0, a);
  CLU_ARG(k, 1, bx);
  CLU_ARG(k, 2, by);
  size_t g = n - off;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, off ? &off : NULL, &g, local, 0,
                                   NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, by, CL_TRUE, 0, n * sizeof(double), y, 0,
                                NULL, NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(tt_ulp_diff_d(y[i], ref[i]), 0, "y[%zu] = %.17g, want %.17g",
                 i, y[i], ref[i]);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(x);
  free(y);
  free(ref);
}

KERNEL_TEST(axpy_local64) {
  size_t l = 64;
  axpy_case(64 * 1531, 0, &l);
}

KERNEL_TEST(axpy_null_local) { axpy_case(100000, 0, NULL); }

KERNEL_TEST(axpy_offset) {
  size_t l = 32;
  axpy_case(32 * 200 + 96, 96, &l);
}

KERNEL_TEST(stencil7_3d) {
  const size_t nx = 32, ny = 24, nz = 16, n = nx * ny * nz;
  float c0 = 0.5f, c1 = 0.0833f;
  float *in = rand_floats(n, 3, 0.0f, 4.0f);
  float *out = malloc(n * sizeof *out), *ref = malloc(n * sizeof *ref);
  tt_ref_stencil7(nx, ny, nz, c0, c1, in, ref);

  cl_program p = clu_build(&E, "stencil7");
  cl_kernel k = clu_kernel(p, "tt_stencil7");
  cl_mem bi = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof(float), in);
  cl_mem bo = clu_buffer(&E, CL_MEM_WRITE_ONLY, n * sizeof(float), NULL);
  cl_ulong ux = nx, uy = ny, uz = nz;
  CLU_ARG(k, 0, ux);
  CLU_ARG(k, 1, uy);
  CLU_ARG(k, 2, uz);
  CLU_ARG(k, 3, c0);
  CLU_ARG(k, 4, c1);
  CLU_ARG(k, 5, bi);
  CLU_ARG(k, 6, bo);
  size_t g[3] = {nx, ny, nz}, l[3] = {8, 4, 2};
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 3, NULL, g, l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bo, CL_TRUE, 0, n * sizeof(float), out,
                                0, NULL, NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_leq(tt_ulp_diff(out[i], ref[i]), 2, "out[%zu] = %a, want %a", i,
                  out[i], ref[i]);

  /* A sub-box through the global offset: only the box is written. */
  float sentinel = -7.0f;
  CLU_CHECK(clEnqueueFillBuffer(E.q, bo, &sentinel, sizeof sentinel, 0,
                                n * sizeof(float), 0, NULL, NULL));
  size_t o[3] = {8, 4, 2}, gb[3] = {16, 12, 8};
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 3, o, gb, l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bo, CL_TRUE, 0, n * sizeof(float), out,
                                0, NULL, NULL));
  for (size_t z = 0; z < nz; z++)
    for (size_t y = 0; y < ny; y++)
      for (size_t x = 0; x < nx; x++) {
        size_t i = x + nx * (y + ny * z);
        int inbox = x >= o[0] && x < o[0] + gb[0] && y >= o[1] &&
                    y < o[1] + gb[1] && z >= o[2] && z < o[2] + gb[2];
        if (inbox)
          cr_assert_leq(tt_ulp_diff(out[i], ref[i]), 2, "box (%zu,%zu,%zu)", x,
                        y, z);
        else
          cr_assert_eq(out[i], sentinel, "(%zu,%zu,%zu) outside the box", x, y,
                       z);
      }
  clReleaseMemObject(bi);
  clReleaseMemObject(bo);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(in);
  free(out);
  free(ref);
}

KERNEL_TEST(triangular) {
  const size_t n = 4096;
  uint32_t *x = malloc(n * sizeof *x);
  uint64_t *y = malloc(n * sizeof *y), *ref = malloc(n * sizeof *ref);
  unsigned long long s = 4;
  for (size_t i = 0; i < n; i++)
    x[i] = (uint32_t)clu_rand(&s);
  tt_ref_tri(n, x, ref);
  cl_program p = clu_build(&E, "tri");
  cl_kernel k = clu_kernel(p, "tt_tri");
  cl_mem bx = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof *x, x);
  cl_mem by = clu_buffer(&E, CL_MEM_WRITE_ONLY, n * sizeof *y, NULL);
  cl_ulong un = n;
  CLU_ARG(k, 0, un);
  CLU_ARG(k, 1, bx);
  CLU_ARG(k, 2, by);
  size_t g = n, l = 16;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL,
                                NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(y[i], ref[i], "y[%zu]", i);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(x);
  free(y);
  free(ref);
}

/* Work-group reduction: local memory and a barrier per level; many groups
 * on every participant at once, so local memory shared between participants
 * would corrupt the sums.  A group size that is not a power of two takes
 * the uneven branch of the tree. */
static void reduce_case(size_t local, size_t groups) {
  size_t n = local * groups;
  float *in = rand_floats(n, 5, -1.0f, 1.0f);
  float *out = malloc(groups * sizeof *out),
        *ref = malloc(groups * sizeof *ref);
  tt_ref_reduce(n, local, in, ref);
  cl_program p = clu_build(&E, "reduce");
  cl_kernel k = clu_kernel(p, "tt_reduce");
  cl_mem bi = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof(float), in);
  cl_mem bo = clu_buffer(&E, CL_MEM_WRITE_ONLY, groups * sizeof(float), NULL);
  CLU_ARG(k, 0, bi);
  CLU_ARG(k, 1, bo);
  clu_arg(k, 2, local * sizeof(float), NULL);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &n, &local, 0, NULL,
                                   NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bo, CL_TRUE, 0, groups * sizeof(float),
                                out, 0, NULL, NULL));
  for (size_t g = 0; g < groups; g++)
    cr_assert_eq(tt_ulp_diff(out[g], ref[g]), 0, "group %zu: %a, want %a", g,
                 out[g], ref[g]);
  clReleaseMemObject(bi);
  clReleaseMemObject(bo);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(in);
  free(out);
  free(ref);
}

KERNEL_TEST(reduce_pow2) { reduce_case(128, 2048); }
KERNEL_TEST(reduce_uneven) { reduce_case(100, 999); }

KERNEL_TEST(matmul_tiled) {
  const size_t m = 64, n = 96, kk = 80, lx = 16, ly = 8;
  float *a = rand_floats(m * kk, 6, -1.0f, 1.0f);
  float *b = rand_floats(kk * n, 7, -1.0f, 1.0f);
  float *c = malloc(m * n * sizeof *c), *ref = malloc(m * n * sizeof *ref);
  tt_ref_matmul(m, n, kk, a, b, ref);
  cl_program p = clu_build(&E, "matmul");
  cl_kernel k = clu_kernel(p, "tt_matmul");
  cl_mem ba = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         m * kk * sizeof(float), a);
  cl_mem bb = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         kk * n * sizeof(float), b);
  cl_mem bc = clu_buffer(&E, CL_MEM_WRITE_ONLY, m * n * sizeof(float), NULL);
  cl_ulong um = m, un = n, uk = kk;
  CLU_ARG(k, 0, um);
  CLU_ARG(k, 1, un);
  CLU_ARG(k, 2, uk);
  CLU_ARG(k, 3, ba);
  CLU_ARG(k, 4, bb);
  CLU_ARG(k, 5, bc);
  clu_arg(k, 6, (ly * lx + lx * lx) * sizeof(float), NULL);
  size_t g[2] = {n, m}, l[2] = {lx, ly};
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 2, NULL, g, l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bc, CL_TRUE, 0, m * n * sizeof(float), c,
                                0, NULL, NULL));
  for (size_t i = 0; i < m * n; i++)
    cr_assert_eq(tt_ulp_diff(c[i], ref[i]), 0, "c[%zu] = %a, want %a", i, c[i],
                 ref[i]);
  clReleaseMemObject(ba);
  clReleaseMemObject(bb);
  clReleaseMemObject(bc);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(a);
  free(b);
  free(c);
  free(ref);
}

KERNEL_TEST(histogram_atomics) {
  const size_t n = 1 << 18, local = 256;
  const uint32_t nbins = 97;
  uint32_t *in = malloc(n * sizeof *in);
  unsigned long long s = 8;
  for (size_t i = 0; i < n; i++)
    in[i] = (uint32_t)(clu_rand(&s) % 1000);
  uint32_t bins[97], ref[97] = {0};
  tt_ref_hist(n, in, nbins, ref);
  cl_program p = clu_build(&E, "hist");
  cl_kernel k = clu_kernel(p, "tt_hist");
  cl_mem bi = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof *in, in);
  cl_mem bb = clu_buffer(&E, CL_MEM_READ_WRITE, sizeof bins, NULL);
  uint32_t zero = 0;
  CLU_CHECK(clEnqueueFillBuffer(E.q, bb, &zero, sizeof zero, 0, sizeof bins, 0,
                                NULL, NULL));
  CLU_ARG(k, 0, bi);
  CLU_ARG(k, 1, nbins);
  CLU_ARG(k, 2, bb);
  clu_arg(k, 3, nbins * sizeof(uint32_t), NULL);
  size_t g = n, l = local;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bb, CL_TRUE, 0, sizeof bins, bins, 0,
                                NULL, NULL));
  for (uint32_t b = 0; b < nbins; b++)
    cr_assert_eq(bins[b], ref[b], "bin %u", b);
  clReleaseMemObject(bi);
  clReleaseMemObject(bb);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(in);
}

/* Exclusive scan in passes, recursing on the group totals from the host. */
static void scan_level(cl_kernel kg, cl_kernel ka, cl_mem in, cl_mem out,
                       size_t n, size_t local) {
  size_t groups = n / local;
  cl_mem sums = clu_buffer(&E, CL_MEM_READ_WRITE, groups * sizeof(uint32_t),
                           NULL);
  CLU_ARG(kg, 0, in);
  CLU_ARG(kg, 1, out);
  CLU_ARG(kg, 2, sums);
  size_t top = 1;
  while (top < local)
    top *= 2;
  clu_arg(kg, 3, top * sizeof(uint32_t), NULL);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, kg, 1, NULL, &n, &local, 0, NULL,
                                   NULL));
  if (groups > 1) {
    size_t l2 = groups < local ? groups : local;
    cr_assert_eq(groups % l2, 0, "test sizes: totals must split evenly");
    scan_level(kg, ka, sums, sums, groups, l2);
    CLU_ARG(ka, 0, out);
    CLU_ARG(ka, 1, sums);
    CLU_CHECK(clEnqueueNDRangeKernel(E.q, ka, 1, NULL, &n, &local, 0, NULL,
                                     NULL));
  }
  CLU_CHECK(clFinish(E.q));
  clReleaseMemObject(sums);
}

KERNEL_TEST(scan_exclusive) {
  const size_t local = 64, n = 64 * 64 * 16;
  uint32_t *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out),
           *ref = malloc(n * sizeof *ref);
  unsigned long long s = 9;
  for (size_t i = 0; i < n; i++)
    in[i] = (uint32_t)clu_rand(&s);
  tt_ref_scan_u32(n, in, ref);
  cl_program p = clu_build(&E, "scan");
  cl_kernel kg = clu_kernel(p, "tt_scan_groups");
  cl_kernel ka = clu_kernel(p, "tt_scan_add");
  cl_mem bi = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         n * sizeof *in, in);
  cl_mem bo = clu_buffer(&E, CL_MEM_READ_WRITE, n * sizeof *out, NULL);
  scan_level(kg, ka, bi, bo, n, local);
  CLU_CHECK(clEnqueueReadBuffer(E.q, bo, CL_TRUE, 0, n * sizeof *out, out, 0,
                                NULL, NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(out[i], ref[i], "out[%zu]", i);
  clReleaseMemObject(bi);
  clReleaseMemObject(bo);
  clReleaseKernel(kg);
  clReleaseKernel(ka);
  clReleaseProgram(p);
  free(in);
  free(out);
  free(ref);
}

/* Every id query for 1D, 2D and 3D ranges with offsets: each item exactly
 * once, with the answers tt_ref_probe computes. */
static void probe_case(unsigned dims, const size_t g[3], const size_t l[3],
                       const size_t o[3]) {
  size_t total = 1;
  for (unsigned d = 0; d < dims; d++)
    total *= g[d];
  tt_probe_rec *rec = calloc(total, sizeof *rec),
               *ref = calloc(total, sizeof *ref);
  tt_ref_probe(dims, g, l, o, ref);
  cl_program p = clu_build(&E, "probe");
  cl_kernel k = clu_kernel(p, "tt_probe");
  cl_mem br = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                         total * sizeof *rec, rec);
  cl_uint oob = 3;
  CLU_ARG(k, 0, br);
  CLU_ARG(k, 1, oob);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, dims, o, g, l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, br, CL_TRUE, 0, total * sizeof *rec, rec,
                                0, NULL, NULL));
  /* sizes_oob is PoCL's kernel library, not the driver: PoCL 3.1 answers 0
   * (the spec says 1) for a size query beyond work_dim, on every driver. */
  const size_t words = sizeof *rec / sizeof(uint64_t);
  const size_t skip = offsetof(tt_probe_rec, sizes_oob) / sizeof(uint64_t);
  for (size_t i = 0; i < total; i++) {
    const uint64_t *got = (const uint64_t *)&rec[i],
                   *want = (const uint64_t *)&ref[i];
    for (size_t w = 0; w < words; w++)
      if (w != skip)
        cr_assert_eq(got[w], want[w],
                   "item %zu (dims %u): word %zu of the record is %llu, want "
                   "%llu",
                   i, dims, w, (unsigned long long)got[w],
                   (unsigned long long)want[w]);
  }
  clReleaseMemObject(br);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(rec);
  free(ref);
}

KERNEL_TEST(probe_ids_1d_2d_3d) {
  size_t g1[3] = {96}, l1[3] = {8}, o1[3] = {5};
  probe_case(1, g1, l1, o1);
  size_t g2[3] = {12, 10}, l2[3] = {4, 5}, o2[3] = {3, 7};
  probe_case(2, g2, l2, o2);
  size_t g3[3] = {6, 4, 6}, l3[3] = {3, 2, 2}, o3[3] = {1, 2, 3};
  probe_case(3, g3, l3, o3);
}

/* printf from many work-groups on several participants: every line comes
 * out exactly once and whole, and on teams in work-group order (run.c,
 * printf). */
KERNEL_TEST(printf_lines) {
  const char *src =
      "kernel void say(void) {\n"
      "  if (get_local_id(0) == 0)\n"
      "    printf(\"group %u of %u\\n\", (uint)get_group_id(0),"
      " (uint)get_num_groups(0));\n"
      "}\n";
  cl_program p = clu_build_src(&E, src);
  cl_kernel k = clu_kernel(p, "say");
  size_t g = 4 * 64, l = 4;
  clu_capture_begin(1);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CLU_CHECK(clFinish(E.q));
  FILE *f = clu_capture_end(1);
  clReleaseKernel(k);
  clReleaseProgram(p);
  int ordered = E.is_teams;
  int seen[64] = {0};
  char line[128];
  int lines = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned a, b;
    cr_assert_eq(sscanf(line, "group %u of %u", &a, &b), 2, "line '%s'", line);
    cr_assert_eq(b, 64);
    cr_assert_lt(a, 64);
    if (ordered)
      cr_assert_eq(a, (unsigned)lines, "line %d is group %u's", lines, a);
    seen[a]++;
    lines++;
  }
  fclose(f);
  cr_assert_eq(lines, 64);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(seen[i], 1, "group %d printed %d times", i, seen[i]);
}

/* Rounding: work-groups run with round-to-nearest whatever the host thread
 * that runs them (participant 0) had set, and that thread gets its own mode
 * back.  1 + 2^-30 rounds to 1 to nearest and to 1 + 2^-23 upward. */
KERNEL_TEST(round_to_nearest_and_restore) {
  const char *src = "kernel void bump(global float *v) {\n"
                    "  size_t i = get_global_id(0);\n"
                    "  v[i] = v[i] + 0x1p-30f;\n"
                    "}\n";
  float in[64], out[64];
  for (int i = 0; i < 64; i++)
    in[i] = 1.0f;
  cl_program p = clu_build_src_opts(&E, src, "");
  cl_kernel k = clu_kernel(p, "bump");
  cl_mem b =
      clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof in, in);
  CLU_ARG(k, 0, b);
  size_t g = 64, l = 8;
  cr_assert_eq(fesetround(FE_UPWARD), 0);
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CLU_CHECK(clFinish(E.q));
  int mode = fegetround();
  /* up is volatile too: a plain sum may be computed after the fesetround
   * below (the program does not declare FENV_ACCESS; GCC 16 moves it). */
  volatile float one = 1.0f, tiny = 0x1p-30f, up = one + tiny;
  fesetround(FE_TONEAREST);
  cr_assert_eq(mode, FE_UPWARD, "host thread's rounding mode not restored");
  cr_assert(up > 1.0f, "host thread not rounding upward after the command");
  CLU_CHECK(
      clEnqueueReadBuffer(E.q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  for (int i = 0; i < 64; i++)
    cr_assert(out[i] == 1.0f, "out[%d] = %a: not rounded to nearest", i,
              out[i]);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* Flush-to-zero: a program built with -cl-denorms-are-zero flushes a
 * denormal product; one built without keeps it.  Then the host thread (which
 * ran the command as participant 0) still computes denormals: the driver
 * restores the floating-point state it changed. */
KERNEL_TEST(ftz_and_restore) {
  const char *src = "kernel void mul(global float *v) {\n"
                    "  size_t i = get_global_id(0);\n"
                    "  v[i] = v[i] * 0x1p-110f;\n"
                    "}\n";
  float in[64], out[64];
  for (int i = 0; i < 64; i++)
    in[i] = 0x1p-30f * (float)(i + 1); /* products <= 2^-134: denormal */
  for (int ftz = 0; ftz < 2; ftz++) {
    cl_program p =
        clu_build_src_opts(&E, src, ftz ? "-cl-denorms-are-zero" : "");
    cl_kernel k = clu_kernel(p, "mul");
    cl_mem b = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          sizeof in, in);
    CLU_ARG(k, 0, b);
    size_t g = 64, l = 8;
    CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    CLU_CHECK(
        clEnqueueReadBuffer(E.q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < 64; i++) {
      volatile float x = in[i], s = 0x1p-110f;
      float want = ftz ? 0.0f : x * s;
      if (ftz)
        cr_assert(out[i] == 0.0f, "ftz: out[%d] = %a", i, out[i]);
      else
        cr_assert(out[i] == want && out[i] != 0.0f, "no ftz: out[%d] = %a", i,
                  out[i]);
    }
    volatile float hx = 0x1p-126f, hy = 0.5f;
    cr_assert(hx * hy != 0.0f, "host thread left in flush-to-zero mode");
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
}

/* Program-scope variables (OpenCL C 2.0 and 3.0 with
 * __opencl_c_program_scope_global_variables): their initial values reach
 * the kernel, and what one launch writes the next one reads, on every
 * work-group whichever participant runs it.  Devices without them (PoCL
 * 3.1) report CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE 0 and skip. */
KERNEL_TEST(program_scope_variables) {
  size_t max_size = 0;
  CLU_CHECK(clGetDeviceInfo(E.dev, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
                            sizeof max_size, &max_size, NULL));
  if (max_size == 0)
    cr_skip_test("the device has no program-scope variables");
  const char *src = "global int base = 40;\n"
                    "global int table[4] = {1, 2, 3, 4};\n"
                    "kernel void bump(void) { base += 2; }\n"
                    "kernel void use(global int *o) {\n"
                    "  size_t i = get_global_id(0);\n"
                    "  o[i] = base + table[i % 4];\n"
                    "}\n";
  cl_program p = clu_build_src_opts(&E, src, "-cl-std=CL3.0");
  cl_kernel bump = clu_kernel(p, "bump"), use = clu_kernel(p, "use");
  enum { N = 256 };
  cl_mem o = clu_buffer(&E, CL_MEM_READ_WRITE, N * sizeof(cl_int), NULL);
  CLU_ARG(use, 0, o);
  size_t one = 1, n = N, l = 16;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, bump, 1, NULL, &one, &one, 0, NULL,
                                   NULL));
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, use, 1, NULL, &n, &l, 0, NULL, NULL));
  cl_int out[N];
  CLU_CHECK(clEnqueueReadBuffer(E.q, o, CL_TRUE, 0, sizeof out, out, 0, NULL,
                                NULL));
  for (int i = 0; i < N; i++)
    cr_assert_eq(out[i], 42 + 1 + i % 4, "o[%d] = %d, want %d", i, out[i],
                 42 + 1 + i % 4);
  clReleaseMemObject(o);
  clReleaseKernel(use);
  clReleaseKernel(bump);
  clReleaseProgram(p);
}

/* A kernel on a sub-buffer sees the sub-buffer's bytes, not its parent's
 * start: buffer arguments are the sub-buffer's own address (PoCL 7) or the
 * parent's plus the offset (3.1, 6.0; pocl-compat.h). */
KERNEL_TEST(sub_buffer_argument) {
  cl_uint align = 0;
  CLU_CHECK(clGetDeviceInfo(E.dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align,
                            &align, NULL));
  size_t off = align / 8; /* bits to bytes */
  enum { N = 1024 };
  size_t total = off + N * sizeof(cl_uint);
  cl_uint *host = calloc(1, total);
  cr_assert_not_null(host);
  cl_mem parent = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             total, host);
  cl_buffer_region r = {off, N * sizeof(cl_uint)};
  cl_int err;
  cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE,
                                 CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
  CLU_CHECK(err);
  cl_program p = clu_build_src(
      &E, "kernel void iota(global uint *v) {\n"
          "  v[get_global_id(0)] = (uint)get_global_id(0) + 7u;\n"
          "}\n");
  cl_kernel k = clu_kernel(p, "iota");
  CLU_ARG(k, 0, sub);
  size_t n = N, l = 64;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &n, &l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, parent, CL_TRUE, 0, total, host, 0, NULL,
                                NULL));
  const unsigned char *bytes = (const unsigned char *)host;
  for (size_t i = 0; i < off; i++)
    cr_assert_eq(bytes[i], 0, "byte %zu before the sub-buffer written", i);
  for (size_t i = 0; i < N; i++) {
    cl_uint v;
    memcpy(&v, bytes + off + i * sizeof v, sizeof v);
    cr_assert_eq(v, (cl_uint)i + 7u, "sub-buffer word %zu = %u", i, v);
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseMemObject(sub);
  clReleaseMemObject(parent);
  free(host);
}
