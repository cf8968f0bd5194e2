"""A large matrix's product, a row-wise map and its transposed product: one read of the matrix.

The gradient of a model linear in its data, ``phi(X @ w) @ X`` (``phi`` elementwise: a
logistic or least-squares loss's weights), and its HVP at a fixed point, ``(d * (X @ v)) @ X``,
read ``X`` twice; when ``X`` does not fit in the cache, each read is a pass over memory. Row
``i`` of ``X`` is all that row ``i``'s weight needs, so one generated Numba loop over the rows
computes the row's products, its weight and its term of the transposed product while the row
is in the cache. The sums are reassociated (as in :mod:`hessgrad.kernels.products`), so
results agree with the unfused program to rounding.
"""

import numpy as np

from ..engine.facts import Lowering
from ..kernels import tuning
from .ir import Internal
from .products import matrix_key, matrix_vector_product
from .scalar import Var, literal, scalar_form

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(bool)
ROWS_STREAMED = Internal("rows_streamed", Lowering(fresh=True), group=True)


def _product(prog, op, side):
    """The matrix of ``op`` when it is a matrix-vector product on ``side`` with a matrix worth
    streaming, else None."""
    found = matrix_vector_product(prog, op, tuning.STREAM_MIN_SIZE)
    return found[1] if found is not None and found[0] == side else None


def _row_op(prog, op, rows):
    """Whether a row kernel computes ``op``: an op with a scalar form for its operands, over
    float64 or bool values, each ``(rows,)``, ``(1,)`` or a scalar (literal where the form
    says so)."""
    low = op.prim.lowering
    if op.multi or op.params or low.scalar is None or \
            (low.arity is not None and low.arity != len(op.args)):
        return False
    values = list(op.args) + [op.outs[0]]
    if prog.shape(op.outs[0]) != (rows,) or \
            any(prog.shape(v) not in ((rows,), (1,), ()) or
                prog.dtype(v) not in (_F64, _BOOL) for v in values):
        return False
    return all(literal(prog.consts.get(op.args[j])) is not None for j in low.literal)


def _stream(prog, k2):
    """``(position, streamed op, absorbed op indices)`` for the left product ``prog.ops[k2]``,
    or None."""
    ops = prog.ops
    last = ops[k2]
    matrix = _product(prog, last, "left")
    if matrix is None:
        return None
    rows = prog.shape(matrix)[0]
    made_at = {o: k for k, op in enumerate(ops[:k2]) for o in op.outs}
    key = matrix_key(prog, matrix)
    heads = [k for k in range(k2) if (m := _product(prog, ops[k], "right")) is not None
             and matrix_key(prog, m) == key]
    if not heads:
        return None
    first = heads[0]
    heads = [k for k in heads if made_at.get(ops[k].args[1], -1) < first]
    # The ops made after the first product that the weights need run in the kernel (those
    # independent of the products too, as a backward pass's scaling of its seed): row-local.
    weights = last.args[0]
    body, todo, used_heads = set(), [weights], set()
    while todo:
        v = todo.pop()
        k = made_at.get(v, -1)
        if k in heads:
            used_heads.add(k)
            continue
        if k < first or k in body:
            continue
        if not _row_op(prog, ops[k], rows):
            return None
        body.add(k)
        todo += ops[k].args
    if not used_heads:  # the weights do not depend on the products: nothing to stream
        return None
    absorbed = set(heads) | body
    inside = {o for k in absorbed for o in ops[k].outs}
    used_after = {a for k, op in enumerate(ops) if k not in absorbed and k != k2
                  for a in op.args} | set(prog.fetches)
    keep = [v for v in sorted(inside) if v in used_after]  # also written out in full
    body = sorted(body)
    source, inputs = kernel_source(prog, matrix, [ops[k] for k in heads],
                                   [ops[k] for k in body], weights, keep)
    from ..kernels import loader

    nodes = [n for k in sorted(absorbed | {k2}) for n in ops[k].nodes]
    op = last.replace(prim=ROWS_STREAMED, fn=_rows_call(loader.load(source)), args=inputs,
                      params={}, outs=tuple(keep) + last.outs, multi=True, nodes=nodes,
                      extra={"source": source})
    return first, op, absorbed | {k2}


