/* teams: how a region runs -- team (the team's workers), openmp (OpenMP's
 * threads) or serial (the caller alone) -- chosen from a cost model with
 * measured constants (internal; the rule is docs/protocol.md item 44, kept
 * in way.c). */
#ifndef TEAMS_WAY_H
#define TEAMS_WAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "team-internal.h"

/* The ways, named and ordered as TEAMS_RUN's values (settings.h:
 * auto|team|serial|openmp): the setting's value is 0 for the rule, else
 * 1 + the way it fixes. */
typedef enum tt__way {
  TT__WAY_TEAM,   /* on the team's workers (fork.c) */
  TT__WAY_SERIAL, /* on the caller alone */
  TT__WAY_OPENMP, /* on OpenMP's threads, the region lent (lend.c) */
  TT__WAYS        /* no way: the rule chooses (TEAMS_RUN=auto) */
} tt__way;

/* The process's constants, ns (the formulas: way.c, team_cost; where
 * each comes from: docs/protocol.md item 44): measured at each
 * team start (way-probe.c) and again by every region that meets them.
 * Read by every launching thread, written by the holder and the workers:
 * relaxed atomics, each a statistic that a lost update only delays. */
typedef struct tt__costs {
  _Atomic uint32_t fork;      /* a region on spinning workers beyond its work, per worker */
  _Atomic uint32_t wake_call; /* the caller's futex wake of one sleeping worker */
  _Atomic uint32_t wake_lat;  /* from that call until the worker runs */
  /* an openmp region beyond its work: OpenMP's threads asleep, spinning
   * (0: not measured) */
  _Atomic uint32_t lend[2];
  _Atomic uint32_t look;      /* a timed region's own cost: two clock reads and the record */
} tt__costs;
extern tt__costs tt__the_costs;

/* One loop's record: a loop is its function (or the key a runner names: a
 * kernel), its length's class (within a factor of two: a triangular loop,
 * m = n - i, is one loop) and p.  Per launching thread, no lock. */
typedef struct tt__loop {
  /* The first cache line (the record is aligned to one): what a launch
   * reads and writes on its way to a region, so that the common one -- a
   * region on the caller between two timed ones (tt__loop_skip_serial) --
   * touches one line of the record.  With the record at 200 unaligned
   * bytes, these fields spread over its lines, the cl-gap cells of two
   * small groups read 5-15% dearer than at 128 (docs/benchmarks.md). */
  _Alignas(64) const void *key;
  uint32_t p;
  uint8_t size_class;
  /* no work yet and a team region gave none (the caller ran no chunk):
   * the next region runs on the caller alone, which measures it */
  bool alone_next;
  /* range.c's auto schedule: steal (1), greedy over `chunks` chunks (0),
   * unknown (-1); and the last timed region's own time, ns */
  int8_t steal;
  float work; /* ns of one region on the caller alone (0: not measured) */
  uint32_t untimed_left; /* untimed regions before the next timed one */
  uint32_t used; /* the table's `finds` when it was last found */
  float last_ns;
  uint32_t chunks;
  /* the team's measured cost beyond the model's, per state the region
   * met: the workers all spinning [0] or some woken [1] */
  float extra[2];
  /* the budgets of the ways it keeps out, team [0] and openmp [1], ns a
   * trial may cost: each gains 1/TT__OVERHEAD_DIV of the loop's predicted
   * cost while its way is kept out and loses each trial's measured excess
   * over the best way (way.c) */
  float budget_ns[2];
  /* Lending paused until then (0: not paused); what lending beside
   * OpenMP's spinning threads has cost since the last pause over the team
   * where they sleep, as predicted; the pause's predicted cost; the
   * pauses' budget, as a way's (way.c, "OpenMP's spin") */
  uint64_t lend_paused_until;
  float lend_regret_ns, lend_pause_ns, lend_budget_ns;
  /* Below: what a timed region updates. */
  /* the last three samples of each, whose median they are, and how many
   * there are (up to 3; tt__follow_median) */
  float work_samples[3], extra_samples[2][3];
  uint8_t work_nsamples, extra_nsamples[2];
  /* an openmp region of the loop beyond E / p, per state of OpenMP's
   * threads [omp]: the lend's own cost and the loop's imbalance, the
   * median of its last three samples as the others (none yet: the
   * process's lend constant stands in) */
  float lent[2], lent_samples[2][3];
  uint8_t lent_nsamples[2];
  /* for TEAMS_DEBUG's report: timed regions by the way they ran, their
   * measured time, and the team's that woke workers */
  uint32_t timed_n[TT__WAYS], woke_n;
  float timed_ns[TT__WAYS];
} tt__loop;

