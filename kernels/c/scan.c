/* Exclusive prefix sum in passes: per-group Blelloch scans, a scan of the
 * group totals, and an add of the group offsets (kernels.h). */
#include <stdlib.h>

#include "kernels.h"

static size_t ceil_pow2(size_t x) {
  size_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

TT_KERNEL_GROUP(tt_k_scan_groups, tt_scan_args, p) {
  uint32_t *s = tt_local_mem();
  const size_t size = tt_get_local_size(0), top = ceil_pow2(size);
  /* Pad to a power of two with zeros: top < 2 * size, so one extra slot per
   * item at most. */
  TT_PHASE {
    size_t i = tt_get_local_id(0);
    s[i] = p->in[tt_get_global_id(0)];
    if (size + i < top)
      s[size + i] = 0;
  }
  /* Up-sweep: after level d, s[k*2d - 1] holds the sum of its 2d-block. */
  for (size_t d = 1; d < top; d *= 2) {
    TT_PHASE_FIRST(top / (2 * d)) {
      size_t i = tt_get_local_id(0);
      size_t hi = d * (2 * i + 2) - 1;
      s[hi] += s[hi - d];
    }
  }
  /* The group's total leaves, and the root becomes the exclusive prefix of
   * the whole group: 0. */
  p->sums[tt_get_group_id(0)] = s[top - 1];
  s[top - 1] = 0;
  /* Down-sweep: each node passes its prefix to its left child and prefix +
   * left sum to its right child. */
  for (size_t d = top / 2; d >= 1; d /= 2) {
    TT_PHASE_FIRST(top / (2 * d)) {
      size_t i = tt_get_local_id(0);
      size_t hi = d * (2 * i + 2) - 1;
      uint32_t left = s[hi - d];
      s[hi - d] = s[hi];
      s[hi] += left;
    }
  }
  TT_PHASE { p->out[tt_get_global_id(0)] = s[tt_get_local_id(0)]; }
}

TT_KERNEL(tt_k_scan_add, tt_scan_args, p) {
  p->out[tt_get_global_id(0)] += p->sums[tt_get_group_id(0)];
}

int tt_scan_u32(size_t n, const uint32_t *in, uint32_t *out,
                const tt_launch_config *cfg) {
  if (cfg == NULL || (n != 0 && (in == NULL || out == NULL)))
    return TT_EINVAL;
  if (n == 0)
    return 0;
  tt_launch_config c = *cfg;
  c.dims = 1;
  c.global[0] = n;
  c.offset[0] = 0;
  if (c.local[0] > n) /* the recursion's levels shrink below a fixed size */
    c.local[0] = n;
  c.local_mem = 0;
  c.local_mem_per_item = 0;
  tt_ndrange nd;
  int err = tt_launch_resolve(&c, &nd);
  if (err != 0)
    return err;
  size_t local = nd.local[0];
  /* A group of one would leave as many totals as items: no progress. */
  if (local < 2) {
    if (c.local[0] != 0 && n > 1)
      return TT_EINVAL;
    local = n < 2 ? n : 2;
  }
  c.local[0] = local;
  c.local_mem = sizeof(uint32_t) * ceil_pow2(local);
  size_t ngroups = n / local + (n % local != 0);

  uint32_t one;
  uint32_t *sums = ngroups == 1 ? &one : malloc(ngroups * sizeof *sums);
  if (sums == NULL)
    return TT_ENOMEM;
  tt_scan_args a = {in, out, sums};
  err = tt_k_scan_groups_launch(&a, &c);
  if (err == 0 && ngroups > 1) {
    err = tt_scan_u32(ngroups, sums, sums, cfg);
    if (err == 0)
      err = tt_k_scan_add_launch(&a, &c);
  }
  if (sums != &one)
    free(sums);
  return err;
}

void tt_ref_scan_u32(size_t n, const uint32_t *in, uint32_t *out) {
  uint32_t s = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t v = in[i];
    out[i] = s;
    s += v;
  }
}
