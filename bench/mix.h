/* The children that put the team beside OpenMP in one process
 * (child-interop.c, child-conditions.c): the chunk of work both runtimes
 * run, the OpenMP region, and the same work as an OpenCL kernel on the
 * teams device (BENCH_WITH_CL).  A header of static functions: each child
 * is one program, compiled by gcc -fopenmp or clang -fopenmp=libomp. */
#ifndef TEAMS_BENCH_MIX_H
#define TEAMS_BENCH_MIX_H

#include "bench.h"

#include <omp.h>
#include <stdlib.h>

#include "teams/team.h"

#ifdef BENCH_WITH_CL
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#endif

#ifndef BENCH_OMP_SYSTEM
#error "build with -DBENCH_OMP_SYSTEM=libgomp or libomp"
#endif

/* Units of bench_row_body per chunk: about 2 us (docs/measurements.md). */
#define MIX_CHUNK_UNITS 2000

static volatile double mix_sink[BENCH_MAX_P * 8];
/* The work of a chunk, in units; 0 is an empty chunk.  Set before
 * mix_cl_open. */
static uint32_t mix_units = MIX_CHUNK_UNITS;

static void mix_work(size_t c) {
  if (mix_units)
    mix_sink[(c % BENCH_MAX_P) * 8] += bench_row_body(mix_units, (double)c);
}

static void mix_team_chunk(void *ctx, size_t c) {
  (void)ctx;
  mix_work(c);
}

/* A team region: p chunks on p participants. */
static void mix_team_region(size_t p) {
  tt_foreach_chunk(mix_team_chunk, NULL, p, p);
}

/* The same loop written with OpenMP. */
static void mix_omp_region(size_t p) {
  const long n = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < n; c++)
    mix_work((size_t)c);
}

#ifdef BENCH_WITH_CL
/* mix_work() per work-group. */
static const char *mix_cl_source =
    "__kernel void work(__global double *sink, uint units) {\n"
    "  size_t c = get_group_id(0);\n"
    "  double acc = (double)c;\n"
    "  for (uint k = 0; k < units; k++)\n"
    "    acc = acc * 0.999999 + 1e-7;\n"
    "  sink[c * 8] += acc;\n"
    "}\n";
static struct {
  cl_command_queue q;
  cl_kernel k;
  cl_mem sink;
} mix_cl;

/* The teams device of the build tree's private prefix, ready to run p
 * work-groups of mix_units; NULL or a message. */
static const char *mix_cl_open(size_t p) {
  setenv("OCL_ICD_VENDORS", TT_POCL_VENDORS, 1);
  setenv("POCL_DEVICES", "teams", 1);
  setenv("POCL_CACHE_DIR", TT_BENCH_CACHE, 0);
  cl_platform_id pl;
  cl_device_id dev;
  cl_int err;
  if (clGetPlatformIDs(1, &pl, NULL) != CL_SUCCESS ||
      clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
    return "no teams device";
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    return "clCreateContext failed";
  mix_cl.q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  cl_program prog =
      clCreateProgramWithSource(ctx, 1, &mix_cl_source, NULL, &err);
  if (err != CL_SUCCESS ||
      clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
    return "clBuildProgram failed";
  mix_cl.k = clCreateKernel(prog, "work", &err);
  mix_cl.sink = clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                               p * 8 * sizeof(double), NULL, &err);
  if (err != CL_SUCCESS)
    return "clCreateBuffer failed";
  double zero[BENCH_MAX_P * 8] = {0};
  clEnqueueWriteBuffer(mix_cl.q, mix_cl.sink, CL_TRUE, 0,
                       p * 8 * sizeof(double), zero, 0, NULL, NULL);
  cl_uint u = mix_units;
  clSetKernelArg(mix_cl.k, 0, sizeof mix_cl.sink, &mix_cl.sink);
  clSetKernelArg(mix_cl.k, 1, sizeof u, &u);
  return NULL;
}

/* The kernel over p work-groups of one work-item: enqueue + clFinish. */
static void mix_cl_region(size_t p) {
  size_t global = p, local = 1;
  clEnqueueNDRangeKernel(mix_cl.q, mix_cl.k, 1, NULL, &global, &local, 0, NULL,
                         NULL);
  clFinish(mix_cl.q);
}
#endif

#endif
