/* Allocation failures on the teams driver's command path.
 *
 * An interposer (tests/pocl-util/failmalloc.c) fails the n-th allocation
 * made by one library after it is armed; for n = 1, 2, ... until a run of
 * the sequence below sees no failure, the sequence runs armed:
 *   create a kernel object, create a buffer, write it, launch a kernel built
 *   and specialised before arming (its local memory larger each n, so every
 *   participant's work-group scratch grows: tests/CMakeLists.txt runs the test
 *   with schedule=static, where every participant runs a block of every
 *   launch), launch the new kernel object
 *   (its specialised function is built in the background: compile.c), launch a
 *   kernel of 65 arguments (more than run.c keeps on the stack), launch a
 *   kernel that reads an image, read the buffer, clFinish;
 * every call must succeed or return CL_OUT_OF_HOST_MEMORY or
 * CL_OUT_OF_RESOURCES, every event must end CL_COMPLETE or negative, and
 * when all succeeded the data must be right.  Then, disarmed: the new
 * kernel's background build lands and its launches take it, a launch on the
 * queue gives the right result, and the team is whole (a static region runs
 * chunk c on participant c: no command left the team held, which would make
 * the region run serially).  Each n runs in this one process, after the
 * previous one: a failure that left state behind shows up in the next n.
 *
 * The sweeps are per library, because only the driver's and the team's code
 * is ours to make robust: libpocl itself does not survive every failed
 * allocation (backend/pocl/README.md, "Allocation failures", lists where),
 * so the failures are injected only into allocations whose caller lies in
 * the driver (libpocl-devices-pthread.so) or in libteams.
 *
 * A hang fails the test: a watchdog thread aborts with the step and n when
 * one blocking call takes over two minutes.  Teams only: the library the
 * sweeps target is the teams driver (on the system ICD the same file name
 * is PoCL's pthread driver).  Not in sanitizer builds: ASan and TSan own
 * malloc, and memory from glibc's allocator would reach their free. */
#include <criterion/criterion.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clu.h"
#include "failmalloc.h"
#include "teams/team.h"

#ifdef TT_NO_FAILMALLOC
/* Sanitizer builds link no interposer (tests/CMakeLists.txt); sweep() skips
 * before any of these is called. */
int fm_arm(unsigned long n, unsigned scope) { return -1; }
unsigned long fm_disarm(void) { return 0; }
const char *fm_injected_at(uintptr_t *offset) { return NULL; }
#endif

#define N 4096
#define WIDE_ARGS 64 /* + the buffer: 65 arguments */
#define MAX_N 2000   /* the sweep ends long before: it fails if not */

static const char *src_scale =
    "kernel void scale(global uint *v, uint a, local uint *tmp) {\n"
    "  size_t i = get_global_id(0), l = get_local_id(0);\n"
    "  tmp[l] = v[i] * 3u + a;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  v[i] = tmp[l];\n"
    "}\n"
    "kernel void img_add(read_only image2d_t im, global uint *v) {\n"
    "  v[get_global_id(0)] += read_imageui(im, (int2)(0, 0)).x;\n"
    "}\n";
#define IMG_VALUE 1000u

static clu_env E;
static cl_program P;
static cl_kernel K_pre, K_wide, K_img;
static cl_mem Img;
static cl_uint host_in[N], host_out[N];

/* ---- the watchdog ----------------------------------------------------------- */

static _Atomic(const char *) step;
static _Atomic unsigned long step_n;
static _Atomic int64_t step_deadline; /* ns, 0: nothing blocking now */

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void *watchdog(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec t = {0, 200000000};
    nanosleep(&t, NULL);
    int64_t d = atomic_load(&step_deadline);
    if (d != 0 && now_ns() > d) {
      fm_disarm();
      fprintf(stderr, "test-pocl-alloc: n=%lu: %s did not return within "
                      "120 s: hang\n",
              atomic_load(&step_n), atomic_load(&step));
      abort();
    }
  }
  return NULL;
}

static void guard(const char *what) {
  atomic_store(&step, what);
  atomic_store(&step_deadline, now_ns() + (int64_t)120 * 1000000000);
}

