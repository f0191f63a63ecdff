/* teams: the team's life -- start, shutdown, fork -- and its size.
 *
 * Start and shutdown run under the lifecycle mutex (docs/protocol.md items
 * 22-24).  Start reads the settings (settings.h), the CPUs and the default
 * size (cpuset.h), pins if asked (topology.c), creates the workers and
 * publishes team.running with a release store.  Shutdown sets team.closing,
 * takes the team as a holder, tells the workers to exit and joins them.
 * After fork() the child has none of the parent's threads: the atfork
 * child handler forgets them and the next use starts a fresh team.
 *
 * Sizing.  The team is sized from the CPUs the process may use (cpuset.h):
 * the affinity mask of the thread that started it, the cgroup's cpuset and
 * its CPU quota (rounded up).  These change while a process runs -- a
 * Kubernetes in-place resize, `taskset -p`, a cgroup edit -- so while the
 * team runs, a monitor thread looks again every half second (Go 1.25
 * updates GOMAXPROCS the same way, at most once a second from sysmon, and
 * keeps the cgroup files open for it; half of that, so that a change is
 * followed within the second).  A look is a few small reads (teams-info
 * measures one; docs/measurements.md), about a hundredth of a percent of a
 * core at this rate.  The look never runs on a region's path:
 * when what it reads would size the team differently it sets team.resize,
 * and the next launch outside a chunk restarts the team (shutdown and
 * start: the protocol has no resize of its own, so the model's shutdown
 * and start cover it).  TEAMS_NUM_THREADS turns the monitor off, as
 * setting GOMAXPROCS does in Go.  A pinned team's caller mask is the team's
 * own doing, so for it only the cgroup is watched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "lend.h"
#include "settings.h"
#include "team-state.h"
#include "way.h"

tt__team tt__the_team;

static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* ---- the monitor (see "Sizing") ------------------------------------------------ */

#define LOOK_NS 500000000u

/* Written under the lifecycle lock while no monitor runs, read by it. */
static struct {
  pthread_t thread;
  bool running;
  _Atomic uint32_t stop; /* futex word: 1 tells the monitor to exit */
  tt__cgroup_src src;    /* where the cgroup files are */
  tt__cpuset_in
      start_in;    /* what the start read (its OpenMP and MPI parts stay) */
  tt__cpuset cs;   /* what the start decided */
  int tid;         /* whose affinity mask sizes the team */
  bool watch_mask; /* false for a pinned caller */
} mon;

/* A look: would the team be sized differently now? */
static bool sizing_changed(void) {
  tt__cpuset_in in = mon.start_in;
  int tid = mon.watch_mask ? mon.tid : -1;
  tt__cpumask probe;
  if (tid > 0 && tt__affinity_of(tid, &probe) == -ESRCH)
    tid = tt__pid(); /* the thread that started the team is gone */
  tt__cpuset_look(&mon.src, tid, &in);
  tt__cpuset now;
  tt__cpuset_decide(&in, &now);
  return now.size != mon.cs.size || !tt__mask_equal(&now.cpus, &mon.cs.cpus);
}

static void *monitor_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "teams-monitor");
  while (!tt_atomic_load_acquire(&mon.stop)) {
    tt__futex_wait_ns(&mon.stop, 0, LOOK_NS);
    if (tt_atomic_load_acquire(&mon.stop))
      break;
    if (sizing_changed())
      tt_atomic_store_relaxed(&tt__the_team.resize, 1);
  }
  return NULL;
}

static void monitor_stop(void) {
  if (!mon.running)
    return;
  tt_atomic_store_release(&mon.stop, 1);
  tt__futex_wake(&mon.stop, 1);
  pthread_join(mon.thread, NULL);
  mon.running = false;
}

uint64_t tt__monitor_look_once(void) {
  pthread_mutex_lock(&lifecycle);
  uint64_t ns = 0;
  if (mon.running) {
    uint64_t t0 = tt__now_ns();
    (void)sizing_changed();
    ns = tt__now_ns() - t0;
  }
  pthread_mutex_unlock(&lifecycle);
  return ns;
}

/* ---- the pinned caller, fork ----------------------------------------------------- */

static void atfork_prepare(void) { pthread_mutex_lock(&lifecycle); }
static void atfork_parent(void) { pthread_mutex_unlock(&lifecycle); }
/* The pinned caller exits (its key's destructor): forget it, so that a
 * shutdown on another thread never gives a mask to a thread that is gone.
 * This takes the lifecycle lock, so a shutdown that holds it and still
 * finds has_pinned_caller set gives the mask to a thread that is alive
 * (blocked, at worst, right here).  A main thread that returns from main()
 * runs no destructors, but then the process ends. */
