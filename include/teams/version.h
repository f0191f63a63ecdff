/* teams: the version of the API.
 *
 * The one place the version is written: CMake reads it from here for the
 * project's version, the shared library's, teams.pc's and the Debian
 * packages' (tests/test-version.c and the install and package checks hold
 * them to it).  Semantic versioning: a new MINOR adds to the API and ABI,
 * a new MAJOR may break them, a new PATCH changes neither.  Before 1.0 a
 * new MINOR may break them too: the shared library's soname is then
 * libteams.so.0.MINOR (from 1.0 on libteams.so.MAJOR), and CMake's package
 * accepts the same MINOR only.
 *
 * TT_VERSION is the version a program was compiled against, tt_version()
 * the one of the library it runs with (libuv's UV_VERSION_HEX and
 * uv_version(), hwloc's HWLOC_API_VERSION and hwloc_get_api_version()):
 *
 *   if (tt_version() >> 8 != TT_VERSION >> 8) ... another MAJOR.MINOR */
#ifndef TEAMS_VERSION_H
#define TEAMS_VERSION_H

#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_VERSION_MAJOR 0
#define TT_VERSION_MINOR 1
#define TT_VERSION_PATCH 0

/* 0xMMmmpp: MAJOR, MINOR, PATCH, one byte each. */
#define TT_VERSION                                                             \
  ((TT_VERSION_MAJOR << 16) | (TT_VERSION_MINOR << 8) | TT_VERSION_PATCH)

#define TT__VERSION_STR(x) #x
#define TT__VERSION_XSTR(x) TT__VERSION_STR(x)
/* "MAJOR.MINOR.PATCH" */
#define TT_VERSION_STRING                                                      \
  TT__VERSION_XSTR(TT_VERSION_MAJOR)                                           \
  "." TT__VERSION_XSTR(TT_VERSION_MINOR) "." TT__VERSION_XSTR(TT_VERSION_PATCH)

/* The names of 0.1.0, kept for the programs that use them. */
#define TEAMS_VERSION_MAJOR TT_VERSION_MAJOR
#define TEAMS_VERSION_MINOR TT_VERSION_MINOR
#define TEAMS_VERSION_PATCH TT_VERSION_PATCH
#define TEAMS_VERSION TT_VERSION
#define TEAMS_VERSION_STRING TT_VERSION_STRING

/* The running library's TT_VERSION. */
TT_EXTERN unsigned tt_version(void);
/* The running library's TT_VERSION_STRING (a static string). */
TT_EXTERN const char *tt_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
