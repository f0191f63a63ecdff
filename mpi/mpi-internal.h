/* teams::mpi: what part.c and steal.c share (internal). */
#ifndef TEAMS_MPI_INTERNAL_H
#define TEAMS_MPI_INTERNAL_H

#include <stdint.h>
#include "teams/mpi.h"

/* MPI is initialised, not finalised, and comm is not MPI_COMM_NULL. */
int tt__mpi_ready(MPI_Comm comm);

/* tt_mpi_check with one more word that must agree on every rank (a
 * parameter of the caller's own, such as the rank tier's grain). */
int tt__mpi_check(MPI_Comm comm, const tt_kernel *k,
                  const tt_launch_config *cfg, uint64_t extra);

#endif
