/* A small Criterion-compatible test runner, used only for the
 * ThreadSanitizer build of the suite: Criterion 2.4 cannot start under TSan
 * (its inheritable arena is mapped at an address TSan reserves: Criterion
 * issue #274).  It implements the part of Criterion's API the suite uses,
 * with the same semantics: each test runs in a forked child process (so
 * tests may set TEAMS_* before the team starts), cr_assert* ends the test,
 * cr_expect* records a failure and continues, cr_skip_test skips.
 * The closing line has Criterion's "Synthesis" form. */
#ifndef TT_TSAN_CRITERION_H
#define TT_TSAN_CRITERION_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tt_cr_test {
  const char *suite, *name;
  void (*fn)(void);
  void (*init)(void);
  void (*fini)(void);
  double timeout;
  int disabled;
  struct tt_cr_test *next;
};

/* Named like Criterion's test options, so Test(s, n, .init = f) compiles. */
struct tt_cr_opts {
  void (*init)(void);
  void (*fini)(void);
  double timeout;
  int disabled;
  int exit_code;
  int signal;
  const char *description;
};

void tt_cr_register(struct tt_cr_test *t);
void tt_cr_fail(const char *file, int line, int fatal, const char *what,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void tt_cr_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tt_cr_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define Test(S, N, ...)                                                 \
  static void S##_##N##_fn(void);                                       \
  static struct tt_cr_opts S##_##N##_opts = {__VA_ARGS__};              \
  static struct tt_cr_test S##_##N##_test;                              \
  __attribute__((constructor)) static void S##_##N##_reg(void) {        \
    S##_##N##_test.suite = #S;                                      \
    S##_##N##_test.name = #N;                                        \
    S##_##N##_test.fn = S##_##N##_fn;                            \
    S##_##N##_test.init = S##_##N##_opts.init;                   \
    S##_##N##_test.fini = S##_##N##_opts.fini;                   \
    S##_##N##_test.timeout = S##_##N##_opts.timeout;             \
    S##_##N##_test.disabled = S##_##N##_opts.disabled;           \
    tt_cr_register(&S##_##N##_test);                                    \
  }                                                                            \
  static void S##_##N##_fn(void)

#define TestSuite(S, ...)                                                      \
  static struct tt_cr_opts S##_suite_opts __attribute__((unused)) = {      \
      __VA_ARGS__}

/* The optional message of a check is a printf format literal and its
 * arguments, as in Criterion: pasting " " before it makes an absent message
 * a valid (non-empty) format. */
#define TT_CR_CHECK(fatal, cond, text, ...)                                    \
  do {                                                                         \
    if (!(cond))                                                               \
      tt_cr_fail(__FILE__, __LINE__, fatal, text, " " __VA_ARGS__);            \
  } while (0)

#define TT_CR_CMP(fatal, a, op, b, ...)                                        \
  TT_CR_CHECK(fatal, (a)op(b), "expected " #a " " #op " " #b, ##__VA_ARGS__)

#define cr_assert(c, ...) TT_CR_CHECK(1, c, "expected " #c, ##__VA_ARGS__)
#define cr_expect(c, ...) TT_CR_CHECK(0, c, "expected " #c, ##__VA_ARGS__)
#define cr_assert_not(c, ...) TT_CR_CHECK(1, !(c), "expected !" #c, ##__VA_ARGS__)
#define cr_expect_not(c, ...) TT_CR_CHECK(0, !(c), "expected !" #c, ##__VA_ARGS__)
#define cr_assert_eq(a, b, ...) TT_CR_CMP(1, a, ==, b, ##__VA_ARGS__)
#define cr_expect_eq(a, b, ...) TT_CR_CMP(0, a, ==, b, ##__VA_ARGS__)
#define cr_assert_neq(a, b, ...) TT_CR_CMP(1, a, !=, b, ##__VA_ARGS__)
#define cr_expect_neq(a, b, ...) TT_CR_CMP(0, a, !=, b, ##__VA_ARGS__)
#define cr_assert_lt(a, b, ...) TT_CR_CMP(1, a, <, b, ##__VA_ARGS__)
#define cr_expect_lt(a, b, ...) TT_CR_CMP(0, a, <, b, ##__VA_ARGS__)
#define cr_assert_leq(a, b, ...) TT_CR_CMP(1, a, <=, b, ##__VA_ARGS__)
#define cr_expect_leq(a, b, ...) TT_CR_CMP(0, a, <=, b, ##__VA_ARGS__)
#define cr_assert_gt(a, b, ...) TT_CR_CMP(1, a, >, b, ##__VA_ARGS__)
#define cr_expect_gt(a, b, ...) TT_CR_CMP(0, a, >, b, ##__VA_ARGS__)
#define cr_assert_geq(a, b, ...) TT_CR_CMP(1, a, >=, b, ##__VA_ARGS__)
#define cr_expect_geq(a, b, ...) TT_CR_CMP(0, a, >=, b, ##__VA_ARGS__)
#define cr_assert_null(a, ...) TT_CR_CMP(1, (const void *)(a), ==, NULL, ##__VA_ARGS__)
#define cr_expect_null(a, ...) TT_CR_CMP(0, (const void *)(a), ==, NULL, ##__VA_ARGS__)
#define cr_assert_not_null(a, ...) TT_CR_CMP(1, (const void *)(a), !=, NULL, ##__VA_ARGS__)
#define cr_expect_not_null(a, ...) TT_CR_CMP(0, (const void *)(a), !=, NULL, ##__VA_ARGS__)
#define cr_assert_str_eq(a, b, ...)                                            \
  TT_CR_CHECK(1, !strcmp((a), (b)), "expected " #a " == " #b, ##__VA_ARGS__)
#define cr_expect_str_eq(a, b, ...)                                            \
  TT_CR_CHECK(0, !strcmp((a), (b)), "expected " #a " == " #b, ##__VA_ARGS__)
#define cr_assert_arr_eq(a, b, n, ...)                                         \
  TT_CR_CHECK(1, !memcmp((a), (b), (n)), "expected arrays " #a " == " #b, ##__VA_ARGS__)
#define cr_expect_arr_eq(a, b, n, ...)                                         \
  TT_CR_CHECK(0, !memcmp((a), (b), (n)), "expected arrays " #a " == " #b, ##__VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...)                                     \
  TT_CR_CHECK(1, fabs((double)(a) - (double)(b)) <= (eps),                     \
              "expected " #a " ~= " #b, ##__VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...)                                     \
  TT_CR_CHECK(0, fabs((double)(a) - (double)(b)) <= (eps),                     \
              "expected " #a " ~= " #b, ##__VA_ARGS__)
#define cr_assert_fail(...) TT_CR_CHECK(1, 0, "failed", ##__VA_ARGS__)
#define cr_skip_test(...) tt_cr_skip(" " __VA_ARGS__)
#define cr_log_info(...) tt_cr_log(__VA_ARGS__)
#define cr_log_warn(...) tt_cr_log(__VA_ARGS__)
#define cr_log_error(...) tt_cr_log(__VA_ARGS__)

#endif
