/* teams: memory placed where the schedule runs (include/teams/memory.h).
 *
 * tt_mem_touch runs one static region of p chunks: chunk c, on participant
 * c, writes the first byte of each page of its span (placement.h), with an
 * atomic add of zero.  An add, not a plain store: the contents must survive
 * (a caller may touch an array it already filled), and a locked RMW takes
 * one write fault on a page not yet present, where a load followed by a
 * store would fault twice (the load maps the shared zero page, the store
 * then copies it).  The blocks are those tt_foreach_range starts from
 * (tt__range_plan in range.c cuts them for both), so the two cannot drift.
 *
 * tt_mem_alloc maps fresh pages (mmap): memory from malloc may be pages the
 * program already touched, which first touch cannot move.  A list of live
 * allocations (below) remembers each mapping for tt_mem_free: no header is
 * written next to the data, which would place a page before the touch.
 *
 * Huge pages.  The rule's page is the huge page where the kernel will use
 * one (THP "always", or TT_MEM_HUGE with madvise(MADV_HUGEPAGE)): a huge page
 * goes whole to whoever faults it first, so touching 4 KiB pieces of it from
 * two participants would place it by a race.  TT_MEM_HUGE is opt-in, not the
 * default: with THP in "madvise" mode (Debian's default) a default
 * allocation gets base pages, the placement is exact to 4 KiB, and the
 * choice of fewer TLB misses for coarser placement stays the user's. */
#include "teams/memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blocks.h"
#include "placement.h"
#include "prim.h"
#include "range.h"
#include "team-internal.h"
#include "topology-view.h"

/* ---- the rule (pure) ------------------------------------------------------ */

size_t tt__touch_pages(const tt__touch_plan *t) {
  if (t->n == 0)
    return 0;
  size_t off0 = (size_t)(t->base & (t->page - 1));
  size_t bytes = t->n * t->elem;
  return (off0 + bytes + t->page - 1) / t->page;
}

static size_t page_after(const tt__touch_plan *t, size_t b) {
  /* first page whose anchor is >= byte offset b (b > 0) */
  size_t off0 = (size_t)(t->base & (t->page - 1));
  return (b + off0 + t->page - 1) / t->page;
}

void tt__touch_span(const tt__touch_plan *t, size_t c, size_t *k0,
                    size_t *k1) {
  size_t ub, ue;
  tt__block(t->units, t->p, tt__dealt(t->deal, c), &ub, &ue);
  size_t ib = ub * t->unit < t->n ? ub * t->unit : t->n;
  size_t ie = ue * t->unit < t->n ? ue * t->unit : t->n;
  size_t bb = ib * t->elem, be = ie * t->elem;
  *k0 = bb == 0 ? 0 : page_after(t, bb);
  *k1 = be == 0 ? 0 : page_after(t, be);
}

size_t tt__touch_owner(const tt__touch_plan *t, size_t k) {
  size_t i = (size_t)(tt__touch_anchor(t, k) - t->base) / t->elem;
  size_t u = i / t->unit;
  size_t q = t->units / t->p, r = t->units % t->p;
  size_t big = r * (q + 1); /* units in the first r blocks, one longer */
  size_t b = u < big ? u / (q + 1) : r + (u - big) / q;
  return tt__dealt(t->owner, b);
}

/* ---- touching on the team --------------------------------------------------- */

static void touch_chunk(void *ctx, size_t c) {
  const tt__touch_plan *t = ctx;
  size_t k0, k1;
  tt__touch_span(t, c, &k0, &k1);
  for (size_t k = k0; k < k1; k++)
    tt_atomic_plain_fetch_add_relaxed(
        (unsigned char *)tt__touch_anchor(t, k), 0);
}

static int check_args(size_t n, size_t elem, size_t p, tt_schedule schedule,
                      size_t page) {
  if (elem == 0 || p == 0 || (unsigned)schedule > (unsigned)TT_SCHED_AUTO)
    return TT_EINVAL;
  /* bytes, plus a page either side, must not overflow */
  if (n > (SIZE_MAX - 4 * page) / elem)
    return TT_EOVERFLOW;
  return 0;
}

