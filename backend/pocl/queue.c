/* teams PoCL driver: who runs a command, and when.
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
 * Submit (auto mode, the default; docs/protocol.md item 36).  Lazy, but a kernel
 * launch that is ready at submit, predicted to end within the grace period
 * (resolve.c, Launch history) and with no argument the host may write
 * while it runs (run.c, tp_run_now_ok), runs at once in the submitting
 * thread when the scheduler is idle: claim_now takes the right to run
 * listed commands under sched.lock, its event still locked, only when
 * nothing is listed and nobody holds that right, so it is the next command
 * in list order anyway; run_claimed runs it and its chain (empty: nothing
 * can wait for an event not yet returned to the program).  Deferred, each
 * command of a burst of short launches waited, cold and behind a
 * dependency on the one before, for the clFinish; run at once it costs
 * what PoCL's synchronous basic driver pays.
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
 * The node's flags (TP_NODE_FLAGS: a field of the node that only drivers
 * read, pocl-compat.h), written only with the node's event locked
 * (docs/protocol.md item 31):
 *   TP_SUBMITTED  submit has run for the node;
 *   TP_FAILED     the node is failed instead of run (a dependency failed,
 *                 or no work-group function could be had);
 *   TP_LISTED     the node went to a runner (at most once);
 *   TP_JIT        the node holds a reference on its dlhandle cache entry.
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
 * its claimed node (Submit), which hands on when it gives the right back.
 * So a push (list_locked) needs a wake-up only when there is no runner, and
 * a runner that leaves a non-empty list with no other runner arms the
 * progress thread (leave_locked).
 *
 * The progress thread and the grace period.  States (sched.progress_state):
 * SLEEPING (indefinite wait), GRACE (timed wait), RUNNING.  Arming wakes it
 * only from SLEEPING (one futex call) and puts it in GRACE: pushes during
 * GRACE or RUNNING cost nothing, so a tight enqueue+wait loop pays at most
 * one wake-up per grace period.  In GRACE the thread waits until grace_ns
 * after it was armed and after the host's last submit or push -- a burst of
 * enqueues is one unit, so 1000 enqueues and a clFinish run on the
 * finishing thread.  Submits count even when their command is not ready:
 * on an in-order queue only the first of a burst is listed at once, the
 * rest wait for their predecessor.  Submitters and pushes only change
 * sched.activity (touch(), no clock read); the thread notices a change when
 * it wakes, so a grace ends between one and two grace periods after the
 * last submit.  The wait is capped at TP_BURST_GRACES grace periods after
 * the thread first saw the list non-empty; then it runs what is still
 * listed (a waiter took it otherwise).  With nothing listed, or while a
 * runner exists (the runner runs the list or re-arms it), it lingers: it
 * stays in GRACE and looks again every grace period until the host has
 * been quiet for TP_LINGER_GRACES graces, and only then sleeps until
 * armed.  So a host that enqueues and waits in a loop finds it in GRACE at
 * every enqueue and pays no signal (a futex call that wakes a thread on
 * another core, on the enqueue path).  Arming signals after sched.lock is
 * released (kick_progress).
 *
 * Waiting without lost wake-ups (docs/protocol.md item 34).  finish_gen is
 * bumped (seq_cst) by notify_event_finished, which libpocl calls after the
 * finished command left its queue's count and after dependents were
 * notified; a waiter sleeps only when finish_gen did not change between
 * its look at its condition and its sleep (the handshake is in wait_until
 * and tp_notify_event_finished).  A finisher pays one atomic increment and
 * one load when nobody sleeps -- a waiter that is busy running the queue
 * itself is not woken for every command it finishes.
 *
 * Rejected: a dispatcher thread that runs everything (pthread's model: a
 * hand-off per command); running commands inside notify (PoCL 3.1
 * deadlocks, see above); waking the progress thread at every push (a futex
 * call plus two context switches on another core per command); a progress
 * thread that polls while idle (it takes a core from the team); eager
 * submit as the default (an enqueue that blocks until its kernel ends hangs
 * programs whose kernels wait for the host: auto submit runs at once only
 * what cannot). */
#include "teams-pocl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TP_SUBMITTED 1
#define TP_FAILED 2
#define TP_LISTED 4

