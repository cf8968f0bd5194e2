"""Indexing: numpy's ``x[index]`` rules turned into differentiable gathers and scatters.

* :func:`normalize_index` turns a user's index into one the ``getitem`` primitive takes:
  concrete tensors become their values, lists become arrays, boolean masks become the integer
  arrays of their ``nonzero()`` (so that every gather's VJP is one ``scatter_add``).
* Integer index *tensors* that are symbolic (graph mode) go through ``getitem_dynamic``, whose
  index arrays are inputs of the op (non-differentiable) rather than static params.
* ``setitem(x, v, index=...)``: ``x`` with ``v`` written at a normalized ``index`` (numpy's
  ``x[index] = v`` as a new array; for a repeated index the last write wins). In-place writes
  on tensors (``ops.inplace``) are made of it.
* ``x.at[index].set / add / multiply`` (JAX's functional in-place updates) with numpy's
  semantics for repeated indices: ``add`` and ``multiply`` accumulate, ``set`` keeps the last
  write.
"""

import numpy as np

from ..engine.batching import per_member
from ..engine.graph import constant_value
from ..engine.registry import primitive
from ..engine.tensor import Tensor, current, shape_of
from . import elementwise as ew
from .batching import batched_index, static_shape
from .core import broadcast_to, cast, getitem, is_basic_index, reshape, scatter_add, stack, \
    unbroadcast
from .patterns import MOVES, UNKNOWN, binary, dense_linear, moves, scatter_matrix


class _Slot:
    """Marks the place of the ``k``-th index tensor inside a ``getitem_dynamic`` template."""

    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return f"<index input {self.k}>"


def _part_repr(p):
    return f"symbolic tensor {p.name} (shape {p.shape}, dtype {p.dtype})"


def _mask_error(what):
    return TypeError(
        f"{what}: a boolean mask that is a symbolic tensor cannot index while a function is "
        "traced, because the result's shape would depend on the data. Use "
        "hessgrad.numpy.where(mask, x, 0) (or multiply by the mask) instead, or pass the mask "
        "as a constant numpy array.")


def normalize_index(index, shape=None, what="getitem"):
    """An index made of ints, slices, None, Ellipsis and integer numpy arrays.

    Concrete tensors become their values; symbolic integer tensors are kept (the caller then
    uses ``getitem_dynamic``); boolean masks of dimension >= 1 become ``mask.nonzero()``.
    A boolean mask is checked against ``shape`` (when known) before it becomes integer arrays,
    so a mask of the wrong shape raises an IndexError naming the shapes, as numpy does, instead
    of gathering the wrong elements. Other bad indices fail in the ``getitem`` forward.
    """
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    symbolic = False
    for p in parts:
        if isinstance(p, Tensor):
            p = current(p)  # an index array written in place: its newest value
            value = constant_value(p)  # also a constant of the graph being traced
            if value is None:
                if p.dtype is not None and np.dtype(p.dtype).kind == "b":
                    raise _mask_error(what)
                if p.dtype is None or np.dtype(p.dtype).kind not in "iu":
                    raise IndexError(f"{what}: only integer tensors can be used as indices, "
                                     f"got {_part_repr(p)}")
                symbolic = True
                out.append(p)
                continue
            p = np.asarray(value)
        elif isinstance(p, list):
            if any(isinstance(q, (slice, type(None), type(Ellipsis))) for q in p):
                raise IndexError(f"{what}: a list inside an index may only hold integers or "
                                 f"booleans, got {p!r}; use a tuple for multidimensional "
                                 "indexing")
            if any(isinstance(q, Tensor) and current(q)._value is None for q in _leaves(p)):
                p = _stack_nested(p, stack)
                if p.dtype.kind == "b":
                    raise _mask_error(what)
                symbolic = True
                out.append(p)
                continue
            p = np.asarray([_concrete(q) for q in p] if p else p)
            if p.size == 0:
                p = p.astype(np.intp)
        if isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype.kind in "iu":
            p = int(p)
        out.append(p)
    has_mask = any(isinstance(p, np.ndarray) and p.dtype.kind == "b" and p.ndim for p in out)
    if has_mask and shape is not None and None not in shape and not symbolic:
        check = tuple(out) if isinstance(index, tuple) else out[0]
        try:
            np.broadcast_to(np.zeros((), bool), shape)[check]
        except IndexError as exc:
            raise IndexError(f"{what}: index {index!r} is invalid for a tensor of shape "
                             f"{tuple(shape)}: {exc}") from None
    final = []
    for p in out:
        if isinstance(p, np.ndarray) and p.dtype.kind == "b" and p.ndim > 0:
            final.extend(np.nonzero(p))
        elif isinstance(p, np.ndarray) and p.dtype.kind not in "iub":
            raise IndexError(f"{what}: arrays used as indices must be of integer or boolean "
                             f"type, got dtype {p.dtype}")
        else:
            final.append(p)
    if len(final) == 1 and not isinstance(index, tuple):
        return final[0]
    return tuple(final)


