"""Capture checks: a cached trace is reused only while what it captured is unchanged.

A trace of ``f`` bakes in everything ``f`` read from outside its arguments: numbers and arrays
from globals, closures and attributes, random draws, the branches taken on them. The caches
that hessgrad keeps without being asked (``hessian``, ``make_hvp``, ``HessianOperator``,
``sparse_hessian``, the SciPy objective, ``vmap``) therefore check each call: ``f`` runs once
eagerly under a :class:`CaptureLog`, which writes down every op it applies, with its
parameters and every operand that is not computed from the arguments (the *capture key*). A
cached program serves only the key it was built under; anything else builds a new one. Only
``hessgrad.function``, where the user asks for caching, trusts its traces (as ``jax.jit``).

Arrays of ``LIFT_SIZE`` elements or more (data matrices) enter the key by shape and dtype
alone: the programs built under the key take them as inputs ("lifted"), fed at every call
with the arrays this call's run read, so a data matrix changed in place or rebound costs no
comparison. A large array that a program could not lift (one created inside ``f``, traced
inside a loop body) is compared by content instead.
"""

import contextlib
import functools
import os
import time
import types
import weakref
from collections import OrderedDict

import numpy as np

from ..engine.graph import Graph
from ..engine.nest import flatten, pack_as, structure_key
from ..engine.registry import Primitive
from ..engine.state import THREAD, Recorder
from ..engine.tensor import ConcretizationError, Tensor, Variable
from .function import ConcreteFunction, signature_key
from .tiers import running

LIFT_SIZE = 1 << 16
# Keys kept per call signature; a function whose key changes at every call (it draws random
# numbers, or a parameter sweep) stops being cached after VOLATILE_AFTER new keys in a row.
VARIANTS = 8
VOLATILE_AFTER = 3
# An eager capture run slower than this is tried symbolically (see CaptureCache.check).
SYMBOLIC_AFTER = 1e-3
# A symbolic run costs at least about this much per op (tracing a node): where an eager run
# costs less than twice that per op (many small ops), a symbolic one cannot be cheaper
SYMBOLIC_SECONDS_PER_OP = 20e-6
# How capture runs run: "auto" (as CaptureCache.check says), or always "eager" or "symbolic"
# (where the function allows), e.g. to compare them.
MODE = os.environ.get("HESSGRAD_CAPTURE", "auto")


