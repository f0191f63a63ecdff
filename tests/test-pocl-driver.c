/* The teams PoCL driver as a device: registration (POCL_DEVICES unset or
 * naming teams, twice), POCL_TEAMS0_PARAMETERS, the ABI self-check's
 * refusal, honest device values, and mixed use of one team by C-launcher
 * loops and OpenCL kernels in one process.
 *
 * Each test sets the environment before PoCL initialises: Criterion runs
 * every test in a fresh process.  On the pthread run (tests/CMakeLists.txt)
 * the teams-only tests skip. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clu.h"
#include "teams-driver.h"
#include "teams/team.h"

#define DRIVER_TEST(name) Test(pocl_driver, name, .timeout = 300)

static const char *src_inc =
    "kernel void inc(global uint *v) { v[get_global_id(0)] += 1; }\n";

static int on_teams_run(void) {
  const char *v = getenv("OCL_ICD_VENDORS");
  return v != NULL && strstr(v, "/pocl/etc/OpenCL/vendors") != NULL;
}

static void run_inc(clu_env *e, cl_command_queue q, size_t n, size_t *local,
                    int times) {
  cl_program p = clu_build_src(e, src_inc);
  cl_kernel k = clu_kernel(p, "inc");
  cl_mem b = clu_buffer(e, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(q, b, &z, sizeof z, 0, n * sizeof z, 0, NULL,
                                NULL));
  CLU_ARG(k, 0, b);
  for (int t = 0; t < times; t++)
    CLU_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, local, 0, NULL, NULL));
  cl_uint *v = malloc(n * sizeof *v);
  CLU_CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof *v, v, 0, NULL,
                                NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(v[i], (cl_uint)times, "v[%zu] = %u", i, v[i]);
  free(v);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

/* With POCL_DEVICES unset the private prefix offers exactly one device,
 * teams (basic probes none, and ours sits in pthread's slot). */
DRIVER_TEST(unset_pocl_devices_gives_teams) {
  if (!on_teams_run())
    cr_skip_test("registration is checked on the teams run");
  unsetenv("POCL_DEVICES");
  cl_platform_id pl;
  CLU_CHECK(clGetPlatformIDs(1, &pl, NULL));
  cl_uint n = 0;
  CLU_CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 0, NULL, &n));
  cr_assert_eq(n, 1);
  clu_env e;
  clu_open(&e, 0);
  cr_assert(e.is_teams && strncmp(e.name, "teams-", 6) == 0, "device %s",
            e.name);
  size_t l = 16;
  run_inc(&e, e.q, 4096, &l, 3);
  clu_close(&e);
}

/* POCL_DEVICES="teams teams": two devices; a command on the second waits
 * for one on the first, which is gated by a user event. */
