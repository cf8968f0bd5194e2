"""Fusion of elementwise ops into multi-output Numba kernels.

Elementwise ops (identified by primitive name) and ``add_n`` over one shape, sums (``sum``,
``sum_to``) of their results and ``accumulate`` ops whose terms fill slices of that shape form
convex groups (:func:`find_groups`). A group becomes one loop over its shape (inputs indexed
with their broadcast strides written out statically, sliced ``getitem`` views through their
arrays) that keeps every intermediate in a register: a value leaves the kernel as an array
only when it is fetched or read outside the group, sums add up during the loop, and scatters
store their terms straight into their slices of the result (zero-filled only when the terms do
not cover it). A constant zero off one diagonal (a Jacobian's basis) is computed from the loop
indices, not read. Terms that overlap only by a shift of a few elements along the last axis
(the gradients of ``x[1:]`` and ``x[:-1]``) are added in the loop too, each element completed
in numpy's order from terms kept a few iterations; an ``accumulate`` whose terms overlap
otherwise gets a kernel of its own, one loop per term. Kernels are generated as text and
compiled by :mod:`hessgrad.kernels.loader`. Only float64 (and boolean masks) are fused, so the
numbers are numpy's up to rounding; groups whose loop has fewer than ``MIN_SIZE`` elements stay
on numpy.
"""

import numpy as np

from .ir import Op, known, size_of
from .passes import dead_code, diagonal_of

MIN_SIZE = 512
# Numba's compile time grows faster than linearly with a kernel's size, above all with its
# number of array arguments: the gradient of a 150-step unrolled RNN w.r.t. its weight
# matrix (an ``add_n`` of 150 outer products) made one kernel of 16 ops and 165 arguments
# that took 15 s to compile. Groups stop growing at this many operands (counted per op, so
# also at most this many ops), and an op with more operands stays on numpy.
MAX_GROUP_ARGS = 48

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


# numpy (exp, log: SIMD loops on AVX2/AVX-512) and hessgrad.kernels.vecmath (tanh, sigmoid,
# logaddexp on float64) run these several times faster than Numba's scalar libm calls, so a
# fused loop would lose what it saves in memory traffic: they stay calls of their own (in
# place into a dead buffer where one exists) and split the trees around them.
PREFER_NUMPY = {"exp", "log", "tanh", "sigmoid", "logaddexp"}


