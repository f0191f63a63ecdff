/* teams PoCL driver: work-group functions without a stall at first launch.
 *
 * Protocol
 * ========
 * PoCL 3.1 resolves a launch's work-group function at submit: a miss in its
 * in-memory cache (kernel build, local size, zero global offset, small
 * grid) compiles a function specialised for those, under one global codegen
 * lock, links it into a shared object with the system linker and dlopens
 * it (~100 ms per new local size with a cold disk cache, on this 2-core
 * machine).  The "generic" function (cache directory 0-0-0: local size and
 * offsets read at run time) serves any launch but is built only for
 * program binaries.  Here:
 *
 *   - clCreateKernel (ops->create_kernel, outside the program lock) builds
 *     or finds the kernel's generic function on disk and dlopens it, in the
 *     calling thread;
 *   - a launch (tp_jit_resolve, from submit) whose specialised function has
 *     landed runs it.  The first launch of a specialisation in the process
 *     whose function the disk cache holds (an earlier run built it) loads
 *     it there and then, a dlopen as on PoCL's own drivers, and runs it;
 *     one whose function is not on disk runs the generic one and queues a
 *     build on the compile thread, which swaps it in when it is built:
 *     later launches take it.  So a run with a warm cache launches no
 *     generic function and queues no build, and its exit waits for none
 *     (Process exit, below): a build still running when a program ends is
 *     what made one run of a program on a cache missing some of its
 *     specialisations take seconds longer than the next (a CLBlast ssymm
 *     sequence: 0.2-0.35 s in main, 1.9-2.9 s to the end of the process,
 *     once per specialisation missing, load average 2.5).
 *
 * Files and names are PoCL's: pocl_check_kernel_disk_cache finds or builds
 * <kernel>/<lx>-<ly>-<lz>[-goffs0][-smallgrid]/<kernel>.so exactly as a
 * launch on PoCL's own drivers would, so the disk cache is shared with them
 * and warm runs find what cold ones built.  What we keep instead of PoCL's
 * dlhandle cache is one table per process of the functions loaded (struct
 * tp_fn), keyed as PoCL's own cache is, by the kernel's build hash and the
 * specialisation, and shared by every kernel object of that build: a
 * kernel object (struct tp_kernel, kernel->data[i]) holds the entries it
 * ran, and a command holds a reference on its kernel
 * (clEnqueueNDRangeKernel), so a function is never unloaded under a
 * running command; unheld entries stay for the next kernel object (The
 * table, below).  With a table per kernel object instead, a program that
 * creates a kernel for every call (CLBlast: each routine call creates and
 * releases its kernels) ran every launch on the generic function and
 * queued a build that only served a kernel already gone: CLBlast's sgemv
 * (XgemvFastRot, row-major 4096 x 4096) took 10.0 ms a call on teams
 * against 7.4 ms on pthread, whose own generic function takes 15.3 ms
 * (POCL_WORK_GROUP_SPECIALIZATION=0; medians of 5 alternating runs, 2-core
 * machine).  PoCL's own cache stays in use for what we do not handle:
 * built-in kernels (their names are rewritten around the lookup) and
 * kernels whose generic function could not be loaded.
 *
 * Why the generic build is synchronous in clCreateKernel.  Measured on
 * this 2-core machine: one codegen cold (~150 ms of clCreateKernel), one
 * dlopen warm (~0.1 ms).  A program creates a kernel to launch it: done in
 * the background the codegen would only move the same wait into the first
 * enqueue (nothing else runs in between on the usual path: set arguments,
 * enqueue), and there is no idle core to hide it in.  clBuildProgram,
 * which already costs ~1.2 s cold, stays as it is.
 *
 * The compile thread.  One per process, started at the first queued build,
 * at nice 19: it competes for a core only when the team leaves one idle,
 * and the launches that run on the generic function meanwhile are not
 * slowed by it.  A build job holds a reference on its kernel (taken at
 * submit, released by the thread after the build), so clReleaseKernel and
 * clReleaseProgram may come at any time: the last release then happens on
 * the compile thread, which holds no lock of ours when it makes it.
 *
 * Process exit.  LLVM must not be torn down under a build: a specialised
 * codegen constructs function-local statics of LLVM the generic one did not
 * (seen: two, on the first specialised build of a process), and exit()
 * destroys them first, being the newest atexit entries, while the build
 * still uses them (crashes in instruction selection, observed).  No atexit
 * handler of ours can run before them, but exit() runs the calling thread's
 * thread_local destructors before any atexit handler.  So every thread that
 * creates a kernel or queues a build gets one (quiesce_on_thread_exit): it
 * waits for the build in progress and pauses the compile thread, which then
 * starts no build until the next launch that runs on a generic function
 * resumes it (a thread that merely ends delays the queued builds until
 * then).  An atexit handler also drops the queued builds and waits for the
 * one in progress, for an exit from a thread we never saw.
 *
 * Locks: tk->lock (per kernel) guards insertion into tk->spec; fns.lock
 * the table (its list, the entries' refs and linked); jit.lock the job
 * list.  None is held while calling PoCL, except that tp_jit_resolve runs
 * inside submit with the command's event locked and takes tk->lock, then
 * fns.lock or jit.lock (order event -> tk->lock -> fns.lock, and
 * tk->lock -> jit.lock; fns.lock and jit.lock are never held together),
 * and retains the kernel (its object lock, never held by PoCL while it
 * takes an event lock); and tp_free_kernel, which libpocl calls with the
 * program locked, takes fns.lock.  No dlopen or dlclose runs under
 * fns.lock.  The compile thread takes PoCL's codegen and LLVM locks with
 * none of ours held.
 *
 * Rejected: calling pocl_check_kernel_dlhandle_cache from the background
 * (it holds PoCL's global dlhandle lock for the whole compile, so every
 * other launch's lookup, and every command's release, would wait for it);
 * building specialisations on the progress thread (it must stay free to run
 * commands nobody waits for); a background generic build at create_kernel
 * (see above); at exit, stopping the compile thread where it is instead of
 * waiting (it may hold a malloc arena's or LLVM's lock that exit's
 * destructors need). */