def _leaves(p):
    if isinstance(p, (list, tuple)):
        for q in p:
            yield from _leaves(q)
    else:
        yield p


def _concrete(q):
    if isinstance(q, Tensor):
        return current(q)._value
    if isinstance(q, (list, tuple)):
        return [_concrete(r) for r in q]
    return q


def _stack_nested(p, stack):
    if isinstance(p, (list, tuple)):
        return stack(*[_stack_nested(q, stack) for q in p])
    return p


def is_dynamic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, Tensor) for p in parts)


def _split_dynamic(index):
    """(template with _Slot markers, list of index tensors)."""
    parts = index if isinstance(index, tuple) else (index,)
    tensors, template = [], []
    for p in parts:
        if isinstance(p, Tensor):
            template.append(_Slot(len(tensors)))
            tensors.append(p)
        else:
            template.append(p)
    return tuple(template), tensors


def _fill(template, values):
    return tuple(values[p.k] if isinstance(p, _Slot) else p for p in template)


def _fill_shape(template, indices):
    """The template with each index tensor replaced by a zero array of its static shape."""
    values = []
    for t in indices:
        s = shape_of(t)
        if s is None or None in s:
            return None
        values.append(np.zeros(s, np.intp))
    return _fill(template, values)


def _dynamic_shape(x, *indices, template):
    from .core import _getitem_shape
    index = _fill_shape(template, indices)
    dtype = np.result_type(x.dtype if isinstance(x, Tensor) else x)
    if index is None or shape_of(x) is None or None in shape_of(x):
        return None, dtype
    return _getitem_shape(x, index)


def _dynamic_getitem(x, *indices, template):
    from .core import _getitem
    return _getitem(x, _fill(template, indices))


def _dynamic_scatter(g, *indices, template, shape):
    from .core import _scatter_add
    return _scatter_add(g, _fill(template, indices), shape)


def _scatter_dynamic_pattern(step):
    if any(v is UNKNOWN for v in step.values[1:]):  # indices computed from the data
        return dense_linear(step)
    index = _fill(step.params["template"], list(step.values[1:]))
    return binary(scatter_matrix(step.in_shapes[0], index, step.params["shape"]) @ step.deps[0])


getitem_dynamic = primitive(
    "getitem_dynamic", _dynamic_getitem,
    vjp=lambda g, ans, x, *indices, template: [
        scatter_add_dynamic(g, *indices, template=template, shape=shape_of(x))] +
    [None] * len(indices),
    jvp=[lambda t, ans, x, *indices, template: getitem_dynamic(t, *indices,
                                                               template=template)],
    shape_rule=_dynamic_shape, sparsity=moves(index=lambda k: k >= 1), batch=per_member)
