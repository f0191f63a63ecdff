/* How a region runs (launcher/way.c, docs/protocol.md item 44): the way's
 * cost model.
 *
 * The synthetic tests set the process's constants (tt__costs_set) and drive
 * tt__way_choose -> tt__way_record with costs of their own, in virtual
 * time: the formulas give what they say, the cheapest way wins in each
 * state of the threads, a loop's first region is a counted trial on the
 * team, numbers that keep a way out are measured again at a bounded share
 * of the loop's time, the work follows what the regions show, and the
 * workers' spin follows what it saves against the gap between regions.
 * The last tests run the real team: cheap regions end up serial,
 * first touch stays on the team, a region whose workers sleep and are not
 * woken still runs every chunk once, and two kernels alternating through
 * tt_launch keep records of their own.  Not benchmarks: nothing is timed
 * against a limit. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "team-internal.h"
#include "team-state.h"
#include "teams/kernel.h"
#include "teams/launch.h"
#include "teams/team.h"
#include "way.h"

/* the constants of the tests: as measured on a 2-core KVM guest */
#define FORK 300
#define CALL 3000
#define LAT 5000
#define LOOK 60

static tt__loops tab;
static const char key;
static uint64_t virtual_now = 1000000;
static uint64_t clock_of_world(void) { return virtual_now; }

static void fresh(void) {
  memset(&tab, 0, sizeof tab);
  tt__costs_set(FORK, CALL, LAT, LOOK);
  tt_atomic_store_relaxed(&tt__the_costs.lend[0], 0);
  tt_atomic_store_relaxed(&tt__the_costs.lend[1], 0);
  tt__way_test_clock(clock_of_world);
}

static tt__way_state asleep(size_t p) {
  (void)p;
  return (tt__way_state){.spinning = 0};
}
static tt__way_state spinning(size_t p) {
  return (tt__way_state){.spinning = p - 1};
}

/* One region of a loop of `work` ns that costs `cost` ns on whatever way
 * the plan took (own: the caller's chunks' time and share on the team). */
static tt__way_plan region(tt__loop *l, size_t m, size_t p, tt__mode mode,
                           const tt__way_state *s, double cost, double own,
                           double share, size_t woken, double gap) {
  tt__way_plan plan;
  virtual_now += (uint64_t)gap;
  tt__way_choose(&tab, l, m, p, mode, TT__WAYS, s, &plan);
  virtual_now += (uint64_t)cost;
  tt__way_cost c = {(uint64_t)cost, (uint64_t)own, share, woken, virtual_now, 0};
  if (plan.way == TT__WAY_SERIAL) {
    c.own_ns = (uint64_t)cost;
    c.own_share = 1;
    c.woken = 0;
  }
  tt__way_record(&tab, &plan, plan.way, &c);
  return plan;
}

/* ---- the formulas ----------------------------------------------------------------- */

Test(way, the_formulas) {
  fresh();
  tt__loop l = {.work = 20000};
  tt__way_state s0 = asleep(2), s1 = spinning(2);
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_SERIAL, true, 64, 2, TT__MODE_GREEDY, &s0),
                     20000, 1e-3);
  /* spinning: F(2) + E/2 */
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, false, 64, 2, TT__MODE_GREEDY, &s1),
                     FORK + 10000, 1e-3);
  /* asleep, greedy: A = CALL + LAT = 8000, LAT done by then, the rest shared */
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, true, 64, 2, TT__MODE_GREEDY, &s0),
                     FORK + 8000 + (20000 - LAT) / 2.0, 1e-3);
  /* asleep, not woken: the caller alone, its chunks and the sleeper's */
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, false, 2, 2, TT__MODE_STATIC, &s0),
                     20000, 1e-3);
  /* asleep, static: the sleeper comes before the caller's chunk is done */
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, true, 2, 2, TT__MODE_STATIC, &s0),
                     8000 + 10000, 1e-3);
  /* asleep, static, a chunk shorter than the wake-up: the caller runs both */
  l.work = 8000;
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, true, 2, 2, TT__MODE_STATIC, &s0),
                     CALL + 8000, 1e-3);
  /* asleep, greedy, done before the sleeper comes: (E + CALL) / 1 */
  l.work = 4000;
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, true, 64, 2, TT__MODE_GREEDY, &s0),
                     4000 + CALL, 1e-3);
  /* four participants, one worker spinning, two asleep and woken */
  l.work = 100000;
  tt__way_state s = {.spinning = 1};
  double a = 2 * CALL + LAT, done = 1 * a + LAT;
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, true, 64, 4, TT__MODE_GREEDY, &s),
                     3 * FORK + a + (100000 - done) / 4, 1e-2);
  /* ... not woken: the caller and the spinner */
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, false, 64, 4, TT__MODE_GREEDY, &s),
                     FORK + 50000, 1e-2);
  /* the loop's extra is added to the team's ways */
  l.extra[0] = l.extra[1] = 700;
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_TEAM, false, 64, 4, TT__MODE_GREEDY, &s),
                     FORK + 50000 + 700, 1e-2);
  /* openmp: not measured, its threads priced as the team's workers in
   * their state -- spinning, or asleep and woken, plus their tail -- then
   * lend + E/p */
  tt__way_state omp = {.spinning = 1, .can_lend = true, .omp_spins = true};
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_OPENMP, true, 64, 4, TT__MODE_GREEDY, &omp),
                     3 * FORK + 25000, 1e-2);
  omp = (tt__way_state){.spinning = 1, .can_lend = true, .omp_tail_ns = 9000};
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_OPENMP, true, 64, 4, TT__MODE_GREEDY, &omp),
                     3 * FORK + (3 * CALL + LAT) + (100000 - LAT) / 4 + 9000, 1e-2);
  tt_atomic_store_relaxed(&tt__the_costs.lend[0], 2000);
  cr_assert_float_eq(tt__way_predict(&l, TT__WAY_OPENMP, true, 64, 4, TT__MODE_GREEDY, &s),
                     2000 + 25000, 1e-2);
}

/* ---- the choice ------------------------------------------------------------------- */

/* A loop's first region runs on the team, waking the sleepers, as a
 * counted trial; it gives the work from the caller's chunks. */
