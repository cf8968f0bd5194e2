"""Shapes, joining, splitting, slicing and rearranging, with numpy's names and signatures.

Arguments may be tensors, numpy arrays, Python scalars or (nested) lists; lists holding
tensors are stacked, so ``concatenate([[0.0], x])`` differentiates in ``x``. Everything is
built from differentiable primitives (see ``hessgrad.ops.shape``), so derivatives of any order
work in eager mode and inside ``hessgrad.function``.

Where numpy returns a view (``reshape`` and ``ravel`` when they need no copy, ``transpose``,
``swapaxes``, ``moveaxis``, ``expand_dims``, ``squeeze``), the result is noted as a view of
its argument: writes into either show in the other (``hessgrad.ops.inplace``). Where numpy
returns a new array, the result is never the argument itself.

>>> import hessgrad.numpy as hnp
>>> hnp.concatenate([[0.0], hnp.arange(3.0)]).numpy()
array([0., 0., 1., 2.])
"""

import numpy as _np

from ..engine.tensor import Tensor as _Tensor, shape_of as _shape_of
from ..ops import core as _core, indexing as _ix, inplace as _ip, shape as _sh
from ..ops.linalg import tensordot as _tensordot
from ._arraylike import asarray as _asarray, constant as _constant, \
    has_tensor as _has_tensor, stacked as _stacked
from ._math import around as _around, floor as _floor
from ._reductions import amax as _amax, amin as _amin, mean as _mean, median as _median
from ._out import writes_out as _writes_out

_NoValue = object()


def shape(a):
    """The shape of ``a``: static, so a symbolic tensor's unknown dimensions are None (as in
    TensorFlow); a tensor of unknown rank raises ValueError."""
    a = _stacked(a, "shape")
    if not isinstance(a, _Tensor):
        return _np.shape(a)
    return _known_rank_shape(a, "shape")


def _known_rank_shape(a, fname):
    s = _shape_of(a)
    if s is None:
        raise ValueError(f"hessgrad.numpy.{fname}: the rank of symbolic tensor {a.name} is "
                         "unknown while its graph is built; give its placeholder a shape")
    return tuple(s)


def ndim(a):
    """numpy's ``ndim``: the number of axes (a shape query, nothing to differentiate)."""
    a = _stacked(a, "ndim")
    return len(_known_rank_shape(a, "ndim")) if isinstance(a, _Tensor) else _np.ndim(a)


def size(a, axis=None):
    """numpy's ``size``: the number of elements, or the length of ``axis`` (a shape query)."""
    a = _stacked(a, "size")
    s = _known_rank_shape(a, "size") if isinstance(a, _Tensor) else _np.shape(a)
    picked = s if axis is None else (s[_sh.normalize_axis(axis, len(s), "size")],)
    if None in picked:
        raise ValueError(f"hessgrad.numpy.size: symbolic tensor {a.name} of shape {s} has "
                         "dimensions unknown while its graph is built")
    return int(_np.prod(picked, dtype=_np.int64))


def _new(result, *inputs):
    """``result`` as numpy's new array: never one of ``inputs`` (a write into it would reach
    them; a numpy input came back from a no-op, e.g. a zero pad)."""
    if isinstance(result, (_Tensor, _np.ndarray)) and any(result is x for x in inputs):
        return _core.identity(result)
    return result


def _reshaped_view(a, out, order, as_numpy):
    """``out``, ``a`` reshaped, noted as its view when numpy's ``as_numpy`` (reshape, ravel)
    of ``a`` would give one."""
    if isinstance(a, _Tensor) and isinstance(out, _Tensor) and out is not a and \
            _ip.makes_view(a, as_numpy, owned_ok=order in ("C", "c")):
        _ip.note_view(a, out, _ip.ReshapeView(_shape_of(out), order))
    return out


def _permuted_view(a, out, perm):
    """``out``, ``a`` with its axes permuted by ``perm`` (numpy's transpose axes; None:
    reversed): always a view in numpy."""
    if isinstance(a, _Tensor) and isinstance(out, _Tensor) and out is not a:
        _ip.note_view(a, out, _ip.TransposeView(perm))
    return out


