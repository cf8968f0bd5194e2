"""What the numpy functions do with their arguments, shared: arrays (tensors kept, nested
sequences stacked), values that must be concrete, dtypes, casts, axes."""

import warnings

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, current as _current
from ..ops import core as _core
from . import _reductions as _r
from ._arraylike import asarray as _asarray


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
    return _current(x)._value if isinstance(x, _Tensor) else _np.asarray(x)


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
