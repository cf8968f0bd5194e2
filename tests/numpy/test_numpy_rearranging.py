"""matrix_transpose, unstack, rollaxis, resize, compress, extract, trim_zeros, partition,
argpartition, nanargmax, nanargmin: values and dtypes equal numpy's (eager, and traced where
the result's shape is static), derivatives to second order in both modes against finite
differences and JAX x64, and the error paths."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads
from numpy_checks import assert_same_as_numpy

rng = np.random.default_rng(9)


def randn(*shape):
    return rng.standard_normal(shape)


A = randn(3, 4, 5)
NANS = randn(3, 4)
NANS[1, 2] = NANS[2, 0] = np.nan

# (name, function of the module, args, traces): values equal numpy's.
VALUE_ROWS = [
    ("matrix_transpose", lambda m, x: m.matrix_transpose(x), (A,), True),
    ("matrix_transpose 2-D complex", lambda m, x: m.matrix_transpose(x), (randn(2, 3) + 1j,), True),
    ("matrix_transpose empty", lambda m, x: m.matrix_transpose(x), (np.zeros((2, 0, 3)),), True),
    ("unstack", lambda m, x: m.unstack(x), (A,), True),
    ("unstack axis -1", lambda m, x: m.unstack(x, axis=-1), (A,), True),
    ("unstack 1-D", lambda m, x: m.unstack(x), (np.arange(3),), True),
    ("unstack empty", lambda m, x: m.unstack(x, axis=1), (np.zeros((2, 0)),), True),
    ("rollaxis", lambda m, x: m.rollaxis(x, 2), (A,), True),
    ("rollaxis start", lambda m, x: m.rollaxis(x, 0, 3), (A,), True),
    ("rollaxis negative", lambda m, x: m.rollaxis(x, -1, -2), (A,), True),
    ("rollaxis same", lambda m, x: m.rollaxis(x, 1, 1), (A,), True),
    ("rollaxis float32", lambda m, x: m.rollaxis(x, 1), (A.astype(np.float32),), True),
    ("resize", lambda m, x: m.resize(x, (2, 7)), (A,), True),
    ("resize int", lambda m, x: m.resize(x, 7), (np.arange(3),), True),
    ("resize empty source", lambda m, x: m.resize(x, (2, 2)), (np.zeros(0),), True),
    ("resize to empty", lambda m, x: m.resize(x, 0), (A,), True),
    ("resize 0-d", lambda m, x: m.resize(x, (2, 3)), (np.float32(5.0),), True),
    ("resize complex", lambda m, x: m.resize(x, (3,)), (np.array([1 + 2j, 3j]),), True),
    ("compress", lambda m, x: m.compress([1, 0, 1, 0], x, axis=1), (A,), True),
    ("compress flat", lambda m, x: m.compress([0, 1], x), (A,), True),
    ("compress short", lambda m, x: m.compress([True], x, axis=-1), (A,), True),
    ("compress 0-d", lambda m, x: m.compress([True], x), (np.array(5.0),), True),
    ("compress none", lambda m, x: m.compress([False, False], x, axis=0), (A,), True),
    ("extract", lambda m, x: m.extract(A > 0, x), (A,), True),
    ("extract short", lambda m, x: m.extract([1, 0, 1], x), (A,), True),
    ("extract int", lambda m, x: m.extract(x % 2 == 0, x), (np.arange(7),), False),
    ("trim_zeros", lambda m, x: m.trim_zeros(x), (np.array([0, 0, 1.0, 2.0, 0.0]),), False),
    ("trim_zeros b", lambda m, x: m.trim_zeros(x, "b"), (np.array([0, 0, 1.0, 2.0, 0.0]),), False),
    ("trim_zeros F", lambda m, x: m.trim_zeros(x, "F"), (np.array([0, 0, 1, 2, 0]),), False),
    ("trim_zeros 2-D", lambda m, x: m.trim_zeros(x),
     (np.array([[0, 0, 0], [0, 1.0, 0], [0, 0, 0]]),), False),
    ("trim_zeros axis", lambda m, x: m.trim_zeros(x, axis=0),
     (np.array([[0, 0, 0], [0, 1.0, 0], [0, 0, 2.0]]),), False),
    ("trim_zeros all zero", lambda m, x: m.trim_zeros(x), (np.zeros((2, 2)),), False),
    ("trim_zeros 0-d", lambda m, x: m.trim_zeros(x), (np.array(0.0),), False),
    ("trim_zeros empty", lambda m, x: m.trim_zeros(x), (np.zeros(0),), False),
    ("nanargmax", lambda m, x: m.nanargmax(x, axis=1), (NANS,), True),
    ("nanargmin axis 0", lambda m, x: m.nanargmin(x, axis=0), (NANS,), True),
    ("nanargmax flat", lambda m, x: m.nanargmax(x), (NANS,), True),
    ("nanargmin keepdims", lambda m, x: m.nanargmin(x, axis=-1, keepdims=True), (NANS,), True),
    ("nanargmax int", lambda m, x: m.nanargmax(x), (np.array([3, 9, 1]),), True),
    ("nanargmax float32", lambda m, x: m.nanargmax(x, 0), (NANS.astype(np.float32),), True),
    ("nanargmin complex", lambda m, x: m.nanargmin(x), (np.array([1 + 1j, np.nan, 1 - 1j]),), True),
    ("nanargmax 0-d", lambda m, x: m.nanargmax(x), (np.float64(2.0),), True),
]


@pytest.mark.parametrize("name,f,args,traces", VALUE_ROWS, ids=[r[0] for r in VALUE_ROWS])
def test_values_match_numpy(name, f, args, traces):
    want = f(np, *args)
    results = [f(hnp, *args)]
    if traces:
        results.append(hg.function(lambda *a: f(hnp, *a))(*args))
    for got in results:
        assert_same_as_numpy(want, got)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("kth,axis", [(0, 0), (2, 1), (-1, -1), ([1, 3], 1), (5, None),
                                      (np.array([0, 4]), -1)])
def test_partition_is_a_valid_partition_matching_numpys_kth_values(dtype, kth, axis):
    a = (randn(4, 6) * 5).astype(dtype)
    a[0, :2] = a[0, 2]  # ties
    got = hnp.partition(a, kth, axis=axis).numpy()
    want = np.partition(a, kth, axis=axis)
    assert got.dtype == want.dtype and got.shape == want.shape
    ax = 0 if axis is None else axis
    src = a.reshape(-1) if axis is None else a
    n = src.shape[ax]
    for k in np.ravel(kth):
        np.testing.assert_array_equal(np.take(got, k, axis=ax), np.take(want, k, axis=ax))
        k %= n
        pivot = np.take(got, [k], axis=ax)
        assert np.all(np.take(got, range(k), axis=ax) <= pivot)
        assert np.all(np.take(got, range(k + 1, n), axis=ax) >= pivot)
    # the same multiset of values in every slice, and argpartition picks them out
    np.testing.assert_array_equal(np.sort(got, axis=ax), np.sort(src, axis=ax))
    idx = hnp.argpartition(a, kth, axis=axis).numpy()
    assert idx.dtype == np.argpartition(a, kth, axis=axis).dtype
    np.testing.assert_array_equal(np.take_along_axis(src, idx, axis=ax), got)
    traced = hg.function(lambda x: hnp.partition(x, kth, axis=axis))(a)
    np.testing.assert_array_equal(traced, got)


def test_partition_with_nans_puts_them_last():
    a = np.array([3.0, np.nan, 1.0, 2.0])
    np.testing.assert_array_equal(hnp.partition(a, 2).numpy()[:3], np.partition(a, 2)[:3])
    assert np.isnan(hnp.partition(a, 2).numpy()[3])


GRAD_ROWS = [
    ("matrix_transpose", lambda x: hnp.matrix_transpose(x) * x.sum(), (randn(2, 3, 4),)),
    ("unstack", lambda x: hnp.unstack(x * x, axis=1), (randn(2, 3),)),
    ("rollaxis", lambda x: hnp.rollaxis(x ** 2, -1), (randn(2, 3, 4),)),
    ("resize", lambda x: hnp.resize(x ** 2, (3, 3)), (randn(2, 2),)),
    ("compress", lambda x: hnp.compress([1, 0, 1], x ** 3, axis=-1), (randn(2, 3),)),
    ("extract", lambda x: hnp.extract(np.array([[1, 0], [1, 1]]), x ** 2), (randn(2, 2),)),
    ("trim_zeros", lambda x: hnp.trim_zeros(x * np.array([0.0, 1.0, 1.0, 0.0])) ** 2, (randn(4),)),
    ("partition", lambda x: hnp.partition(x ** 2, 2, axis=1), (randn(3, 5),)),
    ("partition flat", lambda x: hnp.partition(x * x.sum(), [0, 3], axis=None), (randn(2, 3),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_partition_gradient_ties_share_like_sort():
    x = np.array([2.0, 1.0, 2.0, 5.0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.partition(x, 2)[2])(x), [0.5, 0, 0.5, 0])


@pytest.mark.parametrize("name", ["matrix_transpose", "unstack", "rollaxis", "resize", "compress",
                                  "extract", "trim_zeros", "partition"])
def test_derivatives_match_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x, t = randn(3, 4), randn(3, 4)
    cases = {
        "matrix_transpose": lambda m, x: m.sum(m.matrix_transpose(x) ** 3 * np.arange(12.0).reshape(4, 3)),
        "unstack": lambda m, x: sum(m.sum(v ** 3) * k for k, v in enumerate(m.unstack(x, axis=1))),
        "rollaxis": lambda m, x: m.sum(m.rollaxis(x, 1) ** 3 * np.arange(12.0).reshape(4, 3)),
        "resize": lambda m, x: m.sum(m.resize(x, (5, 3)) ** 3 * np.arange(15.0).reshape(5, 3)),
        "compress": lambda m, x: m.sum(m.compress(np.array([1, 0, 1]), x, axis=0) ** 3),
        "extract": lambda m, x: m.sum(m.extract(np.arange(12).reshape(3, 4) % 3 == 0, x) ** 3),
        "trim_zeros": lambda m, x: m.sum(m.trim_zeros(m.ravel(x) * np.r_[0, 0, np.ones(10)]) ** 3),
        "partition": lambda m, x: m.sum(m.partition(x, 1, axis=1)[:, 1] ** 3),
    }
    ours, theirs = (lambda x: cases[name](hnp, x)), (lambda x: cases[name](jnp, x))
    if name == "trim_zeros":  # jax.numpy needs concrete values here too: compare eagerly
        xs = x.copy()
        np.testing.assert_allclose(hg.grad(ours)(xs), jax.grad(lambda v: jnp.sum(
            (jnp.ravel(v) * np.r_[0, 0, np.ones(10)])[2:] ** 3))(xs), rtol=1e-12)
        return
    np.testing.assert_allclose(hg.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hg.hvp(ours)(x, t), jax.jvp(jax.grad(theirs), (x,), (t,))[1],
                               rtol=1e-10, atol=1e-12)


def test_nanargmax_all_nan_slices():
    a = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with pytest.raises(ValueError, match=r"nanargmax: All-NaN slice encountered .*\(2, 2\)"):
        hnp.nanargmax(a, axis=1)
    # traced, the values are unknown while tracing: an all-NaN slice answers -1 (jax.numpy's)
    np.testing.assert_array_equal(hg.function(lambda x: hnp.nanargmin(x, axis=1))(a), [-1, 0])


def test_data_dependent_lengths_say_so_when_traced():
    for call in (lambda c, x: hnp.compress(c, x), lambda c, x: hnp.extract(c, x)):
        with pytest.raises(TypeError, match="argument 'condition' .* must be known while a "
                                            "function is traced"):
            hg.function(call)(np.array([True, False]), randn(2))
    with pytest.raises(TypeError, match="trim_zeros: argument 'filt' .* must be known"):
        hg.function(hnp.trim_zeros)(randn(3))
    # a concrete condition with a traced array is fine
    np.testing.assert_array_equal(hg.function(lambda x: hnp.compress([0, 1], x))(np.arange(2.0)), [1.0])


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.matrix_transpose(randn(3)), ValueError, "matrix_transpose: Input array must be at least 2-dimensional"),
    (lambda: hnp.unstack(np.float64(1.0)), ValueError, "unstack: Input array must be at least 1-d"),
    (lambda: hnp.unstack(randn(2, 3), axis=2), np.exceptions.AxisError, "unstack: axis 2"),
    (lambda: hnp.rollaxis(randn(2, 3), 0, 4), np.exceptions.AxisError, "rollaxis: 'start' arg requires"),
    (lambda: hnp.rollaxis(randn(2, 3), 3), np.exceptions.AxisError, "rollaxis: axis 3"),
    (lambda: hnp.resize(randn(3), (-1, 2)), ValueError, "resize: all elements of `new_shape` must be non-negative"),
    (lambda: hnp.compress([[1, 0]], randn(2, 2), axis=0), ValueError, "compress: condition must be a 1-d array"),
    (lambda: hnp.compress([1, 0, 1, 1], randn(2, 3), axis=1), IndexError, "compress: index 3 is out of bounds for axis 1"),
    (lambda: hnp.compress([1], randn(2), out=np.ones(2)), ValueError, r"compress: output parameter out= has shape \(2,\)"),
    (lambda: hnp.extract([1, 0, 0, 1], randn(3)), IndexError, "extract: index 3 is out of bounds"),
    (lambda: hnp.trim_zeros(randn(3), "x"), ValueError, "trim_zeros: unexpected character"),
    (lambda: hnp.partition(randn(4), 4), ValueError, r"partition: kth\(=4\) out of bounds \(4\)"),
    (lambda: hnp.argpartition(randn(4), -5), ValueError, r"argpartition: kth\(=-5\) out of bounds"),
    (lambda: hnp.partition(randn(4), 1.5), TypeError, "partition: kth must be an integer"),
    (lambda: hnp.partition(randn(4), 1, kind="quicksort"), ValueError, "partition: kind must be 'introselect'"),
    (lambda: hnp.partition(np.float64(1.0), 0), np.exceptions.AxisError, "partition: axis -1 is out of bounds"),
    (lambda: hnp.partition(randn(2, 3), 1, axis=2), np.exceptions.AxisError, "partition: "),
    (lambda: hnp.nanargmin(np.zeros((0, 2)), axis=0), ValueError, "argmin: attempt to get argmin of an empty sequence"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
