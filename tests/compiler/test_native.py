"""Whole-graph kernels compiled by llvmlite (hessgrad.compiler.native): the same numbers as the
Numba-compiled kernel text and as numpy, special values included, and programs too large for
Numba's compile times (the HVP of a 200-op chain) run as one function."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler import loops, native, scalar, wholegraph
from hessgrad.kernels import tuning

pytest.importorskip("llvmlite")


def _compiled(fn, *args):
    f = hg.function(fn)
    return f(*args), f.get_concrete_function(*args).compiled


def _numba_only(monkeypatch):
    monkeypatch.setattr(wholegraph, "_native_kernel", lambda *a: None)


def _same(a, b, rtol=1e-14):
    outs, refs = (a, b) if isinstance(b, (tuple, list)) else ((a,), (b,))
    for x, y in zip(outs, refs):
        assert type(x) is type(y) and np.shape(x) == np.shape(y)
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_allclose(x, y, rtol=rtol, atol=0)


def chain(x):
    for i in range(200):
        x = hnp.sin(x) if i % 2 == 0 else x * 1.01
    return hnp.sum(x)


def test_program_past_numbas_size_runs_as_one_native_function():
    x, v = np.linspace(0.1, 1.0, 10), np.linspace(-1, 1, 10)
    out, compiled = _compiled(hg.hvp(chain), x, v)
    assert compiled.whole_graph and compiled.ops_after > tuning.MAX_OPS
    assert compiled.backend == "native"
    _same(out, hg.hvp(chain)(x, v), rtol=1e-12)
    H = hg.hessian(chain)(x)  # diagonal: one batched product through the same path
    np.testing.assert_allclose(np.diag(H), hg.hvp(chain)(x, np.ones(10)), rtol=1e-12)
    assert np.count_nonzero(H - np.diag(np.diag(H))) == 0


SPECIAL = np.array([-np.inf, -3.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 40.0, 800.0, np.inf,
                    np.nan])


def elementwise(x):
    y = x * 0.5 + 1.0
    return (hnp.maximum(x, 0.5), hnp.minimum(x, y), hnp.sign(x), hg.sigmoid(x),
            hnp.logaddexp(x, y), hnp.logaddexp(x, x), hnp.where(x > 0.25, x, -y),
            hnp.isfinite(x), hnp.isnan(x), hnp.isinf(x), hnp.abs(x) ** 1.5, x / y,
            hnp.exp(-x), hnp.tanh(x), hnp.arctan(x), hnp.expm1(-x * 0.01),
            x != y, x >= 0.0, hnp.logical_not(x < 1.0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_special_values_match_numba_and_numpy(monkeypatch):
    out, compiled = _compiled(elementwise, SPECIAL)
    assert compiled.whole_graph and compiled.backend == "native"
    eager = elementwise(SPECIAL)
    for a, b in zip(out, eager):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-15, atol=0)
        assert a.dtype == np.asarray(b).dtype
    _numba_only(monkeypatch)
    by_numba, compiled = _compiled(elementwise, SPECIAL)
    assert compiled.backend == "numba"
    for a, b in zip(out, by_numba):
        np.testing.assert_array_equal(a, b)  # the same operations: the same bits


X = np.random.default_rng(0).standard_normal((6, 3))


def mlp(w):
    h = hnp.tanh(X @ hnp.reshape(w[0:12], (3, 4)) + w[12:16])
    r = h @ hnp.reshape(w[16:20], (4, 1))
    return hnp.mean(r * r) + hnp.sum(hnp.transpose(hnp.reshape(w[:12], (3, 4))) ** 2)


def rosenbrock(x):
    return hnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def scatter(x):
    y = x[1:] * x[:-1] + x[0]
    return hnp.sum(y[::2] * hnp.cos(x[1::2])) + hnp.mean(x * x)


@pytest.mark.parametrize("f, n", [(mlp, 20), (rosenbrock, 9), (scatter, 8)])
def test_gradients_hvps_and_values_match_numba(f, n, monkeypatch):
    rng = np.random.default_rng(n)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
    cases = [(hg.value_and_grad(f), (x,)), (hg.hvp(f), (x, v)), (hg.grad(f), (x,))]
    results = []
    for fn, args in cases:
        out, compiled = _compiled(fn, *args)
        assert compiled.whole_graph and compiled.backend == "native"
        _same(out, fn(*args), rtol=1e-12)
        results.append(out)
    _numba_only(monkeypatch)
    for (fn, args), out in zip(cases, results):
        by_numba, compiled = _compiled(fn, *args)
        assert compiled.backend == "numba"
        _same(out, by_numba, rtol=1e-15)


def test_dense_hessian_batched_program():
    x = np.random.default_rng(3).uniform(-1, 1, 20)
    H = hg.hessian(mlp)(x)
    cols = np.stack([hg.hvp(mlp)(x, e) for e in np.eye(20)], axis=1)
    np.testing.assert_allclose(H, cols, rtol=1e-12, atol=1e-14)


def test_text_outside_the_subset_falls_back_to_numba(monkeypatch):
    with pytest.raises(native.Unsupported):  # Python's arithmetic on booleans: an integer
        v0, s = scalar.Array("v0", (3,), np.float64), scalar.Const(True)
        kernel = loops.Kernel([v0], [loops.Assign(scalar.Var("t"), s + s)], [])
        native.NativeKernel(kernel, loops.python_source(kernel))
    monkeypatch.setattr(native.NativeKernel, "__init__",
                        lambda *a: (_ for _ in ()).throw(native.Unsupported("test")))
    x = np.linspace(0, 1, 5)
    out, compiled = _compiled(hg.grad(rosenbrock), x)
    assert compiled.whole_graph and compiled.backend == "numba"
    _same(out, hg.grad(rosenbrock)(x), rtol=1e-12)


def test_empty_and_zero_d_values():
    f = hg.function(lambda x, s: (hnp.sum(x * s), x * s + 1.0, s * 2.0))
    for x in (np.zeros(0), np.arange(4.0)):
        out = f(x, np.float64(3.0))
        ref = (np.sum(x * 3.0), x * 3.0 + 1.0, np.float64(6.0))
        for a, b in zip(out, ref):
            np.testing.assert_allclose(a, b)
            assert np.shape(a) == np.shape(b)
