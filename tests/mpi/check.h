/* What the MPI tests share.  Their check: not Criterion, whose runner forks
 * each test (an MPI rank must stay one process).  A failed CHECK prints the
 * rank and the place and counts; the test's main returns the failures.  And
 * the global NDRange's shape, which their kernels use to find an item's and
 * a group's linear index in the whole grid. */
#ifndef TT_TESTS_MPI_CHECK_H
#define TT_TESTS_MPI_CHECK_H

#include <stdio.h>

#include <teams/launch.h>

static int failures, rank, nranks;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);           \
      fprintf(stderr, __VA_ARGS__);                                            \
      fputc('\n', stderr);                                                     \
      failures++;                                                              \
    }                                                                          \
  } while (0)

/* The global grid of a resolved launch: sizes, offsets, local sizes and
 * group counts per dimension. */
typedef struct grid {
  size_t g[3], off[3], local[3], groups[3];
} grid;

static inline grid grid_of(const tt_ndrange *nd) {
  grid r;
  for (unsigned d = 0; d < 3; d++) {
    r.g[d] = nd->global[d];
    r.off[d] = nd->offset[d];
    r.local[d] = nd->local[d];
    r.groups[d] = nd->groups[d];
  }
  return r;
}

#endif
