/* teams: symbol export macro.  The library is built with -fvisibility=hidden;
 * only declarations marked TT_EXTERN are part of the ABI.
 *
 * Building libteams.so (TEAMS_BUILDING): TT_EXTERN gives the API default
 * visibility.  Building or using libteams.a (TEAMS_STATIC, set by the CMake
 * target): nothing, so the archive's symbols stay hidden and a shared library
 * that links it does not re-export the API.  A program or library using
 * libteams.so needs nothing on ELF either. */
#ifndef TEAMS_EXPORT_H
#define TEAMS_EXPORT_H

#if defined(TEAMS_BUILDING) && !defined(TEAMS_STATIC) && defined(__GNUC__)
#define TT_EXTERN __attribute__((visibility("default")))
#else
#define TT_EXTERN
#endif

#endif
