/* teams-bench: the programs section's programs, generated from a seed.
 *
 * Shared by the parent (programs.c: describes a seed's program in the
 * report) and the child that runs it (child-programs.c), so that a seed
 * names the same program in both and on every machine: the generator
 * draws from splitmix64 only (no libc rand, no clock) and sizes work in
 * microseconds of serial work, which the child turns into units of
 * bench_row_body with the ns per unit the parent measured once.
 *
 * A program is 1-4 phases.  A phase runs `regions` regions on the
 * launching thread, taking its 1-3 loops in turn or in a seeded random
 * order; each loop is a different function (so the runtime keeps a record
 * per loop): a tt_foreach_chunk, a tt_foreach_range with a schedule, or a
 * tt_launch of a TT_KERNEL, each of m chunks (work-groups) 2..256 whose
 * costs are even, triangular or random per chunk, and may change between
 * the loop's regions (every k of its regions the work is multiplied by a
 * factor, then back).  Before each region the launching thread computes
 * for `gap` (0: back to back, else 2 us - 2 ms, fixed or jittered); before
 * every k-th region an OpenMP loop (`parallel for`) may run; a second
 * thread may launch regions of a loop of its own meanwhile; a process
 * spinning on one CPU may run during the phase.  The phases' serial work
 * adds up to 25-90 ms, so a program runs in about 15-100 ms.
 *
 * A header of static functions: the child is built by a compiler command
 * of its own (bench/CMakeLists.txt). */
#ifndef TEAMS_BENCH_PROGRAMS_H
#define TEAMS_BENCH_PROGRAMS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PROG_MAX_PHASES 4
#define PROG_MAX_LOOPS 3 /* per phase, on the launching thread */
#define PROG_MAX_M 256
#define PROG_FNS 4 /* functions per API: the child defines PROG_FNS of each */

enum { PROG_CHUNK, PROG_RANGE, PROG_LAUNCH };   /* loop APIs */
enum { PROG_EVEN, PROG_TRI, PROG_RANDOM };      /* chunk costs */
enum { PROG_STATIC, PROG_GREEDY, PROG_STEAL, PROG_AUTO }; /* as tt_schedule */

static const char *const prog_api_name[] = {"chunk", "range", "launch"};
static const char *const prog_shape_name[] = {"even", "tri", "rand"};
static const char *const prog_sched_name[] = {"static", "greedy", "steal", "auto"};

typedef struct prog_loop {
  int api, fn;      /* which function: prog_api_name[api] fn */
  int shape, sched; /* sched: for range and launch */
  unsigned m;       /* chunks, 2..256 */
  double us;        /* serial work of one region, us */
  unsigned change_every; /* 0, or every so many of the loop's regions its */
  double change_factor;  /* work is multiplied by this, then back */
  uint64_t weights_seed; /* the random shape's per-chunk costs */
} prog_loop;

typedef struct prog_phase {
  unsigned regions; /* on the launching thread */
  unsigned nloops;
  prog_loop loop[PROG_MAX_LOOPS];
  int order_random;   /* loops in a seeded order, else in turn */
  double gap_us;      /* the host's work before each region */
  int gap_jitter;     /* each gap uniform in [0.5, 1.5] x gap_us */
  unsigned omp_every; /* 0, or an OpenMP loop before every k-th region, */
  unsigned omp_m;     /* of omp_m iterations, */
  double omp_us;      /* of this much serial work in all */
  int second;         /* a second thread launches meanwhile: */
  prog_loop second_loop;
  unsigned second_regions;
  double second_gap_us;
  int spinner;  /* a process spins on one CPU during the phase */
  double est_ms; /* the phase's serial work */
} prog_phase;

typedef struct program {
  uint64_t seed;
  unsigned nphases;
  prog_phase phase[PROG_MAX_PHASES];
  unsigned spin_cpu; /* the spinner's CPU: this index, modulo the CPUs */
  double est_ms;
} program;

