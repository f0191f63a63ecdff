/* teams: how a region runs -- on the team's workers, lent to OpenMP's
 * threads, or serially on the caller -- chosen from what each way cost.
 *
 * The design rule: a region never costs more than what the user could have
 * picked for that process by hand: the team (TEAMS_RUN=team), the caller
 * alone (TEAMS_RUN=serial, or a team of one), or the same loop written with
 * OpenMP (TEAMS_RUN=openmp lends it).  No rule guessed from the outside --
 * "another runtime spins", "the CPU was lost" -- decides; the holder runs
 * the way that cost least when it last looked, and looks again.
 *
 * Per launching thread, a small table keeps a record per site: a loop, by
 * its function (for a range or a kernel, the user's: the launcher's and the
 * driver's own runners are shared by all), its length, and the shape of its
 * region (m, p, mode); lengths and m by their class, within a factor of
 * two (a loop whose length changes with every region -- a triangular one,
 * m = n - i -- is one record, not a new one per region that would start
 * with the team's trial each time).  A record holds each way's
 * recent cost per region (est), and
 *   - one way (cur) runs; its estimate is a mean per
 *     region over the last HORIZON_NS (100 ms) of its regions: each timed
 *     region moves it by the share of that horizon's regions it stands for
 *     (at most a quarter, for long regions).  The scheduler's time slices are milliseconds (EEVDF's
 *     base slice 0.75 ms x (1 + log2 CPUs) since Linux 6.6, CFS's period
 *     6-24 ms before), and a region that waits for one is a real cost but
 *     a rare one: averaged over dozens of slices it counts at its rate,
 *     where a short mean let one such wait (100 us against 6.5 us regions
 *     on the loaded 2-core guest) switch a loop to the caller alone, whose
 *     costs have no such tail, for good;
 *   - serial's cost is known without running it: the team's own share of a
 *     region, scaled to all chunks (work), is what the caller alone would
 *     do.  So the caller alone is tried, first or again, only while that
 *     estimate is below cur's cost, and never costs a long region a serial
 *     run;
 *   - an estimate goes stale while its way does not run (the load went
 *     away, OpenMP's threads went to sleep), so every way is tried again
 *     once the time spent on the site since it last ran is 2 TT__SHARE
 *     times what its last trial cost beyond cur, and beyond it while its
 *     threads spin on (the team's workers spin_ns, OpenMP's threads their
 *     blocktime; a trial's workers spinning after it slowed the OpenMP
 *     regions of a loop on the caller alone): the trials of the two other
 *     ways cost at most 1/TT__SHARE of the time they serve, whatever the
 *     machine;
 *   - cur becomes the way whose trial just ended when that one cost
 *     less, and a way whose older estimate is below cur's only when it is
 *     below by more than the SPREAD of these costs between rounds (an
 *     eighth); otherwise it waits for its trial like any other.  Switching
 *     on every old estimate below cur's, a loop whose ways each cost more
 *     while they ran than the other's last estimate said (the team next to
 *     OpenMP's spinning threads, lent regions next to the team's) went
 *     back and forth between them at every drift of cur's mean: 287 to 692
 *     switches in 0.2 s of libgomp's batches of ten, 5 us chunks, 1.29x
 *     lending; believing no old estimate, a lent trial's 8 us waited out
 *     its budget (OpenMP's blocktime) while the caller alone ran at 17;
 *   - a new level: SETTLED timed regions of cur in a row beyond twice its
 *     estimate (or below half) set the estimate to their mean, and a way
 *     found at less than half of cur's cost becomes cur; either way the
 *     other ways' estimates are from before the change and are stale.
 *     When a stale way's trial beats cur, cur is measured again (its level
 *     may be the one that just ended) before it is left; a stale caller
 *     alone is tried once its budget, counted from its known work instead
 *     of its estimate, allows: what its trial risks beyond cur is its own
 *     work, SETTLED regions of it, while its stale estimate holds what
 *     came after its regions at the time (a team's or lending's trial
 *     risks what its estimate says -- spinning threads, and a team trial
 *     after lending waits out OpenMP's blocktime -- so theirs keep their
 *     budgets; tried as soon as a new way, they made libomp's pairs of
 *     5 us chunks 4.7x lending).  What changed one way's cost often
 *     changed all: under another process spinning on one of the 2-core
 *     guest's CPUs, stretches of regions of the OpenMP + team pairs waited
 *     a time slice (4-8 ms) whichever way the team region took, and the
 *     way that ran during one kept its 8 ms level, waiting out a budget
 *     of 256 ms and more, while its 2.5 us alternative ran at 5
 *     (tests/test-way.c, a stall of 4-16 regions);
 *   - a trial lasts until the transient that the current way left behind
 *     is over, and the mean of the SETTLED (4) regions that follow, less
 *     the costliest, is the estimate: one region that met an interrupt or
 *     a time slice (100 us against 9 in the first trial of a loop on the
 *     2-core guest) would decide for the next thousand (the way then runs as cur if it is
 *     cheaper, and its mean over the horizon decides from there).  A new
 *     loop starts with such a trial of the team.  After regions on the
 *     caller alone the team's workers sleep: the first team region pays the
 *     wake-up, the second shows the team's cost.  After lent regions
 *     OpenMP's threads spin for their blocktime (libomp KMP_BLOCKTIME,
 *     libgomp GOMP_SPINCOUNT, lend.c) and compete with the team's workers:
 *     a team trial then lasts until that time has passed since the last
 *     lent region, or until the team is cheaper, and its budget counts
 *     that time at the team's cost before it is first tried (200 ms of
 *     libomp's blocktime at 3x: the first such trial after 9 s of lent
 *     regions; where the program's own OpenMP regions keep its threads
 *     spinning, the trial finds no cooler team).  Without it, lending keeps
 *     OpenMP's threads spinning, which keeps the team slow, which keeps the
 *     regions lent -- the state that sustained itself before;
 *   - The gap share: a region's cost holds the gap until the loop's next
 *     region, and where the program runs batches of other work between
 *     batches of the loop's regions, one region in a batch carries the
 *     batch of other work.  cur's mean counts it at its rate; a trial's
 *     settled regions in a row seldom hold it and never keep it (steady
 *     within twice, less the costliest).  So cur also keeps `base`, the
 *     mean of its regions within twice it, and a trial's result, and what
 *     the trial cost beyond cur, carry cur's share est - base: the gap's
 *     rate is the program's, not the way's.  Without it, libgomp's
 *     batches of ten 5 us-chunk loops and ten team regions went to the
 *     caller alone whenever its trial (10.0 us without the gap) beat
 *     lending's mean (10.3 with it), and back with the next lent trial:
 *     6 switches in a bench sample, 1.11-1.19x lending; with it, 1-2 and
 *     within the noise of lending (tests/test-way.c,
 *     a_batch_gap_counts_for_every_way);
 *   - lending wakes OpenMP's threads, which then compete with the team for
 *     their blocktime, so it is tried only when its optimistic cost -- the
 *     work over the threads plus the overhead lent regions showed (none
 *     before the first) -- is below cur's by an eighth, and, when cur is
 *     the team, only while the team runs an eighth above the best it did
 *     on that loop (a lowest sample would be far below a mean, and open
 *     the gate on noise): smaller differences
 *     are within the spread of these costs between rounds on the 2-core
 *     guests (5-15%), and a process whose team runs well never wakes
 *     OpenMP for nothing.
 *
 * Timing a region costs its look at the record and two clock reads,
 * measured at the first start (tt__way_look_cost: 139 ns on the 2-core
 * Xeon guest, of which a clock read 31; a third of an empty team region
 * there).  A record times one region in as many as keep that under
 * 1/TT__SHARE of the regions' cost (every region from ~4.5 us, one in 255
 * at most), and every region of a trial.  What is not timed is counted at
 * cur's estimate.
 *
 * The table: 64 records (about 6 KB per launching thread), direct-mapped
 * on the site; a site that maps onto another's record takes it over and
 * starts again with the team, as a new site does.  Only the thread that
 * owns the table touches it, holding the team or not (a serial choice
 * runs without taking the team), so it needs no synchronization. */
