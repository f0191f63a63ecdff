/* teams PoCL driver: who runs a command, and when.
 *
 * Protocol
 * ========
 * Goal: no thread hand-off where none is needed.  A ready command is run by
 * a thread that waits for it (clFinish, clWaitForEvents, a blocking read or
 * map) -- lazy mode, the default -- or by the thread that submits it (eager
 * mode).  That thread is participant 0 of the team region the command's
 * work-groups run in (run.c).  Only a command that nobody comes for within
 * the grace period (grace_ns, 50 us by default) goes to the progress thread,
 * so commands nobody waits for still make progress, and an enqueue never
 * blocks on its command (PoCL's own tests enqueue a kernel that never ends).
 * Measured on this 2-core machine (design section 5): an empty kernel costs
 * 0.3-0.5 us run synchronously by its caller, 5-19 us through a dispatcher
 * thread, 27-43 us on PoCL's pthread driver; the hand-offs are the cost.
 *
 * Locks and their order
 *   event lock (PoCL's ev->pocl_lock)  ->  d->lock
 * d->lock guards the ready list (ready_head/tail, node->next of listed
 * nodes, list_since), runners, sleeping and the progress thread's state.  No
 * event or queue lock is ever taken while d->lock is held, and no lock of
 * ours is held while a command runs: pocl_exec_command ends in
 * pocl_update_event_complete, which takes the queue lock then the event lock
 * and calls notify (us) for dependents with two event locks held.
 *
 * node->ready (the field is the driver's; libpocl never reads it), written
 * only with the node's event locked:
 *   TP_SUBMITTED  submit has run for the node;
 *   TP_FAILED     a dependency failed: the node is failed instead of run;
 *   TP_LISTED     the node went on the ready list (at most once);
 *   TP_JIT        the node holds a reference on its dlhandle cache entry.
 * A node is listed when it is submitted and either failed or ready
 * (wait_list empty), by whichever of submit / notify sees that last: both
 * hold the event lock, and libpocl may call notify before submit.  The
 * thread that pops a node from the list (under d->lock) owns it: it runs it
 * (status SUBMITTED -> RUNNING -> COMPLETE through pocl_exec_command) or
 * fails it.  notify never runs or fails anything itself: PoCL 3.1's basic
 * driver deadlocks running commands inside notify, and failing there would
 * take the queue lock under two event locks.
 *
 * Runners.  A runner is a thread that promises to look at the list under
 * d->lock before it stops being one, and to run what it finds: a thread in
 * drain() (eager submitter, waiter, progress thread) or in a wait loop.  A
 * push (list_locked) needs a wake-up only when there is no runner:
 *   - the pushing thread drains right after (eager submit) or is draining
 *     this device (tls_draining): nothing to do;
 *   - runners > 0: signal sleeping waiters, if any;
 *   - otherwise the progress thread is armed (arm_progress_locked).
 * A runner that leaves with the list non-empty and no other runner arms the
 * progress thread (leave_locked).
 *
 * The progress thread and the grace period.  States (d->progress_state):
 * SLEEPING (indefinite wait), GRACE (timed wait), RUNNING.  Arming wakes it
 * only from SLEEPING (one futex call) and puts it in GRACE: pushes during
 * GRACE or RUNNING cost nothing, so a tight enqueue+wait loop pays at most
 * one wake-up per grace period.  In GRACE the thread waits until grace_ns
 * after it was armed and after the last push -- a burst of enqueues is one
 * unit, so 1000 enqueues and a clFinish run on the finishing thread -- but
 * no longer than TP_BURST_GRACES grace periods after the oldest listed
 * command; then it runs what is still listed (a waiter took it otherwise),
 * or sleeps if nothing is.  While a runner exists it sleeps: the runner
 * runs the list or re-arms it.
 *
 * Waiting without lost wake-ups.  finish_gen is bumped (seq_cst) by
 * notify_event_finished, which libpocl calls after the finished command left
 * its queue's count and after dependents were notified.  A waiter reads
 * finish_gen before it checks its condition (cq->command_count or
 * ev->status, under their own locks); then, under d->lock, if the list is
 * empty and finish_gen unchanged, it increments `sleeping` (seq_cst), reads
 * finish_gen once more, and sleeps only if it is still unchanged.  The
 * finisher bumps finish_gen before it reads `sleeping`, and broadcasts under
 * d->lock when it sees a sleeper.  In the seq_cst order either the waiter's
 * second read sees the new finish_gen or the finisher sees the sleeper, and
 * the broadcast cannot fall between that read and the sleep because the
 * waiter holds d->lock there.  A finisher pays one atomic increment and one
 * load when nobody sleeps -- a waiter that is busy running the queue
 * itself is not woken for every command it finishes.
 *
 * Rejected: a dispatcher thread that runs everything (pthread's model; the
 * hand-off costs 5-19 us per command); running commands inside notify (PoCL
 * 3.1 deadlocks, see above); waking the progress thread at every push (a
 * futex call plus two context switches on the other core per command); a
 * progress thread that polls while idle (steals a core from the team on a
 * 2-core machine); eager submit as the default (an enqueue that blocks until
 * its kernel ends hangs programs whose kernels wait for the host). */
