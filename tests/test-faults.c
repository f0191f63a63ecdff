/* Fault tests of the team: what happens when things go wrong around it.
 *   - worker creation fails (a child process whose user may run only a few
 *     more threads, RLIMIT_NPROC): the team starts degraded, says why, and
 *     still runs every chunk exactly once;
 *   - fork() from a program that used the team, also while another thread
 *     runs a region: the child's launches work and run on a fresh team;
 *   - hundreds of shutdown/restart cycles, also while other threads launch;
 *   - bad input (NULL function, p == 0, ranges whose n + grain overflows,
 *     launcher configurations with a local size larger than the global one):
 *     a negative code, nothing run, and the team still usable and not held;
 *   - a signal every ~100 us while regions run (futex_wait returns EINTR):
 *     no chunk lost or run twice;
 *   - TEAMS_DEBUG=1 prints the configuration line once, at the first team
 *     start of the process (lifecycle.c's choice: not again at each restart).
 * Nothing here measures time.  Criterion runs each test in a process of its
 * own; tests that need a process of their own beyond that (privileges
 * dropped, stderr captured, a fork) run it as a child, which reports a
 * failure as a message on a pipe and a non-zero exit status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "teams/launch.h"
#include "teams/team.h"

#if defined(__SANITIZE_THREAD__)
#define SCALE 4 /* ThreadSanitizer: a quarter of the iterations, same checks */
#define TSAN 1
#else
#define SCALE 1
#define TSAN 0
#endif

#define MAXC 256

/* ---- counting chunks --------------------------------------------------------- */

typedef struct counts {
  size_t m;
  _Atomic unsigned runs[MAXC];
  int part[MAXC]; /* participant that ran chunk c (plain: read after return) */
  _Atomic unsigned begun; /* count_together: chunks begun */
} counts;

static void count_chunk(void *ctx, size_t c) {
  counts *x = ctx;
  if (c < MAXC) {
    atomic_fetch_add_explicit(&x->runs[c], 1, memory_order_relaxed);
    x->part[c] = tt_participant();
  }
}

/* count_chunk, but chunk 0 first waits up to a second until every chunk
 * began: a worker that runs comes in time and takes its own chunk (the
 * holder takes over only a chunk whose worker has not begun when its own
 * is done, docs/protocol.md item 10); a serial region waits the second. */
static void count_together(void *ctx, size_t c) {
  counts *x = ctx;
  atomic_fetch_add(&x->begun, 1);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (c == 0 && atomic_load(&x->begun) < x->m &&
         clock_gettime(CLOCK_MONOTONIC, &t) == 0 &&
         (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 1000000000L)
    sched_yield();
  count_chunk(ctx, c);
}

static void counts_reset(counts *x, size_t m) {
  x->m = m;
  atomic_init(&x->begun, 0);
  for (size_t c = 0; c < MAXC; c++) {
    atomic_init(&x->runs[c], 0);
    x->part[c] = -2;
  }
}

/* Launch m chunks on p participants; NULL if each ran exactly once, else
 * a description of the first miss (static storage of the caller's thread).
 * The counts live on the stack: threads that launch while another forks
 * must not hold an allocator lock the child would inherit (the sanitizers'
 * allocators are not fork-safe). */
static const char *launch_once(size_t m, size_t p) {
  static _Thread_local char why[160];
  counts xs, *x = &xs;
  counts_reset(x, m);
  int rc = tt_foreach_chunk(count_chunk, x, m, p);
  const char *res = NULL;
  if (rc != 0) {
    snprintf(why, sizeof why, "tt_foreach_chunk(m %zu, p %zu) returned %d",
             m, p, rc);
    res = why;
  }
  for (size_t c = 0; c < MAXC && !res; c++) {
    unsigned runs = atomic_load(&x->runs[c]);
    if (runs != (c < m)) {
      snprintf(why, sizeof why, "m %zu, p %zu: chunk %zu ran %u times", m, p,
               c, runs);
      res = why;
    }
  }
  return res;
}

/* Whether a static region of the whole team runs chunk c on participant c,
 * i.e. the team is usable, free, and has its workers.  1 yes, 0 it ran
 * serially, -1 a chunk did not run exactly once. */
static int static_region_parallel(size_t size) {
  /* Meaningful with TEAMS_RUN=team only (strict_static below). */
  counts xs, *x = &xs;
  counts_reset(x, size);
  int res = tt_foreach_chunk(count_together, x, size, size) == 0 ? 1 : -1;
  int serial = 1;
  for (size_t c = 0; c < size && res == 1; c++) {
    if (atomic_load(&x->runs[c]) != 1)
      res = -1;
    else if (x->part[c] != (int)c)
      res = 0;
    serial &= x->part[c] == 0;
  }
  if (res == 0 && !serial)
    res = -1; /* neither parallel nor serial */
  return size < 2 && res == 0 ? 1 : res;
}

/* ---- worker creation fails ------------------------------------------------------ */

/* Tasks (threads) of real user uid now, from /proc. */
static long tasks_of(uid_t uid) {
  DIR *proc = opendir("/proc");
  if (!proc)
    return -1;
  long n = 0;
  struct dirent *e;
  while ((e = readdir(proc))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f)
      continue;
    long ruid = -1, threads = 0;
    while (fgets(line, sizeof line, f)) {
      if (!strncmp(line, "Uid:", 4))
        ruid = strtol(line + 4, NULL, 10);
      else if (!strncmp(line, "Threads:", 8))
        threads = strtol(line + 8, NULL, 10);
    }
    fclose(f);
    if (ruid == (long)uid)
      n += threads;
  }
  closedir(proc);
  return n;
}

