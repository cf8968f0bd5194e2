"""hessgrad.kernels.vecmath: the vectorised tanh, sigmoid and logaddexp against numpy's and
scipy's, value by value."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.special

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.kernels import tuning, vecmath

pytestmark = pytest.mark.skipif(vecmath._kernels() is None,
                                reason="llvmlite cannot compile here: numpy's functions are used")

# Every function as a call on two arrays of one shape (the unary ones ignore the second) and
# numpy's (scipy's) counterpart; "softplus" is logaddexp's scalar-operand entry point.
FUNCTIONS = {
    "tanh": (lambda a, b, **kw: vecmath.tanh(a, **kw), lambda a, b, **kw: np.tanh(a, **kw)),
    "sigmoid": (lambda a, b, **kw: vecmath.sigmoid(a, **kw),
                lambda a, b, **kw: scipy.special.expit(a, **kw)),
    "logaddexp": (vecmath.logaddexp, np.logaddexp),
    "softplus": (lambda a, b, **kw: vecmath.logaddexp(0.0, a, **kw),
                 lambda a, b, **kw: np.logaddexp(0.0, a, **kw)),
}
NAMES = list(FUNCTIONS)
# the measured maxima (see the module docstring)
BOUND = {"tanh": 3, "sigmoid": 2, "logaddexp": 2, "softplus": 2}
EXPIT_UNDERFLOW = -709.78  # expit(x) = 1 / (1 + exp(-x)) is 0 below, where sigmoid is not yet
EXTENDED = np.finfo(np.longdouble).nmant >= 63  # an exact enough reference in long double


def ulps(a, b):
    """Distance in units in the last place between float64 arrays (0 for equal NaNs)."""
    ia, ib = (np.where(v.view(np.int64) < 0, np.int64(-2**63) - v.view(np.int64),
                       v.view(np.int64)) for v in (a, b))
    both_nan = np.isnan(a) & np.isnan(b)
    return np.where(both_nan, 0, np.abs(ia - ib))


def logaddexp_ulps(got, x, y):
    """|got - numpy's| in units in the last place of the largest of max(x, y), the log1p term
    and the result: where max(x, y) + log1p(e) cancels to near 0 both results carry the
    rounding errors of the terms, far more than an ulp of the result."""
    with np.errstate(all="ignore"):
        want = np.logaddexp(x, y)
        m = np.maximum(x, y)
        scale = np.maximum(np.maximum(np.abs(m), np.abs(want - m)), np.abs(want))
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite], equal_nan=True)
    return (np.abs(got - want)[finite] / np.spacing(scale[finite])).max(initial=0.0)


def error(name, a, b, got=None):
    """The largest error of ``name`` at ``a, b`` (or of ``got`` there) against numpy's."""
    fast, reference = FUNCTIONS[name]
    got = fast(a, b) if got is None else got
    if name == "logaddexp":
        return logaddexp_ulps(got, a, b)
    if name == "softplus":
        return logaddexp_ulps(got, np.zeros_like(a), a)
    keep = a > EXPIT_UNDERFLOW if name == "sigmoid" else slice(None)
    return ulps(got[keep], reference(a, b)[keep]).max(initial=0)


def same(got, want):
    """Equal values, NaNs where numpy has them and the signs of zeros."""
    return np.array_equal(got, want, equal_nan=True) and \
        np.array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))


# --- accuracy ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [1e-300, 1e-12, 1e-4, 0.1, 0.5, 1.0, 3.0, 10.0, 25.0, 1e5])
def test_within_bound_of_numpy(name, scale):
    a, b = np.random.default_rng(0).standard_normal((2, 20_001)) * scale
    assert error(name, a, b) <= BOUND[name]


def test_tanh_dense_grid_and_special_values():
    x = np.concatenate([np.linspace(-30.0, 30.0, 600_001),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2e-308,
                         18.0, 19.5, 22.0, 22.5, -1e308, 1e308]])
    out = vecmath.tanh(x)
    assert ulps(out, np.tanh(x)).max() <= 3
    assert same(out[-14:], np.tanh(x[-14:]))  # -0.0 stays -0.0


def sigmoid_exact(x):
    """The sigmoid in long double, rounded to float64."""
    xl = x.astype(np.longdouble)
    e = np.exp(-np.abs(xl))
    return np.where(xl >= 0, 1 / (1 + e), e / (1 + e)).astype(np.float64)


