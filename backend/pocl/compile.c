/* teams PoCL driver: the background compile thread, which builds the
 * specialised work-group functions launches queue and swaps them in, and
 * its quiescing at process exit.  The design and the lock order are in
 * wgfunc.h.
 *
 * The compile thread.  One per process, started at the first queued build,
 * at the process's own priority: a build holds PoCL's LLVM lock, which the
 * application's threads wait for in clBuildProgram and clCreateKernel, so a
 * thread that runs below them would hold them up for as long as other
 * work keeps it off the CPUs (priority inversion; see Rejected).  A
 * built function is published by a release store of its entry's wg, after
 * dl (compile_main); tp_jit_resolve reads wg with acquire.
 *
 * Kernels.  A build job holds no reference on its kernel: the kernel must
 * leave its program when the application's last clReleaseKernel (or its
 * last command) lets go of it, since clBuildProgram and clCompileProgram
 * refuse a program with kernels attached (CL_INVALID_OPERATION), and a
 * program is rebuilt with other options right after its kernels are
 * released (the OpenCL CTS's compiler tests: -D, -I, -cl-denorms-are-zero).
 * So the kernel's free (tp_free_kernel: the last reference, no command on
 * it, libpocl holding the program's lock) calls tp_compile_drop_kernel,
 * which drops the kernel's builds not started and waits for its build in
 * progress: a build reads the kernel, its metadata and its program's IR,
 * which a rebuild frees.  The wait cannot close a cycle with PoCL's locks:
 * a build takes only PoCL's codegen and LLVM locks, and PoCL takes those
 * after object locks, never an object lock under them.  Meanwhile the
 * program stays locked: its other users wait for that build too.  A
 * dropped build's entry leaves the table, as a failed build's does
 * (tp_fn_forget): the next kernel object of the build that launches that
 * specialisation queues it again, while kernel objects that already hold
 * the entry run the generic function for it.
 *
 * Process exit.  LLVM must not be torn down under a build: a specialised
 * codegen constructs function-local statics of LLVM the generic one did
 * not, and exit() destroys them first, being the newest atexit entries,
 * while the build still uses them (the build then crashes).  No atexit
 * handler of ours can run before them, but exit() runs the calling thread's
 * thread_local destructors before any atexit handler.  So every thread that
 * creates a kernel or queues a build gets one (quiesce_on_thread_exit): it
 * waits for the build in progress and pauses the compile thread, which then
 * starts no build until the next launch that runs on a generic function
 * resumes it (a thread that merely ends delays the queued builds until
 * then).  An atexit handler also drops the queued builds and waits for the
 * one in progress, for an exit from a thread we never saw.
 *
 * Locks: jit.lock guards the job list and started, busy, shutdown; paused
 * is written under it and read without it by a launch (tp_compile_resume).
 * tp_compile_queue takes it under tk->lock; it is never held with fns.lock
 * (wgfunc.h, Locks).  The thread builds (PoCL's codegen and LLVM locks)
 * with none of ours held.
 *
 * Rejected: a build job holding a reference on its kernel (the kernel
 * stayed attached to its program until the build ended, after the
 * application had released it, and clBuildProgram failed); at the kernel's
 * free, waiting for its builds not started too (a release, or the command
 * that dropped the last reference, would wait for a codegen per
 * specialisation; the generic function serves them meanwhile); nice 19 for
 * the compile thread (so that it would compete for a
 * core only when the team leaves one idle): beside any busy process its
 * share of a CPU became a few percent, and every clBuildProgram of the
 * application waited behind its build for minutes (docs/measurements.md,
 * "The PoCL driver's work-group functions"); calling
 * pocl_check_kernel_dlhandle_cache from the background (it holds PoCL's
 * global dlhandle lock for the whole compile, so every other launch's
 * lookup, and every command's release, would wait for it);
 * building specialisations on the progress thread (it must stay free to run
 * commands nobody waits for); at exit, stopping the compile thread where it
 * is instead of waiting (it may hold a malloc arena's or LLVM's lock that
 * exit's destructors need). */
#include "wgfunc.h"

#include <stdlib.h>
#include <unistd.h>

/* The job list and the compile thread's state (see Locks). */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;            /* jobs queued, busy cleared, shutdown */
  tp_job *head, *tail;
  int started, busy, shutdown;
  cl_kernel building;             /* the kernel of the build in progress
                                     (busy), for tp_compile_drop_kernel */
  _Atomic int paused;             /* written under lock; see Process exit */
  pthread_t thread;
} jit = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *
compile_main (void *arg)
{
  (void)arg;
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
      jit.building = j->kernel;
      pthread_mutex_unlock (&jit.lock);

      void *dl = NULL;
      void *wg = tp_wg_load (&j->cmd, 1, &dl);
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
        tp_fn_forget (j->fn);
      tp_fn_release (j->fn);
      tt_atomic_fetch_sub_relaxed (&j->d->n_jit_pending, 1);
      free (j);

      pthread_mutex_lock (&jit.lock);
      jit.busy = 0;
      jit.building = NULL; /* its free may go on (tp_compile_drop_kernel) */
      pthread_cond_broadcast (&jit.cond);
    }
  pthread_mutex_unlock (&jit.lock);
  return NULL;
}

/* atexit: no build may run while the process tears LLVM down.  Builds not
 * started are dropped (the process ends); the one in progress is waited
 * for. */
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
void
tp_compile_watch_thread (void)
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

/* Queues j, the build of f (a new entry of the table, held for j), for the
 * launch `node`.  Called with tk->lock held. */
void
tp_compile_queue (tp_device *d, _cl_command_node *node, tp_fn *f, tp_job *j)
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
  tp_compile_watch_thread ();
  tt_atomic_fetch_add_relaxed (&d->n_jit_pending, 1);
  if (enqueue_job (j) != 0)
    {
      tt_atomic_fetch_sub_relaxed (&d->n_jit_pending, 1);
      tp_fn_forget (f); /* never built */
      tp_fn_release (f);
      free (j);
    }
}

/* The kernel k is being freed: its builds not started are dropped, and its
 * build in progress is waited for (see Kernels at the top).  No build of k
 * can be queued any more: a launch that queues one holds a reference on k.
 * Takes jit.lock, then fns.lock after releasing it (tp_fn_forget). */
void
tp_compile_drop_kernel (cl_kernel k)
{
  tp_job *dropped = NULL;
  pthread_mutex_lock (&jit.lock);
  tp_job **link = &jit.head, *last = NULL;
  while (*link != NULL)
    {
      tp_job *j = *link;
      if (j->kernel == k)
        {
          *link = j->next;
          j->next = dropped;
          dropped = j;
        }
      else
        {
          last = j;
          link = &j->next;
        }
    }
  jit.tail = last;
  while (jit.busy && jit.building == k)
    pthread_cond_wait (&jit.cond, &jit.lock);
  pthread_mutex_unlock (&jit.lock);
  while (dropped != NULL)
    {
      tp_job *j = dropped;
      dropped = j->next;
      tp_fn_forget (j->fn); /* never built */
      tp_fn_release (j->fn);
      tt_atomic_fetch_sub_relaxed (&j->d->n_jit_pending, 1);
      free (j);
    }
}

/* A launch that runs a generic function resumes the builds a thread's end
 * held back (see Process exit). */
void
tp_compile_resume (void)
{
  if (tt_atomic_load_relaxed (&jit.paused))
    {
      tp_compile_watch_thread ();
      resume_builds ();
    }
}