DRIVER_TEST(two_teams_devices_cross_dependency) {
  if (!on_teams_run())
    cr_skip_test("registration is checked on the teams run");
  setenv("POCL_DEVICES", "teams teams", 1);
  cl_platform_id pl;
  CLU_CHECK(clGetPlatformIDs(1, &pl, NULL));
  cl_device_id dev[2];
  cl_uint n = 0;
  CLU_CHECK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 2, dev, &n));
  cr_assert_eq(n, 2);
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 2, dev, NULL, NULL, &err);
  CLU_CHECK(err);
  cl_command_queue q0 = clCreateCommandQueueWithProperties(ctx, dev[0], NULL,
                                                           &err);
  CLU_CHECK(err);
  cl_command_queue q1 = clCreateCommandQueueWithProperties(ctx, dev[1], NULL,
                                                           &err);
  CLU_CHECK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &src_inc, NULL, &err);
  CLU_CHECK(err);
  CLU_CHECK(clBuildProgram(p, 2, dev, "", NULL, NULL));
  cl_kernel k0 = clu_kernel(p, "inc"), k1 = clu_kernel(p, "inc");
  const size_t len = 1024;
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, len * 4, NULL, &err);
  CLU_CHECK(err);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(q0, b, &z, 4, 0, len * 4, 0, NULL, NULL));
  CLU_CHECK(clFinish(q0));
  CLU_ARG(k0, 0, b);
  CLU_ARG(k1, 0, b);
  cl_event u = clCreateUserEvent(ctx, &err);
  CLU_CHECK(err);
  cl_event e0, e1;
  CLU_CHECK(clEnqueueNDRangeKernel(q0, k0, 1, NULL, &len, NULL, 1, &u, &e0));
  CLU_CHECK(clEnqueueNDRangeKernel(q1, k1, 1, NULL, &len, NULL, 1, &e0, &e1));
  CLU_CHECK(clFlush(q0));
  CLU_CHECK(clFlush(q1));
  CLU_CHECK(clSetUserEventStatus(u, CL_COMPLETE));
  CLU_CHECK(clWaitForEvents(1, &e1));
  cl_uint v[1024];
  CLU_CHECK(clEnqueueReadBuffer(q1, b, CL_TRUE, 0, sizeof v, v, 0, NULL, NULL));
  for (size_t i = 0; i < len; i++)
    cr_assert_eq(v[i], 2, "v[%zu] = %u", i, v[i]);
  clReleaseEvent(e0);
  clReleaseEvent(e1);
  clReleaseEvent(u);
  clReleaseMemObject(b);
  clReleaseKernel(k0);
  clReleaseKernel(k1);
  clReleaseProgram(p);
  clReleaseCommandQueue(q0);
  clReleaseCommandQueue(q1);
  clReleaseContext(ctx);
}

/* POCL_TEAMS0_PARAMETERS is honoured: compute units follow cu=N, and the
 * schedule and grain are in force (read back through the settings query). */
DRIVER_TEST(parameters_honoured) {
  if (!on_teams_run())
    cr_skip_test("teams parameters");
  setenv("POCL_TEAMS0_PARAMETERS", "cu=1,schedule=static,grain=3", 1);
  clu_env e;
  clu_open(&e, 0);
  cl_uint cu = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                            NULL));
  cr_assert_eq(cu, 1);
  char set[128];
  CLU_CHECK(clGetDeviceInfo(e.dev, TT_CL_DEVICE_SETTINGS, sizeof set, set,
                            NULL));
  /* placement: the default is firsttouch only where the team spans several
   * NUMA nodes. */
  cr_assert_str_eq(set, tt__team_nodes() > 1
                            ? "cu=1 submit=auto grace_us=50 schedule=static "
                              "grain=3 placement=firsttouch"
                            : "cu=1 submit=auto grace_us=50 schedule=static "
                              "grain=3 placement=host");
  size_t l = 8;
  run_inc(&e, e.q, 8 * 37, &l, 2);
  clu_close(&e);
}

/* placement=: the setting is in force, buffers hold the right values, and
 * the kernel sees the policy (get_mempolicy on a page of the buffer, through
 * a map, which on this driver is the buffer's memory) and every page present
 * after the fill (move_pages; on node 0 when the kernel reports one node). */
