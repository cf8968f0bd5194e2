"""Reductions, cumulative ops, statistics and sorting with numpy's names and signatures.

``axis`` is an int, a tuple, negative or None and ``keepdims`` keeps reduced axes, as in
numpy. ``out=`` is accepted for signature compatibility but must be None: hessgrad arrays are
immutable. Every function differentiates to any order (``argmax``, ``argsort``, ``all``, ...
return constants).
"""

import builtins
import warnings

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, reduction as _red, sorting as _sorting
from ._arraylike import asarray as _asarray, stacked as _stacked
from ._out import writes_out as _writes_out


# --- argument handling --------------------------------------------------------------------
def _array(fname, a, what="a"):
    a = _asarray(a, fname, what)
    if isinstance(a, _Tensor) and (a.shape is None or None in a.shape):
        raise ValueError(f"{fname}: argument {what!r} needs a static shape, got {a.shape}")
    return a


def _no_out(fname, out):
    if out is not None:  # the functions decorated at the end of this module never see one
        raise TypeError(f"{fname}: out= is not supported here; use the returned value (or "
                        f"write it into an array: `out[...] = result`)")


def _axes(fname, a, axis, scalar_ok=True):
    """``axis`` as a sorted tuple of non-negative axes, or None for all of them.

    Like numpy's ufunc reductions, a 0-d ``a`` accepts a bare ``axis`` of 0 or -1 (reducing
    nothing) when ``scalar_ok``.
    """
    if axis is None:
        return None
    ndim = len(a.shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for ax in axes:
        if isinstance(ax, (bool, _np.bool_)) or not isinstance(ax, (int, _np.integer)):
            raise TypeError(f"{fname}: axis must be an int, a tuple of ints or None, got "
                            f"{axis!r}")
    if ndim == 0 and scalar_ok and not isinstance(axis, (tuple, list)) and axis in (0, -1):
        return ()
    try:
        return tuple(sorted(_normalize_axis_tuple(axes, ndim, "axis")))
    except _np.exceptions.AxisError as exc:
        raise _np.exceptions.AxisError(f"{fname}: {exc} (argument 'a' has shape {a.shape})") \
            from None
    except ValueError as exc:
        raise ValueError(f"{fname}: {exc}: axis={axis!r} for argument 'a' of shape "
                         f"{a.shape}") from None


def _one_axis(fname, a, axis):
    """An integer axis (or None), checked and made non-negative."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{fname}: axis must be an int or None, got the tuple {axis!r}")
    axes = _axes(fname, a, axis)
    return axes[0] if axes else 0


def _cast(a, dtype):
    if dtype is None or _np.dtype(dtype) == a.dtype:
        return a
    return _core.cast(a, dtype=_np.dtype(dtype))


def _empty_reduction_check(fname, ufunc_name, a, axes, has_initial=False):
    """numpy refuses max/min/argmax over an empty slice; say so with our name and shapes."""
    if has_initial or a.size != 0:
        return
    shape = a.shape
    reduced = range(len(shape)) if axes is None else axes
    out_size = int(_np.prod([d for i, d in enumerate(shape) if i not in reduced],
                            dtype=_np.int64))
    if out_size != 0 or axes is None:
        raise ValueError(f"{fname}: zero-size array to reduction operation {ufunc_name} which "
                         f"has no identity (argument 'a' has shape {shape}, axis "
                         f"{'None' if axes is None else axes})")


def _masked(fname, a, where, fill):
    if where is True or where is None:
        return a
    mask = where.numpy() if isinstance(where, _Tensor) and not where.is_symbolic else where
    if isinstance(mask, _Tensor):
        return _ew.where(mask, a, fill)
    mask = _np.asarray(mask, dtype=bool)
    try:
        _np.broadcast_shapes(mask.shape, a.shape)
    except ValueError:
        raise ValueError(f"{fname}: where= of shape {mask.shape} does not broadcast to argument "
                         f"'a' of shape {a.shape}") from None
    if mask.shape != a.shape:
        mask = _np.broadcast_to(mask, a.shape)
    return _ew.where(mask, a, fill)


# --- sums, products, means ----------------------------------------------------------------
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=True):
    """Sum of array elements over ``axis`` (the sum of an empty slice is 0).

    Args:
        a: array-like or tensor.
        axis: int, tuple of ints, negative, or None (all axes).
        dtype: accumulate in (and return) this dtype.
        out: must be None.
        keepdims: keep the reduced axes with length 1.
        initial: a starting value added to the sum.
        where: a boolean mask of elements to include.
    Returns:
        The sum, a tensor.
    Raises:
        AxisError: an axis is out of range. TypeError: ``out`` is given.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> hnp.sum(hnp.ones((2, 3)), axis=-1).numpy()
    array([3., 3.])
    """
    _no_out("sum", out)
    a = _cast(_array("sum", a), dtype)
    axes = _axes("sum", a, axis)
    res = _red.sum(_masked("sum", a, where, 0), axis=axes, keepdims=keepdims)
    return res if initial is None else res + initial


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product of array elements over ``axis``; exact derivatives at zeros (no division).

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.prod(x))(np.array([2.0, 0.0, 3.0]))
    array([0., 6., 0.])
    """
    _no_out("prod", out)
    a = _cast(_array("prod", a), dtype)
    axes = _axes("prod", a, axis)
    res = _red.prod(_masked("prod", a, where, 1), axis=axes, keepdims=keepdims)
    return res if initial is None else res * initial


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis`` (NaN with numpy's warning for an empty slice).

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.mean([1.0, 2.0, 6.0]))
    3.0
    """
    _no_out("mean", out)
    a = _cast(_array("mean", a), dtype)
    axes = _axes("mean", a, axis, scalar_ok=False)
    if where is True or where is None:
        return _red.mean(a, axis=axes, keepdims=keepdims)
    total = _red.sum(_masked("mean", a, where, 0), axis=axes, keepdims=keepdims)
    ones = _np.ones(a.shape, a.dtype if a.dtype.kind in "fc" else _np.float64)  # keeps float32
    count = _red.sum(_masked("mean", ones, where, 0), axis=axes, keepdims=keepdims)
    return total / count


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average ``sum(a * w) / sum(w)`` over ``axis``; ``weights`` are differentiable.

    ``weights`` has ``a``'s shape, or is 1-D along a single ``axis``. With ``returned`` the
    sum of weights (broadcast to the result's shape) is returned too.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.average([1.0, 3.0], weights=[3.0, 1.0]))
    1.5
    """
    a = _array("average", a)
    axes = _axes("average", a, axis, scalar_ok=False)
    if weights is None:
        avg = _red.mean(a, axis=axes, keepdims=keepdims)
        if avg.size == 0:  # numpy divides a.size by avg.size here
            raise ZeroDivisionError(f"average: the result is empty (argument 'a' has shape "
                                    f"{a.shape}, axis {axis}), numpy divides by its size")
        scale = _np.asarray(a.size // builtins.max(int(_np.prod(avg.shape, dtype=_np.int64)),
                                                   1), dtype=avg.dtype)
        scl = _np.broadcast_to(scale, avg.shape).copy()
    else:
        w = _array("average", weights)
        if w.shape != a.shape:
            if axis is None:
                raise TypeError(f"average: axis must be specified when shapes of a and "
                                f"weights differ (a has shape {a.shape}, weights "
                                f"{w.shape})")
            if len(w.shape) != 1 or axes is None or len(axes) != 1:
                raise TypeError(f"average: 1D weights expected when shapes of a and weights "
                                f"differ (a has shape {a.shape}, weights {w.shape}, "
                                f"axis {axis})")
            if w.shape[0] != a.shape[axes[0]]:
                raise ValueError(f"average: length of weights ({w.shape[0]}) differs from "
                                 f"that of a along axis {axis} (a has shape {a.shape})")
            w = _core.reshape(w, shape=tuple(-1 if i == axes[0] else 1
                                             for i in range(len(a.shape))))
            w = _core.broadcast_to(w, shape=a.shape)
        scl = _red.sum(w, axis=axes, keepdims=keepdims)
        if not getattr(scl, "is_symbolic", False) and _np.any(
                (scl.numpy() if hasattr(scl, "numpy") else _np.asarray(scl)) == 0.0):
            raise ZeroDivisionError("average: weights sum to zero, can't be normalized "
                                    f"(weights of shape {w.shape})")
        avg = _red.sum(a * w, axis=axes, keepdims=keepdims) / scl
        if scl.shape != avg.shape:
            scl = _core.broadcast_to(scl, shape=avg.shape)
    return (avg, scl) if returned else avg


