"""Sorting and order statistics: sort, argsort, median, quantile (linear interpolation).

``sort`` is a permutation of its input, so its derivative moves gradients through the sorting
permutation (found again with ``argsort`` inside the rules, so that graph mode needs no
concrete values). Order statistics are fixed weighted combinations of sorted values.
"""

import numpy as np

from ..engine.batching import broadcast, per_member
from ..engine.dispatch import bind
from ..engine.registry import primitive
from ..engine.tensor import dtype_of, shape_of
from .core import getitem, reshape
from .elementwise import not_equal, where
from .batching import along_axis as along_one_axis
from .families import along_axis
from .patterns import dense_linear, moves, within_lines
from .reduction import kept_shape, mean, _axes
from .shape_rules import same_shape
from .shape import transpose


def _inverse_permutation(perm, axis):
    perm = np.asarray(perm)
    axis %= perm.ndim
    inv = np.empty_like(perm)
    ranks = np.arange(perm.shape[axis]).reshape((-1,) + (1,) * (perm.ndim - axis - 1))
    np.put_along_axis(inv, perm, np.broadcast_to(ranks, perm.shape), axis)
    return inv


argsort = along_axis("argsort", lambda x, axis=-1, kind=None, stable=None:
                     np.argsort(x, axis=axis, kind=kind, stable=stable), nondiff=True)
inverse_permutation = primitive("inverse_permutation", _inverse_permutation, nondiff=True,
                                batch=along_one_axis())
# keys stacked on the first axis, where the batch axis would go
lexsort = primitive("lexsort", lambda keys, axis=-1: np.lexsort(keys, axis=axis), nondiff=True,
                    batch=per_member, shape_rule=lambda keys, axis=-1: (
                        None if shape_of(keys) is None else tuple(shape_of(keys)[1:]),
                        np.dtype(np.intp)))
lexsort.__doc__ = """Indices sorting by the last key of ``keys`` (stacked along the first axis),
ties broken by the previous keys (numpy.lexsort; a constant)."""
inverse_permutation.__doc__ = """``inv`` with ``take_along_axis(perm, inv) == arange``
along ``axis`` (a constant)."""

permute_along_axis = primitive(
    "permute_along_axis",
    lambda x, perm, axis: np.take_along_axis(np.asarray(x), perm, axis=axis),
    vjp=[lambda g, ans, x, perm, axis:
         permute_along_axis(g, inverse_permutation(perm, axis=axis), axis=axis), None],
    # not declared linear: the engine zero-fills integer inputs of linear ops
    jvp=[lambda t, ans, x, perm, axis: permute_along_axis(t, perm, axis=axis), None],
    batch=along_one_axis(), sparsity=moves(index=lambda k: k == 1))
permute_along_axis.__doc__ = """``x`` reordered along ``axis`` by the permutation ``perm``
(an integer array of ``x``'s shape): ``out[..., i, ...] = x[..., perm[..., i, ...], ...]``."""


def _tie_groups(s, axis):
    """Labels of the runs of equal values along ``axis`` of sorted ``s``, unique across the
    whole array (NaNs never tie)."""
    s = np.moveaxis(np.asarray(s), axis, -1)
    new_run = np.ones(s.shape, dtype=bool)
    new_run[..., 1:] = s[..., 1:] != s[..., :-1]
    return np.moveaxis(np.cumsum(new_run, axis=None).reshape(s.shape) - 1, -1, axis)


def _tie_mean(v, groups):
    v = np.asarray(v)
    if not v.size:
        return v
    if v.dtype.kind == "c":  # bincount takes real weights only (sorting complex: a crash)
        return (_tie_mean(v.real, groups) + 1j * _tie_mean(v.imag, groups)).astype(v.dtype)
    flat = groups.reshape(-1)
    sums = np.bincount(flat, weights=v.reshape(-1))
    return (sums / np.bincount(flat))[flat].reshape(v.shape).astype(v.dtype, copy=False)


tie_groups = primitive("tie_groups", _tie_groups, nondiff=True, batch=along_one_axis(),
                       shape_rule=same_shape(_tie_groups))


def _tie_mean_batch(prim, args, flags, params, k):
    """Batched labels are unique across the batch (tie_groups of a batch labels the whole
    array); labels shared by the members are offset per member to keep them apart."""
    v, groups = (a if f else broadcast(a, k) for a, f in zip(args, flags))
    if not flags[1]:
        count = max(int(np.prod(shape_of(args[1]), dtype=np.int64)), 1)  # labels < count
        groups = groups + np.arange(k).reshape((k,) + (1,) * len(shape_of(args[1]))) * count
    return bind(prim, (v, groups), params)


# Averaging within groups is a symmetric projection: it is its own VJP and JVP.
tie_mean = primitive(
    "tie_mean", _tie_mean,
    vjp=[lambda g, ans, v, groups: tie_mean(g, groups), None],
    jvp=[lambda t, ans, v, groups: tie_mean(t, groups), None], sparsity=dense_linear,
    batch=_tie_mean_batch, shape_rule=same_shape(_tie_mean))
tie_mean.__doc__ = """``v`` averaged over the entries that share a label in ``groups``."""


def _sort_perm(x, axis):
    return argsort(x, axis=axis, kind="stable")


