"""Special functions (``scipy.special``'s values), each differentiable to any order: its
derivative is written with special functions of this file again.

* Bessel functions: ``i0``, ``i1`` (numpy's ``i0``), ``bessel_i`` (``iv``/``ive``, order ``v``
  a param), ``bessel_j`` (``jv``), ``bessel_y`` (``yv``): the recurrences
  ``I_v' = (I_{v-1} + I_{v+1}) / 2``, ``J_v' = (J_{v-1} - J_{v+1}) / 2`` (same for ``Y``).
* gamma family: ``gammaln``, ``gamma``, ``polygamma`` (order ``n`` a param; ``n = 0`` is the
  digamma function), ``betaln``, ``beta``, ``zeta`` (Hurwitz; derivative in ``q`` only).
* error function family: ``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``erfcinv``, ``ndtr``,
  ``ndtri``, ``log_ndtr`` (its derivative ``phi / Phi`` through ``erfcx`` in the left tail:
  stable at ``x = -1e5``).
* logistic: ``logit``, ``log_expit`` (``expit`` is ``elementwise.sigmoid``).
* information theory: ``xlogy``, ``xlog1py``, ``entr``, ``rel_entr`` (``0 log 0 = 0``; the
  derivative in ``y`` where ``x == 0`` is 0).
* incomplete functions: ``gammainc``, ``gammaincc``, ``betainc``: derivatives in the
  integration limit ``x``; a derivative in a shape parameter (``a``, ``b``) has no closed form
  and raises NotImplementedError naming the argument (never a silently wrong value).
* ``spence``, ``expi``, ``exp1``, ``owens_t`` (both arguments).
"""

import math

import numpy as np
import scipy.special as sc

from ..engine.tensor import shape_of
from .core import broadcast_to
from .families import elementwise
from .elementwise import (absolute, divide, equal, exp, less, log, log1p, sigmoid, sign, sqrt,
                          where)

SQRT_PI = math.sqrt(math.pi)
SQRT_2PI = math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT2 = math.sqrt(2.0)


def _float_result(forward):
    """``forward`` returning at least float (integer inputs are computed in float64)."""
    def f(*values, **params):
        return np.asarray(forward(*values, **params))
    f.__name__ = getattr(forward, "__name__", "forward")
    return f


def _unary(name, forward, deriv, doc):
    """An elementwise op whose derivative is ``deriv(ans, x, **params)`` (hessgrad ops)."""
    op = elementwise(name, _float_result(forward),
                     vjp=[lambda g, a, x, **p: g * deriv(a, x, **p)],
                     jvp=[lambda t, a, x, **p: t * deriv(a, x, **p)])
    op.__doc__ = doc
    return op


def _full(t, ans):
    """A tangent contribution broadcast to the output's shape (a rule of a broadcasting op whose
    derivative does not involve every operand)."""
    shape = shape_of(ans)
    if shape is None or shape_of(t) == shape:
        return t
    return broadcast_to(t, shape=shape)


def _nary(name, forward, partials, doc):
    """A broadcasting elementwise op of several operands; ``partials[k](ans, *xs)`` is its
    derivative in operand ``k`` (a hessgrad expression), or a callable raising
    NotImplementedError where no formula exists."""
    def vjp(k):
        return lambda g, a, *xs: g * partials[k](a, *xs)

    def jvp(k):
        return lambda t, a, *xs: _full(t * partials[k](a, *xs), a)
    op = elementwise(name, _float_result(forward), vjp=[vjp(k) for k in range(len(partials))],
                     jvp=[jvp(k) for k in range(len(partials))], broadcasts=True)
    op.__doc__ = doc
    return op


def no_formula(op, arg, why):
    """A derivative rule for an argument whose derivative has no implemented formula: it raises
    NotImplementedError naming the op and the argument (only called when that argument is
    differentiated)."""
    def rule(*args, **params):
        raise NotImplementedError(
            f"{op}: the derivative in argument '{arg}' is not implemented ({why}); "
            f"differentiate only in the other arguments, or pass '{arg}' as a constant "
            f"(hessgrad.stop_gradient)")
    return rule


# --- Bessel functions ---------------------------------------------------------------------
def _i1_derivative(x):
    zero = equal(x, 0.0)
    return where(zero, 0.5, i0(x) - divide(i1(x), where(zero, 1.0, x)))


