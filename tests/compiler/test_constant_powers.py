"""``x ** c`` for a constant c that is a small integer or half-integer: the power primitive
declares a rewrite (``prim.rewrites``) that the simplify pass applies, computing it with
products, a reciprocal and a square root instead of pow(). The numbers stay numpy's (within
two ulps, special values included) in every back end, and derivatives stay the eager ones."""

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp
from hessgrad.compiler import compile_plan

EXPONENTS = (0, 1, 2, 3, 4, -1, -2, -3, -4, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.5, 1e-300, 1e300, 5e-320, 1e-160]
# the ops each exponent becomes (a constant, an alias of x, or these)
LOWERED = {0: set(), 1: set(), 2: {"multiply"}, -1: {"reciprocal"}, 0.5: {"sqrt"},
           -0.5: {"sqrt", "reciprocal", "absolute", "equal", "where"},
           -2: {"reciprocal", "multiply"}, 1.5: {"sqrt", "multiply", "absolute", "equal",
                                                "where"}}
# the lowerings: numpy ops (no kernels), one whole-graph kernel, a fused Numba loop
BACKENDS = {"numpy": dict(jit_kernels=False),
            "whole_graph": dict(),
            "fused": dict(skip={"whole_graph"}, min_kernel_size=1)}


def _inputs(dtype, n=64):
    rng = np.random.default_rng(0)
    x = np.concatenate([SPECIAL, rng.uniform(0.01, 10.0, n), -rng.uniform(0.01, 10.0, n // 4),
                        np.exp(rng.uniform(-200, 200, n))])  # overflows, subnormal results
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _compiled(f, x, **flags):
    plan = hg.function(f).get_concrete_function(x).plan
    return plan, compile_plan(plan, **flags)


def _assert_pow_equal(got, expected, dtype):
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    info = np.finfo(dtype)
    np.testing.assert_allclose(got, expected, rtol=4 * info.eps, atol=4 * info.smallest_subnormal)
    zeros = expected == 0  # pow's signed zeros (pow(-0, 3) = -0, pow(-0, 1.5) = +0)
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lowered_powers_give_numpys_numbers(dtype, backend):
    x = _inputs(dtype)
    for c in EXPONENTS:
        plan, compiled = _compiled(lambda x: x ** c, x, **BACKENDS[backend])
        assert "power" in compiled.counts_before
        with np.errstate(all="ignore"):
            expected = np.power(x, c)
            _assert_pow_equal(compiled.run([x])[0], expected, dtype)
            for v in x[:len(SPECIAL)]:  # numpy scalars, and numpy scalars come out
                _, scalar = _compiled(lambda x: x ** c, v, **BACKENDS[backend])
                got = scalar.run([v])[0]
                assert type(got) is type(np.power(v, c))
                _assert_pow_equal(got, np.power(v, c), dtype)


def test_the_simplify_pass_lowers_the_power():
    x = np.linspace(0.5, 2.0, 7)
    for c, ops in LOWERED.items():
        plan, compiled = _compiled(lambda x: hnp.sin(x) ** c, x, jit_kernels=False)
        after = set(compiled.counts_after) - {"sin"}
        assert after == ops, (c, compiled.counts_after)
        assert "power" in compile_plan(plan, jit_kernels=False, skip={"rewrites"}).counts_after


@pytest.mark.parametrize("f, kept", [
    (lambda x: x ** 0.3, True),                                    # no cheap form
    (lambda x: x ** 4.5, True),                                    # beyond the table
    (lambda x: x ** 3.5, True),
    (lambda x: x ** np.inf, True),
    (lambda x: x ** np.nan, True),
    (lambda x: x ** hnp.sin(x), True),                             # not a constant
    (lambda x: hnp.astype(x, np.float32) ** np.array(2.0), True),  # the result is float64
    (lambda x: (1 + 2j) * x ** 2, False),                          # a real power, then complex
], ids=["0.3", "4.5", "3.5", "inf", "nan", "tensor", "float32-by-0d-float64", "complex-after"])
def test_other_powers_keep_pow(f, kept):
    x = np.linspace(0.5, 2.0, 7)
    plan, compiled = _compiled(f, x, jit_kernels=False)
    assert ("power" in compiled.counts_after) == kept
    np.testing.assert_allclose(compiled.run([x])[0], plan.run([x])[0], rtol=1e-15)


def test_integer_bases_take_integer_exponents_only():
    x = np.arange(-3, 4)
    for c, kept in ((2, False), (3, False), (0, False), (0.5, True)):
        plan, compiled = _compiled(lambda x: x ** c, x, jit_kernels=False)
        assert ("power" in compiled.counts_after) == kept
        np.testing.assert_array_equal(compiled.run([x])[0], np.power(x, c))


@pytest.mark.parametrize("c", [2, 3, -1, -2, 0.5, 1.5, 2.5, -0.5, -1.5])
def test_derivatives_through_function_match_eager(c):
    x = np.linspace(0.3, 2.5, 5)
    f = lambda x: hnp.sum(hnp.cos(x) * (x + 0.5) ** c)  # noqa: E731
    np.testing.assert_allclose(hg.function(f)(x), f(x), rtol=1e-14)
    np.testing.assert_allclose(hg.function(hg.grad(f))(x), hg.grad(f)(x), rtol=1e-14)
    np.testing.assert_allclose(hg.function(hg.hessian(f))(x), hg.hessian(f)(x), rtol=1e-13)


def test_a_p_laplacian_chain_fuses_into_one_loop_without_pow():
    m, h = 40, 1.0 / 41

    def energy(u):
        U = hnp.pad(hnp.reshape(u, (m, m)), 1)
        dx, dy = (U[1:, :-1] - U[:-1, :-1]) / h, (U[:-1, 1:] - U[:-1, :-1]) / h
        return hnp.sum((dx * dx + dy * dy + 1e-8) ** 1.5)

    u = np.random.default_rng(1).standard_normal(m * m)
    f = hg.function(energy)
    compiled = f.get_concrete_function(u).compiled
    sources = compiled.kernel_sources
    assert compiled.counts_after.get("power", 0) == 0
    assert len(sources) == 1 and "math.sqrt" in sources[0] and "**" not in sources[0]
    np.testing.assert_allclose(f(u), energy(u), rtol=1e-13)
