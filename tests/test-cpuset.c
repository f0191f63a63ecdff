/* Tests of which CPUs the team uses and how many participants it has
 * (launcher/cpuset.c; its masks and the cgroup's files have their own
 * tests, test-cpumask.c and test-cgroup.c):
 *   - the MPI launcher variables and the balanced split of a CPU set;
 *   - the rules (tt__cpuset_decide) on synthetic inputs;
 *   - end to end, in child processes: a mask narrowed before the team starts,
 *     MPI variables on an unbound and on a bound rank, a cgroup CPU quota
 *     (where a cgroup with the cpu controller can be created), and programs
 *     built with gcc -fopenmp (libgomp) and clang -fopenmp=libomp run with
 *     OMP_PROC_BIND=close OMP_PLACES=threads (tests/cpuset-probe).
 * Every test asserts both the size and the CPU list.  Nothing here measures
 * time. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "cpuset.h"
#include "teams/team.h"

extern char **environ;

/* ---- helpers -------------------------------------------------------------- */

static tt__cpumask mask_of(const char *list) {
  tt__cpumask m;
  cr_assert_geq(tt__cpulist_parse(list, &m), 0, "bad list in test: %s", list);
  return m;
}

static const char *list_of(const tt__cpumask *m) {
  static char buf[8][256];
  static int k;
  char *b = buf[k++ % 8];
  tt__cpulist_format(m, b, 256);
  return b;
}

/* What a process that nothing narrowed gets: this test process is not
 * linked with OpenMP, so its team's set is its mask (or an MPI share, or a
 * quota, when it runs under those: the tests that need a plain process skip
 * then). */
static tt__cpuset plain(void) {
  tt__cpuset_in in;
  tt__cgroup_src src;
  tt__cpuset cs;
  tt__cpuset_read(&in, &src);
  tt__cpuset_decide(&in, &cs);
  return cs;
}

/* ---- MPI ------------------------------------------------------------------------- */

static const char *table_get(const char *name, void *ctx) {
  for (const char *const *kv = ctx; *kv; kv += 2)
    if (!strcmp(kv[0], name))
      return kv[1];
  return NULL;
}

static int mpi(const char *const *env, int *r, int *k, const char **from) {
  return tt__mpi_local(table_get, (void *)env, r, k, from);
}

Test(cpuset, mpi_launcher_variables) {
  int r, k;
  const char *from;
  const char *ompi[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "1",
                        "OMPI_COMM_WORLD_LOCAL_SIZE", "4",
                        "SLURM_LOCALID", "0", "SLURM_NTASKS_PER_NODE", "2", NULL};
  cr_expect_eq(mpi(ompi, &r, &k, &from), 1);
  cr_expect(r == 1 && k == 4);
  cr_expect_str_eq(from, "OMPI_COMM_WORLD_LOCAL_RANK", "Open MPI's first");
  const char *mpich[] = {"MPI_LOCALRANKID", "2", "MPI_LOCALNRANKS", "3", NULL};
  cr_expect_eq(mpi(mpich, &r, &k, &from), 1);
  cr_expect(r == 2 && k == 3);
  cr_expect_str_eq(from, "MPI_LOCALRANKID");
  const char *slurm[] = {"SLURM_LOCALID", "1", "SLURM_NTASKS_PER_NODE", "2", NULL};
  cr_expect_eq(mpi(slurm, &r, &k, &from), 1);
  cr_expect(r == 1 && k == 2);
  cr_expect_str_eq(from, "SLURM_LOCALID");
  const char *slurm_tpn[] = {"SLURM_LOCALID", "2", "SLURM_TASKS_PER_NODE",
                             "3(x2),1", NULL};
  cr_expect_eq(mpi(slurm_tpn, &r, &k, &from), 1);
  cr_expect(r == 2 && k == 3, "first entry of SLURM_TASKS_PER_NODE: %d of %d", r, k);
  const char *slurm_one[] = {"SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "5",
                             NULL};
  cr_expect_eq(mpi(slurm_one, &r, &k, &from), 1);
  cr_expect(r == 0 && k == 5);
  /* not usable: each case finds nothing */
  const char *none[][7] = {
      {NULL},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "4", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", NULL},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "x", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", NULL},
      {"OMPI_COMM_WORLD_LOCAL_RANK", "0", NULL},
      {"MPI_LOCALRANKID", "0", "MPI_LOCALNRANKS", "0", NULL},
      {"SLURM_LOCALID", "0", "SLURM_TASKS_PER_NODE", "x3", NULL},
      {"SLURM_NTASKS_PER_NODE", "2", NULL},
  };
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
    cr_expect_eq(mpi(none[i], &r, &k, &from), 0, "case %zu", i);
    cr_expect(k == 0 && from == NULL, "case %zu", i);
  }
  /* a broken Open MPI pair falls through to the next launcher's */
  const char *fall[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "9",
                        "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
                        "MPI_LOCALRANKID", "1", "MPI_LOCALNRANKS", "2", NULL};
  cr_expect_eq(mpi(fall, &r, &k, &from), 1);
  cr_expect_str_eq(from, "MPI_LOCALRANKID");
}