/* Let the calling process's user run only `more` more threads.  As root
 * RLIMIT_NPROC is not enforced, so first become nobody (65534). */
static void limit_threads(long more) {
  if (geteuid() == 0) {
    CHILD_CHECK(setgroups(0, NULL) == 0 && setgid(65534) == 0 &&
                    setuid(65534) == 0,
                "cannot drop privileges: %s", strerror(errno));
  }
  long now = tasks_of(getuid());
  CHILD_CHECK(now >= 1, "cannot count the tasks of uid %d", (int)getuid());
  struct rlimit rl = {(rlim_t)(now + more), (rlim_t)(now + more)};
  CHILD_CHECK(setrlimit(RLIMIT_NPROC, &rl) == 0, "setrlimit: %s",
              strerror(errno));
}

static void degraded_child(void *arg) {
  (void)arg;
  CHILD_CHECK(setenv("TEAMS_NUM_THREADS", "8", 1) == 0, "setenv");
  limit_threads(2);
  for (int round = 0; round < 3; round++) {
    CHILD_CHECK(tt_team_start() == 0, "tt_team_start failed");
    tt_team_info i;
    CHILD_CHECK(tt_team_get_info(&i) == 0, "tt_team_get_info failed");
    CHILD_CHECK(i.requested == 8, "requested %zu, not 8", i.requested);
    CHILD_CHECK(i.size >= 1 && i.size < 8,
                "round %d: %zu participants although at most 2 more threads "
                "could start", round, i.size);
    CHILD_CHECK(tt_team_size() == i.size, "tt_team_size %zu != info %zu",
                tt_team_size(), i.size);
    CHILD_CHECK(i.degraded != NULL, "round %d: a team of %zu of 8 does not "
                "say it is degraded", round, i.size);
    CHILD_CHECK(strstr(i.degraded, "created") &&
                    strstr(i.degraded, strerror(EAGAIN)),
                "round %d: degraded reason \"%s\" does not say how many "
                "workers were created and why", round, i.degraded);
    /* Every kind of region, sized for the team that was asked for. */
    static const size_t shapes[][2] = {{8, 8}, {100, 8}, {3, 8}, {8, 3},
                                       {2, 2}, {1, 8},   {0, 8}};
    for (int rep = 0; rep < 200; rep++)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const char *why = launch_once(shapes[s][0], shapes[s][1]);
        CHILD_CHECK(!why, "round %d, degraded team of %zu: %s", round, i.size,
                    why);
      }
    int par = static_region_parallel(i.size);
    CHILD_CHECK(par == 1, "round %d: a static region of the degraded team of "
                "%zu ran %s", round, i.size,
                par ? "chunks other than once" : "serially");
    /* The workers exit at shutdown, so the next start may create them again
     * (and is degraded again). */
    CHILD_CHECK(tt_team_shutdown() == 0, "tt_team_shutdown failed");
  }
}

