"""Shapes: transpose and concatenate primitives, and numpy's rearranging functions composed
from them and from reshape, broadcast_to, getitem and scatter_add (whose VJPs are each
other), so every derivative is again differentiable.

Functions here take tensors, numpy arrays or nested lists (lists holding tensors are stacked)
and follow numpy's signatures and semantics; bad axes or shapes raise errors naming the
function and the shapes.
"""

import math
import operator

import numpy as np

from ..engine.facts import Algebra, Lowering
from ..engine.registry import CONCATENATE, TRANSPOSE, primitive
from ..engine.tensor import Tensor, current, dtype_of, shape_of
from . import elementwise as ew
from .batching import joined, static_shape
from .patterns import MOVES
from .shape_rules import stand_in
from .core import broadcast_to as _broadcast_to, cast, getitem, reshape as _reshape, \
    scatter_add, stack as _stack, strong

reshape, stack = _reshape, _stack  # the primitives; ``reshape_to``, ``stack_arrays`` check


def _transpose_vjp(g, ans, x, axes=None):
    if axes is None:
        return transpose(g)
    inverse = tuple(np.argsort([a % len(axes) for a in axes]))
    return transpose(g, axes=inverse)


def _transpose_batch(prim, args, flags, params, k):
    (x,) = args
    nd = len(static_shape(x)) - 1
    axes = params.get("axes")
    core = reversed(range(nd)) if axes is None else (a % nd for a in axes)
    return transpose(x, axes=(0,) + tuple(a + 1 for a in core))


def _permutation(axes, shape):
    """``axes`` as a tuple of non-negative axes of ``shape`` (None: reversed)."""
    nd = len(shape)
    return tuple(reversed(range(nd))) if axes is None else tuple(a % nd for a in axes)


def _transpose_shape(x, axes=None):
    shape, dtype = shape_of(x), np.result_type(stand_in(x))
    if shape is None:
        return None, dtype
    return tuple(shape[a] for a in _permutation(axes, shape)), dtype


def _transposes_composed(inner, outer, shape):
    """The axes of one transpose equal to two (None when ``shape`` is not known)."""
    if shape is None or None in shape:
        return None
    first, then = _permutation(inner.get("axes"), shape), _permutation(outer.get("axes"), shape)
    return dict(outer, axes=tuple(first[j] for j in then))


def _is_identity(params, shape):
    axes = params.get("axes")
    return axes is not None and tuple(a % len(shape) for a in axes) == tuple(range(len(shape)))


transpose = primitive("transpose", lambda x, axes=None: np.transpose(x, axes),
                      vjp=[_transpose_vjp], linear=True, batch=_transpose_batch, sparsity=MOVES,
                      shape_rule=_transpose_shape, role=TRANSPOSE, lowering=Lowering(array_0d=True),
                      algebra=Algebra(noop=_is_identity, compose=_transposes_composed))


def _concatenate_vjp(g, ans, *xs, axis=0):
    ndim = len(shape_of(ans))
    axis = axis % ndim
    grads, start = [], 0
    for x in xs:
        size = shape_of(x)[axis]
        index = (slice(None),) * axis + (slice(start, start + size),)
        grads.append(getitem(g, index=index))
        start += size
    return grads


def _concatenate_shape(*xs, axis=0):
    shapes = [shape_of(x) for x in xs]
    if not xs or any(s is None or not s for s in shapes) or len({len(s) for s in shapes}) != 1:
        return None, np.result_type(*[stand_in(x) for x in xs]) if xs else np.dtype(np.float64)
    dtype = np.result_type(*[stand_in(x) for x in xs])
    axis %= len(shapes[0])
    joined_axis = [s[axis] for s in shapes]
    shape = [None if len({s[i] for s in shapes}) != 1 else shapes[0][i]
             for i in range(len(shapes[0]))]
    shape[axis] = None if None in joined_axis else sum(joined_axis)
    return tuple(shape), dtype


concatenate = primitive("concatenate", lambda *xs, axis=0: np.concatenate(xs, axis=axis),
                        vjp=_concatenate_vjp, linear=True, batch=joined, sparsity=MOVES,
                        shape_rule=_concatenate_shape, role=CONCATENATE,
                        doc=("Arrays joined along an existing ``axis`` (default 0), as "
                             "``numpy.concatenate``."))




