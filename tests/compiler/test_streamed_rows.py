"""Products with a large matrix and its transpose around a row-wise map run as one row kernel
(hessgrad.compiler.streamed): the same numbers as the unfused program, to rounding, and only
where each row's weight needs that row alone."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning

pytest.importorskip("numba")

RNG = np.random.default_rng(3)
M, D = 203, 9  # 203 = 4 * 50 + 3: the kernel's last rows go one by one
X = RNG.standard_normal((M, D))
Y = np.sign(RNG.standard_normal(M))
W, V = 0.3 * RNG.standard_normal(D), RNG.standard_normal(D)


@pytest.fixture(autouse=True)
def small_matrices(monkeypatch):
    monkeypatch.setattr(tuning, "STREAM_MIN_SIZE", 100)


def logistic(w):
    return hnp.mean(hnp.logaddexp(0.0, -Y * (X @ w))) + 5e-4 * hnp.sum(w * w)


def least_squares(w, X, y):  # the matrix a feed, not a constant
    r = X @ w - y
    return 0.5 * hnp.sum(r * r)


def _steps(f, *args):
    return f.get_concrete_function(*args).compiled.optimized_steps


def _agree(make, *args):
    fast, plain = hg.function(make), hg.function(make, jit_kernels=False)
    got, want = fast(*args), plain(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    return _steps(fast, *args)


def test_logistic_gradient_reads_the_matrix_once():
    steps = _agree(hg.grad(logistic), W)
    assert sum(s.count("matmul") for s in steps) == 2  # both inside the one streamed op
    assert any(s.startswith("v") and "rows_streamed[matmul,multiply,sigmoid" in s
               for s in steps), steps
    s = 1.0 / (1.0 + np.exp(Y * (X @ W)))
    np.testing.assert_allclose(hg.function(hg.grad(logistic))(W),
                               X.T @ (-Y * s) / M + 1e-3 * W, rtol=1e-12)


def test_value_and_gradient_keep_the_products_the_value_needs():
    steps = _agree(hg.value_and_grad(logistic), W)
    streamed_op = next(s for s in steps if "rows_streamed" in s)
    # the products of the rows are written out: the loss needs them all
    assert streamed_op.endswith(f"-> float64[{M}], float64[{D}]"), streamed_op
    assert any(s.split(" = ")[1].startswith("logaddexp(") for s in steps)


def test_hvp_takes_both_products_in_the_rows_and_make_hvp_the_tangent_part():
    steps = _agree(hg.hvp(logistic), W, V)
    assert "matmul,matmul" in next(s for s in steps if "rows_streamed" in s)
    product = hg.make_hvp(logistic)(W)
    np.testing.assert_allclose(product(V), hg.function(hg.hvp(logistic), jit_kernels=False)(W, V),
                               rtol=1e-13, atol=1e-15)


def test_the_matrix_may_be_a_feed():
    # (larger than a program that compiles whole; any layout)
    X2, y2 = np.asfortranarray(RNG.standard_normal((301, 12))), RNG.standard_normal(301)
    w2 = RNG.standard_normal(12)
    steps = _agree(hg.grad(least_squares), w2, X2, y2)
    assert any("rows_streamed" in s for s in steps)
    np.testing.assert_allclose(hg.function(hg.grad(least_squares))(w2, X2, y2),
                               X2.T @ (X2 @ w2 - y2), rtol=1e-12)


def test_weights_that_need_every_row_stay_two_products():
    def log_sum_exp(w):  # a row's weight needs the sum over all rows
        return hnp.log(hnp.sum(hnp.exp(X @ w)))

    steps = _agree(hg.grad(log_sum_exp), W)
    assert not any("rows_streamed" in s for s in steps)


def test_small_matrices_stay_on_blas(monkeypatch):
    monkeypatch.setattr(tuning, "STREAM_MIN_SIZE", X.size + 1)
    assert not any("rows_streamed" in s for s in _steps(hg.function(hg.grad(logistic)), W))


def test_scalings_of_the_seed_run_in_the_rows():
    # the backward pass scales its seed by a 0-d and a (1,) argument after the first product:
    # those ops join the kernel, which reads the arguments as scalars
    def scaled(w, c, d):
        return hnp.sum(hnp.tanh(X @ w) * c * d)

    args = (W, np.float64(1.7), np.array([0.3]))
    steps = _agree(hg.grad(scaled), *args)
    assert len(steps) == 1 and steps[0].startswith("v") and "rows_streamed" in steps[0], steps
    np.testing.assert_allclose(hg.function(hg.grad(scaled))(*args),
                               X.T @ (0.51 * (1.0 - np.tanh(X @ W) ** 2)), rtol=1e-12)
