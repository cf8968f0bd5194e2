"""isin, the set functions, unique_*, lexsort, sort_complex, the integer and bitwise ufuncs,
spacing, nextafter, isscalar, iterable, common_type, real_if_close, histogram_bin_edges,
histogram2d, histogramdd, bmat: values and dtypes equal numpy's (eager, traced where shapes
are static), tensors accepted, derivatives where there are any (set values, weights,
sort_complex, nextafter), JAX x64 parity, and the error paths."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.engine.registry import PRIMITIVES
from hessgrad.testing import check_grads
from numpy_checks import assert_same_as_numpy

COVERED = {"gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
           "invert", "bitwise_count", "lexsort", "spacing", "nextafter"}

rng = np.random.default_rng(17)


def randn(*shape):
    return rng.standard_normal(shape)


NANS = np.array([3.0, 1.0, np.nan, 3.0, np.nan, 2.0])
SET_INPUTS = [NANS, np.array([[2, 1], [1, 3]]), np.array([5, 3, 9, 3, 1, 5, 7, 100, -2]),
              np.array([1 + 1j, 2, 1 + 1j]), np.zeros(0), np.array([True, False, True]),
              np.float32([2.5, -1.0, 2.5])]


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
@pytest.mark.parametrize("k", range(len(SET_INPUTS)))
def test_unique_family_equals_numpy(name, k):
    x = SET_INPUTS[k]
    want, got = getattr(np, name)(x), getattr(hnp, name)(x)
    assert_same_as_numpy(tuple(want) if isinstance(want, tuple) else want,
           tuple(got) if isinstance(got, tuple) else got)
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
    assert_same_as_numpy(tuple(want) if isinstance(want, tuple) else want,  # an eager tensor is concrete
           tuple(getattr(hnp, name)(hg.constant(x))) if isinstance(want, tuple)
           else getattr(hnp, name)(hg.constant(x)))


SET_PAIRS = [([1, 2, 2, 3], [2, 3.0]), ([3.0, 1.0, 2.0, 1.0], [1.0, 3.0, 5.0]),
             (np.arange(6).reshape(2, 3), [1, 4, 7]), ([], [1.0]), ([1 + 1j, 2], [2.0]),
             (np.float32([1, 2]), [2.0, 7.0]), ([4.0, 4.0], [4.0])]


@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
@pytest.mark.parametrize("k", range(len(SET_PAIRS)))
def test_set_functions_equal_numpy(name, k):
    a, b = SET_PAIRS[k]
    assert_same_as_numpy(getattr(np, name)(a, b), getattr(hnp, name)(a, b))
    assert_same_as_numpy(getattr(np, name)(a, b), getattr(hnp, name)(hg.constant(np.asarray(a)), b))


@pytest.mark.parametrize("call", [
    lambda m: m.intersect1d([3.0, 1.0, 2.0], [2.0, 3.0], assume_unique=True),
    lambda m: m.intersect1d([3.0, 1.0, 2.0, 1.0], [1.0, 3.0, 5.0], return_indices=True),
    lambda m: m.intersect1d([3.0, 1.0, 2.0], [2.0, 3.0], assume_unique=True, return_indices=True),
    lambda m: m.setdiff1d([3, 1, 1], [1], assume_unique=True),
    lambda m: m.setxor1d([3.0, 1.0], [1.0, 4.0], assume_unique=True),
])
def test_set_function_options_equal_numpy(call):
    assert_same_as_numpy(call(np), call(hnp))


ISIN_ROWS = [(np.array([1, 2, 3]), [2]), (np.array([[1.0, np.nan]]), [np.nan]), (2, [1, 2]),
             (np.arange(6).reshape(2, 3), np.array([[1], [4]])), (randn(3), np.zeros(0)),
             (np.array([1 + 1j, 2]), [2.0])]


@pytest.mark.parametrize("k", range(len(ISIN_ROWS)))
@pytest.mark.parametrize("invert", [False, True])
def test_isin_equals_numpy_eager_and_traced(k, invert):
    e, t = ISIN_ROWS[k]
    want = np.isin(e, t, invert=invert)
    assert_same_as_numpy(want, hnp.isin(e, t, invert=invert))
    assert_same_as_numpy(want, hg.function(lambda e, t: hnp.isin(e, t, invert=invert))(np.asarray(e), np.asarray(t)))


def test_intersect1d_reads_values_from_ar1():
    g = hg.grad(lambda x, y: hnp.sum(hnp.intersect1d(x, y)), argnums=(0, 1))(
        np.array([3.0, 1.0, 1.0]), np.array([1.0, 5.0]))
    np.testing.assert_array_equal(g[0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(g[1], [0.0, 0.0])


@pytest.mark.slow
def test_set_values_are_differentiable_like_jax():
    # jax.numpy's set functions are differentiable on their traceable path (size=...): each
    # value takes the gradient of its first occurrence. (Without size= JAX computes them from
    # concrete values, and their gradient is silently zero.) Which of two equal elements of
    # ar1 and ar2 a value is read from is a convention (here ar1's, JAX's depends on its
    # sort): the second set is drawn from the first's elements, so both give one gradient.
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    a = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 7.0])
    w = np.arange(1.0, 8.0)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        def loss(m, x, name=name, **size):
            out = getattr(m, name)(x[:4], x[np.array([5, 0, 4, 0])] * 1.0, **size)
            return m.sum(out ** 3 * w[:out.shape[0]])
        n = getattr(np, name)(a[:4], a[np.array([5, 0, 4, 0])]).size
        np.testing.assert_allclose(hg.grad(lambda x: loss(hnp, x))(a),
                                   jax.grad(lambda x: loss(jnp, x, size=n))(a), rtol=1e-12,
                                   err_msg=name)
    n = np.unique(a).size
    for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
        def first(m, x, name=name):
            out = getattr(m, name)(x)
            values = out if name == "unique_values" else out[0]
            return m.sum(values ** 2 * w[:values.shape[0]])
        np.testing.assert_allclose(hg.grad(lambda x: first(hnp, x))(a),
                                   jax.grad(lambda x: _jax_unique_loss(jnp, x, w, n))(a),
                                   rtol=1e-12, err_msg=name)


def _jax_unique_loss(jnp, x, w, n):
    values = jnp.unique(x, size=n)
    return jnp.sum(values ** 2 * w[:n])


SET_GRAD_ROWS = [
    # sets drawn from the same elements keep their structure under finite differences
    ("intersect1d", lambda x: hnp.intersect1d(x, x[np.array([2, 0])]) ** 2, (np.array([3.0, 1.0, 2.0]),)),
    ("union1d", lambda x, y: hnp.union1d(x * x, y), (np.array([3.0, 1.0]), np.array([2.0, 5.0]))),
    ("setdiff1d", lambda x: hnp.setdiff1d(x, x[np.array([1])]) ** 3, (np.array([3.0, 1.0, 2.0]),)),
    ("setxor1d", lambda x, y: hnp.setxor1d(x, y) ** 2, (np.array([3.0, 1.0]), np.array([2.0, 5.0]))),
    ("unique_values", lambda x: hnp.unique_values(x) ** 2, (np.array([3.0, 1.0, 2.5]),)),
    ("sort_complex", lambda x: hnp.real(hnp.sort_complex(x) ** 2), (np.array([3.0, 1.0, 2.0]),)),
    ("nextafter", lambda x, y: hnp.nextafter(x ** 2, y), (randn(3), randn(2, 1))),
    ("spacing", lambda x: hnp.spacing(x) * 1e15 + x, (randn(3),)),
    ("histogramdd weights", lambda w: hnp.histogramdd(_SAMPLE, bins=3, weights=w ** 2)[0], (randn(12),)),
    ("histogramdd density", lambda w: hnp.histogramdd(_SAMPLE, bins=2, weights=w * w, density=True)[0],
     (randn(12),)),
    ("histogram2d weights", lambda w: hnp.histogram2d(_SAMPLE[:, 0], _SAMPLE[:, 1], bins=2, weights=w ** 3)[0],
     (randn(12),)),
    ("real_if_close", lambda x: hnp.real_if_close(x * (1 + 0j)) ** 2, (randn(3),)),
    ("bmat", lambda a, b: hnp.bmat([[a, b], [b.T, a[:1, :1] ** 2]]), (randn(2, 2), randn(2, 1))),
]
_SAMPLE = np.random.default_rng(3).random((12, 3))


@pytest.mark.parametrize("name,f,args", SET_GRAD_ROWS, ids=[r[0] for r in SET_GRAD_ROWS])
def test_derivatives_order2(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_sort_complex_values_and_grad_match_jax():
    for x in (np.array([3.0, 1.0, 2.0]), np.array([3, 1, 2], np.int8), np.float32([2, 1]),
              np.array([1 + 2j, 1 - 1j, 0.5]), np.arange(6).reshape(2, 3)[:, ::-1]):
        assert_same_as_numpy(np.sort_complex(x), hnp.sort_complex(x))
        assert_same_as_numpy(np.sort_complex(x), hg.function(hnp.sort_complex)(x))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x, w = randn(5), randn(5)
    f = lambda m, x: m.sum(m.real(m.sort_complex(x)) ** 3 * w)  # noqa: E731
    np.testing.assert_allclose(hg.grad(lambda x: f(hnp, x))(x), jax.grad(lambda x: f(jnp, x))(x),
                               rtol=1e-12)


LEXSORT_ROWS = [((np.array([1, 0, 1, 0]), np.array([2.0, 2.0, 1.0, 1.0])), {}),
                (np.array([[1, 0, 1], [3, 3, 1]]), {}), (np.array([3, 1, 2]), {}),
                (np.arange(24).reshape(2, 3, 4) % 3, {"axis": 0}),
                ((np.array([1.0, np.nan]), np.array([0, 0])), {})]


@pytest.mark.parametrize("keys,kw", LEXSORT_ROWS)
def test_lexsort_equals_numpy_eager_and_traced(keys, kw):
    want = np.lexsort(keys, **kw)
    assert_same_as_numpy(want, hnp.lexsort(keys, **kw))
    tensors = tuple(hg.constant(k) for k in keys) if isinstance(keys, tuple) else hg.constant(keys)
    assert_same_as_numpy(want, hnp.lexsort(tensors, **kw))
    if isinstance(keys, tuple):
        assert_same_as_numpy(want, hg.function(lambda *k: hnp.lexsort(k, **kw))(*keys))
    else:
        assert_same_as_numpy(want, hg.function(lambda k: hnp.lexsort(k, **kw))(keys))


UFUNC_ROWS = [("gcd", (np.array([12, 20, -8]), 8)), ("lcm", (np.array([4, 6]), 10)),
              ("gcd", (np.array([[0], [6]]), np.array([4, 9], np.int32))),
              ("bitwise_and", (np.array([12, 5]), 6)), ("bitwise_or", (np.array([True, False]), True)),
              ("bitwise_xor", (np.array([12, 5], np.uint8), np.uint8(6))), ("invert", (np.array([0, 5]),)),
              ("invert", (np.array([True, False]),)), ("left_shift", (np.array([1, 3]), 2)),
              ("right_shift", (np.array([16, 7]), np.array([[2], [1]]))),
              ("bitwise_count", (np.array([7, -8, 0]),)), ("bitwise_not", (np.int8(3),)),
              ("bitwise_invert", (np.arange(3),)), ("bitwise_left_shift", (3, np.arange(3))),
              ("bitwise_right_shift", (np.arange(8), 1)),
              ("spacing", (np.array([1.0, -4.0, 0.0, -0.0, np.inf, np.nan, 1e-320]),)),
              ("spacing", (np.float32([1.0, -4.0]),)),
              ("nextafter", (np.array([1.0, -4.0, 0.0, np.inf, np.nan]), 2.0)),
              ("nextafter", (np.float32([1.0, 2.0]), np.float32(-1.0))), ("nextafter", (np.array([1, 2]), 0.0))]


@pytest.mark.parametrize("name,args", UFUNC_ROWS, ids=[f"{r[0]}-{k}" for k, r in enumerate(UFUNC_ROWS)])
def test_ufuncs_equal_numpy_eager_traced_and_dispatched(name, args):
    want = getattr(np, name)(*args)
    assert_same_as_numpy(want, getattr(hnp, name)(*args))
    arrays = tuple(np.asarray(a) for a in args)
    assert_same_as_numpy(want, hg.function(lambda *a: getattr(hnp, name)(*a))(*arrays))
    assert_same_as_numpy(want, getattr(np, name)(*(hg.constant(a) for a in arrays)))  # numpy dispatches here


def test_integer_ops_are_constants():
    for name in ("gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                 "right_shift", "invert", "bitwise_count", "lexsort"):
        assert PRIMITIVES[name].nondiff, name
    # an integer result used in a float objective contributes no derivative
    g = hg.grad(lambda x: hnp.sum(x * hnp.bitwise_and(np.array([3, 5]), 1)))(np.array([2.0, 7.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0])
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.sum(hnp.nextafter(x, 0.0)))(np.ones(2)), 1.0)


def test_type_helpers():
    t0, t1 = hg.constant(2.0), hg.constant([2.0])
    assert hnp.isscalar(2.0) and hnp.isscalar(np.float32(1)) and hnp.isscalar("a")
    assert hnp.isscalar(t0) and not hnp.isscalar(t1) and not hnp.isscalar([1.0])
    assert hnp.isscalar(t1[0])  # where numpy's indexing would give a scalar
    assert not hnp.isscalar(np.array(1.0))  # numpy's answer for a 0-d ndarray
    assert hg.function(lambda x: hg.constant(float(hnp.isscalar(x))))(np.float64(1.0)) == 1.0
    assert hnp.iterable(t1) and not hnp.iterable(t0) and hnp.iterable([1]) and not hnp.iterable(1)
    for arrays in ((np.ones(2, np.float32),), (np.ones(2, np.float32), np.ones(1, np.complex64)),
                   (np.arange(2),), (np.float16([1]), np.ones(1, np.complex128))):
        want = np.common_type(*arrays)
        assert hnp.common_type(*arrays) is want
        assert hnp.common_type(*(hg.constant(a) for a in arrays)) is want
    for a, kw in ((np.array([2.1 + 4e-14j, 5.2 + 3e-15j]), {}), (np.array([2.1 + 4e-1j]), {}),
                  (np.array([1.0, 2.0]), {}), (np.complex64([1 + 1e-7j]), {}),
                  (np.array([1 + 1e-5j]), {"tol": 1e-4}), (np.array([1 + 1e-3j]), {"tol": 1e-4})):
        assert_same_as_numpy(np.real_if_close(a, **kw), hnp.real_if_close(a, **kw))
        assert_same_as_numpy(np.real_if_close(a, **kw), hnp.real_if_close(hg.constant(a), **kw))


def test_histograms_equal_numpy():
    s, w = _SAMPLE, np.random.default_rng(4).random(12)
    for kw in (dict(), dict(bins=3), dict(bins=[2, 3, 4], range=[(0, 1), (0, 1), (0, 1)]),
               dict(density=True), dict(weights=w), dict(weights=w, density=True)):
        want = np.histogramdd(s, **kw)
        for weights in ((kw["weights"], hg.constant(kw["weights"])) if "weights" in kw else (None,)):
            got = hnp.histogramdd(s, **{**kw, "weights": weights})
            assert_same_as_numpy(want[0], got[0])
            for e, g in zip(want[1], got[1]):
                assert_same_as_numpy(e, g)
    for kw in (dict(), dict(bins=[3, 4]), dict(bins=5, range=[(0, 1), (0, 0.5)]),
               dict(weights=w, density=True), dict(bins=np.linspace(0, 1, 4))):
        want = np.histogram2d(s[:, 0], s[:, 1], **kw)
        got = hnp.histogram2d(hg.constant(s[:, 0]), s[:, 1], **kw)
        for a, b in zip(want, got):
            assert_same_as_numpy(a, b)
    for kw in (dict(), dict(bins="auto"), dict(bins=3, range=(0, 2)), dict(weights=w)):
        assert_same_as_numpy(np.histogram_bin_edges(s[:, 0], **kw), hnp.histogram_bin_edges(s[:, 0], **kw))


def test_histogram_weights_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    s, w, c = _SAMPLE, randn(12), randn(3, 3)
    f = lambda m, w: m.sum(m.histogram2d(s[:, 0], s[:, 1], bins=3, weights=w ** 2, density=True)[0] * c)  # noqa: E731
    np.testing.assert_allclose(hg.grad(lambda w: f(hnp, w))(w), jax.grad(lambda w: f(jnp, w))(w),
                               rtol=1e-10)


def test_bmat():
    A, B = np.eye(2), np.ones((2, 1))
    C = np.ones((1, 1)) * 5
    for obj in ([[A, B], [B.T, C]], [np.ones(2), np.ones(3)], A, [[np.ones(2), np.ones(1)]]):
        with pytest.warns(PendingDeprecationWarning):
            want = np.asarray(np.bmat(obj))
        assert_same_as_numpy(want, hnp.bmat(obj))
    with pytest.warns(PendingDeprecationWarning):
        want = np.asarray(np.bmat("A B; B.T C" if False else "A B"))
    assert_same_as_numpy(want, hnp.bmat("A B"))
    assert_same_as_numpy(np.hstack([A, B]), hnp.bmat("A,B", ldict={"B": B}, gdict={"A": A}))
    np.testing.assert_array_equal(hnp.bmat([[hg.constant(A), B]]).numpy(), np.hstack([A, B]))


def test_data_dependent_results_say_so_when_traced():
    for call in (hnp.unique_values, lambda x: hnp.union1d(x, x), lambda x: hnp.setdiff1d(x, [1.0]),
                 lambda x: hnp.histogram2d(x, x), hnp.histogram_bin_edges,
                 lambda x: hnp.real_if_close(x * 1j)):
        with pytest.raises(TypeError, match="must be known while a function is traced"):
            hg.function(call)(randn(4))


@pytest.mark.parametrize("call,exc,match", [
    (lambda: hnp.isin([1], [1], kind="hash"), ValueError, "isin: Invalid kind"),
    (lambda: hg.function(lambda e: hnp.isin(e, [1.0], kind="table"))(randn(2)), ValueError, "isin: The 'table' method"),
    (lambda: hnp.isin(randn(2), [1.0], kind="table"), ValueError, "isin: The 'table' method"),
    (lambda: hnp.gcd(np.ones(2), 2), TypeError, "gcd: input 0 must be integer or boolean"),
    (lambda: hnp.bitwise_and(1, np.ones(2)), TypeError, "bitwise_and: input 1 must be integer"),
    (lambda: hnp.left_shift(np.arange(2), np.arange(3)), ValueError, "left_shift: operands cannot be broadcast"),
    (lambda: hnp.invert(np.arange(2), out=np.arange(3)), ValueError, "invert: non-broadcastable output operand"),
    (lambda: hnp.spacing(np.ones(2, complex)), TypeError, "spacing: argument 'x' must be real"),
    (lambda: hnp.nextafter(1.0, np.ones(2, complex)), TypeError, "nextafter: argument 'x2' must be real"),
    (lambda: hnp.lexsort([np.arange(2), np.arange(3)]), ValueError, "lexsort: all keys need to be the same shape"),
    (lambda: hnp.lexsort([hg.constant(np.arange(2.0)), np.arange(3)]), ValueError, "lexsort: all input arrays must have the same shape"),
    (lambda: hnp.lexsort([]), TypeError, "lexsort: need sequence of keys"),
    (lambda: hnp.lexsort(np.ones((2, 3)), axis=1), np.exceptions.AxisError, "lexsort: "),
    (lambda: hnp.common_type(np.array(["a"])), TypeError, "common_type: can't get common type"),
    (lambda: hnp.histogramdd(_SAMPLE, weights=hg.constant(np.ones(3))), ValueError, "histogramdd: weights must be"),
    (lambda: hnp.histogramdd(_SAMPLE, range=[(0, 1)]), ValueError, "histogramdd: range argument must have one entry"),
    (lambda: hnp.histogram_bin_edges(_SAMPLE[:, 0], bins="nope"), ValueError, "histogram_bin_edges: "),
    (lambda: hnp.histogram2d([1.0, 2.0], [1.0]), ValueError, "histogram2d: x and y must have the same length"),
    (lambda: hnp.bmat("A Q", ldict={"A": np.eye(2)}, gdict={}), NameError, "bmat: name 'Q' is not defined"),
    (lambda: hnp.bmat(np.ones((2, 2, 2))), ValueError, "bmat: matrix must be 2-dimensional"),
    (lambda: hnp.bmat([[np.ones((2, 2)), np.ones((3, 1))]]), ValueError, "bmat: "),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
