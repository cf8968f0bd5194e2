"""Structural primitives the engine itself needs: constants, zeros/ones, add_n, sum_to,
broadcast_to, reshape, stack, one-hot seeds, cast, stop_gradient."""

import functools
import math
import operator

import numpy as np
import scipy.sparse as sp

from ..engine.backprop import unbroadcast  # noqa: F401 - for the rules of the ops
from ..engine.batching import per_member
from ..engine.dispatch import bind, note_constant
from ..engine.facts import Algebra, Lowering
from ..engine.graph import get_default_graph
from ..engine.registry import (ADD_N, BROADCAST_TO, CAST, INDEX, ONES_LIKE, RESHAPE, STACK,
                               SUM_TO, TRANSPOSE, UNSTACK, ZEROS, ZEROS_LIKE, primitive)
from ..engine.state import THREAD
from ..engine.tensor import Tensor, shape_of
from .batching import aligned, along_axis, batched_index, joined, static_shape
from .patterns import MOVES, binary, cut, piecewise_linear, same, scatter_matrix, size
from .shape_rules import broadcasting, same_shape, stand_in


# Gradient seeds and fills run once or more per gradient call: they use numpy's C entry
# points (np.empty, np.zeros, ndarray.fill) rather than its Python-level np.ones, np.full,
# np.broadcast_to, np.shape and np.result_type (each about a microsecond on small arrays).
def _dtype(x):
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else np.result_type(x)


def _shape_dtype(x):
    if isinstance(x, (np.ndarray, np.generic)):
        return x.shape, x.dtype
    return np.shape(x), np.result_type(x)


def _zeros_like(x):
    return np.zeros(*_shape_dtype(x))


def _ones_like(x):
    out = np.empty(*_shape_dtype(x))
    out.fill(1)
    return out


zeros_like = primitive("zeros_like", _zeros_like, nondiff=True, batch=aligned,
                       shape_rule=same_shape(_zeros_like), role=ZEROS_LIKE,
                       lowering=Lowering(no_alias=True), algebra=Algebra(fill_value=0),
                       doc=("Zeros with the shape and dtype of ``x`` (a constant: no gradient flows"
                            " to ``x``)."))
ones_like = primitive("ones_like", _ones_like, nondiff=True, batch=aligned,
                      shape_rule=same_shape(_ones_like), role=ONES_LIKE,
                      lowering=Lowering(no_alias=True), algebra=Algebra(fill_value=1),
                      doc=("Ones with the shape and dtype of ``x`` (a constant: no gradient flows "
                           "to ``x``)."))


def _params_shape(shape, dtype=np.float64, value=None):
    return (tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)), np.dtype(dtype)


# constants made from params (no operands): nothing to batch but their uses
zeros = primitive("zeros", lambda shape, dtype=np.float64: np.zeros(shape, dtype), nondiff=True,
                  batch=per_member, shape_rule=_params_shape, role=ZEROS)
ones = primitive("ones", lambda shape, dtype=np.float64: np.ones(shape, dtype), nondiff=True,
                 batch=per_member, shape_rule=_params_shape)
fill = primitive("fill", lambda shape, value, dtype: np.full(shape, value, dtype), nondiff=True,
                 batch=per_member, shape_rule=_params_shape)


def _sum_to(x, shape):
    """Sum ``x`` down to ``shape``, undoing numpy broadcasting."""
    x = np.asarray(x)
    if x.shape == tuple(shape):
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, d in enumerate(shape) if d == 1 and x.shape[i + lead] != 1)
    k = len(axes)
    if k and axes[-1] == k - 1 and x.dtype in REAL_FLOATS and x.flags.c_contiguous:
        rows = math.prod(x.shape[:k])
        if rows >= 4:  # leading axes, as a bias's gradient: one BLAS matrix-vector product,
            # several times faster than numpy's row-by-row reduction for short rows
            cols = math.prod(x.shape[k:])
            return (np.ones(rows, x.dtype) @ x.reshape(rows, cols)).reshape(shape)
    out = x.sum(axis=axes, keepdims=True) if axes else x
    return out.reshape(shape)


# The dtypes of the fast paths below and in the other op modules (BLAS, expit, mean).
REAL_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


# Broadcasts up to this size are filled (a writable copy rather than a read-only view;
# nothing relies on either); larger ones stay views.
_FILL_MAX = 4096


def _broadcast_to(x, shape):
    x = np.asarray(x)
    if x.shape == tuple(shape):
        return x
    if math.prod(shape) > _FILL_MAX:
        return np.broadcast_to(x, shape)
    out = np.empty(shape, x.dtype)
    out[...] = x  # raises numpy's broadcast error where np.broadcast_to would
    return out


