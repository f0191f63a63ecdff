/* teams: the library's version, and the sizes that the public structs keep
 * across versions (teams/team.h: fields added later take reserved words). */
#include "teams/launch.h"
#include "teams/team.h"
#include "teams/version.h"

/* A struct's size is part of the ABI: a field added later takes the room of
 * reserved words instead (teams/team.h). */
#define KEEPS_SIZE(type, size)                                                 \
  _Static_assert(sizeof(type) == (size), #type " changed size: take a new "    \
                                         "field's room from reserved instead")
#if UINTPTR_MAX == UINT64_MAX
KEEPS_SIZE(tt_team_info, TT_TEAM_INFO_SIZE);
KEEPS_SIZE(tt_steal_stats, TT_STEAL_STATS_SIZE);
KEEPS_SIZE(tt_launch_config, TT_LAUNCH_CONFIG_SIZE);
KEEPS_SIZE(tt_ndrange, TT_NDRANGE_SIZE);
#endif
_Static_assert(sizeof(tt_pin) == sizeof(int), "tt_team_info.pinned is int-sized");
_Static_assert(TT_VERSION_MINOR < 256 && TT_VERSION_PATCH < 256,
               "TT_VERSION packs MINOR and PATCH into a byte each");

unsigned tt_version(void) { return TT_VERSION; }

const char *tt_version_string(void) { return TT_VERSION_STRING; }
