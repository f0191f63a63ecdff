/* teams PoCL driver: vendor-private clGetDeviceInfo queries.
 *
 * Tests and benchmarks include this header (it needs only <CL/cl.h>) to ask
 * the driver what it did, through the ordinary ICD path:
 *   tt_cl_stats s;
 *   clGetDeviceInfo(dev, TT_CL_DEVICE_STATS, sizeof s, &s, NULL);
 * Other drivers answer CL_INVALID_VALUE. */
#ifndef TEAMS_POCL_INFO_H
#define TEAMS_POCL_INFO_H

#include <stdint.h>

/* Counters since the device was initialised (tt_cl_stats). */
#define TT_CL_DEVICE_STATS 0x7E4D0001
/* The settings in force, as a string
 * "cu=2 submit=lazy grace_us=50 schedule=auto grain=0" (char[]). */
#define TT_CL_DEVICE_SETTINGS 0x7E4D0002

/* Participants of the team that ran work-groups of this device's (or
 * sub-device's) ND-ranges since the last such query, which clears them:
 * uint64_t[4], participant i as bit i % 64 of word i / 64.  Recorded only
 * when the program runs with TEAMS_POCL_RECORD_PARTICIPANTS=1 (all zero
 * otherwise); for tests of sub-devices. */
#define TT_CL_DEVICE_PARTICIPANTS_RAN 0x7E4D0003

typedef struct tt_cl_stats {
  uint64_t run_by_submit;   /* commands run by the thread that enqueued them */
  uint64_t run_by_waiter;   /* ... by a thread waiting for them */
  uint64_t run_by_progress; /* ... by the driver's progress thread */
  uint64_t failed;          /* commands failed because a dependency failed */
  uint64_t ndrange;         /* ND-range commands run */
  uint64_t groups;          /* work-groups run */
  uint64_t generic;         /* ND-ranges that ran on the kernel's generic
                               work-group function because the one
                               specialised for their launch was not built
                               yet */
  uint64_t jit_swapped;     /* specialised work-group functions built in the
                               background and swapped in */
  uint64_t jit_pending;     /* not a counter: background builds queued or
                               running now (0: every launch so far that
                               could have a specialised function has it) */
  uint64_t jit_loaded;      /* specialised work-group functions the disk
                               cache already held (an earlier run built
                               them), loaded at their first launch */
} tt_cl_stats;

#endif
