/* teams PoCL driver: where buffers live ("placement=" in
 * POCL_TEAMS<n>_PARAMETERS).
 *
 * PoCL's basic driver, whose memory ops we keep, allocates a buffer's host
 * memory (mem_host_ptr) with posix_memalign in alloc_mem_obj the first time
 * the buffer is used on the device, and the first thread to write it (the
 * one running clEnqueueWriteBuffer or a fill) places every page on its own
 * node.  On a machine with several nodes a kernel over the buffer then reads
 * most of it from far away (pocl#330, pocl#716).  We wrap alloc_mem_obj:
 *
 *   firsttouch  (default) the pages are first touched on the team, each by
 *               the participant whose block of the 1D static partition of
 *               the buffer's bytes over the device's compute units holds it,
 *               blocks dealt over the team's nodes and LLCs (tt_mem_touch;
 *               include/teams/memory.h has the rule): where a kernel whose
 *               work-items walk the buffer in order runs them.
 *               The touch waits for the first command that uses the buffer
 *               (tp_place_command, just before it runs): libpocl allocates
 *               on the root device even for a sub-device's command, and
 *               only the command tells which (sub-)device, and so which
 *               participants, the buffer is for.  A sub-device's buffer is
 *               touched by its own participants (tt__mem_touch_on, block k
 *               by its k-th), so a sub-device of one NUMA node gets its
 *               buffers on that node.
 *   interleave  the pages are interleaved over the team's nodes (mbind
 *               MPOL_INTERLEAVE, tt_mem_interleave): for unknown access
 *               patterns, every node's bandwidth at an even share.
 *   host        PoCL's behaviour: whoever writes first.
 *
 * Only buffers whose memory basic allocates in that call are placed: those
 * with mem_host_ptr still NULL on entry.  A buffer made with
 * CL_MEM_USE_HOST_PTR is the user's memory, and CL_MEM_COPY_HOST_PTR and
 * CL_MEM_ALLOC_HOST_PTR buffers were allocated (and copied into) by
 * clCreateBuffer before any driver saw them: they stay as the host left them.
 *
 * The memory comes from malloc (PoCL frees it with free()), so its pages
 * may have been touched by earlier buffers.  Its contents are undefined
 * until written, so the whole pages inside the buffer are discarded
 * (madvise MADV_DONTNEED: an anonymous private page is then zero-filled at
 * its next fault, wherever that happens) before they are touched or given a
 * policy.  Partial pages at the ends are shared with other allocations and
 * left alone.  An interleave policy stays on the heap range after free(), so
 * free resets it to the default first: later allocations there are placed
 * as usual. */
#include "teams-pocl.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "teams/memory.h"

/* Whole pages inside [p, p + size): [*b, *e), possibly empty. */
static int
inner_pages (void *p, size_t size, uintptr_t *b, uintptr_t *e)
{
  uintptr_t page = (uintptr_t)sysconf (_SC_PAGESIZE);
  uintptr_t s = (uintptr_t)p;
  *b = (s + page - 1) & ~(page - 1);
  *e = (s + size) & ~(page - 1);
  return *b < *e;
}

int
tp_placement_parse (const char *v, tp_placement *out)
{
  if (strcmp (v, "firsttouch") == 0)
    *out = TP_PLACE_FIRSTTOUCH;
  else if (strcmp (v, "interleave") == 0)
    *out = TP_PLACE_INTERLEAVE;
  else if (strcmp (v, "host") == 0)
    *out = TP_PLACE_HOST;
  else
    return -1;
  return 0;
}

const char *
tp_placement_name (tp_placement p)
{
  return p == TP_PLACE_FIRSTTOUCH   ? "firsttouch"
         : p == TP_PLACE_INTERLEAVE ? "interleave"
                                    : "host";
}

static void
place (const tp_device *d, void *ptr, size_t size)
{
  uintptr_t b, e;
  if (!inner_pages (ptr, size, &b, &e))
    return;
  if (madvise ((void *)b, e - b, MADV_DONTNEED) != 0)
    return; /* could not discard: the pages keep their node */
  if (d->set.placement == TP_PLACE_INTERLEAVE)
    {
      (void)tt_mem_interleave ((void *)b, e - b);
      return;
    }
  /* firsttouch: left untouched until the first command that uses the
   * buffer runs (tp_place_command) */
}

