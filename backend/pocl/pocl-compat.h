/* teams PoCL driver: what differs between the PoCL releases the driver builds
 * against -- 3.1 (Debian 12), 6.0 (Debian 13) and 7.1 (Debian testing) --
 * in one place, so that the rest of the driver reads as one driver.
 *
 * config.h (backend/pocl/config.h.in) names the release the headers come
 * from (TEAMS_POCL_MAJOR, TEAMS_POCL_MINOR; configure refuses any other) and
 * the facts configure read off the installed PoCL.  Each entry below says
 * what the driver needs, and which release changed it; the struct layouts
 * themselves are PoCL's headers', re-checked at run time (abi.c:
 * tp_abi_check_device, tp_abi_check_command).
 *
 *   what                     3.1                6.0                7.1
 *   node state (ours)        node->ready        node->ready        node->state
 *   failing an event         locked             locked             unlocked
 *   dlhandle reference       the node           returned item      returned item
 *   disk cache lookup        returns the path   returns the path   fills a buffer
 *   cache file names         whole              clipped at 59      clipped at 59
 *   raw pointer argument     is_svm             is_raw_ptr         is_raw_ptr
 *   buffer argument offset   al->offset         al->offset         in device_ptrs
 *   device->available        cl_bool            cl_bool *          cl_bool *
 *   reinit                   (j, dev)           (j, dev, params)   (j, dev, params)
 *   program-scope variables  none               gvar init kernel   gvar init kernel
 *   work-group failure       none               none               execution_failed
 *   printf buffer            text               text               binary entries
 *   a command's buffers      event->mem_objs    event->mem_objs    node->migr_infos
 *   defined built-in kernels none               none               pocl_cpu_execute_dbk
 *   ICD dispatch             table              table              table + disp_data
 *   SIGFPE handler covers    every thread       named threads      named threads
 */
#ifndef TEAMS_POCL_COMPAT_H
#define TEAMS_POCL_COMPAT_H

#include "config.h"

#define TP_POCL_AT_LEAST(maj, min)                                            \
  (TEAMS_POCL_MAJOR > (maj)                                                   \
   || (TEAMS_POCL_MAJOR == (maj) && TEAMS_POCL_MINOR >= (min)))

#if !(TEAMS_POCL_MAJOR == 3 && TEAMS_POCL_MINOR == 1)                       \
    && !(TEAMS_POCL_MAJOR == 6 && TEAMS_POCL_MINOR == 0)                    \
    && !(TEAMS_POCL_MAJOR == 7 && TEAMS_POCL_MINOR == 1)
#error "teams: the PoCL driver is written for PoCL 3.1, 6.0 and 7.1"
#endif

/* Only what icd.c needs, which sees PoCL objects without PoCL's headers:
 * from 7.1 every object holds, after its dispatch table pointer, the ICD
 * loader's dispatch data (cl_khr_icd 2.0.0), through which an ICD 2 loader
 * dispatches instead of the table. */
#define TP_POCL_ICD2 TP_POCL_AT_LEAST (7, 1)

#ifndef TEAMS_POCL_COMPAT_ICD_ONLY

#include <stdint.h>
#include <stdlib.h>

#include "pocl_cl.h"
#include "common.h"
#include "devices.h"
#include "pocl_util.h"
#include "pocl_cache.h"
#if TP_POCL_AT_LEAST(6, 0)
#include "common_driver.h"
#endif
#if TP_POCL_AT_LEAST(7, 0)
#include "common_utils.h"
#include "pocl_builtin_kernels.h"
#else
#include "builtin_kernels.hh"
#endif

/* ---- the driver's own bits of a command node (queue.c lists them) -------- */
/* libpocl never reads the field; 7.0 retyped it as an enum that only the
 * drivers read. */
#if TP_POCL_AT_LEAST(7, 0)
#define TP_NODE_FLAGS(node) ((node)->state)
#else
#define TP_NODE_FLAGS(node) ((node)->ready)
#endif

