/* teams PoCL driver: the scheduler -- which thread runs a listed command,
 * and when: the ready list and its runners (its state: queue.h; the
 * waits: wait.c; the progress thread: progress.c; the counters:
 * counters.c).
 *
 * Protocol
 * ========
 * Goal: no thread hand-off where none is needed.  A ready command is run by
 * a thread that waits for it (clFinish, clWaitForEvents, a blocking read or
 * map) -- lazy mode -- or by the thread that submits it (eager mode).  That
 * thread is participant 0 of the team region the command's work-groups run
 * in (run.c).  Only a command that nobody comes for within the grace period
 * (grace_ns, 50 us by default) goes to the progress thread, so commands
 * nobody waits for still make progress, and an enqueue never blocks on a
 * command that may wait for the host (PoCL's own tests enqueue a kernel
 * that never ends).  The hand-offs, not the work, are what a short command
 * costs elsewhere (docs/measurements.md, "The PoCL driver's queue").
 *
 * Submit (submit.c) decides what happens to a command at submit: run now,
 * list it, or wait for its dependencies; tp_sched_submit carries that out
 * here.  Run now (submit=auto; docs/protocol.md item 36): claim_now takes
 * the right to run listed commands under sched.lock, the node's event
 * still locked, only when nothing is listed and nobody holds that right,
 * so it is the next command in list order anyway; run_claimed runs it and
 * its chain (empty: nothing can wait for an event not yet returned to the
 * program).  A command's way from tp_submit to the team passes each file
 * of the driver once: submit.c, abi.c (the first command), resolve.c,
 * queue.c, counters.c, memory.c (placement), run.c.
 *
 * Devices.  All teams devices of the process (POCL_DEVICES="teams teams",
 * and sub-devices, which share their parent's data) run on the one team,
 * and share one scheduler, `sched` below, which this file owns: the ready
 * list, its lock, its runners and the one progress thread.  A tp_device
 * holds its settings and counters only; in this file `d` is always a
 * command's device.  A waiter on any device runs
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
 * device's; the grace: the first device's, which the scheduler copies).
 *
 * Locks and their order (docs/protocol.md item 30):
 *   event lock (PoCL's ev->pocl_lock)  ->  sched.lock
 * sched.lock guards the ready list (ready_head/tail, node->next of listed
 * nodes, list_epoch), runners, the right to run listed commands
 * (exec_owner, exec_depth), the progress thread's state (progress_state,
 * armed_at, progress_started, shutdown) and `sleeping`'s changes (read
 * without it, as are finish_gen and activity).  No lock of ours is held
 * while a command runs: pocl_exec_command ends in
 * pocl_update_event_complete, which takes the queue lock then the event
 * lock and calls notify (us) for dependents with two event locks held.
 *
 * The node's flags (TP_NODE_FLAGS, teams-pocl.h: TP_SUBMITTED, TP_FAILED,
 * TP_LISTED, TP_JIT), written only with the node's event locked
 * (docs/protocol.md item 31): submit.c sets TP_SUBMITTED, and TP_FAILED or
 * TP_JIT after resolving; notify sets TP_FAILED when a dependency failed;
 * whoever lists the node sets TP_LISTED.
 * Who lists a node, and who then owns it: docs/protocol.md items 31-32.  notify
 * never runs or fails anything: PoCL 3.1's basic driver deadlocks running
 * commands there, and failing there would take the queue lock under two
 * event locks.
 *
 * Chains.  The first node made ready by a command that a waiter or
 * submitter is running (notify on that thread, inside pocl_exec_command)
 * goes on that thread's chain (drain_frame.next, thread-local) instead of
 * the shared list, and the thread runs it right after: an in-order queue's
 * commands then cost no sched.lock and no wake-up each, and run where the
 * previous one left its data.  The chain holds one node; a second one made
 * ready by the same command goes to the shared list, where a sleeping
 * waiter can take it.  The progress thread keeps no chain: what it makes
 * ready goes to the shared list, so a waiter that arrives takes over.
 *
 * Runners (docs/protocol.md item 33).  A runner is a thread that promises to
 * look at the list under sched.lock before it stops being one, and to run
 * what it finds or hand it on: a thread in drain() (eager submitter,
 * waiter, progress thread), in a wait loop, or an auto submitter running
 * its claimed node (above), which hands on when it gives the right back.
 * So a push (list_locked) needs a wake-up only when there is no runner, and
 * a runner that leaves a non-empty list with no other runner arms the
 * progress thread (tp_sched_leave_locked).
 *
 * The progress thread and the grace period: progress.c.
 *
 * Waiting (clFinish, clWaitForEvents): wait.c.
 *
 * Rejected: a dispatcher thread that runs everything (pthread's model: a
 * hand-off per command); running commands inside notify (PoCL 3.1
 * deadlocks, see above); eager submit as the default (an enqueue that
 * blocks until its kernel ends hangs programs whose kernels wait for the
 * host: auto submit runs at once only what cannot). */
