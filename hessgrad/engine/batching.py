"""Batching: ops applied to arguments that carry a leading batch axis -- the one interpreter.

Each primitive declares its batching rule with it (``Primitive.batch``, see
:mod:`hessgrad.engine.registry`): the op computed for a whole batch by *binding ops* (the op
itself with shifted axes, reshapes, transposes), so one rule serves every way a batch runs:

* on arrays (``Plan.run_batched``: batched HVPs, dense Hessians, ``Function.map``): the rules
  bind in :class:`plain_values` mode, where ops return plain numpy values (:func:`on_values`);
* on tensors under tapes and in graphs (``vmap`` under a transform, the vectorized Jacobians of
  :meth:`GradientTape.jacobian`): a function is traced once into a per-example graph and
  replayed node by node (:class:`Trace`, :func:`map_rows`), so the batched result has
  derivatives of every order;
* in compiled programs: the compiler traces a rule on placeholders and splices the ops it
  binds into the program (``hessgrad.compiler.batched``).

A primitive without a rule runs once per batch member (:func:`per_member`), which is always
correct. A primitive may also declare a rule on arrays (``Primitive.batch_values``) that runs
whenever nothing differentiates the result: a faster one (matmul gathers the columns a block of
unit vectors picks instead of multiplying), or the only one (control flow's, which run traced
blocks with masks: a function holding such ops, with no ``batch`` rule, is run once per member
by a replay, see :func:`replayable`). One memory budget, :data:`BATCH_BYTES`, sizes every batch that is split into chunks
(:func:`members_per_chunk`).
"""

import math

import numpy as np

from .dispatch import bind
from .graph import CONST, PLACEHOLDER, Graph, dependent
from .nest import flatten, structure_key
from .registry import BROADCAST_TO, CONCATENATE, STACK, TRANSPOSE, UNSTACK
from .state import THREAD
from .tensor import ConcretizationError, Tensor, Variable, shape_of

# The batched values of one chunk of a batch take about this many bytes: large enough for
# matrix-matrix products (a thousand-element vector per member gives 500 members), small
# enough to stay in reused heap memory (fresh multi-megabyte mappings cost page faults on
# every call) and beside the n x n result of a Hessian (1.5 n^2 floats in all for n = 1200).
BATCH_BYTES = 4 * 2**20
# Fewer rows than this run one by one (map_rows): tracing and replaying costs about ten calls.
VECTORIZE_MIN = 8


