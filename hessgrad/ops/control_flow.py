"""Control flow with TensorFlow's semantics: ``while_loop``, ``cond`` and ``TensorArray``.

Eager mode runs them at once: ``while_loop`` is a Python loop calling ``body``, ``cond`` calls
the branch its concrete predicate picks, and an eager ``TensorArray`` is a list of tensors that
``stack()`` joins with the ``stack`` op. Tapes and accumulators see every op, so derivatives of
any order come for free.

Graph mode (``with hg.Graph().as_default()`` or a traced ``hg.function``): the trip count and
the predicate are unknown at trace time, so each loop body, loop condition and branch is traced
once into the *same* graph as a separate *block* of nodes. Loop variables enter a block as
placeholders of that block; the outer tensors a block reads are found by walking back from its
outputs (its *captures*). One ``while`` (or ``cond``) node then takes the initial loop variables
plus the captures as inputs and holds executor plans (:class:`~hessgrad.engine.graph.Plan`) for
its blocks in its params; its forward replays those plans. Block nodes are reachable from outer
fetches only through a node's params, never through inputs, so outer plans and the backprop core
never see them. Nodes created while a block is traced -- including gradient nodes built by
``gradients()`` inside a loop body, as ``hessians`` does -- belong to the block and read outer
tensors as captures.

Gradients. The VJP of ``cond`` is a ``cond`` of the branches' VJPs (each branch block is cloned
and differentiated with ``gradients``). The VJP of ``while`` is a reverse ``while_loop``: the
forward node keeps each iteration's loop state in hidden history outputs (switched on only when
a gradient is built, so ``hessians`` keeps no history), and the reverse body clones the body
block at the saved state and pulls the cotangents back through it with ``gradients``. (Clones
of the traced nodes, never new calls of the user's function: a Python closure may have been
rebound since, and side effects must not repeat.) Since these
VJPs are themselves ``cond``/``while`` nodes with VJPs, graph-mode loops can be differentiated
again (second order). Forward mode: the JVP of ``while`` is one loop carrying the state and its
tangent (the body block cloned with tangents pushed through each node); it shares the forward
node's history switch, so forward-over-reverse HVPs also get the tangents of the history. The
JVP of ``cond`` is a ``cond`` of the branches' JVPs.

Limits: gradient rules need static shapes, so tensors whose shape is only known at run time (a
``shape_invariants`` dimension set to None, ``stack()`` of a ``dynamic_size`` TensorArray) can
be computed but not differentiated in graph mode.

The reverse loop of a loop that writes or reads a TensorArray carries the buffer's cotangent;
it takes a written row out of it (``tensor_array_pop``) and adds a read's row into it
(``tensor_array_accumulate``) in place, in a copy the reverse loop owns, so that a T-step
``scan`` differentiates in O(T) rather than copying the whole buffer at each step.

Batched runs (``Function.map``, batched Hessian-vector products, ``vmap``) run a ``while`` or
``cond`` node on the whole batch at once: see :mod:`.control_flow_batching`. A loop whose
iterations are independent (``hessians``, ``map_fn``) runs its iterations so, as batches of
rows: see :mod:`.loop_rows`.

TensorArray in graph mode is one loop-carried buffer tensor of shape ``(capacity,) +
element_shape`` (plus a size tensor when ``dynamic_size``). Writes update the buffer *in place*
(no O(size) copy per write, so a 5000 x 5000 Hessian is built in one 200 MB buffer). That is
sound because a TensorArray flow value is used once: after ``ta2 = ta.write(i, v)`` the old
``ta`` must not be read again, and each element is written at most once (TensorFlow's rules).
No rule reads a buffer's forward value (reads, writes and their adjoints are linear), so the
aliasing cannot corrupt gradients either.
"""

import threading

import numpy as np

from ..engine.dispatch import READ, bind
from ..engine.forward import push_tangents
from ..engine.gradients import gradients
from ..engine.graph import (CONST, PASS_THROUGH, UNFOLDABLE, WRITES_IN_PLACE, Plan,
                            constant_value, get_default_graph, is_weak)
from ..engine.nest import flatten, pack_as
from ..engine.registry import primitive
from ..engine.tensor import Tensor, Variable, is_differentiable_dtype, shape_of
from .core import constant, convert_to_tensor, identity, reshape, stack, unstack, zeros, \
    zeros_like
from .elementwise import add, greater, maximum, subtract
from .loop_rows import independent_rows, run_rows
from .shape import concatenate


# --- TensorArray buffer primitives (graph mode) -------------------------------------------
def _rows(x):
    return x.shape[0] if type(x) is np.ndarray else np.shape(x)[0]


def _check_index(idx, rows, what, dynamic=False):
    """``idx`` checked to be integer rows inside a TensorArray of ``rows`` rows (below 0 only
    when ``dynamic``): a Python int for one row (numpy's basic indexing, far faster than a 0-d
    index array), else an integer array."""
    if type(idx) is not int and not isinstance(idx, np.integer):  # (a loop's counter is one)
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"{what}: index must be an integer, got dtype {idx.dtype}")
        if idx.ndim:
            if idx.size and (idx.min() < 0 or (not dynamic and idx.max() >= rows)):
                raise IndexError(f"{what}: index {idx.tolist()} is out of range for a "
                                 f"TensorArray of size {rows}")
            return idx
    i = int(idx)
    if i < 0 or not dynamic and i >= rows:
        raise IndexError(f"{what}: index {i} is out of range for a TensorArray of size {rows}")
    return i


def _ta_buffer(shape, dtype):
    return np.zeros(shape, dtype)


tensor_array_buffer = primitive("tensor_array_buffer", _ta_buffer, nondiff=True,
                                shape_rule=lambda shape, dtype: (tuple(shape), np.dtype(dtype)))
UNFOLDABLE.add("tensor_array_buffer")  # a fresh buffer per run: writes update it in place


def _ta_write(buf, idx, value, dynamic=False):
    rows = _rows(buf)
    idx = _check_index(idx, rows, "TensorArray.write", dynamic)
    value = np.asarray(value)
    one = type(idx) is int  # a loop's write at its counter: the common case, kept short
    if value.shape != (buf.shape[1:] if one else np.shape(idx) + buf.shape[1:]):
        raise ValueError(f"TensorArray.write: value of shape {value.shape} does not match the "
                         f"element shape {buf.shape[1:]} (index shape {np.shape(idx)})")
    needed = idx + 1 if one else int(np.max(idx)) + 1 if idx.size else 0
    if needed > rows:  # only when dynamic: grow geometrically (amortised O(1) writes)
        grown = np.zeros((max(needed, 2 * rows),) + buf.shape[1:], buf.dtype)
        grown[:rows] = buf
        buf = grown
    buf[idx] = value  # in place: a TensorArray flow value is used once (module docstring)
    return buf


