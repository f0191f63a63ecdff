/* teams PoCL driver: the work-group function a launch runs, chosen at
 * submit (tp_jit_resolve): the specialisation's function when it is built,
 * loaded from PoCL's disk cache at its first launch in the process when an
 * earlier run built it, else the kernel's generic function while the build
 * is queued on the compile thread.  The design and the lock order are in
 * wgfunc.h.
 *
 * Protocol: a launch's common path takes no lock (the argument is at
 * tp_jit_resolve); only a kernel's first launch of a specialisation takes
 * tk->lock, and under it fns.lock (to find or enter the table's entry) or
 * jit.lock (to queue its build): wgfunc.h, Locks.  The first launch of a
 * specialisation new to the process runs the generic function, even if the
 * build lands meanwhile. */
#include "wgfunc.h"

#include <stdlib.h>

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

/* The kernel object's per-device state; NULL for a built-in kernel, whose
 * data is basic's (driver.c). */
static tp_kernel *
kernel_of (_cl_command_node *node)
{
  cl_kernel k = node->command.run.kernel;
  if (k->data == NULL || k->program->num_builtin_kernels > 0)
    return NULL;
  return k->data[node->program_device_i];
}

static tp_use *
find (tp_use *u, const pocl_kernel_hash_t hash, const size_t *local,
      int goffs0, int smallgrid)
{
  for (; u != NULL; u = u->next)
    if (tp_fn_is (u->fn, hash, local, 0, goffs0, smallgrid))
      return u;
  return NULL;
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
  tp_kernel *tk = kernel_of (node);
  /* The generic function: built here at the kernel's first launch when
   * clCreateKernel found none on disk; without one, PoCL's path. */
  tp_fn *generic = tk != NULL ? tp_generic (tk, node) : NULL;
  /* Where PoCL's kernel library prints each line itself, a kernel that
   * prints runs on one participant (run.c, printf): read off its generic
   * function's object, whichever function the launch runs. */
  if (generic != NULL && generic->prints)
    TP_NODE_FLAGS (node) |= TP_PRINTS;
  if (generic == NULL)
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
      run->wg = tt_atomic_load_relaxed (&generic->wg);
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
          tp_fn *f = j != NULL ? tp_fn_spec (hash, local, goffs0, smallgrid,
                                             &created)
                               : NULL;
          if (f != NULL)
            {
              n->fn = f;
              n->next = head;
              tt_atomic_store_release (&tk->spec, n);
              void *dl = NULL, *wg = NULL;
              if (created)
                wg = tp_wg_load_cached (node, 1, &dl);
              if (wg != NULL)
                {
                  /* Built by an earlier run: loaded now, as PoCL's own
                   * drivers do (a dlopen), and no job; the job's hold
                   * goes. */
                  f->dl = dl;
                  tt_atomic_store_release (&f->wg, wg);
                  tt_atomic_fetch_add_relaxed (&d->n_jit_loaded, 1);
                  tp_fn_release (f);
                  free (j);
                  u = n;
                }
              else if (created)
                tp_compile_queue (d, node, f, j); /* this launch: generic */
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
  run->wg = tt_atomic_load_relaxed (&generic->wg);
  tt_atomic_fetch_add_relaxed (&d->n_generic, 1);
  /* A pending build held back by a thread's end (compile.c, Process
   * exit). */
  tp_compile_resume ();
  return 0;
}
