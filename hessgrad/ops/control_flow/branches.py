"""``cond`` (TensorFlow's ``tf.cond``): the chosen branch eagerly, one ``cond`` node in graph
mode, which holds plans of both traced branches (:mod:`.blocks`) and runs the one its
predicate picks. Its VJP is a ``cond`` of the branches' VJPs (each branch block cloned and
differentiated with ``gradients``), its JVP a ``cond`` of their JVPs.

On a batch: an unbatched predicate runs one branch on the batch. A batched one runs each branch
with the members that take the other inactive (:mod:`.members`), and selects per member (a
branch that every active member takes runs alone).
"""

import numpy as np

from ...engine.batching import run_members
from ...engine.gradients import gradients
from ...engine.graph import get_default_graph, is_weak
from ...engine.nest import flatten, pack_as
from ...engine.registry import primitive
from ...engine.tensor import Tensor, Variable, is_differentiable_dtype
from ..core import zeros_like
from ..patterns import dense
from .blocks import Block, union
from .members import Masked, active_members, batched, select
from .tensor_array import describe, from_flat, to_flat


# --- batching rule (on values) -----------------------------------------------------------------
def _cond_batch(prim, args, flags, params, k):
    """The ``cond`` node on a batch: one branch, or both and a select per member."""
    try:
        return _batched_cond(args, flags, k, **params)
    except Exception:  # noqa: BLE001 - per member is always correct (and re-raises real errors)
        outs = run_members(prim, args, flags, params, active_members())
        return tuple(np.stack(parts) for parts in zip(*outs))


def _branch(plan, captures, flags, k):
    outs, out_flags = plan.run_flagged(captures, flags)
    return [o if f else batched(o, k) for o, f in zip(outs, out_flags)]


def _batched_cond(args, flags, k, *, true_plan, false_plan, branches):
    pred, captures, cap_flags = args[0], list(args[1:]), list(flags[1:])
    if not flags[0]:
        return tuple(_branch(true_plan if bool(np.asarray(pred)) else false_plan, captures,
                             cap_flags, k))
    pred = np.asarray(pred, bool)
    outer = active_members()
    live = pred if outer is None else pred[outer]
    if live.all():  # every member that runs takes one branch: it alone runs
        return tuple(_branch(true_plan, captures, cap_flags, k))
    if not live.any():
        return tuple(_branch(false_plan, captures, cap_flags, k))
    # Both branches write the TensorArrays they capture, each for its own members: a shared
    # buffer gets one row per member first.
    for position in branches[1]:
        c = position - 1
        if not cap_flags[c]:
            captures[c], cap_flags[c] = batched(captures[c], k, copy=True), True
    on_true = pred if outer is None else pred & outer
    on_false = ~pred if outer is None else ~pred & outer
    with Masked(on_true):
        t = _branch(true_plan, captures, cap_flags, k)
    with Masked(on_false):
        f = _branch(false_plan, captures, cap_flags, k)
    return tuple(select(pred, a, b) for a, b in zip(t, f))


# --- the cond node -------------------------------------------------------------------------------
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
            for i in node.prim.writes(node.params) if node.prim.writes else ():
                if id(node.inputs[i]) in position:
                    written.add(position[id(node.inputs[i])])
    return frozenset(written)


# A branch writes the TensorArrays it captures in place; captures reach the branches' ops as
# they are.
_cond = primitive("cond", _cond_forward, vjp=_cond_vjp, jvp=_cond_jvp, multiple_results=True,
                  shape_rule=_cond_shape, writes=lambda params: params["branches"][1],
                  pass_through=True, batch_values=_cond_batch,
                  sparsity=dense)  # the branches' graphs are not walked: conservative


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
            flat, kinds[which] = to_flat(flatten(out), "cond")
            return flat
        return run

    true_flat, false_flat = flat_branch(true_fn, "true_fn"), flat_branch(false_fn, "false_fn")
    t_block = Block(graph, lambda _: true_flat(), [], graph.unique_name("cond/true"))
    f_block = Block(graph, lambda _: false_flat(), [], graph.unique_name("cond/false"))
    if describe(structures["true_fn"]) != describe(structures["false_fn"]):
        raise ValueError(f"cond: true_fn and false_fn must return the same structure: true_fn "
                         f"returned {describe(structures['true_fn'])}, false_fn returned "
                         f"{describe(structures['false_fn'])}")
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
    captures = union(t_block.captures, f_block.captures)
    structure = structures["true_fn"]
    with graph.as_default():
        outs = _cond(pred, *captures, true_plan=t_block.plan(captures),
                     false_plan=f_block.plan(captures),
                     branches=((t_block, f_block), _written_captures((t_block, f_block),
                                                                     captures), avals, captures))
    # A result both branches give as Python scalars (or weak tensors) is weak: eagerly, the
    # chosen branch's Python scalar is the result.
    t_flat, _ = to_flat(flatten(structure), "cond")
    f_flat, _ = to_flat(flatten(structures["false_fn"]), "cond")
    for o, a, b in zip(outs, t_flat, f_flat):
        o._weak = is_weak(a) and is_weak(b)
    return pack_as(structure, from_flat(list(outs), kinds["true_fn"]))
