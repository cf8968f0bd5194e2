"""Selection and sorting by order: ``partition`` / ``argpartition``, the NaN-ignoring
``nanargmax`` / ``nanargmin``, ``lexsort`` and ``sort_complex``.

numpy leaves the order within each side of a partition unspecified; here both sides come out
sorted (the whole axis is sorted, one of the arrangements numpy allows), so ``partition`` is
``sort`` with its derivative (the gradient follows the permutation, ties share it evenly) and
``take_along_axis(a, argpartition(a, k), axis) == partition(a, k)`` holds.
"""

import operator

import numpy as _np

from ..ops import core as _core, elementwise as _ew, shape as _sh, sorting as _sorting
from . import _reductions as _r
from ._arraylike import constant as _constant
from ._arguments import _array, _is_float, _symbolic, _value
from ._arraylike import has_tensor as _has_tensor


def _kths(fname, kth, n):
    """``kth`` (an int or a sequence of them) checked against the axis length ``n``."""
    seq = list(_np.ravel(kth)) if isinstance(kth, (list, tuple, _np.ndarray)) else [kth]
    out = []
    for k in seq:
        if isinstance(k, (bool, _np.bool_)):
            raise TypeError(f"{fname}: kth must be an integer (or a sequence of them), got a "
                            f"boolean {k!r}")
        try:
            k = operator.index(k)
        except TypeError:
            raise TypeError(f"{fname}: kth must be an integer (or a sequence of them), got "
                            f"{kth!r}") from None
        if not -n <= k < n:
            raise ValueError(f"{fname}: kth(={k}) out of bounds ({n}) for an axis of length {n}")
        out.append(k)
    return out


def _partition_args(fname, a, kth, axis, kind, order):
    if kind != "introselect":
        raise ValueError(f"{fname}: kind must be 'introselect', got {kind!r}")
    if order is not None:
        raise NotImplementedError(f"{fname}: order= (structured arrays) is not supported")
    a = _array(fname, a)
    if axis is None:
        a, axis = _core.reshape(a, shape=(-1,)), 0
    elif len(a.shape) == 0:
        raise _np.exceptions.AxisError(f"{fname}: axis {axis} is out of bounds for array of "
                                       "dimension 0 (argument 'a' has shape ())")
    axis = _r._one_axis(fname, a, axis)
    _kths(fname, _constant(kth, fname, "kth"), a.shape[axis])
    return a, axis


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``a`` rearranged along ``axis`` so that each ``kth`` position holds the value it would
    have sorted, smaller values before it and larger after (numpy.partition); here the whole
    axis comes out sorted. Differentiable like ``sort``.

    Args:
        a: an array or tensor; ``axis=None`` partitions the flattened array.
        kth: an int or a sequence of ints (negative counts from the end).
    Returns:
        A tensor of ``a``'s shape (flattened for ``axis=None``).
    Raises:
        ValueError: a ``kth`` out of bounds, or ``kind`` other than 'introselect'.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> float(hnp.partition([3.0, 1.0, 2.0, 5.0], 2)[2])
    3.0
    >>> hg.grad(lambda x: hnp.partition(x, 1)[1])(np.array([3.0, 1.0, 2.0]))
    array([0., 0., 1.])
    """
    a, axis = _partition_args("partition", a, kth, axis, kind, order)
    return _r.sort(a, axis=axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices that partition ``a`` along ``axis`` (numpy.argpartition; here a stable sort
    order, consistent with ``partition``); an integer constant.

    >>> import hessgrad.numpy as hnp
    >>> hnp.argpartition([3.0, 1.0, 2.0], 0).tolist()
    [1, 2, 0]
    """
    a, axis = _partition_args("argpartition", a, kth, axis, kind, order)
    return _r.argsort(a, axis=axis, kind="stable")


