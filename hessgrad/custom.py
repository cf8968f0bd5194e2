"""User-defined gradients: custom_gradient, recompute_grad, grad_pass_through."""

import contextlib
import functools
import inspect

import numpy as np

from .engine.dispatch import READ, bind
from .engine.forward import ForwardAccumulator
from .engine.nest import flatten, pack_as
from .engine.registry import Primitive
from .engine.state import THREAD, Recorder
from .engine.tape import GradientTape
from .engine.tensor import Tensor, Variable
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
# over (see Graph.substituting).
def _custom_forward(*values, n_args, variables, grad_fn, tangents_fn=None, remaps=()):
    return tuple(values[n_args + len(variables):])


def _in_clone(ans, remaps):
    """The context in which the node's Python functions run: reading the clone's tensors."""
    if not remaps:
        return contextlib.nullcontext()
    return ans[0]._node.graph.substituting(remaps)


def _custom_vjp(g, ans, *inputs, n_args, variables, grad_fn, tangents_fn=None, remaps=()):
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
                remaps=()):
    # Forward mode differentiates the function's own ops (grad_fn is a reverse-mode rule
    # only): the outputs' tangents are those of the results it computed, or, when its ops
    # were not recorded (recompute_grad), those of a recomputation.
    n_in = n_args + len(variables)
    if tangents_fn is not None:  # the Variables themselves: f reads them again
        with _in_clone(ans, remaps):
            return tangents_fn(list(inputs[:n_args]) + list(variables), tangents[:n_in])
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
    if record_forward:
        with watcher:
            result, grad_fn = f(*args, **kwargs)
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
    outs = bind(CUSTOM, tuple(flat_args + variables + flat_result), params)
    return pack_as(result, list(outs))


def custom_gradient(f=None):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)`` and ``grad_fn(*dy)`` gives dx.

    When ``f`` reads trainable Variables, ``grad_fn`` must accept ``variables=`` and return
    ``(input_grads, variable_grads)``. Works eagerly, under tapes and in graphs. The ops of
    ``f`` are recorded too, so a ``grad_fn`` written with hessgrad ops can be differentiated
    again (as TensorFlow documents); forward mode differentiates ``f``'s own ops.

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
