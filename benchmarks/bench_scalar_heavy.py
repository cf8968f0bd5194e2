"""Scalar-heavy objectives (issue 40 part 5): functions built from Python scalar operations in
loops, the shape of most published test problems.

Two problems: the Gaussian-peak least squares of the issue (``--points`` residuals from Python
scalar operations on 6 parameters) and the extended Rosenbrock function written as a scalar
loop (``--n`` variables; a sparse Hessian). Each measurement runs in a fresh process (first
calls include tracing, re-rolling, sparsity detection and whatever compilation the default
tiers start), against the same objective's hand-written analytic gradient and Hessian in plain
Python (loops over the same scalars). Rows marked "(function)" wrap the objective in
``hg.function`` (trusted traces: no capture run of the objective per call, as ``jax.jit``).

Run:  python benchmarks/bench_scalar_heavy.py [--points 1025] [--n 2000]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

PEAKS = 2
P0 = [2.1, 4.2, 1.2, 0.9, 6.1, 0.8]
TASKS = ("grad", "hessian", "sparse hessian", "grad (function)", "hessian (function)",
         "sparse hessian (function)")


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


def rosenbrock(hnp):
    def f(x):
        s = 0.0
        for i in range(len(x) - 1):
            s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
        return s
    return f


def rosenbrock_analytic():
    """Its gradient and sparse (tridiagonal, CSR) Hessian by hand, in plain Python loops."""
    def grad(x):
        n, g = len(x), [0.0] * len(x)
        for i in range(n - 1):
            a, b = x[i], x[i + 1]
            d = b - a * a
            g[i] += -400.0 * d * a - 2.0 * (1.0 - a)
            g[i + 1] += 200.0 * d
        return np.array(g)

    def hessian(x):
        n = len(x)
        diag, off = [0.0] * n, [0.0] * (n - 1)
        for i in range(n - 1):
            a, b = x[i], x[i + 1]
            diag[i] += 1200.0 * a * a - 400.0 * b + 2.0
            diag[i + 1] += 200.0
            off[i] = -400.0 * a
        return sp.diags([off, diag, off], [-1, 0, 1], format="csr")
    return grad, hessian


def one(problem, task, size):
    """Time the first and the next call of ``task`` in this (fresh) process; print JSON."""
    if problem == "peaks":
        t, y = data(size)
        x = np.array(P0)
        grad, hessian = analytic(t, y)
    else:
        x = np.linspace(-1.2, 1.0, size)
        grad, hessian = rosenbrock_analytic()
    if task.startswith("analytic"):
        fn = grad if task == "analytic grad" else hessian
    else:
        import hessgrad as hg
        import hessgrad.numpy as hnp
        f = objective(hnp, t, y) if problem == "peaks" else rosenbrock(hnp)
        trusted = task.endswith("(function)")
        base = task.replace(" (function)", "")
        if base == "sparse hessian":
            fn = hg.sparse_hessian(hg.function(f) if trusted else f)
        else:
            fn = {"grad": hg.grad, "hessian": hg.hessian}[base](f)
            fn = hg.function(fn) if trusted else fn
    times, value = [], None
    for _ in range(3):
        start = time.perf_counter()
        value = fn(x)
        times.append(time.perf_counter() - start)
    value = value.toarray() if sp.issparse(value) else np.asarray(value)
    print(json.dumps({"first": times[0], "next": min(times[1:]),
                      "value": value.ravel().tolist()}))


def table(problem, size):
    rows = {}
    tasks = ("analytic grad", "analytic hessian") + tuple(
        t for t in TASKS if not (problem == "rosenbrock" and t.startswith("hessian")))
    for task in tasks:
        done = subprocess.run([sys.executable, __file__, "--one", problem, task, str(size)],
                              capture_output=True, text=True, env=os.environ.copy(), check=True)
        rows[task] = json.loads(done.stdout.strip().splitlines()[-1])
    ref_g = np.array(rows["analytic grad"]["value"])
    ref_h = np.array(rows["analytic hessian"]["value"])
    what = (f"{size} residuals, {3 * PEAKS} parameters" if problem == "peaks" else
            f"Rosenbrock as a scalar loop, n = {size}")
    print(f"{what}; seconds, fresh process per row")
    print(f"{'task':27} {'first':>8} {'next':>9} {'first/analytic':>15} "
          f"{'next/analytic':>14} {'max rel. diff':>14}")
    for task in tasks[2:]:
        is_grad = task.startswith("grad")
        ref = ref_g if is_grad else ref_h
        base = rows["analytic grad" if is_grad else "analytic hessian"]
        r = rows[task]
        diff = np.max(np.abs(np.array(r["value"]) - ref)) / np.max(np.abs(ref))
        print(f"{task:27} {r['first']:8.3f} {r['next']:9.5f} {r['first'] / base['first']:15.1f} "
              f"{r['next'] / base['next']:14.3f} {diff:14.1e}")
    for task in tasks[:2]:
        print(f"{task:27} {rows[task]['first']:8.3f} {rows[task]['next']:9.5f}")
    second = "hessian" if problem == "peaks" else "sparse hessian"
    print(f"first {second} / first grad: {rows[second]['first'] / rows['grad']['first']:.1f} "
          "(target <= 10)\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1025)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return one(args.one[0], args.one[1], int(args.one[2]))
    table("peaks", args.points)
    table("rosenbrock", args.n)


if __name__ == "__main__":
    main()
