/* Histogram with atomics (kernels/c/hist.c): bin of in[i] is in[i] % nbins;
 * each group counts into a private histogram in local memory (atomic_inc on
 * local), then adds its non-zero bins to the global bins (atomic_add).
 * bins is added to: zero it first.  Local memory: nbins uints. */
kernel void tt_hist(global const uint *in, uint nbins,
                    volatile global uint *bins, local uint *h)
{
  size_t items = get_local_size(0);
  for (size_t b = get_local_id(0); b < nbins; b += items)
    h[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&h[in[get_global_id(0)] % nbins]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t b = get_local_id(0); b < nbins; b += items)
    if (h[b] != 0)
      atomic_add(&bins[b], h[b]);
}
