/* teams PoCL driver: an ND-range command as one team region.
 *
 * Protocol
 * ========
 * The thread that runs the command (queue.c: its submitter, a waiter, or the
 * progress thread) builds one read-only description of the launch on its
 * stack (struct launch) and calls the team with it as participant 0.  The
 * work-groups [0, m) are split into chunks of `grain` consecutive groups;
 * participants take chunks (auto, the default, and steal: tt_foreach_range,
 * the team runtime's range schedules; greedy: one shared counter inside the
 * team; static: chunk c on participant c).
 *
 * Per-participant state lives in the participant thread's own scratch
 * (struct part, thread-local), never in shared memory: the argument array
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
 * region start (release/acquire inside tt_foreach_chunk) and outlives the
 * region (the caller waits for the region to end).
 *
 * Floating-point state: PoCL compiles the flush-to-zero choice into the
 * program (program->flush_denorms) and the kernel may change the rounding
 * mode, so each chunk saves the floating-point controls, sets FTZ as the
 * program asks and round-to-nearest, puts them back before a work-group
 * when the previous one changed them, and restores the saved controls at
 * the end of the chunk: the team's workers also run C-launcher loops.  On
 * x86-64 this is one MXCSR read per work-group and a write only where a
 * control bit differs (fp_* below; PoCL's save/set/restore calls cost
 * five writes per chunk, a visible share of an empty kernel's 0.6 us).
 *
 * printf: each participant's buffer is written to stdout at the end of each
 * of its chunks (when non-empty), by that participant; pthread writes once
 * per thread and command, basic once per command.
 *
 * Rejected: per-launch arrays indexed by participant (a serial region on
 * another host thread also has participant 0); allocating local memory per
 * work-group (pthread allocates once per thread; so do we, per thread). */
#include "teams-pocl.h"

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
struct launch {
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
  size_t ng0, ng1, m, grain;
  unsigned ftz;
  tp_device *d;
};

/* One participant's scratch (thread-local). */
struct part {
  uint64_t launch_id;
  char *mem;
  size_t cap;
  void **args;
  void **args2;
  struct pocl_context *pc;
  char *local;
  uint32_t printf_pos;
};

static __thread struct part tls_part;
static pthread_key_t part_key;
static pthread_once_t part_once = PTHREAD_ONCE_INIT;
/* Launch ids: unique per process.  A thread takes a block of
 * TP_LAUNCH_IDS ids from the shared counter when it has none left and
 * hands them out itself: one read-modify-write per 2^20 launches instead of
 * one per launch (~10 ns, visible on an empty kernel).  Id 0 means none. */
#define TP_LAUNCH_IDS ((uint64_t)1 << 20)
static _Atomic uint64_t launch_blocks;
static __thread uint64_t tls_launch_next, tls_launch_end;

static uint64_t
next_launch_id (void)
{
  if (tls_launch_next == tls_launch_end)
    {
      tls_launch_next
          = tt_atomic_fetch_add_relaxed (&launch_blocks, TP_LAUNCH_IDS) + 1;
      tls_launch_end = tls_launch_next + TP_LAUNCH_IDS;
    }
  return tls_launch_next++;
}

static void
part_free (void *p)
{
  struct part *pt = p;
  free (pt->mem);
  pt->mem = NULL;
  pt->cap = 0;
}

static void
part_key_init (void)
{
  pthread_key_create (&part_key, part_free);
}

/* Precondition: called by the participant itself, on its first chunk of
 * launch L (the scratch is this thread's alone). */
static void
part_setup (struct part *pt, const struct launch *L)
{
  size_t o_pc = 0;
  size_t o_args = o_pc + align_up (sizeof (struct pocl_context));
  size_t o_args2 = o_args + align_up (L->n * sizeof (void *));
  size_t o_local = o_args2 + align_up (L->n * sizeof (void *));
  size_t o_printf = o_local + align_up (L->local_bytes);
  size_t need = o_printf + align_up (L->printf_cap);
  if (pt->cap < need)
    {
      pthread_once (&part_once, part_key_init);
      free (pt->mem);
      pt->mem = aligned_alloc (TP_ALIGN, need);
      pt->cap = pt->mem ? need : 0;
      if (pt->mem == NULL)
        {
          /* No way to fail the command from here (ops->run is void and
           * the event completes after it): stop like PoCL does on OOM. */
          fprintf (stderr,
                   "teams: out of memory for %zu bytes of work-group "
                   "scratch\n",
                   need);
          abort ();
        }
      pthread_setspecific (part_key, pt);
    }
  pt->pc = (struct pocl_context *)(pt->mem + o_pc);
  pt->args = (void **)(pt->mem + o_args);
  pt->args2 = (void **)(pt->mem + o_args2);
  pt->local = pt->mem + o_local;
  memcpy (pt->args, L->args, L->n * sizeof (void *));
  if (L->any_local)
    for (unsigned i = 0; i < L->n; ++i)
      if (L->local_off[i] != SIZE_MAX)
        {
          pt->args2[i] = pt->local + L->local_off[i];
          pt->args[i] = &pt->args2[i];
        }
  *pt->pc = *L->pc;
  pt->pc->printf_buffer = (uchar *)(pt->mem + o_printf);
  pt->pc->printf_buffer_capacity = (uint)L->printf_cap;
  pt->printf_pos = 0;
  pt->pc->printf_buffer_position = &pt->printf_pos;
  pt->launch_id = L->id;
}