#include "teams-pocl.h"

#include "teams-pocl-icd.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One work-group function of a kernel build, shared by every kernel object
 * of that build: the key is PoCL's kernel hash (device, program build,
 * kernel name: pocl_calculate_kernel_hash in lib/CL/pocl_build.c), which
 * names the binary, plus the specialisation PoCL's cache directory names
 * (or `generic`).  The key fields are immutable; see The table. */
typedef struct tp_fn {
  struct tp_fn *prev, *next;      /* the table's list; fns.lock */
  pocl_kernel_hash_t hash;
  size_t local[3];
  int generic, goffs0, smallgrid;
  _Atomic (void *) wg;            /* NULL until built (specialised ones) */
  void *dl;                       /* written by the compile thread before wg */
  unsigned refs;                  /* kernel objects and build jobs; fns.lock */
  int linked;                     /* in the table; fns.lock */
} tp_fn;

/* The table: every function loaded, most recently looked up first.  An
 * entry lives while a kernel object or a build job holds it, and after
 * that among the TP_FN_IDLE most recently used unheld ones (PoCL's own
 * dlhandle cache keeps 128 loaded, MAX_CACHE_ITEMS in
 * lib/CL/devices/common.c); older unheld ones are unloaded.  So a program
 * that creates a kernel object per call (CLBlast does, for every routine
 * call) finds the functions its previous calls loaded: no disk lookup and
 * dlopen in clCreateKernel, and no launch on the generic function. */
#define TP_FN_IDLE 128
static struct {
  pthread_mutex_t lock;
  tp_fn *head;
  unsigned idle;                  /* linked entries with refs == 0 */
} fns = { .lock = PTHREAD_MUTEX_INITIALIZER };

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
  tp_fn *generic;                 /* held; immutable after create_kernel */
  /* Launch history (submit=auto, Launch history below); relaxed: written
   * by the thread that runs a launch, read at submit, and a stale value
   * costs at most one launch run lazily, or one run at once that the next
   * timed launch corrects. */
  _Atomic uint64_t group_ns;      /* ns per work-group of the last timed
                                     launch; 0 until one was timed */
  _Atomic uint64_t timed_groups;  /* that launch's work-groups */
  _Atomic uint64_t timed_args;    /* its by-value arguments' fingerprint */
  _Atomic uint32_t launches;      /* launches since */
} tp_kernel;

typedef struct tp_job {
  struct tp_job *next;
  cl_kernel kernel;               /* a reference held by the job */
  tp_device *d;
  tp_fn *fn;                      /* held by the job */
  _cl_command_node cmd;           /* what PoCL's build reads of a launch */
} tp_job;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;            /* jobs queued, busy cleared, shutdown */
  tp_job *head, *tail;
  int started, busy, shutdown;
  _Atomic int paused;             /* written under lock; see Process exit */
  pthread_t thread;
} jit = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void watch_this_thread (void);

