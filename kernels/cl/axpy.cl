/* axpy: y = a * x + y over a 1D NDRange, one item per element (the OpenCL C
 * twin of kernels/c/axpy.c; compared with tt_ref_axpy at 0 ULP, so no
 * contraction into a fused multiply-add). */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

kernel void tt_axpy(double a, global const double *x, global double *y)
{
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}

/* The empty kernel of the launch-overhead benchmarks. */
kernel void tt_empty(void) {}
