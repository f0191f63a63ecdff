/* teams: writing kernels for the launcher.
 *
 * A kernel is defined once with a macro that generates, at compile time, its
 * work-group function (loops over the local ids with the body inlined) and
 * its chunk function (runs a range of work-groups); the launcher calls the
 * chunk function once per chunk, so there is no indirect call, no varargs
 * and no allocation per work-item or per group.
 *
 * Single-phase kernels (no barrier) give the body of one work-item:
 *
 *   typedef struct { double a; const double *x; double *y; } axpy_args;
 *   TT_KERNEL(axpy, axpy_args, p) {
 *     size_t i = tt_get_global_id(0);
 *     p->y[i] = p->a * p->x[i] + p->y[i];
 *   }
 *   ...
 *   tt_launch(&axpy, &(axpy_args){2.0, x, y},
 *             &(tt_launch_config){.dims = 1, .global = {n}});
 *
 * `return` ends the work-item.  p is `const axpy_args *`.
 *
 * Kernels with barriers give the body of one work-group, written in phases.
 * TT_PHASE { ... } runs its block once for every work-item of the group; the
 * end of a phase is the barrier (every item finishes the phase before any
 * starts the next).  Code between phases runs once per group and may use the
 * group queries but not the item ones (tt_get_local_id outside a phase does
 * not compile).  State carried from one phase to the next lives in local
 * memory, indexed by tt_get_local_linear_id(), or in arrays of the group body.
 *
 *   TT_KERNEL_GROUP(sum, sum_args, p) {
 *     float *s = tt_local_mem();
 *     TT_PHASE { s[tt_get_local_id(0)] = p->in[tt_get_global_id(0)]; }
 *     TT_PHASE {
 *       if (tt_get_local_id(0) != 0) continue;   // ends this item's phase
 *       ...
 *     }
 *   }
 *
 * TT_PHASE_FIRST(n) { ... } is a phase for the items whose local linear id
 * is below n only (the others idle through it, as if guarded by an `if`),
 * and skips the idle ones: a tree level then costs its active items.
 *
 * Inside a phase, `continue` and `break` end the work-item's phase (do not
 * `return`: that would end the whole group).  Phases do not nest.
 *
 * Work-groups run on one thread, items in order (dimension 0 fastest), so
 * local memory needs no atomics; global memory shared with other groups does.
 *
 * Headers declare kernels with TT_KERNEL_DECLARE(name, T), which also gives a
 * type-checked launcher name##_launch(const T *args, const tt_launch_config *).
 *
 * Queries (OpenCL names with a tt_ prefix; d outside 0..2 gives 0 for ids
 * and offsets, 1 for sizes, as in OpenCL): tt_get_work_dim,
 * tt_get_global_size, tt_get_global_offset, tt_get_enqueued_local_size,
 * tt_get_local_size (the actual size of this group), tt_get_num_groups,
 * tt_get_group_id, tt_local_mem, tt_local_mem_size anywhere in a kernel;
 * tt_get_local_id, tt_get_global_id, tt_get_local_linear_id,
 * tt_get_global_linear_id inside a work-item (TT_KERNEL body or TT_PHASE). */
#ifndef TEAMS_KERNEL_H
#define TEAMS_KERNEL_H

#include <stddef.h>
#include "launch.h"

#if defined(__GNUC__) || defined(__clang__)
#define TT__INLINE static inline __attribute__((always_inline))
#define TT__UNUSED __attribute__((unused))
#else
#define TT__INLINE static inline
#define TT__UNUSED
#endif

/* One work-group while it runs.  Lives on the stack of the chunk function and
 * never escapes the inlined code, so the compiler keeps it in registers. */
typedef struct tt_wg {
  const tt_ndrange *nd;
  void *local;
  size_t id[TT_MAX_DIMS];   /* group id */
  size_t size[TT_MAX_DIMS]; /* actual work-items along d */
  size_t base[TT_MAX_DIMS]; /* global id of local id 0 */
} tt_wg;

TT__INLINE void tt__wg_dim(tt_wg *w, unsigned d) {
  const tt_ndrange *nd = w->nd;
  w->size[d] = w->id[d] + 1 == nd->groups[d] ? nd->last_local[d] : nd->local[d];
  w->base[d] = nd->offset[d] + w->id[d] * nd->local[d];
}

