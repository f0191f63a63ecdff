/* Sub-devices of the teams PoCL driver (backend/pocl/subdev.c): partitions
 * by affinity domain (NUMA, L3, L2, next partitionable, nested), equally and
 * by counts, and the rule that a sub-device's work-groups run only on its
 * participants, also while two sub-devices run kernels at once.
 *
 * The machine is synthetic: TEAMS_POCL_TOPOLOGY gives the driver the
 * domains of 8 participants pinned (as TEAMS_PIN=numa would) on 2 nodes x
 * 2 L3 x 2 cores with an L2 each, and TEAMS_NUM_THREADS=8 makes the team
 * that large on any machine.  Participants 0-3 are node 0 (L3s {0,1} and
 * {2,3}), 4-7 node 1.  TEAMS_POCL_RECORD_PARTICIPANTS=1 makes the driver
 * record which participants ran work-groups of each (sub-)device, read with
 * TT_CL_DEVICE_PARTICIPANTS_RAN.  The threads are not pinned (the machine
 * has other CPUs than the synthetic one), so where a sub-device's buffer is
 * placed is checked by which workers fault its pages in; on a machine with
 * several nodes, buffers_on_their_node checks the nodes themselves.
 *
 * Each test sets the environment before PoCL initialises: Criterion runs
 * every test in a fresh process.  On the pthread run (tests/CMakeLists.txt) the
 * tests skip: PoCL's pthread driver has no affinity domains. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clu.h"

#define SUBDEV_TEST(name) Test(pocl_subdev, name, .timeout = 300)

#define MACHINE "pack:2 [numa] l3:2 l2:2 core:1 pu:1"
#define TEAM 8

static const char *src_inc =
    "kernel void inc(global uint *v) { v[get_global_id(0)] += 1; }\n";

static int on_teams_run(void) {
  const char *v = getenv("OCL_ICD_VENDORS");
  return v != NULL && strstr(v, "/pocl/etc/OpenCL/vendors") != NULL;
}

static void setup(const char *machine, const char *params) {
  if (!on_teams_run())
    cr_skip_test("affinity domains are the teams driver's");
  if (machine)
    setenv("TEAMS_POCL_TOPOLOGY", machine, 1);
  else
    unsetenv("TEAMS_POCL_TOPOLOGY");
  setenv("TEAMS_NUM_THREADS", "8", 1);
  setenv("TEAMS_POCL_RECORD_PARTICIPANTS", "1", 1);
  setenv("POCL_DEVICES", "teams", 1);
  if (params)
    setenv("POCL_TEAMS0_PARAMETERS", params, 1);
}

/* Participants that ran work-groups of dev since the last call. */
static uint64_t ran_mask(cl_device_id dev) {
  uint64_t ran[4];
  CLU_CHECK(clGetDeviceInfo(dev, TT_CL_DEVICE_PARTICIPANTS_RAN, sizeof ran,
                            ran, NULL));
  cr_assert_eq(ran[1] | ran[2] | ran[3], 0);
  return ran[0];
}

static uint64_t range_mask(unsigned first, unsigned count) {
  return ((count == 64 ? 0 : (uint64_t)1 << count) - 1) << first;
}

typedef struct sub_env {
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  cl_program p;
  cl_kernel k;
  cl_mem b;
  size_t n;
} sub_env;

static void sub_open(sub_env *s, cl_device_id dev, size_t n) {
  cl_int err;
  s->dev = dev;
  s->n = n;
  s->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CLU_CHECK(err);
  s->q = clCreateCommandQueueWithProperties(s->ctx, dev, NULL, &err);
  CLU_CHECK(err);
  clu_env e = {NULL, dev, s->ctx, s->q, 1, ""};
  s->p = clu_build_src(&e, src_inc);
  s->k = clu_kernel(s->p, "inc");
  s->b = clu_buffer(&e, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(s->q, s->b, &z, sizeof z, 0, n * sizeof z, 0,
                                NULL, NULL));
  CLU_ARG(s->k, 0, s->b);
}

/* Enqueues `times` launches of inc over n items in work-groups of 4. */
static void sub_enqueue(sub_env *s, int times) {
  size_t l = 4;
  for (int t = 0; t < times; t++)
    CLU_CHECK(clEnqueueNDRangeKernel(s->q, s->k, 1, NULL, &s->n, &l, 0, NULL,
                                     NULL));
}

