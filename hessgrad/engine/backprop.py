"""The one backprop core, shared by ``gradients()`` (graph mode) and ``GradientTape``.

It walks recorded ops in reverse without recursion: filter to the ops between sources and
targets, count pending consumer edges, process ops whose consumers are all done (a ready
queue), aggregate gradient contributions, zero-fill missing output gradients unless the op
accepts None, and resolve unconnected sources. VJP rules are hessgrad ops, so the gradients it
builds can be differentiated again; when nothing records the pass (eager, first order), they
run on plain numpy values instead, skipping every Tensor wrapper.
"""

import numpy as np

from .dispatch import bind
from .registry import ADD, ADD_N, CAST, ONES_LIKE, SUM_TO, ZEROS_LIKE
from .state import THREAD
from .tensor import Tensor, Written, as_recorded, current, dtype_of, is_differentiable_dtype, \
    shape_of, shapes_compatible


class UnconnectedGradients:
    """What to return for a source that the targets do not depend on."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How several gradient contributions to one tensor are summed."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


# Eager contributions to one tensor are summed early once they hold this many bytes (as
# TensorFlow's tape does), so that long fan-outs do not keep every partial gradient alive.
EARLY_AGGREGATION_BYTES = 128 * 2**20
_EARLY_AGGREGATION_COUNT = 4


def check_unconnected(value):
    if value in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        return value
    value = getattr(value, "value", value)
    if value in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        return value
    raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got {value!r}")


def check_seeds(targets, seeds, where, what):
    """The initial gradients ``seeds`` (None = ones) of ``targets``, checked: each must have
    its target's shape (a broadcast seed was summed away silently), and a number or array
    takes a float target's dtype. ``where``/``what`` name the function and argument."""
    out = []
    for k, (y, g) in enumerate(zip(targets, seeds)):
        if g is None or not isinstance(y, Tensor):
            out.append(g)
            continue
        if not isinstance(g, Tensor):
            g = np.asarray(g)
            if y.dtype is not None and is_differentiable_dtype(y.dtype) and g.dtype != y.dtype:
                g = g.astype(y.dtype)
        if not shapes_compatible(y.shape, shape_of(g)):
            raise ValueError(f"{where}: {what}[{k}] has shape {tuple(shape_of(g))} but its "
                             f"target has shape {tuple(y.shape)}")
        out.append(g)
    return out


def backprop(targets, target_grads, sources, producer=None, *, records=None, connected=None,
             stop=(), aggregation_method=None, unconnected=UnconnectedGradients.NONE):
    """Gradients of ``sum(targets)`` (weighted by ``target_grads``) with respect to ``sources``.

    Args:
        targets: tensors to differentiate.
        target_grads: one per target: the incoming gradient, or None for ones.
        sources: tensors to differentiate with respect to.
        producer: ``producer(tensor) -> (node, output_index)`` or None for a leaf; the nodes
            are found by searching back from the targets.
        records: instead of ``producer``, every candidate op in creation order (a tape),
            as :func:`record` tuples; those that the targets do not depend on are skipped
            on the way back.
        connected: with ``records``, when the caller knows them: the ids (a set or dict) of
            the floating-point tensors that depend on a source, the sources included; every
            one of ``records`` must then have an input among them.
        stop: tensors that gradients do not flow through (they may still be sources).
        aggregation_method: an :class:`AggregationMethod` constant or None.
        unconnected: :class:`UnconnectedGradients` value for sources that get no gradient.
    Returns:
        A list with one gradient (Tensor) or None per source.

    Nodes are numbered in creation order, which is topological; processing the relevant
    nodes in reverse creation order is TensorFlow's pending-count ready queue without the
    counting: a node runs only after every consumer of its outputs has contributed.
    """
    stop_ids = {id(t) for t in stop} if stop else ()
    eager = records is not None
    if Written.count:  # a target written in place means its newest value (sources: as given)
        targets = [current(t) for t in targets]
    if records is None:
        records = [record(n.prim, n.inputs, n.params, n.outputs, n)
                   for n in _reached(targets, producer, stop_ids)]
    # 2. Of the candidate ops, in topological order, those that depend on a source.
    if connected is not None:
        relevant = records
    else:
        connected, relevant = _connected(records, sources, stop_ids)
    # 3. Reverse pass. ``grads`` maps id(tensor) to its gradient, or to _Parts while several
    # contributions wait to be summed (a chain never builds a list). When nothing records the
    # pass (first order, eager), gradients are plain numpy values: no one differentiates them.
    state = THREAD.state
    plain = eager and not state.graphs and (not state.recorders or state.limit == 0)
    saved, state.plain_values = state.plain_values, plain
    try:
        grads = _reverse(targets, target_grads, sources, relevant, connected, stop_ids,
                         aggregation_method, plain)
    finally:
        state.plain_values = saved
    results = []
    for s in sources:
        g = _aggregate(grads, s, aggregation_method, keep=True) if id(s) in connected else None
        if g is None:
            g = unconnected_gradient(s, unconnected)
        elif type(g) is not Tensor:
            g = Tensor(np.asarray(g))
        results.append(g)
    return results


