/* teams-bench child harness: one round of one section for one system.
 *
 * Every child program links this file and calls bench_child_main with its
 * bench_ops.  A round is one process: the driver starts a fresh child per
 * system and round and alternates systems between rounds, so no runtime's
 * idle threads are alive while another system is measured, and every round
 * sees a fresh heap and thread placement.  Inside a round the harness
 * interleaves the cases of the section sample by sample and rotates their
 * order by the round number, so that no case always runs first.
 *
 *   child --section NAME --team T [--round R] [--quick] [--label SYSTEM]
 *
 * (bench_child_main's table; the sections are sections.h's HARNESS rows).
 * T is the team size the driver asked for (it also set TEAMS_NUM_THREADS and
 * OMP_NUM_THREADS); SYSTEM replaces ops->system in the printed rows (the
 * driver runs the teams child as "teams", "teams-team", "teams-sentinel" and
 * "teams-tree"). */
#include "bench.h"
#include "args.h"
#include "sections.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bench_counting;
int bench_caller_tid;
unsigned bench_chunks, bench_chunks_on_workers;
unsigned bench_mark_gen = 1;
unsigned bench_nmarks;
int bench_marks[BENCH_MAX_P];

static struct {
  const bench_ops *ops;
  const char *section;
  const char *system; /* printed system name */
  size_t team;
  unsigned round;
  int quick;
  int64_t deadline; /* the section's time budget ends */
  int cut;          /* samples were cut short by it */
} H;

/* Sampling loops stop early when the section's time budget is spent (a
 * busy machine), so that a run's length stays bounded; they always keep at
 * least one sample per case. */
static int out_of_time(void) {
  if (bench_now_ns() < H.deadline)
    return 0;
  H.cut = 1;
  return 1;
}

/* ---- output ------------------------------------------------------------------ */

static void emit(const char *system, const char *metric, const char *unit,
                 const char *flags, double value) {
  printf("sample\t%s\t%s\t%s\t%s\t%.9g\n", system, metric, unit, flags, value);
}

static void emit_all(const char *system, const char *metric, const char *unit,
                     const char *flags, const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    emit(system, metric, unit, flags, v[i]);
}

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("note\t%s: ", H.system);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static const char *with_schedule(const char *sched) {
  static char buf[128];
  snprintf(buf, sizeof buf, "%s/%s", H.system, sched);
  return buf;
}

static void *xmalloc(size_t size) {
  void *p = NULL;
  /* 2 MiB alignment: the arrays start on a huge-page boundary for every
   * system alike, whatever the allocator would have done. */
  if (posix_memalign(&p, (size_t)2 << 20, size ? size : 1) != 0) {
    fprintf(stderr, "teams-bench: out of memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

static double median_of(const double *v, size_t n) {
  double *tmp = xmalloc(n * sizeof *tmp);
  memcpy(tmp, v, n * sizeof *tmp);
  double m = bench_quantile(tmp, n, 0.5);
  free(tmp);
  return m;
}

/* ---- per-thread CPU time and context switches -------------------------------- */

typedef struct thread_stat {
  int tid;
  int64_t cpu_ns;
  long vcsw, ivcsw; /* voluntary, involuntary context switches */
} thread_stat;

/* CPU time of a thread of this process: its per-thread CPU clock, whose id
 * is derived from the thread id as glibc's pthread_getcpuclockid does
 * (CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED), so threads the runtimes created can
 * be read too; /proc/self/task/TID/stat (10 ms ticks) if that fails. */
static int64_t thread_cpu_ns(int tid) {
  clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6u);
  struct timespec ts;
  if (clock_gettime(id, &ts) == 0)
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *s = strrchr(buf, ')'); /* comm may hold spaces */
  unsigned long ut = 0, st = 0;
  if (s && sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                  &ut, &st) == 2)
    return (int64_t)(ut + st) * (1000000000 / sysconf(_SC_CLK_TCK));
  return 0;
}

static void thread_csw(int tid, long *vcsw, long *ivcsw) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
  *vcsw = *ivcsw = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "voluntary_ctxt_switches: %ld", vcsw);
    sscanf(line, "nonvoluntary_ctxt_switches: %ld", ivcsw);
  }
  fclose(f);
}

