/* teams: how a region runs -- on the team, lent to OpenMP, or on the caller
 * alone.  The rule is docs/protocol.md item 43, one paragraph, and its
 * constants are the table under it; this file keeps it and names its
 * parts as the paragraph does.  Each way is to the rule what its
 * properties are, and nothing else: its estimate (est), its bound (work
 * over its threads: `alone` marks the way on the caller alone, whose bound
 * is its cost), its linger (how long its threads spin after its last
 * region) and whether they spin now (tt__way_spins, asked of the caller).
 * Only the thread that owns a table reads or writes it, holding the team
 * or not: no synchronization. */
#include <string.h>

#include "atomic.h"
#include "prim.h"
#include "way.h"

#define NONE TT__WAYS
#define SETTLED TT__WAY_SETTLED
#define SLICE_NS 4e6f /* a scheduler time slice as a waiting region meets it */
#define HORIZON_NS (TT__OVERHEAD_DIV * SLICE_NS)
#define TRIAL_DIV (TT__OVERHEAD_DIV * (TT__WAYS - 1))
#define MARGIN (1.0f / TT__OVERHEAD_DIV)
#define LEVEL 2.0f

static const bool alone[TT__WAYS] = {[TT__WAY_SERIAL] = true};
/* Set at every team start (tt__way_init) while other threads may run the
 * rule on their tables: relaxed atomics, read through these. */
static _Atomic uint64_t linger_at[TT__WAYS], clock_at, look_at = 1;
static uint64_t (*now_ns)(void) = tt__now_ns;

static float linger(int x) { return (float)tt_atomic_load_relaxed(&linger_at[x]); }

void tt__way_init(uint64_t clock, uint64_t look, uint64_t team_linger,
                  uint64_t lend_linger) {
  tt_atomic_store_relaxed(&clock_at, clock);
  tt_atomic_store_relaxed(&look_at, look ? look : 1);
  tt_atomic_store_relaxed(&linger_at[TT__WAY_TEAM], team_linger);
  tt_atomic_store_relaxed(&linger_at[TT__WAY_LEND], lend_linger);
}

void tt__way_test_clock(uint64_t (*now)(void)) { now_ns = now ? now : tt__now_ns; }

/* ---- the table ------------------------------------------------------------------- */

static uint8_t size_class(size_t n) {
  return n ? (uint8_t)(64 - __builtin_clzll((unsigned long long)n)) : 0;
}

static tt__loop *slot(const tt__loops *t, const void *key, uint8_t c,
                      size_t p) {
  uint64_t h = ((uint64_t)(uintptr_t)key >> 4) ^
               (uint64_t)c * 0x9e3779b97f4a7c15u ^
               (uint64_t)p * 0xc2b2ae3d27d4eb4fu;
  return (tt__loop *)&t->loop[(h ^ (h >> 29)) % TT__LOOPS];
}

static void start_trial(tt__loops *t, tt__loop *l, tt__way x) {
  l->trial = (uint8_t)x;
  l->tried = l->settled = 0;
  l->cost = l->first = 0;
  t->trials[x]++;
}

tt__loop *tt__loop_find(tt__loops *t, const void *key, size_t size, size_t p) {
  uint8_t c = size_class(size);
  tt__loop *l = slot(t, key, c, p);
  if (l->key != key || l->size_class != c || l->p != p) {
    memset(l, 0, sizeof *l);
    l->key = key;
    l->size_class = c;
    l->p = (uint32_t)p;
    l->cur = TT__WAY_TEAM;
    l->pend_way = NONE;
    l->steal = -1;
    start_trial(t, l, TT__WAY_TEAM); /* a new loop starts with the team's trial */
  }
  return l;
}

const tt__loop *tt__loop_peek(const tt__loops *t, const void *key, size_t size,
                              size_t p) {
  uint8_t c = size_class(size);
  const tt__loop *l = slot(t, key, c, p);
  return l->key == key && l->size_class == c && l->p == p ? l : NULL;
}

/* ---- the rule (protocol 43) -------------------------------------------------- */

/* x's bound: work over its threads; for the caller alone, its cost. */
static float bound(const tt__loop *l, int x) {
  return alone[x] ? l->work : l->work / (float)l->p;
}

