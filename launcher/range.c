/* teams: tt_foreach_range, its schedules, and the auto policy.
 *
 *   static  p blocks of whole grains (balanced to within one grain), one
 *           per participant as the team deals them (below: block c on
 *           participant c on one node and LLC): one call of f each.
 *   greedy  one grain per chunk from the team's shared counter.
 *   steal   the steal schedule (steal.c) over p blocks of grains, dealt
 *           as static's.
 *   auto    see below.
 * A range with a single grain, p == 1, or a call from inside a chunk (where
 * the team would run it serially anyway) runs as one call f(ctx, 0, n) on the
 * caller, as a serial region (tt_participant() is 0 inside it, so a launch
 * from f knows it is nested).
 *
 * Grain 0 asks for the schedule's default, tt__range_default_grain below:
 * the one place where the launcher's and the PoCL driver's grain defaults
 * are decided, since both run their work-groups through tt_foreach_range.
 *
 * Auto.  tt_foreach_range cannot know whether its work is uneven, so auto
 * decides by length, measured:
 *   - fewer than AUTO_MIN_GRAINS grains per participant: greedy.  A block of
 *     one to three grains leaves a thief nothing worth splitting.
 *   - otherwise auto reads the loop's record, the one the way's rule keeps
 *     for it (way.h: the site -- the function, or the kernel the driver
 *     names -- its length's class and p; one look per region), where the
 *     way's timing leaves the last timed region's own time (last_ns), on
 *     whichever way it ran.  A loop whose region took at least
 *     AUTO_LONG_NS runs with the steal schedule, its units
 *     coarsened to at most UNITS_PER_P per participant (a multiple of
 *     the grain); one that took less than AUTO_SHORT_NS runs greedy, over
 *     chunks of about SHORT_CHUNK_NS (1 us) of the region that made it
 *     short (at least one per participant): a chunk's claim, one RMW like
 *     a steal unit's, stays a small share of it, and the last chunk a
 *     participant takes delays the region's end by about SHORT_CHUNK_NS at
 *     most.  Between the two it keeps its schedule, so a loop near the
 *     threshold does not flip back and forth.  A loop not in the table
 *     steals: its length is unknown, and stealing bounds the cost of being
 *     wrong both ways -- a short loop pays the units' overhead once and is
 *     greedy from then on, while a long uneven loop that ran static first
 *     would lose to its imbalance, and a loop that runs once never got a
 *     second chance.
 * Why greedy for short loops, not static.  A static region ends when every
 * worker it named has run its block, so a worker that is not on a CPU when
 * the region starts -- asleep after its spin, or preempted by another
 * process -- holds the caller until the scheduler runs it: a time slice,
 * 4 ms at HZ=250.  Greedy and steal regions never wait for a participant
 * that has not joined: the caller takes what is left, as PoCL's pthread
 * driver's threads do from their shared counter.  What static keeps and
 * greedy gives up: the same participant for the same block at every launch
 * (its cache), and tt_mem_touch's placement for these short loops.  A
 * static region no longer waits for a participant that is not running
 * either (protocol 10: the holder runs its chunk), but it still pays the
 * holder's running it after its own.
 * Why these numbers.  Stealing pays off when a region is long enough that
 * imbalance, an interrupted worker or a late wake-up can cost more than the
 * schedule's overhead.  AUTO_LONG_NS is on the scale of a sleeping
 * worker's late start, and it is the steal threshold KernelAbstractions'
 * adaptive CPU policy uses (ThreadTeams.jl PR #85).  The overhead is one
 * RMW and one call of f per unit; capping the units at UNITS_PER_P per
 * participant keeps it a small share of an AUTO_LONG_NS region, while a
 * thief can still balance to 1/64 of a block.  The measurements behind
 * these constants, and behind greedy for short loops: docs/measurements.md,
 * "The schedules of a range".  A loop whose record another loop took over
 * starts again as unknown. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prim.h"
#include "range.h"
#include "steal.h"
#include "team-internal.h"
#include "topology-view.h"
#include "way.h"

#define AUTO_MIN_GRAINS 4
#define UNITS_PER_P 64
#define AUTO_LONG_NS 50000
#define AUTO_SHORT_NS 25000
#define SHORT_CHUNK_NS 1000

typedef void (*range_fn)(void *, size_t, size_t);

/* ---- per-thread state: the last region's steal counters --------------------- */

