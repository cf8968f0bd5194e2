"""The compiler's program: a Plan's dynamic steps as ops over numbered values.

A value is an int. Constants (folded by the Plan, Python numbers, arrays) live in
``Program.consts``; everything else is a feed, a Variable read, or an op output. The static
shape and dtype of every value known at trace time is in ``Program.info``.
"""

import numpy as np

from ..engine.graph_text import aval_text, param_text


# Compiler ops that stand for several graph nodes (listed by name in ``describe``).
GROUPS = ("fused", "rows_streamed")


class Op:
    """``outs = fn(*args, **params)``.

    ``name`` is the primitive's name (or a compiler op: "fused", "accumulate"); ``node`` the
    graph node it came from (for error notes), ``nodes`` every graph node it stands for.
    """

    __slots__ = ("name", "fn", "args", "params", "outs", "multi", "node", "nodes", "extra")

    def __init__(self, name, fn, args, params, outs, multi, node, nodes=None, extra=None):
        self.name = name
        self.fn = fn
        self.args = list(args)
        self.params = params
        self.outs = tuple(outs)
        self.multi = multi
        self.node = node
        self.nodes = nodes if nodes is not None else ([node] if node is not None else [])
        self.extra = extra

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
            self.ops.append(Op(node.prim.name, forward, arg_slots, params, outs,
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
            if op.name in GROUPS:  # an op standing for several: their names
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


def known(shape):
    return shape is not None and None not in shape


def size_of(shape):
    return int(np.prod(shape, dtype=np.int64)) if known(shape) else None
