"""hessgrad.numpy extras (NaN statistics, cumulative_sum/prod, interp, convolve/correlate,
cov/corrcoef, polynomials, gradient/trapezoid, comparisons, binning): values equal numpy's on
several shapes, derivatives at order 2 in both modes, graph mode, special points, errors."""

import warnings

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.testing import check_grads

COVERED = {"convolve", "searchsorted", "digitize"}

rng = np.random.default_rng(11)


def _nan(shape, every=4, start=1):
    x = rng.standard_normal(shape)
    if x.size:
        x.reshape(-1)[start::every] = np.nan
    return x


A1 = _nan(7)
A2 = _nan((3, 4))
A2_ALLNAN = A2.copy()
A2_ALLNAN[1] = np.nan
A3 = _nan((2, 3, 4), 5)
NAN_INPUTS = {"1d": A1, "2d": A2, "2d-allnan": A2_ALLNAN, "3d": A3, "0d": np.array(np.nan),
              "ints": rng.integers(-3, 4, size=(3, 4)), "empty": np.zeros((0, 3))}

# (function, kwargs)
NAN_ROWS = [
    ("nanmax", {}), ("nanmax", {"axis": 0}), ("nanmax", {"axis": -1, "keepdims": True}),
    ("nanmax", {"axis": 0, "initial": 0}),
    ("nanmin", {}), ("nanmin", {"axis": (0, -1)}),
    ("nanprod", {}), ("nanprod", {"axis": -1}), ("nanprod", {"axis": 0, "keepdims": True}),
    ("nanvar", {}), ("nanvar", {"axis": 0, "ddof": 1}), ("nanvar", {"axis": -1, "ddof": 2}),
    ("nanvar", {"axis": (0, -1), "keepdims": True}),
    ("nanstd", {}), ("nanstd", {"axis": -1, "ddof": 1}),
    ("nancumsum", {}), ("nancumsum", {"axis": -1}),
    ("nancumprod", {}), ("nancumprod", {"axis": 0}),
    ("nanmedian", {}), ("nanmedian", {"axis": 0}), ("nanmedian", {"axis": -1, "keepdims": True}),
    ("nanmedian", {"axis": (0, -1)}),
    ("nanquantile", {"q": 0.3}), ("nanquantile", {"q": [0.0, 0.25, 0.5, 1.0], "axis": -1}),
    ("nanquantile", {"q": 0.7, "axis": 0, "keepdims": True}),
    ("nanpercentile", {"q": 40}), ("nanpercentile", {"q": [10, 90], "axis": (0, -1)}),
]


def _call(module, name, x, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(module, name)(x, **kwargs)


@pytest.mark.parametrize("which", list(NAN_INPUTS))
@pytest.mark.parametrize("name,kwargs", NAN_ROWS, ids=[f"{r[0]}-{r[1]}" for r in NAN_ROWS])
def test_nan_functions_match_numpy(name, kwargs, which):
    x = NAN_INPUTS[which]
    try:
        want = _call(np, name, x, kwargs)
    except Exception as exc:  # noqa: BLE001 - numpy refuses: so must we, with the same type
        with pytest.raises(type(exc)):
            _call(hnp, name, x, kwargs)
        return
    got = np.asarray(_call(hnp, name, x, kwargs))
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, equal_nan=True)


def test_nan_warnings_like_numpy():
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        assert np.isnan(hnp.nanmax(np.full(3, np.nan)).numpy())
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        hnp.nanmedian(A2_ALLNAN, axis=1)
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        hnp.nanquantile(A2_ALLNAN, 0.3, axis=1)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        hnp.nanvar(np.array([1.0, np.nan]), ddof=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hnp.nanmax(A2, axis=1)
        hnp.nanvar(A2, axis=1)
        hnp.nanmedian(A2)


# --- everything else: values against numpy ------------------------------------------------
XP = np.array([0.0, 1.0, 2.5, 4.0])
FP = np.array([1.0, 3.0, -2.0, 0.5])
XI = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 5.0, np.nan])
Y2 = rng.standard_normal((3, 5))
Y3 = rng.standard_normal((2, 3, 4))
XS = np.linspace(0.0, 1.0, 7)

