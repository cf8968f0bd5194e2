"""The one backprop core, shared by ``gradients()`` (graph mode) and ``GradientTape``.

It walks recorded nodes in reverse without recursion: filter to the nodes between sources and
targets, count pending consumer edges, process nodes whose consumers are all done (a ready
queue), aggregate gradient contributions, zero-fill missing output gradients unless the op
accepts None, and resolve unconnected sources. VJP rules are hessgrad ops, so the gradients it
builds can be differentiated again.
"""

from .dispatch import bind
from .registry import get
from .tensor import Tensor, is_differentiable_dtype, shape_of


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


def backprop(targets, target_grads, sources, producer, *, stop=(), aggregation_method=None,
             unconnected=UnconnectedGradients.NONE):
    """Gradients of ``sum(targets)`` (weighted by ``target_grads``) with respect to ``sources``.

    Args:
        targets: tensors to differentiate.
        target_grads: one per target: the incoming gradient, or None for ones.
        sources: tensors to differentiate with respect to.
        producer: ``producer(tensor) -> (node, output_index)`` or None for a leaf.
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
    # 1. Nodes reachable backwards from the targets (never through a stopped tensor).
    reached = {}
    stack = list(targets)
    while stack:
        t = stack.pop()
        if stop_ids and id(t) in stop_ids:
            continue
        p = producer(t)
        if p is None or id(p[0]) in reached:
            continue
        node = p[0]
        reached[id(node)] = node
        for a in node.inputs:
            if isinstance(a, Tensor):
                stack.append(a)
    # 2. Of those, in topological order, the nodes that depend on a source.
    connected = {id(s) for s in sources if is_differentiable_dtype(s.dtype)}
    relevant = []
    for node in sorted(reached.values(), key=_seq):
        if node.prim.nondiff:
            continue
        for a in node.inputs:
            if id(a) in connected:
                break
        else:
            continue
        relevant.append(node)
        for o in node.outputs:
            if o._dtype_kind() in "fc" and not (stop_ids and id(o) in stop_ids):
                connected.add(id(o))
    # 3. Reverse pass.
    grads = {}
    for y, gy in zip(targets, target_grads):
        if id(y) in connected:
            grads.setdefault(id(y), []).append(_ones_like(y) if gy is None else gy)
    source_ids = {id(s) for s in sources}
    for node in reversed(relevant):
        outputs = node.outputs
        if len(outputs) == 1 and not stop_ids:   # the common case, without the general loop
            oid = id(outputs[0])
            contributions = grads.get(oid) if oid in source_ids else grads.pop(oid, None)
            if not contributions:
                continue
            if len(contributions) > 1:
                contributions = [_sum(contributions, aggregation_method)]
                if oid in source_ids:
                    grads[oid] = contributions
            out_grads = contributions
        else:
            out_grads = []
            for o in outputs:
                oid = id(o)
                g = None
                if not (stop_ids and oid in stop_ids):
                    g = _aggregate(grads, o, aggregation_method, keep=oid in source_ids)
                out_grads.append(g)
            if all(g is None for g in out_grads):
                continue
        inputs = node.inputs
        needs = [id(a) in connected for a in inputs]
        in_grads = _call_vjp(node, out_grads, needs)
        for k, g in enumerate(in_grads):
            if g is None or not needs[k]:
                continue
            a = inputs[k]
            _check_shape(node, k, a, g)
            _accumulate(grads, a, g)
    results = []
    for s in sources:
        g = _aggregate(grads, s, aggregation_method, keep=True) if id(s) in connected else None
        if g is None and unconnected == UnconnectedGradients.ZERO:
            g = bind(get("zeros_like"), (s,), {})
        results.append(g)
    return results


def _seq(node):
    return node.seq


def _call_vjp(node, out_grads, needs):
    prim = node.prim
    if prim.vjps is None:
        raise LookupError(
            f"No gradient defined for operation '{node.name}' (op type: {prim.name}). "
            "Wrap it in hessgrad.custom_gradient or hessgrad.stop_gradient.")
    if not prim.none_grads_ok:
        out_grads = [g if g is not None else bind(get("zeros_like"), (o,), {})
                     for o, g in zip(node.outputs, out_grads)]
    if prim.multiple_results:
        g, ans = tuple(out_grads), node.outputs
    else:
        g, ans = out_grads[0], node.outputs[0]
    if prim.joint_vjp:
        in_grads = prim.vjps(g, ans, *node.inputs, **node.params)
        if len(in_grads) != len(node.inputs):
            raise ValueError(
                f"the gradient of op {node.name} (type {prim.name}) returned {len(in_grads)} "
                f"gradients for {len(node.inputs)} inputs")
        return in_grads
    rules = prim.vjps
    return [rules[k](g, ans, *node.inputs, **node.params)
            if need and k < len(rules) and rules[k] is not None else None
            for k, need in enumerate(needs)]


def _check_shape(node, k, a, g):
    if type(g) is Tensor and g._value is not None and a._value is not None and \
            g._value.shape == a._value.shape:
        return
    a_shape, g_shape = a.shape, shape_of(g)
    if a_shape == g_shape or a_shape is None or g_shape is None:
        return
    if len(a_shape) == len(g_shape) and all(
            x is None or y is None or x == y for x, y in zip(a_shape, g_shape)):
        return
    raise ValueError(
        "Incompatible shapes between op input and calculated input gradient. "
        f"Forward operation: {node.name} (op type: {node.prim.name}). Input index: {k}. "
        f"Original input shape: {a_shape}. Calculated input gradient shape: {g_shape}")


def _accumulate(grads, t, g):
    contributions = grads.get(id(t))
    if contributions is None:
        grads[id(t)] = [g]
        return
    contributions.append(g)
    if len(contributions) >= _EARLY_AGGREGATION_COUNT and all(
            isinstance(c, Tensor) and c._value is not None for c in contributions):
        if sum(c._value.nbytes for c in contributions) >= EARLY_AGGREGATION_BYTES:
            grads[id(t)] = [bind(get("add_n"), tuple(contributions), {})]


def _aggregate(grads, t, method, keep):
    contributions = grads.get(id(t)) if keep else grads.pop(id(t), None)
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    total = _sum(contributions, method)
    if keep:
        grads[id(t)] = [total]
    return total


def _sum(contributions, method):
    if method == AggregationMethod.EXPERIMENTAL_TREE:
        add = get("add")
        while len(contributions) > 1:
            pairs = [bind(add, (contributions[i], contributions[i + 1]), {})
                     for i in range(0, len(contributions) - 1, 2)]
            if len(contributions) % 2:
                pairs.append(contributions[-1])
            contributions = pairs
        return contributions[0]
    if method in (None, AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        return bind(get("add_n"), tuple(contributions), {})
    raise ValueError(f"Invalid aggregation_method specified {method}.")


def _ones_like(t):
    return bind(get("ones_like"), (t,), {})
