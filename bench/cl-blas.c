/* teams-bench-cl: CLBlast's routines as a program calls them (cl-blas.h).
 *
 * CLBlast (Debian libclblast-dev) is the OpenCL BLAS a new user of an
 * OpenCL CPU device is likely to try first.  It compiles each routine's
 * program at its first call in the process, creates and releases the
 * routine's kernels at every call, and picks kernels and local sizes from
 * its tuning database, so a row here measures the driver the way a
 * library uses it, not the way a benchmark kernel would.
 *
 * Layouts: row-major, no transposes (the default of CLBlast's own
 * performance clients); sgemv then runs XgemvFastRot (local 16 on both
 * drivers, one work-group per 16 rows).  Every result is checked against a
 * host reference computed in double after the timed calls: a device that
 * skipped or repeated work-groups fails its child instead of showing a
 * speed-up. */
#include "cl-blas.h"

#include <clblast_c.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A wrong result: the child fails, with what and where. */
static void mismatch(const char *what, const char *where, double got,
                     double want) {
  fprintf(stderr, "teams-bench-cl: %s: %s = %g, expected %g\n", what, where,
          got, want);
  exit(1);
}

static void check_cl(cl_int e, const char *what) {
  if (e != CL_SUCCESS) {
    fprintf(stderr, "teams-bench-cl: %s: OpenCL error %d\n", what, e);
    exit(1);
  }
}

static void check_blast(CLBlastStatusCode s, const char *what) {
  if (s != CLBlastSuccess) {
    fprintf(stderr, "teams-bench-cl: %s: CLBlast status %d\n", what, (int)s);
    exit(1);
  }
}

/* A value in [lo, lo + 1) from an index (a fixed hash: the same data on
 * every device and round). */
static float value_at(size_t i, float lo) {
  uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32);
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  return lo + (float)(x >> 8) * (1.0f / 16777216.0f);
}

/* n floats, or the child fails. */
static float *floats(size_t n) {
  float *a = malloc(n * sizeof *a);
  if (a == NULL) {
    fprintf(stderr, "teams-bench-cl: out of memory (%zu floats)\n", n);
    exit(1);
  }
  return a;
}

static float *host_array(size_t n, float lo, size_t salt) {
  float *a = floats(n);
  for (size_t i = 0; i < n; i++)
    a[i] = value_at(i * 4 + salt, lo);
  return a;
}

static cl_mem device_copy(const tt_blas_child *c, const float *a, size_t n) {
  cl_int err;
  cl_mem m = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            n * sizeof *a, (void *)a, &err);
  check_cl(err, "clCreateBuffer");
  return m;
}

static void read_back(const tt_blas_child *c, cl_mem m, float *a, size_t n) {
  check_cl(clEnqueueReadBuffer(c->q, m, CL_TRUE, 0, n * sizeof *a, a, 0, NULL,
                               NULL),
           "clEnqueueReadBuffer");
}

/* ---- the routines ---------------------------------------------------------- */

/* One routine at one size: its buffers and host data, a call (enqueue
 * only), and the check after `calls` calls. */
typedef struct blas_case {
  const char *metric;
  size_t n;
  void (*setup)(const tt_blas_child *c, struct blas_case *b);
  void (*call)(const tt_blas_child *c, struct blas_case *b);
  void (*check)(const tt_blas_child *c, struct blas_case *b, unsigned calls);
  float *ha, *hx, *hy;
  cl_mem a, x, y;
} blas_case;

static void gemv_setup(const tt_blas_child *c, blas_case *b) {
  size_t n = b->n;
  b->ha = host_array(n * n, -0.5f, 0);
  b->hx = host_array(n, 0.0f, 1);
  b->hy = host_array(n, 0.0f, 2);
  b->a = device_copy(c, b->ha, n * n);
  b->x = device_copy(c, b->hx, n);
  b->y = device_copy(c, b->hy, n);
}

static void gemv_call(const tt_blas_child *c, blas_case *b) {
  cl_command_queue q = c->q;
  check_blast(CLBlastSgemv(CLBlastLayoutRowMajor, CLBlastTransposeNo, b->n,
                           b->n, 1.0f, b->a, 0, b->n, b->x, 0, 1, 0.0f, b->y,
                           0, 1, &q, NULL),
              b->metric);
}

/* y = A x (beta 0: every call writes the same y). */
static void gemv_check(const tt_blas_child *c, blas_case *b, unsigned calls) {
  (void)calls;
  size_t n = b->n;
  read_back(c, b->y, b->hy, n);
  for (size_t i = 0; i < n; i++) {
    double want = 0, mag = 0;
    const float *row = b->ha + i * n;
    for (size_t k = 0; k < n; k++) {
      want += (double)row[k] * b->hx[k];
      mag += fabs((double)row[k] * b->hx[k]);
    }
    if (fabs(b->hy[i] - want) > 1e-5 * mag + 1e-6) {
      char where[64];
      snprintf(where, sizeof where, "y[%zu]", i);
      mismatch(b->metric, where, b->hy[i], want);
    }
  }
}

