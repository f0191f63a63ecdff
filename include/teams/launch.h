/* teams: the NDRange launcher.
 *
 * A launch runs a kernel over a 1-, 2- or 3-dimensional index space (the
 * NDRange) cut into work-groups, OpenCL style.  Work-groups are the unit of
 * scheduling: a participant of the team runs whole groups, and inside a group
 * it loops over the work-items itself (see teams/kernel.h for how kernels are
 * written).  A launch is one tt_foreach_range call over its groups, whatever
 * the schedule, and one indirect call per chunk of groups into code
 * generated for the kernel.  Nothing is allocated
 * on the launch path once the participants' local memory has grown to size.
 *
 *   tt_launch_config cfg = {.dims = 1, .global = {n}};   // local 0: choose
 *   int err = tt_launch(&my_kernel, &my_args, &cfg);
 *
 * A launch from inside a kernel (or any chunk) runs serially on the calling
 * thread, like every nested region of the team. */
#ifndef TEAMS_LAUNCH_H
#define TEAMS_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include "errors.h"
#include "export.h"
#include "team.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_MAX_DIMS 3

/* The largest work-group the launcher chooses by itself (items).  Explicit
 * local sizes may be larger. */
#define TT_LOCAL_CHOOSE_MAX 1024

/* What the caller asks for.  Zero-initialise and set what you need; every
 * zero field means "default" (reserved too: teams/team.h says why).  Entries of global/local/offset at or beyond
 * dims are ignored (they behave as size 1, offset 0). */
typedef struct tt_launch_config {
  unsigned dims;              /* 1..3 */
  size_t global[TT_MAX_DIMS]; /* work-items per dimension, each >= 1 */
  /* Work-group size per dimension, each <= global.  All zero: the launcher
   * chooses (tt_launch_resolve tells what).  It aims at about four groups
   * per participant when the range allows it, with at most
   * TT_LOCAL_CHOOSE_MAX items per group, and fills dimension 0 first (the
   * contiguous one, which the item loop vectorises over), then 1, then 2:
   * each dimension gets its whole global size or a power of two.  The choice
   * depends on the participant count, so on the team size.
   * Zero in some used dimensions and not in others is TT_EINVAL.
   * Where global is not a multiple of local, the last group along that
   * dimension is smaller (OpenCL 2.0 non-uniform work-groups). */
  size_t local[TT_MAX_DIMS];
  size_t offset[TT_MAX_DIMS]; /* global id of the first work-item */

  /* Local memory of each work-group, in bytes: local_mem +
   * local_mem_per_item * (items of an enqueued, i.e. full, group).  The
   * per-item form lets a kernel size its memory when the launcher chooses
   * the local size.  128-byte aligned, contents undefined at group start. */
  size_t local_mem;
  size_t local_mem_per_item;

  tt_schedule schedule; /* default TT_SCHED_STATIC */
  size_t participants;  /* at most this many participants; 0: the whole team */
  /* Groups per grain, as tt_foreach_range's grain; 0 takes the schedule's
   * default, the same as the PoCL driver's (1 for static and auto, about 64
   * chunks per participant for greedy and steal). */
  size_t grain;

  /* Optional statistics: groups_run[i] += groups run by participant i, for
   * i < groups_run_len (tt_team_size() entries cover every participant).
   * Written only by participant i during the launch; read it after. */
  size_t *groups_run;
  size_t groups_run_len;
  uint64_t reserved[7]; /* room to grow: zero (teams/team.h) */
} tt_launch_config;

/* The NDRange a launch actually runs, as the kernel sees it: unused
 * dimensions are filled in (global 1, local 1, offset 0). */
typedef struct tt_ndrange {
  unsigned dims;
  size_t global[TT_MAX_DIMS];
  size_t local[TT_MAX_DIMS];      /* enqueued (uniform) work-group size */
  size_t offset[TT_MAX_DIMS];
  size_t groups[TT_MAX_DIMS];     /* ceil(global / local) */
  size_t last_local[TT_MAX_DIMS]; /* size of the last group along d */
  size_t ngroups;                 /* product of groups */
  size_t group_items;             /* product of local */
  size_t local_mem;               /* bytes of local memory per group */
  uint64_t reserved[5];           /* room to grow (teams/team.h) */
} tt_ndrange;

/* What the kernel-definition macros generate: a function that runs the
 * work-groups [begin, end) (linear group ids, dimension 0 fastest) with the
 * kernel body inlined, local pointing to nd->local_mem bytes. */
typedef void (*tt_chunk_fn)(const void *args, const tt_ndrange *nd,
                            size_t begin, size_t end, void *local);

typedef struct tt_kernel {
  tt_chunk_fn chunk;
  const char *name;
} tt_kernel;

/* Run kernel k with argument block args (passed to the kernel untouched; it
 * must stay valid until the launch returns) over cfg's NDRange, and return
 * when every work-item has run.  Returns 0, or
 *   TT_EINVAL    k, k->chunk or cfg NULL; dims outside 1..3; a zero global
 *                size; a local size larger than global; local sizes partly
 *                zero; an unknown schedule (participants beyond the team
 *                size are not an error: they are clamped);
 *   TT_EOVERFLOW the product of global sizes, offset + global, or the local
 *                memory size overflows size_t;
 *   TT_ENOMEM    a participant could not get its local memory (groups may
 *                then have been skipped: the output is undefined);
 * or a code from the team.  Bad input is rejected before anything runs and
 * leaves the team usable.  Safe to call from several threads at once: a
 * launch that finds the team held by another thread runs serially. */
TT_EXTERN int tt_launch(const tt_kernel *k, const void *args,
                        const tt_launch_config *cfg);

/* Check cfg as tt_launch does and fill *out with the NDRange a launch would
 * run (the chosen local size, group counts, local memory).  Same codes as
 * tt_launch for bad input.  Starts the team when cfg->local is all zero (the
 * choice depends on how many participants there are). */
TT_EXTERN int tt_launch_resolve(const tt_launch_config *cfg, tt_ndrange *out);

#ifdef __cplusplus
}
#endif
#endif
