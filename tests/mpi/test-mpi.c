/* Tests of the MPI layer (teams::mpi), run under mpirun -np 2 and -np 3.
 * Not Criterion: its fork per test does not mix with MPI.  Every rank runs
 * every check; the exit status is nonzero on every rank when any rank saw a
 * failure.  Not a benchmark.
 *
 *   uninitialised  tt_mpi_check / tt_mpi_launch / tt_mpi_own before MPI_Init
 *                  return TT_EINVAL (and do not crash);
 *   parts          random launches (fixed seed, the same on every rank):
 *                  every work-item runs exactly once across the ranks, each
 *                  work-group on one rank only, with its global ids;
 *   mismatch       launches whose parameters differ on one rank, or that are
 *                  invalid on one rank, fail with the same code everywhere
 *                  (and the next collective still matches: no hang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <teams/kernel.h>
#include <teams/mpi.h>

#include "check.h"

/* Each work-item adds 1 to its global id's counter and records its rank and
 * its group's first global id, at the global NDRange's coordinates. */
typedef struct {
  grid grid;
  int rank;
  int *count, *owner;
  size_t *group;
} mark_args;

TT_KERNEL(mark, mark_args, p) {
  size_t i[3], lin = 0, grp = 0;
  for (unsigned d = 0; d < 3; d++)
    i[d] = tt_get_global_id(d) - p->grid.off[d];
  for (int d = 2; d >= 0; d--) {
    lin = lin * p->grid.g[d] + i[d];
    grp = grp * p->grid.groups[d] + i[d] / p->grid.local[d];
  }
  p->count[lin] += 1;
  p->owner[lin] = p->rank + 1;
  p->group[lin] = grp;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static size_t rnd(size_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (size_t)(rng % n);
}

static void test_parts(void) {
  for (int iter = 0; iter < 300; iter++) {
    tt_launch_config cfg = {.dims = 1 + (unsigned)rnd(3)};
    size_t total = 1;
    for (unsigned d = 0; d < cfg.dims; d++) {
      cfg.global[d] = 1 + rnd(d == 0 ? 40 : 9);
      cfg.offset[d] = rnd(3) == 0 ? rnd(1000) : 0;
      total *= cfg.global[d];
    }
    int choose = rnd(4) == 0;
    for (unsigned d = 0; d < cfg.dims && !choose; d++)
      cfg.local[d] = 1 + rnd(cfg.global[d]);
    cfg.schedule = (tt_schedule)rnd(4);

    tt_ndrange nd;
    tt_launch_config one = cfg;
    one.participants = 1;
    CHECK(tt_launch_resolve(&one, &nd) == 0, "resolve");
    mark_args a = {.rank = rank};
    a.grid = grid_of(&nd);
    a.count = calloc(total, sizeof(int));
    a.owner = calloc(total, sizeof(int));
    a.group = calloc(total, sizeof(size_t));
    int *cnt = malloc(total * sizeof(int)), *own = malloc(total * sizeof(int));
    if (!a.count || !a.owner || !a.group || !cnt || !own)
      MPI_Abort(MPI_COMM_WORLD, 3);

    int err = tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &cfg);
    CHECK(err == 0, "iteration %d: tt_mpi_launch: %s", iter, tt_strerror(err));
    MPI_Allreduce(a.count, cnt, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(a.owner, own, (int)total, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    size_t bad = 0;
    for (size_t i = 0; i < total; i++)
      bad += cnt[i] != 1;
    CHECK(bad == 0, "iteration %d: %zu of %zu items not run exactly once", iter,
          bad, total);
    /* Whole groups: all items of one group have one owner.  Everyone has
     * own[] and group ids of the items it ran; share the group ids too. */
    size_t *grp = malloc(total * sizeof(size_t));
    if (grp == NULL)
      MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Allreduce(a.group, grp, (int)total, MPI_UINT64_T, MPI_MAX,
                  MPI_COMM_WORLD);
    int *gown = calloc(nd.ngroups, sizeof(int));
    size_t split = 0;
    for (size_t i = 0; i < total && gown != NULL; i++) {
      if (grp[i] >= nd.ngroups) {
        split++;
        continue;
      }
      if (gown[grp[i]] == 0)
        gown[grp[i]] = own[i];
      else
        split += gown[grp[i]] != own[i];
    }
    CHECK(split == 0, "iteration %d: %zu items of split groups", iter, split);
    free(gown);
    free(grp);
    free(a.count);
    free(a.owner);
    free(a.group);
    free(cnt);
    free(own);
  }
}

/* The code every rank got must be one code: compare min and max. */
static void expect_everywhere(int err, int want, const char *what) {
  int lo, hi;
  MPI_Allreduce(&err, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&err, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi, "%s: ranks disagree (codes %d..%d)", what, lo, hi);
  CHECK(err == want, "%s: got %d (%s), want %d", what, err, tt_strerror(err),
        want);
}

TT_KERNEL(other, mark_args, p) { (void)p; }

static void test_mismatch(void) {
  int last = rank == nranks - 1;
  size_t n = 64;
  int *cnt = calloc(n + 1, sizeof(int)), *own = calloc(n + 1, sizeof(int));
  size_t *grp = calloc(n + 1, sizeof(size_t));
  if (!cnt || !own || !grp)
    MPI_Abort(MPI_COMM_WORLD, 3);
  mark_args a = {.grid = {.g = {n, 1, 1}, .local = {8, 1, 1}, .groups = {8, 1, 1}},
                 .rank = rank, .count = cnt, .owner = own, .group = grp};

  tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {8}};
  tt_launch_config bad = cfg;
  bad.global[0] = last ? n + 1 : n; /* a different grid on one rank */
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &bad), TT_EINVAL,
                    "global differs on one rank");
  bad = cfg;
  bad.local[0] = last ? 4 : 8;
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &bad), TT_EINVAL,
                    "local differs on one rank");
  bad = cfg;
  bad.offset[0] = last ? 1 : 0;
  expect_everywhere(tt_mpi_check(MPI_COMM_WORLD, &mark, &bad), TT_EINVAL,
                    "offset differs on one rank");
  bad = cfg;
  bad.dims = last ? 2 : 1;
  bad.global[1] = 1;
  bad.local[1] = 1;
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &bad), TT_EINVAL,
                    "dims differ on one rank");
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, last ? &other : &mark, &a,
                                  &cfg),
                    TT_EINVAL, "kernel differs on one rank");
  /* Invalid on one rank only: its code everywhere. */
  bad = cfg;
  bad.global[0] = last ? 0 : n;
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &bad), TT_EINVAL,
                    "global 0 on one rank");
  bad = cfg;
  bad.offset[0] = last ? SIZE_MAX : 0;
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &bad),
                    TT_EOVERFLOW, "offset overflows on one rank");
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a,
                                  last ? NULL : &cfg),
                    TT_EINVAL, "NULL cfg on one rank");
  /* Settings of the rank's own team may differ. */
  tt_launch_config mine = cfg;
  mine.schedule = last ? TT_SCHED_STEAL : TT_SCHED_STATIC;
  mine.participants = (size_t)rank;
  memset(cnt, 0, (n + 1) * sizeof(int));
  expect_everywhere(tt_mpi_launch(MPI_COMM_WORLD, &mark, &a, &mine), 0,
                    "schedules differ between ranks");
  int sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += cnt[i];
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == (int)n, "after the mismatches: %d items of %zu ran", sum, n);
  free(cnt);
  free(own);
  free(grp);
}

