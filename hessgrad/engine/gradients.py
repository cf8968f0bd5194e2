"""``gradients()``: graph-mode symbolic differentiation (TensorFlow's ``tf.gradients``)."""

from .backprop import UnconnectedGradients, backprop, check_seeds, check_unconnected
from .graph import get_default_graph, substituted
from .nest import flatten
from .tensor import Tensor


def _graph_producer(t):
    node = t._node
    return None if node is None else (node, t._index)


def gradients(ys, xs, grad_ys=None, name="gradients", gate_gradients=False,
              aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE,
              colocate_gradients_with_ops=True):
    """Symbolic partial derivatives of ``sum(ys)`` w.r.t. each of ``xs`` in graph mode.

    Builds gradient nodes in the graph of ``ys``, so the result can be differentiated again.

    Args:
        ys: a tensor or list of tensors to differentiate.
        xs: a tensor (or Variable) or list of them.
        grad_ys: optional incoming gradients, one per y (None entries mean ones).
        name: name prefix of the gradient nodes.
        gate_gradients, colocate_gradients_with_ops: accepted for compatibility; execution
            is sequential, so they change nothing.
        aggregation_method: an ``AggregationMethod`` constant.
        stop_gradients: tensors treated as constants (partial instead of total derivatives).
        unconnected_gradients: 'none' -> None, 'zero' -> zeros for xs the ys do not reach.
    Returns:
        A list with ``len(xs)`` gradients (tensors or None).
    Raises:
        RuntimeError: called in eager mode (use ``GradientTape``).
        LookupError: an op between xs and ys has no gradient.
        ValueError: a gradient's shape does not match its input, or arguments disagree.

    >>> import hessgrad as hg
    >>> with hg.Graph().as_default() as g:
    ...     a = hg.constant(0.)
    ...     b = 2 * a
    ...     dab = hg.gradients(a + b, [a, b], stop_gradients=[a, b])
    >>> [float(v) for v in g.run(dab)]
    [1.0, 1.0]
    """
    del name, gate_gradients, colocate_gradients_with_ops  # nodes are named by op type
    unconnected = check_unconnected(unconnected_gradients)
    ys = substituted(flatten(ys))
    xs = substituted(flatten(xs, as_written=False))  # a source written in place: as made
    graph = get_default_graph()
    symbolic = [y for y in ys if isinstance(y, Tensor) and y._value is None]
    if graph is None:
        if not symbolic:
            raise RuntimeError("hg.gradients is not supported when eager execution is enabled. "
                               "Use hg.GradientTape instead.")
        graph = symbolic[0]._node.graph
    for t in symbolic:
        if t._node.graph is not graph:
            raise ValueError(f"gradients: y {t.name} is not in the graph being built")
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    else:
        grad_ys = flatten(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys]
        if len(grad_ys) != len(ys):
            raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    for x in xs:
        if not isinstance(x, Tensor):
            raise TypeError(f"gradients: xs must be tensors or Variables, got {x!r}")
    grad_ys = check_seeds(ys, grad_ys, "gradients", "grad_ys")  # indices as the user's
    targets = [y for y in ys if isinstance(y, Tensor)]
    target_grads = [g for y, g in zip(ys, grad_ys) if isinstance(y, Tensor)]
    with graph.as_default():
        return backprop(targets, target_grads, xs, _graph_producer,
                        stop=() if stop_gradients is None else
                        substituted(flatten(stop_gradients)),
                        aggregation_method=aggregation_method, unconnected=unconnected)
