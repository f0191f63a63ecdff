/* teams PoCL driver: submit (ops->submit, tp_submit) -- what happens to a
 * command when libpocl hands it over, decided here and nowhere else: run it
 * now in the submitting thread, list it and run the list here (eager), list
 * it for a waiter or the progress thread (lazy), or leave it until its
 * dependencies end (its notify lists it).  queue.c carries the decision
 * out (tp_sched_submit), in one call.
 *
 * Submit (submit=auto, the default; docs/protocol.md item 36).  Lazy, but a
 * kernel launch that is ready at submit, predicted to end within the grace
 * period, and with no argument the host may write while it runs
 * (host_may_write), runs at once in the submitting thread when the
 * scheduler is idle: queue.c's claim_now takes the right to run listed
 * commands only when nothing is listed and nobody holds that right, so it
 * is the next command in list order anyway.  Deferred, each command of a
 * burst of short launches waited, cold and behind a dependency on the one
 * before, for the clFinish; run at once it costs what PoCL's synchronous
 * basic driver pays.
 *
 * The prediction is the kernel's loop record, the one the team's way keeps
 * for the region the launch will run (launcher/way.h; read through
 * tt__foreach_range_last_ns): the last timed region's own time, under the
 * key run.c's tt__foreach_range_site call will use -- the work-group
 * function, the work-groups' count within a factor of two, the device's
 * participants (one for a single work-group or cu=1: such a range keeps
 * its time too, launcher/range.c) -- in the submitting thread's table,
 * the thread that would run it.  No number means lazy: a loop this thread
 * has not run (a kernel's first launch, or one the progress thread ran),
 * a function swapped in since (compile.c), a kernel of several
 * work-groups whose kernel library prints each line itself (it runs on
 * one participant, under a key this look does not use: run.c, printf), a
 * sub-device (it waits for the team rather than run on a thread outside
 * its participants), a built-in kernel.  A wrong prediction costs time only: a
 * kernel that cannot wait for the host ends whoever runs it.
 *
 * A longer kernel runs at once too when this thread waits for its launches
 * at once: the last three of its launches this rule decides for (ready at
 * submit, predicted, and not within the grace period; the only ones that
 * read the clock) were each waited for (clFinish, clWaitForEvents, a blocking
 * command: join or wait_event) within 1/TT__OVERHEAD_DIV of the kernel's
 * time after their submit returned, with no submit in between (the median
 * of the three; a submit before the wait is a launch not waited for at
 * once).  Listed, such a launch is run
 * by its waiter anyway, and the listing only costs: it arms the progress
 * thread, whose wake-up after the host's own work is a futex call on the
 * submitting thread and a thread that takes a CPU from the team's worker
 * while the kernel runs (64 groups of 5 us after 1 ms of host work on the
 * 2-core guest: 214 us a launch listed, 167 run at once; docs/benchmarks.md,
 * "The progress thread after the host's work").  Run at once, it delays
 * the host's work between submit and wait by at most that work, under
 * 1/TT__OVERHEAD_DIV of the kernel: the overlap lost is within the
 * runtime's budget.  A host that computes between its launches and its
 * waits, or enqueues a burst, keeps them lazy (host_waits).  (On PoCL 7.1
 * libpocl's own enqueue returns to the host 2-7 ms after a launch of
 * milliseconds that ran in it, which reads as the host's work: there such
 * launches alternate between at once and listed; tests/test-pocl-queue.c.)
 *
 * Rejected: a launch history of the driver's own beside the record (the
 * driver timed every 16th launch around the region the way times already:
 * two clocks, at different moments, for one number). */
#include "teams-pocl.h"

/* Memory the host may write while a kernel runs, so that the kernel may
 * wait for it: a raw pointer (SVM, USM) or a buffer or image made with
 * CL_MEM_USE_HOST_PTR (PoCL's regression/test_infinite_loop and
 * tests/test-pocl-timing.c's gate kernel spin on such memory).  Other
 * memory changes only through commands, which cannot run while the
 * submitting thread runs this one. */
static int
host_may_write (_cl_command_node *cmd)
{
  const pocl_kernel_metadata_t *meta = cmd->command.run.kernel->meta;
  for (unsigned i = 0; i < meta->num_args; ++i)
    {
      const struct pocl_argument *al = &cmd->command.run.arguments[i];
      pocl_argument_type t = meta->arg_info[i].type;
      if ((t != POCL_ARG_TYPE_POINTER && t != POCL_ARG_TYPE_IMAGE)
          || ARG_IS_LOCAL (meta->arg_info[i]) || al->value == NULL)
        continue;
      if (t == POCL_ARG_TYPE_POINTER && TP_ARG_IS_RAW_PTR (al))
        return 1;
      cl_mem mem = *(cl_mem *)al->value;
      while (mem->parent != NULL)
        mem = mem->parent;
      if (mem->flags & CL_MEM_USE_HOST_PTR)
        return 1;
    }
  return 0;
}

