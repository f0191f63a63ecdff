/* How a region runs (launcher/way.c, docs/protocol.md item 43): the
 * calling thread's choice between the team's workers, OpenMP's threads and
 * the caller alone, from what each way cost.
 *
 * Most tests drive the rule with synthetic costs in virtual time: a "world"
 * says what a region costs on each way given the state the earlier regions
 * left (workers asleep after regions on the caller alone; OpenMP's threads
 * spinning for a while after a lent region), and the test runs the loop
 * tt__way_choose -> the world -> tt__way_record as tt__team_run_site does,
 * recording only the regions the plan times.  What is checked is what the
 * rule promises: the cheapest way wins, trials of the others cost a bounded
 * share, a changed condition is followed, the caller alone is never tried
 * for a long region, lending is not tried while the team does well, and a
 * lent state that only the lending itself sustains ends.  The last tests
 * run the real team: cheap regions end up on the caller, and every chunk
 * runs once whichever way each region took.  Not benchmarks: nothing is
 * timed against a limit (the real-team tests rely on a 40x difference). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "team-internal.h"
#include "teams/team.h"
#include "way.h"

#define US 1000.0
#define CLOCK_NS 40 /* a clock read, as on the 2-core guests */

/* ---- a synthetic world ------------------------------------------------------- */

typedef struct world world;
struct world {
  uint64_t now;       /* virtual ns */
  /* the program's own work between two regions, for the way the last one
   * took (0: none), and whether the team's workers slow it */
  double between;
  double between_after_team;
  uint64_t last_team; /* when the team last ran a region (workers spin 100 us) */
  uint64_t last_lend; /* when the last lent region ended */
  double work;        /* a region's work, serial ns */
  size_t p;
  /* the region's cost on the team, for this world's state */
  double (*team_cost)(const world *w);
  double lend_cost;   /* 0: no OpenMP in the process */
  /* the lent region's cost for this world's state, when it depends on it */
  double (*lend_cost_of)(const world *w);
  /* batches: after every batch-th region, the program's batch_gap more (its
   * own batch of OpenMP regions); 0: none */
  unsigned batch;
  double batch_gap;
  unsigned ran[TT__WAYS];
  double spent;       /* ns over all regions */
  bool team_fixed;    /* TEAMS_RUN=team */
};

static double team_plain(const world *w) {
  double wake = w->now - w->last_team > 100 * US ? 40 * US : 0;
  return w->work / (double)w->p + 0.4 * US + wake;
}

static const char key; /* a site no real loop has */
static tt__loops tab; /* the synthetic tests' own table */
static uint64_t virtual_now; /* the rule's clock: the running world's */
static uint64_t clock_of_world(void) { return virtual_now; }
static uint64_t omp_spin; /* OpenMP's threads spin this long after a region */
static const world *running; /* the world run() is running */

/* Whose threads spin now, in the running world: the team's workers for
 * 100 us after a team region, OpenMP's for omp_spin after a lent one. */
static bool spins_in_world(tt__way x) {
  if (x == TT__WAY_TEAM)
    return running->last_team && running->now - running->last_team < 100 * US;
  if (x == TT__WAY_LEND)
    return running->last_lend && running->now - running->last_lend < omp_spin;
  return true;
}