def _reshaped(a, out):
    """``out``, ``a`` with unit axes added or removed: always a view in numpy."""
    if isinstance(a, _Tensor) and isinstance(out, _Tensor) and out is not a:
        _ip.note_view(a, out, _ip.ReshapeView(_shape_of(out)))
    return out


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """numpy.reshape: ``shape`` may hold one -1; orders 'C' and 'F'. A view of ``a`` where
    numpy makes no copy (see the module's docstring).

    >>> import hessgrad.numpy as hnp
    >>> hnp.reshape(hnp.arange(6), (-1, 3)).shape
    (2, 3)
    """
    if shape is None:
        if newshape is None:
            raise TypeError("reshape: missing the new shape (argument 'shape')")
        shape = newshape
    out = _sh.reshape_to(a, shape, order)
    if copy:
        return _new(out, a)
    return _reshaped_view(a, out, order, lambda x: x.reshape(_shape_of(out), order=order))


def ravel(a, order="C"):
    """numpy's ``ravel``: the elements as a 1-d array (``order`` as numpy's), differentiable."""
    out = _sh.ravel(a, order)
    return _reshaped_view(a, out, order, lambda x: _np.ravel(x, order))


def transpose(a, axes=None):
    """numpy's ``transpose``: the axes reversed or permuted by ``axes``, differentiable."""
    out = _sh.transpose_axes(a, axes)
    return _permuted_view(a, out, None if axes is None else
                          tuple(int(k) % len(_shape_of(out)) for k in axes))


def permute_dims(a, axes=None):
    """The array API's ``permute_dims``: ``transpose`` with ``axes``."""
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    """numpy's ``swapaxes``: axes ``axis1`` and ``axis2`` interchanged, differentiable."""
    out = _sh.swapaxes(_sh.as_array(a, "swapaxes"), axis1, axis2)
    if out is a or not isinstance(out, _Tensor):
        return out
    n = len(_shape_of(out))
    perm = list(range(n))
    i, j = int(axis1) % n, int(axis2) % n
    perm[i], perm[j] = perm[j], perm[i]
    return _permuted_view(a, out, tuple(perm))


