/* teams PoCL driver: an ND-range command as one team region.
 *
 * Protocol
 * ========
 * The thread that runs the command (queue.c: its submitter, a waiter, or the
 * progress thread) builds one read-only description of the launch on its
 * stack (struct tp_launch) and runs the work-groups [0, m) through
 * tt_foreach_range, as participant 0, with the device's schedule and grain
 * (schedule=, grain=; grain 0 takes the runtime's default): the same
 * schedules and defaults as the C launcher, owned by launcher/range.c.
 * A sub-device's command runs on its span of participants only
 * (tt__foreach_range_on; subdev.c and run_on_subteam below), and waits for
 * the team rather than run serially on a thread outside that span.
 *
 * Per-participant state lives in the participant thread's own scratch
 * (struct part, thread-local; its memory the runtime's TT__SCRATCH_DRIVER
 * buffer), never in shared memory: the argument array
 * (local arguments and automatic locals point into this participant's local
 * memory, 128-aligned), a copy of the command's pocl_context whose printf
 * buffer and position are this participant's, and the local memory itself.
 * A participant sets its scratch up on its first chunk of a launch, detected
 * by the launch's id (unique per process, next_launch_id): no
 * allocation per launch once warm, nothing indexed by participant number, so
 * a serial run on another thread beside a team region (the busy rule) cannot
 * collide with it.
 *
 * What is shared is read-only during the region: the launch description,
 * the command's argument values and pocl_context, the buffers' device
 * pointers.  The description is published to the participants by the team's
 * region start (a release store by the caller and the workers' acquire,
 * in the team's region under tt_foreach_range and tt__foreach_range_on)
 * and outlives the region (the caller waits for the region to end).
 *
 * Floating-point state: PoCL compiles the flush-to-zero choice into the
 * program (program->flush_denorms) and the kernel may change the rounding
 * mode, so each chunk saves the floating-point controls, sets FTZ as the
 * program asks and round-to-nearest, puts them back before a work-group
 * when the previous one changed them, and restores the saved controls at
 * the end of the chunk: the team's workers also run C-launcher loops.  On
 * x86-64 this is one MXCSR read per work-group and a write only where a
 * control bit differs (fp_* below; PoCL's save/set/restore calls cost five
 * writes per chunk: docs/measurements.md, "The PoCL driver's launches").
 *
 * Integer division traps: a kernel's x / 0 or INT_MIN / -1 must not end
 * the process (OpenCL C leaves the value unspecified; PoCL's SIGFPE handler
 * steps over the trapping instruction).  From PoCL 4.0 the handler covers
 * only the threads named to it (pocl-compat.h, TP_SIGFPE_PER_THREAD), and
 * a work-group runs on whichever thread the team hands its chunk: a
 * worker, an OpenMP runtime's thread, or the thread that runs the command
 * (the enqueuing thread under submit=auto or eager, a waiter, the progress
 * thread).  So a participant names its thread at its first chunk of a
 * launch, before the first work-group it runs (cover_thread): one
 * thread-local read per chunk of a new launch once named; no hook in the
 * team, which owns no PoCL state.  A named thread stays named for its
 * life, as PoCL's own workers are, and as every thread is on PoCL 3.1:
 * PoCL has no call to take a name back.  Each thread is named once
 * (PoCL's array is unbounded and never emptied), and a thread whose id a
 * named thread that ended had is not named again (glibc hands a new thread
 * the id of an ended one); past TP_SIGFPE_THREADS distinct ids no thread
 * is named, and a trap on one ends the process as before.  Rejected:
 * naming around each chunk and taking the name back after it (PoCL keeps
 * no way to remove one); PoCL 7's LLVM pass that guards every division
 * (run_sanitize_divrem_pass, which Debian's 7.1 leaves off where the
 * handler is on) would cover no 4.0-6.x release.
 *
 * printf: a launch's output comes out in work-group order (output.c): a
 * chunk that printed hands its bytes to the launch's output, which the
 * thread that runs the command writes after the region; a kernel whose
 * kernel library prints each line itself runs its groups in order on one
 * participant.
 *
 * Failures: a kernel that flags its work-group failed (PoCL 7's
 * execution_failed), a program whose program-scope variables could not be
 * set up, or a launch short of memory (below) makes tp_run_ndrange return
 * -1, and queue.c fails the event (CL_FAILED) instead of completing it.
 *
 * Out of memory: nothing on this path may stop the process.  The argument
 * arrays of a kernel with more than TP_MAX_INLINE_ARGS arguments and the
 * images' descriptions are allocated before the region; a participant's
 * scratch grows on its first chunk of a launch that needs more than it
 * has.  Either failing makes tp_run_ndrange return -1 (a participant that
 * got no scratch sets L->failed and drops its chunk's groups), and queue.c
 * fails the event (CL_FAILED) instead of completing it.  The failure is
 * the command's alone: the region ends as usual, the team is free, the
 * participant's scratch stays as it was, and the next launch tries again.
 * Swept by tests/test-pocl-alloc.c.
 *
 * Rejected: per-launch arrays indexed by participant (a serial region on
 * another host thread also has participant 0); allocating local memory per
 * work-group (pthread allocates once per thread; so do we, per thread). */