static int touch(void *base, size_t n, size_t elem, size_t grain, size_t p,
                 tt_schedule schedule, size_t page) {
  tt__touch_plan t = {(uintptr_t)base, n, elem, page, 1, 0, 1, NULL, NULL};
  /* nested in a chunk the region runs serially: any plan will do */
  size_t team = tt_participant() >= 0 ? 1 : tt_team_size();
  int rc = tt__range_plan(n, grain, p, schedule, team, &t.unit, &t.units,
                          &t.p);
  if (rc < 0)
    return rc;
  if (team > 1)
    t.deal = tt__range_deal(t.p, &t.owner);
  /* Every participant touches its own block, on the team's workers whatever
   * the way's choice (way.c): the pages stay where they land
   * (TT__MODE_STATIC_PLACED). */
  return tt__team_run(touch_chunk, &t, t.p, t.p, TT__MODE_STATIC_PLACED, NULL);
}

/* The page size of the rule for memory whose THP use is the system's. */
static size_t system_page(void) {
  int always;
  size_t huge = tt__thp_size(&always);
  return always && huge ? huge : tt__page_size();
}

int tt_mem_touch(void *base, size_t n, size_t elem_size, size_t grain,
                 size_t p, tt_schedule schedule) {
  size_t page = system_page();
  int rc = check_args(n, elem_size, p, schedule, page);
  if (rc < 0)
    return rc;
  if (n == 0)
    return 0;
  if (!base)
    return TT_EINVAL;
  return touch(base, n, elem_size, grain, p, schedule, page);
}

/* tt__mem_touch_on (teams-driver.h): the rule of tt_mem_touch for bytes
 * elements and a static launch on `count` participants, run on the
 * participants [first, first + count) of the team, block k on participant
 * first + k. */
static void touch_blocks(void *ctx, size_t begin, size_t end) {
  for (size_t c = begin; c < end; c++)
    touch_chunk(ctx, c);
}

int tt__mem_touch_on(void *base, size_t bytes, size_t first, size_t count,
                     int wait) {
  size_t page = system_page();
  int rc = check_args(bytes, 1, count, TT_SCHED_STATIC, page);
  if (rc < 0)
    return rc;
  if (bytes == 0)
    return 0;
  if (!base)
    return TT_EINVAL;
  tt__touch_plan t = {(uintptr_t)base, bytes, 1, page, 1, 0, 1, NULL, NULL};
  rc = tt__range_plan(bytes, 0, count, TT_SCHED_STATIC, count, &t.unit,
                      &t.units, &t.p);
  if (rc < 0)
    return rc;
  /* t.p < count only for fewer bytes than participants: the first t.p */
  return tt__foreach_range_on(touch_blocks, &t, t.p, 1, first, t.p,
                              TT_SCHED_STATIC, wait);
}

/* ---- interleave ------------------------------------------------------------- */

#define MAX_NODES 1024
#define MASK_WORDS (MAX_NODES / (8 * sizeof(unsigned long)))

static int team_nodes(unsigned long *mask) {
  memset(mask, 0, MASK_WORDS * sizeof *mask);
  size_t size = tt_team_size(); /* starts the team: its snapshot */
  const tt__topo *s = tt__topology_current();
  int any = 0;
  if (s && s->pinned && s->n >= size) {
    any = 1;
    for (size_t i = 0; i < size && any; i++) {
      int node = tt__cpu_node(s->cpu[i]);
      if (node < 0 || node >= MAX_NODES)
        any = 0; /* a CPU without a known node: use every allowed node */
      else
        mask[(size_t)node / (8 * sizeof *mask)] |=
            1ul << ((size_t)node % (8 * sizeof *mask));
    }
  }
  if (any)
    return 0;
  return tt__mems_allowed(mask, MAX_NODES);
}