static void unguard(void) { atomic_store(&step_deadline, 0); }

/* ---- helpers ------------------------------------------------------------------ */

static void oom_or_ok(cl_int err, const char *what, unsigned long n) {
  cr_assert(err == CL_SUCCESS || err == CL_OUT_OF_HOST_MEMORY ||
                err == CL_OUT_OF_RESOURCES,
            "n=%lu: %s returned %d (want success, CL_OUT_OF_HOST_MEMORY or "
            "CL_OUT_OF_RESOURCES)",
            n, what, err);
}

static cl_int status_of(cl_event ev) {
  cl_int s;
  CLU_CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s,
                           NULL));
  return s;
}

static uint32_t expect(uint32_t x) {
  x = x * 3u + 1u; /* scale, a = 1 */
  x = x * 3u + 2u; /* the new kernel object: scale, a = 2 */
  x += (WIDE_ARGS - 1) * WIDE_ARGS / 2; /* wide: + 0 + 1 + ... + 63 */
  return x + IMG_VALUE;                  /* img_add */
}

/* Local memory of the prebuilt launch at step n: more than any launch
 * before it needed (the wide kernel's 65 arguments included), growing with
 * n by more than the scratch's rounding, so that each participant's
 * work-group scratch grows at every step. */
static size_t local_bytes(unsigned long n) { return 8192 + 512 * n; }

static void set_scale_args(cl_kernel k, cl_mem b, cl_uint a, size_t local) {
  CLU_CHECK(clSetKernelArg(k, 0, sizeof b, &b));
  CLU_CHECK(clSetKernelArg(k, 1, sizeof a, &a));
  CLU_CHECK(clSetKernelArg(k, 2, local, NULL));
}

static tt_cl_stats stats(void) {
  tt_cl_stats s;
  cr_assert_eq(clu_stats(&E, &s), 0);
  return s;
}

/* Waits (bounded) until no background build is queued or running. */
static void wait_builds(unsigned long n) {
  guard("waiting for the background builds");
  atomic_store(&step_n, n);
  while (stats().jit_pending != 0) {
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
  }
  unguard();
}

/* Disarmed: one launch of `scale` (a = 5, local size 16) over a fresh
 * buffer gives the right result. */
static void check_queue(cl_kernel k, size_t local, unsigned long n) {
  cl_uint in[256], out[256];
  for (cl_uint i = 0; i < 256; i++)
    in[i] = i * 7u + (cl_uint)n;
  cl_mem b = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                        sizeof in, in);
  set_scale_args(k, b, 5, 64 * sizeof(cl_uint));
  size_t g = 256;
  guard("the check launch");
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &local, 0, NULL,
                                   NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, b, CL_TRUE, 0, sizeof out, out, 0, NULL,
                                NULL));
  unguard();
  for (cl_uint i = 0; i < 256; i++)
    cr_assert_eq(out[i], in[i] * 3u + 5u, "n=%lu: the queue after the "
                 "sweep step: out[%u] = %u, want %u", n, i, out[i],
                 in[i] * 3u + 5u);
  clReleaseMemObject(b);
}

static _Atomic int chunk_ran_on[256];
static _Atomic size_t chunks_begun, chunks_all;

/* Chunk 0 first waits up to a second until every chunk began: a worker that
 * runs comes in time and takes its own chunk (the caller takes over only a
 * chunk whose worker has not begun when its own is done, docs/protocol.md
 * item 10); a region run serially waits the second. */
