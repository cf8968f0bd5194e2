"""The one op registry: each primitive is declared once with its forward and its rules.

A primitive's rules are written with hessgrad ops (never raw numpy), so that every derivative
is itself differentiable. The engine only calls the rules; it knows no math of its own. The
few structural ops the engine applies itself (zeros for an unconnected gradient, the sum of
gradient contributions, ...) are *roles*: the op declared with ``role=ADD_N`` is the one the
backprop core sums with, so the engine names no op.
"""

import functools

from .facts import NO_ALGEBRA, NO_LOWERING

PRIMITIVES = {}
_SEALED = False  # True once hessgrad is imported: later primitives are the user's


def seal_builtins():
    """Mark the primitives registered so far as hessgrad's own (called once hessgrad is
    imported): their forward and reverse rules are derivatives of one function, which lets
    :func:`hessgrad.hvp` choose between equivalent orders of differentiation."""
    global _SEALED
    _SEALED = True


class Role:
    """A structural op the engine applies itself; ``prim`` is the primitive declared with
    ``role=`` this role (see :func:`primitive`)."""

    __slots__ = ("doc", "prim")

    def __init__(self, doc):
        self.doc = doc
        self.prim = None

    def __repr__(self):
        return f"<role: {self.doc}>"


ZEROS_LIKE = Role("zeros shaped like its operand (an unconnected gradient or tangent)")
ONES_LIKE = Role("ones shaped like its operand (the seed of a gradient)")
ZEROS = Role("zeros of a shape and dtype given as params (an empty Jacobian)")
CAST = Role("its operand in the dtype given as a param")
ADD = Role("the sum of two operands (forward-mode tangents)")
ADD_N = Role("the sum of its operands (gradient contributions)")
SUM_TO = Role("its operand summed down to a shape (the gradient of broadcasting)")
BROADCAST_TO = Role("its operand broadcast to a shape")
RESHAPE = Role("its operand reshaped")
TRANSPOSE = Role("its operand with its axes permuted")
STACK = Role("its operands stacked along a new axis")
UNSTACK = Role("the parts of its operand along an axis (multiple results)")
CONCATENATE = Role("its operands joined along an axis")
INDEX = Role("its operand indexed by a normalized ``index`` param (ints, slices, int arrays)")
ROLES = (ZEROS_LIKE, ONES_LIKE, ZEROS, CAST, ADD, ADD_N, SUM_TO, BROADCAST_TO, RESHAPE,
         TRANSPOSE, STACK, UNSTACK, CONCATENATE, INDEX)


class PerInput:
    """Rules for a variadic op: ``make(k)`` builds the rule of input ``k`` (cached)."""

    __slots__ = ("_make", "_rules")

    def __init__(self, make):
        self._make = make
        self._rules = {}

    def __len__(self):
        return 1 << 30  # as many as there are inputs

    def __getitem__(self, k):
        rule = self._rules.get(k)
        if rule is None:
            rule = self._rules[k] = self._make(k)
        return rule