/* This thread's launches and its waits for them: when its last submit of a
 * kernel returned with no wait since (0: none), and how long after their
 * submits its last three launches were waited for (UINT64_MAX: another
 * submit came first), the median of which host_waits_within reads.  Only
 * this thread reads or writes it. */
typedef struct host_waits {
  uint64_t submitted_at;
  uint64_t after[3];
  unsigned n;
} host_waits;
static __thread host_waits waits;

static void
waited_after (host_waits *w, uint64_t ns)
{
  w->after[w->n % 3] = ns;
  w->n++;
  w->submitted_at = 0;
}

void
tp_submit_waited (void)
{
  host_waits *w = &waits;
  if (w->submitted_at)
    waited_after (w, tp_now_ns () - w->submitted_at);
}

/* Whether this thread waited for each of its last three launches (their
 * median) within ns of their submit. */
static int
host_waits_within (const host_waits *w, uint64_t ns)
{
  if (w->n < 3)
    return 0;
  return tt__median3 ((double)w->after[0], (double)w->after[1],
                     (double)w->after[2])
         < (double)ns;
}

/* submit=auto: whether a ready ND-range, its work-group function resolved,
 * may run at once in this thread (Submit, above); *by_waits: whether the
 * host-waits record decides for it -- predicted, and not within the grace
 * period -- so that the record keeps it (a launch with no prediction, or a
 * short one, would put its waits among the longer kernels': two short
 * launches with no number yet, each waited for at once, would be the
 * median of the last three).  Its event locked. */
static int
now_ok (const tp_device *d, _cl_command_node *cmd, int *by_waits)
{
  if (cmd->type != CL_COMMAND_NDRANGE_KERNEL
      || cmd->device->parent_device != NULL
      || cmd->command.run.kernel->program->num_builtin_kernels > 0)
    return 0;
  /* The key of run.c's run_on_team: p is the device's participants (a
   * kernel that prints runs on one, whose record this key never finds). */
  uint64_t ns = tt__foreach_range_last_ns (
      cmd->command.run.wg, tp_ndrange_groups (cmd), d->set.grain,
      d->set.participants, d->set.schedule);
  int short_one = ns > 0 && ns < d->set.grace_ns;
  *by_waits = ns > 0 && !short_one;
  return ns > 0
         && (short_one
             || host_waits_within (&waits, ns / TT__OVERHEAD_DIV))
         && !host_may_write (cmd);
}

/* Entered with the event locked (libpocl's submit contract); queue.c
 * unlocks it. */
void
tp_submit (_cl_command_node *node, cl_command_queue cq)
{
  tp_abi_check_command (node, cq);
  tp_device *d = node->device->data; /* the command's device */
  host_waits *w = &waits;
  if (node->type == CL_COMMAND_NDRANGE_KERNEL && w->submitted_at)
    waited_after (w, UINT64_MAX); /* the last launch: not waited for at once */
  cl_event ev = node->sync.event.event;

  /* Resolve the work-group function here, before the event can go
   * RUNNING, as basic does; no compile but a kernel's first launch on a
   * cold cache and built-in kernels (resolve.c). */
  if (node->type == CL_COMMAND_NDRANGE_KERNEL)
    {
      int r = tp_jit_resolve (d, node);
      if (r > 0)
        TP_NODE_FLAGS (node) |= TP_JIT;
      else if (r < 0)
        TP_NODE_FLAGS (node) |= TP_FAILED; /* no work-group function */
    }

  /* Listed now when ready or failed, unless notify listed it already
   * (docs/protocol.md item 31). */
  TP_NODE_FLAGS (node) |= TP_SUBMITTED;
  tp_submit_how how = TP_HOW_WAIT;
  int by_waits = 0;
  if (!(TP_NODE_FLAGS (node) & TP_LISTED))
    {
      if (TP_NODE_FLAGS (node) & TP_FAILED)
        how = TP_HOW_LIST;
      else if (pocl_command_is_ready (ev))
        {
          pocl_update_event_submitted (ev);
          how = TP_HOW_LIST;
        }
    }
  if (how == TP_HOW_LIST && d->set.submit == TP_SUBMIT_EAGER)
    how = TP_HOW_DRAIN;
  else if (how == TP_HOW_LIST && d->set.submit == TP_SUBMIT_AUTO
           && !(TP_NODE_FLAGS (node) & TP_FAILED)
           && now_ok (d, node, &by_waits))
    how = TP_HOW_NOW;
  tp_sched_submit (node, how);
  /* Only for the launches the record decides for (now_ok): two clock reads
   * less for the others, 40 ns a short launch on the 2-core guest. */
  if (by_waits)
    w->submitted_at = tp_now_ns ();
}