/* Runs n regions of the world's loop; returns the way the last one took. */
static tt__way run(world *w, unsigned n) {
  tt__way way = TT__WAY_TEAM;
  for (unsigned i = 0; i < n; i++) {
    tt__way_plan plan;
    virtual_now = w->now;
    tt__loop *l = tt__loop_find(&tab, &key, w->p, w->p);
    running = w;
    way = tt__way_choose(&tab, l, w->p, TT__MODE_STATIC,
                         w->team_fixed ? TT__WAY_TEAM : TT__WAYS,
                         w->lend_cost > 0, spins_in_world, &plan);
    double ns;
    tt__way_cost c = {0, 0, 0, 0};
    if (way == TT__WAY_SERIAL) {
      ns = w->work;
      c.own_ns = (uint64_t)ns;
      c.own_chunks = w->p;
    } else if (way == TT__WAY_LEND) {
      ns = w->lend_cost_of ? w->lend_cost_of(w) : w->lend_cost;
      if (omp_spin && !spins_in_world(TT__WAY_LEND))
        ns += 40 * US; /* OpenMP's threads wake up */
    } else {
      ns = w->team_cost(w);
      c.own_ns = (uint64_t)(w->work / (double)w->p);
      c.own_chunks = 1;
    }
    w->now += (uint64_t)ns;
    if (way == TT__WAY_TEAM)
      w->last_team = w->now;
    if (way == TT__WAY_LEND)
      w->last_lend = w->now;
    c.ns = (uint64_t)ns + CLOCK_NS;
    c.end_ns = w->now;
    if (plan.timed)
      tt__way_record(&tab, &plan, way, &c);
    w->ran[way]++;
    w->spent += ns;
    /* the program's own work until the next region */
    double between = way == TT__WAY_TEAM && w->between_after_team > 0
                         ? w->between_after_team
                         : w->between;
    unsigned done = 0;
    for (int x = 0; x < TT__WAYS; x++)
      done += w->ran[x];
    if (w->batch && done % w->batch == 0)
      between += w->batch_gap;
    w->now += (uint64_t)between;
    w->spent += between;
  }
  return way;
}

static tt__loop peek(const world *w) {
  const tt__loop *l = tt__loop_peek(&tab, &key, w->p, w->p);
  cr_assert(l, "no record");
  return *l;
}

/* A fresh table; the team's workers spin 100 us after a region (as in
 * team_plain), OpenMP's threads omp_spin_ns. */
static void fresh(uint64_t omp_spin_ns) {
  memset(&tab, 0, sizeof tab);
  omp_spin = omp_spin_ns;
  tt__way_init(CLOCK_NS, 2 * CLOCK_NS, 100 * US, omp_spin_ns);
  tt__way_test_clock(clock_of_world);
}

/* ---- the rule ------------------------------------------------------------------ */

/* The team is cheaper (2 chunks of 2 us: 2.4 us against 4 on the caller):
 * it stays the way, and the caller alone, whose estimate from the team's
 * own share (4 us) is above it, is never even tried. */
Test(way, the_team_when_it_is_cheapest) {
  fresh(0);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_plain};
  cr_assert_eq(run(&w, 20000), TT__WAY_TEAM);
  tt__loop v = peek(&w);
  cr_assert_eq(v.cur, TT__WAY_TEAM);
  cr_assert(v.work > 3.9 * US && v.work < 4.1 * US, "work %.3g", v.work);
  cr_assert_eq(w.ran[TT__WAY_SERIAL], 0, "ran serially %u times",
               w.ran[TT__WAY_SERIAL]);
}

/* Empty regions: the caller alone (10 ns) beats the team (0.4 us) at once,
 * and the team's trials (each a wake-up, the workers sleep meanwhile) stay
 * a small share of the time. */
Test(way, the_caller_alone_for_cheap_regions) {
  fresh(0);
  world w = {.work = 10, .p = 2, .team_cost = team_plain};
  run(&w, 100);
  cr_assert_eq(peek(&w).cur, TT__WAY_SERIAL);
  run(&w, 200000);
  double best = 200100 * 10.0;
  cr_assert(w.spent < best * 1.10, "spent %.3g ns, the caller alone %.3g",
            w.spent, best);
  cr_assert_gt(w.ran[TT__WAY_TEAM], 2, "the team was never tried again");
}

/* A long region (10 ms of work on 2): the caller alone, whose estimate (20
 * ms) is above the team's, is never run. */
Test(way, never_a_long_region_on_the_caller) {
  fresh(0);
  world w = {.work = 20000 * US, .p = 2, .team_cost = team_plain};
  run(&w, 500);
  cr_assert_eq(w.ran[TT__WAY_SERIAL], 0);
  tt__loop v = peek(&w);
  cr_assert_eq(v.cur, TT__WAY_TEAM);
  cr_assert(v.work > 19000 * US && v.work < 21000 * US, "work %.3g", v.work);
}

/* Load comes and goes: while another process holds the worker's CPU the
 * team costs 20 us a region, then 2.4 again; the rule follows both ways
 * within a few ms of virtual time. */