VALUE_ROWS = [
    ("cumulative_sum", (Y2[0],), {}), ("cumulative_sum", (Y2,), {"axis": 1}),
    ("cumulative_sum", (Y3,), {"axis": 0, "include_initial": True}),
    ("cumulative_sum", (np.array(2.0),), {}), ("cumulative_sum", (Y2,), {}),
    ("cumulative_sum", (np.arange(4),), {"dtype": np.float32}),
    ("cumulative_prod", (Y2[1],), {"include_initial": True}),
    ("cumulative_prod", (Y3,), {"axis": -1}),
    ("interp", (XI, XP, FP), {}), ("interp", (XI, XP, FP), {"left": -7.0, "right": 9.0}),
    ("interp", (Y2, XP, FP), {}), ("interp", (2.0, XP, FP), {}),
    ("interp", (XI, XP, FP), {"period": 3.0}), ("interp", (XI, [1.0], [2.0]), {}),
    ("interp", (XI, [0.0, 1.0, 1.0, 2.0], [0.0, 1.0, 3.0, 2.0]), {}),
    ("interp", (XI, XP, FP.astype(np.float32)), {}), ("interp", (XI, XP, [1.0, 2.0]), {}),
    ("cov", (Y2,), {}), ("cov", (Y2,), {"rowvar": False}), ("cov", (Y2[0], Y2[1]), {}),
    ("cov", (Y2,), {"bias": True}), ("cov", (Y2[0],), {}), ("cov", (Y2,), {"ddof": 0}),
    ("cov", (Y2,), {"ddof": 2, "fweights": [1, 2, 1, 3, 1],
                    "aweights": [0.5, 1.0, 2.0, 1.0, 0.1]}),
    ("cov", (Y2,), {"aweights": [0.5, 1.0, 2.0, 1.0, 0.1]}),
    ("cov", (Y2.astype(np.float32),), {}), ("cov", (Y2,), {"dtype": np.float32}),
    ("cov", (Y3,), {}), ("cov", (Y2,), {"ddof": 1.5}),
    ("corrcoef", (Y2,), {}), ("corrcoef", (Y2[0], Y2[1]), {}), ("corrcoef", (Y2[0],), {}),
    ("corrcoef", (Y2,), {"rowvar": False}),
    ("polyval", ([1.0, 2.0, 3.0], Y2), {}), ("polyval", (np.array([1, 2]), np.array([3, 4])), {}),
    ("polyval", (Y2[:, :2], Y2[0, :2]), {}), ("polyval", ([], Y2), {}),
    ("polyfit", (XS, np.sin(XS), 3), {}), ("polyfit", (XS, np.sin(XS), 0), {}),
    ("polyfit", (XS, np.stack([XS, XS ** 2], 1), 2), {"w": XS + 1}),
    ("polyfit", (XS, np.sin(XS), 2), {"cov": True}),
    ("polyfit", (XS, np.sin(XS), 2), {"cov": "unscaled"}),
    ("polyfit", (XS, np.sin(XS), 2), {"full": True}),
    ("polyfit", (XS, np.sin(XS), -1), {}), ("polyfit", (Y2, Y2, 1), {}),
    ("ediff1d", (Y2,), {}), ("ediff1d", (Y2,), {"to_begin": [1, 2], "to_end": 3.0}),
    ("ediff1d", (np.arange(5),), {"to_end": 1.5}),
    ("gradient", (Y2,), {}), ("gradient", (Y2, 0.5), {"axis": 1}),
    ("gradient", (Y3,), {"edge_order": 2}), ("gradient", (Y2, 2.0, XS[:5] ** 2), {}),
    ("gradient", (Y2, [0, 1, 3], XS[:5] ** 2), {"edge_order": 2}),
    ("gradient", (np.arange(5),), {}), ("gradient", (Y3, 0.1), {"axis": (0, -1)}),
    ("gradient", (Y2[:, :2],), {"edge_order": 2}), ("gradient", (Y2,), {"edge_order": 3}),
    ("trapezoid", (Y2,), {}), ("trapezoid", (Y2, XS[:5]), {}),
    ("trapezoid", (Y3,), {"dx": 0.3, "axis": 0}), ("trapezoid", (Y2, Y2 * 2), {"axis": 0}),
    ("isclose", ([1.0, 2.0, np.nan, np.inf, -np.inf], [1 + 1e-9, 2.1, np.nan, np.inf, np.inf]),
     {}),
    ("isclose", ([1.0, np.nan], [1.0, np.nan]), {"equal_nan": True}),
    ("isclose", (np.arange(3), 1), {"atol": 1.0}),
    ("allclose", (Y2, Y2 + 1e-12), {}), ("allclose", (Y2, Y2 + 1e-3), {}),
    ("array_equal", (Y2, Y2), {}), ("array_equal", (Y2, Y2[:2]), {}),
    ("array_equal", ([np.nan], [np.nan]), {"equal_nan": True}),
    ("array_equiv", (Y2[0], np.stack([Y2[0], Y2[0]])), {}),
    ("isreal", (Y2,), {}), ("isreal", (Y2 + 1j * (Y2 > 0),), {}),
    ("iscomplex", (Y2,), {}), ("iscomplex", (Y2 + 1j * (Y2 > 0),), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, -np.inf, 1.0]),), {}),
    ("nan_to_num", (np.array([np.nan, np.inf, 1.0], np.float32),), {"nan": 3, "posinf": 4}),
    ("nan_to_num", (np.arange(3),), {}),
    ("searchsorted", (XP, XI), {}), ("searchsorted", (XP, XI), {"side": "right"}),
    ("searchsorted", (XP[::-1], 2.0), {"sorter": [3, 2, 1, 0]}),
    ("digitize", (XI, XP), {}), ("digitize", (XI, XP[::-1]), {"right": True}),
    ("digitize", (Y2, XP), {}),
    ("bincount", ([0, 3, 3, 1],), {}), ("bincount", ([0, 3, 3, 1], [1.0, 2.0, 0.5, 4.0]),
                                        {"minlength": 7}),
    ("bincount", (np.zeros(0, int),), {}), ("bincount", ([0, -1],), {}),
    ("histogram", (Y2,), {}), ("histogram", (Y2,), {"bins": 3, "weights": Y2 ** 2,
                                                   "density": True}),
    ("histogram", (Y2,), {"bins": [-1, 0, 0.5, 2]}), ("histogram", (Y2,), {"density": True}),
    ("histogram", (Y2,), {"bins": 4, "range": (-0.5, 0.5), "weights": Y2}),
    ("unique", ([3.0, 1.0, 3.0, 2.0],), {"return_index": True, "return_inverse": True,
                                         "return_counts": True}),
    ("unique", (np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 5.0]]),), {"axis": 0}),
]


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("name,args,kwargs", VALUE_ROWS,
                         ids=[f"{r[0]}-{i}" for i, r in enumerate(VALUE_ROWS)])