def moveaxis(a, source, destination):
    """numpy's ``moveaxis``: axes moved from ``source`` to ``destination``, differentiable."""
    out = _sh.moveaxis(a, source, destination)
    if out is a or not isinstance(out, _Tensor):
        return out
    n = len(_shape_of(out))
    src = [int(k) % n for k in _np.atleast_1d(source)]
    dst = [int(k) % n for k in _np.atleast_1d(destination)]
    perm = [k for k in range(n) if k not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return _permuted_view(a, out, tuple(perm))


def expand_dims(a, axis):
    """numpy's ``expand_dims``: length-1 axes inserted at ``axis``, differentiable."""
    return _reshaped(a, _sh.expand_dims(_sh.as_array(a, "expand_dims"), axis))


def squeeze(a, axis=None):
    """numpy's ``squeeze``: length-1 axes removed (all, or those in ``axis``), differentiable."""
    return _reshaped(a, _sh.squeeze(_sh.as_array(a, "squeeze"), axis))


def broadcast_to(array, shape):
    """numpy's ``broadcast_to``: ``array`` broadcast to ``shape``; the gradient sums over the
    broadcast axes."""
    return _sh.broadcast_to(array, shape)


def broadcast_arrays(*args):
    """numpy's ``broadcast_arrays``: the arguments broadcast against each other, differentiable."""
    return _sh.broadcast_arrays(*args)


def broadcast_shapes(*shapes):
    """numpy's ``broadcast_shapes``: the shape the given shapes broadcast to (shapes only)."""
    return _np.broadcast_shapes(*shapes)


def atleast_1d(*arys):
    """numpy's ``atleast_1d``: each argument viewed with at least one axis, differentiable."""
    return _sh.atleast_nd(1, arys, "atleast_1d")


def atleast_2d(*arys):
    """numpy's ``atleast_2d``: each argument viewed with at least two axes, differentiable."""
    return _sh.atleast_nd(2, arys, "atleast_2d")


def atleast_3d(*arys):
    """numpy's ``atleast_3d``: each argument viewed with at least three axes, differentiable."""
    return _sh.atleast_nd(3, arys, "atleast_3d")


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """numpy.concatenate; lists and scalars mix with tensors.

    >>> import hessgrad.numpy as hnp
    >>> hnp.concatenate([hnp.ones(2), [5.0]]).numpy()
    array([1., 1., 5.])
    """
    if out is not None:
        raise TypeError("concatenate: out= is not supported: hessgrad arrays are immutable")
    result = _new(_sh.join(arrays, axis, "concatenate"), *_listed(arrays))
    return result if dtype is None else result.astype(dtype)


concat = concatenate


def block(arrays):
    """numpy.block: assemble an array from nested lists of blocks; the innermost lists join
    along the last axis, the next along the second-to-last, and so on (blocks get leading
    unit axes up to the result's ndim, the larger of the nesting depth and the blocks' ndim).

    >>> import numpy as np, hessgrad.numpy as hnp
    >>> hnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), 5.0]]).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 5.0]]
    """
    def depth_and_ndim(x, path):
        if isinstance(x, tuple):
            raise TypeError(f"block: {path} is a tuple; only lists may nest (as in numpy)")
        if not isinstance(x, list):
            return 0, len(shape(x))
        if not x:
            raise ValueError(f"block: {path} is an empty list")
        found = [depth_and_ndim(y, f"{path}[{k}]") for k, y in enumerate(x)]
        if len({d for d, _ in found}) != 1:
            raise ValueError(f"block: the lists in {path} are nested to different depths")
        return found[0][0] + 1, max(n for _, n in found)

    depth, ndim = depth_and_ndim(arrays, "arrays")
    ndim = max(depth, ndim)

    def assemble(x, level):
        if not isinstance(x, list):
            x = _sh.as_array(x, "block")
            return _sh.reshape_to(x, (1,) * (ndim - len(_shape_of(x))) + tuple(_shape_of(x)))
        return _sh.join([assemble(y, level + 1) for y in x], level - depth, "block")
    return _new(assemble(arrays, 0), *_listed(arrays))


def _listed(arrays):
    """The arrays inside a (nested) list of them."""
    if isinstance(arrays, (list, tuple)):
        return [a for x in arrays for a in _listed(x)]
    return [arrays]


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.stack, e.g. of a list of 0-d tensors.

    >>> import hessgrad.numpy as hnp
    >>> x = hnp.array([1.0, 2.0])
    >>> hnp.stack([x[1], x[0], 3.0]).numpy()
    array([2., 1., 3.])
    """
    if out is not None:
        raise TypeError("stack: out= is not supported: hessgrad arrays are immutable")
    result = _sh.stack_arrays(arrays, axis)
    return result if dtype is None else result.astype(dtype)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """numpy's ``hstack``: arrays joined along their second axis (the first for 1-d),
    differentiable."""
    return _new(_sh.hstack(tup), *_listed(tup))


def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy's ``vstack``: arrays joined along the first axis (1-d ones as rows), differentiable."""
    return _new(_sh.vstack(tup), *_listed(tup))


row_stack = vstack


def dstack(tup):
    """numpy's ``dstack``: arrays joined along the third axis, differentiable."""
    return _new(_sh.dstack(tup), *_listed(tup))


def column_stack(tup):
    """numpy's ``column_stack``: 1-d arrays as columns of a 2-d array, differentiable."""
    return _new(_sh.column_stack(tup), *_listed(tup))


def split(ary, indices_or_sections, axis=0):
    """numpy's ``split``: equal sections or pieces at the given indices along ``axis``,
    differentiable."""
    return _sh.split(ary, indices_or_sections, axis, True, "split")


def array_split(ary, indices_or_sections, axis=0):
    """numpy's ``array_split``: as ``split``, sections may differ in length, differentiable."""
    return _sh.split(ary, indices_or_sections, axis, False, "array_split")


def hsplit(ary, indices_or_sections):
    """numpy's ``hsplit``: ``split`` along the second axis (the first for 1-d), differentiable."""
    ary = _sh.as_array(ary, "hsplit")
    return _sh.split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0, True, "hsplit")


def vsplit(ary, indices_or_sections):
    """numpy's ``vsplit``: ``split`` along the first axis, differentiable."""
    return _sh.split(_min_ndim(ary, 2, "vsplit"), indices_or_sections, 0, True, "vsplit")


