/* teams: a rank's part of a global launch, and the collective check.
 *
 * The part is pure arithmetic on the resolved NDRange: groups along the
 * split dimension are dealt out in contiguous spans, rank order, the first
 * (groups % size) ranks one more.  Global ids are preserved through the
 * launcher's offset, so the kernel needs no change.
 *
 * The check is one MPI_Allreduce(MIN) over the parameters v and their
 * complements ~v: min(~v) = ~max(v), so one reduction gives every field's
 * minimum and maximum, and the field agrees on every rank exactly when the
 * two are equal.  Every rank computes its code from the same reduced vector,
 * so every rank returns the same code, and every rank reaches the reduction
 * whatever its own input (a NULL cfg included): a mismatch fails everywhere
 * instead of leaving some ranks in a later collective that others never
 * enter.  Cost: one reduction of 2 * 15 words (a few microseconds on one
 * node), once per launch. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "teams/mpi.h"
#include "mpi-internal.h"

static int mpi_ready(MPI_Comm comm) {
  int init = 0, fin = 0;
  if (MPI_Initialized(&init) != MPI_SUCCESS || !init)
    return 0;
  if (MPI_Finalized(&fin) != MPI_SUCCESS || fin)
    return 0;
  return comm != MPI_COMM_NULL;
}

/* The global NDRange every rank agrees on: a local size left to the
 * launcher is chosen as for one participant, which no team size changes. */
static int resolve_global(const tt_launch_config *cfg, tt_ndrange *nd) {
  if (cfg == NULL)
    return TT_EINVAL;
  tt_launch_config c = *cfg;
  c.participants = 1;
  return tt_launch_resolve(&c, nd);
}

int tt_mpi_split(const tt_launch_config *cfg, unsigned dim, int rank,
                   int size, tt_mpi_part *out) {
  if (out == NULL || size <= 0 || rank < 0 || rank >= size)
    return TT_EINVAL;
  tt_ndrange nd;
  int err = resolve_global(cfg, &nd);
  if (err != 0)
    return err;
  if (dim == TT_MPI_DIM_SLOWEST)
    dim = nd.dims - 1;
  if (dim >= nd.dims)
    return TT_EINVAL;

  size_t G = nd.groups[dim], n = (size_t)size, r = (size_t)rank;
  size_t base = G / n, extra = G % n;
  size_t first = base * r + (r < extra ? r : extra);
  size_t count = base + (r < extra);
  size_t L = nd.local[dim];
  size_t begin = nd.offset[dim] + first * L;
  size_t end = first + count == G ? nd.offset[dim] + nd.global[dim]
                                  : begin + count * L;

  memset(out, 0, sizeof *out);
  out->cfg = *cfg;
  for (unsigned d = 0; d < nd.dims; d++)
    out->cfg.local[d] = nd.local[d];
  out->cfg.global[dim] = end - begin;
  out->cfg.offset[dim] = begin;
  /* A part that is only the last, smaller group: the launcher wants
   * local <= global, and that group has the same items either way. */
  if (count != 0 && out->cfg.local[dim] > end - begin)
    out->cfg.local[dim] = end - begin;
  out->dim = dim;
  out->first = first;
  out->count = count;
  out->groups = G;
  out->begin = begin;
  out->end = end;
  return 0;
}

int tt_mpi_own(MPI_Comm comm, const tt_launch_config *cfg, unsigned dim,
                tt_mpi_part *out) {
  if (!mpi_ready(comm))
    return TT_EINVAL;
  int rank, size;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return TT_EINVAL;
  return tt_mpi_split(cfg, dim, rank, size, out);
}

/* FNV-1a: the kernel's name, so that ranks launching different kernels over
 * the same NDRange disagree too. */
static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; s != NULL && *s != '\0'; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

enum { NFIELDS = 15 };

int tt_mpi_check(MPI_Comm comm, const tt_kernel *k, const tt_launch_config *cfg) {
  return tt__mpi_check(comm, k, cfg, 0);
}

int tt__mpi_ready(MPI_Comm comm) { return mpi_ready(comm); }

int tt__mpi_check(MPI_Comm comm, const tt_kernel *k,
                  const tt_launch_config *cfg, uint64_t extra) {
  if (!mpi_ready(comm))
    return TT_EINVAL;
  tt_ndrange nd;
  int err = resolve_global(cfg, &nd);
  if (err == 0 && k != NULL && k->chunk == NULL)
    err = TT_EINVAL;

  uint64_t v[NFIELDS] = {0};
  size_t f = 0;
  v[f++] = k != NULL ? name_hash(k->name) : 0;
  v[f++] = (uint64_t)-err; /* the largest magnitude wins */
  v[f++] = cfg != NULL ? cfg->dims : 0;
  for (unsigned d = 0; d < TT_MAX_DIMS; d++) {
    int used = cfg != NULL && d < cfg->dims;
    v[f++] = used ? cfg->global[d] : 0;
    v[f++] = used ? cfg->local[d] : 0;
    v[f++] = used ? cfg->offset[d] : 0;
  }
  v[f++] = cfg != NULL ? cfg->local_mem : 0;
  v[f++] = cfg != NULL ? cfg->local_mem_per_item : 0;
  v[f++] = extra;
  _Static_assert(NFIELDS == 15, "fields of the check");

  uint64_t both[2 * NFIELDS];
  for (size_t i = 0; i < NFIELDS; i++) {
    both[i] = v[i];
    both[NFIELDS + i] = ~v[i];
  }
  if (MPI_Allreduce(MPI_IN_PLACE, both, 2 * NFIELDS, MPI_UINT64_T, MPI_MIN,
                    comm) != MPI_SUCCESS)
    return TT_EINVAL;
  uint64_t worst = ~both[NFIELDS + 1];
  if (worst != 0)
    return worst <= (uint64_t)INT_MAX ? -(int)worst : TT_EINVAL;
  for (size_t i = 0; i < NFIELDS; i++)
    if (both[i] != ~both[NFIELDS + i])
      return TT_EINVAL;
  return 0;
}

int tt_mpi_launch(MPI_Comm comm, const tt_kernel *k, const void *args,
                  const tt_launch_config *cfg) {
  if (!mpi_ready(comm))
    return TT_EINVAL;
  int err = tt_mpi_check(comm, k, cfg);
  if (err != 0)
    return err;
  if (k == NULL || k->chunk == NULL)
    return TT_EINVAL; /* the same on every rank: the names agreed */
  tt_mpi_part part;
  err = tt_mpi_own(comm, cfg, TT_MPI_DIM_SLOWEST, &part);
  if (err != 0 || part.count == 0)
    return err;
  return tt_launch(k, args, &part.cfg);
}