Test(faults, worker_creation_fails_team_degrades, .timeout = 120) {
  run_child(degraded_child, NULL, "RLIMIT_NPROC");
}

/* ---- fork ------------------------------------------------------------------------ */

static void forked_child(void *arg) {
  size_t parent_size = *(size_t *)arg;
  /* The child has none of the parent's workers: the first use starts a
   * fresh team of the same configuration, which runs in parallel again. */
  for (int rep = 0; rep < 100; rep++) {
    const char *why = launch_once(64, parent_size);
    CHILD_CHECK(!why, "after fork: %s", why);
    why = launch_once(parent_size, parent_size);
    CHILD_CHECK(!why, "after fork: %s", why);
  }
  tt_team_info i;
  CHILD_CHECK(tt_team_get_info(&i) == 0, "tt_team_get_info failed");
  CHILD_CHECK(i.size == parent_size, "child team of %zu, parent's of %zu",
              i.size, parent_size);
  int par = static_region_parallel(i.size);
  CHILD_CHECK(par == 1, "after fork a static region ran %s",
              par ? "chunks other than once" : "serially");
  /* A restart in the child.  Not under ThreadSanitizer: glibc gives the
   * forked child the stacks of the parent's threads (which do not exist
   * there) for reuse, so a restarted worker gets the id of a parent worker
   * that TSan still counts as running, and TSan stops the child ("dup thread
   * with used id").  The first start above has the same check there. */
  if (!TSAN) {
    CHILD_CHECK(tt_team_shutdown() == 0, "shutdown in the child");
    CHILD_CHECK(!launch_once(16, 4), "after shutdown in the child");
    par = static_region_parallel(parent_size);
    CHILD_CHECK(par == 1, "after a restart in the child a static region ran %s",
                par ? "chunks other than once" : "serially");
  }
}

Test(faults, fork_after_the_team_ran, .timeout = 120) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  cr_assert_eq(tt_team_start(), 0);
  size_t size = tt_team_size();
  cr_assert_eq(size, 4);
  for (int rep = 0; rep < 50; rep++)
    cr_assert_null(launch_once(40, size));
  cr_assert_eq(static_region_parallel(size), 1);
  for (int k = 0; k < 5; k++)
    run_child(forked_child, &size, "fork after use");
  /* The parent's team is unharmed. */
  cr_assert_eq(static_region_parallel(size), 1);
  cr_assert_null(launch_once(100, size));
}

typedef struct launcher_thread {
  pthread_t thread;
  _Atomic int stop;
  _Atomic unsigned long launches;
  const char *_Atomic error;
} launcher_thread;

static void range_count(void *ctx, size_t b, size_t e) {
  counts *x = ctx;
  for (size_t c = b; c < e; c++)
    atomic_fetch_add(&x->runs[c], 1);
}

/* A launch through tt_foreach_range (its schedule reads the team's size and
 * topology before it takes the team), checked like launch_once. */
static const char *range_once(size_t n, tt_schedule sched) {
  static _Thread_local char why[160];
  counts xs, *x = &xs;
  counts_reset(x, n);
  int rc = tt_foreach_range(range_count, x, n, 1, 4, sched);
  if (rc != 0) {
    snprintf(why, sizeof why, "tt_foreach_range(n %zu) returned %d", n, rc);
    return why;
  }
  for (size_t c = 0; c < MAXC; c++)
    if (atomic_load(&x->runs[c]) != (c < n)) {
      snprintf(why, sizeof why, "range n %zu: unit %zu ran %u times", n, c,
               atomic_load(&x->runs[c]));
      return why;
    }
  return NULL;
}

static void *launch_loop(void *arg) {
  launcher_thread *t = arg;
  size_t m = 1;
  while (!atomic_load(&t->stop)) {
    m = m % 97 + 1;
    const char *why = launch_once(m, 4);
    if (!why && m % 3 == 0)
      why = range_once(m, m % 2 ? TT_SCHED_STEAL : TT_SCHED_AUTO);
    /* The size query races restarts on other threads: never 0 (it starts
     * the team), never more than asked for. */
    size_t size = tt_team_size();
    if (!why && (size == 0 || size > 4))
      why = "tt_team_size() out of range during restarts";
    if (why) {
      atomic_store(&t->error, why);
      break;
    }
    atomic_fetch_add(&t->launches, 1);
  }
  return NULL;
}