def members_per_chunk(per_member, itemsize=8):
    """How many batch members fit :data:`BATCH_BYTES` when one holds ``per_member`` elements of
    ``itemsize`` bytes (at least one)."""
    return max(1, BATCH_BYTES // (max(itemsize, 1) * max(int(per_member), 1)))


def replayable(prim):
    """Whether a node of ``prim`` can be bound again on batched tensors (a rule that binds
    ops, or per member); not when its only rule runs on arrays."""
    return prim.batch is not None or prim.batch_values is None


# --- one op ----------------------------------------------------------------------------------
def apply(prim, args, flags, params, k):
    """``prim(*args, **params)`` for a batch of ``k`` members: the arguments flagged in
    ``flags`` carry a leading batch axis, and so does every result (a tuple of them)."""
    rule = prim.batch or per_member
    out = rule(prim, args, flags, params, k)
    return out if prim.multiple_results else (out,)


def on_values(prim, args, flags, params, k):
    """:func:`apply` on numpy values (nothing differentiates them): the primitive's rule on
    arrays when it has one, else its rule with ops returning plain values."""
    if prim.batch_values is not None:
        out = prim.batch_values(prim, args, flags, params, k)
        return out if prim.multiple_results else (out,)
    with plain_values():
        return apply(prim, args, flags, params, k)


def per_member(prim, args, flags, params, k):
    """The op once per batch member, the results stacked: correct for any op. (An input the
    op writes in place, see ``Primitive.writes``, is copied for each member when it is
    shared.)"""
    if not k:
        return _empty(prim, args, flags, params)
    written = prim.writes(params) if prim.writes else ()
    parts = [bind(UNSTACK.prim, (a,), {"axis": 0}) if f else None for a, f in zip(args, flags)]
    outs = []
    for j in range(k):
        member = [p[j] if f else (_copy(a) if i in written else a)
                  for i, (a, p, f) in enumerate(zip(args, parts, flags))]
        outs.append(bind(prim, tuple(member), params))
    if prim.multiple_results:
        return tuple(bind(STACK.prim, column, {"axis": 0}) for column in zip(*outs))
    return bind(STACK.prim, tuple(outs), {"axis": 0})


def _copy(a):
    return np.array(a) if isinstance(a, np.ndarray) else a


def run_members(prim, args, flags, params, active=None):
    """``prim``'s forward once per batch member, on values: the list of their outputs. An
    input the op writes in place (``Primitive.writes``) is copied for each member when it is
    shared -- unbatched, or a read-only broadcast over the batch -- as every member would
    write into one buffer (each result would be the last one's). ``active``: a boolean mask
    of the members that run (the others, inactive in an enclosing batched loop or branch, get
    the first active member's results, which the caller discards; written inputs are then
    always copied, so that inactive members' rows are not written)."""
    k = next(len(a) for a, f in zip(args, flags) if f)
    written = prim.writes(params) if prim.writes else ()
    members = range(k) if active is None or not active.any() else np.flatnonzero(active)
    outs = {}
    for j in members:
        member = []
        for i, (a, f) in enumerate(zip(args, flags)):
            if f:
                a = a[j]
                if i in written and (active is not None or not a.flags.writeable):
                    a = np.array(a)
            elif i in written and isinstance(a, np.ndarray):
                a = np.array(a)
            member.append(a)
        outs[j] = prim.forward(*member, **params)
    filler = outs[members[0]]
    return [outs.get(j, filler) for j in range(k)]


def _empty(prim, args, flags, params):
    """A batch of no members: the op on one member of zeros, its results with no rows."""
    member = [np.zeros(tuple(shape_of(a))[1:], _dtype(a)) if f else a
              for a, f in zip(args, flags)]
    out = bind(prim, tuple(member), params)

    def none(o):
        return np.zeros((0,) + tuple(shape_of(o)), _dtype(o))
    return tuple(none(o) for o in out) if prim.multiple_results else none(out)


def _dtype(x):
    return x.dtype if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.result_type(x)


class plain_values:
    """Context in which ops run on plain numpy values (nothing records them, no graph
    collects them, results are arrays): how a plan runs batching rules on arrays."""

    __slots__ = ("saved",)

    def __enter__(self):
        state = THREAD.state
        self.saved = state.recorders, state.limit, state.graphs, state.plain_values
        state.recorders, state.limit, state.graphs, state.plain_values = [], None, [], True

    def __exit__(self, *exc):
        state = THREAD.state
        state.recorders, state.limit, state.graphs, state.plain_values = self.saved


# --- a function traced once, replayed batched ------------------------------------------------
def inside(t, graph):
    return isinstance(t, Tensor) and t._value is None and t._node.graph is graph


class TraceGraph(Graph):
    """A per-example graph. Tensors from outside it (eager tensors the function closes over, a
    surrounding trace's tensors) become placeholders, fed with those tensors at replay, so
    that derivatives reach them."""

    def __init__(self):
        super().__init__()
        self.captures = {}  # id(outer tensor) -> (outer tensor, its placeholder)

    def _as_input(self, a, prim):
        if isinstance(a, Tensor) and not isinstance(a, Variable) and (
                a._value is not None or a._node.graph is not self):
            entry = self.captures.get(id(a))
            if entry is None:
                p = self.placeholder(a.dtype, a.shape, name="captured")
                p._weak = a._weak
                entry = self.captures[id(a)] = (a, p)
            return entry[1]
        return super()._as_input(a, prim)


class _SetAside:
    """Trace with no recorder observing (the per-example graph is not differentiated; its
    replay is)."""

    def __enter__(self):
        self.state = state = THREAD.state
        self.saved = state.recorders, state.limit, state.plain_values
        state.recorders, state.limit, state.plain_values = [], None, False

    def __exit__(self, *exc):
        self.state.recorders, self.state.limit, self.state.plain_values = self.saved


class Trace:
    """``run(inputs)`` traced once on per-example placeholders: ``leaves`` are the call's
    leaves, ``shapes`` the per-example shape of each mapped one (None where unmapped: the leaf
    itself is used). ``flat`` are its output leaves, ``nodes`` the nodes they need.

    Raises:
        ConcretizationError: ``run`` needs concrete values (Python control flow on them).
    """

    def __init__(self, run, leaves, shapes):
        self.graph = graph = TraceGraph()
        self.mapped = [s is not None for s in shapes]
        with _SetAside(), graph.as_default():
            self.inputs = [leaf if s is None else graph.placeholder(_dtype(leaf), s,
                                                                   name="example")
                           for leaf, s in zip(leaves, shapes)]
            self.out = run(self.inputs)
        self.flat = flatten(self.out)
        self.nodes = _needed(graph, self.flat)
        self.dependent = dependent(
            ((map(id, n.inputs), map(id, n.outputs)) for n in self.nodes),
            {id(p) for p, m in zip(self.inputs, self.mapped) if m})
        # Ops whose rules run on values only (control flow, whose nodes hold traced blocks or
        # closures) cannot take batched tensors: the function then runs per member.
        self.replayable = all(replayable(n.prim) for n in self.nodes)

    def batched_flags(self):
        return [id(y) in self.dependent for y in self.flat]

    def largest(self):
        """Elements in the largest value that depends on the mapped leaves, per member."""
        sizes = [math.prod(o.shape) for n in self.nodes
                 if id(n.outputs[0]) in self.dependent for o in n.outputs
                 if o.shape is not None and None not in o.shape]
        return max(sizes, default=1)

    def replay(self, moved, k):
        """``(flat outputs, batched flags)``: the nodes bound again, batched ops (a leading
        axis of length ``k``) where an input depends on the mapped leaves ``moved`` (their
        values, batch axis first)."""
        graph = self.graph
        if not k:
            return self._replay_empty()
        env = {id(p): (m, True) for p, m, is_mapped in zip(self.inputs, moved, self.mapped)
               if is_mapped}
        env.update((id(p), (outer, False)) for outer, p in graph.captures.values())
        for node in self.nodes:
            if node.prim is PLACEHOLDER:
                continue
            if node.prim is CONST:
                env[id(node.outputs[0])] = (node.params["value"], False)
                continue
            args, flags = [], []
            for a in node.inputs:
                value, flag = env[id(a)] if inside(a, graph) else (a, False)
                args.append(value)
                flags.append(flag)
            if any(flags):
                outs = apply(node.prim, args, flags, node.params, k)
            else:
                outs = bind(node.prim, tuple(args), node.params)
                outs = outs if node.prim.multiple_results else (outs,)
            for o, v in zip(node.outputs, outs):
                env[id(o)] = (v, any(flags))
        return self._outputs(env)

    def _outputs(self, env):
        values, flags = [], []
        for y in self.flat:
            value, flag = env[id(y)] if inside(y, self.graph) else (y, False)
            values.append(value)
            flags.append(flag)
        return values, flags

    def _replay_empty(self):
        """A batch of size 0: what depends on the mapped leaves is empty (shaped from the
        trace); the rest is computed as usual."""
        graph = self.graph
        env = {id(p): (outer, False) for outer, p in graph.captures.values()}
        for node in self.nodes:
            if node.prim is PLACEHOLDER or id(node.outputs[0]) in self.dependent:
                continue
            if node.prim is CONST:
                env[id(node.outputs[0])] = (node.params["value"], False)
                continue
            args = [env[id(a)][0] if inside(a, graph) else a for a in node.inputs]
            outs = bind(node.prim, tuple(args), node.params)
            for o, v in zip(node.outputs, outs if node.prim.multiple_results else (outs,)):
                env[id(o)] = (v, False)
        for y in self.flat:
            if inside(y, graph) and id(y) in self.dependent:
                if y.shape is None or None in y.shape:
                    raise ValueError(f"vmap: an output's shape is known only at run time "
                                     f"({y.shape}); a batch of size 0 needs it")
                env[id(y)] = (Tensor(np.zeros((0,) + tuple(y.shape), y.dtype)), True)
        return self._outputs(env)


def _needed(graph, outputs):
    """The nodes of ``graph`` that compute ``outputs``, in creation order."""
    nodes, stack = {}, [t for t in outputs if inside(t, graph)]
    while stack:
        node = stack.pop()._node
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        stack.extend(a for a in node.inputs if inside(a, graph))
    return sorted(nodes.values(), key=lambda n: n.seq)


def per_member_call(run, leaves, moved, mapped, k, flags=None):
    """``(structure, flat outputs, batched flags)`` of ``run(member leaves)`` once per batch
    member on slices, the results stacked. ``flags`` (from a trace, when there is one) tell
    which outputs depend on the mapped leaves; without a trace an output is taken as shared
    when every member returned the same value."""
    if not k:
        raise ValueError("vmap: fun cannot be traced (it needs concrete values), so it runs "
                         "once per batch member; a batch of size 0 gives nothing to run")
    slices = [_slices(m) if is_mapped else None for m, is_mapped in zip(moved, mapped)]
    results = [run([s[j] if is_mapped else leaf for leaf, s, is_mapped in
                    zip(leaves, slices, mapped)]) for j in range(k)]
    structure = structure_key(results[0])
    if any(structure_key(r) != structure for r in results[1:]):
        raise ValueError("vmap: fun returned differently structured outputs for different "
                         "batch members")
    columns = list(zip(*[flatten(r) for r in results]))
    if flags is None:
        flags = [not _same(column) for column in columns]
    values = []
    for column, batched in zip(columns, flags):
        if column[0] is None:
            values.append(None)
        elif batched:
            values.append(bind(STACK.prim, tuple(_as_value(v) for v in column), {"axis": 0}))
        else:
            values.append(column[0])
    return results[0], values, flags


def _as_value(value):
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return value
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value)
    raise TypeError(f"vmap: fun returned {type(value).__name__}; outputs must be arrays, "
                    "tensors or numbers (or tuples, lists and dicts of them)")


