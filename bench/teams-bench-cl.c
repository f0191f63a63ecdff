/* teams-bench-cl: the teams PoCL driver against the PoCL's own cpu and
 * cpu-minimal drivers (3.1: pthread and basic).
 *
 * One PoCL per process (two libpocl instances abort, and the drivers live
 * in different ICD prefixes), so every device is measured by a child: this
 * program re-runs itself with --child SECTION under the device's ICD
 * environment, the child measures one round and prints raw samples
 * ("metric<TAB>unit<TAB>value" lines), and the parent pools them.  Rounds
 * alternate the devices, in an order rotated by the round number, so a
 * shared machine's drifts hit every device alike.  Reported per row
 * (section, system, metric): median and p90 of the pooled samples, and the
 * ratio against the section's baseline system: the median over rounds of the
 * paired ratio (this row's median in round r over the baseline's in round r).
 *
 * Output: a human table by default; with --tsv one row a line,
 *   section<TAB>system<TAB>metric<TAB>unit<TAB>median<TAB>p90<TAB>ratio
 * as bench/teams-bench prints its own rows (it runs this program after its
 * sections with the same flags).  --quick: fewer rounds and samples, under a
 * minute.  --section NAME: one section only.  --plot FILE: each section
 * also drawn with gnuplot into FILE-SECTION.svg (plot.c).
 *
 * Sections (lower is better everywhere):
 *   cl-launch  empty kernel enqueue+finish; 5000 enqueues + one finish;
 *              START - QUEUED of an enqueue+finish on a profiling queue
 *              (clpeak's kernel launch latency)
 *   cl-sync    the same samples against cpu-minimal/threads: PoCL's
 *              synchronous cpu-minimal driver (3.1: basic) in a process
 *              that also has idle threads (the floor for any parallel
 *              driver: in a single-threaded process glibc takes cheaper
 *              paths, which plain cpu-minimal measures), with cpu-minimal
 *              beside it
 *   cl-axpy    axpy on 1e7 doubles, local 64 and NULL local
 *   cl-tri     the triangular kernel (row i costs i + 1), local 16
 *              (these two also as teams/greedy: the driver with
 *              schedule=greedy against its default, auto)
 *   cl-first   build, first enqueue+finish at a new local size, both, with a
 *              cold and with a warm kernel cache; the launch's steady state
 *              (on teams: after its specialised function was swapped in)
 *   cl-blas    CLBlast's sgemv, sgemm, saxpy and sdot at several sizes, a
 *              routine call + clFinish each, results checked (cl-blas.c;
 *              built when CMake finds CLBlast)
 *   cl-blas-run  a whole program: the ssymm sequence of a CLBlast
 *              correctness test, process start to exit, and its calls
 *   cl-gap     the commonest host pattern: the host computes G us (a busy
 *              loop), then enqueue + clFinish of a small kernel; a sample is
 *              one launch, just before the enqueue to clFinish's return.
 *              Cells gap<G>us/<kernel>: G = 0, 20, 50, 200, 1000 x kernels
 *              2xempty, 2x0.5us, 8x1.3us, 64x5us (groups x each group's time
 *              on cpu-minimal, its trip count calibrated once per run there:
 *              `group work/...` rows); teams' default beside teams/run=team
 *              and teams/run=serial (TEAMS_RUN fixed), cpu and cpu-minimal,
 *              and cpu-minimal/threads (the same driver in a process with
 *              idle threads, as teams' process always has: see
 *              docs/benchmarks.md), ratios to cpu-minimal */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
#include <sys/single_threaded.h>
#define TT_BENCH_SINGLE_THREADED 1
#endif

#include "args.h"
#include "cl-sources.h"
#include "table.h"
#include "teams-pocl-info.h"
#ifdef TT_BENCH_CLBLAST
#include "cl-blas.h"
#define TT_NO_CLBLAST NULL
#else
#define TT_NO_CLBLAST "built without CLBlast (apt-get install libclblast-dev, " \
                      "then configure again)"
#endif

extern char **environ;

#ifndef TT_POCL_VENDORS
#error "TT_POCL_VENDORS: the private prefix's vendors directory (bench/cl.cmake)"
#endif
#ifndef TT_POCL_SYSTEM_VENDORS
#define TT_POCL_SYSTEM_VENDORS "/etc/OpenCL/vendors"
#endif
#ifndef TT_BENCH_CACHE
#define TT_BENCH_CACHE "/tmp/teams-bench-cl-cache"
#endif

/* ---- systems and sections ------------------------------------------------------ */

typedef struct device_def {
  const char *name;    /* the printed system name */
  const char *pocl;    /* POCL_DEVICES */
  const char *vendors; /* OCL_ICD_VENDORS */
  const char *params;  /* POCL_TEAMS0_PARAMETERS, or NULL */
  int idle_threads;    /* threads the child starts and leaves blocked */
  const char *way;     /* TEAMS_RUN (a fixed way), or NULL: as inherited */
} device_def;

/* cpu-minimal/threads: how many idle threads (blocked in a condition variable)
 * its child starts before it opens OpenCL. */
#define TT_BENCH_IDLE_THREADS 3

/* PoCL's own drivers by their names from PoCL 4 on, cpu and cpu-minimal
 * (3.1 calls them pthread and basic); POCL_DEVICES=pthread and basic
 * select them in every release. */