typedef enum run_by { BY_SUBMIT, BY_WAITER, BY_PROGRESS } run_by;

enum { TP_PROGRESS_SLEEPING, TP_PROGRESS_GRACE, TP_PROGRESS_RUNNING };

/* The scheduler: one per process, shared by every teams device (Devices,
 * above).  Set up by the first device's init (tp_sched_attach) and taken
 * down by the last one's uninit (tp_sched_detach); libpocl initialises and
 * uninitialises its devices one after another, under its own lock, and only
 * while no command exists, so `users` needs no lock of ours. */
typedef struct tp_sched {
  pthread_mutex_t lock;          /* what it guards: Locks, above */
  pthread_cond_t waiters_cond;   /* threads blocked in join / wait_event */
  pthread_cond_t progress_cond;  /* the progress thread (CLOCK_MONOTONIC) */
  _cl_command_node *ready_head;  /* FIFO of commands to run or to fail */
  _cl_command_node *ready_tail;
  unsigned runners;              /* threads that will look at the list */
  const void *exec_owner;        /* the thread running listed commands (its
                                    tls_me address), NULL when none: one at
                                    a time, in list order (Order, below) */
  unsigned exec_depth;           /* its nested drains */
  uint64_t list_epoch;           /* bumped when the list becomes non-empty */
  uint64_t armed_at;             /* when the progress thread was last armed */
  uint64_t grace_ns;             /* the first attached device's grace_us */
  int progress_started;
  int progress_state;            /* TP_PROGRESS_* */
  int shutdown;
  pthread_t progress;
  unsigned users;                /* devices attached */

  /* Read without the lock (see Waiting, and touch()). */
  _Atomic unsigned sleeping;     /* waiters asleep (or about to sleep) on
                                    waiters_cond; written under lock */
  _Atomic unsigned finish_gen;   /* bumped after every finished command */
  _Atomic uint64_t activity;     /* changes at every submit and push: the
                                    host is still enqueuing (touch()) */
} tp_sched;

static tp_sched sched;

/* One drain() in progress on this thread: who drains, the command that the
 * command this thread is running made ready first (its chain), and the
 * counts of one device not yet added to its counters.  Innermost first;
 * NULL outside drain(). */
typedef struct drain_frame {
  run_by by;
  _cl_command_node *next; /* the chain: at most one command */
  tp_device *counted;     /* the device of ran, ndrange and groups (the
                             first one counted), or NULL */
  uint64_t ran, ndrange, groups; /* not yet added to counted->n_* */
  struct drain_frame *outer;
} drain_frame;

static __thread drain_frame *tls_frame;

/* This thread's drain when a waiter or submitter runs it: the frame that
 * keeps a chain and sums the counters.  The progress thread's does neither
 * (see Chains, and Counters below): NULL then, and outside a drain. */
static drain_frame *
own_frame (void)
{
  drain_frame *f = tls_frame;
  return f != NULL && f->by != BY_PROGRESS ? f : NULL;
}

/* The frame that may count a command of d: this thread's own, when it has
 * counted nothing yet or only d's. */
static drain_frame *
counting_frame (tp_device *d)
{
  drain_frame *f = own_frame ();
  if (f == NULL || (f->counted != NULL && f->counted != d))
    return NULL;
  f->counted = d;
  return f;
}