static void placement_case(const char *policy, int want_mode) {
  if (!on_teams_run())
    cr_skip_test("teams parameters");
  char params[64];
  snprintf(params, sizeof params, "placement=%s", policy);
  setenv("POCL_TEAMS0_PARAMETERS", params, 1);
  clu_env e;
  clu_open(&e, 0);
  char set[160], want[64];
  CLU_CHECK(clGetDeviceInfo(e.dev, TT_CL_DEVICE_SETTINGS, sizeof set, set,
                            NULL));
  snprintf(want, sizeof want, " placement=%s", policy);
  cr_assert(strstr(set, want) != NULL, "settings: %s", set);
  size_t l = 16;
  run_inc(&e, e.q, 16 * 40000, &l, 3); /* 2.5 MB, 625 pages */

  const size_t n = 300007; /* not a whole number of pages */
  cl_mem b = clu_buffer(&e, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL);
  cl_uint z = 7;
  CLU_CHECK(clEnqueueFillBuffer(e.q, b, &z, sizeof z, 0, n * sizeof z, 0,
                                NULL, NULL));
  cl_int err;
  cl_uint *v = clEnqueueMapBuffer(e.q, b, CL_TRUE, CL_MAP_READ, 0,
                                  n * sizeof z, 0, NULL, NULL, &err);
  CLU_CHECK(err);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(v[i], 7u, "v[%zu]", i);
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t b0 = ((uintptr_t)v + page - 1) & ~(page - 1);
  uintptr_t b1 = ((uintptr_t)(v + n)) & ~(page - 1);
  int mode = -1;
  unsigned long mask[16] = {0};
  if (syscall(SYS_get_mempolicy, &mode, mask, 1024, (void *)b0, 2 /* ADDR */)
      == 0)
    cr_assert_eq(mode, want_mode, "%s: policy %d on the buffer", policy, mode);
  size_t pages = (size_t)(b1 - b0) / page, nodes = 0;
  void **pp = malloc(pages * sizeof *pp);
  int *st = malloc(pages * sizeof *st);
  for (size_t k = 0; k < pages; k++)
    pp[k] = (void *)(b0 + k * page);
  if (syscall(SYS_get_mempolicy, NULL, mask, 1024, NULL, 4 /* ALLOWED */)
      == 0)
    for (size_t w = 0; w < 16; w++)
      nodes += (size_t)__builtin_popcountl(mask[w]);
  if (syscall(SYS_move_pages, 0, (unsigned long)pages, pp, NULL, st, 0) == 0)
    for (size_t k = 0; k < pages; k++) {
      cr_assert_geq(st[k], 0, "page %zu not present after the fill", k);
      if (nodes == 1)
        cr_assert_eq(st[k], 0, "one node: page %zu on node %d", k, st[k]);
    }
  free(pp);
  free(st);
  CLU_CHECK(clEnqueueUnmapMemObject(e.q, b, v, 0, NULL, NULL));
  CLU_CHECK(clFinish(e.q));
  clReleaseMemObject(b);
  clu_close(&e);
}

DRIVER_TEST(placement_firsttouch) { placement_case("firsttouch", 0); }
DRIVER_TEST(placement_interleave) { placement_case("interleave", 3); }
DRIVER_TEST(placement_host) { placement_case("host", 0); }

/* Opens the platform with stderr captured and asserts that it offers no
 * device (`why` says what was offered then); what went to stderr is left in
 * buf[cap]. */
static void expect_no_device(const char *why, char *buf, size_t cap) {
  clu_capture_begin(2);
  cl_platform_id pl;
  cl_int perr = clGetPlatformIDs(1, &pl, NULL);
  cl_device_id d;
  cl_uint n = 0;
  cl_int err = perr ? perr : clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &d, &n);
  FILE *f = clu_capture_end(2);
  CLU_CHECK(perr);
  cr_assert(err != CL_SUCCESS || n == 0, "%s", why);
  size_t got = fread(buf, 1, cap - 1, f);
  buf[got] = '\0';
  fclose(f);
}

DRIVER_TEST(bad_placement_disables_the_device) {
  if (!on_teams_run())
    cr_skip_test("teams parameters");
  setenv("POCL_TEAMS0_PARAMETERS", "placement=near", 1);
  char buf[4096];
  expect_no_device("a device despite placement=near", buf, sizeof buf);
  cr_assert(strstr(buf, "placement=near: want firsttouch, interleave or host")
                != NULL,
            "stderr: %s", buf);
}

DRIVER_TEST(bad_parameters_disable_the_device) {
  if (!on_teams_run())
    cr_skip_test("teams parameters");
  setenv("POCL_TEAMS0_PARAMETERS", "cu=0", 1);
  char buf[4096];
  expect_no_device("a device despite cu=0", buf, sizeof buf);
  cr_assert(strstr(buf, "POCL_TEAMS0_PARAMETERS") != NULL &&
                strstr(buf, "cu=0") != NULL,
            "stderr: %s", buf);
}

