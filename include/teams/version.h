/* teams: the version of the API.
 *
 * The one place the version is written: CMake reads it from here for the
 * project's version, the shared library's, teams.pc's and the Debian
 * packages' (tests/test-version.c and the install and package checks hold
 * them to it).  Semantic versioning: a new MINOR adds to the API and ABI,
 * a new MAJOR may break them, a new PATCH changes neither.  Before 1.0 a
 * new MINOR may break them too (CMake's package accepts the same MINOR
 * only).
 *
 * TEAMS_VERSION is the version a program was compiled against, tt_version()
 * the one of the library it runs with (libuv's UV_VERSION_HEX and
 * uv_version(), hwloc's HWLOC_API_VERSION and hwloc_get_api_version()):
 *
 *   if (tt_version() >> 8 != TEAMS_VERSION >> 8) ... another MAJOR.MINOR */
#ifndef TEAMS_VERSION_H
#define TEAMS_VERSION_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TEAMS_VERSION_MAJOR 0
#define TEAMS_VERSION_MINOR 1
#define TEAMS_VERSION_PATCH 0

/* 0xMMmmpp: MAJOR, MINOR, PATCH, one byte each. */
#define TEAMS_VERSION                                                          \
  ((TEAMS_VERSION_MAJOR << 16) | (TEAMS_VERSION_MINOR << 8) |                  \
   TEAMS_VERSION_PATCH)

#define TT__VERSION_STR(x) #x
#define TT__VERSION_XSTR(x) TT__VERSION_STR(x)
/* "MAJOR.MINOR.PATCH" */
#define TEAMS_VERSION_STRING                                                   \
  TT__VERSION_XSTR(TEAMS_VERSION_MAJOR)                                        \
  "." TT__VERSION_XSTR(TEAMS_VERSION_MINOR) "." TT__VERSION_XSTR(              \
      TEAMS_VERSION_PATCH)

/* The running library's TEAMS_VERSION. */
TT_EXTERN unsigned tt_version(void);
/* The running library's TEAMS_VERSION_STRING (a static string). */
TT_EXTERN const char *tt_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