static void forked_mid_region_child(void *arg) {
  size_t size = *(size_t *)arg;
  /* Forked while another thread of the parent held the team: the child has
   * only this thread, and the team is free to it. */
  for (int rep = 0; rep < 50; rep++)
    CHILD_CHECK(!launch_once(30, size), "after fork mid-region");
  int par = static_region_parallel(size);
  CHILD_CHECK(par == 1, "after fork mid-region a static region ran %s",
              par ? "chunks other than once" : "serially");
}

Test(faults, fork_while_another_thread_runs_regions, .timeout = 120) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  cr_assert_eq(tt_team_start(), 0);
  size_t size = tt_team_size();
  launcher_thread t = {0};
  cr_assert_eq(pthread_create(&t.thread, NULL, launch_loop, &t), 0);
  for (int k = 0; k < 10; k++) {
    while (atomic_load(&t.launches) < (unsigned long)(k + 1) * 20 &&
           !atomic_load(&t.error))
      sched_yield();
    run_child(forked_mid_region_child, &size, "fork mid-region");
  }
  atomic_store(&t.stop, 1);
  pthread_join(t.thread, NULL);
  cr_assert_null(atomic_load(&t.error), "%s", atomic_load(&t.error));
}

/* ---- shutdown and restart --------------------------------------------------------- */

Test(faults, shutdown_restart_loops, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "3", 1), 0);
  for (int k = 0; k < 400 / SCALE; k++) {
    switch (k % 4) {
    case 0: /* explicit start */
      cr_assert_eq(tt_team_start(), 0);
      break;
    case 1: /* started by the first launch */
      break;
    case 2: /* started by a query */
      cr_assert_eq(tt_team_size(), 3);
      break;
    default: /* a shutdown of a team that is not running */
      cr_assert_eq(tt_team_shutdown(), 0);
      break;
    }
    for (size_t m = 1; m <= 12; m++)
      cr_assert_null(launch_once(m * 5 % 13, 3), "cycle %d", k);
    cr_assert_eq(static_region_parallel(3), 1, "cycle %d", k);
    cr_assert_eq(tt_team_shutdown(), 0);
  }
  cr_assert_null(launch_once(50, 3));
}

Test(faults, shutdown_restart_while_others_launch, .timeout = 300) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "3", 1), 0);
  enum { N = 3 };
  launcher_thread t[N];
  memset(t, 0, sizeof t);
  for (int i = 0; i < N; i++)
    cr_assert_eq(pthread_create(&t[i].thread, NULL, launch_loop, &t[i]), 0);
  /* Each launcher has run before the cycles start, and after they end. */
  for (int i = 0; i < N; i++)
    while (!atomic_load(&t[i].launches) && !atomic_load(&t[i].error))
      sched_yield();
  /* Shutdown competes for the team with the launchers (take_waiting): on a
   * loaded machine a cycle can take long, hence fewer cycles than above. */
  for (int k = 0; k < 100 / SCALE; k++) {
    cr_assert_eq(tt_team_shutdown(), 0, "cycle %d", k);
    if (k % 2)
      cr_assert_eq(tt_team_start(), 0);
    cr_assert_null(launch_once(20, 3), "cycle %d", k);
  }
  for (int i = 0; i < N; i++) {
    unsigned long before = atomic_load(&t[i].launches);
    while (atomic_load(&t[i].launches) == before && !atomic_load(&t[i].error))
      sched_yield();
    atomic_store(&t[i].stop, 1);
    pthread_join(t[i].thread, NULL);
    cr_assert_null(atomic_load(&t[i].error), "%s", atomic_load(&t[i].error));
  }
}

/* ---- bad input ---------------------------------------------------------------------- */

static _Atomic int never_runs;
static void never_chunk(void *ctx, size_t c) { atomic_fetch_add(&never_runs, 1); }
static void never_range(void *ctx, size_t b, size_t e) {
  atomic_fetch_add(&never_runs, 1);
}
static void never_groups(const void *args, const tt_ndrange *nd, size_t b,
                         size_t e, void *local) {
  atomic_fetch_add(&never_runs, 1);
}

