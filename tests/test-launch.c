/* Tests of the NDRange launcher (launcher/launch.c, teams/launch.h,
 * teams/kernel.h): decomposition into groups, every id query (through the
 * probe kernel, compared element by element with the reference), the local
 * size choice, every schedule, local memory, phases as barriers, bad input,
 * nested launches and launches from several host threads.
 * Nothing here measures time: the machine is shared. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "teams/kernel.h"
#include "teams/launch.h"
#include "teams/team.h"

static const tt_schedule schedules[] = {TT_SCHED_STATIC, TT_SCHED_GREEDY,
                                        TT_SCHED_STEAL, TT_SCHED_AUTO};
#define NSCHED (sizeof schedules / sizeof schedules[0])

static size_t total_items(const tt_ndrange *nd) {
  return nd->global[0] * nd->global[1] * nd->global[2];
}

/* Compare every field of every record; report the first few mismatches. */
static size_t probe_mismatches(const tt_probe_rec *got, const tt_probe_rec *want,
                               size_t n, const char *what) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    if (memcmp(&got[i], &want[i], sizeof got[i]) == 0)
      continue;
    if (bad++ < 4) {
      const uint64_t *g = (const uint64_t *)&got[i], *w = (const uint64_t *)&want[i];
      for (size_t f = 0; f < sizeof got[i] / sizeof(uint64_t); f++)
        if (g[f] != w[f])
          cr_log_error("%s: item %zu field %zu: got %llu want %llu", what, i, f,
                       (unsigned long long)g[f], (unsigned long long)w[f]);
    }
  }
  return bad;
}

/* Launch the probe over cfg and check every record against the reference. */
static void check_probe(tt_launch_config cfg, const char *what) {
  tt_ndrange nd;
  cr_assert_eq(tt_launch_resolve(&cfg, &nd), 0, "%s: resolve", what);
  size_t n = total_items(&nd);
  tt_probe_rec *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
  cr_assert(got && want);
  size_t team = tt_team_size();
  size_t *runs = calloc(team, sizeof *runs);
  cfg.groups_run = runs;
  cfg.groups_run_len = team;
  tt_probe_args a = {got};
  cr_assert_eq(tt_k_probe_launch(&a, &cfg), 0, "%s: launch", what);
  tt_ref_probe(nd.dims, nd.global, nd.local, nd.offset, want);
  size_t bad = probe_mismatches(got, want, n, what);
  cr_assert_eq(bad, 0, "%s: %zu of %zu items wrong", what, bad, n);
  size_t sum = 0;
  for (size_t i = 0; i < team; i++)
    sum += runs[i];
  cr_assert_eq(sum, nd.ngroups, "%s: groups run %zu of %zu", what, sum, nd.ngroups);
  free(runs);
  free(got);
  free(want);
}

Test(launch, probe_every_shape_and_schedule) {
  /* dims, global, local (0: chosen), offset: uniform and remainder groups in
   * each dimension, groups of one item, one group, offsets. */
  static const struct {
    unsigned dims;
    size_t g[3], l[3], o[3];
  } shapes[] = {
      {1, {1}, {1}, {0}},
      {1, {17}, {4}, {0}},
      {1, {64}, {16}, {5}},
      {1, {1000}, {0}, {0}},
      {1, {1000}, {1000}, {7}},
      {1, {1001}, {1}, {0}},
      {2, {13, 7}, {4, 3}, {2, 100}},
      {2, {16, 16}, {8, 8}, {0, 0}},
      {2, {33, 5}, {0, 0}, {1, 1}},
      {2, {1, 9}, {1, 2}, {0, 3}},
      {3, {5, 6, 7}, {2, 3, 4}, {1, 2, 3}},
      {3, {8, 8, 8}, {4, 4, 4}, {0, 0, 0}},
      {3, {9, 10, 11}, {0, 0, 0}, {0, 0, 0}},
      {3, {3, 1, 5}, {3, 1, 2}, {0, 0, 9}},
      {3, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}},
  };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (size_t k = 0; k < NSCHED; k++) {
      tt_launch_config cfg = {.dims = shapes[s].dims, .schedule = schedules[k]};
      memcpy(cfg.global, shapes[s].g, sizeof cfg.global);
      memcpy(cfg.local, shapes[s].l, sizeof cfg.local);
      memcpy(cfg.offset, shapes[s].o, sizeof cfg.offset);
      char what[64];
      snprintf(what, sizeof what, "shape %zu schedule %d", s, (int)schedules[k]);
      check_probe(cfg, what);
    }
}