static int
specialisation_on (void)
{
  /* PoCL's switch for generic-only runs; read once (racing first readers
   * store the same value). */
  static _Atomic int v = -1;
  int x = tt_atomic_load_relaxed (&v);
  if (x < 0)
    {
      x = pocl_get_bool_option ("POCL_WORK_GROUP_SPECIALIZATION", 1);
      tt_atomic_store_relaxed (&v, x);
    }
  return x;
}

/* Opens the shared object at path and finds <name>'s work-group function
 * in it.  Returns the function and its handle in *dl, or NULL. */
static void *
open_wg (const char *path, const char *name, void **dl)
{
  void *h = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      fprintf (stderr, "teams: dlopen(%s): %s\n", path, dlerror ());
      return NULL;
    }
  /* The names PoCL's loader tries (pocl_check_kernel_dlhandle_cache). */
  char sym[1024];
  void *wg = NULL;
  if (snprintf (sym, sizeof sym, "_pocl_kernel_%s_workgroup", name)
      < (int)sizeof sym)
    wg = dlsym (h, sym);
  if (wg == NULL && snprintf (sym, sizeof sym, "pocl_kernel_%s_workgroup", name)
                        < (int)sizeof sym)
    wg = dlsym (h, sym);
  if (wg == NULL)
    {
      dlclose (h);
      return NULL;
    }
  *dl = h;
  return wg;
}

/* Loads <kernel>'s work-group function from the shared object PoCL's disk
 * cache has (or builds now) for cmd's specialisation.  Returns the function
 * and its handle in *dl, or NULL. */
static void *
load_wg (_cl_command_node *cmd, int specialised, void **dl)
{
  char *path = tp_disk_cache_path (cmd, specialised);
  if (path == NULL)
    return NULL;
  void *wg = open_wg (path, cmd->command.run.kernel->name, dl);
  free (path);
  return wg;
}

/* The shared object in the cache directory dir (of a kernel and a
 * specialisation) that holds the work-group function of the kernel `name`,
 * into path[TP_PATH_MAX]: <dir>/<name>.so, or where PoCL clipped a long
 * name (pocl-compat.h, TP_CACHE_NAME_MAX), the one .so file the directory
 * holds.  Returns 0, or -1 when there is none. */
static int
cached_object (const char *dir, const char *name, char *path)
{
  if (strlen (name) <= TP_CACHE_NAME_MAX)
    return snprintf (path, TP_PATH_MAX, "%s/%s.so", dir, name) < TP_PATH_MAX
                   && access (path, R_OK) == 0
               ? 0
               : -1;
  DIR *d = opendir (dir);
  if (d == NULL)
    return -1;
  int rc = -1;
  struct dirent *e;
  while (rc != 0 && (e = readdir (d)) != NULL)
    {
      size_t n = strlen (e->d_name);
      if (n > 3 && strcmp (e->d_name + n - 3, ".so") == 0
          && snprintf (path, TP_PATH_MAX, "%s/%s", dir, e->d_name)
                 < TP_PATH_MAX)
        rc = access (path, R_OK);
    }
  closedir (d);
  return rc;
}

/* The function specialised for the launch `node` when the disk cache
 * already holds it (the file PoCL's disk cache lookup would find), as
 * load_wg; NULL when it does not: nothing is built. */
static void *
load_cached_wg (_cl_command_node *node, void **dl)
{
  cl_kernel k = node->command.run.kernel;
  char dir[TP_PATH_MAX], path[TP_PATH_MAX];
  if (k->program->devices[node->program_device_i]->spmd)
    return NULL;
  pocl_cache_kernel_cachedir_path (dir, k->program, node->program_device_i,
                                   k, "", node, 1);
  return cached_object (dir, k->name, path) == 0 ? open_wg (path, k->name, dl)
                                                 : NULL;
}

/* ---- the table ---------------------------------------------------------------- */

static int
fn_is (const tp_fn *f, const pocl_kernel_hash_t hash, const size_t *local,
       int generic, int goffs0, int smallgrid)
{
  return f->generic == generic && f->local[0] == local[0]
         && f->local[1] == local[1] && f->local[2] == local[2]
         && f->goffs0 == goffs0 && f->smallgrid == smallgrid
         && memcmp (f->hash, hash, sizeof (pocl_kernel_hash_t)) == 0;
}

/* Precondition: fns.lock held. */
static void
fn_unlink_locked (tp_fn *f)
{
  if (f->prev)
    f->prev->next = f->next;
  else
    fns.head = f->next;
  if (f->next)
    f->next->prev = f->prev;
  f->prev = f->next = NULL;
  f->linked = 0;
}

/* Precondition: fns.lock held. */
static void
fn_push_locked (tp_fn *f)
{
  f->prev = NULL;
  f->next = fns.head;
  if (fns.head)
    fns.head->prev = f;
  fns.head = f;
  f->linked = 1;
}

