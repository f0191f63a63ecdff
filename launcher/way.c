/* teams: how a region runs -- team (the team's workers), openmp (OpenMP's
 * threads) or serial (the caller alone) -- and how long the team's workers
 * spin after it.  The rule is docs/protocol.md item 44; this file keeps it.
 *
 * A cost model, not trials.  Each way's cost for the next region is a
 * formula of the loop's work E (ns on the caller alone, measured whenever
 * the loop runs), the state of the threads at that moment (how many of the
 * team's workers spin, whether OpenMP's threads do), and the process's
 * constants (tt__the_costs): `fork`, what a region on spinning workers
 * costs beyond its work, per worker; `wake_call`, the caller's futex wake
 * of a sleeping worker; `wake_lat`, from that call until the worker runs;
 * `lend`, an openmp region beyond its critical path (its threads' longest
 * part).  The constants are measured by
 * the first holder after every team start (way-probe.c) and by every
 * region that meets them (each wake is timed by the holder and by the
 * woken worker), so a loaded machine, a vCPU that halts, a CPU set that
 * changed are followed without a rule that knows them.  A loop's
 * measured corrections are `extra`: what its regions on the team cost
 * beyond the formula (its imbalance, its memory traffic, a wake-up slower
 * for it than the constants say), one for each state a region meets: its
 * workers all spinning or some woken, OpenMP's threads asleep or spinning
 * (they then take the CPUs the team's workers need); and `lent`, its
 * openmp regions beyond E / p, per state of OpenMP's threads.  An extra
 * is known from its state's third sample (follow_extra); until then the
 * team's regions in that state are trials.
 *
 * The formulas (E work, p participants, s of the p - 1 workers spinning,
 * k = p - 1 - s asleep, F(q) = fork (q - 1)):
 *   serial         E
 *   team, the sleepers sit out (no wake call; their chunks are the caller's)
 *                  F(s + 1) + E / (s + 1)        (static: + k E / p)
 *   team, the sleepers woken: the caller makes k wake calls and starts at
 *   once; they arrive at A = k wake_call + wake_lat, and take only what is
 *   left (fork.c)
 *                  greedy: if the caller and the spinners finish by A,
 *                  (E + k wake_call) / (s + 1), else A + (E - D) / p with
 *                  D = s A + wake_lat done by then
 *                  static: A + E / p when a sleeper comes before the caller
 *                  has run its own chunk, else k wake_call + (k + 1) E / p
 *   openmp         lent + E / p, + tail where OpenMP's threads
 *                  sleep: they spin after it, taking the team's CPUs
 *                  (lend.c, tt__lend_tail_ns); where they spin already
 *                  the lend prolongs what is there.  lent is the loop's
 *                  own (its openmp regions beyond E / p: the lend and its
 *                  imbalance), else the process's lend constant (a lent
 *                  region beyond its threads' longest part)
 * plus the loop's extra on the team's ways.  The cheapest wins.  A way with
 * no number yet is tried once: a loop's first region runs on the team (its
 * cost over the caller alone is bounded by the wake calls: the caller
 * starts at once) and gives E (where it gives none -- the caller ran no
 * chunk -- the next region runs on the caller alone).  Until the probe
 * has measured `fork` the team's formula has none, and the loop's extra,
 * measured by its team regions, carries it (the team waited for `fork`
 * until 2026-12: on 16 CPUs a probe that found no sample kept the team
 * out of whole programs).  openmp, where possible, is tried per state of
 * OpenMP's threads where its prior wins: until a lend is measured in that
 * state, OpenMP's threads are priced as the team's workers in the same
 * state -- spinning, or asleep, woken and leaving their tail (until
 * 2026-12 it was tried only where the
 * team would win: beside OpenMP's spinning threads the team's workers
 * sleep (idle.c, "Overcommitted"), the team's wake-up lost to the caller
 * alone, and a loop that openmp halves ran serial for good); where
 * OpenMP's threads sleep, once
 * the loop has spent TT__OVERHEAD_DIV times the tail the try leaves: a
 * runtime that spins for 200 ms after a region (libomp) is not woken by a
 * try every few regions, each taking the team's CPUs; where they spin
 * within that time of our last lent region, the spin is (also) ours, and
 * a try pays what it prolongs it (lend.c, tt__lend_tail_ns); openmp chosen
 * beside spinning OpenMP threads pauses where its regret reaches a pause's
 * cost ("OpenMP's spin", in tt__way_choose).  Trials are counted
 * with their time (TEAMS_DEBUG=1's report); a way kept out is tried again
 * once the loop has spent TT__OVERHEAD_DIV times its predicted excess
 * (its measured one, when the try cost more than predicted and than the
 * best way: a debt that the way's regions chosen meanwhile, in a state
 * where its numbers say it wins, do not cancel).  TEAMS_DEBUG's report
 * gives each way's regions as chosen, measured against predicted.
 *
 * Spinning.  After a region on the team its workers spin while the next
 * region is expected within `worth`: SPIN_WORTH times what spinning workers
 * save the loop's next region (its cost with the workers asleep less its
 * cost with them spinning), and not at all when this thread's regions come
 * further apart than that (its gap, measured).  The spin's deadline is
 * twice that, so a gap's jitter does not put them to sleep just before the
 * region they spun for; a worker burns a CPU only while the next region is
 * expected within what the spin is worth, and sleeping when it is not loses
 * at most 1/SPIN_WORTH of the loop's time.  Where the gap is longer, they
 * nap (nap_for): sleep, and wake themselves just before the next region
 * is expected, the window they then spin within `worth` -- a region after
 * the host's own work then meets them spinning and pays no wake-up.
 * TEAMS_SPIN_US, when set, fixes the spin (no nap); a fixed way
 * (TEAMS_RUN) spins TEAMS_SPIN_US's value.
 *
 * Only the thread that owns a table reads or writes it: no synchronization.
 * The constants are relaxed atomics (way.h). */