static const device_def devices[] = {
    {"teams", "teams", TT_POCL_VENDORS, NULL, 0, NULL},
    {"teams/greedy", "teams", TT_POCL_VENDORS, "schedule=greedy", 0, NULL},
    /* One compute unit (cu=1): the time on one participant, so that
     * ideal = that time / CPUs. */
    {"teams/cu=1", "teams", TT_POCL_VENDORS, "cu=1", 0, NULL},
    /* The driver's regions in one fixed way (include/teams/team.h): team,
     * every region on the team's workers, or serial, every region on the
     * caller alone.  TEAMS_RUN=openmp has no row: an OpenCL program
     * without an OpenMP runtime runs its regions on the team's workers
     * then, as run=team. */
    {"teams/run=team", "teams", TT_POCL_VENDORS, NULL, 0, "team"},
    {"teams/run=serial", "teams", TT_POCL_VENDORS, NULL, 0, "serial"},
    {"cpu", "pthread", TT_POCL_SYSTEM_VENDORS, NULL, 0, NULL},
    {"cpu-minimal", "basic", TT_POCL_VENDORS, NULL, 0, NULL},
    {"cpu-minimal/threads", "basic", TT_POCL_VENDORS, NULL, TT_BENCH_IDLE_THREADS,
     NULL},
};
#define NDEVICES (sizeof devices / sizeof devices[0])

typedef struct section_def {
  const char *name, *title, *baseline;
  const char *child;      /* the child section that measures it */
  unsigned rounds, quick_rounds;
  const char *systems[NDEVICES + 1];
  const char *metrics[3]; /* NULL: all metrics of the child section */
  const char *missing;    /* why the section was left out, or NULL */
  /* > 0: the parent also times each child process, start to exit, as the
   * metric `process_metric`, and runs that many children per system and
   * round */
  unsigned processes, quick_processes;
  const char *process_metric;
} section_def;

static const section_def sections[] = {
    {"cl-launch", "OpenCL launch overhead, empty kernel (1 item)", "cpu",
     "launch", 7, 3, {"teams", "cpu", "cpu-minimal", "cpu-minimal/threads", NULL},
     {NULL}, NULL, 0, 0, NULL},
    {"cl-sync", "empty kernel against PoCL's synchronous cpu-minimal driver in a "
     "process with idle threads (cl-launch's samples)", "cpu-minimal/threads", NULL,
     0, 0, {"teams", "cpu", "cpu-minimal", "cpu-minimal/threads", NULL},
     {"empty enqueue+finish", "5000 enqueues+finish",
      "START - QUEUED"}, NULL, 0, 0, NULL},
    {"cl-axpy", "axpy on 1e7 doubles, enqueue+finish", "cpu", "axpy", 5, 3,
     {"teams", "teams/greedy", "cpu", "cpu-minimal", NULL}, {NULL}, NULL, 0, 0, NULL},
    {"cl-tri", "triangular kernel, 4096 rows (row i costs i + 1), local 16",
     "cpu", "tri", 5, 3,
     {"teams", "teams/greedy", "teams/cu=1", "cpu", "cpu-minimal", NULL}, {NULL},
     NULL, 0, 0, NULL},
    {"cl-first", "build and first launch of axpy (2^16 items, local 64)",
     "cpu", "first", 3, 2, {"teams", "cpu", "cpu-minimal", NULL}, {NULL}, NULL, 0, 0,
     NULL},
    {"cl-blas", "CLBlast routines, row-major, a call + clFinish (results "
     "checked)", "cpu", "blas", 8, 3, {"teams", "cpu", "cpu-minimal", NULL}, {NULL},
     TT_NO_CLBLAST, 0, 0, NULL},
    {"cl-blas-run", "a whole program: the ssymm sequence of a CLBlast test "
     "(288 calls, results checked)", "cpu", "blas-run", 4, 2,
     {"teams", "cpu", NULL}, {NULL}, TT_NO_CLBLAST, 3, 2,
     "ssymm sequence, whole process"},
    {"cl-gap", "the host computes G us (a busy loop), then enqueue+finish of a "
     "small kernel: the launch's cost beyond the host's work", "cpu-minimal",
     "gap", 5, 2,
     {"teams", "teams/run=team", "teams/run=serial", "cpu", "cpu-minimal",
      "cpu-minimal/threads", NULL},
     {NULL}, NULL, 0, 0, NULL},
};
#define NSECTIONS (sizeof sections / sizeof sections[0])

static struct {
  int tsv, quick;
  const char *only;
  const char *plot; /* --plot FILE, or NULL */
  int plot_failed;
  char self[4096];
} opt;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "teams-bench-cl: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

#define CHECK(call)                                                            \
  do {                                                                         \
    cl_int e_ = (call);                                                        \
    if (e_ != CL_SUCCESS)                                                      \
      die("%s: %d", #call, e_);                                                \
  } while (0)

/* ---- the child: one round of one section on the device of the environment ------ */

static struct {
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
} cl;

static void cl_open(void) {
  cl_platform_id pl;
  CHECK(clGetPlatformIDs(1, &pl, NULL));
  CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &cl.dev, NULL));
  cl_int err;
  cl.ctx = clCreateContext(NULL, 1, &cl.dev, NULL, NULL, &err);
  CHECK(err);
  cl.q = clCreateCommandQueueWithProperties(cl.ctx, cl.dev, NULL, &err);
  CHECK(err);
}

static cl_kernel build(const char *file, const char *kernel) {
  const char *src = tt_cl_source(file);
  if (src == NULL)
    die("no kernels/cl/%s.cl", file);
  cl_int err;
  cl_program p = clCreateProgramWithSource(cl.ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &cl.dev, "-cl-std=CL3.0", NULL, NULL));
  cl_kernel k = clCreateKernel(p, kernel, &err);
  CHECK(err);
  clReleaseProgram(p);
  return k;
}

