"""The graph compiler: an optimized, generated executor for a planned graph.

``compile_plan(plan)`` takes a :class:`~hessgrad.engine.graph.Plan` (steps left after
constant folding) and returns a :class:`CompiledPlan` whose ``run`` computes the same
fetches with the passes of :mod:`.pipeline`, in order: the optimizer (dead code, the
simplify sweeps -- folding, the primitives' algebra, the rewrites they declare, common
subexpressions --, diagonal products, in-place accumulation of sliced gradients), then the
lowering: one compiled function for a small program (:mod:`.wholegraph`: a typed loop
representation compiled by llvmlite or Numba), else streamed rows and merged products of large
matrices, fused Numba kernels for large elementwise trees (:mod:`.fusion`), and straight-line
generated Python (:mod:`.codegen`) calling numpy and those kernels.

Batched runs (dense Hessians push blocks of tangents through one run) use the optimized
program rewritten for a leading batch axis (:mod:`.batched`), lowered the same way.

>>> import numpy as np
>>> import hessgrad as hg
>>> f = hg.function(hg.grad(lambda x: hg.reduce_sum(hg.exp(x) * x)))
>>> c = f.get_concrete_function(np.zeros(3))
>>> c.compiled.ops_before > c.compiled.ops_after
True
>>> f(np.zeros(3))
array([1., 1., 1.])
"""

import copy
import threading
import time

import numpy as np

from . import pipeline
from .batched import batch_program
from .ir import Program, size_of
from .split import SplitRunner, cached_batched, split_program
from .wholegraph import WholeGraph

__all__ = ["CompiledPlan", "LoweringFailed", "compile_plan"]


class LoweringFailed(Exception):
    """Lowering a program (at its first run, or a batched program) raised: the caller runs
    the plan uncompiled instead, as when optimizing fails."""


