/* teams: tt_foreach_range's schedules (range.c): what range.c offers the
 * rest of launcher/ (memory.c's first touch, steal.c), the tools
 * and the white-box tests.  tt__foreach_range_site,
 * tt__foreach_range_last_ns and tt__foreach_range_on, which the PoCL
 * driver calls, are declared in internal/teams-driver.h, the one header
 * the driver sees. */
#ifndef TEAMS_RANGE_H
#define TEAMS_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "blocks.h"
#include "team-internal.h"

/* The grain tt_foreach_range uses for `schedule` when asked for grain 0
 * (range.c): the one grain default of the launcher and the PoCL driver. */
size_t tt__range_default_grain(tt_schedule schedule, size_t n, size_t p);

/* The blocks a steal or static tt_foreach_range(.., n, grain, p, schedule)
 * starts from on a team of `team` participants, as range.c cuts them: *unit
 * indices per unit, *units units, *pp participants (p clamped to the grains
 * and the team); block b is units [tt__block(*units, *pp, b)), times *unit,
 * the last clipped to n, and runs on participant tt__range_deal's
 * owner[b].  Greedy has no blocks and is given static's; auto those of its
 * first launch: steal's from AUTO_MIN_GRAINS grains per participant, below
 * that static's (it runs greedy).  Returns 0, TT_EINVAL or TT_EOVERFLOW as
 * tt_foreach_range would, and n == 0 gives *units = 0. */
int tt__range_plan(size_t n, size_t grain, size_t p, tt_schedule schedule,
                   size_t team, size_t *unit, size_t *units, size_t *pp);

/* The deal of a range's p blocks on the running team (range.c): participant
 * c starts from block deal[c], block b from participant (*owner)[b] (owner
 * may be NULL).  NULL, and *owner NULL, when the deal is the identity (block
 * c on participant c: the first p participants on one node and one LLC, an
 * unpinned team, TEAMS_BLOCKS=contiguous, no team, p < 2).  The tables stay
 * valid until this thread asks for another p. */
const uint32_t *tt__range_deal(size_t p, const uint32_t **owner);

#endif
