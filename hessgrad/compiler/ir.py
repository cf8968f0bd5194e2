"""The compiler's program: a Plan's dynamic steps as ops over numbered values.

A value is an int. Constants (folded by the Plan, Python numbers, arrays) live in
``Program.consts``; everything else is a feed, a Variable read, or an op output. The static
shape and dtype of every value known at trace time is in ``Program.info``. An op is its
primitive (what the compiler knows of it: ``prim.lowering``, ``prim.algebra``) or an
:class:`Internal` op the compiler made, applied to values.
"""

import numpy as np

from ..engine.facts import NO_ALGEBRA, NO_LOWERING
from ..engine.graph_text import aval_text, param_text


class Internal:
    """An op the compiler makes (a fused kernel, an in-place accumulation, ...), with the
    facts a primitive declares: ``group`` when it stands for several graph nodes (their names
    are listed in ``describe``), ``batch(prog, op, k)`` when a batched program rewrites it."""

    effects, writes, multiple_results, algebra = False, None, False, NO_ALGEBRA
    rewrites = ()

    def __init__(self, name, lowering=NO_LOWERING, group=False, batch=None, of=None):
        self.name = name
        self.lowering = lowering
        self.group = group
        self.batch = batch
        self.of = of  # the primitive it runs, if any (a batched run of it)

    def __repr__(self):
        return f"<compiler op {self.name}>"


class Op:
    """``outs = fn(*args, **params)``: primitive (or :class:`Internal` op) ``prim`` applied.

    ``node`` is the graph node it came from (for error notes), ``nodes`` every graph node it
    stands for. Rewrites build ops with :meth:`replace`, which copies what they do not change.
    """

    __slots__ = ("prim", "fn", "args", "params", "outs", "multi", "node", "nodes", "extra")

    def __init__(self, prim, fn, args, params, outs, multi, node, nodes=None, extra=None):
        self.prim = prim
        self.fn = fn
        self.args = list(args)
        self.params = params
        self.outs = tuple(outs)
        self.multi = multi
        self.node = node
        self.nodes = nodes if nodes is not None else ([node] if node is not None else [])
        self.extra = extra

    @property
    def name(self):
        return self.prim.name

    def replace(self, **changes):
        """A copy of this op with ``changes`` (slot -> value). A new ``prim`` brings its own
        forward and arity unless they are given; nothing else is ever lost."""
        prim = changes.get("prim")
        if prim is not None:
            if "fn" not in changes:
                changes["fn"] = prim.forward
            changes.setdefault("multi", prim.multiple_results)
        out = Op.__new__(Op)
        for slot in Op.__slots__:
            setattr(out, slot, changes.pop(slot) if slot in changes else getattr(self, slot))
        if changes:
            raise TypeError(f"Op.replace: no slots {sorted(changes)}")
        out.args, out.outs, out.nodes = list(out.args), tuple(out.outs), list(out.nodes)
        return out

    def __repr__(self):
        return f"<Op {self.name} {self.args} -> {self.outs}>"


class Program:
    """Ops in execution order computing ``fetches`` from ``feeds`` (and Variables)."""

    def __init__(self, plan):
        self.plan = plan
        self.feeds = list(plan.feed_slots)
        self.variables = list(plan.variables)
        dynamic = set(self.feeds) | {s for s, _ in self.variables}
        self.info = {}
        self.trusted = frozenset()  # feeds the generated code does not check (see derive)
        for s, shape, dtype in zip(plan.feed_slots, plan.feed_shapes, plan.feed_dtypes):
            self.info[s] = (shape, np.dtype(dtype))
        for s, var in self.variables:
            self.info[s] = (tuple(var.shape), var.dtype)
        self.ops = []
        for forward, arg_slots, params, out, node in plan.steps:
            outs = (out,) if type(out) is int else tuple(out)
            for s, t in zip(outs, node.outputs):
                self.info[s] = (t.shape, t.dtype)
            dynamic.update(outs)
            self.ops.append(Op(node.prim, forward, arg_slots, params, outs,
                               type(out) is not int, node))
        self.fetches = list(plan.fetch_slots)
        used = {a for op in self.ops for a in op.args} | set(self.fetches)
        self.consts = {s: plan.template[s] for s in used if s not in dynamic}
        for s, v in self.consts.items():
            self.info[s] = _static_info(v)
        self._next = len(plan.template)

    def new_value(self, shape, dtype):
        v = self._next
        self._next += 1
        self.info[v] = (shape, dtype)
        return v

    def new_const(self, value):
        v = self.new_value(*_static_info(value))
        self.consts[v] = value
        return v

    def is_const(self, v):
        return v in self.consts

    def shape(self, v):
        return self.info.get(v, (None, None))[0]

    def dtype(self, v):
        return self.info.get(v, (None, None))[1]

    def consumers(self):
        """value -> indices of the ops that use it (in order, once per op)."""
        users = {}
        for k, op in enumerate(self.ops):
            for a in set(op.args):
                users.setdefault(a, []).append(k)
        return users

    def counts(self):
        """Ops per primitive name."""
        out = {}
        for op in self.ops:
            out[op.name] = out.get(op.name, 0) + 1
        return out

    def describe(self):
        """One line per op, ``v7 = multiply(v3, 2.0)  -> float64[999]`` (scalar constants
        shown by value, others as ``c5``)."""
        def operand(a):
            if a in self.consts:
                value = self.consts[a]
                return repr(value) if np.ndim(value) == 0 and not hasattr(value, "__len__") \
                    else "c%d" % a
            return "v%d" % a

        lines = []
        for op in self.ops:
            args = [operand(a) for a in op.args]
            if getattr(op.prim, "group", False):  # an op standing for several: their names
                label = f"{op.name}[{','.join(n.prim.name for n in op.nodes)}]"
            else:
                label = op.name
                args += [f"{k}={param_text(v)}" for k, v in (op.params or {}).items()]
            outs = ", ".join("v%d" % o for o in op.outs)
            avals = ", ".join(aval_text(*self.info.get(o, (None, None))) for o in op.outs)
            lines.append(f"{outs} = {label}({', '.join(args)})  -> {avals}")
        return lines