def _sum_to_batch(prim, args, flags, params, k):
    """The batch axis moved last, where ``sum_to`` keeps it (it sums leading axes)."""
    (x,) = args
    nd = len(static_shape(x))
    last = bind(TRANSPOSE.prim, (x,), {"axes": tuple(range(1, nd)) + (0,)})
    summed = sum_to(last, shape=tuple(params["shape"]) + (k,))
    n = len(params["shape"])
    return bind(TRANSPOSE.prim, (summed,), {"axes": (n,) + tuple(range(n))})


def _broadcast_to_batch(prim, args, flags, params, k):
    shape = tuple(params["shape"])
    (x,) = args
    sx = static_shape(x)
    if len(sx) - 1 < len(shape):
        x = reshape(x, shape=sx[:1] + (1,) * (len(shape) - len(sx) + 1) + sx[1:])
    return broadcast_to(x, shape=(k,) + shape)


def _sum_to_pattern(step):
    """Each output element depends on the elements summed into it."""
    shape, target = step.in_shapes[0], tuple(step.params["shape"])
    kept = (1,) * (len(shape) - len(target)) + target
    ids = np.broadcast_to(np.arange(size(target)).reshape(kept), shape).ravel()
    count = size(shape)
    r = sp.csr_matrix((np.ones(count, np.float32), (ids, np.arange(count))),
                      shape=(size(target), count))
    return binary(r @ step.deps[0])


def _given_shape(x, shape):
    return tuple(shape), np.result_type(stand_in(x))


def _sum_of_broadcast(sweep, op):
    """A compiler rewrite: ``sum_to(broadcast_to(x))`` back to x's type is x times the number
    of copies (equal up to rounding: the sum added them one by one)."""
    src = sweep.producer.get(op.args[0])
    if src is None or src.prim is not BROADCAST_TO.prim or src.multi or \
            not sweep.same_type(src.args[0], op.outs[0]):
        return None
    x = src.args[0]
    k = math.prod(sweep.shape(src.outs[0]) or (0,)) // max(math.prod(sweep.shape(x)), 1)
    if k == 1:
        return sweep.to(op, x)
    if k == 0 or sweep.dtype(x).kind != "f":
        return None
    from .elementwise import multiply  # elementwise imports this module
    return [op.replace(prim=multiply.primitive, args=[x, sweep.new_const(float(k))],
                       params={})]


sum_to = primitive("sum_to", _sum_to,
                   vjp=[lambda g, ans, x, shape: broadcast_to(g, shape=shape_of(x))],
                   linear=True, batch=_sum_to_batch, sparsity=_sum_to_pattern,
                   shape_rule=_given_shape, role=SUM_TO, rewrites=(_sum_of_broadcast,),
                   lowering=Lowering(array_0d=True), algebra=Algebra(noop=True))
broadcast_to = primitive("broadcast_to", _broadcast_to,
                         vjp=[lambda g, ans, x, shape: sum_to(g, shape=shape_of(x))],
                         linear=True, batch=_broadcast_to_batch, sparsity=MOVES,
                         shape_rule=_given_shape, role=BROADCAST_TO,
                         lowering=Lowering(array_0d=True), algebra=Algebra(noop=True))


def _add_n(*xs):
    out = np.add(xs[0], xs[1])
    for x in xs[2:]:
        if isinstance(out, np.ndarray) and np.shape(x) == out.shape and \
                np.result_type(out, x) == out.dtype:
            np.add(out, x, out=out)  # ``out`` is our own fresh array: accumulate in place
        else:
            out = out + x
    return out


add_n = primitive("add_n", _add_n, vjp=lambda g, ans, *xs: [unbroadcast(g, x) for x in xs],
                  linear=True, batch=aligned, sparsity=piecewise_linear,
                  shape_rule=broadcasting("add_n", _add_n), role=ADD_N,
                  lowering=Lowering(lambda *xs: functools.reduce(operator.add, xs), fresh=True),
                  algebra=Algebra(unit=0))


def _reshape(x, shape):
    # the method directly: numpy's function reaches it after half a microsecond of wrapping
    return x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape)


def _reshape_batch(prim, args, flags, params, k):
    shape = params["shape"]
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return reshape(args[0], shape=(k,) + shape)


def _reshape_shape(x, shape):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    old = shape_of(x)
    if -1 in shape:
        known = [d for d in shape if d != -1]
        if old is None or None in old:
            size = None
        elif 0 in known:  # numpy refuses -1 beside a zero
            return None, np.result_type(stand_in(x))
        else:
            size = math.prod(old) // math.prod(known)
        shape = tuple(size if d == -1 else d for d in shape)
    return shape, np.result_type(stand_in(x))