def test_sigmoid_dense_grid_and_special_values():
    x = np.linspace(-750.0, 750.0, 1_500_001)
    out = vecmath.sigmoid(x)
    above = x > EXPIT_UNDERFLOW
    assert ulps(out[above], scipy.special.expit(x[above])).max() <= 2
    # below, the subnormal results (0 from expit): the formula's, without overflow
    with np.errstate(under="ignore"):
        e = np.exp(-np.abs(x))
    formula = np.where(x >= 0, 1 / (1 + e), e / (1 + e))
    assert ulps(out, formula).max() <= 2
    assert 0 < out[np.searchsorted(x, -740.0)] < 1e-320
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, -1e308,
                        40.0, 750.0, -745.2, -750.0, -1e5])
    assert same(vecmath.sigmoid(np.tile(special, 8)), scipy.special.expit(np.tile(special, 8)))


@pytest.mark.skipif(not EXTENDED, reason="long double is not an extended type here")
def test_sigmoid_and_softplus_within_an_ulp_of_the_exact_values():
    rng = np.random.default_rng(3)
    x = np.concatenate([np.linspace(-750.0, 750.0, 300_001)] +
                       [rng.standard_normal(20_001) * s for s in (1e-12, 0.1, 1.0, 10.0, 1e3)])
    assert ulps(vecmath.sigmoid(x), sigmoid_exact(x)).max() <= 1
    z = np.concatenate([np.linspace(-745.0, 40.0, 300_001), rng.standard_normal(20_001) * 30])
    zl = z.astype(np.longdouble)
    exact = np.where(zl > 0, zl + np.log1p(np.exp(-zl)), np.log1p(np.exp(zl)))
    assert ulps(vecmath.logaddexp(0.0, z), exact.astype(np.float64)).max() <= 1


@pytest.mark.parametrize("base", [-1e10, -1e3, -30.0, -1.0, 0.0, 1.0, 30.0, 1e3, 1e10])
def test_logaddexp_over_differences_in_both_branches(base):
    # x - y in [-40, 40] (both branches of log1p, and exp far into its range)
    rng = np.random.default_rng(4)
    d = np.linspace(-40.0, 40.0, 400_001)
    x = base + rng.uniform(-1.0, 1.0, d.size) * (abs(base) * 1e-3 + 1.0)
    y = x - d
    assert logaddexp_ulps(vecmath.logaddexp(x, y), x, y) <= 2
    assert logaddexp_ulps(vecmath.logaddexp(y, x), y, x) <= 2


def test_logaddexp_special_values_exactly_as_numpy():
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e308, -1e308, 800.0,
              -800.0]  # every pair's result is exact (numpy's whatever its libm)
    x, y = (np.array(v) for v in zip(*itertools.product(values, repeat=2)))
    with np.errstate(all="ignore"):
        assert same(vecmath.logaddexp(x, y), np.logaddexp(x, y))
        for s in values:
            assert same(vecmath.logaddexp(s, x), np.logaddexp(s, x))
            assert same(vecmath.logaddexp(x, s), np.logaddexp(x, s))
    # ties: x + ln 2 exactly
    t = np.random.default_rng(5).standard_normal(1000) * 100
    assert same(vecmath.logaddexp(t, t.copy()), t + np.log(2.0))
    assert same(vecmath.logaddexp(t, t), np.logaddexp(t, t))


def test_no_floating_point_warnings():
    x = np.array([np.inf, -np.inf, np.nan, 1e308, -1e308, -800.0, 800.0, 0.0] * 160)
    y = x[::-1].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vecmath.tanh(x), vecmath.sigmoid(x), vecmath.logaddexp(x, y), vecmath.logaddexp(-x, 0.0)
        np.add(x[:3], 1.0)  # and none left for numpy to report after its next call


# --- the loops: every function alike ---------------------------------------------------------
def min_size(name):
    return vecmath.min_size(getattr(vecmath, "logaddexp" if name == "softplus" else name))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("extra", list(range(1, 19)) + [936, 937, 939])  # [1:]: a loop's too
def test_every_tail_length_and_shapes(name, extra):
    fast, _ = FUNCTIONS[name]
    n = min_size(name) + extra
    a, b = np.random.default_rng(n).uniform(-4.0, 4.0, (2, n))
    whole = fast(a, b)
    assert error(name, a, b, whole) <= BOUND[name]
    # the same numbers elementwise, whichever block or tail an element falls in
    assert np.array_equal(whole[1:], fast(a[1:], b[1:]))
    if n % 2 == 0:
        assert np.array_equal(fast(a.reshape(2, -1), b.reshape(2, -1)), whole.reshape(2, -1))