Test(way, a_new_loop_is_a_trial_on_the_team) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = asleep(2);
  tt__way_plan plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 12000, 9000, 0.75, 1, 0);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
  cr_assert(plan.wake && plan.trial && plan.timed);
  cr_assert_eq(tab.trials, 1);
  cr_assert_float_eq(tab.trial_ns, 12000, 1e-3);
  cr_assert_float_eq(l->work, 12000, 1e-2, "work %f", (double)l->work);
}

/* The same loop in each state of the threads: each way where the formulas
 * put it, and the sleepers woken only where the wake pays. */
Test(way, the_cheapest_way_in_each_state) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s0 = asleep(2), s1 = spinning(2);
  tt__way_plan plan;
  struct { float work; bool spin; tt__way way; bool wake; } cases[] = {
      {100, false, TT__WAY_SERIAL, true},   /* empty: never the team */
      {100, true, TT__WAY_SERIAL, true},
      {1000, false, TT__WAY_SERIAL, true},  /* 1 us: not worth a wake */
      {1000, true, TT__WAY_TEAM, false},    /* ... but spinning workers */
      {10000, false, TT__WAY_SERIAL, true}, /* 10 us: the wake eats the gain */
      {20000, false, TT__WAY_TEAM, true},   /* 20 us: wake */
      {20000, true, TT__WAY_TEAM, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    l->work = cases[i].work;
    l->untimed_left = 0;
    l->budget_ns[0] = l->budget_ns[1] = 0;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS,
                   cases[i].spin ? &s1 : &s0, &plan);
    cr_assert_eq(plan.way, cases[i].way, "case %zu: way %d", i, plan.way);
    if (plan.way == TT__WAY_TEAM)
      cr_assert_eq(plan.wake, cases[i].wake, "case %zu: wake %d", i, plan.wake);
  }
}

/* Of four participants, one spins and two sleep: a region worth the
 * spinner but not a wake leaves the sleepers out; a long one wakes them. */
Test(way, sleepers_sit_out_a_region_not_worth_their_wake) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 256, 4);
  tt__way_state s = {.spinning = 1};
  tt__way_plan plan;
  l->work = 8000;
  tt__way_choose(&tab, l, 256, 4, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
  cr_assert(!plan.wake, "woke for 8 us of work");
  l->work = 400000;
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 256, 4, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
  cr_assert(plan.wake, "a 400 us region left two sleepers out");
}

/* The work follows the regions: a serial region's time, or its chunks
 * over their share on the team; a loop whose work grows moves to the team. */
Test(way, the_work_follows_the_regions) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = asleep(2);
  /* the trial: its worker woken late (its cost is the woken extra) */
  region(l, 64, 2, TT__MODE_GREEDY, &s, 30000, 2000, 0.5, 1, 0);
  for (int i = 0; i < 40; i++)
    region(l, 64, 2, TT__MODE_GREEDY, &s, 1000, 0, 0, 0, 500);
  cr_assert_float_eq(l->work, 1000, 50, "work %f", (double)l->work);
  tt__way_plan plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 1000, 0, 0, 0, 500);
  cr_assert_eq(plan.way, TT__WAY_SERIAL);
  /* the loop now costs 200 us a region: serial timings say so */
  for (int i = 0; i < 40 && plan.way == TT__WAY_SERIAL; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 200000, 0, 0, 0, 500);
  cr_assert_eq(plan.way, TT__WAY_TEAM, "work %f", (double)l->work);
  cr_assert(plan.wake);
}

/* A loop kept off the team by a costly measurement (a wake-up delayed by
 * a time slice, say) is tried on the team again once it has spent
 * TT__OVERHEAD_DIV times the difference, and only then: the trials stay
 * a bounded share of the loop's time. */
/* One region of a 20 us loop on spinning workers, which costs `team` ns
 * on the team (its caller's chunks 10 us, half the work); the way it took. */
static tt__way kept_out_region(tt__loop *l, double team, double *cost) {
  tt__way_state s = spinning(2);
  tt__way_plan plan;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  bool alone = plan.way == TT__WAY_SERIAL;
  *cost = alone ? 20000 : team;
  virtual_now += (uint64_t)*cost;
  tt__way_cost c = {(uint64_t)*cost, alone ? 20000u : 10000u, alone ? 1 : 0.5, 0,
                    virtual_now, 0};
  tt__way_record(&tab, &plan, plan.way, &c);
  return plan.way;
}

Test(way, a_way_kept_out_is_measured_again_at_a_bounded_cost) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  l->work = 20000;
  l->extra[0] = l->extra[1] = 40000; /* the team measured 50 us over its 10 */
  double spent = 0, tried = 0, cost;
  unsigned trials = 0;
  for (int i = 0; i < 2000; i++) {
    if (kept_out_region(l, 50300, &cost) == TT__WAY_TEAM) {
      trials++;
      tried += cost - 20000;
    }
    spent += cost;
  }
  cr_assert_gt(trials, 0, "the team was never measured again");
  cr_assert_lt(tried / spent, 2.0 / TT__OVERHEAD_DIV, "trials cost %.1f%%",
               100 * tried / spent);
  /* and when the team recovers, the loop comes back to it */
  unsigned team = 0;
  for (int i = 0; i < 20000; i++)
    team += kept_out_region(l, 10300, &cost) == TT__WAY_TEAM && i >= 19000;
  cr_assert_eq(team, 1000, "the recovered team ran %u of the last 1000", team);
}

/* A way kept out whose tries cost far more than the formula predicts (a
 * wake-up that met a time slice, each time): the next try waits for the
 * measured excess, and trials stay within their bound. */
Test(way, a_try_dearer_than_predicted_waits_for_its_measured_excess) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  l->work = 20000;
  l->extra[0] = l->extra[1] = 20000; /* its regions on the team measured dear */
  tt__way_state s = asleep(2);
  float pred = tt__way_predict(l, TT__WAY_TEAM, true, 64, 2, TT__MODE_GREEDY, &s);
  cr_assert_gt(pred, 20000); /* kept out */
  double spent = 0, tried = 0;
  unsigned trials = 0;
  for (int i = 0; i < 20000; i++) {
    tt__way_plan plan;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
    bool team = plan.way == TT__WAY_TEAM;
    double cost = team ? 10 * pred : 20000;
    virtual_now += (uint64_t)cost;
    tt__way_cost c = {(uint64_t)cost, team ? 10000u : 20000u, team ? 0.5 : 1,
                      team ? 1u : 0u, virtual_now, 0};
    tt__way_record(&tab, &plan, plan.way, &c);
    if (team) {
      trials++;
      tried += cost - 20000;
    }
    spent += cost;
  }
  cr_assert_gt(trials, 1, "the team was never tried again");
  cr_assert_lt(tried / spent, 2.0 / TT__OVERHEAD_DIV, "trials cost %.1f%% in %u",
               100 * tried / spent, trials);
}

