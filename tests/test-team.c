/* Tests of the team: tt_foreach_chunk's contract, the busy rule, the idle
 * rule, the sentinel, lifecycle.  Criterion runs every test in a process of
 * its own, so a test may set TEAMS_* before the team starts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <dirent.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "teams/team.h"

#include "team-util.h"

/* The team's protocol and its idle rules are what these tests watch, so
 * their regions run on the team's workers (TEAMS_RUN=team): the way's
 * choice (launcher/way.c, tests/test-way.c) would run most of them, being
 * cheap, on the caller alone.  Set before Criterion forks the tests. */
__attribute__((constructor)) static void team_way(void) {
  setenv("TEAMS_RUN", "team", 0);
}

Test(team, every_chunk_once) {
  count_ctx *x = new_ctx();
  size_t team = tt_team_size();
  cr_assert_geq(team, 1);
  size_t ms[] = {1, 2, 3, 7, 64, 1000, MAXC};
  size_t ps[] = {1, 2, 3, 4, 16, 1000};
  for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
    for (size_t j = 0; j < sizeof ps / sizeof *ps; j++)
      for (int rep = 0; rep < 20; rep++) {
        reset(x, ms[i]);
        cr_assert_eq(tt_foreach_chunk(count_chunk, x, ms[i], ps[j]), 0);
        expect_once(x, ms[i], ps[j]);
      }
  free(x);
}

/* Strictly: the way's choice may run a cheap region on the caller alone
 * (launcher/way.c; tests/test-way.c tests that). */
/* Every participant comes in time (chunk 0, the holder's, waits until every
 * chunk began): chunk c runs on participant c. */
Test(team, static_chunk_on_its_participant) {
  setenv("TEAMS_NUM_THREADS", "4", 1);
  setenv("TEAMS_RUN", "team", 1);
  count_ctx *x = new_ctx();
  cr_assert_eq(tt_team_size(), 4);
  for (size_t p = 2; p <= 4; p++)
    for (int rep = 0; rep < 200; rep++) {
      reset(x, p);
      cr_assert_eq(tt_foreach_chunk(count_chunk_together, x, p, p), 0);
      expect_once(x, p, p);
      for (size_t c = 0; c < p; c++)
        cr_assert_eq(atomic_load(&x->part[c]), (int)c, "chunk %zu on participant %d",
                     c, atomic_load(&x->part[c]));
      cr_assert(pthread_equal(x->thread[0], pthread_self()),
                "participant 0 is the caller");
      for (size_t c = 1; c < p; c++)
        cr_assert(!pthread_equal(x->thread[c], pthread_self()));
    }
  free(x);
}

/* A participant that is not running -- here worker 1, held in a signal
 * handler -- holds no static region: the holder runs its chunk after its
 * own, exactly once (docs/protocol.md item 10).  Without the claim every
 * region here would wait until the worker is let go, and the test time out.
 * Let go, the worker takes its own chunk again; the chunks it finds claimed
 * meanwhile it never runs. */
static _Atomic int held, let_go;
static void hold_here(int sig) {
  (void)sig;
  atomic_store(&held, 1);
  while (!atomic_load(&let_go))
    sched_yield();
}

Test(team, late_participant_chunk_runs_once, .timeout = 60) {
  const char *tree = getenv("TEAMS_TREE_MIN");
  if (tree && atoi(tree) <= 2)
    cr_skip_test("regions of 2 go along the tree, whose static regions wait "
                 "for every participant");
  setenv("TEAMS_NUM_THREADS", "2", 1);
  count_ctx *x = new_ctx();
  cr_assert_eq(tt_team_size(), 2);
  reset(x, 2);
  cr_assert_eq(tt_foreach_chunk(count_chunk_together, x, 2, 2), 0);
  pid_t w1 = thread_tid("teams-w1");
  cr_assert_gt(w1, 0, "no worker thread teams-w1");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = hold_here;
  cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
  cr_assert_eq(syscall(SYS_tgkill, getpid(), w1, SIGUSR1), 0);
  while (!atomic_load(&held))
    sched_yield();
  for (int rep = 0; rep < 2000; rep++) {
    reset(x, 2);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, 2, 2), 0);
    expect_once(x, 2, 2);
    cr_assert_eq(atomic_load(&x->part[1]), 0, "region %d: chunk 1 on participant %d "
                 "while its worker is held", rep, atomic_load(&x->part[1]));
  }
  atomic_store(&let_go, 1);
  for (int rep = 0; rep < 200; rep++) {
    reset(x, 2);
    cr_assert_eq(tt_foreach_chunk(count_chunk_together, x, 2, 2), 0);
    expect_once(x, 2, 2);
    cr_assert_eq(atomic_load(&x->part[1]), 1, "region %d: chunk 1 on participant %d "
                 "once its worker runs", rep, atomic_load(&x->part[1]));
  }
  free(x);
}

