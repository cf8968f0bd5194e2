"""One application of a primitive in a graph (a tape records plain tuples instead: see
``backprop.record``)."""

import itertools

_sequence = itertools.count()


class Node:
    """``outputs = prim(*inputs, **params)``, with a global creation number ``seq``.

    Creation order is a topological order (a node is created after its inputs), which the
    executor and the backprop core rely on.
    """

    __slots__ = ("prim", "inputs", "params", "outputs", "graph", "name", "seq")

    def __init__(self, prim, inputs, params, outputs=(), graph=None, name=None):
        self.prim = prim
        self.inputs = inputs
        self.params = params
        self.outputs = outputs
        self.graph = graph
        self.name = name or prim.name
        self.seq = next(_sequence)

    @property
    def type(self):
        return self.prim.name

    def __repr__(self):
        return f"<Node {self.name} type={self.prim.name}>"
