/* teams: error strings, built from the one table in teams/errors.h. */
#include "teams/errors.h"

const char *tt_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define TT__ERR_CASE(name, msg)                                                \
  case TT_##name:                                                              \
    return msg;
    TT_ERRNO_MAP(TT__ERR_CASE)
#undef TT__ERR_CASE
  default:
    return "unknown error";
  }
}