class CompiledPlan:
    """A plan's steps optimized and compiled into one generated Python function.

    Attributes:
        ops_before, ops_after: number of dynamic steps before and after optimization.
        counts_before, counts_after: steps per primitive name.
        optimized_steps: the optimized program, one line per op.
        source: the generated Python source.
        whole_graph: True when the whole program runs as one compiled function.
        backend: who compiled that function, ``"native"`` (llvmlite, :mod:`.native`) or
            ``"numba"``; ``"python"`` for generated code calling numpy and fused kernels.
        kernel_sources: the source of every Numba kernel (fused kernels and row kernels, or the
            whole graph).
        compile_time: seconds spent optimizing and generating code, plus the first run
            (which lowers the program and compiles the Numba kernels, or loads them from the
            disk cache).
        passes: the passes of :mod:`.pipeline` that changed something, with how much.
    """

    def __init__(self, plan, jit_kernels=True, min_kernel_size=None, skip=None):
        start = time.perf_counter()
        self.plan = plan
        prog = Program(plan)
        self.ops_before = len(prog.ops)
        self.counts_before = prog.counts()
        self.options = pipeline.Options(jit_kernels, min_kernel_size, skip, lambda block:
                                        CompiledPlan(block, jit_kernels, min_kernel_size, skip))
        self._state = pipeline.run(pipeline.OPTIMIZE, pipeline.State(prog, self.options))
        self._optimized_ops = list(prog.ops)  # before lowering: what batched runs rewrite
        self._batched = {}
        self._splits = {}
        self._peak_sizes = {}
        self.min_kernel_size = min_kernel_size
        self.jit_kernels = jit_kernels
        self.program = prog
        # The program is lowered at its first unbatched run (or when asked what it became):
        # a dense Hessian only runs batched programs, and lowering a long unrolled program
        # (a whole-graph kernel of 10^4 ops) can cost far more than optimizing it.
        self._lock = threading.RLock()
        self._fn = None
        self.compile_time = self._optimize_time = time.perf_counter() - start
        self.run = self._first_run

    def _lowered(self):
        """Lower the optimized program (once); returns the generated function."""
        with self._lock:
            if self._fn is None:
                start = time.perf_counter()
                try:
                    generated = pipeline.run(pipeline.LOWER, self._state).generated
                except Exception as exc:  # noqa: BLE001 - see LoweringFailed
                    raise LoweringFailed(f"{type(exc).__name__}: {exc}") from exc
                self._generated = generated
                self._fn = generated.fn
                self.compile_time += time.perf_counter() - start
        return self._fn

    def lowered_with(self, jit_kernels):
        """This plan's optimized program as a new :class:`CompiledPlan` lowered with
        ``jit_kernels``, without optimizing again (tiered compilation's next tier)."""
        start = time.perf_counter()
        other = object.__new__(CompiledPlan)
        with self._lock:  # not while this plan's own lowering adds to its program
            other.__dict__.update(self.__dict__)
            prog = copy.copy(self.program)
            prog.ops, prog.feeds, prog.fetches = list(self._optimized_ops), list(prog.feeds), \
                list(prog.fetches)
            prog.consts, prog.info = dict(prog.consts), dict(prog.info)
        other.program, other.jit_kernels = prog, jit_kernels
        other.options = pipeline.Options(
            jit_kernels, self.min_kernel_size, self.options.skip,
            lambda block: CompiledPlan(block, jit_kernels, self.min_kernel_size,
                                       self.options.skip))
        other._state = pipeline.State(prog, other.options)
        optimizers = {p.name for p in pipeline.OPTIMIZE}
        other._state.report = {k: v for k, v in self._state.report.items() if k in optimizers}
        other._batched, other._splits, other._peak_sizes = {}, {}, {}
        other._lock, other._fn = threading.RLock(), None
        other.compile_time = self._optimize_time + time.perf_counter() - start
        other.run = other._first_run
        return other

    @property
    def lowered(self):
        """Whether the unbatched program has been lowered (see :meth:`lower`)."""
        return self._fn is not None

    def lower(self):
        """Lower the unbatched program now (it is otherwise lowered at its first run)."""
        self._lowered()
        return self

    @property
    def passes(self):
        """The passes of :mod:`.pipeline` that changed something, with how much."""
        self._lowered()
        return self._state.report

    @property
    def whole_graph(self):
        return isinstance(self._generated_now(), WholeGraph)

    @property
    def backend(self):
        generated = self._generated_now()
        return generated.backend if isinstance(generated, WholeGraph) else "python"

    @property
    def kernel_sources(self):
        generated = self._generated_now()
        if isinstance(generated, WholeGraph):
            return [generated.kernel_source]
        return [op.extra["source"] for op in self.program.ops
                if getattr(op.prim, "group", False)]

    @property
    def ops_after(self):
        self._lowered()
        return len(self.program.ops)

    @property
    def counts_after(self):
        self._lowered()
        return self.program.counts()

    @property
    def source(self):
        return self._generated_now().source

    def _generated_now(self):
        self._lowered()
        return self._generated

    @property
    def optimized_steps(self):
        self._lowered()
        return self.program.describe()

    @property
    def fused_kernels(self):
        return 0 if self.whole_graph else len(self.kernel_sources)

    def _first_run(self, feed_values):
        fn = self._lowered()
        start = time.perf_counter()
        try:
            return fn(*feed_values)
        finally:
            self.compile_time += time.perf_counter() - start
            self.run = self._run

    def _run(self, feed_values):
        return self._fn(*feed_values)

    def run_batched(self, feed_values, batched):
        """Like ``Plan.run_batched``, with a program compiled per (batch size, flags)."""
        feed_values, k = self.plan.check_batched_feeds(feed_values, batched)
        run = cached_batched(self._batched, (k, tuple(batched)),
                             lambda: self._compile_batched(k, batched))
        if run is None:  # the plan's batching rules handle run-time shapes
            return self.plan.run_batched(feed_values, batched)
        values = run(*feed_values)
        return [v if f else np.broadcast_to(v, (k,) + np.shape(v))
                for v, f in zip(values, run.fetch_batched)]

    def run_flagged(self, feed_values, batched):
        """Like ``Plan.run_flagged`` (control flow's batched blocks), with a program compiled
        per (batch size, flags)."""
        k = next(np.shape(v)[0] for v, f in zip(feed_values, batched) if f)
        run = cached_batched(self._batched, (k, tuple(batched)),
                             lambda: self._compile_batched(k, batched))
        if run is None:
            return self.plan.run_flagged(feed_values, batched)
        return run(*feed_values), run.fetch_batched

    def batched_fetches(self, batched):
        return self.plan.batched_fetches(batched)

    def total_batched_size(self, batched):
        """Elements that one batch member holds at most at once while :meth:`run_flagged`
        runs. Unlike the plan's interpreter, generated code frees each value at its last use,
        so this is the peak over the optimized program of the batched values alive together
        (fusion only removes values; cached per flags)."""
        key = tuple(bool(b) for b in batched)
        size = self._peak_sizes.get(key)
        if size is None:
            size = self._peak_sizes[key] = _peak_batched_size(self.program, self._optimized_ops,
                                                              key)
        return size

    def _compile_batched(self, k, batched):
        return self._compile_batched_program(self.program, self._optimized_ops, batched, k)

    def _compile_batched_program(self, prog, ops, batched, k):
        start = time.perf_counter()
        bp = batch_program(prog, ops, batched, k)
        try:
            run = self._generate(bp.prog).fn
        except Exception as exc:  # noqa: BLE001 - see LoweringFailed
            raise LoweringFailed(f"{type(exc).__name__}: {exc}") from exc
        run.fetch_batched = bp.fetch_batched
        self.compile_time += time.perf_counter() - start
        return run

    def _generate(self, prog):
        """``prog`` (a batched or split program) through the lowering passes."""
        return pipeline.run(pipeline.LOWER, pipeline.State(prog, self.options)).generated

    def _compile_program(self, prog):
        start = time.perf_counter()
        fn = self._generate(prog).fn
        self.compile_time += time.perf_counter() - start
        return fn

    def split(self, static):
        """The program split at the feeds flagged in ``static`` into a setup part and a
        per-call part (:mod:`.split`), compiled once per flags."""
        key = tuple(static)
        if key not in self._splits:
            self._splits[key] = SplitRunner(
                split_program(self.program, self._optimized_ops, static),
                self._compile_program, self._compile_batched_program)
        return self._splits[key]

    def has_split(self, static):
        """Whether :meth:`split` at these flags was built (it then costs nothing)."""
        return tuple(static) in self._splits

    def __repr__(self):
        return f"<CompiledPlan: {self.summary()}>"

    def summary(self):
        """A short text: steps before/after, fused kernels or one whole-graph function,
        compile time."""
        kernels = f"one {self.backend} function" if self.whole_graph else \
            f"{self.fused_kernels} fused kernel{'s' if self.fused_kernels != 1 else ''}"
        return (f"{self.ops_before} steps -> {self.ops_after} ({kernels}), "
                f"compiled in {self.compile_time * 1e3:.1f} ms; "
                f"passes: {pipeline.summary(self.passes)}")

    def describe_passes(self):
        """The pipeline, one pass per line, marking those that changed this program."""
        return pipeline.describe(self.passes, self.options)