Test(launch, probe_participants_and_grain) {
  size_t team = tt_team_size();
  for (size_t p = 1; p <= team + 1; p++)
    for (size_t grain = 0; grain <= 3; grain++)
      for (size_t k = 0; k < NSCHED; k++) {
        tt_launch_config cfg = {.dims = 2,
                                .global = {37, 11},
                                .local = {4, 2},
                                .offset = {3, 0},
                                .participants = p,
                                .grain = grain,
                                .schedule = schedules[k]};
        char what[80];
        snprintf(what, sizeof what, "p %zu grain %zu schedule %d", p, grain,
                 (int)schedules[k]);
        check_probe(cfg, what);
      }
}

Test(launch, unused_dimensions_are_ignored) {
  /* Garbage beyond dims must not matter: OpenCL passes only dims entries. */
  tt_launch_config cfg = {.dims = 1,
                          .global = {10, 0, 99},
                          .local = {3, 77, 0},
                          .offset = {2, 5, 5}};
  tt_ndrange nd;
  cr_assert_eq(tt_launch_resolve(&cfg, &nd), 0);
  cr_assert_eq(nd.global[1], 1);
  cr_assert_eq(nd.global[2], 1);
  cr_assert_eq(nd.local[1], 1);
  cr_assert_eq(nd.offset[2], 0);
  cr_assert_eq(nd.groups[0], 4);
  cr_assert_eq(nd.last_local[0], 1);
  cr_assert_eq(nd.ngroups, 4);
  check_probe(cfg, "unused dims");
}

Test(launch, offsets_near_the_top) {
  /* The largest id, offset + global - 1, is SIZE_MAX: legal. */
  tt_launch_config cfg = {.dims = 2,
                          .global = {5, 3},
                          .local = {2, 2},
                          .offset = {SIZE_MAX - 4, SIZE_MAX - 2}};
  check_probe(cfg, "offset at the top");
}

Test(launch, local_size_choice) {
  tt_ndrange nd;
  /* One participant: deterministic whatever the team size. */
  tt_launch_config c1 = {.dims = 1, .global = {1000000}, .participants = 1};
  cr_assert_eq(tt_launch_resolve(&c1, &nd), 0);
  cr_assert_eq(nd.local[0], TT_LOCAL_CHOOSE_MAX);
  cr_assert_eq(nd.groups[0], (1000000 + 1023) / 1024);
  cr_assert_eq(nd.last_local[0], 1000000 % 1024);

  tt_launch_config c3 = {.dims = 3, .global = {64, 64, 64}, .participants = 1};
  cr_assert_eq(tt_launch_resolve(&c3, &nd), 0);
  cr_assert_eq(nd.local[0], 64); /* dimension 0 whole first */
  cr_assert_eq(nd.local[1], 16);
  cr_assert_eq(nd.local[2], 1);
  cr_assert_eq(nd.group_items, 1024);

  /* Small ranges keep about four groups per participant. */
  tt_launch_config cs = {.dims = 1, .global = {40}, .participants = 1};
  cr_assert_eq(tt_launch_resolve(&cs, &nd), 0);
  cr_assert_eq(nd.local[0], 8);
  tt_launch_config c0 = {.dims = 2, .global = {3, 1}, .participants = 1};
  cr_assert_eq(tt_launch_resolve(&c0, &nd), 0);
  cr_assert_eq(nd.local[0], 1);
  cr_assert_eq(nd.local[1], 1);

  /* Whatever the team: a power of two (or a whole dimension), within the
   * global size, at most TT_LOCAL_CHOOSE_MAX items, local memory scaled. */
  static const size_t sizes[][3] = {{1, 1, 1},      {7, 1, 1},    {4097, 3, 1},
                                    {100, 100, 1},  {5, 1000, 3}, {2, 3, 50000},
                                    {1 << 20, 1, 1}};
  for (unsigned dims = 1; dims <= 3; dims++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      tt_launch_config c = {.dims = dims, .local_mem = 8, .local_mem_per_item = 4};
      memcpy(c.global, sizes[s], sizeof c.global);
      cr_assert_eq(tt_launch_resolve(&c, &nd), 0);
      size_t items = 1;
      for (unsigned d = 0; d < 3; d++) {
        size_t l = nd.local[d];
        cr_assert(l >= 1 && l <= nd.global[d]);
        cr_assert(l == nd.global[d] || (l & (l - 1)) == 0, "dim %u local %zu", d, l);
        items *= l;
      }
      cr_assert(items <= TT_LOCAL_CHOOSE_MAX);
      cr_assert_eq(items, nd.group_items);
      cr_assert_eq(nd.local_mem, 8 + 4 * items);
      check_probe(c, "chosen local");
    }
}