/* The threads of this process (at most max), with CPU time and, when csw,
 * context switches. */
static size_t thread_snapshot(thread_stat *out, size_t max, int csw) {
  DIR *d = opendir("/proc/self/task");
  size_t n = 0;
  if (!d)
    return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < max;) {
    int tid = atoi(e->d_name);
    if (tid <= 0)
      continue;
    out[n].tid = tid;
    out[n].cpu_ns = thread_cpu_ns(tid);
    out[n].vcsw = out[n].ivcsw = 0;
    if (csw)
      thread_csw(tid, &out[n].vcsw, &out[n].ivcsw);
    n++;
  }
  closedir(d);
  return n;
}

static void mark_reset(void) {
  __atomic_store_n(&bench_nmarks, 0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&bench_mark_gen, 1, __ATOMIC_RELEASE);
}

static int marked(int tid) {
  unsigned n = __atomic_load_n(&bench_nmarks, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n && i < BENCH_MAX_P; i++)
    if (bench_marks[i] == tid)
      return 1;
  return 0;
}

/* ---- section empty: launch overhead ------------------------------------------ */

typedef struct empty_run {
  size_t p, samples, reps;
  double *t[2];          /* us per launch: static, greedy */
  double on_workers[2];  /* share of chunks that ran on workers */
} empty_run;

#define EMPTY_GREEDY_M 64

