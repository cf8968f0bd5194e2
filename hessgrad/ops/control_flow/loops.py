"""``while_loop`` (TensorFlow's ``tf.while_loop``): a Python loop eagerly, one ``while`` node
in graph mode.

The node holds plans of its traced condition and body (:mod:`.blocks`) and replays them.
Gradients: its VJP is a reverse ``while_loop``: the forward node keeps each iteration's loop
state in hidden history outputs (switched on only when a gradient is built, so ``hessians``
keeps no history), and the reverse body clones the body block at the saved state and pulls the
cotangents back through it with ``gradients``. Since that VJP is itself a ``while`` node with
a VJP, loops can be differentiated again (second order). Forward mode: the JVP is one loop
carrying the state and its tangent (the body block cloned with tangents pushed through each
node); it shares the forward node's history switch, so forward-over-reverse HVPs also get the
tangents of the history.

The reverse loop of a loop that writes or reads a TensorArray carries the buffer's cotangent;
it takes a written row out of it (``tensor_array_pop``) and adds a read's row into it
(``tensor_array_accumulate``) in place, in a copy the reverse loop owns, so that a T-step
``scan`` differentiates in O(T) rather than copying the whole buffer at each step.

A loop whose iterations are independent (``hessians``, ``map_fn``) runs them as batches of rows
(:mod:`.rows`).

On a batch (``Function.map``, batched Hessian-vector products, ``vmap``), with JAX's semantics
for batched control flow: the loop variables' batch flags are brought to a fixed point first (a
variable the body mixes with a batched one is batched from the start). A predicate that does
not depend on the batch (a fixed trip count ``i < n``: scan, map_fn, Hessian rows) runs the
loop as it would unbatched, its body on the batched state. A batched predicate batches every
variable: the body runs on the whole batch while any member's predicate holds, the others are
inactive (:mod:`.members`) and keep their state. Histories have per member the rows of its own
trip count, the rest zeros, as run member by member. Whatever cannot be batched so -- an op
that raises on the state of an inactive member, shapes that change differently between members
-- runs once per member (``engine.batching.run_members``), which is always correct.
"""

import numpy as np

from ...engine.batching import run_members
from ...engine.gradients import gradients
from ...engine.graph import get_default_graph
from ...engine.nest import flatten, pack_as
from ...engine.registry import primitive
from ...engine.tensor import Tensor, is_differentiable_dtype, shape_of
from ..core import zeros_like
from ..elementwise import add, greater, subtract
from ..patterns import dense
from .blocks import Block, Record, compatible, concrete_int, union
from .buffers import (_OWNED, tensor_array_accumulate, tensor_array_pop, tensor_array_read,
                      tensor_array_read_adjoint, tensor_array_write)
from .members import Masked, Unbatchable, active_members, batched, select
from .rows import independent_rows, run_rows
from .tensor_array import TensorArray, describe, from_flat, leaf_in_loop, to_flat


# --- batching rules (on values) ----------------------------------------------------------------
def _while_members(prim, args, flags, params):
    """The loop once per member; the histories (and grown TensorArray buffers) of members
    that ran longer are longer: shorter ones are padded with zeros, which no member reads (its
    reverse loop reads its own trip count of rows, its TensorArray its own size)."""
    n_vars, loop = params["n_vars"], params["loop"]
    outs = run_members(prim, args, flags, params, active_members())
    stacked = []
    for i, parts in enumerate(zip(*outs)):
        if parts[0] is None:  # a history nobody asked for
            stacked.append(None)
            continue
        shapes = [np.shape(p) for p in parts]
        if len(set(shapes)) > 1:
            if i < n_vars and i not in loop.buffers:
                raise ValueError(f"while_loop: on a batch (Function.map, batched products), "
                                 f"loop variable {i} ends with a shape that differs between "
                                 f"batch members ({sorted(set(shapes))}); call the function "
                                 "once per member")
            longest = max(s[0] for s in shapes)
            parts = [np.concatenate([p, np.zeros((longest - len(p),) + p.shape[1:], p.dtype)])
                     for p in parts]
        stacked.append(np.stack(parts))
    return tuple(stacked)


def _while_batch(prim, args, flags, params, k):
    """The ``while`` node on a batch: one loop for all members (see the module docstring)."""
    try:
        return _batched_loop(args, flags, k, **params)
    except Exception:  # noqa: BLE001 - per member is always correct (and re-raises real errors)
        return _while_members(prim, args, flags, params)