Test(team, p_clamped_to_team) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  count_ctx *x = new_ctx();
  /* m == p == 8 on a team of 2: clamped, every chunk still once. */
  reset(x, 8);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 8, 8), 0);
  expect_once(x, 8, 8);
  for (size_t c = 0; c < 8; c++)
    cr_assert(atomic_load(&x->part[c]) == 0 || atomic_load(&x->part[c]) == 1);
  free(x);
}

Test(team, bad_input_leaves_team_usable) {
  count_ctx *x = new_ctx();
  cr_assert_eq(tt_foreach_chunk(NULL, x, 4, 2), TT_EINVAL);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 4, 0), TT_EINVAL);
  cr_assert_str_eq(tt_strerror(TT_EINVAL), "invalid argument");
  cr_assert_str_eq(tt_strerror(0), "success");
  cr_assert_str_eq(tt_strerror(-12345), "unknown error");
  reset(x, 4);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 0, 2), 0); /* no-op */
  for (size_t c = 0; c < 4; c++)
    cr_assert_eq(atomic_load(&x->runs[c]), 0);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 4, 2), 0);
  expect_once(x, 4, 2);
  free(x);
}

Test(team, serial_cases_run_on_caller) {
  count_ctx *x = new_ctx();
  size_t cases[][2] = {{1, 4}, {5, 1}};
  for (int i = 0; i < 2; i++) {
    reset(x, cases[i][0]);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, cases[i][0], cases[i][1]), 0);
    expect_once(x, cases[i][0], cases[i][1]);
    for (size_t c = 0; c < cases[i][0]; c++) {
      cr_assert(pthread_equal(x->thread[c], pthread_self()));
      cr_assert_eq(atomic_load(&x->part[c]), 0);
    }
  }
  cr_assert_eq(tt_participant(), -1, "outside any chunk");
  free(x);
}

/* Nesting: a loop started inside a chunk runs serially on that chunk's
 * thread. */
typedef struct nest_ctx {
  count_ctx *inner[8];
  _Atomic int bad;
} nest_ctx;

static void nest_outer(void *p, size_t c) {
  nest_ctx *n = p;
  int me = tt_participant();
  cr_assert_eq(tt_foreach_chunk(count_chunk, n->inner[c], 16, 4), 0);
  for (size_t i = 0; i < 16; i++)
    if (atomic_load(&n->inner[c]->runs[i]) != 1 ||
        !pthread_equal(n->inner[c]->thread[i], pthread_self()))
      atomic_fetch_add(&n->bad, 1);
  if (tt_participant() != me)
    atomic_fetch_add(&n->bad, 1);
  cr_assert_eq(tt_team_shutdown(), TT_EBUSY, "no shutdown from inside a chunk");
}

Test(team, nested_runs_serially) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  nest_ctx n = {0};
  for (int i = 0; i < 8; i++)
    n.inner[i] = new_ctx();
  for (int rep = 0; rep < 50; rep++) {
    for (int i = 0; i < 8; i++)
      reset(n.inner[i], 16);
    cr_assert_eq(tt_foreach_chunk(nest_outer, &n, 8, 2), 0);
    cr_assert_eq(atomic_load(&n.bad), 0);
  }
  for (int i = 0; i < 8; i++)
    free(n.inner[i]);
}