class Primitive:
    """A differentiable operation.

    Attributes:
        name: the op type, unique in the registry.
        forward: ``forward(*values, **params)`` on numpy values; returns an array, or a tuple
            of arrays when ``multiple_results``.
        vjps: tuple with one rule per input, ``rule(g, ans, *inputs, **params) -> grad``,
            ``None`` for an input that takes no gradient; or a single joint rule returning a
            tuple of input gradients (``joint_vjp=True``).
        jvps: likewise ``rule(t, ans, *inputs, **params) -> output tangent`` per input, or one
            joint rule ``rule(tangents, ans, *inputs, **params)``; ``linear=True`` derives it.
        shape_rule: ``shape_rule(*avals, **params) -> (shape, dtype)`` (or a list of them);
            when absent, shapes are found by running ``forward`` on stand-in arrays.
        none_grads_ok: the VJP accepts ``None`` for output gradients that nothing flowed into.
        batch_rule: ``rule(forward, args, batched, **params)`` runs the op on arguments of
            which those flagged in ``batched`` carry a leading batch axis (see
            :meth:`hessgrad.engine.graph.Plan.run_batched`).
        nondiff: outputs are constants for differentiation (comparisons, argmax, ...).
        broadcasts: the op broadcasts its inputs against each other (numpy's rules), and
            its VJP rules may return gradients of the broadcast shape: the backprop core sums
            each back to its input's shape, as forward mode broadcasts tangents.
        array_rules: the VJP rules also accept numpy arrays for the output gradient and let
            ops return numpy values (a first-order backward pass that nothing records passes
            them, to skip the Tensor wrappers); true for hessgrad's own primitives, false for
            user-defined ones, whose rules always see Tensors.
        builtin: registered by hessgrad itself (before :func:`seal_builtins`).
        closures: its params hold Python functions that read graph tensors (custom_gradient's
            ``grad_fn``): control flow's clone of such a node in a loop or branch body adds
            ``remaps`` to its params (see :meth:`hessgrad.engine.graph.Graph.substituting`),
            through which those functions read the clone's tensors.
        eager_forward: what eager calls run: ``forward.unchecked`` when ``forward`` is a
            wrapper that only explains failures (the eager path re-runs ``forward`` to raise
            its clear error), else ``forward``.
        batch: the batching rule, ``rule(prim, args, flags, params, k)``: the op on arguments
            of which those flagged carry a leading batch axis of length ``k``, computed by
            binding ops (so it runs on arrays, under tapes and in graphs alike; see
            :mod:`hessgrad.engine.batching`); returns the results (a tuple for multiple
            results), each with the batch axis. None: the op runs once per batch member.
        batch_values: a batching rule on numpy arrays only, used where nothing differentiates
            the result (plan runs, compiled programs): faster than ``batch``, or the only one
            (control flow's); with no ``batch``, a function holding the op is vmapped per
            member.
        sparsity: the sparsity rule, ``rule(step)``: the dependency pattern of the op's output
            and the second-order interactions it adds (see :mod:`hessgrad.ops.patterns`).
            None: the conservative rule (everything depends on everything).
        effects: the op makes or reads a buffer that ops update in place (a TensorArray's
            storage): a plan runs it at every execution, the compiler never folds, merges or
            drops it.
        writes: ``writes(params)``: the positions of the inputs the op writes in place (a plan
            never reads them again; a batch run once per member copies them per member).
        pass_through: the op hands inputs on unchanged (control flow passes captures to its
            blocks): weak inputs stay weak there, the ops that use them promote them.
        role: a :class:`Role` this op plays for the engine.
        lowering: how the compiler emits the op (:class:`hessgrad.engine.facts.Lowering`).
        algebra: facts the compiler's rewrites use (:class:`hessgrad.engine.facts.Algebra`).
        rewrites: rules the compiler's simplify pass tries on the op, in order, each
            ``rule(sweep, op)`` returning None (not applicable) or the ops that replace it:
            cheaper equal computations that look at its operands (an outer product as a
            multiply, a constant power as products). A rule reads the program and builds ops
            only through ``sweep`` and ``op`` (see :class:`hessgrad.compiler.rewrite.Sweep`),
            so an op file needs nothing from the compiler.
    """

    __slots__ = ("name", "forward", "eager_forward", "vjps", "jvps", "joint_vjp", "joint_jvp",
                 "linear", "shape_rule", "none_grads_ok", "nondiff", "multiple_results",
                 "batch", "batch_values", "sparsity", "array_rules", "builtin", "closures",
                 "broadcasts", "fast_vjps", "effects", "writes", "pass_through", "lowering",
                 "algebra", "rewrites")

    def __init__(self, name, forward, vjp=None, jvp=None, *, linear=False, shape_rule=None,
                 none_grads_ok=False, nondiff=False, multiple_results=False, closures=False,
                 broadcasts=False, batch=None, batch_values=None, sparsity=None, effects=False,
                 writes=None, pass_through=False, role=None, array_rules=None, lowering=None,
                 algebra=None, rewrites=()):
        if name in PRIMITIVES and (PRIMITIVES[name].builtin or not _SEALED):
            raise ValueError(f"primitive {name!r} is registered twice" if not _SEALED else
                             f"primitive {name!r} is one of hessgrad's: choose another name")
        # a user's primitive declared again (a notebook cell run twice) replaces the old one
        self.name = name
        self.forward = forward
        self.eager_forward = getattr(forward, "unchecked", forward)
        self.joint_vjp = callable(vjp) and not isinstance(vjp, PerInput)
        self.vjps = tuple(vjp) if isinstance(vjp, list) else vjp
        self.joint_jvp = callable(jvp) and not isinstance(jvp, PerInput)
        self.jvps = tuple(jvp) if isinstance(jvp, list) else jvp
        # the backprop core's fast path: one rule per input of a one-result op
        self.fast_vjps = None if vjp is None or self.joint_vjp or multiple_results else self.vjps
        self.linear = linear
        self.shape_rule = shape_rule
        self.none_grads_ok = none_grads_ok
        self.nondiff = nondiff
        self.multiple_results = multiple_results
        self.batch = batch
        self.batch_values = batch_values
        self.sparsity = sparsity
        self.builtin = not _SEALED
        # a user's rules always see Tensors; hessgrad's also take numpy values
        self.array_rules = self.builtin if array_rules is None else array_rules
        self.closures = closures
        self.broadcasts = broadcasts
        self.effects = effects
        self.writes = writes
        self.pass_through = pass_through
        self.lowering = NO_LOWERING if lowering is None else lowering
        self.algebra = NO_ALGEBRA if algebra is None else algebra
        self.rewrites = tuple(rewrites)
        if role is not None:
            if role.prim is not None:
                raise ValueError(f"primitive {name!r}: role {role!r} is played by "
                                 f"{role.prim.name!r} already")
            role.prim = self
        PRIMITIVES[name] = self

    def __repr__(self):
        return f"<primitive {self.name}>"