def _nan_arg_extremum(fname, fill, plain):
    def arg(a, axis=None, out=None, *, keepdims=False):
        _r._no_out(fname, out)
        a = _array(fname, a)
        if not _is_float(a):
            return plain(a, axis=axis, keepdims=keepdims)
        nan = _ew.isnan(a)
        res = plain(_ew.where(nan, _np.asarray(fill, a.dtype), a), axis=axis,
                    keepdims=keepdims)
        all_nan = _r.all(nan, axis=axis, keepdims=keepdims)
        if not _symbolic(all_nan):
            if _np.any(_value(all_nan)):
                raise ValueError(f"{fname}: All-NaN slice encountered (argument 'a' has shape "
                                 f"{tuple(a.shape)}, axis {axis})")
            return res
        # traced: the slices' values are unknown, so (as jax.numpy) they answer -1
        return _ew.where(all_nan, _np.asarray(-1, res.dtype), res)

    arg.__name__ = arg.__qualname__ = fname
    return arg


nanargmax = _nan_arg_extremum("nanargmax", -_np.inf, _r.argmax)
nanargmax.__doc__ = """Index of the largest value along ``axis`` ignoring NaNs (an integer
    constant). numpy raises ValueError for an all-NaN slice; traced functions cannot see the
    values, so there such a slice gives -1 (as in jax.numpy).

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> int(hnp.nanargmax([1.0, np.nan, 3.0]))
    2
    """
nanargmin = _nan_arg_extremum("nanargmin", _np.inf, _r.argmin)
nanargmin.__doc__ = """Index of the smallest value along ``axis`` ignoring NaNs; see
    ``nanargmax``.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> int(hnp.nanargmin([np.nan, 2.0, 1.0]))
    2
    """

def lexsort(keys, axis=-1):
    """Indices that sort by the last key, ties broken by the one before, and so on
    (numpy.lexsort); ``keys`` is a sequence of equal-shaped arrays or an array whose first
    axis runs over the keys. An integer constant; traces.

    Raises:
        ValueError: keys of different shapes.

    >>> import hessgrad.numpy as hnp
    >>> hnp.lexsort(([1, 0, 1, 0], [2.0, 2.0, 1.0, 1.0])).tolist()
    [3, 2, 1, 0]
    """
    if isinstance(keys, (list, tuple)):
        if not keys:
            raise TypeError("lexsort: need sequence of keys with len > 0")
        if _has_tensor(keys):
            keys = _sh.stack_arrays(keys, 0, "lexsort")
        else:
            keys = [_np.asarray(k) for k in keys]
            shapes = {k.shape for k in keys}
            if len(shapes) > 1:
                raise ValueError(f"lexsort: all keys need to be the same shape, got "
                                 f"{sorted(shapes)}")
            return _core.constant(_np.lexsort(keys, axis=axis))
    keys = _array("lexsort", keys, "keys")
    if len(keys.shape) == 0:
        raise TypeError("lexsort: need sequence of keys with len > 0 (argument 'keys' is 0-d)")
    if len(keys.shape) > 1:
        _r._one_axis("lexsort", _core.getitem(keys, index=0), axis)
    return _sorting.lexsort(keys, axis=axis)


def sort_complex(a):
    """``a`` sorted along its last axis by real part, then imaginary part, as complex
    (numpy.sort_complex: complex64 for small integers, complex128 otherwise); differentiable
    like ``sort``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.sort_complex([3.0, 1.0, 2.0]).tolist()
    [(1+0j), (2+0j), (3+0j)]
    """
    a = _array("sort_complex", a)
    b = _r.sort(a)
    dtype = _np.dtype(b.dtype)
    if dtype.kind == "c":
        return b
    target = {"b": "F", "h": "F", "B": "F", "H": "F", "g": "G"}.get(dtype.char, "D")
    return _core.cast(b, dtype=_np.dtype(target))


__all__ = ["partition", "argpartition", "nanargmax", "nanargmin", "lexsort", "sort_complex"]
