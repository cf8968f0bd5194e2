"""hessgrad.numpy elementwise math: values and dtypes equal numpy's (several shapes,
broadcasting, special values, dtype promotion), graph mode values and gradients equal eager
ones, and numpy's keywords (dtype, out, where) behave as documented."""

import inspect

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.numpy import _math

rng = np.random.default_rng(3)


def normal(shape):
    return rng.standard_normal(shape)


def positive(shape):
    return rng.uniform(0.3, 3.0, shape)


def unit(shape):
    return rng.uniform(-0.95, 0.95, shape)


def above_one(shape):
    return rng.uniform(1.1, 4.0, shape)


def away_from_zero(shape):
    return rng.uniform(0.4, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def boolean(shape):
    return rng.random(shape) < 0.5


# name: domain of each input. Every ufunc wrapper in hessgrad.numpy has a row.
UNARY = {
    "negative": normal, "positive": normal, "square": normal, "sqrt": positive,
    "cbrt": normal, "reciprocal": away_from_zero, "exp": normal, "exp2": normal,
    "expm1": normal, "log": positive, "log2": positive, "log10": positive, "log1p": unit,
    "sin": normal, "cos": normal, "tan": unit, "arcsin": unit, "arccos": unit,
    "arctan": normal, "sinh": normal, "cosh": normal, "tanh": normal, "arcsinh": normal,
    "arccosh": above_one, "arctanh": unit, "deg2rad": normal, "rad2deg": normal,
    "degrees": normal, "radians": normal, "sinc": normal, "abs": normal, "absolute": normal,
    "fabs": normal, "sign": normal, "floor": normal, "ceil": normal, "rint": normal,
    "trunc": normal, "fix": normal, "round": normal, "around": normal, "real": normal,
    "imag": normal, "conj": normal, "conjugate": normal, "isfinite": normal, "isnan": normal,
    "isinf": normal, "signbit": normal, "isneginf": normal, "isposinf": normal,
    "logical_not": boolean, "acos": unit, "asin": unit, "atan": normal, "acosh": above_one,
    "asinh": normal, "atanh": unit,
}
BINARY = {
    "add": (normal, normal), "subtract": (normal, normal), "multiply": (normal, normal),
    "divide": (normal, away_from_zero), "true_divide": (normal, away_from_zero),
    "floor_divide": (normal, away_from_zero), "power": (positive, normal),
    "pow": (positive, normal), "float_power": (positive, normal),
    "logaddexp": (normal, normal), "logaddexp2": (normal, normal),
    "arctan2": (normal, normal), "atan2": (normal, normal), "hypot": (normal, normal),
    "copysign": (normal, normal), "heaviside": (normal, normal),
    "maximum": (normal, normal), "minimum": (normal, normal), "fmax": (normal, normal),
    "fmin": (normal, normal), "mod": (normal, away_from_zero),
    "remainder": (normal, away_from_zero), "fmod": (normal, away_from_zero),
    "less": (normal, normal), "less_equal": (normal, normal), "greater": (normal, normal),
    "greater_equal": (normal, normal), "equal": (normal, normal),
    "not_equal": (normal, normal), "logical_and": (boolean, boolean),
    "logical_or": (boolean, boolean), "logical_xor": (boolean, boolean),
}
OTHER = {"clip", "where", "divmod", "angle"}  # tested by their own functions below
NONDIFF = {"isfinite", "isnan", "isinf", "signbit", "isneginf", "isposinf", "logical_not",
           "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
           "logical_and", "logical_or", "logical_xor"}

SHAPES = [(), (3,), (2, 3), (0, 3)]
BROADCASTS = [((), (2, 3)), ((3,), (2, 3)), ((2, 1), (1, 4)), ((2, 3), ()), ((0, 3), (3,))]


def test_every_public_name_has_rows():
    assert set(_math.__all__) == set(UNARY) | set(BINARY) | OTHER
    for name in _math.__all__:
        assert getattr(hnp, name) is getattr(_math, name), name
        assert hasattr(np, name), f"{name} is not a numpy name"


def numpy_twin(name):
    return getattr(np, name)


def assert_same(got, want):
    got_array = np.asarray(got)
    want = np.asarray(want)
    assert got_array.dtype == want.dtype, (got_array.dtype, want.dtype)
    assert got_array.shape == want.shape
    np.testing.assert_array_equal(got_array, want)


UNARY_CASES = [(n, s) for n in UNARY for s in SHAPES]
BINARY_CASES = [(n, s) for n in BINARY for s in BROADCASTS]


@pytest.mark.parametrize("name,shape", UNARY_CASES, ids=[f"{n}-{s}" for n, s in UNARY_CASES])
def test_unary_values_match_numpy(name, shape):
    x = UNARY[name](shape)
    assert_same(getattr(hnp, name)(x), numpy_twin(name)(x))


@pytest.mark.parametrize("name,shapes", BINARY_CASES,
                         ids=[f"{n}-{a}-{b}" for n, (a, b) in BINARY_CASES])
def test_binary_values_match_numpy(name, shapes):
    x, y = (d(s) for d, s in zip(BINARY[name], shapes))
    assert_same(getattr(hnp, name)(x, y), numpy_twin(name)(x, y))


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e300, -1e300,
                    0.5, -0.5, 1.0, -1.0, 2.5, 710.0, -745.5])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_values_match_numpy(name):
    x = SPECIAL if UNARY[name] is not boolean else np.array([True, False])
    with np.errstate(all="ignore"):
        want = numpy_twin(name)(x)
        got = getattr(hnp, name)(x)
    assert_same(got, want)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values_match_numpy(name):
    if BINARY[name][0] is boolean:
        x, y = np.array([True, True, False, False]), np.array([True, False, True, False])
    else:
        x, y = SPECIAL[:, None], SPECIAL[None, :]
    with np.errstate(all="ignore"):
        assert_same(getattr(hnp, name)(x, y), numpy_twin(name)(x, y))