static void empty_body(void *arg) {
  empty_run *r = arg;
  const bench_ops *o = H.ops;
  for (int w = 0; w < 200; w++) {
    o->empty_static(r->p);
    o->empty_greedy(EMPTY_GREEDY_M, r->p);
  }
  for (size_t k = 0; k < r->samples; k++) {
    for (unsigned j = 0; j < 2; j++) {
      unsigned c = (j + (unsigned)k + H.round) & 1;
      int64_t t0 = bench_now_ns();
      if (c == 0)
        for (size_t i = 0; i < r->reps; i++)
          o->empty_static(r->p);
      else
        for (size_t i = 0; i < r->reps; i++)
          o->empty_greedy(EMPTY_GREEDY_M, r->p);
      r->t[c][k] = (double)(bench_now_ns() - t0) / 1e3 / (double)r->reps;
    }
    if (out_of_time())
      r->samples = k + 1;
  }
  /* untimed: where did the chunks run? */
  bench_caller_tid = bench_tid();
  __atomic_store_n(&bench_counting, 1, __ATOMIC_RELAXED);
  for (unsigned c = 0; c < 2; c++) {
    bench_chunks = bench_chunks_on_workers = 0;
    for (int i = 0; i < 200; i++)
      if (c == 0)
        o->empty_static(r->p);
      else
        o->empty_greedy(EMPTY_GREEDY_M, r->p);
    r->on_workers[c] = (double)__atomic_load_n(&bench_chunks_on_workers, __ATOMIC_RELAXED) /
                       (double)__atomic_load_n(&bench_chunks, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&bench_counting, 0, __ATOMIC_RELAXED);
}

/* A sample is the mean of 16 back-to-back launches, so the two clock reads
 * (~25 ns here) stay below 1% of a launch.  After the timed samples, 200
 * more launches of each kind count the share of chunks that ran on workers:
 * a launch that a runtime ran wholly on the caller is cheap but not parallel
 * (static m == p should give (p - 1) / p). */
static void section_empty(void) {
  empty_run r = {H.team, H.quick ? 300 : 1500, 16, {NULL, NULL}, {0, 0}};
  r.t[0] = xmalloc(r.samples * sizeof(double));
  r.t[1] = xmalloc(r.samples * sizeof(double));
  H.ops->within(r.p, empty_body, &r);
  emit_all(H.system, "static_m=p", "us", "-", r.t[0], r.samples);
  emit_all(H.system, "greedy_m=64", "us", "-", r.t[1], r.samples);
  emit(H.system, "static_on_workers", "of chunks", "-", r.on_workers[0]);
  emit(H.system, "greedy_on_workers", "of chunks", "-", r.on_workers[1]);
}

/* ---- section axpy: bandwidth against the STREAM triad ------------------------ */

#define AXPY_N 10000000

typedef struct axpy_run {
  bench_vec v;
  size_t p, trials;
  double triad_best, *axpy; /* seconds */
} axpy_run;

static double seconds_of(void (*f)(const bench_vec *, size_t),
                         const bench_vec *v, size_t p) {
  int64_t t0 = bench_now_ns();
  f(v, p);
  return (double)(bench_now_ns() - t0) / 1e9;
}

static void axpy_body(void *arg) {
  axpy_run *r = arg;
  const bench_ops *o = H.ops;
  o->vec_init(&r->v, r->p);
  o->triad(&r->v, r->p);
  o->axpy(&r->v, r->p);
  r->triad_best = 1e30;
  for (size_t k = 0; k < r->trials; k++) {
    double tt, ta;
    if ((k + H.round) & 1) {
      ta = seconds_of(o->axpy, &r->v, r->p);
      tt = seconds_of(o->triad, &r->v, r->p);
    } else {
      tt = seconds_of(o->triad, &r->v, r->p);
      ta = seconds_of(o->axpy, &r->v, r->p);
    }
    if (tt < r->triad_best)
      r->triad_best = tt;
    r->axpy[k] = ta;
    if (out_of_time())
      r->trials = k + 1;
  }
}

/* The triad here is each system's own static loop, best of `trials` (10, as
 * STREAM does) per round; the driver takes the best system's median as the
 * machine's limit, so no runtime's scheduling can lower the limit. */
static void section_axpy(void) {
  axpy_run r;
  memset(&r, 0, sizeof r);
  r.v.n = AXPY_N;
  r.v.s = 1e-3;
  r.v.a = xmalloc(AXPY_N * sizeof(double));
  r.v.b = xmalloc(AXPY_N * sizeof(double));
  r.v.c = xmalloc(AXPY_N * sizeof(double));
  r.p = H.team;
  r.trials = H.quick ? 5 : 10;
  r.axpy = xmalloc(r.trials * sizeof(double));
  H.ops->within(r.p, axpy_body, &r);
  for (size_t k = 0; k < r.trials; k++)
    emit(H.system, "axpy", "ms", "-", r.axpy[k] * 1e3);
  for (size_t k = 0; k < r.trials; k++)
    emit(H.system, "axpy_bw", "GB/s", "higher",
         (double)BENCH_AXPY_BYTES * AXPY_N / r.axpy[k] / 1e9);
  emit(H.system, "triad_bw", "GB/s", "higher",
       (double)BENCH_TRIAD_BYTES * AXPY_N / r.triad_best / 1e9);
}

/* ---- section grid: uneven grids and uniform axpy by schedule ----------------- */

#define GRID_ROWS 4096

enum { GRID_TRI, GRID_IMB, GRID_AXPY };
static const char *const grid_metric[] = {"triangular", "imbalanced",
                                          "axpy_uniform"};

typedef struct grid_case {
  const bench_schedule *sched;
  int kind;
  double *t;    /* ms per sample */
  long *steals; /* per sample, -1 when not counted */
  int refused;  /* the runtime rejected the schedule */
} grid_case;

typedef struct grid_run {
  bench_grid g[2]; /* triangular, imbalanced */
  bench_vec v;
  size_t p, samples, ncases;
  grid_case *cases;
} grid_run;

static void grid_body(void *arg) {
  grid_run *r = arg;
  H.ops->vec_init(&r->v, r->p);
  for (size_t s = 0; s <= r->samples; s++) { /* s == 0: warm-up, not kept */
    for (size_t j = 0; j < r->ncases; j++) {
      grid_case *c = &r->cases[(j + s + H.round) % r->ncases];
      long steals;
      int64_t t0 = bench_now_ns();
      if (c->kind == GRID_AXPY)
        steals = c->sched->axpy(&r->v, r->p);
      else
        steals = c->sched->grid(&r->g[c->kind], r->p);
      int64_t t1 = bench_now_ns();
      if (steals == BENCH_REFUSED)
        c->refused = 1;
      if (s > 0) {
        c->t[s - 1] = (double)(t1 - t0) / 1e6;
        c->steals[s - 1] = steals;
      }
    }
    if (s > 0 && out_of_time())
      r->samples = s;
  }
}

static void serial_grid(const bench_grid *g) {
  for (size_t i = 0; i < g->n; i++)
    g->out[i] = bench_row_body(g->cost[i], (double)i);
}

/* Triangular: row i costs i + 1 units (a unit is one multiply-add of the
 * dependent chain, ~2.7 ns here, so the grid is ~22 ms serial).  Imbalanced:
 * row costs 1 + 8192 u^3 with u uniform from a fixed seed, the same mean
 * cost (~2049) but a few rows 60x the median.  The ideal is the serial time
 * (measured first in the same process, before any runtime thread exists, so
 * no idle spinner shares the machine with it) divided by p. */
static void section_grid(void) {
  grid_run r;
  memset(&r, 0, sizeof r);
  r.p = H.team;
  r.samples = H.quick ? 3 : 10;
  uint32_t *tri = xmalloc(GRID_ROWS * sizeof *tri);
  uint32_t *imb = xmalloc(GRID_ROWS * sizeof *imb);
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < GRID_ROWS; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
    double u = (double)(x >> 11) / 9007199254740992.0;
    tri[i] = (uint32_t)(i + 1);
    imb[i] = 1 + (uint32_t)(8192.0 * u * u * u);
  }
  for (int k = 0; k < 2; k++) {
    r.g[k].cost = k == 0 ? tri : imb;
    r.g[k].out = xmalloc(GRID_ROWS * sizeof(double));
    r.g[k].n = GRID_ROWS;
  }

  size_t nserial = H.quick ? 3 : 5;
  double serial[2][5], ideal[2];
  serial_grid(&r.g[0]);
  for (int k = 0; k < 2; k++) {
    for (size_t s = 0; s < nserial; s++) {
      int64_t t0 = bench_now_ns();
      serial_grid(&r.g[k]);
      serial[k][s] = (double)(bench_now_ns() - t0) / 1e6;
    }
    ideal[k] = median_of(serial[k], nserial) / (double)r.p;
  }

  r.v.n = AXPY_N;
  r.v.s = 1e-3;
  r.v.a = xmalloc(AXPY_N * sizeof(double));
  r.v.b = xmalloc(AXPY_N * sizeof(double));
  r.v.c = xmalloc(AXPY_N * sizeof(double));
  r.cases = xmalloc(3 * H.ops->nschedules * sizeof *r.cases);
  for (size_t i = 0; i < H.ops->nschedules; i++)
    for (int kind = GRID_TRI; kind <= GRID_AXPY; kind++) {
      const bench_schedule *sc = &H.ops->schedules[i];
      if (kind == GRID_AXPY ? !sc->axpy : !sc->grid)
        continue;
      grid_case *c = &r.cases[r.ncases++];
      c->sched = sc;
      c->kind = kind;
      c->t = xmalloc(r.samples * sizeof *c->t);
      c->steals = xmalloc(r.samples * sizeof *c->steals);
    }
  H.ops->within(r.p, grid_body, &r);

  const grid_case *axpy_static = NULL;
  for (size_t j = 0; j < r.ncases; j++)
    if (r.cases[j].kind == GRID_AXPY && !r.cases[j].refused &&
        !strcmp(r.cases[j].sched->name, "static"))
      axpy_static = &r.cases[j];
  for (size_t j = 0; j < r.ncases; j++) {
    const grid_case *c = &r.cases[j];
    const char *sys = with_schedule(c->sched->name);
    char metric[64];
    if (c->refused) {
      note("the runtime refused schedule %s (%s left out)", c->sched->name,
           grid_metric[c->kind]);
      continue;
    }
    emit_all(sys, grid_metric[c->kind], "ms", "-", c->t, r.samples);
    if (c->kind != GRID_AXPY) {
      snprintf(metric, sizeof metric, "%s_vs_ideal", grid_metric[c->kind]);
      for (size_t s = 0; s < r.samples; s++)
        emit(sys, metric, "x ideal", "-", c->t[s] / ideal[c->kind]);
      snprintf(metric, sizeof metric, "%s_steals", grid_metric[c->kind]);
      for (size_t s = 0; s < r.samples; s++)
        if (c->steals[s] >= 0)
          emit(sys, metric, "steals", "-", (double)c->steals[s]);
    } else if (axpy_static && c != axpy_static) {
      /* paired with the static run of the same sample, same process */
      for (size_t s = 0; s < r.samples; s++)
        emit(sys, "axpy_uniform_vs_static", "x static", "-",
             c->t[s] / axpy_static->t[s]);
    }
  }
  /* last, so that no serial row is taken as a section's baseline */
  for (int k = 0; k < 2; k++)
    emit_all(with_schedule("serial"), grid_metric[k], "ms", "-", serial[k],
             nserial);
}

