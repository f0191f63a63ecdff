/* teams: the way's constants (way.h, tt__the_costs) measured on the running
 * team, and TEAMS_DEBUG's report of what the rule did.
 *
 * The probe runs at each team start, by the first holder, before that
 * holder's region: regions of one 2 us chunk per participant on the whole
 * team with the workers spinning (`fork`: their cost beyond the chunk, per
 * worker), then, on one worker made to sleep, empty regions that wake it
 * (`wake_call`, timed by hand_on, and `wake_lat`, by the worker when it
 * runs).  About 60 us on the 2-core guests (docs/measurements.md, "The
 * way's constants").  A fork sample is a region that woke no one and in
 * which most workers ran their own chunk: right after a start a woken
 * worker may sit on its holder's CPU (idle.c, "Yielding"), and a region
 * whose chunks the holder claimed measures the holder alone.  Its time
 * less the holder's chunks, over the workers that ran theirs, is the
 * sample; a worker that comes late adds its delay, which is what fork is.
 * (A longer chunk, past the holder's fork to the last worker, was measured
 * and rejected: a late worker's whole delay went into the sample.)  With
 * no sample the next holder probes again, backing off (way.h).  The wake
 * samples go on with every wake the holders make; `fork` is the probe's
 * alone (each loop's own miss is its `extra`, way.c). */
#include <stdio.h>
#include <string.h>

#include "team-state.h"
#include "way.h"

static void empty(void *ctx, size_t c) {
  (void)ctx;
  (void)c;
}

/* A chunk of *ctx ns: long enough that a spinning worker takes its own
 * before the holder, done with its, claims it (protocol 10).  WORK_NS at
 * the first try; each failed try doubles it, up to WORK_MAX_NS: on a
 * loaded machine (a sanitizer build beside other jobs on 2 cores) a
 * spinning worker can be off its CPU for longer than 2 us at every one of
 * a try's regions.  A worker that arrives late in a longer chunk still
 * counts its delay into `fork`, which is what fork is. */
#define WORK_NS 2000
#define WORK_MAX_NS 64000
static void busy(void *ctx, size_t c) {
  (void)c;
  uint64_t until = tt__now_ns() + *(const uint64_t *)ctx;
  while (tt__now_ns() < until)
    tt__cpu_relax();
}

/* What the probes met, for TEAMS_DEBUG's report: tries and measured ones,
 * and the last try's regions -- those whose holder took a late worker's
 * chunk, those that woke a worker -- and its chunk.  Written by holders
 * (one at a time: the team's take orders them); atomic, as the report at
 * exit may read them while another thread probes. */
static struct {
  _Atomic unsigned tries, measured, regions, late, woke, woken;
  _Atomic uint64_t work;
} probed;

static uint64_t median(uint64_t *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      uint64_t x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  return v[n / 2];
}

/* Precondition: the caller holds the team, which runs with n >= 2.
 * Returns false when no region gave a sample (fork not measured). */
bool tt__costs_probe(void) {
  tt__team *T = &tt__the_team;
  tt__thread *me = tt__me();
  size_t n = tt__team_size();
  if (tt_atomic_load_relaxed(&tt__the_costs.look) == 0) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
      uint64_t a = tt__now_ns(), b = tt__now_ns();
      best = b - a < best ? b - a : best;
    }
    /* two clock reads and the record's few loads and stores */
    tt__costs_set(0, 0, 0, (uint32_t)(2 * best + 20));
  }
  if (n < 2)
    return true;
  uint64_t linger = tt_atomic_load_relaxed(&T->linger_ns);
  /* fork: on spinning workers (the first region wakes them); a sample is
   * a region that woke no one and whose holder took the chunks of fewer
   * than half the workers: its time less the holder's chunks, over the
   * workers that ran theirs (a late worker's chunk is the holder's, and
   * the region does not wait for that worker: fork.c, claim_late) */
  tt_atomic_store_relaxed(&T->linger_ns, 1000000);
  uint64_t v[5];
  int got = 0;
  uint64_t work = WORK_NS << (T->probes < 5 ? T->probes : 5);
  work = work < WORK_MAX_NS ? work : WORK_MAX_NS;
  /* 24 regions at first, halved with each doubling of the chunk down to
   * 3; a failed try costs the holder at most 192 us of chunks */
  int tries = 24 >> (T->probes < 3 ? T->probes : 3);
  tt__run_parallel(me, busy, &work, n, n, TT__MODE_STATIC, true, NULL);
  probed.tries++;
  probed.regions = probed.late = probed.woke = probed.woken = 0;
  /* the holder's chunk time in the try: past 3 of the longest chunks (a
   * try whose regions' late chunks fall to the holder: up to n a region),
   * no more regions */
  uint64_t spent = 0;
  for (int i = 0; i < tries && got < 5 && spent < 3 * WORK_MAX_NS; i++) {
    tt__own own = {0, 0, 0};
    uint64_t a = tt__now_ns();
    tt__run_parallel(me, busy, &work, n, n, TT__MODE_STATIC, true, &own);
    uint64_t t = tt__now_ns() - a;
    uint64_t mine = own.chunks * work;
    spent += mine;
    size_t late = own.chunks > 1 ? own.chunks - 1 : 0;
    probed.late += late > 0 && own.woken == 0;
    probed.woke += own.woken > 0;
    probed.woken += (unsigned)own.woken;
    probed.regions++;
    if (own.woken == 0 && 2 * late < n - 1)
      v[got++] = t > mine ? (t - mine) / (n - own.chunks) : 0;
  }
  probed.work = work;
  probed.measured += got > 0;
  if (!got) { /* no sample, nor the wake's: the next try does both */
    tt_atomic_store_relaxed(&T->linger_ns, linger);
    return false;
  }
  /* the median of 3 or more; of fewer, the least (a region that met an
   * interrupt is not the fork) */
  uint64_t fork = got >= 3 ? median(v, got) : v[0] < v[got - 1] ? v[0] : v[got - 1];
  tt__costs_set((uint32_t)(fork ? fork : 1), 0, 0, 0);
  /* the wake: worker 1 sleeps at once after each region; a region of two
   * wakes it (at most 3 tries, 2 ms each, to find it asleep) */
  tt_atomic_store_relaxed(&T->linger_ns, 0);
  tt_atomic_store_relaxed(&tt__the_costs.wake_call, 0);
  tt_atomic_store_relaxed(&tt__the_costs.wake_lat, 0);
  for (int i = 0; i < 4; i++) {
    uint64_t until = tt__now_ns() + 2000000;
    while (!(tt_atomic_load_relaxed(&T->workers[1].go) & GO_SLEEP) &&
           tt__now_ns() < until)
      tt__cpu_relax();
    tt__run_parallel(me, empty, NULL, 2, 2, TT__MODE_GREEDY, true, NULL);
  }
  tt_atomic_store_relaxed(&T->linger_ns, linger);
  return true;
}