scatter_add_dynamic = primitive(
    "scatter_add_dynamic", _dynamic_scatter,
    vjp=lambda g, ans, x, *indices, template, shape: [
        getitem_dynamic(g, *indices, template=template)] + [None] * len(indices),
    jvp=[lambda t, ans, g, *indices, template, shape: scatter_add_dynamic(
        t, *indices, template=template, shape=shape)],
    sparsity=_scatter_dynamic_pattern, batch=per_member, shape_rule=lambda g, *indices, template, shape: (tuple(shape), np.result_type(
        g.dtype if isinstance(g, Tensor) else g)))


# --- setitem: x with values written at an index ----------------------------------------------
def _setitem(x, v, index):
    out = np.array(x, copy=True)
    try:
        out[index] = v
    except (IndexError, ValueError) as exc:
        raise type(exc)(f"setitem: cannot write values of shape {np.shape(v)} at index "
                        f"{index!r} of an array of shape {np.shape(x)}: {exc}") from None
    return out


def _shadowed(shape, index):
    """For an index that repeats a position, a boolean array shaped like ``x[index]`` that is
    False where a later write to the same position overwrites this one; else None."""
    if is_basic_index(index):
        return None
    ids = _flat_ids(shape, index)
    last = _last_writes(ids.reshape(-1))
    return None if last.all() else last.reshape(ids.shape)


def _setitem_value_vjp(g, ans, x, v, index):
    part = getitem(g, index=index)
    last = _shadowed(shape_of(x), index)
    if last is not None:  # a position written twice: only its last value reaches the result
        part = ew.where(last, part, np.zeros((), part.dtype))
    return unbroadcast(part, v)


def _setitem_batch(prim, args, flags, params, k):
    x, v = args
    index = batched_index(params["index"])
    if index is None:  # separated advanced indices move their axes to the front
        return per_member(prim, args, flags, params, k)
    if not flags[0]:
        x = broadcast_to(x, shape=(k,) + static_shape(x))
    if flags[1]:  # the written region of the batched x is (k,) + the region of one member
        region = _getitem_region(static_shape(x)[1:], params["index"])
        core = static_shape(v)[1:]
        v = reshape(v, shape=(k,) + (1,) * (len(region) - len(core)) + core)
    return setitem(x, v, index=index)


def _getitem_region(shape, index):
    return np.broadcast_to(np.zeros((), bool), shape)[index].shape


def _setitem_shape(x, v, index):
    return shape_of(x), np.result_type(x.dtype if isinstance(x, Tensor) else x)


# ``index`` is normalized (see ``normalize_index``): ints, slices, None, Ellipsis and integer
# arrays. ``v`` broadcasts to ``x[index]``'s shape and has ``x``'s dtype (``ops.inplace`` casts
# it first, so that the rules see one dtype). Linear in ``(x, v)`` jointly.
setitem = primitive(
    "setitem", _setitem,
    vjp=[lambda g, ans, x, v, index: setitem(g, np.zeros((), g.dtype), index=index),
         _setitem_value_vjp],
    linear=True, shape_rule=_setitem_shape, batch=_setitem_batch, sparsity=MOVES)


_BASIC = (slice, int, type(None), type(Ellipsis))  # exact types: bool (a mask) is not int


def index(x, idx):
    """``x[idx]`` with numpy's rules (the body of ``Tensor.__getitem__``)."""
    if type(idx) in _BASIC or (type(idx) is tuple and all(type(p) in _BASIC for p in idx)):
        return getitem(x, index=idx)  # already normal: slices, ints, None, Ellipsis
    idx = normalize_index(idx, shape_of(x))
    if is_dynamic(idx):
        template, tensors = _split_dynamic(idx)
        return getitem_dynamic(x, *tensors, template=template)
    return getitem(x, index=idx)


def scatter(values, idx, shape):
    """Zeros of ``shape`` with ``values`` added at ``idx`` (repeated indices accumulate)."""
    if is_dynamic(idx):
        template, tensors = _split_dynamic(idx)
        return scatter_add_dynamic(values, *tensors, template=template, shape=tuple(shape))
    return scatter_add(values, index=idx, shape=tuple(shape))


