/* teams-bench-child-teams: the team's side of every section, through the
 * public API only (tt_foreach_chunk, tt_foreach_range).  A child of
 * teams-bench, which runs it as "teams" (the defaults), "teams-team"
 * (TEAMS_RUN=team: every region on the team's workers), "teams-sentinel"
 * (TEAMS_IDLE=sentinel, TEAMS_RUN=team) and "teams-tree" (TEAMS_TREE_MIN=2,
 * TEAMS_RUN=team). */
#include "bench.h"

#include <sched.h>
#include "teams/team.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, const char *what) {
  if (rc != 0) {
    fprintf(stderr, "teams-bench-child-teams: %s: %s\n", what, tt_strerror(rc));
    exit(1);
  }
}

static size_t requested_team;

static void setup(size_t team) { requested_team = team; }

static void within(size_t p, void (*body)(void *), void *arg) {
  (void)p;
  body(arg);
}

/* ---- empty ---- */

static void empty_chunk(void *ctx, size_t c) {
  (void)ctx;
  bench_empty_body(c);
}

static void empty_static(size_t p) {
  check(tt_foreach_chunk(empty_chunk, NULL, p, p), "empty static");
}

static void empty_greedy(size_t m, size_t p) {
  check(tt_foreach_chunk(empty_chunk, NULL, m, p), "empty greedy");
}

/* ---- vectors: a static range of p blocks ----
 * tt_foreach_range's static schedule, OpenMP's schedule(static): p balanced
 * blocks, one per participant as the team deals them (over its NUMA nodes
 * and LLCs when pinned across several; include/teams/memory.h).  The first
 * touch, the triad and the axpy all cut the same blocks, and so do the grid
 * section's axpy rows (the same p blocks in grains), so every row finds its
 * pages local. */

static void init_range(void *ctx, size_t b, size_t e) {
  const bench_vec *v = ctx;
  for (size_t i = b; i < e; i++)
    v->a[i] = 0, v->b[i] = 1, v->c[i] = 2;
}

static void triad_range(void *ctx, size_t b, size_t e) {
  const bench_vec *v = ctx;
  bench_triad_body(v->a, v->b, v->c, v->s, b, e);
}

static void axpy_range(void *ctx, size_t b, size_t e) {
  const bench_vec *v = ctx;
  bench_axpy_body(v->s, v->b, v->c, b, e);
}

static void vec_init(const bench_vec *v, size_t p) {
  check(tt_foreach_range(init_range, (void *)v, v->n, 1, p, TT_SCHED_STATIC),
        "vector init");
}

static void triad(const bench_vec *v, size_t p) {
  check(tt_foreach_range(triad_range, (void *)v, v->n, 1, p, TT_SCHED_STATIC),
        "triad");
}

static void axpy(const bench_vec *v, size_t p) {
  check(tt_foreach_range(axpy_range, (void *)v, v->n, 1, p, TT_SCHED_STATIC),
        "axpy");
}

/* ---- grid: tt_foreach_range by schedule ---- */

static void grid_range(void *ctx, size_t begin, size_t end) {
  const bench_grid *g = ctx;
  for (size_t i = begin; i < end; i++)
    g->out[i] = bench_row_body(g->cost[i], (double)i);
}

/* The steals of the last steal region, or -1 when not counted. */
static long steals_of(tt_schedule s) {
  tt_steal_stats st;
  if (s != TT_SCHED_STEAL || tt_steal_last_stats(&st) != 0)
    return -1;
  return (long)st.steals;
}

static long range(void (*f)(void *, size_t, size_t), void *ctx, size_t n,
                  size_t grain, size_t p, tt_schedule s) {
  int rc = tt_foreach_range(f, ctx, n, grain, p, s);
  if (rc == TT_EINVAL || rc == TT_ENOSYS) /* a schedule not (yet) offered */
    return BENCH_REFUSED;
  check(rc, "range");
  return steals_of(s);
}

#define GRID_RANGE(name, sched)                                                \
  static long grid_##name(const bench_grid *g, size_t p) {                     \
    return range(grid_range, (void *)g, g->n, BENCH_GRID_GRAIN, p, sched);     \
  }
#define AXPY_RANGE(name, sched)                                                \
  static long axpy_##name(const bench_vec *v, size_t p) {                      \
    return range(axpy_range, (void *)v, v->n, BENCH_AXPY_GRAIN, p, sched);     \
  }
GRID_RANGE(static, TT_SCHED_STATIC)
GRID_RANGE(greedy, TT_SCHED_GREEDY)
GRID_RANGE(steal, TT_SCHED_STEAL)
AXPY_RANGE(static, TT_SCHED_STATIC)
AXPY_RANGE(steal, TT_SCHED_STEAL)

static const bench_schedule schedules[] = {
    {"steal", grid_steal, axpy_steal},
    {"static", grid_static, axpy_static},
    {"greedy,16", grid_greedy, NULL},
};

/* ---- idle and wake ---- */

typedef struct loop_ctx {
  const bench_loop *l;
  size_t p;
} loop_ctx;

static void loop_chunk(void *ctx, size_t c) {
  const loop_ctx *x = ctx;
  bench_mark_thread();
  bench_axpy_body(x->l->s, x->l->x, x->l->y, bench_block(x->l->n, c, x->p),
                  bench_block(x->l->n, c + 1, x->p));
}

static void loop(const bench_loop *l, size_t p) {
  loop_ctx x = {l, p};
  check(tt_foreach_chunk(loop_chunk, &x, p, p), "loop");
}

/* The caller's chunk waits until every worker's began: the region then
 * needs each worker as it wakes, as it did before a static region's caller
 * ran the chunks of workers still waking (docs/protocol.md item 10), and
 * the row stays the wake-up's latency. */
static size_t wake_p;
static void wake_chunk(void *ctx, size_t c) {
  bench_wake *w = ctx;
  __atomic_store_n(&w->t[c], bench_now_ns(), __ATOMIC_RELEASE);
  w->tid[c] = bench_tid();
  for (size_t k = 1; c == 0 && k < wake_p; k++)
    while (!__atomic_load_n(&w->t[k], __ATOMIC_ACQUIRE))
      sched_yield();
}

static void wake(bench_wake *w, size_t p) {
  wake_p = p;
  check(tt_foreach_chunk(wake_chunk, w, p, p), "wake");
}

static const char *note(void) {
  static char buf[256];
  tt_team_info info;
  const char *idle = getenv("TEAMS_IDLE");
  if (tt_team_get_info(&info) != 0)
    return "tt_team_get_info failed";
  if (idle && !strcmp(idle, "sentinel") && !info.sentinel)
    return "the team ignored TEAMS_IDLE=sentinel: these rows are sleep mode";
  if (info.size != requested_team) {
    snprintf(buf, sizeof buf, "team of %zu participants, %zu asked for%s%s",
             info.size, requested_team, info.degraded ? ": " : "",
             info.degraded ? info.degraded : "");
    return buf;
  }
  return NULL;
}

int main(int argc, char **argv) {
  static const bench_ops ops = {
      "teams",    setup,     within, empty_static, empty_greedy,
      vec_init,   triad,     axpy,   schedules,    sizeof schedules / sizeof schedules[0],
      loop,       wake,      note,
  };
  return bench_child_main(argc, argv, &ops);
}
