/* Tests of the C kernel set (kernels/c/): every kernel against its serial
 * reference, across sizes including odd ones and remainder groups, every
 * schedule, several participant counts and local sizes.
 *
 * Tolerances (kernels.h states them): integers exact; reduce exact (only
 * additions, in the order kernels.h defines); axpy 1 ULP and stencil7 2 ULPs
 * on positive data (exact here; the slack covers a build that fuses
 * multiply-adds); matmul exact on integer-valued data (every partial sum is
 * an integer below 2^24, so any order gives the same bits) and within k
 * ULPs on random positive data.
 * Nothing here measures time: the machine is shared. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "teams/launch.h"
#include "teams/team.h"

static const tt_schedule schedules[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY,
                                        TT_SCHED_STEAL, TT_SCHED_AUTO};
#define NSCHED (sizeof schedules / sizeof schedules[0])
/* 0: the whole team; a count above the team's size is clamped to it. */
static const size_t parts[] = {0, 1, 2, 3};
#define NPARTS (sizeof parts / sizeof parts[0])

/* A fixed-seed generator (xorshift), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static float rndf(void) { return (float)(rnd() >> 40) / (float)(1 << 24); } /* [0,1) */

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  cr_assert(p != NULL);
  return p;
}

/* ---- axpy ------------------------------------------------------------------ */
Test(kernels, axpy) {
  static const size_t sizes[] = {1, 3, 1000, 4099, 100003};
  static const size_t locals[] = {0, 1, 7, 256};
  size_t nmax = 100003;
  double *x = xmalloc(nmax * 8), *y = xmalloc(nmax * 8), *y0 = xmalloc(nmax * 8),
         *ref = xmalloc(nmax * 8);
  for (size_t i = 0; i < nmax; i++) {
    x[i] = 0.25 + rndf();
    y0[i] = 1.0 + rndf();
  }
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
      for (size_t k = 0; k < NSCHED; k++)
        for (size_t pi = 0; pi < NPARTS; pi++) {
          size_t n = sizes[si], l = locals[li];
          if (l > n)
            continue;
          memcpy(y, y0, n * 8);
          memcpy(ref, y0, n * 8);
          tt_axpy_args a = {1.5, x, y};
          tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {l},
                                  .schedule = schedules[k], .participants = parts[pi]};
          cr_assert_eq(tt_k_axpy_launch(&a, &cfg), 0);
          tt_ref_axpy(n, 1.5, x, ref);
          for (size_t i = 0; i < n; i++)
            cr_assert(tt_ulp_diff_d(y[i], ref[i]) <= 1,
                      "n %zu local %zu sched %d p %zu: y[%zu] = %.17g want %.17g", n, l,
                      (int)schedules[k], parts[pi], i, y[i], ref[i]);
        }
  /* With an offset only [o, o + n) changes. */
  memcpy(y, y0, 1000 * 8);
  memcpy(ref, y0, 1000 * 8);
  tt_axpy_args a = {-2.0, x, y};
  tt_launch_config cfg = {.dims = 1, .global = {500}, .local = {64}, .offset = {300}};
  cr_assert_eq(tt_k_axpy_launch(&a, &cfg), 0);
  tt_ref_axpy(500, -2.0, x + 300, ref + 300);
  for (size_t i = 0; i < 1000; i++)
    cr_assert_eq(y[i], ref[i], "offset launch: y[%zu]", i);
  free(x);
  free(y);
  free(y0);
  free(ref);
}