def _ddof(fname, ddof, correction):
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{fname}: ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _stat(fname, fn, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    _no_out(fname, out)
    if mean is not None or not (where is True or where is None):
        raise NotImplementedError(f"{fname}: the mean= and where= arguments are not supported")
    a = _cast(_array(fname, a), dtype)
    axes = _axes(fname, a, axis, scalar_ok=False)
    ddof = _ddof(fname, ddof, correction)
    n = int(_np.prod([a.shape[i] for i in (range(len(a.shape)) if axes is None else axes)],
                     dtype=_np.int64))
    if n - ddof <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
    # real for complex a, but numpy accumulates (and returns) in a given complex dtype
    return _cast(fn(a, axis=axes, ddof=ddof, keepdims=keepdims), dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Variance ``sum((a - mean)**2) / (n - ddof)`` over ``axis``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.var([1.0, 2.0, 3.0], ddof=1))
    1.0
    """
    return _stat("var", _red.var, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """Standard deviation over ``axis``; its derivative on a constant slice is 0 (not NaN).

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.std(x))(np.array([2.0, 2.0, 2.0]))
    array([0., 0., 0.])
    """
    return _stat("std", _red.std, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


# --- extrema ------------------------------------------------------------------------------
def _extremum(fname, ufunc_name, prim, pick):
    def reduce(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        _no_out(fname, out)
        a = _array(fname, a)
        axes = _axes(fname, a, axis)
        if not (where is True or where is None):
            if initial is None:
                raise ValueError(f"{fname}: reduction operation {ufunc_name} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'")
            a = _masked(fname, a, where, initial)
        _empty_reduction_check(fname, ufunc_name, a, axes, initial is not None)
        if initial is not None and a.size == 0:
            shape = _red.kept_shape(a.shape, axes) if keepdims else tuple(
                d for i, d in enumerate(a.shape)
                if i not in (range(len(a.shape)) if axes is None else axes))
            return _core.constant(_np.full(shape, initial, dtype=_np.result_type(a.dtype,
                                                                                 initial)))
        res = prim(a, axis=axes, keepdims=keepdims)
        return res if initial is None else pick(res, initial)

    reduce.__name__ = reduce.__qualname__ = fname
    reduce.__doc__ = f"""The {ufunc_name} over ``axis``; tied entries share the gradient
    evenly. An empty slice raises ValueError unless ``initial`` is given.

    >>> import hessgrad.numpy as hnp
    >>> hnp.{fname}([[1.0, 5.0], [4.0, 2.0]], axis=0).numpy()
    array({[4.0, 5.0] if ufunc_name == "maximum" else [1.0, 2.0]})
    """.replace("[4.0, 5.0]", "[4., 5.]").replace("[1.0, 2.0]", "[1., 2.]")
    return reduce


max = _extremum("max", "maximum", _red.max, _ew.maximum)  # noqa: A001
min = _extremum("min", "minimum", _red.min, _ew.minimum)  # noqa: A001
amax = _extremum("amax", "maximum", _red.max, _ew.maximum)
amin = _extremum("amin", "minimum", _red.min, _ew.minimum)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range ``max - min`` over ``axis``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.ptp([3.0, -1.0, 2.0]))
    4.0
    """
    _no_out("ptp", out)
    a = _array("ptp", a)
    axes = _axes("ptp", a, axis)
    _empty_reduction_check("ptp", "maximum", a, axes)
    return _red.ptp(a, axis=axes, keepdims=keepdims)