#include "teams-pocl.h"
#include "fpstate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TP_ALIGN MAX_EXTENDED_ALIGNMENT
#define TP_MAX_INLINE_ARGS 64

_Static_assert ((TP_ALIGN & (TP_ALIGN - 1)) == 0, "alignment: power of two");

static size_t
align_up (size_t x)
{
  return (x + TP_ALIGN - 1) & ~(size_t)(TP_ALIGN - 1);
}

/* The launch, as the participants see it (read-only during the region). */
struct tp_launch {
  pocl_workgroup_func wg;
  const struct pocl_context *pc; /* the command's */
  void *const *args;             /* template; local entries filled per part */
  const size_t *local_off;       /* offset of entry i in local memory, or
                                    SIZE_MAX for non-local entries */
  unsigned n;                    /* num_args + num_locals */
  int any_local;
  size_t local_bytes;
  size_t printf_cap;
  uint64_t id;
  size_t ng0, ng1, m;
  unsigned ftz;
  tp_device *d;
  /* TEAMS_POCL_RECORD_PARTICIPANTS=1 only (else NULL): the participants
   * that ran work-groups, TP_RAN_WORDS words of bits (subdev.c). */
  _Atomic uint64_t *ran;
  /* Set by a participant that got no scratch: its work-groups did not run,
   * and the command fails (see Out of memory). */
  _Atomic int *failed;
  struct tp_out *out; /* the launch's printf output (see printf) */
};

/* One participant's view of its scratch (thread-local; the memory is the
 * thread's TT__SCRATCH_DRIVER buffer, freed by the runtime at thread exit). */
struct part {
  uint64_t launch_id;
  void **args;
  void **args2;
  struct pocl_context *pc;
  char *local;
  uint32_t printf_pos;
};

/* This thread's part of the launches, in one thread-local struct: in a
 * dlopen'ed library each function that names a thread-local variable pays
 * a __tls_get_addr call per name, so a function takes the struct once
 * (me()).
 *   part                 its view of its scratch (above);
 *   launch_next, _end    its block of launch ids (next_launch_id);
 *   named                named to PoCL's SIGFPE handler (cover_thread). */
struct run_thread {
  struct part part;
  uint64_t launch_next, launch_end;
  int named;
};

static __thread struct run_thread tls;

/* The empty asm keeps GCC from computing &tls again at each use. */
static inline struct run_thread *
me (void)
{
  struct run_thread *t = &tls;
  __asm__ ("" : "+r"(t));
  return t;
}

