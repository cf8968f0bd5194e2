"""piecewise, apply_along_axis, apply_over_axes, fromfunction, fill_diagonal, put_along_axis:
values and dtypes equal numpy's (eager and traced), numpy's in-place behaviour on ndarrays and
on hessgrad arrays, jax.numpy's ``inplace=False``, derivatives to second order in both modes
against finite differences and JAX x64, and the error paths."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(13)


def randn(*shape):
    return rng.standard_normal(shape)


X = np.array([-2.0, 0.5, 3.0, 1.5, -0.25])
A = np.arange(24.0).reshape(2, 3, 4)
R = np.array([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])

VALUE_ROWS = [  # (name, function of the module and x, x)
    ("piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v ** 2, 0.5]), X),
    ("piecewise no otherwise", lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: -v, 7.0]), X),
    ("piecewise later wins", lambda m, x: m.piecewise(x, [x < 1, x < 0], [1.0, 2.0]), X),
    ("piecewise int x", lambda m, x: m.piecewise(x, [x > 1], [lambda v: v * 1.5, 7]), np.array([1, 2, 3])),
    ("piecewise 0-d", lambda m, x: m.piecewise(x, [True], [lambda v: v * 3]), np.array(2.0)),
    ("piecewise single condition", lambda m, x: m.piecewise(x, x > 0, [lambda v: v + 1, -1.0]), X),
    ("piecewise args", lambda m, x: m.piecewise(x, [x > 0], [lambda v, s: v * s], 4.0), X),
    ("piecewise 2-D", lambda m, x: m.piecewise(x, [x > 10], [lambda v: v / 2, lambda v: -v]), A[0]),
    ("piecewise float32", lambda m, x: m.piecewise(x, [x < 0], [lambda v: v * 2]), X.astype(np.float32)),
    ("apply_along_axis sum", lambda m, a: m.apply_along_axis(lambda v: v.sum(), 1, a), A),
    ("apply_along_axis reverse", lambda m, a: m.apply_along_axis(lambda v: v[::-1], 0, a), A),
    ("apply_along_axis outer", lambda m, a: m.apply_along_axis(lambda v: m.outer(v, v), -1, a), A),
    ("apply_along_axis args", lambda m, a: m.apply_along_axis(lambda v, p: v ** p, 2, a, 2), A),
    ("apply_along_axis 1-D", lambda m, a: m.apply_along_axis(lambda v: v.max(), 0, a), X),
    ("apply_over_axes", lambda m, a: m.apply_over_axes(m.sum, a, [0, 2]), A),
    ("apply_over_axes int axis", lambda m, a: m.apply_over_axes(m.cumsum, a, -1), A),
    ("apply_over_axes keeps", lambda m, a: m.apply_over_axes(m.mean, a, (1,)), A),
    ("fill_diagonal", lambda m, a: _filled(m, a, 5.0), np.zeros((3, 3))),
    ("fill_diagonal tall", lambda m, a: _filled(m, a, [1.0, 2.0]), np.zeros((5, 3))),
    ("fill_diagonal wrap", lambda m, a: _filled(m, a, [1.0, 2.0, 3.0], True), np.zeros((7, 3))),
    ("fill_diagonal wide", lambda m, a: _filled(m, a, 9.0), np.ones((2, 4))),
    ("fill_diagonal 3-D", lambda m, a: _filled(m, a, 7.0), np.zeros((3, 3, 3))),
    ("fill_diagonal int", lambda m, a: _filled(m, a, 2.7), np.zeros((3, 3), int)),
    ("put_along_axis", lambda m, a: _put(m, a, np.argmax(R, axis=1, keepdims=True), 99.0, 1), R),
    ("put_along_axis axis 0", lambda m, a: _put(m, a, np.array([[1, 0, 1]]), np.array([[-1.0, -2.0, -3.0]]), 0), R),
    ("put_along_axis repeated", lambda m, a: _put(m, a, np.array([[0, 0], [2, 2]]), np.array([[1.0, 2.0]]), -1), R),
    ("put_along_axis negative", lambda m, a: _put(m, a, np.array([[-1], [-3]]), 0.0, 1), R),
]


def _filled(m, a, val, wrap=False):
    if m is np:
        a = a.copy()
        np.fill_diagonal(a, val, wrap)
        return a
    return m.fill_diagonal(a, val, wrap, inplace=False)


def _put(m, a, idx, values, axis):
    if m is np:
        a = a.copy()
        np.put_along_axis(a, idx, values, axis)
        return a
    return m.put_along_axis(a, idx, values, axis, inplace=False)


@pytest.mark.parametrize("name,f,x", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_match_numpy_eager_and_traced(name, f, x):
    want = np.asarray(f(np, x))
    traced_ok = not name.startswith("piecewise") or "later" in name or "2-D" in name or \
        name in ("piecewise", "piecewise no otherwise", "piecewise args", "piecewise float32")
    results = [f(hnp, x)] + ([hg.function(lambda v: f(hnp, v))(x)] if traced_ok else [])
    for got in results:
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
        np.testing.assert_array_equal(got, want)


def test_fromfunction():
    for shape, dtype in (((2, 3), float), ((3,), int), ((0, 2), float)):
        got = hnp.fromfunction(lambda *ij: sum(k * 10 ** n for n, k in enumerate(ij)), shape,
                               dtype=dtype)
        want = np.fromfunction(lambda *ij: sum(k * 10 ** n for n, k in enumerate(ij)), shape,
                               dtype=dtype)
        assert isinstance(got, hg.Tensor) and got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert hnp.fromfunction(lambda i, j: i == j, (2, 2)).dtype == bool
    # differentiable in what the function closes over
    g = hg.grad(lambda s: hnp.sum(hnp.fromfunction(lambda i, j: (i - j) * s, (3, 3))))(2.0)
    assert float(g) == 0.0
    g = hg.grad(lambda s: hnp.sum(hnp.fromfunction(lambda i, j: s ** (i + j), (2, 2))))(3.0)
    np.testing.assert_allclose(float(g), 0 + 1 + 1 + 2 * 3.0)


def test_numpy_in_place_on_ndarrays():
    a = np.zeros((3, 3))
    assert hnp.fill_diagonal(a, [1.0, 2.0]) is None
    np.testing.assert_array_equal(a, np.diag([1.0, 2.0, 1.0]))
    r = R.copy()
    assert hnp.put_along_axis(r, np.array([[0], [1]]), -5.0, 1) is None
    np.testing.assert_array_equal(r, [[-5.0, 30.0, 20.0], [60.0, -5.0, 50.0]])
    # numpy functions given ndarrays stay numpy's; given tensors they come here, and write
    # the tensor in place as numpy writes an array
    t = hg.constant(np.zeros((2, 2)))
    assert np.fill_diagonal(t, 1.0) is None
    np.testing.assert_array_equal(t.numpy(), np.eye(2))
    r, t = R.copy(), hg.constant(R)
    assert np.put_along_axis(t, np.array([[0], [1]]), -5.0, 1) is None
    np.put_along_axis(r, np.array([[0], [1]]), -5.0, 1)
    np.testing.assert_array_equal(t.numpy(), r)
    t = hnp.array(R)
    assert hnp.put_along_axis(t, np.array([2, 0]), 7.0, None) is None  # flat positions
    np.testing.assert_array_equal(t.numpy(), [[7.0, 30.0, 7.0], [60.0, 40.0, 50.0]])


def test_in_place_writers_differentiate():
    x = randn(3)

    def f(v):
        m = hnp.zeros((3, 3))
        hnp.fill_diagonal(m, v ** 2)
        hnp.put_along_axis(m, np.array([[2], [0], [1]]), v[:, None] * 3.0, axis=1)
        return hnp.sum(m @ v)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-13)


def test_traced_piecewise_applies_functions_everywhere():
    x = np.array([-1.0, 2.0, 0.5])
    f = hg.function(lambda x: hnp.piecewise(x, [x < 0, x > 1], [lambda v: v ** 3, lambda v: -v]))
    np.testing.assert_array_equal(f(x), np.piecewise(x, [x < 0, x > 1], [lambda v: v ** 3, lambda v: -v]))
    g = hg.function(hg.grad(lambda x: hnp.sum(hnp.piecewise(x, [x < 0], [lambda v: v ** 3, lambda v: -v]))))
    np.testing.assert_allclose(g(x), [3.0, -1.0, -1.0])


GRAD_ROWS = [
    ("piecewise", lambda x: hnp.piecewise(x, [x < 0, x > 1], [lambda v: v ** 3, lambda v: hnp.sin(v), 0.5]),
     (np.array([-1.3, 0.4, 2.2, 1.7]),)),
    ("piecewise args", lambda x, s: hnp.piecewise(x, [x > 0], [lambda v, s: v * s, lambda v, s: s * s], s),
     (np.array([-1.3, 0.4, 2.2]), np.array(1.5))),
    ("apply_along_axis", lambda a: hnp.apply_along_axis(lambda v: hnp.outer(v, v[::-1]), 1, a), (randn(2, 3),)),
    ("apply_over_axes", lambda a: hnp.apply_over_axes(lambda v, ax: hnp.sum(v ** 2, axis=ax), a, [0, 1]), (randn(2, 3),)),
    ("fill_diagonal", lambda a, v: hnp.fill_diagonal(a ** 2, v * v, inplace=False), (randn(4, 3), randn(2))),
    ("fill_diagonal 3-D", lambda a: hnp.fill_diagonal(a * a, a[0, 0, 0], inplace=False), (randn(2, 2, 2),)),
    ("put_along_axis", lambda a, v: hnp.put_along_axis(a ** 2, np.array([[2], [0]]), v ** 3, 1, inplace=False),
     (randn(2, 3), randn(2, 1))),
    ("put_along_axis flat", lambda a, v: hnp.put_along_axis(a * a, np.array([0, 4]), v, None, inplace=False),
     (randn(2, 3), randn(2))),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["piecewise", "apply_along_axis", "apply_over_axes", "fill_diagonal",
                                  "put_along_axis"])
def test_derivatives_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x, t = randn(3, 3), randn(3, 3)
    w = np.arange(9.0).reshape(3, 3)
    cases = {
        # jax.numpy's piecewise applies each function to every element and selects
        "piecewise": lambda m, x: m.sum(m.piecewise(x, [x < 0], [lambda v: v ** 3, lambda v: m.sin(v)]) * w),
        "apply_along_axis": lambda m, x: m.sum(m.apply_along_axis(lambda v: v ** 3 * v[0], 1, x) * w),
        "apply_over_axes": lambda m, x: m.sum(m.apply_over_axes(lambda v, ax: m.cumsum(v ** 2, axis=ax), x, [0, 1]) * w),
        "fill_diagonal": lambda m, x: m.sum(m.fill_diagonal(x ** 2, x[0, 1] ** 3, inplace=False) * w),
        "put_along_axis": lambda m, x: m.sum(m.put_along_axis(x ** 2, np.array([[1], [2], [0]]), x[:, :1] ** 3,
                                                              axis=1, inplace=False) * w),
    }
    ours, theirs = (lambda x: cases[name](hnp, x)), (lambda x: cases[name](jnp, x))
    np.testing.assert_allclose(hg.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.hvp(ours)(x, t), jax.jvp(jax.grad(theirs), (x,), (t,))[1],
                               rtol=1e-10, atol=1e-12)


_OUTSIDE = hnp.zeros((2, 3))


def _write_outside(a):  # writes a traced value into an array made outside the trace
    hnp.put_along_axis(_OUTSIDE, np.zeros((2, 1), int), a[:, :1], 1)
    return a


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.piecewise(X, [X < 0], []), ValueError, r"piecewise: with 1 condition\(s\), either 1 or 2 functions"),
    (lambda: hnp.piecewise(X, [X[:2] < 0], [1.0]), ValueError, r"piecewise: a condition of shape \(2,\)"),
    (lambda: hnp.apply_along_axis(np.sum, 0, np.zeros((3, 0))), ValueError, "apply_along_axis: Cannot apply_along_axis"),
    (lambda: hnp.apply_along_axis(np.sum, 2, np.zeros((3, 2))), np.exceptions.AxisError, "apply_along_axis: axis 2"),
    (lambda: hnp.apply_along_axis(lambda v: v[: int(v[0]) + 1], 1, np.array([[0.0, 1.0], [1.0, 2.0]])),
     ValueError, "apply_along_axis: func1d returned shape"),
    (lambda: hnp.apply_over_axes(lambda v, ax: hnp.sum(v), A, [0]), ValueError, "apply_over_axes: function is not returning"),
    (lambda: hnp.fromfunction(lambda i: i, (2,), like=np.ones(1)), TypeError, "fromfunction: like="),
    (lambda: hnp.fill_diagonal(hg.Variable(np.zeros((2, 2))), 1.0), TypeError, "fill_diagonal: a Variable is not written in place"),
    (lambda: hg.grad(lambda v: hnp.fill_diagonal(np.zeros((2, 2)), v) or v)(1.0), TypeError, "drop its gradient"),
    (lambda: hnp.fill_diagonal([[0.0]], 1.0), TypeError, "fill_diagonal: the array written into must be an array, got list"),
    (lambda: hnp.fill_diagonal(np.zeros(3), 1.0, inplace=False), ValueError, "fill_diagonal: array must be at least 2-d"),
    (lambda: hnp.fill_diagonal(np.zeros((2, 3, 3)), 1.0, inplace=False), ValueError, "fill_diagonal: All dimensions"),
    (lambda: hg.function(_write_outside)(R), ValueError, "put_along_axis: writes a value computed from traced inputs"),
    (lambda: hnp.put_along_axis(R, np.zeros(2, int), 1.0, 1, inplace=False), ValueError, "put_along_axis: `indices` and `arr` must have the same number"),
    (lambda: hnp.put_along_axis(R, np.zeros((2, 1)), 1.0, 1, inplace=False), IndexError, "put_along_axis: `indices` must be an integer"),
    (lambda: hnp.put_along_axis(R, np.zeros((2, 1), int), 1.0, None, inplace=False), ValueError, "put_along_axis: when axis=None"),
    (lambda: hnp.put_along_axis(R, np.zeros((2, 1), int), 1.0, 2, inplace=False), np.exceptions.AxisError, "put_along_axis: axis 2"),
    (lambda: hnp.put_along_axis(R, np.zeros((2, 1), int), np.ones(3), 1, inplace=False), ValueError, "cannot be broadcast"),
    (lambda: hg.function(lambda a, i: hnp.put_along_axis(a, i, 0.0, 1, inplace=False))(R, np.zeros((2, 1), int)),
     TypeError, "put_along_axis: argument 'indices' must be concrete"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
