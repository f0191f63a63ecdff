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
 * region (m, p, mode).  A record holds each way's
 * recent cost per region (est), and
 *   - the cheapest known way (cur) runs; its estimate is a mean over the
 *     last HORIZON_NS (100 ms) of its regions: each timed region moves it
 *     by the share of that horizon it spans (at most a quarter, for long
 *     regions).  The scheduler's time slices are milliseconds (EEVDF's
 *     base slice 0.75 ms x (1 + log2 CPUs) since Linux 6.6, CFS's period
 *     6-24 ms before), and a region that waits for one is a real cost but
 *     a rare one: averaged over dozens of slices it counts at its rate,
 *     where a short mean let one such wait (100 us against 6.5 us regions
 *     on the loaded 2-core guest) switch a loop to the caller alone, whose
 *     costs have no such tail, for good;
 *   - serial's cost is known without running it: the team's own share of a
 *     region, scaled to all chunks (work), is what the caller alone would
 *     do.  So the caller alone is first tried only when that estimate is
 *     below cur's cost, and never costs a long region a serial run;
 *   - an estimate goes stale while its way does not run (the load went
 *     away, OpenMP's threads went to sleep), so every way is tried again
 *     once the time spent on the site since it last ran is TT__SHARE times
 *     what its last trial cost beyond cur: trials cost at most 1/TT__SHARE
 *     of the time they serve, whatever the machine;
 *   - a trial lasts until the transient that the current way left behind
 *     is over, and its first region after the transient is the estimate
 *     (the way then runs as cur if it is cheaper, and its mean over the
 *     horizon decides from there).  After regions on the
 *     caller alone the team's workers sleep: the first team region pays the
 *     wake-up, the second shows the team's cost.  After lent regions
 *     OpenMP's threads spin for their blocktime (libomp KMP_BLOCKTIME,
 *     libgomp GOMP_SPINCOUNT, lend.c) and compete with the team's workers:
 *     a team trial then lasts until that time has passed since the last
 *     lent region, or until the team is cheaper.  Without it, lending keeps
 *     OpenMP's threads spinning, which keeps the team slow, which keeps the
 *     regions lent -- the state that sustained itself before;
 *   - lending wakes OpenMP's threads, which then compete with the team for
 *     their blocktime, so it is tried only when its optimistic cost -- the
 *     work over the threads plus the overhead lent regions showed (none
 *     before the first) -- is below cur's by an eighth, and, when cur is
 *     the team, only while the team runs an eighth above its own best (its
 *     work over p plus the lowest overhead it showed): smaller differences
 *     are within the spread of these costs between rounds on the 2-core
 *     guests (5-15%), and a process whose team runs well never wakes
 *     OpenMP for nothing.
 *
 * Timing a region is two clock reads (37-40 ns on the 2-core Xeon guest),
 * a tenth of an empty team region there; a record times one region in as
 * many as keep the reads under 1/TT__SHARE of the regions' cost (every
 * region from ~2.4 us, one in 118 for a 20 ns serial one), and every region
 * of a trial.  What is not timed is counted at cur's estimate.
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

#define SITES 64
#define NONE TT__WAYS
#define HORIZON_NS 100000000.0

typedef struct site {
  const void *key;
  size_t size;         /* with key, the loop: its length (range, m) */
  size_t m;
  uint32_t shape;      /* p << 2 | mode */
  uint8_t cur;         /* the way regions run now */
  uint8_t trial;       /* the way a trial runs now, NONE */
  uint16_t trial_n;    /* regions of that trial so far */
  uint32_t skip;       /* regions until the next timed one */
  uint32_t every;      /* regions a timed one stands for */
  float est[TT__WAYS]; /* ns per region; 0: unknown */
  float since[TT__WAYS];  /* ns spent on the site since the way last ran */
  float charge[TT__WAYS]; /* what its last trial cost beyond cur */
  float work;          /* serial estimate from the team's own share; 0 */
  float trial_sum;     /* the trial's cost so far */
  float settled_sum;   /* ... of its regions after the transient */
  uint16_t settled_n;
} site;

typedef struct table {
  site sites[SITES];
  float lend_overhead; /* a lent region's cost beyond work / threads, 0 */
  float team_floor;    /* the lowest overhead a team region showed, 0 */
  uint64_t last_lend;  /* when this thread's last lent region ended */
} table;

static _Thread_local table tls_table;

/* Set at the first team start (tt__way_init), or by a test. */
static uint64_t clock_ns;    /* a clock read's own cost */
static uint64_t omp_spin_ns; /* OpenMP's threads spin this long after a region */

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

void tt__way_init(uint64_t clock, uint64_t omp_spin) {
  clock_ns = clock;
  omp_spin_ns = omp_spin;
}

static uint32_t shape_of(size_t p, tt__mode mode) {
  return (uint32_t)(p << 2) | (uint32_t)mode;
}