#include "way.h"

#include <stdio.h>
#include <string.h>

#include "team-state.h"

#define SITES TT__WAY_SITES
#define NONE TT__WAYS
#define HORIZON_NS 100000000.0
#define SETTLED 4    /* a trial's regions after its transient */
/* The spread of a way's cost between rounds on the 2-core guests, 5-15%:
 * differences within it are noise. */
#define SPREAD 1.125f
#define TRIAL_MAX 32 /* a trial's regions at most, but for a cool-down */
/* Each of the two other ways' trials spends at most 1/TRIAL_SHARE of the
 * time: together 1/TT__SHARE. */
#define TRIAL_SHARE (TT__SHARE * (TT__WAYS - 1))

typedef tt__way_site site;

/* Set at the first team start (tt__way_init), or by a test. */
static uint64_t clock_ns;    /* a clock read's own cost */
static uint64_t look_ns;     /* a timed region's own cost: its look and reads */
static uint64_t omp_spin_ns; /* OpenMP's threads spin this long after a region */
static uint64_t (*now_ns)(void) = tt__now_ns; /* a test's virtual clock */

static struct {
  _Atomic uint64_t timed[TT__WAYS], trials[TT__WAYS], switches;
} stats;

uint64_t tt__way_clock_cost(void) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t a = tt__now_ns(), b = tt__now_ns();
    best = b - a < best ? b - a : best;
  }
  return best;
}

