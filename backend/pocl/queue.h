/* teams PoCL driver: the scheduler's state (the ready list, its lock, its
 * runners, the progress thread's words) and its files' calls to each
 * other, shared by queue.c (the list, its runners, the protocol), wait.c
 * (the waits), progress.c (the progress thread) and counters.c (who ran
 * what). */
#ifndef TEAMS_POCL_QUEUE_H
#define TEAMS_POCL_QUEUE_H

#include "teams-pocl.h"

/* Who runs a command: its counter (counters.c, Counters) and its drain. */
typedef enum run_by { BY_SUBMIT, BY_WAITER, BY_PROGRESS } run_by;

/* A drain's counts of one device, not yet added to its counters
 * (counters.c). */
typedef struct tp_counts {
  run_by by;
  tp_device *d;                  /* the device counted, NULL until one is */
  uint64_t ran, ndrange, groups; /* not yet added to d->n_* */
} tp_counts;

/* counters.c: counts a command run by `by`, a failed one, an ND-range of
 * `groups` work-groups, in c (a drain's, or NULL: at once); flush adds c's
 * counts to its device's counters. */
void tp_count_run (tp_counts *c, tp_device *d, run_by by);
void tp_count_failed (tp_device *d);
void tp_count_ndrange (tp_counts *c, tp_device *d, size_t groups);
void tp_count_flush (tp_counts *c);

enum { TP_PROGRESS_SLEEPING, TP_PROGRESS_GRACE, TP_PROGRESS_RUNNING };

/* The scheduler: one per process, shared by every teams device (queue.c,
 * Devices).  Set up by the first device's init (tp_sched_attach) and taken
 * down by the last one's uninit (tp_sched_detach); libpocl initialises and
 * uninitialises its devices one after another, under its own lock, and only
 * while no command exists, so `users` needs no lock of ours. */
typedef struct tp_sched {
  /* What a launch's submit reads and writes, its first line (a launch after
   * the host's own work finds it cold: each line more is a miss). */
  _Alignas (TT_CACHE_PAD) pthread_mutex_t lock; /* what it guards: queue.c,
                                                   Locks and their order */
  _cl_command_node *ready_head;  /* FIFO of commands to run or to fail */
  const void *exec_owner;        /* the thread running listed commands (its
                                    token), NULL when none: one at
                                    a time, in list order (queue.c,
                                    Order) */
  unsigned runners;              /* threads that will look at the list */
  int shutdown;
  _Atomic uint64_t activity;     /* changes at every submit and push: the
                                    host is still enqueuing (touch());
                                    read without the lock */
  _cl_command_node *ready_tail;
  unsigned exec_depth;           /* its nested drains */
  _Atomic unsigned sleeping;     /* waiters asleep (or about to sleep) on
                                    waiters_cond; written under lock, read
                                    without it (wait.c) */
  _Atomic unsigned finish_gen;   /* bumped after every finished command;
                                    read without the lock (wait.c) */
  uint64_t list_epoch;           /* bumped when the list becomes non-empty */
  uint64_t armed_at;             /* when the progress thread was last armed */
  uint64_t grace_ns;             /* the first attached device's grace_us */
  int progress_started;
  int progress_state;            /* TP_PROGRESS_* */
  pthread_t progress;
  unsigned users;                /* devices attached */
  pthread_cond_t waiters_cond;   /* threads blocked in join / wait_event */
  pthread_cond_t progress_cond;  /* the progress thread (CLOCK_MONOTONIC) */
} tp_sched;

extern tp_sched sched;

/* queue.c: runs listed commands; whether another thread holds the right
 * to run them (Order); the caller stops being a runner, 1: kick the
 * progress thread after the unlock (their preconditions: at their
 * definitions). */
void tp_sched_drain_locked (run_by by);
int tp_sched_exec_busy_locked (void);
int tp_sched_leave_locked (void);

/* progress.c.  Precondition: sched.lock held.  Makes sure the progress
 * thread will look at the list within the grace period.  Returns 1 when
 * the caller must call tp_progress_kick () after releasing sched.lock: the
 * thread sleeps and needs a signal.  Signalling after the unlock spares the
 * woken thread a block on sched.lock that the signaller still holds (two
 * more futex calls, and on a loaded machine a context switch, on the
 * enqueue path). */
int tp_progress_arm_locked (void);
/* Precondition: sched.lock not held; tp_progress_arm_locked returned 1. */
void tp_progress_kick (void);

#endif
