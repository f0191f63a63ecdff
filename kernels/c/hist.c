/* Histogram: a private histogram per group in local memory, merged into the
 * global bins with atomics (kernels.h). */
#include "kernels.h"

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t),
               "bins are shared with code that sees plain uint32_t");

TT_KERNEL_GROUP(tt_k_hist, tt_hist_args, p) {
  uint32_t *h = tt_local_mem();
  const uint32_t nbins = p->nbins;
  const size_t items = tt_get_local_size(0);
  TT_PHASE {
    for (size_t b = tt_get_local_id(0); b < nbins; b += items)
      h[b] = 0;
  }
  /* One thread runs the whole group, so plain increments are safe here where
   * OpenCL would need atomic_inc on local memory. */
  TT_PHASE { h[p->in[tt_get_global_id(0)] % nbins]++; }
  /* Relaxed is enough: nothing is published through the bins; the launch's
   * completion orders them before the caller reads. */
  TT_PHASE {
    for (size_t b = tt_get_local_id(0); b < nbins; b += items)
      if (h[b] != 0)
        atomic_fetch_add_explicit(&p->bins[b], h[b], memory_order_relaxed);
  }
}

void tt_ref_hist(size_t n, const uint32_t *in, uint32_t nbins, uint32_t *bins) {
  for (size_t i = 0; i < n; i++)
    bins[in[i] % nbins]++;
}
