/* teams over MPI: the triangular grid (kernels/c tri) across ranks.
 *
 *   mpirun -np R teams-mpi-tri [n [rounds [--uniform]]]
 *
 * Row i costs i + 1, so the static rank split (tt_mpi_launch: contiguous
 * rows per rank) leaves the last rank the most work: on 2 ranks it has 3/4
 * of it, 1.5x the ideal.  The rank tier (tt_mpi_launch_steal) moves the rest
 * to ranks that ran out.  Every rank holds the whole input; each rank
 * computes the rows it ran, and an MPI_Allreduce gathers y (each row is
 * nonzero on exactly one rank), which is compared with the serial reference.
 *
 * Prints, in ms (medians over `rounds` alternating rounds, the time of the
 * slowest rank): the one-core time of one process running the whole grid
 * (rank 0, its team limited to one participant), the ideal (that / the
 * participants of all the ranks' teams, or / the machines' CPUs when there
 * are fewer, as for 4 ranks on 2 cores), the
 * static split and the rank tier, with their ratios to the ideal.
 * Then the largest rank's share of the work (row costs) against a fair
 * 1/R, a balance measure that the machine's other load does not move.
 * --uniform runs a grid of equal rows (each the cost of the middle row) to
 * show the tier's overhead where there is nothing to balance. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <teams/mpi.h>
#include "kernels.h"

/* Every row costs m + 1: the uniform grid of the same total work. */
typedef struct {
  size_t n, m;
  const uint32_t *x;
  uint64_t *y;
} flat_args;

TT_KERNEL(flat, flat_args, p) {
  size_t i = tt_get_global_id(0);
  if (i >= p->n)
    return;
  uint64_t s = 0;
  for (size_t j = 0; j <= p->m; j++)
    s += (uint64_t)(p->m - j + 1 + i) * p->x[j];
  p->y[i] = s;
}

static void flat_ref(size_t n, size_t m, const uint32_t *x, uint64_t *y) {
  for (size_t i = 0; i < n; i++) {
    uint64_t s = 0;
    for (size_t j = 0; j <= m; j++)
      s += (uint64_t)(m - j + 1 + i) * x[j];
    y[i] = s;
  }
}

/* A barrier that leaves the CPU to the ranks still working: Open MPI's
 * blocking barrier polls, which would take a core from the one-core run. */
static void barrier_quietly(void) {
  MPI_Request req;
  int done = 0;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done)
    nanosleep(&(struct timespec){0, 200000}, NULL);
}

/* The work of rows [b, e): what a rank ran, in row costs. */
typedef struct {
  size_t n, m, local;
  int uniform;
  double work;
} work_ctx;

static double rows_work(const work_ctx *w, size_t b, size_t e) {
  if (e > w->n)
    e = w->n;
  if (b >= e)
    return 0;
  if (w->uniform)
    return (double)(e - b) * (double)(w->m + 1);
  /* sum of (i + 1) for i in [b, e) */
  return ((double)e * (double)(e + 1) - (double)b * (double)(b + 1)) / 2;
}