def _i0_forward(x):
    return np.i0(x)  # numpy's own values (its Chebyshev fits), the dtype numpy gives


def _i1_forward(x):
    x = np.asarray(x)
    return sc.i1(x).astype(np.result_type(x.dtype, np.float16), copy=False)


i0 = elementwise("i0", _i0_forward, vjp=[lambda g, a, x: g * i1(x)],
                 jvp=[lambda t, a, x: t * i1(x)])
i0.__doc__ = """Modified Bessel function of the first kind, order 0 (numpy.i0's values)."""
i1 = elementwise("i1", _i1_forward, vjp=[lambda g, a, x: g * _i1_derivative(x)],
                 jvp=[lambda t, a, x: t * _i1_derivative(x)])
i1.__doc__ = """Modified Bessel function of the first kind, order 1 (scipy.special.i1)."""


def _bessel_i_forward(x, v=0.0, scaled=False):
    if v == 0:
        return (sc.i0e if scaled else sc.i0)(x)
    if v == 1:
        return (sc.i1e if scaled else sc.i1)(x)
    return (sc.ive if scaled else sc.iv)(v, x)


def _bessel_i_deriv(a, x, v=0.0, scaled=False):
    d = 0.5 * (bessel_i(x, v=v - 1, scaled=scaled) + bessel_i(x, v=v + 1, scaled=scaled))
    return d - sign(x) * a if scaled else d


bessel_i = _unary("bessel_i", _bessel_i_forward, _bessel_i_deriv,
                  """Modified Bessel function of the first kind of real order ``v`` (a param):
``iv(v, x)``, or ``ive(v, x) = iv(v, x) exp(-|x|)`` with ``scaled=True`` (``i0``, ``i1``,
``i0e``, ``i1e`` for orders 0 and 1); derivative ``(I_{v-1} + I_{v+1}) / 2``.""")


def _bessel_j_forward(x, v=0.0):
    return sc.j0(x) if v == 0 else sc.j1(x) if v == 1 else sc.jv(v, x)


def _bessel_y_forward(x, v=0.0):
    if v == 0:
        return sc.y0(x)
    if v == 1:
        return sc.y1(x)
    if float(v).is_integer():
        return sc.yn(int(v), x)
    return sc.yv(v, x)


bessel_j = _unary("bessel_j", _bessel_j_forward,
                  lambda a, x, v=0.0: 0.5 * (bessel_j(x, v=v - 1) - bessel_j(x, v=v + 1)),
                  """Bessel function of the first kind of real order ``v`` (a param): ``jv``
(``j0``, ``j1`` for orders 0 and 1); derivative ``(J_{v-1} - J_{v+1}) / 2``.""")
bessel_y = _unary("bessel_y", _bessel_y_forward,
                  lambda a, x, v=0.0: 0.5 * (bessel_y(x, v=v - 1) - bessel_y(x, v=v + 1)),
                  """Bessel function of the second kind of real order ``v`` (a param): ``yv``
(``y0``, ``y1``, ``yn`` for integer orders); derivative ``(Y_{v-1} - Y_{v+1}) / 2``.""")


# --- gamma family -------------------------------------------------------------------------
def _polygamma_forward(x, n=0):
    return sc.psi(x) if n == 0 else sc.polygamma(n, x)


polygamma = _unary("polygamma", _polygamma_forward,
                   lambda a, x, n=0: polygamma(x, n=n + 1),
                   """The polygamma function of order ``n`` (a param; ``n = 0``: digamma,
``scipy.special.psi``); derivative the order ``n + 1``.""")
gammaln = _unary("gammaln", sc.gammaln, lambda a, x: polygamma(x, n=0),
                 """log|Gamma(x)| (scipy.special.gammaln); derivative digamma(x).""")
gamma = _unary("gamma", sc.gamma, lambda a, x: a * polygamma(x, n=0),
               """The gamma function (scipy.special.gamma); derivative gamma(x) digamma(x).""")


def _digamma_difference(a, b):
    return polygamma(a, n=0) - polygamma(a + b, n=0)