def primitive(name, forward=None, vjp=None, jvp=None, *, doc=None, **flags):
    """Declare a primitive and return a function that applies it (see :class:`Primitive`),
    whose docstring is ``doc``.

    Also autograd's decorator: ``@primitive def f(x, ...)`` declares ``f`` (named by its
    module and qualified name), its body getting numpy values, its rules then given by
    :func:`defvjp` and :func:`defjvp`. Keyword arguments of a call are the op's parameters.

    >>> import numpy as np
    >>> from hessgrad.engine.registry import primitive
    >>> double = primitive("doctest_double", lambda x: 2 * x,
    ...                    vjp=[lambda g, ans, x: 2 * g], linear=True)
    >>> double(np.array([1.0, 2.0])).numpy()
    array([2., 4.])
    """
    from .dispatch import bind, bind_eager

    fun = None
    if callable(name) and forward is None:  # @primitive
        fun, forward = name, name
        name = f"{getattr(fun, '__module__', None) or '_'}.{fun.__qualname__}"
    elif forward is None:
        raise TypeError("primitive(name, forward, vjp=None, jvp=None, **flags), or "
                        "@primitive on a function")
    prim = Primitive(name, forward, vjp, jvp, **flags)

    def apply(*args, **params):
        if not params:
            n = len(args)
            if n == 1:
                return bind_eager(prim, args[0])
            if n == 2:
                return bind_eager(prim, args[0], args[1])
        return bind(prim, args, params)

    apply.primitive = prim
    if fun is not None:
        functools.update_wrapper(apply, fun)
    else:
        apply.__name__ = name
        apply.__qualname__ = name
        apply.__doc__ = doc
    return apply