size_t tt__team_nodes(void) {
  unsigned long mask[MASK_WORDS];
  if (team_nodes(mask) != 0)
    return 1;
  size_t n = 0;
  for (size_t i = 0; i < MASK_WORDS; i++)
    n += (size_t)__builtin_popcountl(mask[i]);
  return n ? n : 1;
}

static int tt_code(int err) {
  return err == -ENOSYS ? TT_ENOSYS : err == -ENOMEM ? TT_ENOMEM : TT_EINVAL;
}

int tt_mem_interleave(void *base, size_t bytes) {
  if (bytes == 0)
    return 0;
  if (!base)
    return TT_EINVAL;
  size_t bp = tt__page_size();
  uintptr_t b = (uintptr_t)base & ~(uintptr_t)(bp - 1);
  if ((uintptr_t)base > UINTPTR_MAX - bytes - bp)
    return TT_EOVERFLOW;
  uintptr_t e = ((uintptr_t)base + bytes + bp - 1) & ~(uintptr_t)(bp - 1);
  unsigned long mask[MASK_WORDS];
  int rc = team_nodes(mask);
  if (rc == 0)
    rc = tt__mbind_interleave((void *)b, (size_t)(e - b), mask, MAX_NODES);
  return rc == 0 ? 0 : tt_code(rc);
}

/* ---- allocation -------------------------------------------------------------- */

/* The live allocations, so that tt_mem_free never reads memory it was not
 * given (a foreign pointer is TT_EINVAL, not a crash).  A list under a
 * mutex: allocations are few and large, and the lock is held for a walk,
 * never across a system call. */
typedef struct mem_block {
  struct mem_block *next;
  void *data, *map;
  size_t map_len;
} mem_block;

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_block *blocks;

int tt_mem_alloc(void **out, size_t n, size_t elem_size, size_t grain,
                 size_t p, tt_schedule schedule, unsigned flags) {
  if (!out || n == 0 || (flags & ~(unsigned)(TT_MEM_HUGE | TT_MEM_INTERLEAVE)))
    return TT_EINVAL;
  *out = NULL;
  size_t bp = tt__page_size();
  size_t huge = tt__thp_size(NULL);
  size_t align = (flags & TT_MEM_HUGE) && huge ? huge : bp;
  size_t page = align == bp ? system_page() : align;
  int rc = check_args(n, elem_size, p, schedule, align > page ? align : page);
  if (rc < 0)
    return rc;
  size_t bytes = n * elem_size;
  size_t len = (bytes + bp - 1) & ~(bp - 1);
  size_t map_len = len + (align - bp); /* room to align the start */
  mem_block *b = malloc(sizeof *b);
  if (!b)
    return TT_ENOMEM;
  void *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    free(b);
    return TT_ENOMEM;
  }
  uintptr_t data = ((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1);
  if (flags & TT_MEM_HUGE)
    (void)madvise((void *)data, len, MADV_HUGEPAGE); /* advice only */
  if (flags & TT_MEM_INTERLEAVE)
    rc = tt_mem_interleave((void *)data, len);
  else
    rc = touch((void *)data, n, elem_size, grain, p, schedule, page);
  if (rc < 0 && rc != TT_ENOSYS) {
    munmap(map, map_len);
    free(b);
    return rc;
  }
  b->data = (void *)data;
  b->map = map;
  b->map_len = map_len;
  pthread_mutex_lock(&blocks_lock);
  b->next = blocks;
  blocks = b;
  pthread_mutex_unlock(&blocks_lock);
  *out = (void *)data;
  return 0;
}

int tt_mem_free(void *ptr) {
  if (!ptr)
    return 0;
  pthread_mutex_lock(&blocks_lock);
  mem_block **pp = &blocks, *b;
  while ((b = *pp) != NULL && b->data != ptr)
    pp = &b->next;
  if (b)
    *pp = b->next;
  pthread_mutex_unlock(&blocks_lock);
  if (!b)
    return TT_EINVAL;
  munmap(b->map, b->map_len);
  free(b);
  return 0;
}
