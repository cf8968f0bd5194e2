"""Batched programs: an optimized program rewritten to carry a leading batch axis of length k.

Dense Hessians push blocks of k basis tangents through a traced Hessian-vector product
(``ConcreteFunction.run_batched``). :func:`batch_program` rewrites the *optimized* program
once per (k, which feeds are batched): values that depend on a batched feed get the shape
``(k,) + shape``, and each op that reads one is replaced by the ops its primitive's batching
rule binds (:mod:`hessgrad.engine.batching`), traced once on placeholders of the batched
shapes -- elementwise ops stay elementwise (fusion then turns their trees into loops over the
whole batch), a reduction gets its axes shifted, a matrix-vector product becomes a
matrix-matrix one. An op whose primitive batches on arrays only (``batch_values``: control
flow, matmul's gather of unit columns) or has no rule, or whose shapes are known only at run
time, calls the batching interpreter at run time instead. The result goes through the same
fusion and code generation as an unbatched program.
"""

from ..engine.batching import on_values, per_member
from ..engine.graph import CONST, PLACEHOLDER, Graph
from ..engine.registry import PRIMITIVES
from ..engine.tensor import Tensor
from .ir import Op, derive, known


class Unbatchable(Exception):
    """The program cannot be rewritten (kept for callers that fall back to the interpreter)."""


def _behind_batch(index):
    """A basic index of the core axes applied behind the batch axis."""
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))


class BatchedProgram:
    """The rewritten program plus which fetches are batched (the others are broadcast)."""

    def __init__(self, prog, fetch_batched):
        self.prog = prog
        self.fetch_batched = fetch_batched


def batch_program(prog, ops, flags, k):
    """A copy of ``prog`` with ``ops`` (its optimized ops, before fusion) batched: feed ``j``
    carries a leading axis of length ``k`` where ``flags[j]``."""
    batched = {s for s, flag in zip(prog.feeds, flags) if flag}
    out = derive(prog, prog.feeds, [], prog.fetches,
                 info={s: ((k,) + tuple(prog.shape(s)), prog.dtype(s)) for s in batched})
    new_ops = []
    for op in ops:
        arg_flags = [a in batched for a in op.args]
        if not any(arg_flags):
            new_ops.append(op)
            continue
        for o in op.outs:
            shape, dtype = prog.info[o]
            out.info[o] = (None if shape is None else (k,) + tuple(shape), dtype)
            batched.add(o)
        new_ops.extend(_batched_op(out, op, arg_flags, k))
    out.ops = new_ops
    return BatchedProgram(out, [v in batched for v in prog.fetches])


def _batched_op(prog, op, flags, k):
    """The ops that compute ``op`` on its batched operands (``prog.info`` has their batched
    shapes), writing ``op``'s outputs."""
    if op.name == "accumulate":  # the accumulate pass's op: unbatched terms broadcast
        params = {**op.params, "shape": (k,) + tuple(op.params["shape"]),
                  "indices": tuple(None if i is None else _behind_batch(i)  # None: all
                                   for i in op.params["indices"])}
        return [Op(op.name, op.fn, op.args, params, op.outs, False, op.node, op.nodes)]
    prim = PRIMITIVES.get(op.name)
    avals = [prog.info.get(a, (None, None)) for a in op.args]
    # per member: one op looping at run time, not k ops spliced in
    if prim is None or prim.batch in (None, per_member) or prim.batch_values is not None or \
            not all(known(shape) for shape, _ in avals) or \
            not all(known(prog.shape(o)) for o in op.outs):
        return [_at_run_time(prim or op, op, flags, k)]
    return _traced(prog, prim, op, flags, avals, k)


def _at_run_time(prim, op, flags, k):
    """``op`` batched by the interpreter at run time (the primitive's rule on arrays)."""
    def batched(*args, **params):
        outs = on_values(prim, args, flags, params, k)
        return outs if prim.multiple_results else outs[0]
    return Op("batched:" + op.name, batched, op.args, op.params, op.outs, op.multi, op.node,
              op.nodes, extra={"batched": flags})


def _traced(prog, prim, op, flags, avals, k):
    """The ops ``prim``'s batching rule binds, traced on placeholders of the operands'
    batched shapes (constants as they are), spliced in with fresh values in between."""
    graph = Graph()
    value_of = {}  # id(placeholder) -> the program's value it stands for
    with graph.as_default():
        args = []
        for a, (shape, dtype) in zip(op.args, avals):
            if a in prog.consts:
                args.append(prog.consts[a])
                continue
            p = graph.placeholder(dtype, shape)
            value_of[id(p)] = a
            args.append(p)
        result = prim.batch(prim, args, flags, op.params, k)
    results = list(result) if prim.multiple_results else [result]
    final = {id(r): o for r, o in zip(results, op.outs) if isinstance(r, Tensor)}
    emitted = []
    for node in graph.nodes:
        if node.prim is PLACEHOLDER:
            continue
        if node.prim is CONST:
            value_of[id(node.outputs[0])] = prog.new_const(node.params["value"])
            continue
        args = [value_of[id(a)] if isinstance(a, Tensor) else prog.new_const(a)
                for a in node.inputs]
        outs = []
        for o in node.outputs:
            v = final.pop(id(o), None)
            if v is None:
                v = prog.new_value(o.shape, o.dtype)
            value_of[id(o)] = v
            outs.append(v)
        emitted.append(Op(node.prim.name, node.prim.forward, args, node.params, tuple(outs),
                          node.prim.multiple_results, op.node, op.nodes))
    for r, o in zip(results, op.outs):  # a result the rule passed on unchanged (an input)
        if id(r) in final or not isinstance(r, Tensor):
            source = value_of[id(r)] if isinstance(r, Tensor) else prog.new_const(r)
            emitted.append(Op("batched:alias", _alias, [source], {}, (o,), False, op.node,
                              op.nodes))
    return emitted


def _alias(x):
    return x
