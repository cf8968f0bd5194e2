"""``hessgrad.function``: trace a Python function into a graph once per input signature."""

import functools
import os
import time
import warnings

import numpy as np

from ..compiler import LoweringFailed, compile_plan
from ..engine.graph import Graph, Plan, dependent
from ..engine.nest import flatten, pack_as, structure_key
from ..engine.state import THREAD
from ..engine.tensor import GuardFailed, Tensor, Variable, owned
from .blocks import Blocks
from .tiers import Tiers, compile_mode, running

_ARRAY_LEAVES = (Tensor, np.ndarray, np.generic, float, complex)


def _is_array_leaf(x):
    return isinstance(x, _ARRAY_LEAVES) and not isinstance(x, (bool, np.bool_))


def _is_weak_leaf(x):
    """A Python float or complex, which numpy 2 promotes weakly (NEP 50); np.float64 and
    np.complex128 are subclasses of them, but strong."""
    return isinstance(x, (float, complex)) and not isinstance(x, np.generic)


def leaf_key(x):
    """What of one argument selects a trace: see :func:`signature_key`."""
    if isinstance(x, Variable):
        return ("V", id(x))
    if _is_weak_leaf(x):
        return ("W", type(x).__name__)
    if _is_array_leaf(x):
        a = x if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.asarray(x)
        return ("T", tuple(a.shape), np.dtype(a.dtype).str)
    try:
        hash(x)
        return ("S", type(x).__name__, x)
    except TypeError:
        return ("S", type(x).__name__, id(x))


def signature_key(args, kwargs):
    """The key that selects a call's trace: the structure of ``(args, kwargs)`` and, per leaf,
    its shape and dtype (arrays, tensors), kind (weak Python scalars) or value (the rest)."""
    leaves = flatten((args, kwargs))
    return structure_key((args, kwargs), leaves), tuple(leaf_key(x) for x in leaves)


def _env_flag(name, default=True):
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() not in ("0", "false", "no", "")


def _compile(plan, jit_kernels):
    """The compiled runner of ``plan``, or None when compiling fails: the plan then runs as
    it is (with a warning)."""
    try:
        return compile_plan(plan, jit_kernels=jit_kernels)
    except Exception as exc:  # noqa: BLE001 - never fail a call because optimization failed
        warnings.warn(f"hessgrad.function: graph compilation failed ({type(exc).__name__}: "
                      f"{exc}); running the uncompiled plan", RuntimeWarning, stacklevel=3)
        return None


def _with_kernels(compiled):
    """``compiled``'s optimized program lowered with Numba kernels, or None (with a warning)
    when that fails: the calls keep the program without them."""
    try:
        return compiled.lowered_with(jit_kernels=True)
    except Exception as exc:  # noqa: BLE001 - never fail a call because optimization failed
        warnings.warn(f"hessgrad.function: compiling kernels failed ({type(exc).__name__}: "
                      f"{exc}); running the program without them", RuntimeWarning, stacklevel=2)
        return None


def _holds(value, convert, expected, batched):
    if batched:
        return all(convert(v) == expected for v in value)
    return convert(value) == expected