static void sample(const char *metric, const char *unit, double v) {
  printf("%s\t%s\t%.9g\n", metric, unit, v);
}

static void child_launch(void) {
  cl_kernel k = build("axpy", "tt_empty");
  size_t one = 1;
  int batches = opt.quick ? 10 : 20, per = 100;
  for (int i = 0; i < 200; i++) { /* warm: JIT'd function, threads awake */
    CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &one, &one, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
  }
  for (int b = 0; b < batches; b++) {
    double t0 = now_s();
    for (int i = 0; i < per; i++) {
      clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &one, &one, 0, NULL, NULL);
      clFinish(cl.q);
    }
    sample("empty enqueue+finish", "us", (now_s() - t0) / per * 1e6);
  }
  /* Two work-groups of one item: a launch the team can spread. */
  size_t two = 2;
  for (int i = 0; i < 50; i++) {
    CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &two, &one, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
  }
  for (int b = 0; b < batches; b++) {
    double t0 = now_s();
    for (int i = 0; i < per; i++) {
      clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &two, &one, 0, NULL, NULL);
      clFinish(cl.q);
    }
    sample("empty 2-item enqueue+finish", "us", (now_s() - t0) / per * 1e6);
  }
  int reps = opt.quick ? 3 : 5;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (int i = 0; i < 5000; i++)
      clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &one, &one, 0, NULL, NULL);
    CHECK(clFinish(cl.q));
    sample("5000 enqueues+finish", "us/kernel", (now_s() - t0) / 5000 * 1e6);
  }
  /* What clpeak reports as kernel launch latency: START - QUEUED of a
   * command enqueued and then waited for (clFinish). */
  cl_int err;
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                 CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue pq =
      clCreateCommandQueueWithProperties(cl.ctx, cl.dev, props, &err);
  CHECK(err);
  for (int b = 0; b < batches; b++) {
    double sum = 0;
    for (int i = 0; i < per; i++) {
      cl_event ev;
      CHECK(clEnqueueNDRangeKernel(pq, k, 1, NULL, &one, &one, 0, NULL, &ev));
      CHECK(clFinish(pq));
      cl_ulong q, st;
      CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof q,
                                    &q, NULL));
      CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof st,
                                    &st, NULL));
      clReleaseEvent(ev);
      sum += (double)(st - q);
    }
    sample("START - QUEUED", "us", sum / per * 1e-3);
  }
  clReleaseCommandQueue(pq);
  clReleaseKernel(k);
}

/* On teams: waits until no work-group function is being built in the
 * background (the driver builds the one specialised for a launch after its
 * first launch ran on the generic one), so that what follows is measured in
 * its steady state, and the kernel cache holds what this run launched.
 * Returns at once on other devices (no such query). */
static void settle(void) {
  tt_cl_stats st;
  double deadline = now_s() + 60;
  while (clGetDeviceInfo(cl.dev, TT_CL_DEVICE_STATS, sizeof st, &st, NULL) ==
             CL_SUCCESS &&
         st.jit_pending > 0 && now_s() < deadline) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
}

static void time_launch(cl_kernel k, cl_uint dims, const size_t *g,
                        const size_t *l, const char *metric, int reps) {
  for (int i = 0; i < 2; i++) { /* JIT for this local size, pages touched */
    CHECK(clEnqueueNDRangeKernel(cl.q, k, dims, NULL, g, l, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
    settle();
  }
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    CHECK(clEnqueueNDRangeKernel(cl.q, k, dims, NULL, g, l, 0, NULL, NULL));
    CHECK(clFinish(cl.q));
    sample(metric, "ms", (now_s() - t0) * 1e3);
  }
}

static cl_mem filled(size_t bytes, double v) {
  cl_int err;
  cl_mem m = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
  CHECK(err);
  CHECK(clEnqueueFillBuffer(cl.q, m, &v, sizeof v, 0, bytes, 0, NULL, NULL));
  CHECK(clFinish(cl.q));
  return m;
}

static void child_axpy(void) {
  const size_t n = 10000000;
  cl_kernel k = build("axpy", "tt_axpy");
  cl_mem x = filled(n * sizeof(double), 1.0), y = filled(n * sizeof(double), 2.0);
  double a = 0.5;
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  CHECK(clSetKernelArg(k, 1, sizeof x, &x));
  CHECK(clSetKernelArg(k, 2, sizeof y, &y));
  int reps = opt.quick ? 5 : 10;
  size_t l = 64;
  time_launch(k, 1, &n, &l, "axpy 1e7 local 64", reps);
  time_launch(k, 1, &n, NULL, "axpy 1e7 NULL local", reps);
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseKernel(k);
}

/* 4096 rows, as teams-bench's grid section: 256 groups of 16. */
static void child_tri(void) {
  const size_t n = 4096;
  cl_kernel k = build("tri", "tt_tri");
  cl_mem x = filled(n * sizeof(cl_uint), 0.0), y = filled(n * sizeof(cl_ulong), 0.0);
  cl_uint *xv = malloc(n * sizeof *xv);
  for (size_t i = 0; i < n; i++)
    xv[i] = (cl_uint)(i * 2654435761u);
  CHECK(clEnqueueWriteBuffer(cl.q, x, CL_TRUE, 0, n * sizeof *xv, xv, 0, NULL,
                             NULL));
  free(xv);
  cl_ulong un = n;
  CHECK(clSetKernelArg(k, 0, sizeof un, &un));
  CHECK(clSetKernelArg(k, 1, sizeof x, &x));
  CHECK(clSetKernelArg(k, 2, sizeof y, &y));
  size_t l = 16;
  time_launch(k, 1, &n, &l, "triangular local 16", opt.quick ? 5 : 10);
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseKernel(k);
}

/* Build + first launch; the parent points POCL_CACHE_DIR at an empty
 * directory (cold) or at one this very measurement filled before (warm).
 * Rows: the build alone (clBuildProgram + clCreateKernel: on teams the
 * kernel's generic work-group function is made there), the first
 * enqueue+finish at a local size not launched before, and both together.
 * The warm child then also times the launch in its steady state: on teams
 * once the function specialised for the launch was swapped in (settle), on
 * the others at once. */
static void child_first(const char *cache) {
  double t0 = now_s();
  cl_kernel k = build("axpy", "tt_axpy");
  double t1 = now_s();
  const size_t n = 1 << 16;
  cl_int err;
  cl_mem x = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  CHECK(err);
  cl_mem y = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, n * 8, NULL, &err);
  CHECK(err);
  double a = 0.5;
  CHECK(clSetKernelArg(k, 0, sizeof a, &a));
  CHECK(clSetKernelArg(k, 1, sizeof x, &x));
  CHECK(clSetKernelArg(k, 2, sizeof y, &y));
  size_t l = 64;
  double t2 = now_s();
  CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &n, &l, 0, NULL, NULL));
  CHECK(clFinish(cl.q));
  double t3 = now_s();
  char m[64];
  snprintf(m, sizeof m, "build, %s cache", cache);
  sample(m, "ms", (t1 - t0) * 1e3);
  snprintf(m, sizeof m, "first enqueue+finish, %s cache", cache);
  sample(m, "ms", (t3 - t2) * 1e3);
  snprintf(m, sizeof m, "first launch, %s cache", cache);
  sample(m, "ms", (t1 - t0 + t3 - t2) * 1e3);
  if (!strcmp(cache, "warm"))
    time_launch(k, 1, &n, &l, "enqueue+finish after the swap", opt.quick ? 5 : 10);
  settle(); /* the cold child leaves the warm one a full cache */
  clReleaseMemObject(x);
  clReleaseMemObject(y);
  clReleaseKernel(k);
}