/* openmp: tried once where its prior (OpenMP's threads priced as the
 * team's workers in the same state) wins and nothing is known of it, then
 * chosen when its measured cost is lower. */
Test(way, openmp_is_tried_once_then_chosen_by_its_cost) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = {0, true, true, 0, 0};
  l->work = 100000;
  tt__way_plan plan;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP);
  cr_assert(plan.trial && plan.timed);
  virtual_now += 51000;
  tt__way_cost c = {51000, 0, 0, 0, virtual_now, 0};
  tt__way_record(&tab, &plan, TT__WAY_OPENMP, &c);
  cr_assert_eq(tt_atomic_load_relaxed(&tt__the_costs.lend[1]), 1000);
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP, "openmp at 1 us beside a wake-up");
  cr_assert(!plan.trial);
  /* OpenMP's threads asleep: not measured in that state, and the team is
   * dearer... a trial again; measured dear, the team wins */
  s.omp_spins = false;
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP);
  cr_assert(plan.trial);
  virtual_now += 80000;
  c = (tt__way_cost){80000, 0, 0, 0, virtual_now, 0};
  tt__way_record(&tab, &plan, TT__WAY_OPENMP, &c);
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
}

/* OpenMP's threads spin (the program's own regions between ours), the
 * team's workers sleep beside them and a wake-up costs more than the
 * loop's work: the caller alone beats the team, yet openmp, not measured,
 * is tried and then kept (the libgomp "pairs" condition: until 2026-12
 * openmp was tried only where the team would win, and such a loop ran
 * serial for good, 1.3x the region written as an OpenMP loop). */
Test(way, openmp_is_tried_where_the_caller_alone_beats_the_team) {
  fresh();
  tt__costs_set(FORK, 11000, 21000, LOOK);
  tt__loop *l = tt__loop_find(&tab, &key, 2, 2);
  tt__way_state s = {.spinning = 0, .can_lend = true, .omp_spins = true};
  l->work = 9400;
  tt__way_plan plan;
  tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP, "way %d", plan.way);
  cr_assert(plan.trial && plan.timed);
  virtual_now += 5900;
  tt__way_cost c = {5900, 0, 0, 0, virtual_now, 0};
  tt__way_record(&tab, &plan, TT__WAY_OPENMP, &c);
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP);
  cr_assert(!plan.trial);
}

/* A loop's imbalance on OpenMP's threads is its own: a static loop whose
 * lent regions wait 187 us for their slowest thread makes its own openmp
 * dear, not every loop's.  The process's lend is what lending cost beyond
 * the threads' longest part; a loop's lent, its regions beyond E / p. */
Test(way, a_loops_imbalance_on_openmp_stays_its_own) {
  fresh();
  static const char key2;
  tt__way_state s = {0, true, true, 0, 0};
  tt__loop *a = tt__loop_find(&tab, &key, 64, 2);
  a->work = 400000;
  for (int i = 0; i < 3; i++) {
    tt__way_plan plan;
    a->untimed_left = 0;
    tt__way_choose(&tab, a, 64, 2, TT__MODE_STATIC, TT__WAYS, &s, &plan);
    plan.way = TT__WAY_OPENMP; /* as if chosen: the record is the test */
    virtual_now += 388000;
    tt__way_cost c = {388000, 0, 0, 0, virtual_now, 387000};
    tt__way_record(&tab, &plan, TT__WAY_OPENMP, &c);
  }
  cr_assert_eq(tt_atomic_load_relaxed(&tt__the_costs.lend[1]), 1000);
  cr_assert_float_eq(tt__way_predict(a, TT__WAY_OPENMP, true, 64, 2, TT__MODE_STATIC, &s),
                     388000, 1);
  tt__loop *b = tt__loop_find(&tab, &key2, 64, 2);
  b->work = 400000;
  cr_assert_float_eq(tt__way_predict(b, TT__WAY_OPENMP, true, 64, 2, TT__MODE_GREEDY, &s),
                     201000, 1);
}

/* A lent region leaves OpenMP's threads spinning after it (its tail,
 * lend.c): where they sleep, openmp costs its tail too, and a try of it
 * waits until the loop has spent TT__OVERHEAD_DIV times the tail -- a
 * runtime that spins 200 ms after a region is not woken every few regions,
 * each time taking the team's CPUs for that long.  Where they spin already
 * the try leaves nothing new: made at once. */
Test(way, a_lent_regions_tail_bounds_its_tries) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = {1, true, false, 5e6f, 0}; /* a 5 ms tail */
  l->work = 100000;
  double spent = 0, tried = 0;
  unsigned tries = 0;
  for (int i = 0; i < 20000; i++) {
    tt__way_plan plan;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
    /* the team as predicted; openmp at 1 us over E / 2, plus its tail */
    double cost = plan.way == TT__WAY_OPENMP ? 51000
                  : plan.way == TT__WAY_TEAM ? FORK + 50000
                                             : 100000;
    virtual_now += (uint64_t)cost;
    tt__way_cost c = {(uint64_t)cost, plan.way == TT__WAY_SERIAL ? 100000 : 50000,
                      plan.way == TT__WAY_SERIAL ? 1 : 0.5, 0, virtual_now, 0};
    tt__way_record(&tab, &plan, plan.way, &c);
    if (plan.way == TT__WAY_OPENMP) {
      cr_assert(plan.trial, "region %d: openmp chosen beside its tail", i);
      tries++;
      cost += 5e6;
      tried += cost;
    }
    spent += cost;
  }
  cr_assert_gt(tries, 0, "openmp was never tried");
  cr_assert_eq(tt_atomic_load_relaxed(&tt__the_costs.lend[0]), 1000);
  cr_assert_lt(tried / spent, 2.0 / TT__OVERHEAD_DIV, "tries with their tails cost %.1f%% in %u",
               100 * tried / spent, tries);
  /* spinning already (the program's own OpenMP loops, no lend of ours
   * within their spin): the try leaves nothing new, made at once where
   * the team would win */
  s.omp_spins = true;
  s.omp_tail_ns = 0;
  l->untimed_left = 0;
  tt__way_plan plan;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_OPENMP);
  cr_assert(plan.trial);
  /* measured: the tail where they sleep, none where they spin */
  tt_atomic_store_relaxed(&tt__the_costs.lend[1], 100);
  float e = l->work;
  cr_assert_float_eq(tt__way_predict(l, TT__WAY_OPENMP, true, 64, 2, TT__MODE_GREEDY, &s),
                     100 + e / 2, 1e-3);
  s.omp_spins = false;
  s.omp_tail_ns = 5e6f;
  cr_assert_float_eq(tt__way_predict(l, TT__WAY_OPENMP, true, 64, 2, TT__MODE_GREEDY, &s),
                     1000 + e / 2 + 5e6, 1);
}