def _ta_write_shape(buf, idx, value, dynamic=False):
    shape = shape_of(buf)
    if dynamic and shape is not None:
        shape = (None,) + tuple(shape[1:])
    return shape, buf.dtype


tensor_array_write = primitive(
    "tensor_array_write", _ta_write,
    vjp=[lambda g, ans, buf, idx, value, dynamic=False: tensor_array_clear(g, idx, buf),
         None,
         lambda g, ans, buf, idx, value, dynamic=False: tensor_array_read(g, idx)],
    # Linear, but its tangent must not be written in place (a tangent may be shared):
    jvp=[lambda t, ans, buf, idx, value, dynamic=False: tensor_array_clear(t, idx, ans),
         None,
         lambda t, ans, buf, idx, value, dynamic=False: tensor_array_read_adjoint(t, idx, ans)],
    shape_rule=_ta_write_shape)
WRITES_IN_PLACE["tensor_array_write"] = lambda params: (0,)


def _ta_read(buf, idx, prefix=False):
    if prefix:  # the first ``idx`` rows: TensorArray.stack
        return np.array(buf[:int(idx)])
    idx = _check_index(idx, _rows(buf), "TensorArray.read")
    row = buf[idx]
    # A row at one index is a view (copied: the buffer is written in place later), or of a
    # 1-D buffer a numpy scalar, immutable (so a loop counter read back stays one); rows at
    # an index array are numpy's fresh copy.
    return row.copy() if type(idx) is int and type(row) is np.ndarray else row


def _ta_read_shape(buf, idx, prefix=False):
    shape = shape_of(buf)
    if shape is None:
        return None, buf.dtype
    if prefix:
        n = idx if not isinstance(idx, Tensor) else None
        return (None if n is None else int(n),) + tuple(shape[1:]), buf.dtype
    return tuple(shape_of(idx)) + tuple(shape[1:]), buf.dtype


tensor_array_read = primitive(
    "tensor_array_read", _ta_read,
    vjp=[lambda g, ans, buf, idx, prefix=False: tensor_array_read_adjoint(g, idx, buf,
                                                                          prefix=prefix),
         None],
    jvp=[lambda t, ans, buf, idx, prefix=False: tensor_array_read(t, idx, prefix=prefix), None],
    shape_rule=_ta_read_shape)


def _ta_read_adjoint(g, idx, like, prefix=False):
    out = np.zeros((_rows(like),) + np.shape(g)[np.ndim(idx) if not prefix else 1:],
                   np.result_type(g))
    if prefix:
        out[:int(idx)] = g
    elif np.ndim(idx) == 0:
        out[int(idx)] = g
    else:
        np.add.at(out, np.asarray(idx), g)  # repeated indices add up
    return out


tensor_array_read_adjoint = primitive(
    "tensor_array_read_adjoint", _ta_read_adjoint,
    vjp=[lambda g, ans, gy, idx, like, prefix=False: tensor_array_read(g, idx, prefix=prefix),
         None, None],
    jvp=[lambda t, ans, g, idx, like, prefix=False: tensor_array_read_adjoint(t, idx, like,
                                                                             prefix=prefix),
         None, None],
    shape_rule=lambda g, idx, like, prefix=False: (shape_of(like), g.dtype))


def _ta_clear(g, idx, like):
    """``g`` resized to the rows of ``like`` with rows ``idx`` zeroed (a write's adjoint)."""
    rows = _rows(like)
    out = np.zeros((rows,) + np.shape(g)[1:], np.result_type(g))
    m = min(rows, _rows(g))
    out[:m] = g[:m]
    idx = np.asarray(idx)
    out[idx[idx < rows] if idx.ndim else (idx if idx < rows else [])] = 0
    return out


def _ta_clear_shape(g, idx, like):
    gs, ls = shape_of(g), shape_of(like)
    if gs is None or ls is None:
        return None, g.dtype
    return (ls[0],) + tuple(gs[1:]), g.dtype


tensor_array_clear = primitive(
    "tensor_array_clear", _ta_clear,
    vjp=[lambda gg, ans, g, idx, like: tensor_array_clear(gg, idx, g), None, None],
    jvp=[lambda t, ans, g, idx, like: tensor_array_clear(t, idx, like), None, None],
    shape_rule=_ta_clear_shape)


# --- cotangent buffers updated in place by a reverse loop -----------------------------------
# The reverse loop of a ``while`` that writes (or reads) a TensorArray carries the buffer's
# cotangent, and each iteration takes one row out of it (a write's adjoint) or adds one row
# into it (a read's adjoint). Done functionally, every iteration copies the whole buffer:
# O(T^2) for T steps. These two ops update the cotangent in place instead, when the running
# loop owns it: ``_while_forward`` copies such loop variables once on entry and lists the
# copies here (not while it records a history, which would alias them). By construction
# (see ``_while_vjp``) each such variable has this one op as its only consumer per iteration.
class _Owned(threading.local):
    ids = None  # id -> array, for the arrays the innermost running loop owns; or None


_OWNED = _Owned()


def _ta_pop(g, idx, like):
    """``(g[idx], g with rows idx zeroed)``: a write's adjoint, both parts at once."""
    owned = _OWNED.ids
    if owned is not None and id(g) in owned and _rows(g) == _rows(like):
        i = _check_index(idx, _rows(g), "TensorArray gradient")
        row = np.array(g[i])
        g[i] = 0
        return row, g
    return _ta_read(g, idx), _ta_clear(g, idx, like)


def _ta_pop_vjp(g, ans, cot, idx, like):
    g_row, g_rest = g
    parts = []
    if g_row is not None:
        parts.append(tensor_array_read_adjoint(g_row, idx, cot))
    if g_rest is not None:
        parts.append(tensor_array_clear(g_rest, idx, cot))
    grad = None if not parts else parts[0] if len(parts) == 1 else add(*parts)
    return grad, None, None


tensor_array_pop = primitive(
    "tensor_array_pop", _ta_pop, vjp=_ta_pop_vjp,
    jvp=[lambda t, ans, g, idx, like: tensor_array_pop(t, idx, like), None, None],
    multiple_results=True, none_grads_ok=True,
    shape_rule=lambda g, idx, like: [_ta_read_shape(g, idx), _ta_clear_shape(g, idx, like)])
WRITES_IN_PLACE["tensor_array_pop"] = lambda params: (0,)


def _ta_accumulate(acc, idx, row):
    """``acc`` plus ``row`` added at rows ``idx``: a read's adjoint added into ``acc``."""
    dtype = np.result_type(acc, row)
    owned = _OWNED.ids
    if not (owned is not None and id(acc) in owned and acc.dtype == dtype):
        acc = np.array(acc, dtype=dtype)
    i = _check_index(idx, _rows(acc), "TensorArray gradient")
    if type(i) is int:
        acc[i] += row
    else:
        np.add.at(acc, i, row)  # repeated indices add up
    return acc


