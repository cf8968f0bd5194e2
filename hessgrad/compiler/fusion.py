"""Fusion of elementwise trees into one Numba kernel each.

An elementwise op (identified by primitive name) joins the group of its consumer when its
result has that single consumer, is not fetched and has the consumer's shape; a ``sum`` over
all axes of a group's root joins as the final reduction. A group becomes one loop over the
output shape (inputs indexed with their broadcast strides written out statically) that keeps
every intermediate in a register, generated as text and compiled by
:mod:`hessgrad.kernels.loader`. Only float64 (and boolean masks) are fused, so the numbers are
numpy's up to rounding; groups whose loop has fewer than ``MIN_SIZE`` elements stay on numpy.
"""

import numpy as np

from .ir import Op, known, size_of

MIN_SIZE = 512

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(bool)

# name -> (arity, template over argument expressions)
ELEMENTWISE = {
    "add": (2, "({0} + {1})"), "subtract": (2, "({0} - {1})"),
    "multiply": (2, "({0} * {1})"), "divide": (2, "({0} / {1})"),
    "negative": (1, "(-{0})"), "positive": (1, "(+{0})"), "square": (1, "({0} * {0})"),
    "reciprocal": (1, "(1.0 / {0})"), "power": (2, "({0} ** {1})"),
    "exp": (1, "math.exp({0})"), "log": (1, "math.log({0})"), "log1p": (1, "math.log1p({0})"),
    "expm1": (1, "math.expm1({0})"), "sqrt": (1, "math.sqrt({0})"),
    "tanh": (1, "math.tanh({0})"), "sin": (1, "math.sin({0})"), "cos": (1, "math.cos({0})"),
    "tan": (1, "math.tan({0})"), "sinh": (1, "math.sinh({0})"), "cosh": (1, "math.cosh({0})"),
    "arctan": (1, "math.atan({0})"), "absolute": (1, "abs({0})"), "fabs": (1, "abs({0})"),
    "sign": (1, "_k.sign({0})"), "sigmoid": (1, "_k.sigmoid({0})"),
    "logaddexp": (2, "_k.logaddexp({0}, {1})"), "maximum": (2, "_k.maximum({0}, {1})"),
    "minimum": (2, "_k.minimum({0}, {1})"), "where": (3, "({1} if {0} else {2})"),
    "greater": (2, "({0} > {1})"), "less": (2, "({0} < {1})"),
    "greater_equal": (2, "({0} >= {1})"), "less_equal": (2, "({0} <= {1})"),
    "equal": (2, "({0} == {1})"), "not_equal": (2, "({0} != {1})"),
}


# numpy runs these with SIMD loops (AVX2/AVX-512) several times faster than Numba's scalar
# libm calls, so a fused loop would lose what it saves in memory traffic: they stay numpy
# ufuncs (in place into a dead buffer where one exists) and split the trees around them.
PREFER_NUMPY = {"exp", "log", "tanh", "sigmoid", "logaddexp"}


def literal(value):
    """Source text for a scalar constant, or None when it is not a plain scalar."""
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, (int, np.integer)) and abs(int(value)) < 2**53:
        return repr(int(value))
    if isinstance(value, float) or (isinstance(value, np.ndarray) and value.shape == ()
                                    and value.dtype == _F64) or \
            isinstance(value, np.float64):
        x = float(value)
        if np.isfinite(x):
            return repr(x)
        return "math.nan" if x != x else ("math.inf" if x > 0 else "-math.inf")
    return None


class _Group:
    __slots__ = ("ops", "root", "reduce")

    def __init__(self, op):
        self.ops = [op]
        self.root = op
        self.reduce = None


def scalar_op(prog, op):
    """True when ``op`` is an ELEMENTWISE op over float64/bool values (and scalar or
    float64/bool constants) that a generated loop can compute one element at a time."""
    spec = ELEMENTWISE.get(op.name)
    if spec is None or op.multi or op.params or len(op.args) != spec[0]:
        return False
    out = op.outs[0]
    if not known(prog.shape(out)) or prog.dtype(out) not in (_F64, _BOOL):
        return False
    for a in op.args:
        if a in prog.consts:
            value = prog.consts[a]
            if literal(value) is None and not (isinstance(value, np.ndarray)
                                                and value.dtype in (_F64, _BOOL)):
                return False
        elif not known(prog.shape(a)) or prog.dtype(a) not in (_F64, _BOOL):
            return False
    if op.name == "power" and (op.args[1] not in prog.consts or
                               literal(prog.consts[op.args[1]]) is None):
        return False  # power with a scalar exponent only
    return True


def _fusible(prog, op):
    return op.name not in PREFER_NUMPY and scalar_op(prog, op)


