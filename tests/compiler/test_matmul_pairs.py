"""Two matrix-vector products with one large matrix run as one pass over it (matmul_pair)."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning
from hessgrad.kernels.products import matvec_pair, vecmat_pair

RNG = np.random.default_rng(0)
X = RNG.standard_normal((300, 40))  # 12,000 elements: above the lowered threshold below
Y = np.where(RNG.standard_normal(300) > 0, 1.0, -1.0)
W = 0.1 * RNG.standard_normal(40)
V = RNG.standard_normal(40)


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    monkeypatch.setattr(tuning, "MIN_MATRIX_SIZE", 10_000)


def logistic(w):
    return hnp.mean(hnp.logaddexp(0.0, -Y * (X @ w))) + 0.5e-2 * hnp.sum(w * w)


def logistic_hvp(w, v):  # the analytic Hessian-vector product
    s = 1.0 / (1.0 + np.exp(Y * (X @ w)))
    return X.T @ (s * (1.0 - s) * (X @ v)) / X.shape[0] + 1e-2 * v


def _steps(f, *args):
    return f.get_concrete_function(*args).compiled.optimized_steps


def test_hvp_of_a_linear_model_reads_the_data_once_forward():
    f = hg.function(hg.hvp(logistic))
    steps = _steps(f, W, V)
    assert sum("matmul_pair(" in s for s in steps) == 1, steps
    np.testing.assert_allclose(f(W, V), logistic_hvp(W, V), rtol=1e-12, atol=1e-14)
    off = hg.function(hg.hvp(logistic), jit_kernels=False)
    assert not any("matmul_pair" in s for s in _steps(off, W, V))
    np.testing.assert_allclose(f(W, V), off(W, V), rtol=1e-12, atol=1e-14)


def test_cotangents_times_the_same_matrix_merge_on_the_left():
    def f(g, h):
        return g @ X, h @ X, X @ W
    compiled = hg.function(f)
    g, h = RNG.standard_normal(300), RNG.standard_normal(300)
    steps = _steps(compiled, g, h)
    assert any("matmul_pair(" in s for s in steps), steps
    for got, want in zip(compiled(g, h), (g @ X, h @ X, X @ W)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_product_that_needs_the_other_is_not_merged():
    def f(w):
        return X @ hnp.sin(X @ w)[:40]
    compiled = hg.function(f)
    steps = _steps(compiled, W)
    assert sum("matmul(" in s for s in steps) == 2, steps
    np.testing.assert_allclose(compiled(W), X @ np.sin(X @ W)[:40], rtol=1e-12)


def test_small_matrices_stay_on_blas(monkeypatch):
    monkeypatch.setattr(tuning, "MIN_MATRIX_SIZE", 10 ** 6)
    f = hg.function(hg.hvp(logistic))
    assert not any("matmul_pair" in s for s in _steps(f, W, V))


def test_pair_kernels_match_numpy_and_fall_back():
    A = RNG.standard_normal((50, 30))
    x, y, g, h = (RNG.standard_normal(n) for n in (30, 30, 50, 50))
    for got, want in zip(matvec_pair(A, x, y) + vecmat_pair(A, g, h),
                         (A @ x, A @ y, g @ A, h @ A)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    F = np.asfortranarray(A)  # not C-contiguous: two numpy products
    for got, want in zip(matvec_pair(F, x, y) + vecmat_pair(F, g, h),
                         (F @ x, F @ y, g @ F, h @ F)):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError):  # mismatched lengths get numpy's error
        matvec_pair(A, x, y[:5])
