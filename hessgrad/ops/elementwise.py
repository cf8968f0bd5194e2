"""Elementwise primitives: arithmetic with broadcasting, transcendental functions, rounding,
comparisons. One declaration per op: forward, VJP per input, JVP per input.

Rules are hessgrad ops, so every derivative differentiates again. Constants inside rules are
Python floats (never numpy float64 scalars) so that float32 inputs keep float32 gradients.
Arithmetic in rules is written with operators (``g * cos(x)``): on Tensors that is one dispatch,
and on the numpy values of a first-order backward pass it is plain numpy.
"""

import math

import numpy as np

from ..engine.facts import Algebra, Lowering, call, eq, logical_not as not_, ne
from ..engine import facts
from ..engine.tensor import Tensor, dtype_of, shape_of
from ..kernels import scalar as scalar_kernels, vecmath
from ..engine.registry import ADD
from .core import REAL_FLOATS, broadcast_to, cast, ones_like, zeros_like  # noqa: F401
from .families import elementwise
from .patterns import (UNKNOWN, binary, cut, elementwise_nonlinear, gram, moves, only,
                       piecewise_linear, same, select, union)
from .shape_rules import broadcasting

LN2, LN10, PI = math.log(2.0), math.log(10.0), math.pi

_ARG_NAMES = ("x1", "x2", "x3")


# --- helpers: broadcasting errors, shape rules, gradient fitting ---------------------------
def _broadcast_error(name, values, names=_ARG_NAMES):
    shapes = ", ".join(f"{n} of shape {tuple(np.shape(v))}" for n, v in zip(names, values))
    return ValueError(f"{name}: operands cannot be broadcast together: {shapes}")


def _checked(name, forward, names=_ARG_NAMES):
    """``forward`` whose broadcasting failures name the op, the arguments and their shapes."""
    def checked_forward(*values):  # no **params: these ops take none (a dict less per call)
        try:
            return forward(*values)
        except ValueError as exc:
            if "broadcast" not in str(exc):
                raise
            raise _broadcast_error(name, values, names) from exc
    checked_forward.__name__ = name
    checked_forward.unchecked = forward  # eager calls skip this frame until one fails
    return checked_forward


def _zero_vjp(g, ans, *args, **params):
    return zeros_like(args[0])


def _zero_vjp_second(g, ans, x, y, **params):
    return zeros_like(y)


def _zero_jvp(t, ans, *args, **params):
    return zeros_like(ans)


# Rules call the ops (``multiply(g, d)``) rather than operators (``g * d``): the same ops,
# one Python layer less per gradient op in eager mode.
def _unary(name, forward, deriv, **flags):
    """A unary op whose derivative is ``deriv(ans, x)`` (a hessgrad expression)."""
    return elementwise(name, forward, vjp=[lambda g, a, x: multiply(g, deriv(a, x))],
                       jvp=[lambda t, a, x: multiply(t, deriv(a, x))], **flags)


def _unary_div(name, forward, denominator, **flags):
    """A unary op whose derivative is ``1 / denominator(ans, x)``."""
    return elementwise(name, forward, vjp=[lambda g, a, x: divide(g, denominator(a, x))],
                       jvp=[lambda t, a, x: divide(t, denominator(a, x))], **flags)


def _piecewise_constant(name, forward, **flags):
    """Floor, round, sign, ...: derivative zero almost everywhere (exactly zero here)."""
    return elementwise(name, forward, vjp=[_zero_vjp], jvp=[_zero_jvp], sparsity=cut, **flags)


def _binary_prim(name, forward, **kwargs):
    """A broadcasting binary primitive with explicit rules, clear errors and a shape rule.
    Its VJP rules may return gradients of the output's shape: the backprop core sums them
    back to each input's shape (``broadcasts``)."""
    forward = _checked(name, forward)
    return elementwise(name, forward, shape_rule=broadcasting(name, forward),
                       broadcasts=True, **kwargs)


def _eager_all(test, *tensors):
    """True when every tensor is eager and ``test`` holds for all of its values (a fast path
    that skips guards in rules; symbolic tensors always take the guarded path)."""
    for t in tensors:
        value = t._value if isinstance(t, Tensor) else np.asarray(t)
        if value is None or not test(value).all():
            return False
    return True


def _safe_divide(x, r):
    """``x / r``, and 0 where ``r == 0`` (a finite subgradient instead of NaN)."""
    zero = equal(r, 0.0)
    return where(zero, 0.0, x / where(zero, 1.0, r))


# --- arithmetic ---------------------------------------------------------------------------
def _product_pattern(step):
    """x * y: each operand's dependencies meet the other's."""
    a, b = step.broadcast(0), step.broadcast(1)
    if a is not None and b is not None:
        step.add_hessian(gram(a, b))
    return union([a, b])