def dsplit(ary, indices_or_sections):
    """numpy's ``dsplit``: ``split`` along the third axis, differentiable."""
    return _sh.split(_min_ndim(ary, 3, "dsplit"), indices_or_sections, 2, True, "dsplit")


def _min_ndim(ary, n, what):
    ary = _sh.as_array(ary, what)
    if ndim(ary) < n:
        raise ValueError(f"{what} only works on arrays of {n} or more dimensions, got shape "
                         f"{_shape_of(ary)}")
    return ary


def tile(A, reps):
    """numpy's ``tile``: ``A`` repeated ``reps`` times; the gradient sums the copies."""
    return _new(_sh.tile(A, reps), A)


def repeat(a, repeats, axis=None):
    """numpy's ``repeat``: each element repeated ``repeats`` times, differentiable."""
    return _sh.repeat(_stacked(a, "repeat"), _stacked(repeats, "repeat", "repeats"), axis)


def roll(a, shift, axis=None):
    """numpy's ``roll``: elements shifted cyclically along ``axis``, differentiable."""
    return _sh.roll(_stacked(a, "roll"), _stacked(shift, "roll", "shift"), axis)


def flip(m, axis=None):
    """numpy's ``flip``: the order of elements reversed along ``axis``, differentiable."""
    return _sh.flip(m, axis)


def fliplr(m):
    """numpy's ``fliplr``: columns in reverse order (axis 1), differentiable."""
    m = _sh.as_array(m, "fliplr")
    if ndim(m) < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got shape {shape(m)}")
    return _sh.flip(m, 1)


