#!/usr/bin/python3
"""A PyOpenCL client on the teams device, checked against numpy.

Run through teams-run (tests/CMakeLists.txt): arrays and their arithmetic,
ElementwiseKernel, ReductionKernel and the array reductions, inclusive and
exclusive scans (GenericScanKernel underneath), a hand-written kernel with
local memory and a barrier, a profiled event, and several queues.  Exits 0
when every check passes; prints what failed otherwise."""
import faulthandler
import sys

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pyopencl.clmath
import pyopencl.reduction
import pyopencl.scan
from pyopencl.elementwise import ElementwiseKernel

failures = []
# A hang shows where it is: every thread's Python stack, then exit, before
# ctest's timeout (1200 s) kills the process without a word.
faulthandler.dump_traceback_later(1000, exit=True)


def check(name, got, want, rtol=1e-5, atol=0.0):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        failures.append(f"{name}: shape {got.shape}, want {want.shape}")
    elif np.issubdtype(want.dtype, np.integer):
        if not np.array_equal(got, want):
            bad = np.flatnonzero(got.ravel() != want.ravel())
            failures.append(f"{name}: {bad.size} elements differ, first at "
                            f"{bad[0]}: {got.ravel()[bad[0]]} != {want.ravel()[bad[0]]}")
    elif not np.allclose(got, want, rtol=rtol, atol=atol):
        err = np.max(np.abs(got - want))
        failures.append(f"{name}: max abs error {err}")


platform_devices = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
teams = [d for _, d in platform_devices if d.name.startswith("teams")]
if not teams:
    print("no teams device among", [d.name for _, d in platform_devices])
    sys.exit(1)
dev = teams[0]
print("device:", dev.name, "compute units:", dev.max_compute_units)
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
rng = np.random.default_rng(11)

# Arrays: transfer, arithmetic, math functions.
n = 100003  # not a multiple of any work-group size
a_h = rng.standard_normal(n).astype(np.float32)
b_h = rng.standard_normal(n).astype(np.float32)
a = cla.to_device(q, a_h)
b = cla.to_device(q, b_h)
check("a round trip", a.get(), a_h, rtol=0)
check("2a + 3b", (2 * a + 3 * b).get(), 2 * a_h + 3 * b_h)
check("a * b - a / 2", (a * b - a / 2).get(), a_h * b_h - a_h / 2)
check("fabs", cl.clmath.fabs(a).get(), np.abs(a_h))
check("exp(-a*a)", cl.clmath.exp(-a * a).get(), np.exp(-a_h * a_h), rtol=1e-5)
check("sin", cl.clmath.sin(a).get(), np.sin(a_h), rtol=1e-5, atol=1e-6)
i_h = rng.integers(-1000, 1000, n).astype(np.int32)
i = cla.to_device(q, i_h)
check("int i*7 - i", (i * 7 - i).get(), i_h * 7 - i_h)
check("where", cla.if_positive(a, a, b).get(), np.where(a_h > 0, a_h, b_h))
check("maximum", cla.maximum(a, b).get(), np.maximum(a_h, b_h))

# ElementwiseKernel.
lin = ElementwiseKernel(ctx, "float k, float *x, float *y, float *z",
                        "z[i] = k * x[i] + y[i]", "lin_comb")
z = cla.empty_like(a)
lin(np.float32(2.5), a, b, z)
check("ElementwiseKernel axpy", z.get(), 2.5 * a_h + b_h, atol=1e-5)
d_h = rng.random(n)
d = cla.to_device(q, d_h)
sq = ElementwiseKernel(ctx, "double *x, double *y", "y[i] = sqrt(x[i]) + x[i]*x[i]",
                       "dsq")
dy = cla.empty_like(d)
sq(d, dy)
check("ElementwiseKernel double", dy.get(), np.sqrt(d_h) + d_h * d_h, rtol=1e-12)

# Reductions.
check("sum float", cla.sum(a).get(), a_h.astype(np.float64).sum(), rtol=1e-4,
      atol=1e-2)
check("sum double", cla.sum(d).get(), d_h.sum(), rtol=1e-12)
check("sum int", cla.sum(i).get(), i_h.sum())
check("max", cla.max(a).get(), a_h.max(), rtol=0)
check("min", cla.min(i).get(), i_h.min())
check("dot", cla.dot(a, b).get(), np.dot(a_h.astype(np.float64), b_h),
      rtol=1e-4, atol=1e-2)