Test(cpuset, balanced_contiguous_shares) {
  tt__cpumask out;
  tt__cpumask two = mask_of("0-1");
  tt__cpuset_share(&two, 0, 2, &out);
  cr_expect_str_eq(list_of(&out), "0");
  tt__cpuset_share(&two, 1, 2, &out);
  cr_expect_str_eq(list_of(&out), "1");
  tt__cpumask ten = mask_of("0-9");
  const char *want[] = {"0-3", "4-6", "7-9"};
  for (int r = 0; r < 3; r++) {
    tt__cpuset_share(&ten, r, 3, &out);
    cr_expect_str_eq(list_of(&out), want[r], "rank %d of 3", r);
  }
  tt__cpumask holes = mask_of("0,2,4,6,8");
  tt__cpuset_share(&holes, 0, 2, &out);
  cr_expect_str_eq(list_of(&out), "0,2,4", "shares count CPUs, not numbers");
  tt__cpuset_share(&holes, 1, 2, &out);
  cr_expect_str_eq(list_of(&out), "6,8");
  /* more ranks than CPUs: one CPU each, r mod n */
  tt__cpuset_share(&two, 4, 5, &out);
  cr_expect_str_eq(list_of(&out), "0");
  tt__cpuset_share(&two, 3, 5, &out);
  cr_expect_str_eq(list_of(&out), "1");
  /* in place */
  out = ten;
  tt__cpuset_share(&out, 2, 3, &out);
  cr_expect_str_eq(list_of(&out), "7-9");
  /* every k <= n: shares are disjoint, cover the set, differ by at most one */
  tt__cpumask big = mask_of("0-12,20,40-47");
  size_t n = tt__mask_count(&big);
  for (int k = 1; k <= (int)n; k++) {
    tt__cpumask all;
    tt__mask_zero(&all);
    size_t lo = n, hi = 0;
    for (int r = 0; r < k; r++) {
      tt__cpuset_share(&big, r, k, &out);
      tt__cpumask both;
      tt__mask_and(&both, &all, &out);
      cr_expect_eq(tt__mask_count(&both), 0, "k %d: rank %d overlaps", k, r);
      for (size_t w = 0; w < sizeof all.bits / sizeof all.bits[0]; w++)
        all.bits[w] |= out.bits[w];
      size_t c = tt__mask_count(&out);
      lo = c < lo ? c : lo;
      hi = c > hi ? c : hi;
    }
    cr_expect(tt__mask_equal(&all, &big), "k %d: shares cover the set", k);
    cr_expect_leq(hi - lo, 1, "k %d: balanced", k);
  }
}

/* ---- the rules ----------------------------------------------------------------------- */

static tt__cpuset_in input(const char *caller, const char *allowed) {
  tt__cpuset_in in;
  memset(&in, 0, sizeof in);
  in.caller = mask_of(caller);
  in.allowed = mask_of(allowed);
  in.allowed_known = true;
  return in;
}