# --- helpers ---------------------------------------------------------------------------------
def _leaves(x):
    if isinstance(x, (list, tuple)):
        for q in x:
            yield from _leaves(q)
    else:
        yield x


def _stack_nested(x, what):
    if not isinstance(x, (list, tuple)):
        return x
    items = [_stack_nested(q, what) for q in x]
    shapes = {tuple(np.shape(q) if not isinstance(q, Tensor) else q.shape) for q in items}
    if len(shapes) > 1:
        raise ValueError(f"{what}: the nested sequence is ragged: its items have shapes "
                         f"{sorted(shapes)}")
    return _stack(*items, axis=0)


def as_array(x, what="asarray"):
    """A Tensor stays a Tensor; a (nested) list holding tensors is stacked into one so that
    gradients flow; anything else becomes a numpy array."""
    if isinstance(x, Tensor):
        return strong(x)
    if isinstance(x, (list, tuple)) and any(isinstance(q, Tensor) for q in _leaves(x)):
        return _stack_nested(x, what)
    return np.asarray(x)


def _shape(x, what, arg="a"):
    shape = shape_of(x)
    if shape is None or None in shape:
        raise ValueError(f"{what}: the shape of {arg} must be known, got {shape}")
    return tuple(shape)


def normalize_axis(axis, ndim, what, arg="axis"):
    try:
        axis = operator.index(axis)  # as numpy: 1.0 is no axis
    except TypeError:
        raise TypeError(f"{what}: {arg} must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{what}: {arg} {axis} is out of bounds for an array of "
                                      f"dimension {ndim}")
    return axis % ndim


def _axes_tuple(axis, ndim, what):
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(a, ndim, what) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis!r}")
    return out


def index_along(axis, ndim, part):
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


def _prod(shape):
    return math.prod(map(int, shape))  # (np.prod costs microseconds per call)


