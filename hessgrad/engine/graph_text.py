"""A graph as text, one line per op, for reading what a trace recorded (``print(graph)``)."""

import numpy as np

from .tensor import Tensor

_PARAM_WIDTH = 40  # longer parameter values (arrays, sub-graphs) are cut at this width


def aval_text(shape, dtype):
    """``float64[3,?]`` (``?``: unknown)."""
    dims = "?" if shape is None else ",".join("?" if d is None else str(d) for d in shape)
    return f"{'?' if dtype is None else dtype}[{dims}]"


def _aval(t):
    return aval_text(t.shape, t.dtype)


def _operand(a):
    if isinstance(a, Tensor):
        return a.name if a._node is not None else f"<eager {_aval(a)}>"
    if isinstance(a, np.ndarray) and a.size > 4:
        return f"<array {aval_text(a.shape, a.dtype)}>"
    return repr(a)


def param_text(value):
    """An op parameter, cut to a readable width."""
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=6, separator=",").replace("\n", "") \
            if value.size <= 6 else f"<array {aval_text(value.shape, value.dtype)}>"
    else:
        text = repr(value)
    return text if len(text) <= _PARAM_WIDTH else text[:_PARAM_WIDTH - 3] + "..."


def node_line(node):
    """``getitem = getitem(x:0, index=(slice(1, None, None),))  -> float64[999]``."""
    args = [_operand(a) for a in node.inputs]
    args += [f"{k}={param_text(v)}" for k, v in node.params.items()]
    outs = ", ".join(_aval(o) for o in node.outputs)
    return f"{node.name} = {node.prim.name}({', '.join(args)})  -> {outs}"


def graph_text(graph):
    """The traced ops of ``graph`` and, when ``hessgrad.function`` compiled it, the program
    it runs after optimization."""
    lines = [f"Graph with {len(graph.nodes)} ops (as traced):"]
    lines += ["  " + node_line(node) for node in graph.nodes]
    compiled = graph.optimized
    if compiled is not None:
        lines.append(f"After optimization: {compiled.summary()}")
        lines += ["  " + line for line in compiled.optimized_steps]
    return "\n".join(lines)
