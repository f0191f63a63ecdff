/* teams-bench-cl's CLBlast children (cl-blas.c): real library routines
 * through libclblast's C API, on the device of the child's environment.
 * Built only when CMake found CLBlast (bench/cl.cmake: TT_BENCH_CLBLAST). */
#ifndef TEAMS_BENCH_CL_BLAS_H
#define TEAMS_BENCH_CL_BLAS_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

/* What a child hands the routines: its device, context and in-order queue,
 * --quick, where a sample goes, and how to wait until the device has no
 * work-group function being built in the background (teams-bench-cl.c's
 * settle). */
typedef struct tt_blas_child {
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  int quick;
  void (*sample)(const char *metric, const char *unit, double value);
  void (*settle)(void);
} tt_blas_child;

/* cl-blas: sgemv, sgemm, saxpy and sdot at several sizes, a sample per
 * call (the call + clFinish, ms), each result checked against a host
 * reference after the timed calls.  A wrong result ends the process with
 * status 1 and a message naming the routine and the element. */
void tt_blas_routines(const tt_blas_child *c);

/* cl-blas-run: the sequence a CLBlast correctness test of ssymm runs (both
 * layouts, sides and triangles, sizes 7, 64, 65, with and without offsets
 * and leading-dimension padding, two alpha/beta pairs: 288 calls), each
 * result read back and checked against a host reference; exits 1 on a
 * wrong one.  The parent times the whole process. */
void tt_blas_symm_sequence(const tt_blas_child *c);

#endif
