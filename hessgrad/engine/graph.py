"""Graph mode: symbolic nodes built by ops, run later by a planned executor."""

import math

import numpy as np

from .dispatch import READ, bind
from .graph_text import graph_text
from .node import Node
from .registry import CAST, Primitive
from .state import THREAD, reraise_refused
from .tensor import Tensor, Variable, Written, current, owned, shapes_compatible


def _placeholder_forward():
    raise RuntimeError("a placeholder has no value: feed it")


PLACEHOLDER = Primitive("placeholder", _placeholder_forward, nondiff=True)
CONST = Primitive("const", lambda: None, nondiff=True)


def _substitute(a, stack):
    if isinstance(a, Tensor):
        for maps in stack:
            for m in maps:
                a = m.get(id(a), a)
    return a


def substituted(x):
    """``x`` (a tensor or a list of them) as the ops of the graph being built read it now:
    the clone's tensor in place of the original while :meth:`Graph.substituting` is active
    (so that a ``grad_fn`` watching or differentiating the tensors it closed over gets the
    clone's)."""
    graphs = THREAD.state.graphs
    graph = graphs[-1] if graphs else None
    if graph is None or not graph._substitutions:
        return x
    if isinstance(x, list):
        return [_substitute(a, graph._substitutions) for a in x]
    return _substitute(x, graph._substitutions)


class _Substituting:
    __slots__ = ("graph", "maps")

    def __init__(self, graph, maps):
        self.graph, self.maps = graph, tuple(maps)

    def __enter__(self):
        self.graph._substitutions.append(self.maps)

    def __exit__(self, *exc):
        self.graph._substitutions.pop()