static void expect(const tt__cpuset_in *in, const char *cpus, size_t size,
                   const char *cpus_from, const char *size_from) {
  tt__cpuset cs;
  tt__cpuset_decide(in, &cs);
  cr_expect_str_eq(list_of(&cs.cpus), cpus);
  cr_expect_eq(cs.size, size, "size %zu, expected %zu (%s)", cs.size, size, cpus);
  cr_expect_eq(cs.ncpus, tt__mask_count(&cs.cpus));
  cr_expect_str_eq(cs.cpus_from, cpus_from);
  cr_expect_str_eq(cs.size_from, size_from);
}

Test(cpuset, rules_on_synthetic_inputs) {
  /* nothing special: the caller's mask */
  tt__cpuset_in in = input("0-7", "0-7");
  expect(&in, "0-7", 8, "affinity mask", "cpus");
  /* libgomp pinned the caller to its first place: the places' union */
  in = input("0", "0-7");
  in.omp_bound = true;
  in.omp = mask_of("0-7");
  expect(&in, "0-7", 8, "openmp places", "cpus");
  /* places reaching past what the process may use are cut to it */
  in = input("2", "2-5");
  in.omp_bound = true;
  in.omp = mask_of("0-7");
  expect(&in, "2-5", 4, "openmp places", "cpus");
  /* a mask narrowed by taskset or a launcher, no OpenMP: kept */
  in = input("1", "0-7");
  expect(&in, "1", 1, "affinity mask", "cpus");
  /* unbound MPI ranks: each its share */
  in = input("0-7", "0-7");
  in.mpi_rank = 1, in.mpi_size = 2, in.mpi_from = "OMPI_COMM_WORLD_LOCAL_RANK";
  expect(&in, "4-7", 4, "mpi local rank 1 of 2, OMPI_COMM_WORLD_LOCAL_RANK", "cpus");
  /* ... also when OpenMP binds inside the rank */
  in.caller = mask_of("0");
  in.omp_bound = true;
  in.omp = mask_of("0-7");
  expect(&in, "4-7", 4, "mpi local rank 1 of 2, OMPI_COMM_WORLD_LOCAL_RANK", "cpus");
  /* a rank its launcher bound keeps its mask */
  in = input("0-3", "0-7");
  in.mpi_rank = 1, in.mpi_size = 2, in.mpi_from = "SLURM_LOCALID";
  expect(&in, "0-3", 4, "affinity mask", "cpus");
  /* what the process may use unknown: no split */
  in = input("0-7", "0-7");
  in.allowed_known = false;
  in.mpi_rank = 1, in.mpi_size = 2, in.mpi_from = "SLURM_LOCALID";
  expect(&in, "0-7", 8, "affinity mask", "cpus");
  /* a quota rounds up, at least 1, never raises the size */
  in = input("0-3", "0-3");
  in.quota = 1.5;
  expect(&in, "0-3", 2, "affinity mask", "cgroup quota 1.5 cpus");
  in.quota = 0.3;
  expect(&in, "0-3", 1, "affinity mask", "cgroup quota 0.3 cpus");
  in.quota = 3.0;
  expect(&in, "0-3", 3, "affinity mask", "cgroup quota 3 cpus");
  in.quota = 8;
  expect(&in, "0-3", 4, "affinity mask", "cpus");
  /* OpenMP binds but its places are outside what is allowed: the mask */
  in = input("3", "2-3");
  in.omp_bound = true;
  in.omp = mask_of("0-1");
  expect(&in, "3", 1, "affinity mask", "cpus");
}

/* ---- end to end, in child processes --------------------------------------------------- */

typedef struct e2e {
  const char *cpus;  /* expected list */
  size_t size;       /* expected team size */
  const char *from;  /* expected cpus_from prefix */
} e2e;