static void sub_check(sub_env *s, cl_uint want) {
  cl_uint *v = malloc(s->n * sizeof *v);
  CLU_CHECK(clEnqueueReadBuffer(s->q, s->b, CL_TRUE, 0, s->n * sizeof *v, v, 0,
                                NULL, NULL));
  for (size_t i = 0; i < s->n; i++)
    cr_assert_eq(v[i], want, "v[%zu] = %u, want %u", i, v[i], want);
  free(v);
}

static void sub_close(sub_env *s) {
  clReleaseMemObject(s->b);
  clReleaseKernel(s->k);
  clReleaseProgram(s->p);
  clReleaseCommandQueue(s->q);
  clReleaseContext(s->ctx);
}

/* Runs inc on dev and checks that only participants [first, first + count)
 * ran its work-groups, at least one of them, and the result. */
static void run_on(cl_device_id dev, unsigned first, unsigned count) {
  sub_env s;
  sub_open(&s, dev, 4 * 512);
  (void)ran_mask(dev);
  sub_enqueue(&s, 3);
  sub_check(&s, 3);
  uint64_t ran = ran_mask(dev);
  cr_assert_neq(ran, 0, "no participant recorded");
  cr_assert_eq(ran & ~range_mask(first, count), 0,
               "participants %#llx ran outside [%u, %u)",
               (unsigned long long)ran, first, first + count);
  sub_close(&s);
}

static cl_uint cus(cl_device_id dev) {
  cl_uint cu = 0;
  CLU_CHECK(clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                            NULL));
  return cu;
}

/* Partitions dev by props into exactly `want` sub-devices (sub[]). */
static void partition(cl_device_id dev, const cl_device_partition_property *props,
                      cl_uint want, cl_device_id *sub) {
  cl_uint n = 0;
  CLU_CHECK(clCreateSubDevices(dev, props, 0, NULL, &n));
  cr_assert_eq(n, want);
  CLU_CHECK(clCreateSubDevices(dev, props, n, sub, &n));
  cr_assert_eq(n, want);
}

/* The properties of a partition by affinity domain d (any value: the
 * tests pass bad ones too). */
#define BY_DOMAIN(d)                                                           \
  ((const cl_device_partition_property[]){                                     \
      CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, (cl_device_partition_property)(d), 0})

static void check_type(cl_device_id dev, cl_device_affinity_domain dom) {
  cl_device_partition_property t[8] = {0};
  size_t size = 0;
  CLU_CHECK(clGetDeviceInfo(dev, CL_DEVICE_PARTITION_TYPE, sizeof t, t, &size));
  cr_assert_eq(size, 3 * sizeof t[0]);
  cr_assert_eq(t[0], CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
  cr_assert_eq(t[1], (cl_device_partition_property)dom);
  cr_assert_eq(t[2], 0);
}

/* The n sub-devices of one partition by affinity domain dom: each has
 * `width` compute units, reports its type, and runs its work-groups on
 * participants [first + width * i, + width) only. */
static void check_domains(const cl_device_id *sub, unsigned n,
                          cl_device_affinity_domain dom, unsigned first,
                          unsigned width) {
  for (unsigned i = 0; i < n; i++) {
    cr_assert_eq(cus(sub[i]), width);
    check_type(sub[i], dom);
    run_on(sub[i], first + width * i, width);
  }
}

/* The device reports the domains of the synthetic machine. */
SUBDEV_TEST(reports_domains) {
  setup(MACHINE, NULL);
  clu_env e;
  clu_open(&e, 0);
  cr_assert_eq(cus(e.dev), TEAM);
  cl_device_partition_property props[8] = {0};
  size_t size = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_PROPERTIES,
                            sizeof props, props, &size));
  cr_assert_eq(size, 3 * sizeof props[0]);
  cr_assert_eq(props[2], CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
  cl_device_affinity_domain dom = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
                            sizeof dom, &dom, NULL));
  cr_assert_eq(dom, CL_DEVICE_AFFINITY_DOMAIN_NUMA |
                        CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE |
                        CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE |
                        CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
               "domains %#llx", (unsigned long long)dom);
  /* a domain the machine lacks, and a value that is no domain */
  const cl_device_partition_property *l1 =
      BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE);
  cl_uint n = 0;
  cr_assert_eq(clCreateSubDevices(e.dev, l1, 0, NULL, &n),
               CL_DEVICE_PARTITION_FAILED);
  const cl_device_partition_property *bad = BY_DOMAIN(3);
  cr_assert_eq(clCreateSubDevices(e.dev, bad, 0, NULL, &n), CL_INVALID_VALUE);
  clu_close(&e);
}

