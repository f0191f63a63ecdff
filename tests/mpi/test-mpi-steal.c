/* Stress test of the rank tier (tt_mpi_launch_steal), run under mpirun -np 2
 * and -np 3: many random launches (fixed seed, the same on every rank), one
 * rank often slow (a busy wait per group) so that the others steal from it.  Checks that every
 * work-item ran exactly once across the ranks, that ran() reported exactly
 * the groups each rank ran (each group once across the ranks), and that the
 * tier was exercised (some steals over the whole run).  Every other launch
 * uses MPI_Win_allocate, the window of ranks on several nodes.  Not a
 * benchmark. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <teams/kernel.h>
#include <teams/mpi.h>

#include "check.h"

typedef struct {
  grid grid;
  int *count;   /* per item, global linear id */
  int *gcount;  /* per group, from the kernel */
  long slow_ns; /* busy time per group on this rank */
} mark_args;

static long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

TT_KERNEL(mark, mark_args, p) {
  size_t lin = 0, grp = 0;
  for (int d = 2; d >= 0; d--) {
    size_t i = tt_get_global_id(d) - p->grid.off[d];
    lin = lin * p->grid.g[d] + i;
    grp = grp * p->grid.groups[d] + i / p->grid.local[d];
  }
  __atomic_fetch_add(&p->count[lin], 1, __ATOMIC_RELAXED);
  if (tt_get_local_linear_id() == 0) {
    __atomic_fetch_add(&p->gcount[grp], 1, __ATOMIC_RELAXED);
    for (long t0 = p->slow_ns ? now_ns() : 0; p->slow_ns && now_ns() - t0 < p->slow_ns;)
      ;
  }
}

typedef struct {
  int *reported; /* per group: ranges given to ran() */
  size_t n;
  int bad;
} ran_ctx;

static void ran(void *ctx, size_t begin, size_t end) {
  ran_ctx *c = ctx;
  if (begin > end || end > c->n) {
    c->bad = 1;
    return;
  }
  for (size_t i = begin; i < end; i++)
    c->reported[i]++;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static size_t rnd(size_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (size_t)(rng % n);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  size_t steals = 0;
  for (int it = 0; it < iters; it++) {
    tt_launch_config cfg = {.dims = 1 + (unsigned)rnd(3)};
    size_t total = 1;
    for (unsigned d = 0; d < cfg.dims; d++) {
      cfg.global[d] = 1 + rnd(d + 1 == cfg.dims ? 300 : 7);
      cfg.offset[d] = rnd(4) == 0 ? rnd(100) : 0;
      total *= cfg.global[d];
    }
    for (unsigned d = 0; d < cfg.dims; d++)
      cfg.local[d] = 1 + rnd(d + 1 == cfg.dims && cfg.global[d] > 4 ? 4 : cfg.global[d]);
    cfg.schedule = (tt_schedule)rnd(4);
    tt_ndrange nd;
    CHECK(tt_launch_resolve(&cfg, &nd) == 0, "resolve");
    size_t slices = nd.groups[cfg.dims - 1];
    tt_mpi_steal st = {.grain = rnd(3) == 0 ? 0 : 1 + rnd(slices < 8 ? slices : 8),
                       .ran = ran};
    st.separate = it % 2; /* MPI_Win_allocate_shared, MPI_Win_allocate */
    mark_args a = {0};
    a.grid = grid_of(&nd);
    a.count = calloc(total, sizeof(int));
    a.gcount = calloc(nd.ngroups, sizeof(int));
    ran_ctx rc = {calloc(nd.ngroups, sizeof(int)), nd.ngroups, 0};
    int *sum = malloc(total * sizeof(int)), *gsum = malloc(nd.ngroups * sizeof(int));
    if (!a.count || !a.gcount || !rc.reported || !sum || !gsum)
      MPI_Abort(MPI_COMM_WORLD, 3);
    st.ctx = &rc;

    int slow = (int)rnd((size_t)nranks + 1); /* == nranks: nobody */
    a.slow_ns = rank == slow ? 20000 : 0;
    int err = tt_mpi_launch_steal(MPI_COMM_WORLD, &mark, &a, &cfg, &st);
    CHECK(err == 0, "launch %d: %s", it, tt_strerror(err));
    CHECK(!rc.bad, "launch %d: ran() outside the groups", it);
    size_t mine = 0;
    for (size_t i = 0; i < nd.ngroups; i++) {
      CHECK(rc.reported[i] == a.gcount[i],
            "launch %d: group %zu ran %d times here, reported %d", it, i,
            a.gcount[i], rc.reported[i]);
      mine += (size_t)a.gcount[i];
    }
    CHECK(mine == st.groups, "launch %d: groups %zu, counted %zu", it,
          st.groups, mine);
    MPI_Allreduce(a.count, sum, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(rc.reported, gsum, (int)nd.ngroups, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    size_t bad = 0, gbad = 0;
    for (size_t i = 0; i < total; i++)
      bad += sum[i] != 1;
    for (size_t i = 0; i < nd.ngroups; i++)
      gbad += gsum[i] != 1;
    CHECK(bad == 0 && gbad == 0,
          "launch %d: %zu of %zu items, %zu of %zu groups not run exactly once",
          it, bad, total, gbad, nd.ngroups);
    steals += st.steals_node + st.steals_other;
    free(a.count);
    free(a.gcount);
    free(rc.reported);
    free(sum);
    free(gsum);
  }
  /* The mismatch rule covers the grain too. */
  tt_launch_config cfg = {.dims = 1, .global = {64}, .local = {4}};
  tt_mpi_steal st = {.grain = rank == nranks - 1 ? 2 : 1};
  int err = tt_mpi_launch_steal(MPI_COMM_WORLD, &mark, NULL, &cfg, &st), lo, hi;
  MPI_Allreduce(&err, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&err, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == TT_EINVAL && hi == TT_EINVAL, "grain mismatch gave %d..%d", lo, hi);

  /* The window kind must agree as well. */
  st = (tt_mpi_steal){.separate = rank == nranks - 1};
  err = tt_mpi_launch_steal(MPI_COMM_WORLD, &mark, NULL, &cfg, &st);
  MPI_Allreduce(&err, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&err, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == TT_EINVAL && hi == TT_EINVAL, "window mismatch gave %d..%d", lo, hi);

  unsigned long all = steals;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK(all > 0, "no steals in %d launches: the rank tier was not exercised",
        iters);
  int any = failures;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test-mpi-steal on %d ranks, %d launches: %lu steals, %s (%d failed "
           "checks)\n",
           nranks, iters, all, any ? "FAILED" : "ok", any);
  MPI_Finalize();
  return any != 0;
}