def _quotient_pattern(step):
    """x / y: linear in x; y interacts with itself and with x."""
    a, b = step.broadcast(0), step.broadcast(1)
    if b is None:
        return a
    if a is not None:
        step.add_hessian(gram(a, b))
    step.add_hessian(gram(b))
    return union([a, b])


def _power_pattern(step):
    """x ** p for a constant p is linear where p == 1 and constant where p == 0."""
    base, p = step.broadcast(0), step.values[1]
    if step.deps[1] is not None or p is UNKNOWN or base is None:
        return elementwise_nonlinear(step)
    p = np.broadcast_to(np.asarray(p), step.out_shape).ravel()
    if np.all(p == 1):
        return base
    keep = select(np.where(p == 0, -1, np.arange(len(p))), len(p))
    curved = select(np.where((p == 0) | (p == 1), -1, np.arange(len(p))), len(p))
    step.add_hessian(gram(binary(curved @ base)))
    return binary(keep @ base)


add = _binary_prim("add", np.add, role=ADD,
                   vjp=[lambda g, a, x, y: g, lambda g, a, x, y: g],
                   linear=True, lowering=Lowering(lambda x, y: x + y), algebra=Algebra(unit=0),
                   doc="``x + y`` elementwise, with numpy broadcasting.")
subtract = _binary_prim("subtract", np.subtract,
                        vjp=[lambda g, a, x, y: g, lambda g, a, x, y: -g],
                        linear=True, lowering=Lowering(lambda x, y: x - y),
                        algebra=Algebra(unit=0, unit_at=(1,)),
                        doc="``x - y`` elementwise, with numpy broadcasting.")
multiply = _binary_prim("multiply", np.multiply,
                        vjp=[lambda g, a, x, y: g * y, lambda g, a, x, y: g * x],
                        jvp=[lambda t, a, x, y: t * y,
                             lambda t, a, x, y: t * x],
                        sparsity=_product_pattern,
                        lowering=Lowering(lambda x, y: x * y), algebra=Algebra(unit=1),
                        doc="``x * y`` elementwise, with numpy broadcasting.")
divide = _binary_prim("divide", np.true_divide,
                      vjp=[lambda g, a, x, y: g / y, lambda g, a, x, y: -g * a / y],
                      jvp=[lambda t, a, x, y: t / y,
                           lambda t, a, x, y: -t * a / y],
                      sparsity=_quotient_pattern,
                      lowering=Lowering(lambda x, y: x / y), algebra=Algebra(unit=1, unit_at=(1,)),
                      doc="``x / y`` elementwise (true division), with numpy broadcasting.")
true_divide = divide
negative = elementwise("negative", np.negative, vjp=[lambda g, a, x: -g], linear=True,
                       lowering=Lowering(lambda x: -x), algebra=Algebra(involution=True),
                       doc="``-x`` elementwise.")
positive = elementwise("positive", np.positive, vjp=[lambda g, a, x: g], linear=True,
                       lowering=Lowering(lambda x: +x))


def _pow_dx(x, y):
    """d(x**y)/dx = y * x**(y-1), exact at y == 0 (no 0 * 0**-1) and cheap for y in {1, 2}."""
    if isinstance(y, Tensor):
        # guard only 0 * 0**-1 (x == y == 0): replacing y - 1 wherever y == 0 made the mixed
        # partial d/dy (y x**(y-1)) there x instead of 1/x (an asymmetric Hessian). Nested
        # where, not logical_and, which the whole-graph compiler does not translate.
        ym1 = y - 1.0
        return y * x ** where(equal(y, 0), where(equal(x, 0), 1.0, ym1), ym1)
    if not isinstance(y, (int, float)):
        y = np.asarray(y)
        if y.ndim:
            return y * x ** np.where(y == 0, 1.0, y - 1.0)
        y = y.item()
    if y == 0:
        return zeros_like(x)
    if y == 1:
        return ones_like(x)
    if y == 2:
        return multiply(2.0, x)
    return multiply(y, power(x, y - 1.0))


def _pow_dy(x, ans):
    # log(x) where x > 0; the derivative in y is 0 where x == 0 (0**y is flat for y > 0).
    safe = where(equal(x, 0), 1.0, x)
    return log(safe) * ans


# --- a constant power as products and a square root (a compiler rewrite) --------------------
def _constant_exponent(sweep, op):
    """The exponent c of ``x ** c`` when it is a constant the rewrite below lowers (a multiple
    of 1/2 with |c| <= 4 on real floats, half-integers up to 2.5; a non-negative integer on
    integers too) and the result has x's type; else None."""
    c = sweep.constant(op.args[1])
    if c is None or np.ndim(c) != 0 or np.asarray(c).dtype.kind not in "biuf" or \
            not sweep.same_type(op.args[0], op.outs[0]):
        return None
    c, kind = float(c), sweep.dtype(op.args[0]).kind
    twice = 2.0 * c
    if not abs(c) <= 4.0 or twice != round(twice) or (twice % 2 and abs(c) > 2.5):  # nan, inf
        return None
    return c if kind == "f" or (kind in "iu" and c >= 0 and twice % 2 == 0) else None