#include "teams-pocl.h"

#include "builtin_kernels.hh"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TP_SUBMITTED 1
#define TP_FAILED 2
#define TP_LISTED 4
#define TP_JIT 8

/* The device this thread is draining (innermost), NULL outside drain(). */
static __thread tp_device *tls_draining;

typedef enum push_how {
  PUSH_SELF, /* the pusher drains this device right after (eager submit) */
  PUSH_OTHER /* anyone else: lazy submit, notify */
} push_how;

enum { TP_PROGRESS_SLEEPING, TP_PROGRESS_GRACE, TP_PROGRESS_RUNNING };

static uint64_t
now_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef enum run_by { BY_SUBMIT, BY_WAITER, BY_PROGRESS } run_by;

static void *progress_main (void *arg);

/* Precondition: d->lock held.  Makes sure the progress thread will look at
 * the list within the grace period. */
static void
arm_progress_locked (tp_device *d)
{
  if (d->shutdown)
    return;
  if (!d->progress_started)
    {
      d->progress_state = TP_PROGRESS_GRACE;
      d->armed_at = now_ns ();
      if (pthread_create (&d->progress, NULL, progress_main, d) != 0)
        {
          /* No thread: the commands still run when someone waits. */
          fprintf (stderr, "teams: cannot start the progress thread; "
                           "commands run only when waited for\n");
          return;
        }
      d->progress_started = 1;
      return;
    }
  if (d->progress_state == TP_PROGRESS_SLEEPING)
    {
      d->progress_state = TP_PROGRESS_GRACE;
      d->armed_at = now_ns ();
      pthread_cond_signal (&d->progress_cond);
    }
}

/* Precondition: d->lock held and the node's event locked (lock order event ->
 * d).  Appends the node and makes sure a runner will see it. */
static void
list_locked (tp_device *d, _cl_command_node *node, push_how how)
{
  node->next = NULL;
  uint64_t t = now_ns ();
  if (d->ready_tail)
    d->ready_tail->next = node;
  else
    {
      d->ready_head = node;
      d->list_since = t;
    }
  d->ready_tail = node;
  d->last_push = t;

  if (how == PUSH_SELF || tls_draining == d)
    return;
  if (d->runners > 0)
    {
      if (tt_atomic_load_seq_cst (&d->sleeping) > 0)
        pthread_cond_broadcast (&d->waiters_cond);
      return;
    }
  arm_progress_locked (d);
}

/* Precondition: d->lock held. */
static _cl_command_node *
pop_locked (tp_device *d)
{
  _cl_command_node *n = d->ready_head;
  if (n != NULL)
    {
      d->ready_head = n->next;
      if (d->ready_head == NULL)
        d->ready_tail = NULL;
      n->next = NULL;
    }
  return n;
}