/* Every bad call: a negative code (the one documented where there is one),
 * nothing run.  Returns how many calls were checked. */
static int check_bad_calls(void) {
  static const tt_schedule sched[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY,
                                      TT_SCHED_STEAL, TT_SCHED_AUTO};
  int calls = 0;
  counts x;
  counts_reset(&x, 0);
  cr_assert_eq(tt_foreach_chunk(NULL, &x, 10, 2), TT_EINVAL);
  cr_assert_eq(tt_foreach_chunk(NULL, &x, 0, 2), TT_EINVAL);
  cr_assert_eq(tt_foreach_chunk(never_chunk, &x, 10, 0), TT_EINVAL);
  cr_assert_eq(tt_foreach_chunk(never_chunk, &x, 0, 0), TT_EINVAL);
  cr_assert_eq(tt_foreach_chunk(never_chunk, &x, SIZE_MAX, 0), TT_EINVAL);
  calls += 5;
  for (size_t s = 0; s < 4; s++) {
    cr_assert_eq(tt_foreach_range(NULL, NULL, 100, 1, 2, sched[s]), TT_EINVAL);
    cr_assert_eq(tt_foreach_range(never_range, NULL, 100, 1, 0, sched[s]),
                 TT_EINVAL);
    /* n + grain overflows size_t */
    cr_assert_eq(tt_foreach_range(never_range, NULL, SIZE_MAX, 1, 2, sched[s]),
                 TT_EOVERFLOW);
    cr_assert_eq(tt_foreach_range(never_range, NULL, SIZE_MAX - 5, 16, 2,
                                  sched[s]), TT_EOVERFLOW);
    cr_assert_eq(tt_foreach_range(never_range, NULL, SIZE_MAX / 2 + 1,
                                  SIZE_MAX / 2 + 1, 4, sched[s]),
                 TT_EOVERFLOW);
    calls += 5;
  }
  cr_assert_eq(tt_foreach_range(never_range, NULL, 100, 1, 2, (tt_schedule)42),
               TT_EINVAL);
  calls++;

  tt_kernel k = {.chunk = never_groups, .name = "never"};
  tt_launch_config bad[] = {
      {.dims = 1, .global = {10}, .local = {11}},         /* local > global */
      {.dims = 2, .global = {4, 4}, .local = {2, 5}},     /* ... in dim 1 */
      {.dims = 3, .global = {2, 2, 2}, .local = {1, 1, 3}},
      {.dims = 2, .global = {8, 8}, .local = {8, 0}},     /* partly chosen */
      {.dims = 0, .global = {8}},
      {.dims = 4, .global = {8, 8, 8}},
      {.dims = 1, .global = {0}},
      {.dims = 2, .global = {SIZE_MAX, 3}},               /* product overflows */
      {.dims = 1, .global = {8}, .offset = {SIZE_MAX - 2}}, /* last id overflows */
      {.dims = 1, .global = {8}, .schedule = (tt_schedule)42},
  };
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    int rc = tt_launch(&k, NULL, &bad[b]);
    cr_assert_lt(rc, 0, "bad launch configuration %zu returned %d", b, rc);
    cr_assert(rc == TT_EINVAL || rc == TT_EOVERFLOW,
              "bad configuration %zu: %d (%s)", b, rc, tt_strerror(rc));
    tt_ndrange nd;
    cr_assert_eq(tt_launch_resolve(&bad[b], &nd), rc, "configuration %zu", b);
    calls++;
  }
  cr_assert_eq(tt_launch(&k, NULL, &bad[0]), TT_EINVAL);
  cr_assert_eq(tt_launch(&k, NULL, &bad[7]), TT_EOVERFLOW);
  cr_assert_eq(tt_launch(NULL, NULL, &(tt_launch_config){.dims = 1, .global = {8}}),
               TT_EINVAL);
  cr_assert_eq(tt_launch(&(tt_kernel){0}, NULL,
                         &(tt_launch_config){.dims = 1, .global = {8}}),
               TT_EINVAL);
  cr_assert_eq(tt_launch(&k, NULL, NULL), TT_EINVAL);
  calls += 5;
  cr_assert_eq(atomic_load(&never_runs), 0,
               "a rejected call ran its function");
  return calls;
}

