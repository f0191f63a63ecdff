/* Event profiling on the teams PoCL driver: every command's timestamps are
 * ordered QUEUED <= SUBMIT <= START <= END, START is not later than the
 * kernel's first work-group and END not earlier than its last, and a command
 * that waits for a user event starts only after the event is set.
 *
 * Runs on teams and on PoCL's pthread driver (tests/CMakeLists.txt).  No speed
 * is asserted: the bounds below are lower bounds on intervals that the host
 * itself waited out, compared as differences on the device's timer. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "clu.h"

static clu_env E;
static cl_command_queue Q;   /* in order, profiling */
static cl_command_queue QO;  /* out of order, profiling */

static void setup(void) {
  clu_open(&E, 0);
  Q = clu_queue(&E, CL_QUEUE_PROFILING_ENABLE);
  QO = clu_queue(&E, CL_QUEUE_PROFILING_ENABLE |
                         CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
}
static void teardown(void) {
  clReleaseCommandQueue(QO);
  clReleaseCommandQueue(Q);
  clu_close(&E);
}

#define TIMING_TEST(name)                                                      \
  Test(pocl_timing, name, .init = setup, .fini = teardown, .timeout = 300)

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* PoCL's timer on Linux (pocl_gettimemono_ns): intervals on the host and
 * on the device are then measured on the same clock. */
static uint64_t host_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC_RAW, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct stamps {
  cl_ulong queued, submit, start, end;
} stamps;

static stamps stamps_of(cl_event ev) {
  stamps s;
  CLU_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED,
                                    sizeof s.queued, &s.queued, NULL));
  CLU_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_SUBMIT,
                                    sizeof s.submit, &s.submit, NULL));
  CLU_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START,
                                    sizeof s.start, &s.start, NULL));
  CLU_CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END,
                                    sizeof s.end, &s.end, NULL));
  return s;
}

static void expect_ordered(cl_event ev, const char *what, int i) {
  stamps s = stamps_of(ev);
  cr_assert(s.queued <= s.submit && s.submit <= s.start && s.start <= s.end,
            "%s #%d: queued %llu submit %llu start %llu end %llu (ns)", what,
            i, (unsigned long long)s.queued, (unsigned long long)s.submit,
            (unsigned long long)s.start, (unsigned long long)s.end);
}

static const char *src =
    "kernel void inc(global uint *v) { v[get_global_id(0)] += 1; }\n"
    /* Every work-group says it started, then spins until the host's flag. */
    "kernel void gate(volatile global int *flag, volatile global int *seen,\n"
    "                 global int *out) {\n"
    "  if (get_local_id(0) == 0) seen[get_group_id(0)] = 1;\n"
    "  while (*flag == 0) ;\n"
    "  out[get_global_id(0)] = *flag;\n"
    "}\n";

/* Kernels, copies, fills, reads, markers and barriers, on an in-order and an
 * out-of-order queue, some gated by a user event and some by each other:
 * every one of them has QUEUED <= SUBMIT <= START <= END. */
