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
 * Measured on this 2-core machine (docs/driver.md): an empty kernel costs
 * 0.3-0.5 us run synchronously by its caller, 5-19 us through a dispatcher
 * thread, 27-43 us on PoCL's pthread driver; the hand-offs are the cost.
 *
 * Devices.  All teams devices of the process (POCL_DEVICES="teams teams",
 * and sub-devices, which share their parent's data) run on the one team,
 * and share one scheduler: the ready list, its lock, its runners and one
 * progress thread live in the first device's tp_device (d->sched; the
 * functions below take the scheduler as `d`).  A waiter on any device runs
 * every device's ready commands in the order they became ready, as PoCL's
 * pthread driver does with its one scheduler, and one at a time: a command
 * starts only after the one listed before it finished (Order, below), so
 * the list orders completion, not only start.  This is what the PoCL
 * runtime's multi-device programs rely on: the devices share global memory
 * (global_mem_id 0, as on every PoCL CPU driver), so PoCL adds no migration
 * command, hence no implicit dependency, between commands of different
 * devices' queues on one buffer; with a list per device, a blocking read
 * on one device ran before a kernel still listed on the other.  Counters
 * and settings stay per device (eager or lazy submit: the command's
 * device's; the grace: the scheduler's).
 *
 * Locks and their order
 *   event lock (PoCL's ev->pocl_lock)  ->  d->lock
 * d->lock guards the ready list (ready_head/tail, node->next of listed
 * nodes, list_epoch), runners, sleeping and the progress thread's state.  No
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
 * (status SUBMITTED -> RUNNING -> COMPLETE through pocl_exec_command, or
 * for an ND-range the same steps in run_node, RUNNING -> FAILED when run.c
 * lacked memory) or fails it.  notify never runs or fails anything itself:
 * PoCL 3.1's basic driver deadlocks running commands inside notify, and
 * failing there would take the queue lock under two event locks.
 *
 * Chains.  The first node made ready by a command that a waiter or
 * submitter is running (notify on that thread, inside pocl_exec_command) is
 * "listed" on that thread's chain (drain_frame.next, thread-local) instead
 * of the shared list, and the thread runs it right after: an in-order
 * queue's commands then cost no d->lock and no wake-up each, and run where
 * the previous one left its data.  The chain holds one node: a second one
 * made ready by the same command (a fan-out, or another queue's command
 * waiting for this one) goes to the shared list, where a sleeping waiter
 * can take it, as before chains.  The thread owns its chain's node exactly
 * as a popped one; it looks at the shared list again when its chain is
 * empty.  The progress thread keeps no chain: what it makes ready goes to
 * the shared list, so a waiter that arrives takes over.
 *
 * Runners.  A runner is a thread that promises to look at the list under
 * d->lock before it stops being one, and to run what it finds: a thread in
 * drain() (eager submitter, waiter, progress thread) or in a wait loop.  A
 * push (list_locked) needs a wake-up only when there is no runner:
 *   - the pushing thread drains right after (eager submit) or is draining
 *     this device (tls_frame): nothing to do;
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
 * after it was armed and after the host's last submit or push -- a burst of
 * enqueues is one unit, so 1000 enqueues and a clFinish run on the
 * finishing thread.  Submits count even when their command is not ready:
 * on an in-order queue only the first of a burst is listed at once, the
 * rest wait for their predecessor.  Submitters and pushes only change
 * d->activity (touch(), no clock read); the thread notices a change when
 * it wakes, so a grace ends between one and two grace periods after the
 * last submit.  The wait is capped at TP_BURST_GRACES grace periods after
 * the thread first saw the list non-empty; then it runs what is still
 * listed (a waiter took it otherwise).  With nothing listed, or while a
 * runner exists (the runner runs the list or re-arms it), it lingers: it
 * stays in GRACE and looks again every grace period until the host has
 * been quiet for TP_LINGER_GRACES graces, and only then sleeps until
 * armed.  So a host that enqueues and waits in a loop finds it in GRACE at
 * every enqueue and pays no signal: the signal (a futex call that wakes a
 * thread on the other core, 2-16 us on the enqueue path on this 2-core
 * machine, measured) was most of clpeak's kernel latency, START - QUEUED,
 * when each turn of the loop took longer than a grace.  Arming signals
 * after d->lock is released (kick_progress).
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

typedef enum run_by { BY_SUBMIT, BY_WAITER, BY_PROGRESS } run_by;

/* One drain() in progress on this thread: the device, who drains, and the
 * command that the command this thread is running made ready first (its
 * chain).  Innermost first; NULL outside drain(). */
typedef struct drain_frame {
  tp_device *d;
  run_by by;
  _cl_command_node *next; /* the chain: at most one command */
  uint64_t ran, ndrange, groups; /* counts not yet added to d->n_* */
  struct drain_frame *outer;
} drain_frame;

static __thread drain_frame *tls_frame;

/* This thread's drain of d's scheduler (d->sched) when a waiter or
 * submitter runs it: the frame that keeps a chain and sums the counters.
 * The progress thread's does neither (see Chains, and Counters below):
 * NULL then, and outside a drain of that scheduler. */
static drain_frame *
own_frame (tp_device *d)
{
  drain_frame *f = tls_frame;
  return f != NULL && f->d == d->sched && f->by != BY_PROGRESS ? f : NULL;
}

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

/* Counters (d->n_*).  A waiter or submitter counts in its drain frame and
 * adds the totals when the frame ends, before its wait or enqueue returns:
 * a program that reads them after its own wait sees exact values, and a
 * command costs no read-modify-write for them (three of those, ~10 ns each
 * in a multithreaded process, were a sixth of an empty kernel's cost).
 * The progress thread adds at once: a waiter may see what it ran complete
 * at any moment. */
static _Atomic uint64_t *
run_counter (tp_device *d, run_by by)
{
  switch (by)
    {
    case BY_SUBMIT:
      return &d->n_run_submit;
    case BY_WAITER:
      return &d->n_run_waiter;
    default:
      return &d->n_run_progress;
    }
}

/* d: the command's device (counters are per device; a frame sums those
 * of its scheduler's own device only). */
static void
count_run (tp_device *d, run_by by)
{
  drain_frame *f = own_frame (d);
  if (f != NULL && f->d == d)
    f->ran++;
  else
    tt_atomic_fetch_add_relaxed (run_counter (d, by), 1);
}

void
tp_count_ndrange (tp_device *d, size_t groups)
{
  drain_frame *f = own_frame (d);
  if (f != NULL && f->d == d)
    {
      f->ndrange++;
      f->groups += groups;
      return;
    }
  tt_atomic_fetch_add_relaxed (&d->n_ndrange, 1);
  tt_atomic_fetch_add_relaxed (&d->n_groups, groups);
}

static void
frame_flush (drain_frame *f)
{
  if (f->ran)
    tt_atomic_fetch_add_relaxed (run_counter (f->d, f->by), f->ran);
  if (f->ndrange)
    {
      tt_atomic_fetch_add_relaxed (&f->d->n_ndrange, f->ndrange);
      tt_atomic_fetch_add_relaxed (&f->d->n_groups, f->groups);
    }
  f->ran = f->ndrange = f->groups = 0;
}

static void *progress_main (void *arg);

/* Precondition: d->lock held.  Makes sure the progress thread will look at
 * the list within the grace period.  Returns 1 when the caller must call
 * kick_progress (d) after releasing d->lock: the thread sleeps and needs a
 * signal.  Signalling after the unlock spares the woken thread a block on
 * d->lock that the signaller still holds (two more futex calls, and on a
 * loaded 2-core machine a context switch, on the enqueue path). */
static int
arm_progress_locked (tp_device *d)
{
  if (d->shutdown)
    return 0;
  if (!d->progress_started)
    {
      d->progress_state = TP_PROGRESS_GRACE;
      d->armed_at = now_ns ();
      if (pthread_create (&d->progress, NULL, progress_main, d) != 0)
        {
          /* No thread: the commands still run when someone waits. */
          fprintf (stderr, "teams: cannot start the progress thread; "
                           "commands run only when waited for\n");
          return 0;
        }
      d->progress_started = 1;
      return 0;
    }
  if (d->progress_state == TP_PROGRESS_SLEEPING)
    {
      d->progress_state = TP_PROGRESS_GRACE;
      d->armed_at = now_ns ();
      return 1;
    }
  return 0;
}

/* Precondition: d->lock not held; arm_progress_locked returned 1.  The
 * thread, when it wakes, reads its state under d->lock (set to GRACE by the
 * arm): a signal that finds it not yet waiting is not needed. */
static void
kick_progress (tp_device *d)
{
  pthread_cond_signal (&d->progress_cond);
}

/* Every submit and push: tells the progress thread that the host is still
 * enqueuing.  The progress thread only compares the value with the one it
 * saw last, so a relaxed load and store do (no read-modify-write on the
 * enqueue path); two racing submitters may store the same value, which at
 * worst lets the progress thread start one grace period early. */
static inline void
touch (tp_device *d)
{
  tt_atomic_store_relaxed (&d->activity,
                           tt_atomic_load_relaxed (&d->activity) + 1);
}

/* Precondition: d->lock held and the node's event locked (lock order event ->
 * d).  Appends the node and makes sure a runner will see it.  Returns
 * arm_progress_locked's answer (1: kick after the unlock). */
static int
list_locked (tp_device *d, _cl_command_node *node, push_how how)
{
  node->next = NULL;
  if (d->ready_tail)
    d->ready_tail->next = node;
  else
    {
      d->ready_head = node;
      d->list_epoch++;
    }
  d->ready_tail = node;
  touch (d);

  if (how == PUSH_SELF || (tls_frame != NULL && tls_frame->d == d))
    return 0;
  if (d->runners > 0)
    {
      if (tt_atomic_load_seq_cst (&d->sleeping) > 0)
        pthread_cond_broadcast (&d->waiters_cond);
      return 0;
    }
  return arm_progress_locked (d);
}

/* Precondition: the node's event locked, d->lock not held.  Marks the node
 * listed and hands it to a runner: to this thread's chain when a command
 * this thread is running (as a waiter or submitter) made it ready and the
 * chain is empty -- the thread runs it next, without d->lock and without
 * waking anyone -- else to the shared list, where a second command made
 * ready at the same time reaches another waiter. */
static void
push (tp_device *d, _cl_command_node *node, push_how how)
{
  node->ready |= TP_LISTED;
  drain_frame *f = own_frame (d);
  if (how == PUSH_OTHER && f != NULL && f->next == NULL)
    {
      node->next = NULL;
      f->next = node;
      return;
    }
  pthread_mutex_lock (&d->lock);
  int kick = list_locked (d, node, how);
  pthread_mutex_unlock (&d->lock);
  if (kick)
    kick_progress (d);
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

/* Precondition: d->lock held; the caller stops being a runner.  Returns 1
 * when the caller must kick_progress after the unlock. */
static int
leave_locked (tp_device *d)
{
  d->runners--;
  if (d->ready_head != NULL && d->runners == 0)
    return arm_progress_locked (d);
  return 0;
}

/* Runs or fails one popped node.  No lock held (see the protocol).  The node
 * is freed by libpocl when its event finishes: not touched afterwards. */
static void
run_node (tp_device *d, _cl_command_node *node, run_by by)
{
  (void)d;
  tp_device *nd = node->device->data; /* the command's device */
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
      tt_atomic_fetch_add_relaxed (&nd->n_failed, 1);
      return;
    }
  count_run (nd, by);
  tp_place_command (node);
  if (node->type != CL_COMMAND_NDRANGE_KERNEL)
    {
      pocl_exec_command (node);
      return;
    }
  /* pocl_exec_command's ND-range case, which can only complete the event:
   * a launch that lacked memory for its arguments or a participant's
   * scratch fails it instead (run.c). */
  pocl_update_event_running (ev);
  if (tp_run_ndrange (nd, node) == 0)
    {
      POCL_UPDATE_EVENT_COMPLETE_MSG (ev, "Event Enqueue NDRange       ");
      return;
    }
  POCL_LOCK_OBJ (ev);
  POCL_RETAIN_OBJECT_UNLOCKED (ev); /* as above */
  pocl_update_event_failed (ev);
  POCL_UNLOCK_OBJ (ev);
  POclReleaseEvent (ev);
}

/* Order.  Listed commands run one at a time per scheduler, in list
 * order: a thread pops only while no other thread is running a popped
 * command (exec_owner), and keeps the right through its chain.  PoCL adds
 * no dependency between commands of different queues on a buffer that the
 * devices share (global_mem_id 0: no migration command), so the list
 * order is the only order between them; without this rule a waiter ran a
 * later command (a blocking read) while the progress thread was still
 * running an earlier one (another device's kernel on that buffer), and
 * the read saw the buffer half updated.  The owner's thread may nest
 * (an event callback that waits or enqueues eagerly). */
static __thread char tls_me;

static int
exec_busy_locked (tp_device *d)
{
  return d->exec_owner != NULL && d->exec_owner != &tls_me;
}

/* Runs listed commands until the list and this thread's chain are empty.
 * Precondition: d->lock held and the caller counted in d->runners; returns
 * with d->lock held. */
static void
drain_locked (tp_device *d, run_by by)
{
  drain_frame f = { .d = d, .by = by, .outer = tls_frame };
  tls_frame = &f;
  _cl_command_node *n;
  while (!exec_busy_locked (d)
         /* The progress thread hands over to a waiter that came. */
         && !(by == BY_PROGRESS && d->runners > 1)
         && (n = pop_locked (d)) != NULL)
    {
      d->exec_owner = &tls_me;
      d->exec_depth++;
      pthread_mutex_unlock (&d->lock);
      for (;;)
        {
          run_node (d, n, by);
          /* The first command n made ready (pushed during run_node). */
          if ((n = f.next) == NULL)
            break;
          f.next = NULL;
        }
      pthread_mutex_lock (&d->lock);
      if (--d->exec_depth == 0)
        {
          d->exec_owner = NULL;
          /* Waiters that found the right taken sleep for it. */
          if (d->ready_head != NULL
              && tt_atomic_load_seq_cst (&d->sleeping) > 0)
            pthread_cond_broadcast (&d->waiters_cond);
        }
    }
  frame_flush (&f);
  tls_frame = f.outer;
}

static void
drain (tp_device *d, run_by by)
{
  pthread_mutex_lock (&d->lock);
  d->runners++;
  drain_locked (d, by);
  int kick = leave_locked (d);
  pthread_mutex_unlock (&d->lock);
  if (kick)
    kick_progress (d);
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
  tp_device *nd = node->device->data, *d = nd->sched;
  cl_event ev = node->sync.event.event;
  touch (d);

  /* Resolve the work-group function here, before the event can go
   * RUNNING, as basic does; no compile but for built-in kernels (jit.c). */
  if (node->type == CL_COMMAND_NDRANGE_KERNEL && tp_jit_resolve (d, node))
    node->ready |= TP_JIT;

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
  int eager = nd->set.submit == TP_SUBMIT_EAGER;
  if (listed)
    push (d, node, eager ? PUSH_SELF : PUSH_OTHER);
  POCL_UNLOCK_OBJ (ev);
  if (listed && eager)
    drain (d, BY_SUBMIT);
}

/* Called by pocl_broadcast with both events locked; must return with both
 * locked, and runs nothing (see the protocol). */
void
tp_notify (cl_device_id device, cl_event event, cl_event finished)
{
  tp_device *d = ((tp_device *)device->data)->sched;
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
  push (d, node, PUSH_OTHER);
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
      if ((d->ready_head == NULL || exec_busy_locked (d))
          && tt_atomic_load_seq_cst (&d->finish_gen) == gen)
        {
          tt_atomic_fetch_add_seq_cst (&d->sleeping, 1);
          if (tt_atomic_load_seq_cst (&d->finish_gen) == gen)
            pthread_cond_wait (&d->waiters_cond, &d->lock);
          tt_atomic_fetch_sub_seq_cst (&d->sleeping, 1);
        }
    }
  int kick = leave_locked (d);
  pthread_mutex_unlock (&d->lock);
  if (kick)
    kick_progress (d);
}

