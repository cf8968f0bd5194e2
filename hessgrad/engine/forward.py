"""Forward mode: ForwardAccumulator pushes tangents through ops as they run (JVP rules)."""

from .backprop import UnconnectedGradients, check_unconnected
from .dispatch import bind
from .graph import substituted
from .nest import flatten, pack_as
from .registry import ADD, BROADCAST_TO, SUM_TO, ZEROS_LIKE
from .state import THREAD, Recorder
from .tensor import Tensor, dtype_of, is_differentiable_dtype, shape_of


class ForwardAccumulator(Recorder):
    """Compute Jacobian-vector products with forward-mode autodiff (TensorFlow's semantics).

    Ops executed inside the context propagate the tangents of the watched primals. JVP rules
    are hessgrad ops, observed by the recorders outside this accumulator, so a tape around an
    accumulator differentiates the tangents (reverse-over-forward) and an accumulator around
    a tape differentiates a gradient (forward-over-reverse, a Hessian-vector product).

    >>> import hessgrad as hg
    >>> x = hg.constant([1.0, 2.0])
    >>> with hg.ForwardAccumulator(x, hg.constant([1.0, 0.0])) as acc:
    ...     y = hg.reduce_sum(x * x * x)
    >>> float(acc.jvp(y))
    3.0
    """

    def __init__(self, primals, tangents):
        self._tangents = {}   # id(tensor) -> (tensor, tangent)
        self._watch(primals, tangents)

    def _watch(self, primals, tangents):
        flat_p, flat_t = substituted(flatten(primals)), flatten(tangents)
        if len(flat_p) != len(flat_t):
            raise ValueError(f"ForwardAccumulator: {len(flat_p)} primals but {len(flat_t)} "
                             "tangents")
        for p, t in zip(flat_p, flat_t):
            if not isinstance(p, Tensor):
                raise ValueError(f"ForwardAccumulator: primal {p!r} is not a Tensor")
            t_shape = t.shape if isinstance(t, Tensor) else getattr(t, "shape", ())
            if tuple(t_shape) != tuple(p.shape):
                raise ValueError(f"ForwardAccumulator: tangent shape {tuple(t_shape)} does not "
                                 f"match primal shape {tuple(p.shape)}")
            if is_differentiable_dtype(p.dtype):
                self._tangents[id(p)] = (p, t)

    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangent of each primal (None when it does not depend on the watched ones)."""
        unconnected = check_unconnected(unconnected_gradients)
        out = []
        for p in substituted(flatten(primals)):
            entry = self._tangents.get(id(p)) if isinstance(p, Tensor) else None
            if entry is None and unconnected == UnconnectedGradients.ZERO:
                out.append(bind(ZEROS_LIKE.prim, (p,), {}))
            else:
                out.append(None if entry is None else entry[1])
        return pack_as(primals, out)

    def tracks(self, t):
        return id(t) in self._tangents

    def observe(self, prim, args, params, outs, node, level):
        tangents = self._tangents
        arg_tangents = None
        for k, a in enumerate(args):
            entry = tangents.get(id(a))  # only tensors are keys, and live objects' ids differ
            if entry is not None:
                if arg_tangents is None:
                    arg_tangents = [None] * len(args)
                arg_tangents[k] = entry[1]
        if arg_tangents is None:
            return node
        state = THREAD.state
        saved = state.limit  # paused_from(level), inlined: this runs for every observed op
        state.limit = level if saved is None else min(saved, level)
        try:
            out_tangents = push_tangents(prim, args, params, outs, arg_tangents)
        finally:
            state.limit = saved
        for o, t in zip(outs, out_tangents):
            if t is not None and o._dtype_kind() in "fc":
                tangents[id(o)] = (o, t)
        return node


def push_tangents(prim, args, params, outs, arg_tangents):
    """Output tangents of ``outs = prim(*args)`` given input tangents (None = zero)."""
    jvps = prim.jvps
    if jvps is None and not prim.linear:
        if prim.vjps is None:
            raise LookupError(f"No forward-mode rule (JVP) defined for op type {prim.name}, "
                              "and no reverse rule (VJP) to derive one from: declare its "
                              "jvp= (or vjp=)")
        return _jvp_from_vjp(prim, args, params, outs, arg_tangents)
    ans = outs if prim.multiple_results else outs[0]
    if prim.linear:
        zeros_like = ZEROS_LIKE.prim
        # Missing tangents are zeros; a boolean input with no VJP (a where() condition) is
        # not data and stays as it is. A boolean operand that is data (add(mask, x)) gets a
        # zero (False) like any other: passing it through made the tangent t + mask. A
        # Python number's zero stays a Python number, which numpy's promotion treats as
        # weakly typed (so a float32 tangent stays float32, as the primal did); its zero is
        # type(a)(), not a * 0 (NaN for a NaN or an infinite constant).
        vjps = prim.vjps if isinstance(prim.vjps, tuple) else ()
        filled = [t if t is not None else
                  (a if dtype_of(a) == bool and k < len(vjps) and vjps[k] is None
                   else type(a)() if type(a) in (int, float, complex)
                   else bind(zeros_like, (a,), {}))
                  for k, (a, t) in enumerate(zip(args, arg_tangents))]
        out = bind(prim, filled, params)
    elif prim.joint_jvp:
        out = jvps(arg_tangents, ans, *args, **params)
    else:
        out = None
        n_rules = len(jvps)
        for k, t in enumerate(arg_tangents):
            if t is None or k >= n_rules or jvps[k] is None:
                continue
            term = jvps[k](t, ans, *args, **params)
            if term is not None:
                out = term if out is None else bind(ADD.prim, (out, term), {})
    if prim.multiple_results:
        return (None,) * len(outs) if out is None else tuple(out)
    if out is None or type(out) is Tensor and out._value is not None and \
            ans._value is not None and out._value.shape == ans._value.shape:
        return (out,)
    if shape_of(out) != ans.shape:  # a rule may leave broadcasting to us
        out = bind(BROADCAST_TO.prim, (out,), {"shape": ans.shape})
    return (out,)


def transpose(linear, like, cotangents):
    """The transpose of a linear map: ``linear(seeds)`` returns a list of tensors (None for
    zero) linear in ``seeds``, tensors shaped like those of ``like``; given ``cotangents``,
    one per result (None = zero), returns the gradient of ``sum <linear(s), c>`` w.r.t. each
    seed (None where unconnected). It is reverse mode over ``linear``'s ops, observed by the
    recorders active outside the one asking, so it differentiates again. A JVP from a VJP
    rule (a primitive declared with ``vjp=`` only) and a VJP from a JVP rule
    (``custom_jvp``) are both such transposes."""
    from .tape import GradientTape  # the tape module imports this one's neighbours

    state = THREAD.state
    saved = state.recorders, state.limit
    outside = list(saved[0] if saved[1] is None else saved[0][:saved[1]])
    state.recorders, state.limit = outside, None
    try:
        tape = GradientTape(watch_accessed_variables=False)
        with tape:
            seeds = [bind(ZEROS_LIKE.prim, (a,), {}) for a in like]
            tape.watch(seeds)
            results = list(linear(seeds))
        pairs = [(r, c) for r, c in zip(results, cotangents)
                 if r is not None and c is not None]
        if not pairs:
            return [None] * len(seeds)
        return tape.gradient([r for r, _ in pairs], seeds,
                             output_gradients=[c for _, c in pairs])
    finally:
        state.recorders, state.limit = saved


def _jvp_from_vjp(prim, args, params, outs, arg_tangents):
    """Output tangents of a primitive declared with a reverse rule only: the transpose of its
    VJP (exact; the VJP must be written with hessgrad ops, linear in the output gradient)."""
    ans = outs if prim.multiple_results else outs[0]
    vjps = prim.vjps

    def input_grads(seeds):
        g = tuple(seeds) if prim.multiple_results else seeds[0]
        if prim.joint_vjp:
            grads = list(vjps(g, ans, *args, **params))
        else:
            grads = [vjps[k](g, ans, *args, **params)
                     if t is not None and k < len(vjps) and vjps[k] is not None else None
                     for k, t in enumerate(arg_tangents)]
        for k, (a, gk) in enumerate(zip(args, grads)):  # a broadcast gradient: summed back
            if gk is not None and arg_tangents[k] is not None and \
                    shape_of(gk) != shape_of(a):
                grads[k] = bind(SUM_TO.prim, (gk,), {"shape": shape_of(a)})
        return grads

    try:
        tangents = transpose(input_grads, outs, arg_tangents)
    except Exception as exc:
        raise LookupError(
            f"primitive {prim.name!r} has no forward-mode rule (JVP), and deriving one from "
            f"its reverse rule (VJP) failed ({type(exc).__name__}: {exc}). Forward mode "
            "(jvp, jacfwd, hvp's default mode, hessian) transposes the VJP, which needs the "
            "VJP written with hessgrad ops (hessgrad.numpy), linear in the output gradient. "
            "Fix: declare the primitive's jvp= (or hg.defjvp(f, ...)); for second order "
            "(hvp, hessian) write its VJP with hessgrad ops too, as a VJP that converts "
            "tensors to numpy has no derivative in any mode; a VJP that differentiates but "
            "does not transpose can use reverse-over-reverse, hg.hvp(f, mode=\"rev-rev\")"
        ) from exc
    return tuple(tangents)