/* OpenMP's threads spinning because of our own lends: each try of openmp
 * prolongs that spin by the time since the last lent region (lend.c), and
 * the tries wait for TT__OVERHEAD_DIV times that too.  (Counted as free,
 * tries every few dozen regions of a loop best on the caller alone kept
 * OpenMP's threads spinning for good, beside the caller: a program of
 * 20,000 regions of 0.6 us ran 1.4x its time alone.) */
Test(way, tries_of_openmp_pay_the_spin_they_prolong) {
  fresh();
  const float spin = 5e6f, tail = spin / 2; /* S 5 ms, one of two CPUs */
  tt_atomic_store_relaxed(&tt__the_costs.lend[1], 1000);
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  l->work = 600;
  uint64_t last_lend = virtual_now;
  double spent = 0, tried = 0;
  unsigned tries = 0;
  for (int i = 0; i < 200000; i++) {
    float since = (float)(virtual_now - last_lend);
    tt__way_state s = {0, true, true, since < spin ? tail * since / spin : 0, 0};
    tt__way_plan plan;
    l->untimed_left = 0;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
    double cost = plan.way == TT__WAY_OPENMP ? 1300 : plan.way == TT__WAY_TEAM ? FORK + 300 + 2000 : 600;
    virtual_now += (uint64_t)cost;
    tt__way_cost c = {(uint64_t)cost, plan.way == TT__WAY_SERIAL ? 600 : 300,
                      plan.way == TT__WAY_SERIAL ? 1 : 0.5, 0, virtual_now, 0};
    tt__way_record(&tab, &plan, plan.way, &c);
    if (plan.way == TT__WAY_OPENMP) {
      tries++;
      tried += cost + s.omp_tail_ns;
      cost += s.omp_tail_ns;
      last_lend = virtual_now;
    }
    spent += cost;
  }
  cr_assert_gt(tries, 0, "openmp was never tried");
  cr_assert_lt(tried / spent, 2.0 / TT__OVERHEAD_DIV,
               "tries with the spin they prolong cost %.1f%% in %u", 100 * tried / spent, tries);
}

/* A world of one loop beside OpenMP's threads, which spin S after each
 * region lent to them (and for good where the program keeps them
 * spinning with regions of its own), and take the team's CPUs meanwhile:
 * lent 3.9 us a region, serial 6, the team 3.3 where they sleep and 9
 * beside them.  Returns the share of the last half's time that ran lent;
 * *over_lent, the whole run's time over that of every region lent. */
static double spin_world(bool program_spins, double *over_lent) {
  fresh();
  const uint64_t spin = 1000000; /* S: 1 ms */
  tt_atomic_store_relaxed(&tt__the_costs.lend[1], 900);
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  l->work = 6000;
  uint64_t start = virtual_now, end = start + 400000000u, half = start + 200000000u;
  uint64_t last_lend = virtual_now; /* the program's first region */
  double lent_late = 0, late = 0;
  size_t n = 0;
  while (virtual_now < end) {
    bool spins = program_spins || virtual_now - last_lend < spin;
    tt__way_state s = {spins ? 0 : 1, true, spins, spins ? 0 : (float)spin / 2,
                       spins ? (float)spin + 2000000 : 0};
    tt__way_plan plan;
    l->untimed_left = 0;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
    double cost = plan.way == TT__WAY_OPENMP ? 3900
                  : plan.way == TT__WAY_SERIAL ? 6000
                  : spins ? 9000 : 3300;
    virtual_now += (uint64_t)cost;
    tt__way_cost c = {(uint64_t)cost, plan.way == TT__WAY_SERIAL ? 6000 : 3000,
                      plan.way == TT__WAY_SERIAL ? 1 : 0.5,
                      plan.way == TT__WAY_TEAM && spins, virtual_now,
                      plan.way == TT__WAY_OPENMP ? 3000 : 0};
    tt__way_record(&tab, &plan, plan.way, &c);
    if (plan.way == TT__WAY_OPENMP)
      last_lend = virtual_now;
    n++;
    if (virtual_now > half) {
      late += cost;
      lent_late += plan.way == TT__WAY_OPENMP ? cost : 0;
    }
  }
  *over_lent = (double)(virtual_now - start) / (3900.0 * (double)n);
  return lent_late / late;
}

/* Lent beside OpenMP's spinning threads, a loop keeps them spinning, and
 * the team as it runs once they sleep is never seen: lending pauses, a
 * trial of the team where they sleep, once the loop's regret and the
 * team's budget cover the pause's cost (a pause that finds the program's
 * own spin is paid from the team's budget, so those pauses cost at most
 * 1/TT__OVERHEAD_DIV of the loop's time).  libgomp's `solo` condition: the program's one OpenMP region,
 * then the loop lent 3.9-4.2 us a region where the team alone takes 3.3. */
Test(way, lending_pauses_where_the_spin_it_keeps_hides_the_team) {
  double over;
  double lent = spin_world(false, &over);
  cr_log_info("the spin the lent regions': lent %.1f%% of the last 200 ms", 100 * lent);
  cr_assert_lt(lent, 0.1, "the loop ran %.0f%% of its last 200 ms lent", 100 * lent);
  /* where the program keeps them spinning, lending wins, and the pauses
   * that find it out (with the team's tries) stay within their bound */
  lent = spin_world(true, &over);
  cr_log_info("beside the program's spinners: lent %.0f%%, %.1f%% over every "
              "region lent", 100 * lent, 100 * (over - 1));
  cr_assert_gt(lent, 0.8, "lent %.0f%% beside the program's spinners", 100 * lent);
  cr_assert_lt(over, 1 + 2.0 / TT__OVERHEAD_DIV,
               "%.1f%% over every region lent", 100 * (over - 1));
}