/* cl-gap: the host computes for G us (a busy loop on this thread, as a
 * program's own work between kernels; not a sleep, which would hand the CPU
 * to the driver's threads), then enqueues a small kernel and clFinish'es it.
 * A sample is one launch, from just before the enqueue to the return of
 * clFinish: what the launch costs beyond the host's work.  The kernels are
 * work-groups of one item whose work is a dependent chain of `n` steps, n a
 * by-value argument: the parent calibrates n once per run on cpu-minimal
 * (gap-cal) so that a group takes the named time there, and hands the same
 * n to every system (TEAMS_BENCH_GAP_TRIPS).  Each kernel is a function of
 * its own, as a program's different kernels are (the driver keeps what it
 * measures per work-group function). */
static const char gap_source[] =
    "kernel void gap_empty(uint n, global uint *out) {}\n"
    "#define GAP_WORK(name)                                  \\\n"
    "  kernel void name(uint n, global uint *out) {         \\\n"
    "    uint x = (uint)get_group_id(0) + 1u;                \\\n"
    "    for (uint i = 0; i < n; i++)                        \\\n"
    "      x = x * 1664525u + 1013904223u;                   \\\n"
    "    out[get_group_id(0)] = x;                           \\\n"
    "  }\n"
    "GAP_WORK(gap_2)\n"
    "GAP_WORK(gap_8)\n"
    "GAP_WORK(gap_64)\n";

/* The kernels: work-groups (of one item) and each group's work on
 * cpu-minimal; the label names the cell's metric, gap<G>us/<label>. */
static const struct {
  const char *fn, *label;
  size_t groups;
  double group_us;
} gap_kernels[] = {
    {"gap_empty", "2xempty", 2, 0},
    {"gap_2", "2x0.5us", 2, 0.5},
    {"gap_8", "8x1.3us", 8, 1.3},
    {"gap_64", "64x5us", 64, 5},
};
#define GAP_NKERNELS (sizeof gap_kernels / sizeof gap_kernels[0])
static const unsigned gap_us[] = {0, 20, 50, 200, 1000};
#define GAP_NGAPS (sizeof gap_us / sizeof gap_us[0])

typedef struct gap_program {
  cl_kernel k[GAP_NKERNELS];
  cl_mem out;
} gap_program;

static void gap_open(gap_program *g) {
  const char *src = gap_source;
  cl_int err;
  cl_program p = clCreateProgramWithSource(cl.ctx, 1, &src, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(p, 1, &cl.dev, "-cl-std=CL3.0", NULL, NULL));
  g->out = clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, 64 * sizeof(cl_uint), NULL,
                          &err);
  CHECK(err);
  for (size_t i = 0; i < GAP_NKERNELS; i++) {
    g->k[i] = clCreateKernel(p, gap_kernels[i].fn, &err);
    CHECK(err);
    cl_uint zero = 0;
    CHECK(clSetKernelArg(g->k[i], 0, sizeof zero, &zero));
    CHECK(clSetKernelArg(g->k[i], 1, sizeof g->out, &g->out));
  }
  clReleaseProgram(p);
}

static void gap_close(gap_program *g) {
  for (size_t i = 0; i < GAP_NKERNELS; i++)
    clReleaseKernel(g->k[i]);
  clReleaseMemObject(g->out);
}

/* One enqueue+finish of k over `groups` groups of one item, in seconds. */
static double gap_launch(cl_kernel k, size_t groups) {
  size_t one = 1;
  double t0 = now_s();
  CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &groups, &one, 0, NULL, NULL));
  CHECK(clFinish(cl.q));
  return now_s() - t0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of `reps` launches of k with trip count n. */