# --- reshaping -------------------------------------------------------------------------------
def resolve_shape(shape, old, what="reshape"):
    """``shape`` as a tuple of ints with its -1 (if any) resolved against the ``old`` shape."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else \
        tuple(int(d) for d in shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in shape):
        raise ValueError(f"{what}: invalid new shape {shape} (at most one -1, no other "
                         "negative sizes)")
    size = _prod(old)
    if unknown:
        known = _prod([d for d in shape if d != -1])
        if known == 0 or size % known:
            raise ValueError(f"{what}: cannot reshape a tensor of shape {tuple(old)} (size "
                             f"{size}) into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if _prod(shape) != size:
        raise ValueError(f"{what}: cannot reshape a tensor of shape {tuple(old)} (size {size}) "
                         f"into shape {shape}")
    return shape


def reshape_to(a, shape, order="C"):
    """numpy.reshape (orders 'C' and 'F')."""
    a = as_array(a, "reshape")
    old = _shape(a, "reshape")
    if order in ("F", "f"):
        rev = tuple(range(len(old)))[::-1]
        new = resolve_shape(shape, old)
        out = reshape_to(transpose(a, axes=rev) if len(old) > 1 else a, new[::-1])
        return transpose(out, axes=tuple(range(len(new)))[::-1]) if len(new) > 1 else out
    if order not in ("C", "c", "A", "a", None):
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    new = resolve_shape(shape, old)
    return a if new == old and isinstance(a, Tensor) else _reshape(a, shape=new)


def ravel(a, order="C"):
    return reshape_to(a, (-1,), order)


def transpose_axes(a, axes=None):
    """numpy.transpose with the permutation checked."""
    a = as_array(a, "transpose")
    ndim = len(_shape(a, "transpose"))
    if axes is None:
        return transpose(a) if ndim > 1 else a
    perm = _axes_tuple(axes, ndim, "transpose")
    if len(perm) != ndim:
        raise ValueError(f"transpose: axes {tuple(axes)} don't match a tensor of shape "
                         f"{shape_of(a)}")
    return a if perm == tuple(range(ndim)) else transpose(a, axes=perm)


def swapaxes(x, axis1, axis2):
    ndim = len(_shape(x, "swapaxes"))
    axes = list(range(ndim))
    a1, a2 = normalize_axis(axis1, ndim, "swapaxes", "axis1"), \
        normalize_axis(axis2, ndim, "swapaxes", "axis2")
    axes[a1], axes[a2] = axes[a2], axes[a1]
    return transpose(x, axes=tuple(axes)) if a1 != a2 else x


def moveaxis(a, source, destination):
    a = as_array(a, "moveaxis")
    ndim = len(_shape(a, "moveaxis"))
    src = _axes_tuple(source, ndim, "moveaxis")
    dst = _axes_tuple(destination, ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` arguments must have the same "
                         f"number of elements, got {source!r} and {destination!r}")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose_axes(a, order)


def expand_dims(x, axis):
    """Insert length-1 axes at ``axis`` (an int or a tuple), as ``numpy.expand_dims``."""
    shape = list(_shape(x, "expand_dims"))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = len(shape) + len(axes)
    for a in sorted(_axes_tuple(axes, ndim, "expand_dims")):
        shape.insert(a, 1)
    return reshape(x, shape=tuple(shape))


def squeeze(x, axis=None):
    """Remove length-1 axes (all of them, or those in ``axis``), as ``numpy.squeeze``."""
    shape = _shape(x, "squeeze")
    if axis is None:
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        axes = set(_axes_tuple(axis, len(shape), "squeeze"))
        for a in axes:
            if shape[a] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                                 f"not equal to one (axis {a} of shape {shape})")
    return reshape(x, shape=tuple(d for i, d in enumerate(shape) if i not in axes))


def broadcast_to(array, shape):
    """numpy.broadcast_to (differentiable: its VJP sums back)."""
    array = as_array(array, "broadcast_to")
    old = _shape(array, "broadcast_to", "array")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    try:
        ok = np.broadcast_shapes(old, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"broadcast_to: cannot broadcast a tensor of shape {old} to shape "
                         f"{shape}")
    return array if old == shape and isinstance(array, Tensor) else \
        _broadcast_to(array, shape=shape)


def broadcast_arrays(*args):
    args = [as_array(a, "broadcast_arrays") for a in args]
    shapes = [_shape(a, "broadcast_arrays") for a in args]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"broadcast_arrays: shapes {shapes} cannot be broadcast together") \
            from None
    return tuple(broadcast_to(a, shape) for a in args)


def atleast_nd(nd, arys, what):
    out = []
    for a in arys:
        a = as_array(a, what)
        s = _shape(a, what)
        if len(s) < nd:
            if nd == 3 and len(s) == 1:
                new = (1,) + s + (1,)
            elif nd == 3 and len(s) == 2:
                new = s + (1,)
            else:
                new = (1,) * (nd - len(s)) + s
            a = reshape(a, shape=new)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


# --- joining and splitting -------------------------------------------------------------------
def join(arrays, axis=0, what="concatenate"):
    """numpy.concatenate (``axis=None`` flattens first)."""
    if isinstance(arrays, Tensor):
        arrays = [arrays[i] for i in range(len(arrays))]
    arrays = [as_array(a, what) for a in arrays]
    if not arrays:
        raise ValueError(f"{what}: need at least one array to concatenate")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    shapes = [_shape(a, what) for a in arrays]
    for k, s in enumerate(shapes):
        if not s:
            raise ValueError(f"{what}: zero-dimensional arrays cannot be concatenated "
                             f"(array {k} has shape ())")
    ndim = len(shapes[0])
    ax = normalize_axis(axis, ndim, what)
    for k, s in enumerate(shapes):
        if len(s) != ndim or any(d != e for i, (d, e) in enumerate(zip(s, shapes[0]))
                                 if i != ax):
            raise ValueError(f"{what}: all the input array dimensions except for the "
                             f"concatenation axis {ax} must match; shapes are {shapes}")
    if len(arrays) == 1:
        return arrays[0] if isinstance(arrays[0], Tensor) else \
            concatenate(arrays[0], axis=ax)
    return concatenate(*arrays, axis=ax)


def stack_arrays(arrays, axis=0, what="stack"):
    """numpy.stack with the shapes checked."""
    if isinstance(arrays, Tensor):
        arrays = [arrays[i] for i in range(len(arrays))]
    arrays = [as_array(a, what) for a in arrays]
    if not arrays:
        raise ValueError(f"{what}: need at least one array to stack")
    shapes = [_shape(a, what) for a in arrays]
    if len(set(shapes)) > 1:
        raise ValueError(f"{what}: all input arrays must have the same shape, got {shapes}")
    ax = normalize_axis(axis, len(shapes[0]) + 1, what)
    return _stack(*arrays, axis=ax)


def hstack(tup):
    arrs = [atleast_nd(1, [a], "hstack") for a in tup]
    return join(arrs, 0 if arrs and len(_shape(arrs[0], "hstack")) == 1 else 1, "hstack")


def vstack(tup):
    return join([atleast_nd(2, [a], "vstack") for a in tup], 0, "vstack")


def dstack(tup):
    return join([atleast_nd(3, [a], "dstack") for a in tup], 2, "dstack")


def column_stack(tup):
    arrs = []
    for a in tup:
        a = as_array(a, "column_stack")
        s = _shape(a, "column_stack")
        arrs.append(reshape(a, shape=(s[0], 1)) if len(s) == 1 else atleast_nd(2, [a], ""))
    return join(arrs, 1, "column_stack")


def split(ary, indices_or_sections, axis=0, equal=True, what="split"):
    """numpy.split (``equal=True``) and numpy.array_split."""
    ary = as_array(ary, what)
    shape = _shape(ary, what, "ary")
    ax = normalize_axis(axis, len(shape), what)
    n = shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{what}: number of sections must be larger than 0, got {sections}")
        if equal and n % sections:
            raise ValueError(f"{what}: array split does not result in an equal division "
                             f"(axis {ax} of shape {shape} into {sections} sections)")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        out.append(getitem(ary, index=index_along(ax, len(shape), slice(int(lo), int(hi)))))
    return out


# --- rearranging -----------------------------------------------------------------------------
def tile(A, reps):
    A = as_array(A, "tile")
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    shape = _shape(A, "tile", "A")
    d = max(len(shape), len(reps))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    A = reshape(A, shape=shape) if shape != shape_of(A) else A
    if all(r == 1 for r in reps):
        return A
    inter = tuple(x for s in shape for x in (1, s))
    full = tuple(x for r, s in zip(reps, shape) for x in (r, s))
    out = _broadcast_to(reshape(A, shape=inter), shape=full)
    return reshape(out, shape=tuple(r * s for r, s in zip(reps, shape)))


def repeat(a, repeats, axis=None):
    a = as_array(a, "repeat")
    if axis is None:
        a, axis = ravel(a), 0
    shape = _shape(a, "repeat")
    ax = normalize_axis(axis, len(shape), "repeat")
    if isinstance(repeats, Tensor):
        repeats = repeats._concrete("repeat: repeats")
    repeats = np.asarray(repeats)
    if repeats.ndim == 0:
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {r}")
        expanded = reshape(a, shape=shape[:ax + 1] + (1,) + shape[ax + 1:])
        out = _broadcast_to(expanded, shape=shape[:ax + 1] + (r,) + shape[ax + 1:])
        return reshape(out, shape=shape[:ax] + (shape[ax] * r,) + shape[ax + 1:])
    try:
        idx = np.repeat(np.arange(shape[ax]), repeats)
    except ValueError as exc:
        raise ValueError(f"repeat: repeats of shape {repeats.shape} do not fit axis {ax} of "
                         f"shape {shape}: {exc}") from None
    return getitem(a, index=index_along(ax, len(shape), idx))


def roll(a, shift, axis=None):
    a = as_array(a, "roll")
    if axis is None:
        shape = _shape(a, "roll")
        return reshape(roll(ravel(a), shift, 0), shape=shape)
    shape = _shape(a, "roll")
    shifts, axes = np.broadcast_arrays(np.asarray(shift), np.asarray(axis))
    total = {}
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = normalize_axis(ax, len(shape), "roll")
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        a = concatenate(getitem(a, index=index_along(ax, len(shape), slice(n - s, None))),
                        getitem(a, index=index_along(ax, len(shape), slice(0, n - s))),
                        axis=ax)
    return a


def flip(m, axis=None):
    m = as_array(m, "flip")
    shape = _shape(m, "flip", "m")
    axes = range(len(shape)) if axis is None else _axes_tuple(axis, len(shape), "flip")
    index = tuple(slice(None, None, -1) if i in axes else slice(None)
                  for i in range(len(shape)))
    return getitem(m, index=index) if axes else m


def _rot90_shape(m, k, axes):
    shape = list(shape_of(m))
    if k % 2:
        shape[axes[0]], shape[axes[1]] = shape[axes[1]], shape[axes[0]]
    return tuple(shape), dtype_of(m)


# ``k`` quarter turns (1 to 3) in the plane of the non-negative ``axes``: linear, its
# transpose is the turn back
_rot90 = primitive(
    "rot90", lambda m, k, axes: np.rot90(m, k, axes),
    vjp=[lambda g, ans, m, k, axes: _rot90(g, k=4 - k, axes=axes)], linear=True,
    shape_rule=_rot90_shape, sparsity=MOVES,
    batch=lambda prim, args, flags, params, n: _rot90(
        args[0], k=params["k"], axes=tuple(a + 1 for a in params["axes"])))


def rot90(m, k=1, axes=(0, 1)):
    m = as_array(m, "rot90")
    ndim = len(_shape(m, "rot90", "m"))
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got {axes!r}")
    a0, a1 = _axes_tuple(axes, ndim, "rot90")
    k = operator.index(k) % 4
    return _rot90(m, k=k, axes=(a0, a1)) if k else m


def pad_pairs(value, shape, name, dtype=np.int64):
    """numpy.pad's ``(before, after)`` per axis from a number, a pair or one pair per axis
    (``pad_width``, ``stat_length``, ``end_values``): an array of shape ``(ndim, 2)``."""
    try:
        pairs = np.asarray(value, dtype=dtype)
        return np.broadcast_to(pairs.reshape(-1, 2) if pairs.ndim else pairs, (len(shape), 2))
    except (TypeError, ValueError):
        raise ValueError(f"pad: {name} {value!r} does not fit an array of shape "
                         f"{shape}") from None


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad with modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap' (the
    numpy namespace adds the modes that compute their values)."""
    array = as_array(array, "pad")
    shape = _shape(array, "pad", "array")
    ndim = len(shape)
    widths = pad_pairs(pad_width, shape, "pad_width")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    if mode == "constant":
        extra = set(kwargs) - {"constant_values"}
        if extra:
            raise TypeError(f"pad: unexpected keyword arguments {sorted(extra)} for mode "
                            "'constant'")
        values = kwargs.get("constant_values", 0)
        if isinstance(values, Tensor):
            if values.shape != ():
                raise ValueError("pad: a tensor constant_values must be a scalar, got shape "
                                 f"{values.shape}")
            cvals = [(values, values)] * ndim
        else:
            cvals = np.broadcast_to(np.asarray(values).reshape(-1, 2) if np.ndim(values)
                                    else np.asarray(values), (ndim, 2))
        dtype = array.dtype
        out = array
        for ax in range(ndim):
            before, after = (int(w) for w in widths[ax])
            if before == after == 0:
                continue
            cur = list(shape_of(out))
            parts = []
            for width, c, where in ((before, cvals[ax][0], 0), (after, cvals[ax][1], 1)):
                block = tuple(cur[:ax] + [width] + cur[ax + 1:])
                if width == 0:
                    continue
                if isinstance(c, Tensor):
                    part = _broadcast_to(ew.add(c, np.zeros((), dtype)), shape=block)
                else:
                    part = np.full(block, c, dtype=dtype)
                parts.append((where, part))
            pieces = [p for w, p in parts if w == 0] + [out] + [p for w, p in parts if w == 1]
            out = concatenate(*pieces, axis=ax)
        return out
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        if kwargs.get("reflect_type", "even") != "even":
            raise ValueError("pad: only reflect_type='even' is supported")
        out = array
        for ax in range(ndim):
            before, after = (int(w) for w in widths[ax])
            if before == after == 0:
                continue
            try:
                idx = np.pad(np.arange(shape[ax]), (before, after), mode=mode)
            except ValueError as exc:
                raise ValueError(f"pad: cannot pad axis {ax} of shape {shape} in mode "
                                 f"{mode!r}: {exc}") from None
            out = getitem(out, index=index_along(ax, ndim, idx))
        return out
    raise ValueError(f"pad: mode {mode!r} is not supported; use 'constant', 'edge', "
                     "'reflect', 'symmetric' or 'wrap'")


