/* ULP distances for the float comparisons of the tests and the demo. */
#include <math.h>
#include <string.h>

#include "kernels.h"

/* Map the sign-magnitude bit patterns onto one ordered integer line, where
 * adjacent floats are adjacent integers and +0 and -0 meet. */
static int64_t ordered_f(float v) {
  int32_t i;
  memcpy(&i, &v, sizeof i);
  return i < 0 ? -(int64_t)(i & INT32_MAX) : i;
}

uint64_t tt_ulp_diff(float a, float b) {
  if (isnan(a) || isnan(b))
    return UINT64_MAX;
  int64_t x = ordered_f(a), y = ordered_f(b);
  return x > y ? (uint64_t)(x - y) : (uint64_t)(y - x);
}

uint64_t tt_ulp_diff_d(double a, double b) {
  if (isnan(a) || isnan(b))
    return UINT64_MAX;
  int64_t i, j;
  memcpy(&i, &a, sizeof i);
  memcpy(&j, &b, sizeof j);
  /* As above, in unsigned arithmetic: the 64-bit line does not fit int64. */
  uint64_t x = i < 0 ? ((uint64_t)1 << 63) - (uint64_t)(i & INT64_MAX)
                     : ((uint64_t)1 << 63) + (uint64_t)i;
  uint64_t y = j < 0 ? ((uint64_t)1 << 63) - (uint64_t)(j & INT64_MAX)
                     : ((uint64_t)1 << 63) + (uint64_t)j;
  return x > y ? x - y : y - x;
}