static int loaded;
static double team_loaded(const world *w) {
  return loaded ? 20 * US : team_plain(w);
}

Test(way, follows_load_that_comes_and_goes) {
  fresh(0);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_loaded};
  loaded = 0;
  run(&w, 5000);
  cr_assert_eq(peek(&w).cur, TT__WAY_TEAM);
  loaded = 1;
  uint64_t t0 = w.now;
  while (peek(&w).cur != TT__WAY_SERIAL && w.now - t0 < 1000000000u)
    run(&w, 1);
  cr_assert_eq(peek(&w).cur, TT__WAY_SERIAL, "still on the loaded team");
  cr_assert_lt(w.now - t0, 200000000u, "%.3g ms to leave the loaded team",
               (double)(w.now - t0) / 1e6);
  run(&w, 20000);
  loaded = 0;
  t0 = w.now;
  while (peek(&w).cur != TT__WAY_TEAM && w.now - t0 < 10000000000u)
    run(&w, 1);
  cr_assert_eq(peek(&w).cur, TT__WAY_TEAM, "never back on the team");
  cr_assert_lt(w.now - t0, 1000000000u, "%.3g ms to come back to the team",
               (double)(w.now - t0) / 1e6);
}

static double team_contended_cheap(const world *w) {
  (void)w;
  return 2.4 * US;
}

/* OpenMP's threads hold the CPUs (the team competes with them: 6 us):
 * lending (3 us) wins over both the team and the caller alone (4 us). */
static double team_contended(const world *w) {
  (void)w;
  return 6 * US;
}

static double team_contended_costly(const world *w) {
  (void)w;
  return 14 * US;
}

Test(way, lends_when_openmp_holds_the_cpus) {
  fresh(0);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_contended,
             .lend_cost = 3 * US};
  run(&w, 20000);
  cr_assert_eq(peek(&w).cur, TT__WAY_LEND);
  double best = 20000 * 3 * US;
  cr_assert(w.spent < best * 1.06, "spent %.3g ns, lending alone %.3g", w.spent, best);
}

/* The team does well (2.4 us) and lending would cost 3: OpenMP's sleeping
 * threads would spin 5 ms after a lent region (libgomp's GOMP_SPINCOUNT)
 * beside the team's workers, a first trial's charge, so lending is not
 * tried within the 120 ms this loop runs: they are never woken. */
Test(way, no_lending_while_the_team_does_well) {
  fresh(5000 * US);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_plain, .lend_cost = 3 * US};
  run(&w, 50000);
  cr_assert_eq(w.ran[TT__WAY_LEND], 0, "lent %u regions", w.ran[TT__WAY_LEND]);
}

/* The state that used to sustain itself: OpenMP's threads spin for 5 ms
 * after a region and then compete with the team (6 us instead of 2.4), and
 * only the lent regions keep them spinning.  Lending is cheapest at first,
 * but a trial of the team outlasts the spin, finds the team cheaper and
 * stays on it. */
static double team_after_lending(const world *w) {
  if (w->last_lend && w->now - w->last_lend < 5000 * US)
    return 6 * US;
  return team_plain(w);
}

Test(way, a_lent_state_that_only_lending_sustains_ends) {
  fresh(5000 * US);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_after_lending,
             .lend_cost = 3 * US, .last_lend = 1};
  w.now = 2; /* OpenMP's threads spin at the start */
  for (int i = 0; i < 500 && (i < 2 || peek(&w).cur != TT__WAY_LEND); i++)
    run(&w, 1);
  cr_assert_eq(peek(&w).cur, TT__WAY_LEND, "lending should win while they spin");
  uint64_t t0 = w.now;
  while (peek(&w).cur != TT__WAY_TEAM && w.now - t0 < 20000000000u)
    run(&w, 1);
  cr_assert_eq(peek(&w).cur, TT__WAY_TEAM, "stayed lent");
  unsigned lent = w.ran[TT__WAY_LEND];
  run(&w, 100000);
  cr_assert_eq(peek(&w).cur, TT__WAY_TEAM);
  cr_assert_lt(w.ran[TT__WAY_LEND] - lent, 10, "lent again %u times",
               w.ran[TT__WAY_LEND] - lent);
}