def _products(emit, base, n):
    """``base ** n`` for n in 1..4 by at most two products (rounding twice)."""
    if n == 1:
        return base
    sq = emit(multiply, base, base)
    return sq if n == 2 else emit(multiply, sq, base) if n == 3 else emit(multiply, sq, sq)


def _lowered_power(sweep, op):
    """A compiler rewrite: ``x ** c`` for a constant c of :func:`_constant_exponent` computed by
    products, a reciprocal and a square root instead of pow() (some 20 ns an element): numpy's
    numbers within two ulps (each product rounds), special values included. numpy's own
    ``x ** 0.5`` is sqrt (-0 -> -0, -inf -> nan); other half-integers follow C's pow, where
    ``pow(-0, c)`` is +0 or +inf and ``pow(-inf, c)`` +inf or +0 (sqrt(-inf) is nan)."""
    c = _constant_exponent(sweep, op)
    if c is None:
        return None
    x = op.args[0]
    if c == 1.0:
        return sweep.to(op, x)
    if c == 0.0:
        return sweep.fill(op, 1)  # 0 ** 0 and nan ** 0 are 1 too
    if c == 0.5:
        return [op.replace(prim=sqrt.primitive, args=[x])]
    ops = []

    def emit(fn, *args, dtype=None):
        ops.append(sweep.emit(op, fn.primitive, args, dtype))
        return ops[-1].outs[0]

    # negative powers start from 1/x: x**n may overflow where (1/x)**n is a subnormal result
    n, half = int(abs(c)), c != int(c)
    base = x if c > 0 or n == 0 else emit(reciprocal, x)
    if not half:
        _products(emit, base, n)
    else:
        root = emit(sqrt, x)
        if c > 0:
            y = emit(multiply, _products(emit, base, n), root)
        else:
            y = emit(reciprocal, root) if n == 0 else emit(divide, _products(emit, base, n), root)
        one = sweep.dtype(x).type(1)
        infinite = emit(equal, x, sweep.new_const(-np.inf * one), dtype=np.dtype(bool))
        y = emit(where, infinite, sweep.new_const((np.inf if c > 0 else 0.0) * one), y)
        emit(absolute, y)  # pow(-0, c) is +0 or +inf; a ufunc last gives 0-d results as scalars
    last = ops.pop()
    return ops + [last.replace(outs=op.outs)]


power = _binary_prim("power", np.power,
                     vjp=[lambda g, a, x, y: g * _pow_dx(x, y),
                          lambda g, a, x, y: g * _pow_dy(x, a)],
                     jvp=[lambda t, a, x, y: t * _pow_dx(x, y),
                          lambda t, a, x, y: t * _pow_dy(x, a)],
                     sparsity=_power_pattern,
                     lowering=Lowering(lambda x, y: x ** y, literal=(1,)),
                     rewrites=(_lowered_power,),
                     doc=("``x ** y`` elementwise, with numpy broadcasting (differentiable in "
                          "both)."))


# float_power: numpy's own loop (always float64 or complex128); power's rules apply as is.
float_power = _binary_prim("float_power", np.float_power,
                           vjp=[lambda g, a, x, y: g * _pow_dx(x, y),
                                lambda g, a, x, y: g * _pow_dy(x, a)],
                           jvp=[lambda t, a, x, y: t * _pow_dx(x, y),
                                lambda t, a, x, y: t * _pow_dy(x, a)],
                           sparsity=_power_pattern)


square = elementwise("square", np.square, vjp=[lambda g, a, x: g * (2.0 * x)],
                   jvp=[lambda t, a, x: t * (2.0 * x)], lowering=Lowering(lambda x: x * x),
                   doc="``x * x`` elementwise.")
reciprocal = elementwise("reciprocal", np.reciprocal, vjp=[lambda g, a, x: -g * a * a],
                       jvp=[lambda t, a, x: -t * a * a], lowering=Lowering(lambda x: 1.0 / x))
cbrt = _unary_div("cbrt", np.cbrt, lambda a, x: 3.0 * (a * a))

# floor_divide is piecewise constant; remainder/fmod are x - y * n with n piecewise constant.
floor_divide = _binary_prim("floor_divide", np.floor_divide,
                            vjp=[_zero_vjp, _zero_vjp_second], jvp=[_zero_jvp, _zero_jvp],
                            sparsity=cut)
