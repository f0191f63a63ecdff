/* teams over MPI: an OpenCL program, one rank per process, each on the teams
 * device of its own process.
 *
 *   mpirun -np R build/tools/teams-run build/examples/mpi/teams-mpi-cl [n]
 *
 * Each rank takes its part of the triangular grid (tt_mpi_own: whole
 * work-groups, contiguous rows) and enqueues the OpenCL C tri kernel
 * (kernels/cl/tri.cl) over it with a global work offset, on the first device
 * of the first platform; under teams-run that is the `teams` device, whose
 * work-groups run on the rank's team.  The rows are gathered with an
 * MPI_Allreduce and compared with the serial reference; rank 0 prints each
 * rank's device and the result.  The exit status says whether they agree. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <teams/mpi.h>
#include "cl-sources.h"
#include "kernels.h"

#define LOCAL 64

static void die(int rank, const char *what, cl_int err) {
  fprintf(stderr, "rank %d: %s failed (%d)\n", rank, what, (int)err);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 8192;
  n = (n + LOCAL - 1) / LOCAL * LOCAL; /* whole groups: OpenCL 1.2 */

  tt_launch_config cfg = {.dims = 1, .global = {n}, .local = {LOCAL}};
  tt_mpi_part part;
  int terr = tt_mpi_check(MPI_COMM_WORLD, NULL, &cfg);
  if (terr == 0)
    terr = tt_mpi_own(MPI_COMM_WORLD, &cfg, TT_MPI_DIM_SLOWEST, &part);
  if (terr != 0) {
    fprintf(stderr, "rank %d: %s\n", rank, tt_strerror(terr));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  uint32_t *x = malloc(n * sizeof *x);
  uint64_t *y = calloc(n, sizeof *y), *all = malloc(n * sizeof *all),
           *ref = malloc(n * sizeof *ref);
  if (!x || !y || !all || !ref)
    MPI_Abort(MPI_COMM_WORLD, 3);
  for (size_t i = 0; i < n; i++)
    x[i] = (uint32_t)(i * 2654435761u) >> 8;

  cl_platform_id plat;
  cl_device_id dev;
  cl_int err = clGetPlatformIDs(1, &plat, NULL);
  if (err != CL_SUCCESS)
    die(rank, "clGetPlatformIDs", err);
  if ((err = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL)) != CL_SUCCESS)
    die(rank, "clGetDeviceIDs", err);
  char name[128] = "";
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    die(rank, "clCreateContext", err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  if (err != CL_SUCCESS)
    die(rank, "clCreateCommandQueue", err);
  const char *src = tt_cl_source("tri");
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS || (err = clBuildProgram(prog, 1, &dev, "", NULL, NULL)) != CL_SUCCESS)
    die(rank, "clBuildProgram", err);
  cl_kernel k = clCreateKernel(prog, "tt_tri", &err);
  if (err != CL_SUCCESS)
    die(rank, "clCreateKernel", err);
  cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             n * sizeof *x, x, &err);
  cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                             n * sizeof *y, y, &err);
  if (err != CL_SUCCESS)
    die(rank, "clCreateBuffer", err);
  cl_ulong cn = n;
  clSetKernelArg(k, 0, sizeof cn, &cn);
  clSetKernelArg(k, 1, sizeof bx, &bx);
  clSetKernelArg(k, 2, sizeof by, &by);

  double t0 = MPI_Wtime();
  if (part.count != 0) {
    size_t off = part.cfg.offset[0], glob = part.cfg.global[0], loc = LOCAL;
    err = clEnqueueNDRangeKernel(q, k, 1, &off, &glob, &loc, 0, NULL, NULL);
    if (err != CL_SUCCESS)
      die(rank, "clEnqueueNDRangeKernel", err);
  }
  if ((err = clEnqueueReadBuffer(q, by, CL_TRUE, 0, n * sizeof *y, y, 0, NULL,
                                 NULL)) != CL_SUCCESS)
    die(rank, "clEnqueueReadBuffer", err);
  double mine = MPI_Wtime() - t0, slowest;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  /* Rows outside a rank's part stay 0 there: the sum is the gather. */
  MPI_Allreduce(y, all, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  char line[256], *lines = rank == 0 ? malloc(sizeof line * (size_t)size) : NULL;
  snprintf(line, sizeof line, "rank %d: device \"%s\", rows [%zu, %zu)", rank,
           name, part.begin, part.end);
  MPI_Gather(line, sizeof line, MPI_CHAR, lines, sizeof line, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  int bad = 0;
  if (rank == 0) {
    tt_ref_tri(n, x, ref);
    bad = memcmp(all, ref, n * sizeof *ref) != 0;
    for (int r = 0; r < size; r++)
      printf("%s\n", lines + (size_t)r * sizeof line);
    printf("OpenCL tri n=%zu on %d ranks: %.2f ms (slowest rank, with the "
           "first launch's compilation), %s\n",
           n, size, slowest * 1e3, bad ? "WRONG RESULT" : "results equal the reference");
    free(lines);
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(k);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
  free(x);
  free(y);
  free(all);
  free(ref);
  MPI_Finalize();
  return bad;
}
