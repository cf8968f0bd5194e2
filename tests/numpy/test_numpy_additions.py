"""numpy names added in stop 21: dtype rules, error state, index helpers, angle, block,
vecdot/matvec/vecmat, linalg.vecdot/tensorinv/tensorsolve/cond. Values, dtypes and errors
equal numpy's (eager and traced), derivatives to second order against finite differences
(and JAX's conventions for complex input)."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

rng = np.random.default_rng(21)


def randn(*shape):
    return rng.standard_normal(shape)


def crandn(*shape):
    return randn(*shape) + 1j * randn(*shape)


def well(n, *lead):
    return randn(*lead, n, n) + 3 * np.eye(n)


# (name, function of the hnp/np module, args): values and dtypes equal numpy's, eager and
# traced (hg.function).
VALUE_ROWS = [
    ("angle real", lambda m, x: m.angle(x), (randn(5),)),
    ("angle complex", lambda m, x: m.angle(x), (crandn(2, 3),)),
    ("angle deg", lambda m, x: m.angle(x, deg=True), (crandn(4),)),
    ("angle complex64", lambda m, x: m.angle(x), (crandn(3).astype(np.complex64),)),
    ("angle int", lambda m, x: m.angle(x), (np.array([1, -2, 0]),)),
    ("angle 0-d", lambda m, x: m.angle(x), (np.complex128(1 - 1j),)),
    ("vecdot", lambda m, x, y: m.vecdot(x, y), (crandn(3, 4), randn(4))),
    ("vecdot axis 0", lambda m, x, y: m.vecdot(x, y, axis=0), (randn(4, 3), randn(4, 3))),
    ("vecdot broadcast", lambda m, x, y: m.vecdot(x, y), (randn(2, 1, 4), randn(3, 4))),
    ("vecdot empty", lambda m, x, y: m.vecdot(x, y), (randn(0, 3), randn(3))),
    ("matvec", lambda m, a, x: m.matvec(a, x), (randn(2, 3, 4), randn(4))),
    ("matvec stacks", lambda m, a, x: m.matvec(a, x), (randn(3, 4), crandn(2, 4))),
    ("vecmat", lambda m, x, a: m.vecmat(x, a), (crandn(4), randn(4, 3))),
    ("vecmat stacks", lambda m, x, a: m.vecmat(x, a), (randn(2, 4), randn(5, 2, 4, 3))),
    ("linalg.vecdot", lambda m, x, y: m.linalg.vecdot(x, y, axis=-2), (randn(4, 2), randn(4, 2))),
    ("tensorinv ind=1", lambda m, a: m.linalg.tensorinv(a, ind=1), (randn(6, 2, 3) + np.eye(6).reshape(6, 2, 3),)),
    ("tensorinv ind=2", lambda m, a: m.linalg.tensorinv(a), (randn(2, 3, 6) + np.eye(6).reshape(2, 3, 6),)),
    ("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b), (well(6).reshape(2, 3, 2, 3), randn(2, 3))),
    ("tensorsolve axes", lambda m, a, b: m.linalg.tensorsolve(a, b, axes=(0,)), (well(6).reshape(6, 2, 3), randn(2, 3))),
    ("tensorsolve b raveled", lambda m, a, b: m.linalg.tensorsolve(a, b), (well(6).reshape(6, 2, 3), randn(6))),
    ("block 2-D", lambda m, a, b: m.block([[a, b], [np.ones((1, 2)), 7.0 * np.ones((1, 3))]]),
     (randn(2, 2), randn(2, 3))),
    ("block 1-D", lambda m, a, b: m.block([a, b, 1.0]), (randn(2), randn(3))),
    ("block deep", lambda m, a, b: m.block([[[a]], [[b]]]), (randn(2, 2), randn(2, 2))),
    ("block scalars", lambda m, a, b: m.block([[a, b], [b, a]]), (np.float64(2.0), np.float64(3.0))),
]
for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
    VALUE_ROWS.append((f"cond p={p}", lambda m, a, p=p: m.linalg.cond(a, p), (well(4),)))
    VALUE_ROWS.append((f"cond stack p={p}", lambda m, a, p=p: m.linalg.cond(a, p), (well(3, 2),)))
VALUE_ROWS += [
    ("cond wide", lambda m, a: m.linalg.cond(a), (randn(3, 5),)),
    ("cond complex", lambda m, a: m.linalg.cond(a), (crandn(3, 3),)),
    ("cond zero matrix", lambda m, a: m.linalg.cond(a), (np.zeros((2, 2)),)),
]


@pytest.mark.parametrize("name,f,args", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_match_numpy_eager_and_traced(name, f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.asarray(f(np, *args))
        eager = np.asarray(f(hnp, *args))
        traced = np.asarray(hg.function(lambda *a: f(hnp, *a))(*args))
    for got in (eager, traced):
        assert got.shape == want.shape
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


# (name, function of hnp, args): derivatives to order 2 in both modes.
GRAD_ROWS = [
    ("angle", lambda z: hnp.angle(z * (1 + 0.5j)), (randn(3),)),
    ("angle deg", lambda x: hnp.angle(x + 2j * x ** 2, deg=True), (randn(4) + 1.5,)),
    ("vecdot", lambda x, y: hnp.vecdot(x, y), (randn(3, 4), randn(4))),
    ("vecdot axis", lambda x, y: hnp.vecdot(x * y, y, axis=0), (randn(4, 3), randn(4, 3))),
    ("matvec", lambda a, x: hnp.matvec(a, x), (randn(2, 3, 4), randn(4))),
    ("vecmat", lambda x, a: hnp.vecmat(x, a), (randn(2, 4), randn(4, 3))),
    ("tensorinv", lambda a: hnp.linalg.tensorinv(a, ind=1), (randn(6, 2, 3) + 3 * np.eye(6).reshape(6, 2, 3),)),
    ("tensorsolve", lambda a, b: hnp.linalg.tensorsolve(a, b, axes=(0,)), (well(6).reshape(6, 2, 3), randn(2, 3))),
    ("cond 2", lambda a: hnp.linalg.cond(a), (well(3),)),
    ("cond -2", lambda a: hnp.linalg.cond(a, -2), (well(3),)),
    ("cond fro", lambda a: hnp.linalg.cond(a, "fro"), (well(3),)),
    ("cond 1", lambda a: hnp.linalg.cond(a, 1), (well(3),)),
    ("block", lambda a, b: hnp.block([[a, b], [b.T, a[:1, :1] * 2.0]]), (randn(2, 2), randn(2, 1))),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_angle_complex_gradient_follows_jax():
    # JAX's convention for a real loss of complex z: d/dRe(z) - i d/dIm(z), from finite
    # differences along the real and imaginary parts
    z = np.array([1 + 1j, 2 - 1j, -0.5 + 0.3j])
    g = hg.grad(lambda z: hnp.sum(hnp.angle(z)))(z)
    eps = 1e-6
    fd = [(np.sum(np.angle(z + eps * e)) - np.sum(np.angle(z - eps * e))) / (2 * eps)
          for e in (np.eye(3)[k] for k in range(3))]
    fd_i = [(np.sum(np.angle(z + 1j * eps * e)) - np.sum(np.angle(z - 1j * eps * e))) / (2 * eps)
            for e in (np.eye(3)[k] for k in range(3))]
    np.testing.assert_allclose(g, np.array(fd) - 1j * np.array(fd_i), rtol=1e-7)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_])
def test_angle_of_integers_has_numpys_dtype(dtype):
    # integers were cast to float64 before arctan2; numpy promotes int8 to float16, int16 to
    # float32 (booleans: float64)
    a = np.array([1, 0, 1], dtype)
    for deg in (False, True):
        expected = np.angle(a, deg=deg)
        for got in (hnp.angle(a, deg=deg), hg.function(lambda a: hnp.angle(a, deg=deg))(a)):
            assert np.asarray(got).dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


def test_dtype_rules_read_tensors():
    x32 = hg.constant(np.ones(2, np.float32))
    assert hnp.result_type(x32, 1.0) == np.float32  # the Python float stays weak
    assert hnp.result_type(x32, np.float64) == np.float64
    assert hnp.can_cast(x32, hnp.float64) and not hnp.can_cast(hg.constant(1.0), hnp.int32)
    assert hnp.isdtype(x32, "real floating")
    assert hnp.issubdtype(x32.dtype, hnp.floating)
    assert hnp.promote_types(hnp.float32, hnp.complex64) == np.complex64
    # numeric scalar types stand for numpy's (subclasses equal to them, which cast tensors
    # when called); abstract and non-numeric ones are numpy's
    for name in ("complex64", "bool", "int16", "uint64", "intp", "double", "single", "cdouble",
                 "csingle", "int_", "intc", "uint", "longlong", "half", "longdouble",
                 "clongdouble"):  # numpy's (and autograd's) C names too
        ours, theirs = getattr(hnp, name), getattr(np, name)
        assert ours == theirs and issubclass(ours, theirs) and np.dtype(ours) == theirs
    for name in ("number", "integer", "inexact", "floating", "complexfloating", "object_",
                 "str_", "datetime64"):
        assert getattr(hnp, name) is getattr(np, name)
    assert hnp.zeros(2, dtype=hnp.int_).dtype == np.int_

    def f(x, s):  # a traced Python float is weak: float32 wins, as in numpy
        assert hnp.result_type(x, s) == np.float32
        return x * s
    assert hg.function(f)(np.ones(2, np.float32), 0.5).dtype == np.float32


def test_astype_casts_and_differentiates():
    x = randn(3)
    for dtype in (np.float32, np.complex128, np.int64):
        got = hnp.astype(x, dtype)
        assert got.dtype == np.astype(x, dtype).dtype
        np.testing.assert_array_equal(np.asarray(got), np.astype(x, dtype))
    assert hg.function(lambda x: hnp.astype(x, hnp.float32))(x).dtype == np.float32
    np.testing.assert_allclose(hg.grad(lambda x: hnp.sum(hnp.astype(x, hnp.float32) * x))(x),
                               2 * x, rtol=1e-6)
    with pytest.raises(ValueError, match="astype: device"):
        hnp.astype(x, np.float32, device="gpu")


def test_errstate_governs_eager_ops():
    with hnp.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            hnp.log(hg.constant(0.0))
    old = hnp.seterr(all="ignore")
    try:
        assert hnp.geterr()["divide"] == "ignore"
    finally:
        hnp.seterr(**old)


def test_index_helpers_are_numpy_and_index_tensors():
    a = randn(4, 4)
    for name, args in [("tril_indices", (4,)), ("triu_indices", (4, 1)), ("tril_indices", (3, -1, 5)),
                       ("diag_indices", (3, 3)), ("indices", ((2, 3),))]:
        for got, want in zip(getattr(hnp, name)(*args), getattr(np, name)(*args)):
            np.testing.assert_array_equal(got, want)
    t = hg.constant(a)
    for name in ("tril_indices_from", "triu_indices_from"):
        for k in (-1, 0, 2):
            want = a[getattr(np, name)(a, k)]
            np.testing.assert_array_equal(t[getattr(hnp, name)(t, k)].numpy(), want)
    np.testing.assert_array_equal(t[hnp.diag_indices_from(t)].numpy(), np.diag(a))
    np.testing.assert_array_equal(t[hnp.ix_([0, 2], [1, 3])].numpy(), a[np.ix_([0, 2], [1, 3])])
    assert hnp.unravel_index(hg.constant(7), (3, 4)) == np.unravel_index(7, (3, 4))
    assert hnp.ravel_multi_index(([1, 2], [3, 0]), (3, 4)).tolist() == [7, 8]
    g = hg.grad(lambda a: hnp.sum(a[hnp.tril_indices_from(a, -1)] ** 2))(a)
    np.testing.assert_allclose(g, 2 * np.tril(a, -1))
    # traced: the helpers read static shapes
    f = hg.function(lambda a: hnp.sum(a[hnp.triu_indices_from(a)]))
    np.testing.assert_allclose(f(a), np.sum(a[np.triu_indices(4)]))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.vecdot(randn(3), randn(4)), ValueError, r"vecdot: .*shape \(3,\).*\(4,\)"),
    (lambda: hnp.vecdot(randn(3), randn(3), axis=1), np.exceptions.AxisError, "vecdot: axis 1"),
    (lambda: hnp.matvec(randn(3, 4), randn(3)), ValueError, "matvec: .*contracted"),
    (lambda: hnp.matvec(randn(4), randn(4)), ValueError, "matvec: x1 has shape"),
    (lambda: hnp.vecmat(randn(3), randn(4, 3)), ValueError, "vecmat: .*contracted"),
    (lambda: hnp.linalg.tensorinv(randn(2, 3, 4)), np.linalg.LinAlgError, "tensorinv: .*not square"),
    (lambda: hnp.linalg.tensorinv(randn(2, 2), ind=0), ValueError, "tensorinv: ind"),
    (lambda: hnp.linalg.tensorsolve(randn(3, 2, 4), randn(3)), np.linalg.LinAlgError, "tensorsolve: "),
    (lambda: hnp.linalg.tensorsolve(randn(2, 2), randn(2), axes=(5,)), np.exceptions.AxisError, "tensorsolve: axes"),
    (lambda: hnp.linalg.cond(randn(3)), np.linalg.LinAlgError, r"cond: x has shape \(3,\)"),
    (lambda: hnp.linalg.cond(randn(2, 3), 1), np.linalg.LinAlgError, "cond: p=1 needs square"),
    (lambda: hnp.block([]), ValueError, "block: arrays is an empty list"),
    (lambda: hnp.block((randn(2), randn(2))), TypeError, "block: arrays is a tuple"),
    (lambda: hnp.block([[randn(2)], randn(2)]), ValueError, "block: .*different depths"),
    (lambda: hnp.block([[randn(2, 2), randn(2, 3)], [randn(1, 2)]]), ValueError, "block: "),
    (lambda: hnp.tril_indices_from(randn(3)), ValueError, "tril_indices_from: arr must be a 2-D"),
    (lambda: hnp.diag_indices_from(randn(2, 3)), ValueError, "diag_indices_from: .*equal"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_printing_a_tensor_prints_its_value():
    x = hg.constant(np.array([1.0, 2.5, -1.0 / 3.0]))
    assert hnp.array2string(x, precision=3) == np.array2string(np.asarray(x), precision=3)
    assert hnp.array_str(x) == np.array_str(np.asarray(x))
    with hnp.printoptions(precision=2):
        assert hnp.get_printoptions()["precision"] == 2
        assert np.array2string(x) == "[ 1.    2.5  -0.33]"
    assert hnp.format_float_positional(0.5) == "0.5"
    assert hnp.min_scalar_type(300) == np.uint16
