"""numpy's legacy polynomial functions on coefficient arrays (highest power first): roots, poly,
polyadd, polysub, polymul, polydiv, polyder, polyint, polyval, polyfit.

Every result is differentiable in the coefficients (and roots) to any order: roots are the
eigenvalues of the companion matrix, products are convolutions, division is numpy's long
division written with hessgrad ops.

numpy strips leading (``roots``: also trailing) zero coefficients, which decides the length
of the result from the values: those functions need concrete coefficients, and say so while
tracing; ``strip_zeros=False`` / ``trim_leading_zeros=False`` (jax.numpy's keywords) keep the
zeros and trace. ``numpy.poly1d`` objects are not accepted (pass their ``.coeffs``).

>>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
>>> hnp.polymul([1.0, 2.0], [1.0, -2.0]).tolist()
[1.0, 0.0, -4.0]
>>> # the root 2 of x^2 - 3x + 2 moves by -(4, 2, 1) / p'(2) per unit change of p
>>> hg.grad(lambda p: hnp.max(hnp.roots(p)))(np.array([1.0, -3.0, 2.0]))
array([-4., -2., -1.])
"""

import warnings

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, linalg as _la, reduction as _red, \
    shape as _sh
from . import linalg as _linalg
from ._arguments import _array, _as_tensor, _cast, _concrete, _const, _dtype, _symbolic, \
    _value
from ._signal_processing import convolve


def _coeffs(fname, p, what):
    """``p`` as a 1-D-or-more tensor (numpy's ``atleast_1d``); poly1d refused."""
    if isinstance(p, _np.poly1d):
        raise TypeError(f"{fname}: numpy.poly1d objects are not supported for argument "
                        f"'{what}'; pass its coefficient array (.coeffs)")
    p = _as_tensor(_array(fname, p, what))
    return _core.reshape(p, shape=(1,)) if len(p.shape) == 0 else p


def _vector(fname, p, what):
    p = _coeffs(fname, p, what)
    if len(p.shape) != 1:
        raise ValueError(f"{fname}: argument '{what}' must be a 1-D sequence of coefficients, "
                         f"got shape {tuple(p.shape)}")
    return p


def _part(p, start, stop=None):
    return _core.getitem(p, index=(slice(start, stop),))


def _zeros(n, dtype):
    return _const(_np.zeros(n, dtype=dtype))


def _leading_zeros(fname, p, what, keyword):
    """How many leading coefficients of ``p`` are exactly zero (concrete values needed)."""
    v = _concrete(fname, p, what, f"numpy strips its leading zero coefficients, which sets the "
                                  f"result's length; pass {keyword}=False to keep them")
    nonzero = _np.flatnonzero(v)
    return int(nonzero[0]) if nonzero.size else len(v)


