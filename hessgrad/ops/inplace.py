"""In-place writes on tensors, as numpy's: ``a[i] = v``, ``a[i] += v``, ``a += b``, and views
that see the writes to their base (and write into it).

A write is a functional update under the hood: the updated array is a new tensor (the
``setitem`` primitive, or ``where`` for a boolean mask), so every derivative through it is
exact, of any order, in every mode. The object written stands for that new tensor from then on
(``engine.tensor.Written``): the ops applied to it read its newest value, while the ops
recorded before the write keep the value they read.

Views. numpy's basic indexing (``a[1:]``, ``a[0]`` of a matrix), ``.T``, ``transpose``,
``swapaxes``, and ``reshape``/``ravel`` where numpy makes no copy give arrays that share their
base's memory. Here such a view is made as any result is and noted as a view of its base
(:func:`note_view`). When the base is written, the view's value is read from the base again
when next used; a write to a view is written into its base (and so reaches the base's other
views). Other functions give copies, as far as writes are concerned.

numpy's scalars are immutable: ``s += 1`` on the result of a reduction makes a new value. So
``op=`` updates a 0-d tensor in place only when it is an array (made by ``hnp.zeros(())``,
``hnp.array``, a view, or written in place before), and every tensor of higher rank.

Where a write cannot be given a derivative (a traced value written into an array made outside
the trace, a write inside a loop body into an array from outside it, positions computed from
traced data that may repeat), it raises an error that says why.
"""

import threading
import weakref

import numpy as np

from ..engine.dispatch import READ
from ..engine.state import THREAD
from ..engine.tensor import Tensor, Variable, Written, current, mark_written, shape_of
from . import elementwise as ew
from .core import broadcast_to, cast, getitem, is_basic_index, reshape
from .indexing import (_Slot, _dynamic_shape, _flat_ids, _occurrence, _split_dynamic,
                       _stack_nested, is_dynamic, normalize_index, scatter, scatter_add_dynamic,
                       setitem as _setitem_op)
from .shape import reshape_to, stack, transpose


class Alias:
    """What in-place writes need to know about a tensor (its ``_mut``): its newest value once
    written, its base if it is a view, and its live views."""

    __slots__ = ("newest", "base", "view", "views", "limit", "array")

    def __init__(self, base=None, view=None):
        # The newest value (a plain Tensor) once written; None for a view whose base was
        # written since it was last read (it is read from the base again when needed).
        self.newest = None
        self.base = base      # the array this one is a view of, or None
        self.view = view      # how it is read from its base and written into it
        self.views = None     # weak references to the live views of this array
        self.limit = 16       # dead references are dropped when the list grows to this
        self.array = False    # made by an array constructor: a 0-d one updates in place

    def value(self):
        newest = self.newest
        if newest is None:
            newest = self.newest = self.view.read(current(self.base))
        return newest


def _alias(t):
    m = t._mut
    if m is None:
        m = t._mut = Alias()
    return m