/* What a region costs includes what it does to the program between
 * regions: here the team's region is the cheapest (2.4 us against 3 lent)
 * but its spinning workers slow the OpenMP region that follows (8 us
 * instead of 4), as libomp's did on the 2-core guest.  The gap after each
 * region counts with it, and lending wins. */
Test(way, counts_what_a_region_does_to_the_work_after_it) {
  fresh(0);
  world w = {.work = 4 * US, .p = 2, .team_cost = team_contended_cheap,
             .lend_cost = 3 * US, .between = 4 * US, .between_after_team = 8 * US};
  run(&w, 20000);
  cr_assert_eq(peek(&w).cur, TT__WAY_LEND);
  double best = 20000 * (3 + 4) * US;
  cr_assert(w.spent < best * 1.06, "spent %.3g ns, lending alone %.3g", w.spent, best);
}

/* Batches of ten team regions between batches of the program's OpenMP
 * regions (45 us): one region in ten carries that gap, and every way pays
 * it, 4.5 us a region.  Lent regions cost 6 us (10.5 with the gap), the
 * caller alone 10 (14.5), the team 14.  A trial's SETTLED regions in a row
 * seldom hold the gap and never keep it (steady within twice the cheapest,
 * less the costliest): a trial of the caller alone read 10 against
 * lending's 10.5, won, and the loop went to the caller until a trial of
 * lending took it back, again and again (libgomp's batches of ten, 2-core
 * guest: 6 switches in a bench sample, 1.11-1.19x lending).  A trial's
 * result carries the gap share cur's regions show, so the caller alone is
 * tried but never becomes cur. */
Test(way, a_batch_gap_counts_for_every_way) {
  fresh(0);
  world w = {.work = 10 * US, .p = 2, .team_cost = team_contended_costly,
             .lend_cost = 6 * US, .batch = 10, .batch_gap = 45 * US};
  run(&w, 200000); /* lending's mean has taken the gap in (HORIZON_NS) */
  cr_assert_eq(peek(&w).cur, TT__WAY_LEND);
  unsigned trials = 0, on_caller = 0;
  double spent = w.spent;
  for (unsigned i = 0; i < 200000; i++) {
    tt__loop before = peek(&w);
    run(&w, 1);
    tt__loop v = peek(&w);
    if (before.trial == TT__WAY_SERIAL && v.trial == TT__WAYS) {
      trials++;
      cr_assert_gt(v.est[TT__WAY_SERIAL], 13 * US,
                   "the caller alone's trial read %.0f ns without the gap",
                   v.est[TT__WAY_SERIAL]);
    }
    on_caller += v.cur == TT__WAY_SERIAL;
  }
  cr_assert_gt(trials, 0, "the caller alone was never tried");
  cr_assert_eq(on_caller, 0, "on the caller alone for %u regions", on_caller);
  double best = 200000 * (6 + 4.5) * US;
  cr_assert_lt(w.spent - spent, best * 1.05, "spent %.3g ms, lending alone %.3g",
               (w.spent - spent) / 1e6, best / 1e6);
}

/* A team trial that read a wake-up is tried again: the loop of the
 * process that ran one OpenMP loop, slept, then runs 2 us chunks on the
 * team (2.6 us a region; 4 on the caller alone, 3.3 lent).  The regions
 * in the first 60 us after the workers woke read 6.8 us, so the team's
 * first trial does, and the caller alone wins it; the team is tried again
 * within its charge and wins.  OpenMP's threads sleep (5 ms after a lent
 * region; lending wakes them, 40 us, and the team then runs at 6 us while
 * they spin): lending, charged that, is never tried.  The first 2000
 * regions cost within 10% of TEAMS_RUN=team's. */
static uint64_t team_woke_at;
static double team_woken(const world *w) {
  if (!w->last_team || w->now - w->last_team > 100 * US) {
    team_woke_at = w->now;
    return (40 + 6.8) * US;
  }
  if (w->now - team_woke_at < 60 * US)
    return 6.8 * US;
  if (w->last_lend && w->now - w->last_lend < 5000 * US)
    return 6 * US;
  return 2.6 * US;
}