/* The busy rule: while one thread holds the team, another's loop runs
 * serially on itself (default), or waits for the team (TEAMS_BUSY=wait). */
typedef struct hold_ctx {
  _Atomic int entered;
  _Atomic int release;
} hold_ctx;

static void hold_chunk(void *p, size_t c) {
  hold_ctx *h = p;
  atomic_fetch_add(&h->entered, 1);
  while (!atomic_load(&h->release))
    sched_yield();
}

static void *holder_thread(void *p) {
  cr_assert_eq(tt_foreach_chunk(hold_chunk, p, 2, 2), 0);
  return NULL;
}

Test(team, busy_team_runs_serially) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  tt_team_start();
  hold_ctx h = {0};
  pthread_t t;
  pthread_create(&t, NULL, holder_thread, &h);
  while (atomic_load(&h.entered) < 2)
    sched_yield();
  count_ctx *x = new_ctx();
  reset(x, 32);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 32, 2), 0);
  expect_once(x, 32, 2);
  for (size_t c = 0; c < 32; c++)
    cr_assert(pthread_equal(x->thread[c], pthread_self()), "serial on the caller");
  atomic_store(&h.release, 1);
  pthread_join(t, NULL);
  free(x);
}

typedef struct waiter_arg {
  count_ctx *x;
  _Atomic int done;
} waiter_arg;

static void *waiter_thread(void *p) {
  waiter_arg *a = p;
  /* each participant comes in time: chunk 1 on participant 1, strictly */
  cr_assert_eq(tt_foreach_chunk(count_chunk_together, a->x, 2, 2), 0);
  atomic_store(&a->done, 1);
  return NULL;
}

Test(team, busy_wait_policy_waits_for_the_team) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  setenv("TEAMS_RUN", "team", 1); /* chunk 1 on participant 1, strictly */
  setenv("TEAMS_BUSY", "wait", 1);
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.busy_wait, 1);
  hold_ctx h = {0};
  pthread_t t, u;
  pthread_create(&t, NULL, holder_thread, &h);
  while (atomic_load(&h.entered) < 2)
    sched_yield();
  waiter_arg a = {.x = new_ctx()};
  reset(a.x, 2);
  pthread_create(&u, NULL, waiter_thread, &a);
  sleep_ms(50);
  cr_assert_eq(atomic_load(&a.done), 0, "waits while the team is held");
  cr_assert_eq(atomic_load(&a.x->runs[0]), 0);
  atomic_store(&h.release, 1);
  pthread_join(t, NULL);
  pthread_join(u, NULL);
  expect_once(a.x, 2, 2);
  /* It got the team: static, chunk 1 on a worker. */
  cr_assert_eq(atomic_load(&a.x->part[1]), 1);
  free(a.x);
}

/* Inside an OpenMP parallel region (libgomp here), loops run serially. */
Test(team, openmp_parallel_region_runs_serially) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  /* Static, not freed: libgomp is not instrumented, so a sanitizer cannot
   * see its join and would take a free after the region for a race. */
  static count_ctx ctx0, ctx1;
  count_ctx *xs[2] = {&ctx0, &ctx1};
  _Atomic int bad = 0;
#pragma omp parallel num_threads(2)
  {
    count_ctx *x = xs[omp_get_thread_num()];
    reset(x, 16);
    if (tt_foreach_chunk(count_chunk, x, 16, 2) != 0)
      atomic_fetch_add(&bad, 1);
    for (size_t c = 0; c < 16; c++)
      if (atomic_load(&x->runs[c]) != 1 || !pthread_equal(x->thread[c], pthread_self()))
        atomic_fetch_add(&bad, 1);
  }
  cr_assert_eq(atomic_load(&bad), 0);
}

