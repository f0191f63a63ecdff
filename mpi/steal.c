/* teams: ranks as the outermost steal tier.
 *
 * ---------------------------------------------------------------------------
 * Protocol
 * ---------------------------------------------------------------------------
 * The same block protocol as the team's steal schedule (launcher/steal.c),
 * one level up: a block per rank instead of per participant, and the words in
 * an MPI window instead of a shared array.  The global NDRange's slices (the
 * groups with one id along the slowest dimension) are cut into `units` units
 * of `grain` slices; rank r starts with the block of its static part, and
 * word r of the window, [front, back) packed into one 64-bit word with front
 * in the high half (launcher/steal.h's layout), is the whole state of that
 * block: a unit is unclaimed exactly while it lies in [front, back) of some
 * rank's word.
 *
 * The loop itself is mpi/tier.c, free of MPI (tests/test-rank-tier.c runs it
 * on threads); this file binds its words to the window.  Each rank writes its
 * own initial word (MPI_REPLACE) before a barrier; after it, who writes which
 * word (every write is MPI_Compare_and_swap, every read
 * MPI_Fetch_and_op(MPI_NO_OP), each completed by MPI_Win_flush):
 *   word r  owner r:  CAS(front, back -> front + 1, back) to claim the unit at
 *                     front, then runs it with its team (one tt_launch);
 *                     CAS(empty -> stolen units) to republish what it stole,
 *                     only while its own block is empty;
 *           thief t:  CAS(front, back -> front, back - q) to take the last q
 *                     units, q = max(1, (back - front) / 4).
 * The owner claims with a CAS, not a fetch-add as in the team, because MPI's
 * default accumulate_ops (same_op_no_op) promises atomicity between
 * concurrent operations on one location only for one operation besides
 * MPI_NO_OP; a CAS per unit costs nothing beside the unit's launch.
 *
 * Why no unit runs twice, why none is lost: as in the team's schedule
 * (docs/protocol.md items 26-28, kept in launcher/steal.c).  Every claim is
 * one CAS on the word that holds the unit, and succeeds only if the word
 * still holds the value the claim was computed from; a republish CASes an
 * empty word that only its owner can change.  A rank returns only after
 * its own block came up empty and a full scan then saw every other word
 * empty; after that only owner j can refill word j, and it drains it before
 * it returns.  No startup protection or rescue is needed: every word is
 * written before a barrier that precedes all steals, and a rank that starts
 * late loses only what was stolen from it.  The window is freed
 * collectively, so a rank's call returns when every rank's work is done.
 *
 * Victim order and the crossing rule: first the other ranks of the thief's
 * node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), cyclically from itself,
 * and only when that pass took nothing the ranks of other nodes; after a
 * steal the next scan starts at home again.  When every rank shares one node
 * the window is MPI_Win_allocate_shared (Open MPI's osc/sm then does the
 * atomics on the shared page, with no progress needed from the victim);
 * otherwise MPI_Win_allocate.
 *
 * Only the calling thread calls MPI; the team's workers run the units.
 * Rejected for now: Go's back-off before stealing from a running owner (the
 * owner's state would be one more word per rank; units are long here). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "teams/mpi.h"
#include "mpi-internal.h"
#include "tier.h"

typedef struct region {
  MPI_Win win;
  int rank, size;
  int *order;    /* [size - 1] victims: this node's first */
  int local_end; /* order[0, local_end) are on this node */
  const tt_kernel *k;
  const void *args;
  tt_launch_config cfg; /* the global launch, local resolved */
  unsigned dim;
  size_t slices, per_slice, grain;
  tt_mpi_steal *st;
  int err;
} region;

static uint64_t word_read(void *words, int target) {
  region *R = words;
  uint64_t none = 0, out = 0;
  MPI_Fetch_and_op(&none, &out, MPI_UINT64_T, target, 0, MPI_NO_OP, R->win);
  MPI_Win_flush(target, R->win);
  return out;
}

static int word_cas(void *words, int target, uint64_t *expected,
                    uint64_t desired) {
  region *R = words;
  uint64_t found = 0;
  MPI_Compare_and_swap(&desired, expected, &found, MPI_UINT64_T, target, 0,
                       R->win);
  MPI_Win_flush(target, R->win);
  if (found == *expected)
    return 1;
  *expected = found;
  return 0;
}

static void run_unit(void *ctx, uint32_t u) {
  region *R = ctx;
  size_t s0 = (size_t)u * R->grain;
  size_t s1 = R->slices - s0 > R->grain ? s0 + R->grain : R->slices;
  unsigned d = R->dim;
  size_t L = R->cfg.local[d], o = R->cfg.offset[d], g = R->cfg.global[d];
  tt_launch_config c = R->cfg;
  size_t begin = s0 * L, end = s1 == R->slices ? g : s1 * L;
  c.offset[d] = o + begin;
  c.global[d] = end - begin;
  if (c.local[d] > c.global[d])
    c.local[d] = c.global[d]; /* only the last, smaller group */
  int err = tt_launch(R->k, R->args, &c);
  if (err != 0 && R->err == 0)
    R->err = err;
  R->st->groups += (s1 - s0) * R->per_slice;
  R->st->units++;
  if (R->st->ran != NULL)
    R->st->ran(R->st->ctx, s0 * R->per_slice, s1 * R->per_slice);
}
/* Node ids (the comm rank of each node's first rank) and whether every rank
 * shares one node. */