def _ta_accumulate_jvp(tangents, ans, acc, idx, row):
    t_acc, _, t_row = tangents
    if t_row is None:
        return t_acc
    if t_acc is None:
        return tensor_array_read_adjoint(t_row, idx, acc)
    return tensor_array_accumulate(t_acc, idx, t_row)


tensor_array_accumulate = primitive(
    "tensor_array_accumulate", _ta_accumulate,
    vjp=[lambda g, ans, acc, idx, row: g, None,
         lambda g, ans, acc, idx, row: tensor_array_read(g, idx)],
    jvp=_ta_accumulate_jvp,
    shape_rule=lambda acc, idx, row: (shape_of(acc), np.result_type(acc.dtype, row.dtype)))
WRITES_IN_PLACE["tensor_array_accumulate"] = lambda params: (0,)


# --- blocks: a traced body or branch --------------------------------------------------------
def _block_tensor(x, graph):
    """``x`` as a tensor computed inside the block being traced."""
    if isinstance(x, Variable):
        return identity(x)
    if isinstance(x, Tensor):
        return graph.constant(x._value) if x._value is not None else x
    return convert_to_tensor(x)


class _Block:
    """The nodes ``fn(placeholders)`` adds to ``graph``; its captures and a plan to run it.

    ``fn`` takes a list of placeholders (one per aval) and returns a flat list of outputs.
    """

    def __init__(self, graph, fn, avals, name):
        start = len(graph.nodes)
        with graph.as_default():
            self.params = [graph.placeholder(dtype, shape, name=f"{name}/input{k}")
                           for k, (shape, dtype) in enumerate(avals)]
            self.outputs = [_block_tensor(o, graph) for o in fn(self.params)]
        self.graph = graph
        block = {id(n) for n in graph.nodes[start:]}
        fed = {id(p) for p in self.params}
        captures, seen, nodes = [], set(), {}
        stack_ = list(self.outputs)
        while stack_:
            t = stack_.pop()
            if t._value is not None or id(t) in seen or id(t) in fed:
                continue
            seen.add(id(t))
            node = t._node
            # A variable read is never block-local: a later outer read reuses it (the graph
            # caches reads), and gradients w.r.t. the variable must reach it from outside.
            if id(node) not in block or node.prim is READ:
                captures.append(t)
                continue
            nodes[id(node)] = node
            stack_.extend(a for a in node.inputs if isinstance(a, Tensor) and a._value is None)
        self.captures = sorted(captures, key=lambda t: (t._node.seq, t._index))
        self.nodes = sorted(nodes.values(), key=lambda n: n.seq)

    def plan(self, captures):
        return Plan(self.graph, self.outputs, self.params + list(captures))

    def clone(self, inputs, captures=(), new_captures=(), tangents=None):
        """The block's outputs recomputed by new nodes in the current graph context, from
        ``inputs`` (for its placeholders) and ``new_captures`` (for ``captures``, a superset of
        its own). Gradient rules use clones rather than calling the user's function again:
        a Python closure may since have been rebound, and side effects must not repeat.

        With ``tangents`` (one per placeholder then per capture, None for zero) the clone also
        pushes tangents through every node (forward mode) and returns ``(outputs, output
        tangents)``."""
        mapping = {id(p): x for p, x in zip(self.params, inputs)}
        mapping.update((id(c), x) for c, x in zip(captures, new_captures))
        tan = {}
        if tangents is not None:
            tan = {id(t): d for t, d in zip(self.params + list(captures), tangents)
                   if d is not None}
        records = {}  # a while node's history switch -> its clone's (shared with its JVP loop)
        for node in self.nodes:
            if node.prim is CONST:
                outs = (self.graph.constant(node.params["value"]),)
            else:
                args = [mapping.get(id(a), a) if isinstance(a, Tensor) else a
                        for a in node.inputs]
                params = node.params
                if node.prim is _while.primitive:
                    # A clone keeps its own history switch, on where the original's is: the
                    # block may hold the reverse loop of that node, cloned too, which reads
                    # the clone's history.
                    old = params["record"]
                    if id(old) not in records:
                        records[id(old)] = _Record(old.on)
                    params = dict(params, record=records[id(old)])
                elif node.prim.closures:  # its Python functions read this clone's tensors
                    params = dict(params, remaps=params.get("remaps", ()) + (mapping,))
                outs = _apply(node.prim, args, params)
                arg_tangents = [tan.get(id(a)) if isinstance(a, Tensor) else None
                                for a in node.inputs]
                if tan and not node.prim.nondiff and any(t is not None for t in arg_tangents):
                    pushed = push_tangents(node.prim, args, params, outs, arg_tangents)
                    for old, t in zip(node.outputs, pushed):
                        if t is not None and is_differentiable_dtype(old.dtype):
                            tan[id(old)] = t
            for old, new in zip(node.outputs, outs):
                mapping[id(old)] = new
        outs = [mapping.get(id(o), o) for o in self.outputs]
        if tangents is None:
            return outs
        return outs, [tan.get(id(o)) for o in self.outputs]


def _apply(prim, args, params):
    out = bind(prim, tuple(args), params)
    return out if prim.multiple_results else (out,)


def _union(*lists):
    out, seen = [], set()
    for t in (t for lst in lists for t in lst):
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _compatible(shape, invariant):
    if invariant is None or shape is None:
        return True
    return len(shape) == len(invariant) and all(
        a is None or b is None or a == b for a, b in zip(shape, invariant))


def _describe(structure):
    n = len(flatten(structure))
    kinds = ["TensorArray" if isinstance(x, TensorArray) else "Tensor" for x in flatten(structure)]
    return repr(pack_as(structure, kinds)) if n else repr(structure)


def _concrete_int(x, what):
    if x is None:
        return None
    value = constant_value(x)
    if value is None:
        raise TypeError(f"{what} must be known when the graph is built (a Python int or a "
                        f"constant), got the symbolic tensor {x.name}")
    return int(value)


# --- while_loop -----------------------------------------------------------------------------
class _Record:
    """Whether a ``while`` node keeps each iteration's state (turned on by its VJP)."""

    __slots__ = ("on",)

    def __init__(self, on=False):
        self.on = on


class _Loop:
    """The static facts of a traced ``while`` node its VJP needs."""

    def __init__(self, cond, body, captures, avals, buffers, out_avals, owned=(), rows=None):
        self.cond = cond                # the condition's _Block
        self.body = body                # the body's _Block
        self.captures = captures        # the outer tensors the node was built with
        self.avals = avals              # (shape invariant, dtype) per flat loop variable
        self.buffers = buffers          # indices of TensorArray buffers (write-once, no history)
        self.recorded = [j for j in range(len(avals)) if j not in buffers]
        self.out_avals = out_avals
        self.owned = owned              # cotangent buffers the body updates in place (_OWNED)
        self.rows = rows                # iterations independent: a loop_rows.Rows, else None


