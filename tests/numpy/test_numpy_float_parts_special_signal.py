"""ldexp, frexp, modf, i0, the window functions and unwrap: values, dtypes and signed zeros equal
numpy's (eager and traced), derivatives to second order in both modes against finite
differences and JAX x64, the ``ldexp`` / ``frexp_exponent`` / ``i0`` / ``i1`` primitives'
rows, and the error paths."""

import warnings

import numpy as np
import pytest
import scipy.special

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.ops import special
from hessgrad.testing import check_grads

COVERED = {"ldexp", "frexp_exponent", "i0", "i1"}

rng = np.random.default_rng(5)


def randn(*shape):
    return rng.standard_normal(shape)


EDGES = np.array([-2.5, -2.0, -0.0, 0.0, 0.3, 1.0, np.inf, -np.inf, np.nan, 1e-310, 7.25, -1e300])
FINITE = EDGES[np.isfinite(EDGES)]

VALUE_ROWS = [
    ("modf", lambda m, x: m.modf(x), (EDGES,)),
    ("modf float32", lambda m, x: m.modf(x), (EDGES.astype(np.float32),)),
    ("modf int", lambda m, x: m.modf(x), (np.array([1, -3]),)),
    ("modf 0-d", lambda m, x: m.modf(x), (np.float64(-3.5),)),
    ("modf empty", lambda m, x: m.modf(x), (np.zeros((0, 2)),)),
    ("frexp", lambda m, x: m.frexp(x), (EDGES,)),
    ("frexp float32", lambda m, x: m.frexp(x), (EDGES.astype(np.float32),)),
    ("frexp int", lambda m, x: m.frexp(x), (np.array([8, 3, 0]),)),
    ("frexp 0-d", lambda m, x: m.frexp(x), (np.float64(0.0),)),
    ("ldexp", lambda m, x, n: m.ldexp(x, n), (EDGES, np.int64(3))),
    ("ldexp float32", lambda m, x, n: m.ldexp(x, n), (EDGES.astype(np.float32), np.arange(12))),
    ("ldexp no overflow", lambda m, x, n: m.ldexp(x, n), (np.array([1e-300]), np.array([2000]))),
    ("ldexp int", lambda m, x, n: m.ldexp(x, n), (np.array([3, 4]), np.array(2))),
    ("ldexp broadcast", lambda m, x, n: m.ldexp(x, n), (np.array([2.0, -1.5]), np.array([[1], [-2]]))),
    ("ldexp int32 exponent", lambda m, x, n: m.ldexp(x, n), (randn(3), np.array([1, 2, 3], np.int32))),
    ("i0", lambda m, x: m.i0(x), (FINITE,)),
    ("i0 float32", lambda m, x: m.i0(x), (np.float32([1.0, -2.0, 9.0]),)),
    ("i0 int", lambda m, x: m.i0(x), (np.array([1, 2, 10]),)),
    ("i0 0-d", lambda m, x: m.i0(x), (np.float64(3.0),)),
    ("unwrap", lambda m, p: m.unwrap(p), (np.array([0.0, 3.0, 6.5, 1.0, -3.2, np.pi, -np.pi]),)),
    ("unwrap axis 0", lambda m, p: m.unwrap(p, axis=0), (randn(3, 5) * 4,)),
    ("unwrap period int odd", lambda m, p: m.unwrap(p, period=7), (np.arange(10) * 3,)),
    ("unwrap period int even", lambda m, p: m.unwrap(p, period=8), (np.arange(10) * 3,)),
    ("unwrap float32", lambda m, p: m.unwrap(p), (np.float32([0.0, 3.0, 6.5]),)),
    ("unwrap discont", lambda m, p: m.unwrap(p, discont=4.0), (np.array([0.0, 5.0, 9.0]),)),
    ("unwrap half period", lambda m, p: m.unwrap(p), (np.array([0.0, np.pi, 0.0, -np.pi]),)),
    ("unwrap degrees", lambda m, p: m.unwrap(p, period=360), (np.array([0.0, 350.0, 10.0, 200.0]),)),
    ("unwrap empty axis", lambda m, p: m.unwrap(p), (np.zeros((2, 0)),)),
]