/* Precondition: d->lock held; the caller stops being a runner. */
static void
leave_locked (tp_device *d)
{
  d->runners--;
  if (d->ready_head != NULL && d->runners == 0)
    arm_progress_locked (d);
}

/* Runs or fails one popped node.  No lock held (see the protocol).  The node
 * is freed by libpocl when its event finishes: not touched afterwards. */
static void
run_node (tp_device *d, _cl_command_node *node, run_by by)
{
  cl_event ev = node->sync.event.event;
  if (node->ready & TP_FAILED)
    {
      POCL_LOCK_OBJ (ev);
      if (node->ready & TP_JIT)
        {
          pocl_release_dlhandle_cache (node);
          node->ready &= ~TP_JIT;
        }
      /* pocl_update_event_failed drops libpocl's reference, which may be the
       * last: hold one of ours across it. */
      POCL_RETAIN_OBJECT_UNLOCKED (ev);
      if (ev->status > CL_COMPLETE)
        pocl_update_event_failed (ev);
      POCL_UNLOCK_OBJ (ev);
      POclReleaseEvent (ev);
      tt_atomic_fetch_add_relaxed (&d->n_failed, 1);
      return;
    }
  switch (by)
    {
    case BY_SUBMIT:
      tt_atomic_fetch_add_relaxed (&d->n_run_submit, 1);
      break;
    case BY_WAITER:
      tt_atomic_fetch_add_relaxed (&d->n_run_waiter, 1);
      break;
    case BY_PROGRESS:
      tt_atomic_fetch_add_relaxed (&d->n_run_progress, 1);
      break;
    }
  pocl_exec_command (node);
}

/* Runs listed commands until the list is empty.  Precondition: d->lock held
 * and the caller counted in d->runners; returns with d->lock held. */
static void
drain_locked (tp_device *d, run_by by)
{
  tp_device *outer = tls_draining;
  tls_draining = d;
  _cl_command_node *n;
  while ((n = pop_locked (d)) != NULL)
    {
      pthread_mutex_unlock (&d->lock);
      run_node (d, n, by);
      pthread_mutex_lock (&d->lock);
    }
  tls_draining = outer;
}

static void
drain (tp_device *d, run_by by)
{
  pthread_mutex_lock (&d->lock);
  d->runners++;
  drain_locked (d, by);
  leave_locked (d);
  pthread_mutex_unlock (&d->lock);
}

/* ---- ops ------------------------------------------------------------------------------ */

/* The init check (driver.c) read the device struct; the first command
 * checks the command, event and queue structs the same way: fields libpocl
 * wrote must point at each other.  A mismatch here means a layout we do not
 * share, and nothing we could do next would be safe. */
static _Atomic int commands_checked;

static void
check_command_abi (_cl_command_node *node, cl_command_queue cq)
{
  cl_event ev = node->sync.event.event;
  if (ev == NULL || ev->command != node || ev->queue != cq
      || cq->device == NULL || cq->device->ops != node->device->ops
      || ev->status != CL_QUEUED)
    {
      fprintf (stderr,
               "teams: PoCL ABI self-check failed on the first command "
               "(command/event/queue layout): rebuild the teams driver "
               "(backend/pocl) against the pocl-source package of the "
               "installed libpocl2 version (built against %s)\n",
               TEAMS_POCL_PACKAGE_VERSION);
      abort ();
    }
  /* Relaxed: a flag that only saves repeating an idempotent check. */
  tt_atomic_store_relaxed (&commands_checked, 1);
}

