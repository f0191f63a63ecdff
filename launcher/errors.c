/* teams: error names and strings, from the one table in teams/errors.h. */
#include <stddef.h>
#include "teams/errors.h"

typedef struct err_entry {
  int code;
  const char *name, *msg;
} err_entry;

static const err_entry errs[] = {
    {0, "0", "success"},
#define TT__ERR_ENTRY(name, msg) {TT_##name, "TT_" #name, msg},
    TT_ERRNO_MAP(TT__ERR_ENTRY)
#undef TT__ERR_ENTRY
};

static const err_entry unknown = {1, "TT_UNKNOWN", "unknown error"};

static const err_entry *lookup(int err) {
  for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
    if (errs[i].code == err)
      return &errs[i];
  return &unknown;
}

const char *tt_strerror(int err) { return lookup(err)->msg; }

const char *tt_err_name(int err) { return lookup(err)->name; }