typedef enum push_how {
  PUSH_SELF, /* the pusher drains right after (eager submit) */
  PUSH_OTHER /* anyone else: lazy submit, notify */
} push_how;

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
 * command costs no read-modify-write for them (docs/measurements.md, "The
 * PoCL driver's queue").
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
 * of one device, other devices' commands count at once). */
static void
count_run (tp_device *d, run_by by)
{
  drain_frame *f = counting_frame (d);
  if (f != NULL)
    f->ran++;
  else
    tt_atomic_fetch_add_relaxed (run_counter (d, by), 1);
}

void
tp_count_ndrange (tp_device *d, size_t groups)
{
  drain_frame *f = counting_frame (d);
  if (f != NULL)
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
  tp_device *d = f->counted;
  if (d == NULL)
    return;
  if (f->ran)
    tt_atomic_fetch_add_relaxed (run_counter (d, f->by), f->ran);
  if (f->ndrange)
    {
      tt_atomic_fetch_add_relaxed (&d->n_ndrange, f->ndrange);
      tt_atomic_fetch_add_relaxed (&d->n_groups, f->groups);
    }
  f->ran = f->ndrange = f->groups = 0;
}

static void *progress_main (void *arg);

/* Precondition: sched.lock held.  Makes sure the progress thread will look
 * at the list within the grace period.  Returns 1 when the caller must call
 * kick_progress () after releasing sched.lock: the thread sleeps and needs a
 * signal.  Signalling after the unlock spares the woken thread a block on
 * sched.lock that the signaller still holds (two more futex calls, and on a
 * loaded machine a context switch, on the enqueue path). */
static int
arm_progress_locked (void)
{
  if (sched.shutdown)
    return 0;
  if (!sched.progress_started)
    {
      sched.progress_state = TP_PROGRESS_GRACE;
      sched.armed_at = now_ns ();
      if (pthread_create (&sched.progress, NULL, progress_main, NULL) != 0)
        {
          /* No thread: the commands still run when someone waits. */
          fprintf (stderr, "teams: cannot start the progress thread; "
                           "commands run only when waited for\n");
          return 0;
        }
      sched.progress_started = 1;
      return 0;
    }
  if (sched.progress_state == TP_PROGRESS_SLEEPING)
    {
      sched.progress_state = TP_PROGRESS_GRACE;
      sched.armed_at = now_ns ();
      return 1;
    }
  return 0;
}

/* Precondition: sched.lock not held; arm_progress_locked returned 1.  The
 * thread, when it wakes, reads its state under sched.lock (set to GRACE by the
 * arm): a signal that finds it not yet waiting is not needed. */
static void
kick_progress (void)
{
  pthread_cond_signal (&sched.progress_cond);
}

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
 * it (docs/protocol.md item 33).  Returns arm_progress_locked's answer (1: kick after the unlock). */
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

  if (how == PUSH_SELF || tls_frame != NULL)
    return 0;
  if (sched.runners > 0)
    {
      if (tt_atomic_load_seq_cst (&sched.sleeping) > 0)
        pthread_cond_broadcast (&sched.waiters_cond);
      return 0;
    }
  return arm_progress_locked ();
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
    kick_progress ();
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
 * when the caller must kick_progress after the unlock. */
static int
leave_locked (void)
{
  sched.runners--;
  if (sched.ready_head != NULL && sched.runners == 0)
    return arm_progress_locked ();
  return 0;
}

/* Runs or fails one popped node.  No lock held (see the protocol).  The node
 * is freed by libpocl when its event finishes: not touched afterwards. */
static void
run_node (_cl_command_node *node, run_by by)
{
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
      tt_atomic_fetch_add_relaxed (&d->n_failed, 1);
      return;
    }
  count_run (d, by);
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
  if (tp_run_ndrange (d, node) == 0)
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
static __thread char tls_me;

static int
exec_busy_locked (void)
{
  return sched.exec_owner != NULL && sched.exec_owner != &tls_me;
}

/* Runs listed commands until the list and this thread's chain are empty;
 * with `first` (Submit: a node this thread already owns the right to run,
 * exec_owner and exec_depth set by the caller), that node and its chain
 * only.  Precondition: sched.lock held and the caller counted in
 * sched.runners; returns with sched.lock held. */
static void
drain_locked (run_by by, _cl_command_node *first)
{
  drain_frame f = { .by = by, .outer = tls_frame };
  tls_frame = &f;
  _cl_command_node *n = first;
  while (n != NULL
         || (first == NULL && !exec_busy_locked ()
             /* The progress thread hands over to a waiter that came. */
             && !(by == BY_PROGRESS && sched.runners > 1)
             && (n = pop_locked ()) != NULL))
    {
      if (n != first)
        {
          sched.exec_owner = &tls_me;
          sched.exec_depth++;
        }
      pthread_mutex_unlock (&sched.lock);
      for (;;)
        {
          run_node (n, by);
          /* The first command n made ready (pushed during run_node). */
          if ((n = f.next) == NULL)
            break;
          f.next = NULL;
        }
      pthread_mutex_lock (&sched.lock);
      if (--sched.exec_depth == 0)
        {
          sched.exec_owner = NULL;
          /* Waiters that found the right taken sleep for it. */
          if (sched.ready_head != NULL
              && tt_atomic_load_seq_cst (&sched.sleeping) > 0)
            pthread_cond_broadcast (&sched.waiters_cond);
        }
    }
  frame_flush (&f);
  tls_frame = f.outer;
}

static void
drain (run_by by)
{
  pthread_mutex_lock (&sched.lock);
  sched.runners++;
  drain_locked (by, NULL);
  int kick = leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    kick_progress ();
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
               "installed %s version (built against %s)\n",
               TEAMS_POCL_PACKAGE, TEAMS_POCL_PACKAGE_VERSION);
      abort ();
    }
  /* Relaxed: a flag that only saves repeating an idempotent check. */
  tt_atomic_store_relaxed (&commands_checked, 1);
}

