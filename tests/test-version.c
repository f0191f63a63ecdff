/* Tests of the version (teams/version.h, launcher/version.c): the header's
 * macros, the running library's tt_version(), the project's version in
 * CMake, the build tree's teams.pc and CMake package version file, and the
 * shared library's file name all give one number; and the public structs
 * that keep their size across versions (teams/team.h) have it.  The
 * installed teams.pc and the Debian packages are held to the same number by
 * tests/consumer/check.sh and tests/package/check.sh. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teams/team.h"
#include "teams/version.h"

/* The first line of path that starts with prefix, after the prefix, with
 * the line end cut; NULL when there is none. */
static char *line_after(const char *path, const char *prefix, char *buf,
                        size_t len) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "cannot open %s", path);
  char *found = NULL;
  while (!found && fgets(buf, (int)len, f))
    if (strncmp(buf, prefix, strlen(prefix)) == 0) {
      buf[strcspn(buf, "\r\n")] = 0;
      found = buf + strlen(prefix);
    }
  fclose(f);
  return found;
}

Test(version, macros_agree_with_the_library) {
  cr_assert_eq(TEAMS_VERSION, (TEAMS_VERSION_MAJOR << 16) |
                                  (TEAMS_VERSION_MINOR << 8) |
                                  TEAMS_VERSION_PATCH);
  cr_assert_eq(tt_version(), TEAMS_VERSION,
               "library 0x%06x, header 0x%06x: compiled against another "
               "version's header",
               tt_version(), TEAMS_VERSION);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", TEAMS_VERSION_MAJOR,
           TEAMS_VERSION_MINOR, TEAMS_VERSION_PATCH);
  cr_assert_str_eq(TEAMS_VERSION_STRING, want);
  cr_assert_str_eq(tt_version_string(), want);
}

Test(version, cmake_project_version_is_the_header_s) {
  cr_assert_str_eq(TT_CMAKE_VERSION, TEAMS_VERSION_STRING);
}

Test(version, pkg_config_file_says_the_same) {
  char buf[256];
  const char *v = line_after(TT_PC_FILE, "Version: ", buf, sizeof buf);
  cr_assert_not_null(v, "%s has no Version: line", TT_PC_FILE);
  cr_assert_str_eq(v, TEAMS_VERSION_STRING, "%s", TT_PC_FILE);
}

Test(version, cmake_package_version_file_says_the_same) {
  char buf[256];
  const char *v = line_after(TT_CMAKE_VERSION_FILE, "set(PACKAGE_VERSION \"",
                             buf, sizeof buf);
  cr_assert_not_null(v, "%s sets no PACKAGE_VERSION", TT_CMAKE_VERSION_FILE);
  char want[64];
  snprintf(want, sizeof want, "%s\")", TEAMS_VERSION_STRING);
  cr_assert_str_eq(v, want, "%s", TT_CMAKE_VERSION_FILE);
}

/* libteams.so.MAJOR... is a link to libteams.so.MAJOR.MINOR.PATCH. */
Test(version, shared_library_file_name_carries_it) {
  Dl_info di;
  cr_assert(dladdr((void *)tt_version, &di) && di.dli_fname);
  char real[PATH_MAX];
  cr_assert_not_null(realpath(di.dli_fname, real), "%s", di.dli_fname);
  const char *base = strrchr(real, '/');
  base = base ? base + 1 : real;
  char want[64];
  snprintf(want, sizeof want, "libteams.so.%s", TEAMS_VERSION_STRING);
  cr_assert_str_eq(base, want);
}

#if UINTPTR_MAX == UINT64_MAX
Test(version, growing_structs_keep_their_size) {
  cr_assert_eq(sizeof(tt_team_info), TT_TEAM_INFO_SIZE);
  cr_assert_eq(sizeof(tt_steal_stats), TT_STEAL_STATS_SIZE);
}
#endif

/* The library fills the fields and leaves no garbage in the counters'
 * reserved room. */
Test(version, steal_stats_reserved_room_is_zero) {
  tt_steal_stats st;
  memset(&st, 0xa5, sizeof st);
  cr_assert_eq(tt_steal_last_stats(&st), 0);
  for (size_t i = 0; i < sizeof st.reserved / sizeof st.reserved[0]; i++)
    cr_assert_eq(st.reserved[i], 0, "reserved[%zu]", i);
}