_Static_assert(offsetof(tt__loop, budget_ns) + sizeof(float[2]) <= 64,
               "a launch's fields in the record's first line");

/* A launching thread's loops (in its tt__thread, team-state.h): sets of
 * TT__LOOP_WAYS records, a loop's set from its key, class and p; a loop
 * new to a full set takes over the record found least recently (a
 * program's loops in turn keep their records: with one record a set, two
 * loops of a phase mapping onto it made each region a first one). */
#define TT__LOOPS 64
#define TT__LOOP_WAYS 4
typedef struct tt__loops {
  tt__loop loop[TT__LOOPS];
  uint32_t finds; /* tt__loop_find calls, the clock of the records' `used` */
  /* the gap between this thread's regions, ns: the median of the last three
   * before timed regions, the untimed ones in between counted at their work */
  float gap, gap_samples[3];
  uint8_t gap_nsamples;
  uint64_t last_end_ns; /* the clock at the end of the last timed region (0: none) */
  uint32_t untimed;  /* untimed regions since */
  float untimed_ns;  /* and their work */
  /* what the rule did, for TEAMS_DEBUG's report at exit; and how well the
   * model predicted each way: its timed regions' measured and predicted
   * time (regions it chose, trials not counted) */
  uint64_t ran[TT__WAYS], timed, trials;
  double trial_ns;
  uint64_t tried[TT__WAYS]; /* trials by way */
  uint64_t chosen_n[TT__WAYS];
  double chosen_ns[TT__WAYS], chosen_predicted_ns[TT__WAYS];
} tt__loops;

/* The record of a loop; a new one (fresh) in its set's empty or least
 * recently found record. */
tt__loop *tt__loop_find(tt__loops *t, const void *key, size_t size, size_t p);
/* The record of a loop if the table has it, else NULL (tests, the report). */
const tt__loop *tt__loop_peek(const tt__loops *t, const void *key, size_t size,
                              size_t p);
/* A loop whose regions keep their time alone, nothing else learnt: a range
 * of one grain or one participant (range.c), a loop under a fixed way
 * (tt__way_choose).  Timed as often as any loop, for the record's last_ns
 * (the auto schedule and the driver's run-at-submit read it).  Whether to
 * time this region; then its time. */
bool tt__loop_alone_timed(tt__loop *l);
void tt__loop_alone_record(tt__loop *l, uint64_t ns);

/* The common case, before anything else is looked at: a loop that runs
 * serial (on the caller alone) between two timed regions.  Counts it and
 * returns true; it then runs serially and nothing else is to be done. */
static inline bool tt__loop_skip_serial(tt__loops *t, tt__loop *l) {
  if (l->untimed_left == 0 || l->work <= 0 ||
      (float)tt_atomic_load_relaxed(&tt__the_costs.fork) * 2.0f < l->work)
    return false;
  l->untimed_left--;
  t->untimed++;
  t->untimed_ns += l->work;
  return true;
}

/* The state a region meets, read by the caller before it chooses. */
typedef struct tt__way_state {
  size_t spinning;  /* the team's workers awake now, at most p - 1 */
  bool can_lend;    /* lend.c could run this region now */
  bool omp_spins;   /* OpenMP's threads spin now (read only when can_lend) */
  /* what a region lent now leaves behind (tt__lend_tail_ns): where
   * OpenMP's threads spin, what it adds to the spin of the last lent one */
  float omp_tail_ns;
  /* how long lending must pause for a look to see OpenMP's threads asleep
   * where their spin is the lent regions' (lend.c, tt__lend_pause_ns); 0
   * where they never sleep or never spin */
  float omp_pause_ns;
} tt__way_state;