void tt__way_init(uint64_t clock, uint64_t look, uint64_t omp_spin) {
  clock_ns = clock;
  look_ns = look;
  omp_spin_ns = omp_spin;
}

void tt__way_test_clock(uint64_t (*now)(void)) { now_ns = now ? now : tt__now_ns; }


static site *lookup(tt__way_table *t, const void *key, size_t size, size_t m,
                    uint32_t shape) {
  uint8_t size_c = tt__way_class(size), m_c = tt__way_class(m);
  site *s = tt__way_slot(t, key, size_c, m_c, shape);
  if (!tt__way_same(s, key, size_c, m_c, shape)) {
    memset(s, 0, sizeof *s);
    s->key = key;
    s->size_class = size_c;
    s->m_class = m_c;
    s->shape = shape;
    /* A new loop starts with a trial of the team: its first region may
     * wake sleeping workers, which is not what the team costs. */
    s->cur = TT__WAY_TEAM;
    s->trial = TT__WAY_TEAM;
    s->rival = NONE;
  }
  return s;
}

/* How far a timed region moves its way's estimate, of est: by the share of
 * the horizon's regions (HORIZON_NS / est of them) that it and the untimed
 * regions it stands for are, at most a quarter (see the rule).  A share of
 * the regions, not of the time: a region's weight does not grow with its
 * own cost, or one that waited 4 ms for a time slice would count 600 times
 * over against 6 us ones, where it adds 0.25 us to their mean. */
static float weight(float est, uint32_t every) {
  float w = est * (float)(every ? every : 1) / (float)HORIZON_NS;
  return w < 0.25f ? w : 0.25f;
}

/* Regions to skip before the next timed one: the two clock reads stay
 * under 1/TT__SHARE of the regions' cost. */
static uint32_t stride(float est) {
  if (est <= 0)
    return 0;
  double k = (double)look_ns * TT__SHARE / (double)est;
  return k < 1 ? 0 : k > 255 ? 255 : (uint32_t)k;
}

/* Whether lending could pay (see the rule): its optimistic cost -- the
 * work over p plus the overhead lent regions showed, 0 before the first --
 * beats cur's by an eighth, and when cur is the team, the team runs an
 * eighth above the best it did on this loop: a team that does well never
 * wakes OpenMP's threads. */
static bool lend_worth(const tt__way_table *t, const site *s, size_t p) {
  if (s->work <= 0)
    return false;
  float hope = s->work / (float)p + t->lend_overhead;
  if (hope * SPREAD >= s->est[s->cur])
    return false;
  return s->cur != TT__WAY_TEAM || s->est[TT__WAY_TEAM] > s->team_best * SPREAD;
}

/* Whether the caller alone could pay, first tried or again: its known
 * cost (work) is below cur's.  A long region is never run serially to learn
 * that it is still long. */
static bool serial_worth(const site *s) {
  return s->work > 0 && s->work < s->est[s->cur];
}

/* The way whose trial is due, or NONE; *wait (when none is) the regions
 * at cur's estimate until the first known way's budget lets it be tried
 * (the ways whose trial waits for a condition, not a budget, are looked at
 * again at the next look). */