/* ---- the generator's random numbers ---------------------------------------- */

static inline uint64_t prog_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static inline double prog_uniform(uint64_t *s) { /* [0, 1) */
  return (double)(prog_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static inline unsigned prog_int(uint64_t *s, unsigned lo, unsigned hi) { /* [lo, hi] */
  return lo + (unsigned)(prog_next(s) % (uint64_t)(hi - lo + 1));
}

static inline double prog_log_uniform(uint64_t *s, double lo, double hi) {
  return lo * exp(prog_uniform(s) * log(hi / lo));
}

static inline int prog_chance(uint64_t *s, double p) { return prog_uniform(s) < p; }

/* ---- generating ---------------------------------------------------------------- */

/* The serial cost of one region of l, us: its mean work and ~1 us to launch. */
static inline double prog_loop_cost(const prog_loop *l) {
  double w = l->change_every ? l->us * (1 + l->change_factor) / 2 : l->us;
  return w + 1.0;
}

/* A loop whose function is not in used[] (a bit per api * PROG_FNS + fn). */
static inline void prog_make_loop(uint64_t *s, prog_loop *l, unsigned *used) {
  unsigned f;
  do
    f = prog_int(s, 0, 3 * PROG_FNS - 1);
  while (*used & (1u << f));
  *used |= 1u << f;
  l->api = (int)(f / PROG_FNS);
  l->fn = (int)(f % PROG_FNS);
  /* chunks 2..256, log-uniform: as many small regions as large ones */
  l->m = (unsigned)prog_log_uniform(s, 2, PROG_MAX_M + 1);
  l->m = l->m < 2 ? 2 : l->m > PROG_MAX_M ? PROG_MAX_M : l->m;
  double u = prog_uniform(s);
  l->shape = u < 0.45 ? PROG_EVEN : u < 0.7 ? PROG_TRI : PROG_RANDOM;
  l->sched = (int)prog_int(s, 0, 3);
  /* a region's serial work, 0.3 us (empty in effect) to 2 ms */
  l->us = prog_log_uniform(s, 0.3, 2000);
  l->change_every = 0;
  l->change_factor = 1;
  if (prog_chance(s, 0.25)) {
    static const unsigned every[] = {1, 5, 50, 500};
    static const double factor[] = {1.0 / 16, 0.25, 4, 16};
    l->change_every = every[prog_int(s, 0, 3)];
    l->change_factor = factor[prog_int(s, 0, 3)];
  }
  l->weights_seed = prog_next(s);
}

static inline void prog_generate(program *pg, uint64_t seed) {
  memset(pg, 0, sizeof *pg);
  pg->seed = seed;
  uint64_t s = seed * 0xd1342543de82ef95u + 0x2545f4914f6cdd1du;
  prog_next(&s);
  pg->nphases = prog_int(&s, 1, PROG_MAX_PHASES);
  pg->spin_cpu = prog_int(&s, 0, 1023);
  double total_ms = 25 + 65 * prog_uniform(&s), share[PROG_MAX_PHASES], sum = 0;
  for (unsigned k = 0; k < pg->nphases; k++)
    sum += share[k] = 0.5 + prog_uniform(&s);
  for (unsigned k = 0; k < pg->nphases; k++) {
    prog_phase *ph = &pg->phase[k];
    double budget_us = total_ms * 1000 * share[k] / sum;
    unsigned used = 0;
    double u = prog_uniform(&s);
    ph->nloops = u < 0.4 ? 1 : u < 0.75 ? 2 : 3;
    for (unsigned i = 0; i < ph->nloops; i++)
      prog_make_loop(&s, &ph->loop[i], &used);
    ph->order_random = ph->nloops > 1 && prog_chance(&s, 0.3);
    ph->gap_us = prog_chance(&s, 0.3) ? 0 : prog_log_uniform(&s, 2, 2000);
    ph->gap_jitter = ph->gap_us > 0 && prog_chance(&s, 0.5);
    if (prog_chance(&s, 0.3)) {
      static const unsigned every[] = {1, 2, 8};
      static const unsigned ms[] = {2, 8, 64};
      ph->omp_every = every[prog_int(&s, 0, 2)];
      ph->omp_m = ms[prog_int(&s, 0, 2)];
      ph->omp_us = prog_log_uniform(&s, 1, 500);
    }
    ph->spinner = prog_chance(&s, 0.2);
    /* the launching thread's regions fill the phase's budget */
    double per = ph->gap_us, loops = 0;
    for (unsigned i = 0; i < ph->nloops; i++)
      loops += prog_loop_cost(&ph->loop[i]);
    per += loops / ph->nloops;
    if (ph->omp_every)
      per += (ph->omp_us + 3) / ph->omp_every;
    double n = budget_us / per;
    ph->regions = n < ph->nloops ? ph->nloops : n > 20000 ? 20000 : (unsigned)n;
    ph->est_ms = ph->regions * per / 1000;
    if (prog_chance(&s, 0.2)) {
      ph->second = 1;
      prog_make_loop(&s, &ph->second_loop, &used);
      ph->second_gap_us = prog_chance(&s, 0.4) ? 0 : prog_log_uniform(&s, 2, 2000);
      double per2 = prog_loop_cost(&ph->second_loop) + ph->second_gap_us;
      double n2 = budget_us * (0.3 + 0.7 * prog_uniform(&s)) / per2;
      ph->second_regions = n2 < 1 ? 1 : n2 > 20000 ? 20000 : (unsigned)n2;
      ph->est_ms += ph->second_regions * per2 / 1000;
    }
    pg->est_ms += ph->est_ms;
  }
}

/* ---- describing ------------------------------------------------------------------ */

/* "us" with three digits at most */
static inline const char *prog_us(char *buf, size_t len, double us) {
  if (us >= 1000)
    snprintf(buf, len, "%.3gms", us / 1000);
  else
    snprintf(buf, len, "%.3gus", us);
  return buf;
}

/* A loop in a few words: "launch2 m64 tri 120us steal x4/50". */
static inline void prog_describe_loop(char *buf, size_t len, const prog_loop *l) {
  char w[24], ch[32] = "";
  if (l->change_every)
    snprintf(ch, sizeof ch, " x%g/%u", l->change_factor, l->change_every);
  snprintf(buf, len, "%s%d m%u %s %s%s%s%s", prog_api_name[l->api], l->fn, l->m,
           prog_shape_name[l->shape], prog_us(w, sizeof w, l->us),
           l->api == PROG_CHUNK ? "" : " ", l->api == PROG_CHUNK ? "" : prog_sched_name[l->sched],
           ch);
}

/* One phase in a line: "1200x{chunk2 m64 even 15us, ...} gap 50us~ omp 64x20us/2
 * +thread 300x{range3 m16 rand 40us static} gap 0 spin". */
static inline size_t prog_describe_phase(char *buf, size_t len, const prog_phase *ph) {
  char l[96], g[24];
  size_t n = (size_t)snprintf(buf, len, "%ux{", ph->regions);
  for (unsigned i = 0; i < ph->nloops && n < len; i++) {
    prog_describe_loop(l, sizeof l, &ph->loop[i]);
    n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", l);
  }
  if (n < len)
    n += (size_t)snprintf(buf + n, len - n, "}%s gap %s%s", ph->order_random ? " shuffled" : "",
                          ph->gap_us > 0 ? prog_us(g, sizeof g, ph->gap_us) : "0",
                          ph->gap_jitter ? "~" : "");
  if (ph->omp_every && n < len)
    n += (size_t)snprintf(buf + n, len - n, " omp %ux%s/%u", ph->omp_m,
                          prog_us(g, sizeof g, ph->omp_us), ph->omp_every);
  if (ph->second && n < len) {
    prog_describe_loop(l, sizeof l, &ph->second_loop);
    n += (size_t)snprintf(buf + n, len - n, " +thread %ux{%s} gap %s", ph->second_regions, l,
                          ph->second_gap_us > 0 ? prog_us(g, sizeof g, ph->second_gap_us) : "0");
  }
  if (ph->spinner && n < len)
    n += (size_t)snprintf(buf + n, len - n, " spin");
  return n < len ? n : len - 1;
}

/* The whole program in one line: phases separated by " | ". */
static inline void prog_describe(char *buf, size_t len, const program *pg) {
  size_t n = (size_t)snprintf(buf, len, "%u phase%s, ~%.0f ms serial: ", pg->nphases,
                              pg->nphases > 1 ? "s" : "", pg->est_ms);
  for (unsigned k = 0; k < pg->nphases && n + 4 < len; k++) {
    if (k)
      n += (size_t)snprintf(buf + n, len - n, " | ");
    n += prog_describe_phase(buf + n, len - n, &pg->phase[k]);
  }
}

/* The program in full, a line per phase and per loop, each line starting
 * with prefix. */
static inline void prog_print_full(FILE *f, const char *prefix, const program *pg) {
  char w[24], w2[24];
  fprintf(f, "%sseed %llu: %u phase%s, ~%.1f ms of serial work; the spinner (if any) on "
             "CPU index %u modulo the CPUs\n",
          prefix, (unsigned long long)pg->seed, pg->nphases, pg->nphases > 1 ? "s" : "",
          pg->est_ms, pg->spin_cpu);
  for (unsigned k = 0; k < pg->nphases; k++) {
    const prog_phase *ph = &pg->phase[k];
    fprintf(f, "%s phase %u (~%.1f ms serial): %u regions over %u loop%s%s; before each "
               "region the host computes %s%s\n",
            prefix, k + 1, ph->est_ms, ph->regions, ph->nloops, ph->nloops > 1 ? "s" : "",
            ph->nloops == 1 ? "" : ph->order_random ? " in a seeded random order" : " in turn",
            ph->gap_us > 0 ? prog_us(w, sizeof w, ph->gap_us) : "nothing (back to back)",
            ph->gap_jitter ? " (uniform in 0.5-1.5x)" : "");
    for (unsigned i = 0; i <= ph->nloops; i++) {
      const prog_loop *l = i < ph->nloops ? &ph->loop[i] : ph->second ? &ph->second_loop : NULL;
      if (!l)
        break;
      fprintf(f, "%s   %s %s%d: %u chunks, %s per region (serial), %s costs", prefix,
              i < ph->nloops ? "loop" : "second thread's loop", prog_api_name[l->api], l->fn,
              l->m, prog_us(w, sizeof w, l->us),
              l->shape == PROG_EVEN ? "even" : l->shape == PROG_TRI ? "triangular" : "random");
      if (l->api != PROG_CHUNK)
        fprintf(f, ", schedule %s", prog_sched_name[l->sched]);
      if (l->change_every)
        fprintf(f, ", work x%g every %u of its regions, then back", l->change_factor,
                l->change_every);
      if (i == ph->nloops)
        fprintf(f, "; %u regions, the host computing %s before each", ph->second_regions,
                ph->second_gap_us > 0 ? prog_us(w2, sizeof w2, ph->second_gap_us) : "nothing");
      fprintf(f, "\n");
    }
    if (ph->omp_every)
      fprintf(f, "%s   an OpenMP parallel for of %u iterations, %s in all, after the gap "
                 "before every %sregion\n",
              prefix, ph->omp_m, prog_us(w, sizeof w, ph->omp_us),
              ph->omp_every == 1 ? "" : ph->omp_every == 2 ? "2nd " : "8th ");
    if (ph->spinner)
      fprintf(f, "%s   another process spins on one CPU meanwhile\n", prefix);
  }
}

#endif
