/* Triangular: row i of a lower-triangular product costs i + 1
 * (kernels/c/tri.c): y[i] = sum_{j <= i} (i - j + 1) * x[j] mod 2^64.
 * The uneven grid of the scheduling benchmarks. */
kernel void tt_tri(ulong n, global const uint *x, global ulong *y)
{
  size_t i = get_global_id(0);
  if (i >= n)
    return;
  ulong s = 0;
  for (size_t j = 0; j <= i; j++)
    s += (ulong)(i - j + 1) * x[j];
  y[i] = s;
}