/* What trying x is charged before its first trial in the loop (or after a
 * new level): what its last trial on this thread cost, in any loop, or its
 * linger when its threads do not spin now (the trial would wake them),
 * whichever is more. */
static float first_charge(const tt__loops *t, tt__way_spins spins, int x) {
  float l = linger(x) > 0 && !spins((tt__way)x) ? linger(x) : 0;
  return t->charge[x] > l ? t->charge[x] : l;
}

/* The way whose trial is due, or NONE: it could win (its bound is below
 * cur's estimate) and the loop has spent TRIAL_DIV times its charge since it
 * last ran; of several, the one furthest past its budget. */
static tt__way due(const tt__loops *t, const tt__loop *l, unsigned can,
                   tt__way_spins spins) {
  tt__way best = NONE;
  float most = 1;
  for (int x = 0; x < TT__WAYS; x++) {
    if (x == l->cur || !(can >> x & 1) ||
        (l->work > 0 && bound(l, x) >= l->est[l->cur]))
      continue;
    float charge = l->est[x] > 0 ? l->charge[x] : first_charge(t, spins, x);
    float over = charge > 0 ? l->since[x] / (TRIAL_DIV * charge) : 1e30f;
    if (over >= most) {
      most = over;
      best = (tt__way)x;
    }
  }
  return best;
}

/* The trial of x is over: its settled regions' mean without the costliest,
 * plus the gap share cur's regions show, is x's estimate. */
static void end_trial(tt__loops *t, tt__loop *l, int x) {
  float hi = 0, sum = 0;
  for (int k = 0; k < SETTLED; k++) {
    hi = l->sample[k] > hi ? l->sample[k] : hi;
    sum += l->sample[k];
  }
  float steady = (sum - hi) / (SETTLED - 1);
  float share = l->est[l->cur] > l->steady ? l->est[l->cur] - l->steady : 0;
  float old = l->est[x];
  l->est[x] = steady + share;
  l->trial = NONE;
  t->charge[x] = 0;
  if (x == l->cur) { /* cur measured again: a new level forgets the others */
    l->steady = steady;
    if (l->est[x] > LEVEL * old || l->est[x] * LEVEL < old)
      for (int y = 0; y < TT__WAYS; y++)
        l->est[y] = y == x ? l->est[y] : 0; /* first trials again */
    return;
  }
  if (l->est[x] * (1 + MARGIN) < l->est[l->cur]) { /* x becomes cur */
    int was = l->cur;
    l->cur = (uint8_t)x;
    l->steady = steady;
    /* coming back would keep its threads spinning beside x's */
    l->charge[was] = t->charge[was] > linger(was) ? t->charge[was] : linger(was);
    t->switches++;
    return;
  }
  /* x stays out, charged its regions' excess over cur (at least the clock
   * reads that timed them), and its linger when its first region showed
   * that it woke its threads, as if the loop waited while they spin. */
  float excess = l->cost - (float)l->tried * l->est[l->cur];
  float floor = (float)l->tried * (float)tt_atomic_load_relaxed(&look_at);
  l->charge[x] = excess > floor ? excess : floor;
  if (l->first > LEVEL * steady)
    l->charge[x] += linger(x);
  t->charge[x] = l->charge[x];
}

/* A region of the trial of x, which started at `start`: past the
 * transient -- x's first region (a wake-up), and the regions while cur's
 * threads still linger, unless one costs less than cur -- it is a sample. */
static void trial_region(tt__loops *t, tt__loop *l, int x, float cost,
                         uint64_t start) {
  if (l->tried++ == 0) {
    l->first = cost;
    l->until = start + (x == l->cur ? 0 : (uint64_t)linger(l->cur));
  }
  l->cost += cost;
  if (l->tried >= 2 && (start >= l->until || cost < l->est[l->cur]))
    l->sample[l->settled++] = cost;
  if (l->settled == SETTLED)
    end_trial(t, l, x);
}

/* A timed region of way `ran`, complete: its own time and the gap after it
 * (cost, ns); it started at `start`. */