#include <string.h>

#include "atomic.h"
#include "prim.h"
#include "teams-driver.h"
#include "way.h"

#define NONE TT__WAYS
/* Sleeping after a gap of at least SPIN_WORTH times what spinning saves
 * loses at most 1/SPIN_WORTH of the loop's time: the runtime's own budget,
 * as for its looks and trials. */
#define SPIN_WORTH ((float)TT__OVERHEAD_DIV)
/* The longest a worker spins on the model's word: longer gaps are another
 * program phase (a scheduler's time slice, EEVDF's 3 ms at most). */
#define LINGER_MAX_NS 3e6f

tt__costs tt__the_costs;
static uint64_t (*now_ns)(void) = tt__now_ns;

void tt__way_test_clock(uint64_t (*now)(void)) { now_ns = now ? now : tt__now_ns; }

static float constant_ns(_Atomic uint32_t *c) { return (float)tt_atomic_load_relaxed(c); }

/* A number that follows its samples: a lower one moves it by 1/2, a
 * higher one by 1/8 (one slow wake-up is not yet a slower machine). */
static float follow_low_step(float old, float x) {
  return old + (x - old) / (x < old ? 2 : 8);
}

/* A sample of a constant: the first sets it, the next ones follow. */
static void sample_constant(_Atomic uint32_t *c, uint64_t ns) {
  float v = ns > UINT32_MAX ? (float)UINT32_MAX : ns ? (float)ns : 1;
  uint32_t old = tt_atomic_load_relaxed(c);
  float x = old ? follow_low_step((float)old, v) : v;
  tt_atomic_store_relaxed(c, x >= (float)UINT32_MAX ? UINT32_MAX : x < 1 ? 1 : (uint32_t)(x + 0.5f));
}

void tt__costs_wake_call(uint64_t ns) { sample_constant(&tt__the_costs.wake_call, ns); }
void tt__costs_wake_lat(uint64_t ns) { sample_constant(&tt__the_costs.wake_lat, ns); }
void tt__costs_nap_late(uint64_t ns) { sample_constant(&tt__the_costs.nap_late, ns); }
void tt__costs_lend(bool spinning, uint64_t ns) {
  sample_constant(&tt__the_costs.lend[spinning], ns);
}

void tt__costs_set(uint32_t fork, uint32_t wake_call, uint32_t wake_lat,
                   uint32_t look) {
  if (fork)
    tt_atomic_store_relaxed(&tt__the_costs.fork, fork);
  if (wake_call)
    tt_atomic_store_relaxed(&tt__the_costs.wake_call, wake_call);
  if (wake_lat)
    tt_atomic_store_relaxed(&tt__the_costs.wake_lat, wake_lat);
  if (look)
    tt_atomic_store_relaxed(&tt__the_costs.look, look);
}