/* One sub-device per NUMA node; each runs on its node's participants. */
SUBDEV_TEST(numa) {
  setup(MACHINE, NULL);
  clu_env e;
  clu_open(&e, 0);
  cl_device_id sub[2];
  partition(e.dev, BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA), 2, sub);
  check_domains(sub, 2, CL_DEVICE_AFFINITY_DOMAIN_NUMA, 0, 4);
  /* the root device still runs on every participant's domain */
  run_on(e.dev, 0, TEAM);
  clu_close(&e);
}

/* Next partitionable on the root is NUMA; on a node's sub-device it is L3,
 * then L2 on an L3's. */
SUBDEV_TEST(next_partitionable_nested) {
  setup(MACHINE, NULL);
  clu_env e;
  clu_open(&e, 0);
  const cl_device_partition_property *next =
      BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE);
  cl_device_id node[2], l3[2], l2[2];
  partition(e.dev, next, 2, node);
  check_type(node[1], CL_DEVICE_AFFINITY_DOMAIN_NUMA);
  cl_device_affinity_domain dom = 0;
  CLU_CHECK(clGetDeviceInfo(node[1], CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
                            sizeof dom, &dom, NULL));
  cr_assert_eq(dom, CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE |
                        CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE |
                        CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE);
  partition(node[1], next, 2, l3);
  check_domains(l3, 2, CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, 4, 2);
  partition(l3[1], next, 2, l2);
  check_domains(l2, 2, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, 6, 1);
  clu_close(&e);
}

/* By L3 on the root: four sub-devices of two participants. */
SUBDEV_TEST(l3) {
  setup(MACHINE, NULL);
  clu_env e;
  clu_open(&e, 0);
  cl_device_id sub[4];
  partition(e.dev, BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE), 4, sub);
  check_domains(sub, 4, CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, 0, 2);
  clu_close(&e);
}

/* Equally and by counts: contiguous spans of participants, in order. */
SUBDEV_TEST(equally_and_by_counts) {
  setup(MACHINE, NULL);
  clu_env e;
  clu_open(&e, 0);
  cl_device_partition_property eq[] = {CL_DEVICE_PARTITION_EQUALLY, 3, 0};
  cl_device_id sub[2];
  partition(e.dev, eq, 2, sub); /* 8 / 3: two of three, two left over */
  run_on(sub[0], 0, 3);
  run_on(sub[1], 3, 3);
  cl_device_partition_property counts[] = {CL_DEVICE_PARTITION_BY_COUNTS, 1, 5,
                                           0};
  partition(e.dev, counts, 2, sub);
  run_on(sub[0], 0, 1);
  run_on(sub[1], 1, 5);
  /* nested: by counts inside the second */
  cl_device_partition_property inner[] = {CL_DEVICE_PARTITION_BY_COUNTS, 2, 2,
                                          0};
  cl_device_id sub2[2];
  partition(sub[1], inner, 2, sub2);
  run_on(sub2[0], 1, 2);
  run_on(sub2[1], 3, 2);
  clu_close(&e);
}

/* Two sub-devices running kernels at once, from two host threads: the team
 * runs one region at a time, and a command that finds it held waits for it
 * instead of running on its own thread; no work-group leaves its node. */
typedef struct pair_arg {
  sub_env *s;
  int times;
} pair_arg;

static void *pair_main(void *arg) {
  pair_arg *a = arg;
  for (int r = 0; r < a->times; r++) {
    sub_enqueue(a->s, 4);
    clFinish(a->s->q);
  }
  return NULL;
}

static void concurrent_case(const char *params) {
  setup(MACHINE, params);
  clu_env e;
  clu_open(&e, 0);
  cl_device_id sub[2];
  partition(e.dev, BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA), 2, sub);
  sub_env s[2];
  for (unsigned i = 0; i < 2; i++) {
    sub_open(&s[i], sub[i], 4 * 256);
    clFinish(s[i].q);
    (void)ran_mask(sub[i]);
  }
  pthread_t t[2];
  pair_arg a[2] = {{&s[0], 25}, {&s[1], 25}};
  for (unsigned i = 0; i < 2; i++)
    cr_assert_eq(pthread_create(&t[i], NULL, pair_main, &a[i]), 0);
  for (unsigned i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  for (unsigned i = 0; i < 2; i++) {
    sub_check(&s[i], 100);
    uint64_t ran = ran_mask(sub[i]);
    cr_assert_neq(ran, 0);
    cr_assert_eq(ran & ~range_mask(4 * i, 4), 0,
                 "sub-device %u: participants %#llx", i,
                 (unsigned long long)ran);
    sub_close(&s[i]);
  }
  clu_close(&e);
}