def _reverse(targets, target_grads, sources, relevant, connected, stop_ids, aggregation_method,
             plain):
    """The reverse pass proper: the gradients of every connected tensor, by id."""
    grads = {}
    for y, gy in zip(targets, target_grads):
        if id(y) in connected:
            if gy is None:
                gy = _plain_ones(y) if plain else _ones_like(y)
            _accumulate(grads, id(y), gy)
    source_ids = {id(s) for s in sources}
    for rec in reversed(relevant):
        prim, inputs, params, outputs, _ = rec
        if Written.count and _written_in(inputs, outputs):
            # an operand or result written in place after the op ran: its rules read it as
            # recorded, not its newest value
            with as_recorded((*inputs, *outputs)):
                _general_step(rec, grads, connected, source_ids, stop_ids,
                              aggregation_method, plain)
            continue
        vjps = prim.fast_vjps
        if vjps is None or stop_ids or plain and not prim.array_rules:
            _general_step(rec, grads, connected, source_ids, stop_ids, aggregation_method,
                          plain)
            continue
        # The common case, in line: one output, one rule per input, run as it is.
        ans = outputs[0]
        oid = id(ans)
        if oid in source_ids:
            g = _aggregate(grads, ans, aggregation_method, keep=True)
        else:
            g = grads.pop(oid, None)
            if type(g) is _Parts:
                g = _sum(g, aggregation_method)
        if g is None:
            continue
        for k, a in enumerate(inputs):
            aid = id(a)
            if aid not in connected:
                continue
            try:
                rule = vjps[k]
            except IndexError:  # fewer rules than inputs: the rest take no gradient
                break
            if rule is None:
                continue
            # (without an empty ``**params``: unpacking one costs as much as a check)
            gk = rule(g, ans, *inputs, **params) if params else rule(g, ans, *inputs)
            if gk is None:
                continue
            # _add_gradient(grads, rec, k, a, gk), in line: it runs for every gradient
            gv = gk._value if type(gk) is Tensor else gk
            av = a._value
            if not (type(gv) is np.ndarray and av is not None and gv.shape == av.shape and
                    (gv.dtype is av.dtype or gv.dtype == av.dtype)):
                gk = _fit_gradient(rec, k, a, gk)
            prev = grads.get(aid)
            if prev is None:
                grads[aid] = gk
            else:
                _accumulate(grads, aid, gk, prev)
    return grads


def _written_in(inputs, outputs):
    for a in inputs:
        if type(a) is Written:
            return True
    for o in outputs:
        if type(o) is Written:
            return True
    return False


def _general_step(rec, grads, connected, source_ids, stop_ids, method, plain):
    """The reverse step of an op off the fast path: several outputs, a joint rule, a user's
    rules in a plain pass, or stopped tensors."""
    prim, inputs, params, outputs, _ = rec
    g = [None if stop_ids and id(o) in stop_ids else
         _aggregate(grads, o, method, keep=id(o) in source_ids) for o in outputs]
    if all(x is None for x in g):
        return
    g = _fill(prim, outputs, g) if prim.multiple_results else g[0]
    ans, g, in_grads, user_rules = _prepare(rec, g, plain)
    vjps = prim.vjps
    for k, a in enumerate(inputs):
        if id(a) not in connected:
            continue
        if in_grads is None:  # one rule per input: run only the needed ones
            if k >= len(vjps) or vjps[k] is None:
                continue
            gk = vjps[k](g, ans, *inputs, **params)
        else:
            gk = in_grads[k]
        if gk is not None:
            _add_gradient(grads, rec, k, a, gk)
    if user_rules:
        THREAD.state.plain_values = True