/* The entry for the key, held once more and moved to the front, or NULL.
 * Precondition: fns.lock held. */
static tp_fn *
fn_find_locked (const pocl_kernel_hash_t hash, const size_t *local,
                int generic, int goffs0, int smallgrid)
{
  for (tp_fn *f = fns.head; f != NULL; f = f->next)
    if (fn_is (f, hash, local, generic, goffs0, smallgrid))
      {
        if (f->refs++ == 0)
          fns.idle--;
        if (f != fns.head)
          {
            fn_unlink_locked (f);
            fn_push_locked (f);
          }
        return f;
      }
  return NULL;
}

/* A new entry for the key, held once, not yet in the table; NULL without
 * memory. */
static tp_fn *
fn_new (const pocl_kernel_hash_t hash, const size_t *local, int generic,
        int goffs0, int smallgrid)
{
  tp_fn *f = calloc (1, sizeof *f);
  if (f == NULL)
    return NULL;
  memcpy (f->hash, hash, sizeof f->hash);
  memcpy (f->local, local, sizeof f->local);
  f->generic = generic;
  f->goffs0 = goffs0;
  f->smallgrid = smallgrid;
  tt_atomic_init (&f->wg, NULL);
  f->refs = 1;
  return f;
}

/* Takes f, built or not, out of the table (its build failed or never
 * started), so that the next kernel object of its build tries again; the
 * kernels that hold it run the generic function. */
static void
fn_forget (tp_fn *f)
{
  pthread_mutex_lock (&fns.lock);
  if (f->linked)
    fn_unlink_locked (f);
  pthread_mutex_unlock (&fns.lock);
}

/* Drops a hold on f.  An unheld entry stays in the table among the
 * TP_FN_IDLE most recent ones; beyond them the least recently used unheld
 * entry is unloaded, and an unheld entry that left the table (its build
 * failed) is freed.  Takes fns.lock; dlclose runs after it is released. */
static void
fn_release (tp_fn *f)
{
  tp_fn *gone = NULL;
  pthread_mutex_lock (&fns.lock);
  if (--f->refs == 0)
    {
      if (!f->linked)
        gone = f;
      else if (++fns.idle > TP_FN_IDLE)
        {
          tp_fn *last = NULL;
          for (tp_fn *e = fns.head; e != NULL; e = e->next)
            if (e->refs == 0)
              last = e;
          fn_unlink_locked (last);
          fns.idle--;
          gone = last;
        }
    }
  pthread_mutex_unlock (&fns.lock);
  if (gone != NULL)
    {
      if (gone->dl != NULL)
        dlclose (gone->dl);
      free (gone);
    }
}

/* ---- create and free (ops) ------------------------------------------------------ */

/* The kernel's generic function, held: from the table, else loaded (built
 * first if the disk cache lacks it) and entered.  NULL when it cannot be
 * loaded or no memory is left for its entry. */
static tp_fn *
generic_fn (_cl_command_node *cmd)
{
  const uint8_t *hash = cmd->command.run.hash;
  const size_t *local = cmd->command.run.pc.local_size;
  pthread_mutex_lock (&fns.lock);
  tp_fn *f = fn_find_locked (hash, local, 1, 0, 0);
  pthread_mutex_unlock (&fns.lock);
  if (f != NULL)
    return f;
  tp_fn *n = fn_new (hash, local, 1, 0, 0);
  if (n == NULL)
    return NULL;
  void *dl = NULL;
  void *wg = load_wg (cmd, 0, &dl);
  if (wg == NULL)
    {
      free (n);
      return NULL;
    }
  n->dl = dl;
  tt_atomic_init (&n->wg, wg);
  /* Another thread may have entered it meanwhile (the load ran unlocked):
   * then that entry serves, and this load is undone. */
  pthread_mutex_lock (&fns.lock);
  f = fn_find_locked (hash, local, 1, 0, 0);
  if (f == NULL)
    fn_push_locked (n);
  pthread_mutex_unlock (&fns.lock);
  if (f != NULL)
    {
      dlclose (dl);
      free (n);
      return f;
    }
  return n;
}

