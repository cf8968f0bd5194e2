"""Benchmark solvers.cg / minres / eigsh / hutchinson against SciPy, side by side.

Two kinds of table:

* **time and overhead**, on three operators: a sparse tridiagonal matrix (n = 10,000 and
  100,000: a product costs microseconds, the worst case for overhead), hessgrad's Hessian
  operator of the extended Rosenbrock function (same n) and of a tanh MLP's loss (10,261
  parameters: a product costs milliseconds). Per solver, matvec counts (ours /
  SciPy's), median wall times, and the overhead beyond the matvecs, measured by
  wrapping the operator: ``(total time - time inside the matvec callback) / total``.
  Hutchinson has no SciPy counterpart; its peer is the same estimate written
  directly in numpy (one ``A @ Z`` block product and a column-wise dot).
* **eigsh matvec sweep** (``--eigsh-sweep``): matvec counts of ``solvers.eigsh`` and
  ARPACK (``scipy.sparse.linalg.eigsh``) at the same ``tol``, basis size and start
  vector over 34 cases (6 matrices x which LA/SA/LM x k = 1, 6; SA is skipped on the
  geometric spectrum, whose bottom end is too clustered for a benchmark); with
  ``--eigsh-random`` also on 120 random spectra and basis sizes not tuned for.

Run from the repository root: ``python benchmarks/bench_solvers.py [--quick]
[--eigsh-sweep] [--eigsh-random]`` (with the package installed, e.g. ``pip install -e .``, or
``PYTHONPATH=.``).
"""

import harness  # first: pins every engine to one thread before numpy is loaded

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse  # noqa: E402
import scipy.sparse.linalg as sla  # noqa: E402

from hessgrad import solvers  # noqa: E402


class Timed(sla.LinearOperator):
    """A LinearOperator that counts its matvecs and the time spent inside them."""

    def __init__(self, A):
        self.A, self.count, self.seconds = A, 0, 0.0
        super().__init__(np.float64, A.shape)

    def _matvec(self, x):
        t0 = time.perf_counter()
        y = self.A @ x.ravel()
        self.seconds += time.perf_counter() - t0
        self.count += 1
        return y

    def _matmat(self, X):
        t0 = time.perf_counter()
        Y = self.A @ X
        self.seconds += time.perf_counter() - t0
        self.count += X.shape[1]
        return Y


def tridiagonal(n, diagonal_low, seed=0):
    """Symmetric tridiagonal with off-diagonal -1 and diagonal ``diagonal_low +
    U(0, 2)``: SPD with condition number at most 7 for ``diagonal_low = 3`` (CG and
    MINRES converge in a few dozen steps at any n); for ``diagonal_low = 2`` its
    extreme eigenvalues are less clustered than the Laplacian's (for eigsh)."""
    e = np.ones(n)
    d = diagonal_low + 2 * np.random.default_rng(seed).uniform(size=n)
    return scipy.sparse.diags([-e[:-1], d, -e[:-1]], [-1, 0, 1], format="csr")


def dense_spd(n, seed=0):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return (Q * np.geomspace(1.0, 1e3, n)) @ Q.T


def numpy_hutchinson(A, num_matvecs, rng):
    Z = rng.integers(0, 2, size=(A.shape[0], num_matvecs)).astype(np.float64) * 2 - 1
    return float(np.einsum("ij,ij->", Z, A.matmat(Z))) / num_matvecs


def measure(fn, A, repeats):
    """Median over ``repeats`` runs of (total seconds, seconds in matvecs, count)."""
    runs = []
    for _ in range(repeats):
        op = Timed(A)
        t0 = time.perf_counter()
        fn(op)
        runs.append((time.perf_counter() - t0, op.seconds, op.count))
    return min(runs, key=lambda r: abs(r[0] - statistics.median(x[0] for x in runs)))


def rosenbrock_hessian(n, noise=0.0):
    """hessgrad's matrix-free Hessian of the extended Rosenbrock function at its minimum
    x = 1 (positive definite there, eigenvalues in about [0.5, 1802]; at n = 10,000 a 1%
    perturbation of x already makes it indefinite): the operator these solvers exist for,
    one compiled HVP per matvec."""
    import hessgrad as hg
    import hessgrad.numpy as hnp

    def f(x):
        return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    x = 1.0 + noise * np.random.default_rng(4).standard_normal(n)
    return hg.HessianOperator(f, x)