/* Participant index seen by each group, to check the static decomposition. */
typedef struct owner_args {
  int *owner; /* per group */
} owner_args;
TT_KERNEL_GROUP(k_owner, owner_args, p) { p->owner[tt_get_group_id(0)] = tt_participant(); }

Test(launch, static_blocks_are_contiguous_and_balanced) {
  /* Each participant runs its own block, strictly: the way's choice may run
   * a cheap launch on the caller alone (launcher/way.c). */
  setenv("TEAMS_RUN", "team", 1);
  size_t team = tt_team_size();
  for (size_t groups = 1; groups <= 50; groups += 7) {
    int *owner = malloc(groups * sizeof *owner);
    size_t runs[64] = {0};
    tt_launch_config cfg = {.dims = 1, .global = {groups * 3}, .local = {3},
                            .groups_run = runs, .groups_run_len = 64};
    owner_args a = {owner};
    cr_assert_eq(tt_launch(&k_owner, &a, &cfg), 0);
    size_t p = team < groups ? team : groups;
    /* In parallel, each participant ran one block: the blocks in range
     * order are the balanced split (the first groups % p one longer), and
     * which participant runs which is the team's deal (block c on
     * participant c on one node and LLC, else spread over them; memory.h),
     * but for the blocks whose participant came late, which participant 0
     * ran after its own (docs/protocol.md item 10).  A serial run (the team
     * busy) ran everything on participant 0. */
    if (runs[0] != groups) {
      size_t g = 0, on_caller = 0;
      int seen[64] = {0};
      for (size_t b = 0; b < p; b++) {
        size_t want = groups / p + (b < groups % p);
        int c = owner[g];
        cr_assert(c >= 0 && (size_t)c < p && (c == 0 || !seen[c]),
                  "groups %zu: block %zu on participant %d twice", groups, b,
                  c);
        seen[c] = 1;
        for (size_t k = 0; k < want; k++, g++)
          cr_assert_eq(owner[g], c, "groups %zu: group %zu", groups, g);
        if (c == 0)
          on_caller += want;
        else
          cr_assert_eq(runs[c], want, "groups %zu participant %d", groups, c);
      }
      cr_assert_eq(runs[0], on_caller, "groups %zu participant 0", groups);
      cr_assert_eq(g, groups);
    }
    free(owner);
  }
}

/* ---- local memory -------------------------------------------------------- */
typedef struct local_args {
  const uint32_t *in;
  uint32_t *out;
  atomic_int *misaligned;
} local_args;

/* Phase 1 writes local memory, phase 2 reads another item's slot: only a
 * barrier between them makes the reversal right. */
TT_KERNEL_GROUP(k_reverse, local_args, p) {
  uint32_t *s = tt_local_mem();
  size_t n = tt_get_local_size(0);
  if (((uintptr_t)s & 127) != 0 || tt_local_mem_size() < n * sizeof *s)
    atomic_fetch_add(p->misaligned, 1);
  TT_PHASE { s[tt_get_local_id(0)] = p->in[tt_get_global_id(0)]; }
  TT_PHASE { p->out[tt_get_global_id(0)] = s[n - 1 - tt_get_local_id(0)] ^ 0x5a5a5a5au; }
}