@pytest.mark.parametrize("name,f,args", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_match_numpy_eager_and_traced(name, f, args):
    want = f(np, *args)
    for got in (f(hnp, *args), hg.function(lambda *a: f(hnp, *a))(*args)):
        wants, gots = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        for w, g in zip(wants, gots):
            w, g = np.asarray(w), np.asarray(g)
            assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
            np.testing.assert_array_equal(g, w)
            if w.dtype.kind == "f":
                np.testing.assert_array_equal(np.signbit(g), np.signbit(w))  # signed zeros


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning", "kaiser"])
@pytest.mark.parametrize("M", [-1, 0, 1, 2, 5, 6, 7.0])
def test_windows_equal_numpys(name, M):
    args = (M, 3.5) if name == "kaiser" else (M,)
    got, want = getattr(hnp, name)(*args).numpy(), getattr(np, name)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    # an eager tensor M is concrete; a traced one cannot set the length
    np.testing.assert_array_equal(getattr(hnp, name)(hg.constant(M), *args[1:]).numpy(), want)


def test_kaiser_with_tensor_beta_equals_numpy_and_traces():
    for M in (1, 4, 7):
        np.testing.assert_allclose(hnp.kaiser(M, hg.constant(2.5)).numpy(), np.kaiser(M, 2.5),
                                   rtol=1e-15)
        np.testing.assert_allclose(hg.function(lambda b: hnp.kaiser(M, b))(2.5),
                                   np.kaiser(M, 2.5), rtol=1e-15)


GRAD_ROWS = [
    ("ldexp", lambda x: hnp.ldexp(x, np.array([[3], [-2]])), (randn(2, 3),)),
    ("ldexp 0-d", lambda x: hnp.ldexp(x * x, 5), (np.array(0.7),)),
    ("ldexp broadcast x", lambda x: hnp.ldexp(x, np.arange(4).reshape(4, 1)), (randn(3),)),
    ("frexp mantissa", lambda x: hnp.frexp(x * x)[0], (randn(5) * 10,)),
    ("modf", lambda x: hnp.modf(x * x) + (hnp.modf(x)[0] ** 2,), (randn(2, 3) * 3,)),
    ("i0", lambda x: hnp.i0(x), (np.array([-3.0, -0.4, 0.7, 2.0, 9.5, 12.0]),)),
    ("i0 at 0", lambda x: hnp.i0(x * x * x), (np.array([0.0, 0.5]),)),
    ("i1 primitive", special.i1, (np.array([-3.0, -0.4, 0.7, 2.0, 9.5]),)),
    ("i1 at 0", lambda x: special.i1(x - 1.0), (np.array([1.0, 2.0]),)),
    ("kaiser beta", lambda b: hnp.kaiser(6, b), (np.array(3.2),)),
    ("unwrap", lambda p: hnp.unwrap(p * 3.0, axis=0), (randn(4, 3),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_derivative_values():
    x = np.array([-1.5, 0.25, 3.0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.i0(x)))(x), scipy.special.i1(x),
                               rtol=1e-14)
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.ldexp(x, [1, -1, 3])))(x),
                               [2.0, 0.5, 8.0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.frexp(x)[0]))(x),
                               2.0 ** -np.frexp(x)[1])
    fwd = hg.jvp(lambda x: hnp.modf(x), (x,), (np.ones(3),))[1]
    np.testing.assert_array_equal(fwd[0], 1.0)
    np.testing.assert_array_equal(fwd[1], 0.0)
    assert hg.grad(lambda x: hnp.sum(hnp.ldexp(x, 2)))(x.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", ["ldexp", "frexp", "modf", "i0", "kaiser", "unwrap"])
def test_derivatives_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x, t, c = randn(6) * 3, randn(6), randn(6)
    cases = {
        "ldexp": lambda m, x: m.sum(m.ldexp(x, np.arange(6) - 2) ** 2 * c),
        "frexp": lambda m, x: m.sum(m.frexp(x)[0] ** 3 * c),
        "modf": lambda m, x: m.sum(m.modf(x)[0] ** 3 * c + m.modf(x)[1]),
        "i0": lambda m, x: m.sum(m.i0(x) * c),
        "kaiser": lambda m, b: m.sum(m.kaiser(6, m.sum(b)) * c),
        "unwrap": lambda m, p: m.sum(m.unwrap(p) ** 2 * c),
    }
    ours, theirs = (lambda x: cases[name](hnp, x)), (lambda x: cases[name](jnp, x))
    np.testing.assert_allclose(hg.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hg.hvp(ours)(x, t), jax.jvp(jax.grad(theirs), (x,), (t,))[1],
                               rtol=1e-8, atol=1e-11)


def test_numpy_ufuncs_given_tensors_dispatch_here():
    x = hg.constant([1.5, -2.0])
    assert isinstance(np.ldexp(x, 2), hg.Tensor) and np.ldexp(x, 2).tolist() == [6.0, -8.0]
    m, e = np.frexp(x)
    assert m.tolist() == [0.75, -0.5] and e.tolist() == [1, 2]
    assert np.i0(x).tolist() == np.i0(x.numpy()).tolist()


def test_no_spurious_warnings_at_infinities():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hnp.modf(np.array([np.inf, -np.inf, np.nan]))
        hnp.frexp(np.array([np.inf, np.nan]))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.ldexp(np.ones(2), np.ones(2)), TypeError, "ldexp: the exponent x2 must be an integer"),
    (lambda: hnp.ldexp(np.ones(2, complex), 1), TypeError, "ldexp: argument 'x1' must be real"),
    (lambda: hnp.ldexp(np.ones(2), np.ones(3, int)), ValueError, r"ldexp: operands cannot be broadcast"),
    (lambda: hnp.ldexp(np.ones(2), 1, out=np.ones(3)), ValueError, "ldexp: non-broadcastable output operand"),
    (lambda: hnp.frexp(np.ones(2, complex)), TypeError, "frexp: argument 'x' must be real"),
    (lambda: hnp.modf(np.ones(2), out=(np.ones(2), None)), TypeError, "modf: out= is not supported"),
    (lambda: hnp.modf(np.ones(2), where=np.ones(2, bool)), TypeError, "modf: where= without out= is not supported"),
    (lambda: hnp.i0(np.ones(2, complex)), TypeError, "i0: i0 not supported for complex values"),
    (lambda: hnp.hanning(np.ones(2)), TypeError, "hanning: M must be a real number"),
    (lambda: hg.function(hnp.hamming)(np.array(5)), TypeError, "hamming: argument 'M' .* must be known while"),
    (lambda: hnp.kaiser(4, hg.constant([1.0, 2.0])), TypeError, "kaiser: beta must be a real scalar"),
    (lambda: hnp.unwrap(np.float64(1.0)), ValueError, r"unwrap: argument 'p' must be at least 1-D"),
    (lambda: hnp.unwrap(np.ones(3), axis=2), np.exceptions.AxisError, "unwrap: "),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