/* A loop's number, the median of its last three samples: a sample that met
 * a time slice or an interrupt moves nothing, a new level is followed at
 * its second sample.  n counts the samples (up to 3). */
static void follow_median(float *v, float s[3], uint8_t *n, float x) {
  s[2] = s[1];
  s[1] = s[0];
  s[0] = x;
  if (*n < 3)
    (*n)++;
  if (*n == 1) {
    *v = x;
  } else if (*n == 2) {
    *v = (s[0] + s[1]) / 2;
  } else {
    *v = (float)tt__median3(s[0], s[1], s[2]);
  }
}

/* A team state's extra: the median of its last three samples, the
 * formula's own 0 standing in for those it has not had (one slow region
 * -- a worker that met a time slice -- is no number yet: the loop whose
 * one sample in a state read 22 us where the formula said 5.4 ran serial
 * where the team took 0.7-0.9 of its time, and no later region met that
 * state to correct it).  Until the third sample a region chosen on the
 * team in that state is a trial (tt__way_choose, `guess`). */
static void follow_extra(float *v, float s[3], uint8_t *n, float x) {
  follow_median(v, s, n, x);
  if (*n < 3)
    *v = (float)tt__median3(s[0], *n == 2 ? s[1] : 0, 0);
}

/* ---- the table ------------------------------------------------------------------- */

static uint8_t size_class(size_t n) {
  return n ? (uint8_t)(64 - __builtin_clzll((unsigned long long)n)) : 0;
}

/* The first record of the loop's set. */
static tt__loop *set_of(const tt__loops *t, const void *key, uint8_t c,
                        size_t p) {
  uint64_t h = ((uint64_t)(uintptr_t)key >> 4) ^
               (uint64_t)c * 0x9e3779b97f4a7c15u ^
               (uint64_t)p * 0xc2b2ae3d27d4eb4fu;
  size_t set = (size_t)((h ^ (h >> 29)) % (TT__LOOPS / TT__LOOP_WAYS));
  return (tt__loop *)&t->loop[set * TT__LOOP_WAYS];
}

static bool is_loop(const tt__loop *l, const void *key, uint8_t c, size_t p) {
  return l->key == key && l->size_class == c && l->p == p;
}

tt__loop *tt__loop_find(tt__loops *t, const void *key, size_t size, size_t p) {
  uint8_t c = size_class(size);
  tt__loop *set = set_of(t, key, c, p), *l = set;
  uint32_t now = ++t->finds;
  for (int i = 0; i < TT__LOOP_WAYS; i++) {
    if (is_loop(&set[i], key, c, p)) {
      set[i].used = now;
      return &set[i];
    }
    /* else the empty record, or the one found longest ago (the clock's
     * differences are right across its wrap) */
    if (l->key && (!set[i].key || now - set[i].used > now - l->used))
      l = &set[i];
  }
  memset(l, 0, sizeof *l);
  l->key = key;
  l->size_class = c;
  l->p = (uint32_t)p;
  l->steal = -1;
  l->used = now;
  return l;
}

const tt__loop *tt__loop_peek(const tt__loops *t, const void *key, size_t size,
                              size_t p) {
  uint8_t c = size_class(size);
  const tt__loop *set = set_of(t, key, c, p);
  for (int i = 0; i < TT__LOOP_WAYS; i++)
    if (is_loop(&set[i], key, c, p))
      return &set[i];
  return NULL;
}

/* ---- the model ------------------------------------------------------------------- */

/* The ways a loop may keep out and try again, in the order of its
 * kept_out_ns[] (tt__loop, way.h). */
static const tt__way kept_out_way[2] = {TT__WAY_TEAM, TT__WAY_OPENMP};

static bool is_static(tt__mode mode, size_t m, size_t p) {
  return mode == TT__MODE_STATIC && m == p;
}