static tt__way due(const tt__way_table *t, const site *s, size_t p,
                   bool can_lend, float *wait) {
  *wait = 1e30f;
  for (int x = 0; x < TT__WAYS; x++) {
    if (x == s->cur ||
        (x == TT__WAY_LEND && (!can_lend || !lend_worth(t, s, p))) ||
        (x == TT__WAY_SERIAL && !serial_worth(s)))
      continue;
    if (s->est[x] == 0)
      return (tt__way)x;
    /* a stale caller alone: its budget counted from its known work (see
     * "A new level" in the rule) */
    if ((s->stale >> x & 1) && x == TT__WAY_SERIAL &&
        s->since[x] >= (float)SETTLED * s->work * TRIAL_SHARE)
      return (tt__way)x;
    float left = s->charge[x] * TRIAL_SHARE - s->since[x];
    if (left <= 0)
      return (tt__way)x;
    if (s->est[s->cur] > 0 && left / s->est[s->cur] < *wait)
      *wait = left / s->est[s->cur];
  }
  return NONE;
}

/* Every known way but fresh is stale: its estimate is from before a new
 * level of the loop's cost. */
static void mark_stale(site *s, int fresh) {
  for (int x = 0; x < TT__WAYS; x++)
    if (x != fresh && s->est[x] > 0)
      s->stale |= (uint8_t)(1u << x);
}

/* A team trial from lent regions waits out OpenMP's spin at the team's
 * cost: its budget is that, before it is first tried. */
static void charge_cool_down(site *s) {
  if (s->cur == TT__WAY_LEND && s->est[TT__WAY_TEAM] > s->est[TT__WAY_LEND]) {
    float wait = (float)omp_spin_ns *
                 (1 - s->est[TT__WAY_LEND] / s->est[TT__WAY_TEAM]);
    if (s->charge[TT__WAY_TEAM] < wait)
      s->charge[TT__WAY_TEAM] = wait;
  }
}

/* x becomes cur if it is cheaper: its estimate fresh from its trial, at
 * all; an older one, by more than the spread, and not stale (see the
 * rule).  A lent cur that cannot lend now runs on the team
 * (tt__way_choose). */
static void pick(site *s, int x, bool fresh) {
  if (x != s->cur && s->est[x] > 0 &&
      (fresh ? s->est[x] < s->est[s->cur]
             : !(s->stale >> x & 1) && s->est[x] * SPREAD < s->est[s->cur])) {
    /* The way left behind waits for its trial like any other; but a way
     * that costs less than half of cur is a new level for the loop, and
     * the estimates from before it are stale (see the rule). */
    if (s->charge[s->cur] < s->est[s->cur])
      s->charge[s->cur] = s->est[s->cur];
    if (s->est[x] < s->est[s->cur] / 2)
      mark_stale(s, x);
    s->cur = (uint8_t)x;
    s->base = s->est[x];
    tt_atomic_fetch_add_relaxed(&stats.switches, 1);
  }
  charge_cool_down(s);
}

static void start_trial(site *s, tt__way x) {
  s->trial = (uint8_t)x;
  s->trial_n = 0;
  s->trial_sum = 0;
  s->settled_n = 0;
  tt_atomic_fetch_add_relaxed(&stats.trials[x], 1);
}

/* Whether the trial's region that just ended, its trial_n-th, came after
 * the transient the current way left behind (see the rule): the first
 * region of a trial pays it (a wake-up of the team's workers, or of
 * OpenMP's), except the caller alone's, which has none; after lent regions
 * the team's trial settles with the first region that started after
 * OpenMP's threads stopped spinning. */
static bool settled(const tt__way_table *t, const site *s, tt__way x,
                    uint64_t start) {
  if (x == TT__WAY_SERIAL)
    return true;
  if (s->trial_n < 2)
    return false;
  return x != TT__WAY_TEAM || s->cur != TT__WAY_LEND ||
         start - t->last_lend >= omp_spin_ns;
}

/* A timed region's cost, complete: its own time and the gap after it (see
 * "The gap" in the rule), of way `ran`, which started at `start`. */
