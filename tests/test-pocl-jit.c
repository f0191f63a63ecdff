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

/* mkdir -p: every level of dir (a fresh build has no pocl-cache/ yet). */
static void make_dirs(const char *dir) {
  char path[sizeof cache_dir];
  int len = snprintf(path, sizeof path, "%s", dir);
  cr_assert(len > 0 && (size_t)len < sizeof path);
  for (char *c = path + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      mkdir(path, 0755);
      *c = '/';
    }
  mkdir(path, 0755);
}

static void cold_cache_named(const char *name) {
  const char *root = getenv("POCL_CACHE_DIR");
  int len = snprintf(cache_dir, sizeof cache_dir, "%s/%s",
                     root && *root ? root : "/tmp", name);
  cr_assert(len > 0 && (size_t)len < sizeof cache_dir);
  if (root && *root)
    make_dirs(root);
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
 * running: the release drops the builds not started and waits for the one
 * in progress (backend/pocl/compile.c, Kernels), so none is left when it
 * returns, and the device keeps working.  Several rounds, several local
 * sizes each (queued builds behind a running one). */
JIT_TEST(release_while_building) {
  mix_env m;
  mix_open(&m, 2048);
  tt_cl_stats s0, s1;
  int teams = clu_stats(&m.e, &s0) == 0;
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
    clReleaseKernel(k);
    if (teams) {
      clu_stats(&m.e, &s1);
      cr_assert_eq(s1.jit_pending, 0,
                   "round %d: %llu builds of the released kernel left", r,
                   (unsigned long long)s1.jit_pending);
    }
    clReleaseProgram(p);
  }
  /* The device still runs a fresh kernel, and builds its function. */
  cl_program p = clu_build_src(&m.e, src_mix);
  cl_kernel k = clu_kernel(p, "jit_mix");
  if (teams)
    clu_stats(&m.e, &s0);
  run_mix(&m.e, k, m.out, m.n, 0, 64, 99, m.got);
  if (teams)
    wait_swapped(&m.e, s0.jit_swapped + 1);
  run_mix(&m.e, k, m.out, m.n, 0, 64, 99, m.got);
  clReleaseKernel(k);
  clReleaseProgram(p);
  mix_close(&m);
}

/* A program rebuilt with other options right after its kernel was
 * released, its background builds still queued or running (the OpenCL
 * CTS's options_build_macro, options_include_directory and
 * options_denorm_cache do so): clBuildProgram must not find the kernel
 * attached to the program (CL_INVALID_OPERATION), and the kernel of the
 * new build computes with the new options. */
static const char *src_macro =
    "kernel void jit_macro(global uint *o) {\n"
    "  o[get_global_id(0)] = (uint)get_global_id(0) * 3u + VAL;\n"
    "}\n";

JIT_TEST(rebuild_after_release) {
  clu_env e;
  cold_cache();
  clu_open(&e, 0);
  cl_int err;
  cl_program p = clCreateProgramWithSource(e.ctx, 1, &src_macro, NULL, &err);
  CLU_CHECK(err);
  const size_t n = 1024;
  cl_mem out = clu_buffer(&e, CL_MEM_READ_WRITE, n * sizeof(cl_uint), NULL);
  cl_uint *got = malloc(n * sizeof *got);
  cr_assert_not_null(got);
  for (unsigned r = 1; r <= 3; r++) {
    char opts[64];
    snprintf(opts, sizeof opts, "-cl-std=CL3.0 -DVAL=%uu", r);
    err = clBuildProgram(p, 1, &e.dev, opts, NULL, NULL);
    cr_assert_eq(err, CL_SUCCESS, "build %u (%s) returned %d", r, opts, err);
    cl_kernel k = clu_kernel(p, "jit_macro");
    CLU_ARG(k, 0, out);
    /* Each local size a specialisation new to the process: on teams the
     * first one's build runs, the others' wait behind it. */
    const size_t locals[] = {8, 16, 32};
    for (int i = 0; i < 3; i++) {
      CLU_CHECK(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &n, &locals[i], 0,
                                       NULL, NULL));
      CLU_CHECK(clEnqueueReadBuffer(e.q, out, CL_TRUE, 0, n * sizeof *got,
                                    got, 0, NULL, NULL));
      for (size_t g = 0; g < n; g++)
        cr_assert_eq(got[g], (cl_uint)g * 3u + r,
                     "build %u, local %zu, item %zu: %u", r, locals[i], g,
                     got[g]);
    }
    clReleaseKernel(k);
  }
  free(got);
  clReleaseMemObject(out);
  clReleaseProgram(p);
  clu_close(&e);
  drop_cache();
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
  /* The kernel and its program stay: releasing the kernel would drop its
   * builds not started (backend/pocl/compile.c, Kernels) before the exit. */
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