SUBDEV_TEST(concurrent_lazy) { concurrent_case(NULL); }
SUBDEV_TEST(concurrent_eager) { concurrent_case("submit=eager"); }
SUBDEV_TEST(concurrent_static) { concurrent_case("schedule=static"); }

/* Without domains (no synthetic machine, and the team of this test is not
 * pinned) only the equal and by-counts partitions are offered. */
SUBDEV_TEST(unpinned_has_no_domains) {
  setup(NULL, NULL);
  setenv("TEAMS_PIN", "none", 1);
  clu_env e;
  clu_open(&e, 0);
  cl_device_partition_property props[8] = {0};
  size_t size = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_PROPERTIES,
                            sizeof props, props, &size));
  cr_assert_eq(size, 2 * sizeof props[0]);
  cl_device_affinity_domain dom = 1;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
                            sizeof dom, &dom, NULL));
  cr_assert_eq(dom, 0);
  cl_uint n = 0;
  cr_assert_eq(clCreateSubDevices(e.dev,
                                  BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA), 0,
                                  NULL, &n),
               CL_INVALID_VALUE);
  clu_close(&e);
}

/* ---- buffers placed by their sub-device's participants -------------------- */

/* Minor page faults of the team's worker for participant i (thread name
 * teams-w<i>), or -1 when there is none. */
static long worker_faults(unsigned i) {
  char want[16];
  snprintf(want, sizeof want, "teams-w%u", i);
  DIR *d = opendir("/proc/self/task");
  cr_assert_not_null(d);
  long faults = -1;
  struct dirent *e;
  while (faults < 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
      continue;
    if (fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = 0;
    fclose(f);
    if (strcmp(comm, want) != 0)
      continue;
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    f = fopen(path, "r");
    if (f == NULL)
      continue;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long minflt = 0;
    /* after comm: state(3) ppid pgrp session tty_nr tpgid flags minflt(10) */
    if (p != NULL &&
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu", &minflt) == 1)
      faults = (long)minflt;
  }
  closedir(d);
  return faults;
}

static int thp_always(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char buf[128] = "";
  if (f != NULL) {
    if (!fgets(buf, sizeof buf, f))
      buf[0] = 0;
    fclose(f);
  }
  return strstr(buf, "[always]") != NULL;
}

/* placement=firsttouch: a buffer first used on the second node's
 * sub-device has its pages first touched by that sub-device's participants
 * (4-7), a quarter each, and by none of the others: each worker's minor
 * faults tell (the participants are threads teams-w<i>).  Sub-device
 * launches always run on the team's workers (launcher/range.c,
 * tt__foreach_range_on). */
SUBDEV_TEST(buffer_touched_by_its_participants) {
  setup(MACHINE, "placement=firsttouch");
  /* every static chunk on its own participant: the quarters are exact */
  setenv("TEAMS_RUN", "team", 1);
  if (thp_always())
    cr_skip_test("THP \"always\": pages fault 2 MiB at a time");
  clu_env e;
  clu_open(&e, 0);
  cl_device_id sub[2];
  partition(e.dev, BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA), 2, sub);
  sub_env s;
  sub_open(&s, sub[1], 4 * 64); /* warm: the kernel, the queue */
  sub_enqueue(&s, 1);
  sub_check(&s, 1);
  size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 2048;
  size_t bytes = pages * page;
  cl_mem b = clu_buffer(&(clu_env){NULL, sub[1], s.ctx, s.q, 1, ""},
                        CL_MEM_READ_WRITE, bytes, NULL);
  long before[TEAM];
  for (unsigned i = 1; i < TEAM; i++)
    cr_assert_geq(before[i] = worker_faults(i), 0, "no thread teams-w%u", i);
  cl_uint v = 5;
  CLU_CHECK(clEnqueueFillBuffer(s.q, b, &v, sizeof v, 0, bytes, 0, NULL, NULL));
  CLU_CHECK(clFinish(s.q));
  for (unsigned i = 1; i < TEAM; i++) {
    long d = worker_faults(i) - before[i];
    if (i >= 4)
      cr_assert_geq(d, (long)(pages / 4) - 2,
                    "participant %u faulted %ld pages of its quarter", i, d);
    else
      cr_assert_lt(d, (long)(pages / 16),
                   "participant %u (other node) faulted %ld pages", i, d);
  }
  cl_uint *m = malloc(bytes);
  CLU_CHECK(clEnqueueReadBuffer(s.q, b, CL_TRUE, 0, bytes, m, 0, NULL, NULL));
  for (size_t i = 0; i < bytes / sizeof *m; i++)
    cr_assert_eq(m[i], 5u, "m[%zu]", i);
  free(m);
  clReleaseMemObject(b);
  sub_close(&s);
  clu_close(&e);
}

/* On a machine whose kernel reports two or more NUMA nodes, with the team
 * pinned by node: the buffers of each node's sub-device lie on one node,
 * and the two sub-devices' on different ones. */
SUBDEV_TEST(buffers_on_their_node) {
  setup(NULL, "placement=firsttouch");
  unsetenv("TEAMS_NUM_THREADS");
  setenv("TEAMS_PIN", "numa", 1);
  unsigned long mask[16] = {0};
  size_t nodes = 0;
  if (syscall(SYS_get_mempolicy, NULL, mask, 1024, NULL, 4 /* ALLOWED */) == 0)
    for (size_t w = 0; w < 16; w++)
      nodes += (size_t)__builtin_popcountl(mask[w]);
  if (nodes < 2)
    cr_skip_test("the kernel reports %zu NUMA node(s) for this process: the "
                 "synthetic nodes of the other tests do not exist here",
                 nodes);
  clu_env e;
  clu_open(&e, 0);
  const cl_device_partition_property *props =
      BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA);
  cl_uint n = 0;
  if (clCreateSubDevices(e.dev, props, 0, NULL, &n) != CL_SUCCESS || n < 2)
    cr_skip_test("the pinned team spans one node");
  cl_device_id *sub = calloc(n, sizeof *sub);
  CLU_CHECK(clCreateSubDevices(e.dev, props, n, sub, NULL));
  int node_of[2] = {-1, -1};
  for (unsigned i = 0; i < 2; i++) {
    sub_env s;
    size_t items = 4 << 18; /* 4 MiB */
    sub_open(&s, sub[i], items);
    sub_enqueue(&s, 1);
    cl_int err;
    char *p = clEnqueueMapBuffer(s.q, s.b, CL_TRUE, CL_MAP_READ, 0,
                                 items * sizeof(cl_uint), 0, NULL, NULL, &err);
    CLU_CHECK(err);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t b0 = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t b1 = ((uintptr_t)p + items * sizeof(cl_uint)) & ~(page - 1);
    size_t pages = (size_t)(b1 - b0) / page;
    void **pp = malloc(pages * sizeof *pp);
    int *st = malloc(pages * sizeof *st);
    for (size_t k = 0; k < pages; k++)
      pp[k] = (void *)(b0 + k * page);
    cr_assert_eq(syscall(SYS_move_pages, 0, (unsigned long)pages, pp, NULL, st,
                         0),
                 0);
    node_of[i] = st[0];
    for (size_t k = 0; k < pages; k++)
      cr_assert_eq(st[k], node_of[i], "sub-device %u: page %zu on node %d, "
                   "page 0 on %d", i, k, st[k], node_of[i]);
    free(pp);
    free(st);
    CLU_CHECK(clEnqueueUnmapMemObject(s.q, s.b, p, 0, NULL, NULL));
    CLU_CHECK(clFinish(s.q));
    sub_close(&s);
  }
  cr_assert_neq(node_of[0], node_of[1]);
  free(sub);
  clu_close(&e);
}