static void learn(tt__way_table *t, site *s, tt__way ran, float cost,
                  uint64_t start) {
  for (int x = 0; x < TT__WAYS; x++)
    s->since[x] = x == (int)ran ? 0 : s->since[x] + cost;
  if (ran == TT__WAY_TEAM && s->trial == NONE && s->est[ran] > 0 &&
      (s->team_best <= 0 || s->est[ran] < s->team_best))
    s->team_best = s->est[ran];

  if (s->trial == ran) {
    s->trial_n++;
    s->trial_sum += cost;
    if (settled(t, s, ran, start) ||
        (s->trial_n > 1 && s->est[s->cur] > 0 && cost < s->est[s->cur]))
      s->ring[s->settled_n++ % SETTLED] = cost; /* cheaper than cur: settled */
    if (s->settled_n < SETTLED)
      return;
    /* The last SETTLED regions: steady once the costliest is within twice
     * the cheapest (a woken thread next to another process's busy one
     * waited a time slice, 3-4 ms, in each of its first three regions on
     * the 2-core guest, then ran 6 us ones), or once the trial is long. */
    float lo = s->ring[0], hi = s->ring[0], sum = 0;
    for (int k = 0; k < SETTLED; k++) {
      lo = s->ring[k] < lo ? s->ring[k] : lo;
      hi = s->ring[k] > hi ? s->ring[k] : hi;
      sum += s->ring[k];
    }
    if (hi > 2 * lo && s->trial_n < TRIAL_MAX)
      return;
    /* What the trial cost beyond cur, and what its threads cost after it:
     * the team's workers spin spin_ns, OpenMP's their blocktime, and
     * whatever the program runs meanwhile may wait for them (counted as
     * if it all did). */
    /* The gap share cur's regions show (see "The gap share" in the rule):
     * what the trial's regions would carry too. */
    float share = s->base > 0 && s->est[s->cur] > s->base
                      ? s->est[s->cur] - s->base
                      : 0;
    float extra = s->trial_sum + (share - s->est[s->cur]) * (float)s->trial_n +
                  (ran == TT__WAY_TEAM   ? (float)tt__T.spin_ns
                   : ran == TT__WAY_LEND ? (float)omp_spin_ns
                                         : 0);
    /* the settled regions' mean without the costliest, which may have met
     * an interrupt or a time slice, and the gap share */
    float steady = (sum - hi) / (float)(SETTLED - 1);
    s->est[ran] = steady + share;
    if (ran == s->cur)
      s->base = steady;
    if (ran == TT__WAY_TEAM && (s->team_best <= 0 || s->est[ran] < s->team_best))
      s->team_best = s->est[ran];
    s->charge[ran] = extra > cost ? extra : cost;
    s->trial = NONE;
    bool was_stale = s->stale >> ran & 1;
    s->stale &= (uint8_t)~(1u << ran);
    if (ran == s->cur) { /* cur measured again: its rival's turn */
      int r = s->rival;
      s->rival = NONE;
      if (r != NONE)
        pick(s, r, true);
      return;
    }
    if (was_stale && s->est[ran] < s->est[s->cur]) {
      /* cur's level is older than this trial by a few regions only, but
       * may be the stall's that has just ended: cur is measured again
       * before it is left */
      s->rival = (uint8_t)ran;
      start_trial(s, (tt__way)s->cur);
      return;
    }
    pick(s, ran, true);
    return;
  }
  if (s->trial != NONE)
    return; /* a trial's region that ran another way: nothing to learn */
  float *est = &s->est[ran];
  /* A new level: SETTLED samples in a row beyond twice the estimate, or
   * below half of it, are the way's cost now, not its tail. */
  int dir = *est <= 0 ? 0 : cost > 2 * *est ? 1 : cost < *est / 2 ? -1 : 0;
  if (dir == 0 || dir != s->level_dir) {
    s->level_dir = (int8_t)dir;
    s->level_n = 0;
    s->level_sum = 0;
    s->level_max = 0;
  }
  if (dir != 0) {
    s->level_n++;
    s->level_sum += cost;
    s->level_max = cost > s->level_max ? cost : s->level_max;
  }
  if (dir != 0 && s->level_n >= SETTLED) {
    /* their mean without the costliest, as a trial's: the first region
     * of a new level often carries what changed it (a loop's first call
     * at a larger size: 11 ms against 1.6 ms regions, the gap after it
     * holding the host's new buffers) */
    *est = (s->level_sum - s->level_max) / (float)(s->level_n - 1);
    s->level_dir = 0;
    /* What changed cur's cost may have changed every way's: the others'
     * estimates are from before, and are not believed until their trials
     * (a stall of the whole process is no way's fault) */
    if (ran == s->cur) {
      mark_stale(s, ran);
      s->base = *est;
    }
  } else {
    *est = *est > 0 ? *est + (cost - *est) * weight(*est, s->every) : cost;
  }
  if (ran == s->cur) {
    if (dir == 0 && (s->base <= 0 || s->base > *est))
      s->base = *est;
    else if (dir == 0 && cost <= 2 * s->base)
      s->base += (cost - s->base) * weight(s->base, s->every);
    for (int x = 0; x < TT__WAYS; x++)
      pick(s, x, false); /* charges the cool-down, as every pick */
  }
}

