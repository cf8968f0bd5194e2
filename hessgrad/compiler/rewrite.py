"""The machinery of rewrites: rules registered per primitive object, and one sweep that
applies a list of steps to every op of a program in order.

A step (or a rule) is ``step(sweep, op)``: None leaves the op to the next step; a list of ops
takes its place (its last op usually computes ``op``'s outputs; an empty list when the step
made them aliases of other values (:meth:`Sweep.to`) or constants). Rules build ops with
``op.replace(...)``, which copies the params and everything else they do not change.
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