/* Entered with the event locked (libpocl's submit contract); unlocks it. */
void
tp_submit (_cl_command_node *node, cl_command_queue cq)
{
  if (!tt_atomic_load_relaxed (&commands_checked))
    check_command_abi (node, cq);
  tp_device *d = node->device->data;
  cl_event ev = node->sync.event.event;

  /* Resolve the work-group function (JIT, 0.2-0.3 s cold) here, before the
   * event can go RUNNING, as basic does. */
  if (node->type == CL_COMMAND_NDRANGE_KERNEL)
    {
      cl_kernel k = node->command.run.kernel;
      char *saved = NULL;
      pocl_sanitize_builtin_kernel_name (k, &saved);
      pocl_check_kernel_dlhandle_cache (node, 1, 1);
      pocl_restore_builtin_kernel_name (k, saved);
      node->ready |= TP_JIT;
    }

  node->ready |= TP_SUBMITTED;
  int listed = 0;
  if (!(node->ready & TP_LISTED))
    {
      if (node->ready & TP_FAILED)
        listed = 1;
      else if (pocl_command_is_ready (ev))
        {
          pocl_update_event_submitted (ev);
          listed = 1;
        }
    }
  int eager = d->set.submit == TP_SUBMIT_EAGER;
  if (listed)
    {
      node->ready |= TP_LISTED;
      pthread_mutex_lock (&d->lock);
      list_locked (d, node, eager ? PUSH_SELF : PUSH_OTHER);
      pthread_mutex_unlock (&d->lock);
    }
  POCL_UNLOCK_OBJ (ev);
  if (listed && eager)
    drain (d, BY_SUBMIT);
}

/* Called by pocl_broadcast with both events locked; must return with both
 * locked, and runs nothing (see the protocol). */
void
tp_notify (cl_device_id device, cl_event event, cl_event finished)
{
  tp_device *d = device->data;
  _cl_command_node *node = event->command;

  if (node->ready & TP_LISTED)
    return;
  if (finished->status < CL_COMPLETE)
    node->ready |= TP_FAILED;
  if (!(node->ready & TP_SUBMITTED))
    return; /* notify before submit: submit lists it */
  if (!(node->ready & TP_FAILED))
    {
      if (!pocl_command_is_ready (event) || event->status != CL_QUEUED)
        return;
      pocl_update_event_submitted (event);
    }
  node->ready |= TP_LISTED;
  pthread_mutex_lock (&d->lock);
  list_locked (d, node, PUSH_OTHER);
  pthread_mutex_unlock (&d->lock);
}

/* clFlush: every listed command already reaches a runner or the progress
 * thread within the grace period (clFinish calls flush first, so starting
 * the progress thread at once would race the waiter: a hand-off). */
void
tp_flush (cl_device_id device, cl_command_queue cq)
{
}

typedef int (*done_fn) (void *what);

static int
queue_done (void *what)
{
  cl_command_queue cq = what;
  POCL_LOCK_OBJ (cq);
  int done = cq->command_count == 0;
  POCL_UNLOCK_OBJ (cq);
  return done;
}

static int
event_done (void *what)
{
  cl_event ev = what;
  POCL_LOCK_OBJ (ev);
  int done = ev->status <= CL_COMPLETE;
  POCL_UNLOCK_OBJ (ev);
  return done;
}

/* The wait loop of join and wait_event: run what is ready, sleep only when
 * nothing is ready and nothing finished since the last look. */
static void
wait_until (tp_device *d, done_fn done, void *what)
{
  pthread_mutex_lock (&d->lock);
  d->runners++;
  for (;;)
    {
      drain_locked (d, BY_WAITER);
      unsigned gen = tt_atomic_load_seq_cst (&d->finish_gen);
      pthread_mutex_unlock (&d->lock);
      int ok = done (what);
      pthread_mutex_lock (&d->lock);
      if (ok)
        break;
      if (d->ready_head == NULL
          && tt_atomic_load_seq_cst (&d->finish_gen) == gen)
        {
          tt_atomic_fetch_add_seq_cst (&d->sleeping, 1);
          if (tt_atomic_load_seq_cst (&d->finish_gen) == gen)
            pthread_cond_wait (&d->waiters_cond, &d->lock);
          tt_atomic_fetch_sub_seq_cst (&d->sleeping, 1);
        }
    }
  leave_locked (d);
  pthread_mutex_unlock (&d->lock);
}

