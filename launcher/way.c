/* teams: how a region runs -- team (the team's workers), openmp (OpenMP's
 * threads) or serial (the caller alone) -- and how long the team's workers
 * spin after it (docs/protocol.md item 44: the rule, each constant and its
 * source).  Each way's cost is a formula of the loop's work E (ns on the
 * caller alone), the threads' state at that moment and the process's
 * constants (way-probe.c), plus the loop's measured miss for that way in
 * that state (way-loops.c: the record); the cheapest runs.  A number not
 * known yet is a trial, paid from the budget of the way it tries: a way
 * kept out gains 1/TT__OVERHEAD_DIV of the loop's predicted cost a region
 * and loses each trial's measured excess, so the numbers that keep it out
 * are measured again at a bounded share of the loop's time, however wrong.
 *
 * Only the thread that owns a table reads or writes it: no synchronization.
 * The constants are relaxed atomics (way.h). */
#include <math.h>
#include <string.h>

#include "atomic.h"
#include "prim.h"
#include "teams-driver.h"
#include "way.h"

#define NONE TT__WAYS
/* Sleeping after a gap of SPIN_WORTH times what spinning saves loses at
 * most 1/SPIN_WORTH of the loop's time: the budget of looks and trials. */
#define SPIN_WORTH ((float)TT__OVERHEAD_DIV)
/* The longest spin on the model's word: a longer gap is another phase
 * (a scheduler's time slice: EEVDF's is at most 3 ms). */
#define LINGER_MAX_NS 3e6f

static uint64_t (*now_ns)(void) = tt__now_ns;

void tt__way_test_clock(uint64_t (*now)(void)) { now_ns = now ? now : tt__now_ns; }

static float constant_ns(_Atomic uint32_t *c) { return (float)tt_atomic_load_relaxed(c); }

/* ---- the formulas ----------------------------------------------------------------- */

/* The team's cost before the loop's extra (E work, p participants, s of
 * the p - 1 workers spinning, k = p - 1 - s asleep, F = fork):
 *   the sleepers sit out (no wake call; their chunks are the caller's)
 *       F s + E / (s + 1)                          (static: + k E / p)
 *   the sleepers woken: the caller makes k wake calls and starts at once;
 *   they arrive at A = k wake_call + wake_lat and take what is left
 *   (fork.c): greedy, if the caller and the spinners are done by A,
 *   F s + (E + k wake_call) / (s + 1), else F (p - 1) + A + (E - D) / p
 *   with D = s A + wake_lat done by then; static, F s + A + E / p where a
 *   sleeper comes before the caller has run its own chunk, else
 *   F s + k wake_call + (k + 1) E / p. */
static float team_cost(float e, bool wake, size_t m, size_t p, tt__mode mode,
                       size_t spinning) {
  float fork = constant_ns(&tt__the_costs.fork);
  float s = (float)(spinning < p - 1 ? spinning : p - 1);
  float k = (float)(p - 1) - s, fp = (float)p;
  bool st = mode == TT__MODE_STATIC && m == p;
  if (!wake || k == 0)
    return fork * s + (st ? e / fp * (1 + k) : e / (s + 1));
  float call = constant_ns(&tt__the_costs.wake_call);
  float lat = constant_ns(&tt__the_costs.wake_lat);
  float a = k * call + lat;
  if (st)
    return fork * s + (lat < e / fp ? a + e / fp : k * call + (k + 1) * e / fp);
  float done = s * a + lat;
  if (done >= e)
    return fork * s + (e + k * call) / (s + 1);
  return fork * (fp - 1) + a + (e - done) / fp;
}

/* openmp's number in a state of OpenMP's threads: the loop's own `lent`,
 * else the process's `lend`; -1 where neither is known. */
static float openmp_number(const tt__loop *l, bool omp_spins) {
  if (l->lent_nsamples[omp_spins])
    return l->lent[omp_spins];
  float c = constant_ns(&tt__the_costs.lend[omp_spins]);
  return c > 0 ? c : -1;
}

float tt__way_predict(const tt__loop *l, tt__way x, bool wake, size_t m,
                      size_t p, tt__mode mode, const tt__way_state *s) {
  float e = l->work;
  if (x == TT__WAY_SERIAL)
    return e;
  if (x == TT__WAY_TEAM)
    return team_cost(e, wake, m, p, mode, s->spinning) +
           l->extra[wake && s->spinning < p - 1];
  /* openmp, + the tail where OpenMP's threads sleep: the lend starts their
   * spin (lend.c; where they spin it prolongs theirs, which only its
   * trials pay).  No number yet: priced as the team's workers in the same
   * state. */
  float tail = s->omp_spins ? 0 : s->omp_tail_ns, o = openmp_number(l, s->omp_spins);
  if (o < 0)
    return team_cost(e, !s->omp_spins, m, p, mode, s->omp_spins ? p - 1 : 0) + tail;
  return o + e / (float)p + tail;
}

