/* teams: the team's entry -- tt__team_run and tt_foreach_chunk -- and its
 * queries.
 *
 * A region goes through three decisions, in this order:
 *   1. the busy rule (docs/protocol.md items 14, 15): serially on the caller
 *      when m == 1 or p == 1, inside a chunk (nesting), inside an OpenMP
 *      parallel region, when the team cannot start, or when another thread
 *      holds the team (TEAMS_BUSY=wait waits for it instead, never from
 *      inside a chunk).  Serial can never oversubscribe and never deadlock;
 *   2. the way (way.c, protocol 44): team (the team's workers), openmp
 *      (OpenMP's threads) or serial (the caller alone), whichever cost
 *      least as measured; serial runs without taking the team;
 *   3. the shape (fork.c): flat or along the tree, static, greedy or each.
 * The team's size follows the CPUs the process may use: a changed quota or
 * CPU set restarts it at the next launch outside a chunk (lifecycle.c). */
#include "lend.h"
#include "team-state.h"
#include "way.h"

_Thread_local tt__thread tt__thr = {.self = -1};

static void run_serial(tt__thread *me, void (*f)(void *, size_t), void *ctx,
                       size_t m, tt__mode mode) {
  if (mode == TT__MODE_EACH)
    TT__AS_PARTICIPANT(me, 0, false, f(ctx, 0));
  else
    TT__AS_PARTICIPANT(me, 0, false, for (size_t c = 0; c < m; c++) f(ctx, c));
}

int tt__team_run(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                 tt__mode mode, int *parallel) {
  return tt__team_run_site(f, ctx, m, p, mode, NULL, m, parallel);
}

/* TEAMS_RUN's way, TT__WAYS for the rule's choice (read before the team is
 * taken: relaxed, protocol 2's hint rule). */
static tt__way fixed_way(void) {
  int way = tt_atomic_load_relaxed(&tt__the_team.way);
  return way ? (tt__way)(way - 1) : TT__WAYS;
}

/* The region, once m and p are what it runs (m >= 2, 2 <= p <= m) and the
 * caller is outside any chunk: the way (l: the loop's record, NULL for a
 * first-touch region), then the team.  all: first touch. */
static int run_loop(tt__thread *me, void (*f)(void *, size_t), void *ctx,
                    size_t m, size_t p, tt__mode mode, bool all, tt__loop *l,
                    int *parallel) {
  if ((l && tt__loop_skip_serial(&me->loops, l)) || tt__in_openmp_parallel()) {
    run_serial(me, f, ctx, m, mode);
    return 0;
  }
  int rc = tt__ensure_started();
  if (rc < 0 && !tt_atomic_load_acquire(&tt__the_team.running)) {
    run_serial(me, f, ctx, m, mode);
    return 0;
  }
  if (tt_atomic_load_relaxed(&tt__the_team.resize))
    tt__resize_now();
  /* The way's constants, by the first holder after each start
   * (way-probe.c), unless TEAMS_RUN fixes the way (nothing reads them);
   * held: probed is the holder's.  A probe that found no sample is tried
   * again later, backing off (way.h). */
  if (!tt_atomic_load_relaxed(&tt__the_team.probed) && fixed_way() == TT__WAYS &&
      tt__now_ns() >= tt_atomic_load_relaxed(&tt__the_team.probe_after) &&
      tt__try_take(me)) {
    tt__team *T = &tt__the_team;
    if (tt_atomic_load_acquire(&T->running) && !tt_atomic_load_relaxed(&T->probed)) {
      bool ok = tt__costs_probe();
      uint64_t gap = (uint64_t)TT__PROBE_GAP_NS << (T->probes < 10 ? T->probes : 10);
      gap = gap < TT__PROBE_GAP_MAX_NS ? gap : TT__PROBE_GAP_MAX_NS;
      T->probes += !ok;
      tt_atomic_store_relaxed(&T->probe_after, tt__now_ns() + gap);
      tt_atomic_store_relaxed(&T->probed, ok);
    }
    tt__release();
  }

  /* The way (protocol 44), from the state the region meets; first touch
   * always runs on the team, every worker woken (its pages stay where the
   * chunks ran). */
  tt__way_state st = {.spinning = tt_atomic_load_relaxed(&tt__the_team.awake)};
  st.can_lend = !all && tt__lend_possible(me, p);
  st.omp_spins = st.can_lend && tt__lend_spinning(false);
  st.omp_tail_ns = st.can_lend ? tt__lend_tail_ns(p, st.omp_spins) : 0;
  st.omp_pause_ns = st.can_lend && st.omp_spins ? tt__lend_pause_ns() : 0;
  tt__way_plan plan;
  tt__way_choose(&me->loops, all ? NULL : l, m, p, mode,
                 all ? TT__WAYS : fixed_way(), &st, &plan);
  tt__way_cost cost = {0, 0, 0, 0, 0, 0};
  tt__way ran = TT__WAY_TEAM;
  bool held = false;
  if (plan.way != TT__WAY_SERIAL) {
    held = tt__try_take(me);
    if (!held && tt_atomic_load_relaxed(&tt__the_team.busy_wait)) {
      tt__take_waiting(me);
      held = true;
    }
    /* Held: shutdown cannot run now, but one may have run before we took it
     * (and a start after it: acquire, so size and workers are its; protocol
     * 15). */
    if (held && !tt_atomic_load_acquire(&tt__the_team.running)) {
      tt__release();
      held = false;
    }
  }
  if (held) {
    if (p > tt__team_size())
      p = tt__team_size();
    if (mode == TT__MODE_STATIC && m != p)
      mode = TT__MODE_GREEDY; /* the team is smaller than asked */
    if (mode == TT__MODE_EACH)
      m = p;
    if (p < 2) {
      tt__release();
      held = false;
    }
  }
  if (!held) { /* serial, chosen or by the busy rule */
    run_serial(me, f, ctx, m, mode);
    ran = TT__WAY_SERIAL;
    if (plan.timed) {
      cost.end_ns = tt__now_ns();
      cost.ns = cost.own_ns = cost.end_ns - plan.t0;
      cost.own_share = 1;
      tt__way_record(&me->loops, &plan, ran, &cost);
    }
    return 0;
  }
  tt__team *T = &tt__the_team;
  if (plan.way == TT__WAY_OPENMP && !tt__lend_possible(me, p))
    plan.way = TT__WAY_TEAM; /* a restart since the choice changed the settings */
  tt__own own = {0, 0, 0};
  me->share = 0;
  uint64_t lent_part = 0;
  if (plan.way == TT__WAY_OPENMP &&
      tt__lend(f, ctx, m, p, mode, plan.timed ? &lent_part : NULL) > 0) {
    ran = TT__WAY_OPENMP;
  } else {
    /* the workers' spin after it: the model's (way.c), unless fixed */
    if (plan.loop && !plan.fixed && !T->spin_fixed)
      tt_atomic_store_relaxed(&T->linger_ns, plan.linger_ns);
    /* along the tree every sleeper is woken (its leaders hand on) */
    bool wake = plan.wake || p >= tt_atomic_load_relaxed(&T->tree_min);
    tt__run_parallel(me, f, ctx, m, p,
                     all && mode == TT__MODE_STATIC ? TT__MODE_STATIC_PLACED : mode,
                     wake, plan.timed ? &own : NULL);
    if (st.can_lend) /* with the workers' clocks (lend.c) */
      tt__lend_spinning(true);
  }
  tt__release();
  if (plan.timed) {
    cost.end_ns = tt__now_ns();
    cost.ns = cost.end_ns - plan.t0;
    cost.own_ns = own.ns;
    cost.woken = own.woken;
    cost.lent_part_ns = lent_part;
    if (ran == TT__WAY_TEAM)
      cost.own_share = mode != TT__MODE_EACH ? (double)own.chunks / (double)m
                       : me->share > 0       ? me->share
                                             : 1.0 / (double)p;
    tt__way_record(&me->loops, &plan, ran, &cost);
  }
  if (parallel)
    *parallel = 1;
  return 0;
}