/* Launch ids: unique per process.  A thread takes a block of
 * TP_LAUNCH_IDS ids from the shared counter when it has none left and
 * hands them out itself: one read-modify-write per 2^20 launches instead of
 * one per launch (docs/measurements.md, "The PoCL driver's launches").  Id 0
 * means none. */
#define TP_LAUNCH_IDS ((uint64_t)1 << 20)
static _Atomic uint64_t launch_blocks;

static uint64_t
next_launch_id (struct run_thread *t)
{
  if (t->launch_next == t->launch_end)
    {
      t->launch_next
          = tt_atomic_fetch_add_relaxed (&launch_blocks, TP_LAUNCH_IDS) + 1;
      t->launch_end = t->launch_next + TP_LAUNCH_IDS;
    }
  return t->launch_next++;
}

/* Integer division traps (see the protocol): the thread ids named to
 * PoCL's SIGFPE handler; at most half of PoCL's 2048 slots, so that its
 * array is never overrun whatever else in the process names threads. */
#if TP_SIGFPE_PER_THREAD
#define TP_SIGFPE_THREADS 1024
static struct {
  pthread_mutex_t lock;
  unsigned n;
  pthread_t id[TP_SIGFPE_THREADS];
} named = { .lock = PTHREAD_MUTEX_INITIALIZER };
/* Names the calling thread to PoCL's SIGFPE handler, once per thread and
 * once per id. */
static void
cover_thread (struct run_thread *t)
{
  if (t->named)
    return;
  pthread_t self = pthread_self ();
  pthread_mutex_lock (&named.lock);
  unsigned i = 0;
  while (i < named.n && !pthread_equal (named.id[i], self))
    ++i;
  if (i == named.n && named.n < TP_SIGFPE_THREADS)
    {
      named.id[named.n++] = self;
      tp_sigfpe_name_thread (self);
    }
  pthread_mutex_unlock (&named.lock);
  t->named = 1; /* named, or never will be (the ids are spent) */
}
#else
static inline void
cover_thread (struct run_thread *t)
{
  (void)t;
}
#endif

/* Precondition: called by the participant itself, on its first chunk of
 * launch L (the scratch is this thread's alone).  Returns 0, or -1 when the
 * scratch could not grow to what L needs (pt is then left as it was, not
 * set up for L). */
static int
part_setup (struct part *pt, const struct tp_launch *L)
{
  size_t o_pc = 0;
  size_t o_args = o_pc + align_up (sizeof (struct pocl_context));
  size_t o_args2 = o_args + align_up (L->n * sizeof (void *));
  size_t o_local = o_args2 + align_up (L->n * sizeof (void *));
  size_t o_printf = o_local + align_up (L->local_bytes);
  size_t need = o_printf + align_up (L->printf_cap);
  /* One user per thread: a work-group never launches another command. */
  char *mem = tt__scratch (TT__SCRATCH_DRIVER, need);
  if (mem == NULL)
    return -1;
  pt->pc = (struct pocl_context *)(mem + o_pc);
  pt->args = (void **)(mem + o_args);
  pt->args2 = (void **)(mem + o_args2);
  pt->local = mem + o_local;
  memcpy (pt->args, L->args, L->n * sizeof (void *));
  if (L->any_local)
    for (unsigned i = 0; i < L->n; ++i)
      if (L->local_off[i] != SIZE_MAX)
        {
          pt->args2[i] = pt->local + L->local_off[i];
          pt->args[i] = &pt->args2[i];
        }
  *pt->pc = *L->pc;
  pt->pc->printf_buffer = (uchar *)(mem + o_printf);
  pt->pc->printf_buffer_capacity = (uint)L->printf_cap;
  pt->printf_pos = 0;
  pt->pc->printf_buffer_position = &pt->printf_pos;
  pt->launch_id = L->id;
  return 0;
}

/* Marks the calling participant in L->ran, once per launch (its first
 * chunk).  Work-groups run outside any region (run_on_team's and
 * run_on_subteam's last resorts) run on the caller: participant 0. */
