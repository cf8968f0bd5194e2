"""Batched programs: an optimized program rewritten to carry a leading batch axis of length k.

Dense Hessians push blocks of k basis tangents through a traced Hessian-vector product
(``ConcreteFunction.run_batched``). Instead of interpreting the unoptimized plan with batching
rules, :func:`batch_program` rewrites the *optimized* program once per (k, which feeds are
batched): values that depend on a batched feed get the shape ``(k,) + shape``; elementwise ops
keep their numpy function (broadcasting lines the core axes up; a batched operand of lower
rank gets a reshape), so fusion turns their trees into Numba loops over the whole batch;
every other op becomes a call of its primitive's batching rule. The result goes through the
same fusion and code generation as an unbatched program.
"""

import numpy as np

from ..engine.graph import _batch_by_loop
from ..engine.registry import PRIMITIVES, get
from ..ops.batching import elementwise as _elementwise_rule, shift_axis
from ..ops.core import _is_basic_index
from .ir import Op, derive, known


class Unbatchable(Exception):
    """The program cannot be rewritten (an output shape is only known at run time)."""


REDUCTIONS = {"sum", "mean", "max", "min", "prod", "logsumexp"}


def _behind_batch(index):
    """A basic index of the core axes applied behind the batch axis."""
    return (slice(None),) + (index if isinstance(index, tuple) else (index,))


def _same_op_params(op, core_ndim, k):
    """Params under which ``op`` computes its batched result directly when its one operand
    carries the batch axis in front (numpy then runs one call, and fusion and code generation
    see an ordinary op), or None when only the batching rule can."""
    p = op.params
    if op.name == "getitem" and _is_basic_index(p["index"]):
        return {**p, "index": _behind_batch(p["index"])}
    if op.name == "reshape":
        shape = p["shape"]
        return {**p, "shape": (k,) + ((shape,) if isinstance(shape, (int, np.integer))
                                      else tuple(shape))}
    if op.name == "transpose":
        axes = p.get("axes")
        core = reversed(range(core_ndim)) if axes is None else (a % core_ndim for a in axes)
        return {**p, "axes": (0,) + tuple(a + 1 for a in core)}
    if op.name in REDUCTIONS:
        return {**p, "axis": shift_axis(p.get("axis"), core_ndim)}
    return None


def _reshape(a, shape):
    return np.reshape(a, shape)


def _rule_call(rule, forward, flags):
    def batched(*args, **params):
        return rule(forward, args, flags, **params)
    return batched


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
        prim = PRIMITIVES.get(op.name)
        # Rewrites need the shapes; a batching rule does not (a while loop's histories have
        # run-time lengths, and the ops that read them are in its blocks)
        rewritten = op.name == "accumulate" or prim is not None and \
            prim.batch_rule is _elementwise_rule or len(op.args) == 1 and \
            _same_op_params(op, len(prog.info[op.args[0]][0] or ()), k) is not None
        if rewritten and not all(known(prog.info[v][0]) for v in (*op.args, *op.outs)):
            raise Unbatchable(f"{op.name} has an operand of unknown shape")
        if prim is not None and prim.batch_rule is _elementwise_rule:
            new_ops.append(_elementwise(out, op, arg_flags, new_ops))
        elif op.name == "accumulate":  # unbatched terms broadcast over the batch
            params = {**op.params, "shape": (k,) + tuple(op.params["shape"]),
                      "indices": tuple(None if i is None else _behind_batch(i)  # None: all
                                       for i in op.params["indices"])}
            new_ops.append(Op(op.name, op.fn, op.args, params, op.outs, False, op.node,
                              op.nodes))
        elif len(op.args) == 1 and (params := _same_op_params(
                op, len(prog.info[op.args[0]][0]), k)) is not None:
            new_ops.append(Op(op.name, op.fn, op.args, params, op.outs, op.multi, op.node,
                              op.nodes))
        else:
            prim = prim or get(op.name)
            rule = prim.batch_rule or _batch_by_loop(prim)
            new_ops.append(Op("batched:" + op.name, _rule_call(rule, op.fn, arg_flags),
                              op.args, op.params, op.outs, op.multi, op.node, op.nodes,
                              extra={"batched": arg_flags}))
    out.ops = new_ops
    return BatchedProgram(out, [v in batched for v in prog.fetches])


def _elementwise(prog, op, arg_flags, emitted):
    """The op itself over batched operands; a batched operand of lower core rank than the
    result is reshaped so that its core axes line up behind the batch axis."""
    rank = len(prog.info[op.outs[0]][0]) - 1
    args = list(op.args)
    for j, (a, flag) in enumerate(zip(args, arg_flags)):
        shape, dtype = prog.info[a]
        if flag and len(shape) - 1 < rank:
            aligned = (shape[0],) + (1,) * (rank - len(shape) + 1) + tuple(shape[1:])
            v = prog.new_value(aligned, dtype)
            emitted.append(Op("batched:align", _reshape, [a], {"shape": aligned}, (v,),
                              False, op.node, op.nodes))
            args[j] = v
    if args == op.args:
        return op
    return Op(op.name, op.fn, args, op.params, op.outs, op.multi, op.node, op.nodes)