def _while_forward(*values, n_vars, cond_plan, body_plan, maximum_iterations, record, loop,
                   rows_plan=None):
    state = list(values[:n_vars])
    captures = list(values[n_vars:])
    if rows_plan is not None and not record.on:  # all iterations in batches (loop_rows)
        done = run_rows(loop.rows, rows_plan, state, captures, maximum_iterations)
        if done is not None:
            state, count = done
            return tuple(state) + (np.int64(count),) + (None,) * len(loop.recorded)
    history = [] if record.on else None
    owned = None
    if loop.owned and history is None:  # this run's own copies, updated in place
        for j in loop.owned:
            state[j] = np.array(state[j])
        owned = {id(state[j]): state[j] for j in loop.owned}  # held: ids stay unique
    outer, _OWNED.ids = _OWNED.ids, owned  # an outer loop's arrays are not this body's
    count = 0
    try:
        while maximum_iterations is None or count < maximum_iterations:
            if not cond_plan.run(state + captures)[0]:
                break
            if history is not None:
                history.append(state)
            state = body_plan.run(state + captures)
            count += 1
    finally:
        _OWNED.ids = outer
    saved = []
    for j in loop.recorded:
        if history is None:
            saved.append(None)  # nothing consumes it: no gradient was asked for
        elif history:
            saved.append(np.stack([np.asarray(h[j]) for h in history]))
        else:
            saved.append(np.zeros((0,) + np.shape(values[j]), np.result_type(values[j])))
    return tuple(state) + (np.int64(count),) + tuple(saved)


def _add_rows(acc, g):
    """``acc + g``; when ``g`` is one read's adjoint (a row scattered into zeros), the row is
    added into ``acc`` (in place when the running loop owns ``acc``)."""
    node = g._node
    if node is not None and node.prim is tensor_array_read_adjoint.primitive and \
            not node.params.get("prefix") and shape_of(g) == shape_of(acc):
        row, idx, _ = node.inputs
        return tensor_array_accumulate(acc, idx, row)
    return add(acc, g)


def _while_vjp(g, ans, *inputs, n_vars, loop, record, **_):
    record.on = True  # the forward now keeps every iteration's state for the reverse loop
    finals, count, hists = ans[:n_vars], ans[n_vars], ans[n_vars + 1:]
    g_finals, g_hists = g[:n_vars], g[n_vars + 1:]
    captures = inputs[n_vars:]
    dvars = [j for j in range(n_vars) if is_differentiable_dtype(finals[j].dtype)]
    dcaps = [c for c, t in enumerate(captures)
             if isinstance(t, Tensor) and is_differentiable_dtype(t.dtype)]
    result = [None] * len(inputs)
    if not dvars and not dcaps:
        return result
    hist_of = dict(zip(loop.recorded, hists))
    g_hist_of = {j: gh for j, gh in zip(loop.recorded, g_hists) if gh is not None}
    nv = len(dvars)

    owned = set()  # reverse loop variables updated in place (filled while tracing the body)

    def reverse_cond(k, *_):
        return greater(k, 0)

    def reverse_body(k, *acc):
        k1 = subtract(k, 1)
        state = [tensor_array_read(hist_of[j], k1) if j in hist_of else finals[j]
                 for j in range(n_vars)]
        outs = loop.body.clone(state, loop.captures, captures)
        d_caps = [captures[c] for c in dcaps]
        # A buffer the body writes last (the usual ``ta = ta.write(i, v)``): its cotangent's
        # row i seeds ``v`` and the rest passes on, both taken in place (tensor_array_pop).
        targets, seeds, rests = [], [], {}
        for i, j in enumerate(dvars):
            write = outs[j]._node if j in loop.buffers else None
            if write is not None and write.prim is tensor_array_write.primitive and \
                    write.inputs[0] is state[j] and not write.params.get("dynamic"):
                _, idx, value = write.inputs
                row, rests[j] = tensor_array_pop(acc[i], idx, state[j])
                owned.add(1 + i)
                targets.append(value)
                seeds.append(row)
            else:
                targets.append(outs[j])
                seeds.append(acc[i])
        pulled = gradients(targets, [state[j] for j in dvars] + d_caps, grad_ys=seeds,
                           stop_gradients=state + d_caps)
        g_state = []
        for i, j in enumerate(dvars):
            gj = pulled[i]
            if j in rests:
                gj = rests[j] if gj is None else _add_rows(rests[j], gj)
            elif gj is None:
                gj = zeros_like(state[j])
            if j in g_hist_of:
                gj = add(gj, tensor_array_read(g_hist_of[j], k1))
            g_state.append(gj)
        g_caps = []
        for i, (a, b) in enumerate(zip(acc[nv:], pulled[nv:])):
            g = a if b is None else _add_rows(a, b)
            if g is not a and g._node.prim is tensor_array_accumulate.primitive:
                owned.add(1 + nv + i)
            g_caps.append(g)
        return (k1, *g_state, *g_caps)

    init = [count]
    init += [g_finals[j] if g_finals[j] is not None else zeros_like(finals[j]) for j in dvars]
    init += [zeros_like(captures[c]) for c in dcaps]
    invariants = [()] + [loop.avals[j][0] for j in dvars] + \
        [shape_of(captures[c]) for c in dcaps]
    graph = get_default_graph() or count.graph
    out = _graph_while(graph, reverse_cond, reverse_body,
                       tuple(_leaf_in_loop(x) for x in init),
                       tuple(_Shape(s) for s in invariants), None, False, owned=owned)
    for i, j in enumerate(dvars):
        result[j] = out[1 + i]
    for i, c in enumerate(dcaps):
        result[n_vars + c] = out[1 + nv + i]
    return result


def _while_jvp(tangents, ans, *inputs, n_vars, loop, record, maximum_iterations, **_):
    """Forward mode: one loop carrying the state and its tangent. It shares the node's
    history switch, so when a gradient asks the node for its history, this loop records
    the tangents of that history too (forward-over-reverse Hessian-vector products)."""
    state, captures = inputs[:n_vars], inputs[n_vars:]
    cap_tangents = list(tangents[n_vars:])
    dvars = [j for j in range(n_vars) if is_differentiable_dtype(state[j].dtype)]
    nd = len(dvars)
    init = list(state) + [tangents[j] if tangents[j] is not None else zeros_like(state[j])
                          for j in dvars]
    avals = list(loop.avals) + [loop.avals[j] for j in dvars]

    def cond_flat(vars_):
        return loop.cond.clone(vars_[:n_vars], loop.captures, captures)

    def body_flat(vars_):
        in_tangents = [None] * n_vars
        for i, j in enumerate(dvars):
            in_tangents[j] = vars_[n_vars + i]
        outs, out_tangents = loop.body.clone(vars_[:n_vars], loop.captures, captures,
                                             tangents=in_tangents + cap_tangents)
        return list(outs) + [out_tangents[j] if out_tangents[j] is not None else
                             zeros_like(outs[j]) for j in dvars]

    # A buffer's tangent is a TensorArray buffer too (written once per element, in place):
    # like the buffer it keeps no history (which would copy it at each iteration, and
    # could not be stacked once a dynamic buffer grows).
    buffers = set(loop.buffers) | {n_vars + i for i, j in enumerate(dvars) if j in loop.buffers}
    graph = get_default_graph() or ans[0].graph
    # The loop's own copies of what the node updates in place, and of their tangents (which
    # the same ops update, see their JVPs).
    owned = set(loop.owned) | {n_vars + i for i, j in enumerate(dvars) if j in loop.owned}
    outs = _make_while(graph, cond_flat, body_flat, init, avals, buffers,
                       maximum_iterations, record=record, owned=owned)
    result = [None] * len(ans)
    for i, j in enumerate(dvars):
        result[j] = outs[n_vars + i]
    # Histories: the tangent of the node's history of variable j is this loop's history of
    # the tangent of j (the loop records all its variables but the buffers).
    recorded = [k for k in range(n_vars + nd) if k not in buffers]
    hist_out = dict(zip(recorded, outs[n_vars + nd + 1:]))
    for h, j in enumerate(loop.recorded):
        if j in dvars:
            result[n_vars + 1 + h] = hist_out[n_vars + dvars.index(j)]
    return tuple(result)