static void check_team(const e2e *want) {
  CHILD_CHECK(tt_team_start() == 0, "team did not start");
  tt__cpuset cs;
  CHILD_CHECK(tt__cpuset_last(&cs), "no cpuset kept");
  CHILD_CHECK(!strcmp(list_of(&cs.cpus), want->cpus), "cpus %s, expected %s (%s)",
              list_of(&cs.cpus), want->cpus, cs.cpus_from);
  CHILD_CHECK(!strncmp(cs.cpus_from, want->from, strlen(want->from)),
              "cpus from \"%s\", expected \"%s\"", cs.cpus_from, want->from);
  CHILD_CHECK(tt_team_size() == want->size, "team of %zu, expected %zu (%s)",
              tt_team_size(), want->size, cs.size_from);
  tt_team_shutdown();
}

static void narrowed_child(void *arg) {
  const e2e *want = arg;
  cpu_set_t one;
  CPU_ZERO(&one);
  tt__cpumask m = mask_of(want->cpus);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (tt__mask_isset(&m, c))
      CPU_SET(c, &one);
  CHILD_CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity: %s",
              strerror(errno));
  check_team(want);
}

/* The highest CPU of the plain set, as a one-CPU list. */
static const char *last_cpu_of(const tt__cpuset *cs, char *buf, size_t len) {
  int last = -1;
  for (int c = 0; c < TT__MASK_CPUS; c++)
    if (tt__mask_isset(&cs->cpus, c))
      last = c;
  snprintf(buf, len, "%d", last);
  return buf;
}

Test(cpuset, a_mask_narrowed_before_the_team_starts_is_used_exactly) {
  tt__cpuset cs = plain();
  if (cs.ncpus < 2)
    cr_skip_test("needs 2 CPUs in the process mask (has %zu)", cs.ncpus);
  unsetenv("TEAMS_NUM_THREADS");
  char one[16];
  e2e want = {last_cpu_of(&cs, one, sizeof one), 1, "affinity mask"};
  run_child(narrowed_child, &want, "narrowed mask");
}

typedef struct mpi_case {
  const char *const *env;
  const char *narrow; /* mask set before the team starts, or NULL */
  e2e want;
} mpi_case;

static void mpi_child(void *arg) {
  const mpi_case *mc = arg;
  for (const char *const *kv = mc->env; *kv; kv += 2)
    setenv(kv[0], kv[1], 1);
  if (mc->narrow) {
    e2e n = {mc->narrow, 0, ""};
    cpu_set_t s;
    CPU_ZERO(&s);
    tt__cpumask m = mask_of(n.cpus);
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (tt__mask_isset(&m, c))
        CPU_SET(c, &s);
    CHILD_CHECK(sched_setaffinity(0, sizeof s, &s) == 0, "sched_setaffinity");
  }
  check_team(&mc->want);
}

