/* Stress test of the driver's queue protocol (not a benchmark): host threads
 * enqueue commands on their own queues, in-order and out-of-order, each
 * command depending on random earlier commands of any thread and on user
 * events that another thread sets later; they flush, finish and wait at
 * random.  Fixed seeds.  Checks that every command ran exactly once and
 * never before a command it depends on.
 *
 * Run with the default grace period, with a zero grace (the progress thread
 * takes everything at once: most hand-offs, most races between waiters and
 * the progress thread), and with eager submit. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clu.h"

enum { THREADS = 4, PER_THREAD = 500, TOTAL = THREADS * PER_THREAD, USER = 16 };

/* mark: the command's slot goes 0 -> 1 (an atomic, so a second run shows
 * as 2); each dependency's slot must already be 1. */
static const char *src =
    "kernel void mark(volatile global uint *slots, global uint *bad,\n"
    "                 uint self, uint dep0, uint dep1) {\n"
    "  if (get_global_id(0) != 0) return;\n"
    "  if (dep0 != 0xffffffffu && slots[dep0] != 1) atomic_inc(bad);\n"
    "  if (dep1 != 0xffffffffu && slots[dep1] != 1) atomic_inc(bad);\n"
    "  atomic_inc(&slots[self]);\n"
    "}\n";

static clu_env E;
static cl_program P;
static cl_mem slots, bad;
static cl_event events[TOTAL];    /* written once by the owner thread */
static _Atomic int published[TOTAL];
static cl_event user[USER];

static void setup(void) {
  clu_open(&E, 0);
  P = clu_build_src(&E, src);
  slots = clu_buffer(&E, CL_MEM_READ_WRITE, TOTAL * 4, NULL);
  bad = clu_buffer(&E, CL_MEM_READ_WRITE, 4, NULL);
  cl_uint z = 0;
  CLU_CHECK(clEnqueueFillBuffer(E.q, slots, &z, 4, 0, TOTAL * 4, 0, NULL, NULL));
  CLU_CHECK(clEnqueueFillBuffer(E.q, bad, &z, 4, 0, 4, 0, NULL, NULL));
  CLU_CHECK(clFinish(E.q));
  for (int u = 0; u < USER; u++) {
    cl_int err;
    user[u] = clCreateUserEvent(E.ctx, &err);
    CLU_CHECK(err);
  }
}

static unsigned long long rnd(unsigned long long *s) { return clu_rand(s); }

struct worker {
  int id;
  int ok;
};

static void *host(void *arg) {
  struct worker *w = arg;
  unsigned long long s = 0x9E3779B97F4A7C15ULL * (unsigned)(w->id + 1);
  cl_command_queue q =
      clu_queue(&E, w->id % 2 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
  cl_int err;
  cl_kernel k = clCreateKernel(P, "mark", &err);
  if (err)
    return NULL;
  clSetKernelArg(k, 0, sizeof slots, &slots);
  clSetKernelArg(k, 1, sizeof bad, &bad);
  for (int i = 0; i < PER_THREAD; i++) {
    cl_uint self = (cl_uint)(w->id * PER_THREAD + i);
    cl_event wait[3];
    cl_uint nwait = 0;
    cl_uint dep[2] = {0xffffffffu, 0xffffffffu};
    for (int d = 0; d < 2; d++) {
      cl_uint cand = (cl_uint)(rnd(&s) % TOTAL);
      if (cand != self && atomic_load(&published[cand]) &&
          (nwait == 0 || events[cand] != wait[0])) {
        dep[d] = cand;
        wait[nwait++] = events[cand];
      }
    }
    if (rnd(&s) % 8 == 0)
      wait[nwait++] = user[rnd(&s) % USER];
    clSetKernelArg(k, 2, sizeof self, &self);
    clSetKernelArg(k, 3, sizeof dep[0], &dep[0]);
    clSetKernelArg(k, 4, sizeof dep[1], &dep[1]);
    size_t g = 64, l = 16;
    if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, nwait,
                               nwait ? wait : NULL, &events[self]))
      return NULL;
    atomic_store(&published[self], 1);
    switch (rnd(&s) % 16) {
    case 0:
      clFlush(q);
      break;
    case 1:
      /* Only waits that cannot depend on unset user events. */
      break;
    case 2:
      if (dep[0] != 0xffffffffu && nwait == 1)
        clWaitForEvents(1, &events[dep[0]]);
      break;
    default:
      break;
    }
  }
  clFlush(q);
  clReleaseKernel(k);
  w->ok = 1;
  /* The queue is finished by the main thread once the user events are
   * set: keep it alive until then (released at process exit). */
  return q;
}

static void *set_users(void *arg) {
  (void)arg;
  for (int u = 0; u < USER; u++) {
    struct timespec t = {0, 2000000}; /* 2 ms */
    nanosleep(&t, NULL);
    clSetUserEventStatus(user[u], CL_COMPLETE);
  }
  return NULL;
}

static void stress(void) {
  pthread_t th[THREADS], us;
  struct worker w[THREADS];
  pthread_create(&us, NULL, set_users, NULL);
  for (int i = 0; i < THREADS; i++) {
    w[i].id = i;
    w[i].ok = 0;
    pthread_create(&th[i], NULL, host, &w[i]);
  }
  cl_command_queue qs[THREADS];
  for (int i = 0; i < THREADS; i++) {
    void *q;
    pthread_join(th[i], &q);
    qs[i] = q;
    cr_assert(w[i].ok, "host thread %d failed to enqueue", i);
  }
  pthread_join(us, NULL);
  for (int i = 0; i < THREADS; i++)
    CLU_CHECK(clFinish(qs[i]));
  CLU_CHECK(clWaitForEvents(TOTAL, events));
  cl_uint *v = malloc(TOTAL * 4), nbad = 1;
  CLU_CHECK(clEnqueueReadBuffer(E.q, slots, CL_TRUE, 0, TOTAL * 4, v, 0, NULL,
                                NULL));
  CLU_CHECK(clEnqueueReadBuffer(E.q, bad, CL_TRUE, 0, 4, &nbad, 0, NULL, NULL));
  for (int i = 0; i < TOTAL; i++)
    cr_assert_eq(v[i], 1, "command %d ran %u times", i, v[i]);
  cr_assert_eq(nbad, 0, "%u commands ran before a dependency", nbad);
  free(v);
}

static void env_default(void) { setup(); }
static void env_grace0(void) {
  setenv("POCL_TEAMS0_PARAMETERS", "grace_us=0", 1);
  setup();
}
static void env_eager(void) {
  setenv("POCL_TEAMS0_PARAMETERS", "submit=eager", 1);
  setup();
}

Test(pocl_stress, lazy_default_grace, .init = env_default, .timeout = 300) {
  stress();
}
Test(pocl_stress, lazy_zero_grace, .init = env_grace0, .timeout = 300) {
  stress();
}
Test(pocl_stress, eager_submit, .init = env_eager, .timeout = 300) {
  stress();
}