static void
note_ran (const struct tp_launch *L)
{
  int q = tt_participant ();
  if (q < 0)
    q = 0;
  /* acq_rel only because the runtime names no relaxed OR: the region's end
   * publishes the bits to the caller. */
  if ((size_t)q < TP_RAN_WORDS * 64)
    tt_atomic_fetch_or_acq_rel (&L->ran[q / 64], (uint64_t)1 << (q % 64));
}

static void
run_groups (const struct tp_launch *L, size_t begin, size_t end)
{
  struct run_thread *t = me ();
  struct part *pt = &t->part;
  if (pt->launch_id != L->id)
    {
      cover_thread (t);
      if (L->ran != NULL)
        note_ran (L);
      if (part_setup (pt, L) != 0)
        {
          /* Its groups are dropped; a later chunk of L on this thread
           * tries again (greedy and steal hand out several). */
          tt_atomic_store_relaxed (L->failed, 1);
          return;
        }
    }

  tp_fp want;
  tp_fp saved = fp_enter (L->ftz, &want);

  size_t slice = L->ng0 * L->ng1;
  size_t gz = begin / slice, r = begin % slice;
  size_t gy = r / L->ng0, gx = r % L->ng0;
  for (size_t g = begin; g < end; ++g)
    {
      fp_reset (want);
      L->wg ((uchar *)pt->args, (uchar *)pt->pc, gx, gy, gz);
      if (TP_WG_FAILED (pt->pc))
        {
          /* The kernel reported a failure (PoCL 7): the command fails,
           * its other groups still run, as on PoCL's own drivers. */
          TP_WG_FAILED_CLEAR (pt->pc);
          tt_atomic_store_relaxed (L->failed, 1);
        }
      if (++gx == L->ng0)
        {
          gx = 0;
          if (++gy == L->ng1)
            {
              gy = 0;
              ++gz;
            }
        }
    }

  fp_leave (saved);

  if (pt->printf_pos > 0)
    {
      uint32_t n = pt->printf_pos;
      if (n > L->printf_cap)
        n = (uint32_t)L->printf_cap;
      if (!TP_PRINTF_BY_KERNEL)
        tp_out_chunk (L->out, begin, (const char *)pt->pc->printf_buffer, n);
      pt->printf_pos = 0;
    }
}

static void
range_fn (void *ctx, size_t begin, size_t end)
{
  run_groups (ctx, begin, end);
}

/* Runs the work-groups of L on the team, on at most p participants (the
 * device's compute units: fewer on a sub-device).  The range fails
 * only on arguments the settings parser already refused (a grain so large
 * that m + grain overflows); should it fail anyway, the groups run here,
 * serially, so that the command still completes whole. */
static void
run_on_team (struct tp_launch *L, const tp_settings *set, size_t p)
{
  /* The kernel names the loop (its work-group function): range_fn runs
   * every kernel, and each has costs of its own (launcher/way.c). */
  if (tt__foreach_range_site ((const void *)L->wg, range_fn, L, L->m,
                              set->grain, p, set->schedule)
      != 0)
    run_groups (L, 0, L->m);
}

/* Runs the work-groups of L on participants [first, first + count) of the
 * team only: a sub-device's (subdev.c).  When another thread holds the team
 * the region cannot run there (it would run serially on this thread, which
 * is none of the participants), so the command waits for the team
 * (tt__foreach_range_on with wait).  The other holder is a command of
 * another device or a C loop, which ends.  Only where this thread can never
 * hold the team (an OpenMP parallel region around the OpenCL call that runs
 * the command: TT_ENOSYS) do the work-groups run here, serially, so that
 * the command still completes. */
static void
run_on_subteam (struct tp_launch *L, const tp_settings *set, size_t first,
                size_t count)
{
  if (tt__foreach_range_on (range_fn, L, L->m, set->grain, first, count,
                            set->schedule, 1)
      != 0)
    run_groups (L, 0, L->m);
}