class _Same:
    """An object compared by identity inside a key (and kept alive by it, so that its id is
    not reused while the key exists)."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __eq__(self, other):
        return type(other) is _Same and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


_SIMPLE = frozenset((type(None), bool, int, str, bytes, type(Ellipsis)))
_PLAIN_PARAMS = frozenset((type(None), bool, int, str, type(Ellipsis)))


_NOT_PLAIN = object()


def _plain(v):
    """A parameter that is an int, a string, None, or a slice or tuple of them (an index, an
    axis, a shape: the commonest case) as a token that compares exactly; else _NOT_PLAIN."""
    kind = type(v)
    if kind in _PLAIN_PARAMS:
        return v
    if kind is slice:
        if type(v.start) in _PLAIN_PARAMS and type(v.stop) in _PLAIN_PARAMS and \
                type(v.step) in _PLAIN_PARAMS:
            return (slice, v.start, v.stop, v.step)
        return _NOT_PLAIN
    if kind is tuple:
        parts = tuple([_plain(x) for x in v])
        return _NOT_PLAIN if _NOT_PLAIN in parts else (tuple, parts)
    return _NOT_PLAIN
_STABLE = (types.BuiltinFunctionType, np.ufunc, type, types.ModuleType, Primitive)


class CaptureLog(Recorder):
    """Observes one run of a function: every op (constant ops too) with its parameters and
    operands, operands named by where they come from (an argument, an earlier op's result) or,
    when they come from outside, by value. ``key()`` is the run's capture key; ``big`` the large
    arrays it read, in order of first use."""

    sees_constants = True

    def __init__(self, sources):
        self.origin = {id(t): ("arg", i) for i, t in enumerate(sources)}
        self.alive = list(sources)  # tensors whose ids are in ``origin``
        self.ops = []
        self.big = []
        self._big_slot = {}

    def __enter__(self):
        THREAD.state.capturing += 1
        return super().__enter__()

    def __exit__(self, *exc):
        THREAD.state.capturing -= 1
        return super().__exit__(*exc)

    def observe(self, prim, args, params, outs, node, level):
        origin = self.origin
        tokens = []
        for a in args:
            token = origin.get(id(a)) if type(a) is Tensor else None
            tokens.append(token if token is not None else self.operand(a))
        k = len(self.ops)
        self.ops.append((prim, self.params(params) if params else (), tuple(tokens)))
        if len(outs) == 1:
            origin[id(outs[0])] = ("op", k, 0)
        else:
            for i, o in enumerate(outs):
                origin[id(o)] = ("op", k, i)
        self.alive.append(outs)
        return node

    def params(self, params):
        """An op's parameters: as they are when they are ints, strings, None, and tuples or
        slices of ints (exact, hashable, the commonest case); else by :meth:`value`."""
        items = []
        for k, v in params.items():
            token = _plain(v)
            if token is _NOT_PLAIN:
                return self.value(params)
            items.append((k, token))
        return tuple(items)

    def observe_write(self, value, what):
        """A write in place into an array made outside the function (one whose value this
        run did not compute) is refused: the caches run a trace of the function instead of
        the function, which could not repeat the write."""
        if id(value) not in self.origin:
            raise ValueError(
                f"{what}: writes into an array of shape {tuple(value.shape)} created outside "
                f"the function; hessgrad runs a cached trace of it (hessian, make_hvp, vmap, "
                f"sparse_hessian, the SciPy objective, ...), which could not repeat the write. "
                f"Create the array inside the function (hnp.zeros(...)), or return the values "
                f"instead of storing them")

    def note_constant(self, tensor, value):
        """``tensor`` was made from ``value`` (``hessgrad.constant``): name it by ``value``,
        the object the function read (the tensor holds a copy)."""
        self.origin[id(tensor)] = self.value(value)
        self.alive.append(tensor)

    def operand(self, a):
        """The token of an op's input: where it comes from, or its value."""
        if isinstance(a, Tensor):
            token = self.origin.get(id(a))
            if token is not None:
                return token
            if type(a) is Variable:
                return ("var", _Same(a))
            if a._value is None:
                return ("symbolic", _Same(a))
            return self.array(a._value)
        return self.value(a)

    def array(self, a):
        if a.dtype.hasobject:
            return ("objects", _Same(a))
        if a.size >= LIFT_SIZE:
            slot = self._big_slot.get(id(a))
            if slot is None:
                slot = self._big_slot[id(a)] = len(self.big)
                self.big.append(a)
            return ("big", slot, a.shape, a.dtype.str)
        return ("array", a.shape, a.dtype.str, a.tobytes())

    def value(self, v, depth=0):
        """A hashable token for a parameter or an operand from outside: equal tokens mean the
        same value (numbers and arrays by value and exact type, functions by code and what
        they read, other objects by identity)."""
        kind = type(v)
        if kind in _SIMPLE:
            return (kind, v)
        if kind is float:
            return (float, v.hex())  # tells -0.0 from 0.0; nan equals itself
        if kind is tuple or kind is list:
            return (kind, tuple([self.value(x, depth) for x in v]))
        if kind is dict:  # params: built by the same code in the same order
            return (dict, tuple([(k, self.value(x, depth)) for k, x in v.items()]))
        if kind is complex:
            return (complex, v.real.hex(), v.imag.hex())
        if kind is np.ndarray:
            return self.array(v)
        if isinstance(v, Tensor):
            return self.operand(v)
        if isinstance(v, np.generic):
            return self.array(np.asarray(v)) + ("scalar",)
        if isinstance(v, np.dtype):
            return ("dtype", v.str)
        if kind is slice:
            return (slice, self.value((v.start, v.stop, v.step), depth))
        if isinstance(v, _STABLE):
            return _Same(v)
        if depth < 3:
            if isinstance(v, types.FunctionType):
                return self.function(v, depth + 1)
            if isinstance(v, types.MethodType):
                return ("method", self.value(v.__func__, depth), _Same(v.__self__))
            if isinstance(v, functools.partial):
                return ("partial", self.value(v.func, depth), self.value(v.args, depth),
                        self.value(v.keywords, depth))
        return _Same(v)

    def function(self, fn, depth):
        """A function (a custom gradient's ``grad_fn``, created anew at every call) by its code
        and what it reads: closure cells, defaults, and the globals its code names."""
        cells = tuple(self.value(_cell(c), depth) for c in fn.__closure__ or ())
        names = sorted(_names(fn.__code__))
        env = fn.__globals__
        read = tuple((name, self.value(env[name], depth)) for name in names if name in env)
        return ("function", _Same(fn.__code__), cells, self.value(fn.__defaults__, depth), read)

    def key(self, result):
        if isinstance(result, Tensor):
            return (tuple(self.ops), self.operand(result))
        leaves = flatten(result)
        return (tuple(self.ops), structure_key(result, leaves),
                tuple(self.operand(x) for x in leaves))


def _cell(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a variable not assigned yet)
        return None


def _names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


class _CleanState:
    """A context with no recorders and no graphs: the capture run is an eager run, also when
    a cache is consulted while a trace or a tape is active."""

    def __enter__(self):
        state = THREAD.state
        self.saved = (state.recorders, state.limit, state.graphs, state.plain_values,
                      state.lift)
        state.recorders, state.limit, state.graphs, state.plain_values, state.lift = \
            [], None, [], False, None

    def __exit__(self, *exc):
        state = THREAD.state
        (state.recorders, state.limit, state.graphs, state.plain_values,
         state.lift) = self.saved


class Capture:
    """One call's capture run: ``key``, and the large arrays ``big`` that programs built under
    the key take as inputs."""

    __slots__ = ("key", "big", "_rerun", "_stable")

    def __init__(self, key, big, rerun=None):
        self.key, self.big = key, big
        self._rerun = rerun
        self._stable = None

    def feeds(self, concrete):
        """The values of the inputs that ``concrete`` (a trace built under this key) lifted."""
        return [self.big[s] for s in concrete.lifted_slots]

    def ops(self):
        """How many ops the run saw."""
        return len(self.key[0]) if type(self.key) is tuple else 0

    def stable(self):
        """Whether a second run gives the same key (once per call): a function that changed
        while it was traced (it draws random numbers) has no key its programs could be kept
        under."""
        if self._stable is None:
            self._stable = self._rerun is not None and self._rerun().key == self.key
        return self._stable


TRUSTED = Capture(None, [])  # an explicit hessgrad.function: its traces are the user's choice


def capture(f, args, kwargs, symbolic=False):
    """Run ``f(*args, **kwargs)`` under a :class:`CaptureLog`: its :class:`Capture`.

    Eagerly by default. ``symbolic``: on placeholders, in a graph thrown away afterwards, at
    a cost independent of the data's size (an eager run of a function of a large matrix
    costs its products); raises ConcretizationError when ``f`` needs values (Python control
    flow on them). An eager run that fails (``f`` builds graph-only ops such as
    ``gradients``) gets a key no other run has: its programs are built at every call and
    never kept."""
    try:
        return Capture(*_logged_run(f, args, kwargs, symbolic),
                       lambda: capture(f, args, kwargs, symbolic))
    except Exception:  # noqa: BLE001 - the traced call reports f's own errors
        if symbolic:
            raise
        return Capture(_Same(object()), [])


def _logged_run(f, args, kwargs, symbolic):
    """``(key, big)`` of one run of ``f`` under a :class:`CaptureLog`."""
    graph = Graph() if symbolic else None
    try:
        with _CleanState(), graph.as_default() if symbolic else _NO_GRAPH:
            sources = []
            if not kwargs and all(type(a) is np.ndarray for a in args):  # the commonest call
                c_args, c_kwargs = [_source(a, sources, graph) for a in args], {}
            else:
                leaves = [_source(x, sources, graph) for x in flatten((args, kwargs))]
                c_args, c_kwargs = pack_as((args, kwargs), leaves)
            with CaptureLog(sources) as log:
                result = f(*c_args, **c_kwargs)
            return log.key(result), log.big
    finally:
        if symbolic:
            graph.discard()


_NO_GRAPH = contextlib.nullcontext()


def _source(x, sources, graph):
    """An argument as the capture run passes it: what a trace makes an input (arrays,
    tensors, floats) as a tensor named by its position (a placeholder in a graph); other
    values as they are (a trace bakes them in, and the signature tells them apart)."""
    if type(x) is Variable:
        return x
    if isinstance(x, Tensor):
        x = x.numpy()
    if isinstance(x, (np.ndarray, np.generic, float, complex)) and not isinstance(
            x, (bool, np.bool_)):
        if graph is None:
            t = Tensor(np.asarray(x))
        else:
            t = graph.placeholder(np.result_type(x), np.shape(x))
            t._weak = isinstance(x, (float, complex)) and not isinstance(x, np.generic)
        sources.append(t)
        return t
    return x


def _call_signature(args, kwargs):
    if not kwargs and all(type(a) is np.ndarray for a in args):
        return tuple((a.shape, a.dtype.str) for a in args)
    return signature_key(args, kwargs)


class Lifting:
    """While programs are traced under a capture key: the key's large arrays by identity, and
    which of them each trace took as an input (see ``ConcreteFunction``)."""

    def __init__(self, cap):
        self.slots = {id(a): s for s, a in enumerate(cap.big)}
        self.big = cap.big
        self.tracing = None  # the graph whose trace lifts now (traces inside it do not)
        self.lifted = set()  # slots some trace took as an input
        self.baked = set()   # slots some graph holds as a constant (a trace inside another)

    def safe(self):
        """The slots every program took as an input: the others are compared by content."""
        return self.lifted - self.baked

    def __enter__(self):
        state = THREAD.state
        self.saved, state.lift = state.lift, self
        return self

    def __exit__(self, *exc):
        THREAD.state.lift = self.saved


class _Entry:
    __slots__ = ("value", "compared")

    def __init__(self, value, compared):
        self.value = value
        self.compared = compared  # slot -> the bytes of a large array that was not lifted

    def matches(self, cap):
        return all(cap.big[s].tobytes() == data for s, data in self.compared.items())


_CACHES = weakref.WeakSet()


class CaptureCache:
    """Values built from traces of ``f`` (programs, sparsity patterns, colorings), per call
    signature and capture key.

    ``check(args, kwargs)`` runs the capture run of a call; ``get(signature, cap, build)``
    returns the value built under ``cap``'s key, else ``build(once)``'s, traced while the
    key's large arrays are lifted. A new value is kept when the key is stable (see
    :meth:`Capture.stable`). After ``VOLATILE_AFTER`` new keys in a row the cache keeps no
    more values for the signature (until a key is found again): ``build`` is then called with
    ``once=True``, so it can skip compiling what runs once.

    ``f`` marked ``caches_traces`` (a ``hessgrad.function``) is trusted: the user asked for
    its traces to be kept, so there is no capture run.
    """

    def __init__(self, f):
        self.f = f
        self.trusted = getattr(f, "caches_traces", False)
        self._entries = {}   # signature -> OrderedDict(key -> [_Entry])
        self._misses = {}    # signature -> new keys in a row
        self._modes = {}     # f's call signature -> how its capture runs ("eager", "symbolic")
        _CACHES.add(self)

    def clear(self):
        self._entries.clear()
        self._misses.clear()
        self._modes.clear()

    def __len__(self):
        """The number of values kept."""
        return sum(len(kept) for variants in self._entries.values()
                   for kept in variants.values())

    def check(self, args, kwargs):
        """The capture run of a call: eager, or symbolic for a call signature whose eager run
        costs more than ``SYMBOLIC_AFTER`` seconds and twice a symbolic one (a function of
        large data: a symbolic run's cost does not grow with it)."""
        if self.trusted:
            return TRUSTED
        with running():  # part of a call: a compiling thread yields to it
            return self._check(args, kwargs)

    def _check(self, args, kwargs):
        sig = _call_signature(args, kwargs)
        mode = self._modes.get(sig) if MODE == "auto" else MODE
        if mode == "symbolic":
            try:
                return capture(self.f, args, kwargs, symbolic=True)
            except Exception:  # noqa: BLE001 - it needs values after all: eager from now on
                self._modes[sig] = mode = "eager"
        start = time.perf_counter()
        cap = capture(self.f, args, kwargs)
        if mode is None:  # the first call of this signature: time it
            self._modes[sig] = "eager"
            eager = time.perf_counter() - start
            if eager > SYMBOLIC_AFTER and eager > 2 * SYMBOLIC_SECONDS_PER_OP * cap.ops():
                start = time.perf_counter()
                try:
                    symbolic = capture(self.f, args, kwargs, symbolic=True)
                except Exception:  # noqa: BLE001 - it needs values (control flow on them)
                    return cap
                if time.perf_counter() - start < eager / 2 and symbolic.stable():
                    self._modes[sig] = "symbolic"
                    return symbolic
        return cap

    def get(self, signature, cap, build, usable=None):
        """The value built under ``cap``'s key (and ``usable(value)``: a trace's guards hold at
        this call), else ``build(once)``'s."""
        variants = self._entries.setdefault(signature, OrderedDict())
        for entry in variants.get(cap.key, ()):
            if entry.matches(cap) and (usable is None or usable(entry.value)):
                variants.move_to_end(cap.key)
                self._misses[signature] = 0
                return entry.value
        misses = self._misses[signature] = self._misses.get(signature, 0) + 1
        once = misses > VOLATILE_AFTER and cap is not TRUSTED
        with Lifting(cap) as lifting:
            value = build(once)
        if cap is TRUSTED or not once and cap.stable():
            safe = lifting.safe()
            compared = {s: a.tobytes() for s, a in enumerate(cap.big) if s not in safe}
            variants.setdefault(cap.key, []).append(_Entry(value, compared))
            variants.move_to_end(cap.key)
            while len(variants) > VARIANTS:
                variants.popitem(last=False)
        return value


def clear_caches():
    """Forget every trace that hessgrad cached without being asked (see
    :class:`CaptureCache`); ``hessgrad.function`` objects keep theirs (``clear_cache()``)."""
    for cache in list(_CACHES):
        cache.clear()


class CapturedTraces:
    """Traces of ``fn``, a transform of ``f`` (its gradient, its HVP), per call signature and
    capture key of ``f``: ``concrete(cap, args, kwargs)`` is the :class:`ConcreteFunction` of
    ``fn(*args, **kwargs)`` built under ``cap`` (compiled without Numba kernels when it is to
    run once) whose branches on values (guards) go as they do at ``args``, or None when ``fn``
    cannot be traced."""

    def __init__(self, fn, f, substitute=None):
        self.fn = fn
        self.cache = CaptureCache(f)
        # substitute(args, kwargs, ops): the function to trace instead of fn at these
        # arguments (ops: how many ops f's capture run made, None if unknown), or None (fn of
        # a re-rolled f, see .reroll); built with the trace, once per capture key
        self.substitute = substitute

    def check(self, args, kwargs):
        return self.cache.check(args, kwargs)

    def concrete(self, cap, args, kwargs):
        def build(once):
            fn = self.fn
            if self.substitute is not None:
                fn = self.substitute(args, kwargs, None if cap is TRUSTED else cap.ops()) or fn
            try:
                return ConcreteFunction(fn, args, kwargs, jit_kernels=not once)
            except ConcretizationError:
                return None
        leaves = flatten((args, kwargs))
        return self.cache.get(signature_key(args, kwargs), cap, build,
                              lambda c: c is None or c.guards_hold(leaves, cap.feeds(c)))