@pytest.mark.parametrize("name", NAMES)
def test_in_place(name):
    fast, _ = FUNCTIONS[name]
    a, b = np.random.default_rng(1).standard_normal((2, 50, 40)) * 3
    expected = fast(a, b)
    operands = [0, 1] if name == "logaddexp" else [0]
    for k in operands:  # out= either operand
        args = [a.copy(), b.copy()]
        assert fast(*args, out=args[k]) is args[k]
        assert np.array_equal(args[k], expected)


@pytest.mark.parametrize("name", NAMES)
def test_fallbacks_are_numpys(name):
    """numpy's (scipy's) own function for what the kernels do not take: exactly its values
    and types."""
    fast, reference = FUNCTIONS[name]
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 50, 40)) * 3
    cases = [(a[:, ::2], b[:, ::2]), (a.T, b.T), (a.astype(np.float32), b.astype(np.float32)),
             (a[:3, :3], b[:3, :3]), (np.float64(0.5), np.float64(-0.25)),
             (np.array(0.5), np.array(-0.25)), (np.empty((0, 3)), np.empty((0, 3))),
             (a.astype(np.int64), b.astype(np.int64))]
    if name != "logaddexp":
        cases.append((0.5, -0.25))  # logaddexp takes no two Python floats either: below
    for x, y in cases:
        got, want = fast(x, y), reference(x, y)
        assert type(got) is type(want) and got.dtype == want.dtype
        assert np.array_equal(got, want, equal_nan=True)
    other = np.empty_like(a)  # out= neither operand
    assert fast(a, b, out=other) is other and np.array_equal(other, reference(a, b))


@pytest.mark.parametrize("name", NAMES)
def test_small_arrays_are_numpys(name):
    """Below the size where a loop beats the call of numpy's (scipy's) function, that
    function runs: exactly its values."""
    fast, reference = FUNCTIONS[name]
    a, b = np.random.default_rng(3).uniform(-4.0, 4.0, (2, min_size(name) - 1))
    assert np.array_equal(fast(a, b), reference(a, b))
    assert vecmath.min_size(vecmath.tanh) in (64, 1024) and tuning.VECMATH_MIN_SIZE <= 256


def test_logaddexp_fallbacks():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 50, 40)) * 3
    cases = [(a, b[0]), (a[:1], b), (a, b[:, :1]),  # broadcasting between arrays
             (0.5, -0.25), (a, np.float32(0.5)), (np.array(0.5, np.float32), a),
             (a, np.array([0.5])), (a.astype(np.float32), 0.5), (a[:, ::2], 0.5),
             (a[:2, :3], 0.5), (a, b.astype(np.float32)), (a, [[0.5] * 40] * 50)]
    for x, y in cases:
        got, want = vecmath.logaddexp(x, y), np.logaddexp(x, y)
        assert type(got) is type(want) and got.dtype == want.dtype
        assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="broadcast"):
        vecmath.logaddexp(a, b[:, :3])
    # out= into one operand while the other overlaps it: numpy's buffering
    c = rng.standard_normal(1001)
    want = np.logaddexp(c[1:], c[:-1])
    got = vecmath.logaddexp(c[1:], c[:-1], out=c[1:])
    assert np.array_equal(got, want) and np.array_equal(c[1:], want)


@pytest.mark.parametrize("s", [0.0, -0.0, 3.5, -1e3, 1e300, np.inf, -np.inf, np.nan])
def test_logaddexp_scalar_operand_either_way_round(s):
    z = np.concatenate([np.random.default_rng(7).standard_normal(997) * 20,
                        [0.0, -0.0, np.inf, -np.inf, np.nan, s, -s]])
    with np.errstate(all="ignore"):
        want = np.logaddexp(s, z)
    for scalar in (s, np.float64(s), np.array(s)):
        for got in (vecmath.logaddexp(scalar, z), vecmath.logaddexp(z, scalar)):
            assert type(got) is np.ndarray and got.dtype == np.float64
            assert logaddexp_ulps(got, np.full_like(z, s), z) <= 2
            assert np.array_equal(np.isnan(got), np.isnan(want))
    # the scalar entry point is the array one's arithmetic
    assert np.array_equal(vecmath.logaddexp(z, s), vecmath.logaddexp(z, np.full_like(z, s)),
                          equal_nan=True)
    if s == int(s) if np.isfinite(s) else False:  # a Python int operand takes it too
        assert np.array_equal(vecmath.logaddexp(int(s), z), vecmath.logaddexp(z, s),
                              equal_nan=True)


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("HESSGRAD_VECMATH", "0")
    assert vecmath._compile() is None
    monkeypatch.setattr(vecmath, "_KERNELS", [None])  # as a process started with it
    a, b = np.random.default_rng(8).standard_normal((2, 1000)) * 3
    for name, (fast, reference) in FUNCTIONS.items():
        assert np.array_equal(fast(a, b), reference(a, b))