cl_int
tp_alloc_mem_obj (cl_device_id device, cl_mem mem, void *host_ptr,
                  cl_int (*basic_alloc) (cl_device_id, cl_mem, void *))
{
  const tp_device *d = device->data;
  int fresh = mem->mem_host_ptr == NULL;
  cl_int rc = basic_alloc (device, mem, host_ptr);
  if (rc == CL_SUCCESS && fresh && mem->mem_host_ptr != NULL && d != NULL
      && d->set.placement != TP_PLACE_HOST)
    {
      place (d, mem->mem_host_ptr, mem->size);
      if (d->set.placement == TP_PLACE_FIRSTTOUCH)
        tt_atomic_plain_store_relaxed (
            &mem->device_ptrs[device->global_mem_id].extra, TP_MEM_UNPLACED);
    }
  return rc;
}

/* Precondition: the command is about to run (queue.c), on the thread that
 * runs it; its buffers are allocated (libpocl allocates them when the
 * command is enqueued). */
void
tp_place_command (_cl_command_node *node)
{
  cl_device_id dev = node->device;
  const tp_device *d = dev->data;
  if (d == NULL || d->set.placement != TP_PLACE_FIRSTTOUCH)
    return;
  cl_device_id root = dev; /* libpocl allocates on the root device */
  while (root->parent_device != NULL)
    root = root->parent_device;
  unsigned gid = root->global_mem_id;
  /* the buffers the command uses (pocl-compat.h: the event's list before
   * PoCL 7, the node's from 7; node->memobj_list before 7 is kept for
   * recorded commands only); a sub-buffer's pages are its parent's */
  tp_bufs it = tp_bufs_of (node);
  cl_mem mem;
  while (tp_bufs_next (&it, &mem))
    {
      if (mem->parent != NULL)
        mem = mem->parent;
      pocl_mem_identifier *id = &mem->device_ptrs[gid];
      uint64_t want = TP_MEM_UNPLACED;
      /* one command places a buffer: commands of two devices may use it at
       * once */
      if (tt_atomic_plain_load_relaxed (&id->extra) != TP_MEM_UNPLACED
          || !tt_atomic_plain_cas_relaxed (&id->extra, &want, 0))
        continue;
      if (id->mem_ptr == NULL)
        continue;
      /* The buffer's bytes in the static partition over the device's
       * participants: elements are bytes, and [ptr, ptr + size) is cut
       * into count blocks, dealt over the team's nodes and LLCs as a
       * kernel's work-groups are (root device), or block k touched by
       * participant first + k (a sub-device, whose runs keep that order).  The
       * partial pages at the ends were not discarded and keep their node.
       * A sub-device's buffer waits for a held team, as its kernels do
       * (run.c); the root device's is touched as a kernel of its runs,
       * serially on this thread when the team is held. */
      size_t first, count;
      tp_device_range (dev, &first, &count);
      if (dev->parent_device == NULL)
        {
          (void)tt_mem_touch (id->mem_ptr, mem->size, 1, 0, count,
                              TT_SCHED_STATIC);
          continue;
        }
      /* on failure the pages go where they are first written */
      (void)tt__mem_touch_on (id->mem_ptr, mem->size, first, count, 1);
    }
}

void
tp_free_mem_obj (cl_device_id device, cl_mem mem,
                 void (*basic_free) (cl_device_id, cl_mem))
{
  const tp_device *d = device->data;
  uintptr_t b, e;
  /* the last reference: basic's free hands the memory back to malloc */
  if (d != NULL && d->set.placement == TP_PLACE_INTERLEAVE
      && mem->mem_host_ptr != NULL && mem->mem_host_ptr_refcount == 1
      && !(mem->flags & CL_MEM_USE_HOST_PTR)
      && inner_pages (mem->mem_host_ptr, mem->size, &b, &e))
    (void)syscall (SYS_mbind, (void *)b, (size_t)(e - b), 0 /* DEFAULT */,
                   NULL, 0ul, 0u);
  basic_free (device, mem);
}
