"""``hessgrad.function``: trace a Python function into a graph once per input signature."""

import functools
import os
import time
import warnings

import numpy as np

from ..compiler import compile_plan
from ..engine.graph import Graph, Plan, dependent
from ..engine.nest import flatten, pack_as, structure_key
from ..engine.state import THREAD
from ..engine.tensor import Tensor, Variable, owned

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


class ConcreteFunction:
    """One trace of a Function: its graph, placeholders and an execution plan.

    With ``optimize`` the plan is compiled (:mod:`hessgrad.compiler`): ``compiled`` holds the
    optimized program (``compiled.optimized_steps``, ``ops_before``/``ops_after``, the
    generated ``source``), ``jit_kernels`` adds fused Numba kernels for large elementwise
    trees. ``trace_time`` and ``compile_time`` are in seconds.
    """

    def __init__(self, fn, args, kwargs, optimize=True, jit_kernels=True):
        start = time.perf_counter()
        leaves = flatten((args, kwargs))
        self.graph = Graph()
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
        self.plan = Plan(self.graph, [self.outputs[k] for k in self._fetch_index], feeds)
        # One Tensor out (a loss, a gradient): calls return the fetched value as it is.
        self._single = isinstance(self.structured_outputs, Tensor)
        self.trace_time = time.perf_counter() - start
        # Compiled at the first call (a trace that is only analyzed never pays for it).
        self._compile_flags = (optimize and _env_flag("HESSGRAD_COMPILE"),
                               jit_kernels and _env_flag("HESSGRAD_JIT_KERNELS"))
        self._compiled = None
        self._light = None  # compiled without kernels (see run_batched_outputs)
        self._batched_outputs = {}

    @property
    def compiled(self):
        """The :class:`hessgrad.compiler.CompiledPlan` of this trace (built on first use), or
        None when it runs uncompiled (``optimize=False``)."""
        optimize, jit_kernels = self._compile_flags
        if optimize and self._compiled is None:
            self._compiled = _compile(self.plan, jit_kernels)
            if self._compiled is None:
                self._compile_flags = (False, False)
            self.graph.optimized = self._compiled
        return self._compiled

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
        return self._pack((self.compiled or self.plan).run_batched(
            self._fed(leaves, captures), self.feed_flags(batched)))

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
        runner = self.compiled if jit_kernels else self._without_kernels()
        values = (runner or self.plan).run_batched(self._fed(leaves, captures),
                                                   self.feed_flags(batched))
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
        uncompiled."""
        compiled = self.compiled
        if compiled is None:
            return None
        flags = self.feed_flags(static, True)
        runner = compiled.split(flags)
        fed = self._fed(leaves, captures)
        bound = runner.at([v for v, f in zip(fed, flags) if f])
        return Specialized(self, bound)

    def _pack(self, values, as_tensors=False):
        if self._single:
            return Tensor(np.asarray(values[0])) if as_tensors else owned(values[0])
        outs = list(self.outputs)
        for k, v in zip(self._fetch_index, values):
            outs[k] = Tensor(np.asarray(v)) if as_tensors else owned(v)
        return pack_as(self.structured_outputs, outs)

    def __call__(self, leaves, as_tensors, captures=()):
        runner = self._compiled or self.compiled or self.plan
        return self._pack(runner.run(self._fed(leaves, captures)), as_tensors)


class Specialized:
    """A trace with some inputs fixed (see :meth:`ConcreteFunction.specialize`): called with
    the remaining array leaves, in order, it returns the function's outputs (numpy)."""

    def __init__(self, concrete, bound):
        self.concrete = concrete
        self.bound = bound

    def __call__(self, leaves):
        return self.concrete._pack(self.bound.run(leaves))

    @property
    def largest_intermediate(self):
        """Elements in the largest array one call computes."""
        return self.bound.runner.largest_intermediate

    def run_batched(self, leaves, batched):
        """Outputs for leaves whose flagged members carry a leading batch axis."""
        return self.concrete._pack(self.bound.run_batched(leaves, batched))


class Function:
    """A Python function traced into a graph per input signature and run as that graph.

    Its traces are kept and trusted, as ``jax.jit`` keeps its: values the function reads
    from outside its arguments (globals, closures, attributes, random draws) are read when a
    signature is first traced and baked in; pass data that changes as arguments, or call
    :meth:`clear_cache`. (The caches hessgrad keeps on its own, in ``hessian``, ``make_hvp``
    and the like, check what ``f`` captured at every call instead: see
    ``hessgrad.tracing.capture``. Passing them a ``Function`` says its traces may be trusted.)

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

    def __init__(self, fn, input_signature=None, jit_compile=None, reduce_retracing=False, *,
                 optimize=True, jit_kernels=True):
        del input_signature, jit_compile, reduce_retracing
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.optimize = optimize
        self.jit_kernels = jit_kernels
        self._traces = {}
        # (shape, dtype) of each positional ndarray argument -> trace: calls with plain
        # arrays skip flattening and the structural key (a few microseconds per call).
        self._by_arrays = {}
        self._last = None

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
        key = signature_key(args, kwargs)
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = self._traces[key] = ConcreteFunction(
                self.python_function, args, kwargs, optimize=self.optimize,
                jit_kernels=self.jit_kernels)
        self._last = concrete
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
        return sum(c.trace_time + c.compile_time for c in self._traces.values())

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
        return concrete.run_batched(arrays, [True] * len(arrays))

    def largest_intermediate(self, *args):
        """Elements in the largest array one call at ``args`` computes (after folding)."""
        return self.get_concrete_function(*args).plan.largest_dynamic_size

    @property
    def experimental_traces(self):
        return len(self._traces)

    def __call__(self, *args, **kwargs):
        state = THREAD.state
        if state.graphs or state.recorders:
            return self.python_function(*args, **kwargs)
        if not kwargs and all(type(a) is np.ndarray for a in args):
            key = tuple((a.shape, a.dtype) for a in args)
            concrete = self._by_arrays.get(key)
            if concrete is None:
                concrete = self._by_arrays[key] = self.get_concrete_function(*args)
            self._last = concrete
            return concrete(args, False)
        concrete = self.get_concrete_function(*args, **kwargs)
        leaves = flatten((args, kwargs))
        as_tensors = any(isinstance(x, Tensor) for x in leaves)
        return concrete(leaves, as_tensors)


def function(func=None, input_signature=None, jit_compile=None, reduce_retracing=False, *,
             optimize=True, jit_kernels=True):
    """Decorator: trace ``func`` into a graph (see :class:`Function`).

    ``optimize=False`` runs the traced plan step by step (no compilation);
    ``jit_kernels=False`` compiles without Numba kernels (for debugging). The environment
    variables ``HESSGRAD_COMPILE=0`` and ``HESSGRAD_JIT_KERNELS=0`` turn them off globally.
    """
    flags = dict(optimize=optimize, jit_kernels=jit_kernels)
    if func is None:
        return lambda f: Function(f, input_signature, jit_compile, reduce_retracing, **flags)
    return Function(func, input_signature, jit_compile, reduce_retracing, **flags)