/* The entry of both below: m and p as the region runs them (each runs p
 * chunks, p at most m, m == 0 nothing), serially when m or p is 1 or inside
 * a chunk; l is the loop's record, or NULL to find it (site, size) unless
 * the region is first touch (all). */
static int enter(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                 tt__mode mode, bool all, const void *site, size_t size,
                 tt__loop *l, int *parallel) {
  if (parallel)
    *parallel = 0;
  if (mode == TT__MODE_EACH)
    m = p;
  if (m < p)
    p = m;
  if (m == 0)
    return 0;
  tt__thread *me = tt__me();
  if (m == 1 || p == 1 || me->depth > 0) {
    run_serial(me, f, ctx, m, mode);
    return 0;
  }
  if (!l && !all)
    l = tt__loop_find(&me->loops, site, size, p);
  return run_loop(me, f, ctx, m, p, mode, all, l, parallel);
}

int tt__team_run_site(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                      tt__mode mode, const void *site, size_t size,
                      int *parallel) {
  bool all = mode == TT__MODE_STATIC_PLACED;
  return enter(f, ctx, m, p, all ? TT__MODE_STATIC : mode, all,
               site ? site : (const void *)f, size, NULL, parallel);
}

int tt__team_run_loop(void (*f)(void *, size_t), void *ctx, size_t m, size_t p,
                      tt__mode mode, tt__loop *l, int *parallel) {
  return enter(f, ctx, m, p, mode, false, NULL, 0, l, parallel);
}

int tt_foreach_chunk(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                     size_t p) {
  if (!f || p == 0)
    return TT_EINVAL;
  return tt__team_run(
      f, ctx, m, p, m == p || m < p ? TT__MODE_STATIC : TT__MODE_GREEDY, NULL);
}

/* ---- queries ------------------------------------------------------------------- */

int tt_participant(void) { return tt__me()->self; }

size_t tt__team_tree_min(void) {
  return tt__ensure_started() == 0 ? tt_atomic_load_relaxed(&tt__the_team.tree_min)
                                   : 0;
}

bool tt__region_parallel(void) { return tt__me()->parallel; }

void tt__region_share(double share) { tt__me()->share = share; }

bool tt__participant_late(size_t i) {
  return i > 0 && i < tt__team_size() &&
         tt_atomic_load_relaxed(&tt__the_team.workers[i].late);
}

tt__loops *tt__way_mine(void) { return &tt__me()->loops; }

size_t tt_team_size(void) {
  tt__ensure_started();
  if (tt__me()->depth == 0 && tt_atomic_load_relaxed(&tt__the_team.resize))
    tt__resize_now();
  size_t n = tt__team_size();
  return n ? n : 1;
}

int tt__participant_cpu(size_t participant) {
  if (!tt_atomic_load_acquire(&tt__the_team.running) || participant >= tt__team_size())
    return -1;
  if (participant == 0)
    return tt__the_team.has_pinned_caller &&
                   pthread_equal(pthread_self(), tt__the_team.pinned_caller)
               ? tt__the_team.caller_cpu
               : -1;
  return tt__the_team.workers[participant].cpu;
}
