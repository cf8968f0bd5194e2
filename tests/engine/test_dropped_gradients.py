"""A value being differentiated never leaves as a plain number without a word: float(),
.item(), math functions, np.float64() and writes into numpy arrays raise the same clear error
eagerly as inside hg.function; values nothing differentiates convert freely."""

import math

import numpy as np
import pytest

import hessgrad as hg
import hessgrad.numpy as hnp

X = np.array([0.1, -0.2, 0.3])

CONVERSIONS = {
    "float": lambda t: float(t),
    "item": lambda t: t.item(),
    "math.exp": lambda t: math.exp(t),
    "np.float64": lambda t: np.float64(t),
    "complex": lambda t: complex(t).real,
    "tolist": lambda t: t.tolist(),
    "np.asarray": lambda t: np.asarray(t),
}

TRANSFORMS = {
    "grad": lambda f: hg.grad(f)(X),
    "hvp": lambda f: hg.hvp(f)(X, np.ones(3)),
    "hvp rev-rev": lambda f: hg.hvp(f, mode="rev-rev")(X, np.ones(3)),
    "hessian": lambda f: hg.hessian(f)(X),
    "jacfwd": lambda f: hg.jacfwd(f)(X),
    "jvp": lambda f: hg.jvp(f, (X,), (np.ones(3),)),
    "function of grad": lambda f: hg.function(hg.grad(f))(X),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_converting_a_differentiated_value_raises(conversion, transform):
    convert = CONVERSIONS[conversion]

    def f(x):  # the gradient would miss the first factor's dependence on x
        return hnp.sum(convert(hnp.sum(x)) * x)
    with pytest.raises(hg.engine.tensor.ConcretizationError,
                       match="silently drop its gradient|not known while a function is traced"):
        TRANSFORMS[transform](f)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_writing_a_differentiated_value_into_a_numpy_array_raises(transform):
    def f(x):
        a = np.zeros(3)
        for i in range(3):
            a[i] = x[i] ** 2
        return hnp.sum(a * a)
    with pytest.raises(TypeError, match="hessgrad.numpy") as info:
        TRANSFORMS[transform](f)
    assert "setting an array element" in str(info.value.__cause__)  # numpy's own error


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_values_nothing_differentiates_convert_freely(conversion):
    convert = CONVERSIONS[conversion]
    assert np.allclose(convert(hnp.sum(hnp.asarray(X))), convert(np.sum(X)))
    data = np.array([1.0, 2.0])

    def f(x):  # a constant computed inside a differentiated function
        return hnp.sum(x) * float(np.asarray(convert(hnp.sum(hnp.asarray(data)))).sum())
    expected = float(np.asarray(convert(np.sum(data))).sum())
    np.testing.assert_allclose(hg.grad(f)(X), np.full(3, expected))


def test_int_and_bool_of_a_differentiated_value_are_allowed():
    # int() is piecewise constant (its derivative, zero, is not lost); bool() chooses a branch
    def f(x):
        s = hnp.sum(x ** 2)
        k = int(s * 10)
        return s * k if s > 0 else -s
    np.testing.assert_allclose(hg.grad(f)(X), 2 * X * int(np.sum(X ** 2) * 10))


def test_a_missed_cross_term_is_an_error_not_a_wrong_hessian():
    def f(x):  # with float(), the Hessian lost the cross term 2 * outer(x, 1)
        return hnp.sum(x) * float(hnp.sum(x ** 2))
    with pytest.raises(TypeError, match="silently drop"):
        hg.hessian(f)(X)
    np.testing.assert_allclose(
        hg.hessian(lambda x: hnp.sum(x) * hnp.sum(x ** 2))(X),
        2 * np.sum(X) * np.eye(3) + 2 * (X[:, None] + X[None, :]))