int
tp_create_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                  unsigned program_device_i)
{
  /* Programs that are not executables keep PoCL's path (built-in kernels
   * never come here: driver.c gives them basic's). */
  if (program->binary_type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE
      || kernel->data == NULL)
    return CL_SUCCESS;
  tp_kernel *tk = calloc (1, sizeof *tk);
  if (tk == NULL)
    return CL_SUCCESS; /* PoCL's path still works */
  watch_this_thread ();

  /* The generic function, as pocl_driver_build_poclbinary asks for it:
   * local size 0 (or the required one), specialised for nothing. */
  _cl_command_node cmd;
  memset (&cmd, 0, sizeof cmd);
  cmd.type = CL_COMMAND_NDRANGE_KERNEL;
  cmd.device = device;
  cmd.program_device_i = program_device_i;
  cmd.command.run.kernel = kernel;
  cmd.command.run.hash = kernel->meta->build_hash[program_device_i];
  for (int i = 0; i < 3; i++)
    cmd.command.run.pc.local_size[i] = kernel->meta->reqd_wg_size[i];
  if (kernel->meta->reqd_wg_size[0] == 0 || kernel->meta->reqd_wg_size[1] == 0
      || kernel->meta->reqd_wg_size[2] == 0)
    for (int i = 0; i < 3; i++)
      cmd.command.run.pc.local_size[i] = 0;
  tk->generic = generic_fn (&cmd);
  if (tk->generic == NULL)
    {
      free (tk);
      return CL_SUCCESS;
    }
  pthread_mutex_init (&tk->lock, NULL);
  tt_atomic_init (&tk->spec, NULL);
  tt_atomic_init (&tk->group_ns, 0);
  tt_atomic_init (&tk->timed_groups, 0);
  tt_atomic_init (&tk->timed_args, 0);
  tt_atomic_init (&tk->launches, 0);
  kernel->data[program_device_i] = tk;
  return CL_SUCCESS;
}

/* Called by clReleaseKernel on the last reference, with the program locked:
 * no command and no build job refers to the kernel any more.  Its
 * functions stay in the table for the next kernel object of the same
 * build. */
int
tp_free_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                unsigned program_device_i)
{
  if (kernel->data == NULL)
    return CL_SUCCESS;
  tp_kernel *tk = kernel->data[program_device_i];
  if (tk == NULL)
    return CL_SUCCESS;
  kernel->data[program_device_i] = NULL;
  tp_use *u = tt_atomic_load_relaxed (&tk->spec);
  while (u != NULL)
    {
      tp_use *next = u->next;
      fn_release (u->fn);
      free (u);
      u = next;
    }
  fn_release (tk->generic);
  pthread_mutex_destroy (&tk->lock);
  free (tk);
  return CL_SUCCESS;
}

/* ---- the compile thread ------------------------------------------------------------- */

static void *
compile_main (void *arg)
{
  (void)arg;
  /* Nice 19 for this thread only (Linux: per-thread nice values). */
  setpriority (PRIO_PROCESS, (id_t)syscall (SYS_gettid), 19);
  pthread_mutex_lock (&jit.lock);
  for (;;)
    {
      while ((jit.head == NULL || tt_atomic_load_relaxed (&jit.paused))
             && !jit.shutdown)
        pthread_cond_wait (&jit.cond, &jit.lock);
      if (jit.shutdown)
        break;
      tp_job *j = jit.head;
      jit.head = j->next;
      if (jit.head == NULL)
        jit.tail = NULL;
      jit.busy = 1;
      pthread_mutex_unlock (&jit.lock);

      void *dl = NULL;
      void *wg = load_wg (&j->cmd, 1, &dl);
      if (wg != NULL)
        {
          /* The swap: dl first, then wg with release; readers load wg with
           * acquire (tp_jit_resolve).  A failed build leaves wg NULL: the
           * launches keep the generic function. */
          j->fn->dl = dl;
          tt_atomic_store_release (&j->fn->wg, wg);
          tt_atomic_fetch_add_relaxed (&j->d->n_jit_swapped, 1);
        }
      else
        fn_forget (j->fn);
      fn_release (j->fn);
      tp_device *d = j->d;
      /* May be the last reference: frees the kernel (tp_free_kernel) and
       * releases its program. */
      tp_icd_release_kernel (j->kernel);
      free (j);
      tt_atomic_fetch_sub_relaxed (&d->n_jit_pending, 1);

      pthread_mutex_lock (&jit.lock);
      jit.busy = 0;
      pthread_cond_broadcast (&jit.cond);
    }
  pthread_mutex_unlock (&jit.lock);
  return NULL;
}

/* atexit: no build may run while the process tears LLVM down.  Builds not
 * started are dropped (their kernel references with them: the process
 * ends); the one in progress is waited for. */
static void
compile_shutdown (void)
{
  pthread_mutex_lock (&jit.lock);
  jit.shutdown = 1;
  jit.head = jit.tail = NULL;
  pthread_cond_broadcast (&jit.cond);
  while (jit.busy)
    pthread_cond_wait (&jit.cond, &jit.lock);
  pthread_mutex_unlock (&jit.lock);
}

