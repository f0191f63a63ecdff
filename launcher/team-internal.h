/* teams: the team's internal contract inside launcher/: what the team's
 * files (team.c and the files team-state.h lists) offer the rest of
 * launcher/, used by the range schedules (range.c, range.h, steal.c), the
 * launcher (launch.c), first touch (memory.c), the CPU rule (cpuset.c), the
 * affinity domains (domains.c), lend.h, way.h and team-state.h; and by the
 * white-box tests and tools.  Code outside launcher/ (the PoCL driver) sees
 * only internal/teams-driver.h, which this includes. */
#ifndef TEAMS_TEAM_INTERNAL_H
#define TEAMS_TEAM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "settings.h"
#include "teams-driver.h"
#include "teams/team.h"

/* How the participants of a region share its m chunks. */
typedef enum tt__mode {
  /* m == p: chunk c runs on participant c, or on the caller when that
   * participant has not claimed it by the time the caller's own ran
   * (docs/protocol.md item 10); the caller waits for the chunks claimed. */
  TT__MODE_STATIC,
  /* chunks from one atomic counter; participants that have not joined when
   * the chunks run out are not waited for. */
  TT__MODE_GREEDY,
  /* each participant i < p that joins runs f(ctx, i) once; the region closes
   * when the caller's f(ctx, 0) returns, and participants that have not
   * joined by then never run.  For schedules that rescue the work of
   * participants that did not start (the steal schedule). */
  TT__MODE_EACH,
  /* TT__MODE_STATIC placed: always on the team's own workers, chunk c on
   * participant c, never on the caller alone or OpenMP's threads, whatever
   * they cost (way.c), and never claimed by the caller: for first touch,
   * whose page placement outlasts the region. */
  TT__MODE_STATIC_PLACED
} tt__mode;

/* The general entry point behind tt_foreach_chunk.  Applies the busy rule
 * and chooses the way (team.c): runs serially (in order, on the caller) when
 * the team cannot be used or when that is cheapest; *parallel tells which
 * happened (may be NULL: 1 on the team's workers or OpenMP's threads).  In
 * TT__MODE_EACH a serial run calls f(ctx, 0) only.  p must already be >= 1,
 * f non-NULL.  The loop the way keeps a record of is f's, of length m. */
int tt__team_run(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                 size_t p, tt__mode mode, int *parallel);
/* tt__team_run for a loop that f does not identify: site and size name it
 * for the way's record (way.c), site the user's function where f is a
 * runner shared by many loops (NULL: f), size the loop's length. */
int tt__team_run_site(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                      size_t p, tt__mode mode, const void *site, size_t size,
                      int *parallel);
/* tt__team_run_site for a loop whose record the caller found already
 * (range.c's auto schedule, which reads it to choose the schedule: one
 * look per region), whatever TEAMS_RUN is. */
typedef struct tt__loop tt__loop;
int tt__team_run_loop(void (*f)(void *ctx, size_t chunk), void *ctx, size_t m,
                      size_t p, tt__mode mode, tt__loop *loop, int *parallel);

/* Inside an OpenMP parallel region (omp_in_parallel, when the program has
 * an OpenMP runtime; lend.c). */
bool tt__in_openmp_parallel(void);

/* True inside a chunk of a region that runs on the team, false inside a
 * chunk of a region that runs serially (busy rule, nesting) and outside:
 * an EACH-mode function need not wait for participants that cannot come. */
bool tt__region_parallel(void);
/* Whether participant i of the running team region was asleep when the
 * region was published (woken, or sitting it out): a hint for the steal
 * schedule's protection of blocks whose owners have not started (team.c). */
bool tt__participant_late(size_t i);
/* Participant 0 of an each region tells what share of the region's work it
 * ran (0 < share <= 1), for the way's measure of the work (team.c). */
void tt__region_share(double share);

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
 * (TEAMS_TREE_MIN, docs/protocol.md item 37); starts the team (0 if it
 * cannot). */
size_t tt__team_tree_min(void);

/* CPU (PU os index) participant i is pinned to, or -1 when unpinned. */
int tt__participant_cpu(size_t participant);

/* One look now, as the monitor makes them, and its cost in ns; 0 when the
 * team has no monitor (TEAMS_NUM_THREADS, or not running). */
uint64_t tt__monitor_look_once(void);

#endif
