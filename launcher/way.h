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

/* A loop's record (way.c says what each field is for). */
typedef struct tt__way_site {
  const void *key;
  uint8_t size_class;  /* with key, the loop: its length's (range, m) ... */
  uint8_t m_class;     /* ... and its chunks' classes (tt__way_class) */
  uint32_t shape;      /* p << 2 | mode */
  uint8_t cur;         /* the way regions run now */
  uint8_t stale;       /* ways (bits) whose est predates the loop's last new
                          level (way.c): not believed until tried */
  uint8_t rival;       /* a way whose trial beat cur, while cur is measured again */
  uint8_t trial;       /* the way a trial runs now, TT__WAYS: none */
  uint16_t trial_n;    /* regions of that trial so far */
  uint32_t skip;       /* untimed regions left before the next look */
  uint32_t every;      /* regions the last timed one stands for */
  uint32_t untimed;    /* untimed regions since the last look */
  float est[TT__WAYS]; /* ns per region; 0: unknown */
  float base;          /* cur's regions without their long gaps (way.c,
                          "The gap share"); 0: unknown */
  float since[TT__WAYS];  /* ns spent on the site since the way last ran */
  float charge[TT__WAYS]; /* what its last trial cost beyond cur */
  float work;          /* serial estimate from the team's own share; 0 */
  float team_best;     /* the lowest estimate the team has had, 0 */
  float trial_sum;     /* the trial's cost so far */
  float ring[4];       /* ... of its last regions after the transient */
  uint16_t settled_n;  /* how many of those */
  int8_t level_dir;    /* samples in a row above twice est (1), below half (-1) */
  uint8_t level_n;
  float level_sum, level_max; /* of those samples: their sum, the costliest */
  bool pending;        /* its last region was timed: cost complete at the next */
  uint8_t pend_way;
  float pend_dur;      /* that region's own time, ns */
  uint64_t pend_end;   /* when it ended */
} tt__way_site;

/* A launching thread's table (in its tt__thread, team-state.h). */
#define TT__WAY_SITES 64
typedef struct tt__way_table {
  tt__way_site sites[TT__WAY_SITES];
  float lend_overhead; /* a lent region's cost beyond work / threads, 0 */
  uint64_t last_lend;  /* when this thread's last lent region ended */
} tt__way_table;

/* A region's choice, from tt__way_choose to tt__way_record. */
typedef struct tt__way_plan {
  tt__way_site *site; /* the record it updates; NULL: a fixed way, nothing recorded */
  bool timed;  /* time this region and record it */
  size_t m;    /* the region's chunks */
  uint64_t t0; /* tt__now_ns() at the choice when it read the clock, else 0 */
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
 * m, p and mode its region's shape (lengths and m by class: way.c).  run is TEAMS_RUN; can_lend whether
 * lend.c could run this region now (tt__lend_possible).  Fills *plan.
 * Per calling thread, no lock: the table is the thread's own. */
tt__way tt__way_choose(tt__way_table *t, const void *key, size_t size,
                       size_t m, size_t p, tt__mode mode, tt__run run,
                       bool can_lend, tt__way_plan *plan);

/* A length's class: its bit length, so a record holds the loops within a
 * factor of two of each other (a loop whose length changes every region,
 * a triangular one, stays one record). */
static inline uint8_t tt__way_class(size_t n) {
  return n ? (uint8_t)(64 - __builtin_clzll((unsigned long long)n)) : 0;
}

static inline uint32_t tt__way_shape(size_t p, tt__mode mode) {
  return (uint32_t)(p << 2) | (uint32_t)mode;
}

/* The table is direct-mapped on the loop: a loop that maps onto another's
 * record takes it over (way.c, lookup). */
static inline tt__way_site *tt__way_slot(const tt__way_table *t,
                                         const void *key, uint8_t size_c,
                                         uint8_t m_c, uint32_t shape) {
  uint64_t h = ((uint64_t)(uintptr_t)key >> 4) ^
               (uint64_t)size_c * 0x9e3779b97f4a7c15u ^
               (uint64_t)m_c * 0xff51afd7ed558ccdu ^
               (uint64_t)shape * 0xc2b2ae3d27d4eb4fu;
  return (tt__way_site *)&t->sites[(h ^ (h >> 29)) % TT__WAY_SITES];
}

static inline bool tt__way_same(const tt__way_site *s, const void *key,
                                uint8_t size_c, uint8_t m_c, uint32_t shape) {
  return s->key == key && s->size_class == size_c && s->m_class == m_c &&
         s->shape == shape;
}

/* The common case, before anything else is looked at: a loop whose record
 * runs it on the caller alone, between two looks.  Counts the region and
 * returns true; then it runs serially and nothing else is due
 * (tt__way_choose's fast path, taken before the team is even started). */
static inline bool tt__way_serial_now(tt__way_table *t, const void *key,
                                      size_t size, size_t m, size_t p,
                                      tt__mode mode) {
  uint8_t size_c = tt__way_class(size), m_c = tt__way_class(m);
  uint32_t shape = tt__way_shape(p, mode);
  tt__way_site *s = tt__way_slot(t, key, size_c, m_c, shape);
  if (s->skip == 0 || s->cur != TT__WAY_SERIAL || s->trial != TT__WAYS ||
      s->pending || !tt__way_same(s, key, size_c, m_c, shape))
    return false;
  s->skip--;
  s->untimed++;
  return true;
}

/* Records what a timed region cost; `ran` is the way it ran (which may
 * differ from the choice: the team was busy, or could not lend). */
void tt__way_record(tt__way_table *t, const tt__way_plan *plan, tt__way ran,
                    const tt__way_cost *cost);

/* What the rule needs, set at the first team start: a clock read's own
 * cost (tt__way_clock_cost measures it), a timed region's own cost
 * (tt__way_look_cost) and how long OpenMP's threads spin after a region
 * (tt__lend_spin_ns). */
uint64_t tt__way_clock_cost(void);
uint64_t tt__way_look_cost(void);
void tt__way_init(uint64_t clock_ns, uint64_t look_ns, uint64_t omp_spin_ns);
/* Tests: the clock the rule reads when a region starts (NULL: the real). */
void tt__way_test_clock(uint64_t (*now)(void));

/* Tests: the calling thread's record of a site (NULL when not in its
 * table), its fields as way.c keeps them, and a reset of its table. */
typedef struct tt__way_view {
  tt__way cur, trial;     /* trial TT__WAYS: none */
  double est[TT__WAYS];   /* ns per region, 0: unknown */
  double work;            /* the serial estimate from the team's runs */
} tt__way_view;
bool tt__way_peek(const tt__way_table *t, const void *key, size_t size,
                  size_t m, size_t p, tt__mode mode, tt__way_view *out);
void tt__way_forget(tt__way_table *t);
/* The calling thread's table. */
tt__way_table *tt__way_mine(void);

/* What the rule did in this process (TEAMS_DEBUG's report at exit). */
void tt__way_report(void);

#endif
