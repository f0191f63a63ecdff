/* Tests of the one schedule path (launcher/range.c, launcher/scratch.c):
 * grain 0 takes tt__range_default_grain, and tt_launch cuts its groups
 * exactly as tt_foreach_range does; the balanced block split; a serial range
 * is a serial region; the per-thread scratch buffers.  White-box (WHITEBOX in
 * tests/CMakeLists.txt: links the static library).  Nothing here measures time. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "range.h"
#include "team-internal.h"
#include "teams/launch.h"
#include "teams/team.h"

static const tt_schedule schedules[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY,
                                        TT_SCHED_STEAL, TT_SCHED_AUTO};
#define NSCHED (sizeof schedules / sizeof schedules[0])

Test(schedule, default_grain_per_schedule) {
  /* static and auto: 1 (auto coarsens its own steal units). */
  cr_expect_eq(tt__range_default_grain(TT_SCHED_STATIC, 1000000, 4), 1);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_AUTO, 1000000, 4), 1);
  /* greedy and steal: about 64 chunks per participant, rounded up. */
  cr_expect_eq(tt__range_default_grain(TT_SCHED_GREEDY, 10000, 2), 79);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_STEAL, 10000, 2), 79);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_GREEDY, 128, 2), 1);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_STEAL, 5, 8), 1);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_STEAL, 0, 8), 1);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_GREEDY, 100, 0), 2);
  /* No overflow at the extremes. */
  cr_expect_geq(tt__range_default_grain(TT_SCHED_GREEDY, SIZE_MAX, SIZE_MAX), 1);
  cr_expect_eq(tt__range_default_grain(TT_SCHED_STEAL, SIZE_MAX, 1),
               SIZE_MAX / 64 + 1);
}

Test(schedule, block_split_is_balanced_and_covers) {
  for (size_t n = 0; n < 40; n++)
    for (size_t p = 1; p < 12; p++) {
      size_t next = 0;
      for (size_t c = 0; c < p; c++) {
        size_t b, e;
        tt__block(n, p, c, &b, &e);
        cr_assert_eq(b, next, "n %zu p %zu block %zu starts at %zu", n, p, c, b);
        cr_assert(e - b == n / p || e - b == n / p + 1);
        cr_assert((e - b == n / p + 1) == (c < n % p), "longer blocks first");
        next = e;
      }
      cr_assert_eq(next, n);
    }
}

/* The subranges one call runs, in a table indexed by their begin. */
typedef struct cuts {
  size_t n;
  _Atomic size_t *len; /* [n]: length of the subrange starting there, or 0 */
  _Atomic size_t calls;
  _Atomic size_t bad; /* subranges out of bounds or run twice */
} cuts;

/* Runs on the team's workers: no assertion here, the caller checks bad. */
static void record(cuts *c, size_t b, size_t e) {
  size_t zero = 0;
  if (!(b < e && e <= c->n) ||
      !atomic_compare_exchange_strong(&c->len[b], &zero, e - b))
    atomic_fetch_add(&c->bad, 1);
  atomic_fetch_add(&c->calls, 1);
}

static void range_f(void *ctx, size_t b, size_t e) { record(ctx, b, e); }

static void chunk_f(const void *args, const tt_ndrange *nd, size_t b, size_t e,
                    void *local) {
  (void)nd;
  (void)local;
  record((cuts *)args, b, e);
}

static void check_cover(const cuts *c) {
  cr_assert_eq(atomic_load(&c->bad), 0, "subranges out of bounds or run twice");
  size_t at = 0;
  while (at < c->n) {
    size_t l = atomic_load(&c->len[at]);
    cr_assert_neq(l, 0, "index %zu not covered", at);
    at += l;
  }
  cr_assert_eq(at, c->n);
}

/* Greedy with the default grain cuts the range into ceil(n / grain) chunks
 * of the default grain; through tt_launch, the groups are cut the same way:
 * the launcher has no grain default of its own. */