void
tp_join (cl_device_id device, cl_command_queue cq)
{
  wait_until (device->data, queue_done, cq);
}

void
tp_wait_event (cl_device_id device, cl_event event)
{
  wait_until (device->data, event_done, event);
}

/* Called by libpocl with the event locked, after the command left its
 * queue's count (lock order event -> d->lock). */
void
tp_notify_event_finished (cl_event event)
{
  tp_device *d = event->queue->device->data;
  tt_atomic_fetch_add_seq_cst (&d->finish_gen, 1);
  if (tt_atomic_load_seq_cst (&d->sleeping) > 0)
    {
      pthread_mutex_lock (&d->lock);
      pthread_cond_broadcast (&d->waiters_cond);
      pthread_mutex_unlock (&d->lock);
    }
}

/* ---- the progress thread --------------------------------------------------------------- */

static void
timed_wait_until (tp_device *d, uint64_t deadline)
{
  struct timespec ts = { (time_t)(deadline / 1000000000u),
                         (long)(deadline % 1000000000u) };
  pthread_cond_timedwait (&d->progress_cond, &d->lock, &ts);
}

static void *
progress_main (void *arg)
{
  tp_device *d = arg;
  pthread_mutex_lock (&d->lock);
  while (!d->shutdown)
    {
      if (d->progress_state == TP_PROGRESS_SLEEPING || d->runners > 0)
        {
          /* A runner (or nobody: empty list) owns the list; arming wakes
           * us. */
          d->progress_state = TP_PROGRESS_SLEEPING;
          pthread_cond_wait (&d->progress_cond, &d->lock);
          continue;
        }
      /* Due: grace after arming and after the last push, capped at
       * TP_BURST_GRACES graces after the oldest listed command. */
      uint64_t t = now_ns (), g = d->set.grace_ns;
      uint64_t due = d->armed_at + g;
      if (d->ready_head != NULL)
        {
          uint64_t quiet = d->last_push + g;
          uint64_t cap = d->list_since + (uint64_t)TP_BURST_GRACES * g;
          uint64_t list_due = quiet < cap ? quiet : cap;
          if (list_due > due)
            due = list_due;
        }
      if (t < due)
        {
          d->progress_state = TP_PROGRESS_GRACE;
          timed_wait_until (d, due);
          continue;
        }
      if (d->ready_head == NULL)
        {
          d->progress_state = TP_PROGRESS_SLEEPING;
          continue;
        }
      d->progress_state = TP_PROGRESS_RUNNING;
      d->runners++;
      drain_locked (d, BY_PROGRESS);
      d->runners--;
      /* Stay in GRACE for another period: pushes right after a burst find
       * us awake. */
      d->progress_state = TP_PROGRESS_GRACE;
      d->armed_at = now_ns ();
    }
  pthread_mutex_unlock (&d->lock);
  return NULL;
}

int
tp_queue_init (tp_device *d)
{
  if (pthread_mutex_init (&d->lock, NULL) != 0)
    return -1;
  pthread_cond_init (&d->waiters_cond, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&d->progress_cond, &ca);
  pthread_condattr_destroy (&ca);
  d->progress_state = TP_PROGRESS_SLEEPING;
  d->ready_head = d->ready_tail = NULL;
  atomic_init (&d->sleeping, 0);
  atomic_init (&d->finish_gen, 0);
  return 0;
}

void
tp_queue_fini (tp_device *d)
{
  pthread_mutex_lock (&d->lock);
  d->shutdown = 1;
  int started = d->progress_started;
  if (started)
    pthread_cond_signal (&d->progress_cond);
  pthread_mutex_unlock (&d->lock);
  if (started)
    pthread_join (d->progress, NULL);
  pthread_cond_destroy (&d->waiters_cond);
  pthread_cond_destroy (&d->progress_cond);
  pthread_mutex_destroy (&d->lock);
}