def _peak_batched_size(prog, ops, flags):
    """The largest sum of elements of the values alive together that depend on the feeds
    flagged in ``flags``, in ``ops`` run in order (fetches live to the end); at least 1."""
    dependent = {s for s, flag in zip(prog.feeds, flags) if flag}
    last_use = {}
    for k, op in enumerate(ops):
        for a in op.args:
            last_use[a] = k
    for v in prog.fetches:
        last_use[v] = len(ops)
    live = peak = 0
    dying = {}  # op index -> elements freed after it
    for k, op in enumerate(ops):
        if dependent.intersection(op.args):
            for o in op.outs:
                dependent.add(o)
                size = size_of(prog.shape(o))
                if size is None:  # run-time shape: count as the interpreter does
                    return prog.plan.total_batched_size(flags)
                live += size
                end = last_use.get(o, k)
                dying[end] = dying.get(end, 0) + size
        peak = max(peak, live)
        live -= dying.pop(k, 0)
    return max(1, peak)


def compile_plan(plan, jit_kernels=True, min_kernel_size=None, skip=None):
    """A :class:`CompiledPlan` for ``plan``; elementwise groups of fewer than
    ``min_kernel_size`` elements (default :data:`hessgrad.kernels.tuning.MIN_SIZE`) stay on
    numpy; the passes (or simplify steps) named in ``skip`` do not run (default: those in
    ``HESSGRAD_SKIP_PASSES``, comma-separated)."""
    return CompiledPlan(plan, jit_kernels=jit_kernels, min_kernel_size=min_kernel_size,
                        skip=skip)
