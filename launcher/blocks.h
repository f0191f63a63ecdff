/* teams: blocks -- how a range of n items is cut into p blocks balanced to
 * within one, and which block a participant starts from under a deal:
 * used by the range schedules (range.c, steal.c), first touch (memory.c)
 * and the CPU rule (cpuset.c).  Its own header, so that steal.c needs
 * nothing of range.c's and cpuset.c nothing of the range schedules'. */
#ifndef TEAMS_BLOCKS_H
#define TEAMS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* Block c of [0, n) split into p blocks balanced to within one (the first
 * n % p blocks are one longer): [*begin, *end).  Precondition: c < p. */
static inline void tt__block(size_t n, size_t p, size_t c, size_t *begin,
                             size_t *end) {
  size_t q = n / p, r = n % p;
  *begin = c * q + (c < r ? c : r);
  *end = *begin + q + (c < r);
}

/* Participant c's block under deal (range.c's tt__range_deal; NULL: the
 * identity). */
static inline size_t tt__dealt(const uint32_t *deal, size_t c) {
  return deal ? deal[c] : c;
}

#endif