# --- views ----------------------------------------------------------------------------------
class IndexView:
    """``base[index]`` for a basic index (ints, slices, None, Ellipsis)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def read(self, base):
        return getitem(base, index=self.index)

    def write(self, base, new):
        return _setitem_op(base, new, index=self.index)

    def layout(self, base):
        return base[self.index]


class TransposeView:
    """``base`` with its axes permuted (``axes`` None: reversed)."""

    __slots__ = ("axes",)

    def __init__(self, axes):
        self.axes = None if axes is None else tuple(axes)

    def read(self, base):
        return transpose(base, axes=self.axes)

    def write(self, base, new):
        inverse = None if self.axes is None else tuple(np.argsort(self.axes))
        return transpose(new, axes=inverse)

    def layout(self, base):
        return base.transpose(self.axes)


class ReshapeView:
    """``base`` reshaped (in numpy's ``order``) where numpy makes no copy."""

    __slots__ = ("shape", "order")

    def __init__(self, shape, order="C"):
        self.shape, self.order = tuple(shape), order

    def read(self, base):
        return reshape_to(base, self.shape, self.order)

    def write(self, base, new):
        return reshape_to(new, tuple(shape_of(base)), self.order)

    def layout(self, base):
        return base.reshape(self.shape, order=self.order)


def note_view(base, out, view):
    """``out``, just computed from ``base`` as ``view`` describes, noted as a view of ``base``
    (numpy's views share memory): a later write to either shows in the other. Returns ``out``.

    Nothing is noted where there is nothing to alias: ``out`` is ``base`` itself, is not a
    fresh result, or is of another kind (an eager array's view computed in a traced function
    is a constant of the trace). The caller decides that numpy would give a view.
    """
    if type(out) is not Tensor or out._mut is not None or out is base or \
            not isinstance(base, Tensor) or type(base) is Variable or base._weak:
        return out
    b = current(base)
    if (out._value is None) != (b._value is None) or \
            out._value is None and out._node.graph is not b._node.graph:
        return out
    m = _alias(base)
    refs = m.views
    if refs is None:
        refs = m.views = []
    elif len(refs) >= m.limit:
        refs[:] = [r for r in refs if r() is not None]
        m.limit = max(16, 2 * len(refs))
    refs.append(weakref.ref(out))
    out._mut = Alias(base, view)
    return out


def is_view(t):
    """Whether ``t`` is a noted view of another array."""
    return isinstance(t, Tensor) and t._mut is not None and t._mut.base is not None


def has_views(t):
    """Whether views of ``t`` are alive."""
    m = t._mut if isinstance(t, Tensor) else None
    return m is not None and bool(m.views) and any(r() is not None for r in m.views)


def layout(t):
    """A numpy array laid out in memory as numpy would lay out ``t`` (int8, its elements
    unused): where ``t`` is a view, the same view of its base's layout. numpy's own reshape and
    ravel on it tell whether they would copy."""
    m = t._mut
    if m is None or m.base is None:
        return np.empty(tuple(shape_of(current(t))), np.int8)
    return m.view.layout(layout(m.base))


def makes_view(t, op, owned_ok=True):
    """Whether numpy's ``op`` (a reshape or ravel of a numpy array) applied to ``t`` would
    give a view rather than a copy. With ``owned_ok``, ``op`` makes a view of any array laid
    out in C order, so one that is no view needs no look."""
    if owned_ok and not is_view(t):
        return True
    base = layout(t)
    result = op(base)
    return result.size > 0 and np.shares_memory(result, base)


# --- writing --------------------------------------------------------------------------------
def check_writable(a, what):
    """Raise TypeError unless ``a`` is a tensor that can be written in place."""
    if type(a) is Variable:
        raise TypeError(f"{what}: a Variable is not written in place; assign its new value: "
                        f"`v.assign(v.at[index].set(value))`")
    if not isinstance(a, Tensor):
        raise TypeError(f"{what}: can only write into a hessgrad array, got "
                        f"{type(a).__name__}")
    if a._weak:
        raise TypeError(f"{what}: a Python number (a traced float argument) does not support "
                        f"item assignment")
    if a._node is not None and a._node.prim is READ:
        raise TypeError(f"{what}: a Variable's value read in a graph is shared by every read; "
                        f"copy it first (`w = v.value().copy()`) to write into it")


class _Bodies(threading.local):
    def __init__(self):
        self.open = []  # (graph, the last node made before the body), innermost last


_BODIES = _Bodies()


class tracing_body:
    """Context in which control flow traces a loop or branch body into ``graph``, whose nodes
    made before it end with node number ``last`` (-1: none): a write there into an array made
    before the body is refused, since a body cannot change the arrays around it (it returns
    them instead)."""

    __slots__ = ("entry",)

    def __init__(self, graph, last):
        self.entry = (graph, last)

    def __enter__(self):
        _BODIES.open.append(self.entry)
        return self

    def __exit__(self, *exc):
        _BODIES.open.pop()


def _made_outside_body(t):
    if not _BODIES.open:
        return False
    graph, last = _BODIES.open[-1]
    node = current(t)._node
    return node is not None and node.graph is graph and node.seq <= last


def _check_same_kind(t, new, what):
    """A write keeps what kind of tensor ``t`` is: eager, or symbolic in its graph (and in
    the loop or branch body being traced)."""
    if t._value is not None:
        if new._value is None:
            raise ValueError(
                f"{what}: writes a value computed from traced inputs (hessgrad.function, vmap, "
                f"hessian, ...) into an array of shape {tuple(t.shape)} created outside the "
                f"traced function; the array would outlive the trace, so its value and "
                f"derivatives are not defined after it. Create the array inside the function "
                f"(hnp.zeros(...)), or return the values instead of storing them")
    elif new._value is not None or new._node.graph is not t._node.graph or \
            _made_outside_body(t):
        raise ValueError(
            f"{what}: writes inside a loop or branch body (while_loop, cond, scan, ...) into "
            f"an array of shape {tuple(t.shape)} created outside that body; a body cannot "
            f"change the arrays around it. Pass the array in as a loop variable and return "
            f"the updated array from the body")


def _replace(t, new, what):
    _check_same_kind(t, new, what)
    state = THREAD.state
    if state.capturing:  # a capture log refuses writes into arrays from outside the function
        old = current(t)
        for r in state.recorders:
            if r.sees_constants and not r.paused:
                r.observe_write(old, what)
    m = _alias(t)
    m.newest = new
    mark_written(t)
    if m.views:
        _stale_views(m)


def _stale_views(m):
    """The base of the views in ``m.views`` was written: they read it again when next used."""
    live = []
    for ref in m.views:
        v = ref()
        if v is None:
            continue
        live.append(ref)
        vm = v._mut
        vm.newest = None
        mark_written(v)
        if vm.views:
            _stale_views(vm)
    m.views = live


def assign(a, new, what="write"):
    """``a``'s whole value becomes ``new`` (a tensor of its shape and dtype), as numpy's
    ``a[...] = new``: its views and, when ``a`` is a view, its base (and their views) see it.
    """
    m = a._mut
    if m is not None and m.base is not None:
        base = m.base
        assign(base, m.view.write(current(base), new), what)
        m.newest = new  # what reading ``a`` from its written base gives
        mark_written(a)
    else:
        _replace(a, new, what)


def resized(a, new, what="resize"):
    """``a`` stands for ``new``, a value of another shape (numpy's ``ndarray.resize``):
    only for an eager array that is no view and has none (numpy refuses those too)."""
    if a._value is None:
        raise ValueError(f"{what}: a traced array of shape {tuple(a.shape)} cannot be resized "
                         f"in place; use the function hnp.resize(a, new_shape), which returns "
                         f"a new array")
    if is_view(a) or has_views(a):
        raise ValueError(f"{what}: cannot resize an array that references or is referenced by "
                         f"another array in this way (a view); use hnp.resize(a, new_shape)")
    _replace(a, new, what)


def updated(x, index, value, what="x[index] = value"):
    """``x`` with ``value`` written at ``index``, as numpy's ``x[index] = value`` computes it,
    returned as a new tensor: ``value`` broadcast to the indexed region and cast to ``x``'s
    dtype; for a position indexed twice the last value wins."""
    shape = shape_of(x)
    if shape is None or None in shape:
        raise TypeError(f"{what}: the shape of the array must be known to write into it, got "
                        f"{shape}")
    shape = tuple(shape)
    value = _operand(value)
    mask = _whole_mask(index, shape)
    if mask is not None and _size(value) == 1:  # numpy's a[mask] = scalar, traced masks too
        return ew.where(mask, _cast_to(reshape(value, shape=()), x.dtype), x)
    idx = normalize_index(index, shape, what=what)
    if is_dynamic(idx):
        return _updated_dynamic(x, idx, value, shape, what, index)
    try:
        region = np.broadcast_to(np.zeros((), bool), shape)[idx].shape
    except IndexError as exc:
        raise IndexError(f"{what}: index {index!r} is invalid for an array of shape {shape}: "
                         f"{exc}") from None
    v = _fit(value, region, x.dtype, what, shape, index)
    return _setitem_op(x, v, index=idx)


def _operand(value):
    """A value to write: lists and tuples become arrays (stacked when they hold tensors)."""
    if isinstance(value, (list, tuple)):
        return _stack_nested(value, stack) if _holds_tensor(value) else np.asarray(value)
    return value


def _holds_tensor(value):
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return False


def _size(value):
    s = shape_of(value)
    return None if s is None or None in s else int(np.prod(s, dtype=np.int64))


def _whole_mask(index, shape):
    """``index`` as a boolean mask of the array's whole shape (a tensor or array), or None."""
    if isinstance(index, Tensor) or isinstance(index, np.ndarray):
        dtype = index.dtype
        if dtype is not None and np.dtype(dtype).kind == "b" and \
                tuple(shape_of(index)) == shape and shape:
            return current(index)
    return None


def _cast_to(v, dtype):
    if isinstance(v, Tensor):
        return v if v.dtype == dtype else cast(v, dtype=dtype)
    return np.asarray(v).astype(dtype)


def _fit(value, region, dtype, what, shape, index):
    """``value`` cast to ``dtype`` and shaped to broadcast to ``region`` (numpy drops a
    value's leading unit axes)."""
    v_shape = tuple(shape_of(value))
    core = v_shape
    while len(core) > len(region) and core[0] == 1:
        core = core[1:]
    try:
        if np.broadcast_shapes(core, region) != tuple(region):
            raise ValueError
    except ValueError:
        raise ValueError(f"{what}: could not broadcast a value of shape {v_shape} into the "
                         f"indexed region of shape {tuple(region)} (the array has shape "
                         f"{shape}, index {index!r})") from None
    if core != v_shape:
        value = reshape(value, shape=core)
    return value if dtype is None else _cast_to(value, dtype)


def _updated_dynamic(x, idx, value, shape, what, index):
    """A write at positions given by integer tensors known only at run time (traced): exact
    when they cannot repeat a position, i.e. each is 0-d and the rest of the index is basic."""
    template, tensors = _split_dynamic(idx)
    if any(len(shape_of(t)) for t in tensors) or not all(
            is_basic_index(p) for p in template if not isinstance(p, _Slot)):
        raise TypeError(
            f"{what}: the index {index!r} holds integer arrays computed from traced data, "
            f"which may name one position twice; which write wins (and so the derivative) "
            f"is then known only at run time. Write with a boolean mask "
            f"(`a = hnp.where(mask, value, a)`), or compute the positions outside the traced "
            f"function")
    region = _dynamic_shape(x, *tensors, template=template)[0]
    if region is None or None in region:
        raise TypeError(f"{what}: the indexed region's shape must be known, got {region}")
    v = _fit(value, region, x.dtype, what, shape, index)
    v = broadcast_to(v, shape=tuple(region))
    written = scatter_add_dynamic(np.ones(region, np.int8), *tensors, template=template,
                                  shape=shape)
    scattered = scatter_add_dynamic(v, *tensors, template=template, shape=shape)
    return ew.where(ew.greater(written, 0), scattered, x)


def _static_index(x, index, what):
    shape = shape_of(x)
    if shape is None or None in shape:
        raise TypeError(f"{what}: the shape of the array must be known, got {shape}")
    shape = tuple(shape)
    idx = normalize_index(index, shape, what=what)
    if is_dynamic(idx):
        raise TypeError(f"{what}: the indices must be concrete (numpy arrays, or eager "
                        f"tensors), not computed from traced data: how often a position "
                        f"repeats decides the result")
    try:
        ids = _flat_ids(shape, idx)
    except IndexError as exc:
        raise IndexError(f"{what}: index {index!r} is invalid for an array of shape {shape}: "
                         f"{exc}") from None
    return shape, idx, ids


def added_at(x, index, values, what="add.at"):
    """``x`` with ``values`` added at ``index``, unbuffered (numpy's ``add.at``): a position
    indexed k times gets k additions (summed first: one scatter for any number of repeats)."""
    shape, idx, ids = _static_index(x, index, what)
    v = _fit(_operand(values), ids.shape, None, what, shape, index)
    return ew.add(x, scatter(broadcast_to(v, shape=ids.shape), idx, shape))


def applied_at(x, index, fn, values=None, what="ufunc.at"):
    """``x`` with ``fn`` applied at ``index`` unbuffered (numpy's ``ufunc.at``): a position
    indexed k times is updated k times, in order: ``x[i] = fn(x[i], values[j])`` (or
    ``fn(x[i])``) for each ``j`` indexing ``i``. The positions are taken in rounds, each
    naming a position at most once (one round when none repeats)."""
    shape, idx, ids = _static_index(x, index, what)
    size = int(np.prod(shape, dtype=np.int64))
    flat = reshape(x, shape=(size,))
    ids = ids.reshape(-1)
    if values is not None:
        v = _fit(_operand(values), _region(shape, idx), None, what, shape, index)
        v = reshape(broadcast_to(v, shape=_region(shape, idx)), shape=(-1,))
    rounds = _occurrence(ids)
    for r in range(int(rounds.max()) + 1 if ids.size else 0):
        sel = np.nonzero(rounds == r)[0]
        targets = ids[sel]
        old = getitem(flat, index=targets)
        new = fn(old) if values is None else fn(old, getitem(v, index=sel))
        new_dtype = np.dtype(new.dtype)
        if new_dtype != np.dtype(x.dtype):
            if not np.can_cast(new_dtype, x.dtype, "same_kind"):
                raise TypeError(f"{what}: Cannot cast ufunc output from {new_dtype!r} to "
                                f"{np.dtype(x.dtype)!r} with casting rule 'same_kind'")
            new = cast(new, dtype=x.dtype)
        flat = _setitem_op(flat, new, index=targets)
    return reshape(flat, shape=shape)


def _region(shape, idx):
    return np.broadcast_to(np.zeros((), bool), shape)[idx].shape


def setitem(a, index, value):
    """numpy's ``a[index] = value`` on a tensor (``Tensor.__setitem__``)."""
    check_writable(a, "a[index] = value")
    if _written_back(a, index, value):
        return
    assign(a, updated(current(a), index, value), "a[index] = value")


def _written_back(a, index, value):
    """Whether ``value`` is the view ``a[index]`` (basic): then ``a[index] = value`` changes
    nothing. Python runs ``a[i] += v`` as ``t = a[i]; t += v; a[i] = t``, and ``t += v``
    has written ``a`` through the view already."""
    m = value._mut if isinstance(value, Tensor) else None
    if m is None or m.base is not a or type(m.view) is not IndexView:
        return False
    mine = m.view.index
    if type(mine) is not type(index) or not is_basic_index(index):
        return False
    try:
        return bool(mine == index)
    except (TypeError, ValueError):
        return False


def updates_in_place(a):
    """Whether ``a op= b`` writes ``a`` in place (numpy's arrays) rather than making a new
    value (numpy's scalars, Python numbers, Variables): see the module's docstring."""
    if type(a) is Variable or a._weak:
        return False
    if a._mut is not None:
        return True
    shape = a.shape
    return shape is None or len(shape) > 0


def in_place(a, result, name):
    """``a op= b`` where ``result`` is ``a op b``: written into ``a`` when numpy's casting
    (same_kind) and broadcasting allow, which give the errors numpy gives. Returns ``a``."""
    x = current(a)
    r_dtype, x_dtype = np.dtype(result.dtype), np.dtype(x.dtype)
    if r_dtype != x_dtype and not np.can_cast(r_dtype, x_dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc {name!r} output from {r_dtype!r} to {x_dtype!r} "
                        f"with casting rule 'same_kind' (in-place {name} on an array of shape "
                        f"{tuple(x.shape)})")
    r_shape, x_shape = shape_of(result), shape_of(x)
    if r_shape is not None and x_shape is not None and tuple(r_shape) != tuple(x_shape):
        raise ValueError(f"non-broadcastable output operand with shape {tuple(x_shape)} "
                         f"doesn't match the broadcast shape {tuple(r_shape)} (in-place "
                         f"{name})")
    if r_dtype != x_dtype:
        result = cast(result, dtype=x_dtype)
    assign(a, result, f"in-place {name}")
    return a


def mark_array(t):
    """``t`` was made by an array constructor (``hnp.zeros``, ``hnp.array``, ...): a numpy
    array, which ``op=`` updates in place even when 0-d. Returns ``t``."""
    if type(t) is Tensor:
        _alias(t).array = True
    return t


__all__ = ["Alias", "IndexView", "tracing_body", "ReshapeView", "TransposeView", "added_at", "applied_at",
           "assign", "check_writable", "current", "has_views", "in_place", "is_view", "layout",
           "makes_view", "mark_array", "note_view", "resized", "setitem", "updated",
           "updates_in_place", "Written"]
