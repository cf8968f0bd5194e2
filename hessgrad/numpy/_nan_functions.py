"""NaN-ignoring statistics: ``nanmax`` ... ``nanpercentile``, ``nancumsum``, ``nancumprod``
(NaNs count as absent: the gradient of a NaN element is zero).

>>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
>>> hg.grad(lambda x: hnp.nanmax(x))(np.array([1.0, np.nan, 3.0]))
array([0., 0., 1.])
"""

import numpy as _np

from ..ops import core as _core, elementwise as _ew, indexing as _ix, reduction as _red, \
    shape as _sh, sorting as _sorting
from . import _reductions as _r
from ._arguments import (_array, _as_tensor, _dtype, _is_float, _out_shape, _reduced_axes,
                         _scalar, _warn_if)
from ._out import writes_out as _writes_out


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


# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("nanmax", 2, "unsafe"),
    ("nanmin", 2, "unsafe"),
    ("nanprod", 3, "unsafe"),
    ("nanvar", 3, "unsafe"),
    ("nanstd", 3, "unsafe"),
    ("nanmedian", 2, "unsafe"),
    ("nanquantile", 3, "unsafe"),
    ("nanpercentile", 3, "unsafe"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["nanmax", "nanmin", "nanprod", "nanvar", "nanstd", "nancumsum", "nancumprod",
           "nanmedian", "nanquantile", "nanpercentile"]
