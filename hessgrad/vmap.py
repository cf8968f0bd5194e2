"""``vmap``: a function mapped over an axis of its arguments, with JAX's semantics.

Two ways to run, chosen per call:

* Outside any tape, accumulator or trace (nothing can differentiate the result), the
  per-example function is traced once per signature and capture key into a graph (cached on
  the ``vmap`` object; see ``tracing.capture``) and that graph runs for the whole
  batch at once (``ConcreteFunction.run_batched: batching rules per primitive, the batched
  compiled program). Unmapped arguments are fed once, unbatched.
* Under a tape or an accumulator, or inside a trace, ``fun`` is traced into a graph of its
  own at each call (with the recorders set aside, and the tensors it closes over as inputs),
  and that graph is replayed by binding, for each node, the ops its primitive's batching
  rule binds (:mod:`hessgrad.engine.batching`): the recorders see ordinary ops, so the result
  has derivatives of every order. Ops whose only rule runs on arrays (``while_loop``,
  ``cond``, ``TensorArray``, ``custom_gradient``) cannot be replayed so: ``fun`` then runs once
  per batch member, on slices, and the results are stacked.

A function that needs concrete values (Python control flow on them) cannot be traced; it runs
once per batch member on slices too.
"""

import functools

import numpy as np

from .engine.batching import broadcast, move_to_front, per_member_call, replay_call
from .tracing.capture import CaptureCache
from .tracing.function import ConcreteFunction, signature_key
from .engine.nest import flatten, pack_as
from .engine.state import THREAD
from .engine.tensor import ConcretizationError, Tensor, owned
from .ops.core import constant
from .ops.shape import transpose



