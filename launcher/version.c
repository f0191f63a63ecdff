/* teams: the library's version, and the sizes that the public structs keep
 * across versions (teams/team.h: fields added later take reserved words). */
#include "teams/team.h"
#include "teams/version.h"

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(tt_team_info) == TT_TEAM_INFO_SIZE,
               "tt_team_info changed size: take a new field's room from "
               "reserved instead");
_Static_assert(sizeof(tt_steal_stats) == TT_STEAL_STATS_SIZE,
               "tt_steal_stats changed size: take a new field's room from "
               "reserved instead");
#endif
_Static_assert(TEAMS_VERSION_MINOR < 256 && TEAMS_VERSION_PATCH < 256,
               "TEAMS_VERSION packs MINOR and PATCH into a byte each");

unsigned tt_version(void) { return TEAMS_VERSION; }

const char *tt_version_string(void) { return TEAMS_VERSION_STRING; }