/* ---- events ------------------------------------------------------------------- */
/* Fails ev's command (CL_FAILED) and drops libpocl's reference on ev.
 * Precondition: ev unlocked, and the caller holds a reference of its own
 * across the call (libpocl's may be the last).  7.0 calls it unlocked;
 * before, it was entered and left locked (and unlocked inside). */
static inline void
tp_event_fail (cl_event ev)
{
#if TP_POCL_AT_LEAST(7, 0)
  pocl_update_event_failed (CL_FAILED, __func__, __LINE__, ev, NULL);
#else
  POCL_LOCK_OBJ (ev);
  pocl_update_event_failed (ev);
  POCL_UNLOCK_OBJ (ev);
#endif
}

/* ---- PoCL's own cache of work-group functions ------------------------------- */
/* Looks up (compiling if needed) node's work-group function in PoCL's
 * dlhandle cache, sets node->command.run.wg and holds a reference, which
 * tp_dlhandle_release drops.  Returns 0, or -1 when no function could be
 * had (from 6.0; 3.1 aborts the process instead). */
static inline int
tp_dlhandle_get (_cl_command_node *node)
{
#if TP_POCL_AT_LEAST(6, 0)
  void *item = pocl_check_kernel_dlhandle_cache (node, 1, 1);
  node->command.run.device_data = item;
  return item != NULL ? 0 : -1;
#else
  pocl_check_kernel_dlhandle_cache (node, 1, 1);
  return 0;
#endif
}

static inline void
tp_dlhandle_release (_cl_command_node *node)
{
#if TP_POCL_AT_LEAST(6, 0)
  pocl_release_dlhandle_cache (node->command.run.device_data);
  node->command.run.device_data = NULL;
#else
  pocl_release_dlhandle_cache (node);
#endif
}

/* The path of the shared object in PoCL's disk cache that holds cmd's
 * work-group function (specialised or generic), compiled first when the
 * cache lacks it.  malloc'd; NULL when it cannot be had. */
static inline char *
tp_disk_cache_path (_cl_command_node *cmd, int specialised)
{
#if TP_POCL_AT_LEAST(7, 0)
  char *path = malloc (POCL_MAX_PATHNAME_LENGTH);
  if (path != NULL && pocl_check_kernel_disk_cache (path, cmd, specialised)
                          != 0)
    {
      free (path);
      path = NULL;
    }
  return path;
#else
  return pocl_check_kernel_disk_cache (cmd, specialised);
#endif
}

/* Room for a path in the cache, and the longest kernel name that names
 * its shared object unchanged: from 6.0 a longer one is clipped and
 * suffixed with its hash (by a function PoCL keeps to itself), so its
 * file is found by listing the directory (wgfunc.c). */
#if TP_POCL_AT_LEAST(6, 0)
#define TP_PATH_MAX POCL_MAX_PATHNAME_LENGTH
#define TP_CACHE_NAME_MAX ((size_t)POCL_MAX_FILENAME_LENGTH - 5)
#else
#define TP_PATH_MAX POCL_FILENAME_LENGTH
#define TP_CACHE_NAME_MAX ((size_t)POCL_FILENAME_LENGTH)
#endif

/* ---- kernel arguments ------------------------------------------------------------ */
#if TP_POCL_AT_LEAST(6, 0)
#define TP_ARG_IS_RAW_PTR(al) ((al)->is_raw_ptr)
#else
#define TP_ARG_IS_RAW_PTR(al) ((al)->is_svm)
#endif
/* A buffer argument's offset into its device pointer: from 7.0 a
 * sub-buffer has device pointers of its own, already offset. */
#if TP_POCL_AT_LEAST(7, 0)
#define TP_ARG_OFFSET(al) ((size_t)0)
#else
#define TP_ARG_OFFSET(al) ((al)->offset)
#endif

