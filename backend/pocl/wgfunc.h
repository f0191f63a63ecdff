/* teams PoCL driver: work-group functions without a stall at first launch
 * (internal): what wgfunc.c, compile.c and resolve.c share, and their locks.
 *
 * PoCL 3.1 resolves a launch's work-group function at submit: a miss in its
 * in-memory cache (kernel build, local size, zero global offset, small
 * grid) compiles a function specialised for those, under one global codegen
 * lock, links it into a shared object with the system linker and dlopens
 * it, so that the launch waits for a codegen per new local size when the
 * disk cache is cold (docs/measurements.md).  The "generic" function (cache
 * directory 0-0-0: local size and offsets read at run time) serves any
 * launch but is built only for program binaries.  Here:
 *
 *   - clCreateKernel (ops->create_kernel) loads the kernel's generic
 *     function when the disk cache holds it (a dlopen), and builds nothing:
 *     a kernel the application never launches is never compiled, so a
 *     compiler that crashes on it cannot end the application (wgfunc.c,
 *     Why nothing is built in clCreateKernel);
 *   - the kernel's first launch in the process builds the generic function
 *     when clCreateKernel found none, in the launching thread at submit
 *     (tp_generic), as PoCL's own drivers build the launch's function
 *     there;
 *   - a launch (tp_jit_resolve, from submit: resolve.c) whose specialised
 *     function has landed runs it.  The first launch of a specialisation in
 *     the process whose function the disk cache holds (an earlier run built
 *     it) loads it there and then, a dlopen as on PoCL's own drivers, and
 *     runs it; one whose function is not on disk runs the generic one and
 *     queues a build on the compile thread (compile.c), which swaps it in
 *     when it is built: later launches take it.  So a run with a warm cache
 *     launches no generic function and queues no build, and its exit waits
 *     for none (compile.c, Process exit): a build still running when a
 *     program ends delays the end of the process by as much as the build
 *     takes, once per specialisation missing (docs/measurements.md).
 *
 * The functions loaded are kept in one table per process (struct tp_fn,
 * wgfunc.c), shared by every kernel object of a build; a kernel object
 * (struct tp_kernel) holds the entries it ran.
 *
 * Locks
 * =====
 * tk->lock (per kernel, struct tp_kernel) guards insertion into tk->spec
 * and the setting of tk->generic at a first launch;
 * fns.lock (wgfunc.c) the table (its list, the entries' refs and linked);
 * jit.lock (compile.c) the job list.  None is held while calling PoCL,
 * except that tp_jit_resolve runs inside submit with the command's event
 * locked and takes tk->lock, under which a kernel's first launch may build
 * its generic function (tp_generic: PoCL's codegen and LLVM locks, as
 * PoCL's own drivers build a launch's function inside submit with the
 * event locked; whoever holds those locks never waits for ours), then
 * fns.lock (tp_fn_spec) or jit.lock
 * (tp_compile_queue) (order event -> tk->lock -> fns.lock, and tk->lock ->
 * jit.lock; fns.lock and jit.lock are never held together); and
 * tp_free_kernel, which libpocl calls with the program (from PoCL 6, also
 * the kernel) locked, takes jit.lock, waiting there for the kernel's build
 * in progress (compile.c, Kernels), then fns.lock.  No dlopen or dlclose
 * runs under fns.lock.  The compile thread takes PoCL's codegen and LLVM
 * locks with none of ours held. */
#ifndef TEAMS_POCL_WGFUNC_H
#define TEAMS_POCL_WGFUNC_H

#include "teams-pocl.h"

#include <string.h>

/* One work-group function of a kernel build, shared by every kernel object
 * of that build: the key is PoCL's kernel hash (device, program build,
 * kernel name: pocl_calculate_kernel_hash in lib/CL/pocl_build.c), which
 * names the binary, plus the specialisation PoCL's cache directory names
 * (or `generic`).  The key fields are immutable; see The table (wgfunc.c). */