Test(launch, local_memory_and_barrier) {
  size_t n = 10007;
  uint32_t *in = malloc(n * 4), *out = malloc(n * 4);
  for (size_t i = 0; i < n; i++)
    in[i] = (uint32_t)(i * 2654435761u);
  static const size_t locals[] = {1, 2, 3, 64, 100, 1000, 10007};
  for (size_t li = 0; li < sizeof locals / sizeof locals[0]; li++)
    for (size_t k = 0; k < NSCHED; k++) {
      atomic_int mis = 0;
      memset(out, 0, n * 4);
      local_args a = {in, out, &mis};
      tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {locals[li]},
                              .local_mem_per_item = 4, .schedule = schedules[k]};
      cr_assert_eq(tt_launch(&k_reverse, &a, &cfg), 0);
      cr_assert_eq(atomic_load(&mis), 0);
      size_t l = locals[li];
      for (size_t i = 0; i < n; i++) {
        size_t g = i / l, base = g * l, size = n - base < l ? n - base : l;
        size_t src = base + size - 1 - (i - base);
        cr_assert_eq(out[i], in[src] ^ 0x5a5a5a5au, "local %zu item %zu", l, i);
      }
    }
  free(in);
  free(out);
}

/* Many phases in a loop: each shifts the group's values by one slot, reading
 * what the previous phase wrote. */
typedef struct shift_args {
  uint32_t *out;
  size_t rounds;
} shift_args;
TT_KERNEL_GROUP(k_shift, shift_args, p) {
  size_t n = tt_get_local_size(0);
  uint32_t *a = tt_local_mem(), *b = a + tt_get_enqueued_local_size(0);
  TT_PHASE { a[tt_get_local_id(0)] = (uint32_t)tt_get_global_id(0); }
  for (size_t r = 0; r < p->rounds; r++) {
    TT_PHASE { b[tt_get_local_id(0)] = a[(tt_get_local_id(0) + 1) % n]; }
    uint32_t *t = a;
    a = b;
    b = t;
  }
  TT_PHASE { p->out[tt_get_global_id(0)] = a[tt_get_local_id(0)]; }
}

Test(launch, phases_in_a_loop) {
  size_t n = 1000, rounds = 13;
  uint32_t *out = malloc(n * 4);
  for (size_t l = 1; l <= 64; l = l * 3 + 1) {
    shift_args a = {out, rounds};
    tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {l},
                            .local_mem_per_item = 8, .schedule = TT_SCHED_GREEDY};
    cr_assert_eq(tt_launch(&k_shift, &a, &cfg), 0);
    for (size_t i = 0; i < n; i++) {
      size_t base = i / l * l, size = n - base < l ? n - base : l;
      size_t want = base + (i - base + rounds) % size;
      cr_assert_eq(out[i], want, "local %zu item %zu", l, i);
    }
  }
  free(out);
}

/* continue and break end one item's phase, not the group or the row. */
typedef struct skip_args {
  atomic_uint *count;
} skip_args;
TT_KERNEL_GROUP(k_skip, skip_args, p) {
  unsigned *c = tt_local_mem();
  *c = 0;
  TT_PHASE {
    if (tt_get_local_id(0) % 3 == 0)
      continue;
    if (tt_get_local_id(1) % 2 == 1)
      break;
    ++*c;
  }
  TT_PHASE { ++*c; } /* every item, after the barrier */
  atomic_fetch_add(p->count, *c);
}

Test(launch, continue_and_break_end_the_item) {
  atomic_uint count = 0;
  skip_args a = {&count};
  size_t gx = 10, gy = 6;
  tt_launch_config cfg = {.dims = 2, .global = {gx, gy}, .local = {4, 3}, .local_mem = 64};
  cr_assert_eq(tt_launch(&k_skip, &a, &cfg), 0);
  unsigned want = 0;
  for (size_t y = 0; y < gy; y++)
    for (size_t x = 0; x < gx; x++) {
      size_t lx = x % 4, ly = y % 3;
      want += 1 + (lx % 3 != 0 && ly % 2 == 0);
    }
  cr_assert_eq(atomic_load(&count), want);
}

/* TT_PHASE_FIRST(n) runs exactly the items with local linear id below n,
 * once each, in every group shape (rows of a 3D group included). */
typedef struct first_args {
  size_t count;
  uint32_t *hits; /* per global linear id */
  atomic_int *wrong;
} first_args;
TT_KERNEL_GROUP(k_first, first_args, p) {
  TT_PHASE_FIRST(p->count) {
    if (tt_get_local_linear_id() >= p->count)
      atomic_fetch_add(p->wrong, 1);
    p->hits[tt_get_global_linear_id()]++;
  }
  /* Evaluated once, and with side effects where the caller puts them. */
  size_t calls = 0;
  TT_PHASE_FIRST(++calls) { (void)0; }
  if (calls != 1)
    atomic_fetch_add(p->wrong, 1);
}