class ConcreteFunction:
    """One trace of a Function: its graph, placeholders and an execution plan.

    With ``optimize`` the plan is compiled (:mod:`hessgrad.compiler`) as its compile ``mode``
    says (:mod:`.tiers`: ``"lazy"`` by default, ``"eager"``, ``"never"``): ``compiled`` holds
    the optimized program (``compiled.optimized_steps``, ``ops_before``/``ops_after``, the
    generated ``source``; reading it compiles now), ``jit_kernels`` adds fused Numba kernels
    for large elementwise trees; ``tier`` says what calls run now. ``trace_time`` and
    ``compile_time`` are in seconds.
    """

    traces = 0  # how many traces were built in this process (tests count them)

    def __init__(self, fn, args, kwargs, optimize=True, jit_kernels=True, compile=None):
        start = time.perf_counter()
        ConcreteFunction.traces += 1
        leaves = flatten((args, kwargs))
        self.graph = Graph()
        self.graph.examples = {}  # traced at the call's values: branches on them are guards
        self.inputs = []        # the indices of the leaves that are graph inputs
        self.placeholders = []  # their placeholders
        traced_leaves = []
        # Under a capture key (tracing.capture), large arrays fn reads become inputs too, after
        # the leaves': ``lifted_slots`` says which; callers pass them as ``captures``.
        lift = THREAD.state.lift
        lifts = lift is not None and lift.tracing is None
        if lifts:
            lift.tracing = self.graph
        try:
            with self.graph.as_default():
                for i, leaf in enumerate(leaves):
                    if _is_array_leaf(leaf) and not isinstance(leaf, Variable):
                        dtype = leaf.dtype if hasattr(leaf, "dtype") else np.result_type(leaf)
                        p = self.graph.placeholder(dtype, np.shape(leaf) if not isinstance(
                            leaf, Tensor) else leaf.shape, name=f"arg{i}")
                        p._weak = _is_weak_leaf(leaf)
                        if not isinstance(leaf, Tensor) or leaf._value is not None:
                            self.graph.examples[id(p)] = np.asarray(
                                leaf._value if isinstance(leaf, Tensor) else leaf)
                        self.inputs.append(i)
                        self.placeholders.append(p)
                        traced_leaves.append(p)
                    else:
                        traced_leaves.append(leaf)
                t_args, t_kwargs = pack_as((args, kwargs), traced_leaves)
                self.structured_outputs = fn(*t_args, **t_kwargs)
        finally:
            if lifts:
                lift.tracing = None
        self.lifted_slots = sorted(self.graph.lifted)
        lifted = [self.graph.lifted[s] for s in self.lifted_slots]
        self.outputs = flatten(self.structured_outputs)
        self._fetch_index = [k for k, o in enumerate(self.outputs) if isinstance(o, Tensor)]
        feeds = [traced_leaves[i] for i in self.inputs] + lifted
        # Guards are fetched after the outputs; every run checks them (_checked).
        self.guards = list(self.graph.guards)
        self.graph.examples = None
        self.graph._example_values.clear()
        self.plan = Plan(self.graph, [self.outputs[k] for k in self._fetch_index] +
                         [t for t, _, _ in self.guards], feeds)
        self._feeds = feeds
        self._guard_plan = None
        # One Tensor out (a loss, a gradient): calls return the fetched value as it is.
        self._single = isinstance(self.structured_outputs, Tensor)
        self.trace_time = time.perf_counter() - start
        # Compiled at the first call ("eager"; a trace that is only analyzed never pays for
        # it) or once hot, in the background ("lazy").
        self.mode = compile_mode(compile, optimize)
        self._compile_flags = (self.mode != "never",
                               jit_kernels and _env_flag("HESSGRAD_JIT_KERNELS"))
        # lazy: first without Numba kernels (the optimizer and generated Python: cheap),
        # then the same optimized program with them (their compilation is most of the cost)
        self._tiers = Tiers(lambda: _compile(self.plan, False), len(self.plan.steps),
                            _with_kernels if self._compile_flags[1] else None) \
            if self.mode == "lazy" else None
        self._compiled = None
        self._light = None  # compiled without kernels (see run_batched_outputs)
        self._batched_outputs = {}

    @property
    def compiled(self):
        """The :class:`hessgrad.compiler.CompiledPlan` of this trace (built on first use), or
        None when it runs uncompiled (``optimize=False``)."""
        optimize, jit_kernels = self._compile_flags
        tiers = self._tiers
        if optimize and (self._compiled is None or tiers is not None and not tiers.final):
            self._compiled = tiers.wait() if tiers is not None else \
                _compile(self.plan, jit_kernels)
            if self._compiled is None:
                self._compile_flags = (False, False)
            self.graph.optimized = self._compiled
        return self._compiled

    @property
    def tier(self):
        """What a call runs now: ``"plan"`` (uncompiled), ``"compiling"`` (uncompiled, or a
        cheaper tier: compiled without Numba kernels, while the compiler works in the
        background) or ``"compiled"``."""
        runner, tiers = self._runner(), self._tiers
        if runner is not None and (tiers is None or tiers.final):
            return "compiled"
        return "compiling" if tiers is not None and tiers.started and not tiers.failed \
            else "plan"

    def wait_compiled(self, timeout=None):
        """Compile now if this trace compiles at all (a lazy trace: start its background
        compilation if it has not started, and wait for it); returns the compiled plan or
        None."""
        if self._tiers is not None:
            self._tiers.wait(timeout)
        return self._runner()

    def _runner(self):
        """The compiled plan this call runs, or None: the plan, uncompiled ("never", or a lazy
        trace not compiled yet)."""
        tiers = self._tiers
        if tiers is None or not self._compile_flags[0]:
            return self._compiled if self._compiled is not None or \
                not self._compile_flags[0] else self.compiled
        ready = tiers.ready
        if ready is not self._compiled and ready is not None:  # a tier is done: swap it in
            self._compiled = ready
            self.graph.optimized = ready
        return ready

    def _uncompiled(self, entry, fed, run):
        """``run()`` (the plan, uncompiled), timed and counted towards compiling (lazy)."""
        start = time.perf_counter()
        with running():
            values = run()
        if self._tiers is not None:
            self._tiers.ran(time.perf_counter() - start, entry, fed)
        return values

    @property
    def compile_time(self):
        """Seconds spent compiling this trace (0.0 when it runs uncompiled or not yet)."""
        return 0.0 if self._compiled is None else self._compiled.compile_time

    @property
    def optimized_steps(self):
        """The steps one call runs, after optimization (one line per op)."""
        if self.compiled is None:
            return [f"{node.prim.name}" for *_, node in self.plan.steps]
        return self.compiled.optimized_steps

    def feed_flags(self, flags, captured=False):
        """Per input of the plan: the flag of its leaf in ``flags`` (one per leaf), then
        ``captured`` for each lifted capture."""
        return [flags[i] for i in self.inputs] + [captured] * len(self.lifted_slots)

    def _fed(self, leaves, captures):
        return [leaves[i] for i in self.inputs] + list(captures)

    def run_batched(self, leaves, batched, captures=()):
        """Outputs for leaves whose flagged members carry a leading batch axis (``captures``:
        the lifted inputs' values, see ``tracing.capture.Capture.feeds``)."""
        return self._pack(self._run_batched(self._runner(), self._fed(leaves, captures),
                                            self.feed_flags(batched)))

    def _run_batched(self, runner, fed, flags):
        if runner is not None:
            try:
                return runner.run_batched(fed, flags)
            except LoweringFailed as exc:
                self._give_up(exc)
        k = next((np.shape(v)[0] for v, f in zip(fed, flags) if f), 0)
        return self._uncompiled(("batched", tuple(flags), k), fed,
                                lambda: self.plan.run_batched(fed, flags))

    def batched_outputs(self, batched):
        """Per leaf of ``flatten(structured_outputs)``: whether it depends on the leaves
        flagged in ``batched`` (one flag per leaf of the call), i.e. carries the batch axis
        in :meth:`run_batched` (the others are computed once and broadcast)."""
        key = tuple(bool(batched[i]) for i in self.inputs)
        flags = self._batched_outputs.get(key)
        if flags is None:
            batched_ids = dependent(  # nodes in creation order: inputs before their users
                ((map(id, n.inputs), map(id, n.outputs)) for n in self.graph.nodes),
                {id(p) for p, flag in zip(self.placeholders, key) if flag})
            flags = self._batched_outputs[key] = [
                isinstance(o, Tensor) and id(o) in batched_ids for o in self.outputs]
        return flags

    def run_batched_outputs(self, leaves, batched, jit_kernels=True, captures=()):
        """``(outputs, flags)`` of a batched run (see :meth:`run_batched`): the leaves of
        ``flatten(structured_outputs)`` and :meth:`batched_outputs`. A leaf that does not
        depend on the batch is its one value (not broadcast); non-tensor leaves are as the
        function returned them. ``jit_kernels=False`` runs the program compiled without
        Numba kernels, which takes milliseconds to build for a new batch size where kernels
        can take a second (they are compiled for each batch size)."""
        runner = self._runner()
        if runner is not None and not jit_kernels:
            runner = self._without_kernels()
        values = self._checked(self._run_batched(runner, self._fed(leaves, captures),
                                                 self.feed_flags(batched)))
        out_flags = self.batched_outputs(batched)
        outs = list(self.outputs)
        for k, v in zip(self._fetch_index, values):
            outs[k] = owned(v) if out_flags[k] else v[0]  # a broadcast view's one value
        return outs, out_flags

    def _without_kernels(self):
        """The plan compiled without Numba kernels (built on first use), or None uncompiled."""
        optimize, jit_kernels = self._compile_flags
        if not jit_kernels:
            return self.compiled
        if self._light is None:
            self._light = _compile(self.plan, False) or self.plan
        return self._light

    def specialize(self, leaves, static, captures=()):
        """This trace with the leaves flagged in ``static`` (and the lifted captures) fixed
        at their values: the ops that depend on them alone run now, once; the returned
        :class:`Specialized` runs the rest for the other leaves. None when the trace runs
        uncompiled. A lazy trace not compiled yet returns a :class:`LazySpecialized`: the
        plan, uncompiled, until the split of a compiled tier is ready (no call waits)."""
        tiers = self._tiers
        if tiers is not None and self._compile_flags[0] and not tiers.final:
            return LazySpecialized(self, leaves, static, captures)
        compiled = self.compiled
        if compiled is None:
            return None
        flags = self.feed_flags(static, True)
        runner = compiled.split(flags)
        fed = self._fed(leaves, captures)
        bound = runner.at([v for v, f in zip(fed, flags) if f])
        return Specialized(self, bound)

    def _checked(self, values):
        """The outputs among a run's ``values``, once the guards after them held (for each
        member of a batch): else GuardFailed."""
        if not self.guards:
            return values
        n = len(self._fetch_index)
        for (t, convert, expected), value in zip(self.guards, values[n:]):
            if not _holds(value, convert, expected, np.ndim(value) > len(t.shape or ())):
                raise GuardFailed(
                    f"this trace took a branch on the value of {t.name} (the truth value or "
                    f"int() of it gave {expected!r}) that goes another way here; trace again "
                    "at this point")
        return values[:n]

    def guards_hold(self, leaves, captures=()):
        """Whether the Python branches this trace took on values go the same way at
        ``leaves`` (its guards, run alone)."""
        if not self.guards:
            return True
        if self._guard_plan is None:
            self._guard_plan = Plan(self.graph, [t for t, _, _ in self.guards], self._feeds)
        values = self._guard_plan.run(self._fed(leaves, captures))
        return all(_holds(v, c, e, False) for v, (_, c, e) in zip(values, self.guards))

    def _pack(self, values, as_tensors=False):
        values = self._checked(values)
        if self._single:
            return Tensor(np.asarray(values[0])) if as_tensors else owned(values[0])
        outs = list(self.outputs)
        for k, v in zip(self._fetch_index, values):
            outs[k] = Tensor(np.asarray(v)) if as_tensors else owned(v)
        return pack_as(self.structured_outputs, outs)

    def __call__(self, leaves, as_tensors, captures=()):
        runner = self._compiled if self._tiers is None and self._compiled is not None else \
            self._runner()
        fed = self._fed(leaves, captures)
        if runner is not None:
            try:
                return self._pack(runner.run(fed), as_tensors)
            except LoweringFailed as exc:
                self._give_up(exc)
        return self._pack(self._uncompiled(("run",), fed, lambda: self.plan.run(fed)),
                          as_tensors)

    def _give_up(self, exc):
        """Lowering failed at a run: this trace runs uncompiled from now on (warned)."""
        warnings.warn(f"hessgrad.function: graph compilation failed ({exc}); running the "
                      "uncompiled plan", RuntimeWarning, stacklevel=4)
        self._compile_flags = (False, False)
        self._compiled = self._light = None
        self.graph.optimized = None


