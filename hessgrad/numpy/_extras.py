"""numpy functions that objectives reach for beyond the core families: NaN-ignoring statistics,
numpy 2's cumulative_sum/prod, interpolation, convolution, covariance, finite differences and
integration, and the comparison and binning helpers (polynomials are in ``_polynomials``).

Differentiable results differentiate to any order (rules are hessgrad ops) in eager mode and
inside ``hessgrad.function``. Boolean and integer results (``isclose``, ``searchsorted``,
``digitize``, counts) are constants. Functions whose result *shape* depends on the data
(``unique``, ``bincount``, ``histogram``) need concrete values for that data and say so while
tracing.

>>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
>>> hg.grad(lambda x: hnp.nanmax(x))(np.array([1.0, np.nan, 3.0]))
array([0., 0., 1.])
"""

import builtins
import warnings

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, indexing as _ix, linalg as _la, \
    reduction as _red, shape as _sh, signal as _sig, sorting as _sorting
from . import _reductions as _r
from ._arraylike import asarray as _asarray, stacked as _stacked


# --- helpers ------------------------------------------------------------------------------
def _array(fname, a, what="a"):
    """A tensor as it is (its shape must be static), a nested sequence holding tensors
    stacked, anything else as a numpy array."""
    a = _asarray(a, fname, what)
    if isinstance(a, _Tensor) and (a.shape is None or None in a.shape):
        raise ValueError(f"{fname}: argument '{what}' needs a static shape, got {a.shape}")
    return a


def _symbolic(x):
    return isinstance(x, _Tensor) and x._value is None


def _value(x):
    return x._value if isinstance(x, _Tensor) else _np.asarray(x)


def _concrete(fname, x, what, why):
    """The numpy value of ``x``; a clear TypeError for a symbolic tensor."""
    if _symbolic(x):
        raise TypeError(f"hessgrad.numpy.{fname}: argument '{what}' (symbolic, shape "
                        f"{x.shape}) must be known while a function is traced: {why}; call it "
                        f"eagerly, or pass '{what}' as a numpy array")
    return _value(x)


def _dtype(x):
    return _np.dtype(x.dtype)


def _is_float(x):
    return _dtype(x).kind in "fc"


def _warn_if(cond, message):
    """numpy's data-dependent RuntimeWarnings, given when the values are known."""
    if not _symbolic(cond) and _np.any(_value(cond)):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _scalar(value, like):
    """``value`` as a 0-d array of ``like``'s dtype (no promotion; a non-finite value is no
    Python float literal in compiled graphs)."""
    return _np.asarray(value, dtype=_dtype(like))


def _const(value):
    return _core.constant(value)


def _along(axis, ndim, part):
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


def _slice(x, axis, part):
    return _core.getitem(x, index=_along(axis, len(x.shape), part))


def _as_tensor(x):
    return _core.strong(x) if isinstance(x, _Tensor) else _const(x)


def _cast(x, dtype):
    dtype = _np.dtype(dtype)
    if _dtype(x) == dtype:
        return x
    return _core.cast(x, dtype=dtype) if isinstance(x, _Tensor) else _np.asarray(x, dtype)


def _reduced_axes(fname, a, axis, scalar_ok=False):
    """``axis`` as a sorted tuple of non-negative axes (all of them for None)."""
    ndim = len(a.shape)
    if axis is None:
        return tuple(range(ndim))
    axes = _r._axes(fname, a, axis, scalar_ok=scalar_ok)
    return tuple(range(ndim)) if axes is None else axes


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