#include "queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tp_sched sched;

/* One drain() in progress on this thread: who drains, the command that the
 * command this thread is running made ready first (its chain), and the
 * counts not yet added to the counters (counters.c).  Innermost first;
 * NULL outside drain(). */
typedef struct drain_frame {
  run_by by;
  _cl_command_node *next; /* the chain: at most one command */
  tp_counts counts;
  struct drain_frame *outer;
} drain_frame;

/* This thread's part of the scheduler, in one thread-local struct: in a
 * dlopen'ed library each function that names a thread-local variable pays a
 * __tls_get_addr call per name, so a function takes the struct once (me()).
 *   frame  the innermost drain in progress on this thread, NULL outside;
 *   token  its address is the thread's mark in sched.exec_owner (Order). */
typedef struct sched_thread {
  drain_frame *frame;
  char token;
} sched_thread;

static __thread sched_thread tls;

/* The empty asm keeps GCC from computing &tls again at each use. */
static inline sched_thread *
me (void)
{
  sched_thread *t = &tls;
  __asm__ ("" : "+r"(t));
  return t;
}

/* This thread's drain when a waiter or submitter runs it: the frame that
 * keeps a chain and sums the counters.  The progress thread's does neither
 * (see Chains; counters.c, Counters): NULL then, and outside a drain. */
static drain_frame *
own_frame (void)
{
  drain_frame *f = me ()->frame;
  return f != NULL && f->by != BY_PROGRESS ? f : NULL;
}

/* The counts of a frame, f this thread's innermost, or NULL: count at once
 * (the progress thread's; see own_frame). */
static tp_counts *
frame_counts (drain_frame *f)
{
  return f->by != BY_PROGRESS ? &f->counts : NULL;
}

typedef enum push_how {
  PUSH_SELF, /* the pusher drains right after (eager submit) */
  PUSH_OTHER /* anyone else: lazy submit, notify */
} push_how;

/* Every submit and push: tells the progress thread that the host is still
 * enqueuing.  The progress thread only compares the value with the one it
 * saw last, so a relaxed load and store do (no read-modify-write on the
 * enqueue path); two racing submitters may store the same value, which at
 * worst lets the progress thread start one grace period early. */
static inline void
touch (void)
{
  tt_atomic_store_relaxed (&sched.activity,
                           tt_atomic_load_relaxed (&sched.activity) + 1);
}

/* Precondition: sched.lock held and the node's event locked (lock order
 * event -> sched.lock).  Appends the node and makes sure a runner will see
 * it (docs/protocol.md item 33).  Returns tp_progress_arm_locked's answer
 * (1: kick after the unlock). */
static int
list_locked (_cl_command_node *node, push_how how)
{
  node->next = NULL;
  if (sched.ready_tail)
    sched.ready_tail->next = node;
  else
    {
      sched.ready_head = node;
      sched.list_epoch++;
    }
  sched.ready_tail = node;
  touch ();

  if (how == PUSH_SELF || me ()->frame != NULL)
    return 0;
  if (sched.runners > 0)
    {
      if (tt_atomic_load_seq_cst (&sched.sleeping) > 0)
        pthread_cond_broadcast (&sched.waiters_cond);
      return 0;
    }
  return tp_progress_arm_locked ();
}

