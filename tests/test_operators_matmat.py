"""HessianOperator.matmat: the products of a block of columns, in blocks of one compiled
size (issue 37 part 2): correct for any number of columns, nothing traced or compiled again
for a new number of columns. Speed is measured in benchmarks/bench_matmat.py, not here."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning
from hessgrad.tracing.function import ConcreteFunction


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mlp_loss(p):
    X = np.linspace(-1.0, 1.0, 24).reshape(8, 3)
    W, b = p[:6].reshape(3, 2), p[6:8]
    h = hnp.tanh(hnp.matmul(X, W) + b)
    return hnp.sum(h ** 2) + 0.1 * hnp.sum(p ** 4)


CASES = [(rosenbrock, np.linspace(-1.0, 1.5, 12)), (mlp_loss, np.linspace(-0.5, 0.4, 8))]


@pytest.mark.parametrize("f,x", CASES, ids=["rosenbrock", "mlp"])
@pytest.mark.parametrize("k", [0, 1, 2, 5, tuning.MATMAT_BLOCK, 13, 2 * tuning.MATMAT_BLOCK + 3])
def test_matmat_matches_dense_hessian(f, x, k):
    H = hg.HessianOperator(f, x)
    dense = np.asarray(hg.hessian(f)(x))
    V = np.random.default_rng(k).standard_normal((x.size, k))
    out = H.matmat(V)
    assert out.shape == (x.size, k)
    np.testing.assert_allclose(out, dense @ V, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(H @ V, dense @ V, rtol=1e-10, atol=1e-10)


def test_matmat_of_strided_and_float32_columns():
    x = np.linspace(-1.0, 1.5, 12)
    H = hg.HessianOperator(rosenbrock, x)
    dense = np.asarray(hg.hessian(rosenbrock)(x))
    V = np.asfortranarray(np.random.default_rng(0).standard_normal((12, 11)))
    np.testing.assert_allclose(H.matmat(V[:, ::2]), dense @ V[:, ::2], rtol=1e-10)
    H32 = hg.HessianOperator(rosenbrock, x.astype(np.float32))
    out = H32.matmat(V.astype(np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, dense @ V, rtol=2e-4, atol=1e-3)


def test_no_trace_or_compilation_per_number_of_columns():
    def f(x):
        return hnp.sum(hnp.sin(x) * x ** 2) + hnp.sum(x[1:] * x[:-1])

    x = np.linspace(0.1, 1.0, 10)
    H = hg.HessianOperator(f, x)
    dense = np.asarray(hg.hessian(f)(x))
    H.matmat(np.eye(10)[:, :3])
    traces, programs = ConcreteFunction.traces, H.info()["batched_programs"]
    assert programs <= 1
    for k in (2, 3, 5, 7, 9, 10, 17, 25):
        V = np.random.default_rng(k).standard_normal((10, k))
        np.testing.assert_allclose(H.matmat(V), dense @ V, rtol=1e-10, atol=1e-10)
    # a new point of the same f: the trace and the block program are shared
    H2 = hg.HessianOperator(f, x + 0.5)
    np.testing.assert_allclose(H2.matmat(np.eye(10)[:, :6]),
                               np.asarray(hg.hessian(f)(x + 0.5))[:, :6], rtol=1e-10)
    traces_after = ConcreteFunction.traces
    assert H2.info()["batched_programs"] == H.info()["batched_programs"] == programs
    # hg.hessian(f)(x + 0.5) may trace (its own cache); the operators did not
    assert traces_after - traces <= 1
    assert H.nmatvec == 3 + sum((2, 3, 5, 7, 9, 10, 17, 25))


def test_to_dense_and_linear_operator():
    x = np.linspace(-1.0, 1.5, 12)
    H = hg.HessianOperator(rosenbrock, x)
    dense = np.asarray(hg.hessian(rosenbrock)(x))
    np.testing.assert_allclose(H.to_dense(), dense, rtol=1e-10, atol=1e-10)
    L = H.aslinearoperator()
    V = np.random.default_rng(3).standard_normal((12, 6))
    np.testing.assert_allclose(L.matmat(V), dense @ V, rtol=1e-10, atol=1e-10)


def test_lazy_trace_runs_one_by_one_until_the_block_program_is_compiled(monkeypatch):
    monkeypatch.setenv("HESSGRAD_COMPILE", "lazy")
    monkeypatch.setattr(tuning, "TIER_BACKGROUND", False)  # compile in this thread

    def f(x):
        return hnp.sum(hnp.cos(x) * x ** 3)

    x = np.linspace(0.1, 1.0, 9)
    H = hg.HessianOperator(f, x)
    dense = np.asarray(hg.hessian(f)(x))
    results = []
    for k in (5, 11, 4, 16, 9):
        V = np.random.default_rng(k).standard_normal((9, k))
        results.append(np.allclose(H.matmat(V), dense @ V, rtol=1e-10, atol=1e-10))
    assert all(results)
    assert H.info()["batched_programs"] == 1  # compiled once hot, for the block size only