static _Thread_local tt_steal_stats tls_last;

/* ---- the default grain ---------------------------------------------------- */

/* static, auto: 1.  Static blocks are then balanced to within one index, and
 *   auto coarsens its steal units itself (UNITS_PER_P per participant).
 * greedy, steal: n / (UNITS_PER_P * p), rounded up: about 64 chunks or units
 *   per participant, so uneven work (the triangular grid) balances to within
 *   ~1/64 of a participant's share while a uniform range of 1e5+ indices
 *   pays one shared-counter update (greedy) or one RMW of its own block word
 *   (steal) per ~1/64 of it (the per-unit cost: docs/measurements.md, "The
 *   schedules of a range"). */
size_t tt__range_default_grain(tt_schedule schedule, size_t n, size_t p) {
  if (schedule != TT_SCHED_GREEDY && schedule != TT_SCHED_STEAL)
    return 1;
  if (p == 0)
    p = 1;
  size_t units = p > SIZE_MAX / UNITS_PER_P ? SIZE_MAX : p * UNITS_PER_P;
  size_t g = n / units + (n % units != 0);
  return g ? g : 1;
}

/* What a range call and its plan compute first, the one place they do:
 * the grain (the default for 0), the grains, p clipped to them (1 for an
 * empty range); TT_EINVAL or TT_EOVERFLOW as tt_foreach_range returns
 * them. */
static int range_shape(size_t n, size_t *grain, size_t *p, tt_schedule schedule,
                       size_t *grains) {
  if (*p == 0 || (unsigned)schedule > (unsigned)TT_SCHED_AUTO)
    return TT_EINVAL;
  if (*grain == 0)
    *grain = tt__range_default_grain(schedule, n, *p);
  if (n > SIZE_MAX - *grain)
    return TT_EOVERFLOW;
  *grains = n / *grain + (n % *grain != 0);
  if (*p > *grains)
    *p = *grains ? *grains : 1;
  return 0;
}

int tt__range_plan(size_t n, size_t grain, size_t p, tt_schedule schedule,
                   size_t team, size_t *unit, size_t *units, size_t *pp) {
  size_t grains;
  int rc = range_shape(n, &grain, &p, schedule, &grains);
  if (rc)
    return rc;
  if (team && p > team)
    p = team;
  *pp = p;
  *unit = grain;
  *units = grains;
  if (p == 1 || n == 0)
    return 0;
  if (schedule == TT_SCHED_STEAL)
    tt__steal_units(n, grain, TT__STEAL_MAX_UNITS, unit, units);
  else if (schedule == TT_SCHED_AUTO && grains >= (size_t)AUTO_MIN_GRAINS * p)
    tt__steal_units(n, grain, (uint64_t)UNITS_PER_P * p, unit, units);
  return 0;
}

/* ---- the deal of the blocks ------------------------------------------------- */

/* The p blocks of a range go to participants by the running team's deal
 * (order.h, tt__order_deal): spread over its nodes, and over the LLCs of a
 * node, so that a cost trending along the range is split evenly between
 * them and the steal schedule balances it inside each LLC
 * (docs/measurements.md, "The schedules of a range").  Static and steal
 * deal alike, and tt_mem_touch follows the same deal, so a static and a
 * steal launch over the same range find the same pages local.
 *
 * p == the team's size reads the snapshot's tables; a smaller p (a range of
 * fewer grains than participants, or a caller's p) deals its prefix of the
 * team, cached per thread in the TT__SCRATCH_DEAL buffer for the last
 * (snapshot, p).  A snapshot lives until the process exits, so its address
 * names it.  The tables are written before the region is published and only
 * read in it.  Correctness never rests on the deal: any permutation of the
 * p blocks runs each of them once (static) or seeds each slot once (steal),
 * so a team restarted between this lookup and the region, with another
 * snapshot, only places the blocks less well. */
static _Thread_local struct {
  const tt__topo *s;
  size_t p;
  const uint32_t *t; /* the buffer it was computed in (freed at thread exit) */
  int identity;
} tls_deal;

