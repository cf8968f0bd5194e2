"""numpy's in-place writers ``fill_diagonal`` and ``put_along_axis``.

On a plain ``numpy.ndarray`` they do what numpy does: write in place and return None. Tensors
are immutable, so for them these follow jax.numpy: ``inplace=False`` must be passed and the
updated array is returned, differentiable in the array (at the entries not written) and in
the values written.
"""

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index as _normalize_axis_index

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core
from ._array_manipulation import resize
from ._arguments import _array, _as_tensor
from ._arraylike import has_tensor as _has_tensor


def _numpy_in_place(fname, a, values, inplace):
    """True when numpy itself should write into the ndarray ``a``; raises for a tensor
    written in place."""
    if not inplace:
        return False
    if isinstance(a, _Tensor):
        raise ValueError(f"{fname}: hessgrad tensors are immutable, so they cannot be updated "
                         f"in place; pass inplace=False to get the updated array (as in "
                         f"jax.numpy), e.g. a = hnp.{fname}(a, ..., inplace=False)")
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"{fname}: argument 'a' must be an array to be updated in place, got "
                        f"{type(a).__name__}; pass inplace=False to get a new array")
    if _has_tensor(values):
        raise TypeError(f"{fname}: writing a tensor into a numpy array in place would drop "
                        f"its gradient; pass inplace=False to get the updated array instead")
    return True


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """Write ``val`` (repeated as needed) on the main diagonal of ``a`` (numpy.fill_diagonal:
    ``a`` at least 2-D, all dimensions equal above 2-D; a tall 2-D matrix restarts its
    diagonal every ``ncols + 1`` rows when ``wrap``).

    Args:
        a: a numpy array (written in place, numpy's behaviour) or, with ``inplace=False``,
            any array or tensor.
        val: the value(s) to write, cast to ``a``'s dtype.
        wrap: continue the diagonal below a tall matrix's square part.
        inplace: jax.numpy's keyword; must be False for tensors.
    Returns:
        None when written in place, else the filled array (a tensor).
    Raises:
        ValueError: ``a`` below 2-D or of unequal dimensions; a tensor with ``inplace``.
        TypeError: a tensor ``val`` written into a numpy array in place.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.fill_diagonal(hnp.zeros((2, 3)), 5.0, inplace=False).tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    >>> a = np.zeros((2, 2)); hnp.fill_diagonal(a, 1.0); a.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if _numpy_in_place("fill_diagonal", a, val, inplace):
        return _np.fill_diagonal(a, val, wrap)
    a = _as_tensor(_array("fill_diagonal", a))
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {shape}")
    end = None
    if len(shape) == 2:
        step = shape[1] + 1
        if not wrap:
            end = shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError(f"fill_diagonal: All dimensions of input must be of equal length, "
                             f"got shape {shape}")
        step = 1 + int(_np.cumprod(shape[:-1]).sum())
    size = int(_np.prod(shape, dtype=_np.int64))
    where = _np.arange(size)[:end:step]
    values = resize(val, where.shape)
    flat = _core.reshape(a, shape=(size,)).at[where].set(values)
    return _core.reshape(flat, shape=shape)


def put_along_axis(arr, indices, values, axis, *, inplace=True):
    """Write ``values`` into ``arr`` at ``indices`` along ``axis`` (numpy.put_along_axis, the
    writing twin of ``take_along_axis``; for a repeated index the last write wins).

    Args:
        arr: a numpy array (written in place, numpy's behaviour) or, with ``inplace=False``,
            any array or tensor.
        indices: integers of ``arr``'s ndim (1-D when ``axis`` is None); concrete.
        values: broadcast to the indexed shape, cast to ``arr``'s dtype.
        axis: the axis, or None for the flattened ``arr`` (then the flattened result).
        inplace: jax.numpy's keyword; must be False for tensors.
    Returns:
        None when written in place, else the updated array (a tensor).
    Raises:
        ValueError: mismatched dimensions; a tensor with ``inplace``.

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.array([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> hnp.put_along_axis(a, hnp.argmax(a, axis=1, keepdims=True), 0.0, axis=1,
    ...                    inplace=False).tolist()
    [[10.0, 0.0, 20.0], [0.0, 40.0, 50.0]]
    """
    if _numpy_in_place("put_along_axis", arr, values, inplace):
        return _np.put_along_axis(arr, _np.asarray(indices), values, axis)
    arr = _as_tensor(_array("put_along_axis", arr, "arr"))
    idx = indices._value if isinstance(indices, _Tensor) and indices._value is not None \
        else indices
    if isinstance(idx, _Tensor):
        raise TypeError("put_along_axis: argument 'indices' must be concrete (a numpy array or "
                        "an eager tensor), not a symbolic tensor")
    idx = _np.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"put_along_axis: `indices` must be an integer array, got dtype "
                         f"{idx.dtype}")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"put_along_axis: when axis=None, `indices` must have a single "
                             f"dimension, got shape {idx.shape}")
        arr, axis = _core.reshape(arr, shape=(-1,)), 0
    shape = tuple(arr.shape)
    if idx.ndim != len(shape):
        raise ValueError(f"put_along_axis: `indices` and `arr` must have the same number of "
                         f"dimensions (shapes {idx.shape} and {shape})")
    try:
        axis = _normalize_axis_index(axis, len(shape))
    except _np.exceptions.AxisError:
        raise _np.exceptions.AxisError(f"put_along_axis: axis {axis} is out of bounds for an "
                                       f"array of dimension {len(shape)}") from None
    fancy = tuple(idx if i == axis else
                  _np.arange(d).reshape((1,) * i + (d,) + (1,) * (len(shape) - i - 1))
                  for i, d in enumerate(shape))
    return arr.at[fancy].set(values)


__all__ = ["fill_diagonal", "put_along_axis"]