/* A thread that ends (or calls exit) waits for the build in progress and
 * leaves the compile thread paused (see Process exit at the top). */
static void
quiesce_on_thread_exit (void *arg)
{
  (void)arg;
  pthread_mutex_lock (&jit.lock);
  tt_atomic_store_relaxed (&jit.paused, 1);
  while (jit.busy)
    pthread_cond_wait (&jit.cond, &jit.lock);
  pthread_mutex_unlock (&jit.lock);
}

static void
resume_builds (void)
{
  pthread_mutex_lock (&jit.lock);
  tt_atomic_store_relaxed (&jit.paused, 0);
  pthread_cond_broadcast (&jit.cond);
  pthread_mutex_unlock (&jit.lock);
}

#ifdef __GLIBC__
/* glibc's registration of thread_local destructors (what C++ uses). */
extern int __cxa_thread_atexit_impl (void (*fn) (void *), void *obj,
                                     void *dso);
extern void *__dso_handle;
static __thread int tls_watched;
#endif

/* Gives the calling thread its quiesce_on_thread_exit, once. */
static void
watch_this_thread (void)
{
#ifdef __GLIBC__
  if (tls_watched)
    return;
  if (__cxa_thread_atexit_impl (quiesce_on_thread_exit, NULL, &__dso_handle)
      == 0)
    tls_watched = 1;
#endif
}

/* Queues j; returns 0, or -1 when no thread can build it. */
static int
enqueue_job (tp_job *j)
{
  int rc = 0;
  pthread_mutex_lock (&jit.lock);
  if (jit.shutdown)
    rc = -1;
  else if (!jit.started)
    {
      if (pthread_create (&jit.thread, NULL, compile_main, NULL) != 0)
        rc = -1;
      else
        {
          pthread_detach (jit.thread);
          jit.started = 1;
          atexit (compile_shutdown);
        }
    }
  if (rc == 0)
    {
      j->next = NULL;
      if (jit.tail)
        jit.tail->next = j;
      else
        jit.head = j;
      jit.tail = j;
      tt_atomic_store_relaxed (&jit.paused, 0);
      pthread_cond_signal (&jit.cond);
    }
  pthread_mutex_unlock (&jit.lock);
  return rc;
}

/* ---- at submit ------------------------------------------------------------------------ */

static tp_use *
find (tp_use *u, const pocl_kernel_hash_t hash, const size_t *local,
      int goffs0, int smallgrid)
{
  for (; u != NULL; u = u->next)
    if (fn_is (u->fn, hash, local, 0, goffs0, smallgrid))
      return u;
  return NULL;
}

/* Queues j, the build of f (a new entry of the table, held for j), for the
 * launch `node`.  Called with tk->lock held. */
static void
queue_build (tp_device *d, _cl_command_node *node, tp_fn *f, tp_job *j)
{
  cl_kernel k = node->command.run.kernel;
  j->kernel = k;
  j->d = d;
  j->fn = f;
  /* The launch as PoCL's build reads it: kernel, device, hash, the
   * specialisation (local size, offsets, grid width, the two force flags). */
  j->cmd.type = CL_COMMAND_NDRANGE_KERNEL;
  j->cmd.device = node->device;
  j->cmd.program_device_i = node->program_device_i;
  j->cmd.command.run.kernel = k;
  j->cmd.command.run.hash = node->command.run.hash;
  j->cmd.command.run.pc = node->command.run.pc;
  j->cmd.command.run.pc.printf_buffer = NULL;
  j->cmd.command.run.pc.printf_buffer_position = NULL;
  j->cmd.command.run.force_large_grid_wg_func
      = node->command.run.force_large_grid_wg_func;
  watch_this_thread ();
  tp_icd_retain_kernel (k);
  tt_atomic_fetch_add_relaxed (&d->n_jit_pending, 1);
  if (enqueue_job (j) != 0)
    {
      tt_atomic_fetch_sub_relaxed (&d->n_jit_pending, 1);
      tp_icd_release_kernel (k);
      fn_forget (f); /* never built */
      fn_release (f);
      free (j);
    }
}

/* The specialised function for the key, held for a kernel object: the
 * table's entry, or a new one (held twice: for the kernel and for the
 * build job j, which the caller then queues; *created says so).  NULL
 * without memory for a new entry. */
