"""Set operations: ``isin``, ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d`` and numpy
2's ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

``isin`` has a static shape: it traces (a comparison of every element with every test
element) and is a boolean constant. The others return as many values as the data holds, so
their inputs must be concrete (numpy arrays or eager tensors; they say so while tracing).
Their values are differentiable, as jax.numpy's are on its traceable ``size=`` path: each
output value takes the gradient of the input element it was read from, the first occurrence
(for ``intersect1d``, the one in ``ar1``); indices, inverses and counts are constants.
"""

from collections import namedtuple as _namedtuple

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, indexing as _ix, reduction as _red, \
    shape as _sh
from ._arguments import _array, _as_tensor, _cast, _concrete, _const, _symbolic, _value
from ._arraylike import has_tensor as _has_tensor

UniqueAllResult = _namedtuple("UniqueAllResult",
                              ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is in ``test_elements`` (numpy.isin): a boolean
    constant of ``element``'s shape. Traced inputs are compared all against all.

    Raises:
        ValueError: an unknown ``kind``, or ``kind='table'`` for non-integer input.

    >>> import hessgrad.numpy as hnp
    >>> hnp.isin([[1, 2], [3, 4]], [2, 3]).tolist()
    [[False, True], [True, False]]
    """
    if kind not in (None, "sort", "table"):
        raise ValueError(f"isin: Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    e = _array("isin", element, "element")
    t = _array("isin", test_elements, "test_elements")
    if not (_symbolic(e) or _symbolic(t)):
        try:
            return _const(_np.isin(_value(e), _value(t), assume_unique=assume_unique,
                                   invert=invert, kind=kind))
        except ValueError as exc:  # numpy's 'table' refusals, named
            raise ValueError(f"isin: {exc}") from None
    if kind == "table" and not (_np.dtype(e.dtype).kind in "biu" and
                                _np.dtype(t.dtype).kind in "biu"):
        raise ValueError("isin: The 'table' method is only supported for boolean or integer "
                         "arrays. Please select 'sort' or None for kind.")
    flat = _core.reshape(_as_tensor(t), shape=(-1,))
    found = _red.any(_ew.equal(_sh.expand_dims(_as_tensor(e), -1), flat), axis=-1)
    return _ew.logical_not(found) if invert else found


def _flat(fname, a, what):
    """``a`` concrete (its values set the result's length) and flattened: (tensor, values)."""
    a = _as_tensor(_array(fname, a, what))
    values = _np.asarray(_concrete(fname, a, what, "the result's length depends on its values"))
    return _core.reshape(a, shape=(-1,)), values.reshape(-1)


def _unique_first(fname, a, what, assume_unique):
    """The (sorted) unique values of ``a`` and where each first occurs in the flattened ``a``
    (all positions, in order, when ``assume_unique``)."""
    flat, values = _flat(fname, a, what)
    if assume_unique:
        return flat, values, _np.arange(values.size)
    u, first = _np.unique(values, return_index=True)
    return flat, u, first


def _gather(flat, positions, dtype):
    out = _core.getitem(flat, index=(_np.asarray(positions, dtype=_np.intp),))
    return _cast(out, dtype)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """The sorted values in both ``ar1`` and ``ar2`` (numpy.intersect1d), differentiable in
    ``ar1`` (whose elements they are read from); with ``return_indices`` also their first
    positions in each flattened input.

    >>> import hessgrad.numpy as hnp
    >>> hnp.intersect1d([3.0, 1.0, 2.0, 1.0], [1.0, 3.0, 5.0]).tolist()
    [1.0, 3.0]
    """
    flat1, v1 = _flat("intersect1d", ar1, "ar1")
    _, v2 = _flat("intersect1d", ar2, "ar2")
    values, i1, i2 = _np.intersect1d(v1, v2, assume_unique=assume_unique, return_indices=True)
    out = _gather(flat1, i1, values.dtype)
    return (out, _const(i1), _const(i2)) if return_indices else out


def union1d(ar1, ar2):
    """The sorted unique values of ``ar1`` and ``ar2`` together (numpy.union1d), each
    differentiable in its first occurrence (``ar1`` before ``ar2``).

    >>> import hessgrad.numpy as hnp
    >>> hnp.union1d([3.0, 1.0], [2.0, 1.0]).tolist()
    [1.0, 2.0, 3.0]
    """
    flat1 = _as_tensor(_array("union1d", ar1, "ar1"))
    flat2 = _as_tensor(_array("union1d", ar2, "ar2"))
    return unique(_sh.join([flat1, flat2], None, "union1d"))


def setdiff1d(ar1, ar2, assume_unique=False):
    """The unique values of ``ar1`` not in ``ar2`` (numpy.setdiff1d; with ``assume_unique``
    the flattened ``ar1`` in order), differentiable in ``ar1``.

    >>> import hessgrad.numpy as hnp
    >>> hnp.setdiff1d([5.0, 1.0, 1.0, 2.0], [2.0]).tolist()
    [1.0, 5.0]
    """
    flat1, u1, pos1 = _unique_first("setdiff1d", ar1, "ar1", assume_unique)
    _, v2 = _flat("setdiff1d", ar2, "ar2")
    keep = _np.isin(u1, v2, assume_unique=assume_unique, invert=True)
    return _gather(flat1, pos1[keep], u1.dtype)


def setxor1d(ar1, ar2, assume_unique=False):
    """The sorted values in exactly one of ``ar1`` and ``ar2`` (numpy.setxor1d), each
    differentiable in the element it was read from.

    >>> import hessgrad.numpy as hnp
    >>> hnp.setxor1d([1.0, 2.0, 3.0], [3.0, 4.0]).tolist()
    [1.0, 2.0, 4.0]
    """
    flat1, u1, pos1 = _unique_first("setxor1d", ar1, "ar1", assume_unique)
    flat2, u2, pos2 = _unique_first("setxor1d", ar2, "ar2", assume_unique)
    aux = _np.concatenate((u1, u2))
    dtype = aux.dtype
    if aux.size == 0:
        return _const(aux)
    order = _np.argsort(aux, kind="stable")
    s = aux[order]
    flag = _np.concatenate(([True], s[1:] != s[:-1], [True]))
    picked = order[flag[1:] & flag[:-1]]
    both = _sh.join([_cast(flat1, dtype), _cast(flat2, dtype)], 0, "setxor1d")
    positions = _np.concatenate((pos1, pos2 + flat1.shape[0]))
    return _gather(both, positions[picked], dtype)


def unique_all(x):
    """numpy 2's ``unique_all``: ``(values, indices, inverse_indices, counts)`` with NaNs kept
    apart; the values are differentiable (first occurrences), the rest constants.

    >>> import hessgrad.numpy as hnp
    >>> r = hnp.unique_all([3.0, 1.0, 3.0])
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([1.0, 3.0], [1, 0], [1, 0, 1], [1, 2])
    """
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x):
    """numpy 2's ``unique_counts``: ``(values, counts)``.

    >>> import hessgrad.numpy as hnp
    >>> [r.tolist() for r in hnp.unique_counts([2, 1, 2])]
    [[1, 2], [1, 2]]
    """
    values, counts = unique(x, return_counts=True, equal_nan=False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x):
    """numpy 2's ``unique_inverse``: ``(values, inverse_indices)``, the inverse of ``x``'s
    shape.

    >>> import hessgrad.numpy as hnp
    >>> [r.tolist() for r in hnp.unique_inverse([[2, 1], [1, 3]])]
    [[1, 2, 3], [[1, 0], [0, 2]]]
    """
    values, inverse = unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(values, inverse)


def unique_values(x):
    """numpy 2's ``unique_values``, in numpy's order (which is not sorted for some dtypes);
    each value differentiable in its first occurrence.

    >>> import hessgrad.numpy as hnp
    >>> hnp.unique_values([3.0, 1.0, 3.0]).tolist()
    [1.0, 3.0]
    """
    flat, values = _flat("unique_values", x, "x")
    want = _np.unique_values(values)
    if not _has_tensor(x) or want.dtype.kind not in "fc":
        return _const(want)
    u, first = _np.unique(values, return_index=True, equal_nan=False)
    if not _np.array_equal(u, want, equal_nan=True):  # numpy's hash order: map each value
        first = first[_np.searchsorted(u, want)]
        if not _np.array_equal(values[first], want, equal_nan=True):
            raise NotImplementedError("unique_values: cannot locate the unsorted unique "
                                      "values of this array (NaNs in complex input)")
    return _gather(flat, first, want.dtype)


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


__all__ = ["isin", "intersect1d", "union1d", "setdiff1d", "setxor1d", "unique_all", "unique_counts",
           "unique_inverse", "unique_values", "UniqueAllResult", "UniqueCountsResult",
           "UniqueInverseResult", "unique"]