/* The next region of a site whose last one was timed starts now: that
 * one's cost is complete. */
static void complete(tt__way_table *t, site *s, uint64_t now) {
  uint64_t gap = now - s->pend_end;
  float cost = s->pend_dur;
  if (gap < (uint64_t)HORIZON_NS)
    cost += (float)gap;
  s->pending = false;
  learn(t, s, (tt__way)s->pend_way, cost, s->pend_end - (uint64_t)s->pend_dur);
}

tt__way tt__way_choose(tt__way_table *t, const void *key, size_t size,
                       size_t m, size_t p, tt__mode mode, tt__run run,
                       bool can_lend, tt__way_plan *plan) {
  plan->site = NULL;
  plan->timed = false;
  plan->m = m;
  switch (run) {
  case TT__RUN_TEAM:
    return TT__WAY_TEAM;
  case TT__RUN_SERIAL:
    return TT__WAY_SERIAL;
  case TT__RUN_OPENMP:
    return can_lend ? TT__WAY_LEND : TT__WAY_TEAM;
  case TT__RUN_AUTO:
  default:
    break;
  }
  site *s = lookup(t, key, size, m, tt__way_shape(p, mode));
  plan->site = s;
  plan->t0 = 0;
  if (s->pending)
    complete(t, s, plan->t0 = now_ns());
  tt__way way = (tt__way)s->cur;
  if (way == TT__WAY_LEND && !can_lend)
    way = TT__WAY_TEAM;
  if (s->trial == NONE && s->skip > 0) { /* the common case: one decrement */
    s->skip--;
    s->untimed++;
    return way;
  }
  /* A look: what the untimed regions spent, then a trial or a sample. */
  for (int x = 0; x < TT__WAYS; x++)
    if (x != s->cur)
      s->since[x] += s->est[s->cur] * (float)s->untimed;
  s->untimed = 0;
  if (s->trial == TT__WAY_LEND && !can_lend) {
    s->trial = NONE;
    s->rival = NONE;
  }
  float wait = 0;
  if (s->trial == NONE) {
    tt__way x = due(t, s, p, can_lend, &wait);
    if (x != NONE)
      start_trial(s, x);
  }
  plan->timed = true;
  if (s->trial != NONE)
    return (tt__way)s->trial;
  /* A sample of cur; the next look comes after the regions the clock's
   * share allows, or sooner when a trial's budget is met first. */
  uint32_t k = stride(s->est[way]);
  if (wait < (float)k)
    k = wait < 1 ? 0 : (uint32_t)wait;
  s->skip = k;
  s->every = k + 1;
  return way;
}

void tt__way_record(tt__way_table *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *c) {
  site *s = plan->site;
  (void)t;
  if (!s || !plan->timed)
    return;
  tt_atomic_fetch_add_relaxed(&stats.timed[ran], 1);
  float cost = c->ns > clock_ns ? (float)(c->ns - clock_ns) : 1.0f;
  if (ran == TT__WAY_TEAM && c->own_chunks) {
    size_t m = plan->m, p = s->shape >> 2;
    tt__mode mode = (tt__mode)(s->shape & 3);
    float all = (float)c->own_ns *
                (float)(mode == TT__MODE_GREEDY ? m : p) / (float)c->own_chunks;
    s->work = s->work > 0 ? s->work + (all - s->work) / 4 : all;
  } else if (ran == TT__WAY_SERIAL) {
    s->work = cost;
  } else if (ran == TT__WAY_LEND) {
    t->last_lend = c->end_ns;
    if (s->work > 0 && c->threads > 0) {
      float over = cost - s->work / (float)c->threads;
      t->lend_overhead = over > 0 ? over : 1.0f;
    }
  }
  /* The cost is complete when the site's next region starts. */
  s->pending = true;
  s->pend_way = (uint8_t)ran;
  s->pend_dur = cost;
  s->pend_end = c->end_ns;
}

