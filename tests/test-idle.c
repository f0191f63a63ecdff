/* The idle rule's placement clause (launcher/idle.c, "Yielding"): a worker
 * does not spin on the CPU its holder forked the running region from: it
 * moves off that CPU when its mask has another, else it sleeps.
 *
 * The caller and its worker are put on one CPU, as the scheduler may put
 * them when the worker is woken next to another process's busy thread: a
 * worker that spins after its chunk keeps the holder, which still has to
 * close the region, off that CPU until the next time slice
 * (docs/measurements.md).  With a spin time of
 * 100 ms, a worker that spins would never sleep during these regions; the
 * rule has it sleep instead, every chunk still runs once, and a worker on
 * another CPU keeps spinning.  Nothing here is timed against a limit. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "team-state.h"
#include "team-util.h"

/* The k-th CPU (from 0) of this process's mask, or -1. */
static int cpu_of_mask(int k) {
  cpu_set_t m;
  if (sched_getaffinity(0, sizeof m, &m) != 0)
    return -1;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &m) && k-- == 0)
      return c;
  return -1;
}

static void pin(pid_t tid, int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  cr_assert_eq(sched_setaffinity(tid, sizeof one, &one), 0, "cannot pin %d to CPU %d",
               (int)tid, cpu);
}

/* A team of 2 whose worker spins 100 ms after a chunk; its worker pinned to
 * CPU worker_cpu (then, with widen >= 0, allowed CPU widen too, where it is
 * not yet) and the caller to CPU caller_cpu.  Runs 2000 regions of 2
 * chunks, each chunk once, the caller's waiting (and yielding) until the
 * worker's began, so that each region needs its worker (a holder done
 * first would run the worker's chunk itself, docs/protocol.md item 10);
 * returns how many times the worker slept beside the holder meanwhile. */
static pid_t worker_tid;
static cpu_set_t widened;

/* count_chunk_together; chunk 1, on the worker, widens its own mask. */
static void widen_chunk(void *p, size_t c) {
  if (c == 1)
    sched_setaffinity(0, sizeof widened, &widened);
  count_chunk_together(p, c);
}

static uint64_t regions_with(int caller_cpu, int worker_cpu, int widen) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  setenv("TEAMS_SPIN_US", "100000", 1);
  setenv("TEAMS_RUN", "team", 1);
  setenv("TEAMS_IDLE", "sleep", 1);
  cr_assert_eq(tt_team_start(), 0);
  pid_t w = thread_tid("teams-w1"); /* named once it runs */
  for (int i = 0; w < 0 && i < 2000; i++) {
    sleep_ms(1);
    w = thread_tid("teams-w1");
  }
  cr_assert_geq(w, 0, "no worker thread");
  pin(w, worker_cpu);
  pin(0, caller_cpu);
  worker_tid = w;
  if (widen >= 0) { /* from inside its chunk, so that it is on worker_cpu */
    CPU_ZERO(&widened);
    CPU_SET(worker_cpu, &widened);
    CPU_SET(widen, &widened);
    count_ctx *x = new_ctx();
    reset(x, 2);
    cr_assert_eq(tt_foreach_chunk(widen_chunk, x, 2, 2), 0);
    expect_once(x, 2, 2);
    free(x);
  }
  count_ctx *x = new_ctx();
  uint64_t before = tt_atomic_load_relaxed(&tt__sleeps_beside_holder);
  for (int i = 0; i < 2000; i++) {
    reset(x, 2);
    cr_assert_eq(tt_foreach_chunk(count_chunk_together, x, 2, 2), 0);
    expect_once(x, 2, 2);
  }
  free(x);
  return tt_atomic_load_relaxed(&tt__sleeps_beside_holder) - before;
}

Test(idle, a_worker_on_its_holders_cpu_sleeps_instead_of_spinning) {
  int c = cpu_of_mask(0);
  cr_assert_geq(c, 0);
  uint64_t slept = regions_with(c, c, -1);
  cr_assert_gt(slept, 0, "the worker spun beside its holder in 2000 regions");
}

Test(idle, a_worker_on_another_cpu_spins) {
  int a = cpu_of_mask(0), b = cpu_of_mask(1);
  if (b < 0)
    cr_skip_test("one CPU: no other CPU to put the worker on");
  uint64_t slept = regions_with(a, b, -1);
  cr_assert_eq(slept, 0, "the worker slept beside its holder %llu times on another CPU",
               (unsigned long long)slept);
}

Test(idle, a_worker_on_its_holders_cpu_moves_off_it_when_its_mask_allows) {
  int a = cpu_of_mask(0), b = cpu_of_mask(1);
  if (b < 0)
    cr_skip_test("one CPU: no other CPU to move the worker to");
  uint64_t moves = tt_atomic_load_relaxed(&tt__moves_off_holder);
  regions_with(a, a, b);
  cr_assert_gt(tt_atomic_load_relaxed(&tt__moves_off_holder) - moves, 0,
               "the worker never moved off its holder's CPU");
  /* and its mask is its own again: both CPUs */
  cpu_set_t m;
  cr_assert_eq(sched_getaffinity(worker_tid, sizeof m, &m), 0);
  cr_assert(CPU_ISSET(a, &m) && CPU_ISSET(b, &m) && CPU_COUNT(&m) == 2,
            "the worker's mask was not given back");
}
