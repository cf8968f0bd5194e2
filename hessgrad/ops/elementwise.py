"""Elementwise primitives: arithmetic with broadcasting, transcendental functions,
comparisons. One declaration per op: forward, VJP per input, JVP per input."""

import numpy as np

from ..engine.registry import primitive
from ..engine.tensor import Tensor, dtype_of
from .core import broadcast_to, ones_like, unbroadcast, zeros_like


def _u(rule):
    """Wrap a VJP rule so that its result is summed back to its input's shape."""
    def vjp_first(g, ans, x, y):
        return unbroadcast(rule(g, ans, x, y), x)
    return vjp_first


def _v(rule):
    def vjp_second(g, ans, x, y):
        return unbroadcast(rule(g, ans, x, y), y)
    return vjp_second


def _zero_vjp(g, ans, *args, **params):
    return zeros_like(args[0])


def _zero_jvp(t, ans, *args, **params):
    return zeros_like(ans)


# --- arithmetic ---------------------------------------------------------------------------
add = primitive("add", np.add, vjp=[_u(lambda g, a, x, y: g), _v(lambda g, a, x, y: g)],
                linear=True)
subtract = primitive("subtract", np.subtract,
                     vjp=[_u(lambda g, a, x, y: g), _v(lambda g, a, x, y: negative(g))],
                     linear=True)
multiply = primitive("multiply", np.multiply,
                     vjp=[_u(lambda g, a, x, y: g * y), _v(lambda g, a, x, y: g * x)],
                     jvp=[lambda t, a, x, y: t * y, lambda t, a, x, y: x * t])
divide = primitive("divide", np.true_divide,
                   vjp=[_u(lambda g, a, x, y: g / y), _v(lambda g, a, x, y: -g * a / y)],
                   jvp=[lambda t, a, x, y: t / y, lambda t, a, x, y: -t * a / y])
negative = primitive("negative", np.negative, vjp=[lambda g, a, x: -g], linear=True)


def _pow_dx(x, y):
    """d(x**y)/dx = y * x**(y-1), exact at y == 0 (no 0 * 0**-1) and cheap for y in {1, 2}."""
    if isinstance(y, Tensor):
        return y * x ** where(equal(y, 0), 1.0, y - 1.0)
    y = np.asarray(y)
    if y.ndim:
        return y * x ** np.where(y == 0, 1.0, y - 1.0)
    y = y.item()
    if y == 0:
        return zeros_like(x)
    if y == 1:
        return ones_like(x)
    if y == 2:
        return 2.0 * x
    return y * x ** (y - 1.0)


def _pow_dy(x, ans):
    # log(x) where x > 0; the derivative in y is 0 where x == 0 (0**y is flat for y > 0).
    safe = where(equal(x, 0), 1.0, x)
    return log(safe) * ans


power = primitive("power", np.power,
                  vjp=[_u(lambda g, a, x, y: g * _pow_dx(x, y)),
                       _v(lambda g, a, x, y: g * _pow_dy(x, a))],
                  jvp=[lambda t, a, x, y: t * _pow_dx(x, y),
                       lambda t, a, x, y: t * _pow_dy(x, a)])
square = primitive("square", np.square, vjp=[lambda g, a, x: g * (2.0 * x)],
                   jvp=[lambda t, a, x: t * (2.0 * x)])
reciprocal = primitive("reciprocal", lambda x: 1.0 / x, vjp=[lambda g, a, x: -g * a * a],
                       jvp=[lambda t, a, x: -t * a * a])

# --- transcendental -----------------------------------------------------------------------
exp = primitive("exp", np.exp, vjp=[lambda g, a, x: g * a], jvp=[lambda t, a, x: t * a])
log = primitive("log", np.log, vjp=[lambda g, a, x: g / x], jvp=[lambda t, a, x: t / x])
log1p = primitive("log1p", np.log1p, vjp=[lambda g, a, x: g / (1.0 + x)],
                  jvp=[lambda t, a, x: t / (1.0 + x)])
expm1 = primitive("expm1", np.expm1, vjp=[lambda g, a, x: g * (a + 1.0)],
                  jvp=[lambda t, a, x: t * (a + 1.0)])