static void note_participant(void *ctx, size_t c) {
  (void)ctx;
  atomic_fetch_add(&chunks_begun, 1);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (c == 0 && atomic_load(&chunks_begun) < atomic_load(&chunks_all) &&
         clock_gettime(CLOCK_MONOTONIC, &t) == 0 &&
         (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L)
    sched_yield();
  atomic_store(&chunk_ran_on[c], tt_participant());
}

/* The team is whole: not held by a command that failed halfway (a region
 * would run serially on the caller then), and no participant lost. */
static void check_team(size_t want, unsigned long n) {
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.size, want, "n=%lu: team of %zu, was %zu", n, info.size,
               want);
  size_t p = want < 256 ? want : 256;
  for (size_t c = 0; c < p; c++)
    atomic_store(&chunk_ran_on[c], -1);
  atomic_store(&chunks_begun, 0);
  atomic_store(&chunks_all, p);
  cr_assert_eq(tt_foreach_chunk(note_participant, NULL, p, p), 0);
  for (size_t c = 0; c < p; c++)
    cr_assert_eq(atomic_load(&chunk_ran_on[c]), (int)c,
                 "n=%lu: chunk %zu ran on participant %d, not %zu: the team "
                 "is held or lost a participant",
                 n, c, atomic_load(&chunk_ran_on[c]), c);
}

/* ---- setup ------------------------------------------------------------------------ */

static char *wide_source(void) {
  size_t cap = 8192;
  char *s = malloc(cap);
  cr_assert_not_null(s);
  int len = snprintf(s, cap, "kernel void wide(global uint *v");
  for (int i = 0; i < WIDE_ARGS; i++)
    len += snprintf(s + len, cap - (size_t)len, ", uint a%d", i);
  len += snprintf(s + len, cap - (size_t)len,
                  ") {\n  v[get_global_id(0)] += 0u");
  for (int i = 0; i < WIDE_ARGS; i++)
    len += snprintf(s + len, cap - (size_t)len, " + a%d", i);
  snprintf(s + len, cap - (size_t)len, ";\n}\n");
  return s;
}

/* The wide and the image kernel once (at the sweep's local size, 64), so
 * that their specialised functions are built before the sweep and every
 * step of the sweep makes the same allocations. */
static void launch_once(cl_kernel k, cl_uint arg, cl_uint add) {
  cl_uint v[256] = {0}, out[256];
  cl_mem b = clu_buffer(&E, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                        sizeof v, v);
  CLU_CHECK(clSetKernelArg(k, arg, sizeof b, &b));
  size_t g = 256, l = 64;
  guard("a launch before the sweep");
  CLU_CHECK(clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, b, CL_TRUE, 0, sizeof out, out, 0, NULL,
                                NULL));
  unguard();
  for (int i = 0; i < 256; i++)
    cr_assert_eq(out[i], add);
  clReleaseMemObject(b);
}

static void setup(void) {
  clu_open(&E, 0);
  if (!E.is_teams)
    return;
  char *wide = wide_source();
  size_t need = strlen(src_scale) + strlen(wide) + 1;
  char *src = malloc(need);
  cr_assert_not_null(src);
  snprintf(src, need, "%s%s", src_scale, wide);
  free(wide);
  P = clu_build_src(&E, src);
  free(src);
  K_pre = clu_kernel(P, "scale");
  K_wide = clu_kernel(P, "wide");
  for (cl_uint i = 0; i < WIDE_ARGS; i++)
    CLU_CHECK(clSetKernelArg(K_wide, i + 1, sizeof i, &i));
  K_img = clu_kernel(P, "img_add");
  /* RGBA: of the 32-bit unsigned formats the one OpenCL requires of every
   * device with images (PoCL 7.1's CPU drivers have no CL_R). */
  cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT32};
  cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D,
                        .image_width = 1, .image_height = 1};
  cl_uint pixel[4] = {IMG_VALUE, 0, 0, 0};
  cl_int err;
  Img = clCreateImage(E.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &fmt,
                      &desc, pixel, &err);
  CLU_CHECK(err);
  CLU_CHECK(clSetKernelArg(K_img, 0, sizeof Img, &Img));
  for (cl_uint i = 0; i < N; i++)
    host_in[i] = i * 2654435761u;
  /* The prebuilt kernel at its local size, and the new kernel objects' one:
   * both specialised functions built (and on disk) before the sweep. */
  cl_kernel k = clu_kernel(P, "scale");
  check_queue(K_pre, 16, 0);
  check_queue(k, 32, 0);
  launch_once(K_wide, 0, (WIDE_ARGS - 1) * WIDE_ARGS / 2);
  launch_once(K_img, 1, IMG_VALUE);
  wait_builds(0);
  check_queue(K_pre, 16, 0);
  clReleaseKernel(k);
  pthread_t t;
  cr_assert_eq(pthread_create(&t, NULL, watchdog, NULL), 0);
  pthread_detach(t);
}

