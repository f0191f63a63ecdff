/* teams::mpi: the rank tier's protocol, apart from MPI (internal).
 *
 * tier.c runs one rank's loop over blocks of units held in packed
 * [front, back) words (launcher/steal.h's layout); how a word is read and
 * compared-and-swapped is the caller's: steal.c binds it to an MPI window,
 * tests/test-rank-tier.c to C11 atomics in one process, so the protocol runs
 * under ThreadSanitizer and in a deterministic single-thread scene. */
#ifndef TEAMS_MPI_TIER_H
#define TEAMS_MPI_TIER_H

#include <stddef.h>
#include <stdint.h>

#define TT__TIER_PACK(f, b) (((uint64_t)(f) << 32) | (uint64_t)(b))
#define TT__TIER_FRONT(w) ((uint32_t)((w) >> 32))
#define TT__TIER_BACK(w) ((uint32_t)(w))
#define TT__TIER_MAX_UNITS ((uint64_t)UINT32_MAX - 1)

typedef struct tt__tier {
  int self;       /* this rank */
  int nvictims;   /* entries of order */
  const int *order; /* the other ranks: those of this node first */
  int local_end;    /* order[0, local_end) are on this node */
  /* Word r: an atomic read, and a CAS from *expected to desired that on
   * failure leaves the value found in *expected. */
  uint64_t (*read)(void *words, int r);
  int (*cas)(void *words, int r, uint64_t *expected, uint64_t desired);
  void *words;
  void (*run)(void *ctx, uint32_t unit); /* runs one unit */
  void *ctx;
  size_t steals_node, steals_other; /* out */
} tt__tier;

/* Runs this rank's block from the front, then steals (this node's ranks
 * first) and drains what it took, until a full scan finds every other block
 * empty.  Every word must hold its initial block before any rank calls it. */
void tt__tier_run(tt__tier *t);

#endif
