/* axpy: y = a * x + y over a 1D NDRange (see kernels.h). */
#include "kernels.h"

TT_KERNEL(tt_k_axpy, tt_axpy_args, p) {
  size_t i = tt_get_global_id(0);
  p->y[i] = p->a * p->x[i] + p->y[i];
}

void tt_ref_axpy(size_t n, double a, const double *x, double *y) {
  for (size_t i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
