"""Elementwise primitives: first and second derivatives, forward and reverse, against finite
differences (broadcasting, 0-d, empty arrays); exact values at singular points (hypot and
arctan2 at the origin, sinc at 0, logaddexp at infinities, ties, clip bounds); float32
gradients; graph mode; clear broadcasting errors."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnps

import hessgrad as hg
from hessgrad.engine.registry import PRIMITIVES
from hessgrad.ops import elementwise as E, special
from hessgrad.ops.reduction import sum as rsum
from hessgrad.testing import check_grads

COVERED = {
    "add", "subtract", "multiply", "divide", "negative", "positive", "power", "square",
    "reciprocal", "cbrt", "floor_divide", "remainder", "fmod", "exp", "exp2", "log", "log2",
    "log10", "log1p", "expm1", "sqrt", "sigmoid", "logaddexp", "logaddexp2", "sin", "cos",
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "hypot", "arctan2", "sinc", "absolute", "fabs", "sign", "copysign", "heaviside",
    "floor", "ceil", "rint", "trunc", "round", "maximum", "minimum", "fmax", "fmin", "clip",
    "real", "imag", "conjugate", "where", "less", "less_equal", "greater", "greater_equal",
    "equal", "not_equal", "logical_and", "logical_or", "logical_not", "logical_xor",
    "isfinite", "isnan", "isinf", "signbit", "float_power", "deg2rad", "rad2deg", "erf",
}

rng = np.random.default_rng(7)
X = np.array([[0.61, -1.37, 0.83], [-0.44, 1.52, -0.29]])  # general reals, none near 0
Y = np.array([-0.77, 0.58, 1.21])                           # broadcasts against X
POS = rng.uniform(0.5, 2.5, (2, 3))             # logarithms, roots
UNIT = rng.uniform(-0.9, 0.9, (2, 3))           # arcsin, arccos, arctanh
BIG = rng.uniform(1.2, 3.0, (2, 3))             # arccosh
S0 = np.array(0.37)                             # 0-d
EMPTY = np.zeros((0, 3))
FRAC = np.array([[0.37, -1.23, 2.19], [3.61, -0.52, 1.77]])  # away from integers / halves
DIVISOR = np.array([0.71, -1.33, 2.47])


def u(op, **params):
    return lambda x: op(x, **params)


# (id, function, arguments): each row checked at order 2, forward and reverse.
ROWS = [
    # arithmetic, with broadcasting, 0-d and empty operands
    ("add", E.add, (X, Y)), ("add-0d", E.add, (S0, X)), ("add-empty", E.add, (EMPTY, Y)),
    ("add-const", lambda x: E.add(x, 2.0), (X,)),
    ("erf", special.erf, (X,)), ("erf-0d", special.erf, (S0,)),
    ("erf-empty", special.erf, (EMPTY,)),
    ("erf-complex", lambda z: E.real(special.erf(z)) + E.imag(special.erf(z)), (X + 0.3j * Y,)),
    ("subtract", E.subtract, (Y, X)), ("subtract-0d", E.subtract, (X, S0)),
    ("multiply", E.multiply, (X, Y)), ("multiply-0d", E.multiply, (S0, S0)),
    ("multiply-empty", E.multiply, (EMPTY, EMPTY)),
    ("divide", E.divide, (X, POS[0])), ("divide-0d", E.divide, (S0, X)),
    ("negative", E.negative, (X,)), ("negative-0d", E.negative, (S0,)),
    ("positive", E.positive, (X,)),
    ("power", E.power, (POS, Y)), ("power-0d", E.power, (POS, S0)),
    ("power-const-3", lambda x: E.power(x, 3), (X,)),
    ("power-const-0.5", lambda x: E.power(x, 0.5), (POS,)),
    ("power-const-2", lambda x: E.power(x, 2), (X,)),
    ("power-base-const", lambda y: E.power(2.0, y), (X,)),
    ("square", E.square, (X,)), ("square-empty", E.square, (EMPTY,)),
    ("reciprocal", E.reciprocal, (X,)),
    ("cbrt", E.cbrt, (X,)), ("cbrt-0d", E.cbrt, (S0,)),
    ("floor_divide", E.floor_divide, (FRAC, DIVISOR)),
    ("remainder", E.remainder, (FRAC, DIVISOR)),
    ("remainder-0d", E.remainder, (FRAC, np.array(0.43))),
    ("fmod", E.fmod, (FRAC, DIVISOR)), ("fmod-0d", E.fmod, (S0, DIVISOR)),
    # exponentials and logarithms
    ("exp", E.exp, (X,)), ("exp2", E.exp2, (X,)), ("exp2-0d", E.exp2, (S0,)),
    ("log", E.log, (POS,)), ("log2", E.log2, (POS,)), ("log10", E.log10, (POS,)),
    ("log1p", E.log1p, (UNIT,)), ("expm1", E.expm1, (X,)), ("sqrt", E.sqrt, (POS,)),
    ("sqrt-empty", E.sqrt, (EMPTY,)), ("sigmoid", E.sigmoid, (X * 5,)),
    ("logaddexp", E.logaddexp, (X, Y)), ("logaddexp-0d", E.logaddexp, (S0, X)),
    ("logaddexp-ties", E.logaddexp, (X, X.copy())),
    ("logaddexp2", E.logaddexp2, (X, Y)), ("logaddexp2-0d", E.logaddexp2, (X, S0)),
    ("softplus", E.softplus, (X * 10,)),
    # trigonometric and hyperbolic
    ("sin", E.sin, (X,)), ("cos", E.cos, (X,)), ("tan", E.tan, (UNIT,)),
    ("arcsin", E.arcsin, (UNIT,)), ("arccos", E.arccos, (UNIT,)), ("arctan", E.arctan, (X,)),
    ("sinh", E.sinh, (X,)), ("cosh", E.cosh, (X,)), ("tanh", E.tanh, (X,)),
    ("arcsinh", E.arcsinh, (X,)), ("arccosh", E.arccosh, (BIG,)),
    ("arctanh", E.arctanh, (UNIT,)), ("arctanh-0d", E.arctanh, (S0,)),
    ("hypot", E.hypot, (X, Y)), ("hypot-0d", E.hypot, (S0, X)),
    ("arctan2", E.arctan2, (X, Y)), ("arctan2-0d", E.arctan2, (S0, X)),
    ("arctan2-empty", E.arctan2, (EMPTY, Y)),
    ("sinc", E.sinc, (X,)), ("sinc-0d", E.sinc, (S0,)),
    ("sinc-near-0", E.sinc, (np.array([0.0, 1e-3, -0.05, 0.0999, 0.1001, -0.2]),)),
    ("deg2rad", E.deg2rad, (X,)), ("rad2deg", E.rad2deg, (X,)),
    # sign, magnitude, piecewise (points away from kinks and jumps)
    ("absolute", E.absolute, (X,)), ("fabs", E.fabs, (X,)), ("sign", E.sign, (X,)),
    ("copysign", E.copysign, (X, Y)), ("copysign-0d", E.copysign, (S0, X)),
    ("heaviside", E.heaviside, (X, Y)),
    ("heaviside-x2-at-0", lambda b: E.heaviside(np.array([0.0, 1.0, -1.0, 0.0]), b),
     (np.array(0.3),)),
    ("floor", E.floor, (FRAC,)), ("ceil", E.ceil, (FRAC,)), ("rint", E.rint, (FRAC,)),
    ("trunc", E.trunc, (FRAC,)), ("round", u(E.round, decimals=1), (FRAC / 7 + 0.013,)),
    ("round-0d", E.round, (S0,)),
    ("maximum", E.maximum, (X, Y)), ("maximum-0d", E.maximum, (S0, X)),
    ("minimum", E.minimum, (X, Y)), ("minimum-empty", E.minimum, (EMPTY, Y)),
    ("fmax", E.fmax, (X, Y)), ("fmin", E.fmin, (Y, X)), ("fmin-0d", E.fmin, (X, S0)),
    ("clip", E.clip, (X, np.array(-0.5), np.array([0.4, 0.8, 0.1]))),
    ("clip-lo-only", lambda x, lo: E.clip(x, lo, None), (X, Y)),
    ("clip-hi-only", lambda x, hi: E.clip(x, None, hi), (X, Y)),
    ("clip-crossed-bounds", E.clip, (X, np.array(0.6), np.array(-0.6))),
    ("clip-0d", E.clip, (S0, np.array(0.1), X)),
    ("where", lambda x, y: E.where(X > 0, x, y), (X, Y)),
    ("where-0d", lambda x, y: E.where(Y > 0, x, y), (S0, X)),
    ("real", E.real, (X,)), ("imag", lambda x: E.imag(x) + x, (X,)),
    ("conjugate", E.conjugate, (X,)),
    # compositions of the above
    ("float_power", E.float_power, (POS, Y)),
    ("composite", lambda x, y: E.sin(x) * E.logaddexp(x, y) / E.hypot(x, 1.0 + y * y),
     (X, Y)),
]


@pytest.mark.parametrize("name,f,args", ROWS, ids=[r[0] for r in ROWS])
def test_grads(name, f, args):
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def _eager_grad(f, args):
    return hg.grad(lambda *a: rsum(f(*a)), argnums=tuple(range(len(args))))(*args)


@pytest.mark.parametrize("name,f,args", ROWS, ids=[r[0] for r in ROWS])
def test_graph_mode(name, f, args):
    eager, compiled = f(*args).numpy(), hg.function(f)(*args)
    if name.startswith("power-const"):  # products and sqrt for pow(): rounded differently
        np.testing.assert_allclose(compiled, eager, rtol=4 * np.finfo(float).eps, atol=0)
    else:
        np.testing.assert_array_equal(compiled, eager)
    graph_grads = hg.function(hg.grad(lambda *a: rsum(f(*a)),
                                      argnums=tuple(range(len(args)))))(*args)
    for got, want in zip(graph_grads, _eager_grad(f, args)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name,f,args", ROWS, ids=[r[0] for r in ROWS])
def test_static_shape_and_dtype_in_graph_mode(name, f, args):
    eager = f(*args)
    seen = {}

    def traced(*a):
        out = f(*a)
        seen["shape"], seen["dtype"] = out.shape, out.dtype
        return out
    hg.function(traced)(*args)
    assert seen["shape"] == eager.shape and seen["dtype"] == eager.dtype


# --- exact values at singular and special points ------------------------------------------
def grad1(f):
    return hg.grad(lambda x: rsum(f(x)))


def test_hypot_and_arctan2_at_the_origin_have_finite_zero_subgradients():
    zeros = np.zeros(3)
    for f in (lambda x: E.hypot(x, 0.0), lambda x: E.hypot(0.0, x), lambda x: E.hypot(x, x),
              lambda x: E.arctan2(x, 0.0), lambda x: E.arctan2(0.0, x)):
        np.testing.assert_array_equal(grad1(f)(zeros), 0.0)
        np.testing.assert_array_equal(grad1(lambda x: grad1(f)(x))(zeros), 0.0)


def test_hypot_and_arctan2_do_not_overflow():
    big = np.array([1e200, -3e250])
    np.testing.assert_allclose(grad1(lambda x: E.hypot(x, 1e200))(big),
                               big / np.hypot(big, 1e200))
    dx = grad1(lambda x: E.arctan2(x, 1e200))(big)
    np.testing.assert_allclose(dx, 1e200 / np.hypot(big, 1e200) / np.hypot(big, 1e200),
                               rtol=1e-13)
    assert np.isfinite(dx).all() and (dx != 0).all()


def test_arctan2_partials():
    y, x = 0.3, -0.8
    r2 = x * x + y * y
    dy, dx = hg.grad(lambda a, b: E.arctan2(a, b), argnums=(0, 1))(y, x)
    assert dy == pytest.approx(x / r2, rel=1e-15) and dx == pytest.approx(-y / r2, rel=1e-15)


def test_sinc_derivatives_at_and_near_zero():
    d1, d2 = grad1(E.sinc), grad1(grad1(E.sinc))
    assert d1(0.0) == 0.0
    assert d2(0.0) == pytest.approx(-math.pi ** 2 / 3, rel=1e-14)
    assert grad1(grad1(grad1(E.sinc)))(0.0) == pytest.approx(0.0, abs=1e-12)
    # fourth derivative at 0: pi^4 / 5
    d4 = grad1(grad1(grad1(grad1(E.sinc))))(0.0)
    assert d4 == pytest.approx(math.pi ** 4 / 5, rel=1e-12)
    # the series and the closed form agree across the switch at |x| = 0.1
    for x in (0.1 - 1e-12, 0.1, -0.1 + 1e-12):
        def closed(x):
            return (math.cos(math.pi * x) - np.sinc(x)) / x
        assert d1(x) == pytest.approx(closed(x), rel=1e-12)
    # tiny arguments: derivative ~ -pi^2 x / 3, no cancellation
    assert d1(1e-9) == pytest.approx(-math.pi ** 2 / 3 * 1e-9, rel=1e-12)


def test_sqrt_at_zero_is_exactly_infinite():
    with np.errstate(divide="ignore"):
        assert grad1(E.sqrt)(0.0) == np.inf


def test_log1p_expm1_are_accurate_for_tiny_arguments():
    assert grad1(E.log1p)(1e-12) == 1 / (1 + 1e-12)
    assert grad1(E.expm1)(1e-12) == pytest.approx(1 + 1e-12, rel=1e-16)
    assert grad1(grad1(E.log1p))(-0.999999) == pytest.approx(-1 / 1e-6 ** 2, rel=1e-9)


@pytest.mark.parametrize("op,exp_base", [(E.logaddexp, math.exp), (E.logaddexp2, lambda
                                          d: 2.0 ** d)])
def test_logaddexp_is_stable(op, exp_base):
    gx = hg.grad(lambda a, b: op(a, b), argnums=(0, 1))
    assert gx(1000.0, -1000.0) == (1.0, 0.0)
    assert gx(-np.inf, -np.inf) == (0.5, 0.5)
    assert gx(-np.inf, 0.0) == (0.0, 1.0)
    assert gx(np.inf, 3.0) == (1.0, 0.0)
    assert gx(2.0, 2.0) == pytest.approx((0.5, 0.5), rel=1e-15)
    hess = hg.grad(lambda a: hg.grad(lambda b: op(b, 0.0))(a))
    assert hess(800.0) == 0.0 and np.isfinite(hess(-800.0))
    assert gx(0.3, -0.4)[0] == pytest.approx(exp_base(0.3) / (exp_base(0.3) +
                                                             exp_base(-0.4)), rel=1e-15)


def test_logaddexp_infinities_in_graph_mode():
    f = hg.function(hg.grad(lambda a, b: rsum(E.logaddexp(a, b)), argnums=(0, 1)))
    ga, gb = f(np.array([-np.inf, -np.inf, np.inf, 2.0]), np.array([-np.inf, 0.0, 1.0, 2.0]))
    np.testing.assert_allclose(ga, [0.5, 0.0, 1.0, 0.5], rtol=1e-15)
    np.testing.assert_allclose(gb, [0.5, 1.0, 0.0, 0.5], rtol=1e-15)


def test_extremum_ties_split_the_gradient():
    x = np.array([1.0, 2.0, 3.0])
    for op in (E.maximum, E.minimum, E.fmax, E.fmin):
        gx, gy = hg.grad(lambda a, b: rsum(op(a, b)), argnums=(0, 1))(x, x.copy())
        np.testing.assert_array_equal(gx, 0.5)
        np.testing.assert_array_equal(gy, 0.5)


def test_fmax_fmin_send_the_gradient_past_nan():
    x = np.array([np.nan, 1.0, np.nan])
    y = np.array([2.0, np.nan, np.nan])
    for op in (E.fmax, E.fmin):
        gx, gy = hg.grad(lambda a, b: rsum(op(a, b)), argnums=(0, 1))(x, y)
        np.testing.assert_array_equal(gx[:2], [0.0, 1.0])
        np.testing.assert_array_equal(gy[:2], [1.0, 0.0])
        gx = hg.function(hg.grad(lambda a, b: rsum(op(a, b))))(x, y)
        np.testing.assert_array_equal(gx[:2], [0.0, 1.0])


def test_clip_gradients_inside_outside_and_at_the_bounds():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    g = hg.grad(lambda a, lo, hi: rsum(E.clip(a, lo, hi)), argnums=(0, 1, 2))
    gx, glo, ghi = g(x, -1.0, 1.0)
    np.testing.assert_array_equal(gx, [0, 1, 1, 1, 0])
    assert (glo, ghi) == (1.0, 1.0)
    gx, glo, ghi = g(x, 1.5, -1.5)   # crossed bounds: numpy returns a_max everywhere
    np.testing.assert_array_equal(gx, 0.0)
    assert (glo, ghi) == (0.0, 5.0)
    np.testing.assert_array_equal(grad1(lambda a: E.clip(a, None, 0.5))(x), [1, 1, 1, 0, 0])


def test_mod_fmod_partials():
    x, y = np.array([7.3, -7.3, 7.3]), np.array([2.0, 2.0, -2.0])
    for op, quotient in ((E.remainder, np.floor_divide(x, y)), (E.fmod, np.trunc(x / y))):
        gx, gy = hg.grad(lambda a, b: rsum(op(a, b)), argnums=(0, 1))(x, y)
        np.testing.assert_array_equal(gx, 1.0)
        np.testing.assert_array_equal(gy, -quotient)


def test_piecewise_constant_ops_have_zero_derivatives_even_at_jumps():
    x = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.5])
    for op in (E.floor, E.ceil, E.rint, E.trunc, E.round, E.sign,
               lambda a: E.floor_divide(a, 0.5), lambda a: E.heaviside(a, 0.5)):
        for mode in (grad1(op), lambda a: hg.jvp(op, (a,), (np.ones_like(a),))[1]):
            got = np.asarray(mode(x))
            np.testing.assert_array_equal(got, 0.0)


def test_heaviside_passes_the_gradient_to_x2_where_x1_is_zero():
    x1 = np.array([-1.0, 0.0, 2.0, 0.0])
    g = hg.grad(lambda b: rsum(E.heaviside(x1, b)))(np.array([0.3, 0.4, 0.5, 0.6]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 1.0])


def test_copysign_and_abs_at_zero():
    # the slope of |x| at 0 is +1 (docs/kinks.md: smooth compositions stay right there)
    assert grad1(E.absolute)(0.0) == 1.0 and grad1(E.absolute)(-0.0) == 1.0
    assert hg.grad(lambda a: E.copysign(a, -2.0))(0.0) == -1.0
    assert hg.grad(lambda a: E.copysign(a, -2.0))(3.0) == -1.0
    assert hg.grad(lambda a: E.copysign(a, -2.0))(-3.0) == 1.0
    assert hg.grad(lambda b: E.copysign(3.0, b))(-2.0) == 0.0


def test_power_at_zero_base():
    # d/dx x**2 at 0 is 0 (no 0 * 0**-1); d/dy 0**y for y > 0 is 0 (no log 0).
    assert grad1(lambda x: E.power(x, 2.0))(0.0) == 0.0
    gx, gy = hg.grad(lambda a, b: E.power(a, b), argnums=(0, 1))(0.0, 2.5)
    assert (gx, gy) == (0.0, 0.0)


def test_nondiff_ops_are_constants():
    x = hg.constant(X)
    with hg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        outs = [E.less(x, 0.0), E.less_equal(x, 0.0), E.greater(x, Y), E.greater_equal(x, Y),
                E.equal(x, x), E.not_equal(x, 0.0), E.isfinite(x), E.isnan(x), E.isinf(x),
                E.signbit(x), E.logical_not(E.less(x, 0.0)),
                E.logical_and(E.less(x, 0.0), True), E.logical_or(E.less(x, 0.0), False),
                E.logical_xor(E.less(x, 0.0), True)]
    for out in outs:
        assert out.dtype == np.bool_
        assert tape.gradient(out, x) is None
    for prim in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                 "logical_and", "logical_or", "logical_not", "logical_xor", "isfinite",
                 "isnan", "isinf", "signbit"):
        assert PRIMITIVES[prim].nondiff


def test_integer_inputs_are_constants():
    n = np.array([1, 2, 3])
    g = hg.grad(lambda x: rsum(E.multiply(x, n) + E.hypot(x, n) + E.power(x, n)))(X[0])
    np.testing.assert_allclose(g, n + X[0] / np.hypot(X[0], n) + n * X[0] ** (n - 1))


# --- dtypes -------------------------------------------------------------------------------
F32_OPS = [E.exp2, E.log2, E.log10, E.cbrt, E.tan, E.arcsinh, E.arccos, E.sinc, E.fabs,
           lambda x: E.hypot(x, 0.5), lambda x: E.arctan2(x, 0.5),
           lambda x: E.logaddexp2(x, 0.5), lambda x: E.logaddexp(x, 0.5),
           lambda x: E.clip(x, -0.2, 0.2), lambda x: E.fmax(x, 0.1),
           lambda x: E.remainder(x, 0.3), lambda x: E.fmod(x, 0.3), E.deg2rad, E.sigmoid,
           lambda x: E.where(x > 0, x, 2.0 * x)]


@pytest.mark.parametrize("k", range(len(F32_OPS)))
def test_float32_stays_float32(k):
    op = F32_OPS[k]
    x = UNIT[0].astype(np.float32)
    assert op(x).dtype == np.float32
    g = grad1(op)(x)
    assert g.dtype == np.float32
    h = grad1(lambda a: grad1(op)(a))(x)
    assert h.dtype == np.float32
    _, t = hg.jvp(op, (x,), (np.ones_like(x),))
    assert t.dtype == np.float32


def test_float32_input_mixed_with_float64_gets_a_float32_gradient():
    x = np.ones(3, np.float32)
    g = hg.grad(lambda a: rsum(E.multiply(a, np.ones(3))))(x)
    assert g.dtype == np.float32


def test_float_power_computes_in_float64():
    x = np.array([2.0, 3.0], np.float32)
    assert E.float_power(x, 2).dtype == np.float64
    assert E.float_power(np.array([2, 4]), -1).numpy().tolist() == [0.5, 0.25]
    assert grad1(lambda a: E.float_power(a, 3))(x).dtype == np.float32


def test_int_results_follow_numpy():
    n = np.array([7, -7])
    for op in (E.floor_divide, E.remainder, E.fmod, E.maximum, E.add, E.multiply,
               E.copysign, E.divide, E.power):
        want = getattr(np, op.__name__ if op.__name__ != "divide" else "true_divide")(n, 3)
        got = op(n, 3).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# --- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [E.add, E.multiply, E.hypot, E.arctan2, E.maximum, E.less])
def test_broadcast_errors_name_the_op_and_shapes(op):
    name = op.__name__
    with pytest.raises(ValueError, match=rf"{name}: .*x1 of shape \(2,\), x2 of shape \(3,\)"):
        op(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=rf"{name}: .*x1 of shape \(2,\), x2 of shape \(3,\)"):
        hg.function(op)(np.ones(2), np.ones(3))


def test_where_and_clip_errors_name_their_arguments():
    with pytest.raises(ValueError, match=r"where: .*condition of shape \(2,\), x of shape "
                                         r"\(3,\), y of shape \(\)"):
        E.where(np.ones(2, bool), np.ones(3), 0.0)
    with pytest.raises(ValueError, match=r"clip: .*a of shape \(2,\), a_min of shape \(3,\)"):
        hg.function(lambda a, b: E.clip(a, b, None))(np.ones(2), np.ones(3))


# --- property: broadcasting of binary ops -------------------------------------------------
BINARY = [E.add, E.subtract, E.multiply, E.divide, E.hypot, E.arctan2, E.logaddexp,
          E.maximum, E.copysign, E.fmin, E.logaddexp2, E.remainder]


@settings(max_examples=25, deadline=None)
@given(shapes=hnps.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       k=st.integers(0, len(BINARY) - 1), seed=st.integers(0, 2 ** 16))
def test_binary_ops_broadcast_like_numpy(shapes, k, seed):
    op = BINARY[k]
    r = np.random.default_rng(seed)
    a = r.uniform(0.5, 2.0, shapes.input_shapes[0])
    b = r.uniform(0.5, 2.0, shapes.input_shapes[1])
    want = getattr(np, op.__name__ if op.__name__ != "divide" else "true_divide")(a, b)
    np.testing.assert_array_equal(op(a, b), want)
    ga, gb = hg.grad(lambda x, y: rsum(op(x, y)), argnums=(0, 1))(a, b)
    assert ga.shape == a.shape and gb.shape == b.shape


# --- boolean operands: constants, never tangents ------------------------------------------
def test_boolean_data_operand_of_a_linear_op_has_a_zero_tangent():
    # forward mode passed a boolean operand of a linear op through as its own tangent (meant
    # for where()'s condition): jvp of add(mask, y) was t + mask, and every Hessian built by
    # forward-over-reverse through add/subtract (logaddexp(mask, y)) was wrong
    mask = np.array([True, False, True])
    y = np.array([1.0, 2.0, 3.0], np.float32)
    t = np.ones(3, np.float32)
    for f in (lambda y: E.add(mask, y), lambda y: E.subtract(y, mask),
              lambda y: hg.concat([mask, y], 0)[3:]):
        _, ty = hg.jvp(f, (y,), (t,))
        assert ty.dtype == np.float32
        np.testing.assert_array_equal(np.abs(ty), 1.0)
    # where()'s condition still selects the tangent
    np.testing.assert_array_equal(hg.jvp(lambda y: E.where(mask, y, 2.0 * y), (y,), (t,))[1],
                                  [1.0, 2.0, 1.0])
    s = 1.0 / (1.0 + np.exp(-(y - mask)))  # d/dy logaddexp(m, y) = sigmoid(y - m)
    np.testing.assert_allclose(hg.hessian(lambda y: rsum(E.logaddexp(mask, y)))(y),
                               np.diag(s * (1.0 - s)), rtol=1e-6)


def test_arctan2_with_a_boolean_operand_has_derivatives():
    # the rule negated the other operand: numpy has no `-` for booleans (TypeError)
    b = np.array([True, False, True])
    x = np.array([2.0, 1.0, 3.0])
    np.testing.assert_allclose(hg.grad(lambda x: rsum(E.arctan2(b, x)))(x), -(b / (b + x * x)))
    np.testing.assert_allclose(hg.hessian(lambda x: rsum(E.arctan2(b, x)))(x),
                               np.diag(2.0 * b * x / (b + x * x) ** 2))


def test_logaddexp_second_derivative_at_a_finite_tie():
    # the tie guard (weight 1/2 where x == y, meant for equal infinities) applied at finite
    # ties too, wherever the guarded path ran: the Hessian there was 0 instead of 1/4
    x, y = np.array([1.0, 0.5]), np.array([1.0, 2.0])
    s = 1.0 / (1.0 + np.exp(x - y))
    expected = np.diag(s * (1.0 - s))
    f = lambda y: rsum(E.logaddexp(x, y))  # noqa: E731
    np.testing.assert_allclose(hg.hessian(f)(y), expected, rtol=1e-12)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(y), expected, rtol=1e-12)
    np.testing.assert_allclose(hg.function(lambda y, v: hg.hvp(f)(y, v))(y, np.ones(2)),
                               expected.sum(1), rtol=1e-12)
    np.testing.assert_allclose(hg.hessian(lambda y: rsum(E.logaddexp2(x, y)))(y)[0, 0],
                               0.25 * math.log(2.0), rtol=1e-12)


def test_power_mixed_partial_at_zero_exponent():
    # d2/dxdy x**y = x**(y-1) (1 + y log x) is 1/x at y == 0; the guard against 0 * 0**-1
    # replaced y - 1 by 1 at every y == 0, so d/dy of the x-partial was x (H[0, 1] = 2 at x = 2)
    f = lambda p: E.power(p[0], p[1])  # noqa: E731
    p = np.array([2.0, 0.0])
    expected = [[0.0, 0.5], [0.5, math.log(2.0) ** 2]]
    np.testing.assert_allclose(hg.hessian(f)(p), expected, rtol=1e-14)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(p), expected, rtol=1e-14)
    # at x == y == 0 the guard still gives finite (zero) derivatives, not 0 * inf
    np.testing.assert_array_equal(hg.hessian(f)(np.zeros(2)), np.zeros((2, 2)))