const uint32_t *tt__range_deal(size_t p, const uint32_t **owner) {
  const tt__topo *s = tt__topology_current();
  const uint32_t *block = NULL, *own = NULL;
  /* below deal_from the prefix lies in one (node, LLC) group: the identity */
  if (s && s->deal_block && p <= s->n && p >= s->deal_from) {
    if (p == s->n) {
      block = s->deal_block;
      own = s->deal_owner;
    } else {
      uint32_t *t = tt__scratch(TT__SCRATCH_DEAL, 2 * p * sizeof *t);
      if (t) { /* no memory: contiguous blocks, still a correct schedule */
        if (tls_deal.s != s || tls_deal.p != p || tls_deal.t != t) {
          tt__topo_desc d = tt__topology_desc(s);
          int rc = tt__order_deal(&d, p, t, t + p);
          tls_deal.s = rc < 0 ? NULL : s;
          tls_deal.p = p;
          tls_deal.t = t;
          tls_deal.identity = rc != 0;
        }
        if (!tls_deal.identity) {
          block = t;
          own = t + p;
        }
      }
    }
  }
  if (owner)
    *owner = own;
  return block;
}

/* ---- static, greedy and the serial call ------------------------------------ */

typedef struct plain_range {
  range_fn f;
  void *ctx;
  size_t n, grain, grains, p;
  const uint32_t *deal; /* static: participant c runs block deal[c] (NULL: c) */
} plain_range;

/* Runs block c of `grains` grains split into `parts` blocks, as indices
 * [begin, end) of [0, n) (the last grain clipped to n). */
static void run_grain_block(range_fn f, void *ctx, size_t n, size_t grain,
                            size_t grains, size_t parts, size_t c) {
  size_t g0, g1;
  tt__block(grains, parts, c, &g0, &g1);
  size_t begin = g0 * grain;
  size_t end = n - begin > (g1 - g0) * grain ? g1 * grain : n;
  if (begin < end)
    f(ctx, begin, end);
}

static void static_chunk(void *ctx, size_t c) {
  const plain_range *s = ctx;
  run_grain_block(s->f, s->ctx, s->n, s->grain, s->grains, s->p,
                  tt__dealt(s->deal, c));
}

static void greedy_chunk(void *ctx, size_t c) {
  const plain_range *s = ctx;
  size_t begin = c * s->grain;
  size_t end = s->n - begin > s->grain ? begin + s->grain : s->n;
  s->f(s->ctx, begin, end);
}

static void whole_chunk(void *ctx, size_t c) {
  const plain_range *s = ctx;
  (void)c;
  s->f(s->ctx, 0, s->n);
}

/* ---- steal ------------------------------------------------------------------ */

static void steal_each(void *ctx, size_t i) {
  /* Run serially (the team was busy, or nested): no owner will come, so
   * nothing is worth protecting (protocol 29).  Only participant 0 runs
   * then, so the plain write races with no one. */
  tt__steal_region *r = ctx;
  if (!tt__region_parallel())
    r->protect_passes = 0;
  tt__steal_participant(r, i);
  /* the caller's share of the work, for the way (its own slot only: the
   * others may still run) */
  if (i == 0 && r->n)
    tt__region_share((double)r->slots[0].ran / (double)r->n);
}

/* The steal schedule's region; loop: the auto schedule's record (NULL:
 * the way finds it from site and n). */
static int run_steal(const void *site, tt__loop *loop, range_fn f, void *ctx,
                     size_t n, size_t unit, size_t units, size_t p,
                     const uint32_t *deal) {
  /* The caller's TT__SCRATCH_STEAL buffer: a thread holds one steal region
   * at a time (a range started from inside a chunk runs serially, above), and
   * the chunks' local memory is TT__SCRATCH_LOCAL, another buffer. */
  tt__steal_slot *slots = tt__scratch(TT__SCRATCH_STEAL, p * sizeof *slots);
  if (!slots) { /* no memory for the slots: static needs none */
    plain_range pr = {f, ctx, n, unit, units, p, deal}; /* whole grains */
    return tt__team_run_site(static_chunk, &pr, p, p, TT__MODE_STATIC, site, n,
                             NULL);
  }
  tt__steal_region r;
  tt__steal_region_init(&r, slots, f, ctx, n, unit, units, p);
  if (deal)
    tt__steal_region_deal(&r, deal);
  const tt__topo *s = tt__topology_current();
  tt__steal_region_topology(&r, s);
  /* The caller is participant 0, but only the thread that started a pinned
   * team sits on participant 0's PU; any other caller scans cyclically. */
  r.caller_unplaced = !s || !s->pinned || tt__participant_cpu(0) != s->cpu[0];
  if (loop)
    tt__team_run_loop(steal_each, &r, p, p, TT__MODE_EACH, loop, NULL);
  else
    tt__team_run_site(steal_each, &r, p, p, TT__MODE_EACH, site, n, NULL);
  tt__steal_region_stats(&r, &tls_last);
  return 0;
}

