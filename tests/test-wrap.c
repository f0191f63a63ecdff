/* The team's generation wrap (docs/protocol.md items 16-18, launcher/fork.c).
 *
 * Generations are 29 bits and grow by one per region; before they wrap the
 * holder runs a resync, an empty static region on every worker, whose
 * generation alternates between 1 and 2.  Reaching a wrap takes 2^29
 * regions, so these tests move the counter to just before it with the
 * internal tt__team_skip_to_wrap (which is why this binary links the
 * static library) and then check, across one or many wraps, that every
 * region runs each chunk exactly once on the participants it names: with a
 * worker left out of the regions around the wrap, with workers asleep when
 * the resync comes (TEAMS_SPIN_US=0), in sentinel mode, and when the wrap
 * falls on the shutdown's own go word.  A lost region shows as a hang (the
 * static region waits for its worker): the tests' timeout catches it.
 *
 * The tests set TEAMS_RUN=team: their regions are empty, and the way's
 * choice (launcher/way.c) would run them on the caller alone.
 *
 * The model (launcher/team.pml, tests/model-check.sh) checks the protocol
 * itself with small generation counters, and that both a wrap without a
 * resync and resyncs that all take one generation lose a region. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "team-internal.h"
#include "teams/team.h"

#define MAX_M 64
#define GENS ((1u << 29) - 1) /* generations in a round, 3 .. 2^29 - 1 */

typedef struct region {
  _Atomic unsigned runs[MAX_M];
  _Atomic int where[MAX_M];
  _Atomic unsigned started; /* chunks begun */
  unsigned wait;            /* chunk 0 waits until this many others began */
} region;

static void count(void *ctx, size_t c) {
  region *r = ctx;
  atomic_fetch_add(&r->started, 1);
  if (c == 0) /* every participant comes in time, or the test hangs */
    while (atomic_load(&r->started) < r->wait + 1)
      sched_yield();
  atomic_fetch_add(&r->runs[c], 1);
  atomic_store(&r->where[c], tt_participant());
}

/* Runs m chunks on p participants and checks them: each exactly once, and
 * chunk c on participant c when the region is static and ran in parallel
 * (the team is this test's alone, so it always does).  In a static region
 * chunk 0, the holder's, waits until every other chunk began: a worker
 * that missed its region shows as a hang, not as a chunk the holder took
 * over for it (protocol 10). */
static void launch(size_t m, size_t p) {
  region r;
  memset(&r, 0, sizeof r);
  r.wait = m == p ? (unsigned)p - 1 : 0;
  cr_assert_eq(tt_foreach_chunk(count, &r, m, p), 0);
  for (size_t c = 0; c < m; c++) {
    cr_assert_eq(atomic_load(&r.runs[c]), 1, "chunk %zu of (m %zu, p %zu) ran %u times",
                 c, m, p, atomic_load(&r.runs[c]));
    if (m == p)
      cr_assert_eq(atomic_load(&r.where[c]), (int)c,
                   "static chunk %zu ran on participant %d", c,
                   atomic_load(&r.where[c]));
  }
}

static void sleep_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&t, NULL);
}

static void team_of(const char *n, const char *spin_us, const char *idle) {
  setenv("TEAMS_NUM_THREADS", n, 1);
  setenv("TEAMS_SPIN_US", spin_us, 1);
  setenv("TEAMS_RUN", "team", 1);
  if (idle)
    setenv("TEAMS_IDLE", idle, 1);
  else
    unsetenv("TEAMS_IDLE");
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_start(), 0);
  cr_assert_eq(tt_team_size(), (size_t)atoi(n));
}

/* One wrap: a worker is named in a static region, then left out of every
 * region until after the wrap; then a static region names it again. */
static void wrap_once(size_t size) {
  launch(size, size); /* every worker sees a static word */
  cr_assert_eq(tt__team_skip_to_wrap(3), 3);
  for (int i = 0; i < 6; i++) /* the wrap falls inside these */
    launch(i % 2 ? 16 : 2, 2);  /* greedy and static, workers >= 2 left out */
  uint32_t left = tt__team_skip_to_wrap(UINT32_MAX);
  cr_assert(left > GENS - 3 - 16, "no wrap: %u generations left", left);
  launch(size, size);
  launch(40, size);
}

Test(wrap, one_wrap_worker_left_out, .timeout = 120) {
  team_of("3", "100", NULL);
  wrap_once(3);
}

/* Many wraps in a row, one region per round: every region follows a resync,
 * and the resyncs alternate between their two generations.  A worker that
 * only the resyncs name must notice each of them. */
Test(wrap, back_to_back_wraps, .timeout = 120) {
  team_of("3", "100", NULL);
  for (int round = 0; round < 200; round++) {
    cr_assert_eq(tt__team_skip_to_wrap(0), 0);
    switch (round % 4) {
    case 0: launch(2, 2); break;
    case 1: launch(3, 3); break;
    case 2: launch(50, 2); break;
    default: launch(50, 3); break;
    }
  }
}

/* Workers asleep when the resync comes: it wakes them like any region. */
Test(wrap, sleeping_workers, .timeout = 120) {
  team_of("4", "0", NULL);
  for (int round = 0; round < 20; round++) {
    launch(4, 4);
    cr_assert_eq(tt__team_skip_to_wrap(1 + round % 3), 1 + (uint32_t)(round % 3));
    sleep_us(2000); /* every worker asleep */
    for (int i = 0; i < 4; i++)
      launch(i % 2 ? 4 : 9, i < 2 ? 2 : 4);
  }
}

Test(wrap, sentinel, .timeout = 120) {
  team_of("3", "0", "sentinel");
  for (int round = 0; round < 50; round++) {
    cr_assert_eq(tt__team_skip_to_wrap(1), 1);
    if (round % 5 == 0)
      sleep_us(1000);
    launch(round % 2 ? 3 : 2, round % 2 ? 3 : 2);
    launch(30, 3);
  }
}

/* The shutdown's go word is the one after the last region: when that is
 * the wrap, the shutdown runs the resync first.  The team then starts again
 * and works. */
Test(wrap, at_shutdown, .timeout = 120) {
  team_of("3", "100", NULL);
  for (int cycle = 0; cycle < 20; cycle++) {
    launch(3, 3);
    cr_assert_eq(tt__team_skip_to_wrap(1), 1);
    launch(2, 2); /* the last generation; the shutdown's word wraps */
    cr_assert_eq(tt__team_skip_to_wrap(UINT32_MAX), 0);
    cr_assert_eq(tt_team_shutdown(), 0);
    cr_assert_eq(tt_team_start(), 0);
    launch(3, 3);
    launch(20, 3);
  }
}

/* The idle accounting: once every worker sleeps, the team counts none
 * awake.  Workers that sleep at once (spin 0) while the team is still
 * creating the others must not be counted awake for good: a count left too
 * high reads as an overcommitted team, whose workers then sleep after every
 * region (seen on a 16-CPU machine: 30 us per empty region instead of 2.5). */
Test(wrap, awake_count_settles_to_zero, .timeout = 60) {
  for (int round = 0; round < 5; round++) {
    team_of("8", "0", NULL);
    for (int i = 0; i < 3; i++)
      launch(8, 8);
    size_t awake = 0;
    for (int t = 0; t < 400; t++) { /* up to 2 s for the last to sleep */
      awake = tt__team_awake();
      if (awake == 0)
        break;
      struct timespec ts = {0, 5000000};
      nanosleep(&ts, NULL);
    }
    cr_assert_eq(awake, 0, "round %d: %zu workers counted awake while all sleep",
                 round, awake);
  }
}