static double gap_median(cl_kernel k, size_t groups, cl_uint n, int reps) {
  double v[64];
  if (reps > 64)
    reps = 64;
  CHECK(clSetKernelArg(k, 0, sizeof n, &n));
  for (int i = 0; i < reps; i++)
    v[i] = gap_launch(k, groups);
  qsort(v, (size_t)reps, sizeof *v, cmp_double);
  return v[reps / 2];
}

static void *idle_main(void *arg);

/* ns per lock + unlock of an uncontended mutex on this thread, the median
 * of 7 batches.  glibc takes no atomic operation for it while the process
 * is single-threaded, and does from its second thread on (for good): what
 * separates cpu-minimal from cpu-minimal/threads in cl-gap. */
static double mutex_pair_ns(void) {
  static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  enum { BATCH = 200000, BATCHES = 7 };
  double v[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = now_s();
    for (int i = 0; i < BATCH; i++) {
      pthread_mutex_lock(&mu);
      pthread_mutex_unlock(&mu);
    }
    v[b] = (now_s() - t0) / BATCH * 1e9;
  }
  qsort(v, BATCHES, sizeof *v, cmp_double);
  return v[BATCHES / 2];
}

/* gap-cal, on cpu-minimal: the time of one step of a group's chain (a
 * group with many steps less a group with none, medians), printed as
 * "ns per step"; then, with the trip counts that follow from it, each work
 * kernel's time per group over the empty kernel's at the same group count
 * ("group work/LABEL", us), so that the report shows the sizes the cells
 * really had. */
static void child_gap_cal(void) {
  gap_program g;
  gap_open(&g);
  cl_kernel k = g.k[1];
  const cl_uint big = 200000;
  (void)gap_median(k, 1, big, 3); /* built, pages touched */
  double ns = 0;
  for (int i = 0; i < 3; i++) { /* the fastest of three medians */
    double t = (gap_median(k, 1, big, 9) - gap_median(k, 1, 0, 9)) / big * 1e9;
    if (i == 0 || t < ns)
      ns = t;
  }
  if (!(ns > 0))
    die("gap-cal: no time per step (%g ns)", ns);
  sample("ns per step", "ns", ns);
  int batches = opt.quick ? 5 : 15;
  for (size_t i = 1; i < GAP_NKERNELS; i++) {
    cl_uint n = (cl_uint)(gap_kernels[i].group_us * 1e3 / ns + 0.5);
    char m[64];
    snprintf(m, sizeof m, "group work/%s", gap_kernels[i].label);
    for (int b = 0; b < batches; b++) {
      size_t groups = gap_kernels[i].groups;
      double w = gap_median(g.k[i], groups, n, 15),
             e = gap_median(g.k[0], groups, 0, 15);
      sample(m, "us", (w - e) / (double)groups * 1e6);
    }
  }
  gap_close(&g);
  /* The mutexes as cpu-minimal's process has them (PoCL's own threads, if
   * it started any), then with one thread more, as every teams process. */
#ifdef TT_BENCH_SINGLE_THREADED
  sample("single-threaded", "-", __libc_single_threaded ? 1 : 0);
#endif
  sample("mutex pair", "ns", mutex_pair_ns());
  pthread_t extra;
  if (pthread_create(&extra, NULL, idle_main, NULL) != 0)
    die("gap-cal: no thread");
  sample("mutex pair, one thread more", "ns", mutex_pair_ns());
}

/* Launches per cell: about `budget` seconds of the cell's pattern (its gap
 * and the kernel's time on cpu-minimal), within [lo, hi]. */
static size_t gap_launches(double gap_s, double kernel_s) {
  double budget = opt.quick ? 0.04 : 0.3;
  size_t lo = opt.quick ? 100 : 500, hi = opt.quick ? 300 : 2000;
  double n = budget / (gap_s + kernel_s);
  return n < (double)lo ? lo : n > (double)hi ? hi : (size_t)n;
}

static void child_gap(void) {
  cl_uint trips[GAP_NKERNELS] = {0};
  const char *e = getenv("TEAMS_BENCH_GAP_TRIPS");
  if (e == NULL ||
      sscanf(e, "%u,%u,%u", &trips[1], &trips[2], &trips[3]) != 3)
    die("gap: TEAMS_BENCH_GAP_TRIPS is not three trip counts (the parent "
        "sets it after gap-cal)");
  gap_program g;
  gap_open(&g);
  double *v = malloc(2000 * sizeof *v);
  if (v == NULL)
    die("out of memory");
  for (size_t i = 0; i < GAP_NKERNELS; i++) {
    cl_kernel k = g.k[i];
    size_t groups = gap_kernels[i].groups;
    CHECK(clSetKernelArg(k, 0, sizeof trips[i], &trips[i]));
    for (int w = 0; w < 2; w++) { /* built for this size, then settled */
      gap_launch(k, groups);
      settle();
    }
    /* the kernel's time on cpu-minimal, and an empty launch's */
    double kernel_s = (double)groups * gap_kernels[i].group_us * 1e-6 + 2e-6;
    for (size_t j = 0; j < GAP_NGAPS; j++) {
      double gap = gap_us[j] * 1e-6;
      size_t n = gap_launches(gap, kernel_s);
      /* untimed first: whatever the driver learns from the pattern */
      size_t warm = n / 5 < 20 ? 20 : n / 5;
      double end = now_s();
      for (size_t r = 0; r < warm + n; r++) {
        while (now_s() - end < gap) /* the host's own work */
          ;
        double t0 = now_s();
        CHECK(clEnqueueNDRangeKernel(cl.q, k, 1, NULL, &groups, &(size_t){1},
                                     0, NULL, NULL));
        CHECK(clFinish(cl.q));
        end = now_s();
        if (r >= warm)
          v[r - warm] = end - t0;
      }
      char m[64];
      snprintf(m, sizeof m, "gap%uus/%s", gap_us[j], gap_kernels[i].label);
      for (size_t r = 0; r < n; r++)
        sample(m, "us", v[r] * 1e6);
    }
  }
  free(v);
  gap_close(&g);
}