reshape = primitive("reshape", _reshape,
                    vjp=[lambda g, ans, x, shape: reshape(g, shape=shape_of(x))], linear=True,
                    batch=_reshape_batch, sparsity=MOVES, shape_rule=_reshape_shape,
                    role=RESHAPE, lowering=Lowering(array_0d=True),
                    algebra=Algebra(noop=True, compose=lambda inner, outer, shape: outer))


def _stack_vjp(g, ans, *xs, axis=0):
    lead = (slice(None),) * (axis % len(shape_of(ans)))
    return [getitem(g, index=lead + (k,)) for k in range(len(xs))]


def _stack_shape(*xs, axis=0):
    if not xs:
        return None, np.dtype(np.float64)  # numpy refuses to stack nothing
    shapes = [shape_of(x) for x in xs]
    dtype = np.result_type(*[stand_in(x) for x in xs])
    if any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
        return None, dtype
    shape = tuple(None if len({s[i] for s in shapes}) != 1 else shapes[0][i]
                  for i in range(len(shapes[0])))
    axis %= len(shape) + 1
    return shape[:axis] + (len(xs),) + shape[axis:], dtype


stack = primitive("stack", lambda *xs, axis=0: np.stack(xs, axis=axis), vjp=_stack_vjp,
                  linear=True, batch=joined, sparsity=MOVES, shape_rule=_stack_shape,
                  role=STACK)


def _unstack(x, axis=0):
    return tuple(np.moveaxis(np.asarray(x), axis, 0))


def _unstack_vjp(g, ans, x, axis=0):
    if not ans:  # nothing to split: no gradient flows
        return zeros_like(x)
    return stack(*[gi if gi is not None else zeros_like(a) for gi, a in zip(g, ans)], axis=axis)


def _unstack_shape(x, axis=0):
    shape, dtype = shape_of(x), np.result_type(x.dtype if isinstance(x, Tensor) else x)
    axis %= len(shape)
    part = tuple(shape[:axis]) + tuple(shape[axis + 1:])
    return [(part, dtype)] * shape[axis]


# The parts of ``x`` along ``axis`` (``x[j]`` for every j), one op: its gradient is one stack
# of the parts' gradients, where ``x[j]`` by ``getitem`` would give one full-size
# ``scatter_add`` per part (quadratic in the number of parts).
unstack = primitive("unstack", _unstack, vjp=[_unstack_vjp], linear=True, none_grads_ok=True,
                    multiple_results=True, shape_rule=_unstack_shape,
                    batch=along_axis(default=0), sparsity=MOVES, role=UNSTACK)


def is_basic_index(index):
    """Whether ``index`` is basic (ints, slices, None, Ellipsis): it never repeats an element."""
    if type(index) is slice or type(index) is int:  # the common cases, at once
        return True
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               for p in parts)


def _getitem(x, index):
    try:
        return x[index]
    except IndexError as exc:
        raise IndexError(f"getitem: index {index!r} is invalid for a tensor of shape "
                         f"{np.shape(x)}: {exc}") from None


def _getitem_shape(x, index):
    shape, dtype = shape_of(x), np.result_type(x.dtype if isinstance(x, Tensor) else x)
    if shape is None or None in shape:
        return None, dtype
    return _getitem(np.broadcast_to(np.zeros((), dtype), shape), index).shape, dtype


def _increasing(index):
    """Whether ``index`` is one integer array of increasing non-negative entries (a gather of
    distinct elements along the first axis: a scatter can assign)."""
    return type(index) is np.ndarray and index.ndim == 1 and index.dtype.kind in "iu" and (
        index.size < 2 or bool(index[0] >= 0 and np.all(index[1:] > index[:-1])))


def _scatter_add(g, index, shape):
    out = np.zeros(shape, _dtype(g))
    try:
        if is_basic_index(index) or _increasing(index):  # no element twice: assignment
            out[index] = g
        else:
            np.add.at(out, index, g)
    except (IndexError, ValueError) as exc:
        raise type(exc)(f"scatter_add: cannot add values of shape {np.shape(g)} at index "
                        f"{index!r} of an array of shape {tuple(shape)}: {exc}") from None
    return out


def _getitem_batch(prim, args, flags, params, k):
    index = batched_index(params["index"])
    if index is None:  # separated advanced indices move their axes to the front
        return per_member(prim, args, flags, params, k)
    return bind(prim, tuple(args), dict(params, index=index))


def _scatter_add_batch(prim, args, flags, params, k):
    index = batched_index(params["index"])
    if index is None:
        return per_member(prim, args, flags, params, k)
    return bind(prim, tuple(args), dict(params, index=index, shape=(k,) + tuple(params["shape"])))