bool tt__way_peek(const tt__way_table *t, const void *key, size_t size,
                  size_t m, size_t p, tt__mode mode, tt__way_view *out) {
  uint32_t shape = tt__way_shape(p, mode);
  uint8_t size_c = tt__way_class(size), m_c = tt__way_class(m);
  const site *s = tt__way_slot(t, key, size_c, m_c, shape);
  if (!tt__way_same(s, key, size_c, m_c, shape))
    return false;
  out->cur = (tt__way)s->cur;
  out->trial = (tt__way)s->trial;
  for (int x = 0; x < TT__WAYS; x++)
    out->est[x] = s->est[x];
  out->work = s->work;
  return true;
}

void tt__way_forget(tt__way_table *t) {
  memset(t, 0, sizeof *t);
}

tt__way_table *tt__way_mine(void) { return &tt__thr.ways; }

void tt__way_report(void) {
  unsigned long long t[TT__WAYS], tr[TT__WAYS];
  for (int x = 0; x < TT__WAYS; x++) {
    t[x] = tt_atomic_load_relaxed(&stats.timed[x]);
    tr[x] = tt_atomic_load_relaxed(&stats.trials[x]);
  }
  fprintf(stderr,
          "teams: ways: timed regions on the team %llu, on OpenMP's threads "
          "%llu, on the caller %llu; trials %llu, %llu, %llu; %llu switches; "
          "workers slept %llu times after their spin, %llu overcommitted, "
          "%llu beside the holder; "
          "a timed region costs %llu ns (a clock read %llu)\n",
          t[0], t[1], t[2], tr[0], tr[1], tr[2],
          (unsigned long long)tt_atomic_load_relaxed(&stats.switches),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_spun),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_overcommitted),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_beside_holder),
          (unsigned long long)look_ns, (unsigned long long)clock_ns);
  /* This thread's loops (the report runs at exit, on the thread that ends
   * the process: usually the one that launched). */
  static const char *const names[] = {"team", "openmp", "caller"};
  const tt__way_table *tab = &tt__thr.ways;
  for (int i = 0; i < SITES; i++) {
    const site *s = &tab->sites[i];
    if (!s->key)
      continue;
    fprintf(stderr,
            "teams:   loop %p n<2^%u m<2^%u p=%u: on the %s; ns per region: "
            "team %.0f, openmp %.0f, caller %.0f (work %.0f)\n",
            s->key, s->size_class, s->m_class, s->shape >> 2, names[s->cur],
            (double)s->est[0], (double)s->est[1], (double)s->est[2],
            (double)s->work);
  }
}

/* A timed region's own cost, measured: the look at its record
 * (tt__way_choose, tt__way_record, and the completion at the next region)
 * on a scratch table, the cheapest of 16, and its second clock read.  Once,
 * at the first team start (under the lifecycle lock); the counters of the
 * debug report are put back as they were. */
uint64_t tt__way_look_cost(void) {
  static tt__way_table scratch;
  static const char key;
  uint64_t saved[2 * TT__WAYS + 1];
  for (int x = 0; x < TT__WAYS; x++) {
    saved[x] = tt_atomic_load_relaxed(&stats.timed[x]);
    saved[TT__WAYS + x] = tt_atomic_load_relaxed(&stats.trials[x]);
  }
  saved[2 * TT__WAYS] = tt_atomic_load_relaxed(&stats.switches);
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t a = tt__now_ns();
    tt__way_plan plan;
    tt__way w = tt__way_choose(&scratch, &key, 2, 2, 2, TT__MODE_STATIC,
                               TT__RUN_AUTO, false, &plan);
    tt__way_cost c = {1000, 0, 0, 1, a + 1000};
    tt__way_record(&scratch, &plan, w, &c);
    uint64_t b = tt__now_ns();
    best = b - a < best ? b - a : best;
  }
  memset(&scratch, 0, sizeof scratch);
  for (int x = 0; x < TT__WAYS; x++) {
    tt_atomic_store_relaxed(&stats.timed[x], saved[x]);
    tt_atomic_store_relaxed(&stats.trials[x], saved[TT__WAYS + x]);
  }
  tt_atomic_store_relaxed(&stats.switches, saved[2 * TT__WAYS]);
  return best + tt__way_clock_cost();
}