# --- x.at[index].set / add / multiply -------------------------------------------------------
class AtIndexer:
    """``x.at``: ``x.at[index]`` gives the functional in-place updates of numpy's ``x[index]``.

    >>> import hessgrad as hg
    >>> x = hg.constant([1.0, 2.0, 3.0])
    >>> x.at[0].set(10.0).numpy()
    array([10.,  2.,  3.])
    >>> x.at[[0, 0]].add(1.0).numpy()
    array([3., 2., 3.])
    """

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, index):
        return _AtRef(self._x, index)


class _AtRef:
    __slots__ = ("_x", "_index")

    def __init__(self, x, index):
        self._x = x
        self._index = index

    def _prepare(self, v, what):
        x = self._x
        shape = shape_of(x)
        if shape is None or None in shape:
            raise TypeError(f"x.at[...].{what}: the shape of x must be known, got {shape}")
        idx = normalize_index(self._index, shape, what=f"x.at[...].{what}")
        if is_dynamic(idx):
            template, tensors = _split_dynamic(idx)
            sub = _dynamic_shape(x, *tensors, template=template)[0]
        else:
            sub = np.broadcast_to(np.zeros((), bool), shape)[idx].shape
        if isinstance(v, (list, tuple)):
            v = _stack_nested(v, stack)
        v_shape = shape_of(v)
        try:
            if np.broadcast_shapes(v_shape, sub) != tuple(sub):
                raise ValueError
        except ValueError:
            raise ValueError(f"x.at[...].{what}: values of shape {tuple(v_shape)} cannot be "
                             f"broadcast to the indexed shape {tuple(sub)} (x has shape "
                             f"{tuple(shape)}, index {self._index!r})") from None
        dtype = x.dtype
        if np.result_type(v.dtype if isinstance(v, Tensor) else np.asarray(v)) != dtype:
            v = cast(v, dtype=dtype)
        return x, idx, broadcast_to(v, shape=tuple(sub)), shape, sub

    def get(self):
        """``x[index]``."""
        return index(self._x, self._index)

    def add(self, values):
        """``x`` with ``values`` added at ``index``; repeated indices accumulate."""
        x, idx, v, shape, _ = self._prepare(values, "add")
        return ew.add(x, scatter(v, idx, shape))

    def set(self, values):
        """``x`` with ``values`` written at ``index``; for a repeated index the last write
        wins, as in numpy."""
        x, idx, v, shape, sub = self._prepare(values, "set")
        if is_dynamic(idx):
            raise TypeError("x.at[...].set: the index must be concrete (a constant or an "
                            "eager tensor), not a symbolic tensor; use hessgrad.numpy.where")
        ids = _flat_ids(shape, idx)
        written = np.zeros(shape, bool)
        written.reshape(-1)[ids.reshape(-1)] = True
        last = _last_writes(ids.reshape(-1)).reshape(ids.shape)
        if not last.all():
            v = ew.where(last, v, np.zeros((), x.dtype))
        return ew.where(written, scatter(v, idx, shape), x)

    def multiply(self, values):
        """``x`` with the elements at ``index`` multiplied by ``values``; repeated indices
        multiply again (``numpy.multiply.at``)."""
        x, idx, v, shape, sub = self._prepare(values, "multiply")
        if is_dynamic(idx):
            raise TypeError("x.at[...].multiply: the index must be concrete (a constant or an "
                            "eager tensor), not a symbolic tensor")
        ids = _flat_ids(shape, idx).reshape(-1)
        size = int(np.prod(shape, dtype=np.int64))
        flat_v = reshape(v, shape=(-1,))
        flat_x = reshape(x, shape=(size,))
        rounds = _occurrence(ids)
        one = np.ones((), x.dtype)
        for r in range(int(rounds.max()) + 1 if ids.size else 0):
            sel = np.nonzero(rounds == r)[0]
            targets = ids[sel]
            mask = np.zeros(size, bool)
            mask[targets] = True
            factor = scatter_add(getitem(flat_v, index=sel), index=targets, shape=(size,))
            flat_x = flat_x * ew.where(mask, factor, one)
        return reshape(flat_x, shape=tuple(shape))


