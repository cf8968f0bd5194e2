"""Benchmark solvers.cg / minres / eigsh against scipy.sparse.linalg, side by side.

Prints, per operator: matvec counts (ours / SciPy's), median wall times and their
ratio, and the overhead beyond matvecs, ``(time - matvecs * t_matvec) / time``.
Run from the repository root: ``python benchmarks/bench_solvers.py`` (with the
package installed, e.g. ``pip install -e .``, or ``PYTHONPATH=.``).
"""

import statistics
import time

import numpy as np
import scipy.sparse
import scipy.sparse.linalg as sla

import solvers


class Counting(sla.LinearOperator):
    def __init__(self, A):
        self.A, self.count = A, 0
        super().__init__(A.dtype, A.shape)

    def _matvec(self, x):
        self.count += 1
        return self.A @ x.ravel()


def laplacian(n):
    e = np.ones(n)
    return scipy.sparse.diags([-e[:-1], 2 * e, -e[:-1]], [-1, 0, 1], format="csr")


def random_tridiagonal(n, seed=0):
    """Symmetric tridiagonal, diagonal 2 + U(0, 2): extreme eigenvalues less
    clustered than the Laplacian's, whose top end takes ARPACK and us minutes."""
    e = np.ones(n)
    d = 2 + 2 * np.random.default_rng(seed).uniform(size=n)
    return scipy.sparse.diags([-e[:-1], d, -e[:-1]], [-1, 0, 1], format="csr")


def dense_spd(n, seed=0):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1e3, n)) @ Q.T


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def matvec_time(A, n):
    A = sla.aslinearoperator(A)          # the operator form both libraries get
    x = np.random.default_rng(1).standard_normal(n)
    reps = 200
    t0 = time.perf_counter()
    for _ in range(reps):
        A @ x
    return (time.perf_counter() - t0) / reps


def run(label, A, repeats=5, A_eig=None):
    """Krylov solvers on ``A``; eigsh on ``A_eig`` (default ``A``)."""
    A_eig = A if A_eig is None else A_eig
    n = A.shape[0]
    b = np.random.default_rng(2).standard_normal(n)
    tmv = matvec_time(A, n)
    v0 = np.random.default_rng(3).standard_normal(n)
    cases = {
        "cg": (lambda C: solvers.cg(C, b, rtol=1e-8, maxiter=20 * n),
               lambda C: sla.cg(C, b, rtol=1e-8, maxiter=20 * n)),
        "minres": (lambda C: solvers.minres(C, b, rtol=1e-8),
                   lambda C: sla.minres(C, b, rtol=1e-8)),
        "eigsh LA k=6": (lambda C: solvers.eigsh(C, k=6, which="LA", tol=1e-8, v0=v0),
                         lambda C: sla.eigsh(C, k=6, which="LA", tol=1e-8, v0=v0)),
    }
    print(f"\n{label}: n={n}, one matvec = {tmv * 1e6:.1f} us"
          + ("" if A_eig is A else "  (eigsh on the random tridiagonal)"))
    print(f"  {'solver':<14}{'matvecs ours/scipy':>20}{'ratio':>7}"
          f"{'t ours ms':>11}{'t scipy ms':>11}{'t ratio':>8}"
          f"{'overhead ours':>15}{'overhead scipy':>16}")
    for name, (ours, theirs) in cases.items():
        row = []
        for fn in (ours, theirs):
            M = A_eig if name.startswith("eigsh") else A
            C = Counting(M)
            fn(C)
            count = C.count
            # Time with a plain LinearOperator (no counting) for both libraries.
            base = sla.aslinearoperator(M)
            t = median_time(lambda: fn(base), repeats)
            row.append((count, t, max(t - count * tmv, 0.0) / t))
        (c1, t1, o1), (c2, t2, o2) = row
        print(f"  {name:<14}{f'{c1}/{c2}':>20}{c1 / c2:>7.2f}{t1 * 1e3:>11.2f}"
              f"{t2 * 1e3:>11.2f}{t1 / t2:>8.2f}{o1:>15.0%}{o2:>16.0%}")


def main():
    solvers.cg(np.eye(3), np.ones(3))          # compile the Numba kernels first
    solvers.eigsh(np.eye(30), k=2, rng=0)
    run("sparse Laplacian LinearOperator", laplacian(1000), A_eig=random_tridiagonal(1000))
    run("sparse Laplacian LinearOperator", laplacian(10_000), repeats=3,
        A_eig=random_tridiagonal(10_000))
    run("dense SPD, cond 1e3", dense_spd(1000))


if __name__ == "__main__":
    main()
