/* teams: symbol export macro.  The library is built with -fvisibility=hidden;
 * only declarations marked TT_EXTERN are part of the ABI. */
#ifndef TEAMS_EXPORT_H
#define TEAMS_EXPORT_H

#if defined(TEAMS_BUILDING) && defined(__GNUC__)
#define TT_EXTERN __attribute__((visibility("default")))
#elif defined(__GNUC__)
#define TT_EXTERN __attribute__((visibility("default")))
#else
#define TT_EXTERN
#endif

#endif