TIMING_TEST(order_every_command) {
  cl_program p = clu_build_src(&E, src);
  const size_t n = 4096, l = 64;
  cl_uint zero = 0;
  cl_int err;
  cl_event u = clCreateUserEvent(E.ctx, &err);
  CLU_CHECK(err);
  enum { R = 40, PER = 7 };
  static cl_event ev[2][R * PER];
  int cnt[2] = {0, 0};
  cl_command_queue qs[2] = {Q, QO};
  cl_kernel k[2];
  cl_mem a[2], b[2];
  cl_uint *host[2];
  for (int w = 0; w < 2; w++) {
    k[w] = clu_kernel(p, "inc");
    a[w] = clu_buffer(&E, CL_MEM_READ_WRITE, n * 4, NULL);
    b[w] = clu_buffer(&E, CL_MEM_READ_WRITE, n * 4, NULL);
    host[w] = calloc(n, 4);
    CLU_ARG(k[w], 0, a[w]);
  }
  for (int r = 0; r < R; r++)
    for (int w = 0; w < 2; w++) {
      cl_command_queue q = qs[w];
      cl_event *e = ev[w];
      int *c = &cnt[w];
      /* Out of order: each command waits for the one before it.  The first
       * command of each queue waits for the user event. */
      cl_uint nw = (w == 1 && *c > 0) ? 1 : (r == 0 ? 1 : 0);
      const cl_event *wl = (w == 1 && *c > 0) ? &e[*c - 1] : nw ? &u : NULL;
      CLU_CHECK(
          clEnqueueFillBuffer(q, a[w], &zero, 4, 0, n * 4, nw, wl, &e[*c]));
      ++*c;
      nw = w == 1;
      wl = nw ? &e[*c - 1] : NULL;
      CLU_CHECK(
          clEnqueueNDRangeKernel(q, k[w], 1, NULL, &n, &l, nw, wl, &e[*c]));
      ++*c;
      wl = nw ? &e[*c - 1] : NULL;
      CLU_CHECK(
          clEnqueueCopyBuffer(q, a[w], b[w], 0, 0, n * 4, nw, wl, &e[*c]));
      ++*c;
      wl = nw ? &e[*c - 1] : NULL;
      CLU_CHECK(
          clEnqueueNDRangeKernel(q, k[w], 1, NULL, &n, NULL, nw, wl, &e[*c]));
      ++*c;
      wl = nw ? &e[*c - 1] : NULL;
      CLU_CHECK(clEnqueueMarkerWithWaitList(q, nw, wl, &e[*c]));
      ++*c;
      wl = nw ? &e[*c - 1] : NULL;
      CLU_CHECK(clEnqueueReadBuffer(q, b[w], CL_FALSE, 0, n * 4, host[w], nw,
                                    wl, &e[*c]));
      ++*c;
      CLU_CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, &e[*c]));
      ++*c;
      if (r == 0 && w == 1) {
        sleep_ms(5);
        CLU_CHECK(clSetUserEventStatus(u, CL_COMPLETE));
      }
      if (r % 8 == 3)
        CLU_CHECK(clFinish(q));
    }
  CLU_CHECK(clFinish(Q));
  CLU_CHECK(clFinish(QO));
  static const char *names[PER] = {"fill",   "kernel", "copy", "kernel",
                                   "marker", "read",   "barrier"};
  for (int w = 0; w < 2; w++) {
    for (int i = 0; i < cnt[w]; i++) {
      expect_ordered(ev[w][i], names[i % PER], i);
      clReleaseEvent(ev[w][i]);
    }
    /* fill 0, +1, copy: the read saw 1 everywhere. */
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(host[w][i], 1u, "queue %d: host[%zu] = %u", w, i,
                   host[w][i]);
    free(host[w]);
    clReleaseMemObject(a[w]);
    clReleaseMemObject(b[w]);
    clReleaseKernel(k[w]);
  }
  clReleaseEvent(u);
  clReleaseProgram(p);
}

/* END - START covers the kernel: its work-groups spin until the host sets a
 * flag, and the host sets it only after every work-group said it started
 * and the host then waited 50 ms.  START is at or before the first
 * work-group's start and END at or after the last one's end, so
 * END - START >= the 50 ms (and more) the host measured in between. */
