"""Python floats and complexes traced by hessgrad.function stay *weak*, as numpy 2 keeps them
(NEP 50): ``float32_array * 0.5`` is float32 eagerly, and so is the traced function's result.
Every case runs eagerly (numpy arrays and Python scalars in) and traced (compiled with and
without Numba kernels, uncompiled, and with HESSGRAD_COMPILE=0), and the results must have
the same dtypes and the same values."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

X32 = np.linspace(0.05, 0.95, 4).astype(np.float32)
X64 = X32.astype(np.float64)
X16 = X32.astype(np.float16)
I32 = np.arange(4, dtype=np.int32)
I8 = np.arange(4, dtype=np.int8)
C64 = (X32 + 0.5j * X32).astype(np.complex64)
EDGE = np.float32([0.1, 0.3])  # float32(0.1) > 0.1: compared in float64 it is not <= 0.1
BIG = np.linspace(0.01, 0.99, 4096).astype(np.float32)  # fused into Numba kernels


def _tensor_array(x, s):
    ta = hg.TensorArray(np.float32, size=2)
    return ta.write(0, s).write(1, x[0] * s).stack()


def _custom(x, s):
    @hg.custom_gradient
    def g(y):
        return y * s, lambda dy: dy * s
    return hnp.sum(g(x))


CASES = {  # name: (f, args) with a Python scalar among the args
    # arithmetic with float32, float16, float64, int32 and complex arrays
    "sum_mul": (lambda x, s: hnp.sum(x * s), (X32, 0.5)),
    "rmul": (lambda x, s: s * x, (X32, 0.1)),
    "add": (lambda x, s: x + s, (X32, 0.1)),
    "rsub": (lambda x, s: s - x, (X32, 0.1)),
    "div": (lambda x, s: x / s, (X32, 0.3)),
    "rdiv": (lambda x, s: s / x, (X32, 0.3)),
    "pow": (lambda x, s: x ** s, (X32, 0.3)),
    "rpow": (lambda x, s: s ** x, (X32, 0.3)),
    "floordiv_mod": (lambda x, s: (x // s, x % s, divmod(x, s)), (X32, 0.3)),
    "float16": (lambda x, s: x * s + s, (X16, 0.3)),
    "float64": (lambda x, s: x * s, (X64, 0.3)),
    "int32": (lambda x, s: (x * s, x / s, x < s), (I32, 1.5)),
    "complex_scalar": (lambda x, s: x * s, (X32, 0.5 + 1j)),
    "complex_array": (lambda x, s: x * s, (C64, 0.3)),
    "complex_abs": (lambda x, s: x * abs(s), (X32, 3 + 4j)),
    "complex_parts": (lambda x, s: (x * s.real, x * s.imag, x * s.conjugate()), (X32, 0.5 + 2j)),
    "float_parts": (lambda x, s: (x * s.real, x * s.imag, x * s.conjugate()), (X32, 0.5)),
    # Python arithmetic on the scalars stays weak; functions of them are strong, as numpy's
    "scalar_arithmetic": (lambda x, s: x * (s * 2.0 + 1 - s / 3) ** 2 * abs(-s), (X32, 0.3)),
    "two_scalars": (lambda x, s, t: x * (s * t), (X32, 0.3, 0.7)),
    "mixed_kinds": (lambda x, s, t: x * (s * t), (X32, 1j, 0.5)),
    "scalar_outputs": (lambda x, s: (s, s * 2.0, -s, +s), (X32, -0.3)),
    "comparison_arithmetic": (lambda x, s: x * ((s > 0) * 2.0 - 1.0), (X32, -0.3)),
    # Python's arithmetic on bools is integer arithmetic: True + True is 2, True - True 0
    "bool_arithmetic": (lambda x, s: (x * ((s > 0.1) + (s > 0.2)), (s > 0.1) - (s > 0.2),
                                      -(s > 0.1), (s > 0.1) / (s > 0.2), (s > 0.1) & (s > 0.2)),
                        (I8, 0.3)),
    "sin_of_scalar": (lambda x, s: x * hnp.sin(s), (X32, 0.3)),
    "multiply_function": (lambda x, s: hnp.multiply(s, 2.0) * x, (X32, 0.3)),
    "asarray": (lambda x, s: (hnp.asarray(s) * x, hnp.array(s) * x), (X32, 0.3)),
    "convert_to_tensor": (lambda x, s: hg.convert_to_tensor(s) * x, (X32, 0.3)),
    # numpy scalars and 0-d arrays are strong
    "numpy_scalars": (lambda x, s: (x * (np.float32(2) * s), x * s * np.float64(2.0),
                                    x * (np.array(2.0) * s)), (X16, 0.3)),
    # functions that promote the scalar weakly, and those that make it a float64 array
    "comparisons": (lambda x, s: (x <= s, x == s, x > s, hnp.less(s, x)), (EDGE, 0.1)),
    "where_maximum_clip": (lambda x, s: (hnp.where(x > 0.5, x, s), hnp.maximum(x, s),
                                         hnp.clip(x, 0, s), hnp.select([x > 0.5], [x], s)),
                           (X32, 0.3)),
    "float64_conversions": (lambda x, s: (hnp.dot(x, s), hnp.stack([x[0], s]),
                                          hnp.searchsorted(x, s, side="right")), (EDGE, 0.1)),
    "reductions_and_shapes": (lambda x, s: (hnp.mean(x * s), hnp.sum(s) * x,
                                            hnp.reshape(s, (1,)) * x), (X32, 0.3)),
    "result_type": (lambda x, s: x * np.ones((), np.result_type(x, s)), (X32, 0.3)),
    # structures, keyword arguments, control flow, TensorArray, custom gradients
    "nested": (lambda d: d["x"] * d["s"], ({"x": X32, "s": 0.3},)),
    "while_capture": (lambda x, s: hg.while_loop(
        lambda i, y: i < 3, lambda i, y: (i + 1, y * s + hnp.sin(y)), (0, x))[1], (X32, 0.9)),
    "cond_capture": (lambda x, s: hg.cond(s > 0.1, lambda: x * s, lambda: x * 2.0), (X32, 0.3)),
    "cond_scalar_result": (lambda x, s: x * hg.cond(hnp.sum(x) > 1.0, lambda: s, lambda: s * 2.0),
                           (X32, 0.3)),
    "tensor_array": (_tensor_array, (X32, 0.1)),
    "custom_gradient": (_custom, (X32, 0.1)),
    # large enough for fused kernels
    "fused": (lambda x, s: hnp.exp(-x * s) * hnp.sin(x + s) / (1.0 + x * x * s) - s ** 2,
              (BIG, 0.37)),
    "fused_comparisons": (lambda x, s: (x * 3.0 < s + x) & (x > s * 0.1), (BIG, 0.37)),
    "fused_complex": (lambda x, s: x * s + hnp.exp(x * s), (BIG, 0.3 + 0.1j)),
}

MODES = {"compiled": {}, "no_kernels": {"jit_kernels": False},
         "uncompiled": {"optimize": False}, "env": {}}


def _flat(r):
    if isinstance(r, (tuple, list)):
        return [leaf for part in r for leaf in _flat(part)]
    return [r]


def assert_same(eager, traced):
    eager, traced = _flat(eager), _flat(traced)
    assert len(eager) == len(traced)
    for k, (e, t) in enumerate(zip(eager, traced)):
        assert np.asarray(e).dtype == np.asarray(t).dtype, f"output {k}"
        np.testing.assert_array_equal(np.asarray(t), np.asarray(e), err_msg=f"output {k}")


@pytest.fixture(params=list(MODES))
def traced(request, monkeypatch):
    """``traced(f)``: ``hg.function(f)`` in one compilation mode."""
    if request.param == "env":
        monkeypatch.setenv("HESSGRAD_COMPILE", "0")
    return lambda f: hg.function(f, **MODES[request.param])


def test_float32_times_python_float_is_float32(traced):
    def f(x, s):
        return hnp.sum(x * s)
    x = np.ones(3, np.float32)
    assert f(x, 0.5).dtype == np.float32
    out = traced(f)(x, 0.5)
    assert out.dtype == np.float32 and out == 1.5


@pytest.mark.parametrize("name", list(CASES))
def test_traced_matches_eager(name, traced):
    f, args = CASES[name]
    assert_same(f(*args), traced(f)(*args))


def test_keyword_argument(traced):
    def f(x, s=1.0):
        return x * s
    assert_same(f(X32, s=0.3), traced(f)(X32, s=0.3))


def test_python_and_numpy_scalars_are_traced_apart():
    f = hg.function(lambda x, s: x * s)
    assert f(X32, 0.5).dtype == np.float32
    assert f(X32, np.float64(0.5)).dtype == np.float64
    assert f(X32, 0.5).dtype == np.float32
    assert f(X32, 0.25 + 0j).dtype == np.complex64
    assert f.experimental_traces == 3
    weak = {t.name: t.weak for n in f.graph.nodes for t in n.outputs if n.type == "placeholder"}
    assert weak == {"arg0:0": False, "arg1:0": True}


def test_one_cast_per_scalar_and_dtype():
    f = hg.function(lambda x, s: hnp.sum(hnp.sin(x * s) * s + x / s))
    f(X32, 0.5)
    casts = [n for n in f.graph.nodes if n.type == "cast"]
    assert len(casts) == 1 and casts[0].outputs[0].dtype == np.float32


F = {  # scalar functions of an array x and a Python float s
    "sin": lambda x, s: hnp.sum(hnp.sin(x * s) * s ** 2),
    "where_max": lambda x, s: hnp.sum(hnp.where(x > 0.5, x * s, s / (1.0 + x)))
    + hnp.sum(hnp.maximum(x, s)) * s,
    "clip": lambda x, s: hnp.sum(hnp.clip(x, 0, s) ** 2 * (s * 2.0 - 1.0)),
    "cond": lambda x, s: hg.cond(hnp.sum(x) > 1.0, lambda: hnp.sum(x * s),
                                 lambda: hnp.sum(x) * s ** 2),
}
ONES = np.ones_like(X32)

DERIVATIVES = {
    "grad_x": lambda f: hg.grad(f),
    "grad_s": lambda f: hg.grad(f, argnums=1),
    "grad_both": lambda f: hg.grad(f, argnums=(0, 1)),
    "value_and_grad_x": lambda f: hg.value_and_grad(f),
    "value_and_grad_s": lambda f: hg.value_and_grad(f, argnums=1),
    # fwd-rev named: the default ("auto") is rev-fwd eagerly and fwd-rev traced, equal only
    # to rounding
    "hvp_x": lambda f: lambda x, s: hg.hvp(f, mode="fwd-rev")(x, s, ONES.astype(x.dtype)),
    "hvp_x_rev_fwd": lambda f: lambda x, s: hg.hvp(f, mode="rev-fwd")(x, s, ONES.astype(x.dtype)),
    "hvp_s": lambda f: lambda x, s: hg.hvp(f, argnums=1, mode="fwd-rev")(x, s, 1.0),
    "hvp_s_rev_rev": lambda f: lambda x, s: hg.hvp(f, argnums=1, mode="rev-rev")(x, s, 1.0),
    "grad_grad_s": lambda f: hg.grad(hg.grad(f, argnums=1), argnums=1),
    "jvp_s": lambda f: lambda x, s: hg.jvp(lambda t: f(x, t), (s,), (1.0,)),
}


@pytest.mark.parametrize("x", [X32, X64], ids=["float32", "float64"])
@pytest.mark.parametrize("fname", list(F))
@pytest.mark.parametrize("dname", list(DERIVATIVES))
def test_derivatives_traced_match_eager(dname, fname, x, traced):
    g = DERIVATIVES[dname](F[fname])
    assert_same(g(x, 0.3), traced(g)(x, 0.3))


def test_derivatives_through_while_loop(traced):
    def f(x, s):
        return hg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * s + hnp.sin(y)),
                             (0, hnp.sum(x)))[1]
    for g in (hg.grad(f), lambda x, s: hg.hvp(f, mode="fwd-rev")(x, s, ONES)):
        assert_same(g(X32, 0.3), traced(g)(X32, 0.3))


@pytest.mark.parametrize("compile_env", ["1", "0"])
@pytest.mark.parametrize("argnums", [0, 1])
def test_hessian_and_make_hvp(argnums, compile_env, monkeypatch):
    monkeypatch.setenv("HESSGRAD_COMPILE", compile_env)

    def f(x, s):  # a new function: make_hvp and hessian reuse the traces of a known one
        return F["sin"](x, s)
    v = ONES if argnums == 0 else 1.0
    eager = hg.hvp(f, argnums=argnums, mode="fwd-rev")(X32, 0.3, v)
    assert_same(eager, hg.make_hvp(f, argnums=argnums)(X32, 0.3)(v))
    column = hg.hessian(f, argnums=argnums)(X32, 0.3)
    assert_same(eager, column.sum(axis=1) if argnums == 0 else column)


def test_gradient_with_respect_to_the_weak_scalar_casts_back(traced):
    """A tape watching the traced scalar differentiates through its cast: the gradient has
    the scalar's own dtype, float64, while the product is float32."""
    def f(x, s):
        with hg.GradientTape() as tape:
            tape.watch(s)
            y = hnp.sum(x * s)
        return y, tape.gradient(y, s)
    y, g = traced(f)(X32, 0.5)
    assert y.dtype == np.float32 and g.dtype == np.float64
    assert g == np.float64(np.sum(X32))


@pytest.mark.parametrize("constant", [np.nan, np.inf, -np.inf, 2.5])
def test_a_python_constant_has_a_zero_tangent_even_when_not_finite(constant):
    """A linear op's derived JVP gives a Python-number operand the tangent 0 (it was
    ``constant * 0``: NaN for NaN or an infinity, which then poisoned every product)."""
    x, v = np.array([0.7, 1.8, 1.2]), np.ones(3)
    _, t = hg.jvp(lambda x: hnp.where(x > 1.5, constant, x), (x,), (v,))
    np.testing.assert_array_equal(t, [1.0, 0.0, 1.0])
    f = lambda x: hnp.nanmean(hnp.where(x > 1.5, constant, x)) * hnp.sum(x ** 2)  # noqa: E731
    products = [hg.hvp(f, mode=m)(x, v) for m in ("fwd-rev", "rev-rev", "rev-fwd")]
    assert np.isfinite(products[0]).all() or not np.isfinite(constant)
    for p in products[1:]:
        np.testing.assert_allclose(p, products[0], rtol=1e-14)