/* Until the probe has measured `fork` the team competes with none in its
 * formula, and the loop's extra, measured by its team regions, carries
 * it: a loop the team halves runs on the team, and one whose team regions
 * cost more than its work runs serial (a probe that found no sample on 16
 * CPUs once kept the team out of whole programs). */
Test(way, without_fork_the_extra_carries_it) {
  fresh();
  tt_atomic_store_relaxed(&tt__the_costs.fork, 0);
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = spinning(2);
  l->work = 8000;
  tt__way_plan plan;
  for (int i = 0; i < 5; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 4500, 4000, 0.5, 0, 0);
  cr_assert_eq(plan.way, TT__WAY_TEAM, "the team halves it");
  cr_assert_float_eq(l->extra[0], 500, 1, "extra %f", (double)l->extra[0]);
  /* the same loop where a team region costs 9 us: serial once the
   * extra has followed (the median of three) */
  for (int i = 0; i < 8; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 9000, 4000, 0.5, 0, 0);
  cr_assert_eq(plan.way, TT__WAY_SERIAL, "way %d, extra %f", (int)plan.way,
               (double)l->extra[0]);
}

/* The spin after a team region: SPIN_WORTH times what spinning saves the
 * next region while the thread's regions come closer than that, else none. */
Test(way, the_spin_follows_the_gap) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  tt__way_state s = spinning(2);
  l->work = 40000;
  tt__way_plan plan;
  for (int i = 0; i < 20; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 20300, 20000, 0.5, 0, 20000);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
  /* asleep: FORK + 8000 + (40000 - 5000)/2 = 25800; spinning 20300 */
  /* worth TT__OVERHEAD_DIV x 5500 = 176000; the deadline twice that */
  cr_assert_gt(plan.linger_ns, 340000, "linger %llu", (unsigned long long)plan.linger_ns);
  cr_assert_lt(plan.linger_ns, 365000, "linger %llu", (unsigned long long)plan.linger_ns);
  for (int i = 0; i < 20; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 20300, 20000, 0.5, 0, 500000);
  cr_assert_eq(plan.linger_ns, 0, "a 500 us gap: spun %llu ns",
               (unsigned long long)plan.linger_ns);
  /* and a gap just within it: spun again */
  for (int i = 0; i < 20; i++)
    plan = region(l, 64, 2, TT__MODE_GREEDY, &s, 20300, 20000, 0.5, 0, 150000);
  cr_assert_gt(plan.linger_ns, 0, "a 150 us gap: no spin");
}

/* TEAMS_RUN fixes the way: no record, nothing timed, no trial. */
Test(way, a_fixed_way_runs_only_that_way) {
  fresh();
  tt__way_plan plan;
  static const tt__way fixed[] = {TT__WAY_TEAM, TT__WAY_SERIAL, TT__WAY_OPENMP};
  tt__way_state s = {0, true, false, 0, 0};
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  for (int k = 0; k < 3; k++) {
    tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, fixed[k], &s, &plan);
    cr_assert_eq(plan.way, fixed[k]);
    cr_assert(plan.fixed && !plan.trial);
    /* timed for the region's time alone (the auto schedule and the
     * driver's run-at-submit read it), nothing else learnt */
    cr_assert(plan.timed, "a loop with no last_ns is timed");
    tt__way_cost c = {3000, 3000, 1, 0, 0, 0};
    tt__way_record(&tab, &plan, fixed[k], &c);
    cr_assert_float_eq(l->last_ns, 3000, 1e-3);
    cr_assert_float_eq(l->work, 0, 1e-9, "a fixed way learns no work");
    cr_assert_float_eq(l->extra[0] + l->extra[1], 0, 1e-9);
    l->last_ns = 0;
  }
  /* once it has a number, timed one region in as many as keep the looks
   * cheap, like any loop */
  tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, TT__WAY_SERIAL, &s, &plan);
  tt__way_cost c = {100, 100, 1, 0, 0, 0}; /* looks of 60 ns: 1 in 20 */
  tt__way_record(&tab, &plan, TT__WAY_SERIAL, &c);
  cr_assert_eq(l->untimed_left, LOOK * TT__OVERHEAD_DIV / 100);
  tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, TT__WAY_SERIAL, &s, &plan);
  cr_assert(!plan.timed);
  /* nothing to look at (first touch): nothing timed */
  tt__way_choose(&tab, NULL, 2, 2, TT__MODE_STATIC, TT__WAY_TEAM, &s, &plan);
  cr_assert(plan.fixed && !plan.timed && plan.loop == NULL);
  s.can_lend = false;
  tt__way_choose(&tab, l, 2, 2, TT__MODE_STATIC, TT__WAY_OPENMP, &s, &plan);
  cr_assert_eq(plan.way, TT__WAY_TEAM, "nothing to lend to: the team");
}

/* A program's loops in turn keep their records: TT__LOOP_WAYS loops of
 * one set (found among many keys) alternate without taking each other's
 * record over, and one more takes over the record found least recently.
 * (With one record a set, two loops of a phase on one record made each
 * of their regions a first region, a trial on the team: a program of
 * 12,000 regions of 1 us ran 3x slower than on the caller alone.) */