static void gemm_setup(const tt_blas_child *c, blas_case *b) {
  size_t n = b->n;
  b->ha = host_array(n * n, -0.5f, 0);
  b->hx = host_array(n * n, 0.0f, 1); /* B */
  b->hy = host_array(n * n, 0.0f, 2); /* C */
  b->a = device_copy(c, b->ha, n * n);
  b->x = device_copy(c, b->hx, n * n);
  b->y = device_copy(c, b->hy, n * n);
}

static void gemm_call(const tt_blas_child *c, blas_case *b) {
  cl_command_queue q = c->q;
  size_t n = b->n;
  check_blast(CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                           CLBlastTransposeNo, n, n, n, 1.0f, b->a, 0, n, b->x,
                           0, n, 0.0f, b->y, 0, n, &q, NULL),
              b->metric);
}

/* C = A B: one element of every 16 x 16 tile of C, at a place that moves
 * from tile to tile (a full reference would cost the host 2 n^3 flops). */
static void gemm_check(const tt_blas_child *c, blas_case *b, unsigned calls) {
  (void)calls;
  size_t n = b->n;
  read_back(c, b->y, b->hy, n * n);
  for (size_t bi = 0; bi < n / 16; bi++)
    for (size_t bj = 0; bj < n / 16; bj++) {
      size_t i = bi * 16 + (bj * 7) % 16, j = bj * 16 + (bi * 5) % 16;
      double want = 0, mag = 0;
      for (size_t k = 0; k < n; k++) {
        double t = (double)b->ha[i * n + k] * b->hx[k * n + j];
        want += t;
        mag += fabs(t);
      }
      double got = b->hy[i * n + j];
      if (fabs(got - want) > 1e-5 * mag + 1e-6) {
        char where[64];
        snprintf(where, sizeof where, "C[%zu][%zu]", i, j);
        mismatch(b->metric, where, got, want);
      }
    }
}

static void vec_setup(const tt_blas_child *c, blas_case *b) {
  b->hx = host_array(b->n, 0.5f, 1);
  b->hy = host_array(b->n, 0.5f, 2);
  b->x = device_copy(c, b->hx, b->n);
  b->y = device_copy(c, b->hy, b->n);
  b->ha = floats(b->n); /* what the device returns */
  cl_int err;
  b->a = clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
  check_cl(err, "clCreateBuffer");
}

#define AXPY_ALPHA 0.5f

static void axpy_call(const tt_blas_child *c, blas_case *b) {
  cl_command_queue q = c->q;
  check_blast(CLBlastSaxpy(b->n, AXPY_ALPHA, b->x, 0, 1, b->y, 0, 1, &q, NULL),
              b->metric);
}

/* y += alpha x, `calls` times. */
static void axpy_check(const tt_blas_child *c, blas_case *b, unsigned calls) {
  read_back(c, b->y, b->ha, b->n);
  for (size_t i = 0; i < b->n; i++) {
    double step = (double)AXPY_ALPHA * b->hx[i];
    double want = b->hy[i] + calls * step;
    if (fabs(b->ha[i] - want) >
        1e-6 * (fabs(b->hy[i]) + calls * fabs(step)) * calls) {
      char where[64];
      snprintf(where, sizeof where, "y[%zu] after %u calls", i, calls);
      mismatch(b->metric, where, b->ha[i], want);
    }
  }
}

static void dot_call(const tt_blas_child *c, blas_case *b) {
  cl_command_queue q = c->q;
  check_blast(CLBlastSdot(b->n, b->a, 0, b->x, 0, 1, b->y, 0, 1, &q, NULL),
              b->metric);
}

/* x . y: positive terms, so a float sum is good to a few ulps per level of
 * CLBlast's two-stage reduction. */
static void dot_check(const tt_blas_child *c, blas_case *b, unsigned calls) {
  (void)calls;
  float got;
  read_back(c, b->a, &got, 1);
  double want = 0;
  for (size_t i = 0; i < b->n; i++)
    want += (double)b->hx[i] * b->hy[i];
  if (fabs(got - want) > 1e-4 * want)
    mismatch(b->metric, "x . y", got, want);
}

static void case_free(blas_case *b) {
  free(b->ha);
  free(b->hx);
  free(b->hy);
  if (b->a)
    clReleaseMemObject(b->a);
  if (b->x)
    clReleaseMemObject(b->x);
  if (b->y)
    clReleaseMemObject(b->y);
}

#define GEMV(s) {"sgemv " #s, s, gemv_setup, gemv_call, gemv_check, 0, 0, 0, 0, 0, 0}
#define GEMM(s) {"sgemm " #s, s, gemm_setup, gemm_call, gemm_check, 0, 0, 0, 0, 0, 0}
#define AXPY(name, s) {"saxpy " name, s, vec_setup, axpy_call, axpy_check, 0, 0, 0, 0, 0, 0}
#define DOT(name, s) {"sdot " name, s, vec_setup, dot_call, dot_check, 0, 0, 0, 0, 0, 0}

/* Per case: two untimed calls (the routine's program built, the driver's
 * specialised functions landed: settle), then timed calls until REPS, or
 * BUDGET_S of timed calls once there are MIN_REPS. */