def _add_gradient(grads, rec, k, a, gk):
    """Add ``gk``, the gradient of input ``k`` (``a``) of op ``rec``, fitted to ``a``."""
    gv = gk._value if type(gk) is Tensor else gk
    av = a._value
    if not (type(gv) is np.ndarray and av is not None and gv.shape == av.shape and
            (gv.dtype is av.dtype or gv.dtype == av.dtype)):
        gk = _fit_gradient(rec, k, a, gk)
    _accumulate(grads, id(a), gk)


def _prepare(rec, g, plain):
    """For an op off the fast path: the answer and output gradient(s) as its rules take them,
    the input gradients of a joint rule (else None), and whether its rules are a user's (then
    the caller turns plain values back on after them)."""
    prim, inputs, params, outputs, _ = rec
    multiple = prim.multiple_results
    if multiple and type(g) is not tuple:  # one output's gradient, bare
        g = (g,)
    if prim.vjps is None:
        raise LookupError(
            f"No gradient defined for operation '{_name(rec)}' (op type: {prim.name}). "
            "Give it a reverse rule (vjp= where it is declared, or hessgrad.defvjp), or wrap "
            "the code in hessgrad.custom_gradient, or hessgrad.stop_gradient its result.")
    user_rules = plain and not prim.array_rules  # they see Tensors, their ops make them
    if user_rules:
        g = _as_tensors(g, multiple)
        THREAD.state.plain_values = False
    ans = outputs if multiple else outputs[0]
    in_grads = None
    if prim.joint_vjp:
        in_grads = prim.vjps(g, ans, *inputs, **params)
        if len(in_grads) != len(inputs):
            raise ValueError(
                f"the gradient of op {_name(rec)} (type {prim.name}) returned "
                f"{len(in_grads)} gradients for {len(inputs)} inputs")
    return ans, g, in_grads, user_rules


def _as_tensors(g, multiple):
    if multiple:
        return tuple(x if x is None or isinstance(x, Tensor) else Tensor(np.asarray(x))
                     for x in g)
    return g if isinstance(g, Tensor) else Tensor(np.asarray(g))


def unconnected_gradient(source, unconnected):
    """What a source that no target depends on gets: None, or zeros shaped like it."""
    if unconnected == UnconnectedGradients.ZERO:
        return bind(ZEROS_LIKE.prim, (source,), {})
    return None


def record(prim, inputs, params, outputs, node=None):
    """One op as the backprop core reads it: a tuple, since a tape makes one per eager op.
    ``node`` is the graph node, if any (for its name in errors)."""
    return prim, inputs, params, outputs, node


def _name(rec):
    node = rec[4]
    return rec[0].name if node is None else node.name


def _connected(records, sources, stop_ids):
    """The ids of the float tensors that depend on a source (never through a stopped one),
    and the records that have such an input."""
    connected = {id(s) for s in sources if is_differentiable_dtype(s.dtype)}
    relevant = []
    for rec in records:
        prim, inputs, _, outputs, _ = rec
        if prim.nondiff:
            continue
        for a in inputs:
            if id(a) in connected:
                break
        else:
            continue
        relevant.append(rec)
        for o in outputs:
            v = o._value
            if (v.dtype if v is not None else o._dtype).kind in "fc" and \
                    not (stop_ids and id(o) in stop_ids):
                connected.add(id(o))
    return connected, relevant


class _Parts(list):
    """Gradient contributions to one tensor, not summed yet, and their bytes (None once one
    of them is not an eager array: then they wait for the end)."""

    __slots__ = ("nbytes",)

    def __init__(self, parts):
        super().__init__(parts)
        a, b = _nbytes(parts[0]), _nbytes(parts[1])
        self.nbytes = None if a is None or b is None else a + b


def _reached(targets, producer, stop_ids):
    """The nodes reachable backwards from the targets (never through a stopped tensor), in
    creation order."""
    reached = {}
    stack = list(targets)
    while stack:
        t = stack.pop()
        if stop_ids and id(t) in stop_ids:
            continue
        p = producer(t)
        if p is None:
            continue
        node = p[0]
        if id(node) in reached:
            continue
        reached[id(node)] = node
        for a in node.inputs:
            if isinstance(a, Tensor):
                stack.append(a)
    return sorted(reached.values(), key=_seq)