/* clCreateKernel compiles nothing (backend/pocl/wgfunc.c, Why nothing is
 * built in clCreateKernel): a kernel the program never launches is never
 * compiled, so a compiler that crashes on it cannot end the program.
 * jit_private reads a volatile private array uninitialised (as the OpenCL
 * CTS's kernel_private_memory_size kernel does), on which Debian's PoCL
 * 7.1 compiler crashes; it is created and released, never launched.  On an
 * empty cache, no work-group function is on disk after clCreateKernel (one
 * built there would be), and the first launch of a kernel builds one and
 * runs it.  A later process, on the cache the first one filled, loads the
 * generic function in clCreateKernel (teams: mapped before any launch). */
static const char *src_unlaunched =
    "kernel void jit_private(global ulong *buffer) {\n"
    "  volatile private ulong x[1];\n"
    "  buffer[0] = x[0];\n"
    "}\n"
    "kernel void jit_plain(global uint *o) {\n"
    "  o[get_global_id(0)] = (uint)get_global_id(0) * 3u + 1u;\n"
    "}\n";

static int so_files;
static int count_so(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  size_t n = strlen(path);
  if (flag == FTW_F && n > 3 && strcmp(path + n - 3, ".so") == 0)
    so_files++;
  return 0;
}

/* Shared objects under the process's kernel cache. */
static int cached_objects(void) {
  so_files = 0;
  nftw(cache_dir, count_so, 16, FTW_PHYS);
  return so_files;
}

/* Whether this process maps a file of its kernel cache ending in `tail`. */
static int mapped(const char *tail) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL)
    return 0;
  char line[8192];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    size_t n = strlen(line), t = strlen(tail);
    found = strstr(line, cache_dir) != NULL && n >= t &&
            strcmp(line + n - t, tail) == 0;
  }
  fclose(f);
  return found;
}

/* Runs jit_plain on 256 items (local 8); returns 0, or the step that
 * failed.  No Criterion assertion: it also runs in a forked child, which
 * must report through its exit status. */
static int run_plain(cl_context ctx, cl_command_queue q, cl_kernel k) {
  enum { n = 256 };
  const size_t gsz = n, local = 8;
  cl_int err;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(cl_uint),
                              NULL, &err);
  if (err != CL_SUCCESS)
    return 1;
  cl_uint got[n];
  int rc = 0;
  if (clSetKernelArg(k, 0, sizeof out, &out) != CL_SUCCESS)
    rc = 2;
  else if (clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, &local, 0, NULL, NULL)
           != CL_SUCCESS)
    rc = 3;
  else if (clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof got, got, 0, NULL,
                               NULL)
           != CL_SUCCESS)
    rc = 4;
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (got[i] != (cl_uint)i * 3u + 1u)
      rc = 5;
  clReleaseMemObject(out);
  return rc;
}

