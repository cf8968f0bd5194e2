"""User-defined derivatives: custom_gradient, recompute_grad, grad_pass_through (TensorFlow's)
and custom_jvp, custom_vjp (JAX's), all one primitive, CUSTOM, whose Python functions are
parameters."""

import contextlib
import functools
import inspect
import threading

import numpy as np

from .engine.dispatch import READ, bind
from .engine.forward import ForwardAccumulator, transpose
from .engine.nest import flatten, pack_as
from .engine.registry import Primitive
from .engine.state import THREAD, Recorder
from .engine.tape import GradientTape
from .engine.tensor import ConcretizationError, Tensor, Variable
from .ops.core import convert_to_tensor, zeros_like
from .ops.core import stop_gradient  # noqa: F401 - part of this module's public family
from .ops.patterns import dense


class _VariableWatcher(Recorder):
    """A recorder that only notes which trainable Variables are read."""

    def __init__(self):
        self.variables = {}

    def observe(self, prim, args, params, outs, node, level):
        if prim is READ and type(args[0]) is Variable and args[0].trainable:
            self.variables.setdefault(id(args[0]), args[0])
        return node


class _Recorders:
    """Run with exactly ``recorders`` observing ops (none paused)."""

    def __init__(self, recorders):
        self.recorders = recorders

    def __enter__(self):
        self.state = state = THREAD.state
        self.saved = state.recorders, state.limit
        state.recorders, state.limit = self.recorders, None

    def __exit__(self, *exc):
        self.state.recorders, self.state.limit = self.saved


# Inputs of a custom_gradient node: the function's tensor arguments, the variables it read
# (as read by the node; the Variable objects themselves are a parameter) and its results.
# ``remaps``: set on a clone of the node in a loop or branch body (control flow's gradient
# rules), where grad_fn and tangents_fn must read the clone's tensors, not those they closed
# over (see Graph.substituting). ``transposed``: the function's ops were not recorded (its
# body computes on numpy values), so forward mode transposes ``grad_fn``.
def _custom_forward(*values, n_args, variables, grad_fn, tangents_fn=None, remaps=(),
                    transposed=False, reads=None):
    return tuple(values[n_args + len(variables):])


def _in_clone(ans, remaps):
    """The context in which the node's Python functions run: reading the clone's tensors."""
    if not remaps:
        return contextlib.nullcontext()
    return ans[0]._node.graph.substituting(remaps)


def _custom_vjp(g, ans, *inputs, n_args, variables, grad_fn, tangents_fn=None, remaps=(),
                transposed=False, reads=None):
    if reads is not None:
        _check_reads(reads, inputs[:n_args + len(variables)])
    with _in_clone(ans, remaps):
        return _call_grad_fn(g, inputs, n_args, variables, grad_fn)


def _call_grad_fn(g, inputs, n_args, variables, grad_fn):
    n_vars = len(variables)
    if n_vars:
        input_grads, variable_grads = grad_fn(*g, variables=list(variables))
        variable_grads = flatten(variable_grads)
        if len(variable_grads) != n_vars:
            raise ValueError("Must return gradient for each variable from @custom_gradient "
                             f"grad_fn: expected {n_vars}, got {len(variable_grads)}.")
    else:
        input_grads, variable_grads = grad_fn(*g), []
    input_grads = flatten(input_grads) if isinstance(input_grads, (list, tuple)) \
        else [input_grads]
    if len(input_grads) != n_args:
        raise ValueError(f"custom_gradient function expected to return {n_args} gradients, "
                         f"but returned {len(input_grads)} instead.")
    return list(input_grads) + list(variable_grads) + [None] * (len(inputs) - n_args - n_vars)