/* A bad POCL_TEAMS0_PARAMETERS disables the teams device alone: the
 * process's other devices (PoCL's basic here) are offered and run kernels.
 * From PoCL 5.0 a device whose init fails fails the platform's init, so the
 * driver disables its device and reports success (driver.c, teams_init). */
DRIVER_TEST(bad_parameters_leave_other_devices) {
  if (!on_teams_run())
    cr_skip_test("teams parameters");
  setenv("POCL_DEVICES", "teams basic", 1);
  setenv("POCL_TEAMS0_PARAMETERS", "cu=0", 1);
  clu_capture_begin(2);
  clu_env e;
  clu_open(&e, 0);
  FILE *f = clu_capture_end(2);
  char buf[4096];
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  buf[got] = '\0';
  fclose(f);
  cr_assert(strstr(buf, "POCL_TEAMS0_PARAMETERS") != NULL &&
                strstr(buf, "cu=0") != NULL,
            "stderr: %s", buf);
  cr_assert(!e.is_teams, "the teams device offered despite cu=0");
  cl_uint n = 0;
  CLU_CHECK(clGetDeviceIDs(e.platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n));
  cr_assert_eq(n, 1, "%u devices: want basic alone", n);
  cl_program p = clu_build_src(
      &e, "kernel void three(global int *v) { v[get_global_id(0)] = 3; }");
  cl_kernel k = clu_kernel(p, "three");
  int out[64] = {0};
  cl_mem b = clu_buffer(&e, CL_MEM_READ_WRITE, sizeof out, NULL);
  CLU_ARG(k, 0, b);
  size_t g = 64;
  CLU_CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
  CLU_CHECK(
      clEnqueueReadBuffer(e.q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  for (int i = 0; i < 64; i++)
    cr_assert_eq(out[i], 3, "out[%d] = %d on the other device", i, out[i]);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clu_close(&e);
}

/* A layout mismatch (simulated: the check expects a value libpocl never
 * writes) leaves no usable device and says what to rebuild. */
DRIVER_TEST(abi_mismatch_refused) {
  if (!on_teams_run())
    cr_skip_test("the ABI check is the teams driver's");
  setenv("TEAMS_POCL_ABI_SELFTEST", "1", 1);
  char buf[4096];
  expect_no_device("device offered despite mismatch", buf, sizeof buf);
  cr_assert(strstr(buf, "ABI self-check failed") != NULL, "stderr: %s", buf);
  cr_assert(strstr(buf, "max_work_item_dimensions") != NULL, "stderr: %s",
            buf);
  cr_assert(strstr(buf, "rebuild the teams driver") != NULL, "stderr: %s",
            buf);
}

/* Compute units are the team's participants (here 3, from the team's own
 * environment); a group may use all of CL_DEVICE_LOCAL_MEM_SIZE, and a
 * group of CL_DEVICE_MAX_WORK_GROUP_SIZE items runs. */
DRIVER_TEST(honest_device_values) {
  if (!on_teams_run())
    cr_skip_test("teams device values");
  setenv("TEAMS_NUM_THREADS", "3", 1);
  clu_env e;
  clu_open(&e, 0);
  cl_uint cu = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                            NULL));
  cr_assert_eq(cu, tt_team_size());
  cr_assert_eq(cu, 3);
  cl_ulong lmem = 0;
  size_t maxwg = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem,
                            &lmem, NULL));
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                            sizeof maxwg, &maxwg, NULL));
  cr_assert_geq(lmem, 32 * 1024);
  cr_assert_geq(maxwg, 256);

  /* Each group fills all of the local memory with its id and checks it
   * back: groups on different participants must not share it. */
  const char *src =
      "kernel void fill(local uint *m, ulong words, global uint *bad) {\n"
      "  uint g = get_group_id(0);\n"
      "  for (ulong i = get_local_id(0); i < words; i += get_local_size(0))\n"
      "    m[i] = g * 7919u + (uint)i;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  for (ulong i = get_local_id(0); i < words; i += get_local_size(0))\n"
      "    if (m[i] != g * 7919u + (uint)i) atomic_inc(bad);\n"
      "}\n";
  cl_program p = clu_build_src(&e, src);
  cl_kernel k = clu_kernel(p, "fill");
  cl_ulong words = lmem / 4;
  cl_mem bad = clu_buffer(&e, CL_MEM_READ_WRITE, 4, NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(e.q, bad, &z, 4, 0, 4, 0, NULL, NULL));
  clu_arg(k, 0, (size_t)lmem, NULL);
  CLU_ARG(k, 1, words);
  CLU_ARG(k, 2, bad);
  size_t l = 64, g = 64 * 12;
  CLU_CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  cl_uint nbad = 1;
  CLU_CHECK(clEnqueueReadBuffer(e.q, bad, CL_TRUE, 0, 4, &nbad, 0, NULL, NULL));
  cr_assert_eq(nbad, 0, "%u words of local memory were overwritten", nbad);
  clReleaseMemObject(bad);
  clReleaseKernel(k);
  clReleaseProgram(p);

  run_inc(&e, e.q, maxwg * 4, &maxwg, 1);
  clu_close(&e);
}