/* ---- 7-point stencil --------------------------------------------------------- */
Test(kernels, stencil7) {
  static const size_t grids[][3] = {{1, 1, 1}, {3, 3, 3}, {17, 9, 5}, {32, 32, 32}, {2, 40, 3}};
  static const size_t locals[][3] = {{0, 0, 0}, {4, 4, 1}, {5, 3, 2}, {1, 1, 1}};
  size_t nmax = 32 * 32 * 32;
  float *in = xmalloc(nmax * 4), *out = xmalloc(nmax * 4), *ref = xmalloc(nmax * 4);
  for (size_t i = 0; i < nmax; i++)
    in[i] = rndf();
  for (size_t gi = 0; gi < sizeof grids / sizeof *grids; gi++)
    for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
      for (size_t k = 0; k < NSCHED; k++)
        for (size_t pi = 0; pi < NPARTS; pi += 2) {
          const size_t *g = grids[gi], *l = locals[li];
          if (l[0] > g[0] || l[1] > g[1] || l[2] > g[2])
            continue;
          size_t n = g[0] * g[1] * g[2];
          memset(out, 0xff, n * 4);
          tt_stencil7_args a = {g[0], g[1], g[2], 0.4f, 0.1f, in, out};
          tt_launch_config cfg = {.dims = 3, .global = {g[0], g[1], g[2]},
                                  .local = {l[0], l[1], l[2]}, .schedule = schedules[k],
                                  .participants = parts[pi]};
          cr_assert_eq(tt_k_stencil7_launch(&a, &cfg), 0);
          tt_ref_stencil7(g[0], g[1], g[2], 0.4f, 0.1f, in, ref);
          for (size_t i = 0; i < n; i++)
            cr_assert(tt_ulp_diff(out[i], ref[i]) <= 2,
                      "grid %zux%zux%zu local %zux%zux%zu: out[%zu] = %g want %g", g[0],
                      g[1], g[2], l[0], l[1], l[2], i, out[i], ref[i]);
        }
  /* A sub-box through the offset: the interior of a 10^3 grid. */
  size_t nx = 10, n = 1000;
  memset(out, 0, n * 4);
  tt_stencil7_args a = {nx, nx, nx, 0.4f, 0.1f, in, out};
  tt_launch_config cfg = {.dims = 3, .global = {8, 8, 8}, .local = {3, 4, 8}, .offset = {1, 1, 1}};
  cr_assert_eq(tt_k_stencil7_launch(&a, &cfg), 0);
  tt_ref_stencil7(nx, nx, nx, 0.4f, 0.1f, in, ref);
  for (size_t z = 0; z < nx; z++)
    for (size_t y = 0; y < nx; y++)
      for (size_t x = 0; x < nx; x++) {
        size_t i = x + nx * (y + nx * z);
        int inside = x && y && z && x < 9 && y < 9 && z < 9;
        cr_assert(inside ? tt_ulp_diff(out[i], ref[i]) <= 2 : out[i] == 0.0f,
                  "sub-box point %zu,%zu,%zu", x, y, z);
      }
  free(in);
  free(out);
  free(ref);
}

/* ---- triangular ------------------------------------------------------------------ */
Test(kernels, triangular) {
  static const size_t sizes[] = {1, 2, 100, 3001};
  static const size_t locals[] = {0, 1, 16, 100};
  uint32_t *x = xmalloc(3001 * 4);
  uint64_t *y = xmalloc(3001 * 8), *ref = xmalloc(3001 * 8);
  for (size_t i = 0; i < 3001; i++)
    x[i] = (uint32_t)rnd();
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
      for (size_t k = 0; k < NSCHED; k++)
        for (size_t pi = 0; pi < NPARTS; pi++) {
          size_t n = sizes[si], l = locals[li];
          if (l > n)
            continue;
          memset(y, 0, n * 8);
          tt_tri_args a = {n, x, y};
          tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {l},
                                  .schedule = schedules[k], .participants = parts[pi]};
          cr_assert_eq(tt_k_tri_launch(&a, &cfg), 0);
          tt_ref_tri(n, x, ref);
          cr_assert(memcmp(y, ref, n * 8) == 0, "n %zu local %zu sched %d", n, l,
                    (int)schedules[k]);
        }
  /* Spot-check the reference itself against the formula. */
  uint32_t sx[3] = {1, 2, 3};
  uint64_t sy[3];
  tt_ref_tri(3, sx, sy);
  cr_assert(sy[0] == 1 && sy[1] == 2 * 1 + 2 && sy[2] == 3 * 1 + 2 * 2 + 3);
  free(x);
  free(y);
  free(ref);
}

/* ---- reduction ---------------------------------------------------------------------- */
Test(kernels, reduce) {
  static const size_t sizes[] = {1, 5, 1000, 65537};
  static const size_t locals[] = {0, 1, 3, 64, 1000};
  size_t nmax = 65537;
  float *in = xmalloc(nmax * 4), *ints = xmalloc(nmax * 4), *out = xmalloc(nmax * 4),
        *ref = xmalloc(nmax * 4);
  for (size_t i = 0; i < nmax; i++) {
    in[i] = rndf() - 0.5f;
    ints[i] = (float)(rnd() % 16);
  }
  for (int data = 0; data < 2; data++)
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
      for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
        for (size_t k = 0; k < NSCHED; k++)
          for (size_t pi = 0; pi < NPARTS; pi += 2) {
            size_t n = sizes[si];
            const float *src = data ? ints : in;
            tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {locals[li]},
                                    .local_mem_per_item = sizeof(float),
                                    .schedule = schedules[k], .participants = parts[pi]};
            if (locals[li] > n)
              continue;
            tt_ndrange nd;
            cr_assert_eq(tt_launch_resolve(&cfg, &nd), 0);
            tt_reduce_args a = {src, out};
            cr_assert_eq(tt_k_reduce_launch(&a, &cfg), 0);
            tt_ref_reduce(n, nd.local[0], src, ref);
            double total = 0, want = 0;
            for (size_t g = 0; g < nd.ngroups; g++) {
              cr_assert(tt_ulp_diff(out[g], ref[g]) == 0,
                        "n %zu local %zu group %zu: %.9g want %.9g", n, nd.local[0], g,
                        out[g], ref[g]);
              total += out[g];
            }
            if (data) { /* integers: the grand total is exact */
              for (size_t i = 0; i < n; i++)
                want += src[i];
              cr_assert_eq(total, want);
            }
          }
  free(in);
  free(ints);
  free(out);
  free(ref);
}