/* An ND-range command, run between RUNNING and COMPLETE by queue.c's
 * run_node (in place of pocl_exec_command, so that it can fail the event;
 * ops->run is NULL), on the thread queue.c chose; no lock held.  Returns
 * 0, or -1 when the command must fail (Failures, at the top); *groups:
 * the work-groups its region ran (0 when none ran: it failed before, or
 * it was PoCL's host code), for run_node's counters.  Releases the node's
 * dlhandle reference (TP_JIT) either way. */
int
tp_run_ndrange (tp_device *d, _cl_command_node *cmd, size_t *groups)
{
  cl_kernel kernel = cmd->command.run.kernel;
  pocl_kernel_metadata_t *meta = kernel->meta;
  struct pocl_context *pc = &cmd->command.run.pc;
  size_t m = tp_ndrange_groups (cmd);
  int rc = 0;
  *groups = 0;
  if (m == 0)
    goto out;
  /* A defined built-in kernel (PoCL 7) is PoCL's own host code, not
   * work-groups: it runs here, whole. */
  if (TP_IS_DEFINED_BUILTIN (kernel->program))
    {
      rc = tp_run_defined_builtin (cmd) == CL_SUCCESS ? 0 : -1;
      goto out;
    }
  if (tp_program_globals (kernel->program, cmd->program_device_i, cmd->device,
                          pc)
      != 0)
    {
      rc = -1;
      goto out;
    }

  /* The argument arrays, the three end to end (a kernel of two arguments
   * touches one cache line of them, not three: a launch after the host's
   * own work finds its stack cold): on the stack up to TP_MAX_INLINE_ARGS,
   * else in one allocation; the images' descriptions in one more. */
  unsigned n = meta->num_args + meta->num_locals;
  union arg_slot
  {
    void *p;
    size_t off;
  } inline_arrays[3 * TP_MAX_INLINE_ARGS];
  _Static_assert (sizeof (union arg_slot) == sizeof (void *)
                      && sizeof (size_t) == sizeof (void *),
                  "the three arrays share one array of slots");
  void **args = &inline_arrays[0].p;
  void *heap = NULL;
  char *images = NULL;
  if (n > TP_MAX_INLINE_ARGS)
    {
      heap = malloc (n * (2 * sizeof (void *) + sizeof (size_t)));
      if (heap == NULL)
        {
          rc = -1;
          goto out;
        }
      args = heap;
    }
  void **args2 = args + n;
  size_t *off = (size_t *)(args2 + n);
  size_t n_images = 0;
  for (unsigned i = 0; i < meta->num_args; ++i)
    if (meta->arg_info[i].type == POCL_ARG_TYPE_IMAGE)
      n_images++;
  if (n_images > 0)
    {
      images = aligned_alloc (TP_ALIGN,
                              n_images * align_up (sizeof (dev_image_t)));
      if (images == NULL)
        {
          rc = -1;
          goto out_free;
        }
    }

  /* The argument template (what pthread_utils.c's setup_kernel_arg_array
   * builds; written anew here).  Buffers: device pointer + offset;
   * by-value: the value in place; images and samplers: converted. */
  assert (!cmd->device->device_alloca_locals);
  size_t local_bytes = 0;
  int any_local = 0;
  char *next_image = images;
  for (unsigned i = 0; i < meta->num_args; ++i)
    {
      struct pocl_argument *al = &cmd->command.run.arguments[i];
      off[i] = SIZE_MAX;
      args2[i] = NULL;
      if (ARG_IS_LOCAL (meta->arg_info[i]))
        {
          off[i] = local_bytes;
          local_bytes += align_up (al->size);
          any_local = 1;
          args[i] = NULL;
        }
      else if (meta->arg_info[i].type == POCL_ARG_TYPE_POINTER)
        {
          void *ptr = NULL;
          if (al->value != NULL)
            {
              if (TP_ARG_IS_RAW_PTR (al))
                ptr = *(void **)al->value;
              else
                {
                  cl_mem mem = *(cl_mem *)al->value;
                  ptr = (char *)mem->device_ptrs[cmd->device->global_mem_id]
                            .mem_ptr
                        + TP_ARG_OFFSET (al);
                }
            }
          args2[i] = ptr;
          args[i] = &args2[i];
        }
      else if (meta->arg_info[i].type == POCL_ARG_TYPE_IMAGE)
        {
          dev_image_t *di = (dev_image_t *)next_image;
          next_image += align_up (sizeof (dev_image_t));
          pocl_fill_dev_image_t (di, al, cmd->device);
          args2[i] = di;
          args[i] = &args2[i];
        }
      else if (meta->arg_info[i].type == POCL_ARG_TYPE_SAMPLER)
        {
          dev_sampler_t ds;
          pocl_fill_dev_sampler_t (&ds, al);
          args2[i] = (void *)ds;
          args[i] = &args2[i];
        }
      else
        args[i] = al->value;
    }
  for (unsigned i = 0; i < meta->num_locals; ++i)
    {
      unsigned j = meta->num_args + i;
      off[j] = local_bytes;
      local_bytes += align_up (meta->local_sizes[i]);
      any_local = 1;
      args[j] = NULL;
      args2[j] = NULL;
    }

  _Atomic int failed = 0;
  struct tp_out out = { .cap = cmd->device->printf_buffer_size };
  tt_atomic_init (&out.text, NULL);
  tt_atomic_init (&out.used, 0);
  struct tp_launch L = {
    .wg = (pocl_workgroup_func)cmd->command.run.wg,
    .pc = pc,
    .args = args,
    .local_off = off,
    .n = n,
    .any_local = any_local,
    .local_bytes = local_bytes,
    .printf_cap = cmd->device->printf_buffer_size,
    .id = next_launch_id (me ()),
    .ng0 = pc->num_groups[0],
    .ng1 = pc->num_groups[1],
    .m = m,
    .ftz = kernel->program->flush_denorms,
    .d = d,
    .failed = &failed,
    .out = &out,
  };
  /* Profiling: START is PoCL's RUNNING stamp (queue.c's run_node, before
   * this), END is taken when the event completes, after the region: the
   * region and every work-group fall between them, as on PoCL's own
   * drivers. */
  _Atomic uint64_t ran[TP_RAN_WORDS];
  if (d->record)
    {
      for (unsigned w = 0; w < TP_RAN_WORDS; ++w)
        tt_atomic_init (&ran[w], 0);
      L.ran = ran;
    }
  /* Where PoCL's kernel library prints each line itself, a kernel that
   * prints runs its groups in order on one participant, so that its output
   * comes in group order (see printf). */
  int in_order = (TP_NODE_FLAGS (cmd) & TP_PRINTS) != 0;
  if (cmd->device->parent_device != NULL)
    {
      size_t first, count;
      tp_device_range (cmd->device, &first, &count);
      run_on_subteam (&L, &d->set, first, in_order ? 1 : count);
    }
  else
    run_on_team (&L, &d->set,
                 in_order || !d->set.participants ? 1 : d->set.participants);
  if (L.ran != NULL)
    {
      uint64_t r[TP_RAN_WORDS];
      for (unsigned w = 0; w < TP_RAN_WORDS; ++w)
        r[w] = tt_atomic_load_relaxed (&ran[w]);
      tp_record_ran (cmd->device, r);
    }
  /* The region has ended: every participant's output is in `out`. */
  tp_out_write (&out);
  if (tt_atomic_load_relaxed (&failed))
    rc = -1;
  *groups = m;

out_free:
  free (images);
  free (heap);
out:
  if (TP_NODE_FLAGS (cmd) & TP_JIT)
    tp_dlhandle_release (cmd);
  return rc;
}