def _arg_extremum(fname, prim):
    def arg(a, axis=None, out=None, *, keepdims=False):
        _no_out(fname, out)
        a = _array(fname, a)
        ax = _one_axis(fname, a, axis)
        if a.size == 0 and (ax is None or a.shape[ax] == 0) if len(a.shape) else False:
            raise ValueError(f"{fname}: attempt to get {fname} of an empty sequence (argument "
                             f"'a' has shape {a.shape}, axis {axis})")
        if ax is not None and len(a.shape) == 0:
            ax = None
        return prim(a, axis=ax, keepdims=keepdims)

    arg.__name__ = arg.__qualname__ = fname
    arg.__doc__ = f"""Index of the first {fname[3:]}imum along ``axis`` (flattened when None);
    an integer constant.

    >>> import hessgrad.numpy as hnp
    >>> int(hnp.{fname}([1.0, 7.0, -2.0]))
    {1 if fname == "argmax" else 2}
    """
    return arg


argmax = _arg_extremum("argmax", _red.argmax)
argmin = _arg_extremum("argmin", _red.argmin)


# --- logic and counting -------------------------------------------------------------------
def _logical(fname, prim):
    def reduce(a, axis=None, out=None, keepdims=False, *, where=True):
        _no_out(fname, out)
        a = _array(fname, a)
        axes = _axes(fname, a, axis)
        a = _masked(fname, a, where, fname == "all")
        return prim(a, axis=axes, keepdims=keepdims)

    reduce.__name__ = reduce.__qualname__ = fname
    reduce.__doc__ = f"""Whether {'all' if fname == 'all' else 'any'} elements along ``axis``
    are true (a boolean constant).

    >>> import hessgrad.numpy as hnp
    >>> bool(hnp.{fname}([1.0, 0.0]))
    {fname == 'any'}
    """
    return reduce