/* The child's idle threads (cpu-minimal/threads): each blocks for good on a
 * condition variable nobody signals; the process's exit ends them. */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;

static void *idle_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&idle_lock);
  for (;;)
    pthread_cond_wait(&idle_cond, &idle_lock);
  return NULL;
}

static void start_idle_threads(void) {
  const char *e = getenv("TEAMS_BENCH_IDLE_THREADS");
  int n = e ? atoi(e) : 0;
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, idle_main, NULL) != 0)
      die("cannot start idle thread %d", i);
    pthread_detach(t);
  }
}

#ifdef TT_BENCH_CLBLAST
/* t0: when the child's main began (before OpenCL was opened). */
static void child_blas(const char *what, double t0) {
  tt_blas_child c = {cl.dev, cl.ctx, cl.q, opt.quick, sample, settle};
  if (!strcmp(what, "blas")) {
    tt_blas_routines(&c);
    return;
  }
  tt_blas_symm_sequence(&c);
  if (!strcmp(what, "blas-run-warm")) {
    /* untimed: leaves the cache every specialisation the sequence runs
     * (an exit drops the background builds still queued) */
    settle();
    return;
  }
  sample("ssymm sequence, in the process", "s", now_s() - t0);
}
#endif

static int child_main(const char *what) {
  double t0 = now_s(); /* cl-blas-run counts from here */
  (void)t0;
  start_idle_threads();
  cl_open();
  if (!strcmp(what, "launch"))
    child_launch();
  else if (!strcmp(what, "axpy"))
    child_axpy();
  else if (!strcmp(what, "tri"))
    child_tri();
  else if (!strcmp(what, "first-cold"))
    child_first("cold");
  else if (!strcmp(what, "first-warm"))
    child_first("warm");
  else if (!strcmp(what, "gap"))
    child_gap();
  else if (!strcmp(what, "gap-cal"))
    child_gap_cal();
#ifdef TT_BENCH_CLBLAST
  else if (!strcmp(what, "blas") || !strcmp(what, "blas-run") ||
           !strcmp(what, "blas-run-warm"))
    child_blas(what, t0);
#endif
  else if (!strcmp(what, "warm")) {
    /* Fill the device's kernel cache for the measured sections. */
    opt.quick = 1;
    child_launch();
    child_axpy();
    child_tri();
    settle();
  } else
    die("unknown child section %s", what);
  clReleaseCommandQueue(cl.q);
  clReleaseContext(cl.ctx);
  fflush(stdout);
  return 0;
}

/* ---- the parent -------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* Runs `self --child WHAT` on device d with POCL_CACHE_DIR=cache; adds its
 * samples to the rows of `child` for `round`.  Returns 0 or -1. */
static int spawn_child(const device_def *d, const char *what, const char *child,
                       const char *cache, unsigned round) {
  int fds[2];
  if (pipe(fds) != 0)
    die("pipe: %s", strerror(errno));
  char e_vendors[4200], e_devices[128], e_cache[4200], e_params[256],
      e_idle[64], e_way[64];
  snprintf(e_vendors, sizeof e_vendors, "OCL_ICD_VENDORS=%s", d->vendors);
  snprintf(e_devices, sizeof e_devices, "POCL_DEVICES=%s", d->pocl);
  snprintf(e_cache, sizeof e_cache, "POCL_CACHE_DIR=%s", cache);
  snprintf(e_params, sizeof e_params, "POCL_TEAMS0_PARAMETERS=%s",
           d->params ? d->params : "");
  snprintf(e_idle, sizeof e_idle, "TEAMS_BENCH_IDLE_THREADS=%d",
           d->idle_threads);
  snprintf(e_way, sizeof e_way, "TEAMS_RUN=%s", d->way ? d->way : "");
  /* The environment minus what we set. */
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = malloc((n + 7) * sizeof *env);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "OCL_ICD_VENDORS=", 16) &&
        strncmp(environ[i], "POCL_DEVICES=", 13) &&
        strncmp(environ[i], "POCL_CACHE_DIR=", 15) &&
        strncmp(environ[i], "TEAMS_BENCH_IDLE_THREADS=", 25) &&
        (d->params == NULL ||
         strncmp(environ[i], "POCL_TEAMS0_PARAMETERS=", 23)) &&
        (d->way == NULL || strncmp(environ[i], "TEAMS_RUN=", 10)))
      env[k++] = environ[i];
  env[k++] = e_vendors;
  env[k++] = e_devices;
  env[k++] = e_cache;
  if (d->params)
    env[k++] = e_params;
  if (d->idle_threads)
    env[k++] = e_idle;
  if (d->way)
    env[k++] = e_way;
  env[k] = NULL;
  char *argv[] = {opt.self, "--child", (char *)what,
                  opt.quick ? "--quick" : NULL, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, opt.self, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    fprintf(stderr, "teams-bench-cl: spawn: %s\n", strerror(rc));
    return -1;
  }
  FILE *f = fdopen(fds[0], "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    char metric[64], unit[16];
    double v;
    if (sscanf(line, "%63[^\t]\t%15[^\t]\t%lf", metric, unit, &v) == 3 &&
        child != NULL)
      bench_row_add(bench_row_get(child, d->name, metric, unit, "-"), round, v);
  }
  if (f)
    fclose(f);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "teams-bench-cl: %s on %s failed (status %d)\n", what,
            d->name, status);
    return -1;
  }
  return 0;
}

