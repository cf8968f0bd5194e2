"""Split an optimized program at a set of fixed feeds: a setup part and a per-call part.

``make_hvp(f)(x)`` and ``HessianOperator(f, x)`` run many products ``H v`` at one ``x``. The
traced HVP takes both ``x`` and ``v``; :func:`split_program` separates the ops that depend on
``x`` alone (the forward pass and the gradient: the *setup*, run once per point) from those
that depend on ``v`` (the tangent part, run per product). The values crossing from one to the
other (the *boundary*) are outputs of the setup program and inputs of the per-call program.
Both are compiled once per traced signature, so a new point costs one setup run, not a new
trace and compilation.
"""

import numpy as np

from .batched import Unbatchable
from .ir import derive, known, size_of


class Split:
    """``setup``: static feeds -> boundary values; ``apply``: boundary values + the other
    feeds -> the fetches."""

    def __init__(self, setup, apply, boundary):
        self.setup = setup
        self.apply = apply
        self.boundary = boundary


def cached_batched(cache, key, compile_batched):
    """``compile_batched()``, compiled once per ``key`` in ``cache``; None when the program
    cannot be rewritten for a batch (an output shape known only at run time, as a
    ``while_loop``'s): the caller then runs the batch another way."""
    if key not in cache:
        try:
            cache[key] = compile_batched()
        except Unbatchable:
            cache[key] = None
    return cache[key]


def split_program(prog, ops, static):
    """Split ``ops`` (an optimized program's ops, before fusion) at the feeds flagged in
    ``static``. Variables count as per-call inputs (their value may change between calls)."""
    dynamic = {s for s, fixed in zip(prog.feeds, static) if not fixed}
    dynamic.update(s for s, _ in prog.variables)
    setup_ops, apply_ops = [], []
    for op in ops:
        if dynamic.intersection(op.args):
            apply_ops.append(op)
            dynamic.update(op.outs)
        else:
            setup_ops.append(op)
    needed = {a for op in apply_ops for a in op.args} | set(prog.fetches)
    boundary = sorted(v for v in needed if v not in dynamic and v not in prog.consts)
    static_feeds = [s for s, fixed in zip(prog.feeds, static) if fixed]
    dynamic_feeds = [s for s, fixed in zip(prog.feeds, static) if not fixed]
    setup = derive(prog, static_feeds, setup_ops, boundary, variables=False)
    apply = derive(prog, boundary + dynamic_feeds, apply_ops, prog.fetches, trusted=boundary)
    return Split(setup, apply, boundary)


class SplitRunner:
    """A split compiled once: ``at(static_values)`` runs the setup and returns the per-call
    part bound to its boundary values.

    ``compile_program(prog) -> fn`` is the compiler's pipeline (fusion, code generation);
    ``compile_batched(prog, ops, flags, k) -> fn`` the same for a batched rewrite.
    """

    def __init__(self, split, compile_program, compile_batched):
        self.split = split
        self._apply_ops = list(split.apply.ops)  # before fusion: what batched runs rewrite
        self.setup = compile_program(split.setup)
        self.apply = compile_program(split.apply)
        self._compile_batched = compile_batched
        self._batched = {}
        self.blocks = {}  # per flags: how batches run (hessgrad.tracing.blocks), kept here
        #                   so that every point of this split shares one block program

    @property
    def largest_intermediate(self):
        sizes = [size_of(self.split.apply.shape(o)) for op in self._apply_ops for o in op.outs]
        return max([s for s in sizes if s is not None] + [1])

    def at(self, static_values):
        """The per-call part at one point. The boundary values are made what the per-call
        program trusts them to be (C-contiguous arrays of their dtype and shape) here, once
        per point, instead of being checked at every call."""
        apply = self.split.apply
        boundary = []
        for v, value in zip(self.split.boundary, self.setup(*static_values)):
            if v in apply.trusted:
                dtype = apply.dtype(v)
                if type(value) is not np.ndarray or value.dtype != dtype or \
                        not value.flags.c_contiguous:
                    value = np.ascontiguousarray(value, dtype=dtype)
                if value.shape != apply.shape(v) and value.size == 1 == size_of(apply.shape(v)):
                    value = value.reshape(apply.shape(v))  # (1,) where () was traced
                elif value.shape != apply.shape(v):
                    raise ValueError(f"make_hvp: boundary value v{v} has shape "
                                     f"{value.shape}, expected {apply.shape(v)}")
            boundary.append(value)
        return Bound(self, boundary)

    @property
    def batched_programs(self):
        """How many batched programs were compiled (one per batch size and flags)."""
        return sum(run is not None for run in list(self._batched.values()))

    def batched_apply(self, k, flags):
        """The per-call part compiled for a batch, or None when it cannot be batched."""
        return cached_batched(self._batched, (k, tuple(flags)), lambda: self._compile_batched(
            self.split.apply, self._apply_ops, flags, k))


class Bound:
    """The per-call program with the boundary values of one setup run."""

    def __init__(self, runner, boundary):
        self.runner = runner
        self.boundary = list(boundary)

    def run(self, dynamic_values):
        return self.runner.apply(*self.boundary, *dynamic_values)

    def run_batched(self, dynamic_values, batched):
        """Outputs for per-call values whose flagged members carry a leading batch axis."""
        k = next(len(v) for v, f in zip(dynamic_values, batched) if f)
        flags = [False] * len(self.boundary) + list(batched)
        run = self.runner.batched_apply(k, flags)
        if run is None:
            return self.run_each(dynamic_values, batched, k)
        values = run(*self.boundary, *dynamic_values)
        return [v if f else np.broadcast_to(v, (k,) + np.shape(v))
                for v, f in zip(values, run.fetch_batched)]

    def run_each(self, dynamic_values, batched, k):
        """The batch as one per-call run per member: what is left when no batched program
        can be compiled (the per-call part, unlike the whole plan, needs no setup rerun)."""
        runs = [self.run([v[j] if f else v for v, f in zip(dynamic_values, batched)])
                for j in range(k)]
        if runs:
            return [np.stack([np.asarray(r[i]) for r in runs]) for i in range(len(runs[0]))]
        apply = self.runner.split.apply  # an empty batch: empty results of the traced shapes
        return [np.empty((0,) + (apply.shape(v) if known(apply.shape(v)) else ()),
                         apply.dtype(v)) for v in apply.fetches]