betaln = _nary("betaln", sc.betaln, [lambda ans, a, b: _digamma_difference(a, b),
                                     lambda ans, a, b: _digamma_difference(b, a)],
               """log|B(a, b)| (scipy.special.betaln, exact where gammaln's sum would
cancel); derivatives ``psi(a) - psi(a + b)`` and ``psi(b) - psi(a + b)``.""")
beta = _nary("beta", sc.beta, [lambda ans, a, b: ans * _digamma_difference(a, b),
                               lambda ans, a, b: ans * _digamma_difference(b, a)],
             """The beta function B(a, b) (scipy.special.beta).""")
zeta = _nary("zeta", sc.zeta,
             [no_formula("zeta", "x", "no closed form of d/dx zeta(x, q)"),
              lambda ans, x, q: -x * zeta(x + 1.0, q)],
             """The Hurwitz zeta function zeta(x, q) (scipy.special.zeta; q = 1 is Riemann's);
derivative in q ``-x zeta(x + 1, q)``, none in x (NotImplementedError).""")


# --- error function family ----------------------------------------------------------------
def _erf_derivative(x):
    return exp(-(x * x)) * (2.0 / SQRT_PI)


erf = elementwise("erf", sc.erf, vjp=[lambda g, a, x: g * _erf_derivative(x)],
                  jvp=[lambda t, a, x: t * _erf_derivative(x)])
erf.__doc__ = """The error function ``2 / sqrt(pi)`` times the integral of ``exp(-t^2)`` from 0
to ``x`` (scipy.special.erf; complex too)."""
erfc = _unary("erfc", sc.erfc, lambda a, x: -_erf_derivative(x),
              """``1 - erf(x)`` without cancellation (scipy.special.erfc).""")
# erfcx(x) ~ 1 / (x sqrt(pi)) sum_n (-1)^n (2n-1)!! / (2 x^2)^n: its derivative term by term,
# used from x = 50 on where ``2 x erfcx(x) - 2 / sqrt(pi)`` cancels (relative error about
# 1e-16 x^2 otherwise; the series' first omitted term there is below 1e-25).
_ERFCX_ASYMPTOTIC = [(-1) ** n * math.prod(range(1, 2 * n, 2)) / 2 ** n for n in range(9)]
_ERFCX_LARGE = 50.0


def _erfcx_deriv(a, x):
    large = less(_ERFCX_LARGE, x)
    xl = where(large, x, _ERFCX_LARGE)
    r = 1.0 / (xl * xl)
    series = -(2 * 8 + 1) * _ERFCX_ASYMPTOTIC[8]
    for n in range(7, -1, -1):
        series = -(2 * n + 1) * _ERFCX_ASYMPTOTIC[n] + r * series
    xs = where(large, 0.0, x)
    return where(large, series * r * (1.0 / SQRT_PI), 2.0 * xs * erfcx(xs) - 2.0 / SQRT_PI)


erfcx = _unary("erfcx", sc.erfcx, _erfcx_deriv,
               """The scaled complementary error function ``exp(x^2) erfc(x)``
(scipy.special.erfcx); derivative ``2 x erfcx(x) - 2 / sqrt(pi)``.""")
erfinv = _unary("erfinv", sc.erfinv, lambda a, x: (0.5 * SQRT_PI) * exp(a * a),
                """The inverse of erf on (-1, 1) (scipy.special.erfinv).""")
erfcinv = _unary("erfcinv", sc.erfcinv, lambda a, x: (-0.5 * SQRT_PI) * exp(a * a),
                 """The inverse of erfc on (0, 2) (scipy.special.erfcinv).""")


def _normal_density(x):
    return exp(-0.5 * (x * x)) * (1.0 / SQRT_2PI)


ndtr = _unary("ndtr", sc.ndtr, lambda a, x: _normal_density(x),
              """The standard normal CDF (scipy.special.ndtr); derivative the density.""")
ndtri = _unary("ndtri", sc.ndtri, lambda a, x: SQRT_2PI * exp(0.5 * (a * a)),
               """The standard normal quantile (scipy.special.ndtri).""")


def mills_inverse(x):
    """``phi(x) / Phi(x)``, the derivative of ``log_ndtr``: ``sqrt(2 / pi) / erfcx(-x /
    sqrt(2))`` for ``x < 0`` (no underflow however far in the tail), ``exp(-x^2 / 2 -
    log_ndtr(x)) / sqrt(2 pi)`` from 0 on. Each branch sees only its own half of the line
    (no NaN enters a derivative through the branch not taken)."""
    left = less(x, 0.0)
    xl = where(left, x, 0.0)
    xr = where(left, 0.0, x)
    tail = SQRT_2_OVER_PI / erfcx(xl * (-1.0 / SQRT2))
    body = exp(-0.5 * (xr * xr) - log_ndtr(xr)) * (1.0 / SQRT_2PI)
    return where(left, tail, body)