/* ---- section idle: a worker that back-to-back loops do not use --------------- */

#define IDLE_N 4096
#define IDLE_MAX_THREADS 512

typedef struct idle_run {
  bench_loop l;
  size_t team, p; /* the team, and the participants of each loop */
  double window_s;
  int64_t t0, t1;
  long loops;
  size_t nstart, nend, nwarm;
  thread_stat start[IDLE_MAX_THREADS], end[IDLE_MAX_THREADS];
  int used[IDLE_MAX_THREADS]; /* per end[] entry: ran a chunk in the window */
} idle_run;

/* Start every worker of the team (ThreadTeams.jl PR #68's "with all
 * workers woken first"): loops over the whole team until each thread ran a
 * chunk. */
static void idle_warm(void *arg) {
  idle_run *r = arg;
  int seen[BENCH_MAX_P];
  size_t nseen = 0;
  int64_t deadline = bench_now_ns() + (H.quick ? 500000000 : 2000000000);
  while (nseen < r->team && bench_now_ns() < deadline) {
    mark_reset();
    H.ops->loop(&r->l, r->team);
    unsigned n = __atomic_load_n(&bench_nmarks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && i < BENCH_MAX_P; i++) {
      size_t k = 0;
      while (k < nseen && seen[k] != bench_marks[i])
        k++;
      if (k == nseen && nseen < BENCH_MAX_P)
        seen[nseen++] = bench_marks[i];
    }
  }
  r->nwarm = nseen;
}

