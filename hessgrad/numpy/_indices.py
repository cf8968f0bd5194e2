"""numpy's index helpers: the integer index arrays of triangles, diagonals and grids, and
conversions between flat and multi-dimensional indices.

Indices are constants (nothing differentiates an integer), so these return numpy's own
arrays, which index tensors and numpy arrays alike. Tensor arguments count by their shape
(the ``*_from`` helpers) or need concrete values.

>>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
>>> a = np.arange(9.0).reshape(3, 3)
>>> hg.grad(lambda a: hnp.sum(a[hnp.triu_indices_from(a, k=1)] ** 2))(a).tolist()
[[0.0, 2.0, 4.0], [0.0, 0.0, 10.0], [0.0, 0.0, 0.0]]
"""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, shape_of as _shape_of
from ._arraylike import stacked as _stacked


def _matrix_shape(fname, arr):
    arr = _stacked(arr, fname, "arr")
    shape = _shape_of(arr) if isinstance(arr, _Tensor) else _np.shape(arr)
    if shape is None or len(shape) != 2 or None in shape:
        raise ValueError(f"{fname}: arr must be a 2-D array of static shape, got shape {shape}")
    return shape


def _concrete(fname, x):
    if isinstance(x, _Tensor):
        return x._concrete(fname)
    if isinstance(x, (list, tuple)):
        return type(x)(_concrete(fname, v) for v in x)
    return x


def tril_indices(n, k=0, m=None):
    """numpy.tril_indices: row and column indices of the lower triangle of an (n, m) array."""
    return _np.tril_indices(n, k, m)


def triu_indices(n, k=0, m=None):
    """numpy.triu_indices: row and column indices of the upper triangle of an (n, m) array."""
    return _np.triu_indices(n, k, m)


def tril_indices_from(arr, k=0):
    """numpy.tril_indices_from: :func:`tril_indices` for the shape of 2-D ``arr``."""
    n, m = _matrix_shape("tril_indices_from", arr)
    return _np.tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """numpy.triu_indices_from: :func:`triu_indices` for the shape of 2-D ``arr``."""
    n, m = _matrix_shape("triu_indices_from", arr)
    return _np.triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """numpy.diag_indices: indices of the main diagonal of an ``(n,) * ndim`` array."""
    return _np.diag_indices(n, ndim)


def diag_indices_from(arr):
    """numpy.diag_indices_from: :func:`diag_indices` for ``arr``, at least 2-D with equal
    dimensions."""
    arr = _stacked(arr, "diag_indices_from", "arr")
    shape = _shape_of(arr) if isinstance(arr, _Tensor) else _np.shape(arr)
    if shape is None or len(shape) < 2 or None in shape or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: arr must be at least 2-D with all dimensions "
                         f"equal, got shape {shape}")
    return _np.diag_indices(shape[0], len(shape))


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: the index grid of an array of shape ``dimensions``."""
    return _np.indices(dimensions, dtype=dtype, sparse=sparse)


def ix_(*args):
    """numpy.ix_: open-mesh index arrays from 1-D sequences (tensors need concrete values)."""
    return _np.ix_(*[_concrete("ix_", a) for a in args])


def unravel_index(indices, shape, order="C"):
    """numpy.unravel_index: flat indices to a tuple of coordinate arrays."""
    return _np.unravel_index(_concrete("unravel_index", indices), shape, order=order)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """numpy.ravel_multi_index: coordinate arrays to flat indices."""
    return _np.ravel_multi_index(_concrete("ravel_multi_index", multi_index), dims, mode=mode,
                                 order=order)


class _AxisConcatenator:
    """numpy's ``r_`` and ``c_``: ``r_[x, 0.0, 1:4, y]`` concatenates arrays, scalars and
    ranges (``start:stop:step``, or ``start:stop:num*1j`` for ``linspace``) along an axis,
    with numpy's directives (``'0,2,1'``: axis, minimum ndim, where 1-D items' axis goes).
    Items may be tensors (or nested lists holding them): the result is a tensor
    differentiable in them. numpy.matrix directives ('r', 'c', '1 2; 3 4') are not supported.
    """

    def __init__(self, name, axis=0, ndmin=1, trans1d=-1):
        self._name, self._axis, self._ndmin, self._trans1d = name, axis, ndmin, trans1d

    def _matrix(self):
        return NotImplementedError(f"hessgrad.numpy.{self._name}: numpy.matrix results "
                                   "('r', 'c' and string directives) are not supported")

    def __getitem__(self, key):
        from ._constants import result_type
        from ._constructors import arange, array, linspace
        from ._shapes import concatenate, ndim, swapaxes, transpose

        if isinstance(key, str):
            raise self._matrix()
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        objs, kinds = [], []
        for k, item in enumerate(key):
            scalar = False
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, (complex, _np.complexfloating)):
                    obj = linspace(start, item.stop, num=int(abs(step)))
                else:
                    obj = arange(start, item.stop, step)
                if ndmin > 1:
                    obj = array(obj, copy=False, ndmin=ndmin)
                    if trans1d != -1:
                        obj = swapaxes(obj, -1, trans1d)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError(f"hessgrad.numpy.{self._name}: special directives must "
                                     f"be the first entry, got {item!r} at {k}")
                if item in ("r", "c"):
                    raise self._matrix()
                try:
                    numbers = [int(x) for x in item.split(",")]
                except ValueError:
                    raise ValueError(f"hessgrad.numpy.{self._name}: unknown special "
                                     f"directive {item!r}") from None
                if len(numbers) == 1:
                    axis = numbers[0]
                elif len(numbers) in (2, 3):
                    axis, ndmin = numbers[:2]
                    trans1d = numbers[2] if len(numbers) == 3 else trans1d
                else:
                    raise ValueError(f"hessgrad.numpy.{self._name}: unknown special "
                                     f"directive {item!r}")
                continue
            elif type(item) in _np.ScalarType:
                scalar, obj = True, item
            else:
                item_ndim = ndim(item)
                obj = array(item, copy=False, ndmin=ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k2 = ndmin - item_ndim
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    axes = list(range(ndmin))
                    obj = transpose(obj, axes[:k1] + axes[k2:] + axes[k1:k2])
            objs.append(obj)
            kinds.append(item if scalar else obj.dtype)
        if kinds:  # numpy's promotion, scalars weak
            dtype = result_type(*kinds)
            objs = [array(obj, dtype=dtype, copy=False, ndmin=ndmin) for obj in objs]
        return concatenate(objs, axis=axis)

    def __len__(self):
        return 0


r_ = _AxisConcatenator("r_", 0)
c_ = _AxisConcatenator("c_", -1, ndmin=2, trans1d=0)
s_, index_exp = _np.s_, _np.index_exp  # index expressions: no arrays involved
# grids and index iterators from numbers (constants, as indices() gives)
mgrid, ogrid, ndindex = _np.mgrid, _np.ogrid, _np.ndindex

__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "indices", "ix_", "unravel_index",
           "ravel_multi_index", "r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "ndindex"]