# dtype promotion: float32 arrays with Python scalars stay float32, ints promote like numpy
PROMOTION_INPUTS = [
    (np.float32, 2.0), (np.float32, 2), (np.int64, 2), (np.int64, 2.5), (np.int32, np.int8(3)),
    (np.float32, np.float64(2.0)), (np.float16, 3), (np.bool_, True), (np.uint8, 3),
]


@pytest.mark.parametrize("name", sorted(n for n in BINARY if BINARY[n][0] is not boolean))
def test_dtype_promotion_matches_numpy(name):
    for dtype, other in PROMOTION_INPUTS:
        x = (np.arange(1, 5) % 3 + 1).astype(dtype)
        try:
            with np.errstate(all="ignore"):
                want = numpy_twin(name)(x, other)
        except TypeError:
            with pytest.raises(TypeError):
                getattr(hnp, name)(x, other)
            continue
        with np.errstate(all="ignore"):
            got = getattr(hnp, name)(x, other)
        assert_same(got, want)


@pytest.mark.parametrize("name", sorted(n for n in UNARY if UNARY[n] is not boolean))
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_unary_dtypes_match_numpy(name, dtype):
    x = (np.arange(4) % 3 + 1).astype(dtype)
    with np.errstate(all="ignore"):
        want = numpy_twin(name)(x)
        got = getattr(hnp, name)(x)
    assert_same(got, want)


def test_scalars_lists_and_tensors_are_accepted():
    assert_same(hnp.sin(0.5), np.sin(0.5))
    assert_same(hnp.add([1, 2], [[3], [4]]), np.add([1, 2], [[3], [4]]))
    assert_same(hnp.hypot(hg.constant([3.0]), 4), np.hypot([3.0], 4))


# --- graph mode ---------------------------------------------------------------------------
def _args(name):
    if name in UNARY:
        return (UNARY[name]((2, 3)),)
    return tuple(d(s) for d, s in zip(BINARY[name], ((2, 3), (3,))))


