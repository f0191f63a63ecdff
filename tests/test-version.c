/* Tests of the version (teams/version.h, launcher/version.c): the header's
 * macros, the running library's tt_version(), the project's version in
 * CMake, the build tree's teams.pc and CMake package version file, and the
 * shared library's file name all give one number; and the public structs
 * that keep their size across versions (teams/team.h) have it; the soname
 * follows the ABI.  The
 * installed teams.pc and the Debian packages are held to the same number by
 * tests/consumer/check.sh and tests/package/check.sh. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teams/launch.h"
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

/* The names of 0.1.0 stay, as aliases of the TT_VERSION* ones. */
Test(version, old_names_are_aliases) {
  cr_assert_eq(TEAMS_VERSION_MAJOR, TT_VERSION_MAJOR);
  cr_assert_eq(TEAMS_VERSION_MINOR, TT_VERSION_MINOR);
  cr_assert_eq(TEAMS_VERSION_PATCH, TT_VERSION_PATCH);
  cr_assert_eq(TEAMS_VERSION, TT_VERSION);
  cr_assert_str_eq(TEAMS_VERSION_STRING, TT_VERSION_STRING);
}

Test(version, macros_agree_with_the_library) {
  cr_assert_eq(TT_VERSION, (TT_VERSION_MAJOR << 16) |
                                  (TT_VERSION_MINOR << 8) |
                                  TT_VERSION_PATCH);
  cr_assert_eq(tt_version(), TT_VERSION,
               "library 0x%06x, header 0x%06x: compiled against another "
               "version's header",
               tt_version(), TT_VERSION);
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", TT_VERSION_MAJOR,
           TT_VERSION_MINOR, TT_VERSION_PATCH);
  cr_assert_str_eq(TT_VERSION_STRING, want);
  cr_assert_str_eq(tt_version_string(), want);
}

Test(version, cmake_project_version_is_the_header_s) {
  cr_assert_str_eq(TT_CMAKE_VERSION, TT_VERSION_STRING);
}

Test(version, pkg_config_file_says_the_same) {
  char buf[256];
  const char *v = line_after(TT_PC_FILE, "Version: ", buf, sizeof buf);
  cr_assert_not_null(v, "%s has no Version: line", TT_PC_FILE);
  cr_assert_str_eq(v, TT_VERSION_STRING, "%s", TT_PC_FILE);
}

Test(version, cmake_package_version_file_says_the_same) {
  char buf[256];
  const char *v = line_after(TT_CMAKE_VERSION_FILE, "set(PACKAGE_VERSION \"",
                             buf, sizeof buf);
  cr_assert_not_null(v, "%s sets no PACKAGE_VERSION", TT_CMAKE_VERSION_FILE);
  char want[64];
  snprintf(want, sizeof want, "%s\")", TT_VERSION_STRING);
  cr_assert_str_eq(v, want, "%s", TT_CMAKE_VERSION_FILE);
}

/* The base name of the file the loader took libteams from: the name it was
 * found by (the soname), or with real set the file that name links to. */
static const char *library_file(bool real, char buf[PATH_MAX]) {
  Dl_info di;
  cr_assert(dladdr((void *)tt_version, &di) && di.dli_fname);
  if (real)
    cr_assert_not_null(realpath(di.dli_fname, buf), "%s", di.dli_fname);
  else
    snprintf(buf, PATH_MAX, "%s", di.dli_fname);
  const char *base = strrchr(buf, '/');
  return base ? base + 1 : buf;
}

/* The soname follows the ABI: libteams.so.0.MINOR before 1.0 (a new minor
 * version may break the ABI), libteams.so.MAJOR from 1.0 on. */
Test(version, soname_follows_the_abi) {
  char buf[PATH_MAX], want[64];
  if (TT_VERSION_MAJOR == 0)
    snprintf(want, sizeof want, "libteams.so.0.%d", TT_VERSION_MINOR);
  else
    snprintf(want, sizeof want, "libteams.so.%d", TT_VERSION_MAJOR);
  cr_assert_str_eq(library_file(false, buf), want);
}

/* ... a link to libteams.so.MAJOR.MINOR.PATCH. */
Test(version, shared_library_file_name_carries_it) {
  char buf[PATH_MAX], want[64];
  snprintf(want, sizeof want, "libteams.so.%s", TT_VERSION_STRING);
  cr_assert_str_eq(library_file(true, buf), want);
}

#if UINTPTR_MAX == UINT64_MAX
Test(version, growing_structs_keep_their_size) {
  cr_assert_eq(sizeof(tt_team_info), TT_TEAM_INFO_SIZE);
  cr_assert_eq(sizeof(tt_steal_stats), TT_STEAL_STATS_SIZE);
  cr_assert_eq(sizeof(tt_launch_config), TT_LAUNCH_CONFIG_SIZE);
  cr_assert_eq(sizeof(tt_ndrange), TT_NDRANGE_SIZE);
  cr_assert_eq(sizeof(tt_pin), sizeof(int));
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

/* The NDRange the library fills has its reserved room zeroed too. */
Test(version, ndrange_reserved_room_is_zero) {
  tt_launch_config cfg = {.dims = 1, .global = {100}, .local = {10}};
  tt_ndrange nd;
  memset(&nd, 0xa5, sizeof nd);
  cr_assert_eq(tt_launch_resolve(&cfg, &nd), 0);
  for (size_t i = 0; i < sizeof nd.reserved / sizeof nd.reserved[0]; i++)
    cr_assert_eq(nd.reserved[i], 0, "reserved[%zu]", i);
}

/* A config's reserved room is for later fields, which will read 0 as their
 * default: a launch refuses one that is not zero, before anything runs. */
Test(version, launch_config_reserved_room_must_be_zero) {
  for (size_t i = 0; i < sizeof ((tt_launch_config *)0)->reserved / sizeof(uint64_t); i++) {
    tt_launch_config cfg = {.dims = 1, .global = {100}};
    cfg.reserved[i] = 1;
    tt_ndrange nd;
    cr_assert_eq(tt_launch_resolve(&cfg, &nd), TT_EINVAL, "reserved[%zu]", i);
  }
}
