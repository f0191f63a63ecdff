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
 *   - the named atomics and TT_CACHE_PAD (atomic.h, beside this file), and
 *     TT__OVERHEAD_DIV, the runtime's budget for its own costs, and
 *     tt__median3, its reading of three noisy samples (below);
 *   - the TEAMS_* settings table (settings.h, beside this file): its
 *     TEAMS_POCL_* rows, read through tt__setting and tt__setting_text;
 *   - tt__scratch, each thread's grow-on-demand buffers, tt__team_nodes,
 *     tt__foreach_range_site and tt__foreach_range_last_ns (a kernel's
 *     loop record), and for sub-devices tt__team_domains,
 *     tt__foreach_range_on and tt__mem_touch_on, below.
 * Everything else in launcher/ (the team's protocol, the steal machine,
 * topology snapshots) is private to the runtime and its white-box tests.
 *
 * Functions declared here are exported from libteams.so (TT_INTERNAL) so
 * that the driver, a separate shared object, shares the one process-wide
 * runtime; they are not declared in any installed header. */
#ifndef TEAMS_DRIVER_H
#define TEAMS_DRIVER_H

#include <stddef.h>

#include "atomic.h"
#include "teams/team.h"

/* The runtime's own costs -- trials of another way of running a region,
 * the clock reads that time regions, a spinner's yields, the driver's run
 * at submit -- are kept under 1/TT__OVERHEAD_DIV of what they serve (3%),
 * well inside the 10% by which a fixed choice may beat the default
 * (docs/protocol.md item 44). */
#define TT__OVERHEAD_DIV 32

/* The median of three samples: the runtime's one way of reading a noisy
 * number (a sample that met a time slice or an interrupt moves nothing),
 * the way's loop records (way.c) and the driver's host-waits record
 * (backend/pocl/submit.c) alike. */
static inline double tt__median3(double a, double b, double c) {
  return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

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
  /* range.c: the deal of a range's blocks over a prefix of the team, which
   * the thread's regions read while it holds them (tt__range_deal). */
  TT__SCRATCH_DEAL,
  TT__SCRATCH_KINDS
} tt__scratch_kind;

/* NUMA nodes the team's participants run on (launcher/memory.c): their
 * pinned CPUs' nodes, or every node the process may allocate on when they
 * are not pinned; at least 1.  Starts the team. */
TT_INTERNAL size_t tt__team_nodes(void);

/* Affinity domains (launcher/domains.c), in the order of OpenCL's
 * CL_DEVICE_AFFINITY_DOMAIN_* bits: NUMA node, then caches from the
 * outermost. */
typedef enum tt__domain {
  TT__DOMAIN_NUMA = 0,
  TT__DOMAIN_L4,
  TT__DOMAIN_L3,
  TT__DOMAIN_L2,
  TT__DOMAIN_L1,
  TT__DOMAINS
} tt__domain;

/* The domains of participants [0, n): ids[k * n + i] identifies participant
 * i's domain of kind k (equal ids: the same domain), -1 where it has none of
 * that kind (no such cache level).  From the running team's pinning, which
 * it starts (TEAMS_PIN=cores|numa), or, when synthetic is not NULL, from the
 * pinning TEAMS_PIN=numa would choose on that hwloc synthetic machine (for
 * tests on machines without several nodes or caches).  Returns 0, TT_ENOSYS
 * when the participants are not each pinned to a PU of their own (an
 * unpinned thread has no domain: ids all -1), TT_EINVAL (n 0, n larger than
 * the team, a bad synthetic description), TT_ENOMEM. */
TT_INTERNAL int tt__team_domains(size_t n, const char *synthetic, int *ids);

/* tt_foreach_range for a loop that the range's function alone does not
 * identify: the driver runs every kernel through one function.  site
 * names the loop for the way's record and the auto schedule's memo
 * (launcher/way.c, range.c): the kernel's work-group function. */
TT_INTERNAL int tt__foreach_range_site(const void *site,
                                       void (*f)(void *ctx, size_t begin,
                                                 size_t end),
                                       void *ctx, size_t n, size_t grain,
                                       size_t p, tt_schedule schedule);

/* What tt__foreach_range_site(site, f, ctx, n, grain, p, schedule) called
 * now on this thread would take, ns, as the loop's record has it (the way's,
 * launcher/way.h: the last timed region's own time, on whichever way it
 * ran); 0 when the record has no number: the thread has not run the loop,
 * its record was taken over, or its regions keep none (one participant, a
 * fixed TEAMS_RUN), or p exceeds the team.  Reads only the calling
 * thread's table; makes no record and never starts or resizes the team. */
TT_INTERNAL uint64_t tt__foreach_range_last_ns(const void *site, size_t n,
                                               size_t grain, size_t p,
                                               tt_schedule schedule);

/* tt_foreach_range on participants [first, first + count) of the team only
 * (launcher/range.c): a sub-team, a span of participants.  No other
 * participant runs any of f, and the caller runs some only when
 * first == 0.  TT_SCHED_STATIC: participant first + k runs block k of
 * whole grains; every other schedule: grains from one shared counter
 * among the members (grain 0: greedy's default for count
 * participants).  The regions always run on the team's workers, whatever
 * the way's choice (launcher/way.c).  first == 0 with count == 1 is one
 * call f(ctx, 0, n) on the caller.  While another thread holds the team the
 * call waits (yields, then sleeps up to 1 ms between tries) -- or, with wait 0
 * and nothing run yet, returns TT_EBUSY so that the caller may decide.
 * Returns 0 once the whole range ran; TT_ENOSYS, with nothing run, when the
 * calling thread can never hold the team (inside a chunk, or in an OpenMP
 * parallel region); TT_ERANGE when first + count exceeds the team;
 * TT_EINVAL or TT_EOVERFLOW as tt_foreach_range; TT_ENOMEM (static on a
 * span of more than 256 participants).  The rule assumes the team is not
 * shut down and restarted smaller meanwhile. */
TT_INTERNAL int tt__foreach_range_on(void (*f)(void *ctx, size_t begin,
                                               size_t end),
                                     void *ctx, size_t n, size_t grain,
                                     size_t first, size_t count,
                                     tt_schedule schedule, int wait);

/* tt_mem_touch(base, bytes, 1, 0, count, TT_SCHED_STATIC) with block k
 * touched by participant first + k of the team instead of the team's deal
 * (launcher/memory.c): the pages where a static launch on that sub-team
 * (tt__foreach_range_on) runs, and touched as it runs them (a left-out
 * member's block by another member; waiting for a held team unless wait is
 * 0).  Returns 0, the codes of tt_mem_touch, or those of
 * tt__foreach_range_on (TT_EBUSY: nothing touched). */
TT_INTERNAL int tt__mem_touch_on(void *base, size_t bytes, size_t first,
                                 size_t count, int wait);

/* At least size bytes of the calling thread's buffer of this kind, aligned
 * to TT_CACHE_PAD (128).  The contents are kept only while no larger size is
 * asked for; the buffer is valid until such a call or the thread's exit
 * (when it is freed).  NULL when out of memory (the old buffer is then still
 * valid, at its old size) or for an unknown kind. */
TT_INTERNAL void *tt__scratch(tt__scratch_kind kind, size_t size);

#endif
