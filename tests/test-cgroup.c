/* Tests of the cgroup's CPU limits (launcher/cgroup.c): the parsers (cgroup
 * v2 cpu.max, v1 CFS files, /proc/self/cgroup, mountinfo) on synthetic text,
 * and the quota walk over nested directories, on a tree in /tmp.  What the
 * limits do to the team's size, end to end, is tests/test-cpuset.c's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "teams/errors.h"

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s: %s", path, strerror(errno));
  fputs(text, f);
  cr_assert_eq(fclose(f), 0);
}

/* ---- cgroup files ------------------------------------------------------------ */

Test(cgroup, cgroup_v2_cpu_max_parses) {
  double c = -1;
  cr_expect_eq(tt__cgroup_max_parse("max 100000\n", &c), 0);
  cr_expect_eq(c, 0, "max: no limit");
  cr_expect_eq(tt__cgroup_max_parse("150000 100000\n", &c), 0);
  cr_expect_float_eq(c, 1.5, 1e-12);
  cr_expect_eq(tt__cgroup_max_parse("50000 100000", &c), 0);
  cr_expect_float_eq(c, 0.5, 1e-12);
  cr_expect_eq(tt__cgroup_max_parse("400000 50000\n", &c), 0);
  cr_expect_float_eq(c, 8.0, 1e-12);
  const char *bad[] = {"", "max", "150000", "x 100000", "1 0", "-5 100000",
                       "100 100000 7", "max\t100000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cr_expect_eq(tt__cgroup_max_parse(bad[i], &c), TT_EINVAL, "\"%s\"", bad[i]);
    cr_expect_eq(c, 0);
  }
}

Test(cgroup, cgroup_v1_cfs_files_parse) {
  double c = -1;
  cr_expect_eq(tt__cgroup_cfs_parse("-1\n", "100000\n", &c), 0);
  cr_expect_eq(c, 0);
  cr_expect_eq(tt__cgroup_cfs_parse("150000\n", "100000\n", &c), 0);
  cr_expect_float_eq(c, 1.5, 1e-12);
  cr_expect_eq(tt__cgroup_cfs_parse("0", "100000", &c), TT_EINVAL);
  cr_expect_eq(tt__cgroup_cfs_parse("150000", "0", &c), TT_EINVAL);
  cr_expect_eq(tt__cgroup_cfs_parse("abc", "100000", &c), TT_EINVAL);
}

Test(cgroup, proc_self_cgroup_names_the_path) {
  char p[256];
  const char *v2 = "0::/user.slice/user-0.slice/session-1.scope\n";
  cr_expect_eq(tt__cgroup_path_parse(v2, NULL, p, sizeof p), 0);
  cr_expect_str_eq(p, "/user.slice/user-0.slice/session-1.scope");
  cr_expect_eq(tt__cgroup_path_parse(v2, "cpu", p, sizeof p), TT_EINVAL);
  const char *hybrid = "12:cpuset:/docker/abc\n"
                       "4:cpu,cpuacct:/docker/abc/inner\n"
                       "1:name=systemd:/init.scope\n"
                       "0::/system.slice/docker.service\n";
  cr_expect_eq(tt__cgroup_path_parse(hybrid, "cpu", p, sizeof p), 0);
  cr_expect_str_eq(p, "/docker/abc/inner", "cpu, not cpuset");
  cr_expect_eq(tt__cgroup_path_parse(hybrid, "cpuset", p, sizeof p), 0);
  cr_expect_str_eq(p, "/docker/abc");
  cr_expect_eq(tt__cgroup_path_parse(hybrid, NULL, p, sizeof p), 0);
  cr_expect_str_eq(p, "/system.slice/docker.service");
  cr_expect_eq(tt__cgroup_path_parse("garbage", NULL, p, sizeof p), TT_EINVAL);
}