ALL_FUNCS = sorted(UNARY) + sorted(BINARY)


@pytest.mark.parametrize("name", ALL_FUNCS)
def test_graph_mode_values_match_numpy(name):
    args = _args(name)
    f = getattr(hnp, name)
    got = hg.function(lambda *a: f(*a))(*args)
    assert_same(got, numpy_twin(name)(*args))


@pytest.mark.parametrize("name", [n for n in ALL_FUNCS if n not in NONDIFF])
def test_graph_mode_gradient_matches_eager(name):
    args = _args(name)
    f = getattr(hnp, name)
    nums = tuple(range(len(args)))

    def total(*a):
        return hnp.sum(f(*a))
    eager = hg.grad(total, argnums=nums)(*args)
    graph = hg.function(hg.grad(total, argnums=nums))(*args)
    for e, g in zip(eager, graph):
        assert e.shape == g.shape and np.isfinite(e).all()
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", [n for n in ALL_FUNCS if n not in NONDIFF])
def test_gradients_against_finite_differences(name):
    args = _args(name)
    if name in ("floor_divide", "mod", "remainder", "fmod"):  # keep away from the jumps
        args = (np.array([[0.37, -1.23, 2.19], [3.61, -0.52, 1.77]]),
                np.array([0.71, -1.33, 2.47]))
    f = getattr(hnp, name)
    hg.testing.check_grads(f, args, order=2, modes=("fwd", "rev"))


# --- numpy's keywords ---------------------------------------------------------------------
def test_dtype_keyword_casts_the_inputs():
    x = np.array([1.0, 2.0, 3.0])
    assert_same(hnp.add(x, 1, dtype=np.float32), np.add(x, 1, dtype=np.float32))
    assert_same(hnp.sqrt(np.arange(3), dtype=np.float32), np.sqrt(np.arange(3),
                                                                 dtype=np.float32))
    assert_same(hnp.less(x, 2, dtype=bool), np.less(x, 2, dtype=bool))
    assert_same(hnp.logical_and(x, 0, dtype=bool), np.logical_and(x, 0, dtype=bool))
    with pytest.raises(TypeError, match=r"less: the result is boolean"):
        hnp.less(x, 2, dtype=np.float32)
    g = hg.grad(lambda a: hnp.sum(hnp.exp(a, dtype=np.float32)))(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.exp(x), rtol=1e-6)
    with pytest.raises(TypeError, match=r"add: cannot cast input 0 from float64 to int64"):
        hnp.add(1.5, 2, dtype=np.int64)
    assert_same(hnp.add(1.5, 2, dtype=np.int64, casting="unsafe"),
                np.add(1.5, 2, dtype=np.int64, casting="unsafe"))


@pytest.mark.parametrize("call", [
    lambda m, x, o: m.sin(x, out=o), lambda m, x, o: m.add(x, x, o),  # positional out
    lambda m, x, o: m.clip(x * 3 - 1, 0, 1, out=o), lambda m, x, o: m.round(x * 7, 0, o),
    lambda m, x, o: m.fix(x * 5 - 2, o), lambda m, x, o: m.multiply(x, 2.0, out=(o,)),
    lambda m, x, o: m.exp(x, out=o, where=x > 0.4), lambda m, x, o: m.divmod(x * 9, 2.0, out=(o, None))[0],
], ids=["sin", "add-positional", "clip", "round", "fix", "tuple", "where", "divmod"])
def test_out_writes_in_place_as_numpy(call):
    x = rng.uniform(0.0, 1.0, 4)
    for out in (hnp.arange(4.0), np.arange(4.0)):  # a hessgrad array, or a numpy array
        want = np.arange(4.0)
        r_numpy = call(np, x, want)
        got = call(hnp, x, out)
        assert got is out or call is not None and isinstance(got, hg.Tensor)
        assert_same(out, want)
        assert_same(got, r_numpy)
    assert_same(hnp.add(x, x, None), 2 * x)  # out=None positionally is fine
    assert_same(hnp.add(x, x, out=None), 2 * x)