void
tp_join (cl_device_id device, cl_command_queue cq)
{
  wait_until (((tp_device *)device->data)->sched, queue_done, cq);
}

void
tp_wait_event (cl_device_id device, cl_event event)
{
  wait_until (((tp_device *)device->data)->sched, event_done, event);
}

/* Called by libpocl with the event locked, after the command left its
 * queue's count (lock order event -> d->lock). */
void
tp_notify_event_finished (cl_event event)
{
  tp_device *d = ((tp_device *)event->queue->device->data)->sched;
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
  /* What this thread saw, and when: the activity value (quiet_from: when
   * it last changed) and the list's epoch (first_seen: when this thread
   * first saw the list non-empty since it last was empty). */
  uint64_t seen_activity = 0, quiet_from = 0;
  uint64_t seen_epoch = 0, first_seen = 0;
  pthread_mutex_lock (&d->lock);
  while (!d->shutdown)
    {
      if (d->progress_state == TP_PROGRESS_SLEEPING)
        {
          /* Arming wakes us. */
          pthread_cond_wait (&d->progress_cond, &d->lock);
          continue;
        }
      uint64_t t = now_ns (), g = d->set.grace_ns;
      uint64_t act = tt_atomic_load_relaxed (&d->activity);
      if (act != seen_activity)
        {
          seen_activity = act;
          quiet_from = t;
        }
      /* Lingering: while the host enqueued within the last TP_LINGER_GRACES
       * graces, look again every grace instead of sleeping, so that the
       * next push finds this thread in GRACE and costs no signal. */
      int linger = t < quiet_from + (uint64_t)TP_LINGER_GRACES * g;
      if (d->runners > 0)
        {
          /* A runner owns the list (it re-arms us when it leaves with
           * commands listed). */
          if (linger)
            {
              d->progress_state = TP_PROGRESS_GRACE;
              timed_wait_until (d, t + g);
            }
          else
            d->progress_state = TP_PROGRESS_SLEEPING;
          continue;
        }
      /* Due: grace after arming and after the host's last submit or push
       * (as this thread saw it), capped at TP_BURST_GRACES graces after it
       * saw the list non-empty. */
      if (d->list_epoch != seen_epoch)
        {
          seen_epoch = d->list_epoch;
          first_seen = t;
        }
      uint64_t due = d->armed_at + g;
      if (d->ready_head != NULL)
        {
          uint64_t quiet = quiet_from + g;
          uint64_t cap = first_seen + (uint64_t)TP_BURST_GRACES * g;
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
          if (linger)
            timed_wait_until (d, t + g);
          else
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
  /* Adaptive: the lock is held for a few instructions at a time, and a
   * waiter that finds the progress thread holding it should spin a little
   * rather than sleep on it (a futex sleep and wake-up, tens of us on a
   * loaded machine, between a command's enqueue and its start). */
  pthread_mutexattr_t ma;
  pthread_mutexattr_init (&ma);
  pthread_mutexattr_settype (&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
  int rc = pthread_mutex_init (&d->lock, &ma);
  pthread_mutexattr_destroy (&ma);
  if (rc != 0)
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