Test(team, shutdown_restart_and_info) {
  setenv("TEAMS_NUM_THREADS", "3", 1);
  setenv("TEAMS_SPIN_US", "20", 1);
  count_ctx *x = new_ctx();
  for (int round = 0; round < 50; round++) {
    reset(x, 100);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, 100, 3), 0);
    expect_once(x, 100, 3);
    tt_team_info info;
    cr_assert_eq(tt_team_get_info(&info), 0);
    cr_assert_eq(info.size, 3);
    cr_assert_eq(info.requested, 3);
    cr_assert_float_eq(info.spin_us, 20.0, 1e-9);
    cr_assert_null(info.degraded);
    cr_assert_eq(tt_team_shutdown(), 0);
    cr_assert_eq(tt_team_shutdown(), 0, "shutdown of a stopped team is a no-op");
  }
  cr_assert_eq(tt_team_get_info(NULL), TT_EINVAL);
  free(x);
}

Test(team, fork_child_starts_fresh) {
  setenv("TEAMS_NUM_THREADS", "2", 1);
  setenv("TEAMS_RUN", "team", 1); /* chunk 1 on participant 1, strictly */
  count_ctx *x = new_ctx();
  reset(x, 64);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, 64, 2), 0);
  pid_t pid = fork();
  cr_assert_neq(pid, -1);
  if (pid == 0) {
    int ok = 1;
#if defined(__SANITIZE_ADDRESS__)
    /* GCC 12's ASan allocator is not fork-safe: a lock another thread of
     * the parent (Criterion's) held at fork() stays held, and the child's
     * new worker threads deadlocked in malloc in CI.  Under ASan the child
     * checks its launches on a team of one (serial); the plain and TSan
     * builds check that it runs in parallel again. */
    setenv("TEAMS_NUM_THREADS", "1", 1);
    const int parallel_again = 0;
#else
    const int parallel_again = 1;
#endif
    for (int rep = 0; rep < 100 && ok; rep++) {
      reset(x, 64);
      ok = tt_foreach_chunk(count_chunk, x, 64, 2) == 0;
      for (size_t c = 0; c < 64; c++)
        ok = ok && atomic_load(&x->runs[c]) == 1;
      reset(x, 2); /* in parallel, chunk 1 comes in time: participant 1's */
      ok = ok && tt_foreach_chunk(parallel_again ? count_chunk_together : count_chunk,
                                  x, 2, 2) == 0;
      ok = ok && atomic_load(&x->part[1]) == (parallel_again ? 1 : 0);
    }
    _exit(ok ? 0 : 1);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  free(x);
}

/* ---- the idle rule (ThreadTeams.jl PR #68) ----------------------------------- */


/* Sum of utime+stime (clock ticks) and the state letter of the thread named
 * name in this process; 0, or -1 when there is none. */
static int thread_stat(const char *name, long *ticks, char *state) {
  pid_t tid = thread_tid(name);
  if (tid < 0)
    return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p)
    return -1;
  unsigned long ut = 0, st = 0;
  char s = '?';
  /* fields after comm: state(3) ... utime(14) stime(15) */
  if (sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &s,
             &ut, &st) != 3)
    return -1;
  *ticks = (long)(ut + st);
  *state = s;
  return 0;
}

static void nop_chunk(void *p, size_t c) {}

/* A static region on n participants in which each runs its own chunk (the
 * caller's waits for the others): every worker has run, and named itself. */
static void run_every_worker(size_t n) {
  count_ctx *x = new_ctx();
  reset(x, n);
  cr_assert_eq(tt_foreach_chunk(count_chunk_together, x, n, n), 0);
  free(x);
}

/* A worker that back-to-back loops do not use sleeps after its spin time,
 * however busy the team is; the worker they use keeps up with them. */
Test(team, unused_worker_sleeps_while_loops_run) {
  setenv("TEAMS_NUM_THREADS", "3", 1);
  setenv("TEAMS_SPIN_US", "1000", 1);
  run_every_worker(3);
  long t0, t1;
  char s;
  cr_assert_eq(thread_stat("teams-w2", &t0, &s), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int asleep_seen = 0;
  for (long i = 0;; i++) {
    tt_foreach_chunk(nop_chunk, NULL, 2, 2); /* uses worker 1 only */
    if ((i & 1023) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &b);
      double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
      if (el > 0.2) {
        cr_assert_eq(thread_stat("teams-w2", &t1, &s), 0);
        if (s == 'S')
          asleep_seen++;
      }
      if (el > 0.6)
        break;
    }
  }
  /* Worker 2 sleeps: in futex wait every time we looked, and it used
   * (almost) no CPU: a spinning worker would have used most of 0.6 s. */
  cr_assert_gt(asleep_seen, 0);
  cr_assert_eq(thread_stat("teams-w2", &t1, &s), 0);
  long hz = sysconf(_SC_CLK_TCK);
  cr_assert_lt(t1 - t0, hz / 10, "unused worker used %ld ticks", t1 - t0);
}