_while = primitive("while", _while_forward, vjp=_while_vjp, jvp=_while_jvp, none_grads_ok=True,
                   multiple_results=True,
                   shape_rule=lambda *inputs, loop, **params: loop.out_avals)
WRITES_IN_PLACE["while"] = lambda params: params["loop"].buffers  # the body writes them


class _Shape:
    """A shape invariant as one leaf of a structure (tuples would be flattened)."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = None if shape is None else tuple(shape)


def _invariant_leaves(loop_vars, shape_invariants):
    """One shape (or None) per leaf of ``loop_vars``, from a parallel structure of shapes."""
    out = []

    def walk(s, inv):
        if isinstance(s, (list, tuple, dict)):
            keys = sorted(s) if isinstance(s, dict) else range(len(s))
            if isinstance(inv, dict) != isinstance(s, dict) or len(inv) != len(s):
                raise ValueError(f"while_loop: shape_invariants {shape_invariants!r} do not "
                                 f"match the structure of loop_vars {_describe(loop_vars)}")
            for k in keys:
                walk(s[k], inv[k])
        else:
            if isinstance(inv, _Shape):
                inv = inv.shape
            elif inv is not None:
                inv = tuple(None if d is None else int(d) for d in inv)
            out.append(inv)

    walk(loop_vars, shape_invariants)
    return out


def _leaf_in_loop(x):
    return x if isinstance(x, TensorArray) else convert_to_tensor(x)


def _to_flat(leaves, what):
    flat, kinds = [], []
    for leaf in leaves:
        if isinstance(leaf, TensorArray):
            flat.extend(leaf._flows(what))
            kinds.append(leaf)
        else:
            flat.append(leaf)
            kinds.append(None)
    return flat, kinds


def _from_flat(flat, kinds):
    leaves, k = [], 0
    for kind in kinds:
        if kind is None:
            leaves.append(flat[k])
            k += 1
        else:
            n = len(kind._flows("while_loop"))
            leaves.append(kind._with_flows(flat[k:k + n]))
            k += n
    return leaves


def _normalize_body_result(out, loop_vars, packed):
    if packed:  # a single loop variable: body may return it bare or in a 1-tuple
        if isinstance(out, (list, tuple)) and len(out) == 1:
            out = out[0]
        return out
    if len(loop_vars) == 1 and not isinstance(out, (list, tuple)):
        return (out,)
    return out


def _check_same_structure(loop_vars, out):
    a, b = flatten(loop_vars), flatten(out)
    if len(a) != len(b) or any(isinstance(x, TensorArray) != isinstance(y, TensorArray)
                               for x, y in zip(a, b)):
        raise ValueError(f"while_loop: body must return the same structure as loop_vars: "
                         f"loop_vars is {_describe(loop_vars)}, body returned {_describe(out)}")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (TensorFlow's
    ``tf.while_loop``).

    Args:
        cond: callable returning a boolean scalar from the loop variables.
        body: callable returning new loop variables with the same structure (and, in graph
            mode, the same dtypes and shapes unless ``shape_invariants`` relaxes them).
        loop_vars: a tensor, array, number or TensorArray, or a (nested) tuple/list/dict of
            them; ``cond`` and ``body`` get the elements of a tuple/list as arguments.
        shape_invariants: a structure like ``loop_vars`` of shapes (``None`` dims are free).
        maximum_iterations: optional int bound on the trip count.
        parallel_iterations, back_prop, swap_memory, name: accepted for compatibility.
    Returns:
        The final loop variables, with the structure of ``loop_vars``.
    Raises:
        TypeError: ``cond``/``body`` not callable, a dtype changes, or a non-boolean cond.
        ValueError: ``body`` returns another structure or an incompatible shape.

    >>> import hessgrad as hg
    >>> float(hg.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * 2.0), (0, 1.0))[1])
    16.0
    >>> with hg.Graph().as_default() as g:
    ...     n = hg.placeholder("int64", shape=())
    ...     _, total = hg.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0))
    >>> int(g.run(total, {n: 5}))
    10
    """
    del parallel_iterations, back_prop, swap_memory, name
    if not callable(cond):
        raise TypeError(f"while_loop: cond must be callable, got {cond!r}")
    if not callable(body):
        raise TypeError(f"while_loop: body must be callable, got {body!r}")
    packed = not isinstance(loop_vars, (list, tuple))
    structure = (loop_vars,) if packed else loop_vars
    if shape_invariants is not None and packed:
        shape_invariants = (shape_invariants,)
    max_iter = _concrete_int(maximum_iterations, "while_loop: maximum_iterations")
    if max_iter is not None and max_iter < 0:
        raise ValueError(f"while_loop: maximum_iterations must be >= 0, got {max_iter}")
    leaves = [_leaf_in_loop(x) for x in flatten(structure)]
    structure = pack_as(structure, leaves)
    graph = get_default_graph()
    if graph is None:
        graph = next((x.graph for x in leaves if isinstance(x, Tensor) and x._value is None),
                     None)
    if graph is None:
        out = _eager_while(cond, body, structure, max_iter, packed)
    else:
        out = _graph_while(graph, cond, body, structure, shape_invariants, max_iter, packed)
    return out[0] if packed else out


def _eager_while(cond, body, structure, max_iter, packed):
    count = 0
    while max_iter is None or count < max_iter:
        if not bool(cond(*structure)):
            break
        out = _normalize_body_result(body(*structure), structure, packed)
        if packed:
            out = (out,)
        _check_same_structure(structure, out)
        structure = pack_as(structure, [_leaf_in_loop(x) for x in flatten(out)])
        count += 1
    return structure


