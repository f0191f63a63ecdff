/* teams: the page -> participant rule of tt_mem_touch (internal).
 *
 * Pure functions of the array and the launch's blocks (see
 * include/teams/memory.h for the rule and why), so that tests can check on
 * any synthetic layout which participant touches which page. */
#ifndef TEAMS_PLACEMENT_H
#define TEAMS_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tt__touch_plan {
  uintptr_t base; /* address of element 0 */
  size_t n;       /* elements */
  size_t elem;    /* bytes per element, >= 1 */
  size_t page;    /* the rule's page size, a power of two */
  size_t unit;    /* elements per unit of the blocks, >= 1 */
  size_t units;   /* units in the blocks (ceil(n / unit)) */
  size_t p;       /* blocks = participants, >= 1 */
  /* The deal (tt__range_deal): participant c's block deal[c], block b's
   * participant owner[b]; both NULL for block c on participant c. */
  const uint32_t *deal, *owner;
} tt__touch_plan;

/* Pages the array spans: from the page that holds base to the one that
 * holds its last byte (0 when n == 0).  Page k starts at
 * (base & ~(page - 1)) + k * page. */
size_t tt__touch_pages(const tt__touch_plan *t);

/* Pages [*k0, *k1) that participant c touches: those whose first byte in
 * the array lies in c's block.  Empty for an empty block; the spans of
 * blocks 0 .. p-1 (participants owner[0], owner[1], ...) tile
 * [0, tt__touch_pages) in order.  c < p. */
void tt__touch_span(const tt__touch_plan *t, size_t c, size_t *k0,
                    size_t *k1);

/* The participant that touches page k (k < tt__touch_pages): computed from
 * the element at the page's first byte, independently of tt__touch_span. */
size_t tt__touch_owner(const tt__touch_plan *t, size_t k);

/* The address participant-side code writes for page k: its first byte in
 * the array. */
static inline uintptr_t tt__touch_anchor(const tt__touch_plan *t, size_t k) {
  uintptr_t p0 = t->base & ~(uintptr_t)(t->page - 1);
  uintptr_t a = p0 + (uintptr_t)k * t->page;
  return a < t->base ? t->base : a;
}

#endif
