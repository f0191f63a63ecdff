/* teams PoCL driver: internal contract between driver.c (registration, init,
 * settings), abi.c (the ABI self-check), submit.c (a command's submit: run
 * now, list, or wait), queue.c, progress.c and counters.c (who runs a
 * listed command, when: the scheduler, queue.h), run.c (an ND-range on the
 * team), wgfunc.c, compile.c and resolve.c (work-group functions:
 * wgfunc.h), output.c (a launch's printf output), memory.c (buffer
 * placement) and subdev.c (sub-devices).
 *
 * Includes PoCL's private headers (extracted from pocl-source at configure
 * time) through our own config.h and pocl-compat.h, which keeps what
 * differs between the PoCL releases the driver supports; see
 * backend/pocl/CMakeLists.txt. */
#ifndef TEAMS_POCL_H
#define TEAMS_POCL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* PoCL's private headers, and what differs between its releases. */
#include "pocl-compat.h"
#include "pocl_workgroup_func.h"
/* The runtime's interface for the driver: the public API, the named
 * atomics (memory order in the name), per-thread scratch. */
#include "teams-driver.h"

/* The driver exports only pocl_pthread_init_device_ops (the slot it fills). */
#define TP_EXPORT __attribute__ ((visibility ("default")))

/* ---- settings (POCL_TEAMS<n>_PARAMETERS) ------------------------------------ */
typedef enum tp_submit_mode {
  /* submit only queues a ready command.  A thread that waits for it
   * (clFinish, clWaitForEvents, blocking calls) runs it; a command nobody
   * has come for after grace_ns goes to the progress thread.  Enqueue never
   * blocks on the command (a kernel may even never end). */
  TP_SUBMIT_LAZY = 0,
  /* submit runs a ready command at once, in the enqueuing thread: PoCL's
   * synchronous path (basic's) with the team under it.  Fastest; enqueue
   * returns only when the command is done. */
  TP_SUBMIT_EAGER = 1,
  /* lazy, but an ND-range that is ready at submit runs at once in the
   * enqueuing thread when its kernel's loop record says it ends within
   * the grace period and none of its arguments is memory the host may
   * write while it runs, and no other command is listed or running
   * (submit.c, Submit).  The default. */
  TP_SUBMIT_AUTO = 2
} tp_submit_mode;

/* Where the memory of a new buffer goes (memory.c). */
typedef enum tp_placement {
  TP_PLACE_FIRSTTOUCH = 0, /* touched on the team, static partition */
  TP_PLACE_INTERLEAVE = 1, /* interleaved over the team's nodes */
  TP_PLACE_HOST = 2,       /* PoCL's: whoever writes first */
  /* The default until init resolves it: firsttouch when the team spans
   * several NUMA nodes, host on one (placing pages there buys nothing and
   * costs a team region and a page fault per page of every buffer). */
  TP_PLACE_AUTO = 3
} tp_placement;

typedef struct tp_settings {
  size_t participants;     /* "cu=N": most participants per region (CUs) */
  tp_submit_mode submit;   /* "submit=auto|lazy|eager" */
  tt_schedule schedule;    /* "schedule=greedy|static|steal|auto" */
  size_t grain;            /* "grain=N": work-groups per chunk, 0 = the
                              runtime's default for the schedule */
  uint64_t grace_ns;       /* "grace_us=N": lazy mode's wait for a waiter */
  tp_placement placement;  /* "placement=firsttouch|interleave|host" */
} tp_settings;

/* Largest grain= accepted: work-groups per chunk beyond this buy nothing. */
#define TP_MAX_GRAIN ((size_t)1 << 32)

/* Default grace: long enough for the usual enqueue-then-wait to reach the
 * wait (a few us), short against a hand-off to another thread, what PoCL's
 * cpu driver pays per command (docs/measurements.md). */
#define TP_DEFAULT_GRACE_NS 50000
/* A burst of enqueues keeps the progress thread off for at most this many
 * grace periods: a program that enqueues without ever waiting still sees
 * its oldest command start within about 20 * grace. */
#define TP_BURST_GRACES 20
/* The progress thread stays awake (a timed wait per grace) for this many
 * grace periods after the host's last submit or push before it sleeps
 * until armed: a program that enqueues and waits in a loop whose turns
 * take up to this many graces (200 us by default: clpeak's, an
 * enqueue+finish of a short kernel) pays no signal (a futex call, and a
 * context switch on the other core) per enqueue.  Costs at most this many
 * wake-ups of the thread after the host stops enqueuing, also during a
 * long kernel, where a wake-up may preempt a participant: kept small. */
#define TP_LINGER_GRACES 4

/* Parses "key=value" pairs separated by ',' or ' ' into *s (which holds the
 * defaults on entry).  Returns 0, or -1 with a message in err[errlen]. */
