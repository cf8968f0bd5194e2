"""Special functions: the modified Bessel functions of the first kind ``i0`` and ``i1``, and
the error function ``erf``.

``i0' = i1`` and ``i1' = i0 - i1 / x`` (``1/2`` at 0), so the two rules call each other and
every order of derivative is exact; ``erf' = 2 / sqrt(pi) exp(-x^2)``.
"""

import math

import numpy as np
import scipy.special

from .families import elementwise
from .elementwise import divide, equal, exp, where


def _i1_derivative(x):
    zero = equal(x, 0.0)
    return where(zero, 0.5, i0(x) - divide(i1(x), where(zero, 1.0, x)))


def _i0_forward(x):
    return np.i0(x)  # numpy's own values (its Chebyshev fits), the dtype numpy gives


def _i1_forward(x):
    x = np.asarray(x)
    return scipy.special.i1(x).astype(np.result_type(x.dtype, np.float16), copy=False)


i0 = elementwise("i0", _i0_forward, vjp=[lambda g, a, x: g * i1(x)],
               jvp=[lambda t, a, x: t * i1(x)])
i0.__doc__ = """Modified Bessel function of the first kind, order 0 (numpy.i0's values)."""
i1 = elementwise("i1", _i1_forward, vjp=[lambda g, a, x: g * _i1_derivative(x)],
               jvp=[lambda t, a, x: t * _i1_derivative(x)])
i1.__doc__ = """Modified Bessel function of the first kind, order 1 (scipy.special.i1)."""


def _erf_derivative(x):
    return exp(-(x * x)) * (2.0 / math.sqrt(math.pi))


erf = elementwise("erf", scipy.special.erf, vjp=[lambda g, a, x: g * _erf_derivative(x)],
                  jvp=[lambda t, a, x: t * _erf_derivative(x)])
erf.__doc__ = """The error function ``2 / sqrt(pi)`` times the integral of ``exp(-t^2)`` from 0
to ``x`` (scipy.special.erf; complex too)."""

__all__ = ["i0", "i1", "erf"]