# --- roots and the polynomial of given roots ----------------------------------------------
def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (numpy.roots): the eigenvalues of
    its companion matrix, differentiable in ``p`` to any order (at simple roots).

    Leading zeros are dropped and trailing zeros give roots at 0, which needs concrete ``p``;
    with ``strip_zeros=False`` (jax.numpy's keyword) ``p`` is used as it is, so this traces
    (a zero leading coefficient then makes the companion matrix infinite). The dtype is
    ``linalg.eigvals``': real when every root is real (eager only), complex otherwise.

    Args:
        p: 1-D coefficients, highest power first (a scalar counts as one).
        strip_zeros: drop leading and trailing zeros as numpy does.
    Returns:
        The roots, shape ``(degree,)``.
    Raises:
        ValueError: ``p`` is not 1-D. TypeError: symbolic ``p`` with ``strip_zeros``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.roots([1.0, -3.0, 2.0]).tolist()
    [2.0, 1.0]
    """
    p = _vector("roots", p, "p")
    trailing = 0
    if strip_zeros:
        v = _concrete("roots", p, "p", "numpy strips leading and trailing zero coefficients, "
                      "which sets the number of roots; pass strip_zeros=False to keep them")
        nonzero = _np.flatnonzero(v)
        if nonzero.size == 0:
            return _const(_np.array([]))
        trailing = len(v) - int(nonzero[-1]) - 1
        p = _part(p, int(nonzero[0]), int(nonzero[-1]) + 1)
    if _dtype(p).kind not in "fc":
        p = _cast(p, _np.float64)
    n = p.shape[0]
    if n > 1:
        first_row = _core.reshape(-_part(p, 1) / _core.getitem(p, index=0), shape=(1, n - 1))
        shift = _const(_np.eye(n - 2, n - 1, dtype=_dtype(p)))
        found = _linalg.eigvals(_sh.join([first_row, shift], 0, "roots"))
    else:
        found = _const(_np.array([]))
    return _sh.join([found, _zeros(trailing, _dtype(found))], 0, "roots")


def _is_conjugate_closed(z):
    """numpy.poly's test: the roots are closed under conjugation (so the product is real)."""
    z = _np.asarray(z, complex)
    return bool(_np.all(_np.sort(z) == _np.sort(z.conjugate())))


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots, or of the characteristic
    polynomial of a square matrix (numpy.poly); differentiable in the roots (matrix).

    Complex roots give complex coefficients, real ones (numpy's rule) when the roots come in
    conjugate pairs; that test reads values, so traced complex roots give complex results.

    Args:
        seq_of_zeros: 1-D roots, or a non-empty square matrix.
    Returns:
        The coefficients (length ``n + 1``), or 1.0 for no roots.
    Raises:
        ValueError: any other shape.

    >>> import hessgrad.numpy as hnp
    >>> hnp.poly([1.0, 2.0]).tolist()
    [1.0, -3.0, 2.0]
    """
    z = _coeffs("poly", seq_of_zeros, "seq_of_zeros")
    shape = tuple(z.shape)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        z = _linalg.eigvals(z)
    elif len(shape) == 1:
        z = _cast(z, _np.dtype(_np.mintypecode(_dtype(z).char)))
    else:
        raise ValueError(f"poly: input must be 1d or non-empty square 2d array (argument "
                         f"'seq_of_zeros' has shape {shape})")
    if z.shape[0] == 0:
        return 1.0
    dtype = _dtype(z)
    a = _const(_np.ones(1, dtype=dtype))
    zero = _zeros(1, dtype)
    for k in range(z.shape[0]):  # a * (x - z_k): numpy's convolution with [1, -z_k]
        root = _core.getitem(z, index=k)
        a = _sh.join([a, zero], 0, "poly") - root * _sh.join([zero, a], 0, "poly")
    if dtype.kind == "c" and not _symbolic(z) and _is_conjugate_closed(_value(z)):
        a = _ew.real(a)
    return a


# --- arithmetic ---------------------------------------------------------------------------
def _aligned(fname, a1, a2):
    a1, a2 = _coeffs(fname, a1, "a1"), _coeffs(fname, a2, "a2")
    diff = a2.shape[0] - a1.shape[0]
    if diff > 0:
        a1 = _sh.join([_zeros(diff, _dtype(a1)), a1], 0, fname)
    elif diff < 0:
        a2 = _sh.join([_zeros(-diff, _dtype(a2)), a2], 0, fname)
    return a1, a2


def polyadd(a1, a2):
    """Sum of two polynomials (the shorter padded with leading zeros), numpy.polyadd.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polyadd([1.0, 2.0], [1.0, 0.0, 3.0]).tolist()
    [1.0, 1.0, 5.0]
    """
    a1, a2 = _aligned("polyadd", a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """Difference of two polynomials, numpy.polysub.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polysub([1.0, 2.0], [1.0, 0.0, 3.0]).tolist()
    [-1.0, 1.0, -1.0]
    """
    a1, a2 = _aligned("polysub", a1, a2)
    return a1 - a2


def _trimmed(fname, p, what, trim):
    """numpy.poly1d's coefficients: leading zeros dropped, all zeros kept as [0]."""
    if not trim:
        return p
    lead = _leading_zeros(fname, p, what, "trim_leading_zeros")
    if lead == p.shape[0]:
        return _zeros(1, _dtype(p))
    return _part(p, lead) if lead else p


def polymul(a1, a2, *, trim_leading_zeros=True):
    """Product of two polynomials (numpy.polymul): the convolution of their coefficients,
    differentiable in both. numpy first drops leading zeros (as ``poly1d`` does), which needs
    concrete values; ``trim_leading_zeros=False`` (jax.numpy's keyword) keeps them and
    traces.

    Raises:
        ValueError: an input has more than one dimension.
        TypeError: symbolic input with ``trim_leading_zeros``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polymul([0.0, 1.0, 2.0], [3.0]).tolist()
    [3.0, 6.0]
    """
    a1, a2 = (_trimmed("polymul", _vector("polymul", p, what), what, trim_leading_zeros)
              for p, what in ((a1, "a1"), (a2, "a2")))
    return convolve(a1, a2)


def polydiv(u, v, *, trim_leading_zeros=True):
    """Quotient and remainder of polynomial division (numpy.polydiv), differentiable in both.

    As numpy, the remainder's leading entries with ``|r| <= 1e-8`` are dropped (at least one
    is kept); that reads values, so symbolic input needs ``trim_leading_zeros=False``
    (jax.numpy's keyword), which keeps the remainder's full length ``len(u)``.

    Returns:
        ``(q, r)``.
    Raises:
        ValueError: an input is not 1-D. TypeError: symbolic input with trimming.

    >>> import hessgrad.numpy as hnp
    >>> q, r = hnp.polydiv([1.0, -3.0, 2.0], [1.0, -1.0])
    >>> q.tolist(), r.tolist()
    ([1.0, -2.0], [0.0])
    """
    u, v = _vector("polydiv", u, "u"), _vector("polydiv", v, "v")
    u, v = u + 0.0, v + 0.0
    dtype = _np.result_type(_dtype(u), _dtype(v))
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / _core.getitem(v, index=0)
    r = _cast(u, dtype)
    quotient = []
    for k in range(m - n + 1):
        d = scale * _core.getitem(r, index=k)
        quotient.append(_cast(d, dtype))
        parts = [_zeros(k, dtype), _cast(d * v, dtype), _zeros(m - n - k, dtype)]
        r = r - _sh.join(parts, 0, "polydiv")
    q = _sh.stack_arrays(quotient, 0, "polydiv") if quotient else _zeros(1, dtype)
    if trim_leading_zeros and r.shape[0] > 1:
        values = _np.asarray(_concrete(
            "polydiv", r, "u",
            "numpy drops the remainder's leading near-zero entries, which sets its length; "
            "pass trim_leading_zeros=False to keep them"))
        lead = 0
        while lead < len(values) - 1 and _np.allclose(values[lead], 0, rtol=1e-14):
            lead += 1
        r = _part(r, lead) if lead else r
    return q, r


# --- polynomials --------------------------------------------------------------------------
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` by Horner's
    scheme, as numpy.polyval; differentiable in ``p`` and ``x``.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> float(hnp.polyval([3.0, 0.0, 1.0], 2.0))
    13.0
    >>> float(hg.grad(lambda x: hnp.polyval([3.0, 0.0, 1.0], x))(2.0))
    12.0
    """
    p, x = _array("polyval", p, "p"), _array("polyval", x, "x")
    if len(p.shape) == 0:
        raise TypeError("polyval: argument 'p' must be a sequence of coefficients, got a 0-d "
                        "array")
    y = _const(_np.zeros(x.shape, dtype=_dtype(x)))
    for i in range(p.shape[0]):
        y = y * x + (_core.getitem(p, index=i) if isinstance(p, _Tensor) else p[i])
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (numpy.polyfit): the coefficients, highest power first,
    differentiable in ``y``, ``x`` and ``w`` (through ``hessgrad.numpy.linalg.lstsq`` of the
    column-scaled Vandermonde matrix, as numpy solves it).

    Args:
        x: 1-D sample points; y: 1-D or 2-D (one fit per column) values.
        deg: the degree; rcond: relative singular-value cutoff (default len(x) * eps).
        full: also return (residuals, rank, singular values, rcond).
        w: weights multiplying the residuals; cov: also return the coefficients' covariance
            (True scales it by residuals / (len(x) - deg - 1), 'unscaled' does not).
    Returns:
        The coefficients (deg + 1,) or (deg + 1, k), and the extras asked for.
    Raises:
        ValueError: deg < 0 or too few points to scale the covariance. TypeError: shapes.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polyfit([0.0, 1.0, 2.0], [1.0, 3.0, 5.0], 1).round(12).tolist()
    [2.0, 1.0]
    """
    order = int(deg) + 1
    x, y = _array("polyfit", x, "x"), _array("polyfit", y, "y")
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    if len(x.shape) != 1:
        raise TypeError(f"polyfit: expected 1D vector for x, got shape {tuple(x.shape)}")
    if x.shape[0] == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if len(y.shape) not in (1, 2):
        raise TypeError(f"polyfit: expected 1D or 2D array for y, got shape {tuple(y.shape)}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: expected x and y to have same length, got shapes "
                        f"{tuple(x.shape)} and {tuple(y.shape)}")
    x = _cast(x, _np.result_type(_dtype(x), _np.float64))
    y = _cast(y, _np.result_type(_dtype(y), _np.float64))
    if rcond is None:
        rcond = x.shape[0] * _np.finfo(_dtype(x)).eps
    lhs, rhs = _sh.vander(x, order, False), y
    if w is not None:
        w = _cast(_array("polyfit", w, "w"), _np.float64)
        if len(w.shape) != 1:
            raise TypeError(f"polyfit: expected a 1-d array for weights, got shape "
                            f"{tuple(w.shape)}")
        if w.shape[0] != y.shape[0]:
            raise TypeError(f"polyfit: expected w and y to have the same length, got shapes "
                            f"{tuple(w.shape)} and {tuple(y.shape)}")
        wcol = _core.reshape(_as_tensor(w), shape=(-1, 1))
        lhs = lhs * wcol
        rhs = rhs * (wcol if len(y.shape) == 2 else w)
    scale = _ew.sqrt(_red.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = _linalg.lstsq(lhs, _as_tensor(rhs), rcond)
    c = c / (scale if len(c.shape) == 1 else _core.reshape(scale, shape=(-1, 1)))
    if not _symbolic(rank) and int(_value(rank)) != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", _np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if cov:
        base = _linalg.inv(_la.matmul(_sh.transpose(lhs, axes=(1, 0)), lhs))
        base = base / _la.outer(scale, scale)
        if cov == "unscaled":
            fac = 1.0
        else:
            if x.shape[0] <= order:
                raise ValueError("polyfit: the number of data points must exceed order to "
                                 f"scale the covariance matrix ({x.shape[0]} points, order "
                                 f"{order})")
            fac = resids / (x.shape[0] - order)
        if len(y.shape) == 1:
            return c, base * fac
        return c, _core.reshape(base, shape=(order, order, 1)) * fac
    return c


# --- calculus -----------------------------------------------------------------------------
def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (numpy.polyder), differentiable in ``p``.

    Raises:
        ValueError: ``m < 0``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polyder([1.0, 1.0, 1.0, 1.0]).tolist()
    [3.0, 2.0, 1.0]
    """
    m = int(m)
    if m < 0:
        raise ValueError(f"polyder: Order of derivative must be positive (see polyint), got "
                         f"m={m}")
    p = _as_tensor(_array("polyder", p, "p"))
    if len(p.shape) == 0:
        raise TypeError("polyder: argument 'p' must be a sequence of coefficients, got a 0-d "
                        "array")
    for _ in range(m):
        n = p.shape[0] - 1
        p = _part(p, 0, -1) * _np.arange(n, 0, -1)
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial with integration constants ``k`` (numpy.
    polyint: one per order, highest order first, default 0), differentiable in ``p`` and
    ``k``.

    Raises:
        ValueError: ``m < 0`` or ``k`` too short.

    >>> import hessgrad.numpy as hnp
    >>> hnp.polyint([3.0, 2.0, 1.0], k=5.0).tolist()
    [1.0, 1.0, 1.0, 5.0]
    """
    m = int(m)
    if m < 0:
        raise ValueError(f"polyint: Order of integral must be positive (see polyder), got "
                         f"m={m}")
    k = _const(_np.zeros(m, float)) if k is None else _coeffs("polyint", k, "k")
    if k.shape[0] == 1 and m > 1:
        k = _core.getitem(k, index=0) * _np.ones(m, float)
    if k.shape[0] < m:
        raise ValueError(f"polyint: k must be a scalar or a rank-1 array of length 1 or >m "
                         f"(k has length {k.shape[0]}, m={m})")
    p = _as_tensor(_array("polyint", p, "p"))
    if m and len(p.shape) == 0:
        raise TypeError("polyint: argument 'p' must be a sequence of coefficients, got a 0-d "
                        "array")
    for j in range(m):
        scaled = p / _np.arange(p.shape[0], 0, -1)
        p = _sh.join([scaled, _part(k, j, j + 1)], 0, "polyint")
    return p


__all__ = ["roots", "poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint",
           "polyval", "polyfit"]
