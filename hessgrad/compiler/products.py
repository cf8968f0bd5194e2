"""Pairs of matrix-vector products with the same large matrix become one pass over it.

A forward-over-reverse HVP of a model linear in its data multiplies the data matrix by the
point and by the tangent (``X @ w``, ``X @ v``), and a backward pass may multiply two
cotangents by it (``g @ X``, ``h @ X``); XLA merges such dots too. Two products are merged
when they share the matrix (the same value, or the same constant array), take 1-D float64
vectors on the same side, and the later one's vector already exists where the earlier one
runs: the pair is computed there by :mod:`hessgrad.kernels.products`.
"""

import numpy as np

from ..engine.facts import Lowering
from ..kernels import products as kernels, tuning
from ..ops.linalg import matmul
from .ir import Internal, size_of

_F64 = np.dtype(np.float64)
MATMUL_PAIR = Internal("matmul_pair", Lowering(fresh=True))
_SIDES = {"right": kernels.matvec_pair, "left": kernels.vecmat_pair}


def matrix_vector_product(prog, op, min_size=None):
    """``(side, matrix, vector)`` of a float64 matrix-vector product (side "right": ``A @ x``,
    "left": ``g @ A``) with a matrix of at least ``min_size`` elements (default
    ``tuning.MIN_MATRIX_SIZE``: worth merging), else None."""
    if op.prim is not matmul.primitive or op.params or len(op.args) != 2:
        return None
    a, b = op.args
    sa, sb = prog.shape(a), prog.shape(b)
    if sa is None or sb is None or any(prog.dtype(v) != _F64 for v in (a, b)):
        return None
    if len(sa) == 2 and len(sb) == 1:
        side, matrix, vector = "right", a, b
    elif len(sa) == 1 and len(sb) == 2:
        side, matrix, vector = "left", b, a
    else:
        return None
    size = size_of(prog.shape(matrix))
    if size is None or size < (tuning.MIN_MATRIX_SIZE if min_size is None else min_size):
        return None
    return side, matrix, vector


def matrix_key(prog, v):
    return ("constant", id(prog.consts[v])) if prog.is_const(v) else ("value", v)


def merge_products(prog):
    """Merge pairs in ``prog.ops`` in place; returns the number of pairs merged."""
    made_at = {o: k for k, op in enumerate(prog.ops) for o in op.outs}
    groups = {}
    for k, op in enumerate(prog.ops):
        found = matrix_vector_product(prog, op)
        if found is not None:
            side, matrix, vector = found
            groups.setdefault((side, matrix_key(prog, matrix)), []).append((k, vector))
    merged, drop = {}, set()
    for (side, _), members in groups.items():
        while len(members) >= 2:
            k1, v1 = members.pop(0)
            # the first later product whose vector exists before the earlier one runs
            partner = next((m for m in members if made_at.get(m[1], -1) < k1), None)
            if partner is None:
                continue
            members.remove(partner)
            k2, v2 = partner
            first, second = prog.ops[k1], prog.ops[k2]
            matrix = matrix_vector_product(prog, first)[1]
            merged[k1] = first.replace(prim=MATMUL_PAIR, fn=_SIDES[side], args=[matrix, v1, v2],
                                       outs=first.outs + second.outs, multi=True,
                                       nodes=first.nodes + second.nodes)
            drop.add(k2)
    if merged:
        prog.ops = [merged.get(k, op) for k, op in enumerate(prog.ops) if k not in drop]
    return len(merged)