sqrt = primitive("sqrt", np.sqrt, vjp=[lambda g, a, x: g * 0.5 / a],
                 jvp=[lambda t, a, x: t * 0.5 / a])
tanh = primitive("tanh", np.tanh, vjp=[lambda g, a, x: g * (1.0 - a * a)],
                 jvp=[lambda t, a, x: t * (1.0 - a * a)])
sin = primitive("sin", np.sin, vjp=[lambda g, a, x: g * cos(x)],
                jvp=[lambda t, a, x: t * cos(x)])
cos = primitive("cos", np.cos, vjp=[lambda g, a, x: -g * sin(x)],
                jvp=[lambda t, a, x: -t * sin(x)])
absolute = primitive("absolute", np.abs, vjp=[lambda g, a, x: g * sign(x)],
                     jvp=[lambda t, a, x: t * sign(x)])
sign = primitive("sign", np.sign, vjp=[_zero_vjp], jvp=[_zero_jvp])


def _sigmoid(x):
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = primitive("sigmoid", _sigmoid, vjp=[lambda g, a, x: g * (a * (1.0 - a))],
                    jvp=[lambda t, a, x: t * (a * (1.0 - a))])
# logaddexp's partials are sigmoids of the difference: exp(x - ans) never overflows.
logaddexp = primitive("logaddexp", np.logaddexp,
                      vjp=[_u(lambda g, a, x, y: g * exp(x - a)),
                           _v(lambda g, a, x, y: g * exp(y - a))],
                      jvp=[lambda t, a, x, y: t * exp(x - a), lambda t, a, x, y: t * exp(y - a)])


def softplus(x):
    """log(1 + exp(x)) without overflow; its derivative is sigmoid(x)."""
    return logaddexp(0.0, x)


# --- piecewise ----------------------------------------------------------------------------
def _max_mask(x, y):
    """1 where x wins, 1/2 at ties (the symmetric subgradient), 0 elsewhere."""
    return where(greater(x, y), 1.0, where(equal(x, y), 0.5, 0.0))


maximum = primitive("maximum", np.maximum,
                    vjp=[_u(lambda g, a, x, y: g * _max_mask(x, y)),
                         _v(lambda g, a, x, y: g * _max_mask(y, x))],
                    jvp=[lambda t, a, x, y: t * _max_mask(x, y),
                         lambda t, a, x, y: t * _max_mask(y, x)])
minimum = primitive("minimum", np.minimum,
                    vjp=[_u(lambda g, a, x, y: g * _max_mask(y, x)),
                         _v(lambda g, a, x, y: g * _max_mask(x, y))],
                    jvp=[lambda t, a, x, y: t * _max_mask(y, x),
                         lambda t, a, x, y: t * _max_mask(x, y)])


def _where_vjp_x(g, a, c, x, y):
    return unbroadcast(where(c, g, 0.0), x)


def _where_vjp_y(g, a, c, x, y):
    return unbroadcast(where(c, 0.0, g), y)


where = primitive("where", np.where, vjp=[None, _where_vjp_x, _where_vjp_y], linear=True)

# --- comparisons and logic: boolean results are constants ---------------------------------
less = primitive("less", np.less, nondiff=True)
less_equal = primitive("less_equal", np.less_equal, nondiff=True)
greater = primitive("greater", np.greater, nondiff=True)
greater_equal = primitive("greater_equal", np.greater_equal, nondiff=True)
equal = primitive("equal", np.equal, nondiff=True)
not_equal = primitive("not_equal", np.not_equal, nondiff=True)
logical_and = primitive("logical_and", np.logical_and, nondiff=True)
logical_or = primitive("logical_or", np.logical_or, nondiff=True)
logical_not = primitive("logical_not", np.logical_not, nondiff=True)
logical_xor = primitive("logical_xor", np.logical_xor, nondiff=True)


def is_float(x):
    return dtype_of(x).kind in "fc"


__all__ = ["add", "subtract", "multiply", "divide", "negative", "power", "square",
           "reciprocal", "exp", "log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos",
           "absolute", "sign", "sigmoid", "logaddexp", "softplus", "maximum", "minimum",
           "where", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
           "logical_and", "logical_or", "logical_not", "logical_xor", "broadcast_to"]