typedef struct tp_fn {
  struct tp_fn *prev, *next;      /* the table's list; fns.lock */
  pocl_kernel_hash_t hash;
  size_t local[3];
  int generic, goffs0, smallgrid;
  _Atomic (void *) wg;            /* NULL until built (specialised ones) */
  void *dl;                       /* written by the compile thread before wg */
  unsigned refs;                  /* kernel objects and build jobs; fns.lock */
  int linked;                     /* in the table; fns.lock */
  int prints;                     /* the function's object calls PoCL's
                                     printf flush (generic ones; immutable
                                     once entered) */
} tp_fn;

/* A kernel object's use of a specialised function: a list that only grows
 * (see tp_jit_resolve), freed with the kernel. */
typedef struct tp_use {
  struct tp_use *next;            /* immutable once published */
  tp_fn *fn;                      /* held (refs) until the kernel is freed */
} tp_use;

/* The driver's state for one kernel object on one device. */
typedef struct tp_kernel {
  pthread_mutex_t lock;           /* serialises insertions into spec */
  _Atomic (tp_use *) spec;        /* list head; see tp_jit_resolve */
  /* The generic function, held: set once, by create_kernel (from the disk
   * cache) or by a launch (tp_generic, under lock, with a release store);
   * read with acquire.  NULL until then: the launches take PoCL's path. */
  _Atomic (tp_fn *) generic;
} tp_kernel;

/* A build for the compile thread (compile.c); allocated by the launch that
 * queues it (resolve.c), freed by the thread. */
typedef struct tp_job {
  struct tp_job *next;
  cl_kernel kernel;               /* not held: the kernel's free drops
                                     or waits for the job (compile.c,
                                     Kernels) */
  tp_device *d;
  tp_fn *fn;                      /* held by the job */
  _cl_command_node cmd;           /* what PoCL's build reads of a launch */
} tp_job;

/* Whether f is the function for the key. */
static inline int
tp_fn_is (const tp_fn *f, const pocl_kernel_hash_t hash, const size_t *local,
          int generic, int goffs0, int smallgrid)
{
  return f->generic == generic && f->local[0] == local[0]
         && f->local[1] == local[1] && f->local[2] == local[2]
         && f->goffs0 == goffs0 && f->smallgrid == smallgrid
         && memcmp (f->hash, hash, sizeof (pocl_kernel_hash_t)) == 0;
}

/* ---- wgfunc.c: the table, and loading from PoCL's disk cache --------------------- */
/* The table's entry for a specialisation, held for a kernel object, or a
 * new one that the caller's build job also holds (*created).  fns.lock. */
tp_fn *tp_fn_spec (const pocl_kernel_hash_t hash, const size_t *local,
                   int goffs0, int smallgrid, int *created);
/* Takes f out of the table.  fns.lock. */
void tp_fn_forget (tp_fn *f);
/* Drops a hold on f.  fns.lock; may dlclose, after releasing it. */
void tp_fn_release (tp_fn *f);
/* A work-group function and its handle (*dl) from PoCL's disk cache: built
 * there first if missing (tp_wg_load), or only when it is already there
 * (tp_wg_load_cached).  NULL when there is none. */
void *tp_wg_load (_cl_command_node *cmd, int specialised, void **dl);
void *tp_wg_load_cached (_cl_command_node *node, int specialised, void **dl);
/* The kernel's generic function, built now if create_kernel found none on
 * disk; NULL when it cannot be had (this launch then takes PoCL's path).
 * Called from submit with node's event locked; takes tk->lock (during the
 * build), then fns.lock. */
tp_fn *tp_generic (tp_kernel *tk, _cl_command_node *node);

/* ---- compile.c: the background compile thread ------------------------------------ */
/* Gives the calling thread, once, the wait for the build in progress at
 * its end or exit (compile.c, Process exit). */
void tp_compile_watch_thread (void);
/* Queues the build j of f for the launch `node`.  Called with tk->lock
 * held; takes jit.lock. */
void tp_compile_queue (tp_device *d, _cl_command_node *node, tp_fn *f,
                       tp_job *j);
/* Drops the builds of the kernel k not started and waits for its build
 * in progress: from k's free (tp_free_kernel).  Takes jit.lock, then
 * fns.lock. */
void tp_compile_drop_kernel (cl_kernel k);
/* Resumes the builds a thread's end paused.  Called by a launch that runs
 * a generic function. */
void tp_compile_resume (void);

#endif
