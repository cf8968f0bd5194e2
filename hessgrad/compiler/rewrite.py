"""The machinery of rewrites: one sweep that applies a list of steps to every op of a
program in order, and rules registered per primitive object for the passes that are not a
primitive's own business (the accumulate and diagonal-products passes).

A step is ``step(sweep, op)``: None leaves the op to the next step; a list of ops takes its
place (its last op usually computes ``op``'s outputs; an empty list when the step made them
aliases of other values (:meth:`Sweep.to`) or constants). The rules a primitive declares
(``prim.rewrites``) are steps too; they read the program and build ops through the sweep's
methods below, and ``op.replace(...)``, which copies the params and everything else they do
not change.
"""

import numpy as np

from .ir import dead_code, known


class Rules:
    """Rewrite rules registered per primitive object (``@RULES.register(prim)``), tried in
    the order registered; as a step, the first rule for the op's primitive that applies."""

    def __init__(self):
        self._by_prim = {}

    def register(self, *prims):
        def add(rule):
            for prim in prims:
                self._by_prim.setdefault(prim, []).append(rule)
            return rule
        return add

    def __call__(self, sweep, op):
        for rule in self._by_prim.get(op.prim, ()):
            out = rule(sweep, op)
            if out is not None:
                return out
        return None


def declared(sweep, op):
    """A step: the first of the rules the op's primitive declares (``prim.rewrites``) that
    applies."""
    for rule in op.prim.rewrites:
        out = rule(sweep, op)
        if out is not None:
            return out
    return None


class Sweep:
    """One pass over ``prog.ops`` applying ``steps`` to each op, its operands renamed through
    the aliases earlier steps made. ``producer`` maps a value to the op computing it in the
    new program so far, ``users`` to the indices (``index``: the current op's) of the ops
    reading it in the program swept."""

    def __init__(self, prog, steps):
        self.prog = prog
        self.steps = steps
        self.alias = {}
        self.producer = {}
        self.users = prog.consumers()
        self.fetched = set(prog.fetches)
        self.seen = {}  # common-subexpression keys
        self.index = 0
        self._fills = {}

    def run(self):
        """Sweep once; returns the number of ops rewritten (0: nothing changed)."""
        prog, changed, new_ops = self.prog, 0, []
        for self.index, op in enumerate(prog.ops):
            op.args = [self.resolve(a) for a in op.args]
            out = None
            for step in self.steps:
                out = step(self, op)
                if out is not None:
                    break
            if out is None:
                out = [op]
            elif out != [op]:
                changed += 1
            for new in out:
                for o in new.outs:
                    self.producer[o] = new
            new_ops += out
        prog.ops = new_ops
        prog.fetches = [self.resolve(v) for v in prog.fetches]
        return changed

    def resolve(self, v):
        while v in self.alias:
            v = self.alias[v]
        return v

    def to(self, op, v):
        """``op``'s (single) output is ``v`` from here on."""
        self.alias[op.outs[0]] = v
        return []

    def is_fill(self, v, x):
        """``v`` is a constant array (or number) equal to ``x`` everywhere."""
        if v not in self.prog.consts:
            return False
        key = (v, x)
        if key not in self._fills:
            a = np.asarray(self.prog.consts[v])
            self._fills[key] = a.dtype.kind in "biufc" and a.size > 0 and bool(np.all(a == x))
        return self._fills[key]

    # --- what a primitive's rewrite rules may ask and build --------------------------------
    def shape(self, v):
        """``v``'s static shape, or None when some of it is known only at run time."""
        shape = self.prog.shape(v)
        return shape if known(shape) else None

    def dtype(self, v):
        return self.prog.dtype(v)

    def constant(self, v):
        """``v``'s value when it is a constant of the program, else None."""
        return self.prog.consts.get(v)

    def new_const(self, value):
        return self.prog.new_const(value)

    def emit(self, op, prim, args, dtype=None):
        """A new op of ``prim`` (no params) on ``args`` standing for ``op``'s graph node, its
        result a new value of ``op``'s result's shape and of ``dtype`` (default: its dtype)."""
        out = self.prog.new_value(self.prog.shape(op.outs[0]),
                                  self.prog.dtype(op.outs[0]) if dtype is None else dtype)
        return op.replace(prim=prim, args=list(args), params={}, outs=(out,))

    def fill(self, op, value):
        """``op``'s (single) result is ``value`` everywhere, a constant of its type (a numpy
        scalar when 0-d, as numpy's ufuncs give)."""
        out = op.outs[0]
        shape, dtype = self.prog.shape(out), self.prog.dtype(out)
        self.prog.consts[out] = dtype.type(value) if shape == () else np.full(shape, value, dtype)
        return []

    def same_type(self, a, b):
        """Values ``a`` and ``b`` have the same known shape and dtype."""
        p = self.prog
        return known(p.shape(a)) and p.shape(a) == p.shape(b) and \
            p.dtype(a) is not None and p.dtype(a) == p.dtype(b)


def sweep(prog, steps):
    """One :class:`Sweep` of ``steps``, then dead code removed if anything changed."""
    changed = Sweep(prog, steps).run()
    if changed:
        dead_code(prog)
    return changed