def _graph_while(graph, cond, body, structure, shape_invariants, max_iter, packed, owned=()):
    leaves = flatten(structure)
    flat, kinds = _to_flat(leaves, "while_loop")
    n_vars = len(flat)
    if shape_invariants is not None:
        per_leaf = _invariant_leaves(structure, shape_invariants)
    else:
        per_leaf = [None if isinstance(x, TensorArray) else x.shape for x in leaves]
    invariants = []
    for leaf, inv in zip(leaves, per_leaf):
        if isinstance(leaf, TensorArray):
            invariants.extend(leaf._invariants())
        else:
            invariants.append(inv)
    avals = []
    for k, (t, inv) in enumerate(zip(flat, invariants)):
        if not _compatible(t.shape, inv):
            raise ValueError(f"while_loop: loop variable {k} has shape {t.shape}, which is not "
                             f"compatible with its shape invariant {inv}")
        avals.append((inv, t.dtype))
    buffers = {k for k, kind in enumerate(_expand_kinds(kinds)) if kind == "buffer"}

    def call(fn, state):
        return fn(*pack_as(structure, _from_flat(state, kinds)))

    def cond_flat(state):
        return [call(cond, state)]

    def body_flat(state):
        out = _normalize_body_result(call(body, state), structure, packed)
        if packed:
            out = (out,)
        _check_same_structure(structure, out)
        out_flat, _ = _to_flat([_leaf_in_loop(x) for x in flatten(out)], "while_loop")
        return out_flat

    outs = _make_while(graph, cond_flat, body_flat, flat, avals, buffers, max_iter,
                       owned=owned)
    return pack_as(structure, _from_flat(list(outs[:n_vars]), kinds))


def _make_while(graph, cond_flat, body_flat, flat, avals, buffers, max_iter, record=None,
                owned=()):
    """Trace the cond and body blocks (functions of flat state lists) and add the ``while``
    node; returns all its outputs (final state, trip count, histories). ``owned``: the
    variables the body updates in place (see ``_OWNED``), known once the body is traced."""
    n_vars = len(flat)
    cond_block = _Block(graph, cond_flat, avals, graph.unique_name("while/cond"))
    pred = cond_block.outputs[0]
    if pred.dtype != np.bool_ or (pred.shape is not None and pred.shape != ()):
        raise TypeError(f"while_loop: cond must return a boolean scalar, got dtype {pred.dtype} "
                        f"and shape {pred.shape}")
    body_block = _Block(graph, body_flat, avals, graph.unique_name("while/body"))
    for k, (o, (inv, dtype)) in enumerate(zip(body_block.outputs, avals)):
        if o.dtype != dtype:
            raise TypeError(f"while_loop: loop variable {k} has dtype {dtype} on entry but "
                            f"{o.dtype} after one iteration of body")
        if not _compatible(o.shape, inv):
            raise ValueError(f"while_loop: loop variable {k} has shape {inv} on entry but "
                             f"{o.shape} after one iteration of body; pass shape_invariants "
                             "with None for the dimensions that change")
    captures = _union(cond_block.captures, body_block.captures)
    out_avals = list(avals) + [((), np.dtype(np.int64))]
    for j, (shape, dtype) in enumerate(avals):
        if j not in buffers:  # the stacked state of every iteration (the VJP's history)
            out_avals.append((None if shape is None else (None,) + tuple(shape), dtype))
    rows = None if owned else independent_rows(cond_block, body_block, buffers, captures)
    loop = _Loop(cond_block, body_block, captures, avals, buffers, out_avals, frozenset(owned),
                 rows=rows and rows[0])
    extra = {} if rows is None else {"rows_plan": rows[1]}
    with graph.as_default():
        return _while(*flat, *captures, n_vars=n_vars, cond_plan=cond_block.plan(captures),
                      body_plan=body_block.plan(captures), maximum_iterations=max_iter,
                      record=record or _Record(), loop=loop, **extra)


def _expand_kinds(kinds):
    out = []
    for kind in kinds:
        if kind is None:
            out.append("tensor")
        else:
            out.extend(["buffer"] + ["size"] * (len(kind._flows("while_loop")) - 1))
    return out


# --- cond -----------------------------------------------------------------------------------
def _cond_forward(pred, *captures, true_plan, false_plan, branches):
    plan = true_plan if bool(np.asarray(pred)) else false_plan
    return tuple(plan.run(list(captures)))


def _cond_vjp(g, ans, pred, *captures, branches, **_):
    dcaps = [c for c, t in enumerate(captures)
             if isinstance(t, Tensor) and is_differentiable_dtype(t.dtype)]
    douts = [k for k, o in enumerate(ans) if is_differentiable_dtype(o.dtype)]
    result = [None] * (1 + len(captures))
    if not dcaps:
        return result

    blocks, all_captures = branches[0], branches[3]

    def pullback(block):
        def branch_vjp():
            outs = block.clone([], all_captures, captures)
            return gradients([outs[k] for k in douts], [captures[c] for c in dcaps],
                             grad_ys=[g[k] for k in douts], stop_gradients=list(captures),
                             unconnected_gradients="zero")
        return branch_vjp

    grads = cond(pred, pullback(blocks[0]), pullback(blocks[1]))
    for i, c in enumerate(dcaps):
        result[1 + c] = grads[i]
    return result


def _cond_shape(pred, *captures, branches, **_):
    return branches[2]


def _cond_jvp(tangents, ans, pred, *captures, branches, **_):
    blocks, all_captures = branches[0], branches[3]
    douts = [k for k, o in enumerate(ans) if is_differentiable_dtype(o.dtype)]
    cap_tangents = list(tangents[1:])
    if not douts:
        return tuple([None] * len(ans))

    def pushforward(block):
        def branch_jvp():
            outs, out_tangents = block.clone([], all_captures, captures, tangents=cap_tangents)
            return [out_tangents[k] if out_tangents[k] is not None else zeros_like(outs[k])
                    for k in douts]
        return branch_jvp

    pushed = cond(pred, pushforward(blocks[0]), pushforward(blocks[1]))
    result = [None] * len(ans)
    for i, k in enumerate(douts):
        result[k] = pushed[i]
    return tuple(result)


def _written_captures(blocks, captures):
    """The positions among a cond node's inputs (the predicate, then ``captures``) of the
    captures that an op of a branch writes in place (a TensorArray written in a branch)."""
    position = {id(c): 1 + k for k, c in enumerate(captures)}
    written = set()
    for block in blocks:
        for node in block.nodes:
            rule = WRITES_IN_PLACE.get(node.prim.name)
            for i in rule(node.params) if rule is not None else ():
                if id(node.inputs[i]) in position:
                    written.add(position[id(node.inputs[i])])
    return frozenset(written)


_cond = primitive("cond", _cond_forward, vjp=_cond_vjp, jvp=_cond_jvp, multiple_results=True,
                  shape_rule=_cond_shape)