def test_values_match_numpy(name, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(np, name)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - numpy refuses: so must we, naming the function
        with pytest.raises(type(exc)) as info:
            getattr(hnp, name)(*args, **kwargs)
        assert name in str(info.value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = getattr(hnp, name)(*args, **kwargs)
    if isinstance(want, bool):
        assert got is want
        return
    assert isinstance(got, tuple) == isinstance(want, tuple)
    for g, w in zip(_leaves(got), _leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape
        assert g.dtype == w.dtype or name in ("polyfit",) and g.dtype.kind == w.dtype.kind
        np.testing.assert_allclose(g, w, rtol=1e-10 if name == "polyfit" else 1e-13,
                                   atol=1e-13, equal_nan=True)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_correlate_match_numpy(name, mode):
    for n in range(1, 6):
        for m in range(1, 6):
            a, v = rng.standard_normal(n), rng.standard_normal(m)
            np.testing.assert_allclose(getattr(hnp, name)(a, v, mode).numpy(),
                                       getattr(np, name)(a, v, mode), rtol=1e-13, atol=1e-14)
    a, v = np.arange(5), np.array([1, -2])
    got = getattr(hnp, name)(a, v, mode).numpy()
    assert got.dtype == getattr(np, name)(a, v, mode).dtype
    np.testing.assert_array_equal(got, getattr(np, name)(a, v, mode))


# --- derivatives ---------------------------------------------------------------------------
N2 = rng.standard_normal((3, 4))
N2[0, 1] = N2[2, 3] = N2[2, 0] = np.nan
W5 = rng.random(5) + 0.5
X_OFF = np.array([-1.3, 0.2, 0.7, 1.6, 2.2, 3.3, 4.6])  # off the knots

GRAD_ROWS = [
    ("nanmax", lambda x: hnp.nanmax(x, axis=1), (N2,)),
    ("nanmin", lambda x: hnp.nanmin(x), (N2,)),
    ("nanprod", lambda x: hnp.nanprod(x, axis=0), (N2,)),
    ("nanvar", lambda x: hnp.nanvar(x, axis=1, ddof=1), (N2,)),
    ("nanvar-all", lambda x: hnp.nanvar(x), (N2,)),
    ("nanstd", lambda x: hnp.nanstd(x, axis=0, keepdims=True), (N2,)),
    ("nancumsum", lambda x: hnp.nancumsum(x, axis=1), (N2,)),
    ("nancumprod", lambda x: hnp.nancumprod(x), (N2,)),
    ("nanmedian", lambda x: hnp.nanmedian(x, axis=1), (N2,)),
    ("nanmedian-all", lambda x: hnp.nanmedian(x), (N2,)),
    ("nanquantile", lambda x: hnp.nanquantile(x, [0.1, 0.6, 1.0], axis=0), (N2,)),
    ("nanpercentile", lambda x: hnp.nanpercentile(x, 35), (N2,)),
    ("cumulative_sum", lambda x: hnp.cumulative_sum(x, axis=0, include_initial=True), (Y2,)),
    ("cumulative_prod", lambda x: hnp.cumulative_prod(x, axis=1, include_initial=True), (Y2,)),
    ("interp-x", lambda x: hnp.interp(x, XP, FP), (X_OFF,)),
    ("interp-fp", lambda f: hnp.interp(X_OFF, XP, f, left=0.0), (FP,)),
    ("interp-all", lambda x, xp, f: hnp.interp(x, xp, f), (X_OFF[1:-2], XP, FP)),
    ("interp-period", lambda x, f: hnp.interp(x, XP, f, period=3.0), (X_OFF, FP)),
    ("convolve-full", lambda a, v: hnp.convolve(a, v), (Y2[0], Y2[1, :3])),
    ("convolve-same", lambda a, v: hnp.convolve(a, v, "same"), (Y2[0, :2], Y2[1, :4])),
    ("convolve-valid", lambda a, v: hnp.convolve(a, v, "valid"), (Y2[0], Y2[1, :2])),
    ("correlate-valid", lambda a, v: hnp.correlate(a, v), (Y2[0], Y2[1, :3])),
    ("correlate-same", lambda a, v: hnp.correlate(a, v, "same"), (Y2[0, :2], Y2[1])),
    ("correlate-full", lambda a, v: hnp.correlate(a, v, "full"), (Y2[0, :4], Y2[1])),
    ("cov", lambda m: hnp.cov(m), (Y2,)),
    ("cov-y-bias", lambda m, y: hnp.cov(m, y, bias=True), (Y2[:2], Y2[2])),
    ("cov-aweights", lambda m, w: hnp.cov(m, aweights=w, ddof=1), (Y2, W5)),
    ("corrcoef", lambda m: hnp.corrcoef(m, rowvar=False), (Y2[:, :3],)),
    ("polyval", lambda p, x: hnp.polyval(p, x), (Y2[0, :3], Y2[1])),
    ("polyfit", lambda x, y: hnp.polyfit(x, y, 2), (XS, np.sin(3 * XS))),
    ("polyfit-w", lambda y, w: hnp.polyfit(XS[:5], y, 1, w=w), (Y2[0], W5)),
    ("ediff1d", lambda x: hnp.ediff1d(x, to_begin=x[0, 0]), (Y2,)),
    ("gradient", lambda f: hnp.gradient(f, 0.5, XS[:5] ** 2), (Y2,)),
    ("gradient-order2", lambda f: hnp.gradient(f, edge_order=2, axis=-1), (Y3,)),
    ("trapezoid", lambda y, x: hnp.trapezoid(y, x), (Y2, np.cumsum(W5))),
    ("trapezoid-dx", lambda y: hnp.trapezoid(y, dx=0.2, axis=0), (Y3,)),
    ("nan_to_num", lambda x: hnp.nan_to_num(x, nan=2.0), (N2,)),
    ("bincount", lambda w: hnp.bincount([0, 3, 3, 1, 0], w * w), (W5,)),
    ("histogram", lambda w: hnp.histogram(Y2, 3, weights=w, density=True)[0], (Y2 ** 2,)),
    ("unique", lambda x: hnp.unique(x), (Y2,)),
]


@pytest.mark.parametrize("name,f,args", GRAD_ROWS, ids=[r[0] for r in GRAD_ROWS])
def test_grads(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


# --- graph mode ----------------------------------------------------------------------------
GRAPH_ROWS = [
    ("nanmax", lambda x: hnp.nanmax(x, axis=1)), ("nanmin", lambda x: hnp.nanmin(x, axis=0)),
    ("nanprod", lambda x: hnp.nanprod(x)), ("nanvar", lambda x: hnp.nanvar(x, ddof=1, axis=0)),
    ("nanstd", lambda x: hnp.nanstd(x, axis=1)), ("nancumsum", lambda x: hnp.nancumsum(x)),
    ("nancumprod", lambda x: hnp.nancumprod(x, axis=1)),
    ("nanmedian", lambda x: hnp.nanmedian(x, axis=1)),
    ("nanquantile", lambda x: hnp.nanquantile(x, [0.2, 0.9], axis=0)),
    ("nanpercentile", lambda x: hnp.nanpercentile(x, 60)),
    ("cumulative_sum", lambda x: hnp.cumulative_sum(x, axis=1, include_initial=True)),
    ("cumulative_prod", lambda x: hnp.cumulative_prod(x, axis=0)),
    ("interp", lambda x: hnp.interp(x * 2, XP, FP)),
    ("interp-fp", lambda x: hnp.interp(XI[:-1], XP, x[0], left=-1.0)),
    ("convolve", lambda x: hnp.convolve(x[0], x[1, :2], "same")),
    ("correlate", lambda x: hnp.correlate(x[0], x[1, :3], "full")),
    ("cov", lambda x: hnp.cov(x)), ("corrcoef", lambda x: hnp.corrcoef(x)),
    ("polyval", lambda x: hnp.polyval(x[0], x[1])),
    ("polyfit", lambda x: hnp.polyfit(XS[:4], x[0], 2)),
    ("ediff1d", lambda x: hnp.ediff1d(x, to_end=[1.0])),
    ("gradient", lambda x: hnp.gradient(x)[1]), ("trapezoid", lambda x: hnp.trapezoid(x)),
    ("nan_to_num", lambda x: hnp.nan_to_num(x, nan=1.5) * 2.0),
    ("bincount", lambda x: hnp.bincount([0, 2, 2, 5], x[0])),
    ("histogram", lambda x: hnp.histogram(XP, 2, weights=x[0])[0]),
]
NONDIFF_GRAPH_ROWS = [
    ("isclose", lambda x: hnp.isclose(x, 0.2, atol=0.5)), ("isreal", lambda x: hnp.isreal(x)),
    ("iscomplex", lambda x: hnp.iscomplex(x)),
    ("searchsorted", lambda x: hnp.searchsorted(XP, x)),
    ("digitize", lambda x: hnp.digitize(x, XP, right=True)),
]
XG = rng.standard_normal((3, 4)) + 0.1
XG[1, 2] = 0.0
XGN = XG.copy()
XGN[0, 3] = np.nan


@pytest.mark.parametrize("name,f", GRAPH_ROWS, ids=[r[0] for r in GRAPH_ROWS])
def test_graph_mode(name, f):
    x = XGN if name.startswith("nan") else XG
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(hg.function(f)(x), f(x).numpy(), rtol=1e-14, atol=1e-15)
        loss = hg.grad(lambda x: hnp.sum(hnp.sin(f(x))))
        eager = loss(x)
        assert np.all(np.isfinite(eager))
        np.testing.assert_allclose(hg.function(loss)(x), eager, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name,f", NONDIFF_GRAPH_ROWS, ids=[r[0] for r in NONDIFF_GRAPH_ROWS])
def test_graph_mode_constants(name, f):
    np.testing.assert_array_equal(hg.function(f)(XG), f(XG).numpy())


def test_data_shaped_results_refuse_tracing_clearly():
    for f, match in [(lambda x: hnp.unique(x), r"unique.*'ar'.*traced"),
                     (lambda x: hnp.bincount(hnp.astype(x, int) if hasattr(hnp, "astype")
                                             else x.astype(int)), r"bincount.*'x'"),
                     (lambda x: hnp.histogram(x)[0], r"histogram.*'a'"),
                     (lambda x: hnp.allclose(x, x), r"allclose.*isclose")]:
        with pytest.raises(TypeError, match=match):
            hg.function(f)(XG)
    assert hg.function(lambda x: hnp.array_equal(x, x[0]) or hnp.sum(x))(XG) == XG.sum()


# --- special points ------------------------------------------------------------------------
def test_nan_entries_have_zero_derivative():
    for f in (hnp.nanmax, hnp.nanmin, hnp.nanprod, hnp.nanvar, hnp.nanstd, hnp.nanmedian,
              lambda x: hnp.nanquantile(x, 0.3), lambda x: hnp.sum(hnp.nancumsum(x)),
              lambda x: hnp.sum(hnp.nancumprod(x)), lambda x: hnp.nanpercentile(x, 80)):
        g = hg.grad(f)(A1)
        assert np.all(g[np.isnan(A1)] == 0) and np.all(np.isfinite(g))
        h = hg.hessian(f)(A1)
        assert np.all(h[np.isnan(A1)] == 0) and np.all(h[:, np.isnan(A1)] == 0)
    # all-NaN slices: NaN values with zero, finite derivatives elsewhere
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for f in (lambda x: hnp.nanmax(x, axis=1), lambda x: hnp.nanmedian(x, axis=1),
                  lambda x: hnp.nanquantile(x, 0.4, axis=1), lambda x: hnp.nanvar(x, axis=1),
                  lambda x: hnp.nanstd(x, axis=1, ddof=1)):
            assert np.isnan(f(A2_ALLNAN).numpy()[1])
            g = hg.grad(lambda x: hnp.nansum(f(x)))(A2_ALLNAN)
            assert np.all(g[1] == 0) and np.all(g[np.isnan(A2_ALLNAN)] == 0)
            assert np.all(np.isfinite(g))


def test_interp_derivatives():
    f = lambda x: hnp.interp(x, XP, FP)  # noqa: E731
    slopes = np.diff(FP) / np.diff(XP)
    g = hg.grad(lambda x: hnp.sum(f(x)))(np.array([-1.0, 0.0, 0.5, 1.0, 3.0, 4.0, 5.0]))
    np.testing.assert_allclose(g, [0, slopes[0], slopes[0], slopes[1], slopes[2], slopes[2], 0])
    assert np.all(hg.hessian(lambda x: hnp.sum(f(x)))(X_OFF) == 0)
    # the derivative in fp is the hat-function weight of each knot
    jac = hg.jacobian(lambda fp: hnp.interp(np.array([0.25, 2.5]), XP, fp))(FP)
    np.testing.assert_allclose(jac, [[0.75, 0.25, 0, 0], [0, 0, 1, 0]])


def test_convolve_vjp_is_a_correlation():
    a, v, g = rng.standard_normal(6), rng.standard_normal(3), rng.standard_normal(8)
    _, pull = hg.vjp(lambda a, v: hnp.convolve(a, v), a, v)
    ga, gv = pull(g)
    np.testing.assert_allclose(ga, np.correlate(g, v, "valid"), rtol=1e-13)
    np.testing.assert_allclose(gv, np.correlate(g, a, "valid"), rtol=1e-13)


def test_polyfit_sensitivity_matches_linear_algebra():
    # c = pinv(V) y, so dc/dy = pinv(V)
    jac = hg.jacobian(lambda y: hnp.polyfit(XS, y, 2))(np.cos(XS))
    np.testing.assert_allclose(jac, np.linalg.pinv(np.vander(XS, 3)), rtol=1e-9, atol=1e-12)


def test_cumulative_float32_and_dtype():
    x = rng.standard_normal(4).astype(np.float32)
    assert hnp.cumulative_sum(x, include_initial=True).dtype == np.float32
    assert hnp.nanmax(x).dtype == np.float32
    assert hnp.nanquantile(x, 0.3).dtype == np.quantile(x, 0.3).dtype
    assert hg.grad(lambda x: hnp.sum(hnp.convolve(x, x)))(x).dtype == np.float32


# --- bad input -----------------------------------------------------------------------------
def test_errors_name_function_argument_and_shape():
    with pytest.raises(ValueError, match=r"cumulative_sum.*axis.*\(3, 5\)"):
        hnp.cumulative_sum(Y2)
    with pytest.raises(ValueError, match=r"interp.*same length"):
        hnp.interp(XI, XP, FP[:2])
    with pytest.raises(ValueError, match=r"interp.*1-D.*\(3, 5\)"):
        hnp.interp(XI, Y2, FP)
    with pytest.raises(ValueError, match=r"interp.*empty"):
        hnp.interp(XI, [], [])
    with pytest.raises(ValueError, match=r"convolve.*'v'.*empty"):
        hnp.convolve([1.0], [])
    with pytest.raises(ValueError, match=r"correlate.*'a'.*1-D.*\(3, 5\)"):
        hnp.correlate(Y2, [1.0])
    with pytest.raises(ValueError, match=r"convolve.*mode"):
        hnp.convolve([1.0], [1.0], mode="middle")
    with pytest.raises(ValueError, match=r"cov.*more than 2.*\(2, 3, 4\)"):
        hnp.cov(Y3)
    with pytest.raises(ValueError, match=r"cov.*observations"):
        hnp.cov(Y2, Y2[:, :2])
    with pytest.raises(TypeError, match=r"polyfit.*same length.*\(7,\).*\(5,\)"):
        hnp.polyfit(XS, XS[:5], 1)
    with pytest.raises(ValueError, match=r"gradient.*too small.*\(3, 1\)"):
        hnp.gradient(np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"gradient.*distances must match"):
        hnp.gradient(Y2, [0.0, 1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"digitize.*monoton"):
        hnp.digitize(XI, [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match=r"searchsorted.*'a'.*\(3, 5\)"):
        hnp.searchsorted(Y2, 1.0)
    with pytest.raises(ValueError, match=r"bincount.*weights.*\(2,\).*\(3,\)"):
        hnp.bincount([0, 1, 1], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"histogram.*weights"):
        hnp.histogram(Y2, weights=Y2[0])
    with pytest.raises(ValueError, match=r"nanmax: output parameter out= has shape \(2,\)"):
        hnp.nanmax(Y2, out=np.zeros(2))
    with pytest.raises(NotImplementedError, match="nanquantile.*method"):
        hnp.nanquantile(Y2, 0.5, method="nearest")


def test_numpy_functions_dispatch_to_hessgrad():
    g = hg.grad(lambda x: np.nanmax(x) + np.trapezoid(x) + np.interp(0.3, XP[:3], x[:3]))(
        np.array([1.0, 4.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, [0.5 + 0.7, 2.0 + 0.3, 1.0, 0.5])
    assert hg.function(lambda x: np.searchsorted(XP, x))(XG).dtype.kind == "i"


def test_docstring_examples_run():
    import doctest

    from hessgrad.numpy import (_calculus, _comparisons, _floating_point, _histograms,
                                _nan_functions, _sets, _signal_processing, _statistics)
    from hessgrad.ops import signal
    for module in (_calculus, _comparisons, _floating_point, _histograms, _nan_functions, _sets,
                   _signal_processing, _statistics, signal):
        failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS,
                                      extraglobs={"np": np})
        assert failures == 0, module.__name__


def test_gradient_differentiates_in_tensor_coordinates_and_spacings():
    # tensor coordinates were read as constants (eager gradients in them silently 0), and a
    # traced coordinate vector was taken for a scalar spacing (a broadcast error)
    x = np.array([-1.0, -0.4, 0.1, 0.5, 1.3, 1.6])
    y = np.cos(x)
    f2 = rng.standard_normal((3, 6))
    for edge_order in (1, 2):
        check_grads(lambda c: hnp.gradient(y, c, edge_order=edge_order), (x,), order=2)
        check_grads(lambda c: hnp.gradient(f2, 0.5, c, edge_order=edge_order)[1], (x,),
                    order=2)
        check_grads(lambda h: hnp.gradient(f2, h, edge_order=edge_order)[0], (0.7,), order=2)
        for coords in (x, np.arange(6.0) * 0.5):
            expected = np.gradient(y, coords, edge_order=edge_order)
            np.testing.assert_allclose(
                hnp.gradient(y, hg.constant(coords), edge_order=edge_order).numpy(), expected)
            traced = hg.function(lambda c: hnp.gradient(y, c, edge_order=edge_order))(coords)
            np.testing.assert_allclose(traced, expected)
    # d/dc of the interior central difference at index 1 (the rule above, by hand)
    dx1, dx2 = x[1] - x[0], x[2] - x[1]

    def interior(d1, d2):
        return (-d2 / (d1 * (d1 + d2)) * y[0] + (d2 - d1) / (d1 * d2) * y[1]
                + d1 / (d2 * (d1 + d2)) * y[2])
    g = hg.grad(lambda c: hnp.gradient(y, c)[1])(x)
    h = 1e-6
    d_dx1 = (interior(dx1 + h, dx2) - interior(dx1 - h, dx2)) / (2 * h)
    d_dx2 = (interior(dx1, dx2 + h) - interior(dx1, dx2 - h)) / (2 * h)
    np.testing.assert_allclose(g[:3], [-d_dx1, d_dx1 - d_dx2, d_dx2], rtol=1e-5)


def test_nan_to_num_differentiates_in_tensor_fill_values():
    # a tensor nan=/posinf=/neginf= raised a TypeError (converted to a numpy array)
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    f = lambda c: hnp.nan_to_num(x, nan=c, posinf=3 * c, neginf=c * c)  # noqa: E731
    np.testing.assert_allclose(f(hg.constant(2.0)).numpy(), [2.0, 6.0, 4.0, 1.0])
    check_grads(f, (2.0,), order=2)
    np.testing.assert_allclose(hg.function(f)(2.0), [2.0, 6.0, 4.0, 1.0])
    assert hnp.nan_to_num(x.astype(np.float32), nan=hg.constant(2.0)).dtype == np.float32


def test_isclose_keeps_python_numbers_weak_as_numpy():
    # hnp made 0.1 a float64 array, so float32(0.1) was not close to it with zero tolerances
    x = np.array([0.1, 0.2], np.float32)
    for a, b in ((x, 0.1), (0.1, x), (x, 1), (np.arange(3), 1), (0.1, 0.1),
                 (x, np.float64(0.1))):
        np.testing.assert_array_equal(np.asarray(hnp.isclose(a, b, rtol=0, atol=0)),
                                      np.isclose(a, b, rtol=0, atol=0))


@pytest.mark.parametrize("start, stop", [(np.float32(0), np.float32(1)), (np.float32(0), 0.5),
                                         (0.0, np.float32(1)), (0.0, np.float64(1))])
def test_linspace_of_tensors_has_numpys_dtype(start, stop):
    # float32 tensor bounds gave float64 (numpy keeps float32)
    expected = np.linspace(start, stop, 5)
    got = hnp.linspace(*(hg.constant(v) if isinstance(v, np.generic) else v
                         for v in (start, stop)), 5)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