Test(way, loops_in_turn_keep_their_records) {
  static const char keys[4096];
  const char *same[TT__LOOP_WAYS + 1];
  size_t n = 0, want = 0;
  fresh();
  for (size_t i = 0; i < sizeof keys && n < TT__LOOP_WAYS + 1; i++) {
    memset(&tab, 0, sizeof tab);
    size_t set = (size_t)(tt__loop_find(&tab, &keys[i], 64, 2) - tab.loop) / TT__LOOP_WAYS;
    if (n == 0)
      want = set;
    if (set == want)
      same[n++] = &keys[i];
  }
  cr_assert_eq(n, TT__LOOP_WAYS + 1, "no %d keys of one set", TT__LOOP_WAYS + 1);
  memset(&tab, 0, sizeof tab);
  for (int round = 0; round < 100; round++)
    for (size_t k = 0; k < TT__LOOP_WAYS; k++) {
      tt__loop *l = tt__loop_find(&tab, same[k], 64, 2);
      if (round > 0)
        cr_assert_float_eq(l->work, 1000 + k, 1e-3, "loop %zu lost its record", k);
      l->work = 1000 + (float)k;
    }
  tt__loop_find(&tab, same[1], 64, 2); /* same[0] is now the least recent */
  tt__loop *l = tt__loop_find(&tab, same[TT__LOOP_WAYS], 64, 2);
  cr_assert_float_eq(l->work, 0, 1e-9, "a new loop's record is fresh");
  cr_assert_null(tt__loop_peek(&tab, same[0], 64, 2));
  for (size_t k = 1; k < TT__LOOP_WAYS; k++)
    cr_assert_float_eq(tt__loop_peek(&tab, same[k], 64, 2)->work, 1000 + k, 1e-3);
}

/* Sites are told apart by function and shape. */
Test(way, shapes_have_records_of_their_own) {
  fresh();
  tt__loop *a = tt__loop_find(&tab, &key, 64, 2);
  a->work = 5;
  tt__loop *b = tt__loop_find(&tab, &key, 64, 3);
  cr_assert_neq(a, b);
  cr_assert_float_eq(b->work, 0, 1e-9);
  cr_assert_eq(tt__loop_peek(&tab, &key, 100, 2), a, "64 and 100: one class");
  cr_assert_null(tt__loop_peek(&tab, &key, 200, 2));
}

/* ---- the real team ---------------------------------------------------------------- */

#define MAX_M 64
typedef struct counts {
  _Atomic unsigned runs[MAX_M];
} counts;

static void count(void *ctx, size_t c) {
  atomic_fetch_add(&((counts *)ctx)->runs[c], 1);
}

static void team_of(size_t n, const char *spin_us) {
  tt__way_test_clock(NULL);
  char s[16];
  snprintf(s, sizeof s, "%zu", n);
  setenv("TEAMS_NUM_THREADS", s, 1);
  setenv("TEAMS_RUN", "auto", 1);
  if (spin_us)
    setenv("TEAMS_SPIN_US", spin_us, 1);
  else
    unsetenv("TEAMS_SPIN_US");
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  memset(tt__way_mine(), 0, sizeof(tt__loops));
}

/* Empty regions on the real team end up serial (on the caller alone), and
 * every chunk of every region runs once whichever way it took; the probe
 * measured fork, and a wake the wake constants. */
Test(way, real_cheap_regions_run_serial) {
  team_of(2, NULL);
  counts x;
  for (int i = 0; i < 5000; i++) {
    memset(&x, 0, sizeof x);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC, NULL), 0);
    for (size_t c = 0; c < 2; c++)
      cr_assert_eq(atomic_load(&x.runs[c]), 1, "region %d chunk %zu ran %u times",
                   i, c, atomic_load(&x.runs[c]));
  }
  /* a probe that found the worker not yet running is tried again later;
   * here at every region (its back-off is the product's, not under test),
   * until a try had the worker run its own chunk: on a loaded machine a
   * spinning worker can miss every region of several tries (60 s: a
   * liveness bound, not a timing) */
  uint64_t until = tt__now_ns() + 60000000000u;
  while (!tt_atomic_load_relaxed(&tt__the_team.probed) && tt__now_ns() < until) {
    tt_atomic_store_relaxed(&tt__the_team.probe_after, 0);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC, NULL), 0);
  }
  cr_assert_gt(tt_atomic_load_relaxed(&tt__the_costs.fork), 0,
               "fork not measured in %u probes", tt__the_team.probes);
  const tt__loops *t = tt__way_mine();
  cr_assert_gt(t->ran[TT__WAY_SERIAL] + 0u, 0u);
  /* the first, and the trials: a trial on the team of a loop best on the
   * caller alone costs at least one region alone beyond it, and trials
   * are paid from a budget of 1/TT__OVERHEAD_DIV of the loop's time (the
   * probe may not have measured fork yet: the team's formula then has
   * none, and its excess over the caller alone is the loop's extra) */
  cr_assert_leq(t->ran[TT__WAY_TEAM], 10 + 5000 / TT__OVERHEAD_DIV, "%llu empty regions on the team (%llu tried, %llu trials, %.0f us)",
                (unsigned long long)t->ran[TT__WAY_TEAM], (unsigned long long)t->tried[TT__WAY_TEAM],
                (unsigned long long)t->trials, t->trial_ns / 1e3);
  /* The wake constants: the probe's wakes found the worker asleep, or, on
   * a loaded machine where it was not yet, a later wake measures them
   * (every wake a holder makes is a sample): first-touch regions, which
   * wake every sleeper, with the worker sent to sleep at once after each
   * and the holder off its CPU meanwhile (60 s: a liveness bound). */
  tt_atomic_store_relaxed(&tt__the_team.linger_ns, 0);
  until = tt__now_ns() + 60000000000u;
  while ((tt_atomic_load_relaxed(&tt__the_costs.wake_call) == 0 ||
          tt_atomic_load_relaxed(&tt__the_costs.wake_lat) == 0) &&
         tt__now_ns() < until) {
    nanosleep(&(struct timespec){0, 2000000}, NULL);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC_PLACED, NULL), 0);
  }
  cr_assert_gt(tt_atomic_load_relaxed(&tt__the_costs.wake_call), 0);
  cr_assert_gt(tt_atomic_load_relaxed(&tt__the_costs.wake_lat), 0);
}

/* First touch always runs on the team's workers, however cheap. */
Test(way, first_touch_always_on_the_team) {
  team_of(2, NULL);
  for (int i = 0; i < 2000; i++) {
    int parallel = 0;
    counts x;
    memset(&x, 0, sizeof x);
    cr_assert_eq(tt__team_run(count, &x, 2, 2, TT__MODE_STATIC_PLACED, &parallel), 0);
    cr_assert_eq(parallel, 1, "region %d ran on the caller alone", i);
  }
  cr_assert_null(tt__loop_peek(tt__way_mine(), (const void *)count, 2, 2));
}

/* A region whose sleeping workers sit it out (wake not made): every chunk
 * runs once, static and greedy, on any number of participants, with the
 * workers asleep at every region (TEAMS_SPIN_US=0). */