def _custom_jvp(tangents, ans, *inputs, n_args, variables, grad_fn, tangents_fn=None,
                remaps=(), transposed=False, reads=None):
    # Forward mode differentiates the function's own ops (grad_fn is a reverse-mode rule
    # only): the outputs' tangents are those of the results it computed, or, when its ops
    # were not recorded, those of ``tangents_fn`` (recompute_grad's recomputation,
    # custom_jvp's rule) or the transpose of grad_fn (a body on numpy values).
    n_in = n_args + len(variables)
    if tangents_fn is not None:  # the Variables themselves: f reads them again
        with _in_clone(ans, remaps):
            return tangents_fn(list(inputs[:n_args]) + list(variables), tangents[:n_in])
    if transposed:
        if reads is not None:
            _check_reads(reads, inputs[:n_in])

        def input_grads(seeds):
            return _call_grad_fn(tuple(seeds), inputs, n_args, variables, grad_fn)[:n_in]
        with _in_clone(ans, remaps):
            return tuple(transpose(input_grads, list(ans), tangents[:n_in]))
    return tuple(tangents[n_in:])


def _custom_batch_values(prim, args, flags, params, k):
    """On a batch of values: the results pass through, those without the batch axis
    broadcast."""
    n_in = params["n_args"] + len(params["variables"])
    return tuple(a if flag else np.broadcast_to(a, (k,) + np.shape(a))
                 for a, flag in zip(args[n_in:], flags[n_in:]))


# Its results pass on as the function computed them (pass_through: weak types stay weak). Its
# Python functions read the tensors of the trace they were made in: a function using it is
# vmapped per member, and on arrays the results pass through.
CUSTOM = Primitive("custom_gradient", _custom_forward, vjp=_custom_vjp, jvp=_custom_jvp,
                   multiple_results=True, closures=True, pass_through=True,
                   batch_values=_custom_batch_values, array_rules=False,
                   sparsity=dense)  # the function's graph is not walked: conservative


def _call_with_gradient(f, args, kwargs, record_forward, tangents_fn=None):
    watcher = _VariableWatcher()
    transposed = False
    if record_forward:
        try:
            with watcher:
                result, grad_fn = f(*args, **kwargs)
        except (ConcretizationError, TypeError) as exc:
            if THREAD.state.graphs and _converts(exc):
                raise _untraceable(f) from exc
            if not isinstance(exc, ConcretizationError) or not _differentiated(args):
                raise
            # The body converts a differentiated input to numpy (a function on numpy values,
            # its gradient given): run it again with nothing recording it. Reverse mode
            # calls grad_fn, forward mode transposes it: both derivatives come from grad_fn,
            # so a grad_fn written with hessgrad ops on the inputs differentiates again.
            THREAD.state.refused = None
            watcher = _VariableWatcher()
            with _Recorders([watcher]):
                result, grad_fn = _run_on_values(f, args, kwargs)
            transposed = tangents_fn is None
    else:
        with _Recorders([watcher]):  # nothing is kept on any tape
            result, grad_fn = f(*args, **kwargs)
    variables = list(watcher.variables.values())
    if variables and "variables" not in inspect.signature(grad_fn).parameters and not any(
            p.kind is p.VAR_KEYWORD for p in inspect.signature(grad_fn).parameters.values()):
        raise TypeError("If using @custom_gradient with a function that uses variables, then "
                        "grad_fn must accept a keyword argument 'variables'.")
    flat_args = [a for a in flatten(args) if isinstance(a, Tensor)]
    flat_result = flatten(result)
    params = {"n_args": len(flat_args), "variables": tuple(variables), "grad_fn": grad_fn}
    if tangents_fn is not None:
        params["tangents_fn"] = tangents_fn
    if transposed:
        params["transposed"] = True
        reads = _closed_over(grad_fn, flat_result)
        if reads is not None:
            params["reads"] = reads
    outs = bind(CUSTOM, tuple(flat_args + variables + flat_result), params)
    return pack_as(result, list(outs))