/* ---- matmul ---------------------------------------------------------------------------- */
Test(kernels, matmul) {
  static const size_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {33, 17, 29}, {64, 64, 64}, {5, 40, 70}};
  static const size_t locals[][2] = {{0, 0}, {4, 4}, {8, 2}, {5, 3}, {1, 1}};
  size_t nmax = 70 * 64;
  float *a = xmalloc(nmax * 4), *b = xmalloc(nmax * 4), *c = xmalloc(nmax * 4),
        *ref = xmalloc(nmax * 4);
  for (int ints = 0; ints < 2; ints++)
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
      size_t m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
      for (size_t i = 0; i < m * k; i++)
        a[i] = ints ? (float)(rnd() % 8) : rndf();
      for (size_t i = 0; i < k * n; i++)
        b[i] = ints ? (float)(rnd() % 8) : rndf();
      tt_ref_matmul(m, n, k, a, b, ref);
      for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
        for (size_t sk = 0; sk < NSCHED; sk++)
          for (size_t pi = 0; pi < NPARTS; pi += 2) {
            size_t lx = locals[li][0], ly = locals[li][1];
            if (lx > n || ly > m)
              continue;
            memset(c, 0xff, m * n * 4);
            tt_matmul_args args = {m, n, k, a, b, c};
            tt_launch_config cfg = {.local = {lx, ly}, .schedule = schedules[sk],
                                    .participants = parts[pi]};
            cr_assert_eq(tt_matmul(&args, &cfg), 0);
            for (size_t i = 0; i < m * n; i++)
              cr_assert(ints ? c[i] == ref[i] : tt_ulp_diff(c[i], ref[i]) <= k,
                        "%zux%zux%zu local %zux%zu: c[%zu] = %.9g want %.9g", m, n, k, lx,
                        ly, i, c[i], ref[i]);
          }
    }
  /* The reference against a hand-computed product. */
  float ha[4] = {1, 2, 3, 4}, hb[4] = {5, 6, 7, 8}, hc[4];
  tt_ref_matmul(2, 2, 2, ha, hb, hc);
  cr_assert(hc[0] == 19 && hc[1] == 22 && hc[2] == 43 && hc[3] == 50);
  cr_assert_eq(tt_matmul(NULL, &(tt_launch_config){0}), TT_EINVAL);
  tt_matmul_args empty = {0, 4, 4, a, b, c};
  cr_assert_eq(tt_matmul(&empty, &(tt_launch_config){0}), TT_EINVAL);
  free(a);
  free(b);
  free(c);
  free(ref);
}

/* ---- histogram ------------------------------------------------------------------------- */
Test(kernels, histogram) {
  static const size_t sizes[] = {1, 1000, 100000};
  static const uint32_t nbins[] = {1, 7, 256};
  static const size_t locals[] = {0, 1, 33, 512};
  uint32_t *in = xmalloc(100000 * 4), ref[256];
  _Atomic uint32_t bins[256];
  for (size_t i = 0; i < 100000; i++)
    in[i] = (uint32_t)(rnd() % 1000); /* uneven: 1000 % nbins */
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t bi = 0; bi < sizeof nbins / sizeof *nbins; bi++)
      for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
        for (size_t k = 0; k < NSCHED; k++)
          for (size_t pi = 0; pi < NPARTS; pi += 2) {
            size_t n = sizes[si], l = locals[li];
            uint32_t nb = nbins[bi];
            if (l > n)
              continue;
            for (uint32_t b = 0; b < nb; b++) {
              atomic_init(&bins[b], 0);
              ref[b] = 0;
            }
            tt_hist_args a = {in, nb, bins};
            tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {l},
                                    .local_mem = nb * sizeof(uint32_t),
                                    .schedule = schedules[k], .participants = parts[pi]};
            cr_assert_eq(tt_k_hist_launch(&a, &cfg), 0);
            tt_ref_hist(n, in, nb, ref);
            uint64_t total = 0;
            for (uint32_t b = 0; b < nb; b++) {
              cr_assert_eq(atomic_load(&bins[b]), ref[b], "n %zu bins %u local %zu bin %u",
                           n, nb, l, b);
              total += ref[b];
            }
            cr_assert_eq(total, n);
          }
  free(in);
}

