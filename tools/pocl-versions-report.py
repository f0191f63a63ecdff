#!/usr/bin/env python3
"""One table of teams against each PoCL release's own drivers, and a plot.

Reads what tools/bench-pocl-versions.sh left in DIR: <release>-cl.tsv
(teams-bench-cl --tsv rows: section, system, metric, unit, median, p90,
ratio) and <release>-clpeak.txt (clpeak's output, "### SYSTEM round N"
before each run).  Writes DIR/report.md: per metric and release, the
medians of teams, cpu and cpu-minimal and the ratios teams/cpu and
teams/cpu-minimal (for GFLOPS and GB/s, where more is better, the ratio is
still teams over the driver: above 1 is better there); and DIR/versions.svg
(gnuplot, where installed): teams/cpu per metric, one bar per release.

    tools/pocl-versions-report.py DIR
"""
import os
import re
import statistics
import subprocess
import sys

RELEASES = {"bookworm": "3.1", "trixie": "6.0", "forky": "7.1"}
SYSTEMS = ("teams", "cpu", "cpu-minimal")
# teams-bench-cl rows in the table: (section, metric), in this order.
CL_ROWS = [
    ("cl-launch", "empty enqueue+finish"),
    ("cl-launch", "empty 2-item enqueue+finish"),
    ("cl-launch", "5000 enqueues+finish"),
    ("cl-launch", "START - QUEUED"),
    ("cl-axpy", "axpy 1e7 local 64"),
    ("cl-axpy", "axpy 1e7 NULL local"),
    ("cl-tri", "triangular local 16"),
    ("cl-first", "first launch, cold cache"),
    ("cl-first", "first launch, warm cache"),
]
CL_BLAS = "cl-blas"


def read_cl(path):
    rows = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 6:
                continue
            section, system, metric, unit, median = p[:5]
            try:
                rows[(section, metric, system)] = (float(median), unit)
            except ValueError:
                pass
    return rows


def read_clpeak(path):
    """{(metric, system): [values]} from clpeak's output."""
    vals = {}
    system = None
    block = None
    with open(path) as f:
        for line in f:
            m = re.match(r"### (\S+) round", line)
            if m:
                system = m.group(1)
                continue
            if "Single-precision compute" in line:
                block = ("clpeak compute, float", "GFLOPS")
            elif "Global memory bandwidth" in line:
                block = ("clpeak global bandwidth, float", "GB/s")
            m = re.match(r"\s*Kernel launch latency\s*:\s*([0-9.]+)", line)
            if m and system:
                vals.setdefault(("clpeak kernel latency", "us", system), []).append(
                    float(m.group(1)))
                continue
            m = re.match(r"\s*float\s*:\s*([0-9.]+)", line)
            if m and system and block:
                vals.setdefault((block[0], block[1], system), []).append(
                    float(m.group(1)))
                block = None
    return vals


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    names = sorted({f.rsplit("-", 1)[0] for f in os.listdir(d)
                    if f.endswith("-cl.tsv")},
                   key=lambda r: RELEASES.get(r, r))
    if not names:
        sys.exit("pocl-versions-report: no <release>-cl.tsv in " + d)
    table = {}  # (metric label, unit) -> {release: {system: median}}
    order = []

    def put(label, unit, rel, system, v):
        key = (label, unit)
        if key not in table:
            table[key] = {}
            order.append(key)
        table[key].setdefault(rel, {})[system] = v

    for rel in names:
        cl = read_cl(os.path.join(d, rel + "-cl.tsv"))
        for section, metric in CL_ROWS:
            for s in SYSTEMS:
                if (section, metric, s) in cl:
                    v, unit = cl[(section, metric, s)]
                    put(f"{section}: {metric}", unit, rel, s, v)
        for (section, metric, s), (v, unit) in sorted(cl.items()):
            if section == CL_BLAS and s in SYSTEMS:
                put(f"{section}: {metric}", unit, rel, s, v)
        p = os.path.join(d, rel + "-clpeak.txt")
        if os.path.exists(p):
            for (metric, unit, s), vs in read_clpeak(p).items():
                put(metric, unit, rel, s, statistics.median(vs))

    def fmt(v):
        return "" if v is None else f"{v:.4g}"

    def ratio(a, b):
        return None if a is None or b is None or b == 0 else a / b

    lines = ["| metric | unit | PoCL | teams | cpu | cpu-minimal | teams/cpu | teams/cpu-minimal |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    plot = []
    for key in order:
        label, unit = key
        for rel in names:
            v = table[key].get(rel)
            if not v:
                continue
            t, c, m = (v.get(s) for s in SYSTEMS)
            rc, rm = ratio(t, c), ratio(t, m)
            lines.append(
                f"| {label} | {unit} | {RELEASES.get(rel, rel)} | {fmt(t)} | {fmt(c)} | "
                f"{fmt(m)} | {fmt(rc)}{'x' if rc else ''} | {fmt(rm)}{'x' if rm else ''} |")
            plot.append((label, RELEASES.get(rel, rel), rc))
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # The plot: teams/cpu per metric (rows), one bar per release.
    rels = [RELEASES.get(r, r) for r in names]
    labels = [k[0] for k in order]
    data = os.path.join(d, "versions.dat")
    with open(data, "w") as f:
        for i, label in enumerate(labels):
            vals = []
            for rel in rels:
                r = next((x[2] for x in plot if x[0] == label and x[1] == rel), None)
                vals.append("NaN" if r is None else f"{r:.6g}")
            f.write(f"{i}\t" + "\t".join(vals) + f"\t\"{label}\"\n")
    n = len(labels)
    script = [
        "set terminal svg size 1000,%d noenhanced font 'sans,11'" % (120 + 22 * n),
        "set output '%s'" % os.path.join(d, "versions.svg"),
        "set title 'teams / PoCL cpu driver, per PoCL release (below 1: teams faster; "
        "GFLOPS and GB/s: above 1 better)'",
        "set logscale x 2", "set xlabel 'teams / cpu (median)'",
        "set yrange [-1:%d]" % n, "set ytics nomirror", "set grid xtics",
        "set key outside right top", "set style fill solid 0.8",
        "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2",
        "set ytics (%s)" % ", ".join(f"\"{l}\" {i}" for i, l in enumerate(labels)),
    ]
    w = 0.8 / max(1, len(rels))
    plots = []
    for j, rel in enumerate(rels):
        off = -0.4 + w * (j + 0.5)
        c = f"column({j + 2})"
        # a bar from 1 (as fast as cpu) to the ratio
        plots.append(
            f"'{data}' using ({c}):($1+{off:.3f}):({c}<1?{c}:1):({c}<1?1:{c}):"
            f"($1+{off:.3f}-{w / 2:.3f}):($1+{off:.3f}+{w / 2:.3f}) "
            f"with boxxyerror title 'PoCL {rel}'")
    script.append("plot " + ", ".join(plots))
    try:
        subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"pocl-versions-report: no plot ({e})", file=sys.stderr)


if __name__ == "__main__":
    main()