def _flat_ids(shape, idx):
    """The flat position in an array of ``shape`` of every element that ``idx`` selects."""
    size = int(np.prod(shape, dtype=np.int64))
    return np.arange(size, dtype=np.intp).reshape(shape)[idx]


def _last_writes(ids):
    """True at the last occurrence of each value of the 1-D array ``ids``."""
    if ids.size == 0:
        return np.zeros(0, bool)
    _, first_in_reversed = np.unique(ids[::-1], return_index=True)
    last = np.zeros(ids.size, bool)
    last[ids.size - 1 - first_in_reversed] = True
    return last


def _occurrence(ids):
    """For each entry of ``ids``, how many earlier entries have the same value."""
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.r_[0, np.nonzero(np.diff(sorted_ids))[0] + 1] if ids.size else np.zeros(0, int)
    run_start = np.zeros(ids.size, np.intp)
    if ids.size:
        run_start[starts] = starts
        run_start = np.maximum.accumulate(run_start)
    occ = np.empty(ids.size, np.intp)
    occ[order] = np.arange(ids.size) - run_start
    return occ


# --- take, take_along_axis -------------------------------------------------------------------
def _axis(axis, ndim, what):
    if not -ndim <= axis < max(ndim, 1):
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for an array of "
                                      f"dimension {ndim}")
    return axis % ndim if ndim else 0


def _index_array(indices, what):
    if isinstance(indices, Tensor):
        indices = current(indices)
        if indices._value is None:
            if np.dtype(indices.dtype).kind not in "iu":
                raise IndexError(f"{what}: indices must be integers, got {_part_repr(indices)}")
            return indices
        indices = indices._value
    indices = np.asarray(indices)
    if indices.size == 0:
        indices = indices.astype(np.intp)
    if indices.dtype.kind not in "iu":
        raise IndexError(f"{what}: indices must be integers, got dtype {indices.dtype}")
    return indices


def take(a, indices, axis=None, mode=None):
    """numpy.take: elements of ``a`` at ``indices`` along ``axis`` (flattened if None)."""
    indices = _index_array(indices, "take")
    if axis is None:
        a = reshape(a, shape=(-1,))
        axis = 0
    ndim = len(shape_of(a))
    axis = _axis(axis, ndim, "take")
    n = shape_of(a)[axis]
    if mode in ("wrap", "clip") and not isinstance(indices, Tensor):
        indices = np.mod(indices, n) if mode == "wrap" else np.clip(indices, 0, n - 1)
    elif mode not in (None, "raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return index(a, (slice(None),) * axis + (indices,))


def take_along_axis(arr, indices, axis):
    """numpy.take_along_axis: ``arr`` gathered at ``indices`` along ``axis``."""
    indices = _index_array(indices, "take_along_axis")
    if axis is None:
        arr = reshape(arr, shape=(-1,))
        axis = 0
    shape = shape_of(arr)
    ishape = shape_of(indices)
    if len(ishape) != len(shape):
        raise ValueError(f"take_along_axis: indices (shape {tuple(ishape)}) and arr (shape "
                         f"{tuple(shape)}) must have the same number of dimensions")
    axis = _axis(axis, len(shape), "take_along_axis")
    parts = []
    for i, d in enumerate(shape):
        if i == axis:
            parts.append(indices)
        else:
            parts.append(np.arange(d).reshape((1,) * i + (d,) + (1,) * (len(shape) - i - 1)))
    out_shape = np.broadcast_shapes(*[np.shape(p) if not isinstance(p, Tensor) else p.shape
                                      for p in parts])
    if isinstance(indices, Tensor) and tuple(ishape) != out_shape:
        parts[axis] = broadcast_to(indices, shape=out_shape)
    return index(arr, tuple(parts))
