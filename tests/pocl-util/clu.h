/* Helpers for the OpenCL tests of the teams PoCL driver (tests/test-pocl*.c).
 *
 * The tests run through the ICD loader on whatever device the environment
 * selects: tests/CMakeLists.txt registers each binary twice, on `teams` (the
 * private prefix) and on PoCL's `pthread` (the system ICD), so every result
 * check is also checked against PoCL's own threaded driver.  Assertions that
 * only make sense on teams (its counters, its parameters) skip elsewhere. */
#ifndef TEAMS_CLU_H
#define TEAMS_CLU_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stddef.h>
#include <stdio.h>

#include "teams-pocl-info.h"

typedef struct clu_env {
  cl_platform_id platform;
  cl_device_id dev;
  cl_context ctx;
  cl_command_queue q;
  int is_teams; /* the device is the teams driver */
  char name[256];
} clu_env;

/* Opens the first device with a queue of the given properties; asserts. */
void clu_open(clu_env *e, cl_command_queue_properties props);
void clu_close(clu_env *e);
cl_command_queue clu_queue(clu_env *e, cl_command_queue_properties props);

/* Builds kernels/cl/NAME.cl (embedded) or a source string; asserts, and
 * prints the build log on failure. */
cl_program clu_build(clu_env *e, const char *name);
cl_program clu_build_src(clu_env *e, const char *src);
/* The same with these build options instead of -cl-std=CL3.0. */
cl_program clu_build_src_opts(clu_env *e, const char *src,
                              const char *options);
cl_kernel clu_kernel(cl_program p, const char *name);
cl_mem clu_buffer(clu_env *e, cl_mem_flags flags, size_t size, void *host);

/* Sets argument i from a value (clSetKernelArg with sizeof). */
#define CLU_ARG(k, i, v) clu_arg((k), (i), sizeof(v), &(v))
void clu_arg(cl_kernel k, cl_uint i, size_t size, const void *value);

/* The teams driver's counters; returns 0, or -1 on another device. */
int clu_stats(clu_env *e, tt_cl_stats *s);

/* Fails the test with the name of the OpenCL call on an error code. */
#define CLU_CHECK(call)                                                        \
  do {                                                                         \
    cl_int clu_err_ = (call);                                                  \
    cr_assert_eq(clu_err_, CL_SUCCESS, "%s returned %d", #call, clu_err_);     \
  } while (0)

/* Captures what is written to file descriptor fd (1: stdout, 2: stderr)
 * between clu_capture_begin and clu_capture_end, which restores fd and
 * returns the captured text, rewound (fclose it).  Works at the descriptor
 * level, so it sees what PoCL writes with write(2), and needs nothing from
 * the test runner. */
void clu_capture_begin(int fd);
FILE *clu_capture_end(int fd);

/* Deterministic data (xorshift64*), for inputs. */
unsigned long long clu_rand(unsigned long long *state);

#endif