/* Precondition: the node's event locked, sched.lock not held.  Marks the node
 * listed and hands it to a runner: to this thread's chain when a command
 * this thread is running (as a waiter or submitter) made it ready and the
 * chain is empty -- the thread runs it next, without sched.lock and without
 * waking anyone -- else to the shared list, where a second command made
 * ready at the same time reaches another waiter. */
static void
push (_cl_command_node *node, push_how how)
{
  TP_NODE_FLAGS (node) |= TP_LISTED;
  drain_frame *f = own_frame ();
  if (how == PUSH_OTHER && f != NULL && f->next == NULL)
    {
      node->next = NULL;
      f->next = node;
      return;
    }
  pthread_mutex_lock (&sched.lock);
  int kick = list_locked (node, how);
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    tp_progress_kick ();
}

/* Precondition: sched.lock held. */
static _cl_command_node *
pop_locked (void)
{
  _cl_command_node *n = sched.ready_head;
  if (n != NULL)
    {
      sched.ready_head = n->next;
      if (sched.ready_head == NULL)
        sched.ready_tail = NULL;
      n->next = NULL;
    }
  return n;
}

/* Precondition: sched.lock held; the caller stops being a runner.  Returns 1
 * when the caller must tp_progress_kick after the unlock. */
int
tp_sched_leave_locked (void)
{
  sched.runners--;
  if (sched.ready_head != NULL && sched.runners == 0)
    return tp_progress_arm_locked ();
  return 0;
}

/* Runs or fails one popped node, in drain frame f (this thread's
 * innermost).  No lock held (see the protocol).  The node is freed by
 * libpocl when its event finishes: not touched afterwards. */
static void
run_node (_cl_command_node *node, drain_frame *f)
{
  run_by by = f->by;
  tp_device *d = node->device->data; /* the command's device */
  cl_event ev = node->sync.event.event;
  if (TP_NODE_FLAGS (node) & TP_FAILED)
    {
      POCL_LOCK_OBJ (ev);
      if (TP_NODE_FLAGS (node) & TP_JIT)
        {
          tp_dlhandle_release (node);
          TP_NODE_FLAGS (node) &= ~TP_JIT;
        }
      /* Failing drops libpocl's reference, which may be the last: hold one
       * of ours across it. */
      POCL_RETAIN_OBJECT_UNLOCKED (ev);
      int pending = ev->status > CL_COMPLETE;
      POCL_UNLOCK_OBJ (ev);
      if (pending)
        tp_event_fail (ev);
      POclReleaseEvent (ev);
      tp_count_failed (d);
      return;
    }
  tp_count_run (frame_counts (f), d, by);
  tp_place_command (node);
  if (node->type != CL_COMMAND_NDRANGE_KERNEL)
    {
      pocl_exec_command (node);
      return;
    }
  /* The one way an ND-range runs (ops->run is NULL, driver.c): the steps
   * of pocl_exec_command's ND-range case, except that a launch that lacked
   * memory for its arguments or a participant's scratch fails the event
   * instead of completing it (run.c). */
  pocl_update_event_running (ev);
  size_t groups = 0;
  int rc = tp_run_ndrange (d, node, &groups);
  if (groups > 0)
    tp_count_ndrange (frame_counts (f), d, groups);
  if (rc == 0)
    {
      POCL_UPDATE_EVENT_COMPLETE_MSG (ev, "Event Enqueue NDRange       ");
      return;
    }
  POCL_LOCK_OBJ (ev);
  POCL_RETAIN_OBJECT_UNLOCKED (ev); /* as above */
  POCL_UNLOCK_OBJ (ev);
  tp_event_fail (ev);
  POclReleaseEvent (ev);
}