def _slices(value):
    if isinstance(value, Tensor):
        return bind(UNSTACK.prim, (value,), {"axis": 0})
    return list(value)


def _same(column):
    first = column[0]
    if all(v is first for v in column):
        return True
    try:
        arrays = [np.asarray(v.numpy() if isinstance(v, Tensor) else v) for v in column]
    except TypeError:  # symbolic values: assume they differ
        return False
    return all(a.shape == arrays[0].shape and np.array_equal(a, arrays[0]) for a in arrays)


def replay_call(run, leaves, moved, mapped, k):
    """``(structure, flat outputs, batched flags)`` of ``run`` over a batch, built from
    differentiable ops: traced once and replayed batched, or (when it cannot be traced or
    replayed) run per member. ``moved``: each mapped leaf with its batch axis first."""
    shapes = [tuple(shape_of(m))[1:] if is_mapped else None for m, is_mapped in zip(moved,
                                                                                   mapped)]
    try:
        trace = Trace(run, leaves, shapes)
    except ConcretizationError:  # Python control flow on values: per member, eagerly
        return per_member_call(run, leaves, moved, mapped, k)
    if not trace.replayable:
        return per_member_call(run, leaves, moved, mapped, k, trace.batched_flags())
    return (trace.out, *trace.replay(moved, k))