remainder = _binary_prim(
    "remainder", np.remainder,
    vjp=[lambda g, a, x, y: g, lambda g, a, x, y: -g * floor_divide(x, y)],
    jvp=[lambda t, a, x, y: t, lambda t, a, x, y: -t * floor_divide(x, y)],
    sparsity=piecewise_linear)
mod = remainder


def _fmod_quotient(a, x, y):
    # fmod is exact: x - a is y times an integer, so rounding the quotient recovers it.
    return rint((x - a) / y)


fmod = _binary_prim(
    "fmod", np.fmod,
    vjp=[lambda g, a, x, y: g, lambda g, a, x, y: -g * _fmod_quotient(a, x, y)],
    jvp=[lambda t, a, x, y: t, lambda t, a, x, y: -t * _fmod_quotient(a, x, y)],
    sparsity=piecewise_linear)

# ldexp(x, n) = x * 2**n, exact (no overflowing 2**n is formed): linear in x; n is an integer.
ldexp = _binary_prim(
    "ldexp", np.ldexp,
    vjp=[lambda g, a, x, n: ldexp(g, n), None], jvp=[lambda t, a, x, n: ldexp(t, n), None],
    sparsity=only(0))
frexp_exponent = elementwise("frexp_exponent", lambda x: np.frexp(x)[1], nondiff=True)
frexp_exponent.__doc__ = """The integer exponent ``e`` of ``x = m * 2**e`` with ``0.5 <= |m| <
1`` (numpy.frexp's second result, a constant); the mantissa is ``ldexp(x, -e)``."""

# spacing(x) (the gap to the next float) is piecewise constant; nextafter(x, y) is x plus a
# piecewise constant step, so its derivative is 1 in x and 0 in y.
spacing = _piecewise_constant("spacing", np.spacing)
nextafter = _binary_prim(
    "nextafter", np.nextafter, vjp=[lambda g, a, x, y: g, _zero_vjp_second],
    jvp=[lambda t, a, x, y: broadcast_to(t, shape=shape_of(a)), _zero_jvp], sparsity=only(0))

# --- exponentials and logarithms -----------------------------------------------------------
# numpy's exp, log (SIMD loops on AVX2/AVX-512) and the vectorised tanh, sigmoid and logaddexp
# run several times faster than a loop's libm calls: ``simd``
exp = elementwise("exp", np.exp, vjp=[lambda g, a, x: g * a], jvp=[lambda t, a, x: t * a],
                  lowering=Lowering(lambda x: call(math.exp, x), simd=True),
                  doc="``e ** x`` elementwise.")
exp2 = _unary("exp2", np.exp2, lambda a, x: a * LN2)
log = elementwise("log", np.log, vjp=[lambda g, a, x: g / x], jvp=[lambda t, a, x: t / x],
                  lowering=Lowering(lambda x: call(math.log, x), simd=True),
                  doc="Natural logarithm, elementwise.")
log2 = _unary_div("log2", np.log2, lambda a, x: x * LN2)
log10 = _unary_div("log10", np.log10, lambda a, x: x * LN10)
log1p = elementwise("log1p", np.log1p, vjp=[lambda g, a, x: g / (1.0 + x)],
                  jvp=[lambda t, a, x: t / (1.0 + x)],
                  lowering=Lowering(lambda x: call(math.log1p, x)),
                  doc="``log(1 + x)`` elementwise, accurate for small ``x``.")
expm1 = elementwise("expm1", np.expm1, vjp=[lambda g, a, x: g * (a + 1.0)],
                  jvp=[lambda t, a, x: t * (a + 1.0)],
                  lowering=Lowering(lambda x: call(math.expm1, x)),
                  doc="``exp(x) - 1`` elementwise, accurate for small ``x``.")
sqrt = elementwise("sqrt", np.sqrt, vjp=[lambda g, a, x: g * 0.5 / a],
                 jvp=[lambda t, a, x: t * 0.5 / a],
                 lowering=Lowering(lambda x: call(math.sqrt, x)),
                 doc="Square root, elementwise.")


def _sigmoid(x):
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype in REAL_FLOATS:
        # vectorised for large float64 arrays, else scipy's expit (one pass: ~2x faster)
        return vecmath.sigmoid(x)
    e = np.exp(-np.abs(x))  # never overflows
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


sigmoid = elementwise("sigmoid", _sigmoid, vjp=[lambda g, a, x: g * (a * (1.0 - a))],
                    jvp=[lambda t, a, x: t * (a * (1.0 - a))],
                    lowering=Lowering(lambda x: call(scalar_kernels.sigmoid, x), simd=True,
                                      no_alias=True),
                     doc=("The logistic function ``1 / (1 + exp(-x))``, elementwise (stable "
                          "for large ``|x|``)."))