static _Atomic int nested_calls, shutdown_not_refused;
static void bad_calls_in_chunk(void *ctx, size_t c) {
  if (c == 0) /* on the caller, participant 0: asserting is safe here */
    atomic_store(&nested_calls, check_bad_calls());
  /* Shutdown from inside a chunk is refused, on every participant. */
  if (tt_team_shutdown() != TT_EBUSY)
    atomic_fetch_add(&shutdown_not_refused, 1);
}

Test(faults, bad_input_gives_a_code_and_leaves_the_team_usable, .timeout = 120) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "3", 1), 0);
  /* Before the team exists: bad input must not leave it half started. */
  check_bad_calls();
  cr_assert_eq(static_region_parallel(tt_team_size()), 1);
  for (int k = 0; k < 3; k++) {
    int calls = check_bad_calls();
    cr_assert_gt(calls, 40);
    /* The team is free (a static region runs on its participants) and runs
     * every chunk once. */
    cr_assert_eq(static_region_parallel(3), 1, "the team was left held");
    cr_assert_null(launch_once(77, 3));
  }
  /* The same calls from inside a chunk (on the caller, participant 0). */
  cr_assert_eq(tt_foreach_chunk(bad_calls_in_chunk, NULL, 3, 3), 0);
  cr_assert_gt(atomic_load(&nested_calls), 40);
  cr_assert_eq(atomic_load(&shutdown_not_refused), 0,
               "tt_team_shutdown inside a chunk did not return TT_EBUSY");
  cr_assert_eq(static_region_parallel(3), 1, "the team was left held");
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_null(launch_once(20, 3));
}

/* ---- signals --------------------------------------------------------------------- */

static _Atomic unsigned long signals_seen;
static void on_alarm(int sig) { atomic_fetch_add(&signals_seen, 1); }

static void *signal_launcher(void *arg) {
  launcher_thread *t = arg;
  uint64_t r = (uint64_t)(uintptr_t)arg;
  while (!atomic_load(&t->stop)) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    size_t p = 1 + (r >> 33) % 4;
    size_t m = (r >> 40) % 3 == 0 ? p : p + (r >> 20) % 50;
    const char *why = launch_once(m, p);
    if (why) {
      atomic_store(&t->error, why);
      break;
    }
    atomic_fetch_add(&t->launches, 1);
  }
  return NULL;
}

