/* teams: what the way's rule (way.c) reads at team start, measured here,
 * and TEAMS_DEBUG's report of what it did.
 *
 * A timed region costs its look at the loop's record (tt__way_choose,
 * tt__way_record and the completion at the loop's next region) and two
 * clock reads: measured once, at the first team start, on a scratch table
 * (docs/measurements.md, "The way's probes").  The rule times one region in
 * as many as keep that under 1/TT__OVERHEAD_DIV of the regions' cost. */
#include <stdio.h>
#include <string.h>

#include "team-state.h"
#include "way.h"

uint64_t tt__way_clock_cost(void) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t a = tt__now_ns(), b = tt__now_ns();
    best = b - a < best ? b - a : best;
  }
  return best;
}

static bool never(tt__way x) {
  (void)x;
  return false;
}

/* The cheapest of 16 looks on a scratch table, and a clock read.  Under the
 * lifecycle lock (the first start), so the scratch table is this call's. */
uint64_t tt__way_look_cost(void) {
  static tt__loops scratch;
  static const char key;
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; i++) {
    uint64_t a = tt__now_ns();
    tt__way_plan plan;
    tt__loop *l = tt__loop_find(&scratch, &key, 2, 2);
    tt__way w = tt__way_choose(&scratch, l, 2, TT__MODE_STATIC, TT__WAYS,
                               false, never, &plan);
    tt__way_cost c = {1000, 0, 0, a + 1000};
    tt__way_record(&scratch, &plan, w, &c);
    uint64_t b = tt__now_ns();
    best = b - a < best ? b - a : best;
  }
  memset(&scratch, 0, sizeof scratch);
  return best + tt__way_clock_cost();
}

/* At exit, on the thread that ends the process (usually the one that
 * launched): its loops and the idle rule's counters. */
void tt__way_report(void) {
  static const char *const names[TT__WAYS] = {"team", "caller", "openmp"};
  const tt__loops *t = &tt__thr.loops;
  fprintf(stderr,
          "teams: ways: timed regions on the team %llu, on the caller %llu, "
          "on OpenMP's threads %llu; trials %llu, %llu, %llu; %llu switches; "
          "workers slept %llu times after their spin, %llu overcommitted, "
          "%llu beside the holder\n",
          (unsigned long long)t->timed[0], (unsigned long long)t->timed[1],
          (unsigned long long)t->timed[2], (unsigned long long)t->trials[0],
          (unsigned long long)t->trials[1], (unsigned long long)t->trials[2],
          (unsigned long long)t->switches,
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_spun),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_overcommitted),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_beside_holder));
  for (int i = 0; i < TT__LOOPS; i++) {
    const tt__loop *l = &t->loop[i];
    if (!l->key)
      continue;
    fprintf(stderr,
            "teams:   loop %p n<2^%u p=%u: on the %s; ns per region: team %.0f, "
            "caller %.0f, openmp %.0f (work %.0f)\n",
            l->key, l->size_class, l->p, names[l->cur], (double)l->est[0],
            (double)l->est[1], (double)l->est[2], (double)l->work);
  }
}