Test(cpuset, mpi_ranks_share_an_unbound_node_and_keep_a_bound_mask) {
  tt__cpuset cs = plain();
  if (strcmp(cs.cpus_from, "affinity mask") || strcmp(cs.size_from, "cpus"))
    cr_skip_test("this process is already narrowed (%s, %s)", cs.cpus_from,
                 cs.size_from);
  if (cs.ncpus < 2)
    cr_skip_test("needs 2 CPUs in the process mask (has %zu)", cs.ncpus);
  unsetenv("TEAMS_NUM_THREADS");
  /* the expected shares, from the pure function on this machine's set */
  tt__cpumask s0, s1;
  tt__cpuset_share(&cs.cpus, 0, 2, &s0);
  tt__cpuset_share(&cs.cpus, 1, 2, &s1);
  char l0[256], l1[256];
  snprintf(l0, sizeof l0, "%s", list_of(&s0));
  snprintf(l1, sizeof l1, "%s", list_of(&s1));
  const char *ompi1[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "1",
                         "OMPI_COMM_WORLD_LOCAL_SIZE", "2", NULL};
  const char *mpich0[] = {"MPI_LOCALRANKID", "0", "MPI_LOCALNRANKS", "2", NULL};
  const char *slurm1[] = {"SLURM_LOCALID", "1", "SLURM_TASKS_PER_NODE", "2(x4)",
                          NULL};
  mpi_case cases[] = {
      {ompi1, NULL, {l1, tt__mask_count(&s1), "mpi local rank 1 of 2, OMPI"}},
      {mpich0, NULL, {l0, tt__mask_count(&s0), "mpi local rank 0 of 2, MPI_LOCALRANKID"}},
      {slurm1, NULL, {l1, tt__mask_count(&s1), "mpi local rank 1 of 2, SLURM_LOCALID"}},
      /* bound by its launcher to rank 0's share, rank 1 keeps it */
      {ompi1, l0, {l0, tt__mask_count(&s0), "affinity mask"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_child(mpi_child, &cases[i], cases[i].env[0]);
}

/* ---- cgroup quota, end to end ------------------------------------------------------------ */

/* A directory where a cgroup with the cpu controller can be made: the
 * process's own cgroup in the v1 cpu hierarchy, or in v2 when its
 * subtree_control enables cpu.  Empty (and why) when there is none. */
static bool quota_parent(char *dir, size_t len, bool *v1, char *why, size_t wlen) {
  FILE *f = fopen("/proc/self/cgroup", "r");
  char cg[4096] = "", mi[1 << 16] = "", path[1024], mnt[1024], root[1024];
  if (f) {
    cg[fread(cg, 1, sizeof cg - 1, f)] = 0;
    fclose(f);
  }
  f = fopen("/proc/self/mountinfo", "r");
  if (f) {
    mi[fread(mi, 1, sizeof mi - 1, f)] = 0;
    fclose(f);
  }
  for (int pass = 0; pass < 2; pass++) {
    const char *ctl = pass == 0 ? "cpu" : NULL;
    if (tt__cgroup_path_parse(cg, ctl, path, sizeof path) < 0 ||
        tt__mountinfo_cgroup(mi, ctl, mnt, sizeof mnt, root, sizeof root) < 0)
      continue;
    const char *rel = path;
    if (strcmp(root, "/") && !strncmp(path, root, strlen(root)))
      rel += strlen(root);
    if ((size_t)snprintf(dir, len, "%s%s", mnt, rel) >= len)
      continue;
    if (ctl) {
      *v1 = true;
      return true;
    }
    char sc[512], buf[256] = "";
    snprintf(sc, sizeof sc, "%s/cgroup.subtree_control", dir);
    if ((f = fopen(sc, "r"))) {
      buf[fread(buf, 1, sizeof buf - 1, f)] = 0;
      fclose(f);
    }
    for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
      if (!strcmp(t, "cpu")) {
        *v1 = false;
        return true;
      }
    snprintf(why, wlen, "the cgroup v2 directory %s does not enable the cpu "
             "controller for its children (cgroup.subtree_control: %s)", dir,
             buf[0] ? buf : "empty");
    return false;
  }
  if (!why[0])
    snprintf(why, wlen, "no cgroup hierarchy with the cpu controller");
  return false;
}

static bool try_write(const char *path, const char *text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0)
    return false;
  bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
  return close(fd) == 0 && ok;
}

/* A cgroup of its own for a quota test: an outer one that holds the quota
 * (quota_dir) and an inner one without one that the child joins
 * (quota_leaf): the tightest ancestor decides. */
static char quota_dir[1100], quota_leaf[1200];
static bool quota_v1;
#define CANNOT_JOIN 77 /* the child's exit status when it cannot move itself */

/* The outer cgroup's quota: v2 as cpu.max has it, v1 in cfs_quota_us (of a
 * 100000 us period). */
static bool set_quota(const char *v2, const char *v1) {
  char path[1300];
  if (quota_v1) {
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", quota_dir);
    bool ok = try_write(path, "100000");
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", quota_dir);
    return ok && try_write(path, v1);
  }
  snprintf(path, sizeof path, "%s/cpu.max", quota_dir);
  return try_write(path, v2);
}

/* Makes both cgroups, the outer with the given quota; skips the test where
 * this machine does not let it. */
static void quota_make(const char *v2, const char *v1) {
  char parent[1024], why[600] = "";
  if (!quota_parent(parent, sizeof parent, &quota_v1, why, sizeof why))
    cr_skip_test("cannot make a cgroup with a CPU quota here: %s", why);
  snprintf(quota_dir, sizeof quota_dir, "%s/teams-test-%d", parent,
           (int)getpid());
  snprintf(quota_leaf, sizeof quota_leaf, "%s/inner", quota_dir);
  if (mkdir(quota_dir, 0755) != 0)
    cr_skip_test("cannot make a cgroup in %s: %s", parent, strerror(errno));
  if (!quota_v1) {
    char path[1300];
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", quota_dir);
    try_write(path, "+cpu"); /* not needed for the quota to apply */
  }
  if (!set_quota(v2, v1) || mkdir(quota_leaf, 0755) != 0) {
    int err = errno;
    rmdir(quota_leaf);
    rmdir(quota_dir);
    cr_skip_test("cannot set a quota in %s: %s", quota_dir, strerror(err));
  }
}

/* In the child: move into the inner cgroup, or end with CANNOT_JOIN. */
static void quota_join(void) {
  char path[1300], pid[32];
  snprintf(path, sizeof path, "%s/cgroup.procs", quota_leaf);
  snprintf(pid, sizeof pid, "%d\n", (int)getpid());
  if (!try_write(path, pid)) {
    if (write(child_fd, strerror(errno), strlen(strerror(errno))) < 0)
      _exit(2);
    _exit(CANNOT_JOIN);
  }
}

/* Runs the child, removes both cgroups (the child is reaped: they are
 * empty, pass or fail) and asserts it passed; its message into msg. */
static void quota_run(void (*child)(void *), void *arg, char *msg, size_t cap) {
  int status = child_status(child, arg, msg, cap);
  cr_expect_eq(rmdir(quota_leaf), 0, "rmdir %s: %s", quota_leaf, strerror(errno));
  cr_expect_eq(rmdir(quota_dir), 0, "rmdir %s: %s", quota_dir, strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == CANNOT_JOIN)
    cr_skip_test("cannot move a process into %s: %s", quota_leaf, msg);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "%s: child ended with status %d: %s",
            quota_v1 ? "cgroup v1 quota" : "cgroup v2 quota", status, msg);
}

static void quota_child(void *arg) {
  quota_join();
  check_team(arg);
  tt__cpuset cs;
  tt__cpuset_last(&cs);
  CHILD_CHECK(!strcmp(cs.size_from, "cgroup quota 0.5 cpus"),
              "size from \"%s\"", cs.size_from);
}

Test(cpuset, cgroup_quota_caps_the_size) {
  tt__cpuset cs = plain();
  if (strcmp(cs.size_from, "cpus"))
    cr_skip_test("this process already has a quota (%s)", cs.size_from);
  if (cs.ncpus < 2)
    cr_skip_test("needs 2 CPUs to see a quota of 0.5 lower the size (has %zu)",
                 cs.ncpus);
  unsetenv("TEAMS_NUM_THREADS");
  quota_make("50000 100000", "50000");
  char one[16];
  snprintf(one, sizeof one, "%s", list_of(&cs.cpus));
  e2e want = {one, 1, "affinity mask"};
  char msg[401];
  quota_run(quota_child, &want, msg, sizeof msg);
}

/* ---- the team follows a change while it runs (lifecycle.c, "Sizing") ---------------------- */

static void count_nothing(void *ctx, size_t c) {
  (void)ctx;
  (void)c;
}

/* Seconds until tt_team_size() is `want` (launches run meanwhile, as a
 * program's would), or -1 after 5 s.  The monitor looks every 0.5 s. */
static double seconds_until_size(size_t want) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (;;) {
    if (tt_team_size() == want)
      break;
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (b.tv_sec - a.tv_sec > 5)
      return -1;
    tt_foreach_chunk(count_nothing, NULL, 4, 2);
    usleep(1000);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

/* The thread that started the team narrows its mask to one CPU (as
 * `taskset -p` does to a process's first thread): the team shrinks to one,
 * then grows back when the mask is given back. */
Test(cpuset, team_follows_a_changed_mask, .timeout = 60) {
  tt__cpuset cs = plain();
  if (cs.size < 2 || strcmp(cs.size_from, "cpus"))
    cr_skip_test("needs 2 CPUs and no quota (has %zu, %s)", cs.size, cs.size_from);
  unsetenv("TEAMS_NUM_THREADS");
  unsetenv("TEAMS_PIN");
  cr_assert_eq(tt_team_shutdown(), 0);
  cr_assert_eq(tt_team_size(), cs.size);
  cpu_set_t all, one;
  cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &all))
    cpu++;
  CPU_SET(cpu, &one);
  cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
  double down = seconds_until_size(1);
  cr_assert_eq(sched_setaffinity(0, sizeof all, &all), 0);
  cr_assert(down >= 0, "the team kept %zu participants on one CPU", tt_team_size());
  double up = seconds_until_size(cs.size);
  cr_assert(up >= 0, "the team stayed at %zu after the mask came back", tt_team_size());
  cr_log_info("followed the mask in %.2f s, back in %.2f s\n", down, up);
}