/* Order.  Listed commands run one at a time, in list order: a thread pops only while no other thread is running a popped
 * command (exec_owner), and keeps the right through its chain.  PoCL adds
 * no dependency between commands of different queues on a buffer that the
 * devices share (global_mem_id 0: no migration command), so the list
 * order is the only order between them; without this rule a waiter ran a
 * later command (a blocking read) while the progress thread was still
 * running an earlier one (another device's kernel on that buffer), and
 * the read saw the buffer half updated.  The owner's thread may nest
 * (an event callback that waits or enqueues eagerly). */
static int
exec_busy_locked (sched_thread *t)
{
  return sched.exec_owner != NULL && sched.exec_owner != &t->token;
}

int
tp_sched_exec_busy_locked (void)
{
  return exec_busy_locked (me ());
}

/* Runs n and then its chain (the first command each one made ready, pushed
 * during run_node) in drain frame f, this thread's innermost; no lock
 * held. */
static void
run_chain (_cl_command_node *n, drain_frame *f)
{
  for (;;)
    {
      run_node (n, f);
      if ((n = f->next) == NULL)
        break;
      f->next = NULL;
    }
}

/* Precondition: sched.lock held, a popped command and its chain run.  Gives
 * back one level of the right to run listed commands. */
static void
end_exec_locked (void)
{
  if (--sched.exec_depth == 0)
    {
      sched.exec_owner = NULL;
      /* Waiters that found the right taken sleep for it. */
      if (sched.ready_head != NULL
          && tt_atomic_load_seq_cst (&sched.sleeping) > 0)
        pthread_cond_broadcast (&sched.waiters_cond);
    }
}

/* Runs listed commands until the list and this thread's chain are empty.
 * Precondition: sched.lock held and the caller counted in sched.runners;
 * returns with sched.lock held. */
void
tp_sched_drain_locked (run_by by)
{
  sched_thread *t = me ();
  drain_frame f = { .by = by, .counts = { .by = by }, .outer = t->frame };
  t->frame = &f;
  _cl_command_node *n;
  while (!exec_busy_locked (t)
         /* The progress thread hands over to a waiter that came. */
         && !(by == BY_PROGRESS && sched.runners > 1)
         && (n = pop_locked ()) != NULL)
    {
      sched.exec_owner = &t->token;
      sched.exec_depth++;
      pthread_mutex_unlock (&sched.lock);
      run_chain (n, &f);
      pthread_mutex_lock (&sched.lock);
      end_exec_locked ();
    }
  tp_count_flush (&f.counts);
  t->frame = f.outer;
}

static void
drain (run_by by)
{
  pthread_mutex_lock (&sched.lock);
  sched.runners++;
  tp_sched_drain_locked (by);
  int kick = tp_sched_leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    tp_progress_kick ();
}

/* ---- ops ------------------------------------------------------------------------------ */

/* Submit, submit=auto: a node claims the right to run listed commands
 * (exec_owner) when nothing is listed, nobody holds the right, and this
 * thread is not draining already (an event callback that enqueues): it
 * would be the next command to run anyway (Order), and a command just
 * submitted has nothing waiting for it yet, so its chain stays empty.
 * Precondition: the node's event locked (order event -> sched.lock).
 * Returns 1 when claimed: the caller unlocks the event and calls
 * run_claimed. */
static int
claim_now (sched_thread *t, _cl_command_node *node)
{
  pthread_mutex_lock (&sched.lock);
  int ok = sched.ready_head == NULL && sched.exec_owner == NULL
           && t->frame == NULL && !sched.shutdown;
  if (ok)
    {
      TP_NODE_FLAGS (node) |= TP_LISTED;
      sched.exec_owner = &t->token;
      sched.exec_depth = 1;
      sched.runners++;
    }
  pthread_mutex_unlock (&sched.lock);
  if (ok)
    touch ();
  return ok;
}

/* Runs a claimed node and its chain in this thread, then gives the right
 * back: sched.lock taken once, at the end.  No lock held. */
static void
run_claimed (sched_thread *t, _cl_command_node *node)
{
  drain_frame f
      = { .by = BY_SUBMIT, .counts = { .by = BY_SUBMIT }, .outer = NULL };
  t->frame = &f; /* claim_now found none */
  run_chain (node, &f);
  pthread_mutex_lock (&sched.lock);
  end_exec_locked ();
  tp_count_flush (&f.counts);
  t->frame = NULL;
  int kick = tp_sched_leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    tp_progress_kick ();
}