Test(schedule, launch_and_range_cut_alike) {
  const size_t n = 10000;
  size_t p = tt_team_size();
  size_t grain = tt__range_default_grain(TT_SCHED_GREEDY, n, p);
  size_t want = p == 1 ? 1 : n / grain + (n % grain != 0);
  static _Atomic size_t len_r[10000], len_l[10000];
  cuts r = {n, len_r, 0, 0}, l = {n, len_l, 0, 0};
  cr_assert_eq(tt_foreach_range(range_f, &r, n, 0, p, TT_SCHED_GREEDY), 0);
  tt_kernel k = {chunk_f, "cuts"};
  tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {1},
                          .schedule = TT_SCHED_GREEDY};
  cr_assert_eq(tt_launch(&k, &l, &cfg), 0);
  check_cover(&r);
  check_cover(&l);
  cr_expect_eq(atomic_load(&r.calls), want);
  cr_expect_eq(atomic_load(&l.calls), want);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(atomic_load(&len_r[i]), atomic_load(&len_l[i]),
                 "range and launch cut differently at %zu", i);
}

/* Every schedule with grain 0 runs every index exactly once. */
Test(schedule, grain_zero_covers_every_schedule) {
  static _Atomic size_t len[4099];
  for (size_t s = 0; s < NSCHED; s++)
    for (size_t n = 1; n <= 4099; n = n * 3 + 2) {
      memset(len, 0, sizeof len);
      cuts c = {n, len, 0, 0};
      cr_assert_eq(tt_foreach_range(range_f, &c, n, 0, 8, schedules[s]), 0);
      check_cover(&c);
    }
}

static void participant_f(void *ctx, size_t b, size_t e) {
  (void)b;
  (void)e;
  *(int *)ctx = tt_participant();
}

/* A range that runs as one call is a serial region: participant 0, so that
 * a launch from it knows it is nested and leaves the thread's local-memory
 * buffer to the caller. */
Test(schedule, serial_range_is_a_serial_region) {
  int who = -2;
  cr_assert_eq(tt_foreach_range(participant_f, &who, 100, 1, 1, TT_SCHED_STATIC), 0);
  cr_expect_eq(who, 0, "p == 1");
  who = -2;
  cr_assert_eq(tt_foreach_range(participant_f, &who, 10, 10, 4, TT_SCHED_AUTO), 0);
  cr_expect_eq(who, 0, "one grain");
  cr_expect_eq(tt_participant(), -1);
}

Test(scratch, kinds_are_separate_and_grow) {
  char *a = tt__scratch(TT__SCRATCH_LOCAL, 100);
  char *b = tt__scratch(TT__SCRATCH_STEAL, 100);
  char *c = tt__scratch(TT__SCRATCH_DRIVER, 100);
  cr_assert(a && b && c);
  cr_expect(a != b && b != c && a != c);
  cr_expect_eq((uintptr_t)a % 128, 0);
  memset(a, 0xab, 100);
  memset(b, 0xcd, 100);
  /* Up to the size it has, a kind returns the same buffer, contents kept. */
  cr_expect_eq(tt__scratch(TT__SCRATCH_LOCAL, 4096), a);
  cr_expect_eq((unsigned char)a[99], 0xab);
  char *a2 = tt__scratch(TT__SCRATCH_LOCAL, 1 << 20);
  cr_assert_not_null(a2);
  cr_expect_eq((uintptr_t)a2 % 128, 0);
  memset(a2, 1, 1 << 20);
  cr_expect_eq((unsigned char)b[99], 0xcd, "growing one kind left the others");
  cr_expect_eq(tt__scratch(TT__SCRATCH_LOCAL, 10), a2);
  cr_expect_null(tt__scratch(TT__SCRATCH_KINDS, 10));
  cr_expect_null(tt__scratch((tt__scratch_kind)-1, 10));
  /* Out of memory: NULL, and the old buffer stays. */
  cr_expect_null(tt__scratch(TT__SCRATCH_LOCAL, SIZE_MAX - 64));
  cr_expect_eq(tt__scratch(TT__SCRATCH_LOCAL, 1 << 20), a2);
}
