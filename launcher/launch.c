/* teams: the NDRange launcher.
 *
 * A launch validates its configuration, resolves the NDRange (filling unused
 * dimensions, choosing a local size, counting groups), and hands linear group
 * ranges to the kernel's generated chunk function through tt_foreach_range
 * over the groups, with the launch's schedule and grain: the range
 * schedules own the policy (static blocks, greedy chunks, stealing, auto)
 * and the grain default (grain 0), the same ones the PoCL driver runs its
 * work-groups with.
 *
 * Everything a launch needs lives in one struct launch on the caller's
 * stack; participants only read it, except for their own groups_run slot and
 * the failure flag.  tt_foreach_range returns after every group has run and
 * its completion gives the caller the participants' writes (the team's
 * release/acquire on its completion count), so no ordering is needed here
 * beyond a relaxed flag.
 *
 * Local memory.  Each participant takes it from its own thread's
 * TT__SCRATCH_LOCAL buffer inside the chunk, so a launch allocates nothing
 * once the buffer has grown, and a launch that runs serially beside a team
 * region (another thread holds the team) uses the caller's buffer, which no
 * team region touches.  A launch from inside a chunk is the exception: it
 * runs serially on a thread whose buffer may be the local memory of the
 * group that launched it, so it gets a block of its own from the heap.  That
 * costs an allocation, on a path that is rare and serial anyway. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "teams/launch.h"
#include "team-internal.h"

/* Alignment of local memory: tt__scratch's, and what the header promises. */
#define LOCAL_ALIGN TT_CACHE_PAD

struct launch {
  const tt_kernel *k;
  const void *args;
  tt_ndrange nd;
  void *nested_local;
  size_t *groups_run;
  size_t groups_run_len;
  _Atomic int failed; /* set by a participant whose local memory failed */
};

static void run_groups(struct launch *L, size_t begin, size_t end) {
  void *local = L->nested_local;
  if (local == NULL && L->nd.local_mem != 0) {
    local = tt__scratch(TT__SCRATCH_LOCAL, L->nd.local_mem);
    if (local == NULL) {
      tt_atomic_store_relaxed(&L->failed, 1);
      return;
    }
  }
  L->k->chunk(L->args, &L->nd, begin, end, local);
  if (L->groups_run != NULL) {
    int self = tt_participant();
    size_t i = self < 0 ? 0 : (size_t)self;
    if (i < L->groups_run_len)
      L->groups_run[i] += end - begin;
  }
}

static void range_chunk(void *ctx, size_t begin, size_t end) {
  run_groups(ctx, begin, end);
}

static size_t floor_pow2(size_t x) {
  size_t p = 1;
  while (p <= x / 2)
    p *= 2;
  return p;
}

static size_t choose_local(unsigned dims, const size_t global[3],
                               size_t participants, size_t local[3]) {
  size_t total = global[0] * global[1] * global[2]; /* checked by the caller */
  if (participants == 0)
    participants = 1;
  /* About four groups per participant leaves the greedy and steal schedules
   * something to balance; beyond TT_LOCAL_CHOOSE_MAX items a group gains
   * nothing (the per-group cost is a few ns) and its local memory grows. */
  size_t want = participants > SIZE_MAX / 4 ? 1 : total / (4 * participants);
  if (want > TT_LOCAL_CHOOSE_MAX)
    want = TT_LOCAL_CHOOSE_MAX;
  size_t left = want == 0 ? 1 : floor_pow2(want);
  size_t items = 1;
  for (unsigned d = 0; d < 3; d++) {
    if (d >= dims) {
      local[d] = 1;
      continue;
    }
    /* A whole dimension if it fits, else the power of two left over; the last
     * group along d then takes the remainder. */
    local[d] = global[d] <= left ? global[d] : left;
    left = floor_pow2(left / local[d]);
    items *= local[d];
  }
  return items;
}

