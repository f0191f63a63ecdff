/* Tests of the error codes (teams/errors.h, launcher/errors.c): every code
 * has its name and its message, and a number that is no code has neither. */
#include <criterion/criterion.h>
#include <string.h>

#include "teams/errors.h"

Test(errors, names) {
  cr_assert_str_eq(tt_err_name(0), "0");
  cr_assert_str_eq(tt_err_name(TT_EINVAL), "TT_EINVAL");
  cr_assert_str_eq(tt_err_name(TT_EOVERFLOW), "TT_EOVERFLOW");
  cr_assert_str_eq(tt_err_name(TT_ENOMEM), "TT_ENOMEM");
  cr_assert_str_eq(tt_err_name(TT_EAGAIN), "TT_EAGAIN");
  cr_assert_str_eq(tt_err_name(TT_EBUSY), "TT_EBUSY");
  cr_assert_str_eq(tt_err_name(TT_ENOSYS), "TT_ENOSYS");
  cr_assert_str_eq(tt_err_name(TT_ERANGE), "TT_ERANGE");
}

Test(errors, codes_are_negative_errno_values) {
  cr_assert_eq(TT_EINVAL, -EINVAL);
  cr_assert_eq(TT_ENOMEM, -ENOMEM);
  cr_assert_eq(TT_EBUSY, -EBUSY);
}

Test(errors, messages) {
  cr_assert_str_eq(tt_strerror(0), "success");
  cr_assert_str_eq(tt_strerror(TT_EINVAL), "invalid argument");
  cr_assert_str_eq(tt_strerror(TT_EBUSY), "the team is busy");
}

/* Over every small number: a name exactly where there is a message, and
 * the names of two codes differ. */
Test(errors, name_exactly_where_message) {
  const char *seen[256] = {0};
  int n = 0;
  for (int err = 255; err >= -255; err--) {
    int named = strcmp(tt_err_name(err), "TT_UNKNOWN") != 0;
    int described = strcmp(tt_strerror(err), "unknown error") != 0;
    cr_assert_eq(named, described, "%d: name %s, message %s", err,
                 tt_err_name(err), tt_strerror(err));
    if (!named)
      continue;
    cr_assert(err <= 0, "%d: a positive code has a name", err);
    for (int i = 0; i < n; i++)
      cr_assert(strcmp(seen[i], tt_err_name(err)) != 0, "%d: name %s twice",
                err, seen[i]);
    seen[n++] = tt_err_name(err);
  }
  cr_assert_eq(n, 8, "0 and the seven codes of TT_ERRNO_MAP");
}
