/* Triangular: row i of a lower-triangular product costs i + 1 (kernels.h). */
#include "kernels.h"

static inline uint64_t row(size_t i, const uint32_t *x) {
  uint64_t s = 0;
  for (size_t j = 0; j <= i; j++)
    s += (uint64_t)(i - j + 1) * x[j];
  return s;
}

TT_KERNEL(tt_k_tri, tt_tri_args, p) {
  size_t i = tt_get_global_id(0);
  if (i < p->n)
    p->y[i] = row(i, p->x);
}

void tt_ref_tri(size_t n, const uint32_t *x, uint64_t *y) {
  for (size_t i = 0; i < n; i++)
    y[i] = row(i, x);
}