class Specialized:
    """A trace with some inputs fixed (see :meth:`ConcreteFunction.specialize`): called with
    the remaining array leaves, in order, it returns the function's outputs (numpy)."""

    compiled = True  # runs the compiled split (LazySpecialized: once a tier is ready)

    def __init__(self, concrete, bound):
        self.concrete = concrete
        self.bound = bound

    def __call__(self, leaves):
        runner = self.bound.runner
        if not runner.blocks:
            return self.concrete._pack(self.bound.run(leaves))
        start = time.perf_counter()  # timed for the batches: see blocks.Blocks
        out = self.bound.run(leaves)
        Blocks.note_single(runner, time.perf_counter() - start)
        return self.concrete._pack(out)

    @property
    def largest_intermediate(self):
        """Elements in the largest array one call computes."""
        return self.bound.runner.largest_intermediate

    def run_batched(self, leaves, batched):
        """Outputs for leaves whose flagged members carry a leading batch axis: in blocks
        of one compiled size whatever the batch size (see :mod:`.blocks`)."""
        blocks = Blocks.of(self.bound.runner, batched, self.concrete.mode)
        return self.concrete._pack(blocks.run(self.bound, leaves, batched))

    @property
    def batched_programs(self):
        """How many batched programs the per-call part compiled (shared by all points)."""
        return self.bound.runner.batched_programs