all = _logical("all", _red.all)  # noqa: A001
any = _logical("any", _red.any)  # noqa: A001


def count_nonzero(a, axis=None, *, keepdims=False):
    """Number of non-zero entries along ``axis`` (an integer constant).

    >>> import hessgrad.numpy as hnp
    >>> int(hnp.count_nonzero([1.0, 0.0, 2.0]))
    2
    """
    a = _array("count_nonzero", a)
    return _red.count_nonzero(a, axis=_axes("count_nonzero", a, axis), keepdims=keepdims)


# --- NaN-ignoring -------------------------------------------------------------------------
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum treating NaN as zero; the derivative at NaN entries is 0.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nansum([1.0, np.nan, 2.0]))
    3.0
    """
    _no_out("nansum", out)
    a = _cast(_array("nansum", a), dtype)
    axes = _axes("nansum", a, axis)
    a = _masked("nansum", a, where, 0)
    res = _red.nansum(a, axis=axes, keepdims=keepdims) if a.dtype.kind in "fc" else \
        _red.sum(a, axis=axes, keepdims=keepdims)
    return res if initial is None else res + initial


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Mean of the non-NaN entries; the derivative at NaN entries is 0.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.nanmean([1.0, np.nan, 3.0]))
    2.0
    """
    _no_out("nanmean", out)
    if not (where is True or where is None):
        raise NotImplementedError("nanmean: the where= argument is not supported")
    a = _cast(_array("nanmean", a), dtype)
    axes = _axes("nanmean", a, axis)
    if a.dtype.kind not in "fc":
        return _red.mean(a, axis=axes, keepdims=keepdims)
    return _red.nanmean(a, axis=axes, keepdims=keepdims)


# --- cumulative ---------------------------------------------------------------------------
def _cumulative(fname, prim):
    def scan(a, axis=None, dtype=None, out=None):
        _no_out(fname, out)
        a = _cast(_array(fname, a), dtype)
        if axis is None or len(a.shape) == 0:
            if axis is not None:
                _one_axis(fname, a, axis)
            a = _core.reshape(a, shape=(-1,))
            axis = 0
        return prim(a, axis=_one_axis(fname, a, axis))

    scan.__name__ = scan.__qualname__ = fname
    return scan


cumsum = _cumulative("cumsum", _red.cumsum)
cumsum.__doc__ = """Cumulative sum along ``axis`` (of the flattened array when None).

    >>> import hessgrad.numpy as hnp
    >>> hnp.cumsum([1.0, 2.0, 3.0]).numpy()
    array([1., 3., 6.])
    """
cumprod = _cumulative("cumprod", _red.cumprod)
cumprod.__doc__ = """Cumulative product along ``axis``; exact derivatives at zeros.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.sum(hnp.cumprod(x)))(np.array([2.0, 0.0, 3.0]))
    array([1., 8., 0.])
    """


