"""Floating-point ufuncs: the decompositions ``ldexp``, ``frexp``, ``modf`` and the neighbours
``spacing``, ``nextafter``.

``ldexp(x, n) = x * 2**n`` is exact (no overflowing ``2**n`` is formed) and linear in ``x``;
``frexp`` splits ``x = m * 2**e`` (``m`` differentiable, ``e`` an integer constant); ``modf``
splits ``x`` into fractional and integral parts (derivatives 1 and 0), with numpy's signed
zeros and infinities. ``spacing(x)`` (the gap to the next float away from zero) is piecewise
constant (derivative 0); ``nextafter(x1, x2)`` moves ``x1`` by such a gap (derivative 1 in
``x1``, 0 in ``x2``).
"""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, dtype_of as _dtype_of
from ..ops import elementwise as _ew
from ._arguments import _array, _as_tensor, _cast, _dtype
from ._arraylike import stacked as _stacked
from ._math import _cast_inputs, _reject_out, _reject_where, _ufunc


def _check_real(fname, x, what="x"):
    kind = _np.dtype(_dtype_of(x)).kind
    if kind not in "biuf":
        raise TypeError(f"hessgrad.numpy.{fname}: argument '{what}' must be real, got dtype "
                        f"{_np.dtype(_dtype_of(x))}")


def _ldexp(x1, x2):
    _check_real("ldexp", x1, "x1")
    if _np.dtype(_dtype_of(x2)).kind not in "biu":
        raise TypeError(f"hessgrad.numpy.ldexp: the exponent x2 must be an integer array, got "
                        f"dtype {_np.dtype(_dtype_of(x2))}")
    return _ew.ldexp(x1, x2)


ldexp = _ufunc("ldexp", _ldexp, 2, "x1 * 2**x2 (exact; x2 integer, derivative 2**x2 in x1)",
               ("ldexp([1.5, 3.0], [1, -1])", "[3.0, 1.5]"))


def _two_outputs(fname, out, where, x, dtype, casting):
    x = _stacked(x, fname, "x")
    for o in (out if isinstance(out, tuple) else (out,)):
        _reject_out(fname, o)
    _reject_where(fname, where)
    if dtype is not None:
        (x,) = _cast_inputs(fname, (x,), dtype, casting)
    _check_real(fname, x)
    return x


def frexp(x, out=(None, None), *, where=True, dtype=None, casting="same_kind", **kwargs):
    """Mantissa and exponent of ``x = m * 2**e`` with ``0.5 <= |m| < 1`` (``m = x``, ``e = 0``
    for 0, inf and NaN), numpy's ``frexp`` ufunc. The mantissa ``ldexp(x, -e)`` has
    derivative ``2**-e``; the exponent (int32) is a constant.

    Args:
        x: a real array-like or tensor. ``out`` must be None, ``where`` True.
    Returns:
        ``(mantissa, exponent)``.
    Raises:
        TypeError: complex ``x``, or ``out``/``where`` given.

    >>> import hessgrad.numpy as hnp
    >>> m, e = hnp.frexp([8.0, 0.75])
    >>> m.tolist(), e.tolist()
    ([0.5, 0.75], [4, 0])
    """
    x = _two_outputs("frexp", out, where, x, dtype, casting)
    exponent = _ew.frexp_exponent(x)
    if _np.dtype(_dtype_of(x)).kind in "biu":  # numpy computes in float64
        x = _cast_inputs("frexp", (x,), _np.float64, "safe")[0]
    return _ew.ldexp(x, -exponent), exponent


def modf(x, out=(None, None), *, where=True, dtype=None, casting="same_kind", **kwargs):
    """Fractional and integral parts of ``x``, both with ``x``'s sign (numpy's ``modf``
    ufunc: ``modf(-2.5) = (-0.5, -2.0)``, ``modf(inf) = (0.0, inf)``). The fractional part
    has derivative 1, the integral part 0.

    Args:
        x: a real array-like or tensor. ``out`` must be None, ``where`` True.
    Returns:
        ``(fractional, integral)``, float.
    Raises:
        TypeError: complex ``x``, or ``out``/``where`` given.

    >>> import hessgrad.numpy as hnp
    >>> f, i = hnp.modf([2.5, -1.25])
    >>> f.tolist(), i.tolist()
    ([0.5, -0.25], [2.0, -1.0])
    """
    x = _two_outputs("modf", out, where, x, dtype, casting)
    if _np.dtype(_dtype_of(x)).kind in "biu":
        x = _cast_inputs("modf", (x,), _np.float64, "safe")[0]
    whole = _ew.trunc(x)
    zero = _np.zeros((), _np.dtype(_dtype_of(x)))
    infinite = _ew.isinf(x)
    finite = _ew.where(infinite, zero, x)  # inf - trunc(inf) would be NaN (and warn)
    part = _ew.trunc(finite)
    # x - trunc(x) is +0.0 at negative integers where numpy gives -0.0; -(trunc(x) - x)
    # has the right sign there, and both have derivative 1
    frac = _ew.where(_ew.signbit(x), -(part - finite), finite - part)
    frac = _ew.where(infinite, _ew.copysign(zero, x), frac)
    return frac, whole


def _spacing(x):
    _check_real("spacing", x)
    return _ew.spacing(x)


def _nextafter(x1, x2):
    _check_real("nextafter", x1, "x1")
    _check_real("nextafter", x2, "x2")
    return _ew.nextafter(x1, x2)


spacing = _ufunc("spacing", _spacing, 1, "The gap from x to the next float away from zero",
                 ("spacing([1.0, -4.0])", "[2.220446049250313e-16, -8.881784197001252e-16]"))
nextafter = _ufunc("nextafter", _nextafter, 2, "The float after x1 towards x2",
                   ("nextafter([1.0, 1.0], [2.0, 0.0])",
                    "[1.0000000000000002, 0.9999999999999999]"))

frexp.nin, frexp.nout = 1, 2
modf.nin, modf.nout = 1, 2


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by ``nan``, ``posinf`` and ``neginf`` (default the largest
    finite floats), as numpy.nan_to_num; the derivative is 1 at finite entries and 0 at the
    replaced ones. Integer input is returned as it is.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.nan_to_num([np.nan, 1.0, -np.inf], neginf=-5.0).tolist()
    [0.0, 1.0, -5.0]
    >>> hg.grad(lambda x: hnp.sum(hnp.nan_to_num(x)))(np.array([np.nan, 2.0]))
    array([0., 1.])
    """
    x = _array("nan_to_num", x, "x")
    if _dtype(x).kind not in "fc":
        return _as_tensor(x)
    if _dtype(x).kind == "c":
        parts = [nan_to_num(p, copy, nan, posinf, neginf) for p in (_ew.real(x), _ew.imag(x))]
        return parts[0] + parts[1] * 1j
    big = _np.finfo(_dtype(x)).max
    hi = big if posinf is None else posinf
    lo = -big if neginf is None else neginf

    def fill(value):  # in x's dtype; a tensor stays one (the result differentiates in it)
        return _cast(value, _dtype(x)) if isinstance(value, _Tensor) else \
            _np.asarray(value, _dtype(x))
    out = _ew.where(_ew.isnan(x), fill(nan), x)
    infinite = _ew.isinf(x)
    neg = _ew.signbit(x)
    out = _ew.where(_ew.logical_and(infinite, _ew.logical_not(neg)), fill(hi), out)
    return _ew.where(_ew.logical_and(infinite, neg), fill(lo), out)


__all__ = ["ldexp", "frexp", "modf", "spacing", "nextafter", "nan_to_num"]