static site *slot_of(const void *key, size_t size, size_t m, uint32_t shape) {
  uint64_t h = ((uint64_t)(uintptr_t)key >> 4) ^ (uint64_t)size * 0x9e3779b97f4a7c15u ^
               (uint64_t)m * 0xff51afd7ed558ccdu ^ (uint64_t)shape * 0xc2b2ae3d27d4eb4fu;
  return &tls_table.sites[(h ^ (h >> 29)) % SITES];
}

static bool same(const site *s, const void *key, size_t size, size_t m,
                 uint32_t shape) {
  return s->key == key && s->size == size && s->m == m && s->shape == shape;
}

static site *lookup(const void *key, size_t size, size_t m, uint32_t shape) {
  site *s = slot_of(key, size, m, shape);
  if (!same(s, key, size, m, shape)) {
    memset(s, 0, sizeof *s);
    s->key = key;
    s->size = size;
    s->m = m;
    s->shape = shape;
    s->cur = TT__WAY_TEAM;
    s->trial = NONE;
  }
  return s;
}

/* How far a timed region moves its way's estimate: by the share of the
 * horizon that it and the untimed regions it stands for span, at most a
 * quarter (see the rule). */
static float weight(float cost, uint32_t every) {
  float w = cost * (float)(every ? every : 1) / (float)HORIZON_NS;
  return w < 0.25f ? w : 0.25f;
}

/* Regions to skip before the next timed one: the two clock reads stay
 * under 1/TT__SHARE of the regions' cost. */
static uint32_t stride(float est) {
  if (est <= 0)
    return 0;
  double k = 2.0 * (double)clock_ns * TT__SHARE / (double)est;
  return k < 1 ? 0 : k > 255 ? 255 : (uint32_t)k;
}

/* Whether lending could pay (see the rule): its optimistic cost -- the
 * work over p plus the overhead lent regions showed, 0 before the first --
 * beats cur's by an eighth, and when cur is the team, the team runs an
 * eighth above its best (its work over p plus the lowest overhead it
 * showed): a team that does well never wakes OpenMP's threads. */
static bool lend_worth(const site *s, size_t p) {
  if (s->work <= 0)
    return false;
  float share = s->work / (float)p;
  float hope = share + tls_table.lend_overhead;
  if (hope * 1.125f >= s->est[s->cur])
    return false;
  return s->cur != TT__WAY_TEAM ||
         s->est[TT__WAY_TEAM] > (share + tls_table.team_floor) * 1.125f;
}

/* The way whose trial is due, or NONE. */
static tt__way due(const site *s, size_t p, bool can_lend) {
  for (int x = 0; x < TT__WAYS; x++) {
    if (x == s->cur || (x == TT__WAY_LEND && !can_lend))
      continue;
    if (x == TT__WAY_LEND && !lend_worth(s, p))
      continue;
    if (s->est[x] == 0) {
      if (x != TT__WAY_SERIAL || (s->work > 0 && s->work < s->est[s->cur]))
        return (tt__way)x;
      continue;
    }
    if (s->since[x] >= s->charge[x] * TT__SHARE)
      return (tt__way)x;
  }
  return NONE;
}

/* cur becomes the cheapest known way (a lent cur that cannot lend now runs
 * on the team: tt__way_choose). */
static void pick_cur(site *s) {
  int best = s->cur;
  for (int x = 0; x < TT__WAYS; x++)
    if (s->est[x] > 0 && (s->est[best] <= 0 || s->est[x] < s->est[best]))
      best = x;
  if (best != s->cur) {
    /* The way left behind waits for its trial like any other. */
    if (s->charge[s->cur] < s->est[s->cur])
      s->charge[s->cur] = s->est[s->cur];
    s->cur = (uint8_t)best;
    tt_atomic_fetch_add_relaxed(&stats.switches, 1);
  }
}

tt__way tt__way_choose(const void *key, size_t size, size_t m, size_t p,
                       tt__mode mode, tt__run run, bool can_lend,
                       tt__way_plan *plan) {
  plan->site = NULL;
  plan->timed = false;
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
  site *s = lookup(key, size, m, shape_of(p, mode));
  plan->site = s;
  if (s->trial == TT__WAY_LEND && !can_lend)
    s->trial = NONE;
  if (s->trial == NONE) {
    tt__way x = due(s, p, can_lend);
    if (x != NONE) {
      s->trial = (uint8_t)x;
      s->trial_n = 0;
      s->trial_sum = 0;
      s->settled_sum = 0;
      s->settled_n = 0;
      tt_atomic_fetch_add_relaxed(&stats.trials[x], 1);
    }
  }
  if (s->trial != NONE) {
    plan->timed = true;
    return (tt__way)s->trial;
  }
  tt__way way = (tt__way)s->cur;
  if (way == TT__WAY_LEND && !can_lend)
    way = TT__WAY_TEAM;
  if (s->skip == 0 || s->est[way] <= 0) {
    plan->timed = true;
    s->skip = stride(s->est[way]);
    s->every = s->skip + 1;
  } else {
    s->skip--;
    for (int x = 0; x < TT__WAYS; x++)
      if (x != (int)way)
        s->since[x] += s->est[way];
  }
  return way;
}