/* ---- exclusive scan ------------------------------------------------------------------------ */
Test(kernels, scan) {
  static const size_t sizes[] = {1, 2, 3, 1000, 65536, 100001};
  static const size_t locals[] = {0, 2, 3, 64, 1024};
  size_t nmax = 100001;
  uint32_t *in = xmalloc(nmax * 4), *out = xmalloc(nmax * 4), *ref = xmalloc(nmax * 4);
  for (size_t i = 0; i < nmax; i++)
    in[i] = (uint32_t)rnd(); /* sums wrap: the scan is mod 2^32 */
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t li = 0; li < sizeof locals / sizeof *locals; li++)
      for (size_t k = 0; k < NSCHED; k++)
        for (size_t pi = 0; pi < NPARTS; pi += 2) {
          size_t n = sizes[si];
          memset(out, 0xee, n * 4);
          tt_launch_config cfg = {.local = {locals[li]}, .schedule = schedules[k],
                                  .participants = parts[pi]};
          cr_assert_eq(tt_scan_u32(n, in, out, &cfg), 0, "n %zu local %zu", n, locals[li]);
          tt_ref_scan_u32(n, in, ref);
          for (size_t i = 0; i < n; i++)
            cr_assert_eq(out[i], ref[i], "n %zu local %zu sched %d: out[%zu]", n, locals[li],
                         (int)schedules[k], i);
        }
  /* In place, and a local size of one is refused rather than looping. */
  memcpy(out, in, 5000 * 4);
  cr_assert_eq(tt_scan_u32(5000, out, out, &(tt_launch_config){.local = {100}}), 0);
  tt_ref_scan_u32(5000, in, ref);
  cr_assert(memcmp(out, ref, 5000 * 4) == 0);
  cr_assert_eq(tt_scan_u32(10, in, out, &(tt_launch_config){.local = {1}}), TT_EINVAL);
  uint32_t one_in = 7, one_out = 9;
  cr_assert_eq(tt_scan_u32(1, &one_in, &one_out, &(tt_launch_config){.local = {1}}), 0);
  cr_assert_eq(one_out, 0);
  free(in);
  free(out);
  free(ref);
}

/* ---- probe through the kernel set's reference ------------------------------------------------ */
Test(kernels, probe) {
  size_t g[3] = {7, 5, 3}, l[3] = {2, 5, 2}, o[3] = {11, 0, 4};
  size_t n = 7 * 5 * 3;
  tt_probe_rec *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
  for (size_t k = 0; k < NSCHED; k++) {
    memset(got, 0, n * sizeof *got);
    tt_probe_args a = {got};
    tt_launch_config cfg = {.dims = 3, .schedule = schedules[k]};
    memcpy(cfg.global, g, sizeof g);
    memcpy(cfg.local, l, sizeof l);
    memcpy(cfg.offset, o, sizeof o);
    cr_assert_eq(tt_k_probe_launch(&a, &cfg), 0);
    tt_ref_probe(3, g, l, o, want);
    cr_assert(memcmp(got, want, n * sizeof *got) == 0, "schedule %d", (int)schedules[k]);
  }
  free(got);
  free(want);
}

Test(kernels, ulp_diff) {
  cr_assert_eq(tt_ulp_diff(1.0f, 1.0f), 0);
  cr_assert_eq(tt_ulp_diff(0.0f, -0.0f), 0);
  cr_assert_eq(tt_ulp_diff(1.0f, nextafterf(1.0f, 2.0f)), 1);
  cr_assert_eq(tt_ulp_diff(-1e-45f, 1e-45f), 2);
  cr_assert_eq(tt_ulp_diff_d(1.0, nextafter(nextafter(1.0, 0.0), 0.0)), 2);
  cr_assert_eq(tt_ulp_diff_d(-5e-324, 5e-324), 2);
  cr_assert_eq(tt_ulp_diff(NAN, 1.0f), UINT64_MAX);
}
