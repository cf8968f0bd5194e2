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


def _matrix_shape(fname, arr):
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


__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "indices", "ix_", "unravel_index",
           "ravel_multi_index"]