/* Submit, submit=auto: a node claims the right to run listed commands
 * (exec_owner) when nothing is listed, nobody holds the right, and this
 * thread is not draining already (an event callback that enqueues): it
 * would be the next command to run anyway (Order), and a command just
 * submitted has nothing waiting for it yet, so its chain stays empty.
 * Precondition: the node's event locked (order event -> sched.lock).
 * Returns 1 when claimed: the caller unlocks the event and calls
 * run_claimed. */
static int
claim_now (_cl_command_node *node)
{
  pthread_mutex_lock (&sched.lock);
  int ok = sched.ready_head == NULL && sched.exec_owner == NULL
           && tls_frame == NULL && !sched.shutdown;
  if (ok)
    {
      TP_NODE_FLAGS (node) |= TP_LISTED;
      sched.exec_owner = &tls_me;
      sched.exec_depth = 1;
      sched.runners++;
    }
  pthread_mutex_unlock (&sched.lock);
  if (ok)
    touch ();
  return ok;
}

/* Runs a claimed node in this thread, then gives the right back.  No lock
 * held. */
static void
run_claimed (_cl_command_node *node)
{
  pthread_mutex_lock (&sched.lock);
  drain_locked (BY_SUBMIT, node);
  int kick = leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    kick_progress ();
}

