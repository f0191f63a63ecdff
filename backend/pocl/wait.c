/* teams PoCL driver: the waits -- clFinish (join) and clWaitForEvents
 * (wait_event) -- and the wake-up of a waiter when a command finishes.  A
 * waiter is a runner (queue.c, Runners): it runs what is ready, on any
 * device, until its condition holds, and sleeps only when nothing is ready
 * for it.
 *
 * Waiting without lost wake-ups (docs/protocol.md item 34).  finish_gen is
 * bumped (seq_cst) by notify_event_finished, which libpocl calls after the
 * finished command left its queue's count and after dependents were
 * notified; a waiter sleeps only when finish_gen did not change between
 * its look at its condition and its sleep (the handshake is in wait_until
 * and tp_notify_event_finished).  A finisher pays one atomic increment and
 * one load when nobody sleeps -- a waiter that is busy running the queue
 * itself is not woken for every command it finishes.
 */
#include "queue.h"

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
  /* Done already (a launch that ran at submit, the common clFinish): no
   * runner needed here.  What is listed has a runner or the progress
   * thread armed (list_locked). */
  if (done (what))
    return;
  pthread_mutex_lock (&sched.lock);
  sched.runners++;
  for (;;)
    {
      tp_sched_drain_locked (BY_WAITER);
      unsigned gen = tt_atomic_load_seq_cst (&sched.finish_gen);
      pthread_mutex_unlock (&sched.lock);
      int ok = done (what);
      pthread_mutex_lock (&sched.lock);
      if (ok)
        break;
      if ((sched.ready_head == NULL || tp_sched_exec_busy_locked ())
          && tt_atomic_load_seq_cst (&sched.finish_gen) == gen)
        {
          tt_atomic_fetch_add_seq_cst (&sched.sleeping, 1);
          if (tt_atomic_load_seq_cst (&sched.finish_gen) == gen)
            pthread_cond_wait (&sched.waiters_cond, &sched.lock);
          tt_atomic_fetch_sub_seq_cst (&sched.sleeping, 1);
        }
    }
  int kick = tp_sched_leave_locked ();
  pthread_mutex_unlock (&sched.lock);
  if (kick)
    tp_progress_kick ();
}

void
tp_join (cl_device_id device, cl_command_queue cq)
{
  tp_submit_waited ();
  wait_until (queue_done, cq);
}

void
tp_wait_event (cl_device_id device, cl_event event)
{
  tp_submit_waited ();
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