def _logaddexp_weight(scale, x, y):
    """The partial of logaddexp(x, y) in x: ``e^x / (e^x + e^y) = sigmoid(x - y)`` (the
    difference times ln 2 for logaddexp2). It does not read the answer, so a gradient needs
    no logaddexp at all, and sigmoid never overflows. Where x and y are the same infinity the
    difference is NaN: there the weight is the max subgradient 1/2, as at every tie."""
    d = subtract(x, y) if scale == 1.0 else multiply(subtract(x, y), scale)
    weight = sigmoid(d)
    if _eager_all(np.isfinite, x, y):
        return weight
    # only at equal infinities: a constant 0.5 at every finite tie (x == y) zeroed the second
    # derivative there (1/4), wherever this guarded path ran (graph mode, second order).
    # Nested where, not logical_and: the whole-graph compiler translates where and isinf.
    return where(equal(x, y), where(isinf(x), 0.5, weight), weight)


def _logaddexp_prim(name, forward, scale, **flags):
    return _binary_prim(
        name, forward,
        vjp=[lambda g, a, x, y: g * _logaddexp_weight(scale, x, y),
             lambda g, a, x, y: g * _logaddexp_weight(scale, y, x)],
        jvp=[lambda t, a, x, y: t * _logaddexp_weight(scale, x, y),
             lambda t, a, x, y: t * _logaddexp_weight(scale, y, x)], **flags)


# numpy.logaddexp, vectorised for large float64 arrays (and one array with a float)
logaddexp = _logaddexp_prim(
    "logaddexp", vecmath.logaddexp, 1.0, lowering=Lowering(
        lambda x, y: call(scalar_kernels.logaddexp, x, y), call=vecmath.logaddexp, simd=True),
    doc="``log(exp(x) + exp(y))`` elementwise without overflow, with numpy broadcasting.")
logaddexp2 = _logaddexp_prim("logaddexp2", np.logaddexp2, math.log(2.0))


def softplus(x):
    """log(1 + exp(x)) without overflow; its derivative is sigmoid(x)."""
    return logaddexp(0.0, x)


# --- trigonometric and hyperbolic ----------------------------------------------------------
sin = elementwise("sin", np.sin, vjp=[lambda g, a, x: g * cos(x)],
                jvp=[lambda t, a, x: t * cos(x)], lowering=Lowering(lambda x: call(math.sin, x)),
                doc="Sine, elementwise.")
cos = elementwise("cos", np.cos, vjp=[lambda g, a, x: -g * sin(x)],
                jvp=[lambda t, a, x: -t * sin(x)], lowering=Lowering(lambda x: call(math.cos, x)),
                doc="Cosine, elementwise.")
tan = _unary("tan", np.tan, lambda a, x: 1.0 + a * a,
             lowering=Lowering(lambda x: call(math.tan, x)))
# (1 - x)(1 + x) instead of 1 - x*x: no cancellation near |x| = 1.
arcsin = _unary_div("arcsin", np.arcsin, lambda a, x: sqrt((1.0 - x) * (1.0 + x)))
arccos = _unary_div("arccos", np.arccos, lambda a, x: -sqrt((1.0 - x) * (1.0 + x)))
arctan = _unary_div("arctan", np.arctan, lambda a, x: 1.0 + x * x,
                    lowering=Lowering(lambda x: call(math.atan, x)))
sinh = _unary("sinh", np.sinh, lambda a, x: cosh(x),
              lowering=Lowering(lambda x: call(math.sinh, x)))
cosh = _unary("cosh", np.cosh, lambda a, x: sinh(x),
              lowering=Lowering(lambda x: call(math.cosh, x)))
tanh = elementwise("tanh", vecmath.tanh,  # numpy.tanh, vectorised for large float64 arrays
                 vjp=[lambda g, a, x: g * (1.0 - a * a)],
                 jvp=[lambda t, a, x: t * (1.0 - a * a)],
                 lowering=Lowering(lambda x: call(math.tanh, x), call=vecmath.tanh, simd=True),
                 doc="Hyperbolic tangent, elementwise.")
# hypot(x, 1) = sqrt(1 + x*x) without x*x overflow (real x; hypot has no complex loop)
arcsinh = _unary_div("arcsinh", np.arcsinh,
                     lambda a, x: sqrt(1.0 + x * x) if dtype_of(x).kind == "c" else hypot(x, 1.0))
arccosh = _unary_div("arccosh", np.arccosh, lambda a, x: sqrt(x - 1.0) * sqrt(x + 1.0))
arctanh = _unary_div("arctanh", np.arctanh, lambda a, x: (1.0 - x) * (1.0 + x))

# hypot's partials x / r, y / r; at r == 0 the finite subgradient 0 (not NaN).
hypot = _binary_prim(
    "hypot", np.hypot,
    vjp=[lambda g, a, x, y: g * _safe_divide(x, a), lambda g, a, x, y: g * _safe_divide(y, a)],
    jvp=[lambda t, a, x, y: t * _safe_divide(x, a), lambda t, a, x, y: t * _safe_divide(y, a)])


