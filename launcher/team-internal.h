/* teams: the team's internal contract inside launcher/: what the team's
 * files (team.c and the files team-state.h lists) offer the range schedules
 * (range.c, steal.c), the launcher (launch.c) and the white-box tests.  Code outside launcher/ (the PoCL driver) sees only
 * internal/teams-internal.h, which this includes. */
#ifndef TEAMS_TEAM_INTERNAL_H
#define TEAMS_TEAM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "settings.h"
#include "teams-internal.h"
#include "teams/team.h"

/* How the participants of a region share its m chunks. */
typedef enum tt__mode {
  /* m == p: chunk c runs on participant c; the caller waits for every one. */
  TT__MODE_STATIC,
  /* chunks from one atomic counter; participants that have not joined when
   * the chunks run out are not waited for. */
  TT__MODE_GREEDY,
  /* each participant i < p that joins runs f(ctx, i) once; the region closes
   * when the caller's f(ctx, 0) returns, and participants that have not
   * joined by then never run.  For schedules that rescue the work of
   * participants that did not start (the steal schedule). */
  TT__MODE_EACH,
  /* TT__MODE_STATIC that always runs on the team's own workers, never on
   * the caller alone or OpenMP's threads, whatever they cost (way.c): for
   * first touch, whose page placement outlasts the region. */
  TT__MODE_STATIC_ALL
} tt__mode;

/* The general entry point behind tt_foreach_chunk.  Applies the busy rule
 * and chooses the way (team.c): runs serially (in order, on the caller) when
 * the team cannot be used or when that is cheapest; *parallel tells which
 * happened (may be NULL: 1 on the team's workers or OpenMP's threads).  In
 * TT__MODE_EACH a serial run calls f(ctx, 0) only.  p must already be >= 1,
 * f non-NULL.  site and size identify the loop for the way's record
 * (way.c): the user's function where f is a runner shared by many loops
 * (NULL: f), and the loop's length (tt__team_run: m). */
int tt__team_run(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                 size_t p, tt__mode mode, int *parallel);
int tt__team_run_site(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                      size_t p, tt__mode mode, const void *site, size_t size,
                      int *parallel);

/* Inside an OpenMP parallel region (omp_in_parallel, when the program has
 * an OpenMP runtime; lend.c). */
bool tt__in_openmp_parallel(void);

/* True inside a chunk of a region that runs on the team, false inside a
 * chunk of a region that runs serially (busy rule, nesting) and outside:
 * an EACH-mode function need not wait for participants that cannot come. */
bool tt__region_parallel(void);

/* The grain tt_foreach_range uses for `schedule` when asked for grain 0
 * (range.c): the one grain default of the launcher and the PoCL driver. */
size_t tt__range_default_grain(tt_schedule schedule, size_t n, size_t p);

/* The blocks a steal or static tt_foreach_range(.., n, grain, p, schedule)
 * starts from on a team of `team` participants, as range.c cuts them: *unit
 * indices per unit, *units units, *pp participants (p clamped to the grains
 * and the team); block b is units [tt__block(*units, *pp, b)), times *unit,
 * the last clipped to n, and runs on participant tt__range_deal's owner[b].  Greedy is given static's blocks; auto those of a
 * first auto launch (static below AUTO_MIN_GRAINS grains per participant,
 * else steal).  Returns 0, TT_EINVAL or TT_EOVERFLOW as tt_foreach_range
 * would, and n == 0 gives *units = 0. */
int tt__range_plan(size_t n, size_t grain, size_t p, tt_schedule schedule,
                   size_t team, size_t *unit, size_t *units, size_t *pp);

/* The deal of a range's p blocks on the running team (range.c): participant
 * c starts from block deal[c], block b from participant (*owner)[b] (owner
 * may be NULL).  NULL, and *owner NULL, when the deal is the identity (block
 * c on participant c: the first p participants on one node and one LLC, an
 * unpinned team, TEAMS_BLOCKS=contiguous, no team, p < 2).  The tables stay
 * valid until this thread asks for another p. */
const uint32_t *tt__range_deal(size_t p, const uint32_t **owner);

/* Participant c's block under deal (NULL: the identity). */
static inline size_t tt__dealt(const uint32_t *deal, size_t c) {
  return deal ? deal[c] : c;
}

/* Block c of [0, n) split into p blocks balanced to within one (the first
 * n % p blocks are one longer): [*begin, *end).  Precondition: c < p. */
static inline void tt__block(size_t n, size_t p, size_t c, size_t *begin,
                             size_t *end) {
  size_t q = n / p, r = n % p;
  *begin = c * q + (c < r ? c : r);
  *end = *begin + q + (c < r);
}

/* Tests of the generation wrap (docs/protocol.md items 16-18):
 * moves the generation counter forward so that `left` regions remain before
 * the next one wraps (0: the next region's word wraps and a resync runs
 * first); does nothing when fewer remain.  Returns how many remain
 * (UINT32_MAX only asks).  Starts the team; waits for it. */
uint32_t tt__team_skip_to_wrap(uint32_t left);

/* Tests of the idle accounting (idle.c, tt__overcommitted): how many workers
 * the team counts awake now (team.awake, relaxed).  0 when no team runs. */
size_t tt__team_awake(void);

/* Regions of this many participants or more run along the team's tree
 * (TEAMS_TREE_MIN, docs/protocol.md item 36); starts the team (0 if it
 * cannot). */
size_t tt__team_tree_min(void);

/* CPU (PU os index) participant i is pinned to, or -1 when unpinned. */
int tt__participant_cpu(size_t participant);

/* One look now, as the monitor makes them, and its cost in ns; 0 when the
 * team has no monitor (TEAMS_NUM_THREADS, or not running). */
uint64_t tt__monitor_look_once(void);

#endif
