"""``hessgrad.scipy.special``: ``scipy.special``'s functions, differentiable to any order
(forward and reverse), with SciPy's values.

>>> import hessgrad as hg
>>> import hessgrad.scipy.special as hsp
>>> round(float(hsp.gammaln(4.0)), 12)   # log(3!)
1.791759469228
>>> round(float(hg.grad(hsp.gammaln)(4.0)), 12)  # digamma(4)
1.256117668432
>>> float(hsp.log_ndtr(-40.0))
-804.6084420137539

Each function is a primitive of :mod:`hessgrad.ops.special` (its derivative written with
special functions again, so Hessians are exact) or a composite of primitives. Orders of Bessel
and polygamma functions (``n``, ``v``) and the dimension of ``multigammaln`` are static
integers or floats (no derivative in them). Where no formula for a derivative exists (the shape
parameters of ``gammainc``, ``gammaincc``, ``betainc``; the first argument of ``zeta``)
differentiating in that argument raises NotImplementedError naming it.

Conventions at the edges follow SciPy's: ``xlogy(0, y) = 0`` (also at ``y = 0``), and its
derivative in ``y`` is 0 where ``x == 0``; the derivative in ``x`` is ``log(y)`` (``-inf`` at
``y == 0``, as the function is). ``log_ndtr``, ``log_expit``, ``logsumexp`` and their
derivatives are stable far in the tails (``x = -1e5``, ``+-800``, weights ``+-1e300``).
"""

import math

import numpy as np

from .. import numpy as hnp
from ..engine.tensor import Tensor
from ..ops import elementwise as ew, reduction as red, special as sp
from ..ops.core import stop_gradient


def _in(x):
    return hnp.asarray(x) if isinstance(x, (list, tuple)) else x


def _known(x):
    """``x``'s value when it is known (arrays, eager tensors; through the public
    ``Tensor.numpy``), None for a symbolic tensor."""
    if isinstance(x, Tensor):
        try:
            return x.numpy()
        except TypeError:
            return None
    return np.asarray(x)


def _static(fname, value, what, integer=False):
    """A static order (``n``, ``v``, ``d``): a Python number or numpy value (an integer
    tensor's value is taken: integers get no derivative; a float tensor is refused, since
    taking its value would silently drop a derivative in the order)."""
    if isinstance(value, Tensor) and np.dtype(value.dtype).kind in "fc":
        # a float tensor could be differentiated: its value alone would drop the derivative
        raise NotImplementedError(
            f"hessgrad.scipy.special.{fname}: the derivative in the order '{what}' is not "
            f"implemented; pass '{what}' as a Python number or a numpy value (the function "
            f"is differentiable in its other arguments)")
    arr = _known(value)
    if arr is None:
        raise TypeError(f"hessgrad.scipy.special.{fname}: argument '{what}' must be known "
                        f"while a function is traced (an order, not differentiated)")
    if arr.ndim:
        raise ValueError(f"hessgrad.scipy.special.{fname}: argument '{what}' must be a "
                         f"scalar (one order per call), got shape {arr.shape}")
    if integer:
        if arr.dtype.kind == "f" and not float(arr).is_integer():
            raise ValueError(f"hessgrad.scipy.special.{fname}: argument '{what}' must be an "
                             f"integer, got {float(arr)}")
        return int(arr)
    return float(arr)


# --- gamma family -------------------------------------------------------------------------
def gammaln(x):
    """log|Gamma(x)|; derivative digamma(x)."""
    return sp.gammaln(_in(x))


def gamma(x):
    """The gamma function; derivative ``gamma(x) digamma(x)``."""
    return sp.gamma(_in(x))


def digamma(x):
    """The digamma function psi = Gamma' / Gamma; derivative ``polygamma(1, x)``."""
    return sp.polygamma(_in(x), n=0)


psi = digamma


