"""Scalar-heavy objectives (issue 40 part 5): a least-squares fit whose residuals are built from
Python scalar operations on a few parameters, the shape of most published test problems.

Each measurement runs in a fresh process (first calls include tracing, sparsity detection and
whatever compilation the default tiers start), against the same objective's hand-written
analytic gradient and Hessian in plain Python (loops over the same scalars).

Run:  python benchmarks/bench_scalar_heavy.py [--points 1025]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

PEAKS = 2
P0 = [2.1, 4.2, 1.2, 0.9, 6.1, 0.8]


def data(points):
    t = np.linspace(0, 10, points)
    y = 2 * np.exp(-0.5 * ((t - 4) / 1.3) ** 2) + np.exp(-0.5 * ((t - 6) / 0.7) ** 2)
    return t, y


def objective(hnp, t, y):
    def f(p):
        total = 0.0
        for i in range(len(t)):
            r = y[i]
            for k in range(PEAKS):
                R = (t[i] - p[3 * k + 1]) / p[3 * k + 2]
                r = r - p[3 * k] * hnp.exp(-0.5 * R * R)
            total = total + r * r
        return total
    return f


def analytic(t, y):
    """Gradient and Hessian of the same sum of squares, by hand (Gauss-Newton plus the
    residuals' own second derivatives), in plain Python over the same scalars."""
    n = 3 * PEAKS

    def parts(p, i):
        r, J, Hr = y[i], [0.0] * n, [[0.0] * n for _ in range(n)]
        for k in range(PEAKS):
            a, m, s = p[3 * k], p[3 * k + 1], p[3 * k + 2]
            R = (t[i] - m) / s
            e = math.exp(-0.5 * R * R)
            r -= a * e
            dR = (0.0, -1.0 / s, -R / s)           # dR/da, dR/dm, dR/ds
            de = [-R * e * d for d in dR]           # de/dq
            g = [e + a * de[0], a * de[1], a * de[2]]  # d(a e)/dq, a's row included
            for j in range(3):
                J[3 * k + j] = -g[j]
            # second derivatives of a * e w.r.t. (a, m, s)
            d2R = ((0.0, 0.0, 0.0), (0.0, 0.0, 1.0 / s ** 2), (0.0, 1.0 / s ** 2, 2 * R / s ** 2))
            for u in range(3):
                for v in range(3):
                    d2e = (R * R - 1.0) * e * dR[u] * dR[v] - R * e * d2R[u][v]
                    h = a * d2e + (de[v] if u == 0 else 0.0) + (de[u] if v == 0 else 0.0)
                    Hr[3 * k + u][3 * k + v] = -h
        return r, J, Hr

    def grad(p):
        out = [0.0] * n
        for i in range(len(t)):
            r, J, _ = parts(p, i)
            for j in range(n):
                out[j] += 2 * r * J[j]
        return np.array(out)

    def hessian(p):
        H = np.zeros((n, n))
        for i in range(len(t)):
            r, J, Hr = parts(p, i)
            Jv = np.array(J)
            H += 2 * (np.outer(Jv, Jv) + r * np.array(Hr))
        return H
    return grad, hessian


def one(task, points):
    """Time the first and the next call of ``task`` in this (fresh) process; print JSON."""
    t, y = data(points)
    p = np.array(P0)
    if task.startswith("analytic"):
        grad, hessian = analytic(t, y)
        fn = grad if task == "analytic grad" else hessian
    else:
        import hessgrad as hg
        import hessgrad.numpy as hnp
        f = objective(hnp, t, y)
        if task == "sparse hessian":
            sparse = hg.sparse_hessian(f)
            fn = lambda x: sparse(x).toarray()  # noqa: E731
        else:
            fn = {"grad": hg.grad(f), "hessian": hg.hessian(f)}[task]
    times, value = [], None
    for _ in range(3):
        start = time.perf_counter()
        value = fn(p)
        times.append(time.perf_counter() - start)
    print(json.dumps({"first": times[0], "next": min(times[1:]),
                      "value": np.asarray(value).ravel().tolist()}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1025)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.one, args.points)
    rows = {}
    for task in ("analytic grad", "analytic hessian", "grad", "hessian", "sparse hessian"):
        done = subprocess.run([sys.executable, __file__, "--one", task, "--points",
                               str(args.points)], capture_output=True, text=True,
                              env=os.environ.copy(), check=True)
        rows[task] = json.loads(done.stdout.strip().splitlines()[-1])
    ref_g = np.array(rows["analytic grad"]["value"])
    ref_h = np.array(rows["analytic hessian"]["value"])
    print(f"{args.points} residuals, {3 * PEAKS} parameters; seconds, fresh process per row")
    print(f"{'task':18} {'first':>9} {'next':>9} {'first/analytic':>15} "
          f"{'next/analytic':>14} {'max rel. diff':>14}")
    for task in ("grad", "hessian", "sparse hessian"):
        ref = ref_g if task == "grad" else ref_h
        base = rows["analytic grad" if task == "grad" else "analytic hessian"]
        r = rows[task]
        diff = np.max(np.abs(np.array(r["value"]) - ref)) / np.max(np.abs(ref))
        print(f"{task:18} {r['first']:9.3f} {r['next']:9.4f} {r['first'] / base['first']:15.1f} "
              f"{r['next'] / base['next']:14.2f} {diff:14.1e}")
    for task in ("analytic grad", "analytic hessian"):
        print(f"{task:18} {rows[task]['first']:9.3f} {rows[task]['next']:9.4f}")
    print(f"first hessian / first grad: {rows['hessian']['first'] / rows['grad']['first']:.1f} "
          "(target <= 10)")


if __name__ == "__main__":
    main()
