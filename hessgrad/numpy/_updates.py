"""numpy's in-place writers: ``fill_diagonal``, ``put_along_axis``, ``put``, ``copyto``,
``putmask``, ``place``.

They write in place and return None, as numpy's do: into a numpy array (given no tensor), or
into a hessgrad array (``hessgrad.ops.inplace``: differentiable in the array, at the entries
not written, and in the values written, to any order). ``fill_diagonal`` and
``put_along_axis`` also take jax.numpy's ``inplace=False``, which returns the updated array
and leaves ``a`` as it is.
"""

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index as _normalize_axis_index

from ..engine.tensor import Tensor as _Tensor, current as _current, dtype_of as _dtype_of, \
    shape_of as _shape_of
from ..ops import core as _core, elementwise as _ew, inplace as _ip
from ._array_manipulation import resize
from ._arguments import _array, _as_tensor
from ._arraylike import has_tensor as _has_tensor, stacked as _stacked


def _numpy_in_place(fname, a, values, inplace=True):
    """True when numpy itself should write into the ndarray ``a``; False for a hessgrad
    array (or ``inplace=False``). Tensors among the ``values`` then go to numpy as their
    values, which is refused for one being differentiated (numpy could not keep its
    derivative): see ``_numpy_values``."""
    if not inplace or isinstance(a, _Tensor):
        return False
    if not isinstance(a, _np.ndarray):
        raise TypeError(f"{fname}: the array written into must be an array, got "
                        f"{type(a).__name__} (numpy's {fname} takes no lists there either)")
    return True


def _numpy_values(x):
    """``x`` for numpy's own writers: tensors (also in lists) as their values; one being
    differentiated raises (see ``Tensor.__array__``): write into a hessgrad array instead."""
    if isinstance(x, _Tensor):
        return _np.asarray(x)
    if isinstance(x, (list, tuple)) and _has_tensor(x):
        return _np.asarray(_stacked(x, "numpy in-place writer"))
    return x