def _state_flags(cond_plan, body_plan, flags, n_vars):
    """The loop variables' batch flags at their fixed point, and whether the predicate is
    batched: a variable is batched when it enters batched or the body makes it so from a
    batched one, and all are when the predicate is (members then stop at different times)."""
    state, captures = list(flags[:n_vars]), list(flags[n_vars:])
    while True:
        out = body_plan.batched_fetches(state + captures)
        new = [a or b for a, b in zip(state, out)]
        if cond_plan.batched_fetches(new + captures)[0]:
            new = [True] * n_vars
        if new == state:
            return state, cond_plan.batched_fetches(state + captures)[0]
        state = new


def _batched_loop(args, flags, k, *, n_vars, cond_plan, body_plan, maximum_iterations, record,
                  loop, rows_plan=None):  # rows_plan: unused, a batch's loop steps
    buffers = loop.buffers
    state_flags, pred_batched = _state_flags(cond_plan, body_plan, flags, n_vars)
    # A buffer stays shared when only unbatched values are written into it; it is copied
    # all the same: were the batch to fall back to members, they must find it unwritten.
    state = [batched(v, k, copy=j in buffers) if f and not f0 else
             np.array(v) if j in buffers and not f else v
             for j, (v, f, f0) in enumerate(zip(args[:n_vars], state_flags, flags))]
    captures = list(args[n_vars:])
    run_flags = state_flags + list(flags[n_vars:])
    history = [] if record.on else None
    per_member = [np.shape(v)[1:] if f else np.shape(v) for v, f in zip(state, state_flags)]
    if pred_batched:
        state, count = _masked_loop(state, captures, run_flags, k, cond_plan, body_plan,
                                    maximum_iterations, buffers, history)
    else:
        state, count = _common_loop(state, captures, run_flags, k, cond_plan, body_plan,
                                    maximum_iterations, buffers, history)
        count = np.full(k, count, np.int64)
    saved = []
    for j in loop.recorded:
        if history is None:
            saved.append(None)  # nothing consumes it: no gradient was asked for
        elif not history:
            saved.append(np.zeros((k, 0) + per_member[j], np.result_type(state[j])))
        elif state_flags[j]:
            rows = np.stack([h[j] for h in history], axis=1)
            if pred_batched:  # rows past a member's own trip count: zeros, as per member
                rows[np.arange(len(history)) >= count[:, None]] = 0
            saved.append(rows)
        else:
            saved.append(batched(np.stack([h[j] for h in history]), k))
    state = [v if f else batched(v, k) for v, f in zip(state, state_flags)]
    return tuple(state) + (count,) + tuple(saved)


def _body(body_plan, state, captures, run_flags, k, buffers):
    """One run of the body; results the flags say are batched but came out unbatched (a
    variable reset to a constant) are broadcast, so that the flags hold at every iteration."""
    new, new_flags = body_plan.run_flagged(state + captures, run_flags)
    if any(nf and not f for nf, f in zip(new_flags, run_flags)):
        raise Unbatchable("the body batched a variable its flags did not")
    return [v if nf or not f else batched(v, k, copy=j in buffers)
            for j, (v, nf, f) in enumerate(zip(new, new_flags, run_flags))]


def _common_loop(state, captures, run_flags, k, cond_plan, body_plan, maximum_iterations,
                 buffers, history):
    """An unbatched predicate: every member runs the same number of iterations."""
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        (pred,), _ = cond_plan.run_flagged(state + captures, run_flags)
        if not bool(np.asarray(pred)):
            break
        if history is not None:
            history.append(state)
        state = _body(body_plan, state, captures, run_flags, k, buffers)
        count += 1
    return state, count


def _masked_loop(state, captures, run_flags, k, cond_plan, body_plan, maximum_iterations,
                 buffers, history):
    """A batched predicate (all variables batched): the body runs while any member's
    predicate holds; the others are inactive and keep their state."""
    outer = active_members()
    count = np.zeros(k, np.int64)
    while True:
        (pred,), _ = cond_plan.run_flagged(state + captures, run_flags)
        active = np.array(np.broadcast_to(np.asarray(pred, bool), (k,)))
        if maximum_iterations is not None:
            active &= count < maximum_iterations
        if outer is not None:
            active &= outer
        if not active.any():
            return state, count
        if history is not None:
            history.append(state)
        everyone = active.all()
        with Masked(None if everyone else active):
            new = _body(body_plan, state, captures, run_flags, k, buffers)
        state = new if everyone else [select(active, a, b) for a, b in zip(new, state)]
        count += active