def flipud(m):
    """numpy's ``flipud``: rows in reverse order (axis 0), differentiable."""
    m = _sh.as_array(m, "flipud")
    if ndim(m) < 1:
        raise ValueError("flipud: input must be >= 1-d, got shape ()")
    return _sh.flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """numpy's ``rot90``: rotation by ``k`` quarter turns in the plane of ``axes``,
    differentiable."""
    return _sh.rot90(m, k, axes)


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad with modes 'constant', 'edge', 'reflect', 'symmetric', 'wrap', 'maximum',
    'minimum', 'mean', 'median' (with ``stat_length``), 'linear_ramp' (with ``end_values``)
    and 'empty' (which, as in jax.numpy, pads with zeros); ``reflect_type='odd'`` for
    'reflect' and 'symmetric'; ``pad_width`` in every form numpy takes (a number, a pair,
    pairs per axis, ``{axis: width}``); a callable mode as numpy's: it writes the padding of
    each line of the zero-padded array in place (``vector[:before] = ...``).

    >>> import hessgrad.numpy as hnp
    >>> hnp.pad(hnp.array([1.0, 2.0]), (1, 2), mode="edge").numpy()
    array([1., 1., 2., 2., 2.])
    """
    array = _sh.as_array(array, "pad")
    nd = len(_np.shape(array) if not isinstance(array, _Tensor) else array.shape)
    if isinstance(pad_width, dict):
        pad_width = _pairs_of_axes(pad_width, nd)
    pad_width = _as_pairs(_constant(pad_width, "pad", "pad_width"), nd, "pad_width")
    if callable(mode):
        return _pad_by_function(array, pad_width, mode, kwargs)
    for option in ("stat_length", "end_values", "constant_values"):
        if kwargs.get(option) is not None and not _has_tensor(kwargs[option]):
            kwargs[option] = _as_pairs(kwargs[option], nd, option)
    if mode in _PAD_STATISTICS or mode == "linear_ramp":
        return _new(_pad_computed(array, pad_width, mode, kwargs), array)
    if mode in ("reflect", "symmetric") and kwargs.get("reflect_type") == "odd":
        if set(kwargs) != {"reflect_type"}:
            raise TypeError(f"pad: unexpected keyword arguments "
                            f"{sorted(set(kwargs) - {'reflect_type'})} for mode {mode!r}")
        return _new(_pad_odd(array, pad_width, mode), array)
    if mode == "empty":
        if kwargs:
            raise TypeError(f"pad: unexpected keyword arguments {sorted(kwargs)} for mode "
                            "'empty'")
        mode = "constant"
    return _new(_sh.pad(array, pad_width, mode, **kwargs), array)


_PAD_STATISTICS = {"maximum": _amax, "minimum": _amin, "mean": _mean, "median": _median}


def _pad_by_function(array, pad_width, function, kwargs):
    """numpy's callable mode: ``function(line, (before, after), axis, kwargs)`` for each line
    along each axis of the zero-padded array, a view it writes into (in place on a tensor,
    so the padding it computes from the array differentiates)."""
    if not isinstance(array, _Tensor):
        return _np.pad(array, pad_width, function, **kwargs)
    padded = _new(_sh.pad(array, pad_width, "constant"), array)
    for axis in range(len(padded.shape)):
        lines = moveaxis(padded, axis, -1)
        for index in _np.ndindex(*lines.shape[:-1]):
            function(lines[index], pad_width[axis], axis, kwargs)
    return padded


def _pairs_of_axes(widths, ndim):
    """numpy's ``{axis: width or (before, after)}`` form of ``pad_width`` (axes not named are
    not padded) as a pair per axis."""
    pairs = [(0, 0)] * ndim
    for axis, width in widths.items():
        if not isinstance(axis, (int, _np.integer)) or not -ndim <= axis < ndim:
            raise ValueError(f"pad: pad_width names axis {axis!r}, but the array has {ndim} "
                             "dimensions")
        if isinstance(width, (int, _np.integer)):
            width = (width, width)
        if not (isinstance(width, tuple) and len(width) == 2 and
                all(isinstance(w, (int, _np.integer)) for w in width)):
            raise TypeError(f"pad: pad_width for axis {axis} must be an int or a pair of ints "
                            f"(before, after), got {width!r}")
        pairs[axis] = width
    return pairs


def _as_pairs(value, ndim, name):
    """numpy.pad's ``(before, after)`` per axis, by numpy's broadcasting rules: one value for
    every side (``3``, ``(3,)``, ``((3,),)``), one pair for every axis (``(1, 2)``,
    ``((1, 2),)``), or one value or pair per axis (``((1,), (2,))``, ``((1, 2), (3, 4))``):
    an array of shape ``(ndim, 2)``."""
    x = _np.asarray(value)
    if x.ndim < 3:
        if x.size == 1:
            return _np.broadcast_to(x.reshape(()), (ndim, 2))
        if x.size == 2 and x.shape != (2, 1):
            return _np.broadcast_to(x.reshape(2), (ndim, 2))
    try:
        return _np.broadcast_to(x, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {name} {value!r} (shape {x.shape}) does not broadcast to "
                         f"({ndim}, 2), a (before, after) pair for each axis of the array") \
            from None


def _pad_computed(array, pad_width, mode, kwargs):
    """The modes whose padding is computed from the array, one axis after another as numpy
    does (so later axes' padding covers the earlier axes' pads, corners included)."""
    option = "end_values" if mode == "linear_ramp" else "stat_length"
    extra = set(kwargs) - {option}
    if extra:
        raise TypeError(f"pad: unexpected keyword arguments {sorted(extra)} for mode {mode!r}")
    array = _sh.as_array(array, "pad")
    shape = _np.shape(array) if not isinstance(array, _Tensor) else tuple(array.shape)
    widths = _sh.pad_pairs(pad_width, shape, "pad_width")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    given = kwargs.get(option)
    if isinstance(given, _Tensor) or any(isinstance(v, _Tensor) for v in _np.ravel(
            _np.asarray(given, dtype=object))):
        raise TypeError(f"pad: {option} must be numbers, not tensors")
    if mode == "linear_ramp":
        options = _sh.pad_pairs(0 if given is None else given, shape, option, _np.float64)
    else:
        options = None if given is None else _sh.pad_pairs(given, shape, option)
        if options is not None and (options < 0).any():
            raise ValueError(f"pad: stat_length must be non-negative, got {given!r}")
    dtype = _np.dtype(array.dtype)
    out = array
    for ax, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        n = shape[ax]
        if n == 0:
            raise ValueError(f"pad: cannot extend the empty axis {ax} of shape {shape} in "
                             f"mode {mode!r}")
        ends = [_sh.getitem(out, index=_sh.index_along(ax, len(shape), part))
                for part in (slice(0, 1), slice(n - 1, n))]
        if mode == "linear_ramp":
            parts = [_ramp(edge, end, width, ax, len(shape), dtype)
                     for edge, end, width in zip(ends, options[ax], (before, after))]
            parts[1] = flip(parts[1], ax)
        else:
            parts = [_pad_statistic(out, mode, ax, n, side, width, options, dtype)
                     for side, width in enumerate((before, after))]
        out = concatenate([parts[0], out, parts[1]], axis=ax)
    return out


def _pad_odd(array, pad_width, mode):
    """numpy's odd reflection (``2 * edge - x``, in chunks whose edge moves for wide pads) is
    linear along each axis: numpy's own padding of the identity gives its matrix."""
    shape = _np.shape(array) if not isinstance(array, _Tensor) else tuple(array.shape)
    widths = _sh.pad_pairs(pad_width, shape, "pad_width")
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    dtype, out = _np.dtype(array.dtype), array
    for ax, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        if shape[ax] == 0:
            raise ValueError(f"pad: cannot extend the empty axis {ax} of shape {shape} in "
                             f"mode {mode!r}")
        m = _np.pad(_np.eye(shape[ax]), ((before, after), (0, 0)), mode=mode,
                    reflect_type="odd")
        out = _sh.moveaxis(_tensordot(m.astype(_np.result_type(dtype, _np.float64)), out,
                                      axes=([1], [ax])), 0, ax)
    if dtype.kind in "iub":  # numpy keeps the array's dtype
        out = _around(out).astype(dtype)
    return out