# --- NaN-ignoring reductions --------------------------------------------------------------
def _nan_extremum(fname, ufunc, fill, plain):
    def reduce(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        _r._no_out(fname, out)
        a = _array(fname, a)
        if not _is_float(a):
            return plain(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        axes = _r._axes(fname, a, axis)
        _r._empty_reduction_check(fname, ufunc, a, axes, initial is not None)
        nan = _ew.isnan(a)
        res = plain(_ew.where(nan, _scalar(fill, a), a), axis=axis, keepdims=keepdims,
                    initial=initial, where=where)
        if initial is not None or a.size == 0:
            return res
        all_nan = _r.all(nan, axis=axis, keepdims=keepdims, where=where)
        _warn_if(all_nan, "All-NaN slice encountered")
        return _ew.where(all_nan, _scalar(_np.nan, res), res)

    reduce.__name__ = reduce.__qualname__ = fname
    return reduce


nanmax = _nan_extremum("nanmax", "fmax", -_np.inf, _r.max)
nanmax.__doc__ = """The maximum over ``axis`` ignoring NaNs (NaN, with numpy's warning, for an
    all-NaN slice); the derivative is 0 at NaN entries, ties share it evenly.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> hnp.nanmax([[1.0, np.nan], [4.0, 2.0]], axis=1).tolist()
    [1.0, 4.0]
    """
nanmin = _nan_extremum("nanmin", "fmin", _np.inf, _r.min)
nanmin.__doc__ = """The minimum over ``axis`` ignoring NaNs; see ``nanmax``.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanmin([3.0, np.nan, 2.0]))
    2.0
    """


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product over ``axis`` treating NaN as 1; derivative 0 at NaN entries, exact at zeros.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanprod([2.0, np.nan, 3.0]))
    6.0
    """
    _r._no_out("nanprod", out)
    a = _array("nanprod", a)
    if _is_float(a):
        a = _ew.where(_ew.isnan(a), 1, a)
    return _r.prod(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nanvar(fname, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    _r._no_out(fname, out)
    if mean is not None or not (where is True or where is None):
        raise NotImplementedError(f"{fname}: the mean= and where= arguments are not supported")
    ddof = _r._ddof(fname, ddof, correction)
    a = _array(fname, a)
    if dtype is not None:
        a = _r._cast(_as_tensor(a), dtype)
    if not _is_float(a):
        return None, _r.var(a, axis=axis, ddof=ddof, keepdims=keepdims)
    axes = _reduced_axes(fname, a, axis, scalar_ok=True)
    nan = _ew.isnan(a)
    real_dtype = _np.finfo(_dtype(a)).dtype  # counts (and the result) are real for complex a
    count = _red.sum(_core.cast(_ew.logical_not(nan), dtype=real_dtype), axis=axes,
                     keepdims=True)
    zeroed = _ew.where(nan, 0, a)
    avg = _red.sum(zeroed, axis=axes, keepdims=True) / _ew.maximum(count, 1)
    centered = _ew.where(nan, 0, a - avg)
    sq = _red.sum(_red.abs2(centered), axis=axes, keepdims=keepdims)  # real for complex a
    dof = _core.reshape(count, shape=_out_shape(a.shape, axes, keepdims)) - ddof
    bad = _ew.less_equal(dof, 0)
    _warn_if(bad, "Degrees of freedom <= 0 for slice.")
    out = _ew.where(bad, _scalar(_np.nan, sq), sq / _ew.where(bad, 1, dof))
    return bad, out if dtype is None else _r._cast(out, dtype)  # numpy keeps a complex dtype


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """Variance of the non-NaN entries over ``axis``, dividing by ``count - ddof`` (NaN with
    numpy's warning where that is <= 0); the derivative is 0 at NaN entries.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanvar([1.0, np.nan, 3.0], ddof=1))
    2.0
    """
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction)[1]


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):
    """Standard deviation of the non-NaN entries; the derivative is 0 at NaN entries and on
    constant slices (the subgradient, not 0/0).

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanstd([1.0, np.nan, 3.0]))
    1.0
    """
    bad, var = _nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean, correction)
    if bad is None:
        return _r.std(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    flat = _ew.equal(var, 0)
    return _ew.where(flat, 0.0, _ew.sqrt(_ew.where(flat, 1.0, var)))


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as 0 (flattened when ``axis`` is None).

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> hnp.nancumsum([1.0, np.nan, 2.0]).tolist()
    [1.0, 1.0, 3.0]
    """
    a = _array("nancumsum", a)
    if _is_float(a):
        a = _ew.where(_ew.isnan(a), 0, a)
    return _r.cumsum(a, axis=axis, dtype=dtype, out=out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as 1 (flattened when ``axis`` is None).

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> hnp.nancumprod([2.0, np.nan, 3.0]).tolist()
    [2.0, 2.0, 6.0]
    """
    a = _array("nancumprod", a)
    if _is_float(a):
        a = _ew.where(_ew.isnan(a), 1, a)
    return _r.cumprod(a, axis=axis, dtype=dtype, out=out)


def _nan_sorted(fname, a, axis):
    """The reduced axes of ``a`` moved last, merged and sorted (NaNs last), the non-NaN count
    per slice (kept axis, intp), the axes and the slice length."""
    axes = _reduced_axes(fname, a, axis)
    a = _as_tensor(a)
    rest = tuple(i for i in range(len(a.shape)) if i not in axes)
    n = int(_np.prod([a.shape[i] for i in axes], dtype=_np.int64))
    moved = _core.reshape(_sh.transpose(a, axes=rest + axes) if rest + axes != tuple(
        range(len(a.shape))) else a, shape=tuple(a.shape[i] for i in rest) + (n,))
    s = _sorting.sort(moved, axis=len(rest))
    count = _red.sum(_core.cast(_ew.logical_not(_ew.isnan(s)), dtype=_np.intp), axis=-1,
                     keepdims=True)
    return s, count, axes, n


def _pick(s, index):
    return _ix.take_along_axis(s, index, -1)


def _nanmedian(a, axis, keepdims):
    s, count, axes, n = _nan_sorted("nanmedian", a, axis)
    shape = _out_shape(a.shape, axes, keepdims)
    all_nan = _ew.equal(count, 0)
    _warn_if(all_nan, "All-NaN slice encountered")
    clean = _ew.where(_ew.isnan(s), 0, s)  # so no NaN reaches a gradient through the picks
    lo = _ew.maximum(_ew.floor_divide(count - 1, 2), 0)  # the middle pair (one when odd)
    hi = _ew.floor_divide(count, 2)
    med = (_pick(clean, lo) + _pick(clean, hi)) / 2
    return _core.reshape(_ew.where(all_nan, _scalar(_np.nan, med), med), shape=shape)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN entries over ``axis`` (NaN with numpy's warning for an all-NaN
    slice); the derivative is 0 at NaN entries.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.nanmedian(x))(np.array([4.0, np.nan, 1.0, 3.0, 2.0]))
    array([0. , 0. , 0. , 0.5, 0.5])
    """
    _r._no_out("nanmedian", out)
    a = _array("nanmedian", a)
    if not _is_float(a):
        return _r.median(a, axis=axis, keepdims=keepdims)
    if a.size == 0:  # numpy answers with nanmean here (NaN and its warning)
        return _r.nanmean(a, axis=axis, keepdims=keepdims)
    return _nanmedian(a, axis, keepdims)


def _nanquantile(fname, a, q, axis, out, method, keepdims, weights, interpolation, scale):
    method = _r._check_quantile_options(fname, out, method, weights, interpolation)
    a = _array(fname, a)
    if not _is_float(a):
        return _r._quantile_common(fname, a, q, axis, None, method, keepdims, None, None,
                                   scale)
    qa, weak, q_tensor = _r._quantile_q(fname, q, scale)
    if a.size == 0:  # numpy answers with nanmean here, whatever q is
        return _r.nanmean(a, axis=axis, keepdims=keepdims)
    s, count, axes, n = _nan_sorted(fname, a, axis)
    all_nan = _ew.equal(count, 0)
    _warn_if(all_nan, "All-NaN slice encountered")
    clean = _ew.where(_ew.isnan(s), 0, s)
    q_flat = qa.reshape(-1).astype(_np.float64) if q_tensor is None else \
        _core.reshape(q_tensor, shape=(-1,))  # an eager tensor q: differentiable in it
    virtual = _core.cast(count - 1, dtype=_np.float64) * q_flat  # (..., len(q))
    floor = _ew.floor(virtual)
    last = _ew.maximum(count - 1, 0)
    below = _ew.minimum(_ew.maximum(_core.cast(floor, dtype=_np.intp), 0), last)
    above = _ew.minimum(below + 1, last)
    gamma = virtual - floor
    dtype = _sorting.quantile_dtype(_dtype(a), qa.dtype, weak)
    if _dtype(gamma) != dtype:
        gamma = _core.cast(gamma, dtype=dtype)
    lo, hi = _pick(clean, below), _pick(clean, above)
    d = hi - lo
    res = _ew.where(_ew.greater_equal(gamma, 0.5), hi - d * (1 - gamma), lo + d * gamma)
    res = _ew.where(all_nan, _scalar(_np.nan, res), res)
    k = len(res.shape) - 1
    res = _sh.transpose(res, axes=(k,) + tuple(range(k)))
    return _core.reshape(res, shape=qa.shape + _out_shape(a.shape, axes, keepdims))


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles (static, in [0, 1]) of the non-NaN entries over ``axis``
    (numpy's "linear" method); shape ``q.shape + reduced shape``; derivative 0 at NaN entries.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanquantile([1.0, np.nan, 2.0, 3.0, 4.0], 0.25))
    1.75
    """
    return _nanquantile("nanquantile", a, q, axis, out, method, keepdims, weights,
                        interpolation, 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles (static, in [0, 100]) of the non-NaN entries; see
    ``nanquantile``.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanpercentile([1.0, np.nan, 2.0, 3.0, 4.0], 50))
    2.5
    """
    return _nanquantile("nanpercentile", a, q, axis, out, method, keepdims, weights,
                        interpolation, 100)


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


# --- convolution --------------------------------------------------------------------------
_MODES = {"v": "valid", "s": "same", "f": "full", 0: "valid", 1: "same", 2: "full"}


def _conv_args(fname, a, v, mode):
    key = mode.lower()[:1] if isinstance(mode, str) else mode
    if key not in _MODES:
        raise ValueError(f"{fname}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    a, v = _array(fname, a), _array(fname, v, "v")
    out = []
    for arr, what in ((a, "a"), (v, "v")):
        if len(arr.shape) > 1:
            raise ValueError(f"{fname}: argument '{what}' must be 1-D, got shape "
                             f"{tuple(arr.shape)}")
        if len(arr.shape) == 0:
            arr = _core.reshape(_as_tensor(arr), shape=(1,))
        if arr.shape[0] == 0:
            raise ValueError(f"{fname}: argument '{what}' cannot be empty (shape (0,))")
        out.append(arr)
    return out[0], out[1], _MODES[key]


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences (numpy.convolve), differentiable in
    both: the VJP of a convolution is a correlation, itself a convolution with a flipped
    operand, so every order is exact.

    Args:
        a, v: non-empty 1-D arrays (0-d count as length 1).
        mode: 'full' (length n + m - 1), 'same' (max(n, m)) or 'valid' (max - min + 1).
    Returns:
        A 1-D tensor.
    Raises:
        ValueError: an input is empty or not 1-D, or ``mode`` is unknown.

    >>> import hessgrad.numpy as hnp
    >>> hnp.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, v, mode = _conv_args("convolve", a, v, mode)
    full = _sig.convolve(a, v)
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    short, long_ = builtins.min(n, m), builtins.max(n, m)
    start = (short - 1) // 2 if mode == "same" else short - 1
    length = long_ if mode == "same" else long_ - short + 1
    return _core.getitem(full, index=(slice(start, start + length),))


def correlate(a, v, mode="valid"):
    """Cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D sequences
    (numpy.correlate, default mode 'valid'); differentiable in both.

    >>> import hessgrad.numpy as hnp
    >>> hnp.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5]).tolist()
    [3.5]
    """
    a, v, mode = _conv_args("correlate", a, v, mode)
    if _dtype(v).kind == "c":
        v = _ew.conjugate(v)
    full = _sig.convolve(a, _core.getitem(_as_tensor(v), index=(slice(None, None, -1),)))
    n, m = a.shape[0], v.shape[0]
    if mode == "full":
        return full
    short, long_ = builtins.min(n, m), builtins.max(n, m)
    if mode == "same":
        start = (m - 1) // 2 if n >= m else n - 1 - (n - 1) // 2
        length = long_
    else:
        start, length = short - 1, long_ - short + 1
    return _core.getitem(full, index=(slice(start, start + length),))


# --- covariance, correlation --------------------------------------------------------------
def _observations(fname, m, rowvar, dtype, what):
    m = _array(fname, m, what)
    if len(m.shape) > 2:
        raise ValueError(f"{fname}: argument '{what}' has more than 2 dimensions (shape "
                         f"{tuple(m.shape)})")
    m = _cast(m, dtype)
    if len(m.shape) < 2:
        m = _core.reshape(_as_tensor(m), shape=(1, -1) if len(m.shape) else (1, 1))
    if not rowvar and m.shape[0] != 1:
        m = _sh.transpose(_as_tensor(m), axes=(1, 0))
    return _as_tensor(m)


def _check_weights(fname, w, what, n, integer):
    w = _array(fname, w, what)
    if integer:
        w = _np.asarray(_concrete(fname, w, what, "frequency weights are checked"), float)
        if not _np.all(w == _np.around(w)):
            raise TypeError(f"{fname}: {what} must be integer")
    w = _cast(w, _np.float64)
    if len(w.shape) > 1:
        raise RuntimeError(f"{fname}: cannot handle multidimensional {what} (shape "
                           f"{tuple(w.shape)})")
    if w.shape[0] != n:
        raise RuntimeError(f"{fname}: incompatible numbers of samples ({n}) and {what} "
                           f"({w.shape[0]})")
    if not _symbolic(w) and _np.any(_value(w) < 0):
        raise ValueError(f"{fname}: {what} cannot be negative")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns if not ``rowvar``),
    numpy.cov; differentiable in ``m``, ``y`` and ``aweights``.

    Args:
        m, y: 1-D or 2-D observations; ``y`` adds variables.
        rowvar: variables are rows (else columns).
        bias, ddof: normalise by N (bias) or N - ddof (default N - 1).
        fweights: integer frequency weights; aweights: observation weights.
        dtype: the computation's dtype (default at least float64).
    Returns:
        The covariance matrix, squeezed as numpy squeezes it.
    Raises:
        ValueError: more than 2 dimensions, a non-integer ddof, negative weights.

    >>> import hessgrad.numpy as hnp
    >>> hnp.cov([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be integer, got {ddof!r}")
    if dtype is None:
        dtype = _np.result_type(_dtype(_array("cov", m)), _np.float64) if y is None else \
            _np.result_type(_dtype(_array("cov", m)), _dtype(_array("cov", y, "y")),
                            _np.float64)
    X = _observations("cov", m, rowvar, dtype, "m")
    if X.shape[0] == 0:
        return _const(_np.array([], dtype=dtype).reshape(0, 0))
    if y is not None:
        Y = _observations("cov", y, rowvar, dtype, "y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"cov: m and y have different numbers of observations "
                             f"({X.shape[1]} and {Y.shape[1]})")
        X = _sh.join([X, Y], 0, "cov")
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = None
    if fweights is not None:
        w = _check_weights("cov", fweights, "fweights", n, True)
    if aweights is not None:
        aw = _check_weights("cov", aweights, "aweights", n, False)
        w = aw if w is None else w * aw
    avg, w_sum = _r.average(X, axis=1, weights=w, returned=True)
    w_sum = _core.getitem(_as_tensor(w_sum), index=0)
    if w is None:
        fact = float(n - ddof)
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _red.sum(w * aw) / w_sum
    if not _symbolic(fact) and float(_value(fact)) <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - _core.reshape(avg, shape=(-1, 1))
    XT = _sh.transpose(X if w is None else X * w, axes=(1, 0))
    if _dtype(XT).kind == "c":
        XT = _ew.conjugate(XT)
    with _np.errstate(divide="ignore"):
        c = _la.matmul(X, XT) * _ew.reciprocal(_as_tensor(_np.asarray(fact, dtype))
                                                if not isinstance(fact, _Tensor) else fact)
    return _sh.squeeze(c, None)


def corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None):
    """Pearson correlation coefficients (numpy.corrcoef), clipped to [-1, 1];
    differentiable in ``x`` and ``y``. ``bias`` and ``ddof`` have no effect (as in numpy).

    >>> import hessgrad.numpy as hnp
    >>> hnp.corrcoef([1.0, 2.0, 4.0], [2.0, 4.0, 8.0]).round(12).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if bias is not None or ddof is not None:
        warnings.warn("bias and ddof have no effect and are deprecated", DeprecationWarning,
                      stacklevel=2)
    c = cov(x, y, rowvar, dtype=dtype)
    if len(c.shape) == 0:
        return c / c
    if len(c.shape) != 2:
        raise ValueError(f"corrcoef: unexpected covariance shape {tuple(c.shape)}")
    std = _ew.sqrt(_ew.real(_sh.diagonal(c, 0, 0, 1)))
    c = c / _core.reshape(std, shape=(-1, 1))
    c = c / _core.reshape(std, shape=(1, -1))
    return _ew.clip(c, -1, 1)


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


# --- comparisons and tests (constants) ----------------------------------------------------
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (numpy.isclose), a boolean constant.

    >>> import hessgrad.numpy as hnp
    >>> hnp.isclose([1.0, 1.1], 1.0).tolist()
    [True, False]
    """
    # Python numbers stay as they are: numpy compares float32_array with 0.1 in float32
    a, b = (x if type(x) in (int, float, complex) else _array("isclose", x, name)
            for x, name in ((a, "a"), (b, "b")))
    if type(b) is int:
        b = float(b)
    elif not isinstance(b, (float, complex)) and _dtype(b).kind not in "fcmM":
        b = _cast(b, _np.result_type(_dtype(b), 1.0))
    with _np.errstate(invalid="ignore", over="ignore"):
        res = _ew.logical_or(
            _ew.logical_and(_ew.less_equal(_ew.absolute(a - b), atol + rtol * _ew.absolute(b)),
                            _ew.isfinite(b)),
            _ew.equal(a, b))
        if equal_nan:
            res = _ew.logical_or(res, _ew.logical_and(_ew.isnan(a), _ew.isnan(b)))
    return res


def _concrete_pair(fname, a, b, why):
    return (_concrete(fname, _array(fname, a, "a1" if fname.startswith("array") else "a"),
                      "a1" if fname.startswith("array") else "a", why),
            _concrete(fname, _array(fname, b, "a2" if fname.startswith("array") else "b"),
                      "a2" if fname.startswith("array") else "b", why))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all of ``isclose(a, b)`` hold: a Python bool, so it needs concrete values
    (inside a traced function use ``hnp.all(hnp.isclose(a, b))``).

    >>> import hessgrad.numpy as hnp
    >>> hnp.allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
    True
    """
    a, b = _concrete_pair("allclose", a, b, "the result is a Python bool (use "
                          "hnp.all(hnp.isclose(a, b)) while tracing)")
    return bool(_np.all(_value(isclose(a, b, rtol, atol, equal_nan))))


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements: a Python bool (different
    static shapes give False even while tracing; otherwise concrete values are needed).

    >>> import hessgrad.numpy as hnp
    >>> hnp.array_equal([1.0, 2.0], [1.0, 2.0]), hnp.array_equal([1.0], [1.0, 1.0])
    (True, False)
    """
    s1, s2 = _array("array_equal", a1, "a1").shape, _array("array_equal", a2, "a2").shape
    if tuple(s1) != tuple(s2):
        return False
    v1, v2 = _concrete_pair("array_equal", a1, a2, "the result is a Python bool")
    return bool(_np.array_equal(v1, v2, equal_nan=equal_nan))


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast to each other with equal elements (a Python bool).

    >>> import hessgrad.numpy as hnp
    >>> hnp.array_equiv([1.0, 2.0], [[1.0, 2.0], [1.0, 2.0]])
    True
    """
    v1, v2 = _concrete_pair("array_equiv", a1, a2, "the result is a Python bool")
    return bool(_np.array_equiv(v1, v2))


def isreal(x):
    """Whether each element has a zero imaginary part (a boolean constant).

    >>> import hessgrad.numpy as hnp
    >>> hnp.isreal([1.0, 2.0]).tolist()
    [True, True]
    """
    return _ew.equal(_ew.imag(_array("isreal", x, "x")), 0)


def iscomplex(x):
    """Whether each element has a non-zero imaginary part (a boolean constant; all False for
    real input).

    >>> import hessgrad.numpy as hnp
    >>> hnp.iscomplex([1.0, 2.0]).tolist()
    [False, False]
    """
    x = _array("iscomplex", x, "x")
    if _dtype(x).kind == "c":
        return _ew.not_equal(_ew.imag(x), 0)
    return _const(_np.zeros(x.shape, dtype=bool))


def isrealobj(x):
    """Whether ``x`` has a real dtype (static)."""
    return _dtype(_array("isrealobj", x, "x")).kind != "c"


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (static)."""
    return _dtype(_array("iscomplexobj", x, "x")).kind == "c"


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


# --- binning and counting -----------------------------------------------------------------
def searchsorted(a, v, side="left", sorter=None):
    """Indices where ``v`` would be inserted into the sorted 1-D ``a`` (an integer constant;
    traces).

    >>> import hessgrad.numpy as hnp
    >>> hnp.searchsorted([1.0, 2.0, 3.0], [2.0, 2.5], side="right").tolist()
    [2, 2]
    """
    a, v = _array("searchsorted", a), _array("searchsorted", v, "v")
    if len(a.shape) != 1:
        raise ValueError(f"searchsorted: argument 'a' must be 1-D, got shape {tuple(a.shape)}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        a = _ix.take(_as_tensor(a), sorter)
    return _sig.searchsorted(a, v, side=side)


def digitize(x, bins, right=False):
    """Indices of the bins holding each ``x`` (numpy.digitize; an integer constant; traces).

    >>> import hessgrad.numpy as hnp
    >>> hnp.digitize([0.5, 1.5, 3.0], [0.0, 1.0, 2.0]).tolist()
    [1, 2, 3]
    """
    x, bins = _array("digitize", x, "x"), _array("digitize", bins, "bins")
    if len(bins.shape) != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {tuple(bins.shape)}")
    if _dtype(x).kind == "c":
        raise TypeError("digitize: x may not be complex")
    if not _symbolic(bins):
        d = _np.diff(_value(bins))
        if not (_np.all(d >= 0) or _np.all(d <= 0)):
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
    return _sig.digitize(x, bins, right=bool(right))


def bincount(x, weights=None, minlength=0):
    """Occurrences of each non-negative integer in ``x``; with ``weights`` the sums of the
    weights per value, differentiable in ``weights``. The output length depends on ``x``'s
    values, so ``x`` must be concrete (``weights`` may be traced).

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hnp.bincount([0, 2, 2]).tolist()
    [1, 0, 2]
    >>> hg.grad(lambda w: hnp.bincount([0, 2, 2], w)[2])(np.array([1.0, 2.0, 3.0]))
    array([0., 1., 1.])
    """
    xv = _np.asarray(_concrete("bincount", _array("bincount", x, "x"), "x",
                               "its values set the output length"))
    if xv.ndim != 1:
        raise ValueError(f"bincount: argument 'x' must be 1-D, got shape {xv.shape}")
    if xv.size == 0:
        xv = xv.astype(_np.intp)
    if xv.dtype.kind not in "iub":
        raise TypeError(f"bincount: argument 'x' must hold integers, got dtype {xv.dtype}")
    if xv.size and xv.min() < 0:
        raise ValueError("bincount: argument 'x' must have no negative elements")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    length = builtins.max(int(xv.max()) + 1 if xv.size else 0, int(minlength))
    if weights is None:
        return _const(_np.bincount(xv, minlength=length))
    w = _array("bincount", weights, "weights")
    if tuple(w.shape) != xv.shape:
        raise ValueError(f"bincount: the weights and x must have the same length (shapes "
                         f"{tuple(w.shape)} and {xv.shape})")
    w = _as_tensor(_cast(w, _np.float64))
    return _core.scatter_add(w, index=(xv.astype(_np.intp),), shape=(length,))


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram: ``(hist, bin_edges)``. Counts are constants; with ``weights`` the
    histogram is differentiable in the weights (also with ``density``). ``a`` must be
    concrete (it decides the bins); the edges are constants.

    >>> import hessgrad.numpy as hnp
    >>> hist, edges = hnp.histogram([0.1, 0.4, 0.45, 0.9], bins=2, range=(0.0, 1.0))
    >>> hist.tolist(), edges.tolist()
    ([3, 1], [0.0, 0.5, 1.0])
    """
    av = _np.asarray(_concrete("histogram", _array("histogram", a), "a",
                               "the data decides the bins"))
    bins = _stacked(bins, "histogram", "bins")
    bins = _value(bins) if isinstance(bins, _Tensor) else bins
    counts, edges = _np.histogram(av, bins=bins, range=range)
    if weights is None:
        if density:
            counts = counts / _np.diff(edges).astype(float) / counts.sum()
        return _const(counts), _const(edges)
    w = _array("histogram", weights, "weights")
    if tuple(w.shape) != av.shape:
        raise ValueError(f"histogram: weights should have the same shape as a (shapes "
                         f"{tuple(w.shape)} and {av.shape})")
    nbins = len(edges) - 1
    flat = av.reshape(-1)
    idx = _np.searchsorted(edges, flat, side="right") - 1
    idx[flat == edges[-1]] = nbins - 1
    keep = (idx >= 0) & (idx < nbins) & (flat >= edges[0]) & (flat <= edges[-1])
    wflat = _core.reshape(_as_tensor(w), shape=(-1,))
    picked = _core.getitem(wflat, index=(_np.nonzero(keep)[0],))
    hist = _core.scatter_add(picked, index=(idx[keep],), shape=(nbins,))
    if density:
        hist = hist / _np.diff(edges).astype(float) / _red.sum(hist)
    return hist, _const(edges)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):  # noqa: A002
    """numpy.unique in eager mode (its result's length depends on the data, so it cannot be
    traced). The unique values are differentiable: each takes the gradient of its first
    occurrence; indices, inverse and counts are constants.

    >>> import hessgrad.numpy as hnp
    >>> hnp.unique([3.0, 1.0, 3.0]).tolist()
    [1.0, 3.0]
    """
    arr = _array("unique", ar, "ar")
    val = _concrete("unique", arr, "ar", "the number of unique values depends on the data")
    kwargs = dict(return_index=True, return_inverse=return_inverse,
                  return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    if not sorted:
        kwargs["sorted"] = False
    res = _np.unique(val, **kwargs)
    values, index = res[0], res[1]
    if isinstance(arr, _Tensor):
        values = _ix.take(arr, index, axis=axis)
    else:
        values = _const(values)
    out = [values]
    if return_index:
        out.append(_const(index))
    out.extend(_const(r) for r in res[2:])
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ["nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nancumsum", "nancumprod",
           "nanmedian", "nanquantile", "nanpercentile", "cumulative_sum", "cumulative_prod",
           "interp", "convolve", "correlate", "cov", "corrcoef",
           "ediff1d", "gradient", "trapezoid", "isclose", "allclose", "array_equal",
           "array_equiv", "isreal", "iscomplex", "isrealobj", "iscomplexobj", "nan_to_num",
           "searchsorted", "digitize", "bincount", "histogram", "unique"]
