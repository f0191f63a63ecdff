/* Tiled matmul C (m x n) = A (m x k) * B (k x n), row-major float
 * (kernels/c/matmul.c).  2D NDRange global = {n, m}, local {lx, ly}; tiles
 * of depth T = lx: an ly x T tile of A and a T x lx tile of B in local
 * memory, two barriers per tile.  Each c[i][j] sums a[i][t] * b[t][j] for t
 * ascending, as tt_ref_matmul does (0 ULP: no contraction).
 * Local memory: tiles = (ly * lx + lx * lx) floats. */
#pragma OPENCL FP_CONTRACT OFF

kernel void tt_matmul(ulong m, ulong n, ulong k, global const float *a,
                      global const float *b, global float *c,
                      local float *tiles)
{
  const size_t lx = get_local_size(0), ly = get_local_size(1), T = lx;
  const size_t x = get_local_id(0), y = get_local_id(1);
  const size_t row = get_global_id(1), col = get_global_id(0);
  local float *as = tiles;           /* [ly][T] */
  local float *bs = tiles + ly * T;  /* [T][lx] */
  float s = 0.0f;
  for (size_t k0 = 0; k0 < k; k0 += T)
    {
      for (size_t t = x; t < T; t += lx)
        as[y * T + t] = k0 + t < k ? a[row * k + k0 + t] : 0.0f;
      for (size_t t = y; t < T; t += ly)
        bs[t * lx + x] = k0 + t < k ? b[(k0 + t) * n + col] : 0.0f;
      barrier(CLK_LOCAL_MEM_FENCE);
      size_t depth = k - k0 < T ? k - k0 : T;
      for (size_t t = 0; t < depth; t++)
        s += as[y * T + t] * bs[t * lx + x];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  c[row * n + col] = s;
}