class Graph:
    """A dataflow graph. Ops applied inside ``with graph.as_default():`` add nodes to it.

    >>> import hessgrad as hg
    >>> g = hg.Graph()
    >>> with g.as_default():
    ...     x = hg.placeholder("float64", shape=(2,), name="x")
    ...     y = hg.reduce_sum(x * x)
    ...     (dx,) = hg.gradients(y, [x])
    >>> g.run(dx, {x: [1.0, 2.0]})
    array([2., 4.])

    ``print(graph)`` lists its ops, one per line. A graph traced by ``hessgrad.function``
    also lists the program it runs after optimization once compiled: ``optimized`` is then
    that :class:`hessgrad.compiler.CompiledPlan` (steps before and after, fused kernels,
    generated source), else None.
    """

    def __init__(self):
        self.nodes = []
        self.optimized = None
        self._name_counts = {}
        self._reads = {}       # id(Variable) -> its read tensor in this graph
        self._captured = {}    # id(array) -> (array, its read-only copy)
        self._weak_casts = {}  # (id(weak tensor), dtype) -> its cast (see _weak_cast)
        self._plans = {}
        self._substitutions = []  # see substituting()
        self.lifted = {}  # capture slot -> its placeholder (see tracing.capture)
        # A graph traced at an example point (hessgrad.function's traces): id(placeholder) ->
        # its value there; Python branches on tensor values then take the branch the example
        # takes and become guards: (tensor, conversion, the value it gave), checked at every
        # run (see tracing.function). None: no example point, branches on values raise.
        self.examples = None
        self.guards = []
        self._example_values = {}  # id(tensor) -> its value at the example point

    def __repr__(self):
        after = "" if self.optimized is None else f", {self.optimized.ops_after} after optimization"
        return f"<hessgrad.Graph: {len(self.nodes)} ops{after}>"

    def __str__(self):
        return graph_text(self)

    def discard(self):
        """Break the references between this graph and its nodes (a graph thrown away after
        one use): its tensors and nodes are then freed with their last reference, not left
        as cyclic garbage for the collector."""
        for node in self.nodes:
            node.graph, node.inputs, node.outputs = None, (), ()
        self.nodes = []
        for table in (self._reads, self._captured, self._weak_casts, self._plans, self.lifted,
                      self._example_values):
            table.clear()
        self.guards = []

    # --- building ------------------------------------------------------------------------
    def as_default(self):
        return _DefaultGraph(self)

    def unique_name(self, base):
        count = self._name_counts.get(base, 0)
        self._name_counts[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    def substituting(self, maps):
        """Context in which the nodes added read, for each tensor input, what ``maps`` (dicts
        from ``id(tensor)`` to a tensor, applied in order) give for it. A loop or branch body's
        op that holds a Python function reading the body's tensors (a custom gradient's
        ``grad_fn``) is cloned by control flow's gradient rules; the clone's function then
        reads the clone's tensors, not the original body's."""
        return _Substituting(self, maps)

    def add_node(self, prim, args, params, name=None, avals=None):
        if self._substitutions:
            args = tuple(_substitute(a, self._substitutions) for a in args)
        inputs = tuple(self._as_input(a, prim) for a in args)
        if avals is None and any(isinstance(a, Tensor) and a._weak for a in inputs) \
                and not prim.pass_through:
            inputs, avals = self._promote_weak(prim, inputs, params)
        node = Node(prim, inputs, params, graph=self, name=self.unique_name(name or prim.name))
        if avals is None:
            avals = _abstract_eval(prim, inputs, params)
        outs = tuple(Tensor(None, node, k, shape, dtype) for k, (shape, dtype) in enumerate(avals))
        node.outputs = outs
        self.nodes.append(node)
        self._plans.clear()
        return outs if prim.multiple_results else outs[0]

    def _promote_weak(self, prim, inputs, params):
        """``(inputs, avals)``: each weak tensor among ``inputs`` promoted as numpy 2 promotes a
        Python scalar there, and the node's avals when they are known already (else None).

        A Python scalar meeting arrays or numpy scalars takes their dtype where its kind allows
        (NEP 50: ``float32_array * 0.5`` is float32, ``int32_array * 0.5`` float64,
        ``float32_array * 1j`` complex64); alone it is a float64 (complex128) array, which is
        what a weak tensor holds. So a weak input meeting strong ones is cast, by a cast node
        the executor and the compiler see as any other, to ``np.result_type(<strong dtypes>,
        <a Python scalar of its kind>)``. Not every numpy function promotes so: np.stack,
        np.dot, np.searchsorted make the scalar a float64 array first. Which one the op does
        is read from its shape rule run on a Python scalar in the weak input's place: it casts
        when the cast gives that dtype and the weak input as it is would not, or when the op
        gives booleans (the comparisons, whose result dtype cannot tell: numpy compares
        ``float32_array < 0.1`` in float32).
        """
        strong = [a.dtype for a in inputs if isinstance(a, (np.ndarray, np.generic))
                  or isinstance(a, Tensor) and not a._weak]
        if not strong:  # numpy would make the scalars float64 (complex128) arrays: as they are
            return inputs, None
        weak = [isinstance(a, Tensor) and a._weak for a in inputs]
        try:
            targets = [np.result_type(*strong, WEAK_SCALARS[a.dtype.kind]) if w else None
                       for a, w in zip(inputs, weak)]
        except TypeError:  # no numeric promotion (strings, objects): as they are
            return inputs, None
        if all(t == a.dtype for a, w, t in zip(inputs, weak, targets) if w):
            return inputs, None  # float64 arrays, or int arrays (promoted to float64)
        # The choice depends on the op and the dtypes only (ops with params aside: a cast's
        # dtype, an axis): remembered, it costs one more dict lookup per node, not two
        # shape rules (a traced loss may use a scalar argument in every other op).
        key = None if params else (prim, tuple(
            (a.dtype, a._weak) if isinstance(a, Tensor) else
            a.dtype if isinstance(a, (np.ndarray, np.generic)) else type(a) for a in inputs))
        cast = _WEAK_CASTS.get(key)
        if cast is not None:
            return (self._cast_weak_inputs(inputs, weak, targets) if cast else inputs), None
        scalars = [WEAK_SCALARS[a.dtype.kind] if w else a for a, w in zip(inputs, weak)]
        stand_ins = [Tensor(None, None, 0, a.shape, t) if w else a
                     for a, w, t in zip(inputs, weak, targets)]
        try:
            wanted = _dtypes(_abstract_eval(prim, scalars, params))
        except Exception:  # noqa: BLE001 - a shape rule that needs tensors: take them strong
            return inputs, None
        promoted = _abstract_eval(prim, stand_ins, params)
        avals = promoted
        cast = _dtypes(promoted) == wanted
        if cast and np.dtype(np.bool_) not in wanted:
            avals = _abstract_eval(prim, inputs, params)
            cast = _dtypes(avals) != wanted
        if key is not None:
            _WEAK_CASTS[key] = cast
        if not cast:
            return inputs, None if avals is promoted else avals
        return self._cast_weak_inputs(inputs, weak, targets), promoted

    def _cast_weak_inputs(self, inputs, weak, targets):
        return tuple(self._weak_cast(a, t) if w and t != a.dtype else a
                     for a, w, t in zip(inputs, weak, targets))

    def _weak_cast(self, a, dtype):
        """``a`` cast to ``dtype``: one cast node per weak tensor and dtype, bound (hessgrad.ops'
        cast primitive) so that recorders see it; a new one while any recorder is active, as a
        recorder that began after the first could not differentiate through it."""
        key = (id(a), dtype)
        if not THREAD.state.recorders and key in self._weak_casts:
            return self._weak_casts[key]
        with self.as_default():
            out = bind(CAST.prim, (a,), {"dtype": dtype})
        if not THREAD.state.recorders:
            self._weak_casts[key] = out
        return out

    def _as_input(self, a, prim):
        if type(a) is Written:  # written in place: the node reads its newest value
            a = current(a)
        if not isinstance(a, Tensor):
            if type(a) is not np.ndarray:
                return a
            lifted = self._lifted(a)
            return self._capture(a) if lifted is None else lifted
        if type(a) is Variable:
            return self.read_variable(a)
        if a._value is not None:  # an eager tensor captured by the graph: a constant
            lifted = self._lifted(a._value)
            return a._value if lifted is None else lifted
        if a._node.graph is not self:
            raise ValueError(
                f"op {prim.name}: input {a.name} belongs to another graph; tensors of one graph "
                "cannot feed ops of another")
        return a

    def _capture(self, array):
        """A numpy array the graph reads (data in the traced function's closure) is copied
        once, when traced, as JAX captures constants: a caller's later in-place change
        cannot reach some cached results (values) and not others (sparsity patterns). A
        capture run (tracing.capture), whose graph is thrown away, reads the array itself."""
        if THREAD.state.capturing:
            return array
        entry = self._captured.get(id(array))
        if entry is None or entry[0] is not array:
            copy = array.copy()
            copy.flags.writeable = False
            entry = self._captured[id(array)] = (array, copy)
            self._captured[id(copy)] = (copy, copy)  # rules pass node inputs back in
        return entry[1]

    def _lifted(self, array):
        """The input standing for ``array`` when this graph is traced under a capture key
        that lifts it (a large array the key names by shape only), else None."""
        lift = THREAD.state.lift
        slot = None if lift is None else lift.slots.get(id(array))
        if slot is None:
            return None
        if lift.tracing is not self:
            lift.baked.add(slot)
            return None
        p = self.lifted.get(slot)
        if p is None:
            p = self.lifted[slot] = self.placeholder(array.dtype, array.shape,
                                                     name=f"captured{slot}")
            lift.lifted.add(slot)
            if self.examples is not None:
                self.examples[id(p)] = array
        return p

    def read_variable(self, var):
        read = self._reads.get(id(var))
        if read is None:
            node = Node(READ, (var,), {}, graph=self, name=self.unique_name(var.name + "/read"))
            read = Tensor(None, node, 0, var.shape, var.dtype)
            node.outputs = (read,)
            self.nodes.append(node)
            self._reads[id(var)] = read
        return read

    def placeholder(self, dtype, shape=None, name=None):
        shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        return self.add_node(PLACEHOLDER, (), {}, name=name or "Placeholder",
                             avals=[(shape, np.dtype(dtype))])

    def constant(self, value, name=None, source=None):
        """A constant node holding ``value``; ``source``: the array it was made from, lifted
        in its place when the graph is traced under a capture key (see ``_lifted``)."""
        value = np.asarray(value)
        if type(source) is np.ndarray and source.shape == value.shape and \
                source.dtype == value.dtype:
            lifted = self._lifted(source)
            if lifted is not None:
                return lifted
        node_out = self.add_node(CONST, (), {"value": value}, name=name or "Const",
                                 avals=[(value.shape, value.dtype)])
        return node_out

    # --- the example point: Python branches on values --------------------------------------
    def guard(self, t, convert):
        """``convert(value)`` of ``t`` (``bool``, ``int``, ``operator.index``) at the example
        point, recorded as a guard that every run checks; None without an example point (or
        when ``t`` depends on a value it does not fix: a loop body's)."""
        value = self.example_value(t)
        if value is None:
            return None
        result = convert(value)
        self.guards.append((t, convert, result))
        return result

    def example_value(self, t):
        """The value of ``t`` at the example point (the ops it depends on run once, their
        values kept), or None."""
        values = self._example_values
        if self.examples is None or t._node is None or t._node.graph is not self:
            return None
        pending = [t._node]
        while pending:
            node = pending[-1]
            if id(node.outputs[0]) in values:
                pending.pop()
                continue
            missing = [a._node for a in node.inputs if isinstance(a, Tensor) and
                       a._value is None and id(a) not in values]
            if missing:
                if any(m.graph is not self for m in missing):
                    return None
                pending.extend(missing)
                continue
            pending.pop()
            if node.prim is PLACEHOLDER:
                if id(node.outputs[0]) not in self.examples:
                    return None
                outs = (self.examples[id(node.outputs[0])],)
            elif node.prim is CONST:
                outs = (node.params["value"],)
            else:
                args = [a if not isinstance(a, Tensor) else
                        values[id(a)] if a._value is None else a._value for a in node.inputs]
                with np.errstate(all="ignore"):
                    result = _run_node(node, args)
                outs = result if node.prim.multiple_results else (result,)
            for o, v in zip(node.outputs, outs):
                values[id(o)] = v
        return values[id(t)]

    # --- running -------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None):
        """Evaluate ``fetches`` (a tensor or a list of them) given placeholder values."""
        single = isinstance(fetches, Tensor)
        # a fetch written in place is its newest value; a fed placeholder is itself
        fetch_list = [current(fetches)] if single else [current(t) for t in fetches]
        feed_dict = feed_dict or {}
        feeds = list(feed_dict)
        key = (tuple(id(t) for t in fetch_list), tuple(id(t) for t in feeds))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = Plan(self, fetch_list, feeds)
        results = [owned(r) for r in plan.run([feed_dict[t] for t in feeds])]
        return results[0] if single else results


class _DefaultGraph:
    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        THREAD.state.graphs.append(self.graph)
        THREAD.state.refused = None
        return self.graph

    def __exit__(self, *exc):
        THREAD.state.graphs.pop()
        reraise_refused(exc[1])


def constant_value(x):
    """The value of an operand known when the graph is built (a Python or numpy value, an
    eager tensor, a constant node's output), or None for a symbolic tensor."""
    if not isinstance(x, Tensor):
        return x
    if x._value is not None:
        return x._value
    return x._node.params["value"] if x._node.prim is CONST else None


def is_weak(x):
    """Whether ``x`` promotes weakly: a Python number, or a weak tensor (one standing for a
    traced Python scalar)."""
    return x._weak if isinstance(x, Tensor) else type(x) in PYTHON_SCALARS


def python_operator(apply, operands, arithmetic=True):
    """``apply(*operands)`` for a Python operator with a weak tensor among ``operands``.

    When every operand is weak or a Python number, the result (a tensor or a tuple of them) is
    weak too: Python operators on Python numbers give Python numbers and bools, which numpy
    promotes weakly again (``x32 * (s * 2.0)`` is float32), whereas functions
    (``hnp.multiply(s, 2.0)``) give strong results, as numpy's do. Python's ``arithmetic`` on
    bools is integer arithmetic (``(s > 0) + (t > 0)`` is 2, numpy's logical or would give
    True): weak bools are cast to int64 first.
    """
    scalars = all(map(is_weak, operands))
    if scalars and arithmetic and all(a.dtype.kind == "b" if isinstance(a, Tensor) else
                                      type(a) is bool for a in operands):
        operands = tuple(bind(CAST.prim, (a,), {"dtype": np.dtype(np.int64)})
                         if isinstance(a, Tensor) else int(a) for a in operands)
    out = apply(*operands)
    if scalars:
        for o in out if isinstance(out, tuple) else (out,):
            o._weak = o._value is None and o._dtype.kind in WEAK_SCALARS
    return out


def get_default_graph():
    """The graph ops are currently added to, or None in eager mode."""
    graphs = THREAD.state.graphs
    return graphs[-1] if graphs else None


def placeholder(dtype, shape=None, name=None):
    """A graph input to be fed at run time (graph mode only)."""
    graph = get_default_graph()
    if graph is None:
        raise RuntimeError("placeholder() is only available while building a graph "
                           "(inside `with hg.Graph().as_default():` or a traced hg.function)")
    return graph.placeholder(dtype, shape, name)


def dependent(steps, batched):
    """The values computed from the ``batched`` ones (a set, extended in place and returned):
    ``steps`` are ``(inputs, outputs)`` pairs in execution order, by any hashable names."""
    for inputs, outputs in steps:
        for a in inputs:
            if a in batched:
                batched.update(outputs)
                break
    return batched


def _where(node):
    return f"while running graph node {node.name} (op {node.prim.name})"


def _run_node(node, values):
    try:
        return node.prim.forward(*values, **node.params)
    except Exception as exc:
        exc.add_note(_where(node))
        raise


def _stand_in(a):
    if isinstance(a, Tensor):
        if a._shape is None or None in a._shape:
            raise _UnknownShape
        return np.broadcast_to(np.ones((), a._dtype), a._shape)
    return a


class _UnknownShape(Exception):
    pass


# dtype kind of a weak tensor -> a Python scalar of that kind, which numpy promotes as the
# tensor is to be promoted (see Graph._promote_weak)
WEAK_SCALARS = {"b": True, "i": 1, "f": 1.0, "c": 1j}
PYTHON_SCALARS = (bool, int, float, complex)

# (primitive, input dtypes and weak flags) -> whether Graph._promote_weak casts
_WEAK_CASTS = {}


def _dtypes(avals):
    return [np.dtype(dtype) for _, dtype in avals]


def _abstract_eval(prim, inputs, params):
    """Static shapes and dtypes of a node's outputs."""
    if prim.shape_rule is not None:
        out = prim.shape_rule(*inputs, **params)
        return out if prim.multiple_results else [out]
    try:
        with np.errstate(all="ignore"):
            out = prim.forward(*[_stand_in(a) for a in inputs], **params)
    except _UnknownShape:
        out = None
    except Exception:  # noqa: BLE001 - stand-in values may be invalid for the op: shape unknown
        out = None
    if out is None:
        # Python scalars as they are: numpy promotes them weakly (NEP 50)
        dtypes = [a.dtype if isinstance(a, Tensor) else
                  a if type(a) in PYTHON_SCALARS else np.result_type(a)
                  for a in inputs]
        dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
        n = len(out) if prim.multiple_results and out else 1
        return [(None, dtype)] * n
    outs = out if prim.multiple_results else [out]
    return [(np.shape(o), np.result_type(o)) for o in outs]


class Plan:
    """A straight list of steps that computes ``fetches`` from ``feeds``; built once.

    Nodes that depend on no feed and no Variable are evaluated while the plan is built
    (constant folding), so a graph traced at a fixed point (an HVP at fixed x) re-runs only
    the part that depends on its inputs.
    """

    def __init__(self, graph, fetches, feeds, fold_constants=True):
        fed = {id(t) for t in feeds}
        needed = {}
        stack = [t for t in fetches if isinstance(t, Tensor) and t._value is None]
        seen = set()
        while stack:
            t = stack.pop()
            if id(t) in seen or id(t) in fed:
                continue
            seen.add(id(t))
            node = t._node
            if node.graph is not graph:
                raise ValueError(f"Graph.run: fetch {t.name} belongs to another graph")
            if id(node) in needed:
                continue
            needed[id(node)] = node
            for a in node.inputs:
                if isinstance(a, Tensor) and a._value is None:
                    stack.append(a)
        slots = {}
        self.template = []

        def slot_of(key, value=None):
            if key not in slots:
                slots[key] = len(self.template)
                self.template.append(value)
            return slots[key]

        def variable_slot(var):  # read from the variable at every run
            s = slot_of(id(var))
            self.variables.append((s, var))
            return s

        self.feed_slots = [slot_of(id(t)) for t in feeds]
        self.feed_dtypes = [t.dtype for t in feeds]
        self.feed_shapes = [t.shape for t in feeds]
        self.feed_names = [t.name for t in feeds]
        self.variables = []
        self.steps = []
        self._batched_sizes_cache = {}  # batch flags -> (largest, total) batched sizes
        self._batched_fetches_cache = {}  # batch flags -> batched_fetches
        dynamic = set(self.feed_slots)
        for node in sorted(needed.values(), key=lambda n: n.seq):
            if node.prim is PLACEHOLDER:
                out = node.outputs[0]
                if id(out) not in fed:
                    raise ValueError(f"Graph.run: placeholder {out.name} must be fed "
                                     "(feed_dict has no value for it)")
                continue
            if node.prim is CONST:
                slot_of(id(node.outputs[0]), node.params["value"])
                continue
            arg_slots = []
            for a in node.inputs:
                if isinstance(a, Variable):
                    s = variable_slot(a)
                    dynamic.add(s)
                elif isinstance(a, Tensor):
                    s = slot_of(id(a))
                else:
                    s = slot_of(("const", len(self.template)), a)
                arg_slots.append(s)
            out_slots = tuple(slot_of(id(o)) for o in node.outputs)
            if fold_constants and not dynamic.intersection(arg_slots) \
                    and not node.prim.effects:
                values = _run_node(node, [self.template[s] for s in arg_slots])
                for s, v in zip(out_slots, values if node.prim.multiple_results else (values,)):
                    self.template[s] = v
                continue
            dynamic.update(out_slots)
            self.steps.append((node.prim.forward, tuple(arg_slots), node.params,
                               out_slots if node.prim.multiple_results else out_slots[0], node))
        # The largest array a dynamic step makes: what one batch member costs in memory.
        self.largest_dynamic_size = max(
            [math.prod(o.shape) for *_, node in self.steps
             for o in node.outputs if o.shape is not None and None not in o.shape] or [1])

        def fetch_slot(t):
            if isinstance(t, Variable):
                return variable_slot(t)
            if isinstance(t, Tensor) and t._value is None:
                return slots[id(t)]
            return slot_of(("const", len(self.template)), np.asarray(t))
        self.fetch_slots = [fetch_slot(t) for t in fetches]

    def run(self, feed_values):
        return self._run_in(list(self.template), feed_values, self.steps)

    def _run_in(self, env, feed_values, steps):
        """Run ``steps`` in ``env`` with the feeds set (``FIXED``: a feed :class:`PlanAt`
        fixed, already in ``env``); returns the fetches."""
        for s, v, dtype, shape, name in zip(self.feed_slots, feed_values, self.feed_dtypes,
                                            self.feed_shapes, self.feed_names):
            if v is FIXED:
                continue
            v = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=dtype)
            if not shapes_compatible(shape, v.shape):
                raise ValueError(f"Graph.run: placeholder {name} has shape {shape}, "
                                 f"fed a value of shape {v.shape}")
            env[s] = v
        return self._execute(env, steps)

    def _execute(self, env, steps):
        """Run ``steps`` in ``env`` (feeds set); returns the fetches."""
        for s, var in self.variables:
            env[s] = var._value
        for forward, arg_slots, params, out, node in steps:
            try:
                result = forward(*[env[s] for s in arg_slots], **params)
            except Exception as exc:
                exc.add_note(_where(node))
                raise
            if type(out) is int:
                env[out] = result
            else:
                for s, r in zip(out, result):
                    env[s] = r
        return [env[s] for s in self.fetch_slots]

    def at(self, static, static_values):
        """This plan with the feeds flagged in ``static`` fixed at ``static_values`` (in
        order): the steps that depend on them alone run now, once (see :class:`PlanAt`)."""
        return PlanAt(self, static, static_values)

    def largest_batched_size(self, batched):
        """Elements in the largest array that depends on the feeds flagged in ``batched``:
        what one batch member costs in memory in :meth:`run_batched` (cached per flags: the
        dense Hessian asks at every call)."""
        return self._batched_sizes(batched)[0]

    def total_batched_size(self, batched):
        """Elements in all the arrays that depend on the feeds flagged in ``batched``
        together: what one batch member costs at most in memory while :meth:`run_flagged`
        runs (it keeps every intermediate)."""
        return self._batched_sizes(batched)[1]

    def _batched_sizes(self, batched):
        key = tuple(bool(b) for b in batched)
        sizes = self._batched_sizes_cache.get(key)
        if sizes is None:
            batched_slots = self.dependent_slots(key)
            largest = total = 1
            for *_, out, node in self.steps:
                if (out if type(out) is int else out[0]) in batched_slots:
                    for o in node.outputs:
                        if o.shape is not None and None not in o.shape:
                            size = math.prod(o.shape)
                            largest, total = max(largest, size), total + size
            sizes = self._batched_sizes_cache[key] = (largest, total)
        return sizes

    def dependent_slots(self, batched):
        """The slots computed from the feeds flagged in ``batched`` (feeds included)."""
        return dependent(
            ((args, (out,) if type(out) is int else out) for _, args, _, out, _ in self.steps),
            {s for s, flag in zip(self.feed_slots, batched) if flag})

    def check_batched_feeds(self, feed_values, batched):
        """``(arrays, k)``: the feeds as arrays of the placeholders' dtypes, checked to have
        the placeholders' shapes behind a common leading batch axis of length ``k`` where
        ``batched`` flags them (``FIXED``: a feed :class:`PlanAt` fixed, left as is)."""
        arrays, k = [], None
        for v, flag, dtype, shape, name in zip(feed_values, batched, self.feed_dtypes,
                                               self.feed_shapes, self.feed_names):
            if v is FIXED:
                arrays.append(v)
                continue
            v = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=dtype)
            core = v.shape[1:] if flag else v.shape
            if flag:
                if k is not None and v.shape[0] != k:
                    raise ValueError(f"Plan.run_batched: batch sizes differ ({k} and "
                                     f"{v.shape[0]} for {name})")
                k = v.shape[0]
            if shape is not None and tuple(core) != tuple(shape):
                raise ValueError(f"Plan.run_batched: placeholder {name} has shape {shape}, "
                                 f"fed a batch of shape {v.shape}")
            arrays.append(v)
        if k is None:
            raise ValueError("Plan.run_batched: no feed is batched")
        return arrays, k

    def run_batched(self, feed_values, batched):
        """Run once for a whole batch: feeds flagged in ``batched`` carry a leading axis of
        length k, and so does every fetched result. Ops with a ``batch_rule`` process the
        batch at once (a matrix of tangents turns matrix-vector products into matrix-matrix
        products); others run once per batch member.
        """
        return self._batched_run(feed_values, batched)

    def _batched_run(self, feed_values, batched, env=None, steps=None):
        arrays, k = self.check_batched_feeds(feed_values, batched)
        values, flags = self._run_flagged(arrays, batched, env, steps)
        return [v if f else np.broadcast_to(v, (k,) + np.shape(v))
                for v, f in zip(values, flags)]

    def run_flagged(self, feed_values, batched):
        """``(results, flags)``: like :meth:`run_batched` (the feeds flagged in ``batched``
        carry a leading batch axis, all of one length), without checking the feeds' shapes and
        without broadcasting the results that do not depend on a batched feed (``flags`` tells
        which do). Control flow's batching rules run their blocks so, once per iteration."""
        return self._run_flagged([np.asarray(v, dtype=dtype) for v, dtype
                                  in zip(feed_values, self.feed_dtypes)], batched)

    def batched_fetches(self, batched):
        """Which fetches :meth:`run_flagged` returns batched given the feeds flagged in
        ``batched``: those computed from a batched feed (known without running; cached)."""
        key = tuple(bool(b) for b in batched)
        flags = self._batched_fetches_cache.get(key)
        if flags is None:
            batched_slots = self.dependent_slots(key)
            flags = self._batched_fetches_cache[key] = [s in batched_slots
                                                       for s in self.fetch_slots]
        return flags

    def _run_flagged(self, feed_values, batched, env=None, steps=None):
        from .batching import on_values  # (batching builds on graphs)
        env = list(self.template if env is None else env)
        is_batched = [False] * len(env)
        for s, v, flag in zip(self.feed_slots, feed_values, batched):
            if v is not FIXED:  # else in env already (see PlanAt)
                env[s], is_batched[s] = v, flag
        for s, var in self.variables:
            env[s] = var._value
        for forward, arg_slots, params, out, node in self.steps if steps is None else steps:
            args = [env[s] for s in arg_slots]
            flags = [is_batched[s] for s in arg_slots]
            try:
                if not any(flags):
                    result = forward(*args, **params)
                    batched_out = False
                else:  # the primitive's batching rule, see .batching
                    prim = node.prim
                    k = next(len(a) for a, f in zip(args, flags) if f)
                    result = on_values(prim, args, flags, params, k)
                    result = result if prim.multiple_results else result[0]
                    batched_out = True
            except Exception as exc:
                exc.add_note(_where(node) + " on a batch")
                raise
            if type(out) is int:
                env[out], is_batched[out] = result, batched_out
            else:
                for s, r in zip(out, result):
                    env[s], is_batched[s] = r, batched_out
        return [env[s] for s in self.fetch_slots], [is_batched[s] for s in self.fetch_slots]