def _seq(node):
    return node.seq


def _fill(prim, outputs, out_grads):
    """The output gradients of a multiple-result op as a tuple, zeros for missing ones
    unless the op accepts None."""
    if not prim.none_grads_ok:
        out_grads = [g if g is not None else bind(ZEROS_LIKE.prim, (o,), {})
                     for o, g in zip(outputs, out_grads)]
    return tuple(out_grads)


def _fit_gradient(rec, k, a, g):
    """``g`` summed back to the shape of input ``a`` if the op broadcasts, checked against
    that shape, and given ``a``'s floating dtype (a float32 input mixed with float64 data gets
    a float32 gradient, as in JAX)."""
    if rec[0].broadcasts:
        g = unbroadcast(g, a)
    _check_shape(rec, k, a, g)
    a_dtype, g_dtype = a.dtype, dtype_of(g)
    if a_dtype is not None and a_dtype != g_dtype and a_dtype.kind == "f" and \
            g_dtype.kind in "fc":
        g = bind(CAST.prim, (g,), {"dtype": a_dtype})
    return g


def unbroadcast(g, x):
    """``g`` summed down to the shape of ``x`` (the VJP of implicit broadcasting). A gradient
    whose shape graph mode does not know is summed too (at run time ``sum_to`` returns it
    as it is if nothing was broadcast): left as it was, a broadcast operand's gradient was
    not summed, and came out too large."""
    xs, gs = shape_of(x), shape_of(g)
    if xs == gs or xs is None:
        return g
    return bind(SUM_TO.prim, (g,), {"shape": xs})


def _check_shape(rec, k, a, g):
    a_shape, g_shape = a.shape, shape_of(g)
    if a_shape == g_shape or shapes_compatible(a_shape, g_shape):
        return
    raise ValueError(
        "Incompatible shapes between op input and calculated input gradient. "
        f"Forward operation: {_name(rec)} (op type: {rec[0].name}). Input index: {k}. "
        f"Original input shape: {a_shape}. Calculated input gradient shape: {g_shape}")


def _accumulate(grads, key, g, prev=None):
    """Add contribution ``g`` to the gradient of the tensor ``key``; ``prev`` is what it has."""
    if prev is None:
        prev = grads.get(key)
        if prev is None:
            grads[key] = g
            return
    if type(prev) is not _Parts:
        grads[key] = _Parts((prev, g))
        return
    prev.append(g)
    if prev.nbytes is not None:  # counted as they come: a sum over the list made it O(n^2)
        b = _nbytes(g)
        prev.nbytes = None if b is None else prev.nbytes + b
        if prev.nbytes is not None and prev.nbytes >= EARLY_AGGREGATION_BYTES and \
                len(prev) >= _EARLY_AGGREGATION_COUNT:
            grads[key] = bind(ADD_N.prim, tuple(prev), {})


def _nbytes(g):
    """The bytes of an eager gradient's array, or None (symbolic, or not an array)."""
    v = g._value if isinstance(g, Tensor) else g
    return v.nbytes if type(v) is np.ndarray else None


def _aggregate(grads, t, method, keep):
    g = grads.get(id(t)) if keep else grads.pop(id(t), None)
    if type(g) is _Parts:
        g = _sum(g, method)
        if keep:
            grads[id(t)] = g
    return g


def _sum(contributions, method):
    if method == AggregationMethod.EXPERIMENTAL_TREE:
        add = ADD.prim
        while len(contributions) > 1:
            pairs = [bind(add, (contributions[i], contributions[i + 1]), {})
                     for i in range(0, len(contributions) - 1, 2)]
            if len(contributions) % 2:
                pairs.append(contributions[-1])
            contributions = pairs
        return contributions[0]
    if method in (None, AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        return bind(ADD_N.prim, tuple(contributions), {})
    raise ValueError(f"Invalid aggregation_method specified {method}.")


def _ones_like(t):
    return bind(ONES_LIKE.prim, (t,), {})


def _plain_ones(t):
    """The seed of a plain pass, whose gradients are arrays; for the usual 0-d target
    ``np.array(1.0)``, five times faster than ``np.ones``."""
    v = t._value
    return np.array(1, v.dtype) if v.ndim == 0 else np.ones(v.shape, v.dtype)