/* The team's cost before the loop's extra. */
static float team_cost(float e, bool wake, size_t m, size_t p, tt__mode mode,
                       size_t spinning) {
  float fork = constant_ns(&tt__the_costs.fork);
  float s = (float)(spinning < p - 1 ? spinning : p - 1);
  float k = (float)(p - 1) - s, fp = (float)p;
  bool st = is_static(mode, m, p);
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

/* Whether openmp has a number in a state of OpenMP's threads: the loop's
 * own, or the process's constant. */
static bool openmp_known(const tt__loop *l, bool omp_spins) {
  return l->lent_nsamples[omp_spins] || constant_ns(&tt__the_costs.lend[omp_spins]) > 0;
}

float tt__way_predict(const tt__loop *l, tt__way x, bool wake, size_t m,
                      size_t p, tt__mode mode, const tt__way_state *s) {
  float e = l->work;
  switch (x) {
  case TT__WAY_SERIAL:
    return e;
  case TT__WAY_OPENMP: {
    /* the tail: a lend that finds OpenMP's threads asleep starts their
     * spin; one that finds them spinning prolongs what is there, which
     * counts only in its tries (below): lent in turn, the regions keep
     * the spin they need */
    float tail = s->omp_spins ? 0 : s->omp_tail_ns;
    /* the loop's own number, else the process's constant, else (a lend
     * not yet measured in this state) OpenMP's threads priced as the
     * team's workers in the same state: spinning, or asleep and woken
     * (and then leaving their tail) */
    if (!openmp_known(l, s->omp_spins))
      return team_cost(e, !s->omp_spins, m, p, mode, s->omp_spins ? p - 1 : 0) + tail;
    int st = s->omp_spins;
    float o = l->lent_nsamples[st] ? l->lent[st] : constant_ns(&tt__the_costs.lend[st]);
    return o + e / (float)p + tail;
  }
  default:
    return team_cost(e, wake, m, p, mode, s->spinning) +
           l->extra[s->can_lend && s->omp_spins][wake && s->spinning < p - 1];
  }
}

/* What spinning workers save the loop's next region: its best cost with
 * every worker asleep less its best cost with every worker spinning. */
static float spin_saves(const tt__loop *l, size_t m, size_t p, tt__mode mode,
                        bool omp) {
  float e = l->work;
  float asleep = team_cost(e, true, m, p, mode, 0) + l->extra[omp][1];
  float spinning = team_cost(e, true, m, p, mode, p - 1) + l->extra[omp][0];
  asleep = asleep < e ? asleep : e;
  spinning = spinning < e ? spinning : e;
  return asleep > spinning ? asleep - spinning : 0;
}

/* Napping: where the gap is beyond what spinning through it is worth, the
 * workers sleep and wake themselves before the next region is expected
 * (the thread's gap, less how late a nap's timer wakes a worker, less the
 * gap's jitter: its last three samples' spread about their median), then
 * spin through a window of twice that: a region that comes within the
 * gap's jitter meets them spinning, with no wake call.  Only where that
 * window is within `worth`, as the spin is: a gap that varies more than
 * the spin is worth keeps them asleep. */
static void nap_for(const tt__loops *t, tt__way_plan *plan, float worth) {
  if (plan->linger_ns || t->gap_nsamples < 3)
    return;
  float late = constant_ns(&tt__the_costs.nap_late);
  late = late > 0 ? late : constant_ns(&tt__the_costs.wake_lat);
  float jitter = 0;
  for (int i = 0; i < 3; i++) {
    float d = t->gap_samples[i] - t->gap;
    d = d < 0 ? -d : d;
    jitter = d > jitter ? d : jitter;
  }
  float lead = late + jitter, window = 2 * lead;
  if (window > worth || t->gap <= window)
    return;
  plan->nap_ns = (uint64_t)(t->gap - lead);
  plan->nap_window_ns = (uint64_t)window;
}

void tt__way_choose(tt__loops *t, tt__loop *l, size_t m, size_t p,
                    tt__mode mode, tt__way fixed, const tt__way_state *s,
                    tt__way_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->loop = l;
  plan->m = m;
  plan->p = p;
  plan->mode = mode;
  plan->spinning = s->spinning < p - 1 ? s->spinning : p - 1;
  plan->omp_spins = s->can_lend && s->omp_spins;
  plan->way = TT__WAY_TEAM;
  plan->wake = true;
  if (fixed != NONE) {
    /* TEAMS_RUN: nothing is chosen; the region is timed as often as any
     * (below), for its last_ns alone, which the auto schedule (range.c)
     * and the driver's run-at-submit (submit.c) read whatever the way */
    plan->way = fixed == TT__WAY_OPENMP && !s->can_lend ? TT__WAY_TEAM : fixed;
    plan->fixed = true;
    t->ran[plan->way]++;
    if (l && tt__loop_alone_timed(l)) {
      plan->timed = true;
      plan->t0 = now_ns();
    }
    return;
  }
  if (!l) {
    t->ran[TT__WAY_TEAM]++;
    return;
  }
  /* Timed: one region in as many as keep the looks under
   * 1/TT__OVERHEAD_DIV of the regions' time; always a first one. */
  if (l->untimed_left > 0 && l->work > 0) {
    l->untimed_left--;
  } else {
    plan->timed = true;
    plan->t0 = now_ns();
  }
  if (l->work <= 0) {
    /* no number yet: the team, which measures E; where a team region gave
     * none (the caller ran no chunk), the caller alone, which always does */
    plan->trial = true;
    if (l->alone_next)
      plan->way = TT__WAY_SERIAL;
  } else {
    /* lending paused (see "OpenMP's spin", below): a pause after which
     * they still spin found the program's own spin; one after which they
     * sleep found the lent regions', and the try of openmp that began
     * that spin owes what it led to */
    if (l->lend_paused_until && now_ns() >= l->lend_paused_until) {
      l->lend_paused_until = 0;
      if (s->omp_spins) {
        l->lend_pauses_failed = (uint8_t)(l->lend_pauses_failed < 8 ? l->lend_pauses_failed + 1 : 8);
      } else {
        l->lend_pauses_failed = 0;
        float owed = -TT__OVERHEAD_DIV * l->lend_trap_ns;
        l->kept_out_ns[1] = l->kept_out_ns[1] < owed ? l->kept_out_ns[1] : owed;
      }
    }
    bool lend = s->can_lend && !l->lend_paused_until;
    /* the cheapest as predicted (until the probe has measured `fork`,
     * the team's formula has none: the loop's extra carries it) */
    float best = l->work, c;
    plan->way = TT__WAY_SERIAL;
    c = tt__way_predict(l, TT__WAY_TEAM, false, m, p, mode, s);
    if (plan->spinning > 0 && c < best) {
      best = c;
      plan->way = TT__WAY_TEAM;
      plan->wake = false;
    }
    float team = tt__way_predict(l, TT__WAY_TEAM, true, m, p, mode, s);
    if (team < best) {
      best = team;
      plan->way = TT__WAY_TEAM;
      plan->wake = true;
    }
    /* the best without OpenMP's threads */
    float alone = best;
    tt__way alone_way = plan->way;
    bool alone_wake = plan->wake;
    float openmp = lend ? tt__way_predict(l, TT__WAY_OPENMP, true, m, p, mode, s) : 0;
    if (lend && openmp < best) {
      best = openmp;
      plan->way = TT__WAY_OPENMP;
      /* its first region in this state, on the prior: a trial */
      plan->trial = !openmp_known(l, plan->omp_spins);
    }
    /* A way kept out runs again, as a trial, once the loop has spent
     * TT__OVERHEAD_DIV times what it would cost beyond the best since it
     * last ran: numbers that keep it out (a slow wake-up, a costly region)
     * are measured again at a bounded cost. */
    for (int i = 0; i < 2; i++) {
      tt__way x = kept_out_way[i];
      float cost = x == TT__WAY_TEAM ? team : openmp;
      if (x == TT__WAY_OPENMP && !lend)
        continue;
      if (plan->way == x) {
        /* a try's measured excess stays owed (the way chosen in another
         * state, where its number is still unknown, does not pay it) */
        l->kept_out_ns[i] = l->kept_out_ns[i] < 0 ? l->kept_out_ns[i] : 0;
        continue;
      }
      l->kept_out_ns[i] += best;
      /* and openmp's tail: where OpenMP's threads sleep the predicted
       * cost has it already; where they spin, what the try adds to the
       * spin of the last lent region (none when the spin is the
       * program's own) */
      float excess = cost - best + (x == TT__WAY_OPENMP && s->omp_spins ? s->omp_tail_ns : 0);
      bool retry = l->kept_out_ns[i] >= TT__OVERHEAD_DIV * excess;
      if (retry && !plan->trial) {
        l->kept_out_ns[i] = 0;
        /* The team's extras are what kept it out, and each is measured
         * only by regions that met its state: forgotten, the trial
         * measures the one of its own state, and its workers' spin lets
         * the next regions measure the other (a bad sample otherwise keeps
         * the workers asleep, and itself, for ever). */
        int o = s->can_lend && s->omp_spins;
        if (x == TT__WAY_TEAM) {
          memset(l->extra[o], 0, sizeof l->extra[o]);
          memset(l->extra_nsamples[o], 0, sizeof l->extra_nsamples[o]);
          team = tt__way_predict(l, TT__WAY_TEAM, true, m, p, mode, s);
          cost = team;
        } else { /* the same for openmp's number in this state */
          l->lent_nsamples[o] = 0;
          cost = tt__way_predict(l, TT__WAY_OPENMP, true, m, p, mode, s);
        }
        plan->retried = i + 1;
        plan->best_ns = best;
        plan->predicted_ns = cost;
        plan->way = x;
        plan->wake = true;
        plan->trial = true;
      }
    }
    /* OpenMP's spin.  Lent beside OpenMP's spinning threads, a region
     * keeps them spinning, and beside them the team's workers sleep
     * (idle.c, "Overcommitted"): the team as it runs once they sleep is
     * never seen, and openmp may win every region only because it went
     * first (libgomp's `solo` condition: lent 3.9-4.2 us a region where
     * the team alone takes 3.3).  What lending costs over that team (its
     * workers spinning, the extra of the state where OpenMP's threads
     * sleep), region by region, is the loop's regret; once it reaches what
     * a pause of lending costs (their spin and two looks, tt__lend_pause_ns,
     * at the best way without them instead of openmp's), lending pauses,
     * the loop running that way meanwhile.  Where the spin was the lent
     * regions' own they sleep, and the team is weighed where they sleep
     * (openmp then carries its tail).  Where the program keeps them
     * spinning (its own OpenMP regions) they spin on, openmp wins again,
     * and each such pause in a row doubles the regret the next one waits
     * for, up to TT__OVERHEAD_DIV times its cost: then the pauses cost
     * at most 1/TT__OVERHEAD_DIV of what they could save. */
    if (plan->way == TT__WAY_OPENMP && !plan->trial && s->omp_spins &&
        s->omp_pause_ns > 0 && alone > best) {
      tt__way_state asleep = {.spinning = p - 1, .can_lend = s->can_lend};
      float team_asleep = tt__way_predict(l, TT__WAY_TEAM, false, m, p, mode, &asleep);
      if (team_asleep < best) {
        l->lend_regret_ns += best - team_asleep;
        float times = (float)(1u << l->lend_pauses_failed);
        times = times < TT__OVERHEAD_DIV ? times : TT__OVERHEAD_DIV;
        float pause_cost = s->omp_pause_ns * (1 - best / alone);
        if (l->lend_regret_ns >= times * pause_cost) {
          l->lend_trap_ns = l->lend_regret_ns + pause_cost;
          l->lend_regret_ns = 0;
          l->lend_paused_until = now_ns() + (uint64_t)s->omp_pause_ns;
          lend = false;
          best = alone;
          plan->way = alone_way;
          plan->wake = alone_wake;
          plan->trial = true;
        }
      }
    }
    if (l->lend_paused_until && s->can_lend)
      plan->trial = true; /* the pause's regions: counted with their time */
    plan->expect_ns = best;
    /* The team chosen in a state whose extra has fewer than three samples
     * (follow_extra) is a trial: its excess over the best other way is
     * owed as a try's is (tt__way_record), so a state whose first samples
     * were right to keep the team out costs a bounded share. */
    int w = plan->wake && plan->spinning < p - 1;
    if (plan->way == TT__WAY_TEAM && !plan->trial &&
        l->extra_nsamples[plan->omp_spins][w] < 3) {
      float other = l->work;
      if (lend && openmp < other)
        other = openmp;
      plan->guess = true;
      plan->trial = true;
      plan->best_ns = other;
      plan->predicted_ns = best;
    }
    if (!plan->timed) {
      t->untimed++;
      t->untimed_ns += best;
    }
  }
  if (plan->trial && !plan->timed) {
    plan->timed = true;
    plan->t0 = now_ns();
  }
  t->ran[plan->way]++;
  /* the workers' spin after it (see "Spinning") */
  if (plan->way == TT__WAY_TEAM) {
    float worth = SPIN_WORTH * spin_saves(l, m, p, mode, plan->omp_spins);
    worth = worth < LINGER_MAX_NS ? worth : LINGER_MAX_NS;
    plan->linger_ns = t->gap <= worth ? (uint64_t)(2 * worth) : 0;
    nap_for(t, plan, worth);
  }
}

/* The next look at a loop whose region took ns: the looks' cost under
 * 1/TT__OVERHEAD_DIV of the regions' (serial regions: of their work). */
static void next_look(tt__loop *l, float ns) {
  float look = constant_ns(&tt__the_costs.look);
  float k = look * TT__OVERHEAD_DIV / (ns > 1 ? ns : 1);
  l->untimed_left = k < 1e6f ? (uint32_t)k : 1000000u;
}

bool tt__loop_alone_timed(tt__loop *l) {
  if (l->untimed_left > 0 && l->last_ns > 0) {
    l->untimed_left--;
    return false;
  }
  return true;
}

void tt__loop_alone_record(tt__loop *l, uint64_t ns) {
  l->last_ns = (float)ns;
  next_look(l, (float)ns);
}

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
  /* the gap before it, the untimed regions in between at their work */
  if (t->last_end_ns && plan->t0 > t->last_end_ns) {
    float g = ((float)(plan->t0 - t->last_end_ns) - t->untimed_ns) /
              (float)(t->untimed + 1);
    g = g > 0 ? g : 0;
    follow_median(&t->gap, t->gap_samples, &t->gap_nsamples, g);
  }
  t->last_end_ns = c->end_ns;
  l->timed_n[ran]++;
  l->timed_ns[ran] += ns;
  l->woke_n += c->woken > 0;
  t->untimed = 0;
  t->untimed_ns = 0;
  l->last_ns = ns;
  /* A way kept out that cost more than predicted when tried again (than
   * the best way, where nothing predicted it), and more than the best: the
   * next try waits until the loop has spent TT__OVERHEAD_DIV times the
   * measured excess, so trials stay within their bound even where the
   * numbers that predicted them were wrong.  The debt stays until it is
   * paid (tt__way_choose), whatever state the way is chosen in meanwhile. */
  int owed = plan->guess ? (ran == TT__WAY_TEAM ? 1 : 0)
                         : plan->retried && ran == kept_out_way[plan->retried - 1]
                               ? plan->retried : 0;
  if (owed) {
    float expected = plan->predicted_ns >= 0 ? plan->predicted_ns : plan->best_ns;
    float over = ns - expected, *k = &l->kept_out_ns[owed - 1];
    if (over > 0 && ns > plan->best_ns)
      *k = (*k < 0 ? *k : 0) - TT__OVERHEAD_DIV * over;
  }

  /* the work: a serial region's time, or the caller's own chunks' time
   * over their share */
  float e = 0;
  if (ran == TT__WAY_SERIAL)
    e = ns;
  else if (c->own_share > 0 && c->own_ns > 0)
    e = (float)((double)c->own_ns / c->own_share);
  if (e > 0)
    follow_median(&l->work, l->work_samples, &l->work_nsamples, e);
  else if (l->work <= 0)
    l->alone_next = true;

  if (ran == TT__WAY_TEAM && e > 0 && (c->woken > 0 || plan->spinning > 0 || !plan->wake)) {
    /* the model's miss for this region's own work (a loop whose work
     * changes must not read the change as its extra), in the state the
     * region met, is the loop's extra for that state; at least what the
     * formula can overcount (fork, and the wake when it woke workers) */
    bool woken = c->woken > 0;
    float x = ns - team_cost(e, woken, plan->m, plan->p, plan->mode,
                             plan->spinning);
    float lo = -constant_ns(&tt__the_costs.fork) -
               (woken ? constant_ns(&tt__the_costs.wake_call) +
                            constant_ns(&tt__the_costs.wake_lat)
                      : 0);
    x = x > lo ? x : lo;
    int o = plan->omp_spins;
    follow_extra(&l->extra[o][woken], l->extra_samples[o][woken],
                 &l->extra_nsamples[o][woken], x);
  } else if (ran == TT__WAY_OPENMP && l->work > 0) {
    /* the loop's number: the region beyond E / p; the process's
     * constant: what lending cost beyond the region's critical path (its
     * threads' longest part), not the loop's imbalance, which another
     * loop does not have (where the parts were not timed, the loop's) */
    int o = plan->omp_spins;
    float x = ns - l->work / (float)plan->p;
    follow_median(&l->lent[o], l->lent_samples[o], &l->lent_nsamples[o], x);
    float k = c->lent_part_ns ? ns - (float)c->lent_part_ns : x;
    tt__costs_lend(o, k > 1 ? (uint64_t)k : 1);
  }
  next_look(l, ns);
}