def vmap(fun, in_axes=0, out_axes=0, axis_size=None):
    """Vectorizing map: ``fun`` applied to every slice of its arguments along the mapped axes,
    the results stacked along ``out_axes`` (JAX's ``jax.vmap``).

    Args:
        fun: a function of arrays (or nested tuples, lists and dicts of them).
        in_axes: which axis of each positional argument to map over: an int (every argument),
            None (none), or a tuple/list with one entry per positional argument, each an int,
            None, or a structure matching that argument (a tree prefix of it). Negative axes
            count from the end. Keyword arguments are always mapped over axis 0.
        out_axes: where the mapped axis goes in each output: an int, None (the output must
            not depend on the mapped axis) or a structure matching the output (a prefix).
        axis_size: the batch size; needed when no argument is mapped (the outputs are then
            broadcast to it), else it must agree with the mapped axes.
    Returns:
        The mapped function. Called with numpy values outside any transform it returns numpy
        arrays; with tensors, or under a tape, accumulator or trace, tensors (which can be
        differentiated to any order).
    Raises:
        TypeError: ``in_axes``/``out_axes`` hold something other than ints and None.
        ValueError: (when called) ``in_axes`` does not match the arguments' structure, an
            axis is out of range for an argument, the mapped axes differ in size, nothing is
            mapped and ``axis_size`` is not given, or ``out_axes`` is None for an output that
            depends on the mapped axis.

    Outside any transform the per-example function is traced once per signature (shapes and
    dtypes of the per-example arguments, the Python values among them) and the trace is kept
    by the returned function while what ``fun`` reads from outside its arguments is unchanged:
    every call runs ``fun`` once eagerly on the first member to check that (see
    ``hessgrad.tracing.capture``). The first call with a batch size runs the traced program
    compiled without Numba kernels; the next ones with that size compile the kernels too.

    >>> import hessgrad as hg
    >>> import hessgrad.numpy as hnp
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> hg.vmap(lambda x: hnp.sum(x ** 2))(X)
    array([ 5., 25., 61.])
    >>> hg.vmap(lambda x, w: x @ w, in_axes=(1, None))(X, np.array([1.0, 0.0, -1.0]))
    array([-4., -4.])
    >>> loss = lambda w, x, y: (hnp.dot(x, w) - y) ** 2
    >>> hg.vmap(hg.grad(loss), in_axes=(None, 0, 0))(np.ones(2), X, np.array([2.0, 6.0, 10.0]))
    array([[ 2.,  4.],
           [ 6.,  8.],
           [10., 12.]])
    """
    if not callable(fun):
        raise TypeError(f"vmap: fun must be callable, got {type(fun).__name__}")
    _check_spec(in_axes, "in_axes", "in_axes")
    _check_spec(out_axes, "out_axes", "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or isinstance(axis_size, bool) or axis_size < 0):
        raise TypeError(f"vmap: axis_size must be None or a non-negative int, got {axis_size!r}")
    return _Mapped(fun, in_axes, out_axes, axis_size)


def _is_axis(spec):
    return spec is None or isinstance(spec, (int, np.integer)) and not isinstance(spec, bool)


def _check_spec(spec, what, path):
    if _is_axis(spec):
        return
    if isinstance(spec, dict):
        for key, sub in spec.items():
            _check_spec(sub, what, f"{path}[{key!r}]")
    elif isinstance(spec, (list, tuple)):
        for j, sub in enumerate(spec):
            _check_spec(sub, what, f"{path}[{j}]")
    else:
        raise TypeError(f"vmap: {what} must be an int, None, or a (nested) tuple, list or dict "
                        f"of them, but {path} is {spec!r}")


def _paths(structure, prefix):
    """``(path, leaf)`` for the leaves of ``structure`` in :func:`flatten` order."""
    if isinstance(structure, dict):
        for key in sorted(structure):
            yield from _paths(structure[key], f"{prefix}[{key!r}]")
    elif isinstance(structure, (list, tuple)):
        for j, sub in enumerate(structure):
            yield from _paths(sub, f"{prefix}[{j}]")
    else:
        yield prefix, structure


def _describe(x):
    if isinstance(x, dict):
        return f"a dict with keys {sorted(x, key=repr)}"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of length {len(x)}"
    return "None" if x is None else f"a leaf ({type(x).__name__})"


def _spread(spec, value, spec_path, value_path, what):
    """One axis per leaf of ``value`` from ``spec``, a tree prefix of its structure."""
    if _is_axis(spec):
        return [spec] * len(flatten(value))
    if isinstance(spec, dict):
        if not isinstance(value, dict) or set(spec) != set(value):
            raise ValueError(f"vmap: {spec_path} is {_describe(spec)} but {value_path} is "
                             f"{_describe(value)}; {what} must be a tree prefix of it")
        return [a for key in sorted(value) for a in _spread(
            spec[key], value[key], f"{spec_path}[{key!r}]", f"{value_path}[{key!r}]", what)]
    if not isinstance(value, (list, tuple)) or isinstance(value, dict) or \
            len(spec) != len(value):
        raise ValueError(f"vmap: {spec_path} is {_describe(spec)} but {value_path} is "
                         f"{_describe(value)}; {what} must be a tree prefix of it")
    return [a for j, (s, v) in enumerate(zip(spec, value)) for a in _spread(
        s, v, f"{spec_path}[{j}]", f"{value_path}[{j}]", what)]


def _in_axes_per_leaf(in_axes, args, kwargs):
    """One axis (int or None) per leaf of ``(args, kwargs)``."""
    if isinstance(in_axes, dict):
        raise ValueError("vmap: in_axes must be an int, None, or a tuple/list with one entry "
                         "per positional argument; for one dict argument write "
                         "in_axes=({...},)")
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            raise ValueError(f"vmap: in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        axes = _spread(tuple(in_axes), args, "in_axes", "args", "in_axes")
    else:
        axes = [in_axes] * len(flatten(args))
    return axes + [0] * len(flatten(kwargs))  # keyword arguments: always axis 0


def _shape(x):
    if isinstance(x, Tensor):
        return tuple(x.shape)
    return np.shape(x)


def _dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else np.result_type(x)


class _Call:
    """One call's leaves, their axes (normalized; None where unmapped) and the batch size."""

    def __init__(self, fun, in_axes, axis_size, args, kwargs):
        self.fun, self.args, self.kwargs = fun, args, kwargs
        self.leaves = flatten((args, kwargs))
        paths = [p for p, _ in _paths(args, "args")] + \
            [p for p, _ in _paths(kwargs, "kwargs")]
        raw = _in_axes_per_leaf(in_axes, args, kwargs)
        self.axes = []
        sizes = []  # (size, description) per mapped leaf
        for path, leaf, axis in zip(paths, self.leaves, raw):
            if axis is None or leaf is None:  # None is a structure without leaves
                self.axes.append(None)
                continue
            shape = _shape(leaf)
            if shape is None or None in shape:
                raise ValueError(f"vmap: {path} has a shape known only at run time ({shape}); "
                                 "its mapped axis must have a static length")
            nd = len(shape)
            if not -nd <= axis < nd:
                need = axis + 1 if axis >= 0 else -axis
                raise ValueError(f"vmap was requested to map {path} along axis {axis}, which "
                                 f"implies that its rank should be at least {need}, but it "
                                 f"is only {nd} (its shape is {shape})")
            axis = int(axis) % nd
            self.axes.append(axis)
            sizes.append((shape[axis], f"axis {axis} of {path} of shape {shape}"))
        self.mapped = [a is not None for a in self.axes]
        distinct = {s for s, _ in sizes} | ({axis_size} if axis_size is not None else set())
        if len(distinct) > 1:
            lines = ([f"  * the axis_size argument was {axis_size};"] if axis_size is not None
                     else []) + [f"  * size {s}: {d};" for s, d in sizes]
            raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" +
                             "\n".join(lines))
        if not distinct:
            raise ValueError("vmap must have at least one non-None value in in_axes (for an "
                             "argument with array leaves) or axis_size must be specified")
        self.k = distinct.pop()

    def per_example(self, values):
        """``(args, kwargs)`` with the leaves replaced by ``values``."""
        return pack_as((self.args, self.kwargs), values)

    def run(self, values):
        """``fun`` on one member: the leaves replaced by ``values``."""
        args, kwargs = self.per_example(values)
        return self.fun(*args, **kwargs)


class _Mapped:
    """What :func:`vmap` returns."""

    def __init__(self, fun, in_axes, out_axes, axis_size):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.in_axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
        self.out_axes = out_axes
        self.axis_size = axis_size
        # per signature of the per-example call and capture key: ConcreteFunction or None
        self._traces = CaptureCache(fun)
        self._sizes = set()  # (trace, batch size, mapped flags) run before

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        call = _Call(self.fun, self.in_axes, self.axis_size, args, kwargs)
        state = THREAD.state
        plain = not state.recorders and not state.graphs
        as_tensors = not plain or any(isinstance(x, Tensor) for x in call.leaves)
        if not any(call.mapped):  # axis_size only: one call, its results broadcast
            out = self.fun(*args, **kwargs)
            flat = flatten(out)
            flags = [False] * len(flat)
        elif plain and call.k:
            out, flat, flags = self._run_traced(call)
        else:
            out, flat, flags = _replay(call)
        if not as_tensors:
            flat = [_to_numpy(v) for v in flat]
        return self._place(out, flat, flags, call.k, as_tensors)

    # --- outside any transform: one traced graph for the whole batch ------------------------
    def _run_traced(self, call):
        """``(structure, flat outputs, batched flags)`` from the cached trace (per member when
        ``fun`` cannot be traced: it needs concrete values)."""
        fed, examples = [], []
        for leaf, axis in zip(call.leaves, call.axes):
            if axis is None:
                fed.append(leaf)
                examples.append(leaf)
                continue
            value = leaf.numpy() if isinstance(leaf, Tensor) else np.asarray(leaf)
            value = np.moveaxis(value, axis, 0) if axis else value
            fed.append(value)
            examples.append(value[0])
        ex_args, ex_kwargs = call.per_example(examples)
        key = signature_key(ex_args, ex_kwargs)
        cap = self._traces.check(ex_args, ex_kwargs)
        concrete = self._traces.get(key, cap, lambda once: _trace(self.fun, ex_args, ex_kwargs))
        if concrete is None:
            return per_member_call(call.run, call.leaves, fed, call.mapped, call.k)
        # A batch size seen for the first time runs without Numba kernels: kernels are
        # compiled per batch size (up to a second each), worth it for sizes that recur.
        size = (concrete, call.k, tuple(call.mapped))
        flat, flags = concrete.run_batched_outputs(fed, call.mapped,
                                                   jit_kernels=size in self._sizes,
                                                   captures=cap.feeds(concrete))
        self._sizes.add(size)
        inputs = [v for v, m in zip(fed, call.mapped) if m]
        flat = [_unaliased(v, inputs) if f else v for v, f in zip(flat, flags)]
        return concrete.structured_outputs, flat, flags

    # --- outputs ----------------------------------------------------------------------------
    def _place(self, out, flat, flags, k, as_tensors):
        """``out``'s structure with each leaf's batch axis moved to its ``out_axes`` (an
        unbatched leaf broadcast to the batch, or left as it is for ``out_axes=None``)."""
        axes = _spread(self.out_axes, out, "out_axes", "the output", "out_axes")
        placed = []
        for (path, _), value, batched, axis in zip(_paths(out, "output"), flat, flags, axes):
            if value is None:
                placed.append(None)
                continue
            value = _as_value(value, path)
            if axis is None:
                if batched:
                    raise ValueError(f"vmap: out_axes{path[6:]} is None but {path} (shape "
                                     f"{_shape(value)[1:]} per member) depends on the mapped "
                                     "axis; only an output that does not can be returned "
                                     "unmapped")
                placed.append(_finish(value, as_tensors, copy=True))
                continue
            shape = _shape(value)[1:] if batched else _shape(value)
            nd = len(shape) + 1
            if not -nd <= axis < nd:
                raise ValueError(f"vmap: out_axes{path[6:]}={axis} is out of range for {path}, "
                                 f"whose mapped value has {nd} dimensions (shape {shape} per "
                                 f"member plus the mapped axis of size {k})")
            if not batched:
                value = broadcast(value, k)
            placed.append(_finish(_move_from_front(value, axis % nd), as_tensors))
        return pack_as(out, placed)


def _trace(fun, args, kwargs):
    """The per-example trace, or None when ``fun`` needs concrete values (Python control flow
    on them): it then runs per member."""
    try:
        return ConcreteFunction(fun, args, kwargs)
    except ConcretizationError:
        return None


def _as_value(value, path):
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return value
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value)
    raise TypeError(f"vmap: fun returned {type(value).__name__} at {path}; outputs must be "
                    "arrays, tensors or numbers (or tuples, lists and dicts of them)")