class LazySpecialized:
    """:class:`Specialized` for a lazy trace not compiled yet (``"lazy"``, see :mod:`.tiers`):
    each call runs the trace's plan uncompiled, its steps that depend on the fixed leaves
    alone run once (:meth:`~hessgrad.engine.graph.Plan.at`), counted towards
    compiling the trace (hot: compiled in the background, with this split built and warmed
    up for each tier); a call that finds a tier ready whose split is built binds the split
    at the fixed values (its setup runs once, compiled) and every later call runs its
    per-call part, as :class:`Specialized`. No call waits for the compiler. Calls give the
    same numbers as :class:`Specialized` up to rounding."""

    def __init__(self, concrete, leaves, static, captures=()):
        self.concrete = concrete
        self.static = [bool(f) for f in static]
        self._leaves = list(leaves)
        self._captures = list(captures)
        self._flags = tuple(concrete.feed_flags(self.static, True))
        self._entry = ("split", self._flags)
        self._source = None  # the compiled plan the split is of
        self._inner = None   # its Specialized, once bound
        self._plan_at = None  # the uncompiled plan at the fixed values (see _at)
        concrete._tiers.want(self._entry, concrete._fed(self._leaves, self._captures))
        self._refresh()

    @property
    def compiled(self):
        """Whether calls run the compiled split now (checked anew)."""
        return self._refresh() is not None

    def _refresh(self):
        """The Specialized of the best ready tier whose split is built (bound once per tier),
        or None: not compiled yet. A tier that is final and lacks the split (asked for after
        the compilation ended) builds it now."""
        concrete = self.concrete
        ready = concrete._runner()
        if ready is None or ready is self._source:
            return self._inner
        if not ready.has_split(self._flags) and not concrete._tiers.final:
            return self._inner  # the next tier builds it (want), or an older one runs
        fed = concrete._fed(self._leaves, self._captures)
        runner = ready.split(list(self._flags))
        bound = runner.at([v for v, f in zip(fed, self._flags) if f])
        self._inner, self._source = Specialized(concrete, bound), ready
        self._plan_at = None
        return self._inner

    def _full(self, dynamic):
        """The call's leaves: the fixed ones and ``dynamic`` (the others, in order)."""
        it = iter(dynamic)
        return [v if f else next(it) for v, f in zip(self._leaves, self.static)]

    def _at(self):
        """The plan with the fixed feeds folded in (built at the first uncompiled run)."""
        if self._plan_at is None:
            fed = self.concrete._fed(self._leaves, self._captures)
            with running():
                self._plan_at = self.concrete.plan.at(
                    self._flags, [v for v, f in zip(fed, self._flags) if f])
        return self._plan_at

    def _count(self, seconds, leaves):
        """Count an uncompiled run towards compiling the trace (with the split as what the
        compiled tiers warm up)."""
        tiers = self.concrete._tiers
        if tiers is not None:
            tiers.ran(seconds, self._entry, self.concrete._fed(self._full(leaves),
                                                               self._captures))

    def __call__(self, leaves):
        inner = self._refresh()
        if inner is not None:
            if self.concrete._tiers.final:
                return inner(leaves)
            with running():  # a better tier compiles: it yields to this run
                return inner(leaves)
        at = self._at()
        start = time.perf_counter()
        with running():
            values = at.run(leaves)
        self._count(time.perf_counter() - start, leaves)
        return self.concrete._pack(values)

    def run_batched(self, leaves, batched):
        """Outputs for leaves whose flagged members carry a leading batch axis (compiled:
        in blocks, see :meth:`Specialized.run_batched`; before, one batched run of the
        plan, counted as one call)."""
        inner = self._refresh()
        if inner is not None:
            return inner.run_batched(leaves, batched)
        at = self._at()
        start = time.perf_counter()
        with running():
            values = at.run_batched(leaves, batched)
        if len(values) and len(values[0]):  # warm the split with the first member
            self._count(time.perf_counter() - start,
                        [v[0] if f else v for v, f in zip(leaves, batched)])
        return self.concrete._pack(values)

    @property
    def largest_intermediate(self):
        """Elements in the largest array one call computes (that depends on the leaves not
        fixed: what the split's per-call part computes)."""
        inner = self._refresh()
        if inner is not None:
            return inner.largest_intermediate
        return self.concrete.plan.largest_batched_size(
            self.concrete.feed_flags([not f for f in self.static]))

    @property
    def batched_programs(self):
        """How many batched programs the per-call part compiled (0 before it is bound)."""
        inner = self._refresh()
        return 0 if inner is None else inner.batched_programs


