/* Integer division traps on the teams PoCL driver: a kernel that divides by
 * zero, or INT_MIN by -1, returns (with unspecified values in those items)
 * instead of ending the process, whichever thread runs its work-groups:
 * the team's workers, the thread that waits for the command (lazy submit),
 * the thread that enqueues it (submit=eager, and submit=auto once a launch
 * is predicted short), and the driver's progress thread (backend/pocl/
 * run.c, Integer division traps).
 *
 * x86-64 traps these divisions; PoCL's SIGFPE handler steps over them,
 * before PoCL 4.0 on every thread, from 4.0 on the threads named to it
 * only, so on PoCL 3.1 these tests pass whatever the driver does.  Each
 * test is a process of its own (Criterion), so a thread named by an
 * earlier path never covers a later one.  Every launch has a trapping item
 * in every work-group (int division and long remainder), so the thread of
 * every participant that runs one traps.
 *
 * Runs on teams and on PoCL's pthread driver (tests/CMakeLists.txt); the
 * checks of who ran the command skip on pthread. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clu.h"

static const char *src_divide =
    "kernel void divide(global const int *a, global const int *b,\n"
    "                   global int *c, global const long *la,\n"
    "                   global const long *lb, global long *lc) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] / b[i];\n"
    "  lc[i] = la[i] % lb[i];\n"
    "}\n";

#define LOCAL 16
#define GROUPS 64
#define N (LOCAL * GROUPS)

static clu_env E;
static cl_program P;
static cl_kernel K;
static cl_mem A, B, C, LA, LB, LC;
static cl_int a[N], b[N], c[N];
static cl_long la[N], lb[N], lc[N];

/* Whether item i divides normally (its value is checked). */
static int defined_item(size_t i) {
  return b[i] != 0 && !(a[i] == INT_MIN && b[i] == -1);
}
static int defined_long_item(size_t i) {
  return lb[i] != 0 && !(la[i] == LLONG_MIN && lb[i] == -1);
}

/* Inputs with, in every work-group, a division by zero and INT_MIN / -1
 * (and the same for the long remainder). */
static void fill_inputs(void) {
  unsigned long long st = 0x5eed;
  for (size_t i = 0; i < N; i++) {
    a[i] = (cl_int)(clu_rand(&st) % 200001) - 100000;
    b[i] = (cl_int)(clu_rand(&st) % 199) - 99;
    if (b[i] == 0)
      b[i] = 7;
    la[i] = (cl_long)(clu_rand(&st) >> 2) - (cl_long)(1ull << 61);
    lb[i] = (cl_long)(clu_rand(&st) % 1999) - 999;
    if (lb[i] == 0)
      lb[i] = 13;
    switch (i % LOCAL) {
    case 3:
      b[i] = 0;
      lb[i] = 0;
      break;
    case 9:
      a[i] = INT_MIN;
      b[i] = -1;
      la[i] = LLONG_MIN;
      lb[i] = -1;
      break;
    }
  }
}

static void open_with(const char *params) {
  if (params)
    setenv("POCL_TEAMS0_PARAMETERS", params, 1);
  /* Every participant on the team, each on its own block (static): a
   * worker runs work-groups in every launch the team runs.  submit=auto
   * leaves the way to the rule: under a fixed way the team keeps no loop
   * record, and auto submit then lists every launch (backend/pocl/
   * submit.c, Submit). */
  setenv("TEAMS_NUM_THREADS", "2", 1);
  if (!params || !strstr(params, "submit=auto"))
    setenv("TEAMS_RUN", "team", 1);
  setenv("TEAMS_POCL_RECORD_PARTICIPANTS", "1", 1);
  clu_open(&E, 0);
  P = clu_build_src(&E, src_divide);
  K = clu_kernel(P, "divide");
  fill_inputs();
  A = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a);
  B = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b);
  C = clu_buffer(&E, CL_MEM_WRITE_ONLY, sizeof c, NULL);
  LA = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof la, la);
  LB = clu_buffer(&E, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof lb, lb);
  LC = clu_buffer(&E, CL_MEM_WRITE_ONLY, sizeof lc, NULL);
  CLU_ARG(K, 0, A);
  CLU_ARG(K, 1, B);
  CLU_ARG(K, 2, C);
  CLU_ARG(K, 3, LA);
  CLU_ARG(K, 4, LB);
  CLU_ARG(K, 5, LC);
}

static void open_lazy(void) { open_with("submit=lazy,grace_us=1000000,schedule=static"); }
static void open_eager(void) { open_with("submit=eager,schedule=static"); }
static void open_auto(void) { open_with("submit=auto,grace_us=1000000,schedule=static"); }
static void open_progress(void) { open_with("submit=lazy,grace_us=1000,schedule=static"); }

static void teardown(void) {
  cl_mem *m[] = {&A, &B, &C, &LA, &LB, &LC};
  for (size_t i = 0; i < sizeof m / sizeof *m; i++)
    if (*m[i]) {
      clReleaseMemObject(*m[i]);
      *m[i] = NULL;
    }
  if (K)
    clReleaseKernel(K);
  if (P)
    clReleaseProgram(P);
  K = NULL;
  P = NULL;
  clu_close(&E);
}

#define FPE_TEST(name, setup)                                                  \
  Test(pocl_fpe, name, .init = setup, .fini = teardown, .timeout = 300)

static void enqueue(void) {
  size_t n = N, l = LOCAL;
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, K, 1, NULL, &n, &l, 0, NULL, NULL));
}

