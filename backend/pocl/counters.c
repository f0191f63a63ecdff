/* teams PoCL driver: the counters of who ran what on a device (tp_device's
 * n_run_*, n_failed, n_ndrange, n_groups), counted by the scheduler
 * (queue.c's run_node) and read by clGetDeviceInfo's TT_CL_DEVICE_STATS
 * (driver.c), both through this file only.
 *
 * Counters.  A waiter or submitter counts in its drain's tp_counts and adds
 * the totals when the drain ends, before its wait or enqueue returns: a
 * program that reads them after its own wait sees exact values, and a
 * command costs no read-modify-write for them (docs/measurements.md, "The
 * PoCL driver's queue").  A drain's counts are one device's (the first it
 * counts); another device's commands, and the progress thread's (which
 * counts with no tp_counts: a waiter may see what it ran complete at any
 * moment), are added at once.  Relaxed: statistics, read after the
 * program's own wait. */
#include "queue.h"

#include "teams-pocl-info.h"

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

/* c, when it may count a command of d: it has counted nothing yet, or only
 * d's.  NULL otherwise. */
static tp_counts *
counting (tp_counts *c, tp_device *d)
{
  if (c == NULL || (c->d != NULL && c->d != d))
    return NULL;
  c->d = d;
  return c;
}

void
tp_count_run (tp_counts *c, tp_device *d, run_by by)
{
  if ((c = counting (c, d)) != NULL)
    c->ran++;
  else
    tt_atomic_fetch_add_relaxed (run_counter (d, by), 1);
}

void
tp_count_failed (tp_device *d)
{
  tt_atomic_fetch_add_relaxed (&d->n_failed, 1);
}

void
tp_count_ndrange (tp_counts *c, tp_device *d, size_t groups)
{
  if ((c = counting (c, d)) != NULL)
    {
      c->ndrange++;
      c->groups += groups;
      return;
    }
  tt_atomic_fetch_add_relaxed (&d->n_ndrange, 1);
  tt_atomic_fetch_add_relaxed (&d->n_groups, groups);
}

void
tp_count_flush (tp_counts *c)
{
  tp_device *d = c->d;
  if (d == NULL)
    return;
  if (c->ran)
    tt_atomic_fetch_add_relaxed (run_counter (d, c->by), c->ran);
  if (c->ndrange)
    {
      tt_atomic_fetch_add_relaxed (&d->n_ndrange, c->ndrange);
      tt_atomic_fetch_add_relaxed (&d->n_groups, c->groups);
    }
  c->ran = c->ndrange = c->groups = 0;
}

void
tp_device_stats (const tp_device *d, tt_cl_stats *s)
{
  *s = (tt_cl_stats){
    .run_by_submit = tt_atomic_load_relaxed (&d->n_run_submit),
    .run_by_waiter = tt_atomic_load_relaxed (&d->n_run_waiter),
    .run_by_progress = tt_atomic_load_relaxed (&d->n_run_progress),
    .failed = tt_atomic_load_relaxed (&d->n_failed),
    .ndrange = tt_atomic_load_relaxed (&d->n_ndrange),
    .groups = tt_atomic_load_relaxed (&d->n_groups),
    .generic = tt_atomic_load_relaxed (&d->n_generic),
    .jit_swapped = tt_atomic_load_relaxed (&d->n_jit_swapped),
    .jit_pending = tt_atomic_load_relaxed (&d->n_jit_pending),
    .jit_loaded = tt_atomic_load_relaxed (&d->n_jit_loaded),
  };
}