log_ndtr = _unary("log_ndtr", sc.log_ndtr, lambda a, x: mills_inverse(x),
                  """log of the standard normal CDF (scipy.special.log_ndtr), stable in both
tails; derivative ``phi(x) / Phi(x)`` (see :func:`mills_inverse`).""")


# --- logistic -----------------------------------------------------------------------------
logit = _unary("logit", sc.logit, lambda a, x: 1.0 / (x * (1.0 - x)),
               """``log(p / (1 - p))`` (scipy.special.logit).""")
log_expit = _unary("log_expit", sc.log_expit, lambda a, x: sigmoid(-x),
                   """``log(expit(x))`` without overflow (scipy.special.log_expit); derivative
``expit(-x)``.""")


# --- information theory -------------------------------------------------------------------
def _y_where_x_zero(x, y, fill):
    """``y``, replaced by ``fill`` where ``x == 0`` and ``y`` is singular (``== fill_at``)."""
    return where(equal(x, 0.0), where(equal(y, fill[0]), fill[1], y), y)


xlogy = _nary("xlogy", sc.xlogy,
              [lambda ans, x, y: log(y),
               lambda ans, x, y: x / _y_where_x_zero(x, y, (0.0, 1.0))],
              """``x log(y)``, 0 where ``x == 0`` (scipy.special.xlogy); derivatives ``log(y)``
and ``x / y`` (0 where ``x == 0``, also at ``y == 0``).""")
xlog1py = _nary("xlog1py", sc.xlog1py,
                [lambda ans, x, y: log1p(y),
                 lambda ans, x, y: x / (1.0 + _y_where_x_zero(x, y, (-1.0, 0.0)))],
                """``x log1p(y)``, 0 where ``x == 0`` (scipy.special.xlog1py).""")
entr = _unary("entr", sc.entr, lambda a, x: -(log(x) + 1.0),
              """``-x log(x)`` (0 at 0, ``-inf`` below; scipy.special.entr); derivative
``-(log(x) + 1)``.""")
rel_entr = _nary("rel_entr", sc.rel_entr,
                 [lambda ans, x, y: log(x) - log(y) + 1.0,
                  lambda ans, x, y: -x / _y_where_x_zero(x, y, (0.0, 1.0))],
                 """``x log(x / y)`` (0 at ``x == 0``, ``y >= 0``; inf outside the domain;
scipy.special.rel_entr).""")


# --- incomplete gamma and beta ------------------------------------------------------------
def _gammainc_dx(a, x):
    return exp(xlogy(a - 1.0, x) - x - gammaln(a))


_NO_SHAPE = "no closed form of the derivative in a shape parameter of an incomplete function"
gammainc = _nary("gammainc", sc.gammainc,
                 [no_formula("gammainc", "a", _NO_SHAPE),
                  lambda ans, a, x: _gammainc_dx(a, x)],
                 """The regularized lower incomplete gamma function P(a, x)
(scipy.special.gammainc); derivative in x ``x^(a-1) e^-x / Gamma(a)``; none in a.""")
gammaincc = _nary("gammaincc", sc.gammaincc,
                  [no_formula("gammaincc", "a", _NO_SHAPE),
                   lambda ans, a, x: -_gammainc_dx(a, x)],
                  """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
(scipy.special.gammaincc); derivative in x only.""")
betainc = _nary("betainc", sc.betainc,
                [no_formula("betainc", "a", _NO_SHAPE), no_formula("betainc", "b", _NO_SHAPE),
                 lambda ans, a, b, x: exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x)
                                          - betaln(a, b))],
                """The regularized incomplete beta function I_x(a, b) (scipy.special.betainc);
derivative in x ``x^(a-1) (1-x)^(b-1) / B(a, b)``; none in a, b.""")