sort = along_axis(
    "sort", lambda x, axis=-1, kind=None, stable=None:
    np.sort(x, axis=axis, kind=kind, stable=stable),
    vjp=[lambda g, ans, x, axis=-1, kind=None, stable=None: permute_along_axis(
        tie_mean(g, tie_groups(ans, axis=axis)),
        inverse_permutation(_sort_perm(x, axis), axis=axis), axis=axis)],
    jvp=[lambda t, ans, x, axis=-1, kind=None, stable=None: tie_mean(
        permute_along_axis(t, _sort_perm(x, axis), axis=axis), tie_groups(ans, axis=axis))],
    # piecewise linear; which element lands where depends on the data, within a line only
    sparsity=within_lines(lambda params, ndim: (params.get("axis", -1) % ndim,)))
sort.__doc__ = """Sort along an integer ``axis``. The derivative follows the sorting
permutation; tied values share their slots' derivatives evenly (as ``max`` does), the
symmetric choice between the one-sided derivatives."""


def _reduced_last(x, axis):
    """``x`` with the reduced axes moved last and merged into one; returns it, the kept shape
    of the remaining axes, and the reduced length."""
    shape = shape_of(x)
    axes = _axes(axis, len(shape))
    rest = tuple(i for i in range(len(shape)) if i not in axes)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    rest_shape = tuple(shape[i] for i in rest)
    if axes == tuple(range(len(shape) - len(axes), len(shape))):
        moved = x
    else:
        moved = transpose(x, axes=rest + axes)
    return reshape(moved, shape=rest_shape + (n,)), rest_shape, n


def _nan_slices(s):
    """True for the slices (last axis kept as 1) of sorted ``s`` that hold a NaN (sorted last)."""
    last = getitem(s, index=(Ellipsis, slice(-1, None)))
    return not_equal(last, last)


def _out_shape(x, axis, keepdims, rest_shape):
    return kept_shape(shape_of(x), axis) if keepdims else rest_shape


def median(x, axis=None, keepdims=False):
    """Median along ``axis``: the middle sorted value, or the mean of the two middle ones.

    Like numpy: NaN where a slice holds a NaN, NaN (with a warning) for an empty slice.
    """
    flat, rest_shape, n = _reduced_last(x, axis)
    if n == 0:
        return mean(x, axis=axis, keepdims=keepdims)
    s = sort(flat, axis=len(rest_shape))
    lo, hi = (n - 1) // 2, n // 2 + 1
    out = mean(getitem(s, index=(Ellipsis, slice(lo, hi))), axis=-1, keepdims=True)
    if dtype_of(out).kind in "fc":
        out = where(_nan_slices(s), np.nan, out)
    return reshape(out, shape=_out_shape(x, axis, keepdims, rest_shape))


def quantile_dtype(x_dtype, q_dtype, weak_q):
    """The dtype numpy interpolates a "linear" quantile in: a float input's own unless ``q``
    is a wider float that was not a Python number (``weak_q``); float64 for other inputs."""
    if np.dtype(x_dtype).kind != "f":
        return np.dtype(np.float64)
    if weak_q or np.dtype(q_dtype).kind != "f":
        return np.dtype(x_dtype)
    return np.result_type(x_dtype, q_dtype)


def quantile(x, q, axis=None, keepdims=False, weak_q=False, q_tensor=None):
    """Quantiles ``q`` (static, in [0, 1]) along ``axis`` with numpy's "linear" method.

    Each result is ``s[i] + gamma * (s[i + 1] - s[i])`` on sorted values ``s``, so its
    derivative is the same fixed weighted combination of the inputs the order picks out.
    The result has shape ``q.shape + remaining shape``. ``weak_q`` (q was a Python number)
    keeps a float32 input's dtype, as numpy does. ``q_tensor``, a float tensor holding ``q``,
    makes the result differentiable in it (``gamma`` is ``(n - 1) * q`` less a constant).
    """
    q = np.asarray(q)
    flat, rest_shape, n = _reduced_last(x, axis)
    if n == 0:
        raise IndexError(f"quantile: cannot take a quantile of an empty slice (input shape "
                         f"{shape_of(x)}, axis {axis})")
    s = sort(flat, axis=len(rest_shape))
    if q.dtype.kind in "iub":  # integer virtual indices: plain picks, the dtype kept
        out = getitem(s, index=(Ellipsis, (n - 1) * q.reshape(-1).astype(np.intp)))
    else:
        virtual = (n - 1) * q.reshape(-1).astype(np.float64)
        below = np.clip(np.floor(virtual), 0, n - 1).astype(np.intp)
        above = np.minimum(below + 1, n - 1)
        dtype = quantile_dtype(dtype_of(x), q.dtype, weak_q)
        gamma = (virtual - np.floor(virtual)).astype(dtype)
        if q_tensor is not None:  # the same value, carrying q's derivative
            gamma = reshape(q_tensor, shape=(-1,)) * float(n - 1) - \
                np.floor(virtual).astype(dtype_of(q_tensor))
        a = getitem(s, index=(Ellipsis, below))
        b = getitem(s, index=(Ellipsis, above))
        d = b - a
        out = where(gamma >= 0.5, b - d * (1 - gamma), a + d * gamma)  # numpy's two-sided lerp
    if dtype_of(out).kind in "fc":
        out = where(_nan_slices(s), np.nan, out)
    k = len(rest_shape)
    out = transpose(out, axes=(k,) + tuple(range(k)))
    return reshape(out, shape=q.shape + _out_shape(x, axis, keepdims, rest_shape))