/* ---- the entry point ---------------------------------------------------------- */

int tt_foreach_range(void (*f)(void *ctx, size_t begin, size_t end), void *ctx,
                     size_t n, size_t grain, size_t p, tt_schedule schedule) {
  return tt__foreach_range_site((const void *)f, f, ctx, n, grain, p, schedule);
}

int tt__foreach_range_site(const void *site, range_fn f, void *ctx, size_t n,
                           size_t grain, size_t p, tt_schedule schedule) {
  if (!f)
    return TT_EINVAL;
  size_t grains;
  int rc0 = range_shape(n, &grain, &p, schedule, &grains);
  if (rc0 || n == 0)
    return rc0;
  bool nested = tt_participant() >= 0;
  if (p > 1 && !nested) {
    size_t team = tt_team_size(); /* starts the team */
    if (p > team)
      p = team;
  }
  plain_range pr = {f, ctx, n, grain, grains, p, NULL};
  if (nested) /* in a chunk: on its participant */
    return tt__team_run(whole_chunk, &pr, 1, 1, TT__MODE_STATIC, NULL);
  if (p == 1) { /* one grain or one participant: on the caller, its time
                 * kept in the loop's record (way.h) */
    tt__loop *l = tt__loop_find(tt__way_mine(), site, n, 1);
    bool timed = tt__loop_alone_timed(l);
    uint64_t t0 = timed ? tt__now_ns() : 0;
    int rc = tt__team_run(whole_chunk, &pr, 1, 1, TT__MODE_STATIC, NULL);
    if (timed)
      tt__loop_alone_record(l, tt__now_ns() - t0);
    return rc;
  }
  if (schedule != TT_SCHED_GREEDY) /* greedy has no blocks */
    pr.deal = tt__range_deal(p, NULL);

  switch (schedule) {
  case TT_SCHED_STATIC:
    return tt__team_run_site(static_chunk, &pr, p, p, TT__MODE_STATIC, site, n,
                             NULL);
  case TT_SCHED_GREEDY:
    return tt__team_run_site(greedy_chunk, &pr, grains, p, TT__MODE_GREEDY,
                             site, n, NULL);
  case TT_SCHED_STEAL: {
    size_t unit, units;
    tt__steal_units(n, grain, TT__STEAL_MAX_UNITS, &unit, &units);
    return run_steal(site, NULL, f, ctx, n, unit, units, p, pr.deal);
  }
  case TT_SCHED_AUTO:
  default:
    break;
  }

  if (grains < (size_t)AUTO_MIN_GRAINS * p)
    return tt__team_run_site(greedy_chunk, &pr, grains, p, TT__MODE_GREEDY,
                             site, n, NULL);
  /* The loop's record: its last region's time decides (see "Auto"). */
  tt__loop *l = tt__loop_find(tt__way_mine(), site, n, p);
  int steal = l->steal != 0, rc;
  if (steal) {
    size_t unit, units;
    tt__steal_units(n, grain, (uint64_t)UNITS_PER_P * p, &unit, &units);
    rc = run_steal(site, l, f, ctx, n, unit, units, p, pr.deal);
  } else {
    /* greedy over chunks of about SHORT_CHUNK_NS (counted when the loop
     * turned short, so that its region's shape stays put), at least one
     * per participant and at most UNITS_PER_P */
    uint64_t want = l->chunks;
    if (want < p)
      want = p;
    if (want > (uint64_t)UNITS_PER_P * p)
      want = (uint64_t)UNITS_PER_P * p;
    plain_range g = pr;
    tt__steal_units(n, grain, want, &g.grain, &g.grains);
    rc = tt__team_run_loop(greedy_chunk, &g, g.grains, p, TT__MODE_GREEDY, l,
                           NULL);
  }
  float ns = l->last_ns;
  if (ns > 0) {
    l->steal = (int8_t)(steal ? ns >= AUTO_SHORT_NS : ns >= AUTO_LONG_NS);
    if (steal && !l->steal)
      l->chunks = (uint32_t)(ns / SHORT_CHUNK_NS);
  }
  return rc;
}

