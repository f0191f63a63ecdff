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

Then, per release, the host-gap cells of teams-bench-cl's cl-gap section
(gap<G>us/<kernel>): the medians of teams' default, each fixed TEAMS_RUN,
cpu and cpu-minimal, and each teams system over cpu-minimal (the paired
ratio the TSV carries; a default above 1.1x is marked), in report.md; and
DIR/gap-<release>.svg: those ratios per cell, a bar per system.

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
GAP = "cl-gap"
# cl-gap's systems: teams' default, the fixed ways, and PoCL's drivers;
# ratios to the baseline cpu-minimal.
GAP_TEAMS = ("teams", "teams/run=team", "teams/run=serial")
# cpu-minimal/threads: the same driver in a process with idle threads, as
# a teams process always has (glibc's mutexes take no atomic operation in a
# single-threaded process: docs/benchmarks.md).
GAP_SYSTEMS = GAP_TEAMS + ("cpu", "cpu-minimal", "cpu-minimal/threads")
GAP_SHORT = {"teams": "default", "teams/run=team": "run=team",
             "teams/run=serial": "run=serial"}
GAP_LIMIT = 1.1  # a default above this many times cpu-minimal is marked


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


def read_gap(path):
    """{(metric, system): (median, p90, ratio)} of the cl-gap rows, and the
    metrics in the TSV's order."""
    rows, order = {}, []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 7 or p[0] != GAP:
                continue
            vals = []
            for x in p[4:7]:
                try:
                    vals.append(float(x))
                except ValueError:
                    vals.append(None)
            rows[(p[2], p[1])] = tuple(vals)
            if p[2] not in order:
                order.append(p[2])
    return rows, order


def gap_report(d, rel, label, fmt):
    """The host-gap table of one release (markdown lines) and its plot."""
    rows, order = read_gap(os.path.join(d, rel + "-cl.tsv"))
    cells = [m for m in order if m.startswith("gap")]
    if not cells:
        return []

    def get(m, s, i):
        v = rows.get((m, s))
        return None if v is None else v[i]

    def x(r):
        return "" if r is None else f"{r:.3g}x"

    lines = ["", f"### Host gap, PoCL {label}", "",
             "The host computes G us, then enqueue + clFinish of the kernel "
             "(groups x each group's time on cpu-minimal); us per launch, "
             "medians; ratios to cpu-minimal paired per round (the last "
             "column: of the medians); "
             f"**bold**: teams' default above {GAP_LIMIT}x.", "",
             "| cell | " + " | ".join(GAP_SYSTEMS) + " | "
             + " | ".join(f"{GAP_SHORT[s]}/cpu-minimal" for s in GAP_TEAMS)
             + " | default/(cpu-minimal/threads) |",
             "| --- |" + " --- |" * (len(GAP_SYSTEMS) + len(GAP_TEAMS) + 1)]
    for m in cells:
        ratios = []
        for s in GAP_TEAMS:
            r = get(m, s, 2)
            cell = x(r)
            if s == "teams" and r is not None and r > GAP_LIMIT:
                cell = f"**{cell}**"
            ratios.append(cell)
        # Of the medians (the section's paired ratios are to cpu-minimal).
        t, mt = get(m, "teams", 0), get(m, "cpu-minimal/threads", 0)
        threads = x(t / mt) if t is not None and mt else ""
        lines.append(f"| {m} | " + " | ".join(fmt(get(m, s, 0)) for s in GAP_SYSTEMS)
                     + " | " + " | ".join(ratios) + f" | {threads} |")
    work = [f"{m.split('/', 1)[1]} {fmt(get(m, 'cpu-minimal', 0))} us"
            for m in order if m.startswith("group work/")]
    if work:
        lines += ["", "Each group's time on cpu-minimal (over an empty group's): "
                  + ", ".join(work) + "."]
    notes = os.path.join(d, rel + "-cl.notes")  # teams-bench-cl's stderr
    if os.path.exists(notes):
        with open(notes) as f:
            said = [l.strip()[2:] for l in f if l.strip().startswith("- " + GAP + ":")]
        if said:
            lines += [""] + [f"- {n}" for n in said]

    # The plot: each teams system and cpu over cpu-minimal per cell.
    systems = GAP_TEAMS + ("cpu",)
    data = os.path.join(d, f"gap-{rel}.dat")
    with open(data, "w") as f:
        for i, m in enumerate(cells):
            vals = [get(m, s, 2) for s in systems]
            f.write(f"{i}\t" + "\t".join("NaN" if v is None else f"{v:.6g}"
                                          for v in vals) + f"\t\"{m}\"\n")
    n = len(cells)
    script = [
        "set terminal svg size 1000,%d noenhanced font 'sans,11'" % (120 + 30 * n),
        "set output '%s'" % os.path.join(d, f"gap-{rel}.svg"),
        f"set title 'cl-gap, PoCL {label}: the host computes G us, then enqueue + "
        f"clFinish; each system / cpu-minimal (below 1: faster; dashed: 1 and "
        f"{GAP_LIMIT})'",
        "set logscale x 2", "set xlabel 'system / cpu-minimal (median of paired ratios)'",
        "set yrange [%d:-1]" % n, "set ytics nomirror", "set grid xtics",
        "set key outside right top", "set style fill solid 0.8",
        "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2",
        f"set arrow from {GAP_LIMIT}, graph 0 to {GAP_LIMIT}, graph 1 nohead dt 3",
        "set ytics (%s)" % ", ".join(f"\"{c}\" {i}" for i, c in enumerate(cells)),
    ]
    w = 0.8 / len(systems)
    plots = []
    for j, s in enumerate(systems):
        off = -0.4 + w * (j + 0.5)
        c = f"column({j + 2})"
        plots.append(
            f"'{data}' using ({c}):($1+{off:.3f}):({c}<1?{c}:1):({c}<1?1:{c}):"
            f"($1+{off:.3f}-{w / 2:.3f}):($1+{off:.3f}+{w / 2:.3f}) "
            f"with boxxyerror title '{s}'")
    script.append("plot " + ", ".join(plots))
    try:
        subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True,
                       check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"pocl-versions-report: no plot for {rel}'s cl-gap ({e})",
              file=sys.stderr)
    return lines


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
    for rel in names:
        lines += gap_report(d, rel, RELEASES.get(rel, rel), fmt)
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    # The plot: teams/cpu per metric (rows), one bar per release; none when
    # no metric of that table has a ratio (a run of cl-gap alone).
    rels = [RELEASES.get(r, r) for r in names]
    labels = [k[0] for k in order]
    if not any(x[2] is not None for x in plot):
        print("pocl-versions-report: no versions plot (no metric with a ratio "
              "to cpu)", file=sys.stderr)
        for old in ("versions.dat", "versions.svg"):  # an earlier run's
            if os.path.exists(os.path.join(d, old)):
                os.remove(os.path.join(d, old))
        return
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