def _arctan2_partial(numerator, x1, x2):
    # numerator / (x1^2 + x2^2) as (numerator / r) / r with r = hypot: no overflow; 0 at r=0.
    return _safe_divide(_safe_divide(numerator, hypot(x1, x2)), hypot(x1, x2))


arctan2 = _binary_prim(
    "arctan2", np.arctan2,
    vjp=[lambda g, a, x1, x2: g * _arctan2_partial(x2, x1, x2),
         lambda g, a, x1, x2: g * -_arctan2_partial(x1, x1, x2)],
    jvp=[lambda t, a, x1, x2: t * _arctan2_partial(x2, x1, x2),
         lambda t, a, x1, x2: t * -_arctan2_partial(x1, x1, x2)])  # -x1 fails on booleans

# sinc(x) = sin(pi x) / (pi x). Its derivative (cos(pi x) - sinc(x)) / x cancels near 0, so
# there a Taylor polynomial in u = pi x takes over (exact to rounding for |x| < 0.1).
_SINC_SMALL = 0.1
_SINC_DERIV_COEFFS = [(-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(1, 8)]


def _sinc_deriv(a, x):
    small = less(absolute(x), _SINC_SMALL)
    u = PI * where(small, x, 0.0)
    u2 = u * u
    series = _SINC_DERIV_COEFFS[-1]
    for c in reversed(_SINC_DERIV_COEFFS[:-1]):
        series = c + u2 * series
    near = PI * u * series
    x_far = where(small, 1.0, x)
    far = (cos(PI * x_far) - sinc(x_far)) / x_far
    return where(small, near, far)


sinc = _unary("sinc", np.sinc, _sinc_deriv)


# Scalings by numpy's own constants (in float32 numpy rounds 180/pi to float32 first).
deg2rad = elementwise("deg2rad", np.deg2rad, vjp=[lambda g, a, x: deg2rad(g)], linear=True)
rad2deg = elementwise("rad2deg", np.rad2deg, vjp=[lambda g, a, x: rad2deg(g)], linear=True)
radians, degrees = deg2rad, rad2deg

# --- sign, magnitude, piecewise ------------------------------------------------------------
# At a kink the derivative is a subgradient chosen so that smooth compositions differentiate
# right there (docs/kinks.md): |x| has slope +1 at 0 (as in JAX), so that (|x| ** 2)'' = 2 and
# sign(x) ** 2 = 1 hold for the slopes; comparisons are constants.
def _slope(g, x):
    """``g`` times the slope of |x| (-1 below 0, +1 from 0 on), in ``g``'s dtype."""
    return where(less(x, 0.0), negative(g), g)


def _abs_vjp(g, a, x):
    if dtype_of(x).kind == "c":  # |x| is real: d|x| = real(conj(x) dx) / |x|
        return g * _safe_divide(conjugate(x), a)
    return _slope(g, x)


def _abs_jvp(t, a, x):
    if dtype_of(x).kind == "c":
        return _safe_divide(real(conjugate(x) * t), a)
    return _slope(t, x)


def _copysign_slope(g, x, y):
    """``g`` times d copysign(x, y) / dx: +1 where x and y have the same sign (x = 0 counts as
    positive, as for |x|), -1 where they differ."""
    return where(logical_xor(less(x, 0.0), signbit(y)), negative(g), g)


def _abs_pattern(step):
    """|x| is piecewise linear for real x, but curved for complex x (the modulus)."""
    if np.dtype(step.node.inputs[0].dtype).kind == "c":
        return elementwise_nonlinear(step)
    return same(step)


absolute = elementwise("absolute", np.abs, vjp=[_abs_vjp], jvp=[_abs_jvp], sparsity=_abs_pattern,
                       lowering=Lowering(lambda x: call(abs, x)),
                       doc=("``|x|`` elementwise (``hessgrad.abs``); its derivative is -1 below 0, "
                            "+1 from 0 on."))
fabs = elementwise("fabs", np.fabs, vjp=[lambda g, a, x: _slope(g, x)],
                   jvp=[lambda t, a, x: _slope(t, x)], sparsity=same,
                   lowering=Lowering(lambda x: call(abs, x)))
sign = _piecewise_constant("sign", np.sign,
                           lowering=Lowering(lambda x: call(scalar_kernels.sign, x)),
                           doc=("The sign of ``x`` (-1, 0 or 1) elementwise; piecewise constant, "
                                "its derivative is 0."))
copysign = _binary_prim(
    "copysign", np.copysign,
    vjp=[lambda g, a, x, y: _copysign_slope(g, x, y), _zero_vjp_second],
    jvp=[lambda t, a, x, y: _copysign_slope(t, x, y), _zero_jvp], sparsity=only(0))
# heaviside(x1, x2) is 0 / x2 / 1 for x1 < 0 / == 0 / > 0: flat in x1, x2 passes at x1 == 0.
heaviside = _binary_prim(
    "heaviside", np.heaviside,
    vjp=[_zero_vjp, lambda g, a, x, y: where(equal(x, 0.0), g, 0.0)],
    jvp=[_zero_jvp, lambda t, a, x, y: where(equal(x, 0.0), t, 0.0)], sparsity=only(1))

floor = _piecewise_constant("floor", np.floor)
ceil = _piecewise_constant("ceil", np.ceil)
rint = _piecewise_constant("rint", np.rint)
trunc = _piecewise_constant("trunc", np.trunc)
round = _piecewise_constant(  # noqa: A001 - numpy's name
    "round", lambda x, decimals=0: np.round(x, decimals))


def _max_weighted(g, x, y):
    """``g`` where x wins, ``g / 2`` at ties (the symmetric subgradient), 0 elsewhere; built
    from selections, so ``g`` keeps its dtype (float32 stays float32)."""
    return where(greater(x, y), g, where(equal(x, y), 0.5 * g, 0.0))


def _min_weighted(g, x, y):
    return _max_weighted(g, y, x)


def _nan_ignoring(weighted):
    """fmax/fmin ignore a NaN: x gets the gradient where y is NaN, none where only x is."""
    def nan_weighted(g, x, y):
        if _eager_all(lambda v: ~np.isnan(v), x, y):
            return weighted(g, x, y)
        return where(isnan(y), g, where(isnan(x), 0.0, weighted(g, x, y)))
    return nan_weighted


def _extremum_prim(name, forward, weighted, **flags):
    """maximum/minimum/fmax/fmin: the winner takes the gradient; ties split it 1/2-1/2.
    ``weighted(g, x, y)`` is the first input's share of ``g``; the second's swaps x and y."""
    return _binary_prim(name, forward,
                        vjp=[lambda g, a, x, y: weighted(g, x, y),
                             lambda g, a, x, y: weighted(g, y, x)],
                        jvp=[lambda t, a, x, y: weighted(t, x, y),
                             lambda t, a, x, y: weighted(t, y, x)],
                        sparsity=piecewise_linear, **flags)


maximum = _extremum_prim("maximum", np.maximum, _max_weighted, lowering=Lowering(
    lambda x, y: call(scalar_kernels.maximum, x, y)),
    doc=("The larger of ``x`` and ``y`` elementwise; at ties the gradient is split evenly "
         "(docs/kinks.md)."))
minimum = _extremum_prim("minimum", np.minimum, _min_weighted, lowering=Lowering(
    lambda x, y: call(scalar_kernels.minimum, x, y)),
    doc=("The smaller of ``x`` and ``y`` elementwise; at ties the gradient is split evenly "
         "(docs/kinks.md)."))
fmax = _extremum_prim("fmax", np.fmax, _nan_ignoring(_max_weighted))
fmin = _extremum_prim("fmin", np.fmin, _nan_ignoring(_min_weighted))


# clip(x, lo, hi) = minimum(maximum(x, lo), hi): hi is taken where x > hi or lo > hi, lo where
# x < lo (and not hi), x elsewhere (bounds inclusive: the gradient at a bound goes to x).
def _clip_masks(x, lo, hi):
    take_hi = None if hi is None else greater(x, hi)
    if hi is not None and lo is not None:
        take_hi = logical_or(take_hi, greater(lo, hi))
    take_lo = None if lo is None else less(x, lo)
    if take_lo is not None and take_hi is not None:
        take_lo = logical_and(take_lo, logical_not(take_hi))
    outside = take_hi if take_lo is None else take_lo if take_hi is None else \
        logical_or(take_lo, take_hi)
    return outside, take_lo, take_hi


def _clip_forward(x, lo, hi):
    return np.clip(x, lo, hi)


def _clip_grad(k):
    def rule(g, a, x, lo, hi):
        outside, take_lo, take_hi = _clip_masks(x, lo, hi)
        if k == 0:
            return g if outside is None else where(outside, 0.0, g)
        return where(take_lo if k == 1 else take_hi, g, 0.0)
    return rule


clip = elementwise(
    "clip", _checked("clip", _clip_forward, ("a", "a_min", "a_max")),
    vjp=[_clip_grad(k) for k in range(3)], jvp=[_clip_grad(k) for k in range(3)], broadcasts=True,
    sparsity=piecewise_linear,
    shape_rule=broadcasting("clip", _clip_forward, ("a", "a_min", "a_max")))


# --- complex parts (real inputs: real = conj = identity, imag = 0) ------------------------
def _real_vjp(g, a, x):
    return cast(g, dtype=x.dtype) if x.dtype.kind == "c" else g


def _imag_vjp(g, a, x):
    # imag(x) = Im(x): the cotangent of a real output goes to -i g, as real's goes to g
    return g * -1j if x.dtype.kind == "c" else zeros_like(x)


real = elementwise("real", np.real, vjp=[_real_vjp], linear=True)
imag = elementwise("imag", np.imag, vjp=[_imag_vjp], linear=True)
conjugate = elementwise("conjugate", np.conjugate, vjp=[lambda g, a, x: conjugate(g)],
                      linear=True)
conj = conjugate


def _where_vjp_x(g, a, c, x, y):
    return where(c, g, 0.0)


def _where_vjp_y(g, a, c, x, y):
    return where(c, 0.0, g)


_select_pattern = moves(index=lambda k: k == 0)


def _where_pattern(step):
    """A known condition moves elements; one computed from the data picks either branch."""
    if step.values[0] is UNKNOWN:
        return union([step.broadcast(1), step.broadcast(2)])
    return _select_pattern(step)


where = elementwise(
    "where", _checked("where", np.where, ("condition", "x", "y")),
    vjp=[None, _where_vjp_x, _where_vjp_y], linear=True, broadcasts=True, sparsity=_where_pattern,
    shape_rule=broadcasting("where", np.where, ("condition", "x", "y")),
    lowering=Lowering(lambda c, x, y: facts.select(c, x, y), no_alias=True, array_0d=True),
    doc=("``x`` where ``condition`` holds, else ``y``, elementwise with broadcasting; the gradient "
         "flows to the branch taken."))


# --- comparisons, logic and floating-point classes: boolean results are constants ----------
def _nondiff_binary(name, forward, scalar=None, **flags):
    return _binary_prim(name, forward, nondiff=True,
                        lowering=None if scalar is None else Lowering(scalar), **flags)


less = _nondiff_binary("less", np.less, lambda x, y: x < y,
                       doc="``x < y`` elementwise (a boolean result, not differentiated).")
less_equal = _nondiff_binary("less_equal", np.less_equal, lambda x, y: x <= y,
                             doc="``x <= y`` elementwise (a boolean result, not differentiated).")
greater = _nondiff_binary("greater", np.greater, lambda x, y: x > y,
                          doc="``x > y`` elementwise (a boolean result, not differentiated).")
greater_equal = _nondiff_binary("greater_equal", np.greater_equal, lambda x, y: x >= y,
                                doc=("``x >= y`` elementwise (a boolean result, not "
                                     "differentiated)."))
equal = _nondiff_binary("equal", np.equal, lambda x, y: eq(x, y),
                        doc="``x == y`` elementwise (a boolean result, not differentiated).")
not_equal = _nondiff_binary("not_equal", np.not_equal, lambda x, y: ne(x, y),
                            doc="``x != y`` elementwise (a boolean result, not differentiated).")
logical_and = _nondiff_binary("logical_and", np.logical_and)
logical_or = _nondiff_binary("logical_or", np.logical_or)
logical_not = elementwise("logical_not", np.logical_not, nondiff=True,
                          lowering=Lowering(lambda x: not_(x)))
logical_xor = _nondiff_binary("logical_xor", np.logical_xor)
isfinite = elementwise("isfinite", np.isfinite, nondiff=True,
                       lowering=Lowering(lambda x: call(math.isfinite, x)))
isnan = elementwise("isnan", np.isnan, nondiff=True,
                    lowering=Lowering(lambda x: call(math.isnan, x)))
isinf = elementwise("isinf", np.isinf, nondiff=True,
                    lowering=Lowering(lambda x: call(math.isinf, x)))
signbit = elementwise("signbit", np.signbit, nondiff=True)


def is_float(x):
    return dtype_of(x).kind in "fc"


__all__ = [
    # arithmetic
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive", "power",
    "float_power", "square", "reciprocal", "cbrt", "floor_divide", "remainder", "mod", "fmod",
    "ldexp", "frexp_exponent", "spacing", "nextafter",
    # exponentials and logarithms
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "sigmoid", "logaddexp",
    "logaddexp2", "softplus",
    # trigonometric and hyperbolic
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "hypot", "sinc", "deg2rad", "rad2deg", "radians",
    "degrees",
    # sign, magnitude, piecewise
    "absolute", "fabs", "sign", "copysign", "heaviside", "floor", "ceil", "rint", "trunc",
    "round", "maximum", "minimum", "fmax", "fmin", "clip", "where",
    # complex parts
    "real", "imag", "conjugate", "conj",
    # constants for differentiation
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "isfinite", "isnan", "isinf", "signbit",
    "broadcast_to",
]
