"""The diagonal-products pass: a matrix product with a factor zero off its diagonal (a traced
Jacobian's identity basis, scaled) and a finite constant becomes a row or column scaling."""

import numpy as np

from ..kernels import tuning
from ..ops.core import reshape
from ..ops.elementwise import multiply
from ..ops.linalg import matmul
from .ir import known
from .rewrite import Rules, sweep

_F64 = np.dtype(np.float64)
DIAGONAL = Rules()


def diagonal_of(value):
    """``(offset, values)`` when ``value`` is a float64 matrix that is zero off one diagonal
    (a folded slice of an identity basis, scaled: what Jacobians push through a function):
    ``values[i]`` is its entry in row i (0.0 where the diagonal has none); None otherwise."""
    if not (isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype == _F64) or \
            min(value.shape) < 2 or value.size > tuning.DIAGONAL_MAX_SIZE:
        return None
    rows, cols = np.nonzero(value)
    if not len(rows) or np.any(cols - rows != cols[0] - rows[0]):
        return None
    values = np.zeros(value.shape[0])
    values[rows] = value[rows, cols]
    return int(cols[0] - rows[0]), values


def _diagonal_entries(sweep, v, at):
    """``(values, ops)`` when ``v`` is a square float64 matrix zero off its main diagonal: a
    diagonal constant, or one times a vector or scalar (a Jacobian's basis scaled by a
    derivative). ``values`` holds its diagonal, computed by the new ``ops`` (made from the op
    ``at``)."""
    prog = sweep.prog
    shape = prog.shape(v)
    if not known(shape) or len(shape) != 2 or shape[0] != shape[1] or prog.dtype(v) != _F64:
        return None
    n = shape[0]
    if v in prog.consts:
        found = diagonal_of(prog.consts[v])
        return (prog.new_const(found[1]), []) if found and found[0] == 0 else None
    src = sweep.producer.get(v)
    if src is None or src.prim is not multiply.primitive or src.params:
        return None
    for c, x in (src.args, src.args[::-1]):
        found = diagonal_of(prog.consts.get(c))
        if found is None or found[0] != 0 or prog.shape(c) != shape or \
                prog.dtype(x) != _F64 or prog.shape(x) not in ((), (n,), (1, n), (n, 1)):
            continue
        ops = []
        if len(prog.shape(x)) == 2:  # entry (i, i) is x's i-th either way
            flat = prog.new_value((n,), _F64)
            ops.append(at.replace(prim=reshape.primitive, args=[x], params={"shape": (n,)},
                                  outs=(flat,), node=src.node, nodes=[src.node]))
            x = flat
        values = prog.new_value((n,), _F64)
        ops.append(at.replace(prim=multiply.primitive, args=[prog.new_const(found[1]), x],
                              params={}, outs=(values,), node=src.node,
                              nodes=[src.node]))
        return values, ops
    return None


@DIAGONAL.register(matmul.primitive)
def diagonal_product(sweep, op):
    """``matmul(D, B)`` with ``D`` zero off its diagonal and ``B`` a finite constant becomes
    ``diag(D)[:, None] * B`` (and ``A @ D``, ``A * diag(D)``): a traced reverse-mode Jacobian
    multiplies its identity basis into the weights, O(n^3) work for an O(n^2) result. The
    same numbers: the dense product only adds zeros (it would differ for an infinite or NaN
    entry of ``B``, hence constants only)."""
    prog = sweep.prog
    if op.params or prog.dtype(op.outs[0]) != _F64 or \
            not all(known(prog.shape(a)) and len(prog.shape(a)) == 2 for a in op.args):
        return None
    a, b = op.args
    for diag, other, left in ((a, b, True), (b, a, False)):
        value = prog.consts.get(other)
        if not isinstance(value, np.ndarray) or value.dtype != _F64 or \
                not np.all(np.isfinite(value)):
            continue
        found = _diagonal_entries(sweep, diag, op)
        if found is None:
            continue
        values, ops = found
        if left:  # rows of B scaled: diag[:, None] * B
            column = prog.new_value((prog.shape(other)[0], 1), _F64)
            ops.append(op.replace(prim=reshape.primitive, args=[values],
                                  params={"shape": (-1, 1)}, outs=(column,), nodes=[op.node]))
            values = column
        return ops + [op.replace(prim=multiply.primitive, params={},
                                 args=[values, other] if left else [other, values])]
    return None


def diagonal_products(prog):
    """Rewrite every such product of ``prog``; returns how many."""
    return sweep(prog, (DIAGONAL,))
