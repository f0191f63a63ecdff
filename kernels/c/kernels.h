/* teams: the C kernel set for the launcher, with serial references.
 *
 * Every kernel here has an argument struct (documented with the NDRange it
 * expects), a kernel object launched with tt_launch (or the typed
 * name_launch wrapper), and a plain serial reference that the tests, the
 * demo, the benchmark and the OpenCL driver's tests compare against.  The
 * references take plain arrays and sizes, nothing from the launcher, so the
 * OpenCL C versions of the same kernels can be checked with them too.
 *
 * Agreement with the references, as the tests assert it (the C kernels
 * here match bit for bit: same operations in the same order, and -std=c11
 * keeps GCC from fusing multiply-adds; the slack is for implementations
 * that fuse, such as an OpenCL compiler):
 *   triangular, histogram, scan, probe   exact (integers);
 *   reduce     exact: additions only, in the tree order defined below;
 *   axpy       within 1 ULP for positive a, x, y (no cancellation);
 *   stencil7   within 2 ULPs for non-negative data and coefficients;
 *   matmul     exact on integer-valued data (every partial sum an integer
 *              below 2^24, so any order gives the same bits); within k ULPs
 *              on non-negative data (k = the inner dimension). */
#ifndef TEAMS_KERNELS_H
#define TEAMS_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <teams/kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- axpy ---------------------------------------------------------------
 * 1D NDRange, one item per element: y[i] = a * x[i] + y[i] for every global
 * id i (so offset o and global n touch [o, o + n)). */
typedef struct tt_axpy_args {
  double a;
  const double *x;
  double *y;
} tt_axpy_args;
TT_KERNEL_DECLARE(tt_k_axpy, tt_axpy_args)
void tt_ref_axpy(size_t n, double a, const double *x, double *y);

/* ---- 7-point stencil (3D) ------------------------------------------------
 * 3D NDRange over the grid (global = {nx, ny, nz}, or a sub-box through the
 * offset), arrays x fastest: idx = x + nx * (y + ny * z).  Interior points:
 *   out = c0 * in[idx] + c1 * (in[x-1] + in[x+1] + in[y-1] + in[y+1]
 *                              + in[z-1] + in[z+1])   (summed in that order);
 * boundary points copy in.  Ids outside the grid are ignored. */
typedef struct tt_stencil7_args {
  size_t nx, ny, nz;
  float c0, c1;
  const float *in;
  float *out;
} tt_stencil7_args;
TT_KERNEL_DECLARE(tt_k_stencil7, tt_stencil7_args)
void tt_ref_stencil7(size_t nx, size_t ny, size_t nz, float c0, float c1,
                     const float *in, float *out);

/* ---- triangular ----------------------------------------------------------
 * 1D NDRange over rows [0, n), one item per row; row i costs i + 1:
 *   y[i] = sum_{j <= i} (i - j + 1) * x[j]   (mod 2^64).
 * A lower-triangular matrix-vector product: the uneven grid for the steal
 * schedule. */
typedef struct tt_tri_args {
  size_t n;
  const uint32_t *x;
  uint64_t *y;
} tt_tri_args;
TT_KERNEL_DECLARE(tt_k_tri, tt_tri_args)
void tt_ref_tri(size_t n, const uint32_t *x, uint64_t *y);

/* ---- work-group reduction --------------------------------------------------
 * 1D NDRange, global n, any local size L; local memory L floats (set
 * local_mem_per_item = sizeof(float)).  out[g] = sum of in[] over group g's
 * items, computed as a tree in local memory with one barrier per level:
 * with P the power of two >= the group's actual size S, for t = P/2, P/4,
 * ..., 1: s[i] += s[i + t] for i < t and i + t < S.  The host (or a second
 * launch) adds the ngroups partial sums. */
typedef struct tt_reduce_args {
  const float *in;
  float *out; /* num_groups(0) entries */
} tt_reduce_args;
TT_KERNEL_DECLARE(tt_k_reduce, tt_reduce_args)
/* Per-group sums for n items in groups of `local` (the last one smaller),
 * with exactly the kernel's tree: out has ceil(n / local) entries. */
void tt_ref_reduce(size_t n, size_t local, const float *in, float *out);

/* ---- tiled matmul ----------------------------------------------------------
 * C (m x n) = A (m x k) * B (k x n), row-major, float.  2D NDRange with
 * global = {n, m} (dimension 0 runs along a row of C), no offset, any local
 * size {lx, ly}.  Each group computes an ly x lx block of C, walking k in
 * tiles of T = lx (the enqueued size): one phase loads an ly x T tile of A
 * and a T x lx tile of B into local memory, the next multiplies them into
 * per-item accumulators kept in local memory.  Local memory:
 * tt_matmul_local_mem(lx, ly) bytes.  Each c[i][j] sums a[i][k] * b[k][j]
 * for k ascending, like the reference. */
