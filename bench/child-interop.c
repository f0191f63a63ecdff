/* teams-bench-child-interop-libgomp and -libomp: the "interop" section, a
 * child of teams-bench.  One process holds an OpenMP runtime and the team,
 * as a program that mixes them does, and alternates their regions: each
 * region is p chunks of the same few microseconds of work, an OpenMP
 * `parallel for schedule(static)` or tt_foreach_chunk(f, ctx, p, p).  A round
 * measures, in batches that alternate, each runtime alone and the pair, and
 * prints per batch
 *   omp_alone, team_alone   us per region, the runtime's regions back to back
 *   pair                    us per OpenMP region + team region
 *   pair_vs_sum             pair over (omp_alone + team_alone) of the same
 *                           repetition: what the hand-over between the two
 *                           runtimes' threads costs (1.0 is free)
 * Both runtimes keep their defaults (OMP_WAIT_POLICY, GOMP_SPINCOUNT,
 * KMP_BLOCKTIME, TEAMS_SPIN_US unset) unless the system's environment sets
 * them (the -bound systems set OMP_PROC_BIND=close).  Built by gcc -fopenmp
 * and by clang -fopenmp=libomp, like child-omp.c; BENCH_OMP_SYSTEM names
 * which.
 *
 * With TEAMS_BENCH_INTEROP=cl (the +cl systems; built with BENCH_WITH_CL)
 * the team region is an OpenCL kernel on the teams device instead: p
 * work-groups of one work-item doing the same work, enqueue + clFinish.
 * team_alone is then that kernel alone in the OpenMP process. */
#include "bench.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "teams/team.h"

#ifdef BENCH_WITH_CL
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdlib.h>
#endif

#ifndef BENCH_OMP_SYSTEM
#error "build with -DBENCH_OMP_SYSTEM=libgomp or libomp"
#endif

/* Units of bench_row_body per chunk: ~2-3 us on the 2-core build machine. */
#define CHUNK_UNITS 2000

static volatile double sink[BENCH_MAX_P * 8];

static void work(size_t c) {
  sink[(c % BENCH_MAX_P) * 8] += bench_row_body(CHUNK_UNITS, (double)c);
}

static void team_chunk(void *ctx, size_t c) {
  (void)ctx;
  work(c);
}

static void omp_region(size_t p) {
  const long n = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < n; c++)
    work((size_t)c);
}

#ifdef BENCH_WITH_CL
/* The kernel of the +cl systems: work() per work-group. */
static const char *cl_source =
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
} cl;

/* The teams device of the build tree's private prefix; 0 or a message. */
static const char *cl_open(size_t p) {
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
  cl.q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &cl_source, NULL, &err);
  if (err != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
    return "clBuildProgram failed";
  cl.k = clCreateKernel(prog, "work", &err);
  cl.sink = clCreateBuffer(ctx, CL_MEM_READ_WRITE, p * 8 * sizeof(double), NULL,
                           &err);
  if (err != CL_SUCCESS)
    return "clCreateBuffer failed";
  double zero[BENCH_MAX_P * 8] = {0};
  clEnqueueWriteBuffer(cl.q, cl.sink, CL_TRUE, 0, p * 8 * sizeof(double), zero,
                       0, NULL, NULL);
  cl_uint units = CHUNK_UNITS;
  clSetKernelArg(cl.k, 0, sizeof cl.sink, &cl.sink);
  clSetKernelArg(cl.k, 1, sizeof units, &units);
  return NULL;
}

static int use_cl;

static void team_region(size_t p) {
  if (!use_cl) {
    tt_foreach_chunk(team_chunk, NULL, p, p);
    return;
  }
  size_t global = p, local = 1;
  clEnqueueNDRangeKernel(cl.q, cl.k, 1, NULL, &global, &local, 0, NULL, NULL);
  clFinish(cl.q);
}
#else
static void team_region(size_t p) { tt_foreach_chunk(team_chunk, NULL, p, p); }
#endif

static double batch_us(int which, size_t p, unsigned reps) {
  int64_t t0 = bench_now_ns();
  for (unsigned i = 0; i < reps; i++) {
    if (which != 1)
      omp_region(p);
    if (which != 0)
      team_region(p);
  }
  return (double)(bench_now_ns() - t0) / 1e3 / reps;
}

static void sample(const char *label, const char *metric, const char *unit,
                   double v) {
  printf("sample\t%s\t%s\t%s\t-\t%.6g\n", label, metric, unit, v);
}

int main(int argc, char **argv) {
  const char *label = "interop", *section = NULL;
  size_t p = 0;
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick"))
      quick = 1;
    else if (!strcmp(a, "--label") && v)
      label = argv[++i];
    else if (!strcmp(a, "--team") && v)
      p = (size_t)strtoul(argv[++i], NULL, 10);
    else if (!strcmp(a, "--section") && v)
      section = argv[++i];
    else if (!strcmp(a, "--round") && v)
      ++i;
    else {
      fprintf(stderr, "usage: %s --section interop --team T [--round R] "
                      "[--quick] [--label SYSTEM]\n", argv[0]);
      return 2;
    }
  }
  if (!section || strcmp(section, "interop") != 0 || p == 0 || p > BENCH_MAX_P) {
    fprintf(stderr, "%s: want --section interop and --team 1..%d\n", argv[0],
            BENCH_MAX_P);
    return 2;
  }
  unsigned reps = quick ? 200 : 500, samples = quick ? 5 : 11;
  const char *mode = getenv("TEAMS_BENCH_INTEROP");
  if (mode && !strcmp(mode, "cl")) {
#ifdef BENCH_WITH_CL
    const char *why = cl_open(p);
    if (why) {
      printf("note\t%s: left out: %s\n", label, why);
      return 0;
    }
    use_cl = 1;
#else
    printf("note\t%s: left out: built without OpenCL\n", label);
    return 0;
#endif
  }
  /* Warm both: threads created, pages touched, the team started. */
  batch_us(2, p, 50);
  tt_team_info info;
  if (tt_team_get_info(&info) == 0 && info.size < p)
    printf("note\t%s: the team has %zu participants, asked %zu (OpenMP "
           "binding?)\n", label, info.size, p);
  for (unsigned s = 0; s < samples; s++) {
    double omp = batch_us(0, p, reps);
    double team = batch_us(1, p, reps);
    double pair = batch_us(2, p, reps);
    sample(label, "omp_alone", "us", omp);
    sample(label, "team_alone", "us", team);
    sample(label, "pair", "us", pair);
    sample(label, "pair_vs_sum", "x", pair / (omp + team));
  }
  return 0;
}
