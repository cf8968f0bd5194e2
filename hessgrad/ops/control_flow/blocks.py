"""Blocks: a loop body, a loop condition or a branch traced into the graph being built.

Each block's nodes are traced once into the *same* graph as the node that runs them (a
``while`` or ``cond``). Loop variables enter a block as placeholders of that block; the outer
tensors a block reads are found by walking back from its outputs (its *captures*). The node
holds executor plans of its blocks in its params; its forward replays those plans. Block nodes
are reachable from outer fetches only through a node's params, never through inputs, so outer
plans and the backprop core never see them. Nodes created while a block is traced --
including gradient nodes built by ``gradients()`` inside a loop body, as ``hessians`` does --
belong to the block and read outer tensors as captures.

Gradient rules re-create a block's computation by *cloning* its nodes, never by calling the
user's function again: a Python closure may have been rebound since, and side effects must not
repeat.
"""


from ...engine.dispatch import READ, bind
from ...engine.forward import push_tangents
from ...engine.graph import CONST, Plan, constant_value
from ...engine.tensor import Tensor, Variable, current, is_differentiable_dtype
from ..core import convert_to_tensor, identity
from ..inplace import tracing_body


class Record:
    """Whether a ``while`` node keeps each iteration's state (turned on by its VJP)."""

    __slots__ = ("on",)

    def __init__(self, on=False):
        self.on = on


def _block_tensor(x, graph):
    """``x`` as a tensor computed inside the block being traced."""
    if isinstance(x, Variable):
        return identity(x)
    if isinstance(x, Tensor):
        x = current(x)  # written in place: its newest value
        return graph.constant(x._value) if x._value is not None else x
    return convert_to_tensor(x)


class Block:
    """The nodes ``fn(placeholders)`` adds to ``graph``; its captures and a plan to run it.

    ``fn`` takes a list of placeholders (one per aval) and returns a flat list of outputs.
    """

    def __init__(self, graph, fn, avals, name):
        start = len(graph.nodes)
        with graph.as_default():
            self.params = [graph.placeholder(dtype, shape, name=f"{name}/input{k}")
                           for k, (shape, dtype) in enumerate(avals)]
            # the body may write its own arrays in place, not those around it
            with tracing_body(graph, graph.nodes[start - 1].seq if start else -1):
                self.outputs = [_block_tensor(o, graph) for o in fn(self.params)]
        self.graph = graph
        block = {id(n) for n in graph.nodes[start:]}
        fed = {id(p) for p in self.params}
        captures, seen, nodes = [], set(), {}
        stack_ = list(self.outputs)
        while stack_:
            t = stack_.pop()
            if t._value is not None or id(t) in seen or id(t) in fed:
                continue
            seen.add(id(t))
            node = t._node
            # A variable read is never block-local: a later outer read reuses it (the graph
            # caches reads), and gradients w.r.t. the variable must reach it from outside.
            if id(node) not in block or node.prim is READ:
                captures.append(t)
                continue
            nodes[id(node)] = node
            stack_.extend(a for a in node.inputs if isinstance(a, Tensor) and a._value is None)
        self.captures = sorted(captures, key=lambda t: (t._node.seq, t._index))
        self.nodes = sorted(nodes.values(), key=lambda n: n.seq)

    def plan(self, captures):
        return Plan(self.graph, self.outputs, self.params + list(captures))

    def clone(self, inputs, captures=(), new_captures=(), tangents=None):
        """The block's outputs recomputed by new nodes in the current graph context, from
        ``inputs`` (for its placeholders) and ``new_captures`` (for ``captures``, a superset of
        its own). Gradient rules use clones rather than calling the user's function again:
        a Python closure may since have been rebound, and side effects must not repeat.

        With ``tangents`` (one per placeholder then per capture, None for zero) the clone also
        pushes tangents through every node (forward mode) and returns ``(outputs, output
        tangents)``."""
        mapping = {id(p): x for p, x in zip(self.params, inputs)}
        mapping.update((id(c), x) for c, x in zip(captures, new_captures))
        tan = {}
        if tangents is not None:
            tan = {id(t): d for t, d in zip(self.params + list(captures), tangents)
                   if d is not None}
        records = {}  # a while node's history switch -> its clone's (shared with its JVP loop)
        for node in self.nodes:
            if node.prim is CONST:
                outs = (self.graph.constant(node.params["value"]),)
            else:
                args = [mapping.get(id(a), a) if isinstance(a, Tensor) else a
                        for a in node.inputs]
                params = node.params
                old = params.get("record")
                if isinstance(old, Record):
                    # A clone of a loop keeps its own history switch, on where the original's
                    # is: the block may hold the reverse loop of that node, cloned too, which
                    # reads the clone's history.
                    if id(old) not in records:
                        records[id(old)] = Record(old.on)
                    params = dict(params, record=records[id(old)])
                elif node.prim.closures:  # its Python functions read this clone's tensors
                    params = dict(params, remaps=params.get("remaps", ()) + (mapping,))
                outs = apply(node.prim, args, params)
                arg_tangents = [tan.get(id(a)) if isinstance(a, Tensor) else None
                                for a in node.inputs]
                if tan and not node.prim.nondiff and any(t is not None for t in arg_tangents):
                    pushed = push_tangents(node.prim, args, params, outs, arg_tangents)
                    for old, t in zip(node.outputs, pushed):
                        if t is not None and is_differentiable_dtype(old.dtype):
                            tan[id(old)] = t
            for old, new in zip(node.outputs, outs):
                mapping[id(old)] = new
        outs = [mapping.get(id(o), o) for o in self.outputs]
        if tangents is None:
            return outs
        return outs, [tan.get(id(o)) for o in self.outputs]


def apply(prim, args, params):
    out = bind(prim, tuple(args), params)
    return out if prim.multiple_results else (out,)


def union(*lists):
    out, seen = [], set()
    for t in (t for lst in lists for t in lst):
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def compatible(shape, invariant):
    if invariant is None or shape is None:
        return True
    return len(shape) == len(invariant) and all(
        a is None or b is None or a == b for a, b in zip(shape, invariant))


def concrete_int(x, what):
    if x is None:
        return None
    value = constant_value(x)
    if value is None:
        raise TypeError(f"{what} must be known when the graph is built (a Python int or a "
                        f"constant), got the symbolic tensor {x.name}")
    return int(value)
