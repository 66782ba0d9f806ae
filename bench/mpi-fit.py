#!/usr/bin/env python3
"""Fits rank 0's merge time per point to the ranks and streams measured by
bench/mpi-scale.sh (its OUT= TSV), by least squares, and projects it.

    merge_ms = a * ranks + b * ranks * streams + c

where `streams` is the job's streams per point (every rank's together,
so ranks * streams is the term a merge pays when each rank's result
carries every stream). With the streams per rank held fixed (256 in
mpi-scale.sh) `streams` is itself a multiple of `ranks`: a linear merge
shows as b ~ 0 and a alone carrying the growth. The same fit is made of
rank 0's peak RSS (MiB). Prints the coefficients, the fit's residuals,
and the projection at --project ranks with --per-rank streams each,
with the arithmetic.

Usage: bench/mpi-fit.py TSV [--project 1000,10000] [--per-rank 256]
       [--point-s 10] [--column merge_ms_min|merge_ms_max|merge_ms]
(merge_ms: the TSV of the merge-scale example of iosurvey-session, rank
0's decode and merge alone)
(the smaller of a run's two points is the one less disturbed by a loaded
machine; both are worth a look)
"""
import argparse
import csv


def solve(m, v):
    """Solves m x = v (small, dense) by Gaussian elimination."""
    n = len(v)
    a = [row[:] + [v[i]] for i, row in enumerate(m)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        if abs(a[c][c]) < 1e-300:
            raise SystemExit("mpi-fit: the measurements do not determine the fit (too few rank counts?)")
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] for i in range(n)]


def least_squares(rows, ys):
    """The x minimising |rows x - ys|^2, from the normal equations."""
    k = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    v = [sum(r[i] * y for r, y in zip(rows, ys)) for i in range(k)]
    return solve(m, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tsv")
    ap.add_argument("--project", default="1000,10000")
    ap.add_argument("--per-rank", type=int, default=256)
    ap.add_argument("--point-s", type=float, default=10.0)
    ap.add_argument("--column", default="merge_ms_min", help="merge_ms_min or merge_ms_max")
    o = ap.parse_args()
    with open(o.tsv) as f:
        data = list(csv.DictReader(f, delimiter="\t"))
    if len(data) < 3:
        raise SystemExit("mpi-fit: needs at least three rank counts")
    R = [float(d["ranks"]) for d in data]
    S = [float(d["streams"]) for d in data]
    rows = [[r, r * s, 1.0] for r, s in zip(R, S)]
    for name, col, unit, scale in [
        ("merge", o.column, "ms", 1.0),
        ("rank-0 peak RSS", "rank0_rss_kib", "MiB", 1 / 1024),
    ]:
        if col not in data[0]:
            continue
        ys = [float(d[col]) * scale for d in data]
        a, b, c = least_squares(rows, ys)
        print(f"{name}: {unit} = {a:.6g} x ranks + {b:.6g} x ranks x streams + {c:.6g}")
        for r, s, y, row in zip(R, S, ys, rows):
            fit = a * row[0] + b * row[1] + c
            print(f"  ranks {r:6.0f} streams {s:8.0f}: measured {y:10.2f}, fit {fit:10.2f}")
        # The linear model alone: what a merge linear in the job's streams
        # (a fixed number per rank) grows as.
        a1, c1 = least_squares([[r, 1.0] for r in R], ys)
        print(f"  linear alone: {unit} = {a1:.6g} x ranks + {c1:.6g}")
        for n in [int(x) for x in o.project.split(",")]:
            v = a1 * n + c1
            line = f"  projected (linear), {n} ranks: {a1:.6g} x {n} + {c1:.6g} = {v:.4g} {unit}"
            if unit == "ms":
                line += f" = {v / (o.point_s * 1000) * 100:.3g}% of a {o.point_s:g} s point"
            print(line)
        for n in [int(x) for x in o.project.split(",")]:
            s = n * o.per_rank
            v = a * n + b * n * s + c
            line = (
                f"  projected, {n} ranks x {o.per_rank} streams = {s} streams: "
                f"{a:.6g} x {n} + {b:.6g} x {n} x {s} + {c:.6g} = {v:.4g} {unit}"
            )
            if unit == "ms":
                line += f" = {v / (o.point_s * 1000) * 100:.3g}% of a {o.point_s:g} s point"
            print(line)


main()