/* Sentinel mode on an overcommitted machine: a team of CPUs + 1 whose loops
 * use CPUs participants.  The worker they leave out must not become a
 * spinning sentinel (it would take a CPU from the loops): it sleeps, as in
 * sleep mode. */
Test(team, sentinel_steps_aside_when_overcommitted) {
  cpu_set_t set;
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
  int cpus = CPU_COUNT(&set);
  if (cpus + 1 > 64)
    cr_skip_test("%d CPUs: a team of CPUs + 1 is too large for this test", cpus);
  char n[32], unused[32];
  snprintf(n, sizeof n, "%d", cpus + 1);
  snprintf(unused, sizeof unused, "teams-w%d", cpus);
  setenv("TEAMS_NUM_THREADS", n, 1);
  setenv("TEAMS_SPIN_US", "100", 1);
  setenv("TEAMS_IDLE", "sentinel", 1);
  size_t team = (size_t)cpus + 1, p = (size_t)cpus;
  cr_assert_eq(tt_team_size(), team);
  run_every_worker(team);
  long t0, t1;
  char s;
  cr_assert_eq(thread_stat(unused, &t0, &s), 0);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int asleep_seen = 0;
  char states[64]; /* the unused worker's states, as sampled */
  int ns = 0;
  long i = 0;
  for (;; i++) {
    tt_foreach_chunk(nop_chunk, NULL, p, p); /* all but the last worker */
    if ((i & 1023) == 0) {
      clock_gettime(CLOCK_MONOTONIC, &b);
      double el = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
      if (el > 0.2) {
        cr_assert_eq(thread_stat(unused, &t1, &s), 0);
        if (s == 'S')
          asleep_seen++;
        if (ns < (int)sizeof states - 1)
          states[ns++] = s;
      }
      if (el > 0.6)
        break;
    }
  }
  states[ns] = 0;
  cr_assert_gt(asleep_seen, 0, "the left-out worker never slept: %s (%ld regions)",
               states, i + 1);
  cr_assert_eq(thread_stat(unused, &t1, &s), 0);
  long hz = sysconf(_SC_CLK_TCK);
  cr_assert_lt(t1 - t0, hz / 10, "left-out worker used %ld ticks", t1 - t0);
}

/* Sentinel mode: one idle worker never sleeps, the others do. */
Test(team, sentinel_keeps_exactly_one_worker_awake) {
  setenv("TEAMS_NUM_THREADS", "3", 1);
  setenv("TEAMS_SPIN_US", "100", 1);
  setenv("TEAMS_IDLE", "sentinel", 1);
  tt_team_info info;
  cr_assert_eq(tt_team_get_info(&info), 0);
  cr_assert_eq(info.sentinel, 1);
  count_ctx *x = new_ctx();
  for (int round = 0; round < 20; round++) {
    sleep_ms(5); /* idle gap: one worker becomes the sentinel */
    reset(x, 3);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, 3, 3), 0);
    expect_once(x, 3, 3);
    reset(x, 50);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, 50, 3), 0);
    expect_once(x, 50, 3);
  }
  /* Windows of 20 looks, 2 ms apart, until one shows the sentinel.  The role
   * is best effort: two workers that reach their deadlines together on an
   * overcommitted team (3 on 2 CPUs here, slowed down under TSan) may both
   * see it overcommitted and sleep, leaving no sentinel until a region wakes
   * them; so every window after the first starts with a region. */
  int running[3], sleeping[3], sentinel = 1, other = 2;
  for (int window = 0; window < 20; window++) {
    if (window > 0) {
      reset(x, 3);
      cr_assert_eq(tt_foreach_chunk(count_chunk, x, 3, 3), 0);
      expect_once(x, 3, 3);
    }
    sleep_ms(50);
    memset(running, 0, sizeof running);
    memset(sleeping, 0, sizeof sleeping);
    for (int k = 0; k < 20; k++) {
      for (int w = 1; w <= 2; w++) {
        char name[16], s;
        long t;
        snprintf(name, sizeof name, "teams-w%d", w);
        cr_assert_eq(thread_stat(name, &t, &s), 0);
        if (s == 'S')
          sleeping[w]++;
        else if (s == 'R')
          running[w]++;
      }
      sleep_ms(2);
    }
    sentinel = sleeping[1] == 0 ? 1 : 2, other = 3 - sentinel;
    if (sleeping[sentinel] == 0)
      break;
  }
  /* Exactly one never sleeps; the other always does. */
  cr_assert_eq(sleeping[sentinel], 0, "the sentinel never sleeps");
  cr_assert_gt(running[sentinel], 0);
  cr_assert_eq(sleeping[other], 20, "the other worker sleeps");
  free(x);
}