static void teardown(void) {
  if (K_pre)
    clReleaseKernel(K_pre);
  if (K_wide)
    clReleaseKernel(K_wide);
  if (K_img)
    clReleaseKernel(K_img);
  if (Img)
    clReleaseMemObject(Img);
  K_img = NULL;
  Img = NULL;
  if (P)
    clReleaseProgram(P);
  K_pre = K_wide = NULL;
  P = NULL;
  clu_close(&E);
}

/* ---- one step of the sweep ----------------------------------------------------------- */

enum { EV_WRITE, EV_PRE, EV_NEW, EV_WIDE, EV_IMG, EV_READ, EV_COUNT };
static const char *const ev_name[EV_COUNT] = {
    "the write",       "the prebuilt kernel's launch", "the new kernel's launch",
    "the wide launch", "the image kernel's launch",    "the read"};

/* Runs the sequence armed to fail the n-th allocation of `scope`; returns
 * whether that failure happened (else the sweep is over). */
static int sweep_step(unsigned long n, unsigned scope, size_t team) {
  cl_event ev[EV_COUNT] = {0};
  cl_kernel k = NULL;
  cl_mem b = NULL;
  cl_int err, all = CL_SUCCESS;
  size_t g = N, l_pre = 16, l_new = 32, l_wide = 64;
  atomic_store(&step_n, n);

  /* Arguments set before arming: clSetKernelArg is PoCL's. */
  cl_uint a = 2;
  CLU_CHECK(clSetKernelArg(K_pre, 1, sizeof(cl_uint), &(cl_uint){1}));
  CLU_CHECK(clSetKernelArg(K_pre, 2, local_bytes(n), NULL));

  cr_assert_eq(fm_arm(n, scope), 0, "the library to fail is not loaded");
  k = clCreateKernel(P, "scale", &err);
  oom_or_ok(err, "clCreateKernel", n);
  all |= err;
  b = clCreateBuffer(E.ctx, CL_MEM_READ_WRITE, sizeof host_in, NULL, &err);
  oom_or_ok(err, "clCreateBuffer", n);
  all |= err;
  if (b != NULL) {
    err = clEnqueueWriteBuffer(E.q, b, CL_FALSE, 0, sizeof host_in, host_in, 0,
                               NULL, &ev[EV_WRITE]);
    oom_or_ok(err, "clEnqueueWriteBuffer", n);
    all |= err;
    CLU_CHECK(clSetKernelArg(K_pre, 0, sizeof b, &b));
    err = clEnqueueNDRangeKernel(E.q, K_pre, 1, NULL, &g, &l_pre, 0, NULL,
                                 &ev[EV_PRE]);
    oom_or_ok(err, "clEnqueueNDRangeKernel (prebuilt)", n);
    all |= err;
    if (k != NULL) {
      CLU_CHECK(clSetKernelArg(k, 0, sizeof b, &b));
      CLU_CHECK(clSetKernelArg(k, 1, sizeof a, &a));
      CLU_CHECK(clSetKernelArg(k, 2, l_new * sizeof(cl_uint), NULL));
      err = clEnqueueNDRangeKernel(E.q, k, 1, NULL, &g, &l_new, 0, NULL,
                                   &ev[EV_NEW]);
      oom_or_ok(err, "clEnqueueNDRangeKernel (new kernel)", n);
      all |= err;
    }
    CLU_CHECK(clSetKernelArg(K_wide, 0, sizeof b, &b));
    err = clEnqueueNDRangeKernel(E.q, K_wide, 1, NULL, &g, &l_wide, 0, NULL,
                                 &ev[EV_WIDE]);
    oom_or_ok(err, "clEnqueueNDRangeKernel (wide)", n);
    all |= err;
    CLU_CHECK(clSetKernelArg(K_img, 1, sizeof b, &b));
    err = clEnqueueNDRangeKernel(E.q, K_img, 1, NULL, &g, &l_wide, 0, NULL,
                                 &ev[EV_IMG]);
    oom_or_ok(err, "clEnqueueNDRangeKernel (image)", n);
    all |= err;
    memset(host_out, 0, sizeof host_out);
    err = clEnqueueReadBuffer(E.q, b, CL_FALSE, 0, sizeof host_out, host_out,
                              0, NULL, &ev[EV_READ]);
    oom_or_ok(err, "clEnqueueReadBuffer", n);
    all |= err;
  }
  guard("clFinish");
  err = clFinish(E.q);
  unguard();
  oom_or_ok(err, "clFinish", n);
  all |= err;
  unsigned long counted = fm_disarm();
  uintptr_t off = 0;
  const char *lib = fm_injected_at(&off);

  int complete = 1;
  for (int i = 0; i < EV_COUNT; i++) {
    if (ev[i] == NULL)
      continue;
    cl_int s = status_of(ev[i]);
    cr_assert(s == CL_COMPLETE || s < 0,
              "n=%lu: %s ended with status %d after clFinish", n, ev_name[i],
              s);
    if (s != CL_COMPLETE)
      complete = 0;
    clReleaseEvent(ev[i]);
  }
  if (b != NULL && all == CL_SUCCESS && complete && k != NULL)
    for (size_t i = 0; i < N; i++)
      cr_assert_eq(host_out[i], expect(host_in[i]),
                   "n=%lu: every command succeeded but out[%zu] = %u, want "
                   "%u (failure injected at %s+0x%zx)",
                   n, i, host_out[i], expect(host_in[i]), lib ? lib : "-",
                   (size_t)off);
  if (lib != NULL && (all != CL_SUCCESS || !complete))
    cr_log_info("n=%lu of %lu: allocation failed at %s+0x%zx: error %d%s", n,
                counted, lib, (size_t)off, all,
                complete ? "" : ", a command failed");
  else if (lib != NULL)
    cr_log_info("n=%lu of %lu: allocation failed at %s+0x%zx: recovered", n,
                counted, lib, (size_t)off);
  if (b != NULL)
    clReleaseMemObject(b);

  /* The new kernel object's specialised function lands, and its launches
   * take it (a lost build would leave them on the generic one for good). */
  if (k != NULL) {
    check_queue(k, l_new, n);
    wait_builds(n);
    tt_cl_stats s0 = stats();
    check_queue(k, l_new, n);
    tt_cl_stats s1 = stats();
    cr_assert_eq(s1.generic, s0.generic,
                 "n=%lu: the new kernel's launch at local size %zu still runs "
                 "the generic function after its background build", n, l_new);
    clReleaseKernel(k);
  }
  check_queue(K_pre, l_pre, n);
  check_team(team, n);
  return lib != NULL;
}