static tp_fn *
spec_fn (const pocl_kernel_hash_t hash, const size_t *local, int goffs0,
         int smallgrid, int *created)
{
  *created = 0;
  pthread_mutex_lock (&fns.lock);
  tp_fn *f = fn_find_locked (hash, local, 0, goffs0, smallgrid);
  if (f == NULL && (f = fn_new (hash, local, 0, goffs0, smallgrid)) != NULL)
    {
      f->refs = 2;
      fn_push_locked (f);
      *created = 1;
    }
  pthread_mutex_unlock (&fns.lock);
  return f;
}

/* Sets node->command.run.wg.  Returns 1 when it took a reference on PoCL's
 * dlhandle cache (to release after the run), 0 otherwise.  Called from
 * submit with the node's event locked.
 *
 * Thread safety of the swap: tk->spec is a list that only grows at its head
 * (under tk->lock, published with a release store) and whose nodes are
 * freed only with the kernel, each holding its table entry until then (so
 * the entry's key, immutable, and its function stay); an entry's wg goes
 * from NULL to the built function once (release store by the compile
 * thread, after dl).  A submitter reads the head and wg with acquire loads
 * and no lock: it sees either NULL (and runs the generic function) or a
 * complete function.  A command keeps the function it was given at submit;
 * only later submits see a swap.  Only a kernel's first launch of a
 * specialisation takes fns.lock, to find the function in the table or
 * enter it. */
int
tp_jit_resolve (tp_device *d, _cl_command_node *node)
{
  _cl_command_run *run = &node->command.run;
  cl_kernel k = run->kernel;
  /* A built-in kernel's data is basic's (driver.c): never a tp_kernel. */
  tp_kernel *tk = k->data != NULL && k->program->num_builtin_kernels == 0
                      ? k->data[node->program_device_i]
                      : NULL;
  if (tk == NULL)
    {
      /* Defined built-in kernels (PoCL 7) are PoCL's host code (run.c). */
      if (TP_IS_DEFINED_BUILTIN (k->program))
        return 0;
      char *saved = NULL;
      pocl_sanitize_builtin_kernel_name (k, &saved);
      int rc = tp_dlhandle_get (node);
      pocl_restore_builtin_kernel_name (k, saved);
      return rc == 0 ? 1 : -1;
    }
  if (run->force_generic_wg_func || !specialisation_on ())
    {
      run->wg = tt_atomic_load_relaxed (&tk->generic->wg);
      return 0;
    }

  const size_t *local = run->pc.local_size;
  int goffs0 = run->pc.global_offset[0] == 0 && run->pc.global_offset[1] == 0
               && run->pc.global_offset[2] == 0;
  /* As PoCL names the cache directory (pocl_cache_kernel_cachedir_path). */
  int smallgrid = !run->force_large_grid_wg_func
                  && pocl_cmd_max_grid_dim_width (run)
                         < node->device->grid_width_specialization_limit;

  const uint8_t *hash = run->hash;
  tp_use *u = find (tt_atomic_load_acquire (&tk->spec), hash, local, goffs0,
                    smallgrid);
  if (u == NULL)
    {
      pthread_mutex_lock (&tk->lock);
      tp_use *head = tt_atomic_load_relaxed (&tk->spec);
      u = find (head, hash, local, goffs0, smallgrid);
      if (u == NULL)
        {
          /* The kernel's use of the table's function, with a build job
           * when the function is new to the table, or nothing: a new entry
           * published without a job would never be built, and every
           * launch of this specialisation would run the generic function.
           * Without memory for all of them, nothing is published and the
           * next launch tries again. */
          tp_use *n = calloc (1, sizeof *n);
          tp_job *j = n != NULL ? calloc (1, sizeof *j) : NULL;
          int created = 0;
          tp_fn *f = j != NULL ? spec_fn (hash, local, goffs0, smallgrid,
                                          &created)
                               : NULL;
          if (f != NULL)
            {
              n->fn = f;
              n->next = head;
              tt_atomic_store_release (&tk->spec, n);
              void *dl = NULL, *wg = NULL;
              if (created)
                wg = load_cached_wg (node, &dl);
              if (wg != NULL)
                {
                  /* Built by an earlier run: loaded now, as PoCL's own
                   * drivers do (a dlopen), and no job; the job's hold
                   * goes. */
                  f->dl = dl;
                  tt_atomic_store_release (&f->wg, wg);
                  tt_atomic_fetch_add_relaxed (&d->n_jit_loaded, 1);
                  fn_release (f);
                  free (j);
                  u = n;
                }
              else if (created)
                queue_build (d, node, f, j); /* this launch: generic */
              else
                {
                  u = n; /* another kernel object's: maybe built */
                  free (j);
                }
            }
          else
            {
              free (j);
              free (n);
            }
        }
      pthread_mutex_unlock (&tk->lock);
    }
  /* u is NULL where this launch queued the build: it runs the generic
   * function even if the build has landed meanwhile, so that the first
   * launch of a specialisation new to the process always does. */
  if (u != NULL)
    {
      void *wg = tt_atomic_load_acquire (&u->fn->wg);
      if (wg != NULL)
        {
          run->wg = wg;
          return 0;
        }
    }
  run->wg = tt_atomic_load_relaxed (&tk->generic->wg);
  tt_atomic_fetch_add_relaxed (&d->n_generic, 1);
  /* A pending build held back by a thread's end (see Process exit). */
  if (tt_atomic_load_relaxed (&jit.paused))
    {
      watch_this_thread ();
      resume_builds ();
    }
  return 0;
}

