"""Rearranging, assembling and selecting: ``matrix_transpose``, ``unstack``, ``rollaxis``,
``resize``, ``bmat``, ``compress``, ``extract``, ``trim_zeros``. All are gathers, joins or
reshapes, so they differentiate (to any order) in the arrays they read.

``compress``, ``extract`` and ``trim_zeros`` produce a length that depends on values (of the
condition, or of the zeros to trim): those values must be concrete (a numpy array or an eager
tensor), and the functions say so while tracing; the array they select from may be traced.
"""

import operator
import sys

import numpy as _np
from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, shape as _sh
from ._arguments import _array, _as_tensor, _concrete
from ._out import writes_out as _writes_out


def matrix_transpose(x, /):
    """Swap the last two axes (numpy 2's array-API ``matrix_transpose``).

    Raises:
        ValueError: ``x`` has fewer than 2 dimensions.

    >>> import hessgrad.numpy as hnp
    >>> hnp.matrix_transpose(hnp.ones((2, 3, 4))).shape
    (2, 4, 3)
    """
    x = _as_tensor(_array("matrix_transpose", x, "x"))
    if len(x.shape) < 2:
        raise ValueError(f"matrix_transpose: Input array must be at least 2-dimensional, but "
                         f"it is {len(x.shape)} (argument 'x' has shape {tuple(x.shape)})")
    return _sh.swapaxes(x, -1, -2)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``).

    Raises:
        ValueError: ``x`` is 0-d. AxisError: ``axis`` out of bounds.

    >>> import hessgrad.numpy as hnp
    >>> [t.tolist() for t in hnp.unstack(hnp.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)]
    [[1.0, 3.0], [2.0, 4.0]]
    """
    x = _as_tensor(_array("unstack", x, "x"))
    if len(x.shape) == 0:
        raise ValueError("unstack: Input array must be at least 1-d (argument 'x' has shape "
                         "())")
    ax = _sh.normalize_axis(axis, len(x.shape), "unstack")
    if x.shape[ax] == 0:
        return ()
    return tuple(_core.unstack(x, axis=ax))  # one op: its gradient is one stack


def rollaxis(a, axis, start=0):
    """Move ``axis`` to the position before ``start`` (numpy.rollaxis; prefer ``moveaxis``).

    Raises:
        AxisError: ``axis`` or ``start`` out of bounds.

    >>> import hessgrad.numpy as hnp
    >>> hnp.rollaxis(hnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = _as_tensor(_array("rollaxis", a))
    n = len(a.shape)
    axis = _sh.normalize_axis(axis, n, "rollaxis")
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _np.exceptions.AxisError(f"rollaxis: 'start' arg requires {-n} <= start < "
                                       f"{n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return _sh.transpose(a, axes=tuple(axes))


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the flattened ``a`` repeated cyclically (zeros when
    ``a`` is empty), numpy.resize; each entry's gradient goes back to its source.

    Raises:
        ValueError: a negative dimension.

    >>> import hessgrad.numpy as hnp
    >>> hnp.resize([1.0, 2.0, 3.0], (2, 4)).tolist()
    [[1.0, 2.0, 3.0, 1.0], [2.0, 3.0, 1.0, 2.0]]
    """
    shape = (new_shape,) if isinstance(new_shape, (int, _np.integer)) else tuple(new_shape)
    shape = tuple(operator.index(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"resize: all elements of `new_shape` must be non-negative, got "
                         f"{shape}")
    flat = _core.reshape(_as_tensor(_array("resize", a)), shape=(-1,))
    size, new_size = flat.shape[0], int(_np.prod(shape, dtype=_np.int64))
    if size == 0 or new_size == 0:
        return _core.constant(_np.zeros(shape, dtype=flat.dtype))
    picked = _core.getitem(flat, index=(_np.arange(new_size) % size,))
    return _core.reshape(picked, shape=shape)


def _as_matrix(x):
    """numpy.matrix's shape rule: 0-d and 1-D become rows, more than 2-D is refused."""
    nd = len(x.shape)
    if nd > 2:
        raise ValueError(f"bmat: matrix must be 2-dimensional, got shape {tuple(x.shape)}")
    # a new array (as numpy's matrix copies): a write into it must not reach a block
    return _core.identity(x) if nd == 2 else _core.reshape(x, shape=(1, -1))


def _named_blocks(text, ldict, gdict):
    """numpy's string form ``"A, B; C, D"``: rows split by ';', blocks by ',' or spaces."""
    rows = []
    for row in text.split(";"):
        names = [name for part in row.split(",") for name in part.split()]
        blocks = []
        for name in names:
            if name in ldict:
                blocks.append(ldict[name])
            elif name in gdict:
                blocks.append(gdict[name])
            else:
                raise NameError(f"bmat: name {name!r} is not defined")
        rows.append(_sh.join(blocks, -1, "bmat"))
    return _sh.join(rows, 0, "bmat")


def bmat(obj, ldict=None, gdict=None):
    """A 2-D array assembled from blocks (numpy.bmat): nested lists ``[[A, B], [C, D]]``
    (each row joined along the last axis, the rows along the first), a list of arrays (one
    row), an array, or a string ``"A, B; C, D"`` naming arrays in ``ldict``/``gdict`` or the
    caller's scope. Differentiable in every block. hessgrad has no ``matrix`` class: the
    result is a 2-D tensor (``*`` is elementwise on it, as on arrays).

    Raises:
        NameError: a name in the string is not defined. ValueError: blocks that do not fit.

    >>> import hessgrad.numpy as hnp, numpy as np
    >>> A = np.eye(2)
    >>> hnp.bmat([[A, np.zeros((2, 1))], [np.ones((1, 2)), 5.0 * np.ones((1, 1))]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 5.0]]
    >>> hnp.bmat("A A").shape
    (2, 4)
    """
    if isinstance(obj, str):
        if gdict is None:
            frame = sys._getframe(1)
            gdict, ldict = frame.f_globals, frame.f_locals
        return _as_matrix(_named_blocks(obj, ldict or {}, gdict))
    if isinstance(obj, (tuple, list)):
        if any(isinstance(row, (_np.ndarray, _Tensor)) for row in obj):
            return _as_matrix(_sh.join(list(obj), -1, "bmat"))
        rows = [_sh.join(list(row), -1, "bmat") for row in obj]
        return _as_matrix(_sh.join(rows, 0, "bmat"))
    return _as_matrix(_as_tensor(_array("bmat", obj, "obj")))


def _positions(fname, condition, what):
    """The indices of the true entries of a concrete 1-D ``condition``."""
    cond = _np.asarray(_concrete(fname, _array(fname, condition, what), what,
                                 "its true entries set the result's length"))
    return cond, _np.flatnonzero(cond)


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` along ``axis`` (flattened when None) where the 1-D ``condition`` is
    true (numpy.compress); ``condition`` may be shorter than the axis. ``condition`` must be
    concrete; ``a`` is differentiable.

    Raises:
        ValueError: ``condition`` not 1-D. IndexError: a true entry beyond the axis.
        TypeError: ``out`` given, or a symbolic ``condition``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.compress([True, False, True], hnp.array([[1.0, 2.0, 3.0]]), axis=1).tolist()
    [[1.0, 3.0]]
    """
    if out is not None:
        raise TypeError("compress: out= is not supported: hessgrad arrays are immutable")
    cond, idx = _positions("compress", condition, "condition")
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array, got shape {cond.shape}")
    a = _as_tensor(_array("compress", a))
    if axis is None:
        a, axis = _core.reshape(a, shape=(-1,)), 0
    axis = _sh.normalize_axis(axis, len(a.shape), "compress")
    n = a.shape[axis]
    if idx.size and idx[-1] >= n:
        raise IndexError(f"compress: index {idx[-1]} is out of bounds for axis {axis} with "
                         f"size {n} (condition has length {cond.shape[0]}, a has shape "
                         f"{tuple(a.shape)})")
    return _core.getitem(a, index=(slice(None),) * axis + (idx.astype(_np.intp),))


def extract(condition, arr):
    """The entries of the flattened ``arr`` where the flattened ``condition`` is true
    (numpy.extract); ``condition`` must be concrete, ``arr`` is differentiable.

    Raises:
        IndexError: a true entry beyond ``arr``'s size.

    >>> import hessgrad.numpy as hnp
    >>> hnp.extract([[True, False], [False, True]], hnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 4.0]
    """
    _, idx = _positions("extract", condition, "condition")
    flat = _core.reshape(_as_tensor(_array("extract", arr, "arr")), shape=(-1,))
    if idx.size and idx[-1] >= flat.shape[0]:
        raise IndexError(f"extract: index {idx[-1]} is out of bounds for axis 0 with size "
                         f"{flat.shape[0]} (the flattened arr)")
    return _core.getitem(flat, index=(idx.astype(_np.intp),))


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading ('f') and/or trailing ('b') zeros, along ``axis`` (all
    axes when None: the bounding box of the nonzero entries), numpy.trim_zeros. The values
    decide the result's shape, so ``filt`` must be concrete; the kept entries are
    differentiable. Always returns a tensor (numpy keeps a list input a list).

    Raises:
        ValueError: ``trim`` is not one of 'f', 'b', 'fb', 'bf'.

    >>> import hessgrad.numpy as hnp
    >>> hnp.trim_zeros([0.0, 1.0, 0.0, 2.0, 0.0], "f").tolist()
    [1.0, 0.0, 2.0, 0.0]
    """
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    arr = _as_tensor(_array("trim_zeros", filt, "filt"))
    nd = len(arr.shape)
    axes = tuple(range(nd)) if axis is None else _normalize_axis_tuple(axis, nd, "axis")
    if not axes:
        return arr
    values = _np.asarray(_concrete("trim_zeros", arr, "filt",
                                   "the zeros to trim set the result's shape"))
    nonzero = _np.argwhere(values)
    if nonzero.size == 0:
        start = stop = [0] * nd
    else:
        start = nonzero.min(axis=0) if "f" in trim else [None] * nd
        stop = nonzero.max(axis=0) + 1 if "b" in trim else [None] * nd
    index = tuple(slice(None if start[ax] is None else int(start[ax]),
                        None if stop[ax] is None else int(stop[ax]))
                  if ax in axes else slice(None) for ax in range(nd))
    return _core.getitem(arr, index=index)


# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("compress", 3, "unsafe"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["matrix_transpose", "unstack", "rollaxis", "resize", "bmat", "compress", "extract",
           "trim_zeros"]