typedef struct tt_matmul_args {
  size_t m, n, k;
  const float *a, *b;
  float *c;
} tt_matmul_args;
TT_KERNEL_DECLARE(tt_k_matmul, tt_matmul_args)
size_t tt_matmul_local_mem(size_t lx, size_t ly);
/* Resolves cfg (dims, global, offset and local memory are set here from
 * args; local size and schedule come from cfg) and launches. */
int tt_matmul(const tt_matmul_args *args, const tt_launch_config *cfg);
void tt_ref_matmul(size_t m, size_t n, size_t k, const float *a,
                   const float *b, float *c);

/* ---- histogram with atomics -----------------------------------------------
 * 1D NDRange over [0, n); bin of in[i] is in[i] % nbins.  Each group counts
 * into a private histogram in local memory (nbins uint32: local_mem =
 * nbins * 4), then adds its non-zero bins to the global bins with C11
 * atomic_fetch_add.  bins is added to: zero it first.  nbins == 0 counts
 * nothing. */
typedef struct tt_hist_args {
  const uint32_t *in;
  uint32_t nbins;
  _Atomic uint32_t *bins;
} tt_hist_args;
TT_KERNEL_DECLARE(tt_k_hist, tt_hist_args)
/* Adds the counts of in[0..n) to bins[0..nbins). */
void tt_ref_hist(size_t n, const uint32_t *in, uint32_t nbins, uint32_t *bins);

/* ---- exclusive prefix sum ----------------------------------------------------
 * out[i] = in[0] + ... + in[i-1] (mod 2^32), out[0] = 0.  Multi-pass:
 *  1. tt_k_scan_groups: 1D over [0, n), local L: each group scans its items
 *     in local memory (Blelloch: up-sweep and down-sweep over P = the power
 *     of two >= L, one barrier per level; local memory P uint32) into out,
 *     and writes its total to sums[group];
 *  2. the group totals are scanned the same way (recursively);
 *  3. tt_k_scan_add: the same NDRange, out[i] += sums[group of i].
 * in == out is allowed.  tt_scan_u32 runs the passes; cfg gives the local
 * size (0: chosen, at least 2) and the schedule.  It allocates the group
 * totals (about n / L words per level). */
typedef struct tt_scan_args {
  const uint32_t *in;
  uint32_t *out;
  uint32_t *sums; /* num_groups(0) entries */
} tt_scan_args;
TT_KERNEL_DECLARE(tt_k_scan_groups, tt_scan_args)
TT_KERNEL_DECLARE(tt_k_scan_add, tt_scan_args) /* reads sums, updates out */
int tt_scan_u32(size_t n, const uint32_t *in, uint32_t *out,
                const tt_launch_config *cfg);
void tt_ref_scan_u32(size_t n, const uint32_t *in, uint32_t *out);

/* ---- probe: every id query ---------------------------------------------------
 * Any NDRange; each work-item writes rec[its global linear id] with the
 * answer to every query (d = 0..2; the *_oob fields query d = 3, where
 * OpenCL gives 0 for ids and offsets, 1 for sizes) and counts its visits. */
typedef struct tt_probe_rec {
  uint64_t work_dim;
  uint64_t global_id[3], local_id[3], group_id[3];
  uint64_t global_size[3], local_size[3], enqueued_local_size[3];
  uint64_t num_groups[3], global_offset[3];
  uint64_t global_linear_id, local_linear_id;
  uint64_t ids_oob;   /* sum of global_id, local_id, group_id, offset at d=3 */
  uint64_t sizes_oob; /* product of the four sizes at d = 3 */
  uint64_t visits;    /* times this item ran: 1 */
} tt_probe_rec;
typedef struct tt_probe_args {
  tt_probe_rec *rec; /* global_size product entries, zeroed */
} tt_probe_args;
TT_KERNEL_DECLARE(tt_k_probe, tt_probe_args)
/* What every item must record for an NDRange of dims dimensions with the
 * given global and enqueued local sizes (all nonzero) and offsets (entries
 * at or beyond dims ignored). */
void tt_ref_probe(unsigned dims, const size_t global[3], const size_t local[3],
                  const size_t offset[3], tt_probe_rec *rec);

/* ---- comparisons ----------------------------------------------------------- */
/* Distance in units in the last place between two finite values (0 when
 * equal, +0 and -0 equal); UINT64_MAX when either is NaN. */
uint64_t tt_ulp_diff(float a, float b);
uint64_t tt_ulp_diff_d(double a, double b);

#ifdef __cplusplus
}
#endif
#endif
