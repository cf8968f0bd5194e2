"""The compiler's passes, in the order they run: read the compiler from here.

A :class:`~hessgrad.engine.graph.Plan` becomes a :class:`~.ir.Program` (ops over numbered
values), which the OPTIMIZE passes rewrite into an equal, cheaper program; the LOWER passes then
turn it into code, the first one that produces a function ending the stage. Batched and split
programs (:mod:`.batched`, :mod:`.split`) start from the optimized program and run LOWER
again. Each pass has a name, the flag that turns it on (``optimize``: whenever the graph is
compiled; ``jit_kernels``: with compiled kernels) and a one-line description;
``hessgrad.function``'s summary (``print(f.graph)``) lists the passes that changed something,
and ``skip`` (or ``HESSGRAD_SKIP_PASSES=cse,fuse``) turns named passes off.

Rewrites are declared with each primitive (``prim.rewrites``, ``prim.algebra``), or
registered per primitive object for a pass of its own (:mod:`.rewrite`); lowerings read
``prim.lowering``. No pass names an op.
"""

import os

from . import codegen, wholegraph
from .accumulate import accumulate
from .blocks import compile_blocks
from .diagonal import diagonal_products
from .fusion import fuse
from .ir import dead_code, freeze_fetched_consts
from .products import merge_products
from .simplify import STEPS, simplify
from .streamed import stream_rows


class Pass:
    """A named pass: ``run(state)`` returns how much it changed (0 or None: nothing)."""

    __slots__ = ("name", "flag", "doc", "run", "steps")

    def __init__(self, name, flag, doc, run, steps=()):
        self.name, self.flag, self.doc, self.run, self.steps = name, flag, doc, run, steps

    def __repr__(self):
        return f"<pass {self.name} ({self.flag}): {self.doc}>"


class Options:
    """What a compilation runs: ``jit_kernels`` (the passes flagged so), the smallest fused
    loop (``min_kernel_size``, default ``tuning.MIN_SIZE``), the names of passes (or of
    simplify's steps) to ``skip``, and ``compile_block(plan)`` for nested plans."""

    def __init__(self, jit_kernels=True, min_kernel_size=None, skip=None, compile_block=None):
        self.optimize = True
        self.jit_kernels = jit_kernels
        self.min_kernel_size = min_kernel_size
        env = os.environ.get("HESSGRAD_SKIP_PASSES", "")
        self.skip = frozenset(skip if skip is not None else
                              (s.strip() for s in env.split(",") if s.strip()))
        self.compile_block = compile_block

    def runs(self, p):
        return getattr(self, p.flag) and p.name not in self.skip


class State:
    """A program going through the pipeline: what the passes left for the next ones, and
    the report of what they did (pass name -> count)."""

    def __init__(self, prog, options):
        self.prog = prog
        self.options = options
        self.kernel_calls = {}  # id(op) -> how generated code calls a fused kernel
        self.generated = None  # the function, once a lowering pass made it
        self.report = {}


def _simplify(state):
    steps = [step for name, step in STEPS.items() if name not in state.options.skip]
    return simplify(state.prog, tuple(steps))


def _whole_graph(state):
    state.generated = wholegraph.build(state.prog)
    return state.generated is not None


def _fuse(state):
    state.kernel_calls = fuse(state.prog, state.options.min_kernel_size)
    return len(state.kernel_calls)


def _codegen(state):
    state.generated = codegen.generate(state.prog, state.kernel_calls)
    return True


OPTIMIZE = (
    Pass("compile_blocks", "optimize", "compile the plans nested in control flow (loop "
         "bodies, branches) the same way", lambda s: compile_blocks(
             s.prog, s.options.compile_block)),
    Pass("dead_code", "optimize", "drop the ops whose results reach no fetch",
         lambda s: dead_code(s.prog)),
    Pass("simplify", "optimize", "fold constants, apply the primitives' algebra and their "
         "registered rewrites, merge common subexpressions, until nothing changes", _simplify,
         steps=(("fold", "ops of constants become constants"),
                ("algebra", "units (x * 1, x + 0, zeros in add_n), involutions, compositions,"
                 " no-op params, constant fills, forwarding, as the primitives declare"),
                ("rewrites", "the rewrite rules each primitive declares (outer products, "
                 "sums of broadcasts, constant powers as products and square roots)"),
                ("scalarize", "constant arrays of one value in elementwise ops become "
                 "scalars"),
                ("cse", "an op equal to an earlier one is dropped"))),
    Pass("diagonal_products", "optimize", "products with a matrix zero off its diagonal "
         "(a Jacobian's basis) become row or column scalings",
         lambda s: diagonal_products(s.prog)),
    Pass("accumulate", "optimize", "a sum of gradients scattered into slices becomes one "
         "buffer added into in place", lambda s: accumulate(s.prog)),
    Pass("freeze_fetched_consts", "optimize", "fetched constants are handed out read-only",
         lambda s: freeze_fetched_consts(s.prog)),
)

LOWER = (
    Pass("whole_graph", "jit_kernels", "a small program becomes one kernel (typed loops, "
         "compiled by llvmlite, else by Numba)", _whole_graph),
    Pass("stream_rows", "jit_kernels", "a large matrix's product, a row-wise map and its "
         "transposed product become one pass over the rows", lambda s: stream_rows(s.prog)),
    Pass("merge_products", "jit_kernels", "two matrix-vector products with one large matrix "
         "become one pass over it", lambda s: merge_products(s.prog)),
    Pass("fuse", "jit_kernels", "trees of large elementwise ops, sums and scatters become "
         "one Numba loop each", _fuse),
    Pass("codegen", "optimize", "straight-line Python over locals, freeing values at their "
         "last use and writing into dead buffers", _codegen),
)

PIPELINE = OPTIMIZE + LOWER


def run(passes, state):
    """Run the enabled ``passes`` on ``state`` in order, until one generates the function;
    returns the state."""
    for p in passes:
        if state.generated is not None:
            break
        if not state.options.runs(p):
            continue
        count = p.run(state)
        if count:
            state.report[p.name] = count
    return state


def describe(report=None, options=None):
    """The pipeline as text, one pass per line (simplify's steps indented): ``[x]`` for the
    passes that changed something in ``report`` (with how much), ``[ ]`` for the others,
    ``[-]`` for the passes ``options`` turn off."""
    lines = []
    for p in PIPELINE:
        off = options is not None and not options.runs(p)
        mark = "-" if off else "x" if report and p.name in report else " "
        count = report.get(p.name) if report else None
        extra = "" if count is None or count is True else f" ({count})"
        lines.append(f"[{mark}] {p.name:22s} {p.flag:11s} {p.doc}{extra}")
        for name, doc in p.steps:
            skipped = options is not None and name in options.skip
            lines.append(f"      {'-' if skipped else ' '} {name:18s} {doc}")
    return "\n".join(lines)


def summary(report):
    """The passes that changed something, on one line, with how much (ops dropped, sweeps,
    ops rewritten, kernels): ``dead_code(3), simplify(2), accumulate(1), codegen``."""
    return ", ".join(name if count is True else f"{name}({count})"
                     for name, count in report.items())
