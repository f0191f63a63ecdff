/* The team's tree (docs/protocol.md items 37-42, launcher/fork.c), forced
 * low on a team
 * larger than the machine: regions of 3 participants or more are handed on
 * along a binary tree (a team of 7: the holder, leaders 1 and 4 with
 * members 2-3 and 5-6), with every worker asleep before every other round
 * (TEAMS_SPIN_US=0 sleeps at once), so sleeping leaders are woken and wake
 * their members.  Every static chunk runs once on its participant, every
 * greedy chunk once, and an each region runs chunk 0 and no chunk twice; a
 * region launched from a chunk runs serially on that participant (the busy
 * rule); the generation wrap's resync goes along the tree too.  The ctest
 * variants *-tree and *-chain (VARIANTS in tests/CMakeLists.txt) run the
 * team, stress and wrap tests with the tree forced as well.  Links the
 * static library for tt__team_run's modes (WHITEBOX). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "team-internal.h"
#include "teams/team.h"

#define MAXC 64

#include "team-util.h"

/* A chunk that launches a region of its own: serial, on this participant. */
static void nested_chunk(void *p, size_t c) {
  count_ctx *x = p;
  count_chunk_together(x, c);
  int me = tt_participant();
  count_ctx *inner = x + 1 + c;
  int par = -1;
  reset(inner, 4);
  cr_assert_eq(tt__team_run(count_chunk, inner, 4, 4, TT__MODE_STATIC, &par), 0);
  cr_assert_eq(par, 0);
  for (size_t i = 0; i < 4; i++)
    cr_assert_eq(atomic_load(&inner->part[i]), 0); /* serial: participant 0 */
  cr_assert_eq(tt_participant(), me);
}

static void team_of(const char *n, const char *k) {
  setenv("TEAMS_NUM_THREADS", n, 1);
  setenv("TEAMS_TREE_MIN", "3", 1);
  /* the regions here are cheap: the way's choice would run them on the
   * caller alone (launcher/way.c) */
  setenv("TEAMS_RUN", "team", 1);
  setenv("TEAMS_TREE_K", k, 1);
  setenv("TEAMS_SPIN_US", "0", 1);
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  cr_assert_eq(tt_team_size(), (size_t)atoi(n));
  cr_assert_eq(tt__team_tree_min(), 3);
}

static void rounds(size_t size, int nrounds) {
  count_ctx *x = calloc(1 + MAXC, sizeof *x);
  cr_assert_not_null(x);
  for (int round = 0; round < nrounds; round++) {
    if (round % 2)
      sleep_ms(2); /* every worker asleep */
    for (size_t p = 2; p <= size; p++) {
      reset(x, p);
      int par = 0;
      /* chunk 0 waits for the others: every participant comes in time and
       * runs its own chunk (docs/protocol.md item 10) */
      cr_assert_eq(tt__team_run(round % 3 ? count_chunk_together : nested_chunk, x, p,
                                p, TT__MODE_STATIC, &par), 0);
      cr_assert_eq(par, 1);
      expect_once(x, p, p);
      for (size_t c = 0; c < p; c++)
        cr_assert_eq(atomic_load(&x->part[c]), (int)c,
                     "p=%zu: static chunk %zu on participant %d", p, c,
                     atomic_load(&x->part[c]));
      reset(x, 50);
      cr_assert_eq(tt__team_run(count_chunk, x, 50, p, TT__MODE_GREEDY, &par), 0);
      expect_once(x, 50, p);
      reset(x, p);
      cr_assert_eq(tt__team_run(count_chunk, x, p, p, TT__MODE_EACH, &par), 0);
      cr_assert_eq(atomic_load(&x->runs[0]), 1);
      for (size_t c = 1; c < p; c++)
        cr_assert_leq(atomic_load(&x->runs[c]), 1);
    }
  }
  free(x);
}

Test(tree, binary_tree_of_seven, .timeout = 120) {
  team_of("7", "2");
  rounds(7, 40);
}

Test(tree, chain_of_five, .timeout = 120) {
  team_of("5", "1");
  rounds(5, 40);
}

/* The resync before the generation wraps is a static region on every
 * worker: along the tree, every worker must still see its word. */
Test(tree, wraps, .timeout = 120) {
  team_of("6", "2");
  for (int i = 0; i < 100; i++) {
    cr_assert_eq(tt__team_skip_to_wrap((uint32_t)(i % 3)), (uint32_t)(i % 3));
    if (i % 4 == 0)
      sleep_ms(1);
    rounds(6, 1);
  }
}

Test(tree, shutdown_restart, .timeout = 120) {
  for (int i = 0; i < 20; i++) {
    team_of(i % 2 ? "6" : "4", i % 3 ? "2" : "3");
    rounds(tt_team_size(), 2);
  }
  cr_assert_eq(tt_team_shutdown(), 0);
}
