// teams-bench-child-onetbb: oneTBB's side of the sections it takes part in (all but
// wake).  The total concurrency is fixed with global_control to the team size
// the driver asked for; each section's body runs inside a task_arena of p
// slots (one for the caller), so no measured loop pays for entering an arena.
#include "bench.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>

namespace {

using range = tbb::blocked_range<size_t>;

std::unique_ptr<tbb::global_control> limit;

void setup(size_t team) {
  limit = std::make_unique<tbb::global_control>(
      tbb::global_control::max_allowed_parallelism, team);
}

void within(size_t p, void (*body)(void *), void *arg) {
  tbb::task_arena arena(static_cast<int>(p));
  arena.execute([&] { body(arg); });
}

// ---- empty ----

void empty_static(size_t p) {
  tbb::parallel_for(
      range(0, p, 1),
      [](const range &r) {
        for (size_t c = r.begin(); c < r.end(); c++)
          bench_empty_body(c);
      },
      tbb::static_partitioner());
}

void empty_greedy(size_t m, size_t) {
  tbb::parallel_for(
      range(0, m, 1),
      [](const range &r) {
        for (size_t c = r.begin(); c < r.end(); c++)
          bench_empty_body(c);
      },
      tbb::simple_partitioner());
}

// ---- vectors: p static blocks, as the team's m == p chunks ----

template <typename F> void blocks(size_t n, size_t p, F f) {
  tbb::parallel_for(
      range(0, p, 1),
      [&](const range &r) {
        for (size_t c = r.begin(); c < r.end(); c++)
          f(bench_block(n, c, p), bench_block(n, c + 1, p));
      },
      tbb::static_partitioner());
}

void vec_init(const bench_vec *v, size_t p) {
  blocks(v->n, p, [v](size_t b, size_t e) {
    for (size_t i = b; i < e; i++)
      v->a[i] = 0, v->b[i] = 1, v->c[i] = 2;
  });
}

void triad(const bench_vec *v, size_t p) {
  blocks(v->n, p, [v](size_t b, size_t e) {
    bench_triad_body(v->a, v->b, v->c, v->s, b, e);
  });
}

void axpy(const bench_vec *v, size_t p) {
  blocks(v->n, p, [v](size_t b, size_t e) {
    bench_axpy_body(v->s, v->b, v->c, b, e);
  });
}

// ---- grid ----

template <typename P> long grid(const bench_grid *g, size_t grain, P part) {
  tbb::parallel_for(
      range(0, g->n, grain),
      [g](const range &r) {
        for (size_t i = r.begin(); i < r.end(); i++)
          g->out[i] = bench_row_body(g->cost[i], static_cast<double>(i));
      },
      part);
  return -1;
}

long grid_auto(const bench_grid *g, size_t) {
  return grid(g, 1, tbb::auto_partitioner());
}

long grid_simple(const bench_grid *g, size_t) {
  return grid(g, BENCH_GRID_GRAIN, tbb::simple_partitioner());
}

long axpy_static(const bench_vec *v, size_t) {
  tbb::parallel_for(
      range(0, v->n, BENCH_AXPY_GRAIN),
      [v](const range &r) { bench_axpy_body(v->s, v->b, v->c, r.begin(), r.end()); },
      tbb::static_partitioner());
  return -1;
}

// auto first: the default partitioner is what a program gets
const bench_schedule schedules[] = {
    {"auto", grid_auto, nullptr},
    {"simple,16", grid_simple, nullptr},
    {"static", nullptr, axpy_static},
};

// ---- idle ----

void loop(const bench_loop *l, size_t p) {
  blocks(l->n, p, [l](size_t b, size_t e) {
    bench_mark_thread();
    bench_axpy_body(l->s, l->x, l->y, b, e);
  });
}

} // namespace

int main(int argc, char **argv) {
  static const bench_ops ops = {
      "oneTBB", setup,     within,
      empty_static,        empty_greedy,
      vec_init,            triad,
      axpy,                schedules,
      sizeof schedules / sizeof schedules[0],
      loop,                nullptr, // wake: not one of the compared systems
      nullptr,
  };
  return bench_child_main(argc, argv, &ops);
}