/* ---- the choice -------------------------------------------------------------------- */

/* The ways a loop keeps out and tries again, in the order of its budget_ns. */
static const tt__way kept_out_way[2] = {TT__WAY_TEAM, TT__WAY_OPENMP};

/* This region is a trial of its way, charged to budget (-1: none); best:
 * the best way without it; leaves: what it leaves behind. */
static void trial_of(tt__way_plan *plan, int budget, float best, float leaves) {
  plan->trial = true;
  plan->charge = (int8_t)budget;
  plan->best_ns = best;
  plan->leaves_ns = leaves;
}

/* x (wake) for the region if it costs less than *best. */
static void consider(tt__way_plan *plan, float *best, float cost, tt__way x, bool wake) {
  if (cost < *best) {
    *best = cost;
    plan->way = x;
    plan->wake = wake;
  }
}

/* The way for a loop with its work known; sets plan->way, wake, trial and
 * returns the predicted cost. */
static float choose(tt__loop *l, size_t m, size_t p, tt__mode mode,
                    const tt__way_state *s, tt__way_plan *plan) {
  /* A pause of lending over (below): where OpenMP's threads still spin the
   * spin was the program's and the pause's own budget pays it and its
   * regret; where they sleep the spin was the lent regions', openmp's. */
  if (l->lend_paused_until && now_ns() >= l->lend_paused_until) {
    l->lend_paused_until = 0;
    *(s->omp_spins ? &l->lend_budget_ns : &l->budget_ns[1]) -=
        l->lend_regret_ns + l->lend_pause_ns;
    l->lend_regret_ns = 0;
  }
  bool lend = s->can_lend && !l->lend_paused_until;
  int o = plan->omp_spins, w = plan->spinning < p - 1;
  float best = l->work;
  plan->way = TT__WAY_SERIAL;
  if (plan->spinning > 0)
    consider(plan, &best, tt__way_predict(l, TT__WAY_TEAM, false, m, p, mode, s),
             TT__WAY_TEAM, false);
  float team = tt__way_predict(l, TT__WAY_TEAM, true, m, p, mode, s);
  consider(plan, &best, team, TT__WAY_TEAM, true);
  /* the best without OpenMP's threads */
  float alone = best;
  tt__way alone_way = plan->way;
  bool alone_wake = plan->wake;
  float openmp = lend ? tt__way_predict(l, TT__WAY_OPENMP, true, m, p, mode, s) : INFINITY;
  consider(plan, &best, openmp, TT__WAY_OPENMP, plan->wake);
  if (plan->way == TT__WAY_OPENMP && openmp_number(l, o) < 0) /* on its prior */
    trial_of(plan, 1, alone, s->omp_tail_ns);
  /* A way kept out: its budget gains, and once it covers the way's
   * predicted excess (openmp's with what it adds to a spin of OpenMP's
   * threads) the way is tried, its numbers forgotten (the team's extras;
   * openmp's in this state of OpenMP's threads). */
  for (int i = 0; i < 2; i++) {
    tt__way x = kept_out_way[i];
    if (x == TT__WAY_OPENMP && !lend)
      continue;
    float *b = &l->budget_ns[i];
    if (plan->way == x) { /* running on its number: it banks nothing */
      *b = *b < 0 ? *b : 0;
      continue;
    }
    *b += best / TT__OVERHEAD_DIV;
    float excess = x == TT__WAY_TEAM ? team - best
                                     : openmp + (o ? s->omp_tail_ns : 0) - best;
    if (plan->trial || *b < excess)
      continue;
    if (x == TT__WAY_TEAM) {
      memset(l->extra, 0, sizeof l->extra);
      memset(l->extra_nsamples, 0, sizeof l->extra_nsamples);
    } else {
      l->lent_nsamples[o] = 0;
    }
    plan->way = x;
    plan->wake = true;
    trial_of(plan, i, best, x == TT__WAY_OPENMP ? s->omp_tail_ns : 0);
    return tt__way_predict(l, x, true, m, p, mode, s);
  }
  /* OpenMP's spin.  Lent beside OpenMP's spinning threads, a region keeps
   * them spinning and the team's workers asleep beside them (idle.c,
   * "Overcommitted"), so the team as it runs once they sleep is never
   * measured.  What lending costs over that team is the loop's regret; a
   * pause of lending (their spin and two looks, tt__lend_pause_ns) is a
   * trial of that team, its excess the pause's cost less the regret, paid
   * from a budget of its own (the team's trials beside the spinning
   * threads would spend the team's and put the pause off). */
  if (plan->way == TT__WAY_OPENMP && !plan->trial && o && s->omp_pause_ns > 0 &&
      alone > best) {
    tt__way_state asleep = {.spinning = p - 1};
    float team_asleep = tt__way_predict(l, TT__WAY_TEAM, false, m, p, mode, &asleep);
    if (team_asleep < best) {
      l->lend_regret_ns += best - team_asleep;
      l->lend_budget_ns += best / TT__OVERHEAD_DIV;
      float pause = s->omp_pause_ns * (1 - best / alone);
      if (l->lend_budget_ns >= pause - l->lend_regret_ns) {
        l->lend_pause_ns = pause;
        l->lend_paused_until = now_ns() + (uint64_t)s->omp_pause_ns;
        plan->way = alone_way;
        plan->wake = alone_wake;
        best = alone;
      }
    }
  }
  if (l->lend_paused_until && s->can_lend)
    plan->trial = true; /* the pause's regions: counted with their time */
  /* The team in a state whose extra has fewer than three samples: a trial
   * (its extra counts the missing ones as 0: one slow region moves
   * nothing; a dear one is paid for). */
  if (!plan->trial && plan->way == TT__WAY_TEAM && l->extra_nsamples[plan->wake && w] < 3)
    trial_of(plan, 0, l->work < openmp ? l->work : openmp, 0);
  return best;
}