TIMING_TEST(end_minus_start_covers_kernel) {
  cl_program p = clu_build_src(&E, src);
  cl_kernel k = clu_kernel(p, "gate");
  enum { G = 4, L = 16 };
  int *flag = aligned_alloc(4096, 4096);
  int *seen = aligned_alloc(4096, 4096);
  flag[0] = 0;
  for (int g = 0; g < G; g++)
    seen[g] = 0;
  /* USE_HOST_PTR: on PoCL's CPU drivers the kernel sees this very memory. */
  cl_mem fb =
      clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, flag);
  cl_mem sb =
      clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, seen);
  cl_mem ob = clu_buffer(&E, CL_MEM_READ_WRITE, G * L * 4, NULL);
  CLU_ARG(k, 0, fb);
  CLU_ARG(k, 1, sb);
  CLU_ARG(k, 2, ob);
  size_t n = G * L, l = L;
  cl_event ev;
  CLU_CHECK(clEnqueueNDRangeKernel(Q, k, 1, NULL, &n, &l, 0, NULL, &ev));
  CLU_CHECK(clFlush(Q));
  /* Nobody waits: the command starts on its own (the progress thread on
   * teams).  Work-groups run on up to the device's compute units at once,
   * and all spin, so only as many as those can say they started before the
   * flag: wait for the first one. */
  int polls = 0;
  while (__atomic_load_n(&seen[0], __ATOMIC_SEQ_CST) == 0 && polls++ < 10000)
    sleep_ms(1);
  cr_assert_eq(__atomic_load_n(&seen[0], __ATOMIC_SEQ_CST), 1,
               "work-group 0 never started");
  uint64_t t0 = host_ns();
  sleep_ms(50);
  uint64_t t1 = host_ns();
  __atomic_store_n(&flag[0], 7, __ATOMIC_SEQ_CST);
  CLU_CHECK(clWaitForEvents(1, &ev));
  stamps s = stamps_of(ev);
  cr_assert(s.queued <= s.submit && s.submit <= s.start && s.start <= s.end);
  cr_assert_geq(s.end - s.start, t1 - t0,
                "END - START = %llu ns, but the kernel ran at least %llu ns",
                (unsigned long long)(s.end - s.start),
                (unsigned long long)(t1 - t0));
  int out[G * L];
  CLU_CHECK(clEnqueueReadBuffer(Q, ob, CL_TRUE, 0, sizeof out, out, 0, NULL,
                                NULL));
  for (int i = 0; i < G * L; i++)
    cr_assert_eq(out[i], 7);
  for (int g = 0; g < G; g++)
    cr_assert_eq(seen[g], 1, "work-group %d did not run", g);
  clReleaseEvent(ev);
  clReleaseMemObject(fb);
  clReleaseMemObject(sb);
  clReleaseMemObject(ob);
  clReleaseKernel(k);
  clReleaseProgram(p);
  free(flag);
  free(seen);
}

/* A command that waits for a user event starts after the event is set: its
 * START - QUEUED is at least what the host waited between the enqueue and
 * setting the event, on an in-order and an out-of-order queue, whether
 * nobody waits for it (the progress thread runs it) or a waiter does. */
static void gated(cl_command_queue q, int wait_first) {
  cl_program p = clu_build_src(&E, src);
  cl_kernel k = clu_kernel(p, "inc");
  const size_t n = 1024;
  cl_mem a = clu_buffer(&E, CL_MEM_READ_WRITE, n * 4, NULL);
  cl_uint zero = 0;
  CLU_CHECK(clEnqueueFillBuffer(q, a, &zero, 4, 0, n * 4, 0, NULL, NULL));
  CLU_CHECK(clFinish(q));
  CLU_ARG(k, 0, a);
  cl_int err;
  cl_event u = clCreateUserEvent(E.ctx, &err);
  CLU_CHECK(err);
  cl_event ev;
  CLU_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 1, &u, &ev));
  uint64_t t0 = host_ns(); /* after QUEUED */
  CLU_CHECK(clFlush(q));
  sleep_ms(40);
  uint64_t t1 = host_ns(); /* before the command can start */
  CLU_CHECK(clSetUserEventStatus(u, CL_COMPLETE));
  if (wait_first)
    CLU_CHECK(clWaitForEvents(1, &ev));
  else {
    int polls = 0;
    cl_int st = CL_QUEUED;
    while (polls++ < 10000) {
      CLU_CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                               sizeof st, &st, NULL));
      if (st <= CL_COMPLETE)
        break;
      sleep_ms(1);
    }
    cr_assert_eq(st, CL_COMPLETE, "the gated command never ran");
  }
  stamps s = stamps_of(ev);
  cr_assert(s.queued <= s.submit && s.submit <= s.start && s.start <= s.end);
  cr_assert_geq(s.start - s.queued, t1 - t0,
                "START - QUEUED = %llu ns, but the command waited %llu ns for "
                "its user event",
                (unsigned long long)(s.start - s.queued),
                (unsigned long long)(t1 - t0));
  clReleaseEvent(ev);
  clReleaseEvent(u);
  clReleaseMemObject(a);
  clReleaseKernel(k);
  clReleaseProgram(p);
}

TIMING_TEST(start_after_user_event_waiter) { gated(Q, 1); }
TIMING_TEST(start_after_user_event_no_waiter) { gated(Q, 0); }
TIMING_TEST(start_after_user_event_out_of_order) { gated(QO, 1); }

/* The other command kinds -- a write, rectangular copies, reads and writes,
 * a map and its unmap, a migration, and an image's write, copy, fill and
 * read -- each ordered QUEUED <= SUBMIT <= START <= END as well, queued
 * behind a user event so that SUBMIT and START come from a run, not from
 * the enqueue. */