Test(launch, phase_first_runs_the_first_items) {
  size_t g[3] = {7, 6, 5}, n = 7 * 6 * 5;
  uint32_t *hits = malloc(n * 4);
  static const size_t counts[] = {0, 1, 3, 4, 5, 13, 24, 59, 60, 1000};
  for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
    atomic_int wrong = 0;
    memset(hits, 0, n * 4);
    first_args a = {counts[ci], hits, &wrong};
    tt_launch_config cfg = {.dims = 3, .global = {g[0], g[1], g[2]}, .local = {4, 3, 5}};
    cr_assert_eq(tt_launch(&k_first, &a, &cfg), 0);
    cr_assert_eq(atomic_load(&wrong), 0);
    for (size_t z = 0; z < g[2]; z++)
      for (size_t y = 0; y < g[1]; y++)
        for (size_t x = 0; x < g[0]; x++) {
          size_t lx = x % 4, ly = y % 3, lz = z % 5;
          size_t sx = x < 4 ? 4 : 3, sy = 3; /* group sizes along x, y */
          size_t lin = lx + sx * (ly + sy * lz);
          uint32_t want = lin < counts[ci];
          cr_assert_eq(hits[x + g[0] * (y + g[1] * z)], want, "count %zu item %zu,%zu,%zu",
                       counts[ci], x, y, z);
        }
  }
  free(hits);
}

/* ---- bad input ------------------------------------------------------------- */
typedef struct count_args {
  atomic_size_t *items;
} count_args;
TT_KERNEL(k_count, count_args, p) { atomic_fetch_add_explicit(p->items, 1, memory_order_relaxed); }

static void expect_error(tt_launch_config cfg, int want, const char *what) {
  atomic_size_t items = 0;
  count_args a = {&items};
  tt_ndrange nd;
  cr_assert_eq(tt_launch(&k_count, &a, &cfg), want, "%s", what);
  cr_assert_eq(tt_launch_resolve(&cfg, &nd), want, "%s (resolve)", what);
  cr_assert_eq(atomic_load(&items), 0, "%s ran items", what);
}

Test(launch, bad_input_is_rejected) {
  const size_t big = SIZE_MAX / 2 + 1;
  expect_error((tt_launch_config){.dims = 0, .global = {4}}, TT_EINVAL, "dims 0");
  expect_error((tt_launch_config){.dims = 4, .global = {4, 4, 4}}, TT_EINVAL, "dims 4");
  expect_error((tt_launch_config){.dims = UINT32_MAX, .global = {4}}, TT_EINVAL, "dims huge");
  expect_error((tt_launch_config){.dims = 1, .global = {0}}, TT_EINVAL, "global 0");
  expect_error((tt_launch_config){.dims = 3, .global = {4, 4, 0}}, TT_EINVAL, "global z 0");
  expect_error((tt_launch_config){.dims = 1, .global = {4}, .local = {5}}, TT_EINVAL,
               "local > global");
  expect_error((tt_launch_config){.dims = 2, .global = {4, 4}, .local = {2, 0}}, TT_EINVAL,
               "local partly zero");
  expect_error((tt_launch_config){.dims = 1, .global = {4}, .schedule = (tt_schedule)4},
               TT_EINVAL, "unknown schedule");
  expect_error((tt_launch_config){.dims = 1, .global = {4}, .schedule = (tt_schedule)-1},
               TT_EINVAL, "negative schedule");
  expect_error((tt_launch_config){.dims = 2, .global = {big, 2}}, TT_EOVERFLOW,
               "global product");
  expect_error((tt_launch_config){.dims = 3, .global = {1 << 22, 1 << 22, 1 << 22}},
               TT_EOVERFLOW, "global product 3D");
  expect_error((tt_launch_config){.dims = 1, .global = {2}, .offset = {SIZE_MAX}},
               TT_EOVERFLOW, "offset + global");
  expect_error((tt_launch_config){.dims = 1, .global = {1024}, .local = {1024},
                                  .local_mem_per_item = SIZE_MAX / 512},
               TT_EOVERFLOW, "local memory per item");
  expect_error((tt_launch_config){.dims = 1, .global = {16}, .local = {16},
                                  .local_mem = SIZE_MAX - 8, .local_mem_per_item = 1},
               TT_EOVERFLOW, "local memory sum");

  atomic_size_t items = 0;
  count_args a = {&items};
  tt_launch_config ok = {.dims = 1, .global = {100}};
  cr_assert_eq(tt_launch(NULL, &a, &ok), TT_EINVAL);
  tt_kernel broken = {NULL, "broken"};
  cr_assert_eq(tt_launch(&broken, &a, &ok), TT_EINVAL);
  cr_assert_eq(tt_launch(&k_count, &a, NULL), TT_EINVAL);
  cr_assert_eq(tt_launch_resolve(NULL, &(tt_ndrange){0}), TT_EINVAL);
  cr_assert_eq(tt_launch_resolve(&ok, NULL), TT_EINVAL);
  cr_assert_eq(atomic_load(&items), 0);

  /* The team is still usable, in parallel. */
  for (size_t k = 0; k < NSCHED; k++) {
    ok.schedule = schedules[k];
    cr_assert_eq(tt_launch(&k_count, &a, &ok), 0);
  }
  cr_assert_eq(atomic_load(&items), 100 * NSCHED);
}