Test(cgroup, mountinfo_finds_the_hierarchy) {
  const char *mi =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - "
      "cgroup cgroup rw,cpu,cpuacct\n"
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
      "41 31 0:38 / /sys/fs/cgroup/my\\040unified rw,relatime - cgroup2 cgroup2 rw\n";
  char mnt[256], root[256];
  cr_expect_eq(tt__mountinfo_cgroup(mi, "cpu", mnt, sizeof mnt, root, sizeof root), 0);
  cr_expect_str_eq(mnt, "/sys/fs/cgroup/cpu,cpuacct");
  cr_expect_str_eq(root, "/docker/abc");
  cr_expect_eq(tt__mountinfo_cgroup(mi, "cpuset", mnt, sizeof mnt, root, sizeof root), 0);
  cr_expect_str_eq(mnt, "/sys/fs/cgroup/cpuset");
  cr_expect_eq(tt__mountinfo_cgroup(mi, NULL, mnt, sizeof mnt, root, sizeof root), 0);
  cr_expect_str_eq(mnt, "/sys/fs/cgroup/my unified", "\\040 is a blank");
  cr_expect_str_eq(root, "/");
  cr_expect_eq(tt__mountinfo_cgroup(mi, "memory", mnt, sizeof mnt, root, sizeof root),
               TT_EINVAL);
}

/* mnt/a/b/c with quota files at chosen levels; parent/ above mnt holds a
 * tighter one that must not be read. */
static char tree[128];

static void make_tree(bool v1, const char *const q[4]) {
  snprintf(tree, sizeof tree, "/tmp/teams-cgroup-XXXXXX");
  cr_assert_not_null(mkdtemp(tree));
  const char *dirs[] = {"", "/mnt", "/mnt/a", "/mnt/a/b", "/mnt/a/b/c"};
  char path[512];
  for (size_t i = 1; i < 5; i++) {
    snprintf(path, sizeof path, "%s%s", tree, dirs[i]);
    cr_assert_eq(mkdir(path, 0700), 0);
  }
  /* the level above the mount point: 0.25 CPUs, never read */
  snprintf(path, sizeof path, "%s/%s", tree, v1 ? "cpu.cfs_quota_us" : "cpu.max");
  write_file(path, v1 ? "25000\n" : "25000 100000\n");
  if (v1) {
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", tree);
    write_file(path, "100000\n");
  }
  for (size_t i = 0; i < 4; i++) {
    if (!q[i])
      continue;
    if (v1) {
      snprintf(path, sizeof path, "%s%s/cpu.cfs_quota_us", tree, dirs[i + 1]);
      write_file(path, q[i]);
      snprintf(path, sizeof path, "%s%s/cpu.cfs_period_us", tree, dirs[i + 1]);
      write_file(path, "100000\n");
    } else {
      snprintf(path, sizeof path, "%s%s/cpu.max", tree, dirs[i + 1]);
      write_file(path, q[i]);
    }
  }
}

static void remove_tree(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
  cr_expect_eq(system(cmd), 0);
}

static double quota_in_tree(bool v1, const char *rel) {
  char mnt[256];
  snprintf(mnt, sizeof mnt, "%s/mnt", tree);
  double c = -1;
  cr_expect_eq(tt__cgroup_quota_at(mnt, rel, v1, &c), 0);
  return c;
}

Test(cgroup, cgroup_quota_tightest_of_the_ancestors) {
  /* v2: mnt max, a 3 CPUs, b max, c 2.5 CPUs */
  const char *v2[4] = {"max 100000\n", "300000 100000\n", "max 100000\n",
                       "250000 100000\n"};
  make_tree(false, v2);
  cr_expect_float_eq(quota_in_tree(false, "/a/b/c"), 2.5, 1e-12);
  cr_expect_float_eq(quota_in_tree(false, "/a/b/c/"), 2.5, 1e-12);
  cr_expect_float_eq(quota_in_tree(false, "/a/b"), 3.0, 1e-12, "b inherits a's");
  cr_expect_eq(quota_in_tree(false, "/"), 0, "mnt: no limit, the parent unread");
  cr_expect_eq(quota_in_tree(false, ""), 0);
  cr_expect_float_eq(quota_in_tree(false, "/a/b/c/missing"), 2.5, 1e-12,
                     "a missing directory sets no limit, its ancestors do");
  remove_tree();

  /* v2: the ancestor is tighter than the leaf */
  const char *v2b[4] = {NULL, "150000 100000\n", NULL, "400000 100000\n"};
  make_tree(false, v2b);
  cr_expect_float_eq(quota_in_tree(false, "/a/b/c"), 1.5, 1e-12);
  remove_tree();

  /* v1: the same walk over the CFS files; garbage in one level is ignored */
  const char *v1[4] = {"-1\n", "50000\n", "junk\n", "-1\n"};
  make_tree(true, v1);
  cr_expect_float_eq(quota_in_tree(true, "/a/b/c"), 0.5, 1e-12);
  cr_expect_eq(quota_in_tree(true, "/"), 0);
  remove_tree();
}