static const device_def *device_named(const char *name) {
  for (size_t i = 0; i < NDEVICES; i++)
    if (!strcmp(devices[i].name, name))
      return &devices[i];
  return NULL;
}

static void warm_cache_path(char *buf, size_t size, const device_def *d) {
  snprintf(buf, size, "%s/%s", TT_BENCH_CACHE, d->pocl);
}

static unsigned rounds_of(const section_def *s) {
  return opt.quick ? s->quick_rounds : s->rounds;
}

/* The group of gap-cal's rows (read here, never reported). */
static const char gap_cal_group[] = "gap-cal";

/* cl-gap, before its rounds: one gap-cal child on cpu-minimal; the trip
 * counts that follow from its time per step go to every gap child
 * (TEAMS_BENCH_GAP_TRIPS, through the environment spawn_child copies), and
 * its per-group work samples become cpu-minimal's `group work/...` rows of
 * the section (round 0).  Returns 0, or -1 when the calibration failed. */
static int gap_calibrate(const section_def *s) {
  const device_def *d = device_named("cpu-minimal");
  char cache[4200];
  warm_cache_path(cache, sizeof cache, d);
  unsetenv("TEAMS_BENCH_GAP_TRIPS");
  if (spawn_child(d, "gap-cal", gap_cal_group, cache, 0) != 0)
    return -1;
  double ns = bench_row_quantile(
      bench_row_get(gap_cal_group, d->name, "ns per step", "ns", "-"), 0, 0, 0.5);
  if (!(ns > 0))
    return -1;
  cl_uint trips[GAP_NKERNELS] = {0};
  for (size_t i = 1; i < GAP_NKERNELS; i++)
    trips[i] = (cl_uint)(gap_kernels[i].group_us * 1e3 / ns + 0.5);
  char v[64];
  snprintf(v, sizeof v, "%u,%u,%u", trips[1], trips[2], trips[3]);
  setenv("TEAMS_BENCH_GAP_TRIPS", v, 1);
  bench_note("%s: a group's chain of n steps, calibrated on cpu-minimal at %.3f ns "
             "a step: n = %u, %u, %u for 0.5, 1.3, 5 us per group (the same n on "
             "every system); group work/...: each group's time on cpu-minimal "
             "over an empty group's",
             s->name, ns, trips[1], trips[2], trips[3]);
  double one = bench_row_quantile(
             bench_row_get(gap_cal_group, d->name, "mutex pair", "ns", "-"), 0, 0,
             0.5),
         more = bench_row_quantile(bench_row_get(gap_cal_group, d->name,
                                                 "mutex pair, one thread more",
                                                 "ns", "-"),
                                   0, 0, 0.5);
  bench_row *st = bench_row_get(gap_cal_group, d->name, "single-threaded", "-", "-");
  const char *single = st->n == 0 ? "unknown" : st->v[0] > 0 ? "yes" : "no";
  bench_note("%s: glibc's mutex lock + unlock in cpu-minimal's process: %.1f ns "
             "(single-threaded: %s), %.1f ns once it has another thread, as "
             "every teams process has (its workers; PoCL 3.1 takes 20-25 mutexes "
             "a launch: docs/benchmarks.md); cpu-minimal/threads is "
             "cpu-minimal in a process with idle threads",
             s->name, one, single, more);
  bench_note("%s: no teams/run=openmp row: an OpenCL program without an OpenMP "
             "runtime runs TEAMS_RUN=openmp on the team's workers (run=team)",
             s->name);
  size_t nrows;
  bench_rows(&nrows);
  for (size_t i = 0; i < nrows; i++) {
    size_t now;
    bench_row r = bench_rows(&now)[i]; /* a copy: the rows move as they grow */
    if (r.group != gap_cal_group || strncmp(r.metric, "group work/", 11))
      continue;
    for (size_t j = 0; j < r.n; j++)
      bench_row_add(bench_row_get(s->child, d->name, r.metric, r.unit, "-"), 0,
                    r.v[j]);
  }
  return 0;
}

static void run_section(const section_def *s) {
  if (s->child == NULL) /* a missing section never gets here (main) */
    return;
  if (!strcmp(s->child, "gap") && gap_calibrate(s) != 0) {
    fprintf(stderr, "teams-bench-cl: %s left out: its calibration on "
                    "cpu-minimal failed\n", s->name);
    return;
  }
  size_t nsys = 0;
  while (s->systems[nsys])
    nsys++;
  unsigned procs = opt.quick ? s->quick_processes : s->processes;
  if (procs > 0) /* untimed: the program's kernels in the cache */
    for (size_t j = 0; j < nsys; j++) {
      const device_def *d = device_named(s->systems[j]);
      char cache[4200], warm[64];
      warm_cache_path(cache, sizeof cache, d);
      snprintf(warm, sizeof warm, "%s-warm", s->child);
      spawn_child(d, warm, NULL, cache, 0);
    }
  for (unsigned r = 0; r < rounds_of(s); r++)
    for (size_t j = 0; j < nsys; j++) {
      const device_def *d = device_named(s->systems[(j + r) % nsys]);
      char cache[4200];
      if (!strcmp(s->child, "first")) {
        /* Cold: a fresh, empty cache.  Warm: then the same cache again. */
        char tmpl[] = "/tmp/teams-bench-cl-XXXXXX";
        if (mkdtemp(tmpl) == NULL)
          die("mkdtemp: %s", strerror(errno));
        spawn_child(d, "first-cold", s->child, tmpl, r);
        spawn_child(d, "first-warm", s->child, tmpl, r);
        nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        continue;
      }
      warm_cache_path(cache, sizeof cache, d);
      if (procs == 0) {
        spawn_child(d, s->child, s->child, cache, r);
        continue;
      }
      for (unsigned k = 0; k < procs; k++) {
        double t0 = now_s();
        if (spawn_child(d, s->child, s->child, cache, r) == 0)
          bench_row_add(bench_row_get(s->child, d->name, s->process_metric,
                                      "s", "-"),
                        r, now_s() - t0);
      }
    }
}