/* The cgroup's quota goes from none to half a CPU while the team runs: the
 * team shrinks to one participant, and grows back when the quota goes. */
static void changed_quota_child(void *arg) {
  size_t n = *(size_t *)arg;
  quota_join();
  CHILD_CHECK(tt_team_size() == n, "the team has %zu, not %zu", tt_team_size(), n);
  CHILD_CHECK(set_quota("50000 100000", "50000"), "cannot set the quota");
  double down = seconds_until_size(1);
  CHILD_CHECK(down >= 0, "a quota of 0.5 CPUs left the team at %zu", tt_team_size());
  CHILD_CHECK(down < 2.0, "the team followed the quota after %.2f s", down);
  CHILD_CHECK(set_quota("max 100000", "-1"), "cannot lift the quota");
  double up = seconds_until_size(n);
  CHILD_CHECK(up >= 0, "the lifted quota left the team at %zu", tt_team_size());
  char msg[96];
  int len = snprintf(msg, sizeof msg, "followed in %.2f s, back in %.2f s", down, up);
  if (write(child_fd, msg, (size_t)len) < 0)
    _exit(2);
}

Test(cpuset, team_follows_a_changed_quota, .timeout = 60) {
  tt__cpuset cs = plain();
  if (strcmp(cs.size_from, "cpus") || cs.ncpus < 2)
    cr_skip_test("needs 2 CPUs and no quota (has %zu, %s)", cs.ncpus, cs.size_from);
  unsetenv("TEAMS_NUM_THREADS");
  unsetenv("TEAMS_PIN");
  quota_make("max 100000", "-1");
  char msg[401];
  size_t n = cs.size;
  quota_run(changed_quota_child, &n, msg, sizeof msg);
  cr_log_info("%s\n", msg);
}