/* Whether the trial's region that just ended, its trial_n-th, came after
 * the transient the current way left behind (see the rule): the first
 * region of a trial pays it (a wake-up of the team's workers, or of
 * OpenMP's), except the caller alone's, which has none; after lent regions
 * the team's trial settles with the first region that started after
 * OpenMP's threads stopped spinning. */
static bool settled(const site *s, tt__way x, uint64_t start) {
  if (x == TT__WAY_SERIAL)
    return true;
  if (s->trial_n < 2)
    return false;
  return x != TT__WAY_TEAM || s->cur != TT__WAY_LEND ||
         start - tls_table.last_lend >= omp_spin_ns;
}

void tt__way_record(const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *c) {
  site *s = plan->site;
  if (!s || !plan->timed)
    return;
  tt_atomic_fetch_add_relaxed(&stats.timed[ran], 1);
  float cost = c->ns > clock_ns ? (float)(c->ns - clock_ns) : 1.0f;
  if (ran == TT__WAY_TEAM && c->own_chunks) {
    size_t m = s->m, p = s->shape >> 2;
    tt__mode mode = (tt__mode)(s->shape & 3);
    float all = (float)c->own_ns *
                (float)(mode == TT__MODE_GREEDY ? m : p) / (float)c->own_chunks;
    s->work = s->work > 0 ? s->work + (all - s->work) / 4 : all;
    float over = cost - (float)c->own_ns;
    if (over > 0 && (tls_table.team_floor <= 0 || over < tls_table.team_floor))
      tls_table.team_floor = over;
  } else if (ran == TT__WAY_SERIAL) {
    s->work = cost;
  } else if (ran == TT__WAY_LEND) {
    tls_table.last_lend = c->end_ns;
    if (s->work > 0 && c->threads > 0) {
      float over = cost - s->work / (float)c->threads;
      tls_table.lend_overhead = over > 0 ? over : 1.0f;
    }
  }
  for (int x = 0; x < TT__WAYS; x++)
    s->since[x] = x == (int)ran ? 0 : s->since[x] + cost;

  if (s->trial == ran) {
    s->trial_n++;
    s->trial_sum += cost;
    bool done = settled(s, ran, c->end_ns - c->ns);
    if (done) {
      s->settled_sum += cost;
      s->settled_n++;
    } else if (s->trial_n > 1 && cost < s->est[s->cur]) {
      done = true; /* already cheaper than cur, transient or not */
      s->settled_sum = cost;
      s->settled_n = 1;
    }
    if (!done)
      return;
    float extra = s->trial_sum - s->est[s->cur] * (float)s->trial_n;
    s->est[ran] = s->settled_sum / (float)s->settled_n;
    s->charge[ran] = extra > cost ? extra : cost;
    s->trial = NONE;
    pick_cur(s);
    return;
  }
  if (s->trial != NONE)
    return; /* a trial's region that ran another way: nothing to learn */
  s->est[ran] = s->est[ran] > 0 ? s->est[ran] + (cost - s->est[ran]) *
                                                  weight(cost, s->every)
                                : cost;
  if (ran == s->cur)
    pick_cur(s);
}

bool tt__way_peek(const void *key, size_t size, size_t m, size_t p,
                  tt__mode mode, tt__way_view *out) {
  uint32_t shape = shape_of(p, mode);
  const site *s = slot_of(key, size, m, shape);
  if (!same(s, key, size, m, shape))
    return false;
  out->cur = (tt__way)s->cur;
  out->trial = (tt__way)s->trial;
  for (int x = 0; x < TT__WAYS; x++)
    out->est[x] = s->est[x];
  out->work = s->work;
  return true;
}

void tt__way_forget(void) { memset(&tls_table, 0, sizeof tls_table); }

void tt__way_report(void) {
  unsigned long long t[TT__WAYS], tr[TT__WAYS];
  for (int x = 0; x < TT__WAYS; x++) {
    t[x] = tt_atomic_load_relaxed(&stats.timed[x]);
    tr[x] = tt_atomic_load_relaxed(&stats.trials[x]);
  }
  fprintf(stderr,
          "teams: ways: timed regions on the team %llu, on OpenMP's threads "
          "%llu, on the caller %llu; trials %llu, %llu, %llu; %llu switches; "
          "workers slept %llu times after their spin, %llu overcommitted\n",
          t[0], t[1], t[2], tr[0], tr[1], tr[2],
          (unsigned long long)tt_atomic_load_relaxed(&stats.switches),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_spun),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_overcommitted));
}