int tp_settings_parse (tp_settings *s, const char *params, char *err,
                       size_t errlen);

/* memory.c: "placement=" values, and basic's alloc_mem_obj and free
 * wrapped to place new buffers (the protocol is at the top of memory.c). */
int tp_placement_parse (const char *v, tp_placement *out);
const char *tp_placement_name (tp_placement p);
cl_int tp_alloc_mem_obj (cl_device_id device, cl_mem mem, void *host_ptr,
                         cl_int (*basic_alloc) (cl_device_id, cl_mem, void *));
void tp_free_mem_obj (cl_device_id device, cl_mem mem,
                      void (*basic_free) (cl_device_id, cl_mem));
/* Marks a buffer whose pages await their first touch (in the device's
 * pocl_mem_identifier.extra, which basic leaves alone). */
#define TP_MEM_UNPLACED ((uint64_t)0x7465616d73ull)
/* Places the awaiting buffers of a command about to run (firsttouch). */
void tp_place_command (_cl_command_node *node);

/* ---- abi.c: the ABI self-check --------------------------------------------------- */
/* After basic's init: NULL when the device struct reads back as libpocl
 * wrote it, else the first field that does not (driver.c refuses the
 * device); init is the ops' init that wrote it (ours). */
const char *tp_abi_check_device (cl_device_id device,
                                 cl_int (*init) (unsigned, cl_device_id,
                                                 const char *));
/* At the first command: aborts the process when the command, event and
 * queue structs do not point at each other. */
void tp_abi_check_command (_cl_command_node *node, cl_command_queue cq);
/* Prints the refusal (what failed, and what to rebuild); `then` says what
 * happens next ("the device is disabled"). */
void tp_abi_refuse (const char *what, const char *running, const char *then);

/* ---- per-device state ---------------------------------------------------------- */
/* One teams device (device->data; its sub-devices share it).  The
 * scheduler that runs every device's commands is not here: queue.c owns
 * it, one per process (queue.c, Devices). */
typedef struct tp_device {
  cl_device_id dev;
  void *basic_data;        /* basic's device->data (printf buffer etc.) */
  tp_settings set;

  /* Counters for tests and benchmarks: the n_run_*, n_failed, n_ndrange
   * and n_groups counted through counters.c only (counters.c, Counters:
   * exact once the thread that ran a command has left its drain), the
   * work-group functions' by resolve.c and compile.c; relaxed. */
  _Atomic uint64_t n_run_submit;   /* commands run by the submitting thread */
  _Atomic uint64_t n_run_waiter;   /* ... by a thread waiting for them */
  _Atomic uint64_t n_run_progress; /* ... by the progress thread */
  _Atomic uint64_t n_failed;       /* commands failed before they ran: a
                                      failed dependency, or no work-group
                                      function could be had */
  _Atomic uint64_t n_ndrange;      /* ND-range commands run */
  _Atomic uint64_t n_groups;       /* work-groups run */
  _Atomic uint64_t n_generic;      /* ND-ranges given the generic work-group
                                      function: their specialised one was
                                      not built yet (resolve.c) */
  _Atomic uint64_t n_jit_swapped;  /* specialised functions built in the
                                      background and swapped in */
  _Atomic uint64_t n_jit_pending;  /* background builds queued or running
                                      now (a gauge) */
  _Atomic uint64_t n_jit_loaded;   /* specialised functions found in the
                                      disk cache at their first launch in
                                      the process, and loaded then */

  /* Sub-devices (subdev.c), set at init: the affinity domains of
   * participants [0, set.participants), dom[k * set.participants + i] for
   * tt__domain k (tt__team_domains), or NULL when they have none (an
   * unpinned team). */
  int *dom;
  int record;                      /* TEAMS_POCL_RECORD_PARTICIPANTS=1 */
} tp_device;

/* counters.c: d's counters as TT_CL_DEVICE_STATS reports them
 * (teams-pocl-info.h). */
struct tt_cl_stats;
void tp_device_stats (const tp_device *d, struct tt_cl_stats *s);

/* The node's flags (TP_NODE_FLAGS: a field of the node that only drivers
 * read, pocl-compat.h), written only with the node's event locked
 * (docs/protocol.md item 31; who sets each: queue.c, "The node's
 * flags"). */
#define TP_SUBMITTED 1 /* submit has run for the node */
#define TP_FAILED 2    /* failed instead of run: a dependency failed, or no
                          work-group function could be had */
#define TP_LISTED 4    /* the node went to a runner (at most once) */
#define TP_JIT 8       /* it holds a reference on PoCL's dlhandle cache
                          entry, released after the run or the failure */
#define TP_PRINTS 16   /* its kernel prints where PoCL's kernel library
                          prints each line itself (resolve.c sets it) */

