/* teams: the NDRange launcher.
 *
 * A launch validates its configuration, resolves the NDRange (filling unused
 * dimensions, choosing a local size, counting groups), and hands linear group
 * ranges to the kernel's generated chunk function through one team region:
 *
 *   static  tt_foreach_chunk(m = p): participant c runs the c-th of p equal
 *           blocks of groups (balanced to within one group);
 *   greedy  tt_foreach_chunk(m > p): chunks of `grain` groups from the team's
 *           counter;
 *   steal,  tt_foreach_range over the groups with `grain` groups per grain:
 *   auto    the range schedules own the policy.
 *
 * Everything a launch needs lives in one struct launch on the caller's
 * stack; participants only read it, except for their own groups_run slot and
 * the failure flag.  tt_foreach_chunk / tt_foreach_range return after every
 * chunk has run and their completion gives the caller the participants'
 * writes (the team's release/acquire on its completion count), so no
 * ordering is needed here beyond a relaxed flag.
 *
 * Local memory.  Each participant takes it from its own thread's scratch
 * (tt__scratch) inside the chunk, so a launch allocates nothing once the
 * scratch has grown, and a launch that runs serially beside a team region
 * (another thread holds the team) uses the caller's scratch, which no team
 * region touches.  A launch from inside a chunk is the exception: it runs
 * serially on a thread whose scratch may be the local memory of the group
 * that launched it (or of a PoCL work-group), so it gets a block of its own
 * from the heap.  That costs an allocation, on a path that is rare and
 * serial anyway. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "teams/launch.h"
#include "team-internal.h"

/* Alignment of local memory: tt__scratch's, and what the header promises. */
#define LOCAL_ALIGN 128

struct launch {
  const tt_kernel *k;
  const void *args;
  tt_ndrange nd;
  size_t nchunks; /* static: p blocks; greedy: chunks of grain groups */
  size_t grain;   /* greedy only */
  void *nested_local;
  size_t *groups_run;
  size_t groups_run_len;
  atomic_int failed; /* set by a participant whose local memory failed */
};

static void run_groups(struct launch *L, size_t begin, size_t end) {
  void *local = L->nested_local;
  if (local == NULL && L->nd.local_mem != 0) {
    local = tt__scratch(L->nd.local_mem);
    if (local == NULL) {
      atomic_store_explicit(&L->failed, 1, memory_order_relaxed);
      return;
    }
  }
  L->k->chunk(L->args, &L->nd, begin, end, local);
  if (L->groups_run != NULL) {
    int self = tt__self();
    size_t i = self < 0 ? 0 : (size_t)self;
    if (i < L->groups_run_len)
      L->groups_run[i] += end - begin;
  }
}

static void static_chunk(void *ctx, size_t c) {
  struct launch *L = ctx;
  size_t q = L->nd.ngroups / L->nchunks, r = L->nd.ngroups % L->nchunks;
  size_t begin = c * q + (c < r ? c : r);
  run_groups(L, begin, begin + q + (c < r));
}

static void greedy_chunk(void *ctx, size_t c) {
  struct launch *L = ctx;
  size_t begin = c * L->grain;
  size_t end = L->nd.ngroups - begin < L->grain ? L->nd.ngroups : begin + L->grain;
  run_groups(L, begin, end);
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
  if (cfg == NULL || cfg->dims < 1 || cfg->dims > TT_MAX_DIMS)
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
  size_t team = tt__team_size();
  if (team == 0)
    team = 1;
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
  atomic_init(&L.failed, 0);

  if (tt__self() >= 0 && L.nd.local_mem != 0) {
    size_t sz = (L.nd.local_mem + LOCAL_ALIGN - 1) & ~(size_t)(LOCAL_ALIGN - 1);
    if (sz < L.nd.local_mem)
      return TT_EOVERFLOW;
    L.nested_local = aligned_alloc(LOCAL_ALIGN, sz);
    if (L.nested_local == NULL)
      return TT_ENOMEM;
  }

  size_t G = L.nd.ngroups;
  if (p > G)
    p = G;
  switch (cfg->schedule) {
  case TT_SCHED_STATIC:
    L.nchunks = p;
    L.grain = 0;
    err = tt_foreach_chunk(static_chunk, &L, p, p);
    break;
  case TT_SCHED_GREEDY: {
    size_t grain = cfg->grain != 0 ? cfg->grain : G / (8 * p);
    if (grain == 0)
      grain = 1;
    L.grain = grain;
    L.nchunks = G / grain + (G % grain != 0);
    err = tt_foreach_chunk(greedy_chunk, &L, L.nchunks, p);
    break;
  }
  default: { /* steal, auto: validated above */
    size_t grain = cfg->grain != 0 ? cfg->grain : G / (16 * p);
    if (grain == 0)
      grain = 1;
    err = tt_foreach_range(range_chunk, &L, G, grain, p, cfg->schedule);
    break;
  }
  }
  free(L.nested_local);
  if (err == 0 && atomic_load_explicit(&L.failed, memory_order_relaxed))
    err = TT_ENOMEM;
  return err;
}