static void idle_window(void *arg) {
  idle_run *r = arg;
  for (int w = 0; w < 100; w++)
    H.ops->loop(&r->l, r->p);
  r->nstart = thread_snapshot(r->start, IDLE_MAX_THREADS, 1);
  mark_reset();
  r->t0 = bench_now_ns();
  int64_t stop = r->t0 + (int64_t)(r->window_s * 1e9);
  long loops = 0;
  do {
    for (int k = 0; k < 32; k++)
      H.ops->loop(&r->l, r->p);
    loops += 32;
  } while (bench_now_ns() < stop);
  r->t1 = bench_now_ns();
  r->nend = thread_snapshot(r->end, IDLE_MAX_THREADS, 1);
  r->loops = loops;
  for (size_t i = 0; i < r->nend; i++)
    r->used[i] = marked(r->end[i].tid);
}

/* The team has T participants and each loop uses T - 1 of them (the driver
 * makes T at least 3, so a loop is parallel): the last worker is left out,
 * as in ThreadTeams.jl PR #68.  Over the window, each thread's CPU time and context
 * switches; "unused" sums the threads that ran no chunk in the window except
 * the caller (normally the one left-out worker; also any helper thread a
 * runtime keeps), "used" the workers that ran chunks. */
static void section_idle(void) {
  static idle_run r;
  r.team = H.team;
  r.p = H.team > 2 ? H.team - 1 : H.team;
  r.window_s = H.quick ? 0.4 : 2.0;
  r.l.n = IDLE_N;
  r.l.s = 1e-3;
  r.l.x = xmalloc(IDLE_N * sizeof(double));
  r.l.y = xmalloc(IDLE_N * sizeof(double));
  for (size_t i = 0; i < IDLE_N; i++)
    ((double *)r.l.x)[i] = 1, r.l.y[i] = 0;
  if (r.p == r.team)
    note("team of %zu participants: loops use all of them", r.team);
  H.ops->within(r.team, idle_warm, &r);
  if (r.nwarm < r.team)
    note("only %zu of %zu threads ran chunks of the warm-up loops", r.nwarm, r.team);
  H.ops->within(r.p, idle_window, &r);

  int self = bench_tid();
  double secs = (double)(r.t1 - r.t0) / 1e9;
  int64_t cpu[2] = {0, 0};
  long vol[2] = {0, 0}, invol[2] = {0, 0}, caller_invol = 0;
  long nused = 0, nunused = 0;
  for (size_t i = 0; i < r.nend; i++) {
    const thread_stat *e = &r.end[i], *s = NULL;
    for (size_t k = 0; k < r.nstart; k++)
      if (r.start[k].tid == e->tid)
        s = &r.start[k];
    thread_stat zero = {e->tid, 0, 0, 0};
    if (!s)
      s = &zero;
    if (e->tid == self) {
      caller_invol = e->ivcsw - s->ivcsw;
      continue;
    }
    int u = r.used[i] ? 1 : 0;
    nused += u;
    nunused += !u;
    cpu[u] += e->cpu_ns - s->cpu_ns;
    vol[u] += e->vcsw - s->vcsw;
    invol[u] += e->ivcsw - s->ivcsw;
  }
  long gone = 0; /* threads alive at the start of the window, not at its end */
  for (size_t k = 0; k < r.nstart; k++) {
    size_t i = 0;
    while (i < r.nend && r.end[i].tid != r.start[k].tid)
      i++;
    gone += i == r.nend;
  }
  if (nunused == 0)
    note("no thread was left idle in the window: %ld workers ran chunks, "
         "%ld threads ended during it, %zu threads ran the warm-up",
         nused, gone, r.nwarm);
  emit(H.system, "loop", "us", "-", secs * 1e6 / (double)r.loops);
  emit(H.system, "used_workers", "threads", "-", (double)nused);
  emit(H.system, "unused_cpu", "% of a core", "-", 100.0 * (double)cpu[0] / 1e9 / secs);
  emit(H.system, "used_cpu", "% of a core", "-", 100.0 * (double)cpu[1] / 1e9 / secs);
  emit(H.system, "unused_csw_vol", "1/s", "-", (double)vol[0] / secs);
  emit(H.system, "unused_csw_invol", "1/s", "-", (double)invol[0] / secs);
  emit(H.system, "used_csw_vol", "1/s", "-", (double)vol[1] / secs);
  emit(H.system, "used_csw_invol", "1/s", "-", (double)invol[1] / secs);
  emit(H.system, "caller_csw_invol", "1/s", "-", (double)caller_invol / secs);
}