Test(launch, out_of_memory_is_reported) {
  /* Local memory no allocator can give: the launch fails cleanly. */
  atomic_size_t items = 0;
  count_args a = {&items};
  tt_launch_config cfg = {.dims = 1, .global = {64}, .local = {8},
                          .local_mem = SIZE_MAX / 4};
  cr_assert_eq(tt_launch(&k_count, &a, &cfg), TT_ENOMEM);
  cr_assert_eq(atomic_load(&items), 0);
  cfg.local_mem = 4096;
  cr_assert_eq(tt_launch(&k_count, &a, &cfg), 0);
  cr_assert_eq(atomic_load(&items), 64);
}

/* ---- nesting and concurrency ----------------------------------------------- */
typedef struct inner_args {
  pthread_t outer;
  atomic_int *wrong_thread;
  uint32_t *out;
} inner_args;
TT_KERNEL_GROUP(k_inner, inner_args, p) {
  uint32_t *s = tt_local_mem();
  if (!pthread_equal(pthread_self(), p->outer))
    atomic_fetch_add(p->wrong_thread, 1);
  TT_PHASE { s[tt_get_local_id(0)] = 3 * (uint32_t)tt_get_global_id(0); }
  TT_PHASE { p->out[tt_get_global_id(0)] += s[tt_get_local_id(0)]; }
}

typedef struct outer_args {
  uint32_t *out;   /* 64 per outer group */
  atomic_int *wrong_thread, *bad_local, *failed;
  tt_schedule inner_schedule;
} outer_args;
/* Each group fills its local memory, launches an inner kernel (with local
 * memory of its own) over its slice of out, then checks its local memory
 * survived the inner launch. */
TT_KERNEL_GROUP(k_outer, outer_args, p) {
  uint32_t *s = tt_local_mem();
  size_t g = tt_get_group_id(0);
  TT_PHASE { s[tt_get_local_id(0)] = (uint32_t)(g * 1000 + tt_get_local_id(0)); }
  inner_args in = {pthread_self(), p->wrong_thread, p->out + g * 64};
  tt_launch_config cfg = {.dims = 1, .global = {64}, .local = {8},
                          .local_mem_per_item = 4, .schedule = p->inner_schedule};
  if (tt_launch(&k_inner, &in, &cfg) != 0)
    atomic_fetch_add(p->failed, 1);
  TT_PHASE {
    if (s[tt_get_local_id(0)] != (uint32_t)(g * 1000 + tt_get_local_id(0)))
      atomic_fetch_add(p->bad_local, 1);
  }
}

Test(launch, launch_inside_a_kernel_runs_serially) {
  size_t groups = 40;
  uint32_t *out = calloc(groups * 64, 4);
  for (size_t k = 0; k < NSCHED; k++)
    for (size_t ks = 0; ks < NSCHED; ks++) {
      atomic_int wrong = 0, bad = 0, failed = 0;
      memset(out, 0, groups * 64 * 4);
      outer_args a = {out, &wrong, &bad, &failed, schedules[ks]};
      tt_launch_config cfg = {.dims = 1, .global = {groups * 16}, .local = {16},
                              .local_mem_per_item = 4, .schedule = schedules[k]};
      cr_assert_eq(tt_launch(&k_outer, &a, &cfg), 0);
      cr_assert_eq(atomic_load(&failed), 0);
      cr_assert_eq(atomic_load(&wrong), 0, "inner groups ran on another thread");
      cr_assert_eq(atomic_load(&bad), 0, "the inner launch clobbered local memory");
      for (size_t i = 0; i < groups * 64; i++)
        cr_assert_eq(out[i], 3 * (uint32_t)(i % 64), "item %zu", i);
    }
  free(out);
}