/* ---- OpenMP-bound programs ----------------------------------------------------------------- */

/* Runs the probe with extra environment variables (a NULL-ended list of
 * name, value); its stdout and stderr together into out.  Returns its exit
 * status. */
typedef struct probe_run {
  const char *probe, *arg;
  const char *const *env;
} probe_run;

static void exec_probe(void *p) {
  const probe_run *r = p;
  dup2(child_fd, 1);
  dup2(child_fd, 2);
  unsetenv("TEAMS_NUM_THREADS");
  unsetenv("TEAMS_PIN");
  for (const char *const *kv = r->env; *kv; kv += 2)
    setenv(kv[0], kv[1], 1);
  char *argv[] = {(char *)r->probe, (char *)r->arg, NULL};
  execve(r->probe, argv, environ);
  _exit(127);
}

static int run_probe(const char *probe, const char *arg, const char *const *env,
                     char *out, size_t cap) {
  probe_run r = {probe, arg, env};
  return child_status(exec_probe, &r, out, cap);
}

static void check_probe(const char *probe, const char *arg, bool pin) {
  tt__cpuset cs = plain();
  if (cs.size < 2)
    cr_skip_test("needs 2 CPUs (has %zu, %s)", cs.size, cs.size_from);
  /* TEAMS_RUN=team: the probe checks that its static region ran on two
   * threads, which the way's choice may give up next to libgomp's spinners
   * (launcher/way.c). */
  const char *env[] = {"OMP_PROC_BIND", "close", "OMP_PLACES", "threads",
                       "TEAMS_DEBUG", "1", "TEAMS_RUN", "team",
                       pin ? "TEAMS_PIN" : "TEAMS_SPIN_US", pin ? "cores" : "50",
                       NULL};
  static char out[16384];
  int st = run_probe(probe, arg, env, out, sizeof out);
  cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s %s: status %d:\n%s", probe,
            arg ? arg : "", st, out);
  size_t size = 0;
  const char *l = strstr(out, "\nsize ");
  cr_assert(l && sscanf(l, "\nsize %zu", &size) == 1, "no size line:\n%s", out);
  cr_expect_eq(size, cs.size, "team of %zu on %zu CPUs:\n%s", size, cs.size, out);
  char want[400];
  snprintf(want, sizeof want, "teams: cpus: %s (openmp places), size: %zu (%s)",
           list_of(&cs.cpus), cs.size, cs.size_from);
  cr_expect(strstr(out, want), "expected \"%s\" in:\n%s", want, out);
  /* the static region ran on `size` threads, each chunk on its own */
  int tids[64], cpus[64];
  size_t k = 0;
  for (const char *c = strstr(out, "chunk "); c && k < 64; c = strstr(c + 1, "\nchunk ")) {
    size_t idx;
    int part, tid, cpu;
    char mask[256];
    if (*c == '\n')
      c++;
    cr_assert_eq(sscanf(c, "chunk %zu participant %d tid %d cpu %d mask %255s", &idx,
                        &part, &tid, &cpu, mask), 5, "bad line in:\n%s", out);
    cr_expect_eq(idx, k);
    cr_expect_eq(part, (int)k, "chunk %zu on participant %d", k, part);
    for (size_t j = 0; j < k; j++)
      cr_expect_neq(tids[j], tid, "chunks %zu and %zu on one thread", j, k);
    if (pin) {
      char one[16];
      snprintf(one, sizeof one, "%d", cpu);
      cr_expect_str_eq(mask, one, "participant %zu pinned to one CPU", k);
      cr_expect(tt__mask_isset(&cs.cpus, cpu));
      for (size_t j = 0; j < k; j++)
        cr_expect_neq(cpus[j], cpu, "participants %zu and %zu on one CPU", j, k);
    } else if (k > 0) {
      /* unpinned workers get the team's CPUs, not the caller's one */
      tt__cpumask got;
      cr_expect_geq(tt__cpulist_parse(mask, &got), 0);
      cr_expect(tt__mask_equal(&got, &cs.cpus), "worker %zu mask %s, team's %s", k,
                mask, list_of(&cs.cpus));
    }
    tids[k] = tid;
    cpus[k] = cpu;
    k++;
  }
  cr_expect_eq(k, cs.size, "%zu chunks in:\n%s", k, out);
}

Test(cpuset, libgomp_bound_program_gets_every_place) {
  check_probe(TT_PROBE_GOMP, NULL, false);
}

Test(cpuset, libgomp_bound_program_pins_one_participant_per_place) {
  check_probe(TT_PROBE_GOMP, NULL, true);
}

Test(cpuset, libomp_bound_program_gets_every_place) {
  if (!TT_PROBE_LIBOMP[0])
    cr_skip_test("the libomp probe is not built (clang with libomp not found, "
                 "or a sanitizer build: clang's OpenMP runtime and gcc's "
                 "sanitizer runtime do not share a process)");
  check_probe(TT_PROBE_LIBOMP, "--omp-first", false);
  check_probe(TT_PROBE_LIBOMP, NULL, false);
  check_probe(TT_PROBE_LIBOMP, "--omp-first", true);
}
