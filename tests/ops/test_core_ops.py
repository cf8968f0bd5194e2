"""Structural primitives of ops/core.py and the elementwise/reduction/linalg rows written with
the engine (the numpy families add their own tables)."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.ops import core, linalg, reduction
from hessgrad.testing import check_grads

COVERED = {"sum_to", "broadcast_to", "add_n", "reshape", "stack", "unstack", "getitem",
           "scatter_add",
           "cast", "stop_gradient", "identity", "zeros_like", "ones_like", "zeros", "ones",
           "fill", "matmul", "einsum", "logsumexp", "sum", "mean", "max", "min"}

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


ROWS = [
    ("sum_to", lambda x: core.sum_to(x, shape=(1, 3)), (r(4, 2, 3),)),
    ("sum_to-0d", lambda x: core.sum_to(x, shape=()), (r(2, 3),)),
    ("sum_to-leading", lambda x: core.sum_to(x, shape=(3,)), (r(40, 3),)),
    ("broadcast_to", lambda x: core.broadcast_to(x, shape=(2, 4, 3)), (r(4, 1),)),
    ("add_n", lambda x, y, z: core.add_n(x, y, z), (r(3), r(3), r(3))),
    ("reshape", lambda x: core.reshape(x, shape=(3, -1)), (r(2, 6),)),
    ("stack", lambda x, y: core.stack(x, y, axis=-1), (r(2, 3), r(2, 3))),
    ("unstack", lambda x: core.stack(*core.unstack(x, axis=1)[::-1]) * x[:, 0], (r(2, 3),)),
    # parts nothing uses get no gradient (None, zero-filled by the rule)
    ("unstack-one-part", lambda x: core.unstack(x, axis=-1)[1] ** 2, (r(3, 2),)),
    ("getitem-slices", lambda x: x[1:, ::-2], (r(4, 5),)),
    ("getitem-repeated", lambda x: x[np.array([0, 2, 0, 0])], (r(3, 2),)),
    ("getitem-mask", lambda x: x[np.array([True, False, True])], (r(3),)),
    ("getitem-0d", lambda x: x[()] * x, (np.array(1.3),)),
    ("scatter_add", lambda g: core.scatter_add(g, index=np.array([1, 1, 0]), shape=(3,)),
     (r(3),)),
    ("cast", lambda x: core.cast(x, dtype=np.float64) * x, (r(3),)),
    ("identity", lambda x: core.identity(x) ** 2, (r(2),)),
    ("matmul-2d", linalg.matmul, (r(3, 4), r(4, 2))),
    ("matmul-batched-broadcast", linalg.matmul, (r(2, 1, 3, 4), r(5, 4, 2))),
    ("matmul-vec-mat", linalg.matmul, (r(4), r(2, 4, 3))),
    ("matmul-mat-vec", linalg.matmul, (r(2, 3, 4), r(4))),
    ("matmul-vec-vec", linalg.matmul, (r(4), r(4))),
    ("einsum-matmul", lambda a, b: linalg.einsum("ij,jk->ik", a, b), (r(3, 4), r(4, 2))),
    ("einsum-trace", lambda a: linalg.einsum("ii", a), (r(3, 3),)),
    ("einsum-diag", lambda a: linalg.einsum("ii->i", a), (r(3, 3),)),
    ("einsum-outer-sum", lambda a, b: linalg.einsum("i,j->", a, b), (r(3), r(2))),
    ("einsum-ellipsis", lambda a, b: linalg.einsum("...ij,...jk->...ik", a, b),
     (r(2, 3, 4), r(4, 2))),
    ("einsum-implicit", lambda a, b: linalg.einsum("ij,jk", a, b), (r(3, 4), r(4, 2))),
    ("logsumexp", lambda x: reduction.logsumexp(x, axis=-1), (r(3, 4),)),
    ("logsumexp-keepdims", lambda x: reduction.logsumexp(x, axis=(0, 2), keepdims=True),
     (r(2, 3, 2),)),
    ("logsumexp-all", lambda x: reduction.logsumexp(x), (r(5),)),
    ("sum-axis-neg", lambda x: reduction.sum(x, axis=-2), (r(2, 3, 4),)),
    ("sum-0d", lambda x: reduction.sum(x), (np.array(2.0),)),
    ("mean-keepdims", lambda x: reduction.mean(x, axis=(0, 1), keepdims=True), (r(2, 3, 4),)),
    ("max-ties", lambda x: reduction.max(x, axis=1), (np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]]),)),
    ("min", lambda x: reduction.min(x, axis=0, keepdims=True), (r(3, 2),)),
]


@pytest.mark.parametrize("name,f,args", ROWS, ids=[row[0] for row in ROWS])
def test_first_and_second_order(name, f, args):
    if name == "max-ties":
        # At ties the derivative is a symmetric subgradient: check the rule, not FD.
        g = hg.grad(lambda x: hg.reduce_sum(f(x)))(args[0])
        np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1, 0, 0]])
        return
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_empty_arrays():
    x = np.zeros((0, 3))
    g = hg.grad(lambda x: hg.reduce_sum(x * 2.0))(x)
    assert g.shape == (0, 3)
    np.testing.assert_array_equal(hg.grad(lambda x: hg.reduce_sum(x[:0]))(np.ones(2)), [0, 0])


def test_stop_gradient_blocks_both_modes():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(hg.grad(lambda x: hg.reduce_sum(core.stop_gradient(x) * x))(x), x)
    _, t = hg.jvp(lambda x: core.stop_gradient(x) * 3.0, (x,), (np.ones(2),))
    np.testing.assert_array_equal(t, [0.0, 0.0])


def test_constructors_are_constants():
    x = hg.constant([1.0, 2.0])
    for op in (core.zeros_like, core.ones_like):
        with hg.GradientTape() as tape:
            tape.watch(x)
            y = hg.reduce_sum(op(x) * 2.0)
        assert tape.gradient(y, x) is None
    assert core.zeros(shape=(2,)).numpy().tolist() == [0.0, 0.0]
    assert core.ones(shape=(1,)).numpy().tolist() == [1.0]
    assert core.fill(shape=(2,), value=3.0, dtype=np.float64).numpy().tolist() == [3.0, 3.0]


@pytest.mark.parametrize("name,f,args", ROWS[:8], ids=[row[0] for row in ROWS[:8]])
def test_graph_mode_matches_eager(name, f, args):
    loss = lambda *a: hg.reduce_sum(f(*a) ** 2)  # noqa: E731
    eager = hg.grad(loss)(*args)
    np.testing.assert_allclose(hg.function(hg.grad(loss))(*args), eager, rtol=1e-12)


def test_matmul_shape_error_names_shapes():
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 2\)"):
        linalg.matmul(np.ones((2, 3)), np.ones((4, 2)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n, m", [(1, 1), (7, 5), (300, 40), (0, 3)])
def test_matmul_outer_product_shape_is_numpys(n, m, dtype):
    # (n, 1) @ (1, m) runs as a broadcast product: numpy's matmul bit for bit, any layout.
    a, b = rng.standard_normal((n, 1)).astype(dtype), rng.standard_normal((m, 1)).T.astype(dtype)
    for bb in (b, np.ascontiguousarray(b)):
        out = linalg.matmul(a, bb).numpy()
        assert out.dtype == dtype and out.flags.c_contiguous
        np.testing.assert_array_equal(out, np.matmul(a, bb))
        traced = hg.function(lambda a, b: linalg.matmul(a, b))(a, bb)
        np.testing.assert_array_equal(traced, np.matmul(a, bb))
    mixed = a.astype(np.float32 if dtype == np.float64 else np.float64)
    assert linalg.matmul(mixed, bb).numpy().dtype == np.float64
    if n and m and dtype == np.float64:
        check_grads(lambda a, b: linalg.matmul(a, b), (a[:3], b), order=2)



def test_cast_gradient_returns_to_input_dtype():
    x = hg.constant([1.0, 2.0], dtype="float32")
    with hg.GradientTape() as tape:
        tape.watch(x)
        y = hg.reduce_sum(core.cast(x, dtype=np.float64) ** 2)
    g = tape.gradient(y, x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])


def test_cast_complex_to_real_keeps_the_real_part_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's ComplexWarning would fail here
        y = core.cast(np.array([1.0 + 2.0j, -3.0j]), dtype=np.float32)
        # a real input whose gradient passes through complex intermediates
        g = hg.grad(lambda x: hnp.real(hnp.exp(1j * x)))(1.0)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), [1.0, 0.0])
    np.testing.assert_allclose(g, -np.sin(1.0))


@pytest.mark.parametrize("shape, to", [((1000, 40), (40,)), ((7, 3, 4), (3, 4)),
                                       ((7, 3, 4), (4,)), ((7, 3, 4), (1, 4)),
                                       ((7, 3, 4), (3, 1)), ((4, 1), (1,)), ((5, 0), (0,)),
                                       ((0, 3), (3,)), ((3, 2), (2,))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
def test_sum_to_matches_numpy_sums(shape, to, dtype):
    # leading axes of float arrays are summed by a matrix-vector product: same numbers (to
    # rounding), shapes and dtypes as numpy's sum, including empty arrays
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    lead = x.ndim - len(to)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(to)
                                      if d == 1 and shape[i + lead] != 1)
    expected = x.sum(axis=axes, keepdims=True).reshape(to)
    got = core.sum_to(x, shape=to).numpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    # both round differently: compare with the sum in higher precision, within the
    # rounding bound of a sum (a few eps times the sum of magnitudes)
    exact = x.astype(np.complex128).sum(axis=axes, keepdims=True).reshape(to)
    eps = np.finfo(dtype).eps if x.dtype.kind in "fc" else 0.0
    np.testing.assert_allclose(got, exact, rtol=0, atol=4 * eps * np.abs(x).sum())


@pytest.mark.parametrize("shape", [(), (10,), (3, 4), (2, 3, 4), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex64, np.int64, np.float16])
def test_mean_is_numpys_mean_bit_for_bit(shape, dtype):
    # float arrays skip np.mean's Python wrapper: the same numbers, types and shapes
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    axes = [None] + [0, -1] * (len(shape) >= 1) + [(0, -1)] * (len(shape) >= 2)
    for axis in axes:
        for keepdims in (False, True):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # numpy's "mean of empty slice"
                got = reduction.mean(x, axis=axis, keepdims=keepdims).numpy()
                expected = np.mean(x, axis=axis, keepdims=keepdims)
            assert np.shape(got) == np.shape(expected) and got.dtype == expected.dtype
            assert np.array_equal(got, expected, equal_nan=True)