/* ---- spinning ------------------------------------------------------------------------ */

/* What spinning workers save the loop's next region: its best cost with
 * every worker asleep less its best cost with every worker spinning. */
static float spin_saves(const tt__loop *l, size_t m, size_t p, tt__mode mode) {
  float e = l->work;
  float asleep = team_cost(e, true, m, p, mode, 0) + l->extra[1];
  float spinning = team_cost(e, true, m, p, mode, p - 1) + l->extra[0];
  asleep = asleep < e ? asleep : e;
  spinning = spinning < e ? spinning : e;
  return asleep > spinning ? asleep - spinning : 0;
}

/* Spinning.  After a team region its workers spin while the thread's next
 * region is expected (its gap, measured) within `worth`, SPIN_WORTH times
 * what spinning saves it, else sleep at once; the deadline is twice that,
 * so a gap's jitter does not put them to sleep just before the region
 * they spun for.  (Naps -- a sleep that the worker ends itself before the
 * next region is expected -- were measured and taken out: they act only
 * where the gap is past `worth`, so they can gain at most 1/SPIN_WORTH of
 * the program's time; docs/benchmarks.md.) */
static void spin_after(const tt__loops *t, tt__way_plan *plan) {
  float worth = SPIN_WORTH * spin_saves(plan->loop, plan->m, plan->p, plan->mode);
  worth = worth < LINGER_MAX_NS ? worth : LINGER_MAX_NS;
  plan->linger_ns = t->gap <= worth ? (uint64_t)(2 * worth) : 0;
}

static void time_it(tt__way_plan *plan) {
  plan->timed = true;
  plan->t0 = now_ns();
}

void tt__way_choose(tt__loops *t, tt__loop *l, size_t m, size_t p,
                    tt__mode mode, tt__way fixed, const tt__way_state *s,
                    tt__way_plan *plan) {
  *plan = (tt__way_plan){.loop = l, .m = m, .p = p, .mode = mode,
                         .spinning = s->spinning < p - 1 ? s->spinning : p - 1,
                         .omp_spins = s->can_lend && s->omp_spins,
                         .way = TT__WAY_TEAM, .wake = true, .charge = -1};
  if (fixed != NONE) {
    /* TEAMS_RUN: nothing chosen; timed as often as any region, for its
     * last_ns, which the auto schedule (range.c) and the driver's
     * run-at-submit (submit.c) read whatever the way */
    plan->way = fixed == TT__WAY_OPENMP && !s->can_lend ? TT__WAY_TEAM : fixed;
    plan->fixed = true;
    t->ran[plan->way]++;
    if (l && tt__loop_alone_timed(l))
      time_it(plan);
    return;
  }
  if (!l) {
    t->ran[TT__WAY_TEAM]++;
    return;
  }
  /* timed: one region in as many as keep the looks under
   * 1/TT__OVERHEAD_DIV of the regions' time; always a first one, a trial */
  if (l->untimed_left > 0 && l->work > 0)
    l->untimed_left--;
  else
    time_it(plan);
  if (l->work <= 0) {
    /* no number yet: the team, which measures E at a cost over the caller
     * alone bounded by the wake calls (the caller starts at once); where a
     * team region gave none (the caller ran no chunk), the caller alone */
    plan->trial = true;
    if (l->alone_next)
      plan->way = TT__WAY_SERIAL;
  } else {
    plan->expect_ns = choose(l, m, p, mode, s, plan);
    if (!plan->timed) {
      t->untimed++;
      t->untimed_ns += plan->expect_ns;
    }
  }
  if (plan->trial && !plan->timed)
    time_it(plan);
  t->ran[plan->way]++;
  if (plan->way == TT__WAY_TEAM)
    spin_after(t, plan);
}