def find_groups(prog, min_size=None):
    min_size = MIN_SIZE if min_size is None else min_size
    users = prog.consumers()
    fetched = set(prog.fetches)
    group_of = {}
    for k, op in enumerate(prog.ops):
        if not _fusible(prog, op):
            continue
        group = _Group(op)
        out_shape = prog.shape(op.outs[0])
        for a in dict.fromkeys(op.args):
            src = group_of.get(a)
            if src is not None and a not in fetched and users.get(a) == [k] and \
                    prog.shape(a) == out_shape:
                group.ops = src.ops + group.ops
                for o in src.ops:
                    group_of[o.outs[0]] = group
        group_of[op.outs[0]] = group
    groups = {id(g): g for g in group_of.values()}.values()
    ops_by_out = {o: (k, op) for k, op in enumerate(prog.ops) for o in op.outs}
    result = []
    for g in groups:
        root_out = g.root.outs[0]
        n = size_of(prog.shape(root_out))
        if n is None or n < min_size:
            continue
        u = users.get(root_out, [])
        if len(u) == 1 and root_out not in fetched and prog.dtype(root_out) == _F64:
            red = prog.ops[u[0]]
            shape = prog.shape(root_out)
            if red.name == "sum" and red.args == [root_out] and \
                    not red.params.get("keepdims", False) and \
                    red.params.get("axis") in (None, tuple(range(len(shape)))):
                g.reduce = red
        if len(g.ops) + (g.reduce is not None) < 2:
            continue
        g.ops.sort(key=lambda op: ops_by_out[op.outs[0]][0])
        result.append(g)
    return result


def kernel_source(prog, group):
    """(source, inputs): the Numba module text and the values passed to ``kernel``."""
    shape = prog.shape(group.root.outs[0])
    nd = len(shape)
    idx = [f"i{d}" for d in range(nd)]
    inputs, names, scalars = [], {}, []
    temps = {}
    body = []
    for op in group.ops:
        exprs = []
        for a in op.args:
            if a in temps:
                exprs.append(temps[a])
                continue
            if a in prog.consts and literal(prog.consts[a]) is not None:
                exprs.append(literal(prog.consts[a]))
                continue
            if a not in names:
                names[a] = f"a{len(inputs)}"
                inputs.append(a)
            a_shape = prog.shape(a)
            if len(a_shape) == 0:
                scalars.append(a)
                exprs.append(names[a])
                continue
            lead = nd - len(a_shape)
            index = ", ".join("0" if d == 1 and shape[lead + j] != 1 else idx[lead + j]
                              for j, d in enumerate(a_shape))
            exprs.append(f"{names[a]}[{index}]")
        t = f"t{len(temps)}"
        temps[op.outs[0]] = t
        body.append(f"{t} = {ELEMENTWISE[op.name][1].format(*exprs)}")
    root = temps[group.root.outs[0]]
    lines = ["import math", "import numpy as np", "from numba import njit",
             "from hessgrad.kernels import scalar as _k", "",
             "", '@njit(cache=True, error_model="numpy", nogil=True)',
             f"def kernel({', '.join(names[a] for a in inputs)}):"]
    out_dtype = "np.bool_" if prog.dtype(group.root.outs[0]) == _BOOL else "np.float64"
    if group.reduce is not None:
        lines.append("    acc = 0.0")
    else:
        lines.append(f"    out = np.empty({tuple(shape)!r}, dtype={out_dtype})")
    indent = "    "
    for d in range(nd):
        lines.append(f"{indent}for {idx[d]} in range({shape[d]}):")
        indent += "    "
    lines.extend(indent + b for b in body)
    if group.reduce is not None:
        lines.append(f"{indent}acc += {root}")
        lines.append("    return acc")
    else:
        lines.append(f"{indent}out[{', '.join(idx) if nd else '()'}] = {root}")
        lines.append("    return out")
    return "\n".join(lines) + "\n", inputs, scalars


def fuse(prog, min_size=None):
    """Replace each fusible group by one ``fused`` op; returns {id(op): (make_call, bound)}
    for the code generator."""
    from ..kernels import loader

    if not loader.available():
        return {}
    groups = find_groups(prog, min_size)
    if not groups:
        return {}
    calls = {}
    replace = {}
    drop = set()
    for n, g in enumerate(groups):
        source, inputs, scalars = kernel_source(prog, g)
        kernel = loader.load(source)
        final = g.reduce if g.reduce is not None else g.root
        nodes = [op.node for op in g.ops] + ([g.reduce.node] if g.reduce is not None else [])
        fused = Op("fused", kernel, inputs, {}, final.outs, False, final.node, nodes,
                   extra={"source": source})
        name = f"K{n}"
        converters = {a: ("bool" if prog.dtype(a) == _BOOL else "float") for a in scalars}
        position = [inputs.index(a) for a in scalars]

        def make(args, name=name, reduce=g.reduce is not None, position=position,
                 converters=converters, inputs=inputs):
            args = list(args)
            for p in position:
                args[p] = f"{converters[inputs[p]]}({args[p]})"
            call = f"{name}({', '.join(args)})"
            return f"_f64({call})" if reduce else call

        calls[id(fused)] = (make, {name: kernel, "_f64": np.float64})
        replace[id(final)] = fused
        for op in g.ops:
            if op is not final:
                drop.add(id(op))
    prog.ops = [replace.get(id(op), op) for op in prog.ops if id(op) not in drop]
    return calls