static pthread_key_t caller_key;
static pthread_once_t caller_key_once = PTHREAD_ONCE_INIT;

static void pinned_caller_exit(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lifecycle);
  if (tt__the_team.has_pinned_caller &&
      pthread_equal(pthread_self(), tt__the_team.pinned_caller))
    tt__the_team.has_pinned_caller = false;
  pthread_mutex_unlock(&lifecycle);
}

static void caller_key_init(void) {
  pthread_key_create(&caller_key, pinned_caller_exit);
}

/* protocol 24 */
static void atfork_child(void) {
  tt__team *T = &tt__the_team;
  /* The child has only the forking thread: forget the parent's workers and
   * monitor, and the parent's pinned caller unless that is this thread. */
  if (T->has_pinned_caller && !pthread_equal(pthread_self(), T->pinned_caller))
    T->has_pinned_caller = false;
  tt_atomic_store_relaxed(&T->running, 0);
  tt_atomic_store_relaxed(&T->stopping, 0);
  tt_atomic_store_relaxed(&T->closing, 0);
  tt_atomic_store_relaxed(&T->resize, 0);
  tt_atomic_store_relaxed(&T->owner, 0);
  tt_atomic_store_relaxed(&T->sentinel_id, 0);
  T->workers = NULL;
  tt_atomic_store_relaxed(&T->size, 0);
  mon.running = false;
  pthread_mutex_init(&lifecycle, NULL);
}
static void install_atfork(void) {
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- start ----------------------------------------------------------------------- */

static void report_at_exit(void) { tt__way_report(); }

/* Start the team; its CPUs from thread tid's mask (0: the caller's).
 * Precondition: lifecycle held, team not running. */
static int start_locked(int tid) {
  tt__team *T = &tt__the_team;
  uint64_t t0 = tt__now_ns();
  tt__settings set;
  tt__settings_read(&set);
  /* The CPUs and the default size come from the process (cpuset.h), not
   * from this thread's mask alone, which OpenMP may have narrowed. */
  tt__cpuset cs;
  tt__cpuset_read(&mon.start_in, &mon.src);
  tt__cpumask m;
  if (tid > 0 && tt__affinity_of(tid, &m) == 0)
    mon.start_in.caller = m;
  tt__cpuset_decide(&mon.start_in, &cs);
  size_t cpus = cs.size;
  bool fixed = set.set[TT__SET_NUM_THREADS];
  if (fixed) {
    cs.size = (size_t)set.value[TT__SET_NUM_THREADS];
    snprintf(cs.size_from, sizeof cs.size_from, "TEAMS_NUM_THREADS");
  }
  tt__cpuset_publish(&cs);
  size_t n = cs.size;
  tt_atomic_store_relaxed(&T->busy_wait, set.value[TT__SET_BUSY] == 1);
  T->slots = n;
  T->sentinel_mode = set.value[TT__SET_IDLE] == 1;
  tt_atomic_store_relaxed(&T->way, (int)set.value[TT__SET_RUN]);
  tt_atomic_store_relaxed(&T->tree_min, (size_t)set.value[TT__SET_TREE_MIN]);
  T->tree_k = (size_t)set.value[TT__SET_TREE_K];
  /* TEAMS_PIN's choices, none|cores|numa, are TT_PIN_*'s values */
  tt_pin pin = (tt_pin)set.value[TT__SET_PIN];
  tt_atomic_store_relaxed(&T->pin, (int)pin);
  T->spin_ns = (uint64_t)set.value[TT__SET_SPIN_US] * 1000u;
  T->spin_fixed = set.set[TT__SET_SPIN_US];
  tt_atomic_store_relaxed(&T->linger_ns, T->spin_ns);
  tt_atomic_store_relaxed(&T->probed, false);
  tt_atomic_store_relaxed(&T->others_busy, 0);
  T->probes = 0;
  tt_atomic_store_relaxed(&T->probe_after, 0);
  T->yield_after_ns = tt__yield_threshold_ns();
  T->cpus = cpus;
  T->requested = n;
  T->degraded[0] = 0;

  int *cpus_of = malloc(n * sizeof *cpus_of);
  tt__worker *ws = aligned_alloc(TT_CACHE_PAD, n * sizeof *ws);
  if (!cpus_of || !ws) {
    free(cpus_of);
    free(ws);
    return TT_ENOMEM;
  }
  memset(ws, 0, n * sizeof *ws);
  double topo_ms = 0;
  for (size_t i = 0; i < n; i++)
    cpus_of[i] = -1;
  int trc = tt__topology_init_within(n, pin, &cs.cpus, cpus_of, &topo_ms);
  if (trc < 0 && pin != TT_PIN_NONE)
    snprintf(T->degraded, sizeof T->degraded,
             "topology unavailable (%s): not pinned", tt_strerror(trc));

  T->workers = ws;
  T->caller_cpu = cpus_of[0];
  T->has_pinned_caller = false;
  if (cpus_of[0] >= 0 && tt__affinity_save(&T->caller_mask) == 0 &&
      tt__pin_self(cpus_of[0]) == 0) {
    T->pinned_caller = pthread_self();
    T->has_pinned_caller = true;
    pthread_once(&caller_key_once, caller_key_init);
    pthread_setspecific(caller_key, T); /* any non-NULL value */
  }
  tt_atomic_store_relaxed(&T->stopping, 0);
  tt_atomic_store_relaxed(&T->resize, 0);
  tt_atomic_store_relaxed(&T->sentinel_id, 0);
  tt_atomic_store_relaxed(&T->r.sync, 0);
  tt_atomic_store_relaxed(&T->running_gen, 0);
  tt_atomic_store_relaxed(&T->holder_cpu, -1);
  T->gen = 2; /* regions start at generation 3 (protocol 16) */
  T->resync_gen = 2;
  T->left_base = 0;
  /* Counted awake before they run: a worker that finds nothing to do sleeps
   * after spin_ns, and its fetch_sub must not come before this store, or
   * awake stays too high and every worker sees the team overcommitted
   * (protocol 19).  Creating the workers may take longer than the spin
   * (docs/measurements.md, "The team's life"). */
  tt_atomic_store_relaxed(&T->awake, n - 1);
  size_t made = 1;
  for (size_t i = 1; i < n; i++) {
    ws[i].id = i;
    ws[i].cpu = cpus_of[i];
    tt_atomic_store_relaxed(&ws[i].go, 0);
    int rc =
        tt__thread_create(&ws[i].thread, tt__worker_main, &ws[i], &cs.cpus);
    if (rc) {
      snprintf(T->degraded, sizeof T->degraded,
               "created %zu of %zu workers: %s", i - 1, n - 1, strerror(-rc));
      break;
    }
    ws[i].clock = tt__thread_clock(ws[i].thread);
    made++;
  }
  free(cpus_of);
  tt_atomic_store_relaxed(&T->size, made);
  if (made < n)
    tt_atomic_fetch_sub_relaxed(&T->awake, n - made);

  mon.cs = cs;
  mon.tid = tid > 0 ? tid : tt__tid();
  mon.watch_mask = !T->has_pinned_caller;
  tt_atomic_store_relaxed(&mon.stop, 0);
  mon.running = !fixed && tt__thread_create(&mon.thread, monitor_main, NULL,
                                            &cs.cpus) == 0;
  T->start_ms = (double)(tt__now_ns() - t0) / 1e6;
  tt_atomic_store_release(&T->running, 1); /* protocol 22 */

  static bool told; /* TEAMS_DEBUG: once per process, not per restart */
  if (set.value[TT__SET_DEBUG] == 1 && !told) {
    told = true;
    atexit(report_at_exit);
    fprintf(stderr,
            "teams: team of %zu participants (asked %zu), topology %.2f ms, "
            "start %.2f ms, yield after %.1f us%s%s\n",
            tt__team_size(), T->requested, topo_ms, T->start_ms,
            (double)T->yield_after_ns / 1e3,
            T->degraded[0] ? ", degraded: " : "", T->degraded);
    char list[256];
    tt__cpulist_format(&cs.cpus, list, sizeof list);
    fprintf(stderr, "teams: cpus: %s (%s), size: %zu (%s)%s\n", list,
            cs.cpus_from, T->requested, cs.size_from,
            mon.running ? ", looked at again every 0.5 s" : "");
    fprintf(stderr, "teams: settings:\n");
    tt__settings_print(stderr, &set, false, "teams:   ");
  }
  return 0;
}

int tt__ensure_started(void) {
  if (tt_atomic_load_acquire(&tt__the_team.running))
    return 0;
  pthread_once(&atfork_once, install_atfork);
  pthread_mutex_lock(&lifecycle);
  int rc = 0;
  if (!tt_atomic_load_relaxed(&tt__the_team.running))
    rc = start_locked(0);
  pthread_mutex_unlock(&lifecycle);
  return rc;
}

int tt_team_start(void) { return tt__ensure_started(); }

/* ---- holding the team (protocol 1) ------------------------------------------------ */

/* The token is the address of the thread's tt__thread. */
static bool take_cas(tt__thread *me) {
  uintptr_t expect = 0;
  return tt_atomic_cas_acq_rel(&tt__the_team.owner, &expect, (uintptr_t)me);
}

/* Take the team unless a shutdown is waiting for it. */
bool tt__try_take(tt__thread *me) {
  return !tt_atomic_load_relaxed(&tt__the_team.closing) && take_cas(me);
}

/* Take the team, waiting (yielding) until it is free; `take` is tt__try_take,
 * or take_cas for the shutdown itself. */
static void take_waiting_with(tt__thread *me, bool (*take)(tt__thread *)) {
  unsigned spins = 0;
  while (!take(me)) {
    if (++spins < 1000)
      tt__cpu_relax();
    else
      tt__yield();
  }
}
void tt__take_waiting(tt__thread *me) { take_waiting_with(me, tt__try_take); }

void tt__release(void) { tt_atomic_store_release(&tt__the_team.owner, 0); }

/* ---- shutdown ---------------------------------------------------------------------- */

/* protocol 23.  Precondition: lifecycle held, the team running. */
static void shutdown_locked(void) {
  tt__team *T = &tt__the_team;
  monitor_stop();
  tt_atomic_store_relaxed(&T->closing, 1);
  tt__thread *me = tt__me();
  take_waiting_with(me, take_cas);
  /* Before `stopping`: a resync is a region every worker must run. */
  uint32_t bye = tt__next_go(me, 0);
  tt_atomic_store_release(&T->stopping, 1);
  for (size_t i = 1; i < tt__team_size(); i++) {
    uint32_t old = tt_atomic_exchange_acq_rel(&T->workers[i].go, bye);
    if (old & GO_SLEEP)
      tt__futex_wake(&T->workers[i].go, 1);
  }
  for (size_t i = 1; i < tt__team_size(); i++)
    pthread_join(T->workers[i].thread, NULL);
  free(T->workers);
  T->workers = NULL;
  tt_atomic_store_relaxed(&T->size, 0);
  /* Give the thread pinned as participant 0 its mask back, whichever thread
   * shuts down: it is alive, or its exit cleared has_pinned_caller under
   * the lock we hold (pinned_caller_exit). */
  if (T->has_pinned_caller)
    tt__affinity_restore(T->pinned_caller, &T->caller_mask);
  T->has_pinned_caller = false;
  tt__topology_fini();
  tt_atomic_store_relaxed(&T->running, 0);
  tt__release();
  tt_atomic_store_relaxed(&T->closing, 0);
}

int tt_team_shutdown(void) {
  if (tt__me()->depth > 0)
    return TT_EBUSY;
  pthread_mutex_lock(&lifecycle);
  if (tt_atomic_load_relaxed(&tt__the_team.running))
    shutdown_locked();
  pthread_mutex_unlock(&lifecycle);
  return 0;
}

void tt__resize_now(void) {
  pthread_mutex_lock(&lifecycle);
  if (tt_atomic_load_relaxed(&tt__the_team.running) &&
      tt_atomic_load_relaxed(&tt__the_team.resize)) {
    int tid = mon.tid;
    shutdown_locked();
    start_locked(tid); /* on failure the next launch starts the team */
  }
  pthread_mutex_unlock(&lifecycle);
}

/* ---- queries and test hooks ------------------------------------------------------- */

uint32_t tt__team_skip_to_wrap(uint32_t left) {
  if (tt__ensure_started() != 0)
    return 0;
  tt__take_waiting(tt__me());
  /* Forward only: a generation handed out since the last wrap must not be
   * handed out again before the next one. */
  if (left < GEN_MASK - tt__the_team.gen)
    tt__the_team.gen = GEN_MASK - left;
  uint32_t now = GEN_MASK - tt__the_team.gen;
  tt__release();
  return now;
}

size_t tt__team_awake(void) {
  return tt_atomic_load_acquire(&tt__the_team.running)
             ? tt_atomic_load_relaxed(&tt__the_team.awake)
             : 0;
}

int tt_team_get_info(tt_team_info *info) {
  if (!info)
    return TT_EINVAL;
  int rc = tt__ensure_started();
  if (rc < 0)
    return rc;
  pthread_mutex_lock(&lifecycle);
  info->size = tt__team_size();
  info->requested = tt__the_team.requested;
  info->spin_us = (double)tt__the_team.spin_ns / 1e3;
  info->busy_wait = tt_atomic_load_relaxed(&tt__the_team.busy_wait);
  info->sentinel = tt__the_team.sentinel_mode;
  info->pinned = (tt_pin)tt_atomic_load_relaxed(&tt__the_team.pin);
  info->start_ms = tt__the_team.start_ms;
  info->degraded = tt__the_team.degraded[0] ? tt__the_team.degraded : NULL;
  pthread_mutex_unlock(&lifecycle);
  return 0;
}
