/* A program outside the project, built against an installed teams (its CMake
 * package, or pkg-config and the static library) by tests/consumer/check.sh:
 * one greedy region, and every chunk must have run exactly once.  It prints
 * "version: X.Y.Z", which must be its header's, its library's and (built
 * by CMake, TT_PACKAGE_VERSION) the CMake package's; check.sh compares it
 * with the installed teams.pc. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <teams/errors.h>
#include <teams/team.h>
#include <teams/version.h>

enum { CHUNKS = 1000 };
static atomic_int ran[CHUNKS];

static void chunk(void *ctx, size_t c) {
  (void)ctx;
  atomic_fetch_add_explicit(&ran[c], 1, memory_order_relaxed);
}

int main(void) {
  if (tt_version() != TT_VERSION ||
      strcmp(tt_version_string(), TT_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header %s, library %s\n", TT_VERSION_STRING,
            tt_version_string());
    return 1;
  }
#ifdef TT_PACKAGE_VERSION
  if (strcmp(TT_PACKAGE_VERSION, TT_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: CMake package %s, header %s\n",
            TT_PACKAGE_VERSION, TT_VERSION_STRING);
    return 1;
  }
#endif
  printf("version: %s\n", tt_version_string());
  int rc = tt_foreach_chunk(chunk, NULL, CHUNKS, 4);
  if (rc != 0) {
    fprintf(stderr, "consumer: tt_foreach_chunk: %s\n", tt_strerror(rc));
    return 1;
  }
  for (int c = 0; c < CHUNKS; c++) {
    if (atomic_load(&ran[c]) != 1) {
      fprintf(stderr, "consumer: chunk %d ran %d times\n", c, atomic_load(&ran[c]));
      return 1;
    }
  }
  printf("consumer: %d chunks, each ran once\n", CHUNKS);
  return tt_team_shutdown() == 0 ? 0 : 1;
}