def _to_numpy(value):
    return value.numpy() if isinstance(value, Tensor) else value


def _finish(value, as_tensors, copy=False):
    if as_tensors:
        return value if isinstance(value, Tensor) else constant(value)
    value = _to_numpy(value)
    if copy and isinstance(value, np.ndarray):
        return value.copy() if not value.flags.writeable else value
    return owned(value) if isinstance(value, np.ndarray) else value


def _unaliased(value, inputs):
    """A batched output that may be an input itself (``lambda x: x``) is copied: the caller
    gets a new array, as from any other output."""
    if isinstance(value, np.ndarray) and any(np.may_share_memory(value, a) for a in inputs):
        return value.copy()
    return value


def _move_from_front(value, axis):
    if not axis:
        return value
    if isinstance(value, Tensor):
        order = list(range(1, len(value.shape)))
        order.insert(axis, 0)
        return transpose(value, axes=tuple(order))
    return np.moveaxis(value, 0, axis)


# --- under a tape, an accumulator or a trace: a replay with differentiable ops ---------------
def _replay(call):
    """``(structure, flat outputs, batched flags)``, built from differentiable ops (see
    :func:`hessgrad.engine.batching.replay_call`)."""
    moved = [None if axis is None else move_to_front(leaf, axis)
             for leaf, axis in zip(call.leaves, call.axes)]
    return replay_call(call.run, call.leaves, moved, call.mapped, call.k)


__all__ = ["vmap"]