Test(way, a_team_trial_that_read_a_wake_up_is_tried_again) {
  world base = {.work = 4 * US, .p = 2, .team_cost = team_woken, .lend_cost = 3.3 * US};
  world fixed = base;
  fixed.team_fixed = true;
  fresh(5000 * US);
  run(&fixed, 2000);
  fresh(5000 * US);
  world w = base;
  run(&w, 2000);
  cr_assert_lt(w.spent, fixed.spent * 1.1, "2000 regions: %.3g ms, the team alone %.3g",
               w.spent / 1e6, fixed.spent / 1e6);
  cr_assert_eq(w.ran[TT__WAY_LEND], 0, "lent %u regions", w.ran[TT__WAY_LEND]);
  run(&w, 20000);
  cr_assert_eq(peek(&w).cur, TT__WAY_TEAM);
}

/* Regions run until the loop is on the caller alone, no trial under way
 * (at most limit). */
static unsigned regions_until_the_caller(world *w, unsigned limit) {
  unsigned n = 0;
  for (; n < limit && (peek(w).cur != TT__WAY_SERIAL || peek(w).trial != TT__WAYS); n++)
    run(w, 1);
  return n;
}

/* A stall of the whole process is no way's fault: pairs of an OpenMP
 * region (2.5 us) and an empty team region (50 ns on the caller), next to
 * a process that holds a CPU, where for a few regions OpenMP's thread
 * waits a time slice (4 ms) whichever way the team region took.  The
 * caller alone's estimate takes that level while it lasts, and the old
 * estimates of lending and of the team (from before it) look cheaper; they
 * are tried, not believed, the caller alone is measured again beside them,
 * and the loop is back on the caller within a few regions of the stall's
 * end, for stalls of 4 to 16 regions.  (Believed, they kept a stall of 6
 * regions' loop on the team until the caller alone's 4 ms estimate had
 * waited out its budget, 128 ms: most of a bench sample at 2x.) */
Test(way, a_stall_of_the_whole_process_is_no_ways_fault) {
  fresh(0);
  world w = {.work = 50, .p = 2, .team_cost = team_contended_cheap,
             .lend_cost = 2.5 * US, .between = 2.5 * US};
  run(&w, 20000);
  cr_assert_eq(peek(&w).cur, TT__WAY_SERIAL);
  for (int stall = 4; stall <= 16; stall++) { /* its regions */
    w.between = 4000 * US;
    run(&w, (unsigned)stall);
    w.between = 2.5 * US;
    unsigned n = regions_until_the_caller(&w, 1000);
    cr_assert_lt(n, 40, "stall %d: %u regions after it before the caller alone again",
                 stall, n);
    double spent = w.spent;
    run(&w, 40000);
    double best = 40000 * (50 + 2.5 * US);
    cr_assert_lt(w.spent - spent, best * 1.1, "stall %d: the next 40000 regions cost "
                 "%.3g ms, the caller alone %.3g", stall, (w.spent - spent) / 1e6, best / 1e6);
  }
}

/* The same stall at the loop's start, over the first trials: the team's
 * and the caller alone's are made in it (4 ms a region), lending's after
 * it (5 us); lending, at a thousandth of the others, is a new level, and
 * the estimates from before it are tried again at once, not after the
 * budgets of 4 ms regions (a second and more).  For stalls over the first
 * 6 to 16 regions, the loop is on the caller within 200 regions of the
 * stall's end. */
Test(way, a_stall_over_the_first_trials_is_no_ways_fault) {
  for (unsigned stall = 6; stall <= 16; stall++) {
    fresh(0);
    world w = {.work = 50, .p = 2, .team_cost = team_contended_cheap,
               .lend_cost = 2.5 * US, .between = 4000 * US};
    run(&w, stall);
    w.between = 2.5 * US;
    unsigned n = regions_until_the_caller(&w, 100000);
    cr_assert_lt(n, 200, "a stall of %u: %u regions after it before the caller alone",
                 stall, n);
  }
}

/* TEAMS_RUN fixes the way: without a record nothing is timed; with one
 * (the auto schedule reads its loop's times) regions are sampled, but no
 * other way is ever tried, and OpenMP falls back to the team when it cannot
 * lend. */