/* Entered with the event locked (libpocl's submit contract); unlocks it. */
void
tp_submit (_cl_command_node *node, cl_command_queue cq)
{
  if (!tt_atomic_load_relaxed (&commands_checked))
    check_command_abi (node, cq);
  tp_device *d = node->device->data; /* the command's device */
  cl_event ev = node->sync.event.event;
  touch ();

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

  TP_NODE_FLAGS (node) |= TP_SUBMITTED;
  int listed = 0;
  if (!(TP_NODE_FLAGS (node) & TP_LISTED))
    {
      if (TP_NODE_FLAGS (node) & TP_FAILED)
        listed = 1;
      else if (pocl_command_is_ready (ev))
        {
          pocl_update_event_submitted (ev);
          listed = 1;
        }
    }
  int eager = d->set.submit == TP_SUBMIT_EAGER;
  if (listed && !eager && d->set.submit == TP_SUBMIT_AUTO
      && !(TP_NODE_FLAGS (node) & TP_FAILED) && tp_run_now_ok (d, node)
      && claim_now (node))
    {
      POCL_UNLOCK_OBJ (ev);
      run_claimed (node);
      return;
    }
  if (listed)
    push (node, eager ? PUSH_SELF : PUSH_OTHER);
  POCL_UNLOCK_OBJ (ev);
  if (listed && eager)
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
 * nothing is ready and nothing finished since the last look (docs/protocol.md
 * item 34: finish_gen is read before the condition, and again under
 * sched.lock after `sleeping` is raised). */
static void
wait_until (done_fn done, void *what)
{
  pthread_mutex_lock (&sched.lock);
  sched.runners++;
  for (;;)
    {
      drain_locked (BY_WAITER, NULL);
      unsigned gen = tt_atomic_load_seq_cst (&sched.finish_gen);
      pthread_mutex_unlock (&sched.lock);
      int ok = done (what);
      pthread_mutex_lock (&sched.lock);
      if (ok)
        break;
      if ((sched.ready_head == NULL || exec_busy_locked ())
          && tt_atomic_load_seq_cst (&sched.finish_gen) == gen)
        {
          tt_atomic_fetch_add_seq_cst (&sched.sleeping, 1);
          if (tt_atomic_load_seq_cst (&sched.finish_gen) == gen)
            pthread_cond_wait (&sched.waiters_cond, &sched.lock);
          tt_atomic_fetch_sub_seq_cst (&sched.sleeping, 1);
        }
    }
  int kick = leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    kick_progress ();
}

void
tp_join (cl_device_id device, cl_command_queue cq)
{
  wait_until (queue_done, cq);
}

void
tp_wait_event (cl_device_id device, cl_event event)
{
  wait_until (event_done, event);
}

/* Called by libpocl with the event locked, after the command left its
 * queue's count (lock order event -> sched.lock). */
void
tp_notify_event_finished (cl_event event)
{
  tt_atomic_fetch_add_seq_cst (&sched.finish_gen, 1);
  if (tt_atomic_load_seq_cst (&sched.sleeping) > 0)
    {
      pthread_mutex_lock (&sched.lock);
      pthread_cond_broadcast (&sched.waiters_cond);
      pthread_mutex_unlock (&sched.lock);
    }
}

/* ---- the progress thread --------------------------------------------------------------- */

static void
timed_wait_until (uint64_t deadline)
{
  struct timespec ts = { (time_t)(deadline / 1000000000u),
                         (long)(deadline % 1000000000u) };
  pthread_cond_timedwait (&sched.progress_cond, &sched.lock, &ts);
}

static void *
progress_main (void *arg)
{
  (void)arg;
  /* What this thread saw, and when: the activity value (quiet_from: when
   * it last changed) and the list's epoch (first_seen: when this thread
   * first saw the list non-empty since it last was empty). */
  uint64_t seen_activity = 0, quiet_from = 0;
  uint64_t seen_epoch = 0, first_seen = 0;
  pthread_mutex_lock (&sched.lock);
  while (!sched.shutdown)
    {
      if (sched.progress_state == TP_PROGRESS_SLEEPING)
        {
          /* Arming wakes us. */
          pthread_cond_wait (&sched.progress_cond, &sched.lock);
          continue;
        }
      uint64_t t = now_ns (), g = sched.grace_ns;
      uint64_t act = tt_atomic_load_relaxed (&sched.activity);
      if (act != seen_activity)
        {
          seen_activity = act;
          quiet_from = t;
        }
      /* Lingering: while the host enqueued within the last TP_LINGER_GRACES
       * graces, look again every grace instead of sleeping, so that the
       * next push finds this thread in GRACE and costs no signal. */
      int linger = t < quiet_from + (uint64_t)TP_LINGER_GRACES * g;
      if (sched.runners > 0)
        {
          /* A runner owns the list (it re-arms us when it leaves with
           * commands listed). */
          if (linger)
            {
              sched.progress_state = TP_PROGRESS_GRACE;
              timed_wait_until (t + g);
            }
          else
            sched.progress_state = TP_PROGRESS_SLEEPING;
          continue;
        }
      /* Due: grace after arming and after the host's last submit or push
       * (as this thread saw it), capped at TP_BURST_GRACES graces after it
       * saw the list non-empty. */
      if (sched.list_epoch != seen_epoch)
        {
          seen_epoch = sched.list_epoch;
          first_seen = t;
        }
      uint64_t due = sched.armed_at + g;
      if (sched.ready_head != NULL)
        {
          uint64_t quiet = quiet_from + g;
          uint64_t cap = first_seen + (uint64_t)TP_BURST_GRACES * g;
          uint64_t list_due = quiet < cap ? quiet : cap;
          if (list_due > due)
            due = list_due;
        }
      if (t < due)
        {
          sched.progress_state = TP_PROGRESS_GRACE;
          timed_wait_until (due);
          continue;
        }
      if (sched.ready_head == NULL)
        {
          if (linger)
            timed_wait_until (t + g);
          else
            sched.progress_state = TP_PROGRESS_SLEEPING;
          continue;
        }
      sched.progress_state = TP_PROGRESS_RUNNING;
      sched.runners++;
      drain_locked (BY_PROGRESS, NULL);
      sched.runners--;
      /* Stay in GRACE for another period: pushes right after a burst find
       * us awake. */
      sched.progress_state = TP_PROGRESS_GRACE;
      sched.armed_at = now_ns ();
    }
  pthread_mutex_unlock (&sched.lock);
  return NULL;
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