# --- diagonals and triangles -----------------------------------------------------------------
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = as_array(a, "diagonal")
    shape = _shape(a, "diagonal")
    if len(shape) < 2:
        raise ValueError(f"diagonal: the array must be at least 2-d, got shape {shape}")
    ax1 = normalize_axis(axis1, len(shape), "diagonal", "axis1")
    ax2 = normalize_axis(axis2, len(shape), "diagonal", "axis2")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (both {ax1})")
    perm = [i for i in range(len(shape)) if i not in (ax1, ax2)] + [ax1, ax2]
    a = transpose_axes(a, perm)
    n1, n2 = shape[ax1], shape[ax2]
    offset = int(offset)
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    i = np.arange(length) + max(-offset, 0)
    j = np.arange(length) + max(offset, 0)
    return getitem(a, index=(Ellipsis, i, j))


def trace(a, offset=0, axis1=0, axis2=1):
    from .reduction import sum as _sum  # reduction imports this module
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1)


def diag(v, k=0):
    v = as_array(v, "diag")
    shape = _shape(v, "diag", "v")
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {shape}")
    k = int(k)
    n = shape[0] + abs(k)
    i = np.arange(shape[0]) + max(-k, 0)
    j = np.arange(shape[0]) + max(k, 0)
    return scatter_add(v, index=(i, j), shape=(n, n))