/* The floating-point controls a work-group starts with (see the protocol):
 * fp_enter returns the caller's, fp_reset restores the work-group's before
 * each group, fp_leave restores the caller's. */
#if defined(__x86_64__) && defined(__SSE2__)
#include <xmmintrin.h>
/* MXCSR control bits: DAZ (6), exception masks (7-12), rounding (13-14),
 * FTZ (15); bits 0-5 are sticky exception flags, left alone. */
#define TP_MXCSR_CONTROL 0xffc0u
#define TP_MXCSR_FLUSH 0x8040u /* FTZ | DAZ */
#define TP_MXCSR_ROUND 0x6000u

typedef unsigned tp_fp;

static inline tp_fp
fp_target (unsigned ftz, unsigned cur)
{
  unsigned c = cur & TP_MXCSR_CONTROL & ~(TP_MXCSR_FLUSH | TP_MXCSR_ROUND);
  return c | (ftz ? TP_MXCSR_FLUSH : 0); /* round to nearest: 0 */
}

static inline void
fp_reset (tp_fp want)
{
  unsigned cur = _mm_getcsr ();
  if ((cur & TP_MXCSR_CONTROL) != want)
    _mm_setcsr ((cur & ~TP_MXCSR_CONTROL) | want);
}

static inline tp_fp
fp_enter (unsigned ftz, tp_fp *want)
{
  unsigned cur = _mm_getcsr ();
  *want = fp_target (ftz, cur);
  fp_reset (*want);
  return cur & TP_MXCSR_CONTROL;
}

static inline void
fp_leave (tp_fp saved)
{
  fp_reset (saved);
}
#else
typedef struct tp_fp {
  unsigned rm, ftz;
} tp_fp;

static inline void
fp_reset (tp_fp want)
{
  (void)want;
  pocl_set_default_rm ();
}

static inline tp_fp
fp_enter (unsigned ftz, tp_fp *want)
{
  tp_fp saved = { pocl_save_rm (), pocl_save_ftz () };
  pocl_set_ftz (ftz);
  pocl_set_default_rm ();
  *want = saved;
  return saved;
}

static inline void
fp_leave (tp_fp saved)
{
  pocl_restore_ftz (saved.ftz);
  pocl_restore_rm (saved.rm);
}
#endif

static void
run_groups (const struct launch *L, size_t begin, size_t end)
{
  struct part *pt = &tls_part;
  if (pt->launch_id != L->id)
    part_setup (pt, L);

  tp_fp want;
  tp_fp saved = fp_enter (L->ftz, &want);

  size_t slice = L->ng0 * L->ng1;
  size_t gz = begin / slice, r = begin % slice;
  size_t gy = r / L->ng0, gx = r % L->ng0;
  for (size_t g = begin; g < end; ++g)
    {
      fp_reset (want);
      L->wg ((uchar *)pt->args, (uchar *)pt->pc, gx, gy, gz);
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
      size_t n = pt->printf_pos;
      if (n > L->printf_cap)
        n = L->printf_cap;
      const char *b = (const char *)pt->pc->printf_buffer;
      while (n > 0)
        {
          ssize_t w = write (STDOUT_FILENO, b, n);
          if (w <= 0)
            break;
          b += w;
          n -= (size_t)w;
        }
      pt->printf_pos = 0;
    }
}

static void
chunk_fn (void *ctx, size_t c)
{
  const struct launch *L = ctx;
  size_t begin = c * L->grain;
  size_t end = begin + L->grain;
  if (end > L->m)
    end = L->m;
  run_groups (L, begin, end);
}

static void
range_fn (void *ctx, size_t begin, size_t end)
{
  run_groups (ctx, begin, end);
}

/* Chunk size when grain=0: about 64 chunks per participant, so greedy
 * balances uneven groups (the triangular kernel) to within ~1/64 of a
 * participant's share, while a uniform launch of 1e5+ groups pays one
 * counter update per ~1/128 of its work. */
static size_t
auto_grain (size_t m, size_t p)
{
  size_t chunks = p * 64;
  size_t g = (m + chunks - 1) / chunks;
  return g ? g : 1;
}

/* Runs the work-groups of L on the team, on at most p participants (the
 * device's compute units: fewer on a sub-device). */