/* ---- one team for C loops and OpenCL kernels --------------------------------- */

struct loop_ctx {
  _Atomic unsigned long sum;
  unsigned long *hits;
};

static void loop_chunk(void *ctx, size_t c) {
  struct loop_ctx *l = ctx;
  unsigned long s = 0;
  for (unsigned i = 0; i < 20000; i++) {
    s += i ^ c;
    __asm__ volatile("" : "+r"(s)); /* the work the compiler keeps */
  }
  l->hits[c]++;
  atomic_fetch_add(&l->sum, c);
}

static void *c_loops(void *arg) {
  int *ok = arg;
  enum { M = 64 };
  unsigned long hits[M];
  *ok = 1;
  for (int r = 0; r < 100; r++) {
    memset(hits, 0, sizeof hits);
    struct loop_ctx l = {0, hits};
    if (tt_foreach_chunk(loop_chunk, &l, M, tt_team_size()) != 0)
      *ok = 0;
    for (int c = 0; c < M; c++)
      if (hits[c] != 1)
        *ok = 0;
    if (atomic_load(&l.sum) != (unsigned long)M * (M - 1) / 2)
      *ok = 0;
  }
  return NULL;
}

/* A C-launcher loop on one thread and OpenCL kernels on another, at the
 * same time, on the one team: both complete, both right (the busy rule
 * runs whichever finds the team held serially on its caller). */