static void learn(tt__loops *t, tt__loop *l, tt__way ran, float cost,
                  uint64_t start) {
  for (int x = 0; x < TT__WAYS; x++)
    l->since[x] = x == (int)ran ? 0 : l->since[x] + cost;
  if (ran == l->cur && (l->trial == NONE || l->trial == ran)) {
    /* the mean over the horizon: a timed region and the untimed ones it
     * stands for weigh their share of its regions, at most 1/SETTLED */
    float *e = &l->est[ran];
    float w = *e * (float)l->stride / HORIZON_NS;
    w = w < 1.0f / SETTLED ? w : 1.0f / SETTLED;
    bool level = *e > 0 && (cost > LEVEL * *e || cost * LEVEL < *e);
    *e = *e > 0 ? *e + (cost - *e) * w : cost;
    if (cost <= LEVEL * l->steady || l->steady <= 0)
      l->steady += (cost - l->steady) * (l->steady > 0 ? w : 1);
    if (level && l->trial == NONE) { /* measure cur again */
      start_trial(t, l, ran);
      return;
    }
  }
  if (l->trial == ran)
    trial_region(t, l, ran, cost, start);
}

static void complete(tt__loops *t, tt__loop *l, uint64_t now) {
  uint64_t gap = now - l->pend_end;
  float cost = l->pend_ns + (gap < (uint64_t)HORIZON_NS ? (float)gap : 0);
  tt__way ran = (tt__way)l->pend_way;
  l->pend_way = NONE;
  learn(t, l, ran, cost, l->pend_end - (uint64_t)l->pend_ns);
}

tt__way tt__way_choose(tt__loops *t, tt__loop *l, size_t m, tt__mode mode,
                       tt__way fixed, bool can_lend, tt__way_spins spins,
                       tt__way_plan *plan) {
  plan->loop = l;
  plan->timed = false;
  plan->m = m;
  plan->mode = mode;
  plan->t0 = 0;
  unsigned can = can_lend ? 7u : 7u & ~(1u << TT__WAY_LEND);
  if (!l)
    return fixed != NONE && can >> fixed & 1 ? fixed : TT__WAY_TEAM;
  if (l->pend_way != NONE)
    complete(t, l, plan->t0 = now_ns());
  if (fixed != NONE) { /* TEAMS_RUN: cur is fixed, nothing is tried */
    l->cur = (uint8_t)fixed;
    l->trial = NONE;
  }
  tt__way way = can >> l->cur & 1 ? (tt__way)l->cur : TT__WAY_TEAM;
  if (l->trial == NONE && l->skip > 0) { /* the common case */
    l->skip--;
    l->untimed++;
    return way;
  }
  /* A look: the untimed regions' time, then a trial or a sample of cur. */
  for (int x = 0; x < TT__WAYS; x++)
    if (x != l->cur)
      l->since[x] += l->est[l->cur] * (float)l->untimed;
  l->untimed = 0;
  if (l->trial != NONE && !(can >> l->trial & 1))
    l->trial = NONE;
  if (l->trial == NONE && fixed == NONE) {
    tt__way x = due(t, l, can, spins);
    if (x != NONE)
      start_trial(t, l, x);
  }
  plan->timed = true;
  if (l->trial != NONE) {
    l->stride = 1;
    return (tt__way)l->trial;
  }
  /* the looks' cost stays under 1/TT__OVERHEAD_DIV of the regions' */
  float look = (float)tt_atomic_load_relaxed(&look_at);
  float k = l->est[l->cur] > 0 ? look * TT__OVERHEAD_DIV / l->est[l->cur] : 0;
  l->skip = (uint32_t)k;
  l->stride = l->skip + 1;
  return way;
}

void tt__way_record(tt__loops *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *c) {
  tt__loop *l = plan->loop;
  if (!l || !plan->timed)
    return;
  t->timed[ran]++;
  float clock = (float)tt_atomic_load_relaxed(&clock_at);
  float ns = (float)c->ns > clock ? (float)c->ns - clock : 1;
  if (c->own_chunks) { /* the caller's chunks, scaled to all: the work */
    float all = (float)c->own_ns * (float)plan->m / (float)c->own_chunks;
    l->work = l->work > 0 ? l->work + (all - l->work) / SETTLED : all;
  }
  l->last_ns = ns;
  l->pend_way = (uint8_t)ran; /* complete when the loop's next region starts */
  l->pend_ns = ns;
  l->pend_end = c->end_ns;
}