/* ---- what a region cost ---------------------------------------------------------- */

void tt__way_record(tt__loops *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *c) {
  tt__loop *l = plan->loop;
  if (!l || !plan->timed)
    return;
  t->timed++;
  float ns = (float)c->ns;
  if (plan->fixed) {
    tt__loop_alone_record(l, c->ns);
    return;
  }
  if (plan->trial) {
    t->trials++;
    t->trial_ns += ns;
    t->tried[ran]++;
  } else if (plan->expect_ns > 0 && ran == plan->way) {
    t->chosen_n[ran]++;
    t->chosen_ns[ran] += ns;
    t->chosen_predicted_ns[ran] += plan->expect_ns;
  }
  /* a trial's measured excess over the best way, what it leaves behind
   * included, is paid from its way's budget */
  if (plan->charge >= 0 && ran == plan->way)
    l->budget_ns[plan->charge] -= fmaxf(ns + plan->leaves_ns - plan->best_ns, 0);
  /* the gap before it, the untimed regions in between at their work */
  if (t->last_end_ns && plan->t0 > t->last_end_ns) {
    float g = ((float)(plan->t0 - t->last_end_ns) - t->untimed_ns) /
              (float)(t->untimed + 1);
    tt__follow_median(&t->gap, t->gap_samples, &t->gap_nsamples, g > 0 ? g : 0);
  }
  t->last_end_ns = c->end_ns;
  t->untimed = 0;
  t->untimed_ns = 0;
  l->timed_n[ran]++;
  l->timed_ns[ran] += ns;
  l->woke_n += c->woken > 0;

  /* the work: a serial region's time, or the caller's own chunks' time
   * over their share */
  float e = 0;
  if (ran == TT__WAY_SERIAL)
    e = ns;
  else if (c->own_share > 0 && c->own_ns > 0)
    e = (float)((double)c->own_ns / c->own_share);
  if (e > 0)
    tt__follow_median(&l->work, l->work_samples, &l->work_nsamples, e);
  else if (l->work <= 0)
    l->alone_next = true;

  int o = plan->omp_spins;
  if (ran == TT__WAY_TEAM && e > 0 && (c->woken > 0 || plan->spinning > 0 || !plan->wake)) {
    /* the model's miss for this region's own work (a change of the work is
     * not an extra), in the state the region met, at least what the
     * formula can overcount (fork, and the wake where it woke workers);
     * the median of three, the formula's 0 for the samples it lacks */
    int woken = c->woken > 0;
    float x = ns - team_cost(e, woken, plan->m, plan->p, plan->mode, plan->spinning);
    float lo = -constant_ns(&tt__the_costs.fork) -
               (woken ? constant_ns(&tt__the_costs.wake_call) +
                            constant_ns(&tt__the_costs.wake_lat)
                      : 0);
    float *s = l->extra_samples[woken];
    uint8_t *n = &l->extra_nsamples[woken];
    tt__follow_median(&l->extra[woken], s, n, fmaxf(x, lo));
    if (*n < 3)
      l->extra[woken] = (float)tt__median3(s[0], *n == 2 ? s[1] : 0, 0);
  } else if (ran == TT__WAY_OPENMP && l->work > 0) {
    /* the loop's number: the region beyond E / p; the process's constant:
     * beyond its threads' longest part, without the loop's imbalance (the
     * loop's where the parts were not timed) */
    float x = ns - l->work / (float)plan->p;
    tt__follow_median(&l->lent[o], l->lent_samples[o], &l->lent_nsamples[o], x);
    float k = c->lent_part_ns ? ns - (float)c->lent_part_ns : x;
    tt__costs_lend(o, k > 1 ? (uint64_t)k : 1);
  }
  tt__loop_alone_record(l, c->ns);
}