def polygamma(n, x):
    """The ``n``-th derivative of digamma (``n`` static integers >= 0: a number, or an array
    broadcast against ``x`` as SciPy does, one primitive per distinct order)."""
    orders = None if isinstance(n, Tensor) else _known(n)
    if orders is None or orders.ndim == 0:
        n = _static("polygamma", n, "n", integer=True)
        if n < 0:
            raise ValueError(f"hessgrad.scipy.special.polygamma: n must be >= 0, got {n}")
        return sp.polygamma(_in(x), n=n)
    if np.any(orders != np.floor(orders)) or np.any(orders < 0):
        raise ValueError(f"hessgrad.scipy.special.polygamma: n must be integers >= 0, got "
                         f"{orders}")
    x, out = _in(x), np.nan
    for order in (np.unique(orders) if orders.size else [0]):
        out = hnp.where(orders == order, sp.polygamma(x, n=int(order)), out)
    return out


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d`` (static):
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - (j - 1) / 2)``.

    Raises:
        ValueError: some ``a <= (d - 1) / 2`` (known values), as SciPy.
    """
    d = _static("multigammaln", d, "d", integer=True)
    a = _in(a)
    value = _known(a)
    if value is not None and np.any(value <= 0.5 * (d - 1)):
        raise ValueError(f"condition a ({value}) > 0.5 * (d-1) ({0.5 * (d - 1)}) not met")
    res = (d * (d - 1) * 0.25) * math.log(math.pi)
    terms = [sp.gammaln(a - (j - 1.0) / 2) for j in range(1, d + 1)]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return res + total


def beta(a, b):
    """The beta function B(a, b)."""
    return sp.beta(_in(a), _in(b))


def betaln(a, b):
    """log|B(a, b)| (SciPy's values: no cancellation of large gammaln terms)."""
    return sp.betaln(_in(a), _in(b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b); differentiable in ``x`` (derivative
    in ``a`` or ``b``: NotImplementedError)."""
    return sp.betainc(_in(a), _in(b), _in(x))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x); differentiable in ``x``
    (derivative in ``a``: NotImplementedError)."""
    return sp.gammainc(_in(a), _in(x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x); differentiable in ``x``
    (derivative in ``a``: NotImplementedError)."""
    return sp.gammaincc(_in(a), _in(x))


def zeta(x, q=None):
    """The Hurwitz zeta function (Riemann's for ``q=None``); differentiable in ``q`` only
    (derivative in ``x``: NotImplementedError)."""
    if q is None:
        return sp.zeta(_in(x), 1.0)
    return sp.zeta(_in(x), _in(q))


# --- error function family ----------------------------------------------------------------
def erf(z):
    """The error function (complex too)."""
    return sp.erf(_in(z))


def erfc(x):
    """``1 - erf(x)`` without cancellation."""
    return sp.erfc(_in(x))


def erfcx(x):
    """The scaled complementary error function ``exp(x^2) erfc(x)``."""
    return sp.erfcx(_in(x))


def erfinv(y):
    """The inverse error function on (-1, 1)."""
    return sp.erfinv(_in(y))


def erfcinv(y):
    """The inverse complementary error function on (0, 2)."""
    return sp.erfcinv(_in(y))


def ndtr(x):
    """The standard normal CDF."""
    return sp.ndtr(_in(x))


def ndtri(y):
    """The standard normal quantile function."""
    return sp.ndtri(_in(y))


def log_ndtr(x):
    """log of the standard normal CDF, stable in both tails (values and derivatives)."""
    return sp.log_ndtr(_in(x))


# --- logistic -----------------------------------------------------------------------------
def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (no overflow at +-800)."""
    return ew.sigmoid(_in(x))


def logit(p):
    """``log(p / (1 - p))``."""
    return sp.logit(_in(p))


def log_expit(x):
    """``log(expit(x))`` without overflow; derivative ``expit(-x)``."""
    return sp.log_expit(_in(x))


# --- log-sum-exp and softmax --------------------------------------------------------------
def _axis_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def _shape(x):
    return tuple(x.shape) if isinstance(x, Tensor) else np.shape(x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow (scipy.special.logsumexp).

    With weights ``b`` the terms are ``sign(b) exp(a + log|b| - m)`` with ``m`` the largest
    ``a + log|b|`` (a constant shift), so weights as large as ``+-1e300`` neither overflow nor
    cancel early; where ``b == 0`` the term is ``b exp(a - m)``, whose derivative in ``b``
    (``exp(a - m)``, capped at ``exp(700)``) is kept.

    Args:
        a: array or tensor.
        axis: int, tuple of ints or None (all axes).
        b: weights broadcastable against ``a`` (may be negative or zero), or None.
        keepdims: keep the reduced axes with length 1.
        return_sign: also return the sign of the sum (a constant); the result is then
            ``log|sum|``.
    Returns:
        The tensor ``log|sum(b exp(a))|`` (and its sign with ``return_sign``).
    Raises:
        ValueError: the sum is negative and ``return_sign`` is False (the result would be
            NaN; known values only).
    """
    a = _in(a)
    if b is None:
        out = red.logsumexp(a, axis=axis, keepdims=keepdims)
        if return_sign:
            return out, hnp.where(ew.isinf(out) & (out < 0), 0.0, 1.0)
        return out
    b = _in(b)
    shape = np.broadcast_shapes(_shape(a), _shape(b))
    a_b = a if _shape(a) == shape else ew.broadcast_to(a, shape=shape)
    b_b = b if _shape(b) == shape else ew.broadcast_to(b, shape=shape)
    zero = ew.equal(b_b, 0.0)
    b_safe = ew.where(zero, 1.0, b_b)
    shifted = ew.where(zero, -np.inf, a_b + ew.log(ew.absolute(b_safe)))
    m = red.max(stop_gradient(shifted), axis=axis, keepdims=True)
    m = ew.where(ew.isfinite(m), m, 0.0)
    nonzero_term = ew.sign(b_safe) * ew.exp(ew.where(zero, -np.inf, shifted - m))
    zero_term = b_b * ew.exp(ew.minimum(ew.where(zero, a_b - m, -np.inf), 700.0))
    s = red.sum(ew.where(zero, zero_term, nonzero_term), axis=axis, keepdims=True)
    sgn = ew.sign(stop_gradient(s))
    out = ew.log(ew.absolute(s)) + m
    if not keepdims:
        axes = _axis_tuple(axis, len(shape))
        out = hnp.squeeze(out, axis=axes)
        sgn = hnp.squeeze(sgn, axis=axes)
    if return_sign:
        return out, sgn
    value = _known(sgn)
    if value is not None and np.any(value < 0):
        out = ew.where(sgn < 0, np.nan, out)  # SciPy's value for a negative sum
    return out


def softmax(x, axis=None):
    """``exp(x - logsumexp(x, axis, keepdims=True))``."""
    x = _in(x)
    return ew.exp(x - red.logsumexp(x, axis=axis, keepdims=True))


def log_softmax(x, axis=None):
    """``x - logsumexp(x, axis, keepdims=True)``."""
    x = _in(x)
    return x - red.logsumexp(x, axis=axis, keepdims=True)


# --- information theory -------------------------------------------------------------------
def xlogy(x, y):
    """``x log(y)``, 0 where ``x == 0``."""
    return sp.xlogy(_in(x), _in(y))


def xlog1py(x, y):
    """``x log1p(y)``, 0 where ``x == 0``."""
    return sp.xlog1py(_in(x), _in(y))


def entr(x):
    """``-x log(x)`` (0 at 0, ``-inf`` for x < 0)."""
    return sp.entr(_in(x))


def rel_entr(x, y):
    """``x log(x / y)`` (0 at ``x == 0, y >= 0``; inf outside the domain)."""
    return sp.rel_entr(_in(x), _in(y))


def kl_div(x, y):
    """``x log(x / y) - x + y`` (``y`` at ``x == 0``; inf outside the domain)."""
    x, y = _in(x), _in(y)
    return sp.rel_entr(x, y) - x + y


# --- Bessel functions ---------------------------------------------------------------------
def iv(v, z):
    """Modified Bessel function of the first kind of real order ``v`` (static)."""
    return sp.bessel_i(_in(z), v=_static("iv", v, "v"))


def ive(v, z):
    """``iv(v, z) exp(-|z|)`` (no overflow for large ``z``)."""
    return sp.bessel_i(_in(z), v=_static("ive", v, "v"), scaled=True)


def i0(x):
    """Modified Bessel function of the first kind, order 0."""
    return sp.bessel_i(_in(x), v=0.0)


def i0e(x):
    """``i0(x) exp(-|x|)``."""
    return sp.bessel_i(_in(x), v=0.0, scaled=True)


def i1(x):
    """Modified Bessel function of the first kind, order 1."""
    return sp.bessel_i(_in(x), v=1.0)


def i1e(x):
    """``i1(x) exp(-|x|)``."""
    return sp.bessel_i(_in(x), v=1.0, scaled=True)


def jv(v, z):
    """Bessel function of the first kind of real order ``v`` (static)."""
    return sp.bessel_j(_in(z), v=_static("jv", v, "v"))


def jn(n, x):
    """Bessel function of the first kind of integer order ``n`` (static)."""
    return sp.bessel_j(_in(x), v=float(_static("jn", n, "n", integer=True)))


def j0(x):
    """Bessel function of the first kind, order 0."""
    return sp.bessel_j(_in(x), v=0.0)


def j1(x):
    """Bessel function of the first kind, order 1."""
    return sp.bessel_j(_in(x), v=1.0)


def yv(v, z):
    """Bessel function of the second kind of real order ``v`` (static)."""
    return sp.bessel_y(_in(z), v=_static("yv", v, "v"))


def yn(n, x):
    """Bessel function of the second kind of integer order ``n`` (static)."""
    return sp.bessel_y(_in(x), v=float(_static("yn", n, "n", integer=True)))


def y0(x):
    """Bessel function of the second kind, order 0."""
    return sp.bessel_y(_in(x), v=0.0)


def y1(x):
    """Bessel function of the second kind, order 1."""
    return sp.bessel_y(_in(x), v=1.0)


# --- others -------------------------------------------------------------------------------
def sinc(x):
    """``sin(pi x) / (pi x)`` (1 at 0; scipy.special.sinc is numpy's)."""
    return ew.sinc(_in(x))


def spence(z):
    """The dilogarithm (SciPy's convention), for z >= 0."""
    return sp.spence(_in(z))


def expi(x):
    """The exponential integral Ei(x)."""
    return sp.expi(_in(x))


def exp1(z):
    """The exponential integral E1(z)."""
    return sp.exp1(_in(z))


def owens_t(h, a):
    """Owen's T function, differentiable in ``h`` and ``a``."""
    return sp.owens_t(_in(h), _in(a))


__all__ = [
    "gammaln", "gamma", "digamma", "psi", "polygamma", "multigammaln", "beta", "betaln",
    "betainc", "gammainc", "gammaincc", "zeta", "erf", "erfc", "erfcx", "erfinv", "erfcinv",
    "ndtr", "ndtri", "log_ndtr", "expit", "logit", "log_expit", "logsumexp", "softmax",
    "log_softmax", "xlogy", "xlog1py", "entr", "rel_entr", "kl_div", "iv", "ive", "i0", "i0e",
    "i1", "i1e", "jv", "jn", "j0", "j1", "yv", "yn", "y0", "y1", "sinc", "spence", "expi",
    "exp1", "owens_t",
]
