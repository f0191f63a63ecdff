/* Exclusive prefix sum in passes (kernels/c/scan.c):
 *  tt_scan_groups: each group scans its items in local memory (Blelloch:
 *    up-sweep and down-sweep over P = the power of two >= the group size,
 *    one barrier per level; local memory P uints) into out, and writes its
 *    total to sums[group];
 *  the host scans the group totals the same way (recursively);
 *  tt_scan_add: the same NDRange, out[i] += sums[group of i].
 * Integers mod 2^32: compared exactly with tt_ref_scan_u32. */
kernel void tt_scan_groups(global const uint *in, global uint *out,
                           global uint *sums, local uint *s)
{
  const size_t i = get_local_id(0), size = get_local_size(0);
  size_t top = 1;
  while (top < size)
    top *= 2;
  s[i] = in[get_global_id(0)];
  if (size + i < top)
    s[size + i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t d = 1; d < top; d *= 2)
    {
      if (i < top / (2 * d))
        {
          size_t hi = d * (2 * i + 2) - 1;
          s[hi] += s[hi - d];
        }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  if (i == 0)
    {
      sums[get_group_id(0)] = s[top - 1];
      s[top - 1] = 0;
    }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t d = top / 2; d >= 1; d /= 2)
    {
      if (i < top / (2 * d))
        {
          size_t hi = d * (2 * i + 2) - 1;
          uint left = s[hi - d];
          s[hi - d] = s[hi];
          s[hi] += left;
        }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  out[get_global_id(0)] = s[i];
}

kernel void tt_scan_add(global uint *out, global const uint *sums)
{
  out[get_global_id(0)] += sums[get_group_id(0)];
}