# --- rows: the vectorized Jacobians ------------------------------------------------------------
def map_rows(fun, rows, vectorize=True):
    """``fun`` applied to every row of ``rows`` (an array), as ``vmap`` would: ``fun`` maps one
    row to a flat list of tensors (or None). Returns ``(values, batched)``: per output, the
    outputs of all rows stacked along a new leading axis where ``batched``, else (an output
    that does not depend on the row) its one value; None stays None.

    With ``vectorize`` and at least ``VECTORIZE_MIN`` rows (any number in a trace), ``fun``
    is traced once and its trace replayed with batched ops on chunks of rows sized by
    :data:`BATCH_BYTES`: nothing is compiled, which suits maps run once, such as the rows of
    a Jacobian. Otherwise, or when ``fun`` cannot be traced or replayed, ``fun`` runs once per
    row (never for no rows: the result is then ``([], [])``). Either way the results are
    tensors that can be differentiated (under a tape, an accumulator or in a trace).
    """
    k = len(rows)

    def run(inputs):
        return fun(inputs[0])
    trace = None
    # (in a trace, one batched product keeps the graph small whatever k is)
    if vectorize and k and (k >= VECTORIZE_MIN or THREAD.state.graphs):
        try:
            trace = Trace(run, [rows], [tuple(shape_of(rows))[1:]])
        except ConcretizationError:
            pass
    if trace is None or not trace.replayable:
        if not k:
            return [], []
        _, values, batched = per_member_call(
            run, [rows], [rows], [True], k, None if trace is None else trace.batched_flags())
        return values, batched
    chunk = members_per_chunk(trace.largest(), np.dtype(_dtype(rows)).itemsize)
    pieces = [trace.replay([rows[start:start + chunk]], min(chunk, k - start))
              for start in range(0, k, chunk)]
    values, batched = pieces[0]
    if len(pieces) > 1:
        values = [bind(CONCATENATE.prim, tuple(p[0][i] for p in pieces), {"axis": 0})
                  if b else v for i, (v, b) in enumerate(zip(values, batched))]
    return values, batched


def stacked_rows(fun, rows, vectorize=True):
    """:func:`map_rows`'s outputs, each with its leading axis of ``len(rows)`` rows (an output
    that does not depend on the row broadcast to them; None stays None); ``[]`` for no rows:
    the rows of a Jacobian."""
    values, batched = map_rows(fun, rows, vectorize)
    return [v if v is None or b else broadcast(v, len(rows)) for v, b in zip(values, batched)]


def broadcast(value, k):
    """``value`` repeated along a new leading axis of length ``k`` (a view)."""
    shape = (k,) + tuple(shape_of(value))
    if isinstance(value, Tensor):
        return bind(BROADCAST_TO.prim, (value,), {"shape": shape})
    return np.broadcast_to(value, shape)


def move_to_front(value, axis):
    """``value`` with its axis ``axis`` moved first."""
    if not axis:
        return value
    if isinstance(value, Tensor):
        nd = len(value.shape)
        return bind(TRANSPOSE.prim, (value,),
                    {"axes": (axis,) + tuple(a for a in range(nd) if a != axis)})
    return np.moveaxis(value, axis, 0)