/* Submit's decision (submit.c), carried out.  Entered with the node's event
 * locked; unlocks it.  Every submit counts as the host's activity, listed
 * or not (progress.c: a burst of enqueues is one unit). */
void
tp_sched_submit (_cl_command_node *node, tp_submit_how how)
{
  cl_event ev = node->sync.event.event;
  touch ();
  sched_thread *t = me ();
  if (how == TP_HOW_NOW && claim_now (t, node))
    {
      POCL_UNLOCK_OBJ (ev);
      run_claimed (t, node);
      return;
    }
  if (how != TP_HOW_WAIT)
    push (node, how == TP_HOW_DRAIN ? PUSH_SELF : PUSH_OTHER);
  POCL_UNLOCK_OBJ (ev);
  if (how == TP_HOW_DRAIN)
    drain (BY_SUBMIT);
}

/* Called by pocl_broadcast with both events locked; must return with both
 * locked, and runs nothing (docs/protocol.md item 31). */
void
tp_notify (cl_device_id device, cl_event event, cl_event finished)
{
  _cl_command_node *node = event->command;

  if (TP_NODE_FLAGS (node) & TP_LISTED)
    return;
  if (finished->status < CL_COMPLETE)
    TP_NODE_FLAGS (node) |= TP_FAILED;
  if (!(TP_NODE_FLAGS (node) & TP_SUBMITTED))
    return; /* notify before submit: submit lists it */
  if (!(TP_NODE_FLAGS (node) & TP_FAILED))
    {
      if (!pocl_command_is_ready (event) || event->status != CL_QUEUED)
        return;
      pocl_update_event_submitted (event);
    }
  push (node, PUSH_OTHER);
}

/* clFlush: every listed command already reaches a runner or the progress
 * thread within the grace period (clFinish calls flush first, so starting
 * the progress thread at once would race the waiter: a hand-off). */
void
tp_flush (cl_device_id device, cl_command_queue cq)
{
}

/* Precondition (both): libpocl's device init lock (see tp_sched). */
int
tp_sched_attach (const tp_device *d)
{
  if (sched.users > 0)
    {
      sched.users++;
      return 0;
    }
  memset (&sched, 0, sizeof sched);
  /* Adaptive: the lock is held for a few instructions at a time, and a
   * waiter that finds the progress thread holding it should spin a little
   * rather than sleep on it (a futex sleep and wake-up, tens of us on a
   * loaded machine, between a command's enqueue and its start). */
  pthread_mutexattr_t ma;
  pthread_mutexattr_init (&ma);
  pthread_mutexattr_settype (&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
  int rc = pthread_mutex_init (&sched.lock, &ma);
  pthread_mutexattr_destroy (&ma);
  if (rc != 0)
    return -1;
  pthread_cond_init (&sched.waiters_cond, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&sched.progress_cond, &ca);
  pthread_condattr_destroy (&ca);
  sched.progress_state = TP_PROGRESS_SLEEPING;
  sched.grace_ns = d->set.grace_ns;
  tt_atomic_init (&sched.sleeping, 0);
  tt_atomic_init (&sched.finish_gen, 0);
  tt_atomic_init (&sched.activity, 0);
  sched.users = 1;
  return 0;
}

void
tp_sched_detach (void)
{
  if (sched.users == 0 || --sched.users > 0)
    return;
  pthread_mutex_lock (&sched.lock);
  sched.shutdown = 1;
  int started = sched.progress_started;
  if (started)
    pthread_cond_signal (&sched.progress_cond);
  pthread_mutex_unlock (&sched.lock);
  if (started)
    pthread_join (sched.progress, NULL);
  pthread_cond_destroy (&sched.waiters_cond);
  pthread_cond_destroy (&sched.progress_cond);
  pthread_mutex_destroy (&sched.lock);
}