Test(faults, signals_during_regions_lose_no_chunk, .timeout = 120) {
  /* Workers that sleep at once spend their idle time in futex_wait, which
   * the signals interrupt (EINTR). */
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  cr_assert_eq(setenv("TEAMS_SPIN_US", "0", 1), 0);
  cr_assert_eq(tt_team_start(), 0);
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: system calls see EINTR */
  sigemptyset(&sa.sa_mask);
  cr_assert_eq(sigaction(SIGALRM, &sa, &old), 0);
  /* A POSIX timer of its own, so the test runner's alarm() stays armed. */
  timer_t timer;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGALRM;
  cr_assert_eq(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
  struct itimerspec its = {{0, 100000}, {0, 100000}};
  cr_assert_eq(timer_settime(timer, 0, &its, NULL), 0);

  enum { N = 3 };
  launcher_thread t[N];
  memset(t, 0, sizeof t);
  for (int i = 0; i < N; i++)
    cr_assert_eq(pthread_create(&t[i].thread, NULL, signal_launcher, &t[i]), 0);
  /* The main thread launches too, for about a second. */
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  unsigned long mine = 0;
  do {
    for (int i = 0; i < 20; i++, mine++)
      cr_assert_null(launch_once(mine % 40 + 1, mine % 4 + 1));
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L +
               (now.tv_nsec - start.tv_nsec) < 1000000000L);
  for (int i = 0; i < N; i++) {
    atomic_store(&t[i].stop, 1);
    pthread_join(t[i].thread, NULL);
  }
  timer_delete(timer);
  sigaction(SIGALRM, &old, NULL);
  for (int i = 0; i < N; i++)
    cr_assert_null(atomic_load(&t[i].error), "%s", atomic_load(&t[i].error));
  cr_log_info("signals: %lu delivered during %lu launches",
              atomic_load(&signals_seen), mine);
  /* The timer fired: otherwise nothing above was tested. */
  cr_assert_gt(atomic_load(&signals_seen), 0);
  cr_assert_eq(static_region_parallel(4), 1);
}

/* Every test here tells a usable team by a static region that ran on its
 * participants; the way's choice (launcher/way.c) may run a cheap region
 * on the caller alone.  Set before Criterion forks the tests. */
__attribute__((constructor)) static void strict_static(void) {
  setenv("TEAMS_RUN", "team", 0);
}

/* ---- TEAMS_DEBUG ------------------------------------------------------------------ */

typedef struct debug_case {
  const char *value; /* TEAMS_DEBUG, or NULL for unset */
  int starts;        /* team starts in the child */
  int want_lines;    /* configuration lines expected (one per process) */
} debug_case;

static void debug_child(void *arg) {
  const debug_case *dc = arg;
  int fds[2];
  CHILD_CHECK(pipe(fds) == 0, "pipe");
  pid_t pid = fork();
  CHILD_CHECK(pid >= 0, "fork");
  if (pid == 0) { /* grandchild: the program whose stderr is read */
    close(fds[0]);
    dup2(fds[1], 2);
    close(fds[1]);
    if (dc->value)
      setenv("TEAMS_DEBUG", dc->value, 1);
    else
      unsetenv("TEAMS_DEBUG");
    for (int s = 0; s < dc->starts; s++) {
      if (s > 0)
        tt_team_shutdown();
      tt_team_start();
      tt_team_start(); /* already started: nothing printed */
      for (int k = 0; k < 20; k++)
        if (launch_once(10, 4))
          _exit(2);
      tt_team_info i;
      tt_team_get_info(&i);
      tt_team_size();
    }
    _exit(0);
  }
  close(fds[1]);
  char buf[8192];
  read_all(fds[0], buf, sizeof buf);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    CHILD_CHECK(errno == EINTR, "waitpid");
  CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the program failed (status %d); stderr: %.300s", status, buf);
  int lines = 0;
  for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (strncmp(l, "teams: team of ", 15))
      continue;
    lines++;
    char *end = strchr(l, '\n');
    if (end)
      *end = 0;
    static const char *const fields[] = {"participants", "topology", "start"};
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
      CHILD_CHECK(strstr(l, fields[f]), "configuration line without \"%s\": %s",
                  fields[f], l);
    CHILD_CHECK(strstr(l, "team of 4 participants"),
                "configuration line does not give the 4 threads: %s", l);
    if (end)
      *end = '\n';
  }
  CHILD_CHECK(lines == dc->want_lines,
              "TEAMS_DEBUG=%s, %d team start(s): %d configuration lines, not "
              "%d; stderr: %.300s", dc->value ? dc->value : "(unset)",
              dc->starts, lines, dc->want_lines, buf);
  /* With the team's line come the settings, one line each (settings.h). */
  static const char *const settings[] = {"TEAMS_NUM_THREADS", "TEAMS_SPIN_US",
                                         "TEAMS_IDLE", "TEAMS_RUN", "TEAMS_BUSY",
                                         "TEAMS_PIN"};
  for (size_t k = 0; k < sizeof settings / sizeof settings[0]; k++)
    CHILD_CHECK(!strstr(buf, settings[k]) == !dc->want_lines ||
                    (dc->value && !strcmp(dc->value, "yes")),
                "TEAMS_DEBUG=%s: %s %s in stderr: %.300s",
                dc->value ? dc->value : "(unset)", settings[k],
                dc->want_lines ? "missing" : "printed", buf);
  /* A value the table refuses says so. */
  if (dc->value && !strcmp(dc->value, "yes"))
    CHILD_CHECK(strstr(buf, "ignoring TEAMS_DEBUG=yes"),
                "TEAMS_DEBUG=yes was not refused: %.300s", buf);
}

Test(faults, debug_prints_configuration_once, .timeout = 120) {
  cr_assert_eq(setenv("TEAMS_NUM_THREADS", "4", 1), 0);
  static const debug_case cases[] = {
      {"1", 1, 1}, {"1", 3, 1}, {"yes", 2, 0}, {"0", 1, 0}, {NULL, 2, 0},
      {"", 1, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    run_child(debug_child, (void *)&cases[c], "TEAMS_DEBUG");
}
