/* 7-point stencil over a 3D grid (see kernels.h). */
#include "kernels.h"

/* Shared by the kernel and the reference so both sum in one order. */
static inline float point(size_t nx, size_t ny, size_t nz, float c0, float c1,
                          const float *in, size_t x, size_t y, size_t z) {
  size_t i = x + nx * (y + ny * z), sx = 1, sy = nx, sz = nx * ny;
  if (x == 0 || y == 0 || z == 0 || x + 1 == nx || y + 1 == ny || z + 1 == nz)
    return in[i];
  return c0 * in[i] + c1 * (in[i - sx] + in[i + sx] + in[i - sy] + in[i + sy] +
                            in[i - sz] + in[i + sz]);
}

TT_KERNEL(tt_k_stencil7, tt_stencil7_args, p) {
  size_t x = tt_get_global_id(0), y = tt_get_global_id(1),
         z = tt_get_global_id(2);
  if (x >= p->nx || y >= p->ny || z >= p->nz)
    return;
  p->out[x + p->nx * (y + p->ny * z)] =
      point(p->nx, p->ny, p->nz, p->c0, p->c1, p->in, x, y, z);
}

void tt_ref_stencil7(size_t nx, size_t ny, size_t nz, float c0, float c1,
                     const float *in, float *out) {
  for (size_t z = 0; z < nz; z++)
    for (size_t y = 0; y < ny; y++)
      for (size_t x = 0; x < nx; x++)
        out[x + nx * (y + ny * z)] = point(nx, ny, nz, c0, c1, in, x, y, z);
}