class Function:
    """A Python function traced into a graph per input signature and run as that graph.

    Its traces are kept and trusted, as ``jax.jit`` keeps its: values the function reads
    from outside its arguments (globals, closures, attributes, random draws) are read when a
    signature is first traced and baked in; pass data that changes as arguments, or call
    :meth:`clear_cache`. (The caches hessgrad keeps on its own, in ``hessian``, ``make_hvp``
    and the like, check what ``f`` captured at every call instead: see
    ``hessgrad.tracing.capture``. Passing them a ``Function`` says its traces may be trusted.)

    The function is traced at the values of the call, so Python code may branch on them
    (``if s != 0:``, Python's ``max`` of tensors, ``int()`` of a tensor): the branch taken is a
    *guard* of the trace, checked at every run; a call that branches otherwise gets a trace of
    its own (at most ``MAX_SPECIALIZATIONS`` kept per signature). Branches inside
    ``hg.while_loop`` bodies still need ``hg.cond``.

    Arrays, tensors and Python floats and complexes become graph inputs; other Python values
    (ints, bools, strings, shapes) are baked into the trace and select it. Python floats and
    complexes stay *weak*, as numpy 2 keeps them (see :attr:`Tensor.weak`): ``x * s`` with a
    float32 ``x`` and ``s=0.5`` is float32, with ``s=np.float64(0.5)`` float64 (another
    trace). Called with numpy values it returns numpy values; called with tensors it returns
    tensors. Under an active tape or accumulator, and inside another trace, the Python
    function runs inline so every op is recorded.

    >>> import hessgrad as hg
    >>> @hg.function
    ... def f(x):
    ...     return hg.reduce_sum(x ** 2)
    >>> float(f(np.array([1.0, 2.0])))
    5.0
    """

    caches_traces = True  # see tracing.capture.CaptureCache: the user asked for caching
    # Traces kept per signature when Python branches on values (guards) go different ways at
    # different calls; beyond, the least recently used is dropped (with a warning, once).
    MAX_SPECIALIZATIONS = 8

    def __init__(self, fn, input_signature=None, jit_compile=None, reduce_retracing=False, *,
                 optimize=True, jit_kernels=True, compile=None):
        del input_signature, jit_compile, reduce_retracing
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.optimize = optimize
        self.jit_kernels = jit_kernels
        compile_mode(compile)  # a bad value fails here, not at the first call
        self.compile = compile
        self._traces = {}  # signature -> its traces, the most recently used first
        # (shape, dtype) of each positional ndarray argument -> trace: calls with plain
        # arrays skip flattening and the structural key (a few microseconds per call).
        self._by_arrays = {}
        self._last = None
        self._warned = False

    def __get__(self, instance, owner):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def clear_cache(self):
        """Forget every trace (the next call traces ``fn`` again, reading what it captures
        anew)."""
        self._traces.clear()
        self._by_arrays.clear()
        self._last = None

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments: of their signature, and taking the branches they
        take where the function branches on values (traced anew otherwise)."""
        key = signature_key(args, kwargs)
        traces = self._traces.setdefault(key, [])
        if len(traces) == 1 and not traces[0].guards:
            concrete = traces[0]
        else:
            concrete = self._specialization(traces, args, kwargs)
        self._last = concrete
        return concrete

    def _specialization(self, traces, args, kwargs):
        leaves = flatten((args, kwargs))
        for k, concrete in enumerate(traces):
            if concrete.guards_hold(leaves):
                traces.insert(0, traces.pop(k))
                return concrete
        concrete = ConcreteFunction(self.python_function, args, kwargs, optimize=self.optimize,
                                    jit_kernels=self.jit_kernels, compile=self.compile)
        traces.insert(0, concrete)
        if len(traces) > self.MAX_SPECIALIZATIONS:
            traces.pop()
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"hessgrad.function: {self.__name__} branches on values (if, max, int() on "
                    f"tensors) differently from call to call: over {self.MAX_SPECIALIZATIONS} "
                    "traces for one signature, the least recently used are dropped and traced "
                    "again when needed; hg.cond or hg.where keeps one trace", RuntimeWarning,
                    stacklevel=4)
        return concrete

    @property
    def graph(self):
        """The graph of the most recent trace (None before the first call). ``print(f.graph)``
        lists its ops as traced and, once compiled, after optimization (``f.graph.optimized``
        is the compiled program: ``ops_before``, ``ops_after``, ``optimized_steps``,
        ``source``)."""
        return None if self._last is None else self._last.graph

    @property
    def compile_time(self):
        """Seconds spent tracing and compiling, over every trace so far."""
        return sum(c.trace_time + c.compile_time for traces in self._traces.values()
                   for c in traces)

    def map(self, *args):
        """``f`` applied to every slice ``args[..][j]`` along a leading axis, in one batched
        run of the traced graph (numpy arrays in, numpy arrays with that axis out).

        >>> import hessgrad as hg
        >>> f = hg.function(lambda x: hg.reduce_sum(x * x))
        >>> f.map(np.array([[1.0, 2.0], [3.0, 4.0]]))
        array([ 5., 25.])
        """
        leaves = flatten(args)
        arrays = [np.asarray(a) for a in leaves]
        sizes = {a.shape[0] for a in arrays if a.ndim}
        if len(sizes) != 1 or any(a.ndim == 0 for a in arrays):
            raise ValueError("Function.map: every argument needs the same leading batch axis, "
                             f"got shapes {[a.shape for a in arrays]}")
        concrete = self.get_concrete_function(*pack_as(args, [a[0] for a in arrays]))
        try:
            return concrete.run_batched(arrays, [True] * len(arrays))
        except GuardFailed:  # members branch differently: each its own trace
            members = [self(*pack_as(args, [a[j] for a in arrays]))
                       for j in range(len(arrays[0]))]
            return pack_as(members[0], [np.stack(column) for column in
                                        zip(*[flatten(m) for m in members])])

    def largest_intermediate(self, *args):
        """Elements in the largest array one call at ``args`` computes (after folding)."""
        return self.get_concrete_function(*args).plan.largest_dynamic_size

    @property
    def experimental_traces(self):
        return sum(len(traces) for traces in self._traces.values())

    def __call__(self, *args, **kwargs):
        state = THREAD.state
        if state.graphs or state.recorders:
            return self.python_function(*args, **kwargs)
        if not kwargs and all(type(a) is np.ndarray for a in args):
            key = tuple((a.shape, a.dtype) for a in args)
            concrete = self._by_arrays.get(key)
            if concrete is not None:
                self._last = concrete
                try:
                    return concrete(args, False)
                except GuardFailed:  # a branch on values goes another way: that trace
                    pass
            concrete = self._by_arrays[key] = self.get_concrete_function(*args)
            return concrete(args, False)
        concrete = self.get_concrete_function(*args, **kwargs)
        leaves = flatten((args, kwargs))
        as_tensors = any(isinstance(x, Tensor) for x in leaves)
        return concrete(leaves, as_tensors)


def function(func=None, input_signature=None, jit_compile=None, reduce_retracing=False, *,
             optimize=True, jit_kernels=True, compile=None):
    """Decorator: trace ``func`` into a graph (see :class:`Function`).

    ``compile`` says when a trace's plan is compiled (:mod:`hessgrad.tracing.tiers`):

    * ``"lazy"`` (the default): the first calls run the traced plan uncompiled; once the
      trace is hot (its second call, or uncompiled runs as long as the estimated compile
      time) it compiles in a background thread, first without Numba kernels, then with
      them, and later calls run the best compiled program ready.
      No call waits for the compiler, and a trace called once never pays for it.
    * ``"eager"``: compile at the first call, which waits (best for a function called many
      times right away, and for benchmarks timing steady state from the second call).
    * ``"never"``: always run the plan uncompiled (as ``optimize=False``).

    ``optimize=False`` runs the traced plan step by step (no compilation);
    ``jit_kernels=False`` compiles without Numba kernels (for debugging). The environment
    variables ``HESSGRAD_COMPILE`` (``0``/``never``, ``1``/``eager``, ``lazy``: the mode of
    traces that do not choose; ``0`` turns compilation off everywhere) and
    ``HESSGRAD_JIT_KERNELS=0`` apply globally.
    """
    flags = dict(optimize=optimize, jit_kernels=jit_kernels, compile=compile)
    if func is None:
        return lambda f: Function(f, input_signature, jit_compile, reduce_retracing, **flags)
    return Function(func, input_signature, jit_compile, reduce_retracing, **flags)