def _ramp(edge, end, width, ax, ndim, dtype):
    """numpy's ``linspace(end, edge, width, endpoint=False)`` along ``ax``."""
    steps = _np.arange(width, dtype=_np.float64).reshape((-1,) + (1,) * (ndim - ax - 1))
    ramp = steps * ((edge - end) / max(width, 1)) + end
    if dtype.kind in "iu":
        ramp = _floor(ramp)
    return ramp.astype(dtype) if ramp.dtype != dtype else ramp


def _pad_statistic(out, mode, ax, n, side, width, lengths, dtype):
    """The ``width`` values before (side 0) or after (side 1) ``out`` along ``ax``: the
    statistic of the ``stat_length`` values at that end of the original extent ``n``."""
    length = n if lengths is None else min(int(lengths[ax][side]), n)
    if width and not length:
        raise ValueError(f"pad: stat_length 0 gives no values for mode {mode!r} on axis {ax}")
    part = slice(0, length) if side == 0 else slice(n - length, n)
    stat = _PAD_STATISTICS[mode](_sh.getitem(out, index=_sh.index_along(ax, out.ndim, part)),
                                 axis=ax, keepdims=True)
    if dtype.kind in "iu":  # numpy rounds a mean or median into an integer array
        stat = _around(stat)
    if stat.dtype != dtype:
        stat = stat.astype(dtype)
    block = list(_shape_of(out) if isinstance(out, _Tensor) else _np.shape(out))
    block[ax] = width
    return broadcast_to(stat, tuple(block))


def diag(v, k=0):
    """numpy's ``diag``: the ``k``-th diagonal of a 2-d array, or a 2-d array with a 1-d ``v`` on
    it, differentiable."""
    return _sh.diag(v, k)


