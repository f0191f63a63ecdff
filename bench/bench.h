/* teams-bench: what every benchmark program shares.
 *
 * The driver (teams-bench.c) runs one child process per system and round;
 * each child (child-teams.c, child-omp.c built by gcc and by clang,
 * child-tbb.cpp) fills a bench_ops table with its system's loops and hands it
 * to the common harness (child-harness.c), which measures one round of one
 * section and prints raw samples on stdout, one line each:
 *
 *   sample <TAB> system <TAB> metric <TAB> unit <TAB> flags <TAB> value
 *   note   <TAB> text
 *
 * flags is "-" or a comma list of: "higher" (higher is better, so the worse
 * tail is the low one), "p99" (the driver also reports the 99th percentile).
 *
 * The kernel bodies live here as static inline functions, so every system
 * compiles the same body into its own loop (no call per element or row).
 * The header is C11 and C++17 clean (the TBB child includes it). */
#ifndef TEAMS_BENCH_H
#define TEAMS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifdef __cplusplus
extern "C" {
#define BENCH_RESTRICT __restrict__
#else
#define BENCH_RESTRICT restrict
#endif

/* Participants a region may have in this harness (a bound for the stamp and
 * thread tables, not a limit of any runtime). */
#define BENCH_MAX_P 256

/* ---- time ----------------------------------------------------------------- */

static inline int64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int bench_tid(void) { return (int)syscall(SYS_gettid); }

/* ---- statistics ------------------------------------------------------------ */

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The q-quantile (0 <= q <= 1) of v[0..n), linear between order statistics;
 * sorts v.  n == 0 gives 0. */
static inline double bench_quantile(double *v, size_t n, double q) {
  if (n == 0)
    return 0;
  qsort(v, n, sizeof *v, bench_cmp_double);
  double pos = q * (double)(n - 1);
  size_t i = (size_t)pos;
  if (i + 1 >= n)
    return v[n - 1];
  return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* ---- kernel bodies ---------------------------------------------------------- */

/* STREAM triad a[i] = b[i] + s * c[i] and axpy y[i] = s * x[i] + y[i] over
 * [begin, end).  Bytes moved per element, counted as the memory system sees
 * them with ordinary stores: triad reads b and c and writes a, whose lines
 * are first read for ownership (write-allocate), so 32; axpy reads x and y
 * and writes y back, so 24.  STREAM itself counts 24 for triad. */
#define BENCH_TRIAD_BYTES 32
#define BENCH_AXPY_BYTES 24

static inline void bench_triad_body(double *BENCH_RESTRICT a,
                                    const double *BENCH_RESTRICT b,
                                    const double *BENCH_RESTRICT c, double s,
                                    size_t begin, size_t end) {
  for (size_t i = begin; i < end; i++)
    a[i] = b[i] + s * c[i];
}

static inline void bench_axpy_body(double s, const double *BENCH_RESTRICT x,
                                   double *BENCH_RESTRICT y, size_t begin,
                                   size_t end) {
  for (size_t i = begin; i < end; i++)
    y[i] = s * x[i] + y[i];
}

/* One grid row of `units` units of compute: a dependent multiply-add chain,
 * which no compiler may reorder or vectorise without -ffast-math, so a unit
 * costs the same latency-bound few ns in every system. */
static inline double bench_row_body(uint32_t units, double seed) {
  double acc = seed;
  for (uint32_t k = 0; k < units; k++)
    acc = acc * 0.999999 + 1e-7;
  return acc;
}

/* Block c of p equal blocks of [0, n). */
static inline size_t bench_block(size_t n, size_t c, size_t p) {
  return (size_t)(((unsigned __int128)n * c) / p);
}

/* Where empty chunks ran: outside the timed loops the harness sets
 * bench_counting and counts the chunks that ran on another thread than the
 * caller (a runtime may run a whole "parallel" loop on the caller). */
extern int bench_counting;
extern int bench_caller_tid;
extern unsigned bench_chunks, bench_chunks_on_workers;

static __thread int bench_tid_cached;

static inline void bench_count_chunk(void) {
  if (!bench_tid_cached)
    bench_tid_cached = bench_tid();
  __atomic_fetch_add(&bench_chunks, 1, __ATOMIC_RELAXED);
  if (bench_tid_cached != bench_caller_tid)
    __atomic_fetch_add(&bench_chunks_on_workers, 1, __ATOMIC_RELAXED);
}

/* An empty chunk the compiler cannot delete; in the timed loops it costs a
 * load and a predicted branch, the same in every system. */
static inline void bench_empty_body(size_t c) {
  __asm__ __volatile__("" : : "r"(c) : "memory");
  if (__builtin_expect(__atomic_load_n(&bench_counting, __ATOMIC_RELAXED), 0))
    bench_count_chunk();
}

/* ---- what a system provides ------------------------------------------------ */

typedef struct bench_vec { /* triad a = b + s c; axpy c = s b + c */
  double *a, *b, *c;
  double s;
  size_t n;
} bench_vec;

typedef struct bench_grid { /* row i costs cost[i] units, result in out[i] */
  const uint32_t *cost;
  double *out;
  size_t n;
} bench_grid;

typedef struct bench_loop { /* idle section: y = s x + y on a small array */
  const double *x;
  double *y;
  double s;
  size_t n;
} bench_loop;

typedef struct bench_wake { /* wake section: participant c stamps t[c] */
  int64_t t[BENCH_MAX_P];
  int tid[BENCH_MAX_P];
} bench_wake;

/* One schedule of a system for the grid section.  grid() returns the steals
 * of the region when the runtime counts them, else -1; both return
 * BENCH_REFUSED when the runtime rejected the schedule (then its rows are
 * left out, with a note).  Either may be NULL (the schedule does not take
 * part in that part of the section). */
#define BENCH_REFUSED (-2)
#define BENCH_GRID_GRAIN 16   /* rows: as libgomp's dynamic,16 */
#define BENCH_AXPY_GRAIN 4096 /* elements of the uniform axpy: 32 KiB of x */

typedef struct bench_schedule {
  const char *name;
  long (*grid)(const bench_grid *g, size_t p);
  long (*axpy)(const bench_vec *v, size_t p); /* c = s b + c */
} bench_schedule;

typedef struct bench_ops {
  const char *system;
  /* Called once before anything runs, with the team size the driver asked
   * for (it also set TEAMS_NUM_THREADS and OMP_NUM_THREADS). */
  void (*setup)(size_t team);
  /* Run body(arg) as the caller of regions of p participants (TBB enters an
   * arena of p slots here, so no launch pays for entering it). */
  void (*within)(size_t p, void (*body)(void *), void *arg);
  void (*empty_static)(size_t p);           /* m == p, one chunk each */
  void (*empty_greedy)(size_t m, size_t p); /* m > p chunks, dynamic,1 */
  void (*vec_init)(const bench_vec *v, size_t p); /* first touch, static */
  void (*triad)(const bench_vec *v, size_t p);    /* static */
  void (*axpy)(const bench_vec *v, size_t p);     /* static, c = s b + c */
  const bench_schedule *schedules;
  size_t nschedules;
  /* Idle section: one static region of p chunks over l; every chunk calls
   * bench_mark_thread(). */
  void (*loop)(const bench_loop *l, size_t p);
  /* Wake section: one static region of p chunks; chunk c first stores
   * bench_now_ns() in w->t[c] and bench_tid() in w->tid[c].  NULL: the
   * system does not take part in the section. */
  void (*wake)(bench_wake *w, size_t p);
  /* Optional: a line the report must carry (e.g. an ignored setting). */
  const char *(*note)(void);
} bench_ops;

/* The harness: parses the child's arguments, runs one round of one section,
 * prints its samples.  Returns the process exit status. */
int bench_child_main(int argc, char **argv, const bench_ops *ops);

/* ---- which threads ran chunks ---------------------------------------------- */

/* Chunks call bench_mark_thread(); the harness starts a new generation with
 * bench_mark_reset() between regions and reads the thread ids that ran a
 * chunk since then from bench_marks[0 .. min(bench_nmarks, BENCH_MAX_P)).
 * Per chunk this costs a thread-local compare, and an atomic add the first
 * time a thread runs in a generation. */
extern unsigned bench_mark_gen;
extern unsigned bench_nmarks;
extern int bench_marks[BENCH_MAX_P];

static __thread unsigned bench_marked_gen;

static inline void bench_mark_thread(void) {
  unsigned g = __atomic_load_n(&bench_mark_gen, __ATOMIC_ACQUIRE);
  if (bench_marked_gen != g) {
    bench_marked_gen = g;
    unsigned k = __atomic_fetch_add(&bench_nmarks, 1, __ATOMIC_RELAXED);
    if (k < BENCH_MAX_P)
      bench_marks[k] = bench_tid();
  }
}

#ifdef __cplusplus
}
#endif
#endif
