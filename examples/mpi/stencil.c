/* teams over MPI: the 7-point stencil (kernels/c stencil7) over z-slabs.
 *
 *   mpirun -np R teams-mpi-stencil [nx ny nz steps]
 *
 * Each rank owns the z-planes of its part of the global NDRange
 * (tt_mpi_part: whole work-groups along z, the slowest dimension, with
 * local = {nx, 1, 1} so a group is one row) plus one halo plane on each side.
 * A step exchanges the halos with the ranks above and below (MPI_Sendrecv),
 * then runs the unchanged stencil kernel over its part with its own team:
 * the part keeps the global ids, and the kernel's arrays are the rank's slab
 * seen at global coordinates.  After the steps rank 0 gathers the grid and
 * compares it bit for bit with the serial reference of one process; the
 * exit status says whether they are equal.  Prints the time per step. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <teams/mpi.h>
#include "kernels.h"

static float initial(size_t x, size_t y, size_t z) {
  uint64_t h = (x * 73856093u) ^ (y * 19349663u) ^ (z * 83492791u);
  h = (h ^ (h >> 13)) * 0x5bd1e995u;
  return (float)(h % 1000) / 1000.0f;
}

/* The slab's storage seen at global coordinates: element x + nx*(y + ny*z)
 * of the result is plane z - z0 + 1 of the slab (plane 0 is the halo below).
 * Integer arithmetic, because the pointer itself may lie outside the slab;
 * the kernel only touches elements inside it. */
static float *at_global(float *slab, size_t plane, size_t z0) {
  intptr_t shift = ((intptr_t)z0 - 1) * (intptr_t)(plane * sizeof(float));
  return (float *)((intptr_t)slab - shift);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t nx = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
  size_t ny = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
  size_t nz = argc > 3 ? strtoul(argv[3], NULL, 10) : 64;
  int steps = argc > 4 ? atoi(argv[4]) : 10;
  const float c0 = 0.4f, c1 = 0.1f;
  size_t plane = nx * ny;

  tt_launch_config cfg = {.dims = 3, .global = {nx, ny, nz}, .local = {nx, 1, 1},
                          .schedule = TT_SCHED_STATIC};
  int err = tt_mpi_check(MPI_COMM_WORLD, &tt_k_stencil7, &cfg);
  tt_mpi_part part;
  if (err == 0)
    err = tt_mpi_own(MPI_COMM_WORLD, &cfg, TT_MPI_DIM_SLOWEST, &part);
  if (err != 0) {
    fprintf(stderr, "rank %d: %s\n", rank, tt_strerror(err));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t z0 = part.begin, z1 = part.end, own = z1 - z0;
  int down = z0 > 0 && own != 0 ? rank - 1 : MPI_PROC_NULL;
  int up = z1 < nz && own != 0 ? rank + 1 : MPI_PROC_NULL;

  float *a = calloc((own + 2) * plane, sizeof(float));
  float *b = calloc((own + 2) * plane, sizeof(float));
  if (a == NULL || b == NULL)
    MPI_Abort(MPI_COMM_WORLD, 3);
  for (size_t z = z0; z < z1; z++)
    for (size_t y = 0; y < ny; y++)
      for (size_t x = 0; x < nx; x++)
        a[x + nx * (y + ny * (z - z0 + 1))] = initial(x, y, z);

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int s = 0; s < steps && own != 0; s++) {
    /* Own first plane down, halo above from up; own last plane up, halo
     * below from down. */
    MPI_Sendrecv(a + plane, (int)plane, MPI_FLOAT, down, 0,
                 a + (own + 1) * plane, (int)plane, MPI_FLOAT, up, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + own * plane, (int)plane, MPI_FLOAT, up, 1, a,
                 (int)plane, MPI_FLOAT, down, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    tt_stencil7_args args = {nx, ny, nz, c0, c1, at_global(a, plane, z0),
                             at_global(b, plane, z0)};
    err = tt_launch(&tt_k_stencil7, &args, &part.cfg);
    if (err != 0) {
      fprintf(stderr, "rank %d: %s\n", rank, tt_strerror(err));
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    float *t = a;
    a = b;
    b = t;
  }
  double t1 = MPI_Wtime(), mine = t1 - t0, slowest;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  /* Gather the owned planes on rank 0, in rank order (= z order). */
  int *counts = NULL, *displs = NULL;
  float *all = NULL;
  if (rank == 0) {
    counts = malloc(sizeof(int) * (size_t)size);
    displs = malloc(sizeof(int) * (size_t)size);
    all = malloc(sizeof(float) * plane * nz);
    if (counts == NULL || displs == NULL || all == NULL)
      MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int mycount = (int)(own * plane);
  MPI_Gather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int r = 0, d = 0; r < size; d += counts[r], r++)
      displs[r] = d;
  MPI_Gatherv(a + plane, mycount, MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0,
              MPI_COMM_WORLD);

  int status = 0;
  if (rank == 0) {
    float *ra = malloc(sizeof(float) * plane * nz);
    float *rb = malloc(sizeof(float) * plane * nz);
    if (ra == NULL || rb == NULL)
      MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t z = 0; z < nz; z++)
      for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < nx; x++)
          ra[x + nx * (y + ny * z)] = initial(x, y, z);
    for (int s = 0; s < steps; s++) {
      tt_ref_stencil7(nx, ny, nz, c0, c1, ra, rb);
      float *t = ra;
      ra = rb;
      rb = t;
    }
    size_t diff = 0;
    for (size_t i = 0; i < plane * nz; i++)
      diff += memcmp(&all[i], &ra[i], sizeof(float)) != 0;
    status = diff != 0;
    printf("stencil7 %zux%zux%zu, %d steps on %d ranks: %.3f ms/step, %s "
           "(%zu of %zu points differ from the single-process reference)\n",
           nx, ny, nz, steps, size, steps > 0 ? slowest * 1e3 / steps : 0.0,
           status ? "MISMATCH" : "bitwise equal", diff, plane * nz);
    free(ra);
    free(rb);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(a);
  free(b);
  free(all);
  free(counts);
  free(displs);
  MPI_Finalize();
  return status;
}