static void spin_chunk(void *ctx, size_t c) {
  count(ctx, c);
  for (volatile int i = 0; i < 200; i++)
    ;
}
Test(way, sleepers_left_out_still_every_chunk_once) {
  team_of(4, "0");
  tt__thread *me = tt__me();
  for (int i = 0; i < 3000; i++) {
    counts x;
    memset(&x, 0, sizeof x);
    size_t p = 2 + (size_t)i % 3, m = i % 2 ? p : 2 + (size_t)i % 61;
    tt__mode mode = m == p ? TT__MODE_STATIC : TT__MODE_GREEDY;
    cr_assert(tt__try_take(me));
    tt__run_parallel(me, spin_chunk, &x, m, p, mode, i % 4 == 0, NULL);
    tt__release();
    for (size_t c = 0; c < m; c++)
      cr_assert_eq(atomic_load(&x.runs[c]), 1, "region %d (m %zu p %zu) chunk %zu ran %u times",
                   i, m, p, c, atomic_load(&x.runs[c]));
  }
}

/* Kernels launched through tt_launch have records of their own, keyed by
 * the kernel: a cheap and a costly one alternating end up apart. */
typedef struct { unsigned *x; unsigned reps; } spin_args;
TT_KERNEL(way_cheap, spin_args, a) { a->x[tt_get_global_id(0)] += 1; }
TT_KERNEL(way_costly, spin_args, a) {
  unsigned v = a->x[tt_get_global_id(0)];
  for (unsigned i = 0; i < a->reps; i++)
    v = v * 1664525u + 1013904223u;
  a->x[tt_get_global_id(0)] = v | 1;
}
Test(way, kernels_alternating_keep_records_of_their_own) {
  team_of(2, NULL);
  static unsigned x[256], y[4096];
  for (int i = 0; i < 400; i++) {
    tt_launch_config a = {.dims = 1, .global = {256}};
    tt_launch_config b = {.dims = 1, .global = {4096}};
    cr_assert_eq(tt_launch(&way_cheap, &(spin_args){x, 0}, &a), 0);
    cr_assert_eq(tt_launch(&way_costly, &(spin_args){y, 2000}, &b), 0);
  }
  for (int i = 0; i < 256; i++)
    cr_assert_eq(x[i], 400u);
  const tt__loops *t = tt__way_mine();
  int records = 0;
  float lo = 1e30f, hi = 0;
  for (int i = 0; i < TT__LOOPS; i++)
    if (t->loop[i].key == &way_cheap || t->loop[i].key == &way_costly) {
      records++;
      float w = t->loop[i].work;
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
    }
  cr_assert_eq(records, 2, "%d records for the two kernels", records);
  cr_assert_gt(hi, 20 * lo, "works %.0f and %.0f ns", (double)lo, (double)hi);
}

/* Every worker held in a signal handler (stopped, neither spinning nor
 * asleep in the futex): regions of every shape still complete, on the
 * caller, with every chunk once; released, the workers rejoin. */
static _Atomic int held, release_held;
static void hold(int sig) {
  (void)sig;
  atomic_fetch_add(&held, 1);
  while (!atomic_load(&release_held)) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  atomic_fetch_sub(&held, 1);
}
static void count_range(void *ctx, size_t b, size_t e) {
  for (size_t c = b; c < e; c++)
    count(ctx, c);
}
static void every_chunk_once(const char *when) {
  for (int i = 0; i < 300; i++) {
    counts x;
    memset(&x, 0, sizeof x);
    size_t m = i % 3 == 0 ? 3 : 40;
    if (i % 3 == 2)
      cr_assert_eq(tt_foreach_range(count_range, &x, m, 1, 3, TT_SCHED_STEAL), 0);
    else
      cr_assert_eq(tt_foreach_chunk(count, &x, m, 3), 0);
    for (size_t c = 0; c < m; c++)
      cr_assert_eq(atomic_load(&x.runs[c]), 1, "%s: region %d chunk %zu ran %u times",
                   when, i, c, atomic_load(&x.runs[c]));
  }
}
Test(way, regions_complete_on_the_caller_while_every_worker_is_held) {
  team_of(3, NULL);
  every_chunk_once("before");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = hold;
  sigemptyset(&sa.sa_mask);
  cr_assert_eq(sigaction(SIGUSR2, &sa, NULL), 0);
  atomic_store(&release_held, 0);
  size_t n = tt_team_size();
  for (size_t i = 1; i < n; i++)
    cr_assert_eq(pthread_kill(tt__the_team.workers[i].thread, SIGUSR2), 0);
  for (int k = 0; k < 20000 && atomic_load(&held) < (int)(n - 1); k++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  cr_assert_eq(atomic_load(&held), (int)(n - 1), "workers held: %d", atomic_load(&held));
  every_chunk_once("held");
  atomic_store(&release_held, 1);
  while (atomic_load(&held) > 0)
    ;
  every_chunk_once("released");
}

/* A try's debt is the loop's, not one state's: the team tried where its
 * workers spin costs 3 ms there (a spinning process beside it takes their
 * CPU); the next region, its workers asleep, runs on the team at its
 * formula's cost (that state's extra was forgotten by the try and is
 * measured again, a trial until its third sample).  The debt of the dear
 * try must still be paid before the next one: charged to the state it
 * was measured in only, the tries came every few regions (the 2-core
 * guest beside a spinning process: 250 tries, 8-18% of the program). */
Test(way, a_dear_tries_debt_outlives_a_change_of_state) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 2);
  l->work = 20000;
  l->extra[0] = l->extra[1] = 15000; /* kept out in both states */
  l->extra_nsamples[0] = l->extra_nsamples[1] = 1;
  tt__way_state spin = spinning(2), sleep = asleep(2);
  tt__way_plan plan;
  int i = 0;
  for (; i < 100000; i++) { /* serial until the team is tried */
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &spin, &plan);
    bool team = plan.way == TT__WAY_TEAM;
    uint64_t ns = team ? 3000000 : 20000;
    virtual_now += ns;
    tt__way_cost c = {ns, team ? 10000u : ns, team ? 0.5 : 1, 0, virtual_now, 0};
    tt__way_record(&tab, &plan, plan.way, &c);
    if (team)
      break;
  }
  cr_assert(plan.trial && plan.charge == 0, "the team was never tried");
  /* the loop's time that pays the debt back */
  float debt = -TT__OVERHEAD_DIV * l->budget_ns[0];
  cr_assert_gt(debt, TT__OVERHEAD_DIV * 2.9e6f);
  /* its workers asleep now: the woken extra was forgotten, the formula
   * says the team, and it costs what the formula says */
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS, &sleep, &plan);
  cr_assert_eq(plan.way, TT__WAY_TEAM);
  cr_assert(plan.trial, "a state with no sample of its extra: a trial");
  virtual_now += 15800;
  tt__way_cost c = {15800, 7900, 0.5, 1, virtual_now, 0};
  tt__way_record(&tab, &plan, plan.way, &c);
  cr_assert_lt(l->budget_ns[0], 0, "the debt was forgiven");
  /* the regions after, in either state (the team chosen where its workers
   * sleep, at the formula's cost; where they spin, once more as a trial
   * of a state with one sample, which adds its own excess to the debt):
   * no other try of the team where they spin before the loop has spent
   * the debt */
  double spent = 0;
  unsigned dear = 0;
  for (i = 0; spent < debt * 0.9; i++) {
    bool asleep_now = i % 3;
    tt__way_choose(&tab, l, 64, 2, TT__MODE_GREEDY, TT__WAYS,
                   asleep_now ? &sleep : &spin, &plan);
    bool team = plan.way == TT__WAY_TEAM;
    dear += team && !asleep_now;
    cr_assert_leq(dear, 1, "the team tried again after %.1f ms of a %.1f ms debt",
                  spent / 1e6, debt / 1e6);
    uint64_t ns = team ? asleep_now ? 15800 : 3000000 : 20000;
    virtual_now += ns;
    if (!team)
      spent += ns;
    tt__way_cost s = {ns, team ? 7900u : ns, team ? 0.5 : 1, team && asleep_now,
                      virtual_now, 0};
    tt__way_record(&tab, &plan, plan.way, &s);
  }
}