def test_out_errors_are_numpy_s():
    x = np.ones(3)
    with pytest.raises(ValueError, match=r"add: non-broadcastable output operand with shape "
                                         r"\(2,\) doesn't match the broadcast shape \(3,\)"):
        hnp.add(x, x, out=hnp.zeros(2))
    with pytest.raises(TypeError, match=r"add: Cannot cast ufunc 'add' output from "
                                        r"dtype\('float64'\) to dtype\('int64'\)"):
        hnp.add(x, 0.5, out=hnp.zeros(3, int))
    with pytest.raises(TypeError, match=r"out= must be an array, got list"):
        hnp.exp(x, out=[0.0, 0.0, 0.0])
    # the output broadcasts the inputs (numpy's rule), and is returned
    out = hnp.zeros((2, 3))
    assert hnp.add(x, 1.0, out=out) is out
    assert_same(out, np.full((2, 3), 2.0))


def test_out_is_differentiated():
    x = rng.uniform(0.5, 1.0, 3)

    def f(v):
        buf = hnp.ones(3)
        hnp.multiply(v, v, out=buf, where=np.array([True, False, True]))
        hnp.exp(buf, out=buf)
        return hnp.sum(buf * v)
    g = hg.grad(f)(x)
    want = [np.exp(x[0] ** 2) * (1 + 2 * x[0] ** 2), np.e, np.exp(x[2] ** 2) * (1 + 2 * x[2] ** 2)]
    np.testing.assert_allclose(g, want, rtol=1e-13)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), want, rtol=1e-13)


def test_where_keyword_without_out_is_rejected_clearly():
    with pytest.raises(TypeError, match=r"hessgrad.numpy.exp: where= without out= is not "
                                        r"supported"):
        hnp.exp(np.ones(2), where=np.array([True, False]))
    assert_same(hnp.exp(np.ones(2), where=True), np.exp(np.ones(2)))
    with pytest.raises(TypeError, match="where="):
        hnp.clip(np.ones(2), 0, 1, where=False)


def test_argument_count_and_signature():
    with pytest.raises(TypeError, match=r"hessgrad.numpy.add\(\) takes 2 positional inputs "
                                        r"but 1 were given"):
        hnp.add(1.0)
    with pytest.raises(TypeError, match="signature"):
        hnp.add(1.0, 2.0, signature="dd->d")
    sig = inspect.signature(hnp.arctan2)
    assert list(sig.parameters)[:3] == ["x1", "x2", "out"]
    assert (hnp.sin.nin, hnp.hypot.nin, hnp.divmod.nout) == (1, 2, 2)
    assert hnp.sin.__name__ == "sin" and "Sine" in hnp.sin.__doc__


@pytest.mark.parametrize("name", ALL_FUNCS)
def test_ufunc_names_and_arity_follow_numpy(name):
    twin = numpy_twin(name)
    ours = getattr(hnp, name)
    if isinstance(twin, np.ufunc):
        assert ours.nin == twin.nin
        assert getattr(hnp, twin.__name__) is ours or twin.__name__ in ("divide", "absolute",
                                                                       "conjugate",
                                                                       "remainder", "power")


def test_aliases():
    assert hnp.true_divide is hnp.divide and hnp.mod is hnp.remainder
    assert hnp.abs is hnp.absolute and hnp.conj is hnp.conjugate
    assert hnp.degrees is hnp.rad2deg and hnp.radians is hnp.deg2rad
    assert hnp.around is hnp.round and hnp.pow is hnp.power and hnp.acos is hnp.arccos


def test_bad_shapes_name_the_function_and_shapes():
    with pytest.raises(ValueError, match=r"add: .*shape \(2,\).*shape \(3,\)"):
        hnp.add(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match=r"logaddexp: .*shape \(2,\).*shape \(3,\)"):
        hg.function(lambda a, b: hnp.logaddexp(a, b))(np.ones(2), np.ones(3))