def _done(fname, a, updated, inplace):
    """``updated`` (the new value of ``a``) written into ``a`` (returns None), or returned
    with ``inplace=False``."""
    if not inplace:
        return updated
    _ip.check_writable(a, fname)
    _ip.assign(a, updated, fname)
    return None


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """Write ``val`` (repeated as needed) on the main diagonal of ``a`` (numpy.fill_diagonal:
    ``a`` at least 2-D, all dimensions equal above 2-D; a tall 2-D matrix restarts its
    diagonal every ``ncols + 1`` rows when ``wrap``).

    Args:
        a: a hessgrad or numpy array, written in place; with ``inplace=False`` any array or
            tensor, left as it is.
        val: the value(s) to write, cast to ``a``'s dtype.
        wrap: continue the diagonal below a tall matrix's square part.
        inplace: jax.numpy's keyword: False returns the filled array instead.
    Returns:
        None when written in place, else the filled array (a tensor).
    Raises:
        ValueError: ``a`` below 2-D or of unequal dimensions.
        TypeError: a tensor ``val`` written into a numpy array in place.

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.fill_diagonal(hnp.zeros((2, 3)), 5.0, inplace=False).tolist()
    [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0]]
    >>> a = hnp.zeros((2, 2)); hnp.fill_diagonal(a, 1.0); a.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if _numpy_in_place("fill_diagonal", a, val, inplace):
        return _np.fill_diagonal(a, _numpy_values(val), wrap)
    target = a
    a = _as_tensor(_array("fill_diagonal", _current(a)))
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
    return _done("fill_diagonal", target, _core.reshape(flat, shape=shape), inplace)


def put_along_axis(arr, indices, values, axis, *, inplace=True):
    """Write ``values`` into ``arr`` at ``indices`` along ``axis`` (numpy.put_along_axis, the
    writing twin of ``take_along_axis``; for a repeated index the last write wins).

    Args:
        arr: a hessgrad or numpy array, written in place; with ``inplace=False`` any array or
            tensor, left as it is.
        indices: integers of ``arr``'s ndim (1-D when ``axis`` is None); concrete.
        values: broadcast to the indexed shape, cast to ``arr``'s dtype.
        axis: the axis, or None for the flattened ``arr`` (then the flattened result).
        inplace: jax.numpy's keyword: False returns the updated array instead.
    Returns:
        None when written in place, else the updated array (a tensor).
    Raises:
        ValueError: mismatched dimensions.

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.array([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> hnp.put_along_axis(a, hnp.argmax(a, axis=1, keepdims=True), 0.0, axis=1,
    ...                    inplace=False).tolist()
    [[10.0, 0.0, 20.0], [0.0, 40.0, 50.0]]
    """
    if _numpy_in_place("put_along_axis", arr, values, inplace):
        return _np.put_along_axis(arr, _np.asarray(indices), _numpy_values(values), axis)
    target = arr
    arr = _as_tensor(_array("put_along_axis", _current(arr), "arr"))
    indices = _current(indices)
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
        if inplace:  # numpy writes the flattened positions of ``arr``
            flat = _core.reshape(arr, shape=(-1,))
            new = put_along_axis(flat, idx, values, 0, inplace=False)
            return _done("put_along_axis", target, _core.reshape(new, shape=arr.shape), True)
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
    return _done("put_along_axis", target, arr.at[fancy].set(values), inplace)


def put(a, ind, v, mode="raise"):
    """Write ``v`` at the flat positions ``ind`` of ``a``, in place (numpy.put: ``v`` is
    repeated if shorter than ``ind``; for a repeated position the last write wins).

    Args:
        a: a hessgrad array (or a numpy array, given no tensor).
        ind: integer positions in the flattened ``a``; concrete.
        v: the values, cast to ``a``'s dtype.
        mode: 'raise' (positions out of bounds raise IndexError), 'wrap' or 'clip'.
    Returns:
        None.
    Raises:
        IndexError: a position out of bounds with mode 'raise'.
        ValueError: an unknown mode.

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.zeros(4); hnp.put(a, [0, 2], [5.0, 6.0]); a.tolist()
    [5.0, 0.0, 6.0, 0.0]
    """
    if _numpy_in_place("put", a, v):
        return _np.put(a, _np.asarray(ind), _numpy_values(v), mode)
    _ip.check_writable(a, "put")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    shape = tuple(_shape_of(a))
    size = int(_np.prod(shape, dtype=_np.int64))
    ind = _np.asarray(_current(ind).numpy() if isinstance(ind, _Tensor) else ind)
    if ind.dtype.kind not in "iu":
        raise TypeError(f"put: indices must be integers, got dtype {ind.dtype}")
    ind = ind.reshape(-1)
    if ind.size and not size:
        raise IndexError("put: cannot replace elements of an empty array")
    if mode == "wrap":
        ind = ind % size
    elif mode == "clip":
        ind = _np.clip(ind, 0, size - 1)
    elif ind.size and (ind.min() < -size or ind.max() >= size):
        bad = ind[(ind < -size) | (ind >= size)][0]
        raise IndexError(f"put: index {bad} is out of bounds for an array of size {size} "
                         f"(shape {shape})")
    if not ind.size:
        return None
    values = resize(_stacked(v, "put", "v"), ind.shape)
    _ip.setitem(a, _np.unravel_index(ind % size, shape), values)
    return None


def copyto(dst, src, casting="same_kind", where=True):
    """Copy ``src`` (broadcast) into ``dst`` in place, where ``where`` is True (numpy.copyto).

    Args:
        dst: a hessgrad array (or a numpy array, given no tensor).
        src: the values; cast to ``dst``'s dtype as ``casting`` allows.
        casting: numpy's casting rule ('no', 'equiv', 'safe', 'same_kind', 'unsafe').
        where: a boolean mask broadcast to ``dst`` (a tensor too, also a traced one).
    Returns:
        None.
    Raises:
        TypeError: ``src`` cannot be cast to ``dst``'s dtype by ``casting``.
        ValueError: ``src`` or ``where`` does not broadcast to ``dst``'s shape.

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.zeros(3); hnp.copyto(a, [1.0, 2.0, 3.0], where=[True, False, True]); a.tolist()
    [1.0, 0.0, 3.0]
    """
    if _numpy_in_place("copyto", dst, [src, where]):
        return _np.copyto(dst, _numpy_values(src), casting=casting, where=_numpy_values(where))
    _ip.check_writable(dst, "copyto")
    src = _stacked(src, "copyto", "src")
    if isinstance(src, (list, tuple)):
        src = _np.asarray(src)
    target = _current(dst)
    s_dtype, d_dtype = _np.dtype(_dtype_of(src)), _np.dtype(target.dtype)
    if isinstance(src, _Tensor) or isinstance(src, _np.ndarray):
        castable = _np.can_cast(s_dtype, d_dtype, casting)
    else:  # a Python number casts as its value allows (numpy's weak scalars)
        castable = _np.can_cast(_np.result_type(src, d_dtype), d_dtype, casting) or \
            casting == "unsafe"
    if not castable:
        raise TypeError(f"copyto: Cannot cast array data from {s_dtype!r} to {d_dtype!r} "
                        f"according to the rule {casting!r}")
    shape = tuple(target.shape)
    try:
        if _np.broadcast_shapes(tuple(_shape_of(src)), shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"copyto: could not broadcast input array from shape "
                         f"{tuple(_shape_of(src))} into shape {shape}") from None
    values = _core.broadcast_to(_ip_cast(src, d_dtype), shape=shape)
    if where is not True:
        where = _stacked(where, "copyto", "where")
        values = _ew.where(where, values, target)
    _ip.assign(dst, values, "copyto")
    return None


def _ip_cast(x, dtype):
    if isinstance(x, _Tensor):
        return x if x.dtype == dtype else _core.cast(x, dtype=dtype)
    return _np.asarray(x).astype(dtype)


def putmask(a, mask, values):
    """``a.flat[n] = values[n % len(values)]`` wherever ``mask.flat[n]`` is True, in place
    (numpy.putmask; ``mask`` may be a tensor, also a traced one).

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.arange(4.0); hnp.putmask(a, a > 1, [10.0, 20.0]); a.tolist()
    [0.0, 1.0, 10.0, 20.0]
    """
    if _numpy_in_place("putmask", a, [mask, values]):
        return _np.putmask(a, _numpy_values(mask), _numpy_values(values))
    _ip.check_writable(a, "putmask")
    target = _current(a)
    shape = tuple(target.shape)
    mask = _stacked(mask, "putmask", "mask")
    if tuple(_shape_of(mask)) != shape:
        raise ValueError(f"putmask: mask and data must be the same size (mask shape "
                         f"{tuple(_shape_of(mask))}, array shape {shape})")
    values = _ip_cast(resize(_stacked(values, "putmask", "values"), shape), target.dtype)
    _ip.assign(a, _ew.where(mask, values, target), "putmask")
    return None


def place(arr, mask, vals):
    """The True positions of ``mask`` (concrete) get ``vals`` in order, repeated as needed,
    in place (numpy.place).

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.zeros(4); hnp.place(a, [True, False, True, True], [1.0, 2.0]); a.tolist()
    [1.0, 0.0, 2.0, 1.0]
    """
    if _numpy_in_place("place", arr, [mask, vals]):
        return _np.place(arr, _numpy_values(mask), _numpy_values(vals))
    _ip.check_writable(arr, "place")
    mask = _current(mask)
    if isinstance(mask, _Tensor):
        mask = mask._concrete("place: the mask decides how many values are placed")
    mask = _np.asarray(mask, dtype=bool)
    shape = tuple(_shape_of(arr))
    if mask.size != int(_np.prod(shape, dtype=_np.int64)):
        raise ValueError(f"place: mask and data must be the same size (mask shape "
                         f"{mask.shape}, array shape {shape})")
    positions = _np.flatnonzero(mask)
    if not positions.size:
        return None
    vals = _stacked(vals, "place", "vals")
    if int(_np.size(vals) if not isinstance(vals, _Tensor) else vals.size) == 0:
        raise ValueError("place: cannot insert from an empty array")
    _ip.setitem(arr, _np.unravel_index(positions, shape),
                resize(_core.reshape(vals, shape=(-1,)), positions.shape))
    return None


__all__ = ["fill_diagonal", "put_along_axis", "put", "copyto", "putmask", "place"]