/* ---- section wake: latency after an idle gap -------------------------------- */

static const int wake_gap_ms[] = {1, 10, 50};
#define WAKE_GAPS 3

typedef struct wake_run {
  size_t p, n;
  unsigned char *gap;  /* per sample: index into wake_gap_ms */
  double *first, *last; /* us from launch to the first / last worker's chunk */
  double *idle;        /* % of a core the workers used per sample interval */
  long invalid;
  bench_wake w;
} wake_run;

static int64_t workers_cpu(const int *tids, size_t n) {
  int64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += thread_cpu_ns(tids[i]);
  return sum;
}

static void wake_body(void *arg) {
  wake_run *r = arg;
  int self = bench_tid();
  for (int k = 0; k < 20; k++) {
    H.ops->wake(&r->w, r->p);
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  /* every thread but the caller belongs to the runtime */
  thread_stat ts[IDLE_MAX_THREADS];
  size_t nts = thread_snapshot(ts, IDLE_MAX_THREADS, 0);
  int workers[IDLE_MAX_THREADS];
  size_t nw = 0;
  for (size_t i = 0; i < nts; i++)
    if (ts[i].tid != self)
      workers[nw++] = ts[i].tid;

  int64_t cpu0 = workers_cpu(workers, nw), wall0 = bench_now_ns();
  for (size_t k = 0; k < r->n; k++) {
    for (size_t c = 0; c < r->p && c < BENCH_MAX_P; c++)
      r->w.t[c] = 0, r->w.tid[c] = 0;
    int ms = wake_gap_ms[r->gap[k]];
    struct timespec gap = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&gap, NULL);
    int64_t t0 = bench_now_ns();
    H.ops->wake(&r->w, r->p);
    int64_t first = INT64_MAX, last = 0;
    int ok = 1;
    for (size_t c = 1; c < r->p && c < BENCH_MAX_P; c++) {
      if (r->w.t[c] == 0 || r->w.tid[c] == self)
        ok = 0;
      if (r->w.t[c] < first)
        first = r->w.t[c];
      if (r->w.t[c] > last)
        last = r->w.t[c];
    }
    int64_t cpu1 = workers_cpu(workers, nw), wall1 = bench_now_ns();
    r->idle[k] = 100.0 * (double)(cpu1 - cpu0) / (double)(wall1 - wall0);
    cpu0 = cpu1, wall0 = wall1;
    if (!ok) {
      r->invalid++;
      r->first[k] = r->last[k] = -1;
    } else {
      r->first[k] = (double)(first - t0) / 1e3;
      r->last[k] = (double)(last - t0) / 1e3;
    }
    if (out_of_time())
      r->n = k + 1;
  }
}

