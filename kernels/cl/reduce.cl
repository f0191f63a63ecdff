/* Work-group reduction (kernels/c/reduce.c): each group sums its items as a
 * tree in local memory, one barrier per level, with exactly the reference's
 * tree: P the power of two >= the group size S, for t = P/2 .. 1:
 * s[i] += s[i + t] for i < t and i + t < S.  out[g] = the group's sum. */
#pragma OPENCL FP_CONTRACT OFF

kernel void tt_reduce(global const float *in, global float *out,
                      local float *s)
{
  size_t i = get_local_id(0), size = get_local_size(0);
  size_t top = 1;
  while (top < size)
    top *= 2;
  s[i] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t t = top / 2; t > 0; t /= 2)
    {
      if (i < t && i + t < size)
        s[i] += s[i + t];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  if (i == 0)
    out[get_group_id(0)] = s[0];
}