def mlp_hessian(width=100, samples=1000, seed=0):
    """hessgrad's Hessian operator of a tanh network's mean squared error (20 inputs, hidden
    layers of ``width`` and 80 units, 10,261 parameters for width 100; indefinite) at a random
    point: an operator whose product costs milliseconds, as in Hessian analytics of models."""
    import hessgrad as hg
    import hessgrad.numpy as hnp
    rng = np.random.default_rng(seed)
    X, sizes = rng.standard_normal((samples, 20)), (20, width, 80, 1)
    y = np.sin(X.sum(1))
    shapes, k = [], 0
    for a, b in zip(sizes[:-1], sizes[1:]):
        shapes.append((k, (a, b), k + a * b, b))
        k += a * b + b

    def f(w):
        h = X
        for i, (s, ws, e, b) in enumerate(shapes):
            h = h @ hnp.reshape(w[s:e], ws) + w[e:e + b]
            if i < len(shapes) - 1:
                h = hnp.tanh(h)
        r = h[:, 0] - y
        return hnp.mean(r * r)
    return hg.HessianOperator(f, 0.1 * rng.standard_normal(k))


def timing_table(title, n, repeats, cases):
    print(f"\nn = {n:,} ({title})")
    print(f"  {'solver':<16}{'matvecs ours/peer':>19}{'t ours ms':>11}"
          f"{'t peer ms':>11}{'t ratio':>8}{'overhead ours':>15}{'overhead peer':>15}")
    for name, (M, ours, theirs) in cases.items():
        (t1, m1, c1), (t2, m2, c2) = measure(ours, M, repeats), measure(theirs, M, repeats)
        o1, o2 = (t1 - m1) / t1, (t2 - m2) / t2
        print(f"  {name:<16}{f'{c1}/{c2}':>19}{t1 * 1e3:>11.2f}{t2 * 1e3:>11.2f}"
              f"{t1 / t2:>8.2f}{o1:>15.0%}{o2:>15.0%}")


def solver_cases(n, A, A_eig, linear=True):
    """cg and minres on ``A`` (if ``linear``), eigsh LA k=6 on ``A_eig``, Hutchinson on
    ``A``, each beside its peer."""
    b = np.random.default_rng(2).standard_normal(n)
    v0 = np.random.default_rng(3).standard_normal(n)
    cases = {
        "cg": (A, lambda C: solvers.cg(C, b, rtol=1e-8),
               lambda C: sla.cg(C, b, rtol=1e-8)),
        "minres": (A, lambda C: solvers.minres(C, b, rtol=1e-8),
                   lambda C: sla.minres(C, b, rtol=1e-8)),
        "eigsh LA k=6": (A_eig,
                         lambda C: solvers.eigsh(C, k=6, which="LA", tol=1e-8, v0=v0),
                         lambda C: sla.eigsh(C, k=6, which="LA", tol=1e-8, v0=v0)),
        "hutchinson 100": (A, lambda C: solvers.hutchinson(C, 100, rng=0),
                           lambda C: numpy_hutchinson(C, 100,
                                                      np.random.default_rng(0))),
    }
    if not linear:
        del cases["cg"], cases["minres"]
    return cases


def eigsh_cases():
    lap = scipy.sparse.diags([-np.ones(999), 2 * np.ones(1000), -np.ones(999)],
                             [-1, 0, 1], format="csr")
    matrices = {
        "tridiag 1e3": tridiagonal(1000, 2.0), "tridiag 1e4": tridiagonal(10_000, 2.0),
        "dense SPD 1e3": dense_spd(1000),
        "geometric 1e4": scipy.sparse.diags(np.geomspace(1, 1e4, 10_000), format="csr"),
        "indefinite 1e4": scipy.sparse.diags(
            np.random.default_rng(5).standard_normal(10_000), format="csr"),
        "Laplacian 1e3": lap,
    }
    for name, A in matrices.items():
        for which in ("LA", "SA", "LM"):
            if name.startswith("geometric") and which == "SA":
                continue
            for k in (1, 6):
                yield name, A, which, k


def eigsh_sweep():
    print("\neigsh matvecs at tol=1e-8 (same v0 and ncv): ours / ARPACK")
    worse = total_ours = total_arpack = 0
    for name, A, which, k in eigsh_cases():
        v0 = np.random.default_rng(3).standard_normal(A.shape[0])
        ours, theirs = Timed(A), Timed(A)
        w = solvers.eigsh(ours, k=k, which=which, tol=1e-8, v0=v0,
                          return_eigenvectors=False)
        ws = sla.eigsh(theirs, k=k, which=which, tol=1e-8, v0=v0,
                       return_eigenvectors=False, maxiter=5000)
        err = np.abs(w - np.sort(ws)).max() / np.abs(ws).max()
        worse += ours.count > theirs.count
        total_ours += ours.count
        total_arpack += theirs.count
        print(f"  {name:<15}{which} k={k}  {ours.count:>6} / {theirs.count:<6}"
              f"{ours.count / theirs.count:6.2f}   max rel. difference {err:.0e}")
    print(f"  more matvecs than ARPACK in {worse} case(s); totals {total_ours} / "
          f"{total_arpack}")


