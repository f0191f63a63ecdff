/* teams PoCL driver: the progress thread -- the scheduler's runner of last
 * resort, for listed commands nobody came for within the grace period
 * (queue.c has the scheduler's protocol; queue.h its state).
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
 * released (tp_progress_kick).
 *
 * Rejected: waking the progress thread at every push (a futex call plus two
 * context switches on another core per command); a progress thread that
 * polls while idle (it takes a core from the team). */
#include "queue.h"

#include <stdio.h>
#include <time.h>

uint64_t
tp_now_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *progress_main (void *arg);

/* Precondition: sched.lock held (queue.h has the contract). */
int
tp_progress_arm_locked (void)
{
  if (sched.shutdown)
    return 0;
  if (!sched.progress_started)
    {
      sched.progress_state = TP_PROGRESS_GRACE;
      sched.armed_at = tp_now_ns ();
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
      sched.armed_at = tp_now_ns ();
      return 1;
    }
  return 0;
}

/* Precondition: sched.lock not held; tp_progress_arm_locked returned 1.  The
 * thread, when it wakes, reads its state under sched.lock (set to GRACE by the
 * arm): a signal that finds it not yet waiting is not needed. */
void
tp_progress_kick (void)
{
  pthread_cond_signal (&sched.progress_cond);
}

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
      uint64_t t = tp_now_ns (), g = sched.grace_ns;
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
      tp_sched_drain_locked (BY_PROGRESS);
      sched.runners--;
      /* Stay in GRACE for another period: pushes right after a burst find
       * us awake. */
      sched.progress_state = TP_PROGRESS_GRACE;
      sched.armed_at = tp_now_ns ();
    }
  pthread_mutex_unlock (&sched.lock);
  return NULL;
}