/* ---- devices --------------------------------------------------------------------- */
/* From 5.0 `available` points at the driver's flag (basic's data). */
#if TP_POCL_AT_LEAST(5, 0)
#define TP_DEVICE_AVAILABLE(dev) ((dev)->available != NULL && *(dev)->available)
#define TP_DEVICE_DISABLE(dev)                                                \
  do                                                                          \
    {                                                                         \
      if ((dev)->available != NULL)                                           \
        *(dev)->available = CL_FALSE;                                         \
    }                                                                         \
  while (0)
#else
#define TP_DEVICE_AVAILABLE(dev) ((dev)->available)
#define TP_DEVICE_DISABLE(dev) ((dev)->available = CL_FALSE)
#endif

/* ops->reinit's parameters (5.0 added the device's parameter string). */
#if TP_POCL_AT_LEAST(5, 0)
#define TP_REINIT_PARAMS unsigned j, cl_device_id device, const char *params
#define TP_REINIT_ARGS j, device, params
#else
#define TP_REINIT_PARAMS unsigned j, cl_device_id device
#define TP_REINIT_ARGS j, device
#define TP_REINIT_NO_PARAMS 1
#endif

/* ---- running a kernel --------------------------------------------------------------- */
/* Before a launch of program's kernel: its program-scope variables are
 * set up (once per program and device, by an init kernel PoCL builds), and
 * pc points at their storage.  Returns 0, or -1 when the init kernel could
 * not be built (the command fails).  Program-scope variables came in 4.0. */
static inline int
tp_program_globals (cl_program program, unsigned dev_i, cl_device_id dev,
                    struct pocl_context *pc)
{
#if TP_POCL_AT_LEAST(7, 0)
  if (pocl_driver_build_gvar_init_kernel (program, dev_i, dev,
                                          pocl_cpu_gvar_init_callback)
      != 0)
    return -1;
  pc->global_var_buffer = program->gvar_storage[dev_i];
#elif TP_POCL_AT_LEAST(4, 0)
  pocl_driver_build_gvar_init_kernel (program, dev_i, dev,
                                      pocl_cpu_gvar_init_callback);
  pc->global_var_buffer = program->gvar_storage[dev_i];
#else
  (void)program, (void)dev_i, (void)dev, (void)pc;
#endif
  return 0;
}

/* A work-group reports failure (from 7.0: the kernel's context flag). */
#if TP_POCL_AT_LEAST(7, 0)
#define TP_WG_FAILED(pc) ((pc)->execution_failed != 0)
#define TP_WG_FAILED_CLEAR(pc) ((pc)->execution_failed = 0)
#else
#define TP_WG_FAILED(pc) 0
#define TP_WG_FAILED_CLEAR(pc) ((void)0)
#endif

/* Defined built-in kernels (7.0) run on the host through PoCL's own CPU
 * implementation, not through a work-group function. */
#if TP_POCL_AT_LEAST(7, 0)
#define TP_IS_DEFINED_BUILTIN(program) ((program)->builtin_kernel_attributes != NULL)
static inline int
tp_run_defined_builtin (_cl_command_node *cmd)
{
  cl_kernel k = cmd->command.run.kernel;
  return pocl_cpu_execute_dbk (k->program, k, k->meta, cmd->program_device_i,
                               cmd->command.run.arguments);
}
#else
#define TP_IS_DEFINED_BUILTIN(program) 0
static inline int
tp_run_defined_builtin (_cl_command_node *cmd)
{
  (void)cmd;
  return -1;
}
#endif

/* Prints what a participant's work-groups wrote to their printf buffer
 * (n bytes at buf).  PoCL's kernel library either prints at each printf
 * itself (built with ENABLE_PRINTF_IMMEDIATE_FLUSH, on by default from 4.0:
 * Debian's 6.0 and 7.1) or leaves formatted text (3.1, 6.0 built without
 * it) or, from 7.0, binary entries that pocl_write_printf_buffer formats.
 * A 7.x library that prints itself calls pocl_flush_printf_buffer and
 * still needs its buffer reset (configure reads that off the library:
 * TEAMS_POCL_PRINTF_IMMEDIATE); a 4.0-6.x one writes each line to stdout
 * with write(2) and leaves the buffer empty.  TP_PRINTF_SELF_CALL names
 * what a kernel that prints by itself calls outside its object (wgfunc.c,
 * object_calls): never "write" otherwise, as OpenCL C cannot call it. */
