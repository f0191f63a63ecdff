/* Tests of CPU masks and their CPU-list text (launcher/cpumask.c): parsing,
 * refusing malformed lists, formatting and its truncation.  Pure functions
 * on synthetic text; nothing here reads the system. */
#include <criterion/criterion.h>
#include <string.h>

#include "cpumask.h"
#include "teams/errors.h"

static tt__cpumask mask_of(const char *list) {
  tt__cpumask m;
  cr_assert_geq(tt__cpulist_parse(list, &m), 0, "bad list in test: %s", list);
  return m;
}

static const char *list_of(const tt__cpumask *m) {
  static char buf[256];
  tt__cpulist_format(m, buf, sizeof buf);
  return buf;
}

/* ---- CPU lists -------------------------------------------------------------- */

Test(cpumask, cpu_lists_parse_and_format) {
  tt__cpumask m;
  cr_expect_eq(tt__cpulist_parse("0-3,8,10-11\n", &m), 7);
  cr_expect_str_eq(list_of(&m), "0-3,8,10-11");
  cr_expect_eq(tt__cpulist_parse("5", &m), 1);
  cr_expect(tt__mask_isset(&m, 5));
  cr_expect_eq(tt__cpulist_parse("", &m), 0);
  cr_expect_str_eq(list_of(&m), "");
  cr_expect_eq(tt__cpulist_parse("\n", &m), 0);
  cr_expect_eq(tt__cpulist_parse("1023", &m), 1);
  cr_expect_eq(tt__cpulist_parse("0,2,4,6", &m), 4);
  cr_expect_str_eq(list_of(&m), "0,2,4,6");
  const char *bad[] = {"3-1", "a", "1,,2", "1-", "-1", "0-1024", "1 2", "1\n2",
                       "0-3x", ",1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_expect_eq(tt__cpulist_parse(bad[i], &m), TT_EINVAL, "\"%s\"", bad[i]);
    cr_expect_eq(tt__mask_count(&m), 0, "\"%s\" leaves the mask empty", bad[i]);
  }
  /* formatting truncates at a whole entry and says what it needed */
  m = mask_of("0,2,4,6,8,10");
  char small[6];
  cr_expect_eq(tt__cpulist_format(&m, small, sizeof small), strlen("0,2,4,6,8,10"));
  cr_expect_str_eq(small, "0,2,4");
}

Test(cpumask, set_operations) {
  tt__cpumask a = mask_of("0-7,64,1023"), b = mask_of("4-9,64"), out;
  cr_expect_eq(tt__mask_count(&a), 10);
  tt__mask_and(&out, &a, &b);
  cr_expect_str_eq(list_of(&out), "4-7,64");
  tt__mask_and(&a, &a, &b); /* in place */
  cr_expect(tt__mask_equal(&a, &out));
  cr_expect(!tt__mask_equal(&a, &b));
  cr_expect(!tt__mask_isset(&a, -1) && !tt__mask_isset(&a, 1024), "out of range");
  tt__mask_set(&a, 1024); /* ignored */
  cr_expect(tt__mask_equal(&a, &out));
}

Test(cpumask, unsigned_decimals) {
  const char *s = "42,7";
  long v = -1;
  cr_expect(tt__text_uint(&s, &v));
  cr_expect_eq(v, 42);
  cr_expect_str_eq(s, ",7", "moved past the number");
  const char *bad[] = {"", "-1", "+1", " 1", "x", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *t = bad[i];
    cr_expect(!tt__text_uint(&t, &v), "\"%s\"", bad[i]);
    cr_expect_eq(t, bad[i], "\"%s\": not moved", bad[i]);
  }
}