def eigsh_random_cases():
    """Random diagonal spectra (n = 3000; uniform, normal, exponential, and the square
    root of uniform, dense at the top; three draws each) x LA/SA x k = 3, 6, 10 with the
    default basis, and k = 4, 6 with the smallest usual one (``ncv = 2k + 1``): cases not
    tuned for, to check that a change to eigsh's restarts is general."""
    draws = {"uniform": lambda r, n: r.uniform(size=n),
             "normal": lambda r, n: r.standard_normal(n),
             "exponential": lambda r, n: r.exponential(size=n),
             "sqrt uniform": lambda r, n: np.sqrt(r.uniform(size=n))}
    for seed in range(3):
        for name, draw in draws.items():
            A = scipy.sparse.diags(draw(np.random.default_rng(100 + seed), 3000), format="csr")
            for which in ("LA", "SA"):
                for k, ncv in ((3, None), (6, None), (10, None), (4, 9), (6, 13)):
                    yield f"{name} {seed}", A, which, k, ncv


def eigsh_random_sweep():
    print("\neigsh matvecs on random spectra at tol=1e-8 (same v0 and ncv): ours / ARPACK")
    worse = total_ours = total_arpack = 0
    worst = (0.0, "")
    for name, A, which, k, ncv in eigsh_random_cases():
        v0 = np.random.default_rng(3).standard_normal(A.shape[0])
        ours, theirs = Timed(A), Timed(A)
        w = solvers.eigsh(ours, k=k, which=which, tol=1e-8, v0=v0, ncv=ncv, maxiter=10**5,
                          return_eigenvectors=False)
        ws = sla.eigsh(theirs, k=k, which=which, tol=1e-8, v0=v0, ncv=ncv, maxiter=10**5,
                       return_eigenvectors=False)
        err = np.abs(w - np.sort(ws)).max() / np.abs(ws).max()
        ratio = ours.count / theirs.count
        worse += ours.count > theirs.count
        total_ours += ours.count
        total_arpack += theirs.count
        label = f"{name:<15}{which} k={k:<3}ncv={ncv or 'default':<8}"
        worst = max(worst, (ratio, label))
        print(f"  {label}{ours.count:>6} / {theirs.count:<6}{ratio:6.2f}   "
              f"max rel. difference {err:.0e}")
    print(f"  more matvecs than ARPACK in {worse} case(s); totals {total_ours} / "
          f"{total_arpack}; worst ratio {worst[0]:.2f} ({worst[1].strip()})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="n = 10,000 only, 3 repeats (default: 10^4 and 10^5, 5)")
    parser.add_argument("--eigsh-sweep", action="store_true",
                        help="also the 34-case eigsh matvec sweep (about 2 minutes)")
    parser.add_argument("--eigsh-random", action="store_true",
                        help="also eigsh's matvec counts on 120 random spectra (about 2 minutes)")
    args = parser.parse_args()
    solvers.cg(np.eye(3), np.ones(3))          # compile (load) the Numba kernels first
    solvers.minres(np.eye(3), np.ones(3))
    solvers.eigsh(np.eye(30), k=2, rng=0)
    repeats = 3 if args.quick else 5
    sizes = (10_000,) if args.quick else (10_000, 100_000)
    for n in sizes:
        A = tridiagonal(n, 3.0)
        A @ np.ones((n, 100))    # the first 100-column product pays page faults (~5x)
        timing_table("sparse tridiagonal, cond <= 7; eigsh on a random tridiagonal; "
                     "hutchinson's peer is plain numpy", n, repeats,
                     solver_cases(n, A, tridiagonal(n, 2.0)))
    for n in sizes:
        # At x = 1 the top eigenvalues cluster so tightly that eigsh needs ~250k matvecs
        # (ARPACK ~300k); eigsh runs at a perturbed, indefinite point instead.
        A, A_eig = rosenbrock_hessian(n), rosenbrock_hessian(n, noise=0.01)
        # trace and compile (products and 100-column blocks) outside the timing
        A @ np.ones(n), A_eig @ np.ones(n), A.matmat(np.ones((n, 100)))
        timing_table("hg.HessianOperator of the extended Rosenbrock function at x = 1, "
                     "cond ~ 3600; eigsh at x = 1 + 0.01 noise", n, repeats,
                     solver_cases(n, A, A_eig))
    H = mlp_hessian()
    n = H.shape[0]
    H @ np.ones(n), H.matmat(np.ones((n, 100)))
    timing_table("hg.HessianOperator of a tanh MLP's loss, 1000 samples; indefinite, so "
                 "eigsh and Hutchinson only", n, repeats,
                 solver_cases(n, H, H, linear=False))
    if args.eigsh_sweep:
        eigsh_sweep()
    if args.eigsh_random:
        eigsh_random_sweep()


if __name__ == "__main__":
    main()