def _closed_over(grad_fn, results):
    """The name of a variable of ``grad_fn``'s closure that holds one of ``results`` (numpy
    arrays its body computed), or None."""
    computed = [r for r in results if isinstance(r, np.ndarray)]
    computed += getattr(grad_fn, "computed_values", [])  # custom_vjp's numpy residuals
    cells = getattr(grad_fn, "__closure__", None) or ()
    names = getattr(getattr(grad_fn, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        leaves = flatten(value) if isinstance(value, (list, tuple, dict)) else [value]
        if any(leaf is r for leaf in leaves for r in computed):
            return name
    return None


def _check_reads(name, inputs):
    """A grad_fn reading a numpy result of its body gives a wrong second derivative (the
    result's dependence on the inputs is not seen): refuse to differentiate it."""
    if _differentiated(inputs, visible=True):
        raise ValueError(
            f"custom_gradient/custom_vjp: the gradient rule reads {name!r}, numpy values "
            "its body (fwd) computed from "
            "the inputs' values, so its own derivative (a second derivative: hessian, hvp) "
            f"would miss how {name!r} depends on the inputs. Compute what grad_fn needs from "
            "the input tensors with hessgrad ops (hessgrad.numpy), or write the body with "
            "hessgrad ops")


def _differentiated(args, visible=False):
    """Whether an active recorder (with ``visible``, one that observes the ops run now: not
    one computing a rule) differentiates a tensor among ``args``."""
    state = THREAD.state
    recorders = state.recorders if not visible or state.limit is None else \
        state.recorders[:state.limit]
    return any(getattr(r, "tracks", None) and r.tracks(a)
               for r in recorders for a in flatten(args) if isinstance(a, Tensor))


def _run_on_values(f, args, kwargs):
    """``f(*args)`` for a body that computes on the inputs' numpy values."""
    try:
        return f(*args, **kwargs)
    except (ConcretizationError, TypeError) as exc:
        if THREAD.state.graphs and _converts(exc):
            raise _untraceable(f) from exc
        raise


def _converts(exc):
    """Whether ``exc`` is the refusal to convert a symbolic tensor (one being traced)."""
    return isinstance(exc, ConcretizationError) or "has no value while a graph" in str(exc)


def _untraceable(f):
    return ConcretizationError(
        f"{getattr(f, '__name__', 'a custom_gradient function')}: its body converts its "
        "input to numpy, which eager calls allow (its derivatives then come from grad_fn, "
        "to any order when grad_fn uses hessgrad ops), but a trace (hessgrad.function, jit, "
        "or the compiled products of hessian and make_hvp) has no values yet. For a numpy "
        "function that also traces, declare it a primitive: `@hg.primitive def f(x): ...` "
        "(its body gets numpy arrays at run time) with `hg.defvjp(f, lambda ans, x: lambda "
        "g: ...)` written with hessgrad.numpy ops")


def custom_gradient(f=None):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)`` and ``grad_fn(*dy)`` gives dx.

    When ``f`` reads trainable Variables, ``grad_fn`` must accept ``variables=`` and return
    ``(input_grads, variable_grads)``. Works eagerly, under tapes and in graphs. The ops of
    ``f`` are recorded too, so a ``grad_fn`` written with hessgrad ops can be differentiated
    again (as TensorFlow documents); forward mode differentiates ``f``'s own ops.

    ``f`` may also compute on its inputs' numpy values (``np.sin(np.asarray(x))``) in eager
    calls: it then runs again with nothing recording it, and forward mode transposes
    ``grad_fn``, so both derivatives come from ``grad_fn``; written with hessgrad ops on the
    inputs, it gives second derivatives too (hessian, every ``hvp`` mode). A ``grad_fn``
    reading numpy arrays ``f`` computed (its result) still gives first derivatives; second
    ones, which would miss those arrays' dependence on the inputs, raise ValueError. Such an ``f`` cannot be
    traced (``hessgrad.function``): declare it a primitive instead (``@hg.primitive`` with
    ``hg.defvjp``), whose body gets numpy values at run time.

    Raises:
        TypeError: ``f`` reads variables but ``grad_fn`` takes no ``variables``.
        ValueError: ``grad_fn`` returns the wrong number of gradients.

    >>> import hessgrad as hg
    >>> @hg.custom_gradient
    ... def log1pexp(x):
    ...     e = hg.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return hg.log(1 + e), grad
    >>> x = hg.constant(100.0, dtype="float32")
    >>> with hg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> float(tape.gradient(y, x))
    1.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _call_with_gradient(f, args, kwargs, record_forward=True)

    return decorated


def recompute_grad(f):
    """Decorator: keep no intermediate of ``f`` on any tape; recompute them when the
    gradient is needed (trading compute for memory).

    >>> import hessgrad as hg
    >>> layer = hg.recompute_grad(lambda x: hg.tanh(x) * 2.0)
    >>> x = hg.constant([0.0, 1.0])
    >>> with hg.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = hg.reduce_sum(layer(x))
    >>> tape.gradient(y, x).numpy().round(4)
    array([2.    , 0.8399])
    """

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        def forward(*inputs):
            result = f(*inputs, **kwargs)

            def grad_fn(*upstream, variables=None):
                variables = list(variables or [])
                watched = [a for a in flatten(inputs) if isinstance(a, Tensor)]
                with GradientTape(watch_accessed_variables=False) as tape:
                    tape.watch(watched + variables)
                    recomputed = f(*inputs, **kwargs)
                grads = tape.gradient(flatten(recomputed), watched + variables,
                                      output_gradients=list(upstream),
                                      unconnected_gradients="zero")
                if variables:
                    return grads[:len(watched)], grads[len(watched):]
                return grads[:len(watched)]

            return result, grad_fn

        def tangents_fn(primals, tangents):
            """Forward mode: recompute ``f`` under an accumulator of the inputs' tangents,
            observed by the recorders outside the one asking (so it nests)."""
            state = THREAD.state
            outside = state.recorders if state.limit is None else state.recorders[:state.limit]
            watched = [(p, t) for p, t in zip(primals, tangents) if t is not None]
            with _Recorders(list(outside)):
                with ForwardAccumulator([p for p, _ in watched],
                                        [t for _, t in watched]) as acc:
                    recomputed = f(*args, **kwargs)
            return tuple(acc.jvp(flatten(recomputed)))

        return _call_with_gradient(forward, args, {}, record_forward=False,
                                   tangents_fn=tangents_fn)

    return decorated


def grad_pass_through(f):
    """Make ``f`` (even a non-differentiable one, like ``Variable.assign``) pass its
    upstream gradient straight to its input.

    >>> import hessgrad as hg
    >>> x, z = hg.Variable(1.0), hg.Variable(3.0)
    >>> with hg.GradientTape() as tape:
    ...     y = hg.grad_pass_through(x.assign)(z ** 2)
    >>> float(tape.gradient(y, z))
    6.0
    """

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        def forward(*inputs):
            return f(*inputs, **kwargs), lambda *upstream: upstream

        return _call_with_gradient(forward, args, {}, record_forward=True)

    return decorated


def _split_args(fun, args, kwargs, nondiff_argnums, what):
    """Positional ``args`` (keywords bound to their positions, as JAX does), the differentiated
    ones with their array leaves as tensors, and a function rebuilding all of them."""
    try:
        signature = inspect.signature(fun)
    except (TypeError, ValueError):  # a builtin without one: positional arguments only
        signature = None
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{what}: {exc}") from None
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError(f"{what}: keyword-only arguments ({sorted(bound.kwargs)}) are not "
                            "supported; pass them positionally")
        args = bound.args
    elif kwargs:
        raise TypeError(f"{what}: keyword arguments need a function with a signature")
    n = len(args)
    nondiff = sorted({i % n if -n <= i < n else _bad_argnum(i, n, what)
                      for i in nondiff_argnums})
    diff_pos = [i for i in range(n) if i not in nondiff]
    diff = [pack_as(args[i], [a if a is None or isinstance(a, Tensor) else convert_to_tensor(a)
                              for a in flatten(args[i])]) for i in diff_pos]

    def rebuild(diff_values):
        full = list(args)
        for i, v in zip(diff_pos, diff_values):
            full[i] = v
        return full
    return [args[i] for i in nondiff], diff, rebuild


def _bad_argnum(i, n, what):
    raise ValueError(f"{what}: nondiff_argnums entry {i} is out of range for {n} arguments")


def _leaves(structure):
    return [a for a in flatten(structure) if isinstance(a, Tensor)]


def _per_leaf(cotangents, diff, what, label):
    """The flat list of one cotangent per tensor leaf of ``diff`` (None for a zero)."""
    if not isinstance(cotangents, (tuple, list)) or len(cotangents) != len(diff):
        raise ValueError(f"{what}: {label} must return a tuple with one cotangent per "
                         f"differentiated argument ({len(diff)}), got "
                         f"{type(cotangents).__name__}"
                         + (f" of {len(cotangents)}" if isinstance(cotangents, (tuple, list))
                            else ""))
    flat = []
    for arg, ct in zip(diff, cotangents):
        leaves = flatten(arg)
        parts = [None] * len(leaves) if ct is None else flatten(ct)
        if len(parts) != len(leaves):
            raise ValueError(f"{what}: a cotangent from {label} is not structured like its "
                             "argument")
        flat += [p for a, p in zip(leaves, parts) if isinstance(a, Tensor)]
    return flat


class custom_jvp:
    """JAX's ``custom_jvp``: a function whose forward-mode derivative is given by a rule.

    ``f.defjvp(rule)`` with ``rule(primals, tangents) -> (primal_out, tangent_out)`` (for
    ``nondiff_argnums``: ``rule(*nondiff_args, primals, tangents)``, the tuples holding the
    other arguments). Reverse mode transposes the rule (linear in the tangents), so the rule
    also gives gradients; written with hessgrad ops, it differentiates again (hessians,
    ``hvp`` in every mode). ``f`` itself runs with nothing recording it: its body may compute
    on numpy values when called eagerly.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> @hg.custom_jvp
    ... def softplus(x):
    ...     return hnp.log1p(hnp.exp(x))
    >>> @softplus.defjvp
    ... def _(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return softplus(x), t * hg.sigmoid(x)
    >>> float(hg.grad(softplus)(0.0))
    0.5
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun, self.nondiff_argnums, self.jvp = fun, tuple(nondiff_argnums), None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the rule (usable as a decorator); returns it. Zero tangents are passed as
        zero arrays (JAX's ``symbolic_zeros=False``, the only choice here)."""
        _no_symbolic_zeros(symbolic_zeros, "defjvp")
        self.jvp = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """One rule per differentiated argument, ``fn(tangent, primal_out, *primals)`` (None:
        no dependence), their contributions summed (JAX's ``defjvps``)."""
        def jvp(*nondiff_and_pt):
            primals, tangents = nondiff_and_pt[-2:]
            out = self.fun(*_merge(self.nondiff_argnums, nondiff_and_pt[:-2], primals))
            total = None
            for fn, t in zip(_one_per_argument(tangent_fns, len(primals)), tangents):
                if fn is not None:
                    term = fn(t, out, *primals)
                    total = term if total is None else total + term
            return out, zeros_like(out) if total is None else total
        self.jvp = jvp

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_jvp function")
        what = f"custom_jvp {name}"
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for {what}: call {name}.defjvp(rule) first")
        nondiff, diff, rebuild = _split_args(self.fun, args, kwargs, self.nondiff_argnums,
                                             what)
        jvp, fun = self.jvp, self.fun

        def tangents_fn(primals, tangents):
            tangents = [zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
            _, t_out = jvp(*nondiff, tuple(_refill(diff, primals)),
                           tuple(_refill(diff, tangents)))
            return tuple(flatten(t_out))

        def body(*diff_args):
            out = fun(*rebuild(diff_args))
            primals = _leaves(diff_args)

            def grad_fn(*g):
                def tangent_out(seeds):
                    return flatten(jvp(*nondiff, tuple(_refill(diff_args, primals)),
                                       tuple(_refill(diff_args, seeds)))[1])
                return transpose(tangent_out, primals, list(g))
            return out, grad_fn

        return _call_with_gradient(body, diff, {}, record_forward=False,
                                   tangents_fn=tangents_fn)


def _no_symbolic_zeros(symbolic_zeros, what):
    if symbolic_zeros:
        raise NotImplementedError(f"{what}: symbolic_zeros=True is not supported; the rules "
                                  "get zero arrays for zero tangents and cotangents")


def _one_per_argument(fns, n):
    if len(fns) != n:
        raise ValueError(f"defjvps: expected {n} rules (one per differentiated argument), "
                         f"got {len(fns)}")
    return fns


def _merge(nondiff_argnums, nondiff, diff):
    n = len(nondiff) + len(diff)
    positions = sorted(i % n for i in nondiff_argnums)
    full, it_n, it_d = [], iter(nondiff), iter(diff)
    for i in range(n):
        full.append(next(it_n) if i in positions else next(it_d))
    return full


def _refill(structures, leaves):
    """``structures`` (a list of arguments) with their tensor leaves replaced by ``leaves``."""
    it = iter(leaves)
    return [pack_as(s, [next(it) if isinstance(a, Tensor) else a for a in flatten(s)])
            for s in structures]


class _Depth(threading.local):
    n = 0


class custom_vjp:
    """JAX's ``custom_vjp``: a function whose reverse-mode derivative is given by rules.

    ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) ->`` a
    tuple with one cotangent per argument (None for zero); with ``nondiff_argnums``,
    ``bwd(*nondiff_args, residuals, g)`` and a cotangent per other argument only. Forward
    mode differentiates ``fwd``'s own ops when they are hessgrad ops (as JAX differentiates
    ``fwd`` and ``bwd`` in ``jacfwd(jacrev(f))``); when ``fwd`` computes on numpy values
    (eager calls), forward mode transposes ``bwd``. Written with hessgrad ops, ``bwd``
    differentiates again: hessians and ``hvp`` in every mode.

    >>> import hessgrad as hg, hessgrad.numpy as hnp
    >>> @hg.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None),
    ...                      lambda res, g: (hnp.clip(g, -1.0, 1.0),))
    >>> float(hg.grad(lambda x: 3.0 * clip_gradient(x))(2.0))
    1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun, self.nondiff_argnums = fun, tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self._in_fwd = _Depth()  # fwd may call the function itself (JAX's idiom): plain then

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """Set the forward and backward rules (JAX's ``symbolic_zeros=False`` only)."""
        _no_symbolic_zeros(symbolic_zeros, "defvjp")
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_vjp function")
        what = f"custom_vjp {name}"
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for {what}: call {name}.defvjp(fwd, bwd) "
                                 "first")
        if self._in_fwd.n:
            return self.fun(*args, **kwargs)
        nondiff, diff, rebuild = _split_args(self.fun, args, kwargs, self.nondiff_argnums,
                                             what)
        fwd, bwd = self.fwd, self.bwd

        def body(*diff_args):
            self._in_fwd.n += 1
            try:
                out, residuals = fwd(*rebuild(diff_args))
            finally:
                self._in_fwd.n -= 1

            template = pack_as(out, [0] * len(flatten(out)))

            def grad_fn(*g):
                cts = bwd(*nondiff, residuals, pack_as(template, list(g)))
                return _per_leaf(cts, diff_args, what, "bwd")
            # numpy arrays among the residuals that are not arguments: computed by fwd
            given = [a for a in flatten(list(args))]
            grad_fn.computed_values = [
                r for r in (flatten(residuals) if isinstance(residuals, (list, tuple, dict))
                            else [residuals])
                if isinstance(r, np.ndarray) and not any(r is a for a in given)]
            return out, grad_fn

        body.__name__ = name
        return _call_with_gradient(body, diff, {}, record_forward=True)
