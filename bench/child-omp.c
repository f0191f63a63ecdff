/* teams-bench-child-libgomp and teams-bench-child-libomp: the OpenMP side
 * of every section, children of teams-bench.  One source, built twice with
 * the same flags: by gcc -fopenmp (libgomp) and by clang -fopenmp=libomp
 * (LLVM's libomp); BENCH_OMP_SYSTEM names which.  Two OpenMP runtimes cannot
 * share a process, hence two programs.
 *
 * The loops are plain `parallel for` with a num_threads clause; the runtime
 * keeps its defaults (OMP_WAIT_POLICY, GOMP_SPINCOUNT, KMP_BLOCKTIME unset),
 * as a program would meet them. */
#include "bench.h"

#include <omp.h>

#ifndef BENCH_OMP_SYSTEM
#error "build with -DBENCH_OMP_SYSTEM=libgomp or libomp"
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

static void setup(size_t team) { (void)team; /* OMP_NUM_THREADS is set */ }

static void within(size_t p, void (*body)(void *), void *arg) {
  (void)p;
  body(arg);
}

/* ---- empty ---- */

static void empty_static(size_t p) {
  const long n = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long i = 0; i < n; i++)
    bench_empty_body((size_t)i);
}

static void empty_greedy(size_t m, size_t p) {
  const long n = (long)m;
#pragma omp parallel for schedule(dynamic, 1) num_threads(p)
  for (long i = 0; i < n; i++)
    bench_empty_body((size_t)i);
}

/* ---- vectors: p static blocks, as the team's m == p chunks ---- */

static void vec_init(const bench_vec *v, size_t p) {
  const long np = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < np; c++)
    for (size_t i = bench_block(v->n, (size_t)c, p); i < bench_block(v->n, (size_t)c + 1, p); i++)
      v->a[i] = 0, v->b[i] = 1, v->c[i] = 2;
}

static void triad(const bench_vec *v, size_t p) {
  const long np = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < np; c++)
    bench_triad_body(v->a, v->b, v->c, v->s, bench_block(v->n, (size_t)c, p),
                     bench_block(v->n, (size_t)c + 1, p));
}

static void axpy(const bench_vec *v, size_t p) {
  const long np = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < np; c++)
    bench_axpy_body(v->s, v->b, v->c, bench_block(v->n, (size_t)c, p),
                    bench_block(v->n, (size_t)c + 1, p));
}

/* ---- grid: one row per iteration ---- */

#define GRID_LOOP(name, ...)                                                   \
  static long grid_##name(const bench_grid *g, size_t p) {                     \
    const long n = (long)g->n;                                                 \
    _Pragma(STR(omp parallel for schedule(__VA_ARGS__) num_threads(p)))        \
    for (long i = 0; i < n; i++)                                               \
      g->out[i] = bench_row_body(g->cost[i], (double)i);                       \
    return -1;                                                                 \
  }
GRID_LOOP(dynamic, dynamic, 16)
GRID_LOOP(guided, guided)
GRID_LOOP(static, static)

/* uniform axpy, static over grains of BENCH_AXPY_GRAIN elements */
static long axpy_static(const bench_vec *v, size_t p) {
  const long ng = (long)((v->n + BENCH_AXPY_GRAIN - 1) / BENCH_AXPY_GRAIN);
#pragma omp parallel for schedule(static) num_threads(p)
  for (long k = 0; k < ng; k++) {
    size_t b = (size_t)k * BENCH_AXPY_GRAIN, e = b + BENCH_AXPY_GRAIN;
    bench_axpy_body(v->s, v->b, v->c, b, e < v->n ? e : v->n);
  }
  return -1;
}

/* dynamic,16 first: it is the row the grid section compares against */
static const bench_schedule schedules[] = {
    {"dynamic,16", grid_dynamic, NULL},
    {"guided", grid_guided, NULL},
    {"static", grid_static, axpy_static},
};

/* ---- idle and wake ---- */

static void loop(const bench_loop *l, size_t p) {
  const long np = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < np; c++) {
    bench_mark_thread();
    bench_axpy_body(l->s, l->x, l->y, bench_block(l->n, (size_t)c, p),
                    bench_block(l->n, (size_t)c + 1, p));
  }
}

static void wake(bench_wake *w, size_t p) {
  const long np = (long)p;
#pragma omp parallel for schedule(static) num_threads(p)
  for (long c = 0; c < np; c++) {
    w->t[c] = bench_now_ns();
    w->tid[c] = bench_tid();
  }
}

int main(int argc, char **argv) {
  static const bench_ops ops = {
      STR(BENCH_OMP_SYSTEM), setup,  within, empty_static, empty_greedy,
      vec_init,              triad,  axpy,   schedules,    sizeof schedules / sizeof schedules[0],
      loop,                  wake,   NULL,
  };
  return bench_child_main(argc, argv, &ops);
}
