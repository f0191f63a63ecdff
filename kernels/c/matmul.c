/* Tiled matmul: tiles of A and B in local memory, two barriers per tile
 * (kernels.h).  Local memory layout, for the enqueued group lx x ly and the
 * tile depth T = lx:  as[ly][T] | bs[T][lx] | acc[ly][lx]  (floats).  A
 * smaller remainder group uses the leading part of each array with its own
 * row length. */
#include "kernels.h"

size_t tt_matmul_local_mem(size_t lx, size_t ly) {
  return sizeof(float) * (ly * lx + lx * lx + ly * lx);
}

TT_KERNEL_GROUP(tt_k_matmul, tt_matmul_args, p) {
  const size_t tdepth = tt_get_enqueued_local_size(0);
  const size_t lx = tt_get_local_size(0), ly = tt_get_local_size(1);
  const size_t elx = tt_get_enqueued_local_size(0),
               ely = tt_get_enqueued_local_size(1);
  float *as = tt_local_mem();
  float *bs = as + ely * tdepth;
  float *acc = bs + tdepth * elx;
  const size_t n = p->n, k = p->k;

  TT_PHASE { acc[tt_get_local_linear_id()] = 0.0f; }
  for (size_t k0 = 0; k0 < k; k0 += tdepth) {
    /* Load: item (x, y) fills row y of the A tile and column x of the B tile,
     * striding by the group's extent; zeros past k add nothing. */
    TT_PHASE {
      size_t x = tt_get_local_id(0), y = tt_get_local_id(1);
      size_t row = tt_get_global_id(1), col = tt_get_global_id(0);
      for (size_t t = x; t < tdepth; t += lx)
        as[y * tdepth + t] = k0 + t < k ? p->a[row * k + k0 + t] : 0.0f;
      for (size_t t = y; t < tdepth; t += ly)
        bs[t * lx + x] = k0 + t < k ? p->b[(k0 + t) * n + col] : 0.0f;
    }
    /* Multiply: the barrier above made both tiles whole. */
    size_t depth = k - k0 < tdepth ? k - k0 : tdepth;
    TT_PHASE {
      size_t x = tt_get_local_id(0), y = tt_get_local_id(1);
      float s = acc[tt_get_local_linear_id()];
      for (size_t t = 0; t < depth; t++)
        s += as[y * tdepth + t] * bs[t * lx + x];
      acc[tt_get_local_linear_id()] = s;
    }
  }
  TT_PHASE {
    p->c[tt_get_global_id(1) * n + tt_get_global_id(0)] =
        acc[tt_get_local_linear_id()];
  }
}

int tt_matmul(const tt_matmul_args *args, const tt_launch_config *cfg) {
  if (args == NULL || cfg == NULL)
    return TT_EINVAL;
  tt_launch_config c = *cfg;
  c.dims = 2;
  c.global[0] = args->n;
  c.global[1] = args->m;
  c.global[2] = 1;
  c.offset[0] = c.offset[1] = c.offset[2] = 0;
  c.local_mem = 0;
  c.local_mem_per_item = 0;
  tt_ndrange nd;
  int err = tt_launch_resolve(&c, &nd);
  if (err != 0)
    return err;
  /* Fix the choice, so the launch cannot pick another size than the one the
   * memory was sized for. */
  c.local[0] = nd.local[0];
  c.local[1] = nd.local[1];
  c.local_mem = tt_matmul_local_mem(nd.local[0], nd.local[1]);
  return tt_launch(&tt_k_matmul, args, &c);
}

void tt_ref_matmul(size_t m, size_t n, size_t k, const float *a,
                   const float *b, float *c) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float s = 0.0f;
      for (size_t t = 0; t < k; t++)
        s += a[i * k + t] * b[t * n + j];
      c[i * n + j] = s;
    }
}