int main(int argc, char **argv) {
  /* Before MPI_Init: an error code, nothing else. */
  tt_launch_config cfg = {.dims = 1, .global = {16}};
  tt_mpi_part part;
  int pre[3] = {tt_mpi_check(MPI_COMM_WORLD, &mark, &cfg),
                tt_mpi_launch(MPI_COMM_WORLD, &mark, NULL, &cfg),
                tt_mpi_own(MPI_COMM_WORLD, &cfg, TT_MPI_DIM_SLOWEST, &part)};

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  for (int i = 0; i < 3; i++)
    CHECK(pre[i] == TT_EINVAL, "before MPI_Init: call %d gave %d", i, pre[i]);
  CHECK(tt_mpi_check(MPI_COMM_NULL, &mark, &cfg) == TT_EINVAL,
        "MPI_COMM_NULL accepted");
  CHECK(tt_mpi_split(&cfg, 1, 0, 2, &part) == TT_EINVAL, "dim >= dims accepted");
  CHECK(tt_mpi_split(&cfg, 0, 2, 2, &part) == TT_EINVAL, "rank >= size accepted");

  test_parts();
  test_mismatch();

  int any = failures;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("test-mpi on %d ranks: %s (%d failed checks)\n", nranks,
           any ? "FAILED" : "ok", any);
  MPI_Finalize();
  return any != 0;
}
