/* Helpers for the OpenCL tests of the teams PoCL driver (clu.h). */
#include "clu.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cl-sources.h"

void clu_open(clu_env *e, cl_command_queue_properties props) {
  memset(e, 0, sizeof *e);
  cl_uint n = 0;
  CLU_CHECK(clGetPlatformIDs(1, &e->platform, &n));
  cr_assert_eq(n, 1, "want exactly one platform (one PoCL per process)");
  CLU_CHECK(clGetDeviceIDs(e->platform, CL_DEVICE_TYPE_ALL, 1, &e->dev, NULL));
  CLU_CHECK(clGetDeviceInfo(e->dev, CL_DEVICE_NAME, sizeof e->name, e->name,
                            NULL));
  tt_cl_stats s;
  e->is_teams = clGetDeviceInfo(e->dev, TT_CL_DEVICE_STATS, sizeof s, &s,
                                NULL) == CL_SUCCESS;
  cl_int err;
  e->ctx = clCreateContext(NULL, 1, &e->dev, NULL, NULL, &err);
  CLU_CHECK(err);
  e->q = clu_queue(e, props);
}

cl_command_queue clu_queue(clu_env *e, cl_command_queue_properties props) {
  cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, props, 0};
  cl_int err;
  cl_command_queue q =
      clCreateCommandQueueWithProperties(e->ctx, e->dev, props ? qp : NULL,
                                         &err);
  CLU_CHECK(err);
  return q;
}

void clu_close(clu_env *e) {
  if (e->q)
    clReleaseCommandQueue(e->q);
  if (e->ctx)
    clReleaseContext(e->ctx);
  memset(e, 0, sizeof *e);
}

cl_program clu_build_src(clu_env *e, const char *src) {
  return clu_build_src_opts(e, src, "-cl-std=CL3.0");
}

cl_program clu_build_src_opts(clu_env *e, const char *src,
                              const char *options) {
  cl_int err;
  cl_program p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
  CLU_CHECK(err);
  err = clBuildProgram(p, 1, &e->dev, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, e->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1,
                          log, NULL);
    cr_assert_fail("clBuildProgram: %d\n%s", err, log);
  }
  return p;
}

cl_program clu_build(clu_env *e, const char *name) {
  const char *src = tt_cl_source(name);
  cr_assert_not_null(src, "no kernels/cl/%s.cl", name);
  return clu_build_src(e, src);
}

cl_kernel clu_kernel(cl_program p, const char *name) {
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  cr_assert_eq(err, CL_SUCCESS, "clCreateKernel(%s): %d", name, err);
  return k;
}

cl_mem clu_buffer(clu_env *e, cl_mem_flags flags, size_t size, void *host) {
  cl_int err;
  cl_mem m = clCreateBuffer(e->ctx, flags, size, host, &err);
  CLU_CHECK(err);
  return m;
}

void clu_arg(cl_kernel k, cl_uint i, size_t size, const void *value) {
  cl_int err = clSetKernelArg(k, i, size, value);
  cr_assert_eq(err, CL_SUCCESS, "clSetKernelArg(%u): %d", i, err);
}

int clu_stats(clu_env *e, tt_cl_stats *s) {
  memset(s, 0, sizeof *s);
  return clGetDeviceInfo(e->dev, TT_CL_DEVICE_STATS, sizeof *s, s, NULL) ==
                 CL_SUCCESS
             ? 0
             : -1;
}

unsigned long long clu_rand(unsigned long long *state) {
  unsigned long long x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static int saved_fd[3] = {-1, -1, -1};
static FILE *capture[3];

void clu_capture_begin(int fd) {
  cr_assert(fd == 1 || fd == 2);
  fflush(fd == 1 ? stdout : stderr);
  capture[fd] = tmpfile();
  cr_assert_not_null(capture[fd]);
  saved_fd[fd] = dup(fd);
  cr_assert(saved_fd[fd] >= 0);
  cr_assert(dup2(fileno(capture[fd]), fd) >= 0);
}

FILE *clu_capture_end(int fd) {
  cr_assert(fd == 1 || fd == 2);
  fflush(fd == 1 ? stdout : stderr);
  cr_assert(dup2(saved_fd[fd], fd) >= 0);
  close(saved_fd[fd]);
  saved_fd[fd] = -1;
  FILE *f = capture[fd];
  capture[fd] = NULL;
  rewind(f);
  return f;
}