/* tt__foreach_range_last_ns (teams-driver.h): the record that
 * tt__foreach_range_site would find for this call on this thread, looked
 * at and not taken: the same key (site, n's class, p as the call clips it
 * to the range), no record made or taken over.  p is not clipped to the
 * team: that would start the team, or restart it after a resize, from a
 * caller that may hold other locks (the driver's submit holds an event's);
 * a p larger than the team finds no record.  A range of one grain or one
 * participant keeps its number too (its record has p = 1), as does a
 * loop under a fixed way. */
uint64_t tt__foreach_range_last_ns(const void *site, size_t n, size_t grain,
                                   size_t p, tt_schedule schedule) {
  size_t unit, units, pp;
  if (!site || n == 0 || tt_participant() >= 0 ||
      tt__range_plan(n, grain, p, schedule, 0, &unit, &units, &pp) != 0)
    return 0;
  const tt__loop *l = tt__loop_peek(tt__way_mine(), site, n, pp);
  return l && l->last_ns > 0 ? (uint64_t)l->last_ns : 0;
}

/* ---- a range on a span of participants ------------------------------------- */

/* tt__foreach_range_on (teams-driver.h).  Static regions of first + count
 * chunks, chunk c for participant c: the team's protocol knows nothing of
 * sub-teams, and a static region is the one kind that names the participant
 * of every chunk.  Chunks below `first` return at once; a member's chunk
 * (c in [first, first + count)) works only when it runs on participant c of
 * a parallel region.  The regions always run on the team's workers
 * (TT__MODE_STATIC_PLACED: the way's choice never takes them elsewhere), but
 * one may still be serial (the busy rule: another thread holds the team,
 * or it is shutting down): every chunk runs on the caller, which is no
 * member unless first == 0, and the chunk says so in `serial`, which only
 * the caller writes (a serial region runs on it alone).  Then a chunk
 * returns without touching the range, and the caller runs more rounds:
 *   static  round 0: member k runs its block k of whole grains and marks it
 *           done; later rounds: the blocks not done, from a shared counter
 *           over their list, on whichever members run (a block moves to
 *           another member of the span, never outside it);
 *   other   grains from one shared counter among the members (the steal
 *           schedule's victim orders and its rescue by participant 0 assume
 *           a region over participants 0..p-1 held by one of them, which a
 *           sub-team need not contain); a grain taken is run whole by its
 *           taker, so a later round goes on from the counter.
 * A round that ran nothing (the team held) is followed by a pause (yields,
 * then sleeps of 1 us doubling to 1 ms), since what stopped it lasts until
 * another thread's region ends.  Without `wait`, a first round that ran
 * nothing returns TT_EBUSY instead; once anything ran, the call finishes.
 * `next` and the done bits are written by members in a region and read by
 * the caller after it (the region's end orders them). */
typedef struct on_range {
  range_fn f;
  void *ctx;
  size_t n, grain, grains, first, count;
  int dynamic;
  int serial;
  int round;
  _Atomic uint64_t *done; /* static: bit k, block k ran */
  size_t *left, nleft;    /* static, later rounds: the blocks not done */
  _Atomic size_t next;    /* grains (dynamic) or entries of left taken */
} on_range;

static void on_block(on_range *s, size_t k) {
  run_grain_block(s->f, s->ctx, s->n, s->grain, s->grains, s->count, k);
  tt_atomic_fetch_or_acq_rel(&s->done[k / 64], (uint64_t)1 << (k % 64));
}

static void on_chunk(void *ctx, size_t c) {
  on_range *s = ctx;
  if (c < s->first)
    return;
  if (!tt__region_parallel()) {
    s->serial = 1;
    return;
  }
  if (tt_participant() != (int)c)
    return; /* a left-out member's chunk, on the holder */
  if (!s->dynamic && s->round == 0) {
    on_block(s, c - s->first);
    return;
  }
  size_t lim = s->dynamic ? s->grains : s->nleft;
  for (;;) {
    size_t g = tt_atomic_fetch_add_relaxed(&s->next, 1);
    if (g >= lim)
      return;
    if (!s->dynamic) {
      on_block(s, s->left[g]);
      continue;
    }
    size_t begin = g * s->grain;
    size_t end = s->n - begin > s->grain ? begin + s->grain : s->n;
    s->f(s->ctx, begin, end);
  }
}