WRITES_IN_PLACE["cond"] = lambda params: params["branches"][1]
PASS_THROUGH.update(("while", "cond"))  # captures reach the blocks' ops as they are


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (TensorFlow's ``tf.cond``).

    In eager mode, or when ``pred`` is a Python bool or a concrete tensor, only the chosen
    branch runs. With a symbolic ``pred`` both branches are traced, must return the same
    structure and dtypes, and one ``cond`` node picks at run time; gradients flow into the
    tensors the branches read.

    Args:
        pred: a boolean scalar (tensor or Python bool).
        true_fn, false_fn: callables without arguments returning tensors (any structure).
    Returns:
        The chosen branch's results.
    Raises:
        TypeError: a branch is not callable, or the branches' dtypes differ.
        ValueError: the branches return different structures.

    >>> import hessgrad as hg
    >>> with hg.Graph().as_default() as g:
    ...     x = hg.placeholder("float64", shape=())
    ...     y = hg.cond(x > 0, lambda: x * x, lambda: -x)
    ...     (dy,) = hg.gradients(y, [x])
    >>> [float(v) for v in g.run([y, dy], {x: 3.0})], float(g.run(dy, {x: -1.0}))
    ([9.0, 6.0], -1.0)
    """
    del name
    if not callable(true_fn):
        raise TypeError(f"cond: true_fn must be callable, got {true_fn!r}")
    if not callable(false_fn):
        raise TypeError(f"cond: false_fn must be callable, got {false_fn!r}")
    graph = get_default_graph()
    if isinstance(pred, Variable) and graph is not None:
        pred = graph.read_variable(pred)  # decided when the graph runs, as any read
    symbolic = isinstance(pred, Tensor) and pred._value is None and not isinstance(pred, Variable)
    if not symbolic:
        return true_fn() if bool(pred) else false_fn()
    if pred.dtype != np.bool_ or (pred.shape is not None and pred.shape != ()):
        raise TypeError(f"cond: pred must be a boolean scalar, got dtype {pred.dtype} and "
                        f"shape {pred.shape}")
    graph = graph or pred.graph
    structures, kinds = {}, {}

    def flat_branch(fn, which):
        def run():  # a TensorArray result is its flow tensors (buffer, and size if dynamic)
            out = fn()
            structures[which] = out
            flat, kinds[which] = _to_flat(flatten(out), "cond")
            return flat
        return run

    true_flat, false_flat = flat_branch(true_fn, "true_fn"), flat_branch(false_fn, "false_fn")
    t_block = _Block(graph, lambda _: true_flat(), [], graph.unique_name("cond/true"))
    f_block = _Block(graph, lambda _: false_flat(), [], graph.unique_name("cond/false"))
    if _describe(structures["true_fn"]) != _describe(structures["false_fn"]):
        raise ValueError(f"cond: true_fn and false_fn must return the same structure: true_fn "
                         f"returned {_describe(structures['true_fn'])}, false_fn returned "
                         f"{_describe(structures['false_fn'])}")
    avals = []
    for k, (a, b) in enumerate(zip(t_block.outputs, f_block.outputs)):
        if a.dtype != b.dtype:
            raise TypeError(f"cond: output {k} has dtype {a.dtype} in true_fn but {b.dtype} in "
                            "false_fn")
        sa, sb = a.shape, b.shape
        if sa is None or sb is None or len(sa) != len(sb):
            shape = None
        else:
            shape = tuple(x if x == y else None for x, y in zip(sa, sb))
        avals.append((shape, a.dtype))
    if not avals:
        return structures["true_fn"]
    captures = _union(t_block.captures, f_block.captures)
    structure = structures["true_fn"]
    with graph.as_default():
        outs = _cond(pred, *captures, true_plan=t_block.plan(captures),
                     false_plan=f_block.plan(captures),
                     branches=((t_block, f_block), _written_captures((t_block, f_block),
                                                                     captures), avals, captures))
    # A result both branches give as Python scalars (or weak tensors) is weak: eagerly, the
    # chosen branch's Python scalar is the result.
    t_flat, _ = _to_flat(flatten(structure), "cond")
    f_flat, _ = _to_flat(flatten(structures["false_fn"]), "cond")
    for o, a, b in zip(outs, t_flat, f_flat):
        o._weak = is_weak(a) and is_weak(b)
    return pack_as(structure, _from_flat(list(outs), kinds["true_fn"]))


# --- TensorArray ----------------------------------------------------------------------------
class TensorArray:
    """A list of same-shaped tensors written and read by index, usable in loops (TensorFlow's
    ``tf.TensorArray``). ``write``, ``scatter`` and ``unstack`` return the new TensorArray;
    use it instead of the old one.

    Eagerly it is a Python list of tensors (differentiable through ``stack``). In graph mode
    it is one buffer tensor written in place; see the module docstring for the rules.

    Args:
        dtype: element dtype.
        size: number of elements (an int); 0 by default.
        dynamic_size: allow writes past ``size`` (the array grows).
        clear_after_read: accepted for compatibility (reads never clear).
        element_shape: the shape of each element; needed in graph mode before the first
            write when the array enters a ``while_loop``.

    >>> import hessgrad as hg
    >>> ta = hg.TensorArray("float64", size=3)
    >>> for i in range(3):
    ...     ta = ta.write(i, hg.constant([i, i + 0.5]))
    >>> ta.stack().numpy()
    array([[0. , 0.5],
           [1. , 1.5],
           [2. , 2.5]])
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        del clear_after_read, tensor_array_name, handle, flow, colocate_with_first_write_call
        del name
        self._dtype = np.dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._element_shape = None if element_shape is None else tuple(
            None if d is None else int(d) for d in element_shape)
        n = _concrete_int(size if size is not None else 0, "TensorArray: size")
        if n < 0:
            raise ValueError(f"TensorArray: size must be >= 0, got {n}")
        self._graph = get_default_graph()
        self._items = None   # eager: list of tensors (None where unwritten)
        self._buf = None     # graph: the buffer tensor
        self._n = n          # graph: static size (int) or, when dynamic, a size tensor
        self._size0 = n
        if self._graph is None:
            self._items = [None] * n
        else:
            if self._dynamic:
                self._n = constant(n, dtype=np.int64)
            if self._full_shape() is not None:
                self._buf = tensor_array_buffer(shape=(n,) + self._element_shape,
                                                dtype=self._dtype)

    def _full_shape(self):
        es = self._element_shape
        return None if es is None or None in es else es

    def _copy(self, **changes):
        new = object.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new

    # --- static facts --------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._element_shape

    @property
    def dynamic_size(self):
        return self._dynamic

    def __repr__(self):
        mode = "eager" if self._graph is None else "graph"
        return f"<hessgrad.TensorArray {mode} dtype={self._dtype} " \
               f"element_shape={self._element_shape}>"

    # --- loop plumbing (graph mode) ---------------------------------------------------------
    def _flows(self, what):
        if self._graph is None:
            raise TypeError(f"{what}: an eager TensorArray cannot enter a graph-mode loop; "
                            "create it inside the graph")
        if self._buf is None:
            raise ValueError(f"{what}: TensorArray has no element_shape yet; pass a fully "
                             "known element_shape (or write once) before the loop")
        return [self._buf, self._n] if self._dynamic else [self._buf]

    def _invariants(self):
        shape = tuple(self._buf.shape)
        if self._dynamic:  # the buffer grows: its length is not a loop invariant
            return [(None,) + shape[1:], ()]
        return [shape]

    def _with_flows(self, flows):
        if self._dynamic:
            return self._copy(_buf=flows[0], _n=flows[1])
        return self._copy(_buf=flows[0])

    def _check_value(self, value, lead, what):
        value = convert_to_tensor(value, dtype=self._dtype)
        shape = value.shape
        if shape is not None:
            shape = tuple(shape)[lead:]
            es = self._element_shape
            if es is not None and self._infer_shape and not _compatible(shape, es):
                raise ValueError(f"TensorArray.{what}: value of element shape {shape} is not "
                                 f"compatible with the array's element shape {es}")
        return value, shape

    # --- API -----------------------------------------------------------------------------
    def write(self, index, value, name=None):
        """The TensorArray with ``value`` written at ``index``."""
        del name
        value, shape = self._check_value(value, 0, "write")
        if self._graph is None:
            return self._eager_put([int(index)], [value], shape, "write")
        return self._graph_write(index, value, shape, 0)

    def _eager_put(self, indices, values, shape, what):
        """The eager TensorArray with ``values`` at ``indices`` (one copy of the list)."""
        items = list(self._items)
        for i, value in zip(indices, values):
            if i < 0 or (i >= len(items) and not self._dynamic):
                raise IndexError(f"TensorArray.{what}: index {i} is out of range for a "
                                 f"TensorArray of size {len(items)}")
            items.extend([None] * (i + 1 - len(items)))
            items[i] = value
        es = self._element_shape if self._element_shape is not None else shape
        return self._copy(_items=items, _element_shape=es)

    def _graph_write(self, index, value, shape, lead):
        new = self
        if new._buf is None:
            if shape is None or None in shape:
                raise ValueError("TensorArray.write: the element shape must be known in graph "
                                 "mode; pass element_shape")
            new = self._copy(_element_shape=shape)
            new._buf = tensor_array_buffer(shape=(self._initial_rows(),) + shape,
                                           dtype=self._dtype)
        index = convert_to_tensor(index) if not isinstance(index, (int, np.integer)) else index
        buf = tensor_array_write(new._buf, index, value, dynamic=self._dynamic)
        n = new._n
        if self._dynamic:
            top = add(reduce_max_int(index), 1)
            n = maximum(n, top)
        return new._copy(_buf=buf, _n=n)

    def _initial_rows(self):
        return self._size0

    def read(self, index, name=None):
        """The element at ``index``."""
        del name
        if self._graph is None:
            i = int(index)
            if not 0 <= i < len(self._items):
                raise IndexError(f"TensorArray.read: index {i} is out of range for a "
                                 f"TensorArray of size {len(self._items)}")
            return self._eager_item(i, "read")
        self._require_buffer("read")
        return tensor_array_read(self._buf, index)

    def _eager_item(self, i, what):
        item = self._items[i]
        if item is None:
            if self._full_shape() is None:
                raise ValueError(f"TensorArray.{what}: element {i} was never written and the "
                                 "element shape is unknown")
            return zeros(shape=self._full_shape(), dtype=self._dtype)
        return item

    def _require_buffer(self, what):
        if self._buf is None:
            raise ValueError(f"TensorArray.{what}: nothing was written and element_shape is "
                             "unknown")

    def stack(self, name=None):
        """All elements stacked along a new first axis."""
        del name
        if self._graph is None:
            if not self._items:
                es = self._full_shape()
                return zeros(shape=(0,) + (es or ()), dtype=self._dtype)
            return stack(*[self._eager_item(i, "stack") for i in range(len(self._items))],
                         axis=0)
        self._require_buffer("stack")
        return tensor_array_read(self._buf, self._n, prefix=True)

    def gather(self, indices, name=None):
        """The elements at ``indices``, stacked."""
        del name
        if self._graph is None:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            parts = [self.read(int(i)) for i in idx.reshape(-1)]
            if not parts:
                return zeros(shape=(0,) + (self._full_shape() or ()), dtype=self._dtype)
            return stack(*parts, axis=0)
        self._require_buffer("gather")
        return tensor_array_read(self._buf, convert_to_tensor(indices))

    def scatter(self, indices, value, name=None):
        """The TensorArray with ``value[k]`` written at ``indices[k]``."""
        del name
        value, shape = self._check_value(value, 1, "scatter")
        if self._graph is None:
            idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
            idx = idx.reshape(-1)
            if value.shape[0] != idx.size:
                raise ValueError(f"TensorArray.scatter: {idx.size} indices but value has "
                                 f"shape {value.shape}")
            # One unstack op, not a slice per row: its gradient is one stack of the rows'
            # gradients, where a slice per row made a full-size gradient each (O(rows^2)).
            rows = unstack(value, axis=0) if idx.size else ()
            return self._eager_put(idx.tolist(), rows, shape, "scatter")
        return self._graph_write(convert_to_tensor(np.asarray(indices, dtype=np.int64)
                                                   if not isinstance(indices, Tensor)
                                                   else indices), value, shape, 1)

    def unstack(self, value, name=None):
        """The TensorArray holding the rows of ``value`` at 0, 1, ..."""
        del name
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape is None or value.shape[0] is None:
            raise ValueError("TensorArray.unstack: the first dimension of value must be known")
        return self.scatter(np.arange(value.shape[0]), value)

    def size(self, name=None):
        """The number of elements (an int32 tensor)."""
        del name
        if self._graph is None:
            return constant(len(self._items), dtype=np.int32)
        if self._dynamic:
            return self._n
        return constant(self._n, dtype=np.int32)

    def concat(self, name=None):
        """All elements concatenated along their first axis."""
        del name
        if self._graph is None:
            items = [self._eager_item(i, "concat") for i in range(len(self._items))]
            if not items:
                return zeros(shape=(0,) + (self._full_shape() or ())[1:], dtype=self._dtype)
            return concatenate(*items, axis=0)
        stacked = self.stack()
        es = self._element_shape
        return reshape(stacked, shape=(-1,) + tuple(es[1:]))

    def identity(self):
        return self

    def close(self, name=None):
        return None


def reduce_max_int(index):
    """The largest of an integer index (scalar or 1-D) -- for a dynamic TensorArray's size."""
    from .reduction import max as reduce_max
    if isinstance(index, Tensor):
        return reduce_max(index) if index.shape != () else index
    return int(np.max(index))


__all__ = ["while_loop", "cond", "TensorArray"]


# The batching rules of while, cond and the TensorArray ops (they need the primitives above).
from . import control_flow_batching  # noqa: E402,F401