static void add_groups(void *ctx, size_t begin, size_t end) {
  work_ctx *w = ctx;
  w->work += rows_work(w, begin * w->local, end * w->local);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 24000;
  int rounds = argc > 2 ? atoi(argv[2]) : 5;
  int uniform = argc > 3 && strcmp(argv[3], "--uniform") == 0;
  if (rounds < 1)
    rounds = 1;

  uint32_t *x = malloc(n * sizeof *x);
  uint64_t *y = malloc(n * sizeof *y), *all = malloc(n * sizeof *all),
           *ref = malloc(n * sizeof *ref);
  double *ts = malloc(sizeof(double) * (size_t)rounds),
         *tt = malloc(sizeof(double) * (size_t)rounds);
  if (!x || !y || !all || !ref || !ts || !tt)
    MPI_Abort(MPI_COMM_WORLD, 3);
  for (size_t i = 0; i < n; i++)
    x[i] = (uint32_t)(i * 2654435761u) >> 8;
  size_t m = n / 2;
  if (uniform)
    flat_ref(n, m, x, ref);
  else
    tt_ref_tri(n, x, ref);

  tt_tri_args ta = {n, x, y};
  flat_args fa = {n, m, x, y};
  const tt_kernel *k = uniform ? &flat : &tt_k_tri;
  const void *args = uniform ? (const void *)&fa : (const void *)&ta;
  tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {64},
                          .schedule = TT_SCHED_STEAL};

  /* One core, one process: the whole grid on rank 0 with one participant. */
  double serial = 0;
  if (rank == 0) {
    tt_launch_config one = cfg;
    one.participants = 1;
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
      double t0 = MPI_Wtime();
      tt_launch(k, args, &one);
      double t = MPI_Wtime() - t0;
      best = t < best ? t : best;
    }
    serial = best;
  }
  barrier_quietly();
  MPI_Bcast(&serial, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  /* CPUs of all the nodes: each node's first rank counts its own. */
  MPI_Comm node;
  int nrank;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_free(&node);
  long cpus = nrank == 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 0;
  MPI_Allreduce(MPI_IN_PLACE, &cpus, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  long team = (long)tt_team_size(); /* the participants of all the ranks */
  MPI_Allreduce(MPI_IN_PLACE, &team, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int workers = (int)(cpus > 0 && cpus < team ? cpus : team);

  tt_mpi_part part;
  if (tt_mpi_own(MPI_COMM_WORLD, &cfg, TT_MPI_DIM_SLOWEST, &part) != 0)
    MPI_Abort(MPI_COMM_WORLD, 2);
  work_ctx wstatic = {n, m, 64, uniform, 0}, wtier = {n, m, 64, uniform, 0};
  wstatic.work = rows_work(&wstatic, part.begin, part.end);
  double total = rows_work(&wstatic, 0, n);

  int bad = 0;
  size_t steals = 0;
  double share_tier = 0; /* largest rank's share of the work, per round */
  for (int r = 0; r < rounds; r++) {
    for (int mode = 0; mode < 2; mode++) {
      memset(y, 0, n * sizeof *y);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      wtier.work = 0;
      tt_mpi_steal st = {.ran = add_groups, .ctx = &wtier};
      int err = mode == 0 ? tt_mpi_launch(MPI_COMM_WORLD, k, args, &cfg)
                          : tt_mpi_launch_steal(MPI_COMM_WORLD, k, args, &cfg, &st);
      double mine = MPI_Wtime() - t0, slowest;
      if (err != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, tt_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      (mode == 0 ? ts : tt)[r] = slowest;
      steals += st.steals_node + st.steals_other;
      if (mode == 1) {
        double most;
        MPI_Allreduce(&wtier.work, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        share_tier += most / total / rounds;
      }
      /* Rows another rank ran are 0 here: the sum is the gather. */
      MPI_Allreduce(y, all, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      bad |= memcmp(all, ref, n * sizeof *ref) != 0;
    }
  }
  unsigned long steals_all = steals;
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &steals_all, &steals_all, 1,
             MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  double share_static;
  MPI_Reduce(&wstatic.work, &share_static, 1, MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  share_static /= total;
  if (rank == 0) {
    qsort(ts, (size_t)rounds, sizeof(double), cmp_double);
    qsort(tt, (size_t)rounds, sizeof(double), cmp_double);
    double ideal = serial / workers, s = ts[rounds / 2], t = tt[rounds / 2];
    printf("%s n=%zu on %d ranks: one core %.2f ms, ideal %.2f ms, static "
           "split %.2f ms (%.2fx ideal), rank tier %.2f ms (%.2fx ideal, "
           "%.2fx static, %.1f steals/launch), %s\n",
           uniform ? "uniform" : "triangular", n, size, serial * 1e3,
           ideal * 1e3, s * 1e3, s / ideal, t * 1e3, t / ideal, t / s,
           (double)steals_all / rounds, bad ? "WRONG RESULT" : "results equal the reference");
    /* Independent of the machine's load: the largest rank's share of the
     * work against a fair 1/R (1.00 is perfect balance). */
    printf("  largest rank's work, x fair share: static split %.3f, rank tier "
           "%.3f (mean over rounds)\n",
           share_static * size, share_tier * size);
  }
  free(x);
  free(y);
  free(all);
  free(ref);
  free(ts);
  free(tt);
  MPI_Finalize();
  return bad;
}
