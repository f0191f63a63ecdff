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
 * build lands meanwhile.
 *
 * Also kept per kernel object here: its launch history, from which submit
 * (submit=auto, queue.c) predicts whether a launch ends within the grace
 * period (Launch history, below). */
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
  /* A built-in kernel's data is basic's (driver.c): never a tp_kernel. */
  tp_kernel *tk = k->data != NULL && k->program->num_builtin_kernels == 0
                      ? k->data[node->program_device_i]
                      : NULL;
  /* The generic function: built here at the kernel's first launch when
   * clCreateKernel found none on disk; without one, PoCL's path. */
  tp_fn *generic = tk != NULL ? tp_generic (tk, node) : NULL;
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
 * TP_TIME_EVERY-th launch otherwise: the clock reads are a visible share
 * of an empty launch (docs/measurements.md, "The PoCL driver's queue"), and
 * a kernel whose cost per group grew with the same arguments (its data) is
 * noticed within that many launches.  Built-in kernels keep no history (no
 * tp_kernel): they never run at once. */
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

/* Whether node's kernel prints where PoCL's kernel library prints each
 * line itself (run.c, printf): read off its generic function's object. */
int
tp_jit_prints (_cl_command_node *node)
{
  tp_kernel *tk = history_of (node);
  tp_fn *g = tk != NULL ? tt_atomic_load_acquire (&tk->generic) : NULL;
  return g != NULL && g->prints;
}
