/* 7-point stencil over a 3D grid, x fastest (kernels/c/stencil7.c):
 * interior points c0 * in[i] + c1 * (six neighbours, summed x-, x+, y-, y+,
 * z-, z+); boundary points copy in; ids outside the grid are ignored, and an
 * offset runs a sub-box.  Same order of operations as tt_ref_stencil7. */
#pragma OPENCL FP_CONTRACT OFF

kernel void tt_stencil7(ulong nx, ulong ny, ulong nz, float c0, float c1,
                        global const float *in, global float *out)
{
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  if (x >= nx || y >= ny || z >= nz)
    return;
  size_t i = x + nx * (y + ny * z), sx = 1, sy = nx, sz = nx * ny;
  float v;
  if (x == 0 || y == 0 || z == 0 || x + 1 == nx || y + 1 == ny || z + 1 == nz)
    v = in[i];
  else
    v = c0 * in[i] + c1 * (in[i - sx] + in[i + sx] + in[i - sy] + in[i + sy]
                           + in[i - sz] + in[i + sz]);
  out[i] = v;
}