/* TEAMS_PIN pins the thread that starts the team as participant 0; shutdown
 * from that thread gives it its mask back, so a restart sees every CPU. */
Test(team, pinned_restart_sees_the_machine) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t before, after;
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  setenv("TEAMS_PIN", "cores", 1);
  for (int round = 0; round < 3; round++) {
    size_t n = tt_team_size();
    cr_assert_eq(n, (size_t)CPU_COUNT(&before), "round %d: team of %zu", round, n);
    cr_assert_leq((long)n, cpus);
    count_ctx *x = new_ctx();
    reset(x, n);
    cr_assert_eq(tt_foreach_chunk(count_chunk, x, n, n), 0);
    expect_once(x, n, n);
    free(x);
    cr_assert_eq(tt_team_shutdown(), 0);
    cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
    cr_assert(CPU_EQUAL(&before, &after), "mask restored at shutdown");
  }
}

/* A shutdown on another thread gives the pinned caller its mask back too. */
static void *shutdown_thread(void *arg) {
  *(int *)arg = tt_team_shutdown();
  return NULL;
}

Test(team, pinned_caller_restored_by_another_thread) {
  cpu_set_t before, after;
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  if (CPU_COUNT(&before) < 2)
    cr_skip_test("one CPU: pinning changes nothing");
  setenv("TEAMS_PIN", "cores", 1);
  cr_assert_eq(tt_team_start(), 0);
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  cr_assert_eq(CPU_COUNT(&after), 1, "the starting thread is pinned");
  pthread_t t;
  int rc = -1;
  cr_assert_eq(pthread_create(&t, NULL, shutdown_thread, &rc), 0);
  pthread_join(t, NULL);
  cr_assert_eq(rc, 0);
  cr_assert_eq(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  cr_assert(CPU_EQUAL(&before, &after), "mask restored by the other thread");
}

/* A pinned caller that exits before the shutdown: the shutdown must not
 * touch it (it is gone), and a new team starts from the next thread. */
static void *start_and_exit(void *arg) {
  (void)arg;
  int rc = tt_team_start();
  return (void *)(intptr_t)rc;
}

Test(team, pinned_caller_exits_before_shutdown) {
  setenv("TEAMS_PIN", "cores", 1);
  for (int round = 0; round < 20; round++) {
    pthread_t t;
    void *rc;
    cr_assert_eq(pthread_create(&t, NULL, start_and_exit, NULL), 0);
    pthread_join(t, &rc);
    cr_assert_eq((intptr_t)rc, 0);
    /* a thread that is surely not the one that started the team, and a
     * freed pthread_t of the same shape */
    pthread_t u;
    cr_assert_eq(pthread_create(&u, NULL, start_and_exit, NULL), 0);
    pthread_join(u, NULL);
    cr_assert_eq(tt_team_shutdown(), 0);
  }
  size_t n = tt_team_size();
  count_ctx *x = new_ctx();
  reset(x, n);
  cr_assert_eq(tt_foreach_chunk(count_chunk, x, n, n), 0);
  expect_once(x, n, n);
  free(x);
}