def diagflat(v, k=0):
    return diag(ravel(v), k)


def _triangle(m, k, lower, what):
    m = as_array(m, what)
    shape = _shape(m, what, "m")
    if not shape:
        raise ValueError(f"{what}: the array must be at least 1-d, got shape ()")
    rows, cols = (shape[-2], shape[-1]) if len(shape) > 1 else (shape[0], shape[0])
    mask = np.tri(rows, cols, k=int(k) - (0 if lower else 1), dtype=bool)
    if not lower:
        mask = ~mask
    return ew.where(mask, m, np.zeros((), m.dtype))


def tril(m, k=0):
    return _triangle(m, k, True, "tril")


def triu(m, k=0):
    return _triangle(m, k, False, "triu")


# --- selection and differences ---------------------------------------------------------------
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: list of cases must be same length as list of conditions "
                         f"({len(condlist)} conditions, {len(choicelist)} choices)")
    # A Python number (or a weak tensor) stays one, so that numpy's promotion keeps the
    # choices' dtype (a default of 0 does not make float32 choices float64)
    weak = type(default) in (bool, int, float, complex) or \
        isinstance(default, Tensor) and default._weak
    out = default if weak else as_array(default, "select")
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        cond = as_array(cond, "select")
        if cond.dtype.kind != "b":
            raise TypeError(f"select: invalid entry in condlist: should be boolean ndarray, "
                            f"got dtype {cond.dtype}")
        out = ew.where(cond, as_array(choice, "select"), out)
    if not isinstance(out, Tensor):
        out = as_array(out, "select")
        out = ew.add(out, np.zeros((), out.dtype))
    return out


