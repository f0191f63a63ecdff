/* teams: error codes.  Every function that can fail returns 0 or one of these
 * negative errno-style codes; tt_strerror() describes them and tt_err_name()
 * names them (libuv's uv_strerror and uv_err_name).  One table
 * (TT_ERRNO_MAP) is the single source for codes, names and messages. */
#ifndef TEAMS_ERRORS_H
#define TEAMS_ERRORS_H

#include <errno.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TT_ERRNO_MAP(X)                                                        \
  X(EINVAL, "invalid argument")                                                \
  X(EOVERFLOW, "size computation overflows")                                   \
  X(ENOMEM, "out of memory")                                                   \
  X(EAGAIN, "resource temporarily unavailable (could not start a thread)")    \
  X(EBUSY, "the team is busy")                                                 \
  X(ENOSYS, "not supported on this system")                                    \
  X(ERANGE, "value out of range")

enum {
#define TT__ERR_ENUM(name, msg) TT_##name = -(name),
  TT_ERRNO_MAP(TT__ERR_ENUM)
#undef TT__ERR_ENUM
};

/* A static string describing err (0 gives "success"; unknown codes give
 * "unknown error"). */
TT_EXTERN const char *tt_strerror(int err);

/* The name of err's constant as a static string: "TT_EINVAL" for TT_EINVAL
 * (0 gives "0"; unknown codes give "TT_UNKNOWN", which names no code). */
TT_EXTERN const char *tt_err_name(int err);

#ifdef __cplusplus
}
#endif
#endif
