/* teams: memory placed where the schedule runs.
 *
 * Linux places an anonymous page on the NUMA node of the thread that first
 * writes it ("first touch").  An array filled by one thread therefore lives
 * on that thread's node, and a parallel loop over it then reads most of its
 * data from other nodes: PoCL's tracker shows STREAM on 2 nodes at 27 GB/s
 * unplaced against 82 GB/s placed (pocl#330).  The functions here let the
 * team write the first byte of every page from the participant whose block
 * of a later launch holds it, so that a static or steal launch over the same
 * range finds its data local.
 *
 * Which participant touches a page.  tt_foreach_range (and tt_launch, which
 * runs its work-groups through it) cuts [0, n) into p blocks: whole grains
 * for static, whole units for steal (its initial blocks, the same balanced
 * split), dealt to the participants: on a team pinned over several NUMA nodes
 * or LLCs, each next block goes to the node, then the LLC of that node,
 * furthest below its share of the participants (with two equal nodes, even
 * blocks on one, odd on the other), so that work that grows along the range
 * is split evenly between them; on one node with one LLC, or unpinned, block
 * c on participant c.  Element i of the array is index i of the
 * range and lies at base + i * elem_size.  A page is touched by the
 * participant whose block holds the page's first byte inside the array (for
 * the page that holds base: element 0).  So every page has exactly one
 * toucher, blocks map to contiguous spans of pages, and a page that a block
 * boundary cuts goes to the earlier block (it holds the page's first byte):
 * each participant has less than one page of its block on its neighbour's
 * node.  The rule is a pure function of (base, n, elem_size, grain, p,
 * schedule, page size) and the team's deal (which, with p below the team's
 * size, deals over participants 0..p-1), and is tested as one.  Chunks of
 * tt_foreach_chunk are positional (chunk c on participant c, but for the
 * chunks of participants that start late, team.h): an array first touched
 * by chunks is placed for chunks, not for a range's dealt blocks.
 *
 * The page size of the rule is the base page (4 KiB on x86-64), except where
 * the kernel backs the memory with transparent huge pages: THP "always", or
 * memory from tt_mem_alloc with TT_MEM_HUGE.  A huge page is placed whole by
 * its first toucher, so then the rule works in huge pages (2 MiB on x86-64)
 * and a block boundary may be off by up to one huge page.
 *
 * A page already written keeps its node: first touch places a page once.
 * tt_mem_touch writes each page's first byte back to itself, so contents are
 * kept, and it must not run while another thread writes the array. */
#ifndef TEAMS_MEMORY_H
#define TEAMS_MEMORY_H

#include <stddef.h>
#include "errors.h"
#include "export.h"
#include "team.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Touch the pages of the array base[0, n * elem_size) on the team, each from
 * the participant whose block of tt_foreach_range(.., n, grain, p, schedule)
 * holds it (see above).  grain 0, p larger than the team and the auto
 * schedule mean what they mean to tt_foreach_range; auto places as a first
 * auto launch runs: below 4 grains per participant greedy, else steal with
 * units of at most 64 per participant.  Greedy has no blocks: it is placed
 * like static.  The touch is a static region, so it runs serially (every page
 * on the caller's node) when tt_foreach_range would: nested in a chunk, or
 * the team busy.  Returns 0, TT_EINVAL (base NULL with n > 0, elem_size 0,
 * p 0, unknown schedule) or TT_EOVERFLOW (n * elem_size overflows). */
TT_EXTERN int tt_mem_touch(void *base, size_t n, size_t elem_size,
                           size_t grain, size_t p, tt_schedule schedule);

/* tt_mem_alloc flags. */
enum {
  /* Back the array with transparent huge pages (aligned to the huge page,
   * madvise(MADV_HUGEPAGE)) and place it in huge pages.  Fewer TLB misses
   * for arrays much larger than p huge pages; coarser placement. */
  TT_MEM_HUGE = 1u << 0,
  /* Do not touch: interleave the pages over the NUMA nodes of the team's
   * participants instead (mbind MPOL_INTERLEAVE; see tt_mem_interleave),
   * for arrays whose access pattern is not the launch's blocks. */
  TT_MEM_INTERLEAVE = 1u << 1
};

/* Allocate n * elem_size zeroed bytes from fresh pages (mmap: never pages
 * another part of the program already touched, which first touch could not
 * move), aligned to the page (the huge page with TT_MEM_HUGE), and place
 * them as tt_mem_touch does, or interleaved.  Free with tt_mem_free.
 * Returns 0 with *out set, or TT_EINVAL (out NULL, n or elem_size 0, p 0,
 * unknown flags or schedule), TT_EOVERFLOW, TT_ENOMEM.  With
 * TT_MEM_INTERLEAVE on a kernel without NUMA policies (TT_ENOSYS from
 * tt_mem_interleave) the memory is returned without a policy. */
TT_EXTERN int tt_mem_alloc(void **out, size_t n, size_t elem_size,
                           size_t grain, size_t p, tt_schedule schedule,
                           unsigned flags);

/* Free memory from tt_mem_alloc (NULL: no-op).  Returns 0, or TT_EINVAL for
 * a pointer tt_mem_alloc did not return or that was freed already. */
TT_EXTERN int tt_mem_free(void *ptr);

/* Set the NUMA policy of the pages that hold base[0, bytes) (rounded out to
 * whole pages: the policy is per page) to interleave over the nodes of the
 * team's participants (their pinned CPUs' nodes; all the nodes the process
 * may use when the team is not pinned).  Applies to pages not yet touched;
 * pages already present stay where they are.  Returns 0, TT_EINVAL (base
 * NULL with bytes > 0), or TT_ENOSYS when the kernel has no NUMA policy
 * support (nothing is changed then). */
TT_EXTERN int tt_mem_interleave(void *base, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
