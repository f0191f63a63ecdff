/* teams: how a region runs -- on the team, lent to OpenMP, or on the caller
 * alone -- chosen per loop from what each way cost (internal; the rule is
 * docs/protocol.md item 43, kept in way.c). */
#ifndef TEAMS_WAY_H
#define TEAMS_WAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "team-internal.h"

/* The ways, in TEAMS_RUN's order (settings.h: auto|team|serial|openmp): the
 * setting's value is 0 for the rule, else 1 + the way it fixes. */
typedef enum tt__way {
  TT__WAY_TEAM,   /* on the team's workers (fork.c) */
  TT__WAY_SERIAL, /* on the caller alone */
  TT__WAY_LEND,   /* on OpenMP's threads (lend.c) */
  TT__WAYS        /* no way: the rule chooses (TEAMS_RUN=auto), no trial */
} tt__way;

/* Samples a trial measures after its transient (way.c, "Constants"). */
#define TT__WAY_SETTLED 4

/* A loop's record: what the rule knows of one loop of one thread.  A loop
 * is its function (or the site a runner names), its length's class (within
 * a factor of two: a triangular loop, m = n - i, is one loop) and p. */
typedef struct tt__loop {
  const void *key;
  uint32_t p;
  uint8_t size_class;
  /* the choice */
  uint8_t cur;   /* the way its regions run */
  uint8_t trial; /* the way on trial, TT__WAYS: none */
  /* per way: ns per region, the gap to the loop's next region included
   * (0: not measured yet); what its next trial is charged beyond cur; the
   * loop's time since it last ran */
  float est[TT__WAYS], charge[TT__WAYS], since[TT__WAYS];
  float work;   /* the caller alone's cost of a region, ns (0: unknown) */
  float steady; /* cur's regions without their long gaps, ns */
  /* the trial under way */
  uint8_t tried, settled;        /* its regions, those past the transient */
  float cost, first;             /* its regions' cost; its first region's */
  float sample[TT__WAY_SETTLED]; /* its settled regions' costs */
  uint64_t until; /* when cur's lingering threads stop: the transient */
  /* sampling: untimed regions before the next look; the regions the last
   * timed one stands for; untimed regions since the last look */
  uint32_t skip, stride, untimed;
  /* the last timed region, whose cost is complete when the next starts */
  uint8_t pend_way; /* TT__WAYS: none pending */
  float pend_ns;
  uint64_t pend_end;
  /* range.c's auto schedule: the last timed region's own time, ns; steal
   * (1), greedy over `chunks` chunks (0), unknown (-1) */
  float last_ns;
  int8_t steal;
  uint32_t chunks;
} tt__loop;

/* A launching thread's loops (in its tt__thread, team-state.h): direct
 * mapped; a loop that maps onto another's record takes it over. */
#define TT__LOOPS 64
typedef struct tt__loops {
  tt__loop loop[TT__LOOPS];
  /* per way: what its last trial on this thread was charged (0: it won) */
  float charge[TT__WAYS];
  /* what the rule did, for TEAMS_DEBUG's report at exit */
  uint64_t timed[TT__WAYS], trials[TT__WAYS], switches;
} tt__loops;

/* The record of a loop, taken over (fresh, the team on trial) when the
 * slot held another loop. */
tt__loop *tt__loop_find(tt__loops *t, const void *key, size_t size, size_t p);
/* The record of a loop if the table has it, else NULL (tests, the report). */
const tt__loop *tt__loop_peek(const tt__loops *t, const void *key, size_t size,
                              size_t p);

/* The common case, before anything else is looked at: a loop on the caller
 * alone between two looks.  Counts the region and returns true; it then
 * runs serially and nothing else is due. */
static inline bool tt__loop_skip_serial(tt__loop *l) {
  if (l->skip == 0 || l->cur != TT__WAY_SERIAL || l->trial != TT__WAYS ||
      l->pend_way != TT__WAYS)
    return false;
  l->skip--;
  l->untimed++;
  return true;
}

/* A region's choice, from tt__way_choose to tt__way_record. */
typedef struct tt__way_plan {
  tt__loop *loop; /* NULL: a fixed way, nothing recorded */
  bool timed;     /* time this region and record it */
  size_t m;       /* the region's chunks and mode */
  tt__mode mode;
  uint64_t t0;    /* the clock at the choice when it read it, else 0 */
} tt__way_plan;

/* What a timed region cost, for tt__way_record. */
typedef struct tt__way_cost {
  uint64_t ns;       /* the region, from before the way started to its end */
  uint64_t own_ns;   /* team: the holder's own chunks' time, else 0 */
  size_t own_chunks; /* team: how many it ran */
  uint64_t end_ns;   /* the clock at the end */
} tt__way_cost;

/* Whether way x's threads spin now: asked only when a first trial of x is
 * weighed, which would wake them (and be charged their linger) unless they
 * do. */
typedef bool (*tt__way_spins)(tt__way x);

/* The way the loop's next region runs.  fixed is TEAMS_RUN's way
 * (TT__WAYS: the rule's choice); can_lend whether lend.c could run this
 * region now (tt__lend_possible).  l may be NULL only with a fixed way
 * (then nothing is timed).  Per calling thread, no lock. */
tt__way tt__way_choose(tt__loops *t, tt__loop *l, size_t m, tt__mode mode,
                       tt__way fixed, bool can_lend, tt__way_spins spins,
                       tt__way_plan *plan);

/* Records what a timed region cost; `ran` is the way it ran (which may
 * differ from the choice: the team was busy, or could not lend). */
void tt__way_record(tt__loops *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *cost);

/* What the rule reads, set at each team start: a clock read's own cost, a
 * timed region's (its look and reads: way-probe.c measures both at the
 * first start) and how long each way's threads spin after its last region
 * (the team's spin_ns; OpenMP's, tt__lend_spin_ns). */
void tt__way_init(uint64_t clock_ns, uint64_t look_ns, uint64_t team_linger_ns,
                  uint64_t lend_linger_ns);
/* Tests: the clock the rule reads when a region starts (NULL: the real). */
void tt__way_test_clock(uint64_t (*now)(void));

/* way-probe.c: the costs tt__way_init needs, and TEAMS_DEBUG's report of
 * the calling thread's loops. */
uint64_t tt__way_clock_cost(void);
uint64_t tt__way_look_cost(void);
void tt__way_report(void);

/* The calling thread's table (team.c). */
tt__loops *tt__way_mine(void);

#endif
