/* Work-group functions on the teams PoCL driver (backend/pocl/wgfunc.h): the
 * first launch of a kernel at a local size whose specialised function is
 * not in the disk cache runs on the kernel's generic work-group function,
 * the specialised one is built in the background and swapped in, and later
 * launches run on it; a later process finds it on disk and loads it at
 * its first launch.
 *
 * The driver's counters (tt_cl_stats.generic, .jit_swapped, .jit_loaded)
 * say which function a launch got; their checks skip on the pthread run
 * (tests/CMakeLists.txt), where the results are still checked.  Each test
 * runs on an empty kernel cache of its own (cold_cache), so that what is
 * on disk is what the test made.  Waiting for a background build polls the
 * counters with a generous bound; no duration is asserted. */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clu.h"

#define JIT_TEST(name) Test(pocl_jit, name, .timeout = 300)

/* Mixes the work-item's ids, sizes and offset: a result that depends on
 * everything the specialisation fixes (local size, offset). */
static const char *src_mix =
    "kernel void jit_mix(global uint *out, uint salt) {\n"
    "  size_t g = get_global_id(0);\n"
    "  uint x = (uint)g * 2654435761u ^ salt;\n"
    "  x ^= (uint)get_local_id(0) * 40503u + (uint)get_group_id(0) * 97u;\n"
    "  x += (uint)get_local_size(0) * 7u + (uint)get_global_offset(0);\n"
    "  uint n = x & 15u;\n"
    "  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;\n"
    "  out[g - get_global_offset(0)] = x;\n"
    "}\n";

static uint32_t mix_host(size_t g, size_t local, size_t offset,
                         uint32_t salt) {
  size_t lid = (g - offset) % local, grp = (g - offset) / local;
  uint32_t x = (uint32_t)g * 2654435761u ^ salt;
  x ^= (uint32_t)lid * 40503u + (uint32_t)grp * 97u;
  x += (uint32_t)local * 7u + (uint32_t)offset;
  for (uint32_t i = 0, n = x & 15u; i < n; i++)
    x = x * 1664525u + 1013904223u;
  return x;
}

/* An empty kernel cache for this test's process (criterion runs each test
 * in a process of its own, and libpocl reads POCL_CACHE_DIR when it starts,
 * at the test's first OpenCL call), inside the suite's cache directory
 * when there is one; removed at the end (drop_cache). */
static char cache_dir[4096];

static void cold_cache_named(const char *name) {
  const char *root = getenv("POCL_CACHE_DIR");
  int len = snprintf(cache_dir, sizeof cache_dir, "%s/%s",
                     root && *root ? root : "/tmp", name);
  cr_assert(len > 0 && (size_t)len < sizeof cache_dir);
  if (root && *root)
    mkdir(root, 0755);
}

static int keep_cache; /* drop_cache leaves it (exit_with_builds_pending) */

