"""hessgrad.numpy reductions, cumulative ops, statistics and sorting: values equal numpy's on
many shapes and axes (errors too), derivatives at order 2 in both modes, graph mode, and the
special points (zeros in products, constant slices, NaN entries, ties)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

COVERED = set()  # numpy wrappers; their primitives are covered in tests/ops/test_reduction_ops

rng = np.random.default_rng(7)
SHAPES = [(), (5,), (3, 4), (2, 3, 4), (0, 3)]


def _data(shape, kind="normal"):
    x = rng.standard_normal(shape)
    if kind == "zeros" and x.size:
        x.reshape(-1)[::3] = 0.0
    if kind == "nan" and x.size:
        x.reshape(-1)[1::4] = np.nan
    if kind == "ints":
        x = rng.integers(-3, 4, size=shape)
    return x


# (function name, kwargs, input kind)
VALUE_ROWS = [
    ("sum", {}, "normal"), ("sum", {"axis": 0}, "normal"),
    ("sum", {"axis": -1, "keepdims": True}, "normal"), ("sum", {"axis": (0, -1)}, "normal"),
    ("sum", {"axis": 0, "initial": 2.0}, "normal"), ("sum", {"dtype": np.float32}, "normal"),
    ("sum", {}, "ints"),
    ("prod", {}, "zeros"), ("prod", {"axis": 0}, "normal"),
    ("prod", {"axis": (0, -1), "keepdims": True}, "zeros"), ("prod", {"axis": -1}, "ints"),
    ("mean", {}, "normal"), ("mean", {"axis": -1}, "normal"),
    ("mean", {"axis": (0, -1), "keepdims": True}, "normal"), ("mean", {"axis": 0}, "ints"),
    ("average", {}, "normal"), ("average", {"axis": 0}, "normal"),
    ("average", {"axis": -1, "keepdims": True}, "normal"),
    ("var", {}, "normal"), ("var", {"axis": 0, "ddof": 1}, "normal"),
    ("var", {"axis": (0, -1), "keepdims": True}, "normal"), ("var", {"axis": -1}, "ints"),
    ("std", {}, "normal"), ("std", {"axis": -1, "ddof": 1}, "normal"),
    ("std", {"axis": (0, -1), "keepdims": True}, "normal"),
    ("max", {}, "normal"), ("max", {"axis": 0}, "normal"),
    ("max", {"axis": -1, "keepdims": True}, "normal"), ("max", {"axis": (0, -1)}, "normal"),
    ("max", {"initial": 0.5}, "normal"),
    ("min", {}, "normal"), ("min", {"axis": -1}, "ints"),
    ("amax", {"axis": 0}, "normal"), ("amin", {"axis": (0, -1), "keepdims": True}, "normal"),
    ("ptp", {}, "normal"), ("ptp", {"axis": 0}, "normal"),
    ("ptp", {"axis": -1, "keepdims": True}, "normal"),
    ("argmax", {}, "normal"), ("argmax", {"axis": 0}, "normal"),
    ("argmax", {"axis": -1, "keepdims": True}, "normal"), ("argmin", {"axis": -1}, "ints"),
    ("argmax", {"axis": (0, 1)}, "normal"),
    ("all", {}, "zeros"), ("all", {"axis": 0}, "zeros"),
    ("any", {"axis": -1, "keepdims": True}, "zeros"), ("any", {"axis": (0, -1)}, "zeros"),
    ("count_nonzero", {}, "zeros"), ("count_nonzero", {"axis": -1}, "zeros"),
    ("count_nonzero", {"axis": (0, -1), "keepdims": True}, "zeros"),
    ("nansum", {}, "nan"), ("nansum", {"axis": 0}, "nan"),
    ("nansum", {"axis": -1, "keepdims": True}, "nan"),
    ("nanmean", {}, "nan"), ("nanmean", {"axis": (0, -1)}, "nan"),
    ("cumsum", {}, "normal"), ("cumsum", {"axis": 0}, "normal"),
    ("cumsum", {"axis": -1}, "ints"),
    ("cumprod", {}, "zeros"), ("cumprod", {"axis": -1}, "normal"),
    ("sort", {}, "normal"), ("sort", {"axis": 0}, "normal"), ("sort", {"axis": None}, "nan"),
    ("argsort", {"kind": "stable"}, "ints"), ("argsort", {"axis": None, "kind": "stable"},
                                              "normal"),
    ("median", {}, "normal"), ("median", {"axis": 0}, "normal"),
    ("median", {"axis": -1, "keepdims": True}, "normal"), ("median", {"axis": (0, -1)}, "nan"),
    ("median", {"axis": -1}, "ints"),
    ("quantile", {"q": 0.3}, "normal"), ("quantile", {"q": [0.1, 0.5, 1.0], "axis": 0},
                                         "normal"),
    ("quantile", {"q": 0.75, "axis": -1, "keepdims": True}, "nan"),
    ("quantile", {"q": 1, "axis": -1}, "ints"),
    ("percentile", {"q": 30}, "normal"),
    ("percentile", {"q": [10, 90], "axis": (0, -1), "keepdims": True}, "normal"),
]


def _call(module, name, x, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = getattr(module, name)(x, **kwargs)
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,kwargs,kind", VALUE_ROWS,
                         ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in VALUE_ROWS])
def test_values_match_numpy(name, kwargs, kind, shape):
    x = _data(shape, kind)
    try:
        want = _call(np, name, x, kwargs)
    except Exception as exc:  # noqa: BLE001 - numpy refuses: so must we, with the same type
        with pytest.raises(type(exc)) as info:
            _call(hnp, name, x, kwargs)
        assert name in str(info.value)
        return
    got = _call(hnp, name, x, kwargs).numpy()
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, equal_nan=True)


def test_warnings_like_numpy():
    with pytest.warns(RuntimeWarning):
        assert np.isnan(hnp.mean(np.zeros(0)).numpy())
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        hnp.var(np.ones(2), ddof=2)
    with pytest.warns(RuntimeWarning):
        assert np.isnan(hnp.median(np.zeros(0)).numpy())
    assert hnp.sum(np.zeros(0)).numpy() == 0.0
    assert hnp.prod(np.zeros((0, 2)), axis=0).numpy().tolist() == [1.0, 1.0]


# --- derivatives ---------------------------------------------------------------------------
X3 = rng.standard_normal((2, 3, 4))
X2 = rng.standard_normal((3, 4))
X1 = rng.standard_normal(6)
ZEROS1 = np.array([1.3, 0.0, -0.8, 2.0, 0.0])
ONE_ZERO1 = np.array([1.3, 0.0, -0.8, 2.0, 0.5])
NAN2 = X2.copy()
NAN2[0, 1] = NAN2[2, 3] = np.nan

GRAD_ROWS = [
    ("sum", lambda x: hnp.sum(x, axis=(0, -1), keepdims=True), X3),
    ("sum-0d", lambda x: hnp.sum(x, axis=0), np.array(1.5)),
    ("sum-empty", lambda x: hnp.sum(x, axis=0), np.zeros((0, 3))),
    ("sum-where", lambda x: hnp.sum(x, where=X2 > 0), X2),
    ("prod", lambda x: hnp.prod(x, axis=-1), X2),
    ("prod-one-zero", lambda x: hnp.prod(x), ONE_ZERO1),
    ("prod-two-zeros", lambda x: hnp.prod(x), ZEROS1),
    ("prod-tuple", lambda x: hnp.prod(x, axis=(0, 2)), X3),
    ("mean", lambda x: hnp.mean(x, axis=1), X3),
    ("mean-where", lambda x: hnp.mean(x, axis=1, where=X2 < 1), X2),
    ("average-weights", lambda x: hnp.average(x, axis=1, weights=np.arange(1.0, 5.0)), X2),
    ("average-diff-weights", lambda w: hnp.average(X2, axis=0, weights=w), X2 ** 2 + 0.5),
    ("average-returned", lambda x: hnp.average(x, weights=x * x + 1, returned=True)[0], X2),
    ("var", lambda x: hnp.var(x, axis=0), X2),
    ("var-ddof", lambda x: hnp.var(x, axis=(0, 2), ddof=1, keepdims=True), X3),
    ("std", lambda x: hnp.std(x), X2),
    ("std-ddof", lambda x: hnp.std(x, axis=-1, ddof=1), X3),
    ("max", lambda x: hnp.max(x, axis=(0, 1)), X3),
    ("min", lambda x: hnp.min(x, axis=-1, keepdims=True), X2),
    ("amax", lambda x: hnp.amax(x), X2),
    ("amin", lambda x: hnp.amin(x, axis=0), X2),
    ("max-initial", lambda x: hnp.max(x, axis=1, initial=0.0), X2),
    ("ptp", lambda x: hnp.ptp(x, axis=1), X3),
    ("nansum", lambda x: hnp.nansum(x, axis=0), NAN2),
    ("nanmean", lambda x: hnp.nanmean(x, axis=-1), NAN2),
    ("nanmean-all", lambda x: hnp.nanmean(x), NAN2),
    ("cumsum", lambda x: hnp.cumsum(x, axis=-1), X3),
    ("cumsum-flat", lambda x: hnp.cumsum(x), X2),
    ("cumprod", lambda x: hnp.cumprod(x, axis=0), X3),
    ("cumprod-zeros", lambda x: hnp.cumprod(x), ZEROS1),
    ("sort", lambda x: hnp.sort(x, axis=0), X3),
    ("sort-flat", lambda x: hnp.sort(x, axis=None), X2),
    ("median-odd", lambda x: hnp.median(x, axis=0), X2),
    ("median-even", lambda x: hnp.median(x, axis=-1), X2),
    ("median-tuple", lambda x: hnp.median(x, axis=(0, 2), keepdims=True), X3),
    ("quantile", lambda x: hnp.quantile(x, [0.1, 0.37, 0.5, 1.0], axis=1), X3),
    ("quantile-0", lambda x: hnp.quantile(x, 0.0), X1),
    ("percentile", lambda x: hnp.percentile(x, 63, axis=(0, -1)), X3),
]


@pytest.mark.parametrize("name,f,x", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_grads(name, f, x):
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


# --- graph mode: every function traced, value and gradient equal to eager ------------------
GRAPH_ROWS = [
    ("sum", {"axis": (0, -1)}), ("prod", {"axis": 1}), ("mean", {"axis": -1}),
    ("average", {"axis": 0, "weights": np.arange(1.0, 4.0)}), ("var", {"ddof": 1}),
    ("std", {"axis": 0}), ("max", {"axis": 1}), ("min", {}), ("amax", {"axis": 0}),
    ("amin", {"axis": -1}), ("ptp", {"axis": 1}), ("nansum", {"axis": 0}),
    ("nanmean", {"axis": 1}), ("cumsum", {"axis": 1}), ("cumprod", {"axis": 0}),
    ("sort", {"axis": 0}), ("median", {"axis": 1}), ("quantile", {"q": [0.2, 0.9]}),
    ("percentile", {"q": 40, "axis": 0}),
]
NONDIFF_GRAPH_ROWS = [("argmax", {"axis": 1}), ("argmin", {}), ("all", {"axis": 0}),
                      ("any", {}), ("count_nonzero", {"axis": 1}), ("argsort", {"axis": 0})]
XG = rng.standard_normal((3, 4)) + 0.1
XG[1, 2] = 0.0
XG[0, 3] = np.nan


@pytest.mark.parametrize("name,kwargs", GRAPH_ROWS, ids=[r[0] for r in GRAPH_ROWS])
def test_graph_mode(name, kwargs):
    x = XG if name.startswith("nan") else np.nan_to_num(XG, nan=0.4)
    fn = getattr(hnp, name)
    np.testing.assert_array_equal(hg.function(lambda x: fn(x, **kwargs))(x),
                                  getattr(np, name)(x, **kwargs))
    loss = hg.grad(lambda x: hnp.sum(hnp.sin(fn(x, **kwargs))))
    eager = loss(x)
    assert np.all(np.isfinite(eager))
    np.testing.assert_allclose(hg.function(loss)(x), eager, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name,kwargs", NONDIFF_GRAPH_ROWS, ids=[r[0] for r in
                                                                   NONDIFF_GRAPH_ROWS])
def test_graph_mode_nondiff(name, kwargs):
    x = np.nan_to_num(XG, nan=0.4)
    np.testing.assert_array_equal(hg.function(lambda x: getattr(hnp, name)(x, **kwargs))(x),
                                  getattr(np, name)(x, **kwargs))


# --- special points -----------------------------------------------------------------------
def test_prod_gradient_with_zeros():
    g = hg.grad(lambda x: hnp.prod(x))
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 0.0])), [0.0, 0.0, 0.0])
    h = hg.jacobian(g)(np.array([2.0, 0.0, 0.0]))
    np.testing.assert_array_equal(h, [[0, 0, 0], [0, 0, 2], [0, 2, 0]])
    h = hg.function(hg.jacobian(g))(np.array([2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(h, [[0, 3, 0], [3, 0, 2], [0, 2, 0]])


def test_std_of_constant_slice_has_zero_gradient():
    for x in [np.full(4, 2.0), np.zeros(3), np.full((2, 3), -1.5)]:
        for ddof in (0, 1):
            g = hg.grad(lambda x: hnp.std(x, ddof=ddof))(x)
            np.testing.assert_array_equal(g, np.zeros_like(x))
            g = hg.function(hg.grad(lambda x: hnp.sum(hnp.std(x, axis=-1))))(x)
            np.testing.assert_array_equal(g, np.zeros_like(x))
            _, t = hg.jvp(lambda x: hnp.std(x, ddof=ddof), (x,), (np.ones_like(x),))
            assert t == 0.0
    # first order still checks out there (central differences of |.|-like std are 0)
    check_grads(lambda x: hnp.std(x), (np.full(4, 2.0),), order=1)


def test_nan_entries_have_zero_derivative():
    x = np.array([1.0, np.nan, 3.0, np.nan])
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.nansum(x))(x), [1, 0, 1, 0])
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.nanmean(x))(x), [0.5, 0, 0.5, 0])
    _, t = hg.jvp(lambda x: hnp.nanmean(x), (x,), (np.ones(4),))
    assert t == 1.0
    hess = hg.jacobian(hg.grad(lambda x: hnp.nanmean(x * x)))(x)
    np.testing.assert_array_equal(hess, np.diag([1, 0, 1, 0.0]))


def test_order_statistic_gradients_are_weights():
    x = np.array([4.0, 1.0, 3.0, 2.0, 5.0])
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.median(x))(x), [0, 0, 1, 0, 0])
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.median(x[:4]))(x),
                                  [0, 0, 0.5, 0.5, 0])
    g = hg.grad(lambda x: hnp.quantile(x, 0.3))(x)  # virtual index 1.2 -> 0.8 * s1 + 0.2 * s2
    np.testing.assert_allclose(g, [0, 0, 0.2, 0.8, 0], rtol=1e-15)
    g = hg.grad(lambda x: hnp.percentile(x, 100))(x)
    np.testing.assert_array_equal(g, [0, 0, 0, 0, 1])
    w = np.arange(5.0)
    np.testing.assert_array_equal(hg.grad(lambda x: hnp.sum(hnp.sort(x) * w))(x),
                                  [3, 0, 2, 1, 4])


def test_ties():
    x = np.array([2.0, 5.0, 5.0, 1.0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.max(x))(x), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(hg.grad(lambda x: hnp.ptp(x))(x), [0, 0.5, 0.5, -1])
    g = hg.grad(lambda x: hnp.sum(hnp.sort(x) * np.arange(4.0)))(x)
    np.testing.assert_array_equal(g, [1, 2.5, 2.5, 0])  # the tied 5s share slots 2 and 3
    g = hg.grad(lambda x: hnp.median(x))(x)  # (2 + 5) / 2: the tied 5s share the 1/2
    np.testing.assert_array_equal(g, [0.5, 0.25, 0.25, 0])
    g = hg.function(hg.grad(lambda x: hnp.quantile(x, 1.0)))(x)
    np.testing.assert_array_equal(g, hg.grad(lambda x: hnp.max(x))(x))


# --- bad input ----------------------------------------------------------------------------
def test_errors_name_function_argument_and_shape():
    x = np.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match=r"sum.*axis 2.*\(2, 3\)"):
        hnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="mean.*repeated axis"):
        hnp.mean(x, axis=(1, -1))
    with pytest.raises(TypeError, match="axis"):
        hnp.argmax(x, axis=(0, 1))
    with pytest.raises(ValueError, match=r"sum: output parameter out= has shape \(3,\), but "
                                         r"the result has shape \(\)"):
        hnp.sum(x, out=np.zeros(3))
    out = hnp.zeros(6, int)  # numpy's reductions cast into out= unsafely
    assert hnp.cumsum(x * 1.5, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.cumsum(x * 1.5).astype(int))
    out = np.zeros(3)
    assert hnp.mean(x, 0, None, out) is out  # positional out, a numpy array
    np.testing.assert_array_equal(out, np.ones(3))
    with pytest.raises(ValueError, match=r"max.*zero-size.*\(0, 3\)"):
        hnp.max(np.ones((0, 3)), axis=0)
    assert hnp.max(np.ones((0, 3)), axis=1).shape == (0,)
    assert hnp.max(np.ones((0, 3)), initial=1.0).numpy() == 1.0
    with pytest.raises(ValueError, match="argmin.*empty"):
        hnp.argmin(np.zeros(0))
    with pytest.raises(ValueError, match=r"quantile.*\[0, 1\]"):
        hnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"percentile.*\[0, 100\]"):
        hnp.percentile(x, -1)
    with pytest.raises(NotImplementedError, match="method"):
        hnp.quantile(x, 0.5, method="nearest")
    with pytest.raises(ZeroDivisionError, match="average"):
        hnp.average(x, weights=np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"average.*\(2, 3\).*\(3,\)"):
        hnp.average(x, weights=np.ones(3))
    with pytest.raises(ValueError, match="average.*length"):
        hnp.average(x, axis=0, weights=np.ones(3))
    with pytest.raises(np.exceptions.AxisError, match="sort"):
        hnp.sort(np.array(1.0))


def test_average_returned_matches_numpy():
    x, w = rng.standard_normal((3, 4)), rng.random(4) + 0.1
    avg, scl = hnp.average(x, axis=1, weights=w, returned=True)
    want_avg, want_scl = np.average(x, axis=1, weights=w, returned=True)
    np.testing.assert_allclose(avg.numpy(), want_avg, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(scl), want_scl, rtol=1e-14)
    avg, scl = hnp.average(x, axis=0, returned=True)
    np.testing.assert_array_equal(np.asarray(scl), np.average(x, axis=0, returned=True)[1])


def test_float32_preserved():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for name, kw in [("sum", {}), ("prod", {"axis": 0}), ("mean", {}), ("var", {}),
                     ("std", {"axis": 1}), ("cumprod", {}), ("sort", {}), ("median", {}),
                     ("quantile", {"q": 0.3}), ("nanmean", {})]:
        got = getattr(hnp, name)(x, **kw)
        assert got.dtype == np.asarray(getattr(np, name)(x, **kw)).dtype, name
    assert hg.grad(lambda x: hnp.sum(hnp.cumprod(x)))(x).dtype == np.float32



def test_float32_derivatives_stay_float32():
    # max/min masks were float64 (bool * 1.0); a linear op's zero tangent for a Python number
    # (where(c, 1.0, x), inside norm's and eigh's rules) was a float64 array
    x = rng.standard_normal((3, 4)).astype(np.float32)
    v = np.ones_like(x)
    objectives = [hnp.max, hnp.min, lambda x: hnp.sum(hnp.max(x, axis=0)),
                  lambda x: hnp.linalg.norm(x), lambda x: hnp.linalg.norm(x, 2),
                  lambda x: hnp.linalg.norm(x[0], 3), lambda x: hnp.linalg.norm(x, np.inf),
                  lambda x: hnp.sum(hnp.linalg.eigh(x[:, :3] + x[:, :3].T)[1] ** 4)]
    for f in objectives:
        assert hg.grad(f)(x).dtype == np.float32
        assert hg.hvp(f)(x, v).dtype == np.float32
    assert hg.jvp(lambda x: hnp.where(x > 0, 1.0, x), (x,), (v,))[1].dtype == np.float32
    assert hnp.mean(x, where=x > 0).dtype == np.float32


# --- property: any shape, any axes, keepdims -----------------------------------------------
@st.composite
def _shape_and_axis(draw):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    ndim = len(shape)
    axis = draw(st.one_of(st.none(), st.sets(st.integers(-ndim, ndim - 1), max_size=ndim)
                          .map(lambda s: tuple(sorted({a % ndim: a for a in s}.values()))
                               ) if ndim else st.none()))
    return shape, axis, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(_shape_and_axis())
def test_property_reductions_match_numpy(case):
    shape, axis, keepdims = case
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    for name in ("sum", "prod", "mean", "max", "min", "var", "std", "median", "ptp"):
        got = getattr(hnp, name)(x, axis=axis, keepdims=keepdims).numpy()
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        assert got.shape == np.shape(want), name
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, err_msg=name)
    g = hg.grad(lambda x: hnp.sum(hnp.prod(x, axis=axis, keepdims=keepdims)))(x)
    assert g.shape == shape


def test_docstring_examples_run():
    import doctest

    from hessgrad.numpy import _reductions
    from hessgrad.ops import reduction, sorting
    for module in (_reductions, reduction, sorting):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failures == 0, module.__name__


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_variance_of_complex_input_is_real(name):
    # numpy averages |a - mean|**2; (a - mean)**2 gave a complex (wrong) value
    z = np.array([[1 + 2j, 3 - 1j, 0.5 + 0.5j], [-1j, 2.0 + 0j, 1 + 1j]])
    for kwargs in [{}, {"axis": 0}, {"axis": -1, "ddof": 1, "keepdims": True}]:
        got = getattr(hnp, name)(z, **kwargs)
        expected = getattr(np, name)(z, **kwargs)
        assert got.dtype == expected.dtype == np.float64
        np.testing.assert_allclose(got.numpy(), expected)
        traced = hg.function(lambda a: getattr(hnp, name)(a, **kwargs))(z)
        np.testing.assert_allclose(traced, expected)
    # its gradient is the one of the same real function of the real and imaginary parts
    g = hg.grad(lambda a: hnp.sum(getattr(hnp, name)(a, axis=1)))(z)
    g_parts = hg.grad(lambda x, y: hnp.sum(getattr(hnp, name)(x, axis=1) ** (
        1 if "var" in name else 2) + getattr(hnp, name)(y, axis=1) ** (1 if "var" in name
                                                                         else 2)),
        argnums=(0, 1))(z.real, z.imag)
    if "var" in name:
        np.testing.assert_allclose(g, g_parts[0] - 1j * g_parts[1])


@pytest.mark.parametrize("name,scale", [("quantile", 1), ("percentile", 100),
                                        ("nanquantile", 1), ("nanpercentile", 100)])
def test_quantile_differentiates_in_an_eager_tensor_q(name, scale):
    # a tensor q was read as a constant: the gradient in q was silently 0
    x = np.array([[0.3, -1.2, 2.0, 0.7, 1.1], [np.nan, 0.4, -0.5, 3.0, 1.9]])
    if not name.startswith("nan"):
        x = np.nan_to_num(x, nan=0.2)
    q = np.array([0.3, 0.62]) * scale
    f = getattr(hnp, name)
    check_grads(lambda qq: f(x, qq, axis=1), (q,), order=2, modes=("fwd", "rev"))
    s = np.sort(x[0])  # on [0.25, 0.5): s[1] + (4 q - 1) (s[2] - s[1])
    np.testing.assert_allclose(hg.grad(lambda qq: f(x[0], qq))(0.3 * scale),
                               4 * (s[2] - s[1]) / scale)
    with pytest.raises(TypeError, match=f"{name}: q must be known while tracing"):
        hg.function(lambda qq: f(x, qq, axis=1))(q)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantile_dtype_follows_numpy_for_float32_input(name):
    # a float32 q (numpy scalar or array) with float32 input gave float64
    a = np.arange(5.0, dtype=np.float32)
    for q in [0.3, np.float32(0.3), np.array([0.3, 0.9], np.float32), np.float64(0.3),
              [0.3], np.array([1, 0])]:
        got, expected = getattr(hnp, name)(a, q), getattr(np, name)(a, q)
        assert got.dtype == expected.dtype, q
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