# --- functions with their own signatures ------------------------------------------------
CLIP_CASES = [
    ((-0.5, 0.5), {}), ((None, 0.5), {}), ((-0.5, None), {}), ((), {"min": -0.3}),
    ((), {"max": 0.2}), ((), {"min": -0.3, "max": 0.2}), ((np.array([-1.0, 0.0, -0.2]), 0.4), {}),
    ((0.5, -0.5), {}), ((), {}),
]


@pytest.mark.parametrize("args,kwargs", CLIP_CASES)
def test_clip_matches_numpy(args, kwargs):
    x = normal((4, 3))
    want = np.clip(x, *args, **kwargs)
    assert_same(hnp.clip(x, *args, **kwargs), want)
    assert_same(hg.function(lambda a: hnp.clip(a, *args, **kwargs))(x), want)
    eager = hg.grad(lambda a: hnp.sum(hnp.clip(a, *args, **kwargs)))(x)
    graph = hg.function(hg.grad(lambda a: hnp.sum(hnp.clip(a, *args, **kwargs))))(x)
    np.testing.assert_array_equal(eager, graph)


def test_clip_keywords_and_dtypes():
    x = np.arange(6)
    assert_same(hnp.clip(x, 1, 4), np.clip(x, 1, 4))
    assert_same(hnp.clip(x.astype(np.float32), 1.5, 4), np.clip(x.astype(np.float32), 1.5, 4))
    assert_same(hnp.clip(x, 1, 4, dtype=np.float32), np.clip(x, 1, 4, dtype=np.float32))
    assert_same(hnp.clip(x, a_min=1, a_max=3), np.clip(x, a_min=1, a_max=3))
    with pytest.raises(ValueError, match="a_min is given twice"):
        hnp.clip(x, 1, 3, min=0)
    with pytest.raises(ValueError, match=r"clip: .*a of shape \(6,\), a_min of shape \(4,\)"):
        hnp.clip(x, np.zeros(4), 3)


def test_round_matches_numpy():
    x = normal((3, 4)) * 100
    for decimals in (0, 1, 3, -1, -2):
        assert_same(hnp.round(x, decimals), np.round(x, decimals))
        assert_same(hnp.around(x, decimals=decimals), np.round(x, decimals))
        assert_same(hg.function(lambda a: hnp.round(a, decimals))(x), np.round(x, decimals))
    assert_same(hnp.round(np.arange(-15, 15, 5), -1), np.round(np.arange(-15, 15, 5), -1))
    np.testing.assert_array_equal(hg.grad(lambda a: hnp.sum(hnp.round(a, 1)))(x), 0.0)