def diagflat(v, k=0):
    """numpy's ``diagflat``: a 2-d array with the flattened ``v`` on its ``k``-th diagonal,
    differentiable."""
    return _sh.diagflat(v, k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy's ``diagonal``: the diagonal at ``offset`` in the plane of ``axis1``, ``axis2``,
    differentiable."""
    return _sh.diagonal(a, offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy's ``trace``: the sum along a diagonal, differentiable (``out=`` as numpy's)."""
    if out is not None:
        raise TypeError("trace: out= is not supported: hessgrad arrays are immutable")
    result = _sh.trace(a, offset, axis1, axis2)
    return result if dtype is None else result.astype(dtype)


def triu(m, k=0):
    """numpy's ``triu``: the upper triangle from diagonal ``k`` on, the rest zero,
    differentiable."""
    return _sh.triu(m, k)


def tril(m, k=0):
    """numpy's ``tril``: the lower triangle up to diagonal ``k``, the rest zero, differentiable."""
    return _sh.tril(m, k)


def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy's ``take``: elements at ``indices`` (along ``axis``); the gradient scatter-adds
    back."""
    if out is not None:
        raise TypeError("take: out= is not supported: hessgrad arrays are immutable")
    return _ix.take(_asarray(a, "take"), _stacked(indices, "take", "indices"), axis, mode)


def take_along_axis(arr, indices, axis=-1):
    """numpy's ``take_along_axis``: elements picked by an index array along ``axis``,
    differentiable."""
    return _ix.take_along_axis(_asarray(arr, "take_along_axis", "arr"),
                               _stacked(indices, "take_along_axis", "indices"), axis)


def select(condlist, choicelist, default=0):
    """numpy's ``select``: per element, the choice of the first true condition, else ``default``;
    differentiable in the choices."""
    return _sh.select(condlist, choicelist, default)


def choose(a, choices, out=None, mode="raise"):
    """numpy's ``choose``: per element, ``choices[a]``; differentiable in the choices."""
    if out is not None:
        raise TypeError("choose: out= is not supported: hessgrad arrays are immutable")
    return _sh.choose(a, choices, mode)


def diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    """numpy's ``diff``: the ``n``-th forward difference along ``axis``, differentiable."""
    return _sh.diff(a, n, axis, None if prepend is _NoValue else prepend,
                    None if append is _NoValue else append)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """numpy's ``meshgrid``: coordinate arrays from 1-d coordinate vectors, differentiable."""
    grids = _sh.meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)
    return grids if not copy else type(grids)(_new(g, *xi) for g in grids)


def vander(x, N=None, increasing=False):
    """numpy's ``vander``: the Vandermonde matrix of ``x`` (powers of ``x`` as columns),
    differentiable."""
    return _sh.vander(x, N, increasing)


def append(arr, values, axis=None):
    """numpy's ``append``: ``values`` joined to the end of ``arr`` (flattened without ``axis``),
    differentiable."""
    return _sh.append(arr, values, axis)


def delete(arr, obj, axis=None):
    """numpy.delete; the positions ``obj`` are constants (a tensor gives its value)."""
    return _sh.delete(_stacked(arr, "delete", "arr"), _constant(obj, "delete", "obj"), axis)


def insert(arr, obj, values, axis=None):
    """numpy.insert, differentiable in ``arr`` and ``values``; the positions ``obj`` are
    constants (a tensor gives its value)."""
    return _sh.insert(_stacked(arr, "insert", "arr"), _constant(obj, "insert", "obj"),
                      _stacked(values, "insert", "values"), axis)


def _concrete(a, what):
    a = _stacked(a, what.rstrip("()"))
    if isinstance(a, _Tensor):
        return a._concrete(what)
    return _np.asarray(a)


def nonzero(a):
    """Indices of the nonzero elements (a constant; eager values only: its shape depends on
    the data)."""
    return _np.nonzero(_concrete(a, "nonzero()"))


def flatnonzero(a):
    """numpy's ``flatnonzero``: indices of the nonzero elements of the flattened array (needs
    concrete values; integer result)."""
    return _np.flatnonzero(_concrete(a, "flatnonzero()"))


def argwhere(a):
    """numpy's ``argwhere``: indices of the nonzero elements, one row each (needs concrete
    values; integer result)."""
    return _np.argwhere(_concrete(a, "argwhere()"))


# numpy's out=: the result written into the array given, in place (see ._out)
for _name, _position, _casting in (
    ("concatenate", 2, "same_kind"),
    ("stack", 2, "same_kind"),
    ("trace", 5, "unsafe"),
    ("take", 3, "unsafe"),
    ("choose", 2, "unsafe"),
):
    globals()[_name] = _writes_out(_name, _position, _casting)(globals()[_name])
del _name, _position, _casting

__all__ = ["shape", "ndim", "size", "reshape", "ravel", "transpose", "permute_dims",
           "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
           "broadcast_arrays", "broadcast_shapes", "atleast_1d", "atleast_2d", "atleast_3d",
           "concatenate", "concat", "block", "stack", "hstack", "vstack", "row_stack", "dstack",
           "column_stack", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile",
           "repeat", "roll", "flip", "fliplr", "flipud", "rot90", "pad", "diag", "diagflat",
           "diagonal", "trace", "triu", "tril", "take", "take_along_axis", "select", "choose",
           "diff", "meshgrid", "vander", "append", "delete", "insert", "nonzero",
           "flatnonzero", "argwhere"]