static double mean_us(const tt__loop *l, tt__way w) {
  return l->timed_n[w] ? (double)l->timed_ns[w] / l->timed_n[w] / 1e3 : 0;
}

/* At exit, on the thread that ends the process (usually the one that
 * launched): the constants, its loops and the idle rule's counters. */
void tt__way_report(void) {
  const tt__loops *t = &tt__thr.loops;
  tt__costs *c = &tt__the_costs;
  fprintf(stderr,
          "teams: ways: constants: fork %u ns per worker, wake call %u ns, "
          "wake latency %u ns, lend %u / %u ns (an openmp region's overhead, "
          "OpenMP's threads asleep / spinning; 0: not measured), look %u ns\n",
          tt_atomic_load_relaxed(&c->fork), tt_atomic_load_relaxed(&c->wake_call),
          tt_atomic_load_relaxed(&c->wake_lat), tt_atomic_load_relaxed(&c->lend[0]),
          tt_atomic_load_relaxed(&c->lend[1]), tt_atomic_load_relaxed(&c->look));
  fprintf(stderr,
          "teams: ways: regions team %llu, serial %llu, openmp %llu "
          "(%llu timed); trials %llu (team %llu, serial %llu, openmp %llu), %.1f us in all; "
          "gap between regions %.1f us; workers slept %llu times after "
          "their spin, %llu overcommitted, %llu beside the holder; moved off "
          "the holder's CPU %llu times\n",
          (unsigned long long)t->ran[TT__WAY_TEAM],
          (unsigned long long)t->ran[TT__WAY_SERIAL],
          (unsigned long long)t->ran[TT__WAY_OPENMP], (unsigned long long)t->timed,
          (unsigned long long)t->trials, (unsigned long long)t->tried[TT__WAY_TEAM],
          (unsigned long long)t->tried[TT__WAY_SERIAL],
          (unsigned long long)t->tried[TT__WAY_OPENMP], t->trial_ns / 1e3, (double)t->gap / 1e3,
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_spun),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_overcommitted),
          (unsigned long long)tt_atomic_load_relaxed(&tt__sleeps_beside_holder),
          (unsigned long long)tt_atomic_load_relaxed(&tt__moves_off_holder));
  fprintf(stderr,
          "teams: ways: probes %u, %u measured `fork`; the last: %u regions "
          "of %.0f us chunks, %u with a late worker, %u that woke %u workers\n",
          probed.tries, probed.measured, probed.regions, (double)probed.work / 1e3,
          probed.late, probed.woke, probed.woken);
  static const char *const names[TT__WAYS] = {"team", "serial", "openmp"};
  for (int w = 0; w < TT__WAYS; w++)
    if (t->chosen_n[w])
      fprintf(stderr,
              "teams: ways: %s as chosen: %llu timed regions, %.2f us a region "
              "measured, %.2f us predicted\n",
              names[w], (unsigned long long)t->chosen_n[w],
              t->chosen_ns[w] / (double)t->chosen_n[w] / 1e3,
              t->chosen_predicted_ns[w] / (double)t->chosen_n[w] / 1e3);
  for (int i = 0; i < TT__LOOPS; i++) {
    const tt__loop *l = &t->loop[i];
    if (!l->key)
      continue;
    fprintf(stderr,
            "teams:   loop %p n<2^%u p=%u: work %.0f ns, team's extra %.0f ns "
            "(%.0f woken); "
            "timed regions: team %u (%u waking workers), serial %u, openmp %u, "
            "us a region %.2f / %.2f / %.2f\n",
            l->key, l->size_class, l->p, (double)l->work, (double)l->extra[0],
            (double)l->extra[1],
            l->timed_n[TT__WAY_TEAM], l->woke_n, l->timed_n[TT__WAY_SERIAL],
            l->timed_n[TT__WAY_OPENMP], mean_us(l, TT__WAY_TEAM),
            mean_us(l, TT__WAY_SERIAL), mean_us(l, TT__WAY_OPENMP));
  }
}