#if TEAMS_POCL_PRINTF_IMMEDIATE
#define TP_PRINTF_BY_KERNEL 1
#else
#define TP_PRINTF_BY_KERNEL 0
#endif
#if TP_POCL_AT_LEAST(7, 0)
#define TP_PRINTF_SELF_CALL "pocl_flush_printf_buffer"
#elif TP_POCL_AT_LEAST(4, 0)
#define TP_PRINTF_SELF_CALL "write"
#else
#define TP_PRINTF_SELF_CALL NULL /* 3.1 always leaves text */
#endif
void tp_write_text (const char *buf, size_t n);
static inline void
tp_printf_flush (char *buf, uint32_t n)
{
#if TP_PRINTF_BY_KERNEL
  (void)buf, (void)n;
#elif TP_POCL_AT_LEAST(7, 0)
  pocl_write_printf_buffer (buf, n);
#else
  tp_write_text (buf, n);
#endif
}

/* ---- integer division traps --------------------------------------------------------- */
/* x86-64 traps an integer division by zero and INT_MIN / -1, which OpenCL C
 * leaves unspecified; PoCL's SIGFPE handler (lib/CL/devices/signal_handlers.c,
 * installed by libpocl's device init) steps over the trapping instruction.
 * Before 4.0 it does so on every thread of the process.  From 4.0 it does
 * so only on the threads named to pocl_ignore_sigfpe_for_thread (PoCL's
 * pthread driver names its workers) and hands any other thread's trap to
 * the handler it replaced, which ends the process; the names go into a
 * fixed array of 2048 that nothing empties and nothing bounds, so each
 * thread must be named once, and not too many (run.c, Integer division
 * traps). */
#if TP_POCL_AT_LEAST(4, 0) && defined(__x86_64__)
#define TP_SIGFPE_PER_THREAD 1
/* Exported by libpocl (Debian's 6.0 and 7.1 both); from 7.0 pocl_util.h
 * declares it only where ENABLE_SIGFPE_HANDLER is defined, which names
 * libpocl's own build, not ours. */
void pocl_ignore_sigfpe_for_thread (pthread_t thr);
static inline void
tp_sigfpe_name_thread (pthread_t t)
{
  pocl_ignore_sigfpe_for_thread (t);
}
#else
#define TP_SIGFPE_PER_THREAD 0
#endif

/* ---- the buffers a command uses ------------------------------------------------------ */
/* for (tp_bufs it = tp_bufs_of (node); tp_bufs_next (&it, &mem);) ...
 * 7.0 moved the list from the event to the node. */
typedef struct tp_bufs {
#if TP_POCL_AT_LEAST(7, 0)
  pocl_buffer_migration_info *next;
#else
  cl_event ev;
  size_t i;
#endif
} tp_bufs;

static inline tp_bufs
tp_bufs_of (_cl_command_node *node)
{
#if TP_POCL_AT_LEAST(7, 0)
  return (tp_bufs){ .next = node->migr_infos };
#else
  return (tp_bufs){ .ev = node->sync.event.event, .i = 0 };
#endif
}

static inline int
tp_bufs_next (tp_bufs *it, cl_mem *mem)
{
#if TP_POCL_AT_LEAST(7, 0)
  if (it->next == NULL)
    return 0;
  *mem = it->next->buffer;
  it->next = it->next->next;
  return 1;
#else
  if (it->ev == NULL || it->i >= it->ev->num_buffers)
    return 0;
  *mem = it->ev->mem_objs[it->i++];
  return 1;
#endif
}

#endif /* TEAMS_POCL_COMPAT_ICD_ONLY */
#endif