static void cold_cache(void) {
  cold_cache_named("teams-test-jit-XXXXXX");
  cr_assert_not_null(mkdtemp(cache_dir), "%s", cache_dir);
  cr_assert_eq(setenv("POCL_CACHE_DIR", cache_dir, 1), 0);
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void rm_tree(const char *dir) {
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void drop_cache(void) {
  if (cache_dir[0] && !keep_cache)
    rm_tree(cache_dir);
}

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Runs jit_mix on n items at (offset, local) and checks every value. */
static void run_mix(clu_env *e, cl_kernel k, cl_mem out, size_t n,
                    size_t offset, size_t local, uint32_t salt,
                    uint32_t *got) {
  CLU_ARG(k, 0, out);
  cl_uint s = salt;
  CLU_ARG(k, 1, s);
  size_t off = offset;
  CLU_CHECK(clEnqueueNDRangeKernel(e->q, k, 1, offset ? &off : NULL, &n,
                                   &local, 0, NULL, NULL));
  CLU_CHECK(clEnqueueReadBuffer(e->q, out, CL_TRUE, 0, n * sizeof *got, got,
                                0, NULL, NULL));
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(got[i], mix_host(offset + i, local, offset, salt),
                 "item %zu (offset %zu, local %zu): %u", i, offset, local,
                 got[i]);
}

/* Waits until the driver swapped in at least `want` functions in all and
 * has no build pending. */
static void wait_swapped(clu_env *e, uint64_t want) {
  tt_cl_stats s;
  for (int i = 0; i < 600000; i++) { /* 10 minutes at most */
    cr_assert_eq(clu_stats(e, &s), 0);
    if (s.jit_swapped >= want && s.jit_pending == 0)
      return;
    sleep_ms(1);
  }
  cr_assert_fail("%llu of %llu background builds landed, %llu pending",
                 (unsigned long long)s.jit_swapped, (unsigned long long)want,
                 (unsigned long long)s.jit_pending);
}

/* The setup of most tests below: the device, an output buffer of n items
 * and a host array for them. */
typedef struct mix_env {
  clu_env e;
  size_t n;
  cl_mem out;
  uint32_t *got;
} mix_env;

/* On the cache the process has (mix_open: on an empty one of its own). */
static void mix_open_here(mix_env *m, size_t n) {
  clu_open(&m->e, 0);
  m->n = n;
  m->out = clu_buffer(&m->e, CL_MEM_READ_WRITE, n * sizeof(uint32_t), NULL);
  m->got = malloc(n * sizeof *m->got);
  cr_assert_not_null(m->got);
}

static void mix_open(mix_env *m, size_t n) {
  cold_cache();
  mix_open_here(m, n);
}

static void mix_close(mix_env *m) {
  free(m->got);
  clReleaseMemObject(m->out);
  clu_close(&m->e);
  drop_cache();
}

/* First launch at a new local size on the generic function, the swap, and
 * later launches on the specialised function, with identical results. */
JIT_TEST(first_launch_generic_then_specialised) {
  clu_env e;
  cold_cache();
  clu_open(&e, 0);
  cl_program p = clu_build_src(&e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  const size_t n = 4096;
  cl_mem out = clu_buffer(&e, CL_MEM_READ_WRITE, n * sizeof(uint32_t), NULL);
  uint32_t *before = malloc(n * sizeof *before),
           *after = malloc(n * sizeof *after);
  tt_cl_stats s0, s1, s2;
  int teams = clu_stats(&e, &s0) == 0;

  run_mix(&e, k, out, n, 0, 16, 7, before);
  if (teams) {
    clu_stats(&e, &s1);
    cr_assert_eq(s1.generic, s0.generic + 1,
                 "the first launch at local 16 ran on the generic function");
    cr_assert_leq(s1.jit_pending + s1.jit_swapped, s0.jit_swapped + 1,
                  "one build for one specialisation");
    wait_swapped(&e, s0.jit_swapped + 1);
    clu_stats(&e, &s1);
  }
  for (int t = 0; t < 3; t++) {
    run_mix(&e, k, out, n, 0, 16, 7, after);
    cr_assert(memcmp(before, after, n * sizeof *after) == 0,
              "results differ across the swap");
  }
  if (teams) {
    clu_stats(&e, &s2);
    cr_assert_eq(s2.generic, s1.generic,
                 "launches after the swap ran on the generic function");
    cr_assert_eq(s2.ndrange, s1.ndrange + 3);
    cr_assert_eq(s2.jit_swapped, s1.jit_swapped, "no second build");
  }

  /* Another specialisation of the same kernel: a global offset (no
   * zero-offset specialisation) at the same local size, and a new local
   * size: each runs generic first, then its own function. */
  const size_t offs[] = {5, 0};
  const size_t locals[] = {16, 64};
  for (int c = 0; c < 2; c++) {
    if (teams)
      clu_stats(&e, &s0);
    run_mix(&e, k, out, n, offs[c], locals[c], 11, before);
    if (teams) {
      clu_stats(&e, &s1);
      cr_assert_eq(s1.generic, s0.generic + 1,
                   "case %d: generic first (%llu generic launches, %llu before)",
                   c, (unsigned long long)s1.generic,
                   (unsigned long long)s0.generic);
      wait_swapped(&e, s0.jit_swapped + 1);
      clu_stats(&e, &s1);
    }
    run_mix(&e, k, out, n, offs[c], locals[c], 11, after);
    cr_assert(memcmp(before, after, n * sizeof *after) == 0,
              "case %d: results differ across the swap", c);
    if (teams) {
      clu_stats(&e, &s2);
      cr_assert_eq(s2.generic, s1.generic, "case %d: specialised after", c);
    }
  }

  free(before);
  free(after);
  clReleaseMemObject(out);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clu_close(&e);
  drop_cache();
}

/* A process that finds the specialised function in the disk cache (an
 * earlier process built it) loads it at its first launch: no launch on the
 * generic function, no background build.  The earlier process is a child
 * forked before this one opened OpenCL. */
JIT_TEST(later_process_loads_from_disk) {
  cold_cache();
  const size_t n = 2048;
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) { /* the earlier run: build the function, wait for it */
    mix_env m;
    mix_open_here(&m, n);
    cl_program p = clu_build_src(&m.e, src_mix);
    cl_kernel k = clu_kernel(p, "jit_mix");
    tt_cl_stats s;
    run_mix(&m.e, k, m.out, n, 0, 32, 1, m.got);
    if (clu_stats(&m.e, &s) == 0)
      wait_swapped(&m.e, 1);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(m.got);
    clReleaseMemObject(m.out);
    clu_close(&m.e); /* not mix_close: the cache is the parent's */
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the earlier process failed (status %d)", status);

  mix_env m;
  mix_open_here(&m, n);
  cl_program p = clu_build_src(&m.e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  tt_cl_stats s0, s1;
  int teams = clu_stats(&m.e, &s0) == 0;
  run_mix(&m.e, k, m.out, n, 0, 32, 2, m.got);
  if (teams) {
    clu_stats(&m.e, &s1);
    cr_assert_eq(s1.generic, s0.generic, "the first launch ran generic");
    cr_assert_eq(s1.jit_loaded, s0.jit_loaded + 1, "not loaded from disk");
    cr_assert_eq(s1.jit_pending + s1.jit_swapped,
                 s0.jit_pending + s0.jit_swapped, "built again");
  }
  /* a local size the earlier process never ran: generic, built */
  if (teams)
    clu_stats(&m.e, &s0);
  run_mix(&m.e, k, m.out, n, 0, 64, 3, m.got);
  if (teams) {
    clu_stats(&m.e, &s1);
    cr_assert_eq(s1.generic, s0.generic + 1, "local 64: generic first");
    wait_swapped(&m.e, s0.jit_swapped + 1);
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
  mix_close(&m);
}

/* A second kernel object of the same program (a program that creates its
 * kernels for every call, as CLBlast does) finds the functions the first
 * one loaded: its first launch at the same specialisation runs the
 * specialised function, and nothing is built again, also after the first
 * object was released.  A new specialisation still starts generic. */
JIT_TEST(second_kernel_object) {
  mix_env m;
  mix_open(&m, 1024);
  cl_program p = clu_build_src(&m.e, src_mix);
  tt_cl_stats s0, s1;
  int teams = clu_stats(&m.e, &s0) == 0;
  cl_kernel k = clu_kernel(p, "jit_mix");
  run_mix(&m.e, k, m.out, m.n, 0, 32, 3, m.got);
  if (teams) {
    clu_stats(&m.e, &s1);
    cr_assert_eq(s1.generic, s0.generic + 1, "the first object: generic first");
    wait_swapped(&m.e, s0.jit_swapped + 1);
  }
  for (int i = 0; i < 3; i++) {
    /* i == 0: beside the first object; then after its release */
    cl_kernel k2 = clu_kernel(p, "jit_mix");
    if (i == 1)
      clReleaseKernel(k);
    if (teams)
      clu_stats(&m.e, &s0);
    run_mix(&m.e, k2, m.out, m.n, 0, 32, 3 + (uint32_t)i, m.got);
    if (teams) {
      clu_stats(&m.e, &s1);
      cr_assert_eq(s1.generic, s0.generic,
                   "object %d: ran the generic function", i + 2);
      cr_assert_eq(s1.jit_swapped + s1.jit_pending,
                   s0.jit_swapped + s0.jit_pending,
                   "object %d: built again", i + 2);
    }
    if (i == 2) { /* a specialisation no object ran yet */
      if (teams)
        clu_stats(&m.e, &s0);
      run_mix(&m.e, k2, m.out, m.n, 0, 64, 9, m.got);
      if (teams) {
        clu_stats(&m.e, &s1);
        cr_assert_eq(s1.generic, s0.generic + 1, "local 64: generic first");
        wait_swapped(&m.e, s0.jit_swapped + 1);
      }
      run_mix(&m.e, k2, m.out, m.n, 0, 64, 9, m.got);
    }
    clReleaseKernel(k2);
  }
  clReleaseProgram(p);
  mix_close(&m);
}

/* The kernel and its program released while their builds are queued or
 * running: the builds end, the kernel goes away after them, and the device
 * keeps working.  Several rounds, several local sizes each (queued builds
 * behind a running one). */
JIT_TEST(release_while_building) {
  mix_env m;
  mix_open(&m, 2048);
  tt_cl_stats s0;
  int teams = clu_stats(&m.e, &s0) == 0;
  uint64_t queued = 0;
  for (int r = 0; r < 3; r++) {
    /* A program of its own each round: another kernel beside jit_mix (a
     * comment would not do: PoCL hashes the preprocessed source, and the
     * same build is the same functions, which the driver shares). */
    char src[2048];
    snprintf(src, sizeof src,
             "%skernel void jit_round(global uint *o) { o[0] = %du; }\n",
             src_mix, r);
    cl_program p = clu_build_src(&m.e, src);
    cl_kernel k = clu_kernel(p, "jit_mix");
    const size_t locals[] = {8, 16, 32, 128};
    for (int i = 0; i < 4; i++)
      run_mix(&m.e, k, m.out, m.n, 0, locals[i], (uint32_t)r, m.got);
    queued += 4;
    clReleaseKernel(k);
    clReleaseProgram(p);
  }
  /* The device still runs a fresh kernel meanwhile. */
  cl_program p = clu_build_src(&m.e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  run_mix(&m.e, k, m.out, m.n, 0, 64, 99, m.got);
  if (teams)
    wait_swapped(&m.e, s0.jit_swapped + queued);
  run_mix(&m.e, k, m.out, m.n, 0, 64, 99, m.got);
  clReleaseKernel(k);
  clReleaseProgram(p);
  mix_close(&m);
}

/* The process ends with builds still queued: the exit waits for the one in
 * progress and drops the rest (this test passes by exiting cleanly). */
JIT_TEST(exit_with_builds_pending) {
  /* A cache of a fixed name, emptied here rather than at the end: the
   * build in progress at exit writes into it after this function. */
  cold_cache_named("teams-test-jit-exit");
  rm_tree(cache_dir);
  cr_assert_eq(mkdir(cache_dir, 0755), 0, "%s", cache_dir);
  cr_assert_eq(setenv("POCL_CACHE_DIR", cache_dir, 1), 0);
  keep_cache = 1;
  mix_env m;
  mix_open_here(&m, 1024);
  cl_program p = clu_build_src(&m.e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  const size_t locals[] = {4, 8, 16, 32, 64, 128};
  for (int i = 0; i < 6; i++)
    run_mix(&m.e, k, m.out, m.n, 0, locals[i], 5, m.got);
  clReleaseKernel(k);
  clReleaseProgram(p);
  mix_close(&m);
}

/* POCL_WORK_GROUP_SPECIALIZATION=0 (PoCL's switch): every launch runs on
 * the generic function and nothing is built in the background. */
JIT_TEST(specialisation_off) {
  setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 1);
  mix_env m;
  mix_open(&m, 1024);
  cl_program p = clu_build_src(&m.e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  tt_cl_stats s0, s1;
  int teams = clu_stats(&m.e, &s0) == 0;
  for (int i = 0; i < 3; i++)
    run_mix(&m.e, k, m.out, m.n, 0, 16, 1, m.got);
  if (teams) {
    clu_stats(&m.e, &s1);
    cr_assert_eq(s1.jit_swapped, s0.jit_swapped);
    cr_assert_eq(s1.ndrange, s0.ndrange + 3);
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
  mix_close(&m);
}
