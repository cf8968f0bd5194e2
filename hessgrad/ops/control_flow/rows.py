"""Loops whose iterations are independent, run as one batched computation.

A graph-mode ``while`` loop of the form ::

    j = start
    while j < limit:            # limit: an integer constant, or a value from outside the loop
        buf = buf.write(j, value(j, ...))   # for each TensorArray buffer
        j = j + 1

(other loop variables passed on unchanged) computes ``value`` for every ``j`` independently:
``hessians`` builds its rows so, ``map_fn`` its results. Instead of one body run per
iteration (each a full pass of the interpreter or the generated code over small arrays), the
``while`` node then runs the written values once for a batch of ``j``, with the batching
rules that ``Function.map`` and ``vmap`` use (TensorFlow's ``pfor`` does the same for
``tf.vectorized_map`` and its Jacobians), and copies the rows into the buffers. The results
are those of the loop, up to the rounding of batched products (a matrix product instead of
several matrix-vector ones).

Batches are bounded in memory by the batching budget (``engine.batching.members_per_chunk``,
counting the plan's ``total_batched_size`` per row: every intermediate for the interpreter,
which keeps them all; the largest set alive together for generated code, which frees each at
its last use), so a long loop runs as several batches of one size (the last overlapping the
one before: its rows are computed twice, the same values). The loop runs step
by step instead when its history is kept (its gradient was asked for), when a row index would fall
outside a buffer, or when the batched run raises: the step-by-step loop then reports the
error at its iteration.
"""

import numbers

import numpy as np

from ...engine.batching import members_per_chunk
from ...engine.graph import Plan, constant_value
from ..elementwise import add, less
from .buffers import tensor_array_write


class Rows:
    """The static facts of a loop of independent iterations (see the module docstring)."""

    def __init__(self, counter, limit, limit_capture, buffers, dtype):
        self.counter = counter              # index of the loop variable j
        self.limit = limit                  # a constant limit, or None ...
        self.limit_capture = limit_capture  # ... the index of the capture holding it
        self.buffers = buffers              # indices of the buffers written at row j
        self.dtype = dtype                  # j's dtype


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) or (
        isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu")


def _position(items, x):
    return next((k for k, t in enumerate(items) if t is x), None)


def independent_rows(cond, body, buffers, captures):
    """``(Rows, rows_plan)`` for a loop of independent iterations, else None.

    ``cond``, ``body``: the loop's traced blocks; ``buffers``: the indices of its TensorArray
    buffers; ``captures``: the outer tensors the node reads. ``rows_plan`` computes, from the
    body's feeds, the values the body writes (one fetch per buffer in ``Rows.buffers``)."""
    pred = cond.outputs[0]._node
    if pred is None or pred.prim is not less.primitive:
        return None
    c = _position(cond.params, pred.inputs[0])
    if c is None or body.params[c].dtype.kind not in "iu" or body.params[c].shape != ():
        return None
    limit, limit_capture = constant_value(pred.inputs[1]), None
    if limit is None:
        limit_capture = _position(captures, pred.inputs[1])
        if limit_capture is None or _position(cond.captures, pred.inputs[1]) is None or \
                pred.inputs[1].dtype.kind not in "iu":
            return None
    elif not _is_integer(limit):
        return None
    step = body.outputs[c]._node
    if step is None or step.prim is not add.primitive or len(step.inputs) != 2:
        return None
    j, one = step.inputs if step.inputs[0] is body.params[c] else step.inputs[::-1]
    step_size = constant_value(one)
    if j is not body.params[c] or not _is_integer(step_size) or step_size != 1:
        return None
    writes, written = {}, []  # id(buffer placeholder) -> its write; the buffers' indices
    for k, (param, out) in enumerate(zip(body.params, body.outputs)):
        if k == c or out is param:
            continue
        node = out._node
        if k not in buffers or node is None or node.prim is not tensor_array_write.primitive or \
                node.inputs[0] is not param or node.inputs[1] is not body.params[c] or \
                node.params.get("dynamic"):
            return None
        writes[id(param)] = node
        written.append(k)
    if not written:
        return None
    for node in body.nodes:  # a buffer is only written, at row j: no iteration reads another's
        for a in node.inputs:
            if id(a) in writes and writes[id(a)] is not node:
                return None
    values = [writes[id(body.params[k])].inputs[2] for k in written]
    return (Rows(c, limit, limit_capture, written, body.params[c].dtype),
            Plan(body.graph, values, body.params + list(captures)))


def run_rows(rows, rows_plan, state, captures, maximum_iterations):
    """The ``while`` node's final state and trip count from batched runs of ``rows_plan``
    (writing the buffers in place), or None when the loop must run step by step."""
    start = int(state[rows.counter])
    limit = rows.limit if rows.limit_capture is None else captures[rows.limit_capture]
    trip = max(0, int(limit) - start)
    if maximum_iterations is not None:
        trip = min(trip, int(maximum_iterations))
    buffers = [state[b] for b in rows.buffers]
    if start < 0 or any(start + trip > np.shape(buf)[0] for buf in buffers):
        return None
    if trip:
        flags = [k == rows.counter for k in range(len(state))] + [False] * len(captures)
        size = min(trip, members_per_chunk(rows_plan.total_batched_size(flags),
                                           max(buf.itemsize for buf in buffers)))
        try:
            for first in range(0, trip, size):
                first = start + min(first, trip - size)  # the last batch overlaps, same size
                feeds = list(state)
                feeds[rows.counter] = np.arange(first, first + size, dtype=rows.dtype)
                values, batched = rows_plan.run_flagged(feeds + list(captures), flags)
                for buf, value, flag in zip(buffers, values, batched):
                    value = np.asarray(value)
                    if value.shape != ((size,) if flag else ()) + buf.shape[1:]:
                        return None  # the step-by-step loop reports the write's error
                    buf[first:first + size] = value
        except Exception:  # noqa: BLE001 - the step-by-step loop raises real errors in place
            return None
        state = list(state)
        state[rows.counter] = np.asarray(start + trip, rows.dtype)[()]
    return state, trip
