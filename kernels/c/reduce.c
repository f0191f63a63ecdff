/* Work-group reduction: a tree in local memory, one barrier per level
 * (kernels.h gives the exact tree, which the reference repeats). */
#include "kernels.h"

static size_t ceil_pow2(size_t x) {
  size_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

TT_KERNEL_GROUP(tt_k_reduce, tt_reduce_args, p) {
  float *s = tt_local_mem();
  size_t size = tt_get_local_size(0);
  TT_PHASE { s[tt_get_local_id(0)] = p->in[tt_get_global_id(0)]; }
  /* Items at t and beyond sit each level out, so the level visits only the
   * first t. */
  for (size_t t = ceil_pow2(size) / 2; t > 0; t /= 2) {
    TT_PHASE_FIRST(t) {
      size_t i = tt_get_local_id(0);
      if (i + t < size)
        s[i] += s[i + t];
    }
  }
  p->out[tt_get_group_id(0)] = s[0];
}

/* The value s[i] holds once every level with stride >= t has run. */
static float tree(const float *x, size_t size, size_t i, size_t t, size_t top) {
  if (t >= top)
    return x[i];
  float v = tree(x, size, i, 2 * t, top);
  if (i + t < size)
    v += tree(x, size, i + t, 2 * t, top);
  return v;
}

void tt_ref_reduce(size_t n, size_t local, const float *in, float *out) {
  for (size_t g = 0; g * local < n; g++) {
    size_t size = n - g * local < local ? n - g * local : local;
    out[g] = tree(in + g * local, size, 0, 1, ceil_pow2(size));
  }
}
