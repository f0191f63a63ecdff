/* teams: how a region runs, chosen by what each way cost (internal; way.c
 * says how and why). */
#ifndef TEAMS_WAY_H
#define TEAMS_WAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "team-internal.h"

typedef enum tt__way {
  TT__WAY_TEAM,   /* on the team's workers (fork.c) */
  TT__WAY_LEND,   /* on OpenMP's threads (lend.c) */
  TT__WAY_SERIAL, /* on the caller alone */
  TT__WAYS
} tt__way;

/* TEAMS_RUN, in the settings table's order. */
typedef enum tt__run {
  TT__RUN_AUTO,
  TT__RUN_TEAM,
  TT__RUN_SERIAL,
  TT__RUN_OPENMP
} tt__run;

/* A region's choice, from tt__way_choose to tt__way_record. */
typedef struct tt__way_plan {
  void *site;  /* the record it updates; NULL: a fixed way, nothing recorded */
  bool timed;  /* time this region and record it */
} tt__way_plan;

/* What a region that ran cost, for tt__way_record. */
typedef struct tt__way_cost {
  uint64_t ns;         /* the region, from before the way started to its end */
  uint64_t own_ns;     /* team: the holder's own share's time, else 0 */
  size_t own_chunks;   /* team: the chunks of that share */
  size_t threads;      /* participants it ran on (1 serial) */
  uint64_t end_ns;     /* tt__now_ns() at the end */
} tt__way_cost;

/* The way the next region of this site runs: key and size identify the
 * loop (the user's function, or a kernel's, and the length of its range),
 * m, p and mode its region's shape.  run is TEAMS_RUN; can_lend whether
 * lend.c could run this region now (tt__lend_possible).  Fills *plan.
 * Per calling thread, no lock: the table is the thread's own. */
tt__way tt__way_choose(const void *key, size_t size, size_t m, size_t p,
                       tt__mode mode, tt__run run, bool can_lend,
                       tt__way_plan *plan);

/* Records what a timed region cost; `ran` is the way it ran (which may
 * differ from the choice: the team was busy, or could not lend). */
void tt__way_record(const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *cost);

/* What the rule needs, set at the first team start: a clock read's own
 * cost (tt__way_clock_cost measures it) and how long OpenMP's threads spin
 * after a region (tt__lend_spin_ns). */
uint64_t tt__way_clock_cost(void);
void tt__way_init(uint64_t clock_ns, uint64_t omp_spin_ns);

/* Tests: the calling thread's record of a site (NULL when not in its
 * table), its fields as way.c keeps them, and a reset of its table. */
typedef struct tt__way_view {
  tt__way cur, trial;     /* trial TT__WAYS: none */
  double est[TT__WAYS];   /* ns per region, 0: unknown */
  double work;            /* the serial estimate from the team's runs */
} tt__way_view;
bool tt__way_peek(const void *key, size_t size, size_t m, size_t p,
                  tt__mode mode, tt__way_view *out);
void tt__way_forget(void);

/* What the rule did in this process (TEAMS_DEBUG's report at exit). */
void tt__way_report(void);

#endif