def literal(value):
    """Source text for a scalar constant, or None when it is not a plain scalar."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biu":
        value = value.item()  # a 0-d integer or boolean array (``1 - x`` traces one)
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


def _reduced_axes(prog, op):
    """For a float64 ``sum`` or ``sum_to``: the loop axis (or None: a unit axis) behind each
    axis of its result; None for another op."""
    if op.name not in ("sum", "sum_to") or op.multi or len(op.args) != 1:
        return None
    x, out = op.args[0], op.outs[0]
    shape, out_shape = prog.shape(x), prog.shape(out)
    if not (known(shape) and known(out_shape)) or prog.dtype(x) != _F64 or \
            prog.dtype(out) != _F64:
        return None
    nd = len(shape)
    if op.name == "sum_to":
        lead = nd - len(out_shape)
        return [None if d == 1 and shape[lead + j] != 1 else lead + j
                for j, d in enumerate(out_shape)]
    if set(op.params) - {"axis", "keepdims"}:
        return None
    axis = op.params.get("axis")
    axes = range(nd) if axis is None or not nd else \
        [a % nd for a in (axis if isinstance(axis, tuple) else (axis,))]  # 0-d: axis 0 is ()
    keep = op.params.get("keepdims", False)
    return [None if d in axes else d for d in range(nd) if keep or d not in axes]


def _slice_ranges(index, shape):
    """``(start, stop, step)`` per axis of ``shape`` for a basic index made of slices only;
    None for another index."""
    parts = list(index) if isinstance(index, tuple) else [index]
    if len(parts) > len(shape) or not all(isinstance(p, slice) for p in parts):
        return None
    parts += [slice(None)] * (len(shape) - len(parts))
    return tuple(p.indices(n) for p, n in zip(parts, shape))


def _term_ranges(prog, op):
    """For a float64 ``accumulate`` whose indices are all slices (or None: everything), with
    terms of known shapes that broadcast to their slices: each term's :func:`_slice_ranges`;
    None otherwise."""
    shape = prog.shape(op.outs[0])
    if op.name != "accumulate" or not known(shape) or not shape or \
            prog.dtype(op.outs[0]) != _F64:
        return None
    ranges = []
    for term, index in zip(op.args, op.params["indices"]):
        r = _slice_ranges(() if index is None else index, shape)
        if r is None or prog.dtype(term) != _F64 or not known(prog.shape(term)) or \
                not _broadcasts_to(prog.shape(term), tuple(len(range(*x)) for x in r)):
            return None
        ranges.append(r)
    return ranges


def _scatter_ranges(prog, op):
    """:func:`_term_ranges` when each two terms' slices are the same or disjoint; None
    otherwise. (Partly overlapping terms would be added in another order than numpy's.)"""
    ranges = _term_ranges(prog, op)
    if ranges is None:
        return None
    count = np.zeros(prog.shape(op.outs[0]), np.intp)
    for r in set(ranges):
        count[tuple(slice(*_slice_args(*x)) for x in r)] += 1
    return ranges if count.size == 0 or count.max() <= 1 else None  # size 0: nothing overlaps


# Terms of an ``accumulate`` may start at most this many elements apart along the last axis
# to join a loop (each offset keeps that many scalars between iterations).
MAX_SHIFT = 4


def _shifted_ranges(prog, op):
    """:func:`_term_ranges` when the terms' slices have one shape, step by 1 along the last
    axis, start at most ``MAX_SHIFT`` apart there and coincide on the other axes (the
    gradients of ``x[1:]`` and ``x[:-1]``); None otherwise. A loop over the slices then
    adds the terms in numpy's order: each output element is complete at the iteration of
    the term that starts first, the others' values kept from the iterations before."""
    ranges = _term_ranges(prog, op)
    if ranges is None or len({r[:-1] for r in ranges}) != 1:
        return None
    lasts = [r[-1] for r in ranges]
    if len({len(range(*x)) for x in lasts}) != 1 or any(x[2] != 1 for x in lasts):
        return None
    starts = [x[0] for x in lasts]
    return ranges if max(starts) - min(starts) <= MAX_SHIFT else None


def _slice_args(start, stop, step):
    """``slice.indices`` results as slice arguments (a stop of -1 meant "before 0")."""
    return start, (None if stop < 0 else stop), step


def _broadcasts_to(shape, loop):
    lead = len(loop) - len(shape)
    return lead >= 0 and all(d in (1, loop[lead + j]) for j, d in enumerate(shape))


def _loop_kind(prog, op):
    """(kind, loop shape) of an op a kernel can compute: "map" (one element per iteration),
    "reduce" (summed over its operand's loop), "scatter" (every term added into a slice of
    its result, all slices of one loop shape); None otherwise."""
    if _fusible(prog, op):
        return "map", prog.shape(op.outs[0])
    if op.name == "add_n" and not op.multi and prog.dtype(op.outs[0]) == _F64 and \
            known(prog.shape(op.outs[0])) and all(
                (a in prog.consts and literal(prog.consts[a]) is not None) or
                (prog.dtype(a) == _F64 and known(prog.shape(a))) for a in op.args):
        return "map", prog.shape(op.outs[0])
    if _reduced_axes(prog, op) is not None:
        return "reduce", prog.shape(op.args[0])
    ranges = _scatter_ranges(prog, op) or _shifted_ranges(prog, op)
    if ranges:
        shapes = {tuple(len(range(*r)) for r in rs) for rs in ranges}
        if len(shapes) == 1:
            (shape,) = shapes
            return "scatter", shape
    return None, None


class _Group:
    """Ops computed in one loop over ``shape``. ``outside``: indices of the ops after the
    group's ops that read its values; ``finals``: results (sums, scatters) complete only after
    the loop."""

    __slots__ = ("ops", "shape", "outside", "finals", "merged", "n_args")

    def __init__(self, shape):
        self.ops = []
        self.n_args = 0  # operands of its ops, counted per op (bounds the kernel's arguments)
        self.shape = shape
        self.outside = set()
        self.finals = set()
        self.merged = None

    def find(self):
        g = self
        while g.merged is not None:
            g = g.merged
        return g


def find_groups(prog, min_size=None):
    """Groups of ops that become one kernel each. An op joins the groups of its operands,
    and of other readers of its operands, that loop over the same shape, when nothing outside
    a group reads a group's value before this op: the kernel then runs in this op's place,
    and no path leaves a group and comes back into it (it would pass such a reader)."""
    min_size = MIN_SIZE if min_size is None else min_size
    users = prog.consumers()
    group_of = {}  # value -> the group computing it element by element
    readers = {}  # value -> groups reading it
    groups = []
    for k, op in enumerate(prog.ops):
        kind, shape = _loop_kind(prog, op)
        if kind is None or len(op.args) > MAX_GROUP_ARGS:
            continue
        cands = [group_of[a] for a in op.args if a in group_of]
        if kind == "map":
            cands += [g for a in op.args if a not in prog.consts for g in readers.get(a, ())]
        chosen = []
        for g in cands:
            g = g.find()
            if g.shape == shape and all(g is not c for c in chosen) and \
                    not g.finals.intersection(op.args) and all(u > k for u in g.outside - {k}) \
                    and g.n_args + sum(c.n_args for c in chosen) + len(op.args) \
                    <= MAX_GROUP_ARGS:
                chosen.append(g)
        if not chosen:
            if kind != "map":
                continue
            chosen = [_Group(shape)]
            groups.append(chosen[0])
        g = chosen[0]
        for other in chosen[1:]:
            g.ops += other.ops
            g.n_args += other.n_args
            g.outside |= other.outside
            g.finals |= other.finals
            other.merged = g
        g.ops.append((k, op))
        g.n_args += len(op.args)
        g.outside.discard(k)
        g.outside.update(u for o in op.outs for u in users.get(o, ()))
        if kind == "map":
            group_of[op.outs[0]] = g
        else:
            g.finals.update(op.outs)
        for a in op.args:
            readers.setdefault(a, []).append(g)
    result = []
    for g in groups:
        if g.merged is None and len(g.ops) >= 2 and size_of(g.shape) >= min_size:
            g.ops.sort(key=lambda item: item[0])
            result.append(g)
    return result


def kernel_source(prog, group):
    """(source, inputs, scalars, results): the Numba module text, the values passed to
    ``kernel`` (``scalars``: those passed as Python scalars) and the values it returns."""
    shape = group.shape
    nd = len(shape)
    idx = [f"i{d}" for d in range(nd)]
    inputs, names, scalars = [], {}, []
    temps = {}
    diagonals = {}  # constant -> _diagonal_entry(it)
    pre, body, results = [], [], []
    before_inner, after_inner = [], []  # around the innermost loop, inside the outer ones
    members = {k for k, _ in group.ops}
    fetched = set(prog.fetches)
    users = prog.consumers()
    producer = {o: op for op in prog.ops for o in op.outs}

    def read(a):
        if a in temps:
            return temps[a]
        if a in prog.consts and literal(prog.consts[a]) is not None:
            return literal(prog.consts[a])
        a_shape = prog.shape(a)
        lead = nd - len(a_shape)
        index = ["0" if d == 1 and shape[lead + j] != 1 else idx[lead + j]
                 for j, d in enumerate(a_shape)]
        if a in prog.consts and a not in diagonals:
            diagonals[a] = _diagonal_entry(prog, prog.consts[a])
        if diagonals.get(a) is not None:
            offset, entry = diagonals[a]
            row, col = index
            entry = entry if isinstance(entry, str) else argument(entry, [row])
            return f"({entry} if {col} - {row} == {offset} else 0.0)"
        view = producer.get(a)
        ranges = None if view is None or view.name != "getitem" or not a_shape or \
            not known(prog.shape(view.args[0])) else \
            _slice_ranges(view.params["index"], prog.shape(view.args[0]))
        if ranges is not None:
            # a sliced view is read through its array: a strided view would make Numba
            # compile a slower loop for any-layout arrays
            a = view.args[0]
            index = [_affine(start, step, i) for (start, _, step), i in zip(ranges, index)]
        one_hot = _one_hot_rows(prog, producer.get(a))
        if one_hot is not None:  # computed from the loop indices, not read
            value, rows = (read_row(v, index[0]) for v in one_hot)
            return f"({value} if {index[1]} == {rows} else 0.0)"
        return argument(a, index)

    def read_row(v, row):
        """``v`` (a literal, a scalar or a batch of scalars) for batch member ``row``."""
        if v in prog.consts and literal(prog.consts[v]) is not None:
            return literal(prog.consts[v])
        return argument(v, [row])

    def argument(a, index):
        """``a`` passed to the kernel (a scalar as a Python number), read at ``index``."""
        if a not in names:
            names[a] = f"a{len(inputs)}"
            inputs.append(a)
        if prog.shape(a) == ():
            if a not in scalars:
                scalars.append(a)
            return names[a]
        return f"{names[a]}[{', '.join(index)}]"

    def result(v, alloc):
        name = f"r{len(results)}"
        results.append(v)
        pre.append(f"{name} = {alloc}")
        return name

    for _, op in group.ops:
        out = op.outs[0]
        if op.name == "accumulate":
            out_shape, terms = prog.shape(out), _scatter_ranges(prog, op)
            if terms is None:
                r = result(out, f"np.zeros({out_shape!r})")
                _shifted_terms(r, op.args, _shifted_ranges(prog, op), idx, shape[-1], read,
                               body, before_inner, after_inner)
                continue
            covered = len(set(terms)) * size_of(shape) == size_of(out_shape)
            r = result(out, f"np.{'empty' if covered else 'zeros'}({out_shape!r})")
            written = set()  # terms into the same slice are added in numpy's order
            for term, ranges in zip(op.args, terms):
                at = ", ".join(_affine(start, step, i) for (start, _, step), i in zip(ranges, idx))
                body.append(f"{r}[{at}] {'+=' if ranges in written else '='} {read(term)}")
                written.add(ranges)
            continue
        exprs = [read(a) for a in op.args]
        kept = _reduced_axes(prog, op)
        if kept is not None:
            out_shape = prog.shape(out)
            r = result(out, f"np.zeros({out_shape!r})" if out_shape else "0.0")
            at = f"[{', '.join('0' if d is None else idx[d] for d in kept)}]" \
                if out_shape else ""
            body.append(f"{r}{at} += {exprs[0]}")
            continue
        t = f"t{len(temps)}"
        temps[out] = t
        body.append(f"{t} = " + ("(" + " + ".join(exprs) + ")" if op.name == "add_n"
                                 else ELEMENTWISE[op.name][1].format(*exprs)))
        if out in fetched or any(u not in members for u in users.get(out, ())):
            dtype = "np.bool_" if prog.dtype(out) == _BOOL else "np.float64"
            r = result(out, f"np.empty({tuple(shape)!r}, dtype={dtype})")
            body.append(f"{r}[{', '.join(idx) if nd else '()'}] = {t}")
    lines = ["import math", "import numpy as np", "from numba import njit",
             "from hessgrad.kernels import scalar as _k", "",
             "", '@njit(cache=True, error_model="numpy", nogil=True)',
             f"def kernel({', '.join(names[a] for a in inputs)}):"]
    lines += ["    " + line for line in pre]
    indent = "    "
    for d in range(nd):
        if d == nd - 1:
            lines += [indent + line for line in before_inner]
        lines.append(f"{indent}for {idx[d]} in range({shape[d]}):")
        indent += "    "
    lines += [indent + line for line in body]
    lines += ["    " * nd + line for line in after_inner]
    returned = ", ".join(f"r{j}" for j in range(len(results)))
    lines.append(f"    return {returned}" if len(results) == 1 else f"    return ({returned})")
    return "\n".join(lines) + "\n", inputs, scalars, results


def _shifted_terms(r, terms, ranges, idx, n, read, body, before_inner, after_inner):
    """Lines adding ``terms`` into slices of ``r`` that start ``d`` elements apart along the
    last axis (:func:`_shifted_ranges`) in one loop over their common shape (last axis of
    length ``n``), in numpy's order: iteration ``i`` completes the element where the first
    slice's element ``i`` lands, adding each term's value from ``d`` iterations before (kept
    in ``d`` scalars); the last elements are completed after the loop."""
    first = min(rs[-1][0] for rs in ranges)
    delays = [rs[-1][0] - first for rs in ranges]
    outer = [_affine(start, step, i) for (start, _, step), i in zip(ranges[0][:-1], idx[:-1])]

    def at(position):
        return f"{r}[{', '.join(outer + [position])}]"

    values = [read(t) for t in terms]
    kept = {}  # term -> its values 1..d iterations before
    total = f"{r}s"
    body.append(f"{total} = 0.0")  # numpy's zero-filled result plus each term in turn
    for k, (value, d) in enumerate(zip(values, delays)):
        if d == 0:
            body.append(f"{total} += {value}")
            continue
        kept[k] = [f"{r}k{k}_{m}" for m in range(d)]
        before_inner.extend(f"{name} = 0.0" for name in kept[k])
        body += [f"if {idx[-1]} >= {d}:", f"    {total} += {kept[k][-1]}"]
    body.append(f"{at(_affine(first, 1, idx[-1]))} = {total}")
    for k, names in kept.items():
        body += [f"{names[m]} = {names[m - 1]}" for m in range(len(names) - 1, 0, -1)]
        body.append(f"{names[0]} = {values[k]}")
    for s in range(1, max(delays) + 1):  # the elements past the first slice's last one
        after_inner.append(f"{total} = 0.0")
        for k, d in enumerate(delays):
            if d >= s and n - 1 + s - d >= 0:
                after_inner.append(f"{total} += {kept[k][d - s]}")
        after_inner.append(f"{at(str(first + n - 1 + s))} = {total}")


def _one_hot_rows(prog, op):
    """``(value, rows)`` when ``op`` is the batched adjoint of TensorArray reads at one row
    per batch member (a loop's read at its counter, batched by ``control_flow.rows``: the one-hot
    rows ``hessians`` starts its batches from): zeros but ``value`` at column ``rows[b]``
    of row ``b``, a ``(k, n)`` float64 array that a kernel computes from its indices. None
    for another op."""
    if op is None or op.name != "batched:tensor_array_read_adjoint" or \
            op.params.get("prefix") or op.extra is None:
        return None
    (value, rows, like), (batched_value, batched_rows, batched_like) = op.args, \
        op.extra["batched"]
    shape, k = prog.shape(op.outs[0]), prog.shape(rows)
    if not (batched_rows and not batched_like and known(shape) and len(shape) == 2 and
            prog.dtype(op.outs[0]) == _F64 and k == shape[:1] and
            prog.dtype(rows).kind in "iu" and prog.dtype(value) == _F64 and
            prog.shape(value) == (k if batched_value else ())):
        return None
    return value, rows


def _diagonal_entry(prog, value):
    """For a constant zero off one diagonal (:func:`diagonal_of`): its offset and its entries,
    one literal when they are all equal, else a new constant holding the entry of each row."""
    found = diagonal_of(value)
    if found is None:
        return None
    offset, values = found
    on = values[max(0, -offset):min(len(values), value.shape[1] - offset)]
    if np.all(on == on[0]):
        return offset, literal(on[0])
    return offset, prog.new_const(values)


def accumulate_source(prog, op, ranges):
    """(source, inputs, scalars) of a kernel for an ``accumulate`` op: a zeroed result and one
    loop per term adding it into its slice, in order (numpy's order, without numpy's per-row
    cost on 2-D slices); a diagonal constant term loops over its diagonal only."""
    shape = prog.shape(op.outs[0])
    inputs, scalars, lines = [], [], [f"r0 = np.zeros({shape!r})"]

    def arg(v):
        if v not in inputs:
            inputs.append(v)
        return f"a{inputs.index(v)}"

    for term, r in zip(op.args, ranges):
        loop = tuple(len(range(*x)) for x in r)
        term_shape = prog.shape(term)
        value = prog.consts.get(term)
        diagonal = diagonal_of(value) if value is not None and term_shape == loop else None
        if diagonal is not None:
            offset, values = diagonal
            column = "i" if offset == 0 else f"(i + {offset})"
            at = ", ".join(_affine(start, step, i) for (start, _, step), i in
                           zip(r, ("i", column)))
            lines += [f"for i in range({max(0, -offset)}, {min(loop[0], loop[1] - offset)}):",
                      f"    r0[{at}] += {arg(prog.new_const(values))}[i]"]
            continue
        idx = [f"i{d}" for d in range(len(loop))]
        lead = len(loop) - len(term_shape)
        if literal(value) is not None:
            read = literal(value)
        elif not term_shape:
            read = arg(term)
            scalars.append(term)
        else:
            read = arg(term) + "[" + ", ".join(
                "0" if d == 1 and loop[lead + j] != 1 else idx[lead + j]
                for j, d in enumerate(term_shape)) + "]"
        indent = ""
        for d, n in enumerate(loop):
            lines.append(f"{indent}for {idx[d]} in range({n}):")
            indent += "    "
        at = ", ".join(_affine(start, step, i) for (start, _, step), i in zip(r, idx))
        lines.append(f"{indent}r0[{at}] += {read}")
    source = "\n".join(
        ["import numpy as np", "from numba import njit", "", "",
         '@njit(cache=True, error_model="numpy", nogil=True)',
         f"def kernel({', '.join(f'a{j}' for j in range(len(inputs)))}):"] +
        ["    " + line for line in lines] + ["    return r0"]) + "\n"
    return source, inputs, scalars


def _affine(start, step, i):
    if i == "0":
        return str(start)
    term = i if step == 1 else f"{step} * {i}"
    return term if start == 0 else f"{start} + {term}"


def fuse(prog, min_size=None):
    """Replace each group by one ``fused`` op (several results: a multi-output op), and each
    large ``accumulate`` of slices left outside groups by a kernel of its own; returns
    {id(op): (make_call, bound, post)} for the code generator."""
    from ..kernels import loader

    if not loader.available():
        return {}
    min_size = MIN_SIZE if min_size is None else min_size
    kernels = []  # (source, inputs, scalars, results, ops)
    grouped = set()
    for g in find_groups(prog, min_size):
        source, inputs, scalars, results = kernel_source(prog, g)
        kernels.append((source, inputs, scalars, results, [op for _, op in g.ops]))
        grouped.update(k for k, _ in g.ops)
    for k, op in enumerate(prog.ops):
        ranges = None if k in grouped else _term_ranges(prog, op)
        if ranges is not None and size_of(prog.shape(op.outs[0])) >= min_size:
            kernels.append((*accumulate_source(prog, op, ranges), list(op.outs), [op]))
    if not kernels:
        return {}
    calls = {}
    replace = {}
    drop = set()
    for n, (source, inputs, scalars, results, ops) in enumerate(kernels):
        kernel = loader.load(source)
        fused = Op("fused", kernel, inputs, {}, results, len(results) > 1, ops[-1].node,
                   [op.node for op in ops], extra={"source": source})
        name = f"K{n}"
        converters = {a: ("bool" if prog.dtype(a) == _BOOL else "float") for a in scalars}
        position = {inputs.index(a): converters[a] for a in scalars}
        # Numba returns a sum as a Python float: numpy's type instead
        floats = [v for v in results if prog.shape(v) == ()]

        def make(args, name=name, position=position, wrap=(floats == results)):
            args = [f"{position[j]}({a})" if j in position else a
                    for j, a in enumerate(args)]
            call = f"{name}({', '.join(args)})"
            return f"_f64({call})" if wrap else call

        post = [] if floats == results else [f"v{v} = _f64(v{v})" for v in floats]
        calls[id(fused)] = (make, {name: kernel, "_f64": np.float64}, post)
        replace[id(ops[-1])] = fused
        for op in ops[:-1]:
            drop.add(id(op))
    prog.ops = [replace.get(id(op), op) for op in prog.ops if id(op) not in drop]
    dead_code(prog)  # views now read through their arrays inside kernels
    return calls