DRIVER_TEST(c_loop_and_kernel_at_once) {
  clu_env e;
  clu_open(&e, 0);
  cl_program p = clu_build_src(&e, src_inc);
  cl_kernel k = clu_kernel(p, "inc");
  const size_t n = 1 << 16;
  size_t l = 64;
  cl_mem b = clu_buffer(&e, CL_MEM_READ_WRITE, n * 4, NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(e.q, b, &z, 4, 0, n * 4, 0, NULL, NULL));
  CLU_ARG(k, 0, b);
  CLU_CHECK(clFinish(e.q));
  int ok = 0;
  pthread_t t;
  pthread_create(&t, NULL, c_loops, &ok);
  for (int r = 0; r < 200; r++) {
    CLU_CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &n, &l, 0, NULL, NULL));
    if (r % 10 == 0)
      CLU_CHECK(clFinish(e.q));
  }
  CLU_CHECK(clFinish(e.q));
  pthread_join(t, NULL);
  cr_assert(ok, "the C loops went wrong beside the kernels");
  cl_uint *v = malloc(n * 4);
  CLU_CHECK(clEnqueueReadBuffer(e.q, b, CL_TRUE, 0, n * 4, v, 0, NULL, NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(v[i], 200, "v[%zu] = %u", i, v[i]);
  free(v);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clu_close(&e);
}

struct nested {
  clu_env *e;
  cl_kernel k;
  cl_mem b;
  _Atomic int errors;
};

static void enqueue_in_chunk(void *ctx, size_t c) {
  struct nested *s = ctx;
  size_t n = 256, l = 16;
  cl_command_queue q = clCreateCommandQueueWithProperties(s->e->ctx, s->e->dev,
                                                          NULL, NULL);
  if (q == NULL ||
      clEnqueueNDRangeKernel(q, s->k, 1, NULL, &n, &l, 0, NULL, NULL) ||
      clFinish(q))
    atomic_fetch_add(&s->errors, 1);
  if (q)
    clReleaseCommandQueue(q);
}

/* OpenCL from inside a chunk of a C loop: the command's region nests in a
 * chunk, so it runs serially on that participant; nothing deadlocks. */
DRIVER_TEST(kernel_enqueued_inside_a_chunk) {
  clu_env e;
  clu_open(&e, 0);
  cl_program p = clu_build_src(&e, "kernel void inc(global uint *v) {\n"
                                   "  atomic_inc(&v[get_global_id(0)]);\n"
                                   "}\n");
  cl_kernel k = clu_kernel(p, "inc");
  cl_mem b = clu_buffer(&e, CL_MEM_READ_WRITE, 256 * 4, NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(e.q, b, &z, 4, 0, 256 * 4, 0, NULL, NULL));
  CLU_CHECK(clFinish(e.q));
  CLU_ARG(k, 0, b);
  struct nested s = {&e, k, b, 0};
  cr_assert_eq(tt_foreach_chunk(enqueue_in_chunk, &s, 6, tt_team_size()), 0);
  cr_assert_eq(atomic_load(&s.errors), 0);
  cl_uint v[256];
  CLU_CHECK(clEnqueueReadBuffer(e.q, b, CL_TRUE, 0, sizeof v, v, 0, NULL,
                                NULL));
  for (int i = 0; i < 256; i++)
    cr_assert_eq(v[i], 6, "v[%d] = %u", i, v[i]);
  clReleaseMemObject(b);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clu_close(&e);
}

/* Sub-devices: partition equally into 1-CU devices; a kernel on each runs
 * (with one participant) and gives the right result. */
DRIVER_TEST(sub_devices_equally) {
  clu_env e;
  clu_open(&e, 0);
  cl_uint cu = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                            NULL));
  if (cu < 2)
    cr_skip_test("one compute unit: nothing to partition");
  cl_uint max_sub = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
                            sizeof max_sub, &max_sub, NULL));
  /* The reference: PoCL 7.1's pthread driver as Debian builds it (with
   * OpenMP) offers no partitions.  teams always does. */
  if (max_sub == 0 && !e.is_teams)
    cr_skip_test("the reference driver offers no partitions");
  cr_assert_eq(max_sub, cu);
  cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
  cl_uint n = 0;
  CLU_CHECK(clCreateSubDevices(e.dev, props, 0, NULL, &n));
  cr_assert_eq(n, cu);
  cl_device_id *sub = calloc(n, sizeof *sub);
  CLU_CHECK(clCreateSubDevices(e.dev, props, n, sub, NULL));
  for (cl_uint i = 0; i < n; i++) {
    cl_uint scu = 0;
    CLU_CHECK(clGetDeviceInfo(sub[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof scu,
                              &scu, NULL));
    cr_assert_eq(scu, 1);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &sub[i], NULL, NULL, &err);
    CLU_CHECK(err);
    clu_env s = {e.platform, sub[i], ctx, NULL, e.is_teams, ""};
    s.q = clCreateCommandQueueWithProperties(ctx, sub[i], NULL, &err);
    CLU_CHECK(err);
    size_t l = 32;
    run_inc(&s, s.q, 32 * 50, &l, 3);
    clReleaseCommandQueue(s.q);
    clReleaseContext(ctx);
    /* The sub-device itself is not released: PoCL 3.1's pthread driver may
     * still release its last event (and through it the queue, context and
     * device) after the blocking read returned, and crashes when the
     * device is gone by then (seen here about 1 run in 5). */
  }
  free(sub);
  clu_close(&e);
}