/* Position w on linear group g: the only divisions of a chunk. */
TT__INLINE void tt__wg_start(tt_wg *w, const tt_ndrange *nd, size_t g,
                             void *local) {
  w->nd = nd;
  w->local = local;
  w->id[0] = g % nd->groups[0];
  g /= nd->groups[0];
  w->id[1] = g % nd->groups[1];
  w->id[2] = g / nd->groups[1];
  tt__wg_dim(w, 0);
  tt__wg_dim(w, 1);
  tt__wg_dim(w, 2);
}

/* Advance to the next linear group (dimension 0 fastest). */
TT__INLINE void tt__wg_next(tt_wg *w) {
  const tt_ndrange *nd = w->nd;
  if (++w->id[0] == nd->groups[0]) {
    w->id[0] = 0;
    if (++w->id[1] == nd->groups[1]) {
      w->id[1] = 0;
      ++w->id[2];
      tt__wg_dim(w, 2);
    }
    tt__wg_dim(w, 1);
  }
  tt__wg_dim(w, 0);
}

/* a[d] for d < 3, dflt beyond (OpenCL's answer for an unused dimension is
 * already in a[]).  Inlined with a constant d this is one load. */
TT__INLINE size_t tt__pick(unsigned d, const size_t *a, size_t dflt) {
  return d < TT_MAX_DIMS ? a[d] : dflt;
}
TT__INLINE size_t tt__pick_lid(unsigned d, size_t l0, size_t l1, size_t l2) {
  return d == 0 ? l0 : d == 1 ? l1 : d == 2 ? l2 : 0;
}

/* ---- queries: anywhere in a kernel ---------------------------------- */
#define tt_get_work_dim() (tt__wg->nd->dims)
#define tt_get_global_size(d) tt__pick((d), tt__wg->nd->global, 1)
#define tt_get_global_offset(d) tt__pick((d), tt__wg->nd->offset, 0)
#define tt_get_enqueued_local_size(d) tt__pick((d), tt__wg->nd->local, 1)
#define tt_get_local_size(d) tt__pick((d), tt__wg->size, 1)
#define tt_get_num_groups(d) tt__pick((d), tt__wg->nd->groups, 1)
#define tt_get_group_id(d) tt__pick((d), tt__wg->id, 0)
#define tt_local_mem() (tt__wg->local)
#define tt_local_mem_size() (tt__wg->nd->local_mem)

/* ---- queries: inside a work-item ------------------------------------ */
#define tt_get_local_id(d) tt__pick_lid((d), tt__l0, tt__l1, tt__l2)
#define tt_get_global_id(d)                                                    \
  (tt__pick((d), tt__wg->base, 0) + tt_get_local_id(d))
#define tt_get_local_linear_id()                                               \
  (tt__l0 + tt__wg->size[0] * (tt__l1 + tt__wg->size[1] * tt__l2))
#define tt_get_global_linear_id()                                              \
  ((tt__wg->base[0] - tt__wg->nd->offset[0] + tt__l0) +                        \
   tt__wg->nd->global[0] *                                                     \
       ((tt__wg->base[1] - tt__wg->nd->offset[1] + tt__l1) +                   \
        tt__wg->nd->global[1] *                                                \
            (tt__wg->base[2] - tt__wg->nd->offset[2] + tt__l2)))

/* One phase: its statement runs for every work-item of the group, dimension
 * 0 innermost so that the loop the compiler vectorises is the contiguous one.
 * The innermost one-trip loop makes `continue` and `break` end the item; the
 * compiler removes it. */
#define TT_PHASE                                                               \
  for (size_t tt__l2 = 0, tt__n2 = tt__wg->size[2]; tt__l2 < tt__n2; ++tt__l2) \
    for (size_t tt__l1 = 0, tt__n1 = tt__wg->size[1]; tt__l1 < tt__n1;         \
         ++tt__l1)                                                             \
      for (size_t tt__l0 = 0, tt__n0 = tt__wg->size[0]; tt__l0 < tt__n0;       \
           ++tt__l0)                                                           \
        for (int tt__once = 1; tt__once; tt__once = 0)