TIMING_TEST(order_other_kinds) {
  enum { N = 1024, K = 12 };
  static cl_uint host[N], back[N];
  for (int i = 0; i < N; i++)
    host[i] = (cl_uint)i;
  cl_mem a = clu_buffer(&E, CL_MEM_READ_WRITE, sizeof host, NULL);
  cl_mem b = clu_buffer(&E, CL_MEM_READ_WRITE, sizeof host, NULL);
  cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT32};
  cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                        .image_width = 8, .image_height = 8};
  cl_int err;
  cl_mem im = clCreateImage(E.ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
  CLU_CHECK(err);
  cl_mem im2 = clCreateImage(E.ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
  CLU_CHECK(err);
  cl_event u = clCreateUserEvent(E.ctx, &err);
  CLU_CHECK(err);
  cl_event ev[K];
  static const char *names[K] = {"write",      "copy rect",  "read rect",
                                 "write rect", "map",        "unmap",
                                 "migrate",    "image write", "image copy",
                                 "image fill", "image read", "read"};
  const size_t origin[3] = {0, 0, 0}, region[3] = {16, 8, 1};
  const size_t org[3] = {0, 0, 0}, reg[3] = {8, 8, 1};
  cl_uint px[8 * 8 * 4], fill[4] = {1, 2, 3, 4};
  CLU_CHECK(clEnqueueWriteBuffer(Q, a, CL_FALSE, 0, sizeof host, host, 1, &u,
                                 &ev[0]));
  CLU_CHECK(clEnqueueCopyBufferRect(Q, a, b, origin, origin, region, 16, 0,
                                    16, 0, 0, NULL, &ev[1]));
  CLU_CHECK(clEnqueueReadBufferRect(Q, b, CL_FALSE, origin, origin, region, 16,
                                    0, 16, 0, back, 0, NULL, &ev[2]));
  CLU_CHECK(clEnqueueWriteBufferRect(Q, b, CL_FALSE, origin, origin, region,
                                     16, 0, 16, 0, host, 0, NULL, &ev[3]));
  void *m = clEnqueueMapBuffer(Q, b, CL_FALSE, CL_MAP_READ, 0, sizeof host, 0,
                               NULL, &ev[4], &err);
  CLU_CHECK(err);
  CLU_CHECK(clEnqueueUnmapMemObject(Q, b, m, 0, NULL, &ev[5]));
  CLU_CHECK(clEnqueueMigrateMemObjects(Q, 1, &a, 0, 0, NULL, &ev[6]));
  for (int i = 0; i < 8 * 8 * 4; i++)
    px[i] = (cl_uint)i;
  CLU_CHECK(clEnqueueWriteImage(Q, im, CL_FALSE, org, reg, 0, 0, px, 0, NULL,
                                &ev[7]));
  CLU_CHECK(clEnqueueCopyImage(Q, im, im2, org, org, reg, 0, NULL, &ev[8]));
  CLU_CHECK(clEnqueueFillImage(Q, im, fill, org, reg, 0, NULL, &ev[9]));
  CLU_CHECK(clEnqueueReadImage(Q, im2, CL_FALSE, org, reg, 0, 0, px, 0, NULL,
                               &ev[10]));
  CLU_CHECK(clEnqueueReadBuffer(Q, a, CL_FALSE, 0, sizeof back, back, 0, NULL,
                                &ev[11]));
  sleep_ms(5);
  CLU_CHECK(clSetUserEventStatus(u, CL_COMPLETE));
  CLU_CHECK(clFinish(Q));
  for (int i = 0; i < K; i++) {
    expect_ordered(ev[i], names[i], i);
    clReleaseEvent(ev[i]);
  }
  for (int i = 0; i < N; i++)
    cr_assert_eq(back[i], (cl_uint)i, "back[%d] = %u", i, back[i]);
  for (int i = 0; i < 8 * 8 * 4; i++)
    cr_assert_eq(px[i], (cl_uint)i, "image pixel word %d = %u", i, px[i]);
  clReleaseEvent(u);
  clReleaseMemObject(im2);
  clReleaseMemObject(im);
  clReleaseMemObject(b);
  clReleaseMemObject(a);
}