/* Reads the results back (a blocking read: on lazy submit its thread runs
 * the launch if nobody did) and checks every defined item. */
static void check_results(void) {
  memset(c, 0, sizeof c);
  memset(lc, 0, sizeof lc);
  CLU_CHECK(clEnqueueReadBuffer(E.q, C, CL_TRUE, 0, sizeof c, c, 0, NULL,
                                NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, LC, CL_TRUE, 0, sizeof lc, lc, 0, NULL,
                                NULL));
  for (size_t i = 0; i < N; i++) {
    if (defined_item(i))
      cr_assert_eq(c[i], a[i] / b[i], "c[%zu] = %d / %d: got %d", i, a[i],
                   b[i], c[i]);
    if (defined_long_item(i))
      cr_assert_eq(lc[i], la[i] % lb[i], "lc[%zu] = %lld %% %lld: got %lld", i,
                   (long long)la[i], (long long)lb[i], (long long)lc[i]);
  }
}

/* The participants that ran this device's work-groups since the last call
 * (bit q: participant q); 0 on pthread. */
static uint64_t participants_ran(void) {
  uint64_t ran[4] = {0};
  if (!E.is_teams)
    return 0;
  CLU_CHECK(clGetDeviceInfo(E.dev, TT_CL_DEVICE_PARTICIPANTS_RAN, sizeof ran,
                            ran, NULL));
  return ran[0];
}

static void stats(tt_cl_stats *s) {
  if (clu_stats(&E, s) != 0)
    memset(s, 0, sizeof *s);
}

/* The waiting thread runs the launch as participant 0 and the team's
 * worker as participant 1: both trap, and the process goes on.  Several
 * launches, each checked, until the worker ran a work-group in one of them
 * (a worker that has not begun its block when the waiter is done with its
 * own leaves it to the waiter, docs/protocol.md item 10; a new worker can
 * wait milliseconds for its first run: up to 10 s of launches, a liveness
 * bound, not a timing). */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
FPE_TEST(lazy_waiter_and_workers, open_lazy) {
  uint64_t seen = 0;
  double until = now_s() + 10;
  for (int r = 0; r < 5 || (E.is_teams && (seen & 3) != 3 && now_s() < until); r++) {
    tt_cl_stats s0, s1;
    stats(&s0);
    participants_ran();
    enqueue();
    CLU_CHECK(clFinish(E.q));
    stats(&s1);
    seen |= participants_ran();
    if (E.is_teams)
      cr_assert_eq(s1.run_by_waiter, s0.run_by_waiter + 1,
                   "launch %d: not run by the waiting thread", r);
    check_results();
  }
  if (E.is_teams)
    cr_assert_eq(seen & 3, 3,
                 "the waiter (participant 0) and a worker (1) ran work-groups:"
                 " participants %#llx", (unsigned long long)seen);
}

/* submit=eager: the enqueuing thread runs the launch inside
 * clEnqueueNDRangeKernel, as participant 0. */
FPE_TEST(eager_enqueuing_thread, open_eager) {
  for (int r = 0; r < 5; r++) {
    tt_cl_stats s0, s1;
    stats(&s0);
    participants_ran();
    enqueue();
    stats(&s1);
    uint64_t ran = participants_ran();
    if (E.is_teams) {
      cr_assert_eq(s1.run_by_submit, s0.run_by_submit + 1,
                   "launch %d: not run by the enqueuing thread", r);
      cr_assert(ran & 1, "launch %d: participant 0 ran no work-group", r);
    }
    check_results();
  }
}

/* submit=auto: once the kernel's launches are timed and short, a launch
 * runs at once in the enqueuing thread. */
FPE_TEST(auto_at_once_in_enqueuing_thread, open_auto) {
  uint64_t at_once = 0;
  for (int r = 0; r < 20 && (!E.is_teams || at_once < 5); r++) {
    tt_cl_stats s0, s1;
    stats(&s0);
    participants_ran();
    enqueue();
    stats(&s1);
    uint64_t ran = participants_ran();
    if (s1.run_by_submit > s0.run_by_submit) {
      cr_assert(ran & 1, "launch %d: participant 0 ran no work-group", r);
      at_once++;
    }
    CLU_CHECK(clFinish(E.q));
    check_results();
  }
  if (E.is_teams)
    cr_assert_geq(at_once, 5, "%llu of 20 launches ran at enqueue",
                  (unsigned long long)at_once);
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* A launch nobody waits for goes to the progress thread after the grace
 * period (1 ms); it runs as participant 0. */
FPE_TEST(progress_thread, open_progress) {
  tt_cl_stats s0, s1;
  stats(&s0);
  for (int r = 0; r < 3; r++) {
    enqueue();
    if (E.is_teams) {
      for (int t = 0; t < 60000; t++) { /* 60 s at most */
        stats(&s1);
        if (s1.ndrange > s0.ndrange + (uint64_t)r)
          break;
        sleep_ms(1);
      }
      cr_assert_eq(s1.ndrange, s0.ndrange + (uint64_t)r + 1,
                   "launch %d never ran", r);
    }
    check_results();
  }
  if (E.is_teams)
    cr_assert_geq(s1.run_by_progress, s0.run_by_progress + 3,
                  "%llu of 3 launches ran on the progress thread",
                  (unsigned long long)(s1.run_by_progress - s0.run_by_progress));
}