def _primitive_of(fun, what):
    prim = getattr(fun, "primitive", None)
    if not isinstance(prim, Primitive):
        raise TypeError(f"{what}: {getattr(fun, '__name__', fun)!r} is not a primitive; "
                        "declare it with @hg.primitive first")
    if prim.builtin:
        raise ValueError(f"{what}: {prim.name!r} is one of hessgrad's primitives; its rules "
                         "are fixed")
    return prim


def _positions(rules, argnums, what):
    """The input positions ``rules`` are for: ``argnums``, by default 0, 1, ..."""
    argnums = tuple(range(len(rules))) if argnums is None else tuple(argnums)
    if len(argnums) != len(rules):
        raise ValueError(f"{what}: {len(rules)} rules for argnums {argnums}")
    return argnums


def defvjp(fun, *makers, argnums=None):
    """Autograd's ``defvjp``: give primitive ``fun`` (``@hg.primitive``) its reverse rules,
    one per positional argument (or per entry of ``argnums``): ``maker(ans, *args,
    **kwargs)`` returns ``g -> the gradient w.r.t. that argument``; None for an argument
    that takes none. The rules see Tensors: written with hessgrad ops, they differentiate
    again (second order). With no JVP declared, forward mode transposes these rules.

    >>> import numpy as np, hessgrad as hg, hessgrad.numpy as hnp
    >>> @hg.primitive
    ... def logsumexp(x):
    ...     m = np.max(x)
    ...     return m + np.log(np.sum(np.exp(x - m)))
    >>> hg.defvjp(logsumexp, lambda ans, x: lambda g: g * hnp.exp(x - ans))
    >>> hg.grad(logsumexp)(np.zeros(2))
    array([0.5, 0.5])
    """
    prim = _primitive_of(fun, "defvjp")
    argnums = _positions(makers, argnums, "defvjp")
    rules = list(prim.vjps) if isinstance(prim.vjps, tuple) else []
    for k, maker in zip(argnums, makers):
        rules += [None] * (k + 1 - len(rules))
        rules[k] = None if maker is None else _vjp_rule(maker)
    prim.vjps, prim.joint_vjp = tuple(rules), False
    prim.fast_vjps = None if prim.multiple_results else prim.vjps


def _vjp_rule(maker):
    def rule(g, ans, *args, **params):
        return maker(ans, *args, **params)(g)
    return rule


def defjvp(fun, *rules, argnums=None):
    """Autograd's ``defjvp``: give primitive ``fun`` its forward rules, one per positional
    argument (or per entry of ``argnums``): ``rule(g, ans, *args, **kwargs)`` returns the
    output's tangent for tangent ``g`` of that argument; None for none; ``"same"`` for an
    argument in which ``fun`` is linear (the tangent is ``fun`` applied to ``g`` there).

    >>> import numpy as np, hessgrad as hg, hessgrad.numpy as hnp
    >>> @hg.primitive
    ... def cube(x):
    ...     return x ** 3
    >>> hg.defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)
    >>> float(hg.jvp(cube, (2.0,), (1.0,))[1])
    12.0
    """
    prim = _primitive_of(fun, "defjvp")
    argnums = _positions(rules, argnums, "defjvp")
    jvps = list(prim.jvps) if isinstance(prim.jvps, tuple) else []
    for k, rule in zip(argnums, rules):
        jvps += [None] * (k + 1 - len(jvps))
        jvps[k] = _same_rule(fun, k) if isinstance(rule, str) and rule == "same" else rule
    prim.jvps, prim.joint_jvp = tuple(jvps), False


def _same_rule(fun, k):
    def rule(g, ans, *args, **params):
        return fun(*args[:k], g, *args[k + 1:], **params)
    return rule


def get(name):
    """The registered primitive called ``name``."""
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise LookupError(f"no primitive named {name!r} is registered") from None