# --- the while node ---------------------------------------------------------------------------
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
        self.rows = rows                # iterations independent: a rows.Rows, else None


def _while_forward(*values, n_vars, cond_plan, body_plan, maximum_iterations, record, loop,
                   rows_plan=None):
    state = list(values[:n_vars])
    captures = list(values[n_vars:])
    if rows_plan is not None and not record.on:  # all iterations in batches (rows.py)
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
                       tuple(leaf_in_loop(x) for x in init),
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


# The body writes the loop's TensorArray buffers in place; captures reach the blocks' ops as
# they are.
_while = primitive("while", _while_forward, vjp=_while_vjp, jvp=_while_jvp, none_grads_ok=True,
                   multiple_results=True,
                   shape_rule=lambda *inputs, loop, **params: loop.out_avals,
                   writes=lambda params: params["loop"].buffers, pass_through=True,
                   batch_values=_while_batch,
                   sparsity=dense)  # the body's graph is not walked: conservative


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
                                 f"match the structure of loop_vars {describe(loop_vars)}")
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
                         f"loop_vars is {describe(loop_vars)}, body returned {describe(out)}")


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
    max_iter = concrete_int(maximum_iterations, "while_loop: maximum_iterations")
    if max_iter is not None and max_iter < 0:
        raise ValueError(f"while_loop: maximum_iterations must be >= 0, got {max_iter}")
    leaves = [leaf_in_loop(x) for x in flatten(structure)]
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
        structure = pack_as(structure, [leaf_in_loop(x) for x in flatten(out)])
        count += 1
    return structure


def _graph_while(graph, cond, body, structure, shape_invariants, max_iter, packed, owned=()):
    leaves = flatten(structure)
    flat, kinds = to_flat(leaves, "while_loop")
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
        if not compatible(t.shape, inv):
            raise ValueError(f"while_loop: loop variable {k} has shape {t.shape}, which is not "
                             f"compatible with its shape invariant {inv}")
        avals.append((inv, t.dtype))
    buffers = {k for k, kind in enumerate(_expand_kinds(kinds)) if kind == "buffer"}

    def call(fn, state):
        return fn(*pack_as(structure, from_flat(state, kinds)))

    def cond_flat(state):
        return [call(cond, state)]

    def body_flat(state):
        out = _normalize_body_result(call(body, state), structure, packed)
        if packed:
            out = (out,)
        _check_same_structure(structure, out)
        out_flat, _ = to_flat([leaf_in_loop(x) for x in flatten(out)], "while_loop")
        return out_flat

    outs = _make_while(graph, cond_flat, body_flat, flat, avals, buffers, max_iter,
                       owned=owned)
    return pack_as(structure, from_flat(list(outs[:n_vars]), kinds))


def _make_while(graph, cond_flat, body_flat, flat, avals, buffers, max_iter, record=None,
                owned=()):
    """Trace the cond and body blocks (functions of flat state lists) and add the ``while``
    node; returns all its outputs (final state, trip count, histories). ``owned``: the
    variables the body updates in place (see ``_OWNED``), known once the body is traced."""
    n_vars = len(flat)
    cond_block = Block(graph, cond_flat, avals, graph.unique_name("while/cond"))
    pred = cond_block.outputs[0]
    if pred.dtype != np.bool_ or (pred.shape is not None and pred.shape != ()):
        raise TypeError(f"while_loop: cond must return a boolean scalar, got dtype {pred.dtype} "
                        f"and shape {pred.shape}")
    body_block = Block(graph, body_flat, avals, graph.unique_name("while/body"))
    for k, (o, (inv, dtype)) in enumerate(zip(body_block.outputs, avals)):
        if o.dtype != dtype:
            raise TypeError(f"while_loop: loop variable {k} has dtype {dtype} on entry but "
                            f"{o.dtype} after one iteration of body")
        if not compatible(o.shape, inv):
            raise ValueError(f"while_loop: loop variable {k} has shape {inv} on entry but "
                             f"{o.shape} after one iteration of body; pass shape_invariants "
                             "with None for the dimensions that change")
    captures = union(cond_block.captures, body_block.captures)
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
                      record=record or Record(), loop=loop, **extra)


def _expand_kinds(kinds):
    out = []
    for kind in kinds:
        if kind is None:
            out.append("tensor")
        else:
            out.extend(["buffer"] + ["size"] * (len(kind._flows("while_loop")) - 1))
    return out