rk = pyopencl.reduction.ReductionKernel(
    ctx, np.float64, neutral="0", reduce_expr="a+b",
    map_expr="(double)x[i]*(double)x[i]", arguments="float *x")
check("ReductionKernel sum of squares", rk(a).get(),
      np.sum(a_h.astype(np.float64) ** 2), rtol=1e-10)
cnt = pyopencl.reduction.ReductionKernel(
    ctx, np.int32, neutral="0", reduce_expr="a+b",
    map_expr="x[i] > 0 ? 1 : 0", arguments="float *x")
check("ReductionKernel count", cnt(a).get(), np.int32((a_h > 0).sum()))

# Scans.
s_h = rng.integers(0, 100, n).astype(np.int32)
s = cla.to_device(q, s_h)
check("cumsum", cla.cumsum(s).get(), np.cumsum(s_h).astype(np.int32))
inc = pyopencl.scan.InclusiveScanKernel(ctx, np.int64, "a+b", neutral="0")
s64 = cla.to_device(q, s_h.astype(np.int64))
inc(s64)
check("InclusiveScanKernel", s64.get(), np.cumsum(s_h.astype(np.int64)))
exc = pyopencl.scan.ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
e = cla.to_device(q, s_h)
exc(e)
want = np.concatenate(([0], np.cumsum(s_h)[:-1])).astype(np.int32)
check("ExclusiveScanKernel", e.get(), want)
mx = pyopencl.scan.InclusiveScanKernel(ctx, np.float32, "max(a, b)",
                                      neutral="-INFINITY")
m = cla.to_device(q, a_h)
mx(m)
check("max scan", m.get(), np.maximum.accumulate(a_h), rtol=0)
# Stream compaction: a scan with an output statement.
copy_if = pyopencl.scan.GenericScanKernel(
    ctx, np.int32, arguments="int *x, int *out, int *count",
    input_expr="x[i] % 3 == 0 ? 1 : 0", scan_expr="a+b", neutral="0",
    output_statement="if (prev_item != item) out[item - 1] = x[i];"
                     " if (i + 1 == N) *count = item;")
out = cla.empty_like(s)
count = cla.zeros(q, 1, np.int32)
copy_if(s, out, count)
kept = s_h[s_h % 3 == 0]
c = int(count.get()[0])
check("compaction count", np.int32(c), np.int32(kept.size))
check("compaction values", out.get()[:c], kept)

# A kernel with local memory and barriers (work-group tree sums).
prg = cl.Program(ctx, """
kernel void wgsum(global const float *x, global float *out, local float *t) {
  size_t l = get_local_id(0), n = get_local_size(0);
  t[l] = x[get_global_id(0)];
  for (size_t s = n / 2; s > 0; s /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < s) t[l] += t[l + s];
  }
  if (l == 0) out[get_group_id(0)] = t[0];
}""").build()
wg, groups = 128, 200
x_h = rng.random(wg * groups).astype(np.float32)
x = cla.to_device(q, x_h)
part = cla.empty(q, groups, np.float32)
prg.wgsum(q, (wg * groups,), (wg,), x.data, part.data,
          cl.LocalMemory(wg * 4))
check("local-memory work-group sums", part.get(),
      x_h.reshape(groups, wg).astype(np.float64).sum(axis=1), rtol=1e-5)

# A profiled event, and commands on several queues of one context.
pq = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
ev = prg.wgsum(pq, (wg * groups,), (wg,), x.data, part.data,
               cl.LocalMemory(wg * 4))
ev.wait()
t = [ev.profile.queued, ev.profile.submit, ev.profile.start, ev.profile.end]
if not (t[0] <= t[1] <= t[2] <= t[3]):
    failures.append(f"profiling stamps out of order: {t}")
queues = [cl.CommandQueue(ctx) for _ in range(3)]
arrs = [cla.to_device(qq, a_h * (k + 1)) for k, qq in enumerate(queues)]
res = [cla.sum(arr, queue=qq) for arr, qq in zip(arrs, queues)]
for k, r in enumerate(res):
    check(f"queue {k} sum", r.get(), (a_h.astype(np.float64) * (k + 1)).sum(),
          rtol=1e-4, atol=1e-2)

if failures:
    print("FAILED:")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print("pyopencl on teams: all checks passed")