# ``getitem`` takes a normalized index (see ``ops.indexing.normalize_index``): ints, slices,
# None, Ellipsis and integer numpy arrays (boolean masks are turned into integer arrays), so
# that its VJP ``scatter_add`` accumulates repeated indices.
def _whole(params, shape):
    """Whether ``x[index]`` is all of ``x`` (full slices and Ellipsis only)."""
    index = params["index"]
    parts = index if isinstance(index, tuple) else (index,)
    return all((isinstance(p, slice) and p == slice(None)) or p is Ellipsis for p in parts)


getitem = primitive("getitem", _getitem,
                    vjp=[lambda g, ans, x, index: scatter_add(g, index=index,
                                                              shape=shape_of(x))],
                    linear=True, shape_rule=_getitem_shape, batch=_getitem_batch,
                    sparsity=MOVES, algebra=Algebra(noop=_whole), role=INDEX)


def _scatter_add_pattern(step):
    m = scatter_matrix(step.in_shapes[0], step.params["index"], step.params["shape"])
    return binary(m @ step.deps[0])


scatter_add = primitive("scatter_add", _scatter_add,
                        vjp=[lambda g, ans, x, index, shape: getitem(g, index=index)],
                        linear=True, batch=_scatter_add_batch, sparsity=_scatter_add_pattern,
                        shape_rule=lambda g, index, shape: (tuple(shape), np.result_type(
                            g.dtype if isinstance(g, Tensor) else g)),
                        lowering=Lowering(fresh=True, array_0d=True))


def _cast_vjp(g, ans, x, dtype):
    return cast(g, dtype=np.result_type(x))


def _cast(x, dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real  # TensorFlow's rule, said out loud: numpy would warn and do the same
    return x.astype(dtype)


def _cast_pattern(step):
    """A cast to an integer or boolean dtype is a constant for differentiation."""
    return step.deps[0] if np.dtype(step.node.outputs[0].dtype).kind in "fc" else None


cast = primitive("cast", _cast, vjp=[_cast_vjp], linear=True, batch=aligned,
                 sparsity=_cast_pattern, shape_rule=same_shape(_cast), role=CAST,
                 lowering=Lowering(array_0d=True), algebra=Algebra(noop=True))

stop_gradient = primitive("stop_gradient", lambda x: x, vjp=[lambda g, ans, x: None],
                          jvp=[lambda t, ans, x: None], none_grads_ok=True, batch=aligned,
                          sparsity=cut, shape_rule=same_shape(lambda x: x),
                          algebra=Algebra(forwards=True))
stop_gradient.__doc__ = """The identity whose gradient is None: ``x`` is a constant for
differentiation.

>>> import hessgrad as hg
>>> x = hg.constant(2.0)
>>> with hg.GradientTape() as tape:
...     tape.watch(x)
...     y = x * hg.stop_gradient(x)
>>> float(tape.gradient(y, x))
2.0
"""


def constant(value, dtype=None, shape=None, name=None):
    """A tensor holding ``value`` (in graph mode: a constant node).

    >>> import hessgrad as hg
    >>> hg.constant([1, 2.5]).dtype
    dtype('float64')
    """
    if isinstance(value, Tensor):
        value = value.numpy()
    array = np.array(value, dtype=dtype)
    if shape is not None:
        array = np.broadcast_to(array, shape).copy() if array.size == 1 else \
            array.reshape(shape)
    graph = get_default_graph()
    out = Tensor(array) if graph is None else graph.constant(array, name=name, source=value)
    if THREAD.state.capturing:
        note_constant(out, value if type(value) is np.ndarray and value.shape == array.shape
                      and value.dtype == array.dtype else array)
    return out


def convert_to_tensor(value, dtype=None):
    """``value`` if it is already a tensor (of ``dtype``), else a new constant."""
    if isinstance(value, Tensor):
        value = strong(value)
        if dtype is not None and value.dtype != np.dtype(dtype):
            return cast(value, dtype=np.dtype(dtype))
        return value
    return constant(value, dtype=dtype)


identity = primitive("identity", lambda x: x, vjp=[lambda g, ans, x: g], linear=True,
                     batch=aligned, sparsity=same, shape_rule=same_shape(lambda x: x),
                     algebra=Algebra(forwards=True),
                     doc="``x`` itself as a new tensor; its gradient passes through unchanged.")


def strong(x):
    """``x``, or for a weak tensor (a traced Python float or complex) a strong copy: what
    ``np.asarray`` makes of a Python scalar (a float64 or complex128 array), for the functions
    that call it on their non-tensor arguments."""
    return identity(x) if isinstance(x, Tensor) and x._weak else x