/* The first process, in a forked child (libpocl reads the cache directory
 * once per process, and a process that opened OpenCL cannot fork one that
 * does): on the empty cache, build, create both kernels, release
 * jit_private, launch jit_plain.  Exits 0, or with the number of the check
 * that failed, having said which on stderr. */
#define FIRST_CHECK(cond, code, ...)                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "first process: " __VA_ARGS__);                          \
      fputc('\n', stderr);                                                     \
      _exit(code);                                                             \
    }                                                                          \
  } while (0)

static void first_process(void) {
  cl_platform_id pf;
  cl_device_id dev;
  cl_int err;
  FIRST_CHECK(clGetPlatformIDs(1, &pf, NULL) == CL_SUCCESS &&
                  clGetDeviceIDs(pf, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) ==
                      CL_SUCCESS,
              10, "no device");
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  FIRST_CHECK(err == CL_SUCCESS, 11, "clCreateContext: %d", err);
  cl_command_queue q =
      clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
  FIRST_CHECK(err == CL_SUCCESS, 12, "clCreateCommandQueue: %d", err);
  cl_program p =
      clCreateProgramWithSource(ctx, 1, &src_unlaunched, NULL, &err);
  FIRST_CHECK(err == CL_SUCCESS, 13, "clCreateProgramWithSource: %d", err);
  err = clBuildProgram(p, 1, &dev, "-cl-std=CL3.0", NULL, NULL);
  FIRST_CHECK(err == CL_SUCCESS, 14, "clBuildProgram: %d", err);
  FIRST_CHECK(cached_objects() == 0, 15,
              "%d work-group function(s) before any kernel", so_files);
  cl_kernel never = clCreateKernel(p, "jit_private", &err);
  FIRST_CHECK(err == CL_SUCCESS, 16, "clCreateKernel(jit_private): %d", err);
  cl_kernel k = clCreateKernel(p, "jit_plain", &err);
  FIRST_CHECK(err == CL_SUCCESS, 17, "clCreateKernel(jit_plain): %d", err);
  FIRST_CHECK(cached_objects() == 0, 18,
              "clCreateKernel compiled %d work-group function(s)", so_files);
  clReleaseKernel(never);
  tt_cl_stats s0, s1;
  int teams = clGetDeviceInfo(dev, TT_CL_DEVICE_STATS, sizeof s0, &s0,
                              NULL) == CL_SUCCESS;
  int rc = run_plain(ctx, q, k);
  FIRST_CHECK(rc == 0, 20 + rc, "the first launch failed at step %d", rc);
  FIRST_CHECK(cached_objects() >= 1, 30, "the first launch built nothing");
  if (teams) {
    clGetDeviceInfo(dev, TT_CL_DEVICE_STATS, sizeof s1, &s1, NULL);
    FIRST_CHECK(s1.generic == s0.generic + 1, 31,
                "the first launch did not run the generic function");
    FIRST_CHECK(mapped("/0-0-0/jit_plain.so"), 32,
                "the generic function is not loaded");
  }
  rc = run_plain(ctx, q, k);
  FIRST_CHECK(rc == 0, 40 + rc, "the second launch failed at step %d", rc);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

JIT_TEST(create_kernel_compiles_nothing) {
  cold_cache();
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    first_process();
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the first process failed (status %#x: its stderr says why)",
            status);

  /* A later process, on the cache the first one filled: clCreateKernel
   * loads the generic function the disk cache holds. */
  clu_env e;
  clu_open(&e, 0);
  cl_program p = clu_build_src(&e, src_unlaunched);
  cl_kernel k = clu_kernel(p, "jit_plain");
  if (e.is_teams)
    cr_assert(mapped("/0-0-0/jit_plain.so"),
              "clCreateKernel did not load the generic function on disk");
  int rc = run_plain(e.ctx, e.q, k);
  cr_assert_eq(rc, 0, "the launch failed at step %d", rc);
  clReleaseKernel(k);
  clReleaseProgram(p);
  clu_close(&e);
  drop_cache();
}