/* One region of a loop of 10 us on spinning workers (2 participants, the
 * caller's chunks half the work) that costs `team` on the team. */
static tt__way_plan spin_region(tt__loop *l, double team) {
  tt__way_state s = spinning(2);
  tt__way_plan plan;
  l->untimed_left = 0;
  virtual_now += 20000;
  tt__way_choose(&tab, l, 8, 2, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  bool alone = plan.way == TT__WAY_SERIAL;
  uint64_t ns = alone ? 10000 : (uint64_t)team;
  virtual_now += ns;
  tt__way_cost c = {ns, alone ? ns : 5000u, alone ? 1 : 0.5, 0, virtual_now, 0};
  tt__way_record(&tab, &plan, plan.way, &c);
  return plan;
}

/* A state's extra is known from its third sample: one slow region on
 * spinning workers (22 us where the formula says 5.3: a worker that met
 * a time slice) does not send the loop serial -- it did, and no later
 * region met spinning workers to correct it (8 groups of 1.3 us after
 * 20 us of host work ran serial, where the team took 0.7-0.9 of that
 * time) -- while two of three do; until the third, the team's regions in
 * that state are trials, and a dear one is owed. */
Test(way, one_slow_region_is_not_yet_a_states_extra) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 8, 2);
  l->work = 10000;
  tt__way_plan plan = spin_region(l, 22000);
  cr_assert(plan.way == TT__WAY_TEAM && plan.trial && plan.charge == 0);
  cr_assert_float_eq(l->extra[0], 0, 1e-3, "one sample is the extra: %f",
                     (double)l->extra[0]);
  cr_assert_lt(l->budget_ns[0], 0, "the dear trial is not paid for");
  plan = spin_region(l, 5400);
  cr_assert(plan.way == TT__WAY_TEAM && plan.trial, "one slow region sent it serial");
  plan = spin_region(l, 5400);
  cr_assert(plan.way == TT__WAY_TEAM && plan.trial);
  for (int i = 0; i < 20; i++) {
    plan = spin_region(l, 5400);
    cr_assert(plan.way == TT__WAY_TEAM && !plan.trial,
              "region %d: way %d, extra %f", i, (int)plan.way, (double)l->extra[0]);
  }
  /* a loop whose regions on spinning workers are slow in two of three:
   * serial from its second slow one */
  fresh();
  l = tt__loop_find(&tab, &key, 8, 2);
  l->work = 10000;
  spin_region(l, 22000);
  plan = spin_region(l, 22000);
  cr_assert(plan.way == TT__WAY_TEAM && plan.trial);
  cr_assert_gt(l->extra[0], 10000, "two slow samples: extra %f", (double)l->extra[0]);
  plan = spin_region(l, 22000);
  cr_assert_eq(plan.way, TT__WAY_SERIAL);
}

/* A loop's first region on the team that gives no work (the caller ran
 * none of its chunks: the workers took them all) is followed by a trial on
 * the caller alone, which measures it -- not by a trial on the team at
 * every region, as an empty 64-chunk loop on 16 CPUs made (5,201 trials
 * in 5,492 regions). */
Test(way, a_team_region_that_gave_no_work_is_followed_by_one_alone) {
  fresh();
  tt__loop *l = tt__loop_find(&tab, &key, 64, 16);
  tt__way_state s = spinning(16);
  tt__way_plan plan;
  tt__way_choose(&tab, l, 64, 16, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert(plan.way == TT__WAY_TEAM && plan.trial);
  virtual_now += 5000;
  tt__way_cost c = {5000, 0, 0, 0, virtual_now, 0}; /* the caller ran no chunk */
  tt__way_record(&tab, &plan, plan.way, &c);
  cr_assert(l->alone_next && l->work == 0);
  tt__way_choose(&tab, l, 64, 16, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert(plan.way == TT__WAY_SERIAL && plan.trial && plan.timed,
            "the loop with no work was tried on the team again");
  virtual_now += 300;
  c = (tt__way_cost){300, 300, 1, 0, virtual_now, 0};
  tt__way_record(&tab, &plan, plan.way, &c);
  cr_assert_float_eq(l->work, 300, 1e-3);
  /* with its work, chosen: 15 workers' fork for 300 ns of work is serial */
  l->untimed_left = 0;
  tt__way_choose(&tab, l, 64, 16, TT__MODE_GREEDY, TT__WAYS, &s, &plan);
  cr_assert(plan.way == TT__WAY_SERIAL && !plan.trial);
}