static void
run_on_team (struct launch *L, const tp_settings *set, size_t p)
{
  if (set->schedule == TT_SCHED_STATIC)
    {
      /* m == p: chunk c on participant c. */
      if (p > L->m)
        p = L->m;
      L->grain = (L->m + p - 1) / p;
      tt_foreach_chunk (chunk_fn, L, (L->m + L->grain - 1) / L->grain, p);
      return;
    }
  if (set->schedule == TT_SCHED_STEAL || set->schedule == TT_SCHED_AUTO)
    {
      /* The steal/auto plug: the team runtime's range schedules split the
       * groups into blocks per participant and let thieves rebalance uneven
       * groups (auto: steal for a length it has not seen and for long
       * launches, static for short ones, learned per length; it coarsens
       * single-group grains itself, so it gets grain 1; steal gets ~64
       * units per participant, like greedy).
       * They reject bad arguments before running anything, so an error
       * leaves nothing half done and the greedy path below runs it. */
      L->grain = set->grain                         ? set->grain
                 : set->schedule == TT_SCHED_AUTO ? 1
                                                  : auto_grain (L->m, p);
      if (tt_foreach_range (range_fn, L, L->m, L->grain, p, set->schedule)
          == 0)
        return;
    }
  L->grain = set->grain ? set->grain : auto_grain (L->m, p);
  tt_foreach_chunk (chunk_fn, L, (L->m + L->grain - 1) / L->grain, p);
}

/* ops->run, called by pocl_exec_command between RUNNING and COMPLETE, on the
 * thread queue.c chose; no lock held. */
void
tp_run (void *data, _cl_command_node *cmd)
{
  tp_device *d = data;
  cl_kernel kernel = cmd->command.run.kernel;
  pocl_kernel_metadata_t *meta = kernel->meta;
  struct pocl_context *pc = &cmd->command.run.pc;
  size_t m = pc->num_groups[0] * pc->num_groups[1] * pc->num_groups[2];
  if (m == 0)
    {
      pocl_release_dlhandle_cache (cmd);
      return;
    }

  unsigned n = meta->num_args + meta->num_locals;
  void *args_inline[TP_MAX_INLINE_ARGS], *args2_inline[TP_MAX_INLINE_ARGS];
  size_t off_inline[TP_MAX_INLINE_ARGS];
  void **args = args_inline, **args2 = args2_inline;
  size_t *off = off_inline;
  if (n > TP_MAX_INLINE_ARGS)
    {
      args = malloc (n * sizeof (void *));
      args2 = malloc (n * sizeof (void *));
      off = malloc (n * sizeof (size_t));
      if (args == NULL || args2 == NULL || off == NULL)
        {
          fprintf (stderr, "teams: out of memory for %u kernel arguments\n",
                   n);
          abort ();
        }
    }

  /* The argument template (what pthread_utils.c's setup_kernel_arg_array
   * builds; written anew here).  Buffers: device pointer + offset;
   * by-value: the value in place; images and samplers: converted. */
  assert (!cmd->device->device_alloca_locals);
  size_t local_bytes = 0;
  int any_local = 0;
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
              if (al->is_svm)
                ptr = *(void **)al->value;
              else
                {
                  cl_mem mem = *(cl_mem *)al->value;
                  ptr = (char *)mem->device_ptrs[cmd->device->global_mem_id]
                            .mem_ptr
                        + al->offset;
                }
            }
          args2[i] = ptr;
          args[i] = &args2[i];
        }
      else if (meta->arg_info[i].type == POCL_ARG_TYPE_IMAGE)
        {
          dev_image_t *di = aligned_alloc (TP_ALIGN, align_up (sizeof *di));
          if (di == NULL)
            {
              fprintf (stderr, "teams: out of memory for an image argument\n");
              abort ();
            }
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

  struct launch L = {
    .wg = (pocl_workgroup_func)cmd->command.run.wg,
    .pc = pc,
    .args = args,
    .local_off = off,
    .n = n,
    .any_local = any_local,
    .local_bytes = local_bytes,
    .printf_cap = cmd->device->printf_buffer_size,
    .id = next_launch_id (),
    .ng0 = pc->num_groups[0],
    .ng1 = pc->num_groups[1],
    .m = m,
    .grain = 1,
    .ftz = kernel->program->flush_denorms,
    .d = d,
  };
  size_t p = d->set.participants;
  if (cmd->device->max_compute_units < p)
    p = cmd->device->max_compute_units; /* a sub-device */
  if (p == 0)
    p = 1;
  run_on_team (&L, &d->set, p);

  tp_count_ndrange (d, m);

  for (unsigned i = 0; i < meta->num_args; ++i)
    if (meta->arg_info[i].type == POCL_ARG_TYPE_IMAGE)
      free (args2[i]);
  if (args != args_inline)
    {
      free (args);
      free (args2);
      free (off);
    }
  pocl_release_dlhandle_cache (cmd);
}