static void on_pause(unsigned *tries) {
  unsigned t = (*tries)++;
  if (t < 64) {
    tt__yield();
    return;
  }
  long ns = 1000l << (t - 64 < 10 ? t - 64 : 10); /* 1 us .. ~1 ms */
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

/* Rounds until the whole range ran (see above); s->done and s->left are
 * the caller's, sized for s->count. */
static int run_rounds(on_range *s, int wait) {
  unsigned tries = 0;
  int any = 0; /* anything ran yet */
  for (;;) {
    size_t before = tt_atomic_load_relaxed(&s->next);
    s->serial = 0;
    /* Always on the team: the members are participants (way.c). */
    int rc = tt__team_run(on_chunk, s, s->first + s->count, s->first + s->count,
                          TT__MODE_STATIC_PLACED, NULL);
    if (rc < 0)
      return rc;
    size_t after = tt_atomic_load_relaxed(&s->next);
    int ran;
    if (s->dynamic) {
      ran = after != before;
      if (after >= s->grains)
        return 0;
    } else {
      size_t k = 0;
      ran = s->round > 0 && after != before;
      s->nleft = 0;
      for (size_t b = 0; b < s->count; b++) {
        if (tt_atomic_load_relaxed(&s->done[b / 64]) >> (b % 64) & 1) {
          ran |= s->round == 0;
          continue;
        }
        s->left[k++] = b;
      }
      s->nleft = k;
      if (k == 0)
        return 0;
      s->round++;
      tt_atomic_store_relaxed(&s->next, 0);
    }
    any |= ran;
    if (!ran) {
      if (!any && !wait)
        return TT_EBUSY;
      on_pause(&tries);
    }
  }
}

int tt__foreach_range_on(void (*f)(void *ctx, size_t begin, size_t end),
                         void *ctx, size_t n, size_t grain, size_t first,
                         size_t count, tt_schedule schedule, int wait) {
  if (!f || count == 0 || first > SIZE_MAX - count ||
      (unsigned)schedule > (unsigned)TT_SCHED_AUTO)
    return TT_EINVAL;
  int dynamic = schedule != TT_SCHED_STATIC;
  if (grain == 0)
    grain =
        tt__range_default_grain(dynamic ? TT_SCHED_GREEDY : schedule, n, count);
  if (n > SIZE_MAX - grain)
    return TT_EOVERFLOW;
  if (n == 0)
    return 0;
  if (tt_participant() >= 0 || tt__in_openmp_parallel())
    return TT_ENOSYS; /* this thread can never hold the team (team.c) */
  if (first + count > tt_team_size()) /* starts the team */
    return TT_ERANGE;
  size_t grains = n / grain + (n % grain != 0);
  if (first == 0 && count == 1) { /* the caller is the one member */
    plain_range pr = {f, ctx, n, grain, grains, 1, NULL};
    return tt__team_run(whole_chunk, &pr, 1, 1, TT__MODE_STATIC, NULL);
  }
  on_range s = {f,       ctx, n, grain, grains, first, count,
                dynamic, 0,   0, NULL,  NULL,   0,     0};
  /* static's bookkeeping: on the stack for spans of up to 256 */
  _Atomic uint64_t done_small[4];
  size_t left_small[256];
  size_t words = (count + 63) / 64;
  void *heap = NULL;
  if (!dynamic) {
    if (count <= 256) {
      s.done = done_small;
      s.left = left_small;
    } else {
      heap = malloc(words * sizeof *s.done + count * sizeof *s.left);
      if (!heap)
        return TT_ENOMEM;
      s.done = heap;
      s.left = (size_t *)(s.done + words);
    }
    for (size_t w = 0; w < words; w++)
      atomic_init(&s.done[w], 0);
  }
  int rc = run_rounds(&s, wait);
  free(heap);
  return rc;
}

int tt_steal_last_stats(tt_steal_stats *out) {
  if (!out)
    return TT_EINVAL;
  *out = tls_last; /* the whole struct: its size never changes (team.h) */
  return 0;
}