/* An ND-range command's work-groups. */
static inline size_t
tp_ndrange_groups (const _cl_command_node *cmd)
{
  const struct pocl_context *pc = &cmd->command.run.pc;
  return pc->num_groups[0] * pc->num_groups[1] * pc->num_groups[2];
}

/* ---- subdev.c: sub-devices ------------------------------------------------------ */
/* Participants [*first, *first + *count) of the team that dev (a teams
 * device or sub-device) runs its work-groups on. */
void tp_device_range (cl_device_id dev, size_t *first, size_t *count);
/* At init (and reinit): reads the domains, sets the partition properties
 * and the dispatch table of d->dev.  fini frees what init allocated. */
void tp_subdev_init (tp_device *d);
void tp_subdev_fini (tp_device *d);
/* Participants that ran work-groups, as bits (participant i: word i / 64,
 * bit i % 64; participants from TP_RAN_WORDS * 64 on are not recorded):
 * record adds a launch's, take reads and clears dev's. */
#define TP_RAN_WORDS 4
void tp_record_ran (cl_device_id dev, const uint64_t *ran);
void tp_record_take (cl_device_id dev, uint64_t *ran);

/* ---- submit.c and queue.c: the ops that decide where commands run ------------- */
/* submit.c: ops->submit; and the waits' note to it (join, wait_event, on
 * entry) that the calling thread waits now for what it launched. */
void tp_submit (_cl_command_node *node, cl_command_queue cq);
void tp_submit_waited (void);
/* progress.c: CLOCK_MONOTONIC in ns, the driver's one clock. */
uint64_t tp_now_ns (void);
/* What submit decided for a node (submit.c, Submit). */
typedef enum tp_submit_how {
  TP_HOW_WAIT,  /* not ready, or listed already: nothing to do now */
  TP_HOW_LIST,  /* list it for a waiter or the progress thread (lazy) */
  TP_HOW_DRAIN, /* list it, then run the list in this thread (eager) */
  TP_HOW_NOW    /* run it in this thread if the scheduler is idle, else
                   as TP_HOW_LIST (auto) */
} tp_submit_how;
/* queue.c: carries out submit's decision; entered with the node's event
 * locked (submit's contract), unlocks it. */
void tp_sched_submit (_cl_command_node *node, tp_submit_how how);
/* queue.c: the other ops. */
void tp_notify (cl_device_id device, cl_event event, cl_event finished);
void tp_flush (cl_device_id device, cl_command_queue cq);
void tp_join (cl_device_id device, cl_command_queue cq);
void tp_wait_event (cl_device_id device, cl_event event);
void tp_notify_event_finished (cl_event event);
/* A device's init attaches it to the process's scheduler (the first one
 * sets it up, with its grace period), its uninit detaches it (the last one
 * stops the progress thread); attach returns 0 or -1.  Called under
 * libpocl's device init lock, while no command exists. */
int tp_sched_attach (const tp_device *d);
void tp_sched_detach (void);

/* ---- work-group functions without a stall at first launch (wgfunc.h) ------------ */
/* wgfunc.c: ops->create_kernel and free_kernel. */
int tp_create_kernel (cl_device_id device, cl_program program,
                      cl_kernel kernel, unsigned program_device_i);
int tp_free_kernel (cl_device_id device, cl_program program, cl_kernel kernel,
                    unsigned program_device_i);
/* resolve.c: sets the work-group function of an ND-range node at submit
 * (its event locked), and TP_PRINTS; returns 1 when the node holds a PoCL dlhandle
 * reference (TP_JIT), 0 when it holds none, -1 when no function could be
 * had (the command fails). */
int tp_jit_resolve (tp_device *d, _cl_command_node *node);

/* ---- output.c: a launch's printf output in work-group order ------------------------ */
/* The launch's arena: records of (first group, length, bytes), allocated
 * by the first chunk that prints; cap is the device's printf buffer size. */
struct tp_out {
  _Atomic (char *) text;
  _Atomic size_t used; /* bytes reserved, may run past cap */
  size_t cap;
};
/* A chunk that began at group `group` printed n bytes at buf (any
 * participant, during the region). */
void tp_out_chunk (struct tp_out *o, size_t group, const char *buf, uint32_t n);
/* After the region, by the thread that ran the command: the output in
 * group order, and the arena freed. */
void tp_out_write (struct tp_out *o);

/* ---- run.c: an ND-range command on the team ----------------------------------------- */
/* Runs an ND-range command of device d (queue.c's run_node, between
 * RUNNING and COMPLETE: the only way an ND-range runs); 0, or -1 when
 * the command must fail (run.c, Failures).  Releases the node's dlhandle
 * reference (TP_JIT).  *groups: the work-groups its region ran, which
 * run_node counts (0 when none ran). */
int tp_run_ndrange (tp_device *d, _cl_command_node *cmd, size_t *groups);

#endif