def _rows_call(kernel):
    # a numpy scalar or array for every argument: the kernel's types do not vary with them
    return lambda *args: kernel(*[np.asarray(a) for a in args])


def kernel_source(prog, matrix, heads, body, weights, keep):
    """The row kernel's source and its arguments (the matrix, the head vectors, the other
    values the body reads): ``kernel(X, ...) -> (*keep, weights @ X)``. Rows go four at a
    time (see :mod:`hessgrad.kernels.products`), the last ``m % 4`` one by one."""
    names, inputs = {}, []

    def argument(v):
        if v not in names:
            names[v] = f"a{len(inputs)}"
            inputs.append(v)
        return names[v]

    X = argument(matrix)
    vectors = [argument(op.args[1]) for op in heads]
    rows = prog.shape(matrix)[0]
    out = [f"r{j}" for j in range(len(keep))]

    def row(i, suffix, head_temps):
        """Lines computing one row's body at row index ``i``; returns them and the weight."""
        temps = {op.outs[0]: Var(t) for op, t in zip(heads, head_temps)}

        def operand(v):
            dtype = _BOOL if prog.dtype(v) == _BOOL else _F64
            if v in temps:
                return temps[v]
            const = literal(prog.consts[v]) if v in prog.consts else None
            if const is not None:
                return const
            index = i if prog.shape(v) == (rows,) else "0" if prog.shape(v) else "()"
            return Var(f"{argument(v)}[{index}]", dtype)

        lines = []
        for op in body:
            t = f"t{len(temps)}{suffix}"
            expr = scalar_form(op.prim, [operand(a) for a in op.args])
            temps[op.outs[0]] = Var(t, expr.type)
            lines.append(f"{t} = {expr.py()}")
        lines += [f"{r}[{i}] = {temps[v].py()}" for r, v in zip(out, keep)]
        return lines, temps[weights].py()

    four, weights4 = [], []
    for h, x in enumerate(vectors):
        four.append(", ".join(f"h{h}_{q}" for q in range(4)) + f" = _p.rows_dot4({X}, i, {x})")
    for q in range(4):
        lines, w = row(f"i + {q}" if q else "i", f"_{q}",
                       [f"h{h}_{q}" for h in range(len(vectors))])
        four += lines
        weights4.append(w)
    four.append(f"_p.rows_axpy4(total, {', '.join(weights4)}, {X}, i)")
    one = [f"h{h} = _p.row_dot({X}, i, {x})" for h, x in enumerate(vectors)]
    lines, w = row("i", "", [f"h{h}" for h in range(len(vectors))])
    one += lines + [f"_p.row_axpy(total, {w}, {X}, i)"]
    allocate = [f"    {r} = np.empty(m, dtype=np.{'bool_' if prog.dtype(v) == _BOOL else 'float64'})"
                for r, v in zip(out, keep)]
    source = "\n".join(
        ["import math", "import numpy as np", "from numba import njit",
         "from hessgrad.kernels import products as _p, scalar as _k", "", "",
         '@njit(cache=True, error_model="numpy", nogil=True)',
         f"def kernel({', '.join(names[v] for v in inputs)}):",
         f"    m = {X}.shape[0]", f"    total = np.zeros({X}.shape[1])", *allocate,
         "    for i in range(0, m - m % 4, 4):", *["        " + line for line in four],
         "    for i in range(m - m % 4, m):", *["        " + line for line in one],
         f"    return ({', '.join(out + ['total'])},)"]) + "\n"
    return source, inputs


def stream_rows(prog):
    """Stream every left product of ``prog`` that can be (in place); returns how many."""
    from ..kernels import loader

    if not loader.available():
        return 0
    count, k = 0, 0
    while k < len(prog.ops):
        found = _stream(prog, k)
        if found is None:
            k += 1
            continue
        first, op, absorbed = found
        prog.ops = [op if j == first else o for j, o in enumerate(prog.ops)
                    if j == first or j not in absorbed]
        count += 1
        k = first + 1
    return count