static int node_order(MPI_Comm comm, region *R, int *all_shared) {
  MPI_Comm node;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                          &node) != MPI_SUCCESS)
    return TT_EINVAL;
  int nsize, leader = R->rank;
  MPI_Comm_size(node, &nsize);
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  *all_shared = nsize == R->size;
  int *leaders = malloc(sizeof(int) * (size_t)R->size);
  R->order = malloc(sizeof(int) * (size_t)R->size);
  int ok = leaders != NULL && R->order != NULL;
  /* Every rank must take part in the collective even without memory. */
  int dummy = 0;
  MPI_Allgather(&leader, 1, MPI_INT, leaders != NULL ? leaders : &dummy, 1,
                MPI_INT, comm);
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    free(leaders);
    return TT_ENOMEM;
  }
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 1; i < R->size; i++) {
      int v = (R->rank + i) % R->size;
      if ((leaders[v] == leader) == (pass == 0))
        R->order[n++] = v;
    }
    if (pass == 0)
      R->local_end = n;
  }
  free(leaders);
  return 0;
}

int tt_mpi_launch_steal(MPI_Comm comm, const tt_kernel *k, const void *args,
                        const tt_launch_config *cfg, tt_mpi_steal *st) {
  if (!tt__mpi_ready(comm))
    return TT_EINVAL;
  /* The grain goes into the check (with the window kind in its top bit): a
   * NULL st must fail on every rank too. */
  uint64_t grain = st != NULL ? (uint64_t)st->grain : UINT64_MAX;
  /* The window kind too: one collective allocation for all. */
  if (st != NULL && st->separate && grain < UINT64_MAX / 2)
    grain |= UINT64_C(1) << 63;
  int err = tt__mpi_check(comm, k, cfg, grain);
  if (err != 0)
    return err;
  if (st == NULL || k == NULL)
    return TT_EINVAL; /* then on every rank: the check compared both */

  region R;
  memset(&R, 0, sizeof R);
  MPI_Comm_rank(comm, &R.rank);
  MPI_Comm_size(comm, &R.size);
  tt_mpi_part whole;
  err = tt_mpi_split(cfg, TT_MPI_DIM_SLOWEST, 0, 1, &whole);
  if (err != 0)
    return err; /* cannot differ between ranks: the check passed */
  R.k = k;
  R.args = args;
  R.cfg = whole.cfg;
  R.dim = whole.dim;
  R.slices = whole.groups;
  tt_ndrange nd;
  tt_launch_config one = whole.cfg;
  one.participants = 1;
  tt_launch_resolve(&one, &nd);
  R.per_slice = nd.ngroups / nd.groups[R.dim];
  R.st = st;
  st->groups = st->units = st->steals_node = st->steals_other = 0;

  size_t g = st->grain;
  if (g == 0) {
    size_t want = 16 * (size_t)R.size;
    g = R.slices / want + (R.slices % want != 0);
  }
  if (g == 0)
    g = 1;
  size_t units = R.slices / g + (R.slices % g != 0);
  if ((uint64_t)units > TT__TIER_MAX_UNITS)
    return TT_EOVERFLOW; /* the same on every rank */
  R.grain = g;

  int shared = 0;
  err = node_order(comm, &R, &shared);
  if (err != 0) {
    free(R.order);
    return err;
  }
  shared = shared && !st->separate;
  st->shared = shared;
  uint64_t *base = NULL;
  int rc = shared ? MPI_Win_allocate_shared(sizeof(uint64_t), sizeof(uint64_t),
                                            MPI_INFO_NULL, comm, &base, &R.win)
                  : MPI_Win_allocate(sizeof(uint64_t), sizeof(uint64_t),
                                     MPI_INFO_NULL, comm, &base, &R.win);
  if (rc != MPI_SUCCESS) {
    free(R.order);
    return TT_EINVAL;
  }

  /* The static split of the units, written before anyone steals. */
  size_t r = (size_t)R.rank, n = (size_t)R.size;
  size_t first = (units / n) * r + (r < units % n ? r : units % n);
  size_t count = units / n + (r < units % n);
  uint64_t init = TT__TIER_PACK(first, first + count), old;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, R.win);
  MPI_Fetch_and_op(&init, &old, MPI_UINT64_T, R.rank, 0, MPI_REPLACE, R.win);
  MPI_Win_flush(R.rank, R.win);
  MPI_Barrier(comm);

  tt__tier tier = {.self = R.rank, .nvictims = R.size - 1, .order = R.order,
                   .local_end = R.local_end, .read = word_read,
                   .cas = word_cas, .words = &R, .run = run_unit, .ctx = &R};
  tt__tier_run(&tier);
  st->steals_node = tier.steals_node;
  st->steals_other = tier.steals_other;

  MPI_Win_unlock_all(R.win);
  MPI_Win_free(&R.win);
  free(R.order);
  return R.err;
}