FIXED = object()  # in place of a feed value: the feed is fixed (in the environment already)


class PlanAt:
    """A :class:`Plan` with some feeds fixed (:meth:`Plan.at`): the steps that depend on
    them alone (no Variable, no effects) ran once, into the environment every run starts
    from; ``run(values)`` and ``run_batched(values, batched)`` take the other feeds, in
    order, and run the remaining steps (what a plan traced with those feeds as constants
    would run)."""

    def __init__(self, plan, static, static_values):
        self.plan = plan
        self.static = [bool(f) for f in static]
        env = list(plan.template)
        dynamic = {s for s, _ in plan.variables}
        values = iter(static_values)
        for s, fixed, dtype in zip(plan.feed_slots, self.static, plan.feed_dtypes):
            if fixed:
                v = next(values)
                env[s] = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=dtype)
            else:
                dynamic.add(s)
        self.steps, setup = [], []
        for step in plan.steps:
            out, node = step[3], step[4]
            if node.prim.effects or dynamic.intersection(step[1]):
                dynamic.update((out,) if type(out) is int else out)
                self.steps.append(step)
            else:
                setup.append(step)
        plan._execute(env, setup)
        self.env = env

    def _feeds(self, values):
        it = iter(values)
        return [FIXED if fixed else next(it) for fixed in self.static]

    def run(self, values):
        return self.plan._run_in(list(self.env), self._feeds(values), self.steps)

    def run_batched(self, values, batched):
        """Like :meth:`Plan.run_batched`, ``values`` and ``batched`` for the feeds not
        fixed."""
        it = iter(batched)
        flags = [False if fixed else bool(next(it)) for fixed in self.static]
        return self.plan._batched_run(self._feeds(values), flags, self.env, self.steps)
