/* Histogram: a private histogram per group in local memory, merged into the
 * global bins with atomics (kernels.h). */
#include "kernels.h"

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t),
               "bins are shared with code that sees plain uint32_t");

TT_KERNEL_GROUP(tt_k_hist, tt_hist_args, p) {
  uint32_t *h = tt_local_mem();
  const uint32_t nbins = p->nbins;
  const size_t items = tt_get_local_size(0);
  if (nbins == 0) /* no bins, nothing to count (and no local memory) */
    return;
  /* Items beyond nbins have no bin to clear or merge: skip them. */
  TT_PHASE_FIRST(nbins) {
    for (size_t b = tt_get_local_id(0); b < nbins; b += items)
      h[b] = 0;
  }
  /* One thread runs the whole group, so plain increments are safe here where
   * OpenCL would need atomic_inc on local memory. */
  /* A power-of-two bin count takes a mask instead of a division (measured
   * here: the division was most of the phase's time). */
  const uint32_t mask = (nbins & (nbins - 1)) == 0 ? nbins - 1 : 0;
  if (mask != 0 || nbins == 1) {
    TT_PHASE { h[p->in[tt_get_global_id(0)] & mask]++; }
  } else {
    TT_PHASE { h[p->in[tt_get_global_id(0)] % nbins]++; }
  }
  /* Relaxed is enough: nothing is published through the bins; the launch's
   * completion orders them before the caller reads. */
  TT_PHASE_FIRST(nbins) {
    for (size_t b = tt_get_local_id(0); b < nbins; b += items)
      if (h[b] != 0)
        atomic_fetch_add_explicit(&p->bins[b], h[b], memory_order_relaxed);
  }
}

void tt_ref_hist(size_t n, const uint32_t *in, uint32_t nbins, uint32_t *bins) {
  for (size_t i = 0; i < n; i++)
    bins[in[i] % nbins]++;
}