static int resolve(const tt_launch_config *cfg, size_t participants,
                       tt_ndrange *nd) {
  memset(nd, 0, sizeof *nd); /* reserved included (teams/team.h) */
  if (cfg == NULL || cfg->dims < 1 || cfg->dims > TT_MAX_DIMS)
    return TT_EINVAL;
  /* Room for later fields, which will read 0 as their default: a program
   * that leaves garbage there would change meaning with the version. */
  for (size_t i = 0; i < sizeof cfg->reserved / sizeof cfg->reserved[0]; i++)
    if (cfg->reserved[i] != 0)
      return TT_EINVAL;
  if ((unsigned)cfg->schedule > (unsigned)TT_SCHED_AUTO)
    return TT_EINVAL;
  unsigned dims = cfg->dims;
  size_t nzero_local = 0, total = 1;
  nd->dims = dims;
  for (unsigned d = 0; d < TT_MAX_DIMS; d++) {
    if (d >= dims) {
      nd->global[d] = 1;
      nd->local[d] = 1;
      nd->offset[d] = 0;
      continue;
    }
    size_t g = cfg->global[d];
    if (g == 0)
      return TT_EINVAL;
    if (cfg->local[d] == 0)
      nzero_local++;
    else if (cfg->local[d] > g)
      return TT_EINVAL;
    /* The largest global id, offset + g - 1, must be representable. */
    if (cfg->offset[d] > SIZE_MAX - (g - 1))
      return TT_EOVERFLOW;
    if (total > SIZE_MAX / g)
      return TT_EOVERFLOW;
    total *= g;
    nd->global[d] = g;
    nd->local[d] = cfg->local[d];
    nd->offset[d] = cfg->offset[d];
  }
  if (nzero_local != 0 && nzero_local != dims)
    return TT_EINVAL;

  size_t items;
  if (nzero_local != 0) {
    items = choose_local(dims, nd->global, participants, nd->local);
  } else {
    items = nd->local[0] * nd->local[1] * nd->local[2]; /* <= total */
  }

  size_t ngroups = 1;
  for (unsigned d = 0; d < TT_MAX_DIMS; d++) {
    size_t g = nd->global[d], l = nd->local[d];
    nd->groups[d] = g / l + (g % l != 0);
    nd->last_local[d] = g % l != 0 ? g % l : l;
    ngroups *= nd->groups[d]; /* <= total */
  }
  nd->ngroups = ngroups;
  nd->group_items = items;

  if (cfg->local_mem_per_item != 0 && items > SIZE_MAX / cfg->local_mem_per_item)
    return TT_EOVERFLOW;
  size_t per_items = cfg->local_mem_per_item * items;
  if (cfg->local_mem > SIZE_MAX - per_items)
    return TT_EOVERFLOW;
  nd->local_mem = cfg->local_mem + per_items;
  return 0;
}

static size_t participants_for(const tt_launch_config *cfg) {
  size_t team = tt_team_size();
  return cfg->participants != 0 && cfg->participants < team ? cfg->participants
                                                            : team;
}

/* Whether the resolution needs the participant count (it starts the team). */
static int chooses_local(const tt_launch_config *cfg) {
  for (unsigned d = 0; d < cfg->dims && d < TT_MAX_DIMS; d++)
    if (cfg->local[d] == 0)
      return 1;
  return 0;
}

int tt_launch_resolve(const tt_launch_config *cfg, tt_ndrange *out) {
  if (cfg == NULL || out == NULL)
    return TT_EINVAL;
  tt_ndrange nd;
  size_t p = 1;
  if (cfg->dims >= 1 && cfg->dims <= TT_MAX_DIMS && chooses_local(cfg))
    p = participants_for(cfg);
  int err = resolve(cfg, p, &nd);
  if (err == 0)
    *out = nd;
  return err;
}

int tt_launch(const tt_kernel *k, const void *args, const tt_launch_config *cfg) {
  if (k == NULL || k->chunk == NULL || cfg == NULL)
    return TT_EINVAL;
  struct launch L;
  /* Validate before touching the team: bad input must not start it. */
  int err = resolve(cfg, 1, &L.nd);
  if (err != 0)
    return err;
  size_t p = participants_for(cfg);
  if (chooses_local(cfg)) {
    err = resolve(cfg, p, &L.nd);
    if (err != 0)
      return err;
  }

  L.k = k;
  L.args = args;
  L.nested_local = NULL;
  L.groups_run = cfg->groups_run;
  L.groups_run_len = cfg->groups_run != NULL ? cfg->groups_run_len : 0;
  tt_atomic_store_relaxed(&L.failed, 0);

  if (tt_participant() >= 0 && L.nd.local_mem != 0) {
    size_t sz = (L.nd.local_mem + LOCAL_ALIGN - 1) & ~(size_t)(LOCAL_ALIGN - 1);
    if (sz < L.nd.local_mem)
      return TT_EOVERFLOW;
    L.nested_local = aligned_alloc(LOCAL_ALIGN, sz);
    if (L.nested_local == NULL)
      return TT_ENOMEM;
  }

  /* The kernel is the loop the way keeps a record of (protocol 44): its
   * own work, whatever else launches through range_chunk. */
  err = tt__foreach_range_site(k, range_chunk, &L, L.nd.ngroups, cfg->grain, p,
                               cfg->schedule);
  free(L.nested_local);
  if (err == 0 && tt_atomic_load_relaxed(&L.failed))
    err = TT_ENOMEM;
  return err;
}
