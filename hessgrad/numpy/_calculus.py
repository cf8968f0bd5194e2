"""Discrete calculus: cumulative sums and products (numpy 2's ``cumulative_sum`` /
``cumulative_prod``), finite differences (``ediff1d``, ``gradient``), integration
(``trapezoid``) and linear interpolation (``interp``).
"""

import builtins

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, indexing as _ix, reduction as _red, \
    shape as _sh, signal as _sig, sorting as _sorting
from . import _reductions as _r
from ._arguments import _array, _as_tensor, _cast, _const, _dtype, _slice
from ._out import writes_out as _writes_out


# --- numpy 2's cumulative_sum / cumulative_prod -------------------------------------------
def _cumulative(fname, scan, identity):
    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _r._no_out(fname, out)
        x = _array(fname, x, "x")
        if len(x.shape) == 0:
            x = _core.reshape(_as_tensor(x), shape=(1,))
        if axis is None:
            if len(x.shape) >= 2:
                raise ValueError(f"{fname}: for arrays which have more than one dimension the "
                                 f"axis argument is required (argument 'x' has shape "
                                 f"{tuple(x.shape)})")
            axis = 0
        axis = _r._one_axis(fname, x, axis)
        res = scan(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = tuple(1 if i == axis else d for i, d in enumerate(res.shape))
            res = _sh.join([_const(_np.full(shape, identity, dtype=res.dtype)), res], axis,
                           fname)
        return res

    cumulative.__name__ = cumulative.__qualname__ = fname
    return cumulative


cumulative_sum = _cumulative("cumulative_sum", _r.cumsum, 0)
cumulative_sum.__doc__ = """Cumulative sum along ``axis`` (required above 1-D); with
    ``include_initial`` a leading 0 (numpy 2's array-API name).

    >>> import hessgrad.numpy as hnp
    >>> hnp.cumulative_sum([1.0, 2.0, 3.0], include_initial=True).tolist()
    [0.0, 1.0, 3.0, 6.0]
    """
cumulative_prod = _cumulative("cumulative_prod", _r.cumprod, 1)
cumulative_prod.__doc__ = """Cumulative product along ``axis`` (required above 1-D); with
    ``include_initial`` a leading 1; exact derivatives at zeros.

    >>> import hessgrad.numpy as hnp
    >>> hnp.cumulative_prod([2.0, 3.0], include_initial=True).tolist()
    [1.0, 2.0, 6.0]
    """


# --- finite differences and integration ---------------------------------------------------
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``, with optional values
    before and after (numpy.ediff1d).

    >>> import hessgrad.numpy as hnp
    >>> hnp.ediff1d([1.0, 2.0, 4.0], to_begin=-1.0).tolist()
    [-1.0, 1.0, 2.0]
    """
    ary = _core.reshape(_as_tensor(_array("ediff1d", ary, "ary")), shape=(-1,))
    dtype = _dtype(ary)
    parts = [_core.getitem(ary, index=(slice(1, None),)) -
             _core.getitem(ary, index=(slice(None, -1),))]
    for extra, what, front in ((to_begin, "to_begin", True), (to_end, "to_end", False)):
        if extra is None:
            continue
        extra = _array("ediff1d", extra, what)
        if not _np.can_cast(_dtype(extra), dtype, casting="same_kind"):
            raise TypeError(f"ediff1d: dtype of `{what}` ({_dtype(extra)}) must be compatible "
                            f"with input `ary` ({dtype}) under the `same_kind` rule.")
        extra = _cast(_core.reshape(_as_tensor(extra), shape=(-1,)), dtype)
        parts.insert(0, extra) if front else parts.append(extra)
    return parts[0] if len(parts) == 1 else _sh.join(parts, 0, "ediff1d")


def _spacings(fname, f, varargs, axes):
    """Per axis: a scalar spacing, or the 1-D coordinate differences (a tensor when the
    coordinates are one, so that the result differentiates in them)."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and len(_array(fname, varargs[0], "varargs").shape) == 0:
        return [varargs[0]] * len(axes)
    if len(varargs) != len(axes):
        raise TypeError(f"{fname}: invalid number of arguments: {len(varargs)} spacings for "
                        f"{len(axes)} axes")
    out = []
    for d, ax in zip(varargs, axes):
        d = _array(fname, d, "varargs")
        if len(d.shape) == 0:
            out.append(d if isinstance(d, _Tensor) else float(d))
            continue
        if len(d.shape) != 1:
            raise ValueError(f"{fname}: distances must be either scalars or 1d, got shape "
                             f"{tuple(d.shape)}")
        if d.shape[0] != f.shape[ax]:
            raise ValueError(f"{fname}: when 1d, distances must match the length of the "
                             f"corresponding dimension ({d.shape[0]} != {f.shape[ax]} along "
                             f"axis {ax})")
        if _dtype(d).kind in "iub":
            d = _cast(d, _np.float64)
        if isinstance(d, _Tensor):  # the non-uniform stencil, differentiable in d
            out.append(_slice(d, 0, slice(1, None)) - _slice(d, 0, slice(None, -1)))
            continue
        dx = _np.diff(d)
        out.append(dx[0] if _np.all(dx == dx[0]) else dx)
    return out


def gradient(f, *varargs, axis=None, edge_order=1):
    """numpy.gradient: second-order central differences inside, one-sided differences of
    ``edge_order`` (1 or 2) at the edges; spacing a scalar per axis or 1-D coordinates.
    Differentiable in ``f`` and in tensor spacings or coordinates.

    Returns:
        One tensor, or a tuple of them (one per axis) when several axes are differentiated.
    Raises:
        ValueError: too few points for ``edge_order``, bad spacing, ``edge_order`` > 2.

    >>> import hessgrad.numpy as hnp
    >>> hnp.gradient([1.0, 2.0, 4.0, 7.0]).tolist()
    [1.0, 1.5, 2.5, 3.0]
    """
    f = _array("gradient", f, "f")
    ndim = len(f.shape)
    axes = tuple(range(ndim)) if axis is None else tuple(
        _normalize_axis_tuple(axis, ndim, "gradient: axis"))
    spacing = _spacings("gradient", f, varargs, axes)
    if edge_order > 2 or edge_order < 1:
        raise ValueError(f"gradient: 'edge_order' must be 1 or 2, got {edge_order}")
    if _dtype(f).kind in "iub":
        f = _cast(f, _np.float64)
    f = _as_tensor(f)
    outs = []
    for ax, dx in zip(axes, spacing):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("gradient: Shape of array too small to calculate a numerical "
                             "gradient, at least (edge_order + 1) elements are required "
                             f"(argument 'f' has shape {tuple(f.shape)}, axis {ax})")
        nd = ndim

        def sl(part, ax=ax):
            return _slice(f, ax, part)

        def col(v, ax=ax):  # a 1-D stencil coefficient vector shaped to broadcast along ax
            shape = (1,) * ax + (-1,) + (1,) * (nd - ax - 1)
            if isinstance(v, _Tensor):
                return _core.reshape(v, shape=shape)
            return _np.asarray(v).reshape(shape)

        uniform = len(_np.shape(dx) if not isinstance(dx, _Tensor) else dx.shape) == 0
        if uniform:
            interior = (sl(slice(2, None)) - sl(slice(None, -2))) / (2.0 * dx)
        else:
            dx1, dx2 = dx[:-1], dx[1:]
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            c = dx1 / (dx2 * (dx1 + dx2))
            interior = col(a) * sl(slice(None, -2)) + col(b) * sl(slice(1, -1)) + \
                col(c) * sl(slice(2, None))
        if edge_order == 1:
            d0, dn = (dx, dx) if uniform else (dx[0], dx[-1])
            first = (sl(slice(1, 2)) - sl(slice(0, 1))) / d0
            last = (sl(slice(-1, None)) - sl(slice(-2, -1))) / dn
        else:
            if uniform:
                a0, b0, c0 = -1.5 / dx, 2.0 / dx, -0.5 / dx
                an, bn, cn = 0.5 / dx, -2.0 / dx, 1.5 / dx
            else:
                dx1, dx2 = dx[0], dx[1]
                a0 = -(2.0 * dx1 + dx2) / (dx1 * (dx1 + dx2))
                b0 = (dx1 + dx2) / (dx1 * dx2)
                c0 = -dx1 / (dx2 * (dx1 + dx2))
                dx1, dx2 = dx[-2], dx[-1]
                an = dx2 / (dx1 * (dx1 + dx2))
                bn = -(dx2 + dx1) / (dx1 * dx2)
                cn = (2.0 * dx2 + dx1) / (dx2 * (dx1 + dx2))
            first = a0 * sl(slice(0, 1)) + b0 * sl(slice(1, 2)) + c0 * sl(slice(2, 3))
            last = an * sl(slice(-3, -2)) + bn * sl(slice(-2, -1)) + cn * sl(slice(-1, None))
        out = _sh.join([first, interior, last], ax, "gradient")
        outs.append(_cast(out, _dtype(f)) if _dtype(out) != _dtype(f) else out)
    return tuple(outs) if len(outs) > 1 else outs[0]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the composite trapezoidal rule (numpy 2's name),
    differentiable in ``y``, ``x`` and ``dx``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.trapezoid([1.0, 2.0, 3.0], x=[0.0, 1.0, 3.0]))
    6.5
    """
    y = _as_tensor(_array("trapezoid", y, "y"))
    nd = len(y.shape)
    if nd == 0:
        raise ValueError("trapezoid: argument 'y' must be at least 1-D, got shape ()")
    axis = _r._one_axis("trapezoid", y, axis)
    if x is None:
        d = dx
    else:
        x = _array("trapezoid", x, "x")
        if len(x.shape) == 1:
            if x.shape[0] != y.shape[axis]:
                raise ValueError(f"trapezoid: x of length {x.shape[0]} does not match y of "
                                 f"shape {tuple(y.shape)} along axis {axis}")
            d = _sh.diff(x, 1, 0, None, None)
            d = _core.reshape(_as_tensor(d), shape=(1,) * axis + (-1,) +
                              (1,) * (nd - axis - 1))
        else:
            d = _sh.diff(x, 1, axis, None, None)
    return _red.sum(d * (_slice(y, axis, slice(1, None)) + _slice(y, axis, slice(None, -1)))
                    / 2.0, axis=axis)


# --- interpolation ------------------------------------------------------------------------
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x`` (numpy.interp).

    Differentiable in ``x`` (the slope of the segment holding ``x``: the right-hand one at a
    knot, the left-hand one at the last knot, 0 outside ``[xp[0], xp[-1]]``), in ``fp``, in
    ``left``/``right`` and in ``xp``. Integer segment indices are found with a constant
    ``searchsorted``, so this traces too.

    Args:
        x: points to evaluate at (any shape).
        xp: increasing 1-D sample points (not checked, as numpy).
        fp: 1-D values at ``xp``, the same length.
        left, right: values below ``xp[0]`` / above ``xp[-1]`` (default ``fp[0]``/``fp[-1]``).
        period: a period for ``x`` and ``xp`` (then ``xp`` needs no order).
    Returns:
        A float64 tensor of ``x``'s shape.
    Raises:
        ValueError: ``xp``/``fp`` not 1-D, of different lengths, empty; ``period`` 0.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.interp([0.5, 2.5], [0.0, 1.0, 2.0], [0.0, 10.0, 30.0]).tolist()
    [5.0, 30.0]
    >>> float(hg.grad(lambda x: hnp.interp(x, [0.0, 1.0, 2.0], [0.0, 10.0, 30.0]))(1.5))
    20.0
    """
    x, xp, fp = (_array("interp", v, w) for v, w in ((x, "x"), (xp, "xp"), (fp, "fp")))
    if len(xp.shape) != 1 or len(fp.shape) != 1:
        raise ValueError(f"interp: xp and fp must be 1-D sequences, got shapes "
                         f"{tuple(xp.shape)} and {tuple(fp.shape)}")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError(f"interp: fp and xp are not of the same length ({fp.shape[0]} and "
                         f"{xp.shape[0]})")
    if xp.shape[0] == 0:
        raise ValueError("interp: array of sample points is empty (argument 'xp' has shape "
                         "(0,))")
    ftype = _np.complex128 if _dtype(fp).kind == "c" else _np.float64
    x, xp = _cast(x, _np.float64), _cast(xp, _np.float64)
    fp = _cast(fp, ftype)
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = builtins.abs(period)
        left = right = None
        x, xp = _ew.remainder(x, period), _ew.remainder(xp, period)
        order = _sorting.argsort(xp, axis=0, kind="stable")
        xp, fp = _ix.take(_as_tensor(xp), order), _ix.take(_as_tensor(fp), order)
        xp = _sh.join([_slice(xp, 0, slice(-1, None)) - period, xp,
                       _slice(xp, 0, slice(0, 1)) + period], 0, "interp")
        fp = _sh.join([_slice(fp, 0, slice(-1, None)), fp, _slice(fp, 0, slice(0, 1))], 0,
                      "interp")
    xp, fp = _as_tensor(xp), _as_tensor(fp)
    n = xp.shape[0]
    first_x, last_x = _core.getitem(xp, index=0), _core.getitem(xp, index=-1)
    first_f, last_f = _core.getitem(fp, index=0), _core.getitem(fp, index=-1)
    lo = first_f if left is None else left
    hi = last_f if right is None else right
    if n == 1:
        y = _core.broadcast_to(first_f, shape=tuple(x.shape))
    else:
        j = _ew.minimum(_ew.maximum(_sig.searchsorted(xp, x, side="right") - 1, 0), n - 2)
        x0, x1 = _ix.take(xp, j), _ix.take(xp, j + 1)
        f0, f1 = _ix.take(fp, j), _ix.take(fp, j + 1)
        with _np.errstate(divide="ignore", invalid="ignore"):
            slope = (f1 - f0) / (x1 - x0)
            y = slope * (x - x0) + f0
            # numpy's fallbacks where a zero-width segment makes the slope infinite or NaN
            y = _ew.where(_ew.isnan(y), slope * (x - x1) + f1, y)
            y = _ew.where(_ew.logical_and(_ew.isnan(y), _ew.equal(f0, f1)), f0, y)
            finite = _ew.isfinite(slope)
            y = _ew.where(_ew.logical_and(_ew.equal(x, x0), _ew.logical_not(finite)), f0, y)
            # exactly fp[-1] at xp[-1], with the last segment's slope as derivative
            end = _ew.where(finite, slope * (x - last_x), 0) + last_f
            y = _ew.where(_ew.equal(x, last_x), end, y)
    y = _ew.where(_ew.less(x, first_x), lo, y)
    return _ew.where(_ew.greater(x, last_x), hi, y)


_KEYWORD = 1 << 20  # out= is keyword-only
# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("cumulative_sum", _KEYWORD, "unsafe"),
    ("cumulative_prod", _KEYWORD, "unsafe"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["cumulative_sum", "cumulative_prod", "ediff1d", "gradient", "trapezoid", "interp"]