# --- used by hessgrad's ops ----------------------------------------------------------------
def test_used_by_hessgrad_tanh_in_every_mode():
    x = np.random.default_rng(2).standard_normal(3000)
    expected = vecmath.tanh(x)
    assert np.array_equal(hnp.tanh(x), expected)
    g = hg.grad(lambda x: hnp.sum(hnp.tanh(x)))
    compiled = hg.function(g)
    for grad in (g(x), compiled(x)):
        np.testing.assert_allclose(grad, 1.0 - np.tanh(x) ** 2, rtol=1e-14, atol=1e-15)
    hv = hg.hvp(lambda x: hnp.sum(hnp.tanh(x)))(x, np.ones_like(x))
    t = np.tanh(x)
    np.testing.assert_allclose(hv, -2.0 * t * (1.0 - t * t), rtol=1e-13, atol=1e-15)


def test_used_by_hessgrad_sigmoid_in_every_mode():
    x = np.random.default_rng(9).standard_normal(1000) * 5
    s = scipy.special.expit(x)
    assert np.array_equal(hg.sigmoid(x).numpy(), vecmath.sigmoid(x))
    assert hg.sigmoid(x.astype(np.float32)).dtype == np.float32
    f = lambda x: hnp.sum(hg.sigmoid(x))  # noqa: E731
    for grad in (hg.grad(f)(x), hg.function(hg.grad(f))(x)):
        np.testing.assert_allclose(grad, s * (1.0 - s), rtol=1e-13, atol=1e-15)  # 1 - s
    v = np.random.default_rng(10).standard_normal(1000)
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        hv = hg.hvp(f, mode=mode)(x, v)
        np.testing.assert_allclose(hv, s * (1.0 - s) * (1.0 - 2.0 * s) * v, rtol=1e-12,
                                   atol=1e-15)
    np.testing.assert_allclose(hg.function(f)(x), s.sum(), rtol=1e-14)


def test_used_by_hessgrad_logaddexp_in_every_mode():
    rng = np.random.default_rng(11)
    a, b, v = rng.standard_normal((3, 1000)) * 4
    assert np.array_equal(hnp.logaddexp(a, b), vecmath.logaddexp(a, b))
    assert np.array_equal(hnp.logaddexp(0.0, b), vecmath.logaddexp(0.0, b))
    assert np.array_equal(hg.softplus(b).numpy(), vecmath.logaddexp(0.0, b))
    with pytest.raises(ValueError, match=r"logaddexp: .*shape \(1000,\).*shape \(3,\)"):
        hnp.logaddexp(a, b[:3])
    sa, sb = scipy.special.expit(a - b), scipy.special.expit(b - a)  # the partials
    f = lambda a, b: hnp.sum(hnp.logaddexp(a, b))  # noqa: E731
    np.testing.assert_allclose(hg.function(f)(a, b), np.logaddexp(a, b).sum(), rtol=1e-14)
    # compiled, into the buffer of a dead intermediate (out=), with two arrays and a float
    h = hg.function(lambda a, b: (hnp.logaddexp(a * 2.0, b * 3.0), hnp.logaddexp(0.0, a * b)))
    for got, want in zip(h(a, b), (vecmath.logaddexp(a * 2.0, b * 3.0),
                                   vecmath.logaddexp(0.0, a * b))):
        assert np.array_equal(got, want)
    g = hg.grad(f, argnums=(0, 1))
    for ga, gb in (g(a, b), hg.function(g)(a, b)):
        np.testing.assert_allclose(ga, sa, rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(gb, sb, rtol=1e-13, atol=1e-300)
    # softplus: d2/dz2 logaddexp(0, z) = s (1 - s), s = sigmoid(z)
    s = scipy.special.expit(b)
    softplus = lambda z: hnp.sum(hnp.logaddexp(0.0, z))  # noqa: E731
    for mode in ("fwd-rev", "rev-rev", "rev-fwd"):
        np.testing.assert_allclose(hg.hvp(softplus, mode=mode)(b, v), s * (1.0 - s) * v,
                                   rtol=1e-12, atol=1e-15)
    logistic = lambda w: hnp.mean(hnp.logaddexp(0.0, -b * w))  # noqa: E731
    want = -b * scipy.special.expit(-b * a) / b.size
    for grad in (hg.grad(logistic)(a), hg.function(hg.grad(logistic))(a)):
        np.testing.assert_allclose(grad, want, rtol=1e-13, atol=1e-300)