def choose(a, choices, mode="raise"):
    a = as_array(a, "choose")
    n = len(choices)
    if a.dtype.kind not in "iu":
        raise TypeError(f"choose: a must hold integers, got dtype {a.dtype}")
    if not isinstance(a, Tensor) or current(a)._value is not None:
        values = np.asarray(current(a)._value if isinstance(a, Tensor) else a)
        if mode == "wrap":
            values = values % n
        elif mode == "clip":
            values = np.clip(values, 0, n - 1)
        elif (values < 0).any() or (values >= n).any():
            raise ValueError(f"choose: invalid entry in choice array (values must be in "
                             f"[0, {n}) with {n} choices)")
        a = values
    return select([ew.equal(a, k) for k in range(n)], list(choices), 0)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = as_array(a, "diff")
    shape = _shape(a, "diff")
    if not shape:
        raise ValueError("diff: requires input that is at least one dimensional")
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    ax = normalize_axis(axis, len(shape), "diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            parts.append(a if not parts else None)
            continue
        extra = as_array(extra, "diff")
        if not shape_of(extra):
            extra = broadcast_to(extra, shape[:ax] + (1,) + shape[ax + 1:])
        parts.append(extra)
    parts = [p for p in parts if p is not None]
    if prepend is not None or append is not None:
        pieces = ([parts[0]] if prepend is not None else []) + [a] + \
            ([parts[-1]] if append is not None else [])
        a = join(pieces, ax, "diff")
    # numpy differences booleans with not_equal (subtract raises TypeError on them)
    op = ew.not_equal if dtype_of(a) == np.bool_ else ew.subtract
    for _ in range(n):
        ndim = len(shape_of(a))
        a = op(getitem(a, index=index_along(ax, ndim, slice(1, None))),
               getitem(a, index=index_along(ax, ndim, slice(None, -1))))
    return a


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: valid values for `indexing` are 'xy' and 'ij', got "
                         f"{indexing!r}")
    ndim = len(xi)
    outs = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        outs.append(reshape_to(ravel(x), tuple(shape)))
    return tuple(outs) if sparse else broadcast_arrays(*outs)


