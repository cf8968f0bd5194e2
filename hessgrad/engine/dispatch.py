"""Applying a primitive: run it at once (eager) or add it to a graph, and tell the recorders."""

import numpy as np

from .registry import Primitive
from .state import THREAD
from .tensor import Tensor, Variable, Written, current


def _identity(x):
    return x


# Reading a Variable while recording snapshots its value, so that a later ``assign`` cannot
# change what the recorded ops saw. The read is a differentiable identity.
READ = Primitive("read_variable", _identity, vjp=[lambda g, ans, x: g], linear=True)


def bind(prim, args, params):
    """Apply ``prim`` to ``args``; returns a Tensor, or a tuple of them for multiple results
    (numpy values instead during a backward pass that nothing records: see backprop)."""
    state = THREAD.state
    if state.graphs:
        outs = state.graphs[-1].add_node(prim, args, params)
        if state.recorders and state.limit != 0 and not prim.nondiff:
            notify(prim, args, params, outs if prim.multiple_results else (outs,))
        elif state.capturing:
            node = (outs[0] if prim.multiple_results else outs)._node
            _observe_constant_op(state, prim, node.inputs, params, node.outputs)
        return outs
    values = []
    plain = True  # no Variable among the inputs
    for a in args:
        if type(a) is not Tensor:  # the exact type first: one check for the common case
            if not isinstance(a, Tensor):
                values.append(a)
                continue
            if type(a) is Written:  # written in place: the op reads its newest value
                return bind(prim, tuple(current(b) for b in args), params)
            plain = False
        a = a._value
        if a is None:  # a symbolic input outside ``with graph.as_default()``
            return _bind_in_graph_of(prim, args, params)
        values.append(a)
    forward = prim.eager_forward
    try:
        # Without an empty ``**params``: numpy's ufuncs take a slower path for any kwargs.
        out = forward(*values, **params) if params else forward(*values)
    except Exception:
        if forward is prim.forward:
            raise
        forward = None  # re-run below the handler, so that its error is reported alone
    if forward is None:
        out = prim.forward(*values, **params)  # raises the error naming the op and shapes
    if prim.multiple_results:
        if state.plain_values:
            return tuple(out)
        outs = tuple(Tensor(o if hasattr(o, "dtype") else np.asarray(o)) for o in out)
        if state.recorders and state.limit != 0 and not prim.nondiff:
            notify(prim, args, params, outs)
        elif state.capturing:
            _observe_constant_op(state, prim, args, params, outs)
        return outs
    if type(out) is not np.ndarray and not hasattr(out, "dtype"):
        out = np.asarray(out)
    if state.plain_values:
        return out
    t = Tensor(out)
    if state.recorders and not prim.nondiff:
        _record(state, prim, args, params, t, plain)
    elif state.capturing:
        _observe_constant_op(state, prim, args, params, (t,))
    return t


# The commonest eager calls, ``sin(x)`` and ``x * 2.0``: one or two operands, each an eager
# Tensor (not a Variable), an array or a Python number; no params; one result. Apart from
# ``bind``, they skip building and unpacking a list of values: a fifth of an op's dispatch.
_AS_IS = (np.ndarray, float, int)  # operands numpy takes as they are
_UNARY = object()  # no second operand


def bind_eager(prim, x, y=_UNARY):
    """``bind(prim, (x,), {})``, or ``bind(prim, (x, y), {})`` when ``y`` is given."""
    state = THREAD.state
    args = (x,) if y is _UNARY else (x, y)
    if state.graphs or prim.multiple_results:
        return bind(prim, args, {})
    xv = x._value if type(x) is Tensor else x if type(x) in _AS_IS else None
    if xv is None:
        return bind(prim, args, {})
    try:
        if y is _UNARY:
            out = prim.eager_forward(xv)
        else:
            yv = y._value if type(y) is Tensor else y if type(y) in _AS_IS else None
            if yv is None:
                return bind(prim, args, {})
            out = prim.eager_forward(xv, yv)
    except Exception:
        out = None  # bind runs it again below the handler and reports the error alone
    if out is None:
        return bind(prim, args, {})
    if type(out) is not np.ndarray and not hasattr(out, "dtype"):
        out = np.asarray(out)
    if state.plain_values:
        return out
    t = Tensor(out)
    recorders = state.recorders
    if recorders and not prim.nondiff:
        r = recorders[0]
        if len(recorders) == 1 and state.limit is None and r.tracks_inline and not r.paused:
            tracked = r._tracked  # the one tape's observe_one, inlined (see Recorder)
            for a in args:
                if id(a) in tracked:
                    r._records.append((prim, args, {}, (t,), None))
                    if out.dtype.kind in "fc":  # integer results are constants
                        tracked[id(t)] = t
                    break
        else:
            _record(state, prim, args, {}, t, True)
    elif state.capturing:
        _observe_constant_op(state, prim, args, {}, (t,))
    return t


def _record(state, prim, args, params, t, plain):
    """Show the eager op ``t = prim(*args)`` to the recorders; ``plain``: no Variable input."""
    recorders = state.recorders
    limit = state.limit
    # One recorder sees the op (a tape; an accumulator around a tape's backward pass):
    # skip notify().
    if plain and (limit is None and len(recorders) == 1 or limit == 1):
        r = recorders[0]
        if not r.paused:
            r.observe_one(prim, args, params, t)
    elif limit != 0:
        notify(prim, args, params, (t,))


def _observe_constant_op(state, prim, args, params, outs):
    """A constant op (a comparison, argmax, ...) is shown to the recorders that watch
    everything a function reads (capture logs), not to tapes and accumulators."""
    recorders = state.recorders
    limit = len(recorders) if state.limit is None else state.limit
    for r in recorders[:limit]:
        if r.sees_constants and not r.paused:
            r.observe(prim, args, params, outs, None, 0)


def note_constant(tensor, value):
    """``tensor`` was made from ``value`` (an eager ``hessgrad.constant``): tell the capture
    logs, which name it by the object read, not by the copy the tensor holds."""
    state = THREAD.state
    recorders = state.recorders
    limit = len(recorders) if state.limit is None else state.limit
    for r in recorders[:limit]:
        if r.sees_constants and not r.paused:
            r.note_constant(tensor, value)


def _bind_in_graph_of(prim, args, params):
    graph = next(a._node.graph for a in args if isinstance(a, Tensor) and a._value is None)
    with graph.as_default():
        return bind(prim, args, params)


def notify(prim, args, params, outs):
    """Let every active recorder observe ``outs = prim(*args)``."""
    state = THREAD.state
    recorders = state.recorders
    limit = len(recorders) if state.limit is None else state.limit
    if limit == 0:
        return
    node = None
    if outs[0]._value is None:  # symbolic: recorders see the node's own inputs
        node = outs[0]._node
        args = node.inputs
        for a in args:  # variable reads are cached per graph; show them to every recorder
            if isinstance(a, Tensor) and a._node is not None and a._node.prim is READ:
                read = a._node
                _observe(READ, read.inputs, {}, read.outputs, read, recorders, limit)
    elif Variable in map(type, args):
        args = tuple(_snapshot(a, recorders, limit) if type(a) is Variable else a for a in args)
    _observe(prim, args, params, outs, node, recorders, limit)


def _observe(prim, args, params, outs, node, recorders, limit):
    for i in range(limit):
        r = recorders[i]
        if not r.paused:
            node = r.observe(prim, args, params, outs, node, i)


def _snapshot(var, recorders, limit):
    snap = Tensor(var._value)
    _observe(READ, (var,), {}, (snap,), None, recorders, limit)
    return snap
