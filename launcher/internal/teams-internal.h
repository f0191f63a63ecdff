/* teams: the runtime's internal interface for in-tree code outside launcher/.
 *
 * The PoCL driver (backend/pocl/) is built against this directory and
 * nothing else of launcher/: the CMake target `teams_internal` puts it on the
 * include path and links libteams.  Neither is installed, and nothing here
 * is a stable ABI: it changes with the runtime, and the driver is built from
 * the same tree.  The driver may use
 *   - the public API (include/teams/), through which its work-groups run:
 *     tt_foreach_range with grain 0 takes the schedule's default grain
 *     (tt__range_default_grain in launcher/range.c), the one policy the
 *     launcher uses too;
 *   - the named atomics and TT_CACHE_PAD (atomic.h, beside this file);
 *   - tt__scratch, each thread's grow-on-demand buffers, and
 *     tt__team_nodes, below.
 * Everything else in launcher/ (the team's protocol, the steal machine,
 * topology snapshots) is private to the runtime and its white-box tests.
 *
 * Functions declared here are exported from libteams.so (TT_INTERNAL) so
 * that the driver, a separate shared object, shares the one process-wide
 * runtime; they are not declared in any installed header. */
#ifndef TEAMS_INTERNAL_H
#define TEAMS_INTERNAL_H

#include <stddef.h>

#include "atomic.h"
#include "teams/team.h"

#if !defined(TEAMS_STATIC) && defined(__GNUC__)
#define TT_INTERNAL __attribute__((visibility("default")))
#else
#define TT_INTERNAL
#endif

/* Per-thread scratch (launcher/scratch.c).  Each thread has one buffer per
 * kind; a buffer grows on demand and is reused, so its users allocate
 * nothing once warm.  Kinds never share memory: a chunk may use one kind
 * while the thread, further up its stack, is using another (a launch's local
 * memory inside a steal region whose slots the same thread holds).  Two
 * users of one kind must not be live on one thread at once; each kind's
 * user says why that holds. */
typedef enum tt__scratch_kind {
  /* launch.c: local memory of the work-groups the thread is running.  A
   * launch nested in a chunk never uses it (it takes a heap block). */
  TT__SCRATCH_LOCAL = 0,
  /* range.c: the slots of the steal region the thread holds as its caller
   * (a thread holds at most one region: nested ones run serially). */
  TT__SCRATCH_STEAL,
  /* The PoCL driver: the participant's argument array, context copy, local
   * memory and printf buffer (a work-group never launches). */
  TT__SCRATCH_DRIVER,
  TT__SCRATCH_KINDS
} tt__scratch_kind;

/* NUMA nodes the team's participants run on (launcher/memory.c): their
 * pinned CPUs' nodes, or every node the process may allocate on when they
 * are not pinned; at least 1.  Starts the team. */
TT_INTERNAL size_t tt__team_nodes(void);

/* At least size bytes of the calling thread's buffer of this kind, aligned
 * to TT_CACHE_PAD (128).  The contents are kept only while no larger size is
 * asked for; the buffer is valid until such a call or the thread's exit
 * (when it is freed).  NULL when out of memory (the old buffer is then still
 * valid, at its old size) or for an unknown kind. */
TT_INTERNAL void *tt__scratch(tt__scratch_kind kind, size_t size);

#endif