#define REPS 10
#define QUICK_REPS 4
#define MIN_REPS 3
#define BUDGET_S 1.5

void tt_blas_routines(const tt_blas_child *c) {
  blas_case cases[] = {
      GEMV(2048),        GEMV(4096),         GEMV(8192),
      GEMM(256),         GEMM(512),          GEMM(1024),
      AXPY("8192", 8192), AXPY("2^20", 1 << 20), AXPY("2^24", 1 << 24),
      DOT("8192", 8192), DOT("2^20", 1 << 20), DOT("2^24", 1 << 24),
  };
  int reps = c->quick ? QUICK_REPS : REPS;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    blas_case *b = &cases[i];
    b->setup(c, b);
    unsigned calls = 0;
    for (int w = 0; w < 2; w++, calls++) {
      b->call(c, b);
      check_cl(clFinish(c->q), b->metric);
      c->settle();
    }
    double spent = 0;
    for (int r = 0; r < reps && (r < MIN_REPS || spent < BUDGET_S); r++) {
      double t0 = now_s();
      b->call(c, b);
      check_cl(clFinish(c->q), b->metric);
      double dt = now_s() - t0;
      spent += dt;
      calls++;
      c->sample(b->metric, "ms", dt * 1e3);
    }
    b->check(c, b, calls);
    case_free(b);
  }
}

/* ---- the ssymm sequence ------------------------------------------------------ */

/* Element (i, j) of a matrix in the layout, with leading dimension ld. */
static size_t at(int row_major, size_t i, size_t j, size_t ld) {
  return row_major ? i * ld + j : j * ld + i;
}

void tt_blas_symm_sequence(const tt_blas_child *c) {
  static const size_t sizes[] = {7, 64, 65};
  const size_t cap = 80 * 80;
  float *ha = host_array(cap, -0.5f, 0), *hb = host_array(cap, -0.5f, 1),
        *hc = host_array(cap, 0.0f, 2), *got = floats(cap);
  cl_mem a = device_copy(c, ha, cap), b = device_copy(c, hb, cap),
         cm = device_copy(c, hc, cap);
  for (int row = 0; row < 2; row++)
    for (int right = 0; right < 2; right++)
      for (int upper = 0; upper < 2; upper++)
        for (size_t mi = 0; mi < 3; mi++)
          for (size_t ni = 0; ni < 3; ni++)
            for (int pad = 0; pad < 2; pad++)
              for (int ab = 0; ab < 2; ab++) {
                size_t m = sizes[mi], n = sizes[ni], off = pad ? 3 : 0;
                size_t ka = right ? n : m; /* A is ka x ka */
                size_t lda = ka + pad, ldb = (row ? n : m) + pad, ldc = ldb;
                float alpha = ab ? 1.5f : 1.0f, beta = ab ? -0.5f : 0.0f;
                /* C fresh every call: beta reads it */
                check_cl(clEnqueueWriteBuffer(c->q, cm, CL_FALSE, 0,
                                              cap * sizeof *hc, hc, 0, NULL,
                                              NULL),
                         "clEnqueueWriteBuffer");
                cl_command_queue q = c->q;
                check_blast(CLBlastSsymm(row ? CLBlastLayoutRowMajor
                                             : CLBlastLayoutColMajor,
                                         right ? CLBlastSideRight
                                               : CLBlastSideLeft,
                                         upper ? CLBlastTriangleUpper
                                               : CLBlastTriangleLower,
                                         m, n, alpha, a, off, lda, b, off, ldb,
                                         beta, cm, off, ldc, &q, NULL),
                            "ssymm");
                read_back(c, cm, got, cap);
                for (size_t i = 0; i < m; i++)
                  for (size_t j = 0; j < n; j++) {
                    double acc = 0;
                    for (size_t k = 0; k < ka; k++) {
                      /* left: A(i,k) B(k,j); right: B(i,k) A(k,j); A
                       * symmetric, read from its stored triangle */
                      size_t x = right ? k : i, y = right ? j : k;
                      if (upper ? x > y : x < y) {
                        size_t t = x;
                        x = y;
                        y = t;
                      }
                      double av = ha[off + at(row, x, y, lda)];
                      double bv = right ? hb[off + at(row, i, k, ldb)]
                                        : hb[off + at(row, k, j, ldb)];
                      acc += av * bv;
                    }
                    size_t e = off + at(row, i, j, ldc);
                    double want = alpha * acc + beta * hc[e];
                    if (fabs(got[e] - want) > 1e-4 * (1 + fabs(want))) {
                      char where[256];
                      snprintf(where, sizeof where,
                               "%s-major, %s, %s, m=%zu n=%zu offset %zu: "
                               "C(%zu,%zu)",
                               row ? "row" : "column", right ? "right" : "left",
                               upper ? "upper" : "lower", m, n, off, i, j);
                      mismatch("ssymm", where, got[e], want);
                    }
                  }
              }
  clReleaseMemObject(a);
  clReleaseMemObject(b);
  clReleaseMemObject(cm);
  free(ha);
  free(hb);
  free(hc);
  free(got);
}