/* Gaps of 1, 10 and 50 ms in a shuffled order (seeded by the round).  The
 * latency is from the caller's clock read just before the launch to the
 * worker's clock read at the start of its chunk (the same CLOCK_MONOTONIC).
 * The idle cost of a sample is the workers' CPU time over the interval from
 * the end of the previous launch to the end of this one (gap + launch). */
static void section_wake(void) {
  if (!H.ops->wake)
    return; /* the system does not take part (bench_ops) */
  static const unsigned count_full[WAKE_GAPS] = {100, 40, 20};
  static const unsigned count_quick[WAKE_GAPS] = {20, 8, 4};
  const unsigned *count = H.quick ? count_quick : count_full;
  static wake_run r;
  r.p = H.team;
  if (r.p < 2) {
    note("team of %zu: no worker to wake", r.p);
    return;
  }
  r.n = 0;
  for (int g = 0; g < WAKE_GAPS; g++)
    r.n += count[g];
  r.gap = xmalloc(r.n);
  r.first = xmalloc(r.n * sizeof(double));
  r.last = xmalloc(r.n * sizeof(double));
  r.idle = xmalloc(r.n * sizeof(double));
  size_t k = 0;
  for (int g = 0; g < WAKE_GAPS; g++)
    for (unsigned i = 0; i < count[g]; i++)
      r.gap[k++] = (unsigned char)g;
  uint64_t x = 0x2545f4914f6cdd1du + H.round;
  for (size_t i = r.n - 1; i > 0; i--) { /* Fisher-Yates */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t j = (size_t)(x % (i + 1));
    unsigned char t = r.gap[i];
    r.gap[i] = r.gap[j], r.gap[j] = t;
  }
  H.ops->within(r.p, wake_body, &r);

  for (int g = 0; g < WAKE_GAPS; g++) {
    char metric[64];
    for (size_t i = 0; i < r.n; i++) {
      if (r.gap[i] != g)
        continue;
      if (r.first[i] >= 0) {
        snprintf(metric, sizeof metric, "wake_%dms", wake_gap_ms[g]);
        emit(H.system, metric, "us", "p99", r.first[i]);
        if (r.p > 2) {
          snprintf(metric, sizeof metric, "wake_all_%dms", wake_gap_ms[g]);
          emit(H.system, metric, "us", "p99", r.last[i]);
        }
      }
      snprintf(metric, sizeof metric, "idle_cpu_%dms", wake_gap_ms[g]);
      emit(H.system, metric, "% of a core", "-", r.idle[i]);
    }
  }
  if (r.invalid)
    note("%ld launches ran serially on the caller (not counted)", r.invalid);
}