gammaincinv = _nary("gammaincinv", sc.gammaincinv,
                    [no_formula("gammaincinv", "a", _NO_SHAPE),
                     lambda ans, a, q: exp(-(xlogy(a - 1.0, ans) - ans - gammaln(a)))],
                    """The inverse in x of gammainc(a, x) (scipy.special.gammaincinv);
derivative in q ``1 / (d/dx gammainc)`` at the answer; none in a.""")
betaincinv = _nary("betaincinv", sc.betaincinv,
                   [no_formula("betaincinv", "a", _NO_SHAPE),
                    no_formula("betaincinv", "b", _NO_SHAPE),
                    lambda ans, a, b, q: exp(-(xlogy(a - 1.0, ans) + xlog1py(b - 1.0, -ans)
                                               - betaln(a, b)))],
                   """The inverse in x of betainc(a, b, x) (scipy.special.betaincinv);
derivative in q only.""")
poch = _nary("poch", sc.poch,
             [lambda ans, a, m: ans * (polygamma(a + m, n=0) - polygamma(a, n=0)),
              lambda ans, a, m: ans * polygamma(a + m, n=0)],
             """The Pochhammer symbol Gamma(a + m) / Gamma(a) (scipy.special.poch).""")


def student_t_log_density(t, df):
    """The log density of Student's t with ``df`` degrees of freedom at ``t`` (SciPy's
    formula: ``log poch(df/2, 1/2) - log(df pi) / 2 - (df + 1) / 2 log1p(t^2 / df)``)."""
    return (log(poch(0.5 * df, 0.5)) - 0.5 * (log(df) + math.log(math.pi))
            - (df + 1.0) / 2.0 * log1p(t * t / df))


stdtr = _nary("stdtr", sc.stdtr,
              [no_formula("stdtr", "df", "no closed form of the derivative of Student's t CDF "
                          "in its degrees of freedom"),
               lambda ans, df, t: exp(student_t_log_density(t, df))],
              """Student's t CDF (scipy.special.stdtr); derivative in t the density; none in
df.""")
stdtrit = _nary("stdtrit", sc.stdtrit,
                [no_formula("stdtrit", "df", "no closed form of the derivative of Student's t "
                            "quantile in its degrees of freedom"),
                 lambda ans, df, q: exp(-student_t_log_density(ans, df))],
                """Student's t quantile (scipy.special.stdtrit); derivative in q only.""")


# --- integrals ------------------------------------------------------------------------------
_SPENCE_SERIES = [(-1) ** k / (k + 1) for k in range(12)]  # log1p(u) / u = sum (-u)^k / (k+1)


def _spence_deriv(a, x):
    """``log(x) / (1 - x)``: a series in ``u = x - 1`` near 1 (``-log1p(u) / u``)."""
    u = x - 1.0
    near = less(absolute(u), 0.05)
    un = where(near, u, 0.0)
    series = _SPENCE_SERIES[-1]
    for c in reversed(_SPENCE_SERIES[:-1]):
        series = c + un * series
    uf = where(near, 1.0, u)
    return where(near, -series, -log1p(uf) / uf)


spence = _unary("spence", sc.spence, _spence_deriv,
                """The dilogarithm ``spence(x) = integral from 1 to x of log(t) / (1 - t)``
(scipy.special.spence), for x >= 0.""")
expi = _unary("expi", sc.expi, lambda a, x: exp(x) / x,
              """The exponential integral Ei(x) (scipy.special.expi); derivative e^x / x.""")
exp1 = _unary("exp1", sc.exp1, lambda a, x: -exp(-x) / x,
              """The exponential integral E1(x) (scipy.special.exp1); derivative -e^-x / x.""")
owens_t = _nary("owens_t", sc.owens_t,
                [lambda ans, h, a: -0.5 * _normal_density(h) * erf(a * h * (1.0 / SQRT2)),
                 lambda ans, h, a: exp(-0.5 * (h * h) * (1.0 + a * a))
                 / ((2.0 * math.pi) * (1.0 + a * a))],
                """Owen's T function T(h, a) (scipy.special.owens_t), differentiable in both.""")

__all__ = ["i0", "i1", "bessel_i", "bessel_j", "bessel_y", "polygamma", "gammaln", "gamma",
           "betaln", "beta", "zeta", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr",
           "ndtri", "log_ndtr", "mills_inverse", "logit", "log_expit", "xlogy", "xlog1py",
           "entr", "rel_entr", "gammainc", "gammaincc", "betainc", "spence", "expi", "exp1",
           "owens_t", "no_formula", "gammaincinv", "betaincinv", "poch",
           "student_t_log_density", "stdtr", "stdtrit"]