/* A phase for the work-items whose local linear id is below count: the same
 * as TT_PHASE { if (tt_get_local_linear_id() >= count) continue; ... }
 * without visiting the others.  Tree-shaped phases (reductions, scans) then
 * cost what their active items cost, not the whole group per level.  count
 * is evaluated once. */
#define TT_PHASE_FIRST(count)                                                  \
  for (size_t tt__c = (count), tt__l2 = 0, tt__n2 = tt__wg->size[2];           \
       tt__l2 < tt__n2; ++tt__l2)                                              \
    for (size_t tt__l1 = 0, tt__n1 = tt__wg->size[1]; tt__l1 < tt__n1;         \
         ++tt__l1)                                                             \
      for (size_t tt__l0 = 0,                                                  \
                  tt__b = (tt__l1 + tt__n1 * tt__l2) * tt__wg->size[0],        \
                  tt__n0 = tt__b >= tt__c ? 0                                  \
                           : tt__c - tt__b < tt__wg->size[0] ? tt__c - tt__b   \
                                                             : tt__wg->size[0]; \
           tt__l0 < tt__n0; ++tt__l0)                                          \
        for (int tt__once = 1; tt__once; tt__once = 0)

/* The chunk function and the kernel object; the group function is defined by
 * what follows the macro.  The argument block is copied into the chunk's
 * frame: a copy whose address never escapes is one the compiler knows the
 * kernel's stores cannot change, so p->a stays in a register instead of
 * being reloaded after every store through p->y (measured: GCC 12 reloads
 * it in axpy's loop otherwise). */
#define TT__KERNEL_COMMON(name, T)                                             \
  TT__INLINE void name##__group(const T *, const tt_wg *);                     \
  static void name##__chunk(const void *tt__args, const tt_ndrange *tt__nd,    \
                            size_t tt__begin, size_t tt__end,                  \
                            void *tt__local) {                                 \
    tt_wg tt__w;                                                               \
    if (tt__begin >= tt__end)                                                  \
      return;                                                                  \
    const T tt__copy = *(const T *)tt__args;                                   \
    tt__wg_start(&tt__w, tt__nd, tt__begin, tt__local);                        \
    for (size_t tt__g = tt__begin;;) {                                         \
      name##__group(&tt__copy, &tt__w);                                        \
      if (++tt__g == tt__end)                                                  \
        break;                                                                 \
      tt__wg_next(&tt__w);                                                     \
    }                                                                          \
  }                                                                            \
  const tt_kernel name = {name##__chunk, #name}

/* Define a kernel by the body of one work-item; args names a `const T *`. */
#define TT_KERNEL(name, T, args)                                               \
  TT__KERNEL_COMMON(name, T);                                                  \
  TT__INLINE void name##__item(const T *, const tt_wg *, size_t, size_t,       \
                               size_t);                                        \
  TT__INLINE void name##__group(const T *tt__a, const tt_wg *tt__wg) {         \
    TT_PHASE name##__item(tt__a, tt__wg, tt__l0, tt__l1, tt__l2);              \
  }                                                                            \
  TT__INLINE void name##__item(const T *args TT__UNUSED,                       \
                               const tt_wg *tt__wg TT__UNUSED,                 \
                               size_t tt__l0 TT__UNUSED,                       \
                               size_t tt__l1 TT__UNUSED,                       \
                               size_t tt__l2 TT__UNUSED)

/* Define a kernel by the body of one work-group written in TT_PHASE blocks. */
#define TT_KERNEL_GROUP(name, T, args)                                         \
  TT__KERNEL_COMMON(name, T);                                                  \
  TT__INLINE void name##__group(const T *args TT__UNUSED,                      \
                                const tt_wg *tt__wg TT__UNUSED)

/* Declare a kernel defined in another file, with a type-checked launcher. */
#define TT_KERNEL_DECLARE(name, T)                                             \
  extern const tt_kernel name;                                                 \
  static inline int name##_launch(const T *args,                               \
                                  const tt_launch_config *cfg) {               \
    return tt_launch(&name, args, cfg);                                        \
  }

#endif