/* ---- main -------------------------------------------------------------------- */

/* The sections a child measures (sections.h: those run by HARNESS), with
 * their time budgets in seconds (full, --quick): well above what a round
 * takes on a quiet machine; 0 where the section bounds itself. */
#define HARNESS_ROW(name, title, baseline, rounds, quick_rounds, flags, budget,  \
                    quick_budget, how, fn, derive, systems)                     \
  {#name, BENCH_HARNESS_##how(fn), budget, quick_budget},
static const struct {
  const char *name;
  void (*run)(void); /* NULL: not measured by the harness */
  double budget, quick_budget;
} sections[] = {BENCH_SECTIONS(HARNESS_ROW)};
#define NSECTIONS (sizeof sections / sizeof sections[0])

static int usage(const char *argv0, const bench_arg *args, size_t nargs) {
  bench_args_usage(stderr, argv0, args, nargs);
  fprintf(stderr, "  (a child of teams-bench: prints raw samples, one per line); sections:");
  for (size_t i = 0; i < NSECTIONS; i++)
    if (sections[i].run)
      fprintf(stderr, " %s", sections[i].name);
  fprintf(stderr, "\n");
  return 2;
}

int bench_child_main(int argc, char **argv, const bench_ops *ops) {
  H.ops = ops;
  H.system = ops->system;
  const bench_arg args[] = {
      {"--section", BENCH_ARG_TEXT, &H.section, "NAME", "the section to measure"},
      {"--team", BENCH_ARG_SIZE, &H.team, "T", "the team size the driver asked for"},
      {"--round", BENCH_ARG_UINT, &H.round, "R", "the round: rotates the cases' order"},
      {"--quick", BENCH_ARG_FLAG, &H.quick, NULL, "fewer samples"},
      {"--label", BENCH_ARG_TEXT, &H.system, "SYSTEM",
       "the system's name in the rows (default: the child's own)"},
  };
  const size_t nargs = sizeof args / sizeof args[0];
  if (bench_args_parse(argc, argv, args, nargs) != BENCH_ARGS_OK || !H.section ||
      H.team < 1 || H.team > BENCH_MAX_P)
    return usage(argv[0], args, nargs);
  for (size_t i = 0; i < NSECTIONS; i++)
    if (sections[i].run && !strcmp(sections[i].name, H.section)) {
      double budget = H.quick ? sections[i].quick_budget : sections[i].budget;
      H.deadline = bench_now_ns() + (int64_t)(budget * 1e9);
      ops->setup(H.team);
      sections[i].run();
      if (H.cut)
        note("%s samples cut short by the time budget (a busy machine?)", H.section);
      const char *n = ops->note ? ops->note() : NULL;
      if (n)
        printf("note\t%s: %s\n", H.system, n);
      return fflush(stdout) == 0 ? 0 : 1;
    }
  return usage(argv[0], args, nargs);
}
