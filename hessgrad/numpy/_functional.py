"""numpy's functional-programming helpers: ``piecewise``, ``apply_along_axis``,
``apply_over_axes``, ``fromfunction``. The user's functions are called on tensors, so results
differentiate through them (to any order) when they are written with hessgrad.numpy (or
numpy functions, which dispatch to it).
"""

import builtins
import operator

import numpy as _np

from ..engine.tensor import Tensor as _Tensor
from ..ops import core as _core, elementwise as _ew, reduction as _red, shape as _sh
from ._arguments import _array, _as_tensor, _symbolic, _value


# --- piecewise ----------------------------------------------------------------------------
def _condition_list(x, condlist):
    """numpy's normalisation: a single condition becomes a list of one."""
    if isinstance(condlist, _Tensor) and len(condlist.shape) == len(x.shape):
        return [condlist]
    if _np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, _np.ndarray, _Tensor)) and len(x.shape) != 0):
        return [condlist]
    return list(condlist)


def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: ``funclist[k]`` (a function of the selected entries, or a value)
    where ``condlist[k]`` holds, later conditions winning; an extra last function fills where
    no condition holds, and the rest is 0. The result has ``x``'s dtype.

    Concrete conditions (numpy arrays, eager tensors) behave exactly as numpy's: each
    function sees only ``x[condition]``. Symbolic (traced) conditions cannot select, so each
    function is applied to all of ``x`` (it must be elementwise) and its result chosen with
    ``where``: a function undefined somewhere outside its condition can then give NaN
    derivatives there, as with any ``where``.

    Args:
        x: the input array or tensor.
        condlist: boolean arrays of ``x``'s shape (or one of them).
        funclist: callables ``f(vals, *args, **kw)`` or scalars, ``len(condlist)`` or one
            more.
    Returns:
        A tensor of ``x``'s shape and dtype.
    Raises:
        ValueError: ``funclist`` has the wrong length.

    >>> import hessgrad as hg, hessgrad.numpy as hnp, numpy as np
    >>> x = np.array([-2.0, 0.5, 3.0])
    >>> hnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v ** 2, 0.5]).tolist()
    [2.0, 0.5, 9.0]
    >>> hg.grad(lambda x: hnp.sum(hnp.piecewise(x, [x < 0], [lambda v: v ** 2, 1.0])))(x)
    array([-4.,  0.,  0.])
    """
    x = _as_tensor(_array("piecewise", x, "x"))
    conds = _condition_list(x, condlist)
    n, n2 = len(conds), len(funclist)
    if n not in (n2, n2 - 1):
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions "
                         f"are expected, got {n2}")
    if builtins.any(_symbolic(c) for c in conds):
        return _piecewise_traced(x, conds, funclist, args, kw)
    masks = _np.asarray([_np.asarray(_value(c)) for c in conds], dtype=bool)
    if n == n2 - 1:
        masks = _np.concatenate([masks, ~_np.any(masks, axis=0, keepdims=True)], axis=0)
    y = _core.constant(_np.zeros(x.shape, dtype=x.dtype))
    for mask, func in zip(masks, funclist):
        if mask.shape != tuple(x.shape):
            raise ValueError(f"piecewise: a condition of shape {mask.shape} does not match x "
                             f"of shape {tuple(x.shape)}")
        if not callable(func):
            y = y.at[mask].set(func)
        elif mask.any():
            y = y.at[mask].set(func(x[mask], *args, **kw))
    return y


def _piecewise_traced(x, conds, funclist, args, kw):
    conds = [_sh.broadcast_to(_as_tensor(_array("piecewise", c, "condlist")), tuple(x.shape))
             for c in conds]
    if len(conds) == len(funclist) - 1:
        taken = _red.any(_core.stack(*conds, axis=0), axis=0)
        conds.append(_ew.logical_not(taken))
    y = _core.constant(_np.zeros(x.shape, dtype=x.dtype))
    for cond, func in zip(conds, funclist):
        value = func(x, *args, **kw) if callable(func) else func
        value = _as_tensor(_array("piecewise", value, "funclist"))
        if value.dtype != x.dtype:
            value = _core.cast(value, dtype=x.dtype)
        if cond.dtype != bool:
            cond = _ew.not_equal(cond, 0)
        y = _ew.where(cond, value, y)
    return y


# --- apply along / over axes ----------------------------------------------------------------
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis`` (numpy.
    apply_along_axis); its results (all of one shape) replace that axis. One call per slice:
    meant for small arrays (vectorise ``func1d`` for large ones).

    Raises:
        ValueError: an iteration dimension is 0, or the results' shapes differ.

    >>> import hessgrad.numpy as hnp
    >>> a = hnp.array([[1.0, 2.0], [3.0, 5.0]])
    >>> hnp.apply_along_axis(lambda v: v[0] + v[-1], 1, a).tolist()
    [3.0, 8.0]
    """
    arr = _as_tensor(_array("apply_along_axis", arr, "arr"))
    nd = len(arr.shape)
    axis = _sh.normalize_axis(axis, nd, "apply_along_axis")
    moved = _sh.moveaxis(arr, axis, -1)
    outer = tuple(moved.shape[:-1])
    if 0 in outer:
        raise ValueError(f"apply_along_axis: Cannot apply_along_axis when any iteration "
                         f"dimensions are 0 (arr has shape {tuple(arr.shape)}, axis {axis})")
    results = []
    for ind in _np.ndindex(outer):
        res = _as_tensor(_sh.as_array(func1d(moved[ind + (Ellipsis,)], *args, **kwargs),
                                      "apply_along_axis"))
        if results and tuple(res.shape) != tuple(results[0].shape):
            raise ValueError(f"apply_along_axis: func1d returned shape {tuple(res.shape)} for "
                             f"slice {ind} but {tuple(results[0].shape)} for the first")
        if results and res.dtype != results[0].dtype:  # numpy's buffer has the first's dtype
            res = _core.cast(res, dtype=results[0].dtype)
        results.append(res)
    res_shape = tuple(results[0].shape)
    buff = _core.reshape(_core.stack(*results, axis=0), shape=outer + res_shape)
    dims = list(range(len(buff.shape)))
    k = len(res_shape)
    perm = dims[:axis] + dims[len(dims) - k:] + dims[axis:len(dims) - k]
    return _sh.transpose(buff, axes=tuple(perm)) if perm != dims else buff


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, each result kept at ``a``'s ndim
    (a reduced axis is re-inserted), numpy.apply_over_axes.

    Raises:
        ValueError: ``func`` returns an array of the wrong number of dimensions.

    >>> import hessgrad.numpy as hnp
    >>> hnp.apply_over_axes(hnp.sum, hnp.ones((2, 3, 4)), [0, 2]).shape
    (1, 3, 1)
    """
    val = _as_tensor(_array("apply_over_axes", a))
    n = len(val.shape)
    for axis in ((axes,) if _np.ndim(axes) == 0 else axes):
        axis = operator.index(axis)
        if axis < 0:
            axis += n
        res = _as_tensor(_sh.as_array(func(val, axis), "apply_over_axes"))
        if len(res.shape) != len(val.shape):
            res = _sh.expand_dims(res, axis)
            if len(res.shape) != len(val.shape):
                raise ValueError(f"apply_over_axes: function is not returning an array of the "
                                 f"correct shape (got {tuple(res.shape)} for axis {axis} of an "
                                 f"array of {n} dimensions)")
        val = res
    return val


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``function(*indices)`` with one coordinate array per axis of ``shape`` (numpy.
    fromfunction); the coordinates are constant tensors of ``dtype``, so the result is
    whatever ``function`` computes from them (differentiable in what it closes over).

    >>> import hessgrad.numpy as hnp
    >>> hnp.fromfunction(lambda i, j: i + 10 * j, (2, 2)).tolist()
    [[0.0, 10.0], [1.0, 11.0]]
    """
    if like is not None:
        raise TypeError("fromfunction: like= is not supported")
    coords = _np.indices(tuple(shape), dtype=dtype)
    return function(*(_core.constant(c) for c in coords), **kwargs)


__all__ = ["piecewise", "apply_along_axis", "apply_over_axes", "fromfunction"]