def test_where_matches_numpy():
    c, x, y = boolean((2, 3)), normal((2, 3)), normal(3)
    assert_same(hnp.where(c, x, y), np.where(c, x, y))
    assert_same(hnp.where(c, x, 0), np.where(c, x, 0))
    assert_same(hnp.where(c, 1, 0), np.where(c, 1, 0))
    assert_same(hnp.where(x > 0, np.float32(1), 0.5), np.where(x > 0, np.float32(1), 0.5))
    assert_same(hnp.where(x, 1.0, 2.0), np.where(x, 1.0, 2.0))  # non-boolean condition
    assert_same(hnp.where([0.0, 2.0], [1, 2], 0), np.where([0.0, 2.0], [1, 2], 0))
    assert_same(hg.function(lambda a, b: hnp.where(c, a, b))(x, y), np.where(c, x, y))
    for got, want in zip(hnp.where(c), np.where(c)):
        assert_same(got, want)
    with pytest.raises(ValueError, match="both or neither"):
        hnp.where(c, x)
    gx, gy = hg.grad(lambda a, b: hnp.sum(hnp.where(c, a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, c)
    np.testing.assert_array_equal(gy, (~c).sum(axis=0))
    ggx, ggy = hg.function(hg.grad(lambda a, b: hnp.sum(hnp.where(c, a, b)),
                                   argnums=(0, 1)))(x, y)
    np.testing.assert_array_equal(ggx, gx)
    np.testing.assert_array_equal(ggy, gy)


def test_divmod_matches_numpy():
    x, y = normal((2, 3)) * 5, away_from_zero(3)
    q, r = hnp.divmod(x, y)
    wq, wr = np.divmod(x, y)
    assert_same(q, wq)
    assert_same(r, wr)
    q, r = hg.function(lambda a, b: hnp.divmod(a, b))(x, y)
    assert_same(q, wq)
    assert_same(r, wr)
    assert_same(hnp.divmod(7, 2, dtype=np.float64)[1], np.divmod(7, 2, dtype=np.float64)[1])
    gx, gy = hg.grad(lambda a, b: hnp.sum(hnp.divmod(a, b)[1]), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, 1.0)
    np.testing.assert_allclose(gy, -np.floor_divide(x, y).sum(axis=0))


def test_real_imag_conj_on_complex_values():
    z = np.array([1 + 2j, -3.5 - 1j])
    assert_same(hnp.real(z), np.real(z))
    assert_same(hnp.imag(z), np.imag(z))
    assert_same(hnp.conj(z), np.conj(z))
    x = normal(3)
    np.testing.assert_array_equal(hg.grad(lambda a: hnp.sum(hnp.imag(a) + hnp.real(a)))(x),
                                  1.0)


def test_complex_abs_imag_and_arcsinh_derivatives():
    # |z| and imag(z) are real: their derivatives follow real()'s convention (JAX's):
    # the cotangent g of a real output of z = x + iy is g * (d/dx - i d/dy). abs gave
    # g * z/|z| and a complex tangent; imag gave +i g; arcsinh's rule called hypot (no
    # complex loop) and raised a TypeError.
    z = np.array([1 + 2j, -3.0 + 0.5j, 0.25 - 1j])
    t = np.array([0.5 - 1j, 2 + 1j, -1 + 0.25j])
    g = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(hg.vjp(hnp.abs, z)[1](g)[0], g * np.conj(z) / np.abs(z))
    y, dy = hg.jvp(hnp.abs, (z,), (t,))
    assert dy.dtype == np.float64
    np.testing.assert_allclose(dy, np.real(np.conj(z) * t) / np.abs(z))
    np.testing.assert_allclose(hg.vjp(hnp.imag, z)[1](g)[0], -1j * g)
    # the same real function written two ways has one gradient
    g_abs = hg.grad(lambda a: hnp.sum(hnp.abs(a) ** 3))(z)
    g_parts = hg.grad(lambda a: hnp.sum((hnp.real(a) ** 2 + hnp.imag(a) ** 2) ** 1.5))(z)
    np.testing.assert_allclose(g_abs, g_parts)
    np.testing.assert_allclose(hg.grad(lambda a: hnp.sum(hnp.abs(a)))(np.zeros(2, complex)), 0)
    np.testing.assert_allclose(hg.jvp(hnp.arcsinh, (z,), (t,))[1], t / np.sqrt(1 + z * z))
    np.testing.assert_allclose(hg.vjp(hnp.arcsinh, z)[1](t)[0], t / np.sqrt(1 + z * z))


@pytest.mark.parametrize("mode", ["fwd-rev", "rev-rev", "rev-fwd"])
def test_complex_abs_second_order_matches_its_real_and_imaginary_parts(mode):
    # abs's rules are differentiated again in every HVP mode: the Hessian-vector product of
    # sum(|z|^3) equals that of the same function written with real() and imag()
    z = np.array([1 + 2j, -3.0 + 0.5j, 0.25 - 1j])
    v = np.array([0.5 - 1j, 2 + 1j, -1 + 0.25j])
    via_abs = hg.hvp(lambda a: hnp.sum(hnp.abs(a) ** 3), mode=mode)(z, v)
    via_parts = hg.hvp(lambda a: hnp.sum((hnp.real(a) ** 2 + hnp.imag(a) ** 2) ** 1.5),
                       mode=mode)(z, v)
    np.testing.assert_allclose(via_abs, via_parts, rtol=1e-12)