/* A domain whose participants are not one span is not offered: pinned by
 * node on 2 nodes x 2 cores x 2 SMT threads, a node's participants take
 * each core's first thread before any second one (0, 1 on the first PUs of
 * cores 0, 1; 2, 3 on their siblings), so a core's L2 holds participants 0
 * and 2.  NUMA still partitions. */
SUBDEV_TEST(scattered_domains_are_not_offered) {
  setup("pack:2 [numa] l2:2 core:1 pu:2", NULL);
  clu_env e;
  clu_open(&e, 0);
  cl_device_affinity_domain dom = 0;
  CLU_CHECK(clGetDeviceInfo(e.dev, CL_DEVICE_PARTITION_AFFINITY_DOMAIN,
                            sizeof dom, &dom, NULL));
  cr_assert_eq(dom, CL_DEVICE_AFFINITY_DOMAIN_NUMA |
                        CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE,
               "domains %#llx", (unsigned long long)dom);
  cl_uint n = 0;
  cr_assert_eq(clCreateSubDevices(e.dev,
                                  BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE),
                                  0, NULL, &n),
               CL_DEVICE_PARTITION_FAILED);
  cl_device_id sub[2];
  partition(e.dev, BY_DOMAIN(CL_DEVICE_AFFINITY_DOMAIN_NUMA), 2, sub);
  run_on(sub[1], 4, 4);
  clu_close(&e);
}
