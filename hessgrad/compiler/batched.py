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
from ..ops.batching import elementwise as _elementwise_rule
from .ir import Op, known


class Unbatchable(Exception):
    """The program cannot be rewritten (an output shape is only known at run time)."""


def _accumulate_batched(*terms, flags, shape, dtype, indices):
    """The batched form of passes._accumulate: the slices sit behind the batch axis."""
    k = next(len(t) for t, f in zip(terms, flags) if f)
    out = np.zeros((k,) + tuple(shape), dtype)
    for term, flag, index in zip(terms, flags, indices):
        parts = () if index is None else (index if isinstance(index, tuple) else (index,))
        target = (slice(None),) + parts
        if not flag and np.ndim(term):
            term = term[None]  # the same term for every batch member
        out[target] += term
    return out


def _reshape(a, shape):
    return np.reshape(a, shape)


def _rule_call(rule, forward, flags):
    def batched(*args, **params):
        return rule(forward, args, flags, **params)
    return batched


class _FeedInfo:
    """What code generation reads from ``program.plan``: feed dtypes, shapes and names."""

    def __init__(self, plan, shapes):
        self.feed_dtypes = plan.feed_dtypes
        self.feed_names = plan.feed_names
        self.feed_shapes = shapes


class BatchedProgram:
    """The rewritten program plus which fetches are batched (the others are broadcast)."""

    def __init__(self, prog, fetch_batched):
        self.prog = prog
        self.fetch_batched = fetch_batched


def batch_program(prog, ops, flags, k):
    """A copy of ``prog`` with ``ops`` (its optimized ops, before fusion) batched: feed ``j``
    carries a leading axis of length ``k`` where ``flags[j]``."""
    out = prog.__class__.__new__(prog.__class__)
    out.__dict__.update(prog.__dict__)
    out.info = dict(prog.info)
    out.consts = dict(prog.consts)
    batched = set()
    shapes = []
    for s, flag, shape in zip(prog.feeds, flags, prog.plan.feed_shapes):
        if flag:
            batched.add(s)
            out.info[s] = ((k,) + tuple(shape), prog.info[s][1])
            shapes.append((k,) + tuple(shape))
        else:
            shapes.append(shape)
    out.plan = _FeedInfo(prog.plan, shapes)
    new_ops = []
    for op in ops:
        arg_flags = [a in batched for a in op.args]
        if not any(arg_flags):
            new_ops.append(op)
            continue
        for o in op.outs:
            shape, dtype = prog.info[o]
            if not known(shape):
                raise Unbatchable(f"{op.name} has an output of unknown shape")
            out.info[o] = ((k,) + tuple(shape), dtype)
            batched.add(o)
        prim = PRIMITIVES.get(op.name)
        if prim is not None and prim.batch_rule is _elementwise_rule:
            new_ops.append(_elementwise(out, op, arg_flags, new_ops))
        elif op.name == "accumulate":
            new_ops.append(Op("batched:accumulate", _accumulate_batched, op.args,
                              {"flags": tuple(arg_flags), **op.params}, op.outs, False,
                              op.node, op.nodes))
        else:
            prim = prim or get(op.name)
            rule = prim.batch_rule or _batch_by_loop(prim.multiple_results)
            new_ops.append(Op("batched:" + op.name, _rule_call(rule, op.fn, arg_flags),
                              op.args, op.params, op.outs, op.multi, op.node, op.nodes))
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