Test(way, a_fixed_way_runs_only_that_way) {
  fresh(0);
  tt__way_plan plan;
  static const tt__way fixed[] = {TT__WAY_TEAM, TT__WAY_SERIAL, TT__WAY_LEND};
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(tt__way_choose(&tab, NULL, 2, TT__MODE_STATIC, fixed[k], true, NULL, &plan),
                 fixed[k]);
    cr_assert_null(plan.loop);
    cr_assert(!plan.timed);
  }
  cr_assert_eq(tt__way_choose(&tab, NULL, 2, TT__MODE_STATIC, TT__WAY_LEND, false, NULL, &plan),
               TT__WAY_TEAM, "nothing to lend to: the team");
  /* with a record: cheap regions the rule would run on the caller alone */
  for (int k = 0; k < 3; k++) {
    memset(&tab, 0, sizeof tab);
    for (int i = 0; i < 2000; i++) {
      virtual_now += 1000;
      tt__loop *l = tt__loop_find(&tab, &key, 2, 2);
      cr_assert_eq(tt__way_choose(&tab, l, 2, TT__MODE_STATIC, fixed[k], true, NULL, &plan),
                   fixed[k]);
      cr_assert_eq(l->trial, TT__WAYS, "a trial under a fixed way");
      tt__way_cost c = {10, 5, 1, virtual_now};
      tt__way_record(&tab, &plan, fixed[k], &c);
    }
    cr_assert_eq(tt__loop_peek(&tab, &key, 2, 2)->cur, fixed[k]);
  }
}

/* Sites are told apart by function and shape: another shape of the same
 * loop has a record of its own. */
Test(way, shapes_have_records_of_their_own) {
  fresh(0);
  world a = {.work = 10, .p = 2, .team_cost = team_plain};
  world b = {.work = 40000 * US, .p = 3, .team_cost = team_plain};
  run(&a, 50);
  run(&b, 50);
  cr_assert_eq(peek(&a).cur, TT__WAY_SERIAL);
  cr_assert_eq(peek(&b).cur, TT__WAY_TEAM);
  cr_assert_eq(b.ran[TT__WAY_SERIAL], 0);
}

/* ---- the real team ---------------------------------------------------------------- */

#define MAX_M 64
typedef struct counts {
  _Atomic unsigned runs[MAX_M];
} counts;

static void count(void *ctx, size_t c) {
  atomic_fetch_add(&((counts *)ctx)->runs[c], 1);
}

static void team_of(size_t n) {
  tt__way_test_clock(NULL);
  char s[16];
  snprintf(s, sizeof s, "%zu", n);
  setenv("TEAMS_NUM_THREADS", s, 1);
  setenv("TEAMS_RUN", "auto", 1);
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  memset(tt__way_mine(), 0, sizeof(tt__loops));
}

/* Empty regions on the real team end up on the caller alone (the team
 * costs 0.3-0.5 us a region on the 2-core guests, the caller 10-20 ns), and
 * every chunk of every region runs once whichever way it took. */
Test(way, real_cheap_regions_run_on_the_caller) {
  team_of(2);
  counts x;
  for (int i = 0; i < 5000; i++) {
    memset(&x, 0, sizeof x);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC, NULL), 0);
    for (size_t c = 0; c < 2; c++)
      cr_assert_eq(atomic_load(&x.runs[c]), 1, "region %d chunk %zu ran %u times",
                   i, c, atomic_load(&x.runs[c]));
  }
  const tt__loop *v = tt__loop_peek(tt__way_mine(), (const void *)count, 2, 2);
  cr_assert(v);
  cr_assert_eq(v->cur, TT__WAY_SERIAL, "team %.0f ns, caller %.0f ns",
               v->est[TT__WAY_TEAM], v->est[TT__WAY_SERIAL]);
}

/* First touch always runs on the team's workers, however cheap. */
Test(way, first_touch_always_on_the_team) {
  team_of(2);
  for (int i = 0; i < 2000; i++) {
    int parallel = 0;
    counts x;
    memset(&x, 0, sizeof x);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC_PLACED, &parallel), 0);
    cr_assert_eq(parallel, 1, "region %d ran on the caller alone", i);
  }
  cr_assert_null(tt__loop_peek(tt__way_mine(), (const void *)count, 2, 2));
}
