/* teams: many machines.  One MPI process (rank) per node or NUMA domain, each
 * with its own thread team, and a global NDRange split between the ranks.
 *
 * This layer is optional (libteams-mpi, CMake target teams::mpi, built when
 * MPI is found); the core library does not depend on it.  Every function here
 * calls MPI from the calling thread only, and the team's workers never call
 * MPI, so MPI_THREAD_SINGLE (plain MPI_Init) is enough.  A rank's team is the
 * process's team: its size and CPUs come from the process's binding
 * (mpirun --bind-to core|l3cache|numa), as for any process.
 *
 *   MPI_Init(&argc, &argv);
 *   tt_launch_config cfg = {.dims = 3, .global = {nx, ny, nz},
 *                           .local = {nx, 1, 1}};
 *   int err = tt_mpi_launch(MPI_COMM_WORLD, &my_kernel, &my_args, &cfg);
 *
 * runs on each rank the whole work-groups of its slab along the slowest
 * dimension, with the global ids of the whole grid.
 *
 * Codes (errors.h): TT_EINVAL when MPI is not initialised (or already
 * finalised), comm is MPI_COMM_NULL, or an MPI call failed and returned
 * (under the default MPI_ERRORS_ARE_FATAL it aborts instead); the codes of
 * tt_launch for bad input; and the codes of the collective check below. */
#ifndef TEAMS_MPI_H
#define TEAMS_MPI_H

#include <mpi.h>
#include <stddef.h>
#include "launch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Split along the slowest used dimension (dims - 1). */
#define TT_MPI_DIM_SLOWEST ((unsigned)-1)

/* The part of a global launch that one rank owns. */
typedef struct tt_mpi_part {
  /* The rank's launch: the global configuration with global[dim] and
   * offset[dim] narrowed to the rank's work-groups, and local resolved (so
   * that every rank cuts the same groups).  Global ids are those of the
   * global launch; a kernel that asks for tt_get_global_size,
   * tt_get_num_groups or tt_get_group_id sees the part's, as in OpenCL with a
   * global offset. */
  tt_launch_config cfg;
  unsigned dim;      /* the split dimension */
  size_t first;      /* the rank's groups along dim: [first, first + count) */
  size_t count;      /* 0: the rank owns nothing (more ranks than groups) */
  size_t groups;     /* groups along dim in the global launch */
  size_t begin, end; /* the rank's global ids along dim: [begin, end) */
} tt_mpi_part;

/* The part of cfg that rank `rank` of `size` owns: whole work-groups, split
 * along dimension dim (TT_MPI_DIM_SLOWEST: dims - 1) into contiguous spans of
 * floor or ceil(groups / size) groups, in rank order.  A local size left to
 * the launcher (all zero) is resolved here as for a team of one participant,
 * the same on every rank whatever its team size: pass a local size to cut
 * finer groups.  Communicates nothing.  Returns 0 or tt_launch's codes for
 * bad input; TT_EINVAL for dim >= dims, rank >= size or size 0. */
TT_EXTERN int tt_mpi_split(const tt_launch_config *cfg, unsigned dim,
                           int rank, int size, tt_mpi_part *out);

/* The same for the calling rank of comm. */
TT_EXTERN int tt_mpi_own(MPI_Comm comm, const tt_launch_config *cfg,
                         unsigned dim, tt_mpi_part *out);

/* Collective over comm: checks that every rank passes the same kernel (by
 * name) and the same NDRange (dims, global, local, offset, local memory) and
 * that each rank's cfg is valid.  One MPI_Allreduce of a few dozen words.
 * Every rank returns the same code: 0; the code of the first failing rank
 * validation (the most negative one when several ranks fail); TT_EINVAL when
 * the ranks disagree.  The schedule, participants, grain and groups_run may
 * differ between ranks (they concern the rank's own team).  k may be NULL
 * (no name compared). */
TT_EXTERN int tt_mpi_check(MPI_Comm comm, const tt_kernel *k,
                           const tt_launch_config *cfg);

/* Collective: tt_mpi_check, then the calling rank's part (split along the
 * slowest dimension) with tt_launch on its team.  Returns the check's code
 * (the same on every rank) or the rank's own launch code.  Does not wait for
 * the other ranks after its part. */
TT_EXTERN int tt_mpi_launch(MPI_Comm comm, const tt_kernel *k, const void *args,
                            const tt_launch_config *cfg);

/* ---- ranks as the outermost steal tier --------------------------------------
 *
 * For uneven grids whose inputs every rank holds (compute-bound kernels:
 * triangular, Mandelbrot, ray casting), tt_mpi_launch_steal starts each rank
 * on its part (as tt_mpi_launch) and lets a rank that ran out steal a
 * quarter of another rank's remaining part with MPI-3 one-sided atomics,
 * ranks on its own node first.  Work moves in slices: all the groups with
 * one id along the slowest dimension, `grain` slices at a time, each run by
 * the rank's team as one tt_launch (with cfg's schedule inside the rank).
 * Every work-group runs exactly once across the ranks; ran() tells the
 * caller which ones its rank ran, to gather the results. */
typedef struct tt_mpi_steal {
  /* In.  Slices per unit of work, the same on every rank (checked); 0: about
   * 16 units per rank. */
  size_t grain;
  /* Called on the calling thread after each run of groups, with linear group
   * ids [begin, end) of the global NDRange (dimension 0 fastest).  May be
   * NULL. */
  void (*ran)(void *ctx, size_t begin, size_t end);
  void *ctx;
  /* In.  1: MPI_Win_allocate even when every rank shares a node (the window
   * of ranks on several nodes; to compare, or to test that path on one
   * machine).  The same on every rank. */
  int separate;
  /* Out, for this rank. */
  size_t groups;       /* work-groups it ran */
  size_t units;        /* units it ran (tt_launch calls) */
  size_t steals_node;  /* steals from ranks on its node */
  size_t steals_other; /* steals from ranks on other nodes */
  int shared;          /* 1: the words lived in an MPI_Win_allocate_shared
                          window (every rank on one node) */
} tt_mpi_steal;

/* Collective over comm, like tt_mpi_launch, and returns only when every
 * rank's work is done (the window is freed collectively).  Each call sets up
 * its window and victim order (MPI_Comm_split_type, an allgather, a window
 * allocation: about 0.1 ms on one node here), so it suits launches that run
 * for milliseconds or more.  st may not be NULL.  Codes: those of tt_mpi_launch (the same on every rank for a
 * mismatch, including the grain); TT_EOVERFLOW for more than 2^32 - 2 units;
 * a rank's own tt_launch error after its work (its other units still run). */
TT_EXTERN int tt_mpi_launch_steal(MPI_Comm comm, const tt_kernel *k,
                                  const void *args,
                                  const tt_launch_config *cfg,
                                  tt_mpi_steal *st);

#ifdef __cplusplus
}
#endif
#endif