/* A region's choice, from tt__way_choose to tt__way_record. */
typedef struct tt__way_plan {
  tt__loop *loop;  /* NULL: first touch, nothing learnt */
  bool fixed;      /* TEAMS_RUN's way: only the loop's last_ns is kept */
  tt__way way;
  bool wake;       /* team: wake the sleeping workers (else they sit it out) */
  bool timed;      /* time this region and record it */
  bool trial;      /* the loop had no number for this way: counted */
  /* a trial: the budget that pays it (0 team, 1 openmp; -1 none), the
   * best way's predicted cost without it, and what it leaves behind
   * (openmp: the spin after it) */
  int8_t charge;
  float best_ns, leaves_ns;
  float expect_ns; /* the chosen way's predicted cost (0: none) */
  size_t m;        /* the region's chunks, p and mode */
  size_t p;
  tt__mode mode;
  size_t spinning; /* the state it was chosen in */
  bool omp_spins;
  uint64_t linger_ns; /* how long the team's workers spin after it */
  uint64_t t0;        /* the clock at the choice (timed) */
} tt__way_plan;

/* What a timed region cost, for tt__way_record. */
typedef struct tt__way_cost {
  uint64_t ns;       /* the region, from the choice to its end */
  uint64_t own_ns;   /* the caller's own chunks' time (the caller alone: ns) */
  double own_share;  /* their share of the region's work (0: unknown) */
  size_t woken;      /* team: sleeping workers it woke */
  uint64_t end_ns;   /* the clock at the end */
  uint64_t lent_part_ns; /* openmp: its threads' longest part (0: not measured) */
} tt__way_cost;

/* The way the loop's next region runs.  fixed is TEAMS_RUN's way
 * (TT__WAYS: the rule's): then only l's last_ns is kept.  l may be NULL
 * (first touch): then nothing is learnt.  Per calling thread, no lock. */
void tt__way_choose(tt__loops *t, tt__loop *l, size_t m, size_t p,
                    tt__mode mode, tt__way fixed, const tt__way_state *s,
                    tt__way_plan *plan);

/* Records what a timed region cost; `ran` is the way it ran (which may
 * differ from the choice: the team was busy, or could not lend). */
void tt__way_record(tt__loops *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *cost);

/* The model's predicted cost of a region of `work` ns in state s, on each
 * way (tests, teams-info).  wake: the team's cost when it wakes the
 * sleepers, else when they sit it out (the same when none sleeps). */
float tt__way_predict(const tt__loop *l, tt__way x, bool wake, size_t m,
                      size_t p, tt__mode mode, const tt__way_state *s);

/* The holder's and the workers' samples of the constants (fork.c, idle.c,
 * team.c): a wake call's time, a woken worker's latency, an openmp
 * region's overhead with OpenMP's threads spinning or not. */
void tt__costs_wake_call(uint64_t ns);
void tt__costs_wake_lat(uint64_t ns);
void tt__costs_lend(bool spinning, uint64_t ns);
/* way-probe.c: measures fork, wake_call and wake_lat on the running team
 * (called by the first holder after each start), and look, once.  False
 * when fork could not be measured (no region gave a sample: one that woke
 * no one, most workers running their own chunk): a later holder probes
 * again, TT__PROBE_GAP_NS later, then twice as long after each failure up
 * to TT__PROBE_GAP_MAX_NS (a new worker can wait milliseconds for its
 * first run beside a busy caller: the 2-core guests; a failed try costs
 * the holder about 192 us of chunks at most, its chunk doubled with each
 * failure up to 64 us). */
bool tt__costs_probe(void);
#define TT__PROBE_GAP_NS 1000000u
#define TT__PROBE_GAP_MAX_NS 1000000000u
/* Sets the constants (tests; 0 leaves one as it is). */
void tt__costs_set(uint32_t fork, uint32_t wake_call, uint32_t wake_lat,
                   uint32_t look);
/* Tests: the clock the rule reads when a region starts (NULL: the real). */
void tt__way_test_clock(uint64_t (*now)(void));

/* A loop's number, the median of its last three samples s (n counts them,
 * up to 3): a sample that met a time slice or an interrupt moves nothing,
 * a new level is followed at its second sample (way-loops.c). */
void tt__follow_median(float *v, float s[3], uint8_t *n, float x);

/* TEAMS_DEBUG's report of the constants and the calling thread's loops. */
void tt__way_report(void);

/* The calling thread's table (team.c). */
tt__loops *tt__way_mine(void);

#endif
