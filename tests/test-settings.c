/* The TEAMS_* settings table (launcher/internal/settings.h): integers are
 * parsed as integers, choices by name, and a refused value reads as the
 * default with a message, never as something else.  tests/settings-doc.sh
 * checks that the README's table is the table's print. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "settings.h"
#include "teams/team.h"

Test(settings, integers_are_whole_decimal_numbers_in_range) {
  long v = -7;
  cr_expect(tt__settings_parse_int("2", 1, 4096, &v) && v == 2);
  cr_expect(tt__settings_parse_int("4096", 1, 4096, &v) && v == 4096);
  cr_expect(tt__settings_parse_int("+3", 1, 4096, &v) && v == 3);
  static const char *const bad[] = {"2.5", "2x", "", " 2", "2 ", "0", "4097",
                                    "-1", "0x10", "1e3", "abc", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    v = -7;
    cr_expect(!tt__settings_parse_int(bad[i], 1, 4096, &v), "\"%s\" read as %ld",
              bad[i], v);
    cr_expect_eq(v, -7, "\"%s\" changed the value", bad[i]);
  }
  cr_expect(!tt__settings_parse_int(NULL, 1, 4096, &v));
}

Test(settings, a_refused_value_reads_as_the_default) {
  setenv("TEAMS_NUM_THREADS", "2.5", 1);
  setenv("TEAMS_SPIN_US", "50", 1);
  setenv("TEAMS_IDLE", "sentinell", 1);
  setenv("TEAMS_RUN", "serial", 1);
  setenv("TEAMS_TREE_K", "65", 1);
  unsetenv("TEAMS_PIN");
  tt__settings s;
  tt__settings_read(&s);
  cr_expect(!s.set[TT__SET_NUM_THREADS] && s.value[TT__SET_NUM_THREADS] == -1,
            "TEAMS_NUM_THREADS=2.5 read as %ld", s.value[TT__SET_NUM_THREADS]);
  cr_expect(s.set[TT__SET_SPIN_US] && s.value[TT__SET_SPIN_US] == 50);
  cr_expect(!s.set[TT__SET_IDLE] && s.value[TT__SET_IDLE] == 0);
  cr_expect(s.set[TT__SET_RUN] && s.value[TT__SET_RUN] == 2);
  cr_expect(!s.set[TT__SET_TREE_K] && s.value[TT__SET_TREE_K] == TT__TREE_K_DEFAULT);
  cr_expect(!s.set[TT__SET_PIN] && s.value[TT__SET_PIN] == 0);
  cr_expect_eq(tt__setting(TT__SET_RUN), 2);
  setenv("TEAMS_POCL_TOPOLOGY", "pack:2 pu:2", 1);
  cr_expect_str_eq(tt__setting_text(TT__SET_POCL_TOPOLOGY), "pack:2 pu:2");
  setenv("TEAMS_POCL_TOPOLOGY", "", 1);
  cr_expect_null(tt__setting_text(TT__SET_POCL_TOPOLOGY));
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

/* Read at every team start and by teams-info, a refused value says so
 * once; a different refused value says so again. */
Test(settings, a_refused_value_is_reported_once) {
  FILE *tmp = tmpfile();
  cr_assert_not_null(tmp);
  fflush(stderr);
  int saved = dup(2);
  cr_assert(saved >= 0 && dup2(fileno(tmp), 2) == 2);
  tt__settings s;
  setenv("TEAMS_SPIN_US", "fast", 1);
  tt__settings_read(&s);
  tt__settings_read(&s);
  cr_expect_eq(tt__setting(TT__SET_SPIN_US), s.value[TT__SET_SPIN_US]);
  setenv("TEAMS_SPIN_US", "faster", 1);
  tt__settings_read(&s);
  tt__settings_read(&s);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char buf[4096];
  rewind(tmp);
  size_t len = fread(buf, 1, sizeof buf - 1, tmp);
  buf[len] = 0;
  fclose(tmp);
  cr_expect_eq(count(buf, "ignoring TEAMS_SPIN_US=fast ("), 1, "stderr: %s", buf);
  cr_expect_eq(count(buf, "ignoring TEAMS_SPIN_US=faster ("), 1, "stderr: %s", buf);
  cr_expect(!s.set[TT__SET_SPIN_US]);
}

/* The team uses what the table read: TEAMS_NUM_THREADS=2.5 is refused and
 * the team keeps its default size; 3 gives 3. */
Test(settings, the_team_starts_from_the_table) {
  unsetenv("TEAMS_NUM_THREADS");
  size_t dflt = tt_team_size();
  cr_assert_eq(tt_team_shutdown(), 0);
  setenv("TEAMS_NUM_THREADS", "2.5", 1);
  cr_expect_eq(tt_team_size(), dflt);
  cr_assert_eq(tt_team_shutdown(), 0);
  setenv("TEAMS_NUM_THREADS", "3", 1);
  cr_expect_eq(tt_team_size(), 3);
}