/* ---- launch history (submit=auto) ------------------------------------------------ */

/* Launch history.  Whether a ready launch may run at once in the thread
 * that submits it (queue.c, Submit) depends on its predicted cost: the
 * work-groups of this launch at the cost per work-group of the kernel
 * object's last timed launch, when that launch had the same by-value
 * arguments and local sizes (a loop count or a size among them changes
 * the cost) and at least half as many work-groups (a cost per group
 * measured on a small grid says little about a large one); otherwise the
 * cost is unknown.  A launch is timed (two clock reads around
 * tp_run_ndrange) whenever its cost was unknown, and every
 * TP_TIME_EVERY-th launch otherwise: the clock reads are a tenth of an
 * empty launch, and a kernel whose cost per group grew with the same
 * arguments (its data) is noticed within that many launches.  Built-in
 * kernels keep no history (no tp_kernel): they never run at once. */
#define TP_TIME_EVERY 16

static tp_kernel *
history_of (_cl_command_node *node)
{
  cl_kernel k = node->command.run.kernel;
  if (k->data == NULL || k->program->num_builtin_kernels > 0)
    return NULL;
  return k->data[node->program_device_i];
}

/* A fingerprint (FNV-1a) of a launch's by-value arguments and local
 * sizes; never 0. */
static uint64_t
args_of (_cl_command_node *node)
{
  const pocl_kernel_metadata_t *meta = node->command.run.kernel->meta;
  uint64_t h = 14695981039346656037ull;
  for (unsigned i = 0; i < meta->num_args; ++i)
    {
      const struct pocl_argument *al = &node->command.run.arguments[i];
      const unsigned char *b = NULL;
      size_t n = 0;
      if (ARG_IS_LOCAL (meta->arg_info[i]))
        {
          b = (const unsigned char *)&al->size;
          n = sizeof al->size;
        }
      else if (meta->arg_info[i].type == POCL_ARG_TYPE_NONE
               && al->value != NULL)
        {
          b = al->value;
          n = al->size;
        }
      for (size_t j = 0; j < n; ++j)
        h = (h ^ b[j]) * 1099511628211ull;
    }
  return h != 0 ? h : 1;
}

/* The cost is known for a launch of `groups` with arguments `args`. */
static int
known (tp_kernel *tk, size_t groups, uint64_t args)
{
  return tt_atomic_load_relaxed (&tk->group_ns) != 0
         && tt_atomic_load_relaxed (&tk->timed_args) == args
         && groups <= 2 * tt_atomic_load_relaxed (&tk->timed_groups);
}

int
tp_jit_time_this (_cl_command_node *node, size_t groups)
{
  tp_kernel *tk = history_of (node);
  if (tk == NULL)
    return 0;
  uint32_t n = tt_atomic_load_relaxed (&tk->launches);
  tt_atomic_store_relaxed (&tk->launches, n + 1);
  return n + 1 >= TP_TIME_EVERY || !known (tk, groups, args_of (node));
}

void
tp_jit_timed (_cl_command_node *node, uint64_t ns, size_t groups)
{
  tp_kernel *tk = history_of (node);
  if (tk == NULL || groups == 0)
    return;
  uint64_t per = ns / groups;
  tt_atomic_store_relaxed (&tk->group_ns, per > 0 ? per : 1);
  tt_atomic_store_relaxed (&tk->timed_groups, groups);
  tt_atomic_store_relaxed (&tk->timed_args, args_of (node));
  tt_atomic_store_relaxed (&tk->launches, 0);
}

uint64_t
tp_jit_predict_ns (_cl_command_node *node, size_t groups)
{
  tp_kernel *tk = history_of (node);
  if (tk == NULL || !known (tk, groups, args_of (node)))
    return UINT64_MAX;
  uint64_t per = tt_atomic_load_relaxed (&tk->group_ns);
  return per > UINT64_MAX / (groups ? groups : 1) ? UINT64_MAX
                                                  : per * groups;
}