/* A launch from inside a plain team chunk also runs serially. */
typedef struct chunk_ctx {
  double *y;
  atomic_int *failed;
} chunk_ctx;
static void launch_from_chunk(void *ctx, size_t c) {
  chunk_ctx *cc = ctx;
  static const double x[100] = {0};
  tt_axpy_args a = {1.0, x, cc->y + c * 100};
  double *y = cc->y + c * 100;
  for (size_t i = 0; i < 100; i++)
    y[i] = (double)i;
  tt_axpy_args b = {2.0, y, y}; /* y = 2y + y: uses only this chunk's slice */
  if (tt_k_axpy_launch(&a, &(tt_launch_config){.dims = 1, .global = {100}}) != 0 ||
      tt_k_axpy_launch(&b, &(tt_launch_config){.dims = 1, .global = {100},
                                               .schedule = TT_SCHED_STEAL}) != 0)
    atomic_fetch_add(cc->failed, 1);
}

Test(launch, launch_inside_a_team_chunk) {
  double *y = malloc(8 * 100 * sizeof *y);
  atomic_int failed = 0;
  chunk_ctx cc = {y, &failed};
  cr_assert_eq(tt_foreach_chunk(launch_from_chunk, &cc, 8, tt_team_size()), 0);
  cr_assert_eq(atomic_load(&failed), 0);
  for (size_t i = 0; i < 800; i++)
    cr_assert_eq(y[i], 3.0 * (double)(i % 100));
  free(y);
}

typedef struct host_ctx {
  unsigned seed;
  int errors;
} host_ctx;

/* Each host thread launches kernels on its own data with random shapes and
 * schedules while the others do the same: the team serves one, the others
 * run serially, and every result must be right. */
static void *host_thread(void *arg) {
  host_ctx *h = arg;
  unsigned s = h->seed;
  double *x = malloc(5000 * sizeof *x), *y = malloc(5000 * sizeof *y);
  uint32_t *in = malloc(5000 * 4), *out = malloc(5000 * 4);
  for (int round = 0; round < 150; round++) {
    s = s * 1103515245u + 12345u;
    size_t n = 1 + (s >> 8) % 5000;
    size_t l = (s >> 4) % 3 == 0 ? 0 : 1 + (s >> 12) % n;
    tt_schedule sch = schedules[(s >> 20) % NSCHED];
    for (size_t i = 0; i < n; i++) {
      x[i] = (double)i;
      y[i] = 1.0;
      in[i] = (uint32_t)(i ^ s);
    }
    tt_axpy_args a = {0.5, x, y};
    tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {l}, .schedule = sch};
    if (tt_k_axpy_launch(&a, &cfg) != 0)
      h->errors++;
    for (size_t i = 0; i < n; i++)
      if (y[i] != 0.5 * (double)i + 1.0)
        h->errors++;
    atomic_int mis = 0;
    local_args la = {in, out, &mis};
    cfg.local_mem_per_item = 4;
    if (tt_launch(&k_reverse, &la, &cfg) != 0 || atomic_load(&mis) != 0)
      h->errors++;
    tt_ndrange nd;
    tt_launch_resolve(&cfg, &nd); /* same team size: same choice */
    size_t lk = nd.local[0];
    for (size_t i = 0; i < n; i++) {
      size_t base = i / lk * lk, size = n - base < lk ? n - base : lk;
      if (out[i] != (in[base + size - 1 - (i - base)] ^ 0x5a5a5a5au))
        h->errors++;
    }
  }
  free(x);
  free(y);
  free(in);
  free(out);
  return NULL;
}

Test(launch, concurrent_launches_from_host_threads) {
  enum { T = 4 };
  pthread_t th[T];
  host_ctx h[T];
  for (int i = 0; i < T; i++) {
    h[i] = (host_ctx){.seed = 1234u + 77u * (unsigned)i};
    cr_assert_eq(pthread_create(&th[i], NULL, host_thread, &h[i]), 0);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    cr_assert_eq(h[i].errors, 0, "host thread %d: %d errors", i, h[i].errors);
  }
}