static void sweep(unsigned scope, const char *what) {
  if (!E.is_teams)
    cr_skip_test("the sweep targets the teams driver (device: %s)", E.name);
#ifdef TT_NO_FAILMALLOC
  cr_skip_test("sanitizer build: ASan and TSan own malloc, and memory from "
               "glibc's allocator, which the interposer hands out, would "
               "reach their free");
#endif
  size_t team = tt_team_size();
  unsigned long n = 1;
  while (sweep_step(n, scope, team)) {
    cr_assert_lt(n, MAX_N, "%s: still failing allocations at n=%lu", what,
                 n);
    n++;
  }
  /* n = 1 must have failed one: else the sequence never reached the
   * library and the sweep proved nothing. */
  cr_assert_gt(n, 1, "%s: the sequence made no allocation there", what);
  cr_log_info("%s: %lu allocations in the sequence, each failed once", what,
              n - 1);
  fprintf(stderr, "test-pocl-alloc: %s: %lu allocations, each failed once\n",
          what, n - 1);
}

Test(pocl_alloc, driver, .init = setup, .fini = teardown, .timeout = 600) {
  sweep(FM_DRIVER, "the driver (libpocl-devices-pthread.so)");
}

Test(pocl_alloc, team, .init = setup, .fini = teardown, .timeout = 600) {
  sweep(FM_TEAMS, "the team (libteams.so)");
}