def vander(x, N=None, increasing=False):
    x = as_array(x, "vander")
    shape = _shape(x, "vander", "x")
    if len(shape) != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape {shape}")
    N = shape[0] if N is None else int(N)
    powers = np.arange(N) if increasing else np.arange(N)[::-1]
    return ew.power(reshape(x, shape=(shape[0], 1)), powers.reshape(1, N))


def append(arr, values, axis=None):
    if axis is None:
        return join([ravel(arr), ravel(values)], 0, "append")
    return join([arr, values], axis, "append")


def delete(arr, obj, axis=None):
    arr = as_array(arr, "delete")
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = _shape(arr, "delete", "arr")
    ax = normalize_axis(axis, len(shape), "delete")
    keep = _positions("delete", np.delete, shape, ax, obj)
    return getitem(arr, index=index_along(ax, len(shape), keep))


def _positions(what, numpy_fn, shape, ax, obj, *extra):
    """numpy's delete/insert on the positions along axis ``ax``, its index errors naming that
    axis (numpy's name axis 0 of the 1-D positions)."""
    try:
        return numpy_fn(np.arange(shape[ax]), obj, *extra)
    except IndexError as exc:
        raise IndexError(f"{what}: obj {obj!r} is out of bounds for axis {ax} of arr with "
                         f"shape {shape} (size {shape[ax]})") from exc


def insert(arr, obj, values, axis=None):
    arr = as_array(arr, "insert")
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = _shape(arr, "insert", "arr")
    ax = normalize_axis(axis, len(shape), "insert")
    values = as_array(values, "insert")
    if values.dtype != arr.dtype:  # numpy casts the values to arr's dtype
        values = cast(values, dtype=arr.dtype)
    vshape = _shape(values, "insert", "values")
    if np.ndim(obj) == 0 and not isinstance(obj, slice):
        # numpy: values gain leading axes up to arr.ndim, and their first axis moves to `axis`
        values = reshape(values, shape=(1,) * (len(shape) - len(vshape)) + vshape) \
            if len(vshape) < len(shape) else values
        values = moveaxis(values, 0, ax) if len(shape) else values
        m = shape_of(values)[ax] if len(shape) else 1
    else:
        m = len(np.arange(shape[ax])[obj]) if isinstance(obj, slice) else int(np.size(obj))
    block = shape[:ax] + (m,) + shape[ax + 1:]
    values = broadcast_to(values, block)
    order = _positions("insert", np.insert, shape, ax, obj,
                       np.arange(shape[ax], shape[ax] + m))
    both = join([arr, values], ax, "insert")
    return getitem(both, index=index_along(ax, len(shape), order))
