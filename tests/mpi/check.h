/* The MPI tests' check: not Criterion, whose runner forks each test (an MPI
 * rank must stay one process).  A failed CHECK prints the rank and the place
 * and counts; the test's main returns the failures. */
#ifndef TT_TESTS_MPI_CHECK_H
#define TT_TESTS_MPI_CHECK_H

#include <stdio.h>

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

#endif