class FeedInfo:
    """What code generation reads from ``program.plan``: feed dtypes, shapes and names."""

    def __init__(self, dtypes, shapes, names):
        self.feed_dtypes = list(dtypes)
        self.feed_shapes = list(shapes)
        self.feed_names = list(names)


def derive(prog, feeds, ops, fetches, variables=True, info=None, trusted=()):
    """A program over ``prog``'s values with other feeds, ops and fetches (constants and
    numbering shared; ``info`` overrides the shape and dtype of some values). Feeds in
    ``trusted`` are not checked by the generated code: the caller passes C-contiguous
    ndarrays of their dtype and shape."""
    out = prog.__class__.__new__(prog.__class__)
    out.__dict__.update(prog.__dict__)
    out.info = {**prog.info, **(info or {})}
    out.consts = dict(prog.consts)
    out.feeds = list(feeds)
    out.ops = list(ops)
    out.fetches = list(fetches)
    out.variables = list(prog.variables) if variables else []
    by_slot = dict(zip(prog.feeds, zip(prog.plan.feed_dtypes, prog.plan.feed_shapes,
                                       prog.plan.feed_names)))
    rows = [by_slot[v] if v in by_slot and v not in (info or {}) else
            (out.dtype(v), out.shape(v) if known(out.shape(v)) else None,
             by_slot[v][2] if v in by_slot else f"boundary value v{v}") for v in feeds]
    out.plan = FeedInfo(*zip(*rows)) if rows else FeedInfo((), (), ())
    out.trusted = frozenset(v for v in trusted if known(out.shape(v)))
    return out


def _static_info(value):
    """(shape, dtype) of a constant; (None, None) for what is not an array (a tuple of axes,
    a dtype, a function)."""
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        return np.shape(value), np.result_type(value)
    return None, None


def has_effects(op):
    """Ops that make or update buffers in place (``Primitive.effects``, ``writes``): never
    folded, merged or dropped."""
    return op.prim.effects or op.prim.writes is not None


def dead_code(prog):
    """Drop the ops none of whose outputs reach a fetch; returns how many."""
    live = set(prog.fetches)
    kept = []
    for op in reversed(prog.ops):
        if has_effects(op) or live.intersection(op.outs):
            kept.append(op)
            live.update(op.args)
    dropped = len(prog.ops) - len(kept)
    prog.ops = kept[::-1]
    return dropped


def freeze_fetched_consts(prog):
    """A fetched constant (a folded linear gradient, a zero Hessian) is the same array at every
    call: hand it out as a read-only view, so that the boundary copies it for the caller
    (``engine.tensor.owned``) and an in-place update of one result cannot change the next.
    Returns how many."""
    count = 0
    for v in prog.fetches:
        c = prog.consts.get(v)
        if isinstance(c, np.ndarray) and c.flags.writeable:
            c = c.view()
            c.flags.writeable = False
            prog.consts[v] = c
            count += 1
    return count


def known(shape):
    return shape is not None and None not in shape


def size_of(shape):
    return int(np.prod(shape, dtype=np.int64)) if known(shape) else None
