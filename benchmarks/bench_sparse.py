"""Sparse Hessians: hessgrad.sparse_hessian on Rosenbrock, side by side with one gradient, a
hand-written sparse Rosenbrock Hessian (scipy.sparse.diags from the analytic formula), the
dense hg.hessian and JAX's jitted dense jax.hessian (n <= 5000, skipped without JAX).

    python benchmarks/bench_sparse.py [--n 100000] [--dense-n 2000 5000] [--repeats 7]

Times are medians per call, after a warm-up call (the first sparse call, which traces,
detects the pattern and colors, is reported separately). Single-threaded BLAS.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import hessgrad as hg  # noqa: E402
import hessgrad.numpy as hnp  # noqa: E402


def rosen(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosen_hess_sparse(x):
    """The analytic Rosenbrock Hessian as a tridiagonal CSR matrix (the hand-written peer)."""
    diag = np.zeros_like(x)
    diag[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    diag[1:] += 200.0
    off = -400.0 * x[:-1]
    return sp.diags([off, diag, off], [-1, 0, 1], format="csr")


def median_time(fn, repeats, min_time=0.05):
    fn()
    calls, per_call = 1, []
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or calls >= 1000:
            break
        calls *= 2
    per_call.append(elapsed / calls)
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - start) / calls)
    return statistics.median(per_call)


def fmt(seconds):
    return f"{seconds * 1e3:10.3f} ms"


def large(n, repeats):
    x = np.random.default_rng(0).uniform(-1.0, 2.0, n)
    H = hg.sparse_hessian(rosen)
    start = time.perf_counter()
    h = H(x)
    first = time.perf_counter() - start
    info = H.info(x)
    reference = rosen_hess_sparse(x)
    error = abs(h - reference).max() / abs(reference).max()
    grad = hg.function(hg.grad(rosen))
    try:    # the same plan run step by step, as the batched HVPs are
        plain = hg.function(hg.grad(rosen), optimize=False)
    except TypeError:
        plain = grad
    x2 = x + 0.01
    t_sparse = median_time(lambda: H(x2), repeats)
    t_grad = median_time(lambda: grad(x2), repeats)
    t_plain = median_time(lambda: plain(x2), repeats)
    t_hand = median_time(lambda: rosen_hess_sparse(x2), repeats)
    print(f"Rosenbrock n = {n}: {info['nnz']} nonzeros, {info['ncolors']} colors "
          f"(star coloring), relative error vs analytic {error:.1e}")
    print(f"  first sparse_hessian call (trace, detect, color): {fmt(first)}")
    print(f"  sparse_hessian (later calls)      {fmt(t_sparse)}   "
          f"{t_sparse / t_grad:6.2f} x one gradient")
    print(f"  one gradient (hg.function(grad))  {fmt(t_grad)}")
    print(f"  one gradient, plan not compiled   {fmt(t_plain)}   "
          f"sparse_hessian = {t_sparse / t_plain:6.2f} x this")
    print(f"  hand-written scipy.sparse.diags   {fmt(t_hand)}   "
          f"sparse_hessian is {t_sparse / t_hand:6.2f} x slower")


def dense_peers(sizes, repeats):
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
    except ImportError:
        jax = None
        print("JAX not installed: its column is skipped")
    print(f"{'n':>7} {'sparse_hessian':>15} {'hg.hessian':>15} {'jax.hessian(jit)':>18} "
          f"{'dense/sparse':>13} {'jax/sparse':>11}")
    for n in sizes:
        x = np.random.default_rng(1).uniform(-1.0, 2.0, n)
        H = hg.sparse_hessian(rosen)
        H(x)
        t_sparse = median_time(lambda: H(x), repeats)
        dense = hg.hessian(rosen)
        assert np.allclose(dense(x), H(x).toarray())
        t_dense = median_time(lambda: dense(x), max(1, repeats // 3), min_time=0.0)
        t_jax = float("nan")
        if jax is not None:
            def jrosen(z):
                return jnp.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2)
            jh = jax.jit(jax.hessian(jrosen))
            assert np.allclose(np.asarray(jh(x)), H(x).toarray())
            t_jax = median_time(lambda: jh(x).block_until_ready(), max(1, repeats // 3),
                                min_time=0.0)
        print(f"{n:>7} {fmt(t_sparse):>15} {fmt(t_dense):>15} {fmt(t_jax):>18} "
              f"{t_dense / t_sparse:12.1f}x {t_jax / t_sparse:10.1f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dense-n", type=int, nargs="*", default=[1000, 5000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    large(args.n, args.repeats)
    print()
    dense_peers(args.dense_n, args.repeats)


if __name__ == "__main__":
    main()