# --- sorting and order statistics ---------------------------------------------------------
def _sort_args(fname, a, axis, kind, order):
    if order is not None:
        raise NotImplementedError(f"{fname}: order= (structured arrays) is not supported")
    a = _array(fname, a)
    if axis is None:
        return _core.reshape(a, shape=(-1,)), 0
    if len(a.shape) == 0:
        if fname == "argsort" and not isinstance(axis, (tuple, list)) and axis in (0, -1):
            return _core.reshape(a, shape=(1,)), 0  # numpy sorts a 0-d array as 1-d here
        raise _np.exceptions.AxisError(f"{fname}: axis {axis} is out of bounds for array of "
                                       "dimension 0 (argument 'a' has shape ())")
    return a, _one_axis(fname, a, axis)


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Sorted copy along ``axis`` (flattened when None); the gradient follows the permutation.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.sort(x)[0])(np.array([3.0, 1.0, 2.0]))
    array([0., 1., 0.])
    """
    a, axis = _sort_args("sort", a, axis, kind, order)
    return _sorting.sort(a, axis=axis, kind=kind, stable=stable)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` along ``axis`` (an integer constant).

    >>> import hessgrad.numpy as hnp
    >>> hnp.argsort([3.0, 1.0, 2.0]).numpy()
    array([1, 2, 0])
    """
    a, axis = _sort_args("argsort", a, axis, kind, order)
    return _sorting.argsort(a, axis=axis, kind=kind, stable=stable)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis`` (mean of the two middle values for an even count).

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> hg.grad(lambda x: hnp.median(x))(np.array([4.0, 1.0, 3.0, 2.0]))
    array([0. , 0. , 0.5, 0.5])
    """
    _no_out("median", out)
    a = _array("median", a)
    return _sorting.median(a, axis=_axes("median", a, axis, scalar_ok=False), keepdims=keepdims)


def _quantile_q(fname, q, scale):
    """``q`` as a numpy array of quantiles in [0, 1], whether it was a Python number, and (for
    a float tensor ``q``) the quantiles as a tensor, so that results differentiate in it."""
    q_tensor = None
    q = _stacked(q, fname, "q")
    if isinstance(q, _Tensor):
        if q.is_symbolic:
            raise TypeError(f"{fname}: q must be known while tracing (a Python number or a "
                            f"numpy array), got a symbolic tensor of shape {q.shape}")
        if q.dtype.kind == "f":
            q_tensor = q if scale == 1 else q / float(scale)
        q = q.numpy()
    weak = type(q) in (int, float)
    qa = _np.asarray(q)
    if qa.dtype.kind not in "iuf":
        raise TypeError(f"{fname}: q must be real numbers, got dtype {qa.dtype}")
    if scale != 1:
        qa = _np.true_divide(qa, scale)
    if not (_np.all(qa >= 0) and _np.all(qa <= 1)):
        bounds = "[0, 100]" if scale != 1 else "[0, 1]"
        raise ValueError(f"{fname}: {'Percentiles' if scale != 1 else 'Quantiles'} must be "
                         f"in the range {bounds}, got q={q!r}")
    return qa, weak, q_tensor


def _check_quantile_options(fname, out, method, weights, interpolation):
    """The options quantile-like functions support: no out=, method 'linear', no weights."""
    _no_out(fname, out)
    if interpolation is not None:
        method = interpolation
    if method != "linear":
        raise NotImplementedError(f"{fname}: only method='linear' is supported, got "
                                  f"{method!r}")
    if weights is not None:
        raise NotImplementedError(f"{fname}: weights= is not supported")
    return method


def _quantile_common(fname, a, q, axis, out, method, keepdims, weights, interpolation, scale):
    method = _check_quantile_options(fname, out, method, weights, interpolation)
    a = _array(fname, a)
    qa, weak, q_tensor = _quantile_q(fname, q, scale)
    axes = _axes(fname, a, axis, scalar_ok=False)
    if a.size == 0 and builtins.any(
            a.shape[i] == 0 for i in (range(len(a.shape)) if axes is None else axes)):
        raise IndexError(f"{fname}: cannot take a quantile of an empty slice (argument 'a' "
                         f"has shape {a.shape}, axis {axis})")
    return _sorting.quantile(a, qa, axis=axes, keepdims=keepdims, weak_q=weak,
                             q_tensor=q_tensor)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th quantiles (``q`` in [0, 1], static) over ``axis``, numpy's "linear"
    method; the result has shape ``q.shape + reduced shape``. Differentiable in ``a``, and in
    an eager tensor ``q`` (a traced ``q`` must be a constant).

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.quantile([1.0, 2.0, 3.0, 4.0], 0.25))
    1.75
    """
    return _quantile_common("quantile", a, q, axis, out, method, keepdims, weights,
                            interpolation, 1)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """The ``q``-th percentiles (``q`` in [0, 100], static) over ``axis``; see ``quantile``.

    >>> import hessgrad.numpy as hnp
    >>> float(hnp.percentile([1.0, 2.0, 3.0, 4.0], 50))
    2.5
    """
    return _quantile_common("percentile", a, q, axis, out, method, keepdims, weights,
                            interpolation, 100)


# numpy's out=: the result written into the array given (in place), cast unsafely
for _name, _position in (("sum", 3), ("prod", 3), ("mean", 3), ("var", 3), ("std", 3),
                         ("max", 2), ("min", 2), ("amax", 2), ("amin", 2), ("ptp", 2),
                         ("argmax", 2), ("argmin", 2), ("all", 2), ("any", 2), ("nansum", 3),
                         ("nanmean", 3), ("cumsum", 3), ("cumprod", 3), ("median", 2),
                         ("quantile", 3), ("percentile", 3)):
    globals()[_name] = _writes_out(_name, _position)(globals()[_name])
del _name, _position

__all__ = ["sum", "prod", "mean", "average", "var", "std", "max", "min", "amax", "amin",
           "ptp", "argmax", "argmin", "all", "any", "count_nonzero", "nansum", "nanmean",
           "cumsum", "cumprod", "sort", "argsort", "median", "quantile", "percentile"]