static int wanted_metric(const section_def *s, const char *metric) {
  if (s->metrics[0] == NULL)
    return 1;
  for (size_t i = 0; i < 3 && s->metrics[i]; i++)
    if (!strcmp(s->metrics[i], metric))
      return 1;
  return 0;
}

static const section_def *source_of(const section_def *s) {
  if (s->child)
    return s;
  return &sections[0]; /* cl-sync reuses cl-launch's samples */
}

static size_t system_order(const void *ctx, const char *system) {
  const section_def *s = ctx;
  for (size_t i = 0; s->systems[i]; i++)
    if (!strcmp(s->systems[i], system))
      return i;
  return NDEVICES;
}

static int wants_metric(const void *ctx, const char *metric) {
  return wanted_metric(ctx, metric);
}

static void report(const section_def *s) {
  const section_def *src = source_of(s);
  if (!opt.tsv) {
    printf("\n== %s: %s (%u rounds; ratio vs %s)\n", s->name, s->title,
           rounds_of(src), s->baseline);
    bench_print_header();
  }
  bench_report rep = {.section = s->name, .group = src->child,
                      .baseline = s->baseline, .system_order = system_order,
                      .wants_metric = wants_metric, .ctx = s, .tsv = opt.tsv};
  bench_print_rows(&rep);
  char title[300];
  snprintf(title, sizeof title, "%s: %s (%u rounds%s)", s->name, s->title,
           rounds_of(src), opt.quick ? ", quick" : "");
  if (opt.plot && bench_plot(&rep, title, opt.plot) != 0)
    opt.plot_failed = 1;
}

static const char *child_section; /* --child SECTION: this process is a child */

static const bench_arg args[] = {
    {"--tsv", BENCH_ARG_FLAG, &opt.tsv, NULL,
     "section, system, metric, unit, median, p90, ratio per line"},
    {"--quick", BENCH_ARG_FLAG, &opt.quick, NULL, "fewer rounds and samples (under a minute)"},
    {"--section", BENCH_ARG_TEXT, &opt.only, "NAME", "one section (below)"},
    {"--plot", BENCH_ARG_TEXT, &opt.plot, "FILE.svg",
     "also draw each section with gnuplot into FILE-SECTION.svg\n"
     "(FILE without its .svg)"},
    {"--child", BENCH_ARG_TEXT, &child_section, "SECTION",
     "(internal) measure one round of a child section here"},
};

/* What the usage text adds to the options': the sections. */
static void usage_more(FILE *f) {
  fprintf(f, "sections:");
  for (size_t i = 0; i < NSECTIONS; i++)
    fprintf(f, " %s", sections[i].name);
  fprintf(f, "\n");
}

int main(int argc, char **argv) {
  int rc = BENCH_ARGS(argc, argv, args, usage_more);
  if (rc >= 0)
    return rc;
  if (child_section)
    return child_main(child_section);
  if (opt.plot && bench_plot_check(opt.plot) != 0)
    return 1;

  ssize_t len = readlink("/proc/self/exe", opt.self, sizeof opt.self - 1);
  if (len <= 0)
    die("/proc/self/exe: %s", strerror(errno));
  opt.self[len] = 0;

  const section_def *one = NULL;
  if (opt.only) {
    for (size_t i = 0; i < NSECTIONS; i++)
      if (!strcmp(sections[i].name, opt.only))
        one = &sections[i];
    if (!one) {
      fprintf(stderr, "teams-bench-cl: no section %s\n", opt.only);
      usage_more(stderr);
      return 2;
    }
  }
  mkdir(TT_BENCH_CACHE, 0755);
  for (size_t i = 0; i < NDEVICES; i++) {
    char cache[4200];
    if (devices[i].way) /* the same kernels as its device without TEAMS_RUN */
      continue;
    warm_cache_path(cache, sizeof cache, &devices[i]);
    spawn_child(&devices[i], "warm", NULL, cache, 0);
  }
  if (!opt.tsv)
    printf("teams-bench-cl: the teams PoCL driver against PoCL's cpu and "
           "cpu-minimal drivers%s; each device in its own processes, rounds alternating; "
           "median and p90 of the samples, ratio paired per round\n",
           opt.quick ? ", quick" : "");
  for (size_t i = 0; i < NSECTIONS; i++) {
    const section_def *s = &sections[i];
    if (one && one != s && !(one->child == NULL && s == source_of(one)))
      continue;
    if (s->missing) {
      fprintf(stderr, "teams-bench-cl: %s left out: %s\n", s->name,
              s->missing);
      continue;
    }
    run_section(s);
    if (!one || one == s) /* a section without a child follows its source */
      report(s);
  }
  bench_print_notes(opt.tsv);
  return opt.plot_failed;
}
